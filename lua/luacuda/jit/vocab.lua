-- jit/vocab: luacuda.kernel (K), the device vocabulary of Lua kernels, and
-- what each of its names, math's functions and print become in CUDA C++.
-- On the host every name of K is a marker: calling one, or reading a
-- field of K.threadIdx, is an error saying it exists in kernels only.

local T = require "luacuda.jit.types"

local M = {}
local CTYPE = T.CTYPE

local function host_only(name)
  return function()
    error(("luacuda.kernel.%s: exists in kernels only (a function given to luacuda.jit)"):format(name), 2)
  end
end

-- a table whose fields exist in kernels only
local function marker_table(name, fields)
  local t = fields or {}
  M.TABLES[t] = true
  M.NAMES[t] = "kernel." .. name
  return setmetatable(t, {
    __index = function(_, k)
      error(("luacuda.kernel.%s.%s: exists in kernels only (a function given to luacuda.jit)")
        :format(name, tostring(k)), 2)
    end,
    __newindex = function() error("luacuda.kernel is read-only", 2) end,
    __metatable = false,
    __tostring = function() return "luacuda.kernel." .. name end,
  })
end

local K = {}
M.K = K
M.TABLES = { [K] = true }   -- the vocabulary's tables, read when a kernel is translated
M.NAMES = { [K] = "kernel" } -- the vocabulary's tables and functions -> their names (jit's disk cache)
M.VOCAB = {}          -- function -> handler(ctx, call node, name) -> value
M.ARRAY_MAKERS = {}   -- K.shared.array, K.local_array -> handler(ctx, call) -> array type
M.DIM3 = {}           -- K.threadIdx... -> handler(field, line, ctx) -> value
M.SENTINELS = {}      -- K.warpsize, K.laneid -> {code, type}
M.PURE = {}           -- functions whose value is a function of their arguments' values
                      -- alone (no line, temporary or state): jit/codegen keeps it

local function def(path, handler, into, key)
  local f = host_only(path)
  rawset(into, key, f)
  M.VOCAB[f] = handler
  M.NAMES[f] = "kernel." .. path
  return f
end

-- ---- helpers ------------------------------------------------------------------

