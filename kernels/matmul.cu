// Matrix products: lc_matmul<T> (T float or double), the library's own
// tiled kernel. It runs every product on the simulator (compiled there by
// the host compiler like any module, once per process: src/backend/sim/
// backend.c) and on the CUDA backend where cuBLAS cannot be loaded (NVRTC
// at first use, src/backend/cuda/matmul.c). kernels/abi.h's
// lc_matmul_args says what it computes: C = A B for each product of a
// batch, every operand at byte strides of any sign, so transposed and
// strided views need no copy.
//
// A block of LC_MM_THREADS_X x LC_MM_THREADS_Y threads computes an
// LC_MM_BM x LC_MM_BN tile of C. Step by step along k, the threads load an
// LC_MM_BM x LC_MM_BK tile of A and an LC_MM_BK x LC_MM_BN tile of B into
// shared memory together (zeros past the edges), then each thread adds
// their product into its LC_MM_TM x LC_MM_TN elements, held in registers:
// an outer product of a column of the A tile (stored k-major, so that the
// column is contiguous) and a row of the B tile per step of k. Sums are
// in T, k in order, as cuBLAS sums (the last bits may differ where a
// backend contracts a * b + c into one rounding).
#ifndef LUACUDA_ABI_H
#include "abi.h"
#endif

// the A tile's rows are padded: the loads, one element of a row of A per
// thread, then fall in different banks of shared memory
#define LC_MM_APAD 4

template <typename T>
__global__ void __launch_bounds__(LC_MM_THREADS) lc_matmul(lc_matmul_args p) {
  __shared__ T lc_mm_a_[LC_MM_BK][LC_MM_BM + LC_MM_APAD];
  __shared__ T lc_mm_b_[LC_MM_BK][LC_MM_BN];
  // the tiles' addresses, taken once: on the simulator __shared__ is
  // thread_local, whose every use in a module would ask the C library
  T (*const lc_mm_a)[LC_MM_BM + LC_MM_APAD] = lc_mm_a_;
  T (*const lc_mm_b)[LC_MM_BN] = lc_mm_b_;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * LC_MM_THREADS_X + tx;
  const long long tiles_m = (p.m + LC_MM_BM - 1) / LC_MM_BM;
  const long long tiles_n = (p.n + LC_MM_BN - 1) / LC_MM_BN;
  for (long long z = blockIdx.z; z < p.batch; z += gridDim.z) {
    // this product's operands: z's index in the batch shape, C order
    const char *A = p.a, *B = p.b;
    char *C = p.c;
    long long rest = z;
    for (int d = p.nbatch - 1; d >= 0; d--) {
      long long j = rest % p.bshape[d];
      rest /= p.bshape[d];
      A += j * p.a_bs[d];
      B += j * p.b_bs[d];
      C += j * p.c_bs[d];
    }
    for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
      for (long long tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
        const long long row0 = tm * LC_MM_BM, col0 = tn * LC_MM_BN;
        T acc[LC_MM_TM][LC_MM_TN];
        for (int i = 0; i < LC_MM_TM; i++)
          for (int j = 0; j < LC_MM_TN; j++) acc[i][j] = T(0);
        for (long long k0 = 0; k0 < p.k; k0 += LC_MM_BK) {
          for (int e = tid; e < LC_MM_BM * LC_MM_BK; e += LC_MM_THREADS) {
            const int i = e / LC_MM_BK, kk = e % LC_MM_BK;
            const long long r = row0 + i, q = k0 + kk;
            lc_mm_a[kk][i] = r < p.m && q < p.k ? *(const T *)(A + r * p.a_rs + q * p.a_cs) : T(0);
          }
          for (int e = tid; e < LC_MM_BK * LC_MM_BN; e += LC_MM_THREADS) {
            const int kk = e / LC_MM_BN, j = e % LC_MM_BN;
            const long long q = k0 + kk, c = col0 + j;
            lc_mm_b[kk][j] = q < p.k && c < p.n ? *(const T *)(B + q * p.b_rs + c * p.b_cs) : T(0);
          }
          __syncthreads();
          for (int kk = 0; kk < LC_MM_BK; kk++) {
            T a[LC_MM_TM], b[LC_MM_TN];
            for (int i = 0; i < LC_MM_TM; i++) a[i] = lc_mm_a[kk][ty * LC_MM_TM + i];
            for (int j = 0; j < LC_MM_TN; j++) b[j] = lc_mm_b[kk][tx * LC_MM_TN + j];
            for (int i = 0; i < LC_MM_TM; i++)
              for (int j = 0; j < LC_MM_TN; j++) acc[i][j] += a[i] * b[j];
          }
          __syncthreads();
        }
        for (int i = 0; i < LC_MM_TM; i++) {
          const long long r = row0 + ty * LC_MM_TM + i;
          if (r >= p.m) break;
          for (int j = 0; j < LC_MM_TN; j++) {
            const long long c = col0 + tx * LC_MM_TN + j;
            if (c < p.n) *(T *)(C + r * p.c_rs + c * p.c_cs) = acc[i][j];
          }
        }
      }
    }
  }
}
