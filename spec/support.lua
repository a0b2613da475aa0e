-- Helpers shared by the specs.
local luacuda = require "luacuda"
local assert = require "luassert"   -- a required module does not see busted's assert

local S = {}

-- The backend under test, and whether its driver is spec/fake/fake_cuda.c
-- (make check-fake-cuda), which runs the PTX NVRTC makes of every kernel
-- through an interpreter: every test runs there, a kernel that spins for
-- time with fewer iterations. A test that needs the simulator itself starts
--   if S.backend ~= "sim" then return pending("simulator only: why") end
S.backend = luacuda.backend()
S.fake = S.backend == "cuda" and luacuda.devices()[1].name:find("^luacuda fake GPU") ~= nil

-- Whether the simulator checks every kernel with NVRTC too (its parity
-- check, src/backend/sim/check.c): on the simulator, where NVRTC loads and
-- LUACUDA_NVRTC_CHECK is not 0. A compile error is then NVRTC's, as on
-- the CUDA backend. (It loads NVRTC into the process.)
function S.nvrtc_checks()
  return S.backend == "sim" and os.getenv("LUACUDA_NVRTC_CHECK") ~= "0"
    and luacuda.nvrtc_version() ~= nil
end

-- A comparable snapshot of a value: arrays by kind, dtype, layout and
-- contents; tables deeply; anything else as is.
function S.snapshot(v, seen)
  if luacuda.type(v) == "array" then
    local A = luacuda.attr      -- a record field may hide a.shape and the like
    return { kind = A(v, "kind"), dtype = A(v, "dtype"), shape = A(v, "shape"),
             strides = A(v, "strides"), values = A(v, "totable")(v) }
  elseif type(v) == "table" then
    seen = seen or {}
    if seen[v] then return seen[v] end
    local t = {}
    seen[v] = t
    for k, x in pairs(v) do t[k] = S.snapshot(x, seen) end
    return t
  end
  return v
end

-- Call fn(...) and expect an error whose message contains every string
-- in patterns (plain text), with all arguments unchanged afterwards.
function S.misuse(patterns, fn, ...)
  if type(patterns) == "string" then patterns = { patterns } end
  local args = table.pack(...)
  local before = {}
  for i = 1, args.n do before[i] = S.snapshot(args[i]) end
  local ok, err = pcall(fn, ...)
  assert(not ok, "expected an error containing " .. table.concat(patterns, " / "))
  err = tostring(err)
  for _, p in ipairs(patterns) do
    assert(err:find(p, 1, true), ("error %q does not contain %q"):format(err, p))
  end
  for i = 1, args.n do
    assert.same(before[i], S.snapshot(args[i]), "argument " .. i .. " changed by a failed call")
  end
  return err
end

-- Element-wise equality of an array's contents with a nested table.
function S.values(a)
  return a:totable()
end

-- The contents of an array of any kind, copied to the host first.
function S.host_values(a)
  return a:copy_to_host():totable()
end

-- Run a shell command: whether it succeeded, its output (stderr too) and
-- its exit code.
function S.sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok, _, code = p:close()
  return ok == true, out, code
end

-- Run a Lua chunk in a child interpreter with the environment assignments
-- env ("NAME=value ..."): whether it succeeded, and its output.
function S.lua_run(env, code)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(code)
  f:close()
  local ok, out = S.sh(("%s lua5.4 %s"):format(env, path))
  os.remove(path)
  return ok, out
end

-- Whether a file can be opened.
function S.exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- A new empty directory (with its subdirectory sub, when given).
function S.tmpdir(sub)
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir .. (sub and "/" .. sub or "")))
  return dir
end

-- A C test program of MPI code (spec/unit/*_test.c built with mpicc), run
-- under mpirun: one busted test per C test the program lists (--list),
-- each passed where rank 1 printed "ok NAME".
S.mpi = {}

-- Why bin cannot run here (no mpirun, not built, or a run on another
-- backend, which plain C over MPI does not need), or nil.
function S.mpi.why_not(bin, what)
  if not S.sh("command -v mpirun") then
    return "no mpirun here (Debian's openmpi-bin; make deps installs it)"
  elseif not S.exists(bin) then
    return bin .. " was not built (no mpicc when luacuda was built: libopenmpi-dev)"
  elseif S.backend ~= "sim" then
    return what .. " uses no backend: the simulator's run (make check) covers it"
  end
end

-- The names of bin's tests, from the program itself.
function S.mpi.names(bin)
  local names = {}
  local ok, out = S.sh(bin .. " --list")
  assert(ok, out)
  for name in out:gmatch("[^\n]+") do names[#names + 1] = name end
  return names
end

-- Run bin under mpirun with np ranks, the settings env ("A=1 B=2") and
-- the argument arg (all the tests when nil), killed after limit seconds:
-- whether it exited 0, and its output (every rank's, stderr too). Under
-- AddressSanitizer (make test-asan) the program is built with it; OpenMPI's
-- own allocations outlive MPI_Finalize, so the leak check is off, and
-- mpirun itself runs without the preloaded runtime.
function S.mpi.run(bin, np, env, arg, limit)
  local asan = (os.getenv("LD_PRELOAD") or "") ~= ""
    and "ASAN_OPTIONS=detect_leaks=0:intercept_tls_get_addr=0 " or ""
  return S.sh(("env -u LD_PRELOAD -u LUACUDA_DIST_CHUNK -u BIGCOUNT_TEST_CHUNK "
    .. "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 %s%s "
    .. "timeout %d mpirun --oversubscribe -np %d %s %s"):format(asan, env, limit, np, bin, arg or ""))
end

-- Whether out has rank 1's line "ok NAME".
function S.mpi.passed(out, name)
  for line in out:gmatch("[^\n]+") do
    if line == "ok " .. name then return true end
  end
  return false
end

-- The busted tests of one run, made with the spec file's own it (busted
-- gives each file its own): one a C test, and one that the run exited 0
-- and said no test failed. outcome() makes the run (once) and gives
-- whether it exited 0 and its output.
function S.mpi.tests(it, names, outcome)
  for _, name in ipairs(names) do
    it(name, function()
      local ok, out = outcome()
      assert(S.mpi.passed(out, name), ("%s did not pass (the run %s):\n%s"):format(name,
             ok and "exited 0" or "failed", out))
    end)
  end
  it("exits 0 and says no test failed", function()
    local ok, out = outcome()
    assert(ok, out)
    assert.truthy(out:find(("\n0 of %d tests failed\n"):format(#names), 1, true), out)
  end)
end

-- The C files under src/, sorted (find and sort run without a sanitizer's
-- runtime: under make test-asan, ASan's leak check makes them exit 1).
function S.src_c_files()
  local ok, out = S.sh("env -u LD_PRELOAD sh -c \"find src -name '*.c' | sort\"")
  assert(ok, out)
  local files = {}
  for path in out:gmatch("[^\n]+") do files[#files + 1] = path end
  return files
end

return S
