-- The rooms stay small enough to live in (issue 31): no C file under src/
-- over 1,200 lines (comments count) and no function over 150. A function
-- is counted from the line of its opening brace, on a line of a definition
-- that starts at column 0, to the brace that closes it at column 0.
local S = require "spec.support"

local M = { FILE_LINES = 1200, FUNCTION_LINES = 150 }

-- the functions of a C text longer than `most` lines: { "name:line (n lines)" }
function M.long_functions(text, most)
  local long, start, name, head = {}, nil, nil, nil
  local n = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if start then
      if line:match("^}") then
        if n - start + 1 > most then
          long[#long + 1] = ("%s:%d (%d lines)"):format(name, start, n - start + 1)
        end
        start = nil
      end
    else
      -- a definition's first line starts at column 0 and is not a comment,
      -- a directive, a type or an initialiser
      if line:match("^[%a_]") and not line:match("^typedef") and not line:match("=") then
        head = line
      elseif not line:match("^%s") then
        head = nil
      end
      if head and line:match("%)%s*{%s*$") then
        start, name = n, head:match("([%a_][%w_]*)%s*%(") or "?"
        head = nil
      end
    end
  end
  return long
end

describe("the C files under src/", function()
  local files = S.src_c_files()

  it("are each at most 1,200 lines", function()
    local over = {}
    for _, path in ipairs(files) do
      local _, lines = assert(io.open(path)):read("a"):gsub("\n", "")
      if lines > M.FILE_LINES then over[#over + 1] = ("%s (%d lines)"):format(path, lines) end
    end
    assert.is_true(#files > 50, "find listed " .. #files .. " files")
    assert.same({}, over)
  end)

  it("have no function over 150 lines", function()
    local over = {}
    for _, path in ipairs(files) do
      for _, f in ipairs(M.long_functions(assert(io.open(path)):read("a"), M.FUNCTION_LINES)) do
        over[#over + 1] = path .. ": " .. f
      end
    end
    assert.same({}, over)
  end)

  it("are measured by a rule that finds a long function", function()
    local body = ("  x++;\n"):rep(160)
    local text = "static int\nlong_one(int x,\n         int y) {\n" .. body .. "}\n" ..
                 "static const int t[] = {\n" .. body .. "};\n" ..
                 "int short_one(void) {\n  return 0;\n}\n"
    assert.same({ "long_one:3 (162 lines)" }, M.long_functions(text, 150))
  end)
end)
