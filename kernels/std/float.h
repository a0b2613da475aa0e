// <float.h> for kernels NVRTC compiles (luacuda: src/backend/std_headers.c).
// libcu++'s <cuda/std/cfloat> is empty under NVRTC, so the characteristics
// of IEEE 754 binary32 and binary64 (what float and double are on a GPU)
// are written out here, exact as hexadecimal literals.
#ifndef LUACUDA_STD_FLOAT_H
#define LUACUDA_STD_FLOAT_H
#define FLT_RADIX 2
#define FLT_ROUNDS 1
#define FLT_EVAL_METHOD 0
#define DECIMAL_DIG 17
#define FLT_MANT_DIG 24
#define FLT_DIG 6
#define FLT_DECIMAL_DIG 9
#define FLT_MIN_EXP (-125)
#define FLT_MIN_10_EXP (-37)
#define FLT_MAX_EXP 128
#define FLT_MAX_10_EXP 38
#define FLT_MAX 0x1.fffffep+127F
#define FLT_MIN 0x1p-126F
#define FLT_TRUE_MIN 0x1p-149F
#define FLT_EPSILON 0x1p-23F
#define DBL_MANT_DIG 53
#define DBL_DIG 15
#define DBL_DECIMAL_DIG 17
#define DBL_MIN_EXP (-1021)
#define DBL_MIN_10_EXP (-307)
#define DBL_MAX_EXP 1024
#define DBL_MAX_10_EXP 308
#define DBL_MAX 0x1.fffffffffffffp+1023
#define DBL_MIN 0x1p-1022
#define DBL_TRUE_MIN 0x1p-1074
#define DBL_EPSILON 0x1p-52
#endif
