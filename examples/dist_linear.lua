-- Data-parallel training of a linear model over MPI: every process holds
-- its own share of the data, computes the gradient of its share on the
-- device, and the gradients are summed over the processes with allreduce,
-- so every process takes the same step and keeps the same weights.
--   mpirun -np 2 lua5.4 examples/dist_linear.lua
-- (docs/guide/devices-and-processes.md, "Several processes: luacuda.dist"; as root, OpenMPI also wants
-- OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1.)
package.path = ((arg and arg[0] or ""):match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local luacuda = require "luacuda"
local C = require "common"
local dist = require "luacuda.dist"

local comm = dist.init()
-- one device per process on a machine with several GPUs
if #luacuda.devices() >= comm.local_size then luacuda.select_device(comm.local_rank) end
if comm.rank == 1 then
  print(("luacuda on the %s, %d processes (%s)"):format(C.describe(), comm.size, comm.engine))
end

-- this process's rows of the data: y = 2 - x1 + 0.5 x2 + 3 x3
local n_local = 500
local n = n_local * comm.size
local rows, ys = {}, {}
for k = 1, n_local do
  local i = (comm.rank - 1) * n_local + k               -- the row's number over all processes
  local x1, x2, x3 = math.sin(i), math.cos(i), math.sin(0.3 * i)
  rows[k] = {1, x1, x2, x3}
  ys[k] = {2 - x1 + 0.5 * x2 + 3 * x3}
end
local X = luacuda.to_device(rows)                       -- {n_local, 4}
local y = luacuda.to_device(ys)                         -- {n_local, 1}
local w = luacuda.device_array({4, 1}):fill(0)
local g = luacuda.device_array({4, 1})

for _ = 1, 200 do
  luacuda.matmul(X.T, X:matmul(w) - y, g)              -- this share's X^T (X w - y)
  comm:allreduce(g, "sum")                             -- the whole data's gradient, on every process
  w = w - (1 / n) * g
end

-- every process has the same weights, and they are the data's
local all = luacuda.empty({comm.size, 4})
comm:allgather(w:copy_to_host(), all)
local t = all:totable()
local same = true
for r = 2, comm.size do
  for j = 1, 4 do same = same and t[r][j] == t[1][j] end
end
local want = {2, -1, 0.5, 3}
local close = true
for j = 1, 4 do close = close and math.abs(t[1][j] - want[j]) < 1e-6 end
if comm.rank == 1 then
  print(("w = {%.9f, %.9f, %.9f, %.9f}"):format(t[1][1], t[1][2], t[1][3], t[1][4]))
  C.check(same, "every process has the same weights")
  C.check(close, "w within 1e-6 of {2, -1, 0.5, 3}")
elseif not (same and close) then
  C.check(false, "rank " .. comm.rank .. "'s weights")
end
