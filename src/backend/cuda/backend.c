/*
** backend_cuda: the CUDA driver API (opened by cuda_api.c). The device's
** primary context, made current on whichever thread calls in; device
** memory from the stream-ordered allocator (the default pool, with its
** release threshold raised so freed memory stays in the pool); streams and
** events as CUstream and CUevent, the default stream being the legacy one;
** modules compiled by NVRTC into cubins for the device's architecture and
** kept in the disk cache.
**
** Errors name the call and the CUDA_ERROR_* code. A sticky error (an
** illegal address, a failed launch...) leaves the context unusable: every
** later call fails saying so and naming the first error, and finalizers
** free nothing (the driver cannot).
*/
#include "cuda.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "deps.h"
#include "includes.h"
#include "common.h"
#include "kernels.h"
#include "ksource.h"
#include "nvrtc.h"
#include "hostreg.h"
#include "scan.h"

typedef struct device {
  CUdevice dev;
  CUcontext ctx;              /* retained at first use */
  CUmemoryPool pool;          /* NULL: no stream-ordered allocator */
  CUmodule library;           /* kernels/strided.cu, at first use */
  CUfunction copy_fn;
  int cc_major, cc_minor;
} device;

static device *devices;
static int ndevices;
static atomic_int current;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;     /* retains, library */
static _Thread_local CUcontext thread_ctx;                 /* current on this thread */
static atomic_size_t used;                                 /* bytes we allocated */
static lc_stream default_stream;           /* the legacy stream, set by lc_cuda_init */

/* ---- errors ------------------------------------------------------------ */

static atomic_bool broken;
static pthread_mutex_t broken_mu = PTHREAD_MUTEX_INITIALIZER;
static char first_error[LC_ERRLEN];

static bool sticky(CUresult r) {
  switch (r) {
    case 214: case 226:             /* ECC_UNCORRECTABLE, CONTAINED */
    case 700: case 702:             /* ILLEGAL_ADDRESS, LAUNCH_TIMEOUT */
    case 709: case 710:             /* CONTEXT_IS_DESTROYED, ASSERT */
    case 714: case 715: case 716:   /* HARDWARE_STACK_ERROR, ILLEGAL_INSTRUCTION, MISALIGNED_ADDRESS */
    case 717: case 718: case 719:   /* INVALID_ADDRESS_SPACE, INVALID_PC, LAUNCH_FAILED */
    case 721:                       /* TENSOR_MEMORY_LEAK */
      return true;
    default:
      return false;
  }
}

int lc_cuda_check(CUresult r, const char *call, char *err) {
  if (r == CUDA_SUCCESS) return LC_OK;
  char buf[32];
  const char *name = lc_cu_error_name(r, buf);
  if (err) snprintf(err, LC_ERRLEN, "%s: %s", call, name);
  if (sticky(r)) {
    pthread_mutex_lock(&broken_mu);
    if (!atomic_load(&broken)) {
      snprintf(first_error, sizeof first_error, "%s: %s", call, name);
      atomic_store(&broken, true);     /* after the message: readers see both */
    }
    pthread_mutex_unlock(&broken_mu);
  }
  return r == CUDA_ERROR_OUT_OF_MEMORY ? LC_ENOMEM : LC_EFAIL;
}

int lc_cuda_enter(char *err) {
  if (atomic_load(&broken)) {
    snprintf(err, LC_ERRLEN, "the CUDA context is unusable after an earlier error (%.300s); "
             "start a new process", first_error);
    return LC_EFAIL;
  }
  CUcontext ctx = devices[atomic_load(&current)].ctx;
  if (thread_ctx != ctx) {
    int rc = lc_cuda_check(lc_cu.CtxSetCurrent(ctx), "cuCtxSetCurrent", err);
    if (rc != LC_OK) return rc;
    thread_ctx = ctx;
  }
  return LC_OK;
}

/* For finalizers: may the driver be called? (never reports) */
static bool enter_quietly(void) {
  char err[LC_ERRLEN];
  return lc_cuda_enter(err) == LC_OK;
}

/* ---- deferred releases ------------------------------------------------------
** A release waits for the work queued before it: an event recorded on the
** legacy stream (which follows every blocking stream) marks that point, and
** the list is drained, in order, at the start of later calls. Host
** functions cannot be used: a release may call the driver. When nothing
** has been queued since the last full synchronize, release at once. */

typedef struct pending {
  struct pending *next;
  CUevent ev;
  int dev;                      /* whose context the event belongs to */
  void (*release)(void *);
  void *ud;
} pending;

static pthread_mutex_t pend_mu = PTHREAD_MUTEX_INITIALIZER;
static pending *phead, **ptail = &phead;
static atomic_int npending;
/* Drained records keep their events for the next release: creating an
** event per free would cost a driver call pair each. Under pend_mu. */
static pending *spare;
static int nspare;
enum { MAX_SPARE = 64 };
static atomic_uint_fast64_t queued_count, settled_count;

