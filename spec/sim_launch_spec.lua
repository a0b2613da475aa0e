-- Launches on the simulator: the thread that runs queued work runs blocks
-- too, a small launch on it alone, a larger one with the worker threads
-- (src/backend/sim/pool.c). Whichever way a launch runs, and in whatever
-- order the sizes come, every block runs once.
local luacuda = require "luacuda"
local S = require "spec.support"

local SOURCE = [[
  extern "C" __global__ void stamp(int *out, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] += i + k;
  }
  // a barrier: the block's threads become fibers
  extern "C" __global__ void block_sums(const int *in, int *sums) {
    __shared__ int s[256];
    s[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
    for (int w = 128; w > 0; w /= 2) {
      __syncthreads();
      if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    }
    if (threadIdx.x == 0) sums[blockIdx.x] = s[0];
  }
]]

describe("launches on the simulator", function()
  if S.backend ~= "sim" then
    it("run small launches on the executor thread", function()
      pending("simulator only: how its launches are spread over threads")
    end)
    return
  end
  local m = luacuda.compile(SOURCE, {name = "sim_launch.cu"})

  it("run every block once, small and large launches of one kernel mixed", function()
    local n = 1000 * 256
    local out = luacuda.device_array(n, "int32")
    local expect = {}
    for i = 1, n do expect[i] = 0 end
    out:fill(0)
    -- small (one block, then a few), large (the pool), then small again: each
    -- launch's size against what the kernel's last launch took
    for round, blocks in ipairs({1, 4, 1000, 1, 3, 1000, 2, 1}) do
      m.stamp[{blocks, 256}](out, n, round)
      for i = 1, blocks * 256 do expect[i] = expect[i] + (i - 1) + round end
    end
    local got = out:totable()
    for i = 1, n, 997 do assert.equal(expect[i], got[i], "element " .. i) end
    for i = n - 300, n do assert.equal(expect[i], got[i], "element " .. i) end
  end)

  it("run barriers the same way, one block or many", function()
    local blocks = 300
    local t = {}
    for i = 1, blocks * 256 do t[i] = i % 7 end
    local x = luacuda.to_device(t, {dtype = "int32"})
    local sums = luacuda.device_array(blocks, "int32")
    local function expected(b)
      local s = 0
      for i = (b - 1) * 256 + 1, b * 256 do s = s + t[i] end
      return s
    end
    for _, g in ipairs({1, blocks, 2, 1, blocks}) do
      sums:fill(-1)
      m.block_sums[{g, 256}](x, sums)
      local got = sums:totable()
      for b = 1, g do assert.equal(expected(b), got[b], ("block %d of %d"):format(b, g)) end
      if g < blocks then assert.equal(-1, got[g + 1], "a block past the grid ran") end
    end
  end)
end)
