-- bench/programs.lua: the four programs of examples/ (logistic regression,
-- 5x5 blur, Monte Carlo pi, k-means), written naturally (new arrays, no out=),
-- on host arrays and on the simulator's device arrays, against the same
-- programs in NumPy (bench/programs_numpy.py, run by /usr/bin/python3) at the
-- same sizes. Each side times the same part (the steps, not making the data);
-- best of 5 runs, the rounds alternated (a run of the steps is 30-700 ms,
-- and this machine's speed swings from one second to the next). Target:
-- within 1.5x of NumPy.
local luacuda = require "luacuda"
local B = require "bench.common"

local PY = "/usr/bin/python3"
local ROUNDS = 5
local programs = {
  {name = "logistic_regression", label = "logistic regression n=1e5 d=32, 10 steps",
   sizes = {100000, 32, 10}, pattern = "steps on .-: ([%d.]+) ms"},
  {name = "blur", label = "5x5 blur 1024x1024 float32", sizes = {1024, 1024},
   pattern = "blur of .-: ([%d.]+) ms"},
  {name = "monte_carlo_pi", label = "Monte Carlo pi 1e7 samples in chunks of 1e6",
   sizes = {10000000, 1000000}, pattern = "samples: ([%d.]+) ms"},
  {name = "kmeans", label = "k-means k=16 2e5 points, 10 steps", sizes = {200000, 16, 10},
   pattern = "k = %d+: ([%d.]+) ms"},
}

local ok, out = B.sh(PY .. [[ -c "import numpy as np; np.ones((64, 64)) @ np.ones((64, 64))
print(np.__version__, 'with', ' '.join(sorted({l.split()[-1].rsplit('/', 1)[-1] for l in open('/proc/self/maps')
  if 'blas' in l.lower() or 'lapack' in l.lower()})) or 'no BLAS library mapped')"]])
if not ok then
  ok, out = B.sh(PY .. " -c 'import numpy; print(numpy.__version__, \"(BLAS unknown)\")'")
end
if not ok then
  print("no NumPy for " .. PY .. ": " .. out)
  print("bench: 0 of 0 targets met")
  return
end
print("NumPy " .. out:gsub("\n", "") .. ", against luacuda's " ..
      table.concat({luacuda.blas()}, ": ") .. "; " .. luacuda.backend() .. " backend")

local env = 'LUA_PATH="' .. (os.getenv("LUA_PATH") or "") .. '" LUA_CPATH="' ..
            (os.getenv("LUA_CPATH") or "") .. '" '
local function lua_run(p, kind)
  local ok2, o = B.sh(env .. "lua5.4 examples/" .. p.name .. ".lua " .. kind .. " " ..
                      table.concat(p.sizes, " "))
  local ms = o:match(p.pattern)
  assert(ok2 and ms and o:find("check: ok", 1, true) and not o:find("FAILED", 1, true),
         p.name .. " " .. kind .. ": " .. o)
  return tonumber(ms) / 1e3
end
local function numpy_run(p)
  local ok2, o = B.sh(PY .. " bench/programs_numpy.py " .. p.name .. " " .. table.concat(p.sizes, " "))
  local s = o:match(p.name .. ": ([%d.]+)")
  assert(ok2 and s, p.name .. " in NumPy: " .. o)
  return tonumber(s)
end

B.results("programs")
local figures, met = {}, 0
-- BENCH_PROGRAMS="blur kmeans" runs those only
local only = os.getenv("BENCH_PROGRAMS")
for _, p in ipairs(programs) do
  if only and not (" " .. only .. " "):find(" " .. p.name .. " ", 1, true) then goto next end
  local best = {host = math.huge, device = math.huge, numpy = math.huge}
  for _ = 1, ROUNDS do
    best.host = math.min(best.host, lua_run(p, "host"))
    best.numpy = math.min(best.numpy, numpy_run(p))
    best.device = math.min(best.device, lua_run(p, "device"))
  end
  print(("%s: NumPy %.1f ms, luacuda host arrays %.1f ms, simulator device arrays %.1f ms")
        :format(p.label, best.numpy * 1e3, best.host * 1e3, best.device * 1e3))
  for _, kind in ipairs({"host", "device"}) do
    local ratio = best[kind] / best.numpy
    local name = ("%s, %s arrays / NumPy"):format(p.label, kind)
    if ratio <= 1.5 then met = met + 1 end
    figures[#figures + 1] = ("%s: %.3gx (target: <= 1.5x)%s"):format(name, ratio,
                                                                      ratio <= 1.5 and "" or " -- over")
    B.record(name, ratio, 1.5, "<=")
  end
  ::next::
end
for _, line in ipairs(figures) do print(line) end
print(("bench: %d of %d targets met"):format(met, #figures))