void lc_cuda_queued(void) { atomic_fetch_add(&queued_count, 1); }

/* Everything counted up to g is done. */
static void settle(uint_fast64_t g) {
  uint_fast64_t s = atomic_load(&settled_count);
  while (s < g && !atomic_compare_exchange_weak(&settled_count, &s, g)) {}
}

/* Run the releases whose events have completed (all of them once the
** context is unusable: nothing is running any more). Callers have entered
** the context, or found it broken. */
static void drain(void) {
  if (atomic_load(&npending) == 0) return;
  pending *ready = NULL, **rt = &ready;
  pthread_mutex_lock(&pend_mu);
  while (phead) {
    if (!atomic_load(&broken)) {
      CUresult r = lc_cu.EventQuery(phead->ev);
      if (r == CUDA_ERROR_NOT_READY) break;
      lc_cuda_check(r, "cuEventQuery", NULL);     /* a sticky error marks the context */
    }
    pending *p = phead;
    phead = p->next;
    atomic_fetch_sub(&npending, 1);
    *rt = p;
    rt = &p->next;
  }
  if (phead == NULL) ptail = &phead;
  pthread_mutex_unlock(&pend_mu);
  while (ready) {      /* outside the lock: a release may defer again */
    pending *p = ready;
    ready = p->next;
    p->release(p->ud);
    if (atomic_load(&broken)) {          /* the driver may not be called */
      free(p);
      continue;
    }
    pthread_mutex_lock(&pend_mu);
    bool keep = nspare < MAX_SPARE;
    if (keep) {
      p->next = spare;
      spare = p;
      nspare++;
    }
    pthread_mutex_unlock(&pend_mu);
    if (!keep) {
      lc_cu.EventDestroy(p->ev);
      free(p);
    }
  }
}

/* A record with an event of the current device, from the spares when
** there is one. */
static pending *pending_new(void) {
  int dev = atomic_load(&current);
  pthread_mutex_lock(&pend_mu);
  pending *p = spare && spare->dev == dev ? spare : NULL;
  if (p) {
    spare = p->next;
    nspare--;
  }
  pthread_mutex_unlock(&pend_mu);
  if (p) return p;
  p = malloc(sizeof *p);
  if (p && lc_cu.EventCreate(&p->ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
    free(p);
    p = NULL;
  }
  if (p) p->dev = dev;
  return p;
}

static void cuda_defer(void (*release)(void *), void *ud) {
  if (!enter_quietly()) {            /* nothing runs on a broken context */
    drain();
    release(ud);
    return;
  }
  drain();
  if (atomic_load(&settled_count) >= atomic_load(&queued_count)) {
    release(ud);
    return;
  }
  pending *p = pending_new();
  bool ok = p != NULL;
  if (ok && lc_cu.EventRecord(p->ev, LC_CU_STREAM_LEGACY) != CUDA_SUCCESS) {
    lc_cu.EventDestroy(p->ev);
    ok = false;
  }
  if (!ok) {                         /* waiting is the safe fallback */
    free(p);
    lc_cu.CtxSynchronize();
    release(ud);
    return;
  }
  p->release = release;
  p->ud = ud;
  p->next = NULL;
  pthread_mutex_lock(&pend_mu);
  *ptail = p;
  ptail = &p->next;
  atomic_fetch_add(&npending, 1);
  pthread_mutex_unlock(&pend_mu);
}

int lc_cuda_synchronize(char *err) {
  char local[LC_ERRLEN];
  int rc = lc_cuda_enter(err ? err : local);
  if (rc != LC_OK) {
    drain();
    return err ? rc : LC_OK;
  }
  uint_fast64_t g = atomic_load(&queued_count);
  CUresult r = lc_cu.CtxSynchronize();
  if (r == CUDA_SUCCESS) settle(g);
  rc = lc_cuda_check(r, "cuCtxSynchronize", err ? err : local);
  drain();
  return err ? rc : LC_OK;
}

int lc_cuda_temp_alloc(size_t n, CUstream st, CUdeviceptr *p, char *err) {
  if (devices[atomic_load(&current)].pool)
    return lc_cuda_check(lc_cu.MemAllocAsync(p, n ? n : 1, st), "cuMemAllocAsync", err);
  return lc_cuda_check(lc_cu.MemAlloc(p, n ? n : 1), "cuMemAlloc", err);
}

static void free_now(void *ud) {
  if (enter_quietly()) lc_cu.MemFree(lc_cuda_ptr(ud));
}

void lc_cuda_temp_free(CUdeviceptr p, CUstream st) {
  if (devices[atomic_load(&current)].pool) lc_cu.MemFreeAsync(p, st);
  else cuda_defer(free_now, (void *)(uintptr_t)p);
}

int lc_cuda_finish(CUresult r, const char *call, const lc_stream *s, char *err) {
  int rc = lc_cuda_check(r, call, err);
  if (rc != LC_OK) return rc;
  if (s != NULL) {
    lc_cuda_queued();
    return LC_OK;
  }
  return lc_cuda_check(lc_cu.StreamSynchronize(LC_CU_STREAM_LEGACY), "cuStreamSynchronize", err);
}

/* ---- devices ------------------------------------------------------------------ */

/* Retain device i's primary context and set up its pool (under mu). */
static int activate(int i, char *err) {
  device *d = &devices[i];
  if (d->ctx) return LC_OK;
  CUcontext ctx;
  int rc = lc_cuda_check(lc_cu.DevicePrimaryCtxRetain(&ctx, d->dev), "cuDevicePrimaryCtxRetain", err);
  if (rc == LC_OK) rc = lc_cuda_check(lc_cu.CtxSetCurrent(ctx), "cuCtxSetCurrent", err);
  int uva = 0, pools = 0;
  if (rc == LC_OK)
    rc = lc_cuda_check(lc_cu.DeviceGetAttribute(&uva, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING,
                                                d->dev), "cuDeviceGetAttribute", err);
  if (rc == LC_OK && !uva) {
    /* an array has one address for the host and the kernels */
    snprintf(err, LC_ERRLEN, "device %d has no unified addressing", i + 1);
    rc = LC_ENOTSUP;
  }
  if (rc != LC_OK) return rc;
  thread_ctx = ctx;
  if (lc_cu.DeviceGetAttribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, d->dev) ==
          CUDA_SUCCESS && pools &&
      lc_cu.DeviceGetDefaultMemPool(&d->pool, d->dev) == CUDA_SUCCESS) {
    /* keep freed memory in the pool: allocation then costs microseconds */
    uint64_t threshold = UINT64_MAX;
    if (lc_cu.MemPoolSetAttribute(d->pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold) !=
        CUDA_SUCCESS)
      d->pool = NULL;
  } else {
    d->pool = NULL;
  }
  d->ctx = ctx;
  return LC_OK;
}

