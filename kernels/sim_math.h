// sim_math.h: the CUDA math API and the device intrinsics for the host C++
// compiler, compiled into every simulated kernel module after
// sim_runtime.h. Written from CUDA's documented behaviour (the CUDA Math API
// and the PTX ISA), with CUDA's overload sets and no others: what NVRTC
// rejects, this must not add.
//
// What the C library has with CUDA's meaning (sinf, erfc, j0, exp10...)
// comes from <math.h>. The rest is here:
//   - the rounding intrinsics (__fadd_rz, __dmul_ru, __int2float_rd...),
//     rounded exactly: the operation runs under fesetround, its operands
//     and result passed through an empty asm so that the compiler can
//     neither fold it nor move it out of the mode's reach;
//   - the conversions to integers, rounded, then saturated to the range of
//     the result, NaN giving 0, as cvt does on a GPU;
//   - the fast intrinsics (__expf, __sinf...) computed as NVRTC compiles
//     them (ex2.approx of x * log2(e)...). glibc declares its own internal
//     __expf, __sinf... (with no symbol behind them: "undefined symbol"
//     when a module loads), so CUDA's are macros naming __lc_ functions;
//   - the functions only CUDA has (erfinv, normcdf, sinpi, rnorm3d,
//     cyl_bessel_i0...), computed in long double and rounded once, their
//     single-precision forms through double; their float overloads;
//   - the integer, bit and SIMD intrinsics; min and max with CUDA's
//     overloads (mixed signedness included), umin, llmax...;
//   - __ldg and the cache-hinted loads and stores, clock64, __nanosleep.
// The C library's extras (SIZE_MAX, significand, sinl...) stay visible;
// NVRTC has none of them.
#ifndef LUACUDA_SIM_MATH_H
#define LUACUDA_SIM_MATH_H

#include <fenv.h>
#include <sched.h>
#include <time.h>
#include <limits>

