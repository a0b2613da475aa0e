// Array math's elementwise kernels on the CUDA backend: lc_ufunc<op, T>,
// compiled by NVRTC for each (operation, loop type) a program uses, at its
// first use (src/backend/cuda/ufunc.c). Built into the module behind
// kernels/abi.h and kernels/ufunc_ops.h, whose per-element rules the
// host's loops (src/base/ufunc_host.c) share; the conversions between
// element types follow the host's lc_cast_host: floats to integers
// truncated and saturated (NaN 0), to float16/bfloat16 rounded once.
#ifndef LUACUDA_ABI_H
#include "abi.h"
#endif
#ifndef LUACUDA_UFUNC_OPS_H
#include "ufunc_ops.h"
#endif

// ---- element types -----------------------------------------------------------
template <typename T> struct lc_is_float { static const bool value = false; };
template <> struct lc_is_float<float> { static const bool value = true; };
template <> struct lc_is_float<double> { static const bool value = true; };
template <typename A, typename B> struct lc_same { static const bool value = false; };
template <typename A> struct lc_same<A, A> { static const bool value = true; };

// float to integer T, as lc_to_* does
template <typename T>
__device__ __forceinline__ T lc_to_int(double x) {
  if constexpr (lc_same<T, int8_t>::value) return lc_to_i8(x);
  else if constexpr (lc_same<T, int16_t>::value) return lc_to_i16(x);
  else if constexpr (lc_same<T, int32_t>::value) return lc_to_i32(x);
  else if constexpr (lc_same<T, int64_t>::value) return lc_to_i64(x);
  else if constexpr (lc_same<T, uint8_t>::value) return lc_to_u8(x);
  else if constexpr (lc_same<T, uint16_t>::value) return lc_to_u16(x);
  else if constexpr (lc_same<T, uint32_t>::value) return lc_to_u32(x);
  else return lc_to_u64(x);
}

// one value of type S as T: bool a nonzero test, float to integer as above,
// the rest C's
template <typename T, typename S>
__device__ __forceinline__ T lc_conv(S x) {
  if constexpr (lc_same<T, bool>::value) return x != 0;
  else if constexpr (!lc_is_float<T>::value && lc_is_float<S>::value) return lc_to_int<T>((double)x);
  else return (T)x;
}

// a float of M significand bits (the implicit one included) and E
// exponent bits (abi.h's narrow_ rows) from and to its bits: float16 and
// bfloat16 by the hardware's conversions through float, any other format
// by its bits through double (exact one way, rounded to nearest even the
// other)
template <int M, int E>
__device__ __forceinline__ auto lc_narrow_load(unsigned long long h) {
  if constexpr (M == 11 && E == 5) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)h));
    return f;
  } else if constexpr (M == 8 && E == 8) {
    return __uint_as_float((unsigned)h << 16);
  } else {
    const int frac = M - 1, bias = (1 << (E - 1)) - 1;
    unsigned long long sign = (h >> (frac + E) & 1) << 63, m = h & ((1ull << frac) - 1);
    int e = (int)(h >> frac & ((1u << E) - 1));
    if (e == (1 << E) - 1)
      return __longlong_as_double((long long)(sign | 0x7ff0000000000000ull | m << (52 - frac)));
    double d = e ? ldexp((double)(m | 1ull << frac), e - bias - frac)
                 : ldexp((double)m, 1 - bias - frac);
    return sign ? -d : d;
  }
}
// f rounded to the format (f already holds the value rounded to odd where
// it came from a wider type: rounding again rounds once)
template <int M, int E>
__device__ __forceinline__ unsigned long long lc_narrow_store(float f) {
  unsigned short h;
  if constexpr (M == 11 && E == 5) {
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
  } else if constexpr (M == 8 && E == 8) {
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
  } else {
    const int frac = M - 1, emax = (1 << E) - 1, bias = (1 << (E - 1)) - 1;
    unsigned long long b = (unsigned long long)__double_as_longlong((double)f);
    unsigned long long sign = (b >> 63) << (frac + E), inf = (unsigned long long)emax << frac;
    int exp = (int)(b >> 52 & 0x7ff);
    unsigned long long man = b & ((1ull << 52) - 1);
    if (exp == 0x7ff) return sign | inf | (man ? 1ull << (frac - 1) : 0);
    int e = exp - 1023 + bias, shift = e >= 1 ? 52 - frac : 53 - frac - e;
    if (e >= emax) return sign | inf;
    if (exp == 0 || shift >= 64) return sign;
    unsigned long long m = e >= 1 ? man : man | 1ull << 52;
    unsigned long long q = m >> shift, rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    return sign | (e >= 1 ? ((unsigned long long)e << frac) + q : q);
  }
}
// a double as a float rounded to odd: rounding that float again to the 11
// or 8 bits of a half type gives the double correctly rounded (float keeps
// more than two extra bits)
__device__ __forceinline__ float lc_round_odd(double x) {
  float f = __double2float_rz(x);
  if (!isnan(x) && (double)f != x) f = __uint_as_float(__float_as_uint(f) | 1u);
  return f;
}

