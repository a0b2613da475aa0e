/*
** cuda: what the CUDA backend's files share. One file per driver concept:
** api.c (the driver's function table), context.c (devices, contexts,
** errors), memory.c, stream.c (streams, events, deferred releases),
** module.c (modules, launches, the library's kernels), copy.c, reduce.c
** (reductions and scans), nvrtc.c; backend.c is the table.
*/
#ifndef LUACUDA_CUDA_H
#define LUACUDA_CUDA_H

#include <pthread.h>
#include <stdatomic.h>

#include "backend.h"
#include "api.h"

/* ---- context.c: devices, their contexts, errors ---- */

typedef struct lc_cuda_libmod lc_cuda_libmod;    /* module.c */
typedef struct lc_cuda_libfn lc_cuda_libfn;

/* A device: its primary context and allocator, and the library's kernels. */
typedef struct lc_cuda_device {
  CUdevice dev;
  CUcontext ctx;              /* retained at first use */
  CUmemoryPool pool;          /* our own (cuMemPoolCreate), never the default pool;
                              ** NULL: no stream-ordered allocator */
  lc_cuda_libmod *libmods;    /* the library's modules (the .cu files of kernels/), under mu */
  lc_cuda_libfn *libfns;      /* and the functions got from them, under mu */
  CUevent order_ev;           /* orders one stream after another (stream.c) */
  atomic_size_t used;         /* device bytes allocated here on it */
  atomic_uint_fast64_t queued, settled;   /* work queued on it, and how much of that count a
                                          ** synchronize saw done (stream.c's releases) */
  uint64_t peer_on, peer_never;   /* bit o: it reaches device o's memory directly (peer
                                  ** access enabled), or cannot; under mu (peer.c) */
  int cc_major, cc_minor;
  unsigned shared_optin;      /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: a block's most */
  bool concurrent_managed;    /* CONCURRENT_MANAGED_ACCESS: the host may touch managed
                              ** memory while kernels run */
} lc_cuda_device;

extern lc_cuda_device *lc_cuda_devices;
/* 0-based index of the calling thread's current device (0 until it selects
** one, as in the CUDA runtime) */
extern _Thread_local int lc_cuda_current;
extern pthread_mutex_t lc_cuda_mu;          /* retains, the library's kernels */
extern atomic_bool lc_cuda_broken;          /* a sticky error happened */
extern int lc_cuda_driver_version;          /* cuDriverGetVersion (12040: 12.4), 0 unknown;
                                            ** set by lc_cuda_init */

/* For finalizers: may the driver be called? (never reports) */
bool lc_cuda_enter_quietly(void);

int lc_cuda_device_count(void);
int lc_cuda_current_device(void);
int lc_cuda_device_info(int i, lc_device_info *info, char *err);
int lc_cuda_select_device(int i, char *err);

/* ---- limits.c: the context's limits (backend.h) ---- */
int lc_cuda_get_limit(lc_limit which, size_t *value, char *err);
int lc_cuda_set_limit(lc_limit which, size_t value, size_t *took, char *err);

/* A pointer as the driver's device address (unified addressing: the same). */
static inline CUdeviceptr lc_cuda_ptr(const void *p) { return (CUdeviceptr)(uintptr_t)p; }

/* Before any driver call: fails (with why in err) once the context is
** unusable; makes the current device's context current on this thread
** until the end of the scope (the first call in a scope asks the driver
** what is current: context.c says what then happens). */
int lc_cuda_enter(char *err);

/* Every slot of the backend's table runs between these (backend.c): when
** the outermost scope on the thread ends, the context it found is current
** again. */
void lc_cuda_scope_begin(void);
void lc_cuda_scope_end(void);

/* LC_OK for CUDA_SUCCESS; else "call: CUDA_ERROR_..." in err (when err is
** not NULL), the context marked unusable for a sticky error, and LC_ENOMEM
** or LC_EFAIL. */
int lc_cuda_check(CUresult r, const char *call, char *err);