int lc_cuda_init(char *why, size_t len) {
  char err[LC_ERRLEN];
  if (lc_cu_load(err) != 0) {
    snprintf(why, len, "%s", err);
    return -1;
  }
  CUresult r = lc_cu.Init(0);
  if (r != CUDA_SUCCESS) {
    char buf[32];
    snprintf(why, len, "cuInit: %s%s", lc_cu_error_name(r, buf),
             r == CUDA_ERROR_STUB_LIBRARY ? " (the CUDA toolkit's stub library, not a driver)" :
             r == CUDA_ERROR_NO_DEVICE ? " (no CUDA device)" : "");
    return -1;
  }
  int n = 0;
  if (lc_cuda_check(lc_cu.DeviceGetCount(&n), "cuDeviceGetCount", err) != LC_OK) {
    snprintf(why, len, "%s", err);
    return -1;
  }
  if (n <= 0) {
    snprintf(why, len, "the CUDA driver sees no device");
    return -1;
  }
  devices = calloc((size_t)n, sizeof *devices);
  if (devices == NULL) {
    snprintf(why, len, "out of host memory");
    return -1;
  }
  for (int i = 0; i < n; i++) {
    device *d = &devices[i];
    if (lc_cuda_check(lc_cu.DeviceGet(&d->dev, i), "cuDeviceGet", err) != LC_OK ||
        lc_cuda_check(lc_cu.DeviceGetAttribute(&d->cc_major,
                        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev),
                      "cuDeviceGetAttribute", err) != LC_OK ||
        lc_cuda_check(lc_cu.DeviceGetAttribute(&d->cc_minor,
                        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev),
                      "cuDeviceGetAttribute", err) != LC_OK) {
      snprintf(why, len, "%s", err);
      return -1;
    }
  }
  ndevices = n;
  default_stream.s = LC_CU_STREAM_LEGACY;
  if (activate(0, err) != LC_OK) {
    snprintf(why, len, "%s", err);
    return -1;
  }
  return 0;
}

static int cuda_device_count(void) { return ndevices; }
static int cuda_current_device(void) { return atomic_load(&current); }

static int cuda_device_info(int i, lc_device_info *info, char *err) {
  if (i < 0 || i >= ndevices) {
    snprintf(err, LC_ERRLEN, "no device %d (there are %d)", i + 1, ndevices);
    return LC_EFAIL;
  }
  const device *d = &devices[i];
  int sms = 0;
  int rc = lc_cuda_check(lc_cu.DeviceGetName(info->name, (int)sizeof info->name, d->dev),
                         "cuDeviceGetName", err);
  if (rc == LC_OK)
    rc = lc_cuda_check(lc_cu.DeviceTotalMem(&info->memory, d->dev), "cuDeviceTotalMem", err);
  if (rc == LC_OK)
    rc = lc_cuda_check(lc_cu.DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                                d->dev), "cuDeviceGetAttribute", err);
  info->name[sizeof info->name - 1] = '\0';
  info->cc_major = d->cc_major;
  info->cc_minor = d->cc_minor;
  info->multiprocessors = sms;
  return rc;
}

