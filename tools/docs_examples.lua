-- docs_examples: runs every example (@usage) of the API reference, so that
-- an example cannot go stale while its function changes.
--
--   lua5.4 tools/docs_examples.lua [docs/api]
--
-- Each example is read back from the generated HTML (LDoc's
-- <pre class="example"> under the entry's anchor, in index.html and any
-- modules/*.html), run as a chunk with
-- `luacuda` in scope and print silenced, and must not raise. Run it with
-- LUACUDA_CACHE_DIR set to a scratch directory: one example clears the
-- compile cache. Prints each failure with its entry; exits 1 when any fails.
local docs_dir = arg[1] or "docs/api"

local html = {}
local ls = io.popen('ls "' .. docs_dir .. '"/index.html "' .. docs_dir .. '"/modules/*.html 2>/dev/null')
for path in ls:lines() do
  local f = assert(io.open(path, "rb"))
  html[#html + 1] = f:read("a")
  f:close()
end
ls:close()
html = table.concat(html, "\n")

local ENTITIES = {["&lt;"] = "<", ["&gt;"] = ">", ["&amp;"] = "&", ["&quot;"] = '"', ["&#39;"] = "'"}

local function plain(fragment)
  return (fragment:gsub("<[^>]+>", ""):gsub("&#?%w+;", ENTITIES))
end

local env = setmetatable({print = function() end}, {__index = _G})
env.luacuda = require "luacuda"

local count, failures = 0, 0
-- an entry runs from its anchor to the end of its <dd>
for anchor, body in html:gmatch('<a name = "([^"]+)"></a>(.-)</dd>') do
  for example in body:gmatch('<pre class="example">(.-)</pre>') do
    count = count + 1
    -- named by its own text, as load names a string chunk: luacuda.jit reads
    -- a Lua kernel's source from the chunk's name (the failure names the entry)
    local source = plain(example)
    local chunk, err = load(source, source, "t", env)
    local ok = chunk ~= nil
    if ok then ok, err = pcall(chunk) end
    if not ok then
      failures = failures + 1
      print(("the example of %s fails: %s"):format(anchor, tostring(err)))
    end
  end
end
env.luacuda.synchronize()

if count == 0 then
  print("docs examples: none found in " .. docs_dir)
  os.exit(1)
end
if failures > 0 then
  print(("docs examples: %d of %d failed"):format(failures, count))
  os.exit(1)
end
print(("docs examples: %d run, none failed"):format(count))
