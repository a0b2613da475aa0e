-- docs_coverage: does the API reference (docs/api/, made by LDoc from the
-- doc comments) have an entry for every public name, and does every entry
-- name something that exists?
--
--   lua5.4 tools/docs_coverage.lua [docs/api]
--
-- It loads luacuda and walks what a script can reach: the module table
-- (and the table of any other module the reference documents, such as a
-- `luacuda.x` submodule: its page is read, its table required),
-- the methods of each object type (found through the type's metatable,
-- as the module's own code finds them), and the metamethods a user calls
-- (operators, `__close`, `__call`). An entry's anchor in the HTML is its
-- name: `zeros`, `Array:sum` (a method), `Array.shape` (a field: fields
-- are not enumerable, so each documented one is read from a live object).
-- Every entry has an example, and every function's says what it raises.
-- Prints each missing, stale or incomplete entry; exits 1 when there is any.
local luacuda = require "luacuda"

local docs_dir = arg[1] or "docs/api"

-- ---- what the reference documents --------------------------------------

-- The reference's pages: index.html, and with several modules LDoc's
-- modules/*.html.
local function pages(dir)
  local list = {dir .. "/index.html"}
  local ls = io.popen('ls "' .. dir .. '"/modules/*.html 2>/dev/null')
  for path in ls:lines() do list[#list + 1] = path end
  ls:close()
  return list
end

-- module name -> {entry name -> the entry's HTML (from its anchor to the
-- end of its <dd>)}; a page that documents no module (LDoc's list of
-- modules) has none
local function documented_names(dir)
  local modules = {}
  for _, path in ipairs(pages(dir)) do
    local f = assert(io.open(path, "rb"))
    local html = f:read("a")
    f:close()
    local modname = html:match("<h1>Module <code>([^<]+)</code></h1>")
    if modname then
      local names = modules[modname] or {}
      modules[modname] = names
      -- LDoc writes an item's anchor as <a name = "NAME"></a> (with
      -- spaces); a section's as <a name="NAME"></a>, not matched here
      for name, body in html:gmatch('<a name = "([^"]+)"></a>(.-)</dd>') do names[name] = body end
    end
  end
  return modules
end

-- What an entry lacks: every entry has an example; a function or method
-- says what it raises too (LDoc's "Raises:" section, from @raise).
local function lacks(mod, name, body)
  local what = {}
  if not body:find('<pre class="example">', 1, true) then what[#what + 1] = "an example (@usage)" end
  local is_field = name:find(".", 1, true) or type(mod[name]) ~= "function" and not name:find(":", 1, true)
  if not is_field and not body:find("<h3>Raises:</h3>", 1, true) then
    what[#what + 1] = "its errors (@raise)"
  end
  return what
end

-- ---- what exists -------------------------------------------------------

local registry = debug.getregistry()

local function metatable_of(type_name)
  local mt = registry[type_name]
  assert(type(mt) == "table", "no metatable " .. type_name)
  return mt
end

-- The table of methods an __index function reads (its upvalue), for the
-- types whose __index is a function: the first upvalue that is a table
-- of functions.
local function upvalue_methods(fn)
  for i = 1, 255 do
    local name, value = debug.getupvalue(fn, i)
    if name == nil then break end
    if type(value) == "table" and (name == "" or name == "methods") then
      local all_functions = next(value) ~= nil
      for _, v in pairs(value) do
        if type(v) ~= "function" then all_functions = false end
      end
      if all_functions then return value end
    end
  end
  return {}
end

local function index_methods(mt)
  if type(mt.__index) == "table" then return mt.__index end
  if type(mt.__index) == "function" then return upvalue_methods(mt.__index) end
  return {}
end

-- the metamethods a user writes code against (the rest, such as __gc,
-- __name, __tostring, __index for method lookup, are the machinery)
local USER_METAMETHODS = {
  __add = true, __sub = true, __mul = true, __div = true, __idiv = true, __mod = true,
  __pow = true, __unm = true, __len = true, __close = true, __call = true,
}

-- Live objects, made once, for the fields documented on them.
local function live_objects()
  local a = luacuda.zeros({2, 3}, "float32")
  local m = luacuda.compile([==[
    extern "C" __global__ void docs_coverage_probe(float *x) { x[0] = 1.0f; }
  ]==])
  local rec = luacuda.record({{"x", "float32"}, {"n", "int32"}})
  local sa = luacuda.smart_array(luacuda.zeros({2}))
  local ew = luacuda.elementwise("float32 x", "float32 y", "y = x")
  local red = luacuda.reduction("float32 x", "float32 y", "x", "a + b", "y = a", "0")
  -- a Lua kernel hides its metatable: its methods are read from the instance
  local jk = luacuda.jit(function(x) x[1] = 0 end)
  local objects = {
    JitKernel = {instance = jk, mt = {}},
    Array = {instance = a, mt = metatable_of("luacuda.array"),
             methods = registry["luacuda.array.methods"]},
    Stream = {instance = luacuda.default_stream(), mt = metatable_of("luacuda.stream")},
    Event = {instance = luacuda.event(), mt = metatable_of("luacuda.event")},
    DeviceScope = {instance = luacuda.device(luacuda.current_device()),
                   mt = metatable_of("luacuda.device_scope")},
    Registration = {mt = metatable_of("luacuda.registration")},
    Generator = {instance = luacuda.random(1), mt = metatable_of("luacuda.generator")},
    Module = {instance = m, mt = metatable_of("luacuda.module")},
    Kernel = {instance = m.docs_coverage_probe, mt = metatable_of("luacuda.kernel")},
    Record = {instance = rec, mt = metatable_of("luacuda.record")},
    SmartArray = {instance = sa, mt = getmetatable(sa)},
    Elementwise = {instance = ew, mt = getmetatable(ew)},
    Reduction = {instance = red, mt = getmetatable(red)},
  }
  -- luacuda.dist's communicator, where the MPI engine was built (one
  -- process: MPI starts as a singleton)
  local dist = require "luacuda.dist"
  if dist.available then
    objects.Comm = {instance = dist.init(), mt = metatable_of("luacuda.dist.comm")}
  end
  return objects
end

-- A module's public names. luacuda.assert returns luassert's assert: its
-- public names are the assertions it registers (array_equal), found
-- as the ones luassert did not have before it was loaded.
local function module_table(modname)
  if modname ~= "luacuda.assert" then return require(modname) end
  assert(not package.loaded[modname], "luacuda.assert loaded before its names were taken")
  local assertions = require "luassert.namespaces"
  require "luassert"
  local before = {}
  for name in pairs(assertions.assertion or {}) do before[name] = true end
  require(modname)
  local names = {}
  for name, a in pairs(assertions.assertion) do
    if not before[name] then names[name] = a.callback end
  end
  return names
end

-- ---- the comparison ----------------------------------------------------

local modules = documented_names(docs_dir)
modules.luacuda = modules.luacuda or {}
-- a type's entries (Array:sum) may be on any module's page
local documented = {}
for _, names in pairs(modules) do
  for name, body in pairs(names) do
    if name:match("^%u%w*[:.]") then documented[name] = body end
  end
end
local types = live_objects()
local missing, stale, incomplete = {}, {}, {}

-- every public name of each module
local tables = {}
for modname, names in pairs(modules) do
  local ok, mod = pcall(module_table, modname)
  tables[modname] = ok and type(mod) == "table" and mod or {}
  if not ok then stale[#stale + 1] = "the module " .. modname end
  local prefix = modname == "luacuda" and "" or modname .. "."
  for name in pairs(tables[modname]) do
    if not names[name] then missing[#missing + 1] = prefix .. name end
  end
end

-- every method and user-facing metamethod of each type
for tname, t in pairs(types) do
  local methods = t.methods or index_methods(t.mt)
  for name, v in pairs(methods) do
    if type(v) == "function" and name:sub(1, 1) ~= "_" and not documented[tname .. ":" .. name] then
      missing[#missing + 1] = tname .. ":" .. name
    end
  end
  for name in pairs(t.mt) do
    if USER_METAMETHODS[name] and not documented[tname .. ":" .. name] then
      missing[#missing + 1] = tname .. ":" .. name
    end
  end
end

-- Does the entry name something that exists? mod: its module's table.
local function exists(mod, entry)
  local tname, sep, name = entry:match("^(%u%w*)([:.])([%w_]+)$")
  if not tname then return mod[entry] ~= nil end
  local t = types[tname]
  if not t then return false end
  if sep == "." then return t.instance ~= nil and t.instance[name] ~= nil end
  local methods = t.methods or index_methods(t.mt)
  return type(methods[name]) == "function" or
         (name:sub(1, 2) == "__" and t.mt[name] ~= nil) or
         -- a method found only through __index (Kernel's launch)
         (t.instance ~= nil and type(t.instance[name]) == "function")
end

-- every entry: does it still exist, and is it whole?
local count = 0
for modname, names in pairs(modules) do
  local mod = tables[modname]
  local prefix = modname == "luacuda" and "" or modname .. "."
  for entry, body in pairs(names) do
    count = count + 1
    local lacking = lacks(mod, entry, body)
    if #lacking > 0 then
      incomplete[#incomplete + 1] = prefix .. entry .. " (without " .. table.concat(lacking, " and ") .. ")"
    end
    if not exists(mod, entry) then stale[#stale + 1] = prefix .. entry end
  end
end

table.sort(missing)
table.sort(stale)
table.sort(incomplete)
for _, name in ipairs(missing) do print("no entry in the API reference: " .. name) end
for _, name in ipairs(stale) do print("documented but not in the API: " .. name) end
for _, name in ipairs(incomplete) do print("an entry that is not whole: " .. name) end
if #missing + #stale + #incomplete > 0 then
  print(("docs coverage: %d missing, %d stale, %d not whole (%s; the doc comments are "
         .. "in the sources: see config.ld, then make docs)"):format(#missing, #stale,
         #incomplete, docs_dir))
  os.exit(1)
end
print(("docs coverage: %d entries, every public name documented"):format(count))
