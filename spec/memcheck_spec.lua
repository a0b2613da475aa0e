-- Memory checking on the simulator (LUACUDA_SIM_MEMCHECK, issue 17): one
-- element past the end of any device, managed or mapped array faults and
-- fails the launch, naming the kernel, the block and thread, the address and
-- the array (dtype, shape, the script's line that allocated it). The strict
-- mode (2) catches accesses before the start instead, and bounds-checks
-- SHARED_ARRAY and LOCAL_ARRAY; 0 turns checking off. Tests tagged #oob
-- make invalid accesses on purpose, which valgrind's memcheck reports too,
-- so make test-valgrind leaves them out.
local luacuda = require "luacuda"
local S = require "spec.support"

local sim = luacuda.backend() == "sim"
local HERE = debug.getinfo(1, "S").short_src

-- One dtype of each size, with the kernel's name for its elements.
local pair = luacuda.record { { "re", "float64" }, { "im", "float64" } }
local DTYPES = {
  { name = "int8", dtype = "int8", ctype = "signed char" },
  { name = "float16", dtype = "float16", ctype = "__half" },
  { name = "float32", dtype = "float32", ctype = "float" },
  { name = "float64", dtype = "float64", ctype = "double" },
  { name = "pair", dtype = pair, ctype = "Pair", label = "record{re: float64, im: float64}" },
}
local SIZES = { 1, 16, 65541 }
local KINDS = { device = luacuda.device_array, managed = luacuda.managed_array,
                mapped = luacuda.mapped_array }

-- For each dtype, a kernel that reads and one that writes x[i] for every
-- i <= n: thread n, in block n // 256, runs one element past the end.
local function source()
  local parts = { "#include <cuda_fp16.h>\n", pair:c_declaration("Pair"), "\n" }
  for _, d in ipairs(DTYPES) do
    parts[#parts + 1] = ([[
extern "C" __global__ void read_NAME(const T *x, T *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[0] = x[i];
}
extern "C" __global__ void write_NAME(T *x, int n, int back) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) x[i - back] = x[0];
}
]]):gsub("NAME", d.name):gsub("T %*", d.ctype .. " *")
  end
  return table.concat(parts)
end

-- A zeroed array of n elements of kind, and the line that allocated it.
local function zeroed(kind, n, dtype)
  local a, line = KINDS[kind](n, dtype), debug.getinfo(1, "l").currentline
  a[{ {} }] = luacuda.zeros(n, dtype)
  return a, line
end

