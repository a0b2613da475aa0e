// luacuda's reductions and scans (src/base/reduce.h) on the CUDA backend:
// lc_reduce<OP, IN, DOM, OUT>, compiled by NVRTC at first use for each
// op, input dtype, domain and output dtype from that name expression
// (src/backend/cuda/reduce.c launches it; lc_reduce_args in abi.h).
//
// The arithmetic is src/base/reduce.c's, so both backends give the same
// values where the order of the operations does not matter: an element is
// converted into the domain (the accumulator's type) as reduce.c does it,
// integers wrap, NaN wins min and max, argmin and argmax take the first
// extreme (the first NaN if any), the result is converted into the output
// dtype as reduce.c stores it (float16 and bfloat16 rounded to nearest
// even from the value as a double, as dtype.c does). A block reduces its
// part: each thread a strided run of elements, then a tree in shared
// memory. A scan is one block per line, tile by tile: a tree scan of each
// tile in shared memory, carried into the next.

#ifndef LUACUDA_ABI_H
#include "abi.h"
#endif

namespace lcr {

typedef unsigned long long u64;
typedef long long i64;

// reduce.h's lc_reduce_op, lc_reduce_domain and lc_reduce_combine
// (src/backend/cuda/reduce.c checks the numbers); the dtypes are abi.h's
// codes, each described by lc_elem
enum { SUM, PROD, MIN, MAX, MEAN, ARGMIN, ARGMAX, ANY, ALL, CUMSUM, CUMPROD };
enum { D_BOOL, D_I64, D_U64, D_F32, D_F64 };
enum { C_ADD, C_MUL, C_MIN, C_MAX };

__device__ __forceinline__ float bits_float(unsigned b) {
  union { unsigned u; float f; } x;
  x.u = b;
  return x.f;
}
__device__ __forceinline__ double bits_double(u64 b) {
  union { u64 u; double f; } x;
  x.u = b;
  return x.f;
}
__device__ __forceinline__ u64 double_bits(double d) {
  union { u64 u; double f; } x;
  x.f = d;
  return x.u;
}

// a float of M significand bits (the implicit one included) and E
// exponent bits, from its bits: exact as a double. float16's and
// bfloat16's the short way.
template <int M, int E> __device__ double widen(u64 h) {
  if constexpr (M == 8 && E == 8) return bits_float((unsigned)h << 16);
  const int frac = M - 1, bias = (1 << (E - 1)) - 1;
  u64 sign = (h >> (frac + E) & 1) << 63, m = h & ((1ull << frac) - 1);
  int e = (int)(h >> frac & ((1u << E) - 1));
  if (e == (1 << E) - 1) return bits_double(sign | 0x7ff0000000000000ull | m << (52 - frac));
  if (e != 0) return bits_double(sign | (u64)(e - bias + 1023) << 52 | m << (52 - frac));
  double d = (double)m * bits_double((u64)(1023 + 1 - bias - frac) << 52);   // subnormal: exact
  return sign ? -d : d;
}

// reduce.c's float_to_bits: truncated toward zero where it fits in 64
// bits, else 0x8000000000000000
__device__ u64 float_bits(double v) {
  if (v > -9223372036854775808.0 - 1.0 && v < 9223372036854775808.0) return (u64)(i64)v;
  if (v >= 9223372036854775808.0 && v < 18446744073709551616.0) return (u64)v;
  return 1ull << 63;
}

// dtype.c's narrow_from_double: a double as the bits of a binary float of
// mant significand bits (the implicit one included) and ebits exponent
// bits, rounded to nearest even
__device__ u64 round_shift(u64 m, int shift) {
  if (shift >= 64) return 0;
  u64 q = m >> shift, rem = m & ((1ull << shift) - 1), halfway = 1ull << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1))) q++;
  return q;
}