/* ---- memory.c: the memory slots (backend.h says what each does) ---- */
/* The pool keeps what is freed (its release threshold is the most there
** is), so any call that takes device memory may find it all idle in the
** pool: short of memory (the driver's CUDA_ERROR_OUT_OF_MEMORY, cuBLAS's
** ALLOC_FAILED...), it gives the current device's idle pool memory back
** and is made once more. Whether anything was given back (a retry may
** succeed). */
bool lc_cuda_release_idle(void);

/* r = call; where r is oom (the code its library says "out of memory"
** with), once more after lc_cuda_release_idle gave memory back. */
#define LC_CUDA_RETRY_OOM(r, oom, call) \
  do { \
    (r) = (call); \
    if ((r) == (oom) && lc_cuda_release_idle()) (r) = (call); \
  } while (0)

/* n bytes of device d's pool (d->pool not NULL), ordered on st; short of
** memory, the pool's idle memory is given back and the allocation tried
** once more. */
int lc_cuda_pool_alloc(const lc_cuda_device *d, size_t n, CUstream st, CUdeviceptr *p,
                       char *err);
int lc_cuda_alloc(lc_kind kind, size_t nbytes, unsigned flags, lc_stream *s, void **ptr,
                  char *err);
void lc_cuda_free(lc_kind kind, void *ptr, size_t nbytes, int device);
void lc_cuda_free_after(lc_kind kind, void *ptr, size_t nbytes, int device,
                        lc_stream *const *streams, int n);
bool lc_cuda_ordered_free(lc_kind kind);
int lc_cuda_mem_info(size_t *free_bytes, size_t *total, size_t *in_use);
int lc_cuda_pool_info(size_t *reserved, size_t *in_use);
int lc_cuda_trim_pool(char *err);
int lc_cuda_host_register(void *p, size_t n, unsigned flags, char *err);
int lc_cuda_host_unregister(void *p, char *err);
/* The address a kernel, a memset or the copy kernel takes for p, memory of
** the given kind: p, but for mapped memory whose device address differs
** (write-combined). cuMemcpy* take either. */
CUdeviceptr lc_cuda_devptr(const void *p, lc_kind kind);

/* ---- ufunc.c: array math's elementwise operations ---- */
struct lc_ufunc_call;
int lc_cuda_ufunc(const struct lc_ufunc_call *c, lc_stream *s, char *err);

/* ---- random.c: random numbers ---- */
struct lc_random_call;
int lc_cuda_random(const struct lc_random_call *c, lc_stream *s, char *err);
/* ---- blas.c: cuBLAS through dlopen ---- */

/* One call: cublas<S|D>gemm_v2 (count 0) or cublas<S|D>gemmStridedBatched
** (count products, the s* strides in elements), alpha 1 and beta 0;
** ta and tb are CUBLAS_OP_N (0) or CUBLAS_OP_T (1). */
typedef struct lc_cuda_gemm {
  bool f64;
  int ta, tb, m, n, k;
  const void *a;
  int lda;
  long long sa;
  const void *b;
  int ldb;
  long long sb;
  void *c;
  int ldc;
  long long sc;
  int count;
} lc_cuda_gemm;
enum { LC_CUBLAS_OP_N = 0, LC_CUBLAS_OP_T = 1 };

/* cuBLAS's handle for the current device, whose context is current; made
** at first use. LC_ENOTSUP with why[LC_ERRLEN] when there is none: no
** cuBLAS loads, or its cublasCreate_v2 failed on this device. */
int lc_cuda_blas_handle(void **h, char *why);
/* Calls on handle h go to stream st from begin (which takes the handles'
** lock, and keeps it only when it succeeds) to end. */
int lc_cuda_blas_begin(void *h, CUstream st, char *err);
int lc_cuda_blas_call(void *h, const lc_cuda_gemm *g, char *err);
void lc_cuda_blas_end(void);
/* The blas slot (backend.h). */
bool lc_cuda_blas(char *name, char *why);
/* "CUBLAS_STATUS_INVALID_VALUE" for a cublasStatus_t */
const char *lc_cuda_blas_status(int s);

