/*
** dist_host_test: a host program that starts MPI itself, with less than
** MPI_THREAD_MULTIPLE, then runs luacuda.dist scripts in Lua states of its
** own: dist.init joins that MPI, collectives work, and stream= on the MPI
** engine (which needs MPI_THREAD_MULTIPLE) is an error on every rank. The
** program finalises MPI itself. spec/dist_spec.lua runs it under mpirun.
*/
#include <mpi.h>
#include <stdio.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"
#include "luacuda.h"

#include "unit.h"

static int world;      /* MPI_COMM_WORLD's size */

static lua_State *new_state(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luacuda_openlibs(L);
  lua_pushinteger(L, world);
  lua_setglobal(L, "WORLD");
  return L;
}

/* Run Lua code: 0, or -1 with the error in err. */
static int run(lua_State *L, const char *code) {
  int rc = luaL_dostring(L, code) == LUA_OK ? 0 : -1;
  if (rc) snprintf(err, sizeof err, "%s", lua_tostring(L, -1));
  lua_settop(L, 0);
  return rc;
}

static int test_joins_the_hosts_mpi(void) {
  lua_State *L = new_state();
  CHECK_OK(run(L, "local luacuda = require 'luacuda'\n"
                  "local comm = require('luacuda.dist').init()\n"
                  "assert(comm.size == WORLD, 'size ' .. comm.size)\n"
                  "local x = luacuda.full({4}, comm.rank, 'int32')\n"
                  "comm:allreduce(x)\n"
                  "assert(x[1] == WORLD * (WORLD + 1) // 2 and x[4] == x[1], 'sum ' .. x[1])"));
  lua_close(L);
  return 0;
}

static int test_stream_needs_thread_multiple(void) {
  lua_State *L = new_state();
  CHECK_ERR(run(L, "local luacuda = require 'luacuda'\n"
                   "local comm = require('luacuda.dist').init()\n"
                   "comm:allreduce(luacuda.zeros({4}), {stream = luacuda.stream()})"),
            "luacuda.dist.allreduce: on rank 1: "
            "stream= on the MPI engine needs MPI_THREAD_MULTIPLE (the host program started MPI with less): synchronize the stream, then call without it");
  CHECK_OK(run(L, "local luacuda = require 'luacuda'\n"
                  "local comm = require('luacuda.dist').init()\n"
                  "local x = luacuda.ones({2})\n"
                  "comm:allreduce(x)\n"
                  "assert(x[2] == WORLD, 'after the error: ' .. x[2])"));
  lua_close(L);
  return 0;
}

#define T(name) { #name, test_##name }
static const unit_test tests[] = {
  T(joins_the_hosts_mpi), T(stream_needs_thread_multiple),
};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

int main(int argc, char **argv) {
  int provided;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) return 2;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int rc = unit_main("dist_host_test", tests, NTESTS, argc, argv);
  MPI_Finalize();
  return rc;
}
