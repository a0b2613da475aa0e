-- luacuda.dist on MPI: each test launches `mpirun -np 4` (2 for the
-- example) on a script of spec/dist/ and reads what every rank printed.
-- Pending, with the reason, where mpirun or the MPI engine is missing.
local S = require "spec.support"

local BUILD = os.getenv("LUACUDA_BUILD") or "build"
local NP = 4
-- a device for each rank, on the simulator and on the fake driver
local DEVICES = "LUACUDA_SIM_DEVICES=4 FAKE_CUDA_DEVICES=4"

local function have_mpirun()
  return (S.sh("command -v mpirun"))
end

local why_not
if not have_mpirun() then
  why_not = "no mpirun here (Debian's openmpi-bin; make deps installs it)"
elseif not S.exists(BUILD .. "/luacuda/dist_mpi.so") then
  why_not = "luacuda.dist's engine was not built (no mpicc when luacuda was built: libopenmpi-dev)"
end

-- The ranks' command line. Under AddressSanitizer (make test-asan) the
-- ranks keep the preloaded runtime, which the instrumented module needs,
-- but without the leak check (OpenMPI's own allocations outlive
-- MPI_Finalize); mpirun itself runs without it.
local function rank_command()
  local preload = os.getenv("LD_PRELOAD")
  if preload and preload ~= "" then
    return ("env LD_PRELOAD=%s ASAN_OPTIONS=detect_leaks=0:intercept_tls_get_addr=0 lua5.4")
      :format(preload)
  end
  return "lua5.4"
end

