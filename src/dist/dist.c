/*
** dist: luacuda.dist's MPI engine, the C module luacuda/dist_mpi.so.
** Built with mpicc only where MPI is (the Makefile's DIST_LIB), and linked
** with core.so, whose public C API (src/luacuda.h) is its one way into
** arrays: core.so itself never needs MPI. lua/luacuda/dist.lua wraps the
** methods here: it hands them C-contiguous, host-accessible arrays (a
** strided view or a device array goes through a contiguous host copy).
**
** Every call starts with the agreement of its ranks on a header (which
** function, op, root, dtype, shape, the chunk of bigcount.c, and whether
** this rank found an error in its own arguments), over the process's
** control channel (agree.c, whose head says how): a rank's bad argument,
** or ranks that disagree, raise the same error on every rank instead of a
** hang or corrupt data; send and recv exchange their headers likewise.
** Ranks in different calls (another kind, another communicator, another
** peer) raise the same error on both where the two calls have these two
** ranks alone, and abort the job with a message naming both calls
** otherwise; so does a rank in a call with a rank that has ended.
**
** Collectives on a stream (stream=) go to NCCL where the engine is NCCL;
** on MPI they are queued too: the MPI call runs in a host function on the
** stream (luacuda_queuehost), once the stream's work before it is done,
** and the stream's later work waits for it. dist.lua orders the
** collectives queued through MPI one after the other, whatever their
** streams (an event chain), so every rank makes its MPI calls in the
** order of the script's calls; a collective without a stream first waits
** for the queued ones. The agreement goes over the control channel, and
** the steps after it among ranks known to be in the same call (how
** queueing went, NCCL's start) over a communicator of each communicator's
** own (ctl); only the script's thread uses either, so a later call is
** agreed while a queued MPI call may be running on another thread:
** MPI_THREAD_MULTIPLE.
**
** A process whose exit status is not 0 (lua5.4 exits with 1 after printing
** an uncaught error) calls MPI_Abort on its way out (an on_exit handler),
** so the whole job stops with that rank's message; a clean exit calls
** MPI_Finalize, where the control channel tells the other ranks that this
** one has ended (agree.h), so that one waiting for it aborts the job.
*/
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>      /* MPIX_Query_cuda_support */
#endif

#include "lauxlib.h"
#include "lua.h"
#include "luacuda.h"
#include "agree.h"
#include "bigcount.h"
#include "nccl_engine.h"

#define COMM_MT "luacuda.dist.comm"
#define MSGLEN 256
#define MAXDIM 32         /* luacuda's LC_MAXDIM (kernels/abi.h) */
#define VERDICTLEN (MSGLEN + 64)   /* recv's verdict: a message and its rank */

/* ---- errors ------------------------------------------------------------ */

/* Raise "luacuda.dist.<fname>: <cause>", without a position: dist.lua's
** wrappers add the script's. */
static int dist_raise(lua_State *L, const char *fname, const char *fmt, ...) {
  char cause[MSGLEN * 2];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cause, sizeof cause, fmt, ap);
  va_end(ap);
  lua_pushfstring(L, "luacuda.dist.%s: %s", fname, cause);
  return lua_error(L);
}

/* An MPI call that did not return MPI_SUCCESS (our communicators return
** errors instead of aborting). */
static void check_mpi(lua_State *L, int rc, const char *fname, const char *call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "error %d", rc);
  dist_raise(L, fname, "MPI call %s failed: %s", call, text);
}

/* ---- dtypes -------------------------------------------------------------- */

/* luacuda's dtypes, in a fixed order (their codes in the header). */
enum { T_BOOL, T_INT8, T_INT16, T_INT32, T_INT64, T_UINT8, T_UINT16, T_UINT32, T_UINT64,
       T_FLOAT16, T_BFLOAT16, T_FLOAT32, T_FLOAT64, T_RECORD, T_COUNT };
static const char *const dtype_names[T_COUNT] = {
  "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
  "float16", "bfloat16", "float32", "float64", "record"};

static int dtype_code(const char *name) {
  for (int i = 0; i < T_COUNT; i++)
    if (strcmp(name, dtype_names[i]) == 0) return i;
  return -1;
}

/* The MPI datatype that moves one element (records: itemsize bytes each,
** counted as bytes). */
static MPI_Datatype mpi_type(int code) {
  switch (code) {
  case T_BOOL: return MPI_C_BOOL;
  case T_INT8: return MPI_INT8_T;
  case T_INT16: return MPI_INT16_T;
  case T_INT32: return MPI_INT32_T;
  case T_INT64: return MPI_INT64_T;
  case T_UINT8: return MPI_UINT8_T;
  case T_UINT16: case T_FLOAT16: case T_BFLOAT16: return MPI_UINT16_T;
  case T_UINT32: return MPI_UINT32_T;
  case T_UINT64: return MPI_UINT64_T;
  case T_FLOAT32: return MPI_FLOAT;
  case T_FLOAT64: return MPI_DOUBLE;
  default: return MPI_BYTE;
  }
}

/* ---- half-precision reductions: user-defined MPI ops ------------------- */

