-- A byte histogram with atomics in dynamic shared memory, checked against
-- counts made in Lua.
package.path = ((arg and arg[0] or ""):match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local luacuda = require "luacuda"
local C = require "common"

print("luacuda on the " .. C.describe())
local n, nbins = 1 << 20, 64
local rnd = C.random(3)
local t = {}
for i = 1, n do t[i] = math.floor(rnd() * 256) end
local data = luacuda.to_device(t, {dtype = "uint8"})
local bins = luacuda.to_device(luacuda.zeros(nbins, "uint32"))

local m = C.kernel("histogram.cu")
-- a fixed grid that strides over the data; nbins counters of shared memory
m.histogram[{64, 256, nil, nbins * 4}](data, n, bins, nbins)

local want = {}
for b = 1, nbins do want[b] = 0 end
for i = 1, n do want[t[i] % nbins + 1] = want[t[i] % nbins + 1] + 1 end
local got = bins:copy_to_host():totable()
local same, total = true, 0
for b = 1, nbins do
  same = same and got[b] == want[b]
  total = total + got[b]
end
print(("%d bytes into %d bins; bin 1 holds %d"):format(n, nbins, got[1]))
C.check(same and total == n, "every bin matches the count made in Lua")
