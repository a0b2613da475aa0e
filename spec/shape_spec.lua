-- reshape, ravel, transpose, squeeze, view, split and the contiguity tests:
-- views where the layout allows, copies otherwise (NumPy's rules).
local luacuda = require "luacuda"

local function values(a) return a:copy_to_host():totable() end

-- Does b share a's memory? (a write through b shows in a)
local function shares(a, b, probe_b, probe_a)
  local old = b[probe_b]
  b[probe_b] = 123
  local seen = a[probe_a]
  b[probe_b] = old
  return seen == 123
end

for _, kind in ipairs({"host", "device"}) do
  local function make(t, dtype)
    if kind == "host" then return luacuda.array(t, dtype) end
    return luacuda.to_device(t, {dtype = dtype})
  end

  describe("reshape of a " .. kind .. " array", function()
    it("gives a view of a contiguous array, with one -1 inferred", function()
      local a = make({1, 2, 3, 4, 5, 6})
      local b = a:reshape(2, 3)
      assert.same({{1, 2, 3}, {4, 5, 6}}, values(b))
      assert.same({24, 8}, b.strides)
      assert.is_true(shares(a, b, {2, 1}, 4))
      assert.same({3, 2}, a:reshape({-1, 2}).shape)
      assert.same({1, 6, 1}, a:reshape(1, -1, 1).shape)
      assert.same({6}, a:reshape(2, 3):reshape(-1).shape)
    end)

    it("reads and writes in F order on request", function()
      local a = make({1, 2, 3, 4, 5, 6})
      local f = a:reshape({2, 3}, {order = "F"})
      assert.same({{1, 3, 5}, {2, 4, 6}}, values(f))
      assert.is_true(f:is_f_contiguous())
      assert.is_true(shares(a, f, {2, 1}, 2))
      assert.same({{1, 3, 5}, {2, 4, 6}}, values(a:reshape(2, 3, {order = "F"})))
    end)

    it("copies when no view can express the new shape", function()
      local m = make({{1, 2, 3}, {4, 5, 6}})
      local t = m.T:reshape(6)                  -- {1, 4, 2, 5, 3, 6}
      assert.same({1, 4, 2, 5, 3, 6}, values(t))
      assert.is_false(shares(m, t, 1, {1, 1}))
      assert.equal(kind, t.kind)
      local s = make({1, 2, 3, 4, 5, 6, 7, 8})[{{1, 8, 2}}]:reshape(2, 2)
      assert.same({{1, 3}, {5, 7}}, values(s))
    end)

    it("keeps a view through a non-contiguous but compatible layout", function()
      local m = make({{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}})
      local rows = m[{{1, 3, 2}}]                -- rows 1 and 3, contiguous rows
      local r = rows:reshape(2, 2, 2)
      assert.same({{{1, 2}, {3, 4}}, {{9, 10}, {11, 12}}}, values(r))
      assert.is_true(shares(m, r, {2, 1, 1}, {3, 1}))
    end)

    it("turns size-1 arrays to and from 0-d", function()
      local z = make({7}):reshape({})
      assert.equal(0, z.ndim)
      assert.equal(7, z:item())
      assert.same({1, 1}, z:reshape(1, 1).shape)
    end)

    it("reshapes 0-size arrays", function()
      local e = make({}):reshape(0, 3)
      assert.same({0, 3}, e.shape)
      assert.same({3, 0}, e:reshape(3, 0).shape)
      assert.has_error(function() e:reshape(-1, 0) end,
                       "luacuda.reshape: cannot reshape size 0 into {-1, 0}")
    end)
  end)

  describe("ravel of a " .. kind .. " array", function()
    it("is a view of a contiguous array and a copy otherwise", function()
      local m = make({{1, 2}, {3, 4}})
      local r = m:ravel()
      assert.same({1, 2, 3, 4}, values(r))
      assert.is_true(shares(m, r, 3, {2, 1}))
      local t = m.T:ravel()
      assert.same({1, 3, 2, 4}, values(t))
      assert.is_false(shares(m, t, 1, {1, 1}))
      local tf = m.T:ravel("F")                 -- F order of the transpose is a view
      assert.same({1, 2, 3, 4}, values(tf))
      assert.is_true(shares(m, tf, 2, {1, 2}))
      assert.same({1, 3, 2, 4}, values(m:ravel("F")))
    end)
  end)

  describe("transpose of a " .. kind .. " array", function()
    it("is a view with permuted axes", function()
      local a = make({{{1, 2}, {3, 4}, {5, 6}}})          -- 1x3x2
      assert.same({2, 3, 1}, a.T.shape)
      assert.same({2, 3, 1}, a:transpose().shape)
      local p = a:transpose({2, 3, 1})
      assert.same({3, 2, 1}, p.shape)
      assert.same(a:transpose(2, 3, 1).strides, p.strides)
      assert.equal(6, p[{3, 2, 1}])
      assert.is_true(shares(a, p, {1, 2, 1}, {1, 1, 2}))
      assert.same({{1, 3, 5}, {2, 4, 6}}, values(a[1].T))
    end)
  end)

  describe("squeeze of a " .. kind .. " array", function()
    it("drops all size-1 axes or a chosen one", function()
      local a = make({{{1}, {2}, {3}}})                    -- 1x3x1
      assert.same({3}, a:squeeze().shape)
      assert.same({3, 1}, a:squeeze(1).shape)
      assert.same({1, 3}, a:squeeze(3).shape)
      assert.same({1, 2, 3}, values(a:squeeze()))
      assert.same({}, make({{5}}):squeeze().shape)
    end)
  end)

  describe("view of a " .. kind .. " array", function()
    it("reinterprets the bytes with another dtype", function()
      local a = make({1.0, -2.0}, "float32")
      local u = a:view("uint32")
      assert.same({0x3f800000, 0xc0000000}, values(u))
      local b = a:view("uint8")
      assert.same({8}, b.shape)
      assert.equal(0x3f, b[4])
      local w = make({{1, 2, 3, 4}}, "int16"):view("int64")
      assert.same({1, 1}, w.shape)
      assert.equal(1 + (2 << 16) + (3 << 32) + (4 << 48), w[{1, 1}])
      assert.same({{1, 2, 3, 4}}, values(w:view("i2")))
    end)
  end)

  describe("split of a " .. kind .. " array", function()
    it("gives ceil(n/section) views along the first axis", function()
      local a = make({1, 2, 3, 4, 5, 6, 7})
      local parts = a:split(3)
      assert.equal(3, #parts)
      assert.same({1, 2, 3}, values(parts[1]))
      assert.same({4, 5, 6}, values(parts[2]))
      assert.same({7}, values(parts[3]))
      parts[3][1] = 70
      assert.equal(70, a[7])
      assert.equal(1, #a:split(7))
      assert.equal(7, #a:split(1))
      assert.equal(1, #a:split(100))
      local m = make({{1, 2}, {3, 4}, {5, 6}})
      local rows = m:split(2)
      assert.same({{1, 2}, {3, 4}}, values(rows[1]))
      assert.same({{5, 6}}, values(rows[2]))
      assert.same({}, make({}):split(4))
    end)
  end)
end

describe("contiguity", function()
  it("follows NumPy's relaxed rules", function()
    local c = luacuda.zeros({3, 4})
    assert.is_true(c:is_c_contiguous())
    assert.is_false(c:is_f_contiguous())
    assert.is_true(c.T:is_f_contiguous())
    assert.is_false(c.T:is_c_contiguous())
    local col = c[{{}, {2}}]                 -- 3x1, stride 32 on the size-1 axis is ignored
    assert.is_false(col:is_c_contiguous())
    local row = c[{{2}}]                     -- 1x4: both
    assert.is_true(row:is_c_contiguous())
    assert.is_true(row:is_f_contiguous())
    local zero_d = luacuda.array(1)
    assert.is_true(zero_d:is_c_contiguous() and zero_d:is_f_contiguous())
    local empty = luacuda.zeros({0, 3})
    assert.is_true(empty:is_c_contiguous() and empty:is_f_contiguous())
    local stepped = luacuda.zeros(6)[{{1, 6, 2}}]
    assert.is_false(stepped:is_c_contiguous() or stepped:is_f_contiguous())
    local reversed = luacuda.zeros(6)[{{6, 1, -1}}]
    assert.is_false(reversed:is_c_contiguous())
    assert.is_true(luacuda.zeros(6)[{{2, 2}}]:is_c_contiguous())
  end)
end)
