-- Gather and scatter: take, put, a[idx] and a[mask] (read and assigned),
-- add_at (scatter_add), nonzero and where(cond), count_nonzero, bincount.
-- Random inputs (seeded) are written as .npy files, NumPy (Debian's
-- /usr/bin/python3) computes its results from them once, and each case
-- compares luacuda's, on host arrays and on device arrays (the simulator,
-- or the CUDA backend's kernels on the fake driver), strided views among
-- the inputs. Then the errors, each leaving everything as it was.
local luacuda = require "luacuda"
local S = require "spec.support"

local PYTHON = "env -u LD_PRELOAD -u ASAN_OPTIONS /usr/bin/python3"
local HAVE_NUMPY = S.sh(PYTHON .. " -c 'import numpy'")
local NO_NUMPY = "/usr/bin/python3 cannot import numpy (apt-get install python3-numpy)"

-- NumPy's side: luacuda's 1-based indices (negative from the end) made
-- 0-based, each result saved as <name>.out.npy
local SCRIPT = [==[
import sys, numpy as np
d = sys.argv[1]
L = lambda n: np.load(f"{d}/{n}.npy")
def S(n, x): np.save(f"{d}/{n}.out.npy", np.ascontiguousarray(x))
z = lambda i: np.where(i > 0, i - 1, i)
a, m, lead = L("a"), L("mask"), L("lead")
S("take_flat", np.take(a, z(L("iflat"))))
S("take_ax1", np.take(a, z(L("iax1")), axis=0))
S("take_ax2", np.take(a, z(L("iax2")), axis=1))
S("getitem", a[z(L("irow").astype(np.int64))])
S("mask", a[m])
S("mask_lead", a[lead])
for k, t in enumerate(np.nonzero(m)): S(f"nonzero{k + 1}", t + 1)
p = a.copy(); np.put(p, z(L("iput")), L("vput")); S("put", p)
s = a.copy(); s[z(L("iset"))] = L("vset"); S("setitem", s)
s = a.copy(); s[m] = -2.5; S("setmask", s)
f = L("acc64"); np.add.at(f, z(L("iadd")), L("vadd")); S("add64", f)
g = L("acc32"); np.add.at(g, (slice(None), z(L("iadd2"))), 3); S("add32", g)
h = L("acc8"); np.add.at(h, z(L("iadd8")), 100); S("add8", h)
x, w = L("bins"), L("weights")
S("bincount", np.bincount(x)[1:])
S("bincount_w", np.bincount(x, weights=w, minlength=41)[1:])
S("count_ax2", np.count_nonzero(m, axis=1))
]==]

local rng = 30
local function rand(n)            -- a small LCG: the same inputs in every run
  rng = (rng * 1103515245 + 12345) % 2147483648
  return rng % n
end

-- an index in 1..n or -n..-1
local function index(n)
  local k = rand(2 * n)
  return k < n and k + 1 or n - k - 1
end

local function ints(count, n, dtype)
  local t = {}
  for i = 1, count do t[i] = index(n) end
  return luacuda.array(t, dtype or "int64")
end

local DIR = S.tmpdir()
local function path(name) return DIR .. "/" .. name .. ".npy" end

