-- CUDA's warp functions: the shuffles, votes, matches, reductions,
-- __activemask and __syncwarp with a mask, every expected value computed
-- here from the CUDA C++ Programming Guide's description. The kernels are
-- valid CUDA. Both backends converge the lanes at one call as a GPU does
-- one instruction, give a poison value for a source lane that does not
-- execute a shuffle and refuse masks that disagree (the kernels guide's
-- warps section); the rest of the misuse CUDA leaves undefined is checked
-- on the simulator only (kernels/sim_runtime.h, "warps").
local luacuda = require "luacuda"
local S = require "spec.support"

local values = S.host_values
local FULL = 0xffffffff
-- what a shuffle reads from a lane that exited or does not execute it
-- (undefined in CUDA): the poison of both backends, as uint32 and int32
local POISON = 0xa5a5a5a5
local POISON32 = POISON - (1 << 32)

local SOURCE = [[
// every shuffle of in[t], each into its own row of out (n = blockDim.x)
template <typename T>
__device__ void shuffles(const T *in, T *out, int width) {
  int t = threadIdx.x, n = blockDim.x;
  T v = in[t];
  out[t] = __shfl_sync(0xffffffffu, v, 3, width);
  out[n + t] = __shfl_sync(0xffffffffu, v, t + 5, width);      // past the width: modulo
  out[2 * n + t] = __shfl_up_sync(0xffffffffu, v, 3, width);
  out[3 * n + t] = __shfl_down_sync(0xffffffffu, v, 3, width);
  out[4 * n + t] = __shfl_xor_sync(0xffffffffu, v, 5, width);
  out[5 * n + t] = __shfl_xor_sync(0xffffffffu, v, 17, width);  // a later group: its own
}
extern "C" __global__ void shfl_int(const int *in, int *out, int width) { shuffles(in, out, width); }
extern "C" __global__ void shfl_float(const float *in, float *out, int width) { shuffles(in, out, width); }
extern "C" __global__ void shfl_double(const double *in, double *out, int width) { shuffles(in, out, width); }
extern "C" __global__ void shfl_ll(const long long *in, long long *out, int width) { shuffles(in, out, width); }
extern "C" __global__ void shfl_unsigned(const unsigned *in, unsigned *out, int width) { shuffles(in, out, width); }
extern "C" __global__ void shfl_ull(const unsigned long long *in, unsigned long long *out, int width) { shuffles(in, out, width); }

// a grid-stride sum, reduced in each warp by shuffles, then across the
// block's warps by the first warp
extern "C" __global__ void warp_sum(const int *x, long long *out, int n) {
  __shared__ long long partial[32];
  long long v = 0;
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += blockDim.x * gridDim.x) v += x[k];
  for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
  int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  if (lane == 0) partial[w] = v;
  __syncthreads();
  if (w == 0) {
    v = lane < (int)(blockDim.x / 32) ? partial[lane] : 0;
    for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
    if (lane == 0) out[blockIdx.x] = v;
  }
}

// votes: three per thread, the last two inside a branch of lanes < 20
extern "C" __global__ void votes(unsigned *out) {
  int t = threadIdx.x, lane = t % 32, n = blockDim.x;
  out[t] = __ballot_sync(0xffffffffu, t % 3 == 0);
  out[n + t] = __any_sync(0xffffffffu, t == 37) + 2 * __all_sync(0xffffffffu, t < 40)
             + 4 * __all_sync(0xffffffffu, t >= 0) + 8 * __any_sync(0xffffffffu, t < 0);
  if (lane < 20) {
    out[2 * n + t] = __ballot_sync(0x000fffffu, lane % 4 == 1);
    out[3 * n + t] = __any_sync(0x000fffffu, lane == 19) + 2 * __all_sync(0x000fffffu, lane < 20)
                   + 4 * __all_sync(0x000fffffu, lane < 19);
  } else {
    out[2 * n + t] = __ballot_sync(0xfff00000u, lane > 29);
    out[3 * n + t] = __any_sync(0xfff00000u, lane == 3) + 2 * __all_sync(0xfff00000u, lane >= 20);
  }
}

extern "C" __global__ void active(unsigned *out) {
  int t = threadIdx.x;
  out[t] = 7;
  if (t % 3 == 0 || t % 32 >= 27) return;
  out[t] = __activemask();
}

// lanes in groups of four by value; 64-bit values that differ above bit 32
extern "C" __global__ void matches(unsigned *out) {
  int t = threadIdx.x, lane = t % 32, n = blockDim.x, p = -1, q = -1;
  out[t] = __match_any_sync(0xffffffffu, lane / 4);
  out[n + t] = __match_any_sync(0xffffffffu, (long long)(lane % 2) << 40);
  out[2 * n + t] = __match_any_sync(0xffffffffu, lane < 8 ? 1.5 : -0.25);
  out[3 * n + t] = __match_all_sync(0xffffffffu, 42.0f, &p);
  out[4 * n + t] = p;
  out[5 * n + t] = __match_all_sync(0xffffffffu, lane == 31 ? 1u : 0u, &q);
  out[6 * n + t] = q;
  if (lane >= 8 && lane < 16) {
    out[7 * n + t] = __match_all_sync(0x0000ff00u, (unsigned long long)lane / 8, &p);
    out[8 * n + t] = p;
  } else {
    out[7 * n + t] = 0;
    out[8 * n + t] = 0;
  }
}

// even lanes only: they trade values through shared memory between
// __syncwarp(0x55555555) calls while the odd lanes return
extern "C" __global__ void even_lanes(int *out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  if (t % 2) { out[t] = -1; return; }
  s[t] = t * 10;
  __syncwarp(0x55555555u);
  int r = s[t ^ 2];
  __syncwarp(0x55555555u);
  s[t] = r + 1000;
  __syncwarp(0x55555555u);
  out[t] = s[t ^ 6];
}

// each half warp synchronises on its own mask
extern "C" __global__ void halves(int *out) {
  __shared__ int s[64];
  int t = threadIdx.x, lane = t % 32;
  unsigned mask = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  s[t] = t;
  __syncwarp(mask);
  int r = s[(t & ~15) + (lane + 1) % 16];
  __syncwarp(mask);
  s[t] = r * 3;
  __syncwarp(mask);
  out[t] = s[(t & ~15) + (lane + 15) % 16];
}

// lanes 24..31 return; the others synchronise with the full mask
extern "C" __global__ void after_return(int *out) {
  __shared__ int s[64];
  int t = threadIdx.x, lane = t % 32;
  out[t] = -1;
  if (lane >= 24) return;
  s[t] = t + 100;
  __syncwarp();
  out[t] = s[(t & ~31) + (lane + 1) % 24] + __ballot_sync(0xffffffffu, 1) % 1000;
}

// the first warp returns at once: the second starts its shuffles alone
extern "C" __global__ void second_warp(int *out) {
  if (threadIdx.x < 32) return;
  int lane = threadIdx.x % 32;
  out[lane] = __shfl_sync(0xffffffffu, lane * lane, 31 - lane) + __shfl_xor_sync(0xffffffffu, lane, 1) * 1000;
}

// a block whose last warp is partial (blockDim.x = 50: lanes 0..17 of warp 1)
extern "C" __global__ void partial(unsigned *out) {
  int t = threadIdx.x, lane = t % 32, n = blockDim.x;
  out[t] = __ballot_sync(0xffffffffu, lane % 2 == 0);
  out[n + t] = __shfl_xor_sync(0xffffffffu, t * 7, 1);
  out[2 * n + t] = __all_sync(0xffffffffu, 1) + 2 * __any_sync(0xffffffffu, lane == 20);
  out[3 * n + t] = __activemask();
  __syncwarp();
  out[4 * n + t] = __match_any_sync(0xffffffffu, lane / 16);
  int p = -1;
  out[5 * n + t] = __match_all_sync(0xffffffffu, 7, &p);
  out[6 * n + t] = p;
}

// warps are cut from the linear index of a 2-D block: x, then y
extern "C" __global__ void linear(int *out) {
  int t = threadIdx.x + blockDim.x * threadIdx.y;
  out[t] = __shfl_down_sync(0xffffffffu, t, 4, 8);
}

// what CUDA leaves undefined: sources that do not execute the shuffle
extern "C" __global__ void undefined_sources(int *out) {
  int t = threadIdx.x;
  if (t == 0) return;
  out[t] = __shfl_sync(0xffffffffu, t * 2, 0);                  // lane 0 returned
  out[32 + t] = __shfl_sync(0xfffffffeu, t * 3, t == 1 ? 1 : 0);
  out[64 + t] = t < 16 ? __shfl_down_sync(0x0000fffeu, t * 5, 1) : 0;
}

// lanes 8..31 go on to a __syncwarp while lanes 0..7 ask for the active mask
extern "C" __global__ void active_branch(unsigned *out) {
  int lane = threadIdx.x % 32;
  unsigned a = 0;
  if (threadIdx.x == 40) return;
  if (lane < 8) a = __activemask();
  __syncwarp(__ballot_sync(0xffffffffu, 1));
  out[threadIdx.x] = a;
}

// an assert in a lane after the first lanes returned and the rest met
extern "C" __global__ void assert_late(int *out) {
  if (threadIdx.x < 3) return;
  __syncwarp(0xfffffff8u);
  assert(threadIdx.x != 5);
  out[threadIdx.x] = 1;
}

// a block-level tree in shared memory down to 8 partials, then the first
// warp ends with shuffles: lanes 0..7 (the partials) name each other in
// their member mask, lanes 8..31 (holding 0) run the same shuffles under
// the complement; a lane reading past lane 7 reads a lane that executes
// the same instruction, outside its own mask, and gets its 0
extern "C" __global__ void tree_sum(const int *x, int *out) {
  __shared__ int s[256];
  int t = threadIdx.x;
  s[t] = x[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (int half = blockDim.x / 2; half >= 8; half /= 2) {
    if (t < half) s[t] += s[t + half];
    __syncthreads();
  }
  if (t < 32) {
    unsigned partials = __ballot_sync(0xffffffffu, t < 8);
    unsigned mask = t < 8 ? partials : ~partials;
    int v = t < 8 ? s[t] : 0;
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(mask, v, off);
    if (t == 0) out[blockIdx.x] = v;
  }
}

// lanes 24..31 return; the others read lanes 4 and 8 further on
extern "C" __global__ void exited_sources(unsigned *out) {
  int t = threadIdx.x, lane = t % 32;
  out[t] = out[32 + t] = 1;
  if (lane >= 24) return;
  out[t] = __shfl_down_sync(0x00ffffffu, t * 10u, 4);
  out[32 + t] = __shfl_sync(0xffffffffu, t * 10u, lane + 8);
}

// lanes 0..15 and 16..31 call the same shuffle with masks that disagree
extern "C" __global__ void disagree(int *out) {
  int lane = threadIdx.x % 32;
  out[threadIdx.x] = __shfl_sync(lane < 16 ? 0x0000ffffu : 0xffffffffu, lane, 0);
}

// lane 0 sleeps until lanes 1..31, past a shuffle of theirs, set a flag:
// a lane asleep does not hold back the calls of the others
extern "C" __global__ void sleeper(int *out) {
  __shared__ volatile int flag;
  int lane = threadIdx.x;
  if (lane == 0) flag = 0;
  __syncthreads();
  if (lane == 0) {
    while (!flag) __nanosleep(100);
    out[0] = -1;
  } else {
    int v = __shfl_down_sync(0xfffffffeu, lane * 3, 1);
    out[lane] = v;
    __syncwarp(0xfffffffeu);
    if (lane == 1) flag = 1;
  }
}

// misuse, for the simulator's diagnoses
extern "C" __global__ void not_in_mask(int *out) { out[threadIdx.x] = __shfl_sync(0x2u, 1, 0); }
extern "C" __global__ void bad_width(int *out, int w) { out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1, 1, w); }
extern "C" __global__ void mixed(int *out) {
  if (threadIdx.x % 2) out[threadIdx.x] = __any_sync(0xffffffffu, 1);
  else out[threadIdx.x] = __ballot_sync(0xffffffffu, 1);
}
extern "C" __global__ void warp_stuck(int *out) {
  if (threadIdx.x == 5) __syncthreads();
  else out[threadIdx.x] = __shfl_sync(0xffffffffu, 1, 5);
}
]]

