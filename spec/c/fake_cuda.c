/*
** fake_cuda: a CUDA driver on host memory, so the cuda backend can be tested
** without a GPU (LUACUDA_LIBCUDA=build/fake/libcuda.so.1). Test code only:
** never installed.
**
** It is built against the toolkit's cuda.h, so its prototypes, structs and
** constants are the driver's, and a mistake in src/cuda_api.h's copies of
** them shows up as a wrong result. Semantics follow the driver's manual:
** a context must be current, pointers are checked against the allocations
** they fall in, pools keep freed memory up to their release threshold,
** host functions may not call the driver, and a sticky error makes every
** later call fail with it. Work runs at once, on the calling thread.
**
** Modules: PTX is parsed for its entries (parameter sizes, as the PTX
** declares them) and globals; a cubin is accepted with its entry names
** only. cuLaunchKernel runs the library kernel lc_copy_strided natively;
** other kernels are checked and traced, not run.
**
** Environment:
**   FAKE_CUDA_DEVICES=2          number of devices (1 to 4)
**   FAKE_CUDA_CC=9.0,8.6         compute capability of each device
**   FAKE_CUDA_MEMORY=256M        memory of each device
**   FAKE_CUDA_NO_POOLS=1         no stream-ordered allocator
**   FAKE_CUDA_CONCURRENT_MANAGED=0  CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS
**                                is 0 (as on Windows, or before Pascal)
**   FAKE_CUDA_REGS=N             registers per thread of every user kernel
**                                (32); with .maxntid in the PTX, it sets the
**                                kernel's MAX_THREADS_PER_BLOCK
**   FAKE_CUDA_FAIL=fn:N[:code]   the Nth call of fn returns code (999)
**   FAKE_CUDA_TRACE=path         append each call's name, "  -> code" after
**                                a failed one, and each launch with its
**                                parameter bytes in hex, to path
** A kernel whose name starts with fake_fault launches and then fails the
** context with CUDA_ERROR_ILLEGAL_ADDRESS, as a faulting kernel does.
**
** Devices have a real GPU's attributes: an H100 (SXM) for compute
** capability 9.x and any other, an RTX A6000-like part for 8.6 (device 2 by
** default). A launch may take the device's MAX_SHARED_MEMORY_PER_BLOCK less
** the kernel's static shared memory (the .shared declarations of its PTX
** body) unless cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) raised it,
** up to ..._OPTIN less the static; more is CUDA_ERROR_INVALID_VALUE. A block
** of more threads than the kernel's MAX_THREADS_PER_BLOCK (from .maxntid and
** the register count) is CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES.
**
** Write-combined host memory (cuMemHostAlloc's WRITECOMBINED) has a device
** address of its own, as the driver's manual allows: the same pages mapped
** twice, the second mapping being what cuMemHostGetDevicePointer gives.
** Copies take either address (as cuMemcpy does); memsets, the copy kernel
** and launches take the device address only: a launch given the host
** address in a pointer parameter faults (CUDA_ERROR_ILLEGAL_ADDRESS).
*/
#include <cuda.h>

#include "abi.h"          /* the launch limits and lc_copy_strided's parameter, as luacuda's */

#include <ctype.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))
#define MAXDEV 4

/* ---- state ----------------------------------------------------------------- */

/* A_ALIAS: the device address of write-combined host memory */
enum { A_DEVICE, A_POOL, A_MANAGED, A_HOST, A_REGISTERED, A_GLOBAL, A_ALIAS };

typedef struct alloc {
  struct alloc *next;
  char *p;
  size_t n;
  int kind, dev;
  unsigned flags;            /* cuMemHostAlloc / cuMemHostRegister flags */
  struct alloc *alias;       /* write-combined: the device mapping, and back */
} alloc;

typedef struct pool { int dev; uint64_t threshold, reserved, used; } pool;
struct CUctx_st { int dev; int retains; };
struct CUstream_st { int dev; bool alive; struct CUstream_st *next; };
struct CUevent_st { unsigned flags; bool recorded; double ms; struct CUevent_st *next; };

