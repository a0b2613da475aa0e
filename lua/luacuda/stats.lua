-- luacuda.stats: round, var, std and norm, composed of array math and the
-- reductions (so each runs where its array's elements are: host, the
-- simulator or the GPU), with NumPy's results and dtype rules.
local core = require "luacuda.core"

local M = {}

-- A misuse is raised at the caller's line: the first frame outside
-- luacuda's own Lua files (the checks sit at several depths).
local function fail(fname, fmt, ...)
  local level = 2
  while true do
    local info = debug.getinfo(level, "S")
    if not info then level = 1 break end
    if info.what ~= "C" and not info.source:find("luacuda/[%w_]+%.lua$") then break end
    level = level + 1
  end
  error(("luacuda.%s: " .. fmt):format(fname, ...), level)
end

local function check_array(fname, a)
  if core.type(a) ~= "array" then
    fail(fname, "expected an array, got %s", core.type(a) or type(a))
  end
end

local function is_float(dtype) return dtype:find("^b?float") ~= nil end

-- The dtype a statistic computes in: integers and bools float64, the half
-- types float32 (their result converted back), the others their own.
local function compute_dtype(dtype)
  if dtype == "float16" or dtype == "bfloat16" then return "float32" end
  if is_float(dtype) then return dtype end
  return "float64"
end

local function result_dtype(dtype)
  return is_float(dtype) and dtype or "float64"
end

-- axis (an integer or a table of them, counted from 1) as a list, each in
-- range and given once; nil for every axis
local function axes_of(fname, a, axis)
  if axis == nil then return nil end
  local list = type(axis) == "table" and axis or {axis}
  local seen = {}
  for i = 1, #list do
    local ax = list[i]
    if math.type(ax) ~= "integer" then
      fail(fname, "axis must be an integer or a table of integers (luacuda counts axes from 1), got %s",
           math.type(ax) or type(ax))
    end
    if ax < 1 or ax > a.ndim then
      fail(fname, "axis %d is out of range for a %d-d array (luacuda counts axes from 1: 1 to %d)",
           ax, a.ndim, a.ndim)
    end
    if seen[ax] then fail(fname, "axis %d is given twice", ax) end
    seen[ax] = true
  end
  return list
end

local function check_opts(fname, opts, allowed)
  if opts == nil then return {} end
  if type(opts) ~= "table" then fail(fname, "expected an options table, got %s", type(opts)) end
  for k in pairs(opts) do
    if not allowed[k] then fail(fname, "unknown option %s", tostring(k)) end
  end
  return opts
end

-- a reduction's result as the dtype asked: Lua numbers stay numbers
local function as_dtype(r, dtype)
  if core.type(r) == "array" and r.dtype ~= dtype then return r:astype(dtype) end
  return r
end

local function sqrt_of(r)
  if type(r) == "number" then return math.sqrt(r) end
  return core.sqrt(r)
end

--- @module luacuda

--- Elementwise rounding to `decimals` decimal places, halves to even
-- (NumPy's `round`: for floats `rint(x * 10^decimals) / 10^decimals`, the
-- scaled value rounded in the array's dtype as NumPy's is, so 2.675 to 2
-- places gives 2.68 as there).
-- An integer or bool array comes back as a copy for `decimals >= 0`, and
-- rounded to a multiple of `10^-decimals` for negative `decimals`.
-- @function round
-- @tparam Array a the array
-- @tparam[opt=0] integer decimals the decimal places (negative: tens, hundreds...)
-- @treturn Array a new array of `a`'s dtype and kind
-- @raise `luacuda.round: expected an array, got <type>`;
-- `luacuda.round: decimals must be an integer, got <type>`
-- @usage print(luacuda.round(luacuda.array({0.5, 1.5, 2.675}), 2))  -- {0.5, 1.5, 2.68}
function M.round(a, decimals)
  check_array("round", a)
  decimals = decimals or 0
  if math.type(decimals) ~= "integer" then
    fail("round", "decimals must be an integer, got %s", math.type(decimals) or type(decimals))
  end
  if not is_float(a.dtype) then
    if decimals >= 0 then return a:copy() end
    local scale = 10.0 ^ -decimals
    return (core.rint(a:astype("float64") / scale) * scale):astype(a.dtype)
  end
  if decimals == 0 then return core.rint(a) end
  if decimals > 0 then
    local scale = 10.0 ^ decimals
    return core.rint(a * scale) / scale
  end
  local scale = 10.0 ^ -decimals
  return core.rint(a / scale) * scale
