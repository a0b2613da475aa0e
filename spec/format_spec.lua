-- tostring(array): kind, dtype, shape and the values, elided past 1000.
local luacuda = require "luacuda"

describe("tostring", function()
  it("shows kind, dtype, shape and aligned values as a Lua table", function()
    assert.equal("luacuda.array(kind=host, dtype=int64, shape={2, 3})\n" ..
                 "{{ 1,  2,  3},\n {40, 50, 60}}",
                 tostring(luacuda.array({{1, 2, 3}, {40, 50, 60}})))
  end)

  it("prints device arrays and strided views", function()
    local d = luacuda.to_device({1.5, 2, 3.25})
    assert.equal("luacuda.array(kind=device, dtype=float64, shape={3})\n{3.25,  2.0,  1.5}",
                 tostring(d[{{-1, 1, -1}}]))
  end)

  it("writes floats as the shortest decimal that reads back in their dtype", function()
    local s = tostring(luacuda.array({0.1, 10, 1e20, 1/0, 0/0}, "float32"))
    assert.truthy(s:find("{  0.1,  10.0, 1e+20,   inf,   nan}", 1, true), s)
    assert.truthy(tostring(luacuda.array({0.1}, "float16")):find("{0.1}", 1, true))
    assert.truthy(tostring(luacuda.array({0.1 + 0.2})):find("{0.30000000000000004}", 1, true))
  end)

  it("prints 0-d, empty, boolean and 3-D arrays", function()
    assert.equal("luacuda.array(kind=host, dtype=int64, shape={})\n7", tostring(luacuda.array(7)))
    assert.equal("luacuda.array(kind=device, dtype=float64, shape={0})\n{}",
                 tostring(luacuda.to_device({})))
    assert.equal("luacuda.array(kind=host, dtype=bool, shape={2})\n{ true, false}",
                 tostring(luacuda.array({true, false})))
    assert.equal("luacuda.array(kind=host, dtype=int64, shape={2, 1, 2})\n" ..
                 "{{{1, 2}},\n\n {{3, 4}}}",
                 tostring(luacuda.array({{{1, 2}}, {{3, 4}}})))
  end)

  it("elides the middle of long axes past 1000 elements", function()
    local s = tostring(luacuda.arange(2000):reshape(40, 50))
    assert.truthy(s:find("{{   0,    1,    2, ...,   47,   48,   49},", 1, true), s)
    assert.truthy(s:find("\n ...,\n", 1, true), s)
    assert.truthy(s:find("{1950, 1951, 1952, ..., 1997, 1998, 1999}}", 1, true), s)
    assert.is_true(#s < 1000)
    local full = tostring(luacuda.arange(1000))
    assert.is_nil(full:find("...", 1, true))
  end)

  it("never raises, also for closed arrays", function()
    local a = luacuda.zeros(3)
    a:close()
    assert.equal("luacuda.array (closed)", tostring(a))
  end)
end)
