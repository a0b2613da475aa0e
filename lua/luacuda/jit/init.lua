-- luacuda.jit: Lua functions as kernels. The function's own source text
-- (found through debug.getinfo: its file, or the string chunk it was
-- loaded from) is parsed (jit/lexer, jit/parser) and translated to CUDA
-- C++ (jit/codegen, with the vocabulary of jit/vocab) for the types of the
-- arguments of a launch, then compiled by luacuda.compile, whose caches
-- and launch checks it shares. One compile per signature: the arguments'
-- types, and the values of the upvalues and globals the translation read.

--- @module luacuda

local core = require "luacuda.core"
local lexer = require "luacuda.jit.lexer"
local parser = require "luacuda.jit.parser"
local codegen = require "luacuda.jit.codegen"
local vocab = require "luacuda.jit.vocab"
local T = require "luacuda.jit.types"
local diskcache = require "luacuda.jit.diskcache"

local A = core.attr

local M = {}

--- The device vocabulary of Lua kernels (@{jit}), Numba's spelled for Lua:
-- `K.grid(1)`, `K.threadIdx.x` (from 1), `K.syncthreads()`,
-- `K.shared.array(shape, dtype)`, `K.local_array`, `K.atomic.add`, the warp
-- functions and `K.random` (docs/guide/jit.md has the list). Its names exist
-- in kernels only: calling one on the host is an error that says so.
-- @field kernel
-- @usage local K = luacuda.kernel
-- local k = luacuda.jit(function(x) local i = K.grid(1) if i <= #x then x[i] = i end end)
M.kernel = vocab.K

local function fail(fmt, ...) error(("luacuda.jit: " .. fmt):format(...), 0) end

-- ---- the source of a function ------------------------------------------------

local sources = setmetatable({}, { __mode = "k" })   -- fn -> {ast, chunk, fn}
local texts = setmetatable({}, { __mode = "k" })     -- fn -> {text, chunk, first, last, params}

local read_file = diskcache.read_all

-- the lines first..last of text
local function lines_of(text, first, last)
  local out, n = {}, 0
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if n >= first and n <= last then out[#out + 1] = l end
    if n > last then break end
  end
  return table.concat(out, "\n")
end

-- The text of fn's lines (not parsed yet), the name of its chunk, its
-- lines and its parameters' names; an error when fn has no Lua source.
local function text_of(fn)
  local t = texts[fn]
  if t then return t end
  local info = debug.getinfo(fn, "Su")
  if info.what == "C" then fail("a C function has no Lua source to translate") end
  if info.what == "main" then fail("a chunk is not a kernel: give luacuda.jit a function") end
  if info.isvararg then
    fail("%s:%d: varargs (...) are not in the kernel subset: name each parameter", info.short_src, info.linedefined)
  end
  local src = info.source
  local text
  if src:sub(1, 1) == "@" then
    text = read_file(src:sub(2))
    if not text then fail("the source of the function (%s) cannot be read", src:sub(2)) end
  elseif src:sub(1, 1) == "=" then
    fail("the source of the function cannot be found (its chunk is %s: stripped bytecode, "
      .. "or a chunk loaded with a name of its own): load it from source text or a file", src)
  else
    text = src
  end
  local params = {}
  for k = 1, info.nparams do params[k] = debug.getlocal(fn, k) end
  t = { text = lines_of(text, info.linedefined, info.lastlinedefined), chunk = info.short_src,
    first = info.linedefined, last = info.lastlinedefined, params = params }
  texts[fn] = t
  return t
end

-- The syntax tree of fn's own source, and the name of its chunk.
local function source_of(fn)
  local s = sources[fn]
  if s then return s end
  local t = text_of(fn)
  local chunk, first, last, names = t.chunk, t.first, t.last, t.params
  local ok, toks = pcall(lexer.tokens, t.text, chunk, first)
  if not ok then fail("%s", toks) end
  -- the function: a 'function' on its first line whose parameters are fn's
  local found, why
  for i = 1, #toks.kind do
    if toks.line[i] > first then break end
    if toks.kind[i] == "function" then
      local okp, ast = pcall(parser.function_at, toks, i, chunk)
      if okp and ast.lastline == last and #ast.params == #names then
        local same = true
        for k, n in ipairs(names) do if ast.params[k] ~= n then same = false end end
        if same then
          if found then
            fail("%s:%d: two functions of the same parameters on one line: put the kernel on a line of its own", chunk, first)
          end
          found = ast
        end
      elseif not okp then
        why = why or ast
      end
    end
  end
  if not found then
    fail("the source of the function cannot be found in %s at line %d%s", chunk, first, why and (": " .. why) or "")
  end
  s = { ast = found, chunk = chunk, fn = fn }
  sources[fn] = s
  return s
end

-- ---- names the kernel reads from the host ------------------------------------

local function upvalue(fn, name)
  for i = 1, math.huge do
    local n, v = debug.getupvalue(fn, i)
    if n == nil then return false end
    if n == name then return true, v end
  end
end

-- the index of fn's upvalue `name`, or nil
local function upvalue_index(fn, name)
  for i = 1, math.huge do
    local n = debug.getupvalue(fn, i)
    if n == nil then return nil end
    if n == name then return i end
  end
end

-- the value of the free name `name` of fn: its upvalue, else its global;
-- then where it was found: the upvalue's index, or the globals' table
local function free_value(fn, name)
  local found, v = upvalue(fn, name)
  if found then return v, upvalue_index(fn, name) end
  local has_env, env = upvalue(fn, "_ENV")
  if has_env and type(env) == "table" then return env[name], env end
  return nil
end

-- ---- specialisations ------------------------------------------------------------

local Jit = { __name = "luacuda.jit" }
local JitMT = { __name = "luacuda.jit", __mode = "k" }   -- k[cfg] keeps its launch while cfg lives
local KERNELS = setmetatable({}, { __mode = "k" })   -- the jit kernels (their metatable is hidden)

local function dtype_of(a)
  local dt = A(a, "dtype")
  if not T.CTYPE[dt] then
    return nil, dt
  end
  -- C-contiguous arrays are read without their strides (Numba's layout
  -- 'C'); any other layout through them ('A')
  return { array = true, dtype = dt, ndim = #A(a, "shape"), contig = a:is_c_contiguous() }
end

-- the types of a launch's arguments
local function arg_types(k, args, n)
  local types, key = {}, {}
  local sig = rawget(k, "signature")
  for i = 1, n do
    local a = args[i]
    local want = sig and (sig[i] or sig[k.params[i]])
    local t
    if core.type(a) == "array" then
      local why
      t, why = dtype_of(a)
      if not t then fail("argument %d ('%s') is a %s array, which a Lua kernel cannot read", i, k.params[i] or "?", why) end
      key[i] = T.array_key(t)
    elseif math.type(a) == "integer" then t = "int64"
    elseif math.type(a) == "float" then t = "float64"
    elseif type(a) == "boolean" then t = "bool"
    else
      fail("argument %d ('%s') is %s: a Lua kernel takes arrays, numbers and booleans",
        i, k.params[i] or "?", core.type(a) or type(a))
    end
    if want then
      if type(t) == "table" then fail("signature: argument %d ('%s') is an array", i, k.params[i] or "?") end
      if want == "bool" and t ~= "bool" or want ~= "bool" and t == "bool" then
        fail("signature: argument %d ('%s') is %s, not %s", i, k.params[i] or "?", T.describe(t), want)
      end
      t = want
    end
    types[i] = t
    key[i] = key[i] or t
  end
  return types, table.concat(key, ",")
end

-- whether what a specialisation read from the host is still what it was
local getupvalue = debug.getupvalue
local function deps_hold(deps)
  for i = 1, #deps do
    local d = deps[i]
    local now
    if d.env then now = d.env[d.name] else now = select(2, getupvalue(d.fn, d.up)) end
    if now ~= d.value then return false end
  end
  return true
end

local DEFAULT_NAME = "lua_kernel"

-- LUACUDA_VERBOSE=1: a line on stderr for each translation, as for each
-- compile that misses the cache (luacuda checked the value at require)
local VERBOSE = (tonumber(os.getenv("LUACUDA_VERBOSE") or "0") or 0) ~= 0

-- ---- translations on disk ------------------------------------------------------

-- The key of a translation is the kernel's Lua text and chunk, its name and
-- options, the signature, then every host value the translation read (by
-- its path of names from the kernel's function, "f.STEP" for the upvalue
-- STEP of the function f the kernel calls) as text. A function's text is
-- its source; the vocabulary's and math's values are their names.

local function unwrap(f)
  if type(f) == "table" and KERNELS[f] then return f.fn end
  return f
end

local names_of_static
local function static_name(v)
  if not names_of_static then
    names_of_static = { [math] = "math", [print] = "print" }
    if package.loaded.luacuda then names_of_static[package.loaded.luacuda] = "luacuda" end
    for key, f in pairs(math) do names_of_static[f] = names_of_static[f] or "math." .. key end
    for v2, name in pairs(vocab.NAMES) do names_of_static[v2] = name end
  end
  return names_of_static[v]
end

-- a host value as text, or nil when it has none that another process
-- could compare (a table of the program's, a function without source)
local function value_text(v)
  local mt = math.type(v)
  if mt == "integer" then return "i" .. v end
  if mt == "float" then return ("f%a"):format(v) end
  if type(v) == "boolean" then return tostring(v) end
  local name = static_name(v)
  if name then return "s" .. name end
  v = unwrap(v)
  if type(v) == "function" then
    local ok, t = pcall(text_of, v)
    if ok then return ("l%s:%d:%d\n%s"):format(t.chunk, t.first, t.last, t.text) end
  end
  return nil
end

-- the first part of a translation's key: what it is of
local function disk_base(k, key)
  local t = text_of(k.fn)
  return ("luacuda.jit %s boundscheck=%s\nsignature %s\n%s:%d:%d\n%s"):format(k.name,
    tostring(k.boundscheck), key, t.chunk, t.first, t.last, t.text)
end

-- the value now of dependency `desc` ("f.g.NAME") of fn, as a dependency
-- record (a launch checks it), or nil when the path is broken
local function resolve(fn, desc)
  local names = {}
  for n in desc:gmatch("[^.]+") do names[#names + 1] = n end
  for i = 1, #names - 1 do
    fn = unwrap((free_value(fn, names[i])))
    if type(fn) ~= "function" then return nil end
  end
  local name = names[#names]
  local v, where = free_value(fn, name)
  if v == nil then return nil end
  return { fn = fn, name = name, value = v,
    up = type(where) == "number" and where or nil, env = type(where) == "table" and where or nil }
end

-- the translation on disk for k's base key, with its dependencies now
local function disk_get(k, base)
  local index = diskcache.get("dependencies of\n" .. base)
  if not index then return nil end
  local deps, parts = {}, { base, "values" }
  for desc in index:gmatch("[^\n]+") do
    local d = resolve(k.fn, desc)
    local text = d and value_text(d.value)
    if not text then return nil end
    deps[#deps + 1] = d
    parts[#parts + 1] = desc .. "=" .. text
  end
  local src = diskcache.get(table.concat(parts, "\n"))
  if not src then return nil end
  return src, deps
end

-- keep a translation on disk, when every value it read has a text
local function disk_put(base, src, deps)
  local descs, parts = {}, { base, "values" }
  for i, d in ipairs(deps) do
    local text = d.path and value_text(d.value)
    if not text then return end
    local p = { table.unpack(d.path) }
    p[#p + 1] = d.name
    descs[i] = table.concat(p, ".")
    parts[#parts + 1] = descs[i] .. "=" .. text
  end
  diskcache.put("dependencies of\n" .. base, table.concat(descs, "\n"))
  diskcache.put(table.concat(parts, "\n"), src)
end

-- translate k's function for argument types `types` (their signature
-- string `key`): the whole source
local function translate_now(k, types, key)
  local deps, devfuncs, devcache, active, ndev = {}, {}, {}, {}, 0
  -- the names by which each function was reached from the kernel's (its
  -- path), for the disk cache to find the same values in another process
  local paths = { [k.fn] = {} }
  local unit = {
    boundscheck = k.boundscheck, VOCAB = vocab.VOCAB, ARRAY_MAKERS = vocab.ARRAY_MAKERS, DIM3 = vocab.DIM3,
  }
  function unit.static_table(t)
    return t == math or t == package.loaded.luacuda or vocab.TABLES[t] or false
  end
  unit.unwrap = unwrap
  function unit.free(ctx, name, line)
    local fn = ctx.info.fn
    -- each name once (every walk reads it again): a launch checks them all
    local seen = deps[fn] or {}
    deps[fn] = seen
    if seen[name] then return seen[name].value end
    local v, where = free_value(fn, name)
    if v == nil then
      ctx:fail(line, "'%s' is nil: not a local, an upvalue or a global with a value", name)
    end
    local d = { fn = fn, name = name, value = v, path = paths[fn],
      up = type(where) == "number" and where or nil, env = type(where) == "table" and where or nil }
    seen[name] = d
    deps[#deps + 1] = d
    return v
  end
  function unit.device_call(ctx, f, name, args, line)
    local at, key = {}, { tostring(f) }
    for i, v in ipairs(args) do
      v = ctx:rvalue(v, line)
      if type(v.ty) == "table" then
        if v.ty.dims then ctx:fail(line, "a shared or local array cannot be passed to a function") end
        at[i] = v.ty
        key[#key + 1] = T.array_key(v.ty)
      elseif v.ty == "unknown" then
        return { code = "", ty = "unknown" }
      elseif v.ty == "void" then
        ctx:fail(line, "an argument of '%s' gives no value", name)
      else
        at[i] = T.concrete(v.ty)
        key[#key + 1] = at[i]
      end
      args[i] = v
    end
    key = table.concat(key, ",")
    local d = devcache[key]
    if not d then
      if active[f] then ctx:fail(line, "'%s' calls itself: recursion is not in the kernel subset", name) end
      local info = source_of(f)
      if paths[f] == nil then
        -- a function reached by a plain name (not a field of a table) has a path
        local via = paths[ctx.info.fn]
        paths[f] = false
        if via and not name:find(".", 1, true) then
          local p = { table.unpack(via) }
          p[#p + 1] = name
          paths[f] = p
        end
      end
      if #info.ast.params ~= #args then
        ctx:fail(line, "'%s' takes %d arguments, got %d", name, #info.ast.params, #args)
      end
      ndev = ndev + 1
      local cname = ("lcj_%s_%d"):format((name:gsub("[^%w_]", "_")), ndev)
      active[f] = true
      local text, rets = codegen.function_source(unit, info, at, false, cname)
      active[f] = nil
      devfuncs[#devfuncs + 1] = text
      d = { cname = cname, rets = rets }
      devcache[key] = d
    end
    local parts = {}
    for i, v in ipairs(args) do
      parts[i] = type(v.ty) == "table" and v.code
        or (v.ty == at[i] and v.code or ("(%s)(%s)"):format(T.CTYPE[at[i]], v.code))
    end
    local call = ("%s(%s)"):format(d.cname, table.concat(parts, ", "))
    local rets = d.rets
    if #rets == 0 then return { code = call, ty = "void" } end
    if #rets == 1 then return { code = call, ty = rets[1] } end
    local multi = {}
    for i, t in ipairs(rets) do multi[i] = { code = ("%s.v%d"):format(call, i), ty = t } end
    return { code = multi[1].code, ty = rets[1], multi = multi, struct = d.cname .. "_ret", call = call }
  end
  local started = os.clock()
  local info = source_of(k.fn)
  local text = codegen.function_source(unit, info, types, true, k.name)
  local head = {}
  for _, t in ipairs(types) do
    if type(t) == "table" and t.dtype == "float16" then head.fp16 = "#include <cuda_fp16.h>" end
    if type(t) == "table" and t.dtype == "bfloat16" then head.bf16 = "#include <cuda_bf16.h>" end
  end
  local src = table.concat({ head.fp16 or "", head.bf16 or "", codegen.RUNTIME,
    table.concat(devfuncs, "\n"), text }, "\n")
  if VERBOSE then
    io.stderr:write(("luacuda.jit: translated %s for %s (%.1f ms)\n"):format(k.name, key,
      (os.clock() - started) * 1e3))
  end
  return src, deps
end

-- functions of each module of the translator: its version is their text's hash
local TRANSLATOR = { lexer.tokens, parser.function_at, codegen.function_source, T.promote,
  rawget(vocab.K, "grid"), diskcache.hash, translate_now }

-- the translation for these types: from the disk when it is there; the
-- base of its disk key too when it is not (kept once it compiles)
local function translate(k, types, key)
  if not diskcache.enabled(TRANSLATOR, codegen.RUNTIME) then return translate_now(k, types, key) end
  local base = disk_base(k, key)
  local src, deps = disk_get(k, base)
  if src then return src, deps end
  src, deps = translate_now(k, types, key)
  return src, deps, base
end

-- whether array a fits the array type want, at argument i of a specialisation
-- whose arrays last seen are `seen` (an array seen there has its dtype and
-- rank still)
local function array_fits(a, want, seen, i)
  if core.type(a) ~= "array" or A(a, "dtype") ~= want.dtype or A(a, "ndim") ~= want.ndim
    or a:is_c_contiguous() ~= want.contig then
    return false
  end
  seen[i] = a
  return true
end

-- s.check(...): whether the arguments fit specialisation s and what it read
-- from the host is still what it was; s.launcher(cfg, slow): k[cfg]'s
-- function while s is the last, the same checks inline before s's launch
-- with cfg, and slow(...) where they fail. Both are written out for s (a
-- launch's fast path: no table, no loop, one Lua call): each upvalue s read
-- is an upvalue of theirs too (debug.upvaluejoin), each global read from
-- its table
local function make_check(s)
  local params, tests, shared = {}, {}, {}
  for i, want in ipairs(s.sigs) do
    local a = "a" .. i
    params[i] = a
    if type(want) == "table" then
      tests[#tests + 1] = ("%s ~= seen[%d] and not array_fits(%s, sigs[%d], seen, %d)"):format(a, i, a, i, i)
    elseif want == "number" or want == "boolean" then
      tests[#tests + 1] = ('type(%s) ~= "%s"'):format(a, want)
    else
      tests[#tests + 1] = ('mtype(%s) ~= "%s"'):format(a, want)
    end
  end
  for i, d in ipairs(s.deps) do
    if d.env then
      tests[#tests + 1] = ("deps[%d].env[deps[%d].name] ~= deps[%d].value"):format(i, i, i)
    else
      shared[#shared + 1] = "up" .. i
      tests[#tests + 1] = ("up%d ~= deps[%d].value"):format(i, i)
    end
  end
  local list = table.concat(params, ", ")
  local fails = {}
  for i, t in ipairs(tests) do fails[i] = "if " .. t .. " then return %s end" end
  fails = table.concat(fails, "\n")
  local code = table.concat({
    "local sigs, seen, deps, array_fits, mtype, launch, kernel = ...",
    "local select, type = select, type",
    #shared > 0 and ("local " .. table.concat(shared, ", ")) or "",
    ("local function check(%s)"):format(list), fails:gsub("%%s", "false"), "return true end",
    "local function launcher(cfg, slow) return function(...)",
    #params > 0 and ("local %s = ..."):format(list) or "",
    ("if select('#', ...) ~= %d then return slow(...) end"):format(#params),
    (fails:gsub("%%s", "slow(...)")),
    ("return launch(kernel, cfg%s)"):format(#params > 0 and ", " .. list or ""),
    "end end",
    "return check, launcher" }, "\n")
  local check, launcher = assert(load(code, "=luacuda.jit.check"))(s.sigs, s.seen, s.deps, array_fits,
    math.type, s.launch, s.kernel)
  for _, f in ipairs({ check, launcher }) do
    for i = 1, math.huge do
      local name = debug.getupvalue(f, i)
      if name == nil then break end
      local k = name:match("^up(%d+)$")
      if k then
        local d = s.deps[tonumber(k)]
        debug.upvaluejoin(f, i, d.fn, d.up)
      end
    end
  end
  return check, launcher
end

-- the specialisation of k for these arguments, compiled at its first use
local function specialise(k, args, n)
  if n ~= #k.params then
    fail("the kernel takes %d argument%s (%s), got %d", #k.params, #k.params == 1 and "" or "s",
      table.concat(k.params, ", "), n)
  end
  local types, key = arg_types(k, args, n)
  local list = k.specs[key]
  if list then
    for _, s in ipairs(list) do
      if deps_hold(s.deps) then return s end
    end
  end
  local src, deps, base = translate(k, types, key)
  local ok, m = pcall(core.compile, src, { name = k.name .. ".cu", options = rawget(k, "options") })
  if not ok then
    local numbered, ln = {}, 0
    for l in (src .. "\n"):gmatch("(.-)\n") do
      ln = ln + 1
      numbered[ln] = ("%4d  %s"):format(ln, l)
    end
    fail("the translation of '%s' does not compile (a bug of luacuda.jit: please report it): %s\nthe generated source:\n%s",
      k.name, tostring(m):gsub("^luacuda%.compile: ", ""), table.concat(numbered, "\n"))
  end
  if base then disk_put(base, src, deps) end
  local kernel = m:get(k.name)
  local s = { key = key, deps = deps, kernel = kernel, launch = kernel.launch, source = src, types = types,
    sigs = {}, seen = setmetatable({}, { __mode = "v" }) }
  local sig = rawget(k, "signature")
  for i, t in ipairs(types) do
    -- what an argument must be to use this specialisation again
    if type(t) == "table" then s.sigs[i] = t
    elseif sig and (sig[i] or sig[k.params[i]]) then s.sigs[i] = t == "bool" and "boolean" or "number"
    else s.sigs[i] = t == "bool" and "boolean" or t == "int64" and "integer" or "float" end
  end
  s.n = #types
  s.check, s.launcher = make_check(s)
  k.specs[key] = k.specs[key] or {}
  table.insert(k.specs[key], s)
  k.order[#k.order + 1] = s
  k.last = s
  return s
end

-- the specialisation for a launch's arguments
local function specialisation(k, ...)
  local s = rawget(k, "last")
  if s and select("#", ...) == s.n and s.check(...) then return s end
  local args = table.pack(...)
  s = specialise(k, args, args.n)
  k.last = s
  return s
end

-- ---- the kernel object ---------------------------------------------------------------

--- A Lua function compiled as a kernel by @{jit}.
-- @type JitKernel

--- `k:launch({grid =, block = [, stream =] [, shared =]}, ...)`: launches the
-- kernel for these arguments, translating and compiling it at the first launch
-- with their types. `k[{grid, block [, stream [, shared]]}](...)` is the same;
-- `k[cfg]` is one function for each configuration table `cfg` (kept while
-- `cfg` lives; a launch through it with arguments of other types gives the
-- next `k[cfg]` in its place), which reads the table at each launch.
-- @function JitKernel:launch
-- @tparam table config as a compiled kernel's launch
-- @param ... the arguments: arrays, numbers, booleans
-- @raise `luacuda.jit: <file>:<line>: <cause>` for what is outside the kernel
-- subset; the compiled kernel's launch errors
-- @usage local K = luacuda.kernel
-- local fill = luacuda.jit(function(x, v) local i = K.grid(1) if i <= #x then x[i] = v end end)
-- local x = luacuda.device_array(10, "float32")
-- fill:launch({grid = 1, block = 32}, x, 1.5)
function Jit.launch(k, cfg, ...)
  if not KERNELS[k] then fail("launch: a jit kernel expected") end
  if k.device then fail("'%s' is a device function (device = true): call it from a kernel", k.name) end
  local s = specialisation(k, ...)
  return s.launch(s.kernel, cfg, ...)
end

--- `k:source(...)`: the CUDA C++ generated for the types of these arguments
-- (translated now, not compiled, and not read from the disk cache), for
-- reading and debugging.
-- @function JitKernel:source
-- @param ... arguments as for a launch
-- @treturn string the source
-- @raise `luacuda.jit: <file>:<line>: <cause>` for what is outside the kernel subset;
-- a wrong number of arguments, an argument of no kernel type
-- @usage local K = luacuda.kernel
-- local k = luacuda.jit(function(x) x[K.grid(1)] = 0 end)
-- print(k:source(luacuda.device_array(4, "int32")))
function Jit.source(k, ...)
  if not KERNELS[k] then fail("source: a jit kernel expected") end
  local args = table.pack(...)
  if args.n ~= #k.params then
    fail("the kernel takes %d argument%s, got %d", #k.params, #k.params == 1 and "" or "s", args.n)
  end
  local types, key = arg_types(k, args, args.n)
  return (translate_now(k, types, key))
end

--- `k:specializations()`: the signatures compiled so far, in order, each a
-- string of the arguments' types (`"float64,float32:1,float32:1"`: a
-- float64 scalar, then two 1-d float32 arrays, C-contiguous; an array of
-- any other layout, read through its strides, is `"float32:2:A"`).
-- @function JitKernel:specializations
-- @treturn table a list of strings
-- @raise `luacuda.jit: specializations: a jit kernel expected` when called on anything else
-- @usage local K = luacuda.kernel
-- local k = luacuda.jit(function(x) x[K.grid(1)] = 0 end)
-- k[{1, 4}](luacuda.device_array(4, "int32"))
-- print(k:specializations()[1])  -- int32:1
function Jit.specializations(k)
  if not KERNELS[k] then fail("specializations: a jit kernel expected") end
  local out = {}
  for i, s in ipairs(k.order) do out[i] = s.key end
  return out
end

--- @section end

-- k[cfg]'s function: the last specialisation's launcher, or where there is
-- none yet, slow. slow finds (or compiles) the specialisation that the
-- arguments fit, launches it, and makes its launcher k[cfg] where it was
-- another's; a launcher whose checks fail calls slow.
local function configured(k, cfg)
  local held, slow = rawget(k, "last"), nil   -- held: the specialisation k[cfg] launches
  slow = function(...)
    local s = specialisation(k, ...)
    if s ~= held then
      held = s
      rawset(k, cfg, s.launcher(cfg, slow))
    end
    return s.launch(s.kernel, cfg, ...)
  end
  local launch = held and held.launcher(cfg, slow) or slow
  rawset(k, cfg, launch)
  return launch
end

JitMT.__index = function(k, key)
  if type(key) == "table" then
    -- the compiled kernel's launch, with this configuration (either form):
    -- one function for each configuration table, kept in k itself (its
    -- keys are weak) so that a loop of launches indexing it again finds it
    -- without this call; it reads the table at each launch
    if k.device then fail("'%s' is a device function (device = true): call it from a kernel", k.name) end
    return configured(k, key)
  end
  local m = Jit[key]
  if m then return m end
  if key == "name" then return rawget(k, "name") end
  fail("a jit kernel has no '%s': launch it with k[{grid, block}](...) or k:launch({grid =, block =}, ...)", tostring(key))
end
JitMT.__call = function(k)
  fail("'%s' is launched with k[{grid, block}](...) or k:launch({grid =, block =}, ...)", k.name)
end
JitMT.__tostring = function(k) return ("luacuda.jit(%s)"):format(k.name) end
JitMT.__metatable = false

-- the compile options of a kernel: on the simulator, line tables, so that a
-- fault it catches names the Lua line (through the #line directives)
local function options_for(opts)
  local o = {}
  if core.backend() == "sim" then o[#o + 1] = "-lineinfo" end
  if opts.fastmath then o[#o + 1] = "-use_fast_math" end
  return #o > 0 and o or nil
end

local OPTS = { device = true, signature = true, fastmath = true, boundscheck = true, name = true }

--- A kernel from a Lua function (Numba's `@cuda.jit`, for Lua): the function,
-- written in the kernel subset of Lua (docs/guide/jit.md), is translated to
-- CUDA C++ for the types of its arguments at its first launch with them, and
-- compiled by @{compile}. Everything is 1-based, as in Lua; `luacuda.kernel`
-- is the vocabulary (`K.grid(1)`, `K.shared.array`, `K.atomic.add`...).
-- Numbers and booleans the function reads from upvalues and globals become
-- constants of the compiled code; a new value compiles it again.
-- @function jit
-- @tparam function fn a Lua function loaded from source (a file or a string chunk)
-- @tparam[opt] table opts `{name =, signature =, fastmath =, boundscheck =, device =}`:
-- the kernel's name (a C identifier), scalar types by position or parameter
-- name (`{"float32"}`, `{a = "float32"}`), fast math, bounds checks on
-- every index (a failed one fails the launch naming the array, the index
-- and the Lua line), a device function (called from kernels, not launched)
-- @treturn JitKernel the kernel
-- @raise `luacuda.jit: <cause>`: a C function or one whose source cannot be
-- found (stripped bytecode); bad options
-- @usage local K = luacuda.kernel
-- local saxpy = luacuda.jit(function(a, x, y)
--   local i = K.grid(1)
--   if i <= #y then y[i] = a * x[i] + y[i] end
-- end)
-- local x = luacuda.to_device(luacuda.arange(8, "float32"))
-- local y = luacuda.to_device(luacuda.ones(8, "float32"))
-- saxpy[{1, 32}](2.0, x, y)
function M.jit(fn, opts)
  if type(fn) ~= "function" then fail("a function expected, got %s", type(fn)) end
  if opts ~= nil and type(opts) ~= "table" then fail("options must be a table, got %s", type(opts)) end
  opts = opts or {}
  for key in pairs(opts) do
    if not OPTS[key] then fail("unknown option '%s'", tostring(key)) end
  end
  local name = opts.name or DEFAULT_NAME
  if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") or name:match("^_") or name:match("^lc") then
    fail("the name must be a C identifier not starting with '_' or 'lc', got %s", tostring(name))
  end
  if opts.signature ~= nil and type(opts.signature) ~= "table" then
    fail("signature must be a table of dtype names, got %s", type(opts.signature))
  end
  for p, t in pairs(opts.signature or {}) do
    if type(t) ~= "string" or not T.CTYPE[t] or t == "float16" or t == "bfloat16" then
      fail("signature: %s for '%s' is not a scalar dtype (bool, int8 ... uint64, float32, float64)",
        tostring(t), tostring(p))
    end
  end
  -- parsed at the first translation (a translation on disk needs none)
  local info = text_of(fn)
  local k = {
    fn = fn, name = name, params = info.params, signature = opts.signature,
    boundscheck = opts.boundscheck and true or false, device = opts.device and true or false,
    options = options_for(opts), specs = {}, order = {},
  }
  KERNELS[k] = true
  return setmetatable(k, JitMT)
end

return M
