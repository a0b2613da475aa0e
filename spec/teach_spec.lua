-- Errors that teach (issue 20): the mistakes a newcomer from NumPy, Numba
-- or C makes first get a message that says what to write instead; a
-- compile that misses the cache says so (LUACUDA_VERBOSE=1); and compile
-- options the simulator cannot honour are warned about or refused.
local luacuda = require "luacuda"
local S = require "spec.support"

local SAXPY = [=[
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void count(Array<int, 1> a, int n) {
  int i = threadIdx.x;
  if (i < n && i < a.shape[0]) a(i) = i;
}
extern "C" __global__ void twice(double v, double *out) { out[0] = 2 * v; }
]=]

-- The error f raises, and the line of this file it ran luacuda from:
-- f calls luacuda on the line after the one it starts on.
local function error_at(f)
  local line = debug.getinfo(f, "S").linedefined + 1
  local ok, err = pcall(f)
  assert.is_false(ok)
  return tostring(err), line
end

-- A fresh directory for a compile cache, removed by the caller.
local function tmpdir()
  local p = io.popen("mktemp -d")
  local dir = p:read("l")
  p:close()
  return dir
end

-- The lines of out that match pattern.
local function count_lines(out, pattern)
  local n = 0
  for l in out:gmatch("[^\n]+") do if l:find(pattern) then n = n + 1 end end
  return n
end

describe("luacuda counts from 1", function()
  it("says so when an index is 0", function()
    local a = luacuda.zeros({4}, "float32")
    local hint = "luacuda counts from 1, on every axis (the first element is a[1], or a[{1, 1}] in 2-d)"
    S.misuse({"luacuda.index: index 0 out of bounds for axis 1 of size 4", hint},
             function() return a[0] end)
    S.misuse({"luacuda.setitem: index 0 out of bounds", hint}, function() a[0] = 1 end)
    -- an index past the end is not a counting habit: no hint there
    local err = S.misuse("index 5 out of bounds for axis 1 of size 4", function() return a[5] end)
    assert.is_nil(err:find("counts from 1", 1, true))
  end)

  it("says so for a 0 in an index table, on any axis", function()
    local b = luacuda.zeros({2, 3}, "int32")
    S.misuse({"index 0 out of bounds for axis 1 of size 2", "luacuda counts from 1, on every axis"},
             function() return b[{0, 1}] end)
    S.misuse({"index 0 out of bounds", "of size 3", "luacuda counts from 1, on every axis"},
             function() return b[{1, 0}] end)
    assert.equal(0, b[{2, 3}])      -- the same table form, counted from 1
  end)

  it("says so for a range that starts or ends at 0", function()
    local a = luacuda.zeros({4}, "float32")
    S.misuse({"range {0, 2} out of bounds for axis 1 of size 4", "luacuda counts from 1"},
             function() return a[{{0, 2}}] end)
    S.misuse({"range {1, 0} out of bounds", "luacuda counts from 1"},
             function() return a[{{1, 0, -1}}] end)
    -- an empty range ending at 0 is valid (last before first), and stays so
    assert.same({0}, a[{{1, 0}}].shape)
  end)

  it("says so for select_device(0)", function()
    S.misuse({"luacuda.select_device: no device 0",
              "luacuda counts devices from 1 (the first is select_device(1))"},
             luacuda.select_device, 0)
    local n = #luacuda.devices()
    local err = S.misuse("no device " .. (n + 1), luacuda.select_device, n + 1)
    assert.is_nil(err:find("counts devices from 1", 1, true))
  end)
end)