__device__ u64 narrow(double d, int mant, int ebits) {
  u64 b = double_bits(d);
  int frac = mant - 1, emax = (1 << ebits) - 1, bias = (1 << (ebits - 1)) - 1;
  u64 sign = (b >> 63) << (frac + ebits), inf = (u64)emax << frac;
  int exp = (int)((b >> 52) & 0x7ff);
  u64 man = b & ((1ull << 52) - 1);
  if (exp == 0x7ff) return sign | inf | (man ? 1ull << (frac - 1) : 0);
  int e = exp - 1023 + bias;
  if (e >= emax) return sign | inf;
  if (e >= 1) return sign | (((u64)e << frac) + round_shift(man, 52 - frac));
  if (exp == 0) return sign;
  return sign | round_shift(man | (1ull << 52), 53 - frac - e);
}

// ---- types -------------------------------------------------------------------

template <int D> struct dom;
template <> struct dom<D_BOOL> { typedef unsigned char T; };
template <> struct dom<D_I64> { typedef i64 T; };
template <> struct dom<D_U64> { typedef u64 T; };
template <> struct dom<D_F32> { typedef float T; };
template <> struct dom<D_F64> { typedef double T; };

// An input dtype: its bits' type R, and its value as C: double for the
// floats (exact), i64 for signed integers, u64 for unsigned ones and bool.
template <bool B, typename A, typename Z> struct pick { typedef A T; };
template <typename A, typename Z> struct pick<false, A, Z> { typedef Z T; };
template <int IN> struct in_type {
  typedef lc_elem<IN> E;
  typedef typename E::bits R;
  typedef typename pick<E::kind_ == 'f', double, typename pick<E::kind_ == 'i', i64, u64>::T>::T C;
  static __device__ __forceinline__ C value(R x) {
    if constexpr (E::kind_ == 'b') return x != 0;
    else if constexpr (E::narrow_) return widen<E::mant_, E::exp_>((u64)x);
    else return (C)x;
  }
};

// a value into a domain (reduce.c's TO_* conversions)
__device__ __forceinline__ void conv(unsigned char &t, double c) { t = c != 0; }
__device__ __forceinline__ void conv(unsigned char &t, i64 c) { t = c != 0; }
__device__ __forceinline__ void conv(unsigned char &t, u64 c) { t = c != 0; }
__device__ __forceinline__ void conv(float &t, double c) { t = (float)c; }
__device__ __forceinline__ void conv(float &t, i64 c) { t = (float)c; }
__device__ __forceinline__ void conv(float &t, u64 c) { t = (float)c; }
__device__ __forceinline__ void conv(double &t, double c) { t = c; }
__device__ __forceinline__ void conv(double &t, i64 c) { t = (double)c; }
__device__ __forceinline__ void conv(double &t, u64 c) { t = (double)c; }
__device__ __forceinline__ void conv(u64 &t, double c) { t = float_bits(c); }
__device__ __forceinline__ void conv(u64 &t, i64 c) { t = (u64)c; }
__device__ __forceinline__ void conv(u64 &t, u64 c) { t = c; }
__device__ __forceinline__ void conv(i64 &t, double c) { t = (i64)float_bits(c); }
__device__ __forceinline__ void conv(i64 &t, i64 c) { t = c; }
__device__ __forceinline__ void conv(i64 &t, u64 c) { t = (i64)c; }

// R at p: a typed load, or byte by byte where it may be misaligned
template <typename R>
__device__ __forceinline__ R load_raw(const char *p, bool bytes) {
  if (!bytes) return *reinterpret_cast<const R *>(p);
  union { R r; unsigned char b[sizeof(R)]; } x;
  for (int i = 0; i < (int)sizeof(R); i++) x.b[i] = (unsigned char)p[i];
  return x.r;
}

template <typename R>
__device__ __forceinline__ void store_raw(char *p, R r, bool bytes) {
  if (!bytes) {
    *reinterpret_cast<R *>(p) = r;
    return;
  }
  union { R r; unsigned char b[sizeof(R)]; } x;
  x.r = r;
  for (int i = 0; i < (int)sizeof(R); i++) p[i] = (char)x.b[i];
}

template <int IN, typename T>
__device__ __forceinline__ T load(const char *p, bool bytes) {
  typedef in_type<IN> I;
  T t;
  conv(t, I::value(load_raw<typename I::R>(p, bytes)));
  return t;
}

// ---- into the output dtype (reduce.c's store_*) ----------------------------------

