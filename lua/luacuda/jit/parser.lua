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
-- the same as two sets, for the expression loop
local LEFT, RIGHT = {}, {}
for op, pr in pairs(BINARY) do LEFT[op], RIGHT[op] = pr[1], pr[2] end
local UNARY = { ["not"] = true, ["-"] = true, ["#"] = true, ["~"] = true }
-- the tokens that go on with a primary expression (a field, an index, a call)
local SUFFIX = { ["."] = true, ["["] = true, [":"] = true, ["("] = true, string = true, ["{"] = true }

local P = {}
P.__index = P

-- the tokens are jit/lexer's columns: self.kind[i], self.value[i],
-- self.line[i]; self.i is the next one. peek gives a kind; next, accept
-- and expect give the index of the token they take.
function P:peek(k) return self.kind[self.i + (k or 0)] end
function P:next() local i = self.i; self.i = i + 1; return i end
function P:check(kind) return self.kind[self.i] == kind end
function P:accept(kind)
  local i = self.i
  if self.kind[i] == kind then
    self.i = i + 1
    return i
  end
end
function P:fail(msg, line)
  error(("%s:%d: %s"):format(self.chunk, line or self.line[self.i], msg), 0)
end
function P:expect(kind, what)
  local i = self.i
  if self.kind[i] == kind then
    self.i = i + 1
    return i
  end
  self:fail(("'%s' expected%s near '%s'"):format(kind, what and (" " .. what) or "",
    tostring(self.value[i])))
end
function P:name() return self.value[self:expect("name")] end

local BLOCK_END = { ["return"] = true, ["end"] = true, ["else"] = true, ["elseif"] = true,
  ["until"] = true, eof = true }

