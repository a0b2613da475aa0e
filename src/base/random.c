/*
** random: the host's loop of luacuda's random numbers (random.h): each
** block of the generator computed by kernels/philox.h's rules, its elements
** stored in the call's view in C order.
*/
#include "random.h"

#include <string.h>

#include "philox.h"

/* x86-64 with GCC or Clang: an AVX2 path chosen at run time (a unit test
** builds the file with -DLC_RANDOM_AVX2=0 to test the portable path) */
#ifndef LC_RANDOM_AVX2
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LC_RANDOM_AVX2 1
#else
#define LC_RANDOM_AVX2 0
#endif
#endif
#if LC_RANDOM_AVX2
#include <immintrin.h>
#endif

_Static_assert(sizeof(unsigned int) == 4, "philox.h needs 32-bit unsigned int");
_Static_assert(sizeof(unsigned long long) == 8, "philox.h needs 64-bit unsigned long long");

int lc_random_words(int dist, const lc_dtype *dt, uint64_t range) {
  if (dist == LC_RNG_INTEGERS) return range <= 0x100000000ull ? 1 : 2;
  return dt->code == LC_FLOAT32 ? 1 : 2;
}

uint64_t lc_random_blocks(int dist, const lc_dtype *dt, uint64_t range, int64_t n) {
  uint64_t per = (uint64_t)(4 / lc_random_words(dist, dt, range));
  return ((uint64_t)n + per - 1) / per;
}

uint64_t lc_random_split_key(uint64_t key, uint64_t counter, uint32_t i) {
  return lc_rng_split_key(key, counter, i);
}

/* Walks a view's elements in C order: the byte offset of the current one. */
typedef struct walker {
  const lc_layout *l;
  int64_t idx[LC_MAXDIM];
  int64_t off;
  int64_t step;                /* contiguous: the item size; else 0 */
} walker;

static void walk_start(walker *w, const lc_layout *l, int64_t itemsize) {
  memset(w, 0, sizeof *w);
  w->l = l;
  w->step = lc_layout_is_c_contiguous(l, itemsize) ? itemsize : 0;
}

static void walk_next(walker *w) {
  if (w->step) {
    w->off += w->step;
    return;
  }
  const lc_layout *l = w->l;
  for (int d = l->ndim - 1; d >= 0; d--) {
    w->off += l->strides[d];
    if (++w->idx[d] < l->shape[d]) return;
    w->off -= l->strides[d] * l->shape[d];
    w->idx[d] = 0;
  }
}

/* Store the integer bits v as an element of size n. */
static void store_bits(char *p, int64_t n, uint64_t v) {
  switch (n) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    default: memcpy(p, &v, 8); break;
  }
}

/* ---- contiguous floats: blocks computed a batch at a time ----
** Philox's blocks are independent, so a batch of consecutive counters is
** computed lane by lane (the loops below vectorise: a 32 x 32 -> 64-bit
** multiply per lane), then turned into elements stored in order. Same
** bits as lc_philox_main and philox.h's conversions, block for block. */
enum { LANES = 16 };

/* The batch helpers are inlined into fill_portable and fill_avx2,
** so that they are compiled for each one's target. */
#if defined(__GNUC__)
#define BATCH_FN static inline __attribute__((always_inline))
#else
#define BATCH_FN static inline
#endif

BATCH_FN void philox_lanes(uint64_t key, uint64_t first, uint64_t w[4][LANES]) {
  /* 32-bit words held in 64-bit lanes: the multiplies are then one
  ** 32 x 32 -> 64 instruction per lane, with no shuffles between rounds */
  uint64_t c0[LANES], c1[LANES], c2[LANES], c3[LANES];
  for (int l = 0; l < LANES; l++) {
    uint64_t b = first + (uint64_t)l;
    c0[l] = b & 0xffffffffu;
    c1[l] = b >> 32;
    c2[l] = 0;
    c3[l] = 0;
  }
  uint64_t k0 = key & 0xffffffffu, k1 = key >> 32;
  for (int r = 0; r < 10; r++) {
    for (int l = 0; l < LANES; l++) {
      uint64_t p0 = (uint64_t)LC_PHILOX_M0 * (c0[l] & 0xffffffffu);
      uint64_t p1 = (uint64_t)LC_PHILOX_M1 * (c2[l] & 0xffffffffu);
      uint64_t n0 = (p1 >> 32) ^ c1[l] ^ k0;
      uint64_t n2 = (p0 >> 32) ^ c3[l] ^ k1;
      c1[l] = p1 & 0xffffffffu;
      c3[l] = p0 & 0xffffffffu;
      c0[l] = n0;
      c2[l] = n2;
    }
    k0 = (k0 + LC_PHILOX_W0) & 0xffffffffu;
    k1 = (k1 + LC_PHILOX_W1) & 0xffffffffu;
  }
  memcpy(w[0], c0, sizeof c0);
  memcpy(w[1], c1, sizeof c1);
  memcpy(w[2], c2, sizeof c2);
  memcpy(w[3], c3, sizeof c3);
}

