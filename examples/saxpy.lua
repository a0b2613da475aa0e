-- saxpy on 2^24 floats: y = a * x + y, checked element by element; then
-- the same without a kernel, with array math.
--   make demo
--   lua5.4 examples/saxpy.lua [n]
package.path = ((arg and arg[0] or ""):match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local luacuda = require "luacuda"
local C = require "common"

print("luacuda on the " .. C.describe())
local m = C.kernel("saxpy.cu")
local n = math.tointeger(tonumber(arg[1]) or 1 << 24)
local x = luacuda.to_device(luacuda.arange(n, "float32"))
local y = luacuda.to_device(luacuda.full(n, 1.0, "float32"))

local t0 = luacuda.clock()
m.saxpy[{(n + 255) // 256, 256}](n, 2.0, x, y)
luacuda.synchronize()
local t = luacuda.clock() - t0
print(("saxpy of %d floats: %.1f ms, %.0f million threads/s"):format(n, t * 1e3, n / t / 1e6))

-- above 2^24 the exact result is rounded to float32, as the kernel rounds it
local function f32(v) return (string.unpack("f", string.pack("f", v))) end
local h = y:copy_to_host()
local bad = 0
for i = 1, n, 4099 do                         -- a spread-out sample, and the ends
  if h[i] ~= f32(2 * (i - 1) + 1) then bad = bad + 1 end
end
C.check(bad == 0 and h[1] == 1 and h[n] == f32(2 * (n - 1) + 1), "y[i] == 2 * x[i] + 1")

-- The same without writing a kernel: array math (docs/guide/array-math.md).
-- 2.0 * x is float32 (a Lua number takes the array's dtype), and so is the
-- sum; each operation makes a new array.
local y1 = luacuda.to_device(luacuda.full(n, 1.0, "float32"))
t0 = luacuda.clock()
y1 = 2.0 * x + y1
luacuda.synchronize()
t = luacuda.clock() - t0
print(("y = 2.0 * x + y with array math: %.1f ms"):format(t * 1e3))
local h1 = y1:copy_to_host()
bad = 0
for i = 1, n, 4099 do
  if h1[i] ~= h[i] then bad = bad + 1 end
end
C.check(y1.dtype == "float32" and bad == 0 and h1[n] == h[n], "array math's y == the kernel's y")
