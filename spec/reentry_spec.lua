-- Lua code that runs in the middle of a luacuda call (a finalizer the
-- collector runs when the call allocates, a metamethod the call runs)
-- cannot pull memory from under the call: a close made then only marks the
-- object closed, and what it held goes when the call returns. Objects
-- finalized and resurrected, metatables, and every function given the wrong
-- self give clean errors. Each of these crashed the process or corrupted
-- memory before (issue 12, items 1 to 5).
local luacuda = require "luacuda"
local S = require "spec.support"

local MiB = 1 << 20

-- pcall(call) with fn set to run at the collector's next step: no pause
-- after the collection made here, the automatic collector stopped, so the
-- next step is the one a luacuda call takes when it allocates; that step
-- is as large as Lua allows (step size 2^63 bytes), so it runs the whole
-- cycle and its finalizers, however big the heap the earlier specs left
-- (with a step of ten times the usual work, a full suite's heap took
-- several steps and the finalizer ran after the call). The tests check
-- where fn ran.
local function finalizer_during(fn, call)
  collectgarbage("incremental", 100, 1000, 63)
  collectgarbage()
  setmetatable({}, {__gc = fn})
  collectgarbage("stop")
  local results = table.pack(pcall(call))
  collectgarbage("restart")
  collectgarbage("incremental", 200, 100, 13)     -- Lua 5.4's defaults
  return table.unpack(results, 1, results.n)
end

-- Where the finalizer ran: the luacuda function running under it, if any.
local function running_call()
  local tb = debug.traceback()
  return tb:match("in method '([%w_]+)'") or tb:match("in function 'luacuda[%w_.]*%.([%w_]+)'")
      or tb:match("in metamethod '([%w_]+)'", (tb:find("__gc", 1, true) or 0) + 4)
end

describe("a close made by a finalizer in the middle of a call", function()
  it("waits for the call: a copy of a 64 MiB array reads it whole", function()
    local n = 8 * MiB
    local a = luacuda.to_device(luacuda.full(n, 2.5))
    local seen
    local ok, h = finalizer_during(function()
      seen = running_call()
      a:close()
      seen = seen .. " " .. luacuda.type(a)   -- closed at once, to Lua
    end, function() return a:copy_to_host() end)   -- allocates 64 MiB
    assert.is_true(ok, h)
    assert.equal("copy_to_host closed array", seen)
    assert.equal("closed array", luacuda.type(a))
    assert.equal(n, h.size)
    local sum = 0
    for i = 1, n, 4096 do sum = sum + h[i] end
    assert.equal(2.5 * n / 4096, sum)
    assert.equal(2.5, h[n])
  end)

  it("frees the memory once the call has returned", function()
    local before = luacuda.memory_info().used
    local a = luacuda.device_array(8 * MiB, "uint8")
    local ok, b = finalizer_during(function() a:close() end,
                                   function() return luacuda.device_array(64 * MiB, "uint8") end)
    assert.is_true(ok, b)
    assert.equal("closed array", luacuda.type(a))
    assert.equal(before + 64 * MiB, luacuda.memory_info().used)
    b:close()
    assert.equal(before, luacuda.memory_info().used)
  end)

  it("frees the memory after a call that raised, by the next call", function()
    local m = luacuda.compile([==[extern "C" __global__ void take(float *x) {}]==],
                              {name = "take.cu"})
    local before = luacuda.memory_info().used
    local a = luacuda.device_array(8 * MiB, "uint8")
    local standin = setmetatable({}, {__kernel_arg = function()
      a:close()                  -- the launch is running: put off
      assert.equal("closed array", luacuda.type(a))
      assert.equal(before + 8 * MiB, luacuda.memory_info().used)
      error("no array today")
    end})
    local ok, err = pcall(m.take[{1, 1}], standin)
    assert.is_false(ok)
    assert.matches("no array today", err)
    assert.equal("closed array", luacuda.type(a))
    assert.equal(before, luacuda.memory_info().used)
  end)

  it("waits for the call when indexing makes a view (the collector's next allocation)",
     function()
    local a = luacuda.to_device(luacuda.arange(8, "float32"))
    local seen
    local key = {{2, 4}}
    collectgarbage("incremental", 100, 1000, 63)
    collectgarbage()
    setmetatable({}, {__gc = function() seen = running_call(); a:close() end})
    collectgarbage("restart")         -- no debt: the next allocation steps
    local v = a[key]
    collectgarbage("incremental", 200, 100, 13)
    assert.equal("index", seen)
    assert.equal("closed array", luacuda.type(a))
    assert.same({1, 2, 3}, v:copy_to_host():totable())
  end)

  it("waits for the call when the finalizer closes a stream the call uses", function()
    local s = luacuda.stream()
    local a = luacuda.to_device(luacuda.full(4 * MiB, 1.0))
    local seen
    local ok, h = finalizer_during(function() seen = running_call(); s:close() end,
                                   function() return a:copy_to_host(nil, s) end)
    assert.is_true(ok, h)
    assert.equal("copy_to_host", seen)
    assert.equal("luacuda.stream(closed)", tostring(s))
    luacuda.synchronize()
    assert.equal(1.0, h[4 * MiB])
  end)

  it("waits for the call when the finalizer ends a registration it copies through", function()
    local host = luacuda.full(4 * MiB, 3.0)
    local r = luacuda.register(host)
    local seen
    local ok, d = finalizer_during(function() seen = running_call(); r:close() end,
                                   function() return luacuda.to_device(host) end)
    assert.is_true(ok, d)
    assert.equal("to_device", seen)
    assert.equal("luacuda.registration (closed)", tostring(r))
    assert.is_false(host.pinned)
    assert.equal(3.0, d:copy_to_host()[4 * MiB])
  end)
end)

