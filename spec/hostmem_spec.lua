-- Page-locked host memory: the pinned, mapped and managed constructors, and
-- the scopes that page-lock host arrays in place (pinned, register /
-- deregister, mapped), on the active backend.
local luacuda = require "luacuda"
local core = require "luacuda.core"
local S = require "spec.support"

-- what the backend holds for an array's page-locked memory
local host_flags = core._host_flags

local SOURCE = [[
extern "C" __global__ void scale(float *x, int n, float k) {
  int i = grid1();
  if (i < n) x[i] *= k;
}
extern "C" __global__ void iota2(Array<int, 2> a) {
  int i = threadIdx.x, j = threadIdx.y;
  if (i < a.shape[0] && j < a.shape[1]) a(i, j) = 10 * i + j;
}
]]
local m_ = nil
local function kernels()
  m_ = m_ or luacuda.compile(SOURCE)
  return m_
end

local function collect()
  collectgarbage()
  collectgarbage()
end

describe("pinned_array", function()
  it("is a host array in page-locked memory", function()
    local p = luacuda.pinned_array({2, 3}, "float32")
    assert.equal("pinned", p.kind)
    assert.is_true(p.pinned)
    assert.same({2, 3}, p.shape)
    assert.same({12, 4}, p.strides)
    assert.equal("float32", p.dtype)
    assert.is_true(p:is_c_contiguous())
    assert.is_false(host_flags(p).mapped)
  end)

  it("takes order and strides, and defaults to float64", function()
    assert.same({8, 16}, luacuda.pinned_array({2, 3}, "float64", {order = "F"}).strides)
    assert.same({8, 16}, luacuda.pinned_array({2, 3}, nil, "F").strides)
    assert.equal("float64", luacuda.pinned_array(4).dtype)
    local s = luacuda.pinned_array({2, 2}, "int32", {strides = {16, 4}})
    assert.same({16, 4}, s.strides)
    assert.is_false(s:is_c_contiguous())
    assert.same({}, luacuda.pinned_array({}, "int8").shape)
  end)

  it("reads, writes, copies and converts like any host array", function()
    local p = luacuda.pinned_array({2, 3}, "int32")
    p:fill(0)
    p[{2, 3}] = 7
    p[1] = {1, 2, 3}
    assert.same({{1, 2, 3}, {0, 0, 7}}, p:totable())
    local d = luacuda.to_device(p)
    assert.equal("device", d.kind)
    assert.same({{1, 2, 3}, {0, 0, 7}}, d:copy_to_host():totable())
    local back = luacuda.pinned_array({2, 3}, "int32")
    luacuda.to_device({{6, 5, 4}, {3, 2, 1}}, {dtype = "int32"}):copy_to_host(back)
    assert.same({{6, 5, 4}, {3, 2, 1}}, back:totable())
    assert.equal("pinned", back:copy().kind)
    assert.equal("host", back:copy_to_host().kind)
    assert.same({6, 3}, back[{{}, 1}]:totable())
    assert.truthy(tostring(back):find("kind=pinned", 1, true))
  end)

  it("cannot be passed to a kernel, as no host array can", function()
    local p = luacuda.pinned_array(4, "float32")
    p:fill(1)
    S.misuse({"luacuda.launch: ", "a pinned array cannot be passed to a kernel"},
             function(x) kernels().scale[{1, 32}](x, 4, 2.0) end, p)
  end)
end)

describe("mapped_array", function()
  it("is page-locked host memory mapped into the device", function()
    local m = luacuda.mapped_array({3, 2}, "float32")
    assert.equal("mapped", m.kind)
    assert.is_true(m.pinned)
    assert.same({3, 2}, m.shape)
    assert.same({8, 4}, m.strides)
    assert.same({portable = false, wc = false, mapped = true}, host_flags(m))
    assert.same({4, 12}, luacuda.mapped_array({3, 2}, "float32", {order = "F"}).strides)
    assert.same({16, 4}, luacuda.mapped_array({3, 2}, "float32", {strides = {16, 4}}).strides)
  end)

  it("passes portable and wc to the backend", function()
    assert.same({portable = true, wc = false, mapped = true},
                host_flags(luacuda.mapped_array(4, "int8", {portable = true})))
    assert.same({portable = false, wc = true, mapped = true},
                host_flags(luacuda.mapped_array(4, "int8", {wc = true, portable = false})))
    assert.same({portable = true, wc = true, mapped = true},
                host_flags(luacuda.mapped_array(4, "int8", {wc = true, portable = true})))
  end)

  it("reads, writes and copies from Lua, to and from device arrays", function()
    local m = luacuda.mapped_array({2, 2}, "int64")
    m:copy_to_device({{1, 2}, {3, 4}})
    assert.equal(4, m[{2, 2}])
    local d = luacuda.to_device(m)
    assert.same({{1, 2}, {3, 4}}, d:copy_to_host():totable())
    luacuda.to_device({{5, 6}, {7, 8}}):copy_to_host(m)
    assert.same({{5, 6}, {7, 8}}, m:totable())
    assert.equal("mapped", m:copy().kind)
  end)

  it("is written by a kernel and read from Lua with no copy", function()
    local m = luacuda.mapped_array(100, "float32")
    for i = 1, 100 do m[i] = i end
    kernels().scale[{1, 128}](m, 100, 3.0)
    luacuda.synchronize()
    assert.equal(3, m[1])
    assert.equal(300, m[100])
    local g = luacuda.mapped_array({3, 4}, "int32", {order = "F"})
    kernels().iota2[{1, {3, 4}}](g)
    luacuda.synchronize()
    assert.same({{0, 1, 2, 3}, {10, 11, 12, 13}, {20, 21, 22, 23}}, g:totable())
  end)
end)