/* ---- matmul.c: matrix products (cuBLAS, else kernels/matmul.cu) ---- */
struct lc_matmul_call;
int lc_cuda_matmul(const struct lc_matmul_call *c, lc_stream *s, char *err);

/* ---- stream.c: streams, events, deferred releases, queued work ---- */

/* A stream: the default (CU_STREAM_LEGACY), one made here (owned, counted:
** its object and each host slot that wraps it hold a reference), or a
** holder of a host program's stream. */
struct lc_stream {
  CUstream s;
  bool owned;
  bool nonblocking;            /* not ordered with the legacy stream */
  int dev;                     /* 0-based: the device it was made or wrapped on */
  int refs;                    /* under the backend's lock; the default's unused */
  lc_stream *next;             /* the live streams (stream.c) */
  lc_stream *nb_next;          /* the non-blocking streams */
};

/* The legacy stream, after the work queued so far on the current device's
** non-blocking streams: a stream that waits for all work queued before,
** as the interface's NULL stream needs. */
CUstream lc_cuda_legacy(void);
CUstream lc_cuda_legacy_of(int dev);     /* of device dev, its context current */

/* The CUstream to queue on for s on device dev (its context current): the
** legacy stream (ordered as lc_cuda_legacy_of says) for NULL (synchronous),
** for the default stream and for a host's NULL stream. */
CUstream lc_cuda_stream_on(int dev, const lc_stream *s);

/* The same on the current device. */
static inline CUstream lc_cuda_stream(const lc_stream *s) {
  return lc_cuda_stream_on(lc_cuda_current, s);
}

/* After queueing work on s with result r: on the legacy stream for a NULL
** s, wait for it (and what it waited for); else note that work is queued. */
int lc_cuda_finish(CUresult r, const char *call, const lc_stream *s, char *err);

/* Wait for all queued work and report a failure of it (the synchronize
** slot). */
int lc_cuda_synchronize(char *err);

/* Scratch device memory ordered on stream st: freed after the work queued
** on st before the free. */
int lc_cuda_temp_alloc(size_t n, CUstream st, CUdeviceptr *p, char *err);
void lc_cuda_temp_free(CUdeviceptr p, CUstream st);

/* Note that work was queued (defer then waits behind it). */
void lc_cuda_queued(void);

/* The legacy default stream (lc_cuda_init sets its CUstream). */
extern lc_stream lc_cuda_default;

/* Run the deferred releases whose work is done. */
void lc_cuda_drain(void);

/* The stream, event and release slots (backend.h says what each does). */
void lc_cuda_defer(void (*release)(void *), void *ud);
lc_stream *lc_cuda_default_stream(void);
int lc_cuda_stream_create(lc_stream **out, unsigned flags, char *err);
void lc_cuda_stream_retain(lc_stream *s);
void lc_cuda_stream_release(lc_stream *s);
int lc_cuda_stream_wrap(void *native, lc_stream **out, char *err);
int lc_cuda_host_fn(lc_stream *s, void (*fn)(void *), void *ud, char *err);
bool lc_cuda_stream_follows(const lc_stream *after, const lc_stream *before);
int lc_cuda_stream_order(lc_stream *before, lc_stream *after, char *err);
/* the same on device dev, whose context is current (no entry check) */
int lc_cuda_stream_order_on(int dev, lc_stream *before, lc_stream *after, char *err);
void *lc_cuda_stream_native(lc_stream *s);
int lc_cuda_stream_host_use(lc_stream *s, char *err);
int lc_cuda_stream_synchronize(lc_stream *s, char *err);
int lc_cuda_stream_query(lc_stream *s, bool *done, char *err);
int lc_cuda_event_create(lc_event **out, bool timing, char *err);
void lc_cuda_event_destroy(lc_event *e);
int lc_cuda_event_record(lc_event *e, lc_stream *s, char *err);
int lc_cuda_event_wait(lc_event *e, lc_stream *s, char *err);
int lc_cuda_event_synchronize(lc_event *e, char *err);
int lc_cuda_event_query(lc_event *e, bool *done, char *err);
int lc_cuda_event_elapsed(lc_event *a, lc_event *b, float *ms, char *err);

