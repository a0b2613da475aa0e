-- record: the parts of record dtypes that are clearer in Lua: the C
-- declaration of a record's struct, and printing record values.
local M = {}

-- The C type of a record member of each builtin dtype, from the dtype
-- table (src/base/dtype.h; the prelude declares the fixed-width names on
-- NVRTC too). A float no C type holds on every backend (float16) is a
-- member of its bits' integer type.
local DTYPES = require("luacuda.core")._dtypes()

local function is_identifier(s)
  return type(s) == "string" and s:match("^[%a_][%w_]*$") ~= nil and #s <= 100
end

-- Append the declaration of rec as struct `name` to out, nested structs
-- first. Every member is at the offset luacuda computed: padding is
-- spelt out as members (every member type is then at a multiple of its
-- natural alignment), the struct's alignment is explicit, and a
-- static_assert on size and alignment makes a compiler that disagrees fail
-- (NVRTC has no offsetof to check each member with).
local function declare(rec, name, out)
  local members, offset, pad = {}, 0, 0
  for _, f in ipairs(rec.fields) do
    if f.offset > offset then
      members[#members + 1] = ("  unsigned char __lc_pad%d[%d];"):format(pad, f.offset - offset)
      pad = pad + 1
    end
    local ctype, comment = nil, ""
    if type(f.dtype) ~= "string" then
      ctype = name .. "_" .. f.name
      declare(f.dtype, ctype, out)
    else
      local info = DTYPES[f.dtype]
      ctype = info.member
      if info.kind == "f" and not ctype:find("^float") and ctype ~= "double" then
        comment = ("  /* %s: its bits */"):format(f.dtype)
      end
    end
    local dims = {}
    for i, d in ipairs(f.shape) do dims[i] = ("[%d]"):format(d) end
    members[#members + 1] = ("  %s %s%s;%s"):format(ctype, f.name, table.concat(dims), comment)
    offset = f.offset + f.count * f.itemsize
  end
  if rec.size > offset then
    members[#members + 1] = ("  unsigned char __lc_pad%d[%d];"):format(pad, rec.size - offset)
  end
  local head = rec.packed and ("struct __attribute__((packed)) %s {"):format(name)
                          or ("struct alignas(%d) %s {"):format(rec.align, name)
  out[#out + 1] = head
  for _, m in ipairs(members) do out[#out + 1] = m end
  out[#out + 1] = "};"
  out[#out + 1] = ("static_assert(sizeof(%s) == %d && alignof(%s) == %d, "
                   .. "\"luacuda: the layout of struct %s\");"):format(name, rec.size, name,
                   rec.align, name)
end

-- rec:c_declaration(name): C/C++ source declaring struct `name` with the
-- record's layout, for kernels that take `name *`.
function M.c_declaration(rec, name)
  if not is_identifier(name) then
    error(("luacuda.c_declaration: the struct name must be a C identifier, got %s")
          :format(type(name) == "string" and ("'" .. name .. "'") or type(name)), 2)
  end
  local out = {}
  declare(rec, name, out)
  return table.concat(out, "\n") .. "\n"
end

return M
