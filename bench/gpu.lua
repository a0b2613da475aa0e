-- bench/gpu.lua: luacuda on a GPU against the C driver API, CuPy and
-- numba-cuda, measured side by side in one run on the same machine:
--   launch cost of an empty 4-argument kernel (bench/gpu_driver.c calling
--     cuLaunchKernel in a loop; bench/gpu_ref.py for CuPy and numba-cuda);
--   host-to-device and device-to-host copies of 256 MiB, pageable and
--     pinned, against cuMemcpyHtoD/DtoH in C;
--   a column of {16M, 2} float32 (rows of 4 bytes), to the device and
--     back, against a contiguous copy of the same bytes;
--   saxpy over 2^28 floats as a fraction of the device-to-device copy
--     bandwidth (bytes moved per second);
--   luacuda.matmul of two 4096 x 4096 float32 arrays against
--     cublasSgemm_v2 called from C (bench/gpu_driver.c) on the same cuBLAS;
--   device_array of 1 MiB in a loop;
--   compiling the saxpy module: cold, a disk-cache hit in a new process
--     (including module load), an in-process hit.
-- Prints "name: value (target: ...)" and "bench: N of M targets met".
-- Run from the repository root: lua5.4 bench/gpu.lua (make bench-gpu).
local luacuda = require "luacuda"
local B = require "bench.common"

local backend, why = luacuda.backend()
if backend ~= "cuda" then
  print(("bench: the GPU benchmark needs the cuda backend (running %s: %s)"):format(backend, why))
  print("bench: 0 of 0 targets met")
  return
end

local REPEAT = B.REPEAT
local LAUNCHES = tonumber(os.getenv("BENCH_LAUNCHES")) or 20000
local COPY_BYTES = 256 << 20
local SAXPY_N = tonumber(os.getenv("BENCH_SAXPY_N")) or 1 << 28

local sh, best = B.sh, B.best

local met, total = 0, 0
local function target(name, value, fmt, ok, text)
  total = total + 1
  if ok then met = met + 1 end
  print(("%s: " .. fmt .. " (target: %s)%s"):format(name, value, text, ok and "" or " MISSED"))
end

local dev = luacuda.devices and luacuda.devices()[1] or {}
print(("device: %s, %s"):format(dev.name or "?", os.date("!%Y-%m-%d")))

-- ---- launch cost -----------------------------------------------------------
local EMPTY = [[extern "C" __global__ void empty4(float *a, float b, int c, int d) {}]]
local m = luacuda.compile(EMPTY)
local a = luacuda.device_array(4, "float32")
local launch = m.empty4[{1, 1}]
for _ = 1, 1000 do launch(a, 1, 2, 3) end
luacuda.synchronize()
local t_lua = best(function() for _ = 1, LAUNCHES do launch(a, 1, 2, 3) end end) / LAUNCHES * 1e6

-- The C baseline loads the code the library itself runs (module.c,
-- load_source): the cubin for the device's architecture (the library's
-- fatbinary holds it beside its PTX); PTX (which the driver JITs, and
-- which a driver older than NVRTC refuses) only where LUACUDA_PTX=1 asks
-- for it, NVRTC does not know the device, or the device is the fake
-- driver's (which runs PTX only), then for the newest architecture NVRTC
-- knows below it.
local function image_for(src, cc)
  local want = cc and cc[1] * 10 + cc[2] or 75
  local ptx = os.getenv("LUACUDA_PTX")
  local fake = (dev.name or ""):find("^luacuda fake GPU") ~= nil
  if not fake and (not ptx or ptx == "" or ptx == "0") then
    local ok, cubin = pcall(luacuda.cubin, src, {arch = "sm_" .. want})
    if ok then return cubin, "cubin for sm_" .. want end
  end
  for a = want, 50, -1 do                 -- NVRTC refuses an arch it does not know
    local ok, text = pcall(luacuda.ptx, src, {arch = "compute_" .. a})
    if ok then return text, "PTX for compute_" .. a end
  end
  error("bench: NVRTC knows no architecture up to sm_" .. want)
