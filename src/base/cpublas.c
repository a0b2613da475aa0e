/*
** cpublas: matrix products through the system's BLAS (cpublas.h).
**
** BLAS is column-major, the arrays row-major: a row-major rows x cols
** matrix whose rows lie ld elements apart is, to BLAS, its cols x rows
** transpose with leading dimension ld. So C^T = B^T A^T is computed, BLAS's
** first operand being our b: a row-major operand goes in as it lies
** ('N'), a column-major one, such as a transposed view, as a transpose
** ('T'); C must be row-major. A product with one column (n = 1) or one
** row (m = 1) is a matrix-vector product (gemv), whose vectors may have
** any positive stride. Any other layout (reversed or strided rows and
** columns, a broadcast axis) is copied to a contiguous buffer first, and
** the output's buffer written back after. Products that share b and whose
** rows of a and c follow each other from one product to the next are one
** product of all their rows.
*/
#define _GNU_SOURCE            /* dladdr */
#include "cpublas.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "env.h"
#include "matmul_call.h"

/* The Fortran interface (32-bit INTEGERs), with the lengths of the
** CHARACTER arguments that gfortran's calling convention passes after
** the others (a BLAS written in C ignores them). */
typedef void gemm_fn(const char *ta, const char *tb, const int *m, const int *n, const int *k,
                     const void *alpha, const void *a, const int *lda, const void *b,
                     const int *ldb, const void *beta, void *c, const int *ldc, size_t lta,
                     size_t ltb);
typedef void gemv_fn(const char *t, const int *m, const int *n, const void *alpha,
                     const void *a, const int *lda, const void *x, const int *incx,
                     const void *beta, void *y, const int *incy, size_t lt);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static gemm_fn *gemm[2];               /* float, double */
static gemv_fn *gemv[2];
static char lib_name[LC_ERRLEN];       /* "blas <path>" */
static char lib_why[LC_ERRLEN];        /* why there is none */

static void load(void) {
  if (!lc_settings_get()->cpu_blas) {
    snprintf(lib_why, sizeof lib_why, "LUACUDA_CPU_BLAS=0");
    return;
  }
  void *h = dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    const char *e = dlerror();
    snprintf(lib_why, sizeof lib_why, "no CPU BLAS: %.400s", e ? e : "dlopen failed");
    return;
  }
  static const char *const names[4] = {"sgemm_", "dgemm_", "sgemv_", "dgemv_"};
  void *sym[4];
  for (int i = 0; i < 4; i++) {
    sym[i] = dlsym(h, names[i]);
    if (sym[i] == NULL) {
      snprintf(lib_why, sizeof lib_why, "libblas.so.3 has no %s", names[i]);
      dlclose(h);
      return;
    }
  }
  /* the file the symbols come from: the alternative's target, or a
  ** library the process had loaded already */
  Dl_info info;
  char path[PATH_MAX];
  const char *file = "libblas.so.3";
  if (dladdr(sym[0], &info) && info.dli_fname) file = info.dli_fname;
  if (realpath(file, path)) file = path;
  snprintf(lib_name, sizeof lib_name, "blas %.400s", file);
  /* function pointers from dlsym's object pointers (POSIX allows it) */
  memcpy(&gemm[0], &sym[0], sizeof gemm[0]);
  memcpy(&gemm[1], &sym[1], sizeof gemm[1]);
  memcpy(&gemv[0], &sym[2], sizeof gemv[0]);
  memcpy(&gemv[1], &sym[3], sizeof gemv[1]);
}

bool lc_cpublas_available(char *name, char *why) {
  pthread_once(&once, load);
  if (gemm[0] == NULL) {
    if (why) snprintf(why, LC_ERRLEN, "%s", lib_why);
    return false;
  }
  if (name) snprintf(name, LC_ERRLEN, "%s", lib_name);
  return true;
}

/* ---- how BLAS reads each operand ---------------------------------------------- */

/* The three shapes of call: a matrix product, or a matrix times a vector
** (one column: n = 1; one row: m = 1). */
enum shape { GEMM, COLUMN, ROW };

