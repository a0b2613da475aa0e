/*
** libFuzzer target for src/layout.c: the input is decoded into a base
** layout (contiguous or with explicit strides) and a sequence of slice,
** select, transpose, squeeze, reshape, view-itemsize and broadcast calls.
** Beyond "no crash, no undefined behaviour", every layout a call accepts is
** checked: its size is the product of its shape, its shape passes
** lc_shape_count for its itemsize, each of its elements lies inside
** the buffer of the base layout (a view never escapes its memory), the
** extent is that of its elements, and a reshape view visits the same
** elements, in the same order, as the layout it reshapes.
*/
#include "layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const uint8_t *p; size_t n; } input;

static uint8_t byte(input *in) {
  if (!in->n) return 0;
  in->n--;
  return *in->p++;
}

static int64_t raw64(input *in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | byte(in);
  return (int64_t)v;
}

/* mostly small numbers, signed; now and then any 64-bit value */
static int64_t num(input *in) {
  uint8_t b = byte(in);
  if (b == 0xff) return raw64(in);
  return (int64_t)(int8_t)b % 9;
}

static int64_t dim(input *in) {
  uint8_t b = byte(in);
  if (b == 0xff) return raw64(in);
  return b % 6;
}

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, __VA_ARGS__); \
                                      fprintf(stderr, "\n"); abort(); } } while (0)

/* Offsets of every element in C or F order, at most max; -1 if more. */
static int64_t offsets(const lc_layout *l, char order, int64_t *out, int64_t max) {
  if (l->size > max) return -1;
  if (l->size == 0) return 0;
  int64_t idx[LC_MAXDIM] = {0};
  for (int64_t k = 0; k < l->size; k++) {
    int64_t off = l->offset;
    for (int i = 0; i < l->ndim; i++) off += idx[i] * l->strides[i];
    out[k] = off;
    for (int j = 0; j < l->ndim; j++) {
      int i = order == 'F' ? j : l->ndim - 1 - j;
      if (++idx[i] < l->shape[i]) break;
      idx[i] = 0;
    }
  }
  return l->size;
}

#define MAXEL 4096
static int64_t offs_a[MAXEL], offs_b[MAXEL];

/* The invariants of a layout inside a buffer of [lo, hi). */
static void check_layout(const lc_layout *l, int64_t itemsize, int64_t lo, int64_t hi) {
  CHECK(l->ndim >= 0 && l->ndim <= LC_MAXDIM, "ndim %d", l->ndim);
  int64_t n = 1;
  bool overflow = false;
  for (int i = 0; i < l->ndim; i++) {
    CHECK(l->shape[i] >= 0, "negative dimension");
    if (__builtin_mul_overflow(n, l->shape[i], &n)) overflow = true;
  }
  CHECK(!overflow && n == l->size, "size %lld is not the product of the shape", (long long)l->size);
  char why[LC_ERRLEN];
  int64_t count;
  CHECK(lc_shape_count(l->ndim, l->shape, itemsize, &count, why) == 0 && count == l->size,
        "a layout's shape fails the check every shape passes: %s", why);
  int64_t elo, ehi;
  lc_layout_extent(l, itemsize, &elo, &ehi);
  if (l->size == 0) {
    CHECK(elo == ehi, "an empty layout has a non-empty extent");
    return;
  }
  CHECK(elo >= lo && ehi <= hi && elo < ehi, "extent [%lld, %lld) outside the buffer [%lld, %lld)",
        (long long)elo, (long long)ehi, (long long)lo, (long long)hi);
  int64_t m = offsets(l, 'C', offs_a, MAXEL);
  if (m < 0) return;
  int64_t mn = offs_a[0], mx = offs_a[0];
  for (int64_t k = 0; k < m; k++) {
    CHECK(offs_a[k] >= lo && offs_a[k] + itemsize <= hi, "element %lld at byte %lld is outside the buffer",
          (long long)k, (long long)offs_a[k]);
    if (offs_a[k] < mn) mn = offs_a[k];
    if (offs_a[k] > mx) mx = offs_a[k];
  }
  CHECK(elo == mn && ehi == mx + itemsize, "extent [%lld, %lld) is not the elements' [%lld, %lld)",
        (long long)elo, (long long)ehi, (long long)mn, (long long)(mx + itemsize));
  /* the overlap test never misses a shared byte: each element's bytes,
  ** as a one-element view at another base address, overlap the layout */
  const uintptr_t base = (uintptr_t)1 << 40;
  lc_layout one = {.ndim = 0, .size = 1, .offset = 0};
  for (int64_t k = 0; k < m; k++)
    CHECK(lc_views_overlap(base, l, itemsize, base + (uintptr_t)offs_a[k], &one, itemsize),
          "element %lld is not seen to overlap the view", (long long)k);
  CHECK(lc_views_same(base, l, itemsize, base, l, itemsize), "a view is not the same as itself");
}

