/*
** agree: the control channel of luacuda.dist (agree.h).
**
** Why one channel, received from any rank. A rank that waits for the
** other ranks of its call must see what a rank in another call sends it,
** or it waits forever: rank 1 in allreduce while rank 2 sends to it, both
** in recv, a collective on a communicator made by split against one on
** the communicator it came from. So every message of the agreement goes
** over one communicator, the process's copy of MPI_COMM_WORLD, on one tag,
** and a rank that waits receives from MPI_ANY_SOURCE: whatever another rank
** sends it arrives, and is compared with what this rank expects. No
** timeouts.
**
** Each message says which call it belongs to: the kind, whether it is a
** collective, a send or a recv (and the peer), the communicator (an id its
** ranks agreed on when it was made: the communicators of one process all
** have different ids), and its number among the sender's calls that
** involve the receiver. Every rank counts, for every other rank, the calls
** it has entered that involve both (pos[]). Ranks whose earlier calls
** together matched give their next one together the same number, so a
** message numbered as the call this rank is in, from a rank of that call,
** comes from a rank at the same point: if it is not the same call, the two
** disagree. A message numbered one more comes from a rank done with this
** call, or not in it, whose next call with this rank is later: it is kept
** for then (the stash). Nothing else can come.
**
** Collectives: recursive doubling, as MPI_Allreduce of a small buffer
** does (the one MPI_Allreduce of the headers before this channel): in
** round k, rank r and rank r ^ 2^k send each other what they have
** combined so far, so after log2(m) rounds each of the first m ranks (m
** the greatest power of two not over the size) has every header combined;
** a rank m + i beyond them first gives its header to rank i and gets the
** result from it. Combining is idempotent (each field's greatest and
** least, the lowest rank's error), so a partner's message is combined
** whenever it comes, even early, and every rank gets the same
** combination, which header.c turns into the same error or none. Every rank
** of a call sends a message to another before it waits (rank i greets its
** extra rank m + i at once), so two ranks waiting for each other in
** different calls each receive the other's message. Send and recv: both
** ranks send their header to the other and wait for the other's, so each
** sees the other's kind (two recvs each see "recv").
**
** A disagreement between two calls that each have these two ranks alone
** (a send or recv, a collective of two ranks) is raised on both: each
** receives the other's first message, and both make the same message from
** the two calls. Otherwise other ranks wait in one of the calls, who cannot
** all be told: the rank that sees it aborts the job with the message.
**
** The end: at MPI_Finalize (an attribute of MPI_COMM_SELF, so a host
** program's MPI_Finalize does it too) each rank sends "ended" to every
** other rank and receives every other rank's; a rank in a call with a rank
** that ended aborts the job. Messages from one sender arrive in order, so
** once every rank's "ended" is in, nothing is left on the channel.
**
** What remains: ranks that wait in a cycle of three or more, each for the
** next in a call the next does not take part in (1 sends to 2, 2 receives
** from 3, 3 sends to 1), each keeping its predecessor's message for later;
** send waits for its recv here, as MPI_Ssend does, which waits there too.
**
** One call at a time in a process: the channel and its counts are the
** process's (a state whose call overlaps another state's gets an error).
*/
#include "agree.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG 7391
#define MAXROUNDS 31              /* log2 of a communicator's size */
#define MAXSENDS (MAXROUNDS + 2)  /* a call's: its rounds, and the greeting and result of its extra */
#define DESCLEN 128

/* W_ROUND: a round of recursive doubling; W_EXTRA: a rank beyond the
** first m gives its header to its combiner, which greets it (W_HELLO) and
** gives it the result (W_RESULT) */
enum { W_ROUND, W_EXTRA, W_HELLO, W_RESULT, W_PAIR, W_ENDED };

typedef struct wire {
  int32_t type;
  int32_t kind, role, size;       /* the sender's call; size: its communicator's ranks */
  int32_t from;                   /* the sender's rank in its communicator */
  int32_t peer;                   /* a send's or recv's peer, in MPI_COMM_WORLD */
  int32_t round;                  /* W_ROUND's */
  int32_t unused;
  int64_t id, seq;                /* its communicator, its number with the receiver */
  lc_combined c;                  /* headers combined (a pair's: its own, in mx and err);
                                  ** sent up to its error's end (err is last) */
} wire;

