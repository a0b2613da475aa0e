/*
** header: the header every rank of a call gives (which function, op,
** root, dtype, shape, engine, chunk, and this rank's own argument error),
** compared after agree.c has brought the ranks' headers together: a
** rank's error or a disagreement becomes one message, raised alike on
** every rank. Also the steps after the agreement among ranks known to be
** in the same call (how queueing went, NCCL's start), on the
** communicator's own ctl.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <mpi.h>

#include "dist.h"

const char *const dist_kind_names[] = {"barrier", "split", "allreduce", "broadcast", "reduce",
                                      "allgather", "reduce_scatter", "send", "recv",
                                      "the engine's start", "queueing", NULL};

void dist_header_init(header *h, int kind) {
  memset(h, 0, sizeof *h);
  h->f[F_KIND] = kind;
}

void dist_header_error(header *h, const char *fmt, ...) {
  if (h->err[0]) return;  /* the first one found */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(h->err, sizeof h->err, fmt, ap);
  va_end(ap);
}

/* The disagreement between the least and the greatest value of each
** field, as one message every rank writes alike; "" when they agree. */
static void describe_disagreement(const int64_t *mx, const int64_t *mn, char *msg, size_t len) {
  msg[0] = '\0';
  if (mx[F_KIND] != mn[F_KIND])
    snprintf(msg, len, "ranks called different functions (%s on some, %s on others)",
             dist_kind_names[mn[F_KIND]], dist_kind_names[mx[F_KIND]]);
  else if (mx[F_CHUNK] != mn[F_CHUNK])
    snprintf(msg, len, "ranks cut MPI calls into pieces of different sizes (LUACUDA_DIST_CHUNK: "
             "%lld elements on some, %lld on others)", (long long)mn[F_CHUNK],
             (long long)mx[F_CHUNK]);
  else if (mx[F_OP] != mn[F_OP])
    snprintf(msg, len, "ranks gave different ops (%s on some, %s on others)",
             dist_op_names[mn[F_OP]], dist_op_names[mx[F_OP]]);
  else if (mx[F_ROOT] != mn[F_ROOT])
    snprintf(msg, len, "ranks gave different roots (%lld on some, %lld on others)",
             (long long)mn[F_ROOT], (long long)mx[F_ROOT]);
  else if (mx[F_DTYPE] != mn[F_DTYPE])
    snprintf(msg, len, "ranks gave arrays of different dtypes (%s on some, %s on others)",
             dist_dtype_name((int)mn[F_DTYPE]), dist_dtype_name((int)mx[F_DTYPE]));
  else if (mx[F_ITEMSIZE] != mn[F_ITEMSIZE])
    snprintf(msg, len, "ranks gave records of different sizes (%lld bytes on some, %lld on others)",
             (long long)mn[F_ITEMSIZE], (long long)mx[F_ITEMSIZE]);
  else if (mx[F_COUNT] != mn[F_COUNT])
    snprintf(msg, len, "ranks gave arrays of different sizes (%lld elements on some, %lld on others)",
             (long long)mn[F_COUNT], (long long)mx[F_COUNT]);
  else if (mx[F_SHAPE] != mn[F_SHAPE])
    snprintf(msg, len, "ranks gave arrays of different shapes (of %lld elements each)",
             (long long)mx[F_COUNT]);
}

/* A step after the agreement, among ranks known to be in the same call
** (how queueing went, NCCL's start): one MPI_Allreduce on c->ctl of the
** maxima of the fields and of their negations (the minima), and the first
** rank that found an error. When a rank found one (its message, sent from
** it) or the ranks disagree: -1, and the same message in msg on every
** rank; 0 when they agree. */
int dist_step_exchange(lua_State *L, dcomm *c, header *h, const char *fname, char *msg,
                       size_t len) {
  int64_t v[2 * NFIELDS + 1];
  for (int i = 0; i < NFIELDS; i++) {
    v[i] = h->f[i];
    v[NFIELDS + i] = -h->f[i];
  }
  v[2 * NFIELDS] = h->err[0] ? -(int64_t)c->rank : INT64_MIN;
  dist_check_mpi(L, MPI_Allreduce(MPI_IN_PLACE, v, 2 * NFIELDS + 1, MPI_INT64_T, MPI_MAX, c->ctl),
                 fname, "MPI_Allreduce");
  if (v[2 * NFIELDS] != INT64_MIN) {
    int bad = (int)-v[2 * NFIELDS];
    char sent[MSGLEN];
    memcpy(sent, h->err, sizeof sent);
    dist_check_mpi(L, MPI_Bcast(sent, MSGLEN, MPI_CHAR, bad, c->ctl), fname, "MPI_Bcast");
    sent[MSGLEN - 1] = '\0';
    snprintf(msg, len, "on rank %d: %s", bad + 1, sent);
    return -1;
  }
  int64_t mn[NFIELDS];
  for (int i = 0; i < NFIELDS; i++) mn[i] = -v[NFIELDS + i];
  describe_disagreement(v, mn, msg, len);
  return msg[0] ? -1 : 0;
}

