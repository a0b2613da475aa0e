-- Run by spec/dist_spec.lua under mpirun (2 ranks) on the CUDA backend:
-- with the fake NCCL (LUACUDA_LIBNCCL=build/fake/libnccl.so.2) the
-- communicator's engine is "nccl", without it "mpi"; the collectives on
-- device and managed arrays give the same values either way, checked
-- against values computed here. Each rank writes "engine <name>", "FAIL
-- <what>" lines, then "rank R: N checks, F failed" into its file
-- rank<R>.txt in the directory arg[1].
local luacuda = require "luacuda"

package.path = arg[0]:match("^(.*)/") .. "/?.lua;" .. package.path
local ranklog = require "ranklog"

local comm, log = ranklog.start(arg[1])
local R, P = comm.rank, comm.size
local say, check, same, flat = log.say, log.check, log.same, ranklog.flat
say("engine " .. comm.engine)

-- rank r's element i: small whole numbers every dtype holds exactly
local function val(r, i) return (r * 3 + i) % 5 + 1 end
local function values(r, n)
  local t = {}
  for i = 1, n do t[i] = val(r, i) end
  return t
end
local function make(kind, dtype, r, n)
  local h = luacuda.array(values(r, n), dtype)
  if kind == "device" then return luacuda.to_device(h) end
  local a = luacuda.managed_array(n, dtype)
  h:copy_to_host(a)
  return a
end
local function fold(op, i, n)
  local acc = val(1, i)
  for r = 2, n do
    acc = ranklog.combine(op, acc, val(r, i))
  end
  return acc
end

-- allreduce: every op, several dtypes, in place and into out, both kinds
for _, kind in ipairs { "device", "managed" } do
  for _, dtype in ipairs { "int32", "int64", "uint8", "float32", "float64", "float16", "bfloat16", "int16" } do
    for _, op in ipairs { "sum", "prod", "min", "max" } do
      local x = make(kind, dtype, R, 5)
      local want = {}
      for i = 1, 5 do want[i] = fold(op, i, P) end
      comm:allreduce(x, op)
      same(flat(x), want, ("allreduce %s %s on %s"):format(op, dtype, kind))
      local y, out = make(kind, dtype, R, 5), luacuda.device_array(5, dtype)
      check(comm:allreduce(y, op, { out = out }) == out, "allreduce returns out")
      same(flat(out), want, ("allreduce %s %s into out"):format(op, dtype))
      same(flat(y), values(R, 5), "allreduce into out leaves x")
    end
  end
end

do -- booleans: sum is or, prod is and
  local b = luacuda.to_device(luacuda.array({ R == 1, false, true }, "bool"))
  comm:allreduce(b)
  same(flat(b), { true, false, true }, "allreduce of booleans (or)")
  local a = luacuda.to_device(luacuda.array({ R == 1, false, true }, "bool"))
  comm:allreduce(a, "prod")
  same(flat(a), { false, false, true }, "allreduce prod of booleans (and)")
end

-- broadcast from each root, reduce to each root
for root = 1, P do
  local x = make("device", "float32", R, 6)
  check(comm:broadcast(x, root) == x, "broadcast returns x")
  same(flat(x), values(root, 6), ("broadcast from %d"):format(root))
  local h = make("device", "int16", R, 3)     -- no 16-bit type in NCCL: moved as bytes
  comm:broadcast(h, root)
  same(flat(h), values(root, 3), ("broadcast int16 from %d"):format(root))
  local y = make("device", "int64", R, 4)
  comm:reduce(y, root, "sum")
  local want = {}
  for i = 1, 4 do want[i] = R == root and fold("sum", i, P) or val(R, i) end
  same(flat(y), want, ("reduce to %d"):format(root))
end