static float float16_load(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {                        /* zero or subnormal: mant * 2^-24 */
    float f = ldexpf((float)mant, -24);
    return sign ? -f : f;
  }
  uint32_t bits = exp == 31 ? sign | 0x7f800000u | (mant << 13)
                            : sign | ((exp + 112u) << 23) | (mant << 13);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static uint16_t float16_store(float f) {   /* rounded to nearest even */
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return sign | 0x7e00u;          /* NaN */
  if (ax >= 0x477ff000u) return sign | 0x7c00u;         /* 65520 and up: inf */
  if (ax < 0x38800000u) {                               /* under 2^-14: subnormal */
    float a;
    memcpy(&a, &ax, sizeof a);
    return sign | (uint16_t)lrintf(a * 16777216.0f);    /* exact scaling; 1024 is 2^-14 */
  }
  uint32_t r = ax + 0xfffu + ((ax >> 13) & 1u) - (112u << 23);
  return sign | (uint16_t)(r >> 13);
}

static float bfloat16_load(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static uint16_t bfloat16_store(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);   /* quiet NaN */
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* min and max as NumPy's minimum and maximum: a NaN wins */
#define OP_SUM(a, b) ((a) + (b))
#define OP_PROD(a, b) ((a) * (b))
#define OP_MIN(a, b) (isnan(a) || (a) < (b) ? (a) : (b))
#define OP_MAX(a, b) (isnan(a) || (a) > (b) ? (a) : (b))
#define HALF_OP(name, type, OP)                                                       \
  static void name(void *in, void *inout, int *len, MPI_Datatype *dt) {             \
    (void)dt;                                                                       \
    const uint16_t *a = in;                                                         \
    uint16_t *b = inout;                                                            \
    for (int i = 0; i < *len; i++) {                                                \
      float x = type##_load(a[i]), y = type##_load(b[i]);                           \
      b[i] = type##_store(OP(x, y));                                                \
    }                                                                               \
  }
HALF_OP(f16_sum, float16, OP_SUM)
HALF_OP(f16_prod, float16, OP_PROD)
HALF_OP(f16_min, float16, OP_MIN)
HALF_OP(f16_max, float16, OP_MAX)
HALF_OP(bf16_sum, bfloat16, OP_SUM)
HALF_OP(bf16_prod, bfloat16, OP_PROD)
HALF_OP(bf16_min, bfloat16, OP_MIN)
HALF_OP(bf16_max, bfloat16, OP_MAX)

/* ---- ops --------------------------------------------------------------- */

enum { OP_NONE, OP_SUM_, OP_PROD_, OP_MIN_, OP_MAX_ };
static const char *const op_names[] = {"none", "sum", "prod", "min", "max", NULL};

/* The user ops of the half types, made once per process (MPI_Op_create
** needs MPI initialised; they live until MPI_Finalize). */
static MPI_Op half_ops[2][4];

/* The MPI op of (op, dtype): booleans reduce as NumPy's add and multiply
** do (or, and). */
static MPI_Op mpi_op(int op, int code) {
  if (code == T_FLOAT16 || code == T_BFLOAT16) return half_ops[code == T_BFLOAT16][op - 1];
  if (code == T_BOOL) return op == OP_SUM_ || op == OP_MAX_ ? MPI_LOR : MPI_LAND;
  switch (op) {
  case OP_SUM_: return MPI_SUM;
  case OP_PROD_: return MPI_PROD;
  case OP_MIN_: return MPI_MIN;
  default: return MPI_MAX;
  }
}

/* ---- the process: MPI_Init once, MPI_Abort or MPI_Finalize at exit ------ */

static pthread_mutex_t mpi_lock = PTHREAD_MUTEX_INITIALIZER;
static bool ops_made;          /* under mpi_lock */
static int thread_level;       /* under mpi_lock: what MPI provides */
static bool we_initialised;    /* under mpi_lock: MPI_Init was ours */

/* on_exit gets the exit status: an uncaught error (lua5.4 exits 1 after
** printing it) aborts the job, so the other ranks do not wait forever in
** a collective; MPI_Finalize would wait for them. Only where we started
** MPI: a host program that did finalises it itself. */
static void at_exit(int status, void *arg) {
  (void)arg;
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (status != 0 && size > 1) {   /* alone, there is nobody to stop */
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, status);
  }
  MPI_Finalize();
}

/* MPI initialised (by us or by the host program) and the half ops made;
** a message in err otherwise. */
static bool ensure_mpi(char *err, size_t len) {
  bool ok = true;
  pthread_mutex_lock(&mpi_lock);
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (fin) {
    snprintf(err, len, "MPI was finalised already");
    ok = false;
  } else if (!init) {
    int provided;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
      snprintf(err, len, "MPI_Init_thread failed");
      ok = false;
    } else {
      we_initialised = true;
      if (on_exit(at_exit, NULL) != 0) {
        snprintf(err, len, "on_exit failed: cannot finalise MPI at exit");
        ok = false;
      }
    }
  }
  if (ok) MPI_Query_thread(&thread_level);
  if (ok && !ops_made) {
    MPI_User_function *fns[2][4] = {{f16_sum, f16_prod, f16_min, f16_max},
                                    {bf16_sum, bf16_prod, bf16_min, bf16_max}};
    for (int t = 0; t < 2 && ok; t++)
      for (int o = 0; o < 4 && ok; o++)
        if (MPI_Op_create(fns[t][o], 1, &half_ops[t][o]) != MPI_SUCCESS) {
          snprintf(err, len, "MPI_Op_create failed");
          ok = false;
        }
    ops_made = ok;
  }
  pthread_mutex_unlock(&mpi_lock);
  return ok;
}

static int mpi_thread_level(void) {
  pthread_mutex_lock(&mpi_lock);
  int level = thread_level;
  pthread_mutex_unlock(&mpi_lock);
  return level;
}

/* Does MPI take device memory? LUACUDA_MPI_CUDA=1 or 0 says so (for an
** MPI that cannot be asked); else Open MPI's answer (its CUDA extension),
** MPICH's (MPIX_GPU_query_support), or no. */
static bool mpi_cuda_aware(void) {
  const char *e = getenv("LUACUDA_MPI_CUDA");
  if (e && *e) return strcmp(e, "0") != 0;
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  return MPIX_Query_cuda_support() == 1;
#elif defined(MPIX_GPU_SUPPORT_CUDA)
  int yes = 0;
  return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &yes) == MPI_SUCCESS && yes;
#else
  return false;
#endif
}

static bool mpi_finalised(void) {
  int fin = 0;
  MPI_Finalized(&fin);
  return fin != 0;
}

/* ---- MPI calls, made at the call or queued on a stream ----------------- */

/* send and recv: their headers on the control channel (agree.h), then the
** data (TAG_DATA), and on a stream how queueing went on both (TAG_QUEUED,
** on ctl) */
enum { TAG_DATA = 7303, TAG_QUEUED };

/* A collective's MPI call, or a send's or a recv's: what it needs to run
** later, on another thread. */
typedef enum { J_ALLREDUCE, J_BCAST, J_REDUCE, J_ALLGATHER, J_REDUCE_SCATTER, J_SEND,
               J_RECV } jkind;
static const char *const job_calls[] = {"MPI_Allreduce", "MPI_Bcast", "MPI_Reduce",
                                        "MPI_Allgather", "MPI_Reduce_scatter_block", "MPI_Send",
                                        "MPI_Recv"};

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

static void jobs_wait(void) {
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

/* ---- communicators ----------------------------------------------------- */

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

static dcomm *check_comm(lua_State *L, int idx, const char *fname) {
  dcomm *c = luaL_testudata(L, idx, COMM_MT);
  if (c == NULL)
    dist_raise(L, fname, "expected a communicator (call it as comm:%s(...)), got %s", fname,
               luaL_typename(L, idx));
  if (c->comm == MPI_COMM_NULL) dist_raise(L, fname, "the communicator was freed");
  return c;
}

static bool nccl_possible(lua_State *L);
static int backend_device(lua_State *L);

/* The current device, 0-based; -1 where luacuda cannot say, and why into
** err (when not NULL) */
static int current_device(lua_State *L, char *err, size_t len) {
  lua_pushcfunction(L, backend_device);
  if (lua_pcall(L, 0, 2, 0) != LUA_OK) {
    if (err) snprintf(err, len, "%s", lua_tostring(L, -1));
    lua_pop(L, 1);
    return -1;
  }
  int d = (int)lua_tointeger(L, -1) - 1;
  lua_pop(L, 2);
  return d;
}
static void start_nccl(lua_State *L, dcomm *c, const char *fname);
static void drop_nccl(dcomm *c, const char *why);

/* Push a communicator that owns comm (freed by its finalizer): our own
** copy, whose errors are returned, not fatal. Every rank of comm calls it:
** they agree on its id on the control channel and on the engine. */
static dcomm *push_comm(lua_State *L, MPI_Comm comm, const char *fname) {
  int size = 0, rc = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(comm, &size);
  if (rc != MPI_SUCCESS) {
    MPI_Comm_free(&comm);
    check_mpi(L, rc, fname, "MPI_Comm_size");
  }
  dcomm *c = lua_newuserdatauv(L, sizeof *c + (size_t)size * sizeof c->world[0], 0);
  c->comm = c->ctl = MPI_COMM_NULL;
  c->nccl = NULL;
  c->nccl_on = false;
  c->nccl_device = -1;
  c->size = size;
  c->cuda_aware = mpi_cuda_aware();
  luaL_setmetatable(L, COMM_MT);
  c->comm = comm;
  check_mpi(L, MPI_Comm_dup(comm, &c->ctl), fname, "MPI_Comm_dup");
  MPI_Comm_set_errhandler(c->ctl, MPI_ERRORS_RETURN);
  check_mpi(L, MPI_Comm_rank(comm, &c->rank), fname, "MPI_Comm_rank");
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  check_mpi(L, MPI_Allgather(&world_rank, 1, MPI_INT, c->world, 1, MPI_INT, c->ctl), fname,
            "MPI_Allgather");
  MPI_Comm node;
  check_mpi(L, MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node),
            fname, "MPI_Comm_split_type");
  MPI_Comm_rank(node, &c->local_rank);
  MPI_Comm_size(node, &c->local_size);
  MPI_Comm_free(&node);
  /* the greatest next id of the ranks, and whether every rank has NCCL */
  int64_t v[2] = {lc_agree_next_id(), -(int64_t)nccl_possible(L)};
  check_mpi(L, MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT64_T, MPI_MAX, c->ctl), fname,
            "MPI_Allreduce");
  c->id = v[0];
  lc_agree_used_id(c->id);
  c->nccl_on = v[1] < 0;
  return c;
}