end

local image, what = image_for(EMPTY, dev.compute_capability)
local imagefile, exe = os.tmpname(), os.tmpname()
local f = assert(io.open(imagefile, "wb"))
f:write(image)
f:close()
local ok, out = sh(("cc -O2 -o %s bench/gpu_driver.c -ldl"):format(exe))
assert(ok, out)
ok, out = sh(("%s launch %s %d"):format(exe, imagefile, LAUNCHES))
assert(ok, out)
print(("launch: the C baseline loads a %s"):format(what))
local t_c = tonumber(out:match("launch_us ([%d.]+)"))
print(("launch: luacuda %.2f us, C cuLaunchKernel %.2f us"):format(t_lua, t_c))
target("launch luacuda / C", t_lua / t_c, "%.2fx", t_lua / t_c <= 1.25, "<= 1.25x")

local _, ref = sh(("python3 bench/gpu_ref.py %d"):format(LAUNCHES))
for _, name in ipairs({"cupy", "numba"}) do
  local us = tonumber(ref:match(name .. "_launch_us ([%d.]+)"))
  if us then
    print(("launch: %s %.2f us"):format(name, us))
    target("launch speedup over " .. name, us / t_lua, "%.1fx", us / t_lua >= 3, ">= 3x")
  else
    print(("launch: %s not measured: %s"):format(name,
          ref:match(name .. "_unavailable ([^\n]*)") or ref:sub(1, 200)))
  end
end

-- ---- copies ------------------------------------------------------------------
ok, out = sh(("%s copy %d %d"):format(exe, COPY_BYTES, REPEAT))
assert(ok, out)
local c_gbs = {}
for k, v in out:gmatch("(%S+)_gbs ([%d.]+)") do c_gbs[k] = tonumber(v) end
local n = COPY_BYTES // 4
local d = luacuda.device_array(n, "float32")
for _, kind in ipairs({"pageable", "pinned"}) do
  local h = kind == "pinned" and luacuda.pinned_array(n, "float32") or luacuda.empty(n, "float32")
  h:fill(1)
  local t_h2d = best(function() d:copy_to_device(h) end)
  local t_d2h = best(function() d:copy_to_host(h) end)
  for dir, t in pairs({h2d = t_h2d, d2h = t_d2h}) do
    local gbs = COPY_BYTES / t * 1e-9
    local base = c_gbs[dir .. "_" .. kind]
    print(("%s %s: luacuda %.2f GB/s, C %.2f GB/s"):format(dir, kind, gbs, base))
    target(("%s %s luacuda / C"):format(dir, kind), gbs / base, "%.3fx", gbs / base >= 0.97, ">= 0.97x")
  end
end
-- a column of {rows, 2} float32 (rows of 4 bytes at a pitch of 8), pageable
-- host to device and back, staged (one contiguous transfer and the copy
-- kernel: issue 32, defect 8), against a contiguous copy of the same bytes
do
  local rows = COPY_BYTES // 16
  local dcol = d[{{1, rows * 2}}]:reshape({rows, 2})[{{}, 1}]
  local hm = luacuda.empty({rows, 2}, "float32")
  hm:fill(1)
  local hcol, flat = hm[{{}, 1}], luacuda.empty(rows, "float32")
  local dflat = d[{{1, rows}}]
  local t_col = best(function() dcol:copy_to_device(hcol) end) +
                best(function() dcol:copy_to_host(hcol) end)
  local t_flat = best(function() dflat:copy_to_device(flat) end) +
                 best(function() dflat:copy_to_host(flat) end)
  print(("h2d + d2h of a {%d, 2} float32 column: %.2f GB/s, contiguous %.2f GB/s"):format(rows,
        2 * rows * 4 / t_col * 1e-9, 2 * rows * 4 / t_flat * 1e-9))
  target("narrow-row column copy / contiguous copy", t_flat / t_col, "%.2fx", t_flat / t_col >= 0.5,
         ">= 0.5x")
end

