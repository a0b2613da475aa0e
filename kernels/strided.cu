// luacuda's own kernels: compiled by NVRTC for the device at first use.
//
// lc_copy_strided copies n elements of itemsize bytes between two views of
// the same shape, each given by its first element and byte strides (any
// sign, zero for a source repeated: that is how a fill of a record longer
// than lc_fill_args holds is done). lc_fill_strided stores one value, given
// in its arguments, in every element of a view. Grid-stride loops, so any
// grid size covers any n.

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

// ---- lc_fill_strided ------------------------------------------------------
// The value's words of W (a.word bytes each; a.value is 8-aligned) at p.
template <typename W>
__device__ __forceinline__ void lc_put(W *p, const lc_fill_args &a, int words, W v0) {
  if (words == 1) {
    *p = v0;
  } else {
    const W *v = reinterpret_cast<const W *>(a.value);
    for (int b = 0; b < words; b++) p[b] = v[b];
  }
}

// U: the index type, O: the byte offset type (32-bit where a.flags has
// LC_FILL_INDEX32: the backend saw that n and every offset fit).
template <typename W, typename U, typename O>
__device__ __forceinline__ void lc_fill(char *dst, const lc_fill_args &a) {
  const int words = a.itemsize / (int)sizeof(W);
  const W v0 = *reinterpret_cast<const W *>(a.value);
  const U n = (U)a.n, step = (U)gridDim.x * blockDim.x;
  U i = (U)blockIdx.x * blockDim.x + threadIdx.x;
  if (a.flags & LC_FILL_CONTIGUOUS) {
    // element i at dst + i * itemsize: no division
    W *p = reinterpret_cast<W *>(dst);
    for (; i < n; i += step) lc_put<W>(p + i * (U)words, a, words, v0);
    return;
  }
  for (; i < n; i += step) {
    U rest = i;
    O off = 0;
    for (int k = a.ndim - 1; k > 0; k--) {
      U ext = (U)a.shape[k];
      off += (O)(rest % ext) * (O)a.strides[k];
      rest /= ext;
    }
    if (a.ndim > 0) off += (O)rest * (O)a.strides[0];   // the outermost: rest < shape[0]
    lc_put<W>(reinterpret_cast<W *>(dst + off), a, words, v0);
  }
}

template <typename W>
__device__ __forceinline__ void lc_fill_width(char *dst, const lc_fill_args &a) {
  if (a.flags & LC_FILL_INDEX32) lc_fill<W, unsigned int, int>(dst, a);
  else lc_fill<W, unsigned long long, long long>(dst, a);
}

extern "C" __global__ void lc_fill_strided(char *dst, lc_fill_args a) {
  switch (a.word) {
    case 8: lc_fill_width<unsigned long long>(dst, a); break;
    case 4: lc_fill_width<unsigned int>(dst, a); break;
    case 2: lc_fill_width<unsigned short>(dst, a); break;
    default: lc_fill_width<unsigned char>(dst, a); break;
  }
}
