-- Run by spec/dist_spec.lua under mpirun (2 ranks) on the fake driver,
-- slowed down (FAKE_CUDA_DELAY_US): collectives without stream= come after
-- the work queued before them on a non-blocking stream, as luacuda's own
-- calls without a stream do, on NCCL as on MPI. Each round queues several
-- fills on a non-blocking stream (the last one gives the values), then
-- calls allreduce without a stream; a collective that does not wait for
-- them sums what an earlier fill left. Log: spec/dist/ranklog.lua.
local luacuda = require "luacuda"

package.path = arg[0]:match("^(.*)/") .. "/?.lua;" .. package.path
local ranklog = require "ranklog"

local comm, log = ranklog.start(arg[1])
local R, P = comm.rank, comm.size
local same, flat = log.same, ranklog.flat
log.say("engine " .. comm.engine)

local N = 8
local s = luacuda.stream({ non_blocking = true })
local a = luacuda.device_array(N, "float32")
for round = 1, 3 do
  for k = 1, 4 do a:fill(100 * round + 10 * k + R, s) end       -- the last: 100 * round + 40 + R
  comm:allreduce(a, "sum")
  local want = {}
  for i = 1, N do want[i] = P * (100 * round + 40) + P * (P + 1) / 2 end
  same(flat(a), want, "round " .. round .. ": allreduce after fills on a non-blocking stream")
end
luacuda.synchronize()
s:close()
ranklog.finish_all(comm, log)
