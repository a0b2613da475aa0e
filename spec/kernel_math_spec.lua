-- The CUDA math API and the device intrinsics, as real CUDA C++ calls them:
-- kernels run on the backend under test (make check: the simulator, whose
-- kernels/sim_math.h provides them; make check-fake-cuda: what NVRTC
-- compiles them to, run by the fake driver's PTX interpreter), their
-- results checked against values computed here. Exactly where IEEE or
-- CUDA define the result (the integer, bit, SIMD and DPX intrinsics,
-- conversions, the directed roundings, __saturatef); within CUDA's
-- documented bounds for the math library, against mpmath's values at 300
-- bits rounded to nearest (written in below). CUDA's overload sets (min and
-- max on mixed signedness, the float overloads), its atomics and no others
-- (a kernel may define atomicAdd for long long itself), __ldg and the
-- cache-hinted loads, clock64 and __nanosleep. A last test runs a broad
-- sample on both backends in children and compares them.
local luacuda = require "luacuda"
local S = require "spec.support"

local BUILD = os.getenv("LUACUDA_BUILD") or "build"
local FAKE = BUILD .. "/fake/libcuda.so.1"

-- ---- values and their bits ---------------------------------------------------

local M32 = 0xffffffff
local function fbits(x) return (string.unpack("<I4", string.pack("<f", x))) end
local function ffrom(u) return (string.unpack("<f", string.pack("<I4", u & M32))) end
local function dbits(x) return (string.unpack("<i8", string.pack("<d", x))) end
local function dfrom(u) return (string.unpack("<d", string.pack("<i8", u))) end
local FLT_MAX = ffrom(0x7f7fffff)
-- x rounded to the nearest float (past the largest float's half ulp: infinity)
local function f32(x)
  if x ~= x then return x end
  if math.abs(x) >= 2.0 ^ 128 - 2.0 ^ 103 then return x > 0 and math.huge or -math.huge end
  return ffrom(fbits(x))
end
local function isnan(x) return x ~= x end
-- the next float up and down (from -0 and +0 alike)
local function fup(f)
  if f == math.huge or isnan(f) then return f end
  if f == 0 then return ffrom(1) end
  local b = fbits(f)
  return ffrom(f > 0 and b + 1 or b - 1)
end
local function fdown(f) return -fup(-f) end
-- the distance in ulps of two floats' (or doubles') bits; NaNs agree
local function ord32(b) b = b & M32; return b & 0x80000000 ~= 0 and -(b & 0x7fffffff) or b end
local function ord64(b) return b < 0 and -(b & math.maxinteger) or b end
local function ulps32(a, b)
  if isnan(ffrom(a)) or isnan(ffrom(b)) then return isnan(ffrom(a)) == isnan(ffrom(b)) and 0 or math.huge end
  return math.abs(ord32(a) - ord32(b))
end
local function ulps64(a, b)
  if isnan(dfrom(a)) or isnan(dfrom(b)) then return isnan(dfrom(a)) == isnan(dfrom(b)) and 0 or math.huge end
  local x, y = ord64(a), ord64(b)
  if (x < 0) ~= (y < 0) then return math.abs(x + 0.0) + math.abs(y + 0.0) end
  return math.abs(x - y)
end
local function hex(v) return ("0x%x"):format(v) end

-- integers of 32 bits, signed and not, and of any width signed
local function u32(v) return v & M32 end
local function s32(v) v = v & M32; return v >= 0x80000000 and v - 0x100000000 or v end
local function sext(v, bits)
  local m = 1 << bits
  v = v & (m - 1)
  return v >= m >> 1 and v - m or v
end

