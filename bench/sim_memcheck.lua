-- bench/sim_memcheck.lua: what the simulator's memory checking
-- (LUACUDA_SIM_MEMCHECK, on by default) costs, against the same work with
-- it off, in one run. The setting is read once per process, so each side
-- runs in a child process of its own (this file again, with BENCH_SIDE
-- set). Prints "name: value (target: ...)" and "bench: N of M targets met".
local luacuda = require "luacuda"
local B = require "bench.common"

local SMALL, LIVE = 16, 4000        -- float32 elements; arrays kept alive at once
local NS, NM = 1 << 22, 256        -- saxpy's elements, matmul's side

-- resident and mapped memory of this process, in bytes and mappings
local function footprint()
  local f = assert(io.open("/proc/self/statm"))
  local resident = f:read("a"):match("^%d+ (%d+)")
  f:close()
  local maps = 0
  for _ in io.lines("/proc/self/maps") do maps = maps + 1 end
  return tonumber(resident) * 4096, maps
end

-- one side: print its figures as "name value" lines
local function side()
  -- allocate and free one small array at a time: freed blocks are reused
  local t_churn = B.best(function()
    for _ = 1, 2000 do luacuda.device_array(SMALL, "float32"):close() end
  end) / 2000
  -- LIVE small arrays alive at once, each written (its pages touched), then freed
  local rss0, maps0 = footprint()
  local keep = {}
  local t0 = luacuda.clock()
  for i = 1, LIVE do
    keep[i] = luacuda.device_array(SMALL, "float32")
    keep[i]:fill(0)
  end
  local t_live = (luacuda.clock() - t0) / LIVE
  local rss1, maps1 = footprint()
  for i = 1, LIVE do keep[i]:close() end
  -- a kernel's speed: saxpy over large arrays, and over one small array
  local m = luacuda.compile_file("examples/kernels/saxpy.cu")
  local x = luacuda.to_device(luacuda.arange(NS, "float32"))
  local y = luacuda.to_device(luacuda.full(NS, 1.0, "float32"))
  local t_saxpy = B.best(function() m.saxpy[{NS // 256, 256}](NS, 2.0, x, y) end)
  local mm = luacuda.compile_file("examples/kernels/matmul_shared.cu")
  local a = luacuda.to_device(luacuda.arange(NM * NM, "float32"):reshape(NM, NM))
  local c = luacuda.device_array({NM, NM}, "float32")
  local t_matmul = B.best(function() mm.matmul[{{NM // 16, NM // 16}, {16, 16}}](a, a, c, NM) end)
  local xs = luacuda.to_device(luacuda.arange(SMALL, "float32"))
  local ys = luacuda.to_device(luacuda.full(SMALL, 1.0, "float32"))
  local t_small = B.best(function()
    for _ = 1, 1000 do m.saxpy[{1, SMALL}](SMALL, 2.0, xs, ys) end
  end) / 1000
  print("churn", t_churn)
  print("live", t_live)
  print("bytes", (rss1 - rss0) / LIVE)
  print("maps", (maps1 - maps0) / LIVE)
  print("saxpy", t_saxpy)
  print("small", t_small)
  print("matmul", t_matmul)
end

if os.getenv("BENCH_SIDE") then
  side()
  return
end

B.results("sim_memcheck")
if luacuda.backend() ~= "sim" then
  print("bench: the memory checking benchmark needs the sim backend (LUACUDA_BACKEND=sim)")
  return
end

local function run(setting)
  local ok, out = B.sh(("BENCH_SIDE=1 LUACUDA_BACKEND=sim LUACUDA_SIM_MEMCHECK=%s lua5.4 %s")
                       :format(setting, arg[0]))
  assert(ok, out)
  local t = {}
  for name, v in out:gmatch("(%w+)\t([%d.e+-]+)") do t[name] = tonumber(v) end
  return t
end
-- the sides alternate, three times each: each figure is the best of its runs,
-- so that load from elsewhere on the machine favours neither
local off, on = run(0), run(1)
for _ = 2, 3 do
  for side, t in pairs({[off] = run(0), [on] = run(1)}) do
    for k, v in pairs(t) do side[k] = math.min(side[k], v) end
  end
end

print(("small array (%d float32) allocated and freed: %.3g us checked, %.3g us unchecked")
      :format(SMALL, on.churn * 1e6, off.churn * 1e6))
print(("%d small arrays alive: %.3g us each to allocate and fill checked, %.3g us unchecked; "
       .. "%.0f bytes resident and %.2f mappings each checked, %.0f bytes and %.2f unchecked")
      :format(LIVE, on.live * 1e6, off.live * 1e6, on.bytes, on.maps, off.bytes, off.maps))

local figures, met = {}, 0
local function figure(name, value, target)
  local pass = value <= target
  if pass then met = met + 1 end
  figures[#figures + 1] = ("%s: %.3gx (target: <= %gx)"):format(name, value, target)
  B.record(name, value, target, "<=")
end

figure("saxpy on 2^22 floats, memory checking on/off", on.saxpy / off.saxpy, 1.1)
figure("tiled matmul 256 x 256, memory checking on/off", on.matmul / off.matmul, 1.1)
figure("saxpy launch on 16 floats, memory checking on/off", on.small / off.small, 1.25)
figure("small array allocated and freed, memory checking on/off", on.churn / off.churn, 3)
figure("small arrays alive at once, allocation time on/off", on.live / off.live, 10)

for _, line in ipairs(figures) do print(line) end
print(("bench: %d of %d targets met"):format(met, #figures))
