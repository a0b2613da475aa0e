/*
** nccl_engine: luacuda.dist's NCCL engine (nccl_engine.h says what it is). NCCL's types
** and values come from the toolkit's nccl.h; its functions from dlopen,
** like the driver's in src/backend/cuda/api.c. The driver is the one
** luacuda opened ($LUACUDA_LIBCUDA, else libcuda.so.1), found already
** loaded: the communicator's device context is made current around each
** NCCL call and wait (cuCtxPushCurrent / cuCtxPopCurrent), so the thread's
** current context is left as it was found.
**
** Errors follow NCCL's user guide ("Error handling and communicator
** abort"): an operation that meets an asynchronous error (a peer gone, the
** network) may never complete, so a wait polls the stream
** (cuStreamQuery) and ncclCommGetAsyncError instead of blocking in
** cuStreamSynchronize, and a communicator with such an error is aborted
** (ncclCommAbort), never destroyed: ncclCommDestroy would wait for those
** operations forever.
*/
#include "nccl_engine.h"

#include <stdio.h>
#include <string.h>

#ifndef LUACUDA_NCCL

bool lc_nccl_load(char *why, size_t len) {
  snprintf(why, len, "luacuda.dist was built without NCCL (no nccl.h in the CUDA toolkit)");
  return false;
}
bool lc_nccl_takes(lc_nccl_kind kind, const char *dtype) {
  (void)kind;
  (void)dtype;
  return false;
}
bool lc_nccl_unique_id(void *id, char *err, size_t len) {
  (void)id;
  return lc_nccl_load(err, len);
}
lc_nccl *lc_nccl_init(int nranks, const void *id, int rank, int device, char *err, size_t len) {
  (void)nranks, (void)id, (void)rank, (void)device;
  lc_nccl_load(err, len);
  return NULL;
}
void lc_nccl_free(lc_nccl *n) { (void)n; }
void lc_nccl_abort(lc_nccl *n, const char *why) { (void)n, (void)why; }
bool lc_nccl_queue(lc_nccl *n, const lc_nccl_call *call, void *stream, char *err, size_t len) {
  (void)n, (void)call, (void)stream;
  return lc_nccl_load(err, len);
}
bool lc_nccl_wait(lc_nccl *n, void *stream, char *err, size_t len) {
  (void)n, (void)stream;
  return lc_nccl_load(err, len);
}

#else

#include <cuda.h>
#include <dlfcn.h>
#include <nccl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

_Static_assert(LC_NCCL_ID_BYTES == NCCL_UNIQUE_ID_BYTES, "NCCL's unique id");

static struct {
  ncclResult_t (*GetUniqueId)(ncclUniqueId *);
  ncclResult_t (*CommInitRank)(ncclComm_t *, int, ncclUniqueId, int);
  ncclResult_t (*CommDestroy)(ncclComm_t);
  ncclResult_t (*CommAbort)(ncclComm_t);
  ncclResult_t (*CommGetAsyncError)(ncclComm_t, ncclResult_t *);
  const char *(*GetErrorString)(ncclResult_t);
  ncclResult_t (*AllReduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                            cudaStream_t);
  ncclResult_t (*Broadcast)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t,
                            cudaStream_t);
  ncclResult_t (*Reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int,
                         ncclComm_t, cudaStream_t);
  ncclResult_t (*AllGather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
                            cudaStream_t);
  ncclResult_t (*ReduceScatter)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                ncclComm_t, cudaStream_t);
  ncclResult_t (*Send)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*Recv)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  /* the driver's */
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*PrimaryCtxRelease)(CUdevice);
  CUresult (*CtxPush)(CUcontext);
  CUresult (*CtxPop)(CUcontext *);
  CUresult (*StreamQuery)(CUstream);
  CUresult (*GetErrorName)(CUresult, const char **);
} fn;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;
static char load_why[256];

typedef struct entry { void **slot; const char *name; } entry;
#define ENTRY(field, name) {(void **)&fn.field, name}

