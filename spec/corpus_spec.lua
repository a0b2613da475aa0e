-- A corpus of kernels written as CUDA projects write them (issue 16): warp
-- shuffles, cooperative groups, scans, shared-memory histograms, tiled
-- transposes, half precision, templates and structs, stencils, compaction,
-- sorting, SpMV, n-body, softmax, cuComplex... one source per idiom, each
-- launched through the public API on inputs of awkward sizes (not multiples
-- of the block, several blocks) and checked against a result computed here,
-- in Lua. The same source and the same assertions run on every backend: the
-- simulator compiles it with the host compiler, the CUDA backend with NVRTC
-- (on the fake driver, its PTX is interpreted). Warp functions name full
-- masks, so every block is a whole number of warps and no lane of a warp
-- returns before the warp's last shuffle: the kernels guard the work, not
-- the shuffle, as correct CUDA must.
--
-- Inputs are chosen so that float results are exact wherever the idiom
-- allows it (small integers and dyadic fractions: every partial sum is
-- representable, so the order of the additions does not matter); where
-- they cannot be, the tolerance is derived next to the test.
local luacuda = require "luacuda"
local S = require "spec.support"

local values = S.host_values

-- A deterministic stream of integers in [0, m), the same on every run.
local function lcg(seed)
  local s = seed
  return function(m)
    s = (s * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
    return (s >> 33) % m
  end
end

-- v rounded to the nearest float32, as the device stores it.
local function f32(v)
  return (string.unpack("f", string.pack("f", v)))
end

-- ---------------------------------------------------------------------------
-- 1. Warp-shuffle reduction: lanes fold with __shfl_down_sync, lane 0 of each
-- warp leaves its sum in shared memory, warp 0 folds those; the block sums
-- go to a second pass or straight into a global atomicAdd.
local WARP_REDUCE = [=[
#define FULL_MASK 0xffffffffu

template <typename T>
__device__ __forceinline__ T warp_reduce_sum(T v) {
#pragma unroll
  for (int offset = warpSize / 2; offset > 0; offset >>= 1)
    v += __shfl_down_sync(FULL_MASK, v, offset);
  return v;
}

// The block's sum, valid in thread 0. blockDim.x must be a multiple of 32,
// so that every lane of FULL_MASK exists.
template <typename T>
__device__ T block_reduce_sum(T v) {
  static __shared__ T warp_sums[32];
  const int lane = threadIdx.x % warpSize;
  const int warp = threadIdx.x / warpSize;
  v = warp_reduce_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  const int nwarps = blockDim.x / warpSize;
  v = (threadIdx.x < nwarps) ? warp_sums[lane] : T(0);
  if (warp == 0) v = warp_reduce_sum(v);
  return v;
}

// pass 1 writes one partial per block; pass 2 is the same kernel on the
// partials with a single block
extern "C" __global__ void __launch_bounds__(256)
reduce_partials(const float *__restrict__ in, float *__restrict__ partials, int n) {
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    sum += in[i];
  sum = block_reduce_sum(sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// one pass: each block adds its sum to *total
extern "C" __global__ void __launch_bounds__(256)
reduce_atomic(const int *__restrict__ in, int *total, int n) {
  int sum = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    sum += in[i];
  sum = block_reduce_sum(sum);
  if (threadIdx.x == 0) atomicAdd(total, sum);
}
]=]

-- ---------------------------------------------------------------------------
-- 2. Cooperative groups: cg::reduce over warp tiles, a hand-rolled fold with
-- thread_block_tile<16>::shfl_down, and a kernel that needs the whole grid's
-- sum before it can go on (this_grid().sync(), a cooperative launch).
local COOP_REDUCE = [=[
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

// sum of squares: cg::reduce per warp, the warps' sums into a shared
// accumulator, the blocks' into *out
extern "C" __global__ void sum_squares(const int *__restrict__ x, unsigned long long *out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  __shared__ unsigned long long block_sum;
  if (block.thread_rank() == 0) block_sum = 0;
  block.sync();
  unsigned long long v = 0;
  for (int i = blockIdx.x * block.size() + block.thread_rank(); i < n; i += gridDim.x * block.size())
    v += (unsigned long long)((long long)x[i] * x[i]);
  v = cg::reduce(warp, v, cg::plus<unsigned long long>());
  if (warp.thread_rank() == 0) atomicAdd(&block_sum, v);
  block.sync();
  if (block.thread_rank() == 0) atomicAdd(out, block_sum);
}

template <typename Tile, typename T>
__device__ T tile_sum(const Tile &tile, T v) {
  for (unsigned offset = tile.size() / 2; offset > 0; offset /= 2)
    v += tile.shfl_down(v, offset);
  return v;          // the tile's sum, in its rank 0
}

// a dot product folded in tiles of 16 threads, each tile's sum added to *out
extern "C" __global__ void dot_tiles(const double *__restrict__ a, const double *__restrict__ b,
                                     double *out, int n) {
  cg::thread_block_tile<16> tile = cg::tiled_partition<16>(cg::this_thread_block());
  double v = 0.0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    v += a[i] * b[i];
  v = tile_sum(tile, v);
  if (tile.thread_rank() == 0) atomicAdd(out, v);
}

// x minus its mean, in one launch: each block's partial sum, a grid
// barrier, then every block reads all the partials
extern "C" __global__ void center(float *x, float *partials, int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  __shared__ float warp_sums[32];
  __shared__ float mean;
  float v = 0.0f;
  for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)n; i += grid.size())
    v += x[i];
  v = cg::reduce(warp, v, cg::plus<float>());
  if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = v;
  block.sync();
  if (block.thread_rank() == 0) {
    float s = 0.0f;
    for (unsigned w = 0; w < warp.meta_group_size(); w++) s += warp_sums[w];
    partials[grid.block_rank()] = s;
  }
  grid.sync();
  if (block.thread_rank() == 0) {
    float s = 0.0f;
    for (unsigned long long b = 0; b < grid.num_blocks(); b++) s += partials[b];
    mean = s / n;
  }
  block.sync();
  for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)n; i += grid.size())
    x[i] -= mean;
}
]=]

-- ---------------------------------------------------------------------------
-- 3. Scans: Blelloch's work-efficient exclusive scan in dynamic shared memory
-- (padded against bank conflicts), Hillis-Steele's inclusive scan with a
-- double buffer, and the pass that adds each block's offset.
local SCAN = [=[
#define LOG_NUM_BANKS 5
#define PAD(i) ((i) >> LOG_NUM_BANKS)

// exclusive scan of 2 * blockDim.x elements per block; the block's total
// goes to block_sums (when given). Shared memory: the elements and their pads.
template <typename T>
__global__ void blelloch_scan(const T *__restrict__ in, T *__restrict__ out,
                              T *__restrict__ block_sums, int n) {
  extern __shared__ unsigned char smem_bytes[];
  T *temp = reinterpret_cast<T *>(smem_bytes);
  const int tid = threadIdx.x;
  const int m = 2 * blockDim.x;
  const int base = blockIdx.x * m;
  const int ai = tid, bi = tid + blockDim.x;
  temp[ai + PAD(ai)] = base + ai < n ? in[base + ai] : T(0);
  temp[bi + PAD(bi)] = base + bi < n ? in[base + bi] : T(0);

  int offset = 1;
  for (int d = m >> 1; d > 0; d >>= 1) {          // up-sweep
    __syncthreads();
    if (tid < d) {
      int a = offset * (2 * tid + 1) - 1, b = offset * (2 * tid + 2) - 1;
      temp[b + PAD(b)] += temp[a + PAD(a)];
    }
    offset <<= 1;
  }
  if (tid == 0) {
    if (block_sums) block_sums[blockIdx.x] = temp[m - 1 + PAD(m - 1)];
    temp[m - 1 + PAD(m - 1)] = T(0);
  }
  for (int d = 1; d < m; d <<= 1) {               // down-sweep
    offset >>= 1;
    __syncthreads();
    if (tid < d) {
      int a = offset * (2 * tid + 1) - 1, b = offset * (2 * tid + 2) - 1;
      T t = temp[a + PAD(a)];
      temp[a + PAD(a)] = temp[b + PAD(b)];
      temp[b + PAD(b)] += t;
    }
  }
  __syncthreads();
  if (base + ai < n) out[base + ai] = temp[ai + PAD(ai)];
  if (base + bi < n) out[base + bi] = temp[bi + PAD(bi)];
}

// inclusive scan of blockDim.x elements per block, ping-ponging between the
// two halves of shared memory; the block's total goes to block_sums
template <typename T>
__global__ void hillis_steele_scan(const T *__restrict__ in, T *__restrict__ out,
                                   T *__restrict__ block_sums, int n) {
  extern __shared__ unsigned char smem_bytes[];
  T *buf = reinterpret_cast<T *>(smem_bytes);
  const int tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
  int pout = 0, pin = 1;
  buf[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  for (int offset = 1; offset < blockDim.x; offset <<= 1) {
    pout = 1 - pout;
    pin = 1 - pout;
    T v = buf[pin * blockDim.x + tid];
    if (tid >= offset) v += buf[pin * blockDim.x + tid - offset];
    buf[pout * blockDim.x + tid] = v;
    __syncthreads();
  }
  if (i < n) out[i] = buf[pout * blockDim.x + tid];
  if (block_sums && tid == blockDim.x - 1) block_sums[blockIdx.x] = buf[pout * blockDim.x + tid];
}

// the second pass: each element of segment s gets offsets[s - shift] added
template <typename T>
__global__ void add_offsets(T *__restrict__ data, const T *__restrict__ offsets,
                            int n, int segment, int shift) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    int s = i / segment - shift;
    if (s >= 0) data[i] += offsets[s];
  }
}
]=]

