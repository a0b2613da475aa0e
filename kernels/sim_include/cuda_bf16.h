// cuda_bf16.h for luacuda's simulator: CUDA's bfloat16 (__nv_bfloat16,
// __nv_bfloat162 and their functions) for the host C++ compiler, with the
// API of the toolkit's header, on cuda_fp16.h's machinery (which it
// includes, as the toolkit's does). The same rules: every operation rounds
// its exact result once, NaN results are 0x7fff; the functions the GPU
// computes through approximate float instructions follow its sequence,
// those instructions correctly rounded (as the fake driver's interpreter
// has them).
#ifndef __CUDA_BF16_H__
#define __CUDA_BF16_H__
#define __CUDA_BF16_HPP__
#define __CUDA_BF16_TYPES_EXIST__

#include "cuda_fp16.h"

typedef struct __attribute__((aligned(2))) { unsigned short x; } __nv_bfloat16_raw;
typedef struct __attribute__((aligned(4))) { unsigned short x, y; } __nv_bfloat162_raw;

struct __attribute__((aligned(2))) __nv_bfloat16 {
 protected:
  unsigned short __x;

 public:
  __nv_bfloat16() = default;
  constexpr __nv_bfloat16(const __nv_bfloat16_raw &hr) : __x(hr.x) {}
  __nv_bfloat16 &operator=(const __nv_bfloat16_raw &hr) { __x = hr.x; return *this; }
  volatile __nv_bfloat16 &operator=(const __nv_bfloat16_raw &hr) volatile { __x = hr.x; return *this; }
  volatile __nv_bfloat16 &operator=(const volatile __nv_bfloat16_raw &hr) volatile { __x = hr.x; return *this; }
  operator __nv_bfloat16_raw() const { __nv_bfloat16_raw r; r.x = __x; return r; }
  operator __nv_bfloat16_raw() const volatile { __nv_bfloat16_raw r; r.x = __x; return r; }
#if !defined(__CUDA_NO_BFLOAT16_CONVERSIONS__)
  explicit __nv_bfloat16(const __half f) {
    __x = __lc_f16_from_float<7, 8>(__lc_f16_to_float<10, 5>(static_cast<__half_raw>(f).x), __LC_RN);
  }
  __nv_bfloat16(const float f) { __x = __lc_f16_from_float<7, 8>(f, __LC_RN); }
  __nv_bfloat16(const double f) { __x = __lc_f16_from_double<7, 8>(f, __LC_RN); }
  operator float() const { return __lc_f16_to_float<7, 8>(__x); }
  __nv_bfloat16 &operator=(const float f) { __x = __lc_f16_from_float<7, 8>(f, __LC_RN); return *this; }
  __nv_bfloat16 &operator=(const double f) { __x = __lc_f16_from_double<7, 8>(f, __LC_RN); return *this; }
  __nv_bfloat16(short val) { __x = __lc_f16_from_ll<7, 8>(val, __LC_RN); }
  __nv_bfloat16(unsigned short val) { __x = __lc_f16_from_ll<7, 8>(val, __LC_RN); }
  __nv_bfloat16(int val) { __x = __lc_f16_from_ll<7, 8>(val, __LC_RN); }
  __nv_bfloat16(unsigned int val) { __x = __lc_f16_from_ll<7, 8>(val, __LC_RN); }
  __nv_bfloat16(const long val) { __x = __lc_f16_from_ll<7, 8>(val, __LC_RN); }
  __nv_bfloat16(const unsigned long val) { __x = __lc_f16_from_int<7, 8>(false, val, __LC_RN); }
  __nv_bfloat16(long long val) { __x = __lc_f16_from_ll<7, 8>(val, __LC_RN); }
  __nv_bfloat16(unsigned long long val) { __x = __lc_f16_from_int<7, 8>(false, val, __LC_RN); }
  operator signed char() const { return __lc_f16_to_int<signed char, 7, 8>(__x, __LC_RZ); }
  operator unsigned char() const { return __lc_f16_to_int<unsigned char, 7, 8>(__x, __LC_RZ); }
  operator char() const { return (char)__lc_f16_to_int<signed char, 7, 8>(__x, __LC_RZ); }
  operator short() const { return __lc_f16_to_int<short, 7, 8>(__x, __LC_RZ); }
  operator unsigned short() const { return __lc_f16_to_int<unsigned short, 7, 8>(__x, __LC_RZ); }
  operator int() const { return __lc_f16_to_int<int, 7, 8>(__x, __LC_RZ); }
  operator unsigned int() const { return __lc_f16_to_int<unsigned int, 7, 8>(__x, __LC_RZ); }
  operator long() const { return __lc_f16_to_int<long, 7, 8>(__x, __LC_RZ); }
  operator unsigned long() const { return __lc_f16_to_int<unsigned long, 7, 8>(__x, __LC_RZ); }
  operator long long() const { return __lc_f16_to_int<long long, 7, 8>(__x, __LC_RZ); }
  operator unsigned long long() const { return __lc_f16_to_int<unsigned long long, 7, 8>(__x, __LC_RZ); }
  __nv_bfloat16 &operator=(short val) { return *this = __nv_bfloat16(val); }
  __nv_bfloat16 &operator=(unsigned short val) { return *this = __nv_bfloat16(val); }
  __nv_bfloat16 &operator=(int val) { return *this = __nv_bfloat16(val); }
  __nv_bfloat16 &operator=(unsigned int val) { return *this = __nv_bfloat16(val); }
  __nv_bfloat16 &operator=(long long val) { return *this = __nv_bfloat16(val); }
  __nv_bfloat16 &operator=(unsigned long long val) { return *this = __nv_bfloat16(val); }
  constexpr operator bool() const { return (__x & 0x7fffu) != 0u; }
#endif
};

