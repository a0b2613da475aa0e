-- A corpus of kernels in the idioms of real CUDA code (block and warp
-- reductions, scans, histograms, a padded-tile transpose, CAS loops,
-- dynamic shared memory, real device calls, printf), each run through the
-- public API and checked against the same computation in Lua.
--
-- Each test compiles its module before anything else, so that on the fake
-- driver (make check-fake-cuda), which does not run user kernels yet, NVRTC
-- still compiles every source here: a construct only the simulator takes
-- fails there at once.
local luacuda = require "luacuda"
local S = require "spec.support"

local function host(a) return a:copy_to_host():totable() end

-- a repeatable pseudo-random integer in [0, m)
local function lcg(seed)
  local s = seed
  return function(m)
    s = (s * 1103515245 + 12345) % 2147483648
    return (s >> 8) % m
  end
end

local function compile(src, name) return luacuda.compile(src, {name = name}) end

local REDUCE = [==[
#define BLOCK 256

// each thread sums a grid-stride slice, then the block halves its shared
// tree to one value, which thread 0 stores as the block's partial sum
template <typename T>
__device__ T block_tree_sum(const T *x, int n) {
  __shared__ T s[BLOCK];
  unsigned t = threadIdx.x;
  T acc = 0;
  for (int i = blockIdx.x * blockDim.x + t; i < n; i += blockDim.x * gridDim.x) acc += x[i];
  s[t] = acc;
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  return s[0];
}

extern "C" __global__ void partial_sums_f32(const float *x, int n, float *partial) {
  float total = block_tree_sum(x, n);
  if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

// the tree down to one warp, whose lanes finish in step with __syncwarp,
// then one atomicAdd per block
extern "C" __global__ void atomic_sum_f64(const double *x, int n, double *out) {
  __shared__ double s[BLOCK];
  unsigned t = threadIdx.x;
  double acc = 0.0;
  for (int i = blockIdx.x * blockDim.x + t; i < n; i += blockDim.x * gridDim.x) acc += x[i];
  s[t] = acc;
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 32; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t < 32) {
    double v = s[t] + s[t + 32];
    for (int k = 16; k > 0; k >>= 1) {
      __syncwarp();
      s[t] = v;
      __syncwarp();
      v += s[t + k];
    }
    if (t == 0) atomicAdd(out, v);
  }
}
]==]

describe("a block tree reduction in shared memory", function()
  local n = 100003
  local function data()
    local t, sum, abs = {}, 0, 0
    for i = 0, n - 1 do
      local v = ((i * 7919) % 1000 - 500) * 0.125   -- dyadic: exact in double sums
      t[i + 1] = v
      sum, abs = sum + v, abs + math.abs(v)
    end
    return t, sum, abs
  end

  it("sums floats in two passes: partial sums per block, then one block over them", function()
    local m = compile(REDUCE, "reduce.cu")
    local t, sum, abs = data()
    local x = luacuda.to_device(t, {dtype = "float32"})
    local blocks = 48
    local partial = luacuda.device_array(blocks, "float32")
    local total = luacuda.device_array(1, "float32")
    m.partial_sums_f32[{blocks, 256}](x, n, partial)
    m.partial_sums_f32[{1, 256}](partial, blocks, total)
    local p, want = host(partial), 0
    for b = 1, blocks do want = want + p[b] end
    assert.is_true(math.abs(want - sum) <= 2e-6 * abs, ("partials sum to %g, not %g"):format(want, sum))
    local got = host(total)[1]
    assert.is_true(math.abs(got - sum) <= 2e-6 * abs, ("got %g, want %g"):format(got, sum))
  end)

  it("sums doubles exactly, the last warp with __syncwarp, blocks combined by atomicAdd", function()
    local m = compile(REDUCE, "reduce.cu")
    local t, sum = data()
    local x = luacuda.to_device(t, {dtype = "float64"})
    local out = luacuda.to_device({0}, {dtype = "float64"})
    m.atomic_sum_f64[{37, 256}](x, n, out)
    assert.equal(sum, host(out)[1])
    out:copy_to_device({1.5})
    m.atomic_sum_f64[{1, 64}](x, 1000, out)
    local want = 1.5
    for i = 1, 1000 do want = want + t[i] end
    assert.equal(want, host(out)[1])
  end)
end)