typedef struct entry {
  char name[128];
  int nparams;               /* -1: unknown (a cubin) */
  size_t size[64], offset[64];
} entry;
struct CUfunc_st {
  struct CUmod_st *mod;
  entry e;
  int static_shared;         /* bytes of .shared in its body */
  int max_threads;           /* .maxntid, else 1024; less with many registers */
  int nregs;
  int max_dynamic;           /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
};
struct CUmod_st {
  int dev;
  char *image;               /* PTX text, or NULL for a cubin */
  int nfuncs, capfuncs;
  struct CUfunc_st *funcs;   /* a driver has no limit on a module's kernels */
  alloc *globals[64];
  char gnames[64][128];
  int nglobals;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static bool initialized;
static int ndev = 2, ccmaj[MAXDEV] = {9, 8, 9, 9}, ccmin[MAXDEV] = {0, 6, 0, 0};
static size_t devmem = 256u << 20;
static bool no_pools, no_concurrent_managed;
static int user_regs = 32;
static struct CUctx_st ctxs[MAXDEV];
static pool pools[MAXDEV];
static alloc *allocs;
static struct CUstream_st *streams;
static struct CUevent_st *events;
static CUresult sticky;
static char fail_fn[64];
static int fail_at, fail_calls;
static CUresult fail_code = CUDA_ERROR_UNKNOWN;
static FILE *trace;
static _Thread_local CUcontext current;
static _Thread_local bool in_host_fn;

static size_t env_size(const char *s) {
  char *end;
  size_t v = strtoull(s, &end, 10);
  if (*end == 'K') v <<= 10;
  else if (*end == 'M') v <<= 20;
  else if (*end == 'G') v <<= 30;
  return v;
}

static void trace_line(const char *fmt, const char *s) {
  if (trace) { fprintf(trace, fmt, s); fflush(trace); }
}

/* Every entry point: traced; refused before cuInit, inside a host function,
** after a sticky error, or when a failure is injected here. Takes the lock. */
static CUresult enter(const char *fn, bool need_ctx) {
  if (in_host_fn) return CUDA_ERROR_NOT_PERMITTED;
  pthread_mutex_lock(&mu);
  trace_line("%s\n", fn);
  CUresult r = CUDA_SUCCESS;
  if (!initialized) r = CUDA_ERROR_NOT_INITIALIZED;
  else if (sticky) r = sticky;
  else if (fail_at && strcmp(fn, fail_fn) == 0 && ++fail_calls == fail_at) r = fail_code;
  else if (need_ctx && current == NULL) r = CUDA_ERROR_INVALID_CONTEXT;
  if (r != CUDA_SUCCESS && trace) fprintf(trace, "  -> %d\n", (int)r);
  if (r != CUDA_SUCCESS) pthread_mutex_unlock(&mu);
  return r;
}
#define ENTER(ctx) do { CUresult r_ = enter(__func__, ctx); if (r_) return r_; } while (0)
static CUresult leave(CUresult r) {
  if (r != CUDA_SUCCESS && trace) fprintf(trace, "  -> %d\n", (int)r);
  pthread_mutex_unlock(&mu);
  return r;
}
static int curdev(void) { return current->dev; }

/* The allocation holding [p, p + n), or NULL. */
static alloc *find(const void *p, size_t n) {
  const char *c = p;
  for (alloc *a = allocs; a; a = a->next)
    if (c >= a->p && c + n <= a->p + a->n && c < a->p + (a->n ? a->n : 1)) return a;
  return NULL;
}

static bool device_accessible(const alloc *a) {
  return a && (a->kind == A_DEVICE || a->kind == A_POOL || a->kind == A_MANAGED ||
               a->kind == A_GLOBAL || a->kind == A_ALIAS ||
               (a->kind == A_HOST && (a->flags & 2) && !(a->flags & 4)) ||
               (a->kind == A_REGISTERED && (a->flags & 2)));
}

/* Host memory every device reaches (else memory of the device it is on). */
static bool on_host(const alloc *a) {
  return a->kind == A_HOST || a->kind == A_REGISTERED || a->kind == A_ALIAS;
}

/* Device memory a copy touches must lie in one allocation; other addresses
** are (pageable) host memory. */
static bool check_range(CUdeviceptr p, size_t n) {
  for (alloc *a = allocs; a; a = a->next) {
    const char *c = (const char *)(uintptr_t)p;
    bool starts = c >= a->p && c < a->p + a->n;
    if (starts && (a->kind == A_DEVICE || a->kind == A_POOL || a->kind == A_MANAGED))
      return c + n <= a->p + a->n;
  }
  return true;
}

static alloc *add(void *p, size_t n, int kind, unsigned flags) {
  alloc *a = calloc(1, sizeof *a);
  a->p = p;
  a->n = n;
  a->kind = kind;
  a->dev = current ? curdev() : 0;
  a->flags = flags;
  a->next = allocs;
  allocs = a;
  return a;
}

static void drop(alloc *a) {
  for (alloc **pp = &allocs; *pp; pp = &(*pp)->next)
    if (*pp == a) { *pp = a->next; break; }
  free(a);
}

static size_t dev_used(int dev) {
  size_t n = pools[dev].reserved;
  for (alloc *a = allocs; a; a = a->next)
    if (a->dev == dev && (a->kind == A_DEVICE || a->kind == A_MANAGED)) n += a->n;
  return n;
}

static bool stream_ok(CUstream s) {
  if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) return true;
  for (struct CUstream_st *t = streams; t; t = t->next)
    if (t == s) return t->alive && t->dev == curdev();
  return false;
}

/* A synchronisation point: pools give back what is above their threshold. */
static void settle(void) {
  for (int i = 0; i < ndev; i++) {
    pool *p = &pools[i];
    if (p->reserved > p->threshold) p->reserved = p->used > p->threshold ? p->used : p->threshold;
  }
}

/* ---- init and devices -------------------------------------------------------- */

API CUresult cuInit(unsigned flags) {
  if (flags) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&mu);
  if (!initialized) {
    const char *e;
    if ((e = getenv("FAKE_CUDA_DEVICES"))) ndev = atoi(e) < 1 ? 1 : atoi(e) > MAXDEV ? MAXDEV : atoi(e);
    if ((e = getenv("FAKE_CUDA_CC"))) {
      for (int i = 0; i < MAXDEV && *e; i++) {
        char *end;
        ccmaj[i] = (int)strtol(e, &end, 10);
        ccmin[i] = *end == '.' ? (int)strtol(end + 1, &end, 10) : 0;
        e = *end == ',' ? end + 1 : end;
      }
    }
    if ((e = getenv("FAKE_CUDA_MEMORY"))) devmem = env_size(e);
    no_pools = getenv("FAKE_CUDA_NO_POOLS") != NULL;
    no_concurrent_managed = (e = getenv("FAKE_CUDA_CONCURRENT_MANAGED")) && strcmp(e, "0") == 0;
    if ((e = getenv("FAKE_CUDA_REGS")) && atoi(e) > 0) user_regs = atoi(e) > 255 ? 255 : atoi(e);
    if ((e = getenv("FAKE_CUDA_FAIL")) && *e) {
      char code[16] = "";
      if (sscanf(e, "%63[^:]:%d:%15s", fail_fn, &fail_at, code) >= 2 && code[0])
        fail_code = atoi(code);
    }
    if ((e = getenv("FAKE_CUDA_TRACE")) && *e) trace = fopen(e, "a");
    for (int i = 0; i < MAXDEV; i++) {
      ctxs[i].dev = pools[i].dev = i;
    }
    initialized = true;
  }
  trace_line("%s\n", __func__);
  pthread_mutex_unlock(&mu);
  return CUDA_SUCCESS;
}

API CUresult cuDriverGetVersion(int *v) { *v = CUDA_VERSION; return CUDA_SUCCESS; }