-- ---- matrix products: luacuda.matmul against cublasSgemm_v2 called from C ------
local MM_N = tonumber(os.getenv("BENCH_MATMUL_N")) or 4096
local MM_REPEAT = tonumber(os.getenv("BENCH_MATMUL_REPEAT")) or 10
local blas, blas_why = luacuda.blas()
print(("matmul: luacuda.blas() is %s%s"):format(blas, blas_why and (" (" .. blas_why .. ")") or ""))
ok, out = sh(("%s gemm %d %d"):format(exe, MM_N, MM_REPEAT))
if not ok then
  print("matmul: the C baseline did not run: " .. out)
  target("matmul luacuda / C cuBLAS", 0, "%.3fx", false, ">= 0.95x")
else
  local t_c_gemm = tonumber(out:match("gemm_ms ([%d.]+)")) * 1e-3
  assert(tonumber(out:match("c0 (%S+)")) == MM_N, "bench: the C baseline's product is wrong: " .. out)
  local ma = luacuda.device_array({MM_N, MM_N}, "float32"):fill(1)
  local mb = luacuda.device_array({MM_N, MM_N}, "float32"):fill(1)
  local mc = luacuda.device_array({MM_N, MM_N}, "float32")
  luacuda.matmul(ma, mb, mc)             -- the handle, the first call
  luacuda.synchronize()
  local t_mm = best(function() for _ = 1, MM_REPEAT do luacuda.matmul(ma, mb, mc) end end) / MM_REPEAT
  -- the product timed must be right: ones, so every element is N
  local mch = mc:copy_to_host()
  for _, ij in ipairs({{1, 1}, {MM_N, MM_N}, {MM_N // 2 + 1, 3}, {2, MM_N}}) do
    if mch[ij] ~= MM_N then
      error(("bench: matmul gave c[%d][%d] = %s, not %d"):format(ij[1], ij[2], mch[ij], MM_N))
    end
  end
  local tflops = 2 * MM_N ^ 3 * 1e-12
  print(("matmul %dx%d float32: luacuda %.3f ms (%.1f TFLOP/s), C cublasSgemm_v2 %.3f ms (%.1f TFLOP/s), %s")
        :format(MM_N, MM_N, t_mm * 1e3, tflops / t_mm, t_c_gemm * 1e3, tflops / t_c_gemm,
                out:match("cublas (%S+)") or "?"))
  target("matmul luacuda / C cuBLAS (speed)", t_c_gemm / t_mm, "%.3fx", t_c_gemm / t_mm >= 0.95, ">= 0.95x")
  ma, mb, mc, mch = nil, nil, nil, nil
end

os.remove(imagefile)
os.remove(exe)
d, a = nil, nil

-- ---- saxpy against the copy bandwidth ----------------------------------------
local ms = luacuda.compile_file("examples/kernels/saxpy.cu")
local x = luacuda.device_array(SAXPY_N, "float32"):fill(1)
local y = luacuda.device_array(SAXPY_N, "float32"):fill(2)
local t_saxpy = best(function() ms.saxpy[{SAXPY_N // 256, 256}](SAXPY_N, 2.0, x, y) end)
-- the kernel timed must compute the right thing: once more from y = 2
y:fill(2)
ms.saxpy[{SAXPY_N // 256, 256}](SAXPY_N, 2.0, x, y)
local yh = y:copy_to_host()
for i = 1, SAXPY_N, math.max(1, SAXPY_N // 4099) do
  if yh[i] ~= 4 then error(("bench: saxpy gave y[%d] = %s, not 4"):format(i, yh[i])) end
end
if yh[SAXPY_N] ~= 4 then error(("bench: saxpy gave y[%d] = %s, not 4"):format(SAXPY_N, yh[SAXPY_N])) end
print(("saxpy result checked: y = 2 * 1 + 2 = 4 at every %dth of %d elements"):format(math.max(1, SAXPY_N // 4099), SAXPY_N))
yh = nil
local t_copy = best(function() y:copy_to_device(x) end)
local bytes = SAXPY_N * 4
local frac = (3 * bytes / t_saxpy) / (2 * bytes / t_copy)
print(("saxpy of %d floats: %.2f ms, %.0f GB/s; device-to-device copy %.0f GB/s"):format(SAXPY_N,
      t_saxpy * 1e3, 3 * bytes / t_saxpy * 1e-9, 2 * bytes / t_copy * 1e-9))
target("saxpy bandwidth / copy bandwidth", frac, "%.2f", frac >= 0.9, ">= 0.9")

-- ---- array math against the same copy bandwidth ----------------------------
-- a + b moves three arrays' bytes, as saxpy does; checked like saxpy
y:fill(2)
local z = luacuda.device_array(SAXPY_N, "float32")
local t_add = best(function() luacuda.add(x, y, z) end)
local zh = z:copy_to_host()
for i = 1, SAXPY_N, math.max(1, SAXPY_N // 4099) do
  if zh[i] ~= 3 then error(("bench: a + b gave z[%d] = %s, not 3"):format(i, zh[i])) end
end
zh = nil
local frac_add = (3 * bytes / t_add) / (2 * bytes / t_copy)
print(("a + b of %d floats: %.2f ms, %.0f GB/s"):format(SAXPY_N, t_add * 1e3, 3 * bytes / t_add * 1e-9))
target("a + b bandwidth / copy bandwidth", frac_add, "%.2f", frac_add >= 0.85, ">= 0.85")
z = nil

-- a sum reads one array: its bandwidth against the same copy's
local t_sum = best(function() local _ = y:sum() end)
local s = y:sum()
if s ~= 2 * SAXPY_N then error(("bench: y:sum() gave %s, not %d"):format(s, 2 * SAXPY_N)) end
local frac_sum = (bytes / t_sum) / (2 * bytes / t_copy)
print(("sum of %d floats: %.2f ms, %.0f GB/s"):format(SAXPY_N, t_sum * 1e3, bytes / t_sum * 1e-9))
target("sum bandwidth / copy bandwidth", frac_sum, "%.2f", frac_sum >= 0.8, ">= 0.8")
x, y = nil, nil
collectgarbage()

-- ---- allocation --------------------------------------------------------------
local ALLOCS = 10000
for _ = 1, 100 do luacuda.device_array(1 << 18, "float32") end
local t_alloc = best(function()
  for _ = 1, ALLOCS do luacuda.device_array(1 << 18, "float32") end
end) / ALLOCS * 1e6
target("device_array(1 MiB)", t_alloc, "%.2f us", t_alloc < 3, "< 3 us")

-- ---- compiling -----------------------------------------------------------------
local dir = os.tmpname()
os.remove(dir)
local env = ("LUA_PATH=%q LUA_CPATH=%q LUACUDA_CACHE_DIR=%q "):format(
  package.path, package.cpath, dir)
local script = [[lua5.4 -e '
  local luacuda = require "luacuda"
  local t0 = luacuda.clock()
  local m = luacuda.compile_file("examples/kernels/saxpy.cu")
  local t1 = luacuda.clock()
  luacuda.compile_file("examples/kernels/saxpy.cu")
  print(("compile_ms %.4f %.4f"):format((t1 - t0) * 1e3, (luacuda.clock() - t1) * 1e3))']]
local function compile_times()
  local okc, o = sh(env .. script)
  assert(okc, o)
  local cold, again = o:match("compile_ms ([%d.]+) ([%d.]+)")
  return tonumber(cold), tonumber(again)
end
local t_cold = compile_times()
local t_disk, t_mem = math.huge, math.huge
for _ = 1, REPEAT do
  local td, tm = compile_times()
  t_disk, t_mem = math.min(t_disk, td), math.min(t_mem, tm)
end
sh("rm -rf " .. dir)
print(("compile saxpy: cold %.1f ms, in-process hit %.3f ms"):format(t_cold, t_mem))
target("compile saxpy, disk-cache hit in a new process", t_disk, "%.3f ms", t_disk < 1, "< 1 ms")

print(("bench: %d of %d targets met"):format(met, total))
