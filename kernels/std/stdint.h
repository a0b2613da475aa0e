// <stdint.h> for kernels NVRTC compiles (luacuda: src/backend/std_headers.c).
// libcu++'s <cuda/std/cstdint> gives the fixed-width types in the global
// namespace as well as in cuda::std, and their limits (INT64_MAX,
// SIZE_MAX...).
#ifndef LUACUDA_STD_STDINT_H
#define LUACUDA_STD_STDINT_H
#include <cuda/std/cstdint>
#endif
