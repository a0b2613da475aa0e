/*
** fake_nccl: an NCCL on the fake driver (spec/fake/fake_cuda.c), so that
** luacuda.dist's NCCL engine is tested without GPUs
** (LUACUDA_LIBNCCL=build/fake/libnccl.so.2 under mpirun). Test code only:
** never installed. Built against the toolkit's nccl.h, so its prototypes,
** types and values are NCCL's.
**
** It keeps NCCL's documented rules: a communicator is made with a context
** current (the device it belongs to; ncclInvalidUsage without one) from an
** id of ncclGetUniqueId and a rank below nranks; each operation checks its
** count, datatype, op, root or peer, that its buffers lie in memory the
** communicator's device reaches (the fake driver's fake_cuda_reachable),
** and the in-place rules of allgather and reduce_scatter (any other
** overlap is refused), then is queued on its stream (NULL: the legacy
** stream) with the fake driver's cuLaunchHostFunc, so it runs in stream
** order on the stream's worker thread and the call returns when queued.
**
** The ranks are processes: they exchange their data through files in a
** directory named by the unique id ($TMPDIR or /tmp, fake_nccl_<id>). The
** n-th collective of a communicator writes each rank's input into
** "c<n>.<rank>" (a temporary file renamed into place) and waits for the
** files it needs; a send writes "p<from>.<to>.<k>", which its receiver
** reads and removes. Every rank computes the result on the host, reducing
** in rank order in the element type (float16 and bfloat16 through float,
** rounded at each step by luacuda's own conversions, src/base/half.h). ncclCommDestroy waits for the communicator's
** queued work; ncclCommAbort makes that work stop waiting for the other
** ranks and fail at once (as NCCL aborts its uncompleted operations), and
** the other ranks' operations that wait for this one fail too, with
** ncclRemoteError (its connections are gone); the last rank to destroy or
** abort removes the directory. A communicator's buffers take device
** memory (the fake driver's fake_cuda_charge: 4 MiB each way to each
** peer, NCCL_BUFFSIZE's default), ncclUnhandledCudaError when they do not
** fit, given back by ncclCommDestroy and ncclCommAbort.
**
** Environment:
**   FAKE_NCCL_TRACE=path      append one line per call to path (one write
**                             each, so ranks share the file): its name and
**                             arguments ("ncclAllReduce rank=1/2 count=4
**                             float32 sum inplace @legacy"), and "  -> code"
**                             after a failed one
**   FAKE_NCCL_FAIL=fn:N[:r]   the Nth call of fn in each process returns r
**                             (3, ncclInternalError)
**   FAKE_NCCL_ASYNC=fn:N[:r]  the Nth call of fn in each process that is
**                             queued fails asynchronously, as a network error
**                             does: when it runs, the communicator's error
**                             (ncclCommGetAsyncError) becomes r (6,
**                             ncclRemoteError), nothing is exchanged, and the
**                             operation never completes, its stream stuck,
**                             until ncclCommAbort (or FAKE_NCCL_TIMEOUT_S)
**   FAKE_NCCL_TIMEOUT_S=s     how long an operation waits for the other
**                             ranks (30 s) before it fails the communicator
**                             (ncclCommGetAsyncError) and says so on stderr
** It finds the fake driver the way luacuda opened it: $LUACUDA_LIBCUDA,
** else libcuda.so.1, already loaded (RTLD_NOLOAD).
*/
#define _GNU_SOURCE
#include <cuda.h>
#include <nccl.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "half.h"          /* src/base/: float16 and bfloat16 as luacuda converts them */

#define API __attribute__((visibility("default")))

/* ---- the fake driver's functions, settings, trace ---------------------------- */

static CUresult (*drv_ctx_get_current)(CUcontext *);
static CUresult (*drv_ctx_push)(CUcontext);
static CUresult (*drv_ctx_pop)(CUcontext *);
static CUresult (*drv_launch_host_func)(CUstream, CUhostFn, void *);
static int (*drv_reachable)(CUdeviceptr, size_t);
static int (*drv_charge)(long long);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool have_driver;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;   /* the counters below */
static int trace_fd = -1;
/* an injected failure: the at-th call of fn gives result */
typedef struct injection {
  char fn[64];
  int at, calls;
  ncclResult_t result;
} injection;
static injection fail = {"", 0, 0, ncclInternalError};       /* FAKE_NCCL_FAIL */
static injection async_fail = {"", 0, 0, ncclRemoteError};   /* FAKE_NCCL_ASYNC */
static double timeout_s = 30;
static unsigned long id_counter;

