/*
** Unit tests for src/base/reduce.c (run them as unit.h says): the dtype
** rules, the plan's simplification, and lc_reduce_host on small views
** against sums written out here, its wrapping, NaN rules and accuracy.
*/
#include "reduce.h"

#include "unit.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DT(code) (&lc_dtypes[LC_##code])

/* a call over the buffer in (view il), output buffer out (view ol) */
static lc_reduce_call call(lc_reduce_op op, lc_typecode it, lc_typecode acc, lc_typecode ot,
                           const void *in, const lc_layout *il, void *out, const lc_layout *ol,
                           uint64_t axes) {
  lc_reduce_call c;
  memset(&c, 0, sizeof c);
  c.op = op;
  c.in_type = it;
  c.acc_type = acc;
  c.out_type = ot;
  c.in = in;
  c.out = out;
  c.in_lay = *il;
  c.out_lay = *ol;
  c.axes = axes;
  return c;
}

static lc_layout contiguous(int ndim, const int64_t *shape, int64_t isz) {
  lc_layout l;
  char e[LC_ERRLEN];
  lc_layout_contiguous(&l, ndim, shape, isz, 'C', e);
  return l;
}

/* the output view of a reduction over axes of a C-contiguous shape */
static lc_layout reduced(int ndim, const int64_t *shape, uint64_t axes, int64_t isz) {
  int64_t s[LC_MAXDIM];
  for (int i = 0; i < ndim; i++) s[i] = axes >> i & 1 ? 1 : shape[i];
  return contiguous(ndim, s, isz);
}

static int dtypes(void) {
  const lc_dtype *acc, *out;
  CHECK_OK(lc_reduce_dtypes(LC_RED_SUM, DT(INT8), NULL, &acc, &out, err));
  CHECK(acc == DT(INT64) && out == DT(INT64));
  CHECK_OK(lc_reduce_dtypes(LC_RED_SUM, DT(BOOL), NULL, &acc, &out, err));
  CHECK(out == DT(INT64));
  CHECK_OK(lc_reduce_dtypes(LC_RED_CUMPROD, DT(UINT16), NULL, &acc, &out, err));
  CHECK(out == DT(UINT64));
  CHECK_OK(lc_reduce_dtypes(LC_RED_SUM, DT(UINT64), NULL, &acc, &out, err));
  CHECK(out == DT(UINT64));
  CHECK_OK(lc_reduce_dtypes(LC_RED_SUM, DT(FLOAT16), NULL, &acc, &out, err));
  CHECK(out == DT(FLOAT16));
  CHECK_EQ(lc_reduce_domain_of(LC_RED_SUM, DT(FLOAT16), acc), LC_DOM_F32);
  CHECK_OK(lc_reduce_dtypes(LC_RED_MEAN, DT(INT32), NULL, &acc, &out, err));
  CHECK(out == DT(FLOAT64));
  CHECK_OK(lc_reduce_dtypes(LC_RED_MEAN, DT(BFLOAT16), NULL, &acc, &out, err));
  CHECK(out == DT(BFLOAT16));
  CHECK_OK(lc_reduce_dtypes(LC_RED_SUM, DT(INT32), DT(FLOAT32), &acc, &out, err));
  CHECK(acc == DT(FLOAT32) && out == DT(FLOAT32));
  CHECK_OK(lc_reduce_dtypes(LC_RED_ARGMAX, DT(UINT8), NULL, &acc, &out, err));
  CHECK(out == DT(INT64));
  CHECK_OK(lc_reduce_dtypes(LC_RED_ALL, DT(FLOAT64), NULL, &acc, &out, err));
  CHECK(out == DT(BOOL));
  CHECK_OK(lc_reduce_dtypes(LC_RED_MIN, DT(INT16), NULL, &acc, &out, err));
  CHECK(out == DT(INT16));
  CHECK_EQ(lc_reduce_domain_of(LC_RED_MIN, DT(INT16), acc), LC_DOM_I64);
  CHECK_ERR(lc_reduce_dtypes(LC_RED_MAX, DT(INT16), DT(INT64), &acc, &out, err),
            "max takes no dtype=");
  return 0;
}

