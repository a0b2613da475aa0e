/*
** matmul (cuda): matrix products on the device, queued on the call's
** stream: through cuBLAS where it loads (blas.c), else through the
** library's tiled kernel lc_matmul<T> (kernels/matmul.cu, compiled by NVRTC
** at its first use on a device: lc_cuda_library_function), which takes any
** strides.
**
** cuBLAS is column-major, the arrays row-major: a row-major m x k matrix
** with rows ld elements apart is, to cuBLAS, its k x m transpose with
** leading dimension ld. So C^T = B^T A^T is computed, cuBLAS's A being our
** b and its B our a, each passed as it lies: a row-major operand as is
** (CUBLAS_OP_N), a column-major one, such as a transposed view, as a
** transpose (CUBLAS_OP_T); C must be row-major. Any other layout (reversed
** or strided rows and columns, misaligned strides, negative batch strides)
** is copied to a contiguous temporary first, C's written back after. A
** batch is one strided-batched call along its innermost axis (a
** broadcast operand at stride 0), one per index of the others; products
** that share b and whose a and c rows follow each other from one product
** to the next are one product of their rows together.
*/
#include "cuda.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "kernels.h"
#include "matmul.h"

/* ---- the library's kernel ---------------------------------------------------- */

static int with_kernel(const lc_matmul_call *c, lc_stream *s, char *err) {
  bool f64 = c->dtype->code == LC_FLOAT64;
  CUfunction f;
  int rc = lc_cuda_library_function("luacuda/matmul.cu", lc_matmul_source,
                                    f64 ? "lc_matmul<double>" : "lc_matmul<float>", &f, err);
  if (rc != LC_OK) return rc;
  lc_matmul_args a;
  lc_matmul_pack(c, &a);
  long long tn = (c->n + LC_MM_BN - 1) / LC_MM_BN, tm = (c->m + LC_MM_BM - 1) / LC_MM_BM;
  unsigned gx = tn > (long long)LC_MAX_GRID_X ? LC_MAX_GRID_X : (unsigned)tn;
  unsigned gy = tm > (long long)LC_MAX_GRID_Y ? LC_MAX_GRID_Y : (unsigned)tm;
  unsigned gz = a.batch > (long long)LC_MAX_GRID_Z ? LC_MAX_GRID_Z : (unsigned)a.batch;
  void *params[1] = {&a};
  CUresult r;
  LC_CUDA_RETRY_OOM(r, CUDA_ERROR_OUT_OF_MEMORY,
                    lc_cu.LaunchKernel(f, gx, gy, gz, LC_MM_THREADS_X, LC_MM_THREADS_Y, 1, 0,
                                       lc_cuda_stream(s), params, NULL));
  return lc_cuda_finish(r, "cuLaunchKernel", s, err);
}

/* ---- cuBLAS -------------------------------------------------------------------- */

/* One operand as cuBLAS reads it: row-major (OP_N) or column-major (OP_T)
** with leading dimension ld; strides in elements. */
typedef struct mat {
  char *p;
  int op;
  long long ld;
  long long bs[LC_MAXDIM];
  CUdeviceptr temp;            /* a contiguous copy's memory, or 0 */
} mat;

static long long at_least_1(long long v) { return v > 1 ? v : 1; }

/* Can cuBLAS read rows x cols at byte strides rs, cs as it lies? The
** stride of an axis of one element is free: chosen so that it can. */
static bool readable(long long rows, long long cols, long long rs, long long cs, long long isz,
                     int *op, long long *ld) {
  if (rs % isz || cs % isz) return false;
  rs /= isz;
  cs /= isz;
  long long r = rows == 1 ? at_least_1(cols) : rs, c = cols == 1 ? 1 : cs;
  if (c == 1 && r >= at_least_1(cols) && r <= INT_MAX) {
    *op = LC_CUBLAS_OP_N;
    *ld = r;
    return true;
  }
  r = rows == 1 ? 1 : rs;
  c = cols == 1 ? at_least_1(rows) : cs;
  if (r == 1 && c >= at_least_1(rows) && c <= INT_MAX) {
    *op = LC_CUBLAS_OP_T;
    *ld = c;
    return true;
  }
  return false;
}

/* The view of operand x (rows x cols of each product) and of its compact
** copy, with their axes of one element dropped: a broadcast batch axis is
** one element of the copy. */
static void views(const lc_matmul_call *c, const lc_matmul_operand *x, long long rows,
                  long long cols, lc_layout *src, lc_layout *dst) {
  long long isz = c->dtype->size, shape[LC_MAXDIM + 2], strides[LC_MAXDIM + 2];
  int n = 0;
  for (int d = 0; d < c->nbatch; d++) {
    shape[n] = x->bs[d] == 0 ? 1 : c->batch[d];
    strides[n++] = x->bs[d];
  }
  shape[n] = rows;
  strides[n++] = x->rs;
  shape[n] = cols;
  strides[n++] = x->cs;
  memset(src, 0, sizeof *src);
  memset(dst, 0, sizeof *dst);
  long long step = isz;
  int k = 0;
  src->size = 1;
  for (int i = n - 1; i >= 0; i--) {
    if (shape[i] > 1) k++;
  }
  src->ndim = dst->ndim = k;
  for (int i = n - 1; i >= 0; i--) {
    if (shape[i] == 1) continue;
    k--;
    src->shape[k] = dst->shape[k] = shape[i];
    src->strides[k] = strides[i];
    dst->strides[k] = step;
    step *= shape[i];
    src->size *= shape[i];
  }
  dst->size = src->size;
}