-- ---------------------------------------------------------------------------
-- 4. Histogram: each block counts into a shared histogram with shared-memory
-- atomics, then merges it into the global one with global atomics.
local HISTOGRAM = [=[
#define NUM_BINS 256

extern "C" __global__ void histogram256(const unsigned char *__restrict__ data, size_t n,
                                        unsigned int *__restrict__ hist) {
  __shared__ unsigned int local_hist[NUM_BINS];
  for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) local_hist[b] = 0;
  __syncthreads();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    atomicAdd(&local_hist[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) {
    unsigned int c = local_hist[b];
    if (c) atomicAdd(&hist[b], c);
  }
}
]=]

-- ---------------------------------------------------------------------------
-- 5. Transpose through a shared tile padded by one column, so that reading
-- a column of the tile touches 32 different banks.
local TRANSPOSE = [=[
#define TILE_DIM 32
#define BLOCK_ROWS 8

// out (width x height) = in (height x width) transposed; a block of
// TILE_DIM x BLOCK_ROWS threads moves one TILE_DIM x TILE_DIM tile
extern "C" __global__ void transpose(float *__restrict__ out, const float *__restrict__ in,
                                     int width, int height) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;          // the block's tile, transposed
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
]=]

-- ---------------------------------------------------------------------------
-- 6. Half-precision dot product: pairs of halves as __half2, multiplied and
-- accumulated with __hfma2, converted to float only at the end.
local HALF_DOT = [=[
#include <cuda_fp16.h>

extern "C" __global__ void hdot(const __half *__restrict__ a, const __half *__restrict__ b,
                                float *__restrict__ result, int n) {
  const __half2 *a2 = reinterpret_cast<const __half2 *>(a);
  const __half2 *b2 = reinterpret_cast<const __half2 *>(b);
  __half2 acc = __float2half2_rn(0.0f);
  const int pairs = n / 2;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < pairs; i += gridDim.x * blockDim.x)
    acc = __hfma2(a2[i], b2[i], acc);
  float sum = __low2float(acc) + __high2float(acc);
  if ((n & 1) && blockIdx.x == 0 && threadIdx.x == 0)   // the odd element out
    sum += __half2float(a[n - 1]) * __half2float(b[n - 1]);
  for (int offset = 16; offset > 0; offset /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(result, sum);
}
]=]

-- ---------------------------------------------------------------------------
-- 7. A templated tiled matrix multiply, instantiated for two tile sizes and
-- two element types through name expressions.
local MATMUL = [=[
// C (M x N) = A (M x K) B (K x N), row-major; blocks of TILE x TILE threads
template <int TILE, typename T>
__global__ void __launch_bounds__(TILE * TILE)
matmul_tiled(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C,
             int M, int N, int K) {
  __shared__ T As[TILE][TILE];
  __shared__ T Bs[TILE][TILE];
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  T acc = T(0);
  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
    const int ka = t * TILE + threadIdx.x, kb = t * TILE + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[row * K + ka] : T(0);
    Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[kb * N + col] : T(0);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
]=]

-- ---------------------------------------------------------------------------
-- 8. Structs: an affine map passed by value to transform float2 points, and
-- an array of particles (a record dtype) advanced by an integrator whose
-- parameters are a struct with a float3 member.
local STRUCTS = [=[
struct Affine2D {
  float a, b, c, d;   // the linear part, row-major
  float2 t;           // the translation
};

__device__ __forceinline__ float2 apply(const Affine2D &m, float2 p) {
  return make_float2(m.a * p.x + m.b * p.y + m.t.x, m.c * p.x + m.d * p.y + m.t.y);
}

extern "C" __global__ void transform_points(const float2 *__restrict__ in, float2 *__restrict__ out,
                                            Affine2D m, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = apply(m, in[i]);
}

struct Particle {
  float3 pos;
  float3 vel;
  float mass;
  int alive;
};

struct StepParams {
  float dt;
  float3 gravity;
  float drag;         // force -drag * vel
};

__device__ __forceinline__ float3 operator+(float3 a, float3 b) { return make_float3(a.x + b.x, a.y + b.y, a.z + b.z); }
__device__ __forceinline__ float3 operator*(float s, float3 v) { return make_float3(s * v.x, s * v.y, s * v.z); }

// semi-implicit Euler, steps times; dead particles stay where they are
extern "C" __global__ void integrate(Particle *__restrict__ particles, int n, StepParams p, int steps) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || !particles[i].alive) return;
  Particle q = particles[i];
  for (int s = 0; s < steps; ++s) {
    float3 acc = p.gravity + (-p.drag / q.mass) * q.vel;
    q.vel = q.vel + p.dt * acc;
    q.pos = q.pos + p.dt * q.vel;
  }
  particles[i] = q;
}
]=]

-- ---------------------------------------------------------------------------
-- 9a. A 1-d stencil whose block loads its tile and the halos on each side into
-- dynamic shared memory; the weights in __constant__ memory.
local STENCIL = [=[
#define RADIUS 3
#define WIDTH (2 * RADIUS + 1)

__constant__ float weights[WIDTH];

enum class Boundary : int { Zero, Clamp };     // what lies outside the array

__device__ __forceinline__ float load(const float *in, int i, int n, Boundary b) {
  if (i >= 0 && i < n) return in[i];
  if (b == Boundary::Zero) return 0.0f;
  return in[i < 0 ? 0 : n - 1];
}

extern "C" __global__ void stencil_1d(const float *__restrict__ in, float *__restrict__ out, int n,
                                      Boundary boundary) {
  extern __shared__ float tile[];                 // blockDim.x + 2 * RADIUS
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  const int l = threadIdx.x + RADIUS;
  tile[l] = load(in, g, n, boundary);            // past n: the last block's right halo
  if (threadIdx.x < RADIUS) {                     // the halos
    tile[l - RADIUS] = load(in, g - RADIUS, n, boundary);
    tile[l + blockDim.x] = load(in, g + blockDim.x, n, boundary);
  }
  __syncthreads();
  if (g < n) {
    float r = 0.0f;
#pragma unroll
    for (int k = -RADIUS; k <= RADIUS; ++k) r += weights[k + RADIUS] * tile[l + k];
    out[g] = r;
  }
}
]=]

-- ---------------------------------------------------------------------------
-- 9b. Stream compaction with warp-aggregated atomics: a warp votes, its first
-- voter reserves room for all with one atomicAdd, and each lane finds its
-- slot from the population count of the voters below it.
local COMPACT = [=[
__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31; }

extern "C" __global__ void keep_positive(const int *__restrict__ in, int *__restrict__ out,
                                         unsigned *__restrict__ count, int n) {
  // every lane runs the same iterations, so the whole warp takes part in each vote
  for (int base = blockIdx.x * blockDim.x; base < n; base += gridDim.x * blockDim.x) {
    const int i = base + threadIdx.x;
    const bool keep = i < n && in[i] > 0;
    const unsigned voters = __ballot_sync(0xffffffffu, keep);
    const int leader = __ffs(voters) - 1;
    unsigned first = 0;
    if (lane_id() == leader) first = atomicAdd(count, __popc(voters));
    first = __shfl_sync(0xffffffffu, first, leader < 0 ? 0 : leader);
    if (keep) out[first + __popc(voters & ((1u << lane_id()) - 1))] = in[i];
  }
}
]=]

