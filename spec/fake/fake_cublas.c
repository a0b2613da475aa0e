/*
** fake_cublas: a cuBLAS on the fake driver (spec/fake/fake_cuda.c), so that the
** CUDA backend's matrix products through cuBLAS are tested without a GPU
** (LUACUDA_CUBLAS=build/fake/libcublas.so.13, as make check-fake-cuda
** sets). Test code only: never installed.
**
** Built against the toolkit's cublas_api.h where there is one, so its
** prototypes, types and values are cuBLAS's and a mistake in
** src/backend/cuda/blas.c's copies shows as a wrong result; else with
** declarations of its own, from cuBLAS's documentation.
**
** It follows cuBLAS's documented rules, strictly: a handle is made with a
** context current (cuCtxGetCurrent: NOT_INITIALIZED without one) and must
** be used with that context current; the stream set (NULL: the legacy
** stream) is where each call's work goes, queued with the fake driver's
** cuLaunchHostFunc, so it runs in stream order on the stream's worker and
** reads alpha and beta at the call (host pointer mode; device mode is
** NOT_SUPPORTED here); m, n, k, the leading dimensions and the batch count
** are checked as cuBLAS checks them (INVALID_VALUE), and every matrix of
** every product must lie in memory the context's device reaches (the fake
** driver's fake_cuda_reachable; else EXECUTION_FAILED, with a line on
** stderr, where a GPU would fault). The product is computed on the host,
** column-major, summing over k in order in the element type; with beta 0,
** C is not read (it may hold the pool's poison), as BLAS says. A handle
** takes cuBLAS's default workspace from its device's memory (the fake
** driver's fake_cuda_charge: 32 MiB on compute capability 9 and later,
** 4 MiB before), ALLOC_FAILED when it does not fit, given back by
** cublasDestroy_v2.
**
** Environment:
**   FAKE_CUBLAS_TRACE=path      append one line per call: its name and
**                               arguments ("cublasSgemm_v2 N T m=4 n=2 k=3
**                               alpha=1 lda=4 ldb=2 beta=0 ldc=4"; the
**                               stream set as "@legacy", "@blocking",
**                               "@nonblocking" or "@per-thread"), and
**                               "  -> status" after a failed one
**   FAKE_CUBLAS_FAIL=fn:N[:s]   the Nth call of fn returns status s (14,
**                               CUBLAS_STATUS_INTERNAL_ERROR)
**   FAKE_CUBLAS_VERSION=v       what cublasGetVersion_v2 says (the header's
**                               CUBLAS_VERSION, else 130100)
** It finds the fake driver the way luacuda opened it: $LUACUDA_LIBCUDA, else
** libcuda.so.1, already loaded (RTLD_NOLOAD).
*/
#define _GNU_SOURCE
#include <cuda.h>
#if defined(__has_include)
#if __has_include(<cublas_api.h>)
#include <cublas_api.h>
#define FAKE_CUBLAS_HEADER 1
#endif
#endif

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_CUBLAS_HEADER
/* cuBLAS's documented API, as far as luacuda uses it */
typedef enum {
  CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_INITIALIZED = 1, CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7, CUBLAS_STATUS_EXECUTION_FAILED = 13,
  CUBLAS_STATUS_INTERNAL_ERROR = 14, CUBLAS_STATUS_NOT_SUPPORTED = 15
} cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 } cublasOperation_t;
typedef enum { CUBLAS_POINTER_MODE_HOST = 0, CUBLAS_POINTER_MODE_DEVICE = 1 } cublasPointerMode_t;
typedef struct cublasContext *cublasHandle_t;
typedef struct CUstream_st *cudaStream_t;
#endif
#ifndef CUBLAS_VERSION
#define CUBLAS_VERSION 130100
#endif

#define API __attribute__((visibility("default")))

/* ---- the fake driver's functions ------------------------------------------------ */

