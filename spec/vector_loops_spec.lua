-- The host's contiguous elementwise loops (src/base/ufunc_host.c), built to
-- vectorise (the Makefile's LOOP_CFLAGS, -fno-math-errno): IEEE's special
-- values hold in every lane and in the tail, host and device.
local S = require "spec.support"
local luacuda = require "luacuda"

local SPECIAL = {-1, -0.0, 0, 1, 4, 1 / 0, -1 / 0, 0 / 0, 1e-40, 2, 9, 16, 0.25, -4, 100}

local function host(x) return x.kind == "host" and x or x:copy_to_host() end

describe("vectorised contiguous loops", function()
  for _, kind in ipairs({"host", "device"}) do
    for _, dt in ipairs({"float32", "float64"}) do
      it(("keep sqrt's and exp's special values (%s %s)"):format(kind, dt), function()
        -- 15 values repeated: every position of a vector, and a tail
        local t = {}
        for i = 1, 15 * 7 do t[i] = SPECIAL[(i - 1) % 15 + 1] end
        local a = luacuda.array(t, dt)
        if kind == "device" then a = luacuda.to_device(a) end
        local s, e = host(luacuda.sqrt(a)), host(luacuda.exp(a))
        local o = luacuda.empty_like(host(a))
        if kind == "device" then o = luacuda.to_device(o) end
        luacuda.sqrt(a, o)
        local so = host(o)
        local stored = host(a)              -- 1e-40 as float32 is a subnormal
        for i = 1, #t do
          local x = stored[i]
          local want = x < 0 and 0 / 0 or math.sqrt(x)
          if dt == "float32" then want = string.unpack("f", string.pack("f", want)) end
          local got = s[i]
          if want ~= want then
            assert(got ~= got, ("sqrt(%g) gave %g, not NaN"):format(x, got))
          else
            assert.equal(want, got)
            if x == 0 then assert.equal(1 / x, 1 / got) end       -- sqrt(-0) is -0
          end
          assert(so[i] == got or (so[i] ~= so[i] and got ~= got))
          local ex = e[i]
          if x ~= x then assert(ex ~= ex)
          elseif x == 1 / 0 or (dt == "float32" and x == 100) then
            assert.equal(1 / 0, ex)                              -- overflow: infinity
          elseif x == -1 / 0 then assert.equal(0, ex)
          else assert.near(math.exp(x), ex, math.exp(x) * 1e-6) end
          assert.equal(dt, s.dtype)
        end
      end)
    end
  end
end)

describe("float32 exp on the host", function()
  -- float arithmetic alone (src/base/ufunc_host.c's host_expf): within one
  -- unit in the last place of the nearest float32, contiguous (vectorised)
  -- and strided alike
  local function f32(v) return string.unpack("f", string.pack("f", v)) end
  local function ulp(v)
    local m, e = math.frexp(math.abs(v))
    return 2.0 ^ (math.max(e, -125) - 24)
  end
  for _, kind in ipairs({"host", "device"}) do
    it(("is within 1 ulp of exp, in every lane and strided (%s)"):format(kind), function()
      if kind == "device" and S.backend ~= "sim" then
        return pending("simulator only: the host's loop computes its device arrays (a GPU's expf is within 2 ulp)")
      end
      local t = {}
      for i = 1, 3001 do t[i] = -103.9 + (88.7 + 103.9) * (i - 1) / 3000 end
      local a = luacuda.array(t, "float32")
      local h = a
      if kind == "device" then a = luacuda.to_device(a) end
      local e = host(luacuda.exp(a))
      local every2 = host(luacuda.exp(a[{{1, -1, 2}}]))       -- strided: the scalar path
      for i = 1, #t do
        local x = h[i]
        local want = f32(math.exp(x))
        if math.abs(e[i] - want) > ulp(want) then
          error(("exp(%.9g) gave %.9g, the nearest float32 is %.9g"):format(x, e[i], want))
        end
        if i % 2 == 1 then assert.equal(e[i], every2[(i + 1) // 2]) end
      end
    end)
  end

  it("is the nearest float32 but for a few inputs in 100 in a dense sweep", function()
    -- 16,384 inputs over the whole range (subnormal results included) and
    -- 4,096 around 0, where 1 + r rounds: never more than 1 ulp off, and
    -- off the nearest for under 4 inputs in 100 (about 2.5 over the range;
    -- 1 + r + r^2 q summed plainly, not keeping 1 + r's rounding error, 9)
    local t = {}
    for i = 0, 16383 do t[#t + 1] = -103.9 + (88.7 + 103.9) * i / 16383 end
    for i = -2048, 2047 do t[#t + 1] = i * 2.0 ^ -20 * 1.37 end
    local a = luacuda.array(t, "float32")
    local e = luacuda.exp(a)
    local off = 0
    for i = 1, #t do
      local x = a[i]
      local want, got = f32(math.exp(x)), e[i]
      if got ~= want then
        off = off + 1
        if math.abs(got - want) > ulp(want) then
          error(("exp(%.9g) gave %.9g, the nearest float32 is %.9g"):format(x, got, want))
        end
      end
    end
    assert(off < #t * 0.04, ("%d of %d inputs off the nearest float32"):format(off, #t))
  end)
end)

describe("float64 exp on the host", function()
  -- inline arithmetic, vectorised (src/base/ufunc_host.c's host_exp): within
  -- one unit in the last place of the C library's exp over the whole range,
  -- subnormal results and the edges of overflow and underflow included,
  -- contiguous and strided alike
  local function bits(v) return string.unpack("<i8", string.pack("<d", v)) end
  local function ulps(got, want)             -- the doubles between them (same sign)
    if got == want then return 0 end
    return math.abs(bits(got) - bits(want))
  end
  for _, kind in ipairs({"host", "device"}) do
    it(("is within 1 ulp of exp, in every lane and strided (%s)"):format(kind), function()
      if kind == "device" and S.backend ~= "sim" then
        return pending("simulator only: the host's loop computes its device arrays (a GPU's exp is its own)")
      end
      local t = {}
      for i = 1, 2001 do t[i] = -745.5 + (709.9 + 745.5) * (i - 1) / 2000 end    -- the range
      for i = 1, 1001 do t[#t + 1] = -2 + 4 * (i - 1) / 1000 + 1e-7 * i end     -- near 0
      for _, v in ipairs({0.0, -0.0, 1.0, -1.0, 709.78, 709.79, -708.39, -708.4, -745.13,
                          -745.14, -1e-300, 1e-300, 1 / 0, -1 / 0, 0 / 0}) do
        t[#t + 1] = v
      end
      local a = luacuda.array(t, "float64")
      if kind == "device" then a = luacuda.to_device(a) end
      local e = host(luacuda.exp(a))
      local every2 = host(luacuda.exp(a[{{1, -1, 2}}]))       -- strided: the scalar path
      local worst = 0
      for i = 1, #t do
        local x, got, want = t[i], e[i], math.exp(t[i])
        if want ~= want then
          assert(got ~= got, ("exp(%.17g) gave %.17g, not NaN"):format(x, got))
        else
          local u = ulps(got, want)
          if u > 1 then error(("exp(%.17g) gave %.17g, the C library %.17g"):format(x, got, want)) end
          worst = math.max(worst, u)
        end
        if i % 2 == 1 then
          local s = every2[(i + 1) // 2]
          assert(s == got or (s ~= s and got ~= got), ("exp(%.17g): strided %.17g, contiguous %.17g"):format(x, s, got))
        end
      end
      assert.equal(1 / 0, e[#t - 2])
      assert.equal(0, e[#t - 1])
      assert.equal(1.0, e[#t - 14])
      assert.is_true(e[#t - 6] > 0 and e[#t - 6] < 1e-323)   -- exp(-745.13): the least subnormal
      assert.equal(0, e[#t - 5])
    end)
  end
end)
