-- docs_examples: runs every example (@usage) of the API reference, so that
-- an example cannot go stale while its function changes.
--
--   lua5.4 tools/docs_examples.lua [docs/api/index.html]
--
-- Each example is read back from the generated HTML (LDoc's
-- <pre class="example"> under the entry's anchor), run as a chunk with
-- `luacuda` in scope and print silenced, and must not raise. Run it with
-- LUACUDA_CACHE_DIR set to a scratch directory: one example clears the
-- compile cache. Prints each failure with its entry; exits 1 when any fails.
local html_path = arg[1] or "docs/api/index.html"

local f = assert(io.open(html_path, "rb"))
local html = f:read("a")
f:close()

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
    local chunk, err = load(plain(example), "=" .. anchor .. " (example)", "t", env)
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
  print("docs examples: none found in " .. html_path)
  os.exit(1)
end
if failures > 0 then
  print(("docs examples: %d of %d failed"):format(failures, count))
  os.exit(1)
end
print(("docs examples: %d run, none failed"):format(count))
