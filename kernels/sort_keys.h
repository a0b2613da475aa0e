/*
** sort_keys.h: the order luacuda's sorts follow, as unsigned integer keys
** whose plain unsigned order is the elements' order. One definition read
** by the host (src/base/sort.c, C11) and by the CUDA backend's radix sort
** (kernels/sort.cu, NVRTC), so both sort alike. Only built-in types here.
**
** An element of w bits (w = 8, 16, 32 or 64) becomes a w-bit key:
**   unsigned, bool  itself
**   signed          its bits with the sign bit flipped
**   float           (m mantissa bits, q = 2^m - 1 NaNs of each sign) the
**                   usual order-preserving map (negatives: all bits
**                   flipped; others: the sign bit set), then q taken away
**                   (mod 2^w): the negative NaNs, at the bottom, wrap to
**                   the top. So -inf < ... < -0 < +0 < ... < +inf < NaNs,
**                   NaN last as NumPy sorts, and the map is one to one
**                   (lc_sk_value gives every bit back: -0.0 and NaN
**                   payloads survive a sort).
** The "equal" keys (lc_sk_canonical) are the same but with -0 made +0
** and every NaN the largest key: elements NumPy's comparisons call equal
** get equal keys, which is what a stable argsort, searchsorted and unique
** need.
*/
#ifndef LUACUDA_SORT_KEYS_H
#define LUACUDA_SORT_KEYS_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define LC_SK_FN static __device__ __forceinline__
#else
#define LC_SK_FN static inline
#endif

/* kinds of element */
enum { LC_SK_UNSIGNED = 0, LC_SK_SIGNED = 1, LC_SK_FLOAT = 2 };

/* bits: the element's w bits, in the low bits; mant: mantissa bits
** (floats only) */
LC_SK_FN unsigned long long lc_sk_mask(int w) {
  return w == 64 ? ~0ull : (1ull << w) - 1;
}

LC_SK_FN unsigned long long lc_sk_key(unsigned long long bits, int kind, int w, int mant) {
  unsigned long long sign = 1ull << (w - 1), mask = lc_sk_mask(w);
  if (kind == LC_SK_UNSIGNED) return bits;
  if (kind == LC_SK_SIGNED) return bits ^ sign;
  unsigned long long k = (bits & sign) ? ~bits & mask : bits | sign;
  return (k - ((1ull << mant) - 1)) & mask;
}

LC_SK_FN unsigned long long lc_sk_value(unsigned long long key, int kind, int w, int mant) {
  unsigned long long sign = 1ull << (w - 1), mask = lc_sk_mask(w);
  if (kind == LC_SK_UNSIGNED) return key;
  if (kind == LC_SK_SIGNED) return key ^ sign;
  unsigned long long k = (key + ((1ull << mant) - 1)) & mask;
  return (k & sign) ? k & ~sign : ~k & mask;
}

LC_SK_FN unsigned long long lc_sk_canonical(unsigned long long key, int kind, int w, int mant) {
  if (kind != LC_SK_FLOAT) return key;
  unsigned long long sign = 1ull << (w - 1), q = (1ull << mant) - 1;
  unsigned long long negzero = (sign - 1 - q) & lc_sk_mask(w);   /* key of -0 */
  unsigned long long inf = ((sign | (sign - 1 - q)) - q) & lc_sk_mask(w);   /* key of +inf */
  if (key > inf) return lc_sk_mask(w);
  return key == negzero ? key + 1 : key;
}

#endif
