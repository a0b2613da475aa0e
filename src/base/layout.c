/*
** layout: shape and byte-stride arithmetic (see layout.h).
** Sizes are int64_t and every product that could overflow is checked, so a
** layout that exists always describes a byte range that fits in int64_t.
*/
#include "layout.h"

#include <stdio.h>
#include <string.h>

/* an index as the 1-based messages show it (the C API takes any int64) */
static long long one_based(int64_t i) { return i == INT64_MAX ? (long long)i : (long long)i + 1; }

static bool mul_ok(int64_t a, int64_t b, int64_t *r) {
  return !__builtin_mul_overflow(a, b, r);
}

static bool add_ok(int64_t a, int64_t b, int64_t *r) {
  return !__builtin_add_overflow(a, b, r);
}

/* The count of a shape that a call made no larger than a checked one (a
** slice, a selection): it fits. */
static void recount(lc_layout *l) {
  int64_t n = 1;
  for (int i = 0; i < l->ndim; i++) n *= l->shape[i];
  l->size = n;
}

int lc_shape_count(int ndim, const int64_t *shape, int64_t itemsize, int64_t *size,
                   char *err) {
  if (ndim < 0 || ndim > LC_MAXDIM)
    return lc_fail(err, -1, "%d dimensions (at most %d)", ndim, LC_MAXDIM);
  /* the byte count below is what bounds the element count */
  if (itemsize < 1) return lc_fail(err, -1, "itemsize %lld is not positive", (long long)itemsize);
  int64_t n = 1, bytes = itemsize;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0)
      return lc_fail(err, -1, "negative dimension %lld", (long long)shape[i]);
    /* zero dims are counted as 1 for the overflow test: the strides of the
    ** other axes are still computed from them */
    int64_t d = shape[i] ? shape[i] : 1;
    if (!mul_ok(bytes, d, &bytes)) {
      char want[256];
      lc_shape_format(want, sizeof want, ndim, shape);
      return lc_fail(err, -1, "array size overflows: %s of %lld-byte elements passes 2^63 - 1 bytes",
                  want, (long long)itemsize);
    }
    n *= shape[i];
  }
  *size = n;
  return 0;
}

int lc_layout_contiguous(lc_layout *l, int ndim, const int64_t *shape,
                         int64_t itemsize, char order, char *err) {
  int64_t size;
  if (lc_shape_count(ndim, shape, itemsize, &size, err)) return -1;
  l->ndim = ndim;
  l->size = size;
  l->offset = 0;
  int64_t s = itemsize;
  if (order == 'F') {
    for (int i = 0; i < ndim; i++) {
      l->shape[i] = shape[i];
      l->strides[i] = s;
      s *= shape[i] ? shape[i] : 1;
    }
  } else {
    for (int i = ndim - 1; i >= 0; i--) {
      l->shape[i] = shape[i];
      l->strides[i] = s;
      s *= shape[i] ? shape[i] : 1;
    }
  }
  return 0;
}

int lc_layout_strided(lc_layout *l, int ndim, const int64_t *shape,
                      int nstrides, const int64_t *strides, int64_t itemsize,
                      int64_t *span, char *err) {
  int64_t size;
  if (lc_shape_count(ndim, shape, itemsize, &size, err)) return -1;
  if (nstrides != ndim)
    return lc_fail(err, -1, "%d strides for %d dimensions", nstrides, ndim);
  int64_t lo = 0, hi = 0;
  for (int i = 0; i < ndim; i++) {
    if (itemsize > 0 && strides[i] % itemsize != 0)
      return lc_fail(err, -1, "stride %lld of axis %d is not a multiple of the itemsize %lld",
                  (long long)strides[i], i + 1, (long long)itemsize);
    int64_t reach;
    if (shape[i] == 0) continue;
    if (!mul_ok(shape[i] - 1, strides[i], &reach) ||
        !add_ok(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi))
      return lc_fail(err, -1, "strides overflow");
  }
  int64_t total;
  if (__builtin_sub_overflow(hi, lo, &total) || !add_ok(total, itemsize, &total))
    return lc_fail(err, -1, "strides overflow");
  l->ndim = ndim;
  l->size = size;
  l->offset = -lo;
  memcpy(l->shape, shape, sizeof(int64_t) * (size_t)ndim);
  memcpy(l->strides, strides, sizeof(int64_t) * (size_t)ndim);
  *span = size == 0 ? 0 : total;
  return 0;
}