-- Run kernel name of m over n threads (blocks of 64) and wait.
local function run(m, name, n, ...)
  m[name][{(n + 63) // 64, 64}](...)
  luacuda.synchronize()
end

-- Check every result of a table of cases: got[i] against want[i], naming
-- the case; at most 20 failures listed.
local function check(bad)
  assert(#bad == 0, #bad .. " wrong:\n" .. table.concat(bad, "\n", 1, math.min(#bad, 20)))
end

-- ---- integer and bit intrinsics -------------------------------------------------------

-- the high 64 bits of the unsigned product of two 64-bit values
local function umulhi64(a, b)
  local a0, a1, b0, b1 = a & M32, a >> 32, b & M32, b >> 32
  local p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
  local mid = (p00 >> 32) + (p01 & M32) + (p10 & M32)
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32)
end
local function smulhi64(a, b)
  local h = umulhi64(a, b)
  if a < 0 then h = h - b end
  if b < 0 then h = h - a end
  return h
end
local function brev(v, bits)
  local r = 0
  for i = 0, bits - 1 do r = r | (((v >> i) & 1) << (bits - 1 - i)) end
  return r
end
local function clz(v, bits)
  for i = bits - 1, 0, -1 do if (v >> i) & 1 == 1 then return bits - 1 - i end end
  return bits
end
local function ffs(v, bits)
  for i = 0, bits - 1 do if (v >> i) & 1 == 1 then return i + 1 end end
  return 0
end
local function popc(v)
  local n = 0
  for i = 0, 63 do n = n + ((v >> i) & 1) end
  return n
end
local function byte_perm(x, y, s)
  local v, r = (u32(y) << 32) | u32(x), 0
  for n = 0, 3 do r = r | (((v >> (8 * ((s >> (4 * n)) & 7))) & 0xff) << (8 * n)) end
  return r
end
local function funnel_l(lo, hi, s) return u32(((u32(hi) << 32 | u32(lo)) << s) >> 32) end
local function funnel_r(lo, hi, s) return u32((u32(hi) << 32 | u32(lo)) >> s) end
local function dp(a, b, c, n, wa, first, signed, ret)
  local acc = c
  for i = 0, n - 1 do
    local x, y = (a >> (wa * i)) & ((1 << wa) - 1), (b >> (8 * (first + i))) & 0xff
    if signed then x, y = sext(x, wa), sext(y, 8) end
    acc = acc + x * y
  end
  return ret(acc)
end
local function fns(mask, base, offset)
  mask = u32(mask)
  if offset == 0 then return base < 32 and (mask >> base) & 1 == 1 and base or M32 end
  local count, inc, pos = math.abs(offset) - 1, offset > 0 and 1 or -1, base
  while pos >= 0 and pos < 32 do
    if (mask >> pos) & 1 == 1 then
      if count == 0 then return pos end
      count = count - 1
    end
    pos = pos + inc
  end
  return M32
end
local function bswap(v, bytes)
  local r = 0
  for i = 0, bytes - 1 do r = r | (((v >> (8 * i)) & 0xff) << (8 * (bytes - 1 - i))) end
  return r
end

-- C expressions of X, Y and Z (64-bit integers), each with its value
local INT_CASES = {
  {"__umul24((unsigned)X, (unsigned)Y)", function(x, y) return u32((x & 0xffffff) * (y & 0xffffff)) end},
  {"__mul24((int)X, (int)Y)", function(x, y) return s32(sext(x, 24) * sext(y, 24)) end},
  {"__mulhi((int)X, (int)Y)", function(x, y) return (s32(x) * s32(y)) // (1 << 32) end},
  {"__umulhi((unsigned)X, (unsigned)Y)", function(x, y) return (u32(x) * u32(y)) >> 32 end},
  {"__mul64hi(X, Y)", smulhi64},
  {"__umul64hi((unsigned long long)X, (unsigned long long)Y)", umulhi64},
  {"__byte_perm((unsigned)X, (unsigned)Y, (unsigned)Z)", byte_perm},
  {"__funnelshift_l((unsigned)X, (unsigned)Y, (unsigned)Z)", function(x, y, z) return funnel_l(x, y, z & 31) end},
  {"__funnelshift_lc((unsigned)X, (unsigned)Y, (unsigned)Z)",
   function(x, y, z) return funnel_l(x, y, math.ult(32, u32(z)) and 32 or u32(z)) end},
  {"__funnelshift_r((unsigned)X, (unsigned)Y, (unsigned)Z)", function(x, y, z) return funnel_r(x, y, z & 31) end},
  {"__funnelshift_rc((unsigned)X, (unsigned)Y, (unsigned)Z)",
   function(x, y, z) return funnel_r(x, y, math.ult(32, u32(z)) and 32 or u32(z)) end},
  {"__brev((unsigned)X)", function(x) return brev(u32(x), 32) end},
  {"(long long)__brevll((unsigned long long)X)", function(x) return brev(x, 64) end},
  {"__clz((int)X)", function(x) return clz(u32(x), 32) end},
  {"__clzll(X)", function(x) return clz(x, 64) end},
  {"__ffs((int)X)", function(x) return ffs(u32(x), 32) end},
  {"__ffsll(X)", function(x) return ffs(x, 64) end},
  {"__popc((unsigned)X)", function(x) return popc(u32(x)) end},
  {"__popcll((unsigned long long)X)", popc},
  {"__sad((int)X, (int)Y, (unsigned)Z)", function(x, y, z) return u32(math.abs(s32(x) - s32(y)) + z) end},
  {"__usad((unsigned)X, (unsigned)Y, (unsigned)Z)", function(x, y, z) return u32(math.abs(u32(x) - u32(y)) + z) end},
  {"__hadd((int)X, (int)Y)", function(x, y) return (s32(x) + s32(y)) // 2 end},
  {"__rhadd((int)X, (int)Y)", function(x, y) return (s32(x) + s32(y) + 1) // 2 end},
  {"__uhadd((unsigned)X, (unsigned)Y)", function(x, y) return (u32(x) + u32(y)) // 2 end},
  {"__urhadd((unsigned)X, (unsigned)Y)", function(x, y) return (u32(x) + u32(y) + 1) // 2 end},
  {"__dp4a((int)X, (int)Y, (int)Z)", function(x, y, z) return dp(x, y, s32(z), 4, 8, 0, true, s32) end},
  {"__dp4a((unsigned)X, (unsigned)Y, (unsigned)Z)", function(x, y, z) return dp(x, y, z, 4, 8, 0, false, u32) end},
  {"__dp4a(make_char4(X, X >> 8, X >> 16, X >> 24), make_char4(Y, Y >> 8, Y >> 16, Y >> 24), (int)Z)",
   function(x, y, z) return dp(x, y, s32(z), 4, 8, 0, true, s32) end},
  {"__dp2a_lo((int)X, (int)Y, (int)Z)", function(x, y, z) return dp(x, y, s32(z), 2, 16, 0, true, s32) end},
  {"__dp2a_hi((int)X, (int)Y, (int)Z)", function(x, y, z) return dp(x, y, s32(z), 2, 16, 2, true, s32) end},
  {"__dp2a_lo((unsigned)X, (unsigned)Y, (unsigned)Z)", function(x, y, z) return dp(x, y, z, 2, 16, 0, false, u32) end},
  {"__dp2a_hi(make_ushort2(X, X >> 16), make_uchar4(Y, Y >> 8, Y >> 16, Y >> 24), (unsigned)Z)",
   function(x, y, z) return dp(x, y, z, 2, 16, 2, false, u32) end},
  {"__nv_bswap16((unsigned short)X)", function(x) return bswap(x, 2) end},
  {"__nv_bswap32((unsigned)X)", function(x) return bswap(x, 4) end},
  {"(long long)__nv_bswap64((unsigned long long)X)", function(x) return bswap(x, 8) end},
  {"__fns((unsigned)X, (unsigned)Y & 31, (int)((unsigned)Z % 9) - 4)",
   function(x, y, z) return fns(x, y & 31, u32(z) % 9 - 4) end},
  -- CUDA's min and max: mixed signedness compares as unsigned
  {"min((int)X, (unsigned)Y)", function(x, y) return math.min(u32(x), u32(y)) end},
  {"max((unsigned)X, (int)Y)", function(x, y) return math.max(u32(x), u32(y)) end},
  {"min((long long)X, (unsigned long long)Y)", function(x, y) return math.ult(x, y) and x or y end},
  {"max((unsigned long)X, (long)Y)", function(x, y) return math.ult(x, y) and y or x end},
  {"min((int)X, (int)Y)", function(x, y) return math.min(s32(x), s32(y)) end},
  {"umax((unsigned)X, (unsigned)Y)", function(x, y) return math.max(u32(x), u32(y)) end},
  {"llmin(X, Y)", function(x, y) return math.min(x, y) end},
  {"(long long)ullmax((unsigned long long)X, (unsigned long long)Y)", function(x, y) return math.ult(x, y) and y or x end},
}

local INT_INPUTS = {0, 1, -1, 2, -7, 7, 127, -128, 255, 0x7fff, 0x8000, 0xffff, 0xffffff, 0x1000000, 0x7fffffff,
                    -0x80000000, 0xffffffff, 0x100000000, 0x0123456789abcdef, math.mininteger, math.maxinteger,
                    0x5555aaaa3333cccc, 0x80ff7f0100fe7f81, 33, 40, -33}

-- a kernel computing each expression of cases for every (X, Y) of inputs,
-- Z taken from inputs too; its results as 64-bit words
local function pair_kernel(cases, decls)
  local body = {}
  for k, c in ipairs(cases) do body[k] = ("  o[%d] = (long long)(%s);"):format(k - 1, c[1]) end
  return ([[
extern "C" __global__ void pairs(const long long *in, int n, long long *out) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (long long)n * n) return;
  long long X = in[t %% n], Y = in[t / n], Z = in[(t * 7 + 3) %% n];
  long long *o = out + t * %d;
  (void)X; (void)Y; (void)Z;
%s
%s
}]]):format(#cases, decls or "", table.concat(body, "\n"))
end

local function run_pairs(cases, inputs, decls)
  local m = luacuda.compile(pair_kernel(cases, decls))
  local n = #inputs
  local inp = luacuda.to_device(inputs, nil, {dtype = "int64"})
  local out = luacuda.device_array(n * n * #cases, "int64")
  run(m, "pairs", n * n, inp, n, out)
  return out:totable(), n
end

local function check_pairs(cases, inputs, decls)
  local got, n = run_pairs(cases, inputs, decls)
  local bad = {}
  for t = 0, n * n - 1 do
    local x, y, z = inputs[t % n + 1], inputs[t // n + 1], inputs[(t * 7 + 3) % n + 1]
    for k, c in ipairs(cases) do
      local want, g = c[2](x, y, z), got[t * #cases + k]
      if want ~= g then
        bad[#bad + 1] = ("%s with X=%s Y=%s Z=%s: want %s, got %s"):format(c[1], hex(x), hex(y), hex(z), hex(want), hex(g))
      end
    end
  end
  check(bad)
end

-- ---- SIMD and DPX intrinsics --------------------------------------------------------

-- f(x, y) on each lane of w bits of a and b, signed or not; the lanes' bits
local function lanes(w, signed, a, b, f)
  local r, m = 0, (1 << w) - 1
  for i = 0, 31, w do
    local x, y = (a >> i) & m, (b >> i) & m
    if signed then x, y = sext(x, w), sext(y, w) end
    r = r | ((f(x, y) & m) << i)
  end
  return r
end
local function sat(v, w, signed)
  local hi, lo = signed and (1 << (w - 1)) - 1 or (1 << w) - 1, signed and -(1 << (w - 1)) or 0
  return math.max(lo, math.min(hi, v))
end
local function b2i(c) return c and 1 or 0 end
-- name: __vNAME2 on halves, __vNAME4 on bytes: signed lanes or not, the lane's value
local SIMD = {
  {"abs", true, function(x) return math.abs(x) end, 1},
  {"absss", true, function(x, _, w) return sat(math.abs(x), w, true) end, 1},
  {"neg", true, function(x) return -x end, 1},
  {"negss", true, function(x, _, w) return sat(-x, w, true) end, 1},
  {"add", false, function(x, y) return x + y end},
  {"addss", true, function(x, y, w) return sat(x + y, w, true) end},
  {"addus", false, function(x, y, w) return sat(x + y, w, false) end},
  {"sub", false, function(x, y) return x - y end},
  {"subss", true, function(x, y, w) return sat(x - y, w, true) end},
  {"subus", false, function(x, y, w) return sat(x - y, w, false) end},
  {"absdiffs", true, function(x, y) return math.abs(x - y) end},
  {"absdiffu", false, function(x, y) return math.abs(x - y) end},
  {"avgs", true, function(x, y) return (x + y + b2i(x + y >= 0)) // 2 end},
  {"avgu", false, function(x, y) return (x + y + 1) // 2 end},
  {"haddu", false, function(x, y) return (x + y) // 2 end},
  {"maxs", true, function(x, y) return math.max(x, y) end}, {"maxu", false, function(x, y) return math.max(x, y) end},
  {"mins", true, function(x, y) return math.min(x, y) end}, {"minu", false, function(x, y) return math.min(x, y) end},
}
for _, c in ipairs {{"eq", false, function(x, y) return x == y end}, {"ne", false, function(x, y) return x ~= y end},
                    {"ges", true, function(x, y) return x >= y end}, {"geu", false, function(x, y) return x >= y end},
                    {"gts", true, function(x, y) return x > y end}, {"gtu", false, function(x, y) return x > y end},
                    {"les", true, function(x, y) return x <= y end}, {"leu", false, function(x, y) return x <= y end},
                    {"lts", true, function(x, y) return x < y end}, {"ltu", false, function(x, y) return x < y end}} do
  SIMD[#SIMD + 1] = {"cmp" .. c[1], c[2], function(x, y) return -b2i(c[3](x, y)) end}
  SIMD[#SIMD + 1] = {"set" .. c[1], c[2], function(x, y) return b2i(c[3](x, y)) end}
end

local SIMD_CASES = {}
for _, s in ipairs(SIMD) do
  for _, w in ipairs {16, 8} do
    local name = ("__v%s%d"):format(s[1], w == 16 and 2 or 4)
    local expr = s[4] and ("%s((unsigned)X)"):format(name) or ("%s((unsigned)X, (unsigned)Y)"):format(name)
    SIMD_CASES[#SIMD_CASES + 1] = {expr, function(x, y) return lanes(w, s[2], x, y, function(a, b) return s[3](a, b, w) end) end}
  end
end
for _, s in ipairs {{"__vsads2", 16, true}, {"__vsads4", 8, true}, {"__vsadu2", 16, false}, {"__vsadu4", 8, false}} do
  SIMD_CASES[#SIMD_CASES + 1] = {("%s((unsigned)X, (unsigned)Y)"):format(s[1]), function(x, y)
    local sum, m = 0, (1 << s[2]) - 1
    for i = 0, 31, s[2] do
      local a, b = (x >> i) & m, (y >> i) & m
      if s[3] then a, b = sext(a, s[2]), sext(b, s[2]) end
      sum = sum + math.abs(a - b)
    end
    return sum
  end}
end

-- DPX: on whole values (s32 signed, u32 unsigned) or on halves
local function relu(v) return math.max(v, 0) end
local function dpx(expr, f, kind)
  local signed, w = kind:sub(1, 1) == "s", kind:find("16x2") and 16 or 32
  return {expr, function(x, y, z)
    if w == 32 then
      local a, b, c = table.unpack(signed and {s32(x), s32(y), s32(z)} or {u32(x), u32(y), u32(z)})
      local r = f(a, b, c, w, signed)
      return signed and s32(r) or u32(r)
    end
    local r = 0
    for i = 0, 16, 16 do
      local a, b, c = (x >> i) & 0xffff, (y >> i) & 0xffff, (z >> i) & 0xffff
      if signed then a, b, c = sext(a, 16), sext(b, 16), sext(c, 16) end
      r = r | ((f(a, b, c, w, signed) & 0xffff) << i)
    end
    return r
  end}
end
-- a + b wraps around in the lane's width
local function wrap(v, w, signed) v = v & ((1 << w) - 1); return signed and sext(v, w) or v end
local DPX_CASES = {}
for _, kind in ipairs {"s32", "u32", "s16x2", "u16x2"} do
  local args = kind:find("16x2") and "(unsigned)X, (unsigned)Y, (unsigned)Z"
            or kind == "s32" and "(int)X, (int)Y, (int)Z" or "(unsigned)X, (unsigned)Y, (unsigned)Z"
  local function add(name, f) DPX_CASES[#DPX_CASES + 1] = dpx(("__%s_%s(%s)"):format(name, kind, args), f, kind) end
  add("vimax3", function(a, b, c) return math.max(a, b, c) end)
  add("vimin3", function(a, b, c) return math.min(a, b, c) end)
  add("viaddmax", function(a, b, c, w, s) return math.max(wrap(a + b, w, s), c) end)
  add("viaddmin", function(a, b, c, w, s) return math.min(wrap(a + b, w, s), c) end)
  if kind:sub(1, 1) == "s" then
    local function addr(name, f)
      DPX_CASES[#DPX_CASES + 1] = dpx(("__%s_%s_relu(%s)"):format(name, kind, args), f, kind)
    end
    addr("vimax3", function(a, b, c) return relu(math.max(a, b, c)) end)
    addr("vimin3", function(a, b, c) return relu(math.min(a, b, c)) end)
    addr("viaddmax", function(a, b, c, w, s) return relu(math.max(wrap(a + b, w, s), c)) end)
    addr("viaddmin", function(a, b, c, w, s) return relu(math.min(wrap(a + b, w, s), c)) end)
    local two = kind == "s32" and "(int)X, (int)Y" or "(unsigned)X, (unsigned)Y"
    DPX_CASES[#DPX_CASES + 1] = dpx(("__vimax_%s_relu(%s)"):format(kind, two), function(a, b) return relu(math.max(a, b)) end, kind)
    DPX_CASES[#DPX_CASES + 1] = dpx(("__vimin_%s_relu(%s)"):format(kind, two), function(a, b) return relu(math.min(a, b)) end, kind)
  end
end
-- the bool forms: the value, the predicates above bit 32
for _, c in ipairs {{"__vibmax_s32((int)X, (int)Y, &p)", true, math.max, function(a, b) return a >= b end},
                    {"__vibmax_u32((unsigned)X, (unsigned)Y, &p)", false, math.max, function(a, b) return a >= b end},
                    {"__vibmin_s32((int)X, (int)Y, &p)", true, math.min, function(a, b) return a <= b end},
                    {"__vibmin_u32((unsigned)X, (unsigned)Y, &p)", false, math.min, function(a, b) return a <= b end}} do
  DPX_CASES[#DPX_CASES + 1] = {("[&] { long long r = %s; return r + ((long long)p << 32); }()"):format(c[1]), function(x, y)
    local a, b = table.unpack(c[2] and {s32(x), s32(y)} or {u32(x), u32(y)})
    local r = c[3](a, b)
    return (c[2] and s32(r) or u32(r)) + (b2i(c[4](a, b)) << 32)
  end}
end
for _, c in ipairs {{"__vibmax_s16x2", true, true}, {"__vibmax_u16x2", false, true},
                    {"__vibmin_s16x2", true, false}, {"__vibmin_u16x2", false, false}} do
  DPX_CASES[#DPX_CASES + 1] = {("[&] { long long r = %s((unsigned)X, (unsigned)Y, &p, &q); return r + ((long long)p << 33) + ((long long)q << 32); }()"):format(c[1]),
    function(x, y)
      local r, preds = 0, 0
      for i = 0, 16, 16 do
        local a, b = (x >> i) & 0xffff, (y >> i) & 0xffff
        if c[2] then a, b = sext(a, 16), sext(b, 16) end
        local take = c[3] and a >= b or not c[3] and a <= b
        r = r | (((take and a or b) & 0xffff) << i)
        if take then preds = preds | (1 << (i == 16 and 33 or 32)) end
      end
      return r + preds
    end}
end

local SIMD_INPUTS = {0, 1, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff, 0x12345678, 0x80ff7f01,
                     0x7f7f7f7f, 0x80808080, 0xfefefefe, 0x01020304, 0xdeadbeef, 0x00ff00ff, 0xff00ff00, 0x8001ffff,
                     0x00017fff, 0x7ffe8002}

-- ---- conversions ------------------------------------------------------------------

-- x (a finite double) to an integral double in mode
local function integral(x, mode)
  if mode == "rd" then return math.floor(x) end
  if mode == "ru" then return math.ceil(x) end
  if mode == "rz" then return x < 0 and math.ceil(x) or math.floor(x) end
  local f = math.floor(x)
  local d = x - f
  if d > 0.5 or (d == 0.5 and f % 2 == 1) then f = f + 1 end
  return f
end
-- to an integer type of bits, signed or not: rounded in mode, saturated, NaN giving 0;
-- as the 64 bits a long long holds
local function to_int(x, mode, bits, signed)
  if isnan(x) then return 0 end
  local r = (x == math.huge or x == -math.huge) and x or integral(x, mode)
  if signed then
    local hi = 2.0 ^ (bits - 1)
    if r >= hi then return bits == 64 and math.maxinteger or (1 << (bits - 1)) - 1 end
    if r <= -hi then return bits == 64 and math.mininteger or -(1 << (bits - 1)) end
    return math.tointeger(r)
  end
  if r <= 0 then return 0 end
  if r >= 2.0 ^ bits then return bits == 64 and -1 or (1 << bits) - 1 end
  if r >= 2.0 ^ 63 then return math.tointeger(r - 2.0 ^ 63) | math.mininteger end
  return math.tointeger(r)
end
-- an integer of magnitude m (unsigned 64 bits), negative or not, to a
-- binary float of p bits, rounded in mode
local function int_to_fp(m, neg, p, mode)
  if m == 0 then return 0.0 end
  if neg then mode = mode == "ru" and "rd" or mode == "rd" and "ru" or mode end
  local len = 64
  while (m >> (len - 1)) & 1 == 0 do len = len - 1 end
  local s, v = len - p, nil
  if s <= 0 then
    v = m + 0.0
  else
    local q, r, half = m >> s, m & ((1 << s) - 1), 1 << (s - 1)
    local up = mode == "ru" and r > 0 or mode == "rn" and (r > half or (r == half and q & 1 == 1))
    v = (q + (up and 1 or 0)) * 2.0 ^ s
  end
  return neg and -v or v
end
local function signed_fp(v, p, mode) return int_to_fp(v < 0 and -v or v, v < 0, p, mode) end
-- a double to float, rounded in mode
local function d2f(d, mode)
  local f = f32(d)
  if isnan(d) or f == d then return f end
  if mode == "rd" and f > d or mode == "rz" and d > 0 and f > d then f = fdown(f) end
  if mode == "ru" and f < d or mode == "rz" and d < 0 and f < d then f = fup(f) end
  return f
end

local MODES = {"rn", "rz", "ru", "rd"}
local CONV_INPUTS = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.7, 123.456, -7.75, 255.5,
                     1e10, -1e10, 3e9, -3e9, 2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0,
                     4294967295.0, 4294967296.0, 9.3e18, -9.3e18, 9223372036854775808.0, 1.9e19,
                     18446744073709551616.0, 1e30, 1e-40, 1 / 0, -1 / 0, 0 / 0, 16777217.0,
                     9007199254740993.0, 3.4e38, 5e-324, 1e300}

-- ---- directed rounding of float arithmetic ----------------------------------------

-- The exact result of an operation rounded to float in mode, given est (its
-- double-precision value, or an infinity or NaN the operation gives
-- exactly) and cmp(c), the sign of exact - c for a float or the midpoint of
-- two; zero: the sign of an exact zero.
local function sign(v) return v > 0 and 1 or v < 0 and -1 or 0 end
local function round_f(est, cmp, mode, zero)
  if isnan(est) or est == math.huge or est == -math.huge then return est end
  if cmp(0.0) == 0 then return zero end
  local f = f32(est)
  if f ~= f then return f end
  -- the float below or at the exact value
  while f ~= -math.huge and cmp(f) < 0 do f = fdown(f) end
  while f ~= math.huge and cmp(fup(f)) >= 0 do f = fup(f) end
  local exact = cmp(f) == 0
  local u = fup(f)
  local r
  if exact then r = f
  elseif mode == "rd" then r = f
  elseif mode == "ru" then r = u
  elseif mode == "rz" then r = cmp(0.0) > 0 and f or u
  else
    local mid = u == math.huge and FLT_MAX + 2.0 ^ 103 or f == -math.huge and -FLT_MAX - 2.0 ^ 103 or (f + u) / 2
    local c = cmp(mid)
    r = c < 0 and f or c > 0 and u or ((fbits(f) & 1 == 0 and f ~= -math.huge) and f or u)
  end
  if r == 0 then r = cmp(0.0) > 0 and 0.0 or -0.0 end   -- rounded to zero: the exact value's sign
  return r
end
-- the double sum of a and b, and its error (exact: a + b = s + e)
local function two_sum(a, b)
  local s = a + b
  local bb = s - a
  return s, (a - (s - bb)) + (b - bb)
end
local function sum_cmp(s, e) return function(c) return s ~= c and sign(s - c) or sign(e) end end
-- IEEE's sign of an exact zero sum: -0 when both addends are -0, or rounding down
local function zero_sum(a, b, mode)
  local neg = 1 / a < 0 and 1 / b < 0
  return (neg or (mode == "rd" and not (a == 0 and b == 0 and 1 / a > 0 and 1 / b > 0))) and -0.0 or 0.0
end
local function special(...)
  for _, v in ipairs {...} do if isnan(v) or v == math.huge or v == -math.huge then return true end end
  return false
end
local FOPS = {
  {"__fadd", 2, function(x, y, _, m)
    if special(x, y) then return x + y end
    local s, e = two_sum(x, y)
    return round_f(s, sum_cmp(s, e), m, zero_sum(x, y, m))
  end},
  {"__fsub", 2, function(x, y, _, m)
    if special(x, y) then return x - y end
    local s, e = two_sum(x, -y)
    return round_f(s, sum_cmp(s, e), m, zero_sum(x, -y, m))
  end},
  {"__fmul", 2, function(x, y, _, m)
    local p = x * y                                 -- exact: 24 x 24 bits
    if special(x, y) then return p end
    return round_f(p, function(c) return sign(p - c) end, m, p)
  end},
  {"__fdiv", 2, function(x, y, _, m)
    local q = x / y
    if special(x, y, q) then return q end
    return round_f(q, function(c) return sign(x - c * y) * sign(y) end, m, q)
  end},
  {"__fmaf", 3, function(x, y, z, m)
    local p = x * y
    if special(x, y, z, p) then return p + z end
    local s, e = two_sum(p, z)
    return round_f(s, sum_cmp(s, e), m, zero_sum(p, z, m))
  end},
  {"__frcp", 1, function(x, _, _, m)
    local q = 1 / x
    if special(x, q) then return q end
    return round_f(q, function(c) return sign(1 - c * x) * sign(x) end, m, q)
  end},
  {"__fsqrt", 1, function(x, _, _, m)
    local r = math.sqrt(x)
    if special(x, r) or x == 0 then return r end
    return round_f(r, function(c) return c < 0 and 1 or sign(x - c * c) end, m, r)
  end},
}
local FL_INPUTS = {1.0, -1.0, 3.0, -3.0, 0.1, -0.1, 1.5, 1e-8, 16777215.0, 0.33333334, 1e10, -7e-45,
                   1.1754944e-38, 3.4e38, -3.4e38, 0.0, -0.0, 1 / 0, 0 / 0, 2.0 ^ -149, 5e18}

-- ---- the math library: mpmath's values, rounded to nearest -----------------------------------------------

-- {expression of x (and y), CUDA's bound in ulp, {{x, (y,) the value's bits}...}}
local MATHF = {
  {"erfinvf(x)", 2, {{0.0, 0x0}, {0.5, 0x3ef430fe}, {-0.8999999761581421, 0xbf94e00a}, {1.0000000031710769e-30, 0xd8fcc6d}, {0.9999989867210388, 0x405d40b6}, {0.25, 0x3e66b834}, {1.0, 0x7f800000}, {-1.0, 0xff800000}, {1.5, 0x7fc00000}, {0/0, 0x7fc00000}}},
  {"erfcinvf(x)", 4, {{1.0000000031710769e-30, 0x410260bb}, {9.80908925027372e-45, 0x411ec38d}, {0.5, 0x3ef430fe}, {1.0, 0x0}, {1.5, 0xbef430fe}, {1.999899983406067, 0xc03010f7}, {0.0, 0x7f800000}, {2.0, 0xff800000}, {-0.10000000149011612, 0x7fc00000}, {2.5, 0x7fc00000}}},
  {"normcdff(x)", 5, {{0.0, 0x3f000000}, {1.0, 0x3f57625f}, {-1.0, 0x3e227686}, {-10.0, 0x191363af}, {-14.5, 0x0}, {5.0, 0x3f7ffffb}, {1/0, 0x3f800000}, {-1/0, 0x0}, {0/0, 0x7fc00000}}},
  {"normcdfinvf(x)", 5, {{0.5, 0x0}, {1.0000000031710769e-30, 0xc1376ca5}, {0.9990000128746033, 0x4045c66e}, {0.02500000037252903, 0xbffae01a}, {0.0, 0xff800000}, {1.0, 0x7f800000}, {1.5, 0x7fc00000}}},
  {"erfcxf(x)", 4, {{0.0, 0x3f800000}, {1.0, 0x3edaec3c}, {-1.0, 0x40a04991}, {10.0, 0x3d65f419}, {100.0, 0x3bb8dd49}, {1.0000000150474662e+30, 0xd371709}, {-9.0, 0x7a680d11}, {-10.0, 0x7f800000}, {1/0, 0x0}, {-1/0, 0x7f800000}}},
  {"rcbrtf(x)", 1, {{8.0, 0x3f000000}, {-27.0, 0xbeaaaaab}, {3.0, 0x3f318020}, {9.99994610111476e-41, 0x559cc18c}, {0.0, 0x7f800000}, {-0.0, 0xff800000}, {1/0, 0x0}, {-1/0, 0x80000000}}},
  {"sinpif(x)", 1, {{0.0, 0x0}, {-0.0, 0x0}, {0.5, 0x3f800000}, {0.25, 0x3f3504f3}, {9.99994610111476e-41, 0x36bbe}, {2.5, 0x3f800000}, {-1.75, 0x3f3504f3}, {0.3333333432674408, 0x3f5db3d8}, {10000000000.0, 0x0}, {1/0, 0x7fc00000}}},
  {"cospif(x)", 1, {{0.0, 0x3f800000}, {0.5, 0x0}, {0.25, 0x3f3504f3}, {2.0, 0x3f800000}, {0.3333333432674408, 0x3effffff}, {10000000000.0, 0x3f800000}, {-0.75, 0xbf3504f3}, {1/0, 0x7fc00000}}},
  {"exp10f(x)", 2, {{0.0, 0x3f800000}, {1.0, 0x41200000}, {-1.0, 0x3dcccccd}, {2.5, 0x439e1d27}, {38.5, 0x7f6de741}, {-45.0, 0x1}, {0.3010300099849701, 0x40000000}}},
  {"rsqrtf(x)", 2, {{4.0, 0x3f000000}, {2.0, 0x3f3504f3}, {9.99994610111476e-41, 0x60ad790a}, {3.0000000054977558e+38, 0x1f8852af}, {0.0, 0x7f800000}}},
  {"cyl_bessel_i0f(x)", 6, {{0.0, 0x3f800000}, {1.0, 0x3fa20e72}, {-2.5, 0x40528cb9}, {10.0, 0x452ffb77}, {50.0, 0x617e5bc6}, {88.0, 0x7ca9567e}, {1/0, 0x7f800000}}},
  {"cyl_bessel_i1f(x)", 6, {{0.0, 0x0}, {1.0, 0x3f10ae44}, {-2.5, 0xc02111e1}, {10.0, 0x4526efd0}, {50.0, 0x617bcd4b}, {88.0, 0x7ca85f7a}, {-1/0, 0xff800000}}},
  {"rhypotf(x, y)", 2, {{3.0, 4.0, 0x3e4ccccd}, {0.0, -0.0, 0x7f800000}, {9.99994610111476e-41, 9.99994610111476e-41, 0x7f800000}, {3.0000000054977558e+38, 3.0000000054977558e+38, 0x19aa6c}, {1/0, 0/0, 0x0}, {1.0, 1.0000000031710769e-30, 0x3f800000}}},
  {"norm3df(x, y, x)", 2, {{1.0, 2.0, 0x401cc471}, {3.0000000054977558e+38, 3.0000000054977558e+38, 0x7f800000}, {9.99994610111476e-41, -9.99994610111476e-41, 0x1e2d3}, {0/0, 1/0, 0x7f800000}, {0.0, -0.0, 0x0}}},
  {"rnorm3df(x, y, 1.0f)", 2, {{1.0, 2.0, 0x3ed105ec}, {3.0000000054977558e+38, 1.0, 0x244bfa}, {-1/0, 0/0, 0x0}}},
  {"norm4df(x, y, x, y)", 2, {{1.0, 2.0, 0x404a62c2}, {3.0000000054977558e+38, 3.0000000054977558e+38, 0x7f800000}, {9.99994610111476e-41, 2.000003233207595e-40, 0x37184}}},
  {"rnorm4df(x, y, x, y)", 2, {{1.0, 2.0, 0x3ea1e89b}, {0.0, 0.0, 0x7f800000}, {1.0000000031710769e-30, 1.0, 0x3f3504f3}}},
  {"normf(4, v)", 4, {{1.0, 2.0, 0x404a62c2}, {3.0000000054977558e+38, 3.0000000054977558e+38, 0x7f800000}}},
  {"rnormf(4, v)", 3, {{1.0, 2.0, 0x3ea1e89b}, {0.0, -0.0, 0x7f800000}}},
}
local MATHD = {
  {"erfinv(x)", 5, {{0.0, 0x0}, {0.5, 0x3fde861fbb24c00a}, {-0.9, 0xbff29c0146770651}, {1e-300, 0x1a2fdf36bf69b9f}, {0.999999999, 0x401147af7e11d345}, {0.25, 0x3fccd70681d5ff70}, {5e-324, 0x1}, {1.0, 0x7ff0000000000000}, {-1.0, 0xfff0000000000000}, {1.5, 0x7ff8000000000000}}},
  {"erfcinv(x)", 6, {{1e-300, 0x403a359fd2c5e942}, {5e-324, 0x403b369a6244e684}, {0.5, 0x3fde861fbb24c00a}, {1.0, 0x0}, {1.5, 0xbfde861fbb24c00a}, {1.9999999999, 0xc0124a92a03d21cd}, {0.0, 0x7ff0000000000000}, {2.0, 0xfff0000000000000}, {-0.5, 0x7ff8000000000000}}},
  {"normcdf(x)", 5, {{0.0, 0x3fe0000000000000}, {1.0, 0x3feaec4bd120d37d}, {-1.0, 0x3fc44ed0bb7cb20b}, {-10.0, 0x3b226c75e84fb10d}, {-37.5, 0x208eda98086fd1}, {8.0, 0x3feffffffffffffa}, {1/0, 0x3ff0000000000000}, {-1/0, 0x0}}},
  {"normcdfinv(x)", 8, {{0.5, 0x0}, {1e-300, 0xc04286074064c26e}, {0.999, 0x4008b8cbb7204470}, {0.025, 0xbfff5c0331eeff85}, {0.0, 0xfff0000000000000}, {1.0, 0x7ff0000000000000}, {-1.0, 0x7ff8000000000000}}},
  {"erfcx(x)", 4, {{0.0, 0x3ff0000000000000}, {1.0, 0x3fdb5d8780f956b2}, {-1.0, 0x401409321304c1fe}, {10.0, 0x3facbe831f997124}, {100000.0, 0x3ed7a9f084b432a7}, {1e+300, 0x1982e6d98711d39}, {-26.0, 0x7cf32f288d4422da}, {-27.0, 0x7ff0000000000000}, {1/0, 0x0}, {-1/0, 0x7ff0000000000000}}},
  {"rcbrt(x)", 1, {{8.0, 0x3fe0000000000000}, {-27.0, 0xbfd5555555555555}, {3.0, 0x3fe63003fbb4c375}, {5e-324, 0x5650000000000000}, {1e+300, 0x2b2bff2ee48e0530}, {0.0, 0x7ff0000000000000}, {-0.0, 0xfff0000000000000}, {1/0, 0x0}, {-1/0, 0x8000000000000000}}},
  {"sinpi(x)", 2, {{0.0, 0x0}, {-0.0, 0x0}, {0.5, 0x3ff0000000000000}, {0.25, 0x3fe6a09e667f3bcd}, {5e-324, 0x3}, {2.5, 0x3ff0000000000000}, {-1.75, 0x3fe6a09e667f3bcd}, {0.1, 0x3fd3c6ef372fe950}, {1e+300, 0x0}, {4503599627370497.0, 0x0}, {1000000000000000.5, 0x3ff0000000000000}, {1/0, 0x7ff8000000000000}}},
  {"cospi(x)", 2, {{0.0, 0x3ff0000000000000}, {0.5, 0x0}, {0.25, 0x3fe6a09e667f3bcd}, {2.0, 0x3ff0000000000000}, {0.1, 0x3fee6f0e134454ff}, {1e+300, 0x3ff0000000000000}, {1000000000000000.5, 0x0}, {-0.75, 0xbfe6a09e667f3bcd}, {1/0, 0x7ff8000000000000}}},
  {"rsqrt(x)", 1, {{4.0, 0x3fe0000000000000}, {2.0, 0x3fe6a09e667f3bcd}, {5e-324, 0x6180000000000000}, {1e+308, 0x1ff573d68f903ea2}, {0.0, 0x7ff0000000000000}}},
  {"cyl_bessel_i0(x)", 6, {{0.0, 0x3ff0000000000000}, {1.0, 0x3ff441ce4b386c2d}, {-2.5, 0x400a51972f665e07}, {10.0, 0x40a5ff6ee9ed23e4}, {50.0, 0x442fcb78c9d0a578}, {700.0, 0x7eac8cdeeadb5df0}, {720.0, 0x7ff0000000000000}}},
  {"cyl_bessel_i1(x)", 6, {{0.0, 0x0}, {1.0, 0x3fe215c88b95e67e}, {-2.5, 0xc004223c20769d70}, {10.0, 0x40a4ddfa02f156cf}, {50.0, 0x442f79a9674e50df}, {-700.0, 0xfeac87a5f5ceb9df}, {720.0, 0x7ff0000000000000}}},
  {"rhypot(x, y)", 1, {{3.0, 4.0, 0x3fc999999999999a}, {0.0, -0.0, 0x7ff0000000000000}, {5e-324, 5e-324, 0x7ff0000000000000}, {1e+308, 1e+308, 0x515ab3b15857e}, {1/0, 0/0, 0x0}}},
  {"norm3d(x, y, x)", 2, {{1.0, 2.0, 0x4003988e1409212e}, {1e+308, 1e+308, 0x7feed4df0150215a}, {5e-324, -5e-324, 0x2}, {0/0, 1/0, 0x7ff0000000000000}}},
  {"rnorm3d(x, y, 1.0)", 2, {{1.0, 2.0, 0x3fda20bd700c2c3e}, {1e+308, 1.0, 0x730d67819e8d2}}},
  {"norm4d(x, y, x, y)", 2, {{1.0, 2.0, 0x40094c583ada5b53}, {1e+308, 1e+308, 0x7ff0000000000000}}},
  {"rnorm4d(x, y, x, y)", 2, {{1.0, 2.0, 0x3fd43d136248490f}, {0.0, 0.0, 0x7ff0000000000000}}},
  {"norm(4, v)", 2, {{1.0, 2.0, 0x40094c583ada5b53}, {1e+308, 1e+308, 0x7ff0000000000000}}},
  {"rnorm(4, v)", 2, {{1.0, 2.0, 0x3fd43d136248490f}, {0.0, 0.0, 0x7ff0000000000000}}},
}

-- Run every case of table (float or double) in one kernel: a thread per
-- input, a switch on its expression; the results' bits.
local function run_math(tab, T)
  local X, Y, which, body = {}, {}, {}, {}
  for k, c in ipairs(tab) do
    body[#body + 1] = ("    case %d: r = %s; break;"):format(k - 1, c[1])
    for _, v in ipairs(c[3]) do
      X[#X + 1], Y[#Y + 1], which[#which + 1] = v[1], #v == 3 and v[2] or 0.0, k - 1
    end
  end
  local src = ([[
extern "C" __global__ void math(const T *xs, const T *ys, const int *which, int n, T *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  T x = xs[i], y = ys[i], r = 0;
  T v[4] = {x, y, x, y};
  (void)v;
  switch (which[i]) {
%s
  }
  out[i] = r;
}]]):gsub("%f[%w]T%f[%W]", T):format(table.concat(body, "\n"))
  local m = luacuda.compile(src)
  local dt = T == "float" and "float32" or "float64"
  local n = #X
  local out = luacuda.device_array(n, dt)
  run(m, "math", n, luacuda.to_device(X, nil, {dtype = dt}), luacuda.to_device(Y, nil, {dtype = dt}),
      luacuda.to_device(which, nil, {dtype = "int32"}), n, out)
  return out:totable()
end

local function check_math(tab, T)
  local got, i, bad = run_math(tab, T), 0, {}
  local bits, dist = T == "float" and fbits or dbits, T == "float" and ulps32 or ulps64
  for _, c in ipairs(tab) do
    for _, v in ipairs(c[3]) do
      i = i + 1
      local want, g = v[#v], bits(got[i])
      local d = dist(want, g)
      if d > c[2] then
        bad[#bad + 1] = ("%s at x=%.17g%s: want %s, got %s (%s ulp; CUDA's bound %d)"):format(c[1], v[1],
          #v == 3 and (", y=%.17g"):format(v[2]) or "", hex(want), hex(g), tostring(d), c[2])
      end
    end
  end
  check(bad)
end

describe("the CUDA math API and intrinsics", function()
  it("integer and bit intrinsics give CUDA's values, __umul24 and __mul24 on the low 24 bits", function()
    check_pairs(INT_CASES, INT_INPUTS)
  end)

  it("SIMD intrinsics on halves and bytes", function()
    check_pairs(SIMD_CASES, SIMD_INPUTS)
  end)

  it("DPX intrinsics: three-way and fused minima and maxima, with ReLU and predicates", function()
    check_pairs(DPX_CASES, SIMD_INPUTS, "  bool p = false, q = false;")
  end)

  it("conversions to integers round as named, saturate, and give 0 for NaN", function()
    local cases, body = {}, {}
    for _, from in ipairs {{"float", "f"}, {"double", "d"}} do
      for _, to in ipairs {{"int", 32, true}, {"uint", 32, false}, {"ll", 64, true}, {"ull", 64, false}} do
        for _, mode in ipairs(MODES) do
          cases[#cases + 1] = {from[1], to, mode}
          body[#body + 1] = ("  o[%d] = (long long)__%s2%s_%s(%s);"):format(#cases - 1, from[1], to[1], mode, from[2])
        end
      end
    end
    local m = luacuda.compile(([[
extern "C" __global__ void conv(const double *in, int n, long long *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  double d = in[t];
  float f = (float)d;
  long long *o = out + (long long)t * %d;
%s
}]]):format(#cases, table.concat(body, "\n")))
    local n = #CONV_INPUTS
    local out = luacuda.device_array(n * #cases, "int64")
    run(m, "conv", n, luacuda.to_device(CONV_INPUTS, nil, {dtype = "float64"}), n, out)
    local got, bad = out:totable(), {}
    for t = 1, n do
      local d = CONV_INPUTS[t]
      for k, c in ipairs(cases) do
        local x = c[1] == "float" and f32(d) or d
        local want, g = to_int(x, c[3], c[2][2], c[2][3]), got[(t - 1) * #cases + k]
        if want ~= g then
          bad[#bad + 1] = ("__%s2%s_%s(%.17g): want %s, got %s"):format(c[1], c[2][1], c[3], x, hex(want), hex(g))
        end
      end
    end
    check(bad)
  end)

  it("conversions to float and double round exactly as named", function()
    local cases = {}
    local function add(expr, want) cases[#cases + 1] = {expr, want} end
    for _, m in ipairs(MODES) do
      add(("__float_as_uint(__int2float_%s((int)X))"):format(m), function(x) return fbits(signed_fp(s32(x), 24, m)) end)
      add(("__float_as_uint(__uint2float_%s((unsigned)X))"):format(m), function(x) return fbits(int_to_fp(u32(x), false, 24, m)) end)
      add(("__float_as_uint(__ll2float_%s(X))"):format(m), function(x)
        return fbits(x == math.mininteger and int_to_fp(x, true, 24, m) or signed_fp(x, 24, m))
      end)
      add(("__float_as_uint(__ull2float_%s((unsigned long long)X))"):format(m), function(x) return fbits(int_to_fp(x, false, 24, m)) end)
      add(("__double_as_longlong(__ll2double_%s(X))"):format(m), function(x)
        return dbits(x == math.mininteger and int_to_fp(x, true, 53, m) or signed_fp(x, 53, m))
      end)
      add(("__double_as_longlong(__ull2double_%s((unsigned long long)X))"):format(m), function(x) return dbits(int_to_fp(x, false, 53, m)) end)
      add(("__float_as_uint(__double2float_%s(__longlong_as_double(X)))"):format(m), function(x)
        local f = d2f(dfrom(x), m)
        return isnan(f) and fbits(f) or fbits(f)
      end)
    end
    add("__double_as_longlong(__int2double_rn((int)X))", function(x) return dbits(s32(x) + 0.0) end)
    add("__double_as_longlong(__uint2double_rn((unsigned)X))", function(x) return dbits(u32(x) + 0.0) end)
    add("__double2hiint(__longlong_as_double(X))", function(x) return s32(x >> 32) end)
    add("__double2loint(__longlong_as_double(X))", function(x) return s32(x) end)
    add("__double_as_longlong(__hiloint2double((int)(X >> 32), (int)X))", function(x) return x end)
    add("__float_as_int(__int_as_float((int)X))", function(x) return s32(x) end)
    -- the doubles of these bits: NaNs, infinities, halves, and values past float's range
    local inputs = {}
    for _, v in ipairs(INT_INPUTS) do inputs[#inputs + 1] = v end
    for _, d in ipairs {0.1, -0.1, 1 / 3, 3.4028235677973366e38, 3.5e38, -3.5e38, 1e-45, -7e-46, 1.1754942e-38,
                        1 / 0, 2.0 ^ 24 + 1, 1e300, -1e-300} do
      inputs[#inputs + 1] = dbits(d)
    end
    inputs[#inputs + 1] = 0x7ff8000000000001     -- a NaN
    local got, n = run_pairs(cases, inputs)
    local bad = {}
    for t = 0, n - 1 do         -- X is inputs[t + 1] (Y = inputs[1])
      local x = inputs[t + 1]
      for k, c in ipairs(cases) do
        local want, g = c[2](x), got[t * #cases + k]
        if c[1]:find("__double2float") and isnan(dfrom(x)) then
          want, g = isnan(ffrom(want)), isnan(ffrom(g))
        end
        if want ~= g then bad[#bad + 1] = ("%s with X=%s: want %s, got %s"):format(c[1], hex(x), tostring(want), tostring(g)) end
      end
    end
    check(bad)
  end)

  it("float arithmetic rounds once, in the mode named (__fadd_rz, __fmaf_ru, __fsqrt_rd...) #fenv", function()
    local cases, body = {}, {}
    for _, op in ipairs(FOPS) do
      for _, m in ipairs(MODES) do
        cases[#cases + 1] = {op, m}
        local args = op[2] == 1 and "x" or op[2] == 2 and "x, y" or "x, y, z"
        body[#body + 1] = ("  o[%d] = __float_as_uint(%s_%s(%s));"):format(#cases - 1, op[1], m, args)
      end
    end
    body[#body + 1] = ("  o[%d] = __float_as_uint(__fmaf_ieee_rz(x, y, z));"):format(#cases)
    body[#body + 1] = ("  o[%d] = __float_as_uint(__frsqrt_rn(x));"):format(#cases + 1)
    local K = #cases + 2
    local m = luacuda.compile(([[
extern "C" __global__ void fops(const float *in, int n, unsigned *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n * n) return;
  float x = in[t %% n], y = in[t / n], z = in[(t * 7 + 3) %% n];
  unsigned *o = out + (long long)t * %d;
%s
}]]):format(K, table.concat(body, "\n")))
    local inputs = {}
    for i, v in ipairs(FL_INPUTS) do inputs[i] = f32(v) end
    local n = #inputs
    local out = luacuda.device_array(n * n * K, "uint32")
    run(m, "fops", n * n, luacuda.to_device(inputs, nil, {dtype = "float32"}), n, out)
    local got, bad = out:totable(), {}
    for t = 0, n * n - 1 do
      local x, y, z = inputs[t % n + 1], inputs[t // n + 1], inputs[(t * 7 + 3) % n + 1]
      local function expect(k, want, what)
        local g = got[t * K + k]
        if not (want == g or isnan(ffrom(want)) and isnan(ffrom(g))) then
          bad[#bad + 1] = ("%s(%.9g, %.9g, %.9g): want %s, got %s"):format(what, x, y, z, hex(want), hex(g))
        end
      end
      for k, c in ipairs(cases) do expect(k, fbits(c[1][3](x, y, z, c[2])), c[1][1] .. "_" .. c[2]) end
      expect(#cases + 1, fbits(FOPS[5][3](x, y, z, "rz")), "__fmaf_ieee_rz")
      if x > 0 and x ~= math.huge then
        -- 1/sqrt(x) > c when c * c * x < 1: c * c is exact (50 bits), its
        -- product with x split exactly into p + e (Dekker), p - 1 exact
        local r = round_f(1 / math.sqrt(x), function(c)
          if c <= 0 then return 1 end
          local cc = c * c
          local p = cc * x
          local a1, a2 = cc * 134217729.0, x * 134217729.0
          local ch, xh = a1 - (a1 - cc), a2 - (a2 - x)
          local cl, xl = cc - ch, x - xh
          local e = ((ch * xh - p) + ch * xl + cl * xh) + cl * xl
          return -sign((p - 1) + e)
        end, "rn", 0.0)
        expect(#cases + 2, fbits(r), "__frsqrt_rn")
      end
    end
    check(bad)
  end)

  it("double arithmetic rounds once, in the mode named (__dadd_rz, __ddiv_ru, __fma_rd...) #fenv", function()
    local body = {}
    local DROUND = {
      {"__dadd", {1.0, 8.673617379884035e-19}, {0x3ff0000000000000, 0x3ff0000000000000, 0x3ff0000000000001, 0x3ff0000000000000}},
      {"__dadd", {-1.0, -8.673617379884035e-19}, {0xbff0000000000000, 0xbff0000000000000, 0xbff0000000000000, 0xbff0000000000001}},
      {"__dadd", {1.0, -1.0}, {0x0, 0x0, 0x0, 0x8000000000000000}},
      {"__dadd", {-0.0, -0.0}, {0x8000000000000000, 0x8000000000000000, 0x8000000000000000, 0x8000000000000000}},
      {"__dadd", {1.7e+308, 1.7e+308}, {0x7ff0000000000000, 0x7fefffffffffffff, 0x7ff0000000000000, 0x7fefffffffffffff}},
      {"__dadd", {0.1, 0.2}, {0x3fd3333333333334, 0x3fd3333333333333, 0x3fd3333333333334, 0x3fd3333333333333}},
      {"__dadd", {5e-324, -1e-320}, {0x80000000000007e7, 0x80000000000007e7, 0x80000000000007e7, 0x80000000000007e7}},
      {"__dsub", {1.0, 8.673617379884035e-19}, {0x3ff0000000000000, 0x3fefffffffffffff, 0x3ff0000000000000, 0x3fefffffffffffff}},
      {"__dsub", {0.3, 0.3}, {0x0, 0x0, 0x0, 0x8000000000000000}},
      {"__dsub", {-1e+308, 1e+308}, {0xfff0000000000000, 0xffefffffffffffff, 0xffefffffffffffff, 0xfff0000000000000}},
      {"__dsub", {1.0, 1e-300}, {0x3ff0000000000000, 0x3fefffffffffffff, 0x3ff0000000000000, 0x3fefffffffffffff}},
      {"__dmul", {1.0000000000000002, 1.0000000000000002}, {0x3ff0000000000002, 0x3ff0000000000002, 0x3ff0000000000003, 0x3ff0000000000002}},
      {"__dmul", {1e+200, 1e+200}, {0x7ff0000000000000, 0x7fefffffffffffff, 0x7ff0000000000000, 0x7fefffffffffffff}},
      {"__dmul", {1e-200, 1e-200}, {0x0, 0x0, 0x1, 0x0}},
      {"__dmul", {-1e-200, 1e-200}, {0x8000000000000000, 0x8000000000000000, 0x8000000000000000, 0x8000000000000001}},
      {"__dmul", {0.1, 3.0}, {0x3fd3333333333334, 0x3fd3333333333333, 0x3fd3333333333334, 0x3fd3333333333333}},
      {"__dmul", {-0.0, 5.0}, {0x8000000000000000, 0x8000000000000000, 0x8000000000000000, 0x8000000000000000}},
      {"__ddiv", {1.0, 3.0}, {0x3fd5555555555555, 0x3fd5555555555555, 0x3fd5555555555556, 0x3fd5555555555555}},
      {"__ddiv", {-2.0, 3.0}, {0xbfe5555555555555, 0xbfe5555555555555, 0xbfe5555555555555, 0xbfe5555555555556}},
      {"__ddiv", {5.0, 7.0}, {0x3fe6db6db6db6db7, 0x3fe6db6db6db6db6, 0x3fe6db6db6db6db7, 0x3fe6db6db6db6db6}},
      {"__ddiv", {1e+308, 0.1}, {0x7ff0000000000000, 0x7fefffffffffffff, 0x7ff0000000000000, 0x7fefffffffffffff}},
      {"__ddiv", {1e-320, 3.0}, {0x2a3, 0x2a2, 0x2a3, 0x2a2}},
      {"__ddiv", {-1.0, 1e+308}, {0x800730d67819e8d2, 0x800730d67819e8d2, 0x800730d67819e8d2, 0x800730d67819e8d3}},
      {"__drcp", {3.0}, {0x3fd5555555555555, 0x3fd5555555555555, 0x3fd5555555555556, 0x3fd5555555555555}},
      {"__drcp", {-7.0}, {0xbfc2492492492492, 0xbfc2492492492492, 0xbfc2492492492492, 0xbfc2492492492493}},
      {"__drcp", {1e-310}, {0x7ff0000000000000, 0x7fefffffffffffff, 0x7ff0000000000000, 0x7fefffffffffffff}},
      {"__drcp", {1e+308}, {0x730d67819e8d2, 0x730d67819e8d2, 0x730d67819e8d3, 0x730d67819e8d2}},
      {"__drcp", {0.1}, {0x4024000000000000, 0x4023ffffffffffff, 0x4024000000000000, 0x4023ffffffffffff}},
      {"__dsqrt", {2.0}, {0x3ff6a09e667f3bcd, 0x3ff6a09e667f3bcc, 0x3ff6a09e667f3bcd, 0x3ff6a09e667f3bcc}},
      {"__dsqrt", {3.0}, {0x3ffbb67ae8584caa, 0x3ffbb67ae8584caa, 0x3ffbb67ae8584cab, 0x3ffbb67ae8584caa}},
      {"__dsqrt", {5e-324}, {0x1e60000000000000, 0x1e60000000000000, 0x1e60000000000000, 0x1e60000000000000}},
      {"__dsqrt", {1e+300}, {0x5f138d352e5096af, 0x5f138d352e5096af, 0x5f138d352e5096b0, 0x5f138d352e5096af}},
      {"__dsqrt", {0.1}, {0x3fd43d136248490f, 0x3fd43d136248490f, 0x3fd43d1362484910, 0x3fd43d136248490f}},
      {"__fma", {0.1, 10.0, -1.0}, {0x3c90000000000000, 0x3c90000000000000, 0x3c90000000000000, 0x3c90000000000000}},
      {"__fma", {1.0000000000000002, 0.9999999999999999, -1.0}, {0x3c9ffffffffffffe, 0x3c9ffffffffffffe, 0x3c9ffffffffffffe, 0x3c9ffffffffffffe}},
      {"__fma", {1.0, 1.0, -1.0}, {0x0, 0x0, 0x0, 0x8000000000000000}},
      {"__fma", {1e+308, 10.0, -1e+308}, {0x7ff0000000000000, 0x7fefffffffffffff, 0x7ff0000000000000, 0x7fefffffffffffff}},
      {"__fma", {3.0, 0.3333333333333333, -1.0}, {0xbc90000000000000, 0xbc90000000000000, 0xbc90000000000000, 0xbc90000000000000}},
      {"__fma", {1e-300, 1e-300, 1.0}, {0x3ff0000000000000, 0x3ff0000000000000, 0x3ff0000000000001, 0x3ff0000000000000}},
    }
    -- (the values: exact rationals rounded once)
    local X, Y, Z, which, names = {}, {}, {}, {}, {}
    for _, c in ipairs(DROUND) do
      if not names[c[1]] then
        names[#names + 1], names[c[1]] = c[1], #names
        local args = c[1] == "__fma" and "x, y, z" or (c[1] == "__drcp" or c[1] == "__dsqrt") and "x" or "x, y"
        local calls = {}
        for i, m in ipairs(MODES) do calls[i] = ("o[%d] = __double_as_longlong(%s_%s(%s));"):format(i - 1, c[1], m, args) end
        body[#body + 1] = ("    case %d: %s break;"):format(names[c[1]], table.concat(calls, " "))
      end
      X[#X + 1], Y[#Y + 1], Z[#Z + 1], which[#which + 1] = c[2][1], c[2][2] or 0.0, c[2][3] or 0.0, names[c[1]]
    end
    local m = luacuda.compile(([[
extern "C" __global__ void dops(const double *xs, const double *ys, const double *zs, const int *which, int n,
                                long long *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  double x = xs[t], y = ys[t], z = zs[t];
  long long *o = out + 4 * t;
  (void)y; (void)z;
  switch (which[t]) {
%s
  }
}]]):format(table.concat(body, "\n")))
    local n = #DROUND
    local out = luacuda.device_array(4 * n, "int64")
    local dev = function(t) return luacuda.to_device(t, nil, {dtype = "float64"}) end
    run(m, "dops", n, dev(X), dev(Y), dev(Z), luacuda.to_device(which, nil, {dtype = "int32"}), n, out)
    local got, bad = out:totable(), {}
    for t, c in ipairs(DROUND) do
      for i, mode in ipairs(MODES) do
        local g = got[4 * (t - 1) + i]
        if g ~= c[3][i] then
          bad[#bad + 1] = ("%s_%s(%s): want %s, got %s"):format(c[1], mode, table.concat(c[2], ", "), hex(c[3][i]), hex(g))
        end
      end
    end
    check(bad)
  end)

  it("the single-precision functions only CUDA has, within its bounds #fenv", function()
    check_math(MATHF, "float")
  end)

  it("the double-precision functions only CUDA has, within its bounds #fenv", function()
    check_math(MATHD, "double")
  end)

  it("the special values CUDA documents, bit for bit #fenv", function()
    local cases = {
      {"__float_as_uint(__saturatef(__uint_as_float(0x7fc00000u)))", 0},                    -- NaN: +0
      {"__float_as_uint(__saturatef(-0.5f))", 0}, {"__float_as_uint(__saturatef(2.0f))", fbits(1.0)},
      {"__float_as_uint(__saturatef(0.25f))", fbits(0.25)},
      {"__float_as_uint(__saturatef(__uint_as_float(0xff800000u)))", 0},                   -- -infinity
      {"__float_as_uint(sinpif(-0.0f))", 0x80000000}, {"__double_as_longlong(sinpi(-0.0))", math.mininteger},
      {"__double_as_longlong(sinpi(-1.0))", math.mininteger}, {"__double_as_longlong(sinpi(2.0))", 0},
      {"__double_as_longlong(cospi(1.5))", 0}, {"__double_as_longlong(cospi(-0.5))", 0},
      {"__float_as_uint(rcbrtf(-0.0f))", 0xff800000}, {"__double_as_longlong(erfinv(-0.0))", math.mininteger},
      {"__double_as_longlong(cyl_bessel_i1(-0.0))", math.mininteger},
      {"__double_as_longlong(normcdfinv(0.5))", 0},
      -- min and max of floats: fminf and fmaxf (a NaN loses)
      {"__float_as_uint(min(__uint_as_float(0x7fc00000u), 1.5f))", fbits(1.5)},
      {"__float_as_uint(max(2.5f, __uint_as_float(0x7fc00000u)))", fbits(2.5)},
      {"__double_as_longlong(min(2.0f, 1.25))", dbits(1.25)}, {"__double_as_longlong(max(0.5, 3.0f))", dbits(3.0)},
      -- CUDA's float overloads are float, its mixed min and max double or unsigned
      {"sizeof(rsqrt(2.0f)) + 10 * sizeof(exp10(2.0f)) + 100 * sizeof(erfinv(0.5f)) + 1000 * sizeof(min(1.0f, 2.0))", 8444},
      {"sizeof(sinpi(1.0f)) + 10 * sizeof(normcdf(1.0f)) + 100 * sizeof(cyl_bessel_i0(1.0f)) + 1000 * sizeof(j0(1.0f))", 4444},
      {"min(-1, 2u)", 2}, {"max(-1, 2u)", 0xffffffff}, {"min(3u, -1)", 3},
      {"__float_as_uint(fdividef(1.0f, 3.0f))", fbits(f32(1 / 3))},
      -- the older spellings, the rounding an argument
      {"__double_as_longlong(dadd(1.0, 0x1p-60, cudaRoundPosInf))", 0x3ff0000000000001},
      {"__double_as_longlong(dmul(0.1, 3.0))", 0x3fd3333333333334},
      {"__double_as_longlong(dsub(1.0, 0x1p-60, cudaRoundZero))", 0x3fefffffffffffff},
      {"__double_as_longlong(fma(1.0, 1.0, -1.0, cudaRoundMinInf))", math.mininteger},
      {"double2int(-2.5)", -2}, {"double2int(-2.5, cudaRoundMinInf)", -3}, {"double2ull(-1.0)", 0},
      {"__double_as_longlong(ll2double((1ll << 53) + 1, cudaRoundPosInf))", dbits(2.0 ^ 53 + 2)},
      {"__float_as_uint(rsqrt(4.0f))", fbits(0.5)},
    }
    local body = {}
    for k, c in ipairs(cases) do body[k] = ("  o[%d] = (long long)(%s);"):format(k - 1, c[1]) end
    local m = luacuda.compile(([[
extern "C" __global__ void specials(long long *o) {
  if (threadIdx.x != 0) return;
%s
}]]):format(table.concat(body, "\n")))
    local out = luacuda.device_array(#cases, "int64")
    run(m, "specials", 1, out)
    local got, bad = out:totable(), {}
    for k, c in ipairs(cases) do
      if got[k] ~= c[2] then bad[#bad + 1] = ("%s: want %s, got %s"):format(c[1], hex(c[2]), hex(got[k])) end
    end
    check(bad)
  end)

  it("the fast intrinsics load and run, within CUDA's bounds (__expf, __sinf, __powf...)", function()
    -- {expression, the value, the bound: ulps, or an absolute error where given}
    local L10 = math.log(10)
    local cases = {}
    local function add(expr, xs, ref, bound) cases[#cases + 1] = {expr, xs, ref, bound} end
    add("__expf(x)", {0.0, 1.0, -1.0, 10.0, -20.5, 0.3}, math.exp, function(x) return {ulp = 2 + math.floor(math.abs(1.173 * x))} end)
    add("__exp10f(x)", {0.0, 1.0, -1.0, 5.5, 0.3}, function(x) return 10 ^ x end,
        function(x) return {ulp = 2 + math.floor(math.abs(2.97 * x))} end)
    add("__logf(x)", {0.5, 1.0, 1.5, 2.0, 10.0, 1e30, 3e-5}, math.log,
        function(x) return x >= 0.5 and x <= 2 and {abs = 2 ^ -21.41} or {ulp = 3} end)
    add("__log2f(x)", {0.5, 1.0, 1.5, 2.0, 10.0, 1e30, 3e-5}, function(x) return math.log(x, 2) end,
        function(x) return x >= 0.5 and x <= 2 and {abs = 2 ^ -22} or {ulp = 2} end)
    add("__log10f(x)", {0.5, 1.0, 1.5, 2.0, 10.0, 1e30, 3e-5}, function(x) return math.log(x) / L10 end,
        function(x) return x >= 0.5 and x <= 2 and {abs = 2 ^ -24} or {ulp = 3} end)
    add("__sinf(x)", {0.0, 0.5, -1.0, 3.0, -3.1}, math.sin, function() return {abs = 2 ^ -21.41} end)
    add("__cosf(x)", {0.0, 0.5, -1.0, 3.0, -3.1}, math.cos, function() return {abs = 2 ^ -21.41} end)
    add("__tanf(x)", {0.0, 0.5, -1.0}, math.tan, function() return {abs = 2 ^ -20} end)
    add("__powf(x, 2.5f)", {1.0, 2.0, 0.5, 10.0}, function(x) return x ^ 2.5 end, function() return {rel = 2 ^ -20} end)
    add("__fdividef(x, 3.0f)", {1.0, -7.0, 1e30, 1e-30}, function(x) return x / 3 end, function() return {ulp = 2} end)
    add("__tanhf(x)", {0.0, 0.5, -1.0, 3.0}, function(x) local e = math.exp(2 * x); return (e - 1) / (e + 1) end,
        function() return {rel = 2 ^ -10.987} end)
    add("[&] { float s, c; __sincosf(x, &s, &c); return s + 2 * c; }()", {0.0, 0.5, -1.0},
        function(x) return math.sin(x) + 2 * math.cos(x) end, function() return {abs = 3 * 2 ^ -21.41} end)
    local X, which, body = {}, {}, {}
    for k, c in ipairs(cases) do
      body[k] = ("    case %d: r = %s; break;"):format(k - 1, c[1])
      for _, x in ipairs(c[2]) do X[#X + 1], which[#which + 1] = x, k - 1 end
    end
    local m = luacuda.compile(([[
extern "C" __global__ void fast(const float *xs, const int *which, int n, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = xs[i], r = 0;
  switch (which[i]) {
%s
  }
  out[i] = r;
}]]):format(table.concat(body, "\n")))
    local n = #X
    local out = luacuda.device_array(n, "float32")
    run(m, "fast", n, luacuda.to_device(X, nil, {dtype = "float32"}), luacuda.to_device(which, nil, {dtype = "int32"}), n, out)
    local got, i, bad = out:totable(), 0, {}
    for _, c in ipairs(cases) do
      for _, x in ipairs(c[2]) do
        i = i + 1
        x = f32(x)
        local want, g, b = c[3](x), got[i], c[4](x)
        local ok
        if b.ulp then ok = ulps32(fbits(f32(want)), fbits(g)) <= b.ulp
        elseif b.abs then ok = math.abs(g - want) <= b.abs
        else ok = math.abs(g - want) <= b.rel * math.abs(want) end
        if not ok then bad[#bad + 1] = ("%s at x=%.9g: want %.9g, got %.9g"):format(c[1], x, want, g) end
      end
    end
    check(bad)
  end)

  it("a kernel may define the atomics CUDA lacks, atomicAdd for long long", function()
    local m = luacuda.compile([[
__device__ long long atomicAdd(long long *p, long long v) {
  return (long long)atomicAdd((unsigned long long *)p, (unsigned long long)v);
}
__device__ double atomicExch(double *p, double v) {
  return __longlong_as_double((long long)atomicExch((unsigned long long *)p, (unsigned long long)__double_as_longlong(v)));
}
extern "C" __global__ void tally(long long *total, double *last, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(total, -3ll * i);
  atomicAdd(total + 1, 1ll << 40);
  if (i == 5) atomicExch(last, 2.5);
}]])
    local total = luacuda.to_device({7, 0}, nil, {dtype = "int64"})
    local last = luacuda.to_device({0}, nil, {dtype = "float64"})
    run(m, "tally", 200, total, last, 200)
    assert.same({7 - 3 * 199 * 200 // 2, 200 * (1 << 40)}, total:totable())
    assert.same({2.5}, last:totable())
  end)

  it("scoped atomics (_block, _system) and atomicCAS on unsigned short", function()
    local m = luacuda.compile([[
extern "C" __global__ void scoped(int *i, unsigned *u, unsigned long long *ull, long long *ll, float *f, double *d,
                                  unsigned short *us) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd_block(&i[0], t); atomicAdd_system(&i[1], 2 * t); atomicSub_block(&i[2], t);
  atomicMax_system(&i[3], t - 100); atomicMin_block(&i[4], 50 - t); atomicOr_system(&u[0], 1u << (t % 32));
  atomicAnd_block(&u[1], ~(1u << (t % 32))); atomicXor_system(&u[2], 1u << (t % 7));
  atomicInc_block(&u[3], 9u); atomicDec_system(&u[4], 9u); atomicExch_block(&u[5], 77u);
  atomicAdd_system(&ull[0], 1ull << 33); atomicCAS_block(&ull[1], 0ull, 99ull);
  atomicMax_block(&ll[0], -(long long)t); atomicMin_system(&ll[1], (long long)t << 35);
  atomicAdd_block(&f[0], 0.5f); atomicAdd_system(&d[0], 0.25); atomicExch_system(&f[1], 4.0f);
  unsigned short old = us[0], seen;
  do { seen = old; old = atomicCAS(&us[0], seen, (unsigned short)(seen + 3)); } while (old != seen);
}]])
    local i = luacuda.to_device({0, 0, 1000, -1000, 1000}, nil, {dtype = "int32"})
    local u = luacuda.to_device({0, 0xffffffff, 0, 0, 0, 0}, nil, {dtype = "uint32"})
    local ull = luacuda.to_device({5, 0}, nil, {dtype = "uint64"})
    local ll = luacuda.to_device({-1000, 1 << 62}, nil, {dtype = "int64"})
    local f = luacuda.to_device({0, 0}, nil, {dtype = "float32"})
    local d = luacuda.to_device({1}, nil, {dtype = "float64"})
    local us = luacuda.to_device({100}, nil, {dtype = "uint16"})
    m.scoped[{2, 64}](i, u, ull, ll, f, d, us)
    luacuda.synchronize()
    local sum = 127 * 128 // 2
    assert.same({sum, 2 * sum, 1000 - sum, 27, 50 - 127}, i:totable())
    local x = 0
    for t = 0, 127 do x = x ~ (1 << (t % 7)) end
    local U = u:totable()
    assert.same({0xffffffff, 0, x, 128 % 10, (10 - 128 % 10) % 10, 77}, U)
    assert.same({5 + 128 * (1 << 33), 99}, ull:totable())
    assert.same({0, 0}, ll:totable())
    assert.same({64, 4}, f:totable())
    assert.same({33}, d:totable())
    assert.same({100 + 3 * 128}, us:totable())
  end)

  it("__ldg and the cache-hinted loads and stores move every type CUDA gives them", function()
    local types = {"char", "signed char", "short", "int", "long", "long long", "unsigned char", "unsigned short",
                   "unsigned int", "unsigned long", "unsigned long long", "float", "double", "int2", "int4",
                   "uint4", "float2", "float4", "double2", "longlong2", "uchar4", "short2"}
    local body = {}
    for k, t in ipairs(types) do
      body[k] = ([[  { const %s *p = (const %s *)(in + 16 * %d); %s *q = (%s *)(out + 16 * %d);
    __stwb(q, __ldg(p)); __stcg(q + 1, __ldcg(p + 1)); __stcs(q + 2, __ldca(p + 2)); __stwt(q + 3, __ldcs(p + 3));
    __stcg(q + 4, __ldlu(p + 4)); __stwb(q + 5, __ldcv(p + 5)); }]]):format(t, t, k - 1, t, t, k - 1)
    end
    local m = luacuda.compile(([[
extern "C" __global__ void moves(const long long *in, long long *out) {
  if (threadIdx.x != 0) return;
%s
}]]):format(table.concat(body, "\n")))
    local n = 16 * #types
    local src = {}
    for k = 1, n do src[k] = (k * 0x9e3779b97f4a7c15) ~ (k << 17) end
    local out = luacuda.device_array(n, "int64")
    out:fill(0)
    run(m, "moves", 1, luacuda.to_device(src, nil, {dtype = "int64"}), out)
    -- the first six elements of each type moved, the rest of its 128 bytes untouched
    local got, sizes = out:totable(), {1, 1, 2, 4, 8, 8, 1, 2, 4, 8, 8, 4, 8, 8, 16, 16, 8, 16, 16, 16, 4, 4}
    local srcb, gotb = string.pack("<" .. ("i8"):rep(n), table.unpack(src)), string.pack("<" .. ("i8"):rep(n), table.unpack(got))
    for k, t in ipairs(types) do
      local at, moved = 128 * (k - 1), 6 * sizes[k]
      assert.equal(srcb:sub(at + 1, at + moved), gotb:sub(at + 1, at + moved), t)
      assert.equal(("\0"):rep(128 - moved), gotb:sub(at + moved + 1, at + 128), t)
    end
  end)

  it("clock64 counts up, and __nanosleep lets a spinning thread's partner run", function()
    local m = luacuda.compile([[
extern "C" __global__ void spin(int *flag, long long *out) {
  if (threadIdx.x == 0) {
    long long t0 = clock64(), waits = 0;
    clock_t c0 = clock();
    while (atomicAdd(flag, 0) == 0) { __nanosleep(100); waits++; }
    out[0] = clock64() - t0;
    out[1] = waits > 0;
    out[2] = clock() >= c0;
  } else if (threadIdx.x == blockDim.x - 1) {
    __nanosleep(1000);
    atomicExch(flag, 1);
  }
}]])
    for _, threads in ipairs {2, 64} do
      local flag = luacuda.to_device({0}, nil, {dtype = "int32"})
      local out = luacuda.device_array(3, "int64")
      m.spin[{1, threads}](flag, out)
      luacuda.synchronize()
      local o = out:totable()
      assert.is_true(o[1] > 0, "clock64 went back")
      assert.same({1, 1}, {o[2], o[3]})
      assert.same({1}, flag:totable())
    end
  end)

  it("__brkpt() ends the launch, naming the thread", function()
    if S.backend ~= "sim" then return pending("simulator only: a breakpoint poisons a CUDA context") end
    local m = luacuda.compile([[
extern "C" __global__ void stop(int *a) { if (threadIdx.x == 2) __brkpt(); a[threadIdx.x] = 1; }]])
    local a = luacuda.device_array(4, "int32")
    m.stop[{1, 4}](a)
    S.misuse({"kernel 'stop' failed: __brkpt() called in block (0, 0, 0), thread (2, 0, 0)"}, luacuda.synchronize)
  end)

  it("__fdividef gives 0 for divisors past 2^126, as div.approx does", function()
    local m = luacuda.compile([[
extern "C" __global__ void quotients(float *o) {
  o[0] = __fdividef(1.0f, 1e38f); o[1] = __fdividef(-3.0f, 2e38f); o[2] = __fdividef(__int_as_float(0x7f800000), 1e38f);
  o[3] = __fdividef(1.0f, 8e37f);
}]])
    local o = luacuda.device_array(4, "float32")
    run(m, "quotients", 1, o)
    local r = o:totable()
    assert.same({0, 0x80000000}, {fbits(r[1]), fbits(r[2])})
    assert.is_true(isnan(r[3]))
    assert.equal(f32(1 / f32(8e37)), r[4])
  end)
end)

-- ---- both backends, a broad sample -----------------------------------------------

-- The same kernel on the simulator and on the fake driver (NVRTC's code,
-- CUDA's own math library), each in a child: every function over a grid of
-- inputs, agreeing within CUDA's bound plus one ulp (each side rounds;
-- lgamma has no bound in ulps near its zeros, where CUDA names an interval).
describe("the math library on both backends", function()
  local FUNCS_F = {
    {"sinf(x)", 2}, {"cosf(x)", 2}, {"tanf(x)", 4}, {"sinpif(x)", 1}, {"cospif(x)", 1}, {"expf(x)", 2},
    {"exp2f(x)", 2}, {"exp10f(x)", 2}, {"expm1f(x)", 1}, {"logf(x)", 1}, {"log2f(x)", 1}, {"log10f(x)", 2},
    {"log1pf(x)", 1}, {"cbrtf(x)", 1}, {"rcbrtf(x)", 1}, {"rsqrtf(x)", 2}, {"erff(x)", 2}, {"erfcf(x)", 4},
    {"erfinvf(x)", 2}, {"erfcinvf(x)", 4}, {"erfcxf(x)", 4}, {"normcdff(x)", 5}, {"normcdfinvf(x)", 5},
    {"asinf(x)", 2}, {"acosf(x)", 2}, {"atanf(x)", 2}, {"sinhf(x)", 3}, {"coshf(x)", 2}, {"tanhf(x)", 2},
    {"asinhf(x)", 3}, {"acoshf(x)", 4}, {"atanhf(x)", 3}, {"cyl_bessel_i0f(x)", 6}, {"cyl_bessel_i1f(x)", 6},
    {"lgammaf(x)", 6, function(x) return x > -10.001 and x < -2.2637 end}, {"tgammaf(x)", 5}, {"atan2f(x, y)", 3}, {"hypotf(x, y)", 3}, {"rhypotf(x, y)", 2},
    {"powf(x, y)", 4}, {"fmodf(x, y)", 0}, {"remainderf(x, y)", 0}, {"fdimf(x, y)", 0}, {"norm3df(x, y, 1.5f)", 2},
    {"rnorm3df(x, y, 1.5f)", 2}, {"norm4df(x, y, x, 0.5f)", 2}, {"rnorm4df(x, y, x, 0.5f)", 2},
    {"sqrtf(x)", 0}, {"fdividef(x, y)", 0}, {"__saturatef(x)", 0}, {"__frsqrt_rn(x)", 0},
  }
  local FUNCS_D = {
    {"sinpi(x)", 2}, {"cospi(x)", 2}, {"exp10(x)", 1}, {"rcbrt(x)", 1}, {"rsqrt(x)", 1}, {"erfinv(x)", 5},
    {"erfcinv(x)", 6}, {"erfcx(x)", 4}, {"normcdf(x)", 5}, {"normcdfinv(x)", 8}, {"cyl_bessel_i0(x)", 6},
    {"cyl_bessel_i1(x)", 6}, {"rhypot(x, y)", 1}, {"norm3d(x, y, 1.5)", 2}, {"rnorm3d(x, y, 1.5)", 2},
    {"norm4d(x, y, x, 0.5)", 2}, {"rnorm4d(x, y, x, 0.5)", 2}, {"tgamma(x)", 10}, {"lgamma(x)", 4, function(x) return x > -11.0001 and x < -2.2637 end},
    {"asinh(x)", 3}, {"acosh(x)", 3}, {"atanh(x)", 2}, {"erfc(x)", 5}, {"expm1(x)", 1}, {"cbrt(x)", 1},
  }
  local INPUTS = {0.0, -0.0, 0.1, -0.25, 0.5, 0.75, 0.9999, 1.0, -1.0, 1.5, 1.9, 2.0, -2.5, 3.3, 7.25, -10.5,
                  30.0, 88.5, -100.0, 1e-3, 1e-30, 1e-40, 1e10, -1e20, 3e38, 1 / 0, -1 / 0, 0 / 0}

  local function code(funcs, T)
    local body = {}
    for k, f in ipairs(funcs) do body[k] = ("  o[%d] = %s;"):format(k - 1, f[1]) end
    return ([==[
local l = require "luacuda"
local m = l.compile([[
extern "C" __global__ void grid(const T *in, int n, T *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n * n) return;
  T x = in[t %% n], y = in[t / n], *o = out + (long long)t * %d;
%s
}]])
local inputs = {%s}
local n = #inputs
local dt = "%s"
local out = l.device_array(n * n * %d, dt)
m.grid[{(n * n + 63) // 64, 64}](l.to_device(inputs, nil, {dtype = dt}), n, out)
l.synchronize()
local r, fmt = {}, dt == "float32" and "<f" or "<d"
for i, v in ipairs(out:totable()) do
  r[i] = ("%%x"):format(string.unpack(fmt == "<f" and "<I4" or "<i8", string.pack(fmt, v)))
end
io.write("OUT ", table.concat(r, " "), "\n")
]==]):gsub("%f[%w]T%f[%W]", T):format(#funcs, table.concat(body, "\n"),
        table.concat((function()
          local s = {}
          for i, v in ipairs(INPUTS) do s[i] = isnan(v) and "0/0" or v == math.huge and "1/0" or v == -math.huge and "-1/0" or ("%a"):format(v) end
          return s
        end)(), ", "),
        T == "float" and "float32" or "float64", #funcs)
  end

  local function child(src, env)
    local dir = S.tmpdir()
    local f = assert(io.open(dir .. "/c.lua", "w"))
    f:write(src)
    f:close()
    local ok, out = S.sh(("env LUACUDA_CACHE_DIR=%s/cache %s lua5.4 %s/c.lua"):format(dir, env, dir))
    os.execute("rm -rf " .. dir)
    local line = out:match("OUT ([^\n]*)")
    assert(ok and line, out:sub(1, 3000))
    local r = {}
    for w in line:gmatch("%S+") do r[#r + 1] = math.tointeger(tonumber("0x" .. w)) end
    return r
  end

  local function compare(funcs, T)
    if not S.exists(FAKE) then return pending("no fake driver here (" .. FAKE .. ")") end
    local src = code(funcs, T)
    local sim = child(src, "LUACUDA_BACKEND=sim")
    local fake = child(src, ("LUACUDA_BACKEND=cuda LUACUDA_LIBCUDA=%s FAKE_CUDA_DELAY_US=0 FAKE_CUDA_TRACE="):format(FAKE))
    assert.equal(#sim, #fake)
    local n, dist, bad = #INPUTS, T == "float" and ulps32 or ulps64, {}
    local zero = T == "float" and 0x7fffffff or math.maxinteger
    for i = 1, #sim do
      local t, k = (i - 1) // #funcs, (i - 1) % #funcs + 1
      local a, b = sim[i], fake[i]
      local bound = funcs[k][2] + 1
      -- (lgamma: CUDA bounds its error in ulps outside the interval named)
      if funcs[k][3] and funcs[k][3](INPUTS[t % n + 1]) then a = b end
      -- either zero, where the result is a zero
      if a & zero == 0 and b & zero == 0 then a = b end
      if dist(a, b) > bound then
        bad[#bad + 1] = ("%s at x=%.9g, y=%.9g: simulator %s, fake %s (bound %d ulp)"):format(funcs[k][1],
          INPUTS[t % n + 1], INPUTS[t // n + 1], hex(a), hex(b), bound)
      end
    end
    check(bad)
  end

  it("single precision", function() compare(FUNCS_F, "float") end)
  it("double precision", function() compare(FUNCS_D, "double") end)
end)
