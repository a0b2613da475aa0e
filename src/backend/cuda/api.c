/*
** api: opening the CUDA driver with dlopen and resolving the table of
** functions luacuda calls (see api.h).
*/
#include "api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"   /* LC_ERRLEN */

lc_cu_api lc_cu;

_Static_assert(sizeof(void *) != 8 || sizeof(lc_cu_mempool_props) == 88,
               "lc_cu_mempool_props is cuda.h's CUmemPoolProps");
_Static_assert(sizeof(lc_cu_mem_access_desc) == 12, "lc_cu_mem_access_desc is CUmemAccessDesc");

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int load_rc;
static char load_err[LC_ERRLEN];

/* One entry of the table: where the pointer goes, the exported names to
** try in order (the second, when given, is an older spelling with the same
** parameters). */
typedef struct sym {
  void *slot;
  const char *name, *fallback;
  bool optional;          /* newer than the oldest driver we take: may be missing */
} sym;

#define S(field, name) {&lc_cu.field, name, NULL, false}

static void load(void) {
  const char *path = getenv("LUACUDA_LIBCUDA");
  if (path == NULL || *path == '\0') path = "libcuda.so.1";
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    const char *e = dlerror();
    snprintf(load_err, sizeof load_err, "%.480s", e ? e : path);
    load_rc = -1;
    return;
  }
  const sym syms[] = {
    S(Init, "cuInit"),
    S(GetErrorName, "cuGetErrorName"),
    S(DriverGetVersion, "cuDriverGetVersion"),
    S(DeviceGetCount, "cuDeviceGetCount"),
    S(DeviceGet, "cuDeviceGet"),
    S(DeviceGetName, "cuDeviceGetName"),
    S(DeviceGetAttribute, "cuDeviceGetAttribute"),
    S(DeviceTotalMem, "cuDeviceTotalMem_v2"),
    S(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    S(CtxSetCurrent, "cuCtxSetCurrent"),
    S(CtxGetCurrent, "cuCtxGetCurrent"),
    S(CtxPushCurrent, "cuCtxPushCurrent_v2"),
    S(CtxPopCurrent, "cuCtxPopCurrent_v2"),
    S(CtxSynchronize, "cuCtxSynchronize"),
    S(CtxGetLimit, "cuCtxGetLimit"),
    S(CtxSetLimit, "cuCtxSetLimit"),
    S(MemPoolCreate, "cuMemPoolCreate"),
    S(MemPoolSetAttribute, "cuMemPoolSetAttribute"),
    S(MemPoolGetAttribute, "cuMemPoolGetAttribute"),
    S(MemPoolTrimTo, "cuMemPoolTrimTo"),
    S(MemPoolSetAccess, "cuMemPoolSetAccess"),
    S(MemGetInfo, "cuMemGetInfo_v2"),
    S(MemAlloc, "cuMemAlloc_v2"),
    S(MemFree, "cuMemFree_v2"),
    S(MemAllocFromPoolAsync, "cuMemAllocFromPoolAsync"),
    S(MemFreeAsync, "cuMemFreeAsync"),
    S(MemAllocManaged, "cuMemAllocManaged"),
    S(MemHostAlloc, "cuMemHostAlloc"),
    S(MemFreeHost, "cuMemFreeHost"),
    S(MemHostRegister, "cuMemHostRegister_v2"),
    S(MemHostUnregister, "cuMemHostUnregister"),
    S(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2"),
    S(MemcpyAsync, "cuMemcpyAsync"),
    S(MemcpyPeerAsync, "cuMemcpyPeerAsync"),
    S(DeviceCanAccessPeer, "cuDeviceCanAccessPeer"),
    S(CtxEnablePeerAccess, "cuCtxEnablePeerAccess"),
    S(Memcpy2DAsync, "cuMemcpy2DAsync_v2"),
    S(Memcpy3DAsync, "cuMemcpy3DAsync_v2"),
    S(MemsetD8Async, "cuMemsetD8Async"),
    S(MemsetD16Async, "cuMemsetD16Async"),
    S(MemsetD32Async, "cuMemsetD32Async"),
    S(StreamCreate, "cuStreamCreate"),
    S(StreamDestroy, "cuStreamDestroy_v2"),
    S(StreamGetFlags, "cuStreamGetFlags"),
    S(StreamSynchronize, "cuStreamSynchronize"),
    S(StreamQuery, "cuStreamQuery"),
    S(StreamWaitEvent, "cuStreamWaitEvent"),
    S(EventCreate, "cuEventCreate"),
    S(EventDestroy, "cuEventDestroy_v2"),
    S(EventRecord, "cuEventRecord"),
    S(EventSynchronize, "cuEventSynchronize"),
    S(EventQuery, "cuEventQuery"),
    /* _v2 since CUDA 12.8, same parameters; older drivers have only the first */
    {&lc_cu.EventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime", false},
    S(ModuleLoadDataEx, "cuModuleLoadDataEx"),
    S(ModuleUnload, "cuModuleUnload"),
    S(ModuleGetFunction, "cuModuleGetFunction"),
    S(ModuleGetGlobal, "cuModuleGetGlobal_v2"),
    S(LaunchKernel, "cuLaunchKernel"),
    S(LaunchHostFunc, "cuLaunchHostFunc"),
    S(FuncGetAttribute, "cuFuncGetAttribute"),
    S(FuncSetAttribute, "cuFuncSetAttribute"),
    {&lc_cu.FuncGetParamInfo, "cuFuncGetParamInfo", NULL, true},     /* CUDA 12.4 */
    {&lc_cu.LaunchCooperativeKernel, "cuLaunchCooperativeKernel", NULL, true},   /* CUDA 9 */
    {&lc_cu.OccupancyMaxActiveBlocksPerMultiprocessor,
     "cuOccupancyMaxActiveBlocksPerMultiprocessor", NULL, true},
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    void *f = dlsym(h, syms[i].name);
    if (f == NULL && syms[i].fallback) f = dlsym(h, syms[i].fallback);
    if (f == NULL && syms[i].optional) continue;
    if (f == NULL) {
      snprintf(load_err, sizeof load_err,
               "%.300s has no function %s (not a CUDA driver, or one too old)", path,
               syms[i].name);
      load_rc = -1;
      memset(&lc_cu, 0, sizeof lc_cu);
      return;       /* the handle stays open: harmless, and never reused */
    }
    /* object pointer to function pointer, as POSIX allows */
    memcpy(syms[i].slot, &f, sizeof f);
  }
}

int lc_cu_load(char *err) {
  pthread_once(&once, load);
  if (load_rc != 0) lc_errf(err, "%s", load_err);
  return load_rc;
}

const char *lc_cu_error_name(CUresult r, char buf[32]) {
  const char *s = NULL;
  if (lc_cu.GetErrorName && lc_cu.GetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
  /* the stub library names nothing: the codes met before a driver answers */
  switch (r) {
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 4: return "CUDA_ERROR_DEINITIALIZED";
    case CUDA_ERROR_STUB_LIBRARY: return "CUDA_ERROR_STUB_LIBRARY";
    case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case 999: return "CUDA_ERROR_UNKNOWN";
  }
  snprintf(buf, 32, "CUDA error %d", r);
  return buf;
}
