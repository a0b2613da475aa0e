-- Every example runs and checks its own result; every example kernel also
-- compiles through NVRTC for the GPU, where NVRTC is present.
local luacuda = require "luacuda"
local S = require "spec.support"

-- The fake driver interprets every GPU thread's PTX: the examples whose
-- default sizes take it minutes (2^24 saxpy threads, 2^20 Monte Carlo
-- samples) run there at sizes of the same paths (several blocks, several
-- chunks); elsewhere, their defaults.
local fake_args = {saxpy = "65537", monte_carlo_pi = "device 65536 16384"}

local function run(script, args)
  local p = io.popen("lua5.4 " .. script .. (args and " " .. args or "") .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  return ok == true, out
end

describe("the examples", function()
  for _, name in ipairs({"saxpy", "matmul_shared", "reduce", "histogram", "arrays", "streams",
                         "least_squares", "logistic_regression", "blur", "monte_carlo_pi", "kmeans",
                         "saxpy_jit"}) do
    it(name .. ".lua runs and its check passes", function()
      local ok, out = run("examples/" .. name .. ".lua", S.fake and fake_args[name] or nil)
      assert.is_true(ok, out)
      if name ~= "arrays" then
        assert.truthy(out:find("check: ok", 1, true), out)
        assert.is_nil(out:find("FAILED", 1, true), out)
      end
      assert.truthy(out:find("luacuda on the", 1, true), out)
    end)
  end
end)

describe("the example kernels under NVRTC", function()
  local have = luacuda.nvrtc_version()
  local kernels = {"saxpy", "matmul_shared", "reduce", "histogram"}
  for _, name in ipairs(kernels) do
    for _, arch in ipairs({"compute_75", "sm_90"}) do
      local it_nvrtc = have and it or pending
      it_nvrtc(name .. ".cu compiles for " .. arch, function()
        local f = assert(io.open("examples/kernels/" .. name .. ".cu"))
        local src = f:read("a")
        f:close()
        local ptx = luacuda.ptx(src, {arch = arch, name = name .. ".cu"})
        assert.truthy(ptx:find(".entry", 1, true), ptx:sub(1, 200))
      end)
    end
  end
end)
