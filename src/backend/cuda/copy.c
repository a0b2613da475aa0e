/*
** copy: copies and fills on the CUDA backend.
**
** Contiguous copies are one cuMemcpyAsync (unified addressing tells the
** driver which side is which). Strided copies use cuMemcpy2DAsync or
** cuMemcpy3DAsync where the views are rows at a pitch (in planes), but for
** rows narrower than LC_NARROW_ROW bytes device to device (LC_NARROW_HOST_ROW
** between the host and the device); the library
** kernel (kernels/strided.cu) where both sides are device-accessible
** otherwise, or where the driver refuses a device-to-device 2-D/3-D copy
** (CUDA_ERROR_INVALID_VALUE: pitches it does not take); and otherwise stage
** the host side through a contiguous buffer. Fills are cuMemsetD8/16/32 where the value
** repeats and the view is contiguous, else the library's fill kernel with
** the value in its arguments (a record longer than those hold: the copy
** kernel from one element with zero strides). Between two kinds of host memory the
** work is a host function on the stream (it calls no CUDA, as host
** functions must not), but for managed memory: managed to managed is the
** device's work (no page moves to the host), and so is managed to or from
** any host memory where the device has no concurrent managed access (a
** host function touching managed memory while another stream's kernel
** runs would crash there).
**
** A NULL stream means the legacy default stream, waited for: it follows
** the work of every other (blocking) stream, so that is "synchronous" in
** the interface's sense.
*/
#include "cuda.h"
#include "host_copy.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi.h"        /* lc_strided_args, lc_fill_args: the library kernels' parameters */
#include "kernels.h"    /* lc_strided_source */

/* ---- host memory on both sides ----------------------------------------- */

/* Between two kinds of host-addressable memory, is the copy the driver's
** (cuMemcpyAsync, the copy kernel, or staged) rather than a host
** function's? */
static bool on_device(lc_kind d, lc_kind s) {
  if (d != LC_MANAGED && s != LC_MANAGED) return false;
  if (d == LC_MANAGED && s == LC_MANAGED) return true;
  return !lc_cuda_devices[lc_cuda_current].concurrent_managed;
}

enum { HOST_COPY, HOST_STRIDED, HOST_FILL };

typedef struct host_work {
  int op;
  char *dst;
  const char *src;
  size_t nbytes;
  lc_layout dl, sl;
  int64_t itemsize;
  unsigned char value[];       /* itemsize bytes, for a fill */
} host_work;

static void run_host(void *ud) {
  host_work *w = ud;
  if (w->op == HOST_COPY) memmove(w->dst, w->src, w->nbytes);
  else if (w->op == HOST_STRIDED) lc_copy_strided_host(w->dst, &w->dl, w->src, &w->sl, w->itemsize);
  else lc_fill_host(w->dst, &w->dl, w->value, w->itemsize);
  free(w);
}

/* Without a stream: wait for everything, then do it here. With one: queue
** it as a host function (which takes w). */
static int host_side(host_work *w, lc_stream *s, char *err) {
  if (s == NULL) {
    int rc = lc_cuda_synchronize(err);
    if (rc == LC_OK) run_host(w);
    else free(w);
    return rc;
  }
  int rc = lc_cuda_enter(err);
  if (rc == LC_OK) rc = lc_cuda_check(lc_cu.LaunchHostFunc(s->s, run_host, w), "cuLaunchHostFunc", err);
  if (rc != LC_OK) free(w);
  else lc_cuda_queued();
  return rc;
}

static host_work *host_work_new(int op, size_t extra, char *err) {
  host_work *w = calloc(1, sizeof *w + extra);
  if (w == NULL) lc_errf(err, "out of host memory queueing a copy");
  else w->op = op;
  return w;
}

