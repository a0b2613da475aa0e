-- Writes docs/errors.md: every error format in src/ and lua/luacuda/ (read
-- by spec/catalogue.lua), grouped by area, each with the functions seen
-- raising it and one spec test that triggers it. The tests are found by
-- running the specs with tools/errors_harvest.lua, which logs every luacuda
-- error a test catches. `make errors-catalogue` runs both;
-- spec/errors_catalogue_spec.lua fails when the file is out of date.
--   lua5.4 tools/errors_catalogue.lua ERRLOG > docs/errors.md
package.path = "spec/?.lua;" .. package.path
local C = require "catalogue"

local errlog = assert(arg[1], "usage: errors_catalogue.lua ERRLOG")

-- Areas, in the order of the catalogue: title and the files they cover.
local AREAS = {
  { "Arrays: arguments every function checks", { "src/binding/args.c", "src/binding/gate.c", "src/binding/array.c", "src/binding/buffer.c" } },
  { "Element types (dtype) and values", { "src/binding/element.c" } },
  { "Creating arrays: to_device, array, full, arange, ...", { "src/binding/create.c", "src/binding/join.c", "src/binding/convert.c" } },
  { "Copies, fill and assignment", { "src/binding/copy.c", "src/backend/host_copy.c" } },
  { "Indexing and item", { "src/binding/index.c" } },
  { "Iteration: pairs(a), a:ipairs()", { "src/binding/iterate.c" } },
  { "Array math: operators, elementwise functions, comparisons, astype",
    { "src/binding/math.c", "src/base/ufunc.c" } },
  { "Reductions and scans: sum, prod, min, max, mean, argmin, argmax, any, all, cumsum, cumprod",
    { "src/binding/reduce.c", "src/base/reduce.c" } },
  { "Index arrays and masks: take, put, a[idx], a[mask], add_at, nonzero, count_nonzero, bincount",
    { "src/binding/gather.c" } },
  { "Shapes: reshape, transpose, squeeze, view, split (and layout arithmetic)",
    { "src/binding/shape.c", "src/base/layout.c" } },
  { "Records", { "src/binding/record.c", "src/base/dtype.c", "lua/luacuda/record.lua" } },
  { "Array math: operators, luacuda.add ... where, comparisons, astype, result_type",
    { "src/binding/math.c", "src/binding/operands.c", "src/base/ufunc.c", "src/base/ufunc_host.c" } },
  { "Host memory: pinned, mapped, register", { "src/binding/hostmem.c", "src/backend/hostreg.c" } },
  { "Streams and events", { "src/binding/stream.c", "src/binding/event.c", "src/binding/pending.c", "src/backend/sim/stream.c" } },
  { "Devices and the module", { "src/binding/core.c", "src/binding/device.c", "src/backend/backend.c", "src/base/env.c", "src/backend/sim/backend.c", "src/backend/sim/pool.c" } },
  { "Kernels: compile, signatures, get, get_global",
    { "src/binding/module.c", "src/binding/kernel.c", "src/binding/name_expr.c", "src/base/scan.c",
      "src/base/scan_types.c", "src/base/scan_decl.c" } },
  { "Kernel launches and arguments", { "src/binding/launch.c" } },
  { "Compiling: ptx, cubin, the simulator's compiler, the cache",
    { "src/binding/ptx.c", "src/base/ksource.c", "src/base/fatbin.c", "src/backend/nvrtc.c", "src/backend/sim/compile.c", "src/backend/sim/check.c",
      "src/backend/sim/options.c", "src/backend/sim/libcudacxx.c",
      "src/base/cache.c", "src/base/deps.c", "src/base/includes.c" } },
  { "Host programs: the C API and DLPack",
    { "src/binding/capi.c", "src/binding/dlpack.c", "src/binding/preload.c" } },
  { "The simulator: faults in kernels, guarded memory",
    { "src/backend/sim/fault.c", "src/backend/sim/guard.c", "src/backend/sim/arena.c" } },
  { "SmartArray", { "lua/luacuda/smart.lua" } },
  { "Kernel generators: elementwise, reduction", { "lua/luacuda/generators.lua" } },
  { "busted matchers: assert.array_equal, assert.array_near", { "lua/luacuda/assert.lua" } },
  { "Printing: set_printoptions, printoptions", { "lua/luacuda/printoptions.lua" } },
  { "Random numbers: luacuda.random and its generators", { "src/binding/random.c", "lua/luacuda/sampling.lua" } },
  { "Statistics and shapes in Lua: round, var, std, norm, pad, einsum",
    { "lua/luacuda/stats.lua", "lua/luacuda/pad.lua", "lua/luacuda/einsum.lua" } },
  { "Matrix products: matmul, blas", { "src/binding/matmul.c", "src/base/matmul.c" } },
  { "Saving and loading .npy files: save, load", { "src/binding/npy.c", "src/base/npy.c" } },
  { "Sorting: sort, argsort, searchsorted, unique", { "src/binding/sort.c", "src/base/sort.c" } },
  { "Several processes: luacuda.dist", { "src/dist/dist.c", "src/dist/process.c", "src/dist/comm.c",
    "src/dist/collectives.c", "src/dist/args.c", "src/dist/header.c", "src/dist/jobs.c", "src/dist/route.c",
    "src/dist/agree.c", "src/dist/nccl_engine.c", "lua/luacuda/dist.lua" } },
  { "CUDA backend only", { "src/backend/cuda/context.c", "src/backend/cuda/memory.c", "src/backend/cuda/stream.c",
    "src/backend/cuda/module.c", "src/backend/cuda/copy.c", "src/backend/cuda/api.c",
    "src/backend/cuda/reduce.c", "src/backend/cuda/blas.c", "src/backend/cuda/matmul.c",
    "src/backend/cuda/gather.c", "src/backend/cuda/sort.c", "src/backend/cuda/limits.c" } },
}