#define LOAD(var, name) do { void *p_ = dlsym(h, name); memcpy(&var, &p_, sizeof p_); \
  if (p_ == NULL) fprintf(stderr, "fake_nccl: the driver has no %s\n", name); } while (0)

/* "fn:N[:r]" from the variable name into *in */
static void read_injection(const char *name, injection *in) {
  const char *e = getenv(name);
  if (e == NULL || *e == '\0') return;
  const char *c = strchr(e, ':');
  if (c && (size_t)(c - e) < sizeof in->fn) {
    memcpy(in->fn, e, (size_t)(c - e));
    in->at = atoi(c + 1);
    const char *r = strchr(c + 1, ':');
    if (r) in->result = (ncclResult_t)atoi(r + 1);
  }
}

/* Whether this call of fn is the one in injects; counted under mu. */
static bool injected(injection *in, const char *fn) {
  pthread_mutex_lock(&mu);
  bool hit = in->at && strcmp(fn, in->fn) == 0 && ++in->calls == in->at;
  pthread_mutex_unlock(&mu);
  return hit;
}

static void init(void) {
  const char *e = getenv("FAKE_NCCL_TRACE");
  if (e && *e) trace_fd = open(e, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  read_injection("FAKE_NCCL_FAIL", &fail);
  read_injection("FAKE_NCCL_ASYNC", &async_fail);
  if ((e = getenv("FAKE_NCCL_TIMEOUT_S")) && *e) timeout_s = atof(e);
  const char *path = getenv("LUACUDA_LIBCUDA");
  void *h = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (h == NULL) {
    fprintf(stderr, "fake_nccl: no fake driver loaded (%s)\n", dlerror());
    return;
  }
  LOAD(drv_ctx_get_current, "cuCtxGetCurrent");
  LOAD(drv_ctx_push, "cuCtxPushCurrent_v2");
  LOAD(drv_ctx_pop, "cuCtxPopCurrent_v2");
  LOAD(drv_launch_host_func, "cuLaunchHostFunc");
  LOAD(drv_reachable, "fake_cuda_reachable");
  LOAD(drv_charge, "fake_cuda_charge");
  have_driver = drv_ctx_get_current && drv_ctx_push && drv_ctx_pop && drv_launch_host_func &&
                drv_reachable && drv_charge;
}

static void trace_line(const char *fmt, ...) {
  if (trace_fd < 0) return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  ssize_t w = write(trace_fd, line, (size_t)n);   /* one write: lines of ranks do not mix */
  (void)w;
}

/* Every entry point: the call traced (the caller's line), and failed when
** a failure is injected here. */
static ncclResult_t enter(const char *fn, const char *fmt, ...) {
  pthread_once(&once, init);
  char args[400] = "";
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
  }
  trace_line("%s%s%s", fn, args[0] ? " " : "", args);
  if (!have_driver) return ncclUnhandledCudaError;
  return injected(&fail, fn) ? fail.result : ncclSuccess;
}

static ncclResult_t leave(ncclResult_t r) {
  if (r != ncclSuccess) trace_line("  -> %d", (int)r);
  return r;
}

/* ---- datatypes and ops --------------------------------------------------------- */

static const char *const type_names[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64",
                                         "float16", "float32", "float64", "bfloat16"};
static const size_t type_sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
#define NTYPES 10   /* the fp8 types are not modelled: refused */
static const char *const op_names[] = {"sum", "prod", "max", "min", "avg"};

#define APPLY(op, a, b) ((op) == ncclSum || (op) == ncclAvg ? (a) + (b) : (op) == ncclProd ? (a) * (b) \
                         : (op) == ncclMax ? ((a) > (b) ? (a) : (b)) : ((a) < (b) ? (a) : (b)))
#define REDUCE_AS(T)                                                                 \
  do {                                                                               \
    T *acc = (T *)dst;                                                               \
    for (size_t i = 0; i < n; i++) {                                                 \
      T v = ((const T *)srcs[0])[i];                                                 \
      for (int r = 1; r < nsrc; r++) v = (T)APPLY(op, v, ((const T *)srcs[r])[i]);   \
      if (op == ncclAvg) v = (T)(v / (T)nsrc);                                       \
      acc[i] = v;                                                                    \
    }                                                                                \
  } while (0)
