// cuda_fp16.h for luacuda's simulator: CUDA's half precision (__half,
// __half2 and their functions) for the host C++ compiler, with the API of
// the toolkit's header, which only NVCC and NVRTC can read. The simulator's
// compilations find this file first on their include path; NVRTC gets the
// toolkit's own. Kernels see the same names, overloads and conversions on
// both backends, so what NVRTC refuses (an ambiguous `h * 2`) is refused
// here too.
//
// Results are the GPU's, bit for bit: a conversion or an operation rounds
// its exact result once (to nearest even, or as its suffix says), NaN
// results are the canonical 0x7fff, integer conversions saturate (NaN
// gives 0, or 0x8000000000000000 for 64 bits). Sums, differences and
// products of two halves are computed on floats (float's 24 bits are at
// least twice 11 and 2 more, so rounding twice rounds once); a fused
// multiply-add is not, and is computed on integers. The quotient follows
// the GPU's sequence, its approximate reciprocal correctly rounded (as the
// fake driver's PTX interpreter has it). Square roots, reciprocals,
// exponentials, logarithms, sine and cosine are correctly rounded, as CUDA
// documents them (the GPU corrects the few inputs where its approximate
// float steps would round the wrong way; the interpreter, which computes
// those steps exactly, is one unit off at some of them).
//
// cuda_bf16.h includes this file and shares its machinery (the __lc_f16_*
// templates, parameterised by the format's fraction and exponent bits).
#ifndef __CUDA_FP16_H__
#define __CUDA_FP16_H__
#define __CUDA_FP16_HPP__
#define __CUDA_FP16_TYPES_EXIST__

#ifndef __LC_SIM__
#error "this cuda_fp16.h is luacuda's simulator's; NVRTC reads the toolkit's"
#endif

#include <limits>

// ---- the machinery: 16-bit IEEE formats on integers ----------------------
// F fraction bits and E exponent bits: half is <10, 5>, bfloat16 <7, 8>.
enum { __LC_RN, __LC_RZ, __LC_RD, __LC_RU };
static constexpr unsigned short __LC_NAN16 = 0x7fff;

template <int F, int E>
static constexpr unsigned short __lc_f16_inf() { return (unsigned short)(((1u << E) - 1) << F); }
template <int F, int E>
static inline bool __lc_f16_isnan(unsigned short b) { return (b & 0x7fffu) > __lc_f16_inf<F, E>(); }
template <int F, int E>
static inline bool __lc_f16_isinf(unsigned short b) { return (b & 0x7fffu) == __lc_f16_inf<F, E>(); }
static inline bool __lc_f16_iszero(unsigned short b) { return (b & 0x7fffu) == 0; }