static int plan_merges(void) {
  /* a C-contiguous 3-d array reduced whole: one axis */
  int64_t shape[3] = {4, 5, 6};
  lc_layout il = contiguous(3, shape, 4), ol = reduced(3, shape, 7, 4);
  lc_reduce_call c = call(LC_RED_SUM, LC_FLOAT32, LC_FLOAT32, LC_FLOAT32, NULL, &il, NULL, &ol, 7);
  lc_reduce_plan p;
  lc_reduce_plan_make(&c, &p);
  CHECK_EQ(p.nred, 1);
  CHECK_EQ(p.nkept, 0);
  CHECK_EQ(p.rshape[0], 120);
  CHECK_EQ(p.rin[0], 4);
  CHECK_EQ(p.count, 120);
  CHECK_EQ(p.nout, 1);
  /* transposed: the order-free sum still merges, argmin keeps C order */
  char e[LC_ERRLEN];
  CHECK_OK(lc_layout_transpose(&il, NULL, e));
  c.in_lay = il;
  lc_reduce_plan_make(&c, &p);
  CHECK_EQ(p.nred, 1);
  c.op = LC_RED_ARGMIN;
  lc_reduce_plan_make(&c, &p);
  CHECK_EQ(p.nred, 3);
  /* reversed axis: the sum walks it forwards from its last element */
  il = contiguous(3, shape, 4);
  CHECK_OK(lc_layout_slice(&il, 2, 5, 6, -1, e));
  ol = reduced(3, shape, 4, 4);
  c = call(LC_RED_SUM, LC_FLOAT32, LC_FLOAT32, LC_FLOAT32, NULL, &il, NULL, &ol, 4);
  lc_reduce_plan_make(&c, &p);
  CHECK_EQ(p.nred, 1);
  CHECK_EQ(p.rin[0], 4);
  CHECK_EQ(p.in0, il.offset - 5 * 4);
  CHECK_EQ(p.nkept, 1);          /* the two kept axes merge */
  CHECK_EQ(p.kshape[0], 20);
  return 0;
}

static int sum_axes(void) {
  /* int32 {2, 3, 4} of 0..23, summed over axis 1 into int64 */
  int32_t a[24];
  for (int i = 0; i < 24; i++) a[i] = i;
  int64_t shape[3] = {2, 3, 4}, out[8];
  lc_layout il = contiguous(3, shape, 4), ol = reduced(3, shape, 2, 8);
  lc_reduce_call c = call(LC_RED_SUM, LC_INT32, LC_INT64, LC_INT64, a, &il, out, &ol, 2);
  lc_reduce_host(&c);
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 4; k++) CHECK_EQ(out[i * 4 + k], 3 * (12 * i + k) + 4 + 8);
  /* over axes 1 and 3 (bits 0 and 2) */
  ol = reduced(3, shape, 5, 8);
  c = call(LC_RED_SUM, LC_INT32, LC_INT64, LC_INT64, a, &il, out, &ol, 5);
  lc_reduce_host(&c);
  for (int j = 0; j < 3; j++) {
    int64_t want = 0;
    for (int i = 0; i < 2; i++)
      for (int k = 0; k < 4; k++) want += 12 * i + 4 * j + k;
    CHECK_EQ(out[j], want);
  }
  return 0;
}

static int int_wraps(void) {
  int8_t a[4] = {100, 100, 100, -128};
  int64_t shape[1] = {4};
  int8_t o8 = 0;
  lc_layout il = contiguous(1, shape, 1), ol = reduced(1, shape, 1, 1);
  lc_reduce_call c = call(LC_RED_SUM, LC_INT8, LC_INT8, LC_INT8, a, &il, &o8, &ol, 1);
  lc_reduce_host(&c);
  CHECK_EQ(o8, (int8_t)(300 - 128 - 256));
  uint64_t u[3] = {UINT64_MAX, 2, 5}, ou = 0;
  shape[0] = 3;
  il = contiguous(1, shape, 8);
  ol = reduced(1, shape, 1, 8);
  c = call(LC_RED_SUM, LC_UINT64, LC_UINT64, LC_UINT64, u, &il, &ou, &ol, 1);
  lc_reduce_host(&c);
  CHECK_EQ(ou, 6);
  int64_t big[2] = {INT64_MAX, INT64_MAX}, ob = 0;
  shape[0] = 2;
  il = contiguous(1, shape, 8);
  c = call(LC_RED_PROD, LC_INT64, LC_INT64, LC_INT64, big, &il, &ob, &ol, 1);
  lc_reduce_host(&c);
  CHECK_EQ(ob, 1);     /* (2^63 - 1)^2 = 1 mod 2^64 */
  return 0;
}

