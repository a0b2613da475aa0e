/*
** fake_cuda: a CUDA driver on host memory, so the cuda backend can be tested
** without a GPU (LUACUDA_LIBCUDA=build/fake/libcuda.so.1). Test code only:
** never installed.
**
** It is built against the toolkit's cuda.h, so its prototypes, structs and
** constants are the driver's, and a mistake in src/backend/cuda/api.h's
** copies of them shows up as a wrong result. Semantics follow the driver's
** manual, strictly, so that ordering mistakes show as wrong data:
** - every stream is a queue run by a worker thread of its own, in order;
**   the legacy default stream waits for the work queued before on every
**   blocking stream of its context, and blocking streams wait for the
**   legacy stream's; non-blocking streams wait for neither.
**   cuStreamWaitEvent makes a stream wait for an event's last record;
**   host functions run on the stream's worker (not the caller's thread)
**   and may not call the driver;
** - fresh device, managed and pool memory holds 0xA5 bytes (undefined on
**   a GPU, never zeros); memory freed with cuMemFreeAsync is poisoned so
**   when its stream reaches the free, and the block goes to the next
**   allocation that fits (on the freeing stream at once, as stream order
**   allows);
** - a copy whose source and destination overlap is CUDA_ERROR_INVALID_VALUE
**   (undefined on a GPU);
** - an intra-device 2-D or 3-D copy with a pitch cuMemAllocPitch would not
**   give (not a multiple of 512) is CUDA_ERROR_INVALID_VALUE, as the manual
**   says it may be (pitch_refused);
** - a thread's call stack is held to CU_LIMIT_STACK_SIZE, and printf output
**   waits in its context's FIFO for the driver's delivery points, the
**   oldest overwritten past CU_LIMIT_PRINTF_FIFO_SIZE ("limits" below);
** - cuMemFreeHost and cuMemHostUnregister do not wait for queued work (the
**   manual does not promise it): a copy queued before that touches the
**   memory faults (CUDA_ERROR_ILLEGAL_ADDRESS) when it runs;
** - a copy from pageable host memory reads it at call time (the driver
**   stages it); a copy to pageable host memory returns when done; the
**   synchronous cuMemcpy* and cuMemFree wait as the manual says;
** - the current context is per thread; pointers are checked against the
**   allocations they fall in; pools keep freed memory up to their release
**   threshold; a sticky error makes every later call fail with it;
** - besides each device's default pool, cuMemPoolCreate makes pools of
**   their own (their own blocks, threshold and accounting; all the pools of
**   a device share its memory); cuMemPoolDestroy gives back their idle
**   blocks at once and the rest as it is freed.
**
** Modules: PTX is parsed for its entries (parameter sizes, as the PTX
** declares them) and globals; a cubin is accepted with its entry names
** only, when its ELF header names an SM the device runs (X.y on X.z, z >= y). As a driver does, a PTX whose .version is newer than the driver's
** PTX ISA fails with CUDA_ERROR_UNSUPPORTED_PTX_VERSION; so does a cubin
** whose .note.nv.cuinfo names a toolkit of a newer major version (minor
** version compatibility: a cubin of 12.8 loads on a 12.0 driver; which
** code a real driver gives for a cubin is not documented). A fatbinary
** (what luacuda loads on a GPU: the cubin for the device's SM and its PTX)
** is taken as the driver takes it, its ELF checked, and its PTX run
** (load_fatbin). The library kernels lc_copy_strided and lc_fill_strided
** are run, on their stream, as kernels/strided.cu computes them
** (lc_fill_strided's 32-bit indexing and store width checked against the
** view); other kernels run on the PTX interpreter. A kernel of a cubin
** loaded alone (no PTX) is found by name, but its launch fails with
** CUDA_ERROR_NOT_SUPPORTED and a line on stderr: the fake cannot run it.
**
** Environment:
**   FAKE_CUDA_DEVICES=2          number of devices (1 to 4)
**   FAKE_CUDA_CC=9.0,8.6         compute capability of each device (then 9.0); two
**                                devices of the same major version may enable
**                                peer access (cuCtxEnablePeerAccess), and until
**                                one does, a kernel or the copy kernel touching
**                                the other's memory fails (ILLEGAL_ADDRESS);
**                                cuMemcpyPeerAsync needs no peer access. A
**                                pool's blocks need more: the pool's grant
**                                (cuMemPoolSetAccess), without which a kernel,
**                                the copy kernel or a cuMemcpy*Async of another
**                                device touching them fails (ILLEGAL_ADDRESS)
**   FAKE_CUDA_MEMORY=256M        memory of each device, which besides the
**                                allocations (pools' idle blocks included)
**                                holds loaded modules (image and variables),
**                                the local memory reserved for launches (the
**                                entry's frame (the cubin's, else its
**                                .local variables) times the threads the
**                                device holds at once, grown, never shrunk),
**                                or, when larger, the stack above the
**                                default 1 KiB times those threads (the
**                                default's share is the context's, outside
**                                this figure)
**                                and what fake_cuda_charge takes (cuBLAS's
**                                workspaces); short of it, those calls are
**                                CUDA_ERROR_OUT_OF_MEMORY
**   FAKE_CUDA_NO_POOLS=1         no stream-ordered allocator
**   FAKE_CUDA_DELAY_US=N         every queued operation takes N more
**                                microseconds (races become visible)
**   FAKE_CUDA_SYNC=1             run each operation at once, on the calling
**                                thread (for debugging; not the driver's rules)
**   FAKE_CUDA_DRIVER_VERSION=12040  what cuDriverGetVersion says (the
**                                header's CUDA_VERSION by default)
**   FAKE_CUDA_CONCURRENT_MANAGED=0  CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS
**                                is 0 (as on Windows, or before Pascal)
**   FAKE_CUDA_COOPERATIVE=0      CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0, and
**                                cuLaunchCooperativeKernel CUDA_ERROR_NOT_SUPPORTED
**   FAKE_CUDA_REGS=N             registers per thread of every user kernel
**                                (32); with .maxntid in the PTX, it sets the
**                                kernel's MAX_THREADS_PER_BLOCK
**   FAKE_CUDA_FAIL=fn:N[:code]   the Nth call of fn returns code (999)
**   FAKE_CUDA_FAIL_FROM=name     FAKE_CUDA_FAIL counts only the calls made from
**                                the shared object whose path contains name
**                                (dist_mpi.so: luacuda.dist's NCCL engine, not
**                                luacuda or the fake NCCL)
**   FAKE_CUDA_TRACE=path         append each call's name, "  -> code" after
**                                a failed one, and each launch with its
**                                parameter bytes in hex, to path
**   FAKE_CUDA_TRACE_STREAMS=1    calls that queue work say where:
**                                "name @legacy", "@blocking" or "@nonblocking"
**   FAKE_CUDA_SCHED_SEED=N       the PTX interpreter runs a block's threads in an
**                                order shuffled from N (0 or unset: in order;
**                                make check-fake-cuda sets 1); registers and
**                                local memory start as 0xA5 bytes either way
** A kernel whose name starts with fake_fault fails the context with
** CUDA_ERROR_ILLEGAL_ADDRESS when it runs, as a faulting kernel does.
** Beside the driver's API it exports fake_cuda_reachable(p, n), whether the
** current context's device reaches [p, p + n), for the fake cuBLAS
** (spec/fake/fake_cublas.c), which queues its products as host functions, and
** fake_cuda_charge(delta), which takes device memory for its workspaces
** (or gives it back).
**
** cuLaunchCooperativeKernel refuses a grid larger than the device holds at
** once (cuOccupancyMaxActiveBlocksPerMultiprocessor, computed from the
** kernel's registers, threads and shared memory as on the real part, times
** the multiprocessors) with CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE; the
** interpreter runs such a launch's blocks all at once, a thread each, and
** gives the kernel the grid workspace this_grid().sync() counts in.
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
#define _GNU_SOURCE       /* dladdr, for FAKE_CUDA_FAIL_FROM */
#include <cuda.h>

#include "abi.h"          /* the launch limits and the library kernels' parameters, as luacuda's */
#include "cubin.h"        /* the frame sizes a cubin holds */
#include "ptx.h"          /* the PTX interpreter that runs user kernels */

#include <ctype.h>
#include <dlfcn.h>
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
#define POISON 0xA5

/* ---- state ----------------------------------------------------------------- */

/* A_ALIAS: the device address of write-combined host memory */
enum { A_DEVICE, A_POOL, A_MANAGED, A_HOST, A_REGISTERED, A_GLOBAL, A_ALIAS };

typedef struct alloc {
  unsigned long long made;   /* its number among the allocations made: newer is larger */
  uintptr_t reach;           /* the furthest end of it and of those before it in by_addr */
  char *p;
  size_t n;
  int kind, dev;
  unsigned flags;            /* cuMemHostAlloc / cuMemHostRegister flags */
  size_t cap;                /* a pool block's size */
  bool freeing;              /* a pool block whose free is queued */
  struct pool *pool;         /* a pool block's pool */
  struct alloc *alias;       /* write-combined: the device mapping, and back */
} alloc;

/* A pool block not in use: freed (poisoned) once its stream reached the
** free; until then only its own stream may take it again. */
typedef struct block {
  struct block *next;
  char *p;
  size_t cap;
  struct CUstream_st *stream;   /* the stream whose free is pending; NULL: free */
  struct alloc *owner;          /* the allocation that free ends */
} block;

typedef struct pool {
  int dev;
  bool access[MAXDEV];          /* other devices granted its memory (cuMemPoolSetAccess) */
  uint64_t threshold, reserved, used;
  block *idle;
  bool made, destroyed;         /* by cuMemPoolCreate; by cuMemPoolDestroy */
  struct pool *next;            /* the pools made */
} pool;
/* A printf's text, waiting in its context's FIFO for a flush (printf_flush). */
typedef struct record { struct record *next; size_t bytes; char text[]; } record;
struct CUctx_st {
  int dev;
  int retains;
  struct CUstream_st *legacy;
  size_t stack, fifo, heap;     /* the limits cuCtxSetLimit sets (the driver's defaults first) */
  bool printed;                 /* a kernel calling printf was launched: the FIFO's size is fixed */
  record *head, *tail;          /* the printf FIFO (fifo_mu), */
  size_t fifo_used;             /* the bytes its records take */
};

/* A point in a stream's queue: done once the stream has completed seq. */
typedef struct point { struct CUstream_st *s; unsigned long long seq; } point;

enum { OP_COPY, OP_MEMSET, OP_KERNEL, OP_FILL, OP_FAULT, OP_RECORD, OP_HOSTFN, OP_FREE, OP_NOTHING,
       OP_PTX };

/* A module's PTX program, shared by the launches queued from it. */
typedef struct program { ptx_module *m; int refs; } program;

typedef struct op {
  struct op *next;
  int kind;
  int dev;
  unsigned long long seq;
  point *deps;                  /* must be done before this runs */
  int ndeps;
  /* the work */
  char *dst;
  const char *src;
  size_t n, width, height, depth, dpitch, spitch, dheight, sheight;
  char *staged;                 /* pageable source bytes read at call time (freed after) */
  unsigned char value[8];       /* a memset's element */
  lc_strided_args args;         /* lc_copy_strided's */
  lc_fill_args fill;            /* lc_fill_strided's */
  struct CUevent_st *event;
  CUhostFn fn;
  void *ud;
  alloc *freed;                 /* OP_FREE: the pool allocation */
  program *prog;                /* OP_PTX: the kernel, */
  int entry;
  ptx_dims grid, block;
  unsigned shared;
  unsigned char *params;        /* and its parameters, as the PTX lays them out */
  bool cooperative;             /* cuLaunchCooperativeKernel's: every block at once */
  size_t stack;                 /* OP_PTX: the context's stack limit at the launch */
  bool unmapped;                /* OP_COPY: touches a pool block its device was not granted */
  unsigned long long born;      /* its number among every op made (retired memory's check) */
} op;

struct CUstream_st {
  int dev;
  bool alive, nonblocking, legacy, worker;
  unsigned long long enqueued, completed;
  op *head, *tail;
  struct CUstream_st *next;
};
struct CUevent_st {
  unsigned flags;
  bool alive;
  point rec;                    /* the last record; rec.s NULL: never recorded */
  double ms;                    /* when the last record ran */
  unsigned long long ms_seq;    /* the record whose time ms is */
  struct CUevent_st *next;
};

