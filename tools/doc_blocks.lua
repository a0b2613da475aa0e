-- tools/doc_blocks.lua: the Lua examples of the documentation, run and
-- checked, so that what README.md, docs/*.md and the guides in docs/guide/
-- show is what luacuda does.
--
--   lua5.4 tools/doc_blocks.lua [FILE.md ...]   (README.md, docs/*.md and
--                                                 docs/guide/*.md when none
--                                                 is named)
--
-- spec/docs_spec.lua runs the same checks as one busted test per block.
--
-- The rules:
--
-- * A block is a fenced code block opened by a line that is exactly
--   ```lua and closed by the next line that is exactly ```.
-- * Each block is a script of its own: it runs in a new lua5.4 process
--   (so it must `require "luacuda"` itself), in a new empty temporary
--   directory, with the repository's Lua files and module on its paths and
--   LUACUDA_BACKEND=sim. Its line numbers are the document's (an error
--   reads `README.md:57: ...`). It passes when it runs without an error and
--   every expectation below holds.
-- * A block that cannot run here is marked by the line
--   `<!-- norun: REASON -->` as the last non-blank line before its fence;
--   REASON must be given, and is reported (busted counts it as pending).
-- * Expectations: a comment `--> TEXT` on a line of code says what that
--   line's print call prints. Lines that hold nothing but a `--> MORE`
--   comment continue the expectation of the line above (for output over
--   several lines), joined with a newline. TEXT ends at the first " -- "
--   (a remark may follow it) or at the end of the line.
-- * What a line prints is the text of the one print call it makes (its
--   arguments through tostring, separated by tabs, as print writes them);
--   a line with an expectation that calls print never, or more than once,
--   fails. Only print is watched, not io.write.
-- * The two texts are compared with their whitespace normalised: every run
--   of spaces, tabs and newlines counts as one space, and the ends are
--   trimmed (so `--> 40  8` matches print's "40\t8"). An expectation that
--   ends with "..." matches any output that starts with the text before
--   the "..." (for values that differ between machines).
local M = {}

local INTERPRETER = "lua5.4"
local TIMEOUT_S = 300          -- a block that runs longer is a failure

-- The repository's root: the folder above this file's.
local function root_dir()
  local src = debug.getinfo(1, "S").source:gsub("^@", "")
  local dir = src:match("^(.*)/tools/[^/]*$") or "."
  local p = assert(io.popen("cd '" .. dir:gsub("'", "'\\''") .. "' && pwd"))
  local abs = p:read("l")
  p:close()
  return abs
end

local function shell_quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

local function read_file(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local text = f:read("a")
  f:close()
  return text
end

local function write_file(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local function lines_of(text)
  local lines = {}
  for line in (text:gsub("\r\n", "\n") .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end
  if text:sub(-1) == "\n" then lines[#lines] = nil end
  return lines
end

-- The rule's whitespace: runs as one space, ends trimmed.
function M.normalise(s)
  return (s:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", ""))
end

-- Whether printed text meets an expectation (both as written).
function M.matches(expected, printed)
  local e, p = M.normalise(expected), M.normalise(printed)
  local prefix = e:match("^(.-)%s*%.%.%.$")
  if prefix then return p:sub(1, #prefix) == prefix end
  return e == p
end

-- The blocks of a document: a list of {file=, line= (the fence's line),
-- first= (the first code line), code=, skip= (a reason) or problem=}.
function M.blocks(path, text)
  text = text or assert(read_file(path))
  local lines = lines_of(text)
  local blocks, i = {}, 1
  while i <= #lines do
    if lines[i] == "```lua" then
      local b = { file = path, line = i, first = i + 1 }
      local j = i + 1
      while j <= #lines and lines[j] ~= "```" do j = j + 1 end
      if j > #lines then b.problem = "the block is never closed (no ``` line)" end
      b.code = table.concat(lines, "\n", i + 1, math.min(j, #lines + 1) - 1) .. "\n"
      local k = i - 1
      while k >= 1 and lines[k]:match("^%s*$") do k = k - 1 end
      local marker = k >= 1 and lines[k]:match("^%s*<!%-%-%s*norun(.-)%-%->%s*$")
      if marker then
        local reason = marker:match("^%s*:%s*(.-)%s*$")
        if reason and reason ~= "" then b.skip = reason
        else b.problem = "a norun marker without a reason (<!-- norun: REASON -->)" end
      end
      blocks[#blocks + 1] = b
      i = j + 1
    else
      i = i + 1
    end
  end
  return blocks
end

-- The expectations of a block: a list of {line=, text=}, in order, or
-- nil and a problem.
function M.expectations(block)
  local list, last = {}, nil
  for n, line in ipairs(lines_of(block.code)) do
    local at = block.first + n - 1
    local code, rest = line:match("^(.-)%-%->(.*)$")
    if code then
      local text = (rest:match("^(.-) %-%- ") or rest):gsub("^ ", "")
      if code:match("^%s*$") then
        if not last then
          return nil, ("%s:%d: a --> line with no code line above it"):format(block.file, at)
        end
        last.text = last.text .. "\n" .. text
      else
        last = { line = at, text = text }
        list[#list + 1] = last
      end
    elseif not line:match("^%s*$") then
      last = nil
    end
  end
  return list
end

-- Each entry of a search path made absolute (the paths the Makefile sets
-- are relative to the repository, and a block runs elsewhere).
local function absolute_path(spec, root)
  local out = {}
  for item in (spec .. ";"):gmatch("(.-);") do
    if item ~= "" and item:sub(1, 1) ~= "/" then item = root .. "/" .. item end
    out[#out + 1] = item
  end
  return table.concat(out, ";")
end

local function child_env(root)
  local build = os.getenv("LUACUDA_BUILD") or "build"
  local lpath = os.getenv("LUA_PATH") or "lua/?.lua;lua/?/init.lua;;"
  local cpath = os.getenv("LUA_CPATH") or (build .. "/?.so;;")
  return ("LUA_PATH=%s LUA_CPATH=%s LUACUDA_BACKEND=sim"):format(
    shell_quote(absolute_path(lpath, root)), shell_quote(absolute_path(cpath, root)))
end

-- The prints a child recorded: line -> list of texts.
local function read_prints(path)
  local data = read_file(path) or ""
  local prints, pos = {}, 1
  while pos <= #data do
    local line, len, after = data:match("^(%d+) (%d+)\n()", pos)
    if not line then break end
    line, len = tonumber(line), tonumber(len)
    local list = prints[line] or {}
    list[#list + 1] = data:sub(after, after + len - 1)
    prints[line] = list
    pos = after + len + 1
  end
  return prints
end

local function excerpt(s)
  s = s:gsub("\n", "\n    ")
  return "    " .. s
end

-- Run a block (not a skipped one): true, or false and what went wrong.
function M.run(block)
  if block.problem then return false, ("%s:%d: %s"):format(block.file, block.line, block.problem) end
  local expected, problem = M.expectations(block)
  if not expected then return false, problem end
  local root = root_dir()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. shell_quote(dir)))
  -- the block at its own line numbers, named after its document
  local padded = ("\n"):rep(block.first - 1) .. block.code
  write_file(dir .. "/block.lua", padded)
  -- and again at the path the chunk is named by (the document's), for code
  -- that reads its own source: a Lua kernel (docs/guide/jit.md)
  local copy = dir .. "/" .. block.file
  assert(os.execute("mkdir -p " .. shell_quote((copy:gsub("/[^/]*$", "")))))
  write_file(copy, padded)
  local cmd = ("cd %s && %s timeout %d %s %s --child block.lua prints %s 2>&1"):format(
    shell_quote(dir), child_env(root), TIMEOUT_S, INTERPRETER,
    shell_quote(root .. "/tools/doc_blocks.lua"), shell_quote("@" .. block.file))
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  local ok, _, code = p:close()
  local prints = read_prints(dir .. "/prints")
  os.execute("rm -rf " .. shell_quote(dir))
  local where = ("%s:%d"):format(block.file, block.line)
  if not ok then
    local why = code == 124 and ("timed out after %d s"):format(TIMEOUT_S)
                or ("failed (exit status %s)"):format(tostring(code))
    return false, ("the block at %s %s; its output:\n%s"):format(where, why, excerpt(out))
  end
  local failures = {}
  for _, e in ipairs(expected) do
    local got = prints[e.line]
    local at = ("%s:%d"):format(block.file, e.line)
    if not got then
      failures[#failures + 1] = ("%s: printed nothing; the comment says\n%s"):format(at, excerpt(e.text))
    elseif #got > 1 then
      failures[#failures + 1] = ("%s: printed %d times; an expectation needs one print"):format(at, #got)
    elseif not M.matches(e.text, got[1]) then
      failures[#failures + 1] = ("%s: printed\n%s\nwhere the comment says\n%s"):format(
        at, excerpt(got[1]), excerpt(e.text))
    end
  end
  if #failures > 0 then
    return false, table.concat(failures, "\n") .. "\n(the block's output:\n" .. excerpt(out) .. ")"
  end
  return true
end

-- The documents checked by default: README.md, docs/*.md and the guides,
-- docs/guide/*.md, from root.
function M.documents(root)
  root = root or "."
  local list = { "README.md" }
  local p = assert(io.popen("cd " .. shell_quote(root) .. " && ls docs/*.md docs/guide/*.md 2>/dev/null"))
  for path in p:lines() do list[#list + 1] = path end
  p:close()
  return list
end

-- The child: run the block, record each print of its own lines.
local function child(chunk_path, prints_path, chunkname)
  local record = assert(io.open(prints_path, "wb"))
  local real_print = print
  _G.print = function(...)
    local parts = table.pack(...)
    for i = 1, parts.n do parts[i] = tostring(parts[i]) end
    local text = table.concat(parts, "\t", 1, parts.n)
    local info = debug.getinfo(2, "Sl")
    if info and info.source == chunkname then
      record:write(("%d %d\n"):format(info.currentline, #text), text, "\n")
      record:flush()
    end
    real_print(text)
  end
  local fn = assert(load(assert(read_file(chunk_path)), chunkname))
  local ok, err = xpcall(fn, function(e)
    -- the block's own frames: the runner's below xpcall say nothing
    return (debug.traceback(tostring(e), 2):gsub("\n%s*%[C%]: in function 'xpcall'.*$", ""))
  end)
  record:close()
  io.stdout:flush()
  if not ok then
    io.stderr:write(tostring(err), "\n")
    os.exit(1)
  end
  os.exit(0, true)
end

-- The command line.
local function main(args)
  if args[1] == "--child" then return child(args[2], args[3], args[4]) end
  local files = #args > 0 and args or M.documents(".")
  local failed, passed, skipped = 0, 0, 0
  for _, path in ipairs(files) do
    for _, b in ipairs(M.blocks(path)) do
      local where = ("%s:%d"):format(b.file, b.line)
      if b.skip then
        skipped = skipped + 1
        print(where .. ": skipped: " .. b.skip)
      else
        local ok, msg = M.run(b)
        if ok then passed = passed + 1; print(where .. ": ok")
        else failed = failed + 1; print(where .. ": FAILED\n" .. msg) end
      end
    end
  end
  print(("%d passed, %d failed, %d skipped"):format(passed, failed, skipped))
  os.exit(failed == 0)
end

if arg and arg[0] and arg[0]:match("doc_blocks%.lua$") then
  main(arg)
end

return M