/* rows x cols at byte strides rs, cs as BLAS reads it: 'N' for a row-major
** matrix (BLAS's transpose, as it lies), 'T' for a column-major one, with
** its leading dimension in elements; 0 where BLAS cannot. The stride of
** an axis of one element is free, chosen so that it can. */
static char matrix(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t isz, int *ld) {
  if (rs % isz || cs % isz) return 0;
  rs /= isz;
  cs /= isz;
  int64_t r1 = rows > 1 ? rows : 1, c1 = cols > 1 ? cols : 1;
  int64_t l = rows == 1 ? c1 : rs;
  if ((cols == 1 || cs == 1) && l >= c1 && l <= INT_MAX) {
    *ld = (int)l;
    return 'N';
  }
  l = cols == 1 ? r1 : cs;
  if ((rows == 1 || rs == 1) && l >= r1 && l <= INT_MAX) {
    *ld = (int)l;
    return 'T';
  }
  return 0;
}

/* A vector of n elements at byte stride s as BLAS steps through it: its
** increment in elements, or 0 where BLAS cannot (BLAS's negative
** increments start at the other end; a stride of 0 it refuses). */
static int vector(int64_t n, int64_t s, int64_t isz) {
  if (n == 1) return 1;
  if (s <= 0 || s % isz || s / isz > INT_MAX) return 0;
  return (int)(s / isz);
}

/* One product's operand: where it is and its strides (the copy's, when
** copied). */
typedef struct view {
  char *p;
  int64_t rs, cs;
} view;

/* Does BLAS read operand x (rows x cols) as it lies in its role? */
static bool fits(enum shape sh, int which, const view *x, int64_t rows, int64_t cols,
                 int64_t isz) {
  int ld;
  if (which == 2) {            /* the output */
    if (sh == COLUMN) return vector(rows, x->rs, isz) > 0;
    if (sh == ROW) return vector(cols, x->cs, isz) > 0;
    return matrix(rows, cols, x->rs, x->cs, isz, &ld) == 'N';
  }
  if (sh == COLUMN && which == 1) return vector(rows, x->rs, isz) > 0;
  if (sh == ROW && which == 0) return vector(cols, x->cs, isz) > 0;
  return matrix(rows, cols, x->rs, x->cs, isz, &ld) != 0;
}

/* The call with products that share b and whose rows of a and c follow
** each other merged into one product of all their rows. */
static void merge_rows(const lc_matmul_call *c, lc_matmul_call *m) {
  *m = *c;
  if (c->nbatch != 1 || c->b.bs[0] != 0 || c->m * c->batch[0] > INT_MAX) return;
  int64_t ar = c->m == 1 ? c->a.bs[0] : c->a.rs, cr = c->m == 1 ? c->c.bs[0] : c->c.rs;
  if (c->a.bs[0] != c->m * ar || c->c.bs[0] != c->m * cr) return;
  m->m = c->m * c->batch[0];
  m->a.rs = ar;
  m->c.rs = cr;
  m->nbatch = 0;
  m->batch[0] = 0;
  m->a.bs[0] = m->c.bs[0] = 0;
}

static enum shape shape_of(const lc_matmul_call *c) {
  return c->n == 1 ? COLUMN : c->m == 1 ? ROW : GEMM;
}

static bool counts_fit(const lc_matmul_call *c) {
  return c->m <= INT_MAX && c->n <= INT_MAX && c->k <= INT_MAX;
}

/* The three operands' rows and columns. */
static void dims(const lc_matmul_call *c, int64_t rows[3], int64_t cols[3]) {
  rows[0] = c->m;
  cols[0] = c->k;
  rows[1] = c->k;
  cols[1] = c->n;
  rows[2] = c->m;
  cols[2] = c->n;
}

bool lc_cpublas_direct(const lc_matmul_call *call) {
  if (!lc_cpublas_available(NULL, NULL)) return false;
  lc_matmul_call c;
  merge_rows(call, &c);
  if (!counts_fit(&c)) return false;
  int64_t rows[3], cols[3], isz = c.dtype->size;
  dims(&c, rows, cols);
  const lc_matmul_operand *ops[3] = {&c.a, &c.b, &c.c};
  for (int i = 0; i < 3; i++) {
    view v = {ops[i]->data, ops[i]->rs, ops[i]->cs};
    if (!fits(shape_of(&c), i, &v, rows[i], cols[i], isz)) return false;
  }
  return true;
}

/* ---- one product ----------------------------------------------------------------- */

/* Copy rows x cols between a strided view and a C-contiguous buffer. */
static void pack(char *buf, const view *x, int64_t rows, int64_t cols, size_t isz, bool in) {
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      char *e = x->p + i * x->rs + j * x->cs, *b = buf + (size_t)(i * cols + j) * isz;
      if (in) memcpy(b, e, isz);
      else memcpy(e, b, isz);
    }
}

