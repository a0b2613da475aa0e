-- Array math, elementwise (issue 18): the operators (+ - * / // % ^ and
-- unary -), luacuda.add ... luacuda.where, the comparisons as methods,
-- astype and result_type, on host arrays (computed on the host) and device
-- arrays (computed by the backend, read back with copy_to_host), for every
-- dtype, against results computed here in plain Lua: broadcasting, views
-- as inputs and outputs, in-place and overlapping outputs, NumPy 2's
-- promotion table and its weak Lua numbers (NEP 50), the integer, float
-- and half-precision semantics, streams, and every error.
local luacuda = require "luacuda"
local S = require "spec.support"

-- The device side of array math on the CUDA backend is not merged yet:
-- every test that computes on the device calls this first (through the
-- device maker below). Delete its one line when it is.
local function device_math()
end

-- One maker per side: (nested table, dtype) -> an array holding it.
local SIDES = {
  { name = "host", make = function(t, dt) return luacuda.array(t, dt) end },
  { name = "device", make = function(t, dt)
      device_math()
      return luacuda.to_device(t, {dtype = dt})
    end },
}
local HOST, DEVICE = SIDES[1].make, SIDES[2].make

local values = S.host_values

-- ---- the model: values as each dtype holds them, in plain Lua -------------------

local inf, nan = math.huge, 0 / 0

-- floor(log2(|x|)) of a finite nonzero double, read from its bits
local function exponent(x)
  local bits = string.unpack("<i8", string.pack("<d", x))
  local e = (bits >> 52) & 0x7ff
  return e == 0 and -1075 or e - 1023
end

-- x rounded to nearest even with p significand bits, exponents down to emin
-- (subnormals below) and up to emax (infinity past the largest finite)
local function rounder(p, emin, emax)
  return function(x)
    if x ~= x or x == 0 or x == inf or x == -inf then return x end
    local ax = math.abs(x)
    local ulp = 2.0 ^ (math.max(exponent(ax), emin) - p + 1)
    local q = ax / ulp
    local r = math.floor(q)
    local frac = q - r
    if frac > 0.5 or (frac == 0.5 and r % 2 == 1) then r = r + 1 end
    local v = r * ulp
    if v >= 2.0 ^ (emax + 1) then v = inf end
    return x < 0 and -v or v
  end
end
local f16, bf16, f32 = rounder(11, -14, 15), rounder(8, -126, 127), rounder(24, -126, 127)
local ROUND = { float16 = f16, bfloat16 = bf16, float32 = f32, float64 = function(x) return x end }
-- the relative error allowed where the C library's function is not
-- correctly rounded (pow, exp, sin, ...): a few units in the last place
local ULPS = { float16 = 2 ^ -9, bfloat16 = 2 ^ -6, float32 = 2 ^ -21, float64 = 2 ^ -50 }

local INT = { int8 = {8, true}, int16 = {16, true}, int32 = {32, true}, int64 = {64, true},
              uint8 = {8, false}, uint16 = {16, false}, uint32 = {32, false}, uint64 = {64, false} }