local SHUFFLE = [==[
__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// lanes reduce by shuffles, warp leaders meet in shared memory, warp 0
// reduces their sums, and one atomicAdd per block combines the blocks
extern "C" __global__ void shuffle_sum(const float *x, int n, float *out) {
  __shared__ float warp_sums[32];
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += x[i];
  v = warp_sum(v);
  int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    int nwarps = (blockDim.x + warpSize - 1) / warpSize;
    v = lane < nwarps ? warp_sums[lane] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) atomicAdd(out, v);
  }
}

// per warp: an inclusive scan with __shfl_up_sync, a butterfly total with
// __shfl_xor_sync that every lane ends with, and lane 3's value broadcast
extern "C" __global__ void warp_scan(const int *x, int *scan, int *total, int *third) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  int v = x[i], s = v;
  for (int d = 1; d < 32; d <<= 1) {
    int up = __shfl_up_sync(0xffffffffu, s, d);
    if (lane >= d) s += up;
  }
  scan[i] = s;
  int all = v;
  for (int mask = 16; mask > 0; mask >>= 1) all += __shfl_xor_sync(0xffffffffu, all, mask);
  total[i] = all;
  third[i] = __shfl_sync(0xffffffffu, v, 3);
}
]==]

describe("warp shuffles", function()

  it("reduce floats with __shfl_down_sync, then across warps and blocks", function()
    local m = compile(SHUFFLE, "shuffle.cu")
    local n, t, want = 50000, {}, 0
    for i = 1, n do
      t[i] = (i % 17) * 0.25
      want = want + t[i]
    end
    local x = luacuda.to_device(t, {dtype = "float32"})
    local out = luacuda.to_device({0}, {dtype = "float32"})
    m.shuffle_sum[{24, 192}](x, n, out)     -- 6 warps a block
    assert.is_true(math.abs(host(out)[1] - want) <= 1e-5 * want, host(out)[1] .. " vs " .. want)
  end)

  it("scan, all-reduce and broadcast within each warp", function()
    local m = compile(SHUFFLE, "shuffle.cu")
    local n, rnd, t = 256, lcg(5), {}
    for i = 1, n do t[i] = rnd(200) - 100 end
    local x = luacuda.to_device(t, {dtype = "int32"})
    local scan, total, third = luacuda.device_array(n, "int32"), luacuda.device_array(n, "int32"),
      luacuda.device_array(n, "int32")
    m.warp_scan[{2, 128}](x, scan, total, third)
    local hs, ht, h3 = host(scan), host(total), host(third)
    for w = 0, n // 32 - 1 do
      local run, sum = 0, 0
      for l = 1, 32 do sum = sum + t[w * 32 + l] end
      for l = 1, 32 do
        local i = w * 32 + l
        run = run + t[i]
        assert.equal(run, hs[i], "scan at " .. i)
        assert.equal(sum, ht[i], "total at " .. i)
        assert.equal(t[w * 32 + 4], h3[i], "broadcast at " .. i)
      end
    end
  end)
end)