local function args(ctx, call, n, name)
  local vals = ctx:args(call.args)
  if n and #vals ~= n then
    ctx:fail(call.line, "%s takes %d argument%s, got %d", name, n, n == 1 and "" or "s", #vals)
  end
  for i = 1, #vals do
    local v = vals[i]
    -- (ctx:rvalue gives a run-time value back: called only for the others)
    if v.host ~= nil or v.str ~= nil then vals[i] = ctx:rvalue(v, call.line) end
  end
  return vals
end

local function int_arg(ctx, v, line, what)
  if v.ty ~= "unknown" and not T.is_int(v.ty) then
    ctx:fail(line, "%s is %s: it takes an integer", what, T.describe(v.ty))
  end
  return v
end

local function cast(val, t)
  local code = val.code
  if val.ty == t then return code end
  if not code then return ("(%s)(%s)"):format(CTYPE[t], code) end
  return "(" .. CTYPE[t] .. ")(" .. code .. ")"     -- (a concatenation: cheaper than format)
end

-- a compile-time integer: a literal, or an upvalue's value
local function const_int(ctx, node, what)
  local v = ctx:expr(node)
  local n = v.code and tonumber((v.code:gsub("LL$", "")))
  if v.ty ~= "wint" or math.type(n) ~= "integer" then
    ctx:fail(node.line, "%s must be an integer known when the kernel is compiled (a literal or an upvalue)", what)
  end
  return n
end

-- ---- positions -------------------------------------------------------------------

local function dim3(name, base, plus)
  local t = marker_table(name)
  M.DIM3[t] = function(field, line, ctx)
    if field ~= "x" and field ~= "y" and field ~= "z" then
      ctx:fail(line, "K.%s has the fields x, y and z, not '%s'", name, tostring(field))
    end
    local code = plus and ("((long long)%s.%s + 1)"):format(base, field) or ("(long long)%s.%s"):format(base, field)
    return { code = code, ty = "int64" }
  end
  rawset(K, name, t)
end
dim3("threadIdx", "threadIdx", true)
dim3("blockIdx", "blockIdx", true)
dim3("blockDim", "blockDim", false)
dim3("gridDim", "gridDim", false)

local function sentinel(name, code, ty)
  local t = marker_table(name)
  M.SENTINELS[t] = { code, ty }
  rawset(K, name, t)
end
sentinel("warpsize", "(long long)warpSize", "int64")
sentinel("laneid", "((long long)laneid() + 1)", "int64")

local AXES = { "x", "y", "z" }

local function grid_like(name, one)
  def(name, function(ctx, call)
    args(ctx, call, 1, "K." .. name)
    local n = call.args[1].tag == "Number" and call.args[1].value
    if n ~= 1 and n ~= 2 and n ~= 3 then
      ctx:fail(call.line, "K.%s(n) takes a literal 1, 2 or 3", name)
    end
    local out = {}
    for k = 1, n do out[k] = { code = one(AXES[k]), ty = "int64" } end
    if n == 1 then return out[1] end
    return { multi = out, code = out[1].code, ty = "int64" }
  end, K, name)
end
grid_like("grid", function(a)
  return ("(lcj_grid(blockIdx.%s, blockDim.%s, threadIdx.%s) + 1)"):format(a, a, a)
end)
grid_like("gridsize", function(a) return ("((long long)blockDim.%s * gridDim.%s)"):format(a, a) end)

-- ---- barriers ------------------------------------------------------------------

local function statement(name, code)
  def(name, function(ctx, call)
    args(ctx, call, 0, "K." .. name)
    return { code = code, ty = "void" }
  end, K, name)
end
statement("syncthreads", "__syncthreads()")
statement("syncwarp", "__syncwarp()")
statement("threadfence", "__threadfence()")

-- ---- shared and local arrays -------------------------------------------------

local function array_maker(name, space, into, key)
  local f = host_only(name)
  rawset(into, key, f)
  M.NAMES[f] = "kernel." .. name
  M.ARRAY_MAKERS[f] = function(ctx, call)
    local a = call.args
    if #a ~= 2 then ctx:fail(call.line, "K.%s(shape, dtype) takes 2 arguments, got %d", name, #a) end
    local dims = {}
    if a[1].tag == "Table" then
      for _, it in ipairs(a[1].items) do dims[#dims + 1] = const_int(ctx, it.value, "a dimension of K." .. name) end
    else
      dims[1] = const_int(ctx, a[1], "the shape of K." .. name)
    end
    if #dims < 1 or #dims > 3 then ctx:fail(call.line, "K.%s takes 1 to 3 dimensions", name) end
    -- shape 0: the launch's dynamic shared memory (its `shared =` bytes)
    local dynamic = space == "shared" and #dims == 1 and dims[1] == 0
    for _, d in ipairs(dims) do
      if d < 1 and not dynamic then
        ctx:fail(call.line, "K.%s: a dimension is at least 1, got %d%s", name, d,
          space == "shared" and " (a shape of 0 is the launch's dynamic shared memory)" or "")
      end
    end
    local dt = a[2]
    local dtype = dt.tag == "String" and dt.value
    if not dtype then
      local v = ctx:expr(dt)
      dtype = v.host
    end
    if type(dtype) ~= "string" or not CTYPE[dtype] or dtype == "float16" or dtype == "bfloat16" then
      ctx:fail(call.line, "K.%s: the dtype must be a string such as \"float32\" (bool, int8 ... uint64, float32, float64)", name)
    end
    return { array = true, dtype = dtype, ndim = #dims, dims = dims, space = space, dynamic = dynamic }
  end
  return f
end
K.shared = marker_table("shared")
array_maker("shared.array", "shared", K.shared, "array")
array_maker("local_array", "local", K, "local_array")

-- ---- atomics -------------------------------------------------------------------

K.atomic = marker_table("atomic")
local ATOMICS = { add = "lcj_atomic_add", sub = "lcj_atomic_sub", max = "lcj_atomic_max",
  min = "lcj_atomic_min", exch = "lcj_atomic_exch", and_ = "lcj_atomic_and_", or_ = "lcj_atomic_or_",
  xor = "lcj_atomic_xor", cas = "lcj_atomic_cas" }
for op, cfn in pairs(ATOMICS) do
  local name = "atomic." .. op
  def(name, function(ctx, call)
    local n = op == "cas" and 4 or 3
    if #call.args ~= n then
      ctx:fail(call.line, "K.%s takes %d arguments (array, index%s), got %d", name, n,
        op == "cas" and ", compare, value" or ", value", #call.args)
    end
    local arr = ctx:expr(call.args[1])
    if arr.host ~= nil or type(arr.ty) ~= "table" then
      ctx:fail(call.line, "K.%s: the first argument is an array", name)
    end
    local dt = arr.ty.dtype
    if dt == "bool" or dt == "int8" or dt == "int16" or dt == "uint8" or dt == "uint16"
      or dt == "float16" or dt == "bfloat16"
      or (T.is_float(dt) and op ~= "add" and op ~= "sub" and op ~= "exch") then
      ctx:fail(call.line, "K.%s does not take a %s array", name, dt)
    end
    local lv = ctx:element(arr, call.args[2], call.line)
    local parts = { "&" .. lv }
    for i = 3, n do
      local v = ctx:rvalue(ctx:expr(call.args[i]), call.line)
      if v.ty ~= "unknown" and not T.is_number(v.ty) then
        ctx:fail(call.line, "K.%s: argument %d is %s, not a number", name, i, T.describe(v.ty))
      end
      if T.is_int(dt) and T.is_float(v.ty) then
        ctx:fail(call.line, "K.%s: a float for a %s array: make it an integer first (math.floor(x))", name, dt)
      end
      parts[#parts + 1] = cast(v, dt)
    end
    return { code = ("%s(%s)"):format(cfn, table.concat(parts, ", ")), ty = dt }
  end, K.atomic, op)
end

-- ---- warps ---------------------------------------------------------------------

local function shuffle(name, cfn, one_based)
  def(name, function(ctx, call)
    local v = args(ctx, call, 2, "K." .. name)
    if not T.is_number(v[1].ty) and v[1].ty ~= "unknown" then
      ctx:fail(call.line, "K.%s shuffles a number, got %s", name, T.describe(v[1].ty))
    end
    int_arg(ctx, v[2], call.line, "K." .. name .. "'s lane")
    local t = T.concrete(v[1].ty)
    return { code = ("%s(0xffffffffu, %s, (int)(%s)%s)"):format(cfn, cast(v[1], t), v[2].code,
      one_based and " - 1" or ""), ty = v[1].ty }
  end, K, name)
end
shuffle("shfl", "__shfl_sync", true)
shuffle("shfl_down", "__shfl_down_sync")
shuffle("shfl_up", "__shfl_up_sync")
shuffle("shfl_xor", "__shfl_xor_sync")

local function vote(name, cfn, ty)
  def(name, function(ctx, call)
    local v = args(ctx, call, 1, "K." .. name)
    return { code = ("%s(0xffffffffu, %s)"):format(cfn, ctx:truth(v[1], call.line)), ty = ty }
  end, K, name)
end
vote("ballot", "(uint32_t)__ballot_sync", "uint32")
vote("any", "(bool)__any_sync", "bool")
vote("all", "(bool)__all_sync", "bool")

-- ---- random numbers: the words luacuda.random draws -----------------------------

K.random = marker_table("random")
local function word(s, c, i) return ("lc_random_word(%s, %s, %s)"):format(s, c, i) end
local RANDOM = {
  uniform_float32 = { "float32", function(s, c, i) return ("lc_uniform_float(%s)"):format(word(s, c, i)) end },
  uniform_float64 = { "float64", function(s, c, i)
    return ("lc_uniform_double(%s, %s)"):format(word(s, c, "2 * " .. i), word(s, c, "2 * " .. i .. " + 1"))
  end },
  -- element i of g:normal(n): one of the pair drawn from the words of
  -- elements 2p and 2p + 1, p = i // 2 (0-based)
  normal_float32 = { "float32", function(s, c, i)
    local p = "(" .. i .. " & ~1ull)"
    return ("(%s & 1 ? lc_normal_float2(%s, %s).y : lc_normal_float2(%s, %s).x)"):format(i,
      word(s, c, p), word(s, c, p .. " + 1"), word(s, c, p), word(s, c, p .. " + 1"))
  end },
  normal_float64 = { "float64", function(s, c, i)
    local p = "2 * (" .. i .. " & ~1ull)"
    local w = { word(s, c, p), word(s, c, p .. " + 1"), word(s, c, p .. " + 2"), word(s, c, p .. " + 3") }
    local pair = ("lc_normal_double2(%s)"):format(table.concat(w, ", "))
    return ("(%s & 1 ? %s.y : %s.x)"):format(i, pair, pair)
  end },
}
for fname, spec in pairs(RANDOM) do
  def("random." .. fname, function(ctx, call)
    local v = args(ctx, call, 3, "K.random." .. fname)
    for k, what in ipairs({ "seed", "counter", "index" }) do
      int_arg(ctx, v[k], call.line, ("K.random.%s's %s"):format(fname, what))
    end
    local i = ("((unsigned long long)(%s) - 1)"):format(v[3].code)
    return { code = spec[2](("(unsigned long long)(%s)"):format(v[1].code),
      ("(unsigned long long)(%s)"):format(v[2].code), i), ty = spec[1] }
  end, K.random, fname)
end

-- ---- math ---------------------------------------------------------------------------

local function float_arg(v)
  local ft = T.float_of(v.ty)
  return cast(v, T.concrete(ft)), ft
end

local function math1(name, cfn)
  local full = "math." .. name
  M.VOCAB[math[name]] = function(ctx, call)
    local v = args(ctx, call, 1, full)
    ctx:number(v[1], call.line, full)
    local code, t = float_arg(v[1])
    return { code = cfn .. "(" .. code .. ")", ty = t }
  end
end
for _, n in ipairs({ "sqrt", "exp", "sin", "cos", "tan", "asin", "acos" }) do math1(n, n) end

M.VOCAB[math.log] = function(ctx, call)
  local v = args(ctx, call, nil, "math.log")
  if #v < 1 or #v > 2 then ctx:fail(call.line, "math.log takes 1 or 2 arguments") end
  ctx:number(v[1], call.line, "math.log")
  local code, t = float_arg(v[1])
  if not v[2] then return { code = ("log(%s)"):format(code), ty = t } end
  local b = call.args[2].tag == "Number" and call.args[2].value
  if b == 2 then return { code = ("log2(%s)"):format(code), ty = t } end
  if b == 10 then return { code = ("log10(%s)"):format(code), ty = t } end
  local tb = T.float_of(T.promote(v[1].ty, v[2].ty))
  local ct = T.concrete(tb)
  return { code = ("(log(%s) / log(%s))"):format(cast(v[1], ct), cast(v[2], ct)), ty = tb }
end

M.VOCAB[math.atan] = function(ctx, call)
  local v = args(ctx, call, nil, "math.atan")
  if #v < 1 or #v > 2 then ctx:fail(call.line, "math.atan takes 1 or 2 arguments") end
  if not v[2] then
    local code, t = float_arg(v[1])
    return { code = ("atan(%s)"):format(code), ty = t }
  end
  local t = T.float_of(T.promote(v[1].ty, v[2].ty))
  local ct = T.concrete(t)
  return { code = ("atan2(%s, %s)"):format(cast(v[1], ct), cast(v[2], ct)), ty = t }
end

local function rounding(name, cfn)
  M.VOCAB[math[name]] = function(ctx, call)
    local v = args(ctx, call, 1, "math." .. name)
    ctx:number(v[1], call.line, "math." .. name)
    if T.is_int(v[1].ty) then return v[1] end
    -- a float gives an integer, as in Lua 5.4
    return { code = ("lcj_f2i(%s(%s))"):format(cfn, cast(v[1], "float64")), ty = "int64" }
  end
end
rounding("floor", "floor")
rounding("ceil", "ceil")

M.VOCAB[math.abs] = function(ctx, call)
  local v = args(ctx, call, 1, "math.abs")
  ctx:number(v[1], call.line, "math.abs")
  local t = T.concrete(v[1].ty)
  if T.is_float(t) then return { code = "lcj_abs(" .. cast(v[1], t) .. ")", ty = v[1].ty } end
  return { code = "lcj_abs<" .. CTYPE[t] .. ">(" .. cast(v[1], t) .. ")", ty = v[1].ty }
end

M.VOCAB[math.fmod] = function(ctx, call)
  local v = args(ctx, call, 2, "math.fmod")
  local t = T.promote(ctx:number(v[1], call.line, "math.fmod").ty, ctx:number(v[2], call.line, "math.fmod").ty)
  local ct = T.concrete(t)
  if T.is_int(t) then
    -- C's truncating remainder, as Lua's math.fmod of integers (by zero: 0)
    return { code = ("((%s) == 0 ? (%s)0 : (%s) == -1 ? (%s)0 : (%s)(%s %% %s))"):format(cast(v[2], ct),
      CTYPE[ct], cast(v[2], ct), CTYPE[ct], CTYPE[ct], cast(v[1], ct), cast(v[2], ct)), ty = t }
  end
  return { code = ("fmod(%s, %s)"):format(cast(v[1], ct), cast(v[2], ct)), ty = t }
end

for _, n in ipairs({ "sqrt", "exp", "sin", "cos", "tan", "asin", "acos", "log", "atan", "floor", "ceil",
  "abs", "fmod" }) do
  M.PURE[math[n]] = true
end

M.VOCAB[math.modf] = function(ctx, call)
  local v = args(ctx, call, 1, "math.modf")
  ctx:number(v[1], call.line, "math.modf")
  local code, t = float_arg(v[1])
  local ip = ("trunc(%s)"):format(code)
  local fr = ("(isinf(%s) ? %s(0) : %s - trunc(%s))"):format(code, CTYPE[T.concrete(t)], code, code)
  return { multi = { { code = ip, ty = t }, { code = fr, ty = t } }, code = ip, ty = t }
end

local function minmax(name, cfn)
  M.VOCAB[math[name]] = function(ctx, call)
    local v = args(ctx, call, nil, "math." .. name)
    if #v == 0 then ctx:fail(call.line, "math.%s takes at least one argument", name) end
    local t = ctx:number(v[1], call.line, "math." .. name).ty
    for i = 2, #v do t = T.promote(t, ctx:number(v[i], call.line, "math." .. name).ty) end
    local ct = T.concrete(t)
    local code = cast(v[1], ct)
    for i = 2, #v do code = ("%s<%s>(%s, %s)"):format(cfn, CTYPE[ct], code, cast(v[i], ct)) end
    return { code = code, ty = t }
  end
end
minmax("min", "lcj_min")
minmax("max", "lcj_max")

-- math.tointeger: an integer is itself; a float gives an integer, or nil
-- where it has no integer's value: a condition (`if math.tointeger(x)`),
-- `math.tointeger(x) or d` and `== nil` test that (maybe); used as a
-- number, nil stops the kernel naming the Lua line
M.VOCAB[math.tointeger] = function(ctx, call)
  local v = args(ctx, call, 1, "math.tointeger")
  local t = v[1].ty
  if t == "unknown" or T.is_int(t) then return v[1] end
  if not T.is_float(t) then
    ctx:fail(call.line, "math.tointeger of %s: it takes a number", T.describe(t))
  end
  local x = cast(v[1], "float64")
  return { code = ('lcj_tointeger(%s, "%s:%d")'):format(x, ctx.chunk_c, call.line), ty = "int64",
    maybe = ("lcj_isint(%s)"):format(x), raw = ("(long long)(%s)"):format(x) }
end

-- math.type: known when the kernel is compiled, as every type is; a string
-- (str) that the kernel may compare with a literal or print
M.VOCAB[math.type] = function(ctx, call)
  local v = args(ctx, call, 1, "math.type")
  local t = v[1].ty
  local s = false                                 -- nil: not a number
  if t == "unknown" then s = "?"
  elseif T.is_int(t) then s = "integer"
  elseif T.is_float(t) then s = "float" end
  return { str = s, code = "", ty = "string" }
end

-- ---- print --------------------------------------------------------------------------

M.VOCAB[print] = function(ctx, call)
  local fmt, vals = {}, {}
  for _, node in ipairs(call.args) do
    if node.tag == "String" then
      fmt[#fmt + 1] = node.value:gsub("%%", "%%%%"):gsub("\\", "\\\\"):gsub('"', '\\"'):gsub("\n", "\\n")
    else
      local v = ctx:expr(node)
      if v.str ~= nil then v = { code = ('"%s"'):format(v.str or "nil"), ty = "string" }
      else v = ctx:rvalue(v, node.line) end
      if v.multi then v = v.multi[1] end
      if type(v.ty) == "table" then ctx:fail(node.line, "print takes numbers, booleans and literal strings, not an array") end
      if v.ty == "string" then
        fmt[#fmt + 1] = "%s"
        vals[#vals + 1] = v.code
      elseif v.ty == "bool" then
        fmt[#fmt + 1] = "%s"
        vals[#vals + 1] = ('(%s) ? "true" : "false"'):format(v.code)
      elseif T.is_float(v.ty) then
        fmt[#fmt + 1] = "%.14g"
        vals[#vals + 1] = cast(v, "float64")
      elseif v.ty == "uint64" then
        fmt[#fmt + 1] = "%llu"
        vals[#vals + 1] = ("(unsigned long long)(%s)"):format(v.code)
      else
        fmt[#fmt + 1] = "%lld"
        vals[#vals + 1] = ("(long long)(%s)"):format(v.code)
      end
    end
  end
  local list = #vals > 0 and (", " .. table.concat(vals, ", ")) or ""
  return { code = ('printf("%s\\n"%s)'):format(table.concat(fmt, "\\t"), list), ty = "void" }
end

setmetatable(K, {
  __index = function(_, k)
    error(("luacuda.kernel has no '%s'"):format(tostring(k)), 2)
  end,
  __newindex = function() error("luacuda.kernel is read-only", 2) end,
  __metatable = false,
})

return M