describe("managed_array", function()
  it("is one allocation seen from the host and the kernels", function()
    local g = luacuda.managed_array({2, 4}, "float32")
    assert.equal("managed", g.kind)
    assert.is_false(g.pinned)
    assert.same({16, 4}, g.strides)
    assert.same({4, 8}, luacuda.managed_array({2, 4}, "float32", {order = "F"}).strides)
    g:fill(2)
    kernels().scale[{1, 32}](g:ravel(), 8, 0.5)
    luacuda.synchronize()
    assert.same({{1, 1, 1, 1}, {1, 1, 1, 1}}, g:totable())
    assert.same({{1, 1, 1, 1}, {1, 1, 1, 1}}, luacuda.to_device(g):copy_to_host():totable())
  end)
end)

describe("pinned and register scopes", function()
  it("page-lock a host array until the scope closes, its kind staying host", function()
    local a = luacuda.zeros(4, "float32")
    assert.is_false(a.pinned)
    do
      local _ <close> = luacuda.pinned(a)
      assert.is_true(a.pinned)
      assert.equal("host", a.kind)
      assert.is_true(a[{{2, 3}}].pinned)          -- a view of the same memory
      assert.is_false(host_flags(a).mapped)
    end
    assert.is_false(a.pinned)
  end)

  it("take several arrays", function()
    local a, b = luacuda.zeros(2), luacuda.zeros({2, 2}, "int8")
    do
      local r <close> = luacuda.register(a, b)
      assert.is_true(a.pinned and b.pinned)
      assert.equal("luacuda.registration (2 arrays)", tostring(r))
    end
    assert.is_false(a.pinned or b.pinned)
  end)

  it("pin the same array twice in a row", function()
    local a = luacuda.zeros(8)
    for _ = 1, 2 do
      local _ <close> = luacuda.pinned(a)
      assert.is_true(a.pinned)
    end
    assert.is_false(a.pinned)
  end)

  it("unpin when left by an error, so the array can be pinned again at once", function()
    local a = luacuda.zeros(8)
    local ok, err = pcall(function()
      local _ <close> = luacuda.pinned(a)
      error("boom")
    end)
    assert.is_false(ok)
    assert.truthy(err:find("boom", 1, true))
    assert.is_false(a.pinned)
    local _ <close> = luacuda.pinned(a)
    assert.is_true(a.pinned)
  end)

  it("register and deregister as a pair of calls", function()
    local a = luacuda.zeros(8)
    luacuda.register(a)           -- the result dropped: the registration stays
    collect()
    assert.is_true(a.pinned)
    luacuda.deregister(a)
    assert.is_false(a.pinned)
    luacuda.register(a[{{1, 4}}])
    luacuda.deregister(a[{{5, 8}}])  -- the registration is of the whole memory
    assert.is_false(a.pinned)
  end)

  it("register as a scope, deregistered early: the close does nothing more", function()
    local a = luacuda.zeros(8)
    local r1 = luacuda.register(a)
    luacuda.deregister(a)
    local r2 <close> = luacuda.register(a)   -- a new registration
    r1:close()                               -- not r1's: left alone
    assert.is_true(a.pinned)
    r2:close()
    assert.is_false(a.pinned)
    r2:close()
    assert.equal("luacuda.registration (closed)", tostring(r2))
  end)

  it("keep the memory until the scope closes, even when the array is closed", function()
    local a = luacuda.zeros(8)
    local view = a[{{1, 2}}]
    do
      local _ <close> = luacuda.pinned(a)
      a:close()
      assert.is_true(view.pinned)
    end
    assert.is_false(view.pinned)
  end)

  it("leave no registration behind when an array goes registered", function()
    do
      local a = luacuda.zeros(1000)
      luacuda.register(a)
    end
    collect()     -- ASan and the backend's record would see a leak
    local b = luacuda.zeros(1000)
    local _ <close> = luacuda.register(b)
    assert.is_true(b.pinned)
  end)

  it("refuse a second registration of the same memory, changing nothing", function()
    local a, b = luacuda.zeros(4), luacuda.zeros(4)
    local _ <close> = luacuda.register(a)
    S.misuse({"luacuda.register: ", "argument 1 is registered already"}, luacuda.register, a)
    S.misuse({"luacuda.pinned: ", "argument 2 is registered already"}, luacuda.pinned, b,
             a[{{2, 3}}])
    assert.is_false(b.pinned)                  -- the first argument was undone
    S.misuse({"luacuda.register: ", "arguments 1 and 2 share memory"}, luacuda.register, b, b.T)
    assert.is_false(b.pinned)
  end)

  it("refuse to deregister memory that is not registered", function()
    local a, b = luacuda.zeros(4), luacuda.zeros(4)
    S.misuse({"luacuda.deregister: ", "argument 1 is not registered"}, luacuda.deregister, a)
    luacuda.register(a)
    S.misuse({"luacuda.deregister: ", "argument 2 is not registered"}, luacuda.deregister, a, b)
    assert.is_true(a.pinned)                   -- nothing half-done
    luacuda.deregister(a)
  end)

  it("take host arrays only", function()
    -- filled: the failed-call check compares their contents
    for _, x in ipairs({luacuda.device_array(2):fill(0), luacuda.pinned_array(2):fill(0),
                        luacuda.mapped_array(2):fill(0), luacuda.managed_array(2):fill(0)}) do
      S.misuse({"luacuda.register: ", "argument 1 is a " .. x.kind .. " array"},
               luacuda.register, x)
    end
  end)

  it("a registered host array still cannot be passed to a kernel", function()
    local a = luacuda.zeros(4, "float32")
    local _ <close> = luacuda.pinned(a)
    S.misuse({"luacuda.launch: ", "a host array cannot be passed to a kernel"},
             function(x) kernels().scale[{1, 32}](x, 4, 2.0) end, a)
  end)
end)

