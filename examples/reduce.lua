-- The sum of a million floats: a shared-memory tree in each block, then
-- atomicAdd across blocks, checked against a sum in Lua.
package.path = ((arg and arg[0] or ""):match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local luacuda = require "luacuda"
local C = require "common"

print("luacuda on the " .. C.describe())
local n = 1000000
local rnd = C.random(11)
local t = {}
for i = 1, n do t[i] = rnd() end
local x = luacuda.to_device(t, {dtype = "float32"})
local out = luacuda.to_device({0}, {dtype = "float32"})

local m = C.kernel("reduce.cu")
m.block_sum[{(n + 255) // 256, 256}](x, out, n)

local want = 0
for _, v in ipairs(x:copy_to_host():totable()) do want = want + v end
local got = out[1]
print(("sum of %d floats: %.6f (Lua: %.6f)"):format(n, got, want))
C.check(math.abs(got - want) <= 1e-5 * want, "within float32 rounding of the Lua sum")
