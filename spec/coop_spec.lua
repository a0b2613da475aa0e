-- Cooperative groups (<cooperative_groups.h>, reduce.h, scan.h) and
-- cooperative launches ({cooperative = true}, this_grid().sync()), every
-- expected value computed here from the CUDA C++ Programming Guide's
-- description. On the simulator the headers are luacuda's own
-- (kernels/sim_include/); through NVRTC, the toolkit's.
local luacuda = require "luacuda"
local S = require "spec.support"

local values = S.host_values

-- A relay kernel over nb blocks and rounds of grid barriers: in round k each
-- block writes row k from what the block before it wrote in row k - 1, so a
-- block that ran ahead of a barrier reads a stale row.
local function relay(kernel, nb, rounds)
  local a = luacuda.to_device(luacuda.zeros((rounds + 1) * nb, "int32"))
  for b = 1, nb do a[b] = b * 100 end
  kernel:launch({grid = nb, block = 64, cooperative = true}, a, rounds)
  local h = values(a)
  for k = 1, rounds do
    for b = 0, nb - 1 do
      local from = (b - k) % nb
      assert.equal((from + 1) * 100 + k, h[k * nb + b + 1], ("round %d, block %d"):format(k, b))
    end
  end
end

local SOURCE = [[
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;

// each block's sum: each warp reduces with cg::reduce, then the first warp
// the warps' sums (a grid-stride loop, any grid)
extern "C" __global__ void block_sum(const int *x, long long *out, int n) {
  __shared__ long long partial[32];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  long long v = 0;
  for (int i = block.group_index().x * block.size() + block.thread_rank(); i < n;
       i += gridDim.x * block.size())
    v += x[i];
  v = cg::reduce(warp, v, cg::plus<long long>());
  if (warp.thread_rank() == 0) partial[warp.meta_group_rank()] = v;
  block.sync();
  if (warp.meta_group_rank() == 0) {
    v = warp.thread_rank() < warp.meta_group_size() ? partial[warp.thread_rank()] : 0;
    v = cg::reduce(warp, v, cg::plus<long long>());
    if (warp.thread_rank() == 0) out[block.group_index().x] = v;
  }
}

// a warp's minimum, maximum, and, or, xor of x (one warp per 32 values)
extern "C" __global__ void warp_ops(const int *x, int *out) {
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  int t = blockIdx.x * blockDim.x + threadIdx.x, v = x[t];
  out[5 * t] = cg::reduce(warp, v, cg::less<int>());
  out[5 * t + 1] = cg::reduce(warp, v, cg::greater<int>());
  out[5 * t + 2] = cg::reduce(warp, v, cg::bit_and<int>());
  out[5 * t + 3] = cg::reduce(warp, v, cg::bit_or<int>());
  out[5 * t + 4] = cg::reduce(warp, v, cg::bit_xor<int>());
}

// what a thread of a 2-d block knows of its block
extern "C" __global__ void block_shape(unsigned *out) {
  cg::thread_block b = cg::this_thread_block();
  unsigned *o = out + 8 * (blockIdx.x * b.size() + b.thread_rank());
  o[0] = b.size();
  o[1] = b.num_threads();
  o[2] = b.thread_rank();
  o[3] = b.thread_index().x;
  o[4] = b.thread_index().y;
  o[5] = b.group_index().x;
  o[6] = b.dim_threads().x * 100 + b.dim_threads().y;
  o[7] = cg::thread_rank(b) + 1000 * cg::group_size(b);
}

// tiles of 16 and, within them, of 8
extern "C" __global__ void tiles(int *out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(block);
  cg::thread_block_tile<8> t8 = cg::tiled_partition<8>(t16);
  int r = block.thread_rank(), *o = out + 16 * r;
  o[0] = t16.meta_group_rank();
  o[1] = t16.meta_group_size();
  o[2] = t16.thread_rank() + 100 * t16.size();
  o[3] = t8.meta_group_rank();
  o[4] = t8.meta_group_size();
  o[5] = t16.shfl(r * 10, 3);
  o[6] = t16.shfl_down(r, 4);
  o[7] = t8.shfl_up(r, 2);
  o[8] = t16.shfl_xor(r, 5);
  o[9] = (int)t16.ballot(r % 3 == 0);
  o[10] = t8.any(r == 13) + 2 * t8.all(r < 60);
  o[11] = cg::reduce(t8, r, cg::greater<int>()) * 1000 + cg::reduce(t16, r, cg::less<int>());
  o[12] = (int)t16.match_any(r / 4 % 2);
  o[13] = cg::inclusive_scan(t16, r % 5);
  o[14] = cg::exclusive_scan(t8, r, cg::plus<int>());
  o[15] = cg::inclusive_scan(t8, (r * 7) % 11, cg::greater<int>());
  t16.sync();
}

// tiles cut at run time
extern "C" __global__ void dynamic_tiles(int *out, int n) {
  cg::thread_group tile = cg::tiled_partition(cg::this_thread_block(), n);
  cg::thread_group sub = cg::tiled_partition(tile, 2);
  tile.sync();
  out[2 * threadIdx.x] = (int)(tile.size() * 100 + tile.thread_rank());
  out[2 * threadIdx.x + 1] = (int)(sub.size() * 100 + sub.thread_rank());
}

// the lanes that take a branch, as a group: its size, each one's rank,
// the first member's value, a reduction over the group and a ballot
extern "C" __global__ void coalesced(int *out) {
  int t = threadIdx.x, *o = out + 5 * t;
  o[0] = o[1] = o[2] = o[3] = o[4] = -1;
  if (t % 3 == 0 || t == 7) {
    cg::coalesced_group g = cg::coalesced_threads();
    o[0] = g.size();
    o[1] = g.thread_rank();
    o[2] = g.shfl(t, 0);
    o[3] = cg::reduce(g, t, cg::plus<int>());
    o[4] = (int)g.ballot(t % 2 == 0);
  }
}

// partitions of a warp by a label, and by a predicate
extern "C" __global__ void partitions(int *out) {
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  int t = threadIdx.x, *o = out + 6 * t;
  cg::coalesced_group g = cg::labeled_partition(warp, t % 4 == 3 ? 7 : t % 3);
  o[0] = g.size();
  o[1] = g.thread_rank();
  o[2] = g.meta_group_rank() * 10 + g.meta_group_size();
  o[3] = cg::reduce(g, t, cg::plus<int>());
  cg::coalesced_group h = cg::binary_partition(warp, t < 5);
  o[4] = h.size() * 100 + h.thread_rank();
  o[5] = h.meta_group_rank() * 10 + h.meta_group_size();
}

// the grid's sum in two phases: each block's sum into partial, then,
// after the grid barrier, block 0 adds them up
extern "C" __global__ void grid_sum(const int *x, long long *partial, long long *out, int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  __shared__ long long part[32];
  long long v = 0;
  for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)n; i += grid.size()) v += x[i];
  v = cg::reduce(warp, v, cg::plus<long long>());
  if (warp.thread_rank() == 0) part[warp.meta_group_rank()] = v;
  block.sync();
  if (block.thread_rank() == 0) {
    long long s = 0;
    for (unsigned w = 0; w < warp.meta_group_size(); w++) s += part[w];
    partial[grid.block_rank()] = s;
  }
  grid.sync();
  if (grid.block_rank() == 0 && block.thread_rank() == 0) {
    long long s = 0;
    for (unsigned long long b = 0; b < grid.num_blocks(); b++) s += partial[b];
    out[0] = s;
    out[1] = grid.is_valid();
    out[2] = grid.size();
  }
}