// a U at p, byte by byte where p may be misaligned (a packed record's
// field: a misaligned load faults on a GPU)
template <typename U>
__device__ __forceinline__ U lc_rd(const char *p, bool bytes) {
  if (!bytes) return *(const U *)(const void *)p;
  U v;
  for (unsigned k = 0; k < sizeof(U); k++) ((char *)&v)[k] = p[k];
  return v;
}
template <typename U>
__device__ __forceinline__ void lc_wr(char *p, U v, bool bytes) {
  if (!bytes) {
    *(U *)(void *)p = v;
    return;
  }
  for (unsigned k = 0; k < sizeof(U); k++) p[k] = ((const char *)&v)[k];
}

// an element of dtype CODE at p, as T
template <int CODE, typename T>
__device__ __forceinline__ T lc_load_as(const char *p, bool bytes) {
  typedef lc_elem<CODE> E;
  typedef typename E::bits B;
  if constexpr (E::kind_ == 'b') return lc_conv<T>((bool)(*(const unsigned char *)p != 0));
  else if constexpr (E::narrow_)
    return lc_conv<T>(lc_narrow_load<E::mant_, E::exp_>(lc_rd<B>(p, bytes)));
  else return lc_conv<T>(lc_rd<B>(p, bytes));
}

// v of type R stored as an element of dtype CODE at p
template <int CODE, typename R>
__device__ __forceinline__ void lc_store_as(char *p, R v, bool bytes) {
  typedef lc_elem<CODE> E;
  typedef typename E::bits B;
  if constexpr (E::kind_ == 'b') {
    *(unsigned char *)p = v != 0;
  } else if constexpr (E::narrow_) {
    static_assert(E::mant_ <= 24 && E::exp_ <= 8, "a float format that float holds (stored through it)");
    // rounded once: from a double (or a 64-bit integer, through one) by
    // way of a float rounded to odd
    float f;
    if constexpr (lc_same<R, double>::value || lc_same<R, int64_t>::value ||
                  lc_same<R, uint64_t>::value || lc_same<R, int32_t>::value ||
                  lc_same<R, uint32_t>::value)
      f = lc_round_odd((double)v);
    else
      f = (float)v;
    lc_wr<B>(p, (B)lc_narrow_store<E::mant_, E::exp_>(f), bytes);
  } else {
    lc_wr<B>(p, lc_conv<B>(v), bytes);
  }
}

// element i of type code at p, as T: a case per row of abi.h's list
template <typename T>
__device__ __forceinline__ T lc_load(const char *p, int code, bool bytes) {
  switch (code) {
#define LC_LOAD_CASE(c, ...) \
    case LC_UFT_##c: return lc_load_as<LC_UFT_##c, T>(p, bytes);
    LC_DTYPE_LIST(LC_LOAD_CASE)
#undef LC_LOAD_CASE
    default: return T();
  }
}

// v of type R stored as an element of type code at p
template <typename R>
__device__ __forceinline__ void lc_store(char *p, int code, R v, bool bytes) {
  switch (code) {
#define LC_STORE_CASE(c, ...) \
    case LC_UFT_##c: lc_store_as<LC_UFT_##c, R>(p, v, bytes); break;
    LC_DTYPE_LIST(LC_STORE_CASE)
#undef LC_STORE_CASE
    default: break;
  }
}