API CUresult cuGetErrorName(CUresult e, const char **s) {
  static const struct { CUresult r; const char *s; } names[] = {
    {0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"}, {101, "CUDA_ERROR_INVALID_DEVICE"},
    {200, "CUDA_ERROR_INVALID_IMAGE"}, {201, "CUDA_ERROR_INVALID_CONTEXT"},
    {220, "CUDA_ERROR_NVLINK_UNCORRECTABLE"}, {810, "CUDA_ERROR_MPS_CLIENT_TERMINATED"},
    {911, "CUDA_ERROR_EXTERNAL_DEVICE"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"}, {218, "CUDA_ERROR_INVALID_PTX"},
    {400, "CUDA_ERROR_INVALID_HANDLE"}, {500, "CUDA_ERROR_NOT_FOUND"},
    {600, "CUDA_ERROR_NOT_READY"}, {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"}, {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"},
    {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"}, {719, "CUDA_ERROR_LAUNCH_FAILED"},
    {800, "CUDA_ERROR_NOT_PERMITTED"}, {801, "CUDA_ERROR_NOT_SUPPORTED"},
    {999, "CUDA_ERROR_UNKNOWN"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].r == e) { *s = names[i].s; return CUDA_SUCCESS; }
  *s = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuDeviceGetCount(int *n) { ENTER(false); *n = ndev; return leave(CUDA_SUCCESS); }

API CUresult cuDeviceGet(CUdevice *d, int i) {
  ENTER(false);
  if (i < 0 || i >= ndev) return leave(CUDA_ERROR_INVALID_DEVICE);
  *d = i;
  return leave(CUDA_SUCCESS);
}

API CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
  ENTER(false);
  if (d < 0 || d >= ndev) return leave(CUDA_ERROR_INVALID_DEVICE);
  snprintf(name, (size_t)len, "luacuda fake GPU %d", d);
  return leave(CUDA_SUCCESS);
}

/* A device attribute as a real GPU reports it: an H100 SXM (compute
** capability 9.0, the default), or an 8.6 part (RTX A6000) for device 2;
** false for attributes not modelled. */
static bool dev_attr(int d, CUdevice_attribute attr, int *v) {
  bool ga = ccmaj[d] == 8 && ccmin[d] == 6;
  switch (attr) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = ga ? 1800000 : 1980000; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = ga ? 84 : 132; break;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: *v = !ga; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = ga ? 6 << 20 : 50 << 20; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = ga ? 1536 : 2048; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: *v = ga ? 2 : 3; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = ccmaj[d]; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = ccmin[d]; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = ga ? 102400 : 233472; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: *v = !no_concurrent_managed; break;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = ga ? 101376 : 232448; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *v = ga ? 16 : 32; break;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *v = !no_pools; break;
    default: return false;
  }
  return true;
}

API CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute attr, CUdevice d) {
  ENTER(false);
  if (d < 0 || d >= ndev) return leave(CUDA_ERROR_INVALID_DEVICE);
  if (!dev_attr(d, attr, v)) return leave(CUDA_ERROR_INVALID_VALUE);   /* not modelled: say so */
  return leave(CUDA_SUCCESS);
}

API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) {
  ENTER(false);
  if (d < 0 || d >= ndev) return leave(CUDA_ERROR_INVALID_DEVICE);
  *bytes = devmem;
  return leave(CUDA_SUCCESS);
}

API CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  ENTER(false);
  if (d < 0 || d >= ndev) return leave(CUDA_ERROR_INVALID_DEVICE);
  ctxs[d].retains++;
  *c = &ctxs[d];
  return leave(CUDA_SUCCESS);
}

API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  ENTER(false);
  if (d < 0 || d >= ndev || ctxs[d].retains == 0) return leave(CUDA_ERROR_INVALID_CONTEXT);
  ctxs[d].retains--;
  return leave(CUDA_SUCCESS);
}

API CUresult cuCtxSetCurrent(CUcontext c) {
  ENTER(false);
  if (c != NULL && (c < ctxs || c >= ctxs + ndev || c->retains == 0))
    return leave(CUDA_ERROR_INVALID_CONTEXT);
  current = c;
  return leave(CUDA_SUCCESS);
}

API CUresult cuCtxSynchronize(void) { ENTER(true); settle(); return leave(CUDA_SUCCESS); }

/* ---- memory ------------------------------------------------------------------ */

API CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *p, CUdevice d) {
  ENTER(false);
  if (d < 0 || d >= ndev) return leave(CUDA_ERROR_INVALID_DEVICE);
  if (no_pools) return leave(CUDA_ERROR_NOT_SUPPORTED);
  *p = (CUmemoryPool)&pools[d];
  return leave(CUDA_SUCCESS);
}

static pool *as_pool(CUmemoryPool p) {
  pool *q = (pool *)p;
  return q >= pools && q < pools + ndev && !no_pools ? q : NULL;
}