-- ---------------------------------------------------------------------------
-- 9c. Bitonic sort of each block's segment in shared memory; the segment of
-- the tail is padded with the largest key.
local BITONIC = [=[
#define SEGMENT 256
#define KEY_MAX 0x7fffffff

__device__ __forceinline__ void compare_swap(int &a, int &b, bool up) {
  if ((a > b) == up) { int t = a; a = b; b = t; }
}

// sorts keys[s * SEGMENT, (s + 1) * SEGMENT) ascending, s = blockIdx.x;
// SEGMENT / 2 threads each compare one pair per step
extern "C" __global__ void __launch_bounds__(SEGMENT / 2)
bitonic_sort_segments(int *keys, int n) {
  __shared__ int s[SEGMENT];
  const int base = blockIdx.x * SEGMENT;
  for (int i = threadIdx.x; i < SEGMENT; i += blockDim.x)
    s[i] = base + i < n ? keys[base + i] : KEY_MAX;
  __syncthreads();
  for (int size = 2; size <= SEGMENT; size <<= 1) {
    for (int stride = size / 2; stride > 0; stride >>= 1) {
      const int t = threadIdx.x;
      const int lo = 2 * t - (t & (stride - 1));    // the pair (lo, lo + stride)
      const bool up = (lo & size) == 0;
      compare_swap(s[lo], s[lo + stride], up);
      __syncthreads();
    }
  }
  for (int i = threadIdx.x; i < SEGMENT; i += blockDim.x)
    if (base + i < n) keys[base + i] = s[i];
}
]=]

-- ---------------------------------------------------------------------------
-- 9d. The reduction of NVIDIA's samples: a SharedMemory<T> helper that gives
-- the dynamic shared memory a type inside a template, two elements added per
-- thread while loading, a tree in shared memory down to one warp, and that
-- warp finished with shuffles.
local TEMPLATE_REDUCE = [=[
template <class T>
struct SharedMemory {
  __device__ inline operator T *() {
    extern __shared__ int __smem[];
    return (T *)__smem;
  }
  __device__ inline operator const T *() const {
    extern __shared__ int __smem[];
    return (T *)__smem;
  }
};

template <class T, unsigned int blockSize>
__global__ void __launch_bounds__(blockSize, 2)
reduce_twice(const T *__restrict__ g_idata, T *__restrict__ g_odata, unsigned int n) {
  T *sdata = SharedMemory<T>();
  const unsigned int tid = threadIdx.x;
  const unsigned int gridSize = blockSize * 2 * gridDim.x;
  T sum = 0;
  for (unsigned int i = blockIdx.x * blockSize * 2 + tid; i < n; i += gridSize) {
    sum += g_idata[i];
    if (i + blockSize < n) sum += g_idata[i + blockSize];
  }
  sdata[tid] = sum;
  __syncthreads();
#pragma unroll
  for (unsigned int s = blockSize / 2; s >= 32; s >>= 1) {
    if (tid < s) sdata[tid] = sum = sum + sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (tid == 0) g_odata[blockIdx.x] = sum;
  }
}
]=]

-- ---------------------------------------------------------------------------
-- 9e. Row softmax, one warp a row: the row's maximum and sum by xor
-- butterflies (every lane ends with the result), each lane a strided share.
local SOFTMAX = [=[
#define WARP 32

__device__ __forceinline__ float warp_max(float v) {
  for (int mask = WARP / 2; mask > 0; mask >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, mask));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int mask = WARP / 2; mask > 0; mask >>= 1) v += __shfl_xor_sync(0xffffffffu, v, mask);
  return v;
}

extern "C" __global__ void softmax_rows(const float *__restrict__ x, float *__restrict__ y,
                                        int rows, int cols) {
  const int row = (blockIdx.x * blockDim.x + threadIdx.x) / WARP;
  const int lane = threadIdx.x % WARP;
  if (row >= rows) return;                       // whole warps: rows are warp-uniform
  const float *in = x + (size_t)row * cols;
  float m = -INFINITY;
  for (int c = lane; c < cols; c += WARP) m = fmaxf(m, in[c]);
  m = warp_max(m);
  float s = 0.0f;
  for (int c = lane; c < cols; c += WARP) s += expf(in[c] - m);
  s = warp_sum(s);
  const float inv = 1.0f / s;
  for (int c = lane; c < cols; c += WARP) y[(size_t)row * cols + c] = expf(in[c] - m) * inv;
}
]=]

-- ---------------------------------------------------------------------------
-- 9f. Aggregation by key: the lanes of a warp that share a key form a group
-- (cg::labeled_partition), reduce their values, and only the group's first
-- lane touches global memory; plus a float maximum by an atomicCAS loop.
local KEYED = [=[
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void sum_by_key(const int *__restrict__ keys, const int *__restrict__ vals,
                                      int *__restrict__ sums, int n) {
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  for (int base = blockIdx.x * blockDim.x; base < n; base += gridDim.x * blockDim.x) {
    const int i = base + threadIdx.x;
    const unsigned key = i < n ? (unsigned)keys[i] : ~0u;     // the lanes past n group apart
    cg::coalesced_group same = cg::labeled_partition(warp, key);
    const int total = cg::reduce(same, i < n ? vals[i] : 0, cg::plus<int>());
    if (same.thread_rank() == 0 && key != ~0u) atomicAdd(&sums[key], total);
  }
}

__device__ float atomic_max_float(float *addr, float value) {
  int *bits = reinterpret_cast<int *>(addr);
  int old = *bits, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= value) break;
    old = atomicCAS(bits, assumed, __float_as_int(value));
  } while (assumed != old);
  return __int_as_float(old);
}

extern "C" __global__ void max_by_key(const int *__restrict__ keys, const float *__restrict__ vals,
                                      float *__restrict__ maxima, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomic_max_float(&maxima[keys[i]], vals[i]);
}
]=]

-- ---------------------------------------------------------------------------
-- 9g. A 2-d five-point Jacobi step: a block loads its tile and a one-cell
-- frame into a 2-d shared array; the boundary of the grid is kept as is.
local JACOBI = [=[
#define BX 16
#define BY 8

extern "C" __global__ void __launch_bounds__(BX * BY)
jacobi_step(const double *__restrict__ u, double *__restrict__ out, int nx, int ny) {
  __shared__ double s[BY + 2][BX + 2];
  const int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y;
  const int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
  const bool inside = x < nx && y < ny;
  if (inside) {
    s[ty][tx] = u[y * nx + x];
    if (threadIdx.x == 0 && x > 0) s[ty][0] = u[y * nx + x - 1];
    if ((threadIdx.x == BX - 1 || x == nx - 1) && x + 1 < nx) s[ty][tx + 1] = u[y * nx + x + 1];
    if (threadIdx.y == 0 && y > 0) s[0][tx] = u[(y - 1) * nx + x];
    if ((threadIdx.y == BY - 1 || y == ny - 1) && y + 1 < ny) s[ty + 1][tx] = u[(y + 1) * nx + x];
  }
  __syncthreads();
  if (!inside) return;
  if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
    out[y * nx + x] = s[ty][tx];
  } else {
    out[y * nx + x] = 0.25 * (s[ty][tx - 1] + s[ty][tx + 1] + s[ty - 1][tx] + s[ty + 1][tx]);
  }
}
]=]

-- ---------------------------------------------------------------------------
-- 9h. One-pass reduction of the "threadFenceReduction" kind: each block
-- writes its partial, fences, and takes a ticket; the block that takes the
-- last ticket sums the partials and resets the counter for the next launch.
local LAST_BLOCK = [=[
__device__ unsigned int retired_blocks = 0;

extern "C" __global__ void sum_one_pass(const float *__restrict__ x, volatile float *partials,
                                        float *__restrict__ out, unsigned int n) {
  __shared__ float warp_sums[32];
  __shared__ bool last_block;
  float v = 0.0f;
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    v += x[i];
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (unsigned int w = 0; w < blockDim.x / 32; ++w) s += warp_sums[w];
    partials[blockIdx.x] = s;
    __threadfence();                       // the partial is visible before the ticket
    const unsigned int ticket = atomicInc(&retired_blocks, gridDim.x);
    last_block = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (last_block && threadIdx.x == 0) {
    float s = 0.0f;
    for (unsigned int b = 0; b < gridDim.x; ++b) s += partials[b];
    *out = s;
    retired_blocks = 0;
  }
}
]=]