// ---- the operations as overloads of the loop type ----------------------------
#define LC_OVL1(name, T, S) \
  __device__ __forceinline__ T name(T a) { return name##_##S(a); }
#define LC_OVL2(name, T, S) \
  __device__ __forceinline__ T name(T a, T b) { return name##_##S(a, b); }
#define LC_OVLP(name, T, S) \
  __device__ __forceinline__ bool name(T a) { return name##_##S(a); }
#define LC_OVL_NUM(T, S)                                                            \
  LC_OVL2(lc_add, T, S) LC_OVL2(lc_subtract, T, S) LC_OVL2(lc_multiply, T, S)       \
  LC_OVL2(lc_floor_divide, T, S) LC_OVL2(lc_mod, T, S) LC_OVL2(lc_power, T, S)      \
  LC_OVL2(lc_maximum, T, S) LC_OVL2(lc_minimum, T, S) LC_OVL1(lc_negative, T, S)    \
  LC_OVL1(lc_abs, T, S) LC_OVL1(lc_sign, T, S)
#define LC_OVL_FLOAT(T, S)                                                          \
  LC_OVL2(lc_divide, T, S) LC_OVL2(lc_atan2, T, S) LC_OVL2(lc_hypot, T, S)          \
  LC_OVL1(lc_sqrt, T, S) LC_OVL1(lc_exp, T, S) LC_OVL1(lc_log, T, S)                \
  LC_OVL1(lc_log2, T, S) LC_OVL1(lc_log10, T, S) LC_OVL1(lc_sin, T, S)              \
  LC_OVL1(lc_cos, T, S) LC_OVL1(lc_tan, T, S) LC_OVL1(lc_tanh, T, S)                \
  LC_OVL1(lc_floor, T, S) LC_OVL1(lc_ceil, T, S) LC_OVL1(lc_log1p, T, S)            \
  LC_OVL1(lc_expm1, T, S) LC_OVL1(lc_rint, T, S) LC_OVL2(lc_logaddexp, T, S)        \
  LC_OVLP(lc_isnan, T, S) LC_OVLP(lc_isinf, T, S) LC_OVLP(lc_isfinite, T, S)
LC_OVL_NUM(int8_t, i8)
LC_OVL_NUM(int16_t, i16)
LC_OVL_NUM(int32_t, i32)
LC_OVL_NUM(int64_t, i64)
LC_OVL_NUM(uint8_t, u8)
LC_OVL_NUM(uint16_t, u16)
LC_OVL_NUM(uint32_t, u32)
LC_OVL_NUM(uint64_t, u64)
LC_OVL_NUM(float, f32)
LC_OVL_NUM(double, f64)
LC_OVL_FLOAT(float, f32)
LC_OVL_FLOAT(double, f64)
LC_OVL2(lc_add, bool, b)
LC_OVL2(lc_multiply, bool, b)
LC_OVL2(lc_maximum, bool, b)
LC_OVL2(lc_minimum, bool, b)
LC_OVL1(lc_abs, bool, b)

// OP on x, y, z (those it takes), giving its result type
template <int OP, typename T>
__device__ __forceinline__ auto lc_apply(T x, T y, T z) {
  if constexpr (OP == LC_UF_ADD) return lc_add(x, y);
  else if constexpr (OP == LC_UF_SUBTRACT) return lc_subtract(x, y);
  else if constexpr (OP == LC_UF_MULTIPLY) return lc_multiply(x, y);
  else if constexpr (OP == LC_UF_DIVIDE) return lc_divide(x, y);
  else if constexpr (OP == LC_UF_FLOOR_DIVIDE) return lc_floor_divide(x, y);
  else if constexpr (OP == LC_UF_MOD) return lc_mod(x, y);
  else if constexpr (OP == LC_UF_POWER) return lc_power(x, y);
  else if constexpr (OP == LC_UF_MAXIMUM) return lc_maximum(x, y);
  else if constexpr (OP == LC_UF_MINIMUM) return lc_minimum(x, y);
  else if constexpr (OP == LC_UF_ATAN2) return lc_atan2(x, y);
  else if constexpr (OP == LC_UF_HYPOT) return lc_hypot(x, y);
  else if constexpr (OP == LC_UF_EQ) return (bool)(x == y);
  else if constexpr (OP == LC_UF_NE) return (bool)(x != y);
  else if constexpr (OP == LC_UF_LT) return (bool)(x < y);
  else if constexpr (OP == LC_UF_LE) return (bool)(x <= y);
  else if constexpr (OP == LC_UF_GT) return (bool)(x > y);
  else if constexpr (OP == LC_UF_GE) return (bool)(x >= y);
  else if constexpr (OP == LC_UF_LOGICAL_AND) return (bool)(x && y);
  else if constexpr (OP == LC_UF_LOGICAL_OR) return (bool)(x || y);
  else if constexpr (OP == LC_UF_LOGICAL_XOR) return (bool)(!x != !y);
  else if constexpr (OP == LC_UF_NEGATIVE) return lc_negative(x);
  else if constexpr (OP == LC_UF_ABS) return lc_abs(x);
  else if constexpr (OP == LC_UF_SIGN) return lc_sign(x);
  else if constexpr (OP == LC_UF_SQRT) return lc_sqrt(x);
  else if constexpr (OP == LC_UF_EXP) return lc_exp(x);
  else if constexpr (OP == LC_UF_LOG) return lc_log(x);
  else if constexpr (OP == LC_UF_LOG2) return lc_log2(x);
  else if constexpr (OP == LC_UF_LOG10) return lc_log10(x);
  else if constexpr (OP == LC_UF_SIN) return lc_sin(x);
  else if constexpr (OP == LC_UF_COS) return lc_cos(x);
  else if constexpr (OP == LC_UF_TAN) return lc_tan(x);
  else if constexpr (OP == LC_UF_TANH) return lc_tanh(x);
  else if constexpr (OP == LC_UF_FLOOR) return lc_floor(x);
  else if constexpr (OP == LC_UF_CEIL) return lc_ceil(x);
  else if constexpr (OP == LC_UF_LOG1P) return lc_log1p(x);
  else if constexpr (OP == LC_UF_EXPM1) return lc_expm1(x);
  else if constexpr (OP == LC_UF_RINT) return lc_rint(x);
  else if constexpr (OP == LC_UF_LOGADDEXP) return lc_logaddexp(x, y);
  else if constexpr (OP == LC_UF_ISNAN) return lc_isnan(x);
  else if constexpr (OP == LC_UF_ISINF) return lc_isinf(x);
  else if constexpr (OP == LC_UF_ISFINITE) return lc_isfinite(x);
  else if constexpr (OP == LC_UF_LOGICAL_NOT) return (bool)!x;
  else if constexpr (OP == LC_UF_CLIP) return lc_minimum(lc_maximum(x, y), z);
  else return x;                                     // LC_UF_CAST
}

// operand k's element at offset off (bytes), or its scalar, as T
template <typename T>
__device__ __forceinline__ T lc_operand(const lc_ufunc_args &a, int k, long long off) {
  if (a.scalar[k]) return *(const T *)(const void *)a.value[k];
  return lc_load<T>(a.data[k] + off, a.code[k], a.unaligned);
}

// The kernel: a grid-stride loop over the output's elements. where takes
// its condition as bool, the others in the loop type T.
template <int OP, typename T>
__global__ void lc_ufunc(lc_ufunc_args a) {
  const int nin = a.nin;
  long long step = (long long)gridDim.x * blockDim.x;
  if (a.direct) {      // contiguous, no conversions: typed loads and stores
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += step) {
      if constexpr (OP == LC_UF_WHERE) {
        bool c = a.scalar[0] ? *(const bool *)(const void *)a.value[0] : ((const bool *)a.data[0])[i];
        T x = a.scalar[1] ? *(const T *)(const void *)a.value[1] : ((const T *)a.data[1])[i];
        T y = a.scalar[2] ? *(const T *)(const void *)a.value[2] : ((const T *)a.data[2])[i];
        ((T *)a.data[3])[i] = c ? x : y;
      } else {
        T x = a.scalar[0] ? *(const T *)(const void *)a.value[0] : ((const T *)a.data[0])[i];
        T y = nin < 2 ? x : a.scalar[1] ? *(const T *)(const void *)a.value[1] : ((const T *)a.data[1])[i];
        T z = nin < 3 ? x : a.scalar[2] ? *(const T *)(const void *)a.value[2] : ((const T *)a.data[2])[i];
        auto r = lc_apply<OP, T>(x, y, z);
        ((decltype(r) *)a.data[nin])[i] = r;
      }
    }
    return;
  }
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += step) {
    long long off[LC_UF_MAXOPS] = {0, 0, 0, 0};
    if (a.contiguous) {
      for (int k = 0; k <= nin; k++) off[k] = i * a.strides[k][0];
    } else {
      long long rest = i;
      for (int d = a.ndim - 1; d >= 0; d--) {
        long long j = rest % a.shape[d];
        rest /= a.shape[d];
        for (int k = 0; k <= nin; k++) off[k] += j * a.strides[k][d];
      }
    }
    if constexpr (OP == LC_UF_WHERE) {
      bool c = lc_operand<bool>(a, 0, off[0]);
      T r = c ? lc_operand<T>(a, 1, off[1]) : lc_operand<T>(a, 2, off[2]);
      lc_store(a.data[3] + off[3], a.code[3], r, a.unaligned);
    } else {
      T x = lc_operand<T>(a, 0, off[0]);
      T y = nin > 1 ? lc_operand<T>(a, 1, off[1]) : x;
      T z = nin > 2 ? lc_operand<T>(a, 2, off[2]) : x;
      lc_store(a.data[nin] + off[nin], a.code[nin], lc_apply<OP, T>(x, y, z), a.unaligned);
    }
  }
}
