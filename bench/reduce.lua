-- bench/reduce.lua: reductions on the simulator against plain C
-- loops built in the same run (bench/native_math.c, $CC -O2): a:sum() of
-- 2^24 float32 on a device array (pairwise, on the stream's executor
-- thread) against a one-accumulator C loop. The ratio is per worker
-- thread, as sim_kernels.lua's: the simulator's elements/s divided by its
-- workers, against one core running the loop.
-- Prints "name: value (target: ...)" and "bench: N of M targets met".
local luacuda = require "luacuda"
local B = require "bench.common"
B.results("reduce")

if luacuda.backend() ~= "sim" then
  print("bench: the array math benchmark needs the sim backend (LUACUDA_BACKEND=sim)")
  return
end

local N = tonumber(os.getenv("BENCH_MATH_N")) or (1 << 24)
local sh, best = B.sh, B.best

local cc = os.getenv("CC") or "cc"
local exe = os.tmpname()
local ok, out = sh(("%s -std=c11 -O2 -o %s bench/native_math.c"):format(cc, exe))
assert(ok, out)
ok, out = sh(("%s %d %d"):format(exe, N, B.REPEAT))
os.remove(exe)
assert(ok, out)
local native = {}
for name, ns in out:gmatch("(%w+) (%d+)") do native[name] = tonumber(ns) * 1e-9 end

local workers = tonumber(os.getenv("LUACUDA_SIM_THREADS"))
if not workers then
  local _, n = sh("nproc")
  workers = tonumber(n) or 1
end

-- the same values as the native loop's
local period = luacuda.array((function()
  local t = {}
  for i = 1, 1000 do t[i] = 1e-3 + (i - 1) * 1e-3 end
  return t
end)(), "float32")
local h = luacuda.empty(N, "float32")
for at = 0, N - 1, 1000 do
  local n = math.min(1000, N - at)
  period[{{1, n}}]:copy_to_host(h[{{at + 1, at + n}}])
end
local x = luacuda.to_device(h)
x:sum()                                        -- warm: the first call's costs
local t_sum = best(function() x:sum() end)

local figures, met = {}, 0
local function figure(name, value, target, unit)
  local pass = value >= target
  if pass then met = met + 1 end
  figures[#figures + 1] = ("%s: %.3g%s (target: >= %g%s)"):format(name, value, unit, target, unit)
  B.record(name, value, target, ">=")
end

local sim_rate, native_rate = N / t_sum, N / native.sum
print(("sum: simulator %.3g elements/s (%d workers), native loop %.3g elements/s")
      :format(sim_rate, workers, native_rate))
figure("sum simulator/native per worker thread", sim_rate / workers / native_rate, 0.3, "x")

for _, line in ipairs(figures) do print(line) end
print(("bench: %d of %d targets met"):format(met, #figures))
