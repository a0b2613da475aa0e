-- bench/matmul.lua: matrix products on the simulator against a plain triple
-- loop in C (bench/native_matmul.c, built with $CC -O2 and timed in the
-- same run): luacuda.matmul of two 512 x 512 float32 device arrays, the
-- library's tiled kernel (kernels/matmul.cu) run by the simulator, per
-- worker thread (the loop runs on one core); and of host arrays, the
-- host's blocked loop (src/base/matmul.c, one thread). The results are
-- checked against the loop's. These are the library's own loop and
-- kernel: make bench runs it with LUACUDA_CPU_BLAS=0 (bench/blas.lua
-- measures the CPU's BLAS against NumPy). Prints "name: value (target:
-- ...)" and "bench: N of M targets met".
local luacuda = require "luacuda"
local B = require "bench.common"
B.results("matmul")

if luacuda.backend() ~= "sim" then
  print("bench: the simulator's matmul benchmark needs the sim backend (LUACUDA_BACKEND=sim)")
  print("bench: 0 of 0 targets met")
  return
end

local N = tonumber(os.getenv("BENCH_MATMUL_N")) or 512
local sh, best = B.sh, B.best

local cc = os.getenv("CC") or "cc"
local exe = os.tmpname()
local ok, out = sh(("%s -O2 -o %s bench/native_matmul.c"):format(cc, exe))
assert(ok, out)
ok, out = sh(("%s %d %d"):format(exe, N, B.REPEAT))
os.remove(exe)
assert(ok, out)
local t_loop, c12, cnn = out:match("loop_s ([%d.]+) (%S+) (%S+)")
t_loop, c12, cnn = tonumber(t_loop), tonumber(c12), tonumber(cnn)

local workers = tonumber(os.getenv("LUACUDA_SIM_THREADS"))
if not workers then
  local _, n = sh("nproc")
  workers = tonumber(n) or 1
end

-- the loop's inputs: a[i][k] = (3i + 5k) % 11 - 5, b[k][j] = (7k + 2j) % 13 - 6 (0-based)
local ta, tb = {}, {}
for i = 1, N do
  local ra, rb = {}, {}
  for k = 1, N do
    ra[k] = (3 * (i - 1) + 5 * (k - 1)) % 11 - 5
    rb[k] = (7 * (i - 1) + 2 * (k - 1)) % 13 - 6
  end
  ta[i], tb[i] = ra, rb
end
-- two elements in Lua, for the loop's check too
local function element(i, j)
  local s = 0
  for k = 1, N do s = s + ta[i][k] * tb[k][j] end
  return s
end
assert(element(1, 2) == c12 and element(N, N) == cnn,
       ("bench: the C loop gave %s and %s, Lua %s and %s"):format(c12, cnn, element(1, 2), element(N, N)))
local ha, hb = luacuda.array(ta, "float32"), luacuda.array(tb, "float32")
local da, db = luacuda.to_device(ha), luacuda.to_device(hb)
local dc = luacuda.device_array({N, N}, "float32")
local hc = luacuda.empty({N, N}, "float32")

local t0 = luacuda.clock()
luacuda.matmul(da, db, dc)            -- the kernel's compile (or its disk-cache hit)
luacuda.synchronize()
print(("first product of the process (the kernel compiled or loaded): %.2f s"):format(luacuda.clock() - t0))
local t_sim = best(function() luacuda.matmul(da, db, dc) end)
local t_host = best(function() luacuda.matmul(ha, hb, hc) end)

-- the results: integers below 2^24, exact in float32 on every side
local dch = dc:copy_to_host()
for _, r in ipairs({{dch, "simulator"}, {hc, "host"}}) do
  local got12, gotnn = r[1][{1, 2}], r[1][{N, N}]
  if got12 ~= c12 or gotnn ~= cnn then
    error(("bench: the %s's product gave %s and %s, the loop %s and %s"):format(r[2], got12, gotnn, c12, cnn))
  end
end
print(("results checked: C[1][2] = %g, C[%d][%d] = %g on every side"):format(c12, N, N, cnn))

local flops = 2 * N ^ 3
print(("C loop %.3f s (%.2f GFLOP/s); simulator %.4f s on %d workers (%.2f GFLOP/s); host %.4f s (%.2f GFLOP/s)")
      :format(t_loop, flops / t_loop * 1e-9, t_sim, workers, flops / t_sim * 1e-9, t_host,
              flops / t_host * 1e-9))

local met, total = 0, 0
local function figure(name, value, target)
  total = total + 1
  if value >= target then met = met + 1 end
  print(("%s: %.3gx (target: >= %gx)"):format(name, value, target))
  B.record(name, value, target, ">=")
end
figure(("matmul %dx%d float32, simulator per worker thread / C triple loop"):format(N, N),
       t_loop / t_sim / workers, 2)
figure(("matmul %dx%d float32, host arrays / C triple loop"):format(N, N), t_loop / t_host, 2)
print(("bench: %d of %d targets met"):format(met, total))