#define REDUCE_HALF(LOAD_, STORE_)                                                   \
  do {                                                                               \
    uint16_t *acc = dst;                                                             \
    for (size_t i = 0; i < n; i++) {                                                 \
      float v = LOAD_(((const uint16_t *)srcs[0])[i]);                               \
      for (int r = 1; r < nsrc; r++)                                                 \
        v = LOAD_(STORE_(APPLY(op, v, LOAD_(((const uint16_t *)srcs[r])[i]))));      \
      if (op == ncclAvg) v = v / (float)nsrc;                                        \
      acc[i] = STORE_(v);                                                            \
    }                                                                                \
  } while (0)

/* dst[i] = srcs[0][i] op srcs[1][i] op ..., in rank order */
static void reduce_into(void *dst, const void *const *srcs, int nsrc, size_t n, ncclDataType_t t,
                        ncclRedOp_t op) {
  switch (t) {
  case ncclInt8: REDUCE_AS(int8_t); break;
  case ncclUint8: REDUCE_AS(uint8_t); break;
  case ncclInt32: REDUCE_AS(int32_t); break;
  case ncclUint32: REDUCE_AS(uint32_t); break;
  case ncclInt64: REDUCE_AS(int64_t); break;
  case ncclUint64: REDUCE_AS(uint64_t); break;
  case ncclFloat16: REDUCE_HALF(lc_float16_to_float, lc_float_to_float16); break;
  case ncclFloat32: REDUCE_AS(float); break;
  case ncclFloat64: REDUCE_AS(double); break;
  case ncclBfloat16: REDUCE_HALF(lc_bfloat16_to_float, lc_float_to_bfloat16); break;
  default: break;
  }
}

/* ---- communicators ------------------------------------------------------------- */

#define MAGIC 0x4e43434cu
struct ncclComm {
  unsigned magic;
  bool alive;
  int rank, nranks;
  CUcontext ctx;                /* the device's context, current at init */
  size_t buffers;               /* device memory charged for its buffers */
  char dir[512];                /* where the ranks exchange data */
  unsigned long seq;            /* collectives queued so far */
  unsigned long *sent, *received;   /* point-to-point messages, per peer */
  pthread_mutex_t mu;
  pthread_cond_t idle;
  int queued;                   /* operations not run yet */
  ncclResult_t async_error;
  bool aborting;                /* ncclCommAbort: queued operations give up */
};

static bool aborting(ncclComm_t c) { return __atomic_load_n(&c->aborting, __ATOMIC_ACQUIRE); }

static const char *id_dir(const ncclUniqueId *id, char *out, size_t len) {
  const char *tmp = getenv("TMPDIR");
  snprintf(out, len, "%s/fake_nccl_%.64s", tmp && *tmp ? tmp : "/tmp", id->internal);
  return out;
}

API ncclResult_t ncclGetVersion(int *version) {
  ncclResult_t r = enter(__func__, NULL);
  if (r) return leave(r);
  if (version == NULL) return leave(ncclInvalidArgument);
  *version = NCCL_VERSION_CODE;
  return leave(ncclSuccess);
}

API ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  ncclResult_t r = enter(__func__, NULL);
  if (r) return leave(r);
  if (id == NULL) return leave(ncclInvalidArgument);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  pthread_mutex_lock(&mu);
  unsigned long k = ++id_counter;
  pthread_mutex_unlock(&mu);
  memset(id, 0, sizeof *id);
  snprintf(id->internal, sizeof id->internal, "%ld_%lx_%lx_%lu", (long)getpid(),
           (unsigned long)ts.tv_sec, (unsigned long)ts.tv_nsec, k);
  char dir[512];
  if (mkdir(id_dir(id, dir, sizeof dir), 0700) != 0) {
    fprintf(stderr, "fake_nccl: cannot make %s: %s\n", dir, strerror(errno));
    return leave(ncclSystemError);
  }
  return leave(ncclSuccess);
}

API ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
  ncclResult_t r = enter(__func__, "nranks=%d rank=%d", nranks, rank);
  if (r) return leave(r);
  if (comm == NULL || nranks < 1 || rank < 0 || rank >= nranks) return leave(ncclInvalidArgument);
  CUcontext cur = NULL;
  if (drv_ctx_get_current(&cur) != CUDA_SUCCESS || cur == NULL) {
    fprintf(stderr, "fake_nccl: ncclCommInitRank without a current context (no device)\n");
    return leave(ncclInvalidUsage);
  }
  id.internal[NCCL_UNIQUE_ID_BYTES - 1] = '\0';
  char dir[512];
  struct stat st;
  if (id.internal[0] == '\0' || stat(id_dir(&id, dir, sizeof dir), &st) != 0) {
    fprintf(stderr, "fake_nccl: ncclCommInitRank with an id no rank made (%s)\n", dir);
    return leave(ncclInvalidArgument);
  }
  ncclComm_t c = calloc(1, sizeof *c);
  if (c) c->sent = calloc((size_t)nranks, sizeof *c->sent);
  if (c) c->received = calloc((size_t)nranks, sizeof *c->received);
  if (c == NULL || c->sent == NULL || c->received == NULL) {
    if (c) free(c->sent);
    free(c);
    return leave(ncclSystemError);
  }
  /* NCCL's buffers take device memory: NCCL_BUFFSIZE's default, 4 MiB,
  ** each way to each peer (one channel); short of it, the cudaMalloc
  ** inside fails */
  c->buffers = (size_t)(nranks - 1) * 2 * (4u << 20);
  if (c->buffers && drv_charge((long long)c->buffers) != CUDA_SUCCESS) {
    free(c->sent);
    free(c->received);
    free(c);
    return leave(ncclUnhandledCudaError);
  }
  c->magic = MAGIC;
  c->alive = true;
  c->rank = rank;
  c->nranks = nranks;
  c->ctx = cur;
  snprintf(c->dir, sizeof c->dir, "%s", dir);
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->idle, NULL);
  *comm = c;
  return leave(ncclSuccess);
}

static bool comm_ok(ncclComm_t c) { return c != NULL && c->magic == MAGIC && c->alive; }

API ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  ncclResult_t r = enter(__func__, NULL);
  if (r) return leave(r);
  if (!comm_ok(comm) || count == NULL) return leave(ncclInvalidArgument);
  *count = comm->nranks;
  return leave(ncclSuccess);
}

API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  ncclResult_t r = enter(__func__, NULL);
  if (r) return leave(r);
  if (!comm_ok(comm) || rank == NULL) return leave(ncclInvalidArgument);
  *rank = comm->rank;
  return leave(ncclSuccess);
}

API ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err) {
  ncclResult_t r = enter(__func__, NULL);
  if (r) return leave(r);
  if (!comm_ok(comm) || err == NULL) return leave(ncclInvalidArgument);
  pthread_mutex_lock(&comm->mu);
  *err = comm->async_error;
  pthread_mutex_unlock(&comm->mu);
  return leave(ncclSuccess);
}

/* Wait for the communicator's queued operations (under no lock of ours). */
static void wait_idle(ncclComm_t c) {
  pthread_mutex_lock(&c->mu);
  while (c->queued > 0) pthread_cond_wait(&c->idle, &c->mu);
  pthread_mutex_unlock(&c->mu);
}

API ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  ncclResult_t r = enter(__func__, NULL);
  if (r) return leave(r);
  if (!comm_ok(comm)) return leave(ncclInvalidArgument);
  wait_idle(comm);
  return leave(ncclSuccess);
}

/* The directory's files, and the directory when it is empty of other
** ranks' marks: the last rank to leave removes it. */
static void leave_dir(ncclComm_t c) {
  char mark[600];
  snprintf(mark, sizeof mark, "%s/gone.%d", c->dir, c->rank);
  int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd);
  DIR *d = opendir(c->dir);
  if (d == NULL) return;
  int gone = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) gone += strncmp(e->d_name, "gone.", 5) == 0;
  closedir(d);
  if (gone < c->nranks) return;
  if ((d = opendir(c->dir)) == NULL) return;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char f[800];
    snprintf(f, sizeof f, "%s/%s", c->dir, e->d_name);
    unlink(f);
  }
  closedir(d);
  rmdir(c->dir);
}

/* The communicator's buffers back to its device. */
static void free_buffers(ncclComm_t c) {
  CUcontext popped;
  if (c->buffers == 0 || drv_ctx_push(c->ctx) != CUDA_SUCCESS) return;
  drv_charge(-(long long)c->buffers);
  c->buffers = 0;
  drv_ctx_pop(&popped);
}