/* The control channel's view of c */
static lc_group group_of(const dcomm *c) {
  return (lc_group){c->id, c->size, c->rank, c->world};
}

static int comm_gc(lua_State *L) {
  dcomm *c = luaL_checkudata(L, 1, COMM_MT);
  lc_nccl_free(c->nccl);
  c->nccl = NULL;
  jobs_wait();      /* queued calls may still use c->comm */
  if (c->ctl != MPI_COMM_NULL && !mpi_finalised()) MPI_Comm_free(&c->ctl);
  if (c->comm != MPI_COMM_NULL && !mpi_finalised()) MPI_Comm_free(&c->comm);
  c->comm = c->ctl = MPI_COMM_NULL;
  return 0;
}

/* ---- the header every rank agrees on ------------------------------------ */

/* F_ENGINE: 1 where the call goes through NCCL (device or managed arrays
** on an NCCL communicator), 0 through MPI; F_CHUNK: the most elements of
** one MPI call (bigcount.h: LUACUDA_DIST_CHUNK), for the calls that move
** arrays; F_SHAPE: a hash of the shape (shape_hash), which is only ever
** compared, and keeps the header small */
enum { F_KIND, F_OP, F_ROOT, F_DTYPE, F_ITEMSIZE, F_COUNT, F_ENGINE, F_CHUNK, F_SHAPE, NFIELDS };
_Static_assert(NFIELDS <= LC_AGREE_FIELDS, "the header's fields fit agree.h's");
_Static_assert(MSGLEN == LC_AGREE_MSGLEN, "a header's error is agree.h's");
enum { K_BARRIER, K_SPLIT, K_ALLREDUCE, K_BROADCAST, K_REDUCE, K_ALLGATHER, K_REDUCE_SCATTER,
       K_SEND, K_RECV, K_ENGINE, K_QUEUE };
static const char *const kind_names[] = {"barrier", "split", "allreduce", "broadcast", "reduce",
                                         "allgather", "reduce_scatter", "send", "recv",
                                         "the engine's start", "queueing", NULL};

/* f: the fields above; err: this rank's own argument error, "" if none */
typedef lc_header header;

static void header_init(header *h, int kind) {
  memset(h, 0, sizeof *h);
  h->f[F_KIND] = kind;
}

static void header_error(header *h, const char *fmt, ...) {
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
             kind_names[mn[F_KIND]], kind_names[mx[F_KIND]]);
  else if (mx[F_CHUNK] != mn[F_CHUNK])
    snprintf(msg, len, "ranks cut MPI calls into pieces of different sizes (LUACUDA_DIST_CHUNK: "
             "%lld elements on some, %lld on others)", (long long)mn[F_CHUNK],
             (long long)mx[F_CHUNK]);
  else if (mx[F_OP] != mn[F_OP])
    snprintf(msg, len, "ranks gave different ops (%s on some, %s on others)",
             op_names[mn[F_OP]], op_names[mx[F_OP]]);
  else if (mx[F_ROOT] != mn[F_ROOT])
    snprintf(msg, len, "ranks gave different roots (%lld on some, %lld on others)",
             (long long)mn[F_ROOT], (long long)mx[F_ROOT]);
  else if (mx[F_DTYPE] != mn[F_DTYPE])
    snprintf(msg, len, "ranks gave arrays of different dtypes (%s on some, %s on others)",
             dtype_names[mn[F_DTYPE]], dtype_names[mx[F_DTYPE]]);
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
static int step_exchange(lua_State *L, dcomm *c, header *h, const char *fname, char *msg,
                         size_t len) {
  int64_t v[2 * NFIELDS + 1];
  for (int i = 0; i < NFIELDS; i++) {
    v[i] = h->f[i];
    v[NFIELDS + i] = -h->f[i];
  }
  v[2 * NFIELDS] = h->err[0] ? -(int64_t)c->rank : INT64_MIN;
  check_mpi(L, MPI_Allreduce(MPI_IN_PLACE, v, 2 * NFIELDS + 1, MPI_INT64_T, MPI_MAX, c->ctl),
            fname, "MPI_Allreduce");
  if (v[2 * NFIELDS] != INT64_MIN) {
    int bad = (int)-v[2 * NFIELDS];
    char sent[MSGLEN];
    memcpy(sent, h->err, sizeof sent);
    check_mpi(L, MPI_Bcast(sent, MSGLEN, MPI_CHAR, bad, c->ctl), fname, "MPI_Bcast");
    sent[MSGLEN - 1] = '\0';
    snprintf(msg, len, "on rank %d: %s", bad + 1, sent);
    return -1;
  }
  int64_t mn[NFIELDS];
  for (int i = 0; i < NFIELDS; i++) mn[i] = -v[NFIELDS + i];
  describe_disagreement(v, mn, msg, len);
  return msg[0] ? -1 : 0;
}