#if !defined(__CUDA_NO_HALF_CONVERSIONS__)
inline __half::__half(const __nv_bfloat16 f) {
  __x = __lc_f16_from_float<10, 5>(__lc_f16_to_float<7, 8>(static_cast<__nv_bfloat16_raw>(f).x), __LC_RN);
}
#endif

struct __attribute__((aligned(4))) __nv_bfloat162 {
  __nv_bfloat16 x, y;
  __nv_bfloat162() = default;
  constexpr __nv_bfloat162(const __nv_bfloat16 &a, const __nv_bfloat16 &b) : x(a), y(b) {}
  __nv_bfloat162(const __nv_bfloat162_raw &h2r) {
    __nv_bfloat16_raw a, b;
    a.x = h2r.x;
    b.x = h2r.y;
    x = a;
    y = b;
  }
  __nv_bfloat162 &operator=(const __nv_bfloat162_raw &h2r) { return *this = __nv_bfloat162(h2r); }
  operator __nv_bfloat162_raw() const {
    __nv_bfloat162_raw r;
    r.x = static_cast<__nv_bfloat16_raw>(x).x;
    r.y = static_cast<__nv_bfloat16_raw>(y).x;
    return r;
  }
};

typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

static inline unsigned short __lc_bb(const __nv_bfloat16 h) { return static_cast<__nv_bfloat16_raw>(h).x; }
static inline __nv_bfloat16 __lc_bh(unsigned short b) { __nv_bfloat16_raw r; r.x = b; return __nv_bfloat16(r); }
#define LC_B_(...) __lc_bh(__VA_ARGS__)
#define LC_BB_(...) __lc_bb(__VA_ARGS__)
#define LC_BF_(...) __lc_f16_to_float<7, 8>(__lc_bb(__VA_ARGS__))
#define LC_BRN_(...) __lc_bh(__lc_f16_rn<7, 8>(__VA_ARGS__))

#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)

