-- luacuda.sampling: the generators' permutation, shuffle and choice. Each
-- draws its uniform numbers from the generator as uniform() does (so a
-- seed gives the same result on every backend and kind), orders or picks
-- the indices on the host, and moves the rows there: a device array makes
-- a round trip through host memory.
local core = require "luacuda.core"

local methods = core._generator_methods()

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

local KINDS = { host = true, device = true, pinned = true, mapped = true, managed = true }

local function check_opts(fname, opts, allowed)
  if opts == nil then return {} end
  if type(opts) ~= "table" then fail(fname, "expected an options table, got %s", type(opts)) end
  for k in pairs(opts) do
    if not allowed[k] then fail(fname, "unknown option %s", tostring(k)) end
  end
  if opts.kind ~= nil and not KINDS[opts.kind] then
    fail(fname, "kind must be 'host', 'pinned', 'mapped', 'managed' or 'device', got %s",
         tostring(opts.kind))
  end
  return opts
end

-- n uniform draws of g on [0, 1), as a Lua table
local function draws(g, n)
  if n == 0 then return {} end
  return g:uniform({ n }, "float64", { kind = "host" }):totable()
end

-- 1 .. n in the random order of Fisher-Yates over n draws
local function order(g, n)
  local u, p = draws(g, n), {}
  for i = 1, n do p[i] = i end
  for i = n, 2, -1 do
    local j = math.floor(u[i] * i) + 1     -- 1 .. i
    p[i], p[j] = p[j], p[i]
  end
  return p
end

-- a host array (C order) of kind, or of host memory made so
local function as_kind(h, kind)
  if kind == "host" then return h end
  local r = core.empty(h.shape, { dtype = h.dtype, kind = kind })
  if kind == "pinned" then h:copy_to_host(r) else r:copy_to_device(h) end
  return r
end