static inline unsigned __lc_f32_bits(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static inline float __lc_f32_of(unsigned u) { float f; memcpy(&f, &u, 4); return f; }

// (-1)^neg * m * 2^e (m > 0), and sticky: whether nonzero bits lie below
// m's last, rounded once to the format in the given mode.
template <int F, int E>
static inline unsigned short __lc_f16_round(bool neg, unsigned long long m, int e, bool sticky,
                                            int mode) {
  const int bias = (1 << (E - 1)) - 1, emax = (1 << E) - 1;
  const unsigned sign = neg ? 0x8000u : 0u;
  int lz = __builtin_clzll(m);
  m <<= lz;                        // now m * 2^e with m's top bit set
  e -= lz;
  int be = e + 63 + bias;          // the biased exponent of the leading bit
  if (be >= emax) goto overflow;
  {
    int shift = 63 - F + (be < 1 ? 1 - be : 0);     // the bits that go
    unsigned long long q, rem = 0, halfway = 0;
    int cmp;                       // the bits gone against half a unit: <0, 0, >0
    if (shift < 64) {
      q = m >> shift;
      rem = m & ((1ull << shift) - 1);
      halfway = 1ull << (shift - 1);
    } else if (shift == 64) {
      q = 0;
      rem = m;
      halfway = 1ull << 63;
    } else {
      q = 0;
    }
    bool inexact = rem != 0 || sticky || shift > 64;
    if (shift > 64) cmp = -1;
    else cmp = rem > halfway ? 1 : rem < halfway ? -1 : sticky ? 1 : 0;
    bool up = mode == __LC_RN ? cmp > 0 || (cmp == 0 && (q & 1))
            : mode == __LC_RU ? inexact && !neg
            : mode == __LC_RD ? inexact && neg : false;
    q += up;
    // a subnormal is q itself (a carry into 2^F makes the least normal);
    // a normal adds its exponent (a carry out of the significand bumps it)
    unsigned bits = be < 1 ? (unsigned)q : ((unsigned)(be - 1) << F) + (unsigned)q;
    if (bits < (unsigned)__lc_f16_inf<F, E>()) return (unsigned short)(sign | bits);
  }
overflow:      // to infinity, or to the largest finite value toward zero
  {
    bool to_inf = mode == __LC_RN || (mode == __LC_RU && !neg) || (mode == __LC_RD && neg);
    unsigned inf = __lc_f16_inf<F, E>();
    return (unsigned short)(sign | (to_inf ? inf : inf - 1));
  }
}

template <int F, int E>
static inline unsigned short __lc_f16_from_float(float f, int mode) {
  unsigned u = __lc_f32_bits(f), ex = (u >> 23) & 0xff, man = u & 0x7fffff;
  bool neg = u >> 31;
  if (ex == 0xff) return man ? __LC_NAN16 : (unsigned short)((neg ? 0x8000u : 0u) | __lc_f16_inf<F, E>());
  if (ex == 0 && man == 0) return neg ? 0x8000 : 0;
  unsigned long long m = ex ? man | 0x800000u : man;
  return __lc_f16_round<F, E>(neg, m, (ex ? (int)ex : 1) - 127 - 23, false, mode);
}

template <int F, int E>
static inline unsigned short __lc_f16_from_double(double d, int mode) {
  unsigned long long u;
  memcpy(&u, &d, 8);
  unsigned ex = (unsigned)(u >> 52) & 0x7ff;
  unsigned long long man = u & ((1ull << 52) - 1);
  bool neg = u >> 63;
  if (ex == 0x7ff) return man ? __LC_NAN16 : (unsigned short)((neg ? 0x8000u : 0u) | __lc_f16_inf<F, E>());
  if (ex == 0 && man == 0) return neg ? 0x8000 : 0;
  unsigned long long m = ex ? man | (1ull << 52) : man;
  return __lc_f16_round<F, E>(neg, m, (ex ? (int)ex : 1) - 1023 - 52, false, mode);
}

// an integer of magnitude m (negative: neg); 0 is +0 in every mode
template <int F, int E>
static inline unsigned short __lc_f16_from_int(bool neg, unsigned long long m, int mode) {
  return m == 0 ? 0 : __lc_f16_round<F, E>(neg, m, 0, false, mode);
}
template <int F, int E>
static inline unsigned short __lc_f16_from_ll(long long v, int mode) {
  return __lc_f16_from_int<F, E>(v < 0, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, mode);
}

// exactly, as a float (a NaN keeps its payload, made quiet)
template <int F, int E>
static inline float __lc_f16_to_float(unsigned short b) {
  if (E == 8) return __lc_f32_of((unsigned)b << (16 + 7 - F));   // float's upper half
  const int bias = (1 << (E - 1)) - 1;
  unsigned sign = (unsigned)(b & 0x8000u) << 16, ex = (b >> F) & ((1u << E) - 1);
  unsigned frac = b & ((1u << F) - 1);
  if (ex == (1u << E) - 1)
    return __lc_f32_of(sign | 0x7f800000u | (frac << (23 - F)) | (frac ? 0x400000u : 0u));
  if (ex == 0) {
    if (frac == 0) return __lc_f32_of(sign);
    float v = (float)frac * __lc_f32_of((unsigned)(127 + 1 - bias - F) << 23);   // exact
    return sign ? -v : v;
  }
  return __lc_f32_of(sign | ((ex - bias + 127) << 23) | (frac << (23 - F)));
}

// The value's sign, significand and exponent: (-1)^neg * m * 2^e (finite b).
template <int F, int E>
static inline void __lc_f16_decode(unsigned short b, bool *neg, unsigned long long *m, int *e) {
  const int bias = (1 << (E - 1)) - 1;
  unsigned ex = (b >> F) & ((1u << E) - 1), frac = b & ((1u << F) - 1);
  *neg = b >> 15;
  *m = ex ? frac | (1u << F) : frac;
  *e = (ex ? (int)ex : 1) - bias - F;
}

// a * b + c rounded once: the product is exact in 64 bits, the sum in 128
template <int F, int E>
static inline unsigned short __lc_f16_fma(unsigned short a, unsigned short b, unsigned short c,
                                          int mode) {
  if (__lc_f16_isnan<F, E>(a) || __lc_f16_isnan<F, E>(b) || __lc_f16_isnan<F, E>(c)) return __LC_NAN16;
  bool sp = (a ^ b) >> 15, sc = c >> 15;
  const unsigned short inf = __lc_f16_inf<F, E>();
  if (__lc_f16_isinf<F, E>(a) || __lc_f16_isinf<F, E>(b)) {
    if (__lc_f16_iszero(a) || __lc_f16_iszero(b)) return __LC_NAN16;         // inf * 0
    if (__lc_f16_isinf<F, E>(c) && sc != sp) return __LC_NAN16;               // inf - inf
    return (unsigned short)((sp ? 0x8000u : 0u) | inf);
  }
  if (__lc_f16_isinf<F, E>(c)) return c;
  bool na, nb, nc;
  unsigned long long ma, mb, mc;
  int ea, eb, ec;
  __lc_f16_decode<F, E>(a, &na, &ma, &ea);
  __lc_f16_decode<F, E>(b, &nb, &mb, &eb);
  __lc_f16_decode<F, E>(c, &nc, &mc, &ec);
  unsigned long long p = ma * mb;
  int ep = ea + eb;
  if (p == 0 && mc == 0)     // zeros: the sign both have, else +0 (-0 rounding down)
    return (sp && sc) || ((sp || sc) && mode == __LC_RD) ? 0x8000 : 0;
  if (p == 0) return c;
  if (mc == 0) return __lc_f16_round<F, E>(sp, p, ep, false, mode);
  // an addend far below the other only says which way the exact sum lies
  if (ep - ec > 100) { mc = 1; ec = ep - 100; }
  else if (ec - ep > 100) { p = 1; ep = ec - 100; }
  int e = ep < ec ? ep : ec;
  unsigned __int128 P = (unsigned __int128)p << (ep - e), C = (unsigned __int128)mc << (ec - e), s;
  bool neg;
  if (sp == sc) { s = P + C; neg = sp; }
  else if (P >= C) { s = P - C; neg = sp; }
  else { s = C - P; neg = sc; }
  if (s == 0) return mode == __LC_RD ? 0x8000 : 0;
  unsigned long long hi = (unsigned long long)(s >> 64);
  bool sticky = false;
  if (hi) {
    int k = 64 - __builtin_clzll(hi);        // the bits above 64 to drop
    sticky = (s & (((unsigned __int128)1 << k) - 1)) != 0;
    s >>= k;
    e += k;
  }
  return __lc_f16_round<F, E>(neg, (unsigned long long)s, e, sticky, mode);
}

// a float result rounded to the format (exact results of +, -, * of two
// values of it round once so: see the head of the file)
template <int F, int E>
static inline unsigned short __lc_f16_rn(float r) { return __lc_f16_from_float<F, E>(r, __LC_RN); }

// to an integer type, rounded by mode, saturating; NaN is 0 (0x8000...
// for 64 bits)
template <typename T, int F, int E>
static inline T __lc_f16_to_int(unsigned short b, int mode) {
  if (__lc_f16_isnan<F, E>(b)) return sizeof(T) == 8 ? (T)0x8000000000000000ull : (T)0;
  double v = (double)__lc_f16_to_float<F, E>(b);
  double r = mode == __LC_RN ? __builtin_rint(v) : mode == __LC_RZ ? __builtin_trunc(v)
           : mode == __LC_RD ? __builtin_floor(v) : __builtin_ceil(v);
  const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  if (r <= (double)lo) return lo;
  if (r >= (double)hi) return hi;
  return (T)r;
}

// the predicates: ordered ones are false on NaN, unordered ones true
enum { __LC_EQ, __LC_NE, __LC_LT, __LC_LE, __LC_GT, __LC_GE };
template <int F, int E>
static inline bool __lc_f16_cmp(unsigned short a, unsigned short b, int op, bool unordered) {
  if (__lc_f16_isnan<F, E>(a) || __lc_f16_isnan<F, E>(b)) return unordered;
  float x = __lc_f16_to_float<F, E>(a), y = __lc_f16_to_float<F, E>(b);
  switch (op) {
    case __LC_EQ: return x == y;
    case __LC_NE: return x != y;
    case __LC_LT: return x < y;
    case __LC_LE: return x <= y;
    case __LC_GT: return x > y;
    default: return x >= y;
  }
}

// max and min: a NaN operand gives the other (two: NaN); -0 is below +0.
// With nan, a NaN operand gives NaN.
template <int F, int E>
static inline unsigned short __lc_f16_max(unsigned short a, unsigned short b, bool is_max, bool nan) {
  bool an = __lc_f16_isnan<F, E>(a), bn = __lc_f16_isnan<F, E>(b);
  if (an || bn) return nan || (an && bn) ? __LC_NAN16 : an ? b : a;
  float x = __lc_f16_to_float<F, E>(a), y = __lc_f16_to_float<F, E>(b);
  if (x == y) return is_max ? (a >> 15 ? b : a) : (a >> 15 ? a : b);
  return (x > y) == is_max ? a : b;
}

// [+0, 1]: NaN and -0 too become +0 (as __saturatef has it)
template <int F, int E>
static inline unsigned short __lc_f16_sat(unsigned short r) {
  if (__lc_f16_isnan<F, E>(r) || (r >> 15)) return 0;
  float one = 1.0f;
  return __lc_f16_to_float<F, E>(r) > one ? __lc_f16_from_float<F, E>(one, __LC_RN) : r;
}
// negative (and -0) to +0, NaN to the canonical NaN
template <int F, int E>
static inline unsigned short __lc_f16_relu(unsigned short r) {
  if (__lc_f16_isnan<F, E>(r)) return __LC_NAN16;
  return r >> 15 ? 0 : r;
}

// ---- the types -------------------------------------------------------------
typedef struct __attribute__((aligned(2))) { unsigned short x; } __half_raw;
typedef struct __attribute__((aligned(4))) { unsigned short x, y; } __half2_raw;
typedef __half_raw __nv_half_raw;
typedef __half2_raw __nv_half2_raw;

struct __nv_bfloat16;
struct __half;
static inline __half __float2half(float a);
static inline __half __double2half(double a);
static inline float __half2float(__half a);
#define LC_F16_DECLARE_(T, N)                                                          \
  static inline __half __##N##2half_rn(T i);                                          \
  static inline __half __##N##2half_rz(T i);                                          \
  static inline __half __##N##2half_rd(T i);                                          \
  static inline __half __##N##2half_ru(T i);
LC_F16_DECLARE_(short, short)
LC_F16_DECLARE_(unsigned short, ushort)
LC_F16_DECLARE_(int, int)
LC_F16_DECLARE_(unsigned int, uint)
LC_F16_DECLARE_(long long, ll)
LC_F16_DECLARE_(unsigned long long, ull)
#undef LC_F16_DECLARE_

struct __attribute__((aligned(2))) __half {
 protected:
  unsigned short __x;

 public:
  __half() = default;
  constexpr __half(const __half_raw &hr) : __x(hr.x) {}
  __half &operator=(const __half_raw &hr) { __x = hr.x; return *this; }
  volatile __half &operator=(const __half_raw &hr) volatile { __x = hr.x; return *this; }
  volatile __half &operator=(const volatile __half_raw &hr) volatile { __x = hr.x; return *this; }
  operator __half_raw() const { __half_raw r; r.x = __x; return r; }
  operator __half_raw() const volatile { __half_raw r; r.x = __x; return r; }
#if !defined(__CUDA_NO_HALF_CONVERSIONS__)
  explicit __half(const __nv_bfloat16 f);     // cuda_bf16.h defines it
  __half(const float f) { __x = __lc_f16_from_float<10, 5>(f, __LC_RN); }
  __half(const double f) { __x = __lc_f16_from_double<10, 5>(f, __LC_RN); }
  operator float() const { return __lc_f16_to_float<10, 5>(__x); }
  __half &operator=(const float f) { __x = __lc_f16_from_float<10, 5>(f, __LC_RN); return *this; }
  __half &operator=(const double f) { __x = __lc_f16_from_double<10, 5>(f, __LC_RN); return *this; }
  __half(const short val) { __x = __lc_f16_from_ll<10, 5>(val, __LC_RN); }
  __half(const unsigned short val) { __x = __lc_f16_from_ll<10, 5>(val, __LC_RN); }
  __half(const int val) { __x = __lc_f16_from_ll<10, 5>(val, __LC_RN); }
  __half(const unsigned int val) { __x = __lc_f16_from_ll<10, 5>(val, __LC_RN); }
  __half(const long val) { __x = __lc_f16_from_ll<10, 5>(val, __LC_RN); }
  __half(const unsigned long val) { __x = __lc_f16_from_int<10, 5>(false, val, __LC_RN); }
  __half(const long long val) { __x = __lc_f16_from_ll<10, 5>(val, __LC_RN); }
  __half(const unsigned long long val) { __x = __lc_f16_from_int<10, 5>(false, val, __LC_RN); }
  operator signed char() const { return __lc_f16_to_int<signed char, 10, 5>(__x, __LC_RZ); }
  operator unsigned char() const { return __lc_f16_to_int<unsigned char, 10, 5>(__x, __LC_RZ); }
  operator char() const { return (char)__lc_f16_to_int<signed char, 10, 5>(__x, __LC_RZ); }
  operator short() const { return __lc_f16_to_int<short, 10, 5>(__x, __LC_RZ); }
  operator unsigned short() const { return __lc_f16_to_int<unsigned short, 10, 5>(__x, __LC_RZ); }
  operator int() const { return __lc_f16_to_int<int, 10, 5>(__x, __LC_RZ); }
  operator unsigned int() const { return __lc_f16_to_int<unsigned int, 10, 5>(__x, __LC_RZ); }
  operator long() const { return __lc_f16_to_int<long, 10, 5>(__x, __LC_RZ); }
  operator unsigned long() const { return __lc_f16_to_int<unsigned long, 10, 5>(__x, __LC_RZ); }
  operator long long() const { return __lc_f16_to_int<long long, 10, 5>(__x, __LC_RZ); }
  operator unsigned long long() const { return __lc_f16_to_int<unsigned long long, 10, 5>(__x, __LC_RZ); }
  __half &operator=(const short val) { return *this = __half(val); }
  __half &operator=(const unsigned short val) { return *this = __half(val); }
  __half &operator=(const int val) { return *this = __half(val); }
  __half &operator=(const unsigned int val) { return *this = __half(val); }
  __half &operator=(const long long val) { return *this = __half(val); }
  __half &operator=(const unsigned long long val) { return *this = __half(val); }
  constexpr operator bool() const { return (__x & 0x7fffu) != 0u; }
#endif
};

struct __attribute__((aligned(4))) __half2 {
  __half x, y;
  __half2() = default;
  constexpr __half2(const __half &a, const __half &b) : x(a), y(b) {}
  __half2(const __half2_raw &h2r) {
    __half_raw a, b;
    a.x = h2r.x;
    b.x = h2r.y;
    x = a;
    y = b;
  }
  __half2 &operator=(const __half2_raw &h2r) { return *this = __half2(h2r); }
  operator __half2_raw() const {
    __half2_raw r;
    r.x = static_cast<__half_raw>(x).x;
    r.y = static_cast<__half_raw>(y).x;
    return r;
  }
};

#if !defined(CUDA_NO_HALF)
typedef __half half;
typedef __half2 half2;
typedef __half __nv_half;
typedef __half2 __nv_half2;
typedef __half nv_half;
typedef __half2 nv_half2;
#endif

// the bits of a half, and a half of bits
static inline unsigned short __lc_hb(const __half h) { return static_cast<__half_raw>(h).x; }
static inline __half __lc_hh(unsigned short b) { __half_raw r; r.x = b; return __half(r); }
#define LC_H_(...) __lc_hh(__VA_ARGS__)
#define LC_HB_(...) __lc_hb(__VA_ARGS__)

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)

