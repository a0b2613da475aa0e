-- The frictions of issue 30: out= casting as NumPy's ufuncs cast, astype
-- with out=, one dtype argument form, creation of any kind, the comparison
-- operators' error, T* parameters refusing non-contiguous arrays, and the
-- messages that named the wrong thing.
local luacuda = require "luacuda"
local S = require "spec.support"
require "luacuda.assert"

-- np.can_cast(row, column, casting) for the 12 NumPy dtypes, generated once by
--   /usr/bin/python3 -c 'import numpy as np; N = [...the 12 names...];
--     [print(a, "".join("1" if np.can_cast(a, b, c) else "0" for b in N)) for a in N]'
-- (Debian 12's NumPy 1.24.2)
local NUMPY_DTYPES = { "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                       "uint64", "float16", "float32", "float64" }
local CAN_CAST = {
  safe = {
    ["bool"] = "111111111111", int8 = "011110000111", int16 = "001110000011",
    int32 = "000110000001", int64 = "000010000001", uint8 = "001111111111",
    uint16 = "000110111011", uint32 = "000010011001", uint64 = "000000001001",
    float16 = "000000000111", float32 = "000000000011", float64 = "000000000001",
  },
  same_kind = {
    ["bool"] = "111111111111", int8 = "011110000111", int16 = "011110000111",
    int32 = "011110000111", int64 = "011110000111", uint8 = "011111111111",
    uint16 = "011111111111", uint32 = "011111111111", uint64 = "011111111111",
    float16 = "000000000111", float32 = "000000000111", float64 = "000000000111",
  },
}

local KINDS = {
  host = function(a) return a end,
  device = function(a) return luacuda.to_device(a) end,
}

describe("out= of array math", function()
  it("takes the dtypes NumPy's can_cast allows under safe and same_kind (the default), and any under unsafe", function()
    local wrong = {}
    for _, casting in ipairs { "safe", "same_kind", "unsafe", "no", "equiv" } do
      for _, from in ipairs(NUMPY_DTYPES) do
        local x = luacuda.zeros({ 2 }, from)
        for j, to in ipairs(NUMPY_DTYPES) do
          local want
          if casting == "unsafe" then want = true
          elseif casting == "no" or casting == "equiv" then want = from == to
          else want = CAN_CAST[casting][from]:sub(j, j) == "1" end
          local ok = pcall(luacuda.maximum, x, x, { out = luacuda.zeros({ 2 }, to), casting = casting })
          if ok ~= want then
            wrong[#wrong + 1] = ("%s into %s under %s: %s, NumPy %s"):format(from, to, casting,
                                                                            tostring(ok), tostring(want))
          end
          if casting == "same_kind" and pcall(luacuda.maximum, x, x, luacuda.zeros({ 2 }, to)) ~= want then
            wrong[#wrong + 1] = ("%s into %s by default"):format(from, to)
          end
        end
      end
    end
    assert.same({}, wrong)
  end)

  for kind, make in pairs(KINDS) do
    it("converts the result into the output as it stores it (" .. kind .. ")", function()
      local x = make(luacuda.array({ 1.5, -2.5, 3.25 }, "float64"))
      local o32 = make(luacuda.zeros({ 3 }, "float32"))
      assert.equal(o32, luacuda.multiply(x, 2, o32))
      assert.array_equal({ 3.0, -5.0, 6.5 }, o32)
      local oi = make(luacuda.zeros({ 3 }, "int16"))
      assert.equal(oi, luacuda.multiply(x, 2, { out = oi, casting = "unsafe" }))
      assert.array_equal({ 3, -5, 6 }, oi)
      -- a comparison's bool into int32, and where's int64 (two Lua integers) into float32
      local i = make(luacuda.array({ 1, 5, 2 }, "int32"))
      local oc = make(luacuda.zeros({ 3 }, "int32"))
      i:gt(1, oc)
      assert.array_equal({ 0, 1, 1 }, oc)
      local f = make(luacuda.zeros({ 3 }, "float32"))
      assert.equal(f, luacuda.where(i:gt(1), 1, 0, { out = f }))
      assert.equal("float32", f.dtype)
      assert.array_equal({ 0.0, 1.0, 1.0 }, f)
      -- the stream in the options table
      local s = luacuda.stream()
      luacuda.add(i, 1, { out = oc, stream = s })
      s:synchronize()
      assert.array_equal({ 2, 6, 3 }, oc)
    end)
  end

  it("names the dtypes and the casting it refuses, and a bad casting or option", function()
    local i = luacuda.zeros(3, "int32")
    S.misuse("luacuda.add: cannot cast the result's dtype int32 into the output's uint8 under casting 'same_kind' "
             .. "(give {casting = 'unsafe'} to allow it)", luacuda.add, i, 1, { out = luacuda.zeros(3, "uint8") })
    S.misuse("luacuda.add: cannot cast the result's dtype int32 into the output's int64 under casting 'no'",
             luacuda.add, i, 1, { out = luacuda.zeros(3, "int64"), casting = "no" })
    S.misuse("luacuda.add: casting must be 'no', 'equiv', 'safe', 'same_kind' or 'unsafe', got 'kind'",
             luacuda.add, i, 1, { out = i, casting = "kind" })
    S.misuse("luacuda.add: unknown option outt", luacuda.add, i, 1, { outt = i })
    S.misuse("luacuda.add: the output is given twice", luacuda.add, i, 1, i, { out = i })
    local s = luacuda.stream()
    S.misuse("luacuda.add: the stream is given twice (stream= and an argument)", luacuda.add, i, 1,
             s, { stream = s })
  end)
end)

describe("astype", function()
  for kind, make in pairs(KINDS) do
    it("writes into out= of the dtype asked (" .. kind .. ")", function()
      local a = make(luacuda.array({ 1.75, -2.5, 3.0 }))
      local o = make(luacuda.zeros({ 3 }, "int32"))
      assert.equal(o, a:astype("int32", { out = o }))
      assert.array_equal({ 1, -2, 3 }, o)
      local s = luacuda.stream()
      local o2 = make(luacuda.zeros({ 3 }, "float32"))
      assert.equal(o2, a:astype("float32", { out = o2, stream = s }))
      s:synchronize()
      assert.array_equal({ 1.75, -2.5, 3.0 }, o2)
    end)
  end

  it("refuses an out= of another dtype or shape", function()
    local a = luacuda.array({ 1.5, 2.5 })
    S.misuse("luacuda.astype: out= must be of the dtype asked, int32, got int64", a.astype, a, "int32",
             { out = luacuda.zeros({ 2 }, "int64") })
    S.misuse("luacuda.astype: the output must be an array of dtype int32 and shape {2}, got dtype int32 and shape {3}",
             a.astype, a, "int32", { out = luacuda.zeros({ 3 }, "int32") })
    S.misuse("luacuda.astype: unknown option casting", a.astype, a, "int32", { casting = "unsafe" })
  end)
end)

describe("one dtype argument form", function()
  it("takes a dtype as a string or as {dtype = ...} in array, to_device and the creators", function()
    assert.equal("float32", luacuda.array({ 1, 2 }, "float32").dtype)
    assert.equal("float32", luacuda.array({ 1, 2 }, { dtype = "float32" }).dtype)
    local d = luacuda.to_device({ 1, 2 }, "float32")
    assert.equal("device", d.kind)
    assert.equal("float32", d.dtype)
    assert.array_equal({ 1.0, 2.0 }, d)
    assert.equal("float32", luacuda.to_device({ 1, 2 }, { dtype = "float32" }).dtype)
    local s = luacuda.stream()
    local e = luacuda.to_device({ 3, 4 }, "int16", s, { copy = true })
    s:synchronize()
    assert.equal("int16", e.dtype)
    assert.array_equal({ 3, 4 }, e)
    assert.equal("int8", luacuda.zeros({ 2 }, { dtype = "int8" }).dtype)
    assert.equal("int8", luacuda.full({ 2 }, 3, { dtype = "int8" }).dtype)
    assert.equal("uint8", luacuda.ones_like(luacuda.zeros(2), { dtype = "uint8" }).dtype)
    assert.equal(8, luacuda.zeros({ 2, 2 }, { dtype = "float64", order = "F" }).strides[1])
    -- the constructors of each memory kind and the generators
    assert.equal("int8", luacuda.device_array({ 2 }, { dtype = "int8" }).dtype)
    assert.equal("int16", luacuda.pinned_array(2, { dtype = "int16", order = "F" }).dtype)
    assert.equal("float32", luacuda.mapped_array(2, { dtype = "float32", wc = false }).dtype)
    assert.equal("uint8", luacuda.managed_array(2, { dtype = "uint8" }).dtype)
    local g = luacuda.random(1)
    assert.equal("float32", g:uniform({ 2 }, { dtype = "float32", kind = "host" }).dtype)
    assert.equal("float32", g:normal({ 2 }, { dtype = "float32" }).dtype)
    assert.equal("int8", g:integers(0, 5, { 2 }, { dtype = "int8" }).dtype)
  end)

  it("refuses a dtype given twice or a bad option", function()
    S.misuse("luacuda.to_device: the dtype is given twice (an argument and dtype=)", luacuda.to_device,
             { 1 }, "float32", { dtype = "int8" })
    S.misuse("luacuda.zeros: the dtype is given twice", luacuda.zeros, 2, "float32", { dtype = "int8" })
    S.misuse("luacuda.device_array: the dtype is given twice", luacuda.device_array, 2, "float32", { dtype = "int8" })
    local g = luacuda.random(1)
    S.misuse("luacuda.uniform: the dtype is given twice", g.uniform, g, { 2 }, "float32", { dtype = "float64" })
    S.misuse("luacuda.array: unknown option kind", luacuda.array, { 1 }, { kind = "device" })
    S.misuse("luacuda.zeros_like: unknown option order", luacuda.zeros_like, luacuda.zeros(2), { order = "F" })
  end)
end)

describe("creation of any kind", function()
  for _, kind in ipairs { "host", "device", "pinned", "mapped", "managed" } do
    it("zeros, ones, full, empty and the *_like functions take kind = '" .. kind .. "'", function()
      local z = luacuda.zeros({ 2, 3 }, { kind = kind, dtype = "int32" })
      assert.equal(kind, z.kind)
      assert.equal("int32", z.dtype)
      assert.array_equal({ { 0, 0, 0 }, { 0, 0, 0 } }, z)
      local o = luacuda.ones(3, "float32", { kind = kind })
      assert.equal(kind, o.kind)
      assert.array_equal({ 1.0, 1.0, 1.0 }, o)
      local f = luacuda.full({ 2 }, 7, { kind = kind })
      assert.equal(kind, f.kind)
      assert.equal("int64", f.dtype)
      assert.array_equal({ 7, 7 }, f)
      local e = luacuda.empty({ 2 }, "int8", { kind = kind })
      assert.equal(kind, e.kind)
      assert.same({ 2 }, e.shape)
      local h = luacuda.zeros({ 2 })
      local zl = luacuda.zeros_like(h, { kind = kind })
      assert.equal(kind, zl.kind)
      assert.array_equal({ 0.0, 0.0 }, zl)
      local fl = luacuda.full_like(h, 5, "int16", { kind = kind })
      assert.equal(kind, fl.kind)
      assert.equal("int16", fl.dtype)
      assert.array_equal({ 5, 5 }, fl)
      assert.equal(kind, luacuda.ones_like(h, { kind = kind }).kind)
      assert.equal(kind, luacuda.empty_like(h, { kind = kind }).kind)
      -- the model's kind by default
      assert.equal(kind, luacuda.zeros_like(z).kind)
    end)
  end

  it("refuses an unknown kind, naming the kinds", function()
    S.misuse("luacuda.zeros: kind must be 'host', 'pinned', 'mapped', 'managed' or 'device', got 'gpu'",
             luacuda.zeros, 3, { kind = "gpu" })
    S.misuse("luacuda.full_like: kind must be", luacuda.full_like, luacuda.zeros(2), 1, { kind = 1 })
  end)
end)

describe("the comparison operators", function()
  it("raise an error naming the method to write, for each operator and side", function()
    local a, b = luacuda.arange(3), luacuda.arange(3)
    S.misuse("luacuda.gt (>): Lua makes a comparison one boolean, so `a > 2` cannot give an array: write a:gt(2)",
             function() return a > 2 end)
    S.misuse("luacuda.lt (<): Lua makes a comparison one boolean, so `a < 2` cannot give an array: write a:lt(2)",
             function() return a < 2 end)
    S.misuse("`a >= 1.5` cannot give an array: write a:ge(1.5)", function() return a >= 1.5 end)
    S.misuse("`a <= 1` cannot give an array: write a:le(1)", function() return a <= 1 end)
    S.misuse("`a < b` cannot give an array: write a:lt(b)", function() return a < b end)
    -- the methods give the arrays
    assert.array_equal({ false, false, true }, a:gt(1))
  end)
end)

describe("launches", function()
  local m
  setup(function()
    m = luacuda.compile([[
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void opt(int n, float *y, int k = 3) {}
]])
  end)

  it("refuse a transposed or strided view for a T* parameter, naming :copy() and Array<T, N>", function()
    local x = luacuda.to_device(luacuda.arange(6, "float32"):reshape(2, 3))
    local y = luacuda.to_device(luacuda.zeros({ 3, 2 }, "float32"))
    S.misuse({ "kernel 'saxpy' argument 3 'x' (const float *): the array is not C-contiguous "
               .. "(a transposed or F-ordered view)", "pass a:copy()", "Array<T, N>" },
             m.saxpy.launch, m.saxpy, { grid = 1, block = 32 }, 6, 1.0, x.T, y)
    S.misuse({ "argument 3 'x'", "not C-contiguous", ":copy()" }, m.saxpy.launch, m.saxpy,
             { grid = 1, block = 32 }, 6, 1.0, luacuda.to_device(luacuda.zeros({ 2, 3 }, "float32", "F")), y)
    -- the copy is C-ordered: the kernel reads the transposed values
    m.saxpy:launch({ grid = 1, block = 32 }, 6, 1.0, x.T:copy(), y)
    assert.array_equal({ { 0, 3 }, { 1, 4 }, { 2, 5 } }, y)
  end)

  it("show the signature for a wrong argument count, and do not count spread grid and block", function()
    S.misuse("luacuda.launch: kernel 'saxpy' takes 4 arguments, got 3: saxpy(int n, float a, const float *x, float *y)",
             m.saxpy.launch, m.saxpy, { grid = 1, block = 32 }, 6, 1.0, luacuda.device_array(6, "float32"):fill(0))
    S.misuse("kernel 'opt' takes 2 to 3 arguments, got 1: opt(int n, float *y, int k = 3)",
             m.opt.launch, m.opt, { 1, 32 }, 6)
    S.misuse("luacuda.launch: kernel 'saxpy': the launch configuration is one table: "
             .. "k:launch({grid = 1, block = 32}, args...) or k[{grid, block}](args...), not numbers before the "
             .. "arguments (the kernel: saxpy(int n, float a, const float *x, float *y))",
             m.saxpy.launch, m.saxpy, 1, 32, 6, 1.0, luacuda.device_array(6, "float32"):fill(0),
             luacuda.device_array(6, "float32"):fill(0))
  end)
end)

describe("the messages of array math and copies", function()
  it("name which operand is a closed array", function()
    local a, c = luacuda.arange(3), luacuda.arange(3)
    c:close()
    S.misuse("luacuda.add (+): operand 2 (the second argument) is a closed array", function(x, y) return x + y end, a, c)
    S.misuse("luacuda.multiply (*): operand 1 (the first argument) is a closed array", function(x, y) return x * y end, c, 2)
    S.misuse("luacuda.where: operand 3 (the third argument) is a closed array", luacuda.where, a:gt(0), a, c)
    S.misuse("luacuda.add: the output (argument 3) is a closed array", luacuda.add, a, a, c)
  end)

  it("name the call that copies a device array into a pinned one", function()
    local p = luacuda.pinned_array({ 3 }, "float64"):fill(0)   -- set: misuse reads it
    local d = luacuda.to_device({ 1.0, 2.0, 3.0 })
    S.misuse("luacuda.copy_to_device: the target is a pinned array, not device memory: to copy a device array "
             .. "into it, call the source's copy_to_host (d:copy_to_host(pinned))", p.copy_to_device, p, d)
    d:copy_to_host(p)
    assert.array_equal({ 1.0, 2.0, 3.0 }, p)
  end)

  it("name both operands' devices and the copy for operands on two devices", function()
    local ok, out = S.lua_run("LUACUDA_SIM_DEVICES=2 FAKE_CUDA_DEVICES=2", [==[
      local luacuda = require "luacuda"
      local x = luacuda.to_device({ 1, 2 })
      local y = luacuda.to_device({ 3, 4 }, { device = 2 })
      local ok, err = pcall(function() return x + y end)
      print(err)
      local z = x + luacuda.to_device(y, { device = 1 })   -- the copy it names
      print(table.concat(z:copy_to_host():totable(), ","))
      do
        local _ <close> = luacuda.device(2)
        print(select(2, pcall(function() return x + x end)))
      end
    ]==])
    assert(ok, out)
    assert.truthy(out:find("luacuda.add (+): operand 1 is on device 1 and operand 2 on device 2: array math runs on "
                           .. "one device (copy one over first: luacuda.to_device(y, {device = 1}))", 1, true), out)
    assert.truthy(out:find("\n4,6\n", 1, true), out)
    assert.truthy(out:find("luacuda.add (+): operand 1 is on device 1, but device 2 is current", 1, true), out)
  end)
end)

describe("options tables", function()
  it("come last, and are tables, or the call names what it got", function()
    S.misuse("luacuda.zeros: the options table is the last argument, got number after it",
             luacuda.zeros, 3, { dtype = "float32" }, 5)
    local a = luacuda.array({ 1, 2, 3 }, "float32")
    S.misuse("luacuda.var: expected an options table, got number", luacuda.var, a, 1, 5)
    S.misuse("luacuda.norm: expected an options table, got string", luacuda.norm, a, 2, "x")
    local g = luacuda.random(1)
    S.misuse("luacuda.permutation: expected an options table, got number", g.permutation, g, 5, 7)
    S.misuse("luacuda.permutation: an array's permutation is of its kind: kind is for an n",
             g.permutation, g, a, { kind = "device" })
    S.misuse("luacuda.choice: size must be an integer or a shape table, got string",
             g.choice, g, 5, "x")
    S.misuse("luacuda.choice: replace must be a boolean, got string", g.choice, g, 5, 2, { replace = "no" })
    S.misuse("luacuda.choice: p must be a table or an array, got number", g.choice, g, 5, 2, { p = 1 })
    S.misuse("luacuda.choice: p with replace = false is not supported", g.choice, g, 5, 2,
             { p = { 0.2, 0.2, 0.2, 0.2, 0.2 }, replace = false })
    S.misuse("luacuda.choice: draws from an array are of its kind: kind is for an n", g.choice, g, a, 2,
             { kind = "device" })
    S.misuse("luacuda.var: ddof must be a number, got string", luacuda.var, a, { ddof = "1" })
    assert.near(1.0, luacuda.var(a, { ddof = 1 }), 1e-12)     -- the options in the axis's place
    assert.near(1.0, luacuda.std(a, nil, { ddof = 1 }), 1e-12)
    local m = luacuda.zeros({ 2, 2, 2 })
    S.misuse("luacuda.norm: axis must be one axis or a pair of them, got 3", luacuda.norm, m, nil,
             { axis = { 1, 2, 3 } })
    S.misuse("luacuda.sort: expected at most an axis and an options table, got 3 arguments",
             luacuda.sort, a, 1, 2, 3)
  end)

  it("name the caller's line, however deep the check", function()
    local ok, err = pcall(function() local v = luacuda.var(luacuda.array({ 1.0 }), 1, 5); return v end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("^[^:]*frictions_spec%.lua:%d+: luacuda%.var: "), err)
  end)
end)
