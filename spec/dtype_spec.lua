-- dtypes: names and aliases, sizes, and the conversion rules between Lua
-- values and stored elements, on host and device arrays alike.
--
--   * Lua integers go into integer types with a range check (an error, never
--     a wrap); floats only when integral; booleans only into bool, and bool
--     takes only booleans; strings are never numbers.
--   * Integer types read as Lua integers (uint64 past 2^63-1 as floats),
--     float types as Lua floats, bool as booleans.
--   * float16 is IEEE binary16, bfloat16 the upper half of a binary32,
--     both rounded to nearest even (spec/half_spec.lua checks bfloat16's
--     rounding bit for bit).
--   * A table without a dtype is int64, float64 as soon as one value is a
--     float, bool when all are booleans; mixing booleans and numbers is an
--     error; {} is float64 of shape {0}.
local luacuda = require "luacuda"
local S = require "spec.support"

local mininteger, maxinteger = math.mininteger, math.maxinteger
local nan, inf = 0 / 0, math.huge

-- ---------------------------------------------------------------------------
-- helpers

local DTYPES = { "bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                 "uint32", "uint64", "float16", "bfloat16", "float32", "float64" }

local ITEMSIZE = { bool = 1, int8 = 1, int16 = 2, int32 = 4, int64 = 8, uint8 = 1,
                   uint16 = 2, uint32 = 4, uint64 = 8, float16 = 2, bfloat16 = 2,
                   float32 = 4, float64 = 8 }

local ALIASES = {
  ["?"] = "bool", b1 = "bool",
  i1 = "int8", i2 = "int16", i4 = "int32", i8 = "int64",
  u1 = "uint8", u2 = "uint16", u4 = "uint32", u8 = "uint64",
  f2 = "float16", f4 = "float32", f8 = "float64",
}

local INT_DTYPES = { "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64" }
local FLOAT_DTYPES = { "float16", "bfloat16", "float32", "float64" }
local NUMERIC_DTYPES = {}
for _, dt in ipairs(INT_DTYPES) do NUMERIC_DTYPES[#NUMERIC_DTYPES + 1] = dt end
for _, dt in ipairs(FLOAT_DTYPES) do NUMERIC_DTYPES[#NUMERIC_DTYPES + 1] = dt end

-- Lowest and highest value of each integer type, as Lua integers.
-- uint64's highest has no Lua integer: it is checked separately.
local LIMITS = {
  int8   = { -128, 127 },
  int16  = { -32768, 32767 },
  int32  = { -2147483648, 2147483647 },
  int64  = { mininteger, maxinteger },
  uint8  = { 0, 255 },
  uint16 = { 0, 65535 },
  uint32 = { 0, 4294967295 },
  uint64 = { 0, maxinteger },
}

-- Arrays from a table, on host or device.
local KINDS = {
  host = function(tbl, dt) return luacuda.array(tbl, dt) end,
  device = function(tbl, dt) return luacuda.to_device(tbl, { dtype = dt }) end,
}
local KIND_NAMES = { "host", "device" }

local function zero_of(dt) if dt == "bool" then return false end return 0 end

-- The ways a Lua value gets into an element of a one-element (or 0-d) array
-- of the given kind and dtype. Each returns the array written.
local WRITERS = {
  { name = "a table", fn = function(kind, dt, v) return KINDS[kind]({ v }, dt) end },
  { name = "a[1] = v", fn = function(kind, dt, v)
      local a = KINDS[kind]({ zero_of(dt) }, dt)
      a[1] = v
      return a
    end },
  { name = "a:fill(v)", fn = function(kind, dt, v)
      local a = KINDS[kind]({ zero_of(dt), zero_of(dt) }, dt)
      a:fill(v)
      return a
    end },
  { name = "a scalar (0-d)", fn = function(kind, dt, v)
      if kind == "host" then return luacuda.array(v, dt) end
      return luacuda.to_device(v, { dtype = dt })
    end },
  { name = "full / copy_to_device", fn = function(kind, dt, v)
      if kind == "host" then return luacuda.full({ 1 }, v, dt) end
      local a = luacuda.to_device({ zero_of(dt) }, { dtype = dt })
      a:copy_to_device({ v })
      return a
    end },
}

local misuse = S.misuse

local function describe_value(v)
  if math.type(v) == "float" then return ("%.17g (float)"):format(v) end
  return tostring(v)
end

local function is_nan(x) return type(x) == "number" and x ~= x end

-- got is the same Lua value as want: same type and subtype, nan for nan,
-- and the sign of a zero.
local function assert_value(want, got, ctx)
  ctx = ctx or ""
  if type(want) == "boolean" then
    assert(type(got) == "boolean", ctx .. ": expected a boolean, got " .. type(got))
    assert(want == got, ("%s: expected %s, got %s"):format(ctx, tostring(want), tostring(got)))
    return
  end
  assert(math.type(got) == math.type(want),
         ("%s: expected an %s %s, got %s %s"):format(ctx, tostring(math.type(want)),
           describe_value(want), tostring(math.type(got) or type(got)), tostring(got)))
  if is_nan(want) then
    assert(is_nan(got), ("%s: expected nan, got %s"):format(ctx, describe_value(got)))
    return
  end
  assert(want == got, ("%s: expected %s, got %s"):format(ctx, describe_value(want),
                                                       describe_value(got)))
  if want == 0 and math.type(want) == "float" then
    assert(1 / want == 1 / got, ctx .. ": wrong sign of zero")
  end
end

-- Every element read of a (a[i] / item, and totable) gives want.
local function assert_reads(a, want, ctx)
  if a.ndim == 0 then
    assert_value(want, a:item(), ctx .. " (item)")
    assert_value(want, a:totable(), ctx .. " (totable)")
    return
  end
  local t = a:totable()
  for i = 1, #a do
    assert_value(want, a[i], ctx .. " (a[" .. i .. "])")
    assert_value(want, t[i], ctx .. " (totable)")
  end
end

-- Writing v into dt gives want when read back, through every writer, on
-- host and device.
local function round_trip(dt, v, want)
  if want == nil then want = v end
  for _, kind in ipairs(KIND_NAMES) do
    for _, w in ipairs(WRITERS) do
      local ctx = ("%s %s from %s via %s"):format(kind, dt, describe_value(v), w.name)
      local ok, a = pcall(w.fn, kind, dt, v)
      assert(ok, ctx .. ": " .. tostring(a))
      assert.equal(dt, a.dtype, ctx)
      assert.equal(kind, a.kind, ctx)
      assert_reads(a, want, ctx)
    end
  end
end

-- Writing v into dt is an error containing every pattern, through every
-- writer, on host and device; a target that existed is left as it was.
local function refused(dt, v, patterns)
  if type(patterns) == "string" then patterns = { patterns } end
  for _, kind in ipairs(KIND_NAMES) do
    -- creating from a table or a scalar
    for _, make in ipairs({
      function() return KINDS[kind]({ v }, dt) end,
      function() return KINDS[kind]({ zero_of(dt), v }, dt) end,
    }) do
      misuse(patterns, make)
    end
    -- a scalar source: a string is not one at all
    local scalar = patterns
    if type(v) == "string" then scalar = { "expected a table, number, boolean or array, got string" } end
    misuse(scalar, function()
      if kind == "host" then return luacuda.array(v, dt) end
      return luacuda.to_device(v, { dtype = dt })
    end)
    if kind == "host" then misuse(patterns, function() return luacuda.full({ 2 }, v, dt) end) end
    -- writing into an existing array: nothing changes
    local a = KINDS[kind]({ zero_of(dt), zero_of(dt) }, dt)
    misuse(patterns, function(x) x[1] = v end, a)
    misuse(patterns, function(x) x:fill(v) end, a)
    if kind == "device" then
      misuse(patterns, function(x) x:copy_to_device({ zero_of(dt), v }) end, a)
    end
    local zero = zero_of(dt)
    if dt:match("^b?float") then zero = 0.0 end
    assert_reads(a, zero, kind .. " " .. dt .. " after refusing " .. describe_value(v))
  end
end

-- The uint16 bits of the float16 that v becomes, on host and device, checked
-- to agree; and the value read back.
local function half_bits(v)
  local h = luacuda.array({ v }, "float16")
  local d = luacuda.to_device({ v }, { dtype = "float16" })
  local bits = h:view("uint16")[1]
  assert.equal(bits, d:view("uint16")[1], "device float16 bits of " .. describe_value(v))
  local x = luacuda.zeros(1, "float16")
  x[1] = v
  assert.equal(bits, x:view("uint16")[1], "a[1] = v float16 bits of " .. describe_value(v))
  return bits, h[1]
end

-- The float16 whose bits are b, read on host and device.
local function half_from_bits(b)
  local h = luacuda.array({ b }, "uint16"):view("float16")[1]
  local d = luacuda.to_device({ b }, { dtype = "uint16" }):view("float16")[1]
  if h == h then assert.equal(h, d) else assert.is_true(d ~= d) end
  return h
end

local function hex(b) return ("0x%04X"):format(b) end

-- ---------------------------------------------------------------------------

describe("dtype names", function()
  for _, kind in ipairs(KIND_NAMES) do
    it("gives every dtype its itemsize on " .. kind .. " arrays", function()
      for _, dt in ipairs(DTYPES) do
        local a = KINDS[kind]({ zero_of(dt), zero_of(dt), zero_of(dt) }, dt)
        assert.equal(dt, a.dtype)
        assert.equal(kind, a.kind)
        assert.equal(ITEMSIZE[dt], a.itemsize, dt)
        assert.equal(3 * ITEMSIZE[dt], a.nbytes, dt)
        assert.equal(ITEMSIZE[dt], a.strides[1], dt)
        assert.is_true(math.type(a.itemsize) == "integer")
      end
    end)

    it("turns every alias into the canonical name on " .. kind .. " arrays", function()
      for alias, name in pairs(ALIASES) do
        local a = KINDS[kind]({ zero_of(name) }, alias)
        assert.equal(name, a.dtype, alias)
        assert.equal(ITEMSIZE[name], a.itemsize, alias)
      end
      for _, name in ipairs(DTYPES) do
        assert.equal(name, KINDS[kind]({ zero_of(name) }, name).dtype)
      end
    end)
  end

  it("takes aliases in zeros, full, device_array and view", function()
    for alias, name in pairs(ALIASES) do
      assert.equal(name, luacuda.zeros(2, alias).dtype, alias)
      assert.equal(name, luacuda.full({ 2 }, zero_of(name), alias).dtype, alias)
      assert.equal(name, luacuda.device_array(2, alias).dtype, alias)
      -- 8 bytes view as any itemsize
      assert.equal(name, luacuda.array({ 0 }, "int64"):view(alias).dtype, alias)
      assert.equal(name, luacuda.to_device({ 0 }, { dtype = "int64" }):view(alias).dtype, alias)
    end
  end)

  it("gives zeros and ones of every dtype, read with the dtype's Lua type", function()
    for _, dt in ipairs(DTYPES) do
      local z, o = luacuda.zeros(2, dt), luacuda.ones(2, dt)
      assert.equal(dt, z.dtype)
      assert.equal(dt, o.dtype)
      if dt == "bool" then
        assert_reads(z, false, "zeros bool")
        assert_reads(o, true, "ones bool")
      elseif dt:match("^b?float") then
        assert_reads(z, 0.0, "zeros " .. dt)
        assert_reads(o, 1.0, "ones " .. dt)
      else
        assert_reads(z, 0, "zeros " .. dt)
        assert_reads(o, 1, "ones " .. dt)
      end
    end
  end)

  it("refuses unknown names and non-strings", function()
    for _, bad in ipairs({ "float128", "int", "i3", "f16", "Float32", "F4", "" }) do
      misuse({ "luacuda.array", "unknown dtype '" .. bad .. "'" }, luacuda.array, { 1 }, bad)
      misuse({ "luacuda.zeros", "unknown dtype '" .. bad .. "'" }, luacuda.zeros, 2, bad)
      misuse({ "luacuda.to_device", "unknown dtype '" .. bad .. "'" },
               luacuda.to_device, { 1 }, { dtype = bad })
      local a = luacuda.array({ 1 })
      misuse({ "luacuda.view", "unknown dtype '" .. bad .. "'" }, a.view, a, bad)
    end
    misuse({ "luacuda.array", "dtype must be a string", "number" }, luacuda.array, { 1 }, 4)
    misuse({ "luacuda.zeros", "dtype must be a string", "boolean" }, luacuda.zeros, 2, true)
  end)
end)

-- ---------------------------------------------------------------------------

describe("integer dtypes", function()
  for _, dt in ipairs(INT_DTYPES) do
    local lo, hi = LIMITS[dt][1], LIMITS[dt][2]

    it(dt .. " keeps its limits (host and device, every way of writing)", function()
      round_trip(dt, lo)
      round_trip(dt, hi)
      round_trip(dt, 0)
      round_trip(dt, 1)
      if lo < 0 then round_trip(dt, -1) end
    end)

    it(dt .. " refuses one past each limit, naming the value and the dtype", function()
      if dt ~= "int64" then
        if dt ~= "uint64" then
          refused(dt, hi + 1, tostring(hi + 1) .. " is out of range for " .. dt)
        end
        refused(dt, lo - 1, tostring(lo - 1) .. " is out of range for " .. dt)
      end
      -- far outside, from the other end of the Lua integers
      if dt ~= "int64" then
        refused(dt, mininteger, tostring(mininteger) .. " is out of range for " .. dt)
      end
      if hi ~= maxinteger then
        refused(dt, maxinteger, tostring(maxinteger) .. " is out of range for " .. dt)
      end
    end)

    it(dt .. " takes integral floats and stores them as integers", function()
      round_trip(dt, 3.0, 3)
      round_trip(dt, 0.0, 0)
      round_trip(dt, -0.0, 0)
      if dt ~= "int64" and dt ~= "uint64" then
        round_trip(dt, lo + 0.0, lo)
        round_trip(dt, hi + 0.0, hi)
      end
      if lo < 0 then round_trip(dt, -7.0, -7) end
    end)

    it(dt .. " refuses integral floats out of range, naming the value and the dtype", function()
      if dt ~= "int64" and dt ~= "uint64" then
        refused(dt, hi + 1.0, { dt, tostring(hi + 1) })
      end
      if lo == 0 then refused(dt, -1.0, { dt, "-1" }) end
      if lo < 0 and dt ~= "int64" then refused(dt, lo - 1.0, { dt, tostring(lo - 1) }) end
      refused(dt, 1e300, { dt, "1.0000000000000001e+300" })
    end)

    it(dt .. " refuses 2.5, nan and inf", function()
      refused(dt, 2.5, { dt, "needs an integer", "2.5" })
      refused(dt, -0.5, { dt, "needs an integer", "-0.5" })
      refused(dt, 1e-300, { dt, "needs an integer" })
      refused(dt, nan, { dt, "needs an integer", "nan" })
      refused(dt, inf, { dt, "needs an integer", "inf" })
      refused(dt, -inf, { dt, "needs an integer", "-inf" })
    end)

    it(dt .. " refuses booleans and strings (even \"1\")", function()
      refused(dt, true, { dt, "needs a number, got boolean" })
      refused(dt, false, { dt, "needs a number, got boolean" })
      refused(dt, "1", { dt, "needs a number, got string" })
      refused(dt, "0x10", { dt, "needs a number, got string" })
    end)
  end

  it("int64 keeps math.mininteger and math.maxinteger exactly", function()
    round_trip("int64", mininteger)
    round_trip("int64", maxinteger)
    round_trip("int64", maxinteger - 1)
    round_trip("int64", mininteger + 1)
    -- -2^63 is a float that is an int64; 2^63 is not
    round_trip("int64", -2.0 ^ 63, mininteger)
    round_trip("int64", 2.0 ^ 62, 1 << 62)
    refused("int64", 2.0 ^ 63, { "int64", "9.2233720368547758e+18" })
    refused("int64", -2.0 ^ 63 - 2048, { "int64", "-9.2233720368547779e+18" })
  end)

  it("uint64 holds 0 .. 2^64-1; past 2^63-1 values read as floats", function()
    round_trip("uint64", maxinteger)          -- still a Lua integer
    round_trip("uint64", 2.0 ^ 63)            -- the first float-only value
    round_trip("uint64", 2.0 ^ 64 - 2048)     -- the largest double below 2^64
    round_trip("uint64", 2.0 ^ 62, 1 << 62)   -- an integral float below 2^63: integer
    refused("uint64", -1, "-1 is out of range for uint64")
    refused("uint64", mininteger, tostring(mininteger) .. " is out of range for uint64")
    refused("uint64", 2.0 ^ 64, { "uint64", "1.8446744073709552e+19" })
    refused("uint64", -1.0, { "uint64", "-1" })
  end)

  for _, kind in ipairs(KIND_NAMES) do
    it("reads the bits of int64 -1 as uint64 2^64-1 on " .. kind .. " arrays", function()
      local a = KINDS[kind]({ -1, mininteger, maxinteger, 0 })
      assert.equal("int64", a.dtype)
      local u = a:view("uint64")
      assert.equal("uint64", u.dtype)
      assert_value(1.8446744073709552e19, u[1], "2^64-1")
      assert_value(2.0 ^ 64, u[1], "2^64-1 rounds to the float 2^64")
      assert_value(2.0 ^ 63, u[2], "2^63")
      assert_value(maxinteger, u[3], "2^63-1")
      assert_value(0, u[4], "0")
      local t = u:totable()
      assert_value(1.8446744073709552e19, t[1], "totable 2^64-1")
      assert_value(2.0 ^ 63, t[2], "totable 2^63")
      assert_value(maxinteger, t[3], "totable 2^63-1")
      -- and back: uint64 2^63 written as a float is int64 mininteger
      local b = KINDS[kind]({ 2.0 ^ 63, 2.0 ^ 64 - 2048 }, "uint64"):view("int64")
      assert_value(mininteger, b[1], "bits of 2^63")
      assert_value(-2048, b[2], "bits of 2^64-2048")
    end)

    it("keeps every integer type's bits when viewed as another on " .. kind, function()
      local a = KINDS[kind]({ -1 }, "int8")
      assert_value(255, a:view("uint8")[1], "int8 -1 as uint8")
      a = KINDS[kind]({ -32768 }, "int16")
      assert_value(32768, a:view("uint16")[1], "int16 min as uint16")
      a = KINDS[kind]({ 4294967295 }, "uint32")
      assert_value(-1, a:view("int32")[1], "uint32 max as int32")
      a = KINDS[kind]({ 0x1234 }, "uint16")
      local b = a:view("uint8"):totable()
      assert.same({ 0x34, 0x12 }, b)               -- little-endian, as every target is
    end)
  end
end)

-- ---------------------------------------------------------------------------

describe("bool", function()
  it("round-trips true and false (host and device, every way of writing)", function()
    round_trip("bool", true)
    round_trip("bool", false)
  end)

  it("takes only booleans", function()
    for _, v in ipairs({ 0, 1, -1, 1.0, 0.0, 2.5, nan }) do
      refused("bool", v, "bool needs a boolean, got number")
    end
    refused("bool", "true", "bool needs a boolean, got string")
    refused("bool", "1", "bool needs a boolean, got string")
  end)

  for _, kind in ipairs(KIND_NAMES) do
    it("stores true as 1 and reads any nonzero byte as true on " .. kind, function()
      local a = KINDS[kind]({ true, false, true }, "bool")
      assert.same({ 1, 0, 1 }, a:view("uint8"):totable())
      local b = KINDS[kind]({ 0, 1, 2, 255 }, "uint8"):view("bool")
      assert.same({ false, true, true, true }, b:totable())
      assert_value(true, b[3], "byte 2 as bool")
    end)
  end
end)

-- ---------------------------------------------------------------------------

describe("float dtypes", function()
  for _, dt in ipairs(FLOAT_DTYPES) do
    it(dt .. " takes integers and floats and reads floats", function()
      round_trip(dt, 3, 3.0)
      round_trip(dt, -2, -2.0)
      round_trip(dt, 0, 0.0)
      round_trip(dt, 1.5)
      round_trip(dt, -0.25)
      round_trip(dt, 0.0)
      round_trip(dt, -0.0)
      round_trip(dt, 1024.0)
      round_trip(dt, 2048, 2048.0)
      round_trip(dt, inf)
      round_trip(dt, -inf)
      round_trip(dt, nan)
    end)

    it(dt .. " refuses booleans and strings (even \"1\")", function()
      refused(dt, true, { dt, "needs a number, got boolean" })
      refused(dt, false, { dt, "needs a number, got boolean" })
      refused(dt, "1", { dt, "needs a number, got string" })
      refused(dt, "1.5", { dt, "needs a number, got string" })
    end)
  end

  it("float64 is exact", function()
    round_trip("float64", 0.1)
    round_trip("float64", math.pi)
    round_trip("float64", 1.7976931348623157e308)
    round_trip("float64", 4.9406564584124654e-324)
    round_trip("float64", maxinteger, 2.0 ^ 63)
    round_trip("float64", mininteger, -2.0 ^ 63)
    round_trip("float64", (1 << 53) + 1, 2.0 ^ 53)   -- an integer rounds as C does
  end)

  it("float32 rounds to the nearest float32", function()
    round_trip("float32", 0.1, 0.10000000149011612)
    round_trip("float32", 1 / 3, 0.3333333432674408)
    round_trip("float32", 16777217, 16777216.0)         -- 2^24 + 1: tie, to even
    round_trip("float32", 16777219, 16777220.0)         -- 2^24 + 3: tie, to even (up)
    round_trip("float32", 3.4028234663852886e38)        -- FLT_MAX
    round_trip("float32", 2.0 ^ -149)                    -- smallest subnormal
    round_trip("float32", 2.0 ^ -150, 0.0)              -- tie, to even (zero)
    round_trip("float32", 1.5 * 2.0 ^ -150, 2.0 ^ -149)
    round_trip("float32", 1e-50, 0.0)
    round_trip("float32", -1e-50, -0.0)
  end)

  it("float32 overflow gives inf, as C does", function()
    round_trip("float32", 1e39, inf)
    round_trip("float32", -1e39, -inf)
    round_trip("float32", 1e300, inf)
    round_trip("float32", maxinteger, 9.2233720368547758e18)
    -- halfway between FLT_MAX and 2^128: ties to even, which is 2^128 = inf
    round_trip("float32", (2 - 2.0 ^ -24) * 2.0 ^ 127, inf)
    -- the double just below that halfway point rounds down to FLT_MAX
    round_trip("float32", (2 - 2.0 ^ -24) * 2.0 ^ 127 - 2.0 ^ 75, 3.4028234663852886e38)
  end)

  for _, kind in ipairs(KIND_NAMES) do
    it("float32 stores IEEE binary32 bits on " .. kind, function()
      local a = KINDS[kind]({ 1.0, -2.0, 0.1, inf, -0.0 }, "float32"):view("uint32")
      assert.same({ 0x3F800000, 0xC0000000, 0x3DCCCCCD, 0x7F800000, 0x80000000 }, a:totable())
      local b = KINDS[kind]({ 0x7FC00000, 0x00000001 }, "uint32"):view("float32")
      assert.is_true(is_nan(b[1]))
      assert_value(2.0 ^ -149, b[2], "float32 from bits 1")
    end)
  end
end)

-- ---------------------------------------------------------------------------

describe("float16", function()
  -- value, bits, value read back
  local EXACT = {
    { 1.0, 0x3C00 },
    { -1.0, 0xBC00 },
    { 0.0, 0x0000 },
    { -0.0, 0x8000 },
    { 2.0, 0x4000 },
    { 0.5, 0x3800 },
    { 65504.0, 0x7BFF },                      -- largest finite
    { -65504.0, 0xFBFF },
    { 2.0 ^ -14, 0x0400 },                    -- smallest normal
    { 2.0 ^ -24, 0x0001 },                    -- smallest subnormal
    { -2.0 ^ -24, 0x8001 },
    { 2.0 ^ -14 - 2.0 ^ -24, 0x03FF },        -- largest subnormal
    { 1.0 + 2.0 ^ -10, 0x3C01 },              -- next after 1
    { 1.0 + 2.0 ^ -9, 0x3C02 },
    { 2048.0, 0x6800 },
    { 0.333251953125, 0x3555 },               -- float16(1/3)
    { inf, 0x7C00 },
    { -inf, 0xFC00 },
  }

  it("stores exact values with the IEEE binary16 bits (host and device)", function()
    for _, c in ipairs(EXACT) do
      local bits, back = half_bits(c[1])
      assert.equal(hex(c[2]), hex(bits), "bits of " .. describe_value(c[1]))
      assert_value(c[1], back, "float16 " .. describe_value(c[1]))
      assert_value(c[1], half_from_bits(c[2]), "float16 from " .. hex(c[2]))
    end
  end)

  it("round-trips exact values through every way of writing", function()
    round_trip("float16", 65504.0)
    round_trip("float16", -65504, -65504.0)
    round_trip("float16", 2.0 ^ -24)
    round_trip("float16", 2.0 ^ -14)
    round_trip("float16", 1.0 + 2.0 ^ -10)
  end)

  -- value, bits it rounds to
  local ROUNDED = {
    { 65519.0, 0x7BFF },                      -- below the halfway point: max
    { 65520.0, 0x7C00 },                      -- halfway, to even: inf
    { -65520.0, 0xFC00 },
    { 1e5, 0x7C00 },
    { 1e300, 0x7C00 },
    { -1e300, 0xFC00 },
    { 2.0 ^ -25, 0x0000 },                    -- half the smallest subnormal: to even, 0
    { -2.0 ^ -25, 0x8000 },
    { 1.5 * 2.0 ^ -25, 0x0001 },              -- above halfway: up
    { 2.0 ^ -25 + 2.0 ^ -60, 0x0001 },        -- just above halfway: up
    { 3 * 2.0 ^ -25, 0x0002 },                -- 1.5 subnormal ulps: tie, to even (2)
    { 5 * 2.0 ^ -25, 0x0002 },                -- 2.5 ulps: tie, to even (2)
    { 2.0 ^ -26, 0x0000 },
    { 2.0 ^ -40, 0x0000 },
    { 4.9406564584124654e-324, 0x0000 },      -- a double subnormal
    { -4.9406564584124654e-324, 0x8000 },
    { 2.0 ^ -14 - 2.0 ^ -25, 0x0400 },        -- between largest subnormal and smallest normal: to even
    { 1.0 + 2.0 ^ -11, 0x3C00 },              -- tie, to even: 1.0
    { 1.0 + 3 * 2.0 ^ -11, 0x3C02 },          -- tie, to even: up to 1 + 2^-9
    { 1.0 + 2.0 ^ -11 + 2.0 ^ -30, 0x3C01 },  -- just above the tie: up
    { 1.0 + 2.0 ^ -12, 0x3C00 },
    { 2049.0, 0x6800 },                       -- tie, to even: 2048
    { 2051.0, 0x6802 },                       -- tie, to even: 2052
    { 2.0 - 2.0 ^ -12, 0x4000 },              -- carry into the exponent
    { 0.1, 0x2E66 },
    { 1 / 3, 0x3555 },
    { math.pi, 0x4248 },
  }

  it("rounds to nearest, ties to even (host and device)", function()
    for _, c in ipairs(ROUNDED) do
      local bits = half_bits(c[1])
      assert.equal(hex(c[2]), hex(bits), "bits of " .. describe_value(c[1]))
    end
  end)

  it("reads the rounded values back", function()
    round_trip("float16", 65520.0, inf)
    round_trip("float16", 1e5, inf)
    round_trip("float16", 65519, 65504.0)
    round_trip("float16", 2.0 ^ -25, 0.0)
    round_trip("float16", -2.0 ^ -25, -0.0)
    round_trip("float16", 1.5 * 2.0 ^ -25, 2.0 ^ -24)
    round_trip("float16", 1.0 + 2.0 ^ -11, 1.0)
    round_trip("float16", 1.0 + 3 * 2.0 ^ -11, 1.0 + 2.0 ^ -9)
    round_trip("float16", 0.1, 0.0999755859375)
    round_trip("float16", 2049, 2048.0)
    round_trip("float16", maxinteger, inf)
    round_trip("float16", mininteger, -inf)
  end)

  it("keeps the sign of zero", function()
    local bits, back = half_bits(-0.0)
    assert.equal(hex(0x8000), hex(bits))
    assert.equal(-inf, 1 / back)
    assert.equal(-inf, 1 / half_from_bits(0x8000))
    assert.equal(inf, 1 / half_from_bits(0x0000))
  end)

  it("keeps nan a nan", function()
    local bits, back = half_bits(nan)
    assert.equal(0x7C00, bits & 0x7C00, "exponent all ones")
    assert.is_true(bits & 0x03FF ~= 0, "nonzero significand, got " .. hex(bits))
    assert.is_true(back ~= back)
    assert.equal("float", math.type(back))
    round_trip("float16", nan)
    -- nan from bits: quiet, signalling, negative
    for _, b in ipairs({ 0x7E00, 0x7C01, 0x7FFF, 0xFE00 }) do
      local x = half_from_bits(b)
      assert.is_true(x ~= x, hex(b) .. " is a nan")
      assert.equal("float", math.type(x))
    end
    local x = luacuda.array({ 0x7e00 }, "uint16"):view("float16")[1]
    assert.is_true(x ~= x)
  end)

  it("reads every bit pattern class from bits", function()
    assert_value(65504.0, half_from_bits(0x7BFF))
    assert_value(2.0 ^ -24, half_from_bits(0x0001))
    assert_value(-2.0 ^ -24, half_from_bits(0x8001))
    assert_value(2.0 ^ -14 - 2.0 ^ -24, half_from_bits(0x03FF))
    assert_value(2.0 ^ -14, half_from_bits(0x0400))
    assert_value(1.0, half_from_bits(0x3C00))
    assert_value(0.333251953125, half_from_bits(0x3555))
    assert_value(inf, half_from_bits(0x7C00))
    assert_value(-inf, half_from_bits(0xFC00))
    assert_value(-2.0, half_from_bits(0xC000))
  end)

  it("survives a round trip of all 65536 bit patterns (host)", function()
    local t = {}
    for b = 0, 0xFFFF do t[b + 1] = b end
    local f = luacuda.array(t, "uint16"):view("float16")
    local back = luacuda.array(f:totable(), "float16"):view("uint16"):totable()
    for b = 0, 0xFFFF do
      local e = (b >> 10) & 0x1F
      if e == 0x1F and (b & 0x3FF) ~= 0 then
        assert(back[b + 1] & 0x7C00 == 0x7C00 and back[b + 1] & 0x3FF ~= 0,
               hex(b) .. " is a nan and must stay one")
      elseif back[b + 1] ~= b then
        error(("bits %s read as %s and came back as %s"):format(hex(b),
              describe_value(f[b + 1]), hex(back[b + 1])))
      end
    end
  end)
end)

-- ---------------------------------------------------------------------------

describe("reading", function()
  for _, kind in ipairs(KIND_NAMES) do
    it("gives Lua integers, floats or booleans by dtype on " .. kind .. " arrays", function()
      for _, dt in ipairs(DTYPES) do
        local a = KINDS[kind]({ zero_of(dt), zero_of(dt) }, dt)
        local want
        if dt == "bool" then want = "boolean"
        elseif dt:match("^b?float") then want = "float"
        else want = "integer" end
        local function typeof(x) return type(x) == "number" and math.type(x) or type(x) end
        assert.equal(want, typeof(a[1]), dt .. " a[i]")
        assert.equal(want, typeof(a:totable()[2]), dt .. " totable")
        assert.equal(want, typeof(a[{ 2 }]), dt .. " a[{i}]")
        local z
        if kind == "host" then z = luacuda.array(zero_of(dt), dt)
        else z = luacuda.to_device(zero_of(dt), { dtype = dt }) end
        assert.equal(want, typeof(z:item()), dt .. " item")
      end
    end)
  end

  it("float types read integral values as floats", function()
    for _, dt in ipairs(FLOAT_DTYPES) do
      local a = luacuda.array({ 1, 2, 3 }, dt)
      for i, x in ipairs(a:totable()) do
        assert.equal("float", math.type(x))
        assert.equal(i + 0.0, x)
      end
    end
  end)
end)

-- ---------------------------------------------------------------------------

describe("dtype from a table", function()
  for _, kind in ipairs(KIND_NAMES) do
    local make = function(t) return KINDS[kind](t) end

    it("is int64 when all values are integers (" .. kind .. ")", function()
      local a = make({ 1, 2, 3 })
      assert.equal("int64", a.dtype)
      assert.same({ 3 }, a.shape)
      assert.same({ 1, 2, 3 }, a:totable())
      assert.equal("integer", math.type(a[1]))
      assert.equal("int64", make({ mininteger, maxinteger }).dtype)
      assert_value(mininteger, make({ mininteger, maxinteger })[1], "mininteger")
    end)

    it("is float64 as soon as one value is a float, even integral (" .. kind .. ")", function()
      for _, t in ipairs({ { 1, 2, 3.0 }, { 3.0, 1, 2 }, { 1, 2.5, 3 }, { 0.0 }, { 1, nan } }) do
        local a = make(t)
        assert.equal("float64", a.dtype)
        for i = 1, #t do assert_value(t[i] + 0.0, a[i], "element " .. i) end
      end
      -- integers already written are widened as floats
      local a = make({ maxinteger, 0.5 })
      assert_value(2.0 ^ 63, a[1], "maxinteger widened")
      assert_value(0.5, a[2], "0.5")
    end)

    it("widens past a batch of 64 leaves (" .. kind .. ")", function()
      local t = {}
      for i = 1, 200 do t[i] = i end
      t[150] = 150.5
      local a = make(t)
      assert.equal("float64", a.dtype)
      local back = a:totable()
      for i = 1, 200 do
        assert_value(i == 150 and 150.5 or i + 0.0, back[i], "element " .. i)
      end
    end)

    it("is bool when all values are booleans (" .. kind .. ")", function()
      local a = make({ true, false, true })
      assert.equal("bool", a.dtype)
      assert.same({ true, false, true }, a:totable())
    end)

    it("refuses booleans mixed with numbers (" .. kind .. ")", function()
      local fn = KINDS[kind]
      misuse({ "element {2}", "mixes booleans and numbers" }, fn, { 1, true })
      misuse({ "element {2}", "mixes booleans and numbers" }, fn, { true, 1 })
      misuse({ "element {3}", "mixes booleans and numbers" }, fn, { 1.5, 2, false })
      misuse({ "element {2, 1}", "mixes booleans and numbers" }, fn, { { 1, 2 }, { true, 4 } })
      misuse({ "element {2, 2}", "mixes booleans and numbers" }, fn, { { true, false }, { true, 4 } })
      local t = {}
      for i = 1, 100 do t[i] = true end
      t[70] = 0
      misuse({ "element {70}", "mixes booleans and numbers" }, fn, t)
    end)

    it("refuses strings, even numeric ones (" .. kind .. ")", function()
      local fn = KINDS[kind]
      misuse({ "element {1}", "string" }, fn, { "1" })
      misuse({ "element {2}", "string" }, fn, { 1, "2" })
      misuse({ "element {2}", "string" }, fn, { 1.5, "2" })
      misuse({ "element {2}", "string" }, fn, { true, "true" })
    end)

    it("is float64 of shape {0} for an empty table (" .. kind .. ")", function()
      local a = make({})
      assert.equal("float64", a.dtype)
      assert.same({ 0 }, a.shape)
      assert.equal(0, a.size)
      assert.same({}, a:totable())
      local b = make({ {} })
      assert.equal("float64", b.dtype)
      assert.same({ 1, 0 }, b.shape)
    end)

    it("looks at every leaf of nested tables (" .. kind .. ")", function()
      local a = make({ { 1, 2 }, { 3, 4 } })
      assert.equal("int64", a.dtype)
      assert.same({ 2, 2 }, a.shape)
      assert.same({ { 1, 2 }, { 3, 4 } }, a:totable())
      local b = make({ { 1, 2 }, { 3, 4.5 } })
      assert.equal("float64", b.dtype)
      assert_value(1.0, b:totable()[1][1], "widened {1, 1}")
      assert_value(4.5, b:totable()[2][2], "{2, 2}")
      local c = make({ { { true } }, { { false } } })
      assert.equal("bool", c.dtype)
      assert.same({ 2, 1, 1 }, c.shape)
      assert.same({ { { true } }, { { false } } }, c:totable())
    end)

    it("follows the dtype given, not the values (" .. kind .. ")", function()
      local fn = KINDS[kind]
      assert.equal("float32", fn({ 1, 2, 3 }, "float32").dtype)
      assert_value(1.0, fn({ 1, 2, 3 }, "float32")[1], "float32 from integer")
      assert.equal("int8", fn({ 1.0, 2.0 }, "int8").dtype)
      assert_value(1, fn({ 1.0, 2.0 }, "int8")[1], "int8 from integral float")
      assert.equal("uint16", fn({ { 1 }, { 2.0 } }, "u2").dtype)
      misuse({ "element {2, 1}", "int8", "2.5" }, fn, { { 1 }, { 2.5 } }, "int8")
      misuse({ "element {1, 2}", "300 is out of range for uint8" }, fn, { { 1, 300 } }, "uint8")
    end)
  end

  it("gives scalars and full their dtype by the same rule", function()
    assert.equal("int64", luacuda.array(5).dtype)
    assert.equal("float64", luacuda.array(5.0).dtype)
    assert.equal("bool", luacuda.array(true).dtype)
    assert.equal("int64", luacuda.to_device(5).dtype)
    assert.equal("float64", luacuda.to_device(5.0).dtype)
    assert.equal("bool", luacuda.to_device(false).dtype)
    assert.equal("int64", luacuda.full({ 2 }, 1).dtype)
    assert.equal("float64", luacuda.full({ 2 }, 1.0).dtype)
    assert.equal("bool", luacuda.full({ 2 }, true).dtype)
    misuse({ "luacuda.full", "string" }, luacuda.full, { 2 }, "1")
    misuse({ "luacuda.array", "string" }, luacuda.array, "1")
    misuse({ "luacuda.to_device", "string" }, luacuda.to_device, "1")
  end)
end)
