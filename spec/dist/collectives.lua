-- Run by spec/dist_spec.lua under mpirun (4 ranks): every collective and
-- op on several dtypes, memory kinds, views and strided arrays, each result
-- checked against values computed here in Lua from what every rank gave.
-- Each rank writes "FAIL <what>" lines, then "rank R: N checks, F failed",
-- into its file rank<R>.txt in the directory arg[1];
-- the exit status is 0 only when no rank failed.
local luacuda = require "luacuda"
local dist = require "luacuda.dist"

package.path = arg[0]:match("^(.*)/") .. "/?.lua;" .. package.path
local ranklog = require "ranklog"

local comm, log = ranklog.start(arg[1], true)   -- the spec gives each rank a device
local R, P = comm.rank, comm.size
local say, check, same, flat = log.say, log.check, log.same, ranklog.flat

-- The value of element i on rank r for a dtype: small numbers whose
-- sums and products every dtype holds exactly (1..3, signed where it can).
local KIND = { bool = "b", int8 = "i", int16 = "i", int32 = "i", int64 = "i",
  uint8 = "u", uint16 = "u", uint32 = "u", uint64 = "u",
  float16 = "f", bfloat16 = "f", float32 = "f", float64 = "f" }
local function val(dtype, r, i)
  if KIND[dtype] == "b" then return (r + i) % 3 == 0 end
  local v = (r + 2 * i) % 3 + 1
  if KIND[dtype] ~= "u" and (r + i) % 2 == 0 then v = -v end
  if KIND[dtype] == "f" and i % 4 == 0 then v = v / 2 end
  return v
end

local function fold(dtype, op, vals)
  local acc = vals[1]
  for k = 2, #vals do
    local v = vals[k]
    if KIND[dtype] == "b" then
      if op == "sum" or op == "max" then acc = acc or v else acc = acc and v end
    else acc = ranklog.combine(op, acc, v) end
  end
  -- integers come back as Lua integers, floats as floats
  if KIND[dtype] == "f" then acc = acc + 0.0 elseif KIND[dtype] ~= "b" then acc = math.tointeger(acc) end
  return acc
end

local function values_of(dtype, r, n)
  local t = {}
  for i = 1, n do t[i] = val(dtype, r, i) end
  return t
end

local function expected(dtype, op, n)
  local t = {}
  for i = 1, n do
    local per = {}
    for r = 1, P do per[r] = val(dtype, r, i) end
    t[i] = fold(dtype, op, per)
  end
  return t
end

local function norm(dtype, t)  -- what totable gives back for values_of
  local u = {}
  for i, v in ipairs(t) do u[i] = fold(dtype, "sum", { v }) end
  return u
end

-- an array of the kind holding rank r's values, with the given shape
local function make(kind, dtype, r, shape)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local h = luacuda.array(values_of(dtype, r, n), dtype):reshape(table.unpack(shape))
  if kind == "host" then return h end
  if kind == "device" then return luacuda.to_device(h) end
  local a = luacuda[kind .. "_array"](shape, dtype)
  h:copy_to_host(a)
  return a
end

local DTYPES = { "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
  "uint64", "float16", "bfloat16", "float32", "float64" }
local OPS = { "sum", "prod", "min", "max" }

-- allreduce, in place, every dtype and op
for _, dt in ipairs(DTYPES) do
  for _, op in ipairs(OPS) do
    local x = make("host", dt, R, { 6 })
    local r = comm:allreduce(x, op)
    check(r == x, "allreduce returns x")
    same(flat(x), expected(dt, op, 6), ("allreduce %s %s"):format(dt, op))
  end
end

-- allreduce into out: x left as it was; the default op is sum
for _, dt in ipairs { "int32", "float64", "float16" } do
  local x = make("host", dt, R, { 2, 3 })
  local out = luacuda.empty({ 3, 2 }, dt)
  local r = comm:allreduce(x, { out = out })
  check(r == out, "allreduce returns out")
  same(flat(out), expected(dt, "sum", 6), "allreduce into out " .. dt)
  same(flat(x), norm(dt, values_of(dt, R, 6)), "allreduce leaves x when out is given " .. dt)
  comm:allreduce(x, "max", { out = out })
  same(flat(out), expected(dt, "max", 6), "allreduce max into out " .. dt)
end

-- a NaN reduced in float16 or bfloat16 comes back as the quiet NaN of its
-- sign, its payload dropped, as luacuda converts it everywhere (base's
-- half.h): bits 0x7f81 and 0xffa5 sum to bfloat16's 0x7fc0 and 0xffc0
for _, case in ipairs { { "float16", 0x3c00, { 0x7d01, 0xfd25 }, { 0x7e00, 0xfe00 } },
                        { "bfloat16", 0x3f80, { 0x7f81, 0xffa5 }, { 0x7fc0, 0xffc0 } } } do
  local dt, one, nan, want = table.unpack(case)
  local bits = luacuda.array(R == 1 and nan or { one, nan[2] }, "uint16")
  comm:allreduce(bits:view(dt), "sum")
  same(flat(bits), want, "allreduce of a NaN in " .. dt)