// ---- conversions -------------------------------------------------------------
static inline __nv_bfloat16 __float2bfloat16(const float a) { return LC_B_(__lc_f16_from_float<7, 8>(a, __LC_RN)); }
static inline __nv_bfloat16 __float2bfloat16_rn(const float a) { return LC_B_(__lc_f16_from_float<7, 8>(a, __LC_RN)); }
static inline __nv_bfloat16 __float2bfloat16_rz(const float a) { return LC_B_(__lc_f16_from_float<7, 8>(a, __LC_RZ)); }
static inline __nv_bfloat16 __float2bfloat16_rd(const float a) { return LC_B_(__lc_f16_from_float<7, 8>(a, __LC_RD)); }
static inline __nv_bfloat16 __float2bfloat16_ru(const float a) { return LC_B_(__lc_f16_from_float<7, 8>(a, __LC_RU)); }
static inline __nv_bfloat16 __double2bfloat16(const double a) { return LC_B_(__lc_f16_from_double<7, 8>(a, __LC_RN)); }
static inline float __bfloat162float(const __nv_bfloat16 a) { return LC_BF_(a); }
static inline __nv_bfloat162 __float2bfloat162_rn(const float a) {
  __nv_bfloat16 h = __float2bfloat16_rn(a);
  return __nv_bfloat162(h, h);
}
static inline __nv_bfloat162 __floats2bfloat162_rn(const float a, const float b) {
  return __nv_bfloat162(__float2bfloat16_rn(a), __float2bfloat16_rn(b));
}
static inline __nv_bfloat162 __float22bfloat162_rn(const float2 a) { return __floats2bfloat162_rn(a.x, a.y); }
static inline float2 __bfloat1622float2(const __nv_bfloat162 a) {
  return make_float2(__bfloat162float(a.x), __bfloat162float(a.y));
}
static inline float __low2float(const __nv_bfloat162 a) { return __bfloat162float(a.x); }
static inline float __high2float(const __nv_bfloat162 a) { return __bfloat162float(a.y); }
static inline __nv_bfloat16 __low2bfloat16(const __nv_bfloat162 a) { return a.x; }
static inline __nv_bfloat16 __high2bfloat16(const __nv_bfloat162 a) { return a.y; }
static inline __nv_bfloat162 __low2bfloat162(const __nv_bfloat162 a) { return __nv_bfloat162(a.x, a.x); }
static inline __nv_bfloat162 __high2bfloat162(const __nv_bfloat162 a) { return __nv_bfloat162(a.y, a.y); }
static inline __nv_bfloat162 __lows2bfloat162(const __nv_bfloat162 a, const __nv_bfloat162 b) { return __nv_bfloat162(a.x, b.x); }
static inline __nv_bfloat162 __highs2bfloat162(const __nv_bfloat162 a, const __nv_bfloat162 b) { return __nv_bfloat162(a.y, b.y); }
static inline __nv_bfloat162 __halves2bfloat162(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
static inline __nv_bfloat162 __bfloat162bfloat162(const __nv_bfloat16 a) { return __nv_bfloat162(a, a); }
static inline __nv_bfloat162 __lowhigh2highlow(const __nv_bfloat162 a) { return __nv_bfloat162(a.y, a.x); }
static inline __nv_bfloat162 make_bfloat162(const __nv_bfloat16 x, const __nv_bfloat16 y) { return __nv_bfloat162(x, y); }

static inline short __bfloat16_as_short(const __nv_bfloat16 h) { return (short)LC_BB_(h); }
static inline unsigned short __bfloat16_as_ushort(const __nv_bfloat16 h) { return LC_BB_(h); }
static inline __nv_bfloat16 __short_as_bfloat16(const short i) { return LC_B_((unsigned short)i); }
static inline __nv_bfloat16 __ushort_as_bfloat16(const unsigned short i) { return LC_B_(i); }

#define LC_BF16_INT_(T, N)                                                                      \
  static inline __nv_bfloat16 __##N##2bfloat16_rn(const T i) { return LC_B_(__lc_f16_from_ll<7, 8>(i, __LC_RN)); } \
  static inline __nv_bfloat16 __##N##2bfloat16_rz(const T i) { return LC_B_(__lc_f16_from_ll<7, 8>(i, __LC_RZ)); } \
  static inline __nv_bfloat16 __##N##2bfloat16_rd(const T i) { return LC_B_(__lc_f16_from_ll<7, 8>(i, __LC_RD)); } \
  static inline __nv_bfloat16 __##N##2bfloat16_ru(const T i) { return LC_B_(__lc_f16_from_ll<7, 8>(i, __LC_RU)); } \
  static inline T __bfloat162##N##_rn(const __nv_bfloat16 h) { return __lc_f16_to_int<T, 7, 8>(LC_BB_(h), __LC_RN); } \
  static inline T __bfloat162##N##_rz(const __nv_bfloat16 h) { return __lc_f16_to_int<T, 7, 8>(LC_BB_(h), __LC_RZ); } \
  static inline T __bfloat162##N##_rd(const __nv_bfloat16 h) { return __lc_f16_to_int<T, 7, 8>(LC_BB_(h), __LC_RD); } \
  static inline T __bfloat162##N##_ru(const __nv_bfloat16 h) { return __lc_f16_to_int<T, 7, 8>(LC_BB_(h), __LC_RU); }
LC_BF16_INT_(short, short)
LC_BF16_INT_(unsigned short, ushort)
LC_BF16_INT_(int, int)
LC_BF16_INT_(unsigned int, uint)
LC_BF16_INT_(long long, ll)
#undef LC_BF16_INT_
static inline __nv_bfloat16 __ull2bfloat16_rn(const unsigned long long i) { return LC_B_(__lc_f16_from_int<7, 8>(false, i, __LC_RN)); }
static inline __nv_bfloat16 __ull2bfloat16_rz(const unsigned long long i) { return LC_B_(__lc_f16_from_int<7, 8>(false, i, __LC_RZ)); }
static inline __nv_bfloat16 __ull2bfloat16_rd(const unsigned long long i) { return LC_B_(__lc_f16_from_int<7, 8>(false, i, __LC_RD)); }
static inline __nv_bfloat16 __ull2bfloat16_ru(const unsigned long long i) { return LC_B_(__lc_f16_from_int<7, 8>(false, i, __LC_RU)); }
static inline unsigned long long __bfloat162ull_rn(const __nv_bfloat16 h) { return __lc_f16_to_int<unsigned long long, 7, 8>(LC_BB_(h), __LC_RN); }
static inline unsigned long long __bfloat162ull_rz(const __nv_bfloat16 h) { return __lc_f16_to_int<unsigned long long, 7, 8>(LC_BB_(h), __LC_RZ); }
static inline unsigned long long __bfloat162ull_rd(const __nv_bfloat16 h) { return __lc_f16_to_int<unsigned long long, 7, 8>(LC_BB_(h), __LC_RD); }
static inline unsigned long long __bfloat162ull_ru(const __nv_bfloat16 h) { return __lc_f16_to_int<unsigned long long, 7, 8>(LC_BB_(h), __LC_RU); }
static inline signed char __bfloat162char_rz(const __nv_bfloat16 h) { return __lc_f16_to_int<signed char, 7, 8>(LC_BB_(h), __LC_RZ); }
static inline unsigned char __bfloat162uchar_rz(const __nv_bfloat16 h) { return __lc_f16_to_int<unsigned char, 7, 8>(LC_BB_(h), __LC_RZ); }

// ---- arithmetic ----------------------------------------------------------------
// sums in float round once (24 bits: twice 8 and 2 more); products on
// integers (a product of tiny values is not exact in float)
static inline __nv_bfloat16 __hadd(const __nv_bfloat16 a, const __nv_bfloat16 b) { return LC_BRN_(LC_BF_(a) + LC_BF_(b)); }
static inline __nv_bfloat16 __hsub(const __nv_bfloat16 a, const __nv_bfloat16 b) { return LC_BRN_(LC_BF_(a) - LC_BF_(b)); }
static inline __nv_bfloat16 __hmul(const __nv_bfloat16 a, const __nv_bfloat16 b) {
  return LC_B_(__lc_f16_fma<7, 8>(LC_BB_(a), LC_BB_(b), 0x8000, __LC_RN));
}
static inline __nv_bfloat16 __hadd_rn(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __hadd(a, b); }
static inline __nv_bfloat16 __hsub_rn(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __hsub(a, b); }
static inline __nv_bfloat16 __hmul_rn(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __hmul(a, b); }
static inline __nv_bfloat16 __hadd_sat(const __nv_bfloat16 a, const __nv_bfloat16 b) { return LC_B_(__lc_f16_sat<7, 8>(LC_BB_(__hadd(a, b)))); }
static inline __nv_bfloat16 __hsub_sat(const __nv_bfloat16 a, const __nv_bfloat16 b) { return LC_B_(__lc_f16_sat<7, 8>(LC_BB_(__hsub(a, b)))); }
static inline __nv_bfloat16 __hmul_sat(const __nv_bfloat16 a, const __nv_bfloat16 b) { return LC_B_(__lc_f16_sat<7, 8>(LC_BB_(__hmul(a, b)))); }
// the fused ones need compute capability 8.0, as in the toolkit's header
// (the simulator's __CUDA_ARCH__ is sim_runtime.h's)
#if __CUDA_ARCH__ >= 800
static inline __nv_bfloat16 __hfma(const __nv_bfloat16 a, const __nv_bfloat16 b, const __nv_bfloat16 c) {
  return LC_B_(__lc_f16_fma<7, 8>(LC_BB_(a), LC_BB_(b), LC_BB_(c), __LC_RN));
}
static inline __nv_bfloat16 __hfma_sat(const __nv_bfloat16 a, const __nv_bfloat16 b, const __nv_bfloat16 c) { return LC_B_(__lc_f16_sat<7, 8>(LC_BB_(__hfma(a, b, c)))); }
static inline __nv_bfloat16 __hfma_relu(const __nv_bfloat16 a, const __nv_bfloat16 b, const __nv_bfloat16 c) { return LC_B_(__lc_f16_relu<7, 8>(LC_BB_(__hfma(a, b, c)))); }
#endif
static inline __nv_bfloat16 __hneg(const __nv_bfloat16 a) { return LC_B_((unsigned short)(LC_BB_(a) ^ 0x8000u)); }
static inline __nv_bfloat16 __habs(const __nv_bfloat16 a) { return LC_B_((unsigned short)(LC_BB_(a) & 0x7fffu)); }
// the GPU's quotient: an approximate float division (correctly rounded
// here), the divisor scaled down first where it is huge
static inline __nv_bfloat16 __hdiv(const __nv_bfloat16 a, const __nv_bfloat16 b) {
  float fa = LC_BF_(a), fb = LC_BF_(b);
  bool big = __builtin_fabsf(fb) >= __lc_f32_of(0x7e800000u);      // 2^126
  if (big) fb *= 0.25f;
  float q = fa / fb;
  if (big) q *= 0.25f;
  return LC_BRN_(q);
}
static inline __nv_bfloat16 __hmax(const __nv_bfloat16 a, const __nv_bfloat16 b) { return LC_B_(__lc_f16_max<7, 8>(LC_BB_(a), LC_BB_(b), true, false)); }
static inline __nv_bfloat16 __hmin(const __nv_bfloat16 a, const __nv_bfloat16 b) { return LC_B_(__lc_f16_max<7, 8>(LC_BB_(a), LC_BB_(b), false, false)); }
static inline __nv_bfloat16 __hmax_nan(const __nv_bfloat16 a, const __nv_bfloat16 b) { return LC_B_(__lc_f16_max<7, 8>(LC_BB_(a), LC_BB_(b), true, true)); }
static inline __nv_bfloat16 __hmin_nan(const __nv_bfloat16 a, const __nv_bfloat16 b) { return LC_B_(__lc_f16_max<7, 8>(LC_BB_(a), LC_BB_(b), false, true)); }

#define LC_BF16_CMP_(N, OP, U)                                                              \
  static inline bool __h##N(const __nv_bfloat16 a, const __nv_bfloat16 b) {                \
    return __lc_f16_cmp<7, 8>(LC_BB_(a), LC_BB_(b), OP, U);                                \
  }                                                                                         \
  static inline __nv_bfloat162 __h##N##2(const __nv_bfloat162 a, const __nv_bfloat162 b) { \
    return __nv_bfloat162(LC_B_(__h##N(a.x, b.x) ? 0x3f80 : 0), LC_B_(__h##N(a.y, b.y) ? 0x3f80 : 0)); \
  }                                                                                         \
  static inline bool __hb##N##2(const __nv_bfloat162 a, const __nv_bfloat162 b) {          \
    return __h##N(a.x, b.x) && __h##N(a.y, b.y);                                           \
  }                                                                                         \
  static inline unsigned __h##N##2_mask(const __nv_bfloat162 a, const __nv_bfloat162 b) {  \
    return (__h##N(a.x, b.x) ? 0xffffu : 0u) | (__h##N(a.y, b.y) ? 0xffff0000u : 0u);       \
  }