/* A disagreement the job cannot survive: the other ranks wait in calls
** they cannot leave. */
static void abort_job(const char *fname, const char *msg) {
  fflush(stdout);
  fprintf(stderr, "luacuda.dist.%s: %s\n", fname, msg);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* A collective's agreement on the control channel (agree.h): a rank's
** error, or ranks that disagree, raised on every rank alike (or the job
** aborted where the ranks are in different calls that cannot all be
** told); false when they agree on all but the engine (some ranks' arrays
** are device memory for NCCL, others' host memory: the call is then made
** again, every rank's arrays staged for MPI, by dist.lua). */
static bool agree(lua_State *L, dcomm *c, header *h, const char *fname) {
  lc_group g = group_of(c);
  lc_call call = {(int)h->f[F_KIND], LC_COLLECTIVE, -1};
  lc_combined all;
  char msg[VERDICTLEN + MSGLEN];
  lc_verdict v = lc_agree_collective(&g, &call, h, &all, msg, sizeof msg);
  if (v == LC_ABORT) abort_job(fname, msg);
  if (v == LC_RAISE) dist_raise(L, fname, "%s", msg);
  if (all.err_rank >= 0) dist_raise(L, fname, "on rank %d: %s", all.err_rank + 1, all.err);
  describe_disagreement(all.mx, all.mn, msg, sizeof msg);
  if (msg[0]) dist_raise(L, fname, "%s", msg);
  return all.mx[F_ENGINE] == all.mn[F_ENGINE];
}

/* ---- arguments --------------------------------------------------------- */

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

static bool c_contiguous(const luacuda_arrayinfo *in) {
  int64_t want = in->itemsize;
  for (int i = in->ndim - 1; i >= 0; i--) {
    if (in->shape[i] == 0) return true;
    if (in->shape[i] != 1 && in->strides[i] != want) return false;
    want *= in->shape[i];
  }
  return true;
}

static int wait_array(lua_State *L) {
  luacuda_waitarray(L, 1, lua_toboolean(L, 2));
  return 0;
}

/* Wait for the work a script queued on streams that writes (or, when
** writing, reads) the array at idx, as a host access from Lua does; its
** error (LUACUDA_STRICT_ASYNC=1) becomes this rank's argument error. */
static bool wait_queued(lua_State *L, int idx, bool writing, header *h) {
  lua_pushcfunction(L, wait_array);
  lua_pushvalue(L, idx);
  lua_pushboolean(L, writing);
  if (lua_pcall(L, 2, 0, 0) == LUA_OK) return true;
  header_error(h, "%s", lua_tostring(L, -1));
  lua_pop(L, 1);
  return false;
}

/* The shape (ndim and extents) as one number for the header: FNV-1a over
** their bytes, whose collisions (2^-64 for two shapes) would only miss the
** report of shapes that differ with the same element count. */
static int64_t shape_hash(const luacuda_arrayinfo *in) {
  uint64_t h = 14695981039346656037u;
  int64_t words[MAXDIM + 1];
  int n = in->ndim < MAXDIM ? in->ndim : MAXDIM;
  words[0] = n;
  for (int i = 0; i < n; i++) words[i + 1] = in->shape[i];
  const unsigned char *b = (const unsigned char *)words;
  for (size_t i = 0; i < (size_t)(n + 1) * sizeof words[0]; i++) h = (h ^ b[i]) * 1099511628211u;
  return (int64_t)(h >> 1);    /* >= 0: the header negates its fields */
}

/* The array argument at idx into *a, its facts into the header (when
** describe); what is wrong with it into h's error. Unless the call goes
** on a stream (o), the work queued on it is waited for: the call reads it
** (and writes it, when writes). */
static bool read_array(lua_State *L, int idx, const char *what, header *h, arr *a, bool describe,
                       bool writes, const dopts *o) {
  memset(a, 0, sizeof *a);
  a->code = -1;
  a->data = luacuda_toarray(L, idx, &a->info);
  if (a->info.dtype == NULL) {      /* left as it was: not an open array */
    header_error(h, "%s must be an open array, got %s", what, luaL_typename(L, idx));
    return false;
  }
  a->code = dtype_code(a->info.dtype);
  a->what = what;
  if (!c_contiguous(&a->info)) {
    header_error(h, "%s is not C-contiguous: call the method on the communicator, which copies it",
                 what);
    return false;
  }
  if (!o->has_stream && !wait_queued(L, idx, writes, h)) return false;
  if (describe) {
    h->f[F_CHUNK] = lc_mpi_chunk();
    h->f[F_DTYPE] = a->code;
    h->f[F_ITEMSIZE] = a->info.itemsize;
    h->f[F_COUNT] = a->info.size;
    h->f[F_SHAPE] = shape_hash(&a->info);
  }
  return true;
}

/* MPI's count for n elements of a (records move as bytes) */
static int64_t mpi_count(const arr *a, int64_t n) {
  return a->code == T_RECORD ? n * a->info.itemsize : n;
}

/* The op argument at idx (default "sum"), into the header. */
static int read_op(lua_State *L, int idx, header *h, const arr *x) {
  int op = OP_SUM_;
  if (!lua_isnoneornil(L, idx)) {
    const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : NULL;
    op = OP_NONE;
    for (int i = OP_SUM_; s && op_names[i]; i++)
      if (strcmp(s, op_names[i]) == 0) op = i;
    if (op == OP_NONE) {
      header_error(h, "op must be \"sum\", \"prod\", \"min\" or \"max\", got %s",
                   s ? s : luaL_typename(L, idx));
      op = OP_SUM_;
    }
  }
  h->f[F_OP] = op;
  if (x->code == T_RECORD)
    header_error(h, "a record array cannot be reduced (%s takes numbers and booleans)",
                 kind_names[h->f[F_KIND]]);
  return op;
}

/* A root or peer: a rank 1..size, 0-based in *out. */
static bool read_rank(lua_State *L, int idx, dcomm *c, const char *what, header *h, int *out) {
  int isnum = 0;
  lua_Integer r = lua_tointegerx(L, idx, &isnum);
  *out = 0;
  if (!isnum) {
    header_error(h, "%s must be a rank (an integer 1 to %d), got %s", what, c->size,
                 luaL_typename(L, idx));
    return false;
  }
  if (r < 1 || r > c->size) {
    header_error(h, "%s %lld is not a rank of this communicator (1 to %d)", what, (long long)r,
                 c->size);
    return false;
  }
  *out = (int)(r - 1);
  return true;
}

/* Same dtype as x (and record size), for an output. */
static void same_dtype(header *h, const arr *x, const arr *out, const char *what) {
  if (x->code != out->code || x->info.itemsize != out->info.itemsize)
    header_error(h, "%s is %s, the input %s (no implicit casting)", what, out->info.dtype,
                 x->info.dtype);
}

static bool overlap(const arr *a, const arr *b) {
  const char *p = a->data, *q = b->data;
  int64_t na = a->info.size * a->info.itemsize, nb = b->info.size * b->info.itemsize;
  return na > 0 && nb > 0 && p < q + nb && q < p + na;
}

/* ---- engines and streams ----------------------------------------------- */

static int to_stream(lua_State *L) {
  lua_pushlightuserdata(L, luacuda_tostream(L, 1));
  return 1;
}

/* The option table at idx (nil, or a table of the keys in known, which
** ends with "stream") into *o; what is wrong into h's error. */
static void read_options(lua_State *L, int idx, const char *const *known, header *h, dopts *o) {
  o->has_stream = false;
  o->stream = NULL;
  if (lua_isnoneornil(L, idx)) return;
  if (!lua_istable(L, idx)) {
    header_error(h, "options must be a table, got %s", luaL_typename(L, idx));
    return;
  }
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    bool ok = false;
    for (int i = 0; known[i] && lua_type(L, -1) == LUA_TSTRING; i++)
      ok = ok || strcmp(lua_tostring(L, -1), known[i]) == 0;
    if (!ok) {
      header_error(h, "unknown option %s (it takes %s)",
                   lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, -1),
                   known[1] ? "out= and stream=" : "stream=");
      lua_pop(L, 1);
      return;
    }
  }
  lua_pushliteral(L, "stream");
  lua_rawget(L, idx);
  if (!lua_isnil(L, -1)) {
    lua_pushcfunction(L, to_stream);
    lua_insert(L, -2);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
      lua_pushliteral(L, "stream");
      lua_rawget(L, idx);
      header_error(h, "stream must be an open luacuda stream, got %s",
                   luaL_testudata(L, -1, "luacuda.stream") ? "a closed one" : luaL_typename(L, -1));
      lua_pop(L, 1);
    } else {
      o->has_stream = true;
      o->stream = lua_touserdata(L, -1);
    }
  }
  lua_pop(L, 1);
}

