-- bench/dist.lua: luacuda.dist's comm:allreduce against MPI_Allreduce
-- called from C (bench/native_allreduce.c, a Lua module built with mpicc:
-- require "bench.native_allreduce"), in the same processes of the same
-- mpirun job: `make bench-dist` runs it on 4 ranks. An in-place sum of
-- 64 MiB of float32 (BENCH_DIST_MIB) on every rank: a host array, a pinned
-- array, and a strided view (every other element of a 128 MiB array,
-- which luacuda.dist copies to a contiguous array and back), each against
-- the C call on a malloc'd buffer of the same size. The sides alternate
-- within each repetition, in an order that turns, and before each timed
-- call every rank fills its buffer with its rank and waits at a barrier;
-- a call's time is the slowest rank's. Each figure is the median over
-- BENCH_REPEAT (7) repetitions of C's time / luacuda's (a throughput
-- ratio). Every result is checked (1 + 2 + ... + size, and the
-- strided view's other elements untouched). Rank 1 prints
-- "name: value (target: ...)" lines and "bench: N of M targets met".
local luacuda = require "luacuda"
local dist = require "luacuda.dist"
local B = require "bench.common"

if not dist.available then
  print("bench: luacuda.dist's MPI engine was not built (no mpicc: libopenmpi-dev)")
  print("bench: 0 of 0 targets met")
  return
end
local found, native = pcall(require, "bench.native_allreduce")
if not found then
  print("bench: no build/bench/native_allreduce.so (make bench-dist builds it with mpicc): "
        .. tostring(native):match("^[^\n]*"))
  print("bench: 0 of 0 targets met")
  return
end

local comm = dist.init()
local R, P = comm.rank, comm.size
local function say(...) if R == 1 then print(...) io.stdout:flush() end end
if P < 2 then
  say("bench: run it under mpirun with several ranks (make bench-dist: mpirun -np 4)")
  say("bench: 0 of 0 targets met")
  return
end
if R == 1 then B.results("dist") end

local MIB = tonumber(os.getenv("BENCH_DIST_MIB")) or 64
local REPEAT = tonumber(os.getenv("BENCH_REPEAT")) or 7
local N = math.tointeger(MIB * (1 << 20) // 4)
local SUM = P * (P + 1) // 2          -- every rank gives its rank

local host = luacuda.empty({N}, "float32")
local pinned = luacuda.pinned_array({N}, "float32")
local wide = luacuda.empty({N, 2}, "float32")
local strided = wide[{{}, 1}]          -- N elements, 8 bytes apart
local cbuf = native.buffer(N)

local failures = 0
local function expect(ok, what)
  if not ok then
    failures = failures + 1
    io.stderr:write(("bench: rank %d: %s\n"):format(R, what))
  end
end

-- One side: prepare (untimed), then the timed call; the slowest rank's time.
local function timed_luacuda(x, name)
  return function()
    if rawequal(x, strided) then wide:fill(-1) end
    x:fill(R)
    native.barrier()
    local t0 = luacuda.clock()
    comm:allreduce(x)
    local t = luacuda.clock() - t0
    expect(x[1] == SUM and x[N] == SUM and x[N // 2] == SUM,
           ("%s: got %s, %s, %s, want %d"):format(name, x[1], x[N // 2], x[N], SUM))
    if rawequal(x, strided) then
      expect(wide[{1, 2}] == -1 and wide[{N, 2}] == -1, "strided: the other elements changed")
      collectgarbage()                 -- the staging copy, 64 MiB, goes now
    end
    return native.max(t)
  end
end

local sides = {
  {name = "C", run = function()
    cbuf:fill(R)
    local t = cbuf:allreduce()
    expect(cbuf:get(1) == SUM and cbuf:get(N) == SUM, ("C: got %s, want %d"):format(cbuf:get(1), SUM))
    return native.max(t)
  end},
  {name = "host", run = timed_luacuda(host, "host")},
  {name = "pinned", run = timed_luacuda(pinned, "pinned")},
  {name = "strided", run = timed_luacuda(strided, "strided")},
}

-- the agreement alone (comm:barrier is that agreement and nothing else),
-- against MPI_Barrier: what every collective adds to its data
local function timed_barrier(f)
  native.barrier()
  local t0 = luacuda.clock()
  f()
  return native.max(luacuda.clock() - t0)
end

local times, ratios = {}, {}
for _, s in ipairs(sides) do times[s.name], ratios[s.name] = {}, {} end
times.header, times.mpi_barrier = {}, {}
for _, s in ipairs(sides) do s.run() end      -- a warm-up: every buffer touched once
for rep = 1, REPEAT do
  local t = {}
  for k = 0, #sides - 1 do
    local s = sides[(rep + k - 1) % #sides + 1]
    t[s.name] = s.run()
    table.insert(times[s.name], t[s.name])
  end
  -- the load on this machine drifts: each repetition's ratios compare
  -- calls made moments apart
  for name, v in pairs(t) do table.insert(ratios[name], t.C / v) end
  for _ = 1, 5 do
    table.insert(times.header, timed_barrier(function() comm:barrier() end))
    table.insert(times.mpi_barrier, timed_barrier(native.barrier))
  end
end

local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
end
local med = {}
for k, t in pairs(times) do med[k] = median(t) end

local bytes = N * 4
say(("allreduce of %d MiB float32 on each of %d ranks, %d repetitions (a call's time is its slowest rank's):")
    :format(MIB, P, REPEAT))
for _, s in ipairs(sides) do
  local t = times[s.name]
  local r = ratios[s.name]
  table.sort(r)
  say(("  %-8s median %7.1f ms, %5.0f MB/s  (%.1f-%.1f ms%s)"):format(s.name, med[s.name] * 1e3,
      bytes / med[s.name] * 1e-6, t[1] * 1e3, t[#t] * 1e3, s.name == "C" and ""
      or ("; C's time / this, by repetition: %.2f-%.2f"):format(r[1], r[#r])))
end
say(("  agreement alone (comm:barrier) %.3f ms, MPI_Barrier %.3f ms: %.2f%% of C's allreduce")
    :format(med.header * 1e3, med.mpi_barrier * 1e3, med.header / med.C * 100))

local met, total = 0, 0
local function figure(name, label, value, target)   -- label: the chart's, short
  total = total + 1
  if value >= target then met = met + 1 end
  say(("%s: %.3gx (target: >= %gx)"):format(name, value, target))
  B.record(label, value, target, ">=")
end
-- each figure: the median over the repetitions of C's time / luacuda's
local what = ("allreduce %d MiB float32, %d ranks"):format(MIB, P)
figure(what .. ", host array / MPI_Allreduce from C", "host array / C", median(ratios.host), 0.9)
figure(what .. ", pinned array / MPI_Allreduce from C", "pinned array / C", median(ratios.pinned), 0.9)
figure(what .. ", strided view (copied and back) / MPI_Allreduce from C", "strided view / C",
       median(ratios.strided), 0.4)

-- any rank's failed check fails the bench on every rank
local bad = luacuda.full({1}, failures, "int32")
comm:allreduce(bad)
if bad[1] > 0 then
  say(("bench: %d results wrong (see each rank's stderr)"):format(bad[1]))
  os.exit(1)
end
say(("bench: %d of %d targets met"):format(met, total))
