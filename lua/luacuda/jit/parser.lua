-- jit/parser: Lua 5.4 tokens (jit/lexer) to a syntax tree whose every node
-- has a tag and the line it starts on. The whole language is parsed, so
-- that what the translator does not take is refused by name with its line
-- rather than as a syntax error.

local M = {}

-- binary operators' left and right priorities, as in Lua's lparser.c
local BINARY = {
  ["or"] = { 1, 1 }, ["and"] = { 2, 2 },
  ["<"] = { 3, 3 }, [">"] = { 3, 3 }, ["<="] = { 3, 3 }, [">="] = { 3, 3 },
  ["~="] = { 3, 3 }, ["=="] = { 3, 3 },
  ["|"] = { 4, 4 }, ["~"] = { 5, 5 }, ["&"] = { 6, 6 }, ["<<"] = { 7, 7 }, [">>"] = { 7, 7 },
  [".."] = { 9, 8 }, ["+"] = { 10, 10 }, ["-"] = { 10, 10 },
  ["*"] = { 11, 11 }, ["/"] = { 11, 11 }, ["//"] = { 11, 11 }, ["%"] = { 11, 11 },
  ["^"] = { 14, 13 },
}
local UNARY_PRIORITY = 12

local P = {}
P.__index = P

function P:peek(k) return self.toks[self.i + (k or 0)] end
function P:next() local i = self.i; self.i = i + 1; return self.toks[i] end
function P:check(kind) return self.toks[self.i].kind == kind end
function P:accept(kind)
  local i = self.i
  local t = self.toks[i]
  if t.kind == kind then
    self.i = i + 1
    return t
  end
end
function P:fail(msg, line)
  error(("%s:%d: %s"):format(self.chunk, line or self:peek().line, msg), 0)
end
function P:expect(kind, what)
  local i = self.i
  local t = self.toks[i]
  if t.kind == kind then
    self.i = i + 1
    return t
  end
  self:fail(("'%s' expected%s near '%s'"):format(kind, what and (" " .. what) or "",
    tostring(t.value)))
end
function P:name() return self:expect("name").value end

local BLOCK_END = { ["return"] = true, ["end"] = true, ["else"] = true, ["elseif"] = true,
  ["until"] = true, eof = true }

