-- Several devices in one process (docs/guide/devices-and-processes.md,
-- "Several devices"). Each test runs in a child interpreter with three
-- devices: LUACUDA_SIM_DEVICES=3 on the simulator, FAKE_CUDA_DEVICES=3 on
-- the fake driver (make check-fake-cuda; the child inherits the backend's
-- settings). The child checks through the public API and prints "ok"
-- last.
local S = require "spec.support"

local BUILD = os.getenv("LUACUDA_BUILD") or "build"
local DEVICES = "LUACUDA_SIM_DEVICES=3 FAKE_CUDA_DEVICES=3"
local PRELUDE = [==[
local luacuda = require "luacuda"
local S = require "spec.support"
assert(luacuda.backend() == os.getenv("DEVICES_SPEC_BACKEND"), "the child's backend is the spec's")
local assert = require "luassert"
local function eq(want, got, what) assert.same(want, got, what) end
-- the values of a, copied to the host on a's own device
local function values(a)
  local _ <close> = luacuda.device(a.device)
  return a:copy_to_host():totable()
end
]==]

-- run code in the child with the devices (and env); assert it printed ok
local function child(code, env)
  local ok, out = S.lua_run(("%s DEVICES_SPEC_BACKEND=%s %s"):format(DEVICES, S.backend, env or ""),
                            PRELUDE .. code .. "\nprint('ok')\n")
  assert(ok and out:find("ok\n$"), out)
end

