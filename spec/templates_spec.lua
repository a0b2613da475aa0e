-- Kernels with C++ linkage: found by their own name when that names one
-- kernel, and templates (or overloads) through compile's name_expressions;
-- on both backends, and from the disk cache in a new process.
local luacuda = require "luacuda"
local S = require "spec.support"

local function ints(t)
  local r = {}
  for i, v in ipairs(t) do r[i] = math.tointeger(v) or v end
  return r
end

describe("kernels with C++ linkage", function()
  it("are found by their own name", function()
    local m = luacuda.compile([[
      __global__ void saxpy(int n, float a, const float *x, float *y) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i] + y[i];
      }
    ]])
    local x = luacuda.to_device(luacuda.arange(8, "float32"))
    local y = luacuda.to_device(luacuda.ones(8, "float32"))
    m.saxpy[{1, 8}](8, 2.0, x, y)
    assert.same({1, 3, 5, 7, 9, 11, 13, 15}, ints(S.host_values(y)))
    assert.equal("saxpy", m.saxpy.name)
    assert.equal(4, m.saxpy.nparams)
    -- and checked as any kernel: a float32 array is no int*
    S.misuse({"luacuda.launch:", "argument 3"}, m.saxpy[{1, 8}], 8, 2.0,
             luacuda.device_array(8, "int32"):fill(0), y)
  end)

  it("refuses an overloaded name, naming the overloads", function()
    local m = luacuda.compile([[
      __global__ void fill(int *o) { o[threadIdx.x] = 1; }
      __global__ void fill(float *o) { o[threadIdx.x] = 2.5f; }
    ]], {name = "over.cu"})
    S.misuse({"luacuda.index: kernel 'fill' in over.cu is overloaded",
              "fill(int *); fill(float *)", "name_expressions"}, function() return m.fill end)
  end)

  it("takes an overload through a name expression", function()
    local m = luacuda.compile([[
      __global__ void fill(int *o) { o[threadIdx.x] = 1; }
      __global__ void fill(float *o) { o[threadIdx.x] = 2.5f; }
    ]], {name_expressions = {"static_cast<void (*)(float *)>(fill)"}})
    local o = luacuda.device_array(3, "float32")
    m["static_cast<void (*)(float *)>(fill)"][{1, 3}](o)
    assert.same({2.5, 2.5, 2.5}, S.host_values(o))
    assert.equal("float *", m["static_cast<void (*)(float *)>(fill)"].signature)
  end)

  it("in a namespace are named by a qualified name expression", function()
    local src = [[
      namespace ops { __global__ void neg(int *a) { a[threadIdx.x] = -a[threadIdx.x]; } }
    ]]
    local m = luacuda.compile(src, {name = "ns.cu"})
    S.misuse({"luacuda.index: kernel 'neg' in ns.cu is in a namespace", "\"ns::neg\""},
             function() return m.neg end)
    m = luacuda.compile(src, {name_expressions = {"ops::neg"}})
    local a = luacuda.to_device(luacuda.array({1, -2}, "int32"))
    m["ops::neg"][{1, 2}](a)
    assert.same({-1, 2}, S.host_values(a))
  end)

  it("refuses a template named without its arguments", function()
    local m = luacuda.compile([[
      template <typename T> __global__ void sq(T *a, int n) { }
    ]], {name = "t.cu"})
    S.misuse({"kernel 'sq' in t.cu is a template", "name_expressions"}, m.get, m, "sq")
  end)
end)