do -- allgather and reduce_scatter
  local x = make("device", "float64", R, 3)
  local all = luacuda.device_array({ P, 3 }, "float64")
  comm:allgather(x, all)
  local want = {}
  for r = 1, P do for i = 1, 3 do want[#want + 1] = val(r, i) end end
  same(flat(all), want, "allgather")
  local big = make("managed", "int32", R, 2 * P)
  local mine = luacuda.device_array(2, "int32")
  comm:reduce_scatter(big, mine, "max")
  same(flat(mine), { fold("max", 2 * R - 1, P), fold("max", 2 * R, P) }, "reduce_scatter")
end

do -- send and recv, rank 1 to rank 2 and back
  local x = make("device", "float32", R, 4)
  if R == 1 then
    comm:send(x, 2)
    comm:recv(x, 2)
    same(flat(x), values(2, 4), "recv from 2")
  else
    local got = luacuda.device_array(4, "float32")
    comm:recv(got, 1)
    same(flat(got), values(1, 4), "recv from 1")
    comm:send(x, 1)
  end
end

-- ranks whose arrays differ in kind: every rank goes through MPI
do
  local x = R == 1 and make("device", "float32", R, 3) or luacuda.array(values(R, 3), "float32")
  comm:allreduce(x, "max")
  same(flat(x), { fold("max", 1, P), fold("max", 2, P), fold("max", 3, P) }, "allreduce, device and host")
  local y = R == 2 and make("device", "int64", R, 2) or luacuda.array(values(R, 2), "int64")
  if R == 1 then comm:send(y, 2) else comm:recv(y, 1) end
  same(flat(y), values(1, 2), "send from host memory to device memory")
end

-- on a stream: queued there, the result there once the stream is done
-- (on either engine: MPI runs it in a host function on the stream)
do
  local s = luacuda.stream()
  local x = make("device", "float32", R, 8)
  comm:allreduce(x, "sum", { stream = s })
  s:synchronize()
  local want = {}
  for i = 1, 8 do want[i] = fold("sum", i, P) end
  same(flat(x), want, "allreduce on a stream, after its synchronize")
  local y = make("device", "int32", R, 2)
  comm:broadcast(y, 2, { stream = s })
  local all = luacuda.device_array(2 * P, "int32")
  comm:allgather(y, all, { stream = s })
  s:synchronize()
  same(flat(all), { val(2, 1), val(2, 2), val(2, 1), val(2, 2) }, "broadcast then allgather on a stream")
end

-- ordered on the stream: a slow kernel queued there first writes x, the
-- collective is queued behind it and the call returns before either ran
-- (the kernel spins for about half a second on the fake driver)
if comm.engine == "nccl" then
  local m = luacuda.compile([==[
    extern "C" __global__ void nccl_spin_fill(long long spins, float *out, int n, float v) {
      volatile long long acc = 0;
      for (long long i = 0; i < spins; i++) acc = acc + 1;
      for (int i = 0; i < n; i++) out[i] = v + (acc != spins);
    }]==], { name = "nccl_spin_fill.cu" })
  local s = luacuda.stream()
  local x = luacuda.device_array(16, "float32"):fill(-1)
  m.nccl_spin_fill[{ 1, 1, s }](tonumber(os.getenv("NCCL_SPEC_SPINS") or 20000000), x, 16, R)
  comm:allreduce(x, "sum", { stream = s })
  check(not s:query(), "allreduce on a stream returns while the stream's work goes on")
  s:synchronize()
  local want = {}
  for i = 1, 16 do want[i] = P * (P + 1) / 2 end
  same(flat(x), want, "allreduce after the kernel queued before it on the stream")
end

-- NCCL's communicator has one device: an array on another is an error on
-- every rank (the spec runs this with two fake devices)
if comm.engine == "nccl" and #luacuda.devices() >= 2 then
  local y
  do
    local _ <close> = luacuda.device(2)
    y = luacuda.device_array(4, "float32"):fill(1)
  end
  local ok, err = pcall(comm.allreduce, comm, R == 2 and y or make("device", "float32", R, 4))
  check(not ok and tostring(err):find("luacuda.dist.allreduce: on rank 2: x is on device 2, but "
    .. "NCCL's communicator is on device 1 (the device current at its first collective)", 1, true),
    "an array on another device than NCCL's communicator: " .. tostring(err))
end

-- host arrays go through MPI on either engine, on a stream too
do
  local h = luacuda.array(values(R, 3), "float32")
  comm:allreduce(h)
  same(flat(h), { fold("sum", 1, P), fold("sum", 2, P), fold("sum", 3, P) }, "allreduce of a host array")
  local s = luacuda.stream()
  local h2 = luacuda.array(values(R, 3), "float32")
  comm:allreduce(h2, "max", { stream = s })
  s:synchronize()
  same(flat(h2), { fold("max", 1, P), fold("max", 2, P), fold("max", 3, P) },
    "allreduce of a host array on a stream")
end

log.finish()
