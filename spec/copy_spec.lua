-- Copies between host and device, any layouts on either side, never
-- writing between a view's elements, exact dtypes, shapes matched after
-- dropping size-1 axes.
local luacuda = require "luacuda"

local function grid(r, c, base)
  local t = {}
  for i = 1, r do
    t[i] = {}
    for j = 1, c do t[i][j] = (base or 0) + 10 * i + j end
  end
  return t
end

describe("copy_to_host", function()
  it("returns a new C-contiguous host array", function()
    local d = luacuda.to_device(grid(3, 4))
    local h = d.T:copy_to_host()
    assert.equal("host", h.kind)
    assert.same({4, 3}, h.shape)
    assert.is_true(h:is_c_contiguous())
    assert.same(luacuda.array(grid(3, 4)).T:totable(), h:totable())
  end)

  it("fills a given host array, any layout, and returns it", function()
    local d = luacuda.to_device(grid(2, 3))
    local h = luacuda.zeros({3, 2}, "int64").T          -- an F-ordered target
    local r = d:copy_to_host(h)
    assert.equal(h, r)
    assert.same(grid(2, 3), h:totable())
  end)

  it("writes only the elements of a strided host view", function()
    local d = luacuda.to_device({1, 2, 3})
    local base = luacuda.full(7, -1)
    d:copy_to_host(base[{{1, 5, 2}}])
    assert.same({1, -1, 2, -1, 3, -1, -1}, base:totable())
    d:copy_to_host(base[{{7, 3, -2}}])
    assert.same({1, -1, 3, -1, 2, -1, 1}, base:totable())
  end)

  it("copies from strided device views", function()
    local d = luacuda.to_device(grid(4, 5))
    local v = d[{{4, 1, -2}, {2, 5, 3}}]      -- rows 4, 2; columns 2, 5
    assert.same({{42, 45}, {22, 25}}, v:copy_to_host():totable())
  end)

  it("accepts shapes that differ only by size-1 axes", function()
    local d = luacuda.to_device({{1, 2, 3}})
    local h = luacuda.zeros({3, 1}, "int64")
    d:copy_to_host(h)
    assert.same({{1}, {2}, {3}}, h:totable())
  end)
end)

describe("copy_to_device", function()
  it("copies host arrays, device arrays and tables into a device array", function()
    local d = luacuda.device_array({2, 2}, "int64")
    d:copy_to_device(luacuda.array({{1, 2}, {3, 4}}))
    assert.same({{1, 2}, {3, 4}}, d:copy_to_host():totable())
    d:copy_to_device({{5, 6}, {7, 8}})
    assert.same({{5, 6}, {7, 8}}, d:copy_to_host():totable())
    d:copy_to_device(luacuda.to_device({{9, 10}, {11, 12}}))
    assert.same({{9, 10}, {11, 12}}, d:copy_to_host():totable())
    assert.equal(d, d:copy_to_device({{0, 0}, {0, 0}}))
  end)

  it("converts tables to the target dtype", function()
    local d = luacuda.device_array(3, "float32")
    d:copy_to_device({1, 2, 3})
    assert.same({1.0, 2.0, 3.0}, d:copy_to_host():totable())
    assert.equal("float", math.type(d[1]))
  end)

  it("writes only the elements of a strided device view", function()
    local base = luacuda.to_device({0, 0, 0, 0, 0, 0})
    base[{{2, 6, 2}}]:copy_to_device(luacuda.array({7, 8, 9}))
    assert.same({0, 7, 0, 8, 0, 9}, base:copy_to_host():totable())
    local m = luacuda.to_device(grid(3, 3))
    m.T[{{1, 3, 2}}]:copy_to_device({{-1, -2, -3}, {-4, -5, -6}})
    assert.same({{-1, 12, -4}, {-2, 22, -5}, {-3, 32, -6}}, m:copy_to_host():totable())
  end)

  it("copies from a strided host view into an F-ordered device array", function()
    local h = luacuda.array(grid(4, 6))[{{1, 4, 3}, {6, 1, -2}}]   -- 2x3
    local d = luacuda.device_array({2, 3}, "int64", {order = "F"})
    d:copy_to_device(h)
    assert.same({{16, 14, 12}, {46, 44, 42}}, d:copy_to_host():totable())
  end)
end)

describe("copies between every pair of layouts", function()
  -- 3x4 source and target layouts: C, F, transposed, stepped, reversed
  local layouts = {
    C = function(mk) return mk({3, 4}) end,
    F = function(mk) return mk({3, 4}, "F") end,
    T = function(mk) return mk({4, 3}).T end,
    stepped = function(mk) return mk({6, 8})[{{1, 6, 2}, {2, 8, 2}}] end,
    reversed = function(mk) return mk({3, 4})[{{-1, 1, -1}, {-1, 1, -1}}] end,
  }
  local sides = {
    host = function(shape, order) return luacuda.zeros(shape, "int32", order) end,
    device = function(shape, order)
      local d = luacuda.device_array(shape, "int32", order and {order = order} or nil)
      d:fill(0)
      return d
    end,
  }
  local want = grid(3, 4)
  for sname, smk in pairs(sides) do
    for dname, dmk in pairs(sides) do
      for sl, slay in pairs(layouts) do
        for dl, dlay in pairs(layouts) do
          it(("%s %s -> %s %s"):format(sname, sl, dname, dl), function()
            local src = slay(smk)
            src[{}] = want
            local dst = dlay(dmk)
            if dname == "host" then src:copy_to_host(dst) else dst:copy_to_device(src) end
            assert.same(want, dst:copy_to_host():totable())
          end)
        end
      end
    end
  end
end)

describe("copy", function()
  it("is a C-contiguous copy in the same kind of memory", function()
    for _, a in ipairs({luacuda.array(grid(2, 3)), luacuda.to_device(grid(2, 3))}) do
      local v = a.T
      local c = v:copy()
      assert.equal(a.kind, c.kind)
      assert.is_true(c:is_c_contiguous())
      assert.same(v:copy_to_host():totable(), c:copy_to_host():totable())
      c[{1, 1}] = 0
      assert.equal(11, a[{1, 1}])
    end
  end)

  it("copies 0-d and 0-size arrays", function()
    assert.equal(5, luacuda.to_device(5):copy():item())
    assert.same({0, 2}, luacuda.device_array({0, 2}):copy().shape)
  end)
end)

describe("fill", function()
  it("sets every element of a view and nothing else", function()
    local d = luacuda.to_device({1, 2, 3, 4, 5})
    d[{{1, 5, 2}}]:fill(0)
    assert.same({0, 2, 0, 4, 0}, d:copy_to_host():totable())
    local h = luacuda.zeros({2, 3}, "float16")
    assert.equal(h, h:fill(1.5))
    assert.same({{1.5, 1.5, 1.5}, {1.5, 1.5, 1.5}}, h:totable())
    local b = luacuda.device_array(4, "bool")
    b:fill(true)
    assert.same({true, true, true, true}, b:copy_to_host():totable())
  end)
end)

describe("totable", function()
  it("gives nested tables for N-d, a value for 0-d", function()
    local t3 = {{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}}
    assert.same(t3, luacuda.to_device(t3):totable())
    assert.equal(3, luacuda.array(3):totable())
    assert.same({{}, {}}, luacuda.zeros({2, 0}):totable())
  end)
end)
