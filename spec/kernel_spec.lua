-- Kernels: compiling, the prelude's vocabulary, launches in both forms,
-- argument checks, shared/local/dynamic memory, barriers, atomics, strided
-- Array<T, N> views and module globals, on the active backend.
local luacuda = require "luacuda"
local S = require "spec.support"

local values = S.host_values

-- One module with most test kernels, compiled once for the file.
local SOURCE = [[
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = grid1();
  if (i < n) y[i] = a * x[i] + y[i];
}

// every position helper, for each thread of a 3-D launch
extern "C" __global__ void positions(int *out, int stride) {
  int3 g = grid3();
  int3 s = gridsize3();
  int lin = g.x + s.x * (g.y + s.y * g.z);
  int *o = out + lin * stride;
  o[0] = g.x; o[1] = g.y; o[2] = g.z;
  o[3] = gridsize1(); o[4] = gridsize2().y; o[5] = s.z;
  o[6] = get_global_id(0) + 100 * get_global_id(1) + 10000 * get_global_id(2);
  o[7] = get_local_id(0) + 100 * get_local_id(1) + 10000 * get_local_id(2);
  o[8] = get_group_id(0) + 100 * get_group_id(1) + 10000 * get_group_id(2);
  o[9] = get_local_size(0) + 100 * get_local_size(1) + 10000 * get_local_size(2);
  o[10] = get_global_size(0) + 100 * get_global_size(1) + 10000 * get_global_size(2);
  o[11] = get_num_groups(0) + 100 * get_num_groups(1) + 10000 * get_num_groups(2);
  o[12] = laneid();
  o[13] = grid1();
  o[14] = grid2().x + 1000 * grid2().y;
}

extern "C" __global__ void reduce(const float *x, float *out, int n) {
  SHARED_ARRAY(float, s, 256);
  int t = threadIdx.x, i = grid1();
  s[t] = i < n ? x[i] : 0.0f;
  syncthreads();
  for (int k = blockDim.x / 2; k > 0; k /= 2) {
    if (t < k) s[t] += s[t + k];
    syncthreads();
  }
  if (t == 0) atomicAdd(out, s[0]);
}

extern "C" __global__ void votes(int *out) {
  int t = threadIdx.x;
  int c = syncthreads_count(t % 3 == 0);
  int a = syncthreads_and(t >= 0);
  int a2 = syncthreads_and(t != 5);
  int o = syncthreads_or(t == 5);
  int o2 = syncthreads_or(t < 0);
  out[t] = c * 10000 + a * 1000 + a2 * 100 + o * 10 + o2;
}

// transpose through a 2-D shared tile
extern "C" __global__ void tile_transpose(const float *in, float *out, int n) {
  SHARED_ARRAY(float, tile, 8, 8);
  int x = blockIdx.x * 8 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y * n + x];
  syncthreads();
  int tx = blockIdx.y * 8 + threadIdx.x, ty = blockIdx.x * 8 + threadIdx.y;
  out[ty * n + tx] = tile[threadIdx.x][threadIdx.y];
}

extern "C" __global__ void cube(int *out) {
  SHARED_ARRAY(int, c, 2, 3, 4);
  c[threadIdx.z][threadIdx.y][threadIdx.x] = threadIdx.x + 10 * threadIdx.y + 100 * threadIdx.z;
  barrier();
  int i = threadIdx.x + 4 * (threadIdx.y + 3 * threadIdx.z);
  out[i] = c[1 - threadIdx.z][2 - threadIdx.y][3 - threadIdx.x];
}

extern "C" __global__ void dynamic(float *out) {
  DYNAMIC_SHARED(float, a);
  DYNAMIC_SHARED(int, same);   // every declaration shares the memory
  a[threadIdx.x] = threadIdx.x * 1.5f;
  syncthreads();
  out[threadIdx.x] = a[blockDim.x - 1 - threadIdx.x] + (same == (int *)a ? 0.0f : 1000.0f);
}

