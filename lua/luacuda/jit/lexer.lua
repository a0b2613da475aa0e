-- jit/lexer: Lua 5.4 source text to tokens, as three columns (no table
-- per token): toks.kind[i], toks.value[i], toks.line[i]. A kind is
-- "name", "number", "string", "eof" or the keyword or symbol itself
-- ("local", "==", "..."). Numbers keep Lua's own reading (math.type
-- tells an integer from a float).

local M = {}

local KEYWORDS = {}
for w in ([[and break do else elseif end false for function goto if in local nil not or
  repeat return then true until while]]):gmatch("%a+") do KEYWORDS[w] = true end

-- the symbols: "..." is the only one of three bytes; the longest that
-- matches wins ("..." over ".." and ".")
-- (SYMBOL2 by the two bytes, first * 256 + second)
local SYMBOL2, SYMBOL1 = {}, {}
for _, s in ipairs({ "..", "==", "~=", "<=", ">=", "<<", ">>", "//", "::",
  "+", "-", "*", "/", "%", "^", "#", "&", "~", "|", "<", ">", "=", "(", ")", "{", "}",
  "[", "]", ";", ":", ",", "." }) do
  if #s == 2 then SYMBOL2[s:byte(1) * 256 + s:byte(2)] = s else SYMBOL1[s:byte()] = s end
end

