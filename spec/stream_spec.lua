-- Streams and events: work queued on a stream runs in order and the call
-- returns at once; synchronize, query and events see it happen; operations
-- without a stream wait for the queued work, so their results are right.
local luacuda = require "luacuda"
local S = require "spec.support"

local m = luacuda.compile([[
extern "C" __global__ void spin(long long n, float *out, float v) {
  volatile long long acc = 0;          // a kernel that takes a while
  for (long long i = 0; i < n; i++) acc = acc + 1;
  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = v + (acc != n);
}
extern "C" __global__ void add(float *a, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += v;
}
extern "C" __global__ void stuck(int *out) {
  if (threadIdx.x == 3) return;
  __syncthreads();
  out[threadIdx.x] = 1;
}
]])

-- iterations of spin: a fraction of a second (the fake driver interprets
-- the kernel, some 30 times slower than the simulator runs it)
local SLOW = S.fake and 1000000 or 40000000

local function slow(out, v, stream)
  m.spin[{1, 1, stream}](SLOW, out, v)
end

describe("streams", function()
  it("are created, described and closed", function()
    local s = luacuda.stream()
    assert.matches("^luacuda%.stream%(", tostring(s))
    assert.is_true(s:query())
    assert.equal(s, s:synchronize())
    s:close()
    assert.equal("luacuda.stream(closed)", tostring(s))
    S.misuse("luacuda.synchronize: attempt to use a closed stream", s.synchronize, s)
    S.misuse("luacuda.close: attempt to use a closed stream", s.close, s)
    do local t <close> = luacuda.stream() end
  end)

  it("may be non-blocking: not ordered with the default stream, as CUDA's", function()
    local s = luacuda.stream({non_blocking = true})
    assert.matches("^luacuda%.stream%(.*, non%-blocking%)$", tostring(s))
    assert.not_matches("non%-blocking", tostring(luacuda.stream({non_blocking = false})))
    local d = luacuda.to_device({1, 2, 3})
    local h = luacuda.array({0, 0, 0})
    d:copy_to_host(h, s)
    assert.same({1, 2, 3}, d:copy_to_host():totable())     -- no stream: waits for s
    s:synchronize()
    assert.same({1, 2, 3}, h:totable())
    S.misuse("luacuda.stream: option non_blocking must be a boolean, got number",
             luacuda.stream, {non_blocking = 1})
    S.misuse("luacuda.stream: unknown option blocking", luacuda.stream, {blocking = true})
  end)

  it("have one default stream, which cannot be closed", function()
    local d = luacuda.default_stream()
    assert.equal(d, luacuda.default_stream())
    assert.equal("luacuda.stream(default)", tostring(d))
    d:close()
    d:synchronize()              -- still open (frees may have been queued on it)
    assert.is_true(d:query())
  end)

  it("return at once from a launch and run it later", function()
    local s = luacuda.stream()
    local out = luacuda.device_array(1, "float32")
    slow(out, 7, s)
    assert.is_false(s:query())
    s:synchronize()
    assert.is_true(s:query())
    assert.equal(7, out[1])
  end)

  it("run their work in order: a kernel, then a copy, with no synchronize between", function()
    local s = luacuda.stream()
    local d = luacuda.to_device({1, 2, 3, 4}, {dtype = "float32"})
    -- page-locked: a driver finishes a copy to pageable memory before it returns
    local h = luacuda.pinned_array(4, "float32")
    h:fill(0)
    slow(d, 10, s)
    m.add[{1, 4, s}](d, 1, 4)
    d:copy_to_host(h, s)
    assert.is_false(s:query())               -- the kernel is still running
    assert.same({11, 3, 4, 5}, h:totable())  -- and totable waits for the copy into h
  end)

  it("queue every kind of copy and fill, and synchronize makes them visible", function()
    local s = luacuda.stream()
    local d = luacuda.to_device({1, 2, 3}, s, {dtype = "float64"})
    local h = d:copy_to_host(nil, s)
    local d2 = d:copy(s)
    d2:fill(5, s)
    d2:setitem(2, 9, s)
    local e = luacuda.device_array(3)
    e:copy_to_device({7, 8, 9}, s)
    d[{{2, 3}}]:copy_to_device(e[{{1, 2}}], s)
    local h2 = luacuda.zeros(3)
    d:copy_to_host(h2, s)
    s:synchronize()
    assert.same({1, 2, 3}, h:totable())
    assert.same({5, 9, 5}, d2:totable())
    assert.same({1, 7, 8}, h2:totable())
    assert.equal(9, d2:getitem(2, s))
  end)

  it("read an element with a stream after that stream's work", function()
    local s = luacuda.stream()
    local d = luacuda.to_device({0}, {dtype = "float32"})
    slow(d, 42, s)
    assert.equal(42, d:getitem(1, s))
  end)

  it("auto_synchronize waits when its scope ends", function()
    local s = luacuda.stream()
    local out = luacuda.device_array(1, "float32")
    do
      local _ <close> = s:auto_synchronize()
      slow(out, 3, s)
    end
    assert.is_true(s:query())
  end)

  it("auto_synchronize waits also when the scope ends by an error", function()
    local s = luacuda.stream()
    local out = luacuda.device_array(1, "float32")
    local ok, err = pcall(function()
      local _ <close> = s:auto_synchronize()
      slow(out, 4, s)
      error("boom")
    end)
    assert.is_false(ok)
    assert.matches("boom", err)
    assert.is_true(s:query())
    assert.equal(4, out:getitem(1, s))
  end)

  it("auto_synchronize(fn) calls fn with the stream and returns its results", function()
    local s = luacuda.stream()
    local out = luacuda.device_array(1, "float32")
    local a, b = s:auto_synchronize(function(st)
      assert.equal(s, st)
      slow(out, 5, st)
      return "x", 2
    end)
    assert.same({"x", 2}, {a, b})
    assert.is_true(s:query())
    local ok, err = pcall(s.auto_synchronize, s, function(st)
      slow(out, 6, st)
      error("inside")
    end)
    assert.is_false(ok)
    assert.matches("inside", err)
    assert.is_true(s:query())
    S.misuse("luacuda.auto_synchronize: expected a function or nothing, got number",
             s.auto_synchronize, s, 5)
  end)

  it("report a kernel's failure at the stream's next synchronize, once", function()
    if S.backend ~= "sim" then return pending("simulator only: a barrier some threads never reach is the simulator's diagnosis; a GPU may hang or carry on") end
    local s = luacuda.stream()
    local out = luacuda.device_array(8, "int32")
    m.stuck[{1, 8, s}](out)
    S.misuse({"luacuda.synchronize: kernel 'stuck' failed", "barrier never completes"},
             s.synchronize, s)
    s:synchronize()
    m.stuck[{1, 8, s}](out)
    local ok = pcall(luacuda.synchronize)   -- the device-wide one reports it too
    assert.is_false(ok)
    assert.is_true(s:query())
  end)

  it("make a launch without a stream visible to the next synchronous operation", function()
    local d = luacuda.to_device({0, 0}, {dtype = "float32"})
    slow(d, 8)                               -- the default stream
    assert.equal(8, d[1])
    slow(d, 9)
    assert.same({9, 0}, d:copy_to_host():totable())
    slow(d, 10)
    assert.same({10, 0}, d:totable())
    slow(d, 11, luacuda.default_stream())
    assert.matches("11", tostring(d))
  end)

  it("wait for work on every stream before a synchronous operation", function()
    local s = luacuda.stream()
    local d = luacuda.to_device({0}, {dtype = "float32"})
    slow(d, 12, s)
    assert.equal(12, d[1])
  end)

  it("keep arrays and modules a queued launch uses until it has run", function()
    local s = luacuda.stream()
    local keep = luacuda.device_array(1, "float32")
    do
      local mod = luacuda.compile([[
        extern "C" __global__ void put(float *a, float *b, float v) { a[0] = v; b[0] = v; }]])
      slow(luacuda.device_array(1, "float32"), 1, s)
      mod.put[{1, 1, s}](keep, luacuda.device_array(1, "float32"), 3)
    end
    collectgarbage()
    collectgarbage()
    s:synchronize()
    assert.equal(3, keep[1])
  end)

  it("reject what is not a stream", function()
    local d = luacuda.to_device({1, 2})
    S.misuse("luacuda.copy_to_host: expected a stream, got number", d.copy_to_host, d, nil, 1)
    S.misuse("luacuda.fill: expected a stream, got table", d.fill, d, 1, {})
    S.misuse("luacuda.launch: expected a stream, got string",
             function() m.add[{1, 1, "s"}](d, 1, 2) end)
    local s = luacuda.stream()
    s:close()
    S.misuse("luacuda.getitem: attempt to use a closed stream", d.getitem, d, 1, s)
  end)

  it("honour LUACUDA_SYNC=1: a launch reports its own failure", function()
    if S.backend ~= "sim" then return pending("simulator only: the failing kernel is a barrier some threads never reach, which only the simulator diagnoses") end
    local p = io.popen([[LUACUDA_SYNC=1 lua5.4 -e '
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[extern "C" __global__ void stuck(int *o) {
        if (threadIdx.x == 1) return; __syncthreads(); o[0] = 1; }]=])
      print(pcall(function() m.stuck[{1, 4}](luacuda.device_array(4, "int32")) end))' 2>&1]])
    local out = p:read("a")
    p:close()
    assert.truthy(out:find("false", 1, true), out)
    assert.truthy(out:find("luacuda.launch: kernel 'stuck' failed", 1, true), out)
  end)

  it("finish queued work before the state closes", function()
    local hi = [=[extern "C" __global__ void hi() { printf("done\n"); }]=]
    luacuda.compile(hi)          -- here too, so that NVRTC reads it on the fake driver
    local p = io.popen([[lua5.4 -e '
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[]] .. hi .. [[]=])
      m.hi[{1, 1, luacuda.stream()}]()' 2>&1]])
    local out = p:read("a")
    p:close()
    assert.equal("done\n", out)
  end)
end)

describe("small work", function()
  -- the simulator runs small array math, copies and fills at the call when
  -- nothing is queued (stream.c); queued work before them still comes first
  it("after a kernel still queued, on its stream or the default one, sees its result", function()
    local s = luacuda.stream()
    local d = luacuda.to_device({0, 0, 0, 0}, {dtype = "float32"})
    slow(d, 5, s)
    local on_s = luacuda.add(d, 1, s)
    local h = luacuda.pinned_array(4, "float32")
    on_s:copy_to_host(h, s)
    s:synchronize()
    assert.same({6, 1, 1, 1}, h:totable())
    slow(d, 7, s)
    local c = d * 2                          -- the default stream: after every stream
    d:fill(3, s)                             -- queued after c's work: c reads the 7
    assert.same({14, 0, 0, 0}, c:totable())
    assert.same({3, 3, 3, 3}, d:totable())
  end)

  it("on an idle stream is done when the call returns (the simulator)", function()
    if S.backend ~= "sim" then
      return pending("simulator only: a GPU runs queued work later, however small")
    end
    local s = luacuda.stream()
    local a = luacuda.to_device({1, 2, 3}, {dtype = "float32"})
    luacuda.synchronize()
    local c = luacuda.multiply(a, 2, s)
    assert.is_true(s:query())
    local e = luacuda.event()
    e:record(s)
    c:fill(1, s)
    assert.is_true(e:query() and s:query())
    assert.same({1, 1, 1}, c:totable())
  end)

  it("queued behind a kernel, stays queued: the stream is busy until it runs", function()
    local s = luacuda.stream()
    local d = luacuda.to_device({0, 0}, {dtype = "float32"})
    slow(d, 2, s)
    local c = luacuda.add(d, 1, s)
    assert.is_false(s:query())
    s:synchronize()
    assert.same({3, 1}, c:totable())
  end)
end)

describe("events", function()
  it("time a kernel, in milliseconds", function()
    local s = luacuda.stream()
    local out = luacuda.device_array(1, "float32")
    local e1, e2 = luacuda.event(), luacuda.event()
    assert.is_true(e1:query())                 -- never recorded: nothing to wait for
    assert.equal(e1, e1:record(s))
    slow(out, 1, s)
    e2:record(s)
    e1:synchronize()
    assert.is_false(e2:query())
    S.misuse("luacuda.elapsed_time: the end event has not happened yet", e1.elapsed_time, e1, e2)
    e2:synchronize()
    assert.is_true(e2:query())
    local ms = e1:elapsed_time(e2)
    assert.is_true(ms > 1 and ms < 60000, tostring(ms))
    assert.equal(ms, luacuda.event_elapsed_time(e1, e2))
    assert.is_true(e2:elapsed_time(e1) < 0)
  end)

  it("record on the default stream when given none", function()
    local out = luacuda.device_array(1, "float32")
    local e = luacuda.event()
    slow(out, 2)
    e:record()
    assert.is_false(e:query())
    e:synchronize()
    assert.equal(2, out[1])
  end)

  it("make another stream wait", function()
    local s1, s2 = luacuda.stream(), luacuda.stream()
    local d = luacuda.to_device({0}, {dtype = "float32"})
    local h = luacuda.zeros(1, "float32")
    local e = luacuda.event({timing = false})
    slow(d, 21, s1)
    e:record(s1)
    e:wait(s2)
    d:copy_to_host(h, s2)
    s2:synchronize()
    assert.equal(21, h[1])
  end)

  it("refuse times they do not have", function()
    local a, b = luacuda.event({timing = false}), luacuda.event()
    a:record()
    b:record()
    luacuda.synchronize()
    S.misuse("luacuda.elapsed_time: an event created with {timing=false} has no time",
             a.elapsed_time, a, b)
    local c = luacuda.event()
    S.misuse("luacuda.event_elapsed_time: the start event has not been recorded",
             luacuda.event_elapsed_time, c, b)
    S.misuse("luacuda.elapsed_time: expected an event, got number", b.elapsed_time, b, 1)
    S.misuse("luacuda.event: option timing must be a boolean, got number", luacuda.event,
             {timing = 1})
    S.misuse("luacuda.event: unknown option timed", luacuda.event, {timed = true})
    c:close()
    S.misuse("luacuda.record: attempt to use a closed event", c.record, c)
    assert.equal("luacuda.event(closed)", tostring(c))
    do local _ <close> = luacuda.event() end
  end)
end)

describe("host memory and queued work", function()
  it("a mapped array read from Lua waits for a kernel queued on it", function()
    local mp = luacuda.mapped_array(2, "float32")
    mp[1], mp[2] = 0, 5
    slow(mp, 31)                            -- queued; no synchronize before the reads
    assert.equal(31, mp[1])
    slow(mp, 32)
    assert.same({32, 5}, mp:totable())
    slow(mp, 33)
    mp[2] = 6                               -- a write waits too
    assert.same({33, 6}, mp:totable())
  end)

  it("a managed array read from Lua waits for a kernel queued on it", function()
    local g = luacuda.managed_array(1, "float32")
    slow(g, 34)
    assert.equal(34, g[1])
    slow(g, 35)
    assert.equal(35, g:copy_to_host()[1])
  end)

  it("maps the same array again straight after a scope whose kernel is still queued", function()
    local a = luacuda.zeros(1, "float32")
    for round = 1, 3 do
      local m <close> = luacuda.mapped(a)
      slow(m, round)
      m:close()
      local again <close> = luacuda.mapped(a)
      assert.equal(round, again[1])
    end
  end)

  it("pins an array and copies into it on a stream", function()
    local h = luacuda.zeros(3, "float64")
    local s = luacuda.stream()
    do
      local _ <close> = luacuda.pinned(h)
      luacuda.to_device({1.0, 2, 3}):copy_to_host(h, s)
      s:synchronize()
    end
    assert.same({1, 2, 3}, h:totable())
    local p = luacuda.pinned_array(3)
    luacuda.to_device({4.0, 5, 6}):copy_to_host(p, s)
    s:synchronize()
    assert.same({4, 5, 6}, p:totable())
  end)
end)
