-- Reductions over any axis (src/base/reduce.c): sums, products, means,
-- minima and maxima over a leading axis read whole rows, many outputs at
-- once, with the same pairwise tree as one output at a time, so their
-- results are those of a contiguous copy's, bit for bit; so are those over
-- a short last axis, a loop over the outputs; sums and argmax over every
-- axis are NumPy's, on host and device arrays.
local S = require "spec.support"
local luacuda = require "luacuda"

local PYTHON = "env -u LD_PRELOAD -u ASAN_OPTIONS /usr/bin/python3"
local have_numpy = S.sh(PYTHON .. " -c 'import numpy'")

local function host(x) return x.kind == "host" and x or x:copy_to_host() end

describe("reductions over a leading axis", function()
  local g = luacuda.random(30)
  for _, kind in ipairs({"host", "device"}) do
    for _, dt in ipairs({"float32", "float64"}) do
      it(("of %s %s arrays are a contiguous copy's, bit for bit"):format(kind, dt), function()
        -- 300 rows: the tree splits (leaves of 128); 257 columns: a last
        -- short group of lanes
        local a = g:uniform({300, 257}, dt, {kind = kind, low = -1, high = 1})
        local at = a.T:copy()                      -- each column a contiguous row
        for _, op in ipairs({"sum", "prod", "mean", "min", "max"}) do
          local got, want = host(a[op](a, 1)), host(at[op](at, 2))
          for j = 1, 257 do
            if got[j] ~= want[j] then
              error(("%s over axis 1, column %d: %.17g, its copy's %.17g"):format(op, j, got[j], want[j]))
            end
          end
        end
        -- over two leading axes of three, and outputs at a negative stride
        local b = g:uniform({5, 60, 33}, dt, {kind = kind})
        local got, want = host(b:sum({1, 2})), host(b:transpose(3, 1, 2):copy():sum({2, 3}))
        for j = 1, 33 do assert.equal(want[j], got[j]) end
        local r = b[{{}, {}, {nil, nil, -1}}]
        got, want = host(r:sum(2)), host(r:transpose(1, 3, 2):copy():sum(3))
        for i = 1, 5 do
          for j = 1, 33 do assert.equal(want[{i, j}], got[{i, j}]) end
        end
      end)
    end
    it(("of %s arrays: min and max keep the first NaN and the first of equal extremes")
       :format(kind), function()
      -- columns 1 and 2: plain values; 3: a NaN late; 4: a NaN first, then
      -- -inf and inf; 5: plain values, and in `zero` -0s and 0s; 200 rows
      local t = {}
      for i = 1, 200 do
        local v = ((i * 37) % 101 - 50) / 7
        t[i] = {v, v, v, v, v}
        if i == 150 then t[i][3] = 0 / 0 end
        if i == 1 then t[i][4] = 0 / 0 end
        if i == 2 then t[i][4] = -1 / 0 end
        if i == 3 then t[i][4] = 1 / 0 end
      end
      for _, dt in ipairs({"float32", "float64"}) do
        local a = luacuda.array(t, dt)
        local zero = luacuda.array(t, dt) * 0    -- every value 0 (NaN, inf: NaN) but -0s
        if kind == "device" then a, zero = luacuda.to_device(a), luacuda.to_device(zero) end
        local mx, mn = host(a:max(1)), host(a:min(1))
        local want_mx, want_mn = host(a.T:copy():max(2)), host(a.T:copy():min(2))
        for j = 1, 5 do
          assert.is_true(mx[j] == want_mx[j] or mx[j] ~= mx[j] and want_mx[j] ~= want_mx[j])
          assert.is_true(mn[j] == want_mn[j] or mn[j] ~= mn[j] and want_mn[j] ~= want_mn[j])
        end
        assert.is_true(mx[3] ~= mx[3] and mn[3] ~= mn[3] and mx[4] ~= mx[4] and mn[4] ~= mn[4])
        local top = dt == "float32" and string.unpack("f", string.pack("f", 50 / 7)) or 50 / 7
        assert.equal(top, mx[5])
        -- the first of equal extremes: 0 * -x is -0 in the column of zeros
        local zmx, zmn = host(zero:max(1)), host(zero:min(1))
        local first_zero = 1 / host(zero)[{1, 5}]    -- row 1's zero's sign
        assert.equal(first_zero, 1 / zmx[5])
        assert.equal(first_zero, 1 / zmn[5])
        assert.equal(1 / host(zero.T:copy():max(2))[5], 1 / zmx[5])
      end
    end)
    it(("of %s integer arrays keep NumPy's dtypes"):format(kind), function()
      local a = luacuda.array({{2147483647, 1, 3}, {1, 2, 4}}, "int32")
      if kind == "device" then a = luacuda.to_device(a) end
      local s = host(a:sum(1))
      assert.same({2147483648, 3, 7}, s:totable())
      local u = luacuda.array({{255, 1}, {255, 2}}, "uint8")
      if kind == "device" then u = luacuda.to_device(u) end
      assert.same({510, 3}, host(u:sum(1)):totable())
      assert.same({65025, 2}, host(u:prod(1)):totable())
    end)
  end
end)

