/*
** collectives: a communicator's methods. barrier and split; the
** collectives, a row each in one table (their header's kind, their NCCL
** and MPI calls, where their options are), read by one preamble
** (call_collective: the communicator, the options, the arguments, the
** engine, the agreement) around a function of each that reads its own
** arguments into a plan; send and recv, whose two ranks agree in a pair.
** Each but barrier and split ends in engine_call, which makes the plan's call on
** NCCL (route.c) or MPI (jobs.c).
*/
#include <limits.h>
#include <string.h>

#include <mpi.h>

#include "dist.h"

/* false: the ranks' arrays differ in kind, dist.lua stages them and calls
** again */
static int restage(lua_State *L) {
  lua_pushboolean(L, 0);
  return 1;
}

/* comm:barrier(): the header's exchange, which no rank leaves before every
** rank has entered it */
static int comm_barrier(lua_State *L) {
  dcomm *c = dist_check_comm(L, 1, "barrier");
  header h;
  dist_header_init(&h, K_BARRIER);
  dist_agree(L, c, &h, "barrier");
  return 0;
}

/* comm:split(color [, key]): color a whole number >= 0, or nil (no new
** communicator for this rank: returns nil) */
static int comm_split(lua_State *L) {
  dcomm *c = dist_check_comm(L, 1, "split");
  header h;
  dist_header_init(&h, K_SPLIT);
  int color = MPI_UNDEFINED, key = c->rank;
  if (!lua_isnoneornil(L, 2)) {
    int isnum = 0;
    lua_Integer v = lua_tointegerx(L, 2, &isnum);
    if (!isnum || v < 0 || v > INT_MAX)
      dist_header_error(&h, "color must be a whole number 0 or more, or nil, got %s",
                        isnum ? "a negative number" : luaL_typename(L, 2));
    else
      color = (int)v;
  }
  if (!lua_isnoneornil(L, 3)) {
    int isnum = 0;
    lua_Integer v = lua_tointegerx(L, 3, &isnum);
    if (!isnum || v < INT_MIN || v > INT_MAX)
      dist_header_error(&h, "key must be an integer, got %s", luaL_typename(L, 3));
    else
      key = (int)v;
  }
  dist_agree(L, c, &h, "split");
  MPI_Comm sub;
  dist_check_mpi(L, MPI_Comm_split(c->ctl, color, key, &sub), "split", "MPI_Comm_split");
  if (sub == MPI_COMM_NULL) {
    lua_pushnil(L);
    return 1;
  }
  dist_push_comm(L, sub, "split");
  return 1;
}

/* A call's arguments, read and checked, and what its engine is given */
typedef struct plan {
  arr x, out;
  int narrays;            /* the arrays the engine takes: x, or x and out */
  bool read;              /* every one was read: the engine can be chosen */
  int op;                 /* OP_NONE where the call reduces nothing */
  int root;               /* or the peer; 0-based */
  int top;                /* the stack's top at the return: the last array's index */
  uses u;
  const void *send;       /* NCCL's buffers */
  void *recv;
  const void *mpi_send;   /* MPI's: the same, but MPI_IN_PLACE where in place */
  void *mpi_recv;
  int64_t n;              /* elements: allgather's each rank's, reduce_scatter's the block */
} plan;

/* A collective, send or recv: what its preamble and its engines need */
typedef struct collective {
  const char *name;
  int kind;               /* the header's: K_ALLREDUCE, ... */
  lc_nccl_kind nccl;
  jkind job;
  int opts;               /* the options table's stack index */
  const char *const *known;   /* the options it takes */
  /* its other arguments into p (and their facts into h) */
  void (*read)(lua_State *L, dcomm *c, header *h, const dopts *o, plan *p);
} collective;

/* The plan's call, on NCCL where the ranks chose it, else on MPI; returns
** the last array given. */
static int engine_call(lua_State *L, dcomm *c, const collective *k, const plan *p,
                       const dopts *o, bool nccl) {
  lua_settop(L, p->top);
  if (nccl) {
    lc_nccl_call call = {k->nccl, p->send, p->recv, p->n, p->x.info.dtype, p->x.info.itemsize,
                         dist_nccl_op(p->op), p->root};
    dist_run_nccl(L, c, &call, o, &p->u, k->name);
    return 1;
  }
  mpi_job j = {k->job, c->comm, p->mpi_send, p->mpi_recv, dist_mpi_count(&p->x, p->n),
               dist_mpi_type(p->x.code),
               p->op == OP_NONE ? MPI_OP_NULL : dist_mpi_op(p->op, p->x.code), p->root, c->rank,
               k->name};
  dist_run_mpi(L, c, &j, o, &p->u);
  return 1;
}

