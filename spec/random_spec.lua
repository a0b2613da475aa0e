-- Random numbers: luacuda.random's generators (Philox4x32-10) against a
-- plain-Lua Philox here, bit for bit (uniform, integers) or within a
-- tolerance (normal: log, sin and cos may differ in the last bit between
-- the C library and CUDA's); the device, each host memory kind and kernels
-- using the prelude's helpers at several launch shapes giving the same
-- bits; state and resume, split; statistical sanity with a fixed seed; and
-- every error. On make check the device side is the simulator's host loop;
-- on make check-fake-cuda it is kernels/random.cu's PTX, run by the fake
-- driver's interpreter.
local luacuda = require "luacuda"
local S = require "spec.support"

-- ---- the reference: Philox4x32-10 in Lua integers ---------------------------

local M32 = 0xffffffff

local function philox(c0, c1, c2, c3, k0, k1)
  for r = 1, 10 do
    if r > 1 then
      k0 = (k0 + 0x9E3779B9) & M32
      k1 = (k1 + 0xBB67AE85) & M32
    end
    local p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2     -- < 2^64: the bits wrap right
    c0, c1, c2, c3 = ((p1 >> 32) ~ c1 ~ k0) & M32, p1 & M32, ((p0 >> 32) ~ c3 ~ k1) & M32, p0 & M32
  end
  return { c0, c1, c2, c3 }
end

-- block b of the main stream of key
local function block(key, b) return philox(b & M32, b >> 32, 0, 0, key & M32, key >> 32) end

-- the words of a call: word(i) is word i (0-based) of the stream from block counter on
local function stream(seed, counter)
  local cache = {}
  return function(i)
    local b = counter + i // 4
    local w = cache[b]
    if not w then
      w = block(seed, b)
      cache[b] = w
    end
    return w[i % 4 + 1]
  end
end

local TWO24, TWO53 = 2.0 ^ 24, 2.0 ^ 53
local function u01f(u) return (u >> 8) / TWO24 end
local function u01d(first, second) return (((second << 32) | first) >> 11) / TWO53 end
local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end

-- uniform element i of a call (low and high chosen so that fma is exact)
local function ref_uniform(seed, counter, n, dt, low, high)
  local w, out = stream(seed, counter), {}
  for i = 0, n - 1 do
    if dt == "float32" then
      out[i + 1] = f32(u01f(w(i)) * f32(f32(high) - f32(low)) + f32(low))
    else
      out[i + 1] = u01d(w(2 * i), w(2 * i + 1)) * (high - low) + low
    end
  end
  return out
end

local function ref_normal(seed, counter, n, dt, mean, std)
  local w, out = stream(seed, counter), {}
  for p = 0, (n + 1) // 2 - 1 do
    local u1, u2
    if dt == "float32" then
      u1, u2 = ((w(2 * p) >> 8) + 1) / TWO24, u01f(w(2 * p + 1))
    else
      u1 = ((((w(4 * p + 1) << 32) | w(4 * p)) >> 11) + 1) / TWO53
      u2 = u01d(w(4 * p + 2), w(4 * p + 3))
    end
    local r, t = math.sqrt(-2 * math.log(u1)), 2 * math.pi * u2
    out[2 * p + 1] = r * math.cos(t) * std + mean
    if 2 * p + 2 <= n then out[2 * p + 2] = r * math.sin(t) * std + mean end
  end
  return out
end

-- the high and low 64 bits of the unsigned product of two 64-bit values
local function mul64(a, b)
  local a0, a1, b0, b1 = a & M32, a >> 32, b & M32, b >> 32
  local p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
  local mid = (p00 >> 32) + (p01 & M32) + (p10 & M32)
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32), (mid << 32) | (p00 & M32)
end
-- 2^64 mod r, r an unsigned 64-bit value >= 1
local function two64_mod(r)
  if r < 0 then return -r end                      -- r > 2^63: 2^64 - r < r
  local m = (math.maxinteger % r + 1) % r          -- 2^63 mod r
  local t = 2 * m                                  -- < 2^64: compare unsigned
  while not math.ult(t, r) do t = t - r end
  return t
