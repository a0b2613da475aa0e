-- The fake driver's PTX interpreter (spec/fake/ptx/) through the public API:
-- kernels compiled by the real NVRTC to PTX run on the fake in a child
-- process (LUACUDA_BACKEND=cuda: the fatbinary a GPU loads), and what they compute is
-- compared with the same kernel run on the simulator in another child
-- (the host compiler's arithmetic and C library) or with values computed
-- here in Lua; the faults a GPU reports (illegal and misaligned addresses,
-- shared memory overruns, traps, assertions, deadlocks) must be reported
-- the same way, sticky, with the kernel and PTX line named on stderr.
-- Runs under plain `make check` (the parent on the simulator) and under
-- `make check-fake-cuda` alike: every kernel runs in children.
local S = require "spec.support"

local BUILD = os.getenv("LUACUDA_BUILD") or "build"
local FAKE = BUILD .. "/fake/libcuda.so.1"

local FAKE_ENV = ("LUACUDA_BACKEND=cuda LUACUDA_LIBCUDA=%s FAKE_CUDA_MEMORY=256M "
                  .. "FAKE_CUDA_DELAY_US=0 FAKE_CUDA_TRACE="):format(FAKE)
local SIM_ENV = "LUACUDA_BACKEND=sim"

-- Run a Lua chunk in a child with env; its stdout, its stderr and whether
-- it exited 0.
local function child(code, env)
  local dir = S.tmpdir()
  local f = assert(io.open(dir .. "/s.lua", "w"))
  f:write(code)
  f:close()
  local p = io.popen(("timeout 300 env LUACUDA_CACHE_DIR=%s/cache %s lua5.4 %s/s.lua 2>%s/err; echo \"exit $?\"")
                     :format(dir, env, dir, dir))
  local out = p:read("a")
  p:close()
  local e = io.open(dir .. "/err")
  local err = e and e:read("a") or ""
  if e then e:close() end
  os.execute("rm -rf " .. dir)
  local status = out:match("exit (%d+)\n$")
  out = out:gsub("exit %d+\n$", "")
  return out, err, status == "0"
end

-- ---- differential runs ------------------------------------------------------------

-- Every kernel below writes its results as 64-bit words, each with a kind
-- saying how the two runs must agree.
local COMMON = [[
#define SLOTS 192
#define BEGIN long long *o_ = out + (long long)t * SLOTS, *k_ = kind + (long long)t * SLOTS; int r_ = 0
#define PUT_(v, k) (r_ < SLOTS ? (o_[r_] = (long long)(v), k_[r_] = (k)) : 0, r_++)
#define OI(v) PUT_(v, 1)                           /* an integer: exact */
#define OF(v) PUT_(__float_as_uint(v), 2)          /* a float: bit for bit, any NaN equal */
#define OD(v) PUT_(__double_as_longlong(v), 3)     /* a double: the same */
#define MF(v) PUT_(__float_as_uint(v), 4)          /* the math library: within 2 ulp */
#define MD(v) PUT_(__double_as_longlong(v), 5)
#define AF(v) PUT_(__float_as_uint(v), 6)          /* approximate intrinsics: 1e-5 relative */
#define ZF(v) PUT_(__float_as_uint(v), 7)          /* a float where C leaves the sign of a zero open */
#define ZD(v) PUT_(__double_as_longlong(v), 8)
#define PAIR long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
  if (t >= (long long)n * n) return; \
  long long X = in[t % n], Y = in[t / n]; BEGIN

]]

-- integer arithmetic of every width, signed and unsigned (only what C
-- defines: no signed overflow, no division by zero or of the minimum by
-- -1, shifts below the width)
local INTS = [[
#define ARITH(T, U, MIN) do { T x = (T)X, y = (T)Y; unsigned s_ = (unsigned)(Y >> 8) % (8 * sizeof(T)); \
  OI((T)((U)x + (U)y)); OI((T)((U)x - (U)y)); OI((T)((U)x * (U)y)); \
  bool d_ = y != 0 && !(x == (T)(MIN) && y == (T)-1); \
  OI(d_ ? (T)(x / y) : (T)0); OI(d_ ? (T)(x % y) : (T)0); \
  OI(x < y ? x : y); OI(x > y ? x : y); OI(x < y); OI(x >= y); OI(x == y); OI(x <= y); \
  OI((T)(x >> s_)); OI((T)((U)x << s_)); OI((T)((U)x >> s_)); \
  OI((T)(x & y)); OI((T)(x | y)); OI((T)(x ^ y)); OI((T)~x); OI((T)(0 - (U)x)); \
  OI((T)((U)x * (U)y + (U)x)); OI(x < 0 ? (T)(0 - (U)x) : x); \
} while (0)
KERNEL(ints) {
  PAIR;
  ARITH(signed char, unsigned char, -128);
  ARITH(unsigned char, unsigned char, 0);
  ARITH(short, unsigned short, -32768);
  ARITH(unsigned short, unsigned short, 0);
  ARITH(int, unsigned, -2147483647 - 1);
  ARITH(unsigned, unsigned, 0);
  ARITH(long long, unsigned long long, -9223372036854775807LL - 1);
  ARITH(unsigned long long, unsigned long long, 0);
  OI(__umulhi((unsigned)X, (unsigned)Y)); OI(__mulhi((int)X, (int)Y));
  OI(__umul64hi((unsigned long long)X, (unsigned long long)Y)); OI(__mul64hi(X, Y));
  OI((long long)(int)X * (int)Y); OI((unsigned long long)(unsigned)X * (unsigned)Y);
  OI((long long)(short)X * (short)Y); OI(__mul24((int)X, (int)Y)); OI(__umul24((unsigned)X, (unsigned)Y));
  OI((long long)(int)X + (long long)(unsigned)Y);
  OI((unsigned long long)X / 10u); OI(X / 1000); OI(X % 7); OI((unsigned)X / 3u); OI((int)X / -5);
}
]]

-- bit operations and the bit-field patterns
local BITS = [[
KERNEL(bits) {
  PAIR;
  unsigned x = (unsigned)X, y = (unsigned)Y;
  unsigned long long x64 = (unsigned long long)X, y64 = (unsigned long long)Y;
  OI(__popc(x)); OI(__popcll(x64)); OI(__clz((int)x)); OI(__clzll((long long)x64));
  OI(__brev(x)); OI(__brevll(x64)); OI(__ffs((int)x)); OI(__ffsll((long long)x64));
  OI(__byte_perm(x, y, (unsigned)(y64 >> 32) & 0x7777)); OI(__byte_perm(x, y, 0x1054));
  OI(__byte_perm(x, y, 0x7623 ^ (y & 0x3333)));
  unsigned sh = (unsigned)(x64 >> 32) & 63;
  OI(__funnelshift_l(x, y, sh)); OI(__funnelshift_r(x, y, sh));
  OI(__funnelshift_lc(x, y, sh)); OI(__funnelshift_rc(x, y, sh));
  unsigned rot = 1 + (y & 30);
  OI((x << rot) | (x >> (32 - rot))); OI((x64 >> (rot + 3)) | (x64 << (64 - rot - 3)));
  unsigned pos = (y >> 16) & 31, len = 1 + (y >> 24) % (32 - pos);
  OI((x >> pos) & (len == 32 ? ~0u : (1u << len) - 1));
  OI((int)(x << (32 - pos - len)) >> (32 - len));
  unsigned pos64 = (y >> 8) & 63, len64 = 1 + (y >> 20) % (63 - (pos64 > 62 ? 62 : pos64));
  OI((x64 >> pos64) & ((1ull << len64) - 1));
  unsigned long long m64 = ((1ull << len64) - 1) << pos64;
  OI((x64 & ~m64) | ((y64 << pos64) & m64));
  unsigned m = (len == 32 ? ~0u : (1u << len) - 1) << pos;
  OI((x & ~m) | ((y << pos) & m));
  OI((x & y) | (~x & (y ^ 0x5a5a5a5a))); OI(x ^ (y & ~x) ^ (x >> 7));
  OI(__sad((int)x, (int)y, 5u)); OI(__usad(x, y, 9u));
  OI(__dp4a((int)x, (int)y, 1000)); OI(__dp2a_lo(x, y, 7u));
  OI(x ? 31 - __clz((int)x) : -1); OI(x64 ? 63 - __clzll((long long)x64) : -1);
  OI((unsigned char)(x >> 3) | ((unsigned short)y << 5));
  OI((long long)(signed char)x); OI((long long)(short)y); OI((unsigned long long)(unsigned short)x);
}
]]