describe("a stand-in's __kernel_arg", function()
  local m = luacuda.compile([==[
extern "C" __global__ void fill42(float *x, float *unused) {
  x[blockIdx.x * blockDim.x + threadIdx.x] = 42.0f;
}
]==], {name = "fill42.cu"})

  it("runs before anything is packed: closing another argument fails the launch", function()
    local x = luacuda.device_array(1024, "float32")
    local y
    local standin = setmetatable({}, {__kernel_arg = function()
      x:close()
      -- an allocation of the same size may reuse x's memory at once
      y = luacuda.to_device(luacuda.zeros(1024, "float32"))
      return luacuda.device_array(1, "float32")
    end})
    local ok, err = pcall(m.fill42[{4, 256}], x, standin)
    assert.is_false(ok)
    assert.matches("argument 1 'x'.*closed array", err)
    luacuda.synchronize()
    assert.same(luacuda.zeros(1024, "float32"):totable(), y:copy_to_host():totable())
  end)

  it("closing the launch's stream fails the launch cleanly", function()
    local x = luacuda.device_array(256, "float32")
    local s = luacuda.stream()
    local standin = setmetatable({}, {__kernel_arg = function()
      s:close()
      return luacuda.device_array(1, "float32")
    end})
    local ok, err = pcall(m.fill42[{1, 256, s}], x, standin)
    assert.is_false(ok)
    assert.matches("luacuda.launch: attempt to use a closed stream", err)
    assert.equal("luacuda.stream(closed)", tostring(s))
  end)

  -- Module and Kernel close through the gate too (issue 13): closing the
  -- kernel being launched, and its module, waits for the launch to end
  it("closing the kernel being launched and its module lets the launch finish", function()
    local own = luacuda.compile([==[
extern "C" __global__ void fill7(float *x, float *unused) { x[threadIdx.x] = 7.0f; }
]==], {name = "fill7.cu"})
    local k = own.fill7
    local x = luacuda.device_array(32, "float32")
    local standin = setmetatable({}, {__kernel_arg = function()
      k:close()
      own:close()
      collectgarbage()
      collectgarbage()
      return luacuda.device_array(1, "float32")
    end})
    k[{1, 32}](x, standin)
    luacuda.synchronize()
    assert.equal("luacuda.kernel(closed)", tostring(k))
    assert.equal(7, x:copy_to_host()[32])
  end)
end)