typedef struct entry {
  char name[128];
  int nparams;               /* -1: unknown (a cubin) */
  size_t size[64], offset[64];
} entry;
struct CUfunc_st {
  struct CUmod_st *mod;
  entry e;
  int ptx_entry;             /* in mod->prog, or -1 */
  int static_shared;         /* bytes of .shared in its body */
  int max_threads;           /* .maxntid, else 1024; less with many registers */
  int nregs;
  int max_dynamic;           /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
  size_t local_bytes;        /* each thread's .local frame (the entry's own) */
};
struct CUmod_st {
  int dev;
  char *image;               /* PTX text, or NULL for a cubin */
  int nfuncs, capfuncs;
  struct CUfunc_st *funcs;   /* a driver has no limit on a module's kernels */
  program *prog;             /* PTX: what runs its kernels */
  alloc **globals;           /* its .global and .const variables */
  int nglobals;
  size_t charged;            /* its image and variables, charged to dev */
  cubin_frames frames;       /* its cubin's frame sizes (none for PTX alone) */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t progress = PTHREAD_COND_INITIALIZER;   /* an op enqueued or done */
static bool initialized;
static int ndev = 2, ccmaj[MAXDEV] = {9, 8, 9, 9}, ccmin[MAXDEV] = {0, 6, 0, 0};
static size_t devmem = 256u << 20;
static bool no_pools, no_concurrent_managed, no_cooperative, run_inline, trace_streams;
static long delay_us;
static int user_regs = 32;
static struct CUctx_st ctxs[MAXDEV];
static pool pools[MAXDEV];                /* the default pools */
static pool *made_pools;                  /* cuMemPoolCreate's, never freed */
/* The live allocations, ordered by address (then by making) in by_addr,
** each with its reach: the furthest end of it and of every one before it. The allocation holding an address is found by a binary
** search, then a walk back that reach ends (at once, as ranges do not
** overlap), not by a walk of them all (thousands in a long run, on every
** copy). The one overlap, a pool block taken again while the free of its
** last allocation is still queued, starts both at the block; of those the
** newest is found, as the list the index replaced found it first. */
static alloc **by_addr;
static size_t nallocs, slots_cap;
static unsigned long long allocs_made;
/* The bytes of cuMemAlloc's and cuMemAllocManaged's live blocks, per
** device: kept as they come and go, so that each allocation's room check
** does not walk every allocation of the process (thousands in a long run). */
static size_t alloc_bytes[MAXDEV];
static struct CUstream_st *streams;   /* every stream ever made: a later use is reported */
static struct CUevent_st *events;     /* likewise */
static CUresult sticky;
static char fail_fn[64];
static int fail_at, fail_calls;
static char fail_from[256];                /* FAKE_CUDA_FAIL_FROM */
static CUresult fail_code = CUDA_ERROR_UNKNOWN;
static FILE *trace;
static _Thread_local CUcontext current;
static _Thread_local bool in_host_fn;
static _Thread_local struct CUstream_st *per_thread[MAXDEV];

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

/* Whether the call returning to ret counts for FAKE_CUDA_FAIL: every call,
** or those from the shared object FAKE_CUDA_FAIL_FROM names. */
static bool counts_for_failure(const void *ret) {
  if (fail_from[0] == '\0') return true;
  Dl_info info;
  return ret && dladdr(ret, &info) && info.dli_fname && strstr(info.dli_fname, fail_from);
}

/* Every entry point: traced; refused before cuInit, inside a host function,
** after a sticky error, or when a failure is injected here (ret: where the
** call returns to). Takes the lock. */
static CUresult enter(const char *fn, bool need_ctx, const void *ret) {
  if (in_host_fn) return CUDA_ERROR_NOT_PERMITTED;
  pthread_mutex_lock(&mu);
  trace_line("%s\n", fn);
  CUresult r = CUDA_SUCCESS;
  if (!initialized) r = CUDA_ERROR_NOT_INITIALIZED;
  else if (sticky) r = sticky;
  else if (fail_at && strcmp(fn, fail_fn) == 0 && counts_for_failure(ret) && ++fail_calls == fail_at)
    r = fail_code;
  else if (need_ctx && current == NULL) r = CUDA_ERROR_INVALID_CONTEXT;
  if (r != CUDA_SUCCESS && trace) fprintf(trace, "  -> %d\n", (int)r);
  if (r != CUDA_SUCCESS) pthread_mutex_unlock(&mu);
  return r;
}
#define ENTER(ctx) do { CUresult r_ = enter(__func__, ctx, __builtin_return_address(0)); \
                         if (r_) return r_; } while (0)
static CUresult leave(CUresult r) {
  if (r != CUDA_SUCCESS && trace) fprintf(trace, "  -> %d\n", (int)r);
  pthread_mutex_unlock(&mu);
  return r;
}
static int curdev(void) { return current->dev; }

static uintptr_t start_of(const alloc *a) { return (uintptr_t)a->p; }

/* A zero-byte allocation holds its own address. */
static uintptr_t end_of(const alloc *a) { return (uintptr_t)a->p + (a->n ? a->n : 1); }