describe("mapped scope", function()
  it("gives a mapped array over the host array's memory", function()
    local a = luacuda.array({1, 2, 3, 4}, "float32")
    do
      local m <close> = luacuda.mapped(a)
      assert.equal("mapped", m.kind)
      assert.is_true(m.pinned and a.pinned)
      assert.same(a.shape, m.shape)
      assert.same({portable = false, wc = false, mapped = true}, host_flags(a))
      m[1] = 10            -- each sees the other's writes
      a[2] = 20
      assert.equal(10, a[1])
      assert.equal(20, m[2])
      kernels().scale[{1, 32}](m, 4, 2.0)
      luacuda.synchronize()
      assert.same({20, 40, 6, 8}, a:totable())
    end
    assert.is_false(a.pinned)
  end)

  it("keeps a view's layout", function()
    local a = luacuda.array({{1, 2, 3}, {4, 5, 6}}, "int32")
    local m <close> = luacuda.mapped(a[{{}, 2}])
    assert.same({{2, 5}}, {m:totable()})
    assert.same({12}, m.strides)
  end)

  it("maps several arrays at once, one mapped array each", function()
    local a, b = luacuda.zeros(2), luacuda.zeros(3)
    local ma, mb = luacuda.mapped(a, b)
    assert.same({2}, ma.shape)
    assert.same({3}, mb.shape)
    ma:close()
    assert.is_false(a.pinned)
    assert.is_true(b.pinned)
    mb:close()
    assert.is_false(b.pinned)
  end)

  it("unregisters at once when the mapped array closes, so the array maps again", function()
    local a = luacuda.zeros(16)
    for _ = 1, 2 do
      local m <close> = luacuda.mapped(a)
      assert.is_true(a.pinned)
    end
    assert.is_false(a.pinned)
    local ok = pcall(function()
      local m <close> = luacuda.mapped(a)
      error("boom")
    end)
    assert.is_false(ok)
    assert.is_false(a.pinned)
    local _ <close> = luacuda.register(a)
  end)

  it("stays registered while a view of the mapped array lives", function()
    local a = luacuda.zeros(16)
    local m = luacuda.mapped(a)
    local v = m[{{1, 4}}]
    m:close()
    assert.is_true(a.pinned)
    assert.equal("mapped", v.kind)
    v:close()
    assert.is_false(a.pinned)
  end)

  it("keeps the memory alive after the host array is collected", function()
    local m
    do
      local a = luacuda.array({1, 2, 3}, "float32")
      m = luacuda.mapped(a)
    end
    collect()
    m[3] = 9
    kernels().scale[{1, 32}](m, 3, 2.0)
    luacuda.synchronize()
    assert.same({2, 4, 18}, m:totable())
    m:close()
  end)

  it("refuses memory registered already, and deregister refuses mapped memory", function()
    local a = luacuda.zeros(4)
    local m <close> = luacuda.mapped(a)
    S.misuse({"luacuda.mapped: ", "argument 1 is registered already (a mapped array is over it)"},
             luacuda.mapped, a)
    S.misuse({"luacuda.register: ", "registered already"}, luacuda.register, a[{{1, 2}}])
    S.misuse({"luacuda.deregister: ", "a mapped array is over it"}, luacuda.deregister, a)
    assert.is_true(a.pinned)
  end)

  it("undoes the first mappings when a later argument fails", function()
    local a, b = luacuda.zeros(4), luacuda.zeros(4)
    local _ <close> = luacuda.register(b)
    S.misuse({"luacuda.mapped: ", "argument 2 is registered already"}, luacuda.mapped, a, b)
    assert.is_false(a.pinned)
    S.misuse({"luacuda.mapped: ", "argument 1 is a device array"}, luacuda.mapped,
             luacuda.device_array(2):fill(0))
  end)
end)
