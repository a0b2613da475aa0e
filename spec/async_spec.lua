-- Safe asynchronous data: host memory that queued work writes (the target of
-- an async copy or fill) or reads (the source of an async copy) is waited
-- for by every host access from Lua; LUACUDA_STRICT_ASYNC=1 makes such an
-- access an error instead (src/binding/pending.c).
local luacuda = require "luacuda"
local S = require "spec.support"

local N = 64

-- A kernel that takes a while, then sets out[0..n) to v: the stream it runs
-- on is busy for long after the launch returns.
local SPIN = [[
  extern "C" __global__ void spin_fill(long long spins, float *out, int n, float v) {
    volatile long long acc = 0;
    for (long long i = 0; i < spins; i++) acc = acc + 1;
    for (int i = 0; i < n; i++) out[i] = v + (acc != spins);
  }
]]
local SPINS = S.fake and 1000000 or 40000000   -- the fake interprets it

local m
local function spin_module()
  m = m or luacuda.compile(SPIN, {name = "spin_fill.cu"})
  return m
end

-- A new stream, busy setting the device array d to v.
local function busy_stream(d, v)
  local s = luacuda.stream()
  spin_module().spin_fill[{1, 1, s}](SPINS, d, d.size, v)
  return s
end

local function device_filled(v)
  local d = luacuda.device_array(N, "float32")
  d:fill(v)
  return d
end

local function all(v)
  local t = {}
  for i = 1, N do t[i] = v end
  return t
end

describe("host accesses to memory queued work uses", function()
  it("a[i] on copy_to_host(nil, s) of a busy stream gives the device's values", function()
    local d = device_filled(0)
    local s = busy_stream(d, 5)
    local h = d:copy_to_host(nil, s)   -- (CUDA copies into pageable memory before returning)
    assert.equal(5, h[1])
    assert.equal(5, h[N])
    s:synchronize()
  end)

  it("a[i] on a pinned array a busy stream copies into gives the device's values", function()
    local d = device_filled(0)
    local s = busy_stream(d, 5)
    local h = d:copy_to_host(luacuda.pinned_array(N, "float32"), s)
    assert.is_false(s:query(), "the stream should still be busy")
    assert.equal(5, h[1])
    assert.equal(5, h[N])
    s:synchronize()
  end)

  it("totable, tostring and views of the busy buffer wait as well", function()
    local d = device_filled(0)
    local s = busy_stream(d, 6)
    local h = d:copy_to_host(luacuda.pinned_array(N, "float32"), s)
    local v = h[{{N - 1, N}}]                   -- a view, made while the copy runs
    assert.same({6, 6}, v:totable())
    s:synchronize()

    s = busy_stream(d, 7)
    d:copy_to_host(h, s)
    assert.truthy(tostring(h):find("7.0", 1, true), tostring(h))
    s = busy_stream(d, 8)
    d:copy_to_host(h, s)
    assert.same(all(8), h:totable())
    s:synchronize()
  end)

  it("a[i] = v waits for the queued copy into a", function()
    local d = device_filled(0)
    local s = busy_stream(d, 3)
    local h = luacuda.pinned_array(N, "float32")
    d:copy_to_host(h, s)
    h[1] = 42                                   -- after the copy, not overwritten by it
    s:synchronize()
    assert.equal(42, h[1])
    assert.equal(3, h[2])
  end)

  for _, kind in ipairs({"host", "pinned"}) do
    it("a write to a " .. kind .. " array waits for the queued copy reading it", function()
      local h = kind == "host" and luacuda.array(all(1), "float32")
                or luacuda.pinned_array(N, "float32"):fill(1)
      local d = device_filled(0)
      local s = busy_stream(d, 0)
      d:copy_to_device(h, s)                     -- reads h after the kernel
      assert.equal(1, h[1], "a read does not disturb the copy")
      h[1] = 99
      h[{{2, 3}}] = 98                           -- through a view
      s:synchronize()
      local back = d:copy_to_host()
      assert.equal(1, back[1], "the copy read h after the script wrote it")
      assert.equal(1, back[2])
      assert.equal(99, h[1])
    end)
  end

  it("an async fill of a host array is done before the next read", function()
    local d = device_filled(0)
    local s = busy_stream(d, 1)
    local h = luacuda.pinned_array(N, "float32")
    h:fill(2, s)
    assert.equal(2, h[N])
    s:synchronize()
  end)

  it("synchronous copies from a busy host array copy the queued work's values", function()
    local d = device_filled(0)
    local s = busy_stream(d, 4)
    local h = d:copy_to_host(luacuda.pinned_array(N, "float32"), s)
    local c = h:copy()                          -- host to host, no stream
    assert.same(all(4), c:totable())
    local h2 = luacuda.pinned_array(N, "float32")
    local d2 = luacuda.to_device(d:copy_to_host(h2, busy_stream(d, 9)))
    assert.same(all(9), d2:copy_to_host():totable())
    luacuda.synchronize()
  end)

  it("waits for every stream that queued work on one array, more streams than it tracks", function()
    local h = luacuda.pinned_array(N, "float32")
    h:fill(0)
    local keep = {}
    for k = 1, 6 do                              -- each stream copies into its own slice
      local d = device_filled(0)
      local s = busy_stream(d, k)
      local lo = (k - 1) * 8 + 1
      d[{{lo, lo + 7}}]:copy_to_host(h[{{lo, lo + 7}}], s)
      keep[k] = {d, s}
    end
    for k = 1, 6 do assert.equal(k, h[(k - 1) * 8 + 1], "slice " .. k) end
    luacuda.synchronize()
  end)

  it("an array with nothing queued is read at once, and after a wait, again at once", function()
    local d = device_filled(0)
    local s = busy_stream(d, 2)
    local h = d:copy_to_host(nil, s)
    assert.equal(2, h[1])
    assert.is_true(s:query(), "the read waited for the copy, so for the stream's work")
    local h2 = luacuda.array(all(1), "float32")
    s = busy_stream(d, 3)
    assert.equal(1, h2[1])                      -- nothing queued on h2: no wait
    assert.is_false(s:query(), "a read of an idle array waited for an unrelated stream")
    s:synchronize()
  end)
end)

