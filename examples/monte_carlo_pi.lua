-- Monte Carlo pi: the fraction of uniform points of the unit square inside
-- the quarter circle, in chunks of new random arrays, as with NumPy;
-- checked against pi within five standard deviations.
--   lua5.4 examples/monte_carlo_pi.lua [device|host] [samples] [chunk]
package.path = ((arg and arg[0] or ""):match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local luacuda = require "luacuda"
local C = require "common"

local kind = arg[1] or os.getenv("LUACUDA_KIND") or "device"
local samples = math.tointeger(tonumber(arg[2]) or 1 << 20)
local chunk = math.tointeger(tonumber(arg[3]) or 1 << 18)
print("luacuda on the " .. C.describe() .. ", " .. kind .. " arrays")

local g = luacuda.random(30)
local t0 = luacuda.clock()
local inside, done = 0, 0
while done < samples do
  local m = math.min(chunk, samples - done)
  local x, y = g:uniform(m, "float64", {kind = kind}), g:uniform(m, "float64", {kind = kind})
  inside = inside + (x * x + y * y):le(1):sum()
  done = done + m
end
local pi = 4 * inside / samples
print(("pi ~ %.6f from %d samples: %.1f ms"):format(pi, samples, (luacuda.clock() - t0) * 1e3))

local p = math.pi / 4
local sd = 4 * math.sqrt(p * (1 - p) / samples)
C.check(math.abs(pi - math.pi) < 5 * sd, ("|pi - math.pi| < 5 standard deviations (%.1e)"):format(5 * sd))
