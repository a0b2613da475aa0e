/*
** comm: the communicator userdata (luacuda.dist.comm): made by every rank
** of an MPI communicator together (its id and engine agreed), its fields
** (comm.rank, comm.engine, ...), and its release.
*/
#include <string.h>

#include <mpi.h>

#include "dist.h"

dcomm *dist_check_comm(lua_State *L, int idx, const char *fname) {
  dcomm *c = luaL_testudata(L, idx, COMM_MT);
  if (c == NULL)
    dist_raise(L, fname, "expected a communicator (call it as comm:%s(...)), got %s", fname,
               luaL_typename(L, idx));
  if (c->comm == MPI_COMM_NULL) dist_raise(L, fname, "the communicator was freed");
  return c;
}

/* Push a communicator that owns comm (freed by its finalizer): our own
** copy, whose errors are returned, not fatal. Every rank of comm calls it:
** they agree on its id on the control channel and on the engine. */
dcomm *dist_push_comm(lua_State *L, MPI_Comm comm, const char *fname) {
  int size = 0, rc = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(comm, &size);
  if (rc != MPI_SUCCESS) {
    MPI_Comm_free(&comm);
    dist_check_mpi(L, rc, fname, "MPI_Comm_size");
  }
  dcomm *c = lua_newuserdatauv(L, sizeof *c + (size_t)size * sizeof c->world[0], 0);
  c->comm = c->ctl = MPI_COMM_NULL;
  c->nccl = NULL;
  c->nccl_on = false;
  c->nccl_device = -1;
  c->size = size;
  c->cuda_aware = dist_cuda_aware();
  luaL_setmetatable(L, COMM_MT);
  c->comm = comm;
  dist_check_mpi(L, MPI_Comm_dup(comm, &c->ctl), fname, "MPI_Comm_dup");
  MPI_Comm_set_errhandler(c->ctl, MPI_ERRORS_RETURN);
  dist_check_mpi(L, MPI_Comm_rank(comm, &c->rank), fname, "MPI_Comm_rank");
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  dist_check_mpi(L, MPI_Allgather(&world_rank, 1, MPI_INT, c->world, 1, MPI_INT, c->ctl), fname,
                 "MPI_Allgather");
  MPI_Comm node;
  dist_check_mpi(L, MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL,
                                        &node),
                 fname, "MPI_Comm_split_type");
  MPI_Comm_rank(node, &c->local_rank);
  MPI_Comm_size(node, &c->local_size);
  MPI_Comm_free(&node);
  /* the greatest next id of the ranks, and whether every rank has NCCL */
  int64_t v[2] = {lc_agree_next_id(), -(int64_t)dist_nccl_possible(L)};
  dist_check_mpi(L, MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT64_T, MPI_MAX, c->ctl), fname,
                 "MPI_Allreduce");
  c->id = v[0];
  lc_agree_used_id(c->id);
  c->nccl_on = v[1] < 0;
  return c;
}

lc_group dist_group(const dcomm *c) {
  return (lc_group){c->id, c->size, c->rank, c->world};
}

int dist_comm_gc(lua_State *L) {
  dcomm *c = luaL_checkudata(L, 1, COMM_MT);
  lc_nccl_free(c->nccl);
  c->nccl = NULL;
  dist_jobs_wait();      /* queued calls may still use c->comm */
  if (c->ctl != MPI_COMM_NULL && !dist_finalised()) MPI_Comm_free(&c->ctl);
  if (c->comm != MPI_COMM_NULL && !dist_finalised()) MPI_Comm_free(&c->comm);
  c->comm = c->ctl = MPI_COMM_NULL;
  return 0;
}

/* comm.rank, comm.size, comm.local_rank, comm.local_size, comm.engine,
** comm.cuda_aware, comm.id;
** otherwise the methods (upvalue 1) */
int dist_comm_index(lua_State *L) {
  dcomm *c = luaL_checkudata(L, 1, COMM_MT);
  const char *k = lua_tostring(L, 2);
  if (k && strcmp(k, "rank") == 0) lua_pushinteger(L, c->rank + 1);
  else if (k && strcmp(k, "size") == 0) lua_pushinteger(L, c->size);
  else if (k && strcmp(k, "local_rank") == 0) lua_pushinteger(L, c->local_rank + 1);
  else if (k && strcmp(k, "local_size") == 0) lua_pushinteger(L, c->local_size);
  else if (k && strcmp(k, "engine") == 0) lua_pushstring(L, c->nccl_on ? "nccl" : "mpi");
  else if (k && strcmp(k, "_nccl_started") == 0) lua_pushboolean(L, c->nccl != NULL);
  else if (k && strcmp(k, "cuda_aware") == 0) lua_pushboolean(L, c->cuda_aware);
  else if (k && strcmp(k, "id") == 0) lua_pushinteger(L, (lua_Integer)c->id);
  else {
    lua_settop(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
  }
  return 1;
}

int dist_comm_tostring(lua_State *L) {
  dcomm *c = luaL_checkudata(L, 1, COMM_MT);
  lua_pushfstring(L, "luacuda.dist communicator %I (rank %d of %d, %s)", (lua_Integer)c->id,
                  c->rank + 1, c->size, c->nccl_on ? "nccl" : "mpi");
  return 1;
}