// ---- conversions -------------------------------------------------------------
static inline __half __float2half(const float a) { return LC_H_(__lc_f16_from_float<10, 5>(a, __LC_RN)); }
static inline __half __float2half_rn(const float a) { return LC_H_(__lc_f16_from_float<10, 5>(a, __LC_RN)); }
static inline __half __float2half_rz(const float a) { return LC_H_(__lc_f16_from_float<10, 5>(a, __LC_RZ)); }
static inline __half __float2half_rd(const float a) { return LC_H_(__lc_f16_from_float<10, 5>(a, __LC_RD)); }
static inline __half __float2half_ru(const float a) { return LC_H_(__lc_f16_from_float<10, 5>(a, __LC_RU)); }
static inline __half __double2half(const double a) { return LC_H_(__lc_f16_from_double<10, 5>(a, __LC_RN)); }
static inline float __half2float(const __half a) { return __lc_f16_to_float<10, 5>(LC_HB_(a)); }
static inline __half2 __float2half2_rn(const float a) { __half h = __float2half_rn(a); return __half2(h, h); }
static inline __half2 __floats2half2_rn(const float a, const float b) {
  return __half2(__float2half_rn(a), __float2half_rn(b));
}
static inline __half2 __float22half2_rn(const float2 a) { return __floats2half2_rn(a.x, a.y); }
static inline float2 __half22float2(const __half2 a) {
  return make_float2(__half2float(a.x), __half2float(a.y));
}
static inline float __low2float(const __half2 a) { return __half2float(a.x); }
static inline float __high2float(const __half2 a) { return __half2float(a.y); }
static inline __half __low2half(const __half2 a) { return a.x; }
static inline __half __high2half(const __half2 a) { return a.y; }
static inline __half2 __low2half2(const __half2 a) { return __half2(a.x, a.x); }
static inline __half2 __high2half2(const __half2 a) { return __half2(a.y, a.y); }
static inline __half2 __lows2half2(const __half2 a, const __half2 b) { return __half2(a.x, b.x); }
static inline __half2 __highs2half2(const __half2 a, const __half2 b) { return __half2(a.y, b.y); }
static inline __half2 __halves2half2(const __half a, const __half b) { return __half2(a, b); }
static inline __half2 __half2half2(const __half a) { return __half2(a, a); }
static inline __half2 __lowhigh2highlow(const __half2 a) { return __half2(a.y, a.x); }
static inline __half2 make_half2(const __half x, const __half y) { return __half2(x, y); }

