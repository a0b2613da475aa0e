-- What the rank scripts in spec/dist/ share: each rank writes its lines
-- into its own file rank<R>.txt in the directory given (mpirun would
-- interleave the ranks' lines on stdout), counts its checks, and compares
-- arrays with lists.
local M = {}

-- The log of rank r in dir: say(line), check(ok, what), finish() (the
-- "rank R: N checks, F failed" line, then the file closed); checks and
-- failures are counted in the table.
function M.open(dir, r)
  local file = assert(io.open((dir or ".") .. "/rank" .. r .. ".txt", "w"))
  local log = { checks = 0, failures = 0 }
  function log.say(line)
    file:write(line, "\n")
    file:flush()
  end
  function log.check(ok, what)
    log.checks = log.checks + 1
    if not ok then
      log.failures = log.failures + 1
      log.say(("FAIL rank %d: %s"):format(r, what))
    end
  end
  function log.finish()
    log.say(("rank %d: %d checks, %d failed"):format(r, log.checks, log.failures))
    file:close()
  end
  function log.close() file:close() end
  return log
end

-- An array's elements as a flat Lua list, in C order.
function M.flat(a)
  return a:copy_to_host():copy():reshape(a.size):totable()
end

-- Whether two lists hold the same values (NaN equal to NaN).
function M.equal(got, want)
  if #got ~= #want then return false end
  for i = 1, #want do
    if got[i] ~= want[i] and not (got[i] ~= got[i] and want[i] ~= want[i]) then return false end
  end
  return true
end

local function list_text(t)
  local u = {}
  for i, v in ipairs(t) do u[i] = tostring(v) end
  return "{" .. table.concat(u, ", ") .. "}"
end

-- check that got has the values of want, saying both when not.
function M.same(log, got, want, what)
  log.check(M.equal(got, want), ("%s: got %s, want %s"):format(what, list_text(got), list_text(want)))
end

return M
