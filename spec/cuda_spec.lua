-- The CUDA backend's selection and failover, and the device functions every
-- backend has. What runs on a GPU is checked by the whole suite run with
-- LUACUDA_BACKEND=cuda; here, the ways CUDA can be missing.
local luacuda = require "luacuda"
local S = require "spec.support"

local BUILD = os.getenv("LUACUDA_BUILD") or "build"
local STUB = "/usr/local/cuda/lib64/stubs/libcuda.so"

-- run code in a fresh interpreter with env prepended; ok, output
local lua_run, exists = S.lua_run, S.exists

local PRINT_BACKEND = [[local n, why = require("luacuda").backend() print(n) print(why)]]

describe("backend selection", function()
  it("falls back to sim with the reason when libcuda cannot be opened", function()
    local ok, out = lua_run("LUACUDA_BACKEND=auto LUACUDA_LIBCUDA=/nonexistent/libcuda.so.1",
                            PRINT_BACKEND)
    assert.is_true(ok, out)
    assert.matches("^sim\n", out)
    assert.matches("libcuda", out)
  end)

  it("names libcuda.so.1 when no driver is installed", function()
    if exists("/usr/lib/x86_64-linux-gnu/libcuda.so.1") or luacuda.backend() == "cuda" then
      pending("a CUDA driver is installed")
      return
    end
    local ok, out = lua_run("LUACUDA_BACKEND=auto", PRINT_BACKEND)
    assert.is_true(ok, out)
    assert.matches("^sim\n.*libcuda%.so%.1", out)
  end)

  it("LUACUDA_BACKEND=cuda without a usable GPU is a clear error", function()
    local ok, out = lua_run("LUACUDA_BACKEND=cuda LUACUDA_LIBCUDA=/nonexistent/libcuda.so.1",
                            [[require "luacuda"]])
    assert.is_false(ok)
    assert.matches("LUACUDA_BACKEND=cuda, but CUDA is not usable", out, 1, true)
    assert.matches("/nonexistent/libcuda.so.1", out, 1, true)
  end)

  it("reports the CUDA error of the toolkit's stub library", function()
    if not exists(STUB) then
      pending("no CUDA toolkit stub at " .. STUB)
      return
    end
    local ok, out = lua_run("LUACUDA_BACKEND=auto LUACUDA_LIBCUDA=" .. STUB, PRINT_BACKEND)
    assert.is_true(ok, out)
    assert.matches("^sim\ncuInit: CUDA_ERROR_", out)
    ok, out = lua_run("LUACUDA_BACKEND=cuda LUACUDA_LIBCUDA=" .. STUB, [[require "luacuda"]])
    assert.is_false(ok)
    assert.matches("cuInit: CUDA_ERROR_", out, 1, true)
  end)

  it("names the missing symbol of a library that is not a driver", function()
    local dir = S.tmpdir()
    local c, so = dir .. "/fake.c", dir .. "/libfake.so"
    local f = assert(io.open(c, "w"))
    f:write("int cuInit(unsigned flags) { (void)flags; return 0; }\n")
    f:close()
    -- the compiler must not inherit a sanitizer preloaded into this process
    local built = os.execute(("env -u LD_PRELOAD cc -shared -fPIC -o %s %s 2>/dev/null"):format(so, c))
    local lib, missing = so, "cuGetErrorName"
    if not built then lib, missing = "libm.so.6", "cuInit" end   -- no compiler: any other library
    local ok, out = lua_run("LUACUDA_BACKEND=auto LUACUDA_LIBCUDA=" .. lib, PRINT_BACKEND)
    os.execute("rm -rf " .. dir)
    assert.is_true(ok, out)
    assert.matches("^sim\n", out)
    assert.matches("has no function " .. missing, out, 1, true)
  end)

  it("builds and loads without CUDA headers or libraries at link time", function()
    local p = io.popen("nm -D " .. BUILD .. "/luacuda/core.so 2>/dev/null")
    local syms = p:read("a")
    p:close()
    assert.not_matches(" U cu[A-Z]", syms)
  end)
end)

describe("devices", function()
  it("lists the devices", function()
    local devs = luacuda.devices()
    assert.is_true(#devs >= 1)
    for _, d in ipairs(devs) do
      assert.equal("string", type(d.name))
      assert.equal(2, #d.compute_capability)
      assert.is_true(d.compute_capability[1] >= 1)
      assert.is_true(d.memory > 0)
      assert.is_true(d.multiprocessors >= 1)
      assert.is_true(d.max_shared_per_block >= 48 * 1024)
    end
  end)

  it("selects a device by its 1-based index", function()
    luacuda.select_device(1)
    assert.equal(1, luacuda.current_device())
    local n = #luacuda.devices()
    assert.has_error(function() luacuda.select_device(n + 1) end,
                     ("luacuda.select_device: no device %d (there %s %d)"):format(
                       n + 1, n == 1 and "is" or "are", n))
    assert.has_error(function() luacuda.select_device(0) end)
    assert.equal(1, luacuda.current_device())
  end)

  it("the simulator has one device", function()
    if luacuda.backend() ~= "sim" then pending("not on the simulator") return end
    assert.equal(1, #luacuda.devices())
    assert.has_error(function() luacuda.select_device(2) end,
                     "luacuda.select_device: no device 2 (there is 1)")
  end)
end)

describe("memory pool", function()
  it("trim_pool gives unused memory back and keeps arrays intact", function()
    local a = luacuda.to_device({1, 2, 3})
    do local _ <close> = luacuda.device_array(1 << 20, "uint8") end
    luacuda.trim_pool()
    assert.same({1, 2, 3}, a:totable())
  end)

  it("memory_info has pool figures where there is a pool", function()
    local info = luacuda.memory_info()
    assert.is_true(info.total > 0)
    if info.pool_reserved then
      assert.is_true(info.pool_reserved >= info.pool_used)
    else
      assert.is_nil(info.pool_used)
    end
  end)
end)

describe("library kernels", function()
  for _, arch in ipairs({"sm_75", "sm_90"}) do
    it("kernels/strided.cu compiles for " .. arch .. " #heavy", function()
      if not luacuda.nvrtc_version() then pending("no NVRTC") return end
      local f = assert(io.open("kernels/strided.cu"))
      local src = f:read("a")
      f:close()
      local ptx = luacuda.ptx(src, {arch = arch:gsub("sm_", "compute_"), name = "strided.cu"})
      assert.matches("lc_copy_strided", ptx, 1, true)
      local cubin = luacuda.cubin(src, {arch = arch, name = "strided.cu"})
      assert.equal("\127ELF", cubin:sub(1, 4))
    end)
  end
end)