/* The number of slots whose allocation starts at or below address c. */
static size_t slots_upto(uintptr_t c) {
  size_t lo = 0, hi = nallocs;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (start_of(by_addr[mid]) <= c) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The reaches from slot i on, after slot i came or went: each depends on
** the one before, so they stop changing where one is as it was. */
static void fix_reach(size_t i) {
  for (; i < nallocs; i++) {
    uintptr_t r = end_of(by_addr[i]);
    if (i > 0 && by_addr[i - 1]->reach > r) r = by_addr[i - 1]->reach;
    if (by_addr[i]->reach == r) break;
    by_addr[i]->reach = r;
  }
}

/* The newest allocation whose bytes [p, p + max(n, 1)) meet [lo, hi)
** (lo < hi) and that pick(a, lo, n) accepts, or NULL. */
static alloc *newest_meeting(uintptr_t lo, uintptr_t hi,
                             bool (*pick)(const alloc *a, uintptr_t lo, size_t n), size_t n) {
  alloc *best = NULL;
  for (size_t i = slots_upto(hi - 1); i-- > 0 && by_addr[i]->reach > lo;) {
    alloc *a = by_addr[i];
    if (end_of(a) > lo && (best == NULL || a->made > best->made) && pick(a, lo, n)) best = a;
  }
  return best;
}

/* [c, c + n) inside a (c inside it already). */
static bool holds(const alloc *a, uintptr_t c, size_t n) { return n <= start_of(a) + a->n - c; }

/* The allocation holding [p, p + n), or NULL. */
static alloc *find(const void *p, size_t n) {
  uintptr_t c = (uintptr_t)p;
  return newest_meeting(c, c + 1, holds, n);
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

/* Host memory the driver did not page-lock: copies from it are staged. */
static bool pageable(const void *p, size_t n) {
  const alloc *a = find(p, n ? n : 1);
  return a == NULL;
}

/* Device memory whose bytes hold c. */
static bool device_bytes(const alloc *a, uintptr_t c, size_t n) {
  (void)n;
  return c < start_of(a) + a->n &&
         (a->kind == A_DEVICE || a->kind == A_POOL || a->kind == A_MANAGED);
}

/* Device memory a copy touches must lie in one allocation; other addresses
** are (pageable) host memory. */
static bool check_range(CUdeviceptr p, size_t n) {
  const alloc *a = newest_meeting((uintptr_t)p, (uintptr_t)p + 1, device_bytes, 0);
  return a == NULL || holds(a, (uintptr_t)p, n);
}

/* The slot of a, a live allocation. */
static size_t slot_of(const alloc *a) {
  size_t i = slots_upto(start_of(a));
  while (by_addr[--i] != a) {}
  return i;
}

static alloc *add(void *p, size_t n, int kind, unsigned flags) {
  alloc *a = calloc(1, sizeof *a);
  if (nallocs == slots_cap) {
    slots_cap = slots_cap ? 2 * slots_cap : 256;
    by_addr = realloc(by_addr, slots_cap * sizeof *by_addr);
  }
  if (a == NULL || by_addr == NULL) {
    fprintf(stderr, "fake_cuda: out of memory for the allocations' index\n");
    abort();
  }
  a->made = ++allocs_made;
  a->p = p;
  a->n = n;
  a->kind = kind;
  a->dev = current ? curdev() : 0;
  a->flags = flags;
  size_t i = slots_upto(start_of(a));   /* after the older ones at its address */
  memmove(&by_addr[i + 1], &by_addr[i], (nallocs - i) * sizeof *by_addr);
  by_addr[i] = a;   /* its reach 0, below any: fix_reach sets it */
  nallocs++;
  fix_reach(i);
  if (kind == A_DEVICE || kind == A_MANAGED) alloc_bytes[a->dev] += n;
  return a;
}

static void drop(alloc *a) {
  size_t i = slot_of(a);
  memmove(&by_addr[i], &by_addr[i + 1], (nallocs - i - 1) * sizeof *by_addr);
  nallocs--;
  fix_reach(i);
  if (a->kind == A_DEVICE || a->kind == A_MANAGED) alloc_bytes[a->dev] -= a->n;
  free(a);
}

/* Device memory that is no allocation of the program's: module images,
** each thread's local memory (local_held), cuBLAS's workspaces and NCCL's
** buffers (fake_cuda_charge). Under mu. */
static size_t charged[MAXDEV], local_reserved[MAXDEV];
static size_t stack_reserved(int dev, size_t stack);

static size_t max_size(size_t a, size_t b) { return a > b ? a : b; }

/* Each thread's local memory, reserved for every thread the device holds:
** the launches' frames (local_reserved) live in the stack, so it is the
** larger of those and the stack above the default (stack_reserved). */
static size_t local_held(int dev) {
  return max_size(local_reserved[dev], stack_reserved(dev, ctxs[dev].stack));
}

static size_t dev_used(int dev) {
  size_t n = pools[dev].reserved + charged[dev] + local_held(dev);
  for (pool *q = made_pools; q; q = q->next)
    if (q->dev == dev) n += q->reserved;
  return n + alloc_bytes[dev];
}

/* ---- the queues ---------------------------------------------------------------
** Under mu. Each op names the points it waits for; a stream's worker runs
** its ops in order, each once its points are done. With FAKE_CUDA_SYNC
** an op runs as it is queued (every earlier op has run by then). */

static void now_ms(double *ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  *ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool point_done(point p) { return p.s == NULL || p.s->completed >= p.seq; }

static bool deps_done(const op *o) {
  for (int i = 0; i < o->ndeps; i++)
    if (!point_done(o->deps[i])) return false;
  return true;
}

static void wait_point(point p) {
  while (!point_done(p)) pthread_cond_wait(&progress, &mu);
}

/* Everything queued on s so far. */
static point last_of(struct CUstream_st *s) { return (point){s, s->enqueued}; }

/* The stream a handle names on the current context: NULL and
** CU_STREAM_LEGACY are its legacy stream, CU_STREAM_PER_THREAD this
** thread's blocking stream; NULL for an unknown or destroyed one. */
static struct CUstream_st *new_stream(int dev, bool nonblocking, bool legacy);
static struct CUstream_st *stream_of(CUstream h) {
  if (h == NULL || h == CU_STREAM_LEGACY) return current->legacy;
  if (h == CU_STREAM_PER_THREAD) {
    if (per_thread[curdev()] == NULL) per_thread[curdev()] = new_stream(curdev(), false, false);
    return per_thread[curdev()];
  }
  for (struct CUstream_st *t = streams; t; t = t->next)
    if (t == h) return t->alive && t->dev == curdev() ? t : NULL;
  return NULL;
}

static struct CUstream_st *new_stream(int dev, bool nonblocking, bool legacy) {
  struct CUstream_st *t = calloc(1, sizeof *t);
  t->dev = dev;
  t->alive = true;
  t->nonblocking = nonblocking;
  t->legacy = legacy;
  t->next = streams;
  streams = t;
  return t;
}

static const char *stream_kind(const struct CUstream_st *s) {
  return s->legacy ? "legacy" : s->nonblocking ? "nonblocking" : "blocking";
}

/* The entry's trace line, with the stream when asked. */
static void trace_stream(const char *fn, const struct CUstream_st *s) {
  if (trace && trace_streams) { fprintf(trace, "%s @%s\n", fn, stream_kind(s)); fflush(trace); }
}

static void run_op(op *o);
static void program_release(program *p);

static void free_op(op *o) {
  free(o->deps);
  free(o->staged);
  free(o->params);
  program_release(o->prog);
  free(o);
}

static void *worker(void *arg) {
  struct CUstream_st *s = arg;
  pthread_mutex_lock(&mu);
  for (;;) {
    while (s->head == NULL || !deps_done(s->head)) {
      if (s->head == NULL && !s->alive) {       /* destroyed, and its work done */
        s->worker = false;
        pthread_mutex_unlock(&mu);
        return NULL;
      }
      pthread_cond_wait(&progress, &mu);
    }
    op *o = s->head;
    if (delay_us > 0 && !sticky) {              /* the work takes time, the lock is free */
      pthread_mutex_unlock(&mu);
      struct timespec d = {delay_us / 1000000, (delay_us % 1000000) * 1000};
      nanosleep(&d, NULL);
      pthread_mutex_lock(&mu);
    }
    run_op(o);
    s->head = o->next;
    if (s->head == NULL) s->tail = NULL;
    s->completed = o->seq;
    free_op(o);
    pthread_cond_broadcast(&progress);
  }
}

static unsigned long long ops_made;

static op *new_op(int kind) {
  op *o = calloc(1, sizeof *o);
  o->kind = kind;
  o->born = ++ops_made;
  o->dev = current ? curdev() : 0;
  return o;
}

static void add_dep(op *o, point p) {
  if (point_done(p)) return;
  o->deps = realloc(o->deps, (size_t)(o->ndeps + 1) * sizeof *o->deps);
  o->deps[o->ndeps++] = p;
}

/* Queue o on s, after what the legacy stream's rules make it wait for;
** returns its point. */
static point enqueue(struct CUstream_st *s, op *o) {
  if (s->legacy) {
    for (struct CUstream_st *t = streams; t; t = t->next)
      if (t != s && t->dev == s->dev && !t->nonblocking) add_dep(o, last_of(t));
  } else if (!s->nonblocking) {
    add_dep(o, last_of(ctxs[s->dev].legacy));
  }
  o->seq = ++s->enqueued;
  point p = {s, o->seq};
  if (run_inline) {
    run_op(o);
    s->completed = o->seq;
    free_op(o);
    pthread_cond_broadcast(&progress);
    return p;
  }
  if (s->tail) s->tail->next = o;
  else s->head = o;
  s->tail = o;
  if (!s->worker) {
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    s->worker = pthread_create(&t, &at, worker, s) == 0;
    pthread_attr_destroy(&at);
  }
  pthread_cond_broadcast(&progress);
  return p;
}

/* Wait for everything queued on device dev's streams. */
static void drain_device(int dev) {
  for (struct CUstream_st *t = streams; t; t = t->next)
    if (t->dev == dev) wait_point(last_of(t));
}

/* Pool p gives back its idle blocks whose frees have run, down to keep
** bytes reserved. */
static void trim(pool *p, uint64_t keep) {
  for (block **bp = &p->idle; *bp && p->reserved > keep;) {
    block *b = *bp;
    if (b->stream != NULL) { bp = &b->next; continue; }
    *bp = b->next;
    p->reserved -= b->cap;
    free(b->p);
    free(b);
  }
}

/* Host memory no longer page-locked (cuMemFreeHost, cuMemHostUnregister)
** while work queued before still names it: the driver does not wait, so
** neither does the fake; a copy queued before that touches it faults
** (ILLEGAL_ADDRESS, told on stderr), and cuMemFreeHost's bytes stay
** allocated until that work is done, so the fault is reported, not a
** use after free of the fake's own. */
typedef struct retired {
  struct retired *next;
  char *p, *alias;              /* the range; write-combined: its device mapping */
  size_t n;
  bool owned;                   /* cuMemFreeHost's: released with it */
  unsigned long long born;      /* ops made up to its retirement */
  point *wait;                  /* the work queued then */
  int nwait;
} retired;
static retired *retireds;

static void release_retired(void) {
  for (retired **rp = &retireds; *rp;) {
    retired *r = *rp;
    bool done = true;
    for (int i = 0; i < r->nwait && done; i++) done = point_done(r->wait[i]);
    if (!done) { rp = &r->next; continue; }
    *rp = r->next;
    if (r->owned && r->alias) { munmap(r->alias, r->n); munmap(r->p, r->n); }
    else if (r->owned) free(r->p);
    free(r->wait);
    free(r);
  }
}

/* Under mu: a's range retires; its record (and its alias's) goes now. */
static void retire(alloc *a, bool owned) {
  retired *r = calloc(1, sizeof *r);
  r->p = a->p;
  r->n = a->n;
  r->alias = a->alias ? a->alias->p : NULL;
  r->owned = owned;
  r->born = ops_made;
  for (struct CUstream_st *t = streams; t; t = t->next)
    if (!point_done(last_of(t))) {
      r->wait = realloc(r->wait, (size_t)(r->nwait + 1) * sizeof *r->wait);
      r->wait[r->nwait++] = last_of(t);
    }
  if (a->alias) drop(a->alias);
  drop(a);
  r->next = retireds;
  retireds = r;
  release_retired();
}

/* Does op o, made before a retirement, touch [p, p + n) of it? */
static bool touches_retired(const op *o, const char *p, size_t n) {
  for (const retired *r = retireds; r; r = r->next)
    if (o->born <= r->born && p < r->p + r->n && r->p < p + n) return true;
  return false;
}

/* A synchronisation point: pools give back what is above their threshold. */
static void settle(void) {
  release_retired();
  for (int i = 0; i < ndev; i++) trim(&pools[i], pools[i].threshold);
  for (pool *p = made_pools; p; p = p->next) trim(p, p->destroyed ? 0 : p->threshold);
}

/* ---- running queued work -------------------------------------------------------- */

/* Peer access: peer_on[from][to], kernels of device from's context reach
** device to's memory (cuCtxEnablePeerAccess, one direction). Under mu. */
static bool peer_on[MAXDEV][MAXDEV];

/* May devices dev and peer access each other's memory directly? Distinct
** devices of the same major compute capability, as cuCtxEnablePeerAccess's
** manual gives the condition for access (devices 1 and 3 by default; 2, an
** 8.6, with neither). */
static bool can_peer(int dev, int peer) { return dev != peer && ccmaj[dev] == ccmaj[peer]; }

/* May a kernel on device dev touch memory of allocation a? Host memory it
** may reach from any device, device memory from its own, and from a device
** that enabled peer access to its context; but a pool's blocks only from a
** device the pool granted access (cuMemPoolSetAccess): peer access does not
** cover pool memory (the Programming Guide's stream-ordered allocator,
** multi-GPU accessibility). */
static bool reachable(const alloc *a, int dev) {
  if (!device_accessible(a)) return false;
  if (on_host(a) || a->dev == dev) return true;
  if (a->kind == A_POOL) return a->pool->access[dev];
  return peer_on[dev][a->dev];
}

/* A copy engine of device dev given [p, p + n) (cuMemcpy*Async): another
** device's pool block the pool has not granted dev faults when the copy
** runs, as a kernel would. Other memory is the driver's to move (unified
** addressing). */
static bool copy_unmapped(const void *p, size_t n, int dev) {
  const alloc *a = find(p, n ? n : 1);
  return a != NULL && a->kind == A_POOL && a->dev != dev && !a->pool->access[dev];
}

/* lc_copy_strided, element by element; every element must lie in memory
** device dev can reach, else the context fails as on a GPU. */
static CUresult copy_strided(char *dst, char *src, const lc_strided_args *a, int dev) {
  if (a->ndim < 0 || a->ndim > LC_MAXDIM || a->itemsize <= 0) return CUDA_ERROR_ILLEGAL_ADDRESS;
  for (long long i = 0; i < a->n; i++) {
    long long rest = i, d = 0, s = 0;
    for (int k = a->ndim - 1; k >= 0; k--) {
      long long j = rest % a->shape[k];
      rest /= a->shape[k];
      d += j * a->dst_strides[k];
      s += j * a->src_strides[k];
    }
    const alloc *da = find(dst + d, (size_t)a->itemsize), *sa = find(src + s, (size_t)a->itemsize);
    if (!reachable(da, dev) || !reachable(sa, dev)) return CUDA_ERROR_ILLEGAL_ADDRESS;
    memcpy(dst + d, src + s, (size_t)a->itemsize);
  }
  return CUDA_SUCCESS;
}

/* lc_fill_strided, element by element, each element's address computed as
** the kernel does. Every element must lie in memory device dev can reach
** (else CUDA_ERROR_ILLEGAL_ADDRESS), every store of a->word bytes be
** aligned (else CUDA_ERROR_MISALIGNED_ADDRESS); with LC_FILL_INDEX32 the
** count and every byte offset must fit the kernel's 32-bit indices (else
** it would write elsewhere: CUDA_ERROR_ILLEGAL_ADDRESS). */
static CUresult fill_strided(char *dst, const lc_fill_args *a, int dev) {
  bool contiguous = a->flags & LC_FILL_CONTIGUOUS, i32 = a->flags & LC_FILL_INDEX32;
  if (a->itemsize <= 0 || a->itemsize > LC_FILL_VALUE_MAX || a->n < 0 ||
      (!contiguous && (a->ndim < 0 || a->ndim > LC_MAXDIM)) || (i32 && a->n > 2147483647LL))
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  if ((a->word != 1 && a->word != 2 && a->word != 4 && a->word != 8) || a->itemsize % a->word)
    return CUDA_ERROR_MISALIGNED_ADDRESS;
  for (long long i = 0; i < a->n; i++) {
    long long off = 0;
    if (contiguous) {
      off = i * a->itemsize;
    } else {
      long long rest = i;
      for (int k = a->ndim - 1; k > 0; k--) {
        off += rest % a->shape[k] * a->strides[k];
        rest /= a->shape[k];
      }
      if (a->ndim > 0) off += rest * a->strides[0];
    }
    if (i32 && (off < -2147483647LL - 1 || off + a->itemsize - 1 > 2147483647LL))
      return CUDA_ERROR_ILLEGAL_ADDRESS;
    char *p = dst + off;
    if ((uintptr_t)p % (uintptr_t)a->word != 0) return CUDA_ERROR_MISALIGNED_ADDRESS;
    const alloc *da = find(p, (size_t)a->itemsize);
    if (!reachable(da, dev)) return CUDA_ERROR_ILLEGAL_ADDRESS;
    memcpy(p, a->value, (size_t)a->itemsize);
  }
  return CUDA_SUCCESS;
}

static void copy_rows(char *d, size_t dp, size_t dh, const char *s, size_t sp, size_t sh,
                      size_t width, size_t h, size_t depth) {
  for (size_t k = 0; k < depth; k++)
    for (size_t j = 0; j < h; j++)
      memmove(d + (k * dh + j) * dp, s + (k * sh + j) * sp, width);
}

/* May a kernel on device *(int *)ud touch [p, p + n)? The allocation's
** range when it may (the interpreter remembers it). */
static int kernel_reach(void *ud, uint64_t p, size_t n, uint64_t *lo, uint64_t *hi) {
  int dev = *(const int *)ud;
  pthread_mutex_lock(&mu);
  const alloc *a = find((const void *)(uintptr_t)p, n);
  int ok = a != NULL && reachable(a, dev);
  if (ok) {
    *lo = (uint64_t)(uintptr_t)a->p;
    *hi = *lo + a->n;
  }
  pthread_mutex_unlock(&mu);
  return ok;
}

/* For the fake cuBLAS and NCCL: charge n bytes (delta > 0) to the current
** context's device, or give them back (delta < 0). 0, or
** CUDA_ERROR_OUT_OF_MEMORY when they do not fit beside what is used
** (idle pool blocks included, as on a GPU), or CUDA_ERROR_INVALID_CONTEXT
** with no context current. */
API int fake_cuda_charge(long long delta) {
  pthread_mutex_lock(&mu);
  int r = CUDA_SUCCESS;
  if (current == NULL) {
    r = CUDA_ERROR_INVALID_CONTEXT;
  } else if (delta < 0) {
    size_t n = (size_t)-delta;
    charged[curdev()] -= n < charged[curdev()] ? n : charged[curdev()];
  } else if (dev_used(curdev()) + (size_t)delta > devmem) {
    r = CUDA_ERROR_OUT_OF_MEMORY;
  } else {
    charged[curdev()] += (size_t)delta;
  }
  pthread_mutex_unlock(&mu);
  return r;
}

/* For the fake cuBLAS (spec/fake/fake_cublas.c), which computes on the host
** what a library kernel would: may a kernel of the current context's
** device touch [p, p + n)? 1 when it may; 0 without a context. */
API int fake_cuda_reachable(CUdeviceptr p, size_t n) {
  pthread_mutex_lock(&mu);
  const alloc *a = current ? find((const void *)(uintptr_t)p, n ? n : 1) : NULL;
  int ok = a != NULL && reachable(a, curdev());
  pthread_mutex_unlock(&mu);
  return ok;
}

/* ---- limits: each thread's stack, the printf FIFO -------------------------------
** What the driver does, and the fake with it (cuda.h 13.0, cuCtxSetLimit and
** CUDA_ERROR_HARDWARE_STACK_ERROR; the Programming Guide, "Formatted Output"):
** - CU_LIMIT_STACK_SIZE is each GPU thread's stack. The driver raises it for
**   a launch that needs more, as far as that is known before the kernel
**   runs (its frames and calls, recursion not counted), and keeps the raised
**   value. A thread that goes past it as it runs (recursion too deep) is
**   the hardware's stack error, CUDA_ERROR_HARDWARE_STACK_ERROR, sticky as
**   the manual says. A frame is the size ptxas gave it, from the cubin
**   (spec/fake/cubin.c; exec.c's comment on frames), and the stack known
**   before the kernel runs its EIATTR_MIN_STACK_SIZE; with PTX alone, the
**   interpreter's count. Setting it waits for the work queued before, and
**   applies to later launches. The stack is reserved for every thread the
**   device holds at once, so a raise, set or at a launch, the device has
**   no room for is CUDA_ERROR_OUT_OF_MEMORY, the limit as it was (the
**   manual lists that error). 1024 bytes at first: what current drivers
**   report (the manual gives no figure; no GPU was lent to check). A request
**   above 512 KiB, the most local memory a thread has (the guide's table of
**   technical specifications), is clamped to it, as the manual lets a
**   driver clamp (cuCtxGetLimit tells).
** - CU_LIMIT_PRINTF_FIFO_SIZE is the FIFO a kernel's printf writes its
**   arguments and metadata to, 1 MiB at first (the guide). Setting it once
**   a kernel calling printf was launched in the context is
**   CUDA_ERROR_INVALID_VALUE (the manual). The FIFO is circular: output past
**   its size overwrites the oldest (the guide; here whole records, the
**   oldest first). It reaches stdout only at a kernel launch (at its
**   start), at cuCtxSynchronize, cuStreamSynchronize and cuEventSynchronize,
**   at a blocking cuMemcpy, at a module's load or unload, and when the
**   context is destroyed (here: the primary context's last release); never
**   at exit (the guide). What one record takes is not documented: the fake
**   counts 16 bytes of header, the packed arguments and the %s strings
**   (spec/fake/ptx/exec.c, kernel_printf).
** - CU_LIMIT_MALLOC_HEAP_SIZE is kept and read back (8 MiB at first, the
**   guide); the fake has no device malloc. Other limits are
**   CUDA_ERROR_UNSUPPORTED_LIMIT here (luacuda sets none of them). */
#define DEFAULT_STACK ((size_t)1024)
#define MAX_STACK ((size_t)512 << 10)
#define DEFAULT_PRINTF_FIFO ((size_t)1 << 20)
#define DEFAULT_MALLOC_HEAP ((size_t)8 << 20)

static bool dev_attr(int d, CUdevice_attribute attr, int *v);

/* The threads device dev holds at once: its multiprocessors times the
** threads one holds (as resident_blocks counts them). */
static size_t resident_threads(int dev) {
  int sms = 0, per_sm = 0;
  dev_attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms);
  dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &per_sm);
  return (size_t)sms * (size_t)per_sm;
}

/* The device memory a stack of the given size takes beyond the default's
** (the fake's FAKE_CUDA_MEMORY is what the context leaves, its default
** stack reserved already): the excess for every thread the device holds. */
static size_t stack_reserved(int dev, size_t stack) {
  return stack > DEFAULT_STACK ? (stack - DEFAULT_STACK) * resident_threads(dev) : 0;
}

/* Do launches' local memory of `local` bytes and a stack limit of `stack`
** bytes fit device dev beside its other memory? (They share one
** reservation, local_held's.) */
static bool local_fits(int dev, size_t local, size_t stack) {
  return dev_used(dev) - local_held(dev) + max_size(local, stack_reserved(dev, stack)) <= devmem;
}

/* May the current context's stack become `stack` bytes, the device's other
** memory as it is? */
static bool stack_fits(size_t stack) {
  int d = curdev();
  return local_fits(d, local_reserved[d], stack);
}

static pthread_mutex_t fifo_mu = PTHREAD_MUTEX_INITIALIZER;   /* every context's FIFO */

/* The interpreter's printf: a record in the FIFO of the launch's context,
** the oldest ones overwritten to make room; one larger than the FIFO is lost. */
static void printf_record(void *ud, const char *text, size_t bytes) {
  struct CUctx_st *c = &ctxs[*(const int *)ud];
  size_t n = strlen(text) + 1;
  pthread_mutex_lock(&fifo_mu);
  while (c->head && c->fifo_used + bytes > c->fifo) {
    record *old = c->head;
    c->head = old->next;
    if (c->head == NULL) c->tail = NULL;
    c->fifo_used -= old->bytes;
    free(old);
  }
  record *r = bytes <= c->fifo ? malloc(sizeof *r + n) : NULL;
  if (r) {
    r->next = NULL;
    r->bytes = bytes;
    memcpy(r->text, text, n);
    if (c->tail) c->tail->next = r;
    else c->head = r;
    c->tail = r;
    c->fifo_used += bytes;
  }
  pthread_mutex_unlock(&fifo_mu);
}

/* The FIFO's records to stdout, at the points the driver delivers them. */
static void printf_flush(struct CUctx_st *c) {
  pthread_mutex_lock(&fifo_mu);
  record *r = c->head;
  c->head = c->tail = NULL;
  c->fifo_used = 0;
  while (r) {
    record *next = r->next;
    fputs(r->text, stdout);
    free(r);
    r = next;
  }
  fflush(stdout);
  pthread_mutex_unlock(&fifo_mu);
}

/* A user kernel, interpreted with the lock free (other streams go on);
** its failure is the context's sticky error, described on stderr as
** compute-sanitizer would. */
static void run_ptx(op *o) {
  pthread_mutex_unlock(&mu);
  ptx_host host = {.ud = &o->dev, .reach = kernel_reach, .out = stdout, .print = printf_record,
                   .stack = o->stack, .cooperative = o->cooperative};
  char why[1024];
  int r = ptx_launch(o->prog->m, o->entry, o->grid, o->block, o->shared, o->params, &host, why,
                     sizeof why);
  pthread_mutex_lock(&mu);
  if (r != PTX_OK) {
    if (sticky == CUDA_SUCCESS) sticky = (CUresult)r;
    fprintf(stderr, "fake_cuda: %s\n", why);
    if (trace) { fprintf(trace, "fault %d %s\n", r, why); fflush(trace); }
  }
}

/* Under mu, on the stream's worker (or inline). After a sticky error
** nothing runs any more. */
static void run_op(op *o) {
  if (sticky) return;
  switch (o->kind) {
    case OP_COPY: {
      if (o->unmapped) {                      /* the copy engine faults, as a kernel would */
        sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
        break;
      }
      size_t rows = (o->depth - 1) * (o->depth > 1 ? o->dheight : o->height) + o->height;
      size_t srows = (o->depth - 1) * (o->depth > 1 ? o->sheight : o->height) + o->height;
      if (retireds && (touches_retired(o, o->dst, (rows - 1) * o->dpitch + o->width) ||
                       (!o->staged && touches_retired(o, o->src, (srows - 1) * o->spitch + o->width)))) {
        fprintf(stderr, "fake_cuda: a copy touches host memory unpinned (cuMemFreeHost or "
                        "cuMemHostUnregister) before it ran\n");
        sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
        break;
      }
      const char *src = o->staged ? o->staged : o->src;
      copy_rows(o->dst, o->dpitch, o->dheight, src, o->spitch, o->sheight, o->width, o->height,
                o->depth);
      break;
    }
    case OP_MEMSET:
      for (size_t i = 0; i < o->n; i++) memcpy(o->dst + i * o->width, o->value, o->width);
      break;
    case OP_KERNEL: {
      CUresult r = copy_strided(o->dst, (char *)o->src, &o->args, o->dev);
      if (r != CUDA_SUCCESS) sticky = r;      /* reported by later calls */
      break;
    }
    case OP_FILL: {
      CUresult r = fill_strided(o->dst, &o->fill, o->dev);
      if (r != CUDA_SUCCESS) sticky = r;
      break;
    }
    case OP_FAULT:
      sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
      break;
    case OP_PTX:
      run_ptx(o);
      break;
    case OP_RECORD:
      if (o->event->rec.seq == o->seq && o->event->rec.s != NULL) {
        now_ms(&o->event->ms);
        o->event->ms_seq = o->seq;
      }
      break;
    case OP_HOSTFN:
      pthread_mutex_unlock(&mu);
      in_host_fn = true;           /* the driver may not be called from here */
      o->fn(o->ud);
      in_host_fn = false;
      pthread_mutex_lock(&mu);
      break;
    case OP_FREE: {
      /* poisoned, and the block goes back to its pool for anyone */
      alloc *a = o->freed;
      pool *q = a->pool;
      memset(a->p, POISON, a->n);
      for (block *b = q->idle; b; b = b->next)
        if (b->owner == a) { b->stream = NULL; b->owner = NULL; }
      q->used -= a->n;
      drop(a);
      if (q->destroyed) trim(q, 0);
      break;
    }
    default:
      break;
  }
}
/* ---- init and devices -------------------------------------------------------- */

/* FAKE_CUDA_STATS=path: at exit, a line "ptx_instructions N" appended to
** path, the PTX instructions the interpreter ran (bench/ptx.lua). */
static char stats_path[4096];
static void write_stats(void) {
  FILE *f = fopen(stats_path, "a");
  if (f == NULL) return;
  fprintf(f, "ptx_instructions %llu\n", ptx_instructions());
  fclose(f);
}

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
    run_inline = (e = getenv("FAKE_CUDA_SYNC")) && *e && strcmp(e, "0") != 0;
    trace_streams = (e = getenv("FAKE_CUDA_TRACE_STREAMS")) && *e && strcmp(e, "0") != 0;
    if ((e = getenv("FAKE_CUDA_DELAY_US"))) delay_us = atol(e);
    no_concurrent_managed = (e = getenv("FAKE_CUDA_CONCURRENT_MANAGED")) && strcmp(e, "0") == 0;
    no_cooperative = (e = getenv("FAKE_CUDA_COOPERATIVE")) && strcmp(e, "0") == 0;
    if ((e = getenv("FAKE_CUDA_REGS")) && atoi(e) > 0) user_regs = atoi(e) > 255 ? 255 : atoi(e);
    if ((e = getenv("FAKE_CUDA_FAIL")) && *e) {
      char code[16] = "";
      if (sscanf(e, "%63[^:]:%d:%15s", fail_fn, &fail_at, code) >= 2 && code[0])
        fail_code = atoi(code);
      if ((e = getenv("FAKE_CUDA_FAIL_FROM")) && *e) snprintf(fail_from, sizeof fail_from, "%s", e);
    }
    if ((e = getenv("FAKE_CUDA_TRACE")) && *e) trace = fopen(e, "a");
    if ((e = getenv("FAKE_CUDA_STATS")) && *e) {
      snprintf(stats_path, sizeof stats_path, "%s", e);
      atexit(write_stats);
    }
    for (int i = 0; i < MAXDEV; i++) {
      ctxs[i].dev = pools[i].dev = i;
      ctxs[i].legacy = new_stream(i, false, true);
      ctxs[i].stack = DEFAULT_STACK;
      ctxs[i].fifo = DEFAULT_PRINTF_FIFO;
      ctxs[i].heap = DEFAULT_MALLOC_HEAP;
    }
    initialized = true;
  }
  trace_line("%s\n", __func__);
  pthread_mutex_unlock(&mu);
  return CUDA_SUCCESS;
}

