-- A pure-Lua model of luacuda's N-d arrays, for the differential test.
-- Written from the documented rules (docs/guide/arrays.md), not from the
-- C: a buffer is a table of bytes, a view is (buffer, dtype, shape, byte strides, byte offset), and
-- every element is packed and unpacked with string.pack. Functions that
-- model a call return the result, or nil and the reason the call must fail.
local M = {}

-- size, string.pack format (nil: coded here), range for integers
M.dtypes = {
  bool    = { size = 1 },
  int8    = { size = 1, fmt = "<i1", min = -0x80, max = 0x7f },
  int16   = { size = 2, fmt = "<i2", min = -0x8000, max = 0x7fff },
  int32   = { size = 4, fmt = "<i4", min = -0x80000000, max = 0x7fffffff },
  int64   = { size = 8, fmt = "<i8", min = math.mininteger, max = math.maxinteger },
  uint8   = { size = 1, fmt = "<I1", min = 0, max = 0xff },
  uint16  = { size = 2, fmt = "<I2", min = 0, max = 0xffff },
  uint32  = { size = 4, fmt = "<I4", min = 0, max = 0xffffffff },
  uint64  = { size = 8, fmt = "<I8", min = 0, max = math.maxinteger },
  float16 = { size = 2, float = true },
  bfloat16 = { size = 2, float = true },
  float32 = { size = 4, fmt = "<f", float = true },
  float64 = { size = 8, fmt = "<d", float = true },
}
M.dtype_names = { "bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                  "uint32", "uint64", "float16", "bfloat16", "float32", "float64" }

-- IEEE half precision from its 16 bits
local function half_decode(bits)
  local sign = (bits & 0x8000) ~= 0 and -1 or 1
  local e, f = (bits >> 10) & 0x1f, bits & 0x3ff
  if e == 0x1f then return f == 0 and sign * math.huge or 0 / 0 end
  if e == 0 then return sign * f * 2.0 ^ -24 end
  return sign * (1 + f / 1024) * 2.0 ^ (e - 15)
end

-- bits of a half that represents v exactly (the generator only makes such)
local function half_encode(v)
  local sign = (v < 0 or 1 / v < 0) and 0x8000 or 0
  v = math.abs(v)
  if v == 0 then return sign end
  if v < 2.0 ^ -14 then return sign | math.tointeger(v * 2.0 ^ 24) end
  local e = 0
  while v >= 2 do v, e = v / 2, e + 1 end
  while v < 1 do v, e = v * 2, e - 1 end
  return sign | ((e + 15) << 10) | math.tointeger((v - 1) * 1024)
end

-- bfloat16 is the upper half of a float (the generator makes only values
-- it represents exactly)
local function bf16_decode(bits) return (string.unpack("<f", string.pack("<I4", bits << 16))) end
local function bf16_encode(v) return string.unpack("<I4", string.pack("<f", v)) >> 16 end

local function read(buf, off, dt)
  local d = M.dtypes[dt]
  local s = string.char(table.unpack(buf.bytes, off + 1, off + d.size))
  if dt == "bool" then return s:byte() ~= 0 end
  if dt == "float16" then return half_decode(string.unpack("<I2", s)) end
  if dt == "bfloat16" then return bf16_decode(string.unpack("<I2", s)) end
  return (string.unpack(d.fmt, s))
end

local function write(buf, off, dt, v)
  local s
  if dt == "bool" then s = string.char(v and 1 or 0)
  elseif dt == "float16" then s = string.pack("<I2", half_encode(v))
  elseif dt == "bfloat16" then s = string.pack("<I2", bf16_encode(v))
  else s = string.pack(M.dtypes[dt].fmt, v) end
  for i = 1, #s do buf.bytes[off + i] = s:byte(i) end
end

-- Can v be stored as dtype dt? (docs/guide/arrays.md, "dtypes": integers
-- are range-checked, a float goes into an integer type only when integral, booleans only into
-- bool, which takes only booleans.)
function M.accepts(dt, v)
  if dt == "bool" then return type(v) == "boolean" end
  if type(v) ~= "number" then return false end
  local d = M.dtypes[dt]
  if d.float then return true end
  local i = math.tointeger(v)
  return i ~= nil and i >= d.min and i <= d.max
end

-- A fresh buffer and a contiguous view of it, zero-filled.
function M.new(kind, dt, shape, order)
  local size = M.dtypes[dt].size
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local buf = { bytes = {} }
  for i = 1, n * size do buf.bytes[i] = 0 end
  local strides, acc = {}, size
  local nd = #shape
  for k = 1, nd do
    local ax = (order == "F") and k or nd + 1 - k
    strides[ax] = acc
    acc = acc * shape[ax]
  end
  return { buf = buf, dtype = dt, kind = kind, shape = { table.unpack(shape) },
           strides = strides, offset = 0 }
end

function M.size(v)
  local n = 1
  for _, s in ipairs(v.shape) do n = n * s end
  return n
end

-- byte offsets of every element, in C (row-major) or F order
function M.offsets(v, order)
  local out, nd = {}, #v.shape
  if M.size(v) == 0 then return out end
  local idx = {}
  for k = 1, nd do idx[k] = 0 end
  while true do
    local off = v.offset
    for k = 1, nd do off = off + idx[k] * v.strides[k] end
    out[#out + 1] = off
    local k = (order == "F") and 1 or nd
    local dir = (order == "F") and 1 or -1
    while k >= 1 and k <= nd do
      idx[k] = idx[k] + 1
      if idx[k] < v.shape[k] then break end
      idx[k] = 0
      k = k + dir
    end
    if k < 1 or k > nd then return out end
  end
end

function M.values(v, order)
  local out = {}
  for i, off in ipairs(M.offsets(v, order)) do out[i] = read(v.buf, off, v.dtype) end
  return out
end

function M.get(v, off) return read(v.buf, off, v.dtype) end

-- nested tables, as totable() gives them (a value for 0-d)
function M.totable(v)
  local flat, pos = M.values(v), 0
  local function build(k)
    if k > #v.shape then pos = pos + 1; return flat[pos] end
    local t = {}
    for i = 1, v.shape[k] do t[i] = build(k + 1) end
    return t
  end
  return build(1)
end

-- the shape of a nested table of values (tables shaped by the generator)
local function table_shape(t)
  local shape = {}
  while type(t) == "table" do
    shape[#shape + 1] = #t
    t = t[1]
    if t == nil then break end
  end
  return shape
end

local function flatten(t, out)
  if type(t) ~= "table" then out[#out + 1] = t; return out end
  for _, x in ipairs(t) do flatten(x, out) end
  return out
end

-- shapes equal once size-1 axes are dropped (the copy rule of docs/guide/arrays.md)
function M.same_shape(a, b)
  local function strip(s)
    local r = {}
    for _, x in ipairs(s) do if x ~= 1 then r[#r + 1] = x end end
    return table.concat(r, ",")
  end
  return strip(a) == strip(b)
end

-- Copy src's elements into dst's, both read in the given order; all read
-- before any is written.
local function copy_bytes(dst, src, order)
  local size, from = M.dtypes[src.dtype].size, {}
  for i, off in ipairs(M.offsets(src, order)) do
    from[i] = { table.unpack(src.buf.bytes, off + 1, off + size) }
  end
  for i, off in ipairs(M.offsets(dst, order)) do
    for b = 1, size do dst.buf.bytes[off + b] = from[i][b] end
  end
end

-- Write src (a view, a nested table or a scalar) into dst. Every value is
-- read before any is written, so overlapping views copy correctly.
function M.assign(dst, src)
  local vals
  if type(src) == "table" and src.buf then
    -- an array's elements move as bytes (NaN payloads and all)
    if src.dtype ~= dst.dtype then return nil, "dtype" end
    if not M.same_shape(src.shape, dst.shape) then return nil, "shape" end
    copy_bytes(dst, src, "C")
    return dst
  elseif type(src) == "table" then
    if not M.same_shape(table_shape(src), dst.shape) then return nil, "shape" end
    vals = flatten(src, {})
  else
    vals = setmetatable({}, { __index = function() return src end })
    if not M.accepts(dst.dtype, src) then return nil, "value" end
  end
  local offs = M.offsets(dst)
  for i = 1, #offs do
    if not M.accepts(dst.dtype, vals[i]) then return nil, "value" end
  end
  for i, off in ipairs(offs) do write(dst.buf, off, dst.dtype, vals[i]) end
  return dst
end

local function view_of(v, shape, strides, offset, dt)
  return { buf = v.buf, kind = v.kind, dtype = dt or v.dtype, shape = shape,
           strides = strides, offset = offset }
end

-- The key of a[key]: a number, or a table of numbers (an index that drops
-- the axis) and range tables {first, last, step} (inclusive, negative from
-- the end, {} the whole axis, {i} the one-element range). Returns a view,
-- or ("element", offset) when every axis is indexed.
function M.index(v, key)
  local nd = #v.shape
  if type(key) == "number" then
    if nd == 0 then return nil, "number index on 0-d" end
    key = { key }
  end
  if #key > nd then return nil, "too many indices" end
  local shape, strides, offset, picked = {}, {}, v.offset, 0
  for k = 1, nd do
    local n, e = v.shape[k], key[k]
    if e == nil then e = {} end
    if type(e) == "number" then
      local i = e < 0 and n + 1 + e or e
      if i < 1 or i > n then return nil, "index out of bounds" end
      offset = offset + (i - 1) * v.strides[k]
      picked = picked + 1
    else
      local step = e[3] or 1
      if step == 0 then return nil, "step 0" end
      local function norm(i) return i < 0 and n + 1 + i or i end
      local first = e[1] and norm(e[1]) or (step > 0 and 1 or n)
      local last = e[2] and norm(e[2]) or (e[1] and first) or (step > 0 and n or 1)
      local count
      if (step > 0 and last < first) or (step < 0 and last > first) then
        -- an empty range may name the position just past either end
        local lo, hi = math.min(first, last), math.max(first, last)
        if lo < 0 or hi > n + 1 or (step > 0 and (first < 1 or last > n))
           or (step < 0 and (first > n or last < 1)) then
          return nil, "range out of bounds"
        end
        count = 0
      else
        if first < 1 or first > n or last < 1 or last > n then
          return nil, "range out of bounds"
        end
        count = (last - first) // step + 1
        offset = offset + (first - 1) * v.strides[k]
      end
      shape[#shape + 1] = count
      strides[#strides + 1] = v.strides[k] * step
    end
  end
  if picked == nd then return "element", offset end
  return view_of(v, shape, strides, offset)
end

-- perm is 1-based; nil reverses the axes
function M.transpose(v, perm)
  local nd = #v.shape
  if perm == nil then
    perm = {}
    for k = 1, nd do perm[k] = nd + 1 - k end
  end
  if #perm ~= nd then return nil, "permutation length" end
  local seen, shape, strides = {}, {}, {}
  for k, p in ipairs(perm) do
    if math.type(p) ~= "integer" or p < 1 or p > nd or seen[p] then
      return nil, "bad permutation"
    end
    seen[p] = true
    shape[k], strides[k] = v.shape[p], v.strides[p]
  end
  return view_of(v, shape, strides, v.offset)
end

-- Reshape in the given reading order. A view exists exactly when the
-- elements' offsets, in the new shape, are an affine function of the new
-- index: found here by trying it, not by NumPy's stride algorithm. Any
-- stride is right for an axis of length 1 (the model says 0; checks skip
-- such axes), and any strides for an empty array (marked loose).
function M.reshape(v, shape, order)
  shape = { table.unpack(shape) }
  local n, infer = 1, nil
  for k, s in ipairs(shape) do
    if s == -1 and not infer then infer = k
    elseif s < 0 then return nil, "bad dimension"
    else n = n * s end
  end
  local size = M.size(v)
  if infer then
    if n == 0 or size % n ~= 0 then return nil, "cannot infer" end
    shape[infer] = size // n
  elseif n ~= size then
    return nil, "size mismatch"
  end
  local offs = M.offsets(v, order)
  local new = M.new(v.kind, v.dtype, shape, order)
  if size == 0 then
    -- any strides describe an empty view: the model's are marked loose
    local r = view_of(v, shape, new.strides, v.offset)
    r.loose = true
    return r, "view"
  end
  -- candidate strides from the unit steps of each axis, then verified
  local unit = new.strides    -- contiguous byte strides of the new shape
  local isz = M.dtypes[v.dtype].size
  local strides = {}
  for k, s in ipairs(shape) do
    strides[k] = s > 1 and offs[unit[k] // isz + 1] - offs[1] or 0
  end
  local ok = true
  for i, off in ipairs(offs) do
    local rest, want = i - 1, offs[1]
    for k = 1, #shape do
      local pos = (rest // (unit[k] // isz)) % shape[k]
      if shape[k] > 1 then want = want + pos * strides[k] end
    end
    if want ~= off then ok = false; break end
  end
  if ok then return view_of(v, shape, strides, offs[1]), "view" end
  copy_bytes(new, v, order)
  return new, "copy"
end

-- drop size-1 axes: all, or only the given (1-based) one
function M.squeeze(v, axis)
  local nd = #v.shape
  if axis ~= nil and (axis < 1 or axis > nd) then return nil, "axis out of range" end
  if axis ~= nil and v.shape[axis] ~= 1 then return nil, "axis not of size 1" end
  local shape, strides = {}, {}
  for k = 1, nd do
    if not (v.shape[k] == 1 and (axis == nil or axis == k)) then
      shape[#shape + 1], strides[#strides + 1] = v.shape[k], v.strides[k]
    end
  end
  return view_of(v, shape, strides, v.offset)
end

-- the same bytes read as dtype dt (NumPy's rules for a new itemsize: the
-- last axis contiguous and a whole number of new elements), refused when
-- an element would be misaligned for dt
function M.view(v, dt)
  local old, new = M.dtypes[v.dtype].size, M.dtypes[dt].size
  local shape, strides = { table.unpack(v.shape) }, { table.unpack(v.strides) }
  local nd = #shape
  if old ~= new then
    if nd == 0 then return nil, "0-d itemsize change" end
    if shape[nd] ~= 1 and strides[nd] ~= old then return nil, "last axis not contiguous" end
    if (shape[nd] * old) % new ~= 0 then return nil, "last axis not a multiple" end
    shape[nd], strides[nd] = shape[nd] * old // new, new
  end
  -- an empty view has no element to misalign
  if M.size(v) == 0 then return view_of(v, shape, strides, v.offset, dt) end
  if v.offset % new ~= 0 then return nil, "misaligned offset" end
  for k = 1, nd do
    if shape[k] > 1 and strides[k] % new ~= 0 then return nil, "misaligned stride" end
  end
  return view_of(v, shape, strides, v.offset, dt)
end

-- views of section rows each along the first axis
function M.split(v, section)
  if math.type(section) ~= "integer" or section < 1 then return nil, "bad section" end
  if #v.shape == 0 then return nil, "0-d" end
  local parts, n = {}, v.shape[1]
  for start = 0, n - 1, section do
    local shape = { table.unpack(v.shape) }
    shape[1] = math.min(section, n - start)
    parts[#parts + 1] = view_of(v, shape, { table.unpack(v.strides) },
                                v.offset + start * v.strides[1])
  end
  return parts
end

-- A contiguous copy whose axes are ordered like v's strides, largest
-- first (NumPy's empty_like, order K), holding v's values.
function M.copy_like(v, kind)
  local nd, order = #v.shape, {}
  for k = 1, nd do order[k] = k end
  table.sort(order, function(a, b)
    local sa, sb = math.abs(v.strides[a]), math.abs(v.strides[b])
    if sa ~= sb then return sa > sb end
    return a < b
  end)
  local c = M.new(kind, v.dtype, v.shape, "C")
  local acc = M.dtypes[v.dtype].size
  for i = nd, 1, -1 do
    c.strides[order[i]] = acc
    acc = acc * v.shape[order[i]]
  end
  c.loose = v.loose
  M.assign(c, v)
  return c
end

-- C/F contiguity with NumPy's relaxed rules: axes of length 1 do not count,
-- and an empty array is both
function M.contiguous(v, order)
  if M.size(v) == 0 then return true end
  local acc, nd = M.dtypes[v.dtype].size, #v.shape
  for i = 1, nd do
    local k = order == "F" and i or nd + 1 - i
    if v.shape[k] ~= 1 then
      if v.strides[k] ~= acc then return false end
      acc = acc * v.shape[k]
    end
  end
  return true
end

return M