static int nan_rules(void) {
  double a[6] = {3, 1, NAN, 1, NAN, -5};
  int64_t shape[1] = {6}, idx = 0;
  double m = 0;
  lc_layout il = contiguous(1, shape, 8), ol = reduced(1, shape, 1, 8);
  lc_reduce_call c = call(LC_RED_MIN, LC_FLOAT64, LC_FLOAT64, LC_FLOAT64, a, &il, &m, &ol, 1);
  lc_reduce_host(&c);
  CHECK(isnan(m));
  c = call(LC_RED_ARGMAX, LC_FLOAT64, LC_FLOAT64, LC_INT64, a, &il, &idx, &ol, 1);
  lc_reduce_host(&c);
  CHECK_EQ(idx, 3);              /* the first NaN, 1-based */
  a[2] = a[4] = 0;
  c = call(LC_RED_ARGMIN, LC_FLOAT64, LC_FLOAT64, LC_INT64, a, &il, &idx, &ol, 1);
  lc_reduce_host(&c);
  CHECK_EQ(idx, 6);
  a[5] = 1;
  a[0] = 0;
  c = call(LC_RED_ARGMIN, LC_FLOAT64, LC_FLOAT64, LC_INT64, a, &il, &idx, &ol, 1);
  lc_reduce_host(&c);
  CHECK_EQ(idx, 1);              /* the first of the equal minima */
  uint8_t any = 9;
  double z[2] = {0.0, -0.0};
  shape[0] = 2;
  il = contiguous(1, shape, 8);
  ol = reduced(1, shape, 1, 1);
  c = call(LC_RED_ANY, LC_FLOAT64, LC_BOOL, LC_BOOL, z, &il, &any, &ol, 1);
  lc_reduce_host(&c);
  CHECK_EQ(any, 0);
  z[1] = NAN;
  lc_reduce_host(&c);
  CHECK_EQ(any, 1);
  return 0;
}

static int half_sum(void) {
  /* float16 1.0 is 0x3c00: 3000 of them sum in float32 to 3000, exact in float16 */
  enum { N = 3000 };
  uint16_t h[N], o = 0;
  for (int i = 0; i < N; i++) h[i] = 0x3c00;
  int64_t shape[1] = {N};
  lc_layout il = contiguous(1, shape, 2), ol = reduced(1, shape, 1, 2);
  lc_reduce_call c = call(LC_RED_SUM, LC_FLOAT16, LC_FLOAT16, LC_FLOAT16, h, &il, &o, &ol, 1);
  lc_reduce_host(&c);
  CHECK_EQ(lc_dtype_load_float(DT(FLOAT16), &o), N);
  c.op = LC_RED_MEAN;
  lc_reduce_host(&c);
  CHECK_EQ(o, 0x3c00);
  return 0;
}

static int scans(void) {
  int16_t a[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3}, out[6];
  lc_layout il = contiguous(2, shape, 2), ol = contiguous(2, shape, 8);
  lc_reduce_call c = call(LC_RED_CUMSUM, LC_INT16, LC_INT64, LC_INT64, a, &il, out, &ol, 2);
  lc_reduce_host(&c);
  int64_t want[6] = {1, 3, 6, 4, 9, 15};
  for (int i = 0; i < 6; i++) CHECK_EQ(out[i], want[i]);
  /* flattened: every axis, in C order */
  c.axes = 3;
  c.op = LC_RED_CUMPROD;
  lc_reduce_host(&c);
  int64_t prod[6] = {1, 2, 6, 24, 120, 720};
  for (int i = 0; i < 6; i++) CHECK_EQ(out[i], prod[i]);
  /* along axis 1 of the transpose */
  char e[LC_ERRLEN];
  CHECK_OK(lc_layout_transpose(&il, NULL, e));
  int64_t tshape[2] = {3, 2};
  ol = contiguous(2, tshape, 8);
  c = call(LC_RED_CUMSUM, LC_INT16, LC_INT64, LC_INT64, a, &il, out, &ol, 2);
  lc_reduce_host(&c);
  int64_t tw[6] = {1, 5, 2, 7, 3, 9};
  for (int i = 0; i < 6; i++) CHECK_EQ(out[i], tw[i]);
  return 0;
}