/* Which engine runs a call on the n arrays as: NCCL where the
** communicator has it and every array is device or managed memory of a
** dtype NCCL takes for kind; else MPI, which takes device arrays only
** where it says it can and the call has no stream (dist.lua stages them
** otherwise), and a stream only with MPI_THREAD_MULTIPLE. Into the
** header, which the ranks agree on. */
static bool route(lua_State *L, dcomm *c, header *h, lc_nccl_kind kind, const arr *const *as,
                  int n, const dopts *o) {
  /* send and recv cannot make NCCL's communicator (every rank takes part) */
  bool nccl = c->nccl_on && (c->nccl != NULL || (kind != LC_NCCL_SEND && kind != LC_NCCL_RECV));
  for (int i = 0; i < n; i++) {
    if (as[i]->info.dtype == NULL) return false;     /* its error is in h already */
    nccl = nccl && (as[i]->info.kind == LUACUDA_DEVICE || as[i]->info.kind == LUACUDA_MANAGED) &&
           lc_nccl_takes(kind, as[i]->info.dtype);
  }
  h->f[F_ENGINE] = nccl;
  if (nccl) {
    /* NCCL's communicator has one device: its, or the current one, where
    ** it will be made */
    int want = c->nccl ? c->nccl_device : current_device(L, NULL, 0);
    for (int i = 0; i < n; i++)
      if (as[i]->info.kind == LUACUDA_DEVICE && want >= 0 && as[i]->info.device - 1 != want)
        header_error(h, "%s is on device %d, but NCCL's communicator is on device %d (the device "
                     "current at its first collective)", as[i]->what, as[i]->info.device, want + 1);
    return true;
  }
  /* MPI reads device memory where it says it can, but not in a host
  ** function on a stream (which must not call CUDA) */
  bool device_ok = c->cuda_aware && !o->has_stream;
  for (int i = 0; i < n; i++)
    if (as[i]->info.kind == LUACUDA_DEVICE && !device_ok)
      header_error(h, "%s is a device array: call the method on the communicator, which stages it",
                   as[i]->what);
  if (o->has_stream && mpi_thread_level() < MPI_THREAD_MULTIPLE)
    header_error(h, "stream= on the MPI engine needs MPI_THREAD_MULTIPLE (the host program "
                 "started MPI with less): synchronize the stream, then call without it");
  return false;
}

/* The arrays a call uses (their stack indices), and which it writes */
typedef struct uses {
  int n;
  int idx[2];
  bool writes[2];
} uses;

static int use_arrays_protected(lua_State *L) {
  void *stream = lua_touserdata(L, 1);
  for (int i = 2; i <= lua_gettop(L); i++) luacuda_usearray(L, i, stream);
  return 0;
}

/* Before queuing on o's stream: the arrays' memory kept for it, and
** their allocations ordered before it; false and a message. */
static bool use_arrays(lua_State *L, const dopts *o, const uses *u, char *err, size_t len) {
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
static void queued_arrays(lua_State *L, const dopts *o, const uses *u) {
  for (int i = 0; i < u->n; i++) luacuda_queuedarray(L, u->idx[i], o->stream, u->writes[i]);
}

/* How queuing (or waiting) went on both ranks of a send or recv: each
** tells the other; the failure, the sender's first, into msg (else ""). */
static void pair_verdict(lua_State *L, dcomm *c, const char *err, int peer, bool sending,
                         const char *fname, char *msg, size_t len) {
  char mine[VERDICTLEN] = "", theirs[VERDICTLEN];
  if (err[0]) snprintf(mine, sizeof mine, "on rank %d: %s", c->rank + 1, err);
  check_mpi(L, MPI_Sendrecv(mine, VERDICTLEN, MPI_CHAR, peer, TAG_QUEUED, theirs, VERDICTLEN,
                            MPI_CHAR, peer, TAG_QUEUED, c->ctl, MPI_STATUS_IGNORE),
            fname, "MPI_Sendrecv");
  theirs[VERDICTLEN - 1] = '\0';
  const char *first = sending ? mine : theirs, *second = sending ? theirs : mine;
  snprintf(msg, len, "%s", first[0] ? first : second);
}

/* How queuing (or waiting) went on every rank (for send and recv, on
** both): a rank's failure into msg on all of them (else ""). */
static void verdict(lua_State *L, dcomm *c, const char *err, bool pair, int peer, bool sending,
                    const char *fname, char *msg, size_t len) {
  msg[0] = '\0';
  if (pair) {
    pair_verdict(L, c, err, peer, sending, fname, msg, len);
    return;
  }
  header h;
  header_init(&h, K_QUEUE);
  if (err[0]) header_error(&h, "%s", err);
  if (step_exchange(L, c, &h, fname, msg, len) >= 0) msg[0] = '\0';
}

static int queue_host_protected(lua_State *L) {
  luacuda_queuehost(L, lua_touserdata(L, 1), job_host, lua_touserdata(L, 2));
  return 0;
}

/* j made now, after the MPI calls queued on streams; or, with o's stream,
** queued there (job_host), the arrays u marked as used by it. A rank
** that cannot queue it raises on every rank. */
static void run_mpi(lua_State *L, dcomm *c, const mpi_job *j, const dopts *o, const uses *u) {
  if (!o->has_stream) {
    jobs_wait();
    check_mpi(L, job_run(j), j->fname, job_calls[j->kind]);
    return;
  }
  char err[MSGLEN] = "";
  mpi_job *q = malloc(sizeof *q);
  if (q == NULL) {
    snprintf(err, sizeof err, "out of host memory queueing %s", job_calls[j->kind]);
  } else if (use_arrays(L, o, u, err, sizeof err)) {
    *q = *j;
    jobs_add(1);
    lua_pushcfunction(L, queue_host_protected);
    lua_pushlightuserdata(L, o->stream);
    lua_pushlightuserdata(L, q);
    if (lua_pcall(L, 2, 0, 0) == LUA_OK) {
      q = NULL;                 /* job_host's now */
      queued_arrays(L, o, u);
    } else {
      jobs_add(-1);
      snprintf(err, sizeof err, "%s", lua_tostring(L, -1));
      lua_pop(L, 1);
    }
  }
  bool queued = q == NULL;
  free(q);
  char msg[VERDICTLEN];
  verdict(L, c, err, j->kind == J_SEND || j->kind == J_RECV, j->root, j->kind == J_SEND, j->fname,
          msg, sizeof msg);
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

/* false: the ranks' arrays differ in kind, dist.lua stages them and calls
** again */
static int restage(lua_State *L) {
  lua_pushboolean(L, 0);
  return 1;
}

static lc_nccl_op nccl_op_of(int op) {
  return op == OP_PROD_ ? LC_NCCL_PROD : op == OP_MIN_ ? LC_NCCL_MIN : op == OP_MAX_ ? LC_NCCL_MAX
                                                                                     : LC_NCCL_SUM;
}

/* How a step of an NCCL call went on every rank (send and recv: on both):
** a failure is raised on all of them, after the communicator is aborted
** (see run_nccl). */
static void nccl_verdict(lua_State *L, dcomm *c, const lc_nccl_call *call, const char *err,
                         const char *fname) {
  bool pair = call->kind == LC_NCCL_SEND || call->kind == LC_NCCL_RECV;
  char msg[VERDICTLEN];
  verdict(L, c, err, pair, call->root, call->kind == LC_NCCL_SEND, fname, msg, sizeof msg);
  if (!msg[0]) return;
  if (!pair) drop_nccl(c, msg);
  else if (c->nccl) lc_nccl_abort(c->nccl, msg);
  dist_raise(L, fname, "%s", msg);
}

/* The call queued on NCCL, on opts.stream (the arrays u marked as used
** by it), or on luacuda's stream (luacuda.host_stream(), the default
** stream unless the host program set one) and waited for. A rank's
** failure to queue, or to wait, is raised on every rank (send and recv:
** on both), after the communicator is aborted there: the calls the other
** ranks queued would never complete. A collective's failure drops NCCL's
** communicator on every rank, and the next collective makes a new one; a
** send's or recv's aborts it on both ranks, whose next collective then
** fails on every rank. */
static void run_nccl(lua_State *L, dcomm *c, const lc_nccl_call *call, const dopts *o,
                     const uses *u, const char *fname) {
  bool pair = call->kind == LC_NCCL_SEND || call->kind == LC_NCCL_RECV;
  if (!pair) start_nccl(L, c, fname);    /* a send or recv finds it started */
  char err[MSGLEN] = "";
  void *stream = o->has_stream ? o->stream : luacuda_getstream(L);
  if ((!o->has_stream || use_arrays(L, o, u, err, sizeof err)) &&
      lc_nccl_queue(c->nccl, call, stream, err, sizeof err)) {
    err[0] = '\0';
    if (o->has_stream) queued_arrays(L, o, u);
  }
  nccl_verdict(L, c, call, err, fname);            /* every rank queued it */
  if (o->has_stream) return;
  if (lc_nccl_wait(c->nccl, stream, err, sizeof err)) err[0] = '\0';
  nccl_verdict(L, c, call, err, fname);            /* every rank's is done */
}

/* luacuda's backend and current device (0-based), for the engine's
** choice: pushes them */
static int backend_device(lua_State *L) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "luacuda");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "backend");
  lua_call(L, 0, 1);
  lua_getfield(L, -2, "current_device");
  lua_call(L, 0, 1);
  return 2;
}

