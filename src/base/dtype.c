/*
** dtype: the table of element types, built from LC_DTYPE_LIST, and the
** raw loads and stores of elements (the IEEE half conversions among
** them). Knows no Lua: the rules between Lua values and elements are
** element.c's.
*/
#include "dtype.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "layout.h"     /* LC_ERRLEN */

const lc_dtype lc_dtypes[LC_NTYPES] = {
#define LC_DTYPE_ROW(code, name, size, kind, numpy, knames, member, dl, mant, exp) \
  {LC_##code, name, size, size, kind, NULL, numpy, knames, member, dl, mant, exp},
  LC_DTYPE_LIST(LC_DTYPE_ROW)
#undef LC_DTYPE_ROW
};

/* What the loads and stores below take for granted of every row, checked
** when a row is added rather than met as a wrong value later: bool and
** the integers are the C types of their size (1, 2, 4 or 8 bytes); a
** float's sign, exponent and significand bits fill its size exactly, and
** it is C's float, C's double, or a format no wider in either part than a
** double (narrow_from_double's conditions). */
#define IS_SINGLE(mant, exp) ((mant) == FLT_MANT_DIG && (exp) == 8)
#define IS_DOUBLE(mant, exp) ((mant) == DBL_MANT_DIG && (exp) == 11)
_Static_assert(FLT_RADIX == 2 && FLT_MANT_DIG == 24 && DBL_MANT_DIG == 53,
               "float and double are IEEE binary32 and binary64");
#define LC_DTYPE_CHECK(code, name, size, kind, numpy, knames, member, dl, mant, exp)     \
  _Static_assert((kind) == 'f'                                                           \
                 ? (mant) + (exp) == 8 * (size) &&                                       \
                   (IS_SINGLE(mant, exp) || IS_DOUBLE(mant, exp) ||                      \
                    ((mant) >= 2 && (mant) < 53 && (exp) >= 2 && (exp) <= 11))           \
                 : ((kind) == 'b' || (kind) == 'i' || (kind) == 'u') &&                  \
                   ((size) == 1 || (size) == 2 || (size) == 4 || (size) == 8),           \
                 "dtype " name ": a size, kind or float format the conversions lack");
LC_DTYPE_LIST(LC_DTYPE_CHECK)
#undef LC_DTYPE_CHECK

/* bool is also NumPy's '?' */
static const struct { const char *alias; lc_typecode code; } aliases[] = {{"?", LC_BOOL}};

const lc_dtype *lc_dtype_lookup(const char *name) {
  for (int i = 0; i < LC_NTYPES; i++)
    if (strcmp(name, lc_dtypes[i].name) == 0 ||
        (lc_dtypes[i].numpy && strcmp(name, lc_dtypes[i].numpy) == 0))
      return &lc_dtypes[i];
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp(name, aliases[i].alias) == 0) return &lc_dtypes[aliases[i].code];
  return NULL;
}

/* ---- floats ------------------------------------------------------------ */

/* Round the significand bits of a double down by shift bits, nearest even. */
static uint64_t round_shift(uint64_t m, int shift) {
  if (shift >= 64) return 0;
  uint64_t q = m >> shift, rem = m & ((UINT64_C(1) << shift) - 1);
  uint64_t halfway = UINT64_C(1) << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1))) q++;
  return q;
}

/* A double as the bits of a binary float with mant significand bits (the
** implicit one included) and ebits exponent bits. */
static uint64_t narrow_from_double(double d, int mant, int ebits) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  int frac = mant - 1, emax = (1 << ebits) - 1, bias = (1 << (ebits - 1)) - 1;
  uint64_t sign = (b >> 63) << (frac + ebits), inf = (uint64_t)emax << frac;
  int exp = (int)((b >> 52) & 0x7ff);
  uint64_t man = b & ((UINT64_C(1) << 52) - 1);
  if (exp == 0x7ff) return sign | inf | (man ? UINT64_C(1) << (frac - 1) : 0);   /* inf, nan */
  int e = exp - 1023 + bias;
  if (e >= emax) return sign | inf;                              /* overflow */
  if (e >= 1)  /* normal: a carry out of the significand bumps the exponent */
    return sign | (((uint64_t)e << frac) + round_shift(man, 52 - frac));
  if (exp == 0) return sign;                     /* double subnormal: tiny */
  return sign | round_shift(man | (UINT64_C(1) << 52), 53 - frac - e);
}

