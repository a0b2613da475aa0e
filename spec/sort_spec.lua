-- sort, argsort, a:sort(), searchsorted and unique against NumPy's results
-- (Debian's /usr/bin/python3 with python3-numpy, through .npy files): random
-- inputs of every dtype with NaN (both signs), infinities, -0.0, ties and
-- integers at their limits; along each axis, through views, on host and
-- device arrays (device ones: the backend's sort slot; on the CUDA backend
-- the radix sort kernel, which the fake driver's PTX interpreter runs).
local luacuda = require "luacuda"
local S = require "spec.support"

-- (without the sanitizer runtime make test-asan preloads into every child)
local PYTHON = "env -u LD_PRELOAD -u ASAN_OPTIONS /usr/bin/python3"
local HAVE_NUMPY = S.sh(PYTHON .. " -c 'import numpy'")
local NO_NUMPY = "/usr/bin/python3 cannot import numpy (apt-get install python3-numpy)"

local DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "bfloat16", "float32", "float64"}

-- Writes, for each dtype d, d_in.npy ({6, 37}: rows longer than an
-- insertion sort takes) and NumPy's answers; bfloat16's values are float32
-- ones that bfloat16 holds (NumPy has no bfloat16), sorted as float32.
local SCRIPT = [==[
import sys, numpy as np
out = sys.argv[1]
rng = np.random.default_rng(30)
def make(dt, shape):
    n = int(np.prod(shape))
    if dt == 'bool':
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    t = np.dtype(dt)
    if t.kind in 'iu':
        info = np.iinfo(t)
        edges = np.array([info.min, info.min + 1, 0, 1, 2, info.max - 1, info.max], dtype=t)
        v = rng.integers(info.min, info.max, n, endpoint=True, dtype=t)
        small = rng.integers(0, 4, n).astype(t)          # ties
        pick = rng.random(n)
        v = np.where(pick < 0.25, rng.choice(edges, n), np.where(pick < 0.5, small, v))
        return v.astype(t).reshape(shape)
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5],
                       dtype=t)
    v = (rng.standard_normal(n) * 4).astype(t)
    pick = rng.random(n)
    v = np.where(pick < 0.35, rng.choice(special, n), v).astype(t)
    return v.reshape(shape)
def save(name, a):
    np.save(out + '/' + name + '.npy', a)
for d in sys.argv[2:]:
    t = 'float32' if d == 'bfloat16' else d
    x = make(t, (6, 37))
    if d == 'bfloat16':
        x = (x.view(np.uint32) & np.uint32(0xffff0000)).view(np.float32)
    save(d + '_in', x)
    for ax in (0, 1):
        save('%s_sort%d' % (d, ax), np.sort(x, axis=ax))
        save('%s_argsort%d' % (d, ax), np.argsort(x, axis=ax, kind='stable') + 1)
    u, i, inv, c = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    save(d + '_uvals', u)
    save(d + '_uindex', i + 1)
    save(d + '_uinverse', inv.reshape(x.shape) + 1)
    save(d + '_ucounts', c)
    a = np.sort(x.ravel())
    v = np.concatenate([make(t, (30,)), x.ravel()[:20]])
    if d == 'bfloat16':
        v = (v.view(np.uint32) & np.uint32(0xffff0000)).view(np.float32)
    save(d + '_ssa', a)
    save(d + '_ssv', v)
    save(d + '_ssleft', np.searchsorted(a, v, side='left') + 1)
    save(d + '_ssright', np.searchsorted(a, v, side='right') + 1)
x = make('float32', (70000,))                    # a row long enough for 11-bit digits
save('long_in', x)
save('long_sort', np.sort(x))
save('long_argsort', np.argsort(x, kind='stable') + 1)
]==]

local dir
local function path(name) return dir .. "/" .. name .. ".npy" end

-- a file's array, as dtype d (bfloat16 from its float32 file)
local function load(name, d)
  local a = luacuda.load(path(name))
  if d == "bfloat16" then a = a:astype("bfloat16") end
  return a
end

