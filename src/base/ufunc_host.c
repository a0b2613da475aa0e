/*
** ufunc_host: the elementwise operations run on host-addressable memory
** (host and pinned arrays on every backend; the simulator's device memory,
** from its stream executor). NumPy's design: the operands' layouts,
** broadcast to the output's shape, are collapsed to as few axes as their
** strides allow; an inner loop per (operation, loop dtype) runs along the
** last axis; operands whose dtype is not the loop's are converted through
** small buffers, a chunk at a time. Each loop has a contiguous fast path
** the compiler vectorises, and scalar-operand paths.
*/
#include "ufunc.h"

#include <stdint.h>
#include <string.h>

#include "ufunc_ops.h"

typedef void (*uf_loop)(char **p, const int64_t *s, int64_t n);

#define ALIGNED(p, T) (((uintptr_t)(p) & (_Alignof(T) - 1)) == 0)
#define STORE(T, p, v) do { T v_ = (v); memcpy((p), &v_, sizeof v_); } while (0)

/* one loop of two inputs of T giving R: out = EXPR(A, B) */
#define BIN(NAME, T, R, EXPR)                                                      \
  static void NAME(char **p, const int64_t *s, int64_t n) {                        \
    char *a = p[0], *b = p[1], *o = p[2];                                          \
    const int64_t sa = s[0], sb = s[1], so = s[2];                                 \
    if (ALIGNED(a, T) && ALIGNED(b, T) && ALIGNED(o, R) && so == sizeof(R)) {      \
      R *z = (R *)(void *)o;                                                       \
      if (sa == sizeof(T) && sb == sizeof(T)) {                                    \
        const T *x = (const T *)(void *)a, *y = (const T *)(void *)b;              \
        for (int64_t i = 0; i < n; i++) { T A = x[i], B = y[i]; z[i] = (EXPR); }   \
        return;                                                                    \
      }                                                                            \
      if (sa == sizeof(T) && sb == 0) {                                            \
        const T *x = (const T *)(void *)a, B = *(const T *)(void *)b;              \
        for (int64_t i = 0; i < n; i++) { T A = x[i]; z[i] = (EXPR); }             \
        return;                                                                    \
      }                                                                            \
      if (sa == 0 && sb == sizeof(T)) {                                            \
        const T *y = (const T *)(void *)b, A = *(const T *)(void *)a;              \
        for (int64_t i = 0; i < n; i++) { T B = y[i]; z[i] = (EXPR); }             \
        return;                                                                    \
      }                                                                            \
    }                                                                              \
    for (int64_t i = 0; i < n; i++) {                                              \
      T A, B;                                                                      \
      memcpy(&A, a + i * sa, sizeof A);                                            \
      memcpy(&B, b + i * sb, sizeof B);                                            \
      STORE(R, o + i * so, (EXPR));                                                \
    }                                                                              \
  }

/* one loop of one input of T giving R */
#define UN(NAME, T, R, EXPR)                                                       \
  static void NAME(char **p, const int64_t *s, int64_t n) {                        \
    char *a = p[0], *o = p[1];                                                     \
    const int64_t sa = s[0], so = s[1];                                            \
    if (ALIGNED(a, T) && ALIGNED(o, R) && sa == sizeof(T) && so == sizeof(R)) {    \
      const T *x = (const T *)(void *)a;                                           \
      R *z = (R *)(void *)o;                                                       \
      for (int64_t i = 0; i < n; i++) { T A = x[i]; z[i] = (EXPR); }               \
      return;                                                                      \
    }                                                                              \
    for (int64_t i = 0; i < n; i++) {                                              \
      T A;                                                                         \
      memcpy(&A, a + i * sa, sizeof A);                                            \
      STORE(R, o + i * so, (EXPR));                                                \
    }                                                                              \
  }

/* one loop of three inputs (the first of T0) giving R */
#define TER(NAME, T0, T, R, EXPR)                                                  \
  static void NAME(char **p, const int64_t *s, int64_t n) {                        \
    for (int64_t i = 0; i < n; i++) {                                              \
      T0 A;                                                                        \
      T B, C;                                                                      \
      memcpy(&A, p[0] + i * s[0], sizeof A);                                       \
      memcpy(&B, p[1] + i * s[1], sizeof B);                                       \
      memcpy(&C, p[2] + i * s[2], sizeof C);                                       \
      STORE(R, p[3] + i * s[3], (EXPR));                                           \
    }                                                                              \
  }