template <int OUT> __device__ __forceinline__ void put_bits(char *p, u64 v, bool bytes) {
  typedef typename lc_elem<OUT>::bits R;
  store_raw<R>(p, (R)v, bytes);
}

template <int OUT> __device__ void put_double(char *p, double v, bool bytes) {
  typedef lc_elem<OUT> E;
  typedef typename E::bits R;
  if constexpr (E::kind_ == 'b') store_raw<R>(p, v != 0, bytes);
  else if constexpr (E::narrow_) store_raw<R>(p, (R)narrow(v, E::mant_, E::exp_), bytes);
  else if constexpr (E::kind_ == 'f') store_raw<R>(p, (R)v, bytes);
  else put_bits<OUT>(p, float_bits(v), bytes);
}

template <int OUT> __device__ __forceinline__ void put(char *p, double v, bool bytes) {
  put_double<OUT>(p, v, bytes);
}
template <int OUT> __device__ __forceinline__ void put(char *p, float v, bool bytes) {
  put_double<OUT>(p, (double)v, bytes);
}
template <int OUT> __device__ __forceinline__ void put(char *p, u64 v, bool bytes) {
  if constexpr (lc_elem<OUT>::kind_ == 'b') put_bits<OUT>(p, v != 0, bytes);
  else if constexpr (lc_elem<OUT>::kind_ == 'f') put_double<OUT>(p, (double)v, bytes);
  else put_bits<OUT>(p, v, bytes);
}
template <int OUT> __device__ __forceinline__ void put(char *p, i64 v, bool bytes) {
  if constexpr (lc_elem<OUT>::kind_ == 'b') put_bits<OUT>(p, v != 0, bytes);
  else if constexpr (lc_elem<OUT>::kind_ == 'f') put_double<OUT>(p, (double)v, bytes);
  else put_bits<OUT>(p, (u64)v, bytes);
}
template <int OUT> __device__ __forceinline__ void put(char *p, unsigned char v, bool bytes) {
  put<OUT>(p, (u64)(v != 0), bytes);
}

// ---- the combinations --------------------------------------------------------------

template <int OP> struct op_comb {
  static const int c = OP == PROD || OP == CUMPROD || OP == ALL ? C_MUL
                       : OP == MIN || OP == ARGMIN ? C_MIN
                       : OP == MAX || OP == ARGMAX ? C_MAX : C_ADD;
};

template <typename T> __device__ __forceinline__ bool is_nan(T v) { return false; }
template <> __device__ __forceinline__ bool is_nan<float>(float v) { return v != v; }
template <> __device__ __forceinline__ bool is_nan<double>(double v) { return v != v; }

// what an output starts from: min's is the greatest value, which any
// element replaces (no reduction of min or max is empty: the binding
// refuses those)
template <typename T> struct limits;
template <> struct limits<unsigned char> {
  static __device__ unsigned char hi() { return 1; }
  static __device__ unsigned char lo() { return 0; }
};
template <> struct limits<i64> {
  static __device__ i64 hi() { return 9223372036854775807ll; }
  static __device__ i64 lo() { return -9223372036854775807ll - 1; }
};
template <> struct limits<u64> {
  static __device__ u64 hi() { return ~0ull; }
  static __device__ u64 lo() { return 0; }
};
template <> struct limits<float> {
  static __device__ float hi() { return bits_float(0x7f800000u); }
  static __device__ float lo() { return bits_float(0xff800000u); }
};
template <> struct limits<double> {
  static __device__ double hi() { return bits_double(0x7ff0000000000000ull); }
  static __device__ double lo() { return bits_double(0xfff0000000000000ull); }
};

template <int C, typename T> __device__ __forceinline__ T identity() {
  if (C == C_ADD) return (T)0;
  if (C == C_MUL) return (T)1;
  if (C == C_MIN) return limits<T>::hi();
  return limits<T>::lo();
}