end

local function ref_integers(seed, counter, n, low, high)
  local range = high - low                          -- the unsigned bits
  local words = (range > 0 and range <= 1 << 32) and 1 or 2
  local per = 4 // words
  local k0, k1 = seed & M32, seed >> 32
  local out = {}
  for i = 0, n - 1 do
    local b, k = counter + i // per, i % per
    local w = block(seed, b)
    local v
    if words == 1 then
      local u = w[k + 1]
      if range == 1 << 32 then
        v = u
      else
        local m = u * range
        if m & M32 < range then
          local t = ((1 << 32) - range) % range
          local attempt = 1
          while m & M32 < t do
            u = philox(b & M32, b >> 32, attempt, 0x10000 + k, k0, k1)[1]
            m = u * range
            attempt = attempt + 1
          end
        end
        v = m >> 32
      end
    else
      local x = (w[2 * k + 2] << 32) | w[2 * k + 1]
      local h, l = mul64(x, range)
      if math.ult(l, range) then
        local t = two64_mod(range)
        local attempt = 1
        while math.ult(l, t) do
          local r = philox(b & M32, b >> 32, attempt, 0x10000 + 2 * k, k0, k1)
          h, l = mul64((r[2] << 32) | r[1], range)
          attempt = attempt + 1
        end
      end
      v = h
    end
    out[i + 1] = low + v
  end
  return out
end

-- ---- helpers ----------------------------------------------------------------

local function host(a) return a:copy_to_host():totable() end