// rounds of a grid-wide relay: in round k, block b adds what block b - 1
// wrote in round k - 1; a missed grid barrier shows as a wrong value
extern "C" __global__ void relay(int *a, int rounds) {
  cg::grid_group grid = cg::this_grid();
  unsigned b = blockIdx.x, nb = gridDim.x;
  for (int k = 1; k <= rounds; k++) {
    int before = a[(k - 1) * nb + (b + nb - 1) % nb];
    grid.sync();
    if (threadIdx.x == 0) a[k * nb + b] = before + 1;
    grid.sync();
  }
}

// whether the launch was cooperative, without syncing
extern "C" __global__ void valid(int *out) {
  if (threadIdx.x == 0) out[blockIdx.x] = cg::this_grid().is_valid();
}

// a grid barrier every block but the last reaches
extern "C" __global__ void early_return(int *out) {
  if (blockIdx.x == gridDim.x - 1) return;
  cg::this_grid().sync();
  out[blockIdx.x] = 1;
}

// a grid barrier in a launch that is not cooperative
extern "C" __global__ void uncooperative(int *out) {
  cg::this_grid().sync();
  out[blockIdx.x] = 1;
}

// a tile whose size is not a power of 2
extern "C" __global__ void bad_tile(int *out, int n) {
  cg::thread_group tile = cg::tiled_partition(cg::this_thread_block(), n);
  out[threadIdx.x] = (int)tile.size();
}
]]

