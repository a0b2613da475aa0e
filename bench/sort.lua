-- bench/sort.lua: luacuda.sort of 2^24 float32 (normal values, host array)
-- against NumPy's np.sort of the same values in the same run (a
-- /usr/bin/python3 child: Debian's numpy), best of BENCH_REPEAT each; and
-- the same on a device array of the simulator (the CPU's sort on the
-- stream's executor). argsort against np.argsort(kind="stable") too.
-- BENCH_REPEAT rounds, alternating between the sides.
-- Prints "name: value (target: ...)" and "bench: N of M targets met".
local luacuda = require "luacuda"
local B = require "bench.common"
B.results("sort")

local N = tonumber(os.getenv("BENCH_SORT_N")) or (1 << 24)
local sh, best = B.sh, B.best
local PYTHON = "env -u LD_PRELOAD -u ASAN_OPTIONS /usr/bin/python3"

-- the values, written for NumPy as .npy
local x = luacuda.random(30):normal(N, "float32", {kind = "host"})
local file = os.tmpname()
luacuda.save(file, x)
local script = ([[
import numpy as np, time
x = np.load('%s')
def best(f):
    t = 1e9
    for _ in range(2):
        t0 = time.perf_counter(); f(); t = min(t, time.perf_counter() - t0)
    return t
print('sort', best(lambda: np.sort(x)))
print('argsort', best(lambda: np.argsort(x, kind='stable')))
print('version', np.__version__)
]]):format(file)

local y, i = luacuda.empty(N, "float32"), luacuda.empty(N, "int64")
local d, e
if luacuda.backend() == "sim" then d, e = luacuda.to_device(x), luacuda.device_array(N, "float32") end
luacuda.sort(x, {out = y})                      -- warm
-- rounds alternate between NumPy (a child) and luacuda, so that both
-- sides see the same load on a shared machine; the best of each counts
local numpy, t_sort, t_new, t_arg, t_dev = {sort = math.huge, argsort = math.huge}, math.huge,
  math.huge, math.huge, math.huge
local version = "?"
for _ = 1, B.REPEAT do
  local ok, out = sh(PYTHON .. " -c \"" .. script .. "\"")
  if not ok then
    os.remove(file)
    print("no NumPy to compare with (" .. out:gsub("\n", " ") .. ")")
    print("bench: 0 of 0 targets met")
    return
  end
  for name, t in out:gmatch("(%a+) ([%d.e-]+)\n") do
    if numpy[name] then numpy[name] = math.min(numpy[name], tonumber(t)) end
  end
  version = out:match("version (%S+)") or version
  local R = B.REPEAT
  B.REPEAT = 2
  t_sort = math.min(t_sort, best(function() luacuda.sort(x, {out = y}) end))
  t_new = math.min(t_new, best(function() luacuda.sort(x):close() end))
  t_arg = math.min(t_arg, best(function() luacuda.argsort(x, {out = i}) end))
  if d then t_dev = math.min(t_dev, best(function() luacuda.sort(d, {out = e}) end)) end
  B.REPEAT = R
end
os.remove(file)
if not d then t_dev = nil end

local figures, met = {}, 0
local function figure(name, value, target)
  local pass = value <= target
  if pass then met = met + 1 end
  figures[#figures + 1] = ("%s: %.3gx (target: <= %gx)"):format(name, value, target)
  B.record(name, value, target, "<=")
end
print(("sort of %d float32: luacuda %.1f ms (into out=), %.1f ms (a new array); NumPy %s %.1f ms")
      :format(N, t_sort * 1e3, t_new * 1e3, version, numpy.sort * 1e3))
print(("argsort: luacuda %.1f ms, NumPy (stable) %.1f ms"):format(t_arg * 1e3, numpy.argsort * 1e3))
figure("sort 2^24 float32 / NumPy", t_new / numpy.sort, 2)
figure("argsort 2^24 float32 / NumPy stable", t_arg / numpy.argsort, 2)
if t_dev then
  print(("sort of a simulator device array: %.1f ms"):format(t_dev * 1e3))
  figure("sort 2^24 float32, simulator device array / NumPy", t_dev / numpy.sort, 2)
end
for _, line in ipairs(figures) do print(line) end
print(("bench: %d of %d targets met"):format(met, #figures))
