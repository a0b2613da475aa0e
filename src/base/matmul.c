/*
** matmul: the plan of a matrix product and the host's loop (matmul.h).
*/
#include "matmul.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpublas.h"

static void mismatch(char *err, const lc_layout *la, const lc_layout *lb, const char *what,
                     int axis_a, int64_t na, int axis_b, int64_t nb) {
  char sa[LC_SHAPE_STRLEN], sb[LC_SHAPE_STRLEN];
  lc_shape_format(sa, sizeof sa, la->ndim, la->shape);
  lc_shape_format(sb, sizeof sb, lb->ndim, lb->shape);
  lc_errf(err, "shapes %.200s and %.200s do not match: %s axis %d of the first has "
          "%lld elements and axis %d of the second %lld", sa, sb, what, axis_a, (long long)na,
          axis_b, (long long)nb);
}

int lc_matmul_plan(const lc_layout *la, const lc_layout *lb, lc_matmul_call *c, int *ndim,
                   int64_t *shape, char *err) {
  memset(c, 0, sizeof *c);
  int na = la->ndim, nb = lb->ndim;
  if (na < 1 || nb < 1) {
    return lc_fail(err, -1, "operand %d is 0-d: matmul takes arrays of one axis or more "
                   "(multiply scales by a number)", na < 1 ? 1 : 2);
  }
  int64_t ka, kb;
  c->a_vector = na == 1;
  c->b_vector = nb == 1;
  if (c->a_vector) {             /* a row: (1, k) */
    c->m = 1;
    ka = la->shape[0];
    c->a.cs = la->strides[0];
  } else {
    c->m = la->shape[na - 2];
    ka = la->shape[na - 1];
    c->a.rs = la->strides[na - 2];
    c->a.cs = la->strides[na - 1];
  }
  if (c->b_vector) {             /* a column: (k, 1) */
    kb = lb->shape[0];
    c->n = 1;
    c->b.rs = lb->strides[0];
  } else {
    kb = lb->shape[nb - 2];
    c->n = lb->shape[nb - 1];
    c->b.rs = lb->strides[nb - 2];
    c->b.cs = lb->strides[nb - 1];
  }
  if (ka != kb) {
    mismatch(err, la, lb, "the product sums over", na, ka, c->b_vector ? 1 : nb - 1, kb);
    return -1;
  }
  c->k = ka;
  /* the batch axes, aligned at their ends; one of a single element
  ** broadcasts (stride 0) */
  int ba = na > 2 ? na - 2 : 0, bb = nb > 2 ? nb - 2 : 0;
  int nbat = ba > bb ? ba : bb;
  for (int i = 0; i < nbat; i++) {
    int ia = i - (nbat - ba), ib = i - (nbat - bb);
    int64_t sa = ia >= 0 ? la->shape[ia] : 1, sb = ib >= 0 ? lb->shape[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      mismatch(err, la, lb, "their batch axes do not broadcast:", ia + 1, sa, ib + 1, sb);
      return -1;
    }
    c->batch[i] = sa == 1 ? sb : sa;
    c->a.bs[i] = ia >= 0 && sa != 1 ? la->strides[ia] : 0;
    c->b.bs[i] = ib >= 0 && sb != 1 ? lb->strides[ib] : 0;
  }
  c->nbatch = nbat;
  int nd = 0;
  for (int i = 0; i < nbat; i++) shape[nd++] = c->batch[i];
  if (!c->a_vector) shape[nd++] = c->m;
  if (!c->b_vector) shape[nd++] = c->n;
  /* broadcast batch axes may be long: the result's count must fit (the
  ** caller checks its bytes when it makes the result) */
  int64_t count;
  if (lc_shape_count(nd, shape, 1, &count, err)) return -1;
  *ndim = nd;
  return 0;
}

void lc_matmul_output(lc_matmul_call *c, const lc_layout *out) {
  int d = c->nbatch;
  for (int i = 0; i < c->nbatch; i++) c->c.bs[i] = out->strides[i];
  c->c.rs = c->a_vector ? 0 : out->strides[d++];
  c->c.cs = c->b_vector ? 0 : out->strides[d];
}

void lc_matmul_collapse(lc_matmul_call *c) {
  lc_matmul_operand *ops[3] = {&c->a, &c->b, &c->c};
  int64_t *strides[3] = {c->a.bs, c->b.bs, c->c.bs};
  int n = lc_merge_axes(c->nbatch, c->batch, 3, strides);
  for (int i = n; i < c->nbatch; i++) {
    c->batch[i] = 0;
    for (int o = 0; o < 3; o++) ops[o]->bs[i] = 0;
  }
  c->nbatch = n;
}