/* Whether this rank can take NCCL: the CUDA backend, and NCCL loads. A
** communicator's engine is NCCL where every rank can (push_comm). */
static bool nccl_possible(lua_State *L) {
  char why[MSGLEN];
  bool can = false;
  lua_pushcfunction(L, backend_device);
  if (lua_pcall(L, 0, 2, 0) == LUA_OK) {
    const char *b = lua_tostring(L, -2);
    can = b && strcmp(b, "cuda") == 0 && lc_nccl_load(why, sizeof why);
    lua_pop(L, 2);
  } else {
    lua_pop(L, 1);
  }
  return can;
}

/* After a failure on some rank: the NCCL calls the others queued would
** never complete (or would pair with the next ones), so the communicator
** is aborted, and the next collective makes a new one on every rank. */
static void drop_nccl(dcomm *c, const char *why) {
  if (c->nccl == NULL) return;
  lc_nccl_abort(c->nccl, why);
  lc_nccl_free(c->nccl);
  c->nccl = NULL;
}

/* NCCL's communicator of c, made at the first collective that goes to
** NCCL (every rank is there: they agreed on the engine), on each rank's
** device current then: rank 1's unique id, broadcast over MPI, and
** ncclCommInitRank. A failure is raised on every rank. */
static void start_nccl(lua_State *L, dcomm *c, const char *fname) {
  if (c->nccl) return;
  char err[MSGLEN];
  header h;
  header_init(&h, K_ENGINE);
  int device = current_device(L, err, sizeof err);
  if (device < 0) header_error(&h, "%s", err);
  char id[LC_NCCL_ID_BYTES] = {0};
  if (c->rank == 0 && !lc_nccl_unique_id(id, err, sizeof err)) header_error(&h, "%s", err);
  char msg[MSGLEN + 16];
  if (step_exchange(L, c, &h, fname, msg, sizeof msg) < 0) dist_raise(L, fname, "%s", msg);
  check_mpi(L, MPI_Bcast(id, LC_NCCL_ID_BYTES, MPI_BYTE, 0, c->ctl), fname, "MPI_Bcast");
  header_init(&h, K_ENGINE);
  c->nccl = lc_nccl_init(c->size, id, c->rank, device, err, sizeof err);
  c->nccl_device = device;
  if (c->nccl == NULL) header_error(&h, "%s", err);
  if (step_exchange(L, c, &h, fname, msg, sizeof msg) < 0) {
    /* a rank's failure: every rank starts again at the next call */
    drop_nccl(c, msg);
    dist_raise(L, fname, "%s", msg);
  }
}

/* ---- the methods ------------------------------------------------------- */

/* comm:barrier(): the header's exchange, which no rank leaves before every
** rank has entered it */
static int comm_barrier(lua_State *L) {
  dcomm *c = check_comm(L, 1, "barrier");
  header h;
  header_init(&h, K_BARRIER);
  agree(L, c, &h, "barrier");
  return 0;
}

/* comm:split(color [, key]): color a whole number >= 0, or nil (no new
** communicator for this rank: returns nil) */
static int comm_split(lua_State *L) {
  dcomm *c = check_comm(L, 1, "split");
  header h;
  header_init(&h, K_SPLIT);
  int color = MPI_UNDEFINED, key = c->rank;
  if (!lua_isnoneornil(L, 2)) {
    int isnum = 0;
    lua_Integer v = lua_tointegerx(L, 2, &isnum);
    if (!isnum || v < 0 || v > INT_MAX)
      header_error(&h, "color must be a whole number 0 or more, or nil, got %s",
                   isnum ? "a negative number" : luaL_typename(L, 2));
    else
      color = (int)v;
  }
  if (!lua_isnoneornil(L, 3)) {
    int isnum = 0;
    lua_Integer v = lua_tointegerx(L, 3, &isnum);
    if (!isnum || v < INT_MIN || v > INT_MAX)
      header_error(&h, "key must be an integer, got %s", luaL_typename(L, 3));
    else
      key = (int)v;
  }
  agree(L, c, &h, "split");
  MPI_Comm sub;
  check_mpi(L, MPI_Comm_split(c->ctl, color, key, &sub), "split", "MPI_Comm_split");
  if (sub == MPI_COMM_NULL) {
    lua_pushnil(L);
    return 1;
  }
  push_comm(L, sub, "split");
  return 1;
}

static const char *const stream_only[] = {"stream", NULL};

/* comm:_allreduce(x, op, out|nil, opts|nil): out is opts.out, staged */
static int comm_allreduce(lua_State *L) {
  static const char *const known[] = {"out", "stream", NULL};
  dcomm *c = check_comm(L, 1, "allreduce");
  header h;
  header_init(&h, K_ALLREDUCE);
  dopts o;
  read_options(L, 5, known, &h, &o);
  arr x = {0}, out = {0};
  bool has_out = !lua_isnoneornil(L, 4);
  bool ok = read_array(L, 2, "x", &h, &x, true, !has_out, &o);
  int op = ok ? read_op(L, 3, &h, &x) : OP_SUM_;
  if (ok && has_out && read_array(L, 4, "out", &h, &out, false, true, &o)) {
    same_dtype(&h, &x, &out, "out");
    if (out.info.size != x.info.size)
      header_error(&h, "out has %lld elements, x %lld", (long long)out.info.size,
                   (long long)x.info.size);
    else if (out.data != x.data && overlap(&x, &out))
      header_error(&h, "out overlaps x (give the same array for in place)");
  }
  const arr *as[] = {&x, &out};
  bool nccl = route(L, c, &h, LC_NCCL_ALLREDUCE, as, has_out ? 2 : 1, &o);
  if (!agree(L, c, &h, "allreduce")) return restage(L);
  lua_settop(L, has_out ? 4 : 2);
  uses u = has_out ? (uses){2, {2, 4}, {false, true}} : (uses){1, {2}, {true}};
  if (nccl) {
    lc_nccl_call call = {LC_NCCL_ALLREDUCE, x.data, has_out ? out.data : x.data, x.info.size,
                         x.info.dtype, x.info.itemsize, nccl_op_of(op), 0};
    run_nccl(L, c, &call, &o, &u, "allreduce");
    return 1;
  }
  bool in_place = !has_out || out.data == x.data;
  mpi_job j = {J_ALLREDUCE, c->comm, in_place ? MPI_IN_PLACE : x.data, in_place ? x.data : out.data,
               mpi_count(&x, x.info.size), mpi_type(x.code), mpi_op(op, x.code), 0, c->rank,
               "allreduce"};
  run_mpi(L, c, &j, &o, &u);
  return 1;
}