describe("options tables", function()
  -- a metatable on an options table is not consulted: options are plain data
  local trap = setmetatable({}, {__index = function(_, k)
    error("the options' __index was consulted for " .. tostring(k))
  end})

  it("are read without their metamethods", function()
    local a = luacuda.to_device(luacuda.arange(16, "float32"))
    assert.equal(16, luacuda.to_device(luacuda.arange(16), trap).size)
    assert.same({4, 4}, a:reshape({4, 4}, trap).shape)
    assert.same({16}, a:reshape({4, 4}):ravel(trap).shape)
    assert.equal(8, luacuda.device_array(8, "int32", trap).size)
    luacuda.event(trap):close()
  end)

  it("cannot close the array a reshape holds", function()
    local a = luacuda.to_device(luacuda.arange(16, "float32"))
    local sneaky = setmetatable({}, {__index = function() a:close() end})
    local r = a:reshape({4, 4}, sneaky)
    assert.equal("array", luacuda.type(a))
    assert.same({{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}},
                r:copy_to_host():totable())
  end)
end)

describe("objects used after their finalizer ran", function()
  local SRC = [==[extern "C" __global__ void nop(int n) {}]==]

  -- Keep obj past its own finalizer: a second object, finalized first (it
  -- was made later), stores it; obj's finalizer runs in the same cycle.
  local function resurrect(make)
    local saved = {}
    do
      local obj = make()
      setmetatable({}, {__gc = function() saved[1] = obj end})
    end
    collectgarbage()
    collectgarbage()
    return saved[1]
  end

  it("a kernel fails cleanly", function()
    local k = resurrect(function() return luacuda.compile(SRC, {name = "resurrect1.cu"}).nop end)
    assert.is_not_nil(k)
    local ok, err = pcall(function() k[{1, 1}](1) end)
    assert.is_false(ok)
    assert.matches("luacuda.index: attempt to use a kernel after its finalizer ran", err)
    assert.is_false(pcall(function() return k.name end))
    assert.is_false(pcall(tostring, k))
  end)

  it("a module fails cleanly", function()
    local m = resurrect(function() return luacuda.compile(SRC, {name = "resurrect2.cu"}) end)
    assert.is_not_nil(m)
    local ok, err = pcall(function() return m:kernels() end)
    assert.is_false(ok)
    assert.matches("luacuda.index: attempt to use a module after its finalizer ran", err)
    assert.is_false(pcall(function() return m.nop end))
    assert.is_false(pcall(tostring, m))
  end)

  it("an array, a stream and an event read as closed", function()
    local a = resurrect(function() return luacuda.zeros(4) end)
    assert.equal("closed array", luacuda.type(a))
    assert.is_false(pcall(function() return a[1] end))
    assert.is_false(pcall(function() return a.x end))
    local s = resurrect(luacuda.stream)
    assert.matches("closed stream", select(2, pcall(s.synchronize, s)))
    local e = resurrect(luacuda.event)
    assert.matches("closed event", select(2, pcall(e.record, e)))
  end)
end)

