-- bench/host_arrays.lua: Lua tables <-> arrays, and element access, each as
-- a ratio against a plain Lua loop over a Lua table timed in the same run.
-- Run with `make bench`. Prints "name: ratio (target: ...)" per figure and
-- "bench: N of M targets met" last.
local luacuda = require "luacuda"
local B = require "bench.common"
B.results("host_arrays")

local N = 1000000
local REPEAT = tonumber(os.getenv("BENCH_REPEAT")) or 7

local sink   -- keeps results alive while timed, so nothing is optimized away

-- best (smallest) CPU time of f over REPEAT runs; the previous run's result
-- is dropped first, so every run starts from the same allocator state
local function best(f)
  local t = math.huge
  for _ = 1, REPEAT do
    sink = nil
    collectgarbage()
    local c = os.clock()
    f()
    c = os.clock() - c
    if c < t then t = c end
  end
  return t
end

local t = {}
for i = 1, N do t[i] = i * 0.5 end
local host = luacuda.array(t)
local dev = luacuda.to_device(t)

local read_loop = best(function()
  local s = 0
  for i = 1, N do s = s + t[i] end
  sink = s
end)
local build_loop = best(function()
  local u = {}
  for i = 1, N do u[i] = t[i] end
  sink = u
end)
local write_loop = best(function()
  for i = 1, N do t[i] = 1.5 end
end)

-- arrays an async copy wrote, and read: once that copy is done, they cost
-- what an array no queued work ever used costs (src/binding/pending.c)
local copied, source = luacuda.array(t), luacuda.array(t)
local stream = luacuda.stream()
dev:copy_to_host(copied, stream)
luacuda.device_array_like(dev):copy_to_device(source, stream)
stream:synchronize()
local function read_all(a)
  return function()
    local s = 0
    for i = 1, N do s = s + a[i] end
    sink = s
  end
end

local figures = {
  { "to_device(1e6-element table) / Lua loop reading the table",
    best(function() sink = luacuda.to_device(t) end) / read_loop, 1.5 },
  { "array(1e6-element table) / Lua loop reading the table",
    best(function() sink = luacuda.array(t) end) / read_loop, 1.5 },
  { "device totable() of 1e6 elements / Lua loop building a table",
    best(function() sink = dev:totable() end) / build_loop, 1.5 },
  { "host totable() of 1e6 elements / Lua loop building a table",
    best(function() sink = host:totable() end) / build_loop, 1.5 },
  { "a[i] read, host float64 / t[i] read",
    best(function()
      local s = 0
      for i = 1, N do s = s + host[i] end
      sink = s
    end) / read_loop, 3 },
  { "a[i] = v write, host float64 / t[i] = v write",
    best(function()
      for i = 1, N do host[i] = 1.5 end
    end) / write_loop, 3 },
  { "a[i] read, host float64 an async copy wrote / one never queued on",
    best(read_all(copied)) / best(read_all(host)), 1.1 },
  { "a[i] read, host float64 an async copy read / one never queued on",
    best(read_all(source)) / best(read_all(host)), 1.1 },
}

-- Not a target: the floor any C __index pays, a metamethod that does
-- nothing (rawequal) on a table; a[i] cannot be cheaper than this.
local proxy = setmetatable({}, { __index = rawequal, __newindex = rawequal })
local floor_read = best(function()
  local s = 0
  for i = 1, N do if proxy[i] then s = s + 1 end end
  sink = s
end) / read_loop
local floor_write = best(function()
  for i = 1, N do proxy[i] = 1.5 end
end) / write_loop

local met = 0
for _, f in ipairs(figures) do
  local name, ratio, target = f[1], f[2], f[3]
  if ratio <= target then met = met + 1 end
  print(("%s: %.2fx (target: <= %gx)"):format(name, ratio, target))
  B.record(name, ratio, target, "<=")
end
print(("floor (not a target): an empty C __index / t[i] read: %.2fx"):format(floor_read))
print(("floor (not a target): an empty C __newindex / t[i] = v write: %.2fx"):format(floor_write))
print(("baseline: Lua read loop %.1f ns/element, build loop %.1f ns/element, write loop %.1f ns/element")
  :format(read_loop / N * 1e9, build_loop / N * 1e9, write_loop / N * 1e9))
print(("bench: %d of %d targets met"):format(met, #figures))
