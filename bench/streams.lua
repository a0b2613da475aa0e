-- Streams that overlap: examples/streams.lua (8 chunks of copy in, fill,
-- kernel, copy out) on one stream and on two, against the fake CUDA driver
-- (spec/fake/fake_cuda.c, built by make check) with every queued operation
-- taking FAKE_CUDA_DELAY_US, so that the figure is the pipeline's shape,
-- not the machine's speed: two streams that never wait for each other take
-- half the time of one. The driver trace also says whether any call went to
-- the legacy default stream (which makes every stream wait) between the
-- events that time the chunks. Beside them, from the same driver's trace,
-- how a copy between the host and a view of narrow rows (a column of
-- {N, 2} float32: N rows of 4 bytes) reaches the driver: the calls that
-- move its data (copies and launches of the copy kernel) and the bytes
-- each line the copy engine moves holds (a 2-D memcpy moves a line per
-- row; a plain one, one line). The GPU's figure for the same copy is
-- bench/gpu.lua's, for later.
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
  local cmd = ("LUACUDA_BACKEND=cuda LUACUDA_LIBCUDA=%s FAKE_CUDA_MEMORY=1G "
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

-- a column of {n, 2} float32 copied to the host and back, n rows of 4
-- bytes: the data-moving calls of each copy, and the bytes per line moved
local function narrow_rows(n)
  local trace, script = os.tmpname(), os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(([[
    local l = require "luacuda"
    local mark = function(m)
      local t = assert(io.open(os.getenv("FAKE_CUDA_TRACE"), "a")) t:write("mark ", m, "\n") t:close()
    end
    local d = l.device_array({%d, 2}, "float32")
    d[{}] = 1
    local h = l.empty({%d, 2}, "float32")
    l.synchronize()
    mark("down") h[{{}, 1}] = d[{{}, 2}]
    mark("up") d[{{}, 1}] = h[{{}, 2}]
    mark("end")
  ]]):format(n, n))
  f:close()
  local p = io.popen(("LUACUDA_BACKEND=cuda LUACUDA_LIBCUDA=%s FAKE_CUDA_TRACE=%s "
                      .. "lua5.4 %s 2>&1"):format(fake, trace, script))
  local out = p:read("a")
  p:close()
  local calls, lines, inside = 0, 0, false
  for line in io.lines(trace) do
    if line:find("^mark ") then inside = line ~= "mark end"
    elseif inside and line:find("^cuMemcpy2DAsync") then calls, lines = calls + 1, lines + n
    elseif inside and line:find("^cuMemcpyAsync") then calls, lines = calls + 1, lines + 1
    elseif inside and line:find("^launch lc_copy_strided ") then calls = calls + 1 end
  end
  os.remove(trace)
  os.remove(script)
  assert(calls > 0, "the narrow-row copies made no copy call:\n" .. out)
  return calls / 2, 2 * n * 4 / lines
end

local one = run(1)
local two, legacy = run(2)
local narrow_calls, narrow_bytes = narrow_rows(4096)
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
line("driver calls moving data per host-device copy of a {4096, 2} float32 column",
     ("%g"):format(narrow_calls), "<= 3", narrow_calls <= 3)
line("bytes per line the copy engine moves, that copy (a 2-D memcpy: 4, a line per row)",
     ("%g"):format(narrow_bytes), ">= 4096", narrow_bytes >= 4096)
print(("bench: %d of %d targets met"):format(met, total))