static int cuda_select_device(int i, char *err) {
  if (i < 0 || i >= ndevices) {
    snprintf(err, LC_ERRLEN, "no device %d (there %s %d)", i + 1, ndevices == 1 ? "is" : "are",
             ndevices);
    return LC_EFAIL;
  }
  pthread_mutex_lock(&mu);
  int rc = activate(i, err);
  if (rc == LC_OK) atomic_store(&current, i);
  pthread_mutex_unlock(&mu);
  return rc;
}

/* ---- memory --------------------------------------------------------------- */


static int cuda_alloc(lc_kind kind, size_t nbytes, unsigned flags, void **ptr, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  drain();
  size_t n = nbytes ? nbytes : 1;        /* the driver refuses empty blocks */
  const device *d = &devices[atomic_load(&current)];
  CUdeviceptr p = 0;
  if (kind == LC_DEVICE && d->pool) {
    rc = lc_cuda_check(lc_cu.MemAllocAsync(&p, n, LC_CU_STREAM_LEGACY), "cuMemAllocAsync", err);
  } else if (kind == LC_DEVICE) {
    rc = lc_cuda_check(lc_cu.MemAlloc(&p, n), "cuMemAlloc", err);
  } else if (kind == LC_MANAGED) {
    rc = lc_cuda_check(lc_cu.MemAllocManaged(&p, n, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged",
                       err);
  } else if (lc_kind_page_locked(kind)) {
    unsigned f = (flags & LC_ALLOC_PORTABLE ? CU_MEMHOSTALLOC_PORTABLE : 0) |
                 (flags & LC_ALLOC_WRITECOMBINED ? CU_MEMHOSTALLOC_WRITECOMBINED : 0) |
                 (kind == LC_MAPPED ? CU_MEMHOSTALLOC_DEVICEMAP : 0);
    void *h = NULL;
    rc = lc_cuda_check(lc_cu.MemHostAlloc(&h, n, f), "cuMemHostAlloc", err);
    if (rc == LC_OK) {
      /* the flags are kept for host_flags: the driver's own answer depends
      ** on unified addressing */
      unsigned lf = kind == LC_MAPPED ? flags | LC_ALLOC_DEVICEMAP : flags;
      rc = lc_hostreg_add_allocated(h, n, lf, err);
      if (rc != LC_OK) lc_cu.MemFreeHost(h);
    }
    p = lc_cuda_ptr(h);
  } else {
    snprintf(err, LC_ERRLEN, "the cuda backend does not allocate %s memory", lc_kind_names[kind]);
    return LC_EFAIL;
  }
  if (rc != LC_OK) return rc;
  if (lc_kind_on_device(kind)) atomic_fetch_add(&used, n);
  *ptr = (void *)(uintptr_t)p;
  return LC_OK;
}

static void cuda_free(lc_kind kind, void *ptr, size_t nbytes) {
  if (lc_kind_on_device(kind)) atomic_fetch_sub(&used, nbytes ? nbytes : 1);
  if (lc_kind_page_locked(kind)) lc_hostreg_remove_allocated(ptr);
  if (!enter_quietly()) return;          /* a broken context frees nothing */
  if (kind == LC_DEVICE && devices[atomic_load(&current)].pool)
    lc_cu.MemFreeAsync(lc_cuda_ptr(ptr), LC_CU_STREAM_LEGACY);
  else if (kind == LC_DEVICE || kind == LC_MANAGED)
    lc_cu.MemFree(lc_cuda_ptr(ptr));
  else if (lc_kind_page_locked(kind))
    lc_cu.MemFreeHost(ptr);
}

/* cuMemFreeAsync on the legacy stream runs after the work queued before it */
static bool cuda_ordered_free(lc_kind kind) {
  return kind == LC_DEVICE && devices[atomic_load(&current)].pool != NULL;
}

static int cuda_mem_info(size_t *free_bytes, size_t *total, size_t *in_use) {
  char err[LC_ERRLEN];
  *free_bytes = *total = 0;
  *in_use = atomic_load(&used);
  if (lc_cuda_enter(err) != LC_OK) return LC_EFAIL;
  return lc_cuda_check(lc_cu.MemGetInfo(free_bytes, total), "cuMemGetInfo", NULL);
}

static int cuda_pool_info(size_t *reserved, size_t *in_use) {
  char err[LC_ERRLEN];
  *reserved = *in_use = 0;
  if (lc_cuda_enter(err) != LC_OK) return LC_EFAIL;
  CUmemoryPool pool = devices[atomic_load(&current)].pool;
  if (pool == NULL) return LC_ENOTSUP;
  uint64_t r = 0, u = 0;
  if (lc_cu.MemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &r) != CUDA_SUCCESS ||
      lc_cu.MemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &u) != CUDA_SUCCESS)
    return LC_EFAIL;
  *reserved = (size_t)r;
  *in_use = (size_t)u;
  return LC_OK;
}

