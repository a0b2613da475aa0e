-- Run by spec/dist_spec.lua under mpirun (4 ranks): rank 3 dies of an
-- uncaught error while the others wait in a collective for it. The job
-- must end (MPI_Abort from rank 3's exit), not hang, with rank 3's message.
local luacuda = require "luacuda"
local comm = require("luacuda.dist").init()
local x = luacuda.full({ 8 }, comm.rank, "float32")
comm:allreduce(x)        -- everyone here: the job is under way
if comm.rank == 3 then error("rank 3 gives up on purpose") end
comm:allreduce(x)        -- the others wait here for rank 3
print("rank " .. comm.rank .. " should not get here")