LC_BF16_CMP_(eq, __LC_EQ, false)
LC_BF16_CMP_(ne, __LC_NE, false)
LC_BF16_CMP_(lt, __LC_LT, false)
LC_BF16_CMP_(le, __LC_LE, false)
LC_BF16_CMP_(gt, __LC_GT, false)
LC_BF16_CMP_(ge, __LC_GE, false)
LC_BF16_CMP_(equ, __LC_EQ, true)
LC_BF16_CMP_(neu, __LC_NE, true)
LC_BF16_CMP_(ltu, __LC_LT, true)
LC_BF16_CMP_(leu, __LC_LE, true)
LC_BF16_CMP_(gtu, __LC_GT, true)
LC_BF16_CMP_(geu, __LC_GE, true)
#undef LC_BF16_CMP_
static inline bool __hisnan(const __nv_bfloat16 a) { return __lc_f16_isnan<7, 8>(LC_BB_(a)); }
static inline __nv_bfloat162 __hisnan2(const __nv_bfloat162 a) {
  return __nv_bfloat162(LC_B_(__hisnan(a.x) ? 0x3f80 : 0), LC_B_(__hisnan(a.y) ? 0x3f80 : 0));
}
static inline int __hisinf(const __nv_bfloat16 a) {
  unsigned short b = LC_BB_(a);
  return b == 0x7f80 ? 1 : b == 0xff80 ? -1 : 0;
}