static int empty(void) {
  float a[1] = {7};
  int64_t shape[2] = {3, 0};
  float out[3] = {9, 9, 9};
  lc_layout il = contiguous(2, shape, 4), ol = reduced(2, shape, 2, 4);
  lc_reduce_call c = call(LC_RED_PROD, LC_FLOAT32, LC_FLOAT32, LC_FLOAT32, a, &il, out, &ol, 2);
  lc_reduce_host(&c);
  for (int i = 0; i < 3; i++) CHECK(out[i] == 1.0f);
  c.op = LC_RED_MEAN;
  lc_reduce_host(&c);
  CHECK(isnan(out[0]));
  return 0;
}

/* 2^24 float32 values of 1e-3..1: the pairwise sum's relative error
** against a double sum stays under 1e-5 (a serial float sum's is ~1e-2) */
static int accuracy(void) {
  enum { N = 1 << 24 };
  float *a = malloc(sizeof(float) * N), out = 0;
  CHECK(a != NULL);
  uint32_t s = 12345;
  double exact = 0;
  for (int i = 0; i < N; i++) {
    s = s * 1664525u + 1013904223u;
    a[i] = (float)(1e-3 + (1 - 1e-3) * (double)(s >> 8) / (double)(1 << 24));
    exact += a[i];
  }
  int64_t shape[1] = {N};
  lc_layout il = contiguous(1, shape, 4), ol = reduced(1, shape, 1, 4);
  lc_reduce_call c = call(LC_RED_SUM, LC_FLOAT32, LC_FLOAT32, LC_FLOAT32, a, &il, &out, &ol, 1);
  lc_reduce_host(&c);
  double rel = fabs(out - exact) / exact;
  /* the same elements as a 2-d {4096, 4096} summed over both axes, transposed */
  int64_t sq[2] = {4096, 4096};
  float out2 = 0;
  lc_layout l2 = contiguous(2, sq, 4), o2 = reduced(2, sq, 3, 4);
  char e[LC_ERRLEN];
  lc_layout_transpose(&l2, NULL, e);
  c = call(LC_RED_SUM, LC_FLOAT32, LC_FLOAT32, LC_FLOAT32, a, &l2, &out2, &o2, 3);
  lc_reduce_host(&c);
  double rel2 = fabs(out2 - exact) / exact;
  free(a);
  if (getenv("REDUCE_TEST_VERBOSE")) printf("relative errors %g, %g\n", rel, rel2);
  if (!(rel < 1e-5)) return failf(__FILE__, __LINE__, "relative error %g", rel);
  if (!(rel2 < 1e-5)) return failf(__FILE__, __LINE__, "relative error %g (2-d)", rel2);
  return 0;
}

static int float_to_int(void) {
  /* sum of float64 with dtype=int32: each element truncated toward zero */
  double a[3] = {1.9, -2.9, 3.5};
  int64_t shape[1] = {3};
  int32_t o = 0;
  lc_layout il = contiguous(1, shape, 8), ol = reduced(1, shape, 1, 4);
  lc_reduce_call c = call(LC_RED_SUM, LC_FLOAT64, LC_INT32, LC_INT32, a, &il, &o, &ol, 1);
  lc_reduce_host(&c);
  CHECK_EQ(o, 1 - 2 + 3);
  a[0] = NAN;                   /* no undefined behaviour: integer indefinite */
  a[1] = 1e300;
  lc_reduce_host(&c);
  CHECK_EQ(o, 3);               /* 2 * 0x80000000_00000000, low 32 bits 0, + 3 */
  return 0;
}

#define T(name) {#name, name}
static const unit_test tests[] = {
  T(dtypes), T(plan_merges), T(sum_axes), T(int_wraps), T(nan_rules), T(half_sum),
  T(scans), T(empty), T(accuracy), T(float_to_int),
};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

int main(int argc, char **argv) {
  return unit_main("reduce_test", tests, NTESTS, argc, argv);
}
