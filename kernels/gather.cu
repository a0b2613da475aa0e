// luacuda's gather and scatter (src/base/gather.h) on the CUDA backend:
// take, put, add_at and the compaction of a mask, one thread per element
// (grid-stride), launched by src/backend/cuda/gather.c with
// lc_gather_args (kernels/gather_abi.h). The addressing is
// src/base/gather.c's: an element's C-order number unravelled over each
// view's shape and byte strides.

#ifndef LUACUDA_GATHER_ABI_H
#include "gather_abi.h"
#endif

namespace lcg {

typedef long long i64;
typedef unsigned long long u64;

// the byte offset of element e (C order) of a view
__device__ i64 unravel(i64 e, int ndim, const i64 *shape, const i64 *strides) {
  i64 off = 0;
  for (int d = ndim - 1; d >= 0; d--) {
    i64 i = e % shape[d];
    e /= shape[d];
    off += i * strides[d];
  }
  return off;
}

__device__ __forceinline__ i64 norm(i64 v, i64 n) {
  i64 k = v < 0 ? v + n : v - 1;
  return k >= 0 && k < n ? k : -1;
}

// arr's byte offset and val's for val's element e, in one walk over val's
// axes (arr's leading axes, idx's, arr's trailing ones), with no array of
// coordinates (which would live in local memory)
__device__ void offsets(const lc_gather_args &a, const char *idx, i64 e, i64 *ao, i64 *vo) {
  i64 v_off = 0, a_off = 0, i_off = 0;
  int post = a.axis + a.idx_ndim, shift = a.naxes - a.idx_ndim;
  for (int d = a.val_ndim - 1; d >= 0; d--) {
    i64 i = e % a.val_shape[d];
    e /= a.val_shape[d];
    v_off += i * a.val_strides[d];
    if (d >= post) a_off += i * a.arr_strides[d + shift];
    else if (d >= a.axis) i_off += i * a.idx_strides[d - a.axis];
    else a_off += i * a.arr_strides[d];
  }
  i64 v = *(const i64 *)(idx + i_off);
  *ao = a_off + unravel(norm(v, a.n), a.naxes, a.arr_shape + a.axis, a.arr_strides + a.axis);
  *vo = v_off;
}

__device__ __forceinline__ void copy_item(char *dst, const char *src, i64 size) {
  switch (size) {
    case 1: *dst = *src; break;
    case 2: *(unsigned short *)dst = *(const unsigned short *)src; break;
    case 4: *(unsigned *)dst = *(const unsigned *)src; break;
    case 8: *(u64 *)dst = *(const u64 *)src; break;
    default: for (i64 i = 0; i < size; i++) dst[i] = src[i];
  }
}

// an element of 1 or 2 bytes (bool: or), by the one thread that runs
// these dtypes' adds: CUDA has no atomic add of them, and a compare-and-
// swap of the word around one could reach past the end of its allocation
template <int T, typename U>
__device__ void add_plain(char *p, const char *q) {
  U x = *(const U *)p, y = *(const U *)q;
  *(U *)p = lc_elem<T>::kind_ == 'b' ? (U)(x || y) : (U)(x + y);
}

// dtype T's element q added to p (T: abi.h's code; a float other than
// float32 and float64 is refused before a launch)
template <int T>
__device__ void add_item(char *p, const char *q) {
  typedef lc_elem<T> E;
  if constexpr (E::kind_ == 'f' && E::size_ == 4) atomicAdd((float *)p, *(const float *)q);
  else if constexpr (E::kind_ == 'f' && E::size_ == 8) atomicAdd((double *)p, *(const double *)q);
  else if constexpr (E::size_ == 4) atomicAdd((unsigned *)p, *(const unsigned *)q);
  else if constexpr (E::size_ == 8) atomicAdd((u64 *)p, *(const u64 *)q);
  else if constexpr (E::size_ == 2) add_plain<T, unsigned short>(p, q);
  else add_plain<T, unsigned char>(p, q);
}

}  // namespace lcg

// the first index out of range: check[0] (all ones before) the least
// position, by atomicMin; lc_gather_check_value then reads its value
extern "C" __global__ void lc_gather_check(const char *idx, long long *check, lc_gather_args a) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < a.count;
       e += (long long)gridDim.x * blockDim.x) {
    long long v = *(const long long *)(idx + lcg::unravel(e, a.idx_ndim, a.idx_shape,
                                                         a.idx_strides));
    if (lcg::norm(v, a.n) < 0) atomicMin((unsigned long long *)check, (unsigned long long)e);
  }
}

extern "C" __global__ void lc_gather_check_value(const char *idx, long long *check,
                                                 lc_gather_args a) {
  if (check[0] >= 0)
    check[1] = *(const long long *)(idx + lcg::unravel(check[0], a.idx_ndim, a.idx_shape,
                                                      a.idx_strides));
}

// take (put: 0) or put (1): one element copied each way
extern "C" __global__ void lc_gather_copy(char *arr, const char *idx, char *val, lc_gather_args a,
                                          int put) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < a.count;
       e += (long long)gridDim.x * blockDim.x) {
    long long ao, vo;
    lcg::offsets(a, idx, e, &ao, &vo);
    if (put) lcg::copy_item(arr + ao, val + vo, a.itemsize);
    else lcg::copy_item(val + vo, arr + ao, a.itemsize);
  }
}