-- a Lua integer (two's complement, 64 bits) as dtype dt holds it: wrapped
-- to its width; uint64 values past 2^63 - 1 read back as floats
local function wrap(v, dt)
  local bits, signed = INT[dt][1], INT[dt][2]
  if bits == 64 then
    if signed or v >= 0 then return v end
    return ((v >> 32) & 0xffffffff) * 4294967296.0 + (v & 0xffffffff)
  end
  local m = 1 << bits
  v = v & (m - 1)
  if signed and v >= m // 2 then v = v - m end
  return v
end

-- integer a to the power b, wrapping; a negative power is 0 but for 1 and -1
local function ipow(a, b)
  if b < 0 then return a == 1 and 1 or a == -1 and (b % 2 == 1 and -1 or 1) or 0 end
  local r = 1
  for _ = 1, b do r = r * a end
  return r
end

local function tanh(x)
  if x > 20 then return 1.0 elseif x < -20 then return -1.0 end
  local e = math.exp(2 * x)
  return (e - 1) / (e + 1)
end
local function hypot(x, y)
  if x == inf or x == -inf or y == inf or y == -inf then return inf end
  return math.sqrt(x * x + y * y)
end
local function lua_max(a, b) if a ~= a or b ~= b then return nan end return math.max(a, b) end
local function lua_min(a, b) if a ~= a or b ~= b then return nan end return math.min(a, b) end
local function sign(x) if x ~= x then return x end return x > 0 and 1 or x < 0 and -1 or 0 end

-- the binary operations on floats, computed in float64 (then rounded to the
-- dtype), and whether the C library's result may be off by an ulp or two
local FLOAT2 = {
  add = { function(a, b) return a + b end },
  subtract = { function(a, b) return a - b end },
  multiply = { function(a, b) return a * b end },
  divide = { function(a, b) return a / b end },
  floor_divide = { function(a, b) return a // b end },
  mod = { function(a, b) return a % b end },
  power = { function(a, b) return a ^ b end, true },
  maximum = { lua_max }, minimum = { lua_min },
  atan2 = { function(a, b) return math.atan(a, b) end, true },
  hypot = { hypot, true },
}
local FLOAT1 = {
  negative = { function(a) return -a end }, abs = { math.abs }, sign = { sign },
  sqrt = { math.sqrt }, exp = { math.exp, true }, log = { math.log, true },
  log2 = { function(a) return math.log(a, 2) end, true },
  log10 = { function(a) return math.log(a, 10) end, true },
  sin = { math.sin, true }, cos = { math.cos, true }, tan = { math.tan, true },
  tanh = { tanh, true }, floor = { math.floor }, ceil = { math.ceil },
}
-- math.floor and math.ceil give integers where they fit: floats here
for _, k in ipairs { "floor", "ceil" } do
  local f = FLOAT1[k][1]
  FLOAT1[k][1] = function(a) if a ~= a or a == inf or a == -inf then return a end return f(a) + 0.0 end
end

-- the binary operations on integers of dtype dt (a Lua value of the result)
local function int2(op, dt, a, b)
  if op == "add" then return wrap(a + b, dt)
  elseif op == "subtract" then return wrap(a - b, dt)
  elseif op == "multiply" then return wrap(a * b, dt)
  elseif op == "divide" then return a / b
  elseif op == "floor_divide" then return b == 0 and 0 or wrap(a // b, dt)
  elseif op == "mod" then return b == 0 and 0 or wrap(a % b, dt)
  elseif op == "power" then return wrap(ipow(a, b), dt)
  elseif op == "maximum" then return math.max(a, b)
  elseif op == "minimum" then return math.min(a, b)
  end
  error("no integer model of " .. op)
end

-- the result of op on elements a and b of dtype dt
local function model2(op, dt, a, b)
  if dt == "bool" then
    if op == "add" or op == "maximum" then return a or b end
    if op == "multiply" or op == "minimum" then return a and b end
    local x, y = a and 1 or 0, b and 1 or 0
    if op == "divide" then return x / y end
    return int2(op, "int8", x, y)             -- // and %: in int8
  end
  if INT[dt] then return int2(op, dt, a, b) end
  return ROUND[dt](FLOAT2[op][1](a, b))
end

-- ---- comparing results ------------------------------------------------------------

local function flat(t, out)
  out = out or {}
  if type(t) ~= "table" then out[#out + 1] = t return out end
  for _, v in ipairs(t) do flat(v, out) end
  return out
end

local function show(v)
  if type(v) == "number" and math.type(v) == "float" then return ("%.17g"):format(v) end
  return tostring(v)
end

-- e and g agree: both NaN, equal, or within the relative error tol
local function agree(e, g, tol)
  if type(e) ~= "number" or type(g) ~= "number" then return e == g end
  if e ~= e then return g ~= g end
  if e == g then return true end
  if not tol or e == inf or e == -inf then return false end
  return math.abs(g - e) <= tol * math.max(math.abs(e), 2 ^ -1000)
end

-- The array's dtype, shape and values (any kind: read on the host) are
-- these; tol, when given, is the relative error allowed.
local function expect(a, dtype, shape, want, tol, what)
  what = what and (what .. ": ") or ""
  assert.equal(dtype, a.dtype, what .. "dtype")
  assert.same(shape, a.shape, what .. "shape")
  local got = flat(values(a))
  want = flat(want)
  assert.equal(#want, #got, what .. "size")
  for i = 1, #want do
    if not agree(want[i], got[i], tol) then
      error(("%selement %d: expected %s, got %s"):format(what, i, show(want[i]), show(got[i])), 2)
    end
  end
end

local function map2(f, a, b)
  local r = {}
  for i = 1, #a do r[i] = f(a[i], b[i]) end
  return r
end
local function map1(f, a)
  local r = {}
  for i = 1, #a do r[i] = f(a[i]) end
  return r
end

-- ---- operands for every dtype ---------------------------------------------------

-- two operands of seven elements each, exact in every dtype of their
-- family: negative divisors, zeros to divide by, powers that wrap
local OPERANDS = {
  signed = { {-7, -3, -1, 0, 2, 5, 7}, {2, -2, 3, 1, -1, 4, 0} },
  unsigned = { {0, 1, 3, 7, 200, 255, 9}, {1, 2, 0, 3, 7, 2, 4} },
  float = { {-7.5, -3.0, -0.5, 0.0, 2.25, 5.0, 7.0}, {2.0, -2.0, 0.5, 1.0, -1.5, 4.0, 0.0} },
  bool = { {true, true, false, false}, {true, false, true, false} },
}
local function operands(dt)
  if dt == "bool" then return OPERANDS.bool end
  if INT[dt] then return INT[dt][2] and OPERANDS.signed or OPERANDS.unsigned end
  return OPERANDS.float
end

local DTYPES = { "bool", "int8", "int16", "int32", "int64", "uint8", "uint32", "uint64",
                 "float16", "float32", "float64", "bfloat16" }

-- the dtype op gives for two arrays of dt (NumPy's)
local function result_dtype(op, dt)
  if op == "divide" then
    if dt == "float16" or dt == "float32" or dt == "bfloat16" then return dt end
    return "float64"
  end
  if dt == "bool" and (op == "floor_divide" or op == "mod") then return "int8" end
  return dt
end

local OPERATORS = {
  { "add", "+", function(a, b) return a + b end },
  { "subtract", "-", function(a, b) return a - b end },
  { "multiply", "*", function(a, b) return a * b end },
  { "divide", "/", function(a, b) return a / b end },
  { "floor_divide", "//", function(a, b) return a // b end },
  { "mod", "%", function(a, b) return a % b end },
  { "power", "^", function(a, b) return a ^ b end },
}

-- ---- the operators ------------------------------------------------------------------

for _, side in ipairs(SIDES) do
  describe("array math on " .. side.name .. " arrays", function()
    local make = side.make

    for _, dt in ipairs(DTYPES) do
      it("computes every operator on two " .. dt .. " arrays as NumPy does", function()
        local A, B = table.unpack(operands(dt))
        local a, b = make(A, dt), make(B, dt)
        for _, o in ipairs(OPERATORS) do
          local op, spelling, f = o[1], o[2], o[3]
          local bool_refused = dt == "bool" and (op == "subtract" or op == "power")
          if not bool_refused then
            local r = f(a, b)
            assert.equal(side.name, r.kind)
            local tol = FLOAT2[op][2] and ULPS[result_dtype(op, dt)] or nil
            expect(r, result_dtype(op, dt), {#A}, map2(function(x, y) return model2(op, dt, x, y) end, A, B),
                   tol, dt .. " " .. spelling)
            -- the function form gives the same
            expect(luacuda[op](a, b), result_dtype(op, dt), {#A},
                   map2(function(x, y) return model2(op, dt, x, y) end, A, B), tol, "luacuda." .. op)
          end
        end
        -- a and b are untouched
        expect(a, dt, {#A}, A)
        expect(b, dt, {#B}, B)
      end)
    end

    for _, dt in ipairs { "int8", "int32", "int64", "uint8", "uint64", "float16", "float32", "float64", "bfloat16" } do
      it("takes a Lua number on either side of every operator on " .. dt, function()
        local A = operands(dt)[1]
        local a = make(A, dt)
        local k = 3
        for _, o in ipairs(OPERATORS) do
          local op, spelling, f = o[1], o[2], o[3]
          local tol = FLOAT2[op][2] and ULPS[result_dtype(op, dt)] or nil
          expect(f(a, k), result_dtype(op, dt), {#A}, map1(function(x) return model2(op, dt, x, k) end, A),
                 tol, "a " .. spelling .. " 3")
          if not (op == "power" and INT[dt]) then   -- 3 ^ a: negative powers of 3 are 0 for integers, fine too
            expect(f(k, a), result_dtype(op, dt), {#A}, map1(function(x) return model2(op, dt, k, x) end, A),
                   tol, "3 " .. spelling .. " a")
          end
        end
        expect(-a, dt, {#A}, map1(function(x) return INT[dt] and wrap(-x, dt) or -x end, A), nil, "unary -")
      end)
    end

    it("computes unary -, negative, abs and sign on integers, wrapping at the edges", function()
      expect(-make({-128, -1, 0, 1, 127}, "int8"), "int8", {5}, {-128, 1, 0, -1, -127})
      expect(luacuda.abs(make({-128, -1, 0, 1, 127}, "int8")), "int8", {5}, {-128, 1, 0, 1, 127})
      expect(luacuda.negative(make({0, 1, 255}, "uint8")), "uint8", {3}, {0, 255, 1})
      expect(luacuda.abs(make({0, 1, 255}, "uint8")), "uint8", {3}, {0, 1, 255})
      expect(luacuda.sign(make({-5, 0, 9}, "int16")), "int16", {3}, {-1, 0, 1})
      expect(luacuda.sign(make({0, 7, 4000000000}, "uint32")), "uint32", {3}, {0, 1, 1})
      expect(luacuda.abs(make({math.mininteger, -3, 3}, "int64")), "int64", {3}, {math.mininteger, 3, 3})
      expect(luacuda.abs(make({true, false}, "bool")), "bool", {2}, {true, false})
    end)

    for _, dt in ipairs { "float16", "float32", "float64", "bfloat16" } do
      it("computes every one-operand function on " .. dt, function()
        local U = {-2.5, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0}
        local a = make(U, dt)
        for _, name in ipairs { "negative", "abs", "sign", "sqrt", "exp", "log", "log2", "log10",
                                "sin", "cos", "tan", "tanh", "floor", "ceil" } do
          local f, inexact = FLOAT1[name][1], FLOAT1[name][2]
          expect(luacuda[name](a), dt, {#U}, map1(function(x) return ROUND[dt](f(x)) end, U),
                 inexact and ULPS[dt] or nil, name .. " of " .. dt)
        end
      end)

      it("computes maximum, minimum, atan2 and hypot on " .. dt, function()
        local A, B = table.unpack(OPERANDS.float)
        local a, b = make(A, dt), make(B, dt)
        for _, name in ipairs { "maximum", "minimum", "atan2", "hypot" } do
          expect(luacuda[name](a, b), dt, {#A}, map2(function(x, y) return model2(name, dt, x, y) end, A, B),
                 FLOAT2[name][2] and ULPS[dt] or nil, name)
        end
      end)
    end

    for _, c in ipairs { {"bool", "float16"}, {"int8", "float16"}, {"uint8", "float16"},
                         {"int16", "float32"}, {"int32", "float64"}, {"uint64", "float64"} } do
      local dt, ft = c[1], c[2]
      it("computes the float functions of " .. dt .. " in " .. ft, function()
        local X = dt == "bool" and {true, false, true} or {0, 1, 4}
        local N = dt == "bool" and {1, 0, 1} or X
        local a = make(X, dt)
        expect(luacuda.sqrt(a), ft, {3}, map1(function(x) return ROUND[ft](math.sqrt(x)) end, N), nil, "sqrt")
        expect(luacuda.exp(a), ft, {3}, map1(function(x) return ROUND[ft](math.exp(x)) end, N), ULPS[ft], "exp")
        expect(luacuda.floor(a), ft, {3}, map1(function(x) return x + 0.0 end, N), nil, "floor")
        expect(luacuda.atan2(a, a), ft, {3}, map2(function(x, y) return ROUND[ft](math.atan(x, y)) end, N, N),
               ULPS[ft], "atan2")
      end)
    end

    for _, dt in ipairs { "int8", "uint32", "int64", "float32", "float64", "bool" } do
      it("computes maximum, minimum and clip on " .. dt, function()
        local A, B = table.unpack(operands(dt))
        local a, b = make(A, dt), make(B, dt)
        expect(luacuda.maximum(a, b), dt, {#A}, map2(function(x, y) return model2("maximum", dt, x, y) end, A, B))
        expect(luacuda.minimum(a, b), dt, {#A}, map2(function(x, y) return model2("minimum", dt, x, y) end, A, B))
        if dt == "bool" then
          expect(luacuda.clip(a, b, make({false, true, true, true}, dt)), dt, {4}, {false, true, true, false})
        else
          local lo, hi = A[2], A[6]
          expect(luacuda.clip(a, lo, hi), dt, {#A}, map1(function(x) return math.min(math.max(x, lo), hi) end, A))
          -- bounds that are arrays, broadcast
          local r = luacuda.clip(a, make({lo}, dt), make(hi, dt))
          expect(r, dt, {#A}, map1(function(x) return math.min(math.max(x, lo), hi) end, A))
        end
      end)
    end

    it("picks with where, converting the condition to bool and promoting x and y", function()
      local cond = make({true, false, true, false})
      expect(luacuda.where(cond, make({1, 2, 3, 4}, "int8"), make({10, 20, 30, 40}, "int8")),
             "int8", {4}, {1, 20, 3, 40})
      expect(luacuda.where(make({0, 2, -1, 0}, "int32"), make({1.5, 2.5, 3.5, 4.5}, "float32"), 0),
             "float32", {4}, {0, 2.5, 3.5, 0})
      expect(luacuda.where(cond, make({1, 2, 3, 4}, "int16"), make({0.5, 0.5, 0.5, 0.5}, "float32")),
             "float32", {4}, {1, 0.5, 3, 0.5})
      expect(luacuda.where(cond, make({1, 2, 3, 4}, "float16"), 7), "float16", {4}, {1, 7, 3, 7})
      expect(luacuda.where(cond, 1, 2.5), "float64", {4}, {1, 2.5, 1, 2.5})
      expect(luacuda.where(cond, true, false), "bool", {4}, {true, false, true, false})
      -- the condition broadcast against x and y: {3, 1} with {4}
      local r = luacuda.where(make({{true}, {false}, {true}}), make({1, 2, 3, 4}, "int64"), -1)
      expect(r, "int64", {3, 4}, {{1, 2, 3, 4}, {-1, -1, -1, -1}, {1, 2, 3, 4}})
    end)

    it("computes logical_and, logical_or, logical_xor and logical_not, as bool", function()
      local A, B = table.unpack(OPERANDS.bool)
      local a, b = make(A), make(B)
      expect(luacuda.logical_and(a, b), "bool", {4}, map2(function(x, y) return x and y end, A, B))
      expect(luacuda.logical_or(a, b), "bool", {4}, map2(function(x, y) return x or y end, A, B))
      expect(luacuda.logical_xor(a, b), "bool", {4}, map2(function(x, y) return x ~= y end, A, B))
      expect(luacuda.logical_not(a), "bool", {4}, map1(function(x) return not x end, A))
      -- numbers are true when nonzero (NaN too)
      local n = make({0, -2, 0.5, nan}, "float64")
      expect(luacuda.logical_not(n), "bool", {4}, {true, false, false, false})
      expect(luacuda.logical_and(make({0, 1, 2, 0}, "int8"), make({3, 0, 1, 0}, "uint16")), "bool", {4},
             {false, false, true, false})
      expect(luacuda.logical_or(n, false), "bool", {4}, {false, true, true, true})
      expect(luacuda.logical_xor(n, 1), "bool", {4}, {true, false, false, false})
    end)

    for _, dt in ipairs { "int8", "uint8", "int64", "float16", "float32", "float64", "bfloat16", "bool" } do
      it("compares " .. dt .. " arrays with eq, ne, lt, le, gt and ge, giving bool", function()
        local A, B = table.unpack(operands(dt))
        local a, b = make(A, dt), make(B, dt)
        local num = function(x) if type(x) == "boolean" then return x and 1 or 0 end return x end
        local CMP = {
          eq = function(x, y) return x == y end, ne = function(x, y) return x ~= y end,
          lt = function(x, y) return num(x) < num(y) end, le = function(x, y) return num(x) <= num(y) end,
          gt = function(x, y) return num(x) > num(y) end, ge = function(x, y) return num(x) >= num(y) end,
        }
        for name, f in pairs(CMP) do
          expect(a[name](a, b), "bool", {#A}, map2(f, A, B), nil, "a:" .. name .. "(b)")
          if dt ~= "bool" then
            expect(a[name](a, 2), "bool", {#A}, map1(function(x) return f(x, 2) end, A), nil, "a:" .. name .. "(2)")
          end
        end
      end)
    end

    it("compares NaN as IEEE does: only ne is true", function()
      local a = make({nan, 1, nan}, "float32")
      local b = make({nan, nan, 1}, "float32")
      expect(a:eq(b), "bool", {3}, {false, false, false})
      expect(a:ne(b), "bool", {3}, {true, true, true})
      expect(a:lt(b), "bool", {3}, {false, false, false})
      expect(a:ge(b), "bool", {3}, {false, false, false})
      expect(a:le(1), "bool", {3}, {false, true, false})
    end)

    it("compares arrays of different dtypes in their promoted dtype", function()
      -- 2^24 + 1 is no float32: compared in float64 (int32 with float32)
      local i = make({16777217, 3}, "int32")
      local f = make({16777216, 3}, "float32")
      expect(i:eq(f), "bool", {2}, {false, true})
      expect(i:gt(f), "bool", {2}, {true, false})
      -- uint8 200 against int8 -56: int16 compares them as numbers, not bits
      expect(make({200}, "uint8"):gt(make({-56}, "int8")), "bool", {1}, {true})
      expect(make({200}, "uint8"):eq(make({-56}, "int8")), "bool", {1}, {false})
    end)

    it("keeps a == b as identity: comparisons are methods", function()
      local a = make({1, 2}, "int32")
      assert.is_true(a == a)
      assert.is_false(a == a:copy())
    end)

    -- ---- shapes and layouts ----

    it("broadcasts as NumPy: {3, 1} with {4}, 0-d with N-d, and empty arrays", function()
      local col = make({{1}, {2}, {3}}, "int32")
      local row = make({10, 20, 30, 40}, "int32")
      expect(col + row, "int32", {3, 4}, {{11, 21, 31, 41}, {12, 22, 32, 42}, {13, 23, 33, 43}})
      expect(row - col, "int32", {3, 4}, {{9, 19, 29, 39}, {8, 18, 28, 38}, {7, 17, 27, 37}})
      local zero_d = make(5, "float64")
      assert.same({}, zero_d.shape)
      expect(zero_d * row, "float64", {4}, {50, 100, 150, 200})
      expect(col // zero_d, "float64", {3, 1}, {{0}, {0}, {0}})
      local r = zero_d + 1
      expect(r, "float64", {}, 6)
      assert.equal(0, r.ndim)
      expect(luacuda.sqrt(make(16, "float32")), "float32", {}, 4)
      -- empty: a zero-length axis broadcasts with 1 and with itself only
      local e = side.name == "host" and luacuda.zeros({0, 3}, "float32")
                or luacuda.device_array({0, 3}, "float32")
      expect(e + make({1, 2, 3}, "float32"), "float32", {0, 3}, {})
      expect(e * make({{1}}, "float32"), "float32", {0, 3}, {})
      expect(luacuda.exp(e), "float32", {0, 3}, {})
      expect(e:lt(1), "bool", {0, 3}, {})
      -- {2, 1, 3} with {4, 1}: {2, 4, 3}
      local a = make({{{1, 2, 3}}, {{4, 5, 6}}}, "int64")
      local b = make({{0}, {10}, {20}, {30}}, "int64")
      local want = {}
      for i = 1, 2 do
        want[i] = {}
        for j = 1, 4 do
          want[i][j] = {}
          for k = 1, 3 do want[i][j][k] = (i - 1) * 3 + k + (j - 1) * 10 end
        end
      end
      expect(a + b, "int64", {2, 4, 3}, want)
    end)

    it("reads transposed, negative-step and strided views as inputs", function()
      local m = make({{1, 2, 3}, {4, 5, 6}}, "float32")
      expect(m.T + make({100, 200}, "float32"), "float32", {3, 2}, {{101, 204}, {102, 205}, {103, 206}})
      local v = make({1, 2, 3, 4, 5, 6, 7, 8}, "int16")
      local rev = v[{{nil, nil, -1}}]
      expect(rev - v, "int16", {8}, {7, 5, 3, 1, -1, -3, -5, -7})
      local odd, even = v[{{1, 8, 2}}], v[{{2, 8, 2}}]
      expect(odd * even, "int16", {4}, {2, 12, 30, 56})
      expect(luacuda.maximum(odd[{{nil, nil, -1}}], even), "int16", {4}, {7, 5, 6, 8})
      -- a transposed, reversed view of a 3-d array against a broadcast row
      local t = make({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}}, "float64")
      local tv = t:transpose({3, 1, 2})[{{nil, nil, -1}}]      -- shape {2, 2, 2}
      local want = {}
      for i = 1, 2 do
        want[i] = {}
        for j = 1, 2 do
          want[i][j] = {}
          for k = 1, 2 do
            -- tv[i][j][k] = t[j][k][3 - i]
            want[i][j][k] = ((j - 1) * 4 + (k - 1) * 2 + (3 - i)) * 10 + k
          end
        end
      end
      expect(tv * 10 + make({1, 2}, "float64"), "float64", {2, 2, 2}, want)
      -- inputs are untouched
      expect(v, "int16", {8}, {1, 2, 3, 4, 5, 6, 7, 8})
    end)

    it("writes into an out= array, a view among them, and returns it", function()
      local a = make({1, 2, 3}, "float64")
      local out = make({0, 0, 0}, "float64")
      local r = luacuda.add(a, 10, out)
      assert.is_true(r == out)
      expect(out, "float64", {3}, {11, 12, 13})
      -- a reversed column of a bigger array
      local big = make({{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, "float64")
      local col = big[{{nil, nil, -1}, 2}]
      assert.is_true(luacuda.multiply(a, a, col) == col)
      expect(big, "float64", {3, 3}, {{0, 9, 0}, {0, 4, 0}, {0, 1, 0}})
      -- a broadcast result into a transposed view
      local o2 = make({{0, 0}, {0, 0}, {0, 0}}, "int32")
      luacuda.subtract(make({{1}, {2}}, "int32"), make({10, 20, 30}, "int32"), o2.T)
      expect(o2, "int32", {3, 2}, {{-9, -8}, {-19, -18}, {-29, -28}})
      -- a one-operand function, a comparison and where
      local fo = make({0, 0, 0}, "float64")
      luacuda.sqrt(make({4, 9, 16}, "float64"), fo)
      expect(fo, "float64", {3}, {2, 3, 4})
      local bo = make({false, false, false})
      assert.is_true(a:gt(1.5, bo) == bo)
      expect(bo, "bool", {3}, {false, true, true})
      local wo = make({0, 0, 0}, "float64")
      luacuda.where(bo, a, -1, wo)
      expect(wo, "float64", {3}, {-1, 2, 3})
      -- out may be given as float16 (the loop computes in float32)
      local h = make({0, 0}, "float16")
      luacuda.divide(make({1, 2}, "float16"), 3, h)
      expect(h, "float16", {2}, {f16(f16(1) / 3), f16(2 / 3)})
    end)

    it("computes in place, with the output one of the inputs", function()
      local a = make({1, 2, 3, 4}, "int32")
      assert.is_true(luacuda.add(a, 1, a) == a)
      expect(a, "int32", {4}, {2, 3, 4, 5})
      luacuda.multiply(a, a, a)
      expect(a, "int32", {4}, {4, 9, 16, 25})
      local f = make({1, 4, 9}, "float32")
      luacuda.sqrt(f, f)
      expect(f, "float32", {3}, {1, 2, 3})
      local h = make({0.5, 1.5}, "float16")
      luacuda.add(h, h, h)
      expect(h, "float16", {2}, {1, 3})
      local m = make({{1, 2}, {3, 4}}, "int64")
      luacuda.subtract(m, make({1, 1}, "int64"), m)
      expect(m, "int64", {2, 2}, {{0, 1}, {2, 3}})
    end)

    it("reads inputs an overlapping output overwrites in another layout as they were before the call", function()
      -- a transposed input written into its own base
      local a = make({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, "float64")
      luacuda.subtract(a.T, a, a)
      expect(a, "float64", {3, 3}, {{0, 2, 4}, {-2, 0, 2}, {-4, -2, 0}})
      -- a reversed view into its base: a reversal
      local v = make({1, 2, 3, 4, 5}, "int32")
      luacuda.add(v[{{nil, nil, -1}}], 0, v)
      expect(v, "int32", {5}, {5, 4, 3, 2, 1})
      -- shifted by one element, both ways
      local s = make({1, 2, 3, 4, 5}, "int32")
      luacuda.multiply(s[{{1, 4}}], 10, s[{{2, 5}}])
      expect(s, "int32", {5}, {1, 10, 20, 30, 40})
      local t = make({1, 2, 3, 4, 5}, "int32")
      luacuda.multiply(t[{{2, 5}}], 10, t[{{1, 4}}])
      expect(t, "int32", {5}, {20, 30, 40, 50, 5})
      -- a row broadcast over the array that holds it
      local b = make({{1, 2}, {3, 4}}, "int64")
      luacuda.add(b, b[1], b)
      expect(b, "int64", {2, 2}, {{2, 4}, {4, 6}})
      -- a view of another dtype over the same bytes
      local u = make({1, 2, 3}, "int32")
      luacuda.add(u:view("uint32"), 1, u:view("uint32"))
      expect(u, "int32", {3}, {2, 3, 4})
    end)

    it("computes float16 and bfloat16 in float32, rounding each result to the dtype", function()
      local h = make({0.1, 0.2}, "float16")
      expect(h, "float16", {2}, {0.0999755859375, 0.199951171875})
      expect(h[{{1}}] + h[{{2}}], "float16", {1}, {0.2998046875})     -- NumPy's
      expect(h / 3, "float16", {2}, {f16(0.0999755859375 / 3), f16(0.199951171875 / 3)})
      expect(make({65504}, "float16") + 16, "float16", {1}, {inf})   -- ties to even: past the largest
      expect(make({65504}, "float16") + 15, "float16", {1}, {65504})
      expect(make({2048}, "float16") + 1, "float16", {1}, {2048})     -- 2049 is no float16
      expect(make({1}, "bfloat16") / 3, "bfloat16", {1}, {0.333984375})
      expect(make({256}, "bfloat16") + 1, "bfloat16", {1}, {256})     -- 257 is no bfloat16
      -- float16 with bfloat16: float32 (neither holds the other)
      expect(make({0.1}, "float16") + make({0.1}, "bfloat16"), "float32", {1},
             {f32(f16(0.1) + bf16(0.1))})
    end)
  end)
end

-- ---- memory kinds and streams ---------------------------------------------------------

describe("array math on every memory kind", function()
  it("computes pinned arrays on the host and mapped and managed ones on the device, keeping the kind", function()
    local p = luacuda.pinned_array(3, "float32")
    p:setitem({}, luacuda.array({1, 2, 3}, "float32"))
    local r = p + p
    assert.equal("pinned", r.kind)
    expect(r, "float32", {3}, {2, 4, 6})
    local h = p + luacuda.array({1, 1, 1}, "float32")   -- host and pinned: host
    assert.equal("host", h.kind)
    expect(h, "float32", {3}, {2, 3, 4})
    device_math()
    local m = luacuda.managed_array(3, "float32")
    m:setitem({}, luacuda.array({1, 2, 3}, "float32"))
    local mm = m * 2
    assert.equal("managed", mm.kind)
    expect(mm, "float32", {3}, {2, 4, 6})
    local mp = luacuda.mapped_array(3, "float32")
    mp:setitem({}, luacuda.array({4, 5, 6}, "float32"))
    local mpr = mp - 1
    assert.equal("mapped", mpr.kind)
    expect(mpr, "float32", {3}, {3, 4, 5})
    -- mixed device-side kinds: a device array
    local d = DEVICE({10, 20, 30}, "float32")
    for _, x in ipairs { m + d, d + mp, m + mp } do
      assert.equal("device", x.kind)
    end
    expect(m + mp, "float32", {3}, {5, 7, 9})
    -- an output of another device-side kind
    local out = luacuda.managed_array(3, "float32")
    luacuda.add(d, mp, out)
    luacuda.synchronize()
    expect(out, "float32", {3}, {14, 25, 36})
  end)

  it("queues device work on the stream given: add(a, b, nil, s), then s:synchronize()", function()
    device_math()
    local s = luacuda.stream()
    local a = DEVICE({1, 2, 3, 4}, "float32")
    local b = DEVICE({10, 20, 30, 40}, "float32")
    local r = luacuda.add(a, b, nil, s)
    s:synchronize()
    expect(r, "float32", {4}, {11, 22, 33, 44})
    -- out and stream in either order, a chain on one stream
    local out = luacuda.device_array(4, "float32", {stream = s})
    luacuda.multiply(r, 2, s, out)
    luacuda.sqrt(out, out, s)
    local c = out:astype("float64", s)
    local cmp = c:gt(7, nil, s)
    local ns = luacuda.stream({non_blocking = true})
    local w = luacuda.where(cmp, c, 0, nil, s)
    s:synchronize()
    local want = map1(function(x) return f32(math.sqrt(2 * x)) end, {11, 22, 33, 44})
    expect(c, "float64", {4}, want)
    expect(w, "float64", {4}, map1(function(x) return x > 7 and x or 0 end, want))
    ns:close()
    s:close()
  end)

  it("waits for the stream work an input is waiting on when it computes on the host", function()
    local s = luacuda.stream()
    local h = luacuda.pinned_array(1 << 16, "float32")
    local d = luacuda.to_device(luacuda.full(1 << 16, 3, "float32"))
    d:copy_to_host(h, s)                   -- queued: h is written later
    local r = h + 1
    expect(r[{{1, 2}}], "float32", {2}, {4, 4})
    assert.equal(4, r[1 << 16])
    s:close()
  end)
end)

-- ---- promotion -------------------------------------------------------------------------

-- np.promote_types(row, column) for the 12 NumPy dtypes, generated once by
--   apt-get install -y python3-numpy      # Debian 12's NumPy 1.24.2
--   /usr/bin/python3 -c 'import numpy as np; N = [...the 12 names...];
--     [print(a, [np.promote_types(a, b).name for b in N]) for a in N]'
-- (NumPy 2 has the same promote_types table; NEP 50 changed only how
-- Python scalars join in, tested below).
local NUMPY_DTYPES = { "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                       "uint64", "float16", "float32", "float64" }
local PROMOTE = {
  ["bool"]  = { "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64" },
  int8      = { "int8", "int8", "int16", "int32", "int64", "int16", "int32", "int64", "float64", "float16", "float32", "float64" },
  int16     = { "int16", "int16", "int16", "int32", "int64", "int16", "int32", "int64", "float64", "float32", "float32", "float64" },
  int32     = { "int32", "int32", "int32", "int32", "int64", "int32", "int32", "int64", "float64", "float64", "float64", "float64" },
  int64     = { "int64", "int64", "int64", "int64", "int64", "int64", "int64", "int64", "float64", "float64", "float64", "float64" },
  uint8     = { "uint8", "int16", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64" },
  uint16    = { "uint16", "int32", "int32", "int32", "int64", "uint16", "uint16", "uint32", "uint64", "float32", "float32", "float64" },
  uint32    = { "uint32", "int64", "int64", "int64", "int64", "uint32", "uint32", "uint32", "uint64", "float64", "float64", "float64" },
  uint64    = { "uint64", "float64", "float64", "float64", "float64", "uint64", "uint64", "uint64", "uint64", "float64", "float64", "float64" },
  float16   = { "float16", "float16", "float32", "float64", "float64", "float16", "float32", "float64", "float64", "float16", "float32", "float64" },
  float32   = { "float32", "float32", "float32", "float64", "float64", "float32", "float32", "float64", "float64", "float32", "float32", "float64" },
  float64   = { "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64" },
}

describe("array math's type promotion", function()
  it("gives NumPy 2's promote_types for every pair of NumPy's dtypes, in result_type and in a + b", function()
    local wrong = {}
    for _, x in ipairs(NUMPY_DTYPES) do
      for j, y in ipairs(NUMPY_DTYPES) do
        local want = PROMOTE[x][j]
        local got = luacuda.result_type(x, y)
        local sum = (luacuda.zeros(1, x) + luacuda.zeros(1, y)).dtype
        local arrays = luacuda.result_type(luacuda.zeros(1, x), luacuda.zeros({}, y))
        if got ~= want or sum ~= want or arrays ~= want then
          wrong[#wrong + 1] = ("%s with %s: %s (result_type), %s (a + b), %s (arrays), NumPy %s")
                              :format(x, y, got, sum, arrays, want)
        end
      end
    end
    assert.same({}, wrong)
  end)

  it("places bfloat16: with bool and 8-bit integers bfloat16, with float16 float32, with wider ones as float16 does", function()
    local R = luacuda.result_type
    for _, x in ipairs { "bool", "int8", "uint8", "bfloat16" } do assert.equal("bfloat16", R("bfloat16", x)) end
    for _, x in ipairs { "float16", "int16", "uint16", "float32" } do assert.equal("float32", R("bfloat16", x)) end
    for _, x in ipairs { "int32", "int64", "uint32", "uint64", "float64" } do assert.equal("float64", R(x, "bfloat16")) end
    assert.equal("bfloat16", R("bfloat16", 1.5))
    assert.equal("bfloat16", (luacuda.zeros(1, "bfloat16") + luacuda.zeros(1, "uint8")).dtype)
  end)

  it("treats Lua numbers as weak scalars (NEP 50): they take the arrays' dtype", function()
    local i32 = luacuda.array({1, 2}, "int32")
    expect(i32 + 1, "int32", {2}, {2, 3})
    expect(i32 + 1.5, "float64", {2}, {2.5, 3.5})
    expect(i32 * 2.0, "float64", {2}, {2, 4})             -- a float, even integral
    local f32a = luacuda.array({1, 2}, "float32")
    expect(f32a + 1.5, "float32", {2}, {2.5, 3.5})
    expect(f32a + 16777217, "float32", {2}, {16777216, 16777218})   -- 2^24 + 1 rounds to float32 first: 2^24
    expect(luacuda.array({true, false}) + 1, "int64", {2}, {2, 1})
    expect(luacuda.array({true, false}) * 1.5, "float64", {2}, {1.5, 0})
    expect(luacuda.array({1, 2}, "uint8") + 255, "uint8", {2}, {0, 1})     -- in range: wraps as uint8
    expect(luacuda.array({1, 2}, "float16") + 1e6, "float16", {2}, {inf, inf})   -- rounds to float16
    expect(i32 / i32, "float64", {2}, {1, 1})
    expect(i32 / 2, "float64", {2}, {0.5, 1})
    expect(luacuda.sqrt(luacuda.array({4}, "int8")), "float16", {1}, {2})
    expect(luacuda.sqrt(luacuda.array({4}, "int16")), "float32", {1}, {2})
    expect(luacuda.sqrt(luacuda.array({4}, "int32")), "float64", {1}, {2})
    expect(luacuda.array({1}, "uint64") + math.maxinteger, "uint64", {1}, {wrap(math.mininteger, "uint64")})
    -- result_type: arrays and dtype names are strong, numbers weak
    local R = luacuda.result_type
    assert.equal("int32", R(i32, 1))
    assert.equal("float64", R(i32, 1.5))
    assert.equal("float32", R("float32", 1.5, 7))
    assert.equal("int8", R("int8", 300))               -- the type only: the value is checked by a call
    assert.equal("int64", R(1))
    assert.equal("float64", R(1.5))
    assert.equal("float64", R(1, 2.5))
    assert.equal("int64", R("bool", 1))
    assert.equal("float16", R("int8", "float16", 3))
  end)

  it("divides integers and bools in float64 (NumPy's true_divide), floats in their own dtype", function()
    for _, dt in ipairs { "int8", "uint8", "int16", "uint16", "int32", "uint64" } do
      local a = luacuda.array({1, 2}, dt)
      expect(a / luacuda.array({3}, dt), "float64", {2}, {1 / 3, 2 / 3}, nil, dt)
      expect(a / 3, "float64", {2}, {1 / 3, 2 / 3}, nil, dt .. " / 3")
    end
    expect(luacuda.array({true, false}) / luacuda.array({true}), "float64", {2}, {1, 0})
    expect(luacuda.array({1}, "int8") / luacuda.array({3}, "uint8"), "float64", {1}, {1 / 3})
    expect(luacuda.array({1}, "float16") / luacuda.array({3}, "int8"), "float16", {1}, {f16(1 / 3)})
    expect(luacuda.array({1}, "float32") / 3, "float32", {1}, {f32(1 / 3)})
    -- the other float functions keep NumPy's least float
    expect(luacuda.sqrt(luacuda.array({2}, "uint8")), "float16", {1}, {f16(math.sqrt(2))})
  end)

  it("converts a Lua number to the dtype the operation computes in, as NumPy does: int8 / 300 divides in float64", function()
    local i8 = luacuda.array({1, -1}, "int8")
    expect(i8 / 300, "float64", {2}, {1 / 300, -1 / 300})
    expect(300 / i8, "float64", {2}, {300, -300})
    expect(luacuda.array({1}, "int16") / 70000, "float64", {1}, {1 / 70000})
    expect(luacuda.atan2(i8, 300), "float16", {2}, {f16(math.atan(1, 300)), f16(math.atan(-1, 300))}, ULPS.float16)
    expect(luacuda.hypot(i8, 70000), "float16", {2}, {inf, inf})        -- 70000 is past float16's range
    expect(luacuda.clip(i8, 1.5, 300), "float64", {2}, {1.5, 1.5})      -- a float joins: float64
    expect(luacuda.where(luacuda.array({true, false}), i8, 2.5), "float64", {2}, {1, 2.5})
    -- where the operation computes in the array's dtype, the number must fit it (below)
  end)

  it("takes Lua booleans as bool values", function()
    local R = luacuda.result_type
    assert.equal("bool", R(true))
    assert.equal("bool", R(true, false))
    assert.equal("int64", R(true, 1))
    assert.equal("int8", R("int8", true))
    assert.equal("float64", R(true, 1.5))
    expect(luacuda.array({1, 2}, "int8") + true, "int8", {2}, {2, 3})
    expect(luacuda.array({true, false}) + false, "bool", {2}, {true, false})
    expect(luacuda.array({true, false}) * true, "bool", {2}, {true, false})
    expect(luacuda.array({1.5}, "float32") * false, "float32", {1}, {0})
    expect(luacuda.array({1, 2}, "int32"):eq(true), "bool", {2}, {true, false})
    expect(luacuda.logical_and(luacuda.array({1, 0}, "int32"), true), "bool", {2}, {true, false})
  end)

  it("promotes mixed arrays before computing: int32 + float32 is float64, int8 + uint8 int16", function()
    expect(luacuda.array({16777217}, "int32") + luacuda.array({0}, "float32"), "float64", {1}, {16777217})
    expect(luacuda.array({-1}, "int8") + luacuda.array({255}, "uint8"), "int16", {1}, {254})
    expect(luacuda.array({-1}, "int64") * luacuda.array({3}, "uint64"), "float64", {1}, {-3})
    expect(luacuda.array({300}, "int16") - luacuda.array({0.5}, "float16"), "float32", {1}, {299.5})
    expect(luacuda.array({1, 2}, "uint32") // luacuda.array({2}, "int8"), "int64", {2}, {0, 1})
  end)
end)

-- ---- semantics ---------------------------------------------------------------------------

for _, side in ipairs(SIDES) do
  local make = side.make
  describe("array math's semantics on " .. side.name .. " arrays", function()
    it("wraps integer overflow: int8 127 + 1 is -128, uint8 0 - 1 is 255", function()
      expect(make({127}, "int8") + 1, "int8", {1}, {-128})
      expect(make({0}, "uint8") - 1, "uint8", {1}, {255})
      expect(make({-32768}, "int16") - 1, "int16", {1}, {32767})
      expect(make({2147483647}, "int32") * 2, "int32", {1}, {-2})
      expect(make({math.maxinteger}, "int64") + 1, "int64", {1}, {math.mininteger})
      expect(make({0}, "uint64") - 1, "uint64", {1}, {2.0 ^ 64})
      expect(make({0}, "uint32") - 1, "uint32", {1}, {4294967295})
      expect(make({16}, "int8") * make({16}, "int8"), "int8", {1}, {0})
      expect(make({3}, "uint8") ^ 5, "uint8", {1}, {243})
      expect(make({3}, "uint8") ^ 6, "uint8", {1}, {wrap(729, "uint8")})
      expect(make({-2}, "int64") ^ 63, "int64", {1}, {math.mininteger})
    end)

    it("gives 0 for integer // and % by zero", function()
      for _, dt in ipairs { "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64" } do
        local a = make({5, 0, INT[dt][2] and -5 or 7}, dt)
        expect(a // 0, dt, {3}, {0, 0, 0}, nil, dt .. " // 0")
        expect(a % 0, dt, {3}, {0, 0, 0}, nil, dt .. " % 0")
        expect(a // make({0, 0, 0}, dt), dt, {3}, {0, 0, 0}, nil, dt .. " // zeros")
      end
      expect(make({true, false}) // make({false, false}), "int8", {2}, {0, 0})
    end)

    it("wraps INT_MIN // -1, and INT_MIN % -1 is 0", function()
      expect(make({-128}, "int8") // -1, "int8", {1}, {-128})
      expect(make({-32768}, "int16") // -1, "int16", {1}, {-32768})
      expect(make({-2147483648}, "int32") // -1, "int32", {1}, {-2147483648})
      expect(make({math.mininteger}, "int64") // -1, "int64", {1}, {math.mininteger})
      expect(make({math.mininteger, -7, 7}, "int64") % -1, "int64", {3}, {0, 0, 0})
      expect(make({-128}, "int8") % make({-1}, "int8"), "int8", {1}, {0})
    end)

    it("floors // and % with negative operands (Lua's and NumPy's sign rule)", function()
      for _, dt in ipairs { "int8", "int32", "int64", "float16", "float32", "float64", "bfloat16" } do
        local a = make({-7, 7, -7, 7}, dt)
        local b = make({2, -2, -2, 2}, dt)
        expect(a // b, dt, {4}, {-4, -4, 3, 3}, nil, dt .. " //")
        expect(a % b, dt, {4}, {1, -1, -1, 1}, nil, dt .. " %")
        expect(a // 2, dt, {4}, {-4, 3, -4, 3})
        expect(-7 % make({2, -2}, dt), dt, {2}, {1, -1})
      end
      expect(make({-7.5, 7.5}, "float64") % 2, "float64", {2}, {0.5, 1.5})
      expect(make({-7.5, 7.5}, "float64") // 2, "float64", {2}, {-4, 3})
      -- the remainder's zero takes the divisor's sign, as NumPy's
      local z = values(make({6, -6}, "float64") % make({-3, 3}, "float64"))
      assert.same({-inf, inf}, {1 / z[1], 1 / z[2]})
      -- NumPy's floor division goes through fmod (Lua's floor(1 / 0.1) is 10)
      expect(make({1, -1}, "float64") // 0.1, "float64", {2}, {9, -10})
      expect(make({1, -1}, "float64") % 0.1, "float64", {2}, {0.09999999999999995, 5.551115123125783e-17})
      expect(make({-5, 5}, "float64") // inf, "float64", {2}, {-1, 0})
      expect(make({-5, 5}, "float64") % inf, "float64", {2}, {inf, 5})
      expect(make({inf}, "float64") // 2, "float64", {1}, {nan})
    end)

    it("gives inf and nan for float // and % by zero, as NumPy", function()
      for _, dt in ipairs { "float16", "float32", "float64" } do
        local a = make({1, -1, 0}, dt)
        expect(a // 0, dt, {3}, {inf, -inf, nan})
        expect(a % 0, dt, {3}, {nan, nan, nan})
        expect(a / 0, dt, {3}, {inf, -inf, nan})
      end
      expect(make({1, 0}, "int32") / 0, "float64", {2}, {inf, nan})
    end)

    it("gives 0 for an integer to a negative power, 1 or -1 for bases 1 and -1 (NumPy raises)", function()
      local base = make({2, 1, -1, -1, 0, -3}, "int32")
      expect(base ^ make({-1, -5, -3, -2, -1, -2}, "int32"), "int32", {6}, {0, 1, -1, 1, 0, 0})
      expect(make({1, -1, 5}, "int8") ^ -7, "int8", {3}, {1, -1, 0})
      expect(make({2, 0}, "int64") ^ 0, "int64", {2}, {1, 1})
      expect(make({2.0}, "float64") ^ -1, "float64", {1}, {0.5})
    end)

    it("propagates NaN through maximum, minimum and clip; sign of NaN is NaN", function()
      for _, dt in ipairs { "float16", "float32", "float64", "bfloat16" } do
        local a = make({nan, 1, 2, nan}, dt)
        local b = make({1, nan, 3, nan}, dt)
        expect(luacuda.maximum(a, b), dt, {4}, {nan, nan, 3, nan})
        expect(luacuda.minimum(a, b), dt, {4}, {nan, nan, 2, nan})
        expect(luacuda.clip(a, 1.5, 1.75), dt, {4}, {nan, 1.5, 1.75, nan})
        expect(luacuda.sign(make({nan, -0.5, 0, 3}, dt)), dt, {4}, {nan, -1, 0, 1})
      end
    end)

    it("casts with astype: float to int truncates toward zero, out of range saturates, NaN gives 0", function()
      local f = make({2.9, -2.9, 0.5, -0.5, 1e10, -1e10, nan, inf, -inf}, "float64")
      expect(f:astype("int8"), "int8", {9}, {2, -2, 0, 0, 127, -128, 0, 127, -128})
      expect(f:astype("uint8"), "uint8", {9}, {2, 0, 0, 0, 255, 0, 0, 255, 0})
      expect(f:astype("int32"), "int32", {9}, {2, -2, 0, 0, 2147483647, -2147483648, 0, 2147483647, -2147483648})
      expect(f:astype("uint32"), "uint32", {9}, {2, 0, 0, 0, 4294967295, 0, 0, 4294967295, 0})
      expect(f:astype("int64"), "int64", {9}, {2, -2, 0, 0, 10000000000, -10000000000, 0,
                                               math.maxinteger, math.mininteger})
      expect(make({1e300, -1e300, 3.5}, "float64"):astype("float32"), "float32", {3}, {inf, -inf, 3.5})
      expect(make({1e30, -1, 2.0 ^ 63}, "float64"):astype("uint64"), "uint64", {3}, {2.0 ^ 64, 0, 2.0 ^ 63})
      expect(make({1e19, -1e19}, "float64"):astype("int64"), "int64", {2}, {math.maxinteger, math.mininteger})
      expect(make({-3.75, 300.5, nan}, "float16"):astype("int8"), "int8", {3}, {-3, 127, 0})
      expect(make({-3.75, 70000, nan}, "float32"):astype("int16"), "int16", {3}, {-3, 32767, 0})
      expect(make({-3.75, 300.5}, "bfloat16"):astype("uint8"), "uint8", {2}, {0, 255})
    end)

    it("casts with astype: bool is 0 and 1, nonzero is true; integers wrap as C converts them", function()
      expect(make({true, false}):astype("float32"), "float32", {2}, {1, 0})
      expect(make({true, false}):astype("int64"), "int64", {2}, {1, 0})
      expect(make({true, false}):astype("float16"), "float16", {2}, {1, 0})
      expect(make({0, 2, -1}, "int32"):astype("bool"), "bool", {3}, {false, true, true})
      expect(make({0, 0.25, nan, -0.0}, "float64"):astype("bool"), "bool", {4}, {false, true, true, false})
      expect(make({300, -1, 128}, "int32"):astype("int8"), "int8", {3}, {44, -1, -128})
      expect(make({300, -1}, "int32"):astype("uint8"), "uint8", {2}, {44, 255})
      expect(make({-1}, "int64"):astype("uint64"), "uint64", {1}, {2.0 ^ 64})
      expect(make({65504, 65519, 65520, 1e6}, "float64"):astype("float16"), "float16", {4}, {65504, 65504, inf, inf})
      expect(make({1 / 3, 2049}, "float64"):astype("float16"), "float16", {2}, {0.333251953125, 2048})
      local same = make({1, 2}, "int32"):astype("int32")
      expect(same, "int32", {2}, {1, 2})
      assert.equal(side.name, same.kind)
    end)

    it("casts to and from bfloat16 with astype, rounding to nearest even", function()
      expect(make({1 / 3, 257, 259, 3e38, 4e38}, "float64"):astype("bfloat16"), "bfloat16", {5},
             {0.333984375, 256, 260, bf16(3e38), inf})
      expect(make({1 / 3}, "float32"):astype("bfloat16"), "bfloat16", {1}, {bf16(f32(1 / 3))})
      expect(make({-7, 300}, "int16"):astype("bfloat16"), "bfloat16", {2}, {-7, 300})
      local b = make({0.333984375, -2.5, 1e30}, "bfloat16")
      expect(b:astype("float32"), "float32", {3}, {0.333984375, -2.5, bf16(1e30)})
      expect(b:astype("float64"), "float64", {3}, {0.333984375, -2.5, bf16(1e30)})
      expect(b:astype("float16"), "float16", {3}, {f16(0.333984375), -2.5, inf})
      expect(b:astype("int32"), "int32", {3}, {0, -2, 2147483647})
      expect(make({0.1}, "float16"):astype("bfloat16"), "bfloat16", {1}, {bf16(f16(0.1))})
    end)

    it("casts views with astype into a new C-contiguous array of the same kind", function()
      local m = make({{1.5, 2.5, 3.5}, {4.5, 5.5, 6.5}}, "float32")
      local c = m.T[{{nil, nil, -1}}]:astype("int16")
      assert.equal(side.name, c.kind)
      assert.is_true(c:is_c_contiguous())
      expect(c, "int16", {3, 2}, {{3, 6}, {2, 5}, {1, 4}})
    end)
  end)
end

-- ---- a bigger case: buffered conversions across chunks --------------------------------------

describe("array math over many elements", function()
  for _, side in ipairs(SIDES) do
    it("adds a transposed float16 array to a float32 one on " .. side.name .. " arrays, converting in chunks", function()
      local R, C = 70, 300                        -- 21000 elements, past any chunk of the loops
      local ht, ft = {}, {}
      for i = 1, R do
        ht[i], ft[i] = {}, {}
        for j = 1, C do
          ht[i][j] = f16(((i * 31 + j * 17) % 1000) / 64)
        end
      end
      for j = 1, C do
        ft[j] = {}
        for i = 1, R do ft[j][i] = (i - j) * 0.25 end
      end
      local h = side.make(ht, "float16")
      local f = side.make(ft, "float32")
      local r = h.T + f                           -- {300, 70}
      local want = {}
      for j = 1, C do
        want[j] = {}
        for i = 1, R do want[j][i] = f32(ht[i][j] + ft[j][i]) end
      end
      expect(r, "float32", {C, R}, want)
      local back = (f - h.T):astype("float16")    -- float32 - float16: float32, then to float16
      local w2 = {}
      for j = 1, C do
        w2[j] = {}
        for i = 1, R do w2[j][i] = f16(f32(ft[j][i] - ht[i][j])) end
      end
      expect(back, "float16", {C, R}, w2)
    end)
  end
end)

-- ---- random layouts against the model ----------------------------------------------------

-- A nested table of shape, each element f(index).
local function nested(shape, f, d, idx)
  d, idx = d or 1, idx or {}
  if d > #shape then return f(idx) end
  local t = {}
  for i = 1, shape[d] do
    idx[d] = i
    t[i] = nested(shape, f, d + 1, idx)
  end
  idx[d] = nil
  return t
end

-- Element idx (of a result of nd axes) of t, of shape, broadcast.
local function bget(t, shape, idx, nd)
  local off = nd - #shape
  for d = 1, #shape do t = t[shape[d] == 1 and 1 or idx[off + d]] end
  return t
end

-- An array of the given shape that is a view: of a transposed base, every
-- other element along some axes, one axis reversed; values from counter.
local function random_view(make, shape, dt, counter)
  local nd = #shape
  local perm = {}
  for i = 1, nd do perm[i] = i end
  for i = nd, 2, -1 do
    local j = math.random(i)
    perm[i], perm[j] = perm[j], perm[i]
  end
  local base, step2 = {}, {}
  for i = 1, nd do
    step2[perm[i]] = math.random() < 0.3
    base[perm[i]] = shape[i] * (step2[perm[i]] and 2 or 1)
  end
  local a = make(nested(base, function()
    counter[1] = counter[1] + 1
    return counter[1] % 97
  end), dt)
  if nd == 0 then return a end
  local key = {}
  for d = 1, nd do key[d] = step2[d] and {1, base[d], 2} or {} end
  a = a[key]:transpose(perm)
  if math.random() < 0.5 then
    local k = {}
    for d = 1, nd do k[d] = {} end
    k[math.random(nd)] = {nil, nil, -1}
    a = a[k]
  end
  return a
end

describe("array math on random layouts", function()
  for _, side in ipairs(SIDES) do
    it("adds random views with broadcasting, into new arrays, out views and in place, on " .. side.name .. " arrays", function()
      math.randomseed(18)
      local DT = { "int16", "int32", "int64", "uint8", "float16", "float32", "float64" }
      for case = 1, 60 do
        local nd = math.random(0, 4)
        local shape, sa, sb = {}, {}, {}
        for d = 1, nd do shape[d] = math.random(1, 4) end
        for d = 1, nd do sa[d] = math.random() < 0.25 and 1 or shape[d] end
        for d = math.random(0, nd) + 1, nd do sb[#sb + 1] = math.random() < 0.25 and 1 or shape[d] end
        local counter = {0}
        local a = random_view(side.make, sa, DT[math.random(#DT)], counter)
        local b = random_view(side.make, sb, DT[math.random(#DT)], counter)
        local what = ("case %d: %s {%s} + %s {%s}"):format(case, a.dtype, table.concat(a.shape, ", "),
                                                            b.dtype, table.concat(b.shape, ", "))
        local at, bt = values(a), values(b)
        local r = a + b
        local dt = r.dtype
        local round = ROUND[dt] or function(x) return x end   -- the integers here stay in range
        local want = nested(r.shape, function(idx)
          return round(bget(at, a.shape, idx, #r.shape) + bget(bt, b.shape, idx, #r.shape))
        end)
        expect(r, dt, r.shape, want, nil, what)
        local o = random_view(side.make, r.shape, dt, {0})
        assert.is_true(luacuda.add(a, b, o) == o)
        expect(o, dt, r.shape, want, nil, what .. " into a view")
        if a.dtype == dt and #a.shape == #r.shape and table.concat(a.shape, ",") == table.concat(r.shape, ",") then
          luacuda.add(a, b, a)
          expect(a, dt, r.shape, want, nil, what .. " in place")
        end
      end
    end)
  end

  it("reads and writes unaligned elements: the fields of a packed record", function()
    for _, side in ipairs(SIDES) do
      local P = luacuda.record({ {"tag", "int8"}, {"v", "float64"}, {"w", "int32"} }, {align = false})
      local h = luacuda.zeros(5, P)
      for i = 1, 5 do h[i] = {tag = i, v = i * 1.5, w = -i} end
      local a = side.name == "host" and h or side.make(h)
      local v, w, tag = a.v, a.w, a.tag
      assert.equal(13, v.strides[1])
      expect(v + w, "float64", {5}, {0.5, 1, 1.5, 2, 2.5})
      luacuda.multiply(v, 2, v)
      expect(v, "float64", {5}, {3, 6, 9, 12, 15})
      luacuda.add(w, tag, w)
      expect(w, "int32", {5}, {0, 0, 0, 0, 0})
      expect(luacuda.sqrt(v), "float64", {5}, map1(math.sqrt, {3, 6, 9, 12, 15}))
      expect(v:astype("float16"), "float16", {5}, {3, 6, 9, 12, 15})
      expect(tag:astype("float32"), "float32", {5}, {1, 2, 3, 4, 5})
    end
  end)
end)

-- ---- errors ---------------------------------------------------------------------------------

describe("array math's errors", function()
  local R = luacuda.record { {"x", "float32"}, {"y", "int32"} }

  it("refuses a host array with a device array, naming both operands and kinds", function()
    local h = luacuda.array({1, 2}, "float32")
    local d = luacuda.to_device({1, 2}, {dtype = "float32"})
    S.misuse({"luacuda.add (+): operand 1 is a host array and operand 2 a device array",
              "copy one first"}, function(x, y) return x + y end, h, d)
    S.misuse("luacuda.multiply: operand 1 is a device array and operand 2 a host array",
             luacuda.multiply, d, h)
    -- filled: S.misuse reads its arguments (valgrind sees uninitialised memory)
    local p = luacuda.pinned_array(2, "float32"):fill(0)
    local m = luacuda.managed_array(2, "float32"):fill(0)
    S.misuse("operand 1 is a pinned array and operand 2 a managed array", luacuda.subtract, p, m)
    S.misuse("operand 1 is a mapped array and operand 3 a host array",
             luacuda.clip, luacuda.mapped_array(2, "float32"):fill(0), 0, h)
    S.misuse("luacuda.where: operand 1 is a host array and operand 2 a device array",
             luacuda.where, luacuda.array({true, false}), d, 0)
  end)

  it("refuses an output on the other side from the operands", function()
    local h = luacuda.array({1, 2}, "float32")
    local d = luacuda.device_array(2, "float32"):fill(0)   -- S.misuse reads it
    S.misuse("luacuda.add: the output is a device array, the operands compute on the host",
             luacuda.add, h, h, d)
    S.misuse("the output is a pinned array, the operands compute on the device",
             luacuda.add, d, 1, luacuda.pinned_array(2, "float32"):fill(0))
  end)

  it("refuses the operations bool does not have: bool ^ bool, bool - bool, -bool, sign", function()
    local b = luacuda.array({true, false})
    S.misuse("luacuda.power (^): power is not defined for bool (the operands are bool and bool)",
             function(x, y) return x ^ y end, b, b)
    S.misuse("luacuda.subtract (-): subtract is not defined for bool (the operands are bool and bool)",
             function(x, y) return x - y end, b, b)
    S.misuse("luacuda.negative (unary -): negative is not defined for bool (the operands are bool)",
             function(x) return -x end, b)
    S.misuse("luacuda.sign: sign is not defined for bool", luacuda.sign, b)
    S.misuse("luacuda.subtract: subtract is not defined for bool (the operands are bool and a boolean)",
             luacuda.subtract, b, true)
  end)

  it("refuses math on record arrays, and astype to or from a record", function()
    local r = luacuda.zeros(2, R)
    S.misuse("luacuda.sqrt: sqrt is not defined for the record dtype record{x: float32, y: int32}",
             luacuda.sqrt, r)
    S.misuse("luacuda.add (+): add is not defined for the record dtype", function(x) return x + 1 end, r)
    S.misuse("luacuda.gt: gt is not defined for the record dtype", r.gt, r, r)
    local a = luacuda.zeros(2, "float32")
    S.misuse("luacuda.astype: cannot convert float32 to record{x: float32, y: int32}: records convert field by field",
             a.astype, a, R)
    S.misuse("luacuda.astype: cannot convert record{x: float32, y: int32} to float32", a.astype, r, "float32")
    S.misuse("luacuda.astype: unknown dtype 'float128'", a.astype, a, "float128")
  end)

  it("names both shapes when they do not broadcast", function()
    local a = luacuda.zeros({2, 3}, "float32")
    local b = luacuda.zeros({4}, "float32")
    S.misuse({"luacuda.add (+): shapes {2, 3} and {4} do not broadcast"}, function(x, y) return x + y end, a, b)
    S.misuse("shapes {2, 3} and {4} do not broadcast", luacuda.where, luacuda.zeros({2, 1}, "bool"), a, b)
  end)

  it("refuses an output of the wrong shape, or of a dtype the result does not cast to same_kind", function()
    local a = luacuda.zeros({2, 3}, "float32")
    S.misuse("luacuda.add: the output must be an array of dtype float32 and shape {2, 3}, got dtype float32 and shape {3, 2}",
             luacuda.add, a, a, luacuda.zeros({3, 2}, "float32"))
    local i = luacuda.zeros(3, "int32")
    S.misuse("luacuda.divide: cannot cast the result's dtype float64 into the output's int32 under casting 'same_kind'",
             luacuda.divide, i, i, i)
    S.misuse("luacuda.sqrt: cannot cast the result's dtype float64 into the output's int32 under casting 'same_kind' "
             .. "(give {casting = 'unsafe'} to allow it)", luacuda.sqrt, i, i)
    -- a broadcastable output is not enough: it must have the result's shape
    S.misuse("the output must be an array of dtype float32 and shape {2, 3}, got dtype float32 and shape {1, 3}",
             luacuda.add, a, a, luacuda.zeros({1, 3}, "float32"))
  end)

  it("refuses operands that are not arrays, numbers or booleans", function()
    local a = luacuda.zeros(2, "float32")
    S.misuse("luacuda.add (+): operand 2 is a table: make it an array first", function(x, y) return x + y end, a, {1, 2})
    S.misuse("luacuda.multiply (*): operand 1 is a table", function(x, y) return x * y end, {1, 2}, a)
    S.misuse("luacuda.add (+): operand 2 must be an array, a number or a boolean, got string",
             function(x, y) return x + y end, a, "1")
    S.misuse("luacuda.maximum: operand 2 must be an array, a number or a boolean, got function",
             luacuda.maximum, a, print)
    S.misuse("luacuda.add: needs an array among its operands (got only Lua values)", luacuda.add, 1, 2)
    S.misuse("luacuda.sqrt: needs an array among its operands", luacuda.sqrt, 4)
    S.misuse("luacuda.where: needs an array among its operands", luacuda.where, true, 1, 2)
    S.misuse("luacuda.add: takes 2 operands, got 1", luacuda.add, a)
    S.misuse("luacuda.clip: takes 3 operands, got 2", luacuda.clip, a, 1)
    S.misuse("luacuda.add: expected a stream, got number", luacuda.add, a, a, 5)
    S.misuse("luacuda.add: argument 5: expected an output array, a stream or an options table, got number",
             luacuda.add, a, a, luacuda.zeros(2, "float32"), luacuda.default_stream(), 5)
  end)

  it("refuses a Lua number out of the range of the dtype it takes", function()
    local i8 = luacuda.array({1}, "int8")
    S.misuse({"luacuda.add (+): operand 2: 300 is out of range for int8",
              "a Lua number takes the dtype of the arrays it meets"}, function(x, y) return x + y end, i8, 300)
    S.misuse("luacuda.subtract (-): operand 1: -1 is out of range for uint8",
             function(x, y) return x - y end, -1, luacuda.array({1}, "uint8"))
    S.misuse("luacuda.add: operand 2: 4294967296 is out of range for uint32",
             luacuda.add, luacuda.array({1}, "uint32"), 1 << 32)
    S.misuse("luacuda.clip: operand 3: 128 is out of range for int8", luacuda.clip, i8, 0, 128)
    S.misuse("luacuda.lt: operand 2: 300 is out of range for int8", i8.lt, i8, 300)
  end)

  it("refuses result_type without operands, with too many, or with values that do not promote", function()
    S.misuse("luacuda.result_type: needs at least one operand", luacuda.result_type)
    local many = {}
    for i = 1, 65 do many[i] = "int8" end
    S.misuse("luacuda.result_type: at most 64 operands, got 65", luacuda.result_type, table.unpack(many))
    S.misuse("luacuda.result_type: operand 2 must be an array, a dtype name, a number or a boolean, got table",
             luacuda.result_type, "int8", {})
    S.misuse("luacuda.result_type: operand 1 is of the record dtype record{x: float32, y: int32}, which does not promote",
             luacuda.result_type, luacuda.zeros(1, R))
    S.misuse("luacuda.result_type: operand 1 must be an array, a dtype name, a number or a boolean, got luacuda.record",
             luacuda.result_type, R)
    S.misuse("luacuda.result_type: unknown dtype 'int7'", luacuda.result_type, "int7")
  end)

  it("refuses closed arrays", function()
    local a = luacuda.zeros(2, "float32")
    local b = luacuda.zeros(2, "float32")
    b:close()
    local ok, err = pcall(function() return a + b end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("luacuda.add (+)", 1, true), err)
    assert.truthy(tostring(err):find("closed", 1, true), err)
    ok, err = pcall(luacuda.sqrt, b)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("closed", 1, true), err)
  end)
end)

-- Issue 30, small host arrays at speed: a small array's memory is in its
-- buffer's own allocation (up to 512 bytes), and operands that are all
-- C-contiguous run as one run, without collapsing their axes. The sizes
-- around that bound, arrays made and dropped while the collector runs,
-- and the operands the one run must refuse or read with their own strides.
describe("small host arrays", function()
  local function range(n, dtype)
    local t = {}
    for i = 1, n do t[i] = i end
    return luacuda.array(t, dtype)
  end

  it("keep their values at the sizes around the bound of the shared allocation", function()
    for _, n in ipairs({0, 1, 16, 127, 128, 129, 200}) do   -- 128 float32: 512 bytes
      local c = range(n, "float32") + range(n, "float32")
      assert.equal(n, c.size)
      local t = c:totable()
      for i = 1, n do assert.equal(2 * i, t[i]) end
    end
  end)

  it("keep their values while the ones dropped are collected", function()
    local a, kept = range(16, "float32"), {}
    for i = 1, 600 do
      local c = a + i
      if i % 100 == 0 then kept[#kept + 1] = {i, c} end
      if i % 50 == 0 then collectgarbage() end
    end
    for _, k in ipairs(kept) do
      local t = k[2]:totable()
      for j = 1, 16 do assert.equal(j + k[1], t[j]) end
    end
  end)

  it("read mixed itemsizes, a scalar, 0-d arrays and a view of another order", function()
    local c = range(4, "int8") + luacuda.array({0.5, 0.5, 0.5, 0.5}, "float32")
    assert.equal("float32", c.dtype)
    assert.same({1.5, 2.5, 3.5, 4.5}, c:totable())
    assert.same({11, 12, 13, 14}, (range(4, "int16") + 10):totable())
    assert.equal(5, (luacuda.array(2, "float64") + luacuda.array(3, "float64")):item())
    local m = luacuda.array({{1, 2}, {3, 4}}, "float32")
    assert.same({{2, 5}, {5, 8}}, (m + m.T):totable())
    local out = luacuda.zeros({2, 2}, "float64")
    luacuda.add(m, m.T, out)                         -- converted as it is stored
    assert.same({{2, 5}, {5, 8}}, out:totable())
  end)
end)

-- Issue 30, a shorter path for arrays alike: inputs that are all arrays of
-- one dtype and one shape take their dtypes from a table resolved once per
-- op and dtype and their layouts as they are (no broadcasting worked out);
-- the result takes its metatable from an input array; the finalizer runs
-- outside the gate. What must not take that path, and what it must keep.
for _, side in ipairs(SIDES) do
  describe("array math on " .. side.name .. " arrays alike", function()
    local make = side.make

    it("reads each input in its own layout: a transposed view, a stepped view, an offset", function()
      local m = make({{1, 2, 3}, {4, 5, 6}}, "float32")           -- {2, 3}, C order
      local t = make({{10, 40}, {20, 50}, {30, 60}}, "float32").T  -- {2, 3}, F order
      assert.same({{11, 22, 33}, {44, 55, 66}}, values(m + t))
      assert.same({{9, 18, 27}, {36, 45, 54}}, values(t - m))
      local w = make({1, 2, 3, 4, 5, 6, 7, 8}, "int16")
      local odd, tail = w[{{1, 8, 2}}], w[{{5, 8}}]               -- stride 2; offset 4
      assert.same({6, 9, 12, 15}, values(odd + tail))
      local z = make(2.5, "float64")                               -- 0-d
      assert.equal(6.25, values(z * z))
    end)

    it("broadcasts arrays of one dtype and rank but other shapes, and promotes one shape of two dtypes", function()
      local col, row = make({{1}, {2}}, "int32"), make({{10, 20, 30}}, "int32")
      local c = col + row
      assert.same({2, 3}, c.shape)
      assert.same({{11, 21, 31}, {12, 22, 32}}, values(c))
      local p = make({1, 2}, "int8") + make({300, 400}, "int16")
      assert.equal("int16", p.dtype)
      assert.same({301, 402}, values(p))
      local q = make({1, 2}, "uint8") / make({4, 8}, "uint8")   -- its own op's dtypes
      assert.equal("float64", q.dtype)
      assert.same({0.25, 0.25}, values(q))
      local l = make({1, 5}, "uint8"):lt(make({2, 2}, "uint8"))
      assert.equal("bool", l.dtype)
      assert.same({true, false}, values(l))
    end)

    it("raises resolve's error for arrays alike with no loop, as for others", function()
      local b = make({true, false}, "bool")
      local ok, alike = pcall(function() return b - b end)
      assert.is_false(ok)
      local ok2, other = pcall(function() return b - make({{true}}, "bool") end)
      assert.is_false(ok2)
      assert.truthy(tostring(alike):find("subtract is not defined for bool (the operands are bool and bool)", 1, true), alike)
      assert.equal(tostring(other):match("subtract is not defined.*"), tostring(alike):match("subtract is not defined.*"))
    end)

    it("makes results that are arrays of their own, with the arrays' metatable", function()
      local x, y = make({1, 2}, "float32"), make({3, 4}, "float32")
      local mt = debug.getmetatable(x)
      for _, r in ipairs({x + y, 2 + y, y * 2, -x, luacuda.sqrt(x)}) do
        assert.equal(mt, debug.getmetatable(r))
        assert.equal("array", luacuda.type(r))
        r:close()
        assert.equal("closed array", luacuda.type(r))
      end
    end)
  end)
end

describe("the array finalizer", function()
  it("does nothing for what is not an array, nor for an array's metatable on another userdata", function()
    local a = luacuda.zeros(2, "float32")
    local gc = debug.getmetatable(a).__gc
    for _, v in ipairs({{}, 1, "x", io.stdout, luacuda.null}) do gc(v) end
    local s = luacuda.stream()
    local smt = debug.getmetatable(s)
    debug.setmetatable(s, debug.getmetatable(a))       -- a forged array: its size differs
    local ok, err = pcall(function() return a + s end)
    gc(s)
    debug.setmetatable(s, smt)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("operand 2 must be an array", 1, true), err)
    s:synchronize()                                      -- the stream is whole
    local foreign = {}
    debug.setmetatable(a, foreign)                       -- no longer the array metatable
    ok, err = pcall(luacuda.add, a, a)
    debug.setmetatable(a, debug.getmetatable(luacuda.zeros(1)))
    assert.is_false(ok)
    assert.same({0, 0}, (a + a):totable())
  end)

  it("lets go of an array's memory when called on it, and the array reads as closed", function()
    local a = luacuda.array({1, 2}, "float32")
    debug.getmetatable(a).__gc(a)
    assert.equal("closed array", luacuda.type(a))
    local ok, err = pcall(function() return a + a end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("closed", 1, true), err)
    debug.getmetatable(a).__gc(a)                        -- twice: nothing
  end)
end)