/* NCCL's documented way out of an asynchronous error, whose operations
** never complete: they are aborted (here: stop waiting for the other
** ranks), then the communicator is freed, without waiting for its peers. */
API ncclResult_t ncclCommAbort(ncclComm_t comm) {
  ncclResult_t r = enter(__func__, comm_ok(comm) ? "rank=%d/%d" : NULL,
                         comm_ok(comm) ? comm->rank + 1 : 0, comm_ok(comm) ? comm->nranks : 0);
  if (r) return leave(r);
  if (!comm_ok(comm)) return leave(ncclInvalidArgument);
  __atomic_store_n(&comm->aborting, true, __ATOMIC_RELEASE);
  char mark[600];
  snprintf(mark, sizeof mark, "%s/aborted", comm->dir);
  int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd);
  wait_idle(comm);
  leave_dir(comm);
  free_buffers(comm);
  comm->alive = false;   /* kept, marked dead: a later use is refused */
  return leave(ncclSuccess);
}

API ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  ncclResult_t r = enter(__func__, comm_ok(comm) ? "rank=%d/%d" : NULL,
                         comm_ok(comm) ? comm->rank + 1 : 0, comm_ok(comm) ? comm->nranks : 0);
  if (r) return leave(r);
  if (!comm_ok(comm)) return leave(ncclInvalidArgument);
  wait_idle(comm);
  leave_dir(comm);
  free_buffers(comm);
  comm->alive = false;   /* kept, marked dead: a later use is refused */
  return leave(ncclSuccess);
}

static int group_depth;   /* per process, as NCCL's is per thread: luacuda calls from one */

API ncclResult_t ncclGroupStart(void) {
  ncclResult_t r = enter(__func__, NULL);
  if (r) return leave(r);
  __atomic_add_fetch(&group_depth, 1, __ATOMIC_RELAXED);
  return leave(ncclSuccess);
}

API ncclResult_t ncclGroupEnd(void) {
  ncclResult_t r = enter(__func__, NULL);
  if (r) return leave(r);
  if (__atomic_load_n(&group_depth, __ATOMIC_RELAXED) == 0) return leave(ncclInvalidUsage);
  __atomic_sub_fetch(&group_depth, 1, __ATOMIC_RELAXED);
  return leave(ncclSuccess);
}

API const char *ncclGetErrorString(ncclResult_t r) {
  switch (r) {
  case ncclSuccess: return "no error";
  case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
  case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
  case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
  case ncclRemoteError: return "remote process exited or there was a network error";
  case ncclInProgress: return "NCCL operation in progress";
  default: return "unknown result code";
  }
}

API const char *ncclGetLastError(ncclComm_t comm) {
  (void)comm;
  return "";
}

/* ---- operations: checked at the call, run on the stream ---------------------- */

enum kind { K_ALLREDUCE, K_BROADCAST, K_REDUCE, K_ALLGATHER, K_REDUCE_SCATTER, K_SEND, K_RECV };

typedef struct op {
  enum kind kind;
  ncclComm_t comm;
  const void *send;
  void *recv;
  size_t count;           /* elements: each rank's block for allgather and reduce_scatter */
  ncclDataType_t type;
  ncclRedOp_t redop;
  int root;               /* or peer */
  unsigned long seq;      /* the collective's number, or the message's */
  ncclResult_t async;     /* FAKE_NCCL_ASYNC: fails so when it runs */
} op;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static bool put_file(const char *path, const void *p, size_t n) {
  char tmp[700];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (f == NULL) return false;
  bool ok = fwrite(p, 1, n, f) == n;
  ok = fclose(f) == 0 && ok;
  return ok && rename(tmp, path) == 0;
}

/* Whether a rank aborted the communicator: its connections are gone, as a
** peer's are when its process exits (ncclRemoteError for the others). */
static bool peer_aborted(ncclComm_t c) {
  char mark[600];
  snprintf(mark, sizeof mark, "%s/aborted", c->dir);
  return access(mark, F_OK) == 0;
}

/* The file's n bytes into p, once another rank has put it there; false
** after the timeout, or when c is aborted here or by a peer. */
static bool get_file(ncclComm_t c, const char *path, void *p, size_t n) {
  double until = now_s() + timeout_s;
  for (;;) {
    FILE *f = fopen(path, "rb");
    if (f) {
      bool ok = fread(p, 1, n, f) == n;
      fclose(f);
      return ok;
    }
    if (now_s() > until || aborting(c) || peer_aborted(c)) return false;
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
  }
}

