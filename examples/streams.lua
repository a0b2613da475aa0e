-- Streams, events and a SmartArray: a chunked pipeline on two streams
-- (copy in, kernel, copy out, each queued and returning at once), timed with
-- events; then chained kernels on a SmartArray that move the data once.
-- Host memory is pinned, so copies overlap kernels (a copy to pageable
-- memory makes the host wait for it), and each chunk's device arrays are
-- allocated and freed on their own stream, so the two streams never wait
-- for each other. `lua5.4 examples/streams.lua 1` runs it on one stream;
-- a second argument sets the number of floats (2^22).
package.path = ((arg and arg[0] or ""):match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local luacuda = require "luacuda"
local C = require "common"

print("luacuda on the " .. C.describe())
local m = C.kernel("saxpy.cu")
local n, chunks = tonumber(arg and arg[2]) or 1 << 22, 8
local per = n // chunks
local nstreams = tonumber(arg and arg[1]) or 2
local x = luacuda.pinned_array(n, "float32")
x[{}] = luacuda.arange(n, "float32")
local out = luacuda.pinned_array(n, "float32")
local streams = {}
for i = 1, nstreams do streams[i] = luacuda.stream() end

local start, stop = luacuda.event(), luacuda.event()
start:record(streams[1])
for c = 1, chunks do
  local s = streams[(c - 1) % nstreams + 1]
  local first, last = (c - 1) * per + 1, c * per
  local dx = luacuda.to_device(x[{{first, last}}], s)        -- allocated and queued on s
  local dy = luacuda.device_array(per, "float32", {stream = s})
  dy:fill(1, s)
  m.saxpy[{(per + 255) // 256, 256, s}](per, 2.0, dx, dy)    -- after the copy, on s
  dy:copy_to_host(out[{{first, last}}], s)                    -- after the kernel, on s
end
-- the last event waits for every stream
for i = 2, nstreams do
  local other_done = luacuda.event({timing = false})
  other_done:record(streams[i])
  other_done:wait(streams[1])
end
stop:record(streams[1])
stop:synchronize()
print(("%d chunks on %d stream%s: %.1f ms between the events"):format(chunks, nstreams,
      nstreams == 1 and "" or "s", start:elapsed_time(stop)))

local function f32(v) return (string.unpack("f", string.pack("f", v))) end
local bad = 0
for i = 1, n, 997 do
  if out[i] ~= f32(2 * (i - 1) + 1) then bad = bad + 1 end
end

-- chained kernels on a SmartArray: one transfer each way
local sa = luacuda.smart_array(luacuda.full(1024, 1, "float32"))
local ones = luacuda.to_device(luacuda.full(1024, 1, "float32"))
for _ = 1, 10 do m.saxpy[{4, 256}](1024, 1.0, ones, sa) end
local y1 = sa[1]                                  -- brings the data back, once
local moved = sa:transfers()
print(("SmartArray after 10 kernels and a read: %d transfer to the device, %d back; y[1] = %g")
      :format(moved.to_gpu, moved.to_host, y1))
C.check(bad == 0 and out[n] == f32(2 * (n - 1) + 1) and y1 == 11 and
        moved.to_gpu == 1 and moved.to_host == 1, "pipeline result and one transfer each way")