static inline short __half_as_short(const __half h) { return (short)LC_HB_(h); }
static inline unsigned short __half_as_ushort(const __half h) { return LC_HB_(h); }
static inline __half __short_as_half(const short i) { return LC_H_((unsigned short)i); }
static inline __half __ushort_as_half(const unsigned short i) { return LC_H_(i); }

#define LC_F16_INT_(T, N)                                                                     \
  static inline __half __##N##2half_rn(const T i) { return LC_H_(__lc_f16_from_ll<10, 5>(i, __LC_RN)); } \
  static inline __half __##N##2half_rz(const T i) { return LC_H_(__lc_f16_from_ll<10, 5>(i, __LC_RZ)); } \
  static inline __half __##N##2half_rd(const T i) { return LC_H_(__lc_f16_from_ll<10, 5>(i, __LC_RD)); } \
  static inline __half __##N##2half_ru(const T i) { return LC_H_(__lc_f16_from_ll<10, 5>(i, __LC_RU)); } \
  static inline T __half2##N##_rn(const __half h) { return __lc_f16_to_int<T, 10, 5>(LC_HB_(h), __LC_RN); } \
  static inline T __half2##N##_rz(const __half h) { return __lc_f16_to_int<T, 10, 5>(LC_HB_(h), __LC_RZ); } \
  static inline T __half2##N##_rd(const __half h) { return __lc_f16_to_int<T, 10, 5>(LC_HB_(h), __LC_RD); } \
  static inline T __half2##N##_ru(const __half h) { return __lc_f16_to_int<T, 10, 5>(LC_HB_(h), __LC_RU); }
