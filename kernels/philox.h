/*
** philox.h: luacuda's random numbers: the Philox4x32-10 generator (Salmon,
** Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3",
** SC'11) and the one way each distribution is made from its words. One
** definition read by the host (src/base/random.c, C11), by the CUDA
** backend's kernels (kernels/random.cu, NVRTC) and by every user kernel
** (the prelude, on both backends), so a seed gives the same bits
** everywhere. Only built-in types here: on NVRTC this file comes before
** the prelude's <stdint.h> names.
**
** A generator is a key (its 64-bit seed: low word k0, high word k1) and a
** counter of 128-bit blocks. Block b of the main stream is
** Philox4x32-10 of the counter (lo32(b), hi32(b), 0, 0) under the key: four
** 32-bit words, word i of a call being word i % 4 of block counter + i / 4.
** A call takes one word per element (float32, integers below 2^32 apart)
** or two (float64, wider integer ranges), so an element's value depends on
** the seed, the call's counter and its own index only, never on which
** thread computed it; the call then moves the counter past the blocks it
** used (a last block partly used included).
**
** The words become numbers so (u a word, "first" and "second" the
** element's two words in order):
**   float32 uniform  (u >> 8) * 2^-24, in [0, 1); on [low, high):
**                    fma(x, high - low, low), the largest float below high
**                    where rounding reaches high
**   float64 uniform  (((second << 32) | first) >> 11) * 2^-53, the same way
**   normal           Box-Muller on elements 2i and 2i+1: u1 from element
**                    2i's words as above but on (0, 1] ((u >> 8) + 1) * 2^-24,
**                    or ((x >> 11) + 1) * 2^-53), u2 from element 2i+1's on
**                    [0, 1); r = sqrt(-2 log u1), t = 2 pi u2; element 2i is
**                    fma(r cos t, std, mean), element 2i+1 fma(r sin t, std,
**                    mean) (float32 computes in float32)
**   integers         on [low, high), range = high - low: Lemire's
**                    multiply-and-reject, 32-bit (one word) for a range up to
**                    2^32, else 64-bit (two words); a rejected draw of the
**                    element at word w of block b draws again from its own
**                    sub-stream, block (lo32(b), hi32(b), attempt, 0x10000 + w)
**                    (attempt 1, 2, ...), so it shifts no other element
** Generator i of split(n) has the key made of words 0 and 1 of block
** (lo32(c), hi32(c), i, 0x20000), c being the parent's counter, the top bit
** cleared; the parent's counter then moves on by one.
*/
#ifndef LUACUDA_PHILOX_H
#define LUACUDA_PHILOX_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define LC_RNG_FN static __device__ __forceinline__
#else
#include <math.h>
#define LC_RNG_FN static inline
#endif

/* the rounds' multipliers and the key's increments (the paper's) */
#define LC_PHILOX_M0 0xD2511F53u
#define LC_PHILOX_M1 0xCD9E8D57u
#define LC_PHILOX_W0 0x9E3779B9u
#define LC_PHILOX_W1 0xBB67AE85u

/* the fourth counter word of the streams besides the main one */
#define LC_RNG_RETRY 0x10000u
#define LC_RNG_SPLIT 0x20000u

typedef struct lc_philox_block {
  unsigned int v[4];
} lc_philox_block;

/* Philox4x32-10 of the counter (c0, c1, c2, c3) under the key (k0, k1). */
LC_RNG_FN lc_philox_block lc_philox4x32_10(unsigned int c0, unsigned int c1, unsigned int c2,
                                           unsigned int c3, unsigned int k0, unsigned int k1) {
  for (int r = 0; r < 10; r++) {
    if (r > 0) {
      k0 += LC_PHILOX_W0;
      k1 += LC_PHILOX_W1;
    }
    unsigned long long p0 = (unsigned long long)LC_PHILOX_M0 * c0;
    unsigned long long p1 = (unsigned long long)LC_PHILOX_M1 * c2;
    unsigned int n0 = (unsigned int)(p1 >> 32) ^ c1 ^ k0;
    unsigned int n2 = (unsigned int)(p0 >> 32) ^ c3 ^ k1;
    c1 = (unsigned int)p1;
    c3 = (unsigned int)p0;
    c0 = n0;
    c2 = n2;
  }
  lc_philox_block out = {{c0, c1, c2, c3}};
  return out;
}

/* Block b of the main stream of key. */
LC_RNG_FN lc_philox_block lc_philox_main(unsigned long long key, unsigned long long b) {
  return lc_philox4x32_10((unsigned int)b, (unsigned int)(b >> 32), 0u, 0u, (unsigned int)key,
                          (unsigned int)(key >> 32));
}

/* ---- words to floats ---- */

#define LC_RNG_2M24F (1.0f / 16777216.0f)
#define LC_RNG_2M53 (1.0 / 9007199254740992.0)

/* [0, 1) and (0, 1] from one word, in float32 */
LC_RNG_FN float lc_rng_u01f(unsigned int u) { return (float)(u >> 8) * LC_RNG_2M24F; }
LC_RNG_FN float lc_rng_u01f_open(unsigned int u) {
  return (float)((u >> 8) + 1u) * LC_RNG_2M24F;
}
/* [0, 1) and (0, 1] from two words, in float64 */
LC_RNG_FN double lc_rng_u01d(unsigned int first, unsigned int second) {
  return (double)((((unsigned long long)second << 32) | first) >> 11) * LC_RNG_2M53;
}
LC_RNG_FN double lc_rng_u01d_open(unsigned int first, unsigned int second) {
  return (double)(((((unsigned long long)second << 32) | first) >> 11) + 1u) * LC_RNG_2M53;
}