// add_at: arr[p, idx[j], q] += val[p, j, q], atomically (8- and 16-bit
// dtypes and bool: launched as one thread, which adds them in order)
template <int T>
__global__ void lc_gather_add(char *arr, const char *idx, const char *val, lc_gather_args a) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < a.count;
       e += (long long)gridDim.x * blockDim.x) {
    long long ao, vo;
    lcg::offsets(a, idx, e, &ao, &vo);
    lcg::add_item<T>(arr + ao, val + vo);
  }
}

// ---- a mask's true elements: counted, then compacted in C order. Block b
// of the compaction owns the elements [b * PER_BLOCK, (b + 1) * PER_BLOCK):
// lc_gather_block_counts counts each block's, lc_gather_block_offsets
// turns the counts into each block's first rank, and lc_gather_compact
// has each block scan its elements tile by tile in shared memory and
// write the coordinates of each true one at its rank.

__device__ __forceinline__ bool mask_at(const char *mask, const lc_gather_args &a, long long e) {
  return mask[lcg::unravel(e, a.arr_ndim, a.arr_shape, a.arr_strides)] != 0;
}

// the block's true elements among [lo, hi), for every thread
__device__ long long block_count(const char *mask, const lc_gather_args &a, long long lo,
                                 long long hi) {
  __shared__ unsigned long long total;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  unsigned long long n = 0;
  for (long long e = lo + threadIdx.x; e < hi; e += blockDim.x) n += mask_at(mask, a, e);
  if (n) atomicAdd(&total, n);
  __syncthreads();
  long long r = (long long)total;
  __syncthreads();
  return r;
}

// COUNT: check[0] (zero before) the mask's true elements
extern "C" __global__ void lc_gather_count(const char *mask, long long *check, lc_gather_args a) {
  long long nb = (a.count + LC_GATHER_PER_BLOCK - 1) / LC_GATHER_PER_BLOCK;
  for (long long b = blockIdx.x; b < nb; b += gridDim.x) {
    long long lo = b * LC_GATHER_PER_BLOCK, hi = min(lo + LC_GATHER_PER_BLOCK, a.count);
    long long n = block_count(mask, a, lo, hi);
    if (threadIdx.x == 0 && n) atomicAdd((unsigned long long *)check, (unsigned long long)n);
  }
}

extern "C" __global__ void lc_gather_block_counts(const char *mask, long long *counts,
                                                  lc_gather_args a) {
  long long nb = (a.count + LC_GATHER_PER_BLOCK - 1) / LC_GATHER_PER_BLOCK;
  for (long long b = blockIdx.x; b < nb; b += gridDim.x) {
    long long lo = b * LC_GATHER_PER_BLOCK, hi = min(lo + LC_GATHER_PER_BLOCK, a.count);
    long long n = block_count(mask, a, lo, hi);
    if (threadIdx.x == 0) counts[b] = n;
  }
}

// one thread: the counts become each block's first rank (an exclusive
// running sum over one count per PER_BLOCK elements: 245 for a million)
extern "C" __global__ void lc_gather_block_offsets(long long *counts, long long nb) {
  long long run = 0;
  for (long long b = 0; b < nb; b++) {
    long long n = counts[b];
    counts[b] = run;
    run += n;
  }
}

// the coordinates (1-based) of each true element, at its rank (launched
// with LC_GATHER_THREADS threads per block)
extern "C" __global__ void lc_gather_compact(const char *mask, const long long *offsets,
                                             long long *out, lc_gather_args a) {
  __shared__ long long scan[LC_GATHER_THREADS];
  __shared__ long long rank;
  long long nb = (a.count + LC_GATHER_PER_BLOCK - 1) / LC_GATHER_PER_BLOCK;
  unsigned t = threadIdx.x;
  for (long long b = blockIdx.x; b < nb; b += gridDim.x) {
    long long lo = b * LC_GATHER_PER_BLOCK, hi = min(lo + LC_GATHER_PER_BLOCK, a.count);
    if (t == 0) rank = offsets[b];
    __syncthreads();
    for (long long tile = lo; tile < hi; tile += LC_GATHER_THREADS) {
      long long e = tile + t;
      bool on = e < hi && mask_at(mask, a, e);
      scan[t] = on;
      __syncthreads();
      for (unsigned d = 1; d < LC_GATHER_THREADS; d *= 2) {   // inclusive scan of the tile
        long long v = t >= d ? scan[t - d] : 0;
        __syncthreads();
        scan[t] += v;
        __syncthreads();
      }
      if (on) {
        long long *o = out + rank + scan[t] - 1;
        if (a.flat) {
          *o = e + 1;
        } else {
          long long r = e;
          for (int d = a.arr_ndim - 1; d >= 0; d--) {
            o[d * a.ntrue] = r % a.arr_shape[d] + 1;
            r /= a.arr_shape[d];
          }
        }
      }
      __syncthreads();
      if (t == LC_GATHER_THREADS - 1) rank += scan[t];
      __syncthreads();
    }
  }
}
