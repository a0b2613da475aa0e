/*
** threads_test: several lua_States on several OS threads at once, each
** with its own arrays, streams and modules, through the public Lua API.
** Every thread compiles one source that all threads share (the compile
** caches must make it one compilation) and one of its own, then, ITERATIONS
** times, launches both and copies arrays between host tables, pinned,
** device and host memory, synchronously and on its own streams, checking
** every value that comes back (one copy through luacuda.mapped, read
** through the host array under it). The states are closed with arrays, streams
** and modules still alive. Where there are several devices
** (LUACUDA_SIM_DEVICES), thread i works on device (i - 1) mod n + 1, chosen
** once with select_device: the current device is per thread, so each
** thread's stays its own while the others choose theirs, and its arrays
** are on it.
**
**   threads_test [ITERATIONS [THREADS]]   (defaults 1000 and 4)
**
** The module is loaded the plain way, by require "luacuda", from the
** in-tree lua/ and LC_BUILD_DIR (or $LUACUDA_BUILD). Prints one summary
** line and exits 0 only when every thread checked every value.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#ifndef LC_BUILD_DIR
#define LC_BUILD_DIR "build"
#endif

#define MAX_THREADS 16

/* The work of one thread: (id, iterations) -> number of values checked.
** A wrong value raises an error naming the iteration and the element. */
static const char script[] =
  "local id, iterations = ...\n"
  "local luacuda = require 'luacuda'\n"
  "local mine = (id - 1) % #luacuda.devices() + 1\n"
  "luacuda.select_device(mine)\n"
  "local N = 64\n"
  "local SHARED = [[\n"
  "extern \"C\" __global__ void axpy(int n, float a, const float *x, float *y) {\n"
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
  "  if (i < n) y[i] = a * x[i] + y[i];\n"
  "}\n"
  "]]\n"
  /* the thread's own source: its id is part of the text; the barrier
  ** makes the blocks' threads meet, so it runs on fibers */
  "local OWN = ([[\n"
  "extern \"C\" __global__ void blocksum(const int *x, int *out) {\n"
  "  SHARED_ARRAY(int, s, 32);\n"
  "  int t = threadIdx.x;\n"
  "  s[t] = x[blockIdx.x * 32 + t];\n"
  "  syncthreads();\n"
  "  for (int k = 16; k > 0; k /= 2) { if (t < k) s[t] += s[t + k]; syncthreads(); }\n"
  "  if (t == 0) out[blockIdx.x] = s[0] + %d;\n"
  "}\n"
  "]]):format(id * 1000)\n"
  "local checked = 0\n"
  "local function expect(what, i, j, want, got)\n"
  "  if got ~= want then\n"
  "    error(('thread %d iteration %d: %s[%d] is %s, expected %s')\n"
  "          :format(id, i, what, j, tostring(got), tostring(want)), 0)\n"
  "  end\n"
  "  checked = checked + 1\n"
  "end\n"
  "local s, px, py, pout, dx, dy, ev, hm, mm\n"
  "for i = 1, iterations do\n"
  /* compiled every time: after the first, a hit in the shared cache */
  "  local axpy = luacuda.compile(SHARED).axpy\n"
  "  local blocksum = luacuda.compile(OWN, {name = 'own' .. id .. '.cu'}).blocksum\n"
  /* fresh streams, events and pinned buffers now and then; the old ones
  ** are left to the collector, which frees them on this thread */
  "  if i % 50 == 1 then\n"
  "    s, ev = luacuda.stream(), luacuda.event()\n"
  "    px = luacuda.pinned_array(N, 'float32')\n"
  "    py = luacuda.pinned_array(N, 'float32')\n"
  "    pout = luacuda.pinned_array(N, 'float32')\n"
  "    dx = luacuda.device_array(N, 'float32')\n"
  "    dy = luacuda.device_array_like(dx)\n"
  "    hm = luacuda.zeros(N, 'float32')\n"
  "    mm = luacuda.mapped(hm)\n"
  "    collectgarbage('step')\n"
  "  end\n"
  /* synchronous: tables to device, launch on the default stream, back */
  "  local x, y = {}, {}\n"
  "  for j = 1, N do x[j] = (id * 7 + i + j) % 97; y[j] = j * 2 end\n"
  "  local hx = luacuda.array(x, 'float32')\n"
  "  local d1 = luacuda.to_device(hx)\n"
  "  if luacuda.current_device() ~= mine or d1.device ~= mine then\n"
  "    error(('thread %d iteration %d: device %d current, array on %d, expected %d')\n"
  "          :format(id, i, luacuda.current_device(), d1.device, mine), 0)\n"
  "  end\n"
  "  local d2 = luacuda.to_device(luacuda.array(y, 'float32'))\n"
  "  axpy[{1, N}](N, 3, d1, d2)\n"
  "  local r = d2:copy_to_host()\n"
  "  for j = 1, N do expect('sync', i, j, 3 * x[j] + y[j], r[j]) end\n"
  /* array math on host arrays alike: their dtypes' table is made once a
  ** process, by whichever thread comes first (ufunc.c, pthread_once) */
  "  local h2 = hx + hx\n"
  "  for j = 1, N do expect('math', i, j, 2 * x[j], h2[j]) end\n"
  /* on the thread's stream, through pinned memory, timed by its event */
  "  for j = 1, N do px[j] = x[j] + id; py[j] = i % 13 end\n"
  "  dx:copy_to_device(px, s)\n"
  "  dy:copy_to_device(py, s)\n"
  "  axpy[{2, N // 2, s}](N, -1, dx, dy)\n"
  "  dy:copy_to_host(pout, s)\n"
  "  ev:record(s)\n"
  "  ev:synchronize()\n"
  "  for j = 1, N do expect('stream', i, j, i % 13 - (x[j] + id), pout[j]) end\n"
  /* a copy queued into mapped(hm), read through hm: the wait is found by
  ** the memory, on a list every thread's states share (pending.c) */
  "  dy:copy_to_host(mm, s)\n"
  "  for j = 1, N do expect('alias', i, j, i % 13 - (x[j] + id), hm[j]) end\n"
  /* the thread's own kernel: two blocks of 32, reduced in shared memory */
  "  local v = {}\n"
  "  for j = 1, 64 do v[j] = (i * j + id) % 10 end\n"
  "  local dv = luacuda.to_device(luacuda.array(v, 'int32'), s)\n"
  "  local sums = luacuda.device_array(2, 'int32', {stream = s})\n"
  "  blocksum[{2, 32, s}](dv, sums)\n"
  "  local hs = sums:copy_to_host(nil, s)\n"
  "  s:synchronize()\n"
  "  for b = 1, 2 do\n"
  "    local want = id * 1000\n"
  "    for j = (b - 1) * 32 + 1, b * 32 do want = want + v[j] end\n"
  "    expect('blocksum', i, b, want, hs[b])\n"
  "  end\n"
  /* a device-to-device copy and a synchronous copy back */
  "  local d3 = luacuda.device_array_like(d1)\n"
  "  d3:copy_to_device(d1)\n"
  "  local r3 = d3:copy_to_host()\n"
  "  for j = 1, N do expect('d2d', i, j, x[j], r3[j]) end\n"
  "end\n"
  "luacuda.synchronize()\n"
  "return checked\n";

