/*
** memory: device memory from the stream-ordered allocator (a pool of our
** own per device, with its release threshold raised so freed memory stays
** in the pool, given back when any call that takes device memory runs
** short: lc_cuda_release_idle), page-locked host
** memory, and host memory registered in place.
** The pool is this backend's caching allocator: a freed block stays in it
** and serves the next allocation in stream order, so no second cache sits
** in front of it (the simulator's is sim/reuse.c). Devices without memory
** pools take cuMemAlloc and cuMemFree as they are, uncached.
** Mapped memory's device address is the driver's answer
** (cuMemHostGetDevicePointer), kept in the hostreg record.
*/
#include "cuda.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "hostreg.h"

/* ---- memory --------------------------------------------------------------- */

CUdeviceptr lc_cuda_devptr(const void *p, lc_kind kind) {
  return kind == LC_MAPPED ? lc_cuda_ptr(lc_hostreg_to_device(p)) : lc_cuda_ptr(p);
}

/* The frees queued on the device's streams return their blocks to the
** pool only when they run (cuMemPoolTrimTo cannot give back a block an
** allocation or a queued free still holds), so the context is synchronised
** first: this is the path of a call already short of memory. Nothing of
** luacuda's is called (the caller may hold its locks). */
bool lc_cuda_release_idle(void) {
  CUmemoryPool pool = lc_cuda_devices[lc_cuda_current].pool;
  uint64_t before = 0, after = 0;
  if (pool == NULL || lc_cu.CtxSynchronize() != CUDA_SUCCESS ||
      lc_cu.MemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &before) !=
          CUDA_SUCCESS ||
      lc_cu.MemPoolTrimTo(pool, 0) != CUDA_SUCCESS ||
      lc_cu.MemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &after) !=
          CUDA_SUCCESS)
    return false;
  return after < before;
}

int lc_cuda_pool_alloc(const lc_cuda_device *d, size_t n, CUstream st, CUdeviceptr *p,
                       char *err) {
  CUresult r;
  LC_CUDA_RETRY_OOM(r, CUDA_ERROR_OUT_OF_MEMORY, lc_cu.MemAllocFromPoolAsync(p, n, d->pool, st));
  return lc_cuda_check(r, "cuMemAllocFromPoolAsync", err);
}

int lc_cuda_alloc(lc_kind kind, size_t nbytes, unsigned flags, lc_stream *s, void **ptr,
                  char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  lc_cuda_drain();
  size_t n = nbytes ? nbytes : 1;        /* the driver refuses empty blocks */
  const lc_cuda_device *d = &lc_cuda_devices[lc_cuda_current];
  CUdeviceptr p = 0;
  if (kind == LC_DEVICE && d->pool) {
    rc = lc_cuda_pool_alloc(d, n, lc_cuda_stream(s), &p, err);
  } else if (kind == LC_DEVICE) {
    rc = lc_cuda_check(lc_cu.MemAlloc(&p, n), "cuMemAlloc", err);
  } else if (kind == LC_MANAGED) {
    /* managed memory is the device's too: the pool's idle blocks may hold it */
    CUresult r;
    LC_CUDA_RETRY_OOM(r, CUDA_ERROR_OUT_OF_MEMORY,
                      lc_cu.MemAllocManaged(&p, n, CU_MEM_ATTACH_GLOBAL));
    rc = lc_cuda_check(r, "cuMemAllocManaged", err);
  } else if (lc_kind_page_locked(kind)) {
    unsigned f = (flags & LC_ALLOC_PORTABLE ? CU_MEMHOSTALLOC_PORTABLE : 0) |
                 (flags & LC_ALLOC_WRITECOMBINED ? CU_MEMHOSTALLOC_WRITECOMBINED : 0) |
                 (kind == LC_MAPPED ? CU_MEMHOSTALLOC_DEVICEMAP : 0);
    void *h = NULL;
    rc = lc_cuda_check(lc_cu.MemHostAlloc(&h, n, f), "cuMemHostAlloc", err);
    if (rc == LC_OK) {
      /* the flags are kept for host_flags: the driver's own answer depends
      ** on unified addressing */
      unsigned lf = kind == LC_MAPPED ? flags | LC_ALLOC_DEVICEMAP : flags;
      rc = lc_hostreg_add_allocated(h, n, lf, err);
      if (rc != LC_OK) lc_cu.MemFreeHost(h);
    }
    if (rc == LC_OK && kind == LC_MAPPED) {
      /* write-combined memory has a device address of its own, even with
      ** unified addressing (cuMemHostAlloc's manual): kernels, memsets and
      ** the copy kernel take that one (lc_cuda_devptr) */
      CUdeviceptr dev = 0;
      rc = lc_cuda_check(lc_cu.MemHostGetDevicePointer(&dev, h, 0), "cuMemHostGetDevicePointer",
                         err);
      if (rc == LC_OK) {
        lc_hostreg_set_device(h, (void *)(uintptr_t)dev);
      } else {
        lc_hostreg_remove_allocated(h);
        lc_cu.MemFreeHost(h);
      }
    }
    p = lc_cuda_ptr(h);
  } else {
    return lc_fail(err, LC_EFAIL, "the cuda backend does not allocate %s memory",
                   lc_kind_names[kind]);
  }
  if (rc != LC_OK) return rc;
  if (lc_kind_on_device(kind)) atomic_fetch_add(&lc_cuda_devices[lc_cuda_current].used, n);
  *ptr = (void *)(uintptr_t)p;
  return LC_OK;
}

