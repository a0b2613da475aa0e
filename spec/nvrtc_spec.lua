-- NVRTC through luacuda.ptx and luacuda.cubin: real compilations, on any
-- machine with the CUDA toolkit (no GPU needed). Where NVRTC cannot be
-- loaded the compilations are pending, with the reason; the argument checks
-- run everywhere, since they come before NVRTC is needed.
local luacuda = require "luacuda"
local S = require "spec.support"

local major, minor_or_why = luacuda.nvrtc_version()
local with_nvrtc = major and it or function(name)
  pending(name .. " (NVRTC cannot be loaded: " .. tostring(minor_or_why) .. ")")
end

-- an error from fn(...) starting "luacuda.<fname>: " and holding every cause
local function misuse(fname, causes, fn, ...)
  if type(causes) == "string" then causes = { causes } end
  local patterns = { "luacuda." .. fname .. ": " }
  for _, c in ipairs(causes) do patterns[#patterns + 1] = c end
  return S.misuse(patterns, fn, ...)
end

-- every name the prelude gives kernels, and the raw CUDA spellings
local EVERYTHING = [[
__constant__ float coef[4];
__device__ int counter;
__device__ float twice(float x) { return 2.0f * x; }

extern "C" __global__ void prelude_names(float *out, Array<float, 2> view, int n) {
  SHARED_ARRAY(float, s1, 64);
  SHARED_ARRAY(float, s2, 8, 8);
  SHARED_ARRAY(int, s3, 2, 4, 8);
  LOCAL_ARRAY(float, l1, 4);
  LOCAL_ARRAY(int, l2, 2, 2);
  LOCAL_ARRAY(double, l3, 2, 2, 2);
  DYNAMIC_SHARED(float, dyn);
  DYNAMIC_SHARED(int, dyn_again);
  int i = grid1();
  int2 g2 = grid2();
  int3 g3 = grid3();
  int s = gridsize1();
  int2 gs2 = gridsize2();
  int3 gs3 = gridsize3();
  int t = get_local_id(0) % 64;
  s1[t] = i;
  s2[t / 8][t % 8] = g2.x + g2.y;
  s3[t / 32][(t / 8) % 4][t % 8] = g3.x + g3.y + g3.z;
  l1[t % 4] = 1.0f;
  l2[1][t % 2] = 2;
  l3[1][1][t % 2] = 3.0;
  dyn[t] = l1[0] + l2[1][1] + (float)l3[1][1][1];
  dyn_again[t] += 1;
  syncthreads();
  int c = syncthreads_count(i < n);
  int a = syncthreads_and(i < n);
  int o = syncthreads_or(i < n);
  threadfence();
  threadfence_block();
  barrier();
  barrier(CLK_LOCAL_MEM_FENCE);
  barrier(CLK_GLOBAL_MEM_FENCE);
  mem_fence(CLK_LOCAL_MEM_FENCE);
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  wavebarrier();
  int ids = get_global_id(0) + get_local_id(1) + get_group_id(2) + get_local_size(0)
          + get_global_size(1) + get_num_groups(2);
  long long total = view.size();
  float v = *view.data + (float)(view.shape[0] + view.strides[1]);
  if (total > 1) view(0, 1) = v;
  if (i < n)
    out[i] = s1[t] + s2[0][0] + s3[0][0][0] + dyn[t] + c + a + o + laneid() + ids
           + (float)total + s + gs2.x + gs2.y + gs3.z + warpSize + Array<float, 2>::ndim;
}

extern "C" __global__ void raw_cuda(float *out, int n) {
  __shared__ float tile[128];
  extern __shared__ float dynamic[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = coef[threadIdx.x % 4];
  dynamic[threadIdx.x] = twice(tile[threadIdx.x]);
  __syncthreads();
  if (i < n) {
    out[i] = dynamic[threadIdx.x] + gridDim.x + blockDim.y + threadIdx.y + blockIdx.z;
    atomicAdd(&counter, 1);
    atomicAdd(out, 1.0f);
  }
  if (i == 0) printf("n = %d\n", n);
}
]]

local KERNELS = { "prelude_names", "raw_cuda" }

local function assert_ptx(ptx, target)
  assert.is_string(ptx)
  assert.truthy(ptx:find("\n%.version %d+%.%d+"), "no .version line")
  assert.truthy(ptx:find("\n%.target " .. target), "no .target " .. target)
  for _, k in ipairs(KERNELS) do
    assert.truthy(ptx:find("%.entry " .. k .. "%("), "no .entry for " .. k)
  end
end

describe("luacuda.nvrtc_version", function()
  with_nvrtc("is NVRTC 12 or 13", function()
    local maj, min = luacuda.nvrtc_version()
    assert.truthy(maj == 12 or maj == 13, "NVRTC " .. tostring(maj))
    assert.is_true(math.type(min) == "integer" and min >= 0)
  end)

  it("returns nil and every path tried when LUACUDA_NVRTC names a missing file", function()
    -- NVRTC loads once per process: ask a fresh one
    local path = "/nonexistent/luacuda-spec/libnvrtc.so.99"
    local p = io.popen("LUACUDA_NVRTC=" .. path .. " lua5.4 -e '"
      .. "local L = require \"luacuda\"; local v, why = L.nvrtc_version(); "
      .. "print(v); print(why); "
      .. "print(select(2, pcall(L.ptx, \"__global__ void k() {}\")))'")
    local out = p:read("a")
    p:close()
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equal("nil", lines[1], out)
    assert.truthy(out:find("LUACUDA_NVRTC", 1, true), out)
    assert.truthy(out:find(path .. ": cannot open shared object file", 1, true), out)
    -- and compiling says why, naming the function
    assert.truthy(out:find("luacuda.ptx: NVRTC is not available", 1, true), out)
  end)
end)

describe("luacuda.ptx", function()
  with_nvrtc("compiles every prelude name and raw CUDA for compute_75", function()
    local ptx, log = luacuda.ptx(EVERYTHING)
    assert_ptx(ptx, "sm_75")   -- compute_75 is the default
    assert.is_nil(log)
    assert.equal(ptx, (luacuda.ptx(EVERYTHING, { arch = "compute_75" })))
  end)

  with_nvrtc("compiles them for sm_90", function()
    assert_ptx(luacuda.ptx(EVERYTHING, { arch = "sm_90" }), "sm_90")
  end)

  with_nvrtc("names a syntax error by the user's file and line", function()
    local src = 'extern "C" __global__ void k(float *a) {\n  a[0] = 1;\n  a[1] = ;\n}\n'
    local err = misuse("ptx", { "compilation of bad.cu failed:\n", "bad.cu(3): error" },
                       luacuda.ptx, src, { name = "bad.cu" })
    assert.falsy(err:find("prelude", 1, true), "the prelude's lines leak into: " .. err)
    misuse("ptx", { "compilation of kernel.cu failed", "kernel.cu(3): error" }, luacuda.ptx, src)
  end)

  with_nvrtc("passes -DNAME=VALUE to the source", function()
    local src = '#if VALUE != 42\n#error VALUE is not 42\n#endif\n'
      .. 'extern "C" __global__ void k(int *o) { o[0] = VALUE + 1000; }\n'
    local ptx = luacuda.ptx(src, { options = { "-DVALUE=42" } })
    assert.truthy(ptx:find("1042", 1, true), "VALUE did not reach the source")
    misuse("ptx", { "kernel.cu(2)", "VALUE is not 42" }, luacuda.ptx, src,
           { options = { "-DVALUE=7" } })
    misuse("ptx", "VALUE", luacuda.ptx, src)
  end)

  with_nvrtc("compiles as C++17 unless told another -std", function()
    local src = [[
extern "C" __global__ void k(int *o) {
  static_assert(__cplusplus ]] .. "%s" .. [[, "dialect");
  o[0] = 1;
}]]
    assert.is_string(luacuda.ptx(src:format("== 201703L")))
    assert.is_string(luacuda.ptx(src:format("> 201703L"), { options = { "-std=c++20" } }))
  end)

  with_nvrtc("returns the warnings as a second result", function()
    local ptx, log = luacuda.ptx('#warning look here\nextern "C" __global__ void k() {}\n',
                                 { name = "warn.cu" })
    assert.truthy(ptx:find("%.entry k%("))
    assert.truthy(log:find("warn.cu(1): warning", 1, true), log)
  end)

  with_nvrtc("hands NVRTC's own refusals back with its log", function()
    misuse("ptx", { "compilation of kernel.cu failed", "-bogus" }, luacuda.ptx,
           'extern "C" __global__ void k() {}', { options = { "-bogus" } })
    -- well formed, but older than CUDA 13 (or any NVRTC) knows
    misuse("ptx", "compilation of kernel.cu failed", luacuda.ptx,
           'extern "C" __global__ void k() {}', { arch = "compute_10" })
  end)

  -- issue 14, item 3: the toolkit's include and include/cccl are searched
  with_nvrtc("compiles a source that includes cuda_fp16.h and cooperative_groups.h #heavy", function()
    local inc = (os.getenv("CUDA_HOME") or "/usr/local/cuda") .. "/include"
    if not S.exists(inc .. "/cuda_fp16.h") then return pending("no toolkit headers in " .. inc) end
    local src = [[
#include <cuda_fp16.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void half_sum(__half *x, float *out) {
  cg::thread_block b = cg::this_thread_block();
  b.sync();
  out[b.thread_rank()] = __half2float(__hadd(x[0], x[1]));
}
]]
    local ptx = luacuda.ptx(src, { arch = "compute_80" })
    assert.truthy(ptx:find("%.entry half_sum%("), "no .entry for half_sum")
    local cubin = luacuda.cubin(src, { arch = "sm_80" })
    assert.equal("\127ELF", cubin:sub(1, 4))
  end)

  it("refuses a source that is not a string", function()
    misuse("ptx", "source must be a string, got number", luacuda.ptx, 42)
    misuse("ptx", "source must be a string, got no value", luacuda.ptx)
    misuse("ptx", "source must be a string, got nil", luacuda.ptx, nil, {})
    misuse("ptx", "source must be a string, got table", luacuda.ptx, {})
    misuse("ptx", "NUL", luacuda.ptx, "__global__ void k() {}\0")
  end)

  it("refuses a bad arch", function()
    local src = 'extern "C" __global__ void k() {}'
    for _, arch in ipairs({ "sm_9", "compute_1000", "sm90", "90", "compute_75x", "sm_90b",
                            "gfx90a", "" }) do
      misuse("ptx", { "arch must be", '"' .. arch .. '"' }, luacuda.ptx, src, { arch = arch })
    end
    misuse("ptx", "arch must be a string, got number", luacuda.ptx, src, { arch = 75 })
  end)

  it("refuses bad options", function()
    local src = 'extern "C" __global__ void k() {}'
    misuse("ptx", "options must be a table, got string", luacuda.ptx, src, "-O3")
    misuse("ptx", "unknown option flags", luacuda.ptx, src, { flags = { "-O3" } })
    misuse("ptx", "options must be a table of strings, got string", luacuda.ptx, src,
           { options = "-DX=1" })
    misuse("ptx", "options[2] must be a string, got number", luacuda.ptx, src,
           { options = { "-DX=1", 3 } })
    misuse("ptx", "options must be a sequence of strings, got key x", luacuda.ptx, src,
           { options = { "-DX=1", x = "-DY=2" } })
    misuse("ptx", "options must be a sequence of strings, with no holes", luacuda.ptx, src,
           { options = { "-DX=1", nil, "-DY=2" } })
    misuse("ptx", "give the architecture as arch=", luacuda.ptx, src,
           { options = { "-arch=sm_90" } })
    misuse("ptx", "give the architecture as arch=", luacuda.ptx, src,
           { options = { "--gpu-architecture=compute_80" } })
    misuse("ptx", "name must be a string, got number", luacuda.ptx, src, { name = 1 })
    misuse("ptx", "name must not hold quotes", luacuda.ptx, src, { name = 'a"b.cu' })
    misuse("ptx", "name must not be empty", luacuda.ptx, src, { name = "" })
  end)
end)

describe("luacuda.cubin", function()
  with_nvrtc("compiles every prelude name and raw CUDA for sm_90 into an ELF", function()
    local cubin, log = luacuda.cubin(EVERYTHING, { arch = "sm_90", name = "all.cu" })
    assert.is_nil(log)
    assert.equal("\127ELF", cubin:sub(1, 4))
    for _, k in ipairs(KERNELS) do   -- the symbol table names the kernels
      assert.truthy(cubin:find("\0" .. k .. "\0", 1, true), "no symbol " .. k)
    end
  end)

  with_nvrtc("names a compile error as ptx does", function()
    misuse("cubin", { "compilation of c.cu failed", "c.cu(2): error" }, luacuda.cubin,
           'extern "C" __global__ void k(int *a) {\n  a[0] = nope;\n}',
           { arch = "sm_90", name = "c.cu" })
  end)

  it("needs a real sm_XX architecture", function()
    local src = 'extern "C" __global__ void k() {}'
    misuse("cubin", "arch is required", luacuda.cubin, src)
    misuse("cubin", "arch is required", luacuda.cubin, src, { options = { "-DX" } })
    misuse("cubin", { "needs a real architecture", '"compute_90"' }, luacuda.cubin, src,
           { arch = "compute_90" })
    misuse("cubin", "arch must be", luacuda.cubin, src, { arch = "sm90" })
  end)
end)
