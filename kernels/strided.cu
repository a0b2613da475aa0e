// luacuda's own kernels: compiled by NVRTC for the device at first use.
//
// lc_copy_strided copies n elements of itemsize bytes between two views of
// the same shape, each given by its first element and byte strides (any
// sign, zero for a source repeated: that is how a fill is done). A
// grid-stride loop, so any grid size covers any n.

// lc_strided_args: built into the module in front of this file
// (src/base/kernels.c), so only a compiler reading it from disk needs the
// include.
#ifndef LUACUDA_ABI_H
#include "abi.h"
#endif

template <typename T>
__device__ void lc_move(char *d, const char *s, int itemsize) {
  for (int b = 0; b < itemsize; b += (int)sizeof(T))
    *reinterpret_cast<T *>(d + b) = *reinterpret_cast<const T *>(s + b);
}

extern "C" __global__ void lc_copy_strided(char *dst, const char *src, lc_strided_args a) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += step) {
    long long rest = i, d = 0, s = 0;
    for (int k = a.ndim - 1; k >= 0; k--) {
      long long j = rest % a.shape[k];
      rest /= a.shape[k];
      d += j * a.dst_strides[k];
      s += j * a.src_strides[k];
    }
    char *p = dst + d;
    const char *q = src + s;
    // the widest word that both addresses and the itemsize allow
    unsigned long long align = (unsigned long long)p | (unsigned long long)q |
                               (unsigned long long)a.itemsize;
    if ((align & 7) == 0) lc_move<unsigned long long>(p, q, a.itemsize);
    else if ((align & 3) == 0) lc_move<unsigned int>(p, q, a.itemsize);
    else if ((align & 1) == 0) lc_move<unsigned short>(p, q, a.itemsize);
    else lc_move<unsigned char>(p, q, a.itemsize);
  }
}