/* On the device the memory belongs to, whichever is current (its context
** made current for the while, as in free_after). */
void lc_cuda_free(lc_kind kind, void *ptr, size_t nbytes, int device) {
  lc_cuda_device *d = &lc_cuda_devices[device];
  if (lc_kind_on_device(kind)) atomic_fetch_sub(&d->used, nbytes ? nbytes : 1);
  if (lc_kind_page_locked(kind)) lc_hostreg_remove_allocated(ptr);
  if (!lc_cuda_enter_quietly()) return;          /* a broken context frees nothing */
  CUcontext prev = NULL;
  bool moved = device != lc_cuda_current && lc_cu.CtxPushCurrent(d->ctx) == CUDA_SUCCESS;
  if (kind == LC_DEVICE && d->pool)
    lc_cu.MemFreeAsync(lc_cuda_ptr(ptr), lc_cuda_legacy_of(device));
  else if (kind == LC_DEVICE || kind == LC_MANAGED)
    lc_cu.MemFree(lc_cuda_ptr(ptr));
  else if (lc_kind_page_locked(kind))
    lc_cu.MemFreeHost(ptr);
  if (moved) lc_cu.CtxPopCurrent(&prev);
}

/* Stream-ordered frees: cuMemFreeAsync on the stream used last, made to
** wait (an event) for each other stream that used the memory and that it
** does not follow by itself; on the device the memory belongs to, whichever
** is current (its context made current for the while). */
void lc_cuda_free_after(lc_kind kind, void *ptr, size_t nbytes, int device,
                        lc_stream *const *streams, int n) {
  (void)kind;
  atomic_fetch_sub(&lc_cuda_devices[device].used, nbytes ? nbytes : 1);
  if (!lc_cuda_enter_quietly()) return;          /* a broken context frees nothing */
  int here = lc_cuda_current;
  CUcontext ctx = lc_cuda_devices[device].ctx, prev = NULL;
  bool moved = device != here && lc_cu.CtxPushCurrent(ctx) == CUDA_SUCCESS;
  lc_stream *last = streams[n - 1];
  char err[LC_ERRLEN];
  for (int i = 0; i < n - 1; i++) {
    if (lc_cuda_stream_order_on(device, streams[i], last, err) != LC_OK) {
      lc_cu.CtxSynchronize();        /* cannot order: wait instead */
      break;
    }
  }
  lc_cu.MemFreeAsync(lc_cuda_ptr(ptr), lc_cuda_stream_on(device, last));
  if (moved) lc_cu.CtxPopCurrent(&prev);
}