#define WIRE_BASE (offsetof(wire, c) + offsetof(lc_combined, err))

typedef struct kept {
  wire w;
  int src;
} kept;

static struct {
  pthread_mutex_t lock;
  bool open, ended;
  MPI_Comm comm;
  int rank, size;                 /* in MPI_COMM_WORLD */
  int64_t calls;                  /* calls entered by this process */
  int64_t *pos;                   /* pos[w]: the calls entered with rank w */
  int64_t *mark;                  /* mark[w] == calls: w is in the current call */
  bool *gone;                     /* gone[w]: w said it ended */
  int ngone;
  kept *stash;                    /* messages for later calls, in arrival order */
  int nstash, capstash;
  const char *const *names;
  int nnames;
  int64_t next_id;
  wire out[MAXSENDS];             /* a call's sends, not on the stack: an abort leaves them */
  MPI_Request req[MAXSENDS];
  int nreq;
  wire in;
} ch = {.lock = PTHREAD_MUTEX_INITIALIZER, .next_id = 1};

/* ---- the channel --------------------------------------------------------- */

static int at_finalize(MPI_Comm comm, int keyval, void *value, void *extra) {
  (void)comm, (void)keyval, (void)value, (void)extra;
  lc_agree_end();
  return MPI_SUCCESS;
}

bool lc_agree_open(const char *const *kind_names, char *err, size_t len) {
  pthread_mutex_lock(&ch.lock);
  bool ok = ch.open;
  if (!ok && ch.ended) {
    snprintf(err, len, "luacuda.dist has ended in this process (MPI_Finalize)");
  } else if (!ok) {
    MPI_Comm comm;
    int keyval;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
      snprintf(err, len, "MPI call MPI_Comm_dup failed (the control channel)");
    } else {
      MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
      MPI_Comm_rank(comm, &ch.rank);
      MPI_Comm_size(comm, &ch.size);
      ch.pos = calloc((size_t)ch.size, sizeof *ch.pos);
      ch.mark = calloc((size_t)ch.size, sizeof *ch.mark);
      ch.gone = calloc((size_t)ch.size, sizeof *ch.gone);
      if (!ch.pos || !ch.mark || !ch.gone)
        snprintf(err, len, "out of host memory for the control channel");
      else if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &keyval, NULL) !=
                   MPI_SUCCESS ||
               MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL) != MPI_SUCCESS)
        snprintf(err, len, "cannot be told of MPI_Finalize (MPI_Comm_set_attr failed)");
      else
        ok = true;
      if (ok) {
        ch.comm = comm;
        ch.names = kind_names;
        for (ch.nnames = 0; kind_names[ch.nnames]; ch.nnames++) {}
        ch.open = true;
      } else {
        free(ch.pos), free(ch.mark), free(ch.gone);
        ch.pos = ch.mark = NULL;
        ch.gone = NULL;
        MPI_Comm_free(&comm);
      }
    }
  }
  pthread_mutex_unlock(&ch.lock);
  return ok;
}

int64_t lc_agree_next_id(void) {
  pthread_mutex_lock(&ch.lock);
  int64_t id = ch.next_id;
  pthread_mutex_unlock(&ch.lock);
  return id;
}

void lc_agree_used_id(int64_t id) {
  pthread_mutex_lock(&ch.lock);
  if (id >= ch.next_id) ch.next_id = id + 1;
  pthread_mutex_unlock(&ch.lock);
}

/* ---- a call in progress -------------------------------------------------- */

typedef enum { T_TAKEN, T_KEPT, T_DONE } took;

typedef struct pending {
  const lc_group *g;
  const lc_call *call;
  const lc_header *mine;
  /* collectives: the rounds, the extra rank, and what has come */
  int rounds, sent_rounds;
  uint32_t got_rounds;            /* bit k: round k's partner's message */
  int extra;                      /* this rank's extra rank, or -1 */
  int combiner;                   /* this extra rank's combiner, or -1 */
  bool got_extra, got_hello, got_result;
  lc_combined *sum;
  /* send and recv */
  bool got_pair;
  lc_header *theirs;
  lc_verdict verdict;             /* T_DONE's */
  char *msg;
  size_t len;
} pending;

