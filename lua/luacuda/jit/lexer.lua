-- jit/lexer: Lua 5.4 source text to tokens, each {kind, value, line}.
-- kind is "name", "number", "string", "eof" or the keyword or symbol
-- itself ("local", "==", "..."). Numbers keep Lua's own reading
-- (math.type tells an integer from a float).

local M = {}

local KEYWORDS = {}
for w in ([[and break do else elseif end false for function goto if in local nil not or
  repeat return then true until while]]):gmatch("%a+") do KEYWORDS[w] = true end

-- the symbols by length: the longest that matches wins ("..." over ".." and ".")
local SYMBOLS = { {}, {}, {} }
for _, s in ipairs({ "...", "..", "==", "~=", "<=", ">=", "<<", ">>", "//", "::",
  "+", "-", "*", "/", "%", "^", "#", "&", "~", "|", "<", ">", "=", "(", ")", "{", "}",
  "[", "]", ";", ":", ",", "." }) do
  SYMBOLS[#s][s] = true
end

-- the bytes a name starts with, and digits
local WORD_START, DIGIT = {}, {}
for b = 0, 255 do
  local c = string.char(b)
  WORD_START[b] = c:match("[%a_]") ~= nil
  DIGIT[b] = c:match("%d") ~= nil
end

-- Tokens of src; line numbers start at first_line. Raises
-- "chunk:line: cause" on text that is not Lua.
function M.tokens(src, chunk, first_line)
  local toks, pos, line = {}, 1, first_line or 1
  local function fail(msg) error(("%s:%d: %s"):format(chunk, line, msg), 0) end
  local function count_lines(s) local _, n = s:gsub("\n", "") line = line + n end
  local function long_bracket(at)
    local eq = src:match("^%[(=*)%[", at)
    if not eq then return nil end
    local close = "]" .. eq .. "]"
    local s, e = src:find(close, at, true)
    if not s then fail("unfinished long string or comment") end
    local body = src:sub(at + #eq + 2, s - 1)
    return body, e + 1
  end
  local find, byte, sub = string.find, string.byte, string.sub
  while true do
    pos = find(src, "[^ \t\r\f\v]", pos)
    if not pos then break end
    local b = byte(src, pos)
    local c = sub(src, pos, pos)
    if b == 10 then                     -- \n
      line, pos = line + 1, pos + 1
    elseif WORD_START[b] then
      local w = src:match("^[%w_]+", pos)
      toks[#toks + 1] = { kind = KEYWORDS[w] and w or "name", value = w, line = line }
      pos = pos + #w
    elseif b == 45 and byte(src, pos + 1) == 45 then   -- "--"
      local body, after = long_bracket(pos + 2)
      if body then
        count_lines(body)
        pos = after
      else
        pos = (src:find("\n", pos, true) or #src + 1)
      end
    elseif DIGIT[b] or (c == "." and src:sub(pos + 1, pos + 1):match("%d")) then
      local num = src:match("^0[xX][%x%.]*[pP][+-]?%d+", pos) or src:match("^0[xX][%x%.]*", pos)
        or src:match("^%d*%.?%d*[eE][+-]?%d+", pos) or src:match("^%d*%.?%d*", pos)
      local v = math.tointeger(num) and tonumber(num) or tonumber(num)
      if v == nil then fail("malformed number near '" .. num .. "'") end
      toks[#toks + 1] = { kind = "number", value = v, line = line }
      pos = pos + #num
    elseif c == '"' or c == "'" then
      local at, buf = pos + 1, {}
      while true do
        local ch = src:sub(at, at)
        if ch == "" or ch == "\n" then fail("unfinished string") end
        if ch == c then break end
        if ch == "\\" then at = at + 1 end
        buf[#buf + 1] = src:sub(at, at)
        at = at + 1
      end
      toks[#toks + 1] = { kind = "string", value = table.concat(buf), line = line }
      pos = at + 1
    elseif c == "[" and src:match("^%[=*%[", pos) then
      local body, after = long_bracket(pos)
      toks[#toks + 1] = { kind = "string", value = body, line = line }
      count_lines(body)
      pos = after
    else
      local sym
      for n = 3, 1, -1 do
        local s = src:sub(pos, pos + n - 1)
        if SYMBOLS[n][s] then sym = s break end
      end
      if not sym then fail("unexpected symbol near '" .. c .. "'") end
      toks[#toks + 1] = { kind = sym, value = sym, line = line }
      pos = pos + #sym
    end
  end
  toks[#toks + 1] = { kind = "eof", value = "<eof>", line = line }
  return toks
end

return M