/* bool elements are bytes: 0 false, anything else true */
typedef uint8_t lc_b8;

/* the operations every numeric loop type has: T, suffix */
#define NUMERIC_LOOPS(T, S)                                                        \
  BIN(add_##S, T, T, lc_add_##S(A, B))                                             \
  BIN(subtract_##S, T, T, lc_subtract_##S(A, B))                                   \
  BIN(multiply_##S, T, T, lc_multiply_##S(A, B))                                   \
  BIN(floor_divide_##S, T, T, lc_floor_divide_##S(A, B))                           \
  BIN(mod_##S, T, T, lc_mod_##S(A, B))                                             \
  BIN(power_##S, T, T, lc_power_##S(A, B))                                         \
  BIN(maximum_##S, T, T, lc_maximum_##S(A, B))                                     \
  BIN(minimum_##S, T, T, lc_minimum_##S(A, B))                                     \
  BIN(eq_##S, T, lc_b8, A == B)                                                    \
  BIN(ne_##S, T, lc_b8, A != B)                                                    \
  BIN(lt_##S, T, lc_b8, A < B)                                                     \
  BIN(le_##S, T, lc_b8, A <= B)                                                    \
  BIN(gt_##S, T, lc_b8, A > B)                                                     \
  BIN(ge_##S, T, lc_b8, A >= B)                                                    \
  UN(negative_##S, T, T, lc_negative_##S(A))                                       \
  UN(abs_##S, T, T, lc_abs_##S(A))                                                 \
  UN(sign_##S, T, T, lc_sign_##S(A))                                               \
  TER(clip_##S, T, T, T, lc_minimum_##S(lc_maximum_##S(A, B), C))                  \
  TER(where_##S, lc_b8, T, T, A ? B : C)

#define FLOAT_LOOPS(T, S)                                                          \
  BIN(divide_##S, T, T, lc_divide_##S(A, B))                                       \
  BIN(atan2_##S, T, T, lc_atan2_##S(A, B))                                         \
  BIN(hypot_##S, T, T, lc_hypot_##S(A, B))                                         \
  UN(sqrt_##S, T, T, lc_sqrt_##S(A))                                               \
  UN(log_##S, T, T, lc_log_##S(A))                                                 \
  UN(log2_##S, T, T, lc_log2_##S(A))                                               \
  UN(log10_##S, T, T, lc_log10_##S(A))                                             \
  UN(sin_##S, T, T, lc_sin_##S(A))                                                 \
  UN(cos_##S, T, T, lc_cos_##S(A))                                                 \
  UN(tan_##S, T, T, lc_tan_##S(A))                                                 \
  UN(tanh_##S, T, T, lc_tanh_##S(A))                                               \
  UN(floor_##S, T, T, lc_floor_##S(A))                                             \
  UN(ceil_##S, T, T, lc_ceil_##S(A))                                               \
  UN(log1p_##S, T, T, lc_log1p_##S(A))                                             \
  UN(expm1_##S, T, T, lc_expm1_##S(A))                                             \
  UN(rint_##S, T, T, lc_rint_##S(A))                                               \
  BIN(logaddexp_##S, T, T, lc_logaddexp_##S(A, B))                                 \
  UN(isnan_##S, T, lc_b8, lc_isnan_##S(A))                                         \
  UN(isinf_##S, T, lc_b8, lc_isinf_##S(A))                                         \
  UN(isfinite_##S, T, lc_b8, lc_isfinite_##S(A))

/* ---- exp of float32 ---------------------------------------------------------
** Float arithmetic alone, so that a vector holds 16 lanes under AVX-512
** (8 in double): x = k ln 2 + r with |r| <= ln 2 / 2 (ln 2 in two parts,
** the first with zero low bits so that k times it is exact, and what the
** second subtraction rounds away kept in rl); exp(r) = 1 + r + r^2 q(r)
** with q of degree 4 fitted to the least largest relative error on that
** interval (3.1e-9 with these float coefficients, a twentieth of a unit in
** the last place), 1 + r added in a sum that keeps its rounding error, so
** that the last addition's rounding dominates. 2^k is made in two
** factors, each a power of two built in the exponent's bits, so that
** results from 2^-149 (subnormal: one rounding, in the last product) to
** overflow need no branch. Over every float32 input, within 1 ulp of
** glibc's expf (the nearest float32 but rarely); the nearest for about
** 39 inputs in 40 spread evenly over the range (a double evaluation,
** nearly all, took twice the time). No branch and no call, so the loop
** vectorises (with -fno-trapping-math, the Makefile's, the compiler may
** evaluate both sides of the clamps). The clamps keep k in range: exp(89)
** still overflows to infinity, exp(-104) underflows to 0; NaN passes
** through them (its comparisons are false) and out of the polynomial. */

/* 2^n for an integer n in [-126, 127] held in a float */
static inline __attribute__((always_inline)) float pow2f_int(float n) {
  const float shift = 0x1.8p23f;            /* adding it puts n in the low bits */
  float t = n + shift;
  int32_t bits;
  memcpy(&bits, &t, sizeof bits);
  int32_t e = (((bits & 0xffff) ^ 0x8000) - 0x8000 + 127) * (1 << 23);
  float p;
  memcpy(&p, &e, sizeof p);
  return p;
}

/* always inline: the vectoriser sees no call */
static inline __attribute__((always_inline)) float host_expf(float x) {
  x = x < -104.0f ? -104.0f : x;
  x = x > 89.0f ? 89.0f : x;
  const float shift = 0x1.8p23f;
  float k = (x * 0x1.715476p0f + shift) - shift;  /* round(x / ln 2) */
  float r1 = x - k * 0x1.62ep-1f;           /* exact: |k| <= 150, 13 bits of ln 2 */
  float kl = k * 0x1.0bfbe8p-15f;           /* ln 2 - the part above */
  float r = r1 - kl;
  float rl = (r1 - r) - kl;                 /* what r lost */
  float q = 0x1.6a4d4ap-10f;
  q = q * r + 0x1.123986p-7f;
  q = q * r + 0x1.5558b0p-5f;
  q = q * r + 0x1.555492p-3f;
  q = q * r + 0x1.fffffcp-2f;
  float a = 1.0f + r, al = (1.0f - a) + r;  /* 1 + r = a + al */
  float v = a + (al + (rl + (r * r) * q));
  float kh = (k * 0.5f + shift) - shift;    /* k in two halves, each a normal 2^n */
  return v * pow2f_int(kh) * pow2f_int(k - kh);
}

/* the contiguous loop for AVX-512 and AVX2 where the CPU has them (16
** and 8 floats a vector) and for any x86-64: the same operations (ISO
** C's -std=c11 contracts nothing into FMAs), so the same results */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void expf_run(const float *restrict x, float *restrict z, int64_t n) {
  for (int64_t i = 0; i < n; i++) z[i] = host_expf(x[i]);
}

static void exp_f32(char **p, const int64_t *s, int64_t n) {
  char *a = p[0], *o = p[1];
  if (ALIGNED(a, float) && ALIGNED(o, float) && s[0] == sizeof(float) && s[1] == sizeof(float)) {
    expf_run((const float *)(void *)a, (float *)(void *)o, n);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    float A;
    memcpy(&A, a + i * s[0], sizeof A);
    STORE(float, o + i * s[1], host_expf(A));
  }
}

/* ---- exp of float64 ---------------------------------------------------------
** glibc's exp is a call per element, which no loop vectorises: this one is
** inline arithmetic alone. x = k ln 2 + r with |r| <= ln 2 / 2 (ln 2 in
** two parts, the first with zero low bits so that k times it is exact, and
** what the second subtraction rounds away kept in rl); exp(r) = 1 + r +
** r^2/2 + r^3 (1/3! + ... + r^11/14!) (the series' rest under 2^-60), the
** first three terms added in two sums that keep their rounding errors (r^2
** exact as hi + lo by Dekker's splitting), so that one rounding at the end
** dominates: within 1 ulp of exp, and glibc's result (itself not always
** the nearest double) but for about 1 input in 200. 2^k is made in two
** factors, each a power of two built in the exponent's bits, so that
** results from 2^-1074 (subnormal: one rounding, in the last product) to
** overflow need no branch. The clamps as in host_expf's: exp(710) is
** infinity, exp(-746) is 0, NaN passes through. */

/* 2^n for an integer n in [-1022, 1023] held in a double */
static inline __attribute__((always_inline)) double pow2_int(double n) {
  const double shift = 0x1.8p52;             /* adding it puts n in the low bits */
  double t = n + shift;
  int64_t bits;
  memcpy(&bits, &t, sizeof bits);
  int64_t e = (((bits & 0xffffffff) ^ 0x80000000) - 0x80000000 + 1023) * ((int64_t)1 << 52);
  double p;
  memcpy(&p, &e, sizeof p);
  return p;
}

/* always inline: the vectoriser sees no call */
static inline __attribute__((always_inline)) double host_exp(double x) {
  x = x < -746.0 ? -746.0 : x;
  x = x > 710.0 ? 710.0 : x;
  const double shift = 0x1.8p52;
  double k = (x * 0x1.71547652b82fep0 + shift) - shift;   /* round(x / ln 2) */
  double r1 = x - k * 0x1.62e42fefa3800p-1;  /* exact: |k| < 2^11, 11 zero bits */
  double kl = k * 0x1.ef35793c7673p-45;      /* ln 2 - the part above */
  double r = r1 - kl;
  double rl = (r1 - r) - kl;                 /* what r lost */
  double c = r * 134217729.0;                /* 2^27 + 1: r's high 26 bits ... */
  double rh = c - (c - r), rt = r - rh;      /* ... and the rest */
  double r2 = r * r;
  double r2l = ((rh * rh - r2) + 2.0 * rh * rt) + rt * rt;   /* r^2 = r2 + r2l */
  double q = 1.0 / 87178291200;
  q = q * r + 1.0 / 6227020800;
  q = q * r + 1.0 / 479001600;
  q = q * r + 1.0 / 39916800;
  q = q * r + 1.0 / 3628800;
  q = q * r + 1.0 / 362880;
  q = q * r + 1.0 / 40320;
  q = q * r + 1.0 / 5040;
  q = q * r + 1.0 / 720;
  q = q * r + 1.0 / 120;
  q = q * r + 1.0 / 24;
  q = q * r + 1.0 / 6;
  double s = r2 * r * q;                     /* the terms from r^3 on */
  double a = 1.0 + r, al = (1.0 - a) + r;    /* 1 + r = a + al */
  double h2 = 0.5 * r2;
  double b = a + h2, bv = b - a;
  double bl = (a - (b - bv)) + (h2 - bv);    /* a + r^2/2 = b + bl */
  double v = b + (((bl + al) + 0.5 * r2l) + (s + rl * (1.0 + r)));
  double kh = (k * 0.5 + shift) - shift;     /* k in two halves, each a normal 2^n */
  return v * pow2_int(kh) * pow2_int(k - kh);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void exp_run(const double *restrict x, double *restrict z, int64_t n) {
  for (int64_t i = 0; i < n; i++) z[i] = host_exp(x[i]);
}

static void exp_f64(char **p, const int64_t *s, int64_t n) {
  char *a = p[0], *o = p[1];
  if (ALIGNED(a, double) && ALIGNED(o, double) && s[0] == sizeof(double) &&
      s[1] == sizeof(double)) {
    exp_run((const double *)(void *)a, (double *)(void *)o, n);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    double A;
    memcpy(&A, a + i * s[0], sizeof A);
    STORE(double, o + i * s[1], host_exp(A));
  }
}

/* code, C type, suffix */
#define INT_TYPES(X)                                                               \
  X(INT8, int8_t, i8) X(INT16, int16_t, i16) X(INT32, int32_t, i32)                \
  X(INT64, int64_t, i64) X(UINT8, uint8_t, u8) X(UINT16, uint16_t, u16)            \
  X(UINT32, uint32_t, u32) X(UINT64, uint64_t, u64)
#define FLOAT_TYPES(X) X(FLOAT32, float, f32) X(FLOAT64, double, f64)

#define GEN_NUMERIC(code, T, S) NUMERIC_LOOPS(T, S)
#define GEN_FLOAT(code, T, S) FLOAT_LOOPS(T, S)
INT_TYPES(GEN_NUMERIC)
FLOAT_TYPES(GEN_NUMERIC)
FLOAT_TYPES(GEN_FLOAT)

/* bool */
BIN(add_b, lc_b8, lc_b8, A || B)
BIN(multiply_b, lc_b8, lc_b8, A && B)
BIN(maximum_b, lc_b8, lc_b8, A || B)
BIN(minimum_b, lc_b8, lc_b8, A && B)
BIN(eq_b, lc_b8, lc_b8, !A == !B)
BIN(ne_b, lc_b8, lc_b8, !A != !B)
BIN(lt_b, lc_b8, lc_b8, !A && B)
BIN(le_b, lc_b8, lc_b8, !A || B)
BIN(gt_b, lc_b8, lc_b8, A && !B)
BIN(ge_b, lc_b8, lc_b8, A || !B)
BIN(logical_and_b, lc_b8, lc_b8, A && B)
BIN(logical_or_b, lc_b8, lc_b8, A || B)
BIN(logical_xor_b, lc_b8, lc_b8, !A != !B)
UN(abs_b, lc_b8, lc_b8, A != 0)
UN(logical_not_b, lc_b8, lc_b8, !A)
TER(clip_b, lc_b8, lc_b8, lc_b8, (A || B) && C)
TER(where_b, lc_b8, lc_b8, lc_b8, A ? B != 0 : C != 0)

#define ROW_NUMERIC(code, T, S)                                                    \
  [LC_UF_ADD][LC_##code] = add_##S, [LC_UF_SUBTRACT][LC_##code] = subtract_##S,    \
  [LC_UF_MULTIPLY][LC_##code] = multiply_##S,                                      \
  [LC_UF_FLOOR_DIVIDE][LC_##code] = floor_divide_##S, [LC_UF_MOD][LC_##code] = mod_##S, \
  [LC_UF_POWER][LC_##code] = power_##S, [LC_UF_MAXIMUM][LC_##code] = maximum_##S,  \
  [LC_UF_MINIMUM][LC_##code] = minimum_##S, [LC_UF_EQ][LC_##code] = eq_##S,        \
  [LC_UF_NE][LC_##code] = ne_##S, [LC_UF_LT][LC_##code] = lt_##S,                  \
  [LC_UF_LE][LC_##code] = le_##S, [LC_UF_GT][LC_##code] = gt_##S,                  \
  [LC_UF_GE][LC_##code] = ge_##S, [LC_UF_NEGATIVE][LC_##code] = negative_##S,      \
  [LC_UF_ABS][LC_##code] = abs_##S, [LC_UF_SIGN][LC_##code] = sign_##S,            \
  [LC_UF_CLIP][LC_##code] = clip_##S, [LC_UF_WHERE][LC_##code] = where_##S,
#define ROW_FLOAT(code, T, S)                                                      \
  [LC_UF_DIVIDE][LC_##code] = divide_##S, [LC_UF_ATAN2][LC_##code] = atan2_##S,    \
  [LC_UF_HYPOT][LC_##code] = hypot_##S, [LC_UF_SQRT][LC_##code] = sqrt_##S,        \
  [LC_UF_EXP][LC_##code] = exp_##S, [LC_UF_LOG][LC_##code] = log_##S,              \
  [LC_UF_LOG2][LC_##code] = log2_##S, [LC_UF_LOG10][LC_##code] = log10_##S,        \
  [LC_UF_SIN][LC_##code] = sin_##S, [LC_UF_COS][LC_##code] = cos_##S,              \
  [LC_UF_TAN][LC_##code] = tan_##S, [LC_UF_TANH][LC_##code] = tanh_##S,            \
  [LC_UF_FLOOR][LC_##code] = floor_##S, [LC_UF_CEIL][LC_##code] = ceil_##S,        \
  [LC_UF_LOG1P][LC_##code] = log1p_##S, [LC_UF_EXPM1][LC_##code] = expm1_##S,      \
  [LC_UF_RINT][LC_##code] = rint_##S, [LC_UF_LOGADDEXP][LC_##code] = logaddexp_##S, \
  [LC_UF_ISNAN][LC_##code] = isnan_##S, [LC_UF_ISINF][LC_##code] = isinf_##S,      \
  [LC_UF_ISFINITE][LC_##code] = isfinite_##S,

/* loops[op][loop dtype] (the dtype of the inputs, of where's second) */
static const uf_loop loops[LC_UF_NOPS][LC_NTYPES] = {
  INT_TYPES(ROW_NUMERIC)
  FLOAT_TYPES(ROW_NUMERIC)
  FLOAT_TYPES(ROW_FLOAT)
  [LC_UF_ADD][LC_BOOL] = add_b, [LC_UF_MULTIPLY][LC_BOOL] = multiply_b,
  [LC_UF_MAXIMUM][LC_BOOL] = maximum_b, [LC_UF_MINIMUM][LC_BOOL] = minimum_b,
  [LC_UF_EQ][LC_BOOL] = eq_b, [LC_UF_NE][LC_BOOL] = ne_b, [LC_UF_LT][LC_BOOL] = lt_b,
  [LC_UF_LE][LC_BOOL] = le_b, [LC_UF_GT][LC_BOOL] = gt_b, [LC_UF_GE][LC_BOOL] = ge_b,
  [LC_UF_LOGICAL_AND][LC_BOOL] = logical_and_b, [LC_UF_LOGICAL_OR][LC_BOOL] = logical_or_b,
  [LC_UF_LOGICAL_XOR][LC_BOOL] = logical_xor_b, [LC_UF_ABS][LC_BOOL] = abs_b,
  [LC_UF_LOGICAL_NOT][LC_BOOL] = logical_not_b, [LC_UF_CLIP][LC_BOOL] = clip_b,
  [LC_UF_WHERE][LC_BOOL] = where_b,
};

bool lc_ufunc_has_loop(lc_ufunc_op op, const lc_dtype *loop) {
  if (op == LC_UF_CAST) return true;
  return loop->code < LC_NTYPES && loops[op][loop->code] != NULL;
}

/* ---- conversions ---------------------------------------------------------- */
/* Between the native dtypes (all but float16 and bfloat16), by the kinds of
** source and destination: to bool a nonzero test, float to integer
** truncated and saturated (ufunc_ops.h's lc_to_*), the rest C's. */
#define CONV_TO_b(x, D, DS, SK) ((lc_b8)((x) != 0))
#define CONV_TO_i(x, D, DS, SK) CONV_INT_##SK(x, D, DS)
#define CONV_TO_u(x, D, DS, SK) CONV_INT_##SK(x, D, DS)
#define CONV_TO_f(x, D, DS, SK) ((D)(x))
#define CONV_INT_b(x, D, DS) ((D)((x) != 0))
#define CONV_INT_i(x, D, DS) ((D)(x))
#define CONV_INT_u(x, D, DS) ((D)(x))
#define CONV_INT_f(x, D, DS) lc_to_##DS((double)(x))

typedef void (*cast_loop)(char *d, int64_t ds, const char *s, int64_t ss, int64_t n);

#define CAST(SC, ST, SK, DC, DT, DK, DS)                                             \
  static void cast_##SC##_##DC(char *d, int64_t ds, const char *s, int64_t ss, int64_t n) { \
    if (ds == sizeof(DT) && ss == sizeof(ST) && ALIGNED(d, DT) && ALIGNED(s, ST)) {   \
      const ST *x = (const ST *)(const void *)s;                                     \
      DT *y = (DT *)(void *)d;                                                       \
      for (int64_t i = 0; i < n; i++) y[i] = CONV_TO_##DK(x[i], DT, DS, SK);         \
      return;                                                                        \
    }                                                                                \
    for (int64_t i = 0; i < n; i++) {                                                \
      ST x;                                                                          \
      memcpy(&x, s + i * ss, sizeof x);                                              \
      STORE(DT, d + i * ds, CONV_TO_##DK(x, DT, DS, SK));                            \
    }                                                                                \
  }

/* code, C type, kind, suffix */
#define NATIVE(X, ...)                                                              \
  X(__VA_ARGS__, BOOL, lc_b8, b, b) X(__VA_ARGS__, INT8, int8_t, i, i8)             \
  X(__VA_ARGS__, INT16, int16_t, i, i16) X(__VA_ARGS__, INT32, int32_t, i, i32)     \
  X(__VA_ARGS__, INT64, int64_t, i, i64) X(__VA_ARGS__, UINT8, uint8_t, u, u8)      \
  X(__VA_ARGS__, UINT16, uint16_t, u, u16) X(__VA_ARGS__, UINT32, uint32_t, u, u32) \
  X(__VA_ARGS__, UINT64, uint64_t, u, u64) X(__VA_ARGS__, FLOAT32, float, f, f32)   \
  X(__VA_ARGS__, FLOAT64, double, f, f64)
#define NATIVE_SRC(X)                                                               \
  X(BOOL, lc_b8, b) X(INT8, int8_t, i) X(INT16, int16_t, i) X(INT32, int32_t, i)    \
  X(INT64, int64_t, i) X(UINT8, uint8_t, u) X(UINT16, uint16_t, u)                  \
  X(UINT32, uint32_t, u) X(UINT64, uint64_t, u) X(FLOAT32, float, f) X(FLOAT64, double, f)

#define CAST_DST(SC, ST, SK, DC, DT, DK, DS) CAST(SC, ST, SK, DC, DT, DK, DS)
#define CAST_SRC(SC, ST, SK) NATIVE(CAST_DST, SC, ST, SK)
NATIVE_SRC(CAST_SRC)

#define CAST_ROW_DST(SC, ST, SK, DC, DT, DK, DS) [LC_##SC][LC_##DC] = cast_##SC##_##DC,
#define CAST_ROW_SRC(SC, ST, SK) NATIVE(CAST_ROW_DST, SC, ST, SK)
static const cast_loop casts[LC_NTYPES][LC_NTYPES] = {NATIVE_SRC(CAST_ROW_SRC)};

void lc_cast_host(const lc_dtype *to, char *dst, int64_t dstride,
                  const lc_dtype *from, const char *src, int64_t sstride, int64_t n) {
  if (!lc_dtype_is_narrow_float(to) && !lc_dtype_is_narrow_float(from)) {
    casts[from->code][to->code](dst, dstride, src, sstride, n);
    return;
  }
  /* a narrow float on either side: through double, rounded once into the
  ** destination (dtype.c's conversions are exact to and from double) */
  for (int64_t i = 0; i < n; i++) {
    double v;
    if (lc_dtype_is_narrow_float(from)) v = lc_dtype_load_float(from, src + i * sstride);
    else casts[from->code][LC_FLOAT64]((char *)&v, 8, src + i * sstride, sstride, 1);
    if (lc_dtype_is_narrow_float(to)) lc_dtype_store_float(to, dst + i * dstride, v);
    else casts[LC_FLOAT64][to->code](dst + i * dstride, dstride, (const char *)&v, 8, 1);
  }
}

/* ---- the iteration -------------------------------------------------------- */
#define MAXOPS 4           /* three inputs and the output */
#define CHUNK 512          /* elements converted at a time */

typedef struct iter {
  int ndim;
  int64_t shape[LC_MAXDIM];
  int64_t strides[MAXOPS][LC_MAXDIM];
} iter;

/* The operands' common shape (lay[0]'s) with size-1 axes dropped and
** neighbouring axes merged wherever every operand steps through them as
** one (lc_merge_axes). */
static void collapse(iter *it, int nops, const lc_layout *const *lay) {
  const lc_layout *l0 = lay[0];
  _Static_assert(MAXOPS == 4, "one row of strides an operand");
  int64_t *strides[MAXOPS] = {it->strides[0], it->strides[1], it->strides[2], it->strides[3]};
  memcpy(it->shape, l0->shape, sizeof it->shape[0] * (size_t)l0->ndim);
  for (int o = 0; o < nops; o++)
    memcpy(it->strides[o], lay[o]->strides, sizeof it->strides[o][0] * (size_t)l0->ndim);
  it->ndim = lc_merge_axes(l0->ndim, it->shape, nops, strides);
  if (it->ndim == 0) {          /* one element */
    it->ndim = 1;
    it->shape[0] = 1;
    for (int o = 0; o < nops; o++) it->strides[o][0] = 0;
  }
}

/* Call fn(ptrs, inner strides, n, ud) for each run along the last axis. */
typedef void (*run_fn)(char **p, const int64_t *s, int64_t n, void *ud);
static void each_run(const iter *it, int nops, char **base, run_fn fn, void *ud) {
  int64_t idx[LC_MAXDIM];
  memset(idx, 0, sizeof idx[0] * (size_t)it->ndim);
  int last = it->ndim - 1;
  int64_t inner[MAXOPS];
  char *p[MAXOPS];
  for (int o = 0; o < nops; o++) {
    inner[o] = it->strides[o][last];
    p[o] = base[o];
  }
  for (;;) {
    fn(p, inner, it->shape[last], ud);
    int ax = last - 1;
    for (; ax >= 0; ax--) {
      for (int o = 0; o < nops; o++) p[o] += it->strides[o][ax];
      if (++idx[ax] < it->shape[ax]) break;
      for (int o = 0; o < nops; o++) p[o] -= it->strides[o][ax] * it->shape[ax];
      idx[ax] = 0;
    }
    if (ax < 0) return;
  }
}

typedef struct run_state {
  const lc_ufunc_call *c;
  uf_loop loop;
  bool conv[MAXOPS];       /* operand o goes through a buffer */
} run_state;

static void run_cast(char **p, const int64_t *s, int64_t n, void *ud) {
  const lc_ufunc_call *c = ud;
  lc_cast_host(c->out.dtype, p[1], s[1], c->in[0].dtype, p[0], s[0], n);
}

static void run_direct(char **p, const int64_t *s, int64_t n, void *ud) {
  ((run_state *)ud)->loop(p, s, n);
}

/* a run with conversions: CHUNK elements at a time through buffers of the
** loop's dtypes */
static void run_buffered(char **p, const int64_t *s, int64_t n, void *ud) {
  run_state *st = ud;
  const lc_ufunc_call *c = st->c;
  int nin = c->nin;
  _Alignas(16) char buf[MAXOPS][CHUNK * 8];
  for (int64_t done = 0; done < n; done += CHUNK) {
    int64_t m = n - done < CHUNK ? n - done : CHUNK;
    char *q[MAXOPS];
    int64_t qs[MAXOPS];
    for (int o = 0; o < nin; o++) {
      char *at = p[o] + done * s[o];
      if (st->conv[o]) {
        const lc_dtype *want = c->types.in[o];
        lc_cast_host(want, buf[o], want->size, c->in[o].dtype, at, s[o], m);
        q[o] = buf[o];
        qs[o] = want->size;
      } else {
        q[o] = at;
        qs[o] = s[o];
      }
    }
    char *out = p[nin] + done * s[nin];
    if (st->conv[nin]) {
      q[nin] = buf[nin];
      qs[nin] = c->types.res->size;
    } else {
      q[nin] = out;
      qs[nin] = s[nin];
    }
    st->loop(q, qs, m);
    if (st->conv[nin])
      lc_cast_host(c->out.dtype, out, s[nin], c->types.res, buf[nin], c->types.res->size, m);
  }
}

int lc_ufunc_collapse(const lc_ufunc_call *c, int64_t *shape, int64_t (*strides)[LC_MAXDIM]) {
  int nin = c->op == LC_UF_CAST ? 1 : c->nin;
  /* the output first: collapse reads the common shape from lay[0] */
  const lc_layout *ordered[MAXOPS];
  ordered[0] = &c->out.lay;
  for (int o = 0; o < nin; o++) ordered[o + 1] = &c->in[o].lay;
  iter it;
  collapse(&it, nin + 1, ordered);
  /* back to inputs first, output last */
  memcpy(shape, it.shape, sizeof it.shape[0] * (size_t)it.ndim);
  for (int o = 0; o < nin; o++) memcpy(strides[o], it.strides[o + 1], sizeof it.strides[0]);
  memcpy(strides[nin], it.strides[0], sizeof it.strides[0]);
  return it.ndim;
}

/* Every array operand C-contiguous in its own itemsize, a scalar aside:
** their elements lie in the output's order, one run over all of them,
** which is what collapse finds, at a fraction of its cost (small arrays'
** math pays it on every call). */
static bool one_run(const lc_ufunc_call *c, int nin, iter *run) {
  for (int o = 0; o <= nin; o++) {
    const lc_ufunc_operand *op = o < nin ? &c->in[o] : &c->out;
    if (op->scalar) {
      run->strides[o][0] = 0;
      continue;
    }
    if (!lc_layout_is_c_contiguous(&op->lay, op->dtype->size)) return false;
    run->strides[o][0] = op->dtype->size;
  }
  run->ndim = 1;
  run->shape[0] = c->out.lay.size;
  return true;
}

void lc_ufunc_host(const lc_ufunc_call *c) {
  if (c->out.lay.size == 0) return;
  int nin = c->op == LC_UF_CAST ? 1 : c->nin, nops = nin + 1;
  char *base[MAXOPS];
  for (int o = 0; o < nin; o++) base[o] = c->in[o].scalar ? (char *)c->in[o].value : c->in[o].data;
  base[nin] = c->out.data;
  iter run;
  if (!one_run(c, nin, &run)) run.ndim = lc_ufunc_collapse(c, run.shape, run.strides);
  if (c->op == LC_UF_CAST) {
    each_run(&run, nops, base, run_cast, (void *)c);
    return;
  }
  run_state st = {.c = c};
  const lc_dtype *loop_type = c->types.in[c->op == LC_UF_WHERE ? 1 : 0];
  st.loop = loops[c->op][loop_type->code];
  bool any = false;
  for (int o = 0; o < nin; o++) any |= st.conv[o] = c->in[o].dtype != c->types.in[o];
  any |= st.conv[nin] = c->out.dtype != c->types.res;
  if (!any && run.ndim == 1) {       /* one run, no conversion: the loop itself */
    int64_t inner[MAXOPS];
    for (int o = 0; o < nops; o++) inner[o] = run.strides[o][0];
    st.loop(base, inner, run.shape[0]);
    return;
  }
  each_run(&run, nops, base, any ? run_buffered : run_direct, &st);
}