local SCAN = [==[
#define SCAN_BLOCK 256

// Blelloch: a work-efficient exclusive scan of 2 * blockDim.x elements
// (up-sweep, clear the root, down-sweep), made inclusive on the way out
template <typename T>
__device__ void blelloch(const T *in, T *out, int n) {
  __shared__ T s[2 * SCAN_BLOCK];
  int t = threadIdx.x, m = 2 * blockDim.x;
  s[t] = t < n ? in[t] : T(0);
  s[t + blockDim.x] = t + (int)blockDim.x < n ? in[t + blockDim.x] : T(0);
  int offset = 1;
  for (int d = m >> 1; d > 0; d >>= 1) {
    __syncthreads();
    if (t < d) {
      int a = offset * (2 * t + 1) - 1, b = offset * (2 * t + 2) - 1;
      s[b] += s[a];
    }
    offset <<= 1;
  }
  if (t == 0) s[m - 1] = 0;
  for (int d = 1; d < m; d <<= 1) {
    offset >>= 1;
    __syncthreads();
    if (t < d) {
      int a = offset * (2 * t + 1) - 1, b = offset * (2 * t + 2) - 1;
      T v = s[a];
      s[a] = s[b];
      s[b] += v;
    }
  }
  __syncthreads();
  for (int i = t; i < n && i < m; i += blockDim.x) out[i] = s[i] + in[i];
}

// Hillis-Steele: an inclusive scan of each block's slice, double-buffered
// in shared memory; the last thread stores the block's total
template <typename T>
__device__ void scan_block(const T *in, T *out, T *block_sums, int n) {
  __shared__ T buf[2][SCAN_BLOCK];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t, p = 0;
  buf[0][t] = i < n ? in[i] : T(0);
  __syncthreads();
  for (int offset = 1; offset < (int)blockDim.x; offset <<= 1) {
    buf[1 - p][t] = t >= offset ? buf[p][t] + buf[p][t - offset] : buf[p][t];
    p = 1 - p;
    __syncthreads();
  }
  if (i < n) out[i] = buf[p][t];
  if (t == (int)blockDim.x - 1) block_sums[blockIdx.x] = buf[p][t];
}

// every block but the first adds the scanned total of the blocks before it
template <typename T>
__device__ void add_back(T *out, const T *scanned_sums, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (blockIdx.x > 0 && i < n) out[i] += scanned_sums[blockIdx.x - 1];
}

extern "C" __global__ void blelloch_i32(const int *in, int *out, int n) { blelloch(in, out, n); }
extern "C" __global__ void blelloch_f32(const float *in, float *out, int n) { blelloch(in, out, n); }
extern "C" __global__ void scan_block_i32(const int *in, int *out, int *sums, int n) {
  scan_block(in, out, sums, n);
}
extern "C" __global__ void scan_block_f32(const float *in, float *out, float *sums, int n) {
  scan_block(in, out, sums, n);
}
extern "C" __global__ void add_back_i32(int *out, const int *sums, int n) { add_back(out, sums, n); }
extern "C" __global__ void add_back_f32(float *out, const float *sums, int n) { add_back(out, sums, n); }
]==]

describe("an inclusive prefix scan", function()
  -- int32 values with negatives; float32 values whose sums stay exact
  local function inputs(n, dtype)
    local t = {}
    for i = 0, n - 1 do
      if dtype == "int32" then t[i + 1] = (i * 37) % 201 - 100
      else t[i + 1] = ((i * 37) % 9) * 0.5 end
    end
    return t
  end
  local function check(t, got, what)
    local run = 0
    for i = 1, #t do
      run = run + t[i]
      if got[i] ~= run then
        error(("%s: element %d is %s, the scan in Lua %s"):format(what, i, got[i], run))
      end
    end
  end

  it("within one block (Blelloch, in shared memory), int32 and float32", function()
    local m = compile(SCAN, "scan.cu")
    for _, dtype in ipairs({"int32", "float32"}) do
      for _, n in ipairs({512, 500, 37}) do
        local t = inputs(n, dtype)
        local out = luacuda.device_array(n, dtype)
        m["blelloch_" .. (dtype == "int32" and "i32" or "f32")][{1, 256}](
          luacuda.to_device(t, {dtype = dtype}), out, n)
        check(t, host(out), ("%s, n = %d"):format(dtype, n))
      end
    end
  end)

  it("across blocks (Hillis-Steele per block, block totals scanned, added back)", function()
    local m = compile(SCAN, "scan.cu")
    local n = 256 * 40 + 77
    local blocks = (n + 255) // 256
    for _, dtype in ipairs({"int32", "float32"}) do
      local sfx = dtype == "int32" and "_i32" or "_f32"
      local t = inputs(n, dtype)
      local out = luacuda.device_array(n, dtype)
      local sums = luacuda.device_array(blocks, dtype)
      local scanned = luacuda.device_array(blocks, dtype)
      local unused = luacuda.device_array(1, dtype)
      m["scan_block" .. sfx][{blocks, 256}](luacuda.to_device(t, {dtype = dtype}), out, sums, n)
      m["scan_block" .. sfx][{1, 256}](sums, scanned, unused, blocks)
      m["add_back" .. sfx][{blocks, 256}](out, scanned, n)
      check(t, host(out), dtype)
      assert.equal(host(scanned)[blocks], host(unused)[1])
    end
  end)
end)