-- single precision: IEEE operations, comparisons (NaN included),
-- classification, rounding and conversions
local FLOATS = [[
KERNEL(floats) {
  PAIR;
  float x = __uint_as_float((unsigned)X), y = __uint_as_float((unsigned)Y);
  OF(x + y); OF(x - y); OF(x * y); OF(x / y); OF(sqrtf(x)); OF(fmaf(x, y, x)); OF(fmaf(x, y, -1.0f));
  OF(1.0f / x); OF(__fadd_rn(x, y)); OF(__fmul_rn(x, y)); OF(__frcp_rn(x)); OF(__fsqrt_rn(x));
  OI(x < y); OI(x <= y); OI(x > y); OI(x >= y); OI(x == y); OI(x != y); OI(!(x < y)); OI(!(x >= y));
  OI(isnan(x)); OI(isinf(x)); OI(isfinite(x)); OI(signbit(x) != 0); OI(isnan(x + y));
  ZF(fminf(x, y)); ZF(fmaxf(x, y)); OF(copysignf(x, y)); OF(fabsf(x)); OF(-x);
  OF(floorf(x)); OF(ceilf(x)); OF(truncf(x)); OF(roundf(x)); OF(rintf(x)); ZF(__saturatef(x));
  bool r31 = fabsf(x) < 2.1e9f;
  OI(r31 ? __float2int_rn(x) : 7); OI(r31 ? __float2int_rz(x) : 7); OI(r31 ? __float2int_rd(x) : 7);
  OI(r31 ? __float2int_ru(x) : 7); OI(r31 ? (int)x : 7); OI(r31 && x > -1.0f ? (unsigned)x : 7);
  OI(fabsf(x) < 9e18f ? (long long)x : 7);
  OF(__int2float_rn((int)Y)); OF(__int2float_rz((int)Y)); OF((float)(long long)Y);
  OF((float)(unsigned long long)Y); OF((float)(unsigned)Y); OF((float)(short)Y);
  OD((double)x); OD((double)x * (double)y);
}
]]

-- double precision, and conversions to and from it
local DOUBLES = [[
KERNEL(doubles) {
  PAIR;
  double x = __longlong_as_double(X), y = __longlong_as_double(Y);
  OD(x + y); OD(x - y); OD(x * y); OD(x / y); OD(sqrt(x)); OD(fma(x, y, x)); OD(fma(x, y, -1.0));
  OD(1.0 / x); OD(__dadd_rn(x, y)); OD(__dmul_rn(x, y));
  OI(x < y); OI(x <= y); OI(x > y); OI(x >= y); OI(x == y); OI(x != y); OI(!(x < y)); OI(!(x >= y));
  OI(isnan(x)); OI(isinf(x)); OI(isfinite(x)); OI(signbit(x) != 0);
  ZD(fmin(x, y)); ZD(fmax(x, y)); OD(copysign(x, y)); OD(fabs(x)); OD(-x);
  OD(floor(x)); OD(ceil(x)); OD(trunc(x)); OD(round(x)); OD(rint(x));
  OF((float)x); OF(__double2float_rd(x)); OF(__double2float_ru(x)); OF(__double2float_rz(x));
  OF(__double2float_rd(x / y)); OF(__double2float_ru(x / y));
  bool r31 = fabs(x) < 2.1e9, r63 = fabs(x) < 9e18;
  OI(r31 ? (int)x : 7); OI(r63 ? (long long)x : 7); OI(r63 ? __double2ll_rn(x) : 7);
  OI(r31 && x > -1.0 ? (unsigned)x : 7);
  OD((double)Y); OD((double)(unsigned long long)Y); OD((double)(int)Y); OD(__ll2double_rz(Y));
  OD((double)(float)y);
}
]]

-- the math library (within 2 ulp) and the approximate intrinsics
local MATH = [[
KERNEL(mathf) {
  PAIR;
  float x = __uint_as_float((unsigned)X), y = __uint_as_float((unsigned)Y);
  MF(sinf(x)); MF(cosf(x)); MF(tanf(x)); MF(expf(x)); MF(exp2f(x)); MF(logf(x)); MF(log2f(x));
  MF(log10f(x)); MF(log1pf(x)); MF(expm1f(x)); MF(powf(x, y)); MF(erff(x)); MF(erfcf(x));
  MF(tanhf(x)); MF(atanf(x)); MF(asinf(x)); MF(acosf(x)); MF(atan2f(x, y)); MF(cbrtf(x));
  MF(hypotf(x, y)); MF(sinhf(x)); MF(coshf(x)); MF(fmodf(x, y)); MF(rsqrtf(x));
  bool small = fabsf(x) < 50.0f;
  AF(small ? __expf(x) : 0.0f); AF(small ? __sinf(x) : 0.0f); AF(small ? __cosf(x) : 0.0f);
  AF(x > 1e-30f ? __logf(x) : 0.0f); AF(fabsf(y) > 1e-30f && fabsf(y) < 1e30f ? __fdividef(x, y) : 0.0f);
}
KERNEL(mathd) {
  PAIR;
  double x = __longlong_as_double(X), y = __longlong_as_double(Y);
  MD(sin(x)); MD(cos(x)); MD(tan(x)); MD(exp(x)); MD(exp2(x)); MD(log(x)); MD(log2(x)); MD(log10(x));
  MD(log1p(x)); MD(expm1(x)); MD(pow(x, y)); MD(erf(x)); MD(erfc(x)); MD(tanh(x)); MD(atan(x));
  MD(asin(x)); MD(atan2(x, y)); MD(cbrt(x)); MD(hypot(x, y)); MD(sinh(x)); MD(fmod(x, y));
}
]]

-- control flow: jump tables, recursion, calls returning structures, local
-- arrays indexed at run time
local CONTROL = [[
struct rec { int a; double b; char c; long long d[3]; };
__device__ __noinline__ rec make_rec(int i, double v) {
  rec r;
  r.a = i * 3 - 7; r.b = v / 4; r.c = (char)('A' + i % 26);
  for (int k = 0; k < 3; k++) r.d[k] = (long long)i << (k * 9);
  return r;
}
__device__ __noinline__ long long fib(int k) { return k < 2 ? k : fib(k - 1) + fib(k - 2); }
__device__ __noinline__ int digits(unsigned long long v, int *buf, int at) {
  if (v < 10) { buf[at] = (int)v; return at + 1; }
  int n = digits(v / 10, buf, at);
  buf[n] = (int)(v % 10);
  return n + 1;
}
__device__ __noinline__ int pick(int v, int w) {
  switch (v) {
    case 0: return w + 11;   case 1: return w * 3;     case 2: return w - 40;  case 3: return w ^ 0x55;
    case 4: return w << 2;   case 5: return ~w;        case 6: return w / 3;   case 7: return w % 5;
    case 8: return w + 1000; case 9: return -w;        case 10: return w & 12; case 11: return w | 64;
    case 12: return w * w;   case 13: return w >> 1;   case 14: return 77;     case 15: return w - 1;
    case 16: return w + 2;   case 17: return w * 7;    case 18: return 3 - w;  case 19: return w * 100;
    default: return -12345;
  }
}
KERNEL(control) {
  PAIR;
  int w = (int)(X & 0xffff) - 300;
  OI(pick((int)((unsigned long long)Y % 23), w)); OI(pick((int)(X & 31), (int)Y));
  rec r = make_rec((int)(X & 1023), (double)Y);
  OI(r.a); OD(r.b); OI(r.c); OI(r.d[0]); OI(r.d[1]); OI(r.d[2]);
  OI(fib((int)(X & 15)));
  int buf[24];
  int nd = digits((unsigned long long)X, buf, 0);
  OI(nd); OI(buf[(unsigned long long)Y % nd]); OI(buf[nd - 1]);
  int loc[37];
  for (int i = 0; i < 37; i++) loc[i] = (int)((i * 2654435761u) ^ (unsigned)X);
  for (int i = 0; i < 37; i++)            /* a sort of the local array, indexes from the data */
    for (int j = i + 1; j < 37; j++)
      if (loc[j] < loc[i]) { int s = loc[i]; loc[i] = loc[j]; loc[j] = s; }
  OI(loc[0]); OI(loc[36]); OI(loc[(unsigned long long)Y % 37]);
  long long acc = 0;
  for (int i = 0; i < (int)(Y & 63); i++) acc = acc * 31 + (i ^ X);
  OI(acc);
}
]]