static const int64_t itemsizes[] = {1, 2, 4, 8, 16, 3, 0, -8};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  input in = {data, size};
  char err[LC_ERRLEN];
  int64_t itemsize = itemsizes[byte(&in) % 8];
  int ndim = byte(&in) % (LC_MAXDIM + 3) - 1;      /* -1 .. MAXDIM + 1 */
  int64_t shape[LC_MAXDIM + 2], strides[LC_MAXDIM + 2];
  for (int i = 0; i < ndim; i++) shape[i] = dim(&in);
  lc_layout l;
  int64_t lo = 0, hi;
  uint8_t how = byte(&in) % 3;
  if (how < 2) {
    if (lc_layout_contiguous(&l, ndim, shape, itemsize, how ? 'F' : 'C', err)) return 0;
    hi = l.size * itemsize;
    CHECK(itemsize <= 0 || (how ? lc_layout_is_f_contiguous(&l, itemsize)
                                : lc_layout_is_c_contiguous(&l, itemsize)), "new layout not contiguous");
  } else {
    int nstrides = ndim < 0 ? 0 : ndim;
    if (byte(&in) == 0xfe) nstrides--;
    for (int i = 0; i < nstrides; i++) {
      int64_t s = num(&in), k = byte(&in) % 17;
      if (__builtin_mul_overflow(s, k, &strides[i])) strides[i] = s;
    }
    if (lc_layout_strided(&l, ndim, shape, nstrides, strides, itemsize, &hi, err)) return 0;
  }
  if (itemsize <= 0) return 0;   /* accepted or not, nothing more to check */
  check_layout(&l, itemsize, lo, hi);

  while (in.n) {
    lc_layout t = l;
    int rc = 0;
    switch (byte(&in) % 9) {
      case 0: {
        int axis = (int)num(&in);
        int64_t start = num(&in), count = num(&in), step = num(&in);
        rc = lc_layout_slice(&t, axis, start, count, step, err);
        break;
      }
      case 1: {
        int axis = (int)num(&in);
        rc = lc_layout_select(&t, axis, num(&in), err);
        break;
      }
      case 2: {
        int perm[LC_MAXDIM];
        bool reverse = byte(&in) & 1;
        for (int i = 0; i < t.ndim; i++) perm[i] = (int)num(&in);
        rc = lc_layout_transpose(&t, reverse ? NULL : perm, err);
        break;
      }
      case 3:
        rc = lc_layout_squeeze(&t, (int)num(&in), err);
        break;
      case 4: {
        int64_t newsize = itemsizes[byte(&in) % 6];
        rc = lc_layout_view_itemsize(&t, itemsize, newsize, err);
        if (rc == 0) {
          check_layout(&t, newsize, lo, hi);
          continue;     /* the base keeps its itemsize */
        }
        break;
      }
      case 5: {
        int nd = byte(&in) % (LC_MAXDIM + 2);
        int64_t ns[LC_MAXDIM + 1];
        for (int i = 0; i < nd; i++) ns[i] = byte(&in) == 0xfd ? -1 : dim(&in);
        char order = byte(&in) & 1 ? 'F' : 'C';
        if (lc_shape_infer(nd, ns, l.size, err)) { rc = -1; break; }
        int64_t prod = 1;
        for (int i = 0; i < nd; i++) prod *= ns[i];
        CHECK(prod == l.size, "inferred shape has another size");
        lc_layout d;
        int how2 = lc_layout_reshape(&l, nd, ns, itemsize, order, &d, err);
        if (how2 == LC_RESHAPE_ERROR) { rc = -1; break; }
        CHECK(d.ndim == nd && memcmp(d.shape, ns, sizeof ns[0] * (size_t)nd) == 0,
              "reshape gave another shape");
        if (how2 == LC_RESHAPE_COPY) {
          CHECK(d.offset == 0 && (order == 'F' ? lc_layout_is_f_contiguous(&d, itemsize)
                                               : lc_layout_is_c_contiguous(&d, itemsize)),
                "a reshape copy's layout is not contiguous");
          check_layout(&d, itemsize, 0, d.size * itemsize);
          continue;
        }
        /* a view: the same elements in the reading order */
        int64_t na = offsets(&l, order, offs_a, MAXEL), nb = offsets(&d, order, offs_b, MAXEL);
        CHECK(na == nb, "reshape view has another number of elements");
        for (int64_t k = 0; k < na; k++)
          CHECK(offs_a[k] == offs_b[k], "reshape view element %lld at %lld, not %lld",
                (long long)k, (long long)offs_b[k], (long long)offs_a[k]);
        t = d;
        break;
      }
      case 6: {
        CHECK(lc_layout_same_shape(&l, &t), "a layout differs in shape from itself");
        char buf[64];
        lc_shape_format(buf, (size_t)(byte(&in) % 64), l.ndim, l.shape);
        (void)lc_layout_is_c_contiguous(&l, itemsize);
        (void)lc_layout_is_f_contiguous(&l, itemsize);
        continue;
      }
      case 7: {
        /* broadcast to the shape with axes added in front, size-1 axes
        ** stretched, or anything at all */
        int lead = byte(&in) % 3, nd = t.ndim + lead;
        if (nd > LC_MAXDIM) nd = LC_MAXDIM;
        int64_t bs[LC_MAXDIM];
        for (int i = 0; i < nd; i++) {
          int k = i - (nd - t.ndim);
          bs[i] = k >= 0 && t.shape[k] != 1 && byte(&in) % 4 ? t.shape[k] : dim(&in);
        }
        lc_layout b;
        rc = lc_layout_broadcast(&t, itemsize, nd, bs, &b, err);
        if (rc == 0) {
          check_layout(&b, itemsize, lo, hi);
          continue;     /* a view with repeated elements: go on from the base */
        }
        break;
      }
      default: {
        lc_layout like;
        CHECK(lc_layout_like(&like, &l, itemsize, err) == 0, "layout_like refused a layout: %s", err);
        CHECK(like.ndim == l.ndim && memcmp(like.shape, l.shape, sizeof l.shape[0] * (size_t)l.ndim) == 0,
              "layout_like changed the shape");
        check_layout(&like, itemsize, 0, l.size * itemsize);
        continue;
      }
    }
    if (rc) {
      CHECK(rc == -1 && memchr(err, '\0', LC_ERRLEN) && err[0], "bad error return");
      continue;
    }
    check_layout(&t, itemsize, lo, hi);
    l = t;   /* go on from the view */
  }
  return 0;
}