static double narrow_to_double(uint64_t h, int mant, int ebits) {
  int frac = mant - 1, emax = (1 << ebits) - 1, bias = (1 << (ebits - 1)) - 1;
  int exp = (int)((h >> frac) & (uint64_t)emax);
  uint64_t man = h & ((UINT64_C(1) << frac) - 1);
  double v;
  if (exp == 0) v = ldexp((double)man, 1 - bias - frac);
  else if (exp == emax) v = man ? NAN : INFINITY;
  else v = ldexp((double)(man + (UINT64_C(1) << frac)), exp - bias - frac);
  return (h >> (frac + ebits)) & 1 ? -v : v;
}

/* C's own float and double by their format, not their size: a 4-byte
** float of another format is converted by its bits. */
double lc_dtype_load_float(const lc_dtype *dt, const void *p) {
  if (IS_DOUBLE(dt->mant_bits, dt->exp_bits)) { double d; memcpy(&d, p, 8); return d; }
  if (IS_SINGLE(dt->mant_bits, dt->exp_bits)) { float f; memcpy(&f, p, 4); return f; }
  uint64_t h = 0;
  memcpy(&h, p, (size_t)dt->size);               /* the low bytes: little-endian */
  return narrow_to_double(h, dt->mant_bits, dt->exp_bits);
}

void lc_dtype_store_float(const lc_dtype *dt, void *p, double v) {
  if (IS_DOUBLE(dt->mant_bits, dt->exp_bits)) { memcpy(p, &v, 8); return; }
  if (IS_SINGLE(dt->mant_bits, dt->exp_bits)) { float f = (float)v; memcpy(p, &f, 4); return; }
  uint64_t h = narrow_from_double(v, dt->mant_bits, dt->exp_bits);
  memcpy(p, &h, (size_t)dt->size);
}

int lc_dtype_min_exp(const lc_dtype *dt) {
  return 2 - (1 << (dt->exp_bits - 1)) - (dt->mant_bits - 1);
}

/* ---- integers ------------------------------------------------------------ */

/* Integers are stored in the host's order, as the C types of their size. */
void lc_dtype_store_int(const lc_dtype *dt, void *p, int64_t v) {
  if (dt->kind == 'f') {
    lc_dtype_store_float(dt, p, (double)v);
    return;
  }
  switch (dt->size) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); return; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); return; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); return; }
    case 8: memcpy(p, &v, 8); return;
  }   /* no row has another size (LC_DTYPE_CHECK) */
}

uint64_t lc_dtype_load_uint(const lc_dtype *dt, const void *p) {
  switch (dt->size) {
    case 1: { uint8_t x; memcpy(&x, p, 1); return x; }
    case 2: { uint16_t x; memcpy(&x, p, 2); return x; }
    case 4: { uint32_t x; memcpy(&x, p, 4); return x; }
    case 8: { uint64_t x; memcpy(&x, p, 8); return x; }
  }
  return 0;   /* no row has another size (LC_DTYPE_CHECK) */
}

int64_t lc_dtype_load_int(const lc_dtype *dt, const void *p) {
  switch (dt->size) {
    case 1: { int8_t x; memcpy(&x, p, 1); return x; }
    case 2: { int16_t x; memcpy(&x, p, 2); return x; }
    case 4: { int32_t x; memcpy(&x, p, 4); return x; }
    case 8: { int64_t x; memcpy(&x, p, 8); return x; }
  }
  return 0;   /* no row has another size (LC_DTYPE_CHECK) */
}
