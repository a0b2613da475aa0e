/*
** peer: copies where a side is device memory of a device other than the
** current one (backend.h's copy_peer). In order of preference:
** - device to device, both contiguous: one cuMemcpyPeerAsync on the stream
**   (the driver needs no peer access for it);
** - when the current device can reach the other's memory directly
**   (cuDeviceCanAccessPeer, then cuCtxEnablePeerAccess, and the other's
**   pool granting it access, once per pair and direction), the current
**   device's own copy: memcpy, 2-D/3-D copies or the copy kernel, reading
**   and writing the peer's memory;
** - else staged through page-locked host memory, which every device
**   reaches: the source view packed into it on the source's device, then
**   unpacked into the destination view on the destination's device. That
**   path waits: for the stream's work first, and it is done when the call
**   returns.
** With a stream, the copy is ordered after the stream's work only (as
** cuMemcpyPeerAsync is): work queued on the other device's streams is the
** caller's to order (an event). Without one (synchronous), every device
** involved is waited for first.
*/
#include "cuda.h"

#include <stdio.h>

/* Make device dev the thread's current one for a step; returns the one
** before, which the caller puts back (the backend slot's scope then puts
** the host program's context back). */
static int switch_to(int dev) {
  int before = lc_cuda_current;
  lc_cuda_current = dev;
  return before;
}

/* Let the current device's kernels and copies touch device o's pool
** blocks: peer access does not cover stream-ordered memory, which is
** reachable from its own device only until its pool grants another
** (cuMemPoolSetAccess). A grant is for every block, present and future. */
static bool grant_pool(int o) {
  CUmemoryPool pool = lc_cuda_devices[o].pool;
  if (pool == NULL) return true;           /* no pool: every array is cuMemAlloc's */
  lc_cu_mem_access_desc desc = {
      {CU_MEM_LOCATION_TYPE_DEVICE, lc_cuda_devices[lc_cuda_current].dev},
      CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  return lc_cu.MemPoolSetAccess(pool, &desc, 1) == CUDA_SUCCESS;
}

/* May kernels and copies of the current device reach device o's memory?
** Peer access is enabled at the first need, with o's pool granting access
** to this device, and the answer kept (under lc_cuda_mu); a host program
** that enabled peer access already is taken at its word
** (CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED). Either refused: staged. */
static bool reaches(int o) {
  int here = lc_cuda_current;
  if (o == here) return true;
  if (o >= 64) return false;               /* beyond the masks: staged */
  lc_cuda_device *d = &lc_cuda_devices[here];
  uint64_t bit = (uint64_t)1 << o;
  pthread_mutex_lock(&lc_cuda_mu);
  if (!((d->peer_on | d->peer_never) & bit)) {
    int can = 0;
    bool on = false;
    if (lc_cu.DeviceCanAccessPeer(&can, d->dev, lc_cuda_devices[o].dev) == CUDA_SUCCESS && can) {
      CUresult r = lc_cu.CtxEnablePeerAccess(lc_cuda_devices[o].ctx, 0);
      on = (r == CUDA_SUCCESS || r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) && grant_pool(o);
    }
    if (on) d->peer_on |= bit;
    else d->peer_never |= bit;
  }
  bool on = (d->peer_on & bit) != 0;
  pthread_mutex_unlock(&lc_cuda_mu);
  return on;
}

/* Wait for all the work of device dev (the interface's NULL stream). */
static int wait_device(int dev, char *err) {
  int before = switch_to(dev);
  int rc = lc_cuda_synchronize(err);
  lc_cuda_current = before;
  return rc;
}

/* Both dense, their elements in the same order: one run of bytes each. */
static bool same_contiguous(const lc_layout *a, const lc_layout *b, int64_t isz) {
  return lc_layout_same_shape(a, b) &&
         ((lc_layout_is_c_contiguous(a, isz) && lc_layout_is_c_contiguous(b, isz)) ||
          (lc_layout_is_f_contiguous(a, isz) && lc_layout_is_f_contiguous(b, isz)));
}

/* Through page-locked memory: packed on the source's device, unpacked on
** the destination's, each step synchronous. */
static int staged(const lc_region *dst, int ddev, const lc_region *src, int sdev,
                  int64_t itemsize, char *err) {
  const lc_layout *dl = dst->layout;
  lc_layout pl;
  if (lc_layout_contiguous(&pl, dl->ndim, dl->shape, itemsize, 'C', err)) return LC_EFAIL;
  size_t n = (size_t)dl->size * (size_t)itemsize;
  void *buf = NULL;
  int rc = lc_cuda_check(lc_cu.MemHostAlloc(&buf, n, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc",
                         err);
  if (rc != LC_OK) return rc;
  lc_region packed = {buf, LC_PINNED, &pl};
  int before = switch_to(sdev);
  rc = lc_cuda_copy_strided(&packed, src, itemsize, NULL, err);
  lc_cuda_current = ddev;
  if (rc == LC_OK) rc = lc_cuda_copy_strided(dst, &packed, itemsize, NULL, err);
  lc_cuda_current = before;
  char ignored[LC_ERRLEN];
  if (lc_cuda_enter(ignored) == LC_OK) lc_cu.MemFreeHost(buf);   /* both steps are done */
  return rc;
}

int lc_cuda_copy_peer(const lc_region *dst, int ddev, const lc_region *src, int sdev,
                      int64_t itemsize, lc_stream *s, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  int here = lc_cuda_current;
  const lc_layout *dl = dst->layout, *sl = src->layout;
  if (s == NULL) {                   /* synchronous: after every device's work */
    if ((ddev != here && (rc = wait_device(ddev, err)) != LC_OK) ||
        (sdev != here && sdev != ddev && (rc = wait_device(sdev, err)) != LC_OK) ||
        (rc = lc_cuda_enter(err)) != LC_OK)
      return rc;
  }
  if (dst->kind == LC_DEVICE && src->kind == LC_DEVICE && same_contiguous(dl, sl, itemsize)) {
    size_t n = (size_t)dl->size * (size_t)itemsize;
    CUresult r = n == 0 ? CUDA_SUCCESS
                        : lc_cu.MemcpyPeerAsync(
                              lc_cuda_ptr((const char *)dst->base + dl->offset),
                              lc_cuda_devices[ddev].ctx,
                              lc_cuda_ptr((const char *)src->base + sl->offset),
                              lc_cuda_devices[sdev].ctx, n, lc_cuda_stream(s));
    return lc_cuda_finish(r, "cuMemcpyPeerAsync", s, err);
  }
  bool direct = (dst->kind != LC_DEVICE || reaches(ddev)) &&
                (src->kind != LC_DEVICE || reaches(sdev));
  if (direct) return lc_cuda_copy_strided(dst, src, itemsize, s, err);
  if (s != NULL && (rc = lc_cuda_stream_synchronize(s, err)) != LC_OK) return rc;
  return staged(dst, ddev, src, sdev, itemsize, err);
}