/* Copy n bytes of host memory at src to device memory t on st, through a
** buffer of our own that a host function frees once the copy is done: the
** copy never reads src (perhaps the caller's stack) later. Takes buf when
** given (malloc'd, already filled), else copies src into a new one. */
static int upload(CUdeviceptr t, void *buf, const void *src, size_t n, CUstream st, char *err) {
  if (buf == NULL) {
    buf = malloc(n ? n : 1);
    if (buf == NULL) {
      return lc_fail(err, LC_ENOMEM, "out of host memory staging %zu bytes", n);
    }
    memcpy(buf, src, n);
  }
  int rc = lc_cuda_check(lc_cu.MemcpyAsync(t, lc_cuda_ptr(buf), n, st), "cuMemcpyAsync", err);
  if (rc == LC_OK && lc_cu.LaunchHostFunc(st, free, buf) == CUDA_SUCCESS) return LC_OK;
  lc_cu.StreamSynchronize(st);     /* not queued: free it once the copy is done */
  free(buf);
  return rc;
}

/* ---- contiguous copies ------------------------------------------------------ */

int lc_cuda_copy(void *dst, lc_kind dkind, const void *src, lc_kind skind,
                 size_t nbytes, lc_stream *s, char *err) {
  if (dkind != LC_DEVICE && skind != LC_DEVICE && !on_device(dkind, skind)) {
    host_work *w = host_work_new(HOST_COPY, 0, err);
    if (w == NULL) return LC_ENOMEM;
    w->dst = dst;
    w->src = src;
    w->nbytes = nbytes;
    return host_side(w, s, err);
  }
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  CUresult r = nbytes ? lc_cu.MemcpyAsync(lc_cuda_ptr(dst), lc_cuda_ptr(src), nbytes,
                                          lc_cuda_stream(s))
                      : CUDA_SUCCESS;
  return lc_cuda_finish(r, "cuMemcpyAsync", s, err);
}

/* ---- strided copies ------------------------------------------------------- */

static bool same_contiguous(const lc_layout *a, const lc_layout *b, int64_t isz) {
  return (lc_layout_is_c_contiguous(a, isz) && lc_layout_is_c_contiguous(b, isz)) ||
         (lc_layout_is_f_contiguous(a, isz) && lc_layout_is_f_contiguous(b, isz));
}

/* Launch the library kernel on st: n elements of dl's shape from src
** (element 0, byte strides sstrides) to dst (element 0, dl's strides). */
static int launch_copy(char *dst, const lc_layout *dl, const char *src, const int64_t *sstrides,
                       int64_t isz, CUstream st, char *err) {
  lc_strided_args a;
  memset(&a, 0, sizeof a);
  a.n = dl->size;
  a.ndim = dl->ndim;
  a.itemsize = (int)isz;
  for (int i = 0; i < dl->ndim; i++) {
    a.shape[i] = dl->shape[i];
    a.dst_strides[i] = dl->strides[i];
    a.src_strides[i] = sstrides[i];
  }
  CUdeviceptr d = lc_cuda_ptr(dst), s = lc_cuda_ptr(src);
  void *params[3] = {&d, &s, &a};
  return lc_cuda_library_launch("luacuda/strided.cu", lc_strided_source, "lc_copy_strided",
                                lc_cuda_grid((a.n + 255) / 256, 1u << 20), 256, params, st, err);
}

/* Device to device, rows of fewer bytes than this go to the copy kernel,
** not to cuMemcpy2D/3D. */
#define LC_NARROW_ROW 64

/* Between the host and the device, rows of fewer bytes than this (a
** column's 4- or 8-byte elements, or pairs of them) are staged: gathered
** into one contiguous transfer and scattered by the copy kernel on the
** device side, where a 2-D or 3-D memcpy moves one short line at a time.
** Wider rows are left to the DMA engine until a GPU says where the two
** cross (bench/gpu.lua). */
#define LC_NARROW_HOST_ROW 16

/* One side of a 2-D or 3-D copy: host pointers as host memory, device memory as
** such. Mapped and managed memory take the kernel instead. */
static bool side_2d(const lc_region *r, const char *p, int *type, const void **host,
                    CUdeviceptr *dev) {
  if (r->kind == LC_DEVICE) {
    *type = CU_MEMORYTYPE_DEVICE;
    *dev = lc_cuda_ptr(p);
    return true;
  }
  if (r->kind == LC_HOST || r->kind == LC_PINNED) {
    *type = CU_MEMORYTYPE_HOST;
    *host = p;
    return true;
  }
  return false;
}