end

local var_opts = {ddof = true, keepdims = true, dtype = true}

local function variance(fname, a, axis, opts)
  check_array(fname, a)
  -- var(a, {ddof = 1}): the options in the axis's place, as the reductions take them
  if opts == nil and type(axis) == "table" and axis[1] == nil then axis, opts = nil, axis end
  opts = check_opts(fname, opts, var_opts)
  local axes = axes_of(fname, a, axis)
  local ddof = opts.ddof or 0
  if type(ddof) ~= "number" then fail(fname, "ddof must be a number, got %s", type(ddof)) end
  local want = opts.dtype
  if want ~= nil then
    if type(want) ~= "string" or not is_float(want) then
      fail(fname, "dtype must be a float dtype's name, got %s", tostring(want))
    end
  else
    want = result_dtype(a.dtype)
  end
  local ct = compute_dtype(want)
  local n = 1
  if axes then
    for _, ax in ipairs(axes) do n = n * a.shape[ax] end
  else
    n = a.size
  end
  local x = a.dtype == ct and a or a:astype(ct)
  local d = x - x:mean(axes, {keepdims = true})
  local s = (d * d):sum(axes, {keepdims = opts.keepdims or false})
  -- n - ddof <= 0 gives inf or NaN, as NumPy's (which warns)
  return as_dtype(s / math.max(n - ddof, 0), want), want
end

--- The variance over the whole array or along axes: the mean of the
-- squared deviations from the mean, divided by `n - ddof` in place of `n`.
-- NumPy's dtypes: integers and bools give float64, float16 and bfloat16
-- compute in float32 and give their own dtype.
-- @function var
-- @tparam Array a the array
-- @tparam[opt] int|{int,...} axis the axis or axes (from 1); every axis when nil (the options may
-- stand in its place: `var(a, {ddof = 1})`)
-- @tparam[opt] table opts `ddof` (default 0), `keepdims` (boolean), `dtype` (a float dtype to compute in)
-- @treturn Array|number an array, or a Lua number when every axis is reduced without keepdims
-- @raise `luacuda.var: axis 3 is out of range for a 2-d array (luacuda counts axes from 1: 1 to 2)`;
-- `luacuda.var: dtype must be a float dtype's name, got int32`; an unknown option
-- @usage print(luacuda.var(luacuda.array({1, 2, 3, 4})))  -- 1.25
function M.var(a, axis, opts)
  return (variance("var", a, axis, opts))
end

--- The standard deviation: the square root of @{var}, with its arguments and dtypes.
-- @function std
-- @tparam Array a the array
-- @tparam[opt] int|{int,...} axis the axis or axes (from 1); every axis when nil
-- @tparam[opt] table opts `ddof` (default 0), `keepdims` (boolean), `dtype` (a float dtype to compute in)
-- @treturn Array|number an array, or a Lua number when every axis is reduced without keepdims
-- @raise as @{var}, naming `luacuda.std`
-- @usage print(luacuda.std(luacuda.array({1, 3}), nil, {ddof = 1}))  -- 1.4142135623731
function M.std(a, axis, opts)
  local v, want = variance("std", a, axis, opts)
  return as_dtype(sqrt_of(v), want)
end

local norm_opts = {axis = true, keepdims = true}

-- x reduced by method over one axis, keepdims or not
local function reduce(x, method, ax, keepdims)
  return x[method](x, ax, {keepdims = keepdims})
end

