-- bench/common.lua: what the benches share. Run them from the repository
-- root (make bench), where require "bench.common" finds this file.
local luacuda = require "luacuda"

local B = {}

-- how many times each figure is measured; the best run counts
B.REPEAT = tonumber(os.getenv("BENCH_REPEAT")) or 5

-- run a shell command: true when it succeeded, and its output (stderr too)
function B.sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  return p:close() == true, out
end

-- the best wall time of f over REPEAT runs, queued device work included,
-- and over as many more as fit in span seconds (none unless given)
function B.best(f, span)
  local t, spent, n = math.huge, 0, 0
  while n < B.REPEAT or spent < (span or 0) do
    local t0 = luacuda.clock()
    f()
    luacuda.synchronize()
    local d = luacuda.clock() - t0
    t, spent, n = math.min(t, d), spent + d, n + 1
  end
  return t
end

-- Figures for the performance guide's tables and chart: with BENCH_RESULTS set (make
-- bench sets bench/results), B.results(bench) starts $BENCH_RESULTS/<bench>.dat
-- and B.record appends one line: "label" ratio target direction, the ratio
-- against the baseline measured in the same run (gnuplot reads the quotes).
local results
function B.results(bench)
  local dir = os.getenv("BENCH_RESULTS")
  if not dir or dir == "" then return end
  results = assert(io.open(dir .. "/" .. bench .. ".dat", "w"))
  results:write("# ", bench, ".lua, ", os.date("!%Y-%m-%d"), ", ", luacuda.backend(),
                " backend: label, ratio, target, <= or >= (which side meets it)\n")
end

function B.record(label, ratio, target, dir)
  if not results then return end
  results:write(('"%s" %.4g %g %s\n'):format(label, ratio, target, dir))
  results:flush()
end

-- The fake CUDA driver's path (spec/fake/fake_cuda.c); nil, with the bench's
-- closing line printed, where it was not built.
function B.fake_driver()
  local fake = (os.getenv("LUACUDA_BUILD") or "build") .. "/fake/libcuda.so.1"
  local f = io.open(fake)
  if f then f:close() return fake end
  print("no " .. fake .. " (make check builds it where the toolkit's cuda.h is)")
  print("bench: 0 of 0 targets met")
  return nil
end

return B