#if LC_RANDOM_AVX2
/* The same blocks with AVX2's 32 x 32 -> 64-bit multiply (vpmuludq reads
** each 64-bit lane's low word), which GCC does not find in the loop above:
** eight lanes at a time, two vectors a word, all in registers. */
__attribute__((target("avx2"))) static inline void philox_lanes_avx2(uint64_t key, uint64_t first,
                                                                    uint64_t w[4][LANES]) {
  const __m256i m0 = _mm256_set1_epi64x(LC_PHILOX_M0), m1 = _mm256_set1_epi64x(LC_PHILOX_M1);
  const __m256i low = _mm256_set1_epi64x(0xffffffff);
  for (int h = 0; h < LANES; h += 8) {
    __m256i c0[2], c1[2], c2[2], c3[2];
    for (int v = 0; v < 2; v++) {
      uint64_t b = first + (uint64_t)(h + 4 * v);
      __m256i at = _mm256_add_epi64(_mm256_set1_epi64x((long long)b), _mm256_set_epi64x(3, 2, 1, 0));
      c0[v] = _mm256_and_si256(at, low);
      c1[v] = _mm256_srli_epi64(at, 32);
      c2[v] = _mm256_setzero_si256();
      c3[v] = _mm256_setzero_si256();
    }
    uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
    for (int r = 0; r < 10; r++) {
      __m256i kv0 = _mm256_set1_epi64x(k0), kv1 = _mm256_set1_epi64x(k1);
#pragma GCC unroll 2
      for (int v = 0; v < 2; v++) {
        __m256i p0 = _mm256_mul_epu32(c0[v], m0), p1 = _mm256_mul_epu32(c2[v], m1);
        __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1[v]), kv0);
        __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3[v]), kv1);
        c1[v] = _mm256_and_si256(p1, low);
        c3[v] = _mm256_and_si256(p0, low);
        c0[v] = n0;
        c2[v] = n2;
      }
      k0 += LC_PHILOX_W0;
      k1 += LC_PHILOX_W1;
    }
    for (int v = 0; v < 2; v++) {
      _mm256_storeu_si256((__m256i *)(void *)&w[0][h + 4 * v], c0[v]);
      _mm256_storeu_si256((__m256i *)(void *)&w[1][h + 4 * v], c1[v]);
      _mm256_storeu_si256((__m256i *)(void *)&w[2][h + 4 * v], c2[v]);
      _mm256_storeu_si256((__m256i *)(void *)&w[3][h + 4 * v], c3[v]);
    }
  }
}
#endif

/* A batch's elements, LANES * per of them, into out[0 ..]. */
BATCH_FN void batch_uniform_f64(const lc_random_call *c, uint64_t w[4][LANES], double *out) {
  double low = c->p[0], scale = c->p[1], high = c->p[2], below = c->p[3];
  if (low == 0 && scale == 1) {         /* fma(x, 1, 0) is x: [0, 1) needs no rounding */
    for (int l = 0; l < LANES; l++) {
      out[2 * l] = lc_rng_u01d(w[0][l], w[1][l]);
      out[2 * l + 1] = lc_rng_u01d(w[2][l], w[3][l]);
    }
    return;
  }
  for (int l = 0; l < LANES; l++) {
    double x0 = fma(lc_rng_u01d(w[0][l], w[1][l]), scale, low);
    double x1 = fma(lc_rng_u01d(w[2][l], w[3][l]), scale, low);
    out[2 * l] = x0 < high ? x0 : below;
    out[2 * l + 1] = x1 < high ? x1 : below;
  }
}

BATCH_FN void batch_uniform_f32(const lc_random_call *c, uint64_t w[4][LANES], float *out) {
  float low = (float)c->p[0], scale = (float)c->p[1], high = (float)c->p[2], below = (float)c->p[3];
  bool unit = low == 0 && scale == 1;
  for (int l = 0; l < LANES; l++)
    for (int k = 0; k < 4; k++) {
      float x = lc_rng_u01f(w[k][l]);
      if (!unit) x = fmaf(x, scale, low);
      out[4 * l + k] = x < high ? x : below;
    }
}