/* Give the pool's unused memory back to the device; frees still queued
** return to the pool only when done, so wait for them first. */
static int cuda_trim_pool(char *err) {
  int rc = lc_cuda_synchronize(err);
  if (rc != LC_OK) return rc;
  CUmemoryPool pool = devices[atomic_load(&current)].pool;
  if (pool == NULL) return LC_OK;
  return lc_cuda_check(lc_cu.MemPoolTrimTo(pool, 0), "cuMemPoolTrimTo", err);
}

/* ---- page-locking memory allocated elsewhere ----------------------------- */

static int cuda_host_register(void *p, size_t n, unsigned flags, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  rc = lc_hostreg_register(p, n, flags, err);     /* checks flags and overlaps */
  if (rc != LC_OK) return rc;
  unsigned f = (flags & LC_ALLOC_PORTABLE ? CU_MEMHOSTREGISTER_PORTABLE : 0) |
               (flags & LC_ALLOC_DEVICEMAP ? CU_MEMHOSTREGISTER_DEVICEMAP : 0);
  rc = lc_cuda_check(lc_cu.MemHostRegister(p, n, f), "cuMemHostRegister", err);
  if (rc != LC_OK) {
    char ignored[LC_ERRLEN];
    lc_hostreg_unregister(p, ignored);
  }
  return rc;
}

static int cuda_host_unregister(void *p, char *err) {
  int rc = lc_hostreg_unregister(p, err);
  if (rc != LC_OK) return rc;
  if (!enter_quietly()) return LC_OK;      /* gone with the context */
  return lc_cuda_check(lc_cu.MemHostUnregister(p), "cuMemHostUnregister", err);
}

static int cuda_host_device_pointer(void *p, void **dev, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  CUdeviceptr d = 0;
  rc = lc_cuda_check(lc_cu.MemHostGetDevicePointer(&d, p, 0), "cuMemHostGetDevicePointer", err);
  if (rc == LC_OK) *dev = (void *)(uintptr_t)d;
  return rc;
}

/* ---- streams and events ------------------------------------------------------ */

static lc_stream *cuda_default_stream(void) { return &default_stream; }

/* The streams made here: a host program may hand one back (luacuda_tostream,
** then luacuda_setstream), and the wrap shares it, so that a script closing
** the stream's object does not destroy it under the host's slot. */
static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static lc_stream *owned_streams;

static int cuda_stream_create(lc_stream **out, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  lc_stream *s = malloc(sizeof *s);
  if (s == NULL) {
    snprintf(err, LC_ERRLEN, "out of host memory creating a stream");
    return LC_ENOMEM;
  }
  /* a blocking stream: ordered with the legacy default stream, as the
  ** interface's NULL stream and defer need */
  rc = lc_cuda_check(lc_cu.StreamCreate(&s->s, CU_STREAM_DEFAULT), "cuStreamCreate", err);
  if (rc != LC_OK) {
    free(s);
    return rc;
  }
  s->owned = true;
  s->refs = 1;
  pthread_mutex_lock(&streams_lock);
  s->next = owned_streams;
  owned_streams = s;
  pthread_mutex_unlock(&streams_lock);
  *out = s;
  return LC_OK;
}

/* Drop a reference to an owned stream; the driver destroys the stream once
** its queued work is done. */
static void cuda_stream_destroy(lc_stream *s) {
  if (s == &default_stream) return;
  pthread_mutex_lock(&streams_lock);
  bool last = --s->refs == 0;
  if (last) {
    lc_stream **p = &owned_streams;
    while (*p != s) p = &(*p)->next;
    *p = s->next;
  }
  pthread_mutex_unlock(&streams_lock);
  if (!last) return;
  if (enter_quietly()) lc_cu.StreamDestroy(s->s);
  free(s);
}

/* A host program's CUstream: one of ours, shared, or else a holder of the
** host's, which the host keeps owning. */
static int cuda_stream_wrap(void *native, lc_stream **out, char *err) {
  pthread_mutex_lock(&streams_lock);
  lc_stream *s = owned_streams;
  while (s && s->s != (CUstream)native) s = s->next;
  if (s) s->refs++;
  pthread_mutex_unlock(&streams_lock);
  if (s) {
    *out = s;
    return LC_OK;
  }
  s = malloc(sizeof *s);
  if (s == NULL) {
    snprintf(err, LC_ERRLEN, "out of host memory wrapping a stream");
    return LC_ENOMEM;
  }
  *s = (lc_stream){.s = (CUstream)native};
  *out = s;
  return LC_OK;
}

/* the holder may be named by work still queued: it goes after that work */
static void cuda_stream_unwrap(lc_stream *s) {
  if (s == &default_stream) return;
  if (s->owned) cuda_stream_destroy(s);
  else cuda_defer(free, s);
}

static void *cuda_stream_native(lc_stream *s) { return (void *)s->s; }