/* Operand x (rows x cols) as cuBLAS reads it: as it lies where it can
** (and out not set, or row-major), else a compact copy (the output's
** memory only, written back by put_back). */
static int prepare(const lc_matmul_call *c, const lc_matmul_operand *x, long long rows,
                   long long cols, bool out, CUstream st, lc_stream *s, mat *mt, char *err) {
  long long isz = c->dtype->size;
  memset(mt, 0, sizeof *mt);
  bool as_is = readable(rows, cols, x->rs, x->cs, isz, &mt->op, &mt->ld) &&
               (!out || mt->op == LC_CUBLAS_OP_N);
  for (int d = 0; d < c->nbatch && as_is; d++) as_is = x->bs[d] >= 0 && x->bs[d] % isz == 0;
  if (as_is) {
    mt->p = x->data;
    for (int d = 0; d < c->nbatch; d++) mt->bs[d] = x->bs[d] / isz;
    return LC_OK;
  }
  lc_layout src, dst;
  views(c, x, rows, cols, &src, &dst);
  int rc = lc_cuda_temp_alloc((size_t)(src.size * isz), st, &mt->temp, err);
  if (rc != LC_OK) return rc;
  mt->p = (char *)(uintptr_t)mt->temp;
  mt->op = LC_CUBLAS_OP_N;
  mt->ld = at_least_1(cols);
  long long step = rows * cols;
  for (int d = c->nbatch - 1; d >= 0; d--) {
    mt->bs[d] = x->bs[d] == 0 ? 0 : step;
    if (x->bs[d] != 0) step *= c->batch[d];
  }
  if (out) return LC_OK;
  lc_region to = {mt->p, LC_DEVICE, &dst}, from = {x->data, LC_DEVICE, &src};
  return lc_cuda_copy_strided(&to, &from, isz, s, err);
}

/* The output's copy into its own memory. */
static int put_back(const lc_matmul_call *c, const mat *mt, lc_stream *s, char *err) {
  lc_layout src, dst;
  views(c, &c->c, c->m, c->n, &dst, &src);      /* dst: the output, src: the copy */
  lc_region to = {c->c.data, LC_DEVICE, &dst}, from = {mt->p, LC_DEVICE, &src};
  return lc_cuda_copy_strided(&to, &from, c->dtype->size, s, err);
}

static int with_cublas(void *h, const lc_matmul_call *c, lc_stream *s, char *err) {
  CUstream st = lc_cuda_stream(s);
  long long isz = c->dtype->size;
  mat A, B, C;
  memset(&A, 0, sizeof A);
  memset(&B, 0, sizeof B);
  memset(&C, 0, sizeof C);
  int rc = prepare(c, &c->a, c->m, c->k, false, st, s, &A, err);
  if (rc == LC_OK) rc = prepare(c, &c->b, c->k, c->n, false, st, s, &B, err);
  if (rc == LC_OK) rc = prepare(c, &c->c, c->m, c->n, true, st, s, &C, err);
  if (rc == LC_OK) rc = lc_cuda_blas_begin(h, st, err);
  if (rc == LC_OK) {
    /* C^T (n x m) = op(B) op(A): cuBLAS's A is our b, its B our a */
    lc_cuda_gemm g = {c->dtype->code == LC_FLOAT64, B.op, A.op, (int)c->n, (int)c->m, (int)c->k,
                      B.p, (int)B.ld, 0, A.p, (int)A.ld, 0, C.p, (int)C.ld, 0, 0};
    int nb = c->nbatch, inner = nb - 1;
    if (nb == 1 && B.bs[0] == 0 && A.op == LC_CUBLAS_OP_N && A.bs[0] == c->m * A.ld &&
        C.bs[0] == c->m * C.ld && c->m * c->batch[0] <= INT_MAX) {
      /* the products' rows follow each other: one product of all of them */
      g.n = (int)(c->m * c->batch[0]);
      rc = lc_cuda_blas_call(h, &g, err);
    } else if (nb == 0) {
      rc = lc_cuda_blas_call(h, &g, err);
    } else {
      g.count = (int)c->batch[inner];
      g.sa = B.bs[inner];
      g.sb = A.bs[inner];
      g.sc = C.bs[inner];
      long long outer = 1;
      for (int d = 0; d < inner; d++) outer *= c->batch[d];
      for (long long z = 0; z < outer && rc == LC_OK; z++) {
        long long rest = z, oa = 0, ob = 0, oc = 0;
        for (int d = inner - 1; d >= 0; d--) {
          long long j = rest % c->batch[d];
          rest /= c->batch[d];
          oa += j * A.bs[d];
          ob += j * B.bs[d];
          oc += j * C.bs[d];
        }
        g.a = B.p + ob * isz;
        g.b = A.p + oa * isz;
        g.c = C.p + oc * isz;
        rc = lc_cuda_blas_call(h, &g, err);
      }
    }
    lc_cuda_blas_end();
  }
  if (rc == LC_OK) rc = lc_cuda_finish(CUDA_SUCCESS, "cublas", s, err);
  if (rc == LC_OK && C.temp) rc = put_back(c, &C, s, err);
  mat *temps[3] = {&A, &B, &C};
  for (int i = 0; i < 3; i++)
    if (temps[i]->temp) lc_cuda_temp_free(temps[i]->temp, st);
  return rc;
}

int lc_cuda_matmul(const lc_matmul_call *c, lc_stream *s, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  void *h;
  char why[LC_ERRLEN];
  /* cuBLAS counts in int: larger products take the kernel */
  bool fits = c->m <= INT_MAX && c->n <= INT_MAX && c->k <= INT_MAX &&
              (c->nbatch == 0 || c->batch[c->nbatch - 1] <= INT_MAX);
  if (fits && lc_cuda_blas_handle(&h, why) == LC_OK) return with_cublas(h, c, s, err);
  return with_kernel(c, s, err);
}