// ---- bits ---------------------------------------------------------------
// NaN tests that -ffast-math (--use_fast_math) cannot fold away
static inline bool __lc_isnanf(float x) { return (__lc_bits(x) & 0x7fffffffu) > 0x7f800000u; }
static inline bool __lc_isnan(double x) {
  return (__lc_bits(x) & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
}
static inline bool __lc_isnan(float x) { return __lc_isnanf(x); }

// the value of v, unknown to the optimiser from here on
template <typename T>
__attribute__((always_inline)) static inline void __lc_opaque(T &v) {
  __asm__ volatile("" : "+m"(v) : : "memory");
}

// the values of a..., unknown to the optimiser from here on
template <typename... A>
__attribute__((always_inline)) static inline void __lc_opaque_all(A &...a) {
  int opaque[] = {(__lc_opaque(a), 0)...};
  (void)opaque;
}

// The body of a function computing expr in rounding mode m (FE_TOWARDZERO...)
// from its parameters (named after expr); to nearest, the threads' own mode,
// without a switch (but never fused with what follows: __fmul_rn then an
// addition is no fma). A macro, not a template taking a lambda: every
// rounding intrinsic would instantiate that template in every module's
// compile, used or not (a quarter of a small kernel's compile time).
#define LC_ROUNDED_(m, R, expr, ...)                      \
  {                                                       \
    int old_ = m == FE_TONEAREST ? m : fegetround();      \
    if (m != FE_TONEAREST) fesetround(m);                 \
    __lc_opaque_all(__VA_ARGS__);                         \
    R r_ = expr;                                          \
    __lc_opaque(r_);                                      \
    if (m != FE_TONEAREST) fesetround(old_);              \
    return r_;                                            \
  }

// name_rn, name_rz, name_ru and name_rd: params computing expr, each in its
// rounding mode
#define LC_ROUNDINGS_(name, R, params, expr, ...)                          \
  static inline R name##_rn params LC_ROUNDED_(FE_TONEAREST, R, expr, __VA_ARGS__)  \
  static inline R name##_rz params LC_ROUNDED_(FE_TOWARDZERO, R, expr, __VA_ARGS__) \
  static inline R name##_ru params LC_ROUNDED_(FE_UPWARD, R, expr, __VA_ARGS__)     \
  static inline R name##_rd params LC_ROUNDED_(FE_DOWNWARD, R, expr, __VA_ARGS__)

// ---- IEEE operations with a named rounding -------------------------------
LC_ROUNDINGS_(__fadd, float, (float x, float y), x + y, x, y)
LC_ROUNDINGS_(__fsub, float, (float x, float y), x - y, x, y)
LC_ROUNDINGS_(__fmul, float, (float x, float y), x * y, x, y)
LC_ROUNDINGS_(__fdiv, float, (float x, float y), x / y, x, y)
LC_ROUNDINGS_(__fmaf, float, (float x, float y, float z), __builtin_fmaf(x, y, z), x, y, z)
LC_ROUNDINGS_(__fmaf_ieee, float, (float x, float y, float z), __builtin_fmaf(x, y, z), x, y, z)
LC_ROUNDINGS_(__frcp, float, (float x), 1.0f / x, x)
LC_ROUNDINGS_(__fsqrt, float, (float x), __builtin_sqrtf(x), x)
LC_ROUNDINGS_(__dadd, double, (double x, double y), x + y, x, y)
LC_ROUNDINGS_(__dsub, double, (double x, double y), x - y, x, y)
LC_ROUNDINGS_(__dmul, double, (double x, double y), x * y, x, y)
LC_ROUNDINGS_(__ddiv, double, (double x, double y), x / y, x, y)
LC_ROUNDINGS_(__fma, double, (double x, double y, double z), __builtin_fma(x, y, z), x, y, z)
LC_ROUNDINGS_(__drcp, double, (double x), 1.0 / x, x)
LC_ROUNDINGS_(__dsqrt, double, (double x), __builtin_sqrt(x), x)

// 1/sqrt(x) rounded to nearest: the double estimate is within an ulp; the
// midpoint m between it and a neighbour decides, by the sign of m*m*x - 1
// (m*m is exact in double, fma rounds the rest once, keeping the sign)
static inline float __frsqrt_rn(float x) {
  float r = (float)(1.0 / __builtin_sqrt((double)x));
  if (!(x > 0.0f) || __builtin_isinf(x) || __builtin_isinf(r)) return r;
  float up = __builtin_nextafterf(r, __builtin_inff()), down = __builtin_nextafterf(r, 0.0f);
  double mu = ((double)r + up) / 2, md = ((double)r + down) / 2;
  if (__builtin_fma(mu * mu, (double)x, -1.0) < 0) return up;
  if (__builtin_fma(md * md, (double)x, -1.0) > 0) return down;
  return r;
}

// ---- conversions ----------------------------------------------------------
// an integral double (or an infinity, or NaN) to integer type I, saturated,
// NaN giving 0
template <typename I>
static inline I __lc_saturate(double r) {
  if (__lc_isnan(r)) return 0;
  const double hi = (double)std::numeric_limits<I>::max(), lo = (double)std::numeric_limits<I>::min();
  // a 64-bit maximum rounds up to 2^63 or 2^64 as a double: compare with >=
  if (r >= hi) return std::numeric_limits<I>::max();
  if (r <= lo) return std::numeric_limits<I>::min();
  return (I)r;
}
#define LC_TO_INT_(from, F, to, I)                                                     \
  static inline I __##from##2##to##_rn(F x) { return __lc_saturate<I>(__builtin_nearbyint((double)x)); } \
  static inline I __##from##2##to##_rz(F x) { return __lc_saturate<I>(__builtin_trunc((double)x)); } \
  static inline I __##from##2##to##_ru(F x) { return __lc_saturate<I>(__builtin_ceil((double)x)); } \
  static inline I __##from##2##to##_rd(F x) { return __lc_saturate<I>(__builtin_floor((double)x)); }
LC_TO_INT_(float, float, int, int)
LC_TO_INT_(float, float, uint, unsigned int)
LC_TO_INT_(float, float, ll, long long)
LC_TO_INT_(float, float, ull, unsigned long long)
LC_TO_INT_(double, double, int, int)
LC_TO_INT_(double, double, uint, unsigned int)
LC_TO_INT_(double, double, ll, long long)
LC_TO_INT_(double, double, ull, unsigned long long)
#undef LC_TO_INT_

LC_ROUNDINGS_(__int2float, float, (int x), (float)x, x)
LC_ROUNDINGS_(__uint2float, float, (unsigned int x), (float)x, x)
LC_ROUNDINGS_(__ll2float, float, (long long x), (float)x, x)
LC_ROUNDINGS_(__ull2float, float, (unsigned long long x), (float)x, x)
LC_ROUNDINGS_(__ll2double, double, (long long x), (double)x, x)
LC_ROUNDINGS_(__ull2double, double, (unsigned long long x), (double)x, x)
LC_ROUNDINGS_(__double2float, float, (double x), (float)x, x)
static inline double __int2double_rn(int x) { return (double)x; }
static inline double __uint2double_rn(unsigned int x) { return (double)x; }
#undef LC_ROUNDINGS_
#undef LC_ROUNDED_

// the older spellings with the rounding as an argument (device_types.h's enum)
enum cudaRoundMode { cudaRoundNearest, cudaRoundZero, cudaRoundPosInf, cudaRoundMinInf };
#define LC_BY_MODE_(f, ...)                                                          \
  (mode == cudaRoundZero ? f##_rz(__VA_ARGS__) : mode == cudaRoundPosInf ? f##_ru(__VA_ARGS__) \
   : mode == cudaRoundMinInf ? f##_rd(__VA_ARGS__) : f##_rn(__VA_ARGS__))
static inline double fma(double a, double b, double c, cudaRoundMode mode) { return LC_BY_MODE_(__fma, a, b, c); }
static inline double dmul(double a, double b, cudaRoundMode mode = cudaRoundNearest) { return LC_BY_MODE_(__dmul, a, b); }
static inline double dadd(double a, double b, cudaRoundMode mode = cudaRoundNearest) { return LC_BY_MODE_(__dadd, a, b); }
static inline double dsub(double a, double b, cudaRoundMode mode = cudaRoundNearest) { return LC_BY_MODE_(__dsub, a, b); }
static inline int double2int(double a, cudaRoundMode mode = cudaRoundZero) { return LC_BY_MODE_(__double2int, a); }
static inline unsigned int double2uint(double a, cudaRoundMode mode = cudaRoundZero) { return LC_BY_MODE_(__double2uint, a); }
static inline long long double2ll(double a, cudaRoundMode mode = cudaRoundZero) { return LC_BY_MODE_(__double2ll, a); }
static inline unsigned long long double2ull(double a, cudaRoundMode mode = cudaRoundZero) { return LC_BY_MODE_(__double2ull, a); }
static inline double ll2double(long long a, cudaRoundMode mode = cudaRoundNearest) { return LC_BY_MODE_(__ll2double, a); }
static inline double ull2double(unsigned long long a, cudaRoundMode mode = cudaRoundNearest) { return LC_BY_MODE_(__ull2double, a); }
static inline double int2double(int a, cudaRoundMode mode = cudaRoundNearest) { (void)mode; return (double)a; }
static inline double uint2double(unsigned int a, cudaRoundMode mode = cudaRoundNearest) { (void)mode; return (double)a; }
static inline double float2double(float a, cudaRoundMode mode = cudaRoundNearest) { (void)mode; return (double)a; }
#undef LC_BY_MODE_

static inline int __float_as_int(float x) { return __lc_from_bits<int>(__lc_bits(x)); }
static inline unsigned int __float_as_uint(float x) { return (unsigned int)__lc_bits(x); }
static inline float __int_as_float(int x) { return __lc_from_bits<float>((unsigned int)x); }
static inline float __uint_as_float(unsigned int x) { return __lc_from_bits<float>(x); }
static inline long long __double_as_longlong(double x) { return (long long)__lc_bits(x); }
static inline double __longlong_as_double(long long x) {
  return __lc_from_bits<double>((unsigned long long)x);
}
static inline int __double2hiint(double x) { return (int)(unsigned int)(__lc_bits(x) >> 32); }
static inline int __double2loint(double x) { return (int)(unsigned int)__lc_bits(x); }
static inline double __hiloint2double(int hi, int lo) {
  return __lc_from_bits<double>((unsigned long long)(unsigned int)hi << 32 | (unsigned int)lo);
}

// ---- fast single-precision intrinsics -------------------------------------
// As NVRTC compiles them: the PTX approximations (ex2.approx, lg2.approx,
// sin.approx, cos.approx, tanh.approx: the C library's functions here)
// with the same scalings, each product rounded to float. div.approx gives
// 0 for divisors of magnitude in (2^126, 2^128), as a GPU does.
static inline float __lc_div_approx(float x, float y) {
  float a = __builtin_fabsf(y);
  if (a > 0x1p126f && a < __builtin_inff()) return x * __builtin_copysignf(0.0f, y);
  return x / y;
}
static inline float __lc_expf(float x) { return exp2f(x * 0x1.715476p+0f); }
static inline float __lc_exp10f(float x) { return exp2f(x * 0x1.a934f0p+1f); }
static inline float __lc_logf(float x) { return log2f(x) * 0x1.62e430p-1f; }
static inline float __lc_log2f(float x) { return log2f(x); }
static inline float __lc_log10f(float x) { return log2f(x) * 0x1.344136p-2f; }
static inline float __lc_sinf(float x) { return sinf(x); }
static inline float __lc_cosf(float x) { return cosf(x); }
static inline float __lc_tanf(float x) { return __lc_div_approx(sinf(x), cosf(x)); }
static inline float __lc_tanhf(float x) { return tanhf(x); }
static inline float __lc_powf(float x, float y) { return exp2f(y * log2f(x)); }
static inline void __lc_sincosf(float x, float *s, float *c) { *s = sinf(x); *c = cosf(x); }
#define __expf __lc_expf
#define __exp10f __lc_exp10f
#define __logf __lc_logf
#define __log2f __lc_log2f
#define __log10f __lc_log10f
#define __sinf __lc_sinf
#define __cosf __lc_cosf
#define __tanf __lc_tanf
#define __tanhf __lc_tanhf
#define __powf __lc_powf
#define __sincosf __lc_sincosf
static inline float __fdividef(float x, float y) { return __lc_div_approx(x, y); }
static inline float fdividef(float x, float y) { return x / y; }
static inline double fdivide(double x, double y) { return x / y; }
// cvt.sat: clamped to [0, 1], NaN giving +0
static inline float __saturatef(float x) {
  return __lc_isnanf(x) ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
}
// rsqrt.approx (correctly rounded here)
static inline float rsqrtf(float x) { return (float)(1.0 / __builtin_sqrt((double)x)); }
static inline double rsqrt(double x) { return (double)(1.0L / sqrtl((long double)x)); }

// ---- functions only CUDA has ------------------------------------------------
// x86-64's and aarch64's long double carry 64 and 113 bits: a double
// result computed there and rounded once is within CUDA's bounds.
typedef long double __lc_ld;

static inline double rcbrt(double x) { return (double)(1.0L / cbrtl((__lc_ld)x)); }

// sin(pi x), cos(pi x): x reduced exactly to y in [-1/4, 1/4] and the
// quadrant q of pi x
static inline __lc_ld __lc_pi_reduce(double x, int *q) {
  double r = fmod(x, 2.0);                     // exact, in (-2, 2)
  double k = __builtin_nearbyint(2.0 * r);     // the nearest multiple of 1/2
  *q = (int)k & 3;
  return (__lc_ld)(r - k / 2) * 3.14159265358979323846264338327950288L;
}
static inline double sinpi(double x) {
  if (__lc_isnan(x) || __builtin_isinf(x)) return x - x;
  if (x == __builtin_trunc(x)) return __builtin_copysign(0.0, x);   // sin(n pi) = +-0
  int q;
  __lc_ld y = __lc_pi_reduce(x, &q);
  __lc_ld s = q == 0 ? sinl(y) : q == 1 ? cosl(y) : q == 2 ? -sinl(y) : -cosl(y);
  return (double)s;
}
static inline double cospi(double x) {
  if (__lc_isnan(x) || __builtin_isinf(x)) return x - x;
  if (__builtin_fabs(x) >= 0x1p53) return 1.0;                        // even integers
  if (x - __builtin_trunc(x) == 0.5 || x - __builtin_trunc(x) == -0.5) return 0.0;
  int q;
  __lc_ld y = __lc_pi_reduce(x, &q);
  __lc_ld c = q == 0 ? cosl(y) : q == 1 ? -sinl(y) : q == 2 ? -cosl(y) : sinl(y);
  return (double)c;
}
static inline void sincospi(double x, double *s, double *c) { *s = sinpi(x); *c = cospi(x); }

// erf(t) = p for p in (0, 1/2] (|t| < 0.48): Newton from the series' start
static inline __lc_ld __lc_erfinv_small(__lc_ld p) {
  const __lc_ld c = 0.886226925452758013649083741671L;      // sqrt(pi)/2
  __lc_ld t = c * p * (1 + 0.785398163397448309615660845819L * p * p / 3);
  for (int i = 0; i < 8; i++) {
    __lc_ld d = (erfl(t) - p) * c * expl(t * t);
    t -= d;
    if (fabsl(d) <= fabsl(t) * 1e-21L) break;
  }
  return t;
}
// erfc(t) = q for q in (0, 1/2] (t > 0.47): Newton on log(erfc(t)), from
// the asymptotic erfc(t) ~ exp(-t^2) / (t sqrt(pi))
static inline __lc_ld __lc_erfcinv_small(__lc_ld q) {
  const __lc_ld rpi = 1.77245385090551602729816748334L;     // sqrt(pi)
  __lc_ld lq = logl(q), t = sqrtl(-lq);
  for (int i = 0; i < 3 && q < 0.1L; i++) t = sqrtl(-logl(q * rpi * t));
  if (q >= 0.1L) t = 0.5L + (0.5L - q) * 2;                    // within [0.47, 1.3]
  for (int i = 0; i < 30; i++) {
    __lc_ld e = erfcl(t);
    // d/dt log(erfc(t)) = -2 exp(-t^2) / (sqrt(pi) erfc(t))
    __lc_ld d = (logl(e) - lq) * e * rpi * expl(t * t) / 2;
    t += d;
    if (fabsl(d) <= t * 1e-21L) break;
  }
  return t;
}
static inline __lc_ld __lc_erfcinv(double y) {     // y in (0, 2)
  if (y <= 0.5) return __lc_erfcinv_small(y);
  if (y >= 1.5) return -__lc_erfcinv_small(2.0 - y);     // 2 - y exact
  double p = 1.0 - y;                                    // exact
  __lc_ld t = __lc_erfinv_small(__builtin_fabs(p));
  return p < 0 ? -t : t;
}
static inline double erfinv(double x) {
  if (__lc_isnan(x)) return x + x;
  double a = __builtin_fabs(x);
  if (a > 1.0) return __builtin_nan("");
  if (a == 1.0) return __builtin_copysign(__builtin_inf(), x);
  if (a == 0.0) return x;
  __lc_ld t = a <= 0.5 ? __lc_erfinv_small(a) : __lc_erfcinv_small(1.0 - a);
  return __builtin_copysign((double)t, x);
}
static inline double erfcinv(double y) {
  if (__lc_isnan(y)) return y + y;
  if (y < 0.0 || y > 2.0) return __builtin_nan("");
  if (y == 0.0) return __builtin_inf();
  if (y == 2.0) return -__builtin_inf();
  return (double)__lc_erfcinv(y);
}
static inline double normcdfinv(double p) {
  if (__lc_isnan(p)) return p + p;
  if (p < 0.0 || p > 1.0) return __builtin_nan("");
  if (p == 0.0) return -__builtin_inf();
  if (p == 1.0) return __builtin_inf();
  __lc_ld t = __lc_erfcinv(2.0 * p);
  return t == 0 ? 0.0 : (double)(-1.41421356237309504880168872420969808L * t);
}
static inline double normcdf(double x) {
  return (double)(0.5L * erfcl(-(__lc_ld)x * 0.707106781186547524400844362104849039L));
}
// exp(x^2) erfc(x): x^2 split exactly into hi + lo; past 50, the
// asymptotic series 1/(x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k
static inline double erfcx(double x) {
  if (__lc_isnan(x)) return x + x;
  if (x < -27.0) return __builtin_inf();       // 2 exp(x^2) overflows past -26.63
  if (x < 50.0) {
    __lc_ld h = (__lc_ld)x * x, l = fmal((__lc_ld)x, (__lc_ld)x, -h);
    return (double)(expl(h) * (1 + l) * erfcl((__lc_ld)x));
  }
  if (__builtin_isinf(x)) return 0.0;
  __lc_ld r = 1 / (__lc_ld)x, h = r * r / 2, term = 1, sum = 1;
  for (int k = 1; k < 40 && fabsl(term) > 1e-22L; k++) {
    term *= -(2 * k - 1) * h;
    sum += term;
  }
  return (double)(sum * r * 0.564189583547756286948079451560772586L);   // 1/sqrt(pi)
}
static inline double rhypot(double x, double y) { return (double)(1.0L / hypotl(x, y)); }
// sqrt of a sum of squares in long double (no overflow, no underflow); an
// infinite coordinate gives infinity, NaNs or not
static inline __lc_ld __lc_norm(int n, const double *v) {
  __lc_ld s = 0;
  for (int i = 0; i < n; i++)
    if (__builtin_isinf(v[i])) return __builtin_infl();
  for (int i = 0; i < n; i++) s += (__lc_ld)v[i] * v[i];
  return sqrtl(s);
}
static inline double norm3d(double a, double b, double c) {
  const double v[] = {a, b, c};
  return (double)__lc_norm(3, v);
}
static inline double norm4d(double a, double b, double c, double d) {
  const double v[] = {a, b, c, d};
  return (double)__lc_norm(4, v);
}
static inline double rnorm3d(double a, double b, double c) {
  const double v[] = {a, b, c};
  return (double)(1 / __lc_norm(3, v));
}
static inline double rnorm4d(double a, double b, double c, double d) {
  const double v[] = {a, b, c, d};
  return (double)(1 / __lc_norm(4, v));
}
static inline __lc_ld __lc_normn(int dim, const double *p) {
  __lc_ld s = 0;
  bool inf = false;
  for (int i = 0; i < dim; i++) {
    inf = inf || __builtin_isinf(p[i]);
    s += (__lc_ld)p[i] * p[i];
  }
  return inf ? __builtin_infl() : sqrtl(s);
}
static inline double norm(int dim, const double *p) { return (double)__lc_normn(dim, p); }
static inline double rnorm(int dim, const double *p) { return (double)(1 / __lc_normn(dim, p)); }

// I0 and I1 (order nu): the power series to 30, the asymptotic expansion
// e^x / sqrt(2 pi x) sum_k (-1)^k prod_{j<=k} (4nu^2 - (2j-1)^2) / (k! (8x)^k)
// past it
static inline __lc_ld __lc_bessel_i(int nu, double x) {
  __lc_ld a = fabsl((__lc_ld)x), s;
  if (__builtin_isinf(x)) {
    s = __builtin_infl();
  } else if (a <= 30) {
    __lc_ld q = a * a / 4, term = nu ? a / 2 : 1;
    s = term;
    for (int k = 1; k < 200 && term > s * 1e-22L; k++) {
      term *= q / ((__lc_ld)k * (k + nu));
      s += term;
    }
  } else {
    __lc_ld term = 1, mu = 4.0L * nu * nu;
    s = 1;
    for (int k = 1; k < 60; k++) {
      __lc_ld next = -term * (mu - (__lc_ld)(2 * k - 1) * (2 * k - 1)) / ((__lc_ld)k * 8 * a);
      if (fabsl(next) >= fabsl(term)) break;
      term = next;
      s += term;
      if (fabsl(term) < 1e-22L) break;
    }
    s *= expl(a) / sqrtl(2 * 3.14159265358979323846264338327950288L * a);
  }
  return nu && x < 0 ? -s : s;
}
static inline double cyl_bessel_i0(double x) {
  if (__lc_isnan(x)) return x + x;
  return (double)__lc_bessel_i(0, x);
}
static inline double cyl_bessel_i1(double x) {
  if (__lc_isnan(x) || x == 0.0) return x + x;
  return (double)__lc_bessel_i(1, x);
}

// single precision: through double, rounded once more
static inline float rcbrtf(float x) { return (float)rcbrt(x); }
static inline float sinpif(float x) { return (float)sinpi(x); }
static inline float cospif(float x) { return (float)cospi(x); }
static inline void sincospif(float x, float *s, float *c) { *s = sinpif(x); *c = cospif(x); }
static inline float erfinvf(float x) { return (float)erfinv(x); }
static inline float erfcinvf(float x) { return (float)erfcinv(x); }
static inline float erfcxf(float x) { return (float)erfcx(x); }
static inline float normcdff(float x) { return (float)normcdf(x); }
static inline float normcdfinvf(float x) { return (float)normcdfinv(x); }
static inline float cyl_bessel_i0f(float x) { return (float)cyl_bessel_i0(x); }
static inline float cyl_bessel_i1f(float x) { return (float)cyl_bessel_i1(x); }
static inline float rhypotf(float x, float y) { return (float)rhypot(x, y); }
static inline float norm3df(float a, float b, float c) { return (float)norm3d(a, b, c); }
static inline float norm4df(float a, float b, float c, float d) { return (float)norm4d(a, b, c, d); }
static inline float rnorm3df(float a, float b, float c) { return (float)rnorm3d(a, b, c); }
static inline float rnorm4df(float a, float b, float c, float d) { return (float)rnorm4d(a, b, c, d); }
static inline __lc_ld __lc_normnf(int dim, const float *p) {
  __lc_ld s = 0;
  bool inf = false;
  for (int i = 0; i < dim; i++) {
    inf = inf || __builtin_isinf(p[i]);
    s += (__lc_ld)p[i] * p[i];
  }
  return inf ? __builtin_infl() : sqrtl(s);
}
static inline float normf(int dim, const float *p) { return (float)(double)__lc_normnf(dim, p); }
static inline float rnormf(int dim, const float *p) { return (float)(double)(1 / __lc_normnf(dim, p)); }

// the float overloads CUDA adds to C++'s (<cmath> has sin(float)...)
static inline float exp10(float x) { return exp10f(x); }
static inline float rsqrt(float x) { return rsqrtf(x); }
static inline float rcbrt(float x) { return rcbrtf(x); }
static inline float sinpi(float x) { return sinpif(x); }
static inline float cospi(float x) { return cospif(x); }
static inline void sincospi(float x, float *s, float *c) { sincospif(x, s, c); }
static inline void sincos(float x, float *s, float *c) { sincosf(x, s, c); }
static inline float erfinv(float x) { return erfinvf(x); }
static inline float erfcinv(float x) { return erfcinvf(x); }
static inline float erfcx(float x) { return erfcxf(x); }
static inline float normcdf(float x) { return normcdff(x); }
static inline float normcdfinv(float x) { return normcdfinvf(x); }
static inline float cyl_bessel_i0(float x) { return cyl_bessel_i0f(x); }
static inline float cyl_bessel_i1(float x) { return cyl_bessel_i1f(x); }
static inline float j0(float x) { return j0f(x); }
static inline float j1(float x) { return j1f(x); }
static inline float jn(int n, float x) { return jnf(n, x); }
static inline float y0(float x) { return y0f(x); }
static inline float y1(float x) { return y1f(x); }
static inline float yn(int n, float x) { return ynf(n, x); }

// ---- min and max ----------------------------------------------------------
// CUDA's overloads: mixed signedness compares as unsigned; floats as fminf
// and fmaxf (a NaN loses), -0 below +0 as min.f32 and max.f32 order them
static inline int min(int a, int b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
static inline unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
static inline long long llmin(long long a, long long b) { return a < b ? a : b; }
static inline long long llmax(long long a, long long b) { return a > b ? a : b; }
static inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
#define LC_MINMAX_(R, A, B)                                                    \
  static inline R min(A a, B b) { return (R)a < (R)b ? (R)a : (R)b; }          \
  static inline R max(A a, B b) { return (R)a > (R)b ? (R)a : (R)b; }
LC_MINMAX_(unsigned int, unsigned int, unsigned int)
LC_MINMAX_(unsigned int, int, unsigned int)
LC_MINMAX_(unsigned int, unsigned int, int)
LC_MINMAX_(long, long, long)
LC_MINMAX_(unsigned long, unsigned long, unsigned long)
LC_MINMAX_(unsigned long, long, unsigned long)
LC_MINMAX_(unsigned long, unsigned long, long)
LC_MINMAX_(long long, long long, long long)
LC_MINMAX_(unsigned long long, unsigned long long, unsigned long long)
LC_MINMAX_(unsigned long long, long long, unsigned long long)
LC_MINMAX_(unsigned long long, unsigned long long, long long)
#undef LC_MINMAX_
template <typename T>
static inline T __lc_fmin(T a, T b) {
  if (__lc_isnan(a)) return b;
  if (__lc_isnan(b)) return a;
  return a < b || (a == b && __builtin_signbit(a)) ? a : b;
}
template <typename T>
static inline T __lc_fmax(T a, T b) {
  if (__lc_isnan(a)) return b;
  if (__lc_isnan(b)) return a;
  return a > b || (a == b && !__builtin_signbit(a)) ? a : b;
}
static inline float min(float a, float b) { return __lc_fmin(a, b); }
static inline float max(float a, float b) { return __lc_fmax(a, b); }
static inline double min(double a, double b) { return __lc_fmin(a, b); }
static inline double max(double a, double b) { return __lc_fmax(a, b); }
static inline double min(float a, double b) { return __lc_fmin((double)a, b); }
static inline double max(float a, double b) { return __lc_fmax((double)a, b); }
static inline double min(double a, float b) { return __lc_fmin(a, (double)b); }
static inline double max(double a, float b) { return __lc_fmax(a, (double)b); }

// ---- integer intrinsics ---------------------------------------------------
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned int)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned int __brev(unsigned int x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x) {
  return (unsigned long long)__brev((unsigned int)x) << 32 | __brev((unsigned int)(x >> 32));
}
static inline unsigned short __nv_bswap16(unsigned short x) { return __builtin_bswap16(x); }
static inline unsigned int __nv_bswap32(unsigned int x) { return __builtin_bswap32(x); }
static inline unsigned long long __nv_bswap64(unsigned long long x) { return __builtin_bswap64(x); }
// bytes s[4n+2..4n] of the eight of y:x, for each byte n of the result
static inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  unsigned long long v = (unsigned long long)y << 32 | x;
  unsigned int r = 0;
  for (int n = 0; n < 4; n++) r |= (unsigned int)(v >> (8 * ((s >> (4 * n)) & 7)) & 0xff) << (8 * n);
  return r;
}
// hi:lo shifted by s mod 32 (_l, _r) or by s clamped to 32 (_lc, _rc)
static inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int s) {
  return (unsigned int)(((unsigned long long)hi << 32 | lo) << (s & 31) >> 32);
}
static inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int s) {
  return (unsigned int)(((unsigned long long)hi << 32 | lo) << (s > 32 ? 32 : s) >> 32);
}
static inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int s) {
  return (unsigned int)(((unsigned long long)hi << 32 | lo) >> (s & 31));
}
static inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int s) {
  return (unsigned int)(((unsigned long long)hi << 32 | lo) >> (s > 32 ? 32 : s));
}
// the low 24 bits of each operand (signed for __mul24), the low 32 of the product
static inline int __mul24(int x, int y) {
  long long a = (int)((unsigned int)x << 8) >> 8, b = (int)((unsigned int)y << 8) >> 8;
  return (int)(unsigned int)(a * b);
}
static inline unsigned int __umul24(unsigned int x, unsigned int y) {
  return (x & 0xffffffu) * (y & 0xffffffu);
}
static inline int __mulhi(int x, int y) { return (int)((long long)x * y >> 32); }
static inline unsigned int __umulhi(unsigned int x, unsigned int y) {
  return (unsigned int)((unsigned long long)x * y >> 32);
}
static inline long long __mul64hi(long long x, long long y) { return (long long)((__int128)x * y >> 64); }
static inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  return (unsigned long long)((unsigned __int128)x * y >> 64);
}
static inline unsigned int __sad(int x, int y, unsigned int z) {
  return (x > y ? (unsigned int)x - (unsigned int)y : (unsigned int)y - (unsigned int)x) + z;
}
static inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) {
  return (x > y ? x - y : y - x) + z;
}
// halving additions, without overflow: rounded down, or up (__r)
static inline int __hadd(int x, int y) { return (int)(((long long)x + y) >> 1); }
static inline int __rhadd(int x, int y) { return (int)(((long long)x + y + 1) >> 1); }
static inline unsigned int __uhadd(unsigned int x, unsigned int y) {
  return (unsigned int)(((unsigned long long)x + y) >> 1);
}
static inline unsigned int __urhadd(unsigned int x, unsigned int y) {
  return (unsigned int)(((unsigned long long)x + y + 1) >> 1);
}
// dot products of the bytes (and halves) of a and b, plus c
static inline int __dp4a(int a, int b, int c) {
  for (int i = 0; i < 4; i++) c += (int)(signed char)(a >> 8 * i) * (signed char)(b >> 8 * i);
  return c;
}
static inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
  for (int i = 0; i < 4; i++) c += (a >> 8 * i & 0xff) * (b >> 8 * i & 0xff);
  return c;
}
static inline int __dp4a(char4 a, char4 b, int c) {
  return c + a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}