-- luacuda.mapped(h) is a second array (a buffer of its own) over h's
-- memory: work queued through one is waited for by accesses through the
-- other (the host program's aliases, wraps and DLPack imports, are
-- spec/unit/capi_test.c's pending_* tests).
describe("host accesses through another array over the same memory", function()
  local function host_and_mapped(v)
    local h = luacuda.array(all(v), "float32")
    return h, luacuda.mapped(h)
  end

  it("h[i], views, totable and tostring wait for a copy queued into mapped(h)", function()
    local d = device_filled(0)
    local h, m = host_and_mapped(0)
    local s = busy_stream(d, 7)
    m:copy_to_device(d, s)
    assert.equal(7, h[1])
    assert.equal(7, h[N])
    s = busy_stream(d, 8)
    m[{{1, N}}]:copy_to_device(d, s)                -- through a view of m
    assert.same({8, 8}, h[{{N - 1, N}}]:totable())   -- read through a view of h
    s = busy_stream(d, 9)
    m:copy_to_device(d, s)
    assert.same(all(9), h:totable())
    s = busy_stream(d, 6)
    m:copy_to_device(d, s)
    assert.truthy(tostring(h):find("6.0", 1, true), tostring(h))
    s:synchronize()
    m:close()
  end)

  it("h[i] waits for a fill queued on mapped(h)", function()
    local d = device_filled(0)
    local h, m = host_and_mapped(0)
    local s = busy_stream(d, 1)
    m:fill(3, s)
    assert.equal(3, h[1])
    assert.equal(3, h[N])
    s:synchronize()
    m:close()
  end)

  it("h[i] waits for array math queued with out= mapped(h)", function()
    local d = device_filled(0)
    local h, m = host_and_mapped(0)
    local s = busy_stream(d, 4)
    luacuda.add(d, 1, m, s)                          -- after the kernel set d
    assert.equal(5, h[1])
    assert.equal(5 * N, h:sum())                     -- a reduction on the host reads h
    s:synchronize()
    m:close()
  end)

  it("h[i] waits for a launch that writes mapped(h)", function()
    local h, m = host_and_mapped(0)
    local s = luacuda.stream()
    spin_module().spin_fill[{1, 1, s}](SPINS, m, N, 2)
    assert.equal(2, h[N])
    s:synchronize()
    m:close()
  end)

  it("a write to h waits for the queued copy reading mapped(h)", function()
    local h, m = host_and_mapped(1)
    local d = device_filled(0)
    local s = busy_stream(d, 0)
    d:copy_to_device(m, s)                           -- reads m after the kernel
    h[1] = 99
    h[{{2, 3}}] = 98
    h:fill(97)
    s:synchronize()
    local back = d:copy_to_host()
    assert.equal(1, back[1], "the copy read the memory after the script wrote it")
    assert.equal(1, back[N])
    m:close()
  end)

  it("mapped(h)[i] waits for a copy queued into h", function()
    local d = device_filled(0)
    local h, m = host_and_mapped(0)
    local s = busy_stream(d, 5)
    d:copy_to_host(h, s)                             -- h is page-locked while m lives
    assert.equal(5, m[1])
    assert.equal(5, m[N])
    s:synchronize()
    m:close()
  end)

  it("an import of an array's own DLPack capsule is that array's memory", function()
    -- (from_dlpack takes the array's buffer back, so it waited before too)
    local d = device_filled(0)
    local p = luacuda.pinned_array(N, "float32"):fill(0)
    local q = luacuda.from_dlpack(p:to_dlpack())
    local s = busy_stream(d, 3)
    d:copy_to_host(q, s)
    assert.equal(3, p[N])
    s = busy_stream(d, 4)
    d:copy_to_host(p, s)
    assert.equal(4, q[N])
    s:synchronize()
  end)

  it("keeps the memory until the work queued through the alias is done", function()
    -- h and m dropped while a copy into m is queued: the copy must not land
    -- in memory handed out again (ASan: no use after free)
    local d = device_filled(0)
    local s
    do
      local h, m = host_and_mapped(0)
      s = busy_stream(d, 7)
      m:copy_to_device(d, s)
      m:close()
    end
    collectgarbage()
    collectgarbage()
    local fresh = {}
    for k = 1, 8 do fresh[k] = luacuda.zeros(N, "float32") end
    s:synchronize()
    for k = 1, 8 do assert.same(all(0), fresh[k]:totable(), "array " .. k) end
  end)
end)

describe("LUACUDA_STRICT_ASYNC=1", function()
  it("makes a host access that would wait an error, and a synchronized one fine", function()
    local ok, out = S.lua_run("LUACUDA_STRICT_ASYNC=1", ([[
      local luacuda = require "luacuda"
      local m = luacuda.compile(%q, {name = "spin_fill.cu"})
      local d = luacuda.device_array(%d, "float32")
      d:fill(0)
      local s = luacuda.stream()
      m.spin_fill[{1, 1, s}](%d, d, d.size, 5)
      local h = d:copy_to_host(luacuda.pinned_array(%d, "float32"), s)
      local ok, err = pcall(function() return h[1] end)
      assert(not ok, "a read of a busy array passed")
      print("READ: " .. err)
      ok, err = pcall(function() h[1] = 1 end)
      assert(not ok, "a write to a busy array passed")
      ok, err = pcall(h.totable, h)
      assert(not ok and err:find("luacuda.totable", 1, true), err)
      s:synchronize()
      assert(h[1] == 5 and h[%d] == 5, "after the wait: " .. h[1])
      -- a queued copy that reads h: reading h is no conflict, writing it is
      m.spin_fill[{1, 1, s}](%d, d, d.size, 6)
      d:copy_to_device(h, s)
      assert(h[2] == 5, "a read of an array a queued copy only reads")
      ok, err = pcall(function() h[2] = 1 end)
      assert(not ok, "a write to an array a queued copy reads passed")
      print("WRITE: " .. err)
      s:synchronize()
      h[2] = 1
      print("DONE")
    ]]):format(SPIN, N, SPINS, N, N, SPINS))
    assert.is_true(ok, out)
    assert.truthy(out:find("luacuda.index: work queued on luacuda.stream(0x", 1, true), out)
    assert.truthy(out:find("still writes the pinned float32 array of shape {64}", 1, true), out)
    assert.truthy(out:find("LUACUDA_STRICT_ASYNC=1", 1, true), out)
    assert.truthy(out:find("WRITE: .-luacuda.setitem: work queued on luacuda.stream%(0x%x+%) " ..
                           "still reads the pinned float32 array of shape {64}"), out)
    assert.truthy(out:find("DONE", 1, true), out)
  end)

  it("counts a launch's mapped and managed arrays as written by it", function()
    local ok, out = S.lua_run("LUACUDA_STRICT_ASYNC=1", ([[
      local luacuda = require "luacuda"
      local m = luacuda.compile(%q, {name = "spin_fill.cu"})
      for _, kind in ipairs({"mapped", "managed"}) do
        local a = luacuda[kind .. "_array"](%d, "float32")
        a:fill(0)
        local s = luacuda.stream()
        m.spin_fill[{1, 1, s}](%d, a, a.size, 5)
        local ok, err = pcall(function() return a[1] end)
        assert(not ok, "a read of a busy " .. kind .. " array passed")
        print(err)
        s:synchronize()
        assert(a[1] == 5, kind .. " after the wait: " .. a[1])
        local d = luacuda.device_array(%d, "float32")
        m.spin_fill[{1, 1, s}](%d, d, d.size, 5)
        assert(a[1] == 5, "a launch on another array made " .. kind .. " busy")
      end
      print("DONE")
    ]]):format(SPIN, N, SPINS, N, SPINS))
    assert.is_true(ok, out)
    assert.truthy(out:find("still writes the mapped float32 array of shape {64}", 1, true), out)
    assert.truthy(out:find("still writes the managed float32 array of shape {64}", 1, true), out)
    assert.truthy(out:find("DONE", 1, true), out)
  end)

  it("sees work queued through another array over the same memory (luacuda.mapped)", function()
    local ok, out = S.lua_run("LUACUDA_STRICT_ASYNC=1", ([[
      local luacuda = require "luacuda"
      local k = luacuda.compile(%q, {name = "spin_fill.cu"})
      local n = %d
      local d = luacuda.device_array(n, "float32")
      local h = luacuda.zeros(n, "float32")
      local m = luacuda.mapped(h)
      local function busy(v)
        local s = luacuda.stream()
        k.spin_fill[{1, 1, s}](%d, d, n, v)
        return s
      end
      -- a copy into m: reading or writing h is an error until a wait
      local s = busy(5)
      m:copy_to_device(d, s)
      local ok, err = pcall(function() return h[1] end)
      assert(not ok, "a read of h passed while a copy into mapped(h) was queued")
      print("READ: " .. err)
      ok = pcall(function() h[1] = 1 end)
      assert(not ok, "a write to h passed")
      ok, err = pcall(h.totable, h)
      assert(not ok and err:find("luacuda.totable", 1, true), err)
      s:synchronize()
      assert(h[1] == 5 and h[n] == 5, "after the wait: " .. h[1])
      -- the other way: a copy into h, read through m
      s = busy(6)
      d:copy_to_host(h, s)
      ok, err = pcall(function() return m[1] end)
      assert(not ok, "a read of mapped(h) passed while a copy into h was queued")
      print("OTHER: " .. err)
      s:synchronize()
      assert(m[1] == 6, "after the wait: " .. m[1])
      -- a copy that reads m: reading h is no conflict, writing it is
      s = busy(7)
      d:copy_to_device(m, s)
      assert(h[2] == 6, "a read of h while a queued copy only reads mapped(h)")
      ok, err = pcall(function() h[2] = 1 end)
      assert(not ok, "a write to h passed while a queued copy reads mapped(h)")
      print("WRITE: " .. err)
      s:synchronize()
      h[2] = 1
      m:close()
      print("DONE")
    ]]):format(SPIN, N, SPINS))
    assert.is_true(ok, out)
    local alias = ", through another array over the same memory (LUACUDA_STRICT_ASYNC=1"
    assert.truthy(out:find("READ: .-luacuda.index: work queued on luacuda.stream%(0x"), out)
    assert.truthy(out:find("still writes the host float32 array of shape {64}" .. alias, 1, true), out)
    assert.truthy(out:find("OTHER: .-luacuda.index: work queued on luacuda.stream%(0x%x+%) " ..
                           "still writes the mapped float32 array of shape {64}, through another"), out)
    assert.truthy(out:find("WRITE: .-luacuda.setitem: work queued on luacuda.stream%(0x%x+%) " ..
                           "still reads the host float32 array of shape {64}, through another"), out)
    assert.truthy(out:find("DONE", 1, true), out)
  end)

  it("is 0 or 1", function()
    local ok, out = S.lua_run("LUACUDA_STRICT_ASYNC=2", [[require "luacuda"]])
    assert.is_false(ok)
    assert.truthy(out:find("LUACUDA_STRICT_ASYNC", 1, true), out)
  end)
end)
