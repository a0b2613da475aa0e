-- A busted helper that records every luacuda error caught by pcall/xpcall
-- during a run, with the spec file and the full name of the test that
-- caught it, one tab-separated line each, in $LUACUDA_ERRLOG. Used by
-- tools/errors_catalogue.lua to find a spec for each catalogued error:
--   busted --helper=tools/errors_harvest.lua
dofile("spec/helper.lua")
local busted = require "busted"

local log = assert(io.open(assert(os.getenv("LUACUDA_ERRLOG"), "set LUACUDA_ERRLOG"), "w"))
local current

local function fullname(element)
  local names, file = { element.name or element.descriptor }, nil
  local parent = busted.parent(element)
  while parent do
    if parent.descriptor == "file" then file = parent.name break end
    if parent.name or parent.descriptor then table.insert(names, 1, parent.name or parent.descriptor) end
    parent = busted.parent(parent)
  end
  return table.concat(names, " "), file
end

busted.subscribe({ "test", "start" }, function(element)
  local name, file = fullname(element)
  current = { name = name, file = file }
  return nil, true
end)
busted.subscribe({ "test", "end" }, function()
  current = nil
  return nil, true
end)

local function record(ok, err, ...)
  if not ok and current and type(err) == "string" and err:find("luacuda", 1, true) then
    log:write(current.file, "\t", current.name, "\t", (err:gsub("[\t\n]", " ")), "\n")
    log:flush()
  end
  return ok, err, ...
end

local raw_pcall, raw_xpcall = pcall, xpcall
_G.pcall = function(f, ...) return record(raw_pcall(f, ...)) end
_G.xpcall = function(f, h, ...) return record(raw_xpcall(f, h, ...)) end
