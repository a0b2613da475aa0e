-- bench/jit.lua: Lua kernels (luacuda.jit) against the same kernels in CUDA
-- C++ (examples/kernels/), in one run on the simulator: saxpy on 2^22
-- floats, a 256-thread shared-memory reduction over 2^20 floats and a
-- 16 x 16 tiled matmul of 256 x 256, each as a ratio of times (jit / C++);
-- then a small launch of each (one block, in a loop of launches: the jit's
-- own cost per launch), the translation of a 100-line kernel, and the PTX
-- instruction count of each kernel's entry (jit / C++, NVRTC's PTX).
-- Prints "name: value (target: ...)" and "bench: N of M targets met".
--   LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="build/?.so;;" lua5.4 bench/jit.lua
local luacuda = require "luacuda"
local B = require "bench.common"
local K = luacuda.kernel
B.results("jit")

if luacuda.backend() ~= "sim" then
  print("bench: the jit benchmark needs the sim backend (LUACUDA_BACKEND=sim)")
  return
end

local NS, NR, NM, TPB, TILE = 1 << 22, 1 << 20, 256, 256, 16
local best = B.best
local function kernels(file) return luacuda.compile_file("examples/kernels/" .. file) end

-- the Lua kernels, written as the C++ ones are
local saxpy = luacuda.jit(function(n, a, x, y)
  local i = K.grid(1)
  if i <= n then y[i] = a * x[i] + y[i] end
end, { name = "saxpy_lua", signature = { "int32", "float32" } })

local block_sum = luacuda.jit(function(x, out, n)
  local part = K.shared.array(TPB, "float32")
  local t, i = K.threadIdx.x, K.grid(1)
  part[t] = i <= n and x[i] or 0
  K.syncthreads()
  local half = TPB // 2
  while half > 0 do
    if t <= half then part[t] = part[t] + part[t + half] end
    K.syncthreads()
    half = half // 2
  end
  if t == 1 then K.atomic.add(out, 1, part[1]) end
end, { name = "block_sum_lua", signature = { n = "int32" } })

local matmul = luacuda.jit(function(a, b, c, n)
  local ta = K.shared.array({ TILE, TILE }, "float32")
  local tb = K.shared.array({ TILE, TILE }, "float32")
  local tx, ty = K.threadIdx.x, K.threadIdx.y
  local row, col = (K.blockIdx.y - 1) * TILE + ty, (K.blockIdx.x - 1) * TILE + tx
  local acc = 0.0
  for t = 1, n // TILE do
    ta[{ ty, tx }] = a[{ row, (t - 1) * TILE + tx }]
    tb[{ ty, tx }] = b[{ (t - 1) * TILE + ty, col }]
    K.syncthreads()
    for k = 1, TILE do acc = acc + ta[{ ty, k }] * tb[{ k, tx }] end
    K.syncthreads()
  end
  c[{ row, col }] = acc
end, { name = "matmul_lua", signature = { n = "int32" } })

local ms, mr, mm = kernels("saxpy.cu"), kernels("reduce.cu"), kernels("matmul_shared.cu")
local x = luacuda.to_device(luacuda.arange(NS, "float32"))
local y = luacuda.to_device(luacuda.full(NS, 1.0, "float32"))
local xr = x[{ { 1, NR } }]
local out = luacuda.to_device({ 0 }, { dtype = "float32" })
local a = luacuda.to_device(luacuda.arange(NM * NM, "float32"):reshape(NM, NM))
local b = luacuda.to_device(luacuda.arange(NM * NM, "float32"):reshape(NM, NM))
local c = luacuda.device_array({ NM, NM }, "float32")

