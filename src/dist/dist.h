/*
** dist.h: what the files of luacuda.dist's MPI engine (luacuda/dist_mpi.so)
** share. The module's overview, and the protocol of a call, are in
** dist.c's head. The files, one concern each:
**   dist.c         the module: luaopen, init, errors
**   process.c      the process's MPI: MPI_Init once, MPI_Abort or
**                  MPI_Finalize at exit, what MPI provides
**   dtypes.c       luacuda's dtypes and ops as MPI's and NCCL's, the
**                  half-precision user ops
**   comm.c         the communicator userdata
**   header.c       the header every rank agrees on, and the verdicts of
**                  the steps after it (agree.c carries them)
**   args.c         the arguments of a call, read into its header
**   jobs.c         the MPI calls, made at the call or queued on a stream
**   route.c        which engine a call takes, and the NCCL side of it
**                  (nccl_engine.c makes the NCCL calls)
**   collectives.c  the methods: barrier, split, the collectives (one table
**                  for their shared preamble), send and recv
** Everything here is hidden in the module (-fvisibility=hidden).
*/
#ifndef LUACUDA_DIST_DIST_H
#define LUACUDA_DIST_DIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "lauxlib.h"
#include "lua.h"
#include "luacuda.h"
#include "abi.h"          /* kernels/: LC_MAXDIM */
#include "dtype.h"        /* base/: lc_dtypes, linked in (the Makefile's DIST_BASE) */
#include "agree.h"
#include "nccl_engine.h"

#define COMM_MT "luacuda.dist.comm"
#define MSGLEN 256
#define VERDICTLEN (MSGLEN + 64)   /* recv's verdict: a message and its rank */

/* ---- errors (dist.c) ----------------------------------------------------- */

/* Raise "luacuda.dist.<fname>: <cause>", without a position: dist.lua's
** wrappers add the script's. */
int dist_raise(lua_State *L, const char *fname, const char *fmt, ...);
/* An MPI call that did not return MPI_SUCCESS (our communicators return
** errors instead of aborting), raised. */
void dist_check_mpi(lua_State *L, int rc, const char *fname, const char *call);

/* ---- dtypes and ops (dtypes.c) ------------------------------------------- */

/* A dtype's code in the header: base's (lc_typecode, LC_RECORD for a
** record), from its name in luacuda_arrayinfo; -1 for none. And back. */
int dist_dtype_code(const char *name);
const char *dist_dtype_name(int code);
/* The MPI datatype that moves one element (records: itemsize bytes each,
** counted as bytes). */
MPI_Datatype dist_mpi_type(int code);

enum { OP_NONE, OP_SUM_, OP_PROD_, OP_MIN_, OP_MAX_ };
extern const char *const dist_op_names[];   /* by op, NULL-terminated */
/* The user ops of the half types, made once per process, under
** process.c's lock (MPI_Op_create needs MPI initialised); false when
** MPI_Op_create fails. */
bool dist_make_half_ops(void);
/* The MPI op of (op, dtype code), and NCCL's of op. */
MPI_Op dist_mpi_op(int op, int code);
lc_nccl_op dist_nccl_op(int op);

/* ---- the process (process.c) --------------------------------------------- */

/* MPI initialised (by us or by the host program) and the half ops made;
** a message in err otherwise. */
bool dist_ensure_mpi(char *err, size_t len);
int dist_thread_level(void);      /* what MPI provides */
bool dist_cuda_aware(void);       /* whether MPI takes device memory */
bool dist_finalised(void);
/* A disagreement the job cannot survive: the message printed, the job
** aborted. */
void dist_abort_job(const char *fname, const char *msg);

/* ---- communicators (comm.c) ---------------------------------------------- */