local m
setup(function()
  m = luacuda.compile(SOURCE, {name = "coop.cu"})
end)

describe("cooperative groups", function()
  it("reduce a block with thread_block_tile<32> and cg::reduce", function()
    local n = 5000
    local x = luacuda.to_device(luacuda.arange(n, "int32"))
    for _, cfg in ipairs({{4, 256}, {3, 96}, {1, 1024}}) do
      local grid, block = cfg[1], cfg[2]
      local out = luacuda.device_array(grid, "int64")
      m.block_sum[{grid, block}](x, out, n)
      local h = values(out)
      for b = 0, grid - 1 do
        local want = 0
        for i = b * block, n - 1, grid * block do
          for j = i, math.min(i + block, n) - 1 do want = want + j end
        end
        assert.equal(want, h[b + 1], ("block %d of %d x %d"):format(b, grid, block))
      end
    end
  end)

  it("reduce a warp with less, greater, bit_and, bit_or and bit_xor", function()
    local N = 64
    local input = {}
    for t = 0, N - 1 do input[t + 1] = (t * 37 + 11) % 101 - 40 end
    local x = luacuda.to_device(input, {dtype = "int32"})
    local out = luacuda.device_array(5 * N, "int32")
    m.warp_ops[{2, 32}](x, out)
    local h = values(out)
    for w = 0, 1 do
      local lo, hi, a, o, xo = math.huge, -math.huge, -1, 0, 0
      for l = 0, 31 do
        local v = input[32 * w + l + 1]
        lo, hi = math.min(lo, v), math.max(hi, v)
        a, o, xo = a & v, o | v, xo ~ v
      end
      for l = 0, 31 do
        local t = 32 * w + l
        assert.same({lo, hi, a, o, xo}, {h[5 * t + 1], h[5 * t + 2], h[5 * t + 3], h[5 * t + 4],
                                         h[5 * t + 5]}, "thread " .. t)
      end
    end
  end)

  it("describe the block: size, ranks, indices and dimensions", function()
    local out = luacuda.device_array(8 * 24, "uint32")
    m.block_shape[{2, {4, 3}}](out)
    local h = values(out)
    for b = 0, 1 do
      for y = 0, 2 do
        for x = 0, 3 do
          local r = x + 4 * y
          local o = 8 * (b * 12 + r)
          assert.same({12, 12, r, x, y, b, 403, r + 12000},
                      {table.unpack(h, o + 1, o + 8)}, ("block %d thread (%d, %d)"):format(b, x, y))
        end
      end
    end
  end)

  it("cut tiles of 16 and 8 that know their meta group, shuffle, vote, match and scan", function()
    local N = 64
    local out = luacuda.device_array(16 * N, "int32")
    m.tiles[{1, N}](out)
    local h = values(out)
    for r = 0, N - 1 do
      local b16, b8, k16, k8 = r - r % 16, r - r % 8, r % 16, r % 8
      local ballot, match = 0, 0
      for k = 0, 15 do
        if (b16 + k) % 3 == 0 then ballot = ballot | (1 << k) end
        if (b16 + k) // 4 % 2 == r // 4 % 2 then match = match | (1 << k) end
      end
      local scan5, excl, running = 0, 0, -1
      for j = b16, r do scan5 = scan5 + j % 5 end
      for j = b8, r - 1 do excl = excl + j end
      for j = b8, r do running = math.max(running, (j * 7) % 11) end
      local any13 = (b8 <= 13 and 13 < b8 + 8) and 1 or 0
      local all60 = b8 + 7 < 60 and 2 or 0
      local want = {
        r // 16, N // 16, k16 + 1600, k16 // 8, 2,
        (b16 + 3) * 10,
        k16 + 4 < 16 and r + 4 or r,
        k8 >= 2 and r - 2 or r,
        r ~ 5,
        ballot, any13 + all60,
        (b8 + 7) * 1000 + b16,
        match, scan5, excl, running,
      }
      assert.same(want, {table.unpack(h, 16 * r + 1, 16 * r + 16)}, "thread " .. r)
    end
  end)

  it("cut tiles of a size given at run time, and tiles of those", function()
    for _, n in ipairs({32, 8, 4}) do
      local out = luacuda.device_array(2 * 64, "int32")
      m.dynamic_tiles[{1, 64}](out, n)
      local h = values(out)
      for t = 0, 63 do
        assert.same({n * 100 + t % n, 200 + t % 2}, {h[2 * t + 1], h[2 * t + 2]},
                    ("thread %d, tiles of %d"):format(t, n))
      end
    end
  end)

  it("make a coalesced group of the lanes in a divergent branch", function()
    local N = 64
    local out = luacuda.device_array(5 * N, "int32")
    m.coalesced[{1, N}](out)
    local h = values(out)
    for t = 0, N - 1 do
      local got = {table.unpack(h, 5 * t + 1, 5 * t + 5)}
      if t % 3 == 0 or t == 7 then
        local members, w = {}, t - t % 32
        for u = w, w + 31 do
          if u < N and (u % 3 == 0 or u == 7) then members[#members + 1] = u end
        end
        local rank, sum, ballot = nil, 0, 0
        for i, u in ipairs(members) do
          if u == t then rank = i - 1 end
          sum = sum + u
          if u % 2 == 0 then ballot = ballot | (1 << (i - 1)) end
        end
        assert.same({#members, rank, members[1], sum, ballot}, got, "thread " .. t)
      else
        assert.same({-1, -1, -1, -1, -1}, got, "thread " .. t)
      end
    end
  end)

  it("partition a warp by a label (labeled_partition) and by a predicate", function()
    local N = 64
    local out = luacuda.device_array(6 * N, "int32")
    m.partitions[{1, N}](out)
    local h = values(out)
    local function label(t) return t % 4 == 3 and 7 or t % 3 end
    for t = 0, N - 1 do
      local w = t - t % 32
      -- the label's members, and the partitions ranked by their first lanes
      local members, firsts, seen = {}, {}, {}
      for u = w, w + 31 do
        if label(u) == label(t) then members[#members + 1] = u end
        if not seen[label(u)] then seen[label(u)] = true; firsts[#firsts + 1] = label(u) end
      end
      local rank, sum, meta = nil, 0, nil
      for i, u in ipairs(members) do
        if u == t then rank = i - 1 end
        sum = sum + u
      end
      for i, l in ipairs(firsts) do if l == label(t) then meta = i - 1 end end
      -- binary_partition: the lanes below 5 and the rest, in warp 0; all of warp 1
      local hsize, hrank, hmeta
      if w == 0 then
        hsize, hrank, hmeta = t < 5 and 5 or 27, t < 5 and t or t - 5, (t < 5 and 1 or 0) * 10 + 2
      else
        hsize, hrank, hmeta = 32, t - 32, 1
      end
      assert.same({#members, rank, meta * 10 + #firsts, sum, hsize * 100 + hrank, hmeta},
                  {table.unpack(h, 6 * t + 1, 6 * t + 6)}, "thread " .. t)
    end
  end)
end)

describe("cooperative launches", function()
  it("sum a grid in two phases around this_grid().sync()", function()
    local n = 100000
    local x = luacuda.to_device(luacuda.arange(n, "int32"))
    for _, cfg in ipairs({{8, 128}, {3, 64}, {1, 32}}) do
      local grid, block = cfg[1], cfg[2]
      local partial = luacuda.device_array(grid, "int64")
      local out = luacuda.device_array(3, "int64")
      m.grid_sum:launch({grid = grid, block = block, cooperative = true}, x, partial, out, n)
      assert.same({n * (n - 1) // 2, 1, grid * block}, values(out), grid .. " x " .. block)
    end
  end)

  it("keep every block in step through rounds of grid barriers", function()
    relay(m.relay, 6, 5)
  end)

  it("say whether the launch was cooperative (this_grid().is_valid())", function()
    local out = luacuda.device_array(3, "int32")
    m.valid[{3, 32}](out)
    assert.same({0, 0, 0}, values(out))
    m.valid:launch({grid = 3, block = 32, cooperative = false}, out)
    assert.same({0, 0, 0}, values(out))
    m.valid:launch({grid = 3, block = 32, cooperative = true}, out)
    assert.same({1, 1, 1}, values(out))
  end)

  it("refuse a grid that cannot be resident at once", function()
    local out = luacuda.device_array(4, "int32"):fill(0)
    -- an H100 holds 2 blocks of 1024 threads on each of its 132 multiprocessors
    S.misuse({"luacuda.launch: kernel 'valid': a cooperative launch of 265 blocks is more than "
              .. "the 264 that can run at once", "2 blocks of 1024 threads"},
             m.valid.launch, m.valid, {grid = 265, block = 1024, cooperative = true}, out)
    S.misuse("a cooperative launch of 100000 blocks is more than the",
             m.valid.launch, m.valid, {grid = 100000, block = 32, cooperative = true}, out)
  end)

  it("refuse a cooperative option that is not a boolean", function()
    local out = luacuda.device_array(4, "int32"):fill(0)
    S.misuse("luacuda.launch: kernel 'valid': cooperative must be a boolean, got number",
             m.valid.launch, m.valid, {grid = 1, block = 32, cooperative = 1}, out)
  end)

  it("fail this_grid().sync() in a launch that is not cooperative", function()
    if S.backend == "sim" then
      local out = luacuda.device_array(2, "int32"):fill(0)
      -- blocks run on worker threads: either block may be the first to fail
      local err = S.misuse({"kernel 'uncooperative' failed", "this_grid().sync() in a launch that "
                            .. "is not cooperative (launch it with cooperative = true)"},
                           function() m.uncooperative[{2, 32}](out); luacuda.synchronize() end)
      assert.truthy(err:find("thread %(0, 0, 0%) of block %([01], 0, 0%)"), err)
      return
    end
    -- cooperative groups trap (a launch failure, which the context keeps):
    -- in a process of its own
    local ok, out = S.lua_run("", ([[
      local luacuda = require "luacuda"
      local m = luacuda.compile(%q, {name = "coop.cu"})
      local out = luacuda.device_array(2, "int32")
      m.uncooperative[{2, 32}](out)
      print(pcall(luacuda.synchronize))]]):format(SOURCE))
    assert.is_true(ok, out)
    assert.truthy(out:find("CUDA_ERROR_LAUNCH_FAILED", 1, true), out)
  end)

  it("fail a grid barrier that a block returned without reaching", function()
    if S.backend ~= "sim" then return pending("simulator only: on a GPU the other blocks wait for ever") end
    local out = luacuda.device_array(4, "int32")
    S.misuse({"kernel 'early_return' failed", "this_grid().sync() never completes"},
             function()
               m.early_return:launch({grid = 4, block = 32, cooperative = true}, out)
               luacuda.synchronize()
             end)
    -- and the simulator carries on
    local sum = luacuda.device_array(3, "int64")
    m.grid_sum:launch({grid = 2, block = 32, cooperative = true},
                      luacuda.to_device(luacuda.ones(10, "int32")), luacuda.device_array(2, "int64"),
                      sum, 10)
    assert.same({10, 1, 64}, values(sum))
  end)

  it("stop a grid barrier's blocks with the watchdog", function()
    if S.backend ~= "sim" then return pending("simulator only: LUACUDA_SIM_TIMEOUT") end
    local ok, out = S.lua_run("LUACUDA_SIM_TIMEOUT=0.3", [[
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[
        #include <cooperative_groups.h>
        extern "C" __global__ void spin(int *a) {
          if (blockIdx.x == 0) while (((volatile int *)a)[0] == 0) {}
          cooperative_groups::this_grid().sync();
        }
        extern "C" __global__ void quick(int *a) { a[threadIdx.x] += 1; }]=], {name = "spin.cu"})
      local a = luacuda.to_device(luacuda.zeros(32, "int32"))
      m.spin:launch({grid = 4, block = 32, cooperative = true}, a)
      print(pcall(luacuda.synchronize))
      m.quick[{1, 32}](a)
      print("after", a[32])]])
    assert.is_true(ok, out)
    assert.truthy(out:find("kernel 'spin' failed: stopped by the watchdog", 1, true), out)
    assert.truthy(out:find("after\t1", 1, true), out)
  end)

  -- issue 29, finding 5: fault.c registered 256 workers, the pool starts up
  -- to 1024 for a cooperative launch (or 256 and the launching thread):
  -- the others had no recovery, and a fault or a stop there ended the
  -- process. Every block faults (or spins) after the grid barrier, so every
  -- worker, the last started among them, is running kernel code then.
  -- each worker's fiber stacks were two mappings each (a stack and its
  -- guard), so 1024 blocks of 32 threads passed vm.max_map_count (65,530)
  it("keep 1024 blocks of 32 threads in step through grid barriers", function()
    if S.backend ~= "sim" then return pending("simulator only: its workers' fiber stacks") end
    local _, release = S.sh("uname -r")
    local major, minor = release:match("^(%d+)%.(%d+)")
    if not major or tonumber(major) * 100 + tonumber(minor) < 613 then
      return pending("Linux 6.13 or later: without guard pages in the page tables "
                     .. "(MADV_GUARD_INSTALL) every fiber stack is two mappings")
    end
    local ok, out = S.lua_run("", ([[
      local luacuda = require "luacuda"
      local m = luacuda.compile(%q, {name = "coop.cu"})
      local nb = 1024
      local a = luacuda.to_device(luacuda.zeros(3 * nb, "int32"))
      for b = 1, nb do a[b] = b * 100 end
      m.relay:launch({grid = nb, block = 32, cooperative = true}, a, 2)
      local h, wrong = a:totable(), 0
      for k = 1, 2 do
        for b = 0, nb - 1 do
          if h[k * nb + b + 1] ~= ((b - k) %% nb + 1) * 100 + k then wrong = wrong + 1 end
        end
      end
      print("wrong", wrong)]]):format(SOURCE))
    assert.is_true(ok, out)
    assert.truthy(out:find("wrong\t0", 1, true), out)
  end)

  it("fail, and carry on after, a fault or a stop in every block of 1024", function()
    if S.backend ~= "sim" then return pending("simulator only: its workers and watchdog") end
    for _, threads in ipairs({"", "LUACUDA_SIM_THREADS=256"}) do
      -- the watchdog's time covers 1024 blocks meeting at the barrier first,
      -- which takes seconds under AddressSanitizer on a busy machine
      local ok, out = S.lua_run("timeout 300 env LUACUDA_SIM_TIMEOUT=5 " .. threads, [[
        local luacuda = require "luacuda"
        local m = luacuda.compile([=[
          #include <cooperative_groups.h>
          extern "C" __global__ void fault_all(int *a, long long off) {
            cooperative_groups::this_grid().sync();
            if (threadIdx.x == 0) ((volatile int *)a)[off + blockIdx.x] = 1;
          }
          extern "C" __global__ void spin_all(int *a) {
            cooperative_groups::this_grid().sync();
            while (((volatile int *)a)[0] == 0) {}
          }
          extern "C" __global__ void count(int *a) { atomicAdd(&a[1], 1); }]=], {name = "many.cu"})
        local a = luacuda.to_device(luacuda.zeros(2, "int32"))
        for round = 1, 2 do
          m.fault_all:launch({grid = 1024, block = 8, cooperative = true}, a, 1 << 40)
          print("fault", pcall(luacuda.synchronize))
          m.spin_all:launch({grid = 1024, block = 8, cooperative = true}, a)
          print("stop", pcall(luacuda.synchronize))
        end
        m.count:launch({grid = 1024, block = 32, cooperative = true}, a)
        print("after", a[2])]])
      assert.is_true(ok, threads .. "\n" .. out)
      local _, faults = out:gsub("fault\tfalse\tluacuda.synchronize: kernel 'fault_all' failed: "
                                 .. "illegal memory access", "")
      assert.equal(2, faults, threads .. "\n" .. out)
      local _, stops = out:gsub("stop\tfalse\tluacuda.synchronize: kernel 'spin_all' failed: "
                                .. "stopped by the watchdog", "")
      assert.equal(2, stops, threads .. "\n" .. out)
      assert.truthy(out:find("after\t32768", 1, true), threads .. "\n" .. out)
    end
  end)

  it("fail a tile whose size is not a power of 2 up to 32", function()
    if S.backend ~= "sim" then return pending("simulator only: on a GPU cooperative groups trap") end
    local out = luacuda.device_array(32, "int32")
    S.misuse({"kernel 'bad_tile' failed", "tiled_partition: a tile of 12 threads (a power of 2 "
              .. "from 1 to 32 is needed)"},
             function() m.bad_tile[{1, 32}](out, 12); luacuda.synchronize() end)
    S.misuse("a tile of 64 threads", function() m.bad_tile[{1, 32}](out, 64); luacuda.synchronize() end)
  end)
end)

describe("cooperative launches on the cuda backend", function()
  local BUILD = os.getenv("LUACUDA_BUILD") or "build"
  local FAKE = BUILD .. "/fake/libcuda.so.1"

  -- the fake driver (spec/fake/fake_cuda.c), in a process of its own, with
  -- its trace of the driver calls
  it("ask the occupancy, launch with cuLaunchCooperativeKernel and refuse a grid too large", function()
    if not S.exists(FAKE) then return pending("no fake driver (no cuda.h to build it)") end
    local dir = S.tmpdir()
    local ok, out = S.lua_run(("LUACUDA_BACKEND=cuda LUACUDA_LIBCUDA=%s "
                               .. "LUACUDA_CACHE_DIR=%s/cache FAKE_CUDA_TRACE=%s/trace"):format(FAKE, dir, dir), [[
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[
        #include <cooperative_groups.h>
        namespace cg = cooperative_groups;
        extern "C" __global__ void step(int *a) {
          cg::grid_group grid = cg::this_grid();
          int b = blockIdx.x, nb = gridDim.x;
          if (threadIdx.x == 0) a[b] = b + 1;
          grid.sync();
          if (threadIdx.x == 0) a[nb + b] = a[(b + 1) % nb] * 10;
        }]=], {name = "step.cu"})
      local a = luacuda.to_device(luacuda.zeros(8, "int32"))
      m.step:launch({grid = 4, block = 256, cooperative = true}, a)
      print(table.concat(a:copy_to_host():totable(), " "))
      print(pcall(m.step.launch, m.step, {grid = 1057, block = 256, cooperative = true}, a))]])
    local trace = {}
    local t = io.open(dir .. "/trace")
    if t then
      for line in t:lines() do trace[#trace + 1] = line end
      t:close()
    end
    os.execute("rm -rf " .. dir)
    assert.is_true(ok, out)
    assert.truthy(out:find("1 2 3 4 20 30 40 10", 1, true), out)
    -- 8 blocks of 256 threads on each of 132 multiprocessors
    assert.truthy(out:find("luacuda.launch: kernel 'step': a cooperative launch of 1057 blocks is "
                           .. "more than the 1056 that can run at once (8 blocks of 256 threads and "
                           .. "0 bytes of dynamic shared memory on each of device 1's 132 "
                           .. "multiprocessors)", 1, true), out)
    local calls = table.concat(trace, "\n")
    assert.truthy(calls:find("cuOccupancyMaxActiveBlocksPerMultiprocessor", 1, true), calls)
    assert.truthy(calls:find("launch cooperative step 4,1,1 256,1,1 0", 1, true), calls)
    local n = 0
    for _, l in ipairs(trace) do if l == "cuLaunchCooperativeKernel" then n = n + 1 end end
    assert.equal(1, n, "cuLaunchCooperativeKernel calls")
  end)

  it("refuse a cooperative launch on a device that takes none", function()
    if not S.exists(FAKE) then return pending("no fake driver (no cuda.h to build it)") end
    local ok, out = S.lua_run(("LUACUDA_BACKEND=cuda LUACUDA_LIBCUDA=%s "
                               .. "FAKE_CUDA_COOPERATIVE=0"):format(FAKE), [[
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[
        extern "C" __global__ void k(int *a) { a[threadIdx.x] = 1; }]=], {name = "k.cu"})
      local a = luacuda.to_device(luacuda.zeros(32, "int32"))
      print(pcall(m.k.launch, m.k, {grid = 1, block = 32, cooperative = true}, a))
      m.k[{1, 32}](a)
      print("after", a[32])]])
    assert.is_true(ok, out)
    assert.truthy(out:find("luacuda.launch: kernel 'k': device 1 does not take cooperative "
                           .. "launches", 1, true), out)
    assert.truthy(out:find("after\t1", 1, true), out)
  end)
end)

-- split barriers (barrier_arrive, then barrier_wait) and invoke_one
local SPLIT_SOURCE = [[
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// the relay of the cooperative launches, through split barriers: between a
// grid arrival and its wait thread 0 stores what it read; between a block
// arrival and its wait the others do nothing; the block's last thread writes
extern "C" __global__ void split_relay(int *a, int rounds) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  __shared__ int mine;
  unsigned b = blockIdx.x, nb = gridDim.x;
  for (int k = 1; k <= rounds; k++) {
    int before = a[(k - 1) * nb + (b + nb - 1) % nb];
    cg::grid_group::arrival_token token = grid.barrier_arrive();
    if (threadIdx.x == 0) mine = before + 1;
    grid.barrier_wait(std::move(token));
    cg::thread_block::arrival_token bt = block.barrier_arrive();
    block.barrier_wait(std::move(bt));
    if (threadIdx.x == blockDim.x - 1) a[k * nb + b] = mine;
    grid.sync();
  }
}

// one thread of the block, one of each tile of 8; a tile's and a divergent
// branch's members all get what their one member computed
extern "C" __global__ void invoke(int *count, int *out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<8> tile = cg::tiled_partition<8>(block);
  int t = block.thread_rank(), n = blockDim.x;
  cg::invoke_one(block, [&] { atomicAdd(&count[0], 1); });
  cg::invoke_one(tile, [&](int by) { atomicAdd(&count[1], by); }, 2);
  out[t] = cg::invoke_one_broadcast(tile, [&] { return t * 10; });
  out[n + t] = -1;
  if (t % 3 == 0) {
    cg::coalesced_group g = cg::coalesced_threads();
    out[n + t] = cg::invoke_one_broadcast(g, [&] { return t + 1000; });
  }
}

// a grid arrival in a launch that is not cooperative
extern "C" __global__ void split_uncooperative(int *out) {
  cg::grid_group::arrival_token token = cg::this_grid().barrier_arrive();
  cg::this_grid().barrier_wait(std::move(token));
  out[blockIdx.x] = 1;
}
]]

describe("cooperative groups' split barriers and invoke_one", function()
  local s
  setup(function()
    s = luacuda.compile(SPLIT_SOURCE, {name = "split.cu"})
  end)

  it("keep every block in step through split grid and block barriers", function()
    relay(s.split_relay, 5, 4)
  end)

  it("run a function in one member, and give every member its result", function()
    local nb, n = 3, 64
    local count = luacuda.to_device(luacuda.zeros(2, "int32"))
    local out = luacuda.device_array(2 * n, "int32")
    -- every block writes the same rows: one block is enough to check them
    s.invoke[{nb, n}](count, out)
    assert.same({nb, 2 * nb * n // 8}, values(count))
    local h = values(out)
    for t = 0, n - 1 do
      local r = h[t + 1]
      assert.equal(0, r % 10, "tile, thread " .. t)
      assert.equal(t // 8, r // 10 // 8, "tile: a member's value, thread " .. t)
      assert.equal(h[(t // 8) * 8 + 1], r, "tile: one value, thread " .. t)
      local c = h[n + t + 1]
      if t % 3 == 0 then
        local from = c - 1000
        assert.equal(0, from % 3, "group, thread " .. t)
        assert.equal(t // 32, from // 32, "group: a member's value, thread " .. t)
      else
        assert.equal(-1, c, "thread " .. t)
      end
    end
    for w = 0, 1 do      -- one value per warp's group
      local first = h[n + 32 * w + 1]
      for t = 32 * w, 32 * w + 31, 3 do
        if t % 3 == 0 then assert.equal(first, h[n + t + 1], "group of warp " .. w) end
      end
    end
  end)

  it("fail a grid arrival in a launch that is not cooperative", function()
    if S.backend ~= "sim" then return pending("simulator only: on a GPU cooperative groups trap") end
    local out = luacuda.device_array(2, "int32")
    S.misuse({"kernel 'split_uncooperative' failed", "this_grid().barrier_arrive() in a launch "
              .. "that is not cooperative (launch it with cooperative = true)"},
             function() s.split_uncooperative[{2, 32}](out); luacuda.synchronize() end)
  end)

  it("refuse cg::reduce over a whole block, as CUDA 13 does", function()
    local src = [[
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void block_reduce(int *out) {
  out[threadIdx.x] = cg::reduce(cg::this_thread_block(), 1, cg::plus<int>());
}
]]
    local want = (S.backend == "cuda" or S.nvrtc_checks())
        and "This group does not exclusively represent a tile" or "no matching function"
    S.misuse({"compilation of block_reduce.cu failed", want},
             luacuda.compile, src, {name = "block_reduce.cu"})
  end)
end)
