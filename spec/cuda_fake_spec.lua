-- The CUDA backend against a fake driver (spec/fake/fake_cuda.c, built by make
-- check where the toolkit's cuda.h is): each scenario runs in a fresh
-- interpreter with LUACUDA_BACKEND=cuda, checks its results through the
-- public API and prints "ok"; the fake's trace says which driver calls did
-- the work. The fake runs the library's copy and fill kernels, and checks and traces
-- (but does not run) user kernels.
local S = require "spec.support"

local BUILD = os.getenv("LUACUDA_BUILD") or "build"
local FAKE = BUILD .. "/fake/libcuda.so.1"

local exists = S.exists

-- the toolkit's headers, where the specs that include them look
local TOOLKIT_INC = (os.getenv("CUDA_HOME") or "/usr/local/cuda") .. "/include"

local PRELUDE = [[
local l = require "luacuda"
local function eq(want, got, what)
  local function flat(t, out)
    if type(t) ~= "table" then
      out[#out + 1] = type(t) == "number" and ("%.17g"):format(t) or tostring(t)
      return out
    end
    for _, v in ipairs(t) do flat(v, out) end
    return out
  end
  local a, b = table.concat(flat(want, {}), ","), table.concat(flat(got, {}), ",")
  if a ~= b then error((what or "values") .. ": want " .. a .. ", got " .. b, 2) end
end
local function fails(pattern, f, ...)
  local ok, e = pcall(f, ...)
  if ok then error("no error, expected " .. pattern, 2) end
  if not tostring(e):find(pattern, 1, true) then error("error " .. tostring(e) .. " lacks " .. pattern, 2) end
  return e
end
]]

-- Run code with env (a string of VAR=value) and the fake; returns its
-- output and the trace's lines. The fake's default memory is set again,
-- as make check-fake-cuda gives the other specs more.
local function run(code, env)
  local dir = S.tmpdir()
  local f = assert(io.open(dir .. "/s.lua", "w"))
  f:write(PRELUDE, code, "\nprint('ok')\n")
  f:close()
  -- a hang (a broken list the old drain looped on) fails after two minutes
  local p = io.popen(("timeout 120 env LUACUDA_BACKEND=cuda LUACUDA_LIBCUDA=%s LUACUDA_CACHE_DIR=%s "
                      .. "FAKE_CUDA_TRACE=%s/trace FAKE_CUDA_MEMORY=256M %s lua5.4 %s/s.lua 2>&1"):format(
                       FAKE, dir .. "/cache", dir, env or "", dir))
  local out = p:read("a")
  p:close()
  local trace = {}
  local t = io.open(dir .. "/trace")
  if t then
    for line in t:lines() do trace[#trace + 1] = line end
    t:close()
  end
  os.execute("rm -rf " .. dir)
  return out, trace
end

local function count(trace, name)
  local n = 0
  for _, l in ipairs(trace) do if l == name or l:find("^launch " .. name .. " ") then n = n + 1 end end
  return n
end

-- the calls that failed, but for cuFuncGetParamInfo's end of the list and
-- a query's "not ready yet" (CUDA_ERROR_NOT_READY, 600)
local function failures(trace)
  local f = {}
  for i, l in ipairs(trace) do
    if l:find("^  %->") and trace[i - 1] ~= "cuFuncGetParamInfo" and
       not (l == "  -> 600" and trace[i - 1]:find("Query$")) then
      f[#f + 1] = trace[i - 1] .. l
    end
  end
  return f
end

-- run, expecting "ok" as the last line
local function scenario(code, env)
  local out, trace = run(code, env)
  assert(out:find("ok\n$"), out)
  return trace, out
end

-- The driver calls traced between the lines a scenario wrote with
-- mark(name) and the next mark, as a table of call name -> count
-- (a launch is counted under "launch", its "launch k ..." line; with
-- by_kernel, under "launch k" too). The cuCtxGetCurrent that opens each
-- backend call (the host's context check, src/backend/cuda/context.c) is
-- left out unless contexts is true.
local function between(trace, name, by_kernel, contexts)
  local calls, inside = {}, false
  for _, l in ipairs(trace) do
    if l:find("^mark ") then
      inside = l == "mark " .. name
    elseif inside and (contexts or l ~= "cuCtxGetCurrent") then
      local k = l:find("^launch ") and "launch" or l
      calls[k] = (calls[k] or 0) + 1
      local kname = by_kernel and l:match("^launch (%S+)")
      if kname then calls["launch " .. kname] = (calls["launch " .. kname] or 0) + 1 end
    end
  end
  return calls
end

local MARK = [[
local function mark(name)    -- a line in the fake's trace, between the calls
  local f = assert(io.open(os.getenv("FAKE_CUDA_TRACE"), "a"))
  f:write("mark ", name, "\n")
  f:close()
end
]]

-- Run one test of spec/unit/capi_test.c (a host program embedding luacuda)
-- on the fake; the output, which ends "exit 0" when it passed.
local function host_test(name, env)
  local dir = S.tmpdir()
  local p = io.popen(("timeout 120 env LUACUDA_BACKEND=cuda LUACUDA_LIBCUDA=%s "
                      .. "LUACUDA_CACHE_DIR=%s FAKE_CUDA_MEMORY=256M %s %s/capi_test %s 2>&1; echo exit $?"):format(
                       FAKE, dir .. "/cache", env or "", BUILD, name))
  local out = p:read("a")
  p:close()
  os.execute("rm -rf " .. dir)
  return out
end

describe("the cuda backend on the fake driver", function()
  if not exists(FAKE) then
    it("needs the fake driver", function() pending("no " .. FAKE .. " (no cuda.h here)") end)
    return
  end

  it("lists, selects and keeps apart the devices", function()
    scenario([==[
      assert(l.backend() == "cuda")
      local d = l.devices()
      eq({2, "luacuda fake GPU 0", 9, 0, 132, 256 << 20}, {#d, d[1].name, d[1].compute_capability[1],
         d[1].compute_capability[2], d[1].multiprocessors, d[1].memory})
      eq({"luacuda fake GPU 1", 8, 6, 84}, {d[2].name, d[2].compute_capability[1],
         d[2].compute_capability[2], d[2].multiprocessors})
      local a = l.to_device({1, 2, 3})
      local a0 = l.to_device(0)
      l.select_device(2)
      eq({2}, {l.current_device()})
      local b = l.to_device({4, 5, 6})
      eq({4, 5, 6}, b:totable())
      eq({1, 2, 3}, a:totable(), "a read while device 2 is current (a copy between devices)")
      local c = l.to_device({0, 0, 0})
      c:copy_to_device(a)                           -- device 1 to device 2: a peer copy
      eq({1, 2, 3}, c:totable(), "c after a peer copy")
      local m = l.compile([[extern "C" __global__ void k(long long *x) {}]])
      fails("the array is on device 1, but device 2 is current", function() m.k[{1, 1}](a) end)
      m.k[{1, 1}](b)
      -- the library's reduction kernels, compiled for each device
      eq({15, 3}, {b:sum(), b:argmax()})
      fails("luacuda.sum: the input array is on device 1, but device 2 is current",
            function() return a:sum() end)
      fails("luacuda.max: the out= array is on device 1, but device 2 is current",
            function() return b:max(nil, {out = a0}) end)
      l.select_device(1)
      eq({1, 2, 3}, a:totable())
      eq({6, 1}, {a:sum(), a:argmin()})
      fails("luacuda.select_device: no device 3 (there are 2)", l.select_device, 3)
    ]==])
  end)

  it("allocates from the pool, reports it and trims it", function()
    local trace = scenario([==[
      local keep = l.device_array(1000, "uint8")
      local info = l.memory_info()
      eq({256 << 20, 1000, 1000}, {info.total, info.pool_used, info.pool_reserved})
      do local _ <close> = l.device_array(1 << 20, "uint8") end
      l.synchronize()              -- the free runs when its stream reaches it
      info = l.memory_info()
      -- freed memory stays in the pool (release threshold) until trimmed
      eq({1000, 1000 + (1 << 20)}, {info.pool_used, info.pool_reserved})
      assert(info.free == info.total - info.pool_reserved, info.free)
      l.trim_pool()
      info = l.memory_info()
      eq({1000, 1000}, {info.pool_used, info.pool_reserved})
      keep[{}] = 7
      eq(7, keep[1000])
    ]==])
    assert.equal(2, count(trace, "cuMemAllocFromPoolAsync"))
    assert.equal(1, count(trace, "cuMemPoolTrimTo"))
    -- issue 14, item 9: a pool of luacuda's own; the device's default
    -- pool (the host program's cudaMallocAsync) is never even looked up
    assert.equal(1, count(trace, "cuMemPoolCreate"))
    assert.equal(0, count(trace, "cuDeviceGetDefaultMemPool"))
    assert.equal(0, count(trace, "cuMemAllocAsync"))
  end)

  -- issue 14, item 9: freed memory stays in the pool, so an allocation
  -- that only fits once it is given back trims the pool and succeeds
  it("trims its pool when an allocation runs short of memory", function()
    local trace = scenario([==[
      do local _ <close> = l.device_array(48 << 20, "uint8") end
      l.synchronize()
      local info = l.memory_info()
      eq({0, 48 << 20}, {info.pool_used, info.pool_reserved})
      do
        local b <close> = l.device_array(60 << 20, "uint8")
        b[{}] = 3
        eq(3, b[60 << 20])
        info = l.memory_info()
        eq({60 << 20, 60 << 20}, {info.pool_used, info.pool_reserved})
      end
      -- b's free perhaps not run yet: trimmed now, or in the retry after a
      -- collection and synchronize
      local c = l.device_array(62 << 20, "uint8")
      c[{}] = 4
      eq(4, c[62 << 20])
    ]==], "FAKE_CUDA_MEMORY=64M")
    assert(count(trace, "cuMemPoolTrimTo") >= 2)
    for _, f in ipairs(failures(trace)) do     -- only the allocations short of memory
      assert.equal("cuMemAllocFromPoolAsync  -> 2", f)
    end
  end)

  -- issue 32, defect 4: the pool keeps what is freed (its threshold is the
  -- most there is), and the fake charges module images, launches' local
  -- memory and cuBLAS's workspace to the device, counting the pool's idle
  -- blocks as used, as a GPU does; each of those calls, and managed
  -- allocations, short of memory, gives the idle blocks back and tries once
  -- more
  it("gives the pool's idle memory back when a module load, a launch, managed memory or cuBLAS runs short", function()
    local trace = scenario([==[
      -- the pool made to hold all the device's free memory, idle; made
      -- before: the arrays each step uses (a later allocation would take
      -- the idle block)
      local function fill_pool()
        collectgarbage()
        l.synchronize()
        do local _ <close> = l.device_array(l.memory_info().free, "uint8") end
        l.synchronize()
        eq(0, l.memory_info().free, "free memory")
      end
      local out = l.device_array(4, "float32")
      local idx = l.to_device({3, 0, 15, 7}, "int32")
      local a = l.to_device({{1, 2}, {3, 4}}, "float32")
      fill_pool()
      local m = l.compile([=[
      extern "C" __global__ void pick(float *out, const int *idx, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        // written and read at indices known only as it runs: local memory
        // (64 bytes of frame, ptxas says; t[j] = i + j it would compute
        // without the array, and the cubin would say 0)
        float t[16];
        for (int j = 0; j < 16; j++) t[idx[j & 3] & 15] = (float)(i + j);
        if (i < n) out[i] = t[idx[i] & 15];
      }
      ]=])
      local pick = m.pick
      fill_pool()
      pick[{1, 4}](out, idx, 4)
      eq({12, 14, 16, 18}, out:totable())     -- t[idx[i]] last written at j = 12 + i
      fill_pool()
      local g = l.managed_array(4, "float32")
      g[{}] = 2
      eq({2, 2, 2, 2}, g:totable())
      g = nil
      fill_pool()
      local name, why = l.blas()
      assert(name:find("^cublas"), why)
      eq({7, 10, 15, 22}, l.matmul(a, a):totable())
    ]==], "FAKE_CUDA_MEMORY=64M LUACUDA_CUBLAS=" .. BUILD .. "/fake/libcublas.so.13")
    -- each trims the pool, and each failed call is the allocation short of memory
    assert(count(trace, "cuMemPoolTrimTo") >= 4)
    local short = {}
    for _, f in ipairs(failures(trace)) do short[f] = true end
    assert.same({["cuModuleLoadDataEx  -> 2"] = true, ["cuLaunchKernel  -> 2"] = true,
                 ["cuMemAllocManaged  -> 2"] = true}, short)
  end)

  -- issue 14, item 9: the host program's own allocations in the default
  -- pool are not luacuda's pool figures, and its threshold stays the host's
  it("leaves the default pool to the host program (capi_test host_default_pool)", function()
    local out = host_test("host_default_pool")
    assert(out:find("exit 0\n$"), out)
  end)

  -- issue 14, item 2: the host program sets its own context (device 2's,
  -- then none) between luacuda calls; luacuda works in its own, and the
  -- host's is current again after each call (raising ones, finalizers and
  -- lua_close included); a thread with none keeps luacuda's
  it("leaves the host program's current context as it found it (capi_test host_context)", function()
    local out = host_test("host_context")
    assert(out:find("exit 0\n$"), out)
  end)

  -- issue 14, item 1: a host program's non-blocking stream is asked for its
  -- flags and ordered with events where the legacy stream would not wait
  it("orders a host program's non-blocking stream (capi_test host_nonblocking_stream)", function()
    local out = host_test("host_nonblocking_stream", "FAKE_CUDA_DELAY_US=300")
    assert(out:find("exit 0\n$"), out)
  end)

  it("uses cuMemAlloc where the device has no memory pools", function()
    local trace = scenario([==[
      local a = l.to_device({1.5, 2.5})
      eq({1.5, 2.5}, a:totable())
      assert(l.memory_info().pool_used == nil)
      l.trim_pool()
      a = nil
      collectgarbage()
    ]==], "FAKE_CUDA_NO_POOLS=1")
    assert.equal(0, count(trace, "cuMemAllocFromPoolAsync"))
    assert.equal(0, count(trace, "cuMemPoolCreate"))
    assert.equal(1, count(trace, "cuMemAlloc_v2"))
    assert.equal(1, count(trace, "cuMemFree_v2"))
  end)

  it("retries an allocation once after a full collection, then names the error", function()
    local trace = scenario([==[
      for i = 1, 3 do local _ = l.device_array(1000, "uint8") end    -- the third is refused once
      fails("luacuda.device_array: ", l.device_array, 2^30, "uint8")
      local e = fails("CUDA_ERROR_OUT_OF_MEMORY", l.device_array, 2^30, "uint8")
      assert(e:find("cuMemAllocFromPoolAsync", 1, true), e)
    ]==], "FAKE_CUDA_FAIL=cuMemAllocFromPoolAsync:3:2")
    -- the injected failure, then the same allocation again, which succeeds
    local i = 1
    while trace[i] ~= "  -> 2" do i = i + 1 end
    assert.equal("cuMemAllocFromPoolAsync", trace[i - 1])
    repeat i = i + 1 until trace[i] == "cuMemAllocFromPoolAsync"
    assert.not_matches("^  %->", trace[i + 1])
  end)

  it("reports a failed driver call with its name and leaves the arguments unchanged", function()
    scenario([==[
      local d = l.to_device({1, 2, 3})
      local h = l.array({7, 8, 9})
      local e = fails("luacuda.copy_to_device: cuMemcpyAsync: CUDA_ERROR_INVALID_VALUE",
                      function() d:copy_to_device(h) end)
      eq({1, 2, 3}, d:totable())
    ]==], "FAKE_CUDA_FAIL=cuMemcpyAsync:2:1")
  end)

  it("copies contiguous arrays in every direction, with and without a stream", function()
    local trace = scenario([==[
      local h = l.array({{1, 2, 3}, {4, 5, 6}}, "int32")
      local d = l.to_device(h)
      eq({1, 2, 3, 4, 5, 6}, d:totable())
      local d2 = l.device_array_like(d)
      d2:copy_to_device(d)
      eq({1, 2, 3, 4, 5, 6}, d2:copy_to_host():totable())
      local s = l.stream()
      local p = l.pinned_array({2, 3}, "int32")
      d2:copy_to_device(l.array({{6, 5, 4}, {3, 2, 1}}, "int32"), s)
      d2:copy_to_host(p, s)
      s:synchronize()
      eq({6, 5, 4, 3, 2, 1}, p:totable())
      eq({5}, {d2[{1, 2}]})
      d2[{2, 3}] = 42
      eq({6, 5, 4, 3, 2, 42}, d2:totable())
    ]==])
    assert.equal(0, count(trace, "lc_copy_strided"))
    assert.equal(0, count(trace, "cuMemcpy2DAsync_v2"))
    assert.same({}, failures(trace))
  end)

  it("copies 2-D and 3-D strided views with cuMemcpy2D/3D, negative strides included", function()
    local trace = scenario([==[
      local t = {}
      for i = 1, 4 do t[i] = {} for j = 1, 5 do t[i][j] = {} for k = 1, 6 do
        t[i][j][k] = i * 100 + j * 10 + k end end end
      local d = l.to_device(t, nil, {dtype = "float64"})
      local h = l.array(t, "float64")
      -- rows of a 2-D slice, device to host and host to device
      local v = d[{2, {2, 4}, {3, 5}}]
      eq({223, 224, 225, 233, 234, 235, 243, 244, 245}, v:copy_to_host():totable())
      local planes = d[{{1, 4, 2}, {1, 5, 2}, {2, 6}}]       -- planes of rows: 3-D
      local want = {}
      for i = 1, 4, 2 do for j = 1, 5, 2 do for k = 2, 6 do want[#want + 1] = i * 100 + j * 10 + k end end end
      eq(want, planes:copy_to_host():totable())
      -- both sides walked backwards: the same rows, forwards
      local back = d[{{4, 1, -1}, 3, {6, 1, -1}}]
      local hb = h[{{4, 1, -1}, 3, {6, 1, -1}}]
      local out = l.array({{0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0}}, "float64")
      out[{{4, 1, -1}, {6, 1, -1}}] = back
      eq(h[{{}, 3, {}}]:totable(), out:totable())
      -- host to device into a strided view; elements between are untouched
      local z = l.to_device(l.zeros({4, 5, 6}, "float64"))
      z[{{1, 4, 2}, {1, 5, 2}, {2, 6}}] = h[{{1, 4, 2}, {1, 5, 2}, {2, 6}}]
      local zt = z:totable()
      eq({132, 0, 0}, {zt[1][3][2], zt[1][3][1], zt[2][3][2]})
      -- device to device on a stream: rows of 240 bytes at a pitch of 480,
      -- which the fake refuses as the driver may (not cuMemAllocPitch's),
      -- and rows of 24 (narrow), by the copy kernel (issue 14, item 8)
      local s = l.stream()
      local f = l.device_array({2, 5, 6}, "float64")
      f:copy_to_device(d[{{1, 4, 2}}], s)
      local e = l.device_array({3, 3}, "float64")
      e:copy_to_device(v, s)
      s:synchronize()
      local ft = f:totable()
      eq({111, 156, 311, 356}, {ft[1][1][1], ft[1][5][6], ft[2][1][1], ft[2][5][6]})
      eq({223, 224, 225, 233, 234, 235, 243, 244, 245}, e:totable())
    ]==])
    assert.is_true(count(trace, "cuMemcpy2DAsync_v2") >= 3)
    assert.is_true(count(trace, "cuMemcpy3DAsync_v2") >= 2)
    assert.equal(2, count(trace, "lc_copy_strided"))
    assert.same({"cuMemcpy2DAsync_v2  -> 1"}, failures(trace))
  end)

  it("copies other layouts through the library kernel", function()
    local trace = scenario([==[
      local d = l.to_device({{1, 2, 3}, {4, 5, 6}}, nil, {dtype = "int16"})
      local t = l.device_array({3, 2}, "int16")
      t:copy_to_device(d:transpose())                       -- device to device
      eq({1, 4, 2, 5, 3, 6}, t:totable())
      eq({1, 4, 2, 5, 3, 6}, d:transpose():copy_to_host():totable())   -- staged to the host
      local h = l.array({{1, 2, 3}, {4, 5, 6}}, "int16")
      local u = l.device_array({3, 2}, "int16")
      u:copy_to_device(h:transpose())                       -- staged from the host
      eq({1, 4, 2, 5, 3, 6}, u:totable())
      local m = l.mapped_array({2, 3}, "int16")
      m[{}] = 9
      t:copy_to_device(m:transpose())                        -- mapped memory: the kernel reads it
      eq({9, 9, 9, 9, 9, 9}, t:totable())
      local r = l.to_device({{1, 2, 3}, {4, 5, 6}}, nil, {dtype = "int16"})
      r[{{}, {3, 1, -1}}] = d[{{2, 1, -1}, {}}]              -- mixed directions
      eq({6, 5, 4, 3, 2, 1}, r:totable())
      eq({3, 2, 1}, d[{1, {3, 1, -1}}]:copy_to_host():totable())
    ]==])
    assert.is_true(count(trace, "lc_copy_strided") >= 5)
    assert.same({}, failures(trace))
  end)

  it("fills with memsets where the value repeats and with the kernel otherwise", function()
    local trace = scenario([==[
      local a = l.device_array({5}, "int32"); a[{}] = -1; eq({-1, -1, -1, -1, -1}, a:totable())
      local b = l.device_array({4}, "int16"); b[{}] = 258; eq({258, 258, 258, 258}, b:totable())
      local c = l.device_array({3}, "float32"); c[{}] = 1.5; eq({1.5, 1.5, 1.5}, c:totable())
      local d = l.device_array({3}, "float64"); d[{}] = 2.25; eq({2.25, 2.25, 2.25}, d:totable())
      local e = l.to_device({{1, 2, 3}, {4, 5, 6}}, nil, {dtype = "float32"})
      e[{{}, 2}] = 7
      eq({1, 7, 3, 4, 7, 6}, e:totable())
      local s = l.stream()
      e:setitem({2, 3}, 8, s)
      s:synchronize()
      eq(8, e[{2, 3}])
    ]==])
    assert.equal(1, count(trace, "cuMemsetD8Async"))
    assert.equal(1, count(trace, "cuMemsetD16Async"))
    assert.equal(2, count(trace, "cuMemsetD32Async"))     -- 1.5 and 8 as float32
    assert.equal(2, count(trace, "lc_fill_strided"))      -- 2.25 as float64, 7 in a column
  end)

  -- issue 14, item 7: a fill whose value does not repeat is one launch of
  -- lc_fill_strided with the value in its arguments: no temporary buffer,
  -- no upload, no host function
  it("fills float64 views with one launch of the fill kernel, the value in its arguments", function()
    local trace = scenario(MARK .. [==[
      local third, tenth = 1 / 3, -0.1            -- bytes that do not repeat
      local d = l.to_device({{1, 2, 3}, {4, 5, 6}}, nil, {dtype = "float64"})
      local s = l.stream()
      local z = l.device_array({}, "float64")
      l.synchronize()
      mark("contiguous")
      d:fill(third)
      mark("contiguous, stream")
      d:fill(tenth, s)
      mark("column")
      d[{{}, 2}]:fill(third)
      mark("column, stream")
      d[{{}, 3}]:fill(2.75, s)
      mark("2-D strided, backwards")
      local big = l.to_device(l.zeros({4, 6}, "float64"))
      l.synchronize()
      mark("big")
      big[{{4, 1, -2}, {1, 6, 2}}]:fill(third)
      mark("0-d")
      z:fill(tenth)
      mark("0-d, stream")
      z:fill(third, s)
      mark("element")
      d[{1, 1}] = 1.7
      mark("element, stream")
      d:setitem({2, 1}, -2.3, s)
      mark("end")
      s:synchronize()
      eq({{1.7, third, 2.75}, {-2.3, third, 2.75}}, d:totable())
      eq(third, z:item())
      local bt = big:totable()
      for i = 1, 4 do for j = 1, 6 do
        eq((i % 2 == 0 and j % 2 == 1) and third or 0, bt[i][j], ("big[%d][%d]"):format(i, j))
      end end
    ]==])
    assert.same({}, failures(trace))
    for _, m in ipairs({"contiguous", "contiguous, stream", "column", "column, stream", "big",
                        "0-d", "0-d, stream", "element", "element, stream"}) do
      local calls = between(trace, m, true)
      assert.same({m, 1, 1, 0, 0, 0, 0}, {m, calls.launch, calls["launch lc_fill_strided"],
        calls.cuLaunchHostFunc or 0, calls.cuMemAllocAsync or 0, calls.cuMemAllocFromPoolAsync or 0,
        calls.cuMemcpyAsync or 0})
    end
    -- the arguments: the value's bytes, and the contiguous fast path with
    -- 32-bit indices (flags 3) where the elements lie side by side
    local args = {}
    for _, t in ipairs(trace) do
      local a = t:match("^launch lc_fill_strided %S+ %S+ %S+ %x+ (%x+)$")
      if a then args[#args + 1] = a end
    end
    assert.equal(9, #args)
    local function flags(a) return tonumber(a:sub(47, 48) .. a:sub(45, 46) .. a:sub(43, 44) .. a:sub(41, 42), 16) end
    local function word(a) return tonumber(a:sub(33, 34), 16) end
    assert.equal("555555555555d53f", args[1]:sub(24 * 2 + 2 * 256 * 2 + 1, 24 * 2 + 2 * 256 * 2 + 16))
    assert.same({3, 8}, {flags(args[1]), word(args[1])})                -- contiguous
    assert.same({2, 8}, {flags(args[3]), word(args[3])})                -- a column: strided
    assert.same({3, 3}, {flags(args[6]), flags(args[8])})               -- 0-d, one element
  end)

  -- issue 14, item 8: rows narrower than 64 bytes device to device go to
  -- the copy kernel; a 2-D or 3-D copy the driver refuses
  -- (CUDA_ERROR_INVALID_VALUE) is done by the kernel too
  it("copies narrow rows device to device with the copy kernel, and falls back to it when the driver refuses a 2-D or 3-D copy", function()
    local code = MARK .. [==[
      local t = {}
      for i = 1, 4 do t[i] = {} for j = 1, 5 do t[i][j] = {} for k = 1, 10 do
        t[i][j][k] = i * 1000 + j * 100 + k end end end
      local d = l.to_device(t, nil, {dtype = "float64"})
      local s = l.stream()
      local c = l.device_array({4}, "float64")
      local w = l.device_array({4, 8}, "float64")
      local p = l.device_array({2, 3, 10}, "float64")
      l.synchronize()
      mark("column")
      c:copy_to_device(d[{{}, 2, 3}])                 -- rows of 8 bytes
      mark("wide")
      w:copy_to_device(d[{{}, 4, {2, 9}}], s)         -- rows of 64 bytes
      mark("planes")
      p:copy_to_device(d[{{1, 4, 2}, {1, 5, 2}}], s)  -- planes of rows of 80 bytes
      local a, b = l.device_array({4, 128}, "float64"), l.device_array({4, 128}, "float64")
      a:fill(7, s)
      b:fill(0, s)
      mark("aligned")
      b[{{}, {65, 128}}]:copy_to_device(a[{{}, {1, 64}}], s)  -- at a pitch of 1024 bytes
      mark("end")
      s:synchronize()
      local bt = b:totable()
      eq({0, 7, 0, 7}, {bt[1][64], bt[1][65], bt[4][64], bt[4][128]})
      eq({1203, 2203, 3203, 4203}, c:totable())
      local wt = w:totable()
      eq({1402, 1409, 4402, 4409}, {wt[1][1], wt[1][8], wt[4][1], wt[4][8]})
      local pt = p:totable()
      eq({1101, 1110, 1501, 3101, 3510}, {pt[1][1][1], pt[1][1][10], pt[1][3][1], pt[2][1][1], pt[2][3][10]})
    ]==]
    local function calls(trace, m)
      local c = between(trace, m, true)
      return {m, c.cuMemcpy2DAsync_v2 or 0, c.cuMemcpy3DAsync_v2 or 0, c["launch lc_copy_strided"] or 0}
    end
    local trace = scenario(code)
    assert.same({"column", 0, 0, 1}, calls(trace, "column"))
    -- pitches of 400, 80 and 64 bytes, which cuMemAllocPitch does not give:
    -- the fake refuses them as the manual says the driver may (issue 32),
    -- and the kernel does the copy; pitches of 1024 bytes it takes
    assert.same({"wide", 1, 0, 1}, calls(trace, "wide"))
    assert.same({"planes", 0, 1, 1}, calls(trace, "planes"))
    assert.same({"aligned", 1, 0, 0}, calls(trace, "aligned"))
    assert.same({"cuMemcpy2DAsync_v2  -> 1", "cuMemcpy3DAsync_v2  -> 1"}, failures(trace))
    -- whatever the driver refuses the copy for, the kernel does it
    trace = scenario(code, "FAKE_CUDA_FAIL=cuMemcpy2DAsync_v2:2:1")
    assert.same({"aligned", 1, 0, 1}, calls(trace, "aligned"))
  end)

  -- issue 32, defect 8: a copy between the host and a view of narrow rows
  -- (a column of {N, 2} float32: 4-byte rows at a pitch of 8) is one
  -- contiguous transfer and one launch of the copy kernel on the device
  -- side, not a 2-D memcpy that moves N four-byte lines
  it("stages host-device copies of narrow rows: one transfer and the copy kernel, not a line per row", function()
    local trace = scenario(MARK .. [==[
      local n = 1000
      local t = {}
      for i = 1, n do t[i] = {i, -i} end
      local h = l.array(t, "float32")
      local d = l.to_device(h)
      local p = l.pinned_array({n, 2}, "float32")
      local c = l.device_array({n}, "float32")
      local s = l.stream()
      l.synchronize()
      mark("down")
      local col = d[{{}, 2}]:copy_to_host()          -- device rows of 4 bytes to the host
      mark("up")
      d[{{}, 1}] = h[{{}, 2}]                        -- host rows to device rows
      mark("pinned down")
      d[{{}, 2}]:copy_to_host(p[{{}, 1}], s)         -- on a stream, into pinned rows
      mark("pinned up")
      c:copy_to_device(p[{{}, 1}], s)                -- and back to a contiguous array
      mark("end")
      s:synchronize()
      local dt, ct = d:totable(), c:totable()
      for i = 1, n do
        if col[i] ~= -i or dt[i][1] ~= -i or dt[i][2] ~= -i or ct[i] ~= -i then
          error(("element %d: %s %s %s %s"):format(i, col[i], dt[i][1], dt[i][2], ct[i]))
        end
      end
    ]==])
    for _, m in ipairs({"down", "up", "pinned down", "pinned up"}) do
      local calls = between(trace, m, true)
      assert.same({m, 0, 0, 1, 1}, {m, calls.cuMemcpy2DAsync_v2 or 0, calls.cuMemcpy3DAsync_v2 or 0,
                                    calls.cuMemcpyAsync or 0, calls["launch lc_copy_strided"] or 0})
    end
    assert.same({}, failures(trace))
  end)

  it("page-locks, maps, registers and manages host memory", function()
    local trace = scenario([==[
      local p = l.pinned_array({4}, "float32")
      p[{}] = 1.5
      eq({1.5, 1.5, 1.5, 1.5}, l.to_device(p):totable())
      local m = l.mapped_array({2, 2}, "int32", {wc = true})
      m[{}] = 3
      local d = l.device_array({2, 2}, "int32")
      d:copy_to_device(m)
      eq({3, 3, 3, 3}, d:totable())
      local km = l.compile([[extern "C" __global__ void k(int *x) {}]])
      km.k[{1, 1}](m)                           -- mapped memory goes to a kernel
      local h = l.array({5, 6, 7, 8}, "int32")
      do
        local mh <close> = l.mapped(h)
        km.k[{1, 1}](mh)                        -- registered with DEVICEMAP
        local d2 = l.to_device(mh)
        eq({5, 6, 7, 8}, d2:totable())
      end
      fails("a host array cannot be passed to a kernel", function() km.k[{1, 1}](h) end)
      do local _ <close> = l.register(h) end
      local g = l.managed_array({3}, "int32")
      g[{}] = 4
      km.k[{1, 1}](g)
      eq({4, 4, 4}, g:totable())
    ]==])
    assert.equal(2, count(trace, "cuMemHostAlloc"))
    assert.equal(2, count(trace, "cuMemHostRegister_v2"))
    assert.equal(2, count(trace, "cuMemHostUnregister"))
    assert.equal(1, count(trace, "cuMemAllocManaged"))
    assert.same({}, failures(trace))
  end)

  -- issue 14, item 12: write-combined memory has a device address of its
  -- own (cuMemHostGetDevicePointer); the fake maps its pages twice, and its
  -- host address faults on the device
  it("gives kernels, memsets and the copy kernel the device address of write-combined mapped memory", function()
    local trace = scenario([==[
      local m = l.mapped_array({2, 3}, "int32", {wc = true})
      assert(require("luacuda.core")._host_flags(m).wc)
      local s = l.stream()
      m:fill(3, s)                               -- a memset on the stream
      s:synchronize()
      eq({3, 3, 3, 3, 3, 3}, m:totable())
      m[{1, 2}] = 7                              -- the host writes its own address
      local d = l.device_array({3, 2}, "int32")
      d:copy_to_device(m:transpose())           -- the copy kernel reads it
      eq({3, 3, 7, 3, 3, 3}, d:totable())
      local t = l.to_device({{1, 2, 3}, {4, 5, 6}}, nil, {dtype = "int32"})
      local w = l.mapped_array({3, 2}, "int32", {wc = true})
      w[{}] = t:transpose()                      -- the copy kernel writes it
      eq({1, 4, 2, 5, 3, 6}, w:totable())
      local c = l.device_array({2, 3}, "int32")
      c:copy_to_device(m)                        -- cuMemcpyAsync: either address
      eq({3, 7, 3, 3, 3, 3}, c:totable())
      local km = l.compile([[extern "C" __global__ void k(int *x, Array<int, 2> y) {}]])
      km.k[{1, 1}](m, w)                         -- a pointer and an Array<int, 2>
      l.synchronize()
    ]==])
    assert.same({}, failures(trace))
    assert.equal(2, count(trace, "cuMemHostAlloc"))
    assert.is_true(count(trace, "cuMemHostGetDevicePointer_v2") >= 2)
    assert.is_true(count(trace, "lc_copy_strided") >= 2)
  end)

  -- issue 14, item 13: a host function touching managed memory while
  -- another stream's kernel runs crashes where the device has no concurrent
  -- managed access; such copies go through the driver
  it("copies managed memory on the device, and all of it where concurrent managed access is 0", function()
    local code = MARK .. [==[
      local s = l.stream()
      local a = l.managed_array({2, 3}, "int32")
      a[{}] = 5
      local b = l.managed_array({2, 3}, "int32")
      local c = l.managed_array({3, 2}, "int32")
      local h = l.array({{1, 2, 3}, {4, 5, 6}}, "int32")
      local p = l.pinned_array({2, 3}, "int32")
      local t = l.zeros({3, 2}, "int32")
      mark("managed")
      b:copy_to_device(a, s)                    -- managed to managed
      c:copy_to_device(a:transpose(), s)        -- the same, strided
      mark("host")
      a:copy_to_device(h, s)                    -- host to managed
      a:copy_to_host(p, s)                      -- managed to pinned
      c:copy_to_device(h:transpose(), s)        -- host to managed, strided
      a:transpose():copy_to_host(t, s)          -- managed to host, strided
      mark("end")
      s:synchronize()
      eq({5, 5, 5, 5, 5, 5}, b:totable())
      eq({1, 2, 3, 4, 5, 6}, p:totable())
      eq({1, 4, 2, 5, 3, 6}, c:totable())
      eq({1, 4, 2, 5, 3, 6}, t:totable())
    ]==]
    local function copies(calls)
      return {calls.cuLaunchHostFunc or 0, calls.cuMemcpyAsync or 0, calls.launch or 0}
    end
    -- an H100: managed to managed on the device, the rest by host functions
    local trace = scenario(code)
    assert.same({0, 1, 1}, copies(between(trace, "managed")))
    assert.same({4, 0, 0}, copies(between(trace, "host")))
    -- no concurrent managed access: all through the driver (a strided copy
    -- stages the host side, whose buffer a host function frees)
    trace = scenario(code, "FAKE_CUDA_CONCURRENT_MANAGED=0")
    assert.same({0, 1, 1}, copies(between(trace, "managed")))
    local host = between(trace, "host")
    assert.same({1, 4, 2}, copies(host))
    assert.same({}, failures(trace))
  end)

  it("orders work on streams and times it with events", function()
    local trace = scenario([==[
      local s1, s2 = l.stream(), l.stream()
      local e1, e2 = l.event(), l.event()
      local d = l.device_array({1000}, "float32")
      e1:record(s1)
      d:copy_to_device(l.zeros({1000}, "float32"), s1)
      e2:record(s1)
      e2:wait(s2)
      e2:synchronize()
      assert(e1:query() and e2:query() and s1:query())
      local ms = e1:elapsed_time(e2)
      assert(type(ms) == "number" and ms >= 0, ms)
      local nt = l.event({timing = false})
      nt:record(s2)
      fails("has no time", e1.elapsed_time, e1, nt)
      fails("has not been recorded", e1.elapsed_time, e1, l.event())
      s2:synchronize()
      l.synchronize()
      s1:close()
      s2:close()
    ]==])
    assert.equal(1, count(trace, "cuStreamWaitEvent"))
    assert.equal(1, count(trace, "cuEventElapsedTime_v2"))
    assert.equal(2, count(trace, "cuStreamDestroy_v2"))
  end)

  it("packs a user kernel's parameters as its PTX declares them", function()
    local trace = scenario([==[
      local m = l.compile([[
        struct P { double a; int b; };
        extern "C" __global__ void k(float *x, float a, int n, Array<int, 2> v, char c,
                                     double d, bool f, P *rec) {}]])
      local x = l.device_array({4}, "float32")
      local v = l.device_array({3, 5}, "int32")
      local r = l.to_device({{a = 1.0, b = 2}}, nil, {dtype = l.record({{"a", "float64"}, {"b", "int32"}})})
      m.k[{{2, 3}, {32, 2}}](x, 2.5, -7, v[{{}, {2, 5, 2}}], 65, 1.25, true, r)
    ]==])
    local line
    for _, l in ipairs(trace) do if l:find("^launch k ") then line = l end end
    assert.truthy(line, "no launch of k in the trace")
    local words = {}
    for w in line:gmatch("%S+") do words[#words + 1] = w end
    assert.same({"launch", "k", "2,3,1", "32,2,1", "0"}, {table.unpack(words, 1, 5)})
    local function bytes(hex) return (hex:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)) end
    local p = {}
    for i = 6, #words do p[#p + 1] = bytes(words[i]) end
    assert.equal(8, #p, line)
    assert.equal(2.5, (string.unpack("<f", p[2])))
    assert.equal(-7, (string.unpack("<i4", p[3])))
    assert.equal(40, #p[4])                              -- Array<int, 2>: data, shape, strides
    local _, s1, s2, st1, st2 = string.unpack("<i8i8i8i8i8", p[4])
    assert.same({3, 2, 20, 8}, {s1, s2, st1, st2})
    assert.equal(65, p[5]:byte())
    assert.equal(1.25, (string.unpack("<d", p[6])))
    assert.equal(1, p[7]:byte())
    assert.equal(8, #p[8])
  end)

  -- the launch path the issue asks for: nothing per launch or per
  -- allocation but the one driver call that does the work, and the
  -- cuCtxGetCurrent every call makes (issue 14, item 2: the host program
  -- may have made another context current since the last call; the driver
  -- answers from its thread-local state)
  it("launches a kernel in a loop with one cuLaunchKernel each and nothing else", function()
    local trace = scenario(MARK .. [==[
      local m = l.compile([[extern "C" __global__ void k(float *x, float a, int n, double d) {}]])
      local x = l.device_array(1024, "float32")
      local s = l.stream()
      m.k[{4, 256}](x, 2.5, 1024, 1.0)          -- the first launch may look things up
      m.k[{4, 256, s}](x, 2.5, 1024, 1.0)
      mark("loop")
      for _ = 1, 100 do m.k[{4, 256}](x, 2.5, 1024, 1.0) end
      for _ = 1, 100 do m.k[{4, 256, s}](x, 2.5, 1024, 1.0) end
      mark("end")
    ]==])
    assert.same({cuCtxGetCurrent = 200, cuLaunchKernel = 200, launch = 200}, between(trace, "loop", false, true))
  end)

  -- issue 14, item 11: an H100 gives a block 227 KiB of shared memory once
  -- the kernel opts in (cuFuncSetAttribute), less its static shared memory
  it("opts a kernel into the device's shared memory per block, once per kernel and size", function()
    local trace = scenario(MARK .. [==[
      local d = l.devices()
      eq({232448, 101376}, {d[1].max_shared_per_block, d[2].max_shared_per_block})
      local m = l.compile([[
        extern "C" __global__ void k(float *x) { extern __shared__ float s[]; x[0] = s[threadIdx.x]; }
        extern "C" __global__ void st(float *x) {
          __shared__ float buf[2048];                  // 8 KiB of static shared memory
          extern __shared__ float s[];
          buf[threadIdx.x] = x[threadIdx.x];
          __syncthreads();
          x[threadIdx.x] = buf[31 - threadIdx.x] + s[threadIdx.x];
        }]])
      local x = l.device_array(32, "float32")
      local _ = m.st                                -- looked up before the marks
      m.k[{1, 32, nil, 48 * 1024}](x)               -- within the default: no attribute
      mark("big")
      for _ = 1, 10 do m.k[{1, 32, nil, 200 * 1024}](x) end    -- opts in once
      m.k[{1, 32, nil, 100 * 1024}](x)              -- less: nothing more
      mark("bigger")
      m.k[{1, 32, nil, 232448}](x)                  -- the device's whole limit
      mark("static")
      -- 44 KiB of dynamic and 8 KiB of static memory: over the default 48 KiB together
      m.st[{1, 32, nil, 44 * 1024}](x)
      m.st[{1, 32, nil, 44 * 1024}](x)
      mark("over")
      local e = fails("luacuda.launch: kernel 'st': 230000 bytes of dynamic shared memory is more than "
                      .. "the 224256 this kernel may have (device 1 allows a block 232448 bytes of "
                      .. "shared memory, and the kernel has 8192 of static shared memory)",
                      function() m.st[{1, 32, nil, 230000}](x) end)
      fails("luacuda.launch: kernel 'k': 232449 bytes of dynamic shared memory is more than 232448",
            function() m.k[{1, 32, nil, 232449}](x) end)
      mark("end")
      l.synchronize()
      l.select_device(2)                            -- an 8.6 device: 99 KiB
      local m2 = l.compile([[extern "C" __global__ void k(float *x) { extern __shared__ float s[]; x[0] = s[0]; }]])
      local y = l.device_array(32, "float32")
      m2.k[{1, 32, nil, 101376}](y)
      fails("kernel 'k': 101377 bytes of dynamic shared memory is more than the 101376 this kernel "
            .. "may have (device 2 allows a block 101376 bytes of shared memory, and the kernel has 0 "
            .. "of static shared memory)", function() m2.k[{1, 32, nil, 101377}](y) end)
      l.synchronize()
    ]==])
    assert.same({cuFuncSetAttribute = 1, cuLaunchKernel = 11, launch = 11}, between(trace, "big"))
    assert.same({cuFuncSetAttribute = 1, cuLaunchKernel = 1, launch = 1}, between(trace, "bigger"))
    assert.same({cuFuncGetAttribute = 1, cuFuncSetAttribute = 1, cuLaunchKernel = 2, launch = 2},
                between(trace, "static"))
    assert.same({}, between(trace, "over"))
    assert.same({}, failures(trace))
    local sizes = {}
    for _, line in ipairs(trace) do
      local k, sh = line:match("^launch (%w+) %S+ %S+ (%d+)")
      if k then sizes[#sizes + 1] = k .. ":" .. sh end
    end
    assert.same({"k:49152", "k:204800", "k:102400", "k:232448", "st:45056", "st:45056", "k:101376"},
                {sizes[1], sizes[2], sizes[12], sizes[13], sizes[14], sizes[15], sizes[16]})
  end)

  it("names the kernel's threads per block and registers when a launch is out of resources", function()
    scenario([==[
      local m = l.compile([[
        extern "C" __global__ void __launch_bounds__(256) k(float *x) { x[threadIdx.x] = 1; }
        extern "C" __global__ void h(float *x) { x[threadIdx.x] = 2; }]])
      local x = l.device_array(1024, "float32")
      m.k[{1, 256}](x)
      fails("luacuda.launch: kernel 'k': cuLaunchKernel: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (blocks "
            .. "of 512 threads; the kernel takes at most 256 threads per block and uses 128 "
            .. "registers per thread)", function() m.k[{1, 512}](x) end)
      fails("kernel 'h': cuLaunchKernel: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (blocks of 1024 threads; "
            .. "the kernel takes at most 512 threads per block and uses 128 registers per thread)",
            function() m.h[{1, 1024}](x) end)
      m.h[{2, 512}](x)                              -- not sticky: the context goes on
      l.synchronize()
    ]==], "FAKE_CUDA_REGS=128")
  end)

  it("allocates and frees a 1 MiB device array in a loop with the stream-ordered calls only", function()
    local trace = scenario(MARK .. [==[
      l.device_array(1 << 20, "uint8")
      collectgarbage()
      mark("loop")
      for _ = 1, 100 do
        local a <close> = l.device_array(1 << 20, "uint8")
      end
      mark("end")
    ]==])
    assert.same({cuMemAllocFromPoolAsync = 100, cuMemFreeAsync = 100}, between(trace, "loop"))
  end)

  it("compiles a cached source with no driver call, and loads a disk-cached one once", function()
    local src = [==[
      local src = [[extern "C" __global__ void k(float *x, float a, int n, double d) {}]]
      local m1 = l.compile(src)
      m1.k[{1, 1}](l.device_array(1, "float32"), 1, 2, 3)
      mark("again")
      local m2 = l.compile(src)
      m2.k[{1, 1}](l.device_array(1, "float32"), 1, 2, 3)
      mark("end")
    ]==]
    local dir = os.tmpname()
    os.remove(dir)
    local env = "LUACUDA_CACHE_DIR=" .. dir
    local trace = scenario(MARK .. src, env)
    -- the same CUmodule again: no load (the new module object looks its
    -- kernel up once, with cuModuleGetFunction and cuFuncGetParamInfo)
    local again = between(trace, "again")
    assert.equal(1, count(trace, "cuModuleLoadDataEx"))
    assert.is_nil(again.cuModuleLoadDataEx)
    assert.is_nil(again.cuModuleLoadData)
    assert.equal(1, again.cuLaunchKernel)
    -- a new process on the same cache: one module load, and nothing more
    -- to compile (NVRTC is not traced: the fake sees the driver only)
    trace = scenario(MARK .. src, env)
    assert.equal(1, count(trace, "cuModuleLoadDataEx"))
    assert.is_nil(between(trace, "again").cuModuleLoadDataEx)
    os.execute("rm -rf " .. dir)
  end)

  it("takes a disk-cached module without loading NVRTC (its facts are remembered)", function()
    local src = [==[
      local m = l.compile([[extern "C" __global__ void k(float *x) {}]])
      m.k[{1, 1}](l.device_array(1, "float32"))
      local maps = io.open("/proc/self/maps"):read("a")
      print(maps:find("libnvrtc", 1, true) and "nvrtc loaded" or "nvrtc not loaded")
    ]==]
    local dir = os.tmpname()
    os.remove(dir)
    local env = "LUACUDA_CACHE_DIR=" .. dir
    local _, out = scenario(src, env)             -- compiles: NVRTC is loaded
    assert.truthy(out:find("nvrtc loaded", 1, true), out)
    _, out = scenario(src, env)                   -- a new process, a disk-cache hit
    assert.truthy(out:find("nvrtc not loaded", 1, true), out)
    -- what picks the library is part of the facts' key: another choice loads it
    local lib = io.popen("ls /usr/local/cuda/lib64/libnvrtc.so.* 2>/dev/null | head -1"):read("l")
    if lib then
      _, out = scenario(src, env .. " LUACUDA_NVRTC=" .. lib)
      assert.truthy(out:find("nvrtc loaded", 1, true), out)
      _, out = scenario(src, env .. " LUACUDA_NVRTC=" .. lib)
      assert.truthy(out:find("nvrtc not loaded", 1, true), out)
    end
    os.execute("rm -rf " .. dir)
  end)

  -- NVRTC tells no dependencies: the headers an entry records are those its
  -- #include lines can name along the include path (issue 12: an edited
  -- header kept the old module until the cache was cleared).
  it("compiles anew when a header the source includes, or one it includes, changes", function()
    local dir = S.tmpdir("inc")
    local function write(path, text)
      local f = assert(io.open(path, "w"))
      f:write(text)
      f:close()
    end
    write(dir .. "/inc/v.h", '#include "w.h"\n#define V 1\n')
    write(dir .. "/inc/w.h", "#define W 10\n")
    local src = MARK .. ([==[
      mark("compile")
      local m = l.compile('#include <v.h>\n__device__ int v = V + W;\n', {options = {"-I%s/inc"}})
      mark("end")
      print("value " .. m:get_global("v")[{}])
    ]==]):format(dir)
    local env = "LUACUDA_CACHE_DIR=" .. dir .. "/cache"
    local function value()
      local trace, out = scenario(src, env)
      -- a compiled module is loaded once, from the cache or not; NVRTC is
      -- not traced, so a hit shows as the facts and entry read, nothing more
      assert.equal(1, between(trace, "compile").cuModuleLoadDataEx)
      return tonumber(out:match("value (%d+)"))
    end
    local function entry()
      local p = io.popen("ls -i " .. dir .. "/cache | grep cuda-")
      local s = p:read("a")
      p:close()
      return s
    end
    assert.equal(11, value())
    local first = entry()
    assert.equal(11, value())
    assert.equal(first, entry())                 -- a hit: the same entry, untouched
    write(dir .. "/inc/v.h", '#include "w.h"\n#define V 2\n')
    assert.equal(12, value())
    assert.not_equal(first, entry())             -- compiled anew, stored again
    write(dir .. "/inc/w.h", "#define W 20\n")
    assert.equal(22, value())
    os.execute("rm -rf " .. dir)
  end)

  -- releases deferred behind queued work run once, each when its work is
  -- done: draining stopped at the first not yet done and went on to run the
  -- rest (twice: the heap broke) when a driver really runs work later
  it("runs each deferred release once, after its work, while streams are busy", function()
    scenario([==[
      local m = l.compile([[extern "C" __global__ void k(int *x) {}]])
      local x = l.device_array(1, "int32")
      local s = l.stream()
      local keep = {}
      for i = 1, 60 do
        m.k[{1, 1, s}](x)                        -- queued work, 200 us each
        local h = l.array({i, i, i}, "int32")    -- host memory: released behind the work
        keep[i % 7] = h
        collectgarbage()
      end
      l.synchronize()
      for i = 54, 60 do eq({i, i, i}, keep[i % 7]:totable()) end
    ]==], "FAKE_CUDA_DELAY_US=200")
  end)

  -- issue 14, item 3: NVRTC searches no directory of its own; the toolkit
  -- the loaded NVRTC belongs to (or $CUDA_HOME, $CUDA_PATH) gives include
  -- and include/cccl. #heavy: NVRTC compiles the toolkit's large headers
  -- (in a child, which the sanitizers' runs would only wait for)
  it("compiles a source that includes cuda_fp16.h and cooperative_groups.h #heavy", function()
    if not require("luacuda").nvrtc_version() then pending("no NVRTC") return end
    if not exists(TOOLKIT_INC .. "/cuda_fp16.h") then pending("no toolkit headers in " .. TOOLKIT_INC) return end
    local src = [==[
      local m = l.compile([[
#include <cuda_fp16.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void half_sum(__half *x, float *out) {
  cg::thread_block b = cg::this_thread_block();
  b.sync();
  out[b.thread_rank()] = __half2float(__hadd(x[0], x[1]));
}
]])
      m.half_sum[{1, 1}](l.device_array(2, "float16"), l.device_array(1, "float32"))
      local maps = io.open("/proc/self/maps"):read("a")
      print(maps:find("libnvrtc", 1, true) and "nvrtc loaded" or "nvrtc not loaded")
    ]==]
    -- the toolkit's headers are recorded with the entry (libcu++ asks
    -- __has_include through a macro): a new process takes it from the disk
    local dir = S.tmpdir()
    local _, out = scenario(src, "LUACUDA_CACHE_DIR=" .. dir)
    assert.truthy(out:find("nvrtc loaded", 1, true), out)
    _, out = scenario(src, "LUACUDA_CACHE_DIR=" .. dir)
    assert.truthy(out:find("nvrtc not loaded", 1, true), out)
    os.execute("rm -rf " .. dir)
  end)

  -- the toolkit is found from where NVRTC was loaded (a symlink in a made-up
  -- toolkit here), else from $CUDA_HOME; its headers are in the cache key's
  -- record, so an edited toolkit header compiles anew
  it("finds the toolkit's headers beside NVRTC, else in CUDA_HOME, and recompiles when one changes", function()
    local real = io.popen("ls /usr/local/cuda/lib64/libnvrtc.so.* 2>/dev/null | head -1"):read("l")
    if not real then pending("no /usr/local/cuda/lib64/libnvrtc.so.*") return end
    local dir = S.tmpdir("tk/lib64")
    local function write(path, text)
      local f = assert(io.open(path, "w"))
      f:write(text)
      f:close()
    end
    assert(os.execute(("mkdir -p %s/tk/include/cccl %s/other/lib %s/home/include/cccl"):format(dir, dir, dir)))
    assert(os.execute(("ln -s %s %s/tk/lib64/libnvrtc.so && ln -s %s %s/other/lib/libnvrtc.so"):format(
      real, dir, real, dir)))
    write(dir .. "/tk/include/cuda_fp16.h", '#include <tk_cccl.h>\n#define TK 1\n')
    write(dir .. "/tk/include/cccl/tk_cccl.h", '#define CCCL 10\n')
    write(dir .. "/home/include/cuda_fp16.h", '#include <tk_cccl.h>\n#define TK 3\n')
    write(dir .. "/home/include/cccl/tk_cccl.h", '#define CCCL 30\n')
    local src = MARK .. [==[
      mark("compile")
      local m = l.compile('#include <cuda_fp16.h>\n__device__ int v = TK + CCCL;\n')
      mark("end")
      print("value " .. m:get_global("v")[{}])
    ]==]
    local function value(lib)
      local env = ("LUACUDA_CACHE_DIR=%s/cache LUACUDA_NVRTC=%s CUDA_HOME=%s/home"):format(dir, lib, dir)
      local trace, out = scenario(src, env)
      assert.equal(1, between(trace, "compile").cuModuleLoadDataEx)
      return tonumber(out:match("value (%d+)"))
    end
    local function entries()
      local p = io.popen("ls -i " .. dir .. "/cache | grep cuda-")
      local s = p:read("a")
      p:close()
      return s
    end
    local beside = dir .. "/tk/lib64/libnvrtc.so"
    assert.equal(11, value(beside))              -- the toolkit above lib64/
    local first = entries()
    assert.equal(11, value(beside))
    assert.equal(first, entries())               -- a hit: the same entry
    write(dir .. "/tk/include/cccl/tk_cccl.h", '#define CCCL 20\n')
    assert.equal(21, value(beside))              -- an edited toolkit header: compiled anew
    assert.equal(33, value(dir .. "/other/lib/libnvrtc.so"))   -- no include/ above: CUDA_HOME
    os.execute("rm -rf " .. dir)
  end)

  -- issue 32, defect 7: an NVRTC outside a toolkit tree (a distribution's
  -- or pip's) without CUDA_HOME: the headers are looked for where the
  -- library looks for NVRTC itself, and a missing header says where
  it("without CUDA_HOME, finds the toolkit's headers in /usr/local/cuda, and says where it looked for a missing header", function()
    local real = io.popen("ls /usr/local/cuda/lib64/libnvrtc.so.* 2>/dev/null | head -1"):read("l")
    if not real then pending("no /usr/local/cuda/lib64/libnvrtc.so.*") return end
    if not exists("/usr/local/cuda/include/cuda_fp16.h") then
      pending("no /usr/local/cuda/include/cuda_fp16.h") return
    end
    local dir = S.tmpdir("pip/lib")
    local lib = dir .. "/pip/lib/" .. real:match("[^/]+$")
    assert(os.execute(("ln -s %s %s"):format(real, lib)))
    local _, out = scenario([==[
      local m = l.compile('#include <cuda_fp16.h>\n__device__ int v = sizeof(__half);\n')
      eq(2, m:get_global("v")[{}], "sizeof(__half)")
      local e = fails("open source file", l.compile, '#include <no_such_header.h>\n')
      print(e)
    ]==], "env -u CUDA_HOME -u CUDA_PATH LUACUDA_NVRTC=" .. lib)
    os.execute("rm -rf " .. dir)
    -- where it looked: beside NVRTC, the variables (unset), /usr/local/cuda
    assert.truthy(out:find("/usr/local/cuda/include", 1, true), out)
    assert.truthy(out:find("$CUDA_HOME (unset)", 1, true), out)
  end)

  -- issue 14, stream-ordered design: a release deferred behind queued work
  -- waits for the streams that have work, each with an event, and records
  -- nothing on the legacy stream, which would make every stream wait
  it("defers a release behind the busy streams only, never on the legacy stream", function()
    local trace = scenario(MARK .. [==[
      local s1, s2 = l.stream(), l.stream()
      local d = l.device_array(1 << 12, "float32", {stream = s1})
      d:fill(1, s1)                              -- s1 is busy for 300 us
      mark("defer")
      local h = l.array({1, 2, 3})               -- host memory: its release is deferred
      h = nil
      collectgarbage()
      mark("end")
      l.synchronize()
    ]==], "FAKE_CUDA_DELAY_US=300 FAKE_CUDA_TRACE_STREAMS=1")
    local calls = between(trace, "defer")
    assert.equal(1, calls["cuEventRecord @blocking"], "no record on the busy stream")
    assert.is_nil(calls["cuEventRecord @legacy"])
  end)

  -- issue 14, item 1: the legacy stream does not wait for a non-blocking
  -- stream; calls without a stream, and frees, must wait all the same
  it("orders calls without a stream, and frees, after a non-blocking stream's work", function()
    scenario([==[
      local s = l.stream({non_blocking = true})
      assert(tostring(s):find(", non-blocking)", 1, true), tostring(s))
      local n = 1 << 14
      local h = l.pinned_array(n, "float32")
      h[{}] = 1.5
      local d = l.device_array(n, "float32")
      d:copy_to_device(h, s)                   -- queued on s, 300 us
      local t = d:copy_to_host()               -- no stream: waits for s too
      eq({1.5, 1.5}, {t[1], t[n]})
      local src = l.to_device(h)
      local out = l.device_array(n, "float32")
      out:fill(0, s)
      out:copy_to_device(src, s)               -- queued on s, reads src
      src = nil
      collectgarbage()                         -- src's free waits for that copy
      s:synchronize()
      eq({1.5, 1.5}, {out[1], out[n]})
    ]==], "FAKE_CUDA_DELAY_US=300")
  end)

  -- issue 14, item 5: memory goes back on its own device, after its work
  it("frees an array on its own device when another is current", function()
    scenario([==[
      local s1 = l.stream()
      local n = 1 << 14
      local a = l.to_device(l.full(n, 2.5, "float32"))
      local b = l.device_array(n, "float32")
      b:copy_to_device(a, s1)                  -- queued on device 1, 300 us
      l.select_device(2)
      a = nil
      collectgarbage()                         -- device 1's memory, freed after s1's copy
      l.select_device(1)
      s1:synchronize()
      eq({2.5, 2.5}, {b[1], b[n]})
    ]==], "FAKE_CUDA_DELAY_US=300")
  end)

  -- issue 14, item 6: the streams that used an array, and only they, hold
  -- its free back; nothing goes through the legacy stream, which would
  -- make every stream wait for every other
  it("allocates and frees on the arrays' own streams, never serialising two streams", function()
    local trace = scenario(MARK .. [==[
      local m = l.compile([[extern "C" __global__ void k(int n, const float *x, float *y) {}]])
      local n, chunks = 1 << 12, 8
      local x = l.pinned_array(n * chunks, "float32")
      x[{}] = 3
      local out = l.pinned_array(n * chunks, "float32")
      local streams = {l.stream(), l.stream()}
      mark("loop")
      for c = 1, chunks do
        local s = streams[c % 2 + 1]
        local part = {(c - 1) * n + 1, c * n}
        local dx = l.to_device(x[{part}], s)
        local dy = l.device_array(n, "float32", {stream = s})
        dy:fill(1, s)
        m.k[{n // 256, 256, s}](n, dx, dy)
        dx:copy_to_host(out[{part}], s)
        dx, dy = nil, nil
        collectgarbage()                       -- freed behind their stream's work
      end
      mark("end")
      l.synchronize()
      eq({3, 3}, {out[1], out[n * chunks]})
    ]==], "FAKE_CUDA_DELAY_US=100 FAKE_CUDA_TRACE_STREAMS=1")
    local legacy, frees, inside = {}, 0, false
    for _, line in ipairs(trace) do
      if line:find("^mark ") then inside = line == "mark loop"
      elseif inside then
        if line:find("@legacy$") then legacy[#legacy + 1] = line end
        if line:find("^cuMemFreeAsync @") then frees = frees + 1 end
      end
    end
    assert.same({}, legacy)
    assert.is_true(frees >= 8, "frees in the loop: " .. frees)
  end)

  it("makes the context unusable after a sticky error, and finalizers call nothing", function()
    local out, trace = run([==[
      local m = l.compile([[extern "C" __global__ void fake_fault(int *x) {}]])
      local d = l.to_device({1, 2, 3}, nil, {dtype = "int32"})
      local s = l.stream()
      local e = l.event()
      m.fake_fault[{1, 1}](d)
      local err = fails("CUDA_ERROR_ILLEGAL_ADDRESS", l.synchronize)
      assert(err:find("luacuda.synchronize", 1, true), err)
      err = fails("the CUDA context is unusable after an earlier error", function() return d:totable() end)
      assert(err:find("CUDA_ERROR_ILLEGAL_ADDRESS", 1, true), err)
      fails("unusable", l.device_array, 4, "int32")
      fails("unusable", function() m.fake_fault[{1, 1}](d) end)
      print("ok")
    ]==])
    assert.matches("ok\n$", out)
    local i = 1
    while trace[i] and trace[i] ~= "  -> 700" do i = i + 1 end
    assert.is_true(i < #trace or trace[i] == "  -> 700", "no call failed with 700")
    assert.equal(#trace, i, "calls after the sticky error: " .. table.concat(trace, " ", i + 1))
  end)

  -- the driver's documentation: after these the process must start again,
  -- so they are sticky too (issue 14, item 14)
  it("takes an NVLink, MPS or external-device failure as sticky", function()
    for code, name in pairs({[220] = "CUDA_ERROR_NVLINK_UNCORRECTABLE",
                             [810] = "CUDA_ERROR_MPS_CLIENT_TERMINATED",
                             [911] = "CUDA_ERROR_EXTERNAL_DEVICE"}) do
      scenario(([==[
        fails("%s", l.synchronize)
        local err = fails("the CUDA context is unusable after an earlier error",
                          l.device_array, 4, "int32")
        assert(err:find("%s", 1, true), err)
      ]==]):format(name, name), "FAKE_CUDA_FAIL=cuCtxSynchronize:1:" .. code)
    end
  end)

  it("LUACUDA_SYNC=1 reports a kernel's failure at its own launch", function()
    scenario([==[
      local m = l.compile([[extern "C" __global__ void fake_fault_now(int *x) {}]])
      local err = fails("luacuda.launch: kernel 'fake_fault_now' failed: ", function()
        m.fake_fault_now[{1, 1}](l.device_array(1, "int32")) end)
      assert(err:find("CUDA_ERROR_ILLEGAL_ADDRESS", 1, true), err)
    ]==], "LUACUDA_SYNC=1")
  end)

  it("loads the fatbinary by default, and PTX for a device newer than NVRTC", function()
    if not require("luacuda").nvrtc_version() then pending("no NVRTC") return end
    local code = [==[
      local m = l.compile([[extern "C" __global__ void k(int *x) {}]])
      local d = l.to_device({{1, 2}, {3, 4}}, nil, {dtype = "int32"})
      m.k[{1, 1}](d)
      local t = l.device_array({2, 2}, "int32")
      t:copy_to_device(d:transpose())
      eq({1, 3, 2, 4}, t:totable())
    ]==]
    local trace = scenario(code, "LUACUDA_PTX=0")
    assert.is_true(count(trace, "lc_copy_strided") >= 1)
    -- compute capability 99.0: no NVRTC knows it; the fake takes PTX for an older one
    trace = scenario(code, "LUACUDA_PTX=0 FAKE_CUDA_CC=99.0")
    assert.equal(2, count(trace, "cuModuleLoadDataEx"))
    assert.equal(0, count(trace, "  -> 209"))
  end)

  -- issue 32: the image a GPU runs is the image the fake runs. luacuda
  -- loads a fatbinary (the device's cubin and its PTX), as the disk cache
  -- keeps it; the fake checks the cubin and runs the PTX of that image
  it("runs the fatbinary luacuda loads on a GPU, without LUACUDA_PTX", function()
    if not require("luacuda").nvrtc_version() then pending("no NVRTC") return end
    local dir = S.tmpdir()
    local code = [==[
      local m = l.compile([[extern "C" __global__ void k(int *x) {
        x[threadIdx.x] = threadIdx.x + __CUDA_ARCH__; }]])
      local x = l.device_array(3, "int32")
      m.k[{1, 3}](x)
      eq({900, 901, 902}, x:totable())
    ]==]
    local env = "LUACUDA_PTX= LUACUDA_CACHE_DIR=" .. dir
    local trace = scenario(code, env)
    assert.equal(1, count(trace, "cuModuleLoadDataEx"))
    local p = io.popen("ls " .. dir .. " | grep '^cuda-.*[.]fatbin$'")
    local name = p:read("l")
    p:close()
    assert(name, "no fatbinary in the disk cache")
    local f = assert(io.open(dir .. "/" .. name, "rb"))
    assert.equal("\x50\xed\x55\xba", f:read(4))      -- 0xBA55ED50, little-endian
    f:close()
    scenario(code, env)                               -- from the cache
    os.execute("rm -rf " .. dir)
  end)

  -- issue 32, defect 5: NVRTC takes the last -arch, so a user's replaced
  -- the device's: an sm_80 cubin does not run on a 9.0 device (the fake
  -- refuses a cubin whose ELF names another SM, as the driver does)
  it("honours a user -arch no newer than the device as PTX the driver JITs, and refuses a newer one", function()
    if not require("luacuda").nvrtc_version() then pending("no NVRTC") return end
    local code = [==[
      local src = [[extern "C" __global__ void k(int *x) { x[0] = __CUDA_ARCH__; }]]
      local x = l.device_array(1, "int32")
      -- the fake runs PTX only: 800 read back is compute_80's PTX, run
      for _, options in ipairs({{"-arch=sm_80"}, {"--gpu-architecture=compute_80"},
                                {"-arch", "sm_80"}, {"--gpu-architecture", "compute_80"}}) do
        x:fill(0)
        l.compile(src, {options = options}).k[{1, 1}](x)
        eq({800}, x:totable(), table.concat(options, " "))
      end
      l.compile(src, {options = {"-arch=sm_90"}}).k[{1, 1}](x)   -- the device's own
      l.synchronize()
      fails("luacuda.compile: option -arch=sm_100: sm_100 is newer than the device "
                      .. "(compute capability 9.0)", l.compile, src, {options = {"-arch=sm_100"}})
      fails("option --gpu-architecture compute_120: compute_120 is newer than the device",
            l.compile, src, {options = {"--gpu-architecture", "compute_120"}})
      fails("option -arch=sm_86a: sm_86a is specific to compute capability 8.6",
            l.compile, src, {options = {"-arch=sm_86a"}})
      fails('option -arch=native: an architecture is "compute_XX" or "sm_XX"',
            l.compile, src, {options = {"-arch=native"}})
    ]==]
    scenario(code, "LUACUDA_PTX=0")   -- fatbinaries, as on a GPU
    scenario(code, "LUACUDA_PTX=1")   -- PTX alone
  end)

  -- issue 14, item 4: CUDA 13's NVRTC makes PTX 9.0 and cubins a 12.x
  -- driver refuses; the fake refuses them as that driver would
  it("names the driver's and NVRTC's versions when NVRTC is newer than the driver", function()
    local maj, min = require("luacuda").nvrtc_version()
    if not maj then pending("no NVRTC") return end
    local older = ("%d040"):format(maj - 1)          -- e.g. 12040 below NVRTC 13
    local code = ([==[
      local e = fails("luacuda.compile: cuModuleLoadDataEx: CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
                      l.compile, [[extern "C" __global__ void k(int *x) {}]])
      assert(e:find("(driver %d.4, NVRTC %d.%d)", 1, true), e)
      assert(e:find("NVRTC is newer than the driver", 1, true), e)
    ]==]):format(maj - 1, maj, min)
    scenario(code, "LUACUDA_PTX=1 FAKE_CUDA_DRIVER_VERSION=" .. older) -- PTX
    scenario(code, "LUACUDA_PTX=0 FAKE_CUDA_DRIVER_VERSION=" .. older) -- a fatbinary
    -- a driver as new as NVRTC takes both
    local ok = [==[ l.compile([[extern "C" __global__ void k(int *x) {}]]) ]==]
    local trace = scenario(ok, ("FAKE_CUDA_DRIVER_VERSION=%d%03d"):format(maj, min * 10))
    assert.equal(1, count(trace, "cuDriverGetVersion"))
    scenario(ok, ("LUACUDA_PTX=0 FAKE_CUDA_DRIVER_VERSION=%d%03d"):format(maj, min * 10))
  end)

  -- with a 12.x driver an NVRTC 12 is taken before a newer one found first
  -- (build/fake/nvrtc/libnvrtc.so.12 says it is 12.9 and passes the rest on)
  it("prefers the newest NVRTC no newer than the driver", function()
    local maj = require("luacuda").nvrtc_version()
    if not maj then pending("no NVRTC") return end
    if maj < 13 then pending("needs an NVRTC newer than 12 (have " .. maj .. ")") return end
    local shim = BUILD .. "/fake/nvrtc"
    local env = "LUACUDA_CACHE=0 LD_LIBRARY_PATH=" .. shim .. " FAKE_CUDA_DRIVER_VERSION="
    local code = [==[ print("NVRTC " .. table.concat({l.nvrtc_version()}, ".")) ]==]
    local _, out = scenario(code, env .. "12040")
    assert.truthy(out:find("NVRTC 12.9", 1, true), out)
    -- its PTX (9.0 in truth, from the NVRTC behind it) is refused: the
    -- message says what to update
    scenario([==[
      local e = fails("(driver 12.4, NVRTC 12.9): NVRTC is newer than the driver, which takes "
                      .. "its cubins but not its PTX; update the driver",
                      l.compile, [[extern "C" __global__ void k(int *x) {}]])
    ]==], env .. "12040")
    _, out = scenario(code, env .. "13000")         -- the newest, as the driver takes it
    assert.truthy(out:find("NVRTC " .. maj .. ".", 1, true), out)
    -- the same choice without the driver's order: LUACUDA_NVRTC alone decides
    _, out = scenario(code, env .. "12040 LUACUDA_NVRTC=libnvrtc.so." .. maj)
    assert.truthy(out:find("NVRTC " .. maj .. ".", 1, true), out)
  end)

  -- which NVRTC is taken depends on the driver: the facts remembered for
  -- one driver are not taken for another, nor is a module compiled for it
  it("keys the remembered NVRTC facts and the compiled modules by the driver's version", function()
    local maj, min = require("luacuda").nvrtc_version()
    if not maj then pending("no NVRTC") return end
    local src = [==[
      local ok, e = pcall(l.compile, [[extern "C" __global__ void k(float *x) {}]])
      local maps = io.open("/proc/self/maps"):read("a")
      print(maps:find("libnvrtc", 1, true) and "nvrtc loaded" or "nvrtc not loaded")
    ]==]
    local dir = S.tmpdir()
    local function run_with(version)
      local _, out = scenario(src, ("LUACUDA_CACHE_DIR=%s FAKE_CUDA_DRIVER_VERSION=%s"):format(dir, version))
      return out:match("nvrtc %a* ?loaded")
    end
    local function entries()
      local p = io.popen("ls " .. dir .. " | grep -c '^cuda-'")
      local n = tonumber(p:read("a"))
      p:close()
      return n
    end
    local same, newer = ("%d%03d"):format(maj, min * 10), ("%d%03d"):format(maj, min * 10 + 10)
    assert.equal("nvrtc loaded", run_with(same))
    assert.equal("nvrtc not loaded", run_with(same))
    assert.equal(1, entries())
    assert.equal("nvrtc loaded", run_with(newer))      -- other facts, another module
    assert.equal(2, entries())
    assert.equal("nvrtc not loaded", run_with(newer))
    assert.equal("nvrtc loaded", run_with(("%d040"):format(maj - 1)))
    os.execute("rm -rf " .. dir)
  end)

  it("is no kinder than a GPU: poisoned fresh memory and registers, overlapping copies refused, threads shuffled (spec/fake/fake_strict_test.c)", function()
    local bin = BUILD .. "/fake/fake_strict_test"
    assert(exists(bin), "no " .. bin .. " (make check builds it)")
    local ok, out = S.sh(bin)
    assert(ok and out:find("0 of 13 tests failed", 1, true), out)
  end)

  it("names the architecture when the device is older than anything NVRTC knows", function()
    if not require("luacuda").nvrtc_version() then pending("no NVRTC") return end
    scenario([==[
      local e = fails("luacuda.compile: NVRTC ", l.compile, [[extern "C" __global__ void k(int *x) {}]])
      assert(e:find("cannot compile for sm_30 (the oldest it knows is sm_", 1, true), e)
    ]==], "LUACUDA_PTX=0 FAKE_CUDA_CC=3.0")
  end)
end)
