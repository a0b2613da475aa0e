-- The simulator's parity check (src/backend/sim/check.c): where NVRTC can be
-- loaded, every kernel the simulator compiles is compiled by NVRTC too, as
-- the CUDA backend would compile it, and what NVRTC rejects fails on the
-- simulator with NVRTC's message and the user's lines, so that a kernel
-- that runs on the simulator compiles for a GPU. LUACUDA_NVRTC_CHECK=0
-- turns it off; a check passed is remembered in the disk cache.
local luacuda = require "luacuda"
local S = require "spec.support"

local checks = S.nvrtc_checks()
local has_nvrtc = luacuda.nvrtc_version() ~= nil

-- what g++ (the simulator's compiler) takes and NVRTC rejects, each with
-- the line NVRTC names and its message
local REJECTED = {
  { what = "SIZE_MAX (C's <stdint.h>; NVRTC has no C library headers)", line = 3,
    message = 'identifier "SIZE_MAX" is undefined', source = [[
extern "C" __global__ void k(unsigned long long *o) {
  o[0] = 1;
  o[1] = SIZE_MAX;
}]] },
  { what = "a host-only function of the C library", line = 2,
    message = 'identifier "rand" is undefined', source = [[
extern "C" __global__ void k(int *o) {
  o[0] = rand();
}]] },
  { what = "a GNU statement expression", line = 3,
    message = "expected an expression", source = [[
extern "C" __global__ void k(int *o) {
  int a = 2;
  o[0] = ({ int t = a; t + 1; });
}]] },
  { what = "a variable-length array (a GNU extension in C++)", line = 3,
    message = "expression must have a constant value", source = [[
extern "C" __global__ void k(int *o) {
  int n = o[0];
  int a[n];
  a[0] = 1;
  o[1] = a[0];
}]] },
  { what = "a function without __device__ called from a kernel", line = 2,
    message = "host functions are not allowed in JIT mode", source = [[
// twice is a host function: NVRTC takes it as __device__ only with -default-device
int twice(int x) { return 2 * x; }
extern "C" __global__ void k(int *o) { o[0] = twice(o[1]); }]] },
  { what = "g++'s __builtin_offsetof", line = 3,
    message = 'identifier "__builtin_offsetof" is undefined', source = [[
struct P { int a; float b; };
extern "C" __global__ void k(int *o) {
  o[0] = (int)__builtin_offsetof(P, b);
}]] },
}

-- the first case, with its results checked where it runs
local RUNS = [[
extern "C" __global__ void k(unsigned long long *o) {
  o[0] = 1;
  o[1] = SIZE_MAX == 0xffffffffffffffffull;
  o[2] = ({ unsigned long long t = o[0]; t + 41; });
}]]

-- Why a test of the check itself cannot run here, or nil.
local function no_check()
  if S.backend ~= "sim" then return "simulator only: its NVRTC check" end
  if not checks then return "needs NVRTC, and LUACUDA_NVRTC_CHECK not 0" end
end

-- Run a Lua chunk in a fresh process on the simulator, with env; whether
-- it succeeded, and its output.
local function fresh(env, code)
  return S.lua_run("LUACUDA_BACKEND=sim " .. env, code)
end

-- A chunk that compiles src (a long string) with the options given, runs
-- k on 3 uint64 and prints the values (or the error), then whether NVRTC
-- is mapped into the process.
local function script(src, options)
  return ([[
local luacuda = require "luacuda"
local ok, m = pcall(luacuda.compile, %q, {name = "p.cu", options = %s})
if ok then
  local o = luacuda.device_array(3, "uint64")
  o[{}] = 0
  m.k[{1, 1}](o)
  print("values", table.concat(o:copy_to_host():totable(), ","))
else
  print(m)
end
local f = assert(io.open("/proc/self/maps"))
print("nvrtc loaded", f:read("a"):find("libnvrtc", 1, true) ~= nil)
f:close()
]]):format(src, options or "nil")
end

describe("the simulator's parity check with NVRTC", function()
  it("refuses what g++ takes and NVRTC rejects, with NVRTC's message and the user's line", function()
    if S.backend == "sim" and not checks then
      return pending("needs NVRTC: the simulator checks its kernels only where NVRTC loads")
    end
    for _, case in ipairs(REJECTED) do
      -- the same error on every backend: NVRTC's, at the user's line
      local err = S.misuse({ "luacuda.compile: compilation of p.cu failed",
                             ("p.cu(%d): error: "):format(case.line), case.message },
                           luacuda.compile, case.source, { name = "p.cu" })
      if S.backend == "sim" then
        assert.truthy(err:find("NVRTC rejects it, so it would not compile for a GPU", 1, true),
                      case.what .. ": " .. err)
        assert.truthy(err:find("LUACUDA_NVRTC_CHECK=0", 1, true), err)
        assert.is_nil(err:find("sim_runtime", 1, true), err)
      end
    end
  end)

  it("lets g++ compile and run them with LUACUDA_NVRTC_CHECK=0", function()
    if S.backend ~= "sim" then return pending("simulator only: its NVRTC check") end
    local ok, out = fresh("LUACUDA_CACHE=0 LUACUDA_NVRTC_CHECK=0", script(RUNS))
    assert.is_true(ok, out)
    assert.truthy(out:find("values\t1,1,42", 1, true), out)
    -- off, the check loads nothing
    assert.truthy(out:find("nvrtc loaded\tfalse", 1, true), out)
    -- and a compile error is g++'s again, file:line
    ok, out = fresh("LUACUDA_CACHE=0 LUACUDA_NVRTC_CHECK=0", [[
      local luacuda = require "luacuda"
      print(pcall(luacuda.compile, "extern \"C\" __global__ void k(int *o) {\n  o[0] = 1 +;\n}",
                  {name = "bad.cu"}))]])
    assert.is_true(ok, out)
    assert.truthy(out:find("compilation of bad.cu failed:\n", 1, true), out)
    assert.truthy(out:find("bad.cu:2:", 1, true), out)
    assert.is_nil(out:find("NVRTC", 1, true), out)
  end)

  it("compiles and runs a correct source, checked", function()
    -- a kernel defined in both branches of an #if (the CUDA backend marks
    -- the one compiled), a helper given -default-device (an option of
    -- NVRTC's own, which g++ is not given) and a -D both compilers take
    local src = [[
int twice(int x) { return 2 * x; }
#if SCALE > 2
extern "C" __global__ void k(int *o) { o[threadIdx.x] = twice(threadIdx.x) * SCALE; }
#else
extern "C" __global__ void k(int *o) { o[threadIdx.x] = -1; }
#endif
]]
    local m = luacuda.compile(src, { name = "good.cu", options = { "-default-device", "-DSCALE=3" } })
    local o = luacuda.device_array(4, "int32")
    m.k[{ 1, 4 }](o)
    assert.same({ 0, 6, 12, 18 }, o:copy_to_host():totable())
  end)

  it("gives NVRTC every option, as the CUDA backend does", function()
    if no_check() then return pending(no_check()) end
    local src = 'extern "C" __global__ void k(int *o) { o[0] = 1; }'
    -- one NVRTC does not know is NVRTC's error, as on a GPU
    S.misuse({ "compilation of o.cu failed: NVRTC rejects it", "unrecognized option --bogus" },
             luacuda.compile, src, { name = "o.cu", options = { "--bogus" } })
    -- the last -arch is NVRTC's: __reduce_add_sync needs compute capability
    -- 8.0, more than the simulator's 7.5
    local red = 'extern "C" __global__ void k(unsigned *o) { o[0] = __reduce_add_sync(~0u, 1u); }'
    S.misuse({ "compilation of r.cu failed: NVRTC rejects it",
               'identifier "__reduce_add_sync" is undefined' },
             luacuda.compile, red, { name = "r.cu" })
    local m = luacuda.compile(red, { name = "r.cu", options = { "-arch=compute_80" } })
    local o = luacuda.device_array(1, "uint32")
    m.k[{ 1, 32 }](o)
    assert.equal(32, o[1])
  end)

  it("does not check again on a cache hit", function()
    if no_check() then return pending(no_check()) end
    local dir = S.tmpdir("inc")
    local env = ("LUACUDA_CACHE_DIR=%s/cache"):format(dir)
    local header = dir .. "/inc/scale.cuh"
    local function write(text)
      local f = assert(io.open(header, "w"))
      f:write(text)
      f:close()
    end
    write("#define SCALE 7\n")
    local src = '#include "scale.cuh"\nextern "C" __global__ void k(unsigned long long *o) { o[1] = SCALE; }'
    local code = script(src, ("{'-I%s/inc'}"):format(dir))
    local ok, out = fresh(env, code)
    assert.is_true(ok, out)
    assert.truthy(out:find("values\t0,7,0", 1, true), out)
    assert.truthy(out:find("nvrtc loaded\ttrue", 1, true), out)     -- checked
    ok, out = fresh(env, code)
    assert.is_true(ok, out)
    assert.truthy(out:find("values\t0,7,0", 1, true), out)
    assert.truthy(out:find("nvrtc loaded\tfalse", 1, true), out)    -- a hit: not checked
    -- a header edited into what NVRTC rejects is checked anew
    write("\n#define SCALE SIZE_MAX\n")
    ok, out = fresh(env, code)
    assert.is_true(ok, out)
    assert.truthy(out:find("compilation of p.cu failed: NVRTC rejects it", 1, true), out)
    -- (at the macro's use)
    assert.truthy(out:find('p.cu(2): error: identifier "SIZE_MAX" is undefined', 1, true), out)
    S.sh("rm -rf " .. dir)
  end)

  it("checks a module compiled with the check off, and never remembers a failure as a pass", function()
    if no_check() then return pending(no_check()) end
    local dir = S.tmpdir()
    local env = ("LUACUDA_CACHE_DIR=%s/cache"):format(dir)
    local code = script(RUNS)
    local ok, out = fresh(env .. " LUACUDA_NVRTC_CHECK=0", code)
    assert.is_true(ok, out)
    assert.truthy(out:find("values\t1,1,42", 1, true), out)
    for _ = 1, 2 do       -- the module is in the cache; the check fails each time
      ok, out = fresh(env, code)
      assert.is_true(ok, out)
      assert.truthy(out:find("compilation of p.cu failed: NVRTC rejects it", 1, true), out)
      assert.truthy(out:find('p.cu(3): error: identifier "SIZE_MAX" is undefined', 1, true), out)
      assert.is_nil(out:find("values", 1, true), out)
    end
    S.sh("rm -rf " .. dir)
  end)

  it("changes nothing where NVRTC cannot be loaded", function()
    if S.backend ~= "sim" then return pending("simulator only: its NVRTC check") end
    local ok, out = fresh("LUACUDA_CACHE=0 LUACUDA_NVRTC=/nonexistent/libnvrtc.so.13", script(RUNS))
    assert.is_true(ok, out)
    assert.truthy(out:find("values\t1,1,42", 1, true), out)
  end)

  it("takes LUACUDA_NVRTC_CHECK as 0 or 1, and refuses anything else", function()
    if S.backend ~= "sim" then return pending("simulator only: its NVRTC check") end
    local ok, out = fresh("LUACUDA_NVRTC_CHECK=yes", 'require "luacuda"')
    assert.is_false(ok, out)
    assert.truthy(out:find("LUACUDA_NVRTC_CHECK=yes is not a whole number", 1, true), out)
    ok, out = fresh("LUACUDA_NVRTC_CHECK=2", 'require "luacuda"')
    assert.is_false(ok, out)
    assert.truthy(out:find("LUACUDA_NVRTC_CHECK=2 is out of range (0 to 1)", 1, true), out)
    if not has_nvrtc then return end
    ok, out = fresh("LUACUDA_CACHE=0 LUACUDA_NVRTC_CHECK=1", script(RUNS))
    assert.is_true(ok, out)
    assert.truthy(out:find("NVRTC rejects it", 1, true), out)
  end)
end)