function P:block()
  local stats = {}
  while not BLOCK_END[self:peek().kind] do
    local s = self:statement()
    if s then stats[#stats + 1] = s end
  end
  if self:check("return") then
    local line = self:next().line
    local exprs = {}
    if not BLOCK_END[self:peek().kind] and not self:check(";") then exprs = self:exprlist() end
    self:accept(";")
    stats[#stats + 1] = { tag = "Return", exprs = exprs, line = line }
  end
  return stats
end

function P:statement()
  local t = self:peek()
  local line = t.line
  local k = t.kind
  if k == ";" then self:next() return nil end
  if k == "if" then
    self:next()
    local conds, blocks = { self:expr() }, {}
    self:expect("then")
    blocks[1] = self:block()
    local else_
    while true do
      if self:accept("elseif") then
        conds[#conds + 1] = self:expr()
        self:expect("then")
        blocks[#blocks + 1] = self:block()
      elseif self:accept("else") then
        else_ = self:block()
        self:expect("end", "to close 'if' at line " .. line)
        break
      else
        self:expect("end", "to close 'if' at line " .. line)
        break
      end
    end
    return { tag = "If", conds = conds, blocks = blocks, else_ = else_, line = line }
  elseif k == "while" then
    self:next()
    local cond = self:expr()
    self:expect("do")
    local body = self:block()
    self:expect("end", "to close 'while' at line " .. line)
    return { tag = "While", cond = cond, body = body, line = line }
  elseif k == "do" then
    self:next()
    local body = self:block()
    self:expect("end", "to close 'do' at line " .. line)
    return { tag = "Do", body = body, line = line }
  elseif k == "for" then
    self:next()
    local n1 = self:name()
    if self:accept("=") then
      local start = self:expr()
      self:expect(",")
      local limit = self:expr()
      local step = self:accept(",") and self:expr() or nil
      self:expect("do")
      local body = self:block()
      self:expect("end", "to close 'for' at line " .. line)
      return { tag = "Fornum", var = n1, start = start, limit = limit, step = step, body = body, line = line }
    end
    local names = { n1 }
    while self:accept(",") do names[#names + 1] = self:name() end
    self:expect("in")
    local exprs = self:exprlist()
    self:expect("do")
    local body = self:block()
    self:expect("end", "to close 'for' at line " .. line)
    return { tag = "Forin", names = names, exprs = exprs, body = body, line = line }
  elseif k == "repeat" then
    self:next()
    local body = self:block()
    self:expect("until", "to close 'repeat' at line " .. line)
    return { tag = "Repeat", body = body, cond = self:expr(), line = line }
  elseif k == "function" then
    self:next()
    local target = { tag = "Name", name = self:name(), line = line }
    while self:check(".") or self:check(":") do
      self:next()
      target = { tag = "Index", obj = target, key = { tag = "String", value = self:name(), line = line }, line = line }
    end
    local f = self:funcbody(line)
    return { tag = "Set", targets = { target }, exprs = { f }, line = line }
  elseif k == "local" then
    self:next()
    if self:accept("function") then
      local name = self:name()
      return { tag = "Localfunction", name = name, func = self:funcbody(line), line = line }
    end
    local names, attribs = {}, {}
    repeat
      names[#names + 1] = self:name()
      if self:accept("<") then
        attribs[#names] = self:name()
        self:expect(">")
      end
    until not self:accept(",")
    local exprs = self:accept("=") and self:exprlist() or {}
    return { tag = "Local", names = names, attribs = attribs, exprs = exprs, line = line }
  elseif k == "::" then
    self:next()
    local name = self:name()
    self:expect("::")
    return { tag = "Label", name = name, line = line }
  elseif k == "return" then
    self:fail("'return' must be the last statement of its block")
  elseif k == "break" then
    self:next()
    return { tag = "Break", line = line }
  elseif k == "goto" then
    self:next()
    return { tag = "Goto", label = self:name(), line = line }
  end
  -- an expression statement: a call or an assignment
  local e = self:suffixedexp()
  if self:check("=") or self:check(",") then
    local targets = { e }
    while self:accept(",") do targets[#targets + 1] = self:suffixedexp() end
    self:expect("=")
    for _, tg in ipairs(targets) do
      if tg.tag ~= "Name" and tg.tag ~= "Index" then self:fail("syntax error: cannot assign to this", tg.line) end
    end
    return { tag = "Set", targets = targets, exprs = self:exprlist(), line = line }
  end
  if e.tag ~= "Call" and e.tag ~= "Method" then self:fail("syntax error: a statement must be a call or an assignment", line) end
  return { tag = "Callstat", call = e, line = line }
end

function P:funcbody(line)
  self:expect("(")
  local params, vararg = {}, false
  if not self:check(")") then
    repeat
      if self:accept("...") then vararg = true break end
      params[#params + 1] = self:name()
    until not self:accept(",")
  end
  self:expect(")")
  local body = self:block()
  local last = self:expect("end", "to close 'function' at line " .. line).line
  return { tag = "Function", params = params, vararg = vararg, body = body, line = line, lastline = last }
end

function P:exprlist()
  local list = { self:expr() }
  while self:accept(",") do list[#list + 1] = self:expr() end
  return list
end

function P:primaryexp()
  local t = self.toks[self.i]
  local k = t.kind
  if k == "name" then
    self.i = self.i + 1
    return { tag = "Name", name = t.value, line = t.line }
  elseif k == "(" then
    self.i = self.i + 1
    local e = self:expr()
    self:expect(")")
    return { tag = "Paren", e = e, line = t.line }
  end
  self:fail(("unexpected symbol near '%s'"):format(tostring(t.value)))
end

function P:callargs()
  local t = self:peek()
  if t.kind == "string" then
    self:next()
    return { { tag = "String", value = t.value, line = t.line } }
  elseif t.kind == "{" then
    return { self:table() }
  end
  self:expect("(")
  local args = {}
  if not self:check(")") then args = self:exprlist() end
  self:expect(")")
  return args
end

function P:suffixedexp()
  local e = self:primaryexp()
  local toks = self.toks
  while true do
    local t = toks[self.i]
    local k = t.kind
    if k == "." then
      self.i = self.i + 1
      local n = self:expect("name")
      e = { tag = "Index", obj = e, key = { tag = "String", value = n.value, line = n.line }, dot = true, line = t.line }
    elseif k == "[" then
      self.i = self.i + 1
      local key = self:expr()
      self:expect("]")
      e = { tag = "Index", obj = e, key = key, line = t.line }
    elseif k == ":" then
      self.i = self.i + 1
      local n = self:name()
      e = { tag = "Method", obj = e, name = n, args = self:callargs(), line = t.line }
    elseif k == "(" or k == "string" or k == "{" then
      e = { tag = "Call", fn = e, args = self:callargs(), line = t.line }
    else
      return e
    end
  end
end

function P:table()
  local line = self:expect("{").line
  local items = {}
  while not self:check("}") do
    if self:check("[") then
      self:next()
      local k = self:expr()
      self:expect("]")
      self:expect("=")
      items[#items + 1] = { key = k, value = self:expr() }
    elseif self:check("name") and self:peek(1).kind == "=" then
      local n = self:next()
      self:next()
      items[#items + 1] = { key = { tag = "String", value = n.value, line = n.line }, value = self:expr() }
    else
      items[#items + 1] = { value = self:expr() }
    end
    if not self:accept(",") and not self:accept(";") then break end
  end
  self:expect("}", "to close '{' at line " .. line)
  return { tag = "Table", items = items, line = line }
end

function P:simpleexp()
  local t = self.toks[self.i]
  local k = t.kind
  if k == "number" then self.i = self.i + 1 return { tag = "Number", value = t.value, line = t.line }
  elseif k == "string" then self:next() return { tag = "String", value = t.value, line = t.line }
  elseif k == "nil" then self:next() return { tag = "Nil", line = t.line }
  elseif k == "true" then self:next() return { tag = "True", line = t.line }
  elseif k == "false" then self:next() return { tag = "False", line = t.line }
  elseif k == "..." then self:next() return { tag = "Vararg", line = t.line }
  elseif k == "{" then return self:table()
  elseif k == "function" then self:next() return self:funcbody(t.line)
  end
  return self:suffixedexp()
end

function P:expr(limit)
  limit = limit or 0
  local e
  local toks = self.toks
  local t = toks[self.i]
  local k = t.kind
  if k == "not" or k == "-" or k == "#" or k == "~" then
    self.i = self.i + 1
    e = { tag = "Unop", op = k, a = self:expr(UNARY_PRIORITY), line = t.line }
  else
    e = self:simpleexp()
  end
  while true do
    t = toks[self.i]
    local op = t.kind
    local pr = BINARY[op]
    if not pr or pr[1] <= limit then break end
    self.i = self.i + 1
    e = { tag = "Binop", op = op, a = e, b = self:expr(pr[2]), line = t.line }
  end
  return e
end

-- The function expression starting at token index i (a 'function' token)
function M.function_at(toks, i, chunk)
  local p = setmetatable({ toks = toks, i = i + 1, chunk = chunk }, P)
  local line = toks[i].line
  -- `function name(...)` and `local function name(...)` as statements
  if p:check("name") then
    p:next()
    while p:accept(".") or p:accept(":") do p:name() end
  end
  return p:funcbody(line)
end

return M
