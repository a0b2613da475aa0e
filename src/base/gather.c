/*
** gather: index arrays and masks on host-addressable memory (gather.h).
** Each element's address comes from its C-order number unravelled over
** the views' shapes: simple and correct for any strides; the contiguous
** fast paths are the kernels' business.
*/
#include "gather.h"

#include <string.h>

void lc_gather_pack(const lc_gather_call *c, lc_gather_args *a) {
  memset(a, 0, sizeof *a);
  a->axis = c->axis;
  a->naxes = c->naxes;
  a->itemsize = c->itemsize;
  a->arr_ndim = c->arr_lay.ndim;
  a->idx_ndim = c->idx_lay.ndim;
  a->val_ndim = c->val_lay.ndim;
  a->flat = c->flat;
  a->ntrue = c->ntrue;
  a->n = 1;
  for (int i = 0; i < c->naxes; i++) a->n *= c->arr_lay.shape[c->axis + i];
  for (int i = 0; i < c->arr_lay.ndim; i++) {
    a->arr_shape[i] = c->arr_lay.shape[i];
    a->arr_strides[i] = c->arr_lay.strides[i];
  }
  for (int i = 0; i < c->idx_lay.ndim; i++) {
    a->idx_shape[i] = c->idx_lay.shape[i];
    a->idx_strides[i] = c->idx_lay.strides[i];
  }
  for (int i = 0; i < c->val_lay.ndim; i++) {
    a->val_shape[i] = c->val_lay.shape[i];
    a->val_strides[i] = c->val_lay.strides[i];
  }
  a->count = c->op == LC_GATHER_CHECK ? c->idx_lay.size
           : c->op == LC_GATHER_COMPACT || c->op == LC_GATHER_COUNT ? c->arr_lay.size
           : c->val_lay.size;
}

/* The byte offset of element e (C order) of a view; its coordinates into
** coord when not NULL. */
static int64_t unravel(int64_t e, int ndim, const int64_t *shape, const int64_t *strides,
                       int64_t *coord) {
  if (coord == NULL && ndim <= 1) return ndim ? e * strides[0] : 0;
  int64_t off = 0;
  for (int d = ndim - 1; d >= 0; d--) {
    int64_t i = e % shape[d];
    e /= shape[d];
    off += i * strides[d];
    if (coord) coord[d] = i;
  }
  return off;
}

static int64_t load_index(const lc_gather_call *c, int64_t j) {
  int64_t v;
  memcpy(&v, c->idx + c->idx_lay.offset +
         unravel(j, c->idx_lay.ndim, c->idx_lay.shape, c->idx_lay.strides, NULL), sizeof v);
  return v;
}

/* one element's bytes, the common sizes as single moves */
static inline void copy_item(char *dst, const char *src, int64_t size) {
  switch (size) {
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 2: memcpy(dst, src, 2); break;
    case 1: *dst = *src; break;
    default: memcpy(dst, src, (size_t)size);
  }
}

/* *p += *q for an element of dt (integers wrap; bool is or) */
static void add_element(lc_typecode dt, char *p, const char *q) {
  switch (dt) {
#define ADD(code, T) case code: { T x, y; memcpy(&x, p, sizeof x); memcpy(&y, q, sizeof y); \
      x = (T)(x + y); memcpy(p, &x, sizeof x); break; }
    ADD(LC_INT8, uint8_t) ADD(LC_UINT8, uint8_t) ADD(LC_INT16, uint16_t)
    ADD(LC_UINT16, uint16_t) ADD(LC_INT32, uint32_t) ADD(LC_UINT32, uint32_t)
    ADD(LC_INT64, uint64_t) ADD(LC_UINT64, uint64_t) ADD(LC_FLOAT32, float)
    ADD(LC_FLOAT64, double)
#undef ADD
    case LC_BOOL: *p = (char)(*p || *q); break;
    default: {          /* the narrow floats, through double */
      const lc_dtype *d = &lc_dtypes[dt];
      if (lc_dtype_is_narrow_float(d))
        lc_dtype_store_float(d, p, lc_dtype_load_float(d, p) + lc_dtype_load_float(d, q));
      break;
    }
  }
}

