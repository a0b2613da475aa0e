-- Shared by the examples: where the kernels are, and what runs them.
local luacuda = require "luacuda"

local C = {}

C.dir = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."

function C.kernel(file)
  return luacuda.compile_file(C.dir .. "/kernels/" .. file)
end

-- "the sim backend on <cpu>" or the GPU's name
function C.describe()
  local name, why = luacuda.backend()
  if name ~= "sim" then return name .. " backend" end
  local cpu = "this CPU"
  local f = io.open("/proc/cpuinfo")
  if f then
    cpu = f:read("a"):match("model name%s*:%s*([^\n]+)") or cpu
    f:close()
  end
  return ("sim backend on %s (%s)"):format(cpu, why)
end

-- a repeatable pseudo-random sequence in [0, 1)
function C.random(seed)
  local s = seed
  return function()
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  end
end

function C.check(ok, what)
  print(("check: %s (%s)"):format(ok and "ok" or "FAILED", what))
  if not ok then os.exit(1) end
end

return C
