/*
** std_headers: the standard headers luacuda gives NVRTC (std_headers.h),
** built in from kernels/std/ so that nothing is read from disk.
*/
#include "std_headers.h"

#include "common.h"

LC_EMBED(lc_std_stdio_h, "kernels/std/stdio.h");
LC_EMBED(lc_std_math_h, "kernels/std/math.h");
LC_EMBED(lc_std_stdint_h, "kernels/std/stdint.h");
LC_EMBED(lc_std_cstdint, "kernels/std/cstdint");
LC_EMBED(lc_std_limits_h, "kernels/std/limits.h");
LC_EMBED(lc_std_climits, "kernels/std/climits");
LC_EMBED(lc_std_float_h, "kernels/std/float.h");
LC_EMBED(lc_std_cfloat, "kernels/std/cfloat");
LC_EMBED(lc_std_limits, "kernels/std/limits");
LC_EMBED(lc_std_type_traits, "kernels/std/type_traits");
extern const char lc_std_stdio_h[], lc_std_math_h[], lc_std_stdint_h[], lc_std_cstdint[],
    lc_std_limits_h[], lc_std_climits[], lc_std_float_h[], lc_std_cfloat[], lc_std_limits[],
    lc_std_type_traits[];

static const char *const names[] = {
  "stdio.h", "math.h", "stdint.h", "cstdint", "limits.h", "climits", "float.h", "cfloat",
  "limits", "type_traits",
};
static const char *const texts[] = {
  lc_std_stdio_h, lc_std_math_h, lc_std_stdint_h, lc_std_cstdint, lc_std_limits_h,
  lc_std_climits, lc_std_float_h, lc_std_cfloat, lc_std_limits, lc_std_type_traits,
};
#define NHEADERS ((int)(sizeof names / sizeof names[0]))

int lc_std_headers(const char *const **n, const char *const **t) {
  if (n) *n = names;
  if (t) *t = texts;
  return NHEADERS;
}

void lc_std_headers_key(lc_hash *key) {
  for (int i = 0; i < NHEADERS; i++) {
    lc_hash_add_str(key, names[i]);
    lc_hash_add_str(key, texts[i]);
  }
}