end

-- every memory kind (a device array goes through a host copy)
for _, kind in ipairs { "pinned", "mapped", "managed", "device" } do
  local x = make(kind, "float32", R, { 5 })
  comm:allreduce(x, "sum")
  same(flat(x), expected("float32", "sum", 5), "allreduce on " .. kind .. " memory")
  check(luacuda.attr(x, "kind") == kind, "the array stays " .. kind)
end

-- views: a strided column, a transposed matrix, a reversed vector; the
-- elements around them untouched
do
  local base = make("host", "int64", R, { 4, 3 })
  local before = flat(base)
  local col = base[{ {}, 2 }]                       -- 4 elements, stride 3
  comm:allreduce(col, "sum")
  local got, want = flat(base), {}
  for i = 1, 12 do want[i] = before[i] end
  local col_want = {}
  for row = 1, 4 do
    local i = (row - 1) * 3 + 2
    local per = {}
    for r = 1, P do per[r] = val("int64", r, i) end
    want[i] = fold("int64", "sum", per)
    col_want[row] = want[i]
  end
  same(got, want, "allreduce on a strided column writes the column only")
  same(flat(col), col_want, "the column holds the sum")

  local m = make("host", "float64", R, { 2, 3 })
  local t = m.T                                     -- F-order view
  comm:allreduce(t, "max")
  same(flat(m), expected("float64", "max", 6), "allreduce on a transposed view")

  local d = make("device", "int32", R, { 3, 4 })
  local dv = d[{ {}, { 2, 3 } }]                    -- strided device view
  comm:allreduce(dv, "min")
  local all = flat(d)
  local ok = true
  for i = 1, 12 do
    local col_i = (i - 1) % 4 + 1
    local per = {}
    for r = 1, P do per[r] = val("int32", r, i) end
    local want_i = (col_i == 2 or col_i == 3) and fold("int32", "min", per) or val("int32", R, i)
    if all[i] ~= want_i then ok = false end
  end
  check(ok, "allreduce on a strided view of a device array")
end

-- a copy queued on a stream behind a slow kernel writes x: the collective
-- waits for it, as a host access from Lua does (without the wait it would
-- sum the old values, and the copy would land afterwards)
do
  local fake = luacuda.backend() == "cuda" and luacuda.devices()[1].name:find("^luacuda fake GPU")
  local m = luacuda.compile([==[
    extern "C" __global__ void dist_spin_fill(long long spins, float *out, int n, float v) {
      volatile long long acc = 0;
      for (long long i = 0; i < spins; i++) acc = acc + 1;
      for (int i = 0; i < n; i++) out[i] = v + (acc != spins);
    }]==], { name = "dist_spin_fill.cu" })
  local d = luacuda.device_array(16, "float32"):fill(0)
  local h = luacuda.pinned_array(16, "float32"):fill(-1)
  local s = luacuda.stream()
  m.dist_spin_fill[{ 1, 1, s }](fake and 1000000 or 20000000, d, 16, R)
  d:copy_to_host(h, s)
  comm:allreduce(h, "sum")
  local want = {}
  for i = 1, 16 do want[i] = P * (P + 1) / 2 end
  same(flat(h), want, "allreduce waits for the copy queued into x")
end

-- broadcast from every root, several dtypes and kinds
for root = 1, P do
  for _, dt in ipairs { "bool", "uint16", "bfloat16", "float64" } do
    local x = make(root % 2 == 0 and "pinned" or "host", dt, R, { 3, 2 })
    local r = comm:broadcast(x, root)
    check(r == x, "broadcast returns x")
    same(flat(x), norm(dt, values_of(dt, root, 6)), ("broadcast %s from %d"):format(dt, root))
  end
end
do  -- a strided view broadcast: only the view changes
  local base = make("host", "float32", R, { 6 })
  local odd = base[{ { 1, 6, 2 } }]
  comm:broadcast(odd, 2)
  local got, mine, root_vals = flat(base), norm("float32", values_of("float32", R, 6)),
    norm("float32", values_of("float32", 2, 6))
  local want = {}
  for i = 1, 6 do want[i] = i % 2 == 1 and root_vals[i] or mine[i] end
  same(got, want, "broadcast into a strided view")
end

-- reduce: the root gets the result, the other ranks keep theirs
for _, root in ipairs { 1, P } do
  for _, op in ipairs(OPS) do
    for _, dt in ipairs { "int16", "float32", "float16" } do
      local x = make("host", dt, R, { 4 })
      comm:reduce(x, root, op)
      local want = R == root and expected(dt, op, 4) or norm(dt, values_of(dt, R, 4))
      same(flat(x), want, ("reduce %s %s to %d"):format(dt, op, root))
    end
  end