-- Errors no spec can provoke on a working machine: the reason, by key.
-- (Out-of-memory and system-call failures; the fault-injection specs may
-- reach some of them later.)
local UNTESTABLE = {}
for _, k in ipairs {
  "out of host memory", "out of memory", "out of host memory allocating <> bytes",
  "out of host memory queueing work", "out of host memory creating a stream",
  "out of host memory creating an event", "out of host memory page-locking <> bytes",
  "out of memory composing the source", "records nested too deeply",
  "pipe: <>", "waitpid: <>", "cannot start the simulator's stream executor",
  "the compiled module has another ABI version", "cannot load the compiled module: <>",
  "nvrtcCreateProgram failed for <>", "out of memory for the log of <>",
  "nvrtcGetCUBINSize failed for <>", "nvrtcGetPTXSize failed for <>",
  "nvrtcGetCUBIN failed for <>", "nvrtcGetPTX failed for <>",
  "NVRTC made no <> for <><>", "out of memory for the output of <> (<> bytes)",
  "out of memory for the PTX of <> (<> bytes)", "fatbinary: out of host memory (<> bytes)",
  "NVRTC <>.<> cannot make cubins (11.1 or newer can)",
  "NVRTC <>.<> has no name expressions (11.0 or newer has), which kernels with C++ linkage need",
  "nvrtcAddNameExpression failed for <>", "nvrtcGetLoweredName failed for <>",
  "out of memory for the lowered names of <>",
  "out of memory for the sort's scratch (<> bytes)",
  "the <> backend cannot sort device arrays",
  "the CUDA backend sorts fewer than 2^32 elements at once, got <>",
  "cannot read <>", "cannot write <>: <>", "cannot store <>: <>",
  "cannot make a directory in <>: <>",
  "cannot install the simulator's fault handlers: <>", "cannot make a signal stack: <>",
  "cannot set up a signal stack for a worker: <>",
  "cannot make <>: <>",
  "cannot start a worker thread for each of the <> blocks of a cooperative launch (<> started)",
  "out of memory reading the header",
  -- luacuda.dist: MPI failing
  "MPI call <> failed: <>", "MPI was finalised already", "MPI_Init_thread failed",
  "on_exit failed: cannot finalise MPI at exit", "MPI_Op_create failed",
  "out of host memory queueing <>",
  -- luacuda.dist's control channel (src/dist/agree.c): MPI failing, no host memory
  "MPI call MPI_Comm_dup failed (the control channel)",
  "cannot be told of MPI_Finalize (MPI_Comm_set_attr failed)",
  "out of host memory for the control channel",
  "MPI call MPI_Isend failed on the control channel; the job is aborted",
  "MPI call MPI_Recv failed on the control channel; the job is aborted",
  "out of host memory keeping a control message; the job is aborted",
  -- two states of one process in luacuda.dist calls at once: a host
  -- program's threads, timed so that one waits in MPI while the other calls
  "another Lua state of this process is in a luacuda.dist call (the calls of one process must not overlap)",
  -- luacuda.dist's NCCL engine: no host memory
  "out of host memory",
} do UNTESTABLE[k] = true end