describe("argmax and argmin of contiguous rows", function()
  -- the first extreme, read a block of 8192 at a time: ties within and
  -- across blocks, NaN after the extreme, -0 and 0, a tail of the block
  local function first(t, max)
    local bi
    for i, v in ipairs(t) do
      if v ~= v then return i end
      if not bi or (max and v > t[bi]) or (not max and v < t[bi]) then bi = i end
    end
    return bi
  end
  local function case(n, set)
    local t = {}
    for i = 1, n do t[i] = ((i * 37) % 101) / 101 end
    for i, v in pairs(set) do t[i] = v end
    return t
  end
  local cases = {
    case(3000, {[5] = 2, [2000] = 2}),             -- a tie in a later block
    case(3000, {[1500] = 3, [1600] = 3, [2500] = -5}),
    case(3000, {[10] = 2, [2999] = 0 / 0}),        -- NaN after the maximum
    case(3000, {[700] = 0 / 0, [800] = 0 / 0}),    -- the first NaN
    case(2049, {[2049] = 9, [1] = -9}),            -- the extremes at the ends
    case(20, {[3] = -0.0, [4] = 0.0}),
    {-0.0, 0.0, -0.0}, {0.0, -0.0}, {5},
    {0 / 0, 1, 2}, {1, 0 / 0, 1 / 0},                -- short rows: NaN first, NaN then inf
    case(100, {[40] = 1 / 0, [60] = -1 / 0}),      -- infinities are no NaN
    case(100, {[1] = 0 / 0}), case(100, {[100] = 0 / 0}),
    case(8200, {[5] = 2, [8197] = 2}),              -- a tie in a later block of 8192
    case(8200, {[8192] = -5, [8193] = 3, [8200] = 0 / 0}),   -- at a block's edge, NaN last
    case(8200, {[8193] = -5, [8192] = 3}),
  }
  for _, kind in ipairs({"host", "device"}) do
    for _, dt in ipairs({"float32", "float64", "int64"}) do
      it(("gives the first extreme and the first NaN (%s %s)"):format(kind, dt), function()
        for ci, t in ipairs(cases) do
          local has_nan = false      -- (or an infinity: no integer holds either)
          for _, v in ipairs(t) do has_nan = has_nan or v ~= v or math.abs(v) == 1 / 0 end
          if not (dt == "int64" and has_nan) then
            local u = t
            if dt == "int64" then
              u = {}
              for i, v in ipairs(t) do u[i] = math.floor(v * 100) end
            end
            local a = luacuda.array(u, dt)
            local r = dt == "float32" and {} or u
            if dt == "float32" then        -- the values as float32 holds them
              for i, v in ipairs(u) do r[i] = v == v and string.unpack("f", string.pack("f", v)) or v end
            end
            if kind == "device" then a = luacuda.to_device(a) end
            assert.equal(first(r, true), a:argmax(), "argmax, case " .. ci)
            assert.equal(first(r, false), a:argmin(), "argmin, case " .. ci)
            -- the same rows as a 2-d array's, along its last axis
            if #u % 3 == 0 then
              local b = a:reshape(3, #u // 3)
              local m = host(b:argmax(2))
              for row = 1, 3 do
                local part = table.move(r, (row - 1) * (#u // 3) + 1, row * (#u // 3), 1, {})
                assert.equal(first(part, true), m[row], ("argmax row %d, case %d"):format(row, ci))
              end
            end
          end
        end
      end)
    end
  end
end)

describe("reductions over a short last axis", function()
  -- many outputs of a few contiguous elements each (k-means' sum over a
  -- last axis of 2, argmin over 16): the same bits as the same values read
  -- at a stride, the first NaN and the first extreme, -0 kept as before
  local lens = {2, 13, 128}
  local function values(n, dt)
    local t = {}
    for i = 1, 4 * 3 * n do t[i] = ((i * 37) % 101 - 50) / 7 end
    t[1], t[2] = -0.0, -0.0                       -- output 1: two -0s
    t[n + 2], t[n + 3] = 0 / 0, 1 / 0              -- output 2: NaN, then inf
    t[2 * n + 1], t[3 * n] = 99, 99                -- output 3: a tie at the ends
    t[3 * n + 2], t[4 * n] = -1 / 0, 0 / 0         -- output 4: -inf, NaN last
    if dt == "float32" then
      for i, v in ipairs(t) do t[i] = v == v and string.unpack("f", string.pack("f", v)) or v end
    end
    return t
  end
  local function first(t, lo, hi, max)
    local bi
    for i = lo, hi do
      if t[i] ~= t[i] then return i - lo + 1 end
      if not bi or (max and t[i] > t[bi]) or (not max and t[i] < t[bi]) then bi = i end
    end
    return bi - lo + 1
  end
  local function same(a, b) return a == b and 1 / a == 1 / b or a ~= a and b ~= b end
  for _, kind in ipairs({"host", "device"}) do
    for _, dt in ipairs({"float32", "float64"}) do
      it(("of %s %s arrays"):format(kind, dt), function()
        for _, n in ipairs(lens) do
          local t = values(n, dt)
          local a = luacuda.array(t, dt):reshape(4, 3, n)
          if kind == "device" then a = luacuda.to_device(a) end
          -- the same values with the last axis at a stride: the general loop
          local strided = a:transpose(3, 1, 2):copy():transpose(2, 3, 1)
          for _, op in ipairs({"sum", "prod", "mean", "min", "max", "argmin", "argmax"}) do
            local got, want = host(a[op](a, 3)), host(strided[op](strided, 3))
            assert.equal(op:sub(1, 3) == "arg" and "int64" or dt, got.dtype)
            for o = 1, 12 do
              local i, j = (o - 1) // 3 + 1, (o - 1) % 3 + 1
              local x, y = got[{i, j}], want[{i, j}]
              if not same(x, y) then
                error(("%s over a last axis of %d, output %d: %.17g, at a stride %.17g")
                      :format(op, n, o, x, y))
              end
              if op == "argmin" or op == "argmax" then
                assert.equal(first(t, (o - 1) * n + 1, o * n, op == "argmax"), x,
                             ("%s over %d, output %d"):format(op, n, o))
              end
            end
          end
          local s = host(a:sum(3))
          assert.is_true(1 / s[{1, 1}] > 0 or n > 2, "0 + -0 + -0 is +0, as before")
          assert.is_true(s[{1, 2}] ~= s[{1, 2}] and host(a:max(3))[{1, 2}] ~= host(a:max(3))[{1, 2}])
        end
      end)
    end
  end
end)

-- Inputs and results saved as .npy, NumPy's computed from the inputs.
local CASES = [==[
local l = require "luacuda"
local dir = arg[1]
local g = l.random(31)
local function put(name, x)
  if x.kind ~= "host" then x = x:copy_to_host() end
  l.save(dir .. "/" .. name .. ".npy", x)
end
for _, dt in ipairs({"float32", "float64", "int32"}) do
  local a = dt == "int32" and g:integers(-50, 50, {6, 130, 9}, dt, {kind = "host"})
            or g:uniform({6, 130, 9}, dt, {kind = "host", low = -1, high = 1})
  put(dt .. "_in", a)
  for _, kind in ipairs({"host", "device"}) do
    local x = kind == "host" and a or l.to_device(a)
    for ax = 1, 3 do
      put(("%s_%s_sum_%d"):format(dt, kind, ax), x:sum(ax))
      put(("%s_%s_argmax_%d"):format(dt, kind, ax), x:argmax(ax))
      put(("%s_%s_argmin_%d"):format(dt, kind, ax), x:argmin(ax))
    end
    put(("%s_%s_sum_12"):format(dt, kind), x:sum({1, 2}))
    print(dt, kind, x:argmax(), x:argmin())
  end
end
]==]

local CHECK = [==[
import glob, os, sys
import numpy as np
d = sys.argv[1]
for f in sorted(glob.glob(d + "/*_*_*_*.npy")):
    dt, kind, op, ax = os.path.basename(f)[:-4].split("_")
    a = np.load(d + "/" + dt + "_in.npy")
    axis = tuple(int(c) - 1 for c in ax)
    got = np.load(f)
    if op == "sum":
        want = a.sum(axis=axis)
        ok = got.dtype == want.dtype and got.shape == want.shape and \
            np.allclose(got, want, rtol=1e-5 if dt == "float32" else 1e-12, atol=1e-5)
    else:
        want = getattr(a, op)(axis=axis[0]) + 1
        ok = got.dtype == np.int64 and got.shape == want.shape and (got == want).all()
    print("ok" if ok else "BAD", dt, kind, op, ax)
for dt in ("float32", "float64", "int32"):
    a = np.load(d + "/" + dt + "_in.npy")
    print("whole", dt, a.argmax() + 1, a.argmin() + 1)
]==]

describe("reductions over every axis against NumPy", function()
  it("sum, argmax and argmin over each axis, host and device", function()
    if not have_numpy then return pending("needs /usr/bin/python3 with NumPy") end
    local dir = S.tmpdir()
    local f = assert(io.open(dir .. "/cases.lua", "w"))
    f:write(CASES)
    f:close()
    local ok, out = S.sh(("lua5.4 %s/cases.lua %s"):format(dir, dir))
    assert(ok, out)
    f = assert(io.open(dir .. "/check.py", "w"))
    f:write(CHECK)
    f:close()
    local ok2, want = S.sh(("%s %s/check.py %s"):format(PYTHON, dir, dir))
    os.execute("rm -rf " .. dir)
    assert(ok2, want)
    assert.is_nil(want:find("BAD", 1, true), want)
    local _, n = want:gsub("ok ", "")
    assert.equal(3 * 2 * 10, n, want)            -- 3 dtypes, 2 kinds, 10 results each
    -- the whole array's argmax and argmin: NumPy's, on both kinds
    for dt, amax, amin in want:gmatch("whole (%S+) (%d+) (%d+)") do
      for _, kind in ipairs({"host", "device"}) do
        assert.matches(("%s\t%s\t%s\t%s"):format(dt, kind, amax, amin), out, 1, true)
      end
    end
  end)
end)
