-- docs/errors.md against the sources and the specs: every error format in
-- src/*.c and lua/luacuda/*.lua has a row, every row is an error the
-- sources still raise, and every spec test a row names exists. When this
-- fails after a change to an error message, run `make errors-catalogue`.
local C = require "spec.catalogue"

local DOC = "docs/errors.md"
local REASONS = {
  "needs a GPU",
  "not provoked: a failure of the system, not of the caller",
  "not provoked: the API checks first (defence in depth)",
}

describe("docs/errors.md", function()
  local rows, formats
  setup(function()
    rows = C.rows(DOC)
    formats = C.formats(".")
  end)

  it("reads the sources' error formats and its own rows", function()
    assert.is_true(#formats > 200, "found only " .. #formats .. " error formats in src/ and lua/")
    assert.is_true(#rows > 200, "found only " .. #rows .. " rows in " .. DOC)
  end)

  it("has a row for every error the sources raise", function()
    local have = {}
    for _, r in ipairs(rows) do have[C.key(r.message)] = true end
    local missing = {}
    for _, f in ipairs(formats) do
      if not have[C.key(f.format, true)] then
        missing[#missing + 1] = ("%s:%d: %s"):format(f.file, f.line, f.format)
      end
    end
    assert.same({}, missing, "errors with no row in " .. DOC .. " (make errors-catalogue)")
  end)

  it("lists only errors the sources still raise, each once", function()
    local raised, seen, stale = {}, {}, {}
    for _, f in ipairs(formats) do raised[C.key(f.format, true)] = true end
    for _, r in ipairs(rows) do
      local k = C.key(r.message)
      if not raised[k] or seen[k] then stale[#stale + 1] = ("%s:%d: %s"):format(DOC, r.line, r.message) end
      seen[k] = true
    end
    assert.same({}, stale, "rows for errors no longer raised, or listed twice")
  end)

  it("names a spec test that exists for every row, or a reason", function()
    local names, bad = {}, {}
    local function has_test(file, test)
      if not names[file] then
        local f = io.open(file)
        if not f then return false end
        f:close()
        if file:match("^spec/unit/") then     -- a C unit test: static int test_<name>(void), in the table
          local src = C.slurp(file)
          names[file] = setmetatable({}, { __index = function(_, t)
            return src:find("static int test_" .. t .. "(void)", 1, true) ~= nil
               and src:find("T(" .. t .. ")", 1, true) ~= nil
          end })
        else
          names[file] = C.test_names(file)
        end
      end
      return names[file][test] == true
    end
    local gpu_section = 0
    for _, r in ipairs(rows) do
      local ok
      if r.spec_file then
        ok = has_test(r.spec_file, r.test)
      else
        for _, reason in ipairs(REASONS) do ok = ok or r.spec_cell == reason end
        ok = ok and (r.spec_cell ~= "needs a GPU" or r.gpu_only)
      end
      if r.gpu_only then gpu_section = gpu_section + 1 end
      if not ok then bad[#bad + 1] = ("%s:%d: %s -> %s"):format(DOC, r.line, r.message, r.spec_cell) end
    end
    assert.same({}, bad, "rows whose spec test does not exist (or with no reason)")
    assert.is_true(gpu_section > 0, "no CUDA backend only section")
  end)

  it("finds the tests of a spec file by their full names", function()
    local names = C.test_names("spec/errors_catalogue_spec.lua")
    assert.is_true(names["docs/errors.md finds the tests of a spec file by their full names"])
    assert.is_nil(names["finds the tests of a spec file by their full names"])
  end)
end)
