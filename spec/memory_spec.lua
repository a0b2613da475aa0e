-- Freeing: __gc, <close>, views keeping their buffer, and the collector
-- kept aware of memory it cannot see.
local luacuda = require "luacuda"
local S = require "spec.support"

local MiB = 1 << 20

local function used() return luacuda.memory_info().used end

local lua_run = S.lua_run

describe("freeing", function()
  it("__gc frees device memory", function()
    collectgarbage()
    local before = used()
    do local _ = luacuda.device_array(4 * MiB, "uint8") end
    collectgarbage()
    collectgarbage()
    assert.equal(before, used())
  end)

  it("<close> frees at the end of the scope, also when left by an error", function()
    local before = used()
    do
      local a <close> = luacuda.device_array(MiB, "uint8")
      assert.is_true(used() >= before + MiB)
    end
    assert.equal(before, used())
    local ok = pcall(function()
      local a <close> = luacuda.device_array(MiB, "uint8")
      error("boom")
    end)
    assert.is_false(ok)
    assert.equal(before, used())
  end)

  it("a closed array is a clear error when used again, as a closed file is", function()
    local a = luacuda.to_device({1, 2, 3})
    a:close()
    assert.equal("closed array", luacuda.type(a))
    do local again <close> = a end     -- __close (and __gc) stay harmless
    local uses = {
      function() a:close() end,
      function() return a[1] end,
      function() a[1] = 5 end,
      function() return a.shape end,
      function() return #a end,
      function() return a:copy_to_host() end,
      function() return a:reshape(3) end,
      function() return luacuda.to_device(a) end,
      function() luacuda.to_device({1, 2, 3}):copy_to_host(a) end,
    }
    for i, use in ipairs(uses) do
      local ok, err = pcall(use)
      assert.is_false(ok, "use " .. i)
      assert.truthy(tostring(err):find("attempt to use a closed array", 1, true), err)
    end
    assert.equal("luacuda.array (closed)", tostring(a))
  end)

  it("views keep the buffer alive after the base is closed or collected", function()
    local before = used()
    local base = luacuda.to_device({1, 2, 3, 4})
    local v = base[{{2, 3}}]
    base:close()
    assert.same({2, 3}, v:copy_to_host():totable())
    assert.is_true(used() > before)
    v:close()
    assert.equal(before, used())
    local w = luacuda.to_device({{1, 2}, {3, 4}})[2]
    collectgarbage()
    collectgarbage()
    assert.same({3, 4}, w:copy_to_host():totable())
  end)
end)

describe("the collector", function()
  -- The two long loops run in a process of their own: the collector's
  -- cycles each walk the whole Lua heap, and the heap of a busted process
  -- that ran other spec files first (CI's lanes) made them minutes long.
  -- The child inherits the run's backend, driver and preloaded sanitizer.
  it("keeps up with 10,000 dropped 8 MiB device arrays", function()
    local ok, out = lua_run("", [[
      local luacuda = require "luacuda"
      local MiB = 1 << 20
      local function used() return luacuda.memory_info().used end
      collectgarbage()
      local before, peak = used(), 0
      for i = 1, 10000 do
        local a = luacuda.device_array(8 * MiB, "uint8")
        if i % 100 == 0 then a[1] = 1 end
        local u = used()
        if u > peak then peak = u end
      end
      collectgarbage()
      collectgarbage()
      print("after", used() - before)
      print("peak MiB", (peak - before) // MiB)
    ]])
    assert.is_true(ok, out)
    assert.truthy(out:find("after\t0\n", 1, true), out)
    -- without the accounting, all 80 GB would still be allocated
    local peak = tonumber(out:match("peak MiB\t(%d+)"))
    assert.is_true(peak ~= nil and peak < 2048, out)
  end)

  it("keeps views of dropped arrays intact while the loop frees the rest", function()
    local kept = {}
    for i = 1, 300 do
      local a = luacuda.device_array({MiB}, "int32")
      if i % 50 == 0 then
        a[{{1, 2}}] = {i, -i}
        kept[#kept + 1] = a[{{1, 2}}]
      end
    end
    collectgarbage()
    for k, v in ipairs(kept) do
      assert.same({50 * k, -50 * k}, v:copy_to_host():totable())
    end
  end)

  it("finishes 2 * 10^4 dropped 8 MiB device arrays (160 GB), keeping views of some", function()
    -- the memory is never touched but for one page of each kept view, so
    -- the loop takes seconds; every array is a real allocation all the same
    local ok, out = lua_run("", [[
      local luacuda = require "luacuda"
      local MiB = 1 << 20
      local function used() return luacuda.memory_info().used end
      local function vm_kb()
        local f = io.open("/proc/self/status")
        if not f then return 0 end
        local kb = f:read("a"):match("VmSize:%s*(%d+)")
        f:close()
        return tonumber(kb) or 0
      end
      collectgarbage()
      luacuda.synchronize()
      local before, vm_before, peak, kept = used(), vm_kb(), 0, {}
      for i = 1, 20000 do
        local a = luacuda.device_array(8 * MiB, "uint8")
        if i % 200 == 0 then
          local v = a[{{8 * MiB - 15, 8 * MiB}}]       -- the last 16 bytes
          v[16] = #kept + 1
          kept[#kept + 1] = v
        end
        local u = used()
        if u > peak then peak = u end
      end
      print("peak MiB", (peak - before) // MiB)
      local wrong = 0
      for k, v in ipairs(kept) do if v[16] ~= k then wrong = wrong + 1 end end
      print("kept", #kept, "wrong", wrong)
      kept = nil
      collectgarbage()
      collectgarbage()
      luacuda.synchronize()
      print("after", used() - before)
      -- nor is the address space left holding them (2 * 10^4 lost blocks:
      -- 160 GB), once the blocks kept for reuse are given back
      luacuda.free_cached()
      print("grown KiB", vm_kb() - vm_before)
    ]])
    assert.is_true(ok, out)
    -- the 100 kept views hold 800 MiB; the collector kept the rest in bounds
    local peak = tonumber(out:match("peak MiB\t(%d+)"))
    assert.is_true(peak ~= nil and peak < 4096, out)
    assert.truthy(out:find("kept\t100\twrong\t0", 1, true), out)
    assert.truthy(out:find("after\t0\n", 1, true), out)
    local grown = tonumber(out:match("grown KiB\t(%-?%d+)"))
    assert.is_true(grown ~= nil and grown < 1024 * 1024, out)
  end)

  it("fits a loop into a small simulated device, and reports a real out-of-memory", function()
    if luacuda.backend() ~= "sim" then return pending("simulator only: LUACUDA_SIM_MEMORY sizes the simulated device") end
    local ok, out = lua_run("LUACUDA_SIM_MEMORY=64M", [[
      local luacuda = require "luacuda"
      for i = 1, 500 do luacuda.device_array(8 << 20, "uint8"):fill(i % 256) end
      print("loop done", luacuda.memory_info().total)
      local ok, err = pcall(luacuda.device_array, 100 << 20, "uint8")
      print(ok, err)
      print("after", luacuda.to_device({1, 2, 3}):copy_to_host()[3])
    ]])
    assert.is_true(ok, out)
    assert.truthy(out:find("loop done\t67108864", 1, true), out)
    assert.truthy(out:find("false\tluacuda.device_array: out of device memory allocating 104857600 bytes", 1, true), out)
    assert.truthy(out:find("after\t3", 1, true), out)
  end)
end)
