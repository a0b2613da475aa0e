// luacuda's sort and argsort (src/base/sort.h) on the CUDA backend: an LSD
// radix sort of 8 bits a pass, on keys of kernels/sort_keys.h (the host's
// order, so both backends sort alike), launched by src/backend/cuda/sort.c.
// sort_keys.h's lc_sort_args says how rows are sorted together: (key,
// position) pairs, then the row number's digits. Kernels, in order:
//   lc_sort_gather   the view's elements as keys, and their positions
//   lc_sort_count    per pass: each block's count of each digit in its tile
//   lc_sort_scan     one block: the exclusive scan of the counts, digit-major
//   lc_sort_scatter  each block moves its tile's pairs to their places,
//                    in order within each digit (stable)
//   lc_sort_place    the sorted pairs written into the output's rows
// Pairs are 64-bit keys and 64-bit positions, whatever the element's width.

#ifndef LUACUDA_ABI_H
#include "abi.h"
#endif

namespace lcs {

typedef unsigned long long u64;
typedef long long i64;

// the byte offset of element j of row r in a view
__device__ i64 offset_of(const lc_sort_args &a, i64 r, i64 j, bool out) {
  const long long *st = out ? a.out_strides : a.in_strides;
  i64 off = j * (out ? a.out_axis : a.in_axis);
  for (int d = a.ndim - 1; d >= 0; d--) {
    i64 q = r / a.shape[d];
    off += (r - q * a.shape[d]) * st[d];
    r = q;
  }
  return off;
}

__device__ u64 load_bits(const char *p, int size, bool bytewise) {
  if (bytewise) {
    u64 b = 0;
    for (int i = 0; i < size; i++) b |= (u64)(unsigned char)p[i] << (8 * i);
    return b;
  }
  switch (size) {
  case 1: return *(const unsigned char *)p;
  case 2: return *(const unsigned short *)p;
  case 4: return *(const unsigned *)p;
  default: return *(const u64 *)p;
  }
}

__device__ void store_bits(char *p, u64 b, int size, bool bytewise) {
  if (bytewise) {
    for (int i = 0; i < size; i++) p[i] = (char)(b >> (8 * i));
    return;
  }
  switch (size) {
  case 1: *(unsigned char *)p = (unsigned char)b; break;
  case 2: *(unsigned short *)p = (unsigned short)b; break;
  case 4: *(unsigned *)p = (unsigned)b; break;
  default: *(u64 *)p = b; break;
  }
}

// this pass's digit of pair i, 256 for none (past the end)
__device__ unsigned digit_of(const lc_sort_args &a, const u64 *keys, const u64 *pos, i64 i) {
  if (i >= a.total) return 256;
  u64 v = a.row_pass ? pos[i] / (u64)a.n : keys[i];
  return (unsigned)(v >> a.shift) & 255u;
}

}  // namespace lcs

using namespace lcs;

extern "C" __global__ void lc_sort_gather(const char *in, char *out, u64 *keys, u64 *pos,
                                          u64 *keys2, u64 *pos2, unsigned *counts,
                                          lc_sort_args a) {
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < a.total;
       i += (i64)gridDim.x * blockDim.x) {
    i64 r = i / a.n, j = i - r * a.n;
    u64 b = load_bits(in + offset_of(a, r, j, false), a.size, a.bytewise);
    u64 k = lc_sk_key(b, a.kind, a.bits, a.mant);
    keys[i] = a.argsort ? lc_sk_canonical(k, a.kind, a.bits, a.mant) : k;
    pos[i] = (u64)i;
  }
}

extern "C" __global__ void lc_sort_count(const char *in, char *out, u64 *keys, u64 *pos,
                                         u64 *keys2, u64 *pos2, unsigned *counts,
                                         lc_sort_args a) {
  __shared__ unsigned hist[256];
  for (i64 b = blockIdx.x; b < a.blocks; b += gridDim.x) {
    for (int d = threadIdx.x; d < 256; d += blockDim.x) hist[d] = 0;
    __syncthreads();
    i64 start = b * LC_SORT_TILE;
    for (int t = threadIdx.x; t < LC_SORT_TILE && start + t < a.total; t += blockDim.x) {
      unsigned d = digit_of(a, keys, pos, start + t);
      if (d < 256) atomicAdd(&hist[d], 1u);
    }
    __syncthreads();
    for (int d = threadIdx.x; d < 256; d += blockDim.x) counts[(i64)d * a.blocks + b] = hist[d];
    __syncthreads();
  }
}

