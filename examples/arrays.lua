-- A tour of the arrays: device arrays with Numba's semantics, on the GPU when
-- there is one and on the CPU simulator otherwise.
--   lua5.4 examples/arrays.lua
local luacuda = require "luacuda"

local backend, why = luacuda.backend()
print(("luacuda on the %s backend (%s)"):format(backend, why))

-- A Lua table goes to the device; the dtype is inferred (float64 here).
local x = luacuda.to_device({{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12.5}})
print(x)

-- Indexing is 1-based; ranges are inclusive; views share memory.
print("x[{2, 3}] =", x[{2, 3}])
local corner = x[{{2, 3}, {3, 4}}]
corner:fill(0)
print("after zeroing the lower-right corner through a view:")
print(x:copy_to_host())

-- Negative steps, transposes and reshapes are views too.
print("columns reversed, every other row:")
print(x[{{1, -1, 2}, {-1, 1, -1}}])
print("transposed:", x.T.shape[1] .. "x" .. x.T.shape[2])

-- Copies go between any layouts, never writing between a view's elements.
local host = luacuda.full({3, 2}, -1.0)
x[{{}, {1, 4, 3}}]:copy_to_host(host)
print("columns 1 and 4 copied into a host array:")
print(host)

-- dtypes are checked, never wrapped.
local bytes = luacuda.to_device({1, 2, 3}, {dtype = "uint8"})
local ok, err = pcall(function() bytes[1] = 256 end)
print("storing 256 in a uint8:", ok, err)

-- Memory the collector cannot see is accounted for: this loop allocates
-- 8 GB in total and never holds more than a fraction of it.
local peak = 0
for _ = 1, 1000 do
  local tmp = luacuda.device_array(8 << 20, "uint8")
  tmp[1] = 1
  peak = math.max(peak, luacuda.memory_info().used)
end
print(("1000 temporary 8 MiB arrays, peak device memory in use: %d MiB"):format(peak >> 20))
