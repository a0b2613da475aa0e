-- tools/spec_shards.lua N [busted argument...]: the spec files in N lists of
-- about equal running time, one line each (files separated by spaces), for
-- the busted processes of tools/run_shards.sh. The weights are the seconds
-- each spec took in a plain run (make check) on the development machine; a
-- spec not listed counts DEFAULT seconds (to refresh spec/timings.lua, time
-- `make check BUSTED_ARGS=spec/x_spec.lua` for each spec file, one at a
-- time). Files are the arguments ending in .lua, or every
-- spec/*_spec.lua; a --exclude-pattern=P argument leaves out the files
-- whose name matches the Lua pattern P, as busted does; other arguments
-- are busted's options, not files.
local SECONDS = require("spec.timings")
local DEFAULT = 2

local n = math.tointeger(tonumber(arg[1] or ""))
if not n or n < 1 then
  io.stderr:write("usage: lua5.4 tools/spec_shards.lua N [spec files]\n")
  os.exit(2)
end
local given, excluded = {}, {}
for i = 2, #arg do
  local a = arg[i]
  if a:match("%.lua$") then
    given[#given + 1] = a
  elseif a:match("^%-%-exclude%-pattern=") then
    excluded[#excluded + 1] = a:match("=(.*)")
  end
end
if #given == 0 then
  local p = assert(io.popen("ls spec/*_spec.lua"))
  for f in p:lines() do given[#given + 1] = f end
  p:close()
end
local files = {}
for _, f in ipairs(given) do
  local name, keep = f:match("([^/]+)$"), true
  for _, pat in ipairs(excluded) do keep = keep and not name:match(pat) end
  if keep then files[#files + 1] = f end
end

-- the longest first, each to the list with the least time so far
local function weight(f) return SECONDS[f:match("([^/]+)%.lua$")] or DEFAULT end
table.sort(files, function(a, b)
  local wa, wb = weight(a), weight(b)
  if wa ~= wb then return wa > wb end
  return a < b
end)
local lists, total = {}, {}
for i = 1, n do lists[i], total[i] = {}, 0 end
for _, f in ipairs(files) do
  local best = 1
  for i = 2, n do if total[i] < total[best] then best = i end end
  table.insert(lists[best], f)
  total[best] = total[best] + weight(f)
end
for i = 1, n do
  if #lists[i] > 0 then print(table.concat(lists[i], " ")) end
end
