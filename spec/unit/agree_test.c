/*
** Unit tests for src/dist/agree.c (the control channel of luacuda.dist),
** run under mpirun with 3 ranks (spec/dist_agree_spec.lua):
**
**   mpirun -np 3 agree_test          every test, on every rank, in order
**   agree_test --list                the names (no MPI needed)
**
** agree.c is included, so the tests see its message types. MPI_Isend is
** wrapped (MPI's profiling interface) to hold back one rank's message of
** one type for a while: the orderings a test needs are made, not hoped
** for. Each rank checks what it got; then the ranks agree on the verdict
** (on a communicator of the test's own), rank 0 prints "ok NAME" or "not
** ok NAME", and each failing rank prints its first failed check. The last
** test ends the channel: it runs last.
*/
#include "../../src/dist/agree.c"

#include "unit.h"

#include <time.h>

static MPI_Comm comm;        /* the verdicts' */
static int rank, size;

/* ---- messages held back -------------------------------------------------- */

static int hold_rank = -1, hold_type = -1;

static void hold(int r, int type) {
  hold_rank = r;
  hold_type = type;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm c,
              MPI_Request *req) {
  if (rank == hold_rank && count >= (int)sizeof(int32_t) && ((const wire *)buf)->type == hold_type) {
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  return PMPI_Isend(buf, count, t, dest, tag, c, req);
}

/* ---- the groups ------------------------------------------------------------ */

static const char *const names[] = {"barrier", "allreduce", "send", "recv", NULL};
enum { BARRIER, ALLREDUCE, SEND, RECV };

static int world_ranks[3] = {0, 1, 2};
static const lc_group world = {1, 3, 0, world_ranks};   /* rank filled in by main */
static lc_group everyone;

/* the group of the two ranks a < b, as rank me sees it */
static lc_group two(int64_t id, int a, int b, int pair[2]) {
  pair[0] = a;
  pair[1] = b;
  return (lc_group){id, 2, rank == a ? 0 : 1, pair};
}

static lc_header header(int64_t value) {
  lc_header h;
  memset(&h, 0, sizeof h);
  h.f[1] = value;
  return h;
}

/* ---- the tests ------------------------------------------------------------- */

/* every rank gets the same combination: each field's least and greatest,
** the first rank's error */
static int test_collective_combines(void) {
  lc_header h = header(10 * rank);
  h.f[2] = -rank;
  if (rank >= 1) snprintf(h.err, sizeof h.err, "bad on %d", rank);
  lc_call call = {ALLREDUCE, LC_COLLECTIVE, -1};
  lc_combined c;
  char msg[512];
  CHECK_EQ(lc_agree_collective(&everyone, &call, &h, &c, msg, sizeof msg), LC_AGREED);
  CHECK_EQ(c.mx[1], 20);
  CHECK_EQ(c.mn[1], 0);
  CHECK_EQ(c.mn[2], -2);
  CHECK_EQ(c.err_rank, 1);
  CHECK_STR(c.err, "bad on 1");
  return 0;
}

/* a send and its recv each get the other's header */
static int test_pair_exchanges(void) {
  if (rank == 2) return 0;
  int pair[2];
  lc_group g = two(1, 0, 1, pair);
  lc_call call = {rank == 0 ? SEND : RECV, rank == 0 ? LC_SEND : LC_RECV, 1 - g.rank};
  lc_header mine = header(100 + rank), theirs;
  char msg[512];
  CHECK_EQ(lc_agree_pair(&g, &call, &mine, &theirs, msg, sizeof msg), LC_AGREED);
  CHECK_EQ(theirs.f[1], 100 + (1 - rank));
  return 0;
}

/* two recvs: the same error on both (rank 2 elsewhere, alone) */
static int test_two_recvs_raise_on_both(void) {
  if (rank == 2) return 0;
  int pair[2];
  lc_group g = two(1, 0, 1, pair);
  lc_call call = {RECV, LC_RECV, 1 - g.rank};
  lc_header mine = header(0), theirs;
  char msg[512];
  CHECK_EQ(lc_agree_pair(&g, &call, &mine, &theirs, msg, sizeof msg), LC_RAISE);
  CHECK_STR(msg, "ranks disagree: rank 1 is in recv from rank 2 on communicator 1, rank 2 in recv "
                 "from rank 1 on communicator 1");
  return 0;
}

/* rank 2's send to rank 0 comes while rank 0 is in its send to rank 1
** (whose answer is held back): kept for rank 0's next call, not taken for
** a disagreement */
static int test_early_message_kept(void) {
  hold(1, W_PAIR);
  int pair[2];
  lc_header mine = header(rank), theirs;
  char msg[512];
  if (rank == 0 || rank == 1) {
    lc_group g = two(1, 0, 1, pair);
    lc_call call = {rank == 0 ? SEND : RECV, rank == 0 ? LC_SEND : LC_RECV, 1 - g.rank};
    CHECK_EQ(lc_agree_pair(&g, &call, &mine, &theirs, msg, sizeof msg), LC_AGREED);
    CHECK_EQ(theirs.f[1], 1 - rank);
  }
  hold(-1, -1);
  if (rank == 0 || rank == 2) {
    lc_group g = two(1, 0, 2, pair);
    lc_call call = {rank == 0 ? RECV : SEND, rank == 0 ? LC_RECV : LC_SEND, 1 - g.rank};
    CHECK_EQ(lc_agree_pair(&g, &call, &mine, &theirs, msg, sizeof msg), LC_AGREED);
    CHECK_EQ(theirs.f[1], 2 - rank);
  }
  return 0;
}

/* Of 3 ranks, rank 2 is rank 0's extra: it waits for rank 0's result
** (held back), while rank 1, done with its part, ends. Rank 2 must take
** that for what it is, not abort the job. */
static int test_ended_after_its_part(void) {
  hold(0, W_RESULT);
  lc_header h = header(rank);
  lc_call call = {BARRIER, LC_COLLECTIVE, -1};
  lc_combined c;
  char msg[512] = "";
  lc_verdict v = lc_agree_collective(&everyone, &call, &h, &c, msg, sizeof msg);
  hold(-1, -1);
  lc_agree_end();           /* rank 1 at once; rank 2 (held up) later */
  CHECK_STR(msg, "");
  CHECK_EQ(v, LC_AGREED);
  CHECK_EQ(c.mx[1], 2);
  return 0;
}

#define T(name) { #name, test_##name }
static const unit_test TESTS[] = {
  T(collective_combines), T(pair_exchanges), T(two_recvs_raise_on_both), T(early_message_kept),
  T(ended_after_its_part),    /* last: it ends the channel */
};
#define NTESTS ((int)(sizeof TESTS / sizeof TESTS[0]))

/* one test on every rank: the verdict agreed, "ok NAME" from rank 0 */
static bool run_test(const unit_test *t) {
  why[0] = '\0';
  int failed = t->fn() != 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm);
  if (failed) fprintf(stderr, "rank %d: %s: %s\n", rank, t->name, why);
  if (rank == 0) printf("%s %s\n", any ? "not ok" : "ok", t->name);
  fflush(stdout);
  return !any;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--list") == 0)
    return unit_main(argv[0], TESTS, NTESTS, argc, argv);
  MPI_Init(&argc, &argv);
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size != 3) {
    if (rank == 0) fprintf(stderr, "%s: run it with 3 ranks\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  (void)err;     /* unit.h's, for CHECK_OK, which these tests do not use */
  char e[256];
  if (!lc_agree_open(names, e, sizeof e)) {
    fprintf(stderr, "rank %d: %s\n", rank, e);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  everyone = world;
  everyone.rank = rank;
  int failed = 0;
  for (int i = 0; i < NTESTS; i++) failed += !run_test(&TESTS[i]);
  if (rank == 0) printf("%d of %d tests failed\n", failed, NTESTS);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return failed ? 1 : 0;
}
