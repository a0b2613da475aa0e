-- docs/architecture.md names every C file under src/, so that the map a
-- newcomer reads has no blank: a new file without its line fails here.
--
-- A file src/DIR/NAME.c is named when the document holds, anywhere, its
-- path with its folder (`base/dtype.c`, `cuda/api.c`, `src/dist/agree.c`),
-- or, in the part of the document about its folder (from a line that
-- starts with **`src/DIR/`** to the next such line or heading), `NAME.c`
-- or `NAME.h/.c` in backquotes, or NAME in backquotes on a table row whose
-- first cell is the folder's last part (`` | `cuda/` | `api`, ... | ``).
local S = require "spec.support"

local M = {}

local function escape(s) return (s:gsub("%p", "%%%0")) end

-- the parts of the document about each folder: { ["src/base"] = text }
function M.sections(doc)
  local sections, current = {}, nil
  for line in (doc .. "\n"):gmatch("([^\n]*)\n") do
    local dir = line:match("^%*%*`(src/[%w_/]-)/?`")
    if dir then
      current = dir
    elseif line:match("^#") or line:match("^%*%*`") then
      current = nil
    end
    if current then sections[current] = (sections[current] or "") .. line .. "\n" end
  end
  return sections
end

-- whether the document names the file at path (src/.../NAME.c)
function M.names(doc, sections, path)
  local dir, name = path:match("^(src/.+)/([^/]+)%.c$")
  assert(dir, path)
  local parent = dir:match("([^/]+)$")
  -- its path with its folder, not preceded by another name's letters
  if (" " .. doc):find("[^%w_]" .. escape(parent .. "/" .. name .. ".c")) then return true end
  local section = sections[dir]
  if section then
    if section:find("`" .. escape(name) .. "%.c`") then return true end
    if section:find("`" .. escape(name) .. "%.h/%.c`") then return true end
  end
  -- a row for a subfolder in its parent's section: | `sub/` | `name`, ... |
  local up, sub = dir:match("^(src/.+)/([^/]+)$")
  if up and sections[up] then
    for row in sections[up]:gmatch("\n(|[^\n]*)") do
      local first, rest = row:match("^|%s*`([^`]+)`%s*|(.*)$")
      if first == sub .. "/" and rest:find("`" .. escape(name) .. "`") then return true end
    end
  end
  return false
end

-- the files of the list the document does not name
function M.unnamed(doc, files)
  local sections, missing = M.sections(doc), {}
  for _, path in ipairs(files) do
    if not M.names(doc, sections, path) then missing[#missing + 1] = path end
  end
  return missing
end

describe("docs/architecture.md", function()
  it("names every src/**/*.c", function()
    local files = S.src_c_files()
    assert.is_true(#files > 50, "find listed " .. #files .. " files")
    local doc = assert(io.open("docs/architecture.md")):read("a")
    assert.same({}, M.unnamed(doc, files))
  end)

  describe("the rule", function()
    local doc = table.concat({
      "# Map",
      "Only `src/backend/cuda/` calls `backend/nvrtc.c`.",
      "**`src/base/`: pure C.**",
      "| file | what |",
      "| `dtype.h/.c` | the table |",
      "| `layout.c` | shapes |",
      "**`src/backend/`: devices.**",
      "| `cuda/` | `api` (the table), `copy` |",
      "**`src/dist/`: MPI.**",
      "`dist.c` is the module; `agree.h/.c` the agreement.",
      "## Walks",
      "`scan.c` reads source.",
    }, "\n")

    it("takes each form the document uses", function()
      assert.same({}, M.unnamed(doc, {
        "src/base/dtype.c", "src/base/layout.c", "src/backend/nvrtc.c",
        "src/backend/cuda/api.c", "src/backend/cuda/copy.c",
        "src/dist/dist.c", "src/dist/agree.c",
      }))
    end)

    it("fails on a file it does not know", function()
      assert.same({ "src/base/new_part.c" }, M.unnamed(doc, { "src/base/dtype.c", "src/base/new_part.c" }))
      -- a bare name counts only in its own folder's part, not elsewhere
      assert.same({ "src/base/scan.c", "src/dist/layout.c", "src/backend/sim/api.c" },
        M.unnamed(doc, { "src/base/scan.c", "src/dist/layout.c", "src/backend/sim/api.c" }))
      -- nor does a longer name that ends like it
      assert.same({ "src/backend/vrtc.c" }, M.unnamed("see `backend/nvrtc.c`", { "src/backend/vrtc.c" }))
    end)
  end)
end)
