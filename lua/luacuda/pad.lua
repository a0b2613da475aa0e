-- luacuda.pad: an array with borders added along each axis (NumPy's pad,
-- modes constant and edge), made of a new array of the input's kind and
-- copies into its slices, so it runs where the array's elements are.
local core = require "luacuda.core"

local function fail(fmt, ...)
  error(("luacuda.pad: " .. fmt):format(...), 3)
end

local function count(v, what)
  if math.type(v) ~= "integer" or v < 0 then
    fail("%s must be a non-negative integer, got %s", what, tostring(v))
  end
  return v
end

-- pad_width as {before, after} per axis: n (every side), {b, a} (every
-- axis) or one {b, a} per axis
local function widths(pw, ndim)
  local w = {}
  if type(pw) == "number" then
    for d = 1, ndim do w[d] = { count(pw, "pad_width"), pw } end
    return w
  end
  if type(pw) ~= "table" then fail("pad_width must be an integer or a table, got %s", type(pw)) end
  if type(pw[1]) == "number" then
    if #pw ~= 2 then fail("pad_width {before, after} needs two integers, got %d", #pw) end
    for d = 1, ndim do
      w[d] = { count(pw[1], "pad_width[1]"), count(pw[2], "pad_width[2]") }
    end
    return w
  end
  if #pw ~= ndim then fail("pad_width has %d pairs for an array of %d axes", #pw, ndim) end
  for d = 1, ndim do
    local p = pw[d]
    if type(p) ~= "table" or #p ~= 2 then fail("pad_width[%d] must be {before, after}", d) end
    w[d] = { count(p[1], "pad_width[" .. d .. "][1]"), count(p[2], "pad_width[" .. d .. "][2]") }
  end
  return w
end

--- @module luacuda

--- A new array with `a` in its middle and borders along each axis (NumPy's
-- `pad`): `"constant"` borders hold `constant_values` (0 by default),
-- `"edge"` ones repeat the nearest element of `a`. The result has `a`'s
-- kind and dtype.
-- @function pad
-- @tparam Array a the array
-- @tparam integer|table pad_width `n` (n elements before and after on every
-- axis), `{before, after}` (on every axis), or one `{before, after}` per axis
-- @tparam[opt] table opts `mode` (`"constant"`, the default, or `"edge"`),
-- `constant_values` (a number or a boolean)
-- @treturn Array
-- @raise `luacuda.pad: mode must be 'constant' or 'edge', got wrap`;
-- `luacuda.pad: pad_width has 1 pairs for an array of 2 axes`; `edge` on an empty axis
-- @usage print(luacuda.pad(luacuda.array({1, 2}), {1, 2}))            -- {0, 1, 2, 0, 0}
-- print(luacuda.pad(luacuda.array({1, 2}), 1, {mode = "edge"}))     -- {1, 1, 2, 2}
local function pad(a, pad_width, opts)
  if core.type(a) ~= "array" then fail("expected an array, got %s", core.type(a) or type(a)) end
  opts = opts or {}
  if type(opts) ~= "table" then fail("expected an options table, got %s", type(opts)) end
  for k in pairs(opts) do
    if k ~= "mode" and k ~= "constant_values" then fail("unknown option %s", tostring(k)) end
  end
  local mode = opts.mode or "constant"
  if mode ~= "constant" and mode ~= "edge" then
    fail("mode must be 'constant' or 'edge', got %s", tostring(mode))
  end
  if a.ndim == 0 then return a:copy() end     -- no axis to pad
  local w = widths(pad_width, a.ndim)
  local shape = {}
  for d = 1, a.ndim do shape[d] = a.shape[d] + w[d][1] + w[d][2] end
  local out
  if mode == "constant" then
    local v = opts.constant_values or 0
    if type(v) ~= "number" and type(v) ~= "boolean" then
      fail("constant_values must be a number or a boolean, got %s", type(v))
    end
    if a.dtype == "bool" and type(v) == "number" then v = v ~= 0 end
    out = core.full(shape, v, { dtype = a.dtype, kind = a.kind })
  else
    if opts.constant_values ~= nil then fail("constant_values is for mode 'constant'") end
    for d = 1, a.ndim do
      if a.shape[d] == 0 and w[d][1] + w[d][2] > 0 then
        fail("mode 'edge' cannot pad axis %d, which is empty", d)
      end
    end
    out = core.empty(shape, { dtype = a.dtype, kind = a.kind })
  end
  if a.size == 0 then return out end
  local inner = {}
  for d = 1, a.ndim do inner[d] = { w[d][1] + 1, w[d][1] + a.shape[d] } end
  out[inner] = a
  if mode == "edge" then
    -- axis by axis over the whole extent of the axes done before, so the
    -- corners take the corner elements
    for d = 1, a.ndim do
      local before, after, first, last = w[d][1], w[d][2], inner[d][1], inner[d][2]
      local extent = {}
      for k = 1, a.ndim do extent[k] = k < d and shape[k] or (k == d and 1 or a.shape[k]) end
      local function copy_edge(lo, hi, at)
        local src, dst = {}, {}
        for k = 1, a.ndim do
          src[k] = k == d and { at, at } or (k < d and { 1, shape[k] } or inner[k])
          dst[k] = k == d and { lo, hi } or (k < d and { 1, shape[k] } or inner[k])
        end
        local target = {}
        for k = 1, a.ndim do target[k] = k == d and hi - lo + 1 or extent[k] end
        out[dst] = out[src]:broadcast_to(target)
      end
      if before > 0 then copy_edge(1, before, first) end
      if after > 0 then copy_edge(last + 1, shape[d], last) end
    end
  end
  return out
end

return { pad = pad }