/* ---- a block's elements, for each distribution ---- */

/* float32 uniform: 4 elements on [low, high), scale = high - low, below the
** largest float under high */
LC_RNG_FN void lc_rng_uniform_f32(lc_philox_block w, float low, float scale, float high,
                                  float below, float *out) {
  for (int k = 0; k < 4; k++) {
    float x = fmaf(lc_rng_u01f(w.v[k]), scale, low);
    out[k] = x < high ? x : below;
  }
}

/* float64 uniform: 2 elements, the same way */
LC_RNG_FN void lc_rng_uniform_f64(lc_philox_block w, double low, double scale, double high,
                                  double below, double *out) {
  for (int k = 0; k < 2; k++) {
    double x = fma(lc_rng_u01d(w.v[2 * k], w.v[2 * k + 1]), scale, low);
    out[k] = x < high ? x : below;
  }
}

#define LC_RNG_2PIF 6.28318530717958647692f
#define LC_RNG_2PI 6.28318530717958647692

/* One Box-Muller pair, float32: u1 from word a on (0, 1], u2 from b on [0, 1). */
LC_RNG_FN void lc_rng_pair_f32(unsigned int a, unsigned int b, float *z0, float *z1) {
  float r = sqrtf(-2.0f * logf(lc_rng_u01f_open(a)));
  float t = LC_RNG_2PIF * lc_rng_u01f(b);
  *z0 = r * cosf(t);
  *z1 = r * sinf(t);
}

/* float64: u1 from the words (a0, a1), u2 from (b0, b1) */
LC_RNG_FN void lc_rng_pair_f64(unsigned int a0, unsigned int a1, unsigned int b0,
                               unsigned int b1, double *z0, double *z1) {
  double r = sqrt(-2.0 * log(lc_rng_u01d_open(a0, a1)));
  double t = LC_RNG_2PI * lc_rng_u01d(b0, b1);
  *z0 = r * cos(t);
  *z1 = r * sin(t);
}

/* float32 normal: 4 elements, two pairs */
LC_RNG_FN void lc_rng_normal_f32(lc_philox_block w, float mean, float std, float *out) {
  for (int k = 0; k < 4; k += 2) {
    float z0, z1;
    lc_rng_pair_f32(w.v[k], w.v[k + 1], &z0, &z1);
    out[k] = fmaf(z0, std, mean);
    out[k + 1] = fmaf(z1, std, mean);
  }
}

/* float64 normal: 2 elements, one pair */
LC_RNG_FN void lc_rng_normal_f64(lc_philox_block w, double mean, double std, double *out) {
  double z0, z1;
  lc_rng_pair_f64(w.v[0], w.v[1], w.v[2], w.v[3], &z0, &z1);
  out[0] = fma(z0, std, mean);
  out[1] = fma(z1, std, mean);
}

/* The high 64 bits of a * b, and the low ones in *lo. */
LC_RNG_FN unsigned long long lc_rng_mul64(unsigned long long a, unsigned long long b,
                                          unsigned long long *lo) {
  unsigned long long a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  unsigned long long p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  unsigned long long mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  *lo = (mid << 32) | (p00 & 0xffffffffu);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* Integers on [0, range), range >= 1, from the block w, block b of the main
** stream of key: 4 elements when range <= 2^32, else 2; each element is
** offset by low (wrapping: the caller keeps only its dtype's bits). */
LC_RNG_FN void lc_rng_integers(lc_philox_block w, unsigned long long key, unsigned long long b,
                               unsigned long long low, unsigned long long range,
                               unsigned long long *out) {
  unsigned int k0 = (unsigned int)key, k1 = (unsigned int)(key >> 32);
  unsigned int b0 = (unsigned int)b, b1 = (unsigned int)(b >> 32);
  if (range <= 0x100000000ull) {
    for (unsigned int k = 0; k < 4; k++) {
      unsigned int u = w.v[k];
      if (range == 0x100000000ull) {
        out[k] = low + u;
        continue;
      }
      unsigned int r = (unsigned int)range;
      unsigned long long m = (unsigned long long)u * r;
      if ((unsigned int)m < r) {
        unsigned int t = (0u - r) % r;
        for (unsigned int attempt = 1; (unsigned int)m < t; attempt++) {
          u = lc_philox4x32_10(b0, b1, attempt, LC_RNG_RETRY + k, k0, k1).v[0];
          m = (unsigned long long)u * r;
        }
      }
      out[k] = low + (m >> 32);
    }
  } else {
    for (unsigned int k = 0; k < 2; k++) {
      unsigned long long x = ((unsigned long long)w.v[2 * k + 1] << 32) | w.v[2 * k], l;
      unsigned long long h = lc_rng_mul64(x, range, &l);
      if (l < range) {
        unsigned long long t = (0ull - range) % range;
        for (unsigned int attempt = 1; l < t; attempt++) {
          lc_philox_block v = lc_philox4x32_10(b0, b1, attempt, LC_RNG_RETRY + 2 * k, k0, k1);
          x = ((unsigned long long)v.v[1] << 32) | v.v[0];
          h = lc_rng_mul64(x, range, &l);
        }
      }
      out[k] = low + h;
    }
  }
}

/* The key of generator i of a split of (key, counter). */
LC_RNG_FN unsigned long long lc_rng_split_key(unsigned long long key, unsigned long long counter,
                                              unsigned int i) {
  lc_philox_block v = lc_philox4x32_10((unsigned int)counter, (unsigned int)(counter >> 32), i,
                                       LC_RNG_SPLIT, (unsigned int)key, (unsigned int)(key >> 32));
  return (((unsigned long long)v.v[1] << 32) | v.v[0]) & 0x7fffffffffffffffull;
}

#endif
