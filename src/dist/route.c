/*
** route: which engine a call takes (NCCL for device and managed arrays on
** a communicator whose every rank has NCCL, MPI otherwise), and the NCCL
** side of a communicator: its NCCL communicator made at the first
** collective that goes there (the unique id broadcast over MPI), each
** call queued and waited for, a failure raised on every rank.
** nccl_engine.c makes the NCCL calls themselves.
*/
#include <stdio.h>
#include <string.h>

#include <mpi.h>

#include "dist.h"

/* luacuda's backend and current device (0-based), for the engine's
** choice: pushes them */
static int backend_device(lua_State *L) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "luacuda");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "backend");
  lua_call(L, 0, 1);
  lua_getfield(L, -2, "current_device");
  lua_call(L, 0, 1);
  return 2;
}

/* The current device, 0-based; -1 where luacuda cannot say, and why into
** err (when not NULL) */
static int current_device(lua_State *L, char *err, size_t len) {
  lua_pushcfunction(L, backend_device);
  if (lua_pcall(L, 0, 2, 0) != LUA_OK) {
    if (err) snprintf(err, len, "%s", lua_tostring(L, -1));
    lua_pop(L, 1);
    return -1;
  }
  int d = (int)lua_tointeger(L, -1) - 1;
  lua_pop(L, 2);
  return d;
}

/* luacuda.trim_pool(): pushes nothing */
static int trim_pool(lua_State *L) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "luacuda");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "trim_pool");
  lua_call(L, 0, 0);
  return 0;
}

/* Whether this rank can take NCCL: the CUDA backend, and NCCL loads. A
** communicator's engine is NCCL where every rank can (dist_push_comm). */
bool dist_nccl_possible(lua_State *L) {
  char why[MSGLEN];
  bool can = false;
  lua_pushcfunction(L, backend_device);
  if (lua_pcall(L, 0, 2, 0) == LUA_OK) {
    const char *b = lua_tostring(L, -2);
    can = b && strcmp(b, "cuda") == 0 && lc_nccl_load(why, sizeof why);
    lua_pop(L, 2);
  } else {
    lua_pop(L, 1);
  }
  return can;
}

/* Which engine runs a call on the n arrays as: NCCL where the
** communicator has it and every array is device or managed memory of a
** dtype NCCL takes for kind; else MPI, which takes device arrays only
** where it says it can and the call has no stream (dist.lua stages them
** otherwise), and a stream only with MPI_THREAD_MULTIPLE. Into the
** header, which the ranks agree on. */
bool dist_route(lua_State *L, dcomm *c, header *h, lc_nccl_kind kind, const arr *const *as,
                int n, const dopts *o) {
  /* send and recv cannot make NCCL's communicator (every rank takes part) */
  bool nccl = c->nccl_on && (c->nccl != NULL || (kind != LC_NCCL_SEND && kind != LC_NCCL_RECV));
  for (int i = 0; i < n; i++) {
    if (as[i]->info.dtype == NULL) return false;     /* its error is in h already */
    nccl = nccl && (as[i]->info.kind == LUACUDA_DEVICE || as[i]->info.kind == LUACUDA_MANAGED) &&
           lc_nccl_takes(kind, as[i]->info.dtype);
  }
  h->f[F_ENGINE] = nccl;
  if (nccl) {
    /* NCCL's communicator has one device: its, or the current one, where
    ** it will be made */
    int want = c->nccl ? c->nccl_device : current_device(L, NULL, 0);
    for (int i = 0; i < n; i++)
      if (as[i]->info.kind == LUACUDA_DEVICE && want >= 0 && as[i]->info.device - 1 != want)
        dist_header_error(h, "%s is on device %d, but NCCL's communicator is on device %d (the "
                          "device current at its first collective)", as[i]->what,
                          as[i]->info.device, want + 1);
    return true;
  }
  /* MPI reads device memory where it says it can, but not in a host
  ** function on a stream (which must not call CUDA) */
  bool device_ok = c->cuda_aware && !o->has_stream;
  for (int i = 0; i < n; i++)
    if (as[i]->info.kind == LUACUDA_DEVICE && !device_ok)
      dist_header_error(h, "%s is a device array: call the method on the communicator, which "
                        "stages it", as[i]->what);
  if (o->has_stream && dist_thread_level() < MPI_THREAD_MULTIPLE)
    dist_header_error(h, "stream= on the MPI engine needs MPI_THREAD_MULTIPLE (the host program "
                      "started MPI with less): synchronize the stream, then call without it");
  return false;
}