describe("metatables and self", function()
  it("are protected: getmetatable gives the type's name", function()
    local m = luacuda.compile([==[extern "C" __global__ void nop() {}]==], {name = "mt.cu"})
    local reg = luacuda.register(luacuda.zeros(2))
    for name, obj in pairs({
      ["luacuda.array"] = luacuda.zeros(2), ["luacuda.stream"] = luacuda.stream(),
      ["luacuda.event"] = luacuda.event(), ["luacuda.module"] = m,
      ["luacuda.kernel"] = m.nop, ["luacuda.record"] = luacuda.record({{"x", "int32"}}),
      ["luacuda.registration"] = reg, ["luacuda.dlpack"] = luacuda.zeros(2):to_dlpack(),
    }) do
      assert.equal(name, getmetatable(obj))
    end
    reg:close()
  end)

  it("luacuda.core exports no internals", function()
    local core = require "luacuda.core"
    for name, value in pairs(core) do
      assert.is_true(type(value) == "function", name .. " is a " .. type(value))
    end
    assert.is_nil(core._array_metatable)
    assert.is_nil(core._record_methods)
  end)

  -- Every function and method, called with every kind of wrong self: a
  -- clean error or a result, never a crash.
  it("every function and method checks its arguments", function()
    local m = luacuda.compile([==[extern "C" __global__ void nop() {}]==], {name = "self.cu"})
    local reg = luacuda.register(luacuda.zeros(2))
    local objects = {
      luacuda.zeros(2), luacuda.stream(), luacuda.event(), m, m.nop,
      luacuda.record({{"x", "int32"}}), reg, luacuda.zeros(2):to_dlpack(),
      luacuda.stream():auto_synchronize(),
    }
    local wrong = {nil, 1, "s", {}, io.stdout, coroutine.create(print), print, true}
    for _, o in ipairs(objects) do wrong[#wrong + 1] = o end
    local fns = {}
    for name, f in pairs(luacuda) do
      if type(f) == "function" then fns[#fns + 1] = {name, f} end
    end
    for _, o in ipairs(objects) do
      for _, key in ipairs({"close", "synchronize", "query", "record", "wait", "copy_to_host",
                            "copy_to_device", "reshape", "ravel", "totable", "getitem", "setitem",
                            "item", "launch", "get", "kernels", "get_global", "offsetof",
                            "c_declaration", "auto_synchronize", "elapsed_time", "fill",
                            "to_dlpack", "view", "split", "squeeze", "transpose"}) do
        local ok, f = pcall(function() return o[key] end)
        if ok and type(f) == "function" then fns[#fns + 1] = {key, f} end
      end
    end
    local calls = 0
    for _, nf in ipairs(fns) do
      for i = 1, #wrong + 1 do
        local ok, err = pcall(nf[2], wrong[i], wrong[(i % #wrong) + 1])
        assert.is_true(ok or type(err) == "string", nf[1])
        calls = calls + 1
      end
    end
    assert.is_true(calls > 500)
    reg:close()
    luacuda.synchronize()
  end)
end)

describe("deeply nested records", function()
  it("nest at most 64 deep, with a clear error", function()
    local r = luacuda.record({{"v", "float64"}})
    for _ = 2, 64 do r = luacuda.record({{"inner", r}, {"n", "int8"}}) end
    local a = luacuda.zeros(2, r)
    assert.equal(2, a.size)
    local err = S.misuse("luacuda.record: field 'inner': records nest at most 64 deep",
                         luacuda.record, {{"inner", r}})
    assert.is_string(err)
  end)

  it("built 12,000 deep fail fast instead of exhausting memory or the C stack", function()
    local r = luacuda.record({{"v", "float64"}})
    local t = luacuda.clock()
    local ok = true
    for _ = 1, 12000 do
      local next_ok, nr = pcall(luacuda.record, {{"inner", r}})
      if not next_ok then ok = false break end
      r = nr
    end
    assert.is_false(ok)
    assert.is_true(luacuda.clock() - t < 5)
  end)
end)

describe("an empty array with a huge first axis", function()
  it("prints as {}, as every empty array does (format_spec has the others)", function()
    local z = luacuda.zeros({2 ^ 40, 0})
    assert.equal("luacuda.array(kind=host, dtype=float64, shape={1099511627776, 0})\n{}",
                 tostring(z))
  end)

  it("refuses totable with a clear error", function()
    local ok, err = pcall(function() return luacuda.zeros({2 ^ 40, 0}):totable() end)
    assert.is_false(ok)
    assert.matches("luacuda.totable: axis 1 has 1099511627776 entries, more than a Lua "
                   .. "table holds %(2147483647%)", err)
    ok, err = pcall(function() return luacuda.zeros({65536, 65536, 0}):totable() end)
    assert.is_false(ok)
    assert.matches("luacuda.totable: an array of shape {65536, 65536, 0} would make more "
                   .. "than 2147483647 Lua tables", err)
    assert.same({{}, {}, {}}, luacuda.zeros({3, 0}):totable())
  end)
end)