LC_F16_INT_(short, short)
LC_F16_INT_(unsigned short, ushort)
LC_F16_INT_(int, int)
LC_F16_INT_(unsigned int, uint)
LC_F16_INT_(long long, ll)
#undef LC_F16_INT_
static inline __half __ull2half_rn(const unsigned long long i) { return LC_H_(__lc_f16_from_int<10, 5>(false, i, __LC_RN)); }
static inline __half __ull2half_rz(const unsigned long long i) { return LC_H_(__lc_f16_from_int<10, 5>(false, i, __LC_RZ)); }
static inline __half __ull2half_rd(const unsigned long long i) { return LC_H_(__lc_f16_from_int<10, 5>(false, i, __LC_RD)); }
static inline __half __ull2half_ru(const unsigned long long i) { return LC_H_(__lc_f16_from_int<10, 5>(false, i, __LC_RU)); }
static inline unsigned long long __half2ull_rn(const __half h) { return __lc_f16_to_int<unsigned long long, 10, 5>(LC_HB_(h), __LC_RN); }
static inline unsigned long long __half2ull_rz(const __half h) { return __lc_f16_to_int<unsigned long long, 10, 5>(LC_HB_(h), __LC_RZ); }
static inline unsigned long long __half2ull_rd(const __half h) { return __lc_f16_to_int<unsigned long long, 10, 5>(LC_HB_(h), __LC_RD); }
static inline unsigned long long __half2ull_ru(const __half h) { return __lc_f16_to_int<unsigned long long, 10, 5>(LC_HB_(h), __LC_RU); }
static inline signed char __half2char_rz(const __half h) { return __lc_f16_to_int<signed char, 10, 5>(LC_HB_(h), __LC_RZ); }
static inline unsigned char __half2uchar_rz(const __half h) { return __lc_f16_to_int<unsigned char, 10, 5>(LC_HB_(h), __LC_RZ); }

