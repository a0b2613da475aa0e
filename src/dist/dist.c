/*
** dist: luacuda.dist's MPI engine, the C module luacuda/dist_mpi.so.
** Built with mpicc only where MPI is (the Makefile's DIST_LIB), and linked
** with core.so, whose public C API (src/luacuda.h) is its one way into
** arrays: core.so itself never needs MPI. lua/luacuda/dist.lua wraps the
** methods here: it hands them C-contiguous, host-accessible arrays (a
** strided view or a device array goes through a contiguous host copy).
** Its files, one concern each, are listed in dist.h.
**
** Every call starts with the agreement of its ranks on a header (which
** function, op, root, dtype, shape, the chunk of bigcount.c, and whether
** this rank found an error in its own arguments), over the process's
** control channel (agree.c, whose head says how): a rank's bad argument,
** or ranks that disagree, raise the same error on every rank instead of a
** hang or corrupt data; send and recv exchange their headers likewise.
** Ranks in different calls (another kind, another communicator, another
** peer) raise the same error on both where the two calls have these two
** ranks alone, and abort the job with a message naming both calls
** otherwise; so does a rank in a call with a rank that has ended.
**
** Collectives on a stream (stream=) go to NCCL where the engine is NCCL;
** on MPI they are queued too: the MPI call runs in a host function on the
** stream (luacuda_queuehost), once the stream's work before it is done,
** and the stream's later work waits for it. dist.lua orders the
** collectives queued through MPI one after the other, whatever their
** streams (an event chain), so every rank makes its MPI calls in the
** order of the script's calls; a collective without a stream first waits
** for the queued ones. The agreement goes over the control channel, and
** the steps after it among ranks known to be in the same call (how
** queueing went, NCCL's start) over a communicator of each communicator's
** own (ctl); only the script's thread uses either, so a later call is
** agreed while a queued MPI call may be running on another thread:
** MPI_THREAD_MULTIPLE.
**
** A process whose exit status is not 0 (lua5.4 exits with 1 after printing
** an uncaught error) calls MPI_Abort on its way out (an on_exit handler),
** so the whole job stops with that rank's message; a clean exit calls
** MPI_Finalize, where the control channel tells the other ranks that this
** one has ended (agree.h), so that one waiting for it aborts the job.
*/
#include <stdarg.h>
#include <stdio.h>

#include <mpi.h>

#include "dist.h"

/* ---- errors ------------------------------------------------------------ */

int dist_raise(lua_State *L, const char *fname, const char *fmt, ...) {
  char cause[MSGLEN * 2];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cause, sizeof cause, fmt, ap);
  va_end(ap);
  lua_pushfstring(L, "luacuda.dist.%s: %s", fname, cause);
  return lua_error(L);
}

void dist_check_mpi(lua_State *L, int rc, const char *fname, const char *call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "error %d", rc);
  dist_raise(L, fname, "MPI call %s failed: %s", call, text);
}

/* ---- the module -------------------------------------------------------- */

/* init(): MPI started (or joined), and this state's copy of
** MPI_COMM_WORLD, the same object at every call */
static int dist_init(lua_State *L) {
  char err[MSGLEN];
  if (!dist_ensure_mpi(err, sizeof err) || !lc_agree_open(dist_kind_names, err, sizeof err))
    dist_raise(L, "init", "%s", err);
  if (lua_getfield(L, LUA_REGISTRYINDEX, "luacuda.dist.world") == LUA_TUSERDATA) return 1;
  lua_pop(L, 1);
  MPI_Comm world;
  dist_check_mpi(L, MPI_Comm_dup(MPI_COMM_WORLD, &world), "init", "MPI_Comm_dup");
  dist_push_comm(L, world, "init");
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "luacuda.dist.world");
  return 1;
}

/* require "luacuda.dist_mpi": {init = , methods = } (lua/luacuda/dist.lua
** wraps the collectives of methods, which take contiguous host arrays) */
LUACUDA_API int luaopen_luacuda_dist_mpi(lua_State *L) {
  lua_getglobal(L, "require");     /* luacuda's arrays' metatable registered */
  lua_pushliteral(L, "luacuda");
  lua_call(L, 1, 0);
  lua_newtable(L);
  if (luaL_newmetatable(L, COMM_MT)) {
    lua_newtable(L);
    luaL_setfuncs(L, dist_comm_methods, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "methods");
    lua_pushcclosure(L, dist_comm_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, dist_comm_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, dist_comm_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, "luacuda.dist.comm");
    lua_setfield(L, -2, "__metatable");
  }
  lua_getfield(L, -1, "methods");
  lua_setfield(L, -3, "methods");
  lua_pop(L, 1);
  lua_pushcfunction(L, dist_init);
  lua_setfield(L, -2, "init");
  return 1;
}
