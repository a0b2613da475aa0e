-- luacuda.dist's MPI calls with 64-bit counts (src/dist/bigcount.c): its C
-- test, spec/unit/bigcount_test.c, under mpirun, with ranks and chunks that
-- cut the test's small arrays into several calls, and with the default
-- chunk; one busted test per C test and run. Pending, with the reason,
-- where mpirun or the test program (built with mpicc) is missing.
local S = require "spec.support"

local BUILD = os.getenv("LUACUDA_BUILD") or "build"
local BIN = BUILD .. "/bigcount_test"

local why_not = S.mpi.why_not(BIN, "bigcount.c")

local function mpirun(np, env, arg) return S.mpi.run(BIN, np, env, arg, 120) end
local passed = S.mpi.passed

-- the tests' names, from the program itself
local names = why_not and {} or S.mpi.names(BIN)

-- The runs: ranks, and the chunk set (expected: what lc_mpi_chunk must say).
-- With a chunk of 7 the test's counts (0 to 50) make up to 8 calls, and
-- allgather and reduce_scatter_block cut at 7 / ranks elements each.
local RUNS = {
  { np = 3, env = "LUACUDA_DIST_CHUNK=7 BIGCOUNT_TEST_CHUNK=7" },
  { np = 2, env = "LUACUDA_DIST_CHUNK=3 BIGCOUNT_TEST_CHUNK=3" },
  { np = 1, env = "LUACUDA_DIST_CHUNK=7 BIGCOUNT_TEST_CHUNK=7" },
  { np = 3, env = "" },     -- INT_MAX: one call each
}

for _, run in ipairs(RUNS) do
  describe(("bigcount.c under mpirun -np %d %s"):format(run.np,
           run.env == "" and "with the default chunk" or run.env), function()
    if why_not then
      it("runs spec/unit/bigcount_test.c", function() pending(why_not) end)
      return
    end
    local result    -- the run's {ok, out}, made by the first test that needs it
    local function outcome()
      if not result then result = { mpirun(run.np, run.env) } end
      return result[1], result[2]
    end
    S.mpi.tests(it, names, outcome)
  end)
end

describe("bigcount.c's LUACUDA_DIST_CHUNK", function()
  if why_not then
    it("ignores settings that are not a count", function() pending(why_not) end)
    return
  end
  it("ignores settings that are not an integer from 1 to INT_MAX (the default stays)", function()
    for _, bad in ipairs({ "0", "-7", "abc", "7x", " 7", "2147483648", "99999999999999999999", "" }) do
      local ok, out = mpirun(1, ("LUACUDA_DIST_CHUNK='%s'"):format(bad), "chunk")
      assert(ok and passed(out, "chunk"), ("LUACUDA_DIST_CHUNK='%s':\n%s"):format(bad, out))
    end
  end)
  it("takes INT_MAX itself", function()
    local ok, out = mpirun(1, "LUACUDA_DIST_CHUNK=2147483647 BIGCOUNT_TEST_CHUNK=2147483647", "chunk")
    assert(ok and passed(out, "chunk"), out)
  end)
  it("is what the test expects (the test fails when told another chunk)", function()
    local ok, out = mpirun(1, "LUACUDA_DIST_CHUNK=7", "chunk")
    assert.is_false(ok, out)
    assert.is_false(passed(out, "chunk"), out)
    assert.truthy(out:find("lc_mpi_chunk: 7, expected 2147483647", 1, true), out)
  end)
end)