/* |v| without overflow: a size-0 or size-1 axis may hold INT64_MIN */
static uint64_t iabs64(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }

int lc_layout_like(lc_layout *dst, const lc_layout *src, int64_t itemsize, char *err) {
  int64_t size;
  if (lc_shape_count(src->ndim, src->shape, itemsize, &size, err)) return -1;
  int perm[LC_MAXDIM];
  int n = src->ndim;
  for (int i = 0; i < n; i++) perm[i] = i;
  /* stable insertion sort, largest |stride| first */
  for (int i = 1; i < n; i++) {
    int p = perm[i], j = i;
    while (j > 0 && iabs64(src->strides[perm[j - 1]]) < iabs64(src->strides[p])) {
      perm[j] = perm[j - 1];
      j--;
    }
    perm[j] = p;
  }
  dst->ndim = n;
  dst->size = size;
  dst->offset = 0;
  int64_t s = itemsize;
  for (int k = n - 1; k >= 0; k--) {
    int ax = perm[k];
    dst->shape[ax] = src->shape[ax];
    dst->strides[ax] = s;
    s *= src->shape[ax] ? src->shape[ax] : 1;
  }
  return 0;
}

bool lc_layout_is_c_contiguous(const lc_layout *l, int64_t itemsize) {
  if (l->size == 0) return true;
  int64_t expect = itemsize;
  for (int i = l->ndim - 1; i >= 0; i--) {
    if (l->shape[i] == 1) continue;
    if (l->strides[i] != expect) return false;
    expect *= l->shape[i];
  }
  return true;
}

bool lc_layout_is_f_contiguous(const lc_layout *l, int64_t itemsize) {
  if (l->size == 0) return true;
  int64_t expect = itemsize;
  for (int i = 0; i < l->ndim; i++) {
    if (l->shape[i] == 1) continue;
    if (l->strides[i] != expect) return false;
    expect *= l->shape[i];
  }
  return true;
}

void lc_layout_extent(const lc_layout *l, int64_t itemsize,
                      int64_t *lo, int64_t *hi) {
  if (l->size == 0) {
    *lo = *hi = l->offset;
    return;
  }
  int64_t a = l->offset, b = l->offset + itemsize;
  for (int i = 0; i < l->ndim; i++) {
    int64_t reach = (l->shape[i] - 1) * l->strides[i];
    if (reach < 0) a += reach; else b += reach;
  }
  *lo = a;
  *hi = b;
}

/* The view's bytes as addresses, [*lo, *hi): unsigned arithmetic, so an
** offset below base (a view's lowest element before its offset's origin)
** is still the right address. */
static void view_bytes(uintptr_t base, const lc_layout *l, int64_t itemsize,
                       uintptr_t *lo, uintptr_t *hi) {
  int64_t elo, ehi;
  lc_layout_extent(l, itemsize, &elo, &ehi);
  *lo = base + (uintptr_t)elo;
  *hi = base + (uintptr_t)ehi;
}

bool lc_views_overlap(uintptr_t abase, const lc_layout *a, int64_t aisz,
                      uintptr_t bbase, const lc_layout *b, int64_t bisz) {
  if (a->size == 0 || b->size == 0) return false;
  uintptr_t alo, ahi, blo, bhi;
  view_bytes(abase, a, aisz, &alo, &ahi);
  view_bytes(bbase, b, bisz, &blo, &bhi);
  return alo < bhi && blo < ahi;
}

bool lc_views_same(uintptr_t abase, const lc_layout *a, int64_t aisz,
                   uintptr_t bbase, const lc_layout *b, int64_t bisz) {
  if (aisz != bisz || a->ndim != b->ndim ||
      abase + (uintptr_t)a->offset != bbase + (uintptr_t)b->offset)
    return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i] || (a->shape[i] > 1 && a->strides[i] != b->strides[i]))
      return false;
  return true;
}

int lc_shape_infer(int ndim, int64_t *shape, int64_t size, char *err) {
  char want[256];
  int unknown = -1;
  int64_t known = 1;
  if (ndim < 0 || ndim > LC_MAXDIM)
    return lc_fail(err, -1, "%d dimensions (at most %d)", ndim, LC_MAXDIM);
  lc_shape_format(want, sizeof want, ndim, shape);
  for (int i = 0; i < ndim; i++) {
    if (shape[i] == -1) {
      if (unknown >= 0) return lc_fail(err, -1, "only one dimension can be -1, in %s", want);
      unknown = i;
    } else if (shape[i] < 0) {
      return lc_fail(err, -1, "negative dimension %lld in %s", (long long)shape[i], want);
    } else if (!mul_ok(known, shape[i], &known)) {
      return lc_fail(err, -1, "cannot reshape size %lld into %s", (long long)size, want);
    }
  }
  if (unknown >= 0) {
    if (known == 0 || size % known != 0)
      return lc_fail(err, -1, "cannot reshape size %lld into %s", (long long)size, want);
    shape[unknown] = size / known;
    known = size;
  }
  if (known != size)
    return lc_fail(err, -1, "cannot reshape size %lld into %s", (long long)size, want);
  return 0;
}

