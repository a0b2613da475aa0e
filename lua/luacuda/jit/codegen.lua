-- jit/codegen: a Lua function's syntax tree (jit/parser), the types of its
-- arguments and the values of its upvalues to CUDA C++ source: one
-- extern "C" __global__ kernel (or __device__ function), its arrays as
-- Array<T, N> parameters, every statement behind a #line directive naming
-- the Lua file and line.
--
-- Each function is walked once or more by the same code, each walk
-- inferring the types (a local's type is the promotion of everything
-- assigned to it) and writing the text, until a walk whose text used only
-- final types; an expression (a math call too) whose locals kept their
-- types is not walked again (C:expr keeps its value). An expression's walk gives a
-- value {code =, ty =} (ty a type of jit/types), or {host = v, name =} for
-- what is known on the host (the vocabulary tables, math, upvalues), which
-- becomes a constant or a call of the vocabulary where it is used. Values
-- are never changed once made (C:expr gives a kept one again).

local T = require "luacuda.jit.types"
local INT, FLOAT = T.INT, T.FLOAT       -- the integer and float types, as sets
local RUNTIME = require "luacuda.jit.runtime"

local M = {}

-- the C types; "unknown" (a type not inferred yet) writes a placeholder,
-- in a walk whose text is never used (types changed in it)
-- (a copy of T.CTYPE's: a read through __index is a step more)
local CTYPE = { unknown = "void" }
for t, c in pairs(T.CTYPE) do CTYPE[t] = c end

-- the C++ words a local may not be named (and the prefixes the code uses)
local RESERVED = {}
for w in ([[auto bool break case char const continue default do double else enum extern
  float for goto if inline int long register restrict return short signed sizeof static
  struct switch typedef union unsigned void volatile while class namespace template
  typename this new delete operator true false nullptr private public protected virtual
  friend mutable explicit export asm try catch throw using wchar_t char16_t char32_t
  alignas alignof constexpr decltype noexcept static_assert thread_local printf
  threadIdx blockIdx blockDim gridDim warpSize Array grid1 grid2 grid3 gridsize1 gridsize2
  gridsize3 laneid barrier mem_fence wavebarrier assert min max abs sqrt exp log log2 log10
  sin cos tan asin acos atan atan2 floor ceil fabs fmod trunc isinf isnan pow]]):gmatch("[%w_]+") do
  RESERVED[w] = true
end

-- the type an element of a dtype is computed in (half types in float32)
local function elem_type(dtype)
  if dtype == "float16" or dtype == "bfloat16" then return "float32" end
  return dtype
end

-- ---- the translation context of one function ------------------------------

local C = {}
C.__index = C

function C:fail(line, fmt, ...)
  error(("luacuda.jit: %s:%d: " .. fmt):format(self.chunk, line, ...), 0)
end

function C:emit(line)
  self.impure = self.impure + 1
  if self.mode == "emit" then self.out[#self.out + 1] = self.indent .. line end
end

-- (each line's directive made once for all the walks)
function C:line_directive(line)
  if self.mode == "emit" then
    local d = self.directives[line]
    if not d then
      d = "#line " .. line .. ' "' .. self.chunk_c .. '"'
      self.directives[line] = d
    end
    self.out[#self.out + 1] = d
  end
end

-- a C name for a new local, unique in the function
function C:cname(name)
  local base = name
  -- C++ words, the generated code's prefixes, and capitals (the macros')
  if RESERVED[base] or base:match("^lc") or base:match("^_") or base:match("^[%u%d_]+$") then
    base = base .. "_"
  end
  -- names[c] marks every C name taken, so `i_2` of Lua never meets the second `i`
  local c, n = base, 1
  while self.names[c] do
    n = n + 1
    c = base .. "_" .. n
  end
  self.names[c] = true
  return c
end

-- the variable record of declaration node's idx-th name, the same at every walk
function C:declare(node, idx, name, line)
  local key = node
  self.varmap[key] = self.varmap[key] or {}
  local v = self.varmap[key][idx]
  if not v then
    v = { name = name, cname = self:cname(name), line = line }
    self.varmap[key][idx] = v
    self.vars[#self.vars + 1] = v
  end
  self.scope[name] = v
  return v
end

function C:push() self.scope = setmetatable({}, { __index = self.scope }) end
function C:pop() self.scope = getmetatable(self.scope).__index end

-- widen v's type with t (inference)
function C:assign_type(v, t, line)
  if v.array then
    self:fail(line, "'%s' is an array; an array local cannot be assigned again", v.name)
  end
  if type(t) == "table" then
    self:fail(line, "%s cannot be assigned to the local '%s': an array local is only "
      .. "'local y = x' of an array parameter, or K.shared.array / K.local_array", T.describe(t), v.name)
  end
  local j, why = T.join(v.ty, t)
  if not j then
    self:fail(line, "the local '%s' is given %s and %s (%s): a local keeps one type",
      v.name, T.describe(v.ty), T.describe(t), why)
  end
  if j ~= v.ty then
    v.ty = j
    self.changed = true
  end
  local seen = self.seen
  if seen[v] == nil then seen[v] = j end     -- the store's text casts to it
end

-- ---- constants --------------------------------------------------------------

local function int_literal(n)
  if n == math.mininteger then return "(-9223372036854775807LL - 1)" end
  if n >= -2147483647 and n <= 2147483647 then return tostring(n) end
  return tostring(n) .. "LL"
end

local function float_literal(x)
  if x ~= x then return "NAN" end
  if x == math.huge then return "HUGE_VAL" end
  if x == -math.huge then return "(-HUGE_VAL)" end
  local s = ("%.17g"):format(x)
  if not s:find("[%.eEn]") then s = s .. ".0" end
  return s
end

-- a host value (an upvalue, a global, a field of one) as a kernel value
-- vocabulary values: K.warpsize, K.laneid -> {code, ty}
local SENTINEL = require("luacuda.jit.vocab").SENTINELS
local PURE = require("luacuda.jit.vocab").PURE

local function host_value(v, name)
  local tv = type(v)
  if math.type(v) == "integer" then return { code = int_literal(v), ty = "wint" } end
  if tv == "number" then return { code = float_literal(v), ty = "wfloat" } end
  if tv == "boolean" then return { code = tostring(v), ty = "bool" } end
  if SENTINEL[v] then return { code = SENTINEL[v][1], ty = SENTINEL[v][2] } end
  return { host = v, name = name }
end
M.host_value = host_value

-- a value as a run-time value, or an error saying what it is
function C:rvalue(val, line)
  if val.str ~= nil then
    self:fail(line, "math.type gives a string, which a kernel can only compare with a literal "
      .. "(math.type(x) == \"float\") or print")
  end
  if val.host == nil then return val end
  local v, what = val.host, type(val.host)
  if what == "userdata" then what = "an array or other luacuda object"
  elseif what == "table" then what = "a table"
  elseif what == "string" then what = "a string"
  elseif what == "function" then what = "a function"
  end
  self:fail(line, "'%s' is %s, which a kernel cannot hold: only numbers and booleans of "
    .. "the host are read as constants; pass it as an argument%s", val.name or "?", what,
    type(v) == "function" and " (a function is called, not used as a value)" or "")
end

-- the C expression of value val in type t (a dtype name)
local function cast(val, t)
  local code = val.code
  if val.ty == t then return code end
  if not code then return ("(%s)(%s)"):format(CTYPE[t], code) end
  return "(" .. CTYPE[t] .. ")(" .. code .. ")"
end

-- ---- expressions --------------------------------------------------------------

local promote = T.promote
-- T.promote's answers by the two numeric types (or "unknown"), made at the
-- first use of a pair
local PROMOTED = setmetatable({}, { __index = function(rows, a)
  local row = setmetatable({}, { __index = function(row, b)
    local t = promote(a, b)
    row[b] = t
    return t
  end })
  rows[a] = row
  return row
end })
-- T.concrete's answers but for the types that are their own
local CONCRETE = { wint = "int64", wfloat = "float64" }

local ARITH = { ["+"] = "lcj_add", ["-"] = "lcj_sub", ["*"] = "lcj_mul" }
local COMPARE = { ["=="] = "==", ["~="] = "!=", ["<"] = "<", ["<="] = "<=", [">"] = ">", [">="] = ">=" }
local BITWISE = { ["&"] = "&", ["|"] = "|", ["~"] = "^" }
-- each operator quoted, for messages
local QUOTED = setmetatable({}, { __index = function(q, op)
  q[op] = ("'%s'"):format(op)
  return q[op]
end })

-- the truth of a value in a condition: Lua's (a number is true)
function C:truth(val, line)
  if val.str ~= nil then return val.str and "true" or "false" end
  if val.maybe then return val.maybe end            -- math.tointeger(x): not nil
  val = self:rvalue(val, line)
  if val.ty == "bool" or val.ty == "unknown" then return val.code end
  if type(val.ty) == "table" then self:fail(line, "an array is not a condition") end
  return ("((void)(%s), true)"):format(val.code)
end

-- The types C:number takes. A run-time number, which C:number gives back
-- as it is, is a value of one of them that is neither a host value nor a
-- string: `NUMERIC[v.ty] and v.host == nil and v.str == nil`. The test is
-- written out three times, to spare a call per operand: in C:number, and
-- for each operand in C:binop. A change to it is a change to all three.
local NUMERIC = { unknown = true }
for t in pairs(INT) do NUMERIC[t] = true end
for t in pairs(FLOAT) do NUMERIC[t] = true end

function C:number(val, line, what)
  -- a run-time number as it is (NUMERIC's test)
  if NUMERIC[val.ty] and val.host == nil and val.str == nil then return val end
  if val.host ~= nil or val.str ~= nil then val = self:rvalue(val, line) end
  local ty = val.ty
  if ty ~= "unknown" and not (INT[ty] or FLOAT[ty]) then
    self:fail(line, "%s of %s: it takes numbers", what, T.describe(val.ty))
  end
  return val
end

-- k where value val is the constant 2^k (an integer literal or host value)
-- that type ct holds, else nil
local function pow2_exponent(val, ct)
  if val.ty ~= "wint" then return nil end
  local n = math.tointeger(tonumber((val.code:gsub("LL$", ""))))
  if not n or n < 1 or n & (n - 1) ~= 0 then return nil end
  local bits = T.bits(ct)
  local top = T.is_signed(ct) and bits - 1 or bits   -- ct holds 2^k for k < top
  local k = 0
  while (1 << k) ~= n do k = k + 1 end
  if k >= top then return nil end
  return k
end

function C:binop(e)
  local op, line = e.op, e.line
  local fn = ARITH[op]      -- (+, - and *, the most frequent, asked once)
  if not fn then
    if op == "and" or op == "or" then return self:logical(e) end
    if op == ".." then
      self:fail(line, "'..' (strings) is not in the kernel subset: a kernel computes numbers; print(a, b) prints several values")
    end
    if op == "==" or op == "~=" then
      local s = self:compare_strings(e)
      if s then return s end
    end
  end
  local a, b = self:expr(e.a), self:expr(e.b)
  if not fn and COMPARE[op] then
    a, b = self:rvalue(a, line), self:rvalue(b, line)
    if a.ty == "unknown" or b.ty == "unknown" then return { code = "", ty = "bool" } end
    if a.ty == "bool" and b.ty == "bool" and (op == "==" or op == "~=") then
      return { code = ("(%s %s %s)"):format(a.code, COMPARE[op], b.code), ty = "bool" }
    end
    if not (INT[a.ty] or FLOAT[a.ty]) or not (INT[b.ty] or FLOAT[b.ty]) then
      self:fail(line, "'%s' compares %s with %s: a kernel compares numbers with numbers, booleans with booleans",
        op, T.describe(a.ty), T.describe(b.ty))
    end
    local t = T.concrete(T.promote(a.ty, b.ty))
    return { code = "(" .. cast(a, t) .. " " .. COMPARE[op] .. " " .. cast(b, t) .. ")", ty = "bool" }
  end
  -- (C:number's answer for a run-time number without the call: NUMERIC's test)
  if not (NUMERIC[a.ty] and a.host == nil and a.str == nil) then a = self:number(a, line, QUOTED[op]) end
  if not (NUMERIC[b.ty] and b.host == nil and b.str == nil) then b = self:number(b, line, QUOTED[op]) end
  local t = PROMOTED[a.ty][b.ty]
  if t == "unknown" then return { code = "", ty = "unknown" } end
  local ct = CONCRETE[t] or t
  if fn then
    -- (cast's answer where the operand has the type already, without the call)
    local ca = a.ty == ct and a.code or cast(a, ct)
    local cb = b.ty == ct and b.code or cast(b, ct)
    if INT[t] then return { code = fn .. "<" .. CTYPE[ct] .. ">(" .. ca .. ", " .. cb .. ")", ty = t } end
    return { code = "(" .. ca .. " " .. op .. " " .. cb .. ")", ty = t }
  elseif op == "/" or op == "^" then
    local ft = T.float_of(t)
    local cf = T.concrete(ft)
    if op == "/" then
      return { code = "(" .. cast(a, cf) .. " / " .. cast(b, cf) .. ")", ty = ft }
    end
    return { code = ("pow(%s, %s)"):format(cast(a, cf), cast(b, cf)), ty = ft }
  elseif op == "//" or op == "%" then
    local k = INT[t] and pow2_exponent(b, ct)
    if k then
      -- by 2^k, a constant: floored division is the arithmetic shift and
      -- floored modulo the low k bits (two's complement), as
      -- lcj_idiv/lcj_mod would compute them, without their sign fix-ups
      if op == "//" then return { code = ("(%s)((%s) >> %d)"):format(CTYPE[ct], cast(a, ct), k), ty = t } end
      return { code = ("(%s)((%s) & %s)"):format(CTYPE[ct], cast(a, ct), int_literal((1 << k) - 1)), ty = t }
    end
    -- the float overloads are plain functions: no template arguments for them
    local name = op == "//" and "lcj_idiv" or "lcj_mod"
    if INT[t] then name = ("%s<%s>"):format(name, CTYPE[ct]) end
    return { code = name .. "(" .. cast(a, ct) .. ", " .. cast(b, ct) .. ")", ty = t }
  elseif BITWISE[op] or op == "<<" or op == ">>" then
    if not INT[a.ty] or not INT[b.ty] then
      self:fail(line, "'%s' on %s and %s: bitwise operators take integers (math.floor(x) makes one)",
        op, T.describe(a.ty), T.describe(b.ty))
    end
    if op == "<<" or op == ">>" then
      local at = T.concrete(a.ty)
      return { code = ("%s<%s>(%s, (long long)(%s))"):format(op == "<<" and "lcj_shl" or "lcj_shr",
        CTYPE[at], a.code, b.code), ty = a.ty }
    end
    return { code = ("(%s)(%s %s %s)"):format(CTYPE[ct], cast(a, ct), BITWISE[op], cast(b, ct)), ty = t }
  end
  self:fail(line, "the operator '%s' is not in the kernel subset", op)
end

-- == and ~= of what is known when the kernel is compiled: math.type(x)
-- with a string or nil; or math.tointeger(x) with nil. nil otherwise.
function C:compare_strings(e)
  local function side(node)
    if node.tag == "String" then return { str = node.value } end
    if node.tag == "Nil" then return { str = false, is_nil = true } end
    if node.tag == "Call" or node.tag == "Paren" then return self:expr(node) end
    return nil
  end
  local a, b = side(e.a), side(e.b)
  if not a or not b then return nil end
  local eq = e.op == "=="
  if a.str ~= nil and b.str ~= nil then
    return { code = ((a.str == b.str) == eq) and "true" or "false", ty = "bool" }
  end
  local m = a.maybe and b.is_nil and a or b.maybe and a.is_nil and b
  if m then return { code = ("(%s%s)"):format(eq and "!" or "", m.maybe), ty = "bool" } end
  if a.str ~= nil or b.str ~= nil then
    self:fail(e.line, "'%s' compares a string with a number: math.type(x) is compared with \"integer\", \"float\" or nil", e.op)
  end
  return nil
end

-- and/or with Lua's truthiness: a number is always true, so `c and a or b`
-- is the conditional (c ? a : b); booleans give && and ||
function C:logical(e)
  local line = e.line
  if e.op == "or" and e.a.tag == "Binop" and e.a.op == "and" then
    local c = self:expr(e.a.a)
    local x = self:rvalue(self:expr(e.a.b), line)
    local y = self:rvalue(self:expr(e.b), line)
    if x.ty ~= "bool" and x.ty ~= "unknown" then
      -- x is a number, always true: c ? x : y
      if y.ty == "unknown" then return { code = "", ty = "unknown" } end
      local t = T.join(x.ty, y.ty)
      if not t or type(t) == "table" then
        self:fail(line, "'c and a or b' gives %s or %s: both must be numbers, or both booleans",
          T.describe(x.ty), T.describe(y.ty))
      end
      local ct = T.concrete(t)
      return { code = ("(%s ? %s : %s)"):format(self:truth(c, line), cast(x, ct), cast(y, ct)), ty = t }
    end
  end
  local a = self:expr(e.a)
  if a.maybe and e.op == "or" then
    -- math.tointeger(x) or d: d where x has no integer's value
    local b = self:number(self:expr(e.b), line, "'or' after math.tointeger")
    if b.ty == "unknown" then return { code = "", ty = "unknown" } end
    local t = T.promote("int64", b.ty)
    local ct = T.concrete(t)
    return { code = ("(%s ? %s : %s)"):format(a.maybe, cast({ code = a.raw, ty = "int64" }, ct), cast(b, ct)), ty = t }
  end
  a = self:rvalue(a, line)
  local b = self:rvalue(self:expr(e.b), line)
  if a.ty == "unknown" or b.ty == "unknown" then return { code = "", ty = "unknown" } end
  if type(a.ty) == "table" or type(b.ty) == "table" then
    self:fail(line, "'%s' of an array: arrays are not values of a kernel's expressions", e.op)
  end
  if a.ty ~= "bool" then
    -- a number is true: `a and b` is b, `a or b` is a
    return e.op == "and" and b or a
  end
  if b.ty == "bool" then
    return { code = ("(%s %s %s)"):format(a.code, e.op == "and" and "&&" or "||", b.code), ty = "bool" }
  end
  self:fail(line, "'%s' of a boolean and %s would give either type: a kernel's values have "
    .. "one type; write 'c and a or b' (a a number) or an if statement", e.op, T.describe(b.ty))
end

function C:unop(e)
  local line = e.line
  if e.op == "#" then
    local a = self:expr(e.a)
    if a.host ~= nil or type(a.ty) ~= "table" then
      self:fail(line, "'#' of %s: in a kernel '#' is the length of an array's first axis",
        a.host ~= nil and ("'" .. (a.name or "?") .. "'") or T.describe(a.ty))
    end
    return self:array_dim(a, 1, line)
  end
  local a = self:expr(e.a)
  if e.op == "not" and (a.str ~= nil or a.maybe) then
    return { code = ("(!%s)"):format(self:truth(a, line)), ty = "bool" }
  end
  a = self:rvalue(a, line)
  if e.op == "not" then
    if a.ty == "unknown" then return { code = "", ty = "bool" } end
    if a.ty == "bool" then return { code = "(!" .. a.code .. ")", ty = "bool" } end
    return { code = ("((void)(%s), false)"):format(a.code), ty = "bool" }
  end
  a = self:number(a, line, ("'%s'"):format(e.op))
  if a.ty == "unknown" then return a end
  local ct = T.concrete(a.ty)
  if e.op == "-" then
    if FLOAT[a.ty] then return { code = "(-" .. cast(a, ct) .. ")", ty = a.ty } end
    return { code = ("lcj_neg<%s>(%s)"):format(CTYPE[ct], cast(a, ct)), ty = a.ty }
  end
  -- "~": bitwise not
  if not INT[a.ty] then
    self:fail(line, "'~' of %s: bitwise operators take integers (math.floor(x) makes one)", T.describe(a.ty))
  end
  return { code = ("(%s)(~%s)"):format(CTYPE[ct], cast(a, ct)), ty = a.ty }
end

-- the size of axis k (1-based, a Lua integer or a C expression) of array value a
-- the failure of asking a dynamic shared array its size, which only the launch knows
function C:dynamic_size(line)
  self:fail(line, "the size of dynamic shared memory (K.shared.array(0, dtype)) is the launch's "
    .. "'shared =' bytes, which the kernel does not know: pass the length as an argument")
end

function C:array_dim(a, k, line)
  local ty = a.ty
  if ty.dynamic then self:dynamic_size(line) end
  if ty.dims then
    if type(k) ~= "number" then
      self:fail(line, "the shape of a shared or local array is read with a constant axis")
    end
    return { code = int_literal(ty.dims[k] or 1), ty = "int64" }
  end
  if type(k) == "number" then
    if k < 1 or k > ty.ndim then
      self:fail(line, "axis %d of a %d-d array: axes count from 1 to %d", k, ty.ndim, ty.ndim)
    end
    return { code = ("%s.shape[%d]"):format(a.code, k - 1), ty = "int64" }
  end
  return { code = ("%s.shape[(%s) - 1]"):format(a.code, k), ty = "int64" }
end

-- the indices of x[i] or x[{i, j}] as C expressions (0-based), checked
function C:indices(arr, keynode, line)
  local ty = arr.ty
  local items
  if keynode.tag == "Table" then
    items = {}
    for _, it in ipairs(keynode.items) do
      if it.key then self:fail(line, "an index {i, j} has no keys") end
      items[#items + 1] = it.value
    end
  else
    items = { keynode }
  end
  if #items ~= ty.ndim then
    self:fail(line, "%s is indexed with %d ind%s; it takes %d (%s)", T.describe(ty), #items,
      #items == 1 and "ex" or "ices", ty.ndim, ty.ndim == 1 and "x[i]" or "x[{i, j}]")
  end
  local out = {}
  for k, node in ipairs(items) do
    local iv = self:rvalue(self:expr(node), line)
    if iv.ty ~= "unknown" and not INT[iv.ty] then
      self:fail(line, "an index is %s: indices are integers (// divides to one, math.floor makes one)",
        T.describe(iv.ty))
    end
    local code
    if node.tag == "Number" and math.type(node.value) == "integer" then
      code = tostring(node.value - 1)
    elseif self.unit.boundscheck and not ty.dynamic then
      local n = ty.dims and int_literal(ty.dims[k]) or ("%s.shape[%d]"):format(arr.code, k - 1)
      code = ('lcj_ix((long long)(%s), %s, "%s", "%s:%d")'):format(iv.code, n, arr.name or "?", self.chunk_c, line)
    else
      code = ("(long long)(%s) - 1"):format(iv.code)
    end
    out[k] = code
  end
  return out
end

-- the C lvalue of an element of array value arr
function C:element(arr, keynode, line)
  local idx = self:indices(arr, keynode, line)
  local ty = arr.ty
  if ty.dims then
    local s = arr.code
    for _, i in ipairs(idx) do s = s .. "[" .. i .. "]" end
    return s
  end
  if ty.contig then
    -- C order: the strides follow from the shape (Horner's rule)
    local flat = "(" .. idx[1] .. ")"
    for k = 2, #idx do flat = ("(%s * %s.shape[%d] + (%s))"):format(flat, arr.code, k - 1, idx[k]) end
    return ("%s.data[%s]"):format(arr.code, flat)
  end
  return ("%s(%s)"):format(arr.code, table.concat(idx, ", "))
end

function C:index(e)
  local line = e.line
  local obj = self:expr(e.obj)
  if obj.host ~= nil then
    -- a field of a host table (K.grid, math.pi, an upvalue's field)
    local key = e.key
    if key.tag ~= "String" and key.tag ~= "Number" then
      self:fail(line, "'%s' is indexed by a value known only on the GPU: a host table's fields are read at compile time", obj.name)
    end
    -- a field named before in this walk, of the same host value (so of
    -- the same name): the value made then, its checks passed
    local byname = key.tag == "String" and self.fields[obj]
    local fv = byname and byname[key.value]
    if fv then return fv end
    local h = obj.host
    -- coroutine.yield(...) and the like: say why, not "pass it as an argument"
    if h == coroutine then self:fail(line, "coroutines are not in the kernel subset") end
    -- only the luacuda tables are read at compile time: another table's
    -- contents could change between launches
    if not self.unit.static_table(h) then self:rvalue(obj, line) end
    local dim = self.unit.DIM3[h]
    if dim then
      fv = dim(key.value, line, self)
    else
      local v = rawget(h, key.value)
      local name = ("%s.%s"):format(obj.name, tostring(key.value))
      if v == nil then self:fail(line, "'%s' is nil: no such field", name) end
      fv = host_value(v, name)
    end
    if key.tag == "String" then
      if not byname then
        byname = {}
        self.fields[obj] = byname
      end
      byname[key.value] = fv
    end
    return fv
  end
  if type(obj.ty) ~= "table" then
    if obj.ty == "unknown" then return obj end
    self:fail(line, "%s is indexed: only arrays are", T.describe(obj.ty))
  end
  if e.dot then
    local f = e.key.value
    if f == "shape" then return { shape_of = obj, ty = "shape" } end
    if f == "size" then
      if obj.ty.dynamic then self:dynamic_size(line) end
      if obj.ty.dims then
        local n = 1
        for _, d in ipairs(obj.ty.dims) do n = n * d end
        return { code = int_literal(n), ty = "int64" }
      end
      return { code = obj.code .. ".size()", ty = "int64" }
    end
    if f == "ndim" then return { code = tostring(obj.ty.ndim), ty = "wint" } end
    self:fail(line, "an array in a kernel has the fields shape, size and ndim, not '%s'", f)
  end
  local code = self:element(obj, e.key, line)
  local et = elem_type(obj.ty.dtype)
  -- a half element is read as a float (the half types' own operators are
  -- ambiguous with a float operand)
  if et ~= obj.ty.dtype then code = ("((float)%s)"):format(code) end
  return { code = code, ty = et }
end

-- The value of an operation, an index, a parenthesis or a math call that
-- read a local is kept (self.memov, shared by the walks) with the locals it
-- read and their types then (self.memo), and given again while they have
-- those types: the next walk does not translate it again. (One that read
-- none, math.pi or 2 * 3, is cheaper made again than kept.) Not kept where
-- the walk moved on (self.impure: a call but of vocab.PURE's, a temporary,
-- a line emitted), whose text depends on where it is. While kept
-- expressions are walked (self.depth of them), the locals read are pairs
-- (variable, its type or false) on one stack, self.rd up to self.nrd: an
-- expression's are those above the height at its start. Its list of them
-- is the one of the last expression kept inside it when that one's covers
-- the same pairs (a parenthesis, a call of one argument): fewer tables.
local KEPT = { Binop = true, Unop = true, Index = true, Paren = true, Call = true }
local mathtype, unpack = math.type, table.unpack

-- literal x's value of type ty, its text made by text(x) at its first use
-- and kept in cache (C:expr's integers, or floats)
local function literal(cache, x, ty, text)
  local val = cache[x]
  if not val then
    val = { code = text(x), ty = ty }
    cache[x] = val
  end
  return val
end

function C:expr(e)
  local tag = e.tag
  if tag == "Number" then
    -- a literal's value, made once a translation; floats in a table of
    -- their own (1 and 1.0 are one key), but for 0.0 and -0.0 (one key
    -- too) and NaN (no key)
    local x = e.value
    if mathtype(x) == "integer" then return literal(self.ints, x, "wint", int_literal) end
    if x == 0 or x ~= x then return { code = float_literal(x), ty = "wfloat" } end
    return literal(self.floats, x, "wfloat", float_literal)
  elseif tag == "Name" then
    local name = e.name
    local v = self.scope[name]
    if v then
      local ty = v.ty
      local seen = self.seen
      if seen[v] == nil then seen[v] = ty or false end
      if self.depth > 0 then
        local n, rd = self.nrd, self.rd
        rd[n + 1], rd[n + 2] = v, ty or false
        self.nrd = n + 2
      end
      -- a local's value, made again only when its type changed
      local val = v.val
      if val and val.ty == (v.array or ty or "unknown") then return val end
      if v.array then val = { code = v.cname, ty = v.array, name = v.name }
      else val = { code = v.cname, ty = ty or "unknown" } end
      v.val = val
      return val
    end
    -- a host name's value: the same for the whole walk
    local hv = self.hostvals[name]
    if hv then return hv end
    hv = host_value(self.unit.free(self, name, e.line), name)
    self.hostvals[name] = hv
    return hv
  end
  if not KEPT[tag] then return self:expr_now(e) end
  local memo = self.memo
  local m = memo[e]
  if m then
    local n, same = #m, true
    for i = 1, n, 2 do
      if (m[i].ty or false) ~= m[i + 1] then same = false break end
    end
    if same then
      local seen = self.seen
      for i = 1, n, 2 do
        if seen[m[i]] == nil then seen[m[i]] = m[i + 1] end
      end
      if self.depth > 0 then
        local k, rd = self.nrd, self.rd
        for i = 1, n do rd[k + i] = m[i] end
        self.nrd = k + n
        self.lastlist, self.laststart = m, k
      end
      return self.memov[e]
    end
  end
  local impure, start, depth = self.impure, self.nrd, self.depth
  self.depth, self.lastlist = depth + 1, nil
  local val = self:expr_now(e)
  self.depth = depth
  local top = self.nrd
  -- (one that read no local is made again where needed: it is never stale)
  if self.impure == impure and top > start then
    local list = self.lastlist
    if not (list and self.laststart == start and #list == top - start) then
      list = { unpack(self.rd, start + 1, top) }     -- (made at its size at once)
    end
    memo[e], self.memov[e] = list, val
    self.lastlist, self.laststart = list, start
  end
  if depth == 0 then self.nrd = start end
  return val
end

-- the value of expression e but for a number or a name (C:expr's)
function C:expr_now(e)
  local tag = e.tag
  if tag == "Binop" then return self:binop(e)
  elseif tag == "True" or tag == "False" then
    return { code = tag == "True" and "true" or "false", ty = "bool" }
  elseif tag == "Paren" then
    local v = self:expr(e.e)
    if v.multi then v = v.multi[1] end
    return v
  elseif tag == "Unop" then return self:unop(e)
  elseif tag == "Index" then
    local obj = e.obj
    -- x.shape[k]
    if obj.tag == "Index" and obj.dot and obj.key.value == "shape" then
      local o = self:expr(obj.obj)
      if o.host == nil and type(o.ty) == "table" then
        if e.key.tag == "Number" then return self:array_dim(o, e.key.value, e.line) end
        local k = self:rvalue(self:expr(e.key), e.line)
        if not INT[k.ty] and k.ty ~= "unknown" then self:fail(e.line, "an axis is an integer") end
        return self:array_dim(o, k.code, e.line)
      end
    end
    local v = self:index(e)
    if v.ty == "shape" then
      self:fail(e.line, "x.shape is read as x.shape[k] in a kernel")
    end
    return v
  elseif tag == "Call" then
    local v = self:call(e)
    return v
  elseif tag == "String" then
    self:fail(e.line, "strings are not in the kernel subset (but for a dtype name and print's text)")
  elseif tag == "Nil" then
    self:fail(e.line, "nil is not a kernel value: give the local a number or a boolean")
  elseif tag == "Vararg" then
    self:fail(e.line, "varargs (...) are not in the kernel subset: name each parameter")
  elseif tag == "Function" then
    self:fail(e.line, "closures cannot be created in a kernel: define the function outside it "
      .. "(a function the kernel calls becomes a device function)")
  elseif tag == "Table" then
    self:fail(e.line, "table constructors are not in the kernel subset, but for an index {i, j} "
      .. "or a shape: a per-thread array is K.local_array(n, dtype), a block's K.shared.array(n, dtype)")
  elseif tag == "Method" then
    self:fail(e.line, "method calls (':%s') are not in the kernel subset: an array has the fields "
      .. "shape, size and ndim, and math functions are called as math.f(x)", e.name)
  end
  self:fail(e.line, "this is not in the kernel subset")
end

-- the arguments of a call as values (a multi-valued last one expanded)
function C:args(nodes)
  local out = {}
  for i = 1, #nodes do
    local v = self:expr(nodes[i])
    if v.multi then
      if i == #nodes then
        for _, m in ipairs(v.multi) do out[#out + 1] = m end
      else
        out[#out + 1] = v.multi[1]
      end
    else
      out[#out + 1] = v
    end
  end
  return out
end

local HOST_ADVICE = {
  [pairs] = "'pairs' is not in the kernel subset: loop with a numeric for over 1, #x",
  [ipairs] = "'ipairs' is not in the kernel subset: loop with a numeric for over 1, #x",
  [error] = "'error' is not in the kernel subset: a kernel cannot raise; write a flag into an array",
  [assert] = "'assert' is not in the kernel subset: a kernel cannot raise; write a flag into an array",
  [setmetatable] = "metatables are not in the kernel subset",
  [getmetatable] = "metatables are not in the kernel subset",
  [tostring] = "strings are not in the kernel subset: print(x) prints a number",
  [type] = "'type' is not in the kernel subset: a kernel's types are known when it is compiled",
}
for _, f in pairs(coroutine) do HOST_ADVICE[f] = "coroutines are not in the kernel subset" end

function C:call(e)
  local line = e.line
  local fnv = self:expr(e.fn)
  -- a math function's text is that of its arguments: it can be kept
  if fnv.host == nil or not PURE[fnv.host] then self.impure = self.impure + 1 end
  if fnv.host == nil then
    self:fail(line, "%s is called: only the vocabulary, math functions, print and Lua functions are",
      T.describe(fnv.ty))
  end
  local f = fnv.host
  local handler = self.unit.VOCAB[f]
  if handler then return handler(self, e, fnv.name) end
  if HOST_ADVICE[f] then self:fail(line, "%s", HOST_ADVICE[f]) end
  f = self.unit.unwrap(f)
  if type(f) == "function" then
    if debug.getinfo(f, "S").what == "C" then
      self:fail(line, "'%s' is a C function, which a kernel cannot call", fnv.name)
    end
    return self.unit.device_call(self, f, fnv.name, self:args(e.args), line)
  end
  self:fail(line, "'%s' is %s, not a function a kernel can call", fnv.name, type(f))
end

-- ---- statements ---------------------------------------------------------------

function C:block(stats)
  self:push()
  for i = 1, #stats do self:stat(stats[i]) end
  self:pop()
end

-- labels visible in a block (Lua: a goto sees the labels of its enclosing blocks)
function C:collect_labels(stats)
  local labels = {}
  for i = 1, #stats do
    local s = stats[i]
    if s.tag == "Label" then
      if labels[s.name] then self:fail(s.line, "label '%s' already defined", s.name) end
      self.labelmap[s] = self.labelmap[s] or ("lcj_" .. s.name .. "_" .. s.line)
      labels[s.name] = self.labelmap[s]
    end
  end
  return labels
end

function C:body(stats)
  self.labelstack[#self.labelstack + 1] = self:collect_labels(stats)
  self:block(stats)
  self.labelstack[#self.labelstack] = nil
end

-- store value val into target node tg (a Name or an Index)
function C:store(tg, val, line)
  val = self:rvalue(val, line)
  if tg.tag == "Name" then
    local v = self.scope[tg.name]
    if not v then
      self:fail(line, "assignment to the global '%s': a kernel has no globals; declare it local", tg.name)
    end
    if v.param_array or v.array then
      self:fail(line, "the array '%s' cannot be assigned: its elements can (%s[i] = v)", v.name, v.name)
    end
    if v.loopvar then
      self:fail(line, "the loop variable '%s' is assigned: copy it into a local of its own", v.name)
    end
    self:assign_type(v, val.ty, line)
    if self.mode == "emit" then self:emit(v.cname .. " = " .. cast(val, CONCRETE[v.ty] or v.ty) .. ";") end
    return
  end
  local obj = self:expr(tg.obj)
  if obj.host ~= nil then
    self:fail(line, "'%s' is a host value: a kernel cannot change it; pass an array and write into it", obj.name)
  end
  if type(obj.ty) ~= "table" then
    if obj.ty == "unknown" then return end
    self:fail(line, "%s is indexed: only arrays are", T.describe(obj.ty))
  end
  if tg.dot then self:fail(line, "an array's fields cannot be assigned") end
  local lv = self:element(obj, tg.key, line)
  local et = elem_type(obj.ty.dtype)
  if val.ty == "unknown" then return end
  if type(val.ty) == "table" then self:fail(line, "an array cannot be stored in an array's element") end
  if et == "bool" and val.ty ~= "bool" or et ~= "bool" and val.ty == "bool" then
    self:fail(line, "%s is stored into an element of %s", T.describe(val.ty), T.describe(obj.ty))
  end
  if INT[et] and FLOAT[val.ty] then
    self:fail(line, "a float is stored into an element of %s: make it an integer first (math.floor(x))",
      T.describe(obj.ty))
  end
  local code = cast(val, et)
  if et ~= obj.ty.dtype then code = ("(%s)(%s)"):format(CTYPE[obj.ty.dtype], code) end
  self:emit(lv .. " = " .. code .. ";")
end

-- the values of an expression list, n of them at least when the last one
-- gives several (a call)
function C:values(exprs, n)
  local vals = {}
  for i = 1, #exprs do
    local ex = exprs[i]
    local v = self:expr(ex)
    if v.multi then
      if v.struct and i == #exprs then
        -- a device function's values: its call once, into a temporary
        local t = ("lcj_t%d"):format(self:tmp())
        if self.mode == "emit" then
          self.decls[#self.decls + 1] = ("%s %s;"):format(v.struct, t)
          self:emit(("%s = %s;"):format(t, v.call))
        end
        for k, m in ipairs(v.multi) do vals[#vals + 1] = { code = ("%s.v%d"):format(t, k), ty = m.ty } end
      elseif i == #exprs then
        for _, m in ipairs(v.multi) do vals[#vals + 1] = m end
      else
        vals[#vals + 1] = v.multi[1]
      end
    elseif v.ty == "void" then
      self:fail(ex.line, "this call gives no value")
    else
      vals[#vals + 1] = v
    end
  end
  return vals
end

function C:stat_local(s)
  -- K.shared.array / K.local_array: an array of the block or the thread
  if #s.names == 1 and #s.exprs == 1 and s.exprs[1].tag == "Call" then
    local call = s.exprs[1]
    local fnv = self:expr(call.fn)
    if fnv.host ~= nil and self.unit.ARRAY_MAKERS[fnv.host] then
      local ty = self.unit.ARRAY_MAKERS[fnv.host](self, call)
      local v = self:declare(s, 1, s.names[1], s.line)
      v.array = ty
      if self.mode == "emit" and ty.dynamic then
        self.decls[#self.decls + 1] = ("DYNAMIC_SHARED(%s, %s);"):format(CTYPE[ty.dtype], v.cname)
      elseif self.mode == "emit" then
        local dims = {}
        for k, d in ipairs(ty.dims) do dims[k] = "[" .. d .. "]" end
        local decl = ("%s%s %s%s;"):format(ty.space == "shared" and "__shared__ " or "",
          CTYPE[ty.dtype], v.cname, table.concat(dims))
        self.decls[#self.decls + 1] = decl
      end
      return
    end
  end
  if s.attribs then
    for i, a in pairs(s.attribs) do
      if a ~= "const" then self:fail(s.line, "'<%s>' is not in the kernel subset (local %s)", a, s.names[i]) end
    end
  end
  local vals = self:values(s.exprs)
  local tmps = {}
  local multi = #s.names > 1 and #vals > 1
  if multi then self:emit("{") end
  if multi and self.mode == "emit" then
    -- evaluate every value before any local is declared (they may read the old ones)
    for i = 1, math.min(#vals, #s.names) do
      local val = self:rvalue(vals[i], s.line)
      if type(val.ty) ~= "table" then
        local t = ("lcj_t%d"):format(self:tmp())
        self:emit(("%s %s = %s;"):format(CTYPE[T.concrete(val.ty)], t, val.code))
        tmps[i] = { code = t, ty = val.ty }
      end
    end
  end
  for i, name in ipairs(s.names) do
    local val = tmps[i] or vals[i]
    if val then val = self:rvalue(val, s.line) end
    local v = self:declare(s, i, name, s.line)
    if val and type(val.ty) == "table" then
      -- an alias of an array parameter
      if val.ty.dims then
        self:fail(s.line, "a shared or local array cannot be given another name")
      end
      v.array = val.ty
      v.param_array = true
      if self.mode == "emit" then
        self.decls[#self.decls + 1] = ("Array<%s, %d> %s;"):format(CTYPE[val.ty.dtype], val.ty.ndim, v.cname)
        self:emit(("%s = %s;"):format(v.cname, val.code))
      end
    elseif val then
      self:assign_type(v, val.ty, s.line)
      if self.mode == "emit" then self:emit(("%s = %s;"):format(v.cname, cast(val, T.concrete(v.ty)))) end
    end
  end
  if multi then self:emit("}") end
end

function C:tmp()
  self.impure = self.impure + 1
  self.ntmp = self.ntmp + 1
  return self.ntmp
end

function C:stat_set(s)
  if #s.targets == 1 then
    local vals = self:values(s.exprs)
    if not vals[1] then self:fail(s.line, "nil is not a kernel value") end
    return self:store(s.targets[1], vals[1], s.line)
  end
  -- a, b = b, a: every value first, then the stores, in a block of their own
  -- (a goto may not cross the temporaries' initialisation)
  self:emit("{")
  local vals = self:values(s.exprs)
  local tmps = {}
  for i = 1, #s.targets do
    local val = vals[i]
    if not val then self:fail(s.line, "nil is not a kernel value: give every target a value") end
    val = self:rvalue(val, s.line)
    if self.mode == "emit" and type(val.ty) ~= "table" then
      local t = ("lcj_t%d"):format(self:tmp())
      self:emit(("%s %s = %s;"):format(CTYPE[T.concrete(val.ty)], t, val.code))
      tmps[i] = { code = t, ty = val.ty }
    else
      tmps[i] = val
    end
  end
  for i, tg in ipairs(s.targets) do self:store(tg, tmps[i], s.line) end
  self:emit("}")
end

-- whether integer value val plus step (> 0) is at most int64's maximum:
-- val a literal, or of a type of 32 bits or fewer
local function below_max(val, step)
  if val.ty == "wint" then
    local n = math.tointeger(tonumber((val.code:gsub("LL$", ""))))
    return n ~= nil and n <= math.maxinteger - step
  end
  return INT[val.ty] and T.bits(val.ty) <= 32 and step <= math.maxinteger - 0xffffffff
end

function C:stat_fornum(s)
  local line = s.line
  local a = self:number(self:expr(s.start), line, "a for loop's start")
  local b = self:number(self:expr(s.limit), line, "a for loop's limit")
  local c = s.step and self:number(self:expr(s.step), line, "a for loop's step") or { code = "1", ty = "wint" }
  local step_const = s.step == nil and 1 or (s.step.tag == "Number" and s.step.value)
    or (s.step.tag == "Unop" and s.step.op == "-" and s.step.a.tag == "Number" and -s.step.a.value)
  if step_const == 0 then self:fail(line, "'for' step is zero") end
  local int_loop = INT[a.ty] and INT[c.ty]
  local vt
  if int_loop then vt = "int64"
  else
    vt = T.concrete(T.float_of(T.promote(T.promote(a.ty, b.ty), c.ty)))
    if vt == "unknown" then vt = "float64" end
  end
  self:push()
  local v = self:declare(s, 1, s.var, line)
  if v.ty ~= vt then v.ty, self.changed = vt, true end
  if self.seen[v] == nil then self.seen[v] = vt end
  v.loopvar = true
  local ctv = CTYPE[vt]
  local n = self:tmp()
  local A, B, S = "lcj_a" .. n, "lcj_b" .. n, "lcj_s" .. n
  self:emit("{")
  if int_loop then
    local lim
    if FLOAT[b.ty] then
      local fl = ("lcj_f2i(floor((double)(%s)))"):format(b.code)
      local ce = ("lcj_f2i(ceil((double)(%s)))"):format(b.code)
      lim = type(step_const) == "number" and (step_const > 0 and fl or ce)
        or ("(%s > 0 ? %s : %s)"):format(S, fl, ce)
    else
      lim = cast(b, "int64")
    end
    self:emit(("  long long %s = %s, %s = %s;"):format(A, cast(a, "int64"), S, cast(c, "int64")))
    self:emit(("  long long %s = %s;"):format(B, lim))
    local N = "lcj_n" .. n
    if type(step_const) == "number" and step_const > 0 and below_max(b, step_const) then
      -- the limit plus the step is an int64: the plain loop cannot wrap,
      -- so it runs the iterations Lua's count would
      self:emit(("  for (%s = %s; %s <= %s; %s += %s) {"):format(v.cname, A, v.cname, B, v.cname, S))
      self:loop_body(s.body)
      self:emit("  }")
      self:emit("}")
      return self:pop()
    end
    if type(step_const) == "number" and step_const > 0 then
      self:emit(("  if (%s <= %s) {"):format(A, B))
      self:emit(("    unsigned long long %s = ((unsigned long long)%s - (unsigned long long)%s) / %s;")
        :format(N, B, A, step_const == 1 and "1u" or ("(unsigned long long)" .. S)))
    elseif type(step_const) == "number" then
      self:emit(("  if (%s >= %s) {"):format(A, B))
      self:emit(("    unsigned long long %s = ((unsigned long long)%s - (unsigned long long)%s) / (0ull - (unsigned long long)%s);")
        :format(N, A, B, S))
    else
      self:emit(("  if (%s > 0 ? %s <= %s : (%s < 0 && %s >= %s)) {"):format(S, A, B, S, A, B))
      self:emit(("    unsigned long long %s = %s > 0 ? ((unsigned long long)%s - (unsigned long long)%s) / (unsigned long long)%s"
        .. " : ((unsigned long long)%s - (unsigned long long)%s) / (0ull - (unsigned long long)%s);")
        :format(N, S, B, A, S, A, B, S))
    end
    self:emit(("    for (%s = %s;; %s = (long long)((unsigned long long)%s + (unsigned long long)%s)) {")
      :format(v.cname, A, v.cname, v.cname, S))
    self:loop_body(s.body, ("if (%s-- == 0) break;"):format(N))
    self:emit("    }")
    self:emit("  }")
  else
    self:emit(("  %s %s = %s, %s = %s, %s = %s;"):format(ctv, A, cast(a, vt), B, cast(b, vt), S, cast(c, vt)))
    self:emit(("  for (%s = %s; %s > 0 ? %s <= %s : %s >= %s; %s += %s) {")
      :format(v.cname, A, S, v.cname, B, v.cname, B, v.cname, S))
    self:loop_body(s.body)
    self:emit("  }")
  end
  self:emit("}")
  self:pop()
end

-- a loop's body, then what ends each iteration (after the labels, so that
-- `goto continue` to a label at the body's end goes on with the loop)
function C:loop_body(stats, tail)
  local indent = self.indent
  self.indent = indent .. "      "
  self.loops = self.loops + 1
  self:body(stats)
  if tail then self:emit(tail) end
  self.loops = self.loops - 1
  self.indent = indent
end

function C:stat(s)
  local tag, line = s.tag, s.line
  if tag ~= "Label" then self:line_directive(line) end
  if tag == "Local" then return self:stat_local(s)
  elseif tag == "Set" then return self:stat_set(s)
  elseif tag == "Callstat" then
    local v = self:expr(s.call)
    if v.multi then v = v.multi[1] end
    if v.code and v.code ~= "" then self:emit(v.code .. ";") end
    return
  elseif tag == "If" then
    for i, cnd in ipairs(s.conds) do
      local c = self:truth(self:expr(cnd), cnd.line)
      self:emit((i == 1 and "if (%s) {" or "} else if (%s) {"):format(c))
      self:indented(s.blocks[i])
    end
    if s.else_ then
      self:emit("} else {")
      self:indented(s.else_)
    end
    self:emit("}")
  elseif tag == "While" then
    local c = self:truth(self:expr(s.cond), s.cond.line)
    self:emit(("while (%s) {"):format(c))
    self:loop_body(s.body)
    self:emit("}")
  elseif tag == "Repeat" then
    -- the condition sees the body's locals: it is walked in the body's scope
    self:emit("for (;;) {")
    local indent = self.indent
    self.indent = indent .. "  "
    self.loops = self.loops + 1
    self.labelstack[#self.labelstack + 1] = self:collect_labels(s.body)
    self:push()
    for _, st in ipairs(s.body) do self:stat(st) end
    local c = self:truth(self:expr(s.cond), s.cond.line)
    self:emit(("if (%s) break;"):format(c))
    self:pop()
    self.labelstack[#self.labelstack] = nil
    self.loops = self.loops - 1
    self.indent = indent
    self:emit("}")
  elseif tag == "Fornum" then return self:stat_fornum(s)
  elseif tag == "Do" then
    self:emit("{")
    self:indented(s.body)
    self:emit("}")
  elseif tag == "Break" then
    if self.loops == 0 then self:fail(line, "break outside a loop") end
    self:emit("break;")
  elseif tag == "Goto" then
    for k = #self.labelstack, 1, -1 do
      local l = self.labelstack[k][s.label]
      if l then return self:emit(("goto %s;"):format(l)) end
    end
    self:fail(line, "no visible label '%s' for goto", s.label)
  elseif tag == "Label" then
    local l = self.labelmap[s] or ("lcj_" .. s.name .. "_" .. s.line)
    if self.mode == "emit" then self.out[#self.out + 1] = l .. ": ;" end
  elseif tag == "Return" then return self:stat_return(s)
  elseif tag == "Forin" then
    self:fail(line, "'for ... in' (pairs, ipairs) is not in the kernel subset: use a numeric for over 1, #x")
  elseif tag == "Localfunction" then
    self:fail(line, "functions cannot be defined in a kernel: define '%s' outside it (a function the "
      .. "kernel calls becomes a device function)", s.name)
  else
    self:fail(line, "this statement is not in the kernel subset")
  end
end

function C:indented(stats)
  local indent = self.indent
  self.indent = indent .. "  "
  self:body(stats)
  self.indent = indent
end

function C:stat_return(s)
  if self.kernel then
    if #s.exprs > 0 then
      self:fail(s.line, "a kernel returns no values: write its results into an array")
    end
    self:emit("return;")
    return
  end
  local vals = self:values(s.exprs)
  local rt = self.rettypes
  if self.nret and #vals ~= self.nret then
    self:fail(s.line, "a device function returns %d value%s here and %d elsewhere: return the same number everywhere",
      #vals, #vals == 1 and "" or "s", self.nret)
  end
  self.nret = #vals
  for i, val in ipairs(vals) do
    val = self:rvalue(val, s.line)
    if type(val.ty) == "table" then self:fail(s.line, "a device function cannot return an array") end
    local j, why = T.join(rt[i], val.ty)
    if not j then self:fail(s.line, "the function returns %s as value %d (%s)", T.describe(val.ty), i, why) end
    if j ~= rt[i] then rt[i] = j; self.changed = true end
    if self.seen_ret[i] == nil then self.seen_ret[i] = j end
    vals[i] = val
  end
  if self.mode == "emit" then
    if #vals == 0 then return self:emit("return;") end
    if #vals == 1 then return self:emit(("return %s;"):format(cast(vals[1], T.concrete(rt[1])))) end
    local parts = {}
    for i, val in ipairs(vals) do parts[i] = cast(val, T.concrete(rt[i])) end
    self:emit(("return %s{%s};"):format(self.retstruct, table.concat(parts, ", ")))
  end
end

-- ---- functions ------------------------------------------------------------------

-- Translate the function info (from jit/init's source reader) for
-- argument types argtypes (dtype names or array types); kernel says
-- whether it is the __global__ one. Returns the C++ text and, for a
-- device function, its return types.
function M.function_source(unit, info, argtypes, kernel, cname)
  local ctx
  local function walk(mode, prev)
    ctx = setmetatable({
      unit = unit, chunk = info.chunk, chunk_c = info.chunk:gsub('[\\"]', "_"),
      mode = mode, out = {}, decls = {}, indent = "  ", names = prev and prev.names or {},
      varmap = prev and prev.varmap or {}, vars = prev and prev.vars or {}, labelmap = prev and prev.labelmap or {},
      labelstack = {}, loops = 0, ntmp = 0, kernel = kernel, info = info,
      rettypes = prev and prev.rettypes or {}, retstruct = cname .. "_ret", changed = false,
      memo = prev and prev.memo or {}, impure = 0, seen = {}, seen_ret = {}, hostvals = {}, fields = {},
      memov = prev and prev.memov or {}, rd = {}, nrd = 0, depth = 0,
      ints = prev and prev.ints or {}, floats = prev and prev.floats or {},
      directives = prev and prev.directives or {},
    }, C)
    for name, f in pairs(C) do rawset(ctx, name, f) end   -- its methods without a metatable lookup
    ctx.scope = {}
    ctx:push()
    local params = {}
    for i, pname in ipairs(info.ast.params) do
      local v = ctx:declare(info.ast, i, pname, info.ast.line)
      local t = argtypes[i]
      if type(t) == "table" then
        v.array, v.param_array = t, true
        params[i] = ("Array<%s, %d> %s"):format(CTYPE[t.dtype], t.ndim, v.cname)
      else
        v.ty, v.param = t, true
        params[i] = ("%s %s"):format(CTYPE[t], v.cname)
      end
    end
    ctx.params = params
    ctx:body(info.ast.body)
    return ctx
  end
  -- Every walk writes the text. A walk's text is final when no type
  -- changed in it, or when every local (and return value) had its final
  -- type already where the text first used it: then the next walk would
  -- see the same types everywhere and write the same text. (A type only
  -- widens, so the first use in a walk is the one to check.) Most kernels
  -- give their locals a value before reading them: one walk.
  local function final(c)
    if not c.changed then return true end
    for v, t in pairs(c.seen) do
      if (v.ty or false) ~= t then return false end
    end
    for i, t in pairs(c.seen_ret) do
      if c.rettypes[i] ~= t then return false end
    end
    return true
  end
  local c = walk("emit")
  for _ = 1, 50 do
    if final(c) then break end
    c = walk("emit", c)
  end
  -- every local has a type by now, or was never given one
  local decls = {}
  for _, v in ipairs(c.vars) do
    if not v.param and not v.array then
      if v.ty == nil or v.ty == "unknown" then
        c:fail(v.line, "the local '%s' is never given a value", v.name)
      end
      decls[#decls + 1] = ("  %s %s;"):format(CTYPE[T.concrete(v.ty)], v.cname)
    end
  end
  for _, d in ipairs(c.decls) do decls[#decls + 1] = "  " .. d end
  local head
  local rets = {}
  for i = 1, c.nret or 0 do rets[i] = T.concrete(c.rettypes[i]) end
  local pre = ""
  if kernel then
    head = ('extern "C" __global__ void %s(%s) {'):format(cname, table.concat(c.params, ", "))
  else
    local rt = "void"
    if #rets == 1 then rt = CTYPE[rets[1]]
    elseif #rets > 1 then
      local fields = {}
      for i, t in ipairs(rets) do fields[i] = ("%s v%d;"):format(CTYPE[t], i) end
      pre = ("struct %s { %s };\n"):format(c.retstruct, table.concat(fields, " "))
      rt = c.retstruct
    end
    head = ("__device__ %s %s(%s) {"):format(rt, cname, table.concat(c.params, ", "))
  end
  local text = pre .. ('#line %d "%s"\n'):format(info.ast.line, c.chunk_c) .. head .. "\n"
    .. table.concat(decls, "\n") .. (#decls > 0 and "\n" or "")
    .. table.concat(c.out, "\n") .. "\n}\n"
  return text, rets
end

M.RUNTIME = RUNTIME

return M
