-- The long differential run (make fuzz-long): many sequences, the seed and
-- operations of each failure printed; with SEED set, one sequence replayed
-- and its operations printed whether it fails or not.
--   lua5.4 spec/fuzz_long.lua [count [first]]      SEED=n lua5.4 spec/fuzz_long.lua
local D = require "spec.differential"

local seed = tonumber(os.getenv("SEED") or "")
if seed then
  local ok, report, st = D.run(math.tointeger(seed))
  if ok then
    print(("seed %d: passed, %d checks\n  operations:\n    %s"):format(
      seed, st.checks, table.concat(st.log, "\n    ")))
  else
    print(report)
  end
  os.exit(ok and 0 or 1, true)
end

local count = math.tointeger(tonumber(arg[1] or "100000"))
local first = math.tointeger(tonumber(arg[2] or "1"))
assert(count and first, "usage: fuzz_long.lua [count [first]]")
local shown, start = 0, os.time()
local totals = D.run_many(first, count, function(s, report)
  print("FAILED seed " .. s)
  shown = shown + 1
  if shown <= 5 then print(report) end
end)
print(("%d sequences from seed %d: %d operations, %d checks, %d expected errors; %d failed (%d s)")
      :format(totals.sequences, first, totals.ops, totals.checks, totals.errors, totals.failures,
              os.time() - start))
if totals.failures > 0 then print("replay one with: make fuzz-long SEED=<seed>") end
os.exit(totals.failures == 0 and 0 or 1, true)
