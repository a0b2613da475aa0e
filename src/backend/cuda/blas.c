/*
** blas (cuda): cuBLAS, opened with dlopen like the driver (api.c) and
** NVRTC, so that the module builds and runs without it: $LUACUDA_CUBLAS
** alone when set (0 turns cuBLAS off), else libcublas.so.13, .12 and .11,
** the toolkit's majors, skipping those newer than the driver (a cuBLAS
** needs a driver of its major or newer). Loaded once, at the first matrix
** product or luacuda.blas(), never closed. One handle per device, made at
** its first product with that device's context current; the stream is
** bound at each call, under a lock, since a handle is shared by every
** thread. Types and values are cublas_api.h's (CUDA 13), declared here.
*/
#include "cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int cublasStatus_t;
typedef struct cublasContext *cublasHandle_t;
enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_ALLOC_FAILED = 3, CUBLAS_POINTER_MODE_HOST = 0 };

typedef struct cublas_api {
  cublasStatus_t (*Create)(cublasHandle_t *h);                          /* cublasCreate_v2 */
  cublasStatus_t (*SetStream)(cublasHandle_t h, CUstream s);            /* cublasSetStream_v2 */
  cublasStatus_t (*GetVersion)(cublasHandle_t h, int *v);               /* cublasGetVersion_v2 */
  cublasStatus_t (*SetPointerMode)(cublasHandle_t h, int mode);         /* _v2 */
  cublasStatus_t (*Sgemm)(cublasHandle_t h, int ta, int tb, int m, int n, int k,
                          const float *alpha, const float *a, int lda, const float *b, int ldb,
                          const float *beta, float *c, int ldc);        /* cublasSgemm_v2 */
  cublasStatus_t (*Dgemm)(cublasHandle_t h, int ta, int tb, int m, int n, int k,
                          const double *alpha, const double *a, int lda, const double *b,
                          int ldb, const double *beta, double *c, int ldc);
  cublasStatus_t (*SgemmStridedBatched)(cublasHandle_t h, int ta, int tb, int m, int n, int k,
                                        const float *alpha, const float *a, int lda,
                                        long long sa, const float *b, int ldb, long long sb,
                                        const float *beta, float *c, int ldc, long long sc,
                                        int count);
  cublasStatus_t (*DgemmStridedBatched)(cublasHandle_t h, int ta, int tb, int m, int n, int k,
                                        const double *alpha, const double *a, int lda,
                                        long long sa, const double *b, int ldb, long long sb,
                                        const double *beta, double *c, int ldc, long long sc,
                                        int count);
} cublas_api;

static cublas_api cb;

#define SYM(field, name) {offsetof(cublas_api, field), name}
static const struct { size_t off; const char *name; } syms[] = {
  SYM(Create, "cublasCreate_v2"), SYM(SetStream, "cublasSetStream_v2"),
  SYM(GetVersion, "cublasGetVersion_v2"), SYM(SetPointerMode, "cublasSetPointerMode_v2"),
  SYM(Sgemm, "cublasSgemm_v2"), SYM(Dgemm, "cublasDgemm_v2"),
  SYM(SgemmStridedBatched, "cublasSgemmStridedBatched"),
  SYM(DgemmStridedBatched, "cublasDgemmStridedBatched"),
};
#undef SYM

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;
static char load_why[LC_ERRLEN];

/* The handles, one per device, made under mu; mu also keeps a stream bound
** from its SetStream to the last call that uses it. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
typedef struct handle {
  bool tried;
  cublasHandle_t h;
  char why[LC_ERRLEN];         /* why there is none */
} handle;
static handle *handles;
static int nhandles;

const char *lc_cuda_blas_status(int s) {
  switch (s) {
    case 0: return "CUBLAS_STATUS_SUCCESS";
    case 1: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case 3: return "CUBLAS_STATUS_ALLOC_FAILED";
    case 7: return "CUBLAS_STATUS_INVALID_VALUE";
    case 8: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case 11: return "CUBLAS_STATUS_MAPPING_ERROR";
    case 13: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case 14: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case 15: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case 16: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

/* Append "; " and the formatted text to load_why, cut with "..." when full. */
static void note(const char *what, const char *detail) {
  size_t len = strlen(load_why);
  if (len + 4 >= sizeof load_why) return;
  int n = snprintf(load_why + len, sizeof load_why - len, "%s%s: %s", len ? "; " : "", what,
                   detail);
  if (n < 0 || (size_t)n >= sizeof load_why - len) memcpy(load_why + sizeof load_why - 4, "...", 4);
}

/* Open path and resolve every function; a library without them is left
** open (what it ran at load time stays valid). */
static bool try_open(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    const char *e = dlerror();
    /* dlerror usually starts with the path already */
    if (e && strncmp(e, path, strlen(path)) == 0 && e[strlen(path)] == ':')
      e += strlen(path) + (e[strlen(path) + 1] == ' ' ? 2 : 1);
    note(path, e ? e : "cannot be loaded");
    return false;
  }
  cublas_api t;
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    void *p = dlsym(h, syms[i].name);
    if (p == NULL) {
      char what[96];
      snprintf(what, sizeof what, "has no %s (not cuBLAS, or one too old)", syms[i].name);
      note(path, what);
      return false;
    }
    /* object pointer to function pointer, as POSIX allows */
    memcpy((char *)&t + syms[i].off, &p, sizeof p);
  }
  cb = t;
  return true;
}