template <int C, typename T> __device__ __forceinline__ T combine(T a, T b) {
  if (C == C_ADD) return a + b;
  if (C == C_MUL) return a * b;
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  if (C == C_MIN) return b < a ? b : a;
  return b > a ? b : a;
}
// bool: sum is or, product is and
typedef unsigned char u8;
template <> __device__ __forceinline__ u8 combine<C_ADD, u8>(u8 a, u8 b) { return a | b; }
template <> __device__ __forceinline__ u8 combine<C_MAX, u8>(u8 a, u8 b) { return a | b; }
template <> __device__ __forceinline__ u8 combine<C_MUL, u8>(u8 a, u8 b) { return a & b; }
template <> __device__ __forceinline__ u8 combine<C_MIN, u8>(u8 a, u8 b) { return a & b; }
// signed integers wrap, as unsigned arithmetic
template <> __device__ __forceinline__ i64 combine<C_ADD, i64>(i64 a, i64 b) {
  return (i64)((u64)a + (u64)b);
}
template <> __device__ __forceinline__ i64 combine<C_MUL, i64>(i64 a, i64 b) {
  return (i64)((u64)a * (u64)b);
}

// argmin's and argmax's state: the value and its flat index (-1: none yet).
// Does (v, i) win over (w, j)? A NaN wins (the first of two), then the
// extreme, then the first of two equal values.
template <int C, typename T> __device__ __forceinline__ bool wins(T v, i64 i, T w, i64 j) {
  if (i < 0) return false;
  if (j < 0) return true;
  bool vn = is_nan(v), wn = is_nan(w);
  if (vn || wn) return vn && (!wn || i < j);
  if (C == C_MIN ? v < w : v > w) return true;
  return v == w && i < j;
}

// ---- offsets -------------------------------------------------------------------------

// element k of the kept axes: its byte offsets in the input and the output
__device__ __forceinline__ void kept_offsets(const lc_reduce_args &a, i64 k, i64 &in, i64 &out) {
  in = 0;
  out = 0;
  for (int d = a.nkept - 1; d >= 0; d--) {
    i64 n = a.kshape[d], j = k % n;
    k /= n;
    in += j * a.kin[d];
    out += j * a.kout[d];
  }
}

// element r of the reduced axes, flattened in C order: its input offset
__device__ __forceinline__ i64 red_in(const lc_reduce_args &a, i64 r) {
  if (a.nred == 1) return r * a.rin[0];
  i64 off = 0;
  for (int d = a.nred - 1; d >= 0; d--) {
    i64 n = a.rshape[d], j = r % n;
    r /= n;
    off += j * a.rin[d];
  }
  return off;
}

__device__ __forceinline__ i64 red_out(const lc_reduce_args &a, i64 r) {
  if (a.nred == 1) return r * a.rout[0];
  i64 off = 0;
  for (int d = a.nred - 1; d >= 0; d--) {
    i64 n = a.rshape[d], j = r % n;
    r /= n;
    off += j * a.rout[d];
  }
  return off;
}

// ---- the output's value ----------------------------------------------------------------

// an integer mean's sum, truncated to its dtype (acc_size bytes) and widened
__device__ double int_value(u64 u, const lc_reduce_args &a) {
  int bits = a.acc_size * 8;
  if (bits < 64) {
    u &= (1ull << bits) - 1;
    if (a.acc_signed && (u >> (bits - 1) & 1)) u |= ~((1ull << bits) - 1);
  }
  return a.acc_signed ? (double)(i64)u : (double)u;
}

// the value of an output: the reduction's, a mean's quotient, an index
template <int OP, int DOM, int OUT, typename T>
__device__ void finish_value(char *p, T v, i64 i, const lc_reduce_args &a) {
  bool bytes = (a.flags & LC_REDUCE_BYTES_OUT) != 0;
  if constexpr (OP == ARGMIN || OP == ARGMAX) put<OUT>(p, (i64)(i + 1), bytes);
  else if constexpr (OP == MEAN && DOM == D_F32) put<OUT>(p, (float)(v / (float)a.count), bytes);
  else if constexpr (OP == MEAN && DOM == D_F64) put<OUT>(p, (double)(v / (double)a.count), bytes);
  else if constexpr (OP == MEAN && DOM == D_U64)
    put<OUT>(p, int_value((u64)v, a) / (double)a.count, bytes);
  else if constexpr (OP == MEAN) put<OUT>(p, (v ? 1.0 : 0.0) / (double)a.count, bytes);
  else put<OUT>(p, v, bytes);
}

}  // namespace lcr

