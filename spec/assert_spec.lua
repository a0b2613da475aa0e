-- The busted matchers of luacuda.assert: assert.array_equal and
-- assert.array_near (NumPy's assert_array_equal and assert_allclose), on
-- host and device arrays, nested tables and scalars; their failure
-- messages, negations and misuses.
local luacuda = require "luacuda"
local S = require "spec.support"
require "luacuda.assert"

-- The message of the assertion failure fn raises (busted raises a table
-- holding it), its position dropped.
local function failure(fn)
  local ok, err = pcall(fn)
  assert(not ok, "the assertion did not fail")
  if type(err) == "table" then err = err.message end
  return (tostring(err):gsub("^.-:%d+: ", "", 1))
end

local function fails_with(fn, message) assert.equal(message, failure(fn)) end

local kinds = {
  host = function(t, dtype) return luacuda.array(t, dtype) end,
  device = function(t, dtype) return luacuda.to_device(t, { dtype = dtype }) end,
}

for kind, make in pairs(kinds) do
  describe("assert.array_equal on a " .. kind .. " array", function()
    it("passes for the same shape and values, against a table or an array", function()
      local a = make({ { 1, 2, 3 }, { 4, 5, 6 } }, "int32")
      assert.array_equal({ { 1, 2, 3 }, { 4, 5, 6 } }, a)
      assert.array_equal(a, { { 1, 2, 3 }, { 4, 5, 6 } })
      assert.array_equal(luacuda.array({ { 1, 2, 3 }, { 4, 5, 6 } }, "float64"), a)
      assert.array_equal(make({ true, false }), { true, false })
      assert.array_equal({ 0.5, -2.25 }, make({ 0.5, -2.25 }, "float32"))
    end)

    it("compares views in their own index order", function()
      local a = make({ { 1, 2, 3 }, { 4, 5, 6 } })
      assert.array_equal({ { 1, 4 }, { 2, 5 }, { 3, 6 } }, a.T)
      assert.array_equal({ 6, 5, 4 }, a[2][{ { nil, nil, -1 } }])
    end)

    it("names the first difference, the count and the shapes", function()
      local a = make({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 12 } })
      local expected = { { 1, 2, 3, 4 }, { 5, 6, 0, 8 }, { 9, 0, 11, 0 } }
      fails_with(function() assert.array_equal(expected, a) end,
        "Expected arrays to be equal, but 3 of 12 elements differ.\n"
        .. "First difference at {2, 3}: expected 0, actual 7.\n"
        .. "Shapes: expected {3, 4}, actual {3, 4}.")
    end)

    it("fails on a shape mismatch, naming both shapes", function()
      local a = make({ { 1, 2 }, { 3, 4 }, { 5, 6 } })
      fails_with(function() assert.array_equal({ { 1, 2, 3 }, { 4, 5, 6 } }, a) end,
        "Expected arrays to be equal, but their shapes differ: expected {2, 3}, actual {3, 2}.")
      fails_with(function() assert.array_equal({ 1, 2, 3, 4, 5, 6 }, a) end,
        "Expected arrays to be equal, but their shapes differ: expected {6}, actual {3, 2}.")
    end)

    it("takes NaN as equal to NaN, and -0.0 as equal to 0.0", function()
      local nan = 0 / 0
      assert.array_equal({ nan, 1, -0.0 }, make({ nan, 1, 0.0 }))
      fails_with(function() assert.array_equal({ 1, 2 }, make({ 1, nan })) end,
        "Expected arrays to be equal, but 1 of 2 elements differ.\n"
        .. "First difference at {2}: expected 2, actual nan.\n"
        .. "Shapes: expected {2}, actual {2}.")
    end)

    it("does not take a boolean for a number", function()
      fails_with(function() assert.array_equal({ 1, 0 }, make({ true, false })) end,
        "Expected arrays to be equal, but 2 of 2 elements differ.\n"
        .. "First difference at {1}: expected 1, actual true.\n"
        .. "Shapes: expected {2}, actual {2}.")
    end)

    it("negates: assert.is_not.array_equal", function()
      local a = make({ 1, 2, 3 })
      assert.is_not.array_equal({ 1, 2, 4 }, a)
      assert.is_not.array_equal({ 1, 2 }, a)          -- another shape differs too
      fails_with(function() assert.is_not.array_equal({ 1, 2, 3 }, a) end,
        "Expected arrays to differ, but all 3 elements are equal (shape {3}).")
    end)

    it("compares 0-d and empty arrays by shape", function()
      assert.array_equal(make(7), luacuda.array(7))
      assert.array_equal(make({}), {})
      assert.array_equal(luacuda.zeros({ 2, 0 }), { {}, {} })
      fails_with(function() assert.array_equal(luacuda.zeros({ 0, 2 }), { {}, {} }) end,
        "Expected arrays to be equal, but their shapes differ: expected {0, 2}, actual {2, 0}.")
      fails_with(function() assert.array_equal({ 7 }, make(7)) end,
        "Expected arrays to be equal, but their shapes differ: expected {1}, actual {}.")
    end)

    it("broadcasts a number or boolean to the other's shape", function()
      assert.array_equal(5, make({ { 5, 5 }, { 5, 5 } }))
      assert.array_equal(make({ false, false }), false)
      fails_with(function() assert.array_equal(make({ 2, 3, 2 }), 2) end,
        "Expected arrays to be equal, but 1 of 3 elements differ.\n"
        .. "First difference at {2}: expected 3, actual 2.\n"
        .. "Shapes: expected {3}, actual {3}.")
    end)
  end)

  describe("assert.array_near on a " .. kind .. " array", function()
    it("uses NumPy's rule |actual - expected| <= atol + rtol * |expected|", function()
      local a = make({ 1, 100, -4 })
      assert.array_near({ 1, 100, -4 }, a)
      assert.array_near({ 1 + 5e-8, 100 - 5e-6, -4 }, a)   -- within the default rtol 1e-7
      assert.array_near({ 1.01, 101, -4.04 }, a, 0.01)
      assert.array_near({ 1.5, 100.5, -4.5 }, a, 0, 0.5)
      -- rtol scales the expected value, not the actual one
      assert.array_near({ 2 }, make({ 1 }), 0.5)
      fails_with(function() assert.array_near({ 1 }, make({ 2 }), 0.5) end,
        "Expected arrays to be near (rtol = 0.5, atol = 0), but 1 of 1 elements differ.\n"
        .. "First difference at {1}: expected 1, actual 2 (|actual - expected| = 1, allowed 0.5).\n"
        .. "Shapes: expected {1}, actual {1}.")
    end)

    it("names the first difference, the tolerance, the count and the shapes", function()
      local a = make({ { 1, 2.001 }, { 3, 4.5 } })
      fails_with(function() assert.array_near({ { 1, 2 }, { 3, 4 } }, a) end,
        "Expected arrays to be near (rtol = 1e-07, atol = 0), but 2 of 4 elements differ.\n"
        .. "First difference at {1, 2}: expected 2, actual 2.001 "
        .. "(|actual - expected| = 0.001, allowed 2e-07).\n"
        .. "Shapes: expected {2, 2}, actual {2, 2}.")
    end)

    it("takes NaN as equal to NaN; an infinity equals only itself", function()
      local inf, nan = math.huge, 0 / 0
      assert.array_near({ nan, inf, -inf }, make({ nan, inf, -inf }), 1, 1)
      fails_with(function() assert.array_near({ 1, inf }, make({ 1, 1e308 }), 1, 1) end,
        "Expected arrays to be near (rtol = 1, atol = 1), but 1 of 2 elements differ.\n"
        .. "First difference at {2}: expected inf, actual 1e+308.\n"
        .. "Shapes: expected {2}, actual {2}.")
      fails_with(function() assert.array_near({ 0 }, make({ nan }), 1, 1) end,
        "Expected arrays to be near (rtol = 1, atol = 1), but 1 of 1 elements differ.\n"
        .. "First difference at {1}: expected 0, actual nan.\n"
        .. "Shapes: expected {1}, actual {1}.")
    end)

    it("fails on a shape mismatch and negates", function()
      local a = make({ 1, 2 })
      fails_with(function() assert.array_near({ { 1, 2 } }, a, 1e-3) end,
        "Expected arrays to be near (rtol = 0.001, atol = 0), but their shapes differ: "
        .. "expected {1, 2}, actual {2}.")
      assert.is_not.array_near({ 1, 2.1 }, a, 1e-3)
      fails_with(function() assert.is_not.array_near({ 1, 2.001 }, a, 1e-3) end,
        "Expected arrays not to be near (rtol = 0.001, atol = 0), but all 2 elements are "
        .. "within tolerance (shape {2}).")
    end)

    it("broadcasts a scalar expected value", function()
      assert.array_near(0, make({ 1e-9, -1e-9 }), 0, 1e-8)
      assert.is_not.array_near(0, make({ 1e-9, -1e-7 }), 0, 1e-8)
    end)
  end)