/* "allreduce on communicator 2 (4 ranks)", "send to rank 3 on communicator 1" */
static void describe(char *out, size_t len, int kind, int role, int64_t id, int size, int peer) {
  char unknown[24];
  const char *name = kind >= 0 && kind < ch.nnames ? ch.names[kind] : unknown;
  if (name == unknown) snprintf(unknown, sizeof unknown, "call %d", kind);
  if (role == LC_SEND || role == LC_RECV)
    snprintf(out, len, "%s %s rank %d on communicator %lld", name, role == LC_SEND ? "to" : "from",
             peer + 1, (long long)id);
  else
    snprintf(out, len, "%s on communicator %lld (%d ranks)", name, (long long)id, size);
}

static void describe_mine(const pending *p, char *out, size_t len) {
  describe(out, len, p->call->kind, (int)p->call->role, p->g->id, p->g->size,
           p->call->role == LC_COLLECTIVE ? -1 : p->g->world[p->call->peer]);
}

static took fail(pending *p, lc_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static took fail(pending *p, lc_verdict v, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->msg, p->len, fmt, ap);
  va_end(ap);
  p->verdict = v;
  return T_DONE;
}

/* src's call is not this one: the same message on both ranks (the lower
** rank's call first), raised where both calls have these two ranks alone */
static took disagree(pending *p, const wire *w, int src) {
  char mine[DESCLEN], theirs[DESCLEN];
  describe_mine(p, mine, sizeof mine);
  describe(theirs, sizeof theirs, w->kind, w->role, w->id, w->size, w->peer);
  bool two = (p->call->role != LC_COLLECTIVE || p->g->size == 2) &&
             (w->role != LC_COLLECTIVE || w->size == 2);
  bool first = ch.rank < src;
  return fail(p, two ? LC_RAISE : LC_ABORT, "ranks disagree: rank %d is in %s, rank %d in %s%s",
              (first ? ch.rank : src) + 1, first ? mine : theirs, (first ? src : ch.rank) + 1,
              first ? theirs : mine,
              two ? "" : "; the job is aborted (the other ranks of these calls cannot all be told)");
}

static took out_of_order(pending *p, const wire *w, int src) {
  bool known = src >= 0 && src < ch.size;
  return fail(p, LC_ABORT, "a control message from rank %d out of order (type %d, number %lld, "
              "expected %lld): a bug in luacuda.dist; the job is aborted", src + 1, (int)w->type,
              (long long)w->seq, known ? (long long)ch.pos[src] : -1LL);
}

static void combine(lc_combined *sum, const lc_combined *c) {
  for (int i = 0; i < LC_AGREE_FIELDS; i++) {
    if (c->mx[i] > sum->mx[i]) sum->mx[i] = c->mx[i];
    if (c->mn[i] < sum->mn[i]) sum->mn[i] = c->mn[i];
  }
  if (c->err_rank >= 0 && (sum->err_rank < 0 || c->err_rank < sum->err_rank)) {
    sum->err_rank = c->err_rank;
    memcpy(sum->err, c->err, sizeof sum->err);
    sum->err[sizeof sum->err - 1] = '\0';
  }
}

/* A message from src at the point of this call, from a rank of it. */
static took same_point(pending *p, const wire *w, int src) {
  const lc_group *g = p->g;
  if (p->call->role != LC_COLLECTIVE) {
    if (w->type != W_PAIR || w->role == LC_COLLECTIVE || w->role == (int)p->call->role ||
        w->id != g->id)
      return disagree(p, w, src);
    memcpy(p->theirs->f, w->c.mx, sizeof p->theirs->f);
    memcpy(p->theirs->err, w->c.err, sizeof p->theirs->err);
    p->theirs->err[sizeof p->theirs->err - 1] = '\0';
    p->got_pair = true;
    return T_TAKEN;
  }
  if (w->role != LC_COLLECTIVE || w->id != g->id) return disagree(p, w, src);
  /* the same communicator's collective (perhaps another kind: header.c
  ** says so from the combination) */
  bool ok = false;
  switch (w->type) {
  case W_ROUND:
    ok = p->combiner < 0 && w->round >= 0 && w->round < p->rounds &&
         w->from == (g->rank ^ (1 << w->round)) && !(p->got_rounds >> w->round & 1u);
    if (ok) p->got_rounds |= 1u << w->round;
    break;
  case W_EXTRA:
    ok = p->extra >= 0 && w->from == p->extra && !p->got_extra;
    p->got_extra = p->got_extra || ok;
    break;
  case W_HELLO:
    ok = p->combiner >= 0 && w->from == p->combiner && !p->got_hello;
    p->got_hello = p->got_hello || ok;
    break;
  case W_RESULT:
    ok = p->got_hello && !p->got_result && w->from == p->combiner;
    if (ok) {
      *p->sum = w->c;
      p->got_result = true;
    }
    return ok ? T_TAKEN : out_of_order(p, w, src);
  }
  if (!ok) return out_of_order(p, w, src);
  if (w->type != W_HELLO) combine(p->sum, &w->c);   /* idempotent: whenever it comes */
  return T_TAKEN;
}