-- the inputs, host arrays; `a` is a strided view (every other row,
-- columns reversed) of base
local base = luacuda.empty({ 6, 8 }, "float32")
for i = 1, 6 do for j = 1, 8 do base[{ i, j }] = rand(64) * 0.25 - 8 end end
local IN = {}
IN.a = base[{ { 1, 6, 2 }, { 8, 1, -1 } }]              -- {3, 8}
IN.mask = luacuda.empty({ 3, 8 }, "bool")
for i = 1, 3 do for j = 1, 8 do IN.mask[{ i, j }] = rand(3) == 0 end end
IN.lead = luacuda.array({ true, false, true })
IN.iflat = ints(10, 24):reshape(2, 5)
IN.iax1 = ints(5, 3)
IN.iax2 = ints(7, 8)
IN.irow = ints(4, 3, "int32")
IN.iput = luacuda.array({ 5, -1, 13, 2 })
IN.vput = luacuda.array({ 1.5, 2.5, 3.5, 4.5 }, "float32")
IN.iset = luacuda.array({ 3, -3 })                     -- rows 3 and 1
IN.vset = luacuda.array({ 9, 8, 7, 6, 5, 4, 3, 2 }, "float32")
IN.acc64 = luacuda.zeros({ 5 })
IN.iadd = ints(40, 5)
IN.vadd = luacuda.empty({ 40 })
for i = 1, 40 do IN.vadd[i] = rand(16) * 0.25 end
IN.acc32 = luacuda.zeros({ 2, 6 }, "int32")
IN.iadd2 = ints(30, 6)
IN.acc8 = luacuda.zeros({ 7 }, "int8")
IN.iadd8 = ints(25, 7)                                 -- int8 sums wrap
IN.bins = luacuda.empty({ 50 }, "int64")
for i = 1, 50 do IN.bins[i] = 1 + rand(30) end
IN.weights = luacuda.empty({ 50 })
for i = 1, 50 do IN.weights[i] = rand(8) * 0.5 end

local WANT
local function want(name)
  if WANT == nil then
    for n, a in pairs(IN) do luacuda.save(path(n), a) end
    local f = assert(io.open(DIR .. "/compute.py", "w"))
    f:write(SCRIPT)
    f:close()
    local ok, out = S.sh(("%s %s/compute.py %s"):format(PYTHON, DIR, DIR))
    assert(ok, out)
    WANT = {}
  end
  WANT[name] = WANT[name] or luacuda.load(DIR .. "/" .. name .. ".out.npy")
  return WANT[name]:totable()
end

local function same(got, name)
  assert.same(want(name), S.host_values(got))
end

