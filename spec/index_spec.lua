-- Indexing (1-based, inclusive ranges, negative from the end), views that
-- share memory, views of views, and assignment, on host and device arrays.
local luacuda = require "luacuda"
local S = require "spec.support"

local kinds = {
  host = function(t, dtype) return luacuda.array(t, dtype) end,
  device = function(t, dtype) return luacuda.to_device(t, {dtype = dtype}) end,
}

local values = S.host_values

for kind, make in pairs(kinds) do
  describe("indexing a " .. kind .. " array", function()
    local m   -- 3x4: m[i][j] = 10*i + j
    before_each(function()
      m = make({{11, 12, 13, 14}, {21, 22, 23, 24}, {31, 32, 33, 34}})
    end)

    it("reads elements of a 1-D array with a[i], negative from the end", function()
      local v = make({5, 6, 7})
      assert.equal(5, v[1])
      assert.equal(7, v[3])
      assert.equal(7, v[-1])
      assert.equal(5, v[-3])
      assert.equal(6, v[2.0])
    end)

    it("reads elements of an N-d array with a[{i, j}]", function()
      assert.equal(23, m[{2, 3}])
      assert.equal(34, m[{-1, -1}])
      assert.equal(11, m[{-3, -4}])
      assert.equal(12, m[1][2])
    end)

    it("gives row views with a[i] and a[{i}]", function()
      local r = m[2]
      assert.same({4}, r.shape)
      assert.equal(kind, r.kind)
      assert.same({21, 22, 23, 24}, values(r))
      assert.same({31, 32, 33, 34}, values(m[{-1}]))
    end)

    it("slices with inclusive ranges and whole axes", function()
      assert.same({{12, 13}, {22, 23}}, values(m[{{1, 2}, {2, 3}}]))
      assert.same({13, 23, 33}, values(m[{{}, 3}]))
      assert.same({{14}, {24}, {34}}, values(m[{{}, {4}}]))
      assert.same({{31, 32, 33, 34}}, values(m[{{-1}}]))
    end)

    it("slices with steps, negative ones included", function()
      assert.same({{11, 13}, {31, 33}}, values(m[{{1, 3, 2}, {1, 4, 2}}]))
      assert.same({{34, 33, 32, 31}, {24, 23, 22, 21}, {14, 13, 12, 11}},
                  values(m[{{-1, 1, -1}, {-1, 1, -1}}]))
      assert.same({{14, 12}}, values(m[{{1}, {4, 1, -2}}]))
      local rev = m[{{nil, nil, -1}}]
      assert.same({31, 32, 33, 34}, values(rev[1]))
      assert.same({-32, 8}, rev.strides)
    end)

    it("gives empty views for ranges that end before they start", function()
      local e = m[{{3, 2}}]
      assert.same({0, 4}, e.shape)
      assert.equal(0, e.size)
      assert.same({}, values(e))
      assert.same({3, 0}, m[{{}, {1, 0}}].shape)
      assert.same({3, 0}, m[{{}, {5, 4}}].shape)      -- just past the end
      assert.same({0, 4}, m[{{1, 2, -1}}].shape)
    end)

    it("makes views of views that keep sharing memory", function()
      local v = m[{{2, 3}, {2, 4}}]            -- {{22,23,24},{32,33,34}}
      local w = v[{{}, {-1, 1, -2}}]           -- {{24,22},{34,32}}
      assert.same({{24, 22}, {34, 32}}, values(w))
      w[{2, 2}] = 99
      assert.equal(99, m[{3, 2}])
      local x = w.T[2]                          -- {22, 99}
      assert.same({22, 99}, values(x))
      x[1] = -1
      assert.equal(-1, m[{2, 2}])
    end)

    it("keeps the base alive while a view exists", function()
      local v = make({{1, 2}, {3, 4}})[2]
      collectgarbage()
      collectgarbage()
      assert.same({3, 4}, values(v))
    end)

    it("reads and writes 0-d arrays with a[{}]", function()
      local z = kind == "host" and luacuda.array(3) or luacuda.to_device(3)
      assert.equal(3, z[{}])
      z[{}] = 4
      assert.equal(4, z[{}])
      local e = m[{2, 3}]
      assert.equal("number", type(e))
    end)

    it("assigns scalars to elements", function()
      m[{1, 1}] = 100
      m[2][4] = -5
      assert.equal(100, m[{1, 1}])
      assert.equal(-5, m[{2, 4}])
      local v = make({1.5, 2.5})
      v[2] = 7
      assert.equal(7.0, v[2])
      v[-1] = 8.25
      assert.equal(8.25, v[2])
    end)

    it("assigns a size-1 array of the same dtype to an element", function()
      m[{2, 2}] = make({{-7}})
      assert.equal(-7, m[{2, 2}])
      local v = make({1, 2, 3})
      v[3] = luacuda.array(9)
      assert.equal(9, v[3])
    end)

    it("broadcasts a scalar into a view, touching nothing else", function()
      m[{{}, {2, 4, 2}}] = 0
      assert.same({{11, 0, 13, 0}, {21, 0, 23, 0}, {31, 0, 33, 0}}, values(m))
      m[2] = 7
      assert.same({7, 7, 7, 7}, values(m[2]))
      assert.same({11, 0, 13, 0}, values(m[1]))
    end)

    it("copies an array or a table of the same shape into a view", function()
      m[{{1, 2}, {1, 2}}] = {{1, 2}, {3, 4}}
      assert.same({{1, 2, 13, 14}, {3, 4, 23, 24}, {31, 32, 33, 34}}, values(m))
      m[3] = make({9, 8, 7, 6})
      assert.same({9, 8, 7, 6}, values(m[3]))
      m[{{}, 1}] = luacuda.array({{-1}, {-2}, {-3}})   -- size-1 axes are dropped
      assert.same({-1, -2, -3}, values(m[{{}, 1}]))
      m[{{}, 4}] = m[{{}, 3}]
      assert.same({13, 23, 7}, values(m[{{}, 4}]))
    end)

    it("handles assignment between overlapping views of one array", function()
      local v = make({1, 2, 3, 4, 5})
      v[{{2, 5}}] = v[{{1, 4}}]
      assert.same({1, 1, 2, 3, 4}, values(v))
      local w = make({1, 2, 3, 4, 5})
      w[{{1, 4}}] = w[{{2, 5}}]
      assert.same({2, 3, 4, 5, 5}, values(w))
      local r = make({1, 2, 3, 4})
      r[{}] = r[{{-1, 1, -1}}]
      assert.same({4, 3, 2, 1}, values(r))
    end)

    it("getitem and setitem are the method forms", function()
      assert.equal(23, m:getitem({2, 3}))
      assert.same({21, 22, 23, 24}, values(m:getitem(2)))
      m:setitem({2, 3}, 0)
      assert.equal(0, m[{2, 3}])
      m:setitem({{}, 1}, {5, 6, 7})
      assert.same({5, 6, 7}, values(m[{{}, 1}]))
    end)
  end)
end

describe("item", function()
  it("returns the one element of a size-1 array of any ndim", function()
    assert.equal(4, luacuda.array({{4}}):item())
    assert.equal(2.5, luacuda.to_device({{{2.5}}}):item())
    assert.equal(9, luacuda.to_device(9):item())
  end)
end)

describe("the element fast path", function()
  it("handles strided and negative-stride 1-D views", function()
    local a = luacuda.arange(10)
    local odd = a[{{2, 10, 2}}]
    assert.equal(1, odd[1])
    assert.equal(9, odd[5])
    local rev = a[{{10, 1, -1}}]
    assert.equal(9, rev[1])
    rev[1] = 42
    assert.equal(42, a[10])
  end)
end)