static bool resolve(void *h, const char *lib, const entry *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    void *p = dlsym(h, t[i].name);
    if (p == NULL) {
      snprintf(load_why, sizeof load_why, "%s has no %s", lib, t[i].name);
      return false;
    }
    memcpy(t[i].slot, &p, sizeof p);
  }
  return true;
}

static void load(void) {
  const char *path = getenv("LUACUDA_LIBNCCL");
  if (path && strcmp(path, "0") == 0) {
    snprintf(load_why, sizeof load_why, "LUACUDA_LIBNCCL=0 turns NCCL off");
    return;
  }
  if (path == NULL || *path == '\0') path = "libnccl.so.2";
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    const char *e = dlerror();
    snprintf(load_why, sizeof load_why, "cannot load NCCL: %.200s", e ? e : path);
    return;
  }
  static const entry nccl_syms[] = {
    ENTRY(GetUniqueId, "ncclGetUniqueId"), ENTRY(CommInitRank, "ncclCommInitRank"),
    ENTRY(CommDestroy, "ncclCommDestroy"), ENTRY(CommAbort, "ncclCommAbort"),
    ENTRY(CommGetAsyncError, "ncclCommGetAsyncError"),
    ENTRY(GetErrorString, "ncclGetErrorString"), ENTRY(AllReduce, "ncclAllReduce"),
    ENTRY(Broadcast, "ncclBroadcast"), ENTRY(Reduce, "ncclReduce"),
    ENTRY(AllGather, "ncclAllGather"), ENTRY(ReduceScatter, "ncclReduceScatter"),
    ENTRY(Send, "ncclSend"), ENTRY(Recv, "ncclRecv"),
  };
  if (!resolve(h, path, nccl_syms, sizeof nccl_syms / sizeof nccl_syms[0])) return;
  const char *drv = getenv("LUACUDA_LIBCUDA");
  if (drv == NULL || *drv == '\0') drv = "libcuda.so.1";
  void *d = dlopen(drv, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);   /* luacuda's, loaded already */
  if (d == NULL) {
    snprintf(load_why, sizeof load_why, "the CUDA driver %.200s is not loaded", drv);
    return;
  }
  static const entry drv_syms[] = {
    ENTRY(DeviceGet, "cuDeviceGet"), ENTRY(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    ENTRY(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
    ENTRY(CtxPush, "cuCtxPushCurrent_v2"), ENTRY(CtxPop, "cuCtxPopCurrent_v2"),
    ENTRY(StreamQuery, "cuStreamQuery"), ENTRY(GetErrorName, "cuGetErrorName"),
  };
  loaded = resolve(d, drv, drv_syms, sizeof drv_syms / sizeof drv_syms[0]);
}

bool lc_nccl_load(char *why, size_t len) {
  pthread_once(&once, load);
  if (!loaded) snprintf(why, len, "%s", load_why);
  return loaded;
}

struct lc_nccl {
  ncclComm_t comm;       /* NULL once aborted */
  CUdevice dev;
  CUcontext ctx;         /* the device's primary context, retained */
  char why[200];         /* why it was aborted */
};

static bool nccl_ok(ncclResult_t r, const char *call, char *err, size_t len) {
  if (r == ncclSuccess) return true;
  snprintf(err, len, "NCCL call %s failed: %s (%d)", call, fn.GetErrorString(r), (int)r);
  return false;
}

static bool cu_ok(CUresult r, const char *call, char *err, size_t len) {
  if (r == CUDA_SUCCESS) return true;
  const char *name = NULL;
  if (fn.GetErrorName(r, &name) != CUDA_SUCCESS || name == NULL) name = "an unknown error";
  snprintf(err, len, "CUDA call %s failed: %s", call, name);
  return false;
}

/* n's context made current; false and a message */
static bool push(const lc_nccl *n, char *err, size_t len) {
  return cu_ok(fn.CtxPush(n->ctx), "cuCtxPushCurrent", err, len);
}

/* The context pushed taken off again, whether the work between went well
** (ok) or not: ok, unless the pop fails, which becomes the message when
** there was none. */
static bool pop(bool ok, char *err, size_t len) {
  CUcontext popped;
  CUresult r = fn.CtxPop(&popped);
  return ok && cu_ok(r, "cuCtxPopCurrent", err, len);
}

/* false and a message once n was aborted: its communicator is gone */
static bool usable(const lc_nccl *n, char *err, size_t len) {
  if (n->comm != NULL) return true;
  snprintf(err, len, "NCCL's communicator was aborted after %s", n->why);
  return false;
}

void lc_nccl_abort(lc_nccl *n, const char *why) {
  if (n == NULL || n->comm == NULL) return;
  fn.CommAbort(n->comm);
  n->comm = NULL;
  snprintf(n->why, sizeof n->why, "%s", why);
}

bool lc_nccl_takes(lc_nccl_kind kind, const char *dtype) {
  bool reduces = kind == LC_NCCL_ALLREDUCE || kind == LC_NCCL_REDUCE ||
                 kind == LC_NCCL_REDUCE_SCATTER;
  if (!reduces) return true;          /* moved as bytes where NCCL has no such type */
  static const char *const no[] = {"int16", "uint16", "record"};
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
    if (strcmp(dtype, no[i]) == 0) return false;
  return true;
}

bool lc_nccl_unique_id(void *id, char *err, size_t len) {
  if (!lc_nccl_load(err, len)) return false;
  ncclUniqueId u;
  if (!nccl_ok(fn.GetUniqueId(&u), "ncclGetUniqueId", err, len)) return false;
  memcpy(id, &u, sizeof u);
  return true;
}

lc_nccl *lc_nccl_init(int nranks, const void *id, int rank, int device, char *err, size_t len) {
  if (!lc_nccl_load(err, len)) return NULL;
  lc_nccl *n = calloc(1, sizeof *n);
  if (n == NULL) {
    snprintf(err, len, "out of host memory");
    return NULL;
  }
  if (!cu_ok(fn.DeviceGet(&n->dev, device), "cuDeviceGet", err, len) ||
      !cu_ok(fn.PrimaryCtxRetain(&n->ctx, n->dev), "cuDevicePrimaryCtxRetain", err, len)) {
    free(n);
    return NULL;
  }
  ncclUniqueId u;
  memcpy(&u, id, sizeof u);
  bool ok = push(n, err, len);
  if (ok) {
    bool made = nccl_ok(fn.CommInitRank(&n->comm, nranks, u, rank), "ncclCommInitRank", err, len);
    ok = pop(made, err, len);
    if (made && !ok) fn.CommAbort(n->comm);   /* made, but this rank reports a failure: not kept */
  }
  if (!ok) {
    fn.PrimaryCtxRelease(n->dev);
    free(n);
    return NULL;
  }
  return n;
}

/* A communicator with an asynchronous error (found now, or by a wait,
** which aborted it already) is aborted, not destroyed. NCCL makes its
** device current itself for both; the push is for good measure. */
void lc_nccl_free(lc_nccl *n) {
  if (n == NULL) return;
  if (n->comm != NULL) {
    bool pushed = fn.CtxPush(n->ctx) == CUDA_SUCCESS;
    ncclResult_t async = ncclSuccess;
    if (fn.CommGetAsyncError(n->comm, &async) != ncclSuccess || async != ncclSuccess)
      fn.CommAbort(n->comm);
    else
      fn.CommDestroy(n->comm);
    CUcontext popped;
    if (pushed) fn.CtxPop(&popped);
  }
  fn.PrimaryCtxRelease(n->dev);
  free(n);
}

/* NCCL's type for luacuda's dtype; bytes (uint8, count scaled) where NCCL
** has none, for the calls that move data without reducing it. Booleans
** are bytes 0 and 1: their sum and max are or (max), prod and min and
** (min), as the MPI engine's. */
static ncclDataType_t nccl_type(const lc_nccl_call *c, size_t *count) {
  static const struct { const char *name; ncclDataType_t t; } types[] = {
    {"int8", ncclInt8}, {"uint8", ncclUint8}, {"bool", ncclUint8}, {"int32", ncclInt32},
    {"uint32", ncclUint32}, {"int64", ncclInt64}, {"uint64", ncclUint64},
    {"float16", ncclFloat16}, {"bfloat16", ncclBfloat16}, {"float32", ncclFloat32},
    {"float64", ncclFloat64},
  };
  *count = (size_t)c->count;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strcmp(c->dtype, types[i].name) == 0) return types[i].t;
  *count = (size_t)(c->count * c->itemsize);
  return ncclUint8;
}