static int cuda_stream_synchronize(lc_stream *s, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  return lc_cuda_check(lc_cu.StreamSynchronize(s->s), "cuStreamSynchronize", err);
}

static int cuda_stream_query(lc_stream *s, bool *done, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  CUresult r = lc_cu.StreamQuery(s->s);
  *done = r != CUDA_ERROR_NOT_READY;
  return r == CUDA_ERROR_NOT_READY ? LC_OK : lc_cuda_check(r, "cuStreamQuery", err);
}

struct lc_event {
  CUevent e;
};

static int cuda_event_create(lc_event **out, bool timing, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  lc_event *e = calloc(1, sizeof *e);
  if (e == NULL) {
    snprintf(err, LC_ERRLEN, "out of host memory creating an event");
    return LC_ENOMEM;
  }
  rc = lc_cuda_check(lc_cu.EventCreate(&e->e, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING),
                     "cuEventCreate", err);
  if (rc != LC_OK) free(e);
  else *out = e;
  return rc;
}

/* The driver keeps a recorded event until its record has happened. */
static void cuda_event_destroy(lc_event *e) {
  if (enter_quietly()) lc_cu.EventDestroy(e->e);
  free(e);
}

static int cuda_event_record(lc_event *e, lc_stream *s, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  rc = lc_cuda_check(lc_cu.EventRecord(e->e, s->s), "cuEventRecord", err);
  if (rc == LC_OK) lc_cuda_queued();
  return rc;
}

static int cuda_event_wait(lc_event *e, lc_stream *s, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  return lc_cuda_check(lc_cu.StreamWaitEvent(s->s, e->e, 0), "cuStreamWaitEvent", err);
}

static int cuda_event_synchronize(lc_event *e, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  return lc_cuda_check(lc_cu.EventSynchronize(e->e), "cuEventSynchronize", err);
}

static int cuda_event_query(lc_event *e, bool *done, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  CUresult r = lc_cu.EventQuery(e->e);
  *done = r != CUDA_ERROR_NOT_READY;
  return r == CUDA_ERROR_NOT_READY ? LC_OK : lc_cuda_check(r, "cuEventQuery", err);
}

static int cuda_event_elapsed(lc_event *a, lc_event *b, float *ms, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  CUresult r = lc_cu.EventElapsedTime(ms, a->e, b->e);
  if (r == CUDA_ERROR_NOT_READY) {
    bool start_done = lc_cu.EventQuery(a->e) != CUDA_ERROR_NOT_READY;
    snprintf(err, LC_ERRLEN, "the %s event has not happened yet (synchronize it first)",
             start_done ? "end" : "start");
    return LC_ENOTREADY;
  }
  return lc_cuda_check(r, "cuEventElapsedTime", err);
}

/* ---- modules ------------------------------------------------------------------ */

/* The parameter sizes of a kernel got from the module (then -1), kept
** while the module is loaded. */
typedef struct param_sizes {
  struct param_sizes *next;
  long long sizes[];
} param_sizes;

struct lc_module {
  CUmodule m;
  param_sizes *sizes;        /* under mu */
};

/* LUACUDA_PTX=1 loads PTX (the driver JITs it) instead of cubins: for
** tools that read the PTX, such as the fake driver of the specs. */
static bool want_ptx(void) {
  static atomic_int cached = -1;
  int c = atomic_load_explicit(&cached, memory_order_relaxed);
  if (c < 0) {
    const char *v = getenv("LUACUDA_PTX");
    c = v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
    atomic_store_explicit(&cached, c, memory_order_relaxed);
  }
  return c;
}