describe("a shape given as separate numbers", function()
  it("is refused by every constructor taking a shape, showing the table form", function()
    local cases = {
      {"zeros", luacuda.zeros, {3, 4}, "luacuda.zeros({3, 4})"},
      {"ones", luacuda.ones, {2, 5}, "luacuda.ones({2, 5})"},
      {"empty", luacuda.empty, {3, 4, 5}, "luacuda.empty({3, 4, 5})"},
      {"device_array", luacuda.device_array, {10, 10}, "luacuda.device_array({10, 10})"},
      {"pinned_array", luacuda.pinned_array, {2, 2}, "luacuda.pinned_array({2, 2})"},
      {"mapped_array", luacuda.mapped_array, {2, 2}, "luacuda.mapped_array({2, 2})"},
      {"managed_array", luacuda.managed_array, {2, 2}, "luacuda.managed_array({2, 2})"},
    }
    for _, c in ipairs(cases) do
      S.misuse({"luacuda." .. c[1] .. ": give the shape as one table: " .. c[4],
                "the argument after the shape is the dtype"}, c[2], table.unpack(c[3]))
    end
  end)

  it("leaves a single number followed by a dtype alone", function()
    local a = luacuda.zeros(3, "int32")
    assert.same({3}, a.shape)
    assert.equal("int32", a.dtype)
    assert.same({4}, luacuda.device_array(4, "float32").shape)
    -- full's second argument is its value, so full(3, 4) is a shape and a value
    assert.same({4, 4, 4}, luacuda.full(3, 4):totable())
  end)
end)

describe("the launch form", function()
  local m
  setup(function() m = luacuda.compile(SAXPY, {name = "teach.cu"}) end)

  it("is said when a kernel is indexed with a number", function()
    S.misuse({"luacuda.index: kernel 'saxpy' is launched with a table, k[{grid, block}](args...) "
              .. "or k:launch({grid=, block=}, args...), not indexed with a number"},
             function() return m.saxpy[1] end)
  end)

  it("is said when a kernel is indexed with an unknown field", function()
    S.misuse({"kernel 'saxpy' has no field 'grid'", "launch it with k[{grid, block}](args...)"},
             function() return m.saxpy.grid end)
    assert.equal("saxpy", m.saxpy.name)     -- its fields stay readable
    assert.equal(4, m.saxpy.nparams)
  end)

  it("is said when a kernel is called without a configuration", function()
    local y = luacuda.device_array(4, "float32"):fill(0)
    S.misuse("kernel 'saxpy' needs a launch configuration: k[{grid, block}](...)",
             function() m.saxpy(4, 2.0, y, y) end)
  end)

  it("is said when a module is indexed with something that is not a name", function()
    S.misuse("luacuda.index: a module is indexed with a kernel's name (m.saxpy or "
             .. "m:get(\"saxpy\")), not a number", function() return m[1] end)
  end)

  it("names the module's kernels for an unknown kernel", function()
    S.misuse("teach.cu has no kernel 'sxapy' (its kernels: saxpy, count, twice)",
             function() return m.sxapy end)
  end)
end)

describe("compile errors", function()
  it("carry the script's file:line ahead of the compiler's log", function()
    local err, line = error_at(function()
      local m = luacuda.compile('extern "C" __global__ void k(int *o) { o[0] = undefined_name; }',
                                {name = "where.cu"})
      return m
    end)
    local head = err:match("^[^\n]*")
    assert.truthy(head:find("teach_spec.lua:" .. line .. ": luacuda.compile: compilation of where.cu",
                            1, true), err)
    -- the compiler's log follows, naming the user's own line
    assert.truthy(err:find("\n", 1, true), err)
    assert.truthy(err:find("undefined_name", 1, true), err)
  end)

  it("from ptx carry the script's file:line too", function()
    if luacuda.nvrtc_version() == nil then return pending("needs NVRTC") end
    local err, line = error_at(function()
      local p = luacuda.ptx('extern "C" __global__ void k(int *o) { o[0] = nothing_here; }')
      return p
    end)
    assert.truthy(err:find("teach_spec.lua:" .. line .. ": luacuda.ptx: ", 1, true), err)
    assert.truthy(err:find("nothing_here", 1, true), err)
  end)
end)

