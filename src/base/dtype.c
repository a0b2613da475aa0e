/*
** dtype: the table of element types (the builtins: size, alignment,
** names) and the IEEE half conversions. Knows no Lua: the rules between
** Lua values and elements are element.c's.
*/
#include "dtype.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "layout.h"     /* LC_ERRLEN */

const lc_dtype lc_dtypes[LC_NTYPES] = {
  {LC_BOOL,    "bool",    "bool",     1, 1, 'b', NULL},
  {LC_INT8,    "int8",    "int8_t",   1, 1, 'i', NULL},
  {LC_INT16,   "int16",   "int16_t",  2, 2, 'i', NULL},
  {LC_INT32,   "int32",   "int32_t",  4, 4, 'i', NULL},
  {LC_INT64,   "int64",   "int64_t",  8, 8, 'i', NULL},
  {LC_UINT8,   "uint8",   "uint8_t",  1, 1, 'u', NULL},
  {LC_UINT16,  "uint16",  "uint16_t", 2, 2, 'u', NULL},
  {LC_UINT32,  "uint32",  "uint32_t", 4, 4, 'u', NULL},
  {LC_UINT64,  "uint64",  "uint64_t", 8, 8, 'u', NULL},
  {LC_FLOAT16, "float16", "__half",   2, 2, 'f', NULL},
  {LC_FLOAT32, "float32", "float",    4, 4, 'f', NULL},
  {LC_FLOAT64, "float64", "double",   8, 8, 'f', NULL},
};

static const struct { const char *alias; lc_typecode code; } aliases[] = {
  {"?", LC_BOOL}, {"b1", LC_BOOL},
  {"i1", LC_INT8}, {"i2", LC_INT16}, {"i4", LC_INT32}, {"i8", LC_INT64},
  {"u1", LC_UINT8}, {"u2", LC_UINT16}, {"u4", LC_UINT32}, {"u8", LC_UINT64},
  {"f2", LC_FLOAT16}, {"f4", LC_FLOAT32}, {"f8", LC_FLOAT64},
};

const lc_dtype *lc_dtype_lookup(const char *name) {
  for (int i = 0; i < LC_NTYPES; i++)
    if (strcmp(name, lc_dtypes[i].name) == 0) return &lc_dtypes[i];
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp(name, aliases[i].alias) == 0) return &lc_dtypes[aliases[i].code];
  return NULL;
}

/* ---- float16 ---------------------------------------------------------- */

/* Round the significand bits of a double down to 'keep' bits, nearest even. */
static uint64_t round_shift(uint64_t m, int shift) {
  if (shift >= 64) return 0;
  uint64_t q = m >> shift, rem = m & ((UINT64_C(1) << shift) - 1);
  uint64_t halfway = UINT64_C(1) << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1))) q++;
  return q;
}

uint16_t lc_half_from_double(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  uint16_t sign = (uint16_t)((b >> 48) & 0x8000);
  int exp = (int)((b >> 52) & 0x7ff);
  uint64_t man = b & ((UINT64_C(1) << 52) - 1);
  if (exp == 0x7ff) return sign | 0x7c00 | (man ? 0x200 : 0);   /* inf, nan */
  int e = exp - 1023 + 15;
  if (e >= 31) return sign | 0x7c00;                             /* overflow */
  if (e >= 1)  /* normal: a carry out of the significand bumps the exponent */
    return (uint16_t)(sign | (((uint64_t)e << 10) + round_shift(man, 42)));
  if (exp == 0) return sign;                     /* double subnormal: tiny */
  return (uint16_t)(sign | round_shift(man | (UINT64_C(1) << 52), 43 - e));
}

double lc_half_to_double(uint16_t h) {
  int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v;
  if (exp == 0) v = ldexp(man, -24);
  else if (exp == 31) v = man ? NAN : INFINITY;
  else v = ldexp(man + 1024, exp - 25);
  return (h & 0x8000) ? -v : v;
}
