/*
** sort: rows sorted by an LSD radix sort on kernels/sort_keys.h's keys
** (sort.h says what and why).
*/
#define _DEFAULT_SOURCE          /* MADV_HUGEPAGE */
#include "sort.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "abi.h"
#include "sort_keys.h"

/* rows up to this length are sorted by insertion (a radix pass costs 256
** counters however short the row) */
#define SHORT_ROW 24

/* Digits: 8 bits, or 11 for long rows of 32- and 64-bit keys (3 passes
** instead of 4 for float32, 6 instead of 8 for float64: a pass is a read
** and a scattered write of the row, the extra counters cost nothing there). */
#define MAX_COUNTERS (6 * 2048)    /* passes times buckets, at most (64-bit keys, 11 bits) */
#define WIDE_ROW ((int64_t)1 << 16)

void lc_sort_key_kind(const lc_dtype *dt, int *kind, int *bits, int *mant) {
  *kind = dt->kind == 'f' ? LC_SK_FLOAT : dt->kind == 'i' ? LC_SK_SIGNED : LC_SK_UNSIGNED;
  *bits = (int)dt->size * 8;
  *mant = dt->kind == 'f' ? dt->mant_bits - 1 : 0;
}

size_t lc_sort_scratch_bytes(const lc_sort_call *c) {
  int64_t n = c->in_lay.shape[c->axis];
  size_t per = 2 * (size_t)lc_dtypes[c->type].size + (c->argsort ? 2 * sizeof(int64_t) : 0);
  return MAX_COUNTERS * sizeof(size_t) + (n > 0 ? (size_t)n * per : 0);
}

/* Big scratch is mapped with huge pages asked for, as NumPy asks for its
** big arrays: a 4 KiB page fault per page of a fresh 128 MiB costs more
** than the sort. */
#define HUGE_SCRATCH ((size_t)4 << 20)

void *lc_sort_scratch_alloc(size_t bytes) {
  if (bytes < HUGE_SCRATCH) return malloc(bytes);
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);     /* a hint: refused, the pages are small */
#endif
  return p;
}

void lc_sort_scratch_free(void *p, size_t bytes) {
  if (p == NULL) return;
  if (bytes < HUGE_SCRATCH) free(p);
  else munmap(p, bytes);
}


static int digit_bits(int64_t n, size_t size) { return n >= WIDE_ROW && size >= 4 ? 11 : 8; }

