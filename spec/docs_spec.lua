-- The documentation's Lua examples run, and print what their `-->`
-- comments say (tools/doc_blocks.lua gives the rules): one test per block
-- of README.md, docs/*.md and the guides (docs/guide/*.md), named by file
-- and line. Then the runner's own rules, and DEVELOPERS.md's advice on
-- running busted with Lua 5.4.
local S = require "spec.support"
local D = dofile("tools/doc_blocks.lua")

-- the blocks run on the simulator in processes of their own: on the fake
-- driver (make check-fake-cuda) that would only run them again
local ON_SIM_ONLY = "the documentation's blocks run on the simulator (make check)"

describe("the documentation's Lua blocks", function()
  for _, path in ipairs(D.documents(".")) do
    for _, block in ipairs(D.blocks(path)) do
      it(("%s:%d runs and prints what its comments say"):format(block.file, block.line), function()
        if block.skip then return pending("not run: " .. block.skip) end
        if S.fake then return pending(ON_SIM_ONLY) end
        local ok, message = D.run(block)
        assert(ok, message)
      end)
    end
  end
end)

describe("the block runner", function()
  -- a document of one block
  local function block_of(lines, before)
    local text = (before or "") .. "```lua\n" .. table.concat(lines, "\n") .. "\n```\n"
    local blocks = D.blocks("doc.md", text)
    assert.equal(1, #blocks)
    return blocks[1]
  end
  local function run(lines, before)
    return D.run(block_of(lines, before))
  end

  it("checks README.md, every docs/*.md and every guide in docs/guide/", function()
    local listed = {}
    for _, path in ipairs(D.documents(".")) do listed[path] = true end
    assert.is_true(listed["README.md"])
    local ok, out = S.sh("ls docs/*.md docs/guide/*.md")
    assert(ok, out)
    local guides = 0
    for path in out:gmatch("[^\n]+") do
      assert.is_true(listed[path], path .. " is not among the documents checked")
      if path:find("^docs/guide/") then guides = guides + 1 end
    end
    assert.is_true(guides > 0, "no guide in docs/guide/")
  end)

  it("finds only ```lua blocks, at their lines", function()
    local text = "# t\n\n```\nnot lua\n```\n\n```c\nint x;\n```\n\n```lua\nprint(1)\n```\n"
    local blocks = D.blocks("doc.md", text)
    assert.equal(1, #blocks)
    assert.equal(11, blocks[1].line)
    assert.equal(12, blocks[1].first)
    assert.equal("print(1)\n", blocks[1].code)
  end)

  it("passes a block whose lines print what their comments say", function()
    local ok, msg = run({
      'local luacuda = require "luacuda"',
      'print(luacuda.array({1, 2}):sum())   --> 3',
      'print("a", 2)                        --> a  2  -- print separates with a tab',
      'print(luacuda.type(1))               --> nil',
    })
    assert(ok, msg)
  end)

  it("fails a block that prints something else, naming the line and both texts", function()
    local ok, msg = run({ "local x = 6", "print(x * 7)  --> 41" })
    assert.is_false(ok)
    assert.truthy(msg:find("doc.md:3: printed", 1, true), msg)
    assert.truthy(msg:find("42", 1, true), msg)
    assert.truthy(msg:find("41", 1, true), msg)
  end)

  it("joins --> lines below a line into one expectation, whitespace normalised", function()
    local ok, msg = run({ 'print("{{1, 2},\\n {3, 4}}")   --> {{1, 2},', "                             -->  {3, 4}}" })
    assert(ok, msg)
    ok, msg = run({ 'print("{{1, 2},\\n {3, 4}}")   --> {{1, 2},', "                             -->  {3, 5}}" })
    assert.is_false(ok)
    assert.truthy(msg:find("{3, 5}", 1, true), msg)
  end)

  it("takes a trailing ... as any continuation", function()
    assert.is_true(D.matches("builtin ...", "builtin\tthe sim backend has none"))
    assert.is_false(D.matches("builtin ...", "cublas 13.1.0"))
    assert.is_false(D.matches("builtin", "builtin\tthe sim backend has none"))
  end)

  it("fails an expectation on a line that prints nothing, or twice", function()
    local ok, msg = run({ "local x = 1   --> 1" })
    assert.is_false(ok)
    assert.truthy(msg:find("doc.md:2: printed nothing", 1, true), msg)
    ok, msg = run({ "for i = 1, 2 do print(i) end   --> 1" })
    assert.is_false(ok)
    assert.truthy(msg:find("printed 2 times", 1, true), msg)
  end)

  it("fails a block that raises an error, with the document's line", function()
    local ok, msg = run({ "local t = nil", "", "print(t.x)" })
    assert.is_false(ok)
    assert.truthy(msg:find("doc.md:4: attempt to index", 1, true), msg)
  end)

  it("runs each block in an empty directory of its own, on the simulator", function()
    local ok, msg = run({
      'local luacuda = require "luacuda"',
      'print(io.open("README.md"))     --> nil ...',
      'print(luacuda.backend())        --> sim ...',
    })
    assert(ok, msg)
  end)

  it("skips a block marked norun with its reason, and refuses a marker without one", function()
    local b = block_of({ "error('never run')" }, "<!-- norun: needs a GPU -->\n\n")
    assert.equal("needs a GPU", b.skip)
    b = block_of({ "print(1)" }, "<!-- norun -->\n")
    assert.is_nil(b.skip)
    local ok, msg = D.run(b)
    assert.is_false(ok)
    assert.truthy(msg:find("without a reason", 1, true), msg)
  end)

  it("refuses a --> line with no code line above it", function()
    local ok, msg = D.run(block_of({ "--> 1" }))
    assert.is_false(ok)
    assert.truthy(msg:find("no code line above", 1, true), msg)
  end)
end)

-- DEVELOPERS.md ("Running the specs") says how to run busted with Lua 5.4
-- on Debian; these check what it says, where Debian's busted is installed.
describe("busted and Lua 5.4, as DEVELOPERS.md says", function()
  local BUSTED = "/usr/bin/busted"
  local developers = assert(io.open("DEVELOPERS.md")):read("a")

  -- a spec file in a new directory that prints the interpreter's version
  local function version_spec()
    local dir = S.tmpdir()
    local f = assert(io.open(dir .. "/v_spec.lua", "w"))
    f:write('describe("v", function() it("v", function() print("VERSION=" .. _VERSION) end) end)\n')
    f:close()
    return dir
  end
  local function busted_version(command)
    local dir = version_spec()
    local ok, out = S.sh(("cd %s && %s v_spec.lua"):format(dir, command))
    os.execute("rm -rf " .. dir)
    assert(ok, out)
    return out:match("VERSION=(Lua [%d.]+)")
  end

  it("lua5.4 /usr/bin/busted runs the specs in Lua 5.4", function()
    assert.truthy(developers:find("lua5.4 /usr/bin/busted", 1, true), "DEVELOPERS.md gives the command")
    if not S.exists(BUSTED) then return pending("no " .. BUSTED .. " here (not Debian's busted)") end
    assert.equal("Lua 5.4", busted_version("lua5.4 " .. BUSTED))
  end)

  it("plain busted runs the interpreter named lua: Lua 5.1 on Debian 12", function()
    assert.truthy(developers:find("Lua 5.1 on Debian 12", 1, true), "DEVELOPERS.md says so")
    if not S.exists(BUSTED) then return pending("no " .. BUSTED .. " here (not Debian's busted)") end
    assert.equal("#!/usr/bin/env lua", assert(io.open(BUSTED)):read("l"))
    local ok, lua = S.sh("lua -e 'io.write(_VERSION)'")
    if not ok then return pending("no interpreter named lua here") end
    assert.equal(lua, busted_version("busted"))
    local debian = io.open("/etc/debian_version")
    if debian and debian:read("l"):match("^12%.") then assert.equal("Lua 5.1", lua) end
    if debian then debian:close() end
  end)
end)
