-- A device's limits, get_limit and set_limit: each kernel thread's stack
-- (CU_LIMIT_STACK_SIZE) and the printf FIFO (CU_LIMIT_PRINTF_FIFO_SIZE),
-- as the driver applies them (spec/fake/fake_cuda.c, "limits"): a
-- recursion deeper than the stack fails the launch, and runs once the
-- stack is raised; printf output waits in the FIFO for the driver's
-- delivery points, and what does not fit is lost. A failed launch is
-- sticky on CUDA: those runs are child processes.
local luacuda = require "luacuda"
local S = require "spec.support"

-- depth_sum(d) recurses d deep, each call with 128 bytes of local memory
-- (a volatile array, indexed at run time)
local SOURCE = [[
__device__ int depth_sum(int d) {
  volatile int frame[32];
  for (int i = 0; i < 32; i++) frame[i] = d + i;
  if (d == 0) return frame[0];
  return depth_sum(d - 1) + frame[(d * 7) % 32];
}
extern "C" __global__ void recurse(int depth, int *out) { out[threadIdx.x] = depth_sum(depth); }
extern "C" __global__ void big_frame(int k, int *out) {
  volatile int a[1024];                    // 4 KiB of local memory, sized before it runs
  for (int i = 0; i < 1024; i++) a[i] = 3 * i;
  out[0] = a[k];
}
__device__ __noinline__ int callee_frame(int k) {
  volatile int a[512];                     // 2 KiB in a callee's frame, not the kernel's
  for (int i = 0; i < 512; i++) a[i] = 5 * i;
  return a[k];
}
extern "C" __global__ void deep_call(int k, int *out) { out[0] = callee_frame(k); }
extern "C" __global__ void say(int n) {
  if (threadIdx.x < n) printf("line %d\n", threadIdx.x);
}
]]
local DEPTH = 20          -- about 3 KiB of stack on the fake, more on a GPU: past 1 KiB

local function expected(depth)
  local s = 0
  for d = 1, depth do s = s + d + (d * 7) % 32 end
  return s
end

-- a child process running code after `m`, the module, is compiled
local function child(code)
  return S.lua_run("", ([==[
    local luacuda = require "luacuda"
    local m = luacuda.compile(%q)
  ]==]):format(SOURCE) .. code)
end

