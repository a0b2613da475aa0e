-- The module loads, reports its backend, and installs as a rock.
local luacuda = require "luacuda"
local S = require "spec.support"

local sh = S.sh

describe("the module", function()
  it("loads the C part through require 'luacuda'", function()
    assert.is_table(luacuda)
    assert.is_function(luacuda.to_device)
    assert.equal(package.loaded["luacuda.core"].to_device, luacuda.to_device)
    assert.is_nil(rawget(_G, "luacuda"), "require must not set globals")
  end)

  it("names its backend and why", function()
    local name, why = luacuda.backend()
    assert.truthy(name == "sim" or name == "cuda")
    assert.is_string(why)
    if os.getenv("LUACUDA_BACKEND") == "sim" then
      assert.equal("sim", name)
      assert.equal("LUACUDA_BACKEND=sim", why)
    end
  end)

  it("refuses an unknown LUACUDA_BACKEND at require time", function()
    local ok, out = sh("LUACUDA_BACKEND=opencl lua5.4 -e 'require \"luacuda\"'")
    assert.is_false(ok)
    assert.truthy(out:find("LUACUDA_BACKEND=opencl is not one of auto, cuda, sim", 1, true), out)
  end)

  -- each numeric setting is parsed once, checked: never wrapped, misread
  -- or ignored (issue 12: -5 gave a total of -5, 2^64-1 a stack of 0)
  it("refuses a bad numeric LUACUDA_SIM_* setting at require time, naming it", function()
    local bad = {
      {"LUACUDA_SIM_MEMORY=-5", "LUACUDA_SIM_MEMORY=-5 is not a size (a whole number of bytes, "
                                .. "with an optional K, M or G)"},
      {"LUACUDA_SIM_MEMORY=1.5G", "LUACUDA_SIM_MEMORY=1.5G is not a size"},
      {"LUACUDA_SIM_MEMORY=99999999999G", "LUACUDA_SIM_MEMORY=99999999999G is out of range"},
      {"LUACUDA_SIM_STACK=18446744073709551615",
       "LUACUDA_SIM_STACK=18446744073709551615 is out of range (16384 to 1073741824 bytes)"},
      {"LUACUDA_SIM_STACK=8K", "LUACUDA_SIM_STACK=8K is out of range (16384 to 1073741824 bytes)"},
      {"LUACUDA_SIM_THREADS=0", "LUACUDA_SIM_THREADS=0 is out of range (1 to 256)"},
      {"LUACUDA_SIM_THREADS=' 4'", "LUACUDA_SIM_THREADS= 4 is not a whole number"},
      {"LUACUDA_SIM_GUARD=4x", "LUACUDA_SIM_GUARD=4x is not a size"},
      {"LUACUDA_MEMORY_CACHE=-1", "LUACUDA_MEMORY_CACHE=-1 is not a size"},
      {"LUACUDA_SIM_TIMEOUT=-1", "LUACUDA_SIM_TIMEOUT=-1 is not a number of seconds (more than "
                                 .. "0, less than 1000000)"},
      {"LUACUDA_SIM_TIMEOUT=nan", "LUACUDA_SIM_TIMEOUT=nan is not a number of seconds"},
    }
    for _, case in ipairs(bad) do
      local ok, out = sh(case[1] .. " lua5.4 -e 'require \"luacuda\"'")
      assert.is_false(ok, case[1])
      assert.truthy(out:find("luacuda: " .. case[2], 1, true), out)
    end
    local ok, out = sh("LUACUDA_BACKEND=sim LUACUDA_SIM_MEMORY=64M LUACUDA_SIM_GUARD=off "
                       .. "LUACUDA_SIM_STACK=1m LUACUDA_SIM_THREADS=3 LUACUDA_SIM_TIMEOUT=0.5 "
                       .. "lua5.4 -e 'print(require \"luacuda\".memory_info().total)'")
    assert.is_true(ok, out)
    assert.equal("67108864\n", out)
  end)

  it("reports memory in use, total and free", function()
    local info = luacuda.memory_info()
    assert.is_true(info.total > 0)
    assert.is_true(info.free <= info.total)
    local before = info.used
    local a = luacuda.device_array(1 << 20, "uint8")
    assert.is_true(luacuda.memory_info().used >= before + (1 << 20))
    a:close()
    assert.equal(before, luacuda.memory_info().used)
  end)
end)