-- the symbols of one byte that start no longer one (most of a kernel's)
local SIMPLE = {}
for b, sym in pairs(SYMBOL1) do SIMPLE[b] = sym end
for b2 in pairs(SYMBOL2) do SIMPLE[b2 // 256] = nil end
for _, c in ipairs({ "-", ".", "[" }) do SIMPLE[c:byte()] = nil end

-- the bytes a name starts with, those it goes on with, and digits
local WORD_START, WORD, DIGIT, BLANK = {}, {}, {}, {}
for _, b in ipairs({ 32, 9, 13, 12, 11 }) do BLANK[b] = true end   -- not \n: it counts lines
for b = 0, 255 do
  local c = string.char(b)
  WORD_START[b] = c:match("[%a_]") ~= nil
  WORD[b] = c:match("[%w_]") ~= nil
  DIGIT[b] = c:match("%d") ~= nil
end

-- the bytes of s as a table (one string.byte call per 64 KiB: a call of
-- a C function costs more than reading the table; table.move past the first)
local CHUNK = 65536
local function bytes_of(s)
  local n = #s
  local out = { string.byte(s, 1, n < CHUNK and n or CHUNK) }
  for i = CHUNK + 1, n, CHUNK do
    local part = { string.byte(s, i, i + CHUNK - 1) }
    table.move(part, 1, #part, i, out)
  end
  return out
end

local find, sub = string.find, string.sub

-- the end of the number at pos: hexadecimal (with a binary exponent), or
-- decimal (with a decimal one)
local function number_end(src, bytes, pos)
  local x = bytes[pos + 1]
  if bytes[pos] == 48 and (x == 120 or x == 88) then        -- 0x, 0X
    local _, e = find(src, "^0[xX][%x%.]*[pP][+-]?%d+", pos)
    if not e then _, e = find(src, "^0[xX][%x%.]*", pos) end
    return e
  end
  -- digits, one '.', digits; then an exponent if digits follow its e
  local e = pos
  while DIGIT[bytes[e]] do e = e + 1 end
  if bytes[e] == 46 then e = e + 1 end
  while DIGIT[bytes[e]] do e = e + 1 end
  local b = bytes[e]
  if b == 101 or b == 69 then                                   -- e, E
    local d = e + 1
    if bytes[d] == 43 or bytes[d] == 45 then d = d + 1 end      -- + -
    if DIGIT[bytes[d]] then
      e = d
      while DIGIT[bytes[e]] do e = e + 1 end
    end
  end
  return e - 1
end

-- Tokens of src; line numbers start at first_line. Raises
-- "chunk:line: cause" on text that is not Lua.
function M.tokens(src, chunk, first_line)
  local kinds, values, lines = {}, {}, {}
  local n, pos, line = 0, 1, first_line or 1
  local function fail(msg) error(("%s:%d: %s"):format(chunk, line, msg), 0) end
  local function count_lines(s) local _, k = s:gsub("\n", "") line = line + k end
  local function long_bracket(at)
    local eq = src:match("^%[(=*)%[", at)
    if not eq then return nil end
    local close = "]" .. eq .. "]"
    local s, e = src:find(close, at, true)
    if not s then fail("unfinished long string or comment") end
    local body = src:sub(at + #eq + 2, s - 1)
    return body, e + 1
  end
  local bytes = bytes_of(src)
  -- the tables of the loop as locals (an upvalue's read is one step more)
  local BLANK, SIMPLE, SYMBOL1, SYMBOL2, WORD_START, WORD, KEYWORDS = BLANK, SIMPLE, SYMBOL1, SYMBOL2,
    WORD_START, WORD, KEYWORDS
  while true do
    -- blanks (a newline is a token's end of its own)
    local b = bytes[pos]
    while BLANK[b] do
      pos = pos + 1
      b = bytes[pos]
    end
    if not b then break end
    local sym = SIMPLE[b]
    if sym then
      n = n + 1
      kinds[n], values[n], lines[n] = sym, sym, line
      pos = pos + 1
    elseif WORD_START[b] then
      local e = pos + 1
      while WORD[bytes[e]] do e = e + 1 end
      e = e - 1
      local w = sub(src, pos, e)
      n = n + 1
      kinds[n], values[n], lines[n] = KEYWORDS[w] and w or "name", w, line
      pos = e + 1
    elseif SYMBOL1[b] and b ~= 45 and b ~= 46 and b ~= 91 then
      -- a symbol other than "--", a number's "." and a long bracket's "["
      sym = SYMBOL1[b]
      local b2 = bytes[pos + 1]
      sym = b2 and SYMBOL2[b * 256 + b2] or sym
      n = n + 1
      kinds[n], values[n], lines[n] = sym, sym, line
      pos = pos + #sym
    elseif b == 10 then                 -- \n
      line, pos = line + 1, pos + 1
    elseif b == 45 and bytes[pos + 1] == 45 then   -- "--"
      local body, after = long_bracket(pos + 2)
      if body then
        count_lines(body)
        pos = after
      else
        pos = (find(src, "\n", pos, true) or #src + 1)
      end
    elseif DIGIT[b] or (b == 46 and DIGIT[bytes[pos + 1]]) then
      local e = number_end(src, bytes, pos)
      local num = sub(src, pos, e)
      local v = tonumber(num)
      if v == nil then fail("malformed number near '" .. num .. "'") end
      n = n + 1
      kinds[n], values[n], lines[n] = "number", v, line
      pos = e + 1
    elseif b == 34 or b == 39 then      -- " '
      local c = sub(src, pos, pos)
      local at, buf = pos + 1, {}
      while true do
        local ch = sub(src, at, at)
        if ch == "" or ch == "\n" then fail("unfinished string") end
        if ch == c then break end
        if ch == "\\" then at = at + 1 end
        buf[#buf + 1] = sub(src, at, at)
        at = at + 1
      end
      n = n + 1
      kinds[n], values[n], lines[n] = "string", table.concat(buf), line
      pos = at + 1
    elseif b == 91 and find(src, "^%[=*%[", pos) then
      local body, after = long_bracket(pos)
      n = n + 1
      kinds[n], values[n], lines[n] = "string", body, line
      count_lines(body)
      pos = after
    else
      local b2 = bytes[pos + 1]
      local sym = b2 and SYMBOL2[b * 256 + b2]
      if sym == ".." and bytes[pos + 2] == 46 then sym = "..." end
      sym = sym or SYMBOL1[b]
      if not sym then fail("unexpected symbol near '" .. sub(src, pos, pos) .. "'") end
      n = n + 1
      kinds[n], values[n], lines[n] = sym, sym, line
      pos = pos + #sym
    end
  end
  kinds[n + 1], values[n + 1], lines[n + 1] = "eof", "<eof>", line
  return { kind = kinds, value = values, line = lines }
end

return M
