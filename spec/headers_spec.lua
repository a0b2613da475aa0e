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

describe("C++ standard headers", function()
  -- NVRTC 13 provides none of them: the C++ library of a kernel is libcu++'s
  -- <cuda/std/...>. The simulator's host compiler has them all; its NVRTC
  -- check refuses them as NVRTC does.
  for _, h in ipairs({"cstdint", "type_traits", "cmath", "math.h", "stdint.h", "utility"}) do
    it("are refused as on a GPU: <" .. h .. ">", function()
      if S.backend == "sim" and not S.nvrtc_checks() then
        return pending("the simulator refuses them through its NVRTC check, which is off")
      end
      S.misuse({"compilation of std.cu failed", 'cannot open source file "' .. h .. '"'},
               luacuda.compile, "#include <" .. h .. ">\n" .. BODY, {name = "std.cu"})
    end)
  end
end)
