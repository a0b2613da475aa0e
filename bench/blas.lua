-- bench/blas.lua: matrix products, axis sums, argmax and elementwise loops
-- against NumPy (Debian's /usr/bin/python3) timed in the same run, as a
-- child process: the shapes of real programs (issue 30). matmul
-- {1e5, 32}x{32, 1}, {32, 1e5}x{1e5, 1} (X.T times a column), 512^3 and
-- 4096x64x4096 in float32 and float64, on host arrays and on the
-- simulator's device arrays, against NumPy with the same BLAS (both
-- name the library they loaded: /proc/self/maps); sum over each axis of
-- 4096 x 4096 float32, mean and max over its first, argmax, exp and sqrt
-- into out= on 2^24 float32.
-- Each figure is luacuda's best time over NumPy's best (<= the target
-- meets it), each side measured in three rounds that take turns (NumPy,
-- luacuda, NumPy, ...): this machine's speed swings from one minute to
-- the next, and a ratio of times taken minutes apart measured the swing.
-- Prints "name: value (target: ...)" and "bench: N of M targets met".
-- BENCH_REPEAT sets the runs per figure (3 here by default, more for the
-- short ones: at least a quarter of a second of them a round).
local luacuda = require "luacuda"
local B = require "bench.common"
B.results("blas")
local REPEAT = tonumber(os.getenv("BENCH_REPEAT")) or 3
B.REPEAT = REPEAT
-- and as many more runs as fit in SPAN seconds: a product of 2 ms timed
-- three times is a sample of this machine's noise
local SPAN = 0.25
-- rounds of each side, taking turns
local ROUNDS = 3

local PY = [==[
import sys, time
import numpy as np
rep, SPAN = int(sys.argv[1]), float(sys.argv[2])
def best(f):
    t, spent, n = float("inf"), 0.0, 0
    while n < rep or spent < SPAN:
        t0 = time.perf_counter(); f(); d = time.perf_counter() - t0
        t, spent, n = min(t, d), spent + d, n + 1
    return t
g = np.random.default_rng(1)
for dt in ("float32", "float64"):
    for name, (m, k, n, xt) in (("thin", (100000, 32, 1, False)), ("xt", (32, 100000, 1, True)),
                                ("square", (512, 512, 512, False)), ("wide", (4096, 64, 4096, False))):
        a = g.random((k, m) if xt else (m, k), dtype=dt)
        a = a.T if xt else a
        b = g.random((k, n), dtype=dt)
        print("matmul_%s_%s %.6g" % (name, dt, best(lambda: np.matmul(a, b))))
a = g.random((4096, 4096), dtype="float32")
print("sum_1 %.6g" % best(lambda: a.sum(axis=0)))
print("sum_2 %.6g" % best(lambda: a.sum(axis=1)))
print("mean_1 %.6g" % best(lambda: a.mean(axis=0)))
print("max_1 %.6g" % best(lambda: a.max(axis=0)))
print("argmax %.6g" % best(lambda: a.argmax()))
print("argmax_1 %.6g" % best(lambda: a.argmax(axis=0)))
x = g.random(1 << 24, dtype="float32"); o = np.empty_like(x)
print("exp %.6g" % best(lambda: np.exp(x, out=o)))
print("sqrt %.6g" % best(lambda: np.sqrt(x, out=o)))
libs = [l.split()[-1] for l in open("/proc/self/maps") if "blas" in l]
print("blas " + (sorted(set(libs))[0] if libs else "none"))
]==]

local path = os.tmpname()
local f = assert(io.open(path, "w"))
f:write(PY)
f:close()

-- NumPy's figures, the best of its rounds so far; false when it did not run
local np = {}
local function numpy_round()
  local ok, out = B.sh(("env -u LD_PRELOAD /usr/bin/python3 %s %d %g"):format(path, REPEAT, SPAN))
  if not ok then
    print("bench: NumPy did not run (/usr/bin/python3 with python3-numpy): " .. out)
    return false
  end
  for name, v in out:gmatch("(%S+) (%S+)\n") do
    v = tonumber(v) or v
    np[name] = type(v) == "number" and math.min(np[name] or math.huge, v) or v
  end
  return true