#define LC_BF16_PAIR2_(N, F)                                                                \
  static inline __nv_bfloat162 N(const __nv_bfloat162 a, const __nv_bfloat162 b) {         \
    return __nv_bfloat162(F(a.x, b.x), F(a.y, b.y));                                       \
  }
LC_BF16_PAIR2_(__hadd2, __hadd)
LC_BF16_PAIR2_(__hsub2, __hsub)
LC_BF16_PAIR2_(__hmul2, __hmul)
LC_BF16_PAIR2_(__hadd2_rn, __hadd)
LC_BF16_PAIR2_(__hsub2_rn, __hsub)
LC_BF16_PAIR2_(__hmul2_rn, __hmul)
LC_BF16_PAIR2_(__hadd2_sat, __hadd_sat)
LC_BF16_PAIR2_(__hsub2_sat, __hsub_sat)
LC_BF16_PAIR2_(__hmul2_sat, __hmul_sat)
LC_BF16_PAIR2_(__h2div, __hdiv)
LC_BF16_PAIR2_(__hmax2, __hmax)
LC_BF16_PAIR2_(__hmin2, __hmin)
LC_BF16_PAIR2_(__hmax2_nan, __hmax_nan)
LC_BF16_PAIR2_(__hmin2_nan, __hmin_nan)
#undef LC_BF16_PAIR2_
static inline __nv_bfloat162 __hneg2(const __nv_bfloat162 a) { return __nv_bfloat162(__hneg(a.x), __hneg(a.y)); }
static inline __nv_bfloat162 __habs2(const __nv_bfloat162 a) { return __nv_bfloat162(__habs(a.x), __habs(a.y)); }
#if __CUDA_ARCH__ >= 800
static inline __nv_bfloat162 __hfma2(const __nv_bfloat162 a, const __nv_bfloat162 b, const __nv_bfloat162 c) {
  return __nv_bfloat162(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
static inline __nv_bfloat162 __hfma2_sat(const __nv_bfloat162 a, const __nv_bfloat162 b, const __nv_bfloat162 c) {
  return __nv_bfloat162(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y));
}
static inline __nv_bfloat162 __hfma2_relu(const __nv_bfloat162 a, const __nv_bfloat162 b, const __nv_bfloat162 c) {
  return __nv_bfloat162(__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y));
}
static inline __nv_bfloat162 __hcmadd(const __nv_bfloat162 a, const __nv_bfloat162 b, const __nv_bfloat162 c) {
  __nv_bfloat16 re = __hfma(a.x, b.x, c.x), im = __hfma(a.x, b.y, c.y);
  return __nv_bfloat162(__hfma(__hneg(a.y), b.y, re), __hfma(a.y, b.x, im));
}
#endif

