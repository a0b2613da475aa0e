/*
** context: the driver (api.c opens it), its devices and their primary
** contexts, made current on whichever thread calls in for as long as the
** call lasts (the scope, below), and the state of errors. A sticky error (an illegal address, a failed launch...) leaves
** the context unusable: every later call fails saying so and naming the
** first error, and finalizers free nothing (the driver cannot).
*/
#include "cuda.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi.h"          /* LC_SHARED_DEFAULT */
#include "common.h"
#include "nvrtc.h"

lc_cuda_device *lc_cuda_devices;
static int ndevices;
_Thread_local int lc_cuda_current;
pthread_mutex_t lc_cuda_mu = PTHREAD_MUTEX_INITIALIZER;     /* retains, library */
int lc_cuda_driver_version;                                 /* written once, by lc_cuda_init */

/* ---- errors ------------------------------------------------------------ */

atomic_bool lc_cuda_broken;
static pthread_mutex_t broken_mu = PTHREAD_MUTEX_INITIALIZER;
static char first_error[LC_ERRLEN];

/* Is r an error that leaves the context unusable? */
static bool sticky(CUresult r) {
  switch (r) {
    case 214: case 220: case 226:   /* ECC_UNCORRECTABLE, NVLINK_UNCORRECTABLE, CONTAINED */
    case 700: case 702:             /* ILLEGAL_ADDRESS, LAUNCH_TIMEOUT */
    case 709: case 710:             /* CONTEXT_IS_DESTROYED, ASSERT */
    case 714: case 715: case 716:   /* HARDWARE_STACK_ERROR, ILLEGAL_INSTRUCTION, MISALIGNED_ADDRESS */
    case 717: case 718: case 719:   /* INVALID_ADDRESS_SPACE, INVALID_PC, LAUNCH_FAILED */
    case 721:                       /* TENSOR_MEMORY_LEAK */
    /* the process must be started again, the driver's documentation says */
    case 810: case 911:             /* MPS_CLIENT_TERMINATED, EXTERNAL_DEVICE */
      return true;
    default:
      return false;
  }
}

int lc_cuda_check(CUresult r, const char *call, char *err) {
  if (r == CUDA_SUCCESS) return LC_OK;
  char buf[32];
  const char *name = lc_cu_error_name(r, buf);
  if (err) lc_errf(err, "%s: %s", call, name);
  if (sticky(r)) {
    pthread_mutex_lock(&broken_mu);
    if (!atomic_load(&lc_cuda_broken)) {
      snprintf(first_error, sizeof first_error, "%s: %s", call, name);
      atomic_store(&lc_cuda_broken, true);     /* after the message: readers see both */
    }
    pthread_mutex_unlock(&broken_mu);
  }
  return r == CUDA_ERROR_OUT_OF_MEMORY ? LC_ENOMEM : LC_EFAIL;
}

/* ---- the thread's current context ---------------------------------------------
** The host program owns the thread's current context: luacuda makes its own
** current for each backend call (each slot of the table, backend.c, runs in
** a scope) and puts the host's back when the outermost one returns. The
** first driver call of a scope asks the driver what is current (one
** cuCtxGetCurrent, a read of the driver's thread-local state) and:
** - ours already: nothing more;
** - none: makes ours current and leaves it so (as the CUDA runtime does);
** - another: pushes ours over it, popped when the scope ends.
** Within a scope, select_device's new context replaces ours (the top of the
** thread's stack), and the scope's end restores what it found. */

static _Thread_local int scope_depth;        /* backend slots running on this thread */
static _Thread_local bool scope_known;       /* the outermost one has asked the driver */
static _Thread_local CUcontext scope_found;  /* what was current then */
static _Thread_local bool scope_pushed;      /* ours pushed over scope_found */
static _Thread_local CUcontext thread_ctx;   /* current on this thread, while scope_known */

void lc_cuda_scope_begin(void) { scope_depth++; }

void lc_cuda_scope_end(void) {
  if (--scope_depth > 0 || !scope_known) return;
  scope_known = false;
  if (scope_pushed) {
    CUcontext popped;
    scope_pushed = false;
    lc_cu.CtxPopCurrent(&popped);             /* scope_found is current again */
  } else if (scope_found != NULL && thread_ctx != scope_found) {
    lc_cu.CtxSetCurrent(scope_found);         /* select_device changed it */
  }
}