describe("memory checking on the simulator", function()
  if not sim then
    it("needs the simulator", function() pending("not on the simulator") end)
    return
  end
  local m = luacuda.compile(source(), { name = "memcheck.cu" })

  -- at 1, blocks stay 16-byte aligned (float4 loads), so one element past
  -- the end faults where the size is a multiple of 16 bytes; =3 below
  -- checks every size
  for kind in pairs(KINDS) do
    for _, d in ipairs(DTYPES) do
      it(("faults one element past the end of %s %s arrays of a multiple of 16 bytes, read and "
          .. "written #oob"):format(kind, d.name), function()
        for _, n in ipairs(SIZES) do
          if n * luacuda.device_array(1, d.dtype).itemsize % 16 ~= 0 then n = n * 16 end
          local x, line = zeroed(kind, n, d.dtype)
          local out = zeroed("device", 1, d.dtype)
          local blocks = n // 256 + 1
          local where = ("in block (%d, 0, 0), thread (%d, 0, 0): the access at byte %d runs "
                         .. "past the end of %s array of shape {%d} allocated at %s:%d (%d bytes at")
                        :format(n // 256, n % 256, n * x.itemsize, d.label or d.dtype, n, HERE,
                                line, n * x.itemsize)
          m["read_" .. d.name][{ blocks, 256 }](x, out, n)
          S.misuse({ ("luacuda.synchronize: kernel 'read_%s' failed: illegal memory access at "
                      .. "address 0x"):format(d.name), "SIGSEGV", where }, luacuda.synchronize)
          m["write_" .. d.name][{ blocks, 256 }](x, n, 0)
          S.misuse({ ("luacuda.synchronize: kernel 'write_%s' failed: illegal memory access at "
                      .. "address 0x"):format(d.name), where }, luacuda.synchronize)
          -- up to the last element is fine
          m["read_" .. d.name][{ blocks, 256 }](x, out, n - 1)
          m["write_" .. d.name][{ blocks, 256 }](x, n - 1, 0)
          luacuda.synchronize()
        end
      end)
    end
  end

  it("keeps each array aligned to 16 bytes, and to 256 where its size allows", function()
    local probe = luacuda.compile([[
      extern "C" __global__ void addr(const unsigned char *a, unsigned long long *out) {
        out[0] = (unsigned long long)a;
      }]])
    local out = luacuda.device_array(1, "uint64")
    for _, d in ipairs(DTYPES) do
      for _, n in ipairs({ 1, 3, 16, 65541 }) do
        local a = zeroed("device", n, d.dtype)
        probe.addr[{ 1, 1 }](a:view("uint8"), out)
        local bytes = n * a.itemsize
        local want = math.max(16, math.min(256, bytes & -bytes))
        assert.equal(0, out[1] % want, ("%s[%d]"):format(d.name, n))
      end
    end
  end)

  it("reads and writes arrays of any size through float4 and double2", function()
    local v = luacuda.compile([[
      extern "C" __global__ void axpy4(int n, float a, const float *x, float *y) {
        const float4 *x4 = reinterpret_cast<const float4 *>(x);
        float4 *y4 = reinterpret_cast<float4 *>(y);
        for (int i = threadIdx.x; i < n / 4; i += blockDim.x) {
          float4 p = x4[i], q = y4[i];
          q.x += a * p.x; q.y += a * p.y; q.z += a * p.z; q.w += a * p.w;
          y4[i] = q;
        }
        for (int i = n / 4 * 4 + threadIdx.x; i < n; i += blockDim.x) y[i] += a * x[i];
      }
      extern "C" __global__ void twice2(int n, double *x) {
        double2 *x2 = reinterpret_cast<double2 *>(x);
        for (int i = threadIdx.x; i < n / 2; i += blockDim.x) { x2[i].x *= 2; x2[i].y *= 2; }
        if (n % 2 && threadIdx.x == 0) x[n - 1] *= 2;
      }]])
    for _, n in ipairs({ 1, 3, 5, 1003 }) do
      local xs, ys, want = {}, {}, {}
      for i = 1, n do xs[i], ys[i], want[i] = i, 2 * i, 2 * i + 1.5 * i end
      local y = luacuda.to_device(ys, { dtype = "float32" })
      v.axpy4[{ 1, 64 }](n, 1.5, luacuda.to_device(xs, { dtype = "float32" }), y)
      assert.same(want, S.host_values(y))
      local d = luacuda.to_device(xs, { dtype = "float64" })
      v.twice2[{ 1, 64 }](n, d)
      for i = 1, n do want[i] = 2 * i end
      assert.same(want, S.host_values(d))
    end
  end)

  it("still faults past the end of the allocation through a view #oob", function()
    local x, line = zeroed("device", 64, "float32")
    local tail = x[{ { 49, 64 } }]
    m.write_float32[{ 1, 256 }](tail, 16, 0)
    S.misuse({ "kernel 'write_float32' failed", "thread (16, 0, 0): the access at byte 256 runs "
               .. "past the end of float32 array of shape {64} allocated at " .. HERE .. ":" .. line },
             luacuda.synchronize)
  end)

  it("names the script's line, not luacuda's own Lua file, for a SmartArray's device memory #oob", function()
    local opts = { shape = { 16 }, dtype = "float32", where = "gpu" }
    -- an array of this file first: its frame is then the last one named,
    -- and smart.lua's frames must still be passed over
    luacuda.device_array(16, "float32"):close()
    local sa, line = luacuda.smart_array(opts), debug.getinfo(1, "l").currentline
    m.write_float32[{ 1, 256 }](sa, 16, 0)
    S.misuse({ "the access at byte 64 runs past the end of float32 array of shape {16} "
               .. "allocated at " .. HERE .. ":" .. line .. " (" }, luacuda.synchronize)
  end)

  it("names each array's own line and shape, after many alike from another line #oob", function()
    local xs = {}
    for k = 1, 3 do xs[k] = luacuda.device_array(64, "float32") end
    local loop = debug.getinfo(1, "l").currentline - 1
    local y, line = luacuda.device_array(64, "float32"), debug.getinfo(1, "l").currentline
    local z = luacuda.device_array(32, "float32")
    m.write_float32[{ 1, 256 }](y, 64, 0)
    S.misuse({ "past the end of float32 array of shape {64} allocated at " .. HERE .. ":" .. line
               .. " (" }, luacuda.synchronize)
    m.write_float32[{ 1, 256 }](z, 32, 0)
    S.misuse({ "past the end of float32 array of shape {32} allocated at " .. HERE .. ":"
               .. line + 1 .. " (" }, luacuda.synchronize)
    m.write_float32[{ 1, 256 }](xs[3], 64, 0)
    S.misuse({ "past the end of float32 array of shape {64} allocated at " .. HERE .. ":" .. loop
               .. " (" }, luacuda.synchronize)
  end)

  it("names each array's own shape and dtype, of several made at one line #oob", function()
    -- the label of the array before, made at the same line, must not serve
    local D = luacuda.device_array
    local _, y, z = D({ 4, 16 }, "float32"), D({ 4, 8 }, "float32"), D({ 4, 8 }, "int8")
    local line = debug.getinfo(1, "l").currentline - 1
    m.write_float32[{ 1, 256 }](y, 32, 0)
    S.misuse({ "past the end of float32 array of shape {4, 8} allocated at " .. HERE .. ":" .. line
               .. " (" }, luacuda.synchronize)
    m.write_int8[{ 1, 256 }](z, 32, 0)
    S.misuse({ "past the end of int8 array of shape {4, 8} allocated at " .. HERE .. ":" .. line
               .. " (" }, luacuda.synchronize)
  end)

  it("names each chunk's own line, where two chunks allocate alike at one line number #oob", function()
    local make = [[local luacuda = ...; return luacuda.device_array(16, "float32")]]
    load(make, "=first")(luacuda)
    local y = load(make, "=second")(luacuda)
    m.write_float32[{ 1, 256 }](y, 16, 0)
    S.misuse({ "past the end of float32 array of shape {16} allocated at second:1 (" },
             luacuda.synchronize)
  end)

  it("names array math's results by their operation, and every other array by its line #oob", function()
    local x = zeroed("device", 16, "float32")
    local y, z = x + x, luacuda.exp(x)
    m.write_float32[{ 1, 256 }](y, 16, 0)
    S.misuse({ "past the end of float32 array of shape {16} made by add (+) at a line "
               .. "LUACUDA_SIM_MEMCHECK=3 names (64 bytes at" }, luacuda.synchronize)
    m.write_float32[{ 1, 256 }](z, 16, 0)
    S.misuse({ "past the end of float32 array of shape {16} made by exp at a line" },
             luacuda.synchronize)
    -- the result's label must not serve the next array of its shape, made by name
    local w, wline = luacuda.device_array(16, "float32"), debug.getinfo(1, "l").currentline
    m.write_float32[{ 1, 256 }](w, 16, 0)
    S.misuse({ "past the end of float32 array of shape {16} allocated at " .. HERE .. ":" .. wline
               .. " (" }, luacuda.synchronize)
  end)

  it("does not catch an access before the start unless strict", function()
    local x = zeroed("device", 16, "float32")
    m.write_float32[{ 1, 256 }](x[{ { 2, 16 } }], 14, 1)   -- x[0 - 1] of the view: in x
    luacuda.synchronize()
  end)
end)