/* The copy as rows of bytes at a pitch, repeated along at most one more
** axis: a 2-D or 3-D memcpy. Axes where both sides step backwards are
** walked forwards from their last element, axes are put in the order of
** the destination's strides, and axes that both sides lay out one after
** the other are merged. Fills c (a 2-D copy has Depth 1) and returns true
** when the copy has that form with positive pitches. */
static bool as_memcpy(const lc_region *dst, char *d0, const lc_region *src, const char *s0,
                      int64_t isz, lc_cu_memcpy3d *c) {
  const lc_layout *dl = dst->layout, *sl = src->layout;
  int64_t shape[LC_MAXDIM], ds[LC_MAXDIM], ss[LC_MAXDIM];
  int n = 0;
  for (int i = 0; i < dl->ndim; i++) {
    if (dl->shape[i] == 1) continue;
    int64_t d = dl->strides[i], s = sl->strides[i];
    if ((d < 0) != (s < 0)) return false;
    if (d < 0) {                   /* the same elements, walked the other way */
      d0 += (dl->shape[i] - 1) * d;
      s0 += (dl->shape[i] - 1) * s;
      d = -d;
      s = -s;
    }
    int j = n++;                   /* insertion by descending destination stride */
    while (j > 0 && ds[j - 1] < d) {
      shape[j] = shape[j - 1];
      ds[j] = ds[j - 1];
      ss[j] = ss[j - 1];
      j--;
    }
    shape[j] = dl->shape[i];
    ds[j] = d;
    ss[j] = s;
  }
  int m = 0;                       /* merge axis i into the one before when contiguous */
  for (int i = 0; i < n; i++) {
    if (m > 0 && ds[m - 1] == ds[i] * shape[i] && ss[m - 1] == ss[i] * shape[i]) {
      shape[m - 1] *= shape[i];
      ds[m - 1] = ds[i];
      ss[m - 1] = ss[i];
    } else {
      shape[m] = shape[i];
      ds[m] = ds[i];
      ss[m] = ss[i];
      m++;
    }
  }
  int64_t width = isz;
  if (m > 0 && ds[m - 1] == isz && ss[m - 1] == isz) width = shape[--m] * isz;
  if (m == 0 || m > 2) return false;          /* contiguous (done elsewhere), or 4-D */
  int64_t dp = ds[m - 1], sp = ss[m - 1], height = shape[m - 1], depth = 1, dh = 0, sh = 0;
  if (dp < width || sp < width || dp > INT_MAX || sp > INT_MAX) return false;
  if (m == 2) {                   /* planes: a whole number of rows apart, not overlapping */
    if (ds[0] % dp != 0 || ss[0] % sp != 0) return false;
    depth = shape[0];
    dh = ds[0] / dp;
    sh = ss[0] / sp;
    if (dh < height || sh < height) return false;
  }
  memset(c, 0, sizeof *c);
  const void *dhost = NULL;
  if (!side_2d(dst, d0, &c->dstMemoryType, &dhost, &c->dstDevice) ||
      !side_2d(src, s0, &c->srcMemoryType, &c->srcHost, &c->srcDevice))
    return false;
  c->dstHost = (void *)(uintptr_t)dhost;
  c->dstPitch = (size_t)dp;
  c->srcPitch = (size_t)sp;
  c->dstHeight = (size_t)dh;
  c->srcHeight = (size_t)sh;
  c->WidthInBytes = (size_t)width;
  c->Height = (size_t)height;
  c->Depth = (size_t)depth;
  return true;
}

/* c as a 2-D or a 3-D copy on st. */
static CUresult memcpy_nd(const lc_cu_memcpy3d *c, CUstream st, const char **call) {
  if (c->Depth > 1) {
    *call = "cuMemcpy3DAsync";
    return lc_cu.Memcpy3DAsync(c, st);
  }
  lc_cu_memcpy2d c2 = {
    .srcMemoryType = c->srcMemoryType, .srcHost = c->srcHost, .srcDevice = c->srcDevice,
    .srcPitch = c->srcPitch, .dstMemoryType = c->dstMemoryType, .dstHost = c->dstHost,
    .dstDevice = c->dstDevice, .dstPitch = c->dstPitch, .WidthInBytes = c->WidthInBytes,
    .Height = c->Height,
  };
  *call = "cuMemcpy2DAsync";
  return lc_cu.Memcpy2DAsync(&c2, st);
}