/* Try to express newshape over src's memory (after NumPy's no-copy reshape
** rule): old and new axes are matched in groups of equal element count, and
** each group of old axes must be contiguous in the reading order. */
static bool reshape_view(const lc_layout *src, int nnd, const int64_t *nd,
                         int64_t itemsize, char order, int64_t *ns) {
  int64_t od[LC_MAXDIM], os[LC_MAXDIM];
  int ond = 0;
  for (int i = 0; i < src->ndim; i++)
    if (src->shape[i] != 1) {
      od[ond] = src->shape[i];
      os[ond] = src->strides[i];
      ond++;
    }
  bool f = order == 'F';
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < nnd && oi < ond) {
    int64_t np = nd[ni], op = od[oi];
    while (np != op) {
      if (np < op) {
        if (nj >= nnd) return false;
        np *= nd[nj++];
      } else {
        if (oj >= ond) return false;
        op *= od[oj++];
      }
    }
    /* a product that overflows is no stride: the group is not contiguous */
    for (int ok = oi; ok < oj - 1; ok++) {
      int64_t next;
      if (f ? !mul_ok(od[ok], os[ok], &next) || os[ok + 1] != next
            : !mul_ok(od[ok + 1], os[ok + 1], &next) || os[ok] != next)
        return false;
    }
    /* the stride of a new size-1 axis can exceed every old one (it is any
    ** value); one that overflows gives up the view, and a copy is made */
    if (f) {
      ns[ni] = os[oi];
      for (int nk = ni + 1; nk < nj; nk++)
        if (!mul_ok(ns[nk - 1], nd[nk - 1], &ns[nk])) return false;
    } else {
      ns[nj - 1] = os[oj - 1];
      for (int nk = nj - 1; nk > ni; nk--)
        if (!mul_ok(ns[nk], nd[nk], &ns[nk - 1])) return false;
    }
    ni = nj++;
    oi = oj++;
  }
  /* trailing size-1 axes take any stride; reuse a neighbour's */
  int64_t last = ni >= 1 ? ns[ni - 1] : itemsize;
  for (int nk = ni; nk < nnd; nk++) ns[nk] = last;
  return true;
}

int lc_layout_reshape(const lc_layout *src, int ndim, const int64_t *newshape,
                      int64_t itemsize, char order, lc_layout *dst, char *err) {
  int64_t size;
  if (lc_shape_count(ndim, newshape, itemsize, &size, err)) return LC_RESHAPE_ERROR;
  if (size != src->size) {
    char want[256];
    lc_shape_format(want, sizeof want, ndim, newshape);
    return lc_fail(err, LC_RESHAPE_ERROR, "cannot reshape size %lld into %s",
                   (long long)src->size, want);
  }
  int64_t ns[LC_MAXDIM];
  if (size > 0 && reshape_view(src, ndim, newshape, itemsize, order, ns)) {
    dst->ndim = ndim;
    dst->size = size;
    dst->offset = src->offset;
    memcpy(dst->shape, newshape, sizeof(int64_t) * (size_t)ndim);
    memcpy(dst->strides, ns, sizeof(int64_t) * (size_t)ndim);
    return LC_RESHAPE_VIEW;
  }
  lc_layout_contiguous(dst, ndim, newshape, itemsize, order, err);
  if (size == 0) {          /* nothing to copy: any strides will do */
    dst->offset = src->offset;
    return LC_RESHAPE_VIEW;
  }
  return LC_RESHAPE_COPY;
}

int lc_layout_transpose(lc_layout *l, const int *perm, char *err) {
  lc_layout t = *l;
  bool seen[LC_MAXDIM] = {false};
  for (int i = 0; i < l->ndim; i++) {
    int p = perm ? perm[i] : l->ndim - 1 - i;
    if (p < 0 || p >= l->ndim)
      return lc_fail(err, -1, "axis %lld out of range for %d dimensions", (long long)p + 1, l->ndim);
    if (seen[p]) return lc_fail(err, -1, "axis %d repeated in permutation", p + 1);
    seen[p] = true;
    t.shape[i] = l->shape[p];
    t.strides[i] = l->strides[p];
  }
  *l = t;
  return 0;
}

