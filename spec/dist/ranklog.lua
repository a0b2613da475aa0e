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

-- a and b reduced by op ("sum", "prod", "min" or "max"), as Lua numbers
function M.combine(op, a, b)
  if op == "sum" then return a + b end
  if op == "prod" then return a * b end
  if op == "min" then return math.min(a, b) end
  return math.max(a, b)
end

-- The start of a rank script: the world communicator and the rank's log
-- in the directory dir (M.open), whose same(got, want, what) is M.same;
-- with own_device, a device of its own for each rank where there are
-- enough, as on a machine with a GPU a rank ("device N" logged).
function M.start(dir, own_device)
  local luacuda = require "luacuda"
  local comm = require("luacuda.dist").init()
  local log = M.open(dir, comm.rank)
  function log.same(got, want, what) M.same(log, got, want, what) end
  if own_device then
    if #luacuda.devices() >= comm.local_size then luacuda.select_device(comm.local_rank) end
    log.say("device " .. luacuda.current_device())
  end
  return comm, log
end

-- The end of a rank script: its summary line, then exit status 0 when no
-- rank failed a check (3 otherwise), the same on every rank.
function M.finish_all(comm, log)
  log.finish()
  local total = require("luacuda").full({ 1 }, log.failures, "int64")
  comm:allreduce(total)
  os.exit(total[1] == 0 and 0 or 3)
end

return M