static inline unsigned int __dp4a(uchar4 a, uchar4 b, unsigned int c) {
  return c + (unsigned int)(a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w);
}
// the two halves of a with two bytes of b: its low two (_lo) or high two (_hi)
#define LC_DP2A_(name, hi)                                                                \
  static inline int name(int a, int b, int c) {                                           \
    for (int i = 0; i < 2; i++) c += (int)(short)(a >> 16 * i) * (signed char)(b >> (8 * i + hi)); \
    return c;                                                                             \
  }                                                                                       \
  static inline unsigned int name(unsigned int a, unsigned int b, unsigned int c) {       \
    for (int i = 0; i < 2; i++) c += (a >> 16 * i & 0xffff) * (b >> (8 * i + hi) & 0xff); \
    return c;                                                                             \
  }                                                                                       \
  static inline int name(short2 a, char4 b, int c) {                                      \
    return hi ? c + a.x * b.z + a.y * b.w : c + a.x * b.x + a.y * b.y;                    \
  }                                                                                       \
  static inline unsigned int name(ushort2 a, uchar4 b, unsigned int c) {                  \
    return c + (unsigned int)(hi ? a.x * b.z + a.y * b.w : a.x * b.x + a.y * b.y);        \
  }
LC_DP2A_(__dp2a_lo, 0)
LC_DP2A_(__dp2a_hi, 16)
#undef LC_DP2A_