// ---- functions -------------------------------------------------------------------
static inline __nv_bfloat16 htrunc(const __nv_bfloat16 h) { return LC_BRN_(__builtin_truncf(LC_BF_(h))); }
static inline __nv_bfloat16 hceil(const __nv_bfloat16 h) { return LC_BRN_(__builtin_ceilf(LC_BF_(h))); }
static inline __nv_bfloat16 hfloor(const __nv_bfloat16 h) { return LC_BRN_(__builtin_floorf(LC_BF_(h))); }
static inline __nv_bfloat16 hrint(const __nv_bfloat16 h) { return LC_BRN_(__builtin_rintf(LC_BF_(h))); }
// the GPU's float sequences, each approximate instruction correctly rounded
static inline float __lc_ex2_(float x) { return (float)__builtin_exp2((double)x); }
static inline float __lc_lg2_(float x) { return (float)__builtin_log2((double)x); }
static inline __nv_bfloat16 hsqrt(const __nv_bfloat16 a) { return LC_BRN_((float)__builtin_sqrt((double)LC_BF_(a))); }
static inline __nv_bfloat16 hrsqrt(const __nv_bfloat16 a) { return LC_BRN_((float)(1.0 / __builtin_sqrt((double)LC_BF_(a)))); }
static inline __nv_bfloat16 hrcp(const __nv_bfloat16 a) { return LC_BRN_(1.0f / LC_BF_(a)); }
static inline __nv_bfloat16 hexp(const __nv_bfloat16 a) { return LC_BRN_(__lc_ex2_(LC_BF_(a) * __lc_f32_of(0x3fb8aa3cu))); }
static inline __nv_bfloat16 hexp2(const __nv_bfloat16 a) { return LC_BRN_(__lc_ex2_(LC_BF_(a))); }
static inline __nv_bfloat16 hexp10(const __nv_bfloat16 a) {
  // one input where the float steps round the wrong way, as the GPU corrects it
  if (LC_BB_(a) == 0xbc95) return LC_B_(0x3f75);
  return LC_BRN_(__lc_ex2_(LC_BF_(a) * __lc_f32_of(0x40549a78u)));
}
static inline __nv_bfloat16 hlog2(const __nv_bfloat16 a) { return LC_BRN_(__lc_lg2_(LC_BF_(a))); }
static inline __nv_bfloat16 hlog(const __nv_bfloat16 a) { return LC_BRN_(__lc_lg2_(LC_BF_(a)) * __lc_f32_of(0x3f317218u)); }
static inline __nv_bfloat16 hlog10(const __nv_bfloat16 a) { return LC_BRN_(__lc_lg2_(LC_BF_(a)) * __lc_f32_of(0x3e9a209bu)); }
static inline __nv_bfloat16 hsin(const __nv_bfloat16 a) { return LC_BRN_((float)__builtin_sin((double)LC_BF_(a))); }
static inline __nv_bfloat16 hcos(const __nv_bfloat16 a) { return LC_BRN_((float)__builtin_cos((double)LC_BF_(a))); }
static inline __nv_bfloat16 htanh(const __nv_bfloat16 a) { return LC_BRN_((float)__builtin_tanh((double)LC_BF_(a))); }
static inline __nv_bfloat16 htanh_approx(const __nv_bfloat16 a) { return htanh(a); }
#define LC_BF16_FUN2_(N, F) \
  static inline __nv_bfloat162 N(const __nv_bfloat162 a) { return __nv_bfloat162(F(a.x), F(a.y)); }
