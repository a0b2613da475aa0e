-- luacuda.jit: Lua functions as kernels. Each kernel's results are checked
-- against the same computation in plain Lua, and the ported ones also
-- against their CUDA C++ versions on the same inputs; the error cases check
-- the message and the Lua file:line of the construct.
local luacuda = require "luacuda"
local S = require "spec.support"
local K = luacuda.kernel

local function host(a) return a:copy_to_host():totable() end

describe("luacuda.jit", function()
  -- The CUDA C++ versions of the ported kernels, run on the same inputs as
  -- the Lua ones: the examples' kernels (examples/kernels/*.cu) and, for
  -- the stencil, Monte Carlo and warp kernels no example has, twins written
  -- here. One module, compiled on first use, so a filtered run works too.
  local TWINS = [==[
extern "C" __global__ void stencil_twin(Array<double, 2> src, Array<double, 2> dst) {
  int j = grid2().x, i = grid2().y, n = src.shape[0], m = src.shape[1];
  if (i > 0 && i < n - 1 && j > 0 && j < m - 1)
    dst(i, j) = (src(i - 1, j) + src(i + 1, j) + src(i, j - 1) + src(i, j + 1)) / 4;
}
// Monte Carlo pi's points: element i of a draw of 2m float64 uniforms
extern "C" __global__ void pi_twin(unsigned long long seed, unsigned long long counter, int m,
                                   unsigned long long *hits) {
  int i = grid1();
  if (i < m) {
    double px = lc_uniform_double(lc_random_word(seed, counter, 2ull * i),
                                  lc_random_word(seed, counter, 2ull * i + 1));
    double py = lc_uniform_double(lc_random_word(seed, counter, 2ull * (m + i)),
                                  lc_random_word(seed, counter, 2ull * (m + i) + 1));
    if (px * px + py * py <= 1) atomicAdd(hits, 1ull);
  }
}
// the warp test's kernel; s unsigned, as the Lua kernel's wraps
extern "C" __global__ void warp_twin(Array<long long, 2> out, unsigned *bal) {
  int t = threadIdx.x;
  long long lane = laneid() + 1, v = lane * 10;
  unsigned long long s = v;
  for (int d = 16; d >= 1; d /= 2) s += __shfl_down_sync(0xffffffffu, s, d);
  unsigned b = __ballot_sync(0xffffffffu, lane % 2 == 0);
  bool some = __any_sync(0xffffffffu, lane == 5), every = __all_sync(0xffffffffu, lane > 0);
  out(t, 0) = (long long)s;
  out(t, 1) = __shfl_sync(0xffffffffu, v, 0);
  out(t, 2) = __shfl_xor_sync(0xffffffffu, v, 1);
  out(t, 3) = some;
  out(t, 4) = every;
  bal[t] = b;
}
// the helper K.grid(n) is written with (lcj_grid, jit/runtime.lua), at
// the edges of its 64 bits: b * d + t past 2^32
extern "C" __global__ void grid_edges(long long *out) {
  out[0] = lcj_grid(4294967295u, 1024u, 1023u);
  out[1] = lcj_grid(2147483647u, 1024u, 1023u);
  out[2] = lcj_grid(65536u, 65536u, 0u);
  out[3] = lcj_grid(4194304u, 1024u, 5u);
  out[4] = lcj_grid(3u, 256u, 7u);
}
]==]
  local twins
  local function cxx()
    if not twins then
      local src = {}
      for _, f in ipairs({ "saxpy", "reduce", "matmul_shared", "histogram" }) do
        local fh = assert(io.open("examples/kernels/" .. f .. ".cu"))
        src[#src + 1] = fh:read("a")
        fh:close()
      end
      src[#src + 1] = require("luacuda.jit.codegen").RUNTIME
      src[#src + 1] = TWINS
      twins = luacuda.compile(table.concat(src, "\n"))
    end
    return twins
  end

  it("runs saxpy by both launch forms, compiling once per signature", function()
    local first = debug.getinfo(1, "l").currentline + 2    -- the kernel's first line
    local saxpy = luacuda.jit(function(a, x, y)
      local i = K.grid(1)
      if i <= #y then y[i] = a * x[i] + y[i] end
    end, { name = "saxpy", signature = { a = "float32" } })
    local n = 40
    local x = luacuda.to_device(luacuda.arange(n, "float32"))
    local y = luacuda.to_device(luacuda.ones(n, "float32"))
    saxpy[{ (n + 31) // 32, 32 }](2.0, x, y)
    saxpy:launch({ grid = 2, block = 32 }, 1, x, y)
    local got = host(y)
    for i = 1, n do assert.equal(1 + 3 * (i - 1), got[i]) end
    assert.same({ "float32,float32:1,float32:1" }, saxpy:specializations())
    local src = saxpy:source(2.0, x, y)
    assert.truthy(src:find('extern "C" __global__ void saxpy(float a, Array<float, 1> x, Array<float, 1> y)', 1, true), src)
    assert.truthy(src:find(('#line %d "spec/jit_spec.lua"'):format(first), 1, true), src)
    -- one launch function for a configuration table (a loop of launches
    -- makes none), which reads the table at each launch
    local cfg = { 1, 32 }
    local launch = saxpy[cfg]
    assert.equal(launch, saxpy[cfg])
    launch(1.0, x, y)
    cfg[1] = 2
    launch(1.0, x, y)
    got = host(y)
    for i = 1, n do assert.equal((i <= 32 and 2 or 1) * (i - 1) + 1 + 3 * (i - 1), got[i], i) end
    -- examples/kernels/saxpy.cu on the same floats, the same arithmetic:
    -- the same bits; the Lua one queued on a stream
    local rx = luacuda.random(5):uniform(n, "float32")
    local y1, y2 = luacuda.random(6):uniform(n, "float32"), luacuda.random(6):uniform(n, "float32")
    local s = luacuda.stream()
    saxpy:launch({ grid = 2, block = 32, stream = s }, 0.7, rx, y1)
    s:synchronize()
    cxx().saxpy[{ 2, 32 }](n, 0.7, rx, y2)
    local got1, y0 = host(y1), host(luacuda.random(6):uniform(n, "float32"))
    assert.same(host(y2), got1)
    for i = 1, n do assert.is_true(got1[i] > y0[i], i) end   -- the stream's launch ran
  end)

  it("computes K.grid's position in 64 bits (its helper past 2^32)", function()
    local out = luacuda.device_array(5, "int64")
    cxx().grid_edges[{ 1, 1 }](out)
    assert.same({ 4294967295 * 1024 + 1023, 2147483647 * 1024 + 1023, 1 << 32, (1 << 32) + 5, 775 }, host(out))
  end)

  it("reduces through shared memory and atomics", function()
    local TPB = 32
    local reduce = luacuda.jit(function(x, out)
      local s = K.shared.array(TPB, "float64")
      local t = K.threadIdx.x
      local i = K.grid(1)
      s[t] = i <= #x and x[i] or 0.0
      K.syncthreads()
      local h = TPB // 2
      while h >= 1 do
        if t <= h then s[t] = s[t] + s[t + h] end
        K.syncthreads()
        h = h // 2
      end
      K.syncwarp()
      if t == 1 then K.atomic.add(out, 1, s[1]) end
      K.threadfence()
    end)
    local n = 100
    local x = luacuda.to_device(luacuda.arange(n, "float64"))
    local out = luacuda.to_device(luacuda.zeros(1, "float64"))
    reduce[{ (n + TPB - 1) // TPB, TPB }](x, out)
    assert.equal(n * (n - 1) // 2, host(out)[1])
    -- examples/kernels/reduce.cu sums float32 in blocks of 256, this one
    -- float64 in blocks of 32 (its float32 inputs exact in float64): the
    -- orders differ, so the sums agree to float32's rounding of n - 1
    -- additions, (n - 1) * 2^-24 * sum |x|
    local x32 = luacuda.random(7):uniform(300, "float32")
    local s32, s64 = luacuda.to_device(luacuda.zeros(1, "float32")), luacuda.to_device(luacuda.zeros(1, "float64"))
    cxx().block_sum[{ 2, 256 }](x32, s32, 300)
    reduce[{ 10, TPB }](x32:astype("float64"), s64)
    local want, got = host(s64)[1], host(s32)[1]
    assert.is_true(want > 100 and math.abs(got - want) <= 299 * 2 ^ -24 * want, got .. " " .. want)
  end)

  it("uses the launch's dynamic shared memory: K.shared.array(0, dtype)", function()
    local rev = luacuda.jit(function(x, n)
      local s = K.shared.array(0, "float32")
      local t = K.threadIdx.x
      if t <= n then s[t] = x[t] end
      K.syncthreads()
      if t <= n then x[t] = s[n + 1 - t] end
    end, { boundscheck = true })
    local n = 24
    local x = luacuda.to_device(luacuda.arange(n, "float32"))
    rev:launch({ grid = 1, block = 32, shared = n * 4 }, x, n)
    local got = host(x)
    for i = 1, n do assert.equal(n - i, got[i]) end
    local size = luacuda.jit(function(x)
      local s = K.shared.array(0, "int32")
      x[1] = #s
    end)
    S.misuse({ "spec/jit_spec.lua:", ": the size of dynamic shared memory" }, size.source, size, x)
  end)

  it("multiplies matrices in shared tiles, as plain Lua does", function()
    local TILE = 4
    local matmul = luacuda.jit(function(a, b, c)
      local sa = K.shared.array({ TILE, TILE }, "float32")
      local sb = K.shared.array({ TILE, TILE }, "float32")
      local tx, ty = K.threadIdx.x, K.threadIdx.y
      local col, row = K.grid(2)
      local acc = 0.0
      for t = 1, (a.shape[2] + TILE - 1) // TILE do
        local ac, br = (t - 1) * TILE + tx, (t - 1) * TILE + ty
        sa[{ ty, tx }] = (row <= a.shape[1] and ac <= a.shape[2]) and a[{ row, ac }] or 0
        sb[{ ty, tx }] = (br <= b.shape[1] and col <= b.shape[2]) and b[{ br, col }] or 0
        K.syncthreads()
        for k = 1, TILE do acc = acc + sa[{ ty, k }] * sb[{ k, tx }] end
        K.syncthreads()
      end
      if row <= c.shape[1] and col <= c.shape[2] then c[{ row, col }] = acc end
    end)
    local a = luacuda.to_device(luacuda.arange(30, "float32"):reshape(5, 6))
    local b = luacuda.to_device(luacuda.arange(42, "float32"):reshape(6, 7))
    local c = luacuda.device_array({ 5, 7 }, "float32")
    matmul[{ { 2, 2 }, { TILE, TILE } }](a, b, c)
    local ha, hb, hc = host(a), host(b), host(c)
    for i = 1, 5 do
      for j = 1, 7 do
        local s = 0
        for k = 1, 6 do s = s + ha[i][k] * hb[k][j] end
        assert.equal(s, hc[i][j])
      end
    end
    -- examples/kernels/matmul_shared.cu (16 x 16 tiles) on 16 x 16 floats:
    -- each element the same float32 sum over k in order, so the same bits
    local a16 = luacuda.random(8):uniform(256, "float32"):reshape(16, 16)
    local b16 = luacuda.random(9):uniform(256, "float32"):reshape(16, 16)
    local c1, c2 = luacuda.device_array({ 16, 16 }, "float32"), luacuda.device_array({ 16, 16 }, "float32")
    matmul[{ { 4, 4 }, { TILE, TILE } }](a16, b16, c1)
    cxx().matmul[{ { 1, 1 }, { 16, 16 } }](a16, b16, c2, 16)
    assert.same(host(c2), host(c1))
  end)

  it("counts a histogram with atomics, a grid-stride loop and goto continue", function()
    local hist = luacuda.jit(function(data, h, stats)
      local i, stride = K.grid(1), K.gridsize(1)
      while i <= #data do
        local b = data[i] % #h + 1
        if data[i] % 5 == 0 then goto continue end
        K.atomic.add(h, b, 1)
        K.atomic.max(stats, 1, data[i])
        K.atomic.min(stats, 2, data[i])
        K.atomic.sub(stats, 3, 1)
        K.atomic.or_(stats, 4, 1 << (data[i] % 8))
        if K.atomic.cas(stats, 5, 0, data[i]) == 0 then K.atomic.add(stats, 6, 1) end
        ::continue::
        i = i + stride
      end
    end)
    local n = 50
    local d = luacuda.to_device(luacuda.arange(n, "int32"))
    local h = luacuda.to_device(luacuda.zeros(8, "int32"))
    local stats = luacuda.to_device(luacuda.array({ 0, 1000, 0, 0, 0, 0 }, "int64"))
    hist[{ 2, 8 }](d, h, stats)
    local want = { 0, 0, 0, 0, 0, 0, 0, 0 }
    for v = 0, n - 1 do
      if v % 5 ~= 0 then want[v % 8 + 1] = want[v % 8 + 1] + 1 end
    end
    assert.same(want, host(h))
    local st = host(stats)
    assert.same({ 49, 1, -40, 255, 1 }, { st[1], st[2], st[3], st[4], st[6] })
    assert.truthy(st[5] % 5 ~= 0 and st[5] > 0, st[5])   -- the first to swap 0 for its value
    -- examples/kernels/histogram.cu (uint8 data, per-block bins in shared
    -- memory) counts the same bins of data with no multiple of 5
    local vals = {}
    for k = 1, 200 do
      local v = k * 37 % 256
      if v % 5 ~= 0 then vals[#vals + 1] = v end
    end
    local h1, h2 = luacuda.to_device(luacuda.zeros(8, "int32")), luacuda.to_device(luacuda.zeros(8, "uint32"))
    hist[{ 2, 8 }](luacuda.to_device(luacuda.array(vals, "int32")), h1, stats)
    cxx().histogram:launch({ grid = 2, block = 8, shared = 8 * 4 },
      luacuda.to_device(luacuda.array(vals, "uint8")), #vals, h2, 8)
    assert.same(host(h2), host(h1))
    assert.equal(#vals, h1:sum())
  end)

  it("reads a transposed view through its strides (a 2-d stencil)", function()
    local sten = luacuda.jit(function(src, dst)
      local j, i = K.grid(2)
      local n, m = src.shape[1], src.shape[2]
      -- the same positions from the parts, and the grid's size
      local j2 = (K.blockIdx.x - 1) * K.blockDim.x + K.threadIdx.x
      local i2 = (K.blockIdx.y - 1) * K.blockDim.y + K.threadIdx.y
      local gw, gh = K.gridsize(2)
      local same = j2 == j and i2 == i and gw == K.gridDim.x * K.blockDim.x and gh == 8
      if same and i > 1 and i < n and j > 1 and j < m then
        dst[{ i, j }] = (src[{ i - 1, j }] + src[{ i + 1, j }] + src[{ i, j - 1 }] + src[{ i, j + 1 }]) / 4
      end
    end)
    local g = luacuda.to_device(luacuda.arange(20, "float64"):reshape(4, 5)).T
    local o = luacuda.to_device(luacuda.zeros({ 5, 4 }, "float64"))
    sten[{ { 1, 1 }, { 8, 8 } }](g, o)
    local hg, ho = host(g), host(o)
    for i = 1, 5 do
      for j = 1, 4 do
        local want = 0
        if i > 1 and i < 5 and j > 1 and j < 4 then
          want = (hg[i - 1][j] + hg[i + 1][j] + hg[i][j - 1] + hg[i][j + 1]) / 4
        end
        assert.equal(want, ho[i][j])
      end
    end
    -- its C++ twin (above) on the same view: the same sums, the same bits
    local o2 = luacuda.to_device(luacuda.zeros({ 5, 4 }, "float64"))
    cxx().stencil_twin[{ { 1, 1 }, { 8, 8 } }](g, o2)
    assert.same(host(o2), ho)
  end)

  -- the same Lua function runs in the kernel (as a device function) and
  -- on the host: Lua's semantics are kept
  local STEP = 3
  local function lua_ops(x, y)
    local r = 0
    for k = 10, 1, -STEP do r = r + k end
    for _ = 1, 2, 0.5 do r = r + 1 end
    repeat local z = x; x = x - 1 until z < 3 or z > 1000
    local q = y ~= 0 and x // y or 0
    local m = y ~= 0 and x % y or 0
    local bits = (x & 0xff) | ((y << 4) ~ (x >> 60)) ~ ~y
    return q + m + r + (x < 0 and 100 or 200) + bits + math.max(1, 2, x) + math.floor(x / 4)
      + math.abs(y) + math.fmod(x, 3)
  end
  local function divmod(a, b) return a // b, a % b end
  local twice = luacuda.jit(function(v) return v + v end, { device = true })

  it("keeps Lua's semantics: //, %, shifts, and/or, loops, device functions", function()
    local ops = luacuda.jit(function(a, b, out, out2)
      local i = K.grid(1)
      if i > #a then return end
      out[i] = lua_ops(a[i], b[i])
      local q, r = divmod(a[i], 7)
      local pow, NAN = 1000, 0        -- names of C's library and macros are fine as locals
      out2[i] = q * pow + twice(r) + NAN
    end)
    local xs, ys = {}, {}
    for k = 1, 24 do
      xs[k] = (k * 7919) % 61 - 30
      ys[k] = (k * 104729) % 13 - 6
    end
    xs[1], xs[2] = math.maxinteger, math.mininteger
    local a = luacuda.to_device(luacuda.array(xs, "int64"))
    local b = luacuda.to_device(luacuda.array(ys, "int64"))
    local out = luacuda.to_device(luacuda.zeros(#xs, "int64"))
    local out2 = luacuda.to_device(luacuda.zeros(#xs, "int64"))
    ops[{ 1, 32 }](a, b, out, out2)
    local got, got2 = host(out), host(out2)
    for k = 1, #xs do
      assert.equal(lua_ops(xs[k], ys[k]), got[k], ("x = %d, y = %d"):format(xs[k], ys[k]))
      local q, r = divmod(xs[k], 7)
      assert.equal(q * 1000 + 2 * r, got2[k])
    end
    S.misuse("is a device function (device = true)", twice.launch, twice, { grid = 1, block = 1 }, 1)
  end)

  -- // and % by a constant 2^k are shifts and masks, and a numeric for whose
  -- limit plus step cannot pass int64's maximum is C's plain loop: the
  -- same values as Lua's, at both edges of each type
  it("divides by 2^k with shifts and runs plain loops, with Lua's results", function()
    local k = luacuda.jit(function(x8, x32, x64, xu, out)
      local i = K.grid(1)
      if i > #x8 then return end
      local a, b, c, d = x8[i], x32[i], x64[i], xu[i]
      out[{ i, 1 }], out[{ i, 2 }] = a // 64, a % 64
      out[{ i, 3 }], out[{ i, 4 }] = b // 0x40000000, b % 0x40000000
      out[{ i, 5 }], out[{ i, 6 }] = c // 16, c % 16
      out[{ i, 7 }], out[{ i, 8 }] = c // 0x4000000000000000, c % 0x4000000000000000
      out[{ i, 9 }], out[{ i, 10 }] = d // 8, d % 8
      out[{ i, 11 }] = c // 1 + c % 1
      local s, n = 0, 0
      for j = 0x7ffffffd, b do s = s + j end                -- an int32 limit
      for j = 9223372036854775802, 9223372036854775805, 2 do n = n + 1 end   -- limit + step: the maximum
      for j = 9223372036854775802, 9223372036854775806, 2 do n = n + 10 end  -- past it: Lua's count
      for j = 3, 1 do n = n + 100 end
      out[{ i, 12 }], out[{ i, 13 }] = s, n
    end)
    local v8 = { -128, 127, -1, -65, 0, 64, -64, 63 }
    local v32 = { -0x80000000, 0x7fffffff, -1, -0x40000001, 0, 0x40000000, -0x40000000, 5 }
    local v64 = { math.mininteger, math.maxinteger, -1, -17, 0, 16, -(1 << 62) - 1, 1 << 62 }
    local vu = { 0, 0xffffffff, 7, 8, 9, 0x80000000, 1, 15 }
    local x8 = luacuda.to_device(luacuda.array(v8, "int8"))
    local x32 = luacuda.to_device(luacuda.array(v32, "int32"))
    local x64 = luacuda.to_device(luacuda.array(v64, "int64"))
    local xu = luacuda.to_device(luacuda.array(vu, "uint32"))
    local out = luacuda.to_device(luacuda.zeros({ #v8, 13 }, "int64"))
    local kernel = k:source(x8, x32, x64, xu, out):match('extern "C".*')
    assert.is_nil(kernel:find("lcj_idiv", 1, true))
    assert.is_nil(kernel:find("lcj_mod", 1, true))
    assert.truthy(kernel:find(">> 62)", 1, true))
    assert.equal(1, select(2, kernel:gsub("unsigned long long lcj_n", "")))   -- only the loop past it
    k[{ 1, 32 }](x8, x32, x64, xu, out)
    local got = host(out)
    for i = 1, #v8 do
      local a, b, c, d = v8[i], v32[i], v64[i], vu[i]
      local s = 0
      for j = 0x7ffffffd, b do s = s + j end
      local want = { a // 64, a % 64, b // 0x40000000, b % 0x40000000, c // 16, c % 16,
        c // 0x4000000000000000, c % 0x4000000000000000, d // 8, d % 8, c, s, 32 }
      assert.same(want, got[i], ("element %d"):format(i))
    end
  end)

  -- math.tointeger and math.type as Lua 5.4 has them, in the kernel and on the host
  local function conversions(x, n)
    local r = 0
    if math.tointeger(x) then r = r + 1 end               -- a float of an integer's value
    if not math.tointeger(x + 0.5) then r = r + 10 end
    r = r + (math.tointeger(x * 2) or -1) * 100
    r = r + (math.tointeger(x + 0.25) or -7) * 1000
    r = r + math.tointeger(n) * 100000                     -- an integer is itself
    if math.type(x) == "float" and math.type(n) == "integer" then r = r + 1000000 end
    if math.type(n) ~= "float" and math.type(true) == nil then r = r + 10000000 end
    return r
  end

  it("has math.tointeger and math.type as Lua 5.4 does", function()
    local k = luacuda.jit(function(x, n, out)
      local i = K.grid(1)
      if i <= #x then out[i] = conversions(x[i], n[i]) end
    end)
    local xs, ns = { 0.0, 3.0, -2.5, 1.5, 1e300, -0.0, 0.5 }, { 4, -3, 0, 7, 1, 2, 9 }
    local out = luacuda.to_device(luacuda.zeros(#xs, "int64"))
    k[{ 1, 32 }](luacuda.to_device(luacuda.array(xs, "float64")), luacuda.to_device(luacuda.array(ns, "int64")), out)
    local got = host(out)
    for i = 1, #xs do
      assert.equal(conversions(xs[i], ns[i]), got[i], ("x = %s, n = %s"):format(xs[i], ns[i]))
    end
  end)

  it("keeps float32 with weak literals, and reads upvalues and globals as constants", function()
    local scale = 0.5
    JIT_SPEC_STEP = 1
    finally(function() JIT_SPEC_STEP = nil end)
    local k = luacuda.jit(function(x)
      local i = K.grid(1)
      if i <= #x then x[i] = 2.0 * x[i] * scale + JIT_SPEC_STEP end
    end)
    local x = luacuda.to_device(luacuda.arange(4, "float32"))
    local src = k:source(x)
    src = src:sub(src:find('extern "C"', 1, true), -1)
    assert.falsy(src:find("double", 1, true), src)     -- float32 stays float32
    local cfg = { 1, 32 }
    k[cfg](x)
    assert.same({ 1, 2, 3, 4 }, host(x))
    local launch = k[cfg]            -- the first compile's, kept across the ones below
    scale = 1.0                      -- a new constant: a new compile
    launch(x)
    assert.same({ 3, 5, 7, 9 }, host(x))
    assert.equal(2, #k:specializations())
    JIT_SPEC_STEP = 0                -- a global is checked at each launch too
    k[cfg](x)                        -- (now the second compile's launcher)
    assert.same({ 6, 10, 14, 18 }, host(x))
    assert.equal(3, #k:specializations())
    JIT_SPEC_STEP = 1                -- back to the second compile, by k:launch and the one kept
    k:launch({ grid = 1, block = 32 }, x)
    launch(x)
    assert.same({ 27, 43, 59, 75 }, host(x))
    assert.equal(3, #k:specializations())
    -- a launcher takes the kernel's arguments, no more, no fewer
    S.misuse("luacuda.jit: the kernel takes 1 argument (x), got 2", k[cfg], x, 1)
    S.misuse("luacuda.jit: the kernel takes 1 argument (x), got 0", k[cfg])
    -- k[cfg] keeps its launch only while cfg lives: launches with a new
    -- table each time leave none behind
    local tables = setmetatable({}, { __mode = "k" })
    local function launch_new() local c = { 1, 32 }; tables[c] = true; k[c](x) end
    for _ = 1, 3 do launch_new() end
    collectgarbage()
    collectgarbage()
    assert.is_nil(next(tables))
    assert.same({ 223, 351, 479, 607 }, host(x))
  end)

  it("has the vocabulary: K.random draws luacuda.random's bits (and Monte Carlo pi as array math)", function()
    local n = 10
    local rk = luacuda.jit(function(seed, counter, u32, u64, n32, n64, m, hits)
      local i = K.grid(1)
      -- Monte Carlo pi (examples/monte_carlo_pi.lua): points from one draw of 2m
      if i <= m then
        local px, py = K.random.uniform_float64(seed, counter, i), K.random.uniform_float64(seed, counter, m + i)
        if px * px + py * py <= 1 then K.atomic.add(hits, 1, 1) end
      end
      if i <= #u32 then
        u32[i] = K.random.uniform_float32(seed, counter, i)
        u64[i] = K.random.uniform_float64(seed, counter, i)
        n32[i] = K.random.normal_float32(seed, counter, i)
        n64[i] = K.random.normal_float64(seed, counter, i)
      end
    end)
    local st = luacuda.random(42):state()
    local u32, u64 = luacuda.device_array(n, "float32"), luacuda.device_array(n, "float64")
    local n32, n64 = luacuda.device_array(n, "float32"), luacuda.device_array(n, "float64")
    local m, hits = 128, luacuda.to_device(luacuda.zeros(1, "int64"))
    rk[{ 4, 32 }](st.seed, st.counter, u32, u64, n32, n64, m, hits)
    local xy = luacuda.random(42):uniform(2 * m, "float64")
    local px, py = xy[{ { 1, m } }], xy[{ { m + 1, 2 * m } }]
    assert.same({ (px * px + py * py):le(1):sum() }, host(hits))     -- the same points as array math's
    local hits2 = luacuda.to_device(luacuda.zeros(1, "uint64"))
    cxx().pi_twin[{ 4, 32 }](st.seed, st.counter, m, hits2)          -- and as the prelude's Philox's
    assert.same(host(hits), host(hits2))
    assert.same(host(luacuda.random(42):uniform(n, "float32")), host(u32))
    assert.same(host(luacuda.random(42):uniform(n, "float64")), host(u64))
    assert.same(host(luacuda.random(42):normal(n, "float32")), host(n32))
    assert.same(host(luacuda.random(42):normal(n, "float64")), host(n64))
  end)

  it("has the vocabulary: warp shuffles and votes, lanes from 1, in a last partial warp too", function()
    local wk = luacuda.jit(function(out, bal)
      local t, lane = K.threadIdx.x, K.laneid
      local v = lane * 10
      local s, d = v, K.warpsize // 2
      while d >= 1 do
        s = s + K.shfl_down(s, d)
        d = d // 2
      end
      local b = K.ballot(lane % 2 == 0)
      local some, every = K.any(lane == 5), K.all(lane > 0)
      out[{ t, 1 }], out[{ t, 2 }], out[{ t, 3 }] = s, K.shfl(v, 1), K.shfl_xor(v, 1)
      out[{ t, 4 }], out[{ t, 5 }], bal[t] = some and 1 or 0, every and 1 or 0, b
    end)
    local function run(k, threads)
      local out = luacuda.to_device(luacuda.zeros({ threads, 5 }, "int64"))
      local bal = luacuda.to_device(luacuda.zeros(threads, "uint32"))
      k[{ 1, threads }](out, bal)
      return host(out), host(bal)
    end
    local got, bal = run(wk, 32)
    assert.same({ 5280, 10, 1, 1 }, { got[1][1], got[1][2], got[1][4], got[1][5] })
    for lane = 1, 32 do
      assert.equal(((lane - 1) ~ 1) * 10 + 10, got[lane][3])
      assert.equal(0xAAAAAAAA, bal[lane])
    end
    -- a block of 40: its second warp has 8 lanes. A shuffle from a lane
    -- the block lacks is undefined (CUDA's rule), so the sums (column 1)
    -- of that warp are not compared; the rest is defined, and is what the
    -- C++ __shfl_sync, __shfl_xor_sync and votes give on this backend
    local twin, twin_bal
    got, bal = run(wk, 40)
    twin, twin_bal = run(cxx().warp_twin, 40)
    assert.same(twin_bal, bal)
    for t = 1, 40 do
      local defined = { table.unpack(got[t], t <= 32 and 1 or 2) }
      assert.same({ table.unpack(twin[t], t <= 32 and 1 or 2) }, defined, t)
    end
    for t = 33, 40 do
      local lane = t - 32
      assert.same({ 10, ((lane - 1) ~ 1) * 10 + 10, 1, 1 }, { table.unpack(got[t], 2) }, t)
      assert.equal(0xAA, bal[t])     -- only the 8 lanes there are
    end
  end)

  it("has math's functions as Lua's, a local array and a float loop", function()
    local function f(v, t2, s)
      return math.sqrt(math.abs(v)) + math.exp(v / 10) + math.log(math.abs(v) + 1, 2) + math.sin(v)
        + math.atan(v, 2) + math.floor(v * 1.5) + math.ceil(v / 3) + math.max(v, 0.5, -1)
        + math.min(v, 2) + math.fmod(v, 2.5) + t2 + s + math.pi + (math.huge > v and 1 or 0)
    end
    local mk = luacuda.jit(function(x, out)
      local t = K.local_array(4, "float64")
      for k = 1, 4 do t[k] = k * 0.5 end
      local s = 0.0
      for v = 0.5, 2.0, 0.5 do s = s + v end
      local i = K.grid(1)
      if i <= #x then out[i] = f(x[i], t[2], s) end
    end)
    local xs = { -3.5, -1, 0, 0.25, 1, 2.75, 10 }
    local x = luacuda.to_device(luacuda.array(xs, "float64"))
    local o = luacuda.device_array(#xs, "float64")
    mk[{ 1, 32 }](x, o)
    local got = host(o)
    for i, v in ipairs(xs) do
      local want = f(v, 1.0, 5.0)
      assert.is_true(math.abs(want - got[i]) <= 1e-12 * math.abs(want), ("%s: %s vs %s"):format(v, want, got[i]))
    end
  end)

  -- the rest of the issue's list in one kernel (one compile): 3-d
  -- positions, x.size and x.ndim of a negative-step view, K.shfl_up and
  -- K.shfl_down at the warp's edges, the other atomics with an n-d index,
  -- elseif/break/not, a for's limit and a swap in a device function run on
  -- the host too, a 2-d local array, a local's promotion, a boolean and a
  -- scalar typed by position, a boolean upvalue, integer division by zero,
  -- math's other functions under fastmath, managed and mapped arrays and
  -- the dtypes the other tests do not use
  local function flow(n)
    local c = 0
    for j = 1, 100 do
      if j > n % 5 + 2 then break
      elseif j % 2 == 0 then c = c + 10
      else c = c + 1 end
    end
    local lim = 3
    for _ = 1, lim do lim = lim + 1; c = c + 100 end    -- the limit is read once
    local p, q = c, n
    p, q = q, p
    if not n then c = -1 end
    return p * 1000 + q + c
  end
  local function trig(v)
    local ip, fp = math.modf(v * 3)
    return math.cos(v) + math.tan(v) + math.asin(v / 2) + math.acos(v / 2) + ip * 10 + fp
  end

  local ON = true                    -- a boolean upvalue: a constant
  it("has the rest: 3-d positions, size and ndim, shfl_up, n-d atomics, elseif/break/swap, fastmath", function()
    local rest = luacuda.jit(function(m, out, fout, acc, flag, s, b, u8, i16, u16, u64, bf)
      local x, y, z = K.grid(3)
      local gx, gy, gz = K.gridsize(3)
      local flat = ((z - 1) * gy + (y - 1)) * gx + x
      local up = K.shfl_up(K.laneid * 10, 1)          -- lane 1 and lane 32 keep their own
      out[{ flat, 7 }] = K.shfl_down(K.laneid * 10, 1)
      local z2 = (K.blockIdx.z - 1) * K.blockDim.z + K.threadIdx.z
      local same = z2 == z and gz == K.gridDim.z * K.blockDim.z
      out[{ flat, 1 }] = up
      out[{ flat, 2 }] = (same and m.size * 10 + m.ndim or -1) + 1000 * m[{ (flat - 1) % 3 + 1, (flat - 1) % 4 + 1 }]
      out[{ flat, 3 }] = flow(flat)
      local t = K.local_array({ 2, 3 }, "int32")
      for a = 1, 2 do
        for b = 1, 3 do t[{ a, b }] = a * 10 + b end
      end
      local zero = flat - flat
      out[{ flat, 4 }] = t[{ 2, 3 }] + t[{ 1, 2 }] + flat // zero + flat % zero
      K.atomic.xor(acc, { 1, 1 }, flat)
      K.atomic.and_(acc, { 1, 2 }, ~(1 << ((flat - 1) % 20)))
      out[{ flat, 5 }] = K.atomic.exch(acc, { 2, 1 }, flat)
      if flag and ON then out[{ flat, 6 }] = math.floor(s * 4) + math.maxinteger + math.mininteger end
      local v = flat                   -- given an integer, then a float: a float64
      if flag then v = v / 4 end
      fout[flat] = trig(flat / 64) + v
      if flat <= #b then                -- the other dtypes
        b[flat] = not b[flat]
        u8[flat] = u8[flat] + 250
        i16[flat] = i16[flat] * -3
        u16[flat] = u16[flat] - 1
        u64[flat] = u64[flat] >> 1
        bf[flat] = bf[flat] * 2 + 0.5
      end
    end, { signature = { nil, nil, nil, nil, nil, "float32" }, fastmath = true })
    local base = luacuda.to_device(luacuda.arange(24, "int64"):reshape(3, 8))
    local m = base[{ {}, { 8, 1, -2 } }]
    local out = luacuda.to_device(luacuda.zeros({ 64, 7 }, "int64"))
    local fout = luacuda.mapped_array(64, "float64")          -- other device-accessible kinds
    local acc = luacuda.managed_array({ 2, 2 }, "int32")
    acc:fill(0)
    acc[{ 1, 2 }] = 0x7fffffff
    local cfg = { { 1, 1, 2 }, { 8, 2, 2 } }
    local others = { luacuda.to_device(luacuda.array({ true, false, true, false }, "bool")),
      luacuda.to_device(luacuda.array({ 0, 5, 6, 255 }, "uint8")),
      luacuda.to_device(luacuda.array({ 1, -2, 300, 0 }, "int16")),
      luacuda.to_device(luacuda.array({ 0, 1, 65535, 7 }, "uint16")),
      luacuda.to_device(luacuda.array({ 6, 1 << 62, 1, 0 }, "uint64")),
      luacuda.to_device(luacuda.array({ 1, 2.5, -4, 10 }, "bfloat16")) }
    assert.truthy(rest:source(m, out, fout, acc, true, 2.75, table.unpack(others)):find("float s,", 1, true))
    rest[cfg](m, out, fout, acc, true, 2.75, table.unpack(others))
    local hm, got, fgot, hacc = host(m), host(out), host(fout), host(acc)
    assert.same({ 3, 4 }, { #hm, #hm[1] })
    local xor, olds = 0, 0
    for flat = 1, 64 do
      local lane = (flat - 1) % 32 + 1
      local want = { lane == 1 and 10 or (lane - 1) * 10,
        122 + 1000 * hm[(flat - 1) % 3 + 1][(flat - 1) % 4 + 1], flow(flat), 35, got[flat][5], 10,
        lane == 32 and 320 or (lane + 1) * 10 }
      assert.same(want, got[flat], ("thread %d"):format(flat))
      local fwant = trig(flat / 64) + flat / 4
      assert.is_true(math.abs(fwant - fgot[flat]) <= 1e-6 * math.abs(fwant), flat)
      xor, olds = xor ~ flat, olds + got[flat][5]
    end
    assert.same({ { xor, 0x7ff00000 }, { 64 * 65 // 2 - olds, 0 } }, hacc)
    local want = { { false, true, false, true }, { 250, 255, 0, 249 }, { -3, 6, -900, 0 },
      { 65535, 0, 65534, 6 }, { 3, 1 << 61, 0, 0 }, { 2.5, 5.5, -7.5, 20.5 } }
    for k, a in ipairs(others) do assert.same(want[k], host(a), a.dtype) end
    -- a host array is refused as a compiled kernel refuses it (the same
    -- specialisation); a record array before any translation
    S.misuse("a host array cannot be passed to a kernel", function()
      rest[cfg](m, out:copy_to_host(), fout, acc, true, 2.75, table.unpack(others))
    end)
    local rec = luacuda.device_array(2, luacuda.record { { "a", "int32" } })
    S.misuse({ "luacuda.jit: argument 1 ('m')", "which a Lua kernel cannot read" }, function()
      rest[cfg](rec, out, fout, acc, true, 2.75, table.unpack(others))
    end)
    assert.same({ "int64:2:A,int64:2,float64:1,int32:2,bool,float32,"
      .. "bool:1,uint8:1,int16:1,uint16:1,uint64:1,bfloat16:1" }, rest:specializations())
  end)

  it("prints, and checks bounds naming the array and the Lua line", function()
    if S.backend ~= "sim" and not S.fake then
      return pending("simulator and fake driver: a GPU's context that trapped may lose the printf buffer")
    end
    local ok, out = S.lua_run("", [==[
local luacuda = require "luacuda"
local K = luacuda.kernel
local k = luacuda.jit(function(x)
  local i = K.grid(1)
  if i == 1 then print("first", i, 2.5, true) end K.syncthreads()   -- printed before any trap
  x[i] = 1
end, {boundscheck = true})
local ok, err = pcall(function()
  k[{1, 8}](luacuda.device_array(4, "int32"))
  luacuda.synchronize()
end)
print("launch", ok, err)
]==])
    assert.truthy(ok, out)
    assert.truthy(out:find("first\t1\t2.5\ttrue", 1), out)
    -- the first thread past the end to trap (the fake runs them in any order)
    assert.truthy(out:find("luacuda%.jit: index [5-8] out of bounds of 'x' %(size 4%) at "), out)
    assert.truthy(out:find(":6\n", 1, true), out)
    -- the trap fails the launch: the simulator's report, or the driver's error
    local trap = S.backend == "sim" and "__trap%(%) called" or "CUDA_ERROR_LAUNCH_FAILED"
    assert.truthy(out:find("launch\tfalse\t.*" .. trap), out)
  end)

  it("names the Lua line of a fault the simulator catches, without boundscheck #oob", function()
    if S.backend ~= "sim" then return pending("simulator only: its fault reports") end
    local k = luacuda.jit(function(x)
      local i = K.grid(1)
      x[i * 1000] = 1
    end, { name = "far_store" })
    local err = S.misuse({ "kernel 'far_store' failed: illegal memory access" }, function()
      k[{ 1, 4 }](luacuda.device_array(4, "int32"))
      luacuda.synchronize()
    end)
    local line = debug.getinfo(1, "l").currentline - 6     -- the store's
    assert.truthy(err:find((" at spec/jit_spec.lua:%d in block"):format(line), 1, true), err)
  end)

  -- random expression trees run in one kernel and in plain Lua. A tree
  -- is its kernel text (k) and the same in Lua (l), whose narrow values
  -- (int32, float32) are wrapped or rounded (N) where the kernel's are:
  -- after each operation of a strong operand (a or b), and where a weak
  -- literal's value meets one (NEP 50)
  local function lcg(seed)
    local st = seed
    return function(m)
      st = (st * 1103515245 + 12345) % 2147483648
      return (st >> 8) % m + 1
    end
  end
  local INT_OPS = { "+", "-", "*", "//", "%", "&", "|", "~", "<<", ">>" }
  local FLOAT_OPS = { "+", "-", "*", "/", "//", "%", "^" }
  -- float32's operations are correctly rounded on both backends (pow is not)
  local FLOAT32_OPS = { "+", "-", "*", "/", "//", "%" }
  local function tree(r, depth, ops, leaves, narrow)
    local k = r(10)
    if depth == 0 or k <= 3 then
      local leaf = leaves[r(#leaves)]
      return { k = leaf, l = leaf, strong = leaf == "a" or leaf == "b" }
    end
    local function N(code, strong) return (narrow and strong) and ("N(" .. code .. ")") or code end
    local function meet(t, strong) return N(t.l, strong and not t.strong) end
    if k == 4 then
      local t = tree(r, depth - 1, ops, leaves, narrow)
      return { k = ("(- %s)"):format(t.k), l = N(("(- %s)"):format(t.l), t.strong), strong = t.strong }
    end
    if k == 5 then
      local x, y = tree(r, depth - 1, ops, leaves, narrow), tree(r, depth - 1, ops, leaves, narrow)
      local p, q = tree(r, depth - 1, ops, leaves, narrow), tree(r, depth - 1, ops, leaves, narrow)
      local cs, vs = x.strong or y.strong, p.strong or q.strong
      return { k = ("(%s < %s and %s or %s)"):format(x.k, y.k, p.k, q.k),
        l = ("(%s < %s and %s or %s)"):format(meet(x, cs), meet(y, cs), meet(p, vs), meet(q, vs)), strong = vs }
    end
    local x, op, y = tree(r, depth - 1, ops, leaves, narrow), ops[r(#ops)], tree(r, depth - 1, ops, leaves, narrow)
    local kt = ("(%s %s %s)"):format(x.k, op, y.k)
    if op == "<<" or op == ">>" then      -- the left operand's type; the count as it is
      local fn = op == "<<" and "SL" or "SR"
      return { k = kt, l = x.strong and narrow and ("%s(%s, %s)"):format(fn, x.l, y.l)
        or ("(%s %s %s)"):format(x.l, op, y.l), strong = x.strong }
    end
    local strong = x.strong or y.strong
    local lx, ly = meet(x, strong), meet(y, strong)
    if op == "//" and narrow == "float32" and strong then        -- floorf of the rounded quotient
      return { k = kt, l = ("N(N(%s / %s) // 1.0)"):format(lx, ly), strong = true }
    end
    return { k = kt, l = N(("(%s %s %s)"):format(lx, op, ly), strong), strong = strong }
  end
  -- N: int32's wrapping or float32's rounding; SL, SR: int32's logical shifts
  local NARROW = {
    int32 = "local function N(v) v = v & 0xffffffff return v >= 0x80000000 and v - 0x100000000 or v end\n"
      .. "local function SL(v, n) return N(v << n) end\n"
      .. "local function SR(v, n) return N((v & 0xffffffff) >> n) end\n",
    float32 = "local function N(v) return (string.unpack('f', string.pack('f', v))) end\n",
  }
  for _, case in ipairs({ { "int64", INT_OPS, { "a", "b", "3", "-7", "0x7fffffffffffffff", "63" } },
                          { "float64", FLOAT_OPS, { "a", "b", "0.5", "-2.25", "3" } },
                          { "int32", INT_OPS, { "a", "b", "3", "-7", "0x7fffffff", "31" } },
                          { "float32", FLOAT32_OPS, { "a", "b", "0.5", "-2.25", "3", "1e-3" } } }) do
    local dt = case[1]
    local narrow = NARROW[dt] and dt
    local is_int = dt:find("int") ~= nil
    it(("agrees with plain Lua on random %s expressions"):format(dt), function()
      local r = lcg(({ int64 = 11, float64 = 17, int32 = 23, float32 = 29 })[dt])
      local exprs = {}
      for e = 1, 24 do exprs[e] = tree(r, 4, case[2], case[3], narrow) end
      local body = {}
      for e, ex in ipairs(exprs) do body[e] = ("  out[{i, %d}] = %s"):format(e, ex.k) end
      local fn = assert(load(("local K = ...\nreturn function(x, y, out)\n  local i = K.grid(1)\n  if i > #x then return end\n"
        .. "  local a, b = x[i], y[i]\n%s\nend"):format(table.concat(body, "\n"))))(K)
      local k = luacuda.jit(fn)
      local xs, ys = {}, {}
      for i = 1, 8 do
        if is_int then
          xs[i], ys[i] = r(2000) - 1000, r(70) - 5
        else
          xs[i], ys[i] = (r(2000) - 1000) / 8, (r(200) - 100) / 16
        end
      end
      xs[1] = ({ int64 = math.mininteger, int32 = -0x80000000 })[dt] or 0.0
      local out = luacuda.to_device(luacuda.zeros({ #xs, #exprs }, dt))
      k[{ 1, 32 }](luacuda.to_device(luacuda.array(xs, dt)), luacuda.to_device(luacuda.array(ys, dt)), out)
      local got = host(out)
      for e, ex in ipairs(exprs) do
        -- the value stored: narrowed as the store into the array narrows it
        local f = assert(load((NARROW[dt] or "local function N(v) return v end\n")
          .. "local a, b = ... return N(" .. ex.l .. ")"))
        for i = 1, #xs do
          local okw, want = pcall(f, xs[i], ys[i])
          if okw then            -- Lua raises on an integer division by zero
            local g = got[i][e]
            local same = want == g or (want ~= want and g ~= g)
              or (dt == "float64" and math.abs(want - g) <= 1e-12 * math.abs(want))
            assert.is_true(same, ("%s with a = %s, b = %s: Lua %s, kernel %s"):format(ex.k, xs[i], ys[i], want, g))
          end
        end
      end
    end)
  end

  it("computes float16 elements in float32, rounding once when stored", function()
    local k = luacuda.jit(function(x, y)
      local i = K.grid(1)
      if i <= #x then y[i] = x[i] * 3 + 0.5 end
    end)
    local x = luacuda.to_device(luacuda.array({ 1, 2.5, -4, 1000 }, "float16"))
    local y = luacuda.device_array(4, "float16")
    k[{ 1, 32 }](x, y)
    assert.same({ 3.5, 8, -11.5, 3000 }, host(y))
  end)

  describe("refuses what is outside the subset, naming the Lua line", function()
    local path = os.tmpname() .. ".lua"
    local f = assert(io.open(path, "w"))
    f:write([==[
local K, tbl, arr = ... local str = "text"
local bad = {}
bad.table = function(x) local t = {1, 2} x[1] = t[1] end
bad.string = function(x) local s = "a" end
bad.pairs = function(x) for k, v in pairs(x) do end end
bad.closure = function(x) local f = function() end end
bad.upvalue = function(x) x[1] = tbl[1] end
bad.method = function(x) x[1] = x:sum() end
bad.booladd = function(x) x[1] = (x[1] > 0) + 1 end
bad.arity = function(x) x[{1, 2}] = 0 end
bad.findex = function(x) x[1.5] = 0 end
bad.global = function(x) y = 1 end
bad.arrayvar = function(x) local a = 1 a = x end
local function rec(n) return rec(n) end
bad.recursion = function(x) x[1] = rec(1) end
bad.floatstore = function(x) x[1] = 1.5 end
bad.vararg = function(...) end
bad.loopvar = function(x) for i = 1, 2 do i = 3 end end
bad.andmix = function(x) local v = x[1] > 0 and 1 end
bad.string_upvalue = function(x) print(K.name) end
bad.raise = function(x) if x[1] > 0 then error(1) end end
bad.coroutine = function(x) coroutine.yield(1) end
bad.metatable = function(x) setmetatable(x, x) end
bad.string_up = function(x) local s = str end
bad.array_up = function(x) x[1] = arr[1] end
local m = math bad.field_alias = function(x) x[1] = math.sqrt(4.0) + m.sqrt end
return bad
]==])
    f:close()
    local bad = assert(loadfile(path))(K, { 1 }, luacuda.device_array(2, "int32"))
    teardown(function() os.remove(path) os.remove((path:gsub("%.lua$", ""))) end)
    local x = luacuda.device_array(4, "int32")
    local PASS = ": only numbers and booleans of the host are read as constants; pass it as an argument"
    local cases = {
      { "table", 3, "table constructors are not in the kernel subset" },
      { "string", 4, "strings are not in the kernel subset" },
      { "pairs", 5, "'for ... in' (pairs, ipairs) is not in the kernel subset" },
      { "closure", 6, "closures cannot be created in a kernel" },
      { "upvalue", 7, "'tbl' is a table, which a kernel cannot hold" .. PASS },
      { "method", 8, "method calls (':sum') are not in the kernel subset" },
      { "booladd", 9, "'+' of a boolean: it takes numbers" },
      { "arity", 10, "is indexed with 2 indices; it takes 1" },
      { "findex", 11, "an index is a float" },
      { "global", 12, "assignment to the global 'y'" },
      { "arrayvar", 13, "cannot be assigned to the local 'a'" },
      { "recursion", 14, "recursion is not in the kernel subset" },
      { "floatstore", 16, "a float is stored into an element of a 1-d int32 array" },
      { "loopvar", 18, "the loop variable 'i' is assigned" },
      { "andmix", 19, "'and' of a boolean and an integer would give either type" },
      { "string_upvalue", 20, "'K.name' is nil: no such field" },
      { "raise", 21, "'error' is not in the kernel subset: a kernel cannot raise" },
      { "coroutine", 22, "coroutines are not in the kernel subset" },
      { "metatable", 23, "metatables are not in the kernel subset" },
      { "string_up", 24, "'str' is a string, which a kernel cannot hold" .. PASS },
      { "array_up", 25, "'arr' is an array or other luacuda object, which a kernel cannot hold" .. PASS },
      -- math's sqrt by another name: the message names it as the kernel does
      { "field_alias", 26, "'m.sqrt' is a function, which a kernel cannot hold" },
    }
    for _, c in ipairs(cases) do
      it(c[1], function()
        local k = luacuda.jit(bad[c[1]])
        local err = S.misuse({ "luacuda.jit: ", (":%d: "):format(c[2]), c[3] }, k.launch, k, { grid = 1, block = 1 }, x)
        assert.truthy(err:find(path, 1, true), err)
        assert.same({}, k:specializations())
      end)
    end
    it("varargs", function()
      S.misuse({ ":17: varargs (...) are not in the kernel subset" }, luacuda.jit, bad.vararg)
    end)
  end)

  it("refuses functions without source, and K on the host", function()
    S.misuse("luacuda.jit: a C function has no Lua source", luacuda.jit, print)
    local stripped = load(string.dump(load("return function(x) end")(), true))
    S.misuse("the source of the function cannot be found", luacuda.jit, stripped)
    S.misuse("luacuda.kernel.grid: exists in kernels only", K.grid, 1)
    S.misuse("luacuda.kernel.threadIdx.x: exists in kernels only", function() return K.threadIdx.x end)
    local k = luacuda.jit(function(x) end)
    S.misuse("is launched with k[{grid, block}](...)", k)
    S.misuse("the kernel takes 1 argument (x), got 2", k.launch, k, { grid = 1, block = 1 }, 1, 2)
    S.misuse("unknown option 'nope'", luacuda.jit, function() end, { nope = true })
  end)

  it("keeps translations on disk: a second process with the same kernel does not translate it", function()
    local dir = S.tmpdir()
    finally(function() os.execute("rm -rf '" .. dir .. "'") end)
    -- the kernel reads an upvalue, so its value is part of the translation's key
    local code = [==[
local luacuda = require "luacuda"
local K = luacuda.kernel
local SCALE = tonumber(os.getenv("JIT_SCALE"))
local k = luacuda.jit(function(x)
  local i = K.grid(1)
  if i <= #x then x[i] = i * SCALE end
end, {name = "disk_probe"})
local x = luacuda.to_device(luacuda.zeros(4, "int64"))
k[{1, 4}](x)
print("got " .. table.concat(x:copy_to_host():totable(), ","))
]==]
    local script = dir .. "/probe.lua"      -- one file: its name is part of the key
    local f = assert(io.open(script, "w"))
    f:write(code)
    f:close()
    local function run(scale)
      local ok, out = S.sh(("LUACUDA_VERBOSE=1 LUACUDA_CACHE_DIR=%s JIT_SCALE=%d lua5.4 %s"):format(dir, scale, script))
      assert.is_true(ok, out)
      local n = 0
      for _ in out:gmatch("luacuda%.jit: translated disk_probe for int64:1") do n = n + 1 end
      return n, out:match("got ([%d,]+)")
    end
    assert.same({ 1, "2,4,6,8" }, { run(2) })
    assert.same({ 0, "2,4,6,8" }, { run(2) })       -- from the disk
    assert.same({ 1, "3,6,9,12" }, { run(3) })      -- another upvalue's value: another translation
    assert.same({ 0, "2,4,6,8" }, { run(2) })
  end)

  it("translates a string chunk's function", function()
    local fn = load("local K = ... return function(x)\n  x[K.grid(1)] = 7\nend")(K)
    local k = luacuda.jit(fn)
    local x = luacuda.to_device(luacuda.zeros(3, "int64"))
    k[{ 1, 3 }](x)
    assert.same({ 7, 7, 7 }, host(x))
    local x32 = luacuda.to_device(luacuda.zeros(3, "int32"))
    k[{ 1, 3 }](x32)                 -- another dtype in the same place: another compile
    k[{ 1, 3 }](x)
    assert.same({ 7, 7, 7 }, host(x32))
    -- a strided view: another layout, read through its strides
    local whole = luacuda.to_device(luacuda.zeros(6, "int64"))
    k[{ 1, 3 }](whole[{ { 1, 6, 2 } }])
    assert.same({ 7, 0, 7, 0, 7, 0 }, host(whole))
    assert.same({ "int64:1", "int32:1", "int64:1:A" }, k:specializations())
  end)

  it("translates a local's reads again once its type is known or widened (k:source alone)", function()
    -- t is read above its first assignment (in the loop's next round): the
    -- first walk has no type for it there, so the store waits for the second;
    -- s is a float literal's until a float64 element widens it; 2 and 2.0
    -- are one key of a Lua table, but an integer and a float here
    local k = luacuda.jit(function(x, out)
      local t
      local s = 0.0
      for i = 1, #x do
        if i > 1 then out[i] = t end
        t = x[i]
        s = s + x[i]
      end
      local two, two_f = 2, 2.0
      out[1] = s + two + two_f
    end)
    local x = luacuda.device_array(4, "float64")
    local src = k:source(x, x)
    assert.truthy(src:find("out%.data%[[^\n]*%] = t;"), src)
    assert.falsy(src:find("(double)(s)", 1, true), src)
    assert.truthy(src:find("int64_t two;", 1, true), src)
    assert.truthy(src:find("double two_f;", 1, true), src)
  end)

  it("gives each pair of operand types its own promotion (k:source alone)", function()
    -- each type first with several others and after several others: the
    -- translator keeps promotions by the pair
    local k = luacuda.jit(function(i32, i64, f32, out)
      local a, b, c = i32[1], i64[1], f32[1]
      local r1, r2, r3, r4, r5 = a + b, a + c, a + a, a + 1, a + 1.5
      local r6, r7, r8, r9 = b + a, c + a, c + c, 1 + c
      out[1] = r1 + r2 + r3 + r4 + r5 + r6 + r7 + r8 + r9
    end)
    local src = k:source(luacuda.device_array(1, "int32"), luacuda.device_array(1, "int64"),
      luacuda.device_array(1, "float32"), luacuda.device_array(1, "float64"))
    local want = { r1 = "int64_t", r2 = "double", r3 = "int32_t", r4 = "int32_t", r5 = "double",
      r6 = "int64_t", r7 = "double", r8 = "float", r9 = "float" }
    for name, ctype in pairs(want) do
      assert.truthy(src:find("\n  " .. ctype .. " " .. name .. ";", 1, true), name .. " " .. ctype .. " in\n" .. src)
    end
  end)

  it("reads each host table's fields as its own (k:source alone)", function()
    -- x of three positions, and two of math's functions, each twice: the
    -- translator keeps a field's value once a walk by table and name
    local k = luacuda.jit(function(x)
      local i = K.threadIdx.x + K.blockIdx.x * K.blockDim.x
      x[1] = math.abs(i) + math.floor(1.5)
      x[2] = K.threadIdx.x + K.blockIdx.x * K.blockDim.x + math.abs(i) + math.floor(2.5)
    end)
    local src = k:source(luacuda.device_array(4, "int64")):match('extern "C".*')
    for _, part in ipairs({ "threadIdx.x", "blockIdx.x", "blockDim.x", "lcj_abs", "floor" }) do
      local _, n = src:gsub(part:gsub("%.", "%%."), "")
      assert.equal(2, n, part .. " in\n" .. src)
    end
  end)
end)