describe("template kernels", function()
  local SQ = [[
    template <typename T>
    __global__ void sq(T *a, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) a[i] = a[i] * a[i];
    }
  ]]

  it("launch each instantiation named by a name expression", function()
    local m = luacuda.compile(SQ, {name_expressions = {"sq<int>", "sq<float>", "sq<double>"}})
    local cases = {{"sq<int>", "int32", {-3, 0, 4, 7}, {9, 0, 16, 49}},
                   {"sq<float>", "float32", {1.5, -2, 0.5, 3}, {2.25, 4, 0.25, 9}},
                   {"sq<double>", "float64", {1e100, -0.5, 3, 1e-3}, {1e200, 0.25, 9, 1e-6}}}
    for _, c in ipairs(cases) do
      local a = luacuda.to_device(luacuda.array(c[3], c[2]))
      m[c[1]][{1, 4}](a, 4)
      local got = S.host_values(a)
      for i, want in ipairs(c[4]) do
        assert.near(want, got[i], math.abs(want) * 1e-12, c[1] .. " element " .. i)
      end
      assert.equal(c[1], m[c[1]].name)
    end
    -- the instantiation's own parameter types are checked
    assert.equal("int *, int", m["sq<int>"].signature)
    assert.equal("double *, int", m["sq<double>"].signature)
    S.misuse({"luacuda.launch:", "argument 1"}, m["sq<int>"][{1, 4}],
             luacuda.device_array(4, "float32"):fill(0), 4)
  end)

  it("take an integral template parameter", function()
    local m = luacuda.compile([[
      template <int N>
      __global__ void unroll(float *a) {
        #pragma unroll
        for (int k = 0; k < N; k++) a[threadIdx.x * N + k] += k;
      }
    ]], {name_expressions = {"unroll<4>", "unroll<2>"}})
    local a = luacuda.to_device(luacuda.zeros(8, "float32"))
    m["unroll<4>"][{1, 2}](a)
    assert.same({0, 1, 2, 3, 0, 1, 2, 3}, ints(S.host_values(a)))
    m["unroll<2>"][{1, 4}](a)
    assert.same({0, 2, 2, 4, 0, 2, 2, 4}, ints(S.host_values(a)))
    assert.equal("float *", m["unroll<2>"].signature)
  end)

  it("take a struct the source defines as a type argument: a functor by value", function()
    local m = luacuda.compile([[
      struct Axpy { float a; __device__ float operator()(float x, float y) const { return a * x + y; } };
      struct Clamp {
        float lo, hi;
        __device__ float operator()(float x, float y) const { return fminf(fmaxf(x + y, lo), hi); }
      };
      template <typename Op>
      __global__ void zip(const float *x, const float *y, float *out, int n, Op op) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = op(x[i], y[i]);
      }
    ]], {name_expressions = {"zip<Axpy>", "zip<Clamp>"}})
    assert.equal("const float *, const float *, float *, int, Axpy", m["zip<Axpy>"].signature)
    local x = luacuda.to_device(luacuda.arange(4, "float32"))
    local y = luacuda.to_device(luacuda.ones(4, "float32"))
    local out = luacuda.device_array(4, "float32")
    m["zip<Axpy>"][{1, 4}](x, y, out, 4, {a = 3})
    assert.same({1, 4, 7, 10}, ints(S.host_values(out)))
    m["zip<Clamp>"][{1, 4}](x, y, out, 4, {lo = 1.5, hi = 3.5})
    assert.same({1.5, 2, 3, 3.5}, ints(S.host_values(out)))
    S.misuse({"luacuda.launch:", "argument 5 'op' (Clamp)", "the table has no member 'hi'"},
             m["zip<Clamp>"][{1, 4}], x, y, out, 4, {lo = 1})
  end)

  it("refuse name_expressions that are not a table of strings", function()
    S.misuse("luacuda.compile: name_expressions must be a table of strings, got string",
             luacuda.compile, SQ, {name_expressions = "sq<int>"})
    S.misuse("luacuda.compile: name_expressions[2] must be a string, got number",
             luacuda.compile, SQ, {name_expressions = {"sq<int>", 3}})
    S.misuse("luacuda.compile: name_expressions[1] must be one line of 1 to 127 bytes",
             luacuda.compile, SQ, {name_expressions = {""}})
    local many = {}
    for i = 1, 65 do many[i] = "sq<int>" end
    S.misuse("luacuda.compile: more than 64 name_expressions",
             luacuda.compile, SQ, {name_expressions = many})
  end)

  it("refuse a name expression that names no kernel", function()
    S.misuse({"luacuda.compile: name_expressions[2] 'cube<int>' names no template kernel of ",
              "(its kernels: sq)"},
             luacuda.compile, SQ, {name_expressions = {"sq<int>", "cube<int>"}})
  end)

  it("refuse an instantiation whose parameters cannot be read, or do not match", function()
    S.misuse("luacuda.compile: name_expressions[1] 'sq<int, float>': 2 template arguments "
             .. "for 1 template parameters",
             luacuda.compile, SQ, {name_expressions = {"sq<int, float>"}})
    -- a type the source defines is not known to the instantiation's reading
    local m = luacuda.compile([[
      typedef float real;
      template <typename T> __global__ void scale(T *a, real s) { a[threadIdx.x] *= s; }
    ]], {name_expressions = {"scale<float>"}})
    S.misuse({"luacuda.index: kernel 'scale<float>' parameter 2", "real",
              "pass signatures={[\"scale<float>\"] = \"...\"} to compile"},
             function() return m["scale<float>"] end)
    m = luacuda.compile([[
      typedef float real;
      template <typename T> __global__ void scale(T *a, real s) { a[threadIdx.x] *= s; }
    ]], {name_expressions = {"scale<float>"}, signatures = {["scale<float>"] = "float *, float"}})
    local a = luacuda.to_device(luacuda.array({1, 2}, "float32"))
    m["scale<float>"][{1, 2}](a, 1.5)
    assert.same({1.5, 3}, S.host_values(a))
    -- the override is checked against the compiled kernel's parameter sizes
    m = luacuda.compile(SQ, {name_expressions = {"sq<int>"},
                             signatures = {["sq<int>"] = "int *, double"}})
    S.misuse("luacuda.index: kernel 'sq<int>': the parameters read from the source do not "
             .. "match the compiled kernel", function() return m["sq<int>"] end)
  end)

  it("refuse an expression whose template arguments do not fit", function()
    local m = luacuda.compile(SQ, {name = "sq.cu", name_expressions = {"sq<int>"}})
    assert.equal("int *, int", m["sq<int>"].signature)
    -- a name the module was not compiled with is no kernel of it
    S.misuse("luacuda.index: sq.cu has no kernel 'sq<float>'", function() return m["sq<float>"] end)
  end)
