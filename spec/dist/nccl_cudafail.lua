-- Run by spec/dist_spec.lua under mpirun (2 ranks) on the CUDA backend with
-- the fake NCCL, a driver call of the NCCL engine failed on a rank
-- (FAKE_CUDA_FAIL with FAKE_CUDA_FAIL_FROM=dist_mpi, so that only the
-- engine's own calls count) or an NCCL operation failed asynchronously
-- (FAKE_NCCL_ASYNC). It makes arg[2] in-place allreduces of x (each rank's
-- elements its rank number), each in a pcall; with arg[3] "pair", the calls
-- after the first (which starts NCCL) are rank 1's send of x to rank 2
-- (recv into x) instead. It writes one line per call into rank<R>.txt in
-- the directory arg[1]:
--   "R<R> call <i>\t<x[1] after it>\t<ok, or the message raised>"
-- then "R<R> done", when the rank got to its end.
--
-- The engine's driver calls, in order, for these allreduces on the legacy
-- stream: the first starts NCCL (cuDeviceGet, cuDevicePrimaryCtxRetain,
-- cuCtxPushCurrent 1, ncclCommInitRank, cuCtxPopCurrent 1), queues
-- (push 2, ncclAllReduce, pop 2) and waits (push 3, cuStreamQuery until
-- done, pop 3); each later one queues (push/pop 4, 6, ...) and waits
-- (push/pop 5, 7, ...); so do a send and a recv.
local luacuda = require "luacuda"
local dist = require "luacuda.dist"
local rank = tonumber(os.getenv("OMPI_COMM_WORLD_RANK")) + 1
package.path = arg[0]:match("^(.*)/") .. "/?.lua;" .. package.path
local log = require("ranklog").open(arg[1], rank)

local comm = dist.init()
local x = luacuda.to_device(luacuda.full({ 4 }, comm.rank, "float32"))
for i = 1, tonumber(arg[2]) do
  local ok, err
  if arg[3] == "pair" and i > 1 then
    if rank == 1 then ok, err = pcall(comm.send, comm, x, 2) else ok, err = pcall(comm.recv, comm, x, 1) end
  else
    ok, err = pcall(comm.allreduce, comm, x)
  end
  local after = x:copy_to_host():totable()
  log.say(("R%d call %d\t%s\t%s"):format(rank, i, after[1], ok and "ok" or tostring(err)))
end
log.say(("R%d done"):format(rank))
log.close()
