-- Logistic regression by gradient descent, written as with NumPy: matrix
-- products (matmul), exp and new arrays each step; checked against the same
-- steps in plain Lua.
--   lua5.4 examples/logistic_regression.lua [device|host] [n] [d] [iterations]
package.path = ((arg and arg[0] or ""):match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local luacuda = require "luacuda"
local C = require "common"

local kind = arg[1] or os.getenv("LUACUDA_KIND") or "device"
local n = tonumber(arg[2]) or 2000
local d = tonumber(arg[3]) or 8
local iterations = tonumber(arg[4]) or 10
local rate = 0.5
print("luacuda on the " .. C.describe() .. ", " .. kind .. " arrays")

local g = luacuda.random(30)
local X = g:normal({n, d}, "float64", {kind = kind})
local w_true = g:normal({d, 1}, "float64", {kind = kind})
local y = X:matmul(w_true):gt(0):astype("float64")     -- labels 0 or 1, {n, 1}
-- device arrays' data is made on the stream, after these calls return: wait for
-- it, so that the steps alone are timed, as NumPy's are
luacuda.synchronize()

local t0 = luacuda.clock()
local w = luacuda.zeros({d, 1}, "float64", {kind = kind})
for _ = 1, iterations do
  local p = 1 / (1 + luacuda.exp(-X:matmul(w)))         -- the predicted probabilities
  w = w - (rate / n) * X.T:matmul(p - y)                -- a step down the mean log loss
end
luacuda.synchronize()
print(("%d steps on %d x %d: %.1f ms"):format(iterations, n, d, (luacuda.clock() - t0) * 1e3))

local accuracy = ((X:matmul(w):gt(0)):astype("float64"):eq(y)):sum() / n
print(("training accuracy %.3f"):format(accuracy))

-- the same steps in plain Lua (on small sizes)
if n * d * iterations <= 1e6 then
  local xs, ys = X:copy_to_host():totable(), y:copy_to_host():totable()
  local v = {}
  for j = 1, d do v[j] = 0 end
  for _ = 1, iterations do
    local grad = {}
    for j = 1, d do grad[j] = 0 end
    for i = 1, n do
      local z = 0
      for j = 1, d do z = z + xs[i][j] * v[j] end
      local r = 1 / (1 + math.exp(-z)) - ys[i][1]
      for j = 1, d do grad[j] = grad[j] + xs[i][j] * r end
    end
    for j = 1, d do v[j] = v[j] - rate / n * grad[j] end
  end
  local got, worst = w:copy_to_host():totable(), 0
  for j = 1, d do worst = math.max(worst, math.abs(got[j][1] - v[j])) end
  C.check(worst < 1e-9, ("w within 1e-9 of plain Lua's (%.1e)"):format(worst))
end
C.check(accuracy > 0.9, "training accuracy above 0.9")
