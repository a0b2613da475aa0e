-- Aliases through another buffer object: luacuda.mapped(h) is a second
-- array (a buffer of its own) over h's memory. A copy, a reduction or a
-- scan whose output shares bytes with its input through such an alias
-- gives NumPy's result (as if every input were read before any output is
-- written), as it does for views of one buffer. The expected values are
-- NumPy's (numpy 1.24 gives them for the same expressions).
-- The aliases a host program makes (luacuda_wrap, DLPack imports of the
-- same memory, device memory included) are spec/unit/capi_test.c's
-- alias_* tests.
local luacuda = require "luacuda"

-- h = 1..n (float64) and m, the mapped array over h's memory
local function pair(n)
  local h = luacuda.arange(1, n + 1, 1, "float64")
  return h, luacuda.mapped(h)
end

describe("an alias through luacuda.mapped", function()
  it("is a strided copy's source or target: the values are NumPy's", function()
    -- h[2:10:2] = h[0:8:2] with the target through the alias
    local h, m = pair(10)
    m[{{3, 10, 2}}] = h[{{1, 8, 2}}]
    assert.same({1, 2, 1, 4, 3, 6, 5, 8, 7, 10}, h:totable())
    m:close()
    -- and with the source through it
    h, m = pair(10)
    h[{{3, 10, 2}}] = m[{{1, 8, 2}}]
    assert.same({1, 2, 1, 4, 3, 6, 5, 8, 7, 10}, h:totable())
    m:close()
    -- h[0:8:2] = h[2:10:2]: the other way
    h, m = pair(10)
    m[{{1, 8, 2}}] = h[{{3, 10, 2}}]
    assert.same({3, 2, 5, 4, 7, 6, 9, 8, 9, 10}, h:totable())
    m:close()
    -- reversed: h[::-1] = h
    h, m = pair(6)
    m[{{6, 1, -1}}] = h
    assert.same({6, 5, 4, 3, 2, 1}, h:totable())
    m:close()
  end)

  it("is a contiguous copy's source or target (no memcpy of overlapping ranges)", function()
    -- h[2:1002] = h[0:1000], h[0:1000] = h[2:1002]
    local h, m = pair(1002)
    m[{{3, 1002}}] = h[{{1, 1000}}]
    local want = {1, 2}
    for i = 1, 1000 do want[i + 2] = i end
    assert.same(want, h:totable())
    m:close()
    h, m = pair(1002)
    h[{{1, 1000}}] = m[{{3, 1002}}]
    want = {}
    for i = 1, 1000 do want[i] = i + 2 end
    want[1001], want[1002] = 1001, 1002
    assert.same(want, h:totable())
    m:close()
  end)

  it("is the target of a copy on a stream", function()
    local s = luacuda.stream()
    local h, m = pair(10)
    h[{{1, 8, 2}}]:copy_to_host(m[{{3, 10, 2}}], s)
    s:synchronize()
    assert.same({1, 2, 1, 4, 3, 6, 5, 8, 7, 10}, h:totable())
    m:close()
    h, m = pair(12)
    m[{{3, 12}}]:copy_to_device(h[{{1, 10}}], s)
    s:synchronize()
    assert.same({1, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, h:totable())
    m:close()
  end)

  it("copies nothing where it is the very same view", function()
    local h, m = pair(5)
    m:copy_to_device(h)
    m[{{2, 4}}] = h[{{2, 4}}]
    assert.same({1, 2, 3, 4, 5}, h:totable())
    m:close()
  end)

  it("is a scan's out= shifted by one element (cumsum, cumprod)", function()
    -- np.cumsum(x[0:4999], out=x[1:5000]) over ones: x[k] = k after
    local x = luacuda.ones({5000})
    local mx = luacuda.mapped(x)
    x[{{1, 4999}}]:cumsum({out = mx[{{2, 5000}}]})
    assert.equal(1, x[1])
    assert.equal(1, x[2])
    assert.equal(2, x[3])
    assert.equal(4999, x[5000])
    mx:close()
    -- and the other way: out= one element before the input
    local h, m = pair(6)
    h[{{2, 6}}]:cumprod({out = m[{{1, 5}}]})
    assert.same({2, 6, 24, 120, 720, 6}, h:totable())
    m:close()
    -- along an axis: np.cumsum(a[:, 0:3], axis=1, out=a[:, 1:4])
    local a = luacuda.arange(1, 9, 1, "float64"):reshape(2, 4)
    local ma = luacuda.mapped(a)
    a[{{}, {1, 3}}]:cumsum(2, {out = ma[{{}, {2, 4}}]})
    assert.same({{1, 1, 3, 6}, {5, 5, 11, 18}}, a:totable())
    ma:close()
  end)

  it("is a reduction's out= over input rows it reads later", function()
    -- np.sum(a, axis=1, out=a[2, ::-1]): row 3 is read after out's first
    -- element is written into it
    local a = luacuda.array({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, "float64")
    local m = luacuda.mapped(a)
    a:sum(2, {out = m[{3, {3, 1, -1}}]})
    assert.same({{1, 2, 3}, {4, 5, 6}, {24, 15, 6}}, a:totable())
    m:close()
    -- np.max(b, axis=0, out=b[:, 0])
    local b = luacuda.array({{3, 1, 2}, {4, 6, 5}, {9, 8, 7}}, "int64")
    local mb = luacuda.mapped(b)
    b:max(1, {out = mb[{{}, 1}]})
    assert.same({{9, 1, 2}, {8, 6, 5}, {7, 8, 7}}, b:totable())
    mb:close()
  end)
end)
