-- Half precision, bfloat16 and complex numbers in kernels: cuda_fp16.h,
-- cuda_bf16.h and cuComplex.h as CUDA code includes them, on every backend
-- (NVRTC reads the toolkit's headers, the simulator its own with the same
-- API), with the same bits: every result is checked against a value
-- computed here, in Lua, from the exact arithmetic and the rounding rule.
local luacuda = require "luacuda"
local S = require "spec.support"

-- ---------------------------------------------------------------------------
-- 16-bit floats in Lua: F fraction bits, E exponent bits

local HALF = { frac = 10, exp = 5 }
local BF16 = { frac = 7, exp = 8 }

-- The value of the bits b (a Lua float; nil for NaN).
local function decode(b, f)
  local bias, emax = (1 << (f.exp - 1)) - 1, (1 << f.exp) - 1
  local e, m = (b >> f.frac) & emax, b & ((1 << f.frac) - 1)
  local v
  if e == emax then
    if m ~= 0 then return nil end
    v = math.huge
  elseif e == 0 then
    v = m * 2.0 ^ (1 - bias - f.frac)
  else
    v = (m + (1 << f.frac)) * 2.0 ^ (e - bias - f.frac)
  end
  return (b & 0x8000) ~= 0 and -v or v
end

-- The bits of the Lua float v (exactly the value meant) rounded once:
-- mode "rn" (to nearest, ties to even), "rz", "rd" or "ru".
local function round16(v, f, mode)
  local bias, emax = (1 << (f.exp - 1)) - 1, (1 << f.exp) - 1
  local neg = v < 0 or (v == 0 and 1 / v < 0)
  local sign = neg and 0x8000 or 0
  local a = math.abs(v)
  if a == math.huge then return sign | (emax << f.frac) end
  if a == 0 then return sign end
  local e = 0
  while 2.0 ^ e > a do e = e - 1 end
  while 2.0 ^ (e + 1) <= a do e = e + 1 end
  local q = math.max(e, 1 - bias) - f.frac     -- the weight of the last bit kept
  local scaled = a / 2.0 ^ q                    -- exact: a power of two
  local m = math.floor(scaled)
  local rest = scaled - m
  local up
  if mode == "rn" then up = rest > 0.5 or (rest == 0.5 and m % 2 == 1)
  elseif mode == "rz" then up = false
  elseif mode == "ru" then up = rest > 0 and not neg
  else up = rest > 0 and neg end
  m = math.tointeger(m) + (up and 1 or 0)
  local bits = m
  if m >= (1 << f.frac) then                   -- normal: m holds the implicit one
    bits = ((q + f.frac + bias - 1) << f.frac) + m
  end
  if bits >= (emax << f.frac) then              -- past the largest finite value
    local to_inf = mode == "rn" or (mode == "ru" and not neg) or (mode == "rd" and neg)
    bits = to_inf and (emax << f.frac) or (emax << f.frac) - 1
  end
  return sign | bits
end

local function rn(v) return round16(v, HALF, "rn") end
local function h(b) return decode(b, HALF) end

-- A float rounded to an integer by mode, as the conversions to int do.
local function round_int(v, mode)
  local fl = math.floor(v)
  if mode == "rd" then return math.tointeger(fl) end
  if mode == "ru" then return math.tointeger(math.ceil(v)) end
  if mode == "rz" then return math.tointeger(v < 0 and math.ceil(v) or fl) end
  local rest = v - fl
  if rest > 0.5 or (rest == 0.5 and fl % 2 == 1) then fl = fl + 1 end
  return math.tointeger(fl)
end

-- Floats from their 32-bit patterns (so every one is a float exactly).
local function floats(bits)
  return luacuda.array(bits, "uint32"):view("float32")
end

local function hex(b) return ("0x%04x"):format(b) end

local function expect_bits(want, got, what)
  for i = 1, #want do
    if want[i] ~= got[i] then
      error(("%s [%d]: expected %s, got %s"):format(what(i), i, hex(want[i]), hex(got[i])), 2)
    end
  end
end

-- ---------------------------------------------------------------------------

