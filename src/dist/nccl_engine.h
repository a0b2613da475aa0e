/*
** nccl_engine: luacuda.dist's NCCL engine, for device and managed arrays on the
** CUDA backend. libnccl.so.2 ($LUACUDA_LIBNCCL when set; 0 turns NCCL off)
** and the driver luacuda loaded are opened with dlopen, so the module
** builds and runs without them; where the toolkit has no nccl.h the engine
** is left out of the build (LUACUDA_NCCL undefined) and never chosen.
** route.c keeps the MPI side (the headers every rank agrees on, the unique
** id's broadcast); these functions only call NCCL and the driver.
*/
#ifndef LUACUDA_DIST_NCCL_H
#define LUACUDA_DIST_NCCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LC_NCCL_ID_BYTES 128   /* NCCL_UNIQUE_ID_BYTES */

typedef struct lc_nccl lc_nccl;   /* a communicator and its device */

/* The collectives and their reduction ops, as dist.h numbers them. */
typedef enum { LC_NCCL_ALLREDUCE, LC_NCCL_BROADCAST, LC_NCCL_REDUCE, LC_NCCL_ALLGATHER,
               LC_NCCL_REDUCE_SCATTER, LC_NCCL_SEND, LC_NCCL_RECV } lc_nccl_kind;
typedef enum { LC_NCCL_SUM, LC_NCCL_PROD, LC_NCCL_MIN, LC_NCCL_MAX } lc_nccl_op;

typedef struct lc_nccl_call {
  lc_nccl_kind kind;
  const void *send;
  void *recv;
  int64_t count;        /* elements (allgather: each rank's; reduce_scatter: the output's) */
  const char *dtype;    /* luacuda's name: "float32", ... ("record": itemsize bytes each) */
  int64_t itemsize;
  lc_nccl_op op;
  int root;             /* or peer; 0-based */
} lc_nccl_call;

/* Whether NCCL is loaded (once per process) and the driver found; why not
** in why. */
bool lc_nccl_load(char *why, size_t len);

/* Whether a call of kind on arrays of dtype can go through NCCL: its
** reductions take neither 16-bit integers nor records. */
bool lc_nccl_takes(lc_nccl_kind kind, const char *dtype);

/* ncclGetUniqueId into id (LC_NCCL_ID_BYTES); false and a message. */
bool lc_nccl_unique_id(void *id, char *err, size_t len);

/* The rank's communicator on device (0-based ordinal), with its primary
** context current; NULL and a message. */
lc_nccl *lc_nccl_init(int nranks, const void *id, int rank, int device, char *err, size_t len);

/* ncclCommDestroy (after the communicator's queued work), or
** ncclCommAbort where the communicator has an asynchronous error or was
** aborted */
void lc_nccl_free(lc_nccl *n);

/* ncclCommAbort: the communicator's uncompleted operations are abandoned
** (for a rank whose peers did not all queue the same call: they would
** never complete, or pair with the next), and every later queue or wait
** fails with "NCCL's communicator was aborted after <why>" (why: "a
** failure on rank 2", say). */
void lc_nccl_abort(lc_nccl *n, const char *why);

/* Queue call on stream (a CUstream; NULL: the legacy stream); false and
** a message naming the NCCL call. */
bool lc_nccl_queue(lc_nccl *n, const lc_nccl_call *call, void *stream, char *err, size_t len);

/* Wait for stream's work, polling it and NCCL's asynchronous error; false
** and a message. A communicator with an asynchronous error is aborted
** (lc_nccl_abort). */
bool lc_nccl_wait(lc_nccl *n, void *stream, char *err, size_t len);

#endif
