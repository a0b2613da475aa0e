--- Busted matchers for arrays: `require "luacuda.assert"` registers two
-- assertions with luassert (busted's assertion library) and returns its
-- `assert`. In a busted spec, busted's own `assert` has them too.
-- @module luacuda.assert

-- luacuda.assert: busted matchers for arrays. require "luacuda.assert"
-- registers with luassert (busted's assertion library)
--   assert.array_equal(expected, actual [, message])
--   assert.array_near(expected, actual [, rtol [, atol]] [, message])
-- and returns luassert's assert. Either operand is a luacuda array of any
-- kind (device memory is read after the work queued on it), a SmartArray
-- (its host copy), a nested table (of the shape it describes; ragged is an
-- error) or a number or boolean, which stands for every element of the
-- other operand (NumPy's broadcast of a scalar). Shapes must be equal. Values compare as NumPy's
-- assert_array_equal and assert_allclose do: NaN equals NaN, infinities
-- only themselves, and near means |actual - expected| <= atol + rtol *
-- |expected| (rtol 1e-7 and atol 0 by default). Booleans equal only
-- booleans. Record arrays compare field by field with arrays of the same
-- record. A failure names the first differing index (1-based), both values
-- there, how many elements differ and both shapes.

--- Passes when `actual` has the shape of `expected` and the same values
-- (NaN equals NaN; an infinity only itself; a boolean only a boolean;
-- values compare across dtypes). Either side is an array of any kind, a
-- SmartArray, a nested table or a number or boolean (which stands for
-- every element of the other side). A failure names the first differing
-- index (1-based), both values there, how many elements differ and both
-- shapes.
-- @function assert.array_equal
-- @param expected an array, a nested table, a number or a boolean
-- @param actual the same choices
-- @tparam[opt] string message said first when the assertion fails
-- @raise `luacuda.array_equal: <cause>` for operands that are neither
-- (a ragged table, a closed array), and the assertion's failure
-- @usage local assert = require "luacuda.assert"
-- assert.array_equal({{1, 2}, {3, 4}}, luacuda.to_device({{1, 2}, {3, 4}}))
-- assert.is_not.array_equal({1, 2}, luacuda.array({1, 3}))

--- Passes when `actual` has the shape of `expected` and each value is
-- within NumPy's `assert_allclose` tolerance:
-- `|actual - expected| <= atol + rtol * |expected|`. Operands as
-- @{assert.array_equal}.
-- @function assert.array_near
-- @param expected an array, a nested table, a number or a boolean
-- @param actual the same choices
-- @tparam[opt=1e-7] number rtol relative tolerance
-- @tparam[opt=0] number atol absolute tolerance
-- @tparam[opt] string message said first when the assertion fails
-- @raise `luacuda.array_near: rtol must be a number >= 0, got <v>`, the
-- operand errors of @{assert.array_equal}, and the assertion's failure
-- @usage local assert = require "luacuda.assert"
-- assert.array_near({1, 2}, luacuda.array({1, 2}) / 3 * 3, 1e-12)

local luassert = require "luassert"
local say = require "say"
local core = require "luacuda.core"

local attr = core.attr

-- A misuse is raised at the caller's line: the first frame outside this
-- file and luassert.
local function fail(fname, fmt, ...)
  local msg = ("luacuda.%s: " .. fmt):format(fname, ...)
  local level = 2
  while true do
    local info = debug.getinfo(level, "S")
    if not info then
      level = 1
      break
    end
    local src = info.source
    if info.what ~= "C" and not src:find("luacuda/assert.lua", 1, true)
       and not src:find("luassert", 1, true) then
      break
    end
    level = level + 1
  end
  error(msg, level)
end

-- ---- text --------------------------------------------------------------

local function shape_text(shape) return "{" .. table.concat(shape, ", ") .. "}" end

-- A value as Lua would read it back: floats with the digits that tell them
-- apart (2.0, 0.1, 0.10000000000000001), nan and inf spelt alike everywhere.
local function value_text(v)
  if math.type(v) ~= "float" then return tostring(v) end
  if v ~= v then return "nan" end
  if v == math.huge then return "inf" end
  if v == -math.huge then return "-inf" end
  local s
  for digits = 15, 17 do
    s = ("%." .. digits .. "g"):format(v)
    if tonumber(s) == v then break end
  end
  if not s:find("[.e]") then s = s .. ".0" end
  return s
end

-- The 1-based index {i, j, ...} of flat position k (0-based, C order).
local function index_of(k, shape)
  local idx = {}
  for d = #shape, 1, -1 do
    idx[d] = k % shape[d] + 1
    k = k // shape[d]
  end
  return idx
end

-- ---- operands ----------------------------------------------------------

local function entries(n) return n == 1 and "1 entry" or n .. " entries" end

local function kind_text(v)
  if type(v) == "table" then return "a table of " .. entries(#v) end
  return (type(v) == "nil" and "nil") or "a " .. type(v)
end

local function ones(n)
  local t = {}
  for d = 1, n do t[d] = 1 end
  return t
end

local function path_text(role, path)
  local s = role
  for _, i in ipairs(path) do s = s .. "[" .. i .. "]" end
  return s
end

-- The shape a nested table describes (each axis read along entry 1), then
-- a walk that checks every entry against it, appending the leaves to vals.
local function table_values(t, role, fname)
  local shape, first = {}, t
  while type(first) == "table" do
    shape[#shape + 1] = #first
    first = first[1]
  end
  local vals, path = {}, {}
  local function walk(x, depth)
    local n = shape[depth]
    if n == nil then                     -- a leaf
      if type(x) == "table" then
        fail(fname, "%s is a ragged table: %s is %s, but %s is %s", role, path_text(role, path),
             kind_text(x), path_text(role, ones(depth - 1)), kind_text(first))
      elseif type(x) ~= "number" and type(x) ~= "boolean" then
        fail(fname, "%s holds %s at %s (numbers and booleans only)", role, kind_text(x),
             path_text(role, path))
      end
      vals[#vals + 1] = x
      return
    end
    if type(x) ~= "table" or #x ~= n then
      fail(fname, "%s is a ragged table: %s is %s, but %s is a table of %s", role,
           path_text(role, path), kind_text(x), path_text(role, ones(depth - 1)), entries(n))
    end
    local count = 0
    for k in pairs(x) do
      count = count + 1
      if math.type(k) ~= "integer" or k < 1 or k > n then
        fail(fname, "%s has a key %s (only positions 1..%d)", path_text(role, path),
             type(k) == "string" and ("'" .. k .. "'") or tostring(k), n)
      end
    end
    for i = 1, n do
      path[depth] = i
      walk(x[i], depth + 1)
    end
    path[depth] = nil
  end
  walk(t, 1)
  return shape, vals
end

-- An operand as {shape=, values=} (C order), {record=, array=, shape=}
-- for a record array, or {scalar=} for a number or boolean.
local function operand(v, role, fname)
  local t = core.type(v)
  if t == "array" then
    local shape, dtype = attr(v, "shape"), attr(v, "dtype")
    if type(dtype) ~= "string" then return { record = dtype, array = v, shape = shape } end
    local tab = attr(v, "totable")(v)
    if #shape == 0 then return { shape = shape, values = { tab } } end
    local _, vals = table_values(tab, role, fname)
    return { shape = shape, values = vals }
  elseif t == "closed array" then
    fail(fname, "%s is a closed array", role)
  elseif type(v) == "table" then
    local mt = getmetatable(v)
    if type(mt) == "table" and mt.__name == "luacuda.smart_array" then
      return operand(v:host(), role, fname)     -- its host copy, brought up to date
    end
    local shape, vals = table_values(v, role, fname)
    return { shape = shape, values = vals }
  elseif type(v) == "number" or type(v) == "boolean" then
    return { scalar = v }
  end
  fail(fname, "%s must be an array, a nested table, a number or a boolean, got %s", role,
       type(v) == "userdata" and "a userdata" or type(v))
end

-- ---- comparison --------------------------------------------------------

local function is_nan(v) return v ~= v end

local function equal_values(e, a)
  return e == a or (type(e) == "number" and type(a) == "number" and is_nan(e) and is_nan(a))
end

local function near_values(rtol, atol)
  return function(e, a)
    if equal_values(e, a) then return true end       -- also equal infinities
    if type(e) ~= "number" or type(a) ~= "number" then return false end
    local ef, af = e + 0.0, a + 0.0
    if is_nan(ef) or is_nan(af) or math.abs(ef) == math.huge or math.abs(af) == math.huge then
      return false
    end
    return math.abs(af - ef) <= atol + rtol * math.abs(ef)
  end
end

-- Compare the flat values of one field (or of the whole array) whose
-- elements fall in groups of `group` per element of the compared arrays;
-- records which elements differ, and the first difference.
local function compare_values(ev, av, same, group, r, label)
  for k = 1, #av do
    local e, a = ev.scalar, av[k]
    if e == nil then e = ev[k] end
    if not same(e, a) then
      local elem = (k - 1) // group
      if not r.differs[elem] then
        r.differs[elem] = true
        r.count = r.count + 1
      end
      if r.first == nil or elem < r.first.elem then
        r.first = { elem = elem, sub = (k - 1) % group, e = e, a = a, label = label }
      end
    end
  end
end

local function product(dims)
  local p = 1
  for _, d in ipairs(dims) do p = p * d end
  return p
end

-- A field's label from its levels ({name=, dims=}) and a flat position
-- inside its sub-arrays: pos.x, hist[3], pts[2].x
local function field_label(levels, sub)
  local dims = {}
  for _, l in ipairs(levels) do for _, d in ipairs(l.dims) do dims[#dims + 1] = d end end
  local idx = index_of(sub, dims)
  local parts, i = {}, 0
  for _, l in ipairs(levels) do
    local s = l.name
    for _ = 1, #l.dims do
      i = i + 1
      s = s .. "[" .. idx[i] .. "]"
    end
    parts[#parts + 1] = s
  end
  return table.concat(parts, ".")
end

-- The values of a field view: a[name] of a 0-d record gives a scalar field
-- as a value.
local function field_values(v, role, fname)
  if core.type(v) ~= "array" then return { v } end
  return operand(v, role, fname).values
end

-- Record arrays, field by field (nested records and sub-arrays within).
local function compare_records(e, a, rec, levels, same, r, fname)
  for _, f in ipairs(rec.fields) do
    local sub = {}
    for i, l in ipairs(levels) do sub[i] = l end
    sub[#sub + 1] = { name = f.name, dims = f.shape }
    local fe, fa = e[f.name], a[f.name]
    if type(f.dtype) ~= "string" then
      compare_records(fe, fa, f.dtype, sub, same, r, fname)
    else
      local dims = {}
      for _, l in ipairs(sub) do for _, d in ipairs(l.dims) do dims[#dims + 1] = d end end
      compare_values(field_values(fe, "expected", fname), field_values(fa, "actual", fname),
                     same, product(dims), r, sub)
    end
  end
end

-- The comparison: nil when the shapes (or records) differ, with the reason;
-- else {count=, total=, first=, shape=}.
local function compare(expected, actual, same, fname)
  local e, a = operand(expected, "expected", fname), operand(actual, "actual", fname)
  if e.record or a.record then
    if not (e.record and a.record) then
      local r, other = "expected", "actual"
      if a.record then r, other = other, r end
      fail(fname, "%s is an array of records and %s is not (records compare field by field)", r, other)
    end
  end
  if e.scalar ~= nil and a.scalar ~= nil then
    e = { shape = {}, values = { e.scalar } }
    a = { shape = {}, values = { a.scalar } }
  elseif e.scalar ~= nil then
    e = { shape = a.shape, values = { scalar = e.scalar } }
  elseif a.scalar ~= nil then
    local vals = {}
    for k = 1, product(e.shape) do vals[k] = a.scalar end
    a = { shape = e.shape, values = vals }
  end
  local same_shape = #e.shape == #a.shape
  for d = 1, #e.shape do same_shape = same_shape and e.shape[d] == a.shape[d] end
  if not same_shape then
    return nil, ("their shapes differ: expected %s, actual %s"):format(shape_text(e.shape),
                                                                      shape_text(a.shape))
  end
  local r = { count = 0, differs = {}, shape = e.shape, total = product(e.shape) }
  if e.record then
    if e.record ~= a.record then
      return nil, ("their records differ: expected %s, actual %s"):format(tostring(e.record),
                                                                         tostring(a.record))
    end
    compare_records(e.array, a.array, e.record, {}, same, r, fname)
  else
    compare_values(e.values, a.values, same, 1, r, nil)
  end
  return r
end

-- ---- the assertions ----------------------------------------------------

-- Replace luassert's arguments with the one message text (say's "%s").
local function use_message(arguments, text)
  for i = 1, arguments.n do arguments[i] = nil end
  arguments[1], arguments.n, arguments.nofmt = text, 1, { true }
end

local function check_message(m, pos, fname)
  if m ~= nil and type(m) ~= "string" then
    fail(fname, "argument %d is the failure message, a string, got %s", pos, type(m))
  end
end

-- Run the comparison and write the message luassert shows: the failure's
-- (state.mod: asserted) or the negation's. tol: array_near's {rtol=, atol=}.
local function judge(state, arguments, same, what, tol, fname)
  local r, why = compare(arguments[1], arguments[2], same, fname)
  local text
  if not r then
    text = ("Expected arrays to be %s, but %s."):format(what, why)
  elseif state.mod then
    if r.count > 0 then
      local f = r.first
      local at = shape_text(index_of(f.elem, r.shape))
      if f.label then at = at .. ", field '" .. field_label(f.label, f.sub) .. "'" end
      local detail = ""
      if tol and type(f.e) == "number" and type(f.a) == "number" then
        local d = math.abs((f.a + 0.0) - (f.e + 0.0))
        if d == d and d < math.huge then
          detail = (" (|actual - expected| = %.3g, allowed %.3g)")
            :format(d, tol.atol + tol.rtol * math.abs(f.e + 0.0))
        end
      end
      text = ("Expected arrays to be %s, but %d of %d elements differ.\n"
              .. "First difference at %s: expected %s, actual %s%s.\n"
              .. "Shapes: expected %s, actual %s."):format(what, r.count, r.total, at,
        value_text(f.e), value_text(f.a), detail, shape_text(r.shape), shape_text(r.shape))
    end
  else
    text = tol
      and ("Expected arrays not to be %s, but all %d elements are within tolerance (shape %s).")
        :format(what, r.total, shape_text(r.shape))
      or ("Expected arrays to differ, but all %d elements are equal (shape %s).")
        :format(r.total, shape_text(r.shape))
  end
  return r ~= nil and r.count == 0, text
end

-- Both assertions take expected and actual first.
local function need_operands(arguments, fname)
  if arguments.n < 2 then
    fail(fname, "takes expected and actual, got %d argument%s", arguments.n,
         arguments.n == 1 and "" or "s")
  end
end

local function array_equal(state, arguments)
  local fname = "array_equal"
  need_operands(arguments, fname)
  if arguments.n > 3 then fail(fname, "takes at most 3 arguments, got %d", arguments.n) end
  check_message(arguments[3], 3, fname)
  if arguments[3] ~= nil then state.failure_message = arguments[3] end
  local ok, text = judge(state, arguments, equal_values, "equal", nil, fname)
  use_message(arguments, text)
  return ok
end

local function tolerance(v, name, default, fname)
  if v == nil then return default end
  if type(v) ~= "number" or not (v >= 0) then
    fail(fname, "%s must be a number >= 0, got %s", name,
         type(v) == "number" and value_text(v) or type(v))
  end
  return v
end

local function array_near(state, arguments)
  local fname = "array_near"
  need_operands(arguments, fname)
  -- rtol and atol are optional; a string where one goes is the message
  local rtol, atol, mpos = arguments[3], arguments[4], 5
  if type(rtol) == "string" then rtol, atol, mpos = nil, nil, 3
  elseif type(atol) == "string" then atol, mpos = nil, 4 end
  if arguments.n > mpos then
    fail(fname, "takes at most %d arguments here, got %d", mpos, arguments.n)
  end
  check_message(arguments[mpos], mpos, fname)
  if arguments[mpos] ~= nil then state.failure_message = arguments[mpos] end
  local tol = { rtol = tolerance(rtol, "rtol", 1e-7, fname), atol = tolerance(atol, "atol", 0, fname) }
  local what = ("near (rtol = %g, atol = %g)"):format(tol.rtol, tol.atol)
  local ok, text = judge(state, arguments, near_values(tol.rtol, tol.atol), what, tol, fname)
  use_message(arguments, text)
  return ok
end

say:set("assertion.array_equal.positive", "%s")
say:set("assertion.array_equal.negative", "%s")
say:set("assertion.array_near.positive", "%s")
say:set("assertion.array_near.negative", "%s")
luassert:register("assertion", "array_equal", array_equal,
                  "assertion.array_equal.positive", "assertion.array_equal.negative")
luassert:register("assertion", "array_near", array_near,
                  "assertion.array_near.positive", "assertion.array_near.negative")

return luassert
