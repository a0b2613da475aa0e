-- luacuda.dist's control channel (src/dist/agree.c): its C test,
-- spec/unit/agree_test.c, under mpirun with 3 ranks, one busted test per C
-- test (the C tests hold back chosen messages, so the orderings they need
-- are made, not left to chance). Pending, with the reason, where mpirun or
-- the test program (built with mpicc) is missing.
local S = require "spec.support"

local BUILD = os.getenv("LUACUDA_BUILD") or "build"
local BIN = BUILD .. "/agree_test"

local why_not = S.mpi.why_not(BIN, "agree.c")

describe("luacuda.dist's control channel (agree.c) under mpirun -np 3", function()
  if why_not then
    it("runs spec/unit/agree_test.c", function() pending(why_not) end)
    return
  end
  -- the run, made once by the first test that needs it
  local result
  S.mpi.tests(it, S.mpi.names(BIN), function()
    if not result then result = { S.mpi.run(BIN, 3, "", nil, 60) } end
    return result[1], result[2]
  end)
end)