int lc_cuda_enter(char *err) {
  if (atomic_load(&lc_cuda_broken)) {
    return lc_fail(err, LC_EFAIL, "the CUDA context is unusable after an earlier error (%.300s); "
                   "start a new process", first_error);
  }
  CUcontext ctx = lc_cuda_devices[lc_cuda_current].ctx;
  if (!scope_known) {
    CUcontext found = NULL;
    int rc = lc_cuda_check(lc_cu.CtxGetCurrent(&found), "cuCtxGetCurrent", err);
    if (rc != LC_OK) return rc;
    if (found != ctx) {
      /* outside any scope (no caller does that) a push could never be popped */
      bool push = found != NULL && scope_depth > 0;
      rc = push ? lc_cuda_check(lc_cu.CtxPushCurrent(ctx), "cuCtxPushCurrent", err)
                : lc_cuda_check(lc_cu.CtxSetCurrent(ctx), "cuCtxSetCurrent", err);
      if (rc != LC_OK) return rc;
      scope_pushed = push;
    }
    scope_found = found;
    thread_ctx = ctx;
    scope_known = scope_depth > 0;
    return LC_OK;
  }
  if (thread_ctx != ctx) {                    /* select_device, within this scope */
    int rc = lc_cuda_check(lc_cu.CtxSetCurrent(ctx), "cuCtxSetCurrent", err);
    if (rc != LC_OK) return rc;
    thread_ctx = ctx;
  }
  return LC_OK;
}

/* For finalizers: may the driver be called? (never reports) */
bool lc_cuda_enter_quietly(void) {
  char err[LC_ERRLEN];
  return lc_cuda_enter(err) == LC_OK;
}

/* ---- devices ------------------------------------------------------------------ */

/* Retain device i's primary context and set up its pool (under mu). */
static int activate(int i, char *err) {
  lc_cuda_device *d = &lc_cuda_devices[i];
  if (d->ctx) return LC_OK;
  CUcontext ctx;
  /* retained, not made current: lc_cuda_enter does that, call by call */
  int rc = lc_cuda_check(lc_cu.DevicePrimaryCtxRetain(&ctx, d->dev), "cuDevicePrimaryCtxRetain", err);
  int uva = 0, pools = 0;
  if (rc == LC_OK)
    rc = lc_cuda_check(lc_cu.DeviceGetAttribute(&uva, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING,
                                                d->dev), "cuDeviceGetAttribute", err);
  if (rc == LC_OK && !uva) {
    /* an array has one address for the host and the kernels */
    lc_errf(err, "device %d has no unified addressing", i + 1);
    rc = LC_ENOTSUP;
  }
  if (rc != LC_OK) return rc;
  d->pool = NULL;
  if (lc_cu.DeviceGetAttribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, d->dev) ==
          CUDA_SUCCESS && pools) {
    /* a pool of our own: the default pool is the host program's (its
    ** cudaMallocAsync), whose settings stay as it set them. Never destroyed:
    ** it lives as long as the primary context we retain. */
    lc_cu_mempool_props props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = i;
    CUmemoryPool pool;
    if (lc_cu.MemPoolCreate(&pool, &props) == CUDA_SUCCESS) {
      /* keep freed memory in the pool: allocation then costs microseconds
      ** (any call short of device memory trims it: lc_cuda_release_idle).
      ** Where that fails the pool still works, giving back at each
      ** synchronisation. */
      uint64_t threshold = UINT64_MAX;
      lc_cu.MemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold);
      d->pool = pool;
    }
  }
  d->ctx = ctx;
  return LC_OK;
}