// ---- arithmetic ----------------------------------------------------------------
#define LC_HF_(h) __half2float(h)
static inline __half __hadd(const __half a, const __half b) { return LC_H_(__lc_f16_rn<10, 5>(LC_HF_(a) + LC_HF_(b))); }
static inline __half __hsub(const __half a, const __half b) { return LC_H_(__lc_f16_rn<10, 5>(LC_HF_(a) - LC_HF_(b))); }
static inline __half __hmul(const __half a, const __half b) { return LC_H_(__lc_f16_rn<10, 5>(LC_HF_(a) * LC_HF_(b))); }
static inline __half __hadd_rn(const __half a, const __half b) { return __hadd(a, b); }
static inline __half __hsub_rn(const __half a, const __half b) { return __hsub(a, b); }
static inline __half __hmul_rn(const __half a, const __half b) { return __hmul(a, b); }
static inline __half __hadd_sat(const __half a, const __half b) { return LC_H_(__lc_f16_sat<10, 5>(LC_HB_(__hadd(a, b)))); }
static inline __half __hsub_sat(const __half a, const __half b) { return LC_H_(__lc_f16_sat<10, 5>(LC_HB_(__hsub(a, b)))); }
static inline __half __hmul_sat(const __half a, const __half b) { return LC_H_(__lc_f16_sat<10, 5>(LC_HB_(__hmul(a, b)))); }
static inline __half __hfma(const __half a, const __half b, const __half c) {
  return LC_H_(__lc_f16_fma<10, 5>(LC_HB_(a), LC_HB_(b), LC_HB_(c), __LC_RN));
}
static inline __half __hfma_sat(const __half a, const __half b, const __half c) { return LC_H_(__lc_f16_sat<10, 5>(LC_HB_(__hfma(a, b, c)))); }
static inline __half __hfma_relu(const __half a, const __half b, const __half c) { return LC_H_(__lc_f16_relu<10, 5>(LC_HB_(__hfma(a, b, c)))); }
static inline __half __hneg(const __half a) { return LC_H_((unsigned short)(LC_HB_(a) ^ 0x8000u)); }
static inline __half __habs(const __half a) { return LC_H_((unsigned short)(LC_HB_(a) & 0x7fffu)); }
// the GPU's quotient: an approximate reciprocal (correctly rounded here,
// as the fake driver's interpreter has it) times the dividend, refined by
// one fused step where the quotient is tiny
static inline __half __hdiv(const __half a, const __half b) {
  float fa = LC_HF_(a), fb = LC_HF_(b);
  float rcp = 1.0f / fb, fv = rcp * fa;
  unsigned short v = __lc_f16_rn<10, 5>(fv), av = v & 0x7fffu;
  if (av != 0 && av < 0x008f) {
    float err = __builtin_fmaf(-fb, fv, fa);
    v = __lc_f16_rn<10, 5>(__builtin_fmaf(rcp, err, fv));
  }
  return LC_H_(v);
}
static inline __half __hmax(const __half a, const __half b) { return LC_H_(__lc_f16_max<10, 5>(LC_HB_(a), LC_HB_(b), true, false)); }
static inline __half __hmin(const __half a, const __half b) { return LC_H_(__lc_f16_max<10, 5>(LC_HB_(a), LC_HB_(b), false, false)); }
static inline __half __hmax_nan(const __half a, const __half b) { return LC_H_(__lc_f16_max<10, 5>(LC_HB_(a), LC_HB_(b), true, true)); }
static inline __half __hmin_nan(const __half a, const __half b) { return LC_H_(__lc_f16_max<10, 5>(LC_HB_(a), LC_HB_(b), false, true)); }

// comparisons
#define LC_F16_CMP_(N, OP, U)                                                               \
  static inline bool __h##N(const __half a, const __half b) {                              \
    return __lc_f16_cmp<10, 5>(LC_HB_(a), LC_HB_(b), OP, U);                               \
  }                                                                                         \
  static inline __half2 __h##N##2(const __half2 a, const __half2 b) {                      \
    return __half2(LC_H_(__h##N(a.x, b.x) ? 0x3c00 : 0), LC_H_(__h##N(a.y, b.y) ? 0x3c00 : 0)); \
  }                                                                                         \
  static inline bool __hb##N##2(const __half2 a, const __half2 b) {                        \
    return __h##N(a.x, b.x) && __h##N(a.y, b.y);                                           \
  }                                                                                         \
  static inline unsigned __h##N##2_mask(const __half2 a, const __half2 b) {                \
    return (__h##N(a.x, b.x) ? 0xffffu : 0u) | (__h##N(a.y, b.y) ? 0xffff0000u : 0u);       \
  }
LC_F16_CMP_(eq, __LC_EQ, false)
LC_F16_CMP_(ne, __LC_NE, false)
LC_F16_CMP_(lt, __LC_LT, false)
LC_F16_CMP_(le, __LC_LE, false)
LC_F16_CMP_(gt, __LC_GT, false)
LC_F16_CMP_(ge, __LC_GE, false)
LC_F16_CMP_(equ, __LC_EQ, true)
LC_F16_CMP_(neu, __LC_NE, true)
LC_F16_CMP_(ltu, __LC_LT, true)
LC_F16_CMP_(leu, __LC_LE, true)
LC_F16_CMP_(gtu, __LC_GT, true)
LC_F16_CMP_(geu, __LC_GE, true)
#undef LC_F16_CMP_
static inline bool __hisnan(const __half a) { return __lc_f16_isnan<10, 5>(LC_HB_(a)); }
static inline __half2 __hisnan2(const __half2 a) {
  return __half2(LC_H_(__hisnan(a.x) ? 0x3c00 : 0), LC_H_(__hisnan(a.y) ? 0x3c00 : 0));
}
static inline int __hisinf(const __half a) {
  unsigned short b = LC_HB_(a);
  return b == 0x7c00 ? 1 : b == 0xfc00 ? -1 : 0;
}

// pairs, lane by lane
#define LC_F16_PAIR2_(N, F)                                                                 \
  static inline __half2 N(const __half2 a, const __half2 b) { return __half2(F(a.x, b.x), F(a.y, b.y)); }
LC_F16_PAIR2_(__hadd2, __hadd)
LC_F16_PAIR2_(__hsub2, __hsub)
LC_F16_PAIR2_(__hmul2, __hmul)
LC_F16_PAIR2_(__hadd2_rn, __hadd)
LC_F16_PAIR2_(__hsub2_rn, __hsub)
LC_F16_PAIR2_(__hmul2_rn, __hmul)
LC_F16_PAIR2_(__hadd2_sat, __hadd_sat)
LC_F16_PAIR2_(__hsub2_sat, __hsub_sat)
LC_F16_PAIR2_(__hmul2_sat, __hmul_sat)
LC_F16_PAIR2_(__h2div, __hdiv)
LC_F16_PAIR2_(__hmax2, __hmax)
LC_F16_PAIR2_(__hmin2, __hmin)
LC_F16_PAIR2_(__hmax2_nan, __hmax_nan)
LC_F16_PAIR2_(__hmin2_nan, __hmin_nan)
#undef LC_F16_PAIR2_
static inline __half2 __hfma2(const __half2 a, const __half2 b, const __half2 c) {
  return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
static inline __half2 __hfma2_sat(const __half2 a, const __half2 b, const __half2 c) {
  return __half2(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y));
}
static inline __half2 __hfma2_relu(const __half2 a, const __half2 b, const __half2 c) {
  return __half2(__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y));
}
static inline __half2 __hneg2(const __half2 a) { return __half2(__hneg(a.x), __hneg(a.y)); }
static inline __half2 __habs2(const __half2 a) { return __half2(__habs(a.x), __habs(a.y)); }
// complex multiply-add: (a.x + i a.y)(b.x + i b.y) + (c.x + i c.y), as fused steps
static inline __half2 __hcmadd(const __half2 a, const __half2 b, const __half2 c) {
  __half re = __hfma(a.x, b.x, c.x), im = __hfma(a.x, b.y, c.y);
  return __half2(__hfma(__hneg(a.y), b.y, re), __hfma(a.y, b.x, im));
}