typedef struct dcomm {
  MPI_Comm comm;         /* the data's; MPI_COMM_NULL once freed */
  MPI_Comm ctl;          /* the steps after the agreement, used by the script's thread only */
  int64_t id;            /* on the control channel (agree.h), agreed when made */
  int rank, size;        /* 0-based rank */
  int local_rank, local_size;
  bool nccl_on;          /* every rank has the CUDA backend and NCCL: comm.engine "nccl" */
  bool cuda_aware;       /* MPI takes device memory (comm.cuda_aware) */
  lc_nccl *nccl;         /* NCCL's communicator, made at the first call that goes there */
  int nccl_device;       /* its device, 0-based */
  int world[];           /* world[r]: rank r's in MPI_COMM_WORLD */
} dcomm;

/* The communicator at idx, open; raised otherwise. */
dcomm *dist_check_comm(lua_State *L, int idx, const char *fname);
/* Push a communicator that owns comm; every rank of comm calls it. */
dcomm *dist_push_comm(lua_State *L, MPI_Comm comm, const char *fname);
/* The control channel's view of c */
lc_group dist_group(const dcomm *c);
/* its metamethods */
int dist_comm_gc(lua_State *L);
int dist_comm_index(lua_State *L);
int dist_comm_tostring(lua_State *L);

/* ---- the header every rank agrees on (header.c) -------------------------- */

/* F_ENGINE: 1 where the call goes through NCCL (device or managed arrays
** on an NCCL communicator), 0 through MPI; F_CHUNK: the most elements of
** one MPI call (bigcount.h: LUACUDA_DIST_CHUNK), for the calls that move
** arrays; F_SHAPE: a hash of the shape (args.c), which is only ever
** compared, and keeps the header small */
enum { F_KIND, F_OP, F_ROOT, F_DTYPE, F_ITEMSIZE, F_COUNT, F_ENGINE, F_CHUNK, F_SHAPE, NFIELDS };
_Static_assert(NFIELDS <= LC_AGREE_FIELDS, "the header's fields fit agree.h's");
_Static_assert(MSGLEN == LC_AGREE_MSGLEN, "a header's error is agree.h's");
enum { K_BARRIER, K_SPLIT, K_ALLREDUCE, K_BROADCAST, K_REDUCE, K_ALLGATHER, K_REDUCE_SCATTER,
       K_SEND, K_RECV, K_ENGINE, K_QUEUE };
extern const char *const dist_kind_names[];   /* by kind, NULL-terminated */

/* f: the fields above; err: this rank's own argument error, "" if none */
typedef lc_header header;

void dist_header_init(header *h, int kind);
/* the first error found into h's (later ones are dropped) */
void dist_header_error(header *h, const char *fmt, ...);
/* A collective's agreement: raised on every rank alike where a rank found
** an error or the ranks disagree; false when they agree on all but the
** engine (the call is made again, staged for MPI, by dist.lua). */
bool dist_agree(lua_State *L, dcomm *c, header *h, const char *fname);
/* A step after the agreement among ranks known to be in the same call:
** -1 and the same message on every rank where one found an error or they
** disagree; 0 when they agree. */
int dist_step_exchange(lua_State *L, dcomm *c, header *h, const char *fname, char *msg,
                       size_t len);
/* How queueing (or waiting) went on every rank (send and recv: on both):
** a rank's failure into msg on all of them (else ""). */
void dist_verdict(lua_State *L, dcomm *c, const char *err, bool pair, int peer, bool sending,
                  const char *fname, char *msg, size_t len);

/* the verdict when one side's array is device memory for NCCL and the
** other's host memory: both call again, staged for MPI (dist.lua) */
#define RESTAGE "\x01restage"
/* What is wrong between a send's header (sh, of rank sr) and its recv's
** (rh, of rank rr), the same message on both ranks: "" when nothing;
** RESTAGE when only the engine differs. */
void dist_pair_disagreement(const header *sh, const header *rh, int sr, int rr, char *msg,
                            size_t len);

/* ---- arguments (args.c) -------------------------------------------------- */

/* The options of a call: stream= (a luacuda Stream) */
typedef struct dopts {
  bool has_stream;
  void *stream;           /* its handle (luacuda_tostream) */
} dopts;

typedef struct arr {
  luacuda_arrayinfo info;
  void *data;
  int code;
  const char *what;       /* its name in messages: "x", "out" */
} arr;