// ---- SIMD intrinsics: two halves or four bytes of an unsigned int --------
// op(a, b) on each lane, as signed (S) or unsigned values of 16 or 8 bits,
// the lane's bits of the result. op is a function pointer, not a template
// parameter: a lambda's own type would instantiate __lc_lanes once per
// intrinsic in every module's compile (GCC defers those instantiations past
// the precompiled head), though a kernel calls none of them
template <int W, bool S>
static inline unsigned int __lc_lanes(unsigned int a, unsigned int b, int (*op)(int, int)) {
  unsigned int r = 0, m = (1u << W) - 1;
  for (int i = 0; i < 32; i += W) {
    int x = (int)(a >> i & m), y = (int)(b >> i & m);
    if (S) { x = x << (32 - W) >> (32 - W); y = y << (32 - W) >> (32 - W); }
    r |= ((unsigned int)op(x, y) & m) << i;
  }
  return r;
}
template <int W, bool S>
static inline int __lc_sat(int v) {
  const int hi = S ? (1 << (W - 1)) - 1 : (1 << W) - 1, lo = S ? -(1 << (W - 1)) : 0;
  return v > hi ? hi : v < lo ? lo : v;
}
// __vNAME2 on halves, __vNAME4 on bytes
#define LC_SIMD_(name, S, expr)                                                            \
  static inline unsigned int name##2(unsigned int a, unsigned int b) {                    \
    return __lc_lanes<16, S>(a, b, [](int x, int y) -> int { const int W = 16; (void)W; (void)x; (void)y; return expr; }); \
  }                                                                                        \
  static inline unsigned int name##4(unsigned int a, unsigned int b) {                    \
    return __lc_lanes<8, S>(a, b, [](int x, int y) -> int { const int W = 8; (void)W; (void)x; (void)y; return expr; }); \
  }