static took take(pending *p, const wire *w, int src) {
  if (src < 0 || src >= ch.size || src == ch.rank) return out_of_order(p, w, src);
  if (w->type == W_ENDED) {
    if (!ch.gone[src]) {
      ch.gone[src] = true;
      ch.ngone++;
    }
    /* its number: the calls it entered with this rank. A rank that did its
    ** part of this call sent all of it before it ended, and may end. */
    if (ch.mark[src] != ch.calls || w->seq == ch.pos[src]) return T_TAKEN;
    char mine[DESCLEN];
    describe_mine(p, mine, sizeof mine);
    return fail(p, LC_ABORT, "rank %d ended its script while rank %d was in %s; the job is aborted",
                src + 1, ch.rank + 1, mine);
  }
  if (ch.mark[src] == ch.calls && w->seq == ch.pos[src]) return same_point(p, w, src);
  if (w->seq == ch.pos[src] + 1) return T_KEPT;
  return out_of_order(p, w, src);
}

static bool send(pending *p, int type, int dest, const lc_combined *c, int round) {
  wire *w = &ch.out[ch.nreq];
  w->type = type;
  w->kind = p->call->kind;
  w->role = (int32_t)p->call->role;
  w->size = p->g->size;
  w->from = p->g->rank;
  w->peer = p->call->role == LC_COLLECTIVE ? -1 : p->g->world[p->call->peer];
  w->round = round;
  w->unused = 0;
  w->id = p->g->id;
  w->seq = ch.pos[dest];
  w->c = *c;
  size_t n = WIRE_BASE + (c->err_rank >= 0 ? strlen(c->err) + 1 : 0);
  if (MPI_Isend(w, (int)n, MPI_BYTE, dest, TAG, ch.comm, &ch.req[ch.nreq]) != MPI_SUCCESS) {
    fail(p, LC_ABORT, "MPI call MPI_Isend failed on the control channel; the job is aborted");
    return false;
  }
  ch.nreq++;
  return true;
}

/* One message from the channel into ch.in (its error ended where it was
** cut off); its sender into *src. */
static bool receive(int *src) {
  MPI_Status st;
  int count = 0;
  if (MPI_Recv(&ch.in, sizeof ch.in, MPI_BYTE, MPI_ANY_SOURCE, TAG, ch.comm, &st) != MPI_SUCCESS ||
      MPI_Get_count(&st, MPI_BYTE, &count) != MPI_SUCCESS || count < (int)WIRE_BASE)
    return false;
  size_t errlen = (size_t)count - WIRE_BASE;
  if (errlen > sizeof ch.in.c.err) errlen = sizeof ch.in.c.err;
  ch.in.c.err[errlen == 0 ? 0 : errlen - 1] = '\0';
  if (ch.in.c.err_rank < 0) ch.in.c.err[0] = '\0';
  *src = st.MPI_SOURCE;
  return true;
}

static bool finished(const pending *p) {
  if (p->call->role != LC_COLLECTIVE) return p->got_pair;
  if (p->combiner >= 0) return p->got_result;
  return (p->extra < 0 || p->got_extra) && p->sent_rounds == p->rounds &&
         p->got_rounds == (1u << p->rounds) - 1;
}