-- ---------------------------------------------------------------------------
-- 9i. Element-wise maps as C++ libraries write them: a kernel template over
-- a functor passed by value, and a lambda inside a kernel.
local FUNCTORS = [=[
struct Saxpy {
  float a;
  __device__ float operator()(float x, float y) const { return a * x + y; }
};

struct ClampedSum {
  float lo, hi;
  __device__ float operator()(float x, float y) const { return fminf(fmaxf(x + y, lo), hi); }
};

template <typename BinaryOp>
__global__ void zip_with(const float *__restrict__ x, const float *__restrict__ y,
                         float *__restrict__ out, int n, BinaryOp op) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = op(x[i], y[i]);
}

extern "C" __global__ void horner(const float *__restrict__ x, float *__restrict__ y, int n) {
  auto poly = [](float t) { return ((0.5f * t - 3.0f) * t + 1.0f) * t - 5.0f; };
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = poly(x[i]);
}
]=]

-- ---------------------------------------------------------------------------
-- 9j. Vector types in memory: an RGBA image (uchar4) to grey on a 2-d grid,
-- and a saxpy over float4 loads through __ldg with a scalar tail.
local VECTORS = [=[
extern "C" __global__ void rgba_to_grey(const uchar4 *__restrict__ rgba, unsigned char *__restrict__ grey,
                                        int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  const uchar4 p = rgba[y * width + x];
  grey[y * width + x] = (unsigned char)((77u * p.x + 150u * p.y + 29u * p.z + 128u) >> 8);
}

extern "C" __global__ void saxpy_vec4(int n, float a, const float *__restrict__ const x,
                                      float *__restrict__ y) {
  const int stride = gridDim.x * blockDim.x;
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  float4 *y4 = reinterpret_cast<float4 *>(y);
  for (int i = tid; i < n / 4; i += stride) {
    const float4 xv = __ldg(&x4[i]);
    float4 yv = y4[i];
    yv.x += a * xv.x; yv.y += a * xv.y; yv.z += a * xv.z; yv.w += a * xv.w;
    y4[i] = yv;
  }
  for (int i = n / 4 * 4 + tid; i < n; i += stride) y[i] += a * __ldg(&x[i]);
}
]=]

-- ---------------------------------------------------------------------------
-- 9k. A block scan built from warp scans (__shfl_up_sync), the warps' totals
-- scanned by the first warp; and the warp's exclusive scan by cooperative
-- groups, for comparison.
local WARP_SCAN = [=[
#include <cooperative_groups.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;

__device__ __forceinline__ int warp_inclusive_scan(int v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int up = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += up;
  }
  return v;
}

extern "C" __global__ void block_scan(const int *__restrict__ in, int *__restrict__ inclusive,
                                      int *__restrict__ warp_exclusive, int n) {
  __shared__ int warp_totals[32];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int x = i < n ? in[i] : 0;
  int v = warp_inclusive_scan(x);
  if (lane == 31) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const int nwarps = blockDim.x >> 5;
    int t = lane < nwarps ? warp_totals[lane] : 0;
    t = warp_inclusive_scan(t);
    if (lane < nwarps) warp_totals[lane] = t;
  }
  __syncthreads();
  if (warp > 0) v += warp_totals[warp - 1];
  if (i < n) inclusive[i] = v;
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
  const int e = cg::exclusive_scan(tile, x);
  if (i < n) warp_exclusive[i] = e;
}
]=]