static CUresult (*drv_ctx_get_current)(CUcontext *);
static CUresult (*drv_launch_host_func)(CUstream, CUhostFn, void *);
static CUresult (*drv_stream_get_flags)(CUstream, unsigned *);
static int (*drv_reachable)(CUdeviceptr, size_t);
static int (*drv_charge)(long long);
static CUresult (*drv_ctx_get_device)(CUdevice *);
static CUresult (*drv_device_get_attribute)(int *, CUdevice_attribute, CUdevice);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool have_driver;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *trace;
static char fail_fn[64];
static int fail_at, fail_calls;
static cublasStatus_t fail_status = CUBLAS_STATUS_INTERNAL_ERROR;
static int version = CUBLAS_VERSION;

static void *sym(void *h, const char *name) {
  void *p = dlsym(h, name);
  if (p == NULL) fprintf(stderr, "fake_cublas: the driver has no %s\n", name);
  return p;
}
#define LOAD(var, name) do { void *p_ = sym(h, name); memcpy(&var, &p_, sizeof p_); } while (0)

static void init(void) {
  const char *e = getenv("FAKE_CUBLAS_TRACE");
  if (e && *e) trace = fopen(e, "a");
  if ((e = getenv("FAKE_CUBLAS_FAIL")) && *e) {
    const char *c = strchr(e, ':');
    if (c && (size_t)(c - e) < sizeof fail_fn) {
      memcpy(fail_fn, e, (size_t)(c - e));
      fail_at = atoi(c + 1);
      const char *s = strchr(c + 1, ':');
      if (s) fail_status = (cublasStatus_t)atoi(s + 1);
    }
  }
  if ((e = getenv("FAKE_CUBLAS_VERSION")) && *e) version = atoi(e);
  const char *path = getenv("LUACUDA_LIBCUDA");
  void *h = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (h == NULL) {
    fprintf(stderr, "fake_cublas: no fake driver loaded (%s)\n", dlerror());
    return;
  }
  LOAD(drv_ctx_get_current, "cuCtxGetCurrent");
  LOAD(drv_launch_host_func, "cuLaunchHostFunc");
  LOAD(drv_stream_get_flags, "cuStreamGetFlags");
  LOAD(drv_reachable, "fake_cuda_reachable");
  LOAD(drv_charge, "fake_cuda_charge");
  LOAD(drv_ctx_get_device, "cuCtxGetDevice");
  LOAD(drv_device_get_attribute, "cuDeviceGetAttribute");
  have_driver = drv_ctx_get_current && drv_launch_host_func && drv_stream_get_flags &&
                drv_reachable && drv_charge && drv_ctx_get_device && drv_device_get_attribute;
}

/* Every entry point: traced (the line made by the caller), and failed
** when a failure is injected here. Takes the lock. */
static cublasStatus_t enter(const char *fn, const char *line) {
  pthread_once(&once, init);
  pthread_mutex_lock(&mu);
  if (trace) { fprintf(trace, "%s\n", line ? line : fn); fflush(trace); }
  cublasStatus_t r = CUBLAS_STATUS_SUCCESS;
  if (!have_driver) r = CUBLAS_STATUS_NOT_INITIALIZED;
  else if (fail_at && strcmp(fn, fail_fn) == 0 && ++fail_calls == fail_at) r = fail_status;
  if (r != CUBLAS_STATUS_SUCCESS && trace) { fprintf(trace, "  -> %d\n", (int)r); fflush(trace); }
  return r;
}
static cublasStatus_t leave(cublasStatus_t r) {
  if (r != CUBLAS_STATUS_SUCCESS && trace) { fprintf(trace, "  -> %d\n", (int)r); fflush(trace); }
  pthread_mutex_unlock(&mu);
  return r;
}

/* ---- handles ------------------------------------------------------------------- */

#define MAGIC 0x46424c53u
struct cublasContext {
  unsigned magic;
  bool alive;
  CUcontext ctx;
  CUstream stream;
  int pointer_mode;
  size_t workspace;          /* charged to the device */
};

/* cuBLAS's default workspace: 32 MiB on Hopper and later, 4 MiB before
** (its documentation, cublasSetWorkspace), taken from the context's
** device when the handle is made. */
static size_t default_workspace(void) {
  CUdevice d;
  int major = 0;
  if (drv_ctx_get_device(&d) != CUDA_SUCCESS ||
      drv_device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) !=
          CUDA_SUCCESS)
    return 4u << 20;
  return major >= 9 ? 32u << 20 : 4u << 20;
}

