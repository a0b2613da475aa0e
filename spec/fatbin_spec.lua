-- The fatbinary the CUDA backend loads (src/base/fatbin.c): byte for byte
-- what the toolkit's `fatbinary` tool writes for the same cubin and PTX,
-- where the tool and NVRTC are installed (build/fatbin_test compares).
local S = require "spec.support"
local luacuda = require "luacuda"

local BUILD = os.getenv("LUACUDA_BUILD") or "build"
local TOOL = (os.getenv("CUDA_HOME") or "/usr/local/cuda") .. "/bin/fatbinary"

local SOURCE = [[
__device__ int hits;
extern "C" __global__ void scale(float *x, float a, int n) {
  __shared__ float tile[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x % 64] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n) { x[i] = a * tile[threadIdx.x % 64]; atomicAdd(&hits, 1); }
}
extern "C" __global__ void zero(int *y) { y[threadIdx.x] = 0; }
]]

-- The tool strips a PTX's comments and indentation and joins runs of
-- blanks; given a text with none, it keeps the text as it is, as
-- luacuda's writer does.
local function plain_ptx(ptx)
  return (ptx:gsub("//[^\n]*", ""):gsub("\n[ \t]+", "\n"):gsub("[ \t]+", " "))
end

local function write(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
end

describe("the fatbinary writer", function()
  -- #heavy: NVRTC compiles four images in the process (minutes under
  -- valgrind); the writer's own code runs in build/fatbin_test, a child
  it("writes what the toolkit's fatbinary tool writes for a cubin and its PTX #heavy", function()
    if not S.exists(TOOL) then return pending("no " .. TOOL) end
    if not luacuda.nvrtc_version() then return pending("no NVRTC") end
    local dir = S.tmpdir()
    for _, sm in ipairs({80, 90}) do
      local cubin = luacuda.cubin(SOURCE, {arch = "sm_" .. sm})
      local ptx = plain_ptx(luacuda.ptx(SOURCE, {arch = "compute_" .. sm}))
      write(dir .. "/k.cubin", cubin)
      write(dir .. "/k.ptx", ptx)
      local ok, out = S.sh(("%s --create=%s/k.fatbin -64 --compress=false "
                            .. "--image3=kind=elf,sm=%d,file=%s/k.cubin "
                            .. "--image3=kind=ptx,sm=%d,file=%s/k.ptx"):format(TOOL, dir, sm, dir,
                                                                          sm, dir))
      assert(ok, out)
      ok, out = S.sh(("%s/fatbin_test compare %s/k.cubin %s/k.ptx %d %s/k.fatbin"):format(
        BUILD, dir, dir, sm, dir))
      assert(ok and out:find("same %d+ bytes"), ("sm_%d: %s"):format(sm, out))
    end
    os.execute("rm -rf " .. dir)
  end)
end)