local function flat(t, acc)
  acc = acc or {}
  if type(t) ~= "table" then acc[#acc + 1] = t return acc end
  for _, x in ipairs(t) do flat(x, acc) end
  return acc
end

-- equal as NumPy's order has them: NaN equals NaN, -0.0 equals 0.0
local function same_values(got, want, what)
  local g, w = flat(S.host_values(got)), flat(S.host_values(want))
  assert.equal(#w, #g, what)
  for i = 1, #w do
    local a, b = g[i], w[i]
    if not (a == b or (a ~= a and b ~= b)) then
      error(("%s: element %d is %s, NumPy's %s"):format(what, i, tostring(a), tostring(b)))
    end
  end
end

-- how many elements are -0.0 (a sort keeps them, as NumPy's)
local function negative_zeros(a)
  local n = 0
  for _, x in ipairs(flat(S.host_values(a))) do
    if type(x) == "number" and x == 0 and 1 / x < 0 then n = n + 1 end
  end
  return n
end

local KINDS = {"host", "device"}
local function as_kind(h, kind)
  return kind == "host" and h or luacuda.to_device(h)
end

describe("sort", function()
  setup(function()
    if not HAVE_NUMPY then return end
    dir = S.tmpdir()
    local f = assert(io.open(dir .. "/make.py", "w"))
    f:write(SCRIPT)
    f:close()
    local ok, out = S.sh(PYTHON .. " " .. dir .. "/make.py " .. dir .. " " .. table.concat(DTYPES, " "))
    assert(ok, out)
  end)
  teardown(function()
    if dir then os.execute("rm -rf " .. dir) end
  end)

  for _, kind in ipairs(KINDS) do
    describe("on " .. kind .. " arrays", function()
      it("sort and argsort along each axis equal NumPy's (stable argsort, NaN last)", function()
        if not HAVE_NUMPY then return pending(NO_NUMPY) end
        for _, d in ipairs(DTYPES) do
          local x = as_kind(load(d .. "_in", d), kind)
          assert.equal(d, x.dtype)
          for ax = 1, 2 do
            local s = luacuda.sort(x, ax)
            assert.equal(kind, s.kind)
            assert.equal(d, s.dtype)
            same_values(s, load(("%s_sort%d"):format(d, ax - 1), d), d .. " sort axis " .. ax)
            assert.equal(negative_zeros(x), negative_zeros(s), d .. ": -0.0 kept")
            local i = luacuda.argsort(x, ax)
            assert.equal("int64", i.dtype)
            assert.same(S.host_values(load(("%s_argsort%d"):format(d, ax - 1))), S.host_values(i),
                        d .. " argsort axis " .. ax)
          end
          -- the last axis by default, and the method
          same_values(luacuda.sort(x), load(d .. "_sort1", d), d .. " default axis")
          assert.same(S.host_values(load(d .. "_argsort1")), S.host_values(x:argsort()))
        end
      end)

      it("a long float32 row (11-bit digits; many tiles on the GPU) equals NumPy's #heavy", function()
        if not HAVE_NUMPY then return pending(NO_NUMPY) end
        local x = as_kind(luacuda.load(path("long_in")), kind)
        same_values(luacuda.sort(x), luacuda.load(path("long_sort")), "long sort")
        assert.same(S.host_values(luacuda.load(path("long_argsort"))),
                    S.host_values(luacuda.argsort(x)))
        if kind == "host" or S.backend == "sim" then     -- (the fake's interpreter is slow)
          x:sort()
          same_values(x, luacuda.load(path("long_sort")), "long sort in place")
        end
      end)

      it("sorts views: transposed and strided, in place touching nothing else", function()
        if not HAVE_NUMPY then return pending(NO_NUMPY) end
        for _, d in ipairs({"int16", "float32", "float64"}) do
          local x = as_kind(load(d .. "_in", d), kind)
          -- x.T's axis 2 is x's axis 1 (NumPy's 0)
          local s = luacuda.sort(x.T, 2)
          same_values(s.T, load(d .. "_sort0", d), d .. " sort of x.T")
          assert.same(S.host_values(load(d .. "_argsort0")), S.host_values(luacuda.argsort(x.T, 2).T))
          -- in place, through every other column of a copy: the others stay
          local y = x:copy()
          local before = S.host_values(y)
          local v = y[{{}, {1, 37, 2}}]
          v:sort(1)
          local after = S.host_values(y)
          local want = S.host_values(luacuda.sort(x[{{}, {1, 37, 2}}], 1))
          for r = 1, 6 do
            for c = 1, 37 do
              local a = after[r][c]
              local b = c % 2 == 1 and want[r][(c + 1) // 2] or before[r][c]
              assert(a == b or (a ~= a and b ~= b), ("%s [%d][%d]"):format(d, r, c))
            end
          end
          assert.equal(v, v:sort())          -- returns the array itself
        end
      end)

      it("sorts a misaligned view (a packed record's field) as its aligned copy", function()
        local R = luacuda.record({{"c", "int8"}, {"x", "float32"}}, {align = false})
        local h = luacuda.zeros(40, R)
        for i = 1, 40 do h[i].x = (i * 7919) % 13 - 6 end      -- ties
        local a = as_kind(h, kind)
        local v = a.x
        assert.equal(5, v.strides[1])
        local c = v:copy()
        assert.same(S.host_values(luacuda.sort(c)), S.host_values(luacuda.sort(v)))
        assert.same(S.host_values(luacuda.argsort(c)), S.host_values(luacuda.argsort(v)))
        local o = as_kind(luacuda.zeros(40, R), kind)
        luacuda.sort(v, {out = o.x})
        assert.same(S.host_values(luacuda.sort(c)), S.host_values(o.x:copy()))
        v:sort()
        assert.same(S.host_values(luacuda.sort(c)), S.host_values(v:copy()))
        for _, byte in ipairs(S.host_values(a.c:copy())) do assert.equal(0, byte) end   -- untouched
      end)

      it("out= and stream=", function()
        if not HAVE_NUMPY then return pending(NO_NUMPY) end
        local x = as_kind(load("float32_in", "float32"), kind)
        local o = luacuda.zeros({6, 37}, "float32")
        if kind ~= "host" then o = luacuda.to_device(o) end
        assert.equal(o, luacuda.sort(x, 1, {out = o}))
        same_values(o, load("float32_sort0", "float32"), "sort out=")
        local io = luacuda.zeros({6, 37}, "int64")
        if kind ~= "host" then io = luacuda.to_device(io) end
        assert.equal(io, luacuda.argsort(x, {out = io}))
        assert.same(S.host_values(load("float32_argsort1")), S.host_values(io))
        -- out= over the input itself: as in place
        local y = x:copy()
        luacuda.sort(y, 1, {out = y})
        same_values(y, load("float32_sort0", "float32"), "sort out= the input")
        local s = luacuda.stream()
        local r = luacuda.sort(x, {stream = s})
        local i = luacuda.argsort(x, 1, {stream = s})
        s:synchronize()
        same_values(r, load("float32_sort1", "float32"), "sort on a stream")
        assert.same(S.host_values(load("float32_argsort0")), S.host_values(i))
        x:sort({stream = s})
        s:synchronize()
        same_values(x, load("float32_sort1", "float32"), "a:sort on a stream")
      end)

      it("searchsorted equals NumPy's, plus 1", function()
        if not HAVE_NUMPY then return pending(NO_NUMPY) end
        for _, d in ipairs(DTYPES) do
          local a = as_kind(load(d .. "_ssa", d), kind)
          local v = as_kind(load(d .. "_ssv", d), kind)
          local left, right = luacuda.searchsorted(a, v), luacuda.searchsorted(a, v, {side = "right"})
          assert.equal(kind, left.kind)
          assert.same(S.host_values(load(d .. "_ssleft")), S.host_values(left), d .. " left")
          assert.same(S.host_values(load(d .. "_ssright")), S.host_values(right), d .. " right")
          assert.same(S.host_values(load(d .. "_ssleft")),
                      S.host_values(luacuda.searchsorted(a, v, {side = "left"})))
        end
        local a = as_kind(luacuda.array({10, 20, 20, 30}), kind)
        assert.equal(1, luacuda.searchsorted(a, 5))
        assert.equal(2, luacuda.searchsorted(a, 20))
        assert.equal(4, luacuda.searchsorted(a, 20, {side = "right"}))
        assert.equal(5, luacuda.searchsorted(a, 99))
      end)

      it("unique equals NumPy's (values, first indices, inverse, counts)", function()
        if not HAVE_NUMPY then return pending(NO_NUMPY) end
        for _, d in ipairs(DTYPES) do
          local x = as_kind(load(d .. "_in", d), kind)
          local u, i, inv, c = luacuda.unique(x, {return_index = true, return_inverse = true,
                                                  return_counts = true})
          assert.equal(kind, u.kind)
          same_values(u, load(d .. "_uvals", d), d .. " unique")
          assert.same(S.host_values(load(d .. "_uindex")), S.host_values(i), d .. " index")
          assert.same(S.host_values(load(d .. "_uinverse")), S.host_values(inv), d .. " inverse")
          assert.same(S.host_values(load(d .. "_ucounts")), S.host_values(c), d .. " counts")
          local only, counts = luacuda.unique(x, {return_counts = true})
          same_values(only, u, d .. " unique alone")
          assert.same(S.host_values(c), S.host_values(counts))
        end
      end)
    end)
  end

  it("every float16 bit pattern: NumPy's order, and the same bits out (NaN payloads, -0.0)", function()
    if not HAVE_NUMPY then return pending(NO_NUMPY) end
    local ok, out = S.sh(PYTHON .. [==[ -c "
import numpy as np
f = np.arange(65536, dtype=np.uint16).view(np.float16)
np.save(']==] .. dir .. [==[/f16_sort.npy', np.sort(f))
"]==])
    assert(ok, out)
    for _, kind in ipairs(KINDS) do
      local bits = as_kind(luacuda.arange(65536):astype("uint16"), kind)
      local s = luacuda.sort(bits:view("float16"))
      same_values(s, luacuda.load(dir .. "/f16_sort.npy"), "float16 " .. kind)
      -- a permutation of the bits: sorted as integers, they are 0 .. 65535 again
      local back = luacuda.sort(s:view("uint16")):copy_to_host()
      assert.same(S.host_values(luacuda.arange(65536):astype("uint16")), S.host_values(back))
    end
  end)

  it("small cases: empty, one element, 3-d, the doc's examples", function()
    assert.same({}, luacuda.sort(luacuda.array({}, "float32")):totable())
    assert.same({1}, luacuda.argsort(luacuda.array({7})):totable())
    local a = luacuda.arange(24):reshape(2, 3, 4)
    local r = luacuda.sort(-a, 2)
    assert.same({-8, -9, -10, -11}, r:totable()[1][1])
    assert.same({{3, 3, 3, 3}, {2, 2, 2, 2}, {1, 1, 1, 1}}, luacuda.argsort(-a, 2):totable()[2])
    assert.same({1, 3}, luacuda.unique(luacuda.array({3, 1, 3})):totable())
    local e = luacuda.unique(luacuda.array({}, "int32"))
    assert.same({0}, e.shape)
  end)

  it("refuses what it cannot sort, naming the function and the cause", function()
    local a = luacuda.array({{3, 1}, {2, 4}}, "float32")
    S.misuse("luacuda.sort: axis 3 is out of range for a 2-d array", luacuda.sort, a, 3)
    S.misuse("luacuda.argsort: axis 0 is out of range", luacuda.argsort, a, 0)
    S.misuse("luacuda.sort: a 0-d array has no axis to sort along", luacuda.sort,
             luacuda.zeros({}, "float32"))
    S.misuse("luacuda.sort: axis must be an integer", luacuda.sort, a, "x")
    S.misuse("luacuda.sort: unknown option", luacuda.sort, a, {axis = 1})
    S.misuse("luacuda.sort: out= must have the result's shape {2, 2} and dtype float32",
             luacuda.sort, a, {out = luacuda.zeros({2, 2}, "float64")})
    S.misuse("luacuda.argsort: out= must have the result's shape {2, 2} and dtype int64",
             luacuda.argsort, a, {out = luacuda.zeros({2, 2}, "float32")})
    S.misuse("luacuda.sort: out= is a device array, but a host array's sort runs on the host",
             luacuda.sort, a, {out = luacuda.to_device(luacuda.zeros({2, 2}, "float32"))})
    S.misuse("luacuda.sort: out= must be an array, got number", luacuda.sort, a, {out = 1})
    local rec = luacuda.record({{"x", "float32"}, {"n", "int16"}})
    S.misuse("luacuda.sort: a record array (dtype", luacuda.sort, luacuda.zeros(3, rec))
    S.misuse("luacuda.searchsorted: the sorted array must be 1-d, got a 2-d array",
             luacuda.searchsorted, a, 1)
    local s = luacuda.array({1, 2, 3}, "float32")
    S.misuse("luacuda.searchsorted: the values (float64) must have the sorted array's dtype "
             .. "float32", luacuda.searchsorted, s, luacuda.array({1.5}))
    S.misuse("luacuda.searchsorted: side must be \"left\" or \"right\", got middle",
             luacuda.searchsorted, s, 1, {side = "middle"})
    S.misuse("luacuda.searchsorted: the values must be an array or a number, got string",
             luacuda.searchsorted, s, "x")
    S.misuse("luacuda.unique: return_counts must be a boolean, got string",
             luacuda.unique, s, {return_counts = "yes"})
  end)
end)