/* FAKE_CUDA_DRIVER_VERSION, else the header's: callable before cuInit. */
static int driver_version(void) {
  const char *e = getenv("FAKE_CUDA_DRIVER_VERSION");
  return e && atoi(e) > 0 ? atoi(e) : CUDA_VERSION;
}

API CUresult cuDriverGetVersion(int *v) {
  if (v == NULL) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&mu);
  trace_line("%s\n", __func__);
  pthread_mutex_unlock(&mu);
  *v = driver_version();
  return CUDA_SUCCESS;
}

/* The newest PTX ISA (90 for 9.0) a driver of version v (12040) takes:
** the PTX ISA's release notes. Newer than the table: anything. */
static int ptx_isa_limit(int v) {
  static const int table[][2] = {
    {11000, 70}, {11010, 71}, {11020, 72}, {11030, 73}, {11040, 74}, {11050, 75},
    {11060, 76}, {11070, 77}, {11080, 78}, {12000, 80}, {12010, 81}, {12020, 82},
    {12030, 83}, {12040, 84}, {12050, 85}, {12060, 85}, {12070, 86}, {12080, 87},
    {12090, 88}, {13000, 90}, {13010, 91},
  };
  int n = (int)(sizeof table / sizeof table[0]);
  if (v >= table[n - 1][0] + 10) return 1000;
  int limit = 65;                          /* CUDA 10.2 */
  for (int i = 0; i < n && table[i][0] <= v; i++) limit = table[i][1];
  return limit;
}

