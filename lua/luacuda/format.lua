-- format: tostring(array). Prints the kind, dtype and shape, then the
-- values as a nested Lua table constructor; past 1000 elements only the
-- first and last 3 entries of each long axis are shown (as NumPy does).
local core = require "luacuda.core"

local M = {}

-- An array's own fields and methods: on a record array a field of the
-- record may hide them (a record with a field called "shape").
local attr = core.attr
-- the dtype table (src/base/dtype.h): printing rules of the floats
local DTYPES = core._dtypes()
local function totable(a) return attr(a, "totable")(a) end

local THRESHOLD, EDGE = 1000, 3
local ELLIPSIS = {}

local function shape_string(shape)
  return "{" .. table.concat(shape, ", ") .. "}"
end

-- Does the decimal s read back as v in the dtype?
local function reads_back(s, v, dtype)
  local x = tonumber(s)
  local info = DTYPES[dtype]
  if info.mant_bits == 53 then return x == v end
  if info.mant_bits == 24 then return string.unpack("f", string.pack("f", x)) == v end
  -- a narrower float: within half a unit in the last place
  local e = v == 0 and info.min_exp
            or math.max(math.floor(math.log(math.abs(v), 2)) - (info.mant_bits - 1), info.min_exp)
  return math.abs(x - v) < 2.0^e / 2
end

-- The shortest decimal that reads back as the same value of the dtype,
-- without an exponent for moderate magnitudes.
local function float_string(v, dtype)
  if v ~= v then return "nan" end
  if v == math.huge then return "inf" elseif v == -math.huge then return "-inf" end
  local p, s = 1
  repeat
    s = string.format("%." .. p .. "g", v)
    p = p + 1
  until p > 17 or reads_back(s, v, dtype)
  local exp = tonumber(s:match("e([-+]%d+)$"))
  if exp and exp >= -4 and exp < 16 then
    s = string.format("%." .. math.max(p - 1, exp + 1) .. "g", v)
  end
  if not s:find("[%.eni]") then s = s .. ".0" end
  return s
end

local value_string

-- A record value: its fields in the record's order, {x = 1.0, n = 2}.
local function record_string(v, rec)
  local parts = {}
  for i, f in ipairs(rec.fields) do
    parts[i] = f.name .. " = " .. value_string(v[f.name], f.dtype)
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

-- v a value of the dtype; a table is a record, or a sub-array of one field
function value_string(v, dtype)
  if type(v) == "table" then
    if type(dtype) ~= "string" and (#v == 0 or v[1] == nil) then return record_string(v, dtype) end
    local parts = {}
    for i, x in ipairs(v) do parts[i] = value_string(x, dtype) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  if math.type(v) == "float" then return float_string(v, dtype) end
  return tostring(v)
end

-- The indices of an axis of length n to show.
local function picks(n, summarize)
  local list = {}
  if summarize and n > 2 * EDGE then
    for i = 1, EDGE do list[#list + 1] = i end
    list[#list + 1] = ELLIPSIS
    for i = n - EDGE + 1, n do list[#list + 1] = i end
  else
    for i = 1, n do list[#list + 1] = i end
  end
  return list
end

-- Nested lists of value strings (or ELLIPSIS) for the view a.
local function gather(a, summarize, dtype, width)
  local n = attr(a, "shape")[1]
  local out = {}
  if attr(a, "ndim") == 1 then
    local values
    if summarize and n > 2 * EDGE then
      local head = totable(a[{{1, EDGE}}])
      local tail = totable(a[{{n - EDGE + 1, n}}])
      values = {}
      for _, v in ipairs(head) do values[#values + 1] = v end
      values[#values + 1] = ELLIPSIS
      for _, v in ipairs(tail) do values[#values + 1] = v end
    else
      values = totable(a)
    end
    for i, v in ipairs(values) do
      if v == ELLIPSIS then
        out[i] = ELLIPSIS
      else
        out[i] = value_string(v, dtype)
        if #out[i] > width[1] then width[1] = #out[i] end
      end
    end
    return out
  end
  for i, k in ipairs(picks(n, summarize)) do
    out[i] = k == ELLIPSIS and ELLIPSIS or gather(a[{k}], summarize, dtype, width)
  end
  return out
end

local function render(node, depth, ndim, indent, width)
  local parts = {}
  for i, child in ipairs(node) do
    if child == ELLIPSIS then
      parts[i] = "..."
    elseif depth == ndim then
      parts[i] = string.rep(" ", width - #child) .. child
    else
      parts[i] = render(child, depth + 1, ndim, indent .. " ", width)
    end
  end
  local sep = depth == ndim and ", " or ("," .. string.rep("\n", ndim - depth) .. indent .. " ")
  return "{" .. table.concat(parts, sep) .. "}"
end

-- Too much to print in full: many values, or many rows (an empty array
-- has no values, but may have 2^40 rows of none).
local function summarize(shape, size)
  local rows = 1.0                 -- a float: products past 2^63 only compare
  for i = 1, #shape - 1 do rows = rows * shape[i] end
  return size > THRESHOLD or rows > THRESHOLD
end

local function body(a)
  local dtype, ndim = attr(a, "dtype"), attr(a, "ndim")
  if ndim == 0 then return value_string(attr(a, "item")(a), dtype) end
  local width = {0}
  local nodes = gather(a, summarize(attr(a, "shape"), attr(a, "size")), dtype, width)
  return render(nodes, 1, ndim, "", width[1])
end

local function dtype_string(dtype)
  return type(dtype) == "string" and dtype or dtype.name
end

-- __tostring: never raises
function M.array(a)
  if core.type(a) == "closed array" then return "luacuda.array (closed)" end
  local ok, text = pcall(function()
    return string.format("luacuda.array(kind=%s, dtype=%s, shape=%s)\n%s",
                         attr(a, "kind"), dtype_string(attr(a, "dtype")),
                         shape_string(attr(a, "shape")), body(a))
  end)
  if ok then return text end
  return "luacuda.array (unprintable: " .. tostring(text) .. ")"
end

return M