/* The option table at idx (nil, or a table of the keys in known, which
** ends with "stream") into *o; what is wrong into h's error. */
void dist_read_options(lua_State *L, int idx, const char *const *known, header *h, dopts *o);
/* The array argument at idx into *a, its facts into the header (when
** describe); what is wrong with it into h's error. */
bool dist_read_array(lua_State *L, int idx, const char *what, header *h, arr *a, bool describe,
                     bool writes, const dopts *o);
/* The op argument at idx (default "sum"), into the header. */
int dist_read_op(lua_State *L, int idx, header *h, const arr *x);
/* A root or peer: a rank 1..size, 0-based in *out. */
bool dist_read_rank(lua_State *L, int idx, dcomm *c, const char *what, header *h, int *out);
/* Same dtype as x (and record size), for an output. */
void dist_same_dtype(header *h, const arr *x, const arr *out, const char *what);
bool dist_overlap(const arr *a, const arr *b);
/* the output of allgather and reduce_scatter: `big` has size times the
** elements of `small` */
void dist_check_blocks(header *h, dcomm *c, const arr *big, const arr *small,
                       const char *bigname, const char *smallname);
/* MPI's count for n elements of a (records move as bytes) */
int64_t dist_mpi_count(const arr *a, int64_t n);

/* ---- MPI calls, made at the call or queued on a stream (jobs.c) ---------- */

/* send and recv: their headers on the control channel (agree.h), then the
** data (TAG_DATA), and on a stream how queueing went on both (TAG_QUEUED,
** on ctl) */
enum { TAG_DATA = 7303, TAG_QUEUED };

/* A collective's MPI call, or a send's or a recv's: what it needs to run
** later, on another thread. */
typedef enum { J_ALLREDUCE, J_BCAST, J_REDUCE, J_ALLGATHER, J_REDUCE_SCATTER, J_SEND,
               J_RECV } jkind;

typedef struct mpi_job {
  jkind kind;
  MPI_Comm comm;
  const void *send;       /* MPI_IN_PLACE: in place, in recv */
  void *recv;
  /* MPI's count (records move as bytes): allgather's is each rank's,
  ** reduce_scatter's each rank's block */
  int64_t n;
  MPI_Datatype type;
  MPI_Op op;
  int root;               /* or the peer; 0-based */
  int rank;               /* this rank, 0-based, for a queued call's message */
  const char *fname;
} mpi_job;

/* The arrays a call uses (their stack indices), and which it writes */
typedef struct uses {
  int n;
  int idx[2];
  bool writes[2];
} uses;

/* Wait for the MPI calls queued on streams (a call made now comes after
** them). */
void dist_jobs_wait(void);
/* j made now, after the MPI calls queued on streams; or, with o's stream,
** queued there, the arrays u marked as used by it. */
void dist_run_mpi(lua_State *L, dcomm *c, const mpi_job *j, const dopts *o, const uses *u);
/* Before queuing on o's stream: the arrays' memory kept for it; false and
** a message. After queuing: host access waits for the queued work. */
bool dist_use_arrays(lua_State *L, const dopts *o, const uses *u, char *err, size_t len);
void dist_queued_arrays(lua_State *L, const dopts *o, const uses *u);

/* ---- engines (route.c) --------------------------------------------------- */

/* Which engine runs a call on the n arrays as, into the header: true for
** NCCL. */
bool dist_route(lua_State *L, dcomm *c, header *h, lc_nccl_kind kind, const arr *const *as,
                int n, const dopts *o);
/* Whether this rank can take NCCL (dist_push_comm asks every rank). */
bool dist_nccl_possible(lua_State *L);
/* The call queued on NCCL (on o's stream, or on luacuda's and waited for);
** a rank's failure raised on every rank. */
void dist_run_nccl(lua_State *L, dcomm *c, const lc_nccl_call *call, const dopts *o,
                   const uses *u, const char *fname);

/* ---- the methods (collectives.c) ----------------------------------------- */

extern const luaL_Reg dist_comm_methods[];

#endif