function P:block()
  local stats, kinds = {}, self.kind
  while not BLOCK_END[kinds[self.i]] do
    local s = self:statement()
    if s then stats[#stats + 1] = s end
  end
  if self:check("return") then
    local line = self.line[self:next()]
    local exprs = {}
    if not BLOCK_END[self:peek()] and not self:check(";") then exprs = self:exprlist() end
    self:accept(";")
    stats[#stats + 1] = { tag = "Return", exprs = exprs, line = line }
  end
  return stats
end

function P:statement()
  local line = self.line[self.i]
  local k = self.kind[self.i]
  if k == "name" then return self:exprstat(line) end   -- most of a kernel's statements
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
  return self:exprstat(line)
end

-- an expression statement: a call or an assignment
function P:exprstat(line)
  local e = self:suffixedexp()
  local k = self.kind[self.i]
  if k == "=" or k == "," then
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
  local last = self.line[self:expect("end", "to close 'function' at line " .. line)]
  return { tag = "Function", params = params, vararg = vararg, body = body, line = line, lastline = last }
end

function P:exprlist()
  local list, kinds = { self:expr() }, self.kind
  while kinds[self.i] == "," do
    self.i = self.i + 1
    list[#list + 1] = self:expr()
  end
  return list
end

function P:primaryexp()
  local i = self.i
  local k = self.kind[i]
  if k == "name" then
    self.i = i + 1
    return { tag = "Name", name = self.value[i], line = self.line[i] }
  elseif k == "(" then
    self.i = i + 1
    local e = self:expr()
    self:expect(")")
    return { tag = "Paren", e = e, line = self.line[i] }
  end
  self:fail(("unexpected symbol near '%s'"):format(tostring(self.value[i])))
end

function P:callargs()
  local i = self.i
  local k = self.kind[i]
  if k == "string" then
    self.i = i + 1
    return { { tag = "String", value = self.value[i], line = self.line[i] } }
  elseif k == "{" then
    return { self:table() }
  end
  -- (the expected tokens checked here first: a method call each costs more)
  if k == "(" then i = i + 1 else i = self:expect("(") + 1 end
  self.i = i
  local args
  if self.kind[i] == ")" then args = {} else args = self:exprlist() end
  i = self.i
  if self.kind[i] == ")" then self.i = i + 1 else self:expect(")") end
  return args
end

function P:suffixedexp()
  return self:suffixes(self:primaryexp())
end

-- primary expression e and the fields, indices and calls that follow it
function P:suffixes(e)
  local kinds, lines = self.kind, self.line
  while true do
    local i = self.i
    local k = kinds[i]
    if k == "." then
      local n = i + 1
      if kinds[n] == "name" then self.i = n + 1 else self.i = n; self:expect("name") end
      e = { tag = "Index", obj = e, key = { tag = "String", value = self.value[n], line = lines[n] }, dot = true, line = lines[i] }
    elseif k == "[" then
      self.i = i + 1
      local key = self:expr()
      self:expect("]")
      e = { tag = "Index", obj = e, key = key, line = lines[i] }
    elseif k == ":" then
      self.i = i + 1
      local n = self:name()
      e = { tag = "Method", obj = e, name = n, args = self:callargs(), line = lines[i] }
    elseif k == "(" or k == "string" or k == "{" then
      e = { tag = "Call", fn = e, args = self:callargs(), line = lines[i] }
    else
      return e
    end
  end
end

function P:table()
  local line = self.line[self:expect("{")]
  local items = {}
  while not self:check("}") do
    if self:check("[") then
      self:next()
      local k = self:expr()
      self:expect("]")
      self:expect("=")
      items[#items + 1] = { key = k, value = self:expr() }
    elseif self:check("name") and self:peek(1) == "=" then
      local n = self:next()
      self:next()
      items[#items + 1] = { key = { tag = "String", value = self.value[n], line = self.line[n] }, value = self:expr() }
    else
      items[#items + 1] = { value = self:expr() }
    end
    if not self:accept(",") and not self:accept(";") then break end
  end
  self:expect("}", "to close '{' at line " .. line)
  return { tag = "Table", items = items, line = line }
end

function P:simpleexp()
  local i = self.i
  local k = self.kind[i]
  if k == "number" then self.i = i + 1 return { tag = "Number", value = self.value[i], line = self.line[i] }
  elseif k == "string" then self.i = i + 1 return { tag = "String", value = self.value[i], line = self.line[i] }
  elseif k == "nil" then self.i = i + 1 return { tag = "Nil", line = self.line[i] }
  elseif k == "true" then self.i = i + 1 return { tag = "True", line = self.line[i] }
  elseif k == "false" then self.i = i + 1 return { tag = "False", line = self.line[i] }
  elseif k == "..." then self.i = i + 1 return { tag = "Vararg", line = self.line[i] }
  elseif k == "{" then return self:table()
  elseif k == "function" then self.i = i + 1 return self:funcbody(self.line[i])
  end
  return self:suffixedexp()
end

function P:expr(limit)
  local kinds, i = self.kind, self.i
  local k = kinds[i]
  local e
  -- a name and a number first (most operands), without simpleexp's chain
  if k == "name" then
    self.i = i + 1
    e = { tag = "Name", name = self.value[i], line = self.line[i] }
    if SUFFIX[kinds[i + 1]] then e = self:suffixes(e) end
  elseif k == "number" then
    self.i = i + 1
    e = { tag = "Number", value = self.value[i], line = self.line[i] }
  elseif UNARY[k] then
    self.i = i + 1
    e = { tag = "Unop", op = k, a = self:expr(UNARY_PRIORITY), line = self.line[i] }
  else
    e = self:simpleexp()
  end
  limit = limit or 0
  while true do
    i = self.i
    local op = kinds[i]
    local left = LEFT[op]
    if not left or left <= limit then return e end
    self.i = i + 1
    e = { tag = "Binop", op = op, a = e, b = self:expr(RIGHT[op]), line = self.line[i] }
  end
end

-- The function expression starting at token index i (a 'function' token)
-- of toks (jit/lexer's)
function M.function_at(toks, i, chunk)
  local p = { kind = toks.kind, value = toks.value, line = toks.line, i = i + 1, chunk = chunk }
  for name, f in pairs(P) do p[name] = f end       -- its methods without a metatable lookup
  local line = toks.line[i]
  -- `function name(...)` and `local function name(...)` as statements
  if p:check("name") then
    p:next()
    while p:accept(".") or p:accept(":") do p:name() end
  end
  return p:funcbody(line)
end

return M