local HISTOGRAM = [==[
#define BINS 256

extern "C" __global__ void histogram_global(const unsigned char *data, int n, unsigned int *bins) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&bins[data[i]], 1u);
}

// privatised: each block counts in shared memory, then adds its nonzero
// bins to the global ones
extern "C" __global__ void histogram_shared(const unsigned char *data, int n, unsigned int *bins) {
  __shared__ unsigned int local[BINS];
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < BINS; b += blockDim.x)
    if (local[b] != 0) atomicAdd(&bins[b], local[b]);
}
]==]

describe("a 256-bin histogram", function()
  local n = 100000
  local function data()
    local rnd, t, want = lcg(17), {}, {}
    for b = 1, 256 do want[b] = 0 end
    for i = 1, n do
      -- one bin in five is the hot 42: contention on one counter
      local v = i % 5 == 0 and 42 or rnd(256)
      t[i] = v
      want[v + 1] = want[v + 1] + 1
    end
    return t, want
  end

  it("counts with atomicAdd on global memory", function()
    local m = compile(HISTOGRAM, "histogram.cu")
    local t, want = data()
    local bins = luacuda.to_device(luacuda.zeros(256, "uint32"))
    m.histogram_global[{40, 256}](luacuda.to_device(t, {dtype = "uint8"}), n, bins)
    assert.same(want, host(bins))
  end)

  it("counts in shared memory per block, then adds to the global bins", function()
    local m = compile(HISTOGRAM, "histogram.cu")
    local t, want = data()
    local bins = luacuda.to_device(luacuda.zeros(256, "uint32"))
    m.histogram_shared[{30, 96}](luacuda.to_device(t, {dtype = "uint8"}), n, bins)  -- 96 < 256 bins
    assert.same(want, host(bins))
  end)
end)

