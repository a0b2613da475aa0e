-- bench/compile.lua: what a new kernel costs to compile on the simulator,
-- against the least the same host compiler needs to make any shared object
-- (a translation unit with #include <cstdio>, compiled and linked -shared
-- in one command), measured side by side in the same run: the two
-- alternate, and the medians of BENCH_COMPILES runs (7) are compared. Each
-- kernel is a new source (a cold compile: neither it nor its NVRTC check is
-- cached) in a fresh cache directory whose precompiled head was built by a
-- first compile (its time printed apart). A second process then compiles
-- the same sources again: disk-cache hits. With the NVRTC parity check
-- (src/backend/sim/check.c) off and on.
-- Prints "name: value (target: ...)" and "bench: N of M targets met".
local luacuda = require "luacuda"
local B = require "bench.common"
B.results("compile")

if luacuda.backend() ~= "sim" then
  print("bench: the compile benchmark needs the sim backend (LUACUDA_BACKEND=sim)")
  print("bench: 0 of 0 targets met")
  return
end

local N = tonumber(os.getenv("BENCH_COMPILES")) or 7
local cxx = os.getenv("LUACUDA_CXX") or "c++"

-- The child: cold compiles alternating with the baseline, or cache hits.
-- Prints "name seconds" lines.
local CHILD = [=[
local luacuda = require "luacuda"
local mode, n, cxx, tmp, nonce = ...
n = tonumber(n)
local function source(i)
  return ([[
extern "C" __global__ void add(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += %d.0f;   // %s
}]]):format(i, nonce)
end
local function timed(f)
  local t0 = luacuda.clock()
  f()
  return luacuda.clock() - t0
end
if mode == "cold" then
  print("first", timed(function() luacuda.compile(source(0)) end))
  local triv = tmp .. "/trivial.cc"
  local f = assert(io.open(triv, "w"))
  f:write("#include <cstdio>\nint lc_trivial(void) { return std::puts(\"x\"); }\n")
  f:close()
  local cmd = ("%s -O2 -fPIC -shared -o %s/trivial.so %s"):format(cxx, tmp, triv)
  for i = 1, n do
    print("trivial", timed(function() assert(os.execute(cmd)) end))
    print("cold", timed(function() luacuda.compile(source(i)) end))
  end
else
  for i = 1, n do print("hit", timed(function() luacuda.compile(source(i)) end)) end
end
]=]

local function median(t)
  table.sort(t)
  local m = #t // 2
  return #t % 2 == 1 and t[m + 1] or (t[m] + t[m + 1]) / 2
end

local function run(env, mode, tmp, nonce)
  local script = tmp .. "/child.lua"
  local f = assert(io.open(script, "w"))
  f:write(CHILD)
  f:close()
  local ok, out = B.sh(("LUACUDA_CACHE_DIR=%s/cache %s lua5.4 %s %s %d %s %s %s")
                       :format(tmp, env, script, mode, N, cxx, tmp, nonce))
  assert(ok, out)
  local times = {}
  for name, t in out:gmatch("(%a+)\t([%d.e+-]+)") do
    times[name] = times[name] or {}
    table.insert(times[name], tonumber(t))
  end
  return times
end

local figures, met = {}, 0
local function figure(name, value, target, unit, fmt)
  local pass = value <= target
  if pass then met = met + 1 end
  figures[#figures + 1] = ("%s: " .. fmt .. "%s (target: <= %g%s)"):format(name, value, unit,
                                                                          target, unit)
  B.record(name, value, target, "<=")
end

for _, check in ipairs({"0", "1"}) do
  local label = check == "0" and "NVRTC check off" or "NVRTC check on"
  local tmp = os.tmpname()
  os.remove(tmp)
  assert(B.sh("mkdir -p " .. tmp))
  local nonce = ("%x%x"):format(os.time(), math.random(1 << 30))
  local env = "LUACUDA_NVRTC_CHECK=" .. check
  local cold = run(env, "cold", tmp, nonce)
  local hit = run(env, "hit", tmp, nonce)
  B.sh("rm -rf " .. tmp)
  local c, t, h = median(cold.cold), median(cold.trivial), median(hit.hit)
  print(("%s: cold compile %.3f s (median of %d), trivial .so %.3f s, first compile "
         .. "(precompiling the head, where there is one) %.3f s, cache hit %.2f ms")
        :format(label, c, N, t, cold.first[1], h * 1e3))
  figure(("sim cold compile / trivial .so, %s"):format(label), c / t, 2.5, "", "%.2f")
  figure(("sim cache hit, %s"):format(label), h * 1e3, 5, " ms", "%.2f")
end

for _, line in ipairs(figures) do print(line) end
print(("bench: %d of %d targets met"):format(met, #figures))
