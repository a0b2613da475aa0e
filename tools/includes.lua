-- The include graph of src/: which file reads which, and its cycles.
--
-- A node is a unit, a source file and its header (src/binding/array.c and
-- array.h are src/binding/array). Each `#include "..."` line is resolved
-- as the compiler resolves it (the including file's folder first, then
-- the -I paths its layer is built with, the Makefile's BASE_INC,
-- BACKEND_INC and BINDING_INC), and makes an edge to the unit it names;
-- headers outside src/ (Lua's, kernels/) are not nodes. Two units that
-- reach each other, array.h reading buffer.h whose buffer.c reads
-- array.h's functions back, cannot be understood, built or tested one
-- without the other: a cycle is an error.
--
--   lua5.4 tools/includes.lua [TOP]  prints every cycle of TOP/src (TOP
--                                    default "."); exits 1 if any
--
-- spec/includes_spec.lua loads it (dofile) and calls `cycles`.

local M = {}

-- The -I paths of a file's layer, in the Makefile's order.
local function search_path(file)
  if file:find("^src/base/") then return { "src/base", "kernels" } end
  if file:find("^src/backend/") then return { "src/base", "kernels", "src/backend" } end
  if file:find("^src/binding/") then return { "src", "src/base", "kernels", "src/backend" } end
  return { "src" }                  -- src/dist/, src/luacuda.h
end

-- Whether TOP/path is a file.
local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() end
  return f ~= nil
end

-- a private header, X_internal.h, is the inside of unit X: X's own files
-- read it (base/scan_internal.h, shared by scan.c and its parts)
local function unit(path) return ((path:gsub("_internal%.h$", "")):gsub("%.[ch]$", "")) end

-- Every .c and .h under top/src, sorted, as paths from top.
local function sources(top)
  local files = {}
  local p = assert(io.popen("cd '" .. top .. "' && find src -type f -name '*.[ch]' | sort"))
  for line in p:lines() do files[#files + 1] = line end
  p:close()
  return files
end

-- The edges of top's src/ (top default "."): graph[u][v] = "file:line
-- includes header" (the first such line).
function M.graph(top)
  top = top or "."
  local graph = {}
  for _, file in ipairs(sources(top)) do
    local from = unit(file)
    graph[from] = graph[from] or {}
    local dirs = { file:match("^(.*)/") }
    for _, d in ipairs(search_path(file)) do dirs[#dirs + 1] = d end
    local n = 0
    for line in io.lines(top .. "/" .. file) do
      n = n + 1
      local name = line:match('^%s*#%s*include%s*"([^"]+)"')
      if name then
        for _, d in ipairs(dirs) do
          local path = d .. "/" .. name
          if exists(top .. "/" .. path) then
            local to = unit(path)
            if to ~= from and path:find("^src/") and not graph[from][to] then
              graph[from][to] = ("%s:%d includes %s"):format(file, n, path)
            end
            break
          end
        end
      end
    end
  end
  return graph
end

-- The strongly connected components of more than one unit (Tarjan), each
-- a sorted list of units, the list sorted by its first unit.
local function components(graph)
  local index, low, on, stack, out, count = {}, {}, {}, {}, {}, 0
  local function visit(u)
    count = count + 1
    index[u], low[u] = count, count
    stack[#stack + 1], on[u] = u, true
    local targets = {}
    for v in pairs(graph[u] or {}) do targets[#targets + 1] = v end
    table.sort(targets)
    for _, v in ipairs(targets) do
      if not index[v] then
        visit(v)
        low[u] = math.min(low[u], low[v])
      elseif on[v] then
        low[u] = math.min(low[u], index[v])
      end
    end
    if low[u] == index[u] then
      local comp = {}
      repeat
        local v = table.remove(stack)
        on[v] = nil
        comp[#comp + 1] = v
      until v == u
      if #comp > 1 then
        table.sort(comp)
        out[#out + 1] = comp
      end
    end
  end
  local units = {}
  for u in pairs(graph) do units[#units + 1] = u end
  table.sort(units)
  for _, u in ipairs(units) do
    if not index[u] then visit(u) end
  end
  table.sort(out, function(a, b) return a[1] < b[1] end)
  return out
end

-- The cycles of top's src/: a list of {units = {...}, edges =
-- {"file:line includes header", ...}}, each cycle's units and edges.
function M.cycles(top)
  local graph = M.graph(top)
  local result = {}
  for _, comp in ipairs(components(graph)) do
    local inside, edges = {}, {}
    for _, u in ipairs(comp) do inside[u] = true end
    for _, u in ipairs(comp) do
      for v, why in pairs(graph[u]) do
        if inside[v] then edges[#edges + 1] = why end
      end
    end
    table.sort(edges)
    result[#result + 1] = { units = comp, edges = edges }
  end
  return result
end

-- The cycles as text, one paragraph each.
function M.describe(cycles)
  local lines = {}
  for _, c in ipairs(cycles) do
    lines[#lines + 1] = "cycle: " .. table.concat(c.units, ", ")
    for _, e in ipairs(c.edges) do lines[#lines + 1] = "  " .. e end
  end
  return table.concat(lines, "\n")
end

if arg and arg[0] and arg[0]:find("includes%.lua$") then   -- run, not loaded
  local cycles = M.cycles(arg and arg[1])
  if #cycles > 0 then
    print(M.describe(cycles))
    os.exit(1)
  end
  print("no include cycles")
end

return M
