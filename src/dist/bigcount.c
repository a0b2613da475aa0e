/*
** bigcount: MPI collectives and point-to-point calls with 64-bit counts,
** each cut into pieces of at most lc_mpi_chunk() elements (bigcount.h).
*/
#include "bigcount.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* reduce_scatter_block's staging buffer over the chunk: at most this many
** bytes (or one element of every rank), so that a big call costs a bounded
** temporary, not a copy of its input */
#define STAGE_BYTES ((int64_t)128 << 20)

/* ---- the chunk ----------------------------------------------------------- */

static int64_t chunk = INT_MAX;
static pthread_once_t chunk_once = PTHREAD_ONCE_INIT;

static void read_chunk(void) {
  const char *s = getenv("LUACUDA_DIST_CHUNK");
  if (s == NULL || *s < '0' || *s > '9') return;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno == 0 && *end == '\0' && v >= 1 && v <= INT_MAX) chunk = v;
}

int64_t lc_mpi_chunk(void) {
  pthread_once(&chunk_once, read_chunk);
  return chunk;
}

/* ---- pieces -------------------------------------------------------------- */

/* t's extent into *ext, once n elements of it, times blocks, are known to
** be addressable; MPI_ERR_COUNT otherwise (a negative n, or more bytes
** than a pointer spans). */
static int check_count(int64_t n, int blocks, MPI_Datatype t, MPI_Aint *ext) {
  if (n < 0 || n > INT64_MAX - INT_MAX) return MPI_ERR_COUNT;   /* pieces' ends stay in range */
  MPI_Aint lb;
  int rc = MPI_Type_get_extent(t, &lb, ext);
  if (rc != MPI_SUCCESS) return rc;
  if (*ext > 0 && n > PTRDIFF_MAX / *ext / blocks) return MPI_ERR_COUNT;
  return MPI_SUCCESS;
}

/* p moved on by off bytes; MPI_IN_PLACE and NULL (a buffer MPI does not
** read here) are markers, not addresses, and stay as they are */
static void *at(const void *p, MPI_Aint off) {
  if (p == NULL || p == MPI_IN_PLACE) return (void *)p;
  return (char *)p + off;
}

/* The count of the piece that starts at element first of n, pieces being
** limit long. Loops over pieces run `first == 0 || first < n`: one piece of
** 0 elements when n is 0, as the plain MPI call would make. */
static int piece(int64_t n, int64_t first, int64_t limit) {
  return (int)(n - first < limit ? n - first : limit);
}

/* The communicator's size, and the per-rank count of one call of a
** collective whose buffer holds every rank's block: size of them together
** within the chunk (at least one element each). */
static int block_limit(MPI_Comm comm, int *size, int64_t *limit) {
  int rc = MPI_Comm_size(comm, size);
  if (rc != MPI_SUCCESS) return rc;
  *limit = lc_mpi_chunk() / *size;
  if (*limit < 1) *limit = 1;
  return MPI_SUCCESS;
}

/* ---- elementwise: each piece is a call of its own ------------------------ */

int lc_mpi_allreduce(const void *send, void *recv, int64_t n, MPI_Datatype t, MPI_Op op,
                     MPI_Comm comm) {
  MPI_Aint ext;
  int rc = check_count(n, 1, t, &ext);
  int64_t limit = lc_mpi_chunk();
  for (int64_t first = 0; rc == MPI_SUCCESS && (first == 0 || first < n); first += limit)
    rc = MPI_Allreduce(at(send, first * ext), at(recv, first * ext), piece(n, first, limit), t,
                       op, comm);
  return rc;
}

int lc_mpi_reduce(const void *send, void *recv, int64_t n, MPI_Datatype t, MPI_Op op, int root,
                  MPI_Comm comm) {
  MPI_Aint ext;
  int rc = check_count(n, 1, t, &ext);
  int rank = -1;
  if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(comm, &rank);
  /* recv is no address on the other ranks: it is passed on untouched */
  int64_t limit = lc_mpi_chunk();
  for (int64_t first = 0; rc == MPI_SUCCESS && (first == 0 || first < n); first += limit)
    rc = MPI_Reduce(at(send, first * ext), rank == root ? at(recv, first * ext) : recv,
                    piece(n, first, limit), t, op, root, comm);
  return rc;
}

int lc_mpi_bcast(void *buf, int64_t n, MPI_Datatype t, int root, MPI_Comm comm) {
  MPI_Aint ext;
  int rc = check_count(n, 1, t, &ext);
  int64_t limit = lc_mpi_chunk();
  for (int64_t first = 0; rc == MPI_SUCCESS && (first == 0 || first < n); first += limit)
    rc = MPI_Bcast(at(buf, first * ext), piece(n, first, limit), t, root, comm);
  return rc;
}

int lc_mpi_send(const void *buf, int64_t n, MPI_Datatype t, int peer, int tag, MPI_Comm comm) {
  MPI_Aint ext;
  int rc = check_count(n, 1, t, &ext);
  int64_t limit = lc_mpi_chunk();
  for (int64_t first = 0; rc == MPI_SUCCESS && (first == 0 || first < n); first += limit)
    rc = MPI_Send(at(buf, first * ext), piece(n, first, limit), t, peer, tag, comm);
  return rc;
}