/* The collectives' shared preamble: their arguments read and the ranks
** agreed, or false returned for dist.lua to stage the arrays and call
** again. */
static int call_collective(lua_State *L, const collective *k) {
  dcomm *c = dist_check_comm(L, 1, k->name);
  header h;
  dist_header_init(&h, k->kind);
  dopts o;
  dist_read_options(L, k->opts, k->known, &h, &o);
  plan p = {.op = OP_NONE};
  k->read(L, c, &h, &o, &p);
  const arr *as[] = {&p.x, &p.out};
  bool nccl = p.read && dist_route(L, c, &h, k->nccl, as, p.narrays, &o);
  if (!dist_agree(L, c, &h, k->name)) return restage(L);
  return engine_call(L, c, k, &p, &o, nccl);
}

/* The plan's arrays: x alone, at 2, which the call writes or not; its
** buffers x's, MPI's too (each call then says which are in place) */
static void plan_x(plan *p, bool writes) {
  p->narrays = 1;
  p->top = 2;
  p->u = (uses){1, {2}, {writes}};
  p->send = p->mpi_send = p->recv = p->mpi_recv = p->x.data;
  p->n = p->x.info.size;
}

/* The plan's arrays: x at 2, read, and out at out_idx, written; n
** elements */
static void plan_x_out(plan *p, int out_idx, int64_t n) {
  p->narrays = 2;
  p->top = out_idx;
  p->u = (uses){2, {2, out_idx}, {false, true}};
  p->send = p->mpi_send = p->x.data;
  p->recv = p->mpi_recv = p->out.data;
  p->n = n;
}

/* comm:_allreduce(x, op, out|nil, opts|nil): out is opts.out, staged */
static void read_allreduce(lua_State *L, dcomm *c, header *h, const dopts *o, plan *p) {
  (void)c;
  bool has_out = !lua_isnoneornil(L, 4);
  p->read = dist_read_array(L, 2, "x", h, &p->x, true, !has_out, o);
  p->op = p->read ? dist_read_op(L, 3, h, &p->x) : OP_SUM_;
  if (p->read && has_out && dist_read_array(L, 4, "out", h, &p->out, false, true, o)) {
    dist_same_dtype(h, &p->x, &p->out, "out");
    if (p->out.info.size != p->x.info.size)
      dist_header_error(h, "out has %lld elements, x %lld", (long long)p->out.info.size,
                        (long long)p->x.info.size);
    else if (p->out.data != p->x.data && dist_overlap(&p->x, &p->out))
      dist_header_error(h, "out overlaps x (give the same array for in place)");
  }
  if (has_out) plan_x_out(p, 4, p->x.info.size);
  else plan_x(p, true);
  if (!has_out || p->out.data == p->x.data) p->mpi_send = MPI_IN_PLACE;   /* in x */
}

/* comm:_broadcast(x, root, opts|nil) */
static void read_broadcast(lua_State *L, dcomm *c, header *h, const dopts *o, plan *p) {
  p->read = dist_read_array(L, 2, "x", h, &p->x, true, true, o);
  if (dist_read_rank(L, 3, c, "root", h, &p->root)) h->f[F_ROOT] = p->root + 1;
  plan_x(p, p->root != c->rank);
  p->mpi_send = NULL;       /* MPI_Bcast has one buffer */
}

/* comm:_reduce(x, root, op, opts|nil): the result in x on the root; the
** other ranks' x unchanged */
static void read_reduce(lua_State *L, dcomm *c, header *h, const dopts *o, plan *p) {
  bool root_ok = dist_read_rank(L, 3, c, "root", h, &p->root);
  if (root_ok) h->f[F_ROOT] = p->root + 1;
  bool at_root = p->root == c->rank;
  p->read = dist_read_array(L, 2, "x", h, &p->x, true, root_ok && at_root, o);
  p->op = p->read ? dist_read_op(L, 4, h, &p->x) : OP_SUM_;
  plan_x(p, at_root);
  if (at_root) p->mpi_send = MPI_IN_PLACE;
  else p->mpi_recv = NULL;
}

/* comm:_allgather(x, out, opts|nil): out holds every rank's x, rank 1's
** first */
static void read_allgather(lua_State *L, dcomm *c, header *h, const dopts *o, plan *p) {
  p->read = dist_read_array(L, 2, "x", h, &p->x, true, false, o) &&
            dist_read_array(L, 3, "out", h, &p->out, false, true, o);
  if (p->read) {
    dist_same_dtype(h, &p->x, &p->out, "out");
    dist_check_blocks(h, c, &p->out, &p->x, "out", "x");
  }
  plan_x_out(p, 3, p->x.info.size);
}

/* comm:_reduce_scatter(x, out, op, opts|nil): out is block `rank` of the
** reduction of every rank's x */
static void read_reduce_scatter(lua_State *L, dcomm *c, header *h, const dopts *o, plan *p) {
  p->op = OP_SUM_;
  if (dist_read_array(L, 2, "x", h, &p->x, true, false, o)) {
    p->op = dist_read_op(L, 4, h, &p->x);
    if ((p->read = dist_read_array(L, 3, "out", h, &p->out, false, true, o))) {
      dist_same_dtype(h, &p->x, &p->out, "out");
      dist_check_blocks(h, c, &p->x, &p->out, "x", "out");
    }
  }
  plan_x_out(p, 3, p->out.info.size);
}

