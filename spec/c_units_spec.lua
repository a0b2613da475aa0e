-- The C unit tests (spec/unit/*_test.c), one busted test per C test; capi_test
-- is a host program on luacuda.h. The Makefile builds the binaries next to
-- the module and passes its build directory in LUACUDA_BUILD.
local S = require "spec.support"
local build = os.getenv("LUACUDA_BUILD") or "build"
-- the tests of the simulator's own fault handling (a signal a kernel's
-- thread sends): the simulator only
local SIM_ONLY = { capi = { fault_signal_sent_is_the_hosts = true } }
-- the tests of a host program's CUDA context and pool: they need the CUDA
-- backend (spec/cuda_fake_spec.lua runs them on the fake driver)
local NEEDS_CUDA = { capi = { host_context = true, host_default_pool = true,
                                host_nonblocking_stream = true } }

-- Run bin with args; true only on exit status 0, and the output (stdout
-- and stderr together).
local function run(bin, args)
  local quoted = "'" .. bin:gsub("'", "'\\''") .. "'"
  local p = io.popen(quoted .. " " .. args .. " 2>&1")
  local out = p:read("a")
  local ok, how, code = p:close()
  return ok == true and how == "exit" and code == 0, out, how, code
end

for _, unit in ipairs({"layout", "scan", "deps", "modcache", "fatbin", "reduce", "npy", "random", "random_portable",
                          "guard", "arena", "stream", "gcpace", "capi"}) do
  local bin = build .. "/" .. unit .. "_test"
  describe(unit .. ".c unit tests (" .. bin .. ")", function()
    -- the units but capi test C code that no backend changes: the CUDA
    -- backend's runs (the fake driver's, twice in CI) would repeat them
    if unit ~= "capi" and S.backend == "cuda" then
      pending("no backend of its own: make test and the sanitizers' runs test it")
      return
    end
    local f = io.open(bin, "rb")
    if not f then
      it("finds the test binary", function()
        assert.is_true(false, bin .. " is missing: build it with `make check`")
      end)
      return
    end
    f:close()

    local listed, out = run(bin, "--list")
    local names = {}
    if listed then
      for name in out:gmatch("[^\r\n]+") do names[#names + 1] = name end
    end
    if #names == 0 then
      it("lists its tests", function()
        assert.is_true(false, ("%s --list failed or listed nothing:\n%s"):format(bin, out))
      end)
      return
    end

    for _, name in ipairs(names) do
      it(name, function()
        assert(name:match("^[%w_]+$"), "odd test name " .. name)
        if S.backend ~= "sim" and SIM_ONLY[unit] and SIM_ONLY[unit][name] then
          return pending("simulator only: a kernel's thread sends the process a signal")
        end
        if S.backend ~= "cuda" and NEEDS_CUDA[unit] and NEEDS_CUDA[unit][name] then
          return pending("the CUDA backend only: spec/cuda_fake_spec.lua runs it on the fake driver")
        end
        local ok, res, how, code = run(bin, name)
        assert(ok, ("%s %s: %s %s\n%s"):format(bin, name, tostring(how), tostring(code), res))
      end)
    end
  end)
end