/* Device-accessible memory on one side (device or managed), host memory
** on the other: the host side goes through a contiguous host buffer, the
** device side through a contiguous device buffer and the kernel. The host
** side is touched now, so the stream's queued work is waited for first. */
static int staged(const lc_region *dst, char *d0, const lc_region *src, const char *s0,
                  int64_t isz, lc_stream *s, char *err) {
  const lc_layout *dl = dst->layout, *sl = src->layout;
  CUstream st = lc_cuda_stream(s);
  int rc = s ? lc_cuda_check(lc_cu.StreamSynchronize(st), "cuStreamSynchronize", err)
             : lc_cuda_synchronize(err);
  if (rc != LC_OK) return rc;
  lc_layout cl;
  if (lc_layout_contiguous(&cl, dl->ndim, dl->shape, isz, 'C', err)) return LC_EFAIL;
  size_t nbytes = (size_t)dl->size * (size_t)isz;
  char *h = malloc(nbytes);
  if (h == NULL) {
    return lc_fail(err, LC_ENOMEM, "out of host memory staging %zu bytes", nbytes);
  }
  CUdeviceptr t;
  rc = lc_cuda_temp_alloc(nbytes, st, &t, err);
  if (rc != LC_OK) {
    free(h);
    return rc;
  }
  char *tp = (char *)(uintptr_t)t;
  if (lc_kind_device_accessible(dst->kind)) {
    lc_copy_strided_host(h, &cl, src->base, sl, isz);
    rc = upload(t, h, NULL, nbytes, st, err);
    h = NULL;                      /* upload took it */
    if (rc == LC_OK)
      rc = launch_copy((char *)(uintptr_t)lc_cuda_devptr(d0, dst->kind), dl, tp, cl.strides, isz,
                       st, err);
  } else {
    rc = launch_copy(tp, &cl, (const char *)(uintptr_t)lc_cuda_devptr(s0, src->kind),
                     sl->strides, isz, st, err);
    if (rc == LC_OK)
      rc = lc_cuda_check(lc_cu.MemcpyAsync(lc_cuda_ptr(h), t, nbytes, st), "cuMemcpyAsync", err);
    if (rc == LC_OK)
      rc = lc_cuda_check(lc_cu.StreamSynchronize(st), "cuStreamSynchronize", err);
    if (rc == LC_OK) lc_copy_strided_host(dst->base, dl, h, &cl, isz);
  }
  lc_cuda_temp_free(t, st);
  free(h);
  if (rc != LC_OK) return rc;
  return lc_cuda_finish(CUDA_SUCCESS, "cuMemcpyAsync", s, err);
}