-- Run script under mpirun with np ranks (its argument: a new directory):
-- whether it exited 0, its output (every rank's, stderr too), the exit
-- code, the seconds it took, and the files the ranks wrote in that
-- directory (rank1.txt, ...) one after the other. env: settings for the
-- ranks ("A=1 B=2"); ranks: mpirun's rank part instead of "-np N cmd
-- script dir", with "%s" for the directory; limit: the seconds after which
-- the job is stopped, as a hang (120 unless given).
local function mpirun(script, np, env, ranks, limit)
  local dir = S.tmpdir()
  local t0 = os.time()
  ranks = ranks and ranks:gsub("%%s", dir):gsub("lua5%.4", rank_command())
    or ("-np %d %s %s %s"):format(np or NP, rank_command(), script, dir)
  env = (env or ""):gsub("%%s", dir)
  local ok, out, code = S.sh(("env -u LD_PRELOAD OMPI_ALLOW_RUN_AS_ROOT=1 "
    .. "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 %s timeout %d "
    .. "mpirun --oversubscribe %s"):format(env or "", limit or 120, ranks))
  local seconds = os.difftime(os.time(), t0)
  local files = {}
  for r = 1, np or NP do
    local f = io.open(dir .. "/rank" .. r .. ".txt")
    if f then
      files[#files + 1] = f:read("a")
      f:close()
      os.remove(dir .. "/rank" .. r .. ".txt")
    end
  end
  local trace = io.open(dir .. "/trace.txt")
  if trace then
    files[#files + 1] = trace:read("a")
    trace:close()
  end
  assert(os.execute("rm -rf " .. dir))    -- the fake NCCL's exchanges too
  return ok, out, code, seconds, table.concat(files)
end

-- The lines of out that start with prefix, without it.
local function lines(out, prefix)
  local t = {}
  for l in out:gmatch("[^\n]+") do
    if l:sub(1, #prefix) == prefix then t[#t + 1] = l:sub(#prefix + 1) end
  end
  return t
end

-- How many lines of out are exactly line.
local function count_lines(out, line)
  local n = 0
  for l in out:gmatch("[^\n]+") do
    if l == line then n = n + 1 end
  end
  return n
end

-- That the job exited 0 and each of its np ranks made more than min
-- checks (its "rank R: N checks, F failed" line), none failed.
local function all_passed(ok, stdout, out, np, min)
  assert.is_true(ok, stdout .. out)
  local done = lines(out, "rank ")
  assert.equal(np, #done, stdout .. out)
  for _, l in ipairs(done) do
    local checks, failed = l:match("^%d+: (%d+) checks, (%d+) failed$")
    assert.truthy(checks, out)
    assert.is_true(tonumber(checks) > min, l)
    assert.equal("0", failed, out)
  end
  assert.same({}, lines(out, "FAIL "), out)
  -- the control channel drained at MPI_Finalize (agree.c)
  assert.is_nil((stdout .. out):find("left on the control channel", 1, true), stdout .. out)
end

describe("luacuda.dist without its engine", function()
  it("says it is not available, and init says why", function()
    -- a module directory with core.so alone, as a build without mpicc
    local dir = S.tmpdir("luacuda")
    local core = BUILD .. "/luacuda/core.so"
    if core:sub(1, 1) ~= "/" then core = os.getenv("PWD") .. "/" .. core end
    assert(os.execute(("ln -s %s %s/luacuda/core.so"):format(core, dir)))
    local ok, out = S.lua_run(('LUA_CPATH="%s/?.so;;"'):format(dir), [[
      local dist = require "luacuda.dist"
      print(dist.available)
      print(select(2, pcall(dist.init)))
    ]])
    os.remove(dir .. "/luacuda/core.so")
    os.remove(dir .. "/luacuda")
    os.remove(dir)
    assert.is_true(ok, out)
    local available, err = out:match("^(%w+)\n(.-)\n")
    assert.equal("false", available, out)
    assert.truthy(err:find("luacuda.dist.init: luacuda was built without MPI (no mpicc; install "
      .. "Debian's libopenmpi-dev and rebuild): module 'luacuda.dist_mpi' not found", 1, true), out)
  end)
end)

describe("luacuda.dist on MPI", function()
  if why_not then
    it("runs collectives under mpirun", function() pending(why_not) end)
    return
  end

  it("computes every collective, op and dtype as Lua does on every rank, "
     .. "on every memory kind, views and strided arrays", function()
    local ok, stdout, _, _, out = mpirun("spec/dist/collectives.lua", NP, DEVICES)
    all_passed(ok, stdout, out, NP, 200)
    assert.same({ "1", "2", "3", "4" }, lines(out, "device "), out)
  end)

  describe("raises the same error on every rank", function()
    local out
    setup(function()
      local ok, stdout
      ok, stdout, _, _, out = mpirun("spec/dist/errors.lua")
      assert.is_true(ok, stdout .. out)
    end)

    -- every rank's message of one case, without the position
    local function messages(name)
      local t = {}
      for _, l in ipairs(lines(out, "ERR " .. name .. "\t")) do t[#t + 1] = l:gsub("^[^:]+:%d+: ", "") end
      return t
    end

    local function all_same(name, want)
      local m = messages(name)
      assert.equal(NP, #m, out)
      for _, msg in ipairs(m) do assert.equal(want, msg) end
      assert.equal(NP, count_lines(out, "KEPT " .. name), "arrays changed by case " .. name)
    end

    it("when the dtypes differ", function()
      all_same("dtype", "luacuda.dist.allreduce: ranks gave arrays of different dtypes "
        .. "(float32 on some, float64 on others)")
    end)
    it("when the sizes differ", function()
      all_same("size", "luacuda.dist.allreduce: ranks gave arrays of different sizes "
        .. "(4 elements on some, 5 on others)")
    end)
    it("when the shapes differ with the same size", function()
      all_same("shape", "luacuda.dist.broadcast: ranks gave arrays of different shapes (of 6 elements each)")
    end)
    it("when the ops differ", function()
      all_same("op", "luacuda.dist.allreduce: ranks gave different ops (min on some, max on others)")
    end)
    it("when the roots differ", function()
      all_same("root", "luacuda.dist.broadcast: ranks gave different roots (1 on some, 2 on others)")
    end)
    it("when ranks call different collectives, each naming its own", function()
      local m = messages("function")
      assert.equal(NP, #m, out)
      local cause = "ranks called different functions (allreduce on some, broadcast on others)"
      local names = {}
      for _, msg in ipairs(m) do
        local fn, rest = msg:match("^luacuda%.dist%.(%w+): (.*)$")
        assert.equal(cause, rest)
        names[fn] = (names[fn] or 0) + 1
      end
      assert.same({ allreduce = NP - 1, broadcast = 1 }, names)
    end)
    it("when one rank gives a bad op, naming it", function()
      all_same("badop", 'luacuda.dist.allreduce: on rank 3: op must be "sum", "prod", "min" or "max", got mean')
    end)
    it("when the root is not a rank", function()
      all_same("rootrange", "luacuda.dist.reduce: on rank 1: root 5 is not a rank of this communicator (1 to 4)")
    end)
    it("when one rank gives no array", function()
      all_same("notarray", "luacuda.dist.allreduce: on rank 2: x must be an open array, got table")
    end)
    it("when one rank's allgather output has the wrong size or dtype", function()
      all_same("allgather", "luacuda.dist.allgather: on rank 2: out has 20 elements, not 4 (ranks) x 4 "
        .. "(the elements of x)")
      all_same("allgather_dtype", "luacuda.dist.allgather: on rank 4: out is float32, the input float64 "
        .. "(no implicit casting)")
    end)
    it("when reduce_scatter's sizes do not fit", function()
      all_same("reduce_scatter", "luacuda.dist.reduce_scatter: on rank 1: x has 4 elements, not 4 (ranks) x 3 "
        .. "(the elements of out)")
    end)
    it("for a reduction of records, an output overlapping the input and a bad color", function()
      all_same("record", "luacuda.dist.allreduce: on rank 1: a record array cannot be reduced "
        .. "(allreduce takes numbers and booleans)")
      all_same("overlap", "luacuda.dist.allreduce: on rank 1: out overlaps x (give the same array for in place)")
      all_same("split", "luacuda.dist.split: on rank 1: color must be a whole number 0 or more, or nil, "
        .. "got a negative number")
    end)
    it("when the root is not a number", function()
      all_same("rootkind", "luacuda.dist.broadcast: on rank 1: root must be a rank (an integer 1 to 4), got string")
    end)
    it("when allreduce's out has another size", function()
      all_same("outsize", "luacuda.dist.allreduce: on rank 2: out has 5 elements, x 4")
    end)
    it("for an option allreduce does not take", function()
      all_same("streamopt", "luacuda.dist.allreduce: ranks gave arrays of different sizes (4 elements "
        .. "on some, 5 on others)")
      all_same("badopt", "luacuda.dist.allreduce: on rank 1: unknown option number (it takes out= and stream=)")
      all_same("badstream", "luacuda.dist.allreduce: on rank 3: stream must be an open luacuda stream, got number")
      all_same("closedstream", "luacuda.dist.broadcast: on rank 1: stream must be an open luacuda stream, "
        .. "got a closed one")
      all_same("notable", "luacuda.dist.allreduce: on rank 2: options must be a table, got number")
    end)
    it("when allgather's out overlaps x", function()
      all_same("blockoverlap", "luacuda.dist.allgather: on rank 1: out overlaps x")
    end)
    it("when one rank's split key is not an integer", function()
      all_same("splitkey", "luacuda.dist.split: on rank 4: key must be an integer, got string")
    end)
    it("when the ranks' records have different sizes", function()
      all_same("recsize", "luacuda.dist.broadcast: ranks gave records of different sizes "
        .. "(4 bytes on some, 8 on others)")
    end)
    it("when a method is called without its communicator, on the rank alone", function()
      all_same("nocomm", "luacuda.dist.barrier: expected a communicator (call it as comm:barrier(...)), "
        .. "got nil")
    end)

    it("on both ranks of a send and recv that disagree, and for a send to itself", function()
      local want = {
        sr_count = "rank %d sends 3 elements, rank %d receives into 4",
        sr_dtype = "rank %d sends float32, rank %d receives into float64",
        sr_shape = "rank %d sends an array of another shape than rank %d receives into (6 elements each)",
        sr_sendbad = "on rank %d (sending): x must be an open array, got table",
        sr_recvbad = "on rank %d (receiving): x must be an open array, got string",
      }
      for name, fmt in pairs(want) do
        local m = messages(name)
        table.sort(m)
        local expect = {}
        for first = 1, NP, 2 do
          local cause = name == "sr_sendbad" and fmt:format(first)
                     or name == "sr_recvbad" and fmt:format(first + 1)
                     or fmt:format(first, first + 1)
          expect[#expect + 1] = "luacuda.dist.recv: " .. cause
          expect[#expect + 1] = "luacuda.dist.send: " .. cause
        end
        table.sort(expect)
        assert.same(expect, m, name)
        assert.equal(NP, count_lines(out, "KEPT " .. name), "arrays changed by case " .. name)
      end
      local self = messages("self")
      table.sort(self)
      for r = 1, NP do assert.equal(("luacuda.dist.send: peer %d is this rank"):format(r), self[r]) end
    end)
    it("and the communicator works afterwards", function()
      local done = lines(out, "rank ")
      assert.equal(NP, #done, out)
      for _, l in ipairs(done) do assert.truthy(l:match("^%d: done ok$"), out) end
    end)
  end)

  it("aborts the job with the message of a rank that dies, instead of hanging", function()
    local ok, out, code, seconds = mpirun("spec/dist/abort.lua")
    assert.is_false(ok, out)
    assert.not_equal(124, code, "timed out: the job hung\n" .. out)
    assert.truthy(out:find("rank 3 gives up on purpose", 1, true), out)
    assert.is_nil(out:find("should not get here", 1, true), out)
    assert.is_true(seconds < 60, out)
  end)

  -- Ranks that disagree about which call they are in: each case must end
  -- within the limit (a hang is a failure, not a stalled run), with the
  -- same error on the ranks of both calls, or an abort with the message.
  describe("when ranks are in different calls", function()
    local LIMIT = 60
    local function timed_out(code, out)
      assert.not_equal(124, code, "timed out: the job hung\n" .. out)
    end

    it("raises the same error on both ranks of two-rank calls, and the communicators work "
       .. "afterwards; stages record arrays whose fields are named as array methods; aborts the job "
       .. "when a rank ends its script while another waits for it", function()
      local ok, stdout, code, _, out = mpirun(nil, 2, nil,
        "-np 2 lua5.4 spec/dist/disagree.lua %s raise_ended", LIMIT)
      timed_out(code, stdout .. out)
      local function both(name, want1, want2)
        local m = lines(out, "ERR " .. name .. "\t")
        assert.same({ want1, want2 }, m, name)
      end
      assert.same({ "1 2", "1 2" }, lines(out, "IDS "), out)
      local function cause(fn, text) return "luacuda.dist." .. fn .. ": ranks disagree: " .. text end
      local t = "rank 1 is in allreduce on communicator 1 (2 ranks), rank 2 in send to rank 1 on "
        .. "communicator 1"
      both("allreduce_send", cause("allreduce", t), cause("send", t))
      t = "rank 1 is in recv from rank 2 on communicator 1, rank 2 in recv from rank 1 on communicator 1"
      both("recv_recv", cause("recv", t), cause("recv", t))
      t = "rank 1 is in send to rank 2 on communicator 1, rank 2 in send to rank 1 on communicator 1"
      both("send_send", cause("send", t), cause("send", t))
      t = "rank 1 is in allreduce on communicator 2 (2 ranks), rank 2 in allreduce on communicator 1 "
        .. "(2 ranks)"
      both("split_world", cause("allreduce", t), cause("allreduce", t))
      t = "rank 1 is in send to rank 2 on communicator 1, rank 2 in recv from rank 1 on communicator 2"
      both("send_on_other_comm", cause("send", t), cause("recv", t))
      t = "rank 1 is in broadcast on communicator 2 (2 ranks), rank 2 in recv from rank 1 on "
        .. "communicator 1"
      both("broadcast_recv", cause("broadcast", t), cause("recv", t))
      for _, name in ipairs { "records_allgather", "records_broadcast", "records_broadcast_device" } do
        both(name, "(no error)", "(no error)")
      end
      -- each rank's checks of the records' values, and the communicators
      -- working after the errors
      assert.same({ "ok", "ok" }, lines(out, "DONE "), out)
      assert.same({ "1: 3 checks, 0 failed", "2: 3 checks, 0 failed" }, lines(out, "rank "), out)
      -- then rank 2's end, while rank 1 waits for it
      assert.is_false(ok, stdout)
      assert.truthy(stdout:find("luacuda.dist.allreduce: rank 2 ended its script while rank 1 was in "
        .. "allreduce on communicator 1 (2 ranks); the job is aborted", 1, true), stdout)
      assert.is_nil(stdout:find("should not get here", 1, true), stdout)
    end)

    it("refuses LUACUDA_DIST_CHUNK set on one rank alone, on every rank of the call; aborts the "
       .. "job, naming both calls, when the ranks of a call cannot all be told", function()
      local ok, stdout, code, _, out = mpirun(nil, 3, nil, "-np 2 lua5.4 spec/dist/disagree.lua %s "
        .. "chunk_bystander : -np 1 env LUACUDA_DIST_CHUNK=3 lua5.4 spec/dist/disagree.lua %s "
        .. "chunk_bystander", LIMIT)
      timed_out(code, stdout .. out)
      local chunks = "luacuda.dist.allgather: ranks cut MPI calls into pieces of different sizes "
        .. "(LUACUDA_DIST_CHUNK: 3 elements on some, 2147483647 on others)"
      assert.same({ chunks, chunks, chunks }, lines(out, "ERR chunk\t"), out)
      local pair = "rank 1 cuts MPI calls into pieces of 2147483647 elements, rank 3 into pieces of 3 "
        .. "(LUACUDA_DIST_CHUNK)"
      assert.same({ "luacuda.dist.send: " .. pair, "(no error)", "luacuda.dist.recv: " .. pair },
        lines(out, "ERR chunk_pair\t"), out)
      assert.is_false(ok, stdout)
      assert.truthy(stdout:find("luacuda.dist.allreduce: ranks disagree: rank 1 is in allreduce on "
        .. "communicator 1 (3 ranks), rank 3 in send to rank 1 on communicator 1; the job is aborted "
        .. "(the other ranks of these calls cannot all be told)", 1, true), stdout)
      assert.is_nil(stdout:find("should not get here", 1, true), stdout)
    end)
  end)

  it("gives device arrays to MPI as they are where MPI takes device memory (LUACUDA_MPI_CUDA=1), "
     .. "with the same results", function()
    -- the simulator's and the fake driver's device memory is host memory,
    -- which any MPI takes: this checks what luacuda does around the call
    -- (no copies, and the wait for work queued before, which the fake
    -- driver showed missing)
    local ok, stdout, _, _, out = mpirun("spec/dist/collectives.lua", 2, "LUACUDA_MPI_CUDA=1")
    all_passed(ok, stdout, out, 2, 200)
  end)

  it("cuts MPI calls into pieces of LUACUDA_DIST_CHUNK elements, with the same results", function()
    -- (the calls queued on streams run the same code, job_run)
    local ok, stdout, _, _, out = mpirun("spec/dist/collectives.lua", NP, "LUACUDA_DIST_CHUNK=3")
    all_passed(ok, stdout, out, NP, 200)
  end)

  it("queues collectives on streams: every collective and memory kind, views, several streams, "
     .. "in the order of the calls, arrays kept while queued, the call returning when queued", function()
    local ok, stdout, _, _, out = mpirun("spec/dist/streams.lua", NP, DEVICES)
    all_passed(ok, stdout, out, NP, 50)
    assert.same({ "1", "2", "3", "4" }, lines(out, "device "), out)
  end)

  it("joins the MPI a host program started, and refuses stream= where MPI gives less than "
     .. "MPI_THREAD_MULTIPLE (spec/unit/dist_host_test.c)", function()
    local bin = BUILD .. "/dist_host_test"
    if not S.exists(bin) then
      pending(bin .. " was not built (no mpicc)")
      return
    end
    local ok, out = mpirun(nil, 2, nil, "-np 2 " .. rank_command():gsub("lua5%.4$", bin))
    assert.is_true(ok, out)
    assert.equal(2, count_lines(out, "ok joins_the_hosts_mpi"), out)
    assert.equal(2, count_lines(out, "ok stream_needs_thread_multiple"), out)
  end)

  it("runs examples/dist_linear.lua on 2 ranks", function()
    local ok, out = mpirun("examples/dist_linear.lua", 2)
    assert.is_true(ok, out)
    assert.equal(2, select(2, out:gsub("check: ok", "")), out)
    assert.is_nil(out:find("FAILED", 1, true), out)
  end)
end)

-- The NCCL engine against the fake NCCL on the fake driver (make check
-- builds both: spec/fake/fake_nccl.c, spec/fake/fake_cuda.c), 2 ranks (1 in one job).
describe("luacuda.dist on NCCL", function()
  local abs = BUILD:sub(1, 1) == "/" and BUILD or os.getenv("PWD") .. "/" .. BUILD
  local fake_cuda, fake_nccl = abs .. "/fake/libcuda.so.1", abs .. "/fake/libnccl.so.2"
  local why
  if why_not then why = why_not
  elseif not S.exists(fake_cuda) then why = "no fake CUDA driver (no cuda.h in the toolkit)"
  elseif not S.exists(fake_nccl) then why = "no fake NCCL (no nccl.h in the toolkit)"
  end
  if why then
    it("runs collectives through NCCL", function() pending(why) end)
    return
  end
  -- the ranks' settings; TMPDIR: where the fake NCCL's ranks exchange data.
  -- The ranks load the fatbinary a GPU loads (no LUACUDA_PTX): its kernels
  -- are compiled once into the disk cache, which every job's ranks share.
  local function env(nccl, extra)
    return ("LUACUDA_BACKEND=cuda LUACUDA_LIBCUDA=%s LUACUDA_LIBNCCL=%s "
      .. "FAKE_CUDA_MEMORY=1G TMPDIR=%%s %s"):format(fake_cuda, nccl, extra or "")
  end

  -- what every rank wrote after prefix, and whether every rank checked all
  local function results(ok, stdout, out) all_passed(ok, stdout, out, 2, 250) end

  it("chooses NCCL where it loads, and computes every collective on device and managed arrays, "
     .. "on the default stream and on a stream, through the NCCL calls expected", function()
    local ok, stdout, _, _, out = mpirun("spec/dist/nccl.lua", 2,
      env(fake_nccl, "FAKE_NCCL_TRACE=%s/trace.txt FAKE_CUDA_DEVICES=2"))
    results(ok, stdout, out)
    assert.same({ "nccl", "nccl" }, lines(out, "engine "), out)
    -- the trace: one id, a communicator per rank on its device, the
    -- calls of each collective with NCCL's types, the stream's
    local function has(line) return count_lines(out, line) end
    assert.equal(1, has("ncclGetUniqueId"), out)
    assert.equal(1, has("ncclCommInitRank nranks=2 rank=0"), out)
    assert.equal(1, has("ncclCommInitRank nranks=2 rank=1"), out)
    for r = 1, 2 do
      local me = ("rank=%d/2 "):format(r)
      assert.equal(2, has("ncclAllReduce " .. me .. "count=5 bfloat16 max inplace @legacy"), out)  -- device, managed
      assert.equal(1, has("ncclAllReduce " .. me .. "count=8 float32 sum inplace @stream"), out)
      assert.equal(1, has("ncclBroadcast " .. me .. "count=6 uint8 root=1 inplace @legacy"), out)  -- int16 as bytes
      assert.equal(1, has("ncclReduce " .. me .. "count=4 int64 sum root=0 inplace @legacy"), out)
      assert.equal(1, has("ncclAllGather " .. me .. "sendcount=3 float64 @legacy"), out)
      assert.equal(1, has("ncclAllGather " .. me .. "sendcount=2 int32 @stream"), out)
      assert.equal(1, has("ncclReduceScatter " .. me .. "recvcount=2 int32 max @legacy"), out)
      assert.equal(1, has("ncclSend " .. me .. "count=4 float32 peer=" .. (2 - r) .. " @legacy"), out)
      assert.equal(1, has("ncclRecv " .. me .. "count=4 float32 peer=" .. (2 - r) .. " @legacy"), out)
      assert.equal(1, has("ncclCommDestroy rank=" .. r .. "/2"), out)
    end
    -- int16 reductions go through MPI (NCCL has no such type)
    assert.is_nil(out:find("int16", 1, true), out)
  end)

  it("runs a job of one rank on NCCL, whose collectives give x back", function()
    local ok, stdout, _, _, out = mpirun("spec/dist/nccl_one.lua", 1,
      env(fake_nccl, "FAKE_NCCL_TRACE=%s/trace.txt"))
    all_passed(ok, stdout, out, 1, 10)
    assert.same({ "nccl" }, lines(out, "engine "), out)
    local function has(line) return count_lines(out, line) end
    assert.equal(1, has("ncclCommInitRank nranks=1 rank=0"), out)
    local me = "rank=1/1 "
    for _, op in ipairs { "sum", "prod", "min", "max" } do
      assert.equal(1, has("ncclAllReduce " .. me .. "count=3 float32 " .. op .. " inplace @legacy"), out)
    end
    assert.equal(1, has("ncclAllReduce " .. me .. "count=2 int64 sum @legacy"), out)    -- into out
    assert.equal(1, has("ncclBroadcast " .. me .. "count=3 int32 root=0 inplace @legacy"), out)
    assert.equal(1, has("ncclReduce " .. me .. "count=2 float64 max root=0 inplace @legacy"), out)
    assert.equal(1, has("ncclAllGather " .. me .. "sendcount=3 float32 @legacy"), out)
    assert.equal(1, has("ncclReduceScatter " .. me .. "recvcount=2 int32 sum @legacy"), out)
    assert.equal(1, has("ncclAllReduce " .. me .. "count=4 float32 sum inplace @stream"), out)
    assert.equal(1, has("ncclCommDestroy rank=1/1"), out)
  end)

  it("queues collectives on streams through NCCL, and through MPI where NCCL is off", function()
    for _, case in ipairs { { fake_nccl, "nccl" }, { "0", "mpi" } } do
      local ok, stdout, _, _, out = mpirun("spec/dist/streams.lua", 2, env(case[1]))
      all_passed(ok, stdout, out, 2, 50)
      assert.same({ case[2], case[2] }, lines(out, "engine "), out)
    end
  end)

  it("orders collectives without stream= after the work queued on non-blocking streams, "
     .. "on NCCL as on MPI", function()
    -- the fake driver slowed down, so that a collective that does not wait
    -- for the fills reads what an earlier one left
    for _, case in ipairs { { fake_nccl, "nccl" }, { "0", "mpi" } } do
      local ok, stdout, _, _, out = mpirun("spec/dist/nccl_order.lua", 2,
        env(case[1], "FAKE_CUDA_DELAY_US=20000"))
      all_passed(ok, stdout, out, 2, 2)
      assert.same({ case[2], case[2] }, lines(out, "engine "), out)
    end
  end)

  it("falls back to MPI where libnccl does not load, with the same results", function()
    local ok, stdout, _, _, out = mpirun("spec/dist/nccl.lua", 2, env("/nonexistent/libnccl.so.2"))
    results(ok, stdout, out)
    assert.same({ "mpi", "mpi" }, lines(out, "engine "), out)
  end)

  it("gives device arrays to an MPI that takes device memory as they are (LUACUDA_MPI_CUDA=1), "
     .. "else copies them to the host", function()
    local copies = {}
    for _, aware in ipairs { "0", "1" } do
      local ok, stdout, _, _, out = mpirun("spec/dist/cuda_aware.lua", 2,
        env("0", "LUACUDA_MPI_CUDA=" .. aware .. " FAKE_CUDA_TRACE=%s/trace.txt"))
      assert.is_true(ok, stdout .. out)
      local want = aware == "1" and "true" or "false"
      assert.same({ want, want }, lines(out, "cuda_aware "), out)
      assert.same({}, lines(out, "FAIL "), out)
      copies[aware] = count_lines(out, "cuMemcpyAsync")
    end
    -- each rank: the check's copy to the host; staged, a copy each way too
    assert.same({ ["0"] = 6, ["1"] = 2 }, copies)
  end)

  it("aborts the job when a rank cannot queue an MPI call on a stream that the others queued",
     function()
    local ok, out, code = mpirun(nil, 2, env("0"), "-np 1 lua5.4 spec/dist/queue_fail.lua %s : "
      .. "-np 1 env FAKE_CUDA_FAIL=cuLaunchHostFunc:1 lua5.4 spec/dist/queue_fail.lua %s")
    assert.is_false(ok, out)
    assert.not_equal(124, code, "timed out: the job hung\n" .. out)
    assert.truthy(out:find("luacuda.dist.allreduce: on rank 2: luacuda.queuehost: cuLaunchHostFunc: "
      .. "CUDA_ERROR_UNKNOWN (the job is aborted: the call queued on rank 1 cannot complete)", 1, true), out)
  end)

  it("raises an NCCL failure of one rank on every rank", function()
    local ok, stdout, _, _, out = mpirun(nil, nil, env(fake_nccl, "FAKE_NCCL_TIMEOUT_S=2"),
      "-np 1 lua5.4 spec/dist/nccl_fail.lua %s call : -np 1 env FAKE_NCCL_FAIL=ncclAllReduce:2 "
      .. "lua5.4 spec/dist/nccl_fail.lua %s call")
    assert.is_true(ok, stdout .. out)
    assert.same({ "luacuda.dist.allreduce: on rank 2: NCCL call ncclAllReduce failed: internal error - "
      .. "please report this issue to the NCCL developers (3)",
      "luacuda.dist.allreduce: on rank 2: NCCL call ncclAllReduce failed: internal error - "
      .. "please report this issue to the NCCL developers (3)" }, lines(out, "ERR call\t"), out)
    assert.equal(2, count_lines(out, "KEPT"), out)
  end)

  it("raises a failure of ncclCommInitRank (at the first collective) on every rank", function()
    local ok, stdout, _, _, out = mpirun("spec/dist/nccl_fail.lua", 2,
      env(fake_nccl, "FAKE_NCCL_FAIL=ncclCommInitRank:1"), "-np 2 lua5.4 spec/dist/nccl_fail.lua %s init")
    assert.is_true(ok, stdout .. out)
    local m = lines(out, "ERR init\t")
    assert.equal(2, #m, out)
    for _, msg in ipairs(m) do
      assert.equal("luacuda.dist.allreduce: on rank 1: NCCL call ncclCommInitRank failed: internal error - "
        .. "please report this issue to the NCCL developers (3)", msg)
    end
  end)

  -- issue 32, defect 4: a communicator's buffers take device memory (the
  -- fake NCCL charges them), which luacuda's pool may hold, idle
  it("gives the pool's idle memory back before NCCL's buffers are made", function()
    local ok, stdout, _, _, out = mpirun("spec/dist/nccl_memory.lua", 2,
      env(fake_nccl, "FAKE_CUDA_MEMORY=64M"))
    assert.is_true(ok, stdout .. out)
    for r = 1, 2 do      -- ranks 1 and 2: 1 + 2 everywhere
      assert.same({ "3.0\tok\tfree before 0" }, lines(out, ("R%d allreduce\t"):format(r)), out)
    end
  end)

  -- spec/dist/nccl_cudafail.lua: `calls` allreduces on 2 ranks (mode
  -- "pair": sends from rank 1 to rank 2 after the first), rank 2 with the
  -- settings rank2 (a failure injected), both with both. Whether the job
  -- exited 0, the seconds it took, every rank's calls (got[rank][i] =
  -- {value = x[1] after it, msg = "ok" or the message}), how many ranks got
  -- to their end, and the output with the fake NCCL's trace.
  local function cudafail(calls, rank2, both, mode)
    local script = ("spec/dist/nccl_cudafail.lua %%s %d %s"):format(calls, mode or "")
    local ok, stdout, _, seconds, out = mpirun(nil, 2,
      env(fake_nccl, "FAKE_NCCL_TRACE=%s/trace.txt " .. (both or "")),
      ("-np 1 lua5.4 %s : -np 1 env %s lua5.4 %s"):format(script, rank2, script))
    local got, done = { {}, {} }, 0
    for r, i, value, msg in out:gmatch("R(%d) call (%d+)\t([^\t\n]*)\t([^\n]*)") do
      got[tonumber(r)][tonumber(i)] = { value = tonumber(value), msg = msg }
    end
    for _ in out:gmatch("R%d done") do done = done + 1 end
    return ok, seconds, got, done, stdout .. out
  end

  -- FAKE_CUDA_FAIL for the engine's own driver calls alone (dist_mpi.so's;
  -- nccl_cudafail.lua's header numbers them), with code
  local function engine_fails(call, n, code)
    return ("FAKE_CUDA_FAIL=%s:%d:%d FAKE_CUDA_FAIL_FROM=dist_mpi"):format(call, n, code)
  end

  it("raises a driver failure of one rank while NCCL starts on every rank, naming the rank and "
     .. "the call, and leaves the arrays as they were", function()
    local cases = {
      { "cuDeviceGet", 1, 101, "cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE" },
      { "cuDevicePrimaryCtxRetain", 1, 2, "cuDevicePrimaryCtxRetain failed: CUDA_ERROR_OUT_OF_MEMORY" },
      { "cuCtxPushCurrent_v2", 1, 201, "cuCtxPushCurrent failed: CUDA_ERROR_INVALID_CONTEXT" },
      { "cuCtxPopCurrent_v2", 1, 201, "cuCtxPopCurrent failed: CUDA_ERROR_INVALID_CONTEXT" },
    }
    for _, c in ipairs(cases) do
      local ok, _, got, done, out = cudafail(1, engine_fails(c[1], c[2], c[3]))
      assert.is_true(ok, out)
      assert.equal(2, done, out)
      for r = 1, 2 do
        assert.equal("luacuda.dist.allreduce: on rank 2: CUDA call " .. c[4], got[r][1].msg, out)
        assert.equal(r, got[r][1].value, out)     -- x kept: each rank's number
      end
      if c[1] == "cuCtxPopCurrent_v2" then      -- made, then given up: aborted, not leaked
        assert.equal(1, count_lines(out, "ncclCommAbort rank=2/2"), out)
      end
    end
  end)

  it("raises a driver failure around a queued call on every rank, naming the rank and the call",
     function()
    -- the second allreduce's cuCtxPushCurrent: nothing queued on rank 2,
    -- x kept on both
    local ok, _, got, done, out = cudafail(2, engine_fails("cuCtxPushCurrent_v2", 4, 201),
      "FAKE_NCCL_TIMEOUT_S=2")
    assert.is_true(ok, out)
    assert.equal(2, done, out)
    for r = 1, 2 do
      assert.same({ value = 3, msg = "ok" }, got[r][1], out)
      assert.same({ value = 3, msg = "luacuda.dist.allreduce: on rank 2: CUDA call cuCtxPushCurrent "
        .. "failed: CUDA_ERROR_INVALID_CONTEXT" }, got[r][2], out)
    end
    -- its cuCtxPopCurrent: queued on both ranks, and the failure raised
    -- all the same; the abort that follows races with the allreduce, which
    -- NCCL may have done by then (6) or not (3)
    ok, _, got, done, out = cudafail(2, engine_fails("cuCtxPopCurrent_v2", 4, 201))
    assert.is_true(ok, out)
    assert.equal(2, done, out)
    for r = 1, 2 do
      assert.equal("luacuda.dist.allreduce: on rank 2: CUDA call cuCtxPopCurrent failed: "
        .. "CUDA_ERROR_INVALID_CONTEXT", got[r][2].msg, out)
      assert.truthy(got[r][2].value == 3 or got[r][2].value == 6, out)
    end
  end)

  it("raises a driver failure around a queued send or recv, or in its wait, on both ranks", function()
    -- the recv's cuCtxPushCurrent on rank 2 (its 4th): the send was queued
    local ok, _, got, done, out = cudafail(2, engine_fails("cuCtxPushCurrent_v2", 4, 201), nil, "pair")
    assert.is_true(ok, out)
    assert.equal(2, done, out)
    local cause = "on rank 2: CUDA call cuCtxPushCurrent failed: CUDA_ERROR_INVALID_CONTEXT"
    assert.same({ value = 3, msg = "luacuda.dist.send: " .. cause }, got[1][2], out)
    assert.same({ value = 3, msg = "luacuda.dist.recv: " .. cause }, got[2][2], out)
    -- the recv's wait (its 5th push): both ranks, too
    ok, _, got, done, out = cudafail(2, engine_fails("cuCtxPushCurrent_v2", 5, 201), nil, "pair")
    assert.is_true(ok, out)
    assert.equal(2, done, out)
    assert.same({ value = 3, msg = "luacuda.dist.send: " .. cause }, got[1][2], out)
    assert.same({ value = 3, msg = "luacuda.dist.recv: " .. cause }, got[2][2], out)
  end)

  it("raises a failure of a wait on every rank, naming the rank, and makes a new communicator for "
     .. "the next call", function()
    -- the first allreduce's wait: its push (3), the stream's query, its pop (3)
    local cases = {
      { engine_fails("cuCtxPushCurrent_v2", 3, 201), "CUDA call cuCtxPushCurrent failed: CUDA_ERROR_INVALID_CONTEXT" },
      { engine_fails("cuStreamQuery", 1, 719), "CUDA call cuStreamQuery failed: CUDA_ERROR_LAUNCH_FAILED" },
      { engine_fails("cuCtxPopCurrent_v2", 3, 201), "CUDA call cuCtxPopCurrent failed: CUDA_ERROR_INVALID_CONTEXT" },
      { "FAKE_NCCL_FAIL=ncclCommGetAsyncError:1", "NCCL call ncclCommGetAsyncError failed: internal error - "
        .. "please report this issue to the NCCL developers (3)" },
    }
    for _, c in ipairs(cases) do
      local ok, _, got, done, out = cudafail(2, c[1])
      assert.is_true(ok, out)
      assert.equal(2, done, out)
      for r = 1, 2 do
        assert.same({ value = 3, msg = "luacuda.dist.allreduce: on rank 2: " .. c[2] }, got[r][1], out)
        assert.same({ value = 6, msg = "ok" }, got[r][2], out)
        -- the first communicator aborted, the second made for call 2
        assert.equal(1, count_lines(out, ("ncclCommAbort rank=%d/2"):format(r)), out)
        assert.equal(2, count_lines(out, ("ncclCommInitRank nranks=2 rank=%d"):format(r - 1)), out)
        assert.equal(1, count_lines(out, ("ncclCommDestroy rank=%d/2"):format(r)), out)
      end
    end
  end)

  it("aborts NCCL's communicator after an asynchronous error instead of waiting forever, raises "
     .. "it on every rank, and makes a new communicator for the next call", function()
    -- rank 2's second allreduce fails asynchronously (ncclSystemError) and
    -- never completes until aborted; rank 1's then loses its peer
    -- (ncclRemoteError). The fake NCCL's own timeout is far away.
    local ok, seconds, got, done, out = cudafail(3, "FAKE_NCCL_ASYNC=ncclAllReduce:2:2",
      "FAKE_NCCL_TIMEOUT_S=60")
    assert.is_true(ok, out)
    assert.equal(2, done, out)
    assert.is_true(seconds < 30, "waited for the fake NCCL's timeout: " .. seconds .. " s\n" .. out)
    local remote = "an asynchronous error (remote process exited or there was a network error, 6)"
    for r = 1, 2 do
      assert.same({ value = 3, msg = "ok" }, got[r][1], out)
      -- rank 1's message (the first rank that failed), on both
      assert.same({ value = 3, msg = "luacuda.dist.allreduce: on rank 1: NCCL's communicator was "
        .. "aborted after " .. remote }, got[r][2], out)
      assert.same({ value = 6, msg = "ok" }, got[r][3], out)
      assert.equal(1, count_lines(out, ("ncclCommAbort rank=%d/2"):format(r)), out)
      assert.equal(1, count_lines(out, ("ncclCommDestroy rank=%d/2"):format(r)), out)
    end
  end)

  it("runs on MPI where LUACUDA_LIBNCCL names a library without NCCL's functions, or one rank "
     .. "has NCCL off", function()
    local ok, stdout, _, _, out = mpirun("spec/dist/nccl.lua", 2, env(fake_cuda))
    results(ok, stdout, out)
    assert.same({ "mpi", "mpi" }, lines(out, "engine "), out)
    ok, stdout, _, _, out = mpirun(nil, 2, env(fake_nccl),
      "-np 1 lua5.4 spec/dist/nccl.lua %s : -np 1 env LUACUDA_LIBNCCL=0 lua5.4 spec/dist/nccl.lua %s")
    results(ok, stdout, out)
    assert.same({ "mpi", "mpi" }, lines(out, "engine "), out)
  end)
end)