static ncclRedOp_t nccl_op(const lc_nccl_call *c) {
  bool boolean = strcmp(c->dtype, "bool") == 0;
  switch (c->op) {
  case LC_NCCL_SUM: return boolean ? ncclMax : ncclSum;
  case LC_NCCL_PROD: return boolean ? ncclMin : ncclProd;
  case LC_NCCL_MIN: return ncclMin;
  default: return ncclMax;
  }
}

bool lc_nccl_queue(lc_nccl *n, const lc_nccl_call *c, void *stream, char *err, size_t len) {
  size_t count;
  ncclDataType_t t = nccl_type(c, &count);
  ncclRedOp_t op = nccl_op(c);
  cudaStream_t s = stream;
  if (!usable(n, err, len) || !push(n, err, len)) return false;
  ncclResult_t r;
  const char *call;
  switch (c->kind) {
  case LC_NCCL_ALLREDUCE:
    call = "ncclAllReduce";
    r = fn.AllReduce(c->send, c->recv, count, t, op, n->comm, s);
    break;
  case LC_NCCL_BROADCAST:
    call = "ncclBroadcast";
    r = fn.Broadcast(c->send, c->recv, count, t, c->root, n->comm, s);
    break;
  case LC_NCCL_REDUCE:
    call = "ncclReduce";
    r = fn.Reduce(c->send, c->recv, count, t, op, c->root, n->comm, s);
    break;
  case LC_NCCL_ALLGATHER:
    call = "ncclAllGather";
    r = fn.AllGather(c->send, c->recv, count, t, n->comm, s);
    break;
  case LC_NCCL_REDUCE_SCATTER:
    call = "ncclReduceScatter";
    r = fn.ReduceScatter(c->send, c->recv, count, t, op, n->comm, s);
    break;
  case LC_NCCL_SEND:
    call = "ncclSend";
    r = fn.Send(c->send, count, t, c->root, n->comm, s);
    break;
  default:
    call = "ncclRecv";
    r = fn.Recv(c->recv, count, t, c->root, n->comm, s);
    break;
  }
  return pop(nccl_ok(r, call, err, len), err, len);
}