-- ---------------------------------------------------------------------------
-- 9l. All-pairs n-body accelerations: each block stages a tile of bodies
-- (float4: position and mass) in dynamic shared memory; rsqrtf.
local NBODY = [=[
__device__ __forceinline__ float3 body_body(float4 me, float4 other, float3 a, float eps2) {
  const float3 r = make_float3(other.x - me.x, other.y - me.y, other.z - me.z);
  const float d2 = r.x * r.x + r.y * r.y + r.z * r.z + eps2;
  const float inv = rsqrtf(d2);
  const float s = other.w * inv * inv * inv;
  a.x += r.x * s;
  a.y += r.y * s;
  a.z += r.z * s;
  return a;
}

extern "C" __global__ void accelerations(const float4 *__restrict__ bodies, float3 *__restrict__ acc,
                                         int n, float eps2) {
  extern __shared__ float4 tile[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float4 me = i < n ? bodies[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float3 a = make_float3(0.0f, 0.0f, 0.0f);
  for (int start = 0; start < n; start += blockDim.x) {
    const int j = start + threadIdx.x;
    tile[threadIdx.x] = j < n ? bodies[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    __syncthreads();
#pragma unroll 4
    for (int k = 0; k < blockDim.x; ++k) a = body_body(me, tile[k], a, eps2);   // padding has no mass
    __syncthreads();
  }
  if (i < n) acc[i] = a;
}
]=]

-- ---------------------------------------------------------------------------
-- 9m. Sparse matrix-vector product, CSR "vector" kernel: a group of LANES
-- threads per row (a template parameter), the row folded by shuffles of
-- width LANES; x read through __ldg.
local SPMV = [=[
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

template <int LANES>
__global__ void __launch_bounds__(128)
spmv_csr_vector(int rows, const int *__restrict__ row_ptr, const int *__restrict__ col_idx,
                const double *__restrict__ vals, const double *__restrict__ x, double *__restrict__ y) {
  static_assert((LANES & (LANES - 1)) == 0 && LANES <= 32, "LANES: a power of 2 up to 32");
  cg::thread_block_tile<LANES> group = cg::tiled_partition<LANES>(cg::this_thread_block());
  const int row = (blockIdx.x * blockDim.x + threadIdx.x) / LANES;
  const int lane = group.thread_rank();
  double sum = 0.0;
  if (row < rows)                                 // every lane still takes part in the shuffles
    for (int k = row_ptr[row] + lane; k < row_ptr[row + 1]; k += LANES)
      sum += vals[k] * __ldg(&x[col_idx[k]]);
#pragma unroll
  for (int offset = LANES / 2; offset > 0; offset /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, offset, LANES);
  if (lane == 0 && row < rows) y[row] = sum;
}
]=]

-- ---------------------------------------------------------------------------
-- 9n. A naive discrete Fourier transform in cuComplex: one output a thread,
-- twiddles from sincospif.
local DFT = [=[
#include <cuComplex.h>

extern "C" __global__ void dft(const cuFloatComplex *__restrict__ in, cuFloatComplex *__restrict__ out,
                               int n) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  cuFloatComplex acc = make_cuFloatComplex(0.0f, 0.0f);
  for (int t = 0; t < n; ++t) {
    float s, c;
    sincospif(-2.0f * (float)((k * t) % n) / n, &s, &c);   // exp(-2 pi i k t / n)
    acc = cuCaddf(acc, cuCmulf(in[t], make_cuFloatComplex(c, s)));
  }
  out[k] = acc;
}
]=]

-- ---------------------------------------------------------------------------
-- 9o. Arg-max of each block: values and indices carved from one dynamic
-- shared buffer, a tree down to a warp, then the warp in lockstep with
-- __syncwarp between its reads and its writes.
local ARGMAX = [=[
extern "C" __global__ void argmax_blocks(const float *__restrict__ x, float *__restrict__ best,
                                         int *__restrict__ where, int n) {
  extern __shared__ __align__(16) unsigned char smem[];
  float *vals = reinterpret_cast<float *>(smem);
  int *idx = reinterpret_cast<int *>(vals + blockDim.x);
  const int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  vals[t] = i < n ? x[i] : -INFINITY;
  idx[t] = i;
  __syncthreads();
  for (int s = blockDim.x / 2; s >= 32; s >>= 1) {
    if (t < s && vals[t + s] > vals[t]) {
      vals[t] = vals[t + s];
      idx[t] = idx[t + s];
    }
    __syncthreads();
  }
  if (t < 32) {
    for (int s = 16; s > 0; s >>= 1) {
      const float v = vals[t + s];
      const int j = idx[t + s];
      __syncwarp();                              // every read before any write
      if (v > vals[t]) {
        vals[t] = v;
        idx[t] = j;
      }
      __syncwarp();
    }
    if (t == 0) {
      best[blockIdx.x] = vals[0];
      where[blockIdx.x] = idx[0];
    }
  }
}
]=]

describe("a corpus of kernels as CUDA projects write them", function()
  it("sums with warp shuffles, a second pass and global atomics", function()
    local m = luacuda.compile(WARP_REDUCE, {name = "warp_reduce.cu"})
    local n = 10007
    local rand = lcg(1)
    local xs, ints, want, want_int = {}, {}, 0, 0
    for i = 1, n do
      xs[i] = (rand(201) - 100) / 8         -- eighths: every partial sum is exact
      ints[i] = rand(2001) - 1000
      want, want_int = want + xs[i], want_int + ints[i]
    end
    local x = luacuda.to_device(xs, {dtype = "float32"})
    for _, cfg in ipairs({{13, 256}, {5, 96}, {1, 32}}) do
      local grid, block = cfg[1], cfg[2]
      local partials = luacuda.device_array(grid, "float32")
      local total = luacuda.device_array(1, "float32")
      m.reduce_partials[{grid, block}](x, partials, n)
      local blocks = values(partials)
      -- each block's share of the grid-stride loop
      for b = 0, grid - 1 do
        local s = 0
        for i = b * block, n - 1, grid * block do
          for j = i, math.min(i + block, n) - 1 do s = s + xs[j + 1] end
        end
        assert.equal(s, blocks[b + 1], ("block %d of %d x %d"):format(b, grid, block))
      end
      m.reduce_partials[{1, 64}](partials, total, grid)
      assert.same({want}, values(total), grid .. " x " .. block)

      local itotal = luacuda.to_device({0}, {dtype = "int32"})
      m.reduce_atomic[{grid, block}](luacuda.to_device(ints, {dtype = "int32"}), itotal, n)
      assert.same({want_int}, values(itotal), grid .. " x " .. block)
    end
  end)

  it("reduces with cooperative groups: cg::reduce, tile shuffles and a grid barrier", function()
    local m = luacuda.compile(COOP_REDUCE, {name = "coop_reduce.cu"})
    local n = 7777
    local rand = lcg(2)
    local ints, as, bs = {}, {}, {}
    local want_sq, want_dot = 0, 0
    for i = 1, n do
      ints[i] = rand(60001) - 30000
      as[i], bs[i] = (rand(64) - 32) / 4, (rand(64) - 32) / 16
      want_sq, want_dot = want_sq + ints[i] * ints[i], want_dot + as[i] * bs[i]
    end
    local out = luacuda.to_device({0}, {dtype = "uint64"})
    m.sum_squares[{7, 160}](luacuda.to_device(ints, {dtype = "int32"}), out, n)
    assert.same({want_sq}, values(out))

    local dot = luacuda.to_device({0}, {dtype = "float64"})
    m.dot_tiles[{6, 112}](luacuda.to_device(as, {dtype = "float64"}),
                          luacuda.to_device(bs, {dtype = "float64"}), dot, n)
    assert.same({want_dot}, values(dot))

    -- the mean of values in sixteenths is exact once summed; dividing by n
    -- and subtracting round once each, as in the float32 arithmetic below
    local xs, sum = {}, 0
    for i = 1, n do xs[i] = (rand(4001) - 2000) / 16; sum = sum + xs[i] end
    local mean = f32(sum / n)
    for _, cfg in ipairs({{5, 128}, {3, 96}}) do
      local grid, block = cfg[1], cfg[2]
      local x = luacuda.to_device(xs, {dtype = "float32"})
      local partials = luacuda.device_array(grid, "float32")
      m.center:launch({grid = grid, block = block, cooperative = true}, x, partials, n)
      local got = values(x)
      for i = 1, n do
        assert.equal(f32(xs[i] - mean), got[i], ("element %d, %d x %d"):format(i, grid, block))
      end
    end
  end)

  it("scans: Blelloch exclusive and Hillis-Steele inclusive, over several blocks", function()
    local m = luacuda.compile(SCAN, {name = "scan.cu", name_expressions = {
      "blelloch_scan<int>", "hillis_steele_scan<float>", "add_offsets<int>", "add_offsets<float>"}})
    local rand = lcg(3)
    -- exclusive, 64 threads a block (128 elements): 1000 elements make 8 blocks
    local n, threads = 1000, 64
    local xs = {}
    for i = 1, n do xs[i] = rand(100) - 30 end
    local per_block = 2 * threads
    local nblocks = (n + per_block - 1) // per_block
    local shared = (per_block + per_block // 32) * 4
    local x = luacuda.to_device(xs, {dtype = "int32"})
    local out = luacuda.device_array(n, "int32")
    local sums = luacuda.device_array(nblocks, "int32")
    local scanned = luacuda.device_array(nblocks, "int32")
    local blelloch = m["blelloch_scan<int>"]
    blelloch:launch({grid = nblocks, block = threads, shared = shared}, x, out, sums, n)
    blelloch:launch({grid = 1, block = threads, shared = shared}, sums, scanned, luacuda.null, nblocks)
    m["add_offsets<int>"][{3, 128}](out, scanned, n, per_block, 0)
    local want, run = {}, 0
    for i = 1, n do want[i] = run; run = run + xs[i] end
    assert.same(want, values(out))

    -- inclusive, 96 threads a block: 1000 elements make 11 blocks
    threads = 96
    nblocks = (n + threads - 1) // threads
    local fs = {}
    for i = 1, n do fs[i] = (rand(33) - 16) / 4 end
    local f = luacuda.to_device(fs, {dtype = "float32"})
    local fout = luacuda.device_array(n, "float32")
    local fsums = luacuda.device_array(nblocks, "float32")
    local fscanned = luacuda.device_array(nblocks, "float32")
    local hillis_steele = m["hillis_steele_scan<float>"]
    hillis_steele:launch({grid = nblocks, block = threads, shared = 2 * threads * 4}, f, fout, fsums, n)
    -- one block of 32 threads scans the 11 totals (the rest of it pads)
    hillis_steele:launch({grid = 1, block = 32, shared = 2 * 32 * 4}, fsums, fscanned, luacuda.null,
                         nblocks)
    m["add_offsets<float>"][{2, 256}](fout, fscanned, n, threads, 1)
    run = 0
    for i = 1, n do run = run + fs[i]; want[i] = run end
    assert.same(want, values(fout))
  end)

  it("counts a histogram in shared memory with shared and global atomics", function()
    local m = luacuda.compile(HISTOGRAM, {name = "histogram.cu"})
    local rand = lcg(4)
    local n = 20011
    local bytes, want = {}, {}
    for b = 1, 256 do want[b] = 0 end
    for i = 1, n do
      -- skewed: a quarter of the values land in bin 7, so that the atomics collide
      local v = rand(4) == 0 and 7 or rand(256)
      bytes[i] = v
      want[v + 1] = want[v + 1] + 1
    end
    local data = luacuda.to_device(bytes, {dtype = "uint8"})
    for _, cfg in ipairs({{9, 192}, {4, 512}}) do
      local hist = luacuda.to_device(luacuda.zeros(256, "uint32"))
      m.histogram256[{cfg[1], cfg[2]}](data, n, hist)
      assert.same(want, values(hist), cfg[1] .. " x " .. cfg[2])
    end
  end)

  it("transposes a non-square matrix through a padded shared tile", function()
    local m = luacuda.compile(TRANSPOSE, {name = "transpose.cu"})
    local height, width = 70, 45
    local rows = {}
    for r = 1, height do
      rows[r] = {}
      for c = 1, width do rows[r][c] = r * 1000 + c end
    end
    local a = luacuda.to_device(rows, {dtype = "float32"})
    local t = luacuda.device_array({width, height}, "float32")
    t:fill(-1)
    m.transpose[{{(width + 31) // 32, (height + 31) // 32}, {32, 8}}](t, a, width, height)
    local got = values(t)
    for c = 1, width do
      for r = 1, height do
        assert.equal(rows[r][c], got[c][r], ("element (%d, %d)"):format(c, r))
      end
    end
  end)

  it("takes a half-precision dot product with __half2 and __hfma2", function()
    local m = luacuda.compile(HALF_DOT, {name = "hdot.cu"})
    local rand = lcg(5)
    local n = 1001
    local as, bs = {}, {}
    for i = 1, n do
      as[i] = (rand(2001) - 1000) / 1000
      bs[i] = (rand(2001) - 1000) / 1000
    end
    local a = luacuda.to_device(as, {dtype = "float16"})
    local b = luacuda.to_device(bs, {dtype = "float16"})
    -- the inputs as the device holds them, rounded to half
    local ha, hb = values(a), values(b)
    local grid, block = 2, 128
    local result = luacuda.to_device({0}, {dtype = "float32"})
    m.hdot[{grid, block}](a, b, result, n)
    local exact, magnitude = 0, 0
    for i = 1, n do
      exact = exact + ha[i] * hb[i]          -- exact: products of halves have 22 bits
      magnitude = magnitude + math.abs(ha[i] * hb[i])
    end
    -- Each half accumulator folds k = ceil(500 / 256) = 2 products, each fma
    -- rounding once to half (unit roundoff u = 2^-11): its error is at most
    -- gamma_k = k u / (1 - k u) times the sum of its |products|, plus 2^-25
    -- for each result in half's subnormal range. The float32 additions after
    -- (low + high, the odd element, 5 shuffle steps, 8 atomics: 15 in any
    -- chain) add at most gamma_15 with u = 2^-24. Summed over accumulators:
    local function gamma(k, u) return k * u / (1 - k * u) end
    local pairs_per_thread = math.ceil((n // 2) / (grid * block))
    local tolerance = (gamma(pairs_per_thread, 2.0 ^ -11) + gamma(15, 2.0 ^ -24)) * magnitude
                      + n * 2.0 ^ -25
    local got = values(result)[1]
    assert.is_true(math.abs(got - exact) <= tolerance,
                   ("got %.9g, exact %.9g, tolerance %.3g"):format(got, exact, tolerance))
    -- and the tolerance is tight enough to see a lost pair of products
    assert.is_true(tolerance < 0.01 * magnitude, "tolerance " .. tolerance)
  end)

  it("multiplies matrices with a template of tile size and element type", function()
    local names = {"matmul_tiled<16, float>", "matmul_tiled<8, float>",
                   "matmul_tiled<16, double>", "matmul_tiled<8, double>"}
    local m = luacuda.compile(MATMUL, {name = "matmul.cu", name_expressions = names})
    local M, N, K = 37, 23, 29
    local rand = lcg(6)
    local A, B = {}, {}
    for i = 1, M do A[i] = {} for k = 1, K do A[i][k] = rand(9) - 4 end end
    for k = 1, K do B[k] = {} for j = 1, N do B[k][j] = (rand(17) - 8) / 2 end end
    local want = {}
    for i = 1, M do
      want[i] = {}
      for j = 1, N do
        local s = 0
        for k = 1, K do s = s + A[i][k] * B[k][j] end
        want[i][j] = s
      end
    end
    for _, name in ipairs(names) do
      local tile = tonumber(name:match("<(%d+)"))
      local dtype = name:find("double") and "float64" or "float32"
      local C = luacuda.device_array({M, N}, dtype)
      C:fill(0)
      m[name][{{(N + tile - 1) // tile, (M + tile - 1) // tile}, {tile, tile}}](
        luacuda.to_device(A, {dtype = dtype}), luacuda.to_device(B, {dtype = dtype}), C, M, N, K)
      assert.same(want, values(C), name)
    end
  end)

  it("passes structs by value and updates an array of structs", function()
    local m = luacuda.compile(STRUCTS, {name = "structs.cu"})
    -- an affine map of points: the coefficients and coordinates are dyadic,
    -- so every product and sum is exact in float32
    local rand = lcg(7)
    local n = 333
    local pts = {}
    for i = 1, n do pts[i] = {(rand(2001) - 1000) / 64, (rand(2001) - 1000) / 64} end
    local map = {a = 0.5, b = -1.25, c = 2, d = 0.75, t = {x = 3.5, y = -8}}
    local out = luacuda.device_array({n, 2}, "float32")
    m.transform_points[{2, 128}](luacuda.to_device(pts, {dtype = "float32"}), out, map, n)
    local want = {}
    for i, p in ipairs(pts) do
      want[i] = {map.a * p[1] + map.b * p[2] + map.t.x, map.c * p[1] + map.d * p[2] + map.t.y}
    end
    assert.same(want, values(out))

    -- particles: an array of records laid out as struct Particle
    local Particle = luacuda.record {{"pos", "float32", 3}, {"vel", "float32", 3},
                                     {"mass", "float32"}, {"alive", "int32"}}
    local np, steps = 301, 4
    local init = {}
    for i = 1, np do
      init[i] = {pos = {rand(200) - 100, rand(200) - 100, rand(200)},
                 vel = {(rand(81) - 40) / 4, (rand(81) - 40) / 4, (rand(81) - 40) / 4},
                 mass = 0.5 + rand(8), alive = i % 7 == 0 and 0 or 1}
    end
    local p = luacuda.to_device(init, {dtype = Particle})
    local params = {dt = 0.01, gravity = {0, 0, -9.81}, drag = 0.1}
    m.integrate[{(np + 63) // 64, 64}](p, np, params, steps)
    local got = values(p)
    -- The same steps in float32 arithmetic. NVRTC contracts a * b + c into
    -- one fma and the host compiler does not, so each of the 4 x 3 dependent
    -- operations on a component may round differently: a relative error of a
    -- few units of 2^-24 each, well inside 1e-5.
    local dt, drag = f32(params.dt), f32(params.drag)
    local g = {f32(params.gravity[1]), f32(params.gravity[2]), f32(params.gravity[3])}
    for i, q in ipairs(init) do
      local pos, vel, mass = {}, {}, f32(q.mass)
      for c = 1, 3 do pos[c], vel[c] = f32(q.pos[c]), f32(q.vel[c]) end
      if q.alive == 1 then
        for _ = 1, steps do
          local k = f32(-drag / mass)
          for c = 1, 3 do
            local acc = f32(g[c] + f32(k * vel[c]))
            vel[c] = f32(vel[c] + f32(dt * acc))
            pos[c] = f32(pos[c] + f32(dt * vel[c]))
          end
        end
      end
      local r = got[i]
      assert.equal(q.mass, r.mass)
      assert.equal(q.alive, r.alive)
      for c = 1, 3 do
        local what = ("particle %d component %d"):format(i, c)
        if q.alive == 1 then
          assert.near(pos[c], r.pos[c], 1e-5 * math.max(1, math.abs(pos[c])), what)
          assert.near(vel[c], r.vel[c], 1e-5 * math.max(1, math.abs(vel[c])), what)
        else
          assert.same({q.pos[c], q.vel[c]}, {r.pos[c], r.vel[c]}, what)
        end
      end
    end
  end)

  it("applies a stencil with halos in dynamic shared memory, __constant__ weights and an enum mode", function()
    local m = luacuda.compile(STENCIL, {name = "stencil.cu"})
    local w = {0.125, -0.25, 0.5, 1, 0.5, -0.25, 0.125}
    m:get_global("weights")[{}] = luacuda.array(w, "float32")
    local rand = lcg(8)
    local n, block = 1000, 96
    local xs = {}
    for i = 1, n do xs[i] = (rand(513) - 256) / 16 end
    local x = luacuda.to_device(xs, {dtype = "float32"})
    -- the boundary is an enum class parameter: 0 Zero, 1 Clamp
    for boundary = 0, 1 do
      local out = luacuda.device_array(n, "float32")
      m.stencil_1d:launch({grid = (n + block - 1) // block, block = block, shared = (block + 6) * 4},
                          x, out, n, boundary)
      local want = {}
      for i = 1, n do
        local s = 0
        for k = -3, 3 do
          local j = i + k
          local v = xs[j] or (boundary == 1 and xs[math.min(math.max(j, 1), n)]) or 0
          s = s + w[k + 4] * v
        end
        want[i] = s
      end
      assert.same(want, values(out), "boundary " .. boundary)
    end
  end)

  it("compacts with a warp vote, __popc and one atomicAdd per warp", function()
    local m = luacuda.compile(COMPACT, {name = "compact.cu"})
    local rand = lcg(9)
    local n = 5003
    local xs, kept = {}, {}
    for i = 1, n do
      xs[i] = rand(1000) - 600
      if xs[i] > 0 then kept[#kept + 1] = xs[i] end
    end
    local out = luacuda.device_array(n, "int32")
    out:fill(0)
    local count = luacuda.to_device({0}, {dtype = "uint32"})
    m.keep_positive[{6, 128}](luacuda.to_device(xs, {dtype = "int32"}), out, count, n)
    local c = values(count)[1]
    assert.equal(#kept, c)
    -- the order of the warps' slices is the atomics', so compare as multisets
    local got = {table.unpack(values(out), 1, c)}
    table.sort(got)
    table.sort(kept)
    assert.same(kept, got)
    assert.equal(0, values(out)[c + 1])
  end)

  it("sorts segments with a bitonic network in shared memory", function()
    local m = luacuda.compile(BITONIC, {name = "bitonic.cu"})
    local rand = lcg(10)
    local n = 1000                             -- 3 full segments of 256 and one of 232
    local xs = {}
    for i = 1, n do xs[i] = rand(100000) - 50000 end
    xs[5], xs[300] = 0x7fffffff, -0x80000000   -- the extreme keys sort too
    local keys = luacuda.to_device(xs, {dtype = "int32"})
    m.bitonic_sort_segments[{(n + 255) // 256, 128}](keys, n)
    local want = {}
    for s = 0, (n - 1) // 256 do
      local seg = {table.unpack(xs, s * 256 + 1, math.min(n, s * 256 + 256))}
      table.sort(seg)
      table.move(seg, 1, #seg, s * 256 + 1, want)
    end
    assert.same(want, values(keys))
  end)

  it("reduces with a SharedMemory<T> template, two loads a thread and a last warp of shuffles", function()
    local names = {"reduce_twice<int, 256>", "reduce_twice<double, 64>"}
    local m = luacuda.compile(TEMPLATE_REDUCE, {name = "reduce_twice.cu", name_expressions = names})
    local rand = lcg(11)
    local n = 30001
    local xs, want = {}, 0
    for i = 1, n do xs[i] = rand(20001) - 10000; want = want + xs[i] end
    for _, name in ipairs(names) do
      local block = tonumber(name:match("(%d+)>"))
      local dtype = name:find("double") and "float64" or "int32"
      local elem = dtype == "float64" and 8 or 4
      local grid = 7
      local partials = luacuda.device_array(grid, dtype)
      local total = luacuda.device_array(1, dtype)
      local k = m[name]
      k:launch({grid = grid, block = block, shared = block * elem},
               luacuda.to_device(xs, {dtype = dtype}), partials, n)
      k:launch({grid = 1, block = block, shared = block * elem}, partials, total, grid)
      assert.same({want}, values(total), name)
    end
  end)

  it("takes a softmax of each row with xor butterflies, one warp a row", function()
    local m = luacuda.compile(SOFTMAX, {name = "softmax.cu"})
    local rand = lcg(12)
    local rows, cols = 37, 100
    local x = {}
    for r = 1, rows do
      x[r] = {}
      for c = 1, cols do x[r][c] = (rand(2001) - 1000) / 100 end
    end
    local y = luacuda.device_array({rows, cols}, "float32")
    local xd = luacuda.to_device(x, {dtype = "float32"})
    local xh = values(xd)                 -- the inputs as float32 holds them
    -- 4 rows a block of 128 threads; the last block's fourth warp has no row
    m.softmax_rows[{(rows + 3) // 4, 128}](xd, y, rows, cols)
    local got = values(y)
    -- Relative errors of an output: x - m rounds once (|x - m| <= 20, so
    -- 20 * 2^-24 = 1.2e-6 after exp), CUDA's expf is within 2 ulp (the CUDA
    -- math API's table; the host's within 1), the sum of 100 terms adds at
    -- most 100 * 2^-24 = 6e-6, the reciprocal and the product 2 roundings:
    -- under 8e-6 in all, so within 1e-5 of the exact softmax.
    for r = 1, rows do
      local mx = -math.huge
      for c = 1, cols do mx = math.max(mx, xh[r][c]) end
      local sum = 0
      for c = 1, cols do sum = sum + math.exp(xh[r][c] - mx) end
      local total = 0
      for c = 1, cols do
        local want = math.exp(xh[r][c] - mx) / sum
        assert.near(want, got[r][c], 1e-5 * want, ("row %d column %d"):format(r, c))
        total = total + got[r][c]
      end
      assert.near(1, total, 1e-4, "row " .. r)
    end
  end)

  it("aggregates by key with labeled_partition groups and a float atomicCAS maximum", function()
    local m = luacuda.compile(KEYED, {name = "keyed.cu"})
    local rand = lcg(13)
    local n, nkeys = 4099, 13
    local keys, vals, fvals, sums, maxima = {}, {}, {}, {}, {}
    for k = 1, nkeys do sums[k], maxima[k] = 0, -1000 end
    for i = 1, n do
      -- runs of equal keys, as sorted or bucketed data has, so that groups form
      keys[i] = (i // 5 + rand(3)) % nkeys
      vals[i] = rand(201) - 100
      fvals[i] = (rand(100001) - 50000) / 128
      sums[keys[i] + 1] = sums[keys[i] + 1] + vals[i]
      maxima[keys[i] + 1] = math.max(maxima[keys[i] + 1], fvals[i])
    end
    local kd = luacuda.to_device(keys, {dtype = "int32"})
    local out = luacuda.to_device(luacuda.zeros(nkeys, "int32"))
    m.sum_by_key[{5, 96}](kd, luacuda.to_device(vals, {dtype = "int32"}), out, n)
    assert.same(sums, values(out))
    local mx = luacuda.device_array(nkeys, "float32")
    mx:fill(-1000)
    m.max_by_key[{4, 128}](kd, luacuda.to_device(fvals, {dtype = "float32"}), mx, n)
    assert.same(maxima, values(mx))
  end)

  it("takes a 2-d Jacobi step through a shared tile with a one-cell frame", function()
    local m = luacuda.compile(JACOBI, {name = "jacobi.cu"})
    local rand = lcg(14)
    local nx, ny = 45, 21                      -- 3 x 3 blocks of 16 x 8, none of them full at the edges
    local u = {}
    for y = 1, ny do
      u[y] = {}
      for x = 1, nx do u[y][x] = (rand(1025) - 512) / 4 end
    end
    local out = luacuda.device_array({ny, nx}, "float64")
    m.jacobi_step[{{(nx + 15) // 16, (ny + 7) // 8}, {16, 8}}](
      luacuda.to_device(u, {dtype = "float64"}), out, nx, ny)
    local want = {}
    for y = 1, ny do
      want[y] = {}
      for x = 1, nx do
        if x == 1 or y == 1 or x == nx or y == ny then
          want[y][x] = u[y][x]
        else
          want[y][x] = 0.25 * (u[y][x - 1] + u[y][x + 1] + u[y - 1][x] + u[y + 1][x])
        end
      end
    end
    assert.same(want, values(out))
  end)

  it("reduces in one pass: the last block to retire sums the partials", function()
    local m = luacuda.compile(LAST_BLOCK, {name = "last_block.cu"})
    local rand = lcg(15)
    local n = 12345
    local xs, want = {}, 0
    for i = 1, n do xs[i] = (rand(1001) - 500) / 4; want = want + xs[i] end
    local x = luacuda.to_device(xs, {dtype = "float32"})
    -- twice: the last block must have reset the counter for the second launch
    for _, cfg in ipairs({{11, 128}, {6, 256}}) do
      local partials = luacuda.device_array(cfg[1], "float32")
      local out = luacuda.to_device({0}, {dtype = "float32"})
      m.sum_one_pass[{cfg[1], cfg[2]}](x, partials, out, n)
      assert.same({want}, values(out), cfg[1] .. " x " .. cfg[2])
    end
    assert.equal(0, values(m:get_global("retired_blocks")))
  end)

  it("maps with a kernel template over functors by value, and a lambda", function()
    local m = luacuda.compile(FUNCTORS, {name = "functors.cu",
                                         name_expressions = {"zip_with<Saxpy>", "zip_with<ClampedSum>"}})
    local rand = lcg(16)
    local n = 777
    local xs, ys = {}, {}
    for i = 1, n do xs[i], ys[i] = (rand(401) - 200) / 8, (rand(401) - 200) / 8 end
    local x, y = luacuda.to_device(xs, {dtype = "float32"}), luacuda.to_device(ys, {dtype = "float32"})
    local out = luacuda.device_array(n, "float32")
    m["zip_with<Saxpy>"][{3, 128}](x, y, out, n, {a = -2.5})
    local want = {}
    for i = 1, n do want[i] = -2.5 * xs[i] + ys[i] end
    assert.same(want, values(out))
    m["zip_with<ClampedSum>"][{3, 128}](x, y, out, n, {lo = -10, hi = 7.5})
    for i = 1, n do want[i] = math.min(math.max(xs[i] + ys[i], -10), 7.5) end
    assert.same(want, values(out))
    -- (0.5 t - 3) t + 1) t - 5 on eighths below 25 in magnitude: exact in float32
    m.horner[{(n + 127) // 128, 128}](x, out, n)
    for i = 1, n do
      local t = xs[i]
      want[i] = ((0.5 * t - 3) * t + 1) * t - 5
    end
    assert.same(want, values(out))
  end)

  it("reads vector types: an RGBA image of uchar4 and float4 loads through __ldg", function()
    local m = luacuda.compile(VECTORS, {name = "vectors.cu"})
    local rand = lcg(17)
    local width, height = 37, 19
    local pixels, want = {}, {}
    for y = 1, height do
      pixels[y], want[y] = {}, {}
      for x = 1, width do
        local r, g, b = rand(256), rand(256), rand(256)
        pixels[y][x] = {r, g, b, 255}
        want[y][x] = (77 * r + 150 * g + 29 * b + 128) >> 8
      end
    end
    local grey = luacuda.device_array({height, width}, "uint8")
    m.rgba_to_grey[{{(width + 15) // 16, (height + 7) // 8}, {16, 8}}](
      luacuda.to_device(pixels, {dtype = "uint8"}), grey, width, height)
    assert.same(want, values(grey))

    local n = 1003                            -- 250 float4 and a tail of 3
    local xs, ys, sums = {}, {}, {}
    for i = 1, n do
      xs[i], ys[i] = rand(1000) / 16, rand(1000) / 16
      sums[i] = 1.5 * xs[i] + ys[i]
    end
    local y = luacuda.to_device(ys, {dtype = "float32"})
    m.saxpy_vec4[{2, 64}](n, 1.5, luacuda.to_device(xs, {dtype = "float32"}), y)
    assert.same(sums, values(y))
  end)

  it("scans a block with __shfl_up_sync warp scans, and a warp with cg::exclusive_scan", function()
    local m = luacuda.compile(WARP_SCAN, {name = "warp_scan.cu"})
    local rand = lcg(18)
    local n, block = 700, 192                 -- 4 blocks of 6 warps, the last one short
    local xs = {}
    for i = 1, n do xs[i] = rand(201) - 100 end
    local inclusive = luacuda.device_array(n, "int32")
    local exclusive = luacuda.device_array(n, "int32")
    m.block_scan[{(n + block - 1) // block, block}](luacuda.to_device(xs, {dtype = "int32"}),
                                                   inclusive, exclusive, n)
    local want_in, want_ex = {}, {}
    local run_block, run_warp = 0, 0
    for i = 1, n do
      if (i - 1) % block == 0 then run_block = 0 end
      if (i - 1) % 32 == 0 then run_warp = 0 end
      want_ex[i] = run_warp
      run_block, run_warp = run_block + xs[i], run_warp + xs[i]
      want_in[i] = run_block
    end
    assert.same(want_in, values(inclusive))
    assert.same(want_ex, values(exclusive))
  end)

  it("sums all-pairs n-body accelerations over float4 tiles in shared memory", function()
    local m = luacuda.compile(NBODY, {name = "nbody.cu"})
    local rand = lcg(19)
    local n, block, eps2 = 300, 128, 0.01
    local bodies = {}
    for i = 1, n do
      bodies[i] = {(rand(2001) - 1000) / 100, (rand(2001) - 1000) / 100, (rand(2001) - 1000) / 100,
                   (1 + rand(16)) / 4}
    end
    local bd = luacuda.to_device(bodies, {dtype = "float32"})
    local acc = luacuda.device_array({n, 3}, "float32")
    m.accelerations:launch({grid = (n + block - 1) // block, block = block, shared = block * 16},
                           bd, acc, n, eps2)
    local got = values(acc)
    -- Each term m r / (r.r + eps2)^(3/2) is a few float32 operations: r and
    -- r.r + eps2 round 5 times, rsqrtf is within 2 ulp (CUDA's table), inv^3
    -- and the products round 4 more: under 32 units of 2^-24 relatively.
    -- Summing n terms adds at most n - 1 roundings of the partial sums. So
    -- each component is within (32 + n) 2^-24 of the sum of |terms|.
    local e2 = f32(eps2)
    for i = 1, n do
      local me = bodies[i]
      local want, scale = {0, 0, 0}, {0, 0, 0}
      for j = 1, n do
        local o = bodies[j]
        local r = {o[1] - me[1], o[2] - me[2], o[3] - me[3]}
        local d2 = r[1] * r[1] + r[2] * r[2] + r[3] * r[3] + e2
        local sj = f32(o[4]) / (d2 * math.sqrt(d2))
        for c = 1, 3 do
          want[c] = want[c] + r[c] * sj
          scale[c] = scale[c] + math.abs(r[c] * sj)
        end
      end
      for c = 1, 3 do
        assert.near(want[c], got[i][c], (32 + n) * 2.0 ^ -24 * scale[c],
                    ("body %d component %d"):format(i, c))
      end
    end
  end)

  it("multiplies a CSR matrix by a vector with LANES threads a row and shuffles of that width", function()
    local names = {"spmv_csr_vector<4>", "spmv_csr_vector<32>"}
    local m = luacuda.compile(SPMV, {name = "spmv.cu", name_expressions = names})
    local rand = lcg(20)
    local rows, ncols = 203, 91
    local row_ptr, cols, vals = {0}, {}, {}
    for r = 1, rows do
      local len = r % 17 == 0 and 0 or rand(40)   -- empty rows, short rows, rows past 32
      for _ = 1, len do
        cols[#cols + 1] = rand(ncols)
        vals[#vals + 1] = (rand(65) - 32) / 8
      end
      row_ptr[#row_ptr + 1] = #cols
    end
    local xs = {}
    for i = 1, ncols do xs[i] = (rand(129) - 64) / 16 end
    local want = {}
    for r = 1, rows do
      local sum = 0                           -- products of eighths and sixteenths: exact
      for k = row_ptr[r] + 1, row_ptr[r + 1] do sum = sum + vals[k] * xs[cols[k] + 1] end
      want[r] = sum
    end
    local rp, ci = luacuda.to_device(row_ptr, {dtype = "int32"}), luacuda.to_device(cols, {dtype = "int32"})
    local v, x = luacuda.to_device(vals, {dtype = "float64"}), luacuda.to_device(xs, {dtype = "float64"})
    for _, name in ipairs(names) do
      local lanes = tonumber(name:match("<(%d+)>"))
      local y = luacuda.device_array(rows, "float64")
      m[name][{(rows * lanes + 127) // 128, 128}](rows, rp, ci, v, x, y)
      assert.same(want, values(y), name)
    end
  end)

  it("takes a discrete Fourier transform in cuFloatComplex", function()
    local m = luacuda.compile(DFT, {name = "dft.cu"})
    local n = 37
    local xs = {}
    for t = 1, n do xs[t] = {math.cos(3 * t), math.sin(2 * t)} end
    local x = luacuda.to_device(xs, {dtype = "float32"})
    local xh = values(x)
    local out = luacuda.device_array({n, 2}, "float32")
    m.dft[{2, 32}](x, out, n)
    local got = values(out)
    -- Each term is off by the angle's rounding (2 pi 2^-24), sincospif's
    -- 1 ulp (CUDA's table) and cuCmulf's 3 roundings: (2 pi + 4) 2^-24 of
    -- |x_t|, under 11 2^-24 of |re| + |im|; the sum adds n - 1 roundings.
    for k = 0, n - 1 do
      local re, im, mag = 0, 0, 0
      for t = 0, n - 1 do
        local a = -2 * math.pi * ((k * t) % n) / n
        local xr, xi = xh[t + 1][1], xh[t + 1][2]
        re = re + xr * math.cos(a) - xi * math.sin(a)
        im = im + xr * math.sin(a) + xi * math.cos(a)
        mag = mag + math.abs(xr) + math.abs(xi)
      end
      local tol = (11 + n) * 2.0 ^ -24 * mag
      assert.near(re, got[k + 1][1], tol, "real part of " .. k)
      assert.near(im, got[k + 1][2], tol, "imaginary part of " .. k)
    end
  end)

  it("finds each block's arg-max in shared memory carved into two arrays, ending with __syncwarp", function()
    local m = luacuda.compile(ARGMAX, {name = "argmax.cu"})
    local n, block = 1000, 256                 -- 4 blocks, the last of 232 values
    local xs = {}
    for i = 1, n do xs[i] = ((i * 7919) % 1009) / 8 end   -- distinct: 1009 is prime
    local grid = (n + block - 1) // block
    local best = luacuda.device_array(grid, "float32")
    local where = luacuda.device_array(grid, "int32")
    m.argmax_blocks:launch({grid = grid, block = block, shared = block * 8},
                           luacuda.to_device(xs, {dtype = "float32"}), best, where, n)
    local want_v, want_i = {}, {}
    for b = 0, grid - 1 do
      want_v[b + 1], want_i[b + 1] = -math.huge, -1
      for i = b * block, math.min(n, (b + 1) * block) - 1 do
        if xs[i + 1] > want_v[b + 1] then want_v[b + 1], want_i[b + 1] = xs[i + 1], i end
      end
    end
    assert.same(want_v, values(best))
    assert.same(want_i, values(where))
  end)
end)