#define LC_SIMD1_(name, S, expr)                                                           \
  static inline unsigned int name##2(unsigned int a) {                                    \
    return __lc_lanes<16, S>(a, 0, [](int x, int) -> int { const int W = 16; (void)W; return expr; }); \
  }                                                                                        \
  static inline unsigned int name##4(unsigned int a) {                                    \
    return __lc_lanes<8, S>(a, 0, [](int x, int) -> int { const int W = 8; (void)W; return expr; }); \
  }
LC_SIMD1_(__vabs, true, x < 0 ? -x : x)
LC_SIMD1_(__vabsss, true, (__lc_sat<W, true>(x < 0 ? -x : x)))
LC_SIMD1_(__vneg, true, -x)
LC_SIMD1_(__vnegss, true, (__lc_sat<W, true>(-x)))
LC_SIMD_(__vadd, false, x + y)
LC_SIMD_(__vaddss, true, (__lc_sat<W, true>(x + y)))
LC_SIMD_(__vaddus, false, (__lc_sat<W, false>(x + y)))
LC_SIMD_(__vsub, false, x - y)
LC_SIMD_(__vsubss, true, (__lc_sat<W, true>(x - y)))
LC_SIMD_(__vsubus, false, (__lc_sat<W, false>(x - y)))
LC_SIMD_(__vabsdiffs, true, x > y ? x - y : y - x)
LC_SIMD_(__vabsdiffu, false, x > y ? x - y : y - x)
LC_SIMD_(__vavgs, true, (x + y + (x + y >= 0)) >> 1)
LC_SIMD_(__vavgu, false, (x + y + 1) >> 1)
LC_SIMD_(__vhaddu, false, (x + y) >> 1)
LC_SIMD_(__vmaxs, true, x > y ? x : y)
LC_SIMD_(__vmaxu, false, x > y ? x : y)
LC_SIMD_(__vmins, true, x < y ? x : y)
LC_SIMD_(__vminu, false, x < y ? x : y)
LC_SIMD_(__vcmpeq, false, -(x == y))
LC_SIMD_(__vcmpne, false, -(x != y))
LC_SIMD_(__vcmpges, true, -(x >= y))
LC_SIMD_(__vcmpgeu, false, -(x >= y))
LC_SIMD_(__vcmpgts, true, -(x > y))
LC_SIMD_(__vcmpgtu, false, -(x > y))
LC_SIMD_(__vcmples, true, -(x <= y))
LC_SIMD_(__vcmpleu, false, -(x <= y))
LC_SIMD_(__vcmplts, true, -(x < y))
LC_SIMD_(__vcmpltu, false, -(x < y))
LC_SIMD_(__vseteq, false, x == y)
LC_SIMD_(__vsetne, false, x != y)
LC_SIMD_(__vsetges, true, x >= y)
LC_SIMD_(__vsetgeu, false, x >= y)
LC_SIMD_(__vsetgts, true, x > y)
LC_SIMD_(__vsetgtu, false, x > y)
LC_SIMD_(__vsetles, true, x <= y)
LC_SIMD_(__vsetleu, false, x <= y)
LC_SIMD_(__vsetlts, true, x < y)
LC_SIMD_(__vsetltu, false, x < y)
#undef LC_SIMD_
#undef LC_SIMD1_
// sums of the lanes' absolute differences
template <int W, bool S>
static inline unsigned int __lc_sad(unsigned int a, unsigned int b) {
  unsigned int d = __lc_lanes<W, S>(a, b, [](int x, int y) -> int { return x > y ? x - y : y - x; }), s = 0;
  for (int i = 0; i < 32; i += W) s += d >> i & ((1u << W) - 1);
  return s;
}
static inline unsigned int __vsads2(unsigned int a, unsigned int b) { return __lc_sad<16, true>(a, b); }
static inline unsigned int __vsads4(unsigned int a, unsigned int b) { return __lc_sad<8, true>(a, b); }
static inline unsigned int __vsadu2(unsigned int a, unsigned int b) { return __lc_sad<16, false>(a, b); }
static inline unsigned int __vsadu4(unsigned int a, unsigned int b) { return __lc_sad<8, false>(a, b); }