/* One row, for one width T and one kind of key (KEY of the element bits
** b; VALUE of a key: the element bits back). The scratch holds the
** counters, then the payloads (argsort), then the keys. A pass whose digit
** is the same for every key is skipped; the first pass reads the input
** (keys made on the way), the last writes the output (elements made back
** on the way), so a float32 row of 2^24 is read four times and written
** three: the counting, and three passes of 11 bits. In place (in and out
** the same view) the last pass never reads what it writes: a single pass
** goes through the scratch. */
#define ROW(T, NAME, KEY, VALUE)                                                         \
  static void NAME(const lc_sort_call *c, bool inplace, const char *in, int64_t sin,     \
                   char *out, int64_t sout, int64_t n, void *scratch, int mant) {        \
    const int w = (int)sizeof(T) * 8;                                                    \
    (void)w;                                                                             \
    (void)mant;                                                                          \
    const bool arg = c->argsort;                                                         \
    size_t *count = scratch;                                                             \
    char *room = (char *)(count + MAX_COUNTERS);                                         \
    int64_t *ix = NULL, *tix = NULL;                                                     \
    if (arg) {                                                                           \
      ix = (int64_t *)room;                                                              \
      tix = ix + n;                                                                      \
      room = (char *)(tix + n);                                                          \
    }                                                                                    \
    T *k = (T *)room, *tk = k + n, b, key;                                               \
    if (n <= SHORT_ROW) {         /* insertion sort */                                   \
      for (int64_t i = 0; i < n; i++) {                                                  \
        memcpy(&b, in + i * sin, sizeof b);                                              \
        key = (T)(KEY);                                                                  \
        int64_t j = i;                                                                   \
        for (; j > 0 && k[j - 1] > key; j--) {                                           \
          k[j] = k[j - 1];                                                               \
          if (arg) ix[j] = ix[j - 1];                                                    \
        }                                                                                \
        k[j] = key;                                                                      \
        if (arg) ix[j] = i + 1;                                                          \
      }                                                                                  \
      for (int64_t i = 0; i < n; i++) {                                                  \
        if (arg) {                                                                       \
          memcpy(out + i * sout, &ix[i], sizeof ix[i]);                                  \
        } else {                                                                         \
          key = k[i];                                                                    \
          b = (T)(VALUE);                                                                \
          memcpy(out + i * sout, &b, sizeof b);                                          \
        }                                                                                \
      }                                                                                  \
      return;                                                                            \
    }                                                                                    \
    const int bits = digit_bits(n, sizeof(T));                                           \
    const int passes = (w + bits - 1) / bits, buckets = 1 << bits;                       \
    const T mask = (T)(buckets - 1);                                                     \
    memset(count, 0, (size_t)(passes * buckets) * sizeof *count);                        \
    for (int64_t i = 0; i < n; i++) {                                                    \
      memcpy(&b, in + i * sin, sizeof b);                                                \
      key = (T)(KEY);                                                                    \
      for (int p = 0; p < passes; p++) count[p * buckets + ((key >> (p * bits)) & mask)]++; \
    }                                                                                    \
    int active[8], nactive = 0;                                                          \
    memcpy(&b, in, sizeof b);                                                            \
    T key0 = (T)(KEY);                                                                   \
    for (int p = 0; p < passes; p++) {                                                   \
      size_t *at = count + p * buckets;                                                  \
      if (at[(key0 >> (p * bits)) & mask] == (size_t)n) continue;                        \
      active[nactive++] = p;                                                             \
      size_t sum = 0;                                                                    \
      for (int d = 0; d < buckets; d++) {                                                \
        size_t t = at[d];                                                                \
        at[d] = sum;                                                                     \
        sum += t;                                                                        \
      }                                                                                  \
    }                                                                                    \
    if (nactive == 0) {           /* every key equal: the row as it is */                \
      for (int64_t i = 0; i < n; i++) {                                                  \
        if (arg) memcpy(out + i * sout, &(int64_t){i + 1}, sizeof(int64_t));             \
        else memmove(out + i * sout, in + i * sin, sizeof b);                            \
      }                                                                                  \
      return;                                                                            \
    }                                                                                    \
    bool through = inplace && nactive == 1;   /* a single pass in place */               \
    for (int j = 0; j < nactive; j++) {                                                  \
      size_t *at = count + active[j] * buckets;                                          \
      const int shift = active[j] * bits;                                                \
      bool first = j == 0, last = j == nactive - 1 && !through;                          \
      if (first && last) {                                                               \
        for (int64_t i = 0; i < n; i++) {                                                \
          memcpy(&b, in + i * sin, sizeof b);                                            \
          key = (T)(KEY);                                                                \
          size_t to = at[(key >> shift) & mask]++;                                       \
          if (arg) memcpy(out + (int64_t)to * sout, &(int64_t){i + 1}, sizeof(int64_t)); \
          else memcpy(out + (int64_t)to * sout, &b, sizeof b);                           \
        }                                                                                \
      } else if (first) {                                                                \
        for (int64_t i = 0; i < n; i++) {                                                \
          memcpy(&b, in + i * sin, sizeof b);                                            \
          key = (T)(KEY);                                                                \
          size_t to = at[(key >> shift) & mask]++;                                       \
          tk[to] = key;                                                                  \
          if (arg) tix[to] = i + 1;                                                      \
        }                                                                                \
      } else if (last) {                                                                 \
        for (int64_t i = 0; i < n; i++) {                                                \
          key = k[i];                                                                    \
          size_t to = at[(key >> shift) & mask]++;                                       \
          if (arg) {                                                                     \
            memcpy(out + (int64_t)to * sout, &ix[i], sizeof ix[i]);                      \
          } else {                                                                       \
            b = (T)(VALUE);                                                              \
            memcpy(out + (int64_t)to * sout, &b, sizeof b);                              \
          }                                                                              \
        }                                                                                \
      } else {                                                                           \
        for (int64_t i = 0; i < n; i++) {                                                \
          size_t to = at[(k[i] >> shift) & mask]++;                                      \
          tk[to] = k[i];                                                                 \
          if (arg) tix[to] = ix[i];                                                      \
        }                                                                                \
      }                                                                                  \
      T *tt = k; k = tk; tk = tt;                                                        \
      int64_t *ti = ix; ix = tix; tix = ti;                                              \
    }                                                                                    \
    if (through) {                /* the sorted keys, from the scratch */                \
      for (int64_t i = 0; i < n; i++) {                                                  \
        key = k[i];                                                                      \
        b = (T)(VALUE);                                                                  \
        memcpy(out + i * sout, &b, sizeof b);                                            \
      }                                                                                  \
    }                                                                                    \
  }