API CUresult cuGetErrorName(CUresult e, const char **s) {
  static const struct { CUresult r; const char *s; } names[] = {
    {0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"}, {101, "CUDA_ERROR_INVALID_DEVICE"},
    {200, "CUDA_ERROR_INVALID_IMAGE"}, {201, "CUDA_ERROR_INVALID_CONTEXT"},
    {220, "CUDA_ERROR_NVLINK_UNCORRECTABLE"}, {810, "CUDA_ERROR_MPS_CLIENT_TERMINATED"},
    {911, "CUDA_ERROR_EXTERNAL_DEVICE"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"}, {218, "CUDA_ERROR_INVALID_PTX"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
    {400, "CUDA_ERROR_INVALID_HANDLE"}, {500, "CUDA_ERROR_NOT_FOUND"},
    {600, "CUDA_ERROR_NOT_READY"}, {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"}, {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"},
    {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"}, {719, "CUDA_ERROR_LAUNCH_FAILED"},
    {710, "CUDA_ERROR_ASSERT"}, {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS"}, {714, "CUDA_ERROR_HARDWARE_STACK_ERROR"},
    {215, "CUDA_ERROR_UNSUPPORTED_LIMIT"},    /* the PTX interpreter's faults, the limits' */
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
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: *v = !no_cooperative; break;
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
  if (--ctxs[d].retains == 0) printf_flush(&ctxs[d]);   /* the context is destroyed */
  return leave(CUDA_SUCCESS);
}

static bool ctx_ok(CUcontext c) { return c >= ctxs && c < ctxs + ndev && c->retains > 0; }

/* The current context is per thread; a host program may change it. */
API CUresult cuCtxSetCurrent(CUcontext c) {
  ENTER(false);
  if (c != NULL && !ctx_ok(c)) return leave(CUDA_ERROR_INVALID_CONTEXT);
  current = c;
  return leave(CUDA_SUCCESS);
}

API CUresult cuCtxGetCurrent(CUcontext *c) {
  ENTER(false);
  *c = current;
  return leave(CUDA_SUCCESS);
}

API CUresult cuCtxGetDevice(CUdevice *d) {
  ENTER(true);
  if (d == NULL) return leave(CUDA_ERROR_INVALID_VALUE);
  *d = curdev();
  return leave(CUDA_SUCCESS);
}

/* A stack of one below the top is enough for a host program and luacuda:
** a deeper push is refused rather than modelled wrongly. */
static _Thread_local CUcontext below[8];
static _Thread_local int depth;

API CUresult cuCtxPushCurrent_v2(CUcontext c) {
  ENTER(false);
  if (!ctx_ok(c) || depth == 8) return leave(CUDA_ERROR_INVALID_VALUE);
  below[depth++] = current;
  current = c;
  return leave(CUDA_SUCCESS);
}

API CUresult cuCtxPopCurrent_v2(CUcontext *c) {
  ENTER(false);
  if (current == NULL) return leave(CUDA_ERROR_INVALID_CONTEXT);
  if (c) *c = current;
  current = depth > 0 ? below[--depth] : NULL;
  return leave(CUDA_SUCCESS);
}

/* ---- peer access ---------------------------------------------------------------- */

API CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer) {
  ENTER(false);
  if (dev < 0 || dev >= ndev || peer < 0 || peer >= ndev) return leave(CUDA_ERROR_INVALID_DEVICE);
  *can = can_peer(dev, peer);
  return leave(CUDA_SUCCESS);
}

/* As the manual orders it: no current context, an invalid peer or the
** current context itself; flags not 0; devices that cannot; already on. */
API CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags) {
  ENTER(true);
  if (!ctx_ok(peer) || peer == current) return leave(CUDA_ERROR_INVALID_CONTEXT);
  if (flags != 0) return leave(CUDA_ERROR_INVALID_VALUE);
  int from = curdev(), to = peer->dev;
  if (!can_peer(from, to)) return leave(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
  if (peer_on[from][to]) return leave(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
  peer_on[from][to] = true;
  return leave(CUDA_SUCCESS);
}

API CUresult cuCtxSynchronize(void) {
  ENTER(true);
  drain_device(curdev());
  printf_flush(current);
  settle();
  return leave(sticky ? sticky : CUDA_SUCCESS);
}

API CUresult cuCtxGetLimit(size_t *v, CUlimit limit) {
  ENTER(true);
  if (v == NULL) return leave(CUDA_ERROR_INVALID_VALUE);
  switch (limit) {
    case CU_LIMIT_STACK_SIZE: *v = current->stack; break;
    case CU_LIMIT_PRINTF_FIFO_SIZE: *v = current->fifo; break;
    case CU_LIMIT_MALLOC_HEAP_SIZE: *v = current->heap; break;
    default: return leave(CUDA_ERROR_UNSUPPORTED_LIMIT);
  }
  return leave(CUDA_SUCCESS);
}

API CUresult cuCtxSetLimit(CUlimit limit, size_t v) {
  ENTER(true);
  switch (limit) {
    case CU_LIMIT_STACK_SIZE:
      drain_device(curdev());          /* "the device will block until all preceding ... are complete" */
      if (v > MAX_STACK) v = MAX_STACK;
      if (!stack_fits(v)) return leave(CUDA_ERROR_OUT_OF_MEMORY);   /* the old limit stays */
      current->stack = v;
      break;
    case CU_LIMIT_PRINTF_FIFO_SIZE:
      if (current->printed) return leave(CUDA_ERROR_INVALID_VALUE);
      current->fifo = v;
      break;
    case CU_LIMIT_MALLOC_HEAP_SIZE: current->heap = v; break;
    default: return leave(CUDA_ERROR_UNSUPPORTED_LIMIT);
  }
  return leave(CUDA_SUCCESS);
}

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
  if (no_pools) return NULL;
  if (q >= pools && q < pools + ndev) return q;
  for (pool *m = made_pools; m; m = m->next)
    if (m == q) return m->destroyed ? NULL : m;
  return NULL;
}

/* A pool of device memory on one device: the only kind the driver makes
** with these properties (no export handles). */
API CUresult cuMemPoolCreate(CUmemoryPool *p, const CUmemPoolProps *props) {
  ENTER(false);
  if (no_pools) return leave(CUDA_ERROR_NOT_SUPPORTED);
  if (p == NULL || props == NULL || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
      props->location.type != CU_MEM_LOCATION_TYPE_DEVICE || props->location.id < 0 ||
      props->location.id >= ndev || props->handleTypes != CU_MEM_HANDLE_TYPE_NONE ||
      props->win32SecurityAttributes != NULL)
    return leave(CUDA_ERROR_INVALID_VALUE);
  pool *q = calloc(1, sizeof *q);
  q->dev = props->location.id;
  q->made = true;
  q->next = made_pools;
  made_pools = q;
  *p = (CUmemoryPool)q;
  return leave(CUDA_SUCCESS);
}

/* Idle blocks go at once, the rest as their frees run; a default pool
** cannot be destroyed. */
API CUresult cuMemPoolDestroy(CUmemoryPool p) {
  ENTER(false);
  pool *q = as_pool(p);
  if (q == NULL || !q->made) return leave(CUDA_ERROR_INVALID_VALUE);
  q->destroyed = true;
  trim(q, 0);
  return leave(CUDA_SUCCESS);
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

/* Idle blocks whose frees have run go back to the device, down to keep
** bytes reserved (never below what is in use). */
API CUresult cuMemPoolTrimTo(CUmemoryPool p, size_t keep) {
  ENTER(false);
  pool *q = as_pool(p);
  if (q == NULL) return leave(CUDA_ERROR_INVALID_VALUE);
  trim(q, keep);
  return leave(CUDA_SUCCESS);
}

/* Which other devices may touch the pool's blocks (kernels and copies of
** their contexts). Checked whole before any change: a device location in
** range; read-write or none (pools take no read-only access); the pool's
** own device keeps read-write; another device must be able to reach it
** (cuDeviceCanAccessPeer), else CUDA_ERROR_INVALID_DEVICE. */
API CUresult cuMemPoolSetAccess(CUmemoryPool p, const CUmemAccessDesc *map, size_t count) {
  ENTER(false);
  pool *q = as_pool(p);
  if (q == NULL || (map == NULL && count > 0)) return leave(CUDA_ERROR_INVALID_VALUE);
  for (size_t i = 0; i < count; i++) {
    int id = map[i].location.id;
    CUmemAccess_flags f = map[i].flags;
    if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || id < 0 || id >= ndev ||
        (f != CU_MEM_ACCESS_FLAGS_PROT_NONE && f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) ||
        (id == q->dev && f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
      return leave(CUDA_ERROR_INVALID_VALUE);
    if (id != q->dev && !can_peer(id, q->dev)) return leave(CUDA_ERROR_INVALID_DEVICE);
  }
  for (size_t i = 0; i < count; i++)
    if (map[i].location.id != q->dev)
      q->access[map[i].location.id] = map[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
  ENTER(true);
  *total = devmem;
  *free_bytes = devmem - dev_used(curdev());
  return leave(CUDA_SUCCESS);
}

/* Fresh device memory: its bytes are undefined on a GPU, here POISON, so
** that code reading memory it never wrote sees garbage, not zeros. */
static void *poisoned(size_t n) {
  void *p = malloc(n);
  if (p) memset(p, POISON, n);
  return p;
}

/* Room on the current device for n more bytes. */
static bool room(size_t n) { return dev_used(curdev()) + n <= devmem; }

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  ENTER(true);
  if (n == 0) return leave(CUDA_ERROR_INVALID_VALUE);
  if (!room(n)) return leave(CUDA_ERROR_OUT_OF_MEMORY);
  *p = (CUdeviceptr)(uintptr_t)add(poisoned(n), n, A_DEVICE, 0)->p;
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned flags) {
  ENTER(true);
  if (n == 0 || flags != CU_MEM_ATTACH_GLOBAL) return leave(CUDA_ERROR_INVALID_VALUE);
  if (!room(n)) return leave(CUDA_ERROR_OUT_OF_MEMORY);
  *p = (CUdeviceptr)(uintptr_t)add(poisoned(n), n, A_MANAGED, 0)->p;
  return leave(CUDA_SUCCESS);
}

/* cuMemFree synchronises the device first (the manual: it may), so that
** the memory is not in use; freed memory is poisoned before it goes. */
API CUresult cuMemFree_v2(CUdeviceptr p) {
  ENTER(true);
  alloc *a = find((void *)(uintptr_t)p, 0);
  if (a == NULL || a->p != (char *)(uintptr_t)p || (a->kind != A_DEVICE && a->kind != A_MANAGED))
    return leave(CUDA_ERROR_INVALID_VALUE);
  drain_device(a->dev);
  memset(a->p, POISON, a->n);
  free(a->p);
  drop(a);
  return leave(CUDA_SUCCESS);
}

/* From pool q: a block whose free has run, or one freed on s itself
** (stream order puts that free before this allocation's uses). Under mu. */
static CUresult pool_alloc(CUdeviceptr *p, size_t n, pool *q, CUstream h, const char *fn) {
  if (n == 0) return CUDA_ERROR_INVALID_VALUE;
  struct CUstream_st *s = stream_of(h);
  if (s == NULL) return CUDA_ERROR_INVALID_HANDLE;
  if (s->dev != q->dev) return CUDA_ERROR_INVALID_VALUE;
  trace_stream(fn, s);
  block **best = NULL;
  for (block **bp = &q->idle; *bp; bp = &(*bp)->next)
    if ((*bp)->cap >= n && ((*bp)->stream == NULL || (*bp)->stream == s) &&
        (best == NULL || (*bp)->cap < (*best)->cap))
      best = bp;
  char *mem;
  size_t cap;
  if (best) {
    block *b = *best;
    *best = b->next;
    mem = b->p;
    cap = b->cap;
    free(b);
  } else {
    if (dev_used(q->dev) + n > devmem) return CUDA_ERROR_OUT_OF_MEMORY;
    mem = poisoned(n);
    cap = n;
    q->reserved += n;
  }
  q->used += n;
  alloc *a = add(mem, n, A_POOL, 0);
  a->dev = q->dev;
  a->cap = cap;
  a->pool = q;
  *p = (CUdeviceptr)(uintptr_t)a->p;
  return CUDA_SUCCESS;
}

/* From the current device's default pool. */
API CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream h) {
  ENTER(true);
  if (no_pools) return leave(CUDA_ERROR_NOT_SUPPORTED);
  return leave(pool_alloc(p, n, &pools[curdev()], h, __func__));
}

API CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, CUmemoryPool mp, CUstream h) {
  ENTER(true);
  pool *q = as_pool(mp);
  if (q == NULL) return leave(CUDA_ERROR_INVALID_VALUE);
  return leave(pool_alloc(p, n, q, h, __func__));
}

/* A pool allocation starting at c whose free is not queued. */
static bool pool_block_at(const alloc *a, uintptr_t c, size_t n) {
  (void)n;
  return start_of(a) == c && a->kind == A_POOL && !a->freeing;
}

/* The block is idle at once for s's later allocations, and for everyone
** once the stream reaches the free, which poisons it. */
API CUresult cuMemFreeAsync(CUdeviceptr p, CUstream h) {
  ENTER(true);
  struct CUstream_st *s = stream_of(h);
  if (s == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  trace_stream(__func__, s);
  /* the live allocation at p */
  alloc *a = newest_meeting((uintptr_t)p, (uintptr_t)p + 1, pool_block_at, 0);
  if (a == NULL) return leave(CUDA_ERROR_INVALID_VALUE);
  a->freeing = true;
  block *b = calloc(1, sizeof *b);
  b->p = a->p;
  b->cap = a->cap;
  b->stream = s;
  b->owner = a;
  b->next = a->pool->idle;
  a->pool->idle = b;
  op *o = new_op(OP_FREE);
  o->freed = a;
  enqueue(s, o);
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

/* Page-locked memory goes at once: the driver's manual does not promise
** to wait for work queued on it (see retire). */
API CUresult cuMemFreeHost(void *p) {
  ENTER(true);
  alloc *a = find(p, 0);
  if (a == NULL || a->p != p || a->kind != A_HOST) return leave(CUDA_ERROR_INVALID_VALUE);
  retire(a, true);
  return leave(CUDA_SUCCESS);
}

/* Host memory the driver page-locked (allocated or registered). */
static bool page_locked(const alloc *a, uintptr_t lo, size_t n) {
  (void)lo, (void)n;
  return a->kind == A_HOST || a->kind == A_REGISTERED;
}

API CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags) {
  ENTER(true);
  if (n == 0 || (flags & ~3u)) return leave(CUDA_ERROR_INVALID_VALUE);
  uintptr_t lo = (uintptr_t)p, hi = n > UINTPTR_MAX - lo ? UINTPTR_MAX : lo + n;
  if (newest_meeting(lo, hi, page_locked, 0) != NULL)
    return leave(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  add(p, n, A_REGISTERED, flags);
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemHostUnregister(void *p) {
  ENTER(true);
  alloc *a = find(p, 0);
  if (a == NULL || a->p != p || a->kind != A_REGISTERED)
    return leave(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  retire(a, false);
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

/* Queue a copy of rows on s. A pageable source is read now (the driver
** stages it); a pageable destination is written before this returns (the
** driver waits). */
static void queue_copy(struct CUstream_st *s, op *o, bool src_pageable, bool dst_pageable) {
  if (src_pageable) {
    size_t span = ((o->depth - 1) * (o->sheight ? o->sheight : o->height) + (o->height - 1)) *
                      o->spitch + o->width;
    o->staged = malloc(span ? span : 1);
    memcpy(o->staged, o->src, span);
  }
  point at = enqueue(s, o);
  if (dst_pageable) wait_point(at);
}

/* Whether a copy's destination rows meet its source rows: undefined on a
** GPU (the copy engines promise no order), refused here. Each destination
** row is checked against each source slice's rows arithmetically. */
static bool copy_overlaps(const op *o) {
  uintptr_t d0 = (uintptr_t)o->dst, s0 = (uintptr_t)o->src;
  size_t w = o->width, h = o->height, dh = o->depth > 1 ? o->dheight : h,
         sh = o->depth > 1 ? o->sheight : h;
  size_t dspan = ((o->depth - 1) * dh + (h - 1)) * o->dpitch + w;
  size_t sspan = ((o->depth - 1) * sh + (h - 1)) * o->spitch + w;
  if (w == 0 || d0 + dspan <= s0 || s0 + sspan <= d0) return false;
  for (size_t z = 0; z < o->depth; z++)
    for (size_t y = 0; y < h; y++) {
      uintptr_t a = d0 + (z * dh + y) * o->dpitch;       /* [a, a + w) */
      for (size_t sz = 0; sz < o->depth; sz++) {
        uintptr_t base = s0 + sz * sh * o->spitch;       /* rows base + j * spitch */
        size_t lo;                                       /* the first row ending after a */
        if (a < base + w) lo = 0;
        else if (o->spitch == 0) lo = h;
        else lo = (a - base - w) / o->spitch + 1;
        if (lo < h && base + lo * o->spitch < a + w) return true;
      }
    }
  return false;
}

static op *copy_op(void *dst, const void *src, size_t n) {
  op *o = new_op(OP_COPY);
  o->dst = dst;
  o->src = src;
  o->width = o->dpitch = o->spitch = n;
  o->height = o->depth = 1;
  return o;
}

API CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h) {
  ENTER(true);
  struct CUstream_st *s = stream_of(h);
  if (s == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  trace_stream(__func__, s);
  if (!check_range(dst, n) || !check_range(src, n)) return leave(CUDA_ERROR_INVALID_VALUE);
  void *d = (void *)(uintptr_t)dst;
  const void *sp = (const void *)(uintptr_t)src;
  if (n) {
    op *o = copy_op(d, sp, n);
    if (copy_overlaps(o)) { free(o); return leave(CUDA_ERROR_INVALID_VALUE); }
    o->unmapped = copy_unmapped(d, n, s->dev) || copy_unmapped(sp, n, s->dev);
    queue_copy(s, o, pageable(sp, n), pageable(d, n));
  }
  return leave(CUDA_SUCCESS);
}

/* Between device memory of two contexts: each range must lie in device
** memory of its context's device (else CUDA_ERROR_INVALID_VALUE); no peer
** access is needed (the driver stages the copy where it has none). */
API CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                               size_t n, CUstream h) {
  ENTER(true);
  struct CUstream_st *s = stream_of(h);
  if (s == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  trace_stream(__func__, s);
  if (!ctx_ok(dctx) || !ctx_ok(sctx)) return leave(CUDA_ERROR_INVALID_CONTEXT);
  void *d = (void *)(uintptr_t)dst;
  const void *sp = (const void *)(uintptr_t)src;
  const alloc *da = find(d, n ? n : 1), *sa = find(sp, n ? n : 1);
  bool dev_d = da && (da->kind == A_DEVICE || da->kind == A_POOL) && da->dev == dctx->dev;
  bool dev_s = sa && (sa->kind == A_DEVICE || sa->kind == A_POOL) && sa->dev == sctx->dev;
  if (!dev_d || !dev_s) return leave(CUDA_ERROR_INVALID_VALUE);
  if (n) queue_copy(s, copy_op(d, sp, n), false, false);
  return leave(CUDA_SUCCESS);
}

/* The synchronous copies bench/gpu_driver.c (the C baseline) makes: on the
** legacy stream; to the host they return when done, from pageable host
** memory once it is staged. */
API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
  ENTER(true);
  if (!check_range(dst, n)) return leave(CUDA_ERROR_INVALID_VALUE);
  struct CUstream_st *s = current->legacy;
  point at = {NULL, 0};
  if (n) {
    bool staged = pageable(src, n);
    op *o = copy_op((void *)(uintptr_t)dst, src, n);
    if (copy_overlaps(o)) { free(o); return leave(CUDA_ERROR_INVALID_VALUE); }
    queue_copy(s, o, staged, false);
    at = (point){s, s->enqueued};
    if (!staged) wait_point(at);
  }
  printf_flush(current);
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
  ENTER(true);
  if (!check_range(src, n)) return leave(CUDA_ERROR_INVALID_VALUE);
  struct CUstream_st *s = current->legacy;
  if (n) {
    op *o = copy_op(dst, (const void *)(uintptr_t)src, n);
    if (copy_overlaps(o)) { free(o); return leave(CUDA_ERROR_INVALID_VALUE); }
    queue_copy(s, o, false, false);
    wait_point(last_of(s));
  }
  printf_flush(current);
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

/* The manual: on intra-device copies, cuMemcpy2D "may fail for pitches
** not computed by cuMemAllocPitch()". The fake fails them: between two
** allocations of device memory (device or pool) of one device, a copy of
** more than one row whose pitch is not a multiple of ALLOC_PITCH (what
** cuMemAllocPitch gives on current GPUs) is CUDA_ERROR_INVALID_VALUE. */
#define ALLOC_PITCH 512
static bool pitch_refused(const char *d, size_t dpitch, const char *s, size_t spitch,
                          size_t rows) {
  if (rows <= 1 || (dpitch % ALLOC_PITCH == 0 && spitch % ALLOC_PITCH == 0)) return false;
  alloc *a = find(d, 1), *b = find(s, 1);
  return a && b && (a->kind == A_DEVICE || a->kind == A_POOL) &&
         (b->kind == A_DEVICE || b->kind == A_POOL) && a->dev == b->dev;
}

static bool host_side(CUmemorytype t, const char *p, size_t width) {
  return t == CU_MEMORYTYPE_HOST && pageable(p, width);
}

API CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *c, CUstream h) {
  ENTER(true);
  struct CUstream_st *s = stream_of(h);
  if (s == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  trace_stream(__func__, s);
  char *d = side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, 0,
                 c->dstPitch, 0, c->WidthInBytes, c->Height, 1);
  char *src = side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY, 0,
                   c->srcPitch, 0, c->WidthInBytes, c->Height, 1);
  if (d == NULL || src == NULL) return leave(CUDA_ERROR_INVALID_VALUE);
  if (c->WidthInBytes == 0 || c->Height == 0) return leave(CUDA_SUCCESS);
  if (pitch_refused(d, c->dstPitch, src, c->srcPitch, c->Height))
    return leave(CUDA_ERROR_INVALID_VALUE);
  op *o = new_op(OP_COPY);
  o->dst = d;
  o->src = src;
  o->dpitch = c->dstPitch;
  o->spitch = c->srcPitch;
  o->width = c->WidthInBytes;
  o->height = c->Height;
  o->depth = 1;
  if (copy_overlaps(o)) { free(o); return leave(CUDA_ERROR_INVALID_VALUE); }
  o->unmapped = copy_unmapped(d, 1, s->dev) || copy_unmapped(src, 1, s->dev);
  queue_copy(s, o, host_side(c->srcMemoryType, src, c->WidthInBytes),
             host_side(c->dstMemoryType, d, c->WidthInBytes));
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *c, CUstream h) {
  ENTER(true);
  struct CUstream_st *s = stream_of(h);
  if (s == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  trace_stream(__func__, s);
  if (c->reserved0 || c->reserved1 || c->srcLOD || c->dstLOD ||
      (c->Depth > 1 && (c->srcHeight < c->Height || c->dstHeight < c->Height)))
    return leave(CUDA_ERROR_INVALID_VALUE);
  char *d = side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, c->dstZ,
                 c->dstPitch, c->dstHeight, c->WidthInBytes, c->Height, c->Depth);
  char *src = side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY,
                   c->srcZ, c->srcPitch, c->srcHeight, c->WidthInBytes, c->Height, c->Depth);
  if (d == NULL || src == NULL) return leave(CUDA_ERROR_INVALID_VALUE);
  if (c->WidthInBytes == 0 || c->Height == 0 || c->Depth == 0) return leave(CUDA_SUCCESS);
  if (pitch_refused(d, c->dstPitch, src, c->srcPitch, c->Height * c->Depth))
    return leave(CUDA_ERROR_INVALID_VALUE);
  op *o = new_op(OP_COPY);
  o->dst = d;
  o->src = src;
  o->dpitch = c->dstPitch;
  o->spitch = c->srcPitch;
  o->dheight = c->dstHeight;
  o->sheight = c->srcHeight;
  o->width = c->WidthInBytes;
  o->height = c->Height;
  o->depth = c->Depth;
  if (copy_overlaps(o)) { free(o); return leave(CUDA_ERROR_INVALID_VALUE); }
  o->unmapped = copy_unmapped(d, 1, s->dev) || copy_unmapped(src, 1, s->dev);
  queue_copy(s, o, host_side(c->srcMemoryType, src, c->WidthInBytes),
             host_side(c->dstMemoryType, d, c->WidthInBytes));
  return leave(CUDA_SUCCESS);
}

static CUresult memset_n(const char *fn, CUdeviceptr d, const void *v, size_t w, size_t n,
                         CUstream h) {
  struct CUstream_st *s = stream_of(h);
  if (s == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  trace_stream(fn, s);
  if (d % w) return leave(CUDA_ERROR_INVALID_VALUE);        /* misaligned */
  alloc *a = find((void *)(uintptr_t)d, n * w);
  if (!device_accessible(a)) return leave(CUDA_ERROR_INVALID_VALUE);
  op *o = new_op(OP_MEMSET);
  o->dst = (char *)(uintptr_t)d;
  o->n = n;
  o->width = w;
  memcpy(o->value, v, w);
  enqueue(s, o);
  return leave(CUDA_SUCCESS);
}

API CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  ENTER(true);
  return memset_n(__func__, d, &v, 1, n, s);
}
API CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) {
  ENTER(true);
  return memset_n(__func__, d, &v, 2, n, s);
}
API CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream s) {
  ENTER(true);
  return memset_n(__func__, d, &v, 4, n, s);
}

/* ---- streams and events ------------------------------------------------------------ */

API CUresult cuStreamCreate(CUstream *s, unsigned flags) {
  ENTER(true);
  if (flags > CU_STREAM_NON_BLOCKING) return leave(CUDA_ERROR_INVALID_VALUE);
  *s = new_stream(curdev(), flags == CU_STREAM_NON_BLOCKING, false);
  return leave(CUDA_SUCCESS);
}

API CUresult cuStreamGetFlags(CUstream h, unsigned *flags) {
  ENTER(true);
  struct CUstream_st *s = stream_of(h);
  if (s == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  *flags = s->nonblocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT;
  return leave(CUDA_SUCCESS);
}

/* The stream goes once its queued work is done (its worker then ends). */
API CUresult cuStreamDestroy_v2(CUstream h) {
  ENTER(true);
  struct CUstream_st *s = h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD
                              ? NULL : stream_of(h);
  if (s == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  s->alive = false;
  pthread_cond_broadcast(&progress);
  return leave(CUDA_SUCCESS);
}

/* Waiting for the legacy stream waits for what it follows too. */
API CUresult cuStreamSynchronize(CUstream h) {
  ENTER(true);
  struct CUstream_st *s = stream_of(h);
  if (s == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  if (s->legacy) {                      /* as an empty op queued there would */
    for (struct CUstream_st *t = streams; t; t = t->next)
      if (t->dev == s->dev && !t->nonblocking) wait_point(last_of(t));
  } else {
    wait_point(last_of(s));
  }
  printf_flush(current);
  settle();
  return leave(sticky ? sticky : CUDA_SUCCESS);
}

API CUresult cuStreamQuery(CUstream h) {
  ENTER(true);
  struct CUstream_st *s = stream_of(h);
  if (s == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  return leave(point_done(last_of(s)) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY);
}

static struct CUevent_st *event_of(CUevent e) {
  for (struct CUevent_st *t = events; t; t = t->next)
    if (t == e) return t->alive ? t : NULL;
  return NULL;
}

/* Work queued on s from now on waits for e's last record (none: no wait). */
API CUresult cuStreamWaitEvent(CUstream h, CUevent e, unsigned flags) {
  ENTER(true);
  struct CUstream_st *s = stream_of(h);
  struct CUevent_st *ev = event_of(e);
  if (s == NULL || ev == NULL || flags > 1) return leave(CUDA_ERROR_INVALID_HANDLE);
  trace_stream(__func__, s);
  if (ev->rec.s != NULL) {
    op *o = new_op(OP_NOTHING);
    add_dep(o, ev->rec);
    enqueue(s, o);
  }
  return leave(CUDA_SUCCESS);
}

API CUresult cuEventCreate(CUevent *e, unsigned flags) {
  ENTER(true);
  if (flags & ~0xfu) return leave(CUDA_ERROR_INVALID_VALUE);
  struct CUevent_st *t = calloc(1, sizeof *t);
  t->flags = flags;
  t->alive = true;
  t->next = events;
  events = t;
  *e = t;
  return leave(CUDA_SUCCESS);
}

/* Kept, marked dead: a record still queued may name it. */
API CUresult cuEventDestroy_v2(CUevent e) {
  ENTER(true);
  struct CUevent_st *ev = event_of(e);
  if (ev == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  ev->alive = false;
  return leave(CUDA_SUCCESS);
}

API CUresult cuEventRecord(CUevent e, CUstream h) {
  ENTER(true);
  struct CUevent_st *ev = event_of(e);
  struct CUstream_st *s = stream_of(h);
  if (ev == NULL || s == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  trace_stream(__func__, s);
  op *o = new_op(OP_RECORD);
  o->event = ev;
  ev->rec = (point){s, s->enqueued + 1};     /* the op's own point, known before it runs */
  enqueue(s, o);
  return leave(CUDA_SUCCESS);
}

API CUresult cuEventSynchronize(CUevent e) {
  ENTER(true);
  struct CUevent_st *ev = event_of(e);
  if (ev == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  wait_point(ev->rec);
  printf_flush(current);
  settle();
  return leave(sticky ? sticky : CUDA_SUCCESS);
}

API CUresult cuEventQuery(CUevent e) {
  ENTER(true);
  struct CUevent_st *ev = event_of(e);
  if (ev == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  return leave(point_done(ev->rec) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY);
}

API CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) {
  ENTER(true);
  struct CUevent_st *x = event_of(a), *y = event_of(b);
  if (x == NULL || y == NULL || x->rec.s == NULL || y->rec.s == NULL ||
      (x->flags & CU_EVENT_DISABLE_TIMING) || (y->flags & CU_EVENT_DISABLE_TIMING))
    return leave(CUDA_ERROR_INVALID_HANDLE);
  if (!point_done(x->rec) || !point_done(y->rec)) return leave(CUDA_ERROR_NOT_READY);
  *ms = (float)(y->ms - x->ms);
  return leave(CUDA_SUCCESS);
}

API CUresult cuLaunchHostFunc(CUstream h, CUhostFn fn, void *ud) {
  ENTER(true);
  struct CUstream_st *s = stream_of(h);
  if (s == NULL || fn == NULL) return leave(CUDA_ERROR_INVALID_VALUE);
  trace_stream(__func__, s);
  op *o = new_op(OP_HOSTFN);
  o->fn = fn;
  o->ud = ud;
  enqueue(s, o);
  return leave(CUDA_SUCCESS);
}
/* ---- modules ------------------------------------------------------------------ */

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
/* A kernel's limits: registers (FAKE_CUDA_REGS for user kernels), threads
** per block (.maxntid, and what the registers allow), shared memory. */
static void func_facts(struct CUfunc_st *f, int static_shared, int maxntid) {
  bool library = strncmp(f->e.name, "lc_", 3) == 0;
  f->nregs = library ? 32 : user_regs;
  f->static_shared = static_shared;
  if (maxntid > 0 && maxntid < f->max_threads) f->max_threads = maxntid;
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
  char *ver;
  int isa = (int)strtol(strstr(ptx, ".version") + 8, &ver, 10) * 10;
  if (*ver == '.') isa += atoi(ver + 1);
  int dv = driver_version();
  if (isa > ptx_isa_limit(dv)) {
    snprintf(log, loglen, "fake_cuda: PTX ISA %d.%d is newer than driver %d.%d takes", isa / 10,
             isa % 10, dv / 1000, dv % 1000 / 10);
    return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
  }
  const char *tg = strstr(ptx, ".target");
  int arch = atoi(tg + strcspn(tg, "0123456789"));
  if (arch > ccmaj[m->dev] * 10 + ccmin[m->dev]) {
    snprintf(log, loglen, "fake_cuda: PTX for sm_%d cannot run on a %d.%d device", arch,
             ccmaj[m->dev], ccmin[m->dev]);
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  }
  char why[512];
  ptx_module *pm = ptx_parse(ptx, why, sizeof why);
  if (pm == NULL) {
    snprintf(log, loglen, "fake_cuda: %s", why);
    return CUDA_ERROR_INVALID_PTX;
  }
  m->prog = calloc(1, sizeof *m->prog);
  m->prog->m = pm;
  m->prog->refs = 1;
  /* the module's variables, each an allocation of its device's */
  int nv = ptx_nvars(pm);
  m->globals = calloc((size_t)(nv ? nv : 1), sizeof *m->globals);
  for (int i = 0; i < nv; i++) {
    ptx_var_info v = ptx_var(pm, i);
    size_t align = v.align < 16 ? 16 : v.align, n = v.size ? v.size : 1;
    char *mem = aligned_alloc(align, (n + align - 1) / align * align);
    if (v.init) memcpy(mem, v.init, v.size);
    else memset(mem, 0, n);
    ptx_bind(pm, i, mem);
    alloc *g = add(mem, v.size, A_GLOBAL, 0);
    g->dev = m->dev;
    m->globals[m->nglobals++] = g;
  }
  ptx_bind_done(pm);
  for (int e = 0; e < ptx_nentries(pm); e++) {
    const char *name = ptx_entry_name(pm, e);
    if (name == NULL) continue;
    struct CUfunc_st *f = new_func(m);
    if (f == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
    snprintf(f->e.name, sizeof f->e.name, "%s", name);
    int np = ptx_entry_nparams(pm, e);
    if (np > 64) {
      snprintf(log, loglen, "fake_cuda: %s has %d parameters, more than the fake's 64", name, np);
      return CUDA_ERROR_INVALID_PTX;
    }
    f->e.nparams = np;
    for (int i = 0; i < np; i++) ptx_entry_param(pm, e, i, &f->e.offset[i], &f->e.size[i]);
    f->ptx_entry = e;
    f->local_bytes = ptx_entry_local_bytes(pm, e);
    func_facts(f, (int)ptx_entry_static_shared(pm, e), ptx_entry_maxntid(pm, e));
  }
  return CUDA_SUCCESS;
}

/* A cubin whose ELF spec/fake/cubin.c read (entry_sm: the SM a
** fatbinary's entry says it holds, or 0): its entries' names, from the
** ".text.<name>" section names, and its frame sizes; refused when its
** .note.nv.cuinfo (note version, virtual SM and toolkit version as
** 10 * major + minor: 2, 90, 130) names a toolkit of a newer major version
** than the driver's, and, as the driver refuses it, when it was built for
** an SM the device cannot run: a cubin for X.y runs on X.z devices with
** z >= y only. The SM is e_flags' second byte in the ELF ABI of OSABI 0x41
** (CUDA 12.8 and later: 0x5a for sm_90), its first before. */
static CUresult load_sections(struct CUmod_st *m, const cubin_elf *elf, int entry_sm, char *log,
                              size_t loglen) {
  const unsigned char *img = elf->img;   /* its 64-byte header was read */
  uint32_t eflags;
  memcpy(&eflags, img + 0x30, 4);
  int sm = (int)(img[7] == 0x41 ? (eflags >> 8) & 0xff : eflags & 0xff);
  if (entry_sm && sm != entry_sm) {   /* a fatbinary's entry says which it holds */
    snprintf(log, loglen, "fake_cuda: the fatbinary's entry for sm_%d holds a cubin for sm_%d",
             entry_sm, sm);
    return CUDA_ERROR_INVALID_IMAGE;
  }
  if (sm / 10 != ccmaj[m->dev] || sm % 10 > ccmin[m->dev]) {
    snprintf(log, loglen, "fake_cuda: a cubin for sm_%d cannot run on a %d.%d device", sm,
             ccmaj[m->dev], ccmin[m->dev]);
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  }
  for (unsigned i = 0; i < elf->nsections; i++) {
    const cubin_section *s = &elf->sections[i];
    unsigned toolkit;
    if (strcmp(s->name, ".note.nv.cuinfo") != 0) continue;
    if (cubin_cuinfo_toolkit(s, &toolkit) != 0) {
      snprintf(log, loglen, "fake_cuda: the cubin's .note.nv.cuinfo runs past its section");
      return CUDA_ERROR_INVALID_IMAGE;
    }
    int dv = driver_version();
    if ((int)toolkit / 10 > dv / 1000) {
      snprintf(log, loglen, "fake_cuda: a cubin of CUDA %u.%u is newer than driver %d.%d takes",
               toolkit / 10, toolkit % 10, dv / 1000, dv % 1000 / 10);
      return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    }
  }
  for (unsigned i = 0; i < elf->nsections; i++) {
    const char *nm = elf->sections[i].name;
    if (strncmp(nm, ".text.", 6) != 0) continue;
    struct CUfunc_st *f = new_func(m);
    if (f == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
    snprintf(f->e.name, sizeof f->e.name, "%s", nm + 6);
    f->e.nparams = -1;
    f->ptx_entry = -1;
    func_facts(f, 0, 0);
  }
  /* the frames ptxas sized: a cubin whose records run past their sections
  ** is refused, as a broken image */
  char why[256];
  if (cubin_frames_read(elf, &m->frames, why, sizeof why) != 0) {
    snprintf(log, loglen, "fake_cuda: %s", why);
    return CUDA_ERROR_INVALID_IMAGE;
  }
  return CUDA_SUCCESS;
}

/* A cubin of len bytes (SIZE_MAX: a cubin loaded alone, which carries no
** length: its ELF header's tables end it, spec/fake/cubin.c's
** cubin_extent), read by spec/fake/cubin.c's one ELF reader: a section
** table, a name or a section that runs past the image is a broken image,
** never a read past it. */
static CUresult load_cubin(struct CUmod_st *m, const unsigned char *img, size_t len,
                           int entry_sm, char *log, size_t loglen) {
  cubin_elf elf;
  char why[256];
  if (len == SIZE_MAX) len = cubin_extent(img);
  if (cubin_elf_read(img, len, &elf, why, sizeof why) != 0) {
    snprintf(log, loglen, "fake_cuda: %s", why);
    return CUDA_ERROR_INVALID_IMAGE;
  }
  CUresult r = load_sections(m, &elf, entry_sm, log, loglen);
  cubin_elf_free(&elf);
  return r;
}

/* Each kernel's stack as its cubin sizes it (spec/fake/cubin.c): its own
** frame (which is also the local memory a launch reserves), the device
** functions compiled into it, and the stack it needs before it runs. A
** kernel the cubin gives no frame keeps the interpreter's count. */
static CUresult apply_frames(struct CUmod_st *m) {
  ptx_module *pm = m->prog->m;
  int n = ptx_nfunctions(pm);
  size_t *frames = malloc((size_t)(n ? n : 1) * sizeof *frames);
  if (frames == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
  for (int i = 0; i < m->nfuncs; i++) {
    struct CUfunc_st *f = &m->funcs[i];
    const cubin_frame *k = NULL;
    for (int j = 0; j < m->frames.n && k == NULL; j++)
      if (m->frames.v[j].is_kernel && strcmp(m->frames.v[j].name, f->e.name) == 0)
        k = &m->frames.v[j];
    if (k == NULL) continue;
    memset(frames, 0, (size_t)n * sizeof *frames);   /* not in the cubin: inlined */
    frames[f->ptx_entry] = k->bytes;
    for (int j = 0; j < m->frames.n; j++) {
      const cubin_frame *c = &m->frames.v[j];
      int fn = ptx_function(pm, c->name);
      if (!c->is_kernel && fn >= 0 && (c->kernel[0] == '\0' || strcmp(c->kernel, k->name) == 0))
        frames[fn] = c->bytes;
    }
    if (ptx_entry_set_frames(pm, f->ptx_entry, frames, k->has_min_stack ? k->min_stack : k->bytes)) {
      free(frames);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    f->local_bytes = k->bytes;
  }
  free(frames);
  return CUDA_SUCCESS;
}

/* A fatbinary (src/base/fatbin.c writes the format down): as the driver
** does, the ELF entry for the device's SM (X.y on X.z, z >= y, the newest)
** is taken, and its ELF header must name that SM; with none, the newest PTX
** no newer than the device is JIT-compiled; with neither, or when the ELF
** is refused and no PTX is there to JIT, the image does not load. The fake
** runs PTX only: with the ELF taken, the PTX entry of the same image runs
** its kernels, whose entries must be the ELF's. Compressed entries are not
** read (CUDA_ERROR_INVALID_IMAGE). */
static uint64_t le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static CUresult load_fatbin(struct CUmod_st *m, const unsigned char *img, char *log,
                            size_t loglen) {
  uint64_t total = le(img + 8, 8), hdr = le(img + 6, 2);
  const unsigned char *elf = NULL, *ptx = NULL;
  int elf_sm = 0, ptx_sm = 0, dev_sm = ccmaj[m->dev] * 10 + ccmin[m->dev];
  size_t elf_size = 0;
  for (uint64_t at = 0; at < total;) {
    const unsigned char *e = img + hdr + at;
    uint64_t ehdr = le(e + 4, 4), size = le(e + 8, 8), flags = le(e + 40, 8);
    unsigned kind = (unsigned)le(e, 2);
    int sm = (int)le(e + 28, 4);
    if (ehdr < 64 || at + ehdr + size > total) {
      snprintf(log, loglen, "fake_cuda: a fatbinary entry runs past the image's %llu bytes",
               (unsigned long long)total);
      return CUDA_ERROR_INVALID_IMAGE;
    }
    if (flags & 0x8000) {
      snprintf(log, loglen, "fake_cuda: compressed fatbinary entries are not read");
      return CUDA_ERROR_INVALID_IMAGE;
    }
    const unsigned char *pay = e + ehdr;
    if (kind == 2 && sm / 10 == ccmaj[m->dev] && sm % 10 <= ccmin[m->dev] && sm > elf_sm) {
      elf = pay;
      elf_sm = sm;
      elf_size = (size_t)size;
    }
    if (kind == 1 && sm <= dev_sm && sm > ptx_sm) {
      if (size == 0 || memchr(pay, '\0', size) == NULL) {
        snprintf(log, loglen, "fake_cuda: a fatbinary's PTX entry is not NUL-ended");
        return CUDA_ERROR_INVALID_IMAGE;
      }
      ptx = pay;
      ptx_sm = sm;
    }
    at += ehdr + size;
  }
  if (elf == NULL && ptx == NULL) {
    snprintf(log, loglen, "fake_cuda: the fatbinary has no cubin for sm_%d and no PTX to JIT "
             "for it", dev_sm);
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  }
  if (elf) {
    if (elf_size < 4 || memcmp(elf, "\177ELF", 4) != 0) {
      snprintf(log, loglen, "fake_cuda: the fatbinary's ELF entry for sm_%d is not an ELF", elf_sm);
      return CUDA_ERROR_INVALID_IMAGE;
    }
    CUresult r = load_cubin(m, elf, elf_size, elf_sm, log, loglen);
    /* an image whose entry lies about its ELF is broken, not JIT-able */
    if (r != CUDA_SUCCESS && (ptx == NULL || r == CUDA_ERROR_INVALID_IMAGE)) return r;
    if (r == CUDA_SUCCESS && ptx == NULL) return CUDA_SUCCESS;   /* loads; its kernels do not run */
    if (r != CUDA_SUCCESS) {   /* the driver JITs the PTX instead */
      m->nfuncs = 0;
      cubin_frames_free(&m->frames);
      elf = NULL;
    }
  }
  /* the kernels the ELF has, to compare with the PTX's */
  int nelf = elf ? m->nfuncs : 0;
  char (*names)[128] = nelf ? malloc((size_t)nelf * sizeof *names) : NULL;
  for (int i = 0; i < nelf; i++) memcpy(names[i], m->funcs[i].e.name, sizeof names[i]);
  m->nfuncs = 0;
  CUresult r = load_ptx(m, (const char *)ptx, log, loglen);
  /* every PTX entry is compiled in the ELF (which may hold more: device
  ** functions not inlined have their own .text sections) */
  for (int j = 0; r == CUDA_SUCCESS && elf && j < m->nfuncs; j++) {
    bool found = false;
    for (int i = 0; i < nelf && !found; i++) found = strcmp(names[i], m->funcs[j].e.name) == 0;
    if (!found) {
      snprintf(log, loglen, "fake_cuda: the fatbinary's PTX has kernel %s, its cubin does not",
               m->funcs[j].e.name);
      r = CUDA_ERROR_INVALID_IMAGE;
    }
  }
  free(names);
  if (r == CUDA_SUCCESS && elf) r = apply_frames(m);
  return r;
}

/* A launch queued from a module keeps its program until it has run. */
static void program_release(program *p) {
  if (p && --p->refs == 0) {
    ptx_free(p->m);
    free(p);
  }
}

static void module_free(struct CUmod_st *m) {
  charged[m->dev] -= m->charged;
  for (int i = 0; i < m->nglobals; i++) {
    free(m->globals[i]->p);
    drop(m->globals[i]);
  }
  free(m->globals);
  program_release(m->prog);
  free(m->funcs);
  cubin_frames_free(&m->frames);
  free(m);
}

/* The device memory a loaded module takes: its image (a PTX's text, a
** cubin's ELF up to its section headers) and its variables. */
static size_t module_bytes(const struct CUmod_st *m, const unsigned char *img) {
  size_t n;
  if (memcmp(img, "\177ELF", 4) == 0) {
    uint64_t shoff;
    uint16_t shentsize, shnum;
    memcpy(&shoff, img + 0x28, 8);
    memcpy(&shentsize, img + 0x3a, 2);
    memcpy(&shnum, img + 0x3c, 2);
    n = (size_t)shoff + (size_t)shnum * shentsize;
  } else {
    n = strlen((const char *)img) + 1;
  }
  for (int i = 0; i < m->nglobals; i++) n += m->globals[i]->n;
  return n;
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
  printf_flush(current);
  struct CUmod_st *m = calloc(1, sizeof *m);
  m->dev = curdev();
  CUresult r = CUDA_SUCCESS;
  if (memcmp(image, "\177ELF", 4) == 0) r = load_cubin(m, image, SIZE_MAX, 0, log, loglen);
  else if (le(image, 4) == 0xBA55ED50u) r = load_fatbin(m, image, log, loglen);
  else r = load_ptx(m, image, log, loglen);
  if (r == CUDA_SUCCESS) {
    /* the image (the code a GPU keeps) and the variables take device memory */
    size_t n = module_bytes(m, image);
    if (dev_used(m->dev) + n > devmem) r = CUDA_ERROR_OUT_OF_MEMORY;
    else charged[m->dev] += m->charged = n;
  }
  if (r != CUDA_SUCCESS) {
    module_free(m);
    return leave(r);
  }
  *mod = m;
  return leave(CUDA_SUCCESS);
}

API CUresult cuModuleUnload(CUmodule m) {
  ENTER(true);
  printf_flush(current);
  module_free(m);
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
    if (strcmp(ptx_var(m->prog->m, i).name, name) == 0) {
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

/* Blocks of f of the given threads and dynamic shared memory that one
** multiprocessor holds at once, as an H100 (or the 8.6 part) computes it:
** threads, blocks, registers (allocated 256 per warp) and shared memory
** (1 KiB reserved per block) per multiprocessor. */
static int resident_blocks(struct CUfunc_st *f, int threads, size_t dynamic) {
  int d = f->mod->dev;
  bool ga = ccmaj[d] == 8 && ccmin[d] == 6;
  if (threads < 1 || threads > f->max_threads) return 0;
  int warps = (threads + 31) / 32, n = ga ? 16 : 32, per_sm = 0;
  dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &per_sm);
  int by_threads = per_sm / 32 / warps;
  int by_regs = 65536 / ((f->nregs * 32 + 255) / 256 * 256) / warps;
  size_t by_shared = (ga ? 102400u : 233472u) / ((size_t)f->static_shared + dynamic + 1024);
  if (by_threads < n) n = by_threads;
  if (by_regs < n) n = by_regs;
  if (by_shared < (size_t)n) n = (int)by_shared;
  return n;
}

API CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int threads,
                                                         size_t dynamic) {
  ENTER(true);
  if (f == NULL) return leave(CUDA_ERROR_INVALID_HANDLE);
  if (n == NULL) return leave(CUDA_ERROR_INVALID_VALUE);
  *n = resident_blocks(f, threads, dynamic);
  return leave(CUDA_SUCCESS);
}

static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shared, CUstream h, void **params,
                       void **extra, bool cooperative);

/* The parameters are read at the call, as the driver copies them; the
** library's copy and fill kernels then run on their stream. */
API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shared, CUstream h,
                            void **params, void **extra) {
  ENTER(true);
  printf_flush(current);   /* the driver delivers earlier kernels' printf at a launch */
  return leave(launch(f, gx, gy, gz, bx, by, bz, shared, h, params, extra, false));
}

/* Every block at once, so that they may wait for each other (this_grid().sync()):
** a grid larger than the device holds at once is
** CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE. The interpreter runs each block
** on a thread of its own, and gives the kernel a grid barrier's workspace. */
API CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                       unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                       CUstream h, void **params) {
  ENTER(true);
  printf_flush(current);
  if (no_cooperative) return leave(CUDA_ERROR_NOT_SUPPORTED);
  if (f != NULL && f->mod->dev == curdev() && gx && gy && gz && bx && by && bz &&
      (unsigned long long)bx * by * bz <= LC_MAX_BLOCK_THREADS) {
    int sms = 0;
    dev_attr(f->mod->dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms);
    unsigned long long most =
        (unsigned long long)resident_blocks(f, (int)(bx * by * bz), shared) * (unsigned)sms;
    if ((unsigned long long)gx * gy * gz > most)
      return leave(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
  }
  return leave(launch(f, gx, gy, gz, bx, by, bz, shared, h, params, NULL, true));
}

/* A launch needs its kernel's local memory for every thread the device
** holds at once; the driver grows the reservation it keeps (never
** shrinking it here) and fails the launch when the device has no room. */
static bool reserve_local(const struct CUfunc_st *f) {
  int d = f->mod->dev;
  size_t need = f->local_bytes * resident_threads(d);
  if (need <= local_reserved[d]) return true;
  if (!local_fits(d, need, ctxs[d].stack)) return false;
  local_reserved[d] = need;
  return true;
}

/* Both launches, under the lock. */
static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shared, CUstream h, void **params,
                       void **extra, bool cooperative) {
  struct CUstream_st *s = stream_of(h);
  if (s == NULL) return CUDA_ERROR_INVALID_HANDLE;
  if (f == NULL || f->mod->dev != curdev()) return CUDA_ERROR_INVALID_HANDLE;
  if (!gx || !gy || !gz || !bx || !by || !bz || gx > LC_MAX_GRID_X || gy > LC_MAX_GRID_Y ||
      gz > LC_MAX_GRID_Z || bx > LC_MAX_BLOCK_X || by > LC_MAX_BLOCK_Y || bz > LC_MAX_BLOCK_Z ||
      (unsigned long long)bx * by * bz > LC_MAX_BLOCK_THREADS ||
      shared > (unsigned)f->max_dynamic || extra != NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if ((unsigned long long)bx * by * bz > (unsigned)f->max_threads)
    return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  const entry *e = &f->e;
  if (e->nparams > 0 && params == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (!reserve_local(f)) return CUDA_ERROR_OUT_OF_MEMORY;
  if (trace) {
    fprintf(trace, "launch%s %s %u,%u,%u %u,%u,%u %u", cooperative ? " cooperative" : "",
            e->name, gx, gy, gz, bx, by, bz, shared);
    for (int i = 0; i < e->nparams; i++) {
      fputc(' ', trace);
      for (size_t b = 0; b < e->size[i]; b++)
        fprintf(trace, "%02x", ((unsigned char *)params[i])[b]);
    }
    fputc('\n', trace);
    fflush(trace);
  }
  trace_stream(cooperative ? "cuLaunchCooperativeKernel" : "cuLaunchKernel", s);
  op *o = NULL;
  if (strcmp(e->name, "lc_copy_strided") == 0) {
    /* the PTX must declare what the backend packs */
    if (e->nparams >= 0 && (e->nparams != 3 || e->size[0] != 8 || e->size[1] != 8 ||
                            e->size[2] != sizeof(lc_strided_args)))
      return CUDA_ERROR_INVALID_VALUE;
    o = new_op(OP_KERNEL);
    memcpy(&o->dst, params[0], 8);
    memcpy(&o->src, params[1], 8);
    memcpy(&o->args, params[2], sizeof o->args);
  } else if (strcmp(e->name, "lc_fill_strided") == 0) {
    if (e->nparams >= 0 && (e->nparams != 2 || e->size[0] != 8 ||
                            e->size[1] != sizeof(lc_fill_args)))
      return CUDA_ERROR_INVALID_VALUE;
    o = new_op(OP_FILL);
    memcpy(&o->dst, params[0], 8);
    memcpy(&o->fill, params[1], sizeof o->fill);
  } else if (strncmp(e->name, "fake_fault", 10) == 0) {
    o = new_op(OP_FAULT);
  } else if (f->ptx_entry >= 0) {
    /* the stack the kernel is known to need raises the limit, which stays
    ** raised, when the device has room for it */
    size_t need = ptx_entry_stack_bytes(f->mod->prog->m, f->ptx_entry);
    if (need > current->stack) {
      if (!stack_fits(need)) return CUDA_ERROR_OUT_OF_MEMORY;
      current->stack = need;
    }
    /* run by the PTX interpreter, on its stream */
    o = new_op(OP_PTX);
    o->prog = f->mod->prog;
    o->prog->refs++;
    o->entry = f->ptx_entry;
    o->grid = (ptx_dims){gx, gy, gz};
    o->block = (ptx_dims){bx, by, bz};
    o->shared = shared;
    o->cooperative = cooperative;
    o->stack = current->stack;
    if (ptx_uses_printf(o->prog->m)) current->printed = true;
    size_t bytes = ptx_entry_param_bytes(o->prog->m, f->ptx_entry);
    o->params = calloc(1, bytes ? bytes : 1);
    for (int i = 0; i < e->nparams; i++) memcpy(o->params + e->offset[i], params[i], e->size[i]);
  } else {
    /* a cubin loaded alone: the fake runs PTX only, so it says so
    ** rather than run nothing */
    fprintf(stderr, "fake_cuda: kernel %s was loaded from a cubin alone, which the fake cannot "
            "run: load a fatbinary holding its PTX, or the PTX\n", e->name);
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  enqueue(s, o);
  return CUDA_SUCCESS;
}