-- Errors only a GPU machine can provoke, wherever they are raised (several
-- devices, or what the simulator does differently).
local GPU_ONLY = {}
for _, k in ipairs {
  "the <> backend cannot page-lock host memory yet",
  "the device address of mapped memory differs from its host address (the device has no unified addressing)",
  "the <> backend has no host_flags",
} do GPU_ONLY[k] = true end

-- Errors the public API cannot reach because a caller checks first (kept
-- as defence in depth); the pure-C ones are covered by spec/unit/*_test.c.
local GUARDED = {}
for _, k in ipairs {
  "the <> backend has no array math",     -- both backends have it: for a third
  -- the fatbinary writer's refusal (spec/unit/fatbin_test.c), passed on with
  -- the source's name: NVRTC's own cubin and PTX never meet it
  "<>, for <>",
  "the <> backend cannot index with arrays",   -- both backends have a gather slot: for a third
  "unknown gather operation <>",          -- the binding sends only the operations there are
  "expected a number, boolean, table or array, got <>",
  "invalid flags <> for <> memory", "the compiled module has no kernel '<>'",
  "the compiled module has no global '<>'", "no device <> (the simulator has <>: LUACUDA_SIM_DEVICES)",
  -- both backends copy between devices (copy_peer): for a third
  "the <> array is on device <>, but device <> is current (the <> backend does not copy between devices)",
  "host memory at <> (<> bytes) is already page-locked", "host memory at <> is not registered",
  "invalid host_register arguments (<> bytes, flags <>)",
  "host memory at <> is not mapped into the device",
  "kernel '<>': the arguments take more than <> bytes",
  -- matrix products: every backend has them (the simulator's kernel, the
  -- CUDA backend's cuBLAS or kernel)
  "the <> backend has no matrix products",
  "the name is longer than <> bytes",
  "more than <> kernels named by name expressions",
  -- counts past INT_MAX, behind the smaller limits checked first
  "too many __shared__ declarations", "too many global variables", "too many kernels",
  "too many structs", "structs nest more than <> deep", "records nest more than <> deep",
  "struct <> is not one the source defines",
  -- array math: every operation has a host loop for every loop dtype its
  -- family resolves to (src/base/ufunc.c, ufunc_host.c)
  "no <> loop for <> (every loop dtype should have one)",
  -- every backend has random numbers (backend.h's random slot)
  "the <> backend has no random numbers",
  -- .npy headers: each level of a dtype is two levels of the header's
  -- literal, whose own limit (the header nests more than <> deep) comes first
  "the dtype nests more than <> deep",
  "kernel '<>' is defined more than once in <> (in #if branches), with parameters the compiled kernel cannot tell apart; pass signatures={<> = \"...\"} to compile",
  -- luacuda.dist's engine: its Lua wrappers stage these arrays first, and
  -- no Lua value reaches a freed communicator
  "<> is a device array: call the method on the communicator, which stages it",
  "<> is not C-contiguous: call the method on the communicator, which copies it",
  "the communicator was freed",
  -- the control channel: dist.init refuses first once MPI is finalised
  -- ("MPI was finalised already"); a message out of order is a bug, which
  -- spec/unit/agree_test.c's orderings look for
  "luacuda.dist has ended in this process (MPI_Finalize)",
  "a control message from rank <> out of order (type <>, number <>, expected <>): a bug in luacuda.dist; the job is aborted",
} do GUARDED[k] = true end

-- A C unit test (spec/unit/*_test.c) that checks a message holding the
-- format's longest literal part: "file", "test name", or nil.
local ctests = {}
for _, path in ipairs { "spec/unit/layout_test.c", "spec/unit/scan_test.c", "spec/unit/capi_test.c",
                        "spec/unit/npy_test.c", "spec/unit/dist_host_test.c",
                        "spec/unit/fatbin_test.c" } do
  local name, n = nil, 0
  for l in io.lines(path) do
    n = n + 1
    name = l:match("^static int test_([%w_]+)%(void%)") or name
    if name and l:find('"', 1, true) then ctests[#ctests + 1] = { file = path, test = name, line = l } end
  end
end
local function c_unit(fmt)
  local pat = C.matcher(fmt)
  for _, t in ipairs(ctests) do
    if t.line:find(pat) then return t end
  end
end

-- Errors a spec provokes in a child process, where the harvest cannot see
-- them: key -> {spec file, test}.
local CHILD = {
  ["cannot run the C++ compiler '<>': <> (set LUACUDA_CXX)"] =
    { file = "spec/errors_spec.lua", test = "kernels, more name the C++ compiler the simulator cannot run",
      fn = "compile" },
  ["NVRTC <>.<> cannot compile for sm_<> (the oldest it knows is sm_<>)"] =
    { file = "spec/cuda_fake_spec.lua",
      test = "the cuda backend on the fake driver names the architecture when the device is older than anything NVRTC knows",
      fn = "compile" },
}
-- a user's -arch against the device's (issue 32, defect 5): a child on the fake driver
for _, key in ipairs {
  'option <>: an architecture is "compute_XX" or "sm_XX" (e.g. "sm_80"), no newer than the device\'s',
  "option <>: <> is newer than the device (compute capability <>.<>), which cannot run its code",
  "option <>: <> is specific to compute capability <>.<>; the device is <>.<>",
} do
  CHILD[key] = { file = "spec/cuda_fake_spec.lua",
                 test = "the cuda backend on the fake driver honours a user -arch no newer than the device as PTX the driver JITs, and refuses a newer one",
                 fn = "compile" }
end

-- several devices: spec/devices_spec.lua runs each test in a child with
-- LUACUDA_SIM_DEVICES=3 (FAKE_CUDA_DEVICES=3)
do
  local belong = "several devices makes arrays, streams, events and modules belong to the current device"
  for key, fn in pairs {
    ["the <> array is on device <>, but device <> is current (luacuda.device)"] = "add",
    ["the array is on device <>, but device <> is current (luacuda.device)"] = "launch",
    ["kernel '<>': its module is on device <>, but device <> is current (luacuda.device)"] = "launch",
    ["the stream is on device <>, but device <> is current (luacuda.device)"] = "copy_to_host",
    ["the event is on device <>, but device <> is current (luacuda.device)"] = "record",
    ["the module <> is on device <>, but device <> is current (luacuda.device)"] = "get_global",
  } do
    CHILD[key] = { file = "spec/devices_spec.lua", test = belong, fn = fn }
  end
  CHILD["the tensor is on device <> (DLPack's device_id <>), but device <> is current (luacuda.device)"] =
    { file = "spec/devices_spec.lua",
      test = "several devices names devices from 1 when from_dlpack takes a tensor of another device",
      fn = "from_dlpack" }
  CHILD["option to is an array of device <>, option device says <>"] =
    { file = "spec/devices_spec.lua",
      test = "several devices copies every kind of view between devices (peer copies), values checked",
      fn = "to_device" }
end

-- array math's device checks: spec/frictions_spec.lua runs them in a child
-- with LUACUDA_SIM_DEVICES=2 (FAKE_CUDA_DEVICES=2)
for _, key in ipairs {
  "operand <> is on device <> and operand <> on device <>: array math runs on one device (copy one over first: luacuda.to_device(y, {device = <>}))",
  "operand <> is on device <>, but device <> is current (luacuda.device(<>) makes it current, or copy the operands: luacuda.to_device(x, {device = <>}))",
} do
  CHILD[key] = { file = "spec/frictions_spec.lua",
    test = "the messages of array math and copies name both operands' devices and the copy for operands on two devices",
    fn = "add" }
end

CHILD["<> bytes of dynamic shared memory is more than the <> this kernel may have (device <> allows a block <> bytes of shared memory, and the kernel has <> of static shared memory)"] =
  { file = "spec/cuda_fake_spec.lua",
    test = "the cuda backend on the fake driver opts a kernel into the device's shared memory per block, once per kernel and size",
    fn = "launch" }
CHILD["cuLaunchKernel: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (blocks of <> threads; the kernel takes at most <> threads per block and uses <> registers per thread)"] =
  { file = "spec/cuda_fake_spec.lua",
    test = "the cuda backend on the fake driver names the kernel's threads per block and registers when a launch is out of resources",
    fn = "launch" }

CHILD["a cooperative launch of <> blocks is more than the <> that can run at once (<> blocks of <> threads and <> bytes of dynamic shared memory on each of device <>'s <> multiprocessors)"] =
  { file = "spec/coop_spec.lua",
    test = "cooperative launches on the cuda backend ask the occupancy, launch with cuLaunchCooperativeKernel and refuse a grid too large",
    fn = "launch" }
CHILD["device <> does not take cooperative launches"] =
  { file = "spec/coop_spec.lua",
    test = "cooperative launches on the cuda backend refuse a cooperative launch on a device that takes none",
    fn = "launch" }

CHILD["work queued on <> still <> <> (LUACUDA_STRICT_ASYNC=1: synchronize the stream, or an event recorded after that work, first)"] =
  { file = "spec/async_spec.lua",
    test = "LUACUDA_STRICT_ASYNC=1 makes a host access that would wait an error, and a synchronized one fine",
    fn = "index" }

CHILD["the library's matmul kernel did not compile: <>"] =
  { file = "spec/matmul_spec.lua",
    test = "matmul's kernel on the simulator names the library's kernel when the simulator cannot compile it, at every call",
    fn = "matmul" }
CHILD["cublasSetStream_v2: <>"] =
  { file = "spec/matmul_spec.lua",
    test = "matmul on the CUDA backend with the fake cuBLAS raises a failed cuBLAS call with its status",
    fn = "matmul" }

-- an option the simulator does not know, refused where NVRTC does not
-- judge it first (LUACUDA_NVRTC_CHECK=0)
CHILD["option <> is not one the simulator knows: it honours -D, -U, -I, -std and -use_fast_math, and takes NVRTC's options for a GPU's code (-arch, -lineinfo, -maxrregcount, ...), -ftz, -prec-div, -prec-sqrt and -fmad (docs/guide/kernels.md, \"Compile options\")"] =
  { file = "spec/teach_spec.lua",
    test = "compile options on the simulator refuse an option unknown to the simulator, where NVRTC does not check it first",
    fn = "compile" }

-- the numeric settings refused at require time (src/base/env.c)
local SETTINGS = { file = "spec/build_spec.lua",
  test = "the module refuses a bad numeric LUACUDA_SIM_* setting at require time, naming it",
  fn = "require" }
for _, k in ipairs {
  "<>=<> is not a size (a whole number of bytes, with an optional K, M or G)",
  "<>=<> is out of range (<> to <> bytes)", "<>=<> is not a whole number",
  "<>=<> is out of range (<> to <>)",
  "<>=<> is not a number of seconds (more than 0, less than 1000000)",
} do CHILD[k] = SETTINGS end

-- luacuda.dist's errors, raised in the ranks that spec/dist_spec.lua
-- starts with mpirun and read from what each rank wrote
local function dist_case(test, fn)
  return { file = "spec/dist_spec.lua", fn = "dist." .. fn,
           test = "luacuda.dist on MPI raises the same error on every rank " .. test }
end
for k, v in pairs {
  ["ranks called different functions (<> on some, <> on others)"] =
    dist_case("when ranks call different collectives, each naming its own", "allreduce"),
  ["ranks gave different ops (<> on some, <> on others)"] = dist_case("when the ops differ", "allreduce"),
  ["ranks gave different roots (<> on some, <> on others)"] = dist_case("when the roots differ", "broadcast"),
  ["ranks gave arrays of different dtypes (<> on some, <> on others)"] =
    dist_case("when the dtypes differ", "allreduce"),
  ["ranks gave records of different sizes (<> bytes on some, <> on others)"] =
    dist_case("when the ranks' records have different sizes", "broadcast"),
  ["ranks gave arrays of different sizes (<> elements on some, <> on others)"] =
    dist_case("when the sizes differ", "allreduce"),
  ["ranks gave arrays of different shapes (of <> elements each)"] =
    dist_case("when the shapes differ with the same size", "broadcast"),
  ["on rank <>: <>"] = dist_case("when one rank gives a bad op, naming it", "allreduce"),
  ["<> must be an open array, got <>"] = dist_case("when one rank gives no array", "allreduce"),
  ['op must be "sum", "prod", "min" or "max", got <>'] =
    dist_case("when one rank gives a bad op, naming it", "allreduce"),
  ["a record array cannot be reduced (<> takes numbers and booleans)"] =
    dist_case("for a reduction of records, an output overlapping the input and a bad color", "allreduce"),
  ["<> must be a rank (an integer 1 to <>), got <>"] = dist_case("when the root is not a number", "broadcast"),
  ["<> <> is not a rank of this communicator (1 to <>)"] = dist_case("when the root is not a rank", "reduce"),
  ["<> is <>, the input <> (no implicit casting)"] =
    dist_case("when one rank's allgather output has the wrong size or dtype", "allgather"),
  ["color must be a whole number 0 or more, or nil, got <>"] =
    dist_case("for a reduction of records, an output overlapping the input and a bad color", "split"),
  ["key must be an integer, got <>"] = dist_case("when one rank's split key is not an integer", "split"),
  ["out has <> elements, x <>"] = dist_case("when allreduce's out has another size", "allreduce"),
  ["out overlaps x (give the same array for in place)"] =
    dist_case("for a reduction of records, an output overlapping the input and a bad color", "allreduce"),
  ["<> has <> elements, not <> (ranks) x <> (the elements of <>)"] =
    dist_case("when one rank's allgather output has the wrong size or dtype", "allgather"),
  ["out overlaps x"] = dist_case("when allgather's out overlaps x", "allgather"),
  ["options must be a table, got <>"] = dist_case("for an option allreduce does not take", "allreduce"),
  ["stream must be an open luacuda stream, got <>"] =
    dist_case("for an option allreduce does not take", "allreduce"),
  ["unknown option <> (it takes <>)"] = dist_case("for an option allreduce does not take", "allreduce"),
  ["NCCL call <> failed: <> (<>)"] = { file = "spec/dist_spec.lua", fn = "dist.allreduce",
    test = "luacuda.dist on NCCL raises an NCCL failure of one rank on every rank" },
  ["CUDA call <> failed: <>"] = { file = "spec/dist_spec.lua", fn = "dist.allreduce",
    test = "luacuda.dist on NCCL raises a driver failure of one rank while NCCL starts on every rank, "
      .. "naming the rank and the call, and leaves the arrays as they were" },
  ["<> is on device <>, but NCCL's communicator is on device <> (the device current at its first collective)"] =
    { file = "spec/dist_spec.lua", fn = "dist.allreduce",
      test = "luacuda.dist on NCCL chooses NCCL where it loads, and computes every collective on device and "
        .. "managed arrays, on the default stream and on a stream, through the NCCL calls expected" },
  ["NCCL's communicator was aborted after <>"] = { file = "spec/dist_spec.lua", fn = "dist.allreduce",
    test = "luacuda.dist on NCCL aborts NCCL's communicator after an asynchronous error instead of "
      .. "waiting forever, raises it on every rank, and makes a new communicator for the next call" },
  ["expected a communicator (call it as comm:<>(...)), got <>"] =
    dist_case("when a method is called without its communicator, on the rank alone", "barrier"),
  ["peer <> is this rank"] =
    dist_case("on both ranks of a send and recv that disagree, and for a send to itself", "send"),
  ["on rank <> (sending): <>"] =
    dist_case("on both ranks of a send and recv that disagree, and for a send to itself", "recv"),
  ["on rank <> (receiving): <>"] =
    dist_case("on both ranks of a send and recv that disagree, and for a send to itself", "send"),
  ["rank <> sends <>, rank <> receives into <>"] =
    dist_case("on both ranks of a send and recv that disagree, and for a send to itself", "recv"),
  ["rank <> sends <> elements, rank <> receives into <>"] =
    dist_case("on both ranks of a send and recv that disagree, and for a send to itself", "recv"),
  ["rank <> sends an array of another shape than rank <> receives into (<> elements each)"] =
    dist_case("on both ranks of a send and recv that disagree, and for a send to itself", "recv"),
  -- ranks in different calls (spec/dist/disagree.lua)
  ["ranks disagree: rank <> is in <>, rank <> in <><>"] = { file = "spec/dist_spec.lua", fn = "dist.allreduce",
    test = "luacuda.dist on MPI when ranks are in different calls raises the same error on both ranks of "
      .. "two-rank calls, and the communicators work afterwards; stages record arrays whose fields are "
      .. "named as array methods; aborts the job when a rank ends its script while another waits for it" },
  ["rank <> ended its script while rank <> was in <>; the job is aborted"] = { file = "spec/dist_spec.lua",
    fn = "dist.allreduce",
    test = "luacuda.dist on MPI when ranks are in different calls raises the same error on both ranks of "
      .. "two-rank calls, and the communicators work afterwards; stages record arrays whose fields are "
      .. "named as array methods; aborts the job when a rank ends its script while another waits for it" },
  ["ranks cut MPI calls into pieces of different sizes (LUACUDA_DIST_CHUNK: <> elements on some, <> on others)"] =
    { file = "spec/dist_spec.lua", fn = "dist.allgather",
      test = "luacuda.dist on MPI when ranks are in different calls refuses LUACUDA_DIST_CHUNK set on one "
        .. "rank alone, on every rank of the call; aborts the job, naming both calls, when the ranks of a "
        .. "call cannot all be told" },
  ["rank <> cuts MPI calls into pieces of <> elements, rank <> into pieces of <> (LUACUDA_DIST_CHUNK)"] =
    { file = "spec/dist_spec.lua", fn = "dist.send",
      test = "luacuda.dist on MPI when ranks are in different calls refuses LUACUDA_DIST_CHUNK set on one "
        .. "rank alone, on every rank of the call; aborts the job, naming both calls, when the ranks of a "
        .. "call cannot all be told" },
} do CHILD[k] = v end

-- the placeholder a conversion stands for in the catalogue
local function readable(fmt)
  local s = fmt:gsub("%%%%", "\0")
  s = s:gsub("%%[-#+ 0]*%d*%.?%d*[hlzjt]*([diouxXeEfgGcsp])", function(c)
    if c == "s" then return "<…>" elseif c == "p" then return "<address>"
    elseif c == "x" or c == "X" then return "<flags>" elseif c == "c" then return "<axis>"
    elseif c:match("[eEfgG]") then return "<x>" else return "<n>" end
  end)
  return (s:gsub("%z", "%%"):gsub("|", "\\|"))
end

-- harvested errors: {file=, test=, fn=, body=}
local seen = {}
for l in io.lines(errlog) do
  local file, test, msg = l:match("^(.-)\t(.-)\t(.*)$")
  local fn, body = msg:match("luacuda%.([%w_]+): (.*)$")
  -- an operator's: "luacuda.add (+): ..."
  if not fn then fn, body = msg:match("luacuda%.([%w_]+) %([^)]*%): (.*)$") end
  if fn then
    -- the innermost "luacuda.fn: " is the raiser ("luacuda.x: luacuda.y: ..." is rare)
    seen[#seen + 1] = { file = file, test = test, fn = fn, body = body }
  end
end

-- distinct formats by key, in area order
local by_key, order = {}, {}
local area_of = {}
for i, a in ipairs(AREAS) do for _, f in ipairs(a[2]) do area_of[f] = i end end
for _, f in ipairs(C.formats(".")) do
  local k = C.key(f.format, true)
  local e = by_key[k]
  if not e then
    -- every file with error sites is in an area: a new file must be placed
    local area = area_of[f.file] or error(f.file .. " is in no area of AREAS", 0)
    e = { key = k, format = f.format, files = {}, area = area,
          pat = C.matcher(f.format), lits = #f.format:gsub("%%[^%s]*", "") }
    by_key[k] = e
    order[#order + 1] = e
  end
  e.files[#e.files + 1] = f.file
  -- an error both backends raise belongs with the simulator's area
  if area_of[f.file] and area_of[f.file] < e.area then e.area = area_of[f.file] end
  if GPU_ONLY[k] then e.area = #AREAS end
end

-- each harvested error: the formats it matches; its best is the most specific
for _, s in ipairs(seen) do
  local best
  for _, e in ipairs(order) do
    if s.body:find(e.pat) then
      e.any = e.any or {}
      e.any[#e.any + 1] = s
      if not best or e.lits > best.lits then best = e end
    end
  end
  if best then
    best.own = best.own or {}
    best.own[#best.own + 1] = s
  end
end

-- a test the catalogue's checker can find (not one named by a loop)
local names = {}
local function findable(s)
  names[s.file] = names[s.file] or C.test_names(s.file)
  return names[s.file][s.test]
end
local function pick(list)
  if not list then return nil end
  for _, s in ipairs(list) do if s.file == "spec/errors_spec.lua" and findable(s) then return s end end
  for _, s in ipairs(list) do if findable(s) then return s end end
end

local out = {}
local function w(...) out[#out + 1] = table.concat({ ... }) end
w("# Errors luacuda raises")
w("")
w("Every error message luacuda raises, generated from the error sites in `src/**/*.c`")
w("and `lua/luacuda/*.lua` by `make errors-catalogue` (which runs the specs to find")
w("a test for each). A message reads `luacuda.<function>: <cause>`; the table gives the")
w("cause, with `<…>` for text and `<n>`, `<x>` for numbers filled in at run time,")
w("the functions seen raising it in the specs, and one spec test that triggers it.")
w("`spec/errors_catalogue_spec.lua` fails when a listed test no longer exists or an")
w("error site in the sources has no row here.")
w("")
w("Messages from outside luacuda are passed on after the cause: the C++ compiler's")
w("or NVRTC's log after `compilation of <…> failed`, `strerror` after system calls,")
w("and the `CUDA_ERROR_*` name after the driver call that failed (`cuMemAlloc:")
w("CUDA_ERROR_OUT_OF_MEMORY`, CUDA backend only).")
local counts = { tested = 0, unit = 0, gpu = 0, untested = 0, guarded = 0 }
for ai, a in ipairs(AREAS) do
  local rows = {}
  for _, e in ipairs(order) do if e.area == ai then rows[#rows + 1] = e end end
  if #rows > 0 then
    w("")
    w("## ", a[1], ai == #AREAS and " (needs a GPU: no spec runs it on the simulator)" or "")
    w("")
    w("| cause | raised by | spec |")
    w("| --- | --- | --- |")
    for _, e in ipairs(rows) do
      local s = pick(e.own) or pick(e.any) or CHILD[e.key]
      if CHILD[e.key] and not e.own then e.own = { CHILD[e.key] } end
      local fns, fset = {}, {}
      for _, x in ipairs(e.own or e.any or {}) do
        if not fset[x.fn] then fset[x.fn] = true; fns[#fns + 1] = x.fn end
      end
      table.sort(fns)
      if #fns > 4 then fns = { fns[1], fns[2], fns[3], "… (" .. #fns .. " functions)" } end
      local spec
      local cu = not s and c_unit(e.format)
      if s then
        spec = ('`%s`: "%s"'):format(s.file, s.test:gsub("|", "\\|"))
        counts.tested = counts.tested + 1
      elseif cu then
        spec = ('`%s`: "%s" (C unit test; %s)'):format(cu.file, cu.test,
          GUARDED[e.key] and "the API checks first" or "not reachable from Lua")
        counts.unit = counts.unit + 1
      elseif GUARDED[e.key] then
        spec = "not provoked: the API checks first (defence in depth)"
        counts.guarded = counts.guarded + 1
      elseif ai == #AREAS then
        spec = "needs a GPU"
        counts.gpu = counts.gpu + 1
      elseif UNTESTABLE[e.key] then
        spec = "not provoked: a failure of the system, not of the caller"
        counts.untested = counts.untested + 1
      else
        spec = "MISSING"
      end
      w("| `", readable(e.format), "` | ", table.concat(fns, ", "), " | ", spec, " |")
    end
  end
end
w("")
w(("%d messages: %d triggered by a busted spec, %d by a C unit test only, %d need a GPU,")
  :format(#order, counts.tested, counts.unit, counts.gpu))
w(("%d are failures of the system, %d are guarded by earlier checks."):format(counts.untested, counts.guarded))
io.write(table.concat(out, "\n"), "\n")