int lc_layout_slice(lc_layout *l, int axis, int64_t start, int64_t count,
                    int64_t step, char *err) {
  if (axis < 0 || axis >= l->ndim)
    return lc_fail(err, -1, "axis %lld out of range for %d dimensions", (long long)axis + 1, l->ndim);
  if (step == 0) return lc_fail(err, -1, "step cannot be zero");
  if (count < 0) return lc_fail(err, -1, "negative count %lld", (long long)count);
  int64_t n = l->shape[axis], stride;
  if (!mul_ok(l->strides[axis], step, &stride)) return lc_fail(err, -1, "step overflows");
  if (count > 0) {
    int64_t last;
    if (start < 0 || start >= n ||
        !mul_ok(count - 1, step, &last) || !add_ok(start, last, &last) ||
        last < 0 || last >= n)
      return lc_fail(err, -1, "range out of bounds for axis %d of size %lld",
                  axis + 1, (long long)n);
    l->offset += start * l->strides[axis];
  }
  l->shape[axis] = count;
  l->strides[axis] = stride;
  recount(l);
  return 0;
}

int lc_layout_select(lc_layout *l, int axis, int64_t i, char *err) {
  if (axis < 0 || axis >= l->ndim)
    return lc_fail(err, -1, "axis %lld out of range for %d dimensions", (long long)axis + 1, l->ndim);
  if (i < 0 || i >= l->shape[axis])
    return lc_fail(err, -1, "index %lld out of bounds for axis %d of size %lld",
                one_based(i), axis + 1, (long long)l->shape[axis]);
  l->offset += i * l->strides[axis];
  for (int k = axis; k < l->ndim - 1; k++) {
    l->shape[k] = l->shape[k + 1];
    l->strides[k] = l->strides[k + 1];
  }
  l->ndim--;
  recount(l);
  return 0;
}

int lc_layout_squeeze(lc_layout *l, int axis, char *err) {
  if (axis >= 0) {
    if (axis >= l->ndim)
      return lc_fail(err, -1, "axis %lld out of range for %d dimensions", (long long)axis + 1, l->ndim);
    if (l->shape[axis] != 1)
      return lc_fail(err, -1, "cannot squeeze axis %d of size %lld", axis + 1,
                  (long long)l->shape[axis]);
    return lc_layout_select(l, axis, 0, err);
  }
  int k = 0;
  for (int i = 0; i < l->ndim; i++)
    if (l->shape[i] != 1) {
      l->shape[k] = l->shape[i];
      l->strides[k] = l->strides[i];
      k++;
    }
  l->ndim = k;
  return 0;
}

int lc_layout_view_itemsize(lc_layout *l, int64_t old_itemsize,
                            int64_t new_itemsize, char *err) {
  if (old_itemsize < 1 || new_itemsize < 1)
    return lc_fail(err, -1, "itemsize %lld is not positive",
                (long long)(old_itemsize < 1 ? old_itemsize : new_itemsize));
  if (old_itemsize == new_itemsize) return 0;
  if (l->ndim == 0)
    return lc_fail(err, -1, "a 0-d array cannot change its itemsize from %lld to %lld",
                (long long)old_itemsize, (long long)new_itemsize);
  int last = l->ndim - 1;
  if (l->shape[last] != 1 && l->strides[last] != old_itemsize)
    return lc_fail(err, -1, "the last axis must be contiguous to change the itemsize");
  int64_t bytes = l->shape[last] * old_itemsize;
  if (bytes % new_itemsize != 0)
    return lc_fail(err, -1, "the last axis (%lld bytes) is not a multiple of the new itemsize %lld",
                (long long)bytes, (long long)new_itemsize);
  lc_layout t = *l;
  t.shape[last] = bytes / new_itemsize;
  t.strides[last] = new_itemsize;
  /* the same bytes; but an empty view's other axes may not fit a wider
  ** itemsize, as zeros would not make them */
  if (lc_shape_count(t.ndim, t.shape, new_itemsize, &t.size, err)) return -1;
  *l = t;
  return 0;
}