/* Compile text for the current device into a cubin (or take it from the
** disk cache, keyed by the text, the options and NVRTC's version, which
** lc_nvrtc_facts_get knows without loading NVRTC) and load it. options
** are normalised (ksource.h); the architecture is added. PTX when asked
** (LUACUDA_PTX), or when NVRTC is older than the device: then for the
** newest architecture it knows, and the driver JITs it. */
static int load_source(const char *text, const char *name, const char *const *options,
                       int noptions, CUmodule *mod, char **log, char *err) {
  *log = NULL;
  char nerr[LC_NVRTC_ERRLEN];
  /* NVRTC's facts, remembered: a disk-cache hit then never loads NVRTC */
  lc_nvrtc_facts facts;
  if (lc_nvrtc_facts_get(&facts, nerr) != LC_OK) {
    snprintf(err, LC_ERRLEN, "NVRTC is not available: %.440s", nerr);
    return LC_ENOTSUP;
  }
  int major = facts.major, minor = facts.minor;
  const device *d = &devices[atomic_load(&current)];
  int want = d->cc_major * 10 + d->cc_minor, target;
  if (lc_nvrtc_arch_pick(&facts, want, &target, nerr) != LC_OK) {
    snprintf(err, LC_ERRLEN, "%.500s", nerr);
    return LC_ENOTSUP;
  }
  bool cubin = target == want && !want_ptx();
  char arch[32];
  snprintf(arch, sizeof arch, "-arch=%s_%d", cubin ? "sm" : "compute", target);
  const char *opts[LC_KSOURCE_MAXOPTS + 2];
  int n = 0;
  opts[n++] = arch;
  for (int i = 0; i < noptions && n < LC_KSOURCE_MAXOPTS + 2; i++) opts[n++] = options[i];
  char identity[64];
  snprintf(identity, sizeof identity, "NVRTC %d.%d", major, minor);
  lc_hash key;
  lc_ksource_key(&key, "cuda 2", text, strlen(text), opts, n, identity);
  const char *suffix = cubin ? ".cubin" : ".ptx";
  size_t len = 0;
  unsigned char *image = lc_cache_load("cuda", &key, suffix, &len);
  /* the driver reads PTX up to its NUL; the entry's trailer follows it */
  if (image && !cubin) image[len] = '\0';
  if (image == NULL) {
    /* the headers it may read, as they are before it compiles; if one
    ** changes meanwhile, what it read is not known, and nothing is stored */
    lc_deps deps = {0};
    struct timespec start;
    clock_gettime(CLOCK_REALTIME, &start);
    bool caching = lc_cache_dir() != NULL;
    if (caching) lc_includes_nvrtc(&deps, text, strlen(text), name, opts, n);
    char *out = NULL;
    int rc = lc_nvrtc_compile(text, name, opts, n, cubin, &out, &len, log, nerr);
    if (rc != LC_OK) {
      lc_deps_free(&deps);
      if (*log) snprintf(err, LC_ERRLEN, "compilation of %.300s failed", name);
      else snprintf(err, LC_ERRLEN, "%.500s", nerr);
      return rc;
    }
    free(*log);            /* warnings: not reported for a module that loads */
    *log = NULL;
    image = (unsigned char *)out;
    char ignored[LC_ERRLEN];
    if (caching && !deps.failed && lc_deps_settled(&deps, &start))
      lc_cache_store("cuda", &key, suffix, image, len, &deps, ignored);
    lc_deps_free(&deps);
  }
  char jitlog[1024] = "";
  int jopts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *jvals[2] = {jitlog, (void *)(uintptr_t)sizeof jitlog};
  int rc = lc_cuda_check(lc_cu.ModuleLoadDataEx(mod, image, 2, jopts, jvals),
                         "cuModuleLoadDataEx", err);
  if (rc != LC_OK && jitlog[0]) {
    size_t used_len = strlen(err);
    snprintf(err + used_len, LC_ERRLEN - used_len, " (%s)", jitlog);
  }
  free(image);
  return rc;
}

static int cuda_module_load(const lc_source *src, lc_module **m, char **log, char *err) {
  *log = NULL;
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  /* the head (ksource.h), then the user's source, with a marker after
  ** each definition of a kernel defined in several #if
  ** branches (scan.h), on the same line */
  const lc_scan_result *sc = src->scan;
  int marks = 0;
  for (int i = 0; i < sc->nkernels; i++) marks += lc_scan_defined_twice(sc, i);
  size_t head = lc_ksource_head_len(src->name);
  char *text = malloc(head + src->len + 1 + (size_t)marks * 64);
  lc_module *mod = calloc(1, sizeof *mod);
  if (text == NULL || mod == NULL) {
    free(text);
    free(mod);
    snprintf(err, LC_ERRLEN, "out of host memory");
    return LC_ENOMEM;
  }
  lc_ksource_head(text, src->name);
  size_t k = head;
  size_t at = 0;
  for (int i = 0; i < sc->nkernels; i++) {     /* kernels come in source order */
    if (!lc_scan_defined_twice(sc, i)) continue;
    size_t end = sc->kernels[i].body_end + 1;
    memcpy(text + k, src->text + at, end - at);
    k += end - at;
    k += (size_t)sprintf(text + k, " extern \"C\" { __device__ int " LC_DEFINED_MARK "%d; }", i);
    at = end;
  }
  memcpy(text + k, src->text + at, src->len - at);
  text[k + src->len - at] = '\0';
  rc = load_source(text, src->name, src->options, src->noptions, &mod->m, log, err);
  free(text);
  if (rc != LC_OK) free(mod);
  else *m = mod;
  return rc;
}

static void cuda_module_unload(lc_module *m) {
  if (enter_quietly()) lc_cu.ModuleUnload(m->m);
  while (m->sizes) {
    param_sizes *p = m->sizes;
    m->sizes = p->next;
    free(p);
  }
  free(m);
}

