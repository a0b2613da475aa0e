-- The differential test: seeded random sequences of array operations run on
-- luacuda and on the pure-Lua model (spec/model.lua), every result compared.
-- D.run(seed) runs one sequence; it returns true, or false and a report
-- that holds the seed, the cause and the operations so far (as Lua).
local luacuda = require "luacuda"
local model = require "spec.model"

local D = {}

local KINDS = { "host", "pinned", "mapped", "managed", "device" }
local HOST_SIDE = { host = true, pinned = true, mapped = true, managed = true }
local DEVICE_SIDE = { device = true, mapped = true, managed = true }
local MAX_POOL = 8

local random = math.random
local function pick(t) return t[random(#t)] end
local function chance(p) return random() < p end

-- Lua source for a value, so a failing sequence reads as a script
local function ser(v, names)
  if names and names[v] then return names[v] end
  if type(v) == "table" then
    local n = 0
    for k in pairs(v) do if math.type(k) == "integer" and k > n then n = k end end
    local parts = {}
    for i = 1, n do parts[i] = ser(v[i], names) end
    return "{" .. table.concat(parts, ", ") .. "}"
  elseif math.type(v) == "float" then
    return string.format("%.17g", v):find("[%.eni]") and string.format("%.17g", v)
           or string.format("%.1f", v)
  end
  return tostring(v)
end

-- one value of dtype dt, exactly representable; edges for the integers
local function rand_value(dt)
  if dt == "bool" then return chance(0.5) end
  local d = model.dtypes[dt]
  if d.float then return random(-64, 64) + (chance(0.3) and 0.5 or 0.0) end
  local r = random(8)
  if r == 1 then return d.min elseif r == 2 then return d.max end
  return random(math.max(d.min, -100), math.min(d.max, 100))
end

-- a value the dtype must refuse
local function bad_value(dt)
  if dt == "bool" then return pick { 1, 0 } end
  local d = model.dtypes[dt]
  if d.float then return pick { true, false } end
  local r = random(3)
  if r == 1 then return 0.5 elseif r == 2 then return true end
  if dt == "int64" then return -2.0 ^ 64 end
  if dt == "uint64" then return -1 end
  return pick { d.min - 1, d.max + 1 }
end

local function rand_shape()
  local nd = pick { 0, 1, 1, 2, 2, 2, 3, 3, 4 }
  local shape = {}
  for k = 1, nd do shape[k] = chance(0.08) and 0 or random(1, nd >= 3 and 3 or 5) end
  return shape
end

-- a nested table of values for shape, or nil when no table has that shape
-- (a 0 before the last axis); bad, when set, spoils one value
local function rand_table(shape, dt, bad)
  for k = 1, #shape - 1 do if shape[k] == 0 then return nil end end
  local n, spoil = 1, nil
  for _, s in ipairs(shape) do n = n * s end
  if bad and n > 0 then spoil = random(n) end
  local count = 0
  local function build(k)
    if k > #shape then
      count = count + 1
      return count == spoil and bad_value(dt) or rand_value(dt)
    end
    local t = {}
    for i = 1, shape[k] do t[i] = build(k + 1) end
    return t
  end
  return build(1)
end

-- A failed comparison: raised, and caught by D.run, which adds the log.
local function fail(fmt, ...) error({ msg = string.format(fmt, ...) }, 0) end

local function same_value(dt, want, got)
  if want ~= want and got ~= got then return true end      -- both NaN
  if dt == "uint64" and math.type(want) == "integer" and want < 0 then
    -- above 2^63-1 a uint64 reads as the nearest float
    return math.type(got) == "float" and math.abs(got - (want + 2.0 ^ 64)) <= 4096
  end
  return want == got and type(want) == type(got)
end

local function same_tree(dt, want, got, path)
  if type(want) == "table" then
    if type(got) ~= "table" or #got ~= #want then
      fail("values differ at %s: want %s, got %s", path, ser(want), ser(got))
    end
    for i = 1, #want do same_tree(dt, want[i], got[i], path .. "[" .. i .. "]") end
  elseif not same_value(dt, want, got) then
    fail("values differ at %s: want %s, got %s", path, ser(want), ser(got))
  end
end

-- Every observable of the real array against its model.
local function check(st, e)
  local r, m, name = e.real, e.model, e.name
  local function field(f, want, got)
    if want ~= got then fail("%s.%s: want %s, got %s", name, f, ser(want), ser(got)) end
  end
  field("kind", m.kind, r.kind)
  field("dtype", m.dtype, tostring(r.dtype))
  field("ndim", #m.shape, r.ndim)
  field("shape", ser(m.shape), ser(r.shape))
  local size = model.size(m)
  field("size", size, r.size)
  field("nbytes", size * model.dtypes[m.dtype].size, r.nbytes)
  if size > 0 and not m.loose then
    for k = 1, #m.shape do
      if m.strides[k] ~= nil and m.shape[k] > 1 then
        field("strides[" .. k .. "]", m.strides[k], r.strides[k])
      end
    end
  end
  field("is_c_contiguous()", model.contiguous(m, "C"), r:is_c_contiguous())
  field("is_f_contiguous()", model.contiguous(m, "F"), r:is_f_contiguous())
  same_tree(m.dtype, model.totable(m), r:totable(), name)
  st.checks = st.checks + 1
end

local function check_all(st)
  for _, e in ipairs(st.pool) do check(st, e) end
end

local function log(st, line) st.log[#st.log + 1] = line end

local function add(st, real, m)
  st.next = st.next + 1
  local e = { name = "a" .. st.next, real = real, model = m }
  st.names[real] = e.name
  if #st.pool >= MAX_POOL then
    local gone = table.remove(st.pool, random(#st.pool))
    st.names[gone.real] = nil
  end
  st.pool[#st.pool + 1] = e
  return e
end

-- Run fn (the real call). With reason set the model says the call must
-- fail: it must raise "luacuda.<fn>: ...", and then every array is checked
-- unchanged. Returns fn's results when it succeeded as it should.
local function expect(st, line, reason, fn)
  local res = table.pack(pcall(fn))
  if reason then
    log(st, line .. "  --> error (" .. reason .. ")")
    if res[1] then fail("the model says this fails (%s), but it succeeded", reason) end
    local msg = tostring(res[2])
    if not msg:find("luacuda%.[%w_]+: ") then fail("error does not name the function: %s", msg) end
    st.errors = st.errors + 1
    check_all(st)
    return nil
  end
  log(st, line)
  if not res[1] then fail("the model says this works, but it raised: %s", tostring(res[2])) end
  return table.unpack(res, 2, res.n)
end

local function pick_entry(st) return #st.pool > 0 and pick(st.pool) or nil end

-- mostly an array of m's dtype and size, so that copies between the two
-- often succeed and shapes that differ in their size-1 axes meet
local function pick_partner(st, m)
  local fits = {}
  for _, e in ipairs(st.pool) do
    if e.model.dtype == m.dtype and model.size(e.model) == model.size(m) then
      fits[#fits + 1] = e
    end
  end
  if #fits > 0 and chance(0.7) then return pick(fits) end
  return pick_entry(st)
end

local ops = {}

-- Copies and fills take a stream a third of the time: queued, then waited
-- for before anything is compared. Returns the stream (or nil), the text
-- of the extra argument, and a function that waits.
local function maybe_stream(st)
  if not chance(0.3) then return nil, "", function() end end
  local s = chance(0.5) and luacuda.default_stream() or luacuda.stream()
  local name = "luacuda.default_stream()"
  if not rawequal(s, luacuda.default_stream()) then
    name = "s"
    log(st, "s = luacuda.stream()")
  end
  return s, ", " .. name, function()
    log(st, "s:synchronize()")
    s:synchronize()
  end
end

-- a new array, of any kind, dtype and shape, filled with known values
function ops.create(st)
  local kind, dt, shape = pick(KINDS), pick(model.dtype_names), rand_shape()
  local order = pick { "C", "F" }
  local m = model.new(kind, dt, shape, order)
  local vals = rand_table(shape, dt)
  local sshape, name = ser(shape), "a" .. (st.next + 1)
  local real
  if vals ~= nil and (kind == "host" or kind == "device") and chance(0.6) then
    m = model.new(kind, dt, shape, "C")
    model.assign(m, vals)
    if kind == "host" then
      real = expect(st, ("%s = luacuda.array(%s, %q)"):format(name, ser(vals), dt), nil,
                    function() return luacuda.array(vals, dt) end)
    else
      real = expect(st, ("%s = luacuda.to_device(%s, {dtype = %q})"):format(name, ser(vals), dt),
                    nil, function() return luacuda.to_device(vals, { dtype = dt }) end)
    end
  else
    local ctor = ({ host = "zeros", pinned = "pinned_array", mapped = "mapped_array",
                    managed = "managed_array", device = "device_array" })[kind]
    real = expect(st, ("%s = luacuda.%s(%s, %q, %q)"):format(name, ctor, sshape, dt, order), nil,
                  function() return luacuda[ctor](shape, dt, order) end)
    -- fill what may be uninitialised
    if vals ~= nil and model.size(m) > 0 then
      expect(st, ("%s[{}] = %s"):format(name, ser(vals)), nil, function() real[{}] = vals end)
      model.assign(m, vals)
    else
      local v = rand_value(dt)
      expect(st, ("%s:fill(%s)"):format(name, ser(v)), nil, function() real:fill(v) end)
      model.assign(m, v)
    end
  end
  check(st, add(st, real, m))
end

-- an index key: numbers, {} , {i}, {first, last, step} with holes
local function rand_key(shape)
  local nd = #shape
  if nd > 0 and chance(0.15) then
    return random(-shape[1] - 1, shape[1] + 1)
  end
  local key = {}
  local len = random(0, nd)
  if chance(0.05) then len = nd + 1 end
  for k = 1, len do
    local n = shape[k] or 1
    local r = random(10)
    if r <= 2 then
      key[k] = chance(0.9) and random(1, math.max(n, 1)) * pick { 1, -1 } or pick { 0, n + 1 }
      if n == 0 and chance(0.5) then key[k] = 1 end
    elseif r == 3 then
      key[k] = {}
    elseif r == 4 then
      key[k] = { random(-n, math.max(n, 1)) }
    else
      local step = pick { 1, 1, 2, 3, -1, -1, -2, -3 }
      if chance(0.03) then step = 0 end
      local first, last
      if chance(0.8) then first = random(-n - 1, n + 1) end
      if chance(0.8) then last = random(-n - 1, n + 1) end
      key[k] = { first, last, (step ~= 1 or chance(0.5)) and step or nil }
    end
  end
  return key
end

-- a[key]: a view, or an element
function ops.index(st)
  local e = pick_entry(st)
  if not e then return end
  local key = rand_key(e.model.shape)
  local res, off = model.index(e.model, key)
  local line = ("%s[%s]"):format(e.name, ser(key))
  local reason = not res and off or nil
  local got = expect(st, "x = " .. line, reason, function() return e.real[key] end)
  if res == "element" then
    local want = model.get(e.model, off)
    if not same_value(e.model.dtype, want, got) then
      fail("%s: want %s, got %s", line, ser(want), ser(got))
    end
  elseif res then
    st.log[#st.log] = ("a%d = %s"):format(st.next + 1, line)
    check(st, add(st, got, res))
  end
end

-- a[key] = scalar | table | array
function ops.setitem(st)
  local e = pick_entry(st)
  if not e then return end
  local key = rand_key(e.model.shape)
  local target, off = model.index(e.model, key)
  local value, reason
  local r = random(10)
  if target == "element" or r <= 3 then
    value = chance(0.9) and rand_value(e.model.dtype) or bad_value(e.model.dtype)
  elseif r <= 6 and target then
    value = rand_table(target.shape, e.model.dtype, chance(0.1))
    if value == nil then value = rand_value(e.model.dtype) end
  else
    value = pick_partner(st, target or e.model).real
  end
  local mvalue = value
  if luacuda.type(value) == "array" then mvalue = st.entries_by_real(value).model end
  if not target then
    reason = off
  elseif target == "element" then
    if not model.accepts(e.model.dtype, value) then reason = "bad value" end
  else
    local ok, why = model.assign({ buf = { bytes = {} }, dtype = target.dtype, kind = target.kind,
                                   shape = target.shape, strides = target.strides,
                                   offset = target.offset }, mvalue)
    -- a dry run on a scratch buffer says whether the call must fail
    if not ok then reason = why end
  end
  expect(st, ("%s[%s] = %s"):format(e.name, ser(key), ser(value, st.names)), reason,
         function() e.real[key] = value end)
  if not reason then
    if target == "element" then
      model.assign({ buf = e.model.buf, dtype = e.model.dtype, shape = {}, strides = {},
                     offset = off }, value)
    else
      model.assign(target, mvalue)
    end
  end
  check_all(st)
end

function ops.transpose(st)
  local e = pick_entry(st)
  if not e then return end
  local nd = #e.model.shape
  local perm, call
  if chance(0.3) then
    call = function() return e.real.T end
  elseif chance(0.3) then
    call = function() return e.real:transpose() end
  else
    perm = {}
    for k = 1, nd do perm[k] = k end
    for k = nd, 2, -1 do local j = random(k); perm[k], perm[j] = perm[j], perm[k] end
    if chance(0.1) and nd > 0 then perm[random(nd)] = random(0, nd + 1) end
    if chance(0.05) then perm[#perm + 1] = nd + 1 end
    call = function() return e.real:transpose(perm) end
  end
  local res, why = model.transpose(e.model, perm)
  local got = expect(st, ("a%d = %s:transpose(%s)"):format(st.next + 1, e.name, perm and ser(perm) or ""),
                     not res and why or nil, call)
  if res then check(st, add(st, got, res)) end
end

-- a new shape of the same size (sometimes with -1, sometimes wrong)
local function rand_newshape(size)
  local shape, rest = {}, size
  local nd = random(0, 4)
  for k = 1, nd - 1 do
    local divs = {}
    for d = 1, math.max(rest, 1) do if rest % d == 0 then divs[#divs + 1] = d end end
    shape[k] = rest == 0 and pick { 0, 1, 2 } or pick(divs)
    if shape[k] ~= 0 then rest = rest // shape[k] end
  end
  if nd > 0 then shape[nd] = rest end
  if nd == 0 and size ~= 1 then shape = { size } end
  if #shape > 0 and chance(0.2) then shape[random(#shape)] = -1 end
  if chance(0.1) then
    local k = random(math.max(#shape, 1))
    shape[k] = (shape[k] or 1) + pick { 1, 2 }
  end
  return shape
end

local function reshape_like(st, e, line, shape, order, call)
  local res, how = model.reshape(e.model, shape, order)
  local got = expect(st, ("a%d = %s"):format(st.next + 1, line), not res and how or nil, call)
  if not res then return end
  if how == "copy" and got.kind ~= e.model.kind then
    fail("a reshape copy must keep the kind %s, got %s", e.model.kind, got.kind)
  end
  check(st, add(st, got, res))
end

function ops.reshape(st)
  local e = pick_entry(st)
  if not e then return end
  local shape, order = rand_newshape(model.size(e.model)), pick { "C", "F" }
  if chance(0.5) then
    reshape_like(st, e, ("%s:reshape(%s, {order = %q})"):format(e.name, ser(shape), order),
                 shape, order, function() return e.real:reshape(shape, { order = order }) end)
  elseif #shape > 0 then
    reshape_like(st, e, ("%s:reshape(%s)"):format(e.name, ser(shape):sub(2, -2)), shape, "C",
                 function() return e.real:reshape(table.unpack(shape)) end)
  end
end

function ops.ravel(st)
  local e = pick_entry(st)
  if not e then return end
  local order = pick { "C", "F" }
  reshape_like(st, e, ("%s:ravel(%q)"):format(e.name, order), { model.size(e.model) }, order,
               function() return e.real:ravel(order) end)
end

function ops.split(st)
  local e = pick_entry(st)
  if not e then return end
  local n = e.model.shape[1] or 1
  local sec = random(0, n + 1)
  local parts, why = model.split(e.model, sec)
  local got = expect(st, ("parts = %s:split(%d)"):format(e.name, sec), not parts and why or nil,
                     function() return e.real:split(sec) end)
  if not parts then return end
  if #got ~= #parts then fail("split gave %d parts, want %d", #got, #parts) end
  for i, p in ipairs(parts) do
    log(st, ("a%d = parts[%d]"):format(st.next + 1, i))
    check(st, add(st, got[i], p))
  end
end

function ops.squeeze(st)
  local e = pick_entry(st)
  if not e then return end
  local nd = #e.model.shape
  local axis = chance(0.5) and random(0, nd + 1) or nil
  local res, why = model.squeeze(e.model, axis)
  local got = expect(st, ("a%d = %s:squeeze(%s)"):format(st.next + 1, e.name, axis or ""),
                     not res and why or nil, function() return e.real:squeeze(axis) end)
  if res then check(st, add(st, got, res)) end
end

function ops.view(st)
  local e = pick_entry(st)
  if not e then return end
  local dt = pick(model.dtype_names)
  -- reading arbitrary bytes as bool is not defined: only bool, int8, uint8
  if dt == "bool" and e.model.dtype ~= "bool" then return end
  -- the strides of a reshaped empty array are the model's own choice
  if e.model.loose then return end
  -- so are an empty array's, which decide a change of itemsize
  if model.size(e.model) == 0 and model.dtypes[dt].size ~= model.dtypes[e.model.dtype].size then
    return
  end
  local res, why = model.view(e.model, dt)
  local got = expect(st, ("a%d = %s:view(%q)"):format(st.next + 1, e.name, dt),
                     not res and why or nil, function() return e.real:view(dt) end)
  if res then check(st, add(st, got, res)) end
end

function ops.fill(st)
  local e = pick_entry(st)
  if not e then return end
  local v = chance(0.9) and rand_value(e.model.dtype) or bad_value(e.model.dtype)
  local ok = model.accepts(e.model.dtype, v)
  local s, sarg, wait = maybe_stream(st)
  expect(st, ("%s:fill(%s%s)"):format(e.name, ser(v), sarg), not ok and "bad value" or nil,
         function() e.real:fill(v, s) end)
  wait()
  if ok then model.assign(e.model, v) end
  check_all(st)
end

-- the copies: to a new host or device array, or into an existing array
-- of the right side, from any kind
function ops.copy(st)
  local src = pick_entry(st)
  if not src then return end
  local dst = pick_partner(st, src.model)
  local m, name = src.model, src.name
  local r = random(6)
  local function fresh(kind, order)
    local c = model.new(kind, m.dtype, m.shape, order or "C")
    model.assign(c, m)
    return c
  end
  local s, sarg, wait = maybe_stream(st)
  if r == 1 then
    local got = expect(st, ("a%d = %s:copy_to_host(nil%s)"):format(st.next + 1, name, sarg), nil,
                       function() return src.real:copy_to_host(nil, s) end)
    wait()
    check(st, add(st, got, fresh("host")))
  elseif r == 2 then
    local got = expect(st, ("a%d = %s:copy(%s)"):format(st.next + 1, name, sarg:sub(3)), nil,
                       function() return src.real:copy(s) end)
    wait()
    check(st, add(st, got, fresh(m.kind)))
  elseif r == 3 then
    local got = expect(st, ("a%d = luacuda.to_device(%s%s)"):format(st.next + 1, name, sarg), nil,
                       function() return luacuda.to_device(src.real, s) end)
    wait()
    if m.kind == "device" then
      if not rawequal(got, src.real) then fail("to_device of a device array must return it") end
      return
    end
    -- the copy keeps the source's stride order
    check(st, add(st, got, model.copy_like(m, "device")))
  else
    local why
    local dm = dst.model
    if dm.dtype ~= m.dtype then why = "dtype"
    elseif not model.same_shape(dm.shape, m.shape) then why = "shape" end
    local line, call
    if r == 4 then
      if not HOST_SIDE[dm.kind] then why = "target not host memory" end
      line = ("%s:copy_to_host(%s%s)"):format(name, dst.name, sarg)
      call = function() assert(rawequal(src.real:copy_to_host(dst.real, s), dst.real)) end
    elseif r == 5 then
      if not DEVICE_SIDE[dm.kind] then why = "target not device memory" end
      line = ("%s:copy_to_device(%s%s)"):format(dst.name, name, sarg)
      call = function() dst.real:copy_to_device(src.real, s) end
    else
      if dm.kind ~= "device" then return end
      line = ("luacuda.to_device(%s%s, {to = %s})"):format(name, sarg, dst.name)
      call = function()
        assert(rawequal(luacuda.to_device(src.real, s, { to = dst.real }), dst.real))
      end
    end
    expect(st, line, why, call)
    wait()
    if not why then model.assign(dm, m) end
    check_all(st)
  end
end

function ops.drop(st)
  if #st.pool == 0 then return end
  local i = random(#st.pool)
  log(st, ("%s = nil"):format(st.pool[i].name))
  st.names[st.pool[i].real] = nil
  table.remove(st.pool, i)
  if chance(0.3) then collectgarbage() end
end

local WEIGHTS = { create = 4, index = 5, setitem = 4, transpose = 2, reshape = 3, ravel = 2,
                  split = 1, squeeze = 1, view = 2, fill = 1, copy = 5, drop = 1 }
local BAG = {}
for _, name in ipairs { "create", "index", "setitem", "transpose", "reshape", "ravel", "split",
                        "squeeze", "view", "fill", "copy", "drop" } do
  for _ = 1, WEIGHTS[name] do BAG[#BAG + 1] = name end
end

-- Run the sequence of the given seed. Returns ok, report, stats.
function D.run(seed, nops)
  math.randomseed(seed)
  local st = { pool = {}, names = {}, log = {}, next = 0, checks = 0, errors = 0 }
  function st.entries_by_real(real)
    for _, e in ipairs(st.pool) do if rawequal(e.real, real) then return e end end
  end
  local ok, err = xpcall(function()
    ops.create(st)
    for _ = 1, nops or random(4, 14) do
      ops[#st.pool == 0 and "create" or pick(BAG)](st)
    end
    check_all(st)
  end, function(e)
    -- a model or test bug: keep where it happened
    if type(e) == "table" then return e end
    return debug.traceback(tostring(e), 2)
  end)
  if ok then return true, nil, st end
  local cause = type(err) == "table" and err.msg or ("crash in the test: " .. tostring(err))
  return false, ("seed %d: %s\n  after:\n    %s"):format(seed, cause,
                 table.concat(st.log, "\n    ")), st
end

-- Run count sequences from seed first; returns the failures' reports and
-- totals of sequences, operations logged, checks and expected errors.
function D.run_many(first, count, on_fail)
  local totals = { sequences = 0, ops = 0, checks = 0, errors = 0, failures = 0 }
  for seed = first, first + count - 1 do
    local ok, report, st = D.run(seed)
    totals.sequences = totals.sequences + 1
    totals.ops = totals.ops + #st.log
    totals.checks = totals.checks + st.checks
    totals.errors = totals.errors + st.errors
    if not ok then
      totals.failures = totals.failures + 1
      if on_fail then on_fail(seed, report) end
    end
  end
  return totals
end

return D