local TRANSPOSE = [==[
#define TILE 32
#define ROWS 8

// a 32x8 block moves a 32x32 tile: read in rows, written out in rows of
// the transpose; the padded column keeps the tile's columns off one bank
template <typename T>
__device__ void transpose_tiled(const T *in, T *out, int rows, int cols) {
  __shared__ T tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

extern "C" __global__ void transpose_f32(const float *in, float *out, int rows, int cols) {
  transpose_tiled(in, out, rows, cols);
}
extern "C" __global__ void transpose_f64(const double *in, double *out, int rows, int cols) {
  transpose_tiled(in, out, rows, cols);
}
]==]

describe("a tiled transpose through a padded 32x33 shared tile", function()
  it("transposes sizes that are not multiples of 32, float32 and float64", function()
    local m = compile(TRANSPOSE, "transpose.cu")
    for _, dtype in ipairs({"float32", "float64"}) do
      for _, size in ipairs({{100, 37}, {37, 100}, {33, 65}}) do
        local rows, cols = size[1], size[2]
        local t = {}
        for r = 1, rows do
          t[r] = {}
          for c = 1, cols do t[r][c] = r * 1000 + c + (dtype == "float64" and 0.125 or 0.5) end
        end
        local a = luacuda.to_device(t, {dtype = dtype})
        local out = luacuda.device_array({cols, rows}, dtype)
        local k = dtype == "float32" and m.transpose_f32 or m.transpose_f64
        k[{{(cols + 31) // 32, (rows + 31) // 32}, {32, 8}}](a, out, rows, cols)
        local h = host(out)
        for c = 1, cols do
          for r = 1, rows do
            if h[c][r] ~= t[r][c] then
              error(("%s %dx%d: out[%d][%d] is %s, not %s"):format(dtype, rows, cols, c, r,
                                                                  h[c][r], t[r][c]))
            end
          end
        end
      end
    end
  end)
end)

local ATOMICS = [==[
// float max by compare-and-swap on the bit pattern, giving up as soon as
// the stored value is at least v
__device__ float atomic_max_float(float *addr, float v) {
  int *a = (int *)addr;
  int old = *a, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= v) break;
    old = atomicCAS(a, assumed, __float_as_int(v));
  } while (old != assumed);
  return __int_as_float(old);
}

// double min by a 64-bit compare-and-swap
__device__ double atomic_min_double(double *addr, double v) {
  unsigned long long *a = (unsigned long long *)addr;
  unsigned long long old = *a, assumed;
  do {
    assumed = old;
    if (__longlong_as_double((long long)assumed) <= v) break;
    old = atomicCAS(a, assumed, (unsigned long long)__double_as_longlong(v));
  } while (old != assumed);
  return __longlong_as_double((long long)old);
}

extern "C" __global__ void extremes(const float *x, int n, float *mx, double *mn,
                                   unsigned long long *sum64, long long *max64,
                                   unsigned long long *ticket, int *order, int *positives) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  bool in = i < n;
  if (in) {
    atomic_max_float(mx, x[i]);
    atomic_min_double(mn, (double)x[i]);
    atomicAdd(sum64, (1ull << 33) + (unsigned long long)i);        // past 32 bits
    atomicMax(max64, ((long long)(i % 1000) << 40) - i);
    unsigned long long my = atomicAdd(ticket, 1ull);               // arrival order
    order[my] = i;
  }
  // every thread of the block reaches the barrier, in range or not
  int count = __syncthreads_count(in && x[i] > 0.0f);
  if (threadIdx.x == 0) positives[blockIdx.x] = count;
}
]==]

describe("compare-and-swap loops, 64-bit atomics and __syncthreads_count", function()
  it("find the extremes, sum and order past 32 bits, and count per block", function()
    local m = compile(ATOMICS, "atomics.cu")
    local n, block = 5000, 128
    local blocks = (n + block - 1) // block
    local t, mx, mn, max64 = {}, -math.huge, math.huge, math.mininteger
    local pos = {}
    for b = 1, blocks do pos[b] = 0 end
    for i = 0, n - 1 do
      local v = ((i * 7919) % 20011 - 10000) / 64          -- exact in float32
      t[i + 1] = v
      mx, mn = math.max(mx, v), math.min(mn, v)
      max64 = math.max(max64, ((i % 1000) << 40) - i)
      if v > 0 then pos[i // block + 1] = pos[i // block + 1] + 1 end
    end
    local dmx = luacuda.to_device({-math.huge}, {dtype = "float32"})
    local dmn = luacuda.to_device({math.huge}, {dtype = "float64"})
    local sum64 = luacuda.to_device({0}, {dtype = "uint64"})
    local dmax64 = luacuda.to_device({math.mininteger}, {dtype = "int64"})
    local ticket = luacuda.to_device({0}, {dtype = "uint64"})
    local order = luacuda.device_array(n, "int32")
    local positives = luacuda.device_array(blocks, "int32")
    m.extremes[{blocks, block}](luacuda.to_device(t, {dtype = "float32"}), n, dmx, dmn, sum64,
                                dmax64, ticket, order, positives)
    assert.equal(mx, host(dmx)[1])
    assert.equal(mn, host(dmn)[1])
    assert.equal(n * (1 << 33) + n * (n - 1) // 2, host(sum64)[1])
    assert.equal(max64, host(dmax64)[1])
    assert.equal(n, host(ticket)[1])
    local seen, o = {}, host(order)
    for k = 1, n do
      assert.is_nil(seen[o[k]], "index " .. o[k] .. " took two tickets")
      seen[o[k]] = true
    end
    for i = 0, n - 1 do assert.is_true(seen[i], "index " .. i .. " took no ticket") end
    assert.same(pos, host(positives))
  end)
end)

local DYNAMIC = [==[
// two arrays carved from one extern __shared__ buffer sized at launch:
// blockDim.x floats, then blockDim.x ints
extern "C" __global__ void sum_and_count(const float *x, int n, float *sums, int *counts) {
  extern __shared__ float smem[];
  float *s = smem;
  int *c = (int *)&smem[blockDim.x];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  float v = i < n ? x[i] : 0.0f;
  s[t] = v;
  c[t] = v > 0.0f;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) {
      s[t] += s[t + k];
      c[t] += c[t + k];
    }
    __syncthreads();
  }
  if (t == 0) {
    sums[blockIdx.x] = s[0];
    counts[blockIdx.x] = c[0];
  }
}

// a 1-D stencil: each block stages its slice and a halo of radius r on
// each side in the prelude's DYNAMIC_SHARED, blockDim.x + 2r doubles
extern "C" __global__ void window_sum(const double *x, int n, int r, double *out) {
  DYNAMIC_SHARED(double, stage);
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  int width = blockDim.x + 2 * r, start = blockIdx.x * blockDim.x - r;
  for (int k = t; k < width; k += blockDim.x) {
    int j = start + k;
    stage[k] = j >= 0 && j < n ? x[j] : 0.0;
  }
  __syncthreads();
  if (i < n) {
    double acc = 0.0;
    for (int k = 0; k <= 2 * r; k++) acc += stage[t + k];
    out[i] = acc;
  }
}
]==]

describe("dynamic shared memory sized at launch", function()
  it("carves a float and an int array out of extern __shared__, for two block sizes", function()
    local m = compile(DYNAMIC, "dynamic.cu")
    local n = 3000
    local t = {}
    for i = 0, n - 1 do t[i + 1] = ((i * 13) % 7 - 3) * 0.25 end
    local x = luacuda.to_device(t, {dtype = "float32"})
    for _, block in ipairs({64, 512}) do
      local blocks = (n + block - 1) // block
      local sums, counts = luacuda.device_array(blocks, "float32"),
        luacuda.device_array(blocks, "int32")
      m.sum_and_count:launch({grid = blocks, block = block, shared = block * 8}, x, n, sums, counts)
      local hs, hc = host(sums), host(counts)
      for b = 0, blocks - 1 do
        local s, c = 0, 0
        for i = b * block + 1, math.min(n, (b + 1) * block) do
          s = s + t[i]
          if t[i] > 0 then c = c + 1 end
        end
        assert.equal(s, hs[b + 1], "sum of block " .. b)
        assert.equal(c, hc[b + 1], "count of block " .. b)
      end
    end
  end)

  it("stages a halo of a radius given at launch in DYNAMIC_SHARED", function()
    local m = compile(DYNAMIC, "dynamic.cu")
    local n = 1000
    local t = {}
    for i = 1, n do t[i] = (i % 11) * 0.5 end
    local x = luacuda.to_device(t, {dtype = "float64"})
    for _, r in ipairs({1, 7, 40}) do
      local out = luacuda.device_array(n, "float64")
      m.window_sum[{(n + 127) // 128, 128, nil, (128 + 2 * r) * 8}](x, n, r, out)
      local h = host(out)
      for i = 1, n do
        local want = 0
        for j = i - r, i + r do want = want + (t[j] or 0) end
        assert.equal(want, h[i], ("radius %d, element %d"):format(r, i))
      end
    end
  end)
end)

local CALLS = [==[
// real calls: helpers kept out of line, one of them through a generic
// pointer into shared memory, and recursion
__device__ __noinline__ float horner(const float *c, int degree, float x) {
  float y = c[degree];
  for (int k = degree - 1; k >= 0; k--) y = y * x + c[k];
  return y;
}

__device__ __noinline__ void bump(int *p, int by) { atomicAdd(p, by); }

__device__ __noinline__ float2 min_max(float a, float b) {
  return a < b ? make_float2(a, b) : make_float2(b, a);
}

__device__ unsigned long long factorial(unsigned int n) {
  return n <= 1 ? 1ull : n * factorial(n - 1);
}

__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__device__ __noinline__ int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }

extern "C" __global__ void calls(const float *coef, int degree, unsigned long long *fact,
                                 int *fibs, int *gcds, float *poly, float *mm, int *block_total) {
  __shared__ int total;
  int t = threadIdx.x;
  if (t == 0) total = 0;
  __syncthreads();
  fact[t] = factorial(t);
  fibs[t] = fib(t % 16);
  gcds[t] = gcd(t * 84, 36 + t * 6);
  poly[t] = horner(coef, degree, 0.5f * t - 4.0f);
  float2 p = min_max(10.0f - t, (float)t);
  mm[2 * t] = p.x;
  mm[2 * t + 1] = p.y;
  bump(&total, t);
  __syncthreads();
  if (t == 0) *block_total = total;
}
]==]

describe("device functions called for real", function()
  it("runs __noinline__ helpers and recursive functions", function()
    local m = compile(CALLS, "calls.cu")
    local nt = 21
    local coef = {1.5, -2, 0.25, 1}
    local fact = luacuda.device_array(nt, "uint64")
    local fibs, gcds = luacuda.device_array(nt, "int32"), luacuda.device_array(nt, "int32")
    local poly = luacuda.device_array(nt, "float32")
    local mm = luacuda.device_array({nt, 2}, "float32")
    local total = luacuda.device_array(1, "int32")
    m.calls[{1, nt}](luacuda.to_device(coef, {dtype = "float32"}), #coef - 1, fact, fibs, gcds,
                     poly, mm, total)
    local function fib(k) if k < 2 then return k end return fib(k - 1) + fib(k - 2) end
    local function gcd(a, b) if b == 0 then return a end return gcd(b, a % b) end
    local hf, hfib, hg, hp, hm = host(fact), host(fibs), host(gcds), host(poly), host(mm)
    local f = 1
    for t = 0, nt - 1 do
      if t > 1 then f = f * t end
      assert.equal(f, hf[t + 1], "factorial " .. t)
      assert.equal(fib(t % 16), hfib[t + 1], "fib " .. t)
      assert.equal(gcd(t * 84, 36 + t * 6), hg[t + 1], "gcd " .. t)
      local x, y = 0.5 * t - 4, 0
      for k = #coef, 1, -1 do y = y * x + coef[k] end
      assert.equal(y, hp[t + 1], "polynomial at " .. x)      -- exact: dyadic, small
      assert.same({math.min(10 - t, t), math.max(10 - t, t)}, hm[t + 1])
    end
    assert.equal(nt * (nt - 1) // 2, host(total)[1])
  end)
end)

local PRINTF = [==[
extern "C" __global__ void report(int base, double scale, long long big) {
  if (blockIdx.x == 0 && threadIdx.x == 0)
    printf("first: %d %5.2f %lld %x %c %s|\n", base, scale, big, 255u, 'k', "text");
  printf("block %d thread %d value %.3f\n", blockIdx.x, threadIdx.x, scale * (base + threadIdx.x));
}
]==]

describe("printf from a kernel", function()
  it("prints each thread's line, formatted as the host would", function()
    compile(PRINTF, "printf.cu")
    local ok, out = S.lua_run("", ([==[
      local luacuda = require "luacuda"
      local m = luacuda.compile(%q, {name = "printf.cu"})
      m.report[{3, 4}](7, 1.25, 1 << 40)
      luacuda.synchronize()
    ]==]):format(PRINTF))
    assert.is_true(ok, out)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    table.sort(lines)
    local want = {("first: 7  1.25 %d ff k text|"):format(1 << 40)}
    for b = 0, 2 do
      for t = 0, 3 do want[#want + 1] = ("block %d thread %d value %.3f"):format(b, t, 1.25 * (7 + t)) end
    end
    table.sort(want)
    assert.same(want, lines)
  end)
end)

-- math.h's constants: the simulator's host compiler has them, and the
-- prelude gives them to NVRTC, which has no math.h
local SPECIALS = [==[
__device__ const float lowest = -INFINITY;   // a constant initialiser, as math.h's allow

extern "C" __global__ void specials(const float *x, int n, float *f, double *d, int *flags) {
  float lo = INFINITY, hi = lowest;        // the identities of min and max
  for (int i = 0; i < n; i++) {
    lo = fminf(lo, x[i]);
    hi = fmaxf(hi, x[i]);
  }
  f[0] = lo;
  f[1] = hi;
  f[2] = NAN;
  f[3] = -HUGE_VALF;
  d[0] = HUGE_VAL;
  d[1] = -INFINITY;                        // a float, widened
  d[2] = NAN;
  flags[0] = (int)isinf(INFINITY) + 2 * (int)isinf(-INFINITY) + 4 * (int)isnan(NAN);
  flags[1] = (NAN != NAN) + 2 * (NAN == NAN) + 4 * (INFINITY > 3.0e38f) + 8 * (-INFINITY < -3.0e38f);
  flags[2] = (int)sizeof(INFINITY) + 10 * (int)sizeof(NAN) + 100 * (int)sizeof(HUGE_VAL);
  d[3] = M_PI;
  d[4] = M_SQRT1_2 * M_SQRT2 + M_E * 0.0 + M_LN2 / M_LN2 - 1.0;
}
]==]

describe("math.h's INFINITY, NAN, HUGE_VAL and M_PI in a kernel", function()
  it("compile on every backend and hold their values", function()
    local m = compile(SPECIALS, "specials.cu")
    local f, d = luacuda.device_array(4, "float32"), luacuda.device_array(5, "float64")
    local flags = luacuda.device_array(3, "int32")
    m.specials[{1, 1}](luacuda.to_device({2.5, -7, 2.0^100}, {dtype = "float32"}), 3, f, d, flags)
    local hf, hd = host(f), host(d)
    assert.equal(-7, hf[1])
    assert.equal(2.0^100, hf[2])
    assert.is_true(hf[3] ~= hf[3], "NAN is a NaN")
    assert.equal(-math.huge, hf[4])
    assert.equal(math.huge, hd[1])
    assert.equal(-math.huge, hd[2])
    assert.is_true(hd[3] ~= hd[3], "NAN widened is a NaN")
    assert.same({7, 13, 844}, host(flags))
    assert.equal(math.pi, hd[4])
    assert.is_true(math.abs(hd[5] - 1) < 1e-15, hd[5])
    -- no elements: the identities come back as they are
    m.specials[{1, 1}](luacuda.to_device({0}, {dtype = "float32"}), 0, f, d, flags)
    hf = host(f)
    assert.equal(math.huge, hf[1])
    assert.equal(-math.huge, hf[2])
  end)
end)