describe("LUACUDA_SIM_MEMCHECK", function()
  if not sim then
    it("needs the simulator", function() pending("not on the simulator") end)
    return
  end

  -- the chunk run in a child process: each case prints its outcome
  local function run(env, body)
    local ok, out = S.lua_run(env, [[
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[
        extern "C" __global__ void at(float *x, int i) { x[i] = 1.0f; }
        extern "C" __global__ void shared(float *y, int i, int j) {
          SHARED_ARRAY(float, tile, 4, 8);
          tile[i][j] = 2.0f;
          __syncthreads();
          y[threadIdx.x] = tile[i][j];
        }
        __shared__ int hits[4];
        template <int N> __device__ float pick(int i) { __shared__ float t[N]; t[i] = 1; return t[i]; }
        extern "C" __global__ void raw(float *y, int i, int j) {
          __shared__ __align__(16) float tile[4][8], one;
          tile[i][j] = 2.0f;
          one = 1.0f;
          __syncthreads();
          hits[threadIdx.x % 4] = 1;
          y[threadIdx.x] = tile[i][j] + one + pick<8>(j);
        }
        extern "C" __global__ void local_(float *y, int n) {
          LOCAL_ARRAY(int, l, 4);
          for (int k = 0; k < n; k++) l[k] = k;
          y[threadIdx.x] = l[n - 1];
        }]=], {name = "strict.cu"})
      local function try(what, f, ...)
        f(...)
        local ok, err = pcall(luacuda.synchronize)
        print(what, ok, err)
      end
    ]] .. body)
    assert.is_true(ok, out)
    return out
  end

  it("=0 turns checking off: an access past the end is silent #oob", function()
    local out = run("LUACUDA_SIM_MEMCHECK=0", [[
      local x = luacuda.device_array(16, "float32")
      x:fill(0)
      try("past", m.at[{1, 1}], x, 16)]])
    assert.truthy(out:find("past\ttrue", 1, true), out)
  end)

  -- issue 29, finding 12: the small-block arena's free list had room for
  -- the blocks free when a slab was added, not for every block handed out
  it("=0 frees more small arrays than its first slabs held, and carries on", function()
    local out = run("LUACUDA_SIM_MEMCHECK=0", [[
      local keep = {}
      for i = 1, 5 * 4096 + 1 do keep[i] = luacuda.device_array(4, "float32") end
      for i = 1, #keep, 97 do keep[i]:fill(i) end
      keep = nil
      collectgarbage()
      collectgarbage()
      local a = luacuda.to_device(luacuda.arange(4, "float32"))
      local total = 0
      for _ = 1, 3000 do total = total + (a + a):sum() end
      print("total", total)
      local again = {}
      for i = 1, 5 * 4096 + 1 do again[i] = luacuda.device_array(4, "float32") end
      again[#again]:fill(2)
      print("last", again[#again]:sum())]])
    assert.truthy(out:find("total	36000", 1, true), out)
    assert.truthy(out:find("last	8", 1, true), out)
  end)

  it("=3 and =2 name the line of array math's results too #oob", function()
    for _, mode in ipairs({ 3, 2 }) do
      -- strict mode faults from the page after the array's end on
      local past = mode == 2 and 1024 + 4096 // 4 or 1024
      local out = run("LUACUDA_SIM_MEMCHECK=" .. mode, ([[
        local x = luacuda.device_array(1024, "float32")
        x:fill(1)
        local y = x + x
        try("past", m.at[{1, 1}], y, %d)]]):format(past))
      assert.truthy(out:find("float32 array of shape {1024} allocated at [^\n]*:%d+ %("), out)
      assert.falsy(out:find("made by", 1, true), out)
    end
  end)

  it("=3 catches one element past the end of every kind, dtype and size #oob", function()
    local dts = {}
    for _, d in ipairs(DTYPES) do dts[#dts + 1] = ("%q"):format(d.name) end
    local out = run("LUACUDA_SIM_MEMCHECK=3", ([[
      local pair = luacuda.record { { "re", "float64" }, { "im", "float64" } }
      local e = luacuda.compile(%q, {name = "exact.cu"})
      local names = { %s }
      local dtypes = { int8 = "int8", float16 = "float16", float32 = "float32", float64 = "float64",
                       pair = pair }
      for _, make in ipairs({luacuda.device_array, luacuda.managed_array, luacuda.mapped_array}) do
        for _, name in ipairs(names) do
          for _, n in ipairs({1, 16, 65541}) do
            local x = make(n, dtypes[name])
            x[{{}}] = luacuda.zeros(n, dtypes[name])
            local o = luacuda.device_array(1, dtypes[name])
            o[{{}}] = luacuda.zeros(1, dtypes[name])
            try("inside", e["read_" .. name][{n // 256 + 1, 256}], x, o, n - 1)
            try("past", e["read_" .. name][{n // 256 + 1, 256}], x, o, n)
            try("past", e["write_" .. name][{n // 256 + 1, 256}], x, n, 0)
          end
        end
      end]]):format(source(), table.concat(dts, ", ")))
    local _, inside = out:gsub("inside\ttrue", "")
    assert.equal(3 * #DTYPES * 3, inside, out)
    local _, past = out:gsub("past\tfalse\t[^\n]*illegal memory access at address 0x%x+ [^\n]* runs "
                             .. "past the end of [^\n]+ array of shape {%d+} allocated at", "")
    assert.equal(2 * 3 * #DTYPES * 3, past, out)
  end)

  it("=2 catches one element before the start of every kind and size #oob", function()
    local out = run("LUACUDA_SIM_MEMCHECK=2", [[
      for _, make in ipairs({luacuda.device_array, luacuda.managed_array, luacuda.mapped_array}) do
        for _, n in ipairs({1, 16, 65541}) do
          local x = make(n, "float32")
          x:fill(0)
          try("inside", m.at[{1, 1}], x, n - 1)
          try("before", m.at[{1, 1}], x, -1)
        end
      end]])
    local _, inside = out:gsub("inside\ttrue", "")
    assert.equal(9, inside, out)
    local _, before = out:gsub("before\tfalse\t[^\n]*kernel 'at' failed: illegal memory access at "
                               .. "address 0x%x+ %(SIGSEGV; CUDA_ERROR_ILLEGAL_ADDRESS on a GPU%) in "
                               .. "block %(0, 0, 0%), thread %(0, 0, 0%): the access at byte %-4 is "
                               .. "before the start of float32 array of shape {%d+} allocated at "
                               .. "[^\n]+:%d+ %(%d+ bytes at 0x%x+%)", "")
    assert.equal(9, before, out)
  end)

  it("=2 bounds-checks SHARED_ARRAY and LOCAL_ARRAY, naming the array and the thread", function()
    local out = run("LUACUDA_SIM_MEMCHECK=2", [[
      local y = luacuda.device_array(32, "float32")
      y:fill(0)
      try("shared in", m.shared[{1, 32}], y, 3, 7)
      try("shared row", m.shared[{1, 32}], y, 4, 0)
      try("shared column", m.shared[{1, 32}], y, 0, 8)
      try("shared negative", m.shared[{1, 32}], y, 0, -1)
      try("local in", m.local_[{1, 32}], y, 4)
      try("local past", m.local_[{1, 32}], y, 5)]])
    assert.truthy(out:find("shared in\ttrue", 1, true), out)
    assert.truthy(out:find("shared row\tfalse\tluacuda.synchronize: kernel 'shared' failed: index 4 "
                           .. "is out of bounds of shared array 'tile' (dimension 1 of 2 has 4 "
                           .. "elements) in block (0, 0, 0), thread (0, 0, 0)", 1, true), out)
    assert.truthy(out:find("shared column\tfalse\tluacuda.synchronize: kernel 'shared' failed: index "
                           .. "8 is out of bounds of shared array 'tile' (dimension 2 of 2 has 8 "
                           .. "elements)", 1, true), out)
    assert.truthy(out:find("shared negative\tfalse\t[^\n]*index %-1 is out of bounds of shared "
                           .. "array 'tile'"), out)
    assert.truthy(out:find("local in\ttrue", 1, true), out)
    assert.truthy(out:find("local past\tfalse\tluacuda.synchronize: kernel 'local_' failed: index 4 "
                           .. "is out of bounds of local array 'l' (dimension 1 of 1 has 4 "
                           .. "elements) in block (0, 0, 0), thread (0, 0, 0)", 1, true), out)
  end)

  it("=2 bounds-checks static __shared__ arrays, in templates and at namespace scope too", function()
    local out = run("LUACUDA_SIM_MEMCHECK=2", [[
      local y = luacuda.device_array(32, "float32")
      y:fill(0)
      try("raw in", m.raw[{1, 32}], y, 3, 7)
      try("raw row", m.raw[{1, 32}], y, 4, 0)
      try("raw column", m.raw[{1, 32}], y, 0, 8)]])
    assert.truthy(out:find("raw in\ttrue", 1, true), out)
    assert.truthy(out:find("raw row\tfalse\tluacuda.synchronize: kernel 'raw' failed: index 4 is "
                           .. "out of bounds of shared array 'tile' (dimension 1 of 2 has 4 "
                           .. "elements) in block (0, 0, 0), thread (0, 0, 0)", 1, true), out)
    -- tile[0][8] is caught first, in its second dimension
    assert.truthy(out:find("raw column\tfalse\tluacuda.synchronize: kernel 'raw' failed: index 8 "
                           .. "is out of bounds of shared array 'tile' (dimension 2 of 2", 1, true),
                  out)
  end)

  -- issue 29, finding 8: the rewrite's checked arrays are classes, which
  -- do not convert where a C array does, and the library's own kernels
  -- (matmul's tiles, the reduction generator's buffer) did not compile
  it("=2 compiles what NVRTC compiles: the library's kernels and arrays used as pointers", function()
    local out = run("LUACUDA_SIM_MEMCHECK=2", [[
      -- the library's kernels, and every kernel file it ships
      local a = luacuda.arange(12, "float32"):reshape(3, 4)
      local b = luacuda.arange(8, "float32"):reshape(4, 2)
      local c = luacuda.matmul(luacuda.to_device(a), luacuda.to_device(b)):copy_to_host()
      print("matmul", table.concat(c:ravel():totable(), " "))
      local l2 = luacuda.reduction("T x", "T y", "x * x", "a + b", "y = a", "0", "sumsq")
      print("reduction", l2(luacuda.to_device(luacuda.arange(10, "float32"))):copy_to_host()[{}])
      local add = luacuda.elementwise("T x, T y", "T z", "z = x + 2 * y", "add2")
      local x = luacuda.to_device(luacuda.arange(10, "float32"))
      print("elementwise", add(x, x):copy_to_host():sum())
      for f in io.popen("ls kernels/*.cu examples/kernels/*.cu"):lines() do
        print("file", f, pcall(luacuda.compile_file, f, {options = {"-Ikernels"}}))
      end
      -- a byte buffer read as floats, beside an array used by subscripts
      local u = luacuda.compile([=[
        #define AS_FLOATS(b) reinterpret_cast<float *>(b)
        extern "C" __global__ void k(float *out, int i) {
          __shared__ __align__(16) unsigned char buf[64], bytes[64];
          __shared__ float tile[16];
          float *f = reinterpret_cast<float *>(buf);
          f[threadIdx.x] = threadIdx.x;
          AS_FLOATS(bytes)[threadIdx.x] = 2 * threadIdx.x;
          tile[threadIdx.x] = 100;
          __syncthreads();
          out[threadIdx.x] = f[threadIdx.x] + AS_FLOATS(bytes)[threadIdx.x] + tile[i];
        }]=], {name = "cast.cu"})
      local y = luacuda.device_array(16, "float32")
      try("cast", u.k[{1, 16}], y, 15)
      print("cast sum", y:sum())
      try("cast past", u.k[{1, 16}], y, 16)
      -- what the checked arrays cannot be: the module is compiled unchecked
      local w = luacuda.compile([=[
        template <typename T> __device__ T first(T *p) { return p[0]; }
        extern "C" __global__ void k(float *out) {
          __shared__ float tile[2][16];
          SHARED_ARRAY(float, s, 16);
          tile[threadIdx.x / 16][threadIdx.x % 16] = threadIdx.x;
          s[threadIdx.x % 16] = 1;
          __syncthreads();
          auto row = tile[1];
          float *p = reinterpret_cast<float *>(s);
          out[threadIdx.x] = first(tile[0]) + row[threadIdx.x % 16] + p[0];
        }]=], {name = "plain.cu"})
      local z = luacuda.device_array(32, "float32")
      try("plain", w.k[{1, 32}], z)
      print("plain sum", z:sum())]])
    assert.truthy(out:find("matmul\t28.0 34.0 76.0 98.0 124.0 162.0\n", 1, true), out)
    assert.truthy(out:find("reduction\t285.0", 1, true), out)
    assert.truthy(out:find("elementwise\t135.0", 1, true), out)
    -- every kernel file compiled, and there are the library's and the examples'
    local _, files = out:gsub("\nfile\t[%w/_]+%.cu\t", "")
    local _, compiled = out:gsub("\nfile\t[%w/_]+%.cu\ttrue", "")
    assert.is_true(files >= 9, out)
    assert.equal(files, compiled, out)
    assert.truthy(out:find("cast\ttrue", 1, true), out)
    assert.truthy(out:find("cast sum\t1960.0", 1, true), out)
    assert.truthy(out:find("cast past\tfalse\t[^\n]*index 16 is out of bounds of shared array "
                           .. "'tile'"), out)
    assert.truthy(out:find("plain\ttrue", 1, true), out)
    -- each thread t: tile[0][0] + tile[1][t % 16] + s[0], twice 0 + (16 + ... + 31) + 16
    assert.truthy(out:find("plain sum\t784.0", 1, true), out)
    assert.truthy(out:find("luacuda: k: compiled without strict memory checking's bounds checks",
                           1, true), out)
  end)

  it("=1 leaves SHARED_ARRAY and LOCAL_ARRAY unchecked, as plain arrays", function()
    local out = run("LUACUDA_SIM_MEMCHECK=1", [[
      local y = luacuda.device_array(32, "float32")
      y:fill(0)
      try("shared in", m.shared[{1, 32}], y, 3, 7)
      try("shared column", m.shared[{1, 32}], y, 0, 8)   -- tile[1][0]: inside the array]])
    assert.truthy(out:find("shared in\ttrue", 1, true), out)
    assert.truthy(out:find("shared column\ttrue", 1, true), out)
  end)

  it("refuses a value other than 0, 1, 2 or 3 at require time", function()
    for _, bad in ipairs({ "4", "on", "-1" }) do
      local ok, out = S.sh("LUACUDA_BACKEND=sim LUACUDA_SIM_MEMCHECK=" .. bad
                           .. " lua5.4 -e 'require \"luacuda\"'")
      assert.is_false(ok, bad)
      assert.truthy(out:find("LUACUDA_SIM_MEMCHECK=" .. bad, 1, true), out)
    end
  end)
end)

-- issue 29, finding 10: x86 makes a misaligned access, a GPU fails it
-- (CUDA_ERROR_MISALIGNED_ADDRESS); the simulator does too with strict
-- checking (LUACUDA_SIM_MEMCHECK=2, where its cost goes: docs/memcheck.md),
-- the fake driver's interpreter always. Each case in a process of its own
-- on the CUDA backend, whose context a fault ends.
describe("a misaligned access in a kernel", function()
  local SOURCE = [=[
    #include <cuda_fp16.h>
    extern "C" __global__ void st2(char *b, int off) { *(short *)(b + off) = 1; }
    extern "C" __global__ void st4(char *b, int off) { *(float *)(b + off) = 1.0f; }
    extern "C" __global__ void ld8(char *b, int off, char *out) {
      *(double *)out = *(const double *)(b + off);
    }
    extern "C" __global__ void ld16(char *b, int off, char *out) {
      *(float4 *)out = *(const float4 *)(b + off);
    }
    extern "C" __global__ void st16(char *b, int off) { *(double2 *)(b + off) = make_double2(1, 2); }
    extern "C" __global__ void add4(char *b, int off) { atomicAdd((int *)(b + off), 1); }
    extern "C" __global__ void add8(char *b, int off) { atomicAdd((double *)(b + off), 1.0); }
    extern "C" __global__ void add2(char *b, int off) {
      atomicAdd((__half *)(b + off), __float2half(1.0f));
    }]=]
  -- kernel, the offsets that fault, the access's size
  local CASES = {
    {"st2", 1, 2}, {"st4", 2, 4}, {"ld8", 4, 8}, {"ld16", 8, 16}, {"st16", 4, 16},
    {"add4", 2, 4}, {"add8", 4, 8}, {"add2", 1, 2},
  }

  -- Run the cases in a child: each launch at an aligned offset, then at a
  -- misaligned one; prints each outcome.
  local function run(cases)
    local lines = {}
    for _, c in ipairs(cases) do
      lines[#lines + 1] = ("try(%q, %d, %d)"):format(c[1], c[3], c[2])
    end
    local ok, out = S.lua_run(S.backend == "sim" and "LUACUDA_SIM_MEMCHECK=2" or "", ([[
      local luacuda = require "luacuda"
      local m = luacuda.compile(%q, {name = "misaligned.cu"})
      local b = luacuda.device_array(256, "int8")
      b:fill(0)
      local out = luacuda.device_array(16, "int8")
      function try(name, aligned, off)
        local k = m[name]
        local args = name:find("^ld") and {b, 0, out} or {b, 0}
        args[2] = aligned
        k[{1, 1}](table.unpack(args))
        print(name, "aligned", pcall(luacuda.synchronize))
        args[2] = off
        k[{1, 1}](table.unpack(args))
        print(name, "misaligned", pcall(luacuda.synchronize))
      end
      %s]]):format(SOURCE, table.concat(lines, "\n")))
    assert.is_true(ok, out)
    return out
  end

  it("fails the launch for loads, stores and atomics of 2, 4, 8 and 16 bytes", function()
    local outs = {}
    if S.backend == "sim" then
      outs[1] = run(CASES)
    else
      for _, c in ipairs(CASES) do outs[#outs + 1] = run({c}) end
    end
    local out = table.concat(outs)
    for _, c in ipairs(CASES) do
      assert.truthy(out:find(c[1] .. "\taligned\ttrue", 1, true), out)
      local line = out:match(c[1] .. "\tmisaligned\t([^\n]*)")
      assert.truthy(line and line:find("^false\t.*CUDA_ERROR_MISALIGNED_ADDRESS"), out)
      if S.backend == "sim" then
        assert.truthy(line:find(("kernel '%s' failed: misaligned address 0x%%x+: .*which needs a "
                                 .. "multiple of %d %%(CUDA_ERROR_MISALIGNED_ADDRESS on a GPU%%) "
                                 .. "in block %%(0, 0, 0%%), thread %%(0, 0, 0%%)"):format(c[1], c[3])),
                      line)
      end
    end
  end)
end)
