/*
** ufunc_ops.h: what each elementwise operation of array math computes on
** one element, for every loop type: one definition read by the host's loops
** (src/base/ufunc_host.c, C11) and by the CUDA backend's kernels
** (kernels/ufunc.cu, NVRTC), so both backends give the same bits where the
** C library and CUDA's math agree.
**
** The rules are NumPy's: integer arithmetic wraps (done in the unsigned
** type: no C undefined behaviour); integer division and modulo by zero give
** 0, x // -1 wraps and x % -1 is 0; // and % floor (the remainder takes the
** divisor's sign); an integer to a negative power is 0 but for bases 1 and
** -1; maximum and minimum propagate NaN; sign keeps the dtype (NaN gives
** NaN); logaddexp of equal infinities is that infinity. Names are lc_<op>_<suffix>, suffix the loop type's (i8 ... f64).
*/
#ifndef LUACUDA_UFUNC_OPS_H
#define LUACUDA_UFUNC_OPS_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define LC_UF static __device__ __forceinline__
#define LC_UF_ISNAN(x) isnan(x)
/* NVRTC has no <stdint.h>; the same typedefs as the prelude's (the
** simulator's host compiler has its own) */
#ifndef __LC_SIM__
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#endif
#else
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#define LC_UF static inline
#define LC_UF_ISNAN(x) isnan(x)
#endif

/* ---- integers: T, an unsigned type at least as wide as T and as unsigned
** int (narrower ones would be promoted to int, whose overflow C leaves
** undefined), suffix ---- */
#define LC_UF_INT_COMMON(T, U, S)                                                   \
  LC_UF T lc_add_##S(T a, T b) { return (T)((U)a + (U)b); }                         \
  LC_UF T lc_subtract_##S(T a, T b) { return (T)((U)a - (U)b); }                    \
  LC_UF T lc_multiply_##S(T a, T b) { return (T)((U)a * (U)b); }                    \
  LC_UF T lc_negative_##S(T a) { return (T)((U)0 - (U)a); }                         \
  LC_UF T lc_maximum_##S(T a, T b) { return a > b ? a : b; }                        \
  LC_UF T lc_minimum_##S(T a, T b) { return a < b ? a : b; }                        \
  /* a to the power e >= 0, by squaring, wrapping */                                \
  LC_UF T lc_upower_##S(T a, U e) {                                                 \
    U r = 1, x = (U)a;                                                              \
    while (e) {                                                                     \
      if (e & 1) r *= x;                                                            \
      x *= x;                                                                       \
      e >>= 1;                                                                      \
    }                                                                               \
    return (T)r;                                                                    \
  }

#define LC_UF_SIGNED_OPS(T, U, S)                                                   \
  LC_UF_INT_COMMON(T, U, S)                                                         \
  LC_UF T lc_abs_##S(T a) { return a < 0 ? lc_negative_##S(a) : a; }                \
  LC_UF T lc_sign_##S(T a) { return (T)(a > 0 ? 1 : a < 0 ? -1 : 0); }             \
  LC_UF T lc_floor_divide_##S(T a, T b) {                                           \
    if (b == 0) return 0;                                                           \
    if (b == (T)-1) return lc_negative_##S(a);                                      \
    T q = (T)(a / b);                                                               \
    if (a % b != 0 && ((a < 0) != (b < 0))) q = (T)(q - 1);                         \
    return q;                                                                       \
  }                                                                                 \
  LC_UF T lc_mod_##S(T a, T b) {                                                    \
    if (b == 0 || b == (T)-1) return 0;                                             \
    T r = (T)(a % b);                                                               \
    if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);                             \
    return r;                                                                       \
  }                                                                                 \
  LC_UF T lc_power_##S(T a, T b) {                                                  \
    if (b < 0) return (T)(a == 1 ? 1 : a == (T)-1 ? ((b & 1) ? -1 : 1) : 0);        \
    return lc_upower_##S(a, (U)b);                                                  \
  }

