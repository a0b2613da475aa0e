/*
** bigcount: the MPI calls luacuda.dist makes, with 64-bit element counts.
** MPI 3.1 counts are int; each function here splits its count into as
** many MPI calls as it takes, none with a count over lc_mpi_chunk(), and
** otherwise means what the MPI function of the same name means (buffers,
** MPI_IN_PLACE, roots, ops, the error code returned).
**
** t is a predefined datatype (records go as MPI_BYTE, n counting bytes);
** elements are addressed by t's extent. Reductions always run on t itself,
** never on a datatype derived from it, so user ops made with MPI_Op_create
** keep working. A count of 0 makes one MPI call with count 0, as the plain
** call would; a negative count returns MPI_ERR_COUNT without any call.
** Every rank must pass the same n (send and recv: the same n at both ends).
** Plain C over MPI: no Lua, nothing of luacuda's.
*/
#ifndef LUACUDA_DIST_BIGCOUNT_H
#define LUACUDA_DIST_BIGCOUNT_H

#include <stdint.h>

#include <mpi.h>

/* The most elements one MPI call carries: INT_MAX, or LUACUDA_DIST_CHUNK
** when that is an integer from 1 to INT_MAX (anything else is ignored).
** Read once per process. */
int64_t lc_mpi_chunk(void);

int lc_mpi_allreduce(const void *send, void *recv, int64_t n, MPI_Datatype t, MPI_Op op,
                     MPI_Comm comm);

/* recv matters on the root only; send may be MPI_IN_PLACE there */
int lc_mpi_reduce(const void *send, void *recv, int64_t n, MPI_Datatype t, MPI_Op op, int root,
                  MPI_Comm comm);

int lc_mpi_bcast(void *buf, int64_t n, MPI_Datatype t, int root, MPI_Comm comm);

/* allgather and reduce_scatter_block keep size * count, the whole buffer
** of one call, within the chunk: implementations count it in an int. */

/* n: each rank's count; recv holds size * n elements, rank r's at r * n.
** send may be MPI_IN_PLACE (each rank's piece already in recv). */
int lc_mpi_allgather(const void *send, int64_t n, void *recv, MPI_Datatype t, MPI_Comm comm);

/* n: each rank's block; send holds size * n elements (MPI_IN_PLACE: recv
** does), block r reduced by op lands in rank r's recv (MPI's ranks, from 0). A call with n over the
** chunk stages each rank's share of a piece in a temporary buffer (at
** most 128 MiB), after a small MPI_Allreduce by which every rank learns
** whether all have theirs: MPI_ERR_NO_MEM on every rank when one has not. */
int lc_mpi_reduce_scatter_block(const void *send, void *recv, int64_t n, MPI_Datatype t,
                                MPI_Op op, MPI_Comm comm);

/* The receiver's n must be the sender's. recv from MPI_ANY_SOURCE or with
** MPI_ANY_TAG takes the rest of the message from the sender and tag of its
** first piece. A piece shorter than the chunk before the last one (a
** message shorter than n) returns MPI_ERR_COUNT instead of waiting for
** pieces that never come; a longer message gives MPI's MPI_ERR_TRUNCATE
** (and leaves its later pieces unreceived). */
int lc_mpi_send(const void *buf, int64_t n, MPI_Datatype t, int peer, int tag, MPI_Comm comm);
int lc_mpi_recv(void *buf, int64_t n, MPI_Datatype t, int peer, int tag, MPI_Comm comm);

#endif
