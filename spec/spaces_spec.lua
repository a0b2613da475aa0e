-- CUDA's address-space predicates (__isGlobal, __isShared, __isConstant,
-- __isLocal) and conversions (__cvta_generic_to_shared and the others),
-- on every backend. The helpers are __noinline__ so that NVVM cannot fold
-- the answers from what it knows of each pointer: the PTX runs isspacep
-- and cvta for real.
local luacuda = require "luacuda"
local S = require "spec.support"

local values = S.host_values

local SOURCE = [[
__constant__ int c[4] = {5, 6, 7, 8};
__device__ int g[4] = {1, 2, 3, 4};
namespace tables { __constant__ int nc[2] = {9, 10}; }

// global 1, shared 2, constant 4, local 8
__device__ __noinline__ unsigned kinds(const void *p) {
  return __isGlobal(p) | __isShared(p) << 1 | __isConstant(p) << 2 | __isLocal(p) << 3;
}

// each pointer to its space and back, then read through: the value read
__device__ __noinline__ int shared_round(const int *p) {
  return *(const int *)__cvta_shared_to_generic(__cvta_generic_to_shared(p));
}
__device__ __noinline__ int local_round(const int *p) {
  return *(const int *)__cvta_local_to_generic(__cvta_generic_to_local(p));
}
__device__ __noinline__ int global_round(const int *p) {
  return *(const int *)__cvta_global_to_generic(__cvta_generic_to_global(p));
}
__device__ __noinline__ int constant_round(const int *p) {
  return *(const int *)__cvta_constant_to_generic(__cvta_generic_to_constant(p));
}
__device__ __noinline__ long long shared_step(const int *p, const int *q) {
  return (long long)__cvta_generic_to_shared(q) - (long long)__cvta_generic_to_shared(p);
}
__device__ __noinline__ long long local_step(const int *p, const int *q) {
  return (long long)__cvta_generic_to_local(q) - (long long)__cvta_generic_to_local(p);
}

// row r of out, for thread t: out[r * n + t]
extern "C" __global__ void spaces(unsigned *out, const int *p) {
  __shared__ int s[64];
  extern __shared__ int dyn[];
  int l[4];
  int t = threadIdx.x, n = blockDim.x;
  s[t] = t + 100;
  dyn[t] = t + 200;
  for (int i = 0; i < 4; i++) l[i] = t * 10 + i;
  volatile int *vl = l;          // the array stays in memory
  out[t] = kinds(p + t);
  out[n + t] = kinds(&s[t]);
  out[2 * n + t] = kinds(&dyn[t]);
  out[3 * n + t] = kinds(&c[t % 4]) & ~1u;   // whether const is in global: not said
  out[4 * n + t] = kinds((const int *)&vl[t % 4]);
  out[5 * n + t] = kinds(&g[t % 4]);
  __syncthreads();               // the simulator's threads are fibers from here
  out[6 * n + t] = kinds((const int *)&vl[1]) | kinds(&s[t]) << 4 | kinds(p) << 8;
  out[7 * n + t] = shared_round(&s[(t + 1) % n]);
  out[8 * n + t] = shared_round(&dyn[(t + 2) % n]);
  out[9 * n + t] = local_round((const int *)&vl[3]);
  out[10 * n + t] = global_round(p + t) + global_round(&g[t % 4]) * 1000;
  out[11 * n + t] = constant_round(&c[t % 4]) + constant_round(&tables::nc[t % 2]) * 1000;
  out[12 * n + t] = (unsigned)shared_step(&s[0], &s[t]) + (unsigned)local_step((const int *)&vl[0], (const int *)&vl[3]) * 1000;
  out[13 * n + t] = kinds(&tables::nc[t % 2]) & ~1u;
}
]]

describe("address spaces", function()
  local N, ROWS = 64, 14
  local h

  setup(function()
    local m = luacuda.compile(SOURCE, {name = "spaces.cu"})
    local input = {}
    for i = 1, N do input[i] = i * 3 end
    local p = luacuda.to_device(input, {dtype = "int32"})
    local out = luacuda.device_array(ROWS * N, "uint32")
    m.spaces[{grid = 1, block = N, shared = N * 4}](out, p)
    h = values(out)
  end)

  local function row(r, t) return h[r * N + t + 1] end

  it("tell global, shared, constant and local memory apart", function()
    for t = 0, N - 1 do
      assert.equal(1, row(0, t), "a device array, thread " .. t)
      assert.equal(2, row(1, t), "static shared memory, thread " .. t)
      assert.equal(2, row(2, t), "dynamic shared memory, thread " .. t)
      assert.equal(4, row(3, t), "a __constant__ array, thread " .. t)
      assert.equal(8, row(4, t), "a local array, thread " .. t)
      assert.equal(1, row(5, t), "a __device__ array, thread " .. t)
      assert.equal(4, row(13, t), "a __constant__ array in a namespace, thread " .. t)
    end
  end)

  it("tell them apart after a barrier too", function()
    for t = 0, N - 1 do
      assert.equal(8 | 2 << 4 | 1 << 8, row(6, t), "thread " .. t)
    end
  end)

  it("convert generic addresses to each space and back", function()
    for t = 0, N - 1 do
      assert.equal((t + 1) % N + 100, row(7, t), "static shared, thread " .. t)
      assert.equal((t + 2) % N + 200, row(8, t), "dynamic shared, thread " .. t)
      assert.equal(t * 10 + 3, row(9, t), "local, thread " .. t)
      assert.equal((t + 1) * 3 + (t % 4 + 1) * 1000, row(10, t), "global, thread " .. t)
      assert.equal(5 + t % 4 + (9 + t % 2) * 1000, row(11, t), "constant, thread " .. t)
    end
  end)

  it("keep the distances between addresses in a space", function()
    for t = 0, N - 1 do
      assert.equal(4 * t + 12 * 1000, row(12, t), "thread " .. t)
    end
  end)
end)