int lc_cuda_copy_strided(const lc_region *dst, const lc_region *src,
                         int64_t itemsize, lc_stream *s, char *err) {
  const lc_layout *dl = dst->layout, *sl = src->layout;
  char *d0 = (char *)dst->base + dl->offset;
  const char *s0 = (const char *)src->base + sl->offset;
  if (dl->size == 0) return s ? LC_OK : lc_cuda_synchronize(err);
  if (same_contiguous(dl, sl, itemsize))
    return lc_cuda_copy(d0, dst->kind, s0, src->kind, (size_t)dl->size * (size_t)itemsize, s, err);
  if (dst->kind != LC_DEVICE && src->kind != LC_DEVICE && !on_device(dst->kind, src->kind)) {
    host_work *w = host_work_new(HOST_STRIDED, 0, err);
    if (w == NULL) return LC_ENOMEM;
    w->dst = dst->base;
    w->src = src->base;
    w->dl = *dl;
    w->sl = *sl;
    w->itemsize = itemsize;
    return host_side(w, s, err);
  }
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  bool both_device = lc_kind_device_accessible(dst->kind) && lc_kind_device_accessible(src->kind);
  lc_cu_memcpy3d c;
  /* device to device, rows narrower than LC_NARROW_ROW take the kernel: a
  ** 2-D memcpy of short rows is slow, and the driver may refuse pitches not
  ** from cuMemAllocPitch (CUDA_ERROR_INVALID_VALUE), which the kernel
  ** then does too; host to device or back, rows narrower than
  ** LC_NARROW_HOST_ROW are staged */
  if (as_memcpy(dst, d0, src, s0, itemsize, &c) &&
      c.WidthInBytes >= (both_device ? LC_NARROW_ROW : LC_NARROW_HOST_ROW)) {
    const char *call;
    CUresult r = memcpy_nd(&c, lc_cuda_stream(s), &call);
    if (!(both_device && r == CUDA_ERROR_INVALID_VALUE)) return lc_cuda_finish(r, call, s, err);
  }
  if (both_device) {
    /* the kernel takes device addresses (write-combined memory's differ) */
    char *dd = (char *)(uintptr_t)lc_cuda_devptr(d0, dst->kind);
    const char *sd = (const char *)(uintptr_t)lc_cuda_devptr(s0, src->kind);
    rc = launch_copy(dd, dl, sd, sl->strides, itemsize, lc_cuda_stream(s), err);
    return rc != LC_OK ? rc : lc_cuda_finish(CUDA_SUCCESS, "cuLaunchKernel", s, err);
  }
  return staged(dst, d0, src, s0, itemsize, s, err);
}

/* ---- fills ---------------------------------------------------------------------- */

/* The shortest period, 1, 2 or 4 bytes, at which value repeats and which
** divides itemsize and the address; 0 when none does. */
static int memset_period(const unsigned char *v, int64_t isz, uintptr_t addr) {
  for (int p = 1; p <= 4; p *= 2) {
    if (isz % p != 0 || addr % (uintptr_t)p != 0) continue;
    bool repeats = true;
    for (int64_t i = p; i < isz && repeats; i++) repeats = v[i] == v[i % p];
    if (repeats) return p;
  }
  return 0;
}

/* Launch the fill kernel on st: every element of l, element 0 at d, set to
** value (itemsize <= LC_FILL_VALUE_MAX). A fill's order does not matter,
** so axes of one element or a zero stride go, negative strides are walked
** from their far end, and axes laid out one after the other merge: a view
** whose elements then lie side by side is filled with no division per
** element. Indices are 32-bit where n and every byte offset fit. */
static int launch_fill(CUdeviceptr d, const lc_layout *l, const void *value, int64_t isz,
                       CUstream st, char *err) {
  int64_t shape[LC_MAXDIM], strides[LC_MAXDIM];
  int n = 0;
  for (int i = 0; i < l->ndim; i++) {
    int64_t st_i = l->strides[i];
    if (l->shape[i] == 1 || st_i == 0) continue;
    if (st_i < 0) {
      d -= (CUdeviceptr)((l->shape[i] - 1) * -st_i);
      st_i = -st_i;
    }
    int j = n++;                   /* insertion by descending stride */
    while (j > 0 && strides[j - 1] < st_i) {
      shape[j] = shape[j - 1];
      strides[j] = strides[j - 1];
      j--;
    }
    shape[j] = l->shape[i];
    strides[j] = st_i;
  }
  int m = 0;                       /* merge axis i into the one before when contiguous */
  for (int i = 0; i < n; i++) {
    if (m > 0 && strides[m - 1] == strides[i] * shape[i]) {
      shape[m - 1] *= shape[i];
      strides[m - 1] = strides[i];
    } else {
      shape[m] = shape[i];
      strides[m] = strides[i];
      m++;
    }
  }
  lc_fill_args a;
  memset(&a, 0, sizeof a);
  a.itemsize = (int)isz;
  memcpy(a.value, value, (size_t)isz);
  int64_t count = 1, extent = isz;           /* elements, and the bytes they span */
  uint64_t align = (uint64_t)d | (uint64_t)isz;
  if (m == 0 || (m == 1 && strides[0] == isz)) {
    a.flags = LC_FILL_CONTIGUOUS;
    count = m ? shape[0] : 1;
    extent = count * isz;
  } else {
    a.ndim = m;
    for (int i = 0; i < m; i++) {
      a.shape[i] = shape[i];
      a.strides[i] = strides[i];
      count *= shape[i];
      extent += (shape[i] - 1) * strides[i];
      align |= (uint64_t)strides[i];
    }
  }
  a.n = count;
  a.word = (align & 7) == 0 ? 8 : (align & 3) == 0 ? 4 : (align & 1) == 0 ? 2 : 1;
  if (count <= INT_MAX && extent <= INT_MAX) a.flags |= LC_FILL_INDEX32;
  void *params[2] = {&d, &a};
  return lc_cuda_library_launch("luacuda/strided.cu", lc_strided_source, "lc_fill_strided",
                                lc_cuda_grid((count + 255) / 256, 1u << 20), 256, params, st,
                                err);
}