int lc_cuda_init(char *why, size_t len) {
  char err[LC_ERRLEN];
  if (lc_cu_load(err) != 0) {
    snprintf(why, len, "%s", err);
    return -1;
  }
  CUresult r = lc_cu.Init(0);
  if (r != CUDA_SUCCESS) {
    char buf[32];
    snprintf(why, len, "cuInit: %s%s", lc_cu_error_name(r, buf),
             r == CUDA_ERROR_STUB_LIBRARY ? " (the CUDA toolkit's stub library, not a driver)" :
             r == CUDA_ERROR_NO_DEVICE ? " (no CUDA device)" : "");
    return -1;
  }
  /* NVRTC is chosen to suit the driver (nvrtc.h) */
  int version = 0;
  if (lc_cu.DriverGetVersion(&version) == CUDA_SUCCESS && version > 0) {
    lc_cuda_driver_version = version;
    lc_nvrtc_set_driver(version);
  }
  int n = 0;
  if (lc_cuda_check(lc_cu.DeviceGetCount(&n), "cuDeviceGetCount", err) != LC_OK) {
    snprintf(why, len, "%s", err);
    return -1;
  }
  if (n <= 0) {
    snprintf(why, len, "the CUDA driver sees no device");
    return -1;
  }
  lc_cuda_devices = calloc((size_t)n, sizeof *lc_cuda_devices);
  if (lc_cuda_devices == NULL) {
    snprintf(why, len, "out of host memory");
    return -1;
  }
  for (int i = 0; i < n; i++) {
    lc_cuda_device *d = &lc_cuda_devices[i];
    if (lc_cuda_check(lc_cu.DeviceGet(&d->dev, i), "cuDeviceGet", err) != LC_OK ||
        lc_cuda_check(lc_cu.DeviceGetAttribute(&d->cc_major,
                        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev),
                      "cuDeviceGetAttribute", err) != LC_OK ||
        lc_cuda_check(lc_cu.DeviceGetAttribute(&d->cc_minor,
                        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev),
                      "cuDeviceGetAttribute", err) != LC_OK) {
      snprintf(why, len, "%s", err);
      return -1;
    }
    /* a driver that cannot tell: the limits every device keeps */
    int optin = 0, concurrent = 0;
    if (lc_cu.DeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                 d->dev) != CUDA_SUCCESS || optin < (int)LC_SHARED_DEFAULT)
      optin = (int)LC_SHARED_DEFAULT;
    if (lc_cu.DeviceGetAttribute(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
                                 d->dev) != CUDA_SUCCESS)
      concurrent = 0;
    d->shared_optin = (unsigned)optin;
    d->concurrent_managed = concurrent != 0;
  }
  ndevices = n;
  lc_cuda_default.s = LC_CU_STREAM_LEGACY;
  if (activate(0, err) != LC_OK) {
    snprintf(why, len, "%s", err);
    return -1;
  }
  return 0;
}

int lc_cuda_device_count(void) { return ndevices; }
int lc_cuda_current_device(void) { return lc_cuda_current; }

int lc_cuda_device_info(int i, lc_device_info *info, char *err) {
  if (i < 0 || i >= ndevices) {
    return lc_fail(err, LC_EFAIL, "no device %d (there are %d)", i + 1, ndevices);
  }
  const lc_cuda_device *d = &lc_cuda_devices[i];
  int sms = 0;
  int rc = lc_cuda_check(lc_cu.DeviceGetName(info->name, (int)sizeof info->name, d->dev),
                         "cuDeviceGetName", err);
  if (rc == LC_OK)
    rc = lc_cuda_check(lc_cu.DeviceTotalMem(&info->memory, d->dev), "cuDeviceTotalMem", err);
  if (rc == LC_OK)
    rc = lc_cuda_check(lc_cu.DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                                d->dev), "cuDeviceGetAttribute", err);
  info->name[sizeof info->name - 1] = '\0';
  info->cc_major = d->cc_major;
  info->cc_minor = d->cc_minor;
  info->multiprocessors = sms;
  info->max_shared_per_block = d->shared_optin;
  return rc;
}

int lc_cuda_select_device(int i, char *err) {
  if (i < 0 || i >= ndevices) {
    return lc_fail(err, LC_EFAIL, "no device %d (there %s %d)", i + 1, ndevices == 1 ? "is" : "are",
                   ndevices);
  }
  pthread_mutex_lock(&lc_cuda_mu);
  int rc = activate(i, err);
  if (rc == LC_OK) lc_cuda_current = i;
  pthread_mutex_unlock(&lc_cuda_mu);
  return rc;
}