-- the reductions need compute capability 8.0 on a GPU
local REDUCE_SOURCE = [[
extern "C" __global__ void reductions(unsigned *u, int *i) {
  int t = threadIdx.x, lane = t % 32, n = blockDim.x;
  unsigned v = lane * 3u + 1u;
  int s = lane % 2 ? -lane * 5 : lane;
  u[t] = __reduce_add_sync(0xffffffffu, v);
  u[n + t] = __reduce_min_sync(0xffffffffu, v + 7u);
  u[2 * n + t] = __reduce_max_sync(0xffffffffu, v);
  u[3 * n + t] = __reduce_and_sync(0xffffffffu, v | 0x100u);
  u[4 * n + t] = __reduce_or_sync(0xffffffffu, 1u << lane);
  u[5 * n + t] = __reduce_xor_sync(0xffffffffu, v);
  i[t] = __reduce_add_sync(0xffffffffu, s);
  i[n + t] = __reduce_min_sync(0xffffffffu, s);
  i[2 * n + t] = __reduce_max_sync(0xffffffffu, s);
  if (lane < 10) u[6 * n + t] = __reduce_add_sync(0x3ffu, v);
  else u[6 * n + t] = __reduce_max_sync(0xfffffc00u, v);
}

// full masks after lanes 20..31 of each warp returned: valid CUDA, which
// waits for and combines the lanes that did not exit
extern "C" __global__ void exited_members(unsigned *out) {
  int t = threadIdx.x, lane = t % 32, n = blockDim.x;
  out[t] = out[n + t] = out[2 * n + t] = out[3 * n + t] = 0;
  if (lane >= 20) return;
  out[t] = __reduce_add_sync(0xffffffffu, lane + 1u);
  out[n + t] = __match_any_sync(0xffffffffu, lane / 8);
  out[2 * n + t] = __shfl_sync(0xffffffffu, t * 3u, 19);
  __syncwarp();
  out[3 * n + t] = __ballot_sync(0xffffffffu, lane % 2);
}
]]