void lc_matmul_pack(const lc_matmul_call *c, lc_matmul_args *a) {
  memset(a, 0, sizeof *a);
  a->a = c->a.data;
  a->b = c->b.data;
  a->c = c->c.data;
  a->m = c->m;
  a->n = c->n;
  a->k = c->k;
  a->a_rs = c->a.rs;
  a->a_cs = c->a.cs;
  a->b_rs = c->b.rs;
  a->b_cs = c->b.cs;
  a->c_rs = c->c.rs;
  a->c_cs = c->c.cs;
  a->batch = lc_matmul_count(c);
  a->nbatch = c->nbatch;
  for (int i = 0; i < c->nbatch; i++) {
    a->bshape[i] = c->batch[i];
    a->a_bs[i] = c->a.bs[i];
    a->b_bs[i] = c->b.bs[i];
    a->c_bs[i] = c->c.bs[i];
  }
}

/* ---- the host's loop ------------------------------------------------------------
** For each product, blocks of HB_MB rows by HB_NB columns of c, summed in
** a buffer over steps of HB_KB along k: the step's rows of b packed
** contiguous (HB_NB wide, zeros past the edge), then each row of the block
** adds a(i, k) times packed row k, a loop of a constant length over
** contiguous memory that the compiler vectorises. Sums are in the
** element type, k in order, as the kernel and cuBLAS sum. */
#define HB_MB 64
#define HB_NB 64
#define HB_KB 256

#define LC_MM_HOST(T, NAME)                                                                    \
  static void NAME(const lc_matmul_call *c, const char *A, const char *B, char *C, T *bp,      \
                   T *ct) {                                                                    \
    const int64_t m = c->m, n = c->n, k = c->k;                                                \
    for (int64_t j0 = 0; j0 < n; j0 += HB_NB) {                                                \
      const int64_t nb = n - j0 < HB_NB ? n - j0 : HB_NB;                                      \
      for (int64_t i0 = 0; i0 < m; i0 += HB_MB) {                                              \
        const int64_t mb = m - i0 < HB_MB ? m - i0 : HB_MB;                                    \
        for (int64_t i = 0; i < HB_MB * HB_NB; i++) ct[i] = 0;                                 \
        for (int64_t k0 = 0; k0 < k; k0 += HB_KB) {                                            \
          const int64_t kb = k - k0 < HB_KB ? k - k0 : HB_KB;                                  \
          for (int64_t q = 0; q < kb; q++) {                                                   \
            const char *br = B + (k0 + q) * c->b.rs + j0 * c->b.cs;                            \
            T *row = bp + q * HB_NB;                                                           \
            for (int64_t j = 0; j < nb; j++) row[j] = *(const T *)(const void *)(br + j * c->b.cs); \
            for (int64_t j = nb; j < HB_NB; j++) row[j] = 0;                                   \
          }                                                                                    \
          for (int64_t i = 0; i < mb; i++) {                                                   \
            T *restrict acc = ct + i * HB_NB;                                                  \
            const char *ar = A + (i0 + i) * c->a.rs + k0 * c->a.cs;                            \
            for (int64_t q = 0; q < kb; q++) {                                                 \
              const T av = *(const T *)(const void *)(ar + q * c->a.cs);                       \
              const T *restrict br = bp + q * HB_NB;                                           \
              for (int j = 0; j < HB_NB; j++) acc[j] += av * br[j];                            \
            }                                                                                  \
          }                                                                                    \
        }                                                                                      \
        for (int64_t i = 0; i < mb; i++) {                                                     \
          char *cr = C + (i0 + i) * c->c.rs + j0 * c->c.cs;                                    \
          for (int64_t j = 0; j < nb; j++) *(T *)(void *)(cr + j * c->c.cs) = ct[i * HB_NB + j]; \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
  }
LC_MM_HOST(float, host_f32)
LC_MM_HOST(double, host_f64)

int lc_matmul_host(const lc_matmul_call *c) {
  int blas = lc_cpublas_matmul(c);          /* the system's BLAS, where it is */
  if (blas != 0) return blas < 0 ? -1 : 0;
  size_t isz = (size_t)c->dtype->size;
  char *bp = malloc(isz * (HB_KB * HB_NB + HB_MB * HB_NB));
  if (bp == NULL) return -1;
  char *ct = bp + isz * HB_KB * HB_NB;
  int64_t count = lc_matmul_count(c);
  for (int64_t z = 0; z < count; z++) {
    const char *A = c->a.data, *B = c->b.data;
    char *C = c->c.data;
    int64_t rest = z;
    for (int d = c->nbatch - 1; d >= 0; d--) {
      int64_t j = rest % c->batch[d];
      rest /= c->batch[d];
      A += j * c->a.bs[d];
      B += j * c->b.bs[d];
      C += j * c->c.bs[d];
    }
    if (c->dtype->code == LC_FLOAT32)
      host_f32(c, A, B, C, (float *)(void *)bp, (float *)(void *)ct);
    else
      host_f64(c, A, B, C, (double *)(void *)bp, (double *)(void *)ct);
  }
  free(bp);
  return 0;
}