/* comm:_broadcast(x, root, opts|nil) */
static int comm_broadcast(lua_State *L) {
  dcomm *c = check_comm(L, 1, "broadcast");
  header h;
  header_init(&h, K_BROADCAST);
  dopts o;
  read_options(L, 4, stream_only, &h, &o);
  arr x;
  int root = 0;
  read_array(L, 2, "x", &h, &x, true, true, &o);
  if (read_rank(L, 3, c, "root", &h, &root)) h.f[F_ROOT] = root + 1;
  const arr *as[] = {&x};
  bool nccl = route(L, c, &h, LC_NCCL_BROADCAST, as, 1, &o);
  if (!agree(L, c, &h, "broadcast")) return restage(L);
  lua_settop(L, 2);
  uses u = {1, {2}, {root != c->rank}};
  if (nccl) {
    lc_nccl_call call = {LC_NCCL_BROADCAST, x.data, x.data, x.info.size, x.info.dtype,
                         x.info.itemsize, LC_NCCL_SUM, root};
    run_nccl(L, c, &call, &o, &u, "broadcast");
    return 1;
  }
  mpi_job j = {J_BCAST, c->comm, NULL, x.data, mpi_count(&x, x.info.size), mpi_type(x.code),
               MPI_OP_NULL, root, c->rank, "broadcast"};
  run_mpi(L, c, &j, &o, &u);
  return 1;
}

/* comm:_reduce(x, root, op, opts|nil): the result in x on the root; the
** other ranks' x unchanged */
static int comm_reduce(lua_State *L) {
  dcomm *c = check_comm(L, 1, "reduce");
  header h;
  header_init(&h, K_REDUCE);
  dopts o;
  read_options(L, 5, stream_only, &h, &o);
  arr x;
  int root = 0;
  bool root_ok = read_rank(L, 3, c, "root", &h, &root);
  if (root_ok) h.f[F_ROOT] = root + 1;
  bool ok = read_array(L, 2, "x", &h, &x, true, root_ok && root == c->rank, &o);
  int op = ok ? read_op(L, 4, &h, &x) : OP_SUM_;
  const arr *as[] = {&x};
  bool nccl = route(L, c, &h, LC_NCCL_REDUCE, as, 1, &o);
  if (!agree(L, c, &h, "reduce")) return restage(L);
  lua_settop(L, 2);
  uses u = {1, {2}, {root == c->rank}};
  if (nccl) {
    lc_nccl_call call = {LC_NCCL_REDUCE, x.data, x.data, x.info.size, x.info.dtype,
                         x.info.itemsize, nccl_op_of(op), root};
    run_nccl(L, c, &call, &o, &u, "reduce");
    return 1;
  }
  bool at_root = c->rank == root;
  mpi_job j = {J_REDUCE, c->comm, at_root ? MPI_IN_PLACE : x.data, at_root ? x.data : NULL,
               mpi_count(&x, x.info.size), mpi_type(x.code), mpi_op(op, x.code), root, c->rank,
               "reduce"};
  run_mpi(L, c, &j, &o, &u);
  return 1;
}

/* the output of allgather and reduce_scatter: `big` has size times the
** elements of `small` */
static void check_blocks(header *h, dcomm *c, const arr *big, const arr *small, const char *bigname,
                         const char *smallname) {
  if (big->info.size != (int64_t)c->size * small->info.size)
    header_error(h, "%s has %lld elements, not %d (ranks) x %lld (the elements of %s)", bigname,
                 (long long)big->info.size, c->size, (long long)small->info.size, smallname);
  else if (overlap(big, small))
    header_error(h, "out overlaps x");
}

/* comm:_allgather(x, out, opts|nil): out holds every rank's x, rank 1's
** first */
static int comm_allgather(lua_State *L) {
  dcomm *c = check_comm(L, 1, "allgather");
  header h;
  header_init(&h, K_ALLGATHER);
  dopts o;
  read_options(L, 4, stream_only, &h, &o);
  arr x = {0}, out = {0};
  bool ok = read_array(L, 2, "x", &h, &x, true, false, &o) &&
            read_array(L, 3, "out", &h, &out, false, true, &o);
  if (ok) {
    same_dtype(&h, &x, &out, "out");
    check_blocks(&h, c, &out, &x, "out", "x");
  }
  const arr *as[] = {&x, &out};
  bool nccl = ok && route(L, c, &h, LC_NCCL_ALLGATHER, as, 2, &o);
  if (!agree(L, c, &h, "allgather")) return restage(L);
  lua_settop(L, 3);
  uses u = {2, {2, 3}, {false, true}};
  if (nccl) {
    lc_nccl_call call = {LC_NCCL_ALLGATHER, x.data, out.data, x.info.size, x.info.dtype,
                         x.info.itemsize, LC_NCCL_SUM, 0};
    run_nccl(L, c, &call, &o, &u, "allgather");
    return 1;
  }
  mpi_job j = {J_ALLGATHER, c->comm, x.data, out.data, mpi_count(&x, x.info.size),
               mpi_type(x.code), MPI_OP_NULL, 0, c->rank, "allgather"};
  run_mpi(L, c, &j, &o, &u);
  return 1;
}

/* comm:_reduce_scatter(x, out, op, opts|nil): out is block `rank` of the
** reduction of every rank's x */
static int comm_reduce_scatter(lua_State *L) {
  dcomm *c = check_comm(L, 1, "reduce_scatter");
  header h;
  header_init(&h, K_REDUCE_SCATTER);
  dopts o;
  read_options(L, 5, stream_only, &h, &o);
  arr x = {0}, out = {0};
  int op = OP_SUM_;
  bool ok = false;
  if (read_array(L, 2, "x", &h, &x, true, false, &o)) {
    op = read_op(L, 4, &h, &x);
    if ((ok = read_array(L, 3, "out", &h, &out, false, true, &o))) {
      same_dtype(&h, &x, &out, "out");
      check_blocks(&h, c, &x, &out, "x", "out");
    }
  }
  const arr *as[] = {&x, &out};
  bool nccl = ok && route(L, c, &h, LC_NCCL_REDUCE_SCATTER, as, 2, &o);
  if (!agree(L, c, &h, "reduce_scatter")) return restage(L);
  lua_settop(L, 3);
  uses u = {2, {2, 3}, {false, true}};
  if (nccl) {
    lc_nccl_call call = {LC_NCCL_REDUCE_SCATTER, x.data, out.data, out.info.size, x.info.dtype,
                         x.info.itemsize, nccl_op_of(op), 0};
    run_nccl(L, c, &call, &o, &u, "reduce_scatter");
    return 1;
  }
  mpi_job j = {J_REDUCE_SCATTER, c->comm, x.data, out.data, mpi_count(&out, out.info.size),
               mpi_type(x.code), mpi_op(op, x.code), 0, c->rank, "reduce_scatter"};
  run_mpi(L, c, &j, &o, &u);
  return 1;
}