local function same(want, got, what)
  assert.equal(#want, #got, what)
  for i = 1, #want do
    if want[i] ~= got[i] then
      error(("%s: element %d is %s, want %s"):format(what, i, tostring(got[i]), tostring(want[i])), 2)
    end
  end
end

local function close(want, got, tol, what)
  assert.equal(#want, #got, what)
  for i = 1, #want do
    if math.abs(want[i] - got[i]) > tol * math.max(1, math.abs(want[i])) then
      error(("%s: element %d is %.17g, want %.17g"):format(what, i, got[i], want[i]), 2)
    end
  end
end

local HOST_KINDS = { "host", "pinned", "mapped", "managed" }

-- ---- the generator ------------------------------------------------------------

describe("luacuda.random", function()
  it("is Philox4x32-10: the reference matches Random123's known answers", function()
    -- so that agreeing with the reference means agreeing with Philox
    assert.same({ 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 }, philox(0, 0, 0, 0, 0, 0))
    assert.same({ 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd },
                philox(M32, M32, M32, M32, M32, M32))
    assert.same({ 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 },
                philox(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0))
  end)

  it("gives uniform floats with the reference's bits, on the device and the host", function()
    local n = 3001
    for _, dt in ipairs { "float32", "float64" } do
      for _, seed in ipairs { 0, 42, 0x123456789abcdef } do
        local want = ref_uniform(seed, 0, n, dt, 0, 1)
        same(want, host(luacuda.random(seed):uniform(n, dt)), dt .. " seed " .. seed)
        same(want, luacuda.random(seed):uniform(n, dt, { kind = "host" }):totable(),
             dt .. " seed " .. seed .. " on the host")
      end
      local g = luacuda.random(9)
      g:uniform(5, dt)
      local counter = g:state().counter
      -- a range where the reference's multiply and add round as one fma:
      -- float32's product is exact in a double, float64's scale a power of 2
      local high = dt == "float32" and 3 or 2
      local want = ref_uniform(9, counter, n, dt, -2, high)
      same(want, host(g:uniform(n, dt, { low = -2, high = high })), dt .. " on [-2, high)")
    end
    -- float64 by default, on [0, 1)
    local a = luacuda.random(1):uniform({ 2, 3 })
    assert.equal("device", a.kind)
    assert.equal("float64", a.dtype)
    assert.same({ 2, 3 }, a.shape)
    local t, want = host(a), ref_uniform(1, 0, 6, "float64", 0, 1)
    assert.same({ { want[1], want[2], want[3] }, { want[4], want[5], want[6] } }, t)
  end)

  it("gives integers with the reference's bits, rejections included", function()
    local cases = {
      { 0, 10, "int32" }, { -5, 5, "int8" }, { 0, 255, "uint8" },
      { 0, 3 << 30, "int64" },                    -- 32-bit: a quarter of the draws rejected
      { 0, 1 << 32, "uint32" },                   -- the whole word
      { 7, (3 << 40) + 7, "int64" },              -- 64-bit Lemire
      { -(1 << 62) - 1, 1 << 62, "int64" },       -- 2^63 + 1: about half rejected
      { math.mininteger, math.maxinteger, "int64" },
      { 0, math.maxinteger, "uint64" },
    }
    for _, c in ipairs(cases) do
      local low, high, dt = c[1], c[2], c[3]
      local want = ref_integers(77, 0, 2003, low, high)
      local what = ("[%d, %d) %s"):format(low, high, dt)
      local got = host(luacuda.random(77):integers(low, high, 2003, dt))
      if dt == "uint64" or dt == "uint32" then
        for i = 1, #got do got[i] = math.tointeger(got[i]) or got[i] end
      end
      same(want, got, what)
      same(want, luacuda.random(77):integers(low, high, 2003, dt, { kind = "host" }):totable(),
           what .. " on the host")
    end
    -- int64 by default; every integer dtype holds the same values
    local a = luacuda.random(3):integers(0, 100, 50)
    assert.equal("int64", a.dtype)
    local want = host(a)
    for _, dt in ipairs { "int8", "int16", "int32", "uint8", "uint16", "uint32", "uint64" } do
      same(want, host(luacuda.random(3):integers(0, 100, 50, dt)), dt)
    end
  end)

  it("gives normals within a last-bit tolerance of the reference", function()
    for _, dt in ipairs { "float32", "float64" } do
      local tol = dt == "float32" and 1e-5 or 1e-12
      for _, n in ipairs { 1, 2, 7, 2001 } do
        close(ref_normal(5, 0, n, dt, 0, 1), host(luacuda.random(5):normal(n, dt)), tol,
              dt .. " n " .. n)
      end
      close(ref_normal(5, 0, 999, dt, 2, 0.5),
            luacuda.random(5):normal(999, dt, { mean = 2, std = 0.5, kind = "host" }):totable(),
            tol, dt .. " mean 2, std 0.5 on the host")
      -- the host and the device compute alike here
      local d = host(luacuda.random(8):normal(1000, dt, { mean = -1, std = 3 }))
      local h = luacuda.random(8):normal(1000, dt, { mean = -1, std = 3, kind = "host" }):totable()
      close(h, d, tol, dt .. " host against device")
    end
  end)

  it("gives the same bits in every memory kind", function()
    for _, kind in ipairs(HOST_KINDS) do
      local a = luacuda.random(11):uniform(1001, "float32", { kind = kind })
      assert.equal(kind, a.kind)
      same(ref_uniform(11, 0, 1001, "float32", 0, 1), host(a), kind)
      local b = luacuda.random(11):integers(-3, 1000, 999, "int16", { kind = kind })
      same(ref_integers(11, 0, 999, -3, 1000), host(b), kind .. " integers")
    end
  end)

  it("moves the counter past the blocks each call used", function()
    local g = luacuda.random(21)
    assert.same({ seed = 21, counter = 0 }, g:state())
    g:uniform(10, "float32")            -- 10 words: 3 blocks
    assert.same({ seed = 21, counter = 3 }, g:state())
    g:uniform(3)                        -- 6 words: 2 blocks
    assert.equal(5, g:state().counter)
    g:normal(5, "float32")              -- 5 words: 2 blocks
    assert.equal(7, g:state().counter)
    g:normal(5)                         -- 10 words: 3 blocks
    assert.equal(10, g:state().counter)
    g:integers(0, 6, 4)                 -- 4 words
    assert.equal(11, g:state().counter)
    g:integers(0, (1 << 32) + 1, 4)     -- 8 words
    assert.equal(13, g:state().counter)
    g:uniform(0)
    g:uniform({ 0, 5 }, "float32")
    assert.equal(13, g:state().counter)
    assert.equal("luacuda.generator(seed 21, counter 13)", tostring(g))
    -- each call goes on where the last stopped
    same(ref_uniform(21, 13, 9, "float64", 0, 1), host(g:uniform(9)), "after the others")
  end)

  it("saves and resumes its state", function()
    local g = luacuda.random(123)
    g:uniform(100)
    local st = g:state()
    local a = host(g:uniform(300, "float32"))
    local b = host(g:integers(0, 9, 50))
    local r = luacuda.random(st)
    same(a, host(r:uniform(300, "float32")), "uniform after resuming")
    same(b, host(r:integers(0, 9, 50)), "integers after resuming")
    assert.same(g:state(), r:state())
    -- a state without its counter starts at 0; a float with an integral value is a seed
    same(host(luacuda.random(123):uniform(10)), host(luacuda.random({ seed = 123 }):uniform(10)),
         "seed only")
    same(host(luacuda.random(123):uniform(10)), host(luacuda.random(123.0):uniform(10)), "123.0")
    -- the state is a plain table: changing it changes no generator
    st.counter = 0
    assert.same(g:state(), r:state())
    assert.are_not.equal(0, r:state().counter)
  end)

  it("splits into independent generators with keys of their own", function()
    local g = luacuda.random(2024)
    g:uniform(4)
    local before = g:state()
    local kids = g:split(4)
    assert.equal(4, #kids)
    assert.equal(before.counter + 1, g:state().counter)
    local seen, firsts = { [2024] = true }, {}
    for i, k in ipairs(kids) do
      local st = k:state()
      assert.equal(0, st.counter)
      assert.truthy(st.seed >= 0)
      assert.is_nil(seen[st.seed], "child " .. i .. " repeats a key")
      seen[st.seed] = true
      -- a child's stream is its key's: the reference reproduces it
      local a = host(k:uniform(64, "float32"))
      same(ref_uniform(st.seed, 0, 64, "float32", 0, 1), a, "child " .. i)
      firsts[i] = a[1]
    end
    -- the same parent state splits the same way; the next split differs
    local again = luacuda.random(before):split(4)
    for i = 1, 4 do assert.equal(kids[i]:state().seed, again[i]:state().seed) end
    local next = g:split(1)[1]
    for i = 1, 4 do assert.are_not.equal(kids[i]:state().seed, next:state().seed) end
    -- a child resumes from its state
    local kid = kids[2]
    local st = kid:state()
    same(host(kid:normal(10)), host(luacuda.random(st):normal(10)), "a child resumed")
  end)

  it("fills an output array, through any strides", function()
    local out = luacuda.device_array({ 6, 4 }, "float32")
    local r = luacuda.random(31):uniform({ 6, 4 }, "float32", { out = out })
    assert.equal(out, r)
    same(ref_uniform(31, 0, 24, "float32", 0, 1), host(out:reshape(24)), "into out")
    -- a transposed view: elements in the view's own (C) order
    local base = luacuda.device_array({ 4, 6 }, "float64")
    local view = base.T
    luacuda.random(31):uniform(nil, nil, { out = view })  -- shape and dtype from out
    local want = ref_uniform(31, 0, 24, "float64", 0, 1)
    local got, i = host(view), 0
    for a = 1, 6 do
      for b = 1, 4 do
        i = i + 1
        assert.equal(want[i], got[a][b])
      end
    end
    -- a slice of a host array, on the host
    local h = luacuda.zeros({ 10 }, "int32")
    luacuda.random(31):integers(1, 7, 5, { out = h[{ { 1, 10, 2 } }] })
    local t, w = h:totable(), ref_integers(31, 0, 5, 1, 7)
    for k = 1, 5 do
      assert.equal(w[k], t[2 * k - 1])
      assert.equal(0, t[2 * k])
    end
  end)

  it("queues its work on the stream given", function()
    local s = luacuda.stream()
    local a = luacuda.random(4):uniform(5000, "float32", { stream = s })
    local b = luacuda.random(4):integers(0, 1000, 5000, "int32", { stream = s })
    s:synchronize()
    same(ref_uniform(4, 0, 5000, "float32", 0, 1), host(a), "on a stream")
    same(ref_integers(4, 0, 5000, 0, 1000), host(b), "integers on a stream")
    s:close()
  end)

  it("gives the reference's bits from a call that loops its grid", function()
    -- the CUDA backend launches at most 1024 blocks of 256 threads, each
    -- thread a block of the generator (4 float32 values) at a time: past
    -- 2^20 values, threads take a second
    local n = (1 << 20) + 5
    local t = host(luacuda.random(6):uniform(n, "float32"))
    local w = stream(6, 0)
    for j = 0, 99 do assert.equal(u01f(w(j)), t[j + 1]) end
    for j = (1 << 20) - 100, n - 1 do assert.equal(u01f(w(j)), t[j + 1]) end
  end)

  it("gives kernels the same bits through the prelude, at any launch shape", function()
    local m = luacuda.compile([[
extern "C" __global__ void kat(unsigned int *out) {
  if (grid1() != 0) return;
  uint4 a = lc_philox4x32(make_uint4(0, 0, 0, 0), make_uint2(0, 0));
  uint4 b = lc_philox4x32(make_uint4(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u),
                          make_uint2(0xa4093822u, 0x299f31d0u));
  out[0] = a.x; out[1] = a.y; out[2] = a.z; out[3] = a.w;
  out[4] = b.x; out[5] = b.y; out[6] = b.z; out[7] = b.w;
  uint2 k = lc_philox_key(0x0123456789abcdefull);
  out[8] = k.x; out[9] = k.y;
}
extern "C" __global__ void draw(float *f, double *d, float *z, unsigned long long seed,
                                unsigned long long counter, int n) {
  for (int i = grid1(); i < n; i += gridsize1()) {
    f[i] = lc_uniform_float(lc_random_word(seed, counter, i));
    d[i] = lc_uniform_double(lc_random_word(seed, counter, 2 * i),
                             lc_random_word(seed, counter, 2 * i + 1));
    if (i % 2 == 0 && i + 1 < n) {
      float2 p = lc_normal_float2(lc_random_word(seed, counter, i),
                                  lc_random_word(seed, counter, i + 1));
      z[i] = p.x;
      z[i + 1] = p.y;
    }
  }
}
]], { name = "random_prelude.cu" })
    local k = luacuda.device_array(10, "uint32")
    m.kat[{ 1, 32 }](k)
    assert.same({ 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8,
                  0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1, 0x89abcdef, 0x01234567 }, host(k))
    local n = 2000
    local g = luacuda.random(55)
    g:uniform(17)
    local st = g:state()
    local fw, dw = host(g:uniform(n, "float32")), host(g:uniform(n))
    local zw = host(luacuda.random(st):normal(n, "float32"))
    for _, shape in ipairs { { 1, 1 }, { 1, 32 }, { 7, 64 }, { 16, 128 }, { 40, 50 } } do
      local f, d = luacuda.device_array(n, "float32"), luacuda.device_array(n, "float64")
      local z = luacuda.device_array(n, "float32")
      m.draw[shape](f, d, z, st.seed, st.counter, n)
      local what = ("grid %d, block %d"):format(shape[1], shape[2])
      same(fw, host(f), "float32, " .. what)
      same(ref_uniform(55, st.counter, n, "float64", 0, 1), host(d), "float64, " .. what)
      same(zw, host(z), "normal float32, " .. what)
    end
    same(ref_uniform(55, st.counter, n, "float32", 0, 1), fw, "g:uniform, float32")
    -- g's float64 call came after its float32 one: the reference says where
    same(ref_uniform(55, st.counter + n // 4, n, "float64", 0, 1), dw, "g:uniform, float64")
  end)

  -- ---- statistics, with a fixed seed ---------------------------------------

  -- the standard normal's distribution function (erfc by W. J. Cody's
  -- rational approximations would do better; this one's error, below 1.2e-7,
  -- is far under the KS bound at 10^6)
  local function phi(x)
    local z = math.abs(x) / math.sqrt(2)
    local t = 1 / (1 + 0.5 * z)
    local r = t * math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418
      + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587
      + t * (-0.82215223 + t * 0.17087277)))))))))
    return x >= 0 and 1 - r / 2 or r / 2
  end

  local function moments(t)
    local s, s2 = 0, 0
    for i = 1, #t do s = s + t[i] end
    local mean = s / #t
    for i = 1, #t do s2 = s2 + (t[i] - mean) ^ 2 end
    return mean, s2 / (#t - 1)
  end

  local function ks(t, cdf)
    table.sort(t)
    local n, d = #t, 0
    for i = 1, n do
      local f = cdf(t[i])
      d = math.max(d, i / n - f, f - (i - 1) / n)
    end
    return d
  end

  it("passes mean, variance and Kolmogorov-Smirnov checks #heavy", function()
    -- the fake driver interprets the kernels' PTX: fewer values there
    local n = S.fake and 10000 or 1000000
    local crit = 1.628 / math.sqrt(n)           -- KS at 1%
    local g = luacuda.random(20240601)
    for _, dt in ipairs { "float64", "float32" } do
      local u = host(g:uniform(n, dt))
      local mean, var = moments(u)
      assert.is_true(math.abs(mean - 0.5) < 5 * math.sqrt(1 / 12 / n), dt .. " uniform mean " .. mean)
      assert.is_true(math.abs(var - 1 / 12) < 5 * math.sqrt((1 / 80 - 1 / 144) / n),
                     dt .. " uniform variance " .. var)
      local d = ks(u, function(x) return x end)
      assert.is_true(d < crit, ("%s uniform: KS %g >= %g"):format(dt, d, crit))
      local z = host(g:normal(n, dt))
      mean, var = moments(z)
      assert.is_true(math.abs(mean) < 5 / math.sqrt(n), dt .. " normal mean " .. mean)
      assert.is_true(math.abs(var - 1) < 5 * math.sqrt(2 / n), dt .. " normal variance " .. var)
      d = ks(z, phi)
      assert.is_true(d < crit, ("%s normal: KS %g >= %g"):format(dt, d, crit))
    end
  end)

  it("draws integers without bias (chi-square)", function()
    local function chi2(t, k, bucket)
      local count = {}
      for b = 0, k - 1 do count[b] = 0 end
      for i = 1, #t do
        local b = bucket(t[i])
        count[b] = count[b] + 1
      end
      local e, x = #t / k, 0
      for b = 0, k - 1 do x = x + (count[b] - e) ^ 2 / e end
      return x
    end
    local n = S.fake and 20000 or 100000
    local g = luacuda.random(99)
    -- 10 values: 9 degrees of freedom, 21.67 at 1%
    local x = chi2(host(g:integers(0, 10, n, "int32")), 10, function(v) return v end)
    assert.is_true(x < 21.67, "chi-square of [0, 10): " .. x)
    -- [0, 3 * 2^30) by thirds: a modulo would put half the draws in the
    -- first third; 2 degrees of freedom, 9.21 at 1%
    x = chi2(host(g:integers(0, 3 << 30, n)), 3, function(v) return v >> 30 end)
    assert.is_true(x < 9.21, "chi-square of [0, 3 * 2^30) by thirds: " .. x)
    -- [0, 2^63 + 1) by halves, the 64-bit path (half its draws rejected)
    x = chi2(host(g:integers(-(1 << 62) - 1, 1 << 62, n)), 2,
             function(v) return v < 0 and 0 or 1 end)
    assert.is_true(x < 6.63, "chi-square of [-2^62 - 1, 2^62) by halves: " .. x)
  end)

  -- ---- errors --------------------------------------------------------------

  it("refuses a bad seed or state", function()
    S.misuse("luacuda.random: seed must be a non-negative integer or a state {seed =, counter =}, got no value",
             luacuda.random)
    S.misuse("luacuda.random: seed must be a non-negative integer or a state {seed =, counter =}, got string",
             luacuda.random, "42")
    S.misuse("luacuda.random: seed must be a non-negative integer, got -1", luacuda.random, -1)
    S.misuse("luacuda.random: seed must be a non-negative integer, got 1.5", luacuda.random, 1.5)
    S.misuse("luacuda.random: a state has the keys seed and counter only, got 'conter'",
             luacuda.random, { seed = 1, conter = 2 })
    S.misuse("luacuda.random: a state has the keys seed and counter only, got a number key",
             luacuda.random, { seed = 1, 5 })
    S.misuse("luacuda.random: a state needs its seed", luacuda.random, { counter = 3 })
    S.misuse("luacuda.random: the state's seed must be a non-negative integer, got string",
             luacuda.random, { seed = "1" })
    S.misuse("luacuda.random: the state's counter must be a non-negative integer, got -4",
             luacuda.random, { seed = 1, counter = -4 })
  end)

  it("refuses a bad shape, dtype or option, leaving the generator as it was", function()
    local g = luacuda.random(1)
    -- initialised: S.misuse reads the arguments before and after
    local a = luacuda.to_device(luacuda.zeros(3, "float32"))
    local function bad(pattern, method, ...)
      S.misuse(pattern, g[method], g, ...)
      assert.same({ seed = 1, counter = 0 }, g:state())
    end
    bad("luacuda.uniform: shape must be a number or a table of numbers, got string", "uniform", "x")
    bad("luacuda.uniform: shape must be a number or a table of numbers, got no value", "uniform")
    bad("luacuda.uniform: shape entry 1 is negative (-1)", "uniform", { -1 })
    bad("luacuda.uniform: dtype must be float32 or float64, got int32", "uniform", 4, "int32")
    bad("luacuda.uniform: dtype must be float32 or float64, got float16", "uniform", 4, "float16")
    bad("luacuda.uniform: unknown dtype 'float99'", "uniform", 4, "float99")
    bad("luacuda.uniform: dtype must be a string such as 'float32' or a record, got number",
        "uniform", 4, 5)
    bad("luacuda.uniform: options must be a table, got number", "uniform", 4, "float64", 5)
    bad("luacuda.uniform: unknown option mean", "uniform", 4, { mean = 1 })
    bad("luacuda.uniform: low must be less than high, got low = 1, high = 1", "uniform", 4,
        { low = 1, high = 1 })
    bad("luacuda.uniform: low must be less than high, got low = 2, high = 1", "uniform", 4,
        { low = 2 })
    bad("luacuda.uniform: low must be a number, got string", "uniform", 4, { low = "0" })
    bad("luacuda.uniform: high must be finite, got inf", "uniform", 4, { high = math.huge })
    bad("luacuda.uniform: high - low overflows float64", "uniform", 4, { low = -1e308, high = 1e308 })
    bad("luacuda.uniform: high - low overflows float32", "uniform", 4, "float32",
        { low = -3e38, high = 3e38 })
    bad("luacuda.uniform: low = -1e+39, high = 1: beyond float32's range", "uniform", 4,
        "float32", { low = -1e39 })
    bad("luacuda.uniform: low = 1 and high = 1 are the same float32: give a wider range",
        "uniform", 4, "float32", { low = 1, high = 1 + 1e-12 })
    bad("luacuda.uniform: kind must be 'host', 'pinned', 'mapped', 'managed' or 'device', got 'gpu'",
        "uniform", 4, { kind = "gpu" })
    bad("luacuda.uniform: kind must be 'host', 'pinned', 'mapped', 'managed' or 'device', got number",
        "uniform", 4, { kind = 1 })
    bad("luacuda.uniform: out must be an array, got table", "uniform", 3, { out = {} })
    bad("luacuda.uniform: give out or kind, not both", "uniform", 3, "float32", { out = a, kind = "device" })
    bad("luacuda.uniform: out must be a float64 array of shape {3}, got float32 of shape {3}",
        "uniform", 3, "float64", { out = a })
    bad("luacuda.uniform: out must be a float32 array of shape {4}, got float32 of shape {3}",
        "uniform", 4, { out = a })
    bad("luacuda.uniform: out has axes of stride 0", "uniform", nil,
        { out = luacuda.to_device(luacuda.zeros(1)):broadcast_to({ 4 }) })
    bad("luacuda.uniform: expected a stream, got number", "uniform", 4, { stream = 5 })
    bad("luacuda.normal: dtype must be float32 or float64, got int64", "normal", 4, "int64")
    bad("luacuda.normal: std must be >= 0, got -1", "normal", 4, { std = -1 })
    bad("luacuda.normal: mean must be a number, got boolean", "normal", 4, { mean = true })
    bad("luacuda.normal: mean = 1e+39, std = 1: beyond float32's range", "normal", 4, "float32",
        { mean = 1e39 })
    bad("luacuda.normal: unknown option low", "normal", 4, { low = 0 })
    bad("luacuda.integers: low must be an integer, got 1.5", "integers", 1.5, 4, 4)
    bad("luacuda.integers: high must be an integer, got string", "integers", 0, "4", 4)
    bad("luacuda.integers: low must be less than high, got low = 4, high = 4", "integers", 4, 4, 4)
    bad("luacuda.integers: dtype must be an integer dtype (int8 ... uint64), got float32",
        "integers", 0, 4, 4, "float32")
    bad("luacuda.integers: dtype must be an integer dtype (int8 ... uint64), got bool",
        "integers", 0, 2, 4, "bool")
    bad("luacuda.integers: [low, high) = [0, 300) does not fit int8 (-128 to 127)",
        "integers", 0, 300, 4, "int8")
    bad("luacuda.integers: [low, high) = [-1, 3) does not fit uint16 (0 to 65535)",
        "integers", -1, 3, 4, "uint16")
    bad("luacuda.integers: [low, high) = [-1, 3) does not fit uint64 (low must be >= 0)",
        "integers", -1, 3, 4, "uint64")
    bad("luacuda.integers: unknown option low", "integers", 0, 3, 4, { low = 0 })
    bad("luacuda.split: n must be an integer from 1 to 2147483647, got 0", "split", 0)
    bad("luacuda.split: n must be an integer from 1 to 2147483647, got 1.5", "split", 1.5)
    bad("luacuda.split: n must be an integer from 1 to 2147483647, got no value", "split")
    S.misuse("luacuda.uniform: expected a generator, got number", g.uniform, 5)
    S.misuse("luacuda.state: expected a generator, got table", g.state, {})
    a:close()
    bad("luacuda.uniform: attempt to use a closed array", "uniform", 3, "float32", { out = a })
  end)

  it("refuses a shape whose size overflows, as zeros does, before counting its blocks", function()
    -- the product of the shape wrapped (UBSan: signed overflow): {5, 2^62}
    -- read as 2^62 values, which a generator near its end had no room for
    for _, method in ipairs({ "uniform", "normal", "integers" }) do
      local g = luacuda.random({ seed = 1, counter = math.maxinteger - 10 })
      for _, shape in ipairs({ { 1 << 40, 1 << 40 }, { 5, 1 << 62 }, { 0, 1 << 62, 4 } }) do
        if method == "integers" then
          S.misuse("luacuda.integers: array size overflows", g.integers, g, 0, 10, shape)
        else
          S.misuse("luacuda." .. method .. ": array size overflows", g[method], g, shape)
        end
        assert.same({ seed = 1, counter = math.maxinteger - 10 }, g:state())
      end
    end
  end)

  it("refuses a call past the counter's end", function()
    local g = luacuda.random({ seed = 1, counter = math.maxinteger - 1 })
    S.misuse("luacuda.uniform: the generator's counter (9223372036854775806) would pass 2^63 - 1 "
             .. "with the 4 blocks this call takes: it is used up", g.uniform, g, 8)
    g:uniform(4, "float32")             -- the last block
    assert.equal(math.maxinteger, g:state().counter)
    S.misuse("luacuda.split: the generator's counter (9223372036854775807) is used up",
             g.split, g, 2)
    assert.equal(math.maxinteger, g:state().counter)
  end)
end)
