-- generators: CuPy's kernel generators for Lua. elementwise(...) and
-- reduction(...) turn a few lines of CUDA C++ into callable objects; each
-- call binds the type placeholders from its arguments' dtypes, broadcasts
-- the inputs (NumPy's rules, as broadcast_to views), merges the axes every
-- operand walks contiguously, and launches a kernel generated for that
-- combination of dtypes and rank: each operand is an Array<T, N> indexed
-- through its own strides, so any view works. A generated kernel is
-- compiled once per combination (kept in the generator object) and goes
-- through luacuda.compile, whose disk cache keeps it across processes.

--- @module luacuda

local core = require "luacuda.core"

local A = core.attr            -- an array's own field, whatever its dtype

local function fail(fname, fmt, ...)
  error(("luacuda.%s: " .. fmt):format(fname, ...), 0)
end

-- ---- dtypes and type placeholders ----------------------------------------

local DTYPES = core._dtypes()

-- the C type a kernel spells each dtype by
local CTYPE = {
  bool = "bool", int8 = "int8_t", int16 = "int16_t", int32 = "int32_t", int64 = "int64_t",
  uint8 = "uint8_t", uint16 = "uint16_t", uint32 = "uint32_t", uint64 = "uint64_t",
  float16 = "__half", bfloat16 = "__nv_bfloat16", float32 = "float", float64 = "double",
}

-- a dtype name or NumPy code -> the canonical name, for the dtypes with a
-- kernel type (a new dtype needs its line above)
local CANONICAL = { ["?"] = "bool" }
for name, info in pairs(DTYPES) do
  if CTYPE[name] then
    CANONICAL[name] = name
    if info.numpy then CANONICAL[info.numpy] = name end
  end
end
-- the header a type needs
local HEADER = { float16 = "<cuda_fp16.h>", bfloat16 = "<cuda_bf16.h>" }

-- the Lua numbers an integer dtype holds
local INT_RANGE = {
  int8 = { -128, 127 }, int16 = { -32768, 32767 }, int32 = { -2147483648, 2147483647 },
  int64 = { math.mininteger, math.maxinteger },
  uint8 = { 0, 255 }, uint16 = { 0, 65535 }, uint32 = { 0, 4294967295 },
  uint64 = { 0, math.maxinteger },
}

local function is_placeholder(t) return t:match("^%u$") ~= nil end

-- C's keywords and the names the generated code declares itself
local RESERVED = {}
for w in ([[auto bool break case char const continue default do double else enum extern
  float for goto if inline int long register restrict return short signed sizeof static
  struct switch typedef union unsigned void volatile while class namespace template
  typename this new delete operator true false nullptr]]):gmatch("%a+") do
  RESERVED[w] = true
end

-- "float32 x, T y" -> {{dtype = "float32" | nil, placeholder = "T" | nil,
-- name = "x"}, ...}; what says which list ("in_params")
local function parse_params(fname, s, what, names, reserved)
  if type(s) ~= "string" then
    fail(fname, "%s must be a string such as \"float32 x, T y\", got %s", what, type(s))
  end
  local params = {}
  if s:match("^%s*$") then return params end
  for item in (s .. ","):gmatch("([^,]*),") do
    local t, name = item:match("^%s*([%w_?]+)%s+([%a_][%w_]*)%s*$")
    if not t then
      local bad = item:match("^%s*(.-)%s*$")
      fail(fname, "bad parameter '%s' in %s: expected a dtype and a name, such as \"float32 x\" or \"T y\"", bad, what)
    end
    local p = { name = name }
    if CANONICAL[t] then
      p.dtype = CANONICAL[t]
    elseif is_placeholder(t) then
      p.placeholder = t
    else
      fail(fname, "unknown dtype '%s' of parameter '%s' in %s (a type placeholder is one capital letter)", t, name, what)
    end
    if RESERVED[name] or name:match("^_lc_") or reserved[name] or is_placeholder(name) then
      fail(fname, "parameter name '%s' in %s is reserved", name, what)
    end
    if names[name] then fail(fname, "parameter name '%s' appears twice", name) end
    names[name] = true
    params[#params + 1] = p
  end
  return params
end

local function check_opts(fname, opts, allowed)
  if opts == nil then return {} end
  if type(opts) ~= "table" then fail(fname, "options must be a table, got %s", type(opts)) end
  for k in pairs(opts) do
    if not allowed[k] then fail(fname, "unknown option '%s'", tostring(k)) end
  end
  if opts.preamble ~= nil and type(opts.preamble) ~= "string" then
    fail(fname, "preamble must be a string of CUDA C++, got %s", type(opts.preamble))
  end
  if opts.options ~= nil and type(opts.options) ~= "table" then
    fail(fname, "options= must be a table of compiler options, got %s", type(opts.options))
  end
  return opts
end

-- a copy of the options= list (nil stays nil), so later edits do not count
local function copy_list(t)
  return t and table.move(t, 1, #t, 1, {})
end

local function check_name(fname, name, default)
  if name == nil then return default end
  if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") or name:match("^_lc_") then
    fail(fname, "the name must be a C identifier, got %s",
         type(name) == "string" and ("'" .. name .. "'") or type(name))
  end
  return name
end

local function shape_str(s) return "{" .. table.concat(s, ", ") .. "}" end

local function same_shape(a, b)
  if #a ~= #b then return false end
  for k = 1, #a do if a[k] ~= b[k] then return false end end
  return true
end

local function call_opts(fname, kname, v, allowed)
  for k in pairs(v) do
    if not allowed[k] then fail(fname, "kernel '%s': unknown option '%s'", kname, tostring(k)) end
  end
  -- (a stream's protected metatable reads as its type's name)
  if v.stream ~= nil and getmetatable(v.stream) ~= "luacuda.stream" then
    fail(fname, "kernel '%s': stream must be a luacuda stream, got %s", kname, type(v.stream))
  end
  return v
end

-- ---- arguments ------------------------------------------------------------

-- Check argument v for parameter p (number j, "argument" or "output"):
-- an open, device-accessible array of a builtin dtype, or (scalar_ok) a
-- Lua number or boolean. Binds p's placeholder in bound (from[] says which
-- argument bound it). Returns whether v is an array.
local function check_arg(fname, kname, what, j, p, v, scalar_ok, bound, from)
  local ty = core.type(v)
  if ty == "closed array" then
    fail(fname, "kernel '%s': %s %d '%s' is a closed array", kname, what, j, p.name)
  elseif ty ~= "array" then
    if scalar_ok and (type(v) == "number" or type(v) == "boolean") then return false end
    fail(fname, "kernel '%s': %s %d '%s' must be %s, got %s", kname, what, j, p.name,
         scalar_ok and "an array or a number" or "an array", type(v))
  end
  local kind, dt = A(v, "kind"), A(v, "dtype")
  if kind == "host" or kind == "pinned" then
    fail(fname, "kernel '%s': %s %d '%s' is a %s array: copy it to the device first (to_device)", kname, what, j,
         p.name, kind)
  end
  if type(dt) ~= "string" or not CTYPE[dt] then
    fail(fname, "kernel '%s': %s %d '%s' has dtype %s, which kernel generators do not take",
         kname, what, j, p.name, tostring(dt))
  end
  if p.dtype and p.dtype ~= dt then
    fail(fname, "kernel '%s': %s %d '%s' must have dtype %s, got %s", kname, what, j, p.name,
         p.dtype, dt)
  elseif p.placeholder then
    local t = p.placeholder
    if bound[t] and bound[t] ~= dt then
      fail(fname, "kernel '%s': type placeholder %s is %s from %s but %s from %s %d '%s'",
           kname, t, bound[t], from[t], dt, what, j, p.name)
    end
    if not bound[t] then
      bound[t] = dt
      from[t] = ("%s %d '%s'"):format(what, j, p.name)
    end
  end
  return true
end

-- Check a Lua number or boolean for a scalar parameter of dtype dt.
local function check_scalar(fname, kname, j, p, v, dt)
  local ok
  if dt == "bool" then
    ok = type(v) == "boolean"
  elseif type(v) ~= "number" then
    ok = false
  elseif INT_RANGE[dt] then
    local r = INT_RANGE[dt]
    local n = math.tointeger(v)
    ok = (n ~= nil and n >= r[1] and n <= r[2])
         or (dt == "uint64" and v >= 0 and v < 2.0 ^ 64 and v == math.floor(v))
  else
    ok = true
  end
  if not ok then
    fail(fname, "kernel '%s': argument %d '%s' is %s, which is not a %s value", kname, j,
         p.name, tostring(v), dt)
  end
end

-- The dtype of parameter p once the placeholders are bound.
local function param_dtype(fname, kname, p, bound)
  if p.dtype then return p.dtype end
  local dt = bound[p.placeholder]
  if not dt then
    fail(fname, "kernel '%s': type placeholder %s of '%s' is bound by no array argument", kname, p.placeholder,
         p.name)
  end
  return dt
end

-- NumPy's broadcast of the shapes of the array arguments in list (each
-- {shape=, label=}): the shape, or an error naming the shapes that clash,
-- or one for a shape whose size overflows (checked as every shape is, by
-- broadcast_shapes: the counts below are taken from it).
local function broadcast(fname, kname, list)
  local out, label = {}, nil
  for _, e in ipairs(list) do
    local s = e.shape
    local n = math.max(#out, #s)
    local r = {}
    for k = 1, n do
      local a = out[#out - n + k] or 1
      local b = s[#s - n + k] or 1
      if a ~= b and a ~= 1 and b ~= 1 then
        fail(fname, "kernel '%s': %s of shape %s does not broadcast with the shape %s of %s",
             kname, e.label, shape_str(s), shape_str(out), label)
      end
      r[k] = (a == 1) and b or a
    end
    out = r
    label = label and (label .. " and " .. e.label) or e.label
  end
  local ok, why = pcall(core.broadcast_shapes, out)
  if not ok then
    fail(fname, "kernel '%s': the arguments broadcast to %s: %s", kname, shape_str(out),
         (tostring(why):gsub("^luacuda%.broadcast_shapes: ", "")))
  end
  return out
end

-- Merge the axes first..last of views of one shape (strides_list: each
-- view's strides) that every view walks as one: size-1 axes go, and axis k
-- joins the axis before it where each view's stride there is its stride k
-- times size k. Returns the merged shape (possibly empty) and each view's
-- strides in it.
local function merged_shape(shape, strides_list, first, last)
  local dims, strides = {}, {}
  for k = first, last do
    if shape[k] ~= 1 then
      local n = #dims
      local join = n > 0
      if join then
        for v, st in ipairs(strides_list) do
          if strides[v][n] ~= shape[k] * st[k] then join = false break end
        end
      end
      if join then dims[n] = dims[n] * shape[k] else n = n + 1; dims[n] = shape[k] end
      for v, st in ipairs(strides_list) do
        strides[v] = strides[v] or {}
        strides[v][n] = st[k]
      end
    end
  end
  for v = 1, #strides_list do strides[v] = strides[v] or {} end
  return dims, strides
end

-- The view of a in a merged shape of its own (a reshape that is a view by
-- reshape's rule), checked against the strides its axes of more than one
-- element must have, so that a copy can never be written.
local function merged_view(a, shape, want)
  local v = a:reshape(shape)
  local st = A(v, "strides")
  for k, n in ipairs(shape) do
    if n > 1 and st[k] ~= want[k] then
      error("luacuda: internal error: a merged view is not a view of its array", 0)
    end
  end
  return v
end

-- Whether shape s broadcasts to shape t.
local function broadcasts_to(s, t)
  if #s > #t then return false end
  for k = 1, #s do
    local a, b = s[#s - k + 1], t[#t - k + 1]
    if a ~= b and a ~= 1 then return false end
  end
  return true
end

local function prod(t)
  local n = 1
  for _, v in ipairs(t) do n = n * v end
  return n
end

local function includes(dtypes)
  local seen, out = {}, {}
  for _, dt in pairs(dtypes) do
    local h = HEADER[dt]
    if h and not seen[h] then
      seen[h] = true
      out[#out + 1] = "#include " .. h
    end
  end
  table.sort(out)
  return table.concat(out, "\n")
end

local function typedefs(bound)
  local ts = {}
  for t in pairs(bound) do ts[#ts + 1] = t end
  table.sort(ts)
  local out = {}
  for _, t in ipairs(ts) do out[#out + 1] = ("typedef %s %s;"):format(CTYPE[bound[t]], t) end
  return table.concat(out, "\n")
end

-- the index variables pre0..pre<n-1> of flat index var over the shape of
-- Array arr from axis first (0-based), in C order
local function unflatten(lines, indent, var, pre, arr, first, n)
  if n == 0 then return end
  lines[#lines + 1] = ("%slong long %sq = %s;"):format(indent, pre, var)
  for k = n - 1, 1, -1 do
    lines[#lines + 1] = ("%slong long %s%d = %sq %% %s.shape[%d]; %sq /= %s.shape[%d];")
      :format(indent, pre, k, pre, arr, first + k, pre, arr, first + k)
  end
  lines[#lines + 1] = ("%slong long %s0 = %sq;"):format(indent, pre, pre)
end

local function index_list(pre, n, pre2, n2)
  local t = {}
  for k = 0, n - 1 do t[#t + 1] = pre .. k end
  for k = 0, (n2 or 0) - 1 do t[#t + 1] = pre2 .. k end
  return table.concat(t, ", ")
end

-- Compile g's kernel from src; an error gives the compiler's log and the
-- generated source, numbered as the log numbers it.
local function compile(fname, g, src)
  local ok, m = pcall(core.compile, src, { name = g.name .. ".cu", options = g.options })
  if not ok then
    local numbered, n = {}, 0
    for l in (src:gsub("\n$", "") .. "\n"):gmatch("(.-)\n") do
      n = n + 1
      numbered[n] = ("%4d  %s"):format(n, l)
    end
    local log = tostring(m):gsub("^luacuda%.compile: ", ""):gsub("%s+$", "")
    local listing = ("\nthe generated source, %s.cu:\n%s"):format(g.name, table.concat(numbered, "\n"))
    fail(fname, "kernel '%s' does not compile: %s%s", g.name, log, listing)
  end
  return m:get(g.name)
end

local BLOCK = 256

-- ---- elementwise ----------------------------------------------------------

local Elementwise = { __name = "luacuda.elementwise" }
Elementwise.__index = Elementwise

function Elementwise.__tostring(g)
  return ("luacuda.elementwise(%s)"):format(g.name)
end

-- the source of g's kernel for one binding: dtypes[j] is each parameter's
-- dtype, scalar[j] whether input j is a Lua number (a kernel parameter of
-- its own name), rank the merged rank of every array operand
local function elementwise_source(g, dtypes, scalar, rank, bound)
  local params = { "long long _lc_n" }
  local body = {}
  local first_out
  for j, p in ipairs(g.params) do
    local ct = CTYPE[dtypes[j]]
    local out = j > g.nin
    if scalar[j] then
      params[#params + 1] = ("%s %s"):format(ct, p.name)
    else
      local arr = "_lc_a" .. j
      params[#params + 1] = ("Array<%s%s, %d> %s"):format(out and "" or "const ", ct, rank, arr)
      if out and not first_out then first_out = arr end
      local at = ("%s(%s)"):format(arr, index_list("_lc_i", rank))
      if out then
        body[#body + 1] = ("    %s &%s = %s;"):format(ct, p.name, at)
      else
        body[#body + 1] = ("    const %s %s = %s;"):format(ct, p.name, at)
      end
    end
  end
  local lines = {
    includes(dtypes), typedefs(bound), g.preamble,
    ("extern \"C\" __global__ void %s(%s) {"):format(g.name, table.concat(params, ", ")),
    "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < _lc_n;",
    "       i += (long long)blockDim.x * gridDim.x) {",
  }
  unflatten(lines, "    ", "i", "_lc_i", first_out, 0, rank)
  for _, l in ipairs(body) do lines[#lines + 1] = l end
  lines[#lines + 1] = g.body .. "\n;"
  lines[#lines + 1] = "  }"
  lines[#lines + 1] = "}"
  return table.concat(lines, "\n") .. "\n"
end

local EW_CALL_OPTS = { stream = true }

--- An elementwise kernel from `luacuda.elementwise`, called on arrays.
-- @type Elementwise

--- `k(in1, ... [, out1, ...] [, {stream =}])`: runs the body for each element
-- of the inputs' broadcast shape. Inputs are device-accessible arrays of any
-- strides, or Lua numbers (booleans for `bool`) for scalar parameters. Outputs
-- not given are new device arrays; given ones must have one shape, which the
-- inputs broadcast to. The kernel is compiled once per binding of dtypes and rank.
-- @function Elementwise:__call
-- @param ... the inputs, then optionally the outputs and an options table
-- @return the outputs (Arrays)
-- @raise `luacuda.elementwise: kernel '<name>': <cause>`: a wrong number of arguments,
-- a placeholder bound to two dtypes, a host array, shapes that do not broadcast;
-- the compiler's log and the generated source when the body does not compile
-- @usage local axpy = luacuda.elementwise("T x, T y, float64 a", "T z", "z = x + (T)a * y", "axpy")
-- local x = luacuda.to_device(luacuda.arange(6, "float32"))
-- local z = axpy(x, x, 2)
-- axpy(x, x, 1, x, {stream = luacuda.stream()})  -- in place, on a stream

--- @section end

function Elementwise.__call(g, ...)
  local F, kname = "elementwise", g.name
  local args = table.pack(...)
  local opts = {}
  local last = args[args.n]
  if args.n > 0 and type(last) == "table" and getmetatable(last) == nil then
    opts = call_opts(F, kname, last, EW_CALL_OPTS)
    args.n = args.n - 1
  end
  local nin, nout = g.nin, #g.params - g.nin
  if args.n ~= nin and args.n ~= nin + nout then
    fail(F, "kernel '%s' takes %d input%s, then optionally %d output%s, got %d argument%s",
         kname, nin, nin == 1 and "" or "s", nout, nout == 1 and "" or "s", args.n,
         args.n == 1 and "" or "s")
  end
  local given_out = args.n > nin
  -- check the arguments and bind the placeholders: inputs, then outputs
  local bound, from, scalar = {}, {}, {}
  local shapes = {}
  for j = 1, nin do
    local p = g.params[j]
    if check_arg(F, kname, "argument", j, p, args[j], true, bound, from) then
      shapes[#shapes + 1] = { shape = A(args[j], "shape"), label = ("argument %d '%s'"):format(j, p.name) }
    else
      scalar[j] = true
    end
  end
  if given_out then
    for j = nin + 1, nin + nout do
      check_arg(F, kname, "argument", j, g.params[j], args[j], false, bound, from)
    end
  end
  local dtypes = {}
  for j, p in ipairs(g.params) do dtypes[j] = param_dtype(F, kname, p, bound) end
  for j = 1, nin do
    if scalar[j] then check_scalar(F, kname, j, g.params[j], args[j], dtypes[j]) end
  end
  -- the shape: the inputs' broadcast, which each given output must be
  -- (or which must broadcast to the outputs' one shape: inputs may be smaller)
  local shape = broadcast(F, kname, shapes)
  if given_out then
    local oshape = A(args[nin + 1], "shape")
    for j = nin + 1, nin + nout do
      local s = A(args[j], "shape")
      if not same_shape(s, oshape) or not broadcasts_to(shape, s) then
        fail(F, "kernel '%s': output %d '%s' has shape %s, but the inputs broadcast to %s",
             kname, j - nin, g.params[j].name, shape_str(s), shape_str(shape))
      end
    end
    shape = oshape
  end
  local stream = opts.stream
  local outs = {}
  for j = nin + 1, nin + nout do
    outs[j - nin] = given_out and args[j]
      or core.device_array(shape, dtypes[j], stream and { stream = stream } or nil)
  end
  local n = prod(shape)
  if n == 0 then return table.unpack(outs, 1, nout) end
  -- every array operand as a view of the full shape, then merged
  local views, strides = {}, {}
  for j = 1, nin + nout do
    local v = j <= nin and args[j] or outs[j - nin]
    if not scalar[j] then
      if not same_shape(A(v, "shape"), shape) then v = v:broadcast_to(shape) end
      views[#views + 1] = v
      strides[#strides + 1] = A(v, "strides")
    end
  end
  local merged, mstrides = merged_shape(shape, strides, 1, #shape)
  if #merged == 0 then merged = { 1 } end
  local rank = #merged
  local launch_args, at = { n }, 0
  for j = 1, nin + nout do
    if scalar[j] then
      launch_args[#launch_args + 1] = args[j]
    else
      at = at + 1
      local v = views[at]
      if not same_shape(merged, shape) then v = merged_view(v, merged, mstrides[at]) end
      launch_args[#launch_args + 1] = v
    end
  end
  -- the kernel for this binding
  local key = { rank }
  for j = 1, #g.params do key[#key + 1] = (scalar[j] and "s:" or "") .. dtypes[j] end
  key = table.concat(key, " ")
  local k = g.kernels[key]
  if not k then
    k = compile(F, g, elementwise_source(g, dtypes, scalar, rank, bound))
    g.kernels[key] = k
  end
  local grid = math.min((n + BLOCK - 1) // BLOCK, 65535)
  k:launch({ grid = grid, block = BLOCK, stream = stream },
           table.unpack(launch_args, 1, 1 + nin + nout))
  return table.unpack(outs, 1, nout)
end

local EW_OPTS = { options = true, preamble = true }

--- An elementwise kernel from a few lines of CUDA C++ (CuPy's
-- `ElementwiseKernel`). A parameter list is `"dtype name, ..."`, each type a
-- dtype name or a one-capital-letter placeholder (`T`) bound at each call
-- from the arrays' dtypes (a `typedef` in the kernel). In `body`, an input's
-- name is the element's value, an output's a reference to its element, `i`
-- the flat index in C order.
-- @function elementwise
-- @tparam string in_params the inputs, `"T x, float32 a"`
-- @tparam string out_params the outputs, `"T y"`
-- @tparam string body CUDA C++ run per element (a `;` is added)
-- @tparam[opt="elementwise_kernel"] string name the kernel's name, for messages
-- @tparam[opt] table opts `{options =, preamble =}`: `options` for @{compile},
-- `preamble` code before the kernel (helper `__device__` functions)
-- @treturn Elementwise a callable
-- @raise `luacuda.elementwise: out_params names no output`; `the body must be a string of CUDA C++, got <type>`;
-- a parameter list that does not parse; a name given twice
-- @usage local square = luacuda.elementwise("T x", "T y", "y = x * x", "square")
-- local y = square(luacuda.to_device({1, 2, 3}, {dtype = "float32"}))

-- elementwise(in_params, out_params, body [, name [, {options=, preamble=}]])
local function elementwise(in_params, out_params, body, name, opts)
  local F = "elementwise"
  local names = {}
  local ins = parse_params(F, in_params, "in_params", names, { i = true })
  local outs = parse_params(F, out_params, "out_params", names, { i = true })
  if #outs == 0 then fail(F, "out_params names no output") end
  if type(body) ~= "string" then
    fail(F, "the body must be a string of CUDA C++, got %s", type(body))
  end
  name = check_name(F, name, "elementwise_kernel")
  opts = check_opts(F, opts, EW_OPTS)
  -- a placeholder of an output must be one an input has, or the output
  -- must be given (its dtype then binds it): checked at the call
  local params = {}
  for _, p in ipairs(ins) do params[#params + 1] = p end
  for _, p in ipairs(outs) do params[#params + 1] = p end
  return setmetatable({
    name = name, nin = #ins, nout = #outs, params = params, body = body,
    preamble = opts.preamble or "", options = copy_list(opts.options), kernels = {},
  }, Elementwise)
end

-- ---- reduction ------------------------------------------------------------

local Reduction = { __name = "luacuda.reduction" }
Reduction.__index = Reduction

function Reduction.__tostring(g)
  return ("luacuda.reduction(%s)"):format(g.name)
end

-- the source of g's reduction kernel: array inputs of rank nk + nr (the
-- kept axes, then the reduced ones), the output of rank nk; one block
-- per output element (a grid-stride loop over them), each thread folding
-- a strided share of the reduced elements, then a tree in shared memory
local function reduction_source(g, dtypes, scalar, nk, nr, bound, has_array)
  local rt = CTYPE[dtypes[#g.params]]
  local oj = #g.params
  local params = { "long long _lc_nout", "long long _lc_nred" }
  local loads = {}
  local first_in
  for j = 1, g.nin do
    local p, ct = g.params[j], CTYPE[dtypes[j]]
    if scalar[j] then
      params[#params + 1] = ("%s %s"):format(ct, p.name)
    else
      local arr = "_lc_a" .. j
      first_in = first_in or arr
      params[#params + 1] = ("Array<const %s, %d> %s"):format(ct, nk + nr, arr)
      loads[#loads + 1] = ("      const %s %s = %s(%s);"):format(ct, p.name, arr,
                                                               index_list("_lc_k", nk, "_lc_r", nr))
    end
  end
  params[#params + 1] = ("Array<%s, %d> _lc_out"):format(rt, nk)
  local lines = {
    includes(dtypes), typedefs(bound), g.preamble,
    ("__device__ __forceinline__ %s _lc_reduce(%s a, %s b) {"):format(rt, rt, rt),
    ("  return (%s);"):format(g.reduce_expr),
    "}",
    ("extern \"C\" __global__ void %s(%s) {"):format(g.name, table.concat(params, ", ")),
    ("  __shared__ __align__(16) unsigned char _lc_smem[%d * sizeof(%s)];"):format(BLOCK, rt),
    ("  %s *_lc_sh = reinterpret_cast<%s *>(_lc_smem);"):format(rt, rt),
    "  for (long long _lc_o = blockIdx.x; _lc_o < _lc_nout; _lc_o += gridDim.x) {",
  }
  unflatten(lines, "    ", "_lc_o", "_lc_k", "_lc_out", 0, nk)
  lines[#lines + 1] = ("    %s _lc_acc = (%s)(%s);"):format(rt, rt, g.identity)
  lines[#lines + 1] = "    for (long long _lc_j = threadIdx.x; _lc_j < _lc_nred; _lc_j += blockDim.x) {"
  if has_array then unflatten(lines, "      ", "_lc_j", "_lc_r", first_in, nk, nr) end
  for _, l in ipairs(loads) do lines[#lines + 1] = l end
  lines[#lines + 1] = ("      _lc_acc = _lc_reduce(_lc_acc, (%s)(%s));"):format(rt, g.map_expr)
  for _, l in ipairs {
    "    }",
    "    _lc_sh[threadIdx.x] = _lc_acc;",
    "    __syncthreads();",
    "    for (unsigned _lc_s = blockDim.x / 2; _lc_s > 0; _lc_s >>= 1) {",
    "      if (threadIdx.x < _lc_s)",
    "        _lc_sh[threadIdx.x] = _lc_reduce(_lc_sh[threadIdx.x], _lc_sh[threadIdx.x + _lc_s]);",
    "      __syncthreads();",
    "    }",
    "    if (threadIdx.x == 0) {",
    ("      %s a = _lc_sh[0];"):format(rt),
    ("      %s &%s = _lc_out(%s);"):format(rt, g.params[oj].name, index_list("_lc_k", nk)),
    g.post_map_expr,
    "    }",
    "    __syncthreads();",
    "  }",
    "}",
  } do lines[#lines + 1] = l end
  return table.concat(lines, "\n") .. "\n"
end

local RED_CALL_OPTS = { axis = true, keepdims = true, out = true, stream = true }

-- the reduced axes (a set, 1-based) from axis= for a shape of rank r
local function reduced_axes(F, kname, axis, r)
  local list
  if axis == nil then
    list = {}
    for k = 1, r do list[k] = k end
  elseif type(axis) == "number" then
    list = { axis }
  elseif type(axis) == "table" and core.type(axis) == nil then
    list = axis
  else
    fail(F, "kernel '%s': axis must be a number or a table of numbers, got %s", kname, type(axis))
  end
  local set = {}
  for _, a in ipairs(list) do
    local k = math.type(a) == "integer" and a or (type(a) == "number" and math.tointeger(a))
    if not k then
      fail(F, "kernel '%s': axis must be an integer, got %s", kname, tostring(a))
    end
    if k < 0 then k = k + r + 1 end
    if k < 1 or k > r then
      fail(F, "kernel '%s': axis %s is out of range for %d dimensions", kname, tostring(a), r)
    end
    if set[k] then fail(F, "kernel '%s': axis %d is repeated", kname, k) end
    set[k] = true
  end
  return set
end

--- A reduction kernel from `luacuda.reduction`, called on arrays.
-- @type Reduction

--- `k(in1, ... [, {axis =, keepdims = false, out =, stream =}])`: reduces the
-- inputs' broadcast shape over `axis` (1-based, negative from the end, or a
-- table of axes; every axis when absent: a 0-d result). Inputs as for
-- @{Elementwise:__call}; scalar inputs are kernel parameters, usable in
-- `post_map_expr`.
-- @function Reduction:__call
-- @param ... the inputs, then optionally an options table
-- @treturn Array the output, a device array (or `out`)
-- @raise `luacuda.reduction: kernel '<name>' takes 1 input (and an optional table of options), got 2 arguments`;
-- an axis out of range; a bad `out`; the compiler's log when the expressions do not compile
-- @usage local l2 = luacuda.reduction("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
-- local m = luacuda.to_device(luacuda.ones({4, 5}, "float64"))
-- print(l2(m):copy_to_host():item())   -- sqrt(20)
-- print(l2(m, {axis = 2}))             -- one norm per row

--- @section end

function Reduction.__call(g, ...)
  local F, kname = "reduction", g.name
  local args = table.pack(...)
  local opts = {}
  local last = args[args.n]
  if args.n > 0 and type(last) == "table" and getmetatable(last) == nil then
    opts = call_opts(F, kname, last, RED_CALL_OPTS)
    args.n = args.n - 1
  end
  local nin = g.nin
  if args.n ~= nin then
    fail(F, "kernel '%s' takes %d input%s (and an optional table of options), got %d argument%s",
         kname, nin, nin == 1 and "" or "s", args.n, args.n == 1 and "" or "s")
  end
  local bound, from, scalar, shapes = {}, {}, {}, {}
  local has_array = false
  for j = 1, nin do
    local p = g.params[j]
    if check_arg(F, kname, "argument", j, p, args[j], true, bound, from) then
      has_array = true
      shapes[#shapes + 1] = { shape = A(args[j], "shape"), label = ("argument %d '%s'"):format(j, p.name) }
    else
      scalar[j] = true
    end
  end
  local out = opts.out
  local oj = #g.params
  if out ~= nil then
    check_arg(F, kname, "output", 1, g.params[oj], out, false, bound, from)
  end
  local dtypes = {}
  for j, p in ipairs(g.params) do dtypes[j] = param_dtype(F, kname, p, bound) end
  for j = 1, nin do
    if scalar[j] then check_scalar(F, kname, j, g.params[j], args[j], dtypes[j]) end
  end
  local shape = broadcast(F, kname, shapes)
  local r = #shape
  local red = reduced_axes(F, kname, opts.axis, r)
  local keepdims = opts.keepdims
  if keepdims ~= nil and type(keepdims) ~= "boolean" then
    fail(F, "kernel '%s': keepdims must be a boolean, got %s", kname, type(keepdims))
  end
  local kept, reduced, oshape, kshape, rshape = {}, {}, {}, {}, {}
  for k = 1, r do
    if red[k] then
      reduced[#reduced + 1] = k
      rshape[#rshape + 1] = shape[k]
      if keepdims then oshape[#oshape + 1] = 1 end
    else
      kept[#kept + 1] = k
      kshape[#kshape + 1] = shape[k]
      oshape[#oshape + 1] = shape[k]
    end
  end
  local stream = opts.stream
  if out ~= nil then
    local s = A(out, "shape")
    if not same_shape(s, oshape) then
      fail(F, "kernel '%s': out has shape %s, but the reduction gives %s", kname,
           shape_str(s), shape_str(oshape))
    end
  else
    out = core.device_array(oshape, dtypes[oj], stream and { stream = stream } or nil)
  end
  local nout, nred = prod(kshape), prod(rshape)
  if nout == 0 then return out end
  -- the inputs in the full shape, kept axes first; the output in the kept
  -- shape; then the kept axes and the reduced axes merged, each group
  local perm = {}
  for _, k in ipairs(kept) do perm[#perm + 1] = k end
  for _, k in ipairs(reduced) do perm[#perm + 1] = k end
  local pshape = {}
  for k, a in ipairs(perm) do pshape[k] = shape[a] end
  local views, kstrides, rstrides = {}, {}, {}
  for j = 1, nin do
    if not scalar[j] then
      local v = args[j]
      if not same_shape(A(v, "shape"), shape) then v = v:broadcast_to(shape) end
      if r > 1 then v = v:transpose(perm) end
      views[#views + 1] = v
      kstrides[#kstrides + 1] = A(v, "strides")
      rstrides[#rstrides + 1] = kstrides[#kstrides]
    end
  end
  -- the output without the size-1 axes keepdims keeps: a view
  local ov = out
  if keepdims and #reduced > 0 then ov = out:reshape(#kshape > 0 and kshape or { 1 }) end
  kstrides[#kstrides + 1] = A(ov, "strides")
  local nk = #kept
  local mk, mkst = merged_shape(pshape, kstrides, 1, nk)
  local mr, mrst = merged_shape(pshape, rstrides, nk + 1, r)
  -- a group with no axis left is one axis of size 1
  if #mk == 0 then mk = { 1 } end
  if #mr == 0 then mr = { 1 } end
  local full = {}
  for _, n in ipairs(mk) do full[#full + 1] = n end
  for _, n in ipairs(mr) do full[#full + 1] = n end
  local launch_args = { nout, nred }
  local at = 0
  for j = 1, nin do
    if scalar[j] then
      launch_args[#launch_args + 1] = args[j]
    else
      at = at + 1
      local want = {}
      for k = 1, #mk do want[k] = mkst[at][k] end
      for k = 1, #mr do want[#mk + k] = mrst[at][k] end
      launch_args[#launch_args + 1] = merged_view(views[at], full, want)
    end
  end
  launch_args[#launch_args + 1] = merged_view(ov, mk, mkst[at + 1])
  local key = { #mk, #mr }
  for j = 1, #g.params do key[#key + 1] = (scalar[j] and "s:" or "") .. dtypes[j] end
  key = table.concat(key, " ")
  local k = g.kernels[key]
  if not k then
    k = compile(F, g, reduction_source(g, dtypes, scalar, #mk, #mr, bound, has_array))
    g.kernels[key] = k
  end
  local block = 1
  while block < nred and block < BLOCK do block = block * 2 end
  k:launch({ grid = math.min(nout, 65535), block = block, stream = stream },
           table.unpack(launch_args, 1, #launch_args))
  return out
end

local RED_OPTS = { options = true, preamble = true }

local function code_arg(F, v, what)
  if type(v) == "number" then return tostring(v) end
  if type(v) ~= "string" then
    fail(F, "%s must be a string of CUDA C++, got %s", what, type(v))
  end
  return v
end

--- A reduction kernel from CUDA C++ expressions (CuPy's `ReductionKernel`):
-- each element mapped by `map_expr`, combined pairwise by `reduce_expr`
-- (partials `a` and `b`, of the output's type) from `identity`, the total `a`
-- written by `post_map_expr`. Parameter lists as for @{elementwise}.
-- @function reduction
-- @tparam string in_params the inputs
-- @tparam string out_params the one output
-- @tparam string map_expr an element's value from the inputs, by name
-- @tparam string reduce_expr two partials `a`, `b` combined
-- @tparam string post_map_expr the output from the total `a` (`"y = a"`)
-- @tparam string identity C code for the starting value (`"0"`, `"-INFINITY"`)
-- @tparam[opt="reduce_kernel"] string name the kernel's name, for messages
-- @tparam[opt] table opts `{options =, preamble =}` as for @{elementwise}
-- @treturn Reduction a callable
-- @raise `luacuda.reduction: out_params must name one output, got 2`; an expression
-- that is not a string; a parameter list that does not parse
-- @usage local sum = luacuda.reduction("T x", "T y", "x", "a + b", "y = a", "0", "total")
-- print(sum(luacuda.to_device({1, 2, 3}, {dtype = "float32"})):copy_to_host():item())  -- 6.0

-- reduction(in_params, out_params, map_expr, reduce_expr, post_map_expr,
--           identity [, name [, {options=, preamble=}]])
local function reduction(in_params, out_params, map_expr, reduce_expr, post_map_expr,
                         identity, name, opts)
  local F = "reduction"
  local names = {}
  local reserved = { a = true, b = true }
  local ins = parse_params(F, in_params, "in_params", names, reserved)
  local outs = parse_params(F, out_params, "out_params", names, reserved)
  if #outs ~= 1 then
    fail(F, "out_params must name one output, got %d", #outs)
  end
  map_expr = code_arg(F, map_expr, "map_expr")
  reduce_expr = code_arg(F, reduce_expr, "reduce_expr")
  post_map_expr = code_arg(F, post_map_expr, "post_map_expr")
  identity = code_arg(F, identity, "identity")
  name = check_name(F, name, "reduce_kernel")
  opts = check_opts(F, opts, RED_OPTS)
  local params = {}
  for _, p in ipairs(ins) do params[#params + 1] = p end
  params[#params + 1] = outs[1]
  return setmetatable({
    name = name, nin = #ins, params = params, map_expr = map_expr,
    reduce_expr = reduce_expr, post_map_expr = post_map_expr .. "\n;", identity = identity,
    preamble = opts.preamble or "", options = copy_list(opts.options), kernels = {},
  }, Reduction)
end

return { elementwise = elementwise, reduction = reduction }