/* A collective's rounds sent as soon as the rounds before have come (and
** the extra rank's header, where it has one). */
static bool step(pending *p) {
  if (p->call->role != LC_COLLECTIVE || p->combiner >= 0 || (p->extra >= 0 && !p->got_extra))
    return true;
  while (p->sent_rounds < p->rounds &&
         (p->got_rounds & ((1u << p->sent_rounds) - 1)) == (1u << p->sent_rounds) - 1) {
    int partner = p->g->rank ^ (1 << p->sent_rounds);
    if (!send(p, W_ROUND, p->g->world[partner], p->sum, p->sent_rounds)) return false;
    p->sent_rounds++;
  }
  return true;
}

static bool stash_push(const wire *w, int src) {
  if (ch.nstash == ch.capstash) {
    int cap = ch.capstash ? 2 * ch.capstash : 8;
    kept *s = realloc(ch.stash, (size_t)cap * sizeof *s);
    if (s == NULL) return false;
    ch.stash = s;
    ch.capstash = cap;
  }
  ch.stash[ch.nstash].w = *w;
  ch.stash[ch.nstash].src = src;
  ch.nstash++;
  return true;
}

/* Until the call has all it waits for: the messages kept for it first,
** then the channel's. */
static lc_verdict run(pending *p) {
  if (!step(p)) return p->verdict;
  for (int i = 0; i < ch.nstash && !finished(p);) {
    took t = take(p, &ch.stash[i].w, ch.stash[i].src);
    if (t == T_KEPT) {
      i++;
      continue;
    }
    memmove(&ch.stash[i], &ch.stash[i + 1], (size_t)(ch.nstash - i - 1) * sizeof *ch.stash);
    ch.nstash--;
    if (t == T_DONE || !step(p)) return p->verdict;
  }
  while (!finished(p)) {
    int src;
    if (!receive(&src)) {
      fail(p, LC_ABORT, "MPI call MPI_Recv failed on the control channel; the job is aborted");
      return p->verdict;
    }
    took t = take(p, &ch.in, src);
    if (t == T_KEPT && !stash_push(&ch.in, src)) {
      fail(p, LC_ABORT, "out of host memory keeping a control message; the job is aborted");
      return p->verdict;
    }
    if (t == T_DONE || !step(p)) return p->verdict;
  }
  return LC_AGREED;
}

/* The call entered (the lock held): it is counted with every other rank of
** it, unless one of them has ended. */
static bool enter(pending *p, const int *ranks, int n) {
  for (int i = 0; i < n; i++)
    if (ranks[i] != ch.rank && ch.gone[ranks[i]]) {
      char mine[DESCLEN];
      describe_mine(p, mine, sizeof mine);
      fail(p, LC_ABORT, "rank %d ended its script while rank %d was in %s; the job is aborted",
           ranks[i] + 1, ch.rank + 1, mine);
      return false;
    }
  ch.calls++;
  for (int i = 0; i < n; i++)
    if (ranks[i] != ch.rank) {
      ch.pos[ranks[i]]++;
      ch.mark[ranks[i]] = ch.calls;
    }
  ch.nreq = 0;
  return true;
}

/* The lock, or why not (into msg) */
static bool lock(char *msg, size_t len) {
  if (pthread_mutex_trylock(&ch.lock) != 0) {
    snprintf(msg, len, "another Lua state of this process is in a luacuda.dist call (the calls of "
             "one process must not overlap)");
    return false;
  }
  if (ch.open && !ch.ended) return true;
  snprintf(msg, len, "luacuda.dist has ended in this process (MPI_Finalize)");
  pthread_mutex_unlock(&ch.lock);
  return false;
}

/* The call's sends complete (each went to a rank that receives it in this
** call, or that saw the disagreement by it), unless the job is aborted. */
static lc_verdict leave(lc_verdict v) {
  if (v != LC_ABORT) MPI_Waitall(ch.nreq, ch.req, MPI_STATUSES_IGNORE);
  ch.nreq = 0;
  pthread_mutex_unlock(&ch.lock);
  return v;
}