// ---- DPX: three-way minima and maxima, with ReLU, fused add ---------------
template <bool S>   // op: a function pointer, as for __lc_lanes
static inline unsigned int __lc_halves3(unsigned int a, unsigned int b, unsigned int c,
                                        long long (*op)(long long, long long, long long)) {
  unsigned int r = 0;
  for (int i = 0; i < 32; i += 16) {
    int x = (int)(a >> i & 0xffff), y = (int)(b >> i & 0xffff), z = (int)(c >> i & 0xffff);
    if (S) { x = (short)x; y = (short)y; z = (short)z; }
    r |= ((unsigned int)op(x, y, z) & 0xffffu) << i;
  }
  return r;
}
// name_s32, name_u32 on whole values, name_s16x2, name_u16x2 on halves
#define LC_DPX3_(name, expr)                                                               \
  static inline int name##_s32(int a, int b, int c) {                                      \
    long long x = a, y = b, z = c; (void)z; return (int)(expr);                            \
  }                                                                                        \
  static inline unsigned int name##_u32(unsigned int a, unsigned int b, unsigned int c) {  \
    unsigned long long x = a, y = b, z = c; (void)z; return (unsigned int)(expr);         \
  }                                                                                        \
  static inline unsigned int name##_s16x2(unsigned int a, unsigned int b, unsigned int c) { \
    return __lc_halves3<true>(a, b, c, [](long long x, long long y, long long z) -> long long { (void)z; return expr; }); \
  }                                                                                        \
  static inline unsigned int name##_u16x2(unsigned int a, unsigned int b, unsigned int c) { \
    return __lc_halves3<false>(a, b, c, [](long long x, long long y, long long z) -> long long { (void)z; return expr; }); \
  }
