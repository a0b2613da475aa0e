// <limits.h> for kernels NVRTC compiles (luacuda: src/backend/std_headers.c):
// libcu++'s <cuda/std/climits> defines CHAR_BIT, INT_MAX, LLONG_MIN... under
// NVRTC.
#ifndef LUACUDA_STD_LIMITS_H
#define LUACUDA_STD_LIMITS_H
#include <cuda/std/climits>
#endif
