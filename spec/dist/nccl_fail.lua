-- Run by spec/dist_spec.lua under mpirun (2 ranks) on the CUDA backend
-- with the fake NCCL and a failure injected (FAKE_NCCL_FAIL, on one rank or
-- on both): arg[2] "init" expects the first allreduce to fail (making
-- NCCL's communicator), "call" the second. Each rank writes "ERR <case>\t<message>" into rank<R>.txt in
-- the directory arg[1], and "KEPT" when the array was left as it was.
local luacuda = require "luacuda"
local dist = require "luacuda.dist"
local rank = tonumber(os.getenv("OMPI_COMM_WORLD_RANK")) + 1
package.path = arg[0]:match("^(.*)/") .. "/?.lua;" .. package.path
local log = require("ranklog").open(arg[1], rank)
local say = log.say

local comm = dist.init()
local x = luacuda.to_device(luacuda.full({ 4 }, comm.rank, "float32"))
if arg[2] == "init" then   -- NCCL's communicator is made at the first collective
  local ok, err = pcall(comm.allreduce, comm, x)
  say("ERR init\t" .. (ok and "(no error)" or tostring(err)))
  return
end
comm:allreduce(x)                                   -- the first: fine
local before = x:copy_to_host():totable()
local ok2, err = pcall(comm.allreduce, comm, x)     -- the second: injected
say("ERR call\t" .. (ok2 and "(no error)" or tostring(err)))
local after = x:copy_to_host():totable()
if before[1] == after[1] and before[4] == after[4] then say("KEPT") end
log.close()