/* The sizes of fn's parameters from the driver (cuFuncGetParamInfo, CUDA
** 12.4), so that a signature misread from the source is caught when the
** kernel is got rather than by a launch that reads garbage; NULL where the
** driver cannot tell. */
static const long long *param_sizes_of(lc_module *m, CUfunction fn) {
  enum { MAXP = 512 };
  if (lc_cu.FuncGetParamInfo == NULL) return NULL;
  long long tmp[MAXP];
  int n = 0;
  for (; n < MAXP - 1; n++) {
    size_t off, size;
    CUresult r = lc_cu.FuncGetParamInfo(fn, (size_t)n, &off, &size);
    if (r == 1) break;                   /* CUDA_ERROR_INVALID_VALUE: past the last */
    if (r != CUDA_SUCCESS) return NULL;
    tmp[n] = (long long)size;
  }
  tmp[n] = -1;
  param_sizes *p = malloc(sizeof *p + (size_t)(n + 1) * sizeof tmp[0]);
  if (p == NULL) return NULL;
  memcpy(p->sizes, tmp, (size_t)(n + 1) * sizeof tmp[0]);
  pthread_mutex_lock(&mu);
  p->next = m->sizes;
  m->sizes = p;
  pthread_mutex_unlock(&mu);
  return p->sizes;
}

static int cuda_module_function(lc_module *m, const char *name, lc_function **f,
                                const long long **sizes, char *err) {
  *sizes = NULL;
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  CUfunction fn;
  rc = lc_cuda_check(lc_cu.ModuleGetFunction(&fn, m->m, name), "cuModuleGetFunction", err);
  if (rc == LC_OK) {
    *f = (lc_function *)fn;
    *sizes = param_sizes_of(m, fn);
  }
  return rc;
}

static int cuda_module_global(lc_module *m, const char *name, void **ptr, size_t *bytes,
                              char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  CUdeviceptr p = 0;
  rc = lc_cuda_check(lc_cu.ModuleGetGlobal(&p, bytes, m->m, name), "cuModuleGetGlobal", err);
  if (rc == LC_OK) *ptr = (void *)(uintptr_t)p;
  return rc;
}

int lc_cuda_copy_kernel(CUfunction *f, char *err) {
  pthread_mutex_lock(&mu);
  device *d = &devices[atomic_load(&current)];
  int rc = LC_OK;
  if (d->copy_fn == NULL) {
    char *log = NULL;
    static const char *const std_only[] = {LC_KSOURCE_STD};
    rc = load_source(lc_strided_source, "luacuda/strided.cu", std_only, 1, &d->library, &log, err);
    free(log);
    if (rc == LC_OK)
      rc = lc_cuda_check(lc_cu.ModuleGetFunction(&d->copy_fn, d->library, "lc_copy_strided"),
                         "cuModuleGetFunction", err);
  }
  *f = d->copy_fn;
  pthread_mutex_unlock(&mu);
  return rc;
}

/* Launches take the packed arguments as they are: the driver copies them. */
static int cuda_launch(lc_function *f, const lc_launch *cfg, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  drain();
  CUresult r = lc_cu.LaunchKernel((CUfunction)f, cfg->grid[0], cfg->grid[1], cfg->grid[2],
                                  cfg->block[0], cfg->block[1], cfg->block[2],
                                  cfg->shared_bytes, cfg->stream->s, cfg->args, NULL);
  rc = lc_cuda_check(r, "cuLaunchKernel", err);
  if (rc == LC_OK) lc_cuda_queued();
  return rc;
}

const lc_backend lc_backend_cuda = {
  .name = "cuda",
  .device_count = cuda_device_count,
  .device_info = cuda_device_info,
  .select_device = cuda_select_device,
  .current_device = cuda_current_device,
  .mem_alloc = cuda_alloc,
  .mem_free = cuda_free,
  .mem_info = cuda_mem_info,
  .pool_info = cuda_pool_info,
  .trim_pool = cuda_trim_pool,
  .ordered_free = cuda_ordered_free,
  .host_register = cuda_host_register,
  .host_unregister = cuda_host_unregister,
  .host_device_pointer = cuda_host_device_pointer,
  .host_flags = lc_hostreg_flags,
  .copy = lc_cuda_copy,
  .copy_strided = lc_cuda_copy_strided,
  .fill = lc_cuda_fill,
  .default_stream = cuda_default_stream,
  .stream_create = cuda_stream_create,
  .stream_destroy = cuda_stream_destroy,
  .stream_wrap = cuda_stream_wrap,
  .stream_unwrap = cuda_stream_unwrap,
  .stream_native = cuda_stream_native,
  .stream_synchronize = cuda_stream_synchronize,
  .stream_query = cuda_stream_query,
  .event_create = cuda_event_create,
  .event_destroy = cuda_event_destroy,
  .event_record = cuda_event_record,
  .event_wait = cuda_event_wait,
  .event_synchronize = cuda_event_synchronize,
  .event_query = cuda_event_query,
  .event_elapsed = cuda_event_elapsed,
  .synchronize = lc_cuda_synchronize,
  .defer = cuda_defer,
  .module_load = cuda_module_load,
  .module_unload = cuda_module_unload,
  .module_function = cuda_module_function,
  .module_global = cuda_module_global,
  .launch = cuda_launch,
};
