-- Run by spec/dist_spec.lua under mpirun (2 ranks) on the CUDA backend with
-- the fake NCCL and a small device (FAKE_CUDA_MEMORY): luacuda's pool is
-- made to hold all the device's free memory, idle, before the first
-- collective, whose communicator's buffers then only fit once the pool
-- gives it back (issue 32, defect 4). Each rank writes into rank<R>.txt in
-- the directory arg[1] its allreduce's result or the message raised:
--   "R<R> allreduce\t<x[1] after it>\t<ok, or the message>"
local luacuda = require "luacuda"
local dist = require "luacuda.dist"
local rank = tonumber(os.getenv("OMPI_COMM_WORLD_RANK")) + 1
package.path = arg[0]:match("^(.*)/") .. "/?.lua;" .. package.path
local log = require("ranklog").open(arg[1], rank)

local comm = dist.init()
local x = luacuda.to_device(luacuda.full({ 4 }, comm.rank, "float32"))
luacuda.synchronize()
do local _ <close> = luacuda.device_array(luacuda.memory_info().free, "uint8") end
luacuda.synchronize()
local free = luacuda.memory_info().free
local ok, err = pcall(comm.allreduce, comm, x)
log.say(("R%d allreduce\t%s\t%s\tfree before %d"):format(rank, x:copy_to_host():totable()[1],
        ok and "ok" or tostring(err), free))
log.close()