// ---- functions -------------------------------------------------------------------
// rounded to an integral value, exactly (every such half is a float)
static inline __half htrunc(const __half h) { return LC_H_(__lc_f16_rn<10, 5>(__builtin_truncf(LC_HF_(h)))); }
static inline __half hceil(const __half h) { return LC_H_(__lc_f16_rn<10, 5>(__builtin_ceilf(LC_HF_(h)))); }
static inline __half hfloor(const __half h) { return LC_H_(__lc_f16_rn<10, 5>(__builtin_floorf(LC_HF_(h)))); }
static inline __half hrint(const __half h) { return LC_H_(__lc_f16_rn<10, 5>(__builtin_rintf(LC_HF_(h)))); }

// the value of a function of the half a computed in double and rounded
// once to float, then to half: the GPU's approximate float instructions
// as the fake driver's interpreter computes them
static inline __half hsqrt(const __half a) { return LC_H_(__lc_f16_rn<10, 5>((float)__builtin_sqrt((double)LC_HF_(a)))); }
static inline __half hrsqrt(const __half a) { return LC_H_(__lc_f16_rn<10, 5>((float)(1.0 / __builtin_sqrt((double)LC_HF_(a))))); }
static inline __half hrcp(const __half a) { return LC_H_(__lc_f16_rn<10, 5>(1.0f / LC_HF_(a))); }
// exponentials and logarithms: the correctly rounded value, which the
// GPU's sequences (with their corrections of the inputs where the float
// steps round wrongly) give too
static inline __half __lc_hfun_(const __half a, double (*fn)(double)) {
  return LC_H_(__lc_f16_from_double<10, 5>(fn((double)LC_HF_(a)), __LC_RN));
}
static inline __half hexp(const __half a) { return __lc_hfun_(a, exp); }
static inline __half hexp2(const __half a) { return __lc_hfun_(a, exp2); }
static inline double __lc_exp10_(double x) { return pow(10.0, x); }
static inline __half hexp10(const __half a) { return __lc_hfun_(a, __lc_exp10_); }
static inline __half hlog(const __half a) { return __lc_hfun_(a, log); }
static inline __half hlog2(const __half a) { return __lc_hfun_(a, log2); }
static inline __half hlog10(const __half a) { return __lc_hfun_(a, log10); }
static inline __half hsin(const __half a) { return __lc_hfun_(a, sin); }
static inline __half hcos(const __half a) { return __lc_hfun_(a, cos); }
static inline __half htanh(const __half a) { return __lc_hfun_(a, tanh); }
static inline __half htanh_approx(const __half a) { return __lc_hfun_(a, tanh); }
#define LC_F16_FUN2_(N, F) \
  static inline __half2 N(const __half2 a) { return __half2(F(a.x), F(a.y)); }
LC_F16_FUN2_(h2trunc, htrunc)
LC_F16_FUN2_(h2ceil, hceil)
LC_F16_FUN2_(h2floor, hfloor)
LC_F16_FUN2_(h2rint, hrint)
LC_F16_FUN2_(h2sqrt, hsqrt)
LC_F16_FUN2_(h2rsqrt, hrsqrt)
LC_F16_FUN2_(h2rcp, hrcp)
LC_F16_FUN2_(h2exp, hexp)
LC_F16_FUN2_(h2exp2, hexp2)
LC_F16_FUN2_(h2exp10, hexp10)
LC_F16_FUN2_(h2log, hlog)
LC_F16_FUN2_(h2log2, hlog2)
LC_F16_FUN2_(h2log10, hlog10)
LC_F16_FUN2_(h2sin, hsin)
LC_F16_FUN2_(h2cos, hcos)
LC_F16_FUN2_(h2tanh, htanh)
LC_F16_FUN2_(h2tanh_approx, htanh_approx)
#undef LC_F16_FUN2_