#define LC_DPX3_RELU_(name, expr)                                                          \
  static inline int name##_s32_relu(int a, int b, int c) {                                 \
    long long x = a, y = b, z = c; (void)z; long long r = (expr); return (int)(r > 0 ? r : 0); \
  }                                                                                        \
  static inline unsigned int name##_s16x2_relu(unsigned int a, unsigned int b, unsigned int c) { \
    return __lc_halves3<true>(a, b, c, [](long long x, long long y, long long z) -> long long {         \
      (void)z; long long r = (expr); return r > 0 ? r : 0; });                             \
  }
#define LC_MAX2_(p, q) ((p) > (q) ? (p) : (q))
#define LC_MIN2_(p, q) ((p) < (q) ? (p) : (q))
// a + b wraps around in its own width before the comparison
LC_DPX3_(__vimax3, LC_MAX2_(LC_MAX2_(x, y), z))
LC_DPX3_(__vimin3, LC_MIN2_(LC_MIN2_(x, y), z))
LC_DPX3_RELU_(__vimax3, LC_MAX2_(LC_MAX2_(x, y), z))
LC_DPX3_RELU_(__vimin3, LC_MIN2_(LC_MIN2_(x, y), z))
#undef LC_DPX3_
#undef LC_DPX3_RELU_
static inline int __vimax_s32_relu(int a, int b) { int m = a > b ? a : b; return m > 0 ? m : 0; }
static inline int __vimin_s32_relu(int a, int b) { int m = a < b ? a : b; return m > 0 ? m : 0; }
static inline unsigned int __vimax_s16x2_relu(unsigned int a, unsigned int b) {
  return __lc_lanes<16, true>(a, b, [](int x, int y) -> int { int m = x > y ? x : y; return m > 0 ? m : 0; });
}
static inline unsigned int __vimin_s16x2_relu(unsigned int a, unsigned int b) {
  return __lc_lanes<16, true>(a, b, [](int x, int y) -> int { int m = x < y ? x : y; return m > 0 ? m : 0; });
}
// max(a + b, c) and min(a + b, c), the sum wrapping around in its width
static inline int __viaddmax_s32(int a, int b, int c) {
  int s = (int)((unsigned int)a + (unsigned int)b);
  return s > c ? s : c;
}
static inline int __viaddmin_s32(int a, int b, int c) {
  int s = (int)((unsigned int)a + (unsigned int)b);
  return s < c ? s : c;
}
static inline int __viaddmax_s32_relu(int a, int b, int c) { int m = __viaddmax_s32(a, b, c); return m > 0 ? m : 0; }
static inline int __viaddmin_s32_relu(int a, int b, int c) { int m = __viaddmin_s32(a, b, c); return m > 0 ? m : 0; }
static inline unsigned int __viaddmax_u32(unsigned int a, unsigned int b, unsigned int c) {
  return a + b > c ? a + b : c;
}
static inline unsigned int __viaddmin_u32(unsigned int a, unsigned int b, unsigned int c) {
  return a + b < c ? a + b : c;
}
#define LC_ADDMM_(name, S, op, relu)                                                       \
  static inline unsigned int name(unsigned int a, unsigned int b, unsigned int c) {        \
    return __lc_halves3<S>(a, b, c, [](long long x, long long y, long long z) -> long long { \
      int s = S ? (short)(x + y) : (int)((x + y) & 0xffff);                                \
      int m = s op z ? s : z;                                                              \
      return relu && m < 0 ? 0 : m; });                                                    \
  }
