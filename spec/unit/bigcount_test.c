/*
** Unit tests for src/dist/bigcount.c, run under mpirun (spec/dist_bigcount_spec.lua):
**
**   mpirun -np N bigcount_test          every test, on every rank
**   mpirun -np N bigcount_test NAME     one of them
**   bigcount_test --list                the names (no MPI needed)
**   mpirun -np 2 bigcount_test big      the real thing, by hand: counts over
**                                       INT_MAX at the default chunk (about
**                                       5 GiB per rank; 1.5 minutes on 2 cores)
**
** Every rank runs the same calls and compares what arrived with values it
** computes itself. A failed check is recorded and the test goes on, so
** every rank still makes the same collective calls; then the ranks agree
** on the verdict, rank 0 prints "ok NAME" or "not ok NAME", and each
** failing rank prints its first failed check.
**
** The MPI calls bigcount.c makes go through the wrappers below (MPI's
** profiling interface), which count the calls and the largest piece, so
** the tests see the cutting as well as the results. Run with
** LUACUDA_DIST_CHUNK=7 to cut small arrays, BIGCOUNT_TEST_CHUNK saying the
** chunk to expect (INT_MAX when unset).
*/
#include "../../src/dist/bigcount.h"

#include "unit.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

static MPI_Comm comm;        /* MPI_COMM_WORLD's copy, returning errors */
static int rank, size;

/* ---- the MPI calls, counted ---------------------------------------------- */

/* the MPI functions bigcount.c calls to move data */
enum { ALLREDUCE, REDUCE, BCAST, ALLGATHER, REDUCE_SCATTER_BLOCK, SEND, RECV, NFNS };

/* since reset: the calls of each, and the most bytes one rank's piece had */
static int64_t calls[NFNS], max_bytes[NFNS];

static void reset(void) {
  memset(calls, 0, sizeof calls);
  memset(max_bytes, 0, sizeof max_bytes);
}

static int64_t all_calls(void) {
  int64_t total = 0;
  for (int f = 0; f < NFNS; f++) total += calls[f];
  return total;
}

static void note(int fn, int count, MPI_Datatype t) {
  int tsize = 0;
  PMPI_Type_size(t, &tsize);
  calls[fn]++;
  if ((int64_t)count * tsize > max_bytes[fn]) max_bytes[fn] = (int64_t)count * tsize;
}

int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  note(ALLREDUCE, count, t);
  return PMPI_Allreduce(s, r, count, t, op, c);
}

int MPI_Reduce(const void *s, void *r, int count, MPI_Datatype t, MPI_Op op, int root,
               MPI_Comm c) {
  note(REDUCE, count, t);
  return PMPI_Reduce(s, r, count, t, op, root, c);
}

int MPI_Bcast(void *b, int count, MPI_Datatype t, int root, MPI_Comm c) {
  note(BCAST, count, t);
  return PMPI_Bcast(b, count, t, root, c);
}

int MPI_Allgather(const void *s, int scount, MPI_Datatype st, void *r, int rcount,
                  MPI_Datatype rt, MPI_Comm c) {
  note(ALLGATHER, rcount, rt);     /* the receive side: it is there in place too */
  return PMPI_Allgather(s, scount, st, r, rcount, rt, c);
}

int MPI_Reduce_scatter_block(const void *s, void *r, int count, MPI_Datatype t, MPI_Op op,
                             MPI_Comm c) {
  note(REDUCE_SCATTER_BLOCK, count, t);
  return PMPI_Reduce_scatter_block(s, r, count, t, op, c);
}

/* run once after the next piece sent, then cleared */
static void (*after_next_send)(void);

int MPI_Send(const void *b, int count, MPI_Datatype t, int peer, int tag, MPI_Comm c) {
  note(SEND, count, t);
  int rc = PMPI_Send(b, count, t, peer, tag, c);
  void (*then)(void) = after_next_send;
  after_next_send = NULL;
  if (then) then();
  return rc;
}

int MPI_Recv(void *b, int count, MPI_Datatype t, int peer, int tag, MPI_Comm c, MPI_Status *st) {
  note(RECV, count, t);
  return PMPI_Recv(b, count, t, peer, tag, c, st);
}

/* ---- failed checks: recorded, the test goes on --------------------------- */

static int failures;
static char where[256];      /* the case being run, for the messages */