API CUresult cuMemPoolSetAttribute(CUmemoryPool p, CUmemPool_attribute attr, void *v) {
  ENTER(false);
  pool *q = as_pool(p);
  if (q == NULL) return leave(CUDA_ERROR_INVALID_VALUE);
  if (attr != CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) return leave(CUDA_ERROR_INVALID_VALUE);
  memcpy(&q->threshold, v, sizeof q->threshold);
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemPoolGetAttribute(CUmemoryPool p, CUmemPool_attribute attr, void *v) {
  ENTER(false);
  pool *q = as_pool(p);
  uint64_t x;
  if (q == NULL) return leave(CUDA_ERROR_INVALID_VALUE);
  if (attr == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) x = q->threshold;
  else if (attr == CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) x = q->reserved;
  else if (attr == CU_MEMPOOL_ATTR_USED_MEM_CURRENT) x = q->used;
  else return leave(CUDA_ERROR_INVALID_VALUE);
  memcpy(v, &x, sizeof x);
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemPoolTrimTo(CUmemoryPool p, size_t keep) {
  ENTER(false);
  pool *q = as_pool(p);
  if (q == NULL) return leave(CUDA_ERROR_INVALID_VALUE);
  uint64_t floor = q->used > keep ? q->used : keep;
  if (q->reserved > floor) q->reserved = floor;
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
  ENTER(true);
  *total = devmem;
  *free_bytes = devmem - dev_used(curdev());
  return leave(CUDA_SUCCESS);
}

/* Room on the current device for n more bytes. */
static bool room(size_t n) { return dev_used(curdev()) + n <= devmem; }

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  ENTER(true);
  if (n == 0) return leave(CUDA_ERROR_INVALID_VALUE);
  if (!room(n)) return leave(CUDA_ERROR_OUT_OF_MEMORY);
  *p = (CUdeviceptr)(uintptr_t)add(malloc(n), n, A_DEVICE, 0)->p;
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned flags) {
  ENTER(true);
  if (n == 0 || flags != CU_MEM_ATTACH_GLOBAL) return leave(CUDA_ERROR_INVALID_VALUE);
  if (!room(n)) return leave(CUDA_ERROR_OUT_OF_MEMORY);
  *p = (CUdeviceptr)(uintptr_t)add(malloc(n), n, A_MANAGED, 0)->p;
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemFree_v2(CUdeviceptr p) {
  ENTER(true);
  alloc *a = find((void *)(uintptr_t)p, 0);
  if (a == NULL || a->p != (char *)(uintptr_t)p || (a->kind != A_DEVICE && a->kind != A_MANAGED))
    return leave(CUDA_ERROR_INVALID_VALUE);
  free(a->p);
  drop(a);
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s) {
  ENTER(true);
  if (no_pools) return leave(CUDA_ERROR_NOT_SUPPORTED);
  if (n == 0) return leave(CUDA_ERROR_INVALID_VALUE);
  if (!stream_ok(s)) return leave(CUDA_ERROR_INVALID_HANDLE);
  pool *q = &pools[curdev()];
  if (q->used + n > q->reserved) {
    uint64_t grow = q->used + n - q->reserved;
    if (!room(grow)) return leave(CUDA_ERROR_OUT_OF_MEMORY);
    q->reserved += grow;
  }
  q->used += n;
  *p = (CUdeviceptr)(uintptr_t)add(malloc(n), n, A_POOL, 0)->p;
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) {
  ENTER(true);
  if (!stream_ok(s)) return leave(CUDA_ERROR_INVALID_HANDLE);
  alloc *a = find((void *)(uintptr_t)p, 0);
  if (a == NULL || a->p != (char *)(uintptr_t)p || a->kind != A_POOL)
    return leave(CUDA_ERROR_INVALID_VALUE);
  pools[a->dev].used -= a->n;
  free(a->p);
  drop(a);
  return leave(CUDA_SUCCESS);
}

/* Write-combined memory: n bytes of a memory file mapped twice, for the
** host and (the alias) for the device. */
static alloc *add_write_combined(size_t n, unsigned flags) {
  FILE *f = tmpfile();
  if (f == NULL) return NULL;
  char *h = MAP_FAILED, *d = MAP_FAILED;
  if (ftruncate(fileno(f), (off_t)n) == 0) {
    h = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);
    d = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);
  }
  fclose(f);                 /* the mappings keep the pages */
  if (h == MAP_FAILED || d == MAP_FAILED) {
    if (h != MAP_FAILED) munmap(h, n);
    if (d != MAP_FAILED) munmap(d, n);
    return NULL;
  }
  alloc *a = add(h, n, A_HOST, flags), *b = add(d, n, A_ALIAS, flags);
  a->alias = b;
  b->alias = a;
  return a;
}

API CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags) {
  ENTER(true);
  if (n == 0 || (flags & ~7u)) return leave(CUDA_ERROR_INVALID_VALUE);
  if (flags & CU_MEMHOSTALLOC_WRITECOMBINED) {
    alloc *a = add_write_combined(n, flags);
    if (a == NULL) return leave(CUDA_ERROR_OUT_OF_MEMORY);
    *p = a->p;
  } else {
    *p = add(malloc(n), n, A_HOST, flags)->p;
  }
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemAllocHost_v2(void **p, size_t n) { return cuMemHostAlloc(p, n, 0); }

API CUresult cuMemFreeHost(void *p) {
  ENTER(true);
  alloc *a = find(p, 0);
  if (a == NULL || a->p != p || a->kind != A_HOST) return leave(CUDA_ERROR_INVALID_VALUE);
  if (a->alias) {
    munmap(a->alias->p, a->n);
    munmap(a->p, a->n);
    drop(a->alias);
  } else {
    free(a->p);
  }
  drop(a);
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags) {
  ENTER(true);
  if (n == 0 || (flags & ~3u)) return leave(CUDA_ERROR_INVALID_VALUE);
  for (alloc *a = allocs; a; a = a->next)
    if ((a->kind == A_HOST || a->kind == A_REGISTERED) && (char *)p < a->p + a->n &&
        a->p < (char *)p + n)
      return leave(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  add(p, n, A_REGISTERED, flags);
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemHostUnregister(void *p) {
  ENTER(true);
  alloc *a = find(p, 0);
  if (a == NULL || a->p != p || a->kind != A_REGISTERED)
    return leave(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  drop(a);
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags) {
  ENTER(true);
  alloc *a = find(p, 1);
  if (flags != 0 || a == NULL || (a->kind != A_HOST && a->kind != A_REGISTERED) ||
      !(a->flags & 2))      /* DEVICEMAP, for an allocation and a registration alike */
    return leave(CUDA_ERROR_INVALID_VALUE);
  *d = (CUdeviceptr)(uintptr_t)(a->alias ? a->alias->p + ((char *)p - a->p) : (char *)p);
  return leave(CUDA_SUCCESS);
}

/* ---- copies and memsets ---------------------------------------------------------- */

API CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  ENTER(true);
  if (!stream_ok(s)) return leave(CUDA_ERROR_INVALID_HANDLE);
  if (!check_range(dst, n) || !check_range(src, n)) return leave(CUDA_ERROR_INVALID_VALUE);
  memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
  return leave(CUDA_SUCCESS);
}

/* The synchronous calls bench/gpu_driver.c (the C baseline) makes. */
API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
  ENTER(true);
  if (!check_range(dst, n)) return leave(CUDA_ERROR_INVALID_VALUE);
  memmove((void *)(uintptr_t)dst, src, n);
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
  ENTER(true);
  if (!check_range(src, n)) return leave(CUDA_ERROR_INVALID_VALUE);
  memmove(dst, (const void *)(uintptr_t)src, n);
  return leave(CUDA_SUCCESS);
}

/* One side of a 2-D or 3-D copy: its first byte, after the type check. */
static char *side(CUmemorytype t, const void *host, CUdeviceptr dev, size_t x, size_t y,
                  size_t z, size_t pitch, size_t height, size_t width, size_t h, size_t d) {
  char *base;
  if (t == CU_MEMORYTYPE_HOST) base = (char *)host;
  else if (t == CU_MEMORYTYPE_DEVICE || t == CU_MEMORYTYPE_UNIFIED) base = (char *)(uintptr_t)dev;
  else return NULL;                          /* CUarrays are not modelled */
  if (pitch < width && h * d > 1) return NULL;
  char *first = base + x + (y + z * height) * pitch;
  size_t span = ((d - 1) * height + (h - 1)) * pitch + width;
  if (t != CU_MEMORYTYPE_HOST && !check_range((CUdeviceptr)(uintptr_t)first, span)) return NULL;
  if (t == CU_MEMORYTYPE_DEVICE && !device_accessible(find(first, span))) return NULL;
  return first;
}

static void copy_rows(char *d, size_t dp, size_t dh, const char *s, size_t sp, size_t sh,
                      size_t width, size_t h, size_t depth) {
  for (size_t k = 0; k < depth; k++)
    for (size_t j = 0; j < h; j++)
      memmove(d + (k * dh + j) * dp, s + (k * sh + j) * sp, width);
}

API CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *c, CUstream s) {
  ENTER(true);
  if (!stream_ok(s)) return leave(CUDA_ERROR_INVALID_HANDLE);
  char *d = side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, 0,
                 c->dstPitch, 0, c->WidthInBytes, c->Height, 1);
  char *src = side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY, 0,
                   c->srcPitch, 0, c->WidthInBytes, c->Height, 1);
  if (d == NULL || src == NULL) return leave(CUDA_ERROR_INVALID_VALUE);
  copy_rows(d, c->dstPitch, 0, src, c->srcPitch, 0, c->WidthInBytes, c->Height, 1);
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *c, CUstream s) {
  ENTER(true);
  if (!stream_ok(s)) return leave(CUDA_ERROR_INVALID_HANDLE);
  if (c->reserved0 || c->reserved1 || c->srcLOD || c->dstLOD ||
      (c->Depth > 1 && (c->srcHeight < c->Height || c->dstHeight < c->Height)))
    return leave(CUDA_ERROR_INVALID_VALUE);
  char *d = side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, c->dstZ,
                 c->dstPitch, c->dstHeight, c->WidthInBytes, c->Height, c->Depth);
  char *src = side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY,
                   c->srcZ, c->srcPitch, c->srcHeight, c->WidthInBytes, c->Height, c->Depth);
  if (d == NULL || src == NULL) return leave(CUDA_ERROR_INVALID_VALUE);
  copy_rows(d, c->dstPitch, c->dstHeight, src, c->srcPitch, c->srcHeight, c->WidthInBytes,
            c->Height, c->Depth);
  return leave(CUDA_SUCCESS);
}

static CUresult memset_n(CUdeviceptr d, const void *v, size_t w, size_t n, CUstream s) {
  if (!stream_ok(s)) return leave(CUDA_ERROR_INVALID_HANDLE);
  if (d % w) return leave(CUDA_ERROR_INVALID_VALUE);        /* misaligned */
  alloc *a = find((void *)(uintptr_t)d, n * w);
  if (!device_accessible(a)) return leave(CUDA_ERROR_INVALID_VALUE);
  for (size_t i = 0; i < n; i++) memcpy((char *)(uintptr_t)d + i * w, v, w);
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  ENTER(true);
  return memset_n(d, &v, 1, n, s);
}
API CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) {
  ENTER(true);
  return memset_n(d, &v, 2, n, s);
}
API CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream s) {
  ENTER(true);
  return memset_n(d, &v, 4, n, s);
}

/* ---- streams and events ------------------------------------------------------------ */

API CUresult cuStreamCreate(CUstream *s, unsigned flags) {
  ENTER(true);
  if (flags > 1) return leave(CUDA_ERROR_INVALID_VALUE);
  struct CUstream_st *t = calloc(1, sizeof *t);
  t->dev = curdev();
  t->alive = true;
  t->next = streams;    /* kept after destroy: a later use is reported */
  streams = t;
  *s = t;
  return leave(CUDA_SUCCESS);
}

API CUresult cuStreamDestroy_v2(CUstream s) {
  ENTER(true);
  if (s == NULL || s == CU_STREAM_LEGACY || !stream_ok(s)) return leave(CUDA_ERROR_INVALID_HANDLE);
  s->alive = false;
  return leave(CUDA_SUCCESS);
}

API CUresult cuStreamSynchronize(CUstream s) {
  ENTER(true);
  if (!stream_ok(s)) return leave(CUDA_ERROR_INVALID_HANDLE);
  settle();
  return leave(CUDA_SUCCESS);
}