local function vector_norm(fname, x, ord, ax, keepdims)
  local ab = core.abs(x)
  if ord == nil or ord == 2 then return sqrt_of(reduce(x * x, "sum", ax, keepdims)) end
  if ord == math.huge then return reduce(ab, "max", ax, keepdims) end
  if ord == -math.huge then return reduce(ab, "min", ax, keepdims) end
  if ord == 1 then return reduce(ab, "sum", ax, keepdims) end
  if ord == 0 then return reduce(x:ne(0):astype(x.dtype), "sum", ax, keepdims) end
  if type(ord) ~= "number" then fail(fname, "ord %s is not a vector norm", tostring(ord)) end
  return reduce(ab ^ ord, "sum", ax, keepdims) ^ (1 / ord)
end

-- the matrix norms over axes r and c (from 1): 1 and -1 the largest and
-- smallest column sum of |x|, inf and -inf of the row sums, "fro" the
-- square root of the sum of squares
local function matrix_norm(fname, x, ord, r, c, keepdims)
  if ord == nil or ord == "fro" then
    return sqrt_of((x * x):sum({r, c}, {keepdims = keepdims}))
  end
  local over, across, pick
  if ord == 1 or ord == -1 then
    over, across, pick = r, c, ord == 1 and "max" or "min"
  elseif ord == math.huge or ord == -math.huge then
    over, across, pick = c, r, ord == math.huge and "max" or "min"
  else
    fail(fname, "ord %s is not a matrix norm luacuda computes (fro, 1, -1, math.huge, -math.huge)",
         tostring(ord))
  end
  local sums = core.abs(x):sum(over, {keepdims = true})
  local m = sums[pick](sums, across, {keepdims = true})
  if keepdims then return m end
  if x.ndim == 2 then return m:sum() end   -- a number, as when no axis is given
  return m:sum({r, c})      -- both axes of size 1 dropped
end

--- The norm of a vector or a matrix (NumPy's `linalg.norm`). With no
-- `axis`, a 1-d array is a vector and a 2-d one a matrix (with `ord` nil,
-- any array is flattened into a vector: the square root of the sum of
-- squares); `axis` an integer takes vectors along it, a pair of axes
-- matrices over them. Vector `ord`s: 2 (the default), 1, 0 (the count of
-- nonzeros), `math.huge` (the largest absolute value), `-math.huge`, any
-- other number p (`sum(|x|^p)^(1/p)`). Matrix `ord`s: `"fro"` (the
-- default), 1 and -1 (the largest and smallest column sum of absolute
-- values), `math.huge` and `-math.huge` (row sums). Integers and bools
-- compute in float64.
-- @function norm
-- @tparam Array x the array
-- @tparam[opt] number|string ord the norm
-- @tparam[opt] table opts `axis` (an integer or a pair, from 1), `keepdims` (boolean)
-- @treturn Array|number an array, or a Lua number when every axis is reduced without keepdims
-- @raise `luacuda.norm: ord fro is not a vector norm`; an ord of a matrix
-- norm luacuda does not compute (2, "nuc": they need singular values);
-- `luacuda.norm: an array of 3 axes needs axis= for ord 1`; a bad axis
-- @usage print(luacuda.norm(luacuda.array({3, 4})))  -- 5.0
function M.norm(x, ord, opts)
  check_array("norm", x)
  opts = check_opts("norm", opts, norm_opts)
  local axes = axes_of("norm", x, opts.axis)
  if axes and #axes ~= 1 and #axes ~= 2 then
    fail("norm", "axis must be one axis or a pair of them, got %d", #axes)
  end
  local keepdims = opts.keepdims or false
  if not is_float(x.dtype) then x = x:astype("float64") end
  if axes == nil then
    if ord == nil then
      if keepdims then
        local all = {}
        for i = 1, x.ndim do all[i] = i end
        return sqrt_of((x * x):sum(all, {keepdims = true}))
      end
      return math.sqrt((x * x):sum())
    end
    if x.ndim == 1 then return vector_norm("norm", x, ord, nil, keepdims) end
    if x.ndim == 2 then return matrix_norm("norm", x, ord, 1, 2, keepdims) end
    fail("norm", "an array of %d axes needs axis= for ord %s", x.ndim, tostring(ord))
  end
  if #axes == 1 then return vector_norm("norm", x, ord, axes[1], keepdims) end
  return matrix_norm("norm", x, ord, axes[1], axes[2], keepdims)
end

return M