int lc_cuda_fill(const lc_region *dst, const void *value, int64_t itemsize,
                 lc_stream *s, char *err) {
  const lc_layout *l = dst->layout;
  char *d0 = (char *)dst->base + l->offset;
  if (l->size == 0) return s ? LC_OK : lc_cuda_synchronize(err);
  if (!lc_kind_device_accessible(dst->kind)) {
    host_work *w = host_work_new(HOST_FILL, (size_t)itemsize, err);
    if (w == NULL) return LC_ENOMEM;
    w->dst = dst->base;
    w->dl = *l;
    w->itemsize = itemsize;
    memcpy(w->value, value, (size_t)itemsize);
    return host_side(w, s, err);
  }
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  CUstream st = lc_cuda_stream(s);
  CUdeviceptr d = lc_cuda_devptr(d0, dst->kind);     /* memsets and kernels take it */
  const unsigned char *v = value;
  bool contiguous = lc_layout_is_c_contiguous(l, itemsize) || lc_layout_is_f_contiguous(l, itemsize);
  if (contiguous) {
    size_t nbytes = (size_t)l->size * (size_t)itemsize;
    int p = memset_period(v, itemsize, (uintptr_t)d);
    if (p == 1)
      return lc_cuda_finish(lc_cu.MemsetD8Async(d, v[0], nbytes, st), "cuMemsetD8Async", s, err);
    if (p == 2) {
      unsigned short u;
      memcpy(&u, v, 2);
      return lc_cuda_finish(lc_cu.MemsetD16Async(d, u, nbytes / 2, st), "cuMemsetD16Async", s,
                            err);
    }
    if (p == 4) {
      unsigned u;
      memcpy(&u, v, 4);
      return lc_cuda_finish(lc_cu.MemsetD32Async(d, u, nbytes / 4, st), "cuMemsetD32Async", s,
                            err);
    }
  }
  /* the value in the fill kernel's arguments: one launch, nothing staged */
  if (itemsize <= LC_FILL_VALUE_MAX) {
    rc = launch_fill(d, l, value, itemsize, st, err);
    return rc != LC_OK ? rc : lc_cuda_finish(CUDA_SUCCESS, "cuLaunchKernel", s, err);
  }
  /* a record longer than that: uploaded, one element written by a copy,
  ** more by the copy kernel from that one with zero source strides */
  if (contiguous && l->size == 1) {
    rc = upload(d, NULL, value, (size_t)itemsize, st, err);
    return rc != LC_OK ? rc : lc_cuda_finish(CUDA_SUCCESS, "cuMemcpyAsync", s, err);
  }
  CUdeviceptr t;
  rc = lc_cuda_temp_alloc((size_t)itemsize, st, &t, err);
  if (rc != LC_OK) return rc;
  rc = upload(t, NULL, value, (size_t)itemsize, st, err);
  int64_t zero[LC_MAXDIM] = {0};
  if (rc == LC_OK)
    rc = launch_copy((char *)(uintptr_t)d, l, (const char *)(uintptr_t)t, zero, itemsize, st, err);
  lc_cuda_temp_free(t, st);
  return rc != LC_OK ? rc : lc_cuda_finish(CUDA_SUCCESS, "cuLaunchKernel", s, err);
}