-- the values every pair is made of
local function fbits(x) return (string.unpack("<I4", string.pack("<f", x))) end
local function dbits(x) return (string.unpack("<i8", string.pack("<d", x))) end
local INT_INPUTS = {0, 1, -1, 2, -7, 7, 127, -128, 255, 32767, -32768, 65535, 0x7fffffff, -0x80000000,
                    0xffffffff, 0x0123456789abcdef, math.mininteger, math.maxinteger, 1000003, -3,
                    0x5555aaaa3333cccc, 0x100000000, 1 << 62, 0x00ff00ff00ff00ff}
local FLOAT_VALUES = {0.0, -0.0, 1.0, -1.0, 0.1, 1.5, 2.5, -2.5, 3.0, 1e-3, 1e30, -1e30, 1e-40, 16777217.0,
                      2147483520.0, 3e9, -3e9, 0.5, 7.75, -0.49999997, 1 / 0, -1 / 0, 0 / 0}
local DOUBLE_VALUES = {0.0, -0.0, 1.0, -1.0, 0.1, 1.5, 2.5, -2.5, 3.0, 1e-3, 1e300, -1e300, 5e-324,
                       9007199254740993.0, 2147483647.5, 3e9, -3e9, 0.5, 1 / 3, -0.49999999999999994,
                       1 / 0, -1 / 0, 0 / 0, 123456.789}
local MATHF_VALUES = {0.0, -0.0, 0.5, -0.5, 1.0, 2.5, -3.75, 10.0, 1e-3, 100.0, -30.0, 1e30, 0.9999,
                      1e-40, 1 / 0, 0 / 0, 0.7853982, 3.1415927}
local MATHD_VALUES = {0.0, -0.0, 0.5, -0.5, 1.0, 2.5, -3.75, 10.0, 1e-3, 100.0, -30.0, 1e300, 0.9999,
                      5e-324, 1 / 0, 0 / 0, 0.78539816339744828, 3.1415926535897931, 1e22}

-- the kernels' heads (luacuda reads them from the source, so not a macro)
local function expand(src)
  return (src:gsub("KERNEL%((%w+)%)", 'extern "C" __global__ void %1(const long long *in, int n, long long *out, long long *kind)'))
end

local function map(t, f)
  local r = {}
  for i, v in ipairs(t) do r[i] = f(v) end
  return r
end