LC_BF16_FUN2_(h2trunc, htrunc)
LC_BF16_FUN2_(h2ceil, hceil)
LC_BF16_FUN2_(h2floor, hfloor)
LC_BF16_FUN2_(h2rint, hrint)
LC_BF16_FUN2_(h2sqrt, hsqrt)
LC_BF16_FUN2_(h2rsqrt, hrsqrt)
LC_BF16_FUN2_(h2rcp, hrcp)
LC_BF16_FUN2_(h2exp, hexp)
LC_BF16_FUN2_(h2exp2, hexp2)
LC_BF16_FUN2_(h2exp10, hexp10)
LC_BF16_FUN2_(h2log, hlog)
LC_BF16_FUN2_(h2log2, hlog2)
LC_BF16_FUN2_(h2log10, hlog10)
LC_BF16_FUN2_(h2sin, hsin)
LC_BF16_FUN2_(h2cos, hcos)
LC_BF16_FUN2_(h2tanh, htanh)
LC_BF16_FUN2_(h2tanh_approx, htanh_approx)
#undef LC_BF16_FUN2_

// ---- operators ------------------------------------------------------------------
#if !defined(__CUDA_NO_BFLOAT16_OPERATORS__)
static inline __nv_bfloat16 operator+(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hadd(lh, rh); }
static inline __nv_bfloat16 operator-(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hsub(lh, rh); }
static inline __nv_bfloat16 operator*(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hmul(lh, rh); }
static inline __nv_bfloat16 operator/(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hdiv(lh, rh); }
static inline __nv_bfloat16 &operator+=(__nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return lh = __hadd(lh, rh); }
static inline __nv_bfloat16 &operator-=(__nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return lh = __hsub(lh, rh); }
static inline __nv_bfloat16 &operator*=(__nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return lh = __hmul(lh, rh); }
static inline __nv_bfloat16 &operator/=(__nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return lh = __hdiv(lh, rh); }
static inline __nv_bfloat16 &operator++(__nv_bfloat16 &h) { return h = __hadd(h, LC_B_(0x3f80)); }
static inline __nv_bfloat16 &operator--(__nv_bfloat16 &h) { return h = __hsub(h, LC_B_(0x3f80)); }
static inline __nv_bfloat16 operator++(__nv_bfloat16 &h, const int) { __nv_bfloat16 r = h; ++h; return r; }
static inline __nv_bfloat16 operator--(__nv_bfloat16 &h, const int) { __nv_bfloat16 r = h; --h; return r; }
static inline __nv_bfloat16 operator+(const __nv_bfloat16 &h) { return h; }
static inline __nv_bfloat16 operator-(const __nv_bfloat16 &h) { return __hneg(h); }
static inline bool operator==(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __heq(lh, rh); }
static inline bool operator!=(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hneu(lh, rh); }
static inline bool operator>(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hgt(lh, rh); }
static inline bool operator<(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hlt(lh, rh); }
static inline bool operator>=(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hge(lh, rh); }
static inline bool operator<=(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hle(lh, rh); }
#endif
#if !defined(__CUDA_NO_BFLOAT162_OPERATORS__)
static inline __nv_bfloat162 operator+(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hadd2(lh, rh); }
static inline __nv_bfloat162 operator-(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hsub2(lh, rh); }
static inline __nv_bfloat162 operator*(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hmul2(lh, rh); }
static inline __nv_bfloat162 operator/(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __h2div(lh, rh); }
static inline __nv_bfloat162 &operator+=(__nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return lh = __hadd2(lh, rh); }
static inline __nv_bfloat162 &operator-=(__nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return lh = __hsub2(lh, rh); }
static inline __nv_bfloat162 &operator*=(__nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return lh = __hmul2(lh, rh); }
static inline __nv_bfloat162 &operator/=(__nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return lh = __h2div(lh, rh); }
static inline __nv_bfloat162 &operator++(__nv_bfloat162 &h) { return h = __hadd2(h, __nv_bfloat162(LC_B_(0x3f80), LC_B_(0x3f80))); }
static inline __nv_bfloat162 &operator--(__nv_bfloat162 &h) { return h = __hsub2(h, __nv_bfloat162(LC_B_(0x3f80), LC_B_(0x3f80))); }
static inline __nv_bfloat162 operator++(__nv_bfloat162 &h, const int) { __nv_bfloat162 r = h; ++h; return r; }
static inline __nv_bfloat162 operator--(__nv_bfloat162 &h, const int) { __nv_bfloat162 r = h; --h; return r; }
static inline __nv_bfloat162 operator+(const __nv_bfloat162 &h) { return h; }
static inline __nv_bfloat162 operator-(const __nv_bfloat162 &h) { return __hneg2(h); }
static inline bool operator==(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hbeq2(lh, rh); }
static inline bool operator!=(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hbneu2(lh, rh); }
static inline bool operator>(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hbgt2(lh, rh); }
static inline bool operator<(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hblt2(lh, rh); }
static inline bool operator>=(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hbge2(lh, rh); }
static inline bool operator<=(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hble2(lh, rh); }
#endif

// ---- warps, atomics, loads and stores ---------------------------------------------
LC_WARP_SHFL_T_(__nv_bfloat16)
LC_WARP_SHFL_T_(__nv_bfloat162)
static inline __nv_bfloat16 atomicAdd(__nv_bfloat16 *const address, const __nv_bfloat16 val) {
  return __lc_atomic16<__nv_bfloat16, unsigned short>(address, val, [](__nv_bfloat16 a, __nv_bfloat16 b) { return __hadd(a, b); });
}
static inline __nv_bfloat162 atomicAdd(__nv_bfloat162 *const address, const __nv_bfloat162 val) {
  return __lc_atomic16<__nv_bfloat162, unsigned int>(address, val, [](__nv_bfloat162 a, __nv_bfloat162 b) { return __hadd2(a, b); });
}
LC_F16_LDST_(__nv_bfloat16)
LC_F16_LDST_(__nv_bfloat162)

#undef LC_B_
#undef LC_BB_
#undef LC_BF_
#undef LC_BRN_

#endif  // __CUDA_BF16_H__