end

describe("the matchers", function()
  it("read a device array after the work queued on it", function()
    local s = luacuda.stream()
    local d = luacuda.device_array({ 100, 10 }, "float32", { stream = s })
    d:fill(1.5, s)
    assert.array_equal(luacuda.full({ 100, 10 }, 1.5, "float32"), d)
    d:fill(2, s)
    assert.array_near(2, d, 0)
  end)

  it("read a SmartArray's host copy, brought up to date", function()
    local sa = luacuda.smart_array({ { 1, 2 }, { 3, 4 } }, { where = "gpu" })
    sa:gpu():fill(6)
    sa:gpu_changed()
    assert.array_equal(6, sa)
    assert.array_equal(sa, { { 6, 6 }, { 6, 6 } })
  end)

  it("compare the integer and float dtypes by value", function()
    assert.array_equal(luacuda.arange(4, "int8"), luacuda.to_device({ 0, 1, 2, 3 }, { dtype = "float64" }))
    assert.array_equal(luacuda.array({ 65535 }, "uint16"), { 65535.0 })
    assert.array_near(luacuda.array({ 0.1 }, "float32"), { 0.1 }, 1e-7)
    assert.is_not.array_near(luacuda.array({ 0.1 }, "float32"), { 0.1 }, 1e-9)
  end)

  it("put a message given last ahead of the failure", function()
    fails_with(function() assert.array_equal({ 1 }, { 2 }, "after the scan") end,
      "after the scan\nExpected arrays to be equal, but 1 of 1 elements differ.\n"
      .. "First difference at {1}: expected 1, actual 2.\n"
      .. "Shapes: expected {1}, actual {1}.")
    local m = failure(function() assert.array_near({ 1 }, { 2 }, "loose") end)
    assert.equal("loose\nExpected arrays to be near", m:sub(1, #"loose\nExpected arrays to be near"))
    m = failure(function() assert.array_near({ 1 }, { 2 }, 0.1, "tight") end)
    assert.equal("tight\n", m:sub(1, 6))
  end)

  it("compare record arrays field by field, naming the field", function()
    local Inner = luacuda.record { { "a", "int8" } }
    local R = luacuda.record { { "x", "float32" }, { "h", "int32", 2 }, { "n", Inner } }
    local p = luacuda.zeros(3, R)
    local q = luacuda.to_device(p)
    assert.array_equal(p, q)
    assert.array_near(p, q)
    local h = luacuda.zeros(3, R)
    h[3].n.a = 4
    h[2].h[2] = 5
    fails_with(function() assert.array_equal(p, luacuda.to_device(h)) end,
      "Expected arrays to be equal, but 2 of 3 elements differ.\n"
      .. "First difference at {2}, field 'h[2]': expected 0, actual 5.\n"
      .. "Shapes: expected {3}, actual {3}.")
    fails_with(function() assert.array_equal(p[3], h[3]) end,
      "Expected arrays to be equal, but 1 of 1 elements differ.\n"
      .. "First difference at {}, field 'n.a': expected 0, actual 4.\n"
      .. "Shapes: expected {}, actual {}.")
    assert.is_not.array_equal(p, h)
    local Other = luacuda.record { { "x", "float32" } }
    local m = failure(function() assert.array_equal(luacuda.zeros(3, Other), p) end)
    assert.equal("Expected arrays to be equal, but their records differ: expected ", m:sub(1, 64))
  end)
end)

describe("the matchers' misuses", function()
  it("refuse a ragged table, naming the entry", function()
    S.misuse("luacuda.array_equal: expected is a ragged table: expected[2] is a table of 1 entry, "
             .. "but expected[1] is a table of 2 entries",
             assert.array_equal, { { 1, 2 }, { 3 } }, luacuda.zeros({ 2, 2 }))
    S.misuse("luacuda.array_near: actual is a ragged table: actual[1][2] is a number, "
             .. "but actual[1][1] is a table of 1 entry",
             assert.array_near, luacuda.zeros({ 1, 2, 1 }), { { { 0 }, 0 } })
    S.misuse("luacuda.array_equal: actual is a ragged table: actual[2] is a table of 1 entry, "
             .. "but actual[1] is a number", assert.array_equal, { 1, 2 }, { 1, { 2 } })
  end)

  it("refuse what a table cannot hold as an element or a key", function()
    S.misuse("luacuda.array_equal: expected holds a string at expected[2] (numbers and booleans only)",
             assert.array_equal, { 1, "2" }, { 1, 2 })
    S.misuse("luacuda.array_equal: actual[1] has a key 'x' (only positions 1..2)",
             assert.array_equal, { { 1, 2 } }, { { 1, 2, x = 3 } })
  end)

  it("refuse what is not an array, a table or a scalar, and a closed array", function()
    S.misuse("luacuda.array_equal: actual must be an array, a nested table, a number or a boolean, got nil",
             assert.array_equal, { 1 }, nil)
    S.misuse("luacuda.array_near: expected must be an array, a nested table, a number or a boolean, "
             .. "got a userdata", assert.array_near, luacuda.stream(), { 1 })
    local c = luacuda.zeros(2)
    c:close()
    S.misuse("luacuda.array_equal: expected is a closed array", assert.array_equal, c, { 0, 0 })
  end)

  it("refuse a record array against anything but a record array", function()
    local R = luacuda.record { { "x", "float32" } }
    S.misuse("luacuda.array_equal: actual is an array of records and expected is not "
             .. "(records compare field by field)", assert.array_equal, { 0 }, luacuda.zeros(1, R))
    S.misuse("luacuda.array_near: expected is an array of records and actual is not",
             assert.array_near, luacuda.zeros(1, R), 0)
  end)

  it("refuse a missing argument, a bad tolerance and a message that is not a string", function()
    S.misuse("luacuda.array_equal: takes expected and actual, got 1 argument", assert.array_equal, { 1 })
    S.misuse("luacuda.array_equal: argument 3 is the failure message, a string, got number",
             assert.array_equal, { 1 }, { 1 }, 1e-6)
    S.misuse("luacuda.array_equal: takes at most 3 arguments, got 4", assert.array_equal, 1, 1, "m", "n")
    S.misuse("luacuda.array_near: rtol must be a number >= 0, got -1", assert.array_near, { 1 }, { 1 }, -1)
    S.misuse("luacuda.array_near: atol must be a number >= 0, got -inf",
             assert.array_near, { 1 }, { 1 }, nil, -math.huge)
    S.misuse("luacuda.array_near: atol must be a number >= 0, got table", assert.array_near, { 1 }, { 1 }, 0, {})
    local ok, err = pcall(assert.array_near, { 1 }, { 1 }, 0 / 0)     -- NaN: no snapshot equals it
    assert.is_false(ok)
    assert.truthy(err:find("luacuda.array_near: rtol must be a number >= 0, got nan", 1, true), err)
    S.misuse("luacuda.array_near: takes at most 3 arguments here, got 4",
             assert.array_near, { 1 }, { 1 }, "message", 1e-3)
  end)

  it("raise a misuse as an error under is_not too", function()
    S.misuse("luacuda.array_equal: expected is a ragged table",
             assert.is_not.array_equal, { { 1 }, 2 }, { 1, 2 })
  end)

  it("raise a misuse at the caller's line", function()
    local ok, err = pcall(function() assert.array_equal({ "x" }, { 1 }) end)
    assert.is_false(ok)
    assert.truthy(err:find("^spec/assert_spec%.lua:%d+: luacuda%.array_equal: "), err)
  end)
end)