local figures, met = {}, 0
local function figure(name, value, target, unit)
  local pass = value <= target
  if pass then met = met + 1 end
  figures[#figures + 1] = ("%s: %.3g%s (target: <= %g%s)"):format(name, value, unit, target, unit)
  B.record(name, value, target, "<=")
end

local function ratio(label, f_jit, f_cxx)
  f_jit(); f_cxx()                     -- compiled and warm
  local tj, tc = best(f_jit), best(f_cxx)
  print(("%s: jit %.3g ms, C++ %.3g ms"):format(label, tj * 1e3, tc * 1e3))
  figure(label .. " jit/C++", tj / tc, 1.1, "x")
end

ratio("saxpy", function() saxpy[{ NS // 256, 256 }](NS, 2.0, x, y) end,
  function() ms.saxpy[{ NS // 256, 256 }](NS, 2.0, x, y) end)
ratio("reduction", function() block_sum[{ NR // TPB, TPB }](xr, out, NR) end,
  function() mr.block_sum[{ NR // TPB, TPB }](xr, out, NR) end)
ratio("matmul", function() matmul[{ { NM // TILE, NM // TILE }, { TILE, TILE } }](a, b, c, NM) end,
  function() mm.matmul[{ { NM // TILE, NM // TILE }, { TILE, TILE } }](a, b, c, NM) end)

-- small launches: one block of 256 threads, in a loop of launches
local LAUNCHES, ns = 2000, 256
local xs, ys = x[{ { 1, ns } }], y[{ { 1, ns } }]
local one_block = { 1, 256 }
local t_jit = best(function() for _ = 1, LAUNCHES do saxpy[one_block](ns, 2.0, xs, ys) end end) / LAUNCHES
local t_cxx = best(function() for _ = 1, LAUNCHES do ms.saxpy[one_block](ns, 2.0, xs, ys) end end) / LAUNCHES
print(("small launch: jit %.3g us, C++ %.3g us"):format(t_jit * 1e6, t_cxx * 1e6))
figure("small launch jit/C++", t_jit / t_cxx, 1.2, "x")

-- translation (Lua source to C++ text) of a 100-line kernel
local lines = { "local K = ...", "return function(x, y, out)", "  local i = K.grid(1)",
  "  if i > #x then return end", "  local a, b, s = x[i], y[i], 0.0" }
for k = 1, 94 do
  lines[#lines + 1] = ("  s = s + (a * %d.5 - b // 3) %% 7 + math.sqrt(math.abs(a + %d))"):format(k, k)
end
lines[#lines + 1] = "  out[i] = s"
lines[#lines + 1] = "end"
-- each time a new function: read, parsed and translated (k:source never
-- reads the disk cache's translations)
local text = table.concat(lines, "\n")
local xd = luacuda.device_array(4, "float64")
local N = 20
local bigs = {}
for n = 1, N do bigs[n] = luacuda.jit(load(text)(K)) end
local t0 = os.clock()
for n = 1, N do bigs[n]:source(xd, xd, xd) end
figure("translation of a 100-line kernel (ms)", (os.clock() - t0) / N * 1e3, 10, "")

-- the PTX NVRTC makes of each (what a GPU, or the fake driver, runs): the
-- instructions of the kernel's entry, jit against C++ (target: within 10%)
local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end
local function ptx_instructions(ptx, name)
  local body = assert(ptx:match("%.entry%s+" .. name .. "%s*%b().-(%b{})"), name)
  local n = 0
  for line in body:gmatch("[^\n]+") do
    local l = line:gsub("//.*", ""):match("^%s*(.-)%s*$")
    if l:find(";$") and not l:find("^%.") then n = n + 1 end
  end
  return n
end
local ok_ptx = pcall(luacuda.ptx, 'extern "C" __global__ void probe() {}')
if ok_ptx then
  for _, c in ipairs({
    { "saxpy", saxpy, "saxpy_lua", { NS, 2.0, x, y }, "saxpy.cu" },
    { "reduction", block_sum, "block_sum_lua", { xr, out, NR }, "reduce.cu", "block_sum" },
    { "matmul", matmul, "matmul_lua", { a, b, c, NM }, "matmul_shared.cu" },
  }) do
    local nj = ptx_instructions(luacuda.ptx(c[2]:source(table.unpack(c[4]))), c[3])
    local nc = ptx_instructions(luacuda.ptx(read("examples/kernels/" .. c[5])), c[6] or c[1])
    print(("%s PTX instructions: jit %d, C++ %d"):format(c[1], nj, nc))
    figure(c[1] .. " PTX instructions jit/C++", nj / nc, 1.1, "x")
  end
else
  print("bench: NVRTC is not available: the PTX instruction counts are left out")
end

for _, line in ipairs(figures) do print(line) end
print(("bench: %d of %d targets met"):format(met, #figures))