extern "C" __global__ void raw_dynamic(int *out) {
  extern __shared__ int buf[];
  buf[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = buf[(threadIdx.x + 1) % blockDim.x];
}

// reads the far end of n ints of dynamic shared memory
extern "C" __global__ void far_dynamic(int *out, int n) {
  extern __shared__ int far[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) far[i] = i;
  __syncthreads();
  out[threadIdx.x] = far[n - 1 - threadIdx.x];
}

extern "C" __global__ void locals(int *out) {
  LOCAL_ARRAY(int, l, 4);
  LOCAL_ARRAY(int, m, 2, 2);
  for (int k = 0; k < 4; k++) l[k] = threadIdx.x * k;
  m[1][1] = l[3];
  syncthreads();            // locals stay per thread across a barrier
  out[threadIdx.x] = m[1][1] + l[2];
}

// a thread's parameters are its own, across a barrier too: the odd threads
// change theirs (an Array, passed in memory, and an int) before it
extern "C" __global__ void own_params(Array<int, 1> a, int k) {
  if (threadIdx.x % 2) {
    a.data += blockDim.x;
    a.shape[0] = 1000;
    k += 100;
  }
  __syncthreads();
  a.data[threadIdx.x] = k + (int)a.shape[0];
}

extern "C" __global__ void warps(int *out) {
  SHARED_ARRAY(int, s, 64);
  s[threadIdx.x] = threadIdx.x;
  wavebarrier();
  out[threadIdx.x] = s[threadIdx.x ^ 1];
}

extern "C" __global__ void fences(int *out) {
  threadfence();
  threadfence_block();
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  mem_fence(CLK_LOCAL_MEM_FENCE);
  barrier(CLK_LOCAL_MEM_FENCE);
  barrier(CLK_GLOBAL_MEM_FENCE);
  out[threadIdx.x] = warpSize;
}

extern "C" __global__ void atomics(int *i, unsigned *u, unsigned long long *ull, float *f,
                                   double *d, int *mx, int *mn, unsigned *inc, int *cas) {
  atomicAdd(i, 1);
  atomicSub(i + 1, 2);
  atomicAdd(u, 3u);
  atomicAdd(ull, 5ull);
  atomicAdd(f, 0.5f);
  atomicAdd(d, 0.25);
  atomicMax(mx, (int)(blockIdx.x * blockDim.x + threadIdx.x));
  atomicMin(mn, -(int)(blockIdx.x * blockDim.x + threadIdx.x));
  atomicInc(inc, 9u);
  atomicCAS(cas, 0, 7);
}

extern "C" __global__ void fill2d(Array<int, 2> a) {
  int i = blockIdx.x, j = threadIdx.x;
  if (i < a.shape[0] && j < a.shape[1]) a(i, j) = 10 * i + j;
}

extern "C" __global__ void sum3d(Array<const double, 3> a, double *out) {
  double s = 0;
  for (long long i = 0; i < a.shape[0]; i++)
    for (long long j = 0; j < a.shape[1]; j++)
      for (long long k = 0; k < a.shape[2]; k++) s += a(i, j, k);
  out[0] = s;
  out[1] = (double)a.size();
  out[2] = (double)a.strides[0];
}

__constant__ float coef[4];
__device__ int counter;

extern "C" __global__ void use_globals(float *out) {
  out[threadIdx.x] = coef[threadIdx.x] * 2.0f;
  atomicAdd(&counter, 1);
}

extern "C" __global__ void scalars(signed char a, unsigned short b, long long c, double d,
                                   bool e, size_t f, double *out) {
  out[0] = a; out[1] = b; out[2] = (double)c; out[3] = d; out[4] = e ? 1 : 0; out[5] = (double)f;
}

extern "C" __global__ void anything(void *p, int n) {
  unsigned char *b = (unsigned char *)p;
  for (int k = 0; k < n; k++) b[k] = 0xAB;
}

extern "C" __global__ void nothing() {}

extern "C" __global__ void early_return(int *out) {
  if (threadIdx.x == 3) return;
  syncthreads();
  out[threadIdx.x] = 1;
}

__global__ void cplusplus(int *out) { out[0] = 1; }
]]

local m
setup(function()
  m = luacuda.compile(SOURCE, {name = "kernels.cu"})
end)

