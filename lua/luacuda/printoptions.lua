-- printoptions: the settings tostring(array) prints with, NumPy's
-- set_printoptions, get_printoptions and printoptions. They belong to the
-- Lua state: this module's table lives in the state's package.loaded, so
-- two states (two threads of a host program) never see each other's.
local M = {}

--- @module luacuda

local DEFAULTS = { precision = 8, threshold = 1000, linewidth = 75, edgeitems = 3, suppress = false }
local NAMES = "edgeitems, linewidth, precision, suppress, threshold"

local function copy(t)
  local out = {}
  for k, v in pairs(t) do out[k] = v end
  return out
end

local current = copy(DEFAULTS)

-- fail is called by checked, itself called by the public function: level 4
-- is the caller's line.
local function fail(fname, fmt, ...)
  error(("luacuda.%s: " .. fmt):format(fname, ...), 4)
end

-- what a message says a wrong value was: a number or boolean itself
local function shown(v)
  if type(v) == "number" or type(v) == "boolean" then return tostring(v) end
  return type(v)
end

local function integer(v, min, max)
  local n = type(v) == "number" and math.tointeger(v)
  if n and n >= min and (not max or n <= max) then return n end
end

-- Each option's check: the value to store, or nil and what it must be.
local CHECKS = {
  -- digits after the point; "%.<precision>f" takes two digits at most
  precision = function(v) return integer(v, 0, 99), "an integer from 0 to 99" end,
  threshold = function(v)
    if v == math.huge then return v end
    return integer(v, 0), "an integer >= 0, or math.huge (never summarize)"
  end,
  linewidth = function(v) return integer(v, 1), "an integer >= 1" end,
  edgeitems = function(v) return integer(v, 1), "an integer >= 1" end,
  suppress = function(v) if type(v) == "boolean" then return v end return nil, "a boolean" end,
}

-- The options after applying opts, every one checked before any is used:
-- a bad table leaves the options as they were.
local function checked(fname, opts)
  if type(opts) ~= "table" then
    fail(fname, "expects a table of options, got %s", type(opts))
  end
  local out = copy(current)
  for k, v in pairs(opts) do
    local check = CHECKS[k]
    if not check then
      fail(fname, "unknown option %s (the options are %s)",
           type(k) == "string" and ("'" .. k .. "'") or tostring(k), NAMES)
    end
    local value, want = check(v)
    if value == nil then fail(fname, "%s must be %s, got %s", k, want, shown(v)) end
    out[k] = value
  end
  return out
end

--- Sets how arrays print (NumPy's `np.set_printoptions`): the options given
-- change, the others stay. They belong to the Lua state. See
-- @{Array:__tostring}.
-- @function set_printoptions
-- @tparam table opts any of: `precision` (digits after the point, 0 to 99;
-- 8), `threshold` (more elements than this are summarized; 1000;
-- `math.huge`: never), `linewidth` (columns a line holds; 75),
-- `edgeitems` (rows and columns shown at each end of each axis of a
-- summary; 3), `suppress` (`true`: positional notation unless a value
-- reaches 1e8; `false`)
-- @raise `luacuda.set_printoptions: expects a table of options, got <type>`;
-- `unknown option <key> (the options are ...)`; `<option> must be <what>, got <value>`
-- @usage luacuda.set_printoptions{precision = 3, linewidth = 100}
-- print(luacuda.linspace(0, 1, 7))
-- luacuda.set_printoptions{precision = 8, linewidth = 75}
function M.set_printoptions(opts)
  current = checked("set_printoptions", opts)
end

--- The print options now (NumPy's `np.get_printoptions`).
-- @function get_printoptions
-- @treturn table a new table: `{precision =, threshold =, linewidth =,
-- edgeitems =, suppress =}`
-- @raise does not raise
-- @usage print(luacuda.get_printoptions().linewidth)   --> 75
function M.get_printoptions()
  return copy(current)
end

local Scope = { __name = "luacuda.printoptions", __metatable = false }
Scope.__index = Scope

-- the options each open scope replaced, out of the user's reach
local saved_by = setmetatable({}, { __mode = "k" })

-- Closing the scope (a <close> variable going out of scope, or close())
-- puts back the options it replaced, once.
function Scope.close(scope)
  local saved = saved_by[scope]
  if saved then
    current = saved
    saved_by[scope] = nil
  end
end
Scope.__close = Scope.close

function Scope.__tostring(scope)
  return saved_by[scope] and "luacuda.printoptions(open)" or "luacuda.printoptions(closed)"
end

--- Sets print options until the value it returns is closed (NumPy's
-- `np.printoptions`): a `<close>` variable going out of scope, an error
-- leaving it, or its `close()` put back the options it replaced.
-- @function printoptions
-- @tparam table opts as @{set_printoptions}'s
-- @treturn table the scope: `close()` (once; again does nothing), and
-- `__close`
-- @raise `luacuda.printoptions: expects a table of options, got <type>`;
-- `unknown option <key> (the options are ...)`; `<option> must be <what>, got <value>`
-- @usage do
--   local _ <close> = luacuda.printoptions{precision = 2, suppress = true}
--   print(luacuda.array({1 / 3, 1e-9}))
-- end
function M.printoptions(opts)
  local saved = current
  current = checked("printoptions", opts)
  local scope = setmetatable({}, Scope)
  saved_by[scope] = saved
  return scope
end

-- what format.lua prints with (read only)
function M.current()
  return current
end

return M
