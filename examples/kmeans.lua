-- k-means (Lloyd's steps) as with NumPy: the distances of every point to every
-- centre by broadcasting, argmin, and the new centres by bincount with
-- weights; checked against the same steps in plain Lua.
--   lua5.4 examples/kmeans.lua [device|host] [points] [k] [iterations]
package.path = ((arg and arg[0] or ""):match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local luacuda = require "luacuda"
local C = require "common"

local kind = arg[1] or os.getenv("LUACUDA_KIND") or "device"
local n = tonumber(arg[2]) or 2000
local k = tonumber(arg[3]) or 4
local iterations = tonumber(arg[4]) or 5
local dims = 2
print("luacuda on the " .. C.describe() .. ", " .. kind .. " arrays")

-- k blobs: points around k random centres
local g = luacuda.random(30)
local where = g:uniform({k, dims}, "float64", {kind = kind, low = -10, high = 10})
local blob = g:integers(1, k + 1, n, "int64", {kind = kind})
local points = where[blob] + g:normal({n, dims}, "float64", {kind = kind})
local first = points[{{1, k}}]:copy()
-- device arrays' data is made on the stream, after these calls return: wait for
-- it, so that the steps alone are timed, as NumPy's are
luacuda.synchronize()

local t0 = luacuda.clock()
local centres, labels, count = first
for _ = 1, iterations do
  local diff = points:reshape({n, 1, dims}) - centres:reshape({1, k, dims})
  labels = (diff * diff):sum(3):argmin(2)               -- the nearest centre, from 1
  count = luacuda.bincount(labels, {minlength = k})
  local columns = {}
  for j = 1, dims do
    columns[j] = luacuda.bincount(labels, {weights = points[{{}, j}], minlength = k}) / count
  end
  centres = luacuda.stack(columns, 2)
end
luacuda.synchronize()
print(("%d steps, %d points, k = %d: %.1f ms"):format(iterations, n, k, (luacuda.clock() - t0) * 1e3))

-- the same steps in plain Lua (on small sizes)
if n * k * iterations <= 1e6 then
  local xs, cs = points:copy_to_host():totable(), first:copy_to_host():totable()
  local lab = {}
  for _ = 1, iterations do
    local sums, counts = {}, {}
    for c = 1, k do sums[c], counts[c] = {0, 0}, 0 end
    for i = 1, n do
      local best, bestd = 1, math.huge
      for c = 1, k do
        local dx, dy = xs[i][1] - cs[c][1], xs[i][2] - cs[c][2]
        local dd = dx * dx + dy * dy
        if dd < bestd then best, bestd = c, dd end
      end
      lab[i] = best
      counts[best] = counts[best] + 1
      sums[best][1], sums[best][2] = sums[best][1] + xs[i][1], sums[best][2] + xs[i][2]
    end
    for c = 1, k do cs[c] = {sums[c][1] / counts[c], sums[c][2] / counts[c]} end
  end
  local got, gl, worst, same = centres:copy_to_host():totable(), labels:copy_to_host():totable(), 0, true
  for c = 1, k do
    worst = math.max(worst, math.abs(got[c][1] - cs[c][1]), math.abs(got[c][2] - cs[c][2]))
  end
  for i = 1, n do same = same and gl[i] == lab[i] end
  C.check(same and worst < 1e-9, ("labels equal and centres within 1e-9 of plain Lua's (%.1e)"):format(worst))
end
-- on any size: every point has a label, and every centre is finite
C.check(count:sum() == n and luacuda.isfinite(centres):all(), "counts sum to n, centres finite")