int lc_mpi_recv(void *buf, int64_t n, MPI_Datatype t, int peer, int tag, MPI_Comm comm) {
  MPI_Aint ext;
  int rc = check_count(n, 1, t, &ext);
  if (rc != MPI_SUCCESS || peer == MPI_PROC_NULL) return rc;   /* nothing comes from nobody */
  int64_t limit = lc_mpi_chunk();
  for (int64_t first = 0; first == 0 || first < n; first += limit) {
    int want = piece(n, first, limit), got;
    MPI_Status st;
    rc = MPI_Recv(at(buf, first * ext), want, t, peer, tag, comm, &st);
    if (rc == MPI_SUCCESS) rc = MPI_Get_count(&st, t, &got);
    if (rc != MPI_SUCCESS) return rc;
    /* the rest comes from the sender of the first piece, on its tag: the
    ** pieces of another message must not be mixed in */
    peer = st.MPI_SOURCE;
    tag = st.MPI_TAG;
    if (got != want && first + want < n) return MPI_ERR_COUNT;
  }
  return MPI_SUCCESS;
}

/* ---- allgather: each rank's piece placed by a strided datatype ----------- */

/* One piece of count elements of every rank's n, placed n elements apart:
** count elements of t, then the next rank's. No op ever sees it. */
static int rank_stride_type(int count, MPI_Datatype t, int64_t n, MPI_Aint ext,
                            MPI_Datatype *out) {
  MPI_Datatype run;
  int rc = MPI_Type_contiguous(count, t, &run);
  if (rc != MPI_SUCCESS) return rc;
  rc = MPI_Type_create_resized(run, 0, (MPI_Aint)n * ext, out);
  MPI_Type_free(&run);
  if (rc != MPI_SUCCESS) return rc;
  rc = MPI_Type_commit(out);
  if (rc != MPI_SUCCESS) MPI_Type_free(out);
  return rc;
}

/* What allgather and reduce_scatter_block start with: the ranks, the
** elements per rank of one call, and t's extent; n checked. */
static int block_start(MPI_Comm comm, int64_t n, MPI_Datatype t, int *size, int64_t *limit,
                       MPI_Aint *ext) {
  int rc = block_limit(comm, size, limit);
  if (rc == MPI_SUCCESS) rc = check_count(n, *size, t, ext);
  return rc;
}

int lc_mpi_allgather(const void *send, int64_t n, void *recv, MPI_Datatype t, MPI_Comm comm) {
  int size;
  int64_t limit;
  MPI_Aint ext;
  int rc = block_start(comm, n, t, &size, &limit, &ext);
  if (rc != MPI_SUCCESS) return rc;
  if (n <= limit) return MPI_Allgather(send, (int)n, t, recv, (int)n, t, comm);
  /* in place, MPI takes this rank's piece from where the type puts it */
  for (int64_t first = 0; rc == MPI_SUCCESS && first < n; first += limit) {
    int count = piece(n, first, limit);
    MPI_Datatype placed;
    rc = rank_stride_type(count, t, n, ext, &placed);
    if (rc != MPI_SUCCESS) break;
    rc = MPI_Allgather(at(send, first * ext), count, t, at(recv, first * ext), 1, placed, comm);
    MPI_Type_free(&placed);
  }
  return rc;
}

/* ---- reduce_scatter_block: pieces staged side by side -------------------- */

int lc_mpi_reduce_scatter_block(const void *send, void *recv, int64_t n, MPI_Datatype t,
                                MPI_Op op, MPI_Comm comm) {
  int size;
  int64_t limit;
  MPI_Aint ext;
  int rc = block_start(comm, n, t, &size, &limit, &ext);
  if (rc != MPI_SUCCESS) return rc;
  if (n <= limit) return MPI_Reduce_scatter_block(send, recv, (int)n, t, op, comm);
  /* the op must see t itself, so each call's input is made contiguous:
  ** piece j of every rank's block, one after the other */
  if (ext > 0 && limit > STAGE_BYTES / size / ext) limit = STAGE_BYTES / size / ext;
  if (limit < 1) limit = 1;
  char *stage = malloc((size_t)(size * limit * ext) + 1);   /* + 1: never malloc(0) */
  /* every rank learns whether all have theirs: one without would leave
  ** the others waiting in the first call */
  int have = stage != NULL, all_have = 0;
  rc = MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_LAND, comm);
  if (rc == MPI_SUCCESS && !all_have) rc = MPI_ERR_NO_MEM;
  /* In place, the input is recv's; piece j's result lands on rank 0's
  ** block at j, which is staged by then and not read again. */
  const char *in = send == MPI_IN_PLACE ? recv : send;
  for (int64_t first = 0; rc == MPI_SUCCESS && first < n; first += limit) {
    int count = piece(n, first, limit);
    for (int r = 0; r < size; r++)
      memcpy(stage + (ptrdiff_t)r * count * ext, in + ((int64_t)r * n + first) * ext,
             (size_t)(count * ext));
    rc = MPI_Reduce_scatter_block(stage, at(recv, first * ext), count, t, op, comm);
  }
  free(stage);
  return rc;
}
