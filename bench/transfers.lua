-- bench/transfers.lua: host-to-device and device-to-host copies of 256 MiB
-- from pageable (host), pinned and mapped memory, on the active backend, as
-- GB/s and as a ratio against a plain memcpy of the same size measured in
-- the same run (bench/memcpy.c, built with the C compiler at -O2). A ratio
-- is memcpy's time over the transfer's: 1 is memcpy's speed.
-- Prints "name: value (target: ...)" and "bench: N of M targets met".
local luacuda = require "luacuda"
local B = require "bench.common"
B.results("transfers")

local MIB = tonumber(os.getenv("BENCH_TRANSFER_MIB")) or 256
local N = MIB << 20
local REPEAT = B.REPEAT
local TARGET = 0.8

local sh, best = B.sh, B.best

-- the baseline: memcpy between two touched host blocks, best of REPEAT
local cc = os.getenv("CC") or "cc"
local exe = os.tmpname()
local ok, out = sh(("%s -std=c11 -O2 -o %s bench/memcpy.c"):format(cc, exe))
assert(ok, out)
ok, out = sh(("%s %d %d"):format(exe, N, REPEAT))
os.remove(exe)
assert(ok, out)
local t_memcpy = tonumber(out:match("memcpy (%d+)")) * 1e-9
local t_memcpy64 = tonumber(out:match("memcpy%+64 (%d+)")) * 1e-9

-- every block touched before timing (fill), as the baseline's are
local d = luacuda.device_array(N, "uint8")
d:fill(1)
local sources = {
  { "pageable", luacuda.empty(N, "uint8") },
  { "pinned", luacuda.pinned_array(N, "uint8") },
  { "mapped", luacuda.mapped_array(N, "uint8") },
}

local gbs = function(t) return N / t / 1e9 end
print(("memcpy of %d MiB: %.2f GB/s (the baseline: blocks at the same page offset; %s backend)")
      :format(MIB, gbs(t_memcpy), luacuda.backend()))
print(("memcpy of %d MiB, destination 64 bytes further in its page: %.2f GB/s (not a baseline)")
      :format(MIB, gbs(t_memcpy64)))
local figures, met = {}, 0
for _, s in ipairs(sources) do
  local name, h = s[1], s[2]
  h:fill(2)
  local t_h2d = best(function() d:copy_to_device(h) end)
  local t_d2h = best(function() d:copy_to_host(h) end)
  for _, f in ipairs({ { "host-to-device", t_h2d }, { "device-to-host", t_d2h } }) do
    local ratio = t_memcpy / f[2]
    if ratio >= TARGET then met = met + 1 end
    print(("%s %s: %.2f GB/s"):format(f[1], name, gbs(f[2])))
    figures[#figures + 1] = ("%s %s / memcpy: %.2fx (target: >= %gx)")
      :format(f[1], name, ratio, TARGET)
    B.record(("%s %s / memcpy"):format(f[1], name), ratio, TARGET, ">=")
  end
end
for _, line in ipairs(figures) do print(line) end
print(("bench: %d of %d targets met"):format(met, #figures))