API CUresult cuStreamQuery(CUstream s) {
  ENTER(true);
  return leave(stream_ok(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

static bool event_ok(CUevent e) {
  for (struct CUevent_st *t = events; t; t = t->next)
    if (t == e) return true;
  return false;
}

API CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
  ENTER(true);
  if (!stream_ok(s) || !event_ok(e) || flags > 1) return leave(CUDA_ERROR_INVALID_HANDLE);
  return leave(CUDA_SUCCESS);
}

API CUresult cuEventCreate(CUevent *e, unsigned flags) {
  ENTER(true);
  if (flags & ~0xfu) return leave(CUDA_ERROR_INVALID_VALUE);
  struct CUevent_st *t = calloc(1, sizeof *t);
  t->flags = flags;
  t->next = events;
  events = t;
  *e = t;
  return leave(CUDA_SUCCESS);
}

API CUresult cuEventDestroy_v2(CUevent e) {
  ENTER(true);
  for (struct CUevent_st **pp = &events; *pp; pp = &(*pp)->next)
    if (*pp == e) {
      *pp = e->next;
      free(e);
      return leave(CUDA_SUCCESS);
    }
  return leave(CUDA_ERROR_INVALID_HANDLE);
}

API CUresult cuEventRecord(CUevent e, CUstream s) {
  ENTER(true);
  if (!event_ok(e) || !stream_ok(s)) return leave(CUDA_ERROR_INVALID_HANDLE);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  e->ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
  e->recorded = true;
  return leave(CUDA_SUCCESS);
}

API CUresult cuEventSynchronize(CUevent e) {
  ENTER(true);
  if (!event_ok(e)) return leave(CUDA_ERROR_INVALID_HANDLE);
  settle();
  return leave(CUDA_SUCCESS);
}

API CUresult cuEventQuery(CUevent e) {
  ENTER(true);
  return leave(event_ok(e) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

API CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) {
  ENTER(true);
  if (!event_ok(a) || !event_ok(b) || !a->recorded || !b->recorded ||
      (a->flags & CU_EVENT_DISABLE_TIMING) || (b->flags & CU_EVENT_DISABLE_TIMING))
    return leave(CUDA_ERROR_INVALID_HANDLE);
  *ms = (float)(b->ms - a->ms);
  return leave(CUDA_SUCCESS);
}

API CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *ud) {
  ENTER(true);
  if (!stream_ok(s) || fn == NULL) return leave(CUDA_ERROR_INVALID_VALUE);
  pthread_mutex_unlock(&mu);
  in_host_fn = true;               /* the driver may not be called from here */
  fn(ud);
  in_host_fn = false;
  return CUDA_SUCCESS;
}

/* ---- modules ------------------------------------------------------------------ */

static size_t type_size(const char *t) {
  static const char *const names[] = {"8", "16", "32", "64"};
  for (int i = 0; i < 4; i++)
    if (strncmp(t + 2, names[i], strlen(names[i])) == 0 && strchr("usbf", t[1]))
      return (size_t)1 << i;
  return 0;
}

/* The element size, count and alignment of a declaration such as
** ".param .align 8 .b8 k_param_3[16]" or ".global .align 4 .u32 counter". */
static size_t decl(const char *s, const char *end, size_t *align, char *name, size_t namelen) {
  size_t el = 0, count = 1;
  *align = 0;
  for (const char *p = s; p < end; p++) {
    if (*p != '.' && !isalpha((unsigned char)*p) && *p != '_' && *p != '$') continue;
    const char *q = p;
    while (q < end && !isspace((unsigned char)*q) && *q != '[' && *q != ',' && *q != ';' &&
           *q != '=')
      q++;
    if (strncmp(p, ".align", 6) == 0) *align = strtoul(q, NULL, 10);
    else if (*p == '.' && type_size(p) && el == 0) el = type_size(p);
    else if (*p != '.' && !isdigit((unsigned char)p[0])) {
      snprintf(name, namelen, "%.*s", (int)(q - p), p);
      if (*q == '[') count = strtoul(q + 1, NULL, 10);
      break;
    }
    p = q;
  }
  if (*align == 0) *align = el;
  return el * count;
}

static void parse_entry(const char *p, const char *name, size_t nlen, entry *e) {
  snprintf(e->name, sizeof e->name, "%.*s", (int)nlen, name);
  const char *open = strchr(p, '('), *close = strchr(p, ')');
  e->nparams = 0;
  size_t off = 0;
  for (const char *s = open + 1; s < close && e->nparams < 64;) {
    const char *comma = memchr(s, ',', (size_t)(close - s));
    const char *end = comma ? comma : close;
    const char *par = strstr(s, ".param");
    if (par && par < end) {
      size_t align;
      char pname[128];
      size_t n = decl(par + 6, end, &align, pname, sizeof pname);
      off = (off + align - 1) / align * align;
      e->offset[e->nparams] = off;
      e->size[e->nparams++] = n;
      off += n;
    }
    s = end + 1;
  }
}

/* A module global with its initial bytes ("= {0, 0, 128, 63}" or "= 7"). */
static void parse_global(struct CUmod_st *m, const char *p, const char *end) {
  size_t align, el;
  char name[128] = "";
  size_t n = decl(p, end, &align, name, sizeof name);
  if (n == 0 || !name[0] || m->nglobals == 64) return;
  char *mem = calloc(1, n);
  const char *t = p;
  while (t < end && !type_size(t)) t = strchr(t + 1, '.') ? strchr(t + 1, '.') : end;
  el = t < end ? type_size(t) : 1;
  const char *eq = memchr(p, '=', (size_t)(end - p));
  for (size_t off = 0; eq && off < n;) {
    const char *v = eq + 1;
    while (v < end && (isspace((unsigned char)*v) || *v == '{' || *v == ',')) v++;
    if (v >= end || *v == '}') break;
    unsigned long long x;
    char *after;
    if (v[0] == '0' && (v[1] == 'f' || v[1] == 'd')) x = strtoull(v + 2, &after, 16);
    else x = (unsigned long long)strtoll(v, &after, 0);
    memcpy(mem + off, &x, el);          /* little-endian, as the GPU */
    off += el;
    eq = after;
  }
  alloc *a = add(mem, n, A_GLOBAL, 0);
  a->dev = m->dev;
  snprintf(m->gnames[m->nglobals], sizeof m->gnames[0], "%s", name);
  m->globals[m->nglobals++] = a;
}

/* Room for one more function (handed out only once the module is loaded,
** so the array may move while it is read); NULL out of memory. */
static struct CUfunc_st *new_func(struct CUmod_st *m) {
  if (m->nfuncs == m->capfuncs) {
    int cap = m->capfuncs ? 2 * m->capfuncs : 16;
    struct CUfunc_st *g = realloc(m->funcs, (size_t)cap * sizeof *g);
    if (g == NULL) return NULL;
    m->funcs = g;
    m->capfuncs = cap;
  }
  struct CUfunc_st *f = &m->funcs[m->nfuncs++];
  memset(f, 0, sizeof *f);
  f->mod = m;
  f->max_threads = 1024;
  return f;
}

/* The kernel's registers, threads per block and shared memory, once its
** entry is known: .maxntid after the parameter list, the .shared (not
** .extern) declarations of the body from p (its '{'), and FAKE_CUDA_REGS
** for user kernels. The register file (65536 per block, allocated 8 per
** thread per warp) bounds the threads per block as on a GPU. */
static void func_facts(struct CUfunc_st *f, const char *p) {
  bool library = strncmp(f->e.name, "lc_", 3) == 0;
  f->nregs = library ? 32 : user_regs;
  if (p) {
    const char *open = strchr(p, '{');
    const char *nt = strstr(p, ".maxntid");
    if (nt && open && nt < open) {
      int x = 1, y = 1, z = 1;
      sscanf(nt + 8, " %d , %d , %d", &x, &y, &z);
      if (x * y * z > 0 && x * y * z < f->max_threads) f->max_threads = x * y * z;
    }
    int depth = 0;
    for (const char *q = open; q && *q; q++) {
      if (*q == '{') depth++;
      else if (*q == '}' && --depth == 0) break;
      else if (strncmp(q, ".shared ", 8) == 0 && strncmp(q - 8, ".extern ", 8) != 0) {
        const char *end = strchr(q, ';');
        size_t align;
        char name[128];
        if (end) f->static_shared += (int)decl(q + 7, end, &align, name, sizeof name);
      }
    }
  }
  int per_thread = (f->nregs + 7) / 8 * 8;
  int by_regs = 65536 / (per_thread * 32) * 32;
  if (by_regs < f->max_threads) f->max_threads = by_regs;
  f->max_dynamic = f->static_shared > 49152 ? 0 : 49152 - f->static_shared;
}

static CUresult load_ptx(struct CUmod_st *m, const char *ptx, char *log, size_t loglen) {
  if (strstr(ptx, ".version") == NULL || strstr(ptx, ".target") == NULL) {
    snprintf(log, loglen, "fake_cuda: not PTX (no .version/.target)");
    return CUDA_ERROR_INVALID_PTX;
  }
  const char *tg = strstr(ptx, ".target");
  int arch = atoi(tg + strcspn(tg, "0123456789"));
  if (arch > ccmaj[m->dev] * 10 + ccmin[m->dev]) {
    snprintf(log, loglen, "fake_cuda: PTX for sm_%d cannot run on a %d.%d device", arch,
             ccmaj[m->dev], ccmin[m->dev]);
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  }
  int depth = 0;
  for (const char *p = ptx; *p; p++) {
    if (*p == '{') depth++;
    else if (*p == '}') depth--;
    else if (depth == 0 && strncmp(p, ".entry ", 7) == 0) {
      const char *name = p + 7;
      size_t nlen = strcspn(name, "( \t\n");
      struct CUfunc_st *f = new_func(m);
      if (f == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
      parse_entry(p, name, nlen, &f->e);
      func_facts(f, strchr(p, ')'));
      p = strchr(p, ')');
    } else if (depth == 0 && (p == ptx || p[-1] == '\n' || p[-1] == ' ') &&
               (strncmp(p, ".global ", 8) == 0 || strncmp(p, ".const ", 7) == 0)) {
      const char *end = strchr(p, ';');
      if (end == NULL) break;
      parse_global(m, p + 7, end);
      p = end;
    }
  }
  return CUDA_SUCCESS;
}

/* A cubin: its entries' names only, from the ".text.<name>" section names. */
static void load_cubin(struct CUmod_st *m, const unsigned char *img) {
  uint64_t shoff, off;
  uint16_t shentsize, shnum, shstrndx;
  memcpy(&shoff, img + 0x28, 8);
  memcpy(&shentsize, img + 0x3a, 2);
  memcpy(&shnum, img + 0x3c, 2);
  memcpy(&shstrndx, img + 0x3e, 2);
  memcpy(&off, img + shoff + (size_t)shstrndx * shentsize + 0x18, 8);
  for (unsigned i = 0; i < shnum; i++) {
    uint32_t nameoff;
    memcpy(&nameoff, img + shoff + (size_t)i * shentsize, 4);
    const char *nm = (const char *)img + off + nameoff;
    if (strncmp(nm, ".text.", 6) != 0) continue;
    struct CUfunc_st *f = new_func(m);
    if (f == NULL) return;
    snprintf(f->e.name, sizeof f->e.name, "%s", nm + 6);
    f->e.nparams = -1;
    func_facts(f, NULL);
  }
}

API CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned n,
                                CUjit_option *opts, void **vals);
API CUresult cuModuleLoadData(CUmodule *mod, const void *image) {
  return cuModuleLoadDataEx(mod, image, 0, NULL, NULL);
}

API CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned n,
                                CUjit_option *opts, void **vals) {
  ENTER(true);
  char *log = NULL;
  size_t loglen = 0;
  for (unsigned i = 0; i < n; i++) {
    if (opts[i] == CU_JIT_ERROR_LOG_BUFFER) log = vals[i];
    if (opts[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) loglen = (size_t)(uintptr_t)vals[i];
  }
  char scratch[256];
  if (log == NULL || loglen == 0) { log = scratch; loglen = sizeof scratch; }
  struct CUmod_st *m = calloc(1, sizeof *m);
  m->dev = curdev();
  CUresult r = CUDA_SUCCESS;
  if (memcmp(image, "\177ELF", 4) == 0) load_cubin(m, image);
  else r = load_ptx(m, image, log, loglen);
  if (r != CUDA_SUCCESS) {
    free(m->funcs);
    free(m);
    return leave(r);
  }
  *mod = m;
  return leave(CUDA_SUCCESS);
}

API CUresult cuModuleUnload(CUmodule m) {
  ENTER(true);
  for (int i = 0; i < m->nglobals; i++) {
    free(m->globals[i]->p);
    drop(m->globals[i]);
  }
  free(m->funcs);
  free(m);
  return leave(CUDA_SUCCESS);
}

API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  ENTER(true);
  for (int i = 0; i < m->nfuncs; i++)
    if (strcmp(m->funcs[i].e.name, name) == 0) {
      *f = &m->funcs[i];
      return leave(CUDA_SUCCESS);
    }
  return leave(CUDA_ERROR_NOT_FOUND);
}

API CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *bytes, CUmodule m, const char *name) {
  ENTER(true);
  for (int i = 0; i < m->nglobals; i++)
    if (strcmp(m->gnames[i], name) == 0) {
      if (p) *p = (CUdeviceptr)(uintptr_t)m->globals[i]->p;
      if (bytes) *bytes = m->globals[i]->n;
      return leave(CUDA_SUCCESS);
    }
  return leave(CUDA_ERROR_NOT_FOUND);
}

API CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *offset, size_t *size) {
  ENTER(true);
  if (f->e.nparams < 0) return leave(CUDA_ERROR_NOT_SUPPORTED);
  if (i >= (size_t)f->e.nparams) return leave(CUDA_ERROR_INVALID_VALUE);
  if (offset) *offset = f->e.offset[i];
  if (size) *size = f->e.size[i];
  return leave(CUDA_SUCCESS);
}

static int optin(int dev) {
  int v = 0;
  dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &v);
  return v;
}

API CUresult cuFuncGetAttribute(int *v, CUfunction_attribute attr, CUfunction f) {
  ENTER(true);
  if (f == NULL || v == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  switch (attr) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = f->max_threads; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = f->static_shared; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *v = 0; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *v = 0; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = f->nregs; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
      *v = ccmaj[f->mod->dev] * 10 + ccmin[f->mod->dev];
      break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = f->max_dynamic; break;
    default: return leave(CUDA_ERROR_INVALID_VALUE);
  }
  return leave(CUDA_SUCCESS);
}

API CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute attr, int v) {
  ENTER(true);
  if (f == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  if (attr == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    if (v < 0 || v > optin(f->mod->dev) - f->static_shared) return leave(CUDA_ERROR_INVALID_VALUE);
    f->max_dynamic = v;
  } else if (attr == CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) {
    if (v < -1 || v > 100) return leave(CUDA_ERROR_INVALID_VALUE);
  } else {
    return leave(CUDA_ERROR_INVALID_VALUE);
  }
  return leave(CUDA_SUCCESS);
}

/* ---- launches ------------------------------------------------------------------ */

/* lc_copy_strided, element by element; every element must lie in memory
** the device can reach, else the context fails as on a GPU. */
static CUresult copy_strided(void **params) {
  char *dst, *src;
  lc_strided_args a;
  memcpy(&dst, params[0], 8);
  memcpy(&src, params[1], 8);
  memcpy(&a, params[2], sizeof a);
  if (a.ndim < 0 || a.ndim > LC_MAXDIM || a.itemsize <= 0) return CUDA_ERROR_ILLEGAL_ADDRESS;
  for (long long i = 0; i < a.n; i++) {
    long long rest = i, d = 0, s = 0;
    for (int k = a.ndim - 1; k >= 0; k--) {
      long long j = rest % a.shape[k];
      rest /= a.shape[k];
      d += j * a.dst_strides[k];
      s += j * a.src_strides[k];
    }
    const alloc *da = find(dst + d, (size_t)a.itemsize), *sa = find(src + s, (size_t)a.itemsize);
    if (!device_accessible(da) || !device_accessible(sa) ||
        (!on_host(da) && da->dev != curdev()) || (!on_host(sa) && sa->dev != curdev()))
      return CUDA_ERROR_ILLEGAL_ADDRESS;
    memcpy(dst + d, src + s, (size_t)a.itemsize);
  }
  return CUDA_SUCCESS;
}

API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shared, CUstream s,
                            void **params, void **extra) {
  ENTER(true);
  if (!stream_ok(s)) return leave(CUDA_ERROR_INVALID_HANDLE);
  if (f == NULL || f->mod->dev != curdev()) return leave(CUDA_ERROR_INVALID_HANDLE);
  if (!gx || !gy || !gz || !bx || !by || !bz || gx > LC_MAX_GRID_X || gy > LC_MAX_GRID_Y ||
      gz > LC_MAX_GRID_Z || bx > LC_MAX_BLOCK_X || by > LC_MAX_BLOCK_Y || bz > LC_MAX_BLOCK_Z ||
      (unsigned long long)bx * by * bz > LC_MAX_BLOCK_THREADS ||
      shared > (unsigned)f->max_dynamic || extra != NULL)
    return leave(CUDA_ERROR_INVALID_VALUE);
  if ((unsigned long long)bx * by * bz > (unsigned)f->max_threads)
    return leave(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  const entry *e = &f->e;
  if (e->nparams > 0 && params == NULL) return leave(CUDA_ERROR_INVALID_VALUE);
  if (trace) {
    fprintf(trace, "launch %s %u,%u,%u %u,%u,%u %u", e->name, gx, gy, gz, bx, by, bz, shared);
    for (int i = 0; i < e->nparams; i++) {
      fputc(' ', trace);
      for (size_t b = 0; b < e->size[i]; b++)
        fprintf(trace, "%02x", ((unsigned char *)params[i])[b]);
    }
    fputc('\n', trace);
    fflush(trace);
  }
  if (strcmp(e->name, "lc_copy_strided") == 0) {
    /* the PTX must declare what the backend packs */
    if (e->nparams >= 0 && (e->nparams != 3 || e->size[0] != 8 || e->size[1] != 8 ||
                            e->size[2] != sizeof(lc_strided_args)))
      return leave(CUDA_ERROR_INVALID_VALUE);
    CUresult r = copy_strided(params);
    if (r != CUDA_SUCCESS) sticky = r;      /* reported by later calls */
  } else if (strncmp(e->name, "fake_fault", 10) == 0) {
    sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
  } else {
    /* a pointer (or an Array's data) the device cannot reach: the host
    ** address of write-combined memory faults, as the kernel's first access
    ** to it would */
    for (int i = 0; i < e->nparams; i++) {
      char *ptr;
      if (e->size[i] < 8) continue;
      memcpy(&ptr, params[i], 8);
      const alloc *a = find(ptr, 1);
      if (a && a->kind == A_HOST && (a->flags & CU_MEMHOSTALLOC_WRITECOMBINED))
        sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
    }
  }
  return leave(CUDA_SUCCESS);
}
