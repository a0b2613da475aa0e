-- A 16 x 16 tiled matrix product through shared memory, checked against a
-- product computed in Lua.
package.path = ((arg and arg[0] or ""):match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local luacuda = require "luacuda"
local C = require "common"

print("luacuda on the " .. C.describe())
local n = 128
local rnd = C.random(7)
local a, b = {}, {}
for i = 1, n do
  a[i], b[i] = {}, {}
  for j = 1, n do a[i][j], b[i][j] = rnd() - 0.5, rnd() - 0.5 end
end
local da = luacuda.to_device(a, {dtype = "float32"})
local db = luacuda.to_device(b, {dtype = "float32"})
local dc = luacuda.device_array({n, n}, "float32")

local m = C.kernel("matmul_shared.cu")
m.matmul[{{n // 16, n // 16}, {16, 16}}](da, db, dc, n)
local c = dc:copy_to_host()

-- the same product in Lua, from the float32 values the device saw
local ha, hb = da:copy_to_host():totable(), db:copy_to_host():totable()
local worst = 0
for i = 1, n do
  for j = 1, n do
    local s = 0
    for k = 1, n do s = s + ha[i][k] * hb[k][j] end
    worst = math.max(worst, math.abs(s - c[{i, j}]))
  end
end
print(("%d x %d product, largest difference from Lua: %.2g"):format(n, n, worst))
C.check(worst < 1e-4, "matches the product computed in Lua")
