-- Run by spec/dist_spec.lua under mpirun: ranks that disagree about which
-- call they are in. arg[1]: the directory of the ranks' files, arg[2]: the
-- part.
--   raise_ended (2 ranks): the disagreements whose calls have these two
--     ranks alone, raised on both (each writes "ERR <case>\t<message>"),
--     then collectives that work; record arrays whose fields are named as
--     the arrays' methods, staged (a device array, a strided view). Then
--     rank 2 ends its script while rank 1 waits in an allreduce: the job
--     is aborted.
--   chunk_bystander (3 ranks, rank 3 with LUACUDA_DIST_CHUNK=3 from
--     mpirun): the chunks differ, raised on every rank of the call; then
--     ranks 1 and 2 are in allreduce while rank 3 sends to rank 1: the job
--     is aborted, the message naming both calls.
local luacuda = require "luacuda"
local comm = require("luacuda.dist").init()
local R, P = comm.rank, comm.size
local part = arg[2]

package.path = arg[0]:match("^(.*)/") .. "/?.lua;" .. package.path
local log = require("ranklog").open(arg[1], R)
local say = log.say

local function case(name, fn)
  local ok, err = pcall(fn)
  say(("ERR %s\t%s"):format(name, ok and "(no error)" or tostring(err):gsub("^[^:]+:%d+: ", "")))
end

local x = luacuda.full({ 4 }, R, "float32")

if part == "raise_ended" then
  local other = 3 - R
  local sub = comm:split(0)                   -- the same two ranks, another communicator
  say(("IDS %d %d"):format(comm.id, sub.id))   -- the numbers the messages give them
  case("allreduce_send", function()
    if R == 1 then comm:allreduce(x) else comm:send(x, 1) end
  end)
  case("recv_recv", function() comm:recv(x, other) end)
  case("send_send", function() comm:send(x, other) end)
  case("split_world", function()
    if R == 1 then sub:allreduce(x) else comm:allreduce(x) end
  end)
  case("send_on_other_comm", function()
    if R == 1 then comm:send(x, 2) else sub:recv(x, 1) end
  end)
  case("broadcast_recv", function()
    if R == 1 then sub:broadcast(x, 1) else comm:recv(x, 1) end
  end)

  -- records whose fields are named shape, dtype, copy, copy_to_host:
  -- luacuda.dist stages them through the arrays' own methods
  local Rec = luacuda.record { { "shape", "float32" }, { "dtype", "int32" }, { "copy", "float64" },
    { "copy_to_host", "int16" } }
  local function rec(v) return { shape = v, dtype = 10 * v, copy = 100 * v, copy_to_host = -v } end
  local function host_of(a)          -- a's elements, as tables
    local h = luacuda.attr(a, "kind") == "device" and luacuda.attr(a, "copy_to_host")(a) or a
    return luacuda.attr(h, "totable")(h)
  end
  local function check(got, want, what)
    local ok = #got == #want
    for i = 1, #want do
      ok = ok and got[i].shape == want[i].shape and got[i].dtype == want[i].dtype
        and got[i].copy == want[i].copy and got[i].copy_to_host == want[i].copy_to_host
    end
    log.check(ok, what)
  end
  local h = luacuda.empty({ 2 }, Rec)
  h[1], h[2] = rec(R), rec(R + 2)
  local d = luacuda.to_device(h)
  local all = luacuda.device_array({ 2 * P }, Rec)
  case("records_allgather", function() comm:allgather(d, all) end)
  check(host_of(all), { rec(1), rec(3), rec(2), rec(4) }, "allgather of device records")
  local wide = luacuda.empty({ 4 }, Rec)
  for i = 1, 4 do wide[i] = rec(10 * R + i) end
  local view = wide[{ { 1, 4, 2 } }]           -- strided: staged through a copy
  case("records_broadcast", function() comm:broadcast(view, 2) end)
  check(host_of(wide), { rec(21), rec(10 * R + 2), rec(23), rec(10 * R + 4) },
    "broadcast of a strided view of records")
  case("records_broadcast_device", function() comm:broadcast(d, 1) end)
  check(host_of(d), { rec(1), rec(3) }, "broadcast of device records")

  -- the communicators still work
  local y = luacuda.full({ 3 }, R, "int32")
  comm:allreduce(y)
  sub:allreduce(y)
  say("DONE " .. ((y[1] == 6 and y[3] == 6) and "ok" or "WRONG " .. y[1]))
  log.finish()
  if R == 1 then
    comm:allreduce(x)                          -- rank 2 has ended meanwhile
    print("rank 1 should not get here")
  end
elseif part == "chunk_bystander" then
  local out = luacuda.empty({ 4 * P }, "float32")
  case("chunk", function() comm:allgather(x, out) end)
  case("chunk_pair", function()
    if R == 1 then comm:send(x, 3) elseif R == 3 then comm:recv(x, 1) end
  end)
  log.close()
  if R == 3 then comm:send(x, 1) else comm:allreduce(x) end
  print("rank " .. R .. " should not get here")
end
