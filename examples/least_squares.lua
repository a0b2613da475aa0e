-- Least squares on the device: w minimising |X w - y|^2, found by gradient
-- steps made of matrix products (luacuda.matmul) and array math, then
-- checked against the w the data were made from.
package.path = ((arg and arg[0] or ""):match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local luacuda = require "luacuda"
local C = require "common"

print("luacuda on the " .. C.describe())
print("matrix products by " .. table.concat({luacuda.blas()}, ": "))

local n = 1000
local rows, ys = {}, {}
for i = 1, n do
  rows[i] = {1, math.sin(i), math.cos(i)}
  ys[i] = {2 - math.sin(i) + 0.5 * math.cos(i)}        -- the w to find: {2, -1, 0.5}
end
local X = luacuda.to_device(rows)                      -- float64, {n, 3}
local y = luacuda.to_device(ys)                        -- {n, 1}
local w = luacuda.device_array({3, 1}):fill(0)         -- float64 by default
local g = luacuda.device_array({3, 1})                 -- the gradient, written in place
for _ = 1, 60 do
  local r = X:matmul(w) - y                            -- the residuals, {n, 1}
  luacuda.matmul(X.T, r, g)                            -- X^T r: the transpose is a view
  w = w - (1 / n) * g                                  -- a step down |X w - y|^2 / 2n
end
local got = w:copy_to_host():totable()
print(("w = {%.12f, %.12f, %.12f}"):format(got[1][1], got[2][1], got[3][1]))
C.check(math.abs(got[1][1] - 2) < 1e-9 and math.abs(got[2][1] + 1) < 1e-9 and
        math.abs(got[3][1] - 0.5) < 1e-9, "w within 1e-9 of {2, -1, 0.5}")