-- the rows idx[1..] of a (along its first axis), as a new host array of
-- shape {#idx} .. shape (the rest of a's shape by default)
local function take_rows(a, idx, shape)
  local h = a.kind == "host" and a or a:copy_to_host()
  if not shape then
    shape = { #idx }
    for d = 2, a.ndim do shape[d] = a.shape[d] end
  end
  local out = core.empty(shape, a.dtype)
  local flat = out
  if out.ndim ~= a.ndim then
    local s = { #idx }
    for d = 2, a.ndim do s[d] = a.shape[d] end
    flat = out:reshape(s)
  end
  for i = 1, #idx do flat[i] = h[idx[i]] end
  return out
end

local function check_count(fname, what, n)
  if math.type(n) ~= "integer" or n < 0 then
    fail(fname, "%s must be a non-negative integer, got %s", what, tostring(n))
  end
  return n
end

local function population(fname, a)
  if core.type(a) == "array" then
    if a.ndim == 0 then fail(fname, "a 0-d array has no rows to draw from") end
    return a.shape[1]
  end
  return check_count(fname, "n", a)
end

--- @module luacuda

--- @type Generator

--- A random order: of the indices 1 to `n` (int64, as index arrays count),
-- or of an array's rows (its first axis: a new array of its kind and
-- dtype). Fisher-Yates over `n` uniform numbers of the generator, so one
-- seed gives the same order everywhere.
-- @function Generator:permutation
-- @tparam integer|Array x `n`, or the array whose rows to reorder
-- @tparam[opt] table opts `kind` the result's memory for an `n` (device by default)
-- @treturn Array
-- @raise `luacuda.permutation: n must be a non-negative integer, got -1`; a 0-d array; a bad kind
-- @usage local g = luacuda.random(7)
-- local p = g:permutation(5, {kind = "host"})   -- 1 to 5 in some order
-- local rows = g:permutation(luacuda.arange(6):reshape(3, 2))
function methods.permutation(g, x, opts)
  opts = check_opts("permutation", opts, { kind = true })
  local n = population("permutation", x)
  local p = order(g, n)
  if core.type(x) == "array" then
    if opts.kind then fail("permutation", "an array's permutation is of its kind: kind is for an n") end
    return as_kind(take_rows(x, p), x.kind)
  end
  local h = n == 0 and core.empty({ 0 }, "int64") or core.array(p, "int64")
  return as_kind(h, opts.kind or "device")
end

--- Reorders an array's rows (its first axis) in place, in the order
-- @{Generator:permutation} gives.
-- @function Generator:shuffle
-- @tparam Array a the array (any kind, any layout)
-- @treturn Array `a`
-- @raise `luacuda.shuffle: expected an array, got number`; a 0-d array
-- @usage local a = luacuda.arange(5)
-- luacuda.random(1):shuffle(a)
function methods.shuffle(g, a)
  if core.type(a) ~= "array" then fail("shuffle", "expected an array, got %s", core.type(a) or type(a)) end
  local n = population("shuffle", a)
  local h = take_rows(a, order(g, n))
  if a.kind == "host" or a.kind == "pinned" then h:copy_to_host(a) else a:copy_to_device(h) end
  return a
end

--- Random draws from `1 .. n` (int64) or from an array's rows: `size`
-- draws (an integer or a shape), with replacement unless `replace = false`
-- (then each at most once), uniformly or with the probabilities `p` (one
-- per row, summing to 1). Without `size`, one draw: a Lua value for an
-- `n`, a row for an array.
-- @function Generator:choice
-- @tparam integer|Array x `n`, or the array to draw rows from
-- @tparam[opt] integer|table size how many, or the shape of the draws
-- @tparam[opt] table opts `replace` (default true), `p` (a table or an
-- array of probabilities), `kind` the result's memory for an `n` (device by default)
-- @treturn Array|number|any the draws
-- @raise `luacuda.choice: cannot take 5 draws without replacement from 3`;
-- `luacuda.choice: p must have 3 probabilities, got 2`; `p must sum to 1, got 0.9`;
-- negative or NaN probabilities; p with replace = false; an empty population
-- @usage local g = luacuda.random(3)
-- local dice = g:choice(6, 10, {kind = "host"})        -- ten throws, 1 to 6
-- local two = g:choice(luacuda.arange(10), 2, {replace = false})
function methods.choice(g, x, size, opts)
  opts = check_opts("choice", opts, { replace = true, p = true, kind = true })
  local n = population("choice", x)
  local shape, count
  if size == nil then
    count = 1
  elseif math.type(size) == "integer" then
    count, shape = check_count("choice", "size", size), { size }
  elseif type(size) == "table" then
    count, shape = 1, {}
    for i, d in ipairs(size) do
      shape[i] = check_count("choice", "size " .. i, d)
      count = count * d
    end
  else
    fail("choice", "size must be an integer or a shape table, got %s", type(size))
  end
  local replace = opts.replace
  if replace == nil then replace = true end
  if type(replace) ~= "boolean" then fail("choice", "replace must be a boolean, got %s", type(replace)) end
  if n == 0 and count > 0 then fail("choice", "cannot draw from an empty population") end
  local idx
  if opts.p ~= nil then
    local p = opts.p
    if core.type(p) == "array" then p = p:copy_to_host():totable() end
    if type(p) ~= "table" then fail("choice", "p must be a table or an array, got %s", type(p)) end
    if #p ~= n then fail("choice", "p must have %d probabilities, got %d", n, #p) end
    if not replace then fail("choice", "p with replace = false is not supported") end
    local cdf, total = {}, 0
    for i = 1, n do
      local v = p[i]
      if type(v) ~= "number" or v < 0 or v ~= v then
        fail("choice", "probability %d must be a number >= 0, got %s", i, tostring(v))
      end
      total = total + v
      cdf[i] = total
    end
    if math.abs(total - 1) > 1e-8 then fail("choice", "p must sum to 1, got %.17g", total) end
    idx = draws(g, count)
    for k = 1, count do
      local u, lo, hi = idx[k] * total, 1, n
      while lo < hi do            -- the first i with cdf[i] > u
        local mid = (lo + hi) // 2
        if cdf[mid] > u then hi = mid else lo = mid + 1 end
      end
      while p[lo] == 0 and lo > 1 do lo = lo - 1 end   -- never a row of probability 0
      idx[k] = lo
    end
  elseif replace then
    idx = draws(g, count)
    for k = 1, count do idx[k] = math.floor(idx[k] * n) + 1 end
  else
    if count > n then
      fail("choice", "cannot take %d draws without replacement from %d", count, n)
    end
    local p = order(g, n)
    idx = table.move(p, 1, count, 1, {})
  end
  if core.type(x) == "array" then
    if opts.kind then fail("choice", "draws from an array are of its kind: kind is for an n") end
    if not shape then
      local row = x[idx[1]]
      return core.type(row) == "array" and row:copy() or row     -- a copy, not a view
    end
    local full = {}
    for i, d in ipairs(shape) do full[i] = d end
    for d = 2, x.ndim do full[#full + 1] = x.shape[d] end
    return as_kind(take_rows(x, idx, full), x.kind)
  end
  if not shape then return idx[1] end
  local h = count == 0 and core.empty(shape, "int64") or core.array(idx, "int64"):reshape(shape)
  return as_kind(h, opts.kind or "device")
end

return {}