static void check(const lc_gather_call *c, int64_t n) {
  c->check[0] = -1;
  c->check[1] = 0;
  for (int64_t j = 0; j < c->idx_lay.size; j++) {
    int64_t v = load_index(c, j);
    if (lc_gather_norm(v, n) < 0) {
      c->check[0] = j;
      c->check[1] = v;
      return;
    }
  }
}

static void count(const lc_gather_call *c) {
  const lc_layout *l = &c->arr_lay;
  long long n = 0;
  for (int64_t e = 0; e < l->size; e++)
    n += c->arr[l->offset + unravel(e, l->ndim, l->shape, l->strides, NULL)] != 0;
  c->check[0] = n;
}

static void compact(const lc_gather_call *c) {
  const lc_layout *ml = &c->arr_lay;
  int64_t coord[LC_MAXDIM], cum = 0;

  for (int64_t e = 0; e < ml->size; e++) {
    int64_t off = ml->offset + unravel(e, ml->ndim, ml->shape, ml->strides,
                                       c->flat ? NULL : coord);
    if (!c->arr[off]) continue;
    cum++;
    int64_t *out = (int64_t *)(void *)(c->val + c->val_lay.offset) + (cum - 1);
    if (c->flat) {
      *out = e + 1;
    } else {
      for (int d = 0; d < ml->ndim; d++) out[d * c->ntrue] = coord[d] + 1;
    }
  }
}

void lc_gather_host(const lc_gather_call *c) {
  int64_t n = 1, isz = c->itemsize;
  for (int i = 0; i < c->naxes; i++) n *= c->arr_lay.shape[c->axis + i];
  const lc_layout *vl = &c->val_lay;
  switch (c->op) {
    case LC_GATHER_CHECK: check(c, n); return;
    case LC_GATHER_COMPACT: compact(c); return;
    case LC_GATHER_COUNT: count(c); return;
    default: break;
  }
  /* val is arr's leading axes (pre), idx's axes, arr's trailing axes
  ** (post): the loops follow them, so that an element costs an unravel
  ** of its index over the indexed axes and of its place in post (each
  ** free for one axis) */
  const lc_layout *al = &c->arr_lay, *il = &c->idx_lay;
  int ax = c->axis, ni = il->ndim, post = ax + c->naxes, npost = al->ndim - post;
  int64_t pre_n = 1, post_n = 1;
  for (int d = 0; d < ax; d++) pre_n *= al->shape[d];
  for (int d = post; d < al->ndim; d++) post_n *= al->shape[d];
  const int64_t *vidx_strides = vl->strides + ax, *vpost_strides = vl->strides + ax + ni;
  for (int64_t p = 0; p < pre_n; p++) {
    char *ap = c->arr + al->offset + unravel(p, ax, al->shape, al->strides, NULL);
    char *vp = c->val + vl->offset + unravel(p, ax, vl->shape, vl->strides, NULL);
    for (int64_t j = 0; j < il->size; j++) {
      int64_t v;
      memcpy(&v, c->idx + il->offset + unravel(j, ni, il->shape, il->strides, NULL), sizeof v);
      int64_t k = lc_gather_norm(v, n);
      char *aj = ap + unravel(k, c->naxes, al->shape + ax, al->strides + ax, NULL);
      char *vj = vp + unravel(j, ni, il->shape, vidx_strides, NULL);
      for (int64_t q = 0; q < post_n; q++) {
        char *a = aj + unravel(q, npost, al->shape + post, al->strides + post, NULL);
        char *e = vj + unravel(q, npost, al->shape + post, vpost_strides, NULL);
        switch (c->op) {
          case LC_GATHER_TAKE: copy_item(e, a, isz); break;
          case LC_GATHER_PUT: copy_item(a, e, isz); break;
          default: add_element(c->dtype, a, e); break;
        }
      }
    }
  }
}
