-- luacuda.dist's MPI calls with 64-bit counts (src/dist/bigcount.c): its C
-- test, spec/c/bigcount_test.c, under mpirun, with ranks and chunks that
-- cut the test's small arrays into several calls, and with the default
-- chunk; one busted test per C test and run. Pending, with the reason,
-- where mpirun or the test program (built with mpicc) is missing.
local S = require "spec.support"

local BUILD = os.getenv("LUACUDA_BUILD") or "build"
local BIN = BUILD .. "/bigcount_test"

local why_not
if not S.sh("command -v mpirun") then
  why_not = "no mpirun here (Debian's openmpi-bin; make deps installs it)"
elseif not S.exists(BIN) then
  why_not = BIN .. " was not built (no mpicc when luacuda was built: libopenmpi-dev)"
elseif S.backend ~= "sim" then
  -- plain C over MPI: no backend in it, so one run is enough
  why_not = "bigcount.c uses no backend: the simulator's run (make check) covers it"
end

-- Run the test program under mpirun with np ranks and the settings env
-- ("A=1 B=2"), its argument arg (all the tests when nil): whether it
-- exited 0, and its output (every rank's, stderr too). Under
-- AddressSanitizer (make test-asan) the program is built with it; OpenMPI's
-- own allocations outlive MPI_Finalize, so the leak check is off, and
-- mpirun itself runs without the preloaded runtime.
local function mpirun(np, env, arg)
  local asan = (os.getenv("LD_PRELOAD") or "") ~= ""
    and "ASAN_OPTIONS=detect_leaks=0:intercept_tls_get_addr=0 " or ""
  return S.sh(("env -u LD_PRELOAD -u LUACUDA_DIST_CHUNK -u BIGCOUNT_TEST_CHUNK "
    .. "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 %s%s "
    .. "timeout 120 mpirun --oversubscribe -np %d %s %s"):format(asan, env, np, BIN, arg or ""))
end

-- Whether out has rank 1's line "ok NAME".
local function passed(out, name)
  for line in out:gmatch("[^\n]+") do
    if line == "ok " .. name then return true end
  end
  return false
end

-- the tests' names, from the program itself
local names = {}
if not why_not then
  local ok, out = S.sh(BIN .. " --list")
  assert(ok, out)
  for name in out:gmatch("[^\n]+") do names[#names + 1] = name end
end

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
      it("runs spec/c/bigcount_test.c", function() pending(why_not) end)
      return
    end
    local result    -- the run's {ok, out}, made by the first test that needs it
    local function outcome()
      if not result then result = { mpirun(run.np, run.env) } end
      return result[1], result[2]
    end
    for _, name in ipairs(names) do
      it(name, function()
        local ok, out = outcome()
        assert(passed(out, name), ("%s did not pass (the run %s):\n%s"):format(name,
               ok and "exited 0" or "failed", out))
      end)
    end
    it("exits 0 and says no test failed", function()
      local ok, out = outcome()
      assert(ok, out)
      assert.truthy(out:find(("\n0 of %d tests failed\n"):format(#names), 1, true), out)
    end)
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