bool lc_layout_same_shape(const lc_layout *a, const lc_layout *b) {
  int i = 0, j = 0;
  for (;;) {
    while (i < a->ndim && a->shape[i] == 1) i++;
    while (j < b->ndim && b->shape[j] == 1) j++;
    if (i == a->ndim || j == b->ndim) return i == a->ndim && j == b->ndim;
    if (a->shape[i++] != b->shape[j++]) return false;
  }
}

int lc_merge_axes(int ndim, int64_t *shape, int nops, int64_t *const *strides) {
  int kept = 0;
  for (int ax = 0; ax < ndim; ax++) {
    int64_t n = shape[ax];
    if (n == 1) continue;
    bool merge = kept > 0;
    for (int o = 0; o < nops && merge; o++)
      merge = strides[o][kept - 1] == strides[o][ax] * n;
    if (merge) {
      shape[kept - 1] *= n;
    } else {
      shape[kept] = n;
      kept++;
    }
    for (int o = 0; o < nops; o++) strides[o][kept - 1] = strides[o][ax];
  }
  return kept;
}

void lc_shape_format(char *buf, size_t len, int ndim, const int64_t *shape) {
  size_t n = 0;
  if (len == 0) return;
  buf[0] = '\0';
  n += (size_t)snprintf(buf + n, len - n, "{");
  for (int i = 0; i < ndim && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, i ? ", %lld" : "%lld", (long long)shape[i]);
  if (n < len) snprintf(buf + n, len - n, "}");
}

int lc_broadcast_shapes(int n, const int *ndims, const int64_t *const *shapes,
                        int *ndim, int64_t *shape, char *err) {
  int nd = 0;
  for (int i = 0; i < n; i++)     /* each in 0..LC_MAXDIM: the shapes of layouts */
    if (ndims[i] > nd) nd = ndims[i];
  for (int ax = 0; ax < nd; ax++) {
    int64_t size = 1;
    int from = -1;                 /* the operand that gave size */
    for (int i = 0; i < n; i++) {
      int k = ax - (nd - ndims[i]);          /* the operand's own axis */
      if (k < 0) continue;
      int64_t s = shapes[i][k];
      if (s == 1) continue;
      if (from >= 0 && s != size) {
        char a[LC_SHAPE_STRLEN], b[LC_SHAPE_STRLEN];
        lc_shape_format(a, sizeof a, ndims[from], shapes[from]);
        lc_shape_format(b, sizeof b, ndims[i], shapes[i]);
        return lc_fail(err, -1, "shapes %s and %s do not broadcast (axis %d of the result: %lld against %lld)",
                    a, b, ax + 1, (long long)size, (long long)s);
      }
      size = s;
      from = i;
    }
    shape[ax] = size;
  }
  int64_t count;
  if (lc_shape_count(nd, shape, 1, &count, err)) return -1;
  *ndim = nd;
  return 0;
}

int lc_layout_broadcast(const lc_layout *src, int64_t itemsize, int ndim,
                        const int64_t *shape, lc_layout *dst, char *err) {
  if (ndim < src->ndim || ndim > LC_MAXDIM)
    return lc_fail(err, -1, "cannot broadcast %d dimensions to %d", src->ndim, ndim);
  /* already that shape (array math's operands, mostly): src as it is, its
  ** count checked when it was made */
  if (ndim == src->ndim && memcmp(src->shape, shape, sizeof *shape * (size_t)ndim) == 0) {
    lc_layout_copy(dst, src);
    return 0;
  }
  lc_layout out;              /* every axis of it is written below */
  out.offset = src->offset;
  int lead = ndim - src->ndim;
  for (int ax = ndim - 1; ax >= 0; ax--) {
    int k = ax - lead;
    if (k >= 0 && src->shape[k] == shape[ax]) {
      out.shape[ax] = src->shape[k];
      out.strides[ax] = src->strides[k];
    } else if (k < 0 || src->shape[k] == 1) {
      out.shape[ax] = shape[ax];
      out.strides[ax] = 0;
    } else {
      char a[LC_SHAPE_STRLEN], b[LC_SHAPE_STRLEN];
      lc_shape_format(a, sizeof a, src->ndim, src->shape);
      lc_shape_format(b, sizeof b, ndim, shape);
      return lc_fail(err, -1, "shape %s does not broadcast to %s", a, b);
    }
  }
  out.ndim = ndim;
  /* stride 0 takes no memory, but the count must fit as any other */
  if (lc_shape_count(ndim, out.shape, itemsize, &out.size, err)) return -1;
  lc_layout_copy(dst, &out);
  return 0;
}
