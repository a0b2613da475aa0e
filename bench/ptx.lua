-- The fake driver's PTX interpreter (spec/fake/ptx/): PTX instructions run per
-- second on one core. A child on the fake (FAKE_CUDA_WORKERS=1, so one
-- worker runs every block) launches a compute-heavy kernel once, a loop of
-- fma and integer hashing per thread and a shared-memory tree reduction per
-- block, and times the launch with its synchronize in CPU time; the fake
-- counts the instructions it ran (FAKE_CUDA_STATS). The child loads the
-- fatbinary a GPU would load, whose PTX the fake runs: the same count as a
-- load of the PTX alone (LUACUDA_PTX=1). Best of BENCH_REPEAT runs (3).
--   lua5.4 bench/ptx.lua    (make bench-ptx)
local B = require "bench.common"
local fake = B.fake_driver()
if not fake then return end
local repeats = tonumber(os.getenv("BENCH_REPEAT")) or 3
local iters = tonumber(os.getenv("BENCH_PTX_ITERS")) or 200

local CHILD = [==[
local l = require "luacuda"
local m = l.compile([[
extern "C" __global__ void work(const float *x, float *out, int iters) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = x[i], b = 1.0001f, c = 0.5f;
  unsigned h = (unsigned)i;
  for (int k = 0; k < iters; k++) {
    a = fmaf(a, b, c);
    b = fmaf(b, 0.9999f, 1e-4f);
    h = h * 1664525u + 1013904223u;
    h ^= h >> 13;
  }
  s[threadIdx.x] = a + (float)(h & 1023);
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
]])
local blocks, threads, iters = 64, 256, tonumber(arg[1])
local x = l.to_device(l.arange(blocks * threads, "float32"))
local out = l.device_array(blocks, "float32")
l.synchronize()
local t0 = os.clock()
m.work[{blocks, threads}](x, out, iters)
l.synchronize()
local t = os.clock() - t0
local sum = 0
for _, v in ipairs(out:totable()) do sum = sum + v end
assert(sum == sum and sum > 0, "the kernel computed " .. sum)
print(("TIME %.6f"):format(t))
]==]

local function run()
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  local script = dir .. "/child.lua"
  local fh = assert(io.open(script, "w"))
  fh:write(CHILD)
  fh:close()
  local cmd = ("LUACUDA_BACKEND=cuda LUACUDA_LIBCUDA=%s LUACUDA_CACHE_DIR=%s/cache "
               .. "FAKE_CUDA_MEMORY=256M FAKE_CUDA_DELAY_US=0 FAKE_CUDA_WORKERS=1 FAKE_CUDA_STATS=%s/stats "
               .. "lua5.4 %s %d 2>&1"):format(fake, dir, dir, script, iters)
  local p = io.popen(cmd)
  local out = p:read("a")
  p:close()
  local t = tonumber(out:match("TIME ([%d.]+)"))
  assert(t, "the child said:\n" .. out)
  local sf = io.open(dir .. "/stats")
  local stats = sf and sf:read("a") or ""
  if sf then sf:close() end
  os.execute("rm -rf " .. dir)
  local n = tonumber(stats:match("ptx_instructions (%d+)"))
  assert(n and n > 0, "no instruction count from FAKE_CUDA_STATS: " .. stats)
  return n, t
end

local best, count, secs
for _ = 1, repeats do
  local n, t = run()
  if not best or n / t > best then best, count, secs = n / t, n, t end
end

local met, total = 0, 0
local function line(name, value, target, ok)
  total = total + 1
  if ok then met = met + 1 end
  print(("%s: %s (target: %s)"):format(name, value, target))
end
print(("%d PTX instructions in %.3f s of CPU time (64 blocks of 256 threads, %d iterations)"):format(
  count, secs, iters))
line("ptx instructions per second per core", ("%.3g"):format(best), ">= 2e7", best >= 2e7)
print(("bench: %d of %d targets met"):format(met, total))
