-- DLPack from Lua: a:to_dlpack() gives a capsule that from_dlpack consumes
-- once, into an array sharing the memory (the C side is spec/unit/capi_test.c).
local luacuda = require "luacuda"
local S = require "spec.support"

local function round_trip(a)
  return luacuda.from_dlpack(a:to_dlpack())
end

describe("DLPack", function()
  it("waits in to_dlpack for the work queued before (the consumer may read at once)", function()
    local m = luacuda.compile([[
      extern "C" __global__ void spin(long long n, float *out, float v) {
        volatile long long acc = 0;          // a kernel that takes a while
        for (long long i = 0; i < n; i++) acc = acc + 1;
        out[0] = v + (acc != n);
      }
    ]])
    local s = luacuda.stream()
    local a = luacuda.device_array(1, "float32")
    m.spin[{1, 1, s}](S.fake and 1000000 or 40000000, a, 5)   -- the fake interprets it
    assert.is_false(s:query())             -- still running
    local cap = a:to_dlpack()
    assert.is_true(s:query())
    assert.equal(5, luacuda.from_dlpack(cap)[1])
  end)

  it("round-trips a host array, sharing its memory", function()
    local a = luacuda.array({{1, 2, 3}, {4, 5, 6}}, "float64")
    local b = round_trip(a)
    assert.same(a.shape, b.shape)
    assert.same(a.strides, b.strides)
    assert.equal("float64", b.dtype)
    assert.equal("host", b.kind)
    assert.same({{1, 2, 3}, {4, 5, 6}}, b:totable())
    b[{2, 3}] = 60
    assert.equal(60, a[{2, 3}])
  end)

  it("keeps the layout of views: transposed, stepped, reversed", function()
    local a = luacuda.array({{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}}, "int32")
    for _, v in ipairs({a.T, a[{{1, 3, 2}, {2, 4, 2}}], a[{{3, 1, -1}, {4, 1, -3}}], a[{2}]}) do
      local b = round_trip(v)
      assert.same(v.shape, b.shape)
      assert.same(v.strides, b.strides)
      assert.same(v:totable(), b:totable())
    end
    local r = round_trip(a[{{3, 1, -1}}])
    r[{1, 1}] = 90
    assert.equal(90, a[{3, 1}])
  end)

  it("maps every builtin dtype both ways", function()
    local dtypes = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                    "uint32", "uint64", "float16", "bfloat16", "float32", "float64"}
    for _, dt in ipairs(dtypes) do
      local a = dt == "bool" and luacuda.array({true, false, true}, dt)
                or luacuda.array({1, 0, 3}, dt)
      local b = round_trip(a)
      assert.equal(dt, b.dtype)
      assert.same(a:totable(), b:totable())
    end
  end)

  it("keeps each memory kind, and the data on the device", function()
    local d = luacuda.to_device({{1, 2}, {3, 4}}, nil, {dtype = "float32"})
    local b = round_trip(d)
    assert.equal("device", b.kind)
    assert.same({{1, 2}, {3, 4}}, b:copy_to_host():totable())
    for _, make in ipairs({luacuda.pinned_array, luacuda.mapped_array, luacuda.managed_array}) do
      local a = make({3}, "int16")
      a[{}] = 7
      local c = round_trip(a)
      assert.equal(a.kind, c.kind)
      assert.same({7, 7, 7}, c:totable())
    end
  end)

  it("a capsule outlives its array, and its memory with it", function()
    local a = luacuda.array({1, 2, 3}, "int64")
    local cap = a:to_dlpack()
    a:close()
    a = nil
    collectgarbage()
    assert.same({1, 2, 3}, luacuda.from_dlpack(cap):totable())
  end)

  it("a capsule is consumed once", function()
    local cap = luacuda.zeros(4, "int32"):to_dlpack()
    assert.truthy(tostring(cap):find("luacuda.dlpack(", 1, true))
    luacuda.from_dlpack(cap)
    assert.equal("luacuda.dlpack(consumed)", tostring(cap))
    S.misuse("luacuda.from_dlpack: the capsule was consumed already", luacuda.from_dlpack, cap)
  end)

  it("refuses what DLPack cannot describe, leaving the array as it was", function()
    local rec = luacuda.record({{"x", "float32"}, {"c", "int8"}}, {align = false})
    local r = luacuda.zeros(4, rec)
    S.misuse("luacuda.to_dlpack: dtype", luacuda.attr(r, "to_dlpack"), r)
    -- a field of a packed record: 5-byte strides over 4-byte floats
    local x = r.x
    S.misuse("luacuda.to_dlpack: stride 5 of axis 1 is not a multiple of the itemsize 4",
             x.to_dlpack, x)
    local c = luacuda.zeros(2)
    c:close()
    S.misuse("luacuda.to_dlpack: attempt to use a closed array", c.to_dlpack, c)
  end)

  it("from_dlpack takes only capsules", function()
    S.misuse("luacuda.from_dlpack: expected a DLPack capsule (from to_dlpack), got luacuda.array",
             luacuda.from_dlpack, luacuda.zeros(2))
    S.misuse("luacuda.from_dlpack: expected a DLPack capsule (from to_dlpack), got no value",
             luacuda.from_dlpack)
  end)
end)