static const char *const stream_only[] = {"stream", NULL};
static const char *const out_and_stream[] = {"out", "stream", NULL};

enum { C_ALLREDUCE, C_BROADCAST, C_REDUCE, C_ALLGATHER, C_REDUCE_SCATTER, C_SEND, C_RECV };
static const collective collectives[] = {
  [C_ALLREDUCE] = {"allreduce", K_ALLREDUCE, LC_NCCL_ALLREDUCE, J_ALLREDUCE, 5, out_and_stream,
                   read_allreduce},
  [C_BROADCAST] = {"broadcast", K_BROADCAST, LC_NCCL_BROADCAST, J_BCAST, 4, stream_only,
                   read_broadcast},
  [C_REDUCE] = {"reduce", K_REDUCE, LC_NCCL_REDUCE, J_REDUCE, 5, stream_only, read_reduce},
  [C_ALLGATHER] = {"allgather", K_ALLGATHER, LC_NCCL_ALLGATHER, J_ALLGATHER, 4, stream_only,
                   read_allgather},
  [C_REDUCE_SCATTER] = {"reduce_scatter", K_REDUCE_SCATTER, LC_NCCL_REDUCE_SCATTER,
                        J_REDUCE_SCATTER, 5, stream_only, read_reduce_scatter},
  /* send and recv agree in pairs (send_or_recv), not by call_collective */
  [C_SEND] = {"send", K_SEND, LC_NCCL_SEND, J_SEND, 4, stream_only, NULL},
  [C_RECV] = {"recv", K_RECV, LC_NCCL_RECV, J_RECV, 4, stream_only, NULL},
};

static int comm_allreduce(lua_State *L) { return call_collective(L, &collectives[C_ALLREDUCE]); }
static int comm_broadcast(lua_State *L) { return call_collective(L, &collectives[C_BROADCAST]); }
static int comm_reduce(lua_State *L) { return call_collective(L, &collectives[C_REDUCE]); }
static int comm_allgather(lua_State *L) { return call_collective(L, &collectives[C_ALLGATHER]); }
static int comm_reduce_scatter(lua_State *L) {
  return call_collective(L, &collectives[C_REDUCE_SCATTER]);
}

/* comm:_send(x, peer, opts|nil) and comm:_recv(x, peer, opts|nil): both
** ranks exchange their headers on the control channel and make the same
** verdict from the two. A bad peer is this rank's error alone (there is
** no peer to tell). */
static int send_or_recv(lua_State *L, bool sending) {
  const collective *k = &collectives[sending ? C_SEND : C_RECV];
  const char *fname = k->name;
  dcomm *c = dist_check_comm(L, 1, fname);
  header mine, theirs;
  dist_header_init(&mine, k->kind);
  plan p = {.op = OP_NONE};
  int peer = 0;
  if (!dist_read_rank(L, 3, c, "peer", &mine, &peer)) dist_raise(L, fname, "%s", mine.err);
  if (peer == c->rank) dist_raise(L, fname, "peer %d is this rank", peer + 1);
  dopts o;
  dist_read_options(L, k->opts, k->known, &mine, &o);
  dist_read_array(L, 2, "x", &mine, &p.x, true, !sending, &o);
  const arr *as[] = {&p.x};
  bool nccl = dist_route(L, c, &mine, k->nccl, as, 1, &o);
  lc_group g = dist_group(c);
  lc_call call = {(int)mine.f[F_KIND], sending ? LC_SEND : LC_RECV, peer};
  char msg[VERDICTLEN + MSGLEN];
  lc_verdict v = lc_agree_pair(&g, &call, &mine, &theirs, msg, sizeof msg);
  if (v == LC_ABORT) dist_abort_job(fname, msg);
  if (v == LC_RAISE) dist_raise(L, fname, "%s", msg);
  if (sending) dist_pair_disagreement(&mine, &theirs, c->rank, peer, msg, sizeof msg);
  else dist_pair_disagreement(&theirs, &mine, peer, c->rank, msg, sizeof msg);
  if (strcmp(msg, RESTAGE) == 0) return restage(L);
  if (msg[0]) dist_raise(L, fname, "%s", msg);
  p.root = peer;
  plan_x(&p, !sending);
  if (sending) p.recv = p.mpi_recv = NULL;
  else p.send = p.mpi_send = NULL;
  return engine_call(L, c, k, &p, &o, nccl);
}

static int comm_send(lua_State *L) { return send_or_recv(L, true); }
static int comm_recv(lua_State *L) { return send_or_recv(L, false); }

const luaL_Reg dist_comm_methods[] = {
  {"barrier", comm_barrier},
  {"split", comm_split},
  {"allreduce", comm_allreduce},
  {"broadcast", comm_broadcast},
  {"reduce", comm_reduce},
  {"allgather", comm_allgather},
  {"reduce_scatter", comm_reduce_scatter},
  {"send", comm_send},
  {"recv", comm_recv},
  {NULL, NULL}
};