end

local device = luacuda.backend() == "sim"     -- device arrays computed by the CPU
local t = {}
-- ours: t[key] the best time of f so far, f run as NumPy's best() runs
-- its figures
local function best(key, f)
  t[key] = math.min(t[key] or math.huge, B.best(f, SPAN))
end

-- the reductions and loops of one side: a 4096 x 4096 array, x of 2^24
-- elements and out of its shape
local function reductions(side, a, x, out)
  best("sum_1 " .. side, function() a:sum(1) end)
  best("sum_2 " .. side, function() a:sum(2) end)
  best("mean_1 " .. side, function() a:mean(1) end)
  best("max_1 " .. side, function() a:max(1) end)
  best("argmax " .. side, function() a:argmax() end)
  best("argmax_1 " .. side, function() a:argmax(1) end)
  best("exp " .. side, function() luacuda.exp(x, out) end)
  best("sqrt " .. side, function() luacuda.sqrt(x, out) end)
end

-- one round of ours: every figure, best of REPEAT runs each
local function our_round()
  local g = luacuda.random(1)
  for _, dt in ipairs({"float32", "float64"}) do
    for _, c in ipairs({{"thin", 100000, 32, 1}, {"xt", 32, 100000, 1, true},
                        {"square", 512, 512, 512}, {"wide", 4096, 64, 4096}}) do
      local name, m, k, n, xt = c[1], c[2], c[3], c[4], c[5]
      local ha = g:uniform(xt and {k, m} or {m, k}, dt, {kind = "host"})
      local hb = g:uniform({k, n}, dt, {kind = "host"})
      local a = xt and ha.T or ha
      local hc = luacuda.empty({m, n}, dt)
      best("matmul_" .. name .. "_" .. dt .. " host", function() luacuda.matmul(a, hb, hc) end)
      if device then
        local da, db = luacuda.to_device(ha), luacuda.to_device(hb)
        da = xt and da.T or da
        local dc = luacuda.device_array({m, n}, dt)
        luacuda.matmul(da, db, dc)          -- a first product (the kernel's compile without BLAS)
        luacuda.synchronize()
        best("matmul_" .. name .. "_" .. dt .. " device", function() luacuda.matmul(da, db, dc) end)
      end
    end
  end
  local a = g:uniform({4096, 4096}, "float32", {kind = "host"})
  local x = g:uniform(1 << 24, "float32", {kind = "host"})
  reductions("host", a, x, luacuda.empty_like(x))
  if device then
    reductions("device", luacuda.to_device(a), luacuda.to_device(x),
               luacuda.device_array({1 << 24}, "float32"))
  end
end

for _ = 1, ROUNDS do
  if not numpy_round() then
    os.remove(path)
    print("bench: 0 of 0 targets met")
    return
  end
  our_round()
  collectgarbage()        -- the round's arrays
end
os.remove(path)

local libs = {}
for line in io.lines("/proc/self/maps") do
  local p = line:match("(/%S*/[^/]*blas[^/]*)$")
  if p then libs[p] = true end
end
local ours = next(libs) or "none"
print(("NumPy's BLAS: %s; luacuda's: %s (luacuda.blas(): %s)"):format(np.blas or "?", ours,
      table.concat({luacuda.blas()}, ": ")))

local met, total = 0, 0
local keys = {}
for k in pairs(t) do keys[#keys + 1] = k end
table.sort(keys)
for _, key in ipairs(keys) do
  local name, side = key:match("^(%S+) (%S+)$")
  local target = name:find("^matmul") and 1.25 or 1.5
  local ratio = t[key] / np[name]
  total = total + 1
  if ratio <= target then met = met + 1 end
  local label = ("%s, %s arrays / NumPy"):format(name, side)
  print(("%s: %.3gx (target: <= %gx; luacuda %.4g s, NumPy %.4g s)"):format(label, ratio, target,
        t[key], np[name]))
  B.record(label, ratio, target, "<=")
end
print(("bench: %d of %d targets met"):format(met, total))
