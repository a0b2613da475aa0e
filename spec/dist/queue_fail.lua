-- Run by spec/dist_spec.lua on 2 ranks of the fake driver, rank 2 with
-- cuLaunchHostFunc failing: rank 2 cannot queue its allreduce on the
-- stream, and rank 1, whose MPI call is queued already and cannot be taken
-- back, aborts the job with the message (instead of a hang).
local luacuda = require "luacuda"
local comm = require("luacuda.dist").init()
local x = luacuda.full({ 4 }, comm.rank, "float32")
local s = luacuda.stream()
local ok, err = pcall(comm.allreduce, comm, x, "sum", { stream = s })
io.stderr:write(("rank %d: %s\n"):format(comm.rank, ok and "queued" or err))
s:synchronize()