template <int OP, int IN, int DOM, int OUT>
__global__ void lc_reduce(const char *in, char *out, char *work, lc_reduce_args a) {
  using namespace lcr;
  typedef typename dom<DOM>::T T;
  const int C = op_comb<OP>::c;
  const bool arg = OP == ARGMIN || OP == ARGMAX;
  const bool bytes_in = (a.flags & LC_REDUCE_BYTES_IN) != 0;
  __shared__ T sv[LC_REDUCE_THREADS];
  __shared__ i64 si[LC_REDUCE_THREADS];
  const int t = threadIdx.x, nt = blockDim.x;

  if constexpr (OP == CUMSUM || OP == CUMPROD) {
    // one block per line, tile by tile
    for (i64 line = blockIdx.x; line < a.nout; line += gridDim.x) {
      i64 ib, ob;
      kept_offsets(a, line, ib, ob);
      T carry = identity<C, T>();
      for (i64 t0 = 0; t0 < a.count; t0 += nt) {
        i64 r = t0 + t;
        T x = r < a.count ? load<IN, T>(in + ib + red_in(a, r), bytes_in) : identity<C, T>();
        sv[t] = x;
        __syncthreads();
        for (int s = 1; s < nt; s <<= 1) {
          T y = t >= s ? sv[t - s] : identity<C, T>();
          __syncthreads();
          if (t >= s) sv[t] = combine<C, T>(y, sv[t]);
          __syncthreads();
        }
        if (r < a.count)
          put<OUT>(out + ob + red_out(a, r), combine<C, T>(carry, sv[t]),
                   (a.flags & LC_REDUCE_BYTES_OUT) != 0);
        carry = combine<C, T>(carry, sv[nt - 1]);
        __syncthreads();
      }
    }
    return;
  }

  const bool finish = (a.flags & LC_REDUCE_FINISH) != 0;
  const i64 blocks = finish ? a.nout : a.nout * a.parts;
  for (i64 b = blockIdx.x; b < blocks; b += gridDim.x) {
    i64 o = finish ? b : b / a.parts, part = finish ? 0 : b % a.parts;
    T v = identity<C, T>();
    i64 vi = -1;
    if (finish) {
      // the partials of output o
      for (i64 k = t; k < a.parts; k += nt) {
        const char *w = work + (o * a.parts + k) * LC_REDUCE_PART;
        T x = *reinterpret_cast<const T *>(w);
        i64 xi = *reinterpret_cast<const i64 *>(w + 8);
        if (arg) {
          if (wins<C, T>(x, xi, v, vi)) {
            v = x;
            vi = xi;
          }
        } else {
          v = combine<C, T>(v, x);
        }
      }
    } else {
      i64 ib, ob;
      kept_offsets(a, o, ib, ob);
      i64 lo = part * a.chunk, hi = lo + a.chunk < a.count ? lo + a.chunk : a.count;
      for (i64 r = lo + t; r < hi; r += nt) {
        T x = load<IN, T>(in + ib + red_in(a, r), bytes_in);
        if (arg) {
          if (wins<C, T>(x, r, v, vi)) {
            v = x;
            vi = r;
          }
        } else {
          v = combine<C, T>(v, x);
        }
      }
    }
    sv[t] = v;
    si[t] = vi;
    __syncthreads();
    for (int s = nt / 2; s > 0; s >>= 1) {
      if (t < s) {
        if (arg) {
          if (wins<C, T>(sv[t + s], si[t + s], sv[t], si[t])) {
            sv[t] = sv[t + s];
            si[t] = si[t + s];
          }
        } else {
          sv[t] = combine<C, T>(sv[t], sv[t + s]);
        }
      }
      __syncthreads();
    }
    if (t == 0) {
      if (!finish && a.parts > 1) {
        char *w = work + b * LC_REDUCE_PART;
        *reinterpret_cast<T *>(w) = sv[0];
        *reinterpret_cast<i64 *>(w + 8) = si[0];
      } else {
        i64 ib, ob;
        kept_offsets(a, o, ib, ob);
        finish_value<OP, DOM, OUT, T>(out + ob, sv[0], si[0], a);
      }
    }
    __syncthreads();
  }
}
