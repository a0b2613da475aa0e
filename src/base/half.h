/*
** half: float16 (IEEE binary16) and bfloat16 to and from C's float, by
** their bits, for loops that convert one element at a time (the host
** reductions, luacuda.dist's MPI ops, the fake NCCL): inline, as a call
** per element would cost more than the conversion. A float rounds to
** nearest even, as dtype.c's lc_dtype_store_float does from the same
** value as a double, NaN included: a quiet NaN of the same sign (float16
** 0x7e00, bfloat16 0x7fc0), its payload dropped. Pure C, no other header
** of the project.
*/
#ifndef LUACUDA_HALF_H
#define LUACUDA_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float lc_float_of_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

static inline uint32_t lc_bits_of_float(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* exact */
static inline float lc_float16_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {                            /* zero or subnormal: m * 2^-24, exact */
    float f = (float)m * 0x1p-24f;
    return sign ? -f : f;
  }
  return lc_float_of_bits(e == 31 ? sign | 0x7f800000u | m << 13      /* inf, NaN */
                                  : sign | (e + 112u) << 23 | m << 13);  /* rebias 15 -> 127 */
}

static inline uint16_t lc_float_to_float16(float f) {
  uint32_t x = lc_bits_of_float(f), ax = x & 0x7fffffffu;
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  if (ax > 0x7f800000u) return sign | 0x7e00u;              /* NaN */
  if (ax >= 0x477ff000u) return sign | 0x7c00u;             /* 65520 and up: inf */
  if (ax < 0x38800000u)                                     /* under 2^-14: subnormal */
    return sign | (uint16_t)lrintf(lc_float_of_bits(ax) * 0x1p24f);   /* exact scaling */
  uint32_t r = ax + 0xfffu + ((ax >> 13) & 1u) - (112u << 23);          /* nearest even */
  return sign | (uint16_t)(r >> 13);
}

/* exact */
static inline float lc_bfloat16_to_float(uint16_t h) {
  return lc_float_of_bits((uint32_t)h << 16);
}

static inline uint16_t lc_float_to_bfloat16(float f) {
  uint32_t x = lc_bits_of_float(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16 & 0x8000u) | 0x7fc0u);  /* NaN */
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);   /* nearest even; inf stays */
}

#endif