/* The handle, if it is a live one made here and its context is current. */
static cublasStatus_t usable(cublasHandle_t h) {
  if (h == NULL || h->magic != MAGIC || !h->alive) return CUBLAS_STATUS_NOT_INITIALIZED;
  CUcontext cur = NULL;
  if (drv_ctx_get_current(&cur) != CUDA_SUCCESS || cur != h->ctx) {
    fprintf(stderr, "fake_cublas: a handle used with another context current than its own\n");
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  return CUBLAS_STATUS_SUCCESS;
}

API cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
  cublasStatus_t r = enter(__func__, NULL);
  if (r) { pthread_mutex_unlock(&mu); return r; }
  CUcontext cur = NULL;
  if (handle == NULL) return leave(CUBLAS_STATUS_INVALID_VALUE);
  if (drv_ctx_get_current(&cur) != CUDA_SUCCESS || cur == NULL)
    return leave(CUBLAS_STATUS_NOT_INITIALIZED);
  cublasHandle_t h = calloc(1, sizeof *h);
  if (h == NULL) return leave(CUBLAS_STATUS_ALLOC_FAILED);
  h->workspace = default_workspace();
  if (drv_charge((long long)h->workspace) != CUDA_SUCCESS) {
    free(h);
    return leave(CUBLAS_STATUS_ALLOC_FAILED);
  }
  h->magic = MAGIC;
  h->alive = true;
  h->ctx = cur;
  *handle = h;
  return leave(CUBLAS_STATUS_SUCCESS);
}

/* kept, marked dead: a later use is reported */
API cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  cublasStatus_t r = enter(__func__, NULL);
  if (r) { pthread_mutex_unlock(&mu); return r; }
  if ((r = usable(handle)) != CUBLAS_STATUS_SUCCESS) return leave(r);
  handle->alive = false;
  drv_charge(-(long long)handle->workspace);
  return leave(CUBLAS_STATUS_SUCCESS);
}

API cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *v) {
  cublasStatus_t r = enter(__func__, NULL);
  if (r) { pthread_mutex_unlock(&mu); return r; }
  if ((r = usable(handle)) != CUBLAS_STATUS_SUCCESS) return leave(r);
  if (v == NULL) return leave(CUBLAS_STATUS_INVALID_VALUE);
  *v = version;
  return leave(CUBLAS_STATUS_SUCCESS);
}

static const char *stream_kind(CUstream s) {
  if (s == NULL || s == CU_STREAM_LEGACY) return "legacy";
  if (s == CU_STREAM_PER_THREAD) return "per-thread";
  unsigned flags = 0;
  if (drv_stream_get_flags(s, &flags) != CUDA_SUCCESS) return "invalid";
  return flags & CU_STREAM_NON_BLOCKING ? "nonblocking" : "blocking";
}

API cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  char line[96];
  pthread_once(&once, init);
  snprintf(line, sizeof line, "cublasSetStream_v2 @%s",
           have_driver ? stream_kind((CUstream)stream) : "?");
  cublasStatus_t r = enter(__func__, line);
  if (r) { pthread_mutex_unlock(&mu); return r; }
  if ((r = usable(handle)) != CUBLAS_STATUS_SUCCESS) return leave(r);
  handle->stream = (CUstream)stream;
  return leave(CUBLAS_STATUS_SUCCESS);
}

API cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *stream) {
  cublasStatus_t r = enter(__func__, NULL);
  if (r) { pthread_mutex_unlock(&mu); return r; }
  if ((r = usable(handle)) != CUBLAS_STATUS_SUCCESS) return leave(r);
  if (stream == NULL) return leave(CUBLAS_STATUS_INVALID_VALUE);
  *stream = (cudaStream_t)handle->stream;
  return leave(CUBLAS_STATUS_SUCCESS);
}

API cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode) {
  char line[64];
  snprintf(line, sizeof line, "cublasSetPointerMode_v2 %s",
           mode == CUBLAS_POINTER_MODE_HOST ? "host" : mode == CUBLAS_POINTER_MODE_DEVICE ? "device" : "?");
  cublasStatus_t r = enter(__func__, line);
  if (r) { pthread_mutex_unlock(&mu); return r; }
  if ((r = usable(handle)) != CUBLAS_STATUS_SUCCESS) return leave(r);
  if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE)
    return leave(CUBLAS_STATUS_INVALID_VALUE);
  handle->pointer_mode = mode;
  return leave(CUBLAS_STATUS_SUCCESS);
}

API cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t *mode) {
  cublasStatus_t r = enter(__func__, NULL);
  if (r) { pthread_mutex_unlock(&mu); return r; }
  if ((r = usable(handle)) != CUBLAS_STATUS_SUCCESS) return leave(r);
  if (mode == NULL) return leave(CUBLAS_STATUS_INVALID_VALUE);
  *mode = (cublasPointerMode_t)handle->pointer_mode;
  return leave(CUBLAS_STATUS_SUCCESS);
}

/* ---- gemm ---------------------------------------------------------------------- */

/* One call's work, run on the stream's worker. */
typedef struct job {
  bool f64;
  bool ta, tb;                 /* transposed (OP_T or OP_C: the same for real types) */
  int m, n, k, lda, ldb, ldc, count;
  long long sa, sb, sc;        /* elements */
  double alpha, beta;
  const char *a, *b;
  char *c;
} job;

#define GEMM_LOOP(T)                                                                          \
  do {                                                                                        \
    const T *A = (const T *)(const void *)j->a + z * j->sa;                                   \
    const T *B = (const T *)(const void *)j->b + z * j->sb;                                   \
    T *C = (T *)(void *)j->c + z * j->sc;                                                     \
    T alpha = (T)j->alpha, beta = (T)j->beta;                                                 \
    for (long long col = 0; col < j->n; col++)                                                \
      for (long long row = 0; row < j->m; row++) {                                            \
        T s = 0;                                                                              \
        for (long long q = 0; q < j->k; q++) {                                                \
          T x = j->ta ? A[q + row * j->lda] : A[row + q * j->lda];                            \
          T y = j->tb ? B[col + q * j->ldb] : B[q + col * j->ldb];                            \
          s += x * y;                                                                         \
        }                                                                                     \
        T *p = &C[row + col * j->ldc];                                                        \
        *p = j->beta == 0 ? alpha * s : alpha * s + beta * *p;                                \
      }                                                                                       \
  } while (0)

static void run(void *ud) {
  job *j = ud;
  for (long long z = 0; z < (j->count ? j->count : 1); z++) {
    if (j->f64) GEMM_LOOP(double);
    else GEMM_LOOP(float);
  }
  free(j);
}

static bool trans(cublasOperation_t op) { return op == CUBLAS_OP_T || op == CUBLAS_OP_C; }
static char op_name(cublasOperation_t op) {
  return op == CUBLAS_OP_N ? 'N' : op == CUBLAS_OP_T ? 'T' : op == CUBLAS_OP_C ? 'C' : '?';
}

/* Does the rows x cols column-major matrix at p (leading dimension ld),
** and each of the count after it at stride elements, lie in memory the
** device reaches? */
static bool reached(const char *p, long long rows, long long cols, long long ld, long long count,
                    long long stride, size_t isz) {
  if (rows == 0 || cols == 0) return true;
  size_t bytes = (size_t)((cols - 1) * ld + rows) * isz;
  for (long long z = 0; z < (count ? count : 1); z++)
    if (!drv_reachable((CUdeviceptr)(uintptr_t)(p + z * stride * (long long)isz), bytes))
      return false;
  return true;
}

