-- Kernel parameters as CUDA C++ writes them: typedef'd and aliased scalar
-- types, null pointers and default arguments, vector types by pointer and
-- by value. Each kernel runs on the active backend (the simulator, or the
-- CUDA backend on the fake driver, which runs NVRTC's PTX) with its
-- results checked; the misuse specs check the errors.
local luacuda = require "luacuda"
local S = require "spec.support"

local values = S.host_values

-- a device array of t, and one of zeros
local function dev(t, dtype) return luacuda.to_device(t, { dtype = dtype }) end
local function dz(shape, dtype) return luacuda.device_array(shape, dtype):fill(0) end

describe("kernel parameters", function()
  describe("typedef'd scalar types", function()
    it("resolves the source's typedefs and using aliases", function()
      local m = luacuda.compile([[
typedef unsigned int u32;
using real = float;
typedef const real creal;
typedef long long i64;
using idx_t = int32_t;
extern "C" __global__ void scale(u32 n, real a, creal *x, real *y, i64 off, idx_t k) {
  u32 i = threadIdx.x;
  if (i < n) y[i] = a * x[i] + (real)(off + k);
}
]])
      local k = m.scale
      assert.equal("u32, real, creal *, real *, i64, idx_t", k.signature)
      local x = dev({ 1, 2, 3, 4 }, "float32")
      local y = dz(4, "float32")
      k[{ 1, 4 }](3, 2.5, x, y, 10, -3)
      assert.same({ 9.5, 12, 14.5, 0 }, values(y))
    end)

    it("knows the C library's and CUDA's short names", function()
      local m = luacuda.compile([[
extern "C" __global__ void sizes(size_t a, ptrdiff_t b, uint c, ushort d, ulong e,
                                 clock_t f, uint8_t g, int64_t h, long long *out) {
  out[0] = (long long)a; out[1] = b; out[2] = c; out[3] = d; out[4] = (long long)e;
  out[5] = f; out[6] = g; out[7] = h;
  out[8] = sizeof(a) + 10 * sizeof(c) + 100 * sizeof(d) + 1000 * sizeof(f);
}
]])
      local out = dz(9, "int64")
      m.sizes[{ 1, 1 }](1 << 40, -5, 4000000000, 65535, 1 << 50, -7, 255, -(1 << 62), out)
      assert.same({ 1 << 40, -5, 4000000000, 65535, 1 << 50, -7, 255, -(1 << 62), 8248 },
                  values(out))
    end)

    it("checks a typedef'd argument as its type", function()
      local m = luacuda.compile([[
typedef unsigned char byte;
extern "C" __global__ void put(byte v, byte *out) { out[0] = v; }
]])
      local out = dz(1, "uint8")
      S.misuse("argument 1 'v' (byte): ", function() m.put:launch({ 1, 1 }, 256, out) end)
      m.put[{ 1, 1 }](200, out)
      assert.same({ 200 }, values(out))
      S.misuse("argument 2 'out' (byte *): expected a uint8 array, got int32",
               function() m.put[{ 1, 1 }](1, dz(1, "int32")) end)
    end)

    it("takes an enumeration as its underlying integer, and unscoped enumerators as bounds", function()
      local m = luacuda.compile([[
enum class Op : unsigned char { Add = 1, Mul = 2 };
typedef enum { SCALE_ONE = 1, SCALE_TEN = 10 } Scale;
enum { TAPS = 3 };
__constant__ float taps[TAPS];
extern "C" __global__ void apply(float *x, Op op, Scale s) {
  const float t = taps[threadIdx.x % TAPS];
  x[threadIdx.x] = (op == Op::Add ? x[threadIdx.x] + t : x[threadIdx.x] * t) * (int)s;
}
]])
      assert.equal("float *, Op, Scale", m.apply.signature)
      local w = m:get_global("taps")
      assert.same({ 3 }, w.shape)
      w[{}] = luacuda.array({ 1, 2, 3 }, "float32")
      local x = luacuda.to_device(luacuda.array({ 1, 1, 1, 1 }, "float32"))
      m.apply[{ 1, 4 }](x, 1, 10)
      assert.same({ 20, 30, 40, 20 }, values(x))
      m.apply[{ 1, 4 }](x, 2, 1)
      assert.same({ 20, 60, 120, 20 }, values(x))
      S.misuse("argument 2 'op' (Op): ", function() m.apply[{ 1, 4 }](x, 256, 1) end)
    end)
  end)

  describe("null pointers", function()
    local m = luacuda.compile([[
extern "C" __global__ void opt_add(const float *x, const float *bias, float *y, int n) {
  int i = threadIdx.x;
  if (i < n) y[i] = x[i] + (bias ? bias[i] : 100.0f);
}
]])

    it("passes luacuda.null for a pointer", function()
      assert.equal("userdata", type(luacuda.null))
      local x = dev({ 1, 2, 3 }, "float32")
      local y = dz(3, "float32")
      m.opt_add[{ 1, 3 }](x, luacuda.null, y, 3)
      assert.same({ 101, 102, 103 }, values(y))
      m.opt_add[{ 1, 3 }](x, dev({ 10, 20, 30 }, "float32"), y, 3)
      assert.same({ 11, 22, 33 }, values(y))
    end)

    it("refuses luacuda.null for a scalar and an Array", function()
      local y = dz(3, "float32")
      S.misuse("argument 4 'n' (int): ", function()
        m.opt_add[{ 1, 3 }](y, luacuda.null, y, luacuda.null)
      end)
      local a = luacuda.compile('extern "C" __global__ void f(Array<float, 1> a) {}')
      S.misuse("argument 1 'a' (Array<float, 1>): expected a device array, got userdata",
               function() a.f[{ 1, 1 }](luacuda.null) end)
    end)
  end)

  describe("default arguments", function()
    local m = luacuda.compile([[
extern "C" __global__ void fill(float *out, int n, float v = 2.5f, int step = -1,
                                const float *add = nullptr, bool twice = true,
                                double scale = 1e1, unsigned u = 0x10) {
  int i = threadIdx.x;
  if (i < n) out[i] = (v + step * i + (add ? add[i] : 0.0f)) * (twice ? 2 : 1) * scale + u;
}
]])

    it("passes the defaults of trailing arguments left out", function()
      local out = dz(3, "float32")
      m.fill[{ 1, 3 }](out, 3)
      assert.same({ 66, 46, 26 }, values(out))
      m.fill[{ 1, 3 }](out, 3, 1, 1)
      assert.same({ 36, 56, 76 }, values(out))
      m.fill[{ 1, 3 }](out, 3, 1, 1, dev({ 1, 1, 1 }, "float32"), false, 1, 0)
      assert.same({ 2, 3, 4 }, values(out))
    end)

    it("counts the arguments a launch may give", function()
      local out = dz(3, "float32")
      S.misuse("launch: kernel 'fill' takes 2 to 8 arguments, got 1",
               function() m.fill[{ 1, 3 }](out) end)
      S.misuse("launch: kernel 'fill' takes 2 to 8 arguments, got 9",
               function() m.fill[{ 1, 3 }](out, 3, 1, 1, luacuda.null, true, 1, 0, 5) end)
    end)

    it("asks for an argument whose default is not a literal", function()
      local k = luacuda.compile([[
#define TWO 2
extern "C" __global__ void g(int *o, int a = TWO * 3) { o[0] = a; }
]]).g
      local o = dz(1, "int32")
      S.misuse("argument 2 'a' (int): its default argument 'TWO * 3' is not a literal luacuda "
               .. "can pass; give the argument", function() k[{ 1, 1 }](o) end)
      k[{ 1, 1 }](o, 7)
      assert.same({ 7 }, values(o))
    end)
  end)

  describe("vector types", function()
    local m = luacuda.compile([[
extern "C" __global__ void norms(const float2 *p, float *out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = p[i].x * p[i].x + p[i].y * p[i].y;
}
extern "C" __global__ void shift(int4 *q, int n, int4 by, double3 w, uchar2 c) {
  int i = threadIdx.x;
  if (i < n) {
    q[i].x += by.x; q[i].y += by.y; q[i].z += by.z; q[i].w += by.w + (int)(w.x + w.y + w.z)
      + c.x * 1000 + c.y * 100000;
  }
}
]])

    it("passes a T array with a last axis of N for a T#N pointer", function()
      local p = dev({ { 3, 4 }, { 1, 2 }, { 0, -2 } }, "float32")
      local out = dz(3, "float32")
      m.norms[{ 1, 3 }](p, out, 3)
      assert.same({ 25, 5, 4 }, values(out))
    end)

    it("passes an array of records of N T fields", function()
      local pt = luacuda.record { { "x", "float32" }, { "y", "float32" } }
      local p = dev({ { x = 6, y = 8 }, { x = 1, y = 1 } }, pt)
      local out = dz(2, "float32")
      m.norms[{ 1, 2 }](p, out, 2)
      assert.same({ 100, 2 }, values(out))
    end)

    it("passes vectors by value from {x=, y=} or {1, 2}", function()
      local q = dev({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 } }, "int32")
      m.shift[{ 1, 2 }](q, 2, { x = 10, y = 20, z = 30, w = 40 }, { 0.5, 1, 1.5 }, { 1, 2 })
      assert.same({ { 11, 22, 33, 201047 }, { 15, 26, 37, 201051 } }, values(q))
      m.shift[{ 1, 2 }](q, 1, { 1, 1, 1, 1 }, { x = 0, y = 0, z = 0 }, { x = 0, y = 0 })
      assert.same({ { 12, 23, 34, 201048 }, { 15, 26, 37, 201051 } }, values(q))
    end)

    it("refuses arrays and tables that do not fit the vector", function()
      local out = dz(3, "float32")
      S.misuse("argument 1 'p' (const float2 *): expected a float32 array whose last axis "
               .. "has 2 elements, got a last axis of 3",
               function() m.norms[{ 1, 3 }](dz({ 3, 3 }, "float32"), out, 3) end)
      S.misuse("expected a float32 array whose last axis has 2 elements, got float64",
               function() m.norms[{ 1, 3 }](dz({ 3, 2 }, "float64"), out, 3) end)
      S.misuse("expected a float32 array whose last axis has 2 elements, or records of 2 "
               .. "float32 fields, got",
               function()
                 local r = luacuda.record { { "x", "float32" }, { "y", "int32" } }
                 m.norms[{ 1, 3 }](luacuda.device_array(3, r), out, 3)
               end)
      local t = dz({ 2, 3 }, "float32")
      S.misuse("the array must be C-contiguous: its last axis holds each vector's elements",
               function() m.norms[{ 1, 3 }](t.T, out, 3) end)
      -- 32 bytes: aligned to 32 on the simulator's memory checking too
      -- (an array starts as aligned as its byte size allows, up to 256)
      local flat = dz(8, "float32")
      S.misuse("the data is not aligned to 8 bytes, as the vector type must be",
               function() m.norms[{ 1, 3 }](flat[{ { 2, 7 } }]:reshape(3, 2), out, 3) end)
      local q = dz({ 2, 4 }, "int32")
      S.misuse("argument 3 'by' (int4): expected a table {x=, y=, ...} or {1, 2, ...} of 4 "
               .. "numbers, got number", function()
                 m.shift[{ 1, 2 }](q, 2, 1, { 0, 0, 0 }, { 0, 0 })
               end)
      S.misuse("argument 4 'w' (double3): the table has no 'z'", function()
        m.shift[{ 1, 2 }](q, 2, { 1, 1, 1, 1 }, { x = 1, y = 2 }, { 0, 0 })
      end)
      S.misuse("argument 4 'w' (double3): the table has an entry 'w', which a vector of 3 has "
               .. "not", function()
                 m.shift[{ 1, 2 }](q, 2, { 1, 1, 1, 1 }, { x = 1, y = 2, z = 3, w = 4 }, { 0, 0 })
               end)
      S.misuse("argument 5 'c' (uchar2): [2]: ", function()
        m.shift[{ 1, 2 }](q, 2, { 1, 1, 1, 1 }, { 1, 2, 3 }, { 0, 300 })
      end)
    end)

    it("resolves a typedef of a vector type", function()
      local k = luacuda.compile([[
typedef float2 vec2;
using pair = int2;
extern "C" __global__ void dot(const vec2 *a, pair w, float *out) {
  out[0] = a[0].x * w.x + a[0].y * w.y;
}
]]).dot
      local out = dz(1, "float32")
      k[{ 1, 1 }](dev({ { 3, 5 } }, "float32"), { 2, 10 }, out)
      assert.same({ 56 }, values(out))
    end)
  end)

  describe("__constant__ and __device__ bounds", function()
    it("reads bounds that are macros or integer constants", function()
      local m = luacuda.compile([[
#define ROWS 3
constexpr int COLS = 2;
static const unsigned LEN = (4);
__constant__ float weights[ROWS][COLS];
__device__ int hits[LEN];
extern "C" __global__ void apply(float *out) {
  int i = threadIdx.x;
  out[i] = weights[i][0] * 10 + weights[i][1];
  atomicAdd(&hits[i % LEN], i + 1);
}
]])
      local w = m:get_global("weights")
      assert.same({ 3, 2 }, w.shape)
      assert.equal("float32", w.dtype)
      w[{}] = luacuda.array({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, "float32")
      local hits = m:get_global("hits")
      assert.same({ 4 }, hits.shape)
      hits:fill(0)
      local out = dz(3, "float32")
      m.apply[{ 1, 3 }](out)
      assert.same({ 12, 34, 56 }, values(out))
      assert.same({ 1, 2, 3, 0 }, values(hits))
    end)

    it("reads bounds that are constant expressions of literals, macros and constants", function()
      local m = luacuda.compile([[
#define RADIUS 3
#define WIDTH (2 * RADIUS + 1)
#define TAPS RADIUS + 1
constexpr int ROWS = (WIDTH - 1) / 2 << 1;
struct Window { float w[WIDTH]; int taps[TAPS]; };
__constant__ float weights[WIDTH];
__device__ int table[ROWS >> 1][TAPS];
extern "C" __global__ void apply(Window win, float *out) {
  int i = threadIdx.x;
  out[i] = weights[i] * win.w[i] + table[0][i & 3] + win.taps[i & 3];
}
]])
      local w = m:get_global("weights")
      assert.same({ 7 }, w.shape)
      w[{}] = luacuda.array({ 1, 2, 3, 4, 5, 6, 7 }, "float32")
      local t = m:get_global("table")
      assert.same({ 3, 4 }, t.shape)
      t[{}] = luacuda.array({ { 100, 200, 300, 400 }, { 0, 0, 0, 0 }, { 0, 0, 0, 0 } }, "int32")
      local out = dz(7, "float32")
      m.apply[{ 1, 7 }]({ w = { 1, 1, 1, 1, 1, 1, 2 }, taps = { 10, 20, 30, 40 } }, out)
      assert.same({ 111, 222, 333, 444, 115, 226, 344 }, values(out))
    end)

    it("still refuses a bound it cannot read", function()
      local m = luacuda.compile([[
#define N 2
#define M N + 1
__device__ int v[sizeof(int) * N];
__device__ int w[M * 2];
extern "C" __global__ void k() { v[0] = 1; w[0] = 1; }
]])
      S.misuse("global 'v' (int) has no array form: its type must be a scalar type and its "
               .. "bounds integer constant expressions", function() m:get_global("v") end)
      -- M * 2 is N + 1 * 2 to the preprocessor: an unparenthesized macro is read only alone
      S.misuse("global 'w' (int) has no array form", function() m:get_global("w") end)
    end)
  end)

  describe("structs by value", function()
    local PARTICLE = [[
struct Particle {
  float3 pos;
  float mass;
  int id;
};
extern "C" __global__ void weigh(Particle p, float *out, int *ids) {
  out[0] = p.pos.x * p.mass;
  out[1] = p.pos.y * p.mass;
  out[2] = p.pos.z * p.mass;
  out[3] = (float)sizeof(Particle);
  ids[0] = p.id;
}
]]

    it("packs a struct of a float3, a float and an int from a table", function()
      local k = luacuda.compile(PARTICLE).weigh
      assert.equal("Particle, float *, int *", k.signature)
      local out, ids = dz(4, "float32"), dz(1, "int32")
      k[{ 1, 1 }]({ pos = { 1, 2, 3 }, mass = 2, id = -7 }, out, ids)
      assert.same({ 2, 4, 6, 20 }, values(out))
      assert.same({ -7 }, values(ids))
      k[{ 1, 1 }]({ pos = { x = 0.5, y = -1, z = 4 }, mass = 4, id = 9 }, out, ids)
      assert.same({ 2, -4, 16, 20 }, values(out))
      assert.same({ 9 }, values(ids))
    end)

    it("takes a 0-d record array with the struct's layout, on the host or the device", function()
      local k = luacuda.compile(PARTICLE).weigh
      local rec = luacuda.record { { "pos", "float32", 3 }, { "mass", "float32" },
                                   { "id", "int32" } }
      local v = { pos = { 3, 5, 7 }, mass = 0.5, id = 42 }
      local out, ids = dz(4, "float32"), dz(1, "int32")
      k[{ 1, 1 }](luacuda.array(v, rec), out, ids)
      assert.same({ 1.5, 2.5, 3.5, 20 }, values(out))
      assert.same({ 42 }, values(ids))
      v.id = 43
      k[{ 1, 1 }](luacuda.to_device(v, { dtype = rec }), out, ids)
      assert.same({ 43 }, values(ids))
    end)

    it("lays out an __align__(16) struct and a typedef'd one as C does", function()
      local m = luacuda.compile([[
struct __align__(16) S { float a; double b; char c; };
typedef struct alignas(8) { short h; unsigned char u[3]; } T;
extern "C" __global__ void k(int pad, S s, T t, double *out) {
  out[0] = s.a; out[1] = s.b; out[2] = s.c;
  out[3] = sizeof(S); out[4] = alignof(S);
  out[5] = t.h; out[6] = t.u[0] + 10 * t.u[1] + 100 * t.u[2];
  out[7] = sizeof(T); out[8] = pad;
}
]])
      local out = dz(9, "float64")
      m.k[{ 1, 1 }](5, { a = 1.5, b = -2.25, c = 65 }, { h = -3, u = { 1, 2, 3 } }, out)
      assert.same({ 1.5, -2.25, 65, 32, 16, -3, 321, 8, 5 }, values(out))
    end)

    it("packs nested structs, arrays of them and a signatures= override naming them", function()
      local m = luacuda.compile([[
struct Inner { char tag; double w; };
typedef struct Outer { int n; Inner in[2]; float2 v; } Outer;
extern "C" __global__ void k(Outer o, double *out) {
  out[0] = o.n; out[1] = o.in[0].tag; out[2] = o.in[0].w;
  out[3] = o.in[1].tag; out[4] = o.in[1].w; out[5] = o.v.x + 10 * o.v.y;
  out[6] = sizeof(Outer);
}
]], { signatures = { k = "struct Outer o, double *out" } })
      local out = dz(7, "float64")
      m.k[{ 1, 1 }]({ n = 3, v = { 1, 2 },
                      ["in"] = { { tag = 1, w = 0.5 }, { tag = 2, w = 1.5 } } }, out)
      assert.same({ 3, 1, 0.5, 2, 1.5, 21, 48 }, values(out))
    end)

    it("refuses a missing member, a wrong type and a record of another layout", function()
      local k = luacuda.compile(PARTICLE).weigh
      local out, ids = dz(4, "float32"), dz(1, "int32")
      S.misuse("kernel 'weigh' argument 1 'p' (Particle): struct Particle: the table has no "
               .. "members 'mass', 'id'",
               function() k[{ 1, 1 }]({ pos = { 1, 2, 3 } }, out, ids) end)
      S.misuse("argument 1 'p' (Particle): the table has an entry 'speed', which struct "
               .. "Particle has not",
               function() k[{ 1, 1 }]({ pos = { 1, 2, 3 }, mass = 1, id = 1, speed = 2 }, out, ids) end)
      S.misuse("argument 1 'p' (Particle): member 'id' (int32): ",
               function() k[{ 1, 1 }]({ pos = { 1, 2, 3 }, mass = 1, id = 1.5 }, out, ids) end)
      S.misuse("argument 1 'p' (Particle): member 'pos' (float32 vector): the table has no 'z'",
               function() k[{ 1, 1 }]({ pos = { x = 1, y = 2 }, mass = 1, id = 1 }, out, ids) end)
      S.misuse("argument 1 'p' (Particle): expected a table of struct Particle's members or a "
               .. "0-d array of a record with its layout, got number",
               function() k[{ 1, 1 }](3, out, ids) end)
      local swapped = luacuda.record { { "pos", "float32", 3 }, { "id", "int32" },
                                       { "mass", "float32" } }
      S.misuse("field 2 'id' (int32, offset 12) of the dtype record{pos: float32[3], id: int32, "
               .. "mass: float32} differs from struct Particle's member 2 'mass' (float32, offset "
               .. "12) in its name",
               function() k[{ 1, 1 }](luacuda.array({ pos = { 1, 2, 3 }, id = 1, mass = 1 },
                                                    swapped), out, ids) end)
      local wide = luacuda.record { { "pos", "float64", 3 }, { "mass", "float32" },
                                    { "id", "int32" } }
      S.misuse("the dtype record{pos: float64[3], mass: float32, id: int32} takes 32 bytes "
               .. "aligned to 8, struct Particle 20 aligned to 4",
               function() k[{ 1, 1 }](luacuda.array({ pos = { 1, 2, 3 }, mass = 1, id = 1 },
                                                    wide), out, ids) end)
    end)

    it("packs a struct as the compiler lays it out, #pragma pack included", function()
      local m = luacuda.compile([[
#pragma pack(push, 1)
struct Packed { char c; double d; };
#pragma pack(pop)
extern "C" __global__ void k(int pad, Packed p, double *out) {
  out[0] = p.c; out[1] = p.d; out[2] = sizeof(Packed); out[3] = pad;
}
]])
      local out = dz(4, "float64")
      m.k[{ 1, 1 }](7, { c = 3, d = -1.25 }, out)
      assert.same({ 3, -1.25, 9, 7 }, values(out))
      local packed = luacuda.record({ { "c", "int8" }, { "d", "float64" } }, { align = false })
      m.k[{ 1, 1 }](8, luacuda.array({ c = 4, d = 2.5 }, packed), out)
      assert.same({ 4, 2.5, 9, 8 }, values(out))
      local aligned = luacuda.record({ { "c", "int8" }, { "d", "float64" } })
      S.misuse("argument 2 'p' (Packed): the dtype record{c: int8, d: float64} takes 16 bytes "
               .. "aligned to 8, struct Packed 9 aligned to 1",
               function() m.k[{ 1, 1 }](8, luacuda.array({ c = 4, d = 2.5 }, aligned), out) end)
    end)

    it("refuses nested members of the wrong shape, naming them", function()
      local k = luacuda.compile([[
struct Inner { char tag; double w; };
struct Outer { int n; Inner in[2]; Inner one; };
extern "C" __global__ void k(Outer o, double *out) { out[0] = o.one.w; }
]]).k
      local out = dz(1, "float64")
      local function v() return { n = 1, ["in"] = { { tag = 1, w = 1 }, { tag = 2, w = 2 } },
                                  one = { tag = 3, w = 3 } } end
      k[{ 1, 1 }](v(), out)
      assert.same({ 3 }, values(out))
      local t = v()
      t.one = 5
      S.misuse("argument 1 'o' (Outer): member 'one': expected a table of struct Inner's "
               .. "members, got number", function() k[{ 1, 1 }](t, out) end)
      t = v()
      t["in"] = { { tag = 1, w = 1 } }
      S.misuse("argument 1 'o' (Outer): member 'in': expected a table of 2 elements, got one of 1",
               function() k[{ 1, 1 }](t, out) end)
      t = v()
      t.one.extra = 1
      S.misuse("argument 1 'o' (Outer): the table 'one' has an entry 'extra', which struct Inner "
               .. "has not", function() k[{ 1, 1 }](t, out) end)
      t = v()
      t["in"][2].w = nil
      S.misuse("argument 1 'o' (Outer): struct Inner: the table has no member 'in[2].w'",
               function() k[{ 1, 1 }](t, out) end)
      t = v()
      t["in"][2].tag = 1000
      S.misuse("argument 1 'o' (Outer): member 'in[2].tag' (int8): ",
               function() k[{ 1, 1 }](t, out) end)
      local rec = luacuda.record { { "n", "int32" } }
      S.misuse("argument 1 'o' (Outer): expected a table of struct Outer's members or a 0-d "
               .. "array of a record with its layout, got a 1-d", function()
                 k[{ 1, 1 }](luacuda.array({ { n = 1 } }, rec), out)
               end)
      local short = luacuda.record({ { "n", "int64" }, { "pad", "float64", 6 } })
      S.misuse("the dtype record{n: int64, pad: float64[6]} has 2 fields, struct Outer 3 "
               .. "members", function()
        k[{ 1, 1 }](luacuda.zeros({}, short), out)
      end)
    end)

    it("refuses members it cannot lay out, saying why", function()
      for src, why in pairs({
        ["struct B { int x : 3; };"] = "member 'x': bit-fields are not supported",
        ["struct B { int x; } __attribute__((packed));"] =
          "an alignment attribute that is not a power-of-2 literal, or packed, is not supported",
        ["enum E { A }; struct B { enum E e; };"] = "enum members are not supported",
        ["struct A { int x : 1; }; struct B { A a; };"] =
          "a member of struct A, which is not understood (member 'x': bit-fields",
        ["template <int N> struct W { int a[N]; }; struct B { W<2> w; };"] =
          "unsupported member type 'W",
        ["struct B { int (*f)(int); };"] = "unsupported member 'int",
        [("struct B { %s };"):format(("int m%d; "):rep(33):format(table.unpack((function()
          local t = {} for i = 1, 33 do t[i] = i end return t end)())))] = "more than 32 members",
        [("struct B { int %s; };"):format(("x"):rep(70))] = "a member name longer than 63 bytes",
        ["struct B { int a[1][2][1][2][1]; };"] = "an array member of more than 4 dimensions",
        [("struct B { int a0%s; };"):format(table.concat((function()
          local t = {} for i = 1, 30 do t[i] = ", a" .. i end return t end)()))] =
          "a member declaration too long to read ('int a0, a1, a2",
      }) do
        S.misuse({ "parameter 1: unsupported type 'B' (struct B: ", why }, function()
          return luacuda.compile(src .. '\nextern "C" __global__ void k(B b) {}').k
        end)
      end
    end)

    it("refuses a struct whose layout it cannot read, saying why", function()
      local m = luacuda.compile([[
struct P { float *data; int n; };
extern "C" __global__ void k(P p) { if (p.n) p.data[0] = 1; }
]])
      S.misuse({ "kernel 'k' parameter 1: unsupported type 'P' (struct P: a pointer or "
                 .. "reference member ('float *...') is not supported" },
               function() return m.k end)
    end)
  end)

  describe("struct layouts, checked against the compiler", function()
    local PARTICLE = [[
struct Particle { float3 pos; float mass; int id; };
extern "C" __global__ void move(Particle *__restrict__ p, const Particle *from, int n) {
  int i = threadIdx.x;
  if (i < n) {
    p[i].pos.x += from[i].pos.x * from[i].mass;
    p[i].pos.z += from[i].pos.z;
    p[i].id = from[i].id * 10;
  }
}
]]
    local particle = luacuda.record { { "pos", "float32", 3 }, { "mass", "float32" },
                                      { "id", "int32" } }

    it("passes an array of records with the struct's layout to a struct pointer", function()
      local k = luacuda.compile(PARTICLE).move
      local p = dev({ { pos = { 1, 2, 3 }, mass = 0, id = 0 },
                      { pos = { 4, 5, 6 }, mass = 0, id = 0 } }, particle)
      local from = dev({ { pos = { 1, 0, 1 }, mass = 2, id = 7 },
                         { pos = { 3, 0, -6 }, mass = 0.5, id = 8 } }, particle)
      k[{ 1, 2 }](p, from, 2)
      assert.same({ { pos = { 3, 2, 4 }, mass = 0, id = 70 },
                    { pos = { 5.5, 5, 0 }, mass = 0, id = 80 } }, p:totable())
    end)

    it("refuses, for a struct pointer, records of another layout, naming the field", function()
      local k = luacuda.compile(PARTICLE).move
      local good = dev({ { pos = { 1, 2, 3 }, mass = 0, id = 0 } }, particle)
      local swapped = luacuda.record { { "pos", "float32", 3 }, { "id", "int32" },
                                       { "mass", "float32" } }
      local bad = dev({ { pos = { 1, 2, 3 }, mass = 0, id = 0 } }, swapped)
      S.misuse("launch: kernel 'move' argument 2 'from' (const Particle *): field 2 'id' (int32, "
               .. "offset 12) of the dtype record{pos: float32[3], id: int32, mass: float32} "
               .. "differs from struct Particle's member 2 'mass' (float32, offset 12) in its name",
               function() k[{ 1, 1 }](good, bad, 1) end)
      local wide = luacuda.record { { "pos", "float64", 3 }, { "mass", "float32" },
                                    { "id", "int32" } }
      S.misuse("kernel 'move' argument 1 'p' (Particle *__restrict__): the dtype record{pos: "
               .. "float64[3], mass: float32, id: int32} takes 32 bytes aligned to 8, struct "
               .. "Particle 20 aligned to 4", function()
                 k[{ 1, 1 }](dev({ { pos = { 1, 2, 3 }, mass = 0, id = 0 } }, wide), good, 1)
               end)
      local flat = luacuda.record { { "pos", "float32", 3 }, { "mass", "float32" },
                                    { "id", "uint32" } }
      S.misuse("field 3 'id' (uint32, offset 16) of the dtype record{pos: float32[3], mass: "
               .. "float32, id: uint32} differs from struct Particle's member 3 'id' (int32, "
               .. "offset 16) in its type", function()
                 k[{ 1, 1 }](good, dev({ { pos = { 1, 2, 3 }, mass = 0, id = 0 } }, flat), 1)
               end)
    end)

    it("takes a record's c_declaration, padding members and all, both ways", function()
      local rec = luacuda.record { { "tag", "int8" }, { "w", "float64" }, { "v", "float32", 3 } }
      local m = luacuda.compile(rec:c_declaration("Padded") .. [[
extern "C" __global__ void k(Padded by_value, Padded *p) {
  p->w = by_value.w + by_value.tag + p->tag;
  p->v[1] = by_value.v[2];
}
]])
      local p = dev({ { tag = 5, w = 0, v = { 0, 0, 0 } } }, rec)
      m.k[{ 1, 1 }]({ tag = 1, w = 0.5, v = { 1, 2, 3 } }, p)
      assert.same({ { tag = 5, w = 6.5, v = { 0, 3, 0 } } }, p:totable())
      m.k[{ 1, 1 }](luacuda.array({ tag = 2, w = 1, v = { 0, 0, 9 } }, rec), p)
      assert.same({ { tag = 5, w = 8, v = { 0, 9, 0 } } }, p:totable())
    end)

    it("checks against the compiler's layout where the source reads otherwise", function()
      -- the scanner reads the last typedef; -DBIG compiles the first
      local m = luacuda.compile([[
#ifdef BIG
typedef long long idx_t;
#else
typedef int idx_t;
#endif
struct Item { idx_t i; float x; };
extern "C" __global__ void by_value(Item v, float *out) { out[0] = v.x; }
extern "C" __global__ void by_pointer(const Item *p, float *out) { out[0] = p->x; }
]], { options = { "-DBIG" } })
      local item = luacuda.record { { "i", "int32" }, { "x", "float32" } }
      local out = dz(1, "float32")
      local why = "struct Item is laid out otherwise by the compiler: member 'i' takes 8 bytes "
                  .. "in the compiled kernel, luacuda reads 4"
      S.misuse("kernel 'by_value' argument 1 'v' (Item): " .. why,
               function() m.by_value[{ 1, 1 }]({ i = 1, x = 2 }, out) end)
      S.misuse("kernel 'by_pointer' argument 1 'p' (const Item *): " .. why,
               function() m.by_pointer[{ 1, 1 }](dev({ { i = 1, x = 2 } }, item), out) end)
      local wide = luacuda.record { { "i", "int64" }, { "x", "float32" } }
      S.misuse("kernel 'by_pointer' argument 1 'p' (const Item *): " .. why,
               function() m.by_pointer[{ 1, 1 }](dev({ { i = 1, x = 2 } }, wide), out) end)
      assert.same({ 0 }, values(out))
    end)

    it("checks the size and alignment of a struct whose members it cannot read", function()
      local m = luacuda.compile([[
struct View { float *data; int n; };
extern "C" __global__ void count(const View *v, int *out) { out[0] = v->n; }
]])
      local out = dz(1, "int32")
      local view = luacuda.record { { "data", "uint64" }, { "n", "int32" } }
      m.count[{ 1, 1 }](dev({ { data = 0, n = 5 } }, view), out)
      assert.same({ 5 }, values(out))
      local short = luacuda.record { { "data", "uint32" }, { "n", "int32" } }
      S.misuse("kernel 'count' argument 1 'v' (const View *): the dtype record{data: uint32, "
               .. "n: int32} takes 8 bytes aligned to 4, struct View (as compiled) 16 aligned "
               .. "to 8", function() m.count[{ 1, 1 }](dev({ { data = 0, n = 5 } }, short), out) end)
    end)

    it("takes the definition of a struct that was compiled, of one in each #if branch", function()
      local src = [[
#ifdef WIDE
struct S { double w; int n; };
#else
struct S { float x; int n; };
#endif
extern "C" __global__ void k(S s, const S *p, double *out) { out[0] = s.n + p->n + sizeof(S); }
]]
      local out = dz(1, "float64")
      local wide = luacuda.compile(src, { options = { "-DWIDE" } })
      wide.k[{ 1, 1 }]({ w = 1, n = 2 }, dev({ { w = 0, n = 10 } },
                       luacuda.record { { "w", "float64" }, { "n", "int32" } }), out)
      assert.same({ 28 }, values(out))
      local narrow = luacuda.compile(src)
      narrow.k[{ 1, 1 }]({ x = 1, n = 2 }, dev({ { x = 0, n = 10 } },
                         luacuda.record { { "x", "float32" }, { "n", "int32" } }), out)
      assert.same({ 20 }, values(out))
      S.misuse("argument 1 's' (S): the table has an entry 'x', which struct S has not",
               function() wide.k[{ 1, 1 }]({ x = 1, n = 2 }, luacuda.null, out) end)
    end)

    it("keeps the user's line numbers in the compiler's messages", function()
      -- g++ writes file:line, NVRTC file(line); NVRTC's error comes first
      -- where the simulator checks with it
      local gxx = S.backend == "sim" and not S.nvrtc_checks()
      S.misuse({ "compilation of frame.cu failed", gxx and "frame.cu:7" or "frame.cu(7)" },
               luacuda.compile, "struct S {\n  int a;\n  double b;\n};\ntypedef S T;\n"
               .. "extern \"C\" __global__ void k(T *o) {\n  o[0].a = 1 +;\n}\n",
               { name = "frame.cu" })
    end)

    it("checks a struct in an unnamed namespace by the kernel's parameter size", function()
      -- the compiler's table of it would have internal linkage: there is none
      local m = luacuda.compile([[
namespace {
#pragma pack(push, 1)
struct Hidden { char c; double d; };
#pragma pack(pop)
}
extern "C" __global__ void k(Hidden h, double *out) { out[0] = h.d; }
]])
      S.misuse("kernel 'k' parameter 1 'h' (Hidden): luacuda's layout of struct Hidden takes "
               .. "16 bytes, the compiled kernel's 9", function() return m.k end)
    end)

    it("checks the size of a header's struct, and leaves an incomplete one be", function()
      local dir = S.tmpdir()
      local f = assert(io.open(dir .. "/particle.h", "w"))
      f:write("#pragma once\nstruct Body { double pos[3]; float mass; };\nstruct Opaque;\n")
      f:close()
      local m = luacuda.compile([[
#include "particle.h"
extern "C" __global__ void k(Body *b, const Opaque *o, int n) { b[0].mass = n; }
]], { options = { "-I" .. dir } })
      local body = luacuda.record { { "pos", "float64", 3 }, { "mass", "float32" } }
      local handle = dev({ { x = 1 } }, luacuda.record { { "x", "int8" } })
      local b = dev({ { pos = { 1, 2, 3 }, mass = 0 } }, body)
      m.k[{ 1, 1 }](b, handle, 7)
      assert.same({ { pos = { 1, 2, 3 }, mass = 7 } }, b:totable())
      local narrow = luacuda.record { { "pos", "float32", 3 }, { "mass", "float32" } }
      S.misuse("kernel 'k' argument 1 'b' (Body *): the dtype record{pos: float32[3], mass: "
               .. "float32} takes 16 bytes aligned to 4, Body (as compiled) 32 aligned to 8",
               function()
                 m.k[{ 1, 1 }](dev({ { pos = { 1, 2, 3 }, mass = 0 } }, narrow), handle, 7)
               end)
    end)

    it("takes members that are private to the struct, and a struct named like a function", function()
      local m = luacuda.compile([[
class Counter { int hidden = 0; public: int n; __device__ int get() const { return n + hidden; } };
struct stat { int a; double b; };
__device__ int stat(int q) { return q; }
extern "C" __global__ void k(const Counter *c, const struct stat *s, double *out) {
  out[0] = c->get() + s->b + stat(s->a);
}
]])
      local counter = luacuda.record { { "hidden", "int32" }, { "n", "int32" } }
      local st = luacuda.record { { "a", "int32" }, { "b", "float64" } }
      local out = dz(1, "float64")
      m.k[{ 1, 1 }](dev({ { hidden = 1, n = 2 } }, counter), dev({ { a = 10, b = 0.5 } }, st), out)
      assert.same({ 13.5 }, values(out))
    end)
  end)

  describe("multi-dimensional array members", function()
    local SRC = [[
struct Frame { float m[3][3]; short tag[2][2]; int n; };
extern "C" __global__ void apply(Frame f, Frame *out, float *trace) {
  trace[0] = f.m[0][0] + f.m[1][1] + f.m[2][2] + f.n + f.tag[1][0];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) out->m[r][c] = f.m[c][r];
  out->tag[0][1] = f.tag[1][1];
  out->n = sizeof(Frame);
}
]]
    local frame = luacuda.record { { "m", "float32", { 3, 3 } }, { "tag", "int16", { 2, 2 } },
                                   { "n", "int32" } }
    local value = { m = { { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } }, tag = { { 0, 0 }, { 20, 30 } },
                    n = 100 }

    it("passes them by value from nested tables and by pointer as sub-arrays", function()
      local k = luacuda.compile(SRC).apply
      local out = dev({ { m = { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } },
                          tag = { { 0, 0 }, { 0, 0 } }, n = 0 } }, frame)
      local trace = dz(1, "float32")
      k[{ 1, 1 }](value, out, trace)
      assert.same({ 135 }, values(trace))
      assert.same({ m = { { 1, 4, 7 }, { 2, 5, 8 }, { 3, 6, 9 } }, tag = { { 0, 30 }, { 0, 0 } },
                    n = 48 }, out:totable()[1])
      trace:fill(0)
      k[{ 1, 1 }](luacuda.to_device(value, { dtype = frame }), out, trace)
      assert.same({ 135 }, values(trace))
    end)

    it("refuses tables and records of another shape", function()
      local k = luacuda.compile(SRC).apply
      local out = luacuda.to_device({ value }, { dtype = frame })
      local trace = dz(1, "float32")
      local t = { m = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, tag = value.tag, n = 1 }
      S.misuse("argument 1 'f' (Frame): member 'm': expected a table of 3 tables, got one of 9",
               function() k[{ 1, 1 }](t, out, trace) end)
      t.m = { { 1, 2, 3 }, { 4, 5 }, { 7, 8, 9 } }
      S.misuse("argument 1 'f' (Frame): member 'm[2]': expected a table of 3 elements, got one "
               .. "of 2", function() k[{ 1, 1 }](t, out, trace) end)
      local flat = luacuda.record { { "m", "float32", 9 }, { "tag", "int16", { 2, 2 } },
                                    { "n", "int32" } }
      S.misuse("argument 2 'out' (Frame *): field 1 'm' (float32[9], offset 0) of the dtype "
               .. "record{m: float32[9], tag: int16{2, 2}, n: int32} differs from struct Frame's "
               .. "member 1 'm' (float32{3, 3}, offset 0) in its shape", function()
                 k[{ 1, 1 }](value, luacuda.device_array(1, flat), trace)
               end)
      assert.same({ 0 }, values(trace))
    end)
  end)

  describe("signatures= naming a struct by another name", function()
    it("takes the struct's tag, a typedef and a using alias", function()
      local m = luacuda.compile([[
struct P { int a; double b; };
typedef P PT;
using PA = P;
typedef struct Q_ { int c; } Q;
extern "C" __global__ void k(PT v, Q q, const PA *w, double *out) {
  out[0] = v.a + v.b + q.c + w->b;
}
]], { signatures = { k = "PT v, struct Q_ q, const PA *w, double *out" } })
      assert.equal("PT, struct Q_, const PA *, double *", m.k.signature)
      local out = dz(1, "float64")
      local p = luacuda.record { { "a", "int32" }, { "b", "float64" } }
      m.k[{ 1, 1 }]({ a = 1, b = 2.5 }, { c = 10 }, dev({ { a = 0, b = 100 } }, p), out)
      assert.same({ 113.5 }, values(out))
      S.misuse("argument 3 'w' (const PA *): field 1 'a' (int64, offset 0) of the dtype "
               .. "record{a: int64, b: float64} differs from struct P's member 1 'a' (int32, "
               .. "offset 0) in its type",
               function()
                 m.k[{ 1, 1 }]({ a = 1, b = 2.5 }, { c = 10 },
                               dev({ { a = 0, b = 100 } },
                                   luacuda.record { { "a", "int64" }, { "b", "float64" } }), out)
               end)
    end)
  end)
end)
