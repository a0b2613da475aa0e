-- jit/diskcache: translations (Lua source to C++ text) kept on disk across
-- processes, in the directory of the compile cache (luacuda.cache_dir()).
-- An entry is a file named by the hash of its key and holding the key's
-- whole text, then the translation: a read compares the text, so a hash
-- collision is a miss, never a wrong translation. The key starts with the
-- translator's version: a hash of the translator's own sources, so a
-- changed translator never reads an older one's entries. Where those
-- sources cannot be read (the Lua files built into a host program), the
-- disk cache of translations is off.

local core = require "luacuda.core"

local M = {}

-- FNV-1a over 64 bits, as a hex string (eight bytes at a time: the speed of
-- a hash in Lua is its calls of string.byte)
local P = 1099511628211
function M.hash(s)
  local h, byte, n = -3750763034362895579, string.byte, #s
  for i = 1, n - 7, 8 do
    local a, b, c, d, e, f, g, k = byte(s, i, i + 7)
    h = ((((((((h ~ a) * P ~ b) * P ~ c) * P ~ d) * P ~ e) * P ~ f) * P ~ g) * P ~ k) * P
  end
  for i = (n // 8) * 8 + 1, n do h = (h ~ byte(s, i)) * P end
  return ("%016x"):format(h)
end

-- a whole file's bytes, or nil (also the translator's reader of sources)
local function read_all(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end
M.read_all = read_all

-- the translator's version: the hash of its modules' text (each found
-- through the chunk name of one of its functions) and the C++ runtime;
-- false when a module's text cannot be read
local version
local function translator_version(probes, runtime)
  if version ~= nil then return version end
  local parts = { runtime }
  for _, fn in ipairs(probes) do
    local src = debug.getinfo(fn, "S").source
    local text = src:sub(1, 1) == "@" and read_all(src:sub(2))
    if not text then
      version = false
      return version
    end
    parts[#parts + 1] = text
  end
  version = M.hash(table.concat(parts, "\0"))
  return version
end

-- the directory of the entries, or nil when the cache is off
local function dir_of()
  local d = core.cache_dir and core.cache_dir()
  return d
end

-- Whether the disk cache is on: a cache directory and a known translator.
-- probes are functions of the translator's modules, runtime its C++ text.
function M.enabled(probes, runtime)
  return dir_of() ~= nil and translator_version(probes, runtime) ~= false
end

local function path_of(key)
  return ("%s/jit-%s.cu"):format(dir_of(), M.hash(version .. "\n" .. key))
end

local SEP = "\n// ---- luacuda.jit translation ----\n"

-- the translation kept under key, or nil; the hash of its text follows the
-- key, so a torn or damaged entry is a miss
function M.get(key)
  local whole = read_all(path_of(key))
  if not whole then return nil end
  local head = "/* " .. version .. "\n" .. key .. "\n*/"
  if whole:sub(1, #head) ~= head then return nil end
  local sum, text = whole:sub(#head + 1):match("^ (%x+)" .. SEP:gsub("%p", "%%%0") .. "(.*)$")
  if not text or M.hash(text) ~= sum then return nil end
  return text
end

-- keep text under key: written beside the entry and renamed onto it, so
-- that a reader in another process sees all of it or nothing
function M.put(key, text)
  local path = path_of(key)
  -- a name of this writer's own (a table's address differs between
  -- processes that seeded math.random alike)
  local tmp = ("%s.%s%d.tmp"):format(path, tostring({}):match("%x+$") or "", math.random(1 << 30))
  local f = io.open(tmp, "wb")
  if not f then return end
  local ok = f:write("/* ", version, "\n", key, "\n*/ ", M.hash(text), SEP, text)
  ok = f:close() and ok
  if not ok or not os.rename(tmp, path) then os.remove(tmp) end
end

return M