/* After a failure on some rank: the NCCL calls the others queued would
** never complete (or would pair with the next ones), so the communicator
** is aborted, and the next collective makes a new one on every rank. */
static void drop_nccl(dcomm *c, const char *why) {
  if (c->nccl == NULL) return;
  lc_nccl_abort(c->nccl, why);
  lc_nccl_free(c->nccl);
  c->nccl = NULL;
}

/* NCCL's communicator of c, made at the first collective that goes to
** NCCL (every rank is there: they agreed on the engine), on each rank's
** device current then: rank 1's unique id, broadcast over MPI, and
** ncclCommInitRank. A failure is raised on every rank. */
static void start_nccl(lua_State *L, dcomm *c, const char *fname) {
  if (c->nccl) return;
  char err[MSGLEN];
  header h;
  dist_header_init(&h, K_ENGINE);
  int device = current_device(L, err, sizeof err);
  if (device < 0) dist_header_error(&h, "%s", err);
  char id[LC_NCCL_ID_BYTES] = {0};
  if (c->rank == 0 && !lc_nccl_unique_id(id, err, sizeof err)) dist_header_error(&h, "%s", err);
  char msg[MSGLEN + 16];
  if (dist_step_exchange(L, c, &h, fname, msg, sizeof msg) < 0) dist_raise(L, fname, "%s", msg);
  dist_check_mpi(L, MPI_Bcast(id, LC_NCCL_ID_BYTES, MPI_BYTE, 0, c->ctl), fname, "MPI_Bcast");
  dist_header_init(&h, K_ENGINE);
  /* NCCL's buffers take device memory, which luacuda's pool may hold idle
  ** (it keeps what is freed): given back first, once per communicator. Not
  ** a retry after a failure: the other ranks' ncclCommInitRank wait for
  ** this one. A failure here is ncclCommInitRank's to report. */
  lua_pushcfunction(L, trim_pool);
  if (lua_pcall(L, 0, 0, 0) != LUA_OK) lua_pop(L, 1);
  c->nccl = lc_nccl_init(c->size, id, c->rank, device, err, sizeof err);
  c->nccl_device = device;
  if (c->nccl == NULL) dist_header_error(&h, "%s", err);
  if (dist_step_exchange(L, c, &h, fname, msg, sizeof msg) < 0) {
    /* a rank's failure: every rank starts again at the next call */
    drop_nccl(c, msg);
    dist_raise(L, fname, "%s", msg);
  }
}

/* How a step of an NCCL call went on every rank (send and recv: on both):
** a failure is raised on all of them, after the communicator is aborted
** (see dist_run_nccl). */
static void nccl_verdict(lua_State *L, dcomm *c, const lc_nccl_call *call, const char *err,
                         const char *fname) {
  bool pair = call->kind == LC_NCCL_SEND || call->kind == LC_NCCL_RECV;
  char msg[VERDICTLEN];
  dist_verdict(L, c, err, pair, call->root, call->kind == LC_NCCL_SEND, fname, msg, sizeof msg);
  if (!msg[0]) return;
  if (!pair) drop_nccl(c, msg);
  else if (c->nccl) lc_nccl_abort(c->nccl, msg);
  dist_raise(L, fname, "%s", msg);
}

/* The call queued on NCCL, on opts.stream (the arrays u marked as used
** by it), or on luacuda's stream (luacuda.host_stream(), the default
** stream unless the host program set one, then ordered after the work
** queued on non-blocking streams: luacuda_getstream) and waited for. A rank's
** failure to queue, or to wait, is raised on every rank (send and recv:
** on both), after the communicator is aborted there: the calls the other
** ranks queued would never complete. A collective's failure drops NCCL's
** communicator on every rank, and the next collective makes a new one; a
** send's or recv's aborts it on both ranks, whose next collective then
** fails on every rank. */
void dist_run_nccl(lua_State *L, dcomm *c, const lc_nccl_call *call, const dopts *o,
                   const uses *u, const char *fname) {
  bool pair = call->kind == LC_NCCL_SEND || call->kind == LC_NCCL_RECV;
  if (!pair) start_nccl(L, c, fname);    /* a send or recv finds it started */
  char err[MSGLEN] = "";
  void *stream = o->has_stream ? o->stream : luacuda_getstream(L);
  if ((!o->has_stream || dist_use_arrays(L, o, u, err, sizeof err)) &&
      lc_nccl_queue(c->nccl, call, stream, err, sizeof err)) {
    err[0] = '\0';
    if (o->has_stream) dist_queued_arrays(L, o, u);
  }
  nccl_verdict(L, c, call, err, fname);            /* every rank queued it */
  if (o->has_stream) return;
  if (lc_nccl_wait(c->nccl, stream, err, sizeof err)) err[0] = '\0';
  nccl_verdict(L, c, call, err, fname);            /* every rank's is done */
}