/* ---- module.c: the module and launch slots (backend.h says what each does) ---- */
int lc_cuda_module_load(const lc_source *src, lc_module **m, char **log, char *err);
void lc_cuda_module_unload(lc_module *m);
int lc_cuda_module_function(lc_module *m, const char *name, lc_function **f,
                            const long long **sizes, char *err);
int lc_cuda_module_global(lc_module *m, const char *name, void **ptr, size_t *bytes,
                          char *err);
int lc_cuda_launch(lc_function *f, const lc_launch *cfg, char *err);

/* A kernel of one of the library's own sources (the .cu files of kernels/,
** built in: kernels.h) for the current device, whose context is current:
** compiled by NVRTC at first use (kept in the disk cache like any module),
** loaded, and kept for the process, per device. file names the source in messages and
** the cache; the source's address is its identity. name is a kernel's
** plain (extern "C") name, all of which come from one module of the
** source, or a name expression such as "lc_reduce<0, 11, 11, 11>", which
** is compiled into a module of its own. */
int lc_cuda_library_function(const char *file, const char *source, const char *name,
                             CUfunction *fn, char *err);

/* The one launcher of the library's kernels (ufunc, reduce, random,
** gather, sort, the strided copy and fill): the kernel name of source
** (lc_cuda_library_function), a grid of grid blocks of threads threads,
** both in x alone, with params as cuLaunchKernel takes them.
** lc_cuda_library_launch queues one of a call's launches on st and counts
** it as queued work (lc_cuda_queued), so that a temporary freed after it
** waits for it; the call ends with lc_cuda_finish. lc_cuda_library_call is
** a whole call of one launch on s's stream, finished (lc_cuda_finish: on
** no stream, s NULL, it waits for the kernel). */
int lc_cuda_library_launch(const char *file, const char *source, const char *name,
                           unsigned grid, unsigned threads, void **params, CUstream st,
                           char *err);
int lc_cuda_library_call(const char *file, const char *source, const char *name,
                         unsigned grid, unsigned threads, void **params, const lc_stream *s,
                         char *err);

/* The grid for blocks blocks of work, at most most and at least one: the
** library's kernels loop over their work (grid-stride), so a smaller grid
** than the work still covers it. */
unsigned lc_cuda_grid(int64_t blocks, unsigned most);

/* ---- gather.c: the gather slot (backend.h) ---- */
struct lc_gather_call;
int lc_cuda_gather(const struct lc_gather_call *c, lc_stream *s, char *err);

/* ---- reduce.c: the reduce slot (backend.h) ---- */
int lc_cuda_reduce(const struct lc_reduce_call *c, lc_stream *s, char *err);

/* ---- sort.c: the sort slot (backend.h) ---- */
int lc_cuda_sort(const struct lc_sort_call *c, lc_stream *s, char *err);

/* ---- copy.c: the copy slots (backend.h says what each does) ---- */
int lc_cuda_copy(void *dst, lc_kind dkind, const void *src, lc_kind skind,
                 size_t nbytes, lc_stream *s, char *err);
int lc_cuda_copy_strided(const lc_region *dst, const lc_region *src,
                         int64_t itemsize, lc_stream *s, char *err);
int lc_cuda_fill(const lc_region *dst, const void *value, int64_t itemsize,
                 lc_stream *s, char *err);

/* ---- peer.c: copies between devices (backend.h's copy_peer) ---- */
int lc_cuda_copy_peer(const lc_region *dst, int ddev, const lc_region *src, int sdev,
                      int64_t itemsize, lc_stream *s, char *err);

#endif
