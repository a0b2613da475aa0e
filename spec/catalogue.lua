-- catalogue: the error catalogue docs/errors.md and what it is checked
-- against. It reads (1) the message formats of every error site in src/*.c
-- and lua/luacuda/*.lua, (2) the rows of the catalogue and (3) the full
-- names of the tests in a spec file, all as plain text, without running
-- anything, so spec/errors_catalogue_spec.lua and tools/errors_catalogue.lua
-- share one reading of each.
local C = {}

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end
C.slurp = slurp

local function lines_of(cmd)
  local t = {}
  local p = assert(io.popen(cmd))
  for l in p:lines() do t[#t + 1] = l end
  p:close()
  return t
end

-- ---- C sources ------------------------------------------------------------

-- Calls whose argument is an error message (format), and which argument:
-- a number is the position; "lit" is the first argument that is a string
-- literal. snprintf and friends count only when they write an error buffer.
local C_SITES = {
  lc_error = 3, arg_error = 5, luaL_error = 2, lua_pushfstring = 2,
  lc_errf = 2, lc_fail = 3,   -- src/base/errfmt.c: the one formatter of err buffers
  fail = "lit", whyf = "lit", elem_error = "lit", ragged = "lit",
  scan_fail = "lit",      -- src/base/scan*.c: the scanner's message into sc->err
  snprintf = "lit", vsnprintf = "lit",
  -- src/dist/: luacuda.dist's raise, and a rank's own argument error
  dist_raise = 3, dist_header_error = 2,
}
local ERRBUF = { err = true, msg = true, ["sc->err"] = true }

-- s with comments blanked out (newlines kept, so line numbers hold)
local function strip_c_comments(s)
  local out, i, n = {}, 1, #s
  while i <= n do
    local c, d = s:sub(i, i), s:sub(i, i + 1)
    if c == '"' or c == "'" then
      local j = i + 1
      while j <= n and s:sub(j, j) ~= c do
        if s:sub(j, j) == "\\" then j = j + 1 end
        j = j + 1
      end
      out[#out + 1] = s:sub(i, j)
      i = j + 1
    elseif d == "/*" then
      local j = s:find("*/", i + 2, true) or n
      out[#out + 1] = s:sub(i, j + 1):gsub("[^\n]", " ")
      i = j + 2
    elseif d == "//" then
      local j = s:find("\n", i, true) or n + 1
      out[#out + 1] = (" "):rep(j - i)
      i = j
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
  return table.concat(out)
end

-- The arguments of the call whose '(' is at position open: list of strings.
local function call_args(s, open)
  local args, depth, start, i = {}, 0, open + 1, open
  while i <= #s do
    local c = s:sub(i, i)
    if c == '"' or c == "'" then
      local j = i + 1
      while s:sub(j, j) ~= c do
        if s:sub(j, j) == "\\" then j = j + 1 end
        j = j + 1
      end
      i = j
    elseif c == "(" or c == "[" or c == "{" then
      depth = depth + 1
    elseif c == ")" or c == "]" or c == "}" then
      depth = depth - 1
      if depth == 0 then
        args[#args + 1] = s:sub(start, i - 1)
        return args
      end
    elseif c == "," and depth == 1 then
      args[#args + 1] = s:sub(start, i - 1)
      start = i + 1
    end
    i = i + 1
  end
  return args
end

local ESC = { n = "\n", t = "\t", ["\\"] = "\\", ['"'] = '"', ["'"] = "'" }

-- The text of an argument made only of adjacent string literals, else nil.
local function literal(arg)
  local parts, i, n = {}, 1, #arg
  while true do
    i = arg:find("%S", i)
    if not i then break end
    if arg:sub(i, i) ~= '"' then return nil end
    local j = i + 1
    while j <= n and arg:sub(j, j) ~= '"' do
      local c = arg:sub(j, j)
      if c == "\\" then
        j = j + 1
        c = arg:sub(j, j)
        c = ESC[c] or c
      end
      parts[#parts + 1] = c
      j = j + 1
    end
    i = j + 1
  end
  return #parts > 0 and table.concat(parts) or (arg:find('""', 1, true) and "" or nil)
end

-- Formats of one argument: a literal, or both arms of `cond ? "a" : "b"`.
local function arg_formats(arg)
  local lit = literal(arg)
  if lit then return { lit } end
  local a, b = arg:match('^[^?"]*%?%s*(".-")%s*:%s*(".-")%s*$')
  if a then
    local la, lb = literal(a), literal(b)
    if la and lb then return { la, lb } end
  end
  return {}
end

-- Whether a format says something beyond the messages it passes on
-- ("%s", "%s: %s", "luacuda.%s: %s"): it holds a word outside conversions.
local CONV = "%%[-#+ 0]*%d*%.?%d*[hlzjt]*[diouxXeEfgGcsp%%]"
local function informative(fmt)
  return fmt:gsub(CONV, ""):gsub("^luacuda%.", ""):find("%a%a") ~= nil
end

-- Every error format in src/**/*.c: list of {file=, line=, format=}.
function C.c_formats(root)
  local out = {}
  for _, path in ipairs(lines_of("find " .. root .. "/src -name '*.c' | sort")) do
    local s = strip_c_comments(slurp(path))
    local file = path:match("src/.*$")
    for pos, name, open in s:gmatch("()([%a_][%w_]*)%s*()%(") do
      local which = C_SITES[name]
      local prev = s:sub(pos - 1, pos - 1)
      if which and not prev:match("[%w_.>]") then
        local args = call_args(s, open)
        local fmts = {}
        if type(which) == "number" then
          fmts = args[which] and arg_formats(args[which]) or {}
        elseif not name:match("snprintf$") or ERRBUF[args[1]:match("^%s*(.-)%s*$"):gsub("%s*%+.*$", "")] then
          for _, a in ipairs(args) do
            fmts = arg_formats(a)
            if #fmts > 0 then break end
          end
        end
        local line = select(2, s:sub(1, pos):gsub("\n", "")) + 1
        for _, f in ipairs(fmts) do
          if name == "lua_pushfstring" or name == "luaL_error" then
            f = f:match("^luacuda%.%%s: (.*)$") or f:match("^luacuda: (.*)$")
          end
          -- a static function's definition (static int fail(char *err, ...)) has no literal
          if f and informative(f) then
            out[#out + 1] = { file = file, line = line, format = f }
          end
        end
      end
    end
  end
  return out
end

-- Every error format in lua/luacuda/*.lua: fail("fname", "fmt", ...) or
-- fail(fname, "fmt", ...) (smart.lua, generators.lua) and
-- error("luacuda.<fn>: fmt") anywhere.
function C.lua_formats(root)
  local out = {}
  for _, path in ipairs(lines_of("ls " .. root .. "/lua/luacuda/*.lua")) do
    local file = path:match("lua/luacuda/.*$")
    local n = 0
    for l in io.lines(path) do
      n = n + 1
      local code = l:gsub("^%s*%-%-.*$", "")
      local f = code:match('fail%(%s*"?[%w_]+"?%s*,%s*"(.-[^\\])"')
             or code:match('error%(%(?"luacuda%.[%w_]+: (.-[^\\])"')
      if f and not code:match("^%s*local function") then
        out[#out + 1] = { file = file, line = n, format = (f:gsub('\\"', '"')) }
      end
    end
  end
  return out
end

function C.formats(root)
  local out = C.c_formats(root)
  for _, f in ipairs(C.lua_formats(root)) do out[#out + 1] = f end
  return out
end

-- The comparison key of a message pattern: a C conversion (%s, %lld) or a
-- catalogue placeholder (<type>) is one '%'; '%%' is a literal percent.
function C.key(s, is_format)
  if is_format then
    s = s:gsub("%%%%", "\0"):gsub(CONV, "\1"):gsub("%z", "%%"):gsub("\1", "<>")
  end
  return (s:gsub("<[^<>]*>", "<>"))
end

-- A Lua pattern that finds a message made from format fmt.
function C.matcher(fmt)
  local parts = {}
  local s = fmt:gsub("%%%%", "\0")
  local i = 1
  while true do
    local a, b = s:find(CONV, i)
    local lit = s:sub(i, (a or 0) - 1):gsub("%z", "%%")
    parts[#parts + 1] = lit:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0")
    if not a then break end
    parts[#parts + 1] = ".-"
    i = b + 1
  end
  return table.concat(parts)
end

-- ---- the catalogue --------------------------------------------------------

-- Rows of docs/errors.md: {message=, functions=, spec_file=, test=,
-- gpu_only=, line=}. A row is a table row whose first cell is a `message`;
-- the sections after a heading holding "CUDA backend only" are gpu_only.
function C.rows(path)
  local rows, gpu_only, n = {}, false, 0
  for l in io.lines(path) do
    n = n + 1
    if l:match("^#") then gpu_only = l:find("CUDA backend only", 1, true) ~= nil end
    local msg, rest = l:match("^|%s*`(.-)`%s*|(.*)|%s*$")
    if msg then
      local fns, spec = rest:match("^(.-)|(.*)$")
      local file, test = (spec or ""):match('`(spec/[%w_/]+%.%a+)`:?%s*"(.-)"')
      rows[#rows + 1] = { message = msg, functions = fns and fns:match("^%s*(.-)%s*$"),
                          spec_file = file, test = test, gpu_only = gpu_only,
                          spec_cell = spec and spec:match("^%s*(.-)%s*$"), line = n }
    end
  end
  return rows
end

-- ---- spec files -----------------------------------------------------------

-- Full names (describe ... it, as busted prints them) of the tests in a
-- spec file, read from its `describe("..."`/`it("..."` lines (and the
-- `.. "..."` lines that continue the name) and their indentation (the
-- specs are indented two spaces a level).
function C.test_names(path)
  local names, stack = {}, {}
  local last     -- the test or describe whose name a `.. "..."` line continues
  local function close()
    if last and last.kind ~= "describe" then names[last.full .. last.name] = true end
    last = nil
  end
  for l in io.lines(path) do
    local ind, kind, q, name = l:match("^(%s*)(%a+)%((['\"])(.-[^\\])%3")
    local more = l:match("^%s*%.%.%s*\"(.-)\"") or l:match("^%s*%.%.%s*'(.-)'")
    if last and more then
      last.name = last.name .. more
      if last.kind == "describe" then stack[#stack].name = last.name end
    elseif kind == "describe" or kind == "it" or kind == "pending" then
      close()
      while #stack > 0 and stack[#stack].ind >= #ind do stack[#stack] = nil end
      local full = {}
      for _, d in ipairs(stack) do full[#full + 1] = d.name end
      local prefix = #full > 0 and table.concat(full, " ") .. " " or ""
      if kind == "describe" then stack[#stack + 1] = { ind = #ind, name = name } end
      last = { kind = kind, full = prefix, name = name }
    else
      close()
    end
  end
  close()
  return names
end

return C