/* the verdict when one side's array is device memory for NCCL and the
** other's host memory: both call again, staged for MPI (dist.lua) */
#define RESTAGE "\x01restage"

/* What is wrong between a send's header (sh, of rank sr) and its recv's
** (rh, of rank rr), the same message on both ranks: "" when nothing;
** RESTAGE when only the engine differs. */
static void pair_disagreement(const header *sh, const header *rh, int sr, int rr, char *msg,
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
             dtype_names[sh->f[F_DTYPE]], rr + 1, dtype_names[rh->f[F_DTYPE]]);
  else if (sh->f[F_COUNT] != rh->f[F_COUNT])
    snprintf(msg, len, "rank %d sends %lld elements, rank %d receives into %lld", sr + 1,
             (long long)sh->f[F_COUNT], rr + 1, (long long)rh->f[F_COUNT]);
  else if (sh->f[F_SHAPE] != rh->f[F_SHAPE])
    snprintf(msg, len, "rank %d sends an array of another shape than rank %d receives into "
             "(%lld elements each)", sr + 1, rr + 1, (long long)rh->f[F_COUNT]);
  else if (sh->f[F_ENGINE] != rh->f[F_ENGINE])
    snprintf(msg, len, "%s", RESTAGE);
}

/* comm:_send(x, peer, opts|nil) and comm:_recv(x, peer, opts|nil): both
** ranks exchange their headers on the control channel and make the same
** verdict from the two. A bad peer is this rank's error alone (there is
** no peer to tell). */
static int send_or_recv(lua_State *L, bool sending) {
  const char *fname = sending ? "send" : "recv";
  dcomm *c = check_comm(L, 1, fname);
  header mine, theirs;
  header_init(&mine, sending ? K_SEND : K_RECV);
  arr x;
  int peer = 0;
  if (!read_rank(L, 3, c, "peer", &mine, &peer)) dist_raise(L, fname, "%s", mine.err);
  if (peer == c->rank) dist_raise(L, fname, "peer %d is this rank", peer + 1);
  dopts o;
  read_options(L, 4, stream_only, &mine, &o);
  read_array(L, 2, "x", &mine, &x, true, !sending, &o);
  const arr *as[] = {&x};
  bool nccl = route(L, c, &mine, sending ? LC_NCCL_SEND : LC_NCCL_RECV, as, 1, &o);
  lc_group g = group_of(c);
  lc_call call = {(int)mine.f[F_KIND], sending ? LC_SEND : LC_RECV, peer};
  char msg[VERDICTLEN + MSGLEN];
  lc_verdict v = lc_agree_pair(&g, &call, &mine, &theirs, msg, sizeof msg);
  if (v == LC_ABORT) abort_job(fname, msg);
  if (v == LC_RAISE) dist_raise(L, fname, "%s", msg);
  if (sending) pair_disagreement(&mine, &theirs, c->rank, peer, msg, sizeof msg);
  else pair_disagreement(&theirs, &mine, peer, c->rank, msg, sizeof msg);
  if (strcmp(msg, RESTAGE) == 0) return restage(L);
  if (msg[0]) dist_raise(L, fname, "%s", msg);
  lua_settop(L, 2);
  uses u = {1, {2}, {!sending}};
  if (nccl) {
    lc_nccl_call ncall = {sending ? LC_NCCL_SEND : LC_NCCL_RECV, sending ? x.data : NULL,
                          sending ? NULL : x.data, x.info.size, x.info.dtype, x.info.itemsize,
                          LC_NCCL_SUM, peer};
    run_nccl(L, c, &ncall, &o, &u, fname);
    return 1;
  }
  mpi_job j = {sending ? J_SEND : J_RECV, c->comm, sending ? x.data : NULL, sending ? NULL : x.data,
               mpi_count(&x, x.info.size), mpi_type(x.code), MPI_OP_NULL, peer, c->rank, fname};
  run_mpi(L, c, &j, &o, &u);
  return 1;
}

static int comm_send(lua_State *L) { return send_or_recv(L, true); }
static int comm_recv(lua_State *L) { return send_or_recv(L, false); }

/* comm.rank, comm.size, comm.local_rank, comm.local_size, comm.engine,
** comm.cuda_aware, comm.id;
** otherwise the methods (upvalue 1) */
static int comm_index(lua_State *L) {
  dcomm *c = luaL_checkudata(L, 1, COMM_MT);
  const char *k = lua_tostring(L, 2);
  if (k && strcmp(k, "rank") == 0) lua_pushinteger(L, c->rank + 1);
  else if (k && strcmp(k, "size") == 0) lua_pushinteger(L, c->size);
  else if (k && strcmp(k, "local_rank") == 0) lua_pushinteger(L, c->local_rank + 1);
  else if (k && strcmp(k, "local_size") == 0) lua_pushinteger(L, c->local_size);
  else if (k && strcmp(k, "engine") == 0) lua_pushstring(L, c->nccl_on ? "nccl" : "mpi");
  else if (k && strcmp(k, "_nccl_started") == 0) lua_pushboolean(L, c->nccl != NULL);
  else if (k && strcmp(k, "cuda_aware") == 0) lua_pushboolean(L, c->cuda_aware);
  else if (k && strcmp(k, "id") == 0) lua_pushinteger(L, (lua_Integer)c->id);
  else {
    lua_settop(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
  }
  return 1;
}

static int comm_tostring(lua_State *L) {
  dcomm *c = luaL_checkudata(L, 1, COMM_MT);
  lua_pushfstring(L, "luacuda.dist communicator %I (rank %d of %d, %s)", (lua_Integer)c->id,
                  c->rank + 1, c->size, c->nccl_on ? "nccl" : "mpi");
  return 1;
}

/* init(): MPI started (or joined), and this state's copy of
** MPI_COMM_WORLD, the same object at every call */
static int dist_init(lua_State *L) {
  char err[MSGLEN];
  if (!ensure_mpi(err, sizeof err) || !lc_agree_open(kind_names, err, sizeof err))
    dist_raise(L, "init", "%s", err);
  if (lua_getfield(L, LUA_REGISTRYINDEX, "luacuda.dist.world") == LUA_TUSERDATA) return 1;
  lua_pop(L, 1);
  MPI_Comm world;
  check_mpi(L, MPI_Comm_dup(MPI_COMM_WORLD, &world), "init", "MPI_Comm_dup");
  push_comm(L, world, "init");
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "luacuda.dist.world");
  return 1;
}

static const luaL_Reg comm_methods[] = {
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

/* require "luacuda.dist_mpi": {init = , methods = } (lua/luacuda/dist.lua
** wraps the collectives of methods, which take contiguous host arrays) */
LUACUDA_API int luaopen_luacuda_dist_mpi(lua_State *L) {
  lua_getglobal(L, "require");     /* luacuda's arrays' metatable registered */
  lua_pushliteral(L, "luacuda");
  lua_call(L, 1, 0);
  lua_newtable(L);
  if (luaL_newmetatable(L, COMM_MT)) {
    luaL_newlib(L, comm_methods);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "methods");
    lua_pushcclosure(L, comm_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, comm_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, comm_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, "luacuda.dist.comm");
    lua_setfield(L, -2, "__metatable");
  }
  lua_getfield(L, -1, "methods");
  lua_setfield(L, -3, "methods");
  lua_pop(L, 1);
  lua_pushcfunction(L, dist_init);
  lua_setfield(L, -2, "init");
  return 1;
}
