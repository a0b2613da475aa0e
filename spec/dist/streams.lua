-- Run by spec/dist_spec.lua under mpirun: collectives queued on streams
-- (stream=), on the communicator's engine (MPI on the simulator and where
-- NCCL is off; NCCL on the fake one). Every collective on every memory
-- kind and on views; several streams; calls with and without a stream in
-- turn; host access that waits for a queued collective; arrays dropped
-- while their collective is queued; the call returning before the work
-- queued ahead of it on the stream is done. Each result is checked
-- against values computed here in Lua. Log: spec/dist/ranklog.lua.
local luacuda = require "luacuda"

package.path = arg[0]:match("^(.*)/") .. "/?.lua;" .. package.path
local ranklog = require "ranklog"

local comm, log = ranklog.start(arg[1], true)   -- the spec gives each rank a device
local R, P = comm.rank, comm.size
local say, check, same, flat = log.say, log.check, log.same, ranklog.flat
say("engine " .. comm.engine)

-- rank r's element i: small integers, exact in every dtype used here
local function val(r, i) return (3 * r + 5 * i) % 7 - 3 end

local function values(r, n)
  local t = {}
  for i = 1, n do t[i] = val(r, i) end
  return t
end

local function fold(op, i)
  local acc = val(1, i)
  for r = 2, P do
    acc = ranklog.combine(op, acc, val(r, i))
  end
  return acc
end

local function folded(op, n, from)
  local t = {}
  for i = 1, n do t[i] = fold(op, (from or 0) + i) end
  return t
end

-- an array of the kind holding rank r's values, in C order
local function make(kind, dtype, r, shape)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local h = luacuda.array(values(r, n), dtype):reshape(table.unpack(shape))
  if kind == "host" then return h end
  if kind == "device" then return luacuda.to_device(h) end
  local a = luacuda[kind .. "_array"](shape, dtype)
  h:copy_to_host(a)
  return a
end

local KINDS = { "host", "pinned", "mapped", "managed", "device" }

-- allreduce on every kind, two dtypes and two ops, each on a stream of
-- its own; the array stays of its kind
for _, kind in ipairs(KINDS) do
  for _, case in ipairs { { "float32", "sum" }, { "int64", "max" } } do
    local dt, op = case[1], case[2]
    local s = luacuda.stream()
    local x = make(kind, dt, R, { 6 })
    local r = comm:allreduce(x, op, { stream = s })
    check(r == x, "allreduce on a stream returns x")
    s:synchronize()
    same(flat(x), folded(op, 6), ("allreduce %s %s on %s memory, on a stream"):format(dt, op, kind))
    check(luacuda.attr(x, "kind") == kind, "the array stays " .. kind)
  end
end

-- into out, across kinds: x is left as it was
do
  local s = luacuda.stream()
  local x = make("device", "float64", R, { 2, 3 })
  local out = luacuda.empty({ 6 }, "float64")
  check(comm:allreduce(x, "min", { out = out, stream = s }) == out, "allreduce returns out")
  local y = make("host", "int32", R, { 4 })
  local yout = luacuda.device_array({ 4 }, "int32")
  comm:allreduce(y, { out = yout, stream = s })
  s:synchronize()
  same(flat(out), folded("min", 6), "allreduce of device memory into a host out, on a stream")
  same(flat(x), values(R, 6), "x is left as it was")
  same(flat(yout), folded("sum", 4), "allreduce of host memory into a device out, on a stream")
end