end)

describe("C++-linkage and template kernels from the disk cache", function()
  it("are found in a new process", function()
    local dir = S.tmpdir()
    local wrapper = dir .. "/cxx"
    local f = assert(io.open(wrapper, "w"))
    -- counts the simulator's compilations (-MD), not its --version probe,
    -- its precompiled head (c++-header) or its runtime's object
    f:write("#!/bin/sh\ncase \" $* \" in *\" c++-header \"* | *\"/runtime.cc \"*) ;; *\" -MD \"*) echo x >> " .. dir
            .. "/compiles ;; esac\nexec c++ \"$@\"\n")
    f:close()
    assert(S.sh("chmod +x " .. wrapper))
    local script = [==[
      local luacuda = require "luacuda"
      local m = luacuda.compile([[
        __global__ void twice(int *a) { a[threadIdx.x] *= 2; }
        template <typename T> __global__ void add(T *a, T b) { a[threadIdx.x] += b; }
      ]], {name_expressions = {"add<float>", "add<int>"}})
      local a = luacuda.to_device(luacuda.array({1, 2, 3}, "int32"))
      m.twice[{1, 3}](a)
      m["add<int>"][{1, 3}](a, 10)
      local b = luacuda.to_device(luacuda.array({0.5, 1.5}, "float32"))
      m["add<float>"][{1, 2}](b, 0.25)
      local maps = io.open("/proc/self/maps"):read("a")
      print(table.concat(a:copy_to_host():totable(), ","), table.concat(b:copy_to_host():totable(), ","),
            maps:find("libnvrtc", 1, true) and "nvrtc loaded" or "nvrtc not loaded")
    ]==]
    local function run()
      return S.sh(("LUACUDA_CACHE_DIR=%s/cache LUACUDA_CXX=%s lua5.4 -e %q"):format(dir, wrapper, script))
    end
    local function compiles()
      local c = io.open(dir .. "/compiles")
      if not c then return 0 end
      local n = select(2, c:read("a"):gsub("\n", ""))
      c:close()
      return n
    end
    for round = 1, 2 do
      local ok, out = run()
      assert.is_true(ok, out)
      assert.truthy(out:find("12,14,16\t0.75,1.75", 1, true), out)
      if S.backend == "sim" then
        assert.equal(1, compiles(), "round " .. round)
      elseif round == 2 then              -- a hit never loads NVRTC
        assert.truthy(out:find("nvrtc not loaded", 1, true), out)
      end
    end
    S.sh("rm -rf " .. dir)
  end)
end)