for _, kind in ipairs({ "host", "device" }) do
  -- the input in this kind; `a` stays a strided view
  local function K(name)
    if kind == "host" then return IN[name]:copy() end
    return luacuda.to_device(IN[name])
  end
  local function A()
    local b = kind == "host" and base:copy() or luacuda.to_device(base)
    return b[{ { 1, 6, 2 }, { 8, 1, -1 } }]
  end

  describe("gather and scatter on " .. kind .. " arrays", function()
    before_each(function()
      if not HAVE_NUMPY then return pending(NO_NUMPY) end
    end)

    it("take: flattened, along each axis, NumPy's results", function()
      if not HAVE_NUMPY then return end
      local a = A()
      same(luacuda.take(a, K("iflat")), "take_flat")
      same(a:take(K("iax1"), { axis = 1 }), "take_ax1")
      same(luacuda.take(a, K("iax2"), { axis = 2 }), "take_ax2")
      assert.equal(kind, luacuda.take(a, K("iax2"), { axis = 2 }).kind)
    end)

    it("take into out=, and with strided indices", function()
      if not HAVE_NUMPY then return end
      local a = A()
      local out = kind == "host" and luacuda.zeros({ 3, 7 }, "float32")
                                  or luacuda.to_device(luacuda.zeros({ 3, 7 }, "float32"))
      assert.equal(out, luacuda.take(a, K("iax2"), { axis = 2, out = out }))
      same(out, "take_ax2")
      -- the same indices as a view with a step: every other element of a
      -- doubled copy
      local twice = luacuda.empty({ 14 }, "int64")
      for i = 1, 7 do twice[2 * i - 1] = IN.iax2[i]; twice[2 * i] = 99 end
      local t = kind == "host" and twice or luacuda.to_device(twice)
      same(luacuda.take(a, t[{ { 1, 14, 2 } }], { axis = 2 }), "take_ax2")
    end)

    it("a[idx] (int32 indices) and a[mask], of the whole shape or of the leading axes", function()
      if not HAVE_NUMPY then return end
      local a = A()
      same(a[K("irow")], "getitem")
      same(a[K("mask")], "mask")
      same(a[K("lead")], "mask_lead")
    end)

    it("nonzero and where(cond): one int64 array of 1-based indices per axis", function()
      if not HAVE_NUMPY then return end
      for _, fn in ipairs({ luacuda.nonzero, luacuda.where }) do
        local t = fn(K("mask"))
        assert.equal(2, #t)
        for k = 1, 2 do
          assert.equal("int64", t[k].dtype)
          assert.equal(kind, t[k].kind)
          same(t[k], "nonzero" .. k)
        end
      end
      -- a float array: its non-zero elements
      local t = luacuda.nonzero(A())
      local n = 0
      for _, row in ipairs(IN.a:totable()) do
        for _, v in ipairs(row) do if v ~= 0 then n = n + 1 end end
      end
      assert.equal(n, t[1].size)
    end)

    it("put, a[idx] = v and a[mask] = v write in place", function()
      if not HAVE_NUMPY then return end
      local p = A()
      p:put(K("iput"), K("vput"))
      same(p, "put")
      local s = A()
      s[K("iset")] = K("vset")                 -- a row broadcast to the two rows
      same(s, "setitem")
      local m = A()
      m[K("mask")] = -2.5
      same(m, "setmask")
    end)

    it("add_at adds every value of a repeated index (float64, int32 along axis 2, int8 wrapping)", function()
      if not HAVE_NUMPY then return end
      local f = K("acc64")
      assert.equal(f, luacuda.add_at(f, K("iadd"), K("vadd")))
      same(f, "add64")
      local g = K("acc32")
      luacuda.scatter_add(g, K("iadd2"), 3, { axis = 2 })
      same(g, "add32")
      local h = K("acc8")
      luacuda.add_at(h, K("iadd8"), 100)
      same(h, "add8")
    end)

    it("bincount, with weights and minlength; count_nonzero", function()
      if not HAVE_NUMPY then return end
      local b = luacuda.bincount(K("bins"))
      assert.equal("int64", b.dtype)
      same(b, "bincount")
      local w = luacuda.bincount(K("bins"), { weights = K("weights"), minlength = 40 })
      assert.equal("float64", w.dtype)
      same(w, "bincount_w")
      same(luacuda.count_nonzero(K("mask"), 2), "count_ax2")
      local n = 0
      for _, row in ipairs(IN.mask:totable()) do
        for _, v in ipairs(row) do if v then n = n + 1 end end
      end
      assert.equal(n, luacuda.count_nonzero(K("mask")))
    end)

    it("runs on a stream", function()
      if not HAVE_NUMPY then return end
      local s = luacuda.stream()
      local a = A()
      local r = luacuda.take(a, K("iax2"), { axis = 2, stream = s })
      local f = K("acc64")
      luacuda.add_at(f, K("iadd"), K("vadd"), { stream = s })
      local t = luacuda.nonzero(K("mask"), { stream = s })
      s:synchronize()
      same(r, "take_ax2")
      same(f, "add64")
      same(t[2], "nonzero2")
    end)
  end)

  describe("gather and scatter errors on " .. kind .. " arrays", function()
    it("an index out of range names the first one, its position and value, and writes nothing", function()
      local a = A()
      local bad = K("iput")
      bad[3] = 0                                   -- the first bad one
      local x = kind == "host" and luacuda.array({ 1, 2, 30, 4, -31 })
                                or luacuda.to_device(luacuda.array({ 1, 2, 30, 4, -31 }))
      S.misuse("luacuda.take: index 30 (at position 3 of the indices) is out of bounds for " ..
               "the 24 elements of the array, flattened", luacuda.take, a, x)
      S.misuse("luacuda.take: index -31 (at position 2 of the indices) is out of bounds for " ..
               "axis 1 of size 3", luacuda.take, a, kind == "host" and luacuda.array({ 2, -31 }) or luacuda.to_device(luacuda.array({ 2, -31 })),
               { axis = 1 })
      S.misuse("luacuda.put: index 0 (at position 3 of the indices) is out of bounds",
               luacuda.put, a, bad, 1)
      S.misuse("luacuda.add_at: index 30 (at position 3", luacuda.add_at, a, x, 1)
      S.misuse("luacuda.setitem: index 30 (at position 3", function(y, k) y[k] = 1 end, a, x)
      S.misuse("luacuda.index: index 30 (at position 3", function(y, k) return y[k] end, a, x)
      S.misuse("at position {2, 1} of the indices",
               luacuda.take, a, x[{ { 1, 4 } }]:reshape(2, 2))
    end)

    it("refuses indices and masks of a wrong dtype, and a mask of another shape", function()
      local a = A()
      local f = kind == "host" and luacuda.array({ 1.0, 2.0 })
                                or luacuda.to_device(luacuda.array({ 1.0, 2.0 }))
      S.misuse("luacuda.take: indices must be an array of integers, got a float64 array",
               luacuda.take, a, f)
      S.misuse("luacuda.index: indices must be an array of integers, got a float64 array",
               function(y, k) return y[k] end, a, f)
      local m = kind == "host" and luacuda.array({ true, false })
                                or luacuda.to_device(luacuda.array({ true, false }))
      S.misuse("luacuda.setitem: the mask's shape {2} does not match the array's {3, 8}",
               function(y, k) y[k] = 0 end, a, m)
      S.misuse("luacuda.add_at: values of shape {3} do not broadcast to the {2} elements indexed",
               luacuda.add_at, K("acc64"), { 1, 2 }, { 1, 2, 3 })
      S.misuse("luacuda.bincount: value 0 at position 2 is below 1",
               luacuda.bincount, kind == "host" and luacuda.array({ 3, 0, 1 })
                                 or luacuda.to_device(luacuda.array({ 3, 0, 1 })))
      S.misuse("luacuda.nonzero: a 0-d array has no axes", luacuda.nonzero,
               luacuda.array(1))
    end)

    it("refuses indices on the other side from the array", function()
      if kind == "host" then
        S.misuse("luacuda.take: the indices: a device array, but the array indexed is a " ..
                 "host array", luacuda.take, A(), luacuda.to_device(luacuda.array({ 1 })))
      else
        S.misuse("luacuda.take: the indices: a host array, but the array indexed is a " ..
                 "device array", luacuda.take, A(), luacuda.array({ 1 }))
        S.misuse("luacuda.setitem: the mask: a host array",
                 function(y, k) y[k] = 0 end, A(), luacuda.array({ true, false, true }))
      end
    end)
  end)
end

describe("gather and scatter, more", function()
  it("takes and puts records, on host and device arrays", function()
    local R = luacuda.record({ { "x", "float32" }, { "y", "int32" } })
    local h = luacuda.zeros({ 3 }, R)
    h[2] = { x = 1.5, y = 7 }
    h[3] = { x = -2, y = 9 }
    for _, a in ipairs({ h, luacuda.to_device(h) }) do
      local t = luacuda.take(a, { 3, 2, -1 }):copy_to_host()
      assert.same({ 9, 7, 9 }, { t[1].y, t[2].y, t[3].y })
      assert.same({ -2, 1.5, -2 }, { t[1].x, t[2].x, t[3].x })
      local b = a:copy()
      local m = luacuda.array({ false, true, false })
      b[a.kind == "host" and m or luacuda.to_device(m)] = { x = 4, y = 5 }
      b:put({ 1 }, b[{ { 3, 3 } }])
      local c = b:copy_to_host()
      assert.same({ 9, 5, 9 }, { c[1].y, c[2].y, c[3].y })
    end
  end)

  it("reads values, indices and take's input before writing over them", function()
    for _, dev in ipairs({ false, true }) do
      local function K(t) return dev and luacuda.to_device(luacuda.array(t)) or luacuda.array(t) end
      local a = K({ 1, 2, 3, 4 })
      a[K({ 4, 3, 2, 1 })] = a                  -- the values are the array written
      assert.same({ 4, 3, 2, 1 }, S.host_values(a))
      local b = K({ 2, 1, 3 })
      b[b] = K({ 10, 20, 30 })                  -- the indices are the array written
      assert.same({ 20, 10, 30 }, S.host_values(b))
      local c = K({ 1, 2, 3, 4 })
      luacuda.take(c, K({ 2, 3, 4, 1 }), { out = c })
      assert.same({ 2, 3, 4, 1 }, S.host_values(c))
    end
  end)

  it("compacts a mask of several blocks and tiles (a strided view of 10,000 elements)", function()
    local h = (luacuda.arange(20000):reshape(100, 200) * 7 % 13):lt(3)   -- a bool array
    local rows, cols, n = {}, {}, 0
    for i = 1, 100 do
      for j = 1, 100 do
        if h[{ i, 2 * j - 1 }] then
          n = n + 1
          rows[n], cols[n] = i, j
        end
      end
    end
    for _, m in ipairs({ h, luacuda.to_device(h) }) do
      local v = m[{ {}, { 1, 200, 2 } }]                   -- {100, 100}, every other column
      local t = luacuda.nonzero(v)
      assert.same(rows, S.host_values(t[1]))
      assert.same(cols, S.host_values(t[2]))
      assert.equal(n, luacuda.count_nonzero(v))
      local flat = luacuda.arange(10000):reshape(100, 100)
      if m.kind ~= "host" then flat = luacuda.to_device(flat) end
      local picked = S.host_values(flat[v])
      assert.equal(n, #picked)
      assert.equal((rows[n] - 1) * 100 + cols[n] - 1, picked[n])
    end
  end)

  it("names each misuse and changes nothing", function()
    local a = luacuda.array({ { 1, 2, 3 }, { 4, 5, 6 } })
    S.misuse("luacuda.take: indices must be an array of integers, got a bool array (a mask " ..
             "indexes as a[mask])", luacuda.take, a, luacuda.array({ true }))
    S.misuse("luacuda.take: indices must be an array of integers, a table of them or an " ..
             "integer, got string", luacuda.take, a, "1")
    S.misuse("luacuda.take: expected an array and the indices", luacuda.take, a)
    S.misuse("luacuda.take: an options table is the last argument, got number after it",
             luacuda.take, a, { 1 }, {}, 5)
    S.misuse("luacuda.take: out= must be an array, got number", luacuda.take, a, { 1 }, { out = 5 })
    S.misuse("luacuda.take: out= must have the result's shape {2} and dtype int64, got shape {3} " ..
             "and dtype int64", luacuda.take, a, { 1, 2 }, { out = luacuda.zeros({ 3 }, "int64") })
    S.misuse("luacuda.take: axis 3 is out of range for a 2-d array", luacuda.take, a, { 1 },
             { axis = 3 })
    S.misuse("luacuda.take: unknown option weights", luacuda.take, a, { 1 }, { weights = 1 })
    local deep = {}
    for i = 1, 32 do deep[i] = 1 end
    S.misuse("luacuda.take: the result would have more than 32 axes", luacuda.take, a,
             luacuda.ones(deep, "int64"), { axis = 1 })
    S.misuse("luacuda.put: expected an array, the indices and the values", luacuda.put, a, { 1 })
    S.misuse("luacuda.add_at: expected an array, the indices and the values", luacuda.add_at, a,
             { 1 })
    S.misuse("luacuda.add_at: a 0-d array has no axis to index", luacuda.add_at,
             luacuda.array(1), { 1 }, 1)
    S.misuse("luacuda.add_at: a mask indexes the leading axes: no axis=", luacuda.add_at, a,
             luacuda.ones({ 2, 3 }, "bool"), 1, { axis = 2 })
    local R = luacuda.record({ { "x", "float32" } })
    S.misuse("luacuda.add_at: cannot add records", luacuda.add_at, luacuda.zeros({ 2 }, R), { 1 }, 1)
    S.misuse("luacuda.nonzero: a record array has no truth values", luacuda.nonzero,
             luacuda.zeros({ 2 }, R))
    S.misuse("luacuda.bincount: expected an array of integers", luacuda.bincount)
    S.misuse("luacuda.bincount: the values must be a 1-d array, got 2-d", luacuda.bincount,
             luacuda.ones({ 2, 2 }, "int64"))
    S.misuse("luacuda.bincount: minlength must be 0 or more, got -1", luacuda.bincount, { 1 },
             { minlength = -1 })
    S.misuse("luacuda.bincount: weights= must be a 1-d array (or table) of the values' length 2",
             luacuda.bincount, { 1, 2 }, { weights = { 1 } })
    -- (also in the loops above, whose test names the catalogue cannot find)
    S.misuse("luacuda.take: index 3 (at position 2 of the indices) is out of bounds for axis 1 " ..
             "of size 2", luacuda.take, a, { 1, 3 }, { axis = 1 })
    S.misuse("luacuda.put: index 7 (at position 1 of the indices) is out of bounds for the 6 " ..
             "elements of the array, flattened", luacuda.put, a, { 7 }, 0)
    S.misuse("luacuda.add_at: values of shape {3} do not broadcast to the {2} elements indexed",
             luacuda.add_at, luacuda.zeros({ 4 }), { 1, 2 }, { 1, 2, 3 })
    S.misuse("luacuda.setitem: the mask's shape {3} does not match the array's {2, 3}",
             function(y, k) y[k] = 0 end, a, luacuda.ones({ 3 }, "bool"))
    S.misuse("luacuda.nonzero: a 0-d array has no axes to give indices along (reshape it to {1})",
             luacuda.nonzero, luacuda.array(1))
    S.misuse("luacuda.bincount: value -2 at position 3 is below 1 (luacuda counts bins from 1: " ..
             "value v goes to bin v)", luacuda.bincount, { 2, 1, -2 })
    local d = luacuda.to_device(luacuda.array({ 1, 2 }))
    S.misuse("luacuda.take: the indices: a device array, but the array indexed is a host array: " ..
             "both must be where the work runs (move the indices with to_host)", luacuda.take, a, d)
    S.misuse("luacuda.take: the indices: a host array, but the array indexed is a device array: " ..
             "both must be where the work runs (move the indices with to_device)",
             luacuda.take, d, luacuda.array({ 1 }))
    local z = luacuda.array(5)
    S.misuse("luacuda.index: a 0-d array is indexed with a[{}], not an array",
             function(y) return y[luacuda.array({ 1 })] end, z)
    S.misuse("luacuda.setitem: a 0-d array is indexed with a[{}], not an array",
             function(y) y[luacuda.array({ 1 })] = 1 end, z)
    assert.same({ { 1, 2, 3 }, { 4, 5, 6 } }, a:totable())
  end)

  it("adds float16 at indices on the host and the simulator, and says the CUDA backend does not", function()
    local h = luacuda.array({ 1, 2, 3 }, "float16")
    luacuda.add_at(h, { 1, 1 }, 0.5)
    assert.same({ 2, 2, 3 }, h:totable())
    local d = luacuda.to_device(luacuda.array({ 1, 2, 3 }, "float16"))
    if S.backend == "cuda" then
      S.misuse("luacuda.add_at: adding at indices is not implemented for float16 on the CUDA " ..
               "backend (astype float32 first)", luacuda.add_at, d, { 1, 1 }, 0.5)
    else
      luacuda.add_at(d, { 1, 1 }, 0.5)
      assert.same({ 2, 2, 3 }, S.host_values(d))
    end
  end)

  it("names the device of indices and arrays on another device", function()
    local ok, out = S.lua_run(("LUACUDA_SIM_DEVICES=2 FAKE_CUDA_DEVICES=2 LUA_PATH=%q LUA_CPATH=%q")
                              :format(package.path, package.cpath), [==[
      local luacuda = require "luacuda"
      local S = require "spec.support"
      local a = luacuda.to_device({ 1, 2, 3 })
      local i2, a2
      do
        local _ <close> = luacuda.device(2)
        i2 = luacuda.to_device({ 1 })
        a2 = luacuda.to_device({ 4, 5 })
      end
      S.misuse("luacuda.take: the indices array is on device 2, but device 1 is current",
               luacuda.take, a, i2)
      S.misuse("luacuda.take: the input array is on device 2, but device 1 is current",
               luacuda.take, a2, { 1 })
      S.misuse("luacuda.add_at: the indices array is on device 2", luacuda.add_at, a, i2, 1)
      assert(a:copy_to_host():totable()[1] == 1)
      print("ok")
    ]==])
    assert(ok and out:find("ok"), out)
  end)
end)