describe("the rockspec", function()
  it("says where the project lives, where it runs and how it is tested", function()
    local rock = {}
    assert(loadfile("luacuda-scm-1.rockspec", "t", rock))()
    assert.equal("3.0", rock.rockspec_format)
    assert.matches("^https://", rock.description.homepage)
    assert.same({ "linux" }, rock.supported_platforms)
    assert.equal("command", rock.test.type)
    assert.equal("make check", rock.test.command)
    assert.same({ "busted" }, rock.test_dependencies)
    -- the documentation goes into the rock's own directory
    local copied = {}
    for _, d in ipairs(rock.build.copy_directories) do copied[d] = true end
    assert.is_true(copied.docs)
  end)

  -- a build of the sources, whatever the backend: make test runs it; the
  -- sanitizers' and the fake driver's runs would build the same again
  local have = sh("command -v luarocks")
  local it_rock = (have and not os.getenv("LUACUDA_SANITIZED") and not S.fake) and it or pending

  it_rock("installs with luarocks make into a tree that plain lua5.4 can require", function()
    local tmp = os.tmpname()
    os.remove(tmp)
    -- build in a copy of the sources, so the module under test is untouched
    local ok, out = sh(("mkdir -p %s/src && cp -r Makefile mk luacuda-scm-1.rockspec src lua kernels spec docs examples %s/src/ && " ..
      "cd %s/src && env -u LD_PRELOAD luarocks --lua-version=5.4 make --tree=%s/tree luacuda-scm-1.rockspec")
      :format(tmp, tmp, tmp, tmp))
    assert.is_true(ok, out)
    -- the rock's own directory holds the documentation (the guides and the
    -- API reference among it), the examples, the kernel headers and the C
    -- API's header
    local _, dir = sh(("luarocks --lua-version=5.4 --tree=%s/tree show --rock-dir luacuda"):format(tmp))
    dir = dir:match("^%s*(.-)%s*$")
    local missing = {}
    for _, f in ipairs({ "docs/architecture.md", "docs/guide/kernels.md", "docs/api/index.html",
                         "examples/saxpy.lua", "examples/kernels/saxpy.cu",
                         "kernels/prelude.cuh", "kernels/philox.h", "include/luacuda.h" }) do
      if not S.exists(dir .. "/" .. f) then missing[#missing + 1] = f end
    end
    ok, out = sh(("cd / && eval \"$(luarocks --lua-version=5.4 path --tree=%s/tree)\" && " ..
      "env -u LD_PRELOAD lua5.4 -e 'local l = require \"luacuda\"; print(l.backend(), l.to_device({1, 2, 3}):copy_to_host()[3])'")
      :format(tmp))
    -- luacuda.dist's MPI engine is installed beside core.so where mpicc is
    local dist_ok, dist_out = sh(("cd / && eval \"$(luarocks --lua-version=5.4 path --tree=%s/tree)\" && " ..
      "env -u LD_PRELOAD lua5.4 -e 'print(\"dist\", require(\"luacuda.dist\").available)'"):format(tmp))
    sh("rm -rf " .. tmp)
    assert.is_true(dist_ok, dist_out)
    assert.truthy(dist_out:find("dist\t" .. tostring(sh("command -v mpicc") == true), 1, true), dist_out)
    assert.same({}, missing, "files the rock should install in " .. dir)
    assert.is_true(ok, out)
    assert.truthy(out:find("sim") or out:find("cuda"), out)
    assert.truthy(out:find("%f[%d]3%f[%D]"), out)
  end)
end)