static void load(void) {
  const char *path = getenv("LUACUDA_CUBLAS");
  if (path && *path) {
    if (strcmp(path, "0") == 0) {
      snprintf(load_why, sizeof load_why, "LUACUDA_CUBLAS=0 turns cuBLAS off");
      return;
    }
    /* the user's choice alone: a wrong path is reported, not replaced */
    loaded = try_open(path);
    if (!loaded) {
      char why[LC_ERRLEN];
      snprintf(why, sizeof why, "cannot load cuBLAS from LUACUDA_CUBLAS: %.460s", load_why);
      memcpy(load_why, why, sizeof load_why);
    }
    return;
  }
  static const char *const sonames[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"};
  int driver = lc_cuda_driver_version / 1000;
  for (size_t i = 0; i < sizeof sonames / sizeof sonames[0] && !loaded; i++) {
    int major = atoi(sonames[i] + strlen("libcublas.so."));
    if (driver > 0 && major > driver) {
      char why[96];
      snprintf(why, sizeof why, "needs a driver of CUDA %d or newer (this one is %d.%d)", major,
               driver, lc_cuda_driver_version % 1000 / 10);
      note(sonames[i], why);
      continue;
    }
    loaded = try_open(sonames[i]);
  }
  if (!loaded) {
    char why[LC_ERRLEN];
    snprintf(why, sizeof why, "no cuBLAS found (%.480s)", load_why);
    memcpy(load_why, why, sizeof load_why);
  }
}

int lc_cuda_blas_handle(void **h, char *why) {
  pthread_once(&once, load);
  if (!loaded) {
    snprintf(why, LC_ERRLEN, "%s", load_why);
    return LC_ENOTSUP;
  }
  int dev = lc_cuda_current, rc = LC_OK;
  pthread_mutex_lock(&mu);
  if (handles == NULL) {
    int n = lc_cuda_device_count();
    handles = calloc((size_t)(n > 0 ? n : 1), sizeof *handles);
    nhandles = handles ? n : 0;
  }
  if (dev >= nhandles) {
    snprintf(why, LC_ERRLEN, "out of host memory");
    rc = LC_ENOMEM;
  } else {
    handle *d = &handles[dev];
    if (!d->tried) {
      d->tried = true;
      cublasStatus_t s;              /* a handle takes its workspace from the device */
      LC_CUDA_RETRY_OOM(s, CUBLAS_STATUS_ALLOC_FAILED, cb.Create(&d->h));
      if (s == CUBLAS_STATUS_SUCCESS) s = cb.SetPointerMode(d->h, CUBLAS_POINTER_MODE_HOST);
      if (s != CUBLAS_STATUS_SUCCESS) {
        snprintf(d->why, sizeof d->why, "cublasCreate_v2: %s", lc_cuda_blas_status(s));
        d->h = NULL;
      }
    }
    if (d->h) *h = d->h;
    else {
      snprintf(why, LC_ERRLEN, "%s", d->why);
      rc = LC_ENOTSUP;
    }
  }
  pthread_mutex_unlock(&mu);
  return rc;
}

bool lc_cuda_blas(char *name, char *why) {
  if (lc_cuda_enter(why) != LC_OK) return false;
  void *h;
  if (lc_cuda_blas_handle(&h, why) != LC_OK) return false;
  int v = 0;
  cublasStatus_t s = cb.GetVersion(h, &v);
  if (s != CUBLAS_STATUS_SUCCESS) snprintf(name, LC_ERRLEN, "cublas");
  else snprintf(name, LC_ERRLEN, "cublas %d.%d.%d", v / 10000, v / 100 % 100, v % 100);
  return true;
}

int lc_cuda_blas_begin(void *h, CUstream st, char *err) {
  pthread_mutex_lock(&mu);
  cublasStatus_t s = cb.SetStream(h, st);
  if (s == CUBLAS_STATUS_SUCCESS) return LC_OK;
  pthread_mutex_unlock(&mu);
  return lc_fail(err, LC_EFAIL, "cublasSetStream_v2: %s", lc_cuda_blas_status(s));
}

void lc_cuda_blas_end(void) { pthread_mutex_unlock(&mu); }

int lc_cuda_blas_call(void *h, const lc_cuda_gemm *q, char *err) {
  static const float one_f = 1, zero_f = 0;
  static const double one_d = 1, zero_d = 0;
  cublasStatus_t s;
  const char *call;
  if (q->count == 0 && !q->f64) {
    call = "cublasSgemm_v2";
    s = cb.Sgemm(h, q->ta, q->tb, q->m, q->n, q->k, &one_f, q->a, q->lda, q->b, q->ldb, &zero_f,
                 q->c, q->ldc);
  } else if (q->count == 0) {
    call = "cublasDgemm_v2";
    s = cb.Dgemm(h, q->ta, q->tb, q->m, q->n, q->k, &one_d, q->a, q->lda, q->b, q->ldb, &zero_d,
                 q->c, q->ldc);
  } else if (!q->f64) {
    call = "cublasSgemmStridedBatched";
    s = cb.SgemmStridedBatched(h, q->ta, q->tb, q->m, q->n, q->k, &one_f, q->a, q->lda, q->sa,
                               q->b, q->ldb, q->sb, &zero_f, q->c, q->ldc, q->sc, q->count);
  } else {
    call = "cublasDgemmStridedBatched";
    s = cb.DgemmStridedBatched(h, q->ta, q->tb, q->m, q->n, q->k, &one_d, q->a, q->lda, q->sa,
                               q->b, q->ldb, q->sb, &zero_d, q->c, q->ldc, q->sc, q->count);
  }
  if (s == CUBLAS_STATUS_SUCCESS) return LC_OK;
  return lc_fail(err, LC_EFAIL, "%s: %s", call, lc_cuda_blas_status(s));
}
