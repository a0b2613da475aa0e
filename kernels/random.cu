// Random numbers on the CUDA backend: lc_random<dist, T>, compiled by NVRTC
// for each (distribution, element type) a program uses, at its first use
// (src/backend/cuda/random.c). Built into the module behind kernels/abi.h
// and kernels/philox.h, whose rules the host's loop (src/base/random.c)
// shares: each thread takes whole blocks of the generator, in a grid-stride
// loop, and block b gives the elements b * per ... b * per + per - 1 (per =
// 4 / words), so which thread computed an element changes nothing.
#ifndef LUACUDA_ABI_H
#include "abi.h"
#endif
#ifndef LUACUDA_PHILOX_H
#include "philox.h"
#endif

// element j's address in the view
template <typename T>
__device__ __forceinline__ T *lc_random_at(const lc_random_args &a, long long j) {
  if (a.contiguous) return (T *)a.data + j;
  char *p = a.data;
  for (int d = a.ndim - 1; d >= 0; d--) {
    long long n = a.shape[d];
    p += (j % n) * a.strides[d];
    j /= n;
  }
  return (T *)p;
}

// D: LC_RNG_*; T: float or double, or for integers an unsigned type of the
// element's size (the bits are stored)
template <int D, typename T>
__global__ void lc_random(const lc_random_args a) {
  const int per = 4 / a.words;
  const unsigned long long blocks = ((unsigned long long)a.n + per - 1) / per;
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long b = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
       b < blocks; b += stride) {
    const unsigned long long at = a.counter + b;
    const lc_philox_block v = lc_philox_main(a.key, at);
    T out[4];
    if constexpr (D == LC_RNG_INTEGERS) {
      unsigned long long u[4];
      lc_rng_integers(v, a.key, at, a.low, a.range, u);
      for (int k = 0; k < 4; k++) out[k] = (T)u[k];
    } else if constexpr (sizeof(T) == 4) {
      if constexpr (D == LC_RNG_UNIFORM)
        lc_rng_uniform_f32(v, (float)a.p0, (float)a.p1, (float)a.p2, (float)a.p3, out);
      else
        lc_rng_normal_f32(v, (float)a.p0, (float)a.p1, out);
    } else {
      if constexpr (D == LC_RNG_UNIFORM)
        lc_rng_uniform_f64(v, a.p0, a.p1, a.p2, a.p3, out);
      else
        lc_rng_normal_f64(v, a.p0, a.p1, out);
    }
    const long long j0 = (long long)(b * per);
    for (int k = 0; k < per; k++)
      if (j0 + k < a.n) *lc_random_at<T>(a, j0 + k) = out[k];
  }
}
