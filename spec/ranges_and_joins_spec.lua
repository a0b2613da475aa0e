-- Creation functions with NumPy's semantics (issue 18): arange's range
-- form, linspace, the *_like functions, concatenate and stack; on every
-- memory kind, with transposed, strided, 0-d and empty inputs, against
-- values computed here in plain Lua.
local luacuda = require "luacuda"
local S = require "spec.support"

-- One maker per memory kind: (shape, dtype) -> an uninitialised array.
local KINDS = {
  { "host", function(shape, dt) return luacuda.empty(shape, dt) end },
  { "pinned", function(shape, dt) return luacuda.pinned_array(shape, dt) end },
  { "mapped", function(shape, dt) return luacuda.mapped_array(shape, dt) end },
  { "managed", function(shape, dt) return luacuda.managed_array(shape, dt) end },
  { "device", function(shape, dt) return luacuda.device_array(shape, dt) end },
}

-- An array of the kind made by make, holding the nested table t.
local function filled(make, t, dt)
  local h = luacuda.array(t, dt)
  local a = make(h.shape, h.dtype)
  a:setitem({}, h)
  return a
end

-- The values of any array, read on the host.
local values = S.host_values

-- NumPy's arange, in plain Lua: ceil((stop - start) / step) values, each
-- start + i*step.
local function lua_arange(start, stop, step)
  local n = math.max(0, math.ceil((stop - start) / step))
  local t = {}
  for i = 0, n - 1 do t[i + 1] = i == 0 and start or start + i * step end
  return t
end

-- NumPy's linspace, in plain Lua: i*step + start, the last exactly stop.
local function lua_linspace(start, stop, n)
  local t, step = {}, (stop - start) / (n - 1)
  for i = 0, n - 1 do t[i + 1] = i * step + start end
  if n > 1 then t[n] = stop end
  if n == 1 then t[1] = start end
  return t
end

local function map(t, f)
  local r = {}
  for i, v in ipairs(t) do r[i] = f(v) end
  return r
end

local function trunc(v) return v < 0 and math.ceil(v) or math.floor(v) end