/* the kinds of keys: U unsigned and bool, S signed, F float (sort), E
** float with equal keys (argsort: the values are never made back) */
#define KEY_U b
#define KEY_S lc_sk_key(b, LC_SK_SIGNED, w, 0)
#define KEY_F lc_sk_key(b, LC_SK_FLOAT, w, mant)
#define KEY_E lc_sk_canonical(lc_sk_key(b, LC_SK_FLOAT, w, mant), LC_SK_FLOAT, w, mant)
#define VALUE_U key
#define VALUE_S lc_sk_value(key, LC_SK_SIGNED, w, 0)
#define VALUE_F lc_sk_value(key, LC_SK_FLOAT, w, mant)
#define ROWS(T, SUF)                                  \
  ROW(T, row_u##SUF, KEY_U, VALUE_U)                  \
  ROW(T, row_s##SUF, KEY_S, VALUE_S)                  \
  ROW(T, row_f##SUF, KEY_F, VALUE_F)                  \
  ROW(T, row_e##SUF, KEY_E, VALUE_U)
ROWS(uint8_t, 8)
ROWS(uint16_t, 16)
ROWS(uint32_t, 32)
ROWS(uint64_t, 64)

typedef void row_fn(const lc_sort_call *c, bool inplace, const char *in, int64_t sin,
                    char *out, int64_t sout, int64_t n, void *scratch, int mant);

static row_fn *row_for(int kind, int bits, bool argsort) {
  static row_fn *const rows[4][4] = {
    {row_u8, row_s8, row_f8, row_e8}, {row_u16, row_s16, row_f16, row_e16},
    {row_u32, row_s32, row_f32, row_e32}, {row_u64, row_s64, row_f64, row_e64},
  };
  int wi = bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : 3;
  int ki = kind == LC_SK_UNSIGNED ? 0 : kind == LC_SK_SIGNED ? 1 : argsort ? 3 : 2;
  return rows[wi][ki];
}

void lc_sort_host(const lc_sort_call *c, void *scratch) {
  const lc_layout *il = &c->in_lay, *ol = &c->out_lay;
  const lc_dtype *dt = &lc_dtypes[c->type];
  int kind, bits, mant;
  lc_sort_key_kind(dt, &kind, &bits, &mant);
  row_fn *row = row_for(kind, bits, c->argsort);
  int64_t n = il->shape[c->axis];
  if (il->size == 0) return;
  const char *in = c->in + il->offset;
  char *out = c->out + ol->offset;
  bool inplace = !c->argsort && in == out &&
                 memcmp(il->strides, ol->strides, sizeof il->strides[0] * (size_t)il->ndim) == 0;
  /* the other axes, walked as an odometer */
  int64_t pos[LC_MAXDIM] = {0};
  int64_t sin = il->strides[c->axis], sout = ol->strides[c->axis];
  for (;;) {
    row(c, inplace, in, sin, out, sout, n, scratch, mant);
    int d = il->ndim - 1;
    for (; d >= 0; d--) {
      if (d == c->axis) continue;
      in += il->strides[d];
      out += ol->strides[d];
      if (++pos[d] < il->shape[d]) break;
      in -= il->strides[d] * il->shape[d];
      out -= ol->strides[d] * ol->shape[d];
      pos[d] = 0;
    }
    if (d < 0) return;
  }
}

uint64_t lc_sort_equal_key(const lc_dtype *dt, const void *p) {
  int kind, bits, mant;
  lc_sort_key_kind(dt, &kind, &bits, &mant);
  unsigned long long b = 0;
  switch (bits) {
  case 8: { uint8_t v; memcpy(&v, p, 1); b = v; break; }
  case 16: { uint16_t v; memcpy(&v, p, 2); b = v; break; }
  case 32: { uint32_t v; memcpy(&v, p, 4); b = v; break; }
  default: { uint64_t v; memcpy(&v, p, 8); b = v; break; }
  }
  return lc_sk_canonical(lc_sk_key(b, kind, bits, mant), kind, bits, mant);
}

int64_t lc_sort_search(const lc_dtype *dt, const char *a, int64_t n, int64_t stride,
                       uint64_t v, bool right) {
  int64_t lo = 0, hi = n;      /* the answer is in [lo, hi] */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    uint64_t k = lc_sort_equal_key(dt, a + mid * stride);
    if (right ? k <= v : k < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