describe("a table where a kernel needs a device array", function()
  local m, y
  setup(function() m = luacuda.compile(SAXPY, {name = "teach.cu"}) end)
  before_each(function() y = luacuda.device_array(3, "float32"):fill(0) end)

  it("says the dtype the table would become and how to choose one", function()
    S.misuse({"kernel 'saxpy' argument 3 'x' (const float *): expected a device array, got a table",
              "luacuda.to_device(t) would make it an int64 array",
              'luacuda.to_device(t, {dtype = "float32"})'},
             function() m.saxpy[{1, 3}](3, 2.0, {1, 2, 3}, y) end)
    S.misuse({"would make it a float64 array", 'luacuda.to_device(t, {dtype = "float32"})'},
             function() m.saxpy[{1, 3}](3, 2.0, {1, 2.5, 3}, y) end)
  end)

  it("names the parameter's own dtype for an Array<T, N> parameter", function()
    S.misuse({"argument 1 'a' (Array<int, 1>)", "would make it an int64 array",
              'luacuda.to_device(t, {dtype = "int32"})'},
             function() m.count[{1, 3}]({0, 0, 0}, 3) end)
  end)

  it("launches with the array the hint makes", function()
    local x = luacuda.to_device({1, 2, 3}, {dtype = "float32"})
    m.saxpy[{1, 3}](3, 2.0, x, y)
    assert.same({2, 4, 6}, S.host_values(y))
  end)
end)

describe("scalar kernel arguments", function()
  local m, y
  setup(function() m = luacuda.compile(SAXPY, {name = "teach.cu"}) end)
  before_each(function() y = luacuda.device_array(3, "float32"):fill(0) end)

  it("refuse a finite number a float parameter would make infinite", function()
    local x = luacuda.device_array(3, "float32"):fill(1)
    S.misuse({"kernel 'saxpy' argument 2 'a' (float): 1e+40 is outside float32's range: "
              .. "it would become infinity (give math.huge for infinity)"},
             function() m.saxpy[{1, 3}](3, 1e40, x, y) end)
    S.misuse("-1e+40 is outside float32's range", function() m.saxpy[{1, 3}](3, -1e40, x, y) end)
    -- infinity asked for, and float32's largest values, are taken
    m.saxpy[{1, 3}](3, math.huge, x, y)
    m.saxpy[{1, 3}](3, 3.4e38, x, y)
    -- a double parameter holds 1e40
    local out = luacuda.device_array(1, "float64"):fill(0)
    m.twice[{1, 1}](1e40, out)
    assert.equal(2e40, S.host_values(out)[1])
  end)

  it("refuse NaN and a fraction for an integer parameter, naming it", function()
    S.misuse("kernel 'saxpy' argument 1 'n' (int): int32 needs an integer, got nan",
             function() m.saxpy[{1, 3}](0 / 0, 2.0, y, y) end)
    S.misuse("kernel 'saxpy' argument 1 'n' (int): int32 needs an integer, got 2.5",
             function() m.saxpy[{1, 3}](2.5, 2.0, y, y) end)
  end)
end)

describe("a grid computed with /", function()
  local m, y
  setup(function() m = luacuda.compile(SAXPY, {name = "teach.cu"}) end)
  before_each(function() y = luacuda.device_array(4, "float32"):fill(1) end)

  it("suggests // for a fraction", function()
    local n = 7
    S.misuse({"kernel 'saxpy': grid must be an integer, got 3.5",
              "use // for integer division"},
             function() m.saxpy[{n / 2, 2}](4, 1.0, y, y) end)
    S.misuse({"kernel 'saxpy': block y must be an integer, got 1.5", "use // for integer division"},
             function() m.saxpy[{1, {2, 3 / 2}}](4, 1.0, y, y) end)
    S.misuse({"grid must be an integer, got 0.5", "use // for integer division"},
             function() m.saxpy:launch({grid = 1 / 2, block = 4}, 4, 1.0, y, y) end)
  end)

  it("takes an integral float, as Lua's math.tointeger does", function()
    m.saxpy[{8 / 4, 2}](4, 1.0, y, y)      -- 2.0 blocks of 2 threads
    assert.same({2, 2, 2, 2}, S.host_values(y))
  end)
end)

