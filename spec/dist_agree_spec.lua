-- luacuda.dist's control channel (src/dist/agree.c): its C test,
-- spec/c/agree_test.c, under mpirun with 3 ranks, one busted test per C
-- test (the C tests hold back chosen messages, so the orderings they need
-- are made, not left to chance). Pending, with the reason, where mpirun or
-- the test program (built with mpicc) is missing.
local S = require "spec.support"

local BUILD = os.getenv("LUACUDA_BUILD") or "build"
local BIN = BUILD .. "/agree_test"

local why_not
if not S.sh("command -v mpirun") then
  why_not = "no mpirun here (Debian's openmpi-bin; make deps installs it)"
elseif not S.exists(BIN) then
  why_not = BIN .. " was not built (no mpicc when luacuda was built: libopenmpi-dev)"
elseif S.backend ~= "sim" then
  -- plain C over MPI: no backend in it, so one run is enough
  why_not = "agree.c uses no backend: the simulator's run (make check) covers it"
end

describe("luacuda.dist's control channel (agree.c) under mpirun -np 3", function()
  if why_not then
    it("runs spec/c/agree_test.c", function() pending(why_not) end)
    return
  end
  local names = {}
  local ok, list = S.sh(BIN .. " --list")
  assert(ok, list)
  for name in list:gmatch("[^\n]+") do names[#names + 1] = name end

  -- the run, made once by the first test that needs it: whether it exited
  -- 0, and its output (every rank's, stderr too). Under AddressSanitizer
  -- the program is built with it, without the leak check (OpenMPI's own
  -- allocations outlive MPI_Finalize); mpirun runs without it.
  local result
  local function outcome()
    if not result then
      local asan = (os.getenv("LD_PRELOAD") or "") ~= ""
        and "ASAN_OPTIONS=detect_leaks=0:intercept_tls_get_addr=0 " or ""
      result = { S.sh(("env -u LD_PRELOAD OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
        .. "%stimeout 60 mpirun --oversubscribe -np 3 %s"):format(asan, BIN)) }
    end
    return result[1], result[2]
  end

  local function passed(out, name)
    for line in out:gmatch("[^\n]+") do
      if line == "ok " .. name then return true end
    end
    return false
  end

  for _, name in ipairs(names) do
    it(name, function()
      local done, out = outcome()
      assert(passed(out, name), ("%s did not pass (the run %s):\n%s"):format(name,
             done and "exited 0" or "failed", out))
    end)
  end
  it("exits 0 and says no test failed", function()
    local done, out = outcome()
    assert(done, out)
    assert.truthy(out:find(("\n0 of %d tests failed\n"):format(#names), 1, true), out)
  end)
end)