static void coll_path(const op *o, int rank, char *out, size_t len) {
  snprintf(out, len, "%s/c%lu.%d", o->comm->dir, o->seq, rank);
}

/* The operation, on the stream's worker: false when a rank's data never
** came. */
static bool run_op(op *o) {
  ncclComm_t c = o->comm;
  size_t esz = type_sizes[o->type], bytes = o->count * esz;
  int n = c->nranks;
  char path[700];
  if (o->kind == K_SEND) {
    snprintf(path, sizeof path, "%s/p%d.%d.%lu", c->dir, c->rank, o->root, o->seq);
    return put_file(path, o->send, bytes);
  }
  if (o->kind == K_RECV) {
    snprintf(path, sizeof path, "%s/p%d.%d.%lu", c->dir, o->root, c->rank, o->seq);
    bool ok = get_file(c, path, o->recv, bytes);
    if (ok) unlink(path);
    return ok;
  }
  /* who puts its input: everyone, but the root alone for a broadcast */
  bool puts = o->kind != K_BROADCAST || c->rank == o->root;
  size_t in_bytes = o->kind == K_REDUCE_SCATTER ? bytes * (size_t)n : bytes;
  coll_path(o, c->rank, path, sizeof path);
  if (puts && !put_file(path, o->send, in_bytes)) return false;
  if (o->kind == K_REDUCE && c->rank != o->root) return true;
  if (o->kind == K_BROADCAST) {
    if (c->rank == o->root) {
      if (o->recv != o->send) memmove(o->recv, o->send, bytes);
      return true;
    }
    coll_path(o, o->root, path, sizeof path);
    return get_file(c, path, o->recv, bytes);
  }
  /* every rank's input, read from the files (this rank's too: its send
  ** buffer may be its receive buffer) */
  char *all = malloc(in_bytes * (size_t)n + 1);
  const void **srcs = malloc(sizeof *srcs * (size_t)n);
  bool ok = all && srcs;
  for (int r = 0; ok && r < n; r++) {
    coll_path(o, r, path, sizeof path);
    ok = get_file(c, path, all + in_bytes * (size_t)r, in_bytes);
  }
  if (ok) {
    if (o->kind == K_ALLGATHER) {
      memcpy(o->recv, all, in_bytes * (size_t)n);
    } else {
      size_t skip = o->kind == K_REDUCE_SCATTER ? bytes * (size_t)c->rank : 0;
      for (int r = 0; r < n; r++) srcs[r] = all + in_bytes * (size_t)r + skip;
      reduce_into(o->recv, srcs, n, o->count, o->type, o->redop);
    }
  }
  free(all);
  free(srcs);
  return ok;
}

/* An operation failed by FAKE_NCCL_ASYNC: the communicator's error set,
** then stuck, as NCCL's kernel is, until the communicator is aborted. */
static void stick(op *o) {
  ncclComm_t c = o->comm;
  pthread_mutex_lock(&c->mu);
  c->async_error = o->async;
  pthread_mutex_unlock(&c->mu);
  double until = now_s() + timeout_s;
  while (!aborting(c) && now_s() < until) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}

static void CUDA_CB host_fn(void *ud) {
  op *o = ud;
  ncclComm_t c = o->comm;
  bool ok = true;
  if (o->async != ncclSuccess) stick(o);
  else ok = run_op(o);
  pthread_mutex_lock(&c->mu);
  if (!ok && !aborting(c)) {
    if (!peer_aborted(c))
      fprintf(stderr, "fake_nccl: rank %d of %d: operation %d waited %.0f s for the other ranks "
              "(FAKE_NCCL_TIMEOUT_S) or could not use %s\n", c->rank + 1, c->nranks, (int)o->kind,
              timeout_s, c->dir);
    c->async_error = ncclRemoteError;
  }
  c->queued--;
  pthread_cond_broadcast(&c->idle);
  pthread_mutex_unlock(&c->mu);
  free(o);
}

static bool reachable(const void *p, size_t n) {
  return n == 0 || drv_reachable((CUdeviceptr)(uintptr_t)p, n);
}

static bool overlaps(const void *a, size_t na, const void *b, size_t nb) {
  const char *p = a, *q = b;
  return na > 0 && nb > 0 && p < q + nb && q < p + na;
}

