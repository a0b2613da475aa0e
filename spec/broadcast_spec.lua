-- NumPy's broadcasting as views: broadcast_to and broadcast_shapes.
local luacuda = require "luacuda"
local S = require "spec.support"

local function values(a) return a:copy_to_host():totable() end

describe("broadcast_shapes", function()
  it("aligns trailing axes and stretches size-1 axes", function()
    assert.same({8, 7, 6, 5}, luacuda.broadcast_shapes({8, 1, 6, 1}, {7, 1, 5}))
    assert.same({5, 4}, luacuda.broadcast_shapes({5, 4}, {1}))
    assert.same({15, 3, 5}, luacuda.broadcast_shapes({15, 3, 5}, {15, 1, 5}, {3, 1}))
    assert.same({}, luacuda.broadcast_shapes({}, {}))
    assert.same({0, 3}, luacuda.broadcast_shapes({0, 1}, {1, 3}))
    assert.same({2, 3}, luacuda.broadcast_shapes(luacuda.zeros({3}), {2, 1}))
  end)
  it("names the shapes and the axis that clash", function()
    S.misuse({"luacuda.broadcast_shapes:", "{2, 3} and {4}", "axis 2"},
             luacuda.broadcast_shapes, {2, 3}, {4})
    S.misuse({"luacuda.broadcast_shapes:", "{0}", "{2}"}, luacuda.broadcast_shapes, {0}, {2})
    S.misuse("luacuda.broadcast_shapes:", luacuda.broadcast_shapes, {2}, "x")
  end)
end)

for _, kind in ipairs({"host", "device", "managed"}) do
  local function make(t, dtype)
    if kind == "host" then return luacuda.array(t, dtype) end
    local a = luacuda.to_device(t, {dtype = dtype})
    if kind == "device" then return a end
    local m = luacuda.managed_array(a.shape, a.dtype)
    m:copy_to_device(a)
    return m
  end

  describe("broadcast_to of a " .. kind .. " array", function()
    it("adds leading axes and stretches size-1 axes with stride 0", function()
      local a = make({1, 2, 3}, "float32")
      local b = a:broadcast_to({2, 3})
      assert.same({2, 3}, b.shape)
      assert.same({0, 4}, b.strides)
      assert.same(kind, b.kind)
      assert.same({{1, 2, 3}, {1, 2, 3}}, values(b))
      local c = luacuda.broadcast_to(make({{1}, {2}}, "int32"), {2, 2, 3})
      assert.same({2, 2, 3}, c.shape)
      assert.same({{{1, 1, 1}, {2, 2, 2}}, {{1, 1, 1}, {2, 2, 2}}}, values(c))
    end)
    it("broadcasts strided and transposed views", function()
      local a = make({{1, 2, 3}, {4, 5, 6}}, "float64")
      local col = a:transpose()[{{}, 2}]               -- {4, 5, 6}: stride 8
      assert.same({{4, 5, 6}, {4, 5, 6}}, values(col:broadcast_to({2, 3})))
      local rev = a[{1, {3, 1, -1}}]                   -- {3, 2, 1}
      assert.same({{3, 2, 1}}, values(rev:broadcast_to({1, 3})))
    end)
  end)
end

describe("broadcast_to", function()
  it("refuses shapes it cannot reach, leaving the array as it was", function()
    for _, a in ipairs({luacuda.array({1, 2, 3}, "float32"), luacuda.to_device({1, 2, 3})}) do
      S.misuse({"luacuda.broadcast_to:", "{3} does not broadcast to {4}"}, a.broadcast_to, a, {4})
      S.misuse({"luacuda.broadcast_to:", "cannot broadcast 1 dimensions to 0"},
               a.broadcast_to, a, {})
      S.misuse({"luacuda.broadcast_to:", "{3} does not broadcast to {3, 2}"},
               luacuda.broadcast_to, a, {3, 2})
    end
    S.misuse("luacuda.broadcast_to:", luacuda.broadcast_to, {1, 2}, {2})
  end)
  it("takes at most 64 shapes in broadcast_shapes", function()
    local many = {}
    for i = 1, 65 do many[i] = {1} end
    assert.same({1}, luacuda.broadcast_shapes(table.unpack(many, 1, 64)))
    S.misuse({"luacuda.broadcast_shapes:", "at most 64 shapes, got 65"},
             luacuda.broadcast_shapes, table.unpack(many))
  end)
end)

