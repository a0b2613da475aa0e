-- Run by spec/dist_spec.lua under mpirun with LUACUDA_MPI_CUDA=0 or 1:
-- an allreduce of a device array, which an MPI that takes device memory
-- gets as it is (the spec counts the driver's copies in the fake driver's
-- trace), and any other MPI through a host copy. Log: ranklog.lua.
local luacuda = require "luacuda"

package.path = arg[0]:match("^(.*)/") .. "/?.lua;" .. package.path
local ranklog = require "ranklog"

local comm, log = ranklog.start(arg[1])
local R, P = comm.rank, comm.size
log.say("cuda_aware " .. tostring(comm.cuda_aware))
local x = luacuda.device_array({ 8 }, "float32"):fill(R)
comm:allreduce(x, "sum")
local want = {}
for i = 1, 8 do want[i] = P * (P + 1) / 2 end
log.same(x:copy_to_host():totable(), want, "allreduce of a device array")
ranklog.finish_all(comm, log)