/* Check o as NCCL does, then queue it on stream with the comm's context
** current (as NCCL makes its device current for the call). */
static ncclResult_t submit(op *o, cudaStream_t stream) {
  ncclComm_t c = o->comm;
  if (!comm_ok(c)) return ncclInvalidArgument;
  if ((int)o->type < 0 || (int)o->type >= NTYPES) return ncclInvalidArgument;
  bool reduces = o->kind == K_ALLREDUCE || o->kind == K_REDUCE || o->kind == K_REDUCE_SCATTER;
  if (reduces && ((int)o->redop < 0 || (int)o->redop >= (int)ncclNumOps)) return ncclInvalidArgument;
  if ((o->kind == K_BROADCAST || o->kind == K_REDUCE || o->kind == K_SEND || o->kind == K_RECV) &&
      (o->root < 0 || o->root >= c->nranks))
    return ncclInvalidArgument;
  size_t esz = type_sizes[o->type], bytes = o->count * esz, n = (size_t)c->nranks;
  size_t send_bytes = o->kind == K_REDUCE_SCATTER ? bytes * n : bytes;
  size_t recv_bytes = o->kind == K_ALLGATHER ? bytes * n : bytes;
  bool sends = o->kind != K_RECV && (o->kind != K_BROADCAST || c->rank == o->root);
  bool receives = o->kind != K_SEND && (o->kind != K_REDUCE || c->rank == o->root);
  CUcontext popped;
  if (drv_ctx_push(c->ctx) != CUDA_SUCCESS) return ncclUnhandledCudaError;
  ncclResult_t r = ncclSuccess;
  if ((sends && (o->send == NULL || !reachable(o->send, send_bytes))) ||
      (receives && (o->recv == NULL || !reachable(o->recv, recv_bytes)))) {
    fprintf(stderr, "fake_nccl: a buffer is not memory of the communicator's device\n");
    r = ncclInvalidArgument;
  } else if (sends && receives && o->send != o->recv) {
    /* in place is the one overlap allowed: allgather's send buffer is its
    ** block of recv, reduce_scatter's recv its block of send */
    const char *s = o->send, *d = o->recv;
    bool in_place = (o->kind == K_ALLGATHER && s == d + bytes * (size_t)c->rank) ||
                    (o->kind == K_REDUCE_SCATTER && d == s + bytes * (size_t)c->rank);
    if (!in_place && overlaps(s, send_bytes, d, recv_bytes)) {
      fprintf(stderr, "fake_nccl: send and receive buffers overlap, not in place\n");
      r = ncclInvalidArgument;
    }
  }
  if (r == ncclSuccess && o->count > 0) {
    pthread_mutex_lock(&c->mu);
    c->queued++;
    pthread_mutex_unlock(&c->mu);
    if (drv_launch_host_func((CUstream)stream, host_fn, o) != CUDA_SUCCESS) {
      pthread_mutex_lock(&c->mu);
      c->queued--;
      pthread_mutex_unlock(&c->mu);
      r = ncclUnhandledCudaError;
    } else {
      o = NULL;   /* the host function frees it */
    }
  }
  drv_ctx_pop(&popped);
  free(o);
  return r;
}

static const char *type_name(ncclDataType_t t) {
  return (int)t >= 0 && (int)t < NTYPES ? type_names[t] : "?type";
}
static const char *op_name(ncclRedOp_t op) {
  return (int)op >= 0 && (int)op < (int)ncclNumOps ? op_names[op] : "?op";
}
static const char *where(cudaStream_t s) {
  return s == NULL || (CUstream)s == CU_STREAM_LEGACY ? "@legacy" : "@stream";
}
static int rank1(ncclComm_t c) { return comm_ok(c) ? c->rank + 1 : 0; }
static int size_of(ncclComm_t c) { return comm_ok(c) ? c->nranks : 0; }

