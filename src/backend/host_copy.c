/*
** host_copy: element copies and fills between host-addressable views of the
** same shape. The innermost axis is the loop; when both sides are
** contiguous along it, each row is one memcpy.
*/
#include <stdbool.h>
#include <string.h>

#include "backend.h"
#include "host_copy.h"

/* Copy one row of n elements with the given byte strides. */
static void copy_row(char *d, int64_t ds, const char *s, int64_t ss,
                     int64_t n, int64_t itemsize) {
  if (ds == itemsize && ss == itemsize) {
    memcpy(d, s, (size_t)(n * itemsize));
    return;
  }
  switch (itemsize) {   /* memcpy of a constant size compiles to one move */
    case 1: for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, 1); break;
    case 2: for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, 2); break;
    case 4: for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, 4); break;
    case 8: for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, 8); break;
    default:
      for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, (size_t)itemsize);
  }
}

void lc_copy_strided_host(char *dst, const lc_layout *dl,
                          const char *src, const lc_layout *sl, int64_t itemsize) {
  if (dl->size == 0) return;
  if (dl->ndim == 0) {
    memcpy(dst + dl->offset, src + sl->offset, (size_t)itemsize);
    return;
  }
  if (lc_layout_is_c_contiguous(dl, itemsize) && lc_layout_is_c_contiguous(sl, itemsize)) {
    memcpy(dst + dl->offset, src + sl->offset, (size_t)(dl->size * itemsize));
    return;
  }
  int nd = dl->ndim, last = nd - 1;
  int64_t idx[LC_MAXDIM] = {0};
  char *d = dst + dl->offset;
  const char *s = src + sl->offset;
  for (;;) {
    copy_row(d, dl->strides[last], s, sl->strides[last], dl->shape[last], itemsize);
    int k = last - 1;   /* odometer over the outer axes */
    for (; k >= 0; k--) {
      if (++idx[k] < dl->shape[k]) {
        d += dl->strides[k];
        s += sl->strides[k];
        break;
      }
      d -= (dl->shape[k] - 1) * dl->strides[k];
      s -= (sl->shape[k] - 1) * sl->strides[k];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

static bool same_bytes(const void *v, int64_t n) {
  const unsigned char *b = v;
  for (int64_t i = 1; i < n; i++) if (b[i] != b[0]) return false;
  return true;
}

static void fill_row(char *d, int64_t ds, int64_t n, const void *v, int64_t itemsize) {
  if (ds == itemsize && same_bytes(v, itemsize)) {   /* zeros, mostly */
    memset(d, *(const unsigned char *)v, (size_t)(n * itemsize));
    return;
  }
  switch (itemsize) {
    case 2: for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, v, 2); break;
    case 4: for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, v, 4); break;
    case 8: for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, v, 8); break;
    default:
      for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, v, (size_t)itemsize);
  }
}

void lc_fill_host(char *dst, const lc_layout *dl, const void *value, int64_t itemsize) {
  if (dl->size == 0) return;
  if (dl->ndim == 0) {
    memcpy(dst + dl->offset, value, (size_t)itemsize);
    return;
  }
  if (lc_layout_is_c_contiguous(dl, itemsize)) {
    fill_row(dst + dl->offset, itemsize, dl->size, value, itemsize);
    return;
  }
  int nd = dl->ndim, last = nd - 1;
  int64_t idx[LC_MAXDIM] = {0};
  char *d = dst + dl->offset;
  for (;;) {
    fill_row(d, dl->strides[last], dl->shape[last], value, itemsize);
    int k = last - 1;
    for (; k >= 0; k--) {
      if (++idx[k] < dl->shape[k]) { d += dl->strides[k]; break; }
      d -= (dl->shape[k] - 1) * dl->strides[k];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}
