-- saxpy written in Lua (luacuda.jit), beside the CUDA C++ one of
-- examples/kernels/saxpy.cu: y = a * x + y on 2^20 floats, checked against
-- the compiled C++ kernel element for element.
--   lua5.4 examples/saxpy_jit.lua
package.path = ((arg and arg[0] or ""):match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local luacuda = require "luacuda"
local C = require "common"
local K = luacuda.kernel

print("luacuda on the " .. C.describe())

-- a is float32, as the C++ kernel's `float a` (a Lua float is a float64)
local saxpy = luacuda.jit(function(a, x, y)
  local i = K.grid(1)                       -- from 1
  if i <= #y then y[i] = a * x[i] + y[i] end
end, {name = "saxpy_lua", signature = {a = "float32"}})

local n = 1 << 20
local x = luacuda.to_device(luacuda.arange(n, "float32"))
local y = luacuda.to_device(luacuda.full(n, 1.0, "float32"))
local t0 = luacuda.clock()
saxpy[{(n + 255) // 256, 256}](2.0, x, y)
luacuda.synchronize()
print(("Lua saxpy of %d floats: %.1f ms (the first launch translates and compiles)"):format(
  n, (luacuda.clock() - t0) * 1e3))

local m = C.kernel("saxpy.cu")
local y2 = luacuda.to_device(luacuda.full(n, 1.0, "float32"))
m.saxpy[{(n + 255) // 256, 256}](n, 2.0, x, y2)

local h, h2 = y:copy_to_host(), y2:copy_to_host()
local bad = 0
for i = 1, n, 1021 do
  if h[i] ~= h2[i] then bad = bad + 1 end
end
C.check(bad == 0 and h[n] == h2[n] and h[2] == 3, "the Lua kernel's y == the C++ kernel's y")
