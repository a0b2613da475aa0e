-- A 5x5 box blur of an image by 25 shifted slices of the edge-padded image,
-- as with NumPy; checked against plain Lua on a sample of pixels.
--   lua5.4 examples/blur.lua [device|host] [height] [width]
package.path = ((arg and arg[0] or ""):match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local luacuda = require "luacuda"
local C = require "common"

local kind = arg[1] or os.getenv("LUACUDA_KIND") or "device"
local h = tonumber(arg[2]) or 128
local w = tonumber(arg[3]) or h
print("luacuda on the " .. C.describe() .. ", " .. kind .. " arrays")

local image = luacuda.random(30):uniform({h, w}, "float32", {kind = kind})

local t0 = luacuda.clock()
local padded = luacuda.pad(image, 2, {mode = "edge"})
local sum = luacuda.zeros({h, w}, "float32", {kind = kind})
for dy = 0, 4 do
  for dx = 0, 4 do
    sum = sum + padded[{{1 + dy, h + dy}, {1 + dx, w + dx}}]
  end
end
local blurred = sum / 25
luacuda.synchronize()
print(("5x5 blur of %d x %d: %.1f ms"):format(h, w, (luacuda.clock() - t0) * 1e3))

-- plain Lua at a spread of pixels, the corners among them
local img, out = image:copy_to_host(), blurred:copy_to_host()
local function px(i, j)                                   -- the edge repeats
  return img[{math.min(math.max(i, 1), h), math.min(math.max(j, 1), w)}]
end
local worst = 0
local points = {{1, 1}, {h, w}, {1, w}, {h, 1}}
local r = C.random(7)
for _ = 1, 60 do points[#points + 1] = {1 + math.floor(r() * h), 1 + math.floor(r() * w)} end
for _, p in ipairs(points) do
  local s = 0
  for dy = -2, 2 do
    for dx = -2, 2 do s = s + px(p[1] + dy, p[2] + dx) end
  end
  worst = math.max(worst, math.abs(out[{p[1], p[2]}] - s / 25))
end
C.check(blurred.dtype == "float32" and worst < 1e-5,
        ("blurred pixels within 1e-5 of plain Lua's (%.1e)"):format(worst))