static void product(const lc_matmul_call *c, view v[3]) {
  int f64 = c->dtype->code == LC_FLOAT64;
  int64_t isz = c->dtype->size;
  static const float one_f = 1, zero_f = 0;
  static const double one_d = 1, zero_d = 0;
  const void *one = f64 ? (const void *)&one_d : (const void *)&one_f;
  const void *zero = f64 ? (const void *)&zero_d : (const void *)&zero_f;
  int m = (int)c->m, n = (int)c->n, k = (int)c->k, lda = 1, ldb = 1, ldc = 1;
  switch (shape_of(c)) {
  case COLUMN: {               /* c = a b, b a column of k */
    char t = matrix(c->m, c->k, v[0].rs, v[0].cs, isz, &lda);
    int incx = vector(c->k, v[1].rs, isz), incy = vector(c->m, v[2].rs, isz);
    /* 'N': BLAS holds a^T (k x m); 'T': a itself (m x k) */
    char bt = t == 'N' ? 'T' : 'N';
    int rows = t == 'N' ? k : m, cols = t == 'N' ? m : k;
    gemv[f64](&bt, &rows, &cols, one, v[0].p, &lda, v[1].p, &incx, zero, v[2].p, &incy, 1);
    return;
  }
  case ROW: {                  /* c = a b, a a row of k: c^T = b^T a^T */
    char t = matrix(c->k, c->n, v[1].rs, v[1].cs, isz, &ldb);
    int incx = vector(c->k, v[0].cs, isz), incy = vector(c->n, v[2].cs, isz);
    /* 'N': BLAS holds b^T (n x k); 'T': b itself (k x n) */
    int rows = t == 'N' ? n : k, cols = t == 'N' ? k : n;
    gemv[f64](&t, &rows, &cols, one, v[1].p, &ldb, v[0].p, &incx, zero, v[2].p, &incy, 1);
    return;
  }
  case GEMM: {                 /* c^T (n x m) = op(b) op(a) */
    char ta = matrix(c->m, c->k, v[0].rs, v[0].cs, isz, &lda);
    char tb = matrix(c->k, c->n, v[1].rs, v[1].cs, isz, &ldb);
    matrix(c->m, c->n, v[2].rs, v[2].cs, isz, &ldc);
    gemm[f64](&tb, &ta, &n, &m, &k, one, v[1].p, &ldb, v[0].p, &lda, zero, v[2].p, &ldc, 1, 1);
    return;
  }
  }
}

int lc_cpublas_matmul(const lc_matmul_call *call) {
  if (!lc_cpublas_available(NULL, NULL)) return 0;
  lc_matmul_call c;
  merge_rows(call, &c);
  if (!counts_fit(&c)) return 0;
  int64_t rows[3], cols[3], isz = c.dtype->size;
  dims(&c, rows, cols);
  const lc_matmul_operand *ops[3] = {&c.a, &c.b, &c.c};
  enum shape sh = shape_of(&c);
  /* the operands BLAS cannot read as they lie: a buffer each, for one
  ** product at a time */
  bool copy[3];
  size_t off[3], total = 0;
  for (int i = 0; i < 3; i++) {
    view v = {ops[i]->data, ops[i]->rs, ops[i]->cs};
    copy[i] = !fits(sh, i, &v, rows[i], cols[i], isz);
    off[i] = total;
    if (copy[i]) total += (size_t)(rows[i] * cols[i] * isz);
  }
  char *buf = NULL;
  if (total > 0 && (buf = malloc(total)) == NULL) return -1;
  int64_t count = lc_matmul_count(&c);
  for (int64_t z = 0; z < count; z++) {
    view v[3], at[3];
    for (int i = 0; i < 3; i++) at[i] = (view){ops[i]->data, ops[i]->rs, ops[i]->cs};
    int64_t rest = z;
    for (int d = c.nbatch - 1; d >= 0; d--) {
      int64_t j = rest % c.batch[d];
      rest /= c.batch[d];
      for (int i = 0; i < 3; i++) at[i].p += j * ops[i]->bs[d];
    }
    for (int i = 0; i < 3; i++) {
      v[i] = at[i];
      if (!copy[i]) continue;
      v[i] = (view){buf + off[i], cols[i] * isz, isz};
      if (i < 2) pack(v[i].p, &at[i], rows[i], cols[i], (size_t)isz, true);
    }
    product(&c, v);
    if (copy[2]) pack(v[2].p, &at[2], rows[2], cols[2], (size_t)isz, false);
  }
  free(buf);
  return 1;
}
