-- bench/array_math.lua: array math on the simulator against native C loops,
-- in one run. The simulator runs array math's loops on the stream's
-- executor thread, one thread, so each ratio is per worker thread against
-- one core running the same work as a plain loop compiled by $CC -O2 (as
-- the module is). Each figure below is a block of its own: its native
-- loop, its timing, its line.
-- Prints "name: value (target: ...)" and "bench: N of M targets met".
local luacuda = require "luacuda"
local B = require "bench.common"
B.results("array_math")

if luacuda.backend() ~= "sim" then
  print("bench: the array math benchmark needs the sim backend (LUACUDA_BACKEND=sim)")
  print("bench: 0 of 0 targets met")
  return
end

local figures, met = {}, 0
-- a ratio or a time against its target; dir ">=" or "<="
local function figure(name, value, target, dir, unit)
  local pass = dir == ">=" and value >= target or dir == "<=" and value <= target
  if pass then met = met + 1 end
  figures[#figures + 1] = ("%s: %.3g%s (target: %s %g%s)"):format(name, value, unit, dir, target, unit)
  B.record(name, value, target, dir)
end

-- Build and run a native C program (source text, arguments): its output.
local function native(source, args)
  local src, exe = os.tmpname() .. ".c", os.tmpname()
  local f = assert(io.open(src, "w"))
  f:write(source)
  f:close()
  local ok, out = B.sh(("%s -std=c11 -O2 -o %s %s"):format(os.getenv("CC") or "cc", exe, src))
  os.remove(src)
  assert(ok, out)
  ok, out = B.sh(exe .. " " .. args)
  os.remove(exe)
  assert(ok, out)
  return out
end

-- ---- a + b over 2^24 float32 device arrays ----------------------------------------
do
  local N = 1 << 24
  local out = native([[
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
/* out of line, so that the loop is not folded into the timing */
__attribute__((noinline)) void add(long n, const float *a, const float *b, float *c) {
  for (long i = 0; i < n; i++) c[i] = a[i] + b[i];
}
int main(int argc, char **argv) {
  long n = atol(argv[1]);
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  for (long i = 0; i < n; i++) { a[i] = (float)i; b[i] = 1.0f; c[i] = 0.0f; }
  double best = 1e300, best_new = 1e300;
  for (int r = 0; r < 7; r++) {
    double t0 = now();
    add(n, a, b, c);
    double t = now() - t0;
    if (t < best) best = t;
  }
  /* the same with the output made for each sum and freed, as a + b does */
  volatile float sink = 0;
  for (int r = 0; r < 7; r++) {
    double t0 = now();
    float *d = malloc(n * sizeof *d);
    add(n, a, b, d);
    sink += d[n - 1];
    free(d);
    double t = now() - t0;
    if (t < best_new) best_new = t;
  }
  printf("%.9f %.9f %g\n", best, best_new, c[n - 1] + sink);
  return 0;
}
]], tostring(N))
  local t_native, t_native_new = out:match("^(%S+) (%S+)")
  t_native, t_native_new = tonumber(t_native), tonumber(t_native_new)
  local a = luacuda.to_device(luacuda.arange(N, "float32"))
  local b = luacuda.to_device(luacuda.full(N, 1.0, "float32"))
  -- a new array each time, as a + b makes it (freed before the next)
  local t_new = B.best(function()
    local c = a + b
    luacuda.synchronize()
    c:close()
  end)
  -- into an output made once
  local c = luacuda.device_array(N, "float32")
  local t_out = B.best(function() luacuda.add(a, b, c) end)
  assert(c[N] == N, "a + b: wrong result")
  print(("a + b of 2^24 float32: %.2f ms (new array), %.2f ms (out=); native loop %.2f ms "
         .. "(malloc'd output each time), %.2f ms (one output)")
        :format(t_new * 1e3, t_out * 1e3, t_native_new * 1e3, t_native * 1e3))
  figure("a + b simulator/native per worker thread", t_native_new / t_new, 0.5, ">=", "x")
  figure("add(a, b, out) simulator/native per worker thread", t_native / t_out, 0.5, ">=", "x")
  a:close()
  b:close()
  c:close()
end

-- ---- a strided a + b:transpose() on 4096 x 4096 float32 ---------------------------
do
  local M = 4096
  local out = native([[
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
/* c = a + b transposed, walking c and a in order and b across its rows */
__attribute__((noinline)) void add_t(long m, const float *a, const float *b, float *c) {
  for (long i = 0; i < m; i++)
    for (long j = 0; j < m; j++) c[i * m + j] = a[i * m + j] + b[j * m + i];
}
int main(int argc, char **argv) {
  long m = atol(argv[1]), n = m * m;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  for (long i = 0; i < n; i++) { a[i] = (float)(i % 1000); b[i] = 1.0f; c[i] = 0.0f; }
  double best = 1e300;
  for (int r = 0; r < 5; r++) {
    double t0 = now();
    add_t(m, a, b, c);
    double t = now() - t0;
    if (t < best) best = t;
  }
  printf("%.9f %g\n", best, c[n - 1]);
  return 0;
}
]], tostring(M))
  local t_native = tonumber(out:match("^(%S+)"))
  local a = luacuda.to_device(luacuda.arange(M * M, "float32"):reshape(M, M))
  local b = luacuda.to_device(luacuda.full({M, M}, 1.0, "float32"))
  local c = luacuda.device_array({M, M}, "float32")
  local bt = b:transpose()
  local t_sim = B.best(function() luacuda.add(a, bt, c) end)
  assert(c[{M, M}] == M * M, "a + b:transpose(): wrong result")
  print(("a + b:transpose() of 4096 x 4096 float32: %.1f ms, native loop %.1f ms")
        :format(t_sim * 1e3, t_native * 1e3))
  figure("strided a + b:transpose() simulator/native per worker thread", t_native / t_sim, 0.25, ">=", "x")
  a:close()
  b:close()
  c:close()
end

-- ---- the first a + b in a fresh process ---------------------------------------------
do
  local child = os.tmpname()
  local f = assert(io.open(child, "w"))
  f:write([[
local luacuda = require "luacuda"
local a = luacuda.to_device({1, 2, 3, 4}, {dtype = "float32"})
local b = luacuda.to_device({5, 6, 7, 8}, {dtype = "float32"})
luacuda.synchronize()
local t0 = luacuda.clock()
local c = a + b
luacuda.synchronize()
local t = luacuda.clock() - t0
assert(c:copy_to_host()[4] == 12)
print(("%.9f"):format(t))
]])
  f:close()
  local lua = arg and arg[-1] or "lua5.4"
  local best = math.huge
  for _ = 1, B.REPEAT do
    local ok, out = B.sh(("%s %s"):format(lua, child))
    assert(ok, out)
    best = math.min(best, tonumber(out:match("(%S+)%s*$")))
  end
  os.remove(child)
  print(("first a + b in a fresh process (two 4-element device arrays, synchronize included): %.3f ms")
        :format(best * 1e3))
  figure("sim first a + b in a fresh process", best * 1e3, 5, "<=", " ms")
end

for _, line in ipairs(figures) do print(line) end
print(("bench: %d of %d targets met"):format(met, #figures))