/* A collective's agreement on the control channel (agree.h): a rank's
** error, or ranks that disagree, raised on every rank alike (or the job
** aborted where the ranks are in different calls that cannot all be
** told); false when they agree on all but the engine (some ranks' arrays
** are device memory for NCCL, others' host memory: the call is then made
** again, every rank's arrays staged for MPI, by dist.lua). */
bool dist_agree(lua_State *L, dcomm *c, header *h, const char *fname) {
  lc_group g = dist_group(c);
  lc_call call = {(int)h->f[F_KIND], LC_COLLECTIVE, -1};
  lc_combined all;
  char msg[VERDICTLEN + MSGLEN];
  lc_verdict v = lc_agree_collective(&g, &call, h, &all, msg, sizeof msg);
  if (v == LC_ABORT) dist_abort_job(fname, msg);
  if (v == LC_RAISE) dist_raise(L, fname, "%s", msg);
  if (all.err_rank >= 0) dist_raise(L, fname, "on rank %d: %s", all.err_rank + 1, all.err);
  describe_disagreement(all.mx, all.mn, msg, sizeof msg);
  if (msg[0]) dist_raise(L, fname, "%s", msg);
  return all.mx[F_ENGINE] == all.mn[F_ENGINE];
}

/* How queuing (or waiting) went on both ranks of a send or recv: each
** tells the other; the failure, the sender's first, into msg (else ""). */
static void pair_verdict(lua_State *L, dcomm *c, const char *err, int peer, bool sending,
                         const char *fname, char *msg, size_t len) {
  char mine[VERDICTLEN] = "", theirs[VERDICTLEN];
  if (err[0]) snprintf(mine, sizeof mine, "on rank %d: %s", c->rank + 1, err);
  dist_check_mpi(L, MPI_Sendrecv(mine, VERDICTLEN, MPI_CHAR, peer, TAG_QUEUED, theirs, VERDICTLEN,
                 MPI_CHAR, peer, TAG_QUEUED, c->ctl, MPI_STATUS_IGNORE),
 fname, "MPI_Sendrecv");
  theirs[VERDICTLEN - 1] = '\0';
  const char *first = sending ? mine : theirs, *second = sending ? theirs : mine;
  snprintf(msg, len, "%s", first[0] ? first : second);
}

/* How queuing (or waiting) went on every rank (for send and recv, on
** both): a rank's failure into msg on all of them (else ""). */
void dist_verdict(lua_State *L, dcomm *c, const char *err, bool pair, int peer, bool sending,
                  const char *fname, char *msg, size_t len) {
  msg[0] = '\0';
  if (pair) {
    pair_verdict(L, c, err, peer, sending, fname, msg, len);
    return;
  }
  header h;
  dist_header_init(&h, K_QUEUE);
  if (err[0]) dist_header_error(&h, "%s", err);
  if (dist_step_exchange(L, c, &h, fname, msg, len) >= 0) msg[0] = '\0';
}

/* What is wrong between a send's header (sh, of rank sr) and its recv's
** (rh, of rank rr), the same message on both ranks: "" when nothing;
** RESTAGE when only the engine differs. */
void dist_pair_disagreement(const header *sh, const header *rh, int sr, int rr, char *msg,
                            size_t len) {
  msg[0] = '\0';
  if (sh->err[0])
    snprintf(msg, len, "on rank %d (sending): %s", sr + 1, sh->err);
  else if (rh->err[0])
    snprintf(msg, len, "on rank %d (receiving): %s", rr + 1, rh->err);
  else if (sh->f[F_CHUNK] != rh->f[F_CHUNK])
    snprintf(msg, len, "rank %d cuts MPI calls into pieces of %lld elements, rank %d into pieces "
             "of %lld (LUACUDA_DIST_CHUNK)", sr + 1, (long long)sh->f[F_CHUNK], rr + 1,
             (long long)rh->f[F_CHUNK]);
  else if (sh->f[F_DTYPE] != rh->f[F_DTYPE] || sh->f[F_ITEMSIZE] != rh->f[F_ITEMSIZE])
    snprintf(msg, len, "rank %d sends %s, rank %d receives into %s", sr + 1,
             dist_dtype_name((int)sh->f[F_DTYPE]), rr + 1, dist_dtype_name((int)rh->f[F_DTYPE]));
  else if (sh->f[F_COUNT] != rh->f[F_COUNT])
    snprintf(msg, len, "rank %d sends %lld elements, rank %d receives into %lld", sr + 1,
             (long long)sh->f[F_COUNT], rr + 1, (long long)rh->f[F_COUNT]);
  else if (sh->f[F_SHAPE] != rh->f[F_SHAPE])
    snprintf(msg, len, "rank %d sends an array of another shape than rank %d receives into "
             "(%lld elements each)", sr + 1, rr + 1, (long long)rh->f[F_COUNT]);
  else if (sh->f[F_ENGINE] != rh->f[F_ENGINE])
    snprintf(msg, len, "%s", RESTAGE);
}