/* A new operation, or NULL (and *r) */
static op *new_op(enum kind kind, ncclComm_t comm, const void *send, void *recv, size_t count,
                  ncclDataType_t type, ncclRedOp_t redop, int root, ncclResult_t *r) {
  op *o = calloc(1, sizeof *o);
  if (o == NULL) {
    *r = ncclSystemError;
    return NULL;
  }
  *o = (op){kind, comm, send, recv, count, type, redop, root, 0, ncclSuccess};
  if (comm_ok(comm)) {
    pthread_mutex_lock(&comm->mu);
    if (kind == K_SEND && root >= 0 && root < comm->nranks) o->seq = comm->sent[root]++;
    else if (kind == K_RECV && root >= 0 && root < comm->nranks) o->seq = comm->received[root]++;
    else if (kind != K_SEND && kind != K_RECV) o->seq = comm->seq++;
    pthread_mutex_unlock(&comm->mu);
  }
  return o;
}

static const char *const kind_calls[] = {"ncclAllReduce", "ncclBroadcast", "ncclReduce",
                                         "ncclAllGather", "ncclReduceScatter", "ncclSend", "ncclRecv"};

static ncclResult_t queue(enum kind kind, ncclComm_t comm, const void *send, void *recv,
                          size_t count, ncclDataType_t type, ncclRedOp_t redop, int root,
                          cudaStream_t stream) {
  ncclResult_t r = ncclSuccess;
  op *o = new_op(kind, comm, send, recv, count, type, redop, root, &r);
  if (o && injected(&async_fail, kind_calls[kind])) o->async = async_fail.result;
  return o ? submit(o, stream) : r;
}

API ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                               ncclDataType_t datatype, ncclRedOp_t op_, ncclComm_t comm,
                               cudaStream_t stream) {
  ncclResult_t r = enter(__func__, "rank=%d/%d count=%zu %s %s%s %s", rank1(comm), size_of(comm),
                         count, type_name(datatype), op_name(op_),
                         sendbuff == recvbuff ? " inplace" : "", where(stream));
  if (r) return leave(r);
  return leave(queue(K_ALLREDUCE, comm, sendbuff, recvbuff, count, datatype, op_, 0, stream));
}

API ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                               ncclDataType_t datatype, int root, ncclComm_t comm,
                               cudaStream_t stream) {
  ncclResult_t r = enter(__func__, "rank=%d/%d count=%zu %s root=%d%s %s", rank1(comm),
                         size_of(comm), count, type_name(datatype), root,
                         sendbuff == recvbuff ? " inplace" : "", where(stream));
  if (r) return leave(r);
  return leave(queue(K_BROADCAST, comm, sendbuff, recvbuff, count, datatype, ncclSum, root, stream));
}

API ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
                            ncclDataType_t datatype, ncclRedOp_t op_, int root, ncclComm_t comm,
                            cudaStream_t stream) {
  ncclResult_t r = enter(__func__, "rank=%d/%d count=%zu %s %s root=%d%s %s", rank1(comm),
                         size_of(comm), count, type_name(datatype), op_name(op_), root,
                         sendbuff == recvbuff ? " inplace" : "", where(stream));
  if (r) return leave(r);
  return leave(queue(K_REDUCE, comm, sendbuff, recvbuff, count, datatype, op_, root, stream));
}

API ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                               ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t r = enter(__func__, "rank=%d/%d sendcount=%zu %s %s", rank1(comm), size_of(comm),
                         sendcount, type_name(datatype), where(stream));
  if (r) return leave(r);
  return leave(queue(K_ALLGATHER, comm, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, stream));
}

API ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                   ncclDataType_t datatype, ncclRedOp_t op_, ncclComm_t comm,
                                   cudaStream_t stream) {
  ncclResult_t r = enter(__func__, "rank=%d/%d recvcount=%zu %s %s %s", rank1(comm),
                         size_of(comm), recvcount, type_name(datatype), op_name(op_),
                         where(stream));
  if (r) return leave(r);
  return leave(queue(K_REDUCE_SCATTER, comm, sendbuff, recvbuff, recvcount, datatype, op_, 0, stream));
}

API ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                          ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t r = enter(__func__, "rank=%d/%d count=%zu %s peer=%d %s", rank1(comm),
                         size_of(comm), count, type_name(datatype), peer, where(stream));
  if (r) return leave(r);
  return leave(queue(K_SEND, comm, sendbuff, NULL, count, datatype, ncclSum, peer, stream));
}

API ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                          ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t r = enter(__func__, "rank=%d/%d count=%zu %s peer=%d %s", rank1(comm),
                         size_of(comm), count, type_name(datatype), peer, where(stream));
  if (r) return leave(r);
  return leave(queue(K_RECV, comm, NULL, recvbuff, count, datatype, ncclSum, peer, stream));
}
