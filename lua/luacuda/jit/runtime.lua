-- jit/runtime: the C++ helpers every Lua kernel's source starts with:
-- Lua's arithmetic on the kernel's types (wrapping integers, floored
-- division and modulo, logical shifts), conversions and atomics.
return [==[
template <class T> struct lcj_u { typedef T t; };
template <> struct lcj_u<int8_t> { typedef uint32_t t; };
template <> struct lcj_u<int16_t> { typedef uint32_t t; };
template <> struct lcj_u<int32_t> { typedef uint32_t t; };
template <> struct lcj_u<int64_t> { typedef uint64_t t; };
template <> struct lcj_u<uint8_t> { typedef uint32_t t; };
template <> struct lcj_u<uint16_t> { typedef uint32_t t; };
template <class T> struct lcj_signed { static const bool v = (T)-1 < (T)0; };
// integers wrap: the arithmetic is done in an unsigned type
template <class T> __device__ __forceinline__ T lcj_add(T a, T b) {
  return (T)((typename lcj_u<T>::t)a + (typename lcj_u<T>::t)b);
}
template <class T> __device__ __forceinline__ T lcj_sub(T a, T b) {
  return (T)((typename lcj_u<T>::t)a - (typename lcj_u<T>::t)b);
}
template <class T> __device__ __forceinline__ T lcj_mul(T a, T b) {
  return (T)((typename lcj_u<T>::t)a * (typename lcj_u<T>::t)b);
}
template <class T> __device__ __forceinline__ T lcj_neg(T a) {
  return (T)((typename lcj_u<T>::t)0 - (typename lcj_u<T>::t)a);
}
__device__ __forceinline__ float lcj_neg(float a) { return -a; }
__device__ __forceinline__ double lcj_neg(double a) { return -a; }
// floor division and floored modulo: Lua's; by zero 0, as array math
template <class T, bool S = lcj_signed<T>::v> struct lcj_int;
template <class T> struct lcj_int<T, true> {
  static __device__ __forceinline__ T idiv(T a, T b) {
    if (b == 0) return 0;
    if (b == (T)-1) return lcj_neg(a);
    T q = (T)(a / b);
    if (a % b != 0 && ((a ^ b) < 0)) q = (T)(q - 1);
    return q;
  }
  static __device__ __forceinline__ T mod(T a, T b) {
    if (b == 0 || b == (T)-1) return 0;
    T r = (T)(a % b);
    if (r != 0 && ((r ^ b) < 0)) r = (T)(r + b);
    return r;
  }
};
template <class T> struct lcj_int<T, false> {
  static __device__ __forceinline__ T idiv(T a, T b) { return b == 0 ? 0 : (T)(a / b); }
  static __device__ __forceinline__ T mod(T a, T b) { return b == 0 ? 0 : (T)(a % b); }
};
template <class T> __device__ __forceinline__ T lcj_idiv(T a, T b) { return lcj_int<T>::idiv(a, b); }
template <class T> __device__ __forceinline__ T lcj_mod(T a, T b) { return lcj_int<T>::mod(a, b); }
__device__ __forceinline__ float lcj_idiv(float a, float b) { return floorf(a / b); }
__device__ __forceinline__ double lcj_idiv(double a, double b) { return floor(a / b); }
__device__ __forceinline__ float lcj_mod(float a, float b) {
  float m = fmodf(a, b);
  if ((m > 0) ? b < 0 : (m < 0 && b > 0)) m += b;
  return m;
}
__device__ __forceinline__ double lcj_mod(double a, double b) {
  double m = fmod(a, b);
  if ((m > 0) ? b < 0 : (m < 0 && b > 0)) m += b;
  return m;
}
// shifts are logical, in the type's width; a count past it gives 0, a
// negative count shifts the other way (Lua's rules)
template <class T> __device__ __forceinline__ T lcj_shl(T a, long long n) {
  typedef typename lcj_u<T>::t U;
  const long long w = 8 * (long long)sizeof(T);
  U x = (U)a;
  if (sizeof(T) < 4) x &= (U)((1ull << w) - 1);
  if (n <= -w || n >= w) return 0;
  return (T)(n >= 0 ? x << n : x >> -n);
}
template <class T> __device__ __forceinline__ T lcj_shr(T a, long long n) {
  return lcj_shl(a, n == (-9223372036854775807LL - 1) ? 64 : -n);
}
// a float to a Lua integer (math.floor, math.ceil): saturated, NaN to 0
__device__ __forceinline__ long long lcj_f2i(double x) {
  if (x != x) return 0;
  if (x < -9223372036854775808.0) return -9223372036854775807LL - 1;
  if (x >= 9223372036854775808.0) return 9223372036854775807LL;
  return (long long)x;
}
// math.tointeger of a float: whether it has an integer's value (not NaN,
// not infinite, in int64's range), and the integer, which is Lua's nil
// (the kernel stops, saying so) where it has none
__device__ __forceinline__ bool lcj_isint(double x) {
  return x == floor(x) && x >= -9223372036854775808.0 && x < 9223372036854775808.0;
}
__device__ __noinline__ long long lcj_tointeger(double x, const char *where) {
  if (!lcj_isint(x)) {
    printf("luacuda.jit: math.tointeger(%.17g) is nil (no integer has that value), used as a number at %s\n",
           x, where);
    __trap();
  }
  return (long long)x;
}
template <class T> __device__ __forceinline__ T lcj_min(T a, T b) { return b < a ? b : a; }
template <class T> __device__ __forceinline__ T lcj_max(T a, T b) { return b > a ? b : a; }
template <class T> __device__ __forceinline__ T lcj_abs(T a) { return a < 0 ? lcj_neg(a) : a; }
__device__ __forceinline__ float lcj_abs(float a) { return fabsf(a); }
__device__ __forceinline__ double lcj_abs(double a) { return fabs(a); }
// atomics on every integer and float type a kernel may hold, through
// CUDA's own where the widths agree
#define LCJ_AS(T, p) reinterpret_cast<T *>(p)
__device__ __forceinline__ int32_t lcj_atomic_add(int32_t *p, int32_t v) { return atomicAdd(p, v); }
__device__ __forceinline__ uint32_t lcj_atomic_add(uint32_t *p, uint32_t v) { return atomicAdd(p, v); }
__device__ __forceinline__ int64_t lcj_atomic_add(int64_t *p, int64_t v) {
  return (int64_t)atomicAdd(LCJ_AS(unsigned long long, p), (unsigned long long)v);
}
__device__ __forceinline__ uint64_t lcj_atomic_add(uint64_t *p, uint64_t v) {
  return atomicAdd(LCJ_AS(unsigned long long, p), (unsigned long long)v);
}
__device__ __forceinline__ float lcj_atomic_add(float *p, float v) { return atomicAdd(p, v); }
__device__ __forceinline__ double lcj_atomic_add(double *p, double v) { return atomicAdd(p, v); }
template <class T> __device__ __forceinline__ T lcj_atomic_sub(T *p, T v) { return lcj_atomic_add(p, lcj_neg(v)); }
__device__ __forceinline__ int32_t lcj_atomic_max(int32_t *p, int32_t v) { return atomicMax(p, v); }
__device__ __forceinline__ uint32_t lcj_atomic_max(uint32_t *p, uint32_t v) { return atomicMax(p, v); }
__device__ __forceinline__ int64_t lcj_atomic_max(int64_t *p, int64_t v) {
  return atomicMax(LCJ_AS(long long, p), (long long)v);
}
__device__ __forceinline__ uint64_t lcj_atomic_max(uint64_t *p, uint64_t v) {
  return atomicMax(LCJ_AS(unsigned long long, p), (unsigned long long)v);
}
__device__ __forceinline__ int32_t lcj_atomic_min(int32_t *p, int32_t v) { return atomicMin(p, v); }
__device__ __forceinline__ uint32_t lcj_atomic_min(uint32_t *p, uint32_t v) { return atomicMin(p, v); }
__device__ __forceinline__ int64_t lcj_atomic_min(int64_t *p, int64_t v) {
  return atomicMin(LCJ_AS(long long, p), (long long)v);
}
__device__ __forceinline__ uint64_t lcj_atomic_min(uint64_t *p, uint64_t v) {
  return atomicMin(LCJ_AS(unsigned long long, p), (unsigned long long)v);
}
#define LCJ_ATOMIC_BITS(name, cuda)                                                        \
  __device__ __forceinline__ int32_t name(int32_t *p, int32_t v) { return cuda(p, v); }    \
  __device__ __forceinline__ uint32_t name(uint32_t *p, uint32_t v) { return cuda(p, v); } \
  __device__ __forceinline__ int64_t name(int64_t *p, int64_t v) {                         \
    return (int64_t)cuda(LCJ_AS(unsigned long long, p), (unsigned long long)v);            \
  }                                                                                        \
  __device__ __forceinline__ uint64_t name(uint64_t *p, uint64_t v) {                      \
    return cuda(LCJ_AS(unsigned long long, p), (unsigned long long)v);                     \
  }
LCJ_ATOMIC_BITS(lcj_atomic_and_, atomicAnd)
LCJ_ATOMIC_BITS(lcj_atomic_or_, atomicOr)
LCJ_ATOMIC_BITS(lcj_atomic_xor, atomicXor)
LCJ_ATOMIC_BITS(lcj_atomic_exch, atomicExch)
__device__ __forceinline__ float lcj_atomic_exch(float *p, float v) { return atomicExch(p, v); }
__device__ __forceinline__ double lcj_atomic_exch(double *p, double v) {
  return __longlong_as_double((long long)atomicExch(LCJ_AS(unsigned long long, p),
                                                    (unsigned long long)__double_as_longlong(v)));
}
__device__ __forceinline__ int32_t lcj_atomic_cas(int32_t *p, int32_t c, int32_t v) { return atomicCAS(p, c, v); }
__device__ __forceinline__ uint32_t lcj_atomic_cas(uint32_t *p, uint32_t c, uint32_t v) { return atomicCAS(p, c, v); }
__device__ __forceinline__ int64_t lcj_atomic_cas(int64_t *p, int64_t c, int64_t v) {
  return (int64_t)atomicCAS(LCJ_AS(unsigned long long, p), (unsigned long long)c, (unsigned long long)v);
}
__device__ __forceinline__ uint64_t lcj_atomic_cas(uint64_t *p, uint64_t c, uint64_t v) {
  return atomicCAS(LCJ_AS(unsigned long long, p), (unsigned long long)c, (unsigned long long)v);
}
// a failed bounds check (boundscheck = true): says where, then traps
__device__ __noinline__ void lcj_oob(const char *array, long long index, long long size,
                                     const char *where) {
  printf("luacuda.jit: index %lld out of bounds of '%s' (size %lld) at %s\n", index, array, size, where);
  __trap();
}
// an index checked against its axis (boundscheck = true); i is 1-based
__device__ __forceinline__ long long lcj_ix(long long i, long long n, const char *array,
                                            const char *where) {
  if (i < 1 || i > n) lcj_oob(array, i, n, where);
  return i - 1;
}
// K.grid's 0-based position on an axis, b * d + t, in 64 bits (a grid's
// threads can pass 2^31): on a GPU one mad.wide.u32, where NVRTC makes a
// mul.wide.u32, a cvt of t and an add of the C++ expression
__device__ __forceinline__ long long lcj_grid(unsigned b, unsigned d, unsigned t) {
#ifdef __LC_SIM__
  return (long long)b * d + t;
#else
  unsigned long long r;
  asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(r) : "r"(b), "r"(d), "l"((unsigned long long)t));
  return (long long)r;
#endif
}
]==]
