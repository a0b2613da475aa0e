-- Streams that overlap: examples/streams.lua (8 chunks of copy in, fill,
-- kernel, copy out) on one stream and on two, against the fake CUDA driver
-- (spec/fake/fake_cuda.c, built by make check) with every queued operation
-- taking FAKE_CUDA_DELAY_US, so that the figure is the pipeline's shape,
-- not the machine's speed: two streams that never wait for each other take
-- half the time of one. The driver trace also says whether any call went to
-- the legacy default stream (which makes every stream wait) between the
-- events that time the chunks.
--   lua5.4 bench/streams.lua    (make bench-streams)
local B = require "bench.common"
local fake = B.fake_driver()
-- small enough that the fake's interpreting of the kernels (real CPU time,
-- which two streams share on a small machine) stays below the delay
local FLOATS = 1 << 16
if not fake then return end
local delay = tonumber(os.getenv("FAKE_CUDA_DELAY_US")) or 5000

-- run the example on n streams; the ms between its events and the calls
-- made on the legacy stream between them
local function run(n)
  local trace = os.tmpname()
  local cmd = ("LUACUDA_BACKEND=cuda LUACUDA_LIBCUDA=%s LUACUDA_PTX=1 FAKE_CUDA_MEMORY=1G "
               .. "FAKE_CUDA_DELAY_US=%d FAKE_CUDA_TRACE=%s FAKE_CUDA_TRACE_STREAMS=1 "
               .. "lua5.4 examples/streams.lua %d %d 2>&1"):format(fake, delay, trace, n, FLOATS)
  local p = io.popen(cmd)
  local out = p:read("a")
  p:close()
  local ms = tonumber(out:match("stream?s?: ([%d.]+) ms between the events"))
  assert(ms, "examples/streams.lua said:\n" .. out)
  local legacy, records = 0, 0
  for line in io.lines(trace) do
    -- between the start event's record and the first record on a stream of
    -- the example's after the loop (deferred releases record on the legacy one)
    if line:find("^cuEventRecord @blocking") then records = records + 1
    elseif records == 1 and line:find("@legacy$") then legacy = legacy + 1 end
  end
  os.remove(trace)
  return ms, legacy
end

local one = run(1)
local two, legacy = run(2)
local met, total = 0, 0
local function line(name, value, target, ok)
  total = total + 1
  if ok then met = met + 1 end
  print(("%s: %s (target: %s)"):format(name, value, target))
end
print(("one stream: %.1f ms, two streams: %.1f ms (each queued operation %d us)"):format(one, two,
      delay))
line("two streams / one stream, examples/streams.lua on the fake driver",
     ("%.2fx"):format(two / one), "<= 0.6x", two / one <= 0.6)
line("calls on the legacy stream between the chunks' events", legacy, "0", legacy == 0)
print(("bench: %d of %d targets met"):format(met, total))