static cublasStatus_t gemm(const char *fn, bool f64, cublasHandle_t handle, cublasOperation_t ta,
                           cublasOperation_t tb, int m, int n, int k, const void *alpha,
                           const void *a, int lda, long long sa, const void *b, int ldb,
                           long long sb, const void *beta, void *c, int ldc, long long sc,
                           int count, bool batched) {
  char line[320];
  double al = alpha ? (f64 ? *(const double *)alpha : *(const float *)alpha) : 0;
  double be = beta ? (f64 ? *(const double *)beta : *(const float *)beta) : 0;
  if (batched)
    snprintf(line, sizeof line, "%s %c %c m=%d n=%d k=%d alpha=%g lda=%d strideA=%lld ldb=%d "
             "strideB=%lld beta=%g ldc=%d strideC=%lld batch=%d", fn, op_name(ta), op_name(tb),
             m, n, k, al, lda, sa, ldb, sb, be, ldc, sc, count);
  else
    snprintf(line, sizeof line, "%s %c %c m=%d n=%d k=%d alpha=%g lda=%d ldb=%d beta=%g ldc=%d",
             fn, op_name(ta), op_name(tb), m, n, k, al, lda, ldb, be, ldc);
  cublasStatus_t r = enter(fn, line);
  if (r) { pthread_mutex_unlock(&mu); return r; }
  if ((r = usable(handle)) != CUBLAS_STATUS_SUCCESS) return leave(r);
  if (handle->pointer_mode != CUBLAS_POINTER_MODE_HOST) return leave(CUBLAS_STATUS_NOT_SUPPORTED);
  int arows = trans(ta) ? k : m, brows = trans(tb) ? n : k;
  bool ops = (ta == CUBLAS_OP_N || trans(ta)) && (tb == CUBLAS_OP_N || trans(tb));
  if (!ops || m < 0 || n < 0 || k < 0 || count < 0 || lda < (arows > 1 ? arows : 1) ||
      ldb < (brows > 1 ? brows : 1) || ldc < (m > 1 ? m : 1) || alpha == NULL || beta == NULL)
    return leave(CUBLAS_STATUS_INVALID_VALUE);
  if (m == 0 || n == 0 || (batched && count == 0)) return leave(CUBLAS_STATUS_SUCCESS);
  size_t isz = f64 ? 8 : 4;
  int n_count = batched ? count : 0;
  if (!reached(a, arows, trans(ta) ? m : k, lda, n_count, sa, isz) ||
      !reached(b, brows, trans(tb) ? k : n, ldb, n_count, sb, isz) ||
      !reached(c, m, n, ldc, n_count, sc, isz)) {
    fprintf(stderr, "fake_cublas: %s: a matrix lies outside the device's memory\n", fn);
    return leave(CUBLAS_STATUS_EXECUTION_FAILED);
  }
  job *j = malloc(sizeof *j);
  if (j == NULL) return leave(CUBLAS_STATUS_ALLOC_FAILED);
  *j = (job){f64, trans(ta), trans(tb), m, n, k, lda, ldb, ldc, n_count, sa, sb, sc, al, be,
             a, b, c};
  if (drv_launch_host_func(handle->stream ? handle->stream : CU_STREAM_LEGACY, run, j) !=
      CUDA_SUCCESS) {
    free(j);
    return leave(CUBLAS_STATUS_EXECUTION_FAILED);
  }
  return leave(CUBLAS_STATUS_SUCCESS);
}

API cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                  cublasOperation_t transb, int m, int n, int k,
                                  const float *alpha, const float *A, int lda, const float *B,
                                  int ldb, const float *beta, float *C, int ldc) {
  return gemm(__func__, false, handle, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0,
              beta, C, ldc, 0, 0, false);
}

API cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                  cublasOperation_t transb, int m, int n, int k,
                                  const double *alpha, const double *A, int lda, const double *B,
                                  int ldb, const double *beta, double *C, int ldc) {
  return gemm(__func__, true, handle, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0,
              beta, C, ldc, 0, 0, false);
}

API cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int m, int n, int k,
                                             const float *alpha, const float *A, int lda,
                                             long long int strideA, const float *B, int ldb,
                                             long long int strideB, const float *beta, float *C,
                                             int ldc, long long int strideC, int batchCount) {
  return gemm(__func__, false, handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb,
              strideB, beta, C, ldc, strideC, batchCount, true);
}

API cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int m, int n, int k,
                                             const double *alpha, const double *A, int lda,
                                             long long int strideA, const double *B, int ldb,
                                             long long int strideB, const double *beta,
                                             double *C, int ldc, long long int strideC,
                                             int batchCount) {
  return gemm(__func__, true, handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb,
              strideB, beta, C, ldc, strideC, batchCount, true);
}