#define LC_UF_UNSIGNED_OPS(T, U, S)                                                 \
  LC_UF_INT_COMMON(T, U, S)                                                         \
  LC_UF T lc_abs_##S(T a) { return a; }                                             \
  LC_UF T lc_sign_##S(T a) { return (T)(a != 0); }                                  \
  LC_UF T lc_floor_divide_##S(T a, T b) { return b == 0 ? 0 : (T)(a / b); }         \
  LC_UF T lc_mod_##S(T a, T b) { return b == 0 ? 0 : (T)(a % b); }                  \
  LC_UF T lc_power_##S(T a, T b) { return lc_upower_##S(a, b); }

LC_UF_SIGNED_OPS(int8_t, uint32_t, i8)
LC_UF_SIGNED_OPS(int16_t, uint32_t, i16)
LC_UF_SIGNED_OPS(int32_t, uint32_t, i32)
LC_UF_SIGNED_OPS(int64_t, uint64_t, i64)
LC_UF_UNSIGNED_OPS(uint8_t, uint32_t, u8)
LC_UF_UNSIGNED_OPS(uint16_t, uint32_t, u16)
LC_UF_UNSIGNED_OPS(uint32_t, uint32_t, u32)
LC_UF_UNSIGNED_OPS(uint64_t, uint64_t, u64)

/* ---- floats: T, suffix, the C library's suffix for T (f or nothing) ---- */
#define LC_UF_FLOAT_OPS(T, S, F)                                                    \
  LC_UF T lc_add_##S(T a, T b) { return a + b; }                                    \
  LC_UF T lc_subtract_##S(T a, T b) { return a - b; }                               \
  LC_UF T lc_multiply_##S(T a, T b) { return a * b; }                               \
  LC_UF T lc_divide_##S(T a, T b) { return a / b; }                                 \
  LC_UF T lc_negative_##S(T a) { return -a; }                                       \
  LC_UF T lc_abs_##S(T a) { return fabs##F(a); }                                    \
  LC_UF T lc_sign_##S(T a) {                                                        \
    return LC_UF_ISNAN(a) ? a : a > 0 ? (T)1 : a < 0 ? (T)-1 : (T)0;                \
  }                                                                                 \
  /* floored: the quotient rounded down, computed from the remainder so     */    \
  /* that a == b * q + r holds as nearly as floats allow                    */    \
  LC_UF T lc_floor_divide_##S(T a, T b) {                                           \
    if (b == 0) return a / b;                                                       \
    T r = fmod##F(a, b), q = (a - r) / b;                                           \
    if (r != 0 && ((b < 0) != (r < 0))) q -= 1;                                     \
    if (q == 0) return copysign##F((T)0, a / b);                                    \
    T f = floor##F(q);                                                              \
    return q - f > (T)0.5 ? f + 1 : f;                                              \
  }                                                                                 \
  LC_UF T lc_mod_##S(T a, T b) {                                                    \
    if (b == 0) return fmod##F(a, b);                                               \
    T r = fmod##F(a, b);                                                            \
    if (r == 0) return copysign##F((T)0, b);                                        \
    return (b < 0) != (r < 0) ? r + b : r;                                          \
  }                                                                                 \
  LC_UF T lc_power_##S(T a, T b) { return pow##F(a, b); }                           \
  LC_UF T lc_maximum_##S(T a, T b) { return LC_UF_ISNAN(a) || a > b ? a : b; }      \
  LC_UF T lc_minimum_##S(T a, T b) { return LC_UF_ISNAN(a) || a < b ? a : b; }      \
  LC_UF T lc_atan2_##S(T a, T b) { return atan2##F(a, b); }                         \
  LC_UF T lc_hypot_##S(T a, T b) { return hypot##F(a, b); }                         \
  LC_UF T lc_sqrt_##S(T a) { return sqrt##F(a); }                                   \
  LC_UF T lc_exp_##S(T a) { return exp##F(a); }                                     \
  LC_UF T lc_log_##S(T a) { return log##F(a); }                                     \
  LC_UF T lc_log2_##S(T a) { return log2##F(a); }                                  \
  LC_UF T lc_log10_##S(T a) { return log10##F(a); }                                \
  LC_UF T lc_sin_##S(T a) { return sin##F(a); }                                     \
  LC_UF T lc_cos_##S(T a) { return cos##F(a); }                                     \
  LC_UF T lc_tan_##S(T a) { return tan##F(a); }                                     \
  LC_UF T lc_tanh_##S(T a) { return tanh##F(a); }                                   \
  LC_UF T lc_floor_##S(T a) { return floor##F(a); }                                 \
  LC_UF T lc_ceil_##S(T a) { return ceil##F(a); }                                   \
  LC_UF T lc_log1p_##S(T a) { return log1p##F(a); }                                 \
  LC_UF T lc_expm1_##S(T a) { return expm1##F(a); }                                 \
  /* to the nearest integer, halves to even (the default rounding mode) */          \
  LC_UF T lc_rint_##S(T a) { return rint##F(a); }                                   \
  /* log(exp(a) + exp(b)) without overflow: the larger plus log1p of the      */    \
  /* smaller's exp relative to it; equal operands (infinities among them)     */    \
  /* give a + log 2 directly, since their difference would be NaN             */    \
  LC_UF T lc_logaddexp_##S(T a, T b) {                                              \
    if (a == b) return a + (T)0.6931471805599453094;                                \
    T d = a - b;                                                                    \
    if (LC_UF_ISNAN(d)) return d;                                                   \
    return d > 0 ? a + log1p##F(exp##F(-d)) : b + log1p##F(exp##F(d));              \
  }                                                                                 \
  LC_UF bool lc_isnan_##S(T a) { return LC_UF_ISNAN(a); }                           \
  LC_UF bool lc_isinf_##S(T a) { return isinf(a); }                                 \
  LC_UF bool lc_isfinite_##S(T a) { return isfinite(a); }

