/*
** bench/native_allreduce.c: the baseline of bench/dist.lua, MPI_Allreduce
** called from C on a malloc'd float buffer, as a C program does it. It is
** a Lua module (require "bench.native_allreduce", built by the Makefile
** with mpicc into build/bench/native_allreduce.so) so that the bench times
** it in the same processes and the same mpirun job as luacuda's
** comm:allreduce, the two alternating: both sides see the same load and
** the same MPI. It never starts MPI: the bench's dist.init() has.
**
**   native.buffer(n)     n float32 elements (malloc'd, freed by the collector)
**   buf:fill(v)          every element v (outside the timing)
**   buf:allreduce()      MPI_Barrier, then MPI_Allreduce(MPI_IN_PLACE, sum)
**                        timed alone: this rank's seconds
**   buf:get(i)           element i (1-based), to check the sum
**   native.barrier()     MPI_Barrier, before each timed luacuda call
**   native.max(t)        the greatest t over the ranks (the job's time)
*/
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <mpi.h>

#include "lauxlib.h"
#include "lua.h"

#define BUFFER_MT "bench.native_allreduce.buffer"

typedef struct buffer {
  float *data;
  lua_Integer n;
} buffer;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Our own copy of MPI_COMM_WORLD, as luacuda.dist makes its own. */
static MPI_Comm comm = MPI_COMM_NULL;

static MPI_Comm world(lua_State *L) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) luaL_error(L, "native_allreduce: MPI is not running (call dist.init() first)");
  if (comm == MPI_COMM_NULL && MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS)
    luaL_error(L, "native_allreduce: MPI_Comm_dup failed");
  return comm;
}

static void check(lua_State *L, int rc, const char *call) {
  if (rc != MPI_SUCCESS) luaL_error(L, "native_allreduce: %s failed (%d)", call, rc);
}

static int buffer_new(lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  luaL_argcheck(L, n > 0 && n <= INT32_MAX, 1, "1 to 2^31 - 1 elements");
  buffer *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->data = NULL;
  b->n = 0;
  luaL_setmetatable(L, BUFFER_MT);
  b->data = malloc(sizeof(float) * (size_t)n);
  if (b->data == NULL) return luaL_error(L, "native_allreduce: out of memory");
  b->n = n;
  return 1;
}

static int buffer_gc(lua_State *L) {
  buffer *b = luaL_checkudata(L, 1, BUFFER_MT);
  free(b->data);
  b->data = NULL;
  return 0;
}

static int buffer_fill(lua_State *L) {
  buffer *b = luaL_checkudata(L, 1, BUFFER_MT);
  float v = (float)luaL_checknumber(L, 2);
  for (lua_Integer i = 0; i < b->n; i++) b->data[i] = v;
  return 0;
}

static int buffer_get(lua_State *L) {
  buffer *b = luaL_checkudata(L, 1, BUFFER_MT);
  lua_Integer i = luaL_checkinteger(L, 2);
  luaL_argcheck(L, i >= 1 && i <= b->n, 2, "out of range");
  lua_pushnumber(L, b->data[i - 1]);
  return 1;
}

static int buffer_allreduce(lua_State *L) {
  buffer *b = luaL_checkudata(L, 1, BUFFER_MT);
  MPI_Comm c = world(L);
  check(L, MPI_Barrier(c), "MPI_Barrier");
  double t0 = now();
  int rc = MPI_Allreduce(MPI_IN_PLACE, b->data, (int)b->n, MPI_FLOAT, MPI_SUM, c);
  double t = now() - t0;
  check(L, rc, "MPI_Allreduce");
  lua_pushnumber(L, t);
  return 1;
}

static int barrier(lua_State *L) {
  check(L, MPI_Barrier(world(L)), "MPI_Barrier");
  return 0;
}

static int max_over_ranks(lua_State *L) {
  double t = luaL_checknumber(L, 1), m = 0;
  check(L, MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, world(L)), "MPI_Allreduce");
  lua_pushnumber(L, m);
  return 1;
}

int luaopen_bench_native_allreduce(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"fill", buffer_fill}, {"get", buffer_get}, {"allreduce", buffer_allreduce}, {NULL, NULL}};
  static const luaL_Reg funcs[] = {
    {"buffer", buffer_new}, {"barrier", barrier}, {"max", max_over_ranks}, {NULL, NULL}};
  luaL_newmetatable(L, BUFFER_MT);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, buffer_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  luaL_newlib(L, funcs);
  return 1;
}