lc_verdict lc_agree_collective(const lc_group *g, const lc_call *call, const lc_header *mine,
                               lc_combined *out, char *msg, size_t len) {
  memcpy(out->mx, mine->f, sizeof out->mx);
  memcpy(out->mn, mine->f, sizeof out->mn);
  out->err_rank = mine->err[0] ? g->rank : -1;
  memcpy(out->err, mine->err, sizeof out->err);
  out->err[sizeof out->err - 1] = '\0';
  msg[0] = '\0';
  if (g->size == 1) return LC_AGREED;
  if (!lock(msg, len)) return LC_RAISE;
  pending p = {.g = g, .call = call, .mine = mine, .sum = out, .msg = msg, .len = len,
               .verdict = LC_AGREED, .extra = -1, .combiner = -1};
  int m = 1;
  while (m <= g->size / 2) m *= 2;
  for (p.rounds = 0; 1 << p.rounds < m; p.rounds++) {}
  if (g->rank >= m) p.combiner = g->rank - m;
  else if (g->rank + m < g->size) p.extra = g->rank + m;
  if (!enter(&p, g->world, g->size)) return leave(p.verdict);
  if (p.combiner >= 0 && !send(&p, W_EXTRA, g->world[p.combiner], out, 0)) return leave(p.verdict);
  if (p.extra >= 0 && !send(&p, W_HELLO, g->world[p.extra], out, 0)) return leave(p.verdict);
  lc_verdict v = run(&p);
  if (v == LC_AGREED && p.extra >= 0 && !send(&p, W_RESULT, g->world[p.extra], out, 0))
    v = p.verdict;
  return leave(v);
}

lc_verdict lc_agree_pair(const lc_group *g, const lc_call *call, const lc_header *mine,
                         lc_header *theirs, char *msg, size_t len) {
  memset(theirs, 0, sizeof *theirs);
  msg[0] = '\0';
  if (!lock(msg, len)) return LC_RAISE;
  pending p = {.g = g, .call = call, .mine = mine, .theirs = theirs, .msg = msg, .len = len,
               .verdict = LC_AGREED, .extra = -1, .combiner = -1};
  int peer = g->world[call->peer];
  if (!enter(&p, &peer, 1)) return leave(p.verdict);
  lc_combined c;
  memcpy(c.mx, mine->f, sizeof c.mx);
  memset(c.mn, 0, sizeof c.mn);
  c.err_rank = mine->err[0] ? 0 : -1;
  memcpy(c.err, mine->err, sizeof c.err);
  c.err[sizeof c.err - 1] = '\0';
  if (!send(&p, W_PAIR, peer, &c, 0)) return leave(p.verdict);
  return leave(run(&p));
}

/* ---- the end ------------------------------------------------------------- */

void lc_agree_end(void) {
  pthread_mutex_lock(&ch.lock);
  if (!ch.open || ch.ended) {
    pthread_mutex_unlock(&ch.lock);
    return;
  }
  ch.ended = true;
  /* to each rank, the number of calls entered with it */
  wire *ends = calloc((size_t)ch.size, sizeof *ends);
  MPI_Request *reqs = calloc((size_t)ch.size, sizeof *reqs);
  int n = 0;
  for (int w = 0; w < ch.size; w++) {
    if (w == ch.rank) continue;
    wire one = {.type = W_ENDED, .seq = ch.pos[w]}, *e = ends ? &ends[w] : &one;
    *e = one;
    e->c.err_rank = -1;
    if (ends && reqs) MPI_Isend(e, (int)WIRE_BASE, MPI_BYTE, w, TAG, ch.comm, &reqs[n++]);
    else MPI_Send(e, (int)WIRE_BASE, MPI_BYTE, w, TAG, ch.comm);     /* small: sent eagerly */
  }
  /* every other rank's word; anything else comes from a rank in a call
  ** with this one, which our word aborts */
  while (ch.ngone < ch.size - 1) {
    int src;
    if (!receive(&src)) break;
    if (ch.in.type == W_ENDED && src >= 0 && src < ch.size && !ch.gone[src]) {
      ch.gone[src] = true;
      ch.ngone++;
    }
  }
  if (n) MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
  free(reqs);
  free(ends);
  int left = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, ch.comm, &left, MPI_STATUS_IGNORE);
  if (left) {
    fprintf(stderr, "luacuda.dist: a message was left on the control channel at MPI_Finalize "
            "(a bug in luacuda.dist)\n");
    fflush(stderr);
  }
  free(ch.stash);
  ch.stash = NULL;
  ch.nstash = ch.capstash = 0;
  MPI_Comm_free(&ch.comm);
  pthread_mutex_unlock(&ch.lock);
}
