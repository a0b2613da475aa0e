-- format: tostring(array). The kind, dtype and shape, then the values laid
-- out as NumPy's repr lays them out (numpy/core/arrayprint.py), spelt as a
-- Lua table constructor: every element at one width (format_elements.lua),
-- rows wrapped at `linewidth` columns with continuation lines under the
-- first element, each axis above the last on lines of its own, 2-D blocks
-- apart by blank lines; past `threshold` elements, `edgeitems` at each end
-- of each axis and `...` between. An empty array is {} whatever its shape,
-- as NumPy's is [] (the shape is on the line above). The options are
-- printoptions.lua's.
local core = require "luacuda.core"
local elements = require "luacuda.format_elements"
local printoptions = require "luacuda.printoptions"

local M = {}

-- An array's own fields and methods: on a record array a field of the
-- record may hide them (a record with a field called "shape").
local attr = core.attr
local function totable(a) return attr(a, "totable")(a) end

local ELLIPSIS = {}

local function shape_string(shape)
  return "{" .. table.concat(shape, ", ") .. "}"
end


-- The values of `rows`, nested `depth` deep, appended to flat.
local function flatten(rows, depth, flat)
  if depth == 0 then flat[#flat + 1] = rows return end
  for _, r in ipairs(rows) do
    if r ~= ELLIPSIS then flatten(r, depth - 1, flat) end
  end
end

-- The values shown of the view a, nested as totable nests them; when
-- summarizing, ELLIPSIS stands for the middle of each axis longer than
-- twice `edge`.
local function gather(a, edge)
  local n, ndim = attr(a, "shape")[1], attr(a, "ndim")
  if n <= 2 * edge then
    if ndim == 1 then return totable(a) end
    local out = {}
    for i = 1, n do out[i] = gather(a[{i}], edge) end
    return out
  end
  local head, tail
  if ndim == 1 then
    head, tail = totable(a[{{1, edge}}]), totable(a[{{n - edge + 1, n}}])
  else
    head, tail = {}, {}
    for i = 1, edge do
      head[i], tail[i] = gather(a[{i}], edge), gather(a[{n - edge + i}], edge)
    end
  end
  head[#head + 1] = ELLIPSIS
  table.move(tail, 1, #tail, #head + 1, head)
  return head
end

-- NumPy's _formatArray: node holds the rows (or, on the last axis, the
-- values) of `axes` axes; a continuation line starts with `hanging`; a
-- line holds `width` columns, the closing braces of the enclosing axes
-- included.
local function render(node, axes, hanging, width, word)
  local n = #node
  if n == 0 then return "{}" end
  local out = {}
  if axes == 1 then
    local room = width - 1         -- for the "," or "}" after each value
    local line = hanging
    for i = 1, n do
      local w = node[i] == ELLIPSIS and "..." or word(node[i])
      -- a line holds at least one value, however wide
      if #line + #w > room and #line > #hanging then
        out[#out + 1] = line:gsub("%s+$", "") .. "\n"
        line = hanging
      end
      line = line .. w
      if i < n then line = line .. ", " end
    end
    out[#out + 1] = line
  else
    local sep = "," .. ("\n"):rep(axes - 1)
    for i = 1, n do
      out[#out + 1] = hanging
      out[#out + 1] = node[i] == ELLIPSIS and "..."
                      or render(node[i], axes - 1, hanging .. " ", width - 1, word)
      if i < n then out[#out + 1] = sep end
    end
  end
  return "{" .. table.concat(out):sub(#hanging + 1) .. "}"
end

local function body(a, opts)
  local dtype, ndim = attr(a, "dtype"), attr(a, "ndim")
  -- uint64 values past 2^63 - 1 read as floats; their int64 view keeps
  -- every bit (format_elements writes them unsigned)
  if dtype == "uint64" then a = attr(a, "view")(a, "int64") end
  if ndim == 0 then
    local v = attr(a, "item")(a)
    return elements.formatter(dtype, {v}, opts, true)(v)
  end
  local size = attr(a, "size")
  -- no values: nothing to lay out, however many rows of none it has
  if size == 0 then return "{}" end
  local nodes
  if size > opts.threshold then
    nodes = gather(a, opts.edgeitems)
  else
    nodes = totable(a)
  end
  local flat = {}
  flatten(nodes, ndim, flat)
  local word = elements.formatter(dtype, flat, opts, false)
  return render(nodes, ndim, " ", opts.linewidth, word)
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
                         shape_string(attr(a, "shape")), body(a, printoptions.current()))
  end)
  if ok then return text end
  return "luacuda.array (unprintable: " .. tostring(text) .. ")"
end

return M