/* Between two looks at the stream: the CPU left to others (NCCL's own
** threads among them), for longer as the wait goes on. */
static void pause_polling(unsigned looks) {
  if (looks < 100) {
    sched_yield();
    return;
  }
  struct timespec ts = {0, looks < 1000 ? 20000 : 200000};
  nanosleep(&ts, NULL);
}

/* NCCL's way to wait: the stream polled, and the communicator's
** asynchronous error with it; on such an error the communicator is aborted
** (its operations may never complete), also when the stream did. */
bool lc_nccl_wait(lc_nccl *n, void *stream, char *err, size_t len) {
  if (!usable(n, err, len) || !push(n, err, len)) return false;
  bool ok = true;
  for (unsigned looks = 0;; looks++) {
    CUresult r = fn.StreamQuery(stream);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY) {
      ok = cu_ok(r, "cuStreamQuery", err, len);
      break;
    }
    ncclResult_t async = ncclSuccess;
    if (!nccl_ok(fn.CommGetAsyncError(n->comm, &async), "ncclCommGetAsyncError", err, len)) {
      ok = false;
      break;
    }
    if (async != ncclSuccess) {
      char why[200];
      snprintf(why, sizeof why, "an asynchronous error (%s, %d)", fn.GetErrorString(async),
               (int)async);
      lc_nccl_abort(n, why);
      ok = usable(n, err, len);
      break;
    }
    if (r == CUDA_SUCCESS) break;
    pause_polling(looks);
  }
  return pop(ok, err, len);
}

#endif
