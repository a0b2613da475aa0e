-- smart: SmartArray, an array with a host copy and a device copy, each
-- valid or stale, that moves data only when the side asked for is stale.
-- host() and gpu() return the arrays it holds, not copies. Passing a
-- SmartArray to a kernel uses gpu() and, once the launch is queued, marks
-- the host copy stale; writing through sa[i] = v marks the device copy
-- stale (after fetching the host copy if that was stale).
local core = require "luacuda.core"

--- @module luacuda

--- An array with a host copy and a device copy, each valid or stale, that
-- copies only when the side asked for is stale (Numba's idea), from
-- @{smart_array}. Passed to a kernel it is its device copy, and the host
-- copy is stale once the launch is queued; `sa[i]` reads the host copy
-- (fetching it when stale), `sa[i] = v` writes it and makes the device copy
-- stale. `sa.shape`, `sa.dtype`, `sa.size`, `sa.ndim` are as an array's.
-- @type SmartArray

local SmartArray = {}
SmartArray.__name = "luacuda.smart_array"

local methods = {}

local function fail(fname, fmt, ...)
  error(("luacuda.%s: " .. fmt):format(fname, ...), 3)
end

local function is_array(v) return core.type(v) == "array" end

--- The host copy, fetched from the device first when stale (not a copy of it).
-- @function SmartArray:host
-- @tparam[opt] Stream stream queue the fetch on it
-- @treturn Array a host (or pinned) array
-- @raise `luacuda.copy_to_host: <cause>` when the fetch fails
-- @usage local sa = luacuda.smart_array({1, 2, 3}, {where = "gpu"})
-- print(sa:host())

-- the array on the host, fetched from the device when stale
function methods.host(sa, stream)
  local host = sa._host
  if not host then
    host = core.empty(sa.shape, sa.dtype)
    sa._host = host
  end
  if not sa._host_valid then
    sa._gpu:copy_to_host(host, stream)
    sa._to_host = sa._to_host + 1
    sa._host_valid = true
  end
  return host
end

--- The device copy, sent from the host first when stale (not a copy of it).
-- @function SmartArray:gpu
-- @tparam[opt] Stream stream queue the copy on it
-- @treturn Array a device array
-- @raise `luacuda.copy_to_device: <cause>` when the copy fails
-- @usage local sa = luacuda.smart_array({1, 2, 3})
-- local d = sa:gpu()

-- the array on the device, sent from the host when stale
function methods.gpu(sa, stream)
  local gpu = sa._gpu
  if not gpu then
    gpu = core.device_array(sa.shape, sa.dtype)
    sa._gpu = gpu
  end
  if not sa._gpu_valid then
    gpu:copy_to_device(sa._host, stream)
    sa._to_gpu = sa._to_gpu + 1
    sa._gpu_valid = true
  end
  return gpu
end

--- Says that the host copy was written (through @{SmartArray:host}): the
-- device copy is stale.
-- @function SmartArray:host_changed
-- @treturn SmartArray itself
-- @raise `luacuda.host_changed: the host copy is stale itself (call host() before writing to it)`
-- @usage local sa = luacuda.smart_array({1, 2, 3})
-- sa:host():fill(0)
-- sa:host_changed()

-- the host copy was written: the device copy is stale
function methods.host_changed(sa)
  if not sa._host_valid then
    fail("host_changed", "the host copy is stale itself (call host() before writing to it)")
  end
  sa._gpu_valid = false
  return sa
end

--- Says that the device copy was written (other than by a launch with
-- `sa` itself): the host copy is stale.
-- @function SmartArray:gpu_changed
-- @treturn SmartArray itself
-- @raise `luacuda.gpu_changed: the device copy is stale itself (call gpu() before writing to it)`
-- @usage local sa = luacuda.smart_array({1, 2, 3}, {where = "gpu"})
-- sa:gpu():fill(0)
-- sa:gpu_changed()

-- the device copy was written: the host copy is stale
function methods.gpu_changed(sa)
  if not sa._gpu_valid then
    fail("gpu_changed", "the device copy is stale itself (call gpu() before writing to it)")
  end
  sa._host_valid = false
  return sa
end

--- How many copies each way so far.
-- @function SmartArray:transfers
-- @treturn table `{to_gpu = n, to_host = n}`
-- @raise does not raise
-- @usage local sa = luacuda.smart_array({1, 2, 3})
-- sa:gpu()
-- assert(sa:transfers().to_gpu == 1)

-- how many copies each way so far: {to_gpu = n, to_host = n}
function methods.transfers(sa)
  return { to_gpu = sa._to_gpu, to_host = sa._to_host }
end

--- Where the data is valid.
-- @function SmartArray:valid
-- @treturn string `"host"`, `"gpu"` or `"both"`
-- @raise does not raise
-- @usage local sa = luacuda.smart_array({1, 2, 3})
-- assert(sa:valid() == "host")

-- "host", "gpu" or "both": where the data is valid
function methods.valid(sa)
  if sa._host_valid and sa._gpu_valid then return "both" end
  return sa._host_valid and "host" or "gpu"
end

--- The elements as nested tables (from the host copy, fetched when stale).
-- @function SmartArray:totable
-- @treturn table
-- @raise as @{SmartArray:host} when the fetch fails
-- @usage local t = luacuda.smart_array({{1, 2}, {3, 4}}):totable()
function methods.totable(sa) return methods.host(sa):totable() end

local fields = { shape = true, dtype = true, size = true, ndim = true, strides = false }

--- `sa[key]`: a method, a field (`shape`, `dtype`, `size`, `ndim`), or the
-- host copy's element or view at `key` (as @{Array:__index}).
-- @function SmartArray:__index
-- @raise as @{Array:__index}, for an element or view
-- @usage local sa = luacuda.smart_array({10, 20, 30})
-- print(sa[2], sa.shape[1])
function SmartArray.__index(sa, key)
  local m = methods[key]
  if m then return m end
  if fields[key] then
    local v = rawget(sa, "_" .. key)
    return key == "shape" and { table.unpack(v) } or v
  end
  if type(key) == "number" or type(key) == "table" then
    return methods.host(sa)[key]
  end
  return nil
end

--- `sa[key] = value`: writes the host copy (as @{Array:__newindex}); the
-- device copy is then stale.
-- @function SmartArray:__newindex
-- @raise `luacuda.setitem: cannot assign to field 'x' of a smart array`
-- @usage local sa = luacuda.smart_array({10, 20, 30})
-- sa[2] = 0
function SmartArray.__newindex(sa, key, value)
  if type(key) ~= "number" and type(key) ~= "table" then
    fail("setitem", "cannot assign to field '%s' of a smart array", tostring(key))
  end
  local host = methods.host(sa)
  host[key] = value
  sa._gpu_valid = false
end

--- `#sa`: the length of the first axis.
-- @function SmartArray:__len
-- @treturn integer
-- @raise does not raise
-- @usage assert(#luacuda.smart_array({1, 2, 3}) == 3)
function SmartArray.__len(sa) return sa._shape[1] or 0 end

--- The sizes of the axes.
-- @field SmartArray.shape
-- @usage print(luacuda.smart_array({{1, 2}}).shape[2])

--- The element type.
-- @field SmartArray.dtype
-- @usage print(luacuda.smart_array({1.5}).dtype)

--- The number of elements.
-- @field SmartArray.size
-- @usage print(luacuda.smart_array({1, 2}).size)

--- The number of axes.
-- @field SmartArray.ndim
-- @usage print(luacuda.smart_array({1, 2}).ndim)

--- @section end

function SmartArray.__tostring(sa)
  return ("luacuda.smart_array(%s, {%s}, valid on %s)"):format(
    sa._dtype, table.concat(sa._shape, ", "), methods.valid(sa))
end

-- a kernel argument: the device array (called by launch)
function SmartArray.__kernel_arg(sa) return methods.gpu(sa) end
-- the launch is queued: the kernel may have written the device copy
function SmartArray.__kernel_launched(sa) sa._host_valid = false end

local function new(host, gpu, shape, dtype)
  return setmetatable({
    -- false, not nil, for an array not made yet: every field exists, so
    -- __newindex sees only element writes
    _host = host or false, _gpu = gpu or false,
    _host_valid = host ~= nil, _gpu_valid = gpu ~= nil,
    _shape = shape, _dtype = dtype, _size = (host or gpu).size, _ndim = #shape,
    _to_gpu = 0, _to_host = 0,
  }, SmartArray)
end

local WHERE = { host = true, gpu = true }

--- A @{SmartArray} over existing data, or a new one of zeros.
-- @function smart_array
-- @tparam Array|table src a host or pinned array (the host copy), a device array
-- (the device copy), a nested table, or `{shape =, dtype = "float64", where = "host"}`
-- for zeros on that side
-- @tparam[opt] table opts `{where =}`: `"host"` or `"gpu"`, a side to make valid now as well
-- @treturn SmartArray
-- @raise `luacuda.smart_array: a managed array is already visible on both sides`;
-- `where must be "host" or "gpu", got <value>`; `unknown option <key>`;
-- `expected an array, a table or {shape=, dtype=}, got <type>`
-- @usage local sa = luacuda.smart_array({1, 2, 3}, {where = "gpu"})
-- local z = luacuda.smart_array({shape = {4, 4}, dtype = "float32"})

-- smart_array(src [, {where=}]) where src is a host array, a device array
-- or a nested table; or smart_array{shape=, dtype=, where=}
local function smart_array(src, opts)
  if type(src) == "table" and getmetatable(src) == nil and src.shape ~= nil then
    for k in pairs(src) do
      if k ~= "shape" and k ~= "dtype" and k ~= "where" then
        fail("smart_array", "unknown option %s", tostring(k))
      end
    end
    if opts ~= nil then fail("smart_array", "the {shape=} form takes no second argument") end
    opts, src = { where = src.where }, src
    local where = opts.where or "host"
    if not WHERE[where] then
      fail("smart_array", "where must be \"host\" or \"gpu\", got %s", tostring(where))
    end
    -- zeros on either side, so a fresh SmartArray reads the same everywhere
    local a = where == "host" and core.zeros(src.shape, src.dtype or "float64")
                              or core.device_array(src.shape, src.dtype or "float64"):fill(0)
    return where == "host" and new(a, nil, a.shape, a.dtype) or new(nil, a, a.shape, a.dtype)
  end
  if opts ~= nil and type(opts) ~= "table" then
    fail("smart_array", "options must be a table, got %s", type(opts))
  end
  opts = opts or {}
  for k in pairs(opts) do
    if k ~= "where" then fail("smart_array", "unknown option %s", tostring(k)) end
  end
  local where = opts.where
  if where ~= nil and not WHERE[where] then
    fail("smart_array", "where must be \"host\" or \"gpu\", got %s", tostring(where))
  end
  local sa
  if is_array(src) then
    if src.kind == "device" then sa = new(nil, src, src.shape, src.dtype)
    elseif src.kind == "host" or src.kind == "pinned" then sa = new(src, nil, src.shape, src.dtype)
    else fail("smart_array", "a %s array is already visible on both sides", src.kind) end
  elseif type(src) == "table" then
    local h = core.array(src)
    sa = new(h, nil, h.shape, h.dtype)
  else
    fail("smart_array", "expected an array, a table or {shape=, dtype=}, got %s",
         core.type(src) or type(src))
  end
  -- where= for existing data: make it valid on that side as well, now
  if where == "gpu" then methods.gpu(sa) elseif where == "host" then methods.host(sa) end
  return sa
end

return { smart_array = smart_array, metatable = SmartArray }