local m
setup(function()
  m = luacuda.compile(SOURCE, {name = "warp.cu"})
end)

-- the lanes of a 32-bit mask, as a set of 0-based numbers
local function bits(list)
  local r = 0
  for _, b in ipairs(list) do r = r | (1 << b) end
  return r
end

-- The source lane of each shuffle, as the Programming Guide states it.
local function idx(lane, src, w) return lane - lane % w + src % w end
local function up(lane, d, w) if lane % w >= d then return lane - d end return lane end
local function down(lane, d, w) if lane % w + d < w then return lane + d end return lane end
local function xor(lane, lm, w)
  local j = lane ~ lm
  if j // w > lane // w then return lane end     -- a later group: its own value
  return j
end

describe("warp shuffles", function()
  local N = 64   -- two warps
  local kinds = {
    {"shfl_int", "int32", function(t) return t * 7 - 100 end},
    {"shfl_float", "float32", function(t) return t * 0.5 - 3.25 end},
    {"shfl_double", "float64", function(t) return (t + 1) / 3 * 1e-5 end},
    {"shfl_ll", "int64", function(t) return t * 0x100000001 - 5 end},
    {"shfl_unsigned", "uint32", function(t) return 0xfffffff0 - t end},
    {"shfl_ull", "uint64", function(t) return (t << 35) | t end},
  }
  for _, k in ipairs(kinds) do
    local kernel, dtype, value = k[1], k[2], k[3]
    for _, width in ipairs({32, 16, 8}) do
      it(("moves %s values, width %d"):format(dtype, width), function()
        local input = {}
        for t = 0, N - 1 do input[t + 1] = value(t) end
        local x = luacuda.to_device(input, {dtype = dtype})
        local out = luacuda.device_array(6 * N, dtype)
        m[kernel][{1, N}](x, out, width)
        local h = values(out)
        for t = 0, N - 1 do
          local lane, base = t % 32, t - t % 32
          local function at(src) return input[base + src + 1] end
          local want = {at(idx(lane, 3, width)), at(idx(lane, t + 5, width)),
                        at(up(lane, 3, width)), at(down(lane, 3, width)),
                        at(xor(lane, 5, width)), at(xor(lane, 17, width))}
          for r = 1, 6 do
            assert.equal(want[r], h[(r - 1) * N + t + 1],
                         ("%s width %d, shuffle %d, thread %d"):format(kernel, width, r, t))
          end
        end
      end)
    end
  end

  it("sum 5000 elements over several blocks", function()
    local n, input, total = 5000, {}, 0
    for i = 1, n do
      input[i] = (i * 37) % 101 - 50
      total = total + input[i]
    end
    local x = luacuda.to_device(input, {dtype = "int32"})
    for _, cfg in ipairs({{4, 128}, {3, 96}, {7, 32}, {2, 1024}}) do
      local out = luacuda.device_array(cfg[1], "int64")
      m.warp_sum[cfg](x, out, n)
      local sum = 0
      for _, v in ipairs(values(out)) do sum = sum + v end
      assert.equal(total, sum, ("grid %d, block %d"):format(cfg[1], cfg[2]))
    end
  end)

  it("cut warps from the linear thread index of a 2-D block", function()
    local out = luacuda.device_array(96, "int32")
    m.linear[{1, {16, 6}}](out)
    local h = values(out)
    for t = 0, 95 do
      local lane = t % 32
      assert.equal(t - lane + down(lane, 4, 8), h[t + 1], "thread " .. t)
    end
  end)

  it("start in a warp after another warp returned", function()
    local out = luacuda.device_array(32, "int32")
    m.second_warp[{1, 64}](out)
    local h = values(out)
    for lane = 0, 31 do
      assert.equal((31 - lane) * (31 - lane) + (lane ~ 1) * 1000, h[lane + 1], "lane " .. lane)
    end
  end)

  it("give a source lane that exited or does not execute the shuffle a poison value", function()
    local out = luacuda.to_device(luacuda.zeros(96, "int32"))
    m.undefined_sources[{1, 32}](out)
    local h = values(out)
    for t = 1, 31 do
      assert.equal(POISON32, h[t + 1], "lane 0 returned " .. t)
      assert.equal(t == 1 and 3 or POISON32, h[32 + t + 1], "lane 0 returned, not in the mask " .. t)
      local want = t < 15 and (t + 1) * 5 or t < 16 and POISON32 or 0
      assert.equal(want, h[64 + t + 1], "down " .. t)        -- lane 16 not at the shuffle
    end
  end)

  it("read a lane outside the member mask that executes the same shuffle (a tree, then a warp)", function()
    local blocks, input, sums = 2, {}, {}
    for b = 1, blocks do
      sums[b] = 0
      for i = 1, 256 do
        local v = ((b * 256 + i) * 37) % 101 - 50
        input[#input + 1] = v
        sums[b] = sums[b] + v
      end
    end
    local x = luacuda.to_device(input, {dtype = "int32"})
    local out = luacuda.device_array(blocks, "int32")
    m.tree_sum[{blocks, 256}](x, out)
    assert.same(sums, values(out))
  end)

  it("give a poison value from a source lane that exited, whatever the mask", function()
    local out = luacuda.device_array(64, "uint32")
    m.exited_sources[{1, 32}](out)
    local h = values(out)
    for t = 0, 31 do
      if t >= 24 then
        assert.same({1, 1}, {h[t + 1], h[32 + t + 1]}, "lane " .. t)
      else
        assert.equal(t < 20 and (t + 4) * 10 or POISON, h[t + 1], "down, lane " .. t)
        assert.equal(t < 16 and (t + 8) * 10 or POISON, h[32 + t + 1], "idx, lane " .. t)
      end
    end
  end)

  it("do not wait for a lane asleep in __nanosleep", function()
    local out = luacuda.device_array(32, "int32")
    m.sleeper[{1, 32}](out)
    local h = values(out)
    assert.equal(-1, h[1])
    for lane = 1, 31 do assert.equal(lane < 31 and (lane + 1) * 3 or 93, h[lane + 1], "lane " .. lane) end
  end)

  it("refuse lanes of one call whose member masks disagree, naming both masks", function()
    if S.backend == "sim" then
      local out = luacuda.device_array(32, "int32")
      S.misuse({"kernel 'disagree' failed", "__shfl_sync: member masks disagree",
                "0xffffffff", "0x0000ffff"}, function() m.disagree[{1, 32}](out); luacuda.synchronize() end)
      return
    end
    -- a GPU's launch failure is sticky: in a child
    local ok, out = S.lua_run("", ([[
      local luacuda = require "luacuda"
      local m = luacuda.compile(%q, {name = "disagree.cu"})
      local out = luacuda.device_array(32, "int32")
      m.disagree[{1, 32}](out)
      luacuda.synchronize()
    ]]):format(SOURCE:match('extern "C" __global__ void disagree.-\n}\n')))
    assert.is_false(ok, out)
    for _, p in ipairs({"shfl.sync: member masks disagree", "0xffffffff", "0x0000ffff"}) do
      assert.truthy(out:find(p, 1, true), out)
    end
  end)
end)

describe("warp votes", function()
  it("ballot, any and all with divergent predicates and masks", function()
    local N = 64
    local out = luacuda.device_array(4 * N, "uint32")
    m.votes[{1, N}](out)
    local h = values(out)
    for t = 0, N - 1 do
      local lane, base = t % 32, t - t % 32
      local third = {}
      for l = 0, 31 do if (base + l) % 3 == 0 then third[#third + 1] = l end end
      assert.equal(bits(third), h[t + 1], "ballot " .. t)
      -- any(t == 37), all(t < 40): per warp
      local any37 = base == 32 and 1 or 0
      local all40 = base == 0 and 1 or 0
      assert.equal(any37 + 2 * all40 + 4, h[N + t + 1], "any/all " .. t)
      if lane < 20 then
        assert.equal(bits({1, 5, 9, 13, 17}), h[2 * N + t + 1], "branch ballot " .. t)
        assert.equal(1 + 2, h[3 * N + t + 1], "branch any/all " .. t)
      else
        assert.equal(bits({30, 31}), h[2 * N + t + 1], "branch ballot " .. t)
        assert.equal(2, h[3 * N + t + 1], "branch any/all " .. t)
      end
    end
  end)

  it("activemask gives the lanes converged at its call, not those of another branch", function()
    local out = luacuda.to_device(luacuda.zeros(64, "uint32"))
    m.active_branch[{1, 64}](out)
    local h = values(out)
    for t = 0, 63 do
      assert.equal(t % 32 < 8 and 0xff or 0, h[t + 1], "thread " .. t)
    end
  end)

  it("activemask leaves out the lanes that returned", function()
    local N = 80
    local out = luacuda.device_array(N, "uint32")
    m.active[{1, N}](out)
    local h = values(out)
    for t = 0, N - 1 do
      local base, live = t - t % 32, {}
      for l = 0, 31 do
        local u = base + l
        if u < N and u % 3 ~= 0 and l < 27 then live[#live + 1] = l end
      end
      if t % 3 == 0 or t % 32 >= 27 then
        assert.equal(7, h[t + 1])
      else
        assert.equal(bits(live), h[t + 1], "thread " .. t)
      end
    end
  end)
end)

describe("warp matches", function()
  it("match_any and match_all on 32- and 64-bit values", function()
    local N = 64
    local out = luacuda.device_array(9 * N, "uint32")
    m.matches[{1, N}](out)
    local h = values(out)
    for t = 0, N - 1 do
      local lane = t % 32
      local function row(r) return h[r * N + t + 1] end
      assert.equal(0xf << (lane // 4 * 4), row(0), "by fours " .. t)
      assert.equal(lane % 2 == 0 and 0x55555555 or 0xaaaaaaaa, row(1), "high bits " .. t)
      assert.equal(lane < 8 and 0xff or 0xffffff00, row(2), "doubles " .. t)
      assert.same({FULL, 1}, {row(3), row(4)}, "all equal " .. t)
      assert.same({0, 0}, {row(5), row(6)}, "lane 31 differs " .. t)
      if lane >= 8 and lane < 16 then
        assert.same({0xff00, 1}, {row(7), row(8)}, "partial mask " .. t)
      end
    end
  end)
end)

describe("warp reductions", function()
  it("add, min, max, and, or, xor, unsigned and signed", function()
    if S.backend == "cuda" and luacuda.devices()[1].compute_capability[1] < 8 then
      return pending("__reduce_*_sync needs compute capability 8.0")
    end
    -- the simulator is a device of compute capability 7.5, for which NVRTC
    -- (its parity check) has no __reduce_*_sync: it is asked for 8.0
    local options = S.backend == "sim" and {"-arch=compute_80"} or nil
    local r = luacuda.compile(REDUCE_SOURCE, {name = "reduce.cu", options = options})
    local N = 64
    local u = luacuda.device_array(7 * N, "uint32")
    local i = luacuda.device_array(3 * N, "int32")
    r.reductions[{1, N}](u, i)
    local hu, hi = values(u), values(i)
    local add, mn, mx, band, bor, bxor = 0, math.huge, 0, FULL, 0, 0
    local sadd, smin, smax = 0, math.huge, -math.huge
    local low, high = 0, 0
    for lane = 0, 31 do
      local v = lane * 3 + 1
      add, mn, mx = add + v, math.min(mn, v + 7), math.max(mx, v)
      band, bor, bxor = band & (v | 0x100), bor | (1 << lane), bxor ~ v
      local s = lane % 2 == 1 and -lane * 5 or lane
      sadd, smin, smax = sadd + s, math.min(smin, s), math.max(smax, s)
      if lane < 10 then low = low + v else high = math.max(high, v) end
    end
    for t = 0, N - 1 do
      local function U(k) return hu[k * N + t + 1] end
      local function I(k) return hi[k * N + t + 1] end
      assert.same({add, mn, mx, band, bor, bxor}, {U(0), U(1), U(2), U(3), U(4), U(5)}, "thread " .. t)
      assert.same({sadd, smin, smax}, {I(0), I(1), I(2)}, "signed, thread " .. t)
      assert.equal(t % 32 < 10 and low or high, U(6), "partial masks, thread " .. t)
    end
  end)

  it("with full masks after some lanes returned, combine the lanes left", function()
    if S.backend == "cuda" and luacuda.devices()[1].compute_capability[1] < 8 then
      return pending("__reduce_*_sync needs compute capability 8.0")
    end
    local options = S.backend == "sim" and {"-arch=compute_80"} or nil
    local r = luacuda.compile(REDUCE_SOURCE, {name = "reduce.cu", options = options})
    local N = 64
    local out = luacuda.device_array(4 * N, "uint32")
    r.exited_members[{1, N}](out)
    local h = values(out)
    local odd = {}
    for l = 1, 19, 2 do odd[#odd + 1] = l end
    for t = 0, N - 1 do
      local lane, base = t % 32, t - t % 32
      local function row(k) return h[k * N + t + 1] end
      if lane >= 20 then
        assert.same({0, 0, 0, 0}, {row(0), row(1), row(2), row(3)}, "thread " .. t)
      else
        assert.equal(20 * 21 // 2, row(0), "reduce, thread " .. t)
        local group = lane // 8 == 2 and 0xf0000 or 0xff << (lane // 8 * 8)
        assert.equal(group, row(1), "match_any, thread " .. t)
        assert.equal((base + 19) * 3, row(2), "shfl, thread " .. t)
        assert.equal(bits(odd), row(3), "ballot, thread " .. t)
      end
    end
  end)
end)

describe("__syncwarp", function()
  it("synchronises only the lanes of its mask", function()
    local out = luacuda.device_array(64, "int32")
    m.even_lanes[{1, 64}](out)
    local h = values(out)
    for t = 0, 63 do
      if t % 2 == 1 then
        assert.equal(-1, h[t + 1])
      else
        -- s[t ^ 6] after the second phase holds s[(t ^ 6) ^ 2] of the first
        assert.equal(((t ~ 6) ~ 2) * 10 + 1000, h[t + 1], "thread " .. t)
      end
    end
  end)

  it("lets two masks of one warp synchronise apart", function()
    local out = luacuda.device_array(64, "int32")
    m.halves[{1, 64}](out)
    local h = values(out)
    for t = 0, 63 do
      -- out[t] = s[t's left neighbour] = 3 * (that one's right neighbour) = 3 * t
      assert.equal(3 * t, h[t + 1], "thread " .. t)
    end
  end)

  it("does not wait for lanes that returned", function()
    local out = luacuda.device_array(64, "int32")
    m.after_return[{1, 64}](out)
    local h = values(out)
    for t = 0, 63 do
      local lane, base = t % 32, t - t % 32
      if lane >= 24 then
        assert.equal(-1, h[t + 1])
      else
        assert.equal(base + (lane + 1) % 24 + 100 + 0xffffff % 1000, h[t + 1], "thread " .. t)
      end
    end
  end)
end)

describe("a block whose last warp is partial", function()
  it("has warp functions over the lanes it has", function()
    local N = 50
    local out = luacuda.device_array(7 * N, "uint32")
    m.partial[{1, N}](out)
    local h = values(out)
    for t = 0, N - 1 do
      local lane, base = t % 32, t - t % 32
      local size = math.min(32, N - base)
      local even, lanes = {}, {}
      for l = 0, size - 1 do
        if l % 2 == 0 then even[#even + 1] = l end
        lanes[#lanes + 1] = l
      end
      local function row(r) return h[r * N + t + 1] end
      assert.equal(bits(even), row(0), "ballot " .. t)
      assert.equal((base + (lane ~ 1)) * 7, row(1), "xor " .. t)
      assert.equal(1 + (size > 20 and 2 or 0), row(2), "all/any " .. t)
      assert.equal(bits(lanes), row(3), "activemask " .. t)
      local group = {}
      for l = 0, size - 1 do if l // 16 == lane // 16 then group[#group + 1] = l end end
      assert.equal(bits(group), row(4), "match_any " .. t)
      assert.same({bits(lanes), 1}, {row(5), row(6)}, "match_all " .. t)
    end
  end)
end)

describe("warp misuse on the simulator", function()
  local function run(kernel, cfg, ...)
    local out = luacuda.device_array(64, "int32")
    m[kernel][cfg](out, ...)
    luacuda.synchronize()
  end

  it("reports a mask without the caller, a bad width, mixed functions and a stuck mask", function()
    if S.backend ~= "sim" then return pending("simulator only: the simulator's diagnoses of what CUDA leaves undefined") end
    S.misuse({"kernel 'not_in_mask' failed",
              "__shfl_sync: mask 0x00000002 does not name the calling thread (0, 0, 0) (lane 0)"},
             run, "not_in_mask", {1, 2})
    S.misuse({"kernel 'bad_width' failed", "__shfl_xor_sync: width 12 is not a power of 2 from 1 to 32"},
             run, "bad_width", {1, 32}, 12)
    S.misuse("width 64 is not a power of 2", run, "bad_width", {1, 32}, 64)
    S.misuse({"kernel 'mixed' failed", "warp functions of mask 0xffffffff differ",
              "__ballot_sync", "__any_sync"}, run, "mixed", {1, 32})
    S.misuse({"kernel 'warp_stuck' failed", "__shfl_sync(0xffffffff) never completes",
              "waits for lanes 0x00000020 of its warp"}, run, "warp_stuck", {1, 32})
    S.misuse({"kernel 'assert_late' failed", "assertion 'threadIdx.x != 5' failed",
              "thread (5, 0, 0)"}, run, "assert_late", {1, 32})
    -- and the simulator carries on
    local out = luacuda.device_array(32, "int32")
    m.second_warp[{1, 64}](out)
    assert.equal(31 * 31 + 1000, values(out)[1])
  end)
end)
