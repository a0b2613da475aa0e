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