describe("device limits", function()
  local m
  setup(function() m = luacuda.compile(SOURCE) end)

  it("start at the driver's defaults, a 1 KiB stack and a 1 MiB printf FIFO; a kernel's known frame raises the stack", function()
    local ok, out = child([[
      print(luacuda.get_limit("stack_size"), luacuda.get_limit("printf_fifo_size"))
      local d = luacuda.device_array(1, "int32")
      m.deep_call[{1, 1}](100, d)
      print(d:copy_to_host()[1], luacuda.get_limit("stack_size"))
      m.big_frame[{1, 1}](1000, d)
      print(d:copy_to_host()[1], luacuda.get_limit("stack_size"))
    ]])
    assert.is_true(ok, out)
    local stack, fifo, called, raised, result, after =
      out:match("^(%d+)\t(%d+)\n(%d+)\t(%d+)\n(%d+)\t(%d+)\n$")
    assert.equal("1024", stack, out)
    assert.equal("1048576", fifo, out)
    assert.equal("500", called, out)
    assert.equal("3000", result, out)
    if S.backend == "cuda" then
      -- the driver raised it for the kernel, and keeps it raised
      assert.is_true(tonumber(raised) >= 2048, out)
      assert.is_true(tonumber(after) >= 4096, out)
    end
    if S.fake then
      -- to the cubin's EIATTR_MIN_STACK_SIZE, 2048 (NVRTC 13.0, sm_90:
      -- the callee's array in the kernel's frame), not the 2048 + 16 of
      -- its .local variables and a call
      assert.equal("2048", raised, out)
    end
  end)

  it("refuse an unknown name, a name that is no string and a negative size", function()
    S.misuse('luacuda.get_limit: no limit \'heap\' ("stack_size" or "printf_fifo_size")',
             luacuda.get_limit, "heap")
    S.misuse("luacuda.set_limit: the limit must be a string", luacuda.set_limit, 1, 1024)
    S.misuse("luacuda.set_limit: bytes must be 0 or more, got -1", luacuda.set_limit,
             "stack_size", -1)
    S.misuse("luacuda.set_limit: bytes must be an integer", luacuda.set_limit, "stack_size", 1.5)
  end)

  it("run a recursive kernel once the stack is raised, and give back what the device took", function()
    local before = luacuda.get_limit("stack_size")
    -- 8 KiB: room for DEPTH's frames on a GPU too; the device reserves it
    -- for every thread it holds (1.8 GiB of the fake's 4G)
    local took = luacuda.set_limit("stack_size", 8 * 1024)
    local out = luacuda.device_array(2, "int32")
    local ok, err = pcall(function()
      assert.equal(8 * 1024, took)
      assert.equal(took, luacuda.get_limit("stack_size"))
      m.recurse[{1, 2}](DEPTH, out)
      assert.same({expected(DEPTH), expected(DEPTH)}, S.host_values(out))
    end)
    luacuda.set_limit("stack_size", before)
    assert(ok, err)
  end)

  it("fail a recursion deeper than the stack with the hardware's stack error", function()
    if S.backend ~= "cuda" then
      return pending("the CUDA driver's stack limit: the simulator's threads have LUACUDA_SIM_STACK of host stack")
    end
    -- on the fake, exactly where the cubin's frames say: depth_sum's is
    -- 192 bytes (NVRTC 13.0, sm_90: its .debug_frame, the 192 its code
    -- takes off the stack pointer), so 5 calls fit the default 1 KiB and 6
    -- do not (counting its 128 bytes of .local and 16, 7 would fit)
    local fits, past = S.fake and 4 or 0, S.fake and 5 or DEPTH
    local ok, out = child(([[
      local d = luacuda.device_array(1, "int32")
      m.recurse[{1, 1}](%d, d)
      print(d:copy_to_host()[1])
      print(pcall(function() m.recurse[{1, 1}](%d, d); luacuda.synchronize() end))
    ]]):format(fits, past))
    assert.is_true(ok, out)
    assert.truthy(out:find("^" .. expected(fits) .. "\n"), out)     -- (stderr may come between)
    assert.truthy(out:find("\nfalse\t"), out)
    assert.truthy(out:find("CUDA_ERROR_HARDWARE_STACK_ERROR", 1, true), out)
  end)

  it("lose the printf output that does not fit the FIFO", function()
    if S.backend ~= "cuda" then
      return pending("the CUDA driver's printf FIFO: the simulator's printf writes at once")
    end
    local ok, out = child([[
      assert(luacuda.set_limit("printf_fifo_size", 4096) == 4096)
      m.say[{1, 256}](256)
      luacuda.synchronize()
    ]])
    assert.is_true(ok, out)
    local lines, seen = 0, {}
    for i in out:gmatch("line (%d+)\n") do
      lines = lines + 1
      assert.is_nil(seen[i], out)          -- each kept line once, whole
      seen[i] = true
    end
    assert.is_true(lines > 0 and lines < 256, ("%d lines kept of 256"):format(lines))
  end)

  -- what the fake chose where the manual lets a driver choose: whole
  -- records, the oldest overwritten (the guide's words), and a stack
  -- clamped to the 512 KiB a thread's local memory has
  it("on the fake driver, keep the newest printf records whole and clamp the stack to 512 KiB", function()
    if not S.fake then
      return pending("the fake driver's choices: a GPU's thread order and clamping are its own")
    end
    -- (a 512 KiB stack for each of an H100's 270336 resident threads is
    -- about 132 GiB of device memory)
    local ok, out = S.lua_run("FAKE_CUDA_SCHED_SEED=0 FAKE_CUDA_MEMORY=160G", ([==[
      local luacuda = require "luacuda"
      local m = luacuda.compile(%q)
      luacuda.set_limit("printf_fifo_size", 4096)
      m.say[{1, 256}](256)
      luacuda.synchronize()
      print("clamped", luacuda.set_limit("stack_size", 1 << 30))
    ]==]):format(SOURCE))
    assert.is_true(ok, out)
    local kept = {}
    for i in out:gmatch("line (%d+)\n") do kept[#kept + 1] = tonumber(i) end
    assert.is_true(#kept > 0 and #kept < 256, out)
    for k, i in ipairs(kept) do assert.equal(256 - #kept + k - 1, i, out) end   -- the last ones, in order
    assert.truthy(out:find("clamped\t524288\n", 1, true), out)
  end)

  -- the device reserves the stack for every thread it holds at once
  -- (132 multiprocessors of 2048 threads on the fake's H100); the fake's
  -- FAKE_CUDA_MEMORY is what is left beside the default 1 KiB stack
  it("on the fake driver, charge a raised stack to device memory and refuse one that does not fit", function()
    if not S.fake then
      return pending("the fake driver's memory: a GPU's own size and reservations differ")
    end
    local ok, out = S.lua_run("FAKE_CUDA_MEMORY=64M", [==[
      local luacuda = require "luacuda"
      print(luacuda.set_limit("stack_size", 1024 + 128))      -- 33 MiB more: fits
      print(pcall(luacuda.set_limit, "stack_size", 2048))     -- 264 MiB more: does not
      print(luacuda.get_limit("stack_size"))
      print(luacuda.set_limit("stack_size", 1024))
    ]==])
    assert.is_true(ok, out)
    local took, failed, msg, kept, back = out:match("^(%d+)\n(%a+)\t([^\n]*)\n(%d+)\n(%d+)\n$")
    assert.equal("1152", took, out)
    assert.equal("false", failed, out)
    assert.equal("luacuda.set_limit: the device has no memory for a stack of 2048 bytes for "
                 .. "each thread it holds; the limit is unchanged (cuCtxSetLimit: "
                 .. "CUDA_ERROR_OUT_OF_MEMORY)", msg)
    assert.equal("1152", kept, out)                           -- the old limit stays
    assert.equal("1024", back, out)
  end)

  it("on the fake driver, fail a launch whose known stack the device has no memory for", function()
    if not S.fake then
      return pending("the fake driver's memory: a GPU's own size and reservations differ")
    end
    local ok, out = S.lua_run("FAKE_CUDA_MEMORY=128M", ([==[
      local luacuda = require "luacuda"
      local m = luacuda.compile(%q)
      local d = luacuda.device_array(1, "int32")
      print(pcall(function() m.deep_call[{1, 1}](100, d); luacuda.synchronize() end))
      print(luacuda.get_limit("stack_size"))
    ]==]):format(SOURCE))
    assert.is_true(ok, out)
    assert.truthy(out:find("^false\t[^\n]*CUDA_ERROR_OUT_OF_MEMORY[^\n]*\n1024\n$"), out)
  end)

  it("deliver printf output at a synchronize, not when the kernel ends, and fix the FIFO's size after", function()
    if S.backend ~= "cuda" then
      return pending("the CUDA driver's printf FIFO: the simulator's printf writes at once")
    end
    local ok, out = child([[
      local s = luacuda.stream()
      m.say[{1, 1, s}](1)
      while not s:query() do end           -- done, but no delivery point yet
      io.write("host\n")
      io.flush()
      luacuda.synchronize()
      print(pcall(luacuda.set_limit, "printf_fifo_size", 8192))
    ]])
    assert.is_true(ok, out)
    assert.truthy(out:find("^host\nline 0\nfalse\t"), out)
    assert.truthy(out:find("luacuda.set_limit: the printf FIFO's size cannot change once a kernel "
                           .. "that calls printf was launched on the device", 1, true), out)
  end)
end)