#define EXPECT(cond, ...) do { \
    if (!(cond) && failures++ == 0) { \
      char m_[sizeof err + 256]; \
      snprintf(m_, sizeof m_, __VA_ARGS__); \
      failf(__FILE__, __LINE__, "%s: %s", where, m_); \
    } \
  } while (0)

/* ---- element kinds: values, and the reduction of them -------------------- */

/* The user op beside the predefined ones, as dtypes.c's half-precision ops
** are (on MPI_UINT16_T): a sum that stops at 1000. It notes any datatype
** other than MPI_UINT16_T handed to it, which bigcount.h promises never
** happens. */
static MPI_Op capped_sum;
static bool op_saw_other_type;

static uint16_t cap(unsigned v) { return (uint16_t)(v > 1000 ? 1000 : v); }

static void capped_sum_fn(void *in, void *inout, int *len, MPI_Datatype *t) {
  if (*t != MPI_UINT16_T) {
    op_saw_other_type = true;
    return;
  }
  const uint16_t *a = in;
  uint16_t *b = inout;
  for (int i = 0; i < *len; i++) b[i] = cap((unsigned)a[i] + b[i]);
}

typedef struct kind {
  const char *name;
  MPI_Datatype t;
  size_t size;
  MPI_Op *op;                 /* the reduction the tests use (a pointer: capped_sum is made late) */
  /* element i of rank r's data, for i in [first, first + n), into p */
  void (*fill)(void *p, int64_t first, int64_t n, int r);
  /* acc[i] = op(acc[i], x[i]) */
  void (*combine)(void *acc, const void *x, int64_t n);
} kind;

static void fill_i32(void *p, int64_t first, int64_t n, int r) {
  int32_t *v = p;
  for (int64_t i = 0; i < n; i++) v[i] = (int32_t)(((first + i) * 7919 + r * 104729) % 2001 - 1000);
}
static void sum_i32(void *acc, const void *x, int64_t n) {
  int32_t *a = acc;
  const int32_t *b = x;
  for (int64_t i = 0; i < n; i++) a[i] += b[i];
}

/* multiples of 1/4, small: their sums are exact in any order */
static void fill_f64(void *p, int64_t first, int64_t n, int r) {
  double *v = p;
  for (int64_t i = 0; i < n; i++) v[i] = (double)((first + i) % 97) * 0.25 - (r + 1) * 1.5;
}
static void sum_f64(void *acc, const void *x, int64_t n) {
  double *a = acc;
  const double *b = x;
  for (int64_t i = 0; i < n; i++) a[i] += b[i];
}

static void fill_byte(void *p, int64_t first, int64_t n, int r) {
  unsigned char *v = p;
  for (int64_t i = 0; i < n; i++) v[i] = (unsigned char)((first + i) * 37 + r * 101 + 1);
}
static void xor_byte(void *acc, const void *x, int64_t n) {
  unsigned char *a = acc;
  const unsigned char *b = x;
  for (int64_t i = 0; i < n; i++) a[i] ^= b[i];
}

static void fill_u16(void *p, int64_t first, int64_t n, int r) {
  uint16_t *v = p;
  for (int64_t i = 0; i < n; i++) v[i] = (uint16_t)(((first + i) * 13 + r * 211) % 600);
}
static void capped_u16(void *acc, const void *x, int64_t n) {
  uint16_t *a = acc;
  const uint16_t *b = x;
  for (int64_t i = 0; i < n; i++) a[i] = cap((unsigned)a[i] + b[i]);
}

static MPI_Op op_sum = MPI_SUM, op_bxor = MPI_BXOR;

static const kind KINDS[] = {
  { "int32", MPI_INT32_T, sizeof(int32_t), &op_sum, fill_i32, sum_i32 },
  { "double", MPI_DOUBLE, sizeof(double), &op_sum, fill_f64, sum_f64 },
  { "byte", MPI_BYTE, 1, &op_bxor, fill_byte, xor_byte },
  { "uint16 (user op)", MPI_UINT16_T, sizeof(uint16_t), &capped_sum, fill_u16, capped_u16 },
};
#define NKINDS (int)(sizeof KINDS / sizeof KINDS[0])

/* counts on both sides of the chunk's edges when LUACUDA_DIST_CHUNK=7
** (allgather and reduce_scatter_block cut at 7 / ranks) */
static const int64_t COUNTS[] = { 0, 1, 2, 3, 4, 6, 7, 8, 13, 14, 15, 20, 50 };
#define NCOUNTS (int)(sizeof COUNTS / sizeof COUNTS[0])