LC_ADDMM_(__viaddmax_s16x2, true, >, false)
LC_ADDMM_(__viaddmin_s16x2, true, <, false)
LC_ADDMM_(__viaddmax_u16x2, false, >, false)
LC_ADDMM_(__viaddmin_u16x2, false, <, false)
LC_ADDMM_(__viaddmax_s16x2_relu, true, >, true)
LC_ADDMM_(__viaddmin_s16x2_relu, true, <, true)
#undef LC_ADDMM_
#undef LC_MAX2_
#undef LC_MIN2_
// max or min, and whether a was the one taken (a >= b, a <= b)
static inline int __vibmax_s32(int a, int b, bool *pred) { *pred = a >= b; return a >= b ? a : b; }
static inline unsigned int __vibmax_u32(unsigned int a, unsigned int b, bool *pred) {
  *pred = a >= b;
  return a >= b ? a : b;
}
static inline int __vibmin_s32(int a, int b, bool *pred) { *pred = a <= b; return a <= b ? a : b; }
static inline unsigned int __vibmin_u32(unsigned int a, unsigned int b, bool *pred) {
  *pred = a <= b;
  return a <= b ? a : b;
}
#define LC_VIB_(name, S, op)                                                               \
  static inline unsigned int name(unsigned int a, unsigned int b, bool *pred_hi, bool *pred_lo) { \
    unsigned int t = __lc_lanes<16, S>(a, b, [](int x, int y) -> int { return x op y; });          \
    *pred_hi = (t >> 16) != 0;                                                             \
    *pred_lo = (t & 0xffff) != 0;                                                          \
    return ((t >> 16 ? a : b) & 0xffff0000u) | ((t & 0xffff ? a : b) & 0xffffu);               \
  }
LC_VIB_(__vibmax_s16x2, true, >=)
LC_VIB_(__vibmax_u16x2, false, >=)
LC_VIB_(__vibmin_s16x2, true, <=)
LC_VIB_(__vibmin_u16x2, false, <=)
#undef LC_VIB_

// the position of the |offset|-th set bit of mask from bit base, upwards
// (offset > 0) or downwards; offset 0: base itself if set; none: ~0
static inline unsigned int __fns(unsigned int mask, unsigned int base, int offset) {
  if (offset == 0) return base < 32 && (mask >> base & 1) ? base : 0xffffffffu;
  int count = (offset > 0 ? offset : -offset) - 1, inc = offset > 0 ? 1 : -1;
  for (int pos = (int)base; pos >= 0 && pos < 32; pos += inc)
    if (mask >> pos & 1) {
      if (count == 0) return (unsigned int)pos;
      count--;
    }
  return 0xffffffffu;
}

// ---- loads and stores with cache hints: plain memory here -----------------
#define LC_LDST_(T)                                                                        \
  static inline T __ldg(const T *p) { return *p; }                                         \
  static inline T __ldcg(const T *p) { return *p; }                                        \
  static inline T __ldca(const T *p) { return *p; }                                        \
  static inline T __ldcs(const T *p) { return *p; }                                        \
  static inline T __ldlu(const T *p) { return *p; }                                        \
  static inline T __ldcv(const T *p) { __asm__ volatile("" : : : "memory"); return *p; }                    \
  static inline void __stwb(T *p, T v) { *p = v; }                                         \
  static inline void __stcg(T *p, T v) { *p = v; }                                         \
  static inline void __stcs(T *p, T v) { *p = v; }                                         \
  static inline void __stwt(T *p, T v) { *p = v; }
LC_LDST_(char) LC_LDST_(signed char) LC_LDST_(short) LC_LDST_(int) LC_LDST_(long)
LC_LDST_(long long) LC_LDST_(unsigned char) LC_LDST_(unsigned short) LC_LDST_(unsigned int)
LC_LDST_(unsigned long) LC_LDST_(unsigned long long) LC_LDST_(float) LC_LDST_(double)
LC_LDST_(char2) LC_LDST_(char4) LC_LDST_(short2) LC_LDST_(short4) LC_LDST_(int2) LC_LDST_(int4)
LC_LDST_(longlong2) LC_LDST_(uchar2) LC_LDST_(uchar4) LC_LDST_(ushort2) LC_LDST_(ushort4)
LC_LDST_(uint2) LC_LDST_(uint4) LC_LDST_(ulonglong2) LC_LDST_(float2) LC_LDST_(float4)
LC_LDST_(double2)
#undef LC_LDST_

// ---- time, and the rest ---------------------------------------------------
// clock() is the C library's (processor time: it counts up); clock64()
// counts nanoseconds
static inline long long clock64() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
// lets the other threads of the block run (a thread spinning on a flag
// another sets must not keep the worker to itself), and the OS's
static inline void __nanosleep(unsigned int ns) {
  (void)ns;
  __lc_block *b = __lc_current;
  if (!b->fibers) __lc_first_barrier(b, false);
  unsigned me = b->cur, w = me / warpSize;
  if (b->warp_wait[w]) {    // a lane asleep does not hold back its warp's calls
    b->f[me].state = LC_ASLEEP;
    __lc_warp_settle(b, w);
    b->f[me].state = LC_RUNNABLE;
  }
  __lc_yield(b, me);
  sched_yield();
}
static inline void __prof_trigger(int) {}
// the performance monitor counters: none here
static inline unsigned int __pm0() { return 0; }
static inline unsigned int __pm1() { return 0; }
static inline unsigned int __pm2() { return 0; }
static inline unsigned int __pm3() { return 0; }
__attribute__((noinline, cold, noreturn))
static inline void __brkpt() {
  char t[48];
  __lc_fail("__brkpt() called in block (%u, %u, %u), thread %s", __lc_blockIdx.x,
            __lc_blockIdx.y, __lc_blockIdx.z, __lc_thread_name(__lc_current->cur, t, sizeof t));
}

#endif  // LUACUDA_SIM_MATH_H
