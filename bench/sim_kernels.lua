-- bench/sim_kernels.lua: the simulator against native loops, in one run.
-- saxpy on 2^24 floats, a 256-thread shared-memory reduction with
-- syncthreads over 2^22 floats, and a 16 x 16 tiled matmul of 512 x 512,
-- each run by the simulator and as a plain loop compiled by the same
-- compiler with the same flags (bench/native_kernels.cc); and the time of
-- a small launch (one block of 256 threads) in a loop of launches. Ratios are per
-- worker thread: simulator threads/s over workers, against one native core.
-- Prints "name: value (target: ...)" and "bench: N of M targets met".
local luacuda = require "luacuda"
local B = require "bench.common"
B.results("sim_kernels")

if luacuda.backend() ~= "sim" then
  print("bench: the simulator benchmark needs the sim backend (LUACUDA_BACKEND=sim)")
  return
end

local NS, NR, NM = 1 << 24, 1 << 22, 512

local sh, best = B.sh, B.best

-- the native loops, built like a kernel module is (-O2, the same compiler)
local cxx = os.getenv("LUACUDA_CXX") or "c++"
local exe = os.tmpname()
local ok, out = sh(("%s -std=c++17 -O2 -o %s bench/native_kernels.cc"):format(cxx, exe))
assert(ok, out)
ok, out = sh(("%s %d %d %d"):format(exe, NS, NR, NM))
os.remove(exe)
assert(ok, out)
local native = {}
for name, ns in out:gmatch("(%w+) (%d+)") do native[name] = tonumber(ns) * 1e-9 end

local workers = tonumber(os.getenv("LUACUDA_SIM_THREADS"))
if not workers then
  local _, n = sh("nproc")
  workers = tonumber(n) or 1
end

local function kernels(file) return luacuda.compile_file("examples/kernels/" .. file) end

-- saxpy: one thread per element
local ms = kernels("saxpy.cu")
local x = luacuda.to_device(luacuda.arange(NS, "float32"))
local y = luacuda.to_device(luacuda.full(NS, 1.0, "float32"))
local t_saxpy = best(function() ms.saxpy[{NS // 256, 256}](NS, 2.0, x, y) end)

-- reduction: one thread per element, 9 barriers each
local mr = kernels("reduce.cu")
local xr = x[{{1, NR}}]
local out = luacuda.to_device({0}, {dtype = "float32"})
local t_reduce = best(function() mr.block_sum[{NR // 256, 256}](xr, out, NR) end)

-- matmul: one thread per output, 2 barriers per tile
local mm = kernels("matmul_shared.cu")
local a = luacuda.to_device(luacuda.arange(NM * NM, "float32"):reshape(NM, NM))
local b = luacuda.to_device(luacuda.arange(NM * NM, "float32"):reshape(NM, NM))
local c = luacuda.device_array({NM, NM}, "float32")
local t_matmul = best(function()
  mm.matmul[{{NM // 16, NM // 16}, {16, 16}}](a, b, c, NM)
end)

-- small launch: one block of 256 threads, no barrier, in a loop of launches
-- followed by one synchronize; the time per launch, end to end
local ns = 256
local xs, ys = x[{{1, ns}}], y[{{1, ns}}]
local LAUNCHES = 2000
local saxpy, one_block = ms.saxpy, {1, 256}
for _ = 1, 100 do saxpy[one_block](ns, 2.0, xs, ys) end   -- warm: the kernel's hint
local t_small = best(function()
  for _ = 1, LAUNCHES do saxpy[one_block](ns, 2.0, xs, ys) end
end) / LAUNCHES

local figures, met = {}, 0
local function figure(name, value, target, unit)
  local pass = value >= target
  if pass then met = met + 1 end
  figures[#figures + 1] = ("%s: %.3g%s (target: >= %g%s)"):format(name, value, unit, target, unit)
  B.record(name, value, target, ">=")
end

local function rates(label, threads, t_sim, t_native, target)
  local sim_rate, native_rate = threads / t_sim, threads / t_native
  print(("%s: simulator %.3g threads/s on %d workers, native loop %.3g elements/s")
        :format(label, sim_rate, workers, native_rate))
  figure(label .. " simulator/native per worker thread", sim_rate / workers / native_rate, target, "x")
  return sim_rate
end

local saxpy_rate = rates("saxpy", NS, t_saxpy, native.saxpy, 0.5)
local reduce_rate = rates("reduction", NR, t_reduce, native.sum, 0.05)
rates("matmul", NM * NM, t_matmul, native.matmul, 0.25)
-- Numba's CUDA simulator does about 1e4 saxpy and 6e2 reduction threads/s
figure("saxpy threads/s over Numba's simulator (1e4/s)", saxpy_rate / 1e4, 1e4, "x")
figure("reduction threads/s over Numba's simulator (6e2/s)", reduce_rate / 6e2, 1e4, "x")

local small_us = t_small * 1e6
if small_us <= 10 then met = met + 1 end
figures[#figures + 1] = ("sim small launch: %.3g us (target: <= 10 us)"):format(small_us)
B.record("sim small launch (us)", small_us, 10, "<=")

for _, line in ipairs(figures) do print(line) end
print(("bench: %d of %d targets met"):format(met, #figures))
