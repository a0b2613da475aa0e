-- jit/types: the scalar types of a Lua kernel and how they combine.
-- A scalar type is a dtype name ("int32", "float64", "bool"), or a weak
-- literal type, "wint" or "wfloat" (NEP 50, as array math has it: a
-- literal takes the type of what it meets, and is int64 or float64 alone),
-- or "unknown" (a local whose assignments are not all typed yet, while
-- types are inferred). Arrays are tables {array = true, dtype =, ndim =}.

local M = {}

M.CTYPE = {
  bool = "bool", int8 = "int8_t", int16 = "int16_t", int32 = "int32_t", int64 = "int64_t",
  uint8 = "uint8_t", uint16 = "uint16_t", uint32 = "uint32_t", uint64 = "uint64_t",
  float16 = "__half", bfloat16 = "__nv_bfloat16", float32 = "float", float64 = "double",
}

-- width and kind of each numeric dtype
local INFO = {
  int8 = { "s", 8 }, int16 = { "s", 16 }, int32 = { "s", 32 }, int64 = { "s", 64 },
  uint8 = { "u", 8 }, uint16 = { "u", 16 }, uint32 = { "u", 32 }, uint64 = { "u", 64 },
  float32 = { "f", 32 }, float64 = { "f", 64 },
}

-- the kinds as sets (the translator asks them for every operand)
local INT, FLOAT, SIGNED = { wint = true }, { wfloat = true }, { wint = true }
for t, info in pairs(INFO) do
  if info[1] == "f" then FLOAT[t] = true else INT[t] = true end
  if info[1] == "s" then SIGNED[t] = true end
end

M.INT, M.FLOAT = INT, FLOAT
function M.is_int(t) return INT[t] == true end
function M.is_float(t) return FLOAT[t] == true end
function M.is_number(t) return INT[t] == true or FLOAT[t] == true end
function M.is_weak(t) return t == "wint" or t == "wfloat" end
function M.is_signed(t) return SIGNED[t] == true end
-- the width in bits of a numeric dtype
function M.bits(t) return INFO[t] and INFO[t][2] end

-- the type a weak type has alone
function M.concrete(t)
  if t == "wint" then return "int64" elseif t == "wfloat" then return "float64" end
  return t
end

-- NumPy's promotion of two numeric types, weak ones by NEP 50
local function promote_strong(a, b)
  if a == b then return a end
  local ka, wa = INFO[a][1], INFO[a][2]
  local kb, wb = INFO[b][1], INFO[b][2]
  if ka == "f" or kb == "f" then
    if ka == "f" and kb == "f" then return wa >= wb and a or b end
    local f, fw, iw = ka == "f" and a or b, ka == "f" and wa or wb, ka == "f" and wb or wa
    if fw == 64 or iw <= 16 then return f end
    return "float64"
  end
  if ka == kb then return wa >= wb and a or b end
  local sw, uw = ka == "s" and wa or wb, ka == "u" and wa or wb
  if sw > uw then return ka == "s" and a or b end
  if uw < 64 then return "int" .. (uw * 2) end
  return "float64"
end

-- the promotion of two numeric types; nil when either is not a number
local function promote(a, b)
  if a == "unknown" or b == "unknown" then return "unknown" end
  if not M.is_number(a) or not M.is_number(b) then return nil end
  local wa, wb = M.is_weak(a), M.is_weak(b)
  if wa and wb then return (a == "wfloat" or b == "wfloat") and "wfloat" or "wint" end
  if wa or wb then
    local weak, strong = wa and a or b, wa and b or a
    if weak == "wfloat" and M.is_int(strong) then return "float64" end
    return strong
  end
  return promote_strong(a, b)
end

-- promote's answers, by its two types (false for nil)
local PROMOTED = {}
function M.promote(a, b)
  local row = PROMOTED[a]
  if not row then
    if type(a) ~= "string" then return promote(a, b) end
    row = {}
    PROMOTED[a] = row
  end
  local r = row[b]
  if r == nil then
    if type(b) ~= "string" then return promote(a, b) end
    r = promote(a, b) or false
    row[b] = r
  end
  return r or nil
end

-- the float type an operation that always gives a float (/ and ^) gives
function M.float_of(t)
  if t == "unknown" then return t end
  if t == "wint" or t == "wfloat" then return "wfloat" end
  if M.is_float(t) then return t end
  return "float64"
end

-- the type of a local given everything assigned to it so far (nil at first);
-- nil and a message when they do not go together
function M.join(cur, t)
  if cur == nil or cur == "unknown" then return t end
  if t == "unknown" then return cur end
  if cur == t then return cur end
  if type(cur) == "table" or type(t) == "table" then return nil, "an array and another value" end
  if cur == "bool" or t == "bool" then return nil, "a boolean and a number" end
  return M.promote(cur, t)
end

-- an array type in a signature: "float32:2" (C-contiguous), "float32:2:A"
-- (any other layout, read through its strides)
function M.array_key(t)
  return ("%s:%d%s"):format(t.dtype, t.ndim, t.contig and "" or ":A")
end

function M.describe(t)
  if type(t) == "table" then
    return ("a %d-d %s array"):format(t.ndim, t.dtype)
  end
  if t == "wint" then return "an integer" elseif t == "wfloat" then return "a float" end
  if t == "bool" then return "a boolean" end
  return t
end

return M
