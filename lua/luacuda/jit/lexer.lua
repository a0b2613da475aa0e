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
local SYMBOL2, SYMBOL1, STARTS2 = {}, {}, {}
for _, s in ipairs({ "..", "==", "~=", "<=", ">=", "<<", ">>", "//", "::",
  "+", "-", "*", "/", "%", "^", "#", "&", "~", "|", "<", ">", "=", "(", ")", "{", "}",
  "[", "]", ";", ":", ",", "." }) do
  if #s == 2 then SYMBOL2[s], STARTS2[s:byte()] = true, true else SYMBOL1[s:byte()] = s end
end

-- the bytes a name starts with, and digits
local WORD_START, DIGIT = {}, {}
for b = 0, 255 do
  local c = string.char(b)
  WORD_START[b] = c:match("[%a_]") ~= nil
  DIGIT[b] = c:match("%d") ~= nil
end

local find, byte, sub = string.find, string.byte, string.sub

-- the end of the number at pos: hexadecimal (with a binary exponent), or
-- decimal (with a decimal one)
local function number_end(src, pos)
  local x = byte(src, pos + 1)
  if byte(src, pos) == 48 and (x == 120 or x == 88) then        -- 0x, 0X
    local _, e = find(src, "^0[xX][%x%.]*[pP][+-]?%d+", pos)
    if not e then _, e = find(src, "^0[xX][%x%.]*", pos) end
    return e
  end
  local _, e = find(src, "^%d*%.?%d*", pos)
  local _, ee = find(src, "^[eE][+-]?%d+", e + 1)
  return ee or e
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
  while true do
    -- blanks (a newline is a token's end of its own)
    local b = byte(src, pos)
    while b == 32 or b == 9 or b == 13 or b == 12 or b == 11 do
      pos = pos + 1
      b = byte(src, pos)
    end
    if not b then break end
    if b == 10 then                     -- \n
      line, pos = line + 1, pos + 1
    elseif WORD_START[b] then
      local _, e = find(src, "^[%w_]*", pos + 1)
      local w = sub(src, pos, e)
      n = n + 1
      kinds[n], values[n], lines[n] = KEYWORDS[w] and w or "name", w, line
      pos = e + 1
    elseif b == 45 and byte(src, pos + 1) == 45 then   -- "--"
      local body, after = long_bracket(pos + 2)
      if body then
        count_lines(body)
        pos = after
      else
        pos = (find(src, "\n", pos, true) or #src + 1)
      end
    elseif DIGIT[b] or (b == 46 and DIGIT[byte(src, pos + 1)]) then
      local e = number_end(src, pos)
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
      local sym
      if STARTS2[b] then
        sym = sub(src, pos, pos + 1)
        if sym == ".." and byte(src, pos + 2) == 46 then sym = "..."
        elseif not SYMBOL2[sym] then sym = nil end
      end
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
