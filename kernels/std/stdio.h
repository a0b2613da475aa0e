// <stdio.h> for kernels NVRTC compiles (luacuda: src/backend/std_headers.c).
// NVRTC has printf built in, and nothing else of C's stdio runs on a GPU,
// so a kernel written for nvcc only needs the include to succeed.
#ifndef LUACUDA_STD_STDIO_H
#define LUACUDA_STD_STDIO_H
#endif