-- The child's program: compile, run kernel over every pair of inputs, print
-- the words and their kinds.
local function differential_code(src, name, inputs)
  local n = #inputs
  return ([==[
local l = require "luacuda"
local m = l.compile(%q)
local inputs = {%s}
local n = %d
local slots = 192
local inp = l.to_device(inputs, nil, {dtype = "int64"})
local out = l.device_array(n * n * slots, "int64")
local kind = l.device_array(n * n * slots, "int64")
out:fill(0)
kind:fill(0)
m[%q][{(n * n + 63) // 64, 64}](inp, n, out, kind)
l.synchronize()
io.write("OUT ", table.concat(out:totable(), " "), "\n")
io.write("KIND ", table.concat(kind:totable(), " "), "\n")
]==]):format(COMMON .. expand(src), table.concat(map(inputs, function(v) return ("%d"):format(v) end), ", "), n, name)
end

local function words(out, tag, err)
  local line = out:match(tag .. " ([^\n]*)")
  assert(line, "no " .. tag .. " line; stdout:\n" .. out:sub(1, 2000) .. "\nstderr:\n" .. err:sub(1, 4000))
  local r = {}
  for w in line:gmatch("%S+") do r[#r + 1] = math.tointeger(tonumber(w)) end
  return r
end

local function is_nan32(b) return (b & 0x7f800000) == 0x7f800000 and (b & 0x7fffff) ~= 0 end
local function is_nan64(b) return (b & 0x7ff0000000000000) == 0x7ff0000000000000 and (b & 0xfffffffffffff) ~= 0 end
local function ord32(b)
  b = b & 0xffffffff
  return b & 0x80000000 ~= 0 and -(b & 0x7fffffff) or b
end
local function ord64(b) return b < 0 and -(b & math.maxinteger) or b end
local function f32(b) return (string.unpack("<f", string.pack("<I4", b & 0xffffffff))) end

-- whether fake and sim agree on a word of kind k
local function agree(k, a, b)
  if a == b then return true end
  if k == 7 and a & 0x7fffffff == 0 and b & 0x7fffffff == 0 then return true end   -- +0, -0
  if k == 8 and (a << 1) == 0 and (b << 1) == 0 then return true end
  if k == 7 then k = 2 elseif k == 8 then k = 3 end
  if k == 2 or k == 4 or k == 6 then
    if is_nan32(a & 0xffffffff) and is_nan32(b & 0xffffffff) then return true end
    if k == 4 then return math.abs((ord32(a) + 0.0) - ord32(b)) <= 2 end
    if k == 6 then
      local x, y = f32(a), f32(b)
      return math.abs(x - y) <= 1e-5 * math.max(1, math.abs(y))
    end
    return false
  elseif k == 3 or k == 5 then
    if is_nan64(a) and is_nan64(b) then return true end
    if k == 5 then return math.abs((ord64(a) + 0.0) - (ord64(b) + 0.0)) <= 2 end
  end
  return false
end

local KIND_NAMES = {"int", "float", "double", "float math (2 ulp)", "double math (2 ulp)", "approximate float",
                    "float (either zero)", "double (either zero)"}

-- Run kernel name of src on both, every pair of inputs; the fake's words,
-- checked against the simulator's.
local function differential(src, name, inputs, show)
  local code = differential_code(src, name, inputs)
  local fo, fe = child(code, FAKE_ENV)
  local so, se = child(code, SIM_ENV)
  local fake, fkind = words(fo, "OUT", fe), words(fo, "KIND", fe)
  local sim, skind = words(so, "OUT", se), words(so, "KIND", se)
  assert.equal(#sim, #fake)
  local bad, compared, n = {}, 0, #inputs
  for i = 1, #fake do
    assert(fkind[i] == skind[i], ("slot %d: kind %d on the fake, %d on the simulator"):format(i, fkind[i], skind[i]))
    if fkind[i] ~= 0 then
      compared = compared + 1
      if not agree(fkind[i], fake[i], sim[i]) then
        local t, slot = (i - 1) // 192, (i - 1) % 192
        bad[#bad + 1] = ("%s result %d (%s) of x=%s, y=%s: fake 0x%x, simulator 0x%x"):format(
          name, slot + 1, KIND_NAMES[fkind[i]], show(inputs[t % n + 1]), show(inputs[t // n + 1]), fake[i], sim[i])
      end
    end
  end
  assert(#bad == 0, #bad .. " mismatches:\n" .. table.concat(bad, "\n", 1, math.min(#bad, 30)))
  assert(compared > n * n * 10, "only " .. compared .. " results compared")
  return fake, compared
end

-- the PTX NVRTC makes of src, to check that it holds the instructions a
-- test means to cover
local function ptx_of(src)
  return require("luacuda").ptx(COMMON .. expand(src))
end
local function holds(ptx, list)
  for _, ins in ipairs(list) do
    assert(ptx:find(ins, 1, true), "the PTX has no " .. ins)
  end
end

local function hex(v) return ("0x%x"):format(v) end
local function fshow(b) return ("%.9g"):format(f32(b)) end
local function dshow(b) return ("%.17g"):format((string.unpack("<d", string.pack("<i8", b)))) end

describe("the fake driver's PTX interpreter", function()
  if not S.exists(FAKE) then
    it("needs the fake driver", function() pending("no " .. FAKE .. " (no cuda.h here)") end)
    return
  end
  if not require("luacuda").nvrtc_version() then
    it("needs NVRTC", function() pending("no NVRTC: the fake runs the PTX NVRTC makes") end)
    return
  end

  describe("computes what the simulator computes #heavy", function()
    it("for integer arithmetic of every width", function()
      holds(ptx_of(INTS), {"mul.hi.u32", "mul.hi.s32", "mul.hi.u64", "mul.hi.s64", "mul.wide.s32",
                           "mul.wide.u32", "div.s32", "rem.s32", "div.u64", "rem.s64", "div.u16", "mul.lo.s16",
                           "max.s64", "max.u64", "setp.lt.s16", "shr.s64", "shr.u64", "shl.b64", "cvt.s16.s8"})
      local fake = differential(INTS, "ints", INT_INPUTS, hex)
      -- and against values known here, for a few: x = 7 (input 6), y = -7 (input 5)
      local t = 4 * #INT_INPUTS + 5            -- x = INT_INPUTS[6] = 7, y = INT_INPUTS[5] = -7
      local base = t * 192
      assert.equal(0, fake[base + 1])         -- (signed char)(7 + -7)
      assert.equal(14, fake[base + 2])        -- 7 - -7
      assert.equal(-49, fake[base + 3])       -- 7 * -7
      assert.equal(-1, fake[base + 4])        -- 7 / -7
      assert.equal(0, fake[base + 5])         -- 7 % -7
      assert.equal(-7, fake[base + 6])        -- min
    end)

    it("for bit operations", function()
      holds(ptx_of(BITS), {"popc.b32", "popc.b64", "clz.b32", "clz.b64", "brev.b32", "brev.b64", "prmt.b32",
                           "shf.l.wrap.b32", "shf.r.wrap.b32", "shf.l.clamp.b32", "shf.r.clamp.b32", "sad.s32",
                           "sad.u32", "dp4a.s32.s32", "dp2a.lo.u32.u32", "bfind.shiftamt.u32"})
      local fake = differential(BITS, "bits", INT_INPUTS, hex)
      -- x = 0x0123456789abcdef against itself (thread 15 * n + 15)
      local base = (15 * #INT_INPUTS + 15) * 192
      assert.equal(20, fake[base + 1])         -- __popc(0x89abcdef)
      assert.equal(32, fake[base + 2])         -- __popcll
      assert.equal(0, fake[base + 3])          -- __clz(0x89abcdef)
      assert.equal(7, fake[base + 4])          -- __clzll(0x0123...)
      assert.equal(0xf7b3d591, fake[base + 5]) -- __brev(0x89abcdef)
      assert.equal(1, fake[base + 7])          -- __ffs
    end)

    it("for single precision arithmetic, comparisons and conversions", function()
      holds(ptx_of(FLOATS), {"div.rn.f32", "sqrt.rn.f32", "fma.rn.f32", "rcp.rn.f32", "setp.lt.f32",
                             "setp.gtu.f32", "min.f32", "max.f32", "copysign.f32", "cvt.rni.s32.f32",
                             "cvt.rzi.s32.f32", "cvt.rmi.s32.f32", "cvt.rpi.s32.f32", "cvt.rz.f32.s32",
                             "cvt.rn.f32.u64", "cvt.f64.f32", "cvt.sat.f32.f32", "cvt.rzi.u32.f32", "add.rz.f32"})
      local fake = differential(FLOATS, "floats", map(FLOAT_VALUES, fbits), fshow)
      -- 2.5 (input 7) with 3.0 (input 9)
      local base = (8 * #FLOAT_VALUES + 6) * 192
      assert.equal(fbits(5.5), fake[base + 1])
      assert.equal(fbits(-0.5), fake[base + 2])
      assert.equal(fbits(7.5), fake[base + 3])
      assert.equal(fbits(2.5 / 3), fake[base + 4])
    end)

    it("for double precision arithmetic, comparisons and conversions", function()
      holds(ptx_of(DOUBLES), {"div.rn.f64", "sqrt.rn.f64", "fma.rn.f64", "cvt.rm.f32.f64", "cvt.rp.f32.f64",
                              "cvt.rz.f32.f64", "cvt.rn.f64.s64", "cvt.rn.f64.u64", "cvt.rz.f64.s64",
                              "cvt.rni.s64.f64", "cvt.rzi.s32.f64"})
      local fake = differential(DOUBLES, "doubles", map(DOUBLE_VALUES, dbits), dshow)
      local base = (8 * #DOUBLE_VALUES + 4) * 192   -- 0.1 with 3.0
      assert.equal(dbits(3.1), fake[base + 1])
      assert.equal(dbits(0.1 * 3), fake[base + 3])
      assert.equal(dbits(0.1 / 3), fake[base + 4])
    end)

    it("for the math library within 2 ulp, and the fast intrinsics", function()
      holds(ptx_of(MATH), {"ex2.approx", "lg2.approx", "sin.approx", "cos.approx", "div.approx", "rsqrt", "addc.cc.u32", "madc.hi.cc.u32",
                           "ld.local", "fma.rm.f32"})
      differential(MATH, "mathf", map(MATHF_VALUES, fbits), fshow)
      differential(MATH, "mathd", map(MATHD_VALUES, dbits), dshow)
    end)

    it("for jump tables, recursion, structures returned by calls and local arrays", function()
      holds(ptx_of(CONTROL), {"call.uni", "ld.param.b8", "st.param.f64", "ld.local.s32", "st.local.u32"})
      local fake = differential(CONTROL, "control", INT_INPUTS, hex)
      -- x = 1000003 (input 19), y = 0: pick(0, ...) = w + 11, fib(1000003 & 15 = 3) = 2
      local base = (0 * #INT_INPUTS + 18) * 192
      assert.equal((1000003 & 0xffff) - 300 + 11, fake[base + 1])
      assert.equal(2, fake[base + 9])
      assert.equal(7, fake[base + 10])          -- 1000003 has 7 digits
    end)
  end)

  -- a child on the fake running code (after PRELUDE); its stdout, stderr
  -- and whether it printed "ok" at the end
  local PRELUDE = [==[
local l = require "luacuda"
local function eq(want, got, what)
  if want ~= got then error(("%s: want %s, got %s"):format(what or "value", tostring(want), tostring(got)), 2) end
end
local function fails(pattern, f, ...)
  local ok, e = pcall(f, ...)
  if ok then error("no error, expected " .. pattern, 2) end
  if not tostring(e):find(pattern, 1, true) then error("error " .. tostring(e) .. " lacks " .. pattern, 2) end
  return tostring(e)
end
]==]
  local function on_fake(code, env)
    local out, err = child(PRELUDE .. code .. "\nprint('ok')\n", FAKE_ENV .. " " .. (env or ""))
    assert(out:find("ok\n$"), "stdout:\n" .. out .. "\nstderr:\n" .. err)
    return out, err
  end

  describe("computes what CUDA defines", function()
    it("for 64-bit and wrapping atomics", function()
      on_fake([==[
        local m = l.compile([[
        extern "C" __global__ void atoms(unsigned long long *u, long long *s, unsigned *c, float *f,
                                         double *d, unsigned *incs) {
          int t = blockIdx.x * blockDim.x + threadIdx.x;
          atomicAdd(&u[0], (1ull << 40) + t);
          unsigned long long old = u[1], seen;
          do { seen = old; old = atomicCAS(&u[1], seen, seen + (unsigned long long)t * t); } while (old != seen);
          atomicOr(&u[2], 1ull << (t % 63));
          atomicAnd(&u[3], ~(1ull << (t % 64)));
          atomicXor(&u[4], 3ull << (t % 62));
          atomicMax(&s[0], (long long)(t - 128) * 1000000007LL);
          atomicMin(&s[1], (long long)(t - 128) * 1000000007LL);
          atomicMax(&s[2], -(long long)t - 5);
          incs[t] = atomicInc(&c[0], 9);
          atomicDec(&c[1], 9);
          atomicSub(&c[2], 3u);
          if (t == 7) { float o = atomicExch(&f[0], 2.5f); f[2] = o; }
          atomicAdd(&f[1], 0.5f);
          atomicAdd(&d[0], 0.25);
          if (t == 3) s[3] = (long long)atomicExch(&u[5], 0x123456789abcdefull);
        }
        ]])
        local u = l.to_device({0, 0, 0, math.maxinteger, 0, 42}, nil, {dtype = "uint64"})
        local s = l.to_device({math.mininteger, math.maxinteger, math.mininteger, 0}, nil, {dtype = "int64"})
        local c = l.to_device({0, 0, 1000}, nil, {dtype = "uint32"})
        local f = l.to_device({1.25, 0, 0}, nil, {dtype = "float32"})
        local d = l.to_device({1}, nil, {dtype = "float64"})
        local incs = l.device_array(256, "uint32")
        m.atoms[{4, 64}](u, s, c, f, d, incs)
        local U, S, C, F, D = u:totable(), s:totable(), c:totable(), f:totable(), d:totable()
        eq(256 * (1 << 40) + 255 * 256 // 2, U[1], "atomicAdd u64")
        eq(255 * 256 * 511 // 6, U[2], "atomicCAS u64 loop")
        eq(math.maxinteger, U[3], "atomicOr u64")
        eq(0, U[4], "atomicAnd u64")
        local x = 0
        for t = 0, 255 do x = x ~ (3 << (t % 62)) end
        eq(x, U[5], "atomicXor u64")
        eq(0x123456789abcdef, U[6], "atomicExch u64")
        eq(42, S[4], "atomicExch u64's old value")
        eq(127 * 1000000007, S[1], "atomicMax s64")
        eq(-128 * 1000000007, S[2], "atomicMin s64")
        eq(-5, S[3], "atomicMax s64 of negatives")
        eq(256 % 10, C[1], "atomicInc wraps at 9")
        eq((-256) % 10, C[2], "atomicDec wraps from 0 to 9")
        eq(1000 - 3 * 256, C[3], "atomicSub")
        eq(2.5, F[1], "atomicExch float")
        eq(128.0, F[2], "atomicAdd float")
        eq(1.25, F[3], "atomicExch float's old value")
        eq(65.0, D[1], "atomicAdd double")
        -- atomicInc's old values: 0..9 over and over, 26 of 0-5 and 25 of 6-9
        local n = {}
        for _, v in ipairs(incs:totable()) do n[v] = (n[v] or 0) + 1 end
        for v = 0, 9 do eq(v < 6 and 26 or 25, n[v], "atomicInc returned " .. v) end
      ]==])
    end)

    it("flushes subnormals to zero where the PTX ISA says: setp/set.ftz, atom/red add.f32 on global memory (not shared), rcp/rsqrt.approx.ftz.f64", function()
      on_fake([==[
        local m = l.compile([[
        extern "C" __global__ void ftz(const float *x, const double *y, float *g, int *r, float *f,
                                       double *d) {
          __shared__ float s[2];
          float sub = x[0], zero = 0.0f;   // sub: 1e-40, a float subnormal
          int v;
          // comparisons: .ftz sees the subnormal as 0
          asm("{ .reg .pred p; setp.gt.ftz.f32 p, %1, %2; selp.s32 %0, 1, 0, p; }" : "=r"(v) : "f"(sub), "f"(zero)); r[0] = v;
          asm("{ .reg .pred p; setp.gt.f32 p, %1, %2; selp.s32 %0, 1, 0, p; }" : "=r"(v) : "f"(sub), "f"(zero)); r[1] = v;
          asm("set.gt.ftz.u32.f32 %0, %1, %2;" : "=r"(v) : "f"(sub), "f"(zero)); r[2] = v;
          asm("set.gt.u32.f32 %0, %1, %2;" : "=r"(v) : "f"(sub), "f"(zero)); r[3] = v;
          // additions to global memory flush inputs and results, with or without .ftz
          float old;
          asm volatile("atom.global.add.f32 %0, [%1], %2;" : "=f"(old) : "l"(g), "f"(sub) : "memory");
          f[0] = old;
          asm volatile("red.global.add.f32 [%0], %1;" :: "l"(g + 1), "f"(sub) : "memory");
          asm volatile("red.global.add.f32 [%0], %1;" :: "l"(g + 2), "f"(-x[1]) : "memory");
          asm volatile("atom.add.f32 %0, [%1], %2;" : "=f"(old) : "l"(g + 3), "f"(sub) : "memory");  // generic, global
          // to shared memory they do not
          s[0] = sub;
          s[1] = sub;
          __syncthreads();
          asm volatile("atom.shared.add.f32 %0, [%1], %2;"
                       : "=f"(old) : "r"((unsigned)__cvta_generic_to_shared(s)), "f"(sub) : "memory");
          f[1] = old;
          asm volatile("atom.add.f32 %0, [%1], %2;" : "=f"(old) : "l"(s + 1), "f"(sub) : "memory");  // generic, shared
          __syncthreads();
          f[2] = s[0];
          f[3] = s[1];
          // .ftz.f64 approximations: subnormal inputs and results are zeros
          double q;
          asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(q) : "d"(y[0])); d[0] = q;    // 1e308: 1e-308 is subnormal
          asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(q) : "d"(y[1])); d[1] = q;    // 2e-308: subnormal, +inf
          asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(q) : "d"(y[2])); d[2] = q;  // 1e-310: subnormal, +inf
          asm("rsqrt.approx.f64 %0, %1;" : "=d"(q) : "d"(y[2])); d[3] = q;      // without .ftz: 1e155
          asm("rcp.rn.f64 %0, %1;" : "=d"(q) : "d"(y[0])); d[4] = q;
        }
        ]])
        local SUB = 1e-40
        local x = l.to_device({SUB, 2.0 ^ -126}, nil, {dtype = "float32"})
        local y = l.to_device({1e308, 2e-308, 1e-310}, nil, {dtype = "float64"})
        -- g[3]: 1.5 * 2^-126 less 2^-126 is a subnormal result
        local g = l.to_device({0, SUB, 1.5 * 2.0 ^ -126, 0}, nil, {dtype = "float32"})
        local r = l.device_array(4, "int32")
        local f = l.device_array(4, "float32")
        local d = l.device_array(5, "float64")
        m.ftz[{1, 1}](x, y, g, r, f, d)
        local R, F, D, G = r:totable(), f:totable(), d:totable(), g:totable()
        local sub = x:totable()[1]             -- 1e-40 as a float
        eq(0, R[1], "setp.gt.ftz.f32 of a subnormal and 0")
        eq(1, R[2], "setp.gt.f32 of a subnormal and 0")
        eq(0, R[3], "set.gt.ftz.u32.f32 of a subnormal and 0")
        eq(0xffffffff, R[4] & 0xffffffff, "set.gt.u32.f32 of a subnormal and 0")
        eq(0.0, G[1], "atom.global.add.f32 of a subnormal to 0")
        eq(0.0, F[1], "atom.global.add.f32's old value")
        eq(0.0, G[2], "red.global.add.f32 of a subnormal to a subnormal")
        eq(0.0, G[3], "red.global.add.f32 with a subnormal result")
        eq(0.0, G[4], "atom.add.f32 (generic) of a subnormal to global 0")
        eq(sub, F[2], "atom.shared.add.f32's old value")
        eq(2 * sub, F[3], "atom.shared.add.f32 of a subnormal to a subnormal")
        eq(2 * sub, F[4], "atom.add.f32 (generic) of a subnormal to a shared subnormal")
        eq(0.0, D[1], "rcp.approx.ftz.f64 with a subnormal result")
        eq(math.huge, D[2], "rcp.approx.ftz.f64 of a subnormal")
        eq(math.huge, D[3], "rsqrt.approx.ftz.f64 of a subnormal")
        assert(D[4] > 1e154 and D[4] < 1e156, "rsqrt.approx.f64 of 1e-310: " .. D[4])
        assert(D[5] > 0 and D[5] < 2.3e-308, "rcp.rn.f64 of 1e308: " .. D[5])
      ]==])
    end)

    it("for half precision conversions and arithmetic (cuda_fp16.h)", function()
      on_fake([==[
        local m = l.compile([[
        #include <cuda_fp16.h>
        extern "C" __global__ void halves(const float *x, unsigned short *h, float *back) {
          int i = threadIdx.x;
          h[i] = __half_as_ushort(__float2half(x[i]));
          h[16 + i] = __half_as_ushort(__float2half_rz(x[i]));
          h[32 + i] = __half_as_ushort(__float2half_ru(x[i]));
          h[48 + i] = __half_as_ushort(__float2half_rd(x[i]));
          back[i] = __half2float(__float2half(x[i]));
          if (i == 0) {
            h[64] = __half_as_ushort(__hadd(__float2half(x[7]), __float2half(x[8])));
            h[65] = __half_as_ushort(__hmul(__float2half(x[9]), __float2half(x[10])));
            h[66] = __half_as_ushort(__hfma(__float2half(x[9]), __float2half(x[10]), __float2half(x[0])));
          }
        }
        ]])
        local xs = {1.0, 0.1, 65504.0, 65520.0, -2.5, 1e-7, 1 / 3, 1.5, 2.25, 3.0, 0.5, -0.1, 0, 0, 0, 0}
        local x = l.to_device(xs, nil, {dtype = "float32"})
        local h = l.device_array(67, "uint16")
        local back = l.device_array(16, "float32")
        m.halves[{1, 16}](x, h, back)
        local H, B = h:totable(), back:totable()
        local rn = {0x3c00, 0x2e66, 0x7bff, 0x7c00, 0xc100, 0x0002, 0x3555, 0x3e00, 0x4080, 0x4200, 0x3800, 0xae66}
        for i, v in ipairs(rn) do eq(v, H[i], ("__float2half(%.9g)"):format(xs[i])) end
        eq(0x2e66, H[17 + 1], "__float2half_rz(0.1)")
        eq(0x7bff, H[17 + 3], "__float2half_rz(65520)")
        eq(0x2e67, H[33 + 1], "__float2half_ru(0.1)")
        eq(0x0002, H[33 + 5], "__float2half_ru(1e-7)")
        eq(0xae67, H[49 + 11], "__float2half_rd(-0.1)")
        eq(0x0001, H[49 + 5], "__float2half_rd(1e-7)")
        eq(0.333251953125, B[7], "__half2float(__float2half(1/3))")
        eq(1 / 0, B[4], "65520 rounds to infinity")
        eq(0x4380, H[65], "__hadd(1.5, 2.25)")
        eq(0x3e00, H[66], "__hmul(3, 0.5)")
        eq(0x4100, H[67], "__hfma(3, 0.5, 1)")
      ]==])
    end)

    -- cuda_fp16.h and cuda_bf16.h compute through these (their corrections
    -- of approximate results: set and fma on halves)
    it("for half and bfloat16 instructions: set, setp, max.NaN, paired cvt, fused and directed rounding", function()
      on_fake([==[
        local m = l.compile([[
        extern "C" __global__ void h16(const unsigned short *h, const float *f, unsigned *o, long long *ll) {
          unsigned short r; unsigned w;
          asm("set.eq.f16.f16 %0, %1, %2;" : "=h"(r) : "h"(h[0]), "h"(h[0])); o[0] = r;
          asm("set.eq.f16.f16 %0, %1, %2;" : "=h"(r) : "h"(h[0]), "h"(h[1])); o[1] = r;
          unsigned pa = h[0] | (unsigned)h[1] << 16, pb = h[1] | (unsigned)h[1] << 16;
          asm("set.lt.f16x2.f16x2 %0, %1, %2;" : "=r"(w) : "r"(pa), "r"(pb)); o[2] = w;
          asm("set.lt.u32.f16x2 %0, %1, %2;" : "=r"(w) : "r"(pa), "r"(pb)); o[3] = w;
          asm("{ .reg .pred p, q; setp.lt.f16x2 p|q, %1, %2; selp.u32 %0, 1, 0, p; }" : "=r"(w) : "r"(pb), "r"(pa)); o[4] = w;
          asm("{ .reg .pred p, q; setp.lt.f16x2 p|q, %1, %2; selp.u32 %0, 1, 0, q; }" : "=r"(w) : "r"(pb), "r"(pa)); o[5] = w;
          asm("max.NaN.f16 %0, %1, %2;" : "=h"(r) : "h"(h[0]), "h"(h[2])); o[6] = r;
          asm("max.f16 %0, %1, %2;" : "=h"(r) : "h"(h[0]), "h"(h[2])); o[7] = r;
          asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(f[0]), "f"(f[1])); o[8] = w;
          asm("fma.rn.f16 %0, %1, %2, %3;" : "=h"(r) : "h"(h[3]), "h"(h[4]), "h"(h[5])); o[9] = r;
          unsigned x2 = h[3] | (unsigned)h[3] << 16, y2 = h[4] | (unsigned)h[4] << 16, z2 = h[5] | (unsigned)h[5] << 16;
          asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(w) : "r"(x2), "r"(y2), "r"(z2)); o[10] = w;
          asm("fma.rn.bf16 %0, %1, %2, %3;" : "=h"(r) : "h"(h[6]), "h"(h[7]), "h"(h[8])); o[11] = r;
          asm("cvt.rz.bf16.f32 %0, %1;" : "=h"(r) : "f"(f[2])); o[12] = r;
          asm("cvt.rp.bf16.f32 %0, %1;" : "=h"(r) : "f"(f[2])); o[13] = r;
          asm("cvt.rm.bf16.f32 %0, %1;" : "=h"(r) : "f"(-f[2])); o[14] = r;
          asm("fma.rn.relu.f16 %0, %1, %2, %3;" : "=h"(r) : "h"(h[9]), "h"(h[0]), "h"(h[9])); o[15] = r;
          asm("add.sat.f16 %0, %1, %2;" : "=h"(r) : "h"(h[9]), "h"(h[9])); o[16] = r;
          long long v;
          asm("cvt.rni.s64.f16 %0, %1;" : "=l"(v) : "h"(h[2])); ll[0] = v;
          asm("cvt.rzi.s32.f32 %0, %1;" : "=r"(w) : "f"(f[3])); ll[1] = (int)w;
        }
        ]])
        -- 1, 2, NaN; 2^-11 + 2^-21, 1 - 2^-10, 1 + 2^-10; bfloat16 9, 29, 2^-100; -0
        local hs = {0x3c00, 0x4000, 0x7e00, 0x1001, 0x3bfe, 0x3c01, 0x4110, 0x41e8, 0x0d80, 0x8000}
        local fs = {1.5, -0.25, 1.0 + 3 * 2.0 ^ -9, 0 / 0}
        local o, ll = l.device_array(17, "uint32"), l.device_array(2, "int64")
        m.h16[{1, 1}](l.to_device(hs, nil, {dtype = "uint16"}), l.to_device(fs, nil, {dtype = "float32"}), o, ll)
        local O, LL = o:totable(), ll:totable()
        eq(0x3c00, O[1], "set.eq.f16 writes 1.0")
        eq(0, O[2], "set.eq.f16 false")
        eq(0x3c00, O[3], "set.lt.f16x2: 1 < 2 in the low half, 2 < 2 not in the high")
        eq(0xffff, O[4], "set.lt.u32.f16x2")
        eq(0, O[5], "setp.lt.f16x2's p (low halves: 2 < 1)")
        eq(0, O[6], "setp.lt.f16x2's q (high halves: 2 < 2)")
        eq(true, O[7] & 0x7c00 == 0x7c00 and O[7] & 0x3ff ~= 0, "max.NaN.f16 of a NaN is NaN")
        eq(0x3c00, O[8], "max.f16 of a NaN is the other")
        eq(0x3e00b400, O[9], "cvt.rn.f16x2.f32 puts its first source in the upper half")
        -- (2^-11 + 2^-21)(1 - 2^-10) + 1 + 2^-10 is just below a tie: a float in between would round up
        eq(0x3c01, O[10], "fma.rn.f16 rounds once")
        eq(0x3c013c01, O[11], "fma.rn.f16x2 rounds once")
        -- 9 * 29 = 261 lies halfway between 260 and 262; + 2^-100 decides: 262
        eq(0x4383, O[12], "fma.rn.bf16 rounds once")
        eq(0x3f80, O[13], "cvt.rz.bf16.f32")
        eq(0x3f81, O[14], "cvt.rp.bf16.f32")
        eq(0xbf81, O[15], "cvt.rm.bf16.f32")
        eq(0x0000, O[16], "fma.rn.relu.f16 of -0 is +0")
        eq(0x0000, O[17], "add.sat.f16 of -0 is +0")
        eq(math.mininteger, LL[1], "cvt.rni.s64.f16 of NaN")
        eq(0, LL[2], "cvt.rzi.s32.f32 of NaN")
      ]==])
    end)

    it("for instructions NVRTC emits only from inline assembly (brx.idx, testp, bfe, bfi, min, max, addc)", function()
      on_fake([==[
        local m = l.compile([[
        __device__ __noinline__ int table(int i) {
          int r;
          asm volatile("{\n\t.reg .pred p;\n\t"
                       "ts: .branchtargets L0, L1, L2, L3;\n\t"
                       "brx.idx %1, ts;\n"
                       "L0: mov.u32 %0, 100; bra.uni DONE;\n"
                       "L1: mov.u32 %0, 211; bra.uni DONE;\n"
                       "L2: mov.u32 %0, 322; bra.uni DONE;\n"
                       "L3: mov.u32 %0, 433;\n"
                       "DONE:\n\t}" : "=r"(r) : "r"(i));
          return r;
        }
        __device__ int testp(float x) {
          int r = 0, b;
          asm("{ .reg .pred p; testp.finite.f32 p, %1; selp.s32 %0, 1, 0, p; }" : "=r"(b) : "f"(x)); r |= b;
          asm("{ .reg .pred p; testp.infinite.f32 p, %1; selp.s32 %0, 2, 0, p; }" : "=r"(b) : "f"(x)); r |= b;
          asm("{ .reg .pred p; testp.number.f32 p, %1; selp.s32 %0, 4, 0, p; }" : "=r"(b) : "f"(x)); r |= b;
          asm("{ .reg .pred p; testp.notanumber.f32 p, %1; selp.s32 %0, 8, 0, p; }" : "=r"(b) : "f"(x)); r |= b;
          asm("{ .reg .pred p; testp.normal.f32 p, %1; selp.s32 %0, 16, 0, p; }" : "=r"(b) : "f"(x)); r |= b;
          asm("{ .reg .pred p; testp.subnormal.f32 p, %1; selp.s32 %0, 32, 0, p; }" : "=r"(b) : "f"(x)); r |= b;
          return r;
        }
        extern "C" __global__ void asms(const int *in, const float *fx, long long *out) {
          int i = threadIdx.x;
          unsigned x = (unsigned)in[i], y = (unsigned)in[(i + 1) % 8];
          long long *o = out + i * 16;
          o[0] = table(i % 4);
          o[1] = testp(fx[i]);
          unsigned r; int sr; unsigned long long r64;
          asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(i * 3), "r"(i + 2)); o[2] = r;
          asm("bfe.s32 %0, %1, %2, %3;" : "=r"(sr) : "r"(x), "r"(i * 3), "r"(i + 2)); o[3] = sr;
          asm("bfe.u64 %0, %1, %2, %3;" : "=l"(r64) : "l"((unsigned long long)x << 20), "r"(i * 5), "r"(i * 4)); o[4] = (long long)r64;
          asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(y), "r"(x), "r"(i * 3), "r"(i + 2)); o[5] = r;
          asm("min.s32 %0, %1, %2;" : "=r"(sr) : "r"(x), "r"(y)); o[6] = sr;
          asm("max.u32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y)); o[7] = r;
          asm("{ .reg .u32 lo; add.cc.u32 lo, %1, %2; addc.u32 %0, 0, 0; }" : "=r"(r) : "r"(x), "r"(y)); o[8] = r;
          asm("{ .reg .u32 lo; sub.cc.u32 lo, %1, %2; subc.u32 %0, 0, 0; }" : "=r"(r) : "r"(x), "r"(y)); o[9] = r;
          asm("mul24.hi.u32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y)); o[10] = r;
          asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(0x8b5a)); o[11] = r;
        }
        ]])
        local ins = {0x12345678, -1, 0x7f00ff80, 5, -123456, -0x80000000, 0x0f0f0f0f, 99}
        local fs = {1.5, 1 / 0, -1 / 0, 0 / 0, 1e-40, 0.0, -3e38, 1e-45}
        local inp = l.to_device(ins, nil, {dtype = "int32"})
        local fx = l.to_device(fs, nil, {dtype = "float32"})
        local out = l.device_array(8 * 16, "int64")
        m.asms[{1, 8}](inp, fx, out)
        local o = out:totable()
        local classes = {1 | 4 | 16, 2 | 4, 2 | 4, 8, 1 | 4 | 32, 1 | 4, 1 | 4 | 16, 1 | 4 | 32}
        for i = 0, 7 do
          local x, y = ins[i + 1] & 0xffffffff, ins[(i + 1) % 8 + 1] & 0xffffffff
          eq(({100, 211, 322, 433})[i % 4 + 1], o[i * 16 + 1], "brx.idx " .. i)
          eq(classes[i + 1], o[i * 16 + 2], "testp of " .. fs[i + 1])
          local pos, len = i * 3, i + 2
          local field = (x >> pos) & ((1 << len) - 1)
          eq(field, o[i * 16 + 3], "bfe.u32 " .. i)
          local sfield = field
          if (field >> (len - 1)) & 1 == 1 then sfield = field - (1 << len) end
          eq(sfield, o[i * 16 + 4], "bfe.s32 " .. i)
          local x64 = x << 20
          local want64 = i == 0 and 0 or (x64 >> (i * 5)) & ((1 << (i * 4)) - 1)
          eq(want64, o[i * 16 + 5], "bfe.u64 " .. i)
          local mask = ((1 << len) - 1) << pos
          eq((x & ~mask | (y << pos) & mask) & 0xffffffff, o[i * 16 + 6], "bfi.b32 " .. i)
          local sx, sy = ins[i + 1], ins[(i + 1) % 8 + 1]
          eq(math.min(sx, sy), o[i * 16 + 7], "min.s32 " .. i)
          eq(math.max(x, y), o[i * 16 + 8], "max.u32 " .. i)
          eq((x + y) >> 32, o[i * 16 + 9], "add.cc/addc carry " .. i)
          eq(x < y and 0xffffffff or 0, o[i * 16 + 10], "sub.cc/subc borrow " .. i)
          eq((((x & 0xffffff) * (y & 0xffffff)) >> 16) & 0xffffffff, o[i * 16 + 11], "mul24.hi " .. i)
          -- prmt 0x8b5a (a nibble a byte, from the lowest): byte 0 = the sign of byte 2
          -- of {y,x} (0xa), byte 1 = byte 5 (y's byte 1), byte 2 = the sign of byte 3
          -- (0xb), byte 3 = the sign of byte 0 (0x8)
          local bytes = x | (y << 32)
          local function byte(k) return (bytes >> (8 * k)) & 0xff end
          local function sign(k) return byte(k) & 0x80 ~= 0 and 0xff or 0 end
          eq(sign(2) | byte(5) << 8 | sign(3) << 16 | sign(0) << 24, o[i * 16 + 12], "prmt " .. i)
        end
      ]==])
    end)
  end)

  -- A kernel that faults, in a child on the fake: the error synchronize
  -- raises, the one a later call raises (sticky, as on a GPU), and stderr.
  local function fault(src, launch)
    local out, err = on_fake(([==[
      local m = l.compile(%q)
      local d = l.to_device({1, 2, 3, 4, 5, 6, 7, 8}, nil, {dtype = "int32"})
      local o = l.device_array(64, "int32")
      %s
      local ok, e = pcall(l.synchronize)
      assert(not ok, "the kernel did not fail")
      print("FIRST " .. tostring(e))
      local ok2, e2 = pcall(function() return d:totable() end)
      assert(not ok2, "a call after the failure succeeded")
      print("LATER " .. tostring(e2))
      local ok3, e3 = pcall(l.device_array, 4, "int32")
      assert(not ok3, "an allocation after the failure succeeded")
    ]==]):format(src, launch))
    return out:match("FIRST ([^\n]*)"), out:match("LATER ([^\n]*)"), err
  end

  describe("reports a kernel's fault as a GPU does", function()
    it("a write one element past the end: CUDA_ERROR_ILLEGAL_ADDRESS, sticky, kernel and line named", function()
      local first, later, err = fault([[
        extern "C" __global__ void past_end(int *x, int n) { x[threadIdx.x] = threadIdx.x; if (threadIdx.x == 0) x[n] = 1; }
      ]], "m.past_end[{1, 8}](d, 8)")
      assert.truthy(first:find("CUDA_ERROR_ILLEGAL_ADDRESS", 1, true), first)
      assert.truthy(later:find("the CUDA context is unusable after an earlier error", 1, true), later)
      assert.truthy(later:find("CUDA_ERROR_ILLEGAL_ADDRESS", 1, true), later)
      assert.truthy(err:find("fake_cuda: past_end: an access of 4 bytes at 0x%x+, outside every allocation %(PTX line %d+ of past_end, block %(0,0,0%), thread %(0,0,0%)%)"), err)
    end)

    it("a float load one byte off its alignment: CUDA_ERROR_MISALIGNED_ADDRESS", function()
      local first, later, err = fault([[
        extern "C" __global__ void skewed(int *x, float *o) { o[0] = *(const float *)((const char *)x + 1 + threadIdx.x * 4); }
      ]], "m.skewed[{1, 1}](d, o:view('float32'))")
      assert.truthy(first:find("CUDA_ERROR_MISALIGNED_ADDRESS", 1, true), first)
      assert.truthy(later:find("CUDA_ERROR_MISALIGNED_ADDRESS", 1, true), later)
      assert.truthy(err:find("fake_cuda: skewed: an access of 4 bytes at 0x%x+, not aligned to its size %(PTX line %d+"), err)
    end)

    it("a shared array indexed one past its end", function()
      local first, _, err = fault([[
        extern "C" __global__ void shared_past(int *x, int n) {
          __shared__ int s[32];
          s[threadIdx.x] = x[threadIdx.x % 8];
          __syncthreads();
          x[0] = s[n];
        }
      ]], "m.shared_past[{1, 32}](d, 32)")
      assert.truthy(first:find("CUDA_ERROR_ILLEGAL_ADDRESS", 1, true), first)
      assert.truthy(err:find("a shared access of 4 bytes at offset 128, past the 128 bytes of the block's shared memory", 1, true), err)
    end)

    it("asm(\"trap;\"): CUDA_ERROR_LAUNCH_FAILED", function()
      local first, later, err = fault([[
        extern "C" __global__ void trapper(int *x) { if (x[threadIdx.x] == 3) asm volatile("trap;"); }
      ]], "m.trapper[{1, 8}](d)")
      assert.truthy(first:find("CUDA_ERROR_LAUNCH_FAILED", 1, true), first)
      assert.truthy(later:find("CUDA_ERROR_LAUNCH_FAILED", 1, true), later)
      assert.truthy(err:find("fake_cuda: trapper: trap (PTX line", 1, true), err)
      assert.truthy(err:find("thread (2,0,0)", 1, true), err)
    end)

    it("a failed assert: CUDA_ERROR_ASSERT, the assertion printed", function()
      local first, later, err = fault([[
        extern "C" __global__ void checker(int *x) { assert(x[threadIdx.x] < 6); }
      ]], "m.checker[{1, 8}](d)")
      assert.truthy(first:find("CUDA_ERROR_ASSERT", 1, true), first)
      assert.truthy(later:find("CUDA_ERROR_ASSERT", 1, true), later)
      assert.truthy(err:find("Assertion `x[threadIdx.x] < 6` failed.", 1, true), err)
      assert.truthy(err:find("checker: assertion `x[threadIdx.x] < 6` failed", 1, true), err)
    end)

    it("a deadlock between named barriers of different counts, instead of a hang", function()
      local first, _, err = fault([[
        extern "C" __global__ void stuck(int *x) {
          if (threadIdx.x < 32) asm volatile("bar.sync 1, 64;");   /* waits for 64, only 32 come */
          else __syncthreads();                                   /* the other 32: never all */
          x[0] = 1;
        }
      ]], "m.stuck[{1, 64}](d)")
      assert.truthy(first:find("CUDA_ERROR_LAUNCH_FAILED", 1, true), first)
      assert.truthy(err:find("a deadlock: this thread waits at a barrier", 1, true), err)
    end)

    it("a deadlock of a shuffle whose mask names lanes stuck at __syncthreads", function()
      local first, _, err = fault([[
        extern "C" __global__ void stuck_shfl(int *x) {
          int v = threadIdx.x;
          if (threadIdx.x < 16) v = __shfl_sync(0xffffffffu, v, 31);
          else __syncthreads();
          x[threadIdx.x % 8] = v;
        }
      ]], "m.stuck_shfl[{1, 32}](d)")
      assert.truthy(first:find("CUDA_ERROR_LAUNCH_FAILED", 1, true), first)
      assert.truthy(err:find("a deadlock: this thread waits at a", 1, true), err)
    end)
  end)

  it("prints a kernel's printf on the child's stdout", function()
    local out = on_fake([==[
      local m = l.compile([[
      extern "C" __global__ void say(const int *x, const double *y) {
        int i = threadIdx.x;
        if (i == 1)
          printf("int %d neg %d ll %lld u %u f %f e %.3e s %s c %c x %x X %08X pct %%\n",
                 x[i], -x[i], (long long)x[i] << 40, (unsigned)-x[i], y[i], y[i] * 1e10, "word", 'A' + x[i], x[i] * 4096, x[i]);
      }
      ]])
      m.say[{1, 4}](l.to_device({1, 42, 3, 4}, nil, {dtype = "int32"}), l.to_device({0.5, 2.25, 0, 0}))
      l.synchronize()
    ]==])
    assert.truthy(out:find("int 42 neg -42 ll 46179488366592 u 4294967254 f 2.250000 e 2.250e+10 s word c k x 2a000 X 0000002A pct %\n", 1, true), out)
  end)

  it("refuses a module with an instruction it cannot run, naming it", function()
    on_fake([==[
      local e = fails("CUDA_ERROR_INVALID_PTX", l.compile, [[
      extern "C" __global__ void tensor(float *x) {
        unsigned a = 0, b = 0;
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %0, %0, %0}, {%1, %1}, {%1}, {%0, %0, %0, %0};"
                     : "+r"(a) : "r"(b));
        x[0] = (float)a;
      }
      ]])
      assert(e:find("unknown instruction 'mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32'", 1, true), e)
      assert(e:find("fake_cuda: PTX line %d+"), e)
    ]==])
  end)
  -- FAKE_CUDA_STATS (bench/ptx.lua): the instructions run, those before a
  -- barrier included
  it("counts the instructions it ran in FAKE_CUDA_STATS", function()
    local stats = os.tmpname()
    on_fake([==[
      local m = l.compile([[
      extern "C" __global__ void loop(int *x, int n) {
        int s = 0;
        for (int i = 0; i < n; i++) s = s * 3 + (i ^ x[0]);
        __syncthreads();
        x[threadIdx.x] = s;
      }
      ]])
      m.loop[{2, 64}](l.device_array(64, "int32"), 1000)
      l.synchronize()
    ]==], "FAKE_CUDA_STATS=" .. stats)
    local f = assert(io.open(stats))
    local n = tonumber(f:read("a"):match("ptx_instructions (%d+)"))
    f:close()
    os.remove(stats)
    assert(n and n >= 2 * 64 * 1000 * 3 and n < 2 * 64 * 1000 * 20, "counted " .. tostring(n))
  end)
end)