-- Tables: the concatenation of nested tables along a 1-based axis, and
-- their stacking along a new one.
local function lua_concat(ts, axis)
  if axis == 1 then
    local r = {}
    for _, t in ipairs(ts) do for _, row in ipairs(t) do r[#r + 1] = row end end
    return r
  end
  local r = {}
  for i = 1, #ts[1] do
    local rows = {}
    for k, t in ipairs(ts) do rows[k] = t[i] end
    r[i] = lua_concat(rows, axis - 1)
  end
  return r
end

local function lua_stack(ts, axis)
  if axis == 1 then return ts end
  local r = {}
  for i = 1, #ts[1] do
    local rows = {}
    for k, t in ipairs(ts) do rows[k] = t[i] end
    r[i] = lua_stack(rows, axis - 1)
  end
  return r
end

describe("arange", function()
  it("keeps arange(n [, dtype])", function()
    assert.same({0, 1, 2, 3, 4}, luacuda.arange(5):totable())
    assert.equal("int64", luacuda.arange(5).dtype)
    local f = luacuda.arange(3, "float32")
    assert.equal("float32", f.dtype)
    assert.same({0.0, 1.0, 2.0}, f:totable())
    assert.same({}, luacuda.arange(0):totable())
  end)

  it("counts from start up to stop, stop excluded, in int64 from integers", function()
    local a = luacuda.arange(2, 5)
    assert.equal("host", a.kind)
    assert.equal("int64", a.dtype)
    assert.same({2, 3, 4}, a:totable())
    assert.equal(2, a[1])
    assert.same({0, 3, 6, 9}, luacuda.arange(0, 10, 3):totable())
    assert.same({-3, -1, 1}, luacuda.arange(-3, 3, 2):totable())
    assert.same({10, 7, 4, 1}, luacuda.arange(10, 0, -3):totable())     -- NumPy's example
    assert.same({4}, luacuda.arange(10, 0, -3).shape)
    for _, args in ipairs { {5, 2}, {2, 2}, {0, 5, -1}, {5, 0, 1} } do
      local e = luacuda.arange(table.unpack(args))
      assert.same({0}, e.shape)
      assert.equal("int64", e.dtype)
    end
  end)

  it("gives float64 when any argument is a float, each value start + i*step", function()
    local a = luacuda.arange(0, 1, 0.1)
    assert.equal("float64", a.dtype)
    assert.equal(10, a.size)                       -- NumPy's: 10 values, not 11
    assert.same(lua_arange(0, 1, 0.1), a:totable())
    assert.same(lua_arange(1, 2, 0.1), luacuda.arange(1, 2, 0.1):totable())
    assert.same({1.5, 2.5, 3.5}, luacuda.arange(1.5, 4):totable())
    assert.equal("float64", luacuda.arange(1.0, 4).dtype)
    assert.equal("float64", luacuda.arange(1, 4.0).dtype)
    assert.equal("float64", luacuda.arange(1, 4, 1.0).dtype)
    assert.same(lua_arange(1, -1, -0.25), luacuda.arange(1, -1, -0.25):totable())
    assert.same({}, luacuda.arange(0.5, 0.5, 0.1):totable())
  end)

  it("takes a dtype after step, or in its place", function()
    local f = luacuda.arange(0, 5, 2, "float32")
    assert.equal("float32", f.dtype)
    assert.same({0.0, 2.0, 4.0}, f:totable())
    local i8 = luacuda.arange(1, 4, "int8")
    assert.equal("int8", i8.dtype)
    assert.same({1, 2, 3}, i8:totable())
    local i16 = luacuda.arange(1, 4, nil, "int16")
    assert.equal("int16", i16.dtype)
    assert.same({1, 2, 3}, i16:totable())
    local h = luacuda.arange(0, 1, 0.25, "float16")
    assert.equal("float16", h.dtype)
    assert.same({0, 0.25, 0.5, 0.75}, h:totable())
  end)

  it("truncates toward zero into an integer dtype", function()
    local a = luacuda.arange(0.5, 3, 0.5, "int32")
    assert.same(map(lua_arange(0.5, 3, 0.5), trunc), a:totable())
    assert.same({0, 1, 1, 2, 2}, a:totable())
    assert.same({0, -1, -2}, luacuda.arange(-0.5, -3, -1, "int32"):totable())
    assert.same({255}, luacuda.arange(255.9, 256, 1, "uint8"):totable())
  end)

  it("is exact for integers at the ends of int64", function()
    local max, min = math.maxinteger, math.mininteger
    assert.same({max - 2, max - 1}, luacuda.arange(max - 2, max):totable())
    assert.same({min, min + 2}, luacuda.arange(min, min + 3, 2):totable())
    assert.same({max, -1}, luacuda.arange(max, min, min):totable())
    assert.same({3, 2, 1}, luacuda.arange(3, 0, -1, "uint8"):totable())
  end)

  it("stores values past int64 into uint64", function()
    local a = luacuda.arange(2.0^63, 2.0^63 + 8192, 4096, "uint64")
    assert.same({2.0^63, 2.0^63 + 4096}, a:totable())
  end)

  it("follows NumPy at the edges: an infinite step, a quotient that underflows", function()
    assert.same({0.0}, luacuda.arange(0, 5, math.huge):totable())
    assert.same({}, luacuda.arange(0, 5, -math.huge):totable())
    assert.same({0.0}, luacuda.arange(0, 1e-300, 1e300):totable())
    assert.same({}, luacuda.arange(0, -1e-300, 1e300):totable())
  end)

  it("refuses a step of zero or NaN, and infinite ends", function()
    S.misuse({"luacuda.arange", "step must not be zero"}, luacuda.arange, 0, 5, 0)
    S.misuse("step must not be zero", luacuda.arange, 0, 5, 0.0)
    -- (a closure: NaN is not equal to itself, so S.misuse cannot compare it)
    S.misuse("step must not be NaN", function() return luacuda.arange(0, 5, 0 / 0) end)
    S.misuse("start must be finite, got -inf", luacuda.arange, -math.huge, 0)
    S.misuse("stop must be finite, got inf", luacuda.arange, 0, math.huge)
  end)

  it("refuses a start that is not a number, and a bad dtype", function()
    S.misuse("start must be a number, got string", luacuda.arange, "0", 5)
    S.misuse("dtype bool has no range of values", luacuda.arange, 0, 3, 1, "bool")
    S.misuse("dtype bool has no range of values", luacuda.arange, 0.5, 3, "bool")
    S.misuse("dtype must be a string", luacuda.arange, 0, 3, true)
    S.misuse("unknown dtype 'f5'", luacuda.arange, 0, 3, 1, "f5")
  end)

  it("refuses values the dtype cannot hold, before allocating", function()
    S.misuse({"luacuda.arange", "259 is out of range for uint8"}, luacuda.arange, 250, 260, 1, "uint8")
    S.misuse("-1 is out of range for uint8", luacuda.arange, -1, 2, 1, "uint8")
    S.misuse("299 is out of range for uint8", luacuda.arange, 0.5, 300, 1, "uint8")
    S.misuse("-1 is out of range for uint16", luacuda.arange, 2.5, -2.5, -1, "uint16")
    S.misuse("is out of range for int64", luacuda.arange, 0, 2.0^64, 2.0^62, "int64")
  end)

  it("refuses ranges of more values than an array can hold", function()
    S.misuse("the range holds 18446744073709551615 values, more than an array can",
             luacuda.arange, math.mininteger, math.maxinteger)
    S.misuse("(stop - start) / step is inf: more values than an array can hold",
             luacuda.arange, 0, 1e300, 1e-300)
    S.misuse("array size overflows", luacuda.arange, 0, math.maxinteger)
  end)
end)

describe("linspace", function()
  it("spaces n values from start to stop, both included, in float64", function()
    local a = luacuda.linspace(0, 1, 5)
    assert.equal("host", a.kind)
    assert.equal("float64", a.dtype)
    assert.same({0, 0.25, 0.5, 0.75, 1}, a:totable())     -- NumPy's example
    assert.same(lua_linspace(2, 3, 5), luacuda.linspace(2, 3, 5):totable())
    assert.same(lua_linspace(1, 0, 3), luacuda.linspace(1, 0, 3):totable())
    assert.same(lua_linspace(-7.5, 12.25, 11), luacuda.linspace(-7.5, 12.25, 11):totable())
  end)

  it("ends exactly at stop", function()
    local a = luacuda.linspace(0, 0.3, 4):totable()
    assert.equal(0.3, a[4])
    assert.same(lua_linspace(0, 0.3, 4), a)
    assert.equal(1 / 3, luacuda.linspace(0, 1 / 3, 7)[7])
  end)

  it("gives {start} for n == 1 and an empty array for n == 0", function()
    assert.same({0.0}, luacuda.linspace(0, 1, 1):totable())
    assert.same({5.0}, luacuda.linspace(5, 1, 1):totable())
    local e = luacuda.linspace(0, 1, 0)
    assert.same({0}, e.shape)
    assert.equal("float64", e.dtype)
    assert.same({2.5, 2.5, 2.5}, luacuda.linspace(2.5, 2.5, 3):totable())
  end)

  it("scales before multiplying when the step underflows, as NumPy does", function()
    local tiny = 2.0^-1074
    assert.same({0.0, 0.0, tiny}, luacuda.linspace(0, tiny, 3):totable())
  end)

  it("takes a dtype; an integer one takes the floor of each value (NumPy 2)", function()
    local f = luacuda.linspace(0, 1, 3, "float32")
    assert.equal("float32", f.dtype)
    assert.same({0, 0.5, 1}, f:totable())
    local i = luacuda.linspace(-3, 1, 8, "int64")           -- NumPy 2.0's release notes
    assert.equal("int64", i.dtype)
    assert.same({-3, -3, -2, -2, -1, -1, 0, 1}, i:totable())
    assert.same(map(lua_linspace(0, 10, 4), math.floor), luacuda.linspace(0, 10, 4, "int32"):totable())
    assert.same({0, 127, 255}, luacuda.linspace(0, 255, 3, "uint8"):totable())
  end)

  it("refuses a bad n, start, stop or dtype", function()
    S.misuse({"luacuda.linspace", "n must not be negative, got -1"}, luacuda.linspace, 0, 1, -1)
    S.misuse("n must be an integer, got 2.5", luacuda.linspace, 0, 1, 2.5)
    S.misuse("n must be an integer, got no value", luacuda.linspace, 0, 1)
    S.misuse("start must be a number, got nil", luacuda.linspace, nil, 1, 3)
    S.misuse("stop must be a number, got table", luacuda.linspace, 0, {}, 3)
    S.misuse("dtype bool has no range of values", luacuda.linspace, 0, 1, 3, "bool")
  end)

  it("refuses values an integer dtype cannot hold, before allocating", function()
    S.misuse({"luacuda.linspace", "300 is out of range for uint8"}, luacuda.linspace, 0, 300, 4, "uint8")
    S.misuse("-1 is out of range for uint16", luacuda.linspace, -1, 1, 3, "uint16")
    S.misuse("int32 needs an integer", luacuda.linspace, 0, math.huge, 3, "int32")
  end)
end)

describe("the *_like functions", function()
  it("make an array of the same kind, shape and dtype, on every kind", function()
    for _, k in ipairs(KINDS) do
      local kind, make = k[1], k[2]
      local a = filled(make, {{1, 2, 3}, {4, 5, 6}}, "int32")
      local z, o, f, e = luacuda.zeros_like(a), luacuda.ones_like(a),
                         luacuda.full_like(a, 7), luacuda.empty_like(a)
      for _, b in ipairs { z, o, f, e } do
        assert.equal(kind, b.kind, kind)
        assert.equal("int32", b.dtype, kind)
        assert.same({2, 3}, b.shape, kind)
        assert.same({12, 4}, b.strides, kind)
        assert.are_not.equal(a, b)
      end
      assert.same({{0, 0, 0}, {0, 0, 0}}, values(z), kind)
      assert.same({{1, 1, 1}, {1, 1, 1}}, values(o), kind)
      assert.same({{7, 7, 7}, {7, 7, 7}}, values(f), kind)
      assert.same({{1, 2, 3}, {4, 5, 6}}, values(a), kind)      -- the model is untouched
    end
  end)

  it("take another dtype", function()
    for _, k in ipairs(KINDS) do
      local kind, make = k[1], k[2]
      local a = filled(make, {1, 2, 3}, "int16")
      local z = luacuda.zeros_like(a, "float64")
      assert.equal("float64", z.dtype, kind)
      assert.equal(kind, z.kind)
      assert.same({0.0, 0.0, 0.0}, values(z))
      local o = luacuda.ones_like(a, "bool")
      assert.same({true, true, true}, values(o))
      local f = luacuda.full_like(a, 2.5, "float32")
      assert.equal("float32", f.dtype)
      assert.same({2.5, 2.5, 2.5}, values(f))
      local e = luacuda.empty_like(a, "uint8")
      assert.equal("uint8", e.dtype)
      assert.same({1}, e.strides)
    end
  end)

  it("keep the model's axis order (NumPy's order 'K')", function()
    local base = luacuda.arange(24):reshape(2, 3, 4)
    for _, k in ipairs(KINDS) do
      local kind, make = k[1], k[2]
      local a = make({2, 3, 4}, "int64")
      a:setitem({}, base)
      local t = luacuda.zeros_like(a.T)
      assert.same({4, 3, 2}, t.shape, kind)
      assert.is_true(t:is_f_contiguous(), kind)
      assert.same({8, 32, 96}, t.strides, kind)
      assert.same({1, 4, 12}, luacuda.ones_like(a.T, "int8").strides, kind)
      local s = a[{{}, {1, -1, 2}, {nil, nil, -1}}]          -- strided, reversed
      local f = luacuda.full_like(s, 3)
      assert.same({2, 2, 4}, f.shape, kind)
      assert.same({64, 32, 8}, f.strides, kind)
      assert.same({{{3, 3, 3, 3}, {3, 3, 3, 3}}, {{3, 3, 3, 3}, {3, 3, 3, 3}}}, values(f), kind)
      assert.same(luacuda.device_array_like(a.T).strides, luacuda.empty_like(a.T).strides)
    end
  end)

  it("make 0-d and empty arrays", function()
    for _, k in ipairs(KINDS) do
      local kind, make = k[1], k[2]
      local z = luacuda.ones_like(make({}, "float32"))
      assert.equal(0, z.ndim, kind)
      assert.equal(kind, z.kind)
      assert.equal(1.0, values(z))
      local e = luacuda.full_like(make({0, 3}, "int8"), 5)
      assert.same({0, 3}, e.shape)
      assert.same({}, values(e))
    end
  end)

  it("work for bool, float16 and records (ones_like has no record one)", function()
    local b = luacuda.zeros_like(luacuda.ones(2, "bool"))
    assert.same({false, false}, b:totable())
    assert.same({true, true}, luacuda.ones_like(b):totable())
    assert.same({1.0, 1.0}, luacuda.ones_like(luacuda.zeros(2, "float16")):totable())
    local point = luacuda.record { { "x", "float32" }, { "n", "int32" }, { "v", "float64", 3 } }
    for _, k in ipairs(KINDS) do
      local kind, make = k[1], k[2]
      local a = make(2, point)
      a:fill({ x = 7, n = 7, v = { 7, 7, 7 } })   -- S.misuse compares it: no NaN garbage
      local z = luacuda.zeros_like(a)
      assert.equal(point, z.dtype, kind)
      assert.equal(kind, z.kind)
      local zero = { x = 0, n = 0, v = { 0, 0, 0 } }
      assert.same({zero, zero}, values(z), kind)
      local one = { x = 1.5, n = 2, v = { 1, 2, 3 } }
      assert.same({one, one}, values(luacuda.full_like(a, one)), kind)
      assert.equal(point, luacuda.empty_like(a).dtype)
      S.misuse({"luacuda.ones_like", "a record dtype has no one (use full_like or zeros_like)"},
               luacuda.ones_like, a)
    end
  end)

  it("refuse what is not an open array, and bad values", function()
    S.misuse({"luacuda.zeros_like", "expected an array, got table"}, luacuda.zeros_like, {1, 2})
    S.misuse({"luacuda.full_like", "expected an array, got no value"}, luacuda.full_like)
    local closed = luacuda.zeros(3)
    closed:close()
    S.misuse({"luacuda.empty_like", "attempt to use a closed array"}, luacuda.empty_like, closed)
    local a = luacuda.zeros(3, "int32")
    S.misuse({"luacuda.full_like", "int32 needs an integer, got 2.5"}, luacuda.full_like, a, 2.5)
    S.misuse("int32 needs a number, got boolean", luacuda.full_like, a, true)
    S.misuse("int32 needs a number, got nil", luacuda.full_like, a)
    S.misuse("300 is out of range for uint8", luacuda.full_like, a, 300, "uint8")
    S.misuse({"luacuda.ones_like", "unknown dtype 'int3'"}, luacuda.ones_like, a, "int3")
    local d = luacuda.to_device({1, 2})
    S.misuse("int64 needs an integer, got 0.5", luacuda.full_like, d, 0.5)
  end)

  it("refuse a broadcast model whose copy would not fit in memory's address range", function()
    -- 2^62 elements in one byte (stride 0): as float64 that is 2^65 bytes
    local huge = luacuda.device_array({2^62}, "int8", {strides = {0}})
    S.misuse({"luacuda.zeros_like", "array size overflows"},
             function() return luacuda.zeros_like(huge, "float64") end)
  end)
end)

describe("concatenate", function()
  it("joins along the first axis by default", function()
    local r = luacuda.concatenate({luacuda.arange(3), luacuda.arange(2)})
    assert.equal("host", r.kind)
    assert.equal("int64", r.dtype)
    assert.same({0, 1, 2, 0, 1}, r:totable())
    local a = luacuda.array({{1, 2, 3}, {4, 5, 6}})
    local b = luacuda.array({{7, 8, 9}})
    local c = luacuda.concatenate({a, b, a})
    assert.same(lua_concat({a:totable(), b:totable(), a:totable()}, 1), c:totable())
    assert.is_true(c:is_c_contiguous())
  end)

  it("joins along any axis, counted from 1", function()
    local a = luacuda.arange(24):reshape(2, 3, 4)
    local b = luacuda.arange(100, 116):reshape(2, 2, 4)
    local c = luacuda.arange(200, 212):reshape(2, 3, 2)
    assert.same(lua_concat({a:totable(), a:totable()}, 1), luacuda.concatenate({a, a}, 1):totable())
    local r2 = luacuda.concatenate({a, b}, 2)
    assert.same({2, 5, 4}, r2.shape)
    assert.same(lua_concat({a:totable(), b:totable()}, 2), r2:totable())
    local r3 = luacuda.concatenate({a, c, a}, 3)
    assert.same({2, 3, 10}, r3.shape)
    assert.same(lua_concat({a:totable(), c:totable(), a:totable()}, 3), r3:totable())
  end)

  it("reads transposed, strided and reversed inputs", function()
    local t = luacuda.arange(6):reshape(2, 3).T                   -- {3, 2}, F order
    local s = luacuda.arange(12):reshape(3, 4)[{{}, {1, -1, 2}}]    -- {3, 2}, strided
    local rev = luacuda.arange(6):reshape(3, 2)[{{nil, nil, -1}}]   -- {3, 2}, rows reversed
    for axis = 1, 2 do
      local r = luacuda.concatenate({t, s, rev}, axis)
      assert.same(lua_concat({t:totable(), s:totable(), rev:totable()}, axis), r:totable())
      assert.is_true(r:is_c_contiguous())
    end
  end)

  it("takes empty inputs and a single input (a new array)", function()
    local r = luacuda.concatenate({luacuda.zeros({0, 3}), luacuda.ones({2, 3}), luacuda.zeros({0, 3})})
    assert.same({2, 3}, r.shape)
    assert.same({{1, 1, 1}, {1, 1, 1}}, r:totable())
    local e = luacuda.concatenate({luacuda.arange(0), luacuda.arange(0)})
    assert.same({0}, e.shape)
    local a = luacuda.arange(3)
    local one = luacuda.concatenate({a})
    assert.are_not.equal(a, one)
    one[1] = 9
    assert.same({0, 1, 2}, a:totable())
  end)

  it("works on every kind of memory, keeping it", function()
    for _, k in ipairs(KINDS) do
      local kind, make = k[1], k[2]
      local a = filled(make, {{1, 2}, {3, 4}}, "float32")
      local b = filled(make, {{5}, {6}}, "float32")
      local r = luacuda.concatenate({a, b, a.T}, 2)
      assert.equal(kind, r.kind)
      assert.equal("float32", r.dtype)
      assert.same({{1, 2, 5, 1, 3}, {3, 4, 6, 2, 4}}, values(r), kind)
      local r1 = luacuda.concatenate({a, a[{{nil, nil, -1}}]})
      assert.same({{1, 2}, {3, 4}, {3, 4}, {1, 2}}, values(r1), kind)
    end
  end)

  it("joins records", function()
    local pt = luacuda.record { { "x", "float32" }, { "n", "int32" } }
    local a = luacuda.array({ { x = 1, n = 2 } }, pt)
    local b = luacuda.array({ { x = 3, n = 4 }, { x = 5, n = 6 } }, pt)
    local r = luacuda.concatenate({a, b})
    assert.equal(pt, r.dtype)
    assert.same({ { x = 1, n = 2 }, { x = 3, n = 4 }, { x = 5, n = 6 } }, r:totable())
  end)

  it("refuses what is not a non-empty sequence of open arrays", function()
    local a = luacuda.arange(3)
    S.misuse({"luacuda.concatenate", "arrays must be a sequence of arrays, got userdata"},
             luacuda.concatenate, a)
    S.misuse("arrays is empty (at least one array is needed)", luacuda.concatenate, {})
    S.misuse("arrays[2] must be an array, got number", luacuda.concatenate, {a, 5})
    S.misuse("arrays[1] must be an array, got table", luacuda.concatenate, {{1, 2}, a})
    S.misuse("arrays has a key 'axis': only a sequence of arrays is read",
             luacuda.concatenate, {a, a, axis = 1})
    local closed = luacuda.arange(3)
    closed:close()
    S.misuse("arrays[2] is a closed array", luacuda.concatenate, {a, closed})
  end)

  it("refuses arrays of several kinds or dtypes", function()
    local a = luacuda.arange(3)
    S.misuse({"luacuda.concatenate", "arrays[1] is a host array and arrays[2] a device array",
              "copy them first"}, luacuda.concatenate, {a, luacuda.to_device(a)})
    S.misuse({"luacuda.concatenate", "arrays[1] is int64 and arrays[3] is float32",
              "astype"}, luacuda.concatenate, {a, a, luacuda.arange(3, "float32")})
  end)

  it("refuses shapes that differ off the axis, naming them and the axis", function()
    local a = luacuda.zeros({2, 3})
    S.misuse({"luacuda.concatenate", "shape mismatch: arrays[1] is {2, 3} and arrays[2] is {2, 4}",
              "(only axis 1 may differ)"}, luacuda.concatenate, {a, luacuda.zeros({2, 4})})
    S.misuse("shape mismatch: arrays[1] is {2, 3} and arrays[2] is {6} (only axis 1 may differ)",
             luacuda.concatenate, {a, luacuda.zeros(6)})
    S.misuse("shape mismatch: arrays[1] is {2, 3} and arrays[2] is {3, 3} (only axis 2 may differ)",
             luacuda.concatenate, {a, luacuda.zeros({3, 3})}, 2)
  end)

  it("refuses axes outside 1..ndim, saying axes count from 1", function()
    local a = luacuda.zeros({2, 3})
    S.misuse({"luacuda.concatenate", "axis 0 is out of range for 2-d arrays: luacuda counts axes from 1 (1 to 2 here)"},
             luacuda.concatenate, {a, a}, 0)
    S.misuse("axis 3 is out of range for 2-d arrays", luacuda.concatenate, {a, a}, 3)
    S.misuse("axis -1 is out of range", luacuda.concatenate, {a, a}, -1)
    S.misuse("axis must be an integer, got 1.5", luacuda.concatenate, {a, a}, 1.5)
    S.misuse("axis must be an integer, got string", luacuda.concatenate, {a, a}, "1")
    S.misuse("0-d arrays cannot be concatenated (stack them)", luacuda.concatenate,
             {luacuda.array(1), luacuda.array(2)})
  end)

  it("refuses a result longer than int64 on the axis, and too many arrays", function()
    local huge = luacuda.device_array({2^62}, "int8", {strides = {0}})
    S.misuse({"luacuda.concatenate", "the result would have more than 9223372036854775807 elements on axis 1"},
             function() return luacuda.concatenate({huge, huge}) end)
    local a = luacuda.arange(1)
    local many = {}
    for i = 1, 1000001 do many[i] = a end
    S.misuse("too many arrays (1000001)", function() return luacuda.concatenate(many) end)
  end)
end)

describe("stack", function()
  it("joins along a new first axis by default", function()
    local a, b = luacuda.arange(3), luacuda.arange(10, 13)
    local r = luacuda.stack({a, b})
    assert.same({2, 3}, r.shape)
    assert.equal("int64", r.dtype)
    assert.same({{0, 1, 2}, {10, 11, 12}}, r:totable())
    assert.is_true(r:is_c_contiguous())
  end)

  it("joins along any new axis, 1 to ndim + 1", function()
    local a = luacuda.arange(6):reshape(2, 3)
    local b = luacuda.arange(10, 16):reshape(2, 3)
    local shapes = { {3, 2, 3}, {2, 3, 3}, {2, 3, 3} }
    for axis = 1, 3 do
      local r = luacuda.stack({a, b, a}, axis)
      assert.same(shapes[axis], r.shape)
      assert.same(lua_stack({a:totable(), b:totable(), a:totable()}, axis), r:totable())
    end
    assert.same({2, 3, 2}, luacuda.stack({a, b}, 3).shape)
  end)

  it("stacks 0-d arrays into a 1-d one, and empty arrays", function()
    local r = luacuda.stack({luacuda.array(1.5), luacuda.array(2.5)})
    assert.same({2}, r.shape)
    assert.same({1.5, 2.5}, r:totable())
    local e = luacuda.stack({luacuda.zeros(0), luacuda.zeros(0)}, 2)
    assert.same({0, 2}, e.shape)
  end)

  it("reads transposed, strided and reversed inputs", function()
    local t = luacuda.arange(6):reshape(2, 3).T
    local s = luacuda.arange(12):reshape(3, 4)[{{}, {1, -1, 2}}]
    local rev = luacuda.arange(6):reshape(3, 2)[{{nil, nil, -1}}]
    for axis = 1, 3 do
      local r = luacuda.stack({t, s, rev}, axis)
      assert.same(lua_stack({t:totable(), s:totable(), rev:totable()}, axis), r:totable())
    end
  end)

  it("works on every kind of memory, keeping it", function()
    for _, k in ipairs(KINDS) do
      local kind, make = k[1], k[2]
      local a = filled(make, {{1, 2}, {3, 4}}, "int16")
      local r = luacuda.stack({a, a.T}, 3)
      assert.equal(kind, r.kind)
      assert.equal("int16", r.dtype)
      assert.same({{{1, 1}, {2, 3}}, {{3, 2}, {4, 4}}}, values(r), kind)
    end
  end)

  it("refuses arrays of several shapes, kinds or dtypes", function()
    local a = luacuda.zeros({2, 3})
    S.misuse({"luacuda.stack", "shape mismatch: arrays[1] is {2, 3} and arrays[2] is {3, 2} (stack needs one shape)"},
             luacuda.stack, {a, a.T})
    S.misuse("shape mismatch: arrays[1] is {2, 3} and arrays[3] is {6} (stack needs one shape)",
             luacuda.stack, {a, a, luacuda.zeros(6)})
    S.misuse({"luacuda.stack", "arrays[1] is a host array and arrays[2] a pinned array"},
             luacuda.stack, {a, luacuda.pinned_array({2, 3}):fill(0)})
    S.misuse({"luacuda.stack", "arrays[1] is float64 and arrays[2] is int8", "astype"},
             luacuda.stack, {a, luacuda.zeros({2, 3}, "int8")})
    S.misuse({"luacuda.stack", "arrays is empty"}, luacuda.stack, {})
    S.misuse({"luacuda.stack", "arrays must be a sequence of arrays, got nil"}, luacuda.stack)
  end)

  it("refuses axes outside 1..ndim + 1, saying axes count from 1", function()
    local a = luacuda.zeros({2, 3})
    S.misuse({"luacuda.stack", "axis 0 is out of range for stacking 2-d arrays: luacuda counts axes from 1 (1 to 3 here)"},
             luacuda.stack, {a, a}, 0)
    S.misuse("axis 4 is out of range for stacking 2-d arrays", luacuda.stack, {a, a}, 4)
    S.misuse("axis must be an integer, got 2.5", luacuda.stack, {a, a}, 2.5)
  end)

  it("refuses a result of too many dimensions or elements", function()
    local dims = {}
    for i = 1, 32 do dims[i] = 1 end
    local a = luacuda.zeros(dims)
    S.misuse({"luacuda.stack", "the result would have 33 axes, more than the 32 an array can have"}, luacuda.stack, {a})
    local huge = luacuda.device_array({2^62}, "int8", {strides = {0}})
    S.misuse({"luacuda.stack", "array size overflows"},
             function() return luacuda.stack({huge, huge, huge, huge}) end)
  end)
end)