describe("compile", function()
  it("finds the kernels by name, each as one object", function()
    assert.equal("luacuda.kernel", getmetatable(m.saxpy))   -- protected
    assert.equal(m.saxpy, m:get("saxpy"))
    assert.equal("saxpy", m.saxpy.name)
    assert.equal(4, m.saxpy.nparams)
    assert.equal("int, float, const float *, float *", m.saxpy.signature)
    local names = m:kernels()
    assert.equal("saxpy", names[1])
    assert.truthy(tostring(m):find("kernels.cu", 1, true))
  end)

  it("names the kernels a module has when one is missing", function()
    S.misuse({"luacuda.get: kernels.cu has no kernel 'saxpi'", "saxpy, positions"},
             m.get, m, "saxpi")
    S.misuse("luacuda.index: kernels.cu has no kernel 'nope'", function() return m.nope end)
  end)

  it("finds a kernel with C++ linkage by its own name", function()
    local out = luacuda.to_device(luacuda.zeros(1, "int32"))
    m:get("cplusplus")[{1, 1}](out)
    assert.same({1}, S.host_values(out))
  end)

  it("takes any kernel name, the simulator's own short names included", function()
    local mm = luacuda.compile([[
extern "C" __global__ void l(int *o) { o[0] = 1; }
extern "C" __global__ void w(int *o) { o[1] = 2; }
extern "C" __global__ void b(int *o) { o[2] = 3; }
extern "C" __global__ void K(int *o) { o[3] = 4; }
]])
    local out = luacuda.to_device(luacuda.zeros(4, "int32"))
    for _, k in ipairs({"l", "w", "b", "K"}) do mm[k][{1, 1}](out) end
    assert.same({1, 2, 3, 4}, S.host_values(out))
  end)

  it("raises the compiler's log with the user's line numbers", function()
    -- g++ writes file:line, NVRTC file(line); NVRTC's error comes first
    -- where the simulator checks with it
    local gxx = S.backend == "sim" and not S.nvrtc_checks()
    local line = gxx and "bad.cu:3" or "bad.cu(3)"
    local err = S.misuse({"luacuda.compile: compilation of bad.cu failed", line},
      luacuda.compile, "extern \"C\" __global__ void k(int *o) {\n  int a = 1;\n  o[0] = a +;\n}",
      {name = "bad.cu"})
    assert.is_nil(err:find("sim_runtime", 1, true), err)
  end)

  it("names the prelude's own lines in an error found there", function()
    -- kernels/abi.h is built in ahead of the prelude: the lines the
    -- compiler names must still be the prelude file's own
    local line
    local n = 0
    for l in io.lines("kernels/prelude.cuh") do
      n = n + 1
      if l:find("give exactly N indices", 1, true) then line = n end
    end
    assert.truthy(line)
    local gxx = S.backend == "sim" and not S.nvrtc_checks()
    local at = gxx and ("luacuda/prelude.cuh:%d:"):format(line)
      or ("luacuda/prelude.cuh(%d)"):format(line)
    S.misuse({"luacuda.compile: compilation of kernel.cu failed", at, "exactly N indices"},
      luacuda.compile, "extern \"C\" __global__ void k(Array<float, 2> a) { a(1) = 0; }")
  end)

  it("checks its arguments", function()
    S.misuse("luacuda.compile: source must be a string, got number", luacuda.compile, 5)
    S.misuse("luacuda.compile: unknown option nmae", luacuda.compile, "", {nmae = "x"})
    S.misuse("luacuda.compile: options[1] must be a string, got number", luacuda.compile, "",
             {options = {1}})
    -- read as luacuda.ptx reads them: a key or a hole is not silently dropped
    S.misuse("luacuda.compile: options must be a sequence of strings, got key x",
             luacuda.compile, "", {options = {"-DA=1", x = "-DB=2"}})
    S.misuse("luacuda.compile: options must be a sequence of strings, with no holes",
             luacuda.compile, "", {options = {"-DA=1", nil, "-DB=2", n = nil}})
    S.misuse("luacuda.compile: signatures names kernel 'k', which kernel.cu does not define",
             luacuda.compile, "", {signatures = {k = "int"}})
  end)

  it("compiles files, named by their path", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write("extern \"C\" __global__ void one(int *o) { o[0] = 1; }\n")
    f:close()
    local fm = luacuda.compile_file(path)
    os.remove(path)
    assert.truthy(tostring(fm):find(path, 1, true))
    S.misuse("luacuda.compile_file: cannot open /no/such/file.cu", luacuda.compile_file,
             "/no/such/file.cu")
    local o = luacuda.to_device({0}, {dtype = "int32"})
    fm.one[{1, 1}](o)
    assert.equal(1, o[1])
  end)

  it("leaves the host's floating-point mode alone, fast math or not", function()
    local fm = luacuda.compile([[
      extern "C" __global__ void k(float *o) { o[0] = o[0] * 0.5f; }
    ]], {options = {"-use_fast_math"}})
    local o = luacuda.to_device({1}, {dtype = "float32"})
    fm.k[{1, 1}](o)
    assert.equal(0.5, o[1])
    -- a float32 denormal still survives the host's conversions
    local tiny = 2.0^-149
    assert.equal(tiny, luacuda.array({tiny}, "float32")[1])
  end)

  it("passes -D options to the source", function()
    local dm = luacuda.compile([[
      extern "C" __global__ void k(int *o) { o[0] = VALUE; }
    ]], {options = {"-DVALUE=42", "-use_fast_math"}})
    local o = luacuda.to_device({0}, {dtype = "int32"})
    dm.k[{1, 1}](o)
    assert.equal(42, o[1])
  end)

  -- every spelling NVRTC takes means the same on every backend: the
  -- simulator compiled "--std=c++20" as C++17 and dropped "-I dir" and
  -- "--include-path=dir" (issue 13)
  it("takes every spelling of -std, -I and -D, on every backend", function()
    -- every module is compiled first (NVRTC reads each on the fake driver
    -- too), then run
    local dialect = [[
      extern "C" __global__ void k(long long *o) { o[0] = __cplusplus; }
    ]]
    local default = luacuda.compile(dialect)
    local stds = {}
    for _, spelling in ipairs({{"-std=c++20"}, {"--std=c++20"}, {"-std", "c++20"},
                               {"--std", "c++20"}}) do
      stds[#stds + 1] = {spelling, luacuda.compile(dialect, {options = spelling})}
    end
    local dir = S.tmpdir()
    local f = assert(io.open(dir .. "/seven.h", "w"))
    f:write("#define SEVEN 7\n")
    f:close()
    local src = [[
      #include "seven.h"
      extern "C" __global__ void k(int *o) { o[0] = SEVEN * TIMES; }
    ]]
    local includes = {}
    for i, spelling in ipairs({{"-I" .. dir, "-DTIMES=2"}, {"-I", dir, "-D", "TIMES=2"},
                               {"--include-path=" .. dir, "--define-macro=TIMES=2"},
                               {"--include-path", dir, "--define-macro", "TIMES=2"}}) do
      includes[i] = {spelling, luacuda.compile(src, {options = spelling,
                                                     name = "spelling" .. i .. ".cu"})}
    end
    os.remove(dir .. "/seven.h")
    os.remove(dir)
    local function run(mod, dtype)
      local o = luacuda.to_device({0}, {dtype = dtype})
      mod.k[{1, 1}](o)
      return o[1]
    end
    assert.equal(201703, run(default, "int64"))
    for _, c in ipairs(stds) do
      assert.is_true(run(c[2], "int64") > 201703, table.concat(c[1], " "))
    end
    for _, c in ipairs(includes) do
      assert.equal(14, run(c[2], "int32"), table.concat(c[1], " "))
    end
  end)

  -- the in-process key took at most 256 override names: two compiles that
  -- differed past them shared one module (issue 13)
  it("keys a module by every signature override, however many", function()
    local parts, sigs = {}, {}
    for i = 1, 300 do
      parts[i] = ('extern "C" __global__ void k%d(int a) {}'):format(i)
      sigs["k" .. i] = "int"
    end
    local src = table.concat(parts, "\n")
    local last
    for name in pairs(sigs) do last = name end    -- the traversal's last name
    local a = luacuda.compile(src, {name = "many.cu", signatures = sigs})
    sigs[last] = "unsigned int"                   -- a value change keeps the order
    local b = luacuda.compile(src, {name = "many.cu", signatures = sigs})
    assert.equal("int", a[last].signature)
    assert.equal("unsigned int", b[last].signature)
  end)

  it("refuses an option without its value, and a dialect not every backend knows", function()
    local src = 'extern "C" __global__ void k() {}'
    S.misuse("luacuda.compile: option -I needs a value", luacuda.compile, src,
             {options = {"-DX", "-I"}})
    S.misuse("luacuda.compile: option --include-path= needs a value", luacuda.compile, src,
             {options = {"--include-path="}})
    S.misuse("luacuda.compile: option -std=gnu++17: the C++ dialect must be one of",
             luacuda.compile, src, {options = {"-std=gnu++17"}})
  end)

  -- the same kernel, global or shared array in both branches of an #ifdef
  -- is valid CUDA; the generated code stood apart from the source and named
  -- both, and the module did not compile (issue 12)
  local BRANCHES = [==[
#ifdef WIDE
extern "C" __global__ void k(double *x, int n) { if (threadIdx.x < n) x[threadIdx.x] = 2 * threadIdx.x; }
__device__ double coef[4];
extern __shared__ double dyn[];
#else
extern "C" __global__ void k(float *x, int n) { if (threadIdx.x < n) x[threadIdx.x] = threadIdx.x; }
__device__ float coef[2];
extern __shared__ float dyn[];
#endif
extern "C" __global__ void through_shared(int *out) {
  dyn[threadIdx.x] = threadIdx.x + 1;
  __syncthreads();
  out[threadIdx.x] = (int)dyn[blockDim.x - 1 - threadIdx.x];
}
]==]

  it("compiles a kernel, global and shared array defined in both branches of an #ifdef",
     function()
    local narrow = luacuda.compile(BRANCHES, {name = "branches.cu"})
    local wide = luacuda.compile(BRANCHES, {name = "branches.cu", options = {"-DWIDE"}})
    assert.same({"k", "through_shared"}, narrow:kernels())
    assert.equal("float *, int", narrow.k.signature)
    assert.equal("double *, int", wide.k.signature)
    assert.equal("float32", narrow:get_global("coef").dtype)
    assert.same({2}, narrow:get_global("coef").shape)
    assert.equal("float64", wide:get_global("coef").dtype)
    assert.same({4}, wide:get_global("coef").shape)
    S.misuse("kernel 'k' argument 1 'x' (double *): expected a float64 array, got float32",
             function(x) wide.k[{1, 4}](x, 4) end, luacuda.device_array(4, "float32"):fill(0))
    local f, d = luacuda.device_array(4, "float32"), luacuda.device_array(4, "float64")
    narrow.k[{1, 4}](f, 4)
    wide.k[{1, 4}](d, 4)
    assert.same({0, 1, 2, 3}, f:copy_to_host():totable())
    assert.same({0, 2, 4, 6}, d:copy_to_host():totable())
    for _, m in ipairs({narrow, wide}) do
      local out = luacuda.device_array(4, "int32")
      m.through_shared[{1, 4, nil, 64}](out)
      assert.same({4, 3, 2, 1}, out:copy_to_host():totable())
    end
  end)

  it("tells apart definitions in #if branches whose parameters differ only in type", function()
    local src = [==[
#ifdef INTS
extern "C" __global__ void k(int *x) { x[threadIdx.x] = 7; }
#else
extern "C" __global__ void k(float *x) { x[threadIdx.x] = 2.5f; }
#endif
]==]
    local same = luacuda.compile("#ifdef INTS\n__device__ int g[4];\n#else\n"
                                 .. "__device__ float g[4];\n#endif\n", {name = "same_size.cu"})
    S.misuse("luacuda.get_global: global 'g' is declared more than once in same_size.cu (in #if "
             .. "branches), as types of the same size; rename one", same.get_global, same, "g")
    -- a declaration whose byte count overflows is no match for the compiled
    -- one: 4 * (2^60 + 1) ints wrapped to 16 bytes, a float[4]'s (issue 29)
    local huge = luacuda.compile("#ifdef HUGE\n__device__ int g[4194308][1099510579201];\n#else\n"
                                 .. "__device__ float g[4];\n#endif\n", {name = "huge.cu"})
    local g = huge:get_global("g")
    assert.equal("float32", g.dtype)
    assert.same({4}, g.shape)
    local floats = luacuda.compile(src, {name = "pointers.cu"})
    local ints = luacuda.compile(src, {name = "pointers.cu", options = {"-DINTS"}})
    assert.equal("float *", floats.k.signature)
    assert.equal("int *", ints.k.signature)
    S.misuse("kernel 'k' argument 1 'x' (int *): expected a int32 array, got float32",
             function(x) ints.k[{1, 2}](x) end, luacuda.device_array(2, "float32"):fill(0))
    local x, n = luacuda.device_array(2, "float32"), luacuda.device_array(2, "int32")
    floats.k[{1, 2}](x)
    ints.k[{1, 2}](n)
    assert.same({2.5, 2.5}, x:copy_to_host():totable())
    assert.same({7, 7}, n:copy_to_host():totable())
  end)

  it("takes signatures= where the source is too clever to read", function()
    local src = [[
      #define REAL float
      extern "C" __global__ void k(int n, REAL *y) { for (int i = 0; i < n; i++) y[i] = 2; }
    ]]
    local plain = luacuda.compile(src)
    local y = luacuda.device_array(3, "float32")
    -- REAL reads as the name of a struct (a record's): the launch says what to do
    S.misuse({"kernel 'k' argument 2 'y' (REAL *)", "struct REAL", "signatures="},
             function() plain.k[{1, 1}](3, y) end)
    local fixed = luacuda.compile(src, {signatures = {k = "int, float*"}})
    fixed.k[{1, 1}](3, y)
    assert.same({2, 2, 2}, values(y))
  end)

  it("keeps several modules and kernels alive at once", function()
    local a = luacuda.compile([[extern "C" __global__ void k(int *o) { o[threadIdx.x] = 1; }]])
    local b = luacuda.compile([[extern "C" __global__ void k(int *o) { o[threadIdx.x] = 2; }]])
    local ka, kb = a.k, b.k
    a, b = nil, nil
    collectgarbage()
    local o = luacuda.device_array(4, "int32")
    ka[{1, 2}](o)
    kb[{1, {2}}](o[{{3, 4}}])
    assert.same({1, 1, 2, 2}, values(o))
  end)
end)

describe("launch", function()
  it("runs saxpy in both launch forms", function()
    local n = 1000
    local x = luacuda.to_device(luacuda.arange(n, "float32"))
    local y = luacuda.to_device(luacuda.full(n, 1.0, "float32"))
    m.saxpy[{(n + 127) // 128, 128}](n, 2.0, x, y)
    assert.equal(1.0, y[1])
    assert.equal(2 * 999 + 1, y[n])
    m.saxpy:launch({grid = (n + 127) // 128, block = 128}, n, 0.5, x, y)
    assert.equal(2 * 999 + 1 + 0.5 * 999, y[n])
  end)

  it("gives every thread its positions in a 3-D grid", function()
    local grid, block = {2, 3, 2}, {4, 2, 3}
    local nx, ny, nz = 8, 6, 6
    local out = luacuda.device_array(nx * ny * nz * 15, "int32")
    m.positions[{grid, block}](out, 15)
    local h = out:copy_to_host():reshape(nz, ny, nx, 15):totable()
    local bad = 0
    for z = 0, nz - 1 do
      for y = 0, ny - 1 do
        for x = 0, nx - 1 do
          local o = h[z + 1][y + 1][x + 1]
          local lx, ly, lz = x % 4, y % 2, z % 3
          local want = {x, y, z, nx, ny, nz, x + 100 * y + 10000 * z,
                        lx + 100 * ly + 10000 * lz,
                        x // 4 + 100 * (y // 2) + 10000 * (z // 3),
                        4 + 100 * 2 + 10000 * 3, nx + 100 * ny + 10000 * nz,
                        2 + 100 * 3 + 10000 * 2, (lx + 4 * (ly + 2 * lz)) % 32, x,
                        x + 1000 * y}
          for k = 1, 15 do
            if o[k] ~= want[k] then bad = bad + 1 end
          end
        end
      end
    end
    assert.equal(0, bad)
  end)

  it("runs 1-D and 2-D grids given as numbers or tables", function()
    local n = 16
    local a = luacuda.to_device(luacuda.arange(n * n, "float32"):reshape(n, n))
    local t = luacuda.device_array({n, n}, "float32")
    m.tile_transpose[{{2, 2}, {8, 8}}](a, t, n)
    assert.same(a.T:copy_to_host():totable(), values(t))
  end)

  it("reduces with shared memory and syncthreads", function()
    local n = 256 * 40 + 17
    local x = luacuda.to_device(luacuda.ones(n, "float32"))
    local out = luacuda.to_device({0}, {dtype = "float32"})
    m.reduce[{(n + 255) // 256, 256}](x, out, n)
    assert.equal(n, out[1])
  end)

  it("counts, ands and ors predicates at a barrier", function()
    local out = luacuda.device_array(96, "int32")
    m.votes[{1, 96}](out)
    local want = 32 * 10000 + 1 * 1000 + 0 * 100 + 1 * 10 + 0
    local all = values(out)
    for t = 1, 96 do assert.equal(want, all[t]) end
  end)

  it("gives 3-D shared arrays and the ROC barrier", function()
    local out = luacuda.device_array(24, "int32")
    m.cube[{1, {4, 3, 2}}](out)
    local h = values(out)
    assert.equal(3 + 20 + 100, h[1])        -- thread (0,0,0) reads c[1][2][3]
    assert.equal(0, h[24])                  -- thread (3,2,1) reads c[0][0][0]
  end)

  it("sizes dynamic shared memory by the launch", function()
    local out = luacuda.device_array(32, "float32")
    m.dynamic[{1, 32, nil, 32 * 4}](out)
    assert.equal(31 * 1.5, out[1])
    assert.equal(0, out[32])
    local r = luacuda.device_array(8, "int32")
    m.raw_dynamic:launch({grid = 1, block = 8, shared = 8 * 4}, r)
    assert.same({1, 2, 3, 4, 5, 6, 7, 0}, values(r))
    -- more than 48 KiB: the kernel opts in (96 KiB: what a compute
    -- capability 7.0 or 8.x device gives; an H100 and the simulator, 227 KiB)
    m.far_dynamic:launch({grid = 1, block = 8, shared = 96 * 1024}, r, 96 * 256)
    assert.same({24575, 24574, 24573, 24572, 24571, 24570, 24569, 24568}, values(r))
  end)

  it("keeps local arrays per thread across barriers", function()
    local out = luacuda.device_array(64, "int32")
    m.locals[{1, 64}](out)
    local h = values(out)
    for t = 0, 63 do assert.equal(3 * t + 2 * t, h[t + 1]) end
  end)

  it("gives each thread its own copy of the parameters, which some threads change", function()
    local out = luacuda.to_device(luacuda.zeros(16, "int32"))
    m.own_params[{1, 8}](out, 7)
    local h = values(out)
    for t = 0, 7 do
      if t % 2 == 0 then
        assert.equal(7 + 16, h[t + 1])
        assert.equal(0, h[t + 9])
      else
        assert.equal(0, h[t + 1])
        assert.equal(7 + 100 + 1000, h[t + 9])
      end
    end
  end)

  it("synchronises the threads of a warp", function()
    local out = luacuda.device_array(64, "int32")
    m.warps[{1, 64}](out)
    local h = values(out)
    assert.equal(1, h[1])
    assert.equal(62, h[64])
  end)

  it("has the fences and warpSize", function()
    local out = luacuda.device_array(4, "int32")
    m.fences[{1, 4}](out)
    assert.same({32, 32, 32, 32}, values(out))
  end)

  it("keeps atomics exact under contention", function()
    local blocks, threads = 64, 128
    local n = blocks * threads
    local i = luacuda.to_device({0, 0}, {dtype = "int32"})
    local u = luacuda.to_device({0}, {dtype = "uint32"})
    local ull = luacuda.to_device({0}, {dtype = "uint64"})
    local f = luacuda.to_device({0}, {dtype = "float32"})
    local d = luacuda.to_device({0}, {dtype = "float64"})
    local mx = luacuda.to_device({-1}, {dtype = "int32"})
    local mn = luacuda.to_device({1}, {dtype = "int32"})
    local inc = luacuda.to_device({0}, {dtype = "uint32"})
    local cas = luacuda.to_device({0}, {dtype = "int32"})
    m.atomics[{blocks, threads}](i, u, ull, f, d, mx, mn, inc, cas)
    assert.same({n, -2 * n}, values(i))
    assert.equal(3 * n, u[1])
    assert.equal(5 * n, ull[1])
    assert.equal(0.5 * n, f[1])
    assert.equal(0.25 * n, d[1])
    assert.equal(n - 1, mx[1])
    assert.equal(-(n - 1), mn[1])
    assert.equal(n % 10, inc[1])
    assert.equal(7, cas[1])
  end)

  it("passes strided and negative-step views as Array<T, N>", function()
    local base = luacuda.to_device(luacuda.zeros({6, 8}, "int32"))
    local view = base[{{6, 1, -2}, {2, 8, 3}}]           -- 3x3, negative row step
    m.fill2d[{3, 3}](view)
    local h = values(base)
    assert.equal(0, h[6][2])             -- view (0,0) is base (6,2)
    assert.equal(1, h[6][5])
    assert.equal(22, h[2][8])
    assert.equal(0, h[1][1])             -- untouched
    assert.equal(0, h[5][2])
    local t = luacuda.to_device(luacuda.zeros({4, 5}, "int32")).T   -- 5x4, F-ordered view
    m.fill2d[{5, 4}](t)
    assert.same({{0, 1, 2, 3}, {10, 11, 12, 13}}, values(t[{{1, 2}}]))
    local cube = luacuda.to_device(luacuda.arange(24, "float64"):reshape(2, 3, 4))
    local out = luacuda.device_array(3, "float64")
    m.sum3d[{1, 1}](cube[{{}, {-1, 1, -1}, {1, 4, 2}}], out)
    local want = 0
    for a = 0, 1 do for b = 0, 2 do for c = 0, 3, 2 do want = want + a * 12 + b * 4 + c end end end
    assert.same({want, 12, 96}, values(out))
  end)

  it("reads and writes module globals", function()
    local coef = m:get_global("coef")
    assert.equal("float32", coef.dtype)
    assert.same({4}, coef.shape)
    assert.equal("device", coef.kind)
    coef:copy_to_device({1, 2, 3, 4})
    local counter = m:get_global("counter")
    assert.equal(0, counter.ndim)
    counter[{}] = 10
    assert.same({1, 2, 3, 4}, values(coef))
    assert.equal(10, counter[{}])
    S.misuse("luacuda.get_global: kernels.cu has no __constant__ or __device__ variable 'nope'",
             m.get_global, m, "nope")
    local out = luacuda.device_array(4, "float32")
    m.use_globals[{1, 4}](out)
    assert.same({2, 4, 6, 8}, values(out))
    assert.equal(14, counter[{}])
  end)

  it("keeps the module alive while a global's array is", function()
    local g = luacuda.compile("__device__ double value[2];\n"):get_global("value")
    collectgarbage()
    collectgarbage()
    g:copy_to_device({1.5, 2.5})
    assert.same({1.5, 2.5}, values(g))
  end)

  it("converts scalars by the declared parameter types", function()
    local out = luacuda.device_array(6, "float64")
    m.scalars[{1, 1}](-5, 65535, 1 << 40, 2, true, 7, out)
    assert.same({-5, 65535, 2.0^40, 2.0, 1, 7}, values(out))
  end)

  it("lets void * take an array of any dtype", function()
    local b = luacuda.to_device({0, 0}, {dtype = "int16"})
    m.anything[{1, 1}](b, 4)
    assert.same({-21589, -21589}, values(b))
  end)

  it("prints from kernels with printf", function()
    local hello = [=[
        extern "C" __global__ void hello(int base) {
          printf("thread %d of block %d says %d\n", threadIdx.x, blockIdx.x, base + threadIdx.x);
        }]=]
    luacuda.compile(hello)          -- here too, so that NVRTC reads it on the fake driver
    local p = io.popen([[lua5.4 -e '
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[]] .. hello .. [[]=])
      m.hello[{2, 3}](100)' 2>&1]])
    local out = p:read("a")
    p:close()
    local lines = 0
    for _ in out:gmatch("says %d+\n") do lines = lines + 1 end
    assert.equal(6, lines, out)
    assert.truthy(out:find("thread 2 of block 1 says 102", 1, true), out)
  end)

  it("launches a kernel without parameters", function()
    m.nothing[{1, 1}]()
    m.nothing:launch({grid = {1, 1, 1}, block = {1, 1, 1}})
  end)
end)

describe("launch errors", function()
  local x, y
  before_each(function()
    x = luacuda.to_device(luacuda.zeros(4, "float32"))
    y = luacuda.to_device(luacuda.zeros(4, "float32"))
  end)

  local function launch(k, cfg, ...) return k[cfg](...) end

  it("name the argument count", function()
    S.misuse("luacuda.launch: kernel 'saxpy' takes 4 arguments, got 3",
             launch, m.saxpy, {1, 4}, 4, 2.0, x)
  end)

  it("refuse numbers that the parameter type cannot hold", function()
    S.misuse("kernel 'saxpy' argument 1 'n' (int): int32 needs an integer, got 1.5",
             launch, m.saxpy, {1, 4}, 1.5, 2.0, x, y)
    S.misuse("argument 1 'n' (int): 4294967296 is out of range for int32",
             launch, m.saxpy, {1, 4}, 1 << 32, 2.0, x, y)
    S.misuse("argument 1 'a' (signed char): 200 is out of range for int8",
             launch, m.scalars, {1, 1}, 200, 0, 0, 0, true, 0, y)
    S.misuse("argument 5 'e' (bool): bool needs a boolean, got number",
             launch, m.scalars, {1, 1}, 1, 0, 0, 0, 1, 0, y)
    S.misuse("argument 2 'a' (float): float32 needs a number, got string",
             launch, m.saxpy, {1, 4}, 4, "2", x, y)
  end)

  it("never copy a host array implicitly", function()
    S.misuse({"argument 3 'x' (const float *)", "a host array cannot be passed to a kernel"},
             launch, m.saxpy, {1, 4}, 4, 2.0, luacuda.zeros(4, "float32"), y)
  end)

  it("check the dtype behind a pointer and an Array", function()
    S.misuse("argument 4 'y' (float *): expected a float32 array, got float64",
             launch, m.saxpy, {1, 4}, 4, 2.0, x, luacuda.to_device({1.5}))
    S.misuse("argument 1 'a' (Array<int, 2>): expected a int32 array, got float32",
             launch, m.fill2d, {1, 1}, luacuda.device_array({2, 2}, "float32"):fill(0))
    S.misuse("argument 1 'a' (Array<int, 2>): expected a 2-d array, got 1-d",
             launch, m.fill2d, {1, 1}, luacuda.device_array(4, "int32"):fill(0))
    S.misuse("argument 3 'x' (const float *): expected a device array, got a table",
             launch, m.saxpy, {1, 4}, 4, 2.0, {1, 2}, y)
  end)

  it("refuse a non-contiguous view for a pointer", function()
    local wide = luacuda.device_array(8, "float32"):fill(0)  -- initialized: NaN ~= NaN
    S.misuse({"argument 4 'y' (float *)", "non-contiguous view", "Array<T, N>"},
             launch, m.saxpy, {1, 4}, 4, 2.0, x, wide[{{1, 8, 2}}])
  end)

  it("refuse closed arrays", function()
    local c = luacuda.device_array(4, "float32")
    c:close()
    S.misuse("argument 4 'y' (float *): attempt to use a closed array",
             launch, m.saxpy, {1, 4}, 4, 2.0, x, c)
  end)

  it("check the launch configuration as CUDA does", function()
    S.misuse("kernel 'nothing': a block of 1089 threads is more than 1024",
             launch, m.nothing, {1, {33, 33}})
    S.misuse("kernel 'nothing': block z is 65 (1 to 64)", launch, m.nothing, {1, {1, 1, 65}})
    S.misuse("kernel 'nothing': block x is 2000 (1 to 1024)", launch, m.nothing, {1, 2000})
    S.misuse("kernel 'nothing': grid y is 65536 (1 to 65535)", launch, m.nothing, {{1, 65536}, 1})
    S.misuse("kernel 'nothing': grid x is 0 (1 to 2147483647)", launch, m.nothing, {0, 1})
    S.misuse("kernel 'nothing': 232449 bytes of dynamic shared memory is more than 232448 "
             .. "(227 KiB, what an H100 gives a block; no device gives more)",
             launch, m.nothing, {1, 1, nil, 232449})
    S.misuse("kernel 'nothing': the launch configuration needs a grid and a block",
             m.nothing.launch, m.nothing, {grid = 1})
    S.misuse("kernel 'nothing': block must have 1 to 3 entries, got 4",
             launch, m.nothing, {1, {1, 1, 1, 1}})
    S.misuse("luacuda.launch: unknown option blocks", m.nothing.launch, m.nothing,
             {grid = 1, blocks = 1})
    S.misuse("kernel 'nothing' needs a launch configuration", function() m.nothing() end)
  end)

  it("report a barrier some threads can never reach, and the state carries on", function()
    if S.backend ~= "sim" then return pending("simulator only: a barrier some threads never reach is the simulator's diagnosis; a GPU may hang or carry on") end
    local out = luacuda.device_array(8, "int32")
    -- launches are queued: the failure comes with the next synchronization
    launch(m.early_return, {2, 8}, out)
    S.misuse({"luacuda.synchronize: kernel 'early_return' failed", "barrier never completes",
              "thread (3, 0, 0)"}, luacuda.synchronize)
    luacuda.synchronize()              -- reported once
    launch(m.early_return, {2, 8}, out)
    local ok, err = pcall(out.copy_to_host, out)   -- a synchronous copy reports it too
    assert.is_false(ok)
    assert.truthy(err:find("luacuda.copy_to_host: kernel 'early_return' failed", 1, true), err)
    local o = luacuda.to_device({0}, {dtype = "int32"})
    m.use_globals[{1, 1}](luacuda.device_array(1, "float32"))
    m.fill2d[{1, 1}](o:reshape(1, 1))
    assert.equal(0, o[1])
  end)
end)