// ---- operators ------------------------------------------------------------------
#if !defined(__CUDA_NO_HALF_OPERATORS__)
static inline __half operator+(const __half &lh, const __half &rh) { return __hadd(lh, rh); }
static inline __half operator-(const __half &lh, const __half &rh) { return __hsub(lh, rh); }
static inline __half operator*(const __half &lh, const __half &rh) { return __hmul(lh, rh); }
static inline __half operator/(const __half &lh, const __half &rh) { return __hdiv(lh, rh); }
static inline __half &operator+=(__half &lh, const __half &rh) { return lh = __hadd(lh, rh); }
static inline __half &operator-=(__half &lh, const __half &rh) { return lh = __hsub(lh, rh); }
static inline __half &operator*=(__half &lh, const __half &rh) { return lh = __hmul(lh, rh); }
static inline __half &operator/=(__half &lh, const __half &rh) { return lh = __hdiv(lh, rh); }
static inline __half &operator++(__half &h) { return h = __hadd(h, LC_H_(0x3c00)); }
static inline __half &operator--(__half &h) { return h = __hsub(h, LC_H_(0x3c00)); }
static inline __half operator++(__half &h, const int) { __half r = h; h = __hadd(h, LC_H_(0x3c00)); return r; }
static inline __half operator--(__half &h, const int) { __half r = h; h = __hsub(h, LC_H_(0x3c00)); return r; }
static inline __half operator+(const __half &h) { return h; }
static inline __half operator-(const __half &h) { return __hneg(h); }
static inline bool operator==(const __half &lh, const __half &rh) { return __heq(lh, rh); }
static inline bool operator!=(const __half &lh, const __half &rh) { return __hneu(lh, rh); }
static inline bool operator>(const __half &lh, const __half &rh) { return __hgt(lh, rh); }
static inline bool operator<(const __half &lh, const __half &rh) { return __hlt(lh, rh); }
static inline bool operator>=(const __half &lh, const __half &rh) { return __hge(lh, rh); }
static inline bool operator<=(const __half &lh, const __half &rh) { return __hle(lh, rh); }
#endif
#if !defined(__CUDA_NO_HALF2_OPERATORS__)
static inline __half2 operator+(const __half2 &lh, const __half2 &rh) { return __hadd2(lh, rh); }
static inline __half2 operator-(const __half2 &lh, const __half2 &rh) { return __hsub2(lh, rh); }
static inline __half2 operator*(const __half2 &lh, const __half2 &rh) { return __hmul2(lh, rh); }
static inline __half2 operator/(const __half2 &lh, const __half2 &rh) { return __h2div(lh, rh); }
static inline __half2 &operator+=(__half2 &lh, const __half2 &rh) { return lh = __hadd2(lh, rh); }
static inline __half2 &operator-=(__half2 &lh, const __half2 &rh) { return lh = __hsub2(lh, rh); }
static inline __half2 &operator*=(__half2 &lh, const __half2 &rh) { return lh = __hmul2(lh, rh); }
static inline __half2 &operator/=(__half2 &lh, const __half2 &rh) { return lh = __h2div(lh, rh); }
static inline __half2 &operator++(__half2 &h) { return h = __hadd2(h, __half2(LC_H_(0x3c00), LC_H_(0x3c00))); }
static inline __half2 &operator--(__half2 &h) { return h = __hsub2(h, __half2(LC_H_(0x3c00), LC_H_(0x3c00))); }
static inline __half2 operator++(__half2 &h, const int) { __half2 r = h; ++h; return r; }
static inline __half2 operator--(__half2 &h, const int) { __half2 r = h; --h; return r; }
static inline __half2 operator+(const __half2 &h) { return h; }
static inline __half2 operator-(const __half2 &h) { return __hneg2(h); }
static inline bool operator==(const __half2 &lh, const __half2 &rh) { return __hbeq2(lh, rh); }
static inline bool operator!=(const __half2 &lh, const __half2 &rh) { return __hbneu2(lh, rh); }
static inline bool operator>(const __half2 &lh, const __half2 &rh) { return __hbgt2(lh, rh); }
static inline bool operator<(const __half2 &lh, const __half2 &rh) { return __hblt2(lh, rh); }
static inline bool operator>=(const __half2 &lh, const __half2 &rh) { return __hbge2(lh, rh); }
static inline bool operator<=(const __half2 &lh, const __half2 &rh) { return __hble2(lh, rh); }
#endif

// ---- warps, atomics, loads and stores ---------------------------------------------
// shuffles move the bits (sim_runtime.h's warp functions)
LC_WARP_SHFL_T_(__half)
LC_WARP_SHFL_T_(__half2)

// atomicAdd: compare-and-swap on the bits (blocks run on several threads)
template <typename T, typename U, typename Op>
static inline T __lc_atomic16(T *address, T val, Op op) {
#ifdef LC_SIM_ALIGNED
  if (__builtin_expect((uintptr_t)address % sizeof(U) != 0, 0))
    __lc_misaligned_atomic("atomicAdd", address, sizeof(U));
#endif
  U *q = reinterpret_cast<U *>(address), old = __atomic_load_n(q, __ATOMIC_RELAXED), nw;
  do nw = (U)__lc_bits(op(__lc_from_bits<T>(old), val));
  while (!__atomic_compare_exchange_n(q, &old, nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return __lc_from_bits<T>(old);
}
static inline __half atomicAdd(__half *const address, const __half val) {
  return __lc_atomic16<__half, unsigned short>(address, val, [](__half a, __half b) { return __hadd(a, b); });
}
static inline __half2 atomicAdd(__half2 *const address, const __half2 val) {
  return __lc_atomic16<__half2, unsigned int>(address, val, [](__half2 a, __half2 b) { return __hadd2(a, b); });
}

// the cache-hinted loads and stores are plain ones here
#define LC_F16_LDST_(T)                                                                     \
  static inline T __ldg(const T *p) { return *p; }                                          \
  static inline T __ldcg(const T *p) { return *p; }                                         \
  static inline T __ldca(const T *p) { return *p; }                                         \
  static inline T __ldcs(const T *p) { return *p; }                                         \
  static inline T __ldlu(const T *p) { return *p; }                                         \
  static inline T __ldcv(const T *p) { return *p; }                                         \
  static inline void __stwb(T *p, const T v) { *p = v; }                                    \
  static inline void __stcg(T *p, const T v) { *p = v; }                                    \
  static inline void __stcs(T *p, const T v) { *p = v; }                                    \
  static inline void __stwt(T *p, const T v) { *p = v; }
LC_F16_LDST_(__half)
LC_F16_LDST_(__half2)

#undef LC_HF_
#undef LC_H_
#undef LC_HB_

#endif  // __CUDA_FP16_H__
