-- Iteration: pairs(a) (the __pairs metamethod) and a:ipairs() walk the first
-- axis, giving (i, a[i]): elements of a 1-D array, row views above; a 0-d
-- array cannot be iterated (NumPy's rule), an empty one gives nothing.
local luacuda = require "luacuda"
local S = require "spec.support"

-- the (i, value) pairs a loop of the iterator triple gives, in order
local function walk(f, s, c)
  local keys, vals = {}, {}
  for i, v in f, s, c do
    keys[#keys + 1] = i
    vals[#vals + 1] = v
  end
  return keys, vals
end

local walkers = {
  ["pairs(a)"] = function(a) return pairs(a) end,
  ["a:ipairs()"] = function(a) return a:ipairs() end,
}

local kinds = {
  host = function(t, dtype) return luacuda.array(t, dtype) end,
  device = function(t, dtype) return luacuda.to_device(t, { dtype = dtype }) end,
  managed = function(t, dtype)
    local src = luacuda.array(t, dtype)
    local m = luacuda.managed_array(src.shape, src.dtype)
    m[{}] = src
    return m
  end,
}

for wname, iterate in pairs(walkers) do
  for kind, make in pairs(kinds) do
    describe(wname .. " on a " .. kind .. " array", function()
      it("gives the index and the element of a 1-D array, in order", function()
        local a = make({ 10, 20, 30, 40 }, "int32")
        local keys, vals = walk(iterate(a))
        assert.same({ 1, 2, 3, 4 }, keys)
        assert.same({ 10, 20, 30, 40 }, vals)
      end)

      it("gives floats and booleans as Lua values", function()
        local _, f = walk(iterate(make({ 0.5, -1.25 }, "float32")))
        assert.same({ 0.5, -1.25 }, f)
        local _, b = walk(iterate(make({ true, false, true })))
        assert.same({ true, false, true }, b)
      end)

      it("gives row views of an N-d array, which write through to it", function()
        local m = make({ { 1, 2, 3 }, { 4, 5, 6 } })
        local keys, rows = walk(iterate(m))
        assert.same({ 1, 2 }, keys)
        for i, r in ipairs(rows) do
          assert.equal("array", luacuda.type(r))
          assert.equal(kind, r.kind)
          assert.same({ 3 }, r.shape)
          assert.same(S.host_values(m[i]), S.host_values(r))
          r[2] = -i
        end
        assert.same({ { 1, -1, 3 }, { 4, -2, 6 } }, S.host_values(m))
      end)

      it("walks only the first axis of a 3-d array", function()
        local t = luacuda.arange(24):reshape(2, 3, 4)
        local _, rows = walk(iterate(make(t:totable())))
        assert.equal(2, #rows)
        assert.same({ 3, 4 }, rows[2].shape)
        assert.same(t[2]:totable(), S.host_values(rows[2]))
      end)

      it("walks a view along its own first axis", function()
        local m = make({ { 1, 2, 3 }, { 4, 5, 6 } })
        local _, col = walk(iterate(m.T[2]))
        assert.same({ 2, 5 }, col)
        local _, back = walk(iterate(m[{ {}, 3 }][{ { nil, nil, -1 } }]))
        assert.same({ 6, 3 }, back)
      end)

      it("gives nothing for an empty array", function()
        local keys = walk(iterate(make({}, "float64")))
        assert.same({}, keys)
        local empty_rows = luacuda.zeros({ 0, 3 })
        assert.same({}, (walk(iterate(kind == "host" and empty_rows or luacuda.to_device(empty_rows)))))
      end)
    end)
  end
end

describe("iteration", function()
  it("refuses a 0-d array, as NumPy does", function()
    local rec = luacuda.zeros(2, luacuda.record { { "x", "int8" } })[1]     -- a 0-d record view
    for _, z in ipairs({ luacuda.array(5), luacuda.to_device(5), luacuda.arange(1):reshape({}), rec }) do
      S.misuse("luacuda.pairs: a 0-d array cannot be iterated (read its value with a:item() or a[{}])",
               pairs, z)
      S.misuse("luacuda.ipairs: a 0-d array cannot be iterated", z.ipairs, z)
    end
  end)

  it("reads a device array after the work queued on it", function()
    local s = luacuda.stream()
    local d = luacuda.device_array(1000, "int32", { stream = s })
    d:fill(7, s)
    local n, sum = 0, 0
    for i, v in pairs(d) do
      n = i
      sum = sum + v
    end
    assert.equal(1000, n)
    assert.equal(7000, sum)
  end)

  it("walks a 1-D record array as 0-d views of its elements", function()
    local Vec = luacuda.record { { "x", "float32" }, { "y", "int16" } }
    local p = luacuda.zeros(3, Vec)
    for i, e in pairs(p) do
      assert.same({}, luacuda.attr(e, "shape"))
      e.x = i / 2
      e.y = -i
    end
    local d = luacuda.to_device(p)
    local seen = {}
    for i, e in d:ipairs() do seen[i] = e:item() end
    assert.same({ { x = 0.5, y = -1 }, { x = 1, y = -2 }, { x = 1.5, y = -3 } }, seen)
  end)

  it("walks a 2-d record array by rows; pairs works where a field hides ipairs", function()
    local R = luacuda.record { { "ipairs", "int32" } }
    local a = luacuda.zeros({ 2, 2 }, R)
    a.ipairs = 9
    local count = 0
    for i, row in pairs(a) do
      assert.same({ 2 }, luacuda.attr(row, "shape"))
      assert.same({ 9, 9 }, row.ipairs:totable())
      count = i
    end
    assert.equal(2, count)
    local _, rows = walk(luacuda.attr(a, "ipairs")(a))   -- the method, past the field
    assert.equal(2, #rows)
  end)

  it("ends with nil past the end when the iterator is called by hand", function()
    local a = luacuda.array({ 5, 6 })
    local f, s, c = a:ipairs()
    assert.equal(a, s)
    assert.equal(0, c)
    assert.same({ 2, 6 }, { f(s, 1) })
    assert.is_nil(f(s, 2))
    assert.is_nil(f(s, 100))
  end)

  it("refuses what is not an array", function()
    local a = luacuda.array({ 1, 2 })
    S.misuse("luacuda.ipairs: expected an array, got number", a.ipairs, 5)
    S.misuse("luacuda.ipairs: expected an array, got table", a.ipairs, { 1, 2 })
    local f = a:ipairs()
    S.misuse("luacuda.ipairs: expected an array, got nil", f, nil, 0)
  end)

  it("refuses a control value that is not an integer", function()
    local a = luacuda.array({ 1, 2 })
    local f = pairs(a)
    S.misuse("luacuda.pairs: the loop's control value must be an integer, got string", f, a, "1")
    S.misuse("luacuda.pairs: the loop's control value must be an integer, got 0.5", f, a, 0.5)
  end)

  it("refuses a closed array, also when it is closed during the loop", function()
    local a = luacuda.array({ 1, 2, 3 })
    local b = luacuda.array({ 1, 2, 3 })
    b:close()
    S.misuse("luacuda.pairs: attempt to use a closed array", pairs, b)
    local seen = 0
    local ok, err = pcall(function()
      for _, v in a:ipairs() do
        seen = seen + v
        a:close()
      end
    end)
    assert.is_false(ok)
    assert.truthy(err:find("luacuda.ipairs: attempt to use a closed array", 1, true), err)
    assert.equal(1, seen)
  end)

  it("suggests a:ipairs() when getitem reads past the end", function()
    local a = luacuda.to_device({ 1, 2, 3 })
    S.misuse("luacuda.getitem: index 4 out of bounds for axis 1 of size 3; to walk an array use "
             .. "a:ipairs(), pairs(a) or for i = 1, #a", a.getitem, a, 4)
  end)
end)