describe("LUACUDA_VERBOSE=1", function()
  local dir
  before_each(function() dir = tmpdir() end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  it("prints one line for a compile that misses the cache, and none for a hit", function()
    local code = [=[
local luacuda = require "luacuda"
luacuda.compile('extern "C" __global__ void verbose_probe(int *o) { o[0] = 7; }')
print("compiled")
]=]
    local env = ("LUACUDA_VERBOSE=1 LUACUDA_CACHE_DIR=%s"):format(dir)
    local line = "^luacuda: compiled verbose_probe %(" .. S.backend .. ", [%d.]+ s%)$"
    local ok, out = S.lua_run(env, code)
    assert.is_true(ok, out)
    assert.equal(1, count_lines(out, line), out)
    ok, out = S.lua_run(env, code)                -- from the disk cache now
    assert.is_true(ok, out)
    assert.truthy(out:find("compiled", 1, true), out)
    assert.equal(0, count_lines(out, "^luacuda: compiled verbose_probe"), out)
  end)

  it("prints the line for the library's kernels too", function()
    if S.backend ~= "sim" then
      return pending("simulator only: its matrix product's kernel is compiled at the first product")
    end
    -- the CPU's BLAS off: the simulator's products are then its kernel
    local ok, out = S.lua_run(("LUACUDA_CPU_BLAS=0 LUACUDA_VERBOSE=1 LUACUDA_CACHE_DIR=%s"):format(dir), [=[
local luacuda = require "luacuda"
local a = luacuda.to_device(luacuda.ones({2, 2}, "float32"))
print(luacuda.matmul(a, a):copy_to_host()[{1, 1}])
]=])
    assert.is_true(ok, out)
    assert.equal(1, count_lines(out, "^luacuda: compiled lc_matmul %(sim, [%d.]+ s%)$"), out)
  end)

  it("is refused at require time when it is not 0 or 1", function()
    local ok, out = S.lua_run("LUACUDA_VERBOSE=yes", 'require "luacuda"')
    assert.is_false(ok)
    assert.truthy(out:find("LUACUDA_VERBOSE=yes is not a whole number", 1, true), out)
  end)
end)

describe("compile options on the simulator", function()
  local dir
  before_each(function() dir = tmpdir() end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  it("warn once about an option that changes results on a GPU only", function()
    if S.backend ~= "sim" then return pending("simulator only: the CUDA backend honours them") end
    local ok, out = S.lua_run(("LUACUDA_CACHE_DIR=%s"):format(dir), [=[
local luacuda = require "luacuda"
local src = 'extern "C" __global__ void k(float *o) { o[0] = 1.0f / o[1]; }'
luacuda.compile(src, {options = {"-ftz=true"}})
luacuda.compile(src .. " ", {options = {"-ftz=true", "-prec-div=true"}})
luacuda.compile(src .. "  ", {options = {"-fmad=false", "-prec-sqrt=true", "-lineinfo"}})
print("done")
]=])
    assert.is_true(ok, out)
    assert.truthy(out:find("done", 1, true), out)
    assert.equal(1, count_lines(out, "^luacuda: the simulator does not honour %-ftz=true %(flush%-to%-zero"),
                 out)
    -- the values the simulator computes as are not warned about
    assert.equal(1, count_lines(out, "^luacuda: the simulator does not honour"), out)
  end)

  it("refuse -include, which the simulator cannot honour", function()
    if S.backend ~= "sim" then return pending("simulator only: NVRTC honours -include") end
    local header = os.tmpname()
    local f = assert(io.open(header, "w"))
    f:write("#define FROM_HEADER 3\n")
    f:close()
    S.misuse({"luacuda.compile: option -include cannot be honoured by the simulator",
              "#include the header at the top of the source instead"},
             luacuda.compile, 'extern "C" __global__ void k(int *o) { o[0] = 1; }',
             {options = {"-include", header}})
    os.remove(header)
  end)

  it("refuse an option unknown to the simulator, where NVRTC does not check it first", function()
    if S.backend ~= "sim" then return pending("simulator only: NVRTC refuses it on a GPU") end
    local ok, out = S.lua_run("LUACUDA_NVRTC_CHECK=0 LUACUDA_CACHE_DIR=" .. dir, [=[
local luacuda = require "luacuda"
print(pcall(luacuda.compile, 'extern "C" __global__ void k(int *o) { o[0] = 1; }',
            {options = {"-no-such-option"}}))
]=])
    assert.is_true(ok, out)
    assert.truthy(out:find("false\tluacuda.compile: option -no-such-option is not one the "
                           .. "simulator knows", 1, true), out)
  end)
end)
