-- The toolkit's headers by name: a kernel that includes one compiles on
-- every backend (NVRTC reads the toolkit's, the simulator its own versions
-- in kernels/sim_include/), and one NVRTC cannot open fails on every
-- backend alike.
local luacuda = require "luacuda"
local S = require "spec.support"

local values = S.host_values

-- a kernel using what each header gives: vector types and constructors,
-- the coordinates, device functions and intrinsics, the math API
local BODY = [[
extern "C" __global__ void use(float *out) {
  unsigned t = threadIdx.x + blockIdx.x * blockDim.x;
  dim3 d(blockDim.x, 1, 1);
  float4 v = make_float4(1.0f, 2.0f, 3.0f, (float)t);
  int2 w = make_int2(__popc(t), __float_as_int(1.0f) >> 23);
  __syncthreads();
  out[t] = v.w * d.x + sqrtf(v.y * v.y * 4.0f) + w.x * 100.0f + w.y * 1000.0f
         + sinpif(0.5f) * 10000.0f;
}
]]

-- what BODY writes for thread t of blocks of 8
local function want(t)
  local popc = 0
  for b = 0, 7 do popc = popc + ((t >> b) & 1) end
  return t * 8 + 4 + popc * 100 + 127 * 1000 + 10000
end

local function run(includes)
  local src = {}
  for _, h in ipairs(includes) do src[#src + 1] = "#include <" .. h .. ">" end
  src[#src + 1] = BODY
  local m = luacuda.compile(table.concat(src, "\n"), {name = "headers.cu"})
  local out = luacuda.device_array(16, "float32")
  m.use[{2, 8}](out)
  local h = values(out)
  for t = 0, 15 do assert.equal(want(t), h[t + 1], "thread " .. t) end
end

describe("the CUDA runtime's headers", function()
  local HEADERS = {"cuda_runtime.h", "vector_types.h", "vector_functions.h",
                   "device_launch_parameters.h", "device_functions.h", "math_functions.h"}
  for _, h in ipairs(HEADERS) do
    it("compile a kernel that includes <" .. h .. ">", function()
      run({h})
    end)
  end

  it("may all be included together, and twice", function()
    local twice = {}
    for _, h in ipairs(HEADERS) do twice[#twice + 1] = h end
    for _, h in ipairs(HEADERS) do twice[#twice + 1] = h end
    run(twice)
  end)

  it("are found with quotes too", function()
    local m = luacuda.compile('#include "cuda_runtime.h"\n' .. BODY, {name = "quoted.cu"})
    local out = luacuda.device_array(16, "float32")
    m.use[{2, 8}](out)
    assert.equal(want(15), values(out)[16])
  end)
end)

-- The C and C++ standard headers that kernels written for nvcc include:
-- NVRTC has none of them, so luacuda gives it its own (kernels/std/), each
-- mapping to what NVRTC has built in or to libcu++; the simulator's host
-- compiler has the real ones.
local STD_HEADERS = {"stdio.h", "math.h", "stdint.h", "cstdint", "limits.h", "climits",
                     "float.h", "cfloat", "limits", "type_traits"}

-- a name from each header (in the comment after it); what it writes is
-- STD_WANT
local STD_BODY = [==[
template <typename T>
__device__ typename std::enable_if<std::is_floating_point<T>::value, int>::type kind(T) { return 1; }
template <typename T>
__device__ typename std::enable_if<std::is_integral_v<T>, int>::type kind(T) { return 2; }

extern "C" __global__ void std_names(double *out, int never) {
  if (threadIdx.x != 0) return;
  if (never) printf("never %d\n", never);                                 // stdio.h
  out[0] = floor(M_PI) + (isnan(sqrtf(-1.0f)) ? 10 : 0);                   // math.h
  out[1] = INT32_MAX + (double)sizeof(int64_t) / 8;                        // stdint.h
  out[2] = (std::uint8_t)300;                                              // cstdint
  out[3] = CHAR_BIT * 1000 + (INT_MIN == -INT_MAX - 1);                    // limits.h
  out[4] = LLONG_MAX == 9223372036854775807LL ? SCHAR_MIN : 0;             // climits
  out[5] = FLT_EPSILON;                                                    // float.h
  out[6] = DBL_MAX;                                                        // cfloat
  out[7] = std::numeric_limits<float>::max() == FLT_MAX
         ? std::numeric_limits<short>::min() : 0;                          // limits
  out[8] = kind(1.0f) * 10 + kind(3)
         + 100 * std::is_same<std::make_unsigned_t<int>, unsigned>::value; // type_traits
}
]==]
local STD_WANT = {3 + 10, 2147483647 + 1, 44, 8001, -128, 2.0 ^ -23, 1.7976931348623157e308,
                  -32768, 112}

local function run_std(includes, name)
  local src = {}
  for _, h in ipairs(includes) do src[#src + 1] = "#include <" .. h .. ">" end
  src[#src + 1] = STD_BODY
  local m = luacuda.compile(table.concat(src, "\n"), {name = name})
  local out = luacuda.device_array(#STD_WANT, "float64")
  m.std_names[{1, 1}](out, 0)
  local h = values(out)
  for i, v in ipairs(STD_WANT) do assert.equal(v, h[i], STD_HEADERS[i] .. "'s line") end
end

describe("the standard headers kernels written for nvcc include", function()
  -- libcu++ is in the toolkit of NVRTC: without NVRTC the simulator has the
  -- host compiler's headers alone
  it("compile a kernel that includes each of them and uses a name from each, "
     .. "and it computes the values nvcc's would", function()
    run_std(STD_HEADERS, "std_headers.cu")
  end)

  it("may be included twice, the C++ ones first", function()
    local twice = {}
    for i = #STD_HEADERS, 1, -1 do twice[#twice + 1] = STD_HEADERS[i] end
    for _, h in ipairs(STD_HEADERS) do twice[#twice + 1] = h end
    run_std(twice, "std_twice.cu")
  end)

  it("leave names outside them to NVRTC: std::sin is no name (<cmath> is not given)",
     function()
    if S.backend == "sim" and not S.nvrtc_checks() then
      return pending("the simulator refuses it through its NVRTC check, which is off")
    end
    S.misuse({"compilation of std_sin.cu failed", 'namespace "std" has no member "sin"'},
             luacuda.compile, "#include <math.h>\n#include <type_traits>\n"
             .. 'extern "C" __global__ void k(float *x) { x[0] = std::sin(x[0]); }',
             {name = "std_sin.cu"})
  end)
end)

describe("other C and C++ standard headers", function()
  -- NVRTC 13 provides none of them: the C++ library of a kernel is libcu++'s
  -- <cuda/std/...>. The simulator's host compiler has them all; its NVRTC
  -- check refuses them as NVRTC does.
  for _, h in ipairs({"cmath", "utility", "stdlib.h", "string.h", "vector"}) do
    it("are refused as on a GPU: <" .. h .. ">", function()
      if S.backend == "sim" and not S.nvrtc_checks() then
        return pending("the simulator refuses them through its NVRTC check, which is off")
      end
      S.misuse({"compilation of std.cu failed", 'cannot open source file "' .. h .. '"'},
               luacuda.compile, "#include <" .. h .. ">\n" .. BODY, {name = "std.cu"})
    end)
  end
end)

-- libcu++'s public headers in CUDA 13 (what <cuda/std/NAME> finds under NVRTC)
local LIBCUDACXX = {
  "array", "atomic", "barrier", "bit", "bitset", "cassert", "ccomplex", "cfloat", "chrono",
  "climits", "cmath", "complex", "concepts", "cstddef", "cstdint", "cstdlib", "cstring",
  "ctime", "expected", "functional", "initializer_list", "inplace_vector", "iterator",
  "latch", "limits", "linalg", "mdspan", "memory", "numbers", "numeric", "optional", "ranges",
  "ratio", "semaphore", "source_location", "span", "tuple", "type_traits", "utility",
  "variant", "version",
}

local LIBCUDACXX_BODY = [[
__device__ __noinline__ int twice(int x) { return 2 * x; }   // the CUDA keywords still work

extern "C" __global__ void std_lib(long long *out, const float *x) {
  int t = threadIdx.x;
  cuda::std::array<int, 4> a{t, t + 1, t + 2, t + 3};
  cuda::std::complex<float> z(x[t], 1.0f), w = z * z;          // (x + i)^2
  cuda::std::tuple<int, float> tu{7, 0.5f};
  cuda::std::optional<int> none, some = t;
  cuda::std::span<const int> s(a.data(), a.size());
  static_assert(cuda::std::is_same_v<cuda::std::int32_t, int>, "int32_t");
  static_assert(cuda::std::numeric_limits<cuda::std::uint16_t>::max() == 65535, "limits");
  out[t] = cuda::std::accumulate(s.begin(), s.end(), 0)             // 4t + 6
         + 10 * cuda::std::popcount((unsigned)t)
         + 1000 * (long long)w.real() + 100000 * (long long)w.imag()
         + cuda::std::get<0>(tu) * 10000000LL
         + (none.has_value() ? 1 : 0) + (some.value_or(-1) == t ? 0 : 1)
         + twice(cuda::std::max(0, cuda::std::min(t, 0)));
  assert(t >= 0);
}
]]

describe("libcu++ (<cuda/std/...>)", function()
  it("compiles all of its headers in one kernel, and computes with them", function()
    if S.backend == "sim" and not luacuda.nvrtc_version() then
      return pending("the simulator finds libcu++ in the toolkit of NVRTC, which is not here")
    end
    local src = {}
    for _, h in ipairs(LIBCUDACXX) do src[#src + 1] = "#include <cuda/std/" .. h .. ">" end
    src[#src + 1] = LIBCUDACXX_BODY
    local m = luacuda.compile(table.concat(src, "\n"), {name = "libcudacxx.cu"})
    local xs = {}
    for t = 0, 31 do xs[t + 1] = t % 5 end
    local x = luacuda.to_device(xs, {dtype = "float32"})
    local out = luacuda.device_array(32, "int64")
    m.std_lib[{1, 32}](out, x)
    local h = values(out)
    for t = 0, 31 do
      local popc = 0
      for b = 0, 4 do popc = popc + ((t >> b) & 1) end
      local xv = t % 5
      local want = 4 * t + 6 + 10 * popc + 1000 * (xv * xv - 1) + 100000 * (2 * xv) + 70000000
      assert.equal(want, h[t + 1], "thread " .. t)
    end
  end)

  it("leaves the simulator's assert in place after <cuda/std/cassert>", function()
    if S.backend == "sim" and not luacuda.nvrtc_version() then
      return pending("the simulator finds libcu++ in the toolkit of NVRTC, which is not here")
    end
    local src = [[
#include <cuda/std/cassert>
extern "C" __global__ void check(int *out) { assert(threadIdx.x != 3); out[threadIdx.x] = 1; }
]]
    if S.backend == "sim" then
      local m = luacuda.compile(src, {name = "cassert.cu"})
      local out = luacuda.to_device(luacuda.zeros(8, "int32"))
      S.misuse({"kernel 'check' failed", "assertion 'threadIdx.x != 3' failed", "thread (3, 0, 0)"},
               function() m.check[{1, 8}](out); luacuda.synchronize() end)
      return
    end
    -- a failed assert is a launch failure the context keeps: in a process of its own
    local ok, out = S.lua_run("", ([[
      local luacuda = require "luacuda"
      local m = luacuda.compile(%q, {name = "cassert.cu"})
      local out = luacuda.to_device(luacuda.zeros(8, "int32"))
      m.check[{1, 8}](out)
      print(pcall(luacuda.synchronize))]]):format(src))
    assert.is_true(ok, out)
    assert.truthy(out:find("CUDA_ERROR_ASSERT", 1, true), out)
  end)
end)