/* Device memory from the pool is freed in stream order (free_after). */
bool lc_cuda_ordered_free(lc_kind kind) {
  return kind == LC_DEVICE && lc_cuda_devices[lc_cuda_current].pool != NULL;
}

int lc_cuda_mem_info(size_t *free_bytes, size_t *total, size_t *in_use) {
  char err[LC_ERRLEN];
  *free_bytes = *total = 0;
  *in_use = atomic_load(&lc_cuda_devices[lc_cuda_current].used);
  if (lc_cuda_enter(err) != LC_OK) return LC_EFAIL;
  return lc_cuda_check(lc_cu.MemGetInfo(free_bytes, total), "cuMemGetInfo", NULL);
}

int lc_cuda_pool_info(size_t *reserved, size_t *in_use) {
  char err[LC_ERRLEN];
  *reserved = *in_use = 0;
  if (lc_cuda_enter(err) != LC_OK) return LC_EFAIL;
  CUmemoryPool pool = lc_cuda_devices[lc_cuda_current].pool;
  if (pool == NULL) return LC_ENOTSUP;
  uint64_t r = 0, u = 0;
  if (lc_cu.MemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &r) != CUDA_SUCCESS ||
      lc_cu.MemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &u) != CUDA_SUCCESS)
    return LC_EFAIL;
  *reserved = (size_t)r;
  *in_use = (size_t)u;
  return LC_OK;
}

/* Give the pool's unused memory back to the device; frees still queued
** return to the pool only when done, so wait for them first. */
int lc_cuda_trim_pool(char *err) {
  int rc = lc_cuda_synchronize(err);
  if (rc != LC_OK) return rc;
  CUmemoryPool pool = lc_cuda_devices[lc_cuda_current].pool;
  if (pool == NULL) return LC_OK;
  return lc_cuda_check(lc_cu.MemPoolTrimTo(pool, 0), "cuMemPoolTrimTo", err);
}

/* ---- page-locking memory allocated elsewhere ----------------------------- */

int lc_cuda_host_register(void *p, size_t n, unsigned flags, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  rc = lc_hostreg_register(p, n, flags, err);     /* checks flags and overlaps */
  if (rc != LC_OK) return rc;
  unsigned f = (flags & LC_ALLOC_PORTABLE ? CU_MEMHOSTREGISTER_PORTABLE : 0) |
               (flags & LC_ALLOC_DEVICEMAP ? CU_MEMHOSTREGISTER_DEVICEMAP : 0);
  rc = lc_cuda_check(lc_cu.MemHostRegister(p, n, f), "cuMemHostRegister", err);
  if (rc == LC_OK && (flags & LC_ALLOC_DEVICEMAP)) {
    /* the driver's device address, asked once and kept in the record
    ** (host_device_pointer reads it, as for mapped allocations) */
    CUdeviceptr dev = 0;
    rc = lc_cuda_check(lc_cu.MemHostGetDevicePointer(&dev, p, 0), "cuMemHostGetDevicePointer",
                       err);
    if (rc == LC_OK) lc_hostreg_set_device(p, (void *)(uintptr_t)dev);
    else lc_cu.MemHostUnregister(p);
  }
  if (rc != LC_OK) {
    char ignored[LC_ERRLEN];
    lc_hostreg_unregister(p, ignored);
  }
  return rc;
}

int lc_cuda_host_unregister(void *p, char *err) {
  int rc = lc_hostreg_unregister(p, err);
  if (rc != LC_OK) return rc;
  if (!lc_cuda_enter_quietly()) return LC_OK;      /* gone with the context */
  return lc_cuda_check(lc_cu.MemHostUnregister(p), "cuMemHostUnregister", err);
}
