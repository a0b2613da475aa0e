/*
** alias: whether two arrays' views share memory, whatever buffers hold
** them. A buffer is not the only way to a memory: luacuda.mapped(h) is a
** second buffer over h's bytes, and so are a host program's wraps
** (luacuda_wrap) and DLPack imports of memory some array already has. So
** the question is asked of addresses (base/layout.h's lc_views_overlap),
** never of buffer objects.
**
** Memory has up to two addresses. A host address (the buffer's ptr) where
** the host reads it through a pointer: every kind but device memory, and
** device memory too where it is host memory (the simulator). A device
** address (dev) where kernels read it: mapped, managed and device memory.
** On the CUDA backend a device address and a host address are never
** compared: device memory is not the host's, whatever the numbers say;
** mapped and managed memory have both, and meet either side at its own.
** The CUDA backend needs unified addressing (cuda/context.c), so a device
** address names one memory whichever device holds it.
*/
#include "array.h"

/* b's host address, if it has one. */
static bool host_address(const lc_buffer *b, uintptr_t *at) {
  if (!lc_kind_host_accessible(b->kind) && !b->backend->device_memory_is_host) return false;
  *at = (uintptr_t)b->ptr;
  return true;
}

/* b's device address, if it has one. */
static bool device_address(const lc_buffer *b, uintptr_t *at) {
  if (!lc_kind_device_accessible(b->kind)) return false;
  *at = (uintptr_t)b->dev;
  return true;
}

bool lc_arrays_overlap(const lc_array *x, const lc_layout *xl,
                       const lc_array *y, const lc_layout *yl) {
  int64_t xs = x->dtype->size, ys = y->dtype->size;
  uintptr_t xa, ya;
  if (host_address(x->buf, &xa) && host_address(y->buf, &ya) &&
      lc_views_overlap(xa, xl, xs, ya, yl, ys))
    return true;
  return device_address(x->buf, &xa) && device_address(y->buf, &ya) &&
         lc_views_overlap(xa, xl, xs, ya, yl, ys);
}

bool lc_arrays_same_view(const lc_array *x, const lc_layout *xl,
                         const lc_array *y, const lc_layout *yl) {
  int64_t xs = x->dtype->size, ys = y->dtype->size;
  uintptr_t xa, ya;
  if (host_address(x->buf, &xa) && host_address(y->buf, &ya))
    return lc_views_same(xa, xl, xs, ya, yl, ys);
  return device_address(x->buf, &xa) && device_address(y->buf, &ya) &&
         lc_views_same(xa, xl, xs, ya, yl, ys);
}