LC_UF_FLOAT_OPS(float, f32, f)
LC_UF_FLOAT_OPS(double, f64, )

/* ---- bool: + is or, * is and (NumPy's); max/min likewise ---- */
LC_UF bool lc_add_b(bool a, bool b) { return a || b; }
LC_UF bool lc_multiply_b(bool a, bool b) { return a && b; }
LC_UF bool lc_maximum_b(bool a, bool b) { return a || b; }
LC_UF bool lc_minimum_b(bool a, bool b) { return a && b; }
LC_UF bool lc_abs_b(bool a) { return a; }

/* ---- conversions to integers: truncated toward zero, saturated to the
** type's range, NaN giving 0 (what a GPU's cvt.rzi does; C leaves them
** undefined out of range) ---- */
#define LC_UF_TO_INT(T, S, LO, HI)                                                  \
  LC_UF T lc_to_##S(double x) {                                                     \
    if (LC_UF_ISNAN(x)) return 0;                                                   \
    if (x <= (double)(LO)) return LO;                                               \
    if (x >= (double)(HI)) return HI;                                               \
    return (T)x;                                                                    \
  }
LC_UF_TO_INT(int8_t, i8, -128, 127)
LC_UF_TO_INT(int16_t, i16, -32768, 32767)
LC_UF_TO_INT(int32_t, i32, -2147483647 - 1, 2147483647)
LC_UF_TO_INT(uint8_t, u8, 0, 255)
LC_UF_TO_INT(uint16_t, u16, 0, 65535)
LC_UF_TO_INT(uint32_t, u32, 0, 4294967295u)
/* 64 bits: the largest value rounds up to 2^63 or 2^64 as a double, so the
** top is tested with >= and given as the exact maximum */
LC_UF int64_t lc_to_i64(double x) {
  if (LC_UF_ISNAN(x)) return 0;
  if (x < -9223372036854775808.0) return (-9223372036854775807LL - 1);
  if (x >= 9223372036854775808.0) return 9223372036854775807LL;
  return (int64_t)x;
}
LC_UF uint64_t lc_to_u64(double x) {
  if (LC_UF_ISNAN(x) || x <= 0) return 0;
  if (x >= 18446744073709551616.0) return 18446744073709551615ULL;
  return (uint64_t)x;
}

#endif
