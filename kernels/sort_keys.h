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

/* The CUDA backend's radix sort (kernels/sort.cu, launched by
** src/backend/cuda/sort.c): every kernel takes (const char *in, char *out,
** u64 *keys, u64 *pos, u64 *keys2, u64 *pos2, unsigned *counts,
** lc_sort_args a). The view's rows (n elements along the axis, rows of
** them over the other axes: shape, strides, C order) are sorted as one
** array of total = n * rows (key, position) pairs: passes over the key's
** bytes, then over the row number's (row_pass), LSD and stable, so the
** pairs end grouped by row and sorted within each. Each pass: per-block
** counts of each digit over tiles of LC_SORT_TILE pairs (counts[digit *
** blocks + block]), one block's exclusive scan of them, a stable scatter.
** (abi.h comes first: LC_MAXDIM, LC_ABI_CHECK.) */
#define LC_SORT_THREADS 256
#define LC_SORT_TILE 2048
#define LC_SORT_SCAN_THREADS 1024
typedef struct lc_sort_args {
  long long n, rows, total;
  long long blocks;              /* tiles */
  long long in_axis, out_axis;   /* byte strides along the axis */
  int ndim;                      /* the other axes */
  int size, kind, bits, mant;    /* the element: bytes, sort_keys.h's key */
  int argsort;                   /* write 1-based positions (int64), else elements */
  int bytewise;                  /* an element may be misaligned: bytes one by one */
  int shift, row_pass;           /* this pass's digit: bits shift.. of the key or the row */
  int pad_;
  long long shape[LC_MAXDIM];
  long long in_strides[LC_MAXDIM], out_strides[LC_MAXDIM];
} lc_sort_args;
LC_ABI_CHECK(sizeof(lc_sort_args) == 48 + 10 * 4 + 3 * 8 * LC_MAXDIM, "lc_sort_args's size");

#endif