// one block of LC_SORT_SCAN_THREADS: each thread a contiguous run of the
// counts, then a scan of the runs' sums in shared memory
extern "C" __global__ void lc_sort_scan(const char *in, char *out, u64 *keys, u64 *pos,
                                        u64 *keys2, u64 *pos2, unsigned *counts,
                                        lc_sort_args a) {
  __shared__ u64 sums[LC_SORT_SCAN_THREADS];
  i64 m = 256 * a.blocks, per = (m + blockDim.x - 1) / blockDim.x;
  i64 lo = threadIdx.x * per, hi = lo + per < m ? lo + per : m;
  u64 s = 0;
  for (i64 i = lo; i < hi; i++) s += counts[i];
  sums[threadIdx.x] = s;
  __syncthreads();
  for (unsigned step = 1; step < blockDim.x; step *= 2) {   // inclusive, Hillis-Steele
    u64 v = threadIdx.x >= step ? sums[threadIdx.x - step] : 0;
    __syncthreads();
    sums[threadIdx.x] += v;
    __syncthreads();
  }
  u64 at = sums[threadIdx.x] - s;
  for (i64 i = lo; i < hi; i++) {
    u64 c = counts[i];
    counts[i] = (unsigned)at;       // total < 2^32 pairs (sort.c checks)
    at += c;
  }
}

// A tile in rounds of blockDim pairs: a pair's place is its digit's next
// free place for this block, plus the pairs of the same digit before it in
// the round (those of earlier warps, then earlier lanes: ballots on the
// digit's nine bits tell a lane its warp's peers).
extern "C" __global__ void lc_sort_scatter(const char *in, char *out, u64 *keys, u64 *pos,
                                           u64 *keys2, u64 *pos2, unsigned *counts,
                                           lc_sort_args a) {
  __shared__ unsigned next[256];
  __shared__ unsigned per_warp[LC_SORT_THREADS / 32][257];
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (i64 b = blockIdx.x; b < a.blocks; b += gridDim.x) {
    for (int d = threadIdx.x; d < 256; d += blockDim.x) next[d] = counts[(i64)d * a.blocks + b];
    i64 start = b * LC_SORT_TILE;
    for (int round = 0; round < LC_SORT_TILE && start + round < a.total; round += blockDim.x) {
      for (int x = threadIdx.x; x < (int)(warps * 257); x += blockDim.x)
        per_warp[x / 257][x % 257] = 0;
      __syncthreads();
      i64 i = start + round + threadIdx.x;
      unsigned d = digit_of(a, keys, pos, i);
      unsigned peers = 0xffffffffu;
      for (int bit = 0; bit < 9; bit++) {
        unsigned set = __ballot_sync(0xffffffffu, (d >> bit) & 1u);
        peers &= ((d >> bit) & 1u) ? set : ~set;
      }
      unsigned rank = __popc(peers & ((1u << lane) - 1u));
      if (rank == 0) per_warp[warp][d] = __popc(peers);
      __syncthreads();
      if (d < 256) {
        unsigned to = next[d] + rank;
        for (unsigned w = 0; w < warp; w++) to += per_warp[w][d];
        keys2[to] = keys[i];
        pos2[to] = pos[i];
      }
      __syncthreads();
      for (int e = threadIdx.x; e < 256; e += blockDim.x) {
        unsigned add = 0;
        for (unsigned w = 0; w < warps; w++) add += per_warp[w][e];
        next[e] += add;
      }
      __syncthreads();
    }
  }
}

extern "C" __global__ void lc_sort_place(const char *in, char *out, u64 *keys, u64 *pos,
                                         u64 *keys2, u64 *pos2, unsigned *counts,
                                         lc_sort_args a) {
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < a.total;
       i += (i64)gridDim.x * blockDim.x) {
    i64 r = i / a.n, j = i - r * a.n;
    char *p = out + offset_of(a, r, j, true);
    if (a.argsort) store_bits(p, (u64)((i64)pos[i] - r * a.n + 1), 8, a.bytewise);
    else store_bits(p, lc_sk_value(keys[i], a.kind, a.bits, a.mant), a.size, a.bytewise);
  }
}