describe("half precision (cuda_fp16.h)", function()
  it("computes an axpy on __half2 pairs, one fused rounding per element", function()
    local m = luacuda.compile([[
#include <cuda_fp16.h>

extern "C" __global__ void haxpy(int n2, __half a, const __half *__restrict__ x,
                                 __half *__restrict__ y) {
  const __half2 a2 = __half2half2(a);
  const __half2 *x2 = reinterpret_cast<const __half2 *>(x);
  __half2 *y2 = reinterpret_cast<__half2 *>(y);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += blockDim.x * gridDim.x)
    y2[i] = __hfma2(a2, x2[i], y2[i]);
}
]])
    local n = 256
    local xs, ys = {}, {}
    for i = 1, n do
      xs[i] = ((i * 37) % 129 - 64) / 64           -- k/64: the products are exact
      ys[i] = ((i * 11) % 97 - 48) / 16
    end
    local a = -1.375
    local x = luacuda.to_device(xs, { dtype = "float16" })
    local y = luacuda.to_device(ys, { dtype = "float16" })
    m.haxpy[{ 2, 32 }](n // 2, a, x, y)
    local got = y:copy_to_host():view("uint16"):totable()
    local want = {}
    for i = 1, n do want[i] = rn(a * xs[i] + ys[i]) end   -- exact in a double
    expect_bits(want, got, function(i) return ("%g * %g + %g"):format(a, xs[i], ys[i]) end)
  end)

  it("reduces a dot product with __hfma2, __shfl_down_sync on __half2 and shared memory",
     function()
    local m = luacuda.compile([[
#include <cuda_fp16.h>

#define FULL_MASK 0xffffffffu

// each thread accumulates pairs with a stride, each warp reduces by shuffles,
// the warps' sums meet in shared memory
extern "C" __global__ void hdot(const __half *a, const __half *b, int n, __half *out) {
  __shared__ __half2 warp_sums[32];
  const __half2 *a2 = reinterpret_cast<const __half2 *>(a);
  const __half2 *b2 = reinterpret_cast<const __half2 *>(b);
  __half2 acc = __float2half2_rn(0.0f);
  for (int i = threadIdx.x; i < n / 2; i += blockDim.x)
    acc = __hfma2(a2[i], b2[i], acc);
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    acc = __hadd2(acc, __shfl_down_sync(FULL_MASK, acc, offset));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    __half2 total = warp_sums[0];
    for (int w = 1; w < (int)blockDim.x / 32; w++) total += warp_sums[w];
    *out = __hadd(__low2half(total), __high2half(total));
  }
}
]])
    local n, threads = 1024, 64
    local as, bs = {}, {}
    for i = 1, n do
      as[i] = ((i * 29) % 61 - 30) / 32
      bs[i] = ((i * 13) % 53 - 26) / 16
    end
    local out = luacuda.device_array(1, "float16")
    m.hdot[{ 1, threads }](luacuda.to_device(as, { dtype = "float16" }),
                           luacuda.to_device(bs, { dtype = "float16" }), n, out)
    -- the same order of operations, each rounded to half
    local acc = {}
    for t = 0, threads - 1 do
      local lo, hi = 0.0, 0.0
      for i = t, n // 2 - 1, threads do
        lo = h(rn(as[2 * i + 1] * bs[2 * i + 1] + lo))
        hi = h(rn(as[2 * i + 2] * bs[2 * i + 2] + hi))
      end
      acc[t] = { lo, hi }
    end
    for w = 0, threads // 32 - 1 do
      local offset = 16
      while offset > 0 do
        local nxt = {}
        for l = 0, 31 do
          local src = l + offset < 32 and acc[w * 32 + l + offset] or acc[w * 32 + l]
          nxt[l] = { h(rn(acc[w * 32 + l][1] + src[1])), h(rn(acc[w * 32 + l][2] + src[2])) }
        end
        for l = 0, 31 do acc[w * 32 + l] = nxt[l] end
        offset = offset // 2
      end
    end
    local total = acc[0]
    for w = 1, threads // 32 - 1 do
      total = { h(rn(total[1] + acc[w * 32][1])), h(rn(total[2] + acc[w * 32][2])) }
    end
    local want = rn(total[1] + total[2])
    assert.equal(hex(want), hex(out:copy_to_host():view("uint16")[1]))
    -- and near the exact dot product
    local exact = 0
    for i = 1, n do exact = exact + as[i] * bs[i] end
    assert.is_true(math.abs(h(want) - exact) < 1, ("%g against %g"):format(h(want), exact))
  end)

  it("converts floats to half in every rounding mode, and back", function()
    local m = luacuda.compile([[
#include <cuda_fp16.h>

extern "C" __global__ void to_half(const float *x, int n, unsigned short *o, float *back) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  o[4 * i + 0] = __half_as_ushort(__float2half_rn(x[i]));
  o[4 * i + 1] = __half_as_ushort(__float2half_rz(x[i]));
  o[4 * i + 2] = __half_as_ushort(__float2half_rd(x[i]));
  o[4 * i + 3] = __half_as_ushort(__float2half_ru(x[i]));
  back[i] = __half2float(__float2half(x[i]));
}
]])
    local bits = {
      0x3dcccccd,   -- 0.1
      0xbdcccccd,   -- -0.1
      0x3eaaaaab,   -- 1/3
      0x477fe000,   -- 65504, the largest half
      0x477ff000,   -- 65520: halfway to 2^16, to even is infinity
      0x477fefff,   -- just below: 65504
      0xc77ff000,   -- -65520
      0x33000000,   -- 2^-25: half the least subnormal, to even is 0
      0x33000001,   -- just above: the least subnormal
      0x33c00000,   -- 1.5 * 2^-25
      0x33d6bf95,   -- 1e-7
      0xb3d6bf95,   -- -1e-7
      0x38800000,   -- 2^-14, the least normal
      0x387fc000,   -- the largest subnormal
      0x45001000,   -- 2049: halfway between 2048 and 2050, to even 2048
      0x45003000,   -- 2051: to even 2052
      0x501502f9,   -- 1e10
      0x00000001,   -- the least float subnormal
      0x80000000,   -- -0
      0x7f800000,   -- infinity
      0xff800000,   -- -infinity
    }
    -- and a seeded spread of others, from tiny to huge
    local seed = 7
    for _ = 1, 43 do
      seed = (seed * 1103515245 + 12345) % 2147483648
      local e = 100 + seed % 50
      bits[#bits + 1] = ((seed & 1) << 31) | (e << 23) | ((seed * 7919) & 0x7fffff)
    end
    local n = #bits
    local x = floats(bits)
    local o = luacuda.device_array(4 * n, "uint16")
    local back = luacuda.device_array(n, "float32")
    m.to_half[{ 1, 64 }](luacuda.to_device(x), n, o, back)
    local got, b = o:copy_to_host():totable(), back:copy_to_host():totable()
    local want = {}
    for i = 1, n do
      for k, mode in ipairs({ "rn", "rz", "rd", "ru" }) do
        want[4 * (i - 1) + k] = round16(x[i], HALF, mode)
      end
    end
    expect_bits(want, got, function(i)
      return ("__float2half_%s(%.9g)"):format(({ "rn", "rz", "rd", "ru" })[(i - 1) % 4 + 1],
                                              x[(i - 1) // 4 + 1])
    end)
    for i = 1, n do
      local v = h(want[4 * i - 3])
      assert.is_true(v == b[i] and (v ~= 0 or 1 / v == 1 / b[i]),
                     ("__half2float(__float2half(%.9g)): %s, not %s"):format(x[i], b[i], v))
    end
  end)

  it("converts integers to half and half to integers in every rounding mode", function()
    local m = luacuda.compile([[
#include <cuda_fp16.h>

extern "C" __global__ void ints(const int *k, const __half *v, int n, unsigned short *h,
                                int *i, long long *ll, unsigned *u) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  h[4 * t + 0] = __half_as_ushort(__int2half_rn(k[t]));
  h[4 * t + 1] = __half_as_ushort(__int2half_rz(k[t]));
  h[4 * t + 2] = __half_as_ushort(__int2half_rd(k[t]));
  h[4 * t + 3] = __half_as_ushort(__int2half_ru(k[t]));
  i[4 * t + 0] = __half2int_rn(v[t]);
  i[4 * t + 1] = __half2int_rz(v[t]);
  i[4 * t + 2] = __half2int_rd(v[t]);
  i[4 * t + 3] = __half2int_ru(v[t]);
  ll[t] = __half2ll_rn(v[t]);
  u[t] = __half2uint_rn(v[t]);
}
]])
    local ks = { 0, 1, -1, 2047, 2049, 2051, 4097, -4097, 65504, 65519, 65520, 70000, -70000,
                 123456789, -2147483647, 2147483647, 1000, -1000, 33, 77 }
    local vs = { 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.25, -0.75, 3.0, 1023.5, -1023.5, 65504,
                 -65504, math.huge, -math.huge, 0.0, -0.0, 7.75, -7.25, 0 / 0 }
    local n = #ks
    local hb, ib = luacuda.device_array(4 * n, "uint16"), luacuda.device_array(4 * n, "int32")
    local llb, ub = luacuda.device_array(n, "int64"), luacuda.device_array(n, "uint32")
    m.ints[{ 1, 32 }](luacuda.to_device(ks, { dtype = "int32" }),
                      luacuda.to_device(vs, { dtype = "float16" }), n, hb, ib, llb, ub)
    local H, I, LL, U = hb:copy_to_host():totable(), ib:copy_to_host():totable(),
                        llb:copy_to_host():totable(), ub:copy_to_host():totable()
    local modes = { "rn", "rz", "rd", "ru" }
    local function clamp(x, lo, hi) return x < lo and lo or x > hi and hi or x end
    for t = 1, n do
      for k, mode in ipairs(modes) do
        assert.equal(hex(round16(ks[t] + 0.0, HALF, mode)), hex(H[4 * (t - 1) + k]),
                     ("__int2half_%s(%d)"):format(mode, ks[t]))
        local v = vs[t]
        local want = v ~= v and 0                 -- NaN
                     or math.abs(v) == math.huge and (v > 0 and 2147483647 or -2147483648)
                     or round_int(v, mode)
        assert.equal(want, I[4 * (t - 1) + k], ("__half2int_%s(%g)"):format(mode, v))
      end
      local v = vs[t]
      local want_ll = v == math.huge and math.maxinteger or v == -math.huge and math.mininteger
                      or v ~= v and math.mininteger or round_int(v, "rn")   -- NaN: 2^63
      assert.equal(want_ll, LL[t], ("__half2ll_rn(%g)"):format(v))
      -- unsigned: negative values are 0, infinity the largest
      local want_u = v ~= v and 0 or v == math.huge and 4294967295
                     or clamp(round_int(math.max(v, 0), "rn"), 0, 4294967295)
      assert.equal(want_u, U[t], ("__half2uint_rn(%g)"):format(v))
    end
  end)

  it("has the operators, comparisons and functions of __half and __half2", function()
    local m = luacuda.compile([[
#include <cuda_fp16.h>

__device__ unsigned short bits(__half v) { return __half_as_ushort(v); }

extern "C" __global__ void ops(const __half *v, unsigned short *o, int *flags) {
  const __half a = v[0], b = v[1], c = v[2];
  __half s = a;
  s += b;
  s *= c;
  o[0] = bits(a + b);
  o[1] = bits(a - b);
  o[2] = bits(a * b);
  o[3] = bits(a / b);
  o[4] = bits(s);
  o[5] = bits(-a);
  o[6] = bits(__hfma(a, b, c));
  o[7] = bits(__habs(__hneg(b)));
  o[8] = bits(__hmax(a, b));
  o[9] = bits(__hmin(a, b));
  o[10] = bits(__hfma_relu(a, b, __hneg(c)));
  o[11] = bits(__hadd_sat(a, c));
  o[12] = bits(hsqrt(c));
  o[13] = bits(hrcp(c));
  o[14] = bits(hfloor(b));
  o[15] = bits(hceil(b));
  o[16] = bits(htrunc(__hneg(b)));
  o[17] = bits(hrint(b));
  __half2 p = __halves2half2(a, b), q = make_half2(c, a);
  __half2 r = p * q + p;
  o[18] = bits(__low2half(r));
  o[19] = bits(__high2half(r));
  o[20] = bits(__high2half(__lowhigh2highlow(p)));
  o[21] = bits(__low2half(h2sqrt(q)));
  o[22] = bits(__float2half(__low2float(p) + __high2float(q)));
  o[23] = bits(__low2half(__hmul2(__hneg2(p), __habs2(q))));
  flags[0] = (a < b) | (a > b) << 1 | (a == a) << 2 | (a != b) << 3 | (a <= a) << 4 |
             __heq(a, b) << 5 | __hge(c, a) << 6 | __hlt(b, c) << 7;
  flags[1] = __hbeq2(p, p) | __hblt2(p, q) << 1 | __hbgt2(q, p) << 2;
  flags[2] = (__half2float(__hlt2(p, q).x) == 1.0f) | (__half2float(__hlt2(p, q).y) == 1.0f) << 1;
  flags[3] = __hisinf(__float2half(1e10f)) | __hisnan(__hdiv(__float2half(0.0f), __float2half(0.0f))) << 1;
  flags[4] = __half2int_rz(a * c);
  flags[5] = (int)((float)c * 2.0f);     // float arithmetic on a half made float
}
]])
    local a, b, c = 1.25, -2.75, 6.25
    local o = luacuda.device_array(24, "uint16")
    local flags = luacuda.device_array(6, "int32")
    m.ops[{ 1, 1 }](luacuda.to_device({ a, b, c }, { dtype = "float16" }), o, flags)
    local got, F = o:copy_to_host():totable(), flags:copy_to_host():totable()
    local function floor_h(x) return rn(math.floor(x)) end
    local want = {
      rn(a + b), rn(a - b), rn(a * b), rn(a / b), rn(h(rn(a + b)) * c), rn(-a),
      rn(a * b + c), rn(-b), rn(a), rn(b), rn(math.max(a * b - c, 0)), rn(math.min(a + c, 1)),
      rn(math.sqrt(c)), rn(1 / c), floor_h(b), rn(math.ceil(b)), rn(2.0), rn(-3.0),
      rn(a * c + a), rn(b * a + b), rn(a), rn(math.sqrt(c)), rn(a + a), rn(-a * c),
    }
    expect_bits(want, got, function(i) return "o" end)
    assert.same({ 2 | 4 | 8 | 16 | 64 | 128, 1 | 2 | 4, 1 | 2, 1 | 2, 7, 12 }, F)
  end)

  it("computes square roots, exponentials and logarithms correctly rounded", function()
    local fns = { "hsqrt", "hrsqrt", "hexp", "hexp2", "hexp10", "hlog", "hlog2", "hlog10",
                  "hsin", "hcos" }
    local lua = {
      hsqrt = math.sqrt, hrsqrt = function(x) return 1 / math.sqrt(x) end, hexp = math.exp,
      hexp2 = function(x) return 2.0 ^ x end, hexp10 = function(x) return 10.0 ^ x end,
      hlog = math.log, hlog2 = function(x) return math.log(x, 2) end,
      hlog10 = function(x) return math.log(x, 10) end, hsin = math.sin, hcos = math.cos,
    }
    local lines = {}
    for k, f in ipairs(fns) do
      lines[k] = ("  o[%d * n + i] = __half_as_ushort(%s(x[i]));"):format(k - 1, f)
    end
    local m = luacuda.compile(([[
#include <cuda_fp16.h>
extern "C" __global__ void fns(const __half *x, int n, unsigned short *o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
%s
}
]]):format(table.concat(lines, "\n")))
    -- positive halves from 1/8 to 8, every 13th
    local xs = {}
    for b = 0x3000, 0x4800, 13 do xs[#xs + 1] = h(b) end
    local n = #xs
    local o = luacuda.device_array(#fns * n, "uint16")
    m.fns[{ (n + 63) // 64, 64 }](luacuda.to_device(xs, { dtype = "float16" }), n, o)
    local got = o:copy_to_host():totable()
    for k, f in ipairs(fns) do
      for i = 1, n do
        local want = rn(lua[f](xs[i]))
        assert.equal(hex(want), hex(got[(k - 1) * n + i]), ("%s(%.9g)"):format(f, xs[i]))
      end
    end
  end)

  -- The GPU computes hexp and hlog through approximate float instructions,
  -- then corrects the few inputs where those round the wrong way; the fake
  -- driver's interpreter computes those instructions exactly, and there the
  -- corrections overshoot: its result is one unit off for these inputs.
  it("gives the correctly rounded exponential and logarithm where the float steps are near a tie",
     function()
    if S.backend ~= "sim" then
      return pending("simulator only: the fake driver computes ex2.approx and lg2.approx exactly")
    end
    local m = luacuda.compile([[
#include <cuda_fp16.h>
extern "C" __global__ void k(const unsigned short *x, unsigned short *o) {
  o[0] = __half_as_ushort(hexp(__ushort_as_half(x[0])));
  o[1] = __half_as_ushort(hexp(__ushort_as_half(x[1])));
  o[2] = __half_as_ushort(hlog(__ushort_as_half(x[2])));
  o[3] = __half_as_ushort(hlog10(__ushort_as_half(x[3])));
}
]])
    local ins = { 0x1f79, 0xc13b, 0x3bfe, 0x4224 }
    local o = luacuda.device_array(4, "uint16")
    m.k[{ 1, 1 }](luacuda.to_device(ins, { dtype = "uint16" }), o)
    local want = { rn(math.exp(h(ins[1]))), rn(math.exp(h(ins[2]))), rn(math.log(h(ins[3]))),
                   rn(math.log(h(ins[4]), 10)) }
    assert.same({ 0x3c07, 0x2caf, 0x9401, 0x37cb }, want)   -- exp(h(0x1f79)) = 1.00732420 = 7.49999 units past 1
    assert.same(want, o:copy_to_host():totable())
  end)

  it("adds atomically to __half and __half2", function()
    local m = luacuda.compile([[
#include <cuda_fp16.h>
extern "C" __global__ void count(__half *one, __half2 *two) {
  atomicAdd(one, __float2half(0.5f));
  atomicAdd(two, __floats2half2_rn(1.0f, -0.25f));
}
]])
    local one = luacuda.to_device({ 3 }, { dtype = "float16" })
    -- a __half2 * takes float16 pairs (a last axis of 2), as a float2 * floats
    local two = luacuda.to_device({ { 0, 100 } }, { dtype = "float16" })
    m.count[{ 4, 64 }](one, two)
    assert.same({ 131 }, one:copy_to_host():totable())
    assert.same({ { 256, 36 } }, two:copy_to_host():totable())
  end)

  -- as the toolkit's: a half converts to float (and integers) and back
  -- implicitly, so mixing it with another arithmetic type is ambiguous
  it("refuses what NVRTC refuses: a __half times an int or a float", function()
    for _, e in ipairs({ "c * 2", "c / 2.0f", "c + 1.0" }) do
      local src = ('#include <cuda_fp16.h>\n'
                   .. 'extern "C" __global__ void k(__half c, float *o) { o[0] = %s; }'):format(e)
      local err = S.misuse("compilation of kernel.cu failed", luacuda.compile, src)
      assert.truthy(err:find("operator", 1, true), err)
    end
  end)

  it("passes float16 arrays to __half *, half * and __half2 *, and halves by value", function()
    local m = luacuda.compile([[
#include <cuda_fp16.h>
extern "C" __global__ void twice(const half *x, __half *y) { y[threadIdx.x] = x[threadIdx.x] * __half(2.0f); }
extern "C" __global__ void scale2(half2 *v, __half2 s, __half t) {
  v[threadIdx.x] = __hfma2(v[threadIdx.x], s, __half2half2(t));
}
]])
    local x = luacuda.to_device({ 1.5, -0.125 }, { dtype = "float16" })
    local y = luacuda.device_array(2, "float16")
    m.twice[{ 1, 2 }](x, y)
    assert.same({ 3.0, -0.25 }, y:copy_to_host():totable())
    local v = luacuda.to_device({ { 1, 2 }, { 3, 4 } }, { dtype = "float16" })
    m.scale2[{ 1, 2 }](v, { x = 0.5, y = -3 }, 0.25)
    assert.same({ { 0.75, -5.75 }, { 1.75, -11.75 } }, v:copy_to_host():totable())
    m.scale2[{ 1, 2 }](v, { 2, 1 }, 0)
    assert.same({ { 1.5, -5.75 }, { 3.5, -11.75 } }, v:copy_to_host():totable())
    S.misuse("kernel 'twice' argument 2 'y' (__half *): expected a float16 array, got bfloat16",
             m.twice[{ 1, 2 }], x, luacuda.device_array(2, "bfloat16"):fill(0))
    S.misuse("kernel 'scale2' argument 1 'v' (half2 *): expected a float16 array whose last "
             .. "axis has 2 elements, got a last axis of 4", m.scale2[{ 1, 2 }],
             luacuda.device_array(4, "float16"):fill(0), { 1, 1 }, 0)
    S.misuse("kernel 'scale2' argument 2 's' (__half2): [2]: float16 needs a number, got string",
             m.scale2[{ 1, 2 }], v, { 1, "2" }, 0)
  end)
end)

describe("bfloat16 (cuda_bf16.h)", function()
  it("is a dtype: Lua numbers rounded to nearest even, read back exactly, printed", function()
    local vs = { 1.0, 3.14159, -2.5, 1 / 3, 1e38, 3.5e38, 1e-39, -0.0, math.huge, 65536 + 256,
                 65536 + 512 + 256, 1.00390625, 1.01171875 }
    local a = luacuda.array(vs, "bfloat16")
    assert.equal("bfloat16", a.dtype)
    assert.equal(2, a.itemsize)
    local bits = a:view("uint16"):totable()
    for i, v in ipairs(vs) do
      assert.equal(hex(round16(v, BF16, "rn")), hex(bits[i]), ("bfloat16(%.9g)"):format(v))
      local back = decode(bits[i], BF16)
      assert.equal(back, a[i])
    end
    assert.equal(0x4049, bits[2])                 -- 3.140625
    assert.equal(0x7f80, bits[6])                 -- past the largest: infinity
    assert.equal(0x4780, bits[10])                -- 65792 is halfway: to even, 65536
    assert.equal(0x4782, bits[11])                -- 66304 is halfway: to even, 66560
    assert.equal(0x3f80, bits[12])                -- 1 + 2^-8: halfway, to even
    assert.equal(0x3f82, bits[13])                -- 1 + 3 * 2^-8: halfway, to even
    -- printed as its shortest decimal: 3.140625 is 3.14 in bfloat16
    assert.truthy(tostring(a[{{1, 3}}]):find("{ 1.0 ,  3.14, -2.5 }", 1, true), tostring(a[{{1, 3}}]))
    -- on the device, and as a record member
    local d = luacuda.to_device(vs, { dtype = "bfloat16" })
    assert.same(bits, d:copy_to_host():view("uint16"):totable())
    local r = luacuda.record({ { "w", "bfloat16" }, { "pair", "bfloat16", 2 } })
    local ra = luacuda.array({ { w = 0.1, pair = { 2.5, -1 } } }, r)
    assert.equal(decode(round16(0.1, BF16, "rn"), BF16), ra[1].w)
    assert.same({ 2.5, -1.0 }, ra[1].pair:totable())
    S.misuse("bfloat16 needs a number, got string", function() a[1] = "1" end)
  end)

  it("converts, computes and reduces on __nv_bfloat16 and __nv_bfloat162", function()
    local m = luacuda.compile([[
#include <cuda_bf16.h>

extern "C" __global__ void bf(const float *x, int n, const __nv_bfloat16 *w,
                              unsigned short *o, __nv_bfloat16 *sum) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    o[4 * i + 0] = __bfloat16_as_ushort(__float2bfloat16(x[i]));
    o[4 * i + 1] = __bfloat16_as_ushort(__float2bfloat16_rz(x[i]));
    o[4 * i + 2] = __bfloat16_as_ushort(__float2bfloat16_rd(x[i]));
    o[4 * i + 3] = __bfloat16_as_ushort(__float2bfloat16_ru(x[i]));
  }
  if (i == 0) {
    const __nv_bfloat162 *w2 = reinterpret_cast<const __nv_bfloat162 *>(w);
    __nv_bfloat162 acc = __float2bfloat162_rn(0.0f);
    for (int k = 0; k < 4; k++) acc = __hadd2(__hmul2(w2[k], w2[k]), acc);
    sum[0] = __low2bfloat16(acc) + __high2bfloat16(acc);
#if __CUDA_ARCH__ >= 800
    sum[1] = __hfma(w[0], w[1], w[2]);       // compute capability 8.0
#else
    sum[1] = w[0] * w[1] + w[2];             // two roundings: the same here
#endif
    sum[2] = w[3] / w[4];
    sum[3] = __float2bfloat16(__bfloat162float(w[5]) * 3.0f);
    sum[4] = hsqrt(w[6]);
  }
}
]])
    local bits = { 0x3dcccccd, 0xbdcccccd, 0x3eaaaaab, 0x7f7fffff, 0x00000001, 0x80000003,
                   0x3f808000, 0x3f818000, 0x3f80ffff, 0x4b000001, 0xcb7fffff }
    local seed = 3
    for _ = 1, 21 do
      seed = (seed * 1103515245 + 12345) % 2147483648
      bits[#bits + 1] = ((seed & 1) << 31) | ((seed * 31) & 0x7f7fffff)
    end
    local n = #bits
    local x = floats(bits)
    local ws = { 1.5, -0.75, 2.25, 10.0, 3.0, 1.0078125, 2.0, 0.5 }
    local o = luacuda.device_array(4 * n, "uint16")
    local sum = luacuda.device_array(5, "bfloat16")
    m.bf[{ 1, 64 }](luacuda.to_device(x), n, luacuda.to_device(ws, { dtype = "bfloat16" }), o, sum)
    local got = o:copy_to_host():totable()
    local want = {}
    for i = 1, n do
      for k, mode in ipairs({ "rn", "rz", "rd", "ru" }) do
        want[4 * (i - 1) + k] = round16(x[i], BF16, mode)
      end
    end
    expect_bits(want, got, function(i)
      return ("__float2bfloat16_%s(%.9g)"):format(({ "rn", "rz", "rd", "ru" })[(i - 1) % 4 + 1],
                                                  x[(i - 1) // 4 + 1])
    end)
    local function b(v) return decode(round16(v, BF16, "rn"), BF16) end
    local lo, hi = 0.0, 0.0
    for k = 0, 3 do
      lo = b(b(ws[2 * k + 1] * ws[2 * k + 1]) + lo)
      hi = b(b(ws[2 * k + 2] * ws[2 * k + 2]) + hi)
    end
    assert.same({ b(lo + hi), b(ws[1] * ws[2] + ws[3]), b(ws[4] / ws[5]), b(ws[6] * 3),
                  b(math.sqrt(ws[7])) }, sum:copy_to_host():totable())
  end)

  -- the simulator is compute capability 7.5 (its __CUDA_ARCH__, and what
  -- NVRTC checks its kernels for): bfloat16's fused operations need 8.0
  it("has no fused bfloat16 operations on the simulator, as CUDA has none below 8.0", function()
    if S.backend ~= "sim" then return pending("simulator only: compute capability 7.5") end
    local src = [[
#include <cuda_bf16.h>
extern "C" __global__ void k(__nv_bfloat16 *w) { w[0] = __hfma(w[0], w[1], w[2]); }
]]
    for _, check in ipairs({ "1", "0" }) do     -- NVRTC's refusal, and the host compiler's
      local ok, out = S.lua_run("LUACUDA_NVRTC_CHECK=" .. check, ([[
        local ok, err = pcall(require("luacuda").compile, %q)
        print(ok, err)
      ]]):format(src))
      assert.is_true(ok, out)
      assert.truthy(out:find("false\tluacuda.compile: compilation of kernel.cu failed", 1, true), out)
      assert.truthy(out:find("__nv_bfloat16", 1, true), out)
    end
  end)

  it("passes bfloat16 arrays to __nv_bfloat16 * and nv_bfloat16 *, and scalars by value",
     function()
    local m = luacuda.compile([[
#include <cuda_bf16.h>
extern "C" __global__ void scale(const nv_bfloat16 *x, __nv_bfloat16 s, __nv_bfloat16 *y) {
  y[threadIdx.x] = x[threadIdx.x] * s;
}
]])
    local x = luacuda.to_device({ 1.5, -3 }, { dtype = "bfloat16" })
    local y = luacuda.device_array(2, "bfloat16")
    m.scale[{ 1, 2 }](x, 0.1, y)
    local s = decode(round16(0.1, BF16, "rn"), BF16)
    assert.same({ decode(round16(1.5 * s, BF16, "rn"), BF16), decode(round16(-3 * s, BF16, "rn"), BF16) },
                y:copy_to_host():totable())
    S.misuse("kernel 'scale' argument 1 'x' (const nv_bfloat16 *): expected a bfloat16 array, got float16",
             m.scale[{ 1, 2 }], luacuda.device_array(2, "float16"):fill(0), 1, y)
  end)
end)

describe("complex numbers (cuComplex.h)", function()
  it("multiplies, divides, conjugates and takes magnitudes in float and double", function()
    local m = luacuda.compile([[
#include <cuComplex.h>

extern "C" __global__ void cplx(const cuFloatComplex *a, const cuFloatComplex *b,
                                const cuFloatComplex *e, cuFloatComplex *o, float *mag,
                                const cuDoubleComplex *c, const cuDoubleComplex *d,
                                const cuDoubleComplex *f, cuDoubleComplex *od, double *magd) {
  int i = threadIdx.x;
  o[4 * i + 0] = cuCmulf(a[i], b[i]);
  o[4 * i + 1] = cuCdivf(a[i], b[i]);
  o[4 * i + 2] = cuCaddf(cuConjf(a[i]), b[i]);
  o[4 * i + 3] = make_cuFloatComplex(cuCrealf(a[i]) - cuCimagf(b[i]), 0.0f);
  mag[i] = cuCabsf(e[i]);
  od[3 * i + 0] = cuCmul(c[i], d[i]);
  od[3 * i + 1] = cuCdiv(c[i], d[i]);
  od[3 * i + 2] = cuCsub(cuConj(c[i]), d[i]);
  magd[i] = cuCabs(f[i]);
}
]])
    -- values whose products, quotients and magnitudes are exact, the
    -- scalings and sums on the way too: the same on every backend (NVRTC
    -- fuses a * b + c, which changes nothing exact)
    local as = { { 1, 2 }, { -3, 0.5 }, { 0.25, -4 }, { 7, 7 } }
    local bs = { { 2, 2 }, { -4, 4 }, { 0, -8 }, { 1, -1 } }
    local es = { { 3, 4 }, { -4, 3 }, { 0, -8 }, { -6, -8 } }
    -- cuFloatComplex is float2: it takes float32 pairs (a last axis of 2),
    -- or records of two floats; cuDoubleComplex the same in float64
    local c64 = luacuda.record({ { "x", "float64" }, { "y", "float64" } })
    local function cs(t) return luacuda.to_device(t, { dtype = "float32" }) end
    local function records(t)
      local rows = {}
      for i, z in ipairs(t) do rows[i] = { x = z[1], y = z[2] } end
      return luacuda.to_device(luacuda.array(rows, c64))
    end
    local o, od = luacuda.device_array({ 4 * #as, 2 }, "float32"), luacuda.device_array(3 * #as, c64)
    local mag, magd = luacuda.device_array(#as, "float32"), luacuda.device_array(#as, "float64")
    m.cplx[{ 1, #as }](cs(as), cs(bs), cs(es), o, mag, records(as), records(bs),
                       luacuda.to_device(es, { dtype = "float64" }), od, magd)
    local O, M = o:copy_to_host():ravel():totable(), mag:copy_to_host():totable()
    local OD = {}
    for _, z in ipairs(od:copy_to_host():totable()) do OD[#OD + 1] = z.x OD[#OD + 1] = z.y end
    local MD = magd:copy_to_host():totable()
    for i, z in ipairs(as) do
      local w = bs[i]
      local mul = { z[1] * w[1] - z[2] * w[2], z[1] * w[2] + z[2] * w[1] }
      local den = w[1] * w[1] + w[2] * w[2]
      local div = { (z[1] * w[1] + z[2] * w[2]) / den, (z[2] * w[1] - z[1] * w[2]) / den }
      local at = 8 * (i - 1)
      assert.same({ mul[1], mul[2], div[1], div[2], z[1] + w[1], -z[2] + w[2], z[1] - w[2], 0.0 },
                  { O[at + 1], O[at + 2], O[at + 3], O[at + 4], O[at + 5], O[at + 6], O[at + 7], O[at + 8] })
      local abs = math.sqrt(es[i][1] ^ 2 + es[i][2] ^ 2)
      assert.equal(abs, M[i])
      at = 6 * (i - 1)
      assert.same({ mul[1], mul[2], div[1], div[2], z[1] - w[1], -z[2] - w[2] },
                  { OD[at + 1], OD[at + 2], OD[at + 3], OD[at + 4], OD[at + 5], OD[at + 6] })
      assert.equal(abs, MD[i])
    end
  end)
end)
