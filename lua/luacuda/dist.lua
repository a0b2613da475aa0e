--- Several processes and machines: collectives on luacuda arrays over MPI
-- and NCCL.
--
-- `local dist = require "luacuda.dist"` loads the MPI engine
-- (`luacuda/dist_mpi.so`, built where `mpicc` is) and `dist.init()` starts
-- MPI, or joins it when the host program started it. Launch the script
-- with `mpirun -np N lua5.4 script.lua` (docs/guide/devices-and-processes.md,
-- "Several processes: luacuda.dist"). Ranks are counted from 1, as everything in luacuda.
--
-- Every call starts with the agreement of its ranks on a header (which
-- function, communicator, op, root or peer, dtype and shape), over a
-- control channel of the process: a rank's bad argument, or ranks that
-- disagree, raise the same error on every rank, instead of a hang. Ranks
-- in different calls (another function, communicator or peer) raise the
-- same error on both where both calls have these two ranks alone (`ranks
-- disagree: rank 1 is in allreduce on communicator 1 (2 ranks), rank 2 in
-- send to rank 1 on communicator 1`; ranks are the world communicator's,
-- communicators their `id`), and abort the job with that message where
-- other ranks wait in them. A rank whose script dies (an uncaught error:
-- `lua5.4` exits with status 1) aborts the whole job on its way out
-- (`MPI_Abort`), so the other ranks do not wait for it forever; a clean
-- exit finalises MPI, after telling the other ranks, so that one waiting
-- for it in a call aborts the job (`rank 2 ended its script while rank 1
-- was in allreduce on ...`).
--
-- Two engines. On the CUDA backend, where NCCL loads (`libnccl.so.2`, or
-- `LUACUDA_LIBNCCL`; `0` turns it off) on every rank, a communicator's
-- `engine` is `"nccl"`: C-contiguous device and managed arrays go through
-- NCCL, on a stream (`{stream = s}`: queued there, the call returns when
-- queued; without it, on luacuda's stream and waited for). NCCL's
-- communicator is made at the first such collective, on each rank's
-- current device then. Everything else goes through MPI: the collectives
-- work on host-accessible arrays (host, pinned, mapped, managed) in place;
-- a strided view goes through a contiguous copy, and a device array
-- through a host copy (staging; as it is where MPI takes device memory:
-- `cuda_aware`), both copied back when the collective writes them.
-- Without a stream, MPI reads and writes the memory at the call, after the
-- copies and fills queued on streams that use the arrays are done, as for
-- a host access from Lua (`a[i]`); a launch that writes them must be
-- synchronized first. With `stream=`, the MPI call runs in a host
-- function queued on the stream, the copies around it queued there too;
-- the collectives queued through MPI run in the order of the calls
-- (events chain them), and a call without a stream waits for them.
-- @module luacuda.dist

local luacuda = require "luacuda"
local attr = luacuda.attr      -- an array's own field or method, whatever its dtype

local found, engine = pcall(require, "luacuda.dist_mpi")

local dist = {}

--- Whether the MPI engine is here (luacuda was built where `mpicc` is).
-- @field available
-- @usage print(require("luacuda.dist").available)
dist.available = found

if not found then
  local why = tostring(engine)
  dist.init = function()
    error("luacuda.dist.init: luacuda was built without MPI (no mpicc; install Debian's "
          .. "libopenmpi-dev and rebuild): " .. why:match("^[^\n]*"), 2)
  end
  return dist
end

--- Starts MPI (`MPI_Init_thread`) unless the host program did, and returns
-- the communicator of every process in the job (a copy of
-- `MPI_COMM_WORLD`), the same object at every call.
-- @function init
-- @treturn Comm the world communicator
-- @raise `luacuda.dist.init: luacuda was built without MPI ...` where the
-- engine is missing; `MPI was finalised already`
-- @usage local dist = require "luacuda.dist"
-- local comm = dist.init()
-- print(comm.rank, comm.size, comm.engine)    --> 1 1 mpi (one process)
dist.init = engine.init

-- The engine's methods, each called through call(): its error, raised
-- again at the script's line.
local raw = {}
for k, f in pairs(engine.methods) do raw[k] = f end
local methods = engine.methods

local function call(f, ...)
  local ok, r = pcall(f, ...)
  if not ok then error(r, 3) end   -- 1 here, 2 the method, 3 its caller
  return r
end

-- The same, called again when it returns false: the ranks' arrays differed
-- in kind (device memory for NCCL on some ranks, host memory for MPI on
-- others), and every rank calls again staged for MPI, this one with its
-- arrays as they were staged already.
local function again(f, ...)
  local ok, r = pcall(f, ...)
  if ok and r == false then ok, r = pcall(f, ...) end
  if ok and r == false then   -- staged arrays never differ in kind
    ok, r = false, "luacuda.dist: the ranks' arrays differ in kind after staging (a bug in luacuda.dist)"
  end
  return ok, r
end

-- The collectives queued on streams through MPI run one after the other,
-- in the order of the calls, whatever their streams: each waits for an
-- event recorded after the one before (one event per device, recorded
-- again each time), so that every rank makes its MPI calls in the same
-- order (the engine's header).
local last_queued
local queued_events = {}

local function after_queued(s)
  if last_queued then pcall(last_queued.wait, last_queued, s) end
end

local function record_queued(s)
  local d = luacuda.current_device()
  local e = queued_events[d] or luacuda.event()
  queued_events[d] = e
  if pcall(e.record, e, s) then
    last_queued = e
  else         -- a stream of another device: the next call waits here instead
    pcall(s.synchronize, s)
  end
end

-- The stream of opts when it is one (the engine reports anything else)
local function stream_of(opts)
  local s = type(opts) == "table" and rawget(opts, "stream") or nil
  return s ~= nil and pcall(function() return s.synchronize end) and s or nil
end

-- f (a method of the engine) through MPI, on the arrays staged: on the
-- stream s, after the collectives queued there before it. Its error is
-- raised again at the script's line.
local function through_mpi(s, f, ...)
  if s then after_queued(s) end
  local ok, r = again(f, ...)
  if not ok then error(r, 3) end   -- 1 here, 2 the method, 3 its caller
  if s then record_queued(s) end
  return r
end

-- An array the C engine takes for x (contiguous and host-accessible, or
-- device memory where MPI takes it), and a function that copies the
-- result back into x (nil when x is taken as it is): copies queued on s,
-- or made at the call. x is copied in only when the call reads it.
-- Anything else is passed on, for the engine's message. The arrays' own
-- fields and methods through attr: a record's fields may be named shape,
-- dtype, copy...
local function stage(comm, x, reads, writes, s)
  local kind = attr(x, "kind")
  local contiguous = attr(x, "is_c_contiguous")(x)
  local shape, dtype = attr(x, "shape"), attr(x, "dtype")
  -- device memory goes to MPI as it is where MPI takes it, at the call,
  -- on an MPI communicator (on an NCCL one, it would go to NCCL again)
  local direct = comm.cuda_aware and not s and comm.engine == "mpi" and contiguous
  if kind == "device" and not direct then
    local h
    if s then
      h = luacuda.pinned_array(shape, dtype)
      if reads then attr(x, "copy_to_host")(x, h, s) end
    else
      h = reads and attr(x, "copy_to_host")(x) or luacuda.empty(shape, dtype)
    end
    return h, writes and function() attr(x, "copy_to_device")(x, h, s) end
  elseif kind == "device" then
    -- as the copy to the host would: after the work queued so far
    luacuda.synchronize()
  elseif not contiguous then
    local c = reads and attr(x, "copy")(x, s) or luacuda.empty(shape, dtype)
    return c, writes and function() attr(c, "copy_to_host")(c, x, s) end
  end
  return x
end

-- Where the copy fails (a closed array, no memory), x goes on as it is,
-- and the engine raises its error on every rank.
local function staged(comm, x, reads, writes, s)
  if luacuda.type(x) ~= "array" then return x end
  local ok, h, back = pcall(stage, comm, x, reads, writes, s)
  if ok then return h, back end
  return x
end

-- NCCL reduces neither 16-bit integers nor records (it moves them as bytes;
-- a reduction of records is an error either way)
local NCCL_REDUCES_NOT = { int16 = true, uint16 = true }

-- Whether the call goes to NCCL with its arrays as they are: an NCCL
-- communicator, and every array C-contiguous device or managed memory
-- (of a dtype NCCL reduces, for a reduction). Anything else is staged
-- for MPI.
local function nccl_direct(comm, reduces, ...)
  local ok, engine = pcall(function() return comm.engine end)
  if not ok or engine ~= "nccl" then return false end
  -- send and recv go to NCCL once a collective has started it there
  if reduces == "p2p" and not comm._nccl_started then return false end
  for i = 1, select("#", ...) do
    local a = select(i, ...)
    if luacuda.type(a) ~= "array" then return false end
    local ok, direct = pcall(function()
      local kind = attr(a, "kind")
      return (kind == "device" or kind == "managed") and attr(a, "is_c_contiguous")(a)
        and not (reduces == true and NCCL_REDUCES_NOT[tostring(attr(a, "dtype"))])
    end)
    if not ok or not direct then return false end
  end
  return true
end

-- op and opts of a call that takes both, either left out
local function op_opts(op, opts)
  if type(op) == "table" and opts == nil then return nil, op end
  return op, opts
end

--- @type Comm

--- The rank of this process, 1 to `size`.
-- @field Comm.rank
-- @usage local comm = require("luacuda.dist").init()
-- if comm.rank == 1 then print("the first of " .. comm.size) end

--- The number of processes.
-- @field Comm.size
-- @usage local comm = require("luacuda.dist").init()
-- local share = 1000 // comm.size    -- rows per process

--- The rank among the processes on the same machine (1 to `local_size`),
-- for choosing a device: `luacuda.select_device(comm.local_rank)` with one
-- process per GPU.
-- @field Comm.local_rank
-- @usage local luacuda = require "luacuda"
-- local comm = require("luacuda.dist").init()
-- if #luacuda.devices() >= comm.local_size then luacuda.select_device(comm.local_rank) end

--- The number of processes on this machine.
-- @field Comm.local_size
-- @usage local comm = require("luacuda.dist").init()
-- print(comm.local_rank .. " of " .. comm.local_size .. " here")

--- How the collectives move device arrays: `"nccl"` where every rank runs
-- the CUDA backend and NCCL loads, else `"mpi"` (host arrays go through
-- MPI on either).
-- @field Comm.engine
-- @usage local luacuda = require "luacuda"
-- local comm = require("luacuda.dist").init()
-- assert(comm.engine == "mpi" or luacuda.backend() == "cuda")

--- Whether MPI takes device memory: then a C-contiguous device array of
-- an `"mpi"` communicator goes to MPI as it is, at a call without a
-- stream. Open MPI and MPICH are asked; `LUACUDA_MPI_CUDA=1` (or `0`) says
-- so for an MPI that cannot be.
-- @field Comm.cuda_aware
-- @usage local comm = require("luacuda.dist").init()
-- print(comm.cuda_aware)    --> false (Debian's OpenMPI)

--- The communicator's number in luacuda.dist's messages ("communicator
-- 2"), which `tostring(comm)` shows too: agreed by its ranks when it was
-- made (the first `init` of a process gives 1), and no two communicators
-- of a process have the same.
-- @field Comm.id
-- @usage local comm = require("luacuda.dist").init()
-- print(comm.id, tostring(comm))

--- Waits until every rank has called it (on the host: the collectives
-- queued on streams before it may still be running; synchronize those).
-- @function Comm:barrier
-- @raise `luacuda.dist.barrier: ranks called different functions (...)`
-- when another rank is in another collective of this communicator; `ranks
-- disagree: rank <r> is in barrier on communicator <c> (<n> ranks), rank
-- <s> in <its call>` on both of two ranks, one in another call (where
-- other ranks wait in either, the job is aborted with that message); the
-- job aborted with `rank <s> ended its script while rank <r> was in ...`
-- @usage local comm = require("luacuda.dist").init()
-- comm:barrier()
function methods.barrier(comm)
  call(raw.barrier, comm)
end

--- Splits the communicator: the ranks that give the same color form a new
-- one, ordered by key (default: their rank here). Every rank calls it.
-- @function Comm:split
-- @tparam ?integer color 0 or more; nil: this rank joins none
-- @tparam[opt] integer key the order in the new communicator
-- @treturn ?Comm the new communicator, nil for a nil color
-- @raise `luacuda.dist.split: on rank <r>: color must be a whole number 0 or
-- more, or nil, got <type>` on every rank
-- @usage local comm = require("luacuda.dist").init()
-- local pairs_of_ranks = comm:split((comm.rank - 1) // 2)
-- print(pairs_of_ranks.size)    --> 1 (with one process)
function methods.split(comm, color, key)
  local c = call(raw.split, comm, color, key)
  return c
end

--- Reduces `x` over every rank, elementwise, into `x` itself (or into
-- `opts.out`) on every rank. Booleans reduce as NumPy's: `"sum"` and
-- `"max"` are or, `"prod"` and `"min"` are and; float16 and bfloat16 are
-- computed in float32 and rounded at each step; min and max return a NaN
-- where one is met.
-- @function Comm:allreduce
-- @tparam Array x the same dtype and shape on every rank
-- @tparam[opt="sum"] string op `"sum"`, `"prod"`, `"min"` or `"max"`
-- @tparam[opt] table opts `out =` an array of x's dtype and size for the
-- result (x is then left as it was); `stream =` a Stream to queue it on
-- (the call returns when queued, the result is there once the stream's
-- work is done; the arrays are kept until then)
-- @treturn Array x, or out
-- @raise `luacuda.dist.allreduce: ranks gave arrays of different dtypes
-- (<d1> on some, <d2> on others)` (or sizes, shapes, ops) on every rank;
-- `on rank <r>: <cause>` for one rank's bad argument, on every rank
-- (`stream= on the MPI engine needs MPI_THREAD_MULTIPLE ...` where the
-- host program started MPI with less); `on rank <r>: NCCL call
-- ncclAllReduce failed: <why>` on every rank; `ranks cut MPI calls into
-- pieces of different sizes (LUACUDA_DIST_CHUNK: ...)`; for ranks in
-- other calls, as @{Comm:barrier}
-- @usage local luacuda = require "luacuda"
-- local comm = require("luacuda.dist").init()
-- local g = luacuda.full({3}, comm.rank, "float32")
-- comm:allreduce(g)                 -- g = 1 + 2 + ... + size everywhere
-- comm:allreduce(g, "max", {out = luacuda.empty_like(g)})
function methods.allreduce(comm, x, op, opts)
  op, opts = op_opts(op, opts)
  local out = type(opts) == "table" and rawget(opts, "out") or nil
  if nccl_direct(comm, true, x, out or x) and call(raw.allreduce, comm, x, op, out, opts) then
    return out or x
  end
  local s = stream_of(opts)
  if out ~= nil then
    local xs = staged(comm, x, true, false, s)
    local os, back = staged(comm, out, rawequal(out, x), true, s)
    through_mpi(s, raw.allreduce, comm, xs, op, os, opts)
    if back then back() end
    return out
  end
  local xs, back = staged(comm, x, true, true, s)
  through_mpi(s, raw.allreduce, comm, xs, op, nil, opts)
  if back then back() end
  return x
end

--- Copies `x` of the rank `root` into `x` on every rank.
-- @function Comm:broadcast
-- @tparam Array x the same dtype and shape on every rank
-- @tparam integer root the rank that sends, 1 to size
-- @tparam[opt] table opts `stream =` as for @{Comm:allreduce}
-- @treturn Array x
-- @raise `luacuda.dist.broadcast: ranks gave different roots (...)`;
-- `on rank <r>: root <n> is not a rank of this communicator (1 to <size>)`
-- @usage local luacuda = require "luacuda"
-- local comm = require("luacuda.dist").init()
-- local w = luacuda.zeros({4})
-- if comm.rank == 1 then w:fill(0.5) end
-- comm:broadcast(w, 1)
function methods.broadcast(comm, x, root, opts)
  if nccl_direct(comm, false, x) and call(raw.broadcast, comm, x, root, opts) then return x end
  local s = stream_of(opts)
  local xs, back = staged(comm, x, comm.rank == root, comm.rank ~= root, s)
  through_mpi(s, raw.broadcast, comm, xs, root, opts)
  if back then back() end
  return x
end

--- Reduces `x` over every rank into `x` on the rank `root`; the other
-- ranks' `x` are left as they were.
-- @function Comm:reduce
-- @tparam Array x the same dtype and shape on every rank
-- @tparam integer root the rank that receives the result
-- @tparam[opt="sum"] string op `"sum"`, `"prod"`, `"min"` or `"max"`
-- @tparam[opt] table opts `stream =` as for @{Comm:allreduce}
-- @treturn Array x
-- @raise as @{Comm:allreduce}, and for a root that is not a rank
-- @usage local luacuda = require "luacuda"
-- local comm = require("luacuda.dist").init()
-- local n = luacuda.full({1}, 10, "int64")
-- comm:reduce(n, 1, "prod")
function methods.reduce(comm, x, root, op, opts)
  op, opts = op_opts(op, opts)
  if nccl_direct(comm, true, x) and call(raw.reduce, comm, x, root, op, opts) then return x end
  local s = stream_of(opts)
  local xs, back = staged(comm, x, true, comm.rank == root, s)
  through_mpi(s, raw.reduce, comm, xs, root, op, opts)
  if back then back() end
  return x
end

--- Gathers every rank's `x` into `out` on every rank: rank 1's elements
-- first, then rank 2's, in C order.
-- @function Comm:allgather
-- @tparam Array x the same dtype and shape on every rank
-- @tparam Array out of x's dtype, with size times x's elements (any shape,
-- such as `{comm.size, ...}`)
-- @tparam[opt] table opts `stream =` as for @{Comm:allreduce}
-- @treturn Array out
-- @raise `luacuda.dist.allgather: on rank <r>: out has <n> elements, not
-- <size> (ranks) x <m> (the elements of x)`, on every rank
-- @usage local luacuda = require "luacuda"
-- local comm = require("luacuda.dist").init()
-- local all = luacuda.empty({comm.size, 2}, "int32")
-- comm:allgather(luacuda.full({2}, comm.rank, "int32"), all)
function methods.allgather(comm, x, out, opts)
  if nccl_direct(comm, false, x, out) and call(raw.allgather, comm, x, out, opts) then return out end
  local s = stream_of(opts)
  local xs = staged(comm, x, true, false, s)
  local os, back = staged(comm, out, false, true, s)
  through_mpi(s, raw.allgather, comm, xs, os, opts)
  if back then back() end
  return out
end

--- Reduces `x` over every rank and scatters the result: rank r's `out`
-- receives its r-th block (of `out`'s size) of the reduction.
-- @function Comm:reduce_scatter
-- @tparam Array x with size times out's elements, the same on every rank
-- @tparam Array out of x's dtype
-- @tparam[opt="sum"] string op `"sum"`, `"prod"`, `"min"` or `"max"`
-- @tparam[opt] table opts `stream =` as for @{Comm:allreduce}
-- @treturn Array out
-- @raise `luacuda.dist.reduce_scatter: on rank <r>: x has <n> elements, not
-- <size> (ranks) x <m> (the elements of out)`, on every rank
-- @usage local luacuda = require "luacuda"
-- local comm = require("luacuda.dist").init()
-- local mine = luacuda.empty({2})
-- comm:reduce_scatter(luacuda.ones({2 * comm.size}), mine)
function methods.reduce_scatter(comm, x, out, op, opts)
  op, opts = op_opts(op, opts)
  if nccl_direct(comm, true, x, out) and call(raw.reduce_scatter, comm, x, out, op, opts) then
    return out
  end
  local s = stream_of(opts)
  local xs = staged(comm, x, true, false, s)
  local os, back = staged(comm, out, false, true, s)
  through_mpi(s, raw.reduce_scatter, comm, xs, os, op, opts)
  if back then back() end
  return out
end

--- Sends `x` to the rank `peer`, which calls @{Comm:recv}. Returns once
-- the peer is in that recv and `x` may be reused: a send waits for its
-- recv, as `MPI_Ssend` does (ranks that each send to the next in a ring
-- wait for ever).
-- @function Comm:send
-- @tparam Array x
-- @tparam integer peer another rank
-- @tparam[opt] table opts `stream =` as for @{Comm:allreduce} (through
-- NCCL once a collective has used it on device arrays; until then, MPI)
-- @treturn Array x
-- @raise `luacuda.dist.send: rank <p> sends <n> elements, rank <r> receives
-- into <m>` (or dtypes, shapes; `rank <p> cuts MPI calls into pieces of
-- <n> elements, rank <r> into pieces of <m> (LUACUDA_DIST_CHUNK)`) on both
-- ranks; `ranks disagree: rank <p> is in send to rank <r> on communicator
-- <c>, rank <r> in send to rank <p> ...` on both when the peer is not in
-- its recv (the job aborted where other ranks wait in the peer's call);
-- `peer <p> is this rank`
-- @usage local luacuda = require "luacuda"
-- local comm = require("luacuda.dist").init()
-- if comm.size > 1 and comm.rank == 1 then comm:send(luacuda.arange(4), 2) end
function methods.send(comm, x, peer, opts)
  if nccl_direct(comm, "p2p", x) and call(raw.send, comm, x, peer, opts) then return x end
  local s = stream_of(opts)
  local xs = staged(comm, x, true, false, s)
  through_mpi(s, raw.send, comm, xs, peer, opts)
  return x
end

--- Receives into `x` what the rank `peer` sends with @{Comm:send}: the
-- same dtype and shape.
-- @function Comm:recv
-- @tparam Array x
-- @tparam integer peer another rank
-- @tparam[opt] table opts `stream =` as for @{Comm:send}
-- @treturn Array x
-- @raise as @{Comm:send}, on both ranks
-- @usage local luacuda = require "luacuda"
-- local comm = require("luacuda.dist").init()
-- if comm.size > 1 and comm.rank == 2 then comm:recv(luacuda.empty({4}), 1) end
function methods.recv(comm, x, peer, opts)
  if nccl_direct(comm, "p2p", x) and call(raw.recv, comm, x, peer, opts) then return x end
  local s = stream_of(opts)
  local xs, back = staged(comm, x, false, true, s)
  through_mpi(s, raw.recv, comm, xs, peer, opts)
  if back then back() end
  return x
end

return dist