-- the other collectives, on host and device memory
for _, kind in ipairs { "host", "device" } do
  local s = luacuda.stream()
  local b = make(kind, "int16", R, { 5 })
  comm:broadcast(b, 2, { stream = s })
  local red = make(kind, "float32", R, { 4 })
  comm:reduce(red, 1, "prod", { stream = s })
  local all = kind == "host" and luacuda.empty({ P, 3 }, "uint8")
    or luacuda.device_array({ P, 3 }, "uint8")
  local mine3 = {}
  for i = 1, 3 do mine3[i] = val(R, i) + 3 end      -- 0 to 6, for uint8
  comm:allgather(luacuda.to_device(luacuda.array(mine3, "uint8")), all, { stream = s })
  local rs = make(kind, "int64", R, { 2 * P })
  local mine = kind == "host" and luacuda.empty({ 2 }, "int64") or luacuda.device_array({ 2 }, "int64")
  comm:reduce_scatter(rs, mine, "sum", { stream = s })
  s:synchronize()
  same(flat(b), values(2, 5), "broadcast on a stream, " .. kind)
  same(flat(red), R == 1 and folded("prod", 4) or values(R, 4), "reduce on a stream, " .. kind)
  local want = {}
  for r = 1, P do
    for i = 1, 3 do want[#want + 1] = val(r, i) + 3 end
  end
  same(flat(all), want, "allgather on a stream into " .. kind .. " memory")
  same(flat(mine), folded("sum", 2, 2 * (R - 1)), "reduce_scatter on a stream, " .. kind)
end

-- send and recv around the ring, on streams
do
  local s = luacuda.stream()
  local nxt, prev = R % P + 1, (R - 2) % P + 1
  local x = make("device", "float64", R, { 4 })
  local got = luacuda.zeros({ 4 }, "float64")
  if P > 1 then
    if R % 2 == 1 then
      comm:send(x, nxt, { stream = s })
      comm:recv(got, prev, { stream = s })
    else
      comm:recv(got, prev, { stream = s })
      comm:send(x, nxt, { stream = s })
    end
    s:synchronize()
    same(flat(got), values(prev, 4), "send and recv around the ring, on a stream")
  end
end

-- views: a strided column of a host matrix, a strided view of a device
-- matrix; the elements around them untouched
do
  local s = luacuda.stream()
  local base = make("host", "int32", R, { 4, 3 })
  comm:allreduce(base[{ {}, 2 }], "sum", { stream = s })
  local d = make("device", "float32", R, { 3, 4 })
  comm:allreduce(d[{ {}, { 2, 3 } }], "max", { stream = s })
  s:synchronize()
  local got, want = flat(base), values(R, 12)
  for row = 1, 4 do want[(row - 1) * 3 + 2] = fold("sum", (row - 1) * 3 + 2) end
  same(got, want, "allreduce on a strided host column, on a stream")
  got, want = flat(d), values(R, 12)
  for i = 1, 12 do
    local col = (i - 1) % 4 + 1
    if col == 2 or col == 3 then want[i] = fold("max", i) end
  end
  same(got, want, "allreduce on a strided device view, on a stream")
end

-- several streams and calls without one, in turn: each rank makes the
-- MPI calls in the order of the script's calls, whatever the streams
do
  local s1, s2 = luacuda.stream(), luacuda.stream()
  local a = make("host", "int64", R, { 3 })
  local b = make("device", "int64", R, { 3 })
  local c = make("pinned", "int64", R, { 3 })
  comm:allreduce(a, "sum", { stream = s1 })
  comm:allreduce(b, "max", { stream = s2 })
  comm:allreduce(c, "min")                 -- at the call, after the two queued
  comm:allreduce(a, "max", { stream = s2 }) -- a's sum, on s1, first
  s1:synchronize()
  s2:synchronize()
  local amax = {}
  for i = 1, 3 do amax[i] = fold("sum", i) end   -- the same on every rank
  same(flat(a), amax, "a queued collective after another on a second stream")
  same(flat(b), folded("max", 3), "allreduce on a second stream")
  same(flat(c), folded("min", 3), "a collective at the call after queued ones")
end

-- a host access waits for the queued collective that writes the array
do
  local s = luacuda.stream()
  local h = make("host", "float64", R, { 8 })
  comm:allreduce(h, "sum", { stream = s })
  same(flat(h), folded("sum", 8), "reading x after the call, without a synchronize")
  s:synchronize()
end

-- arrays dropped while their collective is queued: their memory stays
-- until the stream is done. Arrays made after the collection hold a mark
-- that a collective writing freed (and reused) memory would overwrite;
-- ASan and valgrind would report the use after free.
do
  local s = luacuda.stream()
  for _, kind in ipairs(KINDS) do
    comm:allreduce(make(kind, "float32", R, { 1000 }), "sum", { stream = s })
  end
  collectgarbage()
  collectgarbage()
  local marks = {}
  for i, kind in ipairs(KINDS) do
    marks[i] = luacuda[kind == "host" and "empty" or kind .. "_array"]({ 1000 }, "float32")
    marks[i]:fill(1234)
  end
  s:synchronize()
  for i, kind in ipairs(KINDS) do
    local t = flat(marks[i])
    local ok = #t == 1000
    for k = 1, #t do ok = ok and t[k] == 1234 end
    check(ok, "an array made after the queued collective's arrays were dropped, " .. kind)
  end
end

-- the call returns when queued: a slow kernel queued first on the stream
-- writes x, and the collective runs after it
do
  local m = luacuda.compile([==[
    extern "C" __global__ void streams_spin_fill(long long spins, float *out, int n, float v) {
      volatile long long acc = 0;
      for (long long i = 0; i < spins; i++) acc = acc + 1;
      for (int i = 0; i < n; i++) out[i] = v + (acc != spins);
    }]==], { name = "streams_spin_fill.cu" })
  -- about a tenth of a second on the simulator, half a second on the
  -- fake driver (which interprets the PTX)
  local fake = luacuda.backend() == "cuda" and luacuda.devices()[1].name:find("^luacuda fake GPU")
  local spins = tonumber(os.getenv("STREAMS_SPEC_SPINS")) or (fake and 20000000 or 200000000)
  local s = luacuda.stream()
  local x = luacuda.device_array(16, "float32"):fill(-1)
  comm:barrier()                       -- every rank here, so no header waits long
  local t0 = luacuda.clock()
  m.streams_spin_fill[{ 1, 1, s }](spins, x, 16, R)
  comm:allreduce(x, "sum", { stream = s })
  local busy = not s:query()
  local returned = luacuda.clock() - t0
  s:synchronize()
  local ran = luacuda.clock() - t0
  say(("TIMES returned %.3f s, done %.3f s"):format(returned, ran))
  check(busy, "allreduce on a stream returns while the stream's work goes on")
  local want = {}
  for i = 1, 16 do want[i] = P * (P + 1) / 2 end
  same(flat(x), want, "allreduce after the kernel queued before it on the stream")
end

ranklog.finish_all(comm, log)