-- Every shape is checked as zeros checks it: the itemsize times the
-- product of the axes (a zero-length axis counted as 1, as for the other
-- axes' strides) must be at most 2^63 - 1. A broadcast view that passed
-- had a size that wrapped (issue 29), and sum, cumsum, fill and save
-- then read or wrote by the wrapped count.
describe("shapes whose size overflows", function()
  local OVER = {{3, 6148914691236517206}, {1 << 32, 1 << 32}, {0, 1 << 62, 4}, {1 << 61, 4}}

  it("are refused by broadcast_to, as zeros refuses them", function()
    for _, a in ipairs({luacuda.zeros({1}), luacuda.to_device(luacuda.zeros({1, 1}))}) do
      for _, shape in ipairs(OVER) do
        S.misuse({"luacuda.zeros:", "array size overflows"}, luacuda.zeros, shape)
        S.misuse({"luacuda.broadcast_to:", "array size overflows"}, a.broadcast_to, a, shape)
      end
    end
    -- the itemsize counts: 2^62 int8 elements fit, as many int16 ones do not
    local b = luacuda.zeros({1}, "int8"):broadcast_to({1 << 31, 1 << 31})
    assert.equal(1 << 62, b.size)
    assert.equal(1 << 62, b.nbytes)
    local h = luacuda.zeros({1}, "int16")
    S.misuse({"luacuda.broadcast_to:", "array size overflows"},
             h.broadcast_to, h, {1 << 31, 1 << 31})
  end)

  it("are refused by view with a wider dtype, of an empty view", function()
    -- {2^62, 0} int8 elements are no bytes, but zeros would not make that
    -- shape of float64
    local e = luacuda.zeros({1, 1}, "int8"):broadcast_to({1 << 62, 1})[{{}, {1, 0}}]
    assert.same({1 << 62, 0}, e.shape)
    S.misuse({"luacuda.view:", "array size overflows"}, function() return e:view("float64") end)
    assert.same({1 << 62, 0}, e:view("uint8").shape)
    assert.same({1 << 59, 0}, e[{{1, 1 << 59}}]:view("float64").shape)
  end)

  it("are refused by broadcast_shapes, counting elements (NumPy: too large)", function()
    S.misuse({"luacuda.broadcast_shapes:", "array size overflows"},
             luacuda.broadcast_shapes, {3, 1}, {1, 6148914691236517206})
    S.misuse({"luacuda.broadcast_shapes:", "array size overflows"},
             luacuda.broadcast_shapes, {1 << 32, 1}, {1 << 32})
    assert.same({1 << 32, (1 << 31) - 1}, luacuda.broadcast_shapes({1 << 32, 1}, {(1 << 31) - 1}))
  end)

  it("are refused by array math broadcasting its operands, and by matmul's batch axes",
     function()
    -- views too long to snapshot: each call is made in a closure
    local col = luacuda.zeros({1}, "int8"):broadcast_to({1 << 32, 1})
    local row = luacuda.zeros({1}, "int8"):broadcast_to({1, 1 << 32})
    S.misuse({"luacuda.add:", "array size overflows"}, function() return luacuda.add(col, row) end)
    S.misuse({"luacuda.lt:", "array size overflows"}, function() return col:lt(row) end)
    local m = luacuda.zeros({1, 2, 2})
    local a, b = m:broadcast_to({1 << 32, 2, 2}), m:reshape(1, 1, 2, 2):broadcast_to({1 << 32, 1, 2, 2})
    S.misuse({"luacuda.matmul:", "array size overflows"}, function() return luacuda.matmul(a, b) end)
  end)
end)
