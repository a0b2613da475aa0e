-- SmartArray: data moves between host and device only when the side asked
-- for is stale; transfers() counts the moves.
local luacuda = require "luacuda"
local S = require "spec.support"

local m = luacuda.compile([[
extern "C" __global__ void add(float *a, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += v;
}
]])

local function add(sa, v, n) m.add[{1, 32}](sa, v, n) end

describe("smart_array", function()
  it("moves data to the device once for chained kernels and back only when read", function()
    local sa = luacuda.smart_array(luacuda.array({1, 2, 3}, "float32"))
    assert.equal("host", sa:valid())
    add(sa, 1, 3)
    add(sa, 1, 3)
    add(sa, 1, 3)
    assert.same({to_gpu = 1, to_host = 0}, sa:transfers())
    assert.equal("gpu", sa:valid())
    assert.same({4, 5, 6}, sa:host():totable())
    assert.same({to_gpu = 1, to_host = 1}, sa:transfers())
    assert.equal(5, sa[2])
    assert.same({4, 5, 6}, sa:totable())
    assert.same({to_gpu = 1, to_host = 1}, sa:transfers())
    assert.equal("both", sa:valid())
  end)

  it("marks the device copy stale when written through sa[i] = v", function()
    local sa = luacuda.smart_array({1, 2, 3})
    sa:gpu()
    sa[1] = 10
    assert.equal("host", sa:valid())
    assert.same({10, 2, 3}, sa:gpu():totable())
    assert.same({to_gpu = 2, to_host = 0}, sa:transfers())
  end)

  it("fetches the host copy before a write when it is stale", function()
    local sa = luacuda.smart_array(luacuda.array({1, 2, 3}, "float32"))
    add(sa, 5, 3)
    sa[3] = 0
    assert.same({6, 7, 0}, sa:gpu():totable())
    assert.same({to_gpu = 2, to_host = 1}, sa:transfers())
  end)

  it("returns the arrays it holds, not copies", function()
    local h = luacuda.array({1, 2}, "float32")
    local sa = luacuda.smart_array(h)
    assert.equal(h, sa:host())
    local g = sa:gpu()
    assert.equal(g, sa:gpu())
    assert.equal("device", g.kind)
  end)

  it("follows host_changed and gpu_changed", function()
    local sa = luacuda.smart_array(luacuda.array({1, 2}, "float32"))
    local g = sa:gpu()
    g:fill(7)
    sa:gpu_changed()
    assert.same({7, 7}, sa:host():totable())
    sa:host()[1] = 3
    sa:host_changed()
    assert.same({3, 7}, sa:gpu():totable())
    assert.same({to_gpu = 2, to_host = 1}, sa:transfers())
    sa:gpu_changed()
    S.misuse("luacuda.host_changed: the host copy is stale", sa.host_changed, sa)
    sa:host()
    sa:host_changed()
    S.misuse("luacuda.gpu_changed: the device copy is stale", sa.gpu_changed, sa)
  end)

  it("starts from a device array, a table, or a shape and dtype", function()
    local d = luacuda.to_device({{1, 2}, {3, 4}}, {dtype = "int32"})
    local sa = luacuda.smart_array(d)
    assert.equal("gpu", sa:valid())
    assert.same({2, 2}, sa.shape)
    assert.equal("int32", sa.dtype)
    assert.equal(4, sa.size)
    assert.equal(2, sa.ndim)
    assert.equal(2, #sa)
    assert.same({{1, 2}, {3, 4}}, sa:totable())
    local z = luacuda.smart_array{shape = {3}, dtype = "float32"}
    assert.same({0, 0, 0}, z:totable())
    local g = luacuda.smart_array{shape = 2, dtype = "float32", where = "gpu"}
    assert.equal("gpu", g:valid())
    add(g, 2, 2)
    assert.same({2, 2}, g:host():totable())
    local w = luacuda.smart_array({1, 2}, {where = "gpu"})
    assert.equal("both", w:valid())
    assert.same({to_gpu = 1, to_host = 0}, w:transfers())
    assert.matches("luacuda.smart_array%(int64, {2}, valid on both%)", tostring(w))
  end)

  it("can be indexed with tables like an array", function()
    local sa = luacuda.smart_array({{1, 2}, {3, 4}})
    assert.equal(4, sa[{2, 2}])
    sa[{1, {}}] = 0
    assert.same({{0, 0}, {3, 4}}, sa:gpu():totable())
  end)

  it("leaves the host copy valid when a launch fails its argument checks", function()
    local sa = luacuda.smart_array(luacuda.array({1, 2}, "float32"))
    assert.has_error(function() m.add[{1, 2}](sa, "x", 2) end)
    assert.equal("both", sa:valid())
  end)

  it("rejects what it cannot hold", function()
    S.misuse("luacuda.smart_array: expected an array, a table or {shape=, dtype=}, got number",
             luacuda.smart_array, 5)
    S.misuse("luacuda.smart_array: where must be \"host\" or \"gpu\", got cpu",
             luacuda.smart_array, {1}, {where = "cpu"})
    S.misuse("luacuda.smart_array: unknown option place", luacuda.smart_array, {1}, {place = 1})
    S.misuse("luacuda.smart_array: unknown option size", luacuda.smart_array,
             {shape = 2, size = 2})
    local sa = luacuda.smart_array({1})
    S.misuse("luacuda.setitem: cannot assign to field 'shape' of a smart array",
             function() sa.shape = 3 end)
  end)
end)
