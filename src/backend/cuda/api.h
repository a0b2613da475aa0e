/*
** api: the few CUDA driver types, constants and functions luacuda
** calls, declared here so that the module builds without cuda.h, and the
** loader that opens libcuda.so.1 with dlopen (once, never closed: finalizers
** may run at lua_close, after exit hooks).
**
** Every function is resolved by its exact exported name; several carry a
** version suffix (cuMemGetInfo_v2 ...). An unsuffixed name is never
** upgraded to _v2 by rule: CUDA 13 exports cuCtxSynchronize_v2 as a new
** function with other parameters. Values are those of cuda.h (CUDA 13).
*/
#ifndef LUACUDA_CUDA_API_H
#define LUACUDA_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;                    /* cudaError_enum */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUarray_st *CUarray;
typedef void (*CUhostFn)(void *ud);

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
  CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
};

enum { CU_LIMIT_STACK_SIZE = 0, CU_LIMIT_PRINTF_FIFO_SIZE = 1 };   /* CUlimit */

#define LC_CU_STREAM_LEGACY ((CUstream)0x1)

enum {
  CU_STREAM_DEFAULT = 0,                 /* blocking: ordered with the legacy stream */
  CU_STREAM_NON_BLOCKING = 1,
  CU_EVENT_DEFAULT = 0,
  CU_EVENT_DISABLE_TIMING = 2,
  CU_MEMHOSTALLOC_PORTABLE = 1,
  CU_MEMHOSTALLOC_DEVICEMAP = 2,
  CU_MEMHOSTALLOC_WRITECOMBINED = 4,
  CU_MEMHOSTREGISTER_PORTABLE = 1,
  CU_MEMHOSTREGISTER_DEVICEMAP = 2,
  CU_MEM_ATTACH_GLOBAL = 1,
  CU_MEMORYTYPE_HOST = 1,
  CU_MEMORYTYPE_DEVICE = 2,
  CU_MEMORYTYPE_UNIFIED = 4,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
  CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_MEM_ALLOCATION_TYPE_PINNED = 1,
  CU_MEM_LOCATION_TYPE_DEVICE = 1,
  CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3,
  CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
  CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT = 5,
  CU_MEMPOOL_ATTR_USED_MEM_CURRENT = 7,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

/* CUDA_MEMCPY2D (cuda.h's CUDA_MEMCPY2D_v2) */
typedef struct lc_cu_memcpy2d {
  size_t srcXInBytes, srcY;
  int srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  size_t srcPitch;
  size_t dstXInBytes, dstY;
  int dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  size_t dstPitch;
  size_t WidthInBytes, Height;
} lc_cu_memcpy2d;

/* CUDA_MEMCPY3D (cuda.h's CUDA_MEMCPY3D_v2) */
typedef struct lc_cu_memcpy3d {
  size_t srcXInBytes, srcY, srcZ, srcLOD;
  int srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  void *reserved0;
  size_t srcPitch, srcHeight;
  size_t dstXInBytes, dstY, dstZ, dstLOD;
  int dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  void *reserved1;
  size_t dstPitch, dstHeight;
  size_t WidthInBytes, Height, Depth;
} lc_cu_memcpy3d;

/* CUmemPoolProps (cuda.h's CUmemPoolProps_v1; 88 bytes on 64-bit) */
typedef struct lc_cu_mempool_props {
  int allocType;                         /* CU_MEM_ALLOCATION_TYPE_PINNED */
  int handleTypes;                       /* 0: CU_MEM_HANDLE_TYPE_NONE */
  struct { int type, id; } location;     /* CU_MEM_LOCATION_TYPE_DEVICE, ordinal */
  void *win32SecurityAttributes;
  size_t maxSize;                        /* 0: the system's default */
  unsigned short usage;
  unsigned char reserved[54];
} lc_cu_mempool_props;

/* CUmemAccessDesc (cuda.h's CUmemAccessDesc_v1): a device's access to a pool */
typedef struct lc_cu_mem_access_desc {
  struct { int type, id; } location;     /* CU_MEM_LOCATION_TYPE_DEVICE, ordinal */
  int flags;                             /* CU_MEM_ACCESS_FLAGS_PROT_READWRITE */
} lc_cu_mem_access_desc;

/* The driver's functions, by the name they are exported under. */
typedef struct lc_cu_api {
  CUresult (*Init)(unsigned flags);                                     /* cuInit */
  CUresult (*DriverGetVersion)(int *version);                          /* 12040: 12.4 */
  CUresult (*GetErrorName)(CUresult e, const char **s);
  CUresult (*DeviceGetCount)(int *n);
  CUresult (*DeviceGet)(CUdevice *d, int ordinal);
  CUresult (*DeviceGetName)(char *name, int len, CUdevice d);
  CUresult (*DeviceGetAttribute)(int *v, int attr, CUdevice d);
  CUresult (*DeviceTotalMem)(size_t *bytes, CUdevice d);                /* _v2 */
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *c, CUdevice d);
  CUresult (*CtxSetCurrent)(CUcontext c);
  CUresult (*CtxGetCurrent)(CUcontext *c);
  CUresult (*CtxPushCurrent)(CUcontext c);                              /* _v2 */
  CUresult (*CtxPopCurrent)(CUcontext *c);                              /* _v2 */
  CUresult (*CtxSynchronize)(void);                                     /* no suffix */
  CUresult (*CtxGetLimit)(size_t *value, int limit);
  CUresult (*CtxSetLimit)(int limit, size_t value);
  CUresult (*MemPoolCreate)(CUmemoryPool *p, const lc_cu_mempool_props *props);
  CUresult (*MemPoolSetAttribute)(CUmemoryPool p, int attr, void *v);
  CUresult (*MemPoolGetAttribute)(CUmemoryPool p, int attr, void *v);
  CUresult (*MemPoolTrimTo)(CUmemoryPool p, size_t keep);
  CUresult (*MemPoolSetAccess)(CUmemoryPool p, const lc_cu_mem_access_desc *map, size_t count);
  CUresult (*MemGetInfo)(size_t *free_bytes, size_t *total);            /* _v2 */
  CUresult (*MemAlloc)(CUdeviceptr *p, size_t n);                       /* _v2 */
  CUresult (*MemFree)(CUdeviceptr p);                                   /* _v2 */
  CUresult (*MemAllocFromPoolAsync)(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s);
  CUresult (*MemFreeAsync)(CUdeviceptr p, CUstream s);
  CUresult (*MemAllocManaged)(CUdeviceptr *p, size_t n, unsigned flags);
  CUresult (*MemHostAlloc)(void **p, size_t n, unsigned flags);
  CUresult (*MemFreeHost)(void *p);
  CUresult (*MemHostRegister)(void *p, size_t n, unsigned flags);      /* _v2 */
  CUresult (*MemHostUnregister)(void *p);
  CUresult (*MemHostGetDevicePointer)(CUdeviceptr *d, void *p, unsigned flags); /* _v2 */
  CUresult (*MemcpyAsync)(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
  CUresult (*MemcpyPeerAsync)(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                              size_t n, CUstream s);
  CUresult (*DeviceCanAccessPeer)(int *can, CUdevice dev, CUdevice peer);
  CUresult (*CtxEnablePeerAccess)(CUcontext peer, unsigned flags);
  CUresult (*Memcpy2DAsync)(const lc_cu_memcpy2d *c, CUstream s);      /* _v2 */
  CUresult (*Memcpy3DAsync)(const lc_cu_memcpy3d *c, CUstream s);      /* _v2 */
  CUresult (*MemsetD8Async)(CUdeviceptr d, unsigned char v, size_t n, CUstream s);
  CUresult (*MemsetD16Async)(CUdeviceptr d, unsigned short v, size_t n, CUstream s);
  CUresult (*MemsetD32Async)(CUdeviceptr d, unsigned v, size_t n, CUstream s);
  CUresult (*StreamCreate)(CUstream *s, unsigned flags);
  CUresult (*StreamDestroy)(CUstream s);                                /* _v2 */
  CUresult (*StreamGetFlags)(CUstream s, unsigned *flags);
  CUresult (*StreamSynchronize)(CUstream s);
  CUresult (*StreamQuery)(CUstream s);
  CUresult (*StreamWaitEvent)(CUstream s, CUevent e, unsigned flags);
  CUresult (*EventCreate)(CUevent *e, unsigned flags);
  CUresult (*EventDestroy)(CUevent e);                                  /* _v2 */
  CUresult (*EventRecord)(CUevent e, CUstream s);
  CUresult (*EventSynchronize)(CUevent e);
  CUresult (*EventQuery)(CUevent e);
  CUresult (*EventElapsedTime)(float *ms, CUevent a, CUevent b);        /* _v2, else plain */
  CUresult (*ModuleLoadDataEx)(CUmodule *m, const void *image, unsigned n,
                               int *options, void **values);
  CUresult (*ModuleUnload)(CUmodule m);
  CUresult (*ModuleGetFunction)(CUfunction *f, CUmodule m, const char *name);
  CUresult (*ModuleGetGlobal)(CUdeviceptr *p, size_t *bytes, CUmodule m,
                              const char *name);                        /* _v2 */
  CUresult (*LaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                           unsigned bx, unsigned by, unsigned bz, unsigned shared,
                           CUstream s, void **params, void **extra);
  CUresult (*LaunchHostFunc)(CUstream s, CUhostFn fn, void *ud);
  CUresult (*FuncGetAttribute)(int *v, int attr, CUfunction f);
  CUresult (*FuncSetAttribute)(CUfunction f, int attr, int v);
  /* NULL where the driver is older than CUDA 12.4 */
  CUresult (*FuncGetParamInfo)(CUfunction f, size_t i, size_t *offset, size_t *size);
  /* cooperative launches; NULL where the driver lacks them */
  CUresult (*LaunchCooperativeKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                      unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                      CUstream s, void **params);
  CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *blocks, CUfunction f, int threads,
                                                        size_t shared);
} lc_cu_api;

extern lc_cu_api lc_cu;

/* Open the driver ($LUACUDA_LIBCUDA, else libcuda.so.1) and resolve every
** function, once. 0 when done; otherwise nonzero with the reason (the same
** on every call) in err[LC_ERRLEN]: the path and dlerror(), or the first
** missing symbol. */
int lc_cu_load(char *err);

/* "CUDA_ERROR_OUT_OF_MEMORY" for a result code (or "CUDA error 123"). */
const char *lc_cu_error_name(CUresult r, char buf[32]);

#endif
