-- Run by spec/dist_spec.lua under `mpirun -np 1` on the CUDA backend with
-- the fake NCCL: a communicator of one rank, whose collectives are the
-- identity (its allreduce, broadcast and reduce give x back, its allgather
-- and reduce_scatter one part that is x), on the default stream and on a
-- stream. The rank writes "engine <name>", "FAIL <what>" lines, then "rank
-- 1: N checks, F failed" into rank1.txt in the directory arg[1].
local luacuda = require "luacuda"

package.path = arg[0]:match("^(.*)/") .. "/?.lua;" .. package.path
local ranklog = require "ranklog"

local comm, log = ranklog.start(arg[1])
local say, check, same, flat = log.say, log.check, log.same, ranklog.flat
say("engine " .. comm.engine)
check(comm.size == 1 and comm.rank == 1, "one rank: rank 1 of 1")

local function dev(t, dtype) return luacuda.to_device(luacuda.array(t, dtype)) end

-- allreduce: in place and into out, each op gives x back
for _, op in ipairs { "sum", "prod", "min", "max" } do
  local x = dev({ 3, -1, 4 }, "float32")
  comm:allreduce(x, op)
  same(flat(x), { 3, -1, 4 }, "allreduce " .. op .. " of one rank")
end
do
  local x, out = dev({ 5, 6 }, "int64"), luacuda.device_array(2, "int64")
  check(comm:allreduce(x, "sum", { out = out }) == out, "allreduce returns out")
  same(flat(out), { 5, 6 }, "allreduce into out")
end

-- broadcast from and reduce to the one root
do
  local x = dev({ 7, 8, 9 }, "int32")
  check(comm:broadcast(x, 1) == x, "broadcast returns x")
  same(flat(x), { 7, 8, 9 }, "broadcast from rank 1")
  local y = dev({ 1.5, 2.5 }, "float64")
  comm:reduce(y, 1, "max")
  same(flat(y), { 1.5, 2.5 }, "reduce to rank 1")
end

-- allgather and reduce_scatter: one part, which is x
do
  local x, all = dev({ 2, 4, 6 }, "float32"), luacuda.device_array({ 1, 3 }, "float32")
  comm:allgather(x, all)
  same(flat(all), { 2, 4, 6 }, "allgather of one part")
  local big, mine = dev({ 1, 0 }, "int32"), luacuda.device_array(2, "int32")
  comm:reduce_scatter(big, mine, "sum")
  same(flat(mine), { 1, 0 }, "reduce_scatter of one part")
end

-- on a stream: the same, once the stream is done
do
  local s = luacuda.stream()
  local x = dev({ 1, 2, 3, 4 }, "float32")
  comm:allreduce(x, "sum", { stream = s })
  s:synchronize()
  same(flat(x), { 1, 2, 3, 4 }, "allreduce on a stream")
end

log.finish()