/* ---- buffers ------------------------------------------------------------- */

#define POISON 0xEE     /* what a buffer holds before a call writes it */

/* n elements and one more past the end, all POISON (never uninitialised:
** valgrind) */
static void *poisoned(const kind *k, int64_t n) {
  size_t bytes = (size_t)(n + 1) * k->size;
  void *p = malloc(bytes);
  if (p == NULL) {
    fprintf(stderr, "bigcount_test: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  memset(p, POISON, bytes);
  return p;
}

/* p's n elements are want's, and the element past them still POISON */
static void expect_elements(const kind *k, const void *p, const void *want, int64_t n) {
  const unsigned char *g = p, *w = want;
  for (int64_t i = 0; i < n; i++) {
    if (memcmp(g + i * k->size, w + i * k->size, k->size) != 0) {
      EXPECT(false, "element %lld of %lld is wrong", (long long)i + 1, (long long)n);
      return;
    }
  }
  for (size_t b = 0; b < k->size; b++)
    EXPECT(g[n * k->size + b] == POISON, "the call wrote past the %lld elements", (long long)n);
}

/* op over the ranks' data: element i of every rank's block at first */
static void *reduced(const kind *k, int64_t first, int64_t n) {
  void *acc = poisoned(k, n), *x = poisoned(k, n);
  k->fill(acc, first, n, 0);
  for (int r = 1; r < size; r++) {
    k->fill(x, first, n, r);
    k->combine(acc, x, n);
  }
  free(x);
  return acc;
}

/* The calls of fn a count of n makes, pieces being limit long, none with
** more than limit elements, and extra calls of other functions besides. */
static void expect_calls(const kind *k, int fn, int64_t n, int64_t limit, int extra) {
  int64_t want = n == 0 ? 1 : (n + limit - 1) / limit;
  EXPECT(calls[fn] == want, "%lld MPI calls, expected %lld", (long long)calls[fn], (long long)want);
  EXPECT(max_bytes[fn] <= limit * (int64_t)k->size, "a piece of %lld bytes, over %lld elements",
         (long long)max_bytes[fn], (long long)limit);
  EXPECT(all_calls() - calls[fn] == extra, "%lld other MPI calls, expected %d",
         (long long)(all_calls() - calls[fn]), extra);
}

static int64_t block_limit(void) {
  int64_t l = lc_mpi_chunk() / size;
  return l < 1 ? 1 : l;
}

#define CASE(...) snprintf(where, sizeof where, __VA_ARGS__)

/* MPI's words for rc, in unit.h's err */
_Static_assert(sizeof err >= MPI_MAX_ERROR_STRING, "err holds an MPI error string");
static const char *said(int rc) {
  int len;
  if (MPI_Error_string(rc, err, &len) != MPI_SUCCESS) snprintf(err, sizeof err, "error %d", rc);
  return err;
}

/* ---- the tests ----------------------------------------------------------- */

static int test_chunk(void) {
  const char *s = getenv("BIGCOUNT_TEST_CHUNK");
  int64_t want = s ? strtoll(s, NULL, 10) : INT_MAX;
  CASE("lc_mpi_chunk");
  EXPECT(lc_mpi_chunk() == want, "%lld, expected %lld", (long long)lc_mpi_chunk(), (long long)want);
  EXPECT(lc_mpi_chunk() == want, "changed on the second call");
  return failures;
}

static int test_allreduce(void) {
  for (int ki = 0; ki < NKINDS; ki++) {
    const kind *k = &KINDS[ki];
    for (int ci = 0; ci < NCOUNTS; ci++) {
      int64_t n = COUNTS[ci];
      void *want = reduced(k, 0, n);
      for (int in_place = 0; in_place <= 1; in_place++) {
        CASE("allreduce %s n=%lld%s", k->name, (long long)n, in_place ? " in place" : "");
        void *send = poisoned(k, n), *recv = poisoned(k, n);
        k->fill(in_place ? recv : send, 0, n, rank);
        reset();
        int rc = lc_mpi_allreduce(in_place ? MPI_IN_PLACE : send, recv, n, k->t, *k->op, comm);
        EXPECT(rc == MPI_SUCCESS, "returned %s", said(rc));
        expect_calls(k, ALLREDUCE, n, lc_mpi_chunk(), 0);
        expect_elements(k, recv, want, n);
        free(send);
        free(recv);
      }
      free(want);
    }
  }
  EXPECT(!op_saw_other_type, "the user op was handed a datatype other than MPI_UINT16_T");
  return failures;
}

static int test_reduce(void) {
  for (int ki = 0; ki < NKINDS; ki++) {
    const kind *k = &KINDS[ki];
    for (int ci = 0; ci < NCOUNTS; ci++) {
      int64_t n = COUNTS[ci];
      void *want = reduced(k, 0, n);
      for (int root = 0; root < size; root++) {
        for (int in_place = 0; in_place <= 1; in_place++) {
          CASE("reduce %s n=%lld root=%d%s", k->name, (long long)n, root + 1,
               in_place ? " in place" : "");
          bool mine = rank == root;
          void *send = poisoned(k, n), *recv = mine ? poisoned(k, n) : NULL;
          k->fill(mine && in_place ? recv : send, 0, n, rank);
          reset();
          int rc = lc_mpi_reduce(mine && in_place ? MPI_IN_PLACE : send, recv, n, k->t, *k->op,
                                 root, comm);
          EXPECT(rc == MPI_SUCCESS, "returned %s", said(rc));
          expect_calls(k, REDUCE, n, lc_mpi_chunk(), 0);
          if (mine) expect_elements(k, recv, want, n);
          free(send);
          free(recv);
        }
      }
      free(want);
    }
  }
  EXPECT(!op_saw_other_type, "the user op was handed a datatype other than MPI_UINT16_T");
  return failures;
}

static int test_bcast(void) {
  for (int ki = 0; ki < NKINDS; ki++) {
    const kind *k = &KINDS[ki];
    for (int ci = 0; ci < NCOUNTS; ci++) {
      int64_t n = COUNTS[ci];
      for (int root = 0; root < size; root++) {
        CASE("bcast %s n=%lld root=%d", k->name, (long long)n, root + 1);
        void *buf = poisoned(k, n), *want = poisoned(k, n);
        k->fill(want, 0, n, root);
        if (rank == root) k->fill(buf, 0, n, root);
        reset();
        int rc = lc_mpi_bcast(buf, n, k->t, root, comm);
        EXPECT(rc == MPI_SUCCESS, "returned %s", said(rc));
        expect_calls(k, BCAST, n, lc_mpi_chunk(), 0);
        expect_elements(k, buf, want, n);
        free(buf);
        free(want);
      }
    }
  }
  return failures;
}

static int test_allgather(void) {
  for (int ki = 0; ki < NKINDS; ki++) {
    const kind *k = &KINDS[ki];
    for (int ci = 0; ci < NCOUNTS; ci++) {
      int64_t n = COUNTS[ci];
      /* rank r's block is its own data: fill at r * n, as a rank of one
      ** array split in blocks */
      void *want = poisoned(k, size * n);
      for (int r = 0; r < size; r++) k->fill((char *)want + r * n * k->size, r * n, n, r);
      for (int in_place = 0; in_place <= 1; in_place++) {
        CASE("allgather %s n=%lld%s", k->name, (long long)n, in_place ? " in place" : "");
        void *send = poisoned(k, n), *recv = poisoned(k, size * n);
        k->fill(in_place ? (char *)recv + rank * n * k->size : send, rank * n, n, rank);
        reset();
        int rc = lc_mpi_allgather(in_place ? MPI_IN_PLACE : send, n, recv, k->t, comm);
        EXPECT(rc == MPI_SUCCESS, "returned %s", said(rc));
        expect_calls(k, ALLGATHER, n, block_limit(), 0);
        expect_elements(k, recv, want, size * n);
        free(send);
        free(recv);
      }
      free(want);
    }
  }
  return failures;
}

static int test_reduce_scatter_block(void) {
  for (int ki = 0; ki < NKINDS; ki++) {
    const kind *k = &KINDS[ki];
    for (int ci = 0; ci < NCOUNTS; ci++) {
      int64_t n = COUNTS[ci];
      void *want = reduced(k, rank * n, n);    /* block r of the reduction, on rank r */
      for (int in_place = 0; in_place <= 1; in_place++) {
        CASE("reduce_scatter_block %s n=%lld%s", k->name, (long long)n,
             in_place ? " in place" : "");
        void *send = poisoned(k, size * n), *recv = poisoned(k, in_place ? size * n : n);
        k->fill(in_place ? recv : send, 0, size * n, rank);
        reset();
        int rc = lc_mpi_reduce_scatter_block(in_place ? MPI_IN_PLACE : send, recv, n, k->t,
                                             *k->op, comm);
        EXPECT(rc == MPI_SUCCESS, "returned %s", said(rc));
        /* over the limit, the ranks first agree they have the staging buffer */
        expect_calls(k, REDUCE_SCATTER_BLOCK, n, block_limit(), n > block_limit());
        if (in_place) {
          /* the result is recv's first n; MPI leaves the rest unspecified,
          ** the extra element past it is the poison check's */
          unsigned char *p = recv;
          memset(p + n * k->size, POISON, k->size);
        }
        expect_elements(k, recv, want, n);
        free(send);
        free(recv);
      }
      free(want);
    }
  }
  EXPECT(!op_saw_other_type, "the user op was handed a datatype other than MPI_UINT16_T");
  return failures;
}

/* ranks 1 and 2 swap arrays of every count; the others (and a job of one
** rank) have nobody to talk to */
static int test_send_recv(void) {
  if (size < 2 || rank > 1) return 0;
  int peer = 1 - rank;
  for (int ki = 0; ki < NKINDS; ki++) {
    const kind *k = &KINDS[ki];
    for (int ci = 0; ci < NCOUNTS; ci++) {
      int64_t n = COUNTS[ci];
      CASE("send/recv %s n=%lld", k->name, (long long)n);
      void *mine = poisoned(k, n), *theirs = poisoned(k, n), *want = poisoned(k, n);
      k->fill(mine, 0, n, rank);
      k->fill(want, 0, n, peer);
      int rc1, rc2;
      reset();
      if (rank == 0) {
        rc1 = lc_mpi_send(mine, n, k->t, peer, 5, comm);
        rc2 = lc_mpi_recv(theirs, n, k->t, peer, 5, comm);
      } else {
        rc2 = lc_mpi_recv(theirs, n, k->t, peer, 5, comm);
        rc1 = lc_mpi_send(mine, n, k->t, peer, 5, comm);
      }
      EXPECT(rc1 == MPI_SUCCESS, "send returned %s", said(rc1));
      EXPECT(rc2 == MPI_SUCCESS, "recv returned %s", said(rc2));
      int64_t pieces = n == 0 ? 1 : (n + lc_mpi_chunk() - 1) / lc_mpi_chunk();
      EXPECT(calls[SEND] == pieces && calls[RECV] == pieces && all_calls() == 2 * pieces,
             "%lld sends and %lld receives, expected %lld each", (long long)calls[SEND],
             (long long)calls[RECV], (long long)pieces);
      EXPECT(max_bytes[SEND] <= lc_mpi_chunk() * (int64_t)k->size &&
             max_bytes[RECV] <= lc_mpi_chunk() * (int64_t)k->size,
             "a piece of %lld bytes sent, %lld received", (long long)max_bytes[SEND],
             (long long)max_bytes[RECV]);
      expect_elements(k, theirs, want, n);
      free(mine);
      free(theirs);
      free(want);
    }
  }
  return failures;
}

/* Rank 3's turn to send to rank 1 in test_recv_any_source, in the middle
** of rank 2's own message, and the wait for its end. (The pieces are a few
** bytes: they go out whether or not rank 1 has asked for them yet.) */
static void let_rank3_send(void) {
  int token = 0;
  PMPI_Send(&token, 1, MPI_INT, 2, 99, comm);
  PMPI_Recv(&token, 1, MPI_INT, 2, 98, comm, MPI_STATUS_IGNORE);
}

/* Rank 1 takes n elements from any sender with any tag, count times: each
** must be one sender's array, whole (fill's values of salt[s] for some s
** not yet seen). */
static void expect_whole_messages(const kind *k, int64_t n, int count, const int *salt) {
  bool seen[64] = { false };
  void *got = poisoned(k, n), *want = poisoned(k, n);
  for (int m = 0; m < count; m++) {
    int rc = lc_mpi_recv(got, n, k->t, MPI_ANY_SOURCE, MPI_ANY_TAG, comm);
    EXPECT(rc == MPI_SUCCESS, "recv returned %s", said(rc));
    int from = -1;
    for (int s = 0; s < count && s < 64 && from < 0; s++) {
      k->fill(want, 0, n, salt[s]);
      if (!seen[s] && memcmp(got, want, (size_t)n * k->size) == 0) from = s;
    }
    EXPECT(from >= 0, "message %d is not one of the arrays sent, whole", m + 1);
    if (from >= 0) seen[from] = true;
  }
  free(got);
  free(want);
}

/* Every other rank sends rank 1 an array of several pieces, on one tag;
** rank 1 takes them from MPI_ANY_SOURCE, and each must come whole from
** one sender. Rank 3's message comes between the first and second piece
** of rank 2's, so that a second piece taken from any source would be rank
** 3's first. */
static int test_recv_any_source(void) {
  const kind *k = &KINDS[0];
  const int64_t n = 20;
  CASE("recv from MPI_ANY_SOURCE, n=%lld", (long long)n);
  if (rank == 0) {
    int salt[64];
    for (int s = 0; s < size - 1 && s < 64; s++) salt[s] = s + 1;
    expect_whole_messages(k, n, size - 1, salt);
    return failures;
  }
  void *mine = poisoned(k, n);
  k->fill(mine, 0, n, rank);
  int token = 0;
  if (rank == 1 && size > 2) after_next_send = let_rank3_send;
  if (rank == 2) PMPI_Recv(&token, 1, MPI_INT, 1, 99, comm, MPI_STATUS_IGNORE);
  int rc = lc_mpi_send(mine, n, k->t, 0, 40, comm);
  EXPECT(rc == MPI_SUCCESS, "send returned %s", said(rc));
  if (rank == 2) PMPI_Send(&token, 1, MPI_INT, 1, 98, comm);
  free(mine);
  return failures;
}

static void *second_message;   /* test_recv_any_tag's, sent from inside the first */

static void send_second_message(void) {
  int rc = lc_mpi_send(second_message, 20, MPI_INT32_T, 0, 51, comm);
  EXPECT(rc == MPI_SUCCESS, "the second send returned %s", said(rc));
}

/* Rank 2 sends rank 1 two arrays of several pieces on two tags, the second
** between the first's first and second piece; rank 1 takes them with
** MPI_ANY_TAG, and each must come whole. */
static int test_recv_any_tag(void) {
  if (size < 2 || rank > 1) return 0;
  const kind *k = &KINDS[0];
  const int64_t n = 20;
  const int salt[2] = { 11, 12 };
  CASE("recv with MPI_ANY_TAG, n=%lld", (long long)n);
  if (rank == 0) {
    expect_whole_messages(k, n, 2, salt);
    return failures;
  }
  void *first = poisoned(k, n);
  second_message = poisoned(k, n);
  k->fill(first, 0, n, salt[0]);
  k->fill(second_message, 0, n, salt[1]);
  after_next_send = send_second_message;
  int rc = lc_mpi_send(first, n, k->t, 0, 50, comm);
  EXPECT(rc == MPI_SUCCESS, "send returned %s", said(rc));
  free(first);
  free(second_message);
  return failures;
}

/* A message shorter than the receiver's n: an error where it leaves later
** pieces waiting (the chunk under the sent count), MPI's own behaviour
** (the short message taken) where it is one piece. */
static int test_recv_short_message(void) {
  if (size < 2 || rank > 1) return 0;
  const kind *k = &KINDS[0];
  const int64_t sent = 8, expected = 20;
  CASE("recv of %lld elements, %lld sent", (long long)expected, (long long)sent);
  void *buf = poisoned(k, expected);
  k->fill(buf, 0, expected, rank);
  int rc = rank == 1 ? lc_mpi_send(buf, sent, k->t, 0, 9, comm)
                     : lc_mpi_recv(buf, expected, k->t, 1, 9, comm);
  if (rank == 1 || lc_mpi_chunk() >= sent)
    EXPECT(rc == MPI_SUCCESS, "returned %s", said(rc));
  else
    EXPECT(rc == MPI_ERR_COUNT, "returned %s, expected MPI_ERR_COUNT", said(rc));
  free(buf);
  return failures;
}

/* MPI_PROC_NULL: nothing sent, nothing received, the buffer left alone */
static int test_proc_null(void) {
  const kind *k = &KINDS[1];
  CASE("send and recv with MPI_PROC_NULL, n=20");
  void *buf = poisoned(k, 20), *want = poisoned(k, 20);
  EXPECT(lc_mpi_send(buf, 20, k->t, MPI_PROC_NULL, 0, comm) == MPI_SUCCESS, "send failed");
  EXPECT(lc_mpi_recv(buf, 20, k->t, MPI_PROC_NULL, 0, comm) == MPI_SUCCESS, "recv failed");
  EXPECT(memcmp(buf, want, 21 * k->size) == 0, "recv wrote the buffer");
  free(buf);
  free(want);
  return failures;
}

/* A negative count: MPI_ERR_COUNT from every function, before any MPI call
** (every rank sees it alike, so nothing is left waiting). */
static int test_negative_count(void) {
  int32_t x[4] = { 0 };
  CASE("count -1");
  reset();
  int rc[] = {
    lc_mpi_allreduce(x, x + 2, -1, MPI_INT32_T, MPI_SUM, comm),
    lc_mpi_reduce(x, x + 2, -1, MPI_INT32_T, MPI_SUM, 0, comm),
    lc_mpi_bcast(x, -1, MPI_INT32_T, 0, comm),
    lc_mpi_allgather(x, -1, x + 2, MPI_INT32_T, comm),
    lc_mpi_reduce_scatter_block(x, x + 2, -1, MPI_INT32_T, MPI_SUM, comm),
    lc_mpi_send(x, -1, MPI_INT32_T, 0, 0, comm),
    lc_mpi_recv(x, -1, MPI_INT32_T, 0, 0, comm),
  };
  for (size_t i = 0; i < sizeof rc / sizeof rc[0]; i++)
    EXPECT(rc[i] == MPI_ERR_COUNT, "function %zu returned %s", i + 1, said(rc[i]));
  EXPECT(all_calls() == 0, "%lld MPI calls made", (long long)all_calls());
  return failures;
}

static const unit_test TESTS[] = {
  { "chunk", test_chunk },
  { "allreduce", test_allreduce },
  { "reduce", test_reduce },
  { "bcast", test_bcast },
  { "allgather", test_allgather },
  { "reduce_scatter_block", test_reduce_scatter_block },
  { "send_recv", test_send_recv },
  { "recv_any_source", test_recv_any_source },
  { "recv_any_tag", test_recv_any_tag },
  { "recv_short_message", test_recv_short_message },
  { "proc_null", test_proc_null },
  { "negative_count", test_negative_count },
};
#define NTESTS (int)(sizeof TESTS / sizeof TESTS[0])

/* ---- big: counts over INT_MAX, by hand ----------------------------------- */

#define BIG ((INT64_C(1) << 31) + 5)        /* elements of allreduce and bcast */
#define BIG_BLOCK ((INT64_C(1) << 30) + 5)  /* each rank's, of allgather and reduce_scatter_block */

static void *big_alloc(int64_t bytes) {
  void *p = malloc((size_t)bytes);
  if (p == NULL) {
    fprintf(stderr, "rank %d: no %lld bytes for the big test\n", rank + 1, (long long)bytes);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}

/* int8 element i of rank r: small, so the sum over the ranks fits */
static int8_t big_value(int64_t i, int r) { return (int8_t)(i % 11 - 5 + r); }

static int8_t big_sum(int64_t i) {
  int s = 0;
  for (int r = 0; r < size; r++) s += big_value(i, r);
  return (int8_t)s;
}

static double big_seconds(double t0) {
  double t = PMPI_Wtime() - t0, most;
  PMPI_Allreduce(&t, &most, 1, MPI_DOUBLE, MPI_MAX, comm);
  return most;
}

static void big_report(const char *what, int64_t n, double seconds) {
  if (rank == 0)
    printf("big %s of %lld elements: %lld MPI calls, %.2f s\n", what, (long long)n,
           (long long)all_calls(), seconds);
}

/* the elements of the big test, for expect_calls */
static const kind INT8 = { "int8", MPI_INT8_T, 1, &op_sum, NULL, NULL };

static int test_big(void) {
  int64_t bytes = BIG > size * BIG_BLOCK ? BIG : size * BIG_BLOCK;
  int8_t *a = big_alloc(bytes), *b = big_alloc(bytes);

  CASE("big allreduce");
  for (int64_t i = 0; i < BIG; i++) a[i] = big_value(i, rank);
  reset();
  double t0 = PMPI_Wtime();
  EXPECT(lc_mpi_allreduce(a, b, BIG, MPI_INT8_T, MPI_SUM, comm) == MPI_SUCCESS, "failed");
  big_report("allreduce (int8, sum)", BIG, big_seconds(t0));
  expect_calls(&INT8, ALLREDUCE, BIG, lc_mpi_chunk(), 0);
  for (int64_t i = 0; i < BIG; i++)
    if (b[i] != big_sum(i)) {
      EXPECT(false, "element %lld is %d, expected %d", (long long)i + 1, b[i], big_sum(i));
      break;
    }

  CASE("big bcast");
  const int root = size - 1;
  for (int64_t i = 0; i < BIG; i++) b[i] = rank == root ? big_value(i, root) : 0;
  reset();
  t0 = PMPI_Wtime();
  EXPECT(lc_mpi_bcast(b, BIG, MPI_BYTE, root, comm) == MPI_SUCCESS, "failed");
  big_report("bcast (bytes)", BIG, big_seconds(t0));
  expect_calls(&INT8, BCAST, BIG, lc_mpi_chunk(), 0);
  for (int64_t i = 0; i < BIG; i++)
    if (b[i] != big_value(i, root)) {
      EXPECT(false, "element %lld is %d", (long long)i + 1, b[i]);
      break;
    }

  CASE("big allgather");
  for (int64_t i = 0; i < BIG_BLOCK; i++) a[i] = big_value(i, rank);
  reset();
  t0 = PMPI_Wtime();
  EXPECT(lc_mpi_allgather(a, BIG_BLOCK, b, MPI_BYTE, comm) == MPI_SUCCESS, "failed");
  big_report("allgather (bytes, each rank's)", BIG_BLOCK, big_seconds(t0));
  expect_calls(&INT8, ALLGATHER, BIG_BLOCK, block_limit(), 0);
  for (int64_t i = 0; i < size * BIG_BLOCK; i++)
    if (b[i] != big_value(i % BIG_BLOCK, (int)(i / BIG_BLOCK))) {
      EXPECT(false, "element %lld is %d", (long long)i + 1, b[i]);
      break;
    }

  CASE("big reduce_scatter_block");
  for (int64_t i = 0; i < size * BIG_BLOCK; i++) a[i] = big_value(i, rank);
  reset();
  t0 = PMPI_Wtime();
  EXPECT(lc_mpi_reduce_scatter_block(a, b, BIG_BLOCK, MPI_INT8_T, MPI_SUM, comm) == MPI_SUCCESS,
         "failed");
  big_report("reduce_scatter_block (int8, sum, each rank's)", BIG_BLOCK, big_seconds(t0));
  /* pieces of the staging buffer's size, after the ranks agree they have it */
  EXPECT(calls[REDUCE_SCATTER_BLOCK] > BIG_BLOCK / block_limit() &&
         max_bytes[REDUCE_SCATTER_BLOCK] <= block_limit() && calls[ALLREDUCE] == 1 &&
         all_calls() == calls[REDUCE_SCATTER_BLOCK] + 1,
         "%lld calls, the largest of %lld bytes", (long long)all_calls(),
         (long long)max_bytes[REDUCE_SCATTER_BLOCK]);
  for (int64_t i = 0; i < BIG_BLOCK; i++)
    if (b[i] != big_sum(rank * BIG_BLOCK + i)) {
      EXPECT(false, "element %lld is %d", (long long)i + 1, b[i]);
      break;
    }
  free(a);
  free(b);
  return failures;
}

/* ---- main ---------------------------------------------------------------- */

/* Run t on every rank: whether it passed on all of them. */
static bool run(const unit_test *t) {
  failures = 0;
  why[0] = '\0';
  int bad = t->fn() != 0, anybad;
  PMPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (bad) printf("rank %d of %d: %s\n", rank + 1, size, why);
  fflush(stdout);
  PMPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("%s %s\n", anybad ? "not ok" : "ok", t->name);
  fflush(stdout);
  return !anybad;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--list") == 0)   /* unit.h's listing, without MPI */
    return unit_main(argv[0], TESTS, NTESTS, argc, argv);
  MPI_Init(&argc, &argv);
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Op_create(capped_sum_fn, 1, &capped_sum);

  int failed = 0, found = argc == 1;
  if (argc == 2 && strcmp(argv[1], "big") == 0) {
    const unit_test big = { "big", test_big };
    failed = !run(&big);
    found = 1;
  }
  for (int i = 0; i < NTESTS; i++)
    if (argc == 1 || (argc == 2 && strcmp(argv[1], TESTS[i].name) == 0)) {
      failed += !run(&TESTS[i]);
      found = 1;
    }
  if (!found && rank == 0) fprintf(stderr, "%s: no test named %s (see --list)\n", argv[0],
                                   argc > 1 ? argv[1] : "");
  if (rank == 0 && argc == 1) printf("%d of %d tests failed\n", failed, NTESTS);

  MPI_Op_free(&capped_sum);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return failed ? 1 : found ? 0 : 2;
}
