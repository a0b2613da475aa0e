// <math.h> for kernels NVRTC compiles (luacuda: src/backend/std_headers.c).
// NVRTC has CUDA's math library built in under C's names (sinf, exp,
// isnan...); the prelude gives INFINITY, NAN, HUGE_VAL(F) and the POSIX
// M_ constants. So a kernel written for nvcc only needs the include to
// succeed. (C++'s std:: overloads are not built in: <cmath> is not given.)
#ifndef LUACUDA_STD_MATH_H
#define LUACUDA_STD_MATH_H
#endif