BATCH_FN void batch_normal(const lc_random_call *c, bool f32, uint64_t w[4][LANES], char *out) {
  for (int l = 0; l < LANES; l++) {
    lc_philox_block v = {{w[0][l], w[1][l], w[2][l], w[3][l]}};
    if (f32) {
      lc_rng_normal_f32(v, (float)c->p[0], (float)c->p[1], (float *)(void *)out + 4 * l);
    } else {
      lc_rng_normal_f64(v, c->p[0], c->p[1], (double *)(void *)out + 2 * l);
    }
  }
}

typedef void philox_fn(uint64_t key, uint64_t first, uint64_t w[4][LANES]);

/* Uniform and normal floats into n contiguous, aligned elements at data,
** with the given way of computing a batch of blocks (inlined into each
** caller, so compiled for its target). */
BATCH_FN void fill_floats(const lc_random_call *c, int64_t n, philox_fn *philox) {
  bool f32 = c->dtype->code == LC_FLOAT32;
  int per = f32 ? 4 : 2;
  int64_t size = f32 ? 4 : 8;
  uint64_t w[4][LANES];
  union {
    double d[2 * LANES];
    float f[4 * LANES];
  } tail;
  int64_t batch = (int64_t)LANES * per;
  for (int64_t j = 0, b = 0; j < n; j += batch, b += LANES) {
    philox(c->key, c->counter + (uint64_t)b, w);
    bool whole = n - j >= batch;
    char *out = whole ? c->data + j * size : (char *)&tail;
    if (c->dist == LC_RNG_NORMAL) batch_normal(c, f32, w, out);
    else if (f32) batch_uniform_f32(c, w, (float *)(void *)out);
    else batch_uniform_f64(c, w, (double *)(void *)out);
    if (!whole) memcpy(c->data + j * size, &tail, (size_t)((n - j) * size));
  }
}

static void fill_portable(const lc_random_call *c, int64_t n) { fill_floats(c, n, philox_lanes); }

#if LC_RANDOM_AVX2
/* AVX2 and FMA where the CPU has them: fma is then one instruction rather
** than libm's emulation; both give the same bits (fma rounds once). */
__attribute__((target("avx2,fma"))) static void fill_avx2(const lc_random_call *c, int64_t n) {
  fill_floats(c, n, philox_lanes_avx2);
}
#endif

static void fill_contiguous_floats(const lc_random_call *c, int64_t n) {
#if LC_RANDOM_AVX2
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    fill_avx2(c, n);
    return;
  }
#endif
  fill_portable(c, n);
}

void lc_random_host(const lc_random_call *c) {
  int64_t n = c->lay.size;
  if (n == 0) return;
  if (c->dist != LC_RNG_INTEGERS && lc_layout_is_c_contiguous(&c->lay, c->dtype->size) &&
      (uintptr_t)c->data % (uintptr_t)c->dtype->size == 0) {
    fill_contiguous_floats(c, n);
    return;
  }
  const lc_dtype *dt = c->dtype;
  int per = 4 / lc_random_words(c->dist, dt, c->range);
  uint64_t blocks = lc_random_blocks(c->dist, dt, c->range, n);
  bool f32 = dt->code == LC_FLOAT32;
  float pf[4];
  for (int k = 0; k < 4; k++) pf[k] = (float)c->p[k];
  walker w;
  walk_start(&w, &c->lay, dt->size);
  int64_t j = 0;
  for (uint64_t b = 0; b < blocks; b++) {
    uint64_t at = c->counter + b;
    lc_philox_block v = lc_philox_main(c->key, at);
    float f[4];
    double d[2];
    unsigned long long u[4];
    switch (c->dist) {
      case LC_RNG_UNIFORM:
        if (f32) lc_rng_uniform_f32(v, pf[0], pf[1], pf[2], pf[3], f);
        else lc_rng_uniform_f64(v, c->p[0], c->p[1], c->p[2], c->p[3], d);
        break;
      case LC_RNG_NORMAL:
        if (f32) lc_rng_normal_f32(v, pf[0], pf[1], f);
        else lc_rng_normal_f64(v, c->p[0], c->p[1], d);
        break;
      default:
        lc_rng_integers(v, c->key, at, c->low, c->range, u);
        break;
    }
    for (int k = 0; k < per && j < n; k++, j++) {
      char *p = c->data + w.off;
      if (c->dist == LC_RNG_INTEGERS) store_bits(p, dt->size, u[k]);
      else if (f32) memcpy(p, &f[k], 4);
      else memcpy(p, &d[k], 8);
      walk_next(&w);
    }
  }
}
