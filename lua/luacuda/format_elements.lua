-- format_elements: how tostring(array) writes each element, by the rules
-- of NumPy's array printing, in spellings Lua reads back. A formatter is
-- made from every value that will be shown, so that all come out at one
-- width: integers right-aligned, floats aligned on the point, the whole
-- array in positional or in scientific notation.
--
-- Where Lua differs from NumPy: a float always has a digit after its point
-- (1.0 and 1.0e+08 where NumPy writes 1. and 1.e+08), NaN is 0/0 and the
-- infinities are 1/0 and -1/0 (NumPy's nan, inf and -inf), booleans are
-- true and false, a record is {x = 1.0, n = 2}.
local core = require "luacuda.core"
local DTYPES = core._dtypes()

local M = {}

local NAN, INF = "0/0", "1/0"
local huge, abs, max = math.huge, math.abs, math.max

local function lpad(s, width) return (" "):rep(width - #s) .. s end
local function rpad(s, width) return s .. (" "):rep(width - #s) end

-- Does the decimal s read back as v (> 0) in the dtype: does it round to
-- v, to nearest, ties to the even one?
local function reads_back(s, v, dtype)
  local x = tonumber(s)
  local info = DTYPES[dtype]
  if info.mant_bits == 53 then return x == v end
  if info.mant_bits == 24 then return string.unpack("f", string.pack("f", x)) == v end
  -- a narrower float: within half the gap to the neighbour on x's side
  local e = math.max(math.floor(math.log(v, 2)) - (info.mant_bits - 1), info.min_exp)
  local gap = 2.0 ^ e
  local even = (v / gap) % 2 == 0
  -- below a power of two (not subnormal) the neighbour is half as far
  if x < v and e > info.min_exp and v == 2.0 ^ (e + info.mant_bits - 1) then gap = gap / 2 end
  local d = math.abs(x - v)
  return d < gap / 2 or (d == gap / 2 and even)
end

-- The digits of the n-digit decimal nearest v (finite, > 0) and the
-- decimal exponent of the first, if it reads back as v in the dtype; else
-- (v just above a power of two is nearer its neighbour below than above)
-- those of the next n-digit decimal on v's other side, if that does.
local function attempt(v, dtype, n)
  local s = ("%." .. (n - 1) .. "e"):format(v)
  local int, frac, exp = s:match("^(%d)%.?(%d*)e([-+]%d+)$")
  local digits, e = int .. frac, tonumber(exp)
  if reads_back(s, v, dtype) then return digits, e end
  digits = tostring(tonumber(digits) + (tonumber(s) < v and 1 or -1))
  if reads_back(digits .. "e" .. (e - n + 1), v, dtype) then
    return digits, e + #digits - n             -- 999 + 1, 100 - 1: the exponent moves
  end
end

-- The digits (no trailing zeros) of the shortest decimal that reads back
-- as v (finite, > 0) in the dtype, and the decimal exponent of the first.
-- A decimal of n digits that reads back means one of n + 1 does: a binary
-- search, up to the digits that always suffice (17 for float64, 9 for
-- float32).
local function shortest(v, dtype)
  local lo, hi = 1, math.ceil(DTYPES[dtype].mant_bits * 0.30103) + 1
  local digits, e
  while lo < hi do
    local mid = (lo + hi) // 2
    local d, x = attempt(v, dtype, mid)
    if d then hi, digits, e = mid, d, x else lo = mid + 1 end
  end
  if not digits then digits, e = attempt(v, dtype, hi) end
  return (digits:gsub("0+$", "")), e
end

-- v >= 0 in positional notation: its integer part and its fraction. The
-- shortest digits that read back (NumPy's "unique"), rounded to
-- `precision` digits after the point where they are more.
local function positional(v, dtype, precision)
  if v == 0 then return "0", "" end
  local digits, exp = shortest(v, dtype)
  if #digits - 1 - exp > precision then
    local int, frac = ("%." .. precision .. "f"):format(v):match("^(%d+)%.?(%d*)$")
    return int, (frac:gsub("0+$", ""))
  end
  if exp < 0 then return "0", ("0"):rep(-exp - 1) .. digits end
  local int = digits:sub(1, exp + 1)
  return int .. ("0"):rep(exp + 1 - #int), digits:sub(exp + 2)
end

-- v >= 0 in scientific notation: the digit before the point, the fraction
-- and the exponent, by the same rule.
local function scientific(v, dtype, precision)
  if v == 0 then return "0", "", 0 end
  local digits, exp = shortest(v, dtype)
  if #digits - 1 > precision then
    local int, frac, e = ("%." .. precision .. "e"):format(v):match("^(%d)%.?(%d*)e([-+]%d+)$")
    return int, (frac:gsub("0+$", "")), tonumber(e)
  end
  return digits:sub(1, 1), digits:sub(2), exp
end

-- hi / lo as NumPy computes it: in the dtype (5 / 0.005 is 1000 exactly in
-- float32, whose 0.005 is a little less). Only near 1000 does it matter.
local function ratio(hi, lo, dtype)
  local r = hi / lo
  if dtype == "float64" or r > 2e3 then return r end
  return core.array({r}, dtype):item()
end

local function finite(v) return v == v and v ~= huge and v ~= -huge end
local function negative(v) return v < 0 or (v == 0 and 1 / v < 0) end

-- NumPy's FloatingFormat (floatmode "maxprec"): scientific for the whole
-- array when its finite nonzero magnitudes reach 1e8, or (unless
-- suppress) go below 1e-4 or span more than a factor of 1000. Positional
-- values keep their own digits, padded with spaces after them to the
-- longest fraction; scientific ones all get as many digits as the longest.
local function float_formatter(values, dtype, opts)
  local lo, hi, neginf, nonfinite = huge, 0, false, false
  for _, v in ipairs(values) do
    if finite(v) then
      local m = abs(v)
      if m ~= 0 then
        if m < lo then lo = m end
        if m > hi then hi = m end
      end
    else
      nonfinite = true
      if v == -huge then neginf = true end
    end
  end
  local sci = hi > 0 and (hi >= 1e8 or (not opts.suppress and (lo < 1e-4 or ratio(hi, lo, dtype) > 1e3)))
  local precision = opts.precision

  -- the parts of v, its sign on the integer part; each magnitude's
  -- worked out once for both passes
  local known = {}
  local function parts(v)
    local m = abs(v)
    local p = known[m]
    if not p then
      if sci then p = { scientific(m, dtype, precision) }
      else p = { positional(m, dtype, precision) } end
      if m ~= 0 then known[m] = p end          -- 0.0 and -0.0 are one key
    end
    local int, frac, exp = p[1], p[2], p[3]
    if negative(v) then int = "-" .. int end
    return int, frac, exp
  end

  local int_width, frac_width, exp_width, any_finite = 0, 0, 2, false
  for _, v in ipairs(values) do
    if finite(v) then
      local int, frac, exp = parts(v)
      int_width, frac_width = max(int_width, #int), max(frac_width, #frac)
      if exp then exp_width = max(exp_width, #tostring(abs(exp))) end
      any_finite = true
    end
  end
  local numpy_frac_width = frac_width
  if any_finite and frac_width == 0 then frac_width = 1 end   -- 1.0, not 1.
  -- what follows the integer part: the point, the fraction, the exponent
  local tail = 1 + frac_width + (sci and 2 + exp_width or 0)
  if nonfinite then
    int_width = max(int_width, #NAN - tail, #INF + (neginf and 1 or 0) - tail)
  end
  local width = int_width + tail

  return function(v)
    if v ~= v then return lpad(NAN, width) end
    if v == huge then return lpad(INF, width) end
    if v == -huge then return lpad("-" .. INF, width) end
    if sci then
      -- every value with as many digits: where its shortest has fewer,
      -- NumPy goes on with the exact value's digits, as C's %e does
      local int, frac, exp = parts(v)
      if #frac < numpy_frac_width then
        int, frac, exp = ("%." .. frac_width .. "e"):format(abs(v)):match("^(%d)%.(%d*)e([-+]%d+)$")
        exp = tonumber(exp)
        if negative(v) then int = "-" .. int end
      elseif frac == "" then
        frac = "0"                                 -- 1.0e+08, not 1.e+08
      end
      return ("%s.%se%s%0" .. exp_width .. "d"):format(lpad(int, int_width), frac,
                                                      exp < 0 and "-" or "+", abs(exp))
    end
    local int, frac = parts(v)
    if frac == "" then
      -- NumPy prints an array's elements with the integer part's own
      -- digits (43224312.0 for the float32 whose shortest decimal is
      -- 43224310, though the widths come from the latter)
      int = (negative(v) and "-" or "") .. ("%.0f"):format(abs(v))
      frac = "0"
    end
    return lpad(int, int_width) .. "." .. rpad(frac, frac_width)
  end
end

-- A uint64 value: Lua reads those past 2^63 - 1 as floats, or (through an
-- int64 view, which format.lua prints uint64 arrays through) as negative
-- integers of the same bits.
local function unsigned_string(v)
  if math.type(v) == "float" then return ("%.0f"):format(v) end
  if v >= 0 then return tostring(v) end
  local q = (v >> 1) // 5                      -- the unsigned value // 10
  return tostring(q) .. tostring(v - q * 10)
end

-- NumPy's IntegerFormat: right-aligned to the longest
local function integer_formatter(values, dtype)
  local str = dtype == "uint64" and unsigned_string or tostring
  local width = 0
  for _, v in ipairs(values) do width = max(width, #str(v)) end
  return function(v) return lpad(str(v), width) end
end

-- NumPy's BoolFormat: " true" lines up with "false", but not in a 0-d array.
local function bool_formatter(zero_d)
  local yes = zero_d and "true" or " true"
  return function(v) return v and yes or "false" end
end

local formatter

-- The elements of a sub-array field (nested `depth` deep) appended to out.
local function flatten(v, depth, out)
  if depth == 0 then out[#out + 1] = v return end
  for _, x in ipairs(v) do flatten(x, depth - 1, out) end
end

-- NumPy's StructuredVoidFormat: each field formatted as a column, from
-- that field's values in every element shown.
local function record_formatter(rec, values, opts, zero_d)
  local fields = {}
  for i, f in ipairs(rec.fields) do
    local column = {}
    for _, v in ipairs(values) do flatten(v[f.name], #f.shape, column) end
    fields[i] = { name = f.name, depth = #f.shape,
                  format = formatter(f.dtype, column, opts, zero_d and #f.shape == 0) }
  end
  local function nested(v, depth, format)
    if depth == 0 then return format(v) end
    local items = {}
    for i, x in ipairs(v) do items[i] = nested(x, depth - 1, format) end
    return "{" .. table.concat(items, ", ") .. "}"
  end
  return function(v)
    local items = {}
    for i, f in ipairs(fields) do
      items[i] = f.name .. " = " .. nested(v[f.name], f.depth, f.format)
    end
    return "{" .. table.concat(items, ", ") .. "}"
  end
end

-- formatter(dtype, values, opts, zero_d): a function writing any of the
-- values (every value to be shown) at one width. opts: the print options;
-- zero_d: the array is 0-d.
function formatter(dtype, values, opts, zero_d)
  if type(dtype) ~= "string" then return record_formatter(dtype, values, opts, zero_d) end
  local kind = DTYPES[dtype].kind
  if kind == "f" then return float_formatter(values, dtype, opts) end
  if kind == "b" then return bool_formatter(zero_d) end
  return integer_formatter(values, dtype)
end
M.formatter = formatter

return M
