-- Run by spec/dist_spec.lua under mpirun (4 ranks): calls that ranks get
-- wrong, alone or together. Each rank writes (into its file rank<R>.txt in
-- the directory arg[1]) "ERR <case>\t<message>" for
-- every error caught, "KEPT <case>" when the arrays were left as they
-- were, and at the end "rank R: done" after a collective that still works.
local luacuda = require "luacuda"
local comm = require("luacuda.dist").init()
local R, P = comm.rank, comm.size

package.path = arg[0]:match("^(.*)/") .. "/?.lua;" .. package.path
local log = require("ranklog").open(arg[1], R)
local say = log.say

local snapshot = require("ranklog").flat

local function same(t, u)
  if #t ~= #u then return false end
  for i = 1, #t do if t[i] ~= u[i] then return false end end
  return true
end

-- run fn(...), print its error (it must raise), and whether the given
-- arrays kept their contents
local function case(name, fn, ...)
  local arrays = table.pack(...)
  local before = {}
  for i = 1, arrays.n do before[i] = snapshot(arrays[i]) end
  local ok, err = pcall(fn, ...)
  say(("ERR %s\t%s"):format(name, ok and "(no error)" or tostring(err)))
  local kept = true
  for i = 1, arrays.n do kept = kept and same(before[i], snapshot(arrays[i])) end
  if kept then say("KEPT " .. name) end
end

local x32 = luacuda.full({ 4 }, R, "float32")
local x64 = luacuda.full({ 4 }, R, "float64")

case("dtype", function()
  comm:allreduce(R == 1 and x32 or x64)
end, x32, x64)

case("size", function()
  comm:allreduce(luacuda.full({ R == 2 and 5 or 4 }, R))
end)

case("shape", function(a) comm:broadcast(a, 1) end,
  luacuda.full(R == 4 and { 2, 3 } or { 3, 2 }, R))

case("op", function(a) comm:allreduce(a, R == 1 and "max" or "min") end, x64)

case("root", function(a) comm:broadcast(a, R == 1 and 2 or 1) end, x64)

case("function", function(a)
  if R == 1 then comm:broadcast(a, 1) else comm:allreduce(a) end
end, x64)

case("badop", function(a) comm:allreduce(a, R == 3 and "mean" or "sum") end, x64)

case("rootrange", function(a) comm:reduce(a, P + 1) end, x64)

case("notarray", function() comm:allreduce(R == 2 and { 1, 2, 3, 4 } or x64) end, x64)

case("allgather", function(a)
  comm:allgather(a, luacuda.empty({ R == 2 and P + 1 or P, 4 }))
end, x64)

case("allgather_dtype", function(a)
  comm:allgather(a, luacuda.empty({ P, 4 }, R == 4 and "float32" or "float64"))
end, x64)

case("reduce_scatter", function(a) comm:reduce_scatter(a, luacuda.empty({ 3 })) end, x64)

case("record", function()
  local Vec = luacuda.record { { "x", "float32" } }
  comm:allreduce(luacuda.zeros({ 2 }, Vec))
end)

case("overlap", function()
  local base = luacuda.full({ 8 }, R)
  comm:allreduce(base[{ { 1, 4 } }], { out = base[{ { 3, 6 } }] })
end)

case("split", function() comm:split(R == 1 and -1 or 0) end)

case("rootkind", function(a) comm:broadcast(a, "one") end, x64)

case("outsize", function(a) comm:allreduce(a, { out = luacuda.empty({ R == 2 and 5 or 4 }) }) end, x64)

-- on a stream, the header is still exchanged at the call
case("streamopt", function(a)
  comm:allreduce(R == 2 and luacuda.zeros({ 5 }, "float64") or a, "sum", { stream = luacuda.stream() })
end, x64)

case("badstream", function(a) comm:allreduce(a, "sum", { stream = R == 3 and 5 or nil }) end, x64)

case("closedstream", function(a)
  local s = luacuda.stream()
  s:close()
  comm:broadcast(a, 1, { stream = s })
end, x64)

case("badopt", function(a) comm:allreduce(a, { "x" }) end, x64)

case("notable", function(a) comm:allreduce(a, "sum", R == 2 and 5 or nil) end, x64)

case("blockoverlap", function()
  local base = luacuda.zeros({ 4 * P })
  comm:allgather(base[{ { 1, 4 } }], base)
end)

case("splitkey", function() comm:split(0, R == 4 and "k" or R) end)

case("recsize", function()
  local Rec = luacuda.record { { "x", R == 1 and "float32" or "float64" } }
  comm:broadcast(luacuda.zeros({ 2 }, Rec), 1)
end)

case("nocomm", function() comm.barrier() end)

-- send and recv in pairs, odd ranks sending to the next even one, which
-- receives something else each time
local sends = R % 2 == 1
local peer = sends and R + 1 or R - 1
local function pair(name, give, take, ...)
  case(name, function(...)
    if sends then comm:send(give(), peer) else comm:recv(take(...), peer) end
  end, ...)
end
pair("sr_count", function() return luacuda.zeros({ 3 }) end, function(a) return a end, x64)
pair("sr_dtype", function() return luacuda.zeros({ 4 }, "float32") end, function(a) return a end, x64)
pair("sr_shape", function() return luacuda.zeros({ 2, 3 }) end,
  function() return luacuda.zeros({ 3, 2 }) end)
pair("sr_sendbad", function() return { 1, 2, 3, 4 } end, function(a) return a end, x64)
pair("sr_recvbad", function() return x64 end, function() return "nothing" end)

case("self", function(a) comm:send(a, R) end, x64)

-- the communicator still works, and the arrays are as they were
local y = luacuda.full({ 3 }, R, "int32")
comm:allreduce(y)
local want = P * (P + 1) // 2
say(("rank %d: done %s"):format(R, (y[1] == want and y[3] == want) and "ok" or "WRONG"))