end
do
  local x = make("device", "int64", R, { 4 })
  comm:reduce(x, 2, "sum")
  same(flat(x), R == 2 and expected("int64", "sum", 4) or norm("int64", values_of("int64", R, 4)),
    "reduce on a device array")
end

-- allgather: rank 1's block first
for _, dt in ipairs { "int8", "float64", "bool" } do
  local x = make("host", dt, R, { 3 })
  local out = luacuda.empty({ P, 3 }, dt)
  local r = comm:allgather(x, out)
  check(r == out, "allgather returns out")
  local want = {}
  for r2 = 1, P do
    for i, v in ipairs(norm(dt, values_of(dt, r2, 3))) do want[(r2 - 1) * 3 + i] = v end
  end
  same(flat(out), want, "allgather " .. dt)
end
do  -- from a strided view into a transposed (F-order) output
  local base = make("host", "int32", R, { 2, 4 })
  local x = base[{ {}, 2 }]                        -- elements 2 and 6
  local out = luacuda.empty({ 2, P }, "int32").T    -- shape {P, 2}, F order
  comm:allgather(x, out)
  local want = {}
  for r2 = 1, P do
    want[#want + 1] = val("int32", r2, 2)
    want[#want + 1] = val("int32", r2, 6)
  end
  same(flat(out), want, "allgather from a strided view into a transposed one")
end

-- reduce_scatter: rank r gets block r of the reduction
for _, op in ipairs(OPS) do
  for _, dt in ipairs { "uint32", "float32", "bfloat16" } do
    local x = make("host", dt, R, { P * 2 })
    local out = luacuda.empty({ 2 }, dt)
    comm:reduce_scatter(x, out, op)
    local all = expected(dt, op, P * 2)
    same(flat(out), { all[2 * R - 1], all[2 * R] }, ("reduce_scatter %s %s"):format(dt, op))
  end
end
do
  local x = make("managed", "float64", R, { P, 3 })
  local out = luacuda.device_array({ 3 }, "float64")
  comm:reduce_scatter(x, out)
  local all = expected("float64", "sum", P * 3)
  same(flat(out), { all[3 * R - 2], all[3 * R - 1], all[3 * R] }, "reduce_scatter into device memory")
end

-- send and recv around a ring, then a strided receive
do
  local nxt, prev = R % P + 1, (R - 2) % P + 1
  local x = make("host", "int64", R, { 5 })
  local got = luacuda.zeros({ 5 }, "int64")
  if R % 2 == 1 then
    comm:send(x, nxt)
    comm:recv(got, prev)
  else
    comm:recv(got, prev)
    comm:send(x, nxt)
  end
  same(flat(got), norm("int64", values_of("int64", prev, 5)), "send and recv around the ring")

  if R == 1 then
    comm:send(make("device", "float32", R, { 3 }), 2)
  elseif R == 2 then
    local base = luacuda.zeros({ 6 }, "float32")
    comm:recv(base[{ { 2, 6, 2 } }], 1)
    local v = norm("float32", values_of("float32", 1, 3))
    same(flat(base), { 0.0, v[1], 0.0, v[2], 0.0, v[3] }, "recv into a strided view")
  end
end

-- a record array moves as bytes
do
  local Vec = luacuda.record { { "x", "float32" }, { "n", "int32" } }
  local a = luacuda.zeros({ 2 }, Vec)
  a[1] = { x = R + 0.5, n = 10 * R }
  a[2] = { x = -R, n = R }
  comm:broadcast(a, P)
  check(a[1].x == P + 0.5 and a[1].n == 10 * P and a[2].x == -P and a[2].n == P,
    "broadcast of a record array")
  local out = luacuda.zeros({ P, 2 }, Vec)
  comm:allgather(a, out)
  check(out[{ P, 1 }].n == 10 * P, "allgather of a record array")
end

-- split: odd and even ranks; sizes, ranks and a sum within each
do
  local half = comm:split(R % 2)
  local members = {}
  for r = 1, P do if r % 2 == R % 2 then members[#members + 1] = r end end
  check(half.size == #members, "split's size")
  local mine
  for k, r in ipairs(members) do if r == R then mine = k end end
  check(half.rank == mine, "split keeps the order of the ranks")
  check(half.engine == comm.engine, "split's engine is its parent's")
  local x = luacuda.full({ 1 }, R, "int64")
  half:allreduce(x)
  local want = 0
  for _, r in ipairs(members) do want = want + r end
  check(x[1] == want, "allreduce within a split")
  local none = comm:split(R == 1 and 0 or nil)
  check((R == 1) == (none ~= nil), "split with a nil color gives nil")
  if none then check(none.size == 1, "a split of one rank") end
  local rev = comm:split(0, -R)
  check(rev.rank == P - R + 1, "split's key orders the ranks")
end

check(comm.local_rank >= 1 and comm.local_rank <= comm.local_size, "local_rank in 1..local_size")
check(comm.local_size == P, "every rank on this machine")
check(dist.init() == comm, "init returns the same communicator")
comm:barrier()

ranklog.finish_all(comm, log)
