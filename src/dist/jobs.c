/*
** jobs: each MPI call of a collective, a send or a recv is an mpi_job,
** made at the call (after the ones queued before it) or queued on the
** stream given, in a host function (luacuda_queuehost) once the stream's
** work before it is done; the stream's later work waits for it. The
** calls on the MPI engine go in the script's order on every rank (dist.lua
** chains the queued ones with events), which needs MPI_THREAD_MULTIPLE.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "dist.h"
#include "bigcount.h"

static const char *const job_calls[] = {"MPI_Allreduce", "MPI_Bcast", "MPI_Reduce",
                                        "MPI_Allgather", "MPI_Reduce_scatter_block", "MPI_Send",
                                        "MPI_Recv"};

/* its MPI call, in as many as 64-bit counts take (bigcount.h) */
static int job_run(const mpi_job *j) {
  switch (j->kind) {
  case J_ALLREDUCE: return lc_mpi_allreduce(j->send, j->recv, j->n, j->type, j->op, j->comm);
  case J_BCAST: return lc_mpi_bcast(j->recv, j->n, j->type, j->root, j->comm);
  case J_REDUCE: return lc_mpi_reduce(j->send, j->recv, j->n, j->type, j->op, j->root, j->comm);
  case J_ALLGATHER: return lc_mpi_allgather(j->send, j->n, j->recv, j->type, j->comm);
  case J_REDUCE_SCATTER:
    return lc_mpi_reduce_scatter_block(j->send, j->recv, j->n, j->type, j->op, j->comm);
  case J_SEND: return lc_mpi_send(j->send, j->n, j->type, j->root, TAG_DATA, j->comm);
  default: return lc_mpi_recv(j->recv, j->n, j->type, j->root, TAG_DATA, j->comm);
  }
}

/* The MPI calls queued on streams and not done yet, in this process: a
** call made at the call waits for them (MPI calls in the script's order). */
static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t jobs_cond = PTHREAD_COND_INITIALIZER;
static long jobs_queued;

static void jobs_add(long d) {
  pthread_mutex_lock(&jobs_lock);
  jobs_queued += d;
  if (jobs_queued <= 0) pthread_cond_broadcast(&jobs_cond);
  pthread_mutex_unlock(&jobs_lock);
}

void dist_jobs_wait(void) {
  pthread_mutex_lock(&jobs_lock);
  while (jobs_queued > 0) pthread_cond_wait(&jobs_cond, &jobs_lock);
  pthread_mutex_unlock(&jobs_lock);
}

/* The host function of a queued call. Its failure cannot be raised: the
** script went on, and the other ranks wait in that call. It aborts the
** job with its message, as a rank's uncaught error does. */
static void job_host(void *ud) {
  mpi_job *j = ud;
  int rc = job_run(j);
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "error %d", rc);
    fprintf(stderr, "luacuda.dist.%s: on rank %d: the MPI call %s queued on a stream failed: %s\n",
            j->fname, j->rank + 1, job_calls[j->kind], text);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  free(j);
  jobs_add(-1);
}

static int use_arrays_protected(lua_State *L) {
  void *stream = lua_touserdata(L, 1);
  for (int i = 2; i <= lua_gettop(L); i++) luacuda_usearray(L, i, stream);
  return 0;
}

/* Before queuing on o's stream: the arrays' memory kept for it, and
** their allocations ordered before it; false and a message. */
bool dist_use_arrays(lua_State *L, const dopts *o, const uses *u, char *err, size_t len) {
  lua_pushcfunction(L, use_arrays_protected);
  lua_pushlightuserdata(L, o->stream);
  for (int i = 0; i < u->n; i++) lua_pushvalue(L, u->idx[i]);
  if (lua_pcall(L, 1 + u->n, 0, 0) == LUA_OK) return true;
  snprintf(err, len, "%s", lua_tostring(L, -1));
  lua_pop(L, 1);
  return false;
}

/* After queuing: host access from Lua waits for the queued work (the
** arrays were checked: this does not raise) */
void dist_queued_arrays(lua_State *L, const dopts *o, const uses *u) {
  for (int i = 0; i < u->n; i++) luacuda_queuedarray(L, u->idx[i], o->stream, u->writes[i]);
}

static int queue_host_protected(lua_State *L) {
  luacuda_queuehost(L, lua_touserdata(L, 1), job_host, lua_touserdata(L, 2));
  return 0;
}

/* j made now, after the MPI calls queued on streams; or, with o's stream,
** queued there (job_host), the arrays u marked as used by it. A rank
** that cannot queue it raises on every rank. */
void dist_run_mpi(lua_State *L, dcomm *c, const mpi_job *j, const dopts *o, const uses *u) {
  if (!o->has_stream) {
    dist_jobs_wait();
    dist_check_mpi(L, job_run(j), j->fname, job_calls[j->kind]);
    return;
  }
  char err[MSGLEN] = "";
  mpi_job *q = malloc(sizeof *q);
  if (q == NULL) {
    snprintf(err, sizeof err, "out of host memory queueing %s", job_calls[j->kind]);
  } else if (dist_use_arrays(L, o, u, err, sizeof err)) {
    *q = *j;
    jobs_add(1);
    lua_pushcfunction(L, queue_host_protected);
    lua_pushlightuserdata(L, o->stream);
    lua_pushlightuserdata(L, q);
    if (lua_pcall(L, 2, 0, 0) == LUA_OK) {
      q = NULL;                 /* job_host's now */
      dist_queued_arrays(L, o, u);
    } else {
      jobs_add(-1);
      snprintf(err, sizeof err, "%s", lua_tostring(L, -1));
      lua_pop(L, 1);
    }
  }
  bool queued = q == NULL;
  free(q);
  char msg[VERDICTLEN];
  dist_verdict(L, c, err, j->kind == J_SEND || j->kind == J_RECV, j->root, j->kind == J_SEND,
               j->fname, msg, sizeof msg);
  if (!msg[0]) return;
  if (queued) {
    /* a blocking MPI call cannot be taken back: the one queued here would
    ** wait forever for the rank that could not queue its own, and so
    ** would every wait for this stream (lua_close's too) */
    fprintf(stderr, "luacuda.dist.%s: %s (the job is aborted: the call queued on rank %d cannot "
            "complete)\n", j->fname, msg, c->rank + 1);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  dist_raise(L, j->fname, "%s", msg);
}