typedef struct job {
  int id, iterations;
  pthread_barrier_t *start;
  long long checked;
  char error[1024];
} job;

static const char *build_dir(void) {
  const char *b = getenv("LUACUDA_BUILD");
  return b && *b ? b : LC_BUILD_DIR;
}

/* package.path and cpath point at the tree, as the specs' LUA_PATH does */
static int set_paths(lua_State *L) {
  lua_getglobal(L, "package");
  lua_pushstring(L, "lua/?.lua;lua/?/init.lua");
  lua_setfield(L, -2, "path");
  lua_pushfstring(L, "%s/?.so", build_dir());
  lua_setfield(L, -2, "cpath");
  lua_pop(L, 1);
  return 0;
}

static void *run(void *arg) {
  job *j = arg;
  lua_State *L = luaL_newstate();
  if (L == NULL) {
    snprintf(j->error, sizeof j->error, "thread %d: cannot create a state", j->id);
    pthread_barrier_wait(j->start);
    return NULL;
  }
  luaL_openlibs(L);
  set_paths(L);
  int rc = luaL_loadbuffer(L, script, sizeof script - 1, "=threads_test");
  pthread_barrier_wait(j->start);     /* all threads compile at once */
  if (rc == LUA_OK) {
    lua_pushinteger(L, j->id);
    lua_pushinteger(L, j->iterations);
    rc = lua_pcall(L, 2, 1, 0);
  }
  if (rc != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    snprintf(j->error, sizeof j->error, "thread %d: %s", j->id, msg ? msg : "(no message)");
  } else {
    j->checked = (long long)lua_tointeger(L, -1);
  }
  lua_close(L);                       /* the state's last arrays and streams go here */
  return NULL;
}

static long arg(char **argv, int i, long dflt, long max) {
  if (argv[i] == NULL) return dflt;
  char *end;
  long v = strtol(argv[i], &end, 10);
  if (*end != '\0' || v < 1 || v > max) {
    fprintf(stderr, "threads_test: argument %d must be a count from 1 to %ld, got '%s'\n", i,
            max, argv[i]);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  (void)argc;
  int iterations = (int)arg(argv, 1, 1000, 1000000);
  int nthreads = argv[1] ? (int)arg(argv, 2, 4, MAX_THREADS) : 4;
  job jobs[MAX_THREADS];
  pthread_t threads[MAX_THREADS];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)nthreads);
  for (int i = 0; i < nthreads; i++) {
    jobs[i] = (job){.id = i + 1, .iterations = iterations, .start = &start};
    if (pthread_create(&threads[i], NULL, run, &jobs[i]) != 0) {
      fprintf(stderr, "threads_test: cannot start thread %d\n", i + 1);
      return 1;
    }
  }
  int failed = 0;
  long long total = 0;
  /* each iteration checks 64 + 64 + 64 + 64 + 2 + 64 values */
  long long per_thread = (long long)iterations * (64 + 64 + 64 + 64 + 2 + 64);
  for (int i = 0; i < nthreads; i++) {
    pthread_join(threads[i], NULL);
    if (jobs[i].error[0]) {
      fprintf(stderr, "%s\n", jobs[i].error);
      failed++;
    } else if (jobs[i].checked != per_thread) {
      fprintf(stderr, "thread %d: checked %lld values, expected %lld\n", jobs[i].id,
              jobs[i].checked, per_thread);
      failed++;
    }
    total += jobs[i].checked;
  }
  pthread_barrier_destroy(&start);
  printf("threads_test: %d threads x %d iterations, %lld values checked, %d thread%s failed\n",
         nthreads, iterations, total, failed, failed == 1 ? "" : "s");
  return failed ? 1 : 0;
}
