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

-- the best wall time of f over REPEAT runs, queued device work included
function B.best(f)
  local t = math.huge
  for _ = 1, B.REPEAT do
    local t0 = luacuda.clock()
    f()
    luacuda.synchronize()
    t = math.min(t, luacuda.clock() - t0)
  end
  return t
end

return B