describe("several devices", function()
  it("lists them, and a thread starts on device 1", function()
    child([==[
      eq(3, #luacuda.devices(), "devices")
      eq(1, luacuda.current_device(), "current")
      for i, d in ipairs(luacuda.devices()) do
        assert(type(d.name) == "string" and d.memory > 0, "device " .. i)
      end
    ]==])
  end)

  it("scopes a device with device(i), restoring the one before", function()
    child([==[
      do
        local _ <close> = luacuda.device(2)
        eq(2, luacuda.current_device(), "in the scope")
        do
          local _ <close> = luacuda.device(3)
          eq(3, luacuda.current_device(), "nested")
        end
        eq(2, luacuda.current_device(), "after the nested scope")
      end
      eq(1, luacuda.current_device(), "after the scope")
      -- an error inside the scope restores too
      local ok = pcall(function()
        local _ <close> = luacuda.device(3)
        error("inside")
      end)
      eq(false, ok, "pcall")
      eq(1, luacuda.current_device(), "after an error")
      -- as an object: close restores, once
      local s = luacuda.device(2)
      eq("luacuda.device(2)", tostring(s), "tostring")
      eq(2, luacuda.current_device(), "open scope")
      luacuda.select_device(3)
      s:close()
      eq(1, luacuda.current_device(), "closed")
      eq("luacuda.device(2) (closed)", tostring(s), "tostring closed")
      luacuda.select_device(3)
      s:close()                       -- a second close does nothing
      eq(3, luacuda.current_device(), "closed twice")
      luacuda.select_device(1)
    ]==])
  end)

  it("says where devices start and end, leaving the current one", function()
    child([==[
      luacuda.select_device(2)
      S.misuse({"luacuda.device: no device 0 (there are 3)",
                "luacuda counts devices from 1 (the first is device(1))"}, luacuda.device, 0)
      S.misuse("luacuda.device: no device 4 (there are 3)", luacuda.device, 4)
      S.misuse("luacuda.device: device must be an integer, got string", luacuda.device, "2")
      S.misuse({"luacuda.select_device: no device 0",
                "(the first is select_device(1))"}, luacuda.select_device, 0)
      S.misuse("luacuda.close: expected a device scope, got table", luacuda.device(2).close, {})
      eq(2, luacuda.current_device(), "after the errors")
    ]==])
  end)

  it("keeps the current device per OS thread (two states, two threads)", function()
    -- spec/unit/threads_test.c: thread i selects device (i - 1) mod 3 + 1 and
    -- checks at each iteration that it is still current and its arrays on it
    local ok, out = S.sh(("%s LUACUDA_BUILD=%s %s/threads_test 20 3"):format(DEVICES, BUILD, BUILD))
    assert(ok, out)
    assert(out:find("3 threads x 20 iterations, %d+ values checked, 0 threads failed"), out)
  end)

  it("makes arrays, streams, events and modules belong to the current device", function()
    child([==[
      local a = luacuda.to_device({1, 2, 3}, {dtype = "float32"})
      eq(1, a.device, "a.device")
      eq(1, luacuda.zeros({2}).device, "a host array: the device current at allocation")
      local b, s2, e2, m2
      do
        local _ <close> = luacuda.device(2)
        b = luacuda.to_device({4, 5, 6}, {dtype = "float32"})
        s2, e2 = luacuda.stream(), luacuda.event()
        m2 = luacuda.compile([[extern "C" __global__ void k(float *x) {}]])
        eq(2, b.device, "b.device")
        m2.k[{1, 1, s2}](b)           -- all on device 2: fine
        e2:record(s2)
        s2:synchronize()
      end
      local m1 = luacuda.compile([[extern "C" __global__ void k(float *x) {}]])
      -- each use on device 1 names both devices, and changes nothing
      S.misuse("luacuda.launch: kernel 'k' argument 1 'x' (float *): the array is on device 2, but device 1 is current",
               function() m1.k[{1, 1}](b) end)
      S.misuse("luacuda.launch: kernel 'k': its module is on device 2, but device 1 is current",
               function() m2.k[{1, 1}](a) end)
      S.misuse("luacuda.launch: the stream is on device 2, but device 1 is current",
               function() m1.k[{1, 1, s2}](a) end)
      S.misuse("luacuda.copy_to_host: the stream is on device 2, but device 1 is current",
               function() a:copy_to_host(nil, s2) end)
      S.misuse("luacuda.copy_to_device: the stream is on device 2, but device 1 is current",
               function(x) x:copy_to_device({7, 8, 9}, s2) end, a)
      S.misuse("luacuda.record: the event is on device 2, but device 1 is current",
               function() e2:record() end)
      S.misuse("luacuda.get_global: the module", function() m2:get_global("nothing") end)
      S.misuse("luacuda.add (+): operand 1 is on device 1 and operand 2 on device 2: array math runs "
               .. "on one device (copy one over first: luacuda.to_device(y, {device = 1}))",
               function(x, y) return x + y end, a, b)
      S.misuse("luacuda.add (+): operand 1 is on device 2, but device 1 is current (luacuda.device(2) "
               .. "makes it current, or copy the operands: luacuda.to_device(x, {device = 1}))",
               function(y) return y + 1 end, b)
      S.misuse("luacuda.sum: the input array is on device 2, but device 1 is current",
               function(y) return y:sum() end, b)
      S.misuse("luacuda.fill: the target array is on device 2, but device 1 is current",
               function(y) y:fill(0) end, b)
      S.misuse("luacuda.matmul: the operand array is on device 2, but device 1 is current",
               luacuda.matmul, b:reshape(1, 3), a:reshape(3, 1))
      eq({1, 2, 3}, values(a), "a unchanged")
      eq({4, 5, 6}, values(b), "b unchanged")
      -- a wait may take another device's event (it orders the streams)
      e2:wait(luacuda.stream())
      -- the default stream is each device's own
      a:copy_to_device({7, 8, 9}, luacuda.default_stream())
      luacuda.synchronize()
      eq({7, 8, 9}, values(a), "a on the default stream")
    ]==])
  end)

  it("counts each device's memory apart", function()
    child([==[
      collectgarbage()
      local function used(i)
        local _ <close> = luacuda.device(i)
        return luacuda.memory_info().used
      end
      local before1, before2 = used(1), used(2)
      local x
      do
        local _ <close> = luacuda.device(2)
        x = luacuda.device_array({1 << 16}, "float32")
      end
      eq(before1, used(1), "device 1, after an allocation on device 2")
      assert(used(2) >= before2 + (1 << 18), "device 2 counts its array")
      x = nil
      collectgarbage()
      luacuda.synchronize()
      do
        local _ <close> = luacuda.device(2)
        luacuda.synchronize()
      end
      eq(before2, used(2), "device 2, after the free")
    ]==])
  end)

  it("runs out of one device's memory, not the others'", function()
    if S.backend ~= "sim" then return pending("simulator only: LUACUDA_SIM_MEMORY") end
    child([==[
      local a = luacuda.device_array({192 * 1024}, "float32")      -- 768 KiB of 1 MiB
      S.misuse("luacuda.device_array: out of device memory",
               luacuda.device_array, {192 * 1024}, "float32")
      local _ <close> = luacuda.device(2)
      local b = luacuda.device_array({192 * 1024}, "float32")      -- device 2 has room
      eq(2, b.device, "b.device")
      eq(1, a.device, "a.device")
    ]==], "LUACUDA_SIM_MEMORY=1M")
  end)

  it("copies every kind of view between devices (peer copies), values checked", function()
    child([==[
      local h = luacuda.arange(24, "int32"):reshape(4, 6)
      local src
      do
        local _ <close> = luacuda.device(2)
        src = luacuda.to_device(h)
      end
      -- views of device 2's array into arrays of device 1, with and
      -- without a stream of device 1
      local s1 = luacuda.stream()
      local views = {
        {"whole", function(a) return a end},
        {"transposed", function(a) return a.T end},
        {"a row", function(a) return a[3] end},
        {"a column", function(a) return a[{{}, 2}] end},
        {"strided", function(a) return a[{{1, 4, 2}, {2, 6, 3}}] end},
        {"reversed", function(a) return a[{{4, 1, -1}, {}}] end},
      }
      for _, v in ipairs(views) do
        local name, view = v[1], v[2]
        local want = view(h):copy():totable()
        for _, stream in ipairs({false, true}) do
          local dst = luacuda.device_array(view(h).shape, "int32")
          if stream then dst:copy_to_device(view(src), s1); s1:synchronize()
          else dst:copy_to_device(view(src)) end
          eq(1, dst.device, name)
          eq(want, values(dst), name .. (stream and " on a stream" or ""))
          -- and back into a view of device 2's array, from device 1
          local back
          do
            local _ <close> = luacuda.device(2)
            back = luacuda.device_array(h.shape, "int32"):fill(-1)
          end
          view(back):copy_to_device(dst)
          local expect = luacuda.full(h.shape, -1, "int32")
          view(expect)[{}] = want
          eq(expect:totable(), values(back), name .. " back on device 2")
        end
      end
      -- an element of another device's array, read and written (a copy
      -- between devices each), with and without a stream of device 1
      for dev = 2, 3 do
        local b = luacuda.to_device({1.5, 2.5, 3.5}, {device = dev})
        eq({1.5, 3.5}, {b[1], b[{3}]}, "elements read from device " .. dev)
        b[1] = 7.25
        b[{2}] = 8.25
        eq({7.25, 8.25, 3.5}, values(b), "elements written on device " .. dev)
        local sc = luacuda.stream()
        b:setitem(3, 9.75, sc)
        eq(9.75, b:getitem(3, sc), "an element written and read with a stream")
        eq({7.25, 8.25, 9.75}, values(b), "after the stream's write on device " .. dev)
      end
      -- to_device(a, {device = j}): from the host, and from another device
      local d3 = luacuda.to_device(h, {device = 3})
      eq(3, d3.device, "to_device device 3")
      eq(1, luacuda.current_device(), "current after to_device")
      eq(h:totable(), values(d3), "to_device from the host")
      local s3
      do
        local _ <close> = luacuda.device(3)
        s3 = luacuda.stream()
      end
      local d1 = luacuda.to_device(d3.T, s1, {device = 1})   -- a stream of the result's device
      s1:synchronize()
      eq(1, d1.device, "to_device device 1")
      eq(h.T:copy():totable(), values(d1), "to_device from device 3")
      eq(src, luacuda.to_device(src, {device = 2}), "already there: the array itself")
      S.misuse("luacuda.to_device: the stream is on device 3, but device 2 is current",
               luacuda.to_device, h, s3, {device = 2})
      S.misuse("luacuda.to_device: no device 4 (there are 3)", luacuda.to_device, h, {device = 4})
      S.misuse("luacuda.to_device: option to is an array of device 2, option device says 1",
               luacuda.to_device, h, {device = 1, to = src})
      eq(1, luacuda.current_device(), "current after the errors")
    ]==])
  end)

  it("keeps an array of another device alive until a stream's copy of it is done", function()
    -- the copy is queued on device 1's stream; the source, on device 2, is
    -- dropped at once: its memory must outlive the copy (on the fake driver
    -- every queued operation takes 300 us more, and freed memory is poisoned)
    child([==[
      local n = 1 << 12
      local before
      do
        local _ <close> = luacuda.device(2)
        luacuda.synchronize()
        before = luacuda.memory_info()
      end
      local s1 = luacuda.stream()
      local dst = luacuda.device_array({n}, "float32")
      for round = 1, 3 do
        local src
        do
          local _ <close> = luacuda.device(2)
          src = luacuda.to_device(luacuda.full({n}, round + 0.5, "float32"))
        end
        dst:copy_to_device(src, s1)
        src = nil
        collectgarbage()
        collectgarbage()
        s1:synchronize()
        local h = values(dst)
        eq({round + 0.5, round + 0.5}, {h[1], h[n]}, "round " .. round)
      end
      luacuda.synchronize()
      collectgarbage()
      luacuda.synchronize()
      local _ <close> = luacuda.device(2)
      luacuda.synchronize()
      local after = luacuda.memory_info()
      eq(before.used, after.used, "device 2's memory given back")
      -- on CUDA, to the pool too: the frees ran (on device 2's streams)
      eq(before.pool_used, after.pool_used, "device 2's pool")
    ]==], "FAKE_CUDA_DELAY_US=300")
  end)

  it("copies between devices on the cuda backend by the driver's peer rules", function()
    if not S.fake then return pending("the fake driver only: its trace") end
    -- devices 1 and 3 are 9.0s (peer access), device 2 an 8.6 (none): a
    -- contiguous copy is one cuMemcpyPeerAsync; a strided one with peer
    -- access enables it once and copies directly; without, it is staged
    -- through page-locked memory
    local trace = os.tmpname()
    child(([==[
      local function mark(name)
        local f = assert(io.open(%q, "a"))
        f:write("mark ", name, "\n")
        f:close()
      end
      local h = luacuda.arange(12, "float64"):reshape(3, 4)
      local on2 = luacuda.to_device(h, {device = 2})
      local on3 = luacuda.to_device(h, {device = 3})
      local dst = luacuda.device_array({3, 4}, "float64")
      mark("contiguous")
      dst:copy_to_device(on2)
      eq(h:totable(), values(dst), "contiguous")
      local t = luacuda.device_array({4, 3}, "float64")
      mark("direct")
      t:copy_to_device(on3.T)
      t:copy_to_device(on3.T)
      eq(h.T:copy():totable(), values(t), "direct")
      mark("staged")
      t:copy_to_device(on2.T)
      eq(h.T:copy():totable(), values(t), "staged")
      mark("end")
    ]==]):format(trace), "FAKE_CUDA_TRACE=" .. trace)
    local calls, section = {}, nil
    for line in io.lines(trace) do
      section = line:match("^mark (%S+)") or section
      if section then
        calls[section] = calls[section] or {}
        calls[section][line] = (calls[section][line] or 0) + 1
      end
    end
    os.remove(trace)
    assert.equal(1, calls.contiguous.cuMemcpyPeerAsync)
    assert.equal(1, calls.direct.cuCtxEnablePeerAccess, "peer access enabled once")
    assert.equal(1, calls.direct.cuMemPoolSetAccess, "device 3's pool granted to device 1 once")
    assert.is_nil(calls.direct.cuMemHostAlloc, "no staging with peer access")
    assert.is_nil(calls.staged.cuCtxEnablePeerAccess, "device 2 cannot")
    assert.equal(1, calls.staged.cuMemHostAlloc, "staged through page-locked memory")
  end)

  it("copies strided views of a peer's pool memory directly, its pool granting access", function()
    -- devices 1 and 3 have peer access on the fake; their arrays are pool
    -- memory, which peer access does not cover: the copy kernel of one
    -- device touching the other's pool blocks faults (a sticky illegal
    -- address) unless the pool granted access (cuMemPoolSetAccess)
    child([==[
      local h = luacuda.arange(12, "float64"):reshape(3, 4)
      local on3 = luacuda.to_device(h, {device = 3})
      local s1 = luacuda.stream()
      local t = luacuda.device_array({4, 3}, "float64")
      t:copy_to_device(on3.T)                      -- device 1 reads device 3's pool
      eq(h.T:copy():totable(), values(t), "read from device 3")
      t:fill(-1)
      t:copy_to_device(on3.T, s1)
      s1:synchronize()
      eq(h.T:copy():totable(), values(t), "read from device 3 on a stream")
      local back = luacuda.to_device(luacuda.full({3, 4}, -1, "float64"), {device = 3})
      back.T:copy_to_device(t)                     -- device 1 writes device 3's pool
      eq(h:totable(), values(back), "written into device 3")
      do                                           -- and the other way round
        local _ <close> = luacuda.device(3)
        local u = luacuda.device_array({4, 3}, "float64")
        u:copy_to_device(luacuda.to_device(h, {device = 1}).T)
        eq(h.T:copy():totable(), values(u), "device 3 reads device 1's pool")
      end
    ]==])
  end)

  it("waits for every device's queued work before freeing host memory (mapped, on device 2)", function()
    -- device 2's stream fills a host array mapped in place (registered);
    -- device 1 is current when it is collected: the deregistration and the
    -- free must wait for device 2's fills (on the fake every queued
    -- operation takes 300 us more), not for device 1's streams alone
    child([==[
      local n = 1 << 12
      for round = 1, 3 do
        local s2, a, m
        do
          local _ <close> = luacuda.device(2)
          s2 = luacuda.stream()
          a = luacuda.zeros({n}, "float32")
          m = luacuda.mapped(a)
          for i = 1, 8 do m:fill(round + i, s2) end
        end
        a, m = nil, nil
        collectgarbage()
        collectgarbage()
        luacuda.synchronize()                      -- device 1's work only
        local b
        do
          local _ <close> = luacuda.device(2)
          b = luacuda.mapped_array({n}, "float32")
          b:fill(round + 0.5, s2)
          s2:synchronize()
        end
        local got = b:copy()
        eq({round + 0.5, round + 0.5}, {got[1], got[n]}, "round " .. round)
      end
    ]==], "FAKE_CUDA_DELAY_US=300")
  end)

  it("gives a kernel its module's device's limits, whichever device was current when it was got", function()
    if S.backend ~= "cuda" then
      return pending("the cuda backend only: the fake's devices differ in shared memory (9.0, 8.6)")
    end
    child([==[
      local devs = luacuda.devices()
      local big = 150 * 1024
      assert(devs[1].max_shared_per_block >= big and devs[2].max_shared_per_block < big,
             "device 1 takes 150 KiB of shared memory a block, device 2 not")
      local m = luacuda.compile([[
        extern "C" __global__ void k(float *x) {
          extern __shared__ float s[];
          s[threadIdx.x] = threadIdx.x * 2.0f;
          __syncthreads();
          x[threadIdx.x] = s[31 - threadIdx.x];
        }]])
      do
        local _ <close> = luacuda.device(2)
        assert(m.k, "the kernel, got while device 2 is current")
      end
      local x = luacuda.device_array({32}, "float32")
      m.k:launch({grid = 1, block = 32, shared = big}, x)
      local want = {}
      for i = 1, 32 do want[i] = (32 - i) * 2 end
      eq(want, values(x), "launched on device 1 with 150 KiB")
    ]==])
  end)

  it("destroys a dropped stream of another device in that device's context", function()
    if not S.fake then return pending("the fake driver only: its trace") end
    -- a CUstream is its context's: destroyed with device 1 current, device
    -- 2's stream was refused (CUDA_ERROR_INVALID_HANDLE) and never destroyed
    local trace = os.tmpname()
    child([==[
      for _ = 1, 2 do
        local _ <close> = luacuda.device(2)
        luacuda.stream():synchronize()
      end
      collectgarbage()
      collectgarbage()
      eq(1, luacuda.current_device(), "current")
    ]==], "FAKE_CUDA_TRACE=" .. trace)
    local lines = {}
    for line in io.lines(trace) do lines[#lines + 1] = line end
    os.remove(trace)
    local destroyed = 0
    for i, line in ipairs(lines) do
      if line == "cuStreamDestroy_v2" then
        destroyed = destroyed + 1
        assert.is_nil((lines[i + 1] or ""):match("^  %-> (%d+)"), "cuStreamDestroy_v2 failed")
      end
    end
    assert.equal(2, destroyed, "both streams destroyed")
  end)

  it("names devices from 1 when from_dlpack takes a tensor of another device", function()
    child([==[
      local d
      do
        local _ <close> = luacuda.device(3)
        d = luacuda.to_device({1, 2, 3})
      end
      local cap = d:to_dlpack()
      S.misuse("luacuda.from_dlpack: the tensor is on device 3 (DLPack's device_id 2), but "
               .. "device 1 is current (luacuda.device)", luacuda.from_dlpack, cap)
      local _ <close> = luacuda.device(3)
      eq({1, 2, 3}, values(luacuda.from_dlpack(cap)), "on its device")
    ]==])
  end)

  it("has a fake driver that keeps NVIDIA's peer rules (spec/fake/fake_peer_test.c)", function()
    local bin = BUILD .. "/fake/fake_peer_test"
    if not S.exists(bin) then return pending("no " .. bin .. " (no cuda.h here)") end
    local ok, out = S.sh(bin)
    assert(ok and out:find("0 of 4 tests failed"), out)
  end)
end)
