/*
** Unit tests for src/layout.c (run them as unit.h says).
** Strides and offsets are in bytes; most layouts use itemsize 8.
*/
#include "layout.h"

#include "unit.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* A literal int64 vector as the two arguments (pointer, count); NONE is
** the empty one (0-d shapes), ANY skips the strides in CHECK_LAYOUT. */
#define V(...) ((const int64_t[]){__VA_ARGS__}), \
               (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
static const int64_t none[1] = {0};
#define NONE none, 0
#define ANY NULL, -1

#define P2(n) ((int64_t)1 << (n))

static void fmtv(char *buf, size_t len, int n, const int64_t *v) {
  size_t k = (size_t)snprintf(buf, len, "{");
  for (int i = 0; i < n && k < len; i++)
    k += (size_t)snprintf(buf + k, len - k, i ? ", %lld" : "%lld", (long long)v[i]);
  if (k < len) snprintf(buf + k, len - k, "}");
}

static int check_layout(const char *file, int line, const char *name, const lc_layout *l,
                        int64_t offset, int64_t size, const int64_t *shape, int nshape,
                        const int64_t *strides, int nstrides) {
  char got[300], want[300];
  if (l->ndim != nshape || memcmp(l->shape, shape, sizeof(int64_t) * (size_t)nshape) != 0) {
    fmtv(got, sizeof got, l->ndim, l->shape);
    fmtv(want, sizeof want, nshape, shape);
    return failf(file, line, "%s.shape is %s, expected %s", name, got, want);
  }
  if (strides && memcmp(l->strides, strides, sizeof(int64_t) * (size_t)nstrides) != 0) {
    fmtv(got, sizeof got, l->ndim, l->strides);
    fmtv(want, sizeof want, nstrides, strides);
    return failf(file, line, "%s.strides is %s, expected %s", name, got, want);
  }
  if (l->offset != offset)
    return failf(file, line, "%s.offset is %lld, expected %lld", name,
                 (long long)l->offset, (long long)offset);
  if (l->size != size)
    return failf(file, line, "%s.size is %lld, expected %lld", name,
                 (long long)l->size, (long long)size);
  return 0;
}

/* CHECK_LAYOUT(l, offset, size, V(shape...), V(strides...)) */
#define CHECK_LAYOUT(l, offset, size, shape, strides) do { \
    if (check_layout(__FILE__, __LINE__, #l, &(l), offset, size, shape, strides)) return 1; \
  } while (0)

/* a and b describe the same view (e.g. after a call that had to fail) */
#define CHECK_SAME(a, b) do { \
    const lc_layout *b_ = &(b); \
    if (check_layout(__FILE__, __LINE__, #a, &(a), b_->offset, b_->size, \
                     b_->shape, b_->ndim, b_->strides, b_->ndim)) return 1; \
  } while (0)

#define CHECK_EXTENT(l, itemsize, lo, hi) do { \
    int64_t lo_, hi_; \
    lc_layout_extent(&(l), itemsize, &lo_, &hi_); \
    if (lo_ != (lo) || hi_ != (hi)) \
      return failf(__FILE__, __LINE__, "extent of %s is [%lld, %lld), expected [%lld, %lld)", \
                   #l, (long long)lo_, (long long)hi_, (long long)(lo), (long long)(hi)); \
  } while (0)

/* ---- building layouts ------------------------------------------------ */

static int contig(lc_layout *l, char order, int64_t itemsize, const int64_t *shape, int ndim) {
  return lc_layout_contiguous(l, ndim, shape, itemsize, order, err);
}

static int strided(lc_layout *l, int64_t *span, int64_t itemsize,
                   const int64_t *shape, int ndim, const int64_t *strides, int nstrides) {
  return lc_layout_strided(l, ndim, shape, nstrides, strides, itemsize, span, err);
}

static int reshape(const lc_layout *src, lc_layout *dst, char order,
                   const int64_t *shape, int ndim) {
  return lc_layout_reshape(src, ndim, shape, 8, order, dst, err);
}

/* Any layout, unchecked (for odd strides that lc_layout_strided refuses
** or would move). */
static lc_layout raw(int64_t offset, const int64_t *shape, int ndim,
                     const int64_t *strides, int nstrides) {
  lc_layout l;
  memset(&l, 0, sizeof l);
  l.ndim = ndim;
  l.offset = offset;
  l.size = 1;
  for (int i = 0; i < ndim; i++) {
    l.shape[i] = shape[i];
    l.strides[i] = i < nstrides ? strides[i] : 0;
    l.size *= shape[i];
  }
  return l;
}

#define C8(l, ...) CHECK_OK(contig(&(l), 'C', 8, V(__VA_ARGS__)))
#define F8(l, ...) CHECK_OK(contig(&(l), 'F', 8, V(__VA_ARGS__)))

/* ---- contiguous layouts ------------------------------------------------ */

static int test_contiguous_c(void) {
  lc_layout l;
  C8(l, 2, 3, 4);
  CHECK_LAYOUT(l, 0, 24, V(2, 3, 4), V(96, 32, 8));
  CHECK_OK(contig(&l, 'C', 4, V(5)));
  CHECK_LAYOUT(l, 0, 5, V(5), V(4));
  CHECK_OK(contig(&l, 'C', 2, V(3, 1, 2)));
  CHECK_LAYOUT(l, 0, 6, V(3, 1, 2), V(4, 4, 2));
  return 0;
}

static int test_contiguous_f(void) {
  lc_layout l;
  F8(l, 2, 3, 4);
  CHECK_LAYOUT(l, 0, 24, V(2, 3, 4), V(8, 16, 48));
  CHECK_OK(contig(&l, 'F', 4, V(3, 1, 2)));
  CHECK_LAYOUT(l, 0, 6, V(3, 1, 2), V(4, 12, 12));
  return 0;
}

static int test_contiguous_zero_dims(void) {
  /* as NumPy: a zero dimension counts as 1 for the strides of the others */
  lc_layout l;
  C8(l, 2, 0, 3);
  CHECK_LAYOUT(l, 0, 0, V(2, 0, 3), V(24, 24, 8));
  F8(l, 2, 0, 3);
  CHECK_LAYOUT(l, 0, 0, V(2, 0, 3), V(8, 16, 16));
  C8(l, 0);
  CHECK_LAYOUT(l, 0, 0, V(0), V(8));
  return 0;
}

static int test_contiguous_0d(void) {
  lc_layout l;
  CHECK_OK(contig(&l, 'C', 8, NONE));
  CHECK_LAYOUT(l, 0, 1, NONE, NONE);
  CHECK_OK(contig(&l, 'F', 8, NONE));
  CHECK_LAYOUT(l, 0, 1, NONE, NONE);
  CHECK(lc_layout_is_c_contiguous(&l, 8));
  CHECK(lc_layout_is_f_contiguous(&l, 8));
  return 0;
}

/* ---- contiguity predicates ----------------------------------------------- */

static int test_contiguity_basic(void) {
  lc_layout l;
  C8(l, 2, 3);
  CHECK(lc_layout_is_c_contiguous(&l, 8));
  CHECK(!lc_layout_is_f_contiguous(&l, 8));
  CHECK(!lc_layout_is_c_contiguous(&l, 4));      /* another itemsize */
  F8(l, 2, 3);
  CHECK(!lc_layout_is_c_contiguous(&l, 8));
  CHECK(lc_layout_is_f_contiguous(&l, 8));
  C8(l, 7);
  CHECK(lc_layout_is_c_contiguous(&l, 8));
  CHECK(lc_layout_is_f_contiguous(&l, 8));
  l = raw(0, V(3, 4), V(64, 8));                  /* every other row */
  CHECK(!lc_layout_is_c_contiguous(&l, 8));
  CHECK(!lc_layout_is_f_contiguous(&l, 8));
  l = raw(0, V(3, 4), V(0, 8));                   /* broadcast rows */
  CHECK(!lc_layout_is_c_contiguous(&l, 8));
  CHECK(!lc_layout_is_f_contiguous(&l, 8));
  return 0;
}

static int test_contiguity_size1_axes(void) {
  /* size-1 axes are ignored, whatever their strides */
  lc_layout l = raw(0, V(2, 1, 3), V(24, 12345, 8));
  CHECK(lc_layout_is_c_contiguous(&l, 8));
  CHECK(!lc_layout_is_f_contiguous(&l, 8));
  l = raw(0, V(2, 1, 3), V(8, -99, 16));
  CHECK(!lc_layout_is_c_contiguous(&l, 8));
  CHECK(lc_layout_is_f_contiguous(&l, 8));
  l = raw(0, V(1, 3), V(-5, 8));
  CHECK(lc_layout_is_c_contiguous(&l, 8));
  CHECK(lc_layout_is_f_contiguous(&l, 8));
  l = raw(0, V(3, 1), V(8, 0));
  CHECK(lc_layout_is_c_contiguous(&l, 8));
  CHECK(lc_layout_is_f_contiguous(&l, 8));
  l = raw(0, V(1, 1, 1), V(3, 5, 7));
  CHECK(lc_layout_is_c_contiguous(&l, 8));
  CHECK(lc_layout_is_f_contiguous(&l, 8));
  return 0;
}

static int test_contiguity_size0_and_0d(void) {
  lc_layout l = raw(0, V(0, 5), V(8, -16));
  CHECK(lc_layout_is_c_contiguous(&l, 8));
  CHECK(lc_layout_is_f_contiguous(&l, 8));
  l = raw(40, V(4, 0, 3), V(1, 2, 3));
  CHECK(lc_layout_is_c_contiguous(&l, 8));
  CHECK(lc_layout_is_f_contiguous(&l, 8));
  l = raw(40, NONE, NONE);
  CHECK(lc_layout_is_c_contiguous(&l, 8));
  CHECK(lc_layout_is_f_contiguous(&l, 8));
  return 0;
}

static int test_contiguity_negative_strides(void) {
  lc_layout l = raw(16, V(3), V(-8));
  CHECK(!lc_layout_is_c_contiguous(&l, 8));
  CHECK(!lc_layout_is_f_contiguous(&l, 8));
  l = raw(16, V(1), V(-8));                       /* one element: fine */
  CHECK(lc_layout_is_c_contiguous(&l, 8));
  CHECK(lc_layout_is_f_contiguous(&l, 8));
  l = raw(16, V(2, 3), V(24, -8));
  CHECK(!lc_layout_is_c_contiguous(&l, 8));
  CHECK(!lc_layout_is_f_contiguous(&l, 8));
  l = raw(24, V(2, 3), V(-24, 8));
  CHECK(!lc_layout_is_c_contiguous(&l, 8));
  CHECK(!lc_layout_is_f_contiguous(&l, 8));
  return 0;
}

static int test_contiguity_transposed(void) {
  lc_layout l;
  C8(l, 2, 3, 4);
  CHECK_OK(lc_layout_transpose(&l, NULL, err));
  CHECK(!lc_layout_is_c_contiguous(&l, 8));
  CHECK(lc_layout_is_f_contiguous(&l, 8));
  F8(l, 2, 3, 4);
  CHECK_OK(lc_layout_transpose(&l, NULL, err));
  CHECK(lc_layout_is_c_contiguous(&l, 8));
  CHECK(!lc_layout_is_f_contiguous(&l, 8));
  C8(l, 1, 3);                                    /* (3, 1): still both */
  CHECK_OK(lc_layout_transpose(&l, NULL, err));
  CHECK_LAYOUT(l, 0, 3, V(3, 1), V(8, 24));
  CHECK(lc_layout_is_c_contiguous(&l, 8));
  CHECK(lc_layout_is_f_contiguous(&l, 8));
  C8(l, 2, 3, 4);                                 /* a partial transpose */
  CHECK_OK(lc_layout_transpose(&l, (const int[]){1, 0, 2}, err));
  CHECK(!lc_layout_is_c_contiguous(&l, 8));
  CHECK(!lc_layout_is_f_contiguous(&l, 8));
  return 0;
}

/* ---- explicit strides ------------------------------------------------------ */

static int test_strided_span(void) {
  lc_layout l;
  int64_t span = -1;
  CHECK_OK(strided(&l, &span, 8, V(3, 4), V(32, 8)));
  CHECK_LAYOUT(l, 0, 12, V(3, 4), V(32, 8));
  CHECK_EQ(span, 96);
  CHECK_OK(strided(&l, &span, 8, V(2, 3), V(8, 16)));
  CHECK_EQ(span, 48);
  CHECK_OK(strided(&l, &span, 8, V(3, 4), V(64, 8)));     /* gaps */
  CHECK_LAYOUT(l, 0, 12, V(3, 4), V(64, 8));
  CHECK_EQ(span, 160);
  CHECK_OK(strided(&l, &span, 8, V(3, 4), V(0, 8)));      /* broadcast */
  CHECK_EQ(span, 32);
  CHECK_OK(strided(&l, &span, 8, V(2, 2), V(8, 8)));      /* overlapping */
  CHECK_EQ(span, 24);
  CHECK_OK(strided(&l, &span, 4, V(5), V(12)));
  CHECK_EQ(span, 52);
  CHECK_OK(strided(&l, &span, 8, NONE, NONE));            /* 0-d */
  CHECK_LAYOUT(l, 0, 1, NONE, NONE);
  CHECK_EQ(span, 8);
  return 0;
}

static int test_strided_negative(void) {
  /* the offset puts the lowest element at byte 0 */
  lc_layout l;
  int64_t span = -1;
  CHECK_OK(strided(&l, &span, 8, V(3, 4), V(-32, 8)));
  CHECK_LAYOUT(l, 64, 12, V(3, 4), V(-32, 8));
  CHECK_EQ(span, 96);
  CHECK_EXTENT(l, 8, 0, 96);
  CHECK_OK(strided(&l, &span, 8, V(3, 4), V(-32, -8)));
  CHECK_LAYOUT(l, 88, 12, V(3, 4), V(-32, -8));
  CHECK_EQ(span, 96);
  CHECK_EXTENT(l, 8, 0, 96);
  CHECK_OK(strided(&l, &span, 8, V(10), V(-16)));
  CHECK_LAYOUT(l, 144, 10, V(10), V(-16));
  CHECK_EQ(span, 152);
  return 0;
}

static int test_strided_size0(void) {
  lc_layout l;
  int64_t span = -1;
  CHECK_OK(strided(&l, &span, 8, V(0, 4), V(32, 8)));
  CHECK_LAYOUT(l, 0, 0, V(0, 4), V(32, 8));
  CHECK_EQ(span, 0);
  span = -1;
  CHECK_OK(strided(&l, &span, 8, V(0, 4), V(32, -8)));
  CHECK_EQ(l.size, 0);
  CHECK_EQ(span, 0);
  CHECK_EXTENT(l, 8, l.offset, l.offset);
  return 0;
}

static int test_strided_errors(void) {
  lc_layout l;
  int64_t span;
  CHECK_ERR(strided(&l, &span, 8, V(3), V(12)),
            "stride 12 of axis 1 is not a multiple of the itemsize 8");
  CHECK_ERR(strided(&l, &span, 8, V(2, 3), V(24, -4)),
            "stride -4 of axis 2 is not a multiple of the itemsize 8");
  CHECK_ERR(strided(&l, &span, 8, V(2, 3), V(24)), "1 strides for 2 dimensions");
  CHECK_ERR(strided(&l, &span, 8, V(2), V(8, 8)), "2 strides for 1 dimensions");
  /* (3 - 1) * 2^62 */
  CHECK_ERR(strided(&l, &span, 8, V(3), V(P2(62))), "strides overflow");
  /* 2^62 + 2^62 */
  CHECK_ERR(strided(&l, &span, 8, V(2, 2), V(P2(62), P2(62))), "strides overflow");
  /* the last element ends past INT64_MAX */
  CHECK_ERR(strided(&l, &span, 8, V(2), V(INT64_MAX - 7)), "strides overflow");
  CHECK_ERR(strided(&l, &span, 8, V(2), V(-(INT64_MAX - 7))), "strides overflow");
  return 0;
}

static int test_strided_span_overflow(void) {
  /* hi - lo itself overflows: 2^62 - (-2^62) = 2^63 */
  lc_layout l;
  int64_t span = 0;
  CHECK_ERR(strided(&l, &span, 8, V(2, 2), V(P2(62), -P2(62))), "strides overflow");
  CHECK_ERR(strided(&l, &span, 8, V(2), V(INT64_MIN)), "strides overflow");
  return 0;
}

/* ---- empty_like (order 'K') ------------------------------------------------ */

static int test_like_contiguous(void) {
  lc_layout a, d;
  C8(a, 2, 3, 4);
  a.offset = 16;
  CHECK_OK(lc_layout_like(&d, &a, 8, err));
  CHECK_LAYOUT(d, 0, 24, V(2, 3, 4), V(96, 32, 8));
  F8(a, 2, 3, 4);
  CHECK_OK(lc_layout_like(&d, &a, 8, err));
  CHECK_LAYOUT(d, 0, 24, V(2, 3, 4), V(8, 16, 48));
  a = raw(40, NONE, NONE);
  CHECK_OK(lc_layout_like(&d, &a, 8, err));
  CHECK_LAYOUT(d, 0, 1, NONE, NONE);
  return 0;
}

static int test_like_views(void) {
  lc_layout a, d;
  C8(a, 2, 3);                                    /* transposed: F order */
  CHECK_OK(lc_layout_transpose(&a, NULL, err));
  CHECK_OK(lc_layout_like(&d, &a, 8, err));
  CHECK_LAYOUT(d, 0, 6, V(3, 2), V(8, 24));
  C8(a, 2, 3, 4);                                 /* partial transpose kept */
  CHECK_OK(lc_layout_transpose(&a, (const int[]){1, 0, 2}, err));
  CHECK_LAYOUT(a, 0, 24, V(3, 2, 4), V(32, 96, 8));
  CHECK_OK(lc_layout_like(&d, &a, 8, err));
  CHECK_LAYOUT(d, 0, 24, V(3, 2, 4), V(32, 96, 8));
  C8(a, 4, 6);                                    /* gaps closed */
  CHECK_OK(lc_layout_slice(&a, 1, 0, 3, 2, err));
  CHECK_LAYOUT(a, 0, 12, V(4, 3), V(48, 16));
  CHECK_OK(lc_layout_like(&d, &a, 8, err));
  CHECK_LAYOUT(d, 0, 12, V(4, 3), V(24, 8));
  a = raw(0, V(3, 4), V(16, 48));                 /* transposed gappy view */
  CHECK_OK(lc_layout_like(&d, &a, 8, err));
  CHECK_LAYOUT(d, 0, 12, V(3, 4), V(8, 24));
  return 0;
}

static int test_like_negative_strides(void) {
  lc_layout a, d;
  int64_t span;
  CHECK_OK(strided(&a, &span, 8, V(3, 4), V(-32, 8)));
  CHECK_OK(lc_layout_like(&d, &a, 8, err));
  CHECK_LAYOUT(d, 0, 12, V(3, 4), V(32, 8));
  CHECK_OK(strided(&a, &span, 8, V(4, 3), V(-8, -32)));
  CHECK_OK(lc_layout_like(&d, &a, 8, err));
  CHECK_LAYOUT(d, 0, 12, V(4, 3), V(8, 32));
  return 0;
}

static int test_like_ties_and_size0(void) {
  lc_layout a, d;
  /* equal |strides| keep their order (a stable sort) */
  a = raw(0, V(2, 1, 3), V(24, 8, 8));
  CHECK_OK(lc_layout_like(&d, &a, 8, err));
  CHECK_LAYOUT(d, 0, 6, V(2, 1, 3), V(24, 24, 8));
  a = raw(0, V(2, 2), V(8, -8));
  CHECK_OK(lc_layout_like(&d, &a, 8, err));
  CHECK_LAYOUT(d, 0, 4, V(2, 2), V(16, 8));
  F8(a, 3, 0);
  CHECK_LAYOUT(a, 0, 0, V(3, 0), V(8, 24));
  CHECK_OK(lc_layout_like(&d, &a, 8, err));
  CHECK_LAYOUT(d, 0, 0, V(3, 0), V(8, 24));
  return 0;
}

static int test_like_extreme_stride(void) {
  /* a size-1 axis may carry the stride INT64_MIN (16 * -2^59); its
  ** magnitude is still the largest */
  lc_layout a, d;
  C8(a, 3, 2);
  CHECK_OK(lc_layout_slice(&a, 0, 0, 1, -P2(59), err));
  CHECK_LAYOUT(a, 0, 2, V(1, 2), V(INT64_MIN, 8));
  CHECK_OK(lc_layout_like(&d, &a, 8, err));
  CHECK_LAYOUT(d, 0, 2, V(1, 2), V(16, 8));
  return 0;
}

/* ---- extent ------------------------------------------------------------------ */

static int test_extent(void) {
  lc_layout l;
  C8(l, 2, 3);
  CHECK_EXTENT(l, 8, 0, 48);
  l.offset = 16;
  CHECK_EXTENT(l, 8, 16, 64);
  C8(l, 10);                                      /* reversed */
  CHECK_OK(lc_layout_slice(&l, 0, 9, 10, -1, err));
  CHECK_EXTENT(l, 8, 0, 80);
  l = raw(16, V(3, 4), V(0, 8));                  /* broadcast */
  CHECK_EXTENT(l, 8, 16, 48);
  l = raw(40, NONE, NONE);                        /* 0-d */
  CHECK_EXTENT(l, 8, 40, 48);
  l = raw(40, V(0, 3), V(24, 8));                 /* empty */
  CHECK_EXTENT(l, 8, 40, 40);
  l = raw(40, V(3, 0), V(-8, -8));
  CHECK_EXTENT(l, 8, 40, 40);
  /* rows 3 and 1, columns 1, 3, 5 of a 4x6 */
  C8(l, 4, 6);
  CHECK_OK(lc_layout_slice(&l, 1, 1, 3, 2, err));
  CHECK_OK(lc_layout_slice(&l, 0, 3, 2, -2, err));
  CHECK_LAYOUT(l, 152, 6, V(2, 3), V(-96, 16));
  CHECK_EXTENT(l, 8, 56, 192);
  return 0;
}

/* ---- the overlap test: views at addresses ---------------------------------------- */

static int test_views_overlap(void) {
  lc_layout a, b;
  C8(a, 10);
  C8(b, 10);
  uintptr_t base = 0x10000;
  /* one buffer; another over the same bytes (two bases, one address) */
  CHECK(lc_views_overlap(base, &a, 8, base, &b, 8));
  b.offset = 40;
  CHECK(lc_views_overlap(base + 40, &a, 8, base, &b, 8));
  /* b's bytes right after a's, and one byte into them */
  CHECK(!lc_views_overlap(base, &a, 8, base + 40, &b, 8));
  CHECK(!lc_views_overlap(base + 40, &b, 8, base, &a, 8));
  CHECK(lc_views_overlap(base, &a, 8, base + 39, &b, 8));
  /* a reversed view: its lowest byte is below its first element */
  C8(a, 10);
  CHECK_OK(lc_layout_slice(&a, 0, 9, 10, -1, err));
  C8(b, 2);
  CHECK(lc_views_overlap(base, &a, 8, base, &b, 8));
  CHECK(!lc_views_overlap(base + 80, &a, 8, base, &b, 8));
  /* a stepped view of another buffer's bytes: the extents meet */
  C8(a, 10);
  CHECK_OK(lc_layout_slice(&a, 0, 1, 5, 2, err));
  C8(b, 1);
  CHECK(lc_views_overlap(base, &a, 8, base + 16, &b, 8));
  /* an empty view shares nothing, wherever it lies */
  a = raw(0, V(0, 3), V(24, 8));
  C8(b, 10);
  CHECK(!lc_views_overlap(base + 8, &a, 8, base, &b, 8));
  CHECK(!lc_views_overlap(base, &b, 8, base + 8, &a, 8));
  /* itemsizes: the last element's bytes count */
  C8(a, 2);                                        /* 16 bytes */
  b = raw(0, V(1), V(1));
  CHECK(lc_views_overlap(base, &a, 8, base + 15, &b, 1));
  CHECK(!lc_views_overlap(base, &a, 8, base + 16, &b, 1));
  return 0;
}

static int test_views_same(void) {
  lc_layout a, b;
  C8(a, 3, 4);
  C8(b, 3, 4);
  uintptr_t base = 0x10000;
  CHECK(lc_views_same(base, &a, 8, base, &b, 8));
  b.offset = 32;
  CHECK(lc_views_same(base + 32, &a, 8, base, &b, 8));   /* two buffers, one address */
  CHECK(!lc_views_same(base, &a, 8, base, &b, 8));
  b.offset = 0;
  CHECK(!lc_views_same(base, &a, 8, base, &b, 4));       /* another itemsize */
  CHECK_OK(lc_layout_transpose(&b, NULL, err));
  CHECK(!lc_views_same(base, &a, 8, base, &b, 8));       /* another shape */
  /* a size-1 axis's stride does not matter; another axis's does */
  a = raw(0, V(1, 4), V(999, 8));
  b = raw(0, V(1, 4), V(32, 8));
  CHECK(lc_views_same(base, &a, 8, base, &b, 8));
  b = raw(0, V(1, 4), V(32, 0));                         /* broadcast */
  CHECK(!lc_views_same(base, &a, 8, base, &b, 8));
  return 0;
}

/* ---- -1 inference ------------------------------------------------------------- */

static int test_infer(void) {
  int64_t s[4];
  s[0] = 2; s[1] = -1; s[2] = 3;
  CHECK_OK(lc_shape_infer(3, s, 24, err));
  CHECK_EQ(s[1], 4);
  s[0] = -1;
  CHECK_OK(lc_shape_infer(1, s, 7, err));
  CHECK_EQ(s[0], 7);
  s[0] = -1;
  CHECK_OK(lc_shape_infer(1, s, 0, err));
  CHECK_EQ(s[0], 0);
  s[0] = 0; s[1] = 3;
  CHECK_OK(lc_shape_infer(2, s, 0, err));
  s[0] = 3; s[1] = 7;
  CHECK_OK(lc_shape_infer(2, s, 21, err));
  CHECK_EQ(s[0], 3);
  CHECK_EQ(s[1], 7);
  CHECK_OK(lc_shape_infer(0, s, 1, err));
  return 0;
}

static int test_infer_errors(void) {
  int64_t s[LC_MAXDIM + 1];
  s[0] = -1; s[1] = -1;
  CHECK_ERR(lc_shape_infer(2, s, 4, err), "only one dimension can be -1, in {-1, -1}");
  s[0] = 2; s[1] = -2;
  CHECK_ERR(lc_shape_infer(2, s, 4, err), "negative dimension -2 in {2, -2}");
  s[0] = 5; s[1] = -1;
  CHECK_ERR(lc_shape_infer(2, s, 12, err), "cannot reshape size 12 into {5, -1}");
  CHECK_EQ(s[1], -1);                             /* untouched */
  s[0] = 2; s[1] = 0; s[2] = -1;
  CHECK_ERR(lc_shape_infer(3, s, 0, err), "cannot reshape size 0 into {2, 0, -1}");
  s[0] = 3; s[1] = 7;
  CHECK_ERR(lc_shape_infer(2, s, 1000, err), "cannot reshape");
  CHECK_STR(err, "cannot reshape size 1000 into {3, 7}");
  CHECK_ERR(lc_shape_infer(0, s, 2, err), "cannot reshape size 2 into {}");
  s[0] = P2(40); s[1] = P2(40); s[2] = -1;
  CHECK_ERR(lc_shape_infer(3, s, 8, err),
            "cannot reshape size 8 into {1099511627776, 1099511627776, -1}");
  for (int i = 0; i <= LC_MAXDIM; i++) s[i] = 1;
  CHECK_ERR(lc_shape_infer(LC_MAXDIM + 1, s, 1, err), "33 dimensions (at most 32)");
  return 0;
}

/* ---- reshape --------------------------------------------------------------------- */

static int test_reshape_view_c(void) {
  lc_layout a, d;
  C8(a, 2, 3, 4);
  a.offset = 16;
  CHECK_EQ(reshape(&a, &d, 'C', V(4, 6)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 16, 24, V(4, 6), V(48, 8));
  CHECK_EQ(reshape(&a, &d, 'C', V(24)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 16, 24, V(24), V(8));
  CHECK_EQ(reshape(&a, &d, 'C', V(3, 8)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 16, 24, V(3, 8), V(64, 8));
  CHECK_EQ(reshape(&a, &d, 'C', V(2, 2, 3, 2)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 16, 24, V(2, 2, 3, 2), V(96, 48, 16, 8));
  /* a reversed 1-d array stays a view */
  C8(a, 10);
  CHECK_OK(lc_layout_slice(&a, 0, 9, 10, -1, err));
  CHECK_EQ(reshape(&a, &d, 'C', V(2, 5)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 72, 10, V(2, 5), V(-40, -8));
  return 0;
}

static int test_reshape_view_f(void) {
  lc_layout a, d;
  F8(a, 2, 3);
  CHECK_EQ(reshape(&a, &d, 'F', V(3, 2)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 0, 6, V(3, 2), V(8, 24));
  CHECK_EQ(reshape(&a, &d, 'F', V(6)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 0, 6, V(6), V(8));
  C8(a, 2, 3);                                    /* transposed, read in F */
  CHECK_OK(lc_layout_transpose(&a, NULL, err));
  CHECK_EQ(reshape(&a, &d, 'F', V(6)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 0, 6, V(6), V(8));
  CHECK_EQ(reshape(&a, &d, 'F', V(2, 3)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 0, 6, V(2, 3), V(8, 16));
  C8(a, 6);                            /* a trailing 1: stride not checked */
  CHECK_EQ(reshape(&a, &d, 'F', V(6, 1)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 0, 6, V(6, 1), ANY);
  CHECK_EQ(d.strides[0], 8);
  CHECK(lc_layout_is_f_contiguous(&d, 8));
  return 0;
}

static int test_reshape_view_sliced(void) {
  lc_layout a, d;
  C8(a, 4, 6);                                    /* first 3 columns */
  CHECK_OK(lc_layout_slice(&a, 1, 0, 3, 1, err));
  CHECK_LAYOUT(a, 0, 12, V(4, 3), V(48, 8));
  CHECK_EQ(reshape(&a, &d, 'C', V(2, 2, 3)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 0, 12, V(2, 2, 3), V(96, 48, 8));
  C8(a, 4, 6);                                    /* rows 1 and 3 */
  CHECK_OK(lc_layout_slice(&a, 0, 1, 2, 2, err));
  CHECK_LAYOUT(a, 48, 12, V(2, 6), V(96, 8));
  CHECK_EQ(reshape(&a, &d, 'C', V(2, 3, 2)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 48, 12, V(2, 3, 2), V(96, 16, 8));
  C8(a, 4, 6);                                    /* odd columns: evenly spaced */
  CHECK_OK(lc_layout_slice(&a, 1, 1, 3, 2, err));
  CHECK_LAYOUT(a, 8, 12, V(4, 3), V(48, 16));
  CHECK_EQ(reshape(&a, &d, 'C', V(12)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 8, 12, V(12), V(16));
  return 0;
}

static int test_reshape_view_size1(void) {
  lc_layout a, d;
  C8(a, 2, 3);
  CHECK_EQ(reshape(&a, &d, 'C', V(1, 2, 1, 3, 1)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 0, 6, V(1, 2, 1, 3, 1), V(48, 24, 24, 8, 8));
  a = d;
  CHECK_EQ(reshape(&a, &d, 'C', V(6)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 0, 6, V(6), V(8));
  a = raw(8, V(2, 1, 3), V(24, 12344, 8));        /* odd stride on the 1 */
  CHECK_EQ(reshape(&a, &d, 'C', V(2, 3)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 8, 6, V(2, 3), V(24, 8));
  a = raw(0, V(3, 1), V(8, 5));
  CHECK_EQ(reshape(&a, &d, 'C', V(1, 3)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 0, 3, V(1, 3), V(24, 8));
  return 0;
}

static int test_reshape_view_0d(void) {
  lc_layout a, d;
  a = raw(40, NONE, NONE);
  CHECK_EQ(reshape(&a, &d, 'C', V(1, 1)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 40, 1, V(1, 1), V(8, 8));
  CHECK_EQ(reshape(&a, &d, 'F', V(1)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 40, 1, V(1), V(8));
  a = raw(40, V(1, 1), V(8, 8));
  CHECK_EQ(reshape(&a, &d, 'C', NONE), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 40, 1, NONE, NONE);
  a = raw(40, V(1), V(-8));
  CHECK_EQ(reshape(&a, &d, 'F', NONE), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 40, 1, NONE, NONE);
  return 0;
}

static int test_reshape_size0(void) {
  /* nothing to copy: always a view, contiguous, at the same offset */
  lc_layout a, d;
  C8(a, 0, 3);
  a.offset = 24;
  CHECK_EQ(reshape(&a, &d, 'C', V(3, 0)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 24, 0, V(3, 0), V(8, 8));
  CHECK_EQ(reshape(&a, &d, 'F', V(3, 0)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 24, 0, V(3, 0), V(8, 24));
  CHECK_EQ(reshape(&a, &d, 'C', V(0)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 24, 0, V(0), V(8));
  return 0;
}

static int test_reshape_copy(void) {
  /* on a copy dst is the contiguous layout at offset 0 to write it in */
  lc_layout a, d;
  C8(a, 2, 3);                                    /* transposed, read in C */
  a.offset = 16;
  CHECK_OK(lc_layout_transpose(&a, NULL, err));
  CHECK_LAYOUT(a, 16, 6, V(3, 2), V(8, 24));
  CHECK_EQ(reshape(&a, &d, 'C', V(6)), LC_RESHAPE_COPY);
  CHECK_LAYOUT(d, 0, 6, V(6), V(8));
  CHECK_EQ(reshape(&a, &d, 'C', V(2, 3)), LC_RESHAPE_COPY);
  CHECK_LAYOUT(d, 0, 6, V(2, 3), V(24, 8));
  C8(a, 2, 3);                                    /* C array read in F */
  CHECK_EQ(reshape(&a, &d, 'F', V(3, 2)), LC_RESHAPE_COPY);
  CHECK_LAYOUT(d, 0, 6, V(3, 2), V(8, 24));
  C8(a, 3, 5);                                    /* step-2 columns */
  CHECK_OK(lc_layout_slice(&a, 1, 0, 3, 2, err));
  CHECK_LAYOUT(a, 0, 9, V(3, 3), V(40, 16));
  CHECK_EQ(reshape(&a, &d, 'C', V(9)), LC_RESHAPE_COPY);
  CHECK_LAYOUT(d, 0, 9, V(9), V(8));
  C8(a, 4, 6);                                    /* step-2 rows */
  CHECK_OK(lc_layout_slice(&a, 0, 1, 2, 2, err));
  CHECK_EQ(reshape(&a, &d, 'C', V(12)), LC_RESHAPE_COPY);
  CHECK_LAYOUT(d, 0, 12, V(12), V(8));
  C8(a, 4, 6);                                    /* first 3 columns */
  CHECK_OK(lc_layout_slice(&a, 1, 0, 3, 1, err));
  CHECK_EQ(reshape(&a, &d, 'C', V(2, 6)), LC_RESHAPE_COPY);
  CHECK_LAYOUT(d, 0, 12, V(2, 6), V(48, 8));
  a = raw(0, V(3, 4), V(0, 8));                   /* broadcast */
  CHECK_EQ(reshape(&a, &d, 'C', V(12)), LC_RESHAPE_COPY);
  CHECK_LAYOUT(d, 0, 12, V(12), V(8));
  a = raw(16, V(2, 3), V(24, -8));                /* reversed columns */
  CHECK_EQ(reshape(&a, &d, 'C', V(6)), LC_RESHAPE_COPY);
  CHECK_LAYOUT(d, 0, 6, V(6), V(8));
  return 0;
}

static int test_reshape_errors(void) {
  lc_layout a, d;
  int64_t s[LC_MAXDIM + 1];
  C8(a, 2, 3);
  CHECK_ERR(reshape(&a, &d, 'C', V(4)), "cannot reshape size 6 into {4}");
  CHECK_ERR(reshape(&a, &d, 'C', V(-1, 6)), "negative dimension -1");
  CHECK_ERR(reshape(&a, &d, 'C', V(P2(40), P2(40))), "array size overflows");
  for (int i = 0; i <= LC_MAXDIM; i++) s[i] = 1;
  s[0] = 6;
  CHECK_ERR(reshape(&a, &d, 'C', s, LC_MAXDIM + 1), "33 dimensions (at most 32)");
  CHECK_EQ(reshape(&a, &d, 'C', s, LC_MAXDIM), LC_RESHAPE_VIEW);
  CHECK_EQ(d.ndim, LC_MAXDIM);
  CHECK_EQ(d.strides[0], 8);
  return 0;
}

/* ---- transpose ---------------------------------------------------------------------- */

static int test_transpose_reverse(void) {
  lc_layout l;
  C8(l, 2, 3, 4);
  l.offset = 16;
  CHECK_OK(lc_layout_transpose(&l, NULL, err));
  CHECK_LAYOUT(l, 16, 24, V(4, 3, 2), V(8, 32, 96));
  CHECK_OK(lc_layout_transpose(&l, NULL, err));
  CHECK_LAYOUT(l, 16, 24, V(2, 3, 4), V(96, 32, 8));
  l = raw(40, NONE, NONE);
  CHECK_OK(lc_layout_transpose(&l, NULL, err));
  CHECK_LAYOUT(l, 40, 1, NONE, NONE);
  return 0;
}

static int test_transpose_perm(void) {
  lc_layout l;
  C8(l, 2, 3, 4);
  CHECK_OK(lc_layout_transpose(&l, (const int[]){1, 2, 0}, err));
  CHECK_LAYOUT(l, 0, 24, V(3, 4, 2), V(32, 8, 96));
  C8(l, 2, 3, 4);
  CHECK_OK(lc_layout_transpose(&l, (const int[]){2, 0, 1}, err));
  CHECK_LAYOUT(l, 0, 24, V(4, 2, 3), V(8, 96, 32));
  C8(l, 2, 3, 4);
  CHECK_OK(lc_layout_transpose(&l, (const int[]){0, 1, 2}, err));
  CHECK_LAYOUT(l, 0, 24, V(2, 3, 4), V(96, 32, 8));
  return 0;
}

static int test_transpose_bad_perm(void) {
  lc_layout l, before;
  C8(l, 2, 3, 4);
  before = l;
  CHECK_ERR(lc_layout_transpose(&l, (const int[]){0, 0, 1}, err),
            "axis 1 repeated in permutation");
  CHECK_SAME(l, before);
  CHECK_ERR(lc_layout_transpose(&l, (const int[]){2, 1, 2}, err),
            "axis 3 repeated in permutation");
  CHECK_ERR(lc_layout_transpose(&l, (const int[]){0, 1, 3}, err),
            "axis 4 out of range for 3 dimensions");
  CHECK_SAME(l, before);
  CHECK_ERR(lc_layout_transpose(&l, (const int[]){-1, 0, 1}, err),
            "axis 0 out of range for 3 dimensions");
  CHECK_SAME(l, before);
  return 0;
}

/* ---- slice ---------------------------------------------------------------------------- */

static int test_slice_positive(void) {
  lc_layout l;
  C8(l, 4, 6);
  CHECK_OK(lc_layout_slice(&l, 1, 1, 3, 2, err));
  CHECK_LAYOUT(l, 8, 12, V(4, 3), V(48, 16));
  CHECK_OK(lc_layout_slice(&l, 0, 1, 2, 1, err));
  CHECK_LAYOUT(l, 56, 6, V(2, 3), V(48, 16));
  CHECK_OK(lc_layout_slice(&l, 1, 2, 1, 5, err)); /* one element, any step */
  CHECK_LAYOUT(l, 88, 2, V(2, 1), V(48, 80));
  C8(l, 10);                                      /* the whole axis */
  CHECK_OK(lc_layout_slice(&l, 0, 0, 10, 1, err));
  CHECK_LAYOUT(l, 0, 10, V(10), V(8));
  CHECK_OK(lc_layout_slice(&l, 0, 0, 4, 3, err)); /* 0, 3, 6, 9 */
  CHECK_LAYOUT(l, 0, 4, V(4), V(24));
  return 0;
}

static int test_slice_negative(void) {
  lc_layout l;
  C8(l, 10);
  CHECK_OK(lc_layout_slice(&l, 0, 9, 10, -1, err));
  CHECK_LAYOUT(l, 72, 10, V(10), V(-8));
  CHECK_OK(lc_layout_slice(&l, 0, 9, 10, -1, err));   /* back again */
  CHECK_LAYOUT(l, 0, 10, V(10), V(8));
  CHECK_OK(lc_layout_slice(&l, 0, 8, 3, -3, err));    /* 8, 5, 2 */
  CHECK_LAYOUT(l, 64, 3, V(3), V(-24));
  C8(l, 4, 6);
  CHECK_OK(lc_layout_slice(&l, 0, 3, 2, -2, err));    /* rows 3, 1 */
  CHECK_LAYOUT(l, 144, 12, V(2, 6), V(-96, 8));
  CHECK_OK(lc_layout_slice(&l, 1, 5, 6, -1, err));
  CHECK_LAYOUT(l, 184, 12, V(2, 6), V(-96, -8));
  return 0;
}

static int test_slice_count0(void) {
  /* an empty slice ignores start */
  lc_layout l;
  C8(l, 10);
  l.offset = 16;
  CHECK_OK(lc_layout_slice(&l, 0, 10, 0, 1, err));
  CHECK_LAYOUT(l, 16, 0, V(0), V(8));
  C8(l, 3, 10);
  CHECK_OK(lc_layout_slice(&l, 1, 123, 0, -1, err));
  CHECK_LAYOUT(l, 0, 0, V(3, 0), V(80, -8));
  CHECK_OK(lc_layout_slice(&l, 0, 1, 2, 1, err));     /* slicing an empty view */
  CHECK_LAYOUT(l, 80, 0, V(2, 0), V(80, -8));
  return 0;
}

static int test_slice_errors(void) {
  lc_layout l, before;
  C8(l, 10);
  before = l;
  CHECK_ERR(lc_layout_slice(&l, 0, 10, 1, 1, err), "range out of bounds for axis 1 of size 10");
  CHECK_ERR(lc_layout_slice(&l, 0, 5, 6, 1, err), "range out of bounds for axis 1 of size 10");
  CHECK_ERR(lc_layout_slice(&l, 0, 3, 5, -1, err), "range out of bounds for axis 1 of size 10");
  CHECK_ERR(lc_layout_slice(&l, 0, -1, 1, 1, err), "range out of bounds for axis 1 of size 10");
  CHECK_ERR(lc_layout_slice(&l, 0, 0, 4, 4, err), "range out of bounds for axis 1 of size 10");
  CHECK_ERR(lc_layout_slice(&l, 0, 0, 10, INT64_MAX / 8, err), "range out of bounds");
  CHECK_ERR(lc_layout_slice(&l, 0, 0, 1, 0, err), "step cannot be zero");
  CHECK_ERR(lc_layout_slice(&l, 0, 0, -1, 1, err), "negative count -1");
  CHECK_ERR(lc_layout_slice(&l, 1, 0, 1, 1, err), "axis 2 out of range for 1 dimensions");
  CHECK_ERR(lc_layout_slice(&l, -1, 0, 1, 1, err), "axis 0 out of range for 1 dimensions");
  /* stride * step: 8 * 2^60 */
  CHECK_ERR(lc_layout_slice(&l, 0, 0, 1, P2(60), err), "step overflows");
  CHECK_ERR(lc_layout_slice(&l, 0, 0, 0, -P2(61), err), "step overflows");
  CHECK_SAME(l, before);
  return 0;
}

/* ---- select and squeeze ------------------------------------------------------------------ */

static int test_select(void) {
  lc_layout l;
  C8(l, 2, 3, 4);
  CHECK_OK(lc_layout_select(&l, 1, 2, err));
  CHECK_LAYOUT(l, 64, 8, V(2, 4), V(96, 8));
  CHECK_OK(lc_layout_select(&l, 0, 1, err));
  CHECK_LAYOUT(l, 160, 4, V(4), V(8));
  CHECK_OK(lc_layout_select(&l, 0, 3, err));
  CHECK_LAYOUT(l, 184, 1, NONE, NONE);
  C8(l, 10);                                      /* reversed */
  CHECK_OK(lc_layout_slice(&l, 0, 9, 10, -1, err));
  lc_layout r = l;
  CHECK_OK(lc_layout_select(&r, 0, 9, err));
  CHECK_LAYOUT(r, 0, 1, NONE, NONE);
  r = l;
  CHECK_OK(lc_layout_select(&r, 0, 0, err));
  CHECK_LAYOUT(r, 72, 1, NONE, NONE);
  C8(l, 2, 0);                                    /* the rest stays empty */
  CHECK_OK(lc_layout_select(&l, 0, 1, err));
  CHECK_LAYOUT(l, 8, 0, V(0), V(8));
  return 0;
}

static int test_select_errors(void) {
  lc_layout l, before;
  C8(l, 2, 3, 4);
  before = l;
  CHECK_ERR(lc_layout_select(&l, 1, 3, err), "index 4 out of bounds for axis 2 of size 3");
  CHECK_ERR(lc_layout_select(&l, 1, -1, err), "index 0 out of bounds for axis 2 of size 3");
  CHECK_ERR(lc_layout_select(&l, 3, 0, err), "axis 4 out of range for 3 dimensions");
  CHECK_ERR(lc_layout_select(&l, -1, 0, err), "axis 0 out of range for 3 dimensions");
  CHECK_SAME(l, before);
  C8(l, 0, 3);
  CHECK_ERR(lc_layout_select(&l, 0, 0, err), "index 1 out of bounds for axis 1 of size 0");
  l = raw(0, NONE, NONE);
  CHECK_ERR(lc_layout_select(&l, 0, 0, err), "axis 1 out of range for 0 dimensions");
  return 0;
}

static int test_squeeze(void) {
  lc_layout a, l;
  C8(a, 1, 3, 1, 2);
  a.offset = 16;
  CHECK_LAYOUT(a, 16, 6, V(1, 3, 1, 2), V(48, 16, 16, 8));
  l = a;
  CHECK_OK(lc_layout_squeeze(&l, -1, err));
  CHECK_LAYOUT(l, 16, 6, V(3, 2), V(16, 8));
  l = a;
  CHECK_OK(lc_layout_squeeze(&l, 2, err));
  CHECK_LAYOUT(l, 16, 6, V(1, 3, 2), V(48, 16, 8));
  l = a;
  CHECK_OK(lc_layout_squeeze(&l, 0, err));
  CHECK_LAYOUT(l, 16, 6, V(3, 1, 2), V(16, 16, 8));
  l = raw(40, V(1, 1), V(-8, 8));                 /* down to 0-d */
  CHECK_OK(lc_layout_squeeze(&l, -1, err));
  CHECK_LAYOUT(l, 40, 1, NONE, NONE);
  CHECK_OK(lc_layout_squeeze(&l, -1, err));       /* 0-d: nothing to do */
  CHECK_LAYOUT(l, 40, 1, NONE, NONE);
  C8(l, 0, 1);
  CHECK_OK(lc_layout_squeeze(&l, -1, err));
  CHECK_LAYOUT(l, 0, 0, V(0), V(8));
  return 0;
}

static int test_squeeze_errors(void) {
  lc_layout l, before;
  C8(l, 1, 3, 1, 2);
  before = l;
  CHECK_ERR(lc_layout_squeeze(&l, 1, err), "cannot squeeze axis 2 of size 3");
  CHECK_ERR(lc_layout_squeeze(&l, 4, err), "axis 5 out of range for 4 dimensions");
  CHECK_SAME(l, before);
  C8(l, 0);
  CHECK_ERR(lc_layout_squeeze(&l, 0, err), "cannot squeeze axis 1 of size 0");
  l = raw(0, NONE, NONE);
  CHECK_ERR(lc_layout_squeeze(&l, 0, err), "axis 1 out of range for 0 dimensions");
  return 0;
}

/* ---- view with another itemsize --------------------------------------------------------- */

static int test_view_itemsize(void) {
  lc_layout l;
  C8(l, 2, 3);                                    /* 8 -> 4: last dim doubles */
  l.offset = 16;
  CHECK_OK(lc_layout_view_itemsize(&l, 8, 4, err));
  CHECK_LAYOUT(l, 16, 12, V(2, 6), V(24, 4));
  CHECK_OK(contig(&l, 'C', 4, V(2, 4)));          /* 4 -> 8: last dim halves */
  CHECK_LAYOUT(l, 0, 8, V(2, 4), V(16, 4));
  CHECK_OK(lc_layout_view_itemsize(&l, 4, 8, err));
  CHECK_LAYOUT(l, 0, 4, V(2, 2), V(16, 8));
  C8(l, 2, 3);                                    /* 8 -> 1 */
  CHECK_OK(lc_layout_view_itemsize(&l, 8, 1, err));
  CHECK_LAYOUT(l, 0, 48, V(2, 24), V(24, 1));
  C8(l, 4, 6);                                    /* only the last axis counts */
  CHECK_OK(lc_layout_slice(&l, 1, 0, 3, 1, err));
  CHECK_OK(lc_layout_view_itemsize(&l, 8, 4, err));
  CHECK_LAYOUT(l, 0, 24, V(4, 6), V(48, 4));
  l = raw(0, V(3, 1), V(8, 800));                 /* a last axis of size 1 */
  CHECK_OK(lc_layout_view_itemsize(&l, 8, 4, err));
  CHECK_LAYOUT(l, 0, 6, V(3, 2), V(8, 4));
  C8(l, 2, 0);                                    /* empty */
  CHECK_OK(lc_layout_view_itemsize(&l, 8, 4, err));
  CHECK_LAYOUT(l, 0, 0, V(2, 0), V(8, 4));
  l = raw(40, NONE, NONE);                        /* same itemsize: a no-op */
  CHECK_OK(lc_layout_view_itemsize(&l, 8, 8, err));
  CHECK_LAYOUT(l, 40, 1, NONE, NONE);
  return 0;
}

static int test_view_itemsize_errors(void) {
  lc_layout l, before;
  C8(l, 2, 3);
  CHECK_OK(lc_layout_transpose(&l, NULL, err));
  before = l;
  CHECK_ERR(lc_layout_view_itemsize(&l, 8, 4, err),
            "the last axis must be contiguous to change the itemsize");
  CHECK_SAME(l, before);
  C8(l, 10);
  CHECK_OK(lc_layout_slice(&l, 0, 9, 10, -1, err));
  CHECK_ERR(lc_layout_view_itemsize(&l, 8, 4, err), "the last axis must be contiguous");
  CHECK_OK(contig(&l, 'C', 4, V(2, 3)));
  before = l;
  CHECK_ERR(lc_layout_view_itemsize(&l, 4, 8, err),
            "the last axis (12 bytes) is not a multiple of the new itemsize 8");
  CHECK_SAME(l, before);
  C8(l, 2, 3);
  CHECK_ERR(lc_layout_view_itemsize(&l, 8, 16, err),
            "the last axis (24 bytes) is not a multiple of the new itemsize 16");
  l = raw(40, NONE, NONE);
  CHECK_ERR(lc_layout_view_itemsize(&l, 8, 4, err),
            "a 0-d array cannot change its itemsize from 8 to 4");
  CHECK_LAYOUT(l, 40, 1, NONE, NONE);
  return 0;
}

/* ---- merging axes ------------------------------------------------------------------------- */

/* merge(nops, V(shape), V(strides of operand 0), ...) runs lc_merge_axes on
** copies and leaves them in m_shape, m_str[o]; m_n is what it returned. */
static int64_t m_shape[LC_MAXDIM], m_str[3][LC_MAXDIM];
static int m_n;

static void merge(int nops, const int64_t *shape, int ndim, ...) {
  int64_t *strides[3];
  va_list ap;
  va_start(ap, ndim);
  memcpy(m_shape, shape, sizeof(int64_t) * (size_t)ndim);
  for (int o = 0; o < nops; o++) {
    const int64_t *s = va_arg(ap, const int64_t *);
    (void)va_arg(ap, int);
    memcpy(m_str[o], s, sizeof(int64_t) * (size_t)ndim);
    strides[o] = m_str[o];
  }
  va_end(ap);
  m_n = lc_merge_axes(ndim, m_shape, nops, strides);
}

static int check_vec(const char *file, int line, const char *name, const int64_t *got, int n,
                     const int64_t *want, int nwant) {
  char g[300], w[300];
  if (n != nwant || memcmp(got, want, sizeof(int64_t) * (size_t)n) != 0) {
    fmtv(g, sizeof g, n, got);
    fmtv(w, sizeof w, nwant, want);
    return failf(file, line, "%s is %s, expected %s", name, g, w);
  }
  return 0;
}

/* CHECK_MERGED(V(shape)) and CHECK_MERGED_STRIDES(o, V(strides)), after merge */
#define CHECK_MERGED(shape) do { \
    if (check_vec(__FILE__, __LINE__, "merged shape", m_shape, m_n, shape)) return 1; \
  } while (0)
#define CHECK_MERGED_STRIDES(o, strides) do { \
    if (check_vec(__FILE__, __LINE__, "merged strides of operand " #o, m_str[o], m_n, \
                  strides)) return 1; \
  } while (0)

static int test_merge_axes_contiguous(void) {
  merge(1, V(2, 3, 4), V(96, 32, 8));          /* C order: one axis */
  CHECK_MERGED(V(24));
  CHECK_MERGED_STRIDES(0, V(8));
  merge(2, V(2, 3, 4), V(96, 32, 8), V(-48, -16, -4));   /* reversed, other itemsize */
  CHECK_MERGED(V(24));
  CHECK_MERGED_STRIDES(0, V(8));
  CHECK_MERGED_STRIDES(1, V(-4));
  merge(1, V(2, 3), V(8, 16));                 /* F order: merging would reorder */
  CHECK_MERGED(V(2, 3));
  CHECK_MERGED_STRIDES(0, V(8, 16));
  return 0;
}

static int test_merge_axes_partial(void) {
  /* every other row: the last two axes merge, the first does not */
  merge(2, V(2, 3, 4), V(192, 32, 8), V(96, 32, 8));
  CHECK_MERGED(V(2, 12));
  CHECK_MERGED_STRIDES(0, V(192, 8));
  CHECK_MERGED_STRIDES(1, V(96, 8));
  /* one operand that does not step through two axes as one keeps them apart */
  merge(3, V(4, 5), V(40, 8), V(40, 8), V(8, 32));
  CHECK_MERGED(V(4, 5));
  CHECK_MERGED_STRIDES(2, V(8, 32));
  /* a broadcast operand (stride 0) merges only along its broadcast axes */
  merge(2, V(2, 3, 4), V(96, 32, 8), V(0, 0, 8));
  CHECK_MERGED(V(6, 4));
  CHECK_MERGED_STRIDES(0, V(32, 8));
  CHECK_MERGED_STRIDES(1, V(0, 8));
  merge(2, V(3, 4), V(32, 8), V(8, 0));
  CHECK_MERGED(V(3, 4));
  CHECK_MERGED_STRIDES(1, V(8, 0));
  return 0;
}

static int test_merge_axes_size1_and_0(void) {
  /* size-1 axes are dropped, whatever their strides, and their
  ** neighbours then merge */
  merge(2, V(1, 2, 1, 3, 1), V(7, 24, 5, 8, 9), V(0, 12, -3, 4, 1));
  CHECK_MERGED(V(6));
  CHECK_MERGED_STRIDES(0, V(8));
  CHECK_MERGED_STRIDES(1, V(4));
  merge(1, V(1, 1), V(8, 8));                  /* one element: no axis left */
  CHECK_EQ(m_n, 0);
  merge(1, NONE, NONE);
  CHECK_EQ(m_n, 0);
  merge(1, V(0, 3), V(24, 8));                 /* a size-0 axis merges as any other */
  CHECK_MERGED(V(0));
  CHECK_MERGED_STRIDES(0, V(8));
  return 0;
}

static int test_merge_axes_in_place(void) {
  /* the entries past the count returned are left as they were */
  merge(1, V(2, 3, 5), V(120, 40, 8));
  CHECK_EQ(m_n, 1);
  CHECK_EQ(m_shape[1], 3);
  CHECK_EQ(m_shape[2], 5);
  CHECK_EQ(m_str[0][1], 40);
  CHECK_EQ(m_str[0][2], 8);
  /* LC_MAXDIM axes, every one merged */
  int64_t shape[LC_MAXDIM], st[LC_MAXDIM], s = 8;
  for (int i = LC_MAXDIM - 1; i >= 0; i--) {
    shape[i] = 2;
    st[i] = s;
    s *= 2;
  }
  merge(1, shape, LC_MAXDIM, st, LC_MAXDIM);
  CHECK_MERGED(V((int64_t)1 << LC_MAXDIM));
  CHECK_MERGED_STRIDES(0, V(8));
  return 0;
}

/* ---- same_shape and shape_format ---------------------------------------------------------- */

static int test_same_shape(void) {
  lc_layout a, b;
  a = raw(0, V(1, 3, 1, 2), V(0, 0, 0, 0));
  b = raw(0, V(3, 2), V(0, 0));
  CHECK(lc_layout_same_shape(&a, &b));
  CHECK(lc_layout_same_shape(&b, &a));
  b = raw(0, V(2, 3), V(0, 0));
  CHECK(!lc_layout_same_shape(&a, &b));
  b = raw(0, V(3), V(0));
  CHECK(!lc_layout_same_shape(&a, &b));
  CHECK(!lc_layout_same_shape(&b, &a));
  a = raw(0, NONE, NONE);
  b = raw(0, V(1, 1), V(0, 0));
  CHECK(lc_layout_same_shape(&a, &b));
  CHECK(lc_layout_same_shape(&a, &a));
  a = raw(0, V(0), V(8));
  b = raw(0, V(0, 1), V(8, 8));
  CHECK(lc_layout_same_shape(&a, &b));
  b = raw(0, NONE, NONE);
  CHECK(!lc_layout_same_shape(&a, &b));
  b = raw(0, V(0, 0), V(8, 8));
  CHECK(!lc_layout_same_shape(&a, &b));
  return 0;
}

static void fmt(char *buf, size_t len, const int64_t *shape, int ndim) {
  lc_shape_format(buf, len, ndim, shape);
}

static int test_shape_format(void) {
  char buf[64];
  fmt(buf, sizeof buf, V(2, 3));
  CHECK_STR(buf, "{2, 3}");
  fmt(buf, sizeof buf, NONE);
  CHECK_STR(buf, "{}");
  fmt(buf, sizeof buf, V(7));
  CHECK_STR(buf, "{7}");
  fmt(buf, sizeof buf, V(0, -1, P2(40)));
  CHECK_STR(buf, "{0, -1, 1099511627776}");
  /* truncated to len, always terminated */
  fmt(buf, 7, V(2, 3));
  CHECK_STR(buf, "{2, 3}");
  fmt(buf, 6, V(2, 3));
  CHECK_STR(buf, "{2, 3");
  fmt(buf, 6, V(10, 20, 30));
  CHECK_STR(buf, "{10, ");
  fmt(buf, 1, V(2, 3));
  CHECK_STR(buf, "");
  strcpy(buf, "x");
  fmt(buf, 0, V(2, 3));
  CHECK_STR(buf, "x");
  return 0;
}

/* ---- limits ---------------------------------------------------------------------------------- */

static int test_maxdim(void) {
  lc_layout l;
  int64_t s[LC_MAXDIM + 1], st[LC_MAXDIM + 1], span;
  for (int i = 0; i <= LC_MAXDIM; i++) s[i] = 1, st[i] = 8;
  CHECK_OK(contig(&l, 'C', 8, s, LC_MAXDIM));
  CHECK_EQ(l.ndim, LC_MAXDIM);
  CHECK_EQ(l.size, 1);
  CHECK_ERR(contig(&l, 'C', 8, s, LC_MAXDIM + 1), "33 dimensions (at most 32)");
  CHECK_ERR(contig(&l, 'F', 8, s, LC_MAXDIM + 1), "33 dimensions (at most 32)");
  CHECK_ERR(contig(&l, 'C', 8, s, -1), "-1 dimensions (at most 32)");
  CHECK_OK(strided(&l, &span, 8, s, LC_MAXDIM, st, LC_MAXDIM));
  CHECK_EQ(span, 8);
  CHECK_ERR(strided(&l, &span, 8, s, LC_MAXDIM + 1, st, LC_MAXDIM + 1),
            "33 dimensions (at most 32)");
  return 0;
}

static int test_negative_dims(void) {
  lc_layout l;
  int64_t span;
  CHECK_ERR(contig(&l, 'C', 8, V(2, -3)), "negative dimension -3");
  CHECK_ERR(contig(&l, 'F', 8, V(-1)), "negative dimension -1");
  CHECK_ERR(strided(&l, &span, 8, V(2, -3), V(8, 8)), "negative dimension -3");
  return 0;
}

static int test_overflow(void) {
  lc_layout l, a;
  int64_t span;
  CHECK_ERR(contig(&l, 'C', 8, V(P2(40), P2(40))), "array size overflows");
  CHECK_ERR(contig(&l, 'F', 8, V(P2(40), P2(40))), "array size overflows");
  /* a zero dimension does not hide it: the strides would still overflow */
  CHECK_ERR(contig(&l, 'C', 8, V(P2(40), 0, P2(40))), "array size overflows");
  CHECK_ERR(strided(&l, &span, 8, V(P2(40), P2(40)), V(8, 8)), "array size overflows");
  CHECK_ERR(contig(&l, 'C', 8, V(P2(30), P2(30))), "array size overflows");   /* 2^63 bytes */
  CHECK_ERR(contig(&l, 'C', 1, V(P2(32), P2(31))), "array size overflows");
  CHECK_OK(contig(&l, 'C', 8, V(P2(29), P2(30))));                         /* 2^62 bytes */
  CHECK_LAYOUT(l, 0, P2(59), V(P2(29), P2(30)), V(P2(33), 8));
  CHECK_OK(contig(&l, 'C', 1, V(P2(31), P2(31))));
  CHECK_EQ(l.size, P2(62));
  C8(a, 2, 3);
  CHECK_ERR(reshape(&a, &l, 'C', V(P2(40), P2(40), 0)), "array size overflows");
  return 0;
}

static int count(const int64_t *shape, int ndim, int64_t itemsize, int64_t *n) {
  return lc_shape_count(ndim, shape, itemsize, n, err);
}

static int bcast(const lc_layout *a, int64_t itemsize, const int64_t *shape, int ndim,
                 lc_layout *d) {
  return lc_layout_broadcast(a, itemsize, ndim, shape, d, err);
}

/* The one checked product every shape goes through (issue 29). */
static int test_shape_count(void) {
  int64_t n = -1;
  CHECK_OK(count(V(2, 3, 4), 8, &n));
  CHECK_EQ(n, 24);
  CHECK_OK(count(NONE, 8, &n));
  CHECK_EQ(n, 1);
  CHECK_OK(count(V(0, P2(40)), 8, &n));
  CHECK_EQ(n, 0);
  /* itemsize * count up to INT64_MAX, and not one byte more */
  CHECK_OK(count(V(INT64_MAX), 1, &n));
  CHECK_EQ(n, INT64_MAX);
  CHECK_OK(count(V(P2(31), P2(31)), 1, &n));
  CHECK_EQ(n, P2(62));
  n = -1;
  CHECK_ERR(count(V(P2(31), P2(31)), 2, &n), "array size overflows");
  CHECK_ERR(count(V(3, 6148914691236517206), 1, &n), "array size overflows");
  CHECK_ERR(count(V(P2(32), P2(32)), 1, &n), "array size overflows");
  /* a zero-length axis does not hide the others' product */
  CHECK_ERR(count(V(0, P2(62), 4), 1, &n), "array size overflows");
  CHECK_ERR(count(V(P2(62), 0), 2, &n), "array size overflows");
  CHECK_ERR(count(V(2, -3), 8, &n), "negative dimension -3");
  CHECK_ERR(count(V(2), 0, &n), "itemsize 0 is not positive");
  int64_t many[LC_MAXDIM + 1];
  for (int i = 0; i <= LC_MAXDIM; i++) many[i] = 1;
  CHECK_ERR(count(many, LC_MAXDIM + 1, 8, &n), "33 dimensions (at most 32)");
  CHECK_EQ(n, -1);                    /* untouched by the failures */
  return 0;
}

/* broadcast_to's view and broadcast_shapes' shape: the count wrapped
** (3 * 6148914691236517206 is 2 modulo 2^64) */
static int test_broadcast_overflow(void) {
  lc_layout a, d;
  C8(a, 1);
  lc_layout before = a;
  CHECK_ERR(bcast(&a, 8, V(3, 6148914691236517206), &d), "array size overflows");
  CHECK_ERR(bcast(&a, 8, V(P2(32), P2(32)), &d), "array size overflows");
  CHECK_ERR(bcast(&a, 8, V(0, P2(62), 4), &d), "array size overflows");
  CHECK_ERR(bcast(&a, 8, V(P2(30), P2(30)), &d), "array size overflows");
  CHECK_SAME(a, before);
  /* the itemsize counts: 2^62 one-byte elements fit */
  CHECK_OK(bcast(&a, 1, V(P2(31), P2(31)), &d));
  CHECK_LAYOUT(d, 0, P2(62), V(P2(31), P2(31)), V(0, 0));
  CHECK_OK(bcast(&a, 8, V(P2(29), P2(30)), &d));
  CHECK_EQ(d.size, P2(59));
  /* like: the broadcast view's count, in a wider itemsize */
  CHECK_ERR(lc_layout_like(&a, &d, 16, err), "array size overflows");
  CHECK_OK(lc_layout_like(&a, &d, 8, err));
  CHECK_LAYOUT(a, 0, P2(59), V(P2(29), P2(30)), V(P2(33), 8));
  int nd = -1;
  int64_t out[LC_MAXDIM];
  const int ndims[2] = {2, 1};
  const int64_t *shapes[2] = {(const int64_t[]){3, 1}, (const int64_t[]){6148914691236517206}};
  CHECK_ERR(lc_broadcast_shapes(2, ndims, shapes, &nd, out, err), "array size overflows");
  CHECK_EQ(nd, -1);
  shapes[1] = (const int64_t[]){P2(61)};
  CHECK_OK(lc_broadcast_shapes(2, ndims, shapes, &nd, out, err));
  CHECK_EQ(nd, 2);
  CHECK_EQ(out[0], 3);
  CHECK_EQ(out[1], P2(61));
  return 0;
}

/* Found by fuzz/layout_fuzz.c: an empty view took a wider itemsize that
** its other axes did not fit ({2^61, 0} int8 read as float64) */
static int test_view_itemsize_overflow(void) {
  lc_layout l = raw(0, V(P2(61), 0), V(0, 1)), before = l;
  CHECK_ERR(lc_layout_view_itemsize(&l, 1, 8, err), "array size overflows");
  CHECK_SAME(l, before);
  CHECK_OK(lc_layout_view_itemsize(&l, 1, 2, err));
  CHECK_LAYOUT(l, 0, 0, V(P2(61), 0), V(0, 2));
  return 0;
}

/* Found by fuzz/layout_fuzz.c: with itemsize 0 the byte count never
** overflowed, so a product of huge dimensions did (undefined behaviour). */
static int test_itemsize_not_positive(void) {
  lc_layout l;
  int64_t span;
  CHECK_ERR(contig(&l, 'C', 0, V(P2(40), P2(40), 6)), "itemsize 0 is not positive");
  CHECK_ERR(contig(&l, 'F', -8, V(2, 3)), "itemsize -8 is not positive");
  CHECK_ERR(strided(&l, &span, 0, V(P2(40), P2(40)), V(0, 0)), "itemsize 0 is not positive");
  C8(l, 2, 3);
  lc_layout before = l;
  CHECK_ERR(lc_layout_view_itemsize(&l, 8, 0, err), "itemsize 0 is not positive");
  CHECK_SAME(l, before);
  return 0;
}

/* Found by fuzz/layout_fuzz.c: the 1-based numbers in messages overflowed
** for an axis of INT_MAX or an index of INT64_MAX. */
static int test_extreme_axis_and_index(void) {
  lc_layout l, before;
  C8(l, 2, 3);
  before = l;
  CHECK_ERR(lc_layout_slice(&l, INT_MAX, 0, 1, 1, err), "axis 2147483648 out of range for 2 dimensions");
  CHECK_ERR(lc_layout_select(&l, INT_MAX, 0, err), "axis 2147483648 out of range");
  CHECK_ERR(lc_layout_squeeze(&l, INT_MAX, err), "axis 2147483648 out of range");
  CHECK_ERR(lc_layout_select(&l, 0, INT64_MAX, err), "index 9223372036854775807 out of bounds");
  int perm[2] = {0, INT_MAX};
  CHECK_ERR(lc_layout_transpose(&l, perm, err), "axis 2147483648 out of range");
  CHECK_SAME(l, before);
  return 0;
}

/* Found by fuzz/layout_fuzz.c: reshape multiplied dimensions by strides
** without checking (the contiguity test, and the strides of new axes); a
** huge stride overflowed. */
static int test_reshape_huge_strides(void) {
  lc_layout a, d;
  int64_t span;
  CHECK_OK(strided(&a, &span, 8, V(2, 2), V(8, P2(62))));
  CHECK_EQ(reshape(&a, &d, 'C', V(4)), LC_RESHAPE_COPY);
  CHECK_OK(strided(&a, &span, 8, V(2, 2), V(P2(62), 8)));
  CHECK_EQ(reshape(&a, &d, 'F', V(4)), LC_RESHAPE_COPY);
  CHECK_EQ(reshape(&a, &d, 'C', V(2, 1, 2)), LC_RESHAPE_VIEW);
  /* a new size-1 axis takes the group's whole extent as its stride */
  CHECK_OK(strided(&a, &span, 8, V(4), V(P2(61))));
  CHECK_EQ(reshape(&a, &d, 'C', V(1, 4)), LC_RESHAPE_COPY);
  CHECK_EQ(reshape(&a, &d, 'F', V(1, 4)), LC_RESHAPE_VIEW);   /* F starts at the smallest */
  CHECK_EQ(reshape(&a, &d, 'C', V(2, 2)), LC_RESHAPE_VIEW);
  CHECK_LAYOUT(d, 0, 4, V(2, 2), V(P2(62), P2(61)));
  return 0;
}

/* ---- the table ------------------------------------------------------------------------------- */

#define T(name) { #name, test_##name }
static const unit_test tests[] = {
  T(contiguous_c), T(contiguous_f), T(contiguous_zero_dims), T(contiguous_0d),
  T(contiguity_basic), T(contiguity_size1_axes), T(contiguity_size0_and_0d),
  T(contiguity_negative_strides), T(contiguity_transposed),
  T(strided_span), T(strided_negative), T(strided_size0), T(strided_errors),
  T(strided_span_overflow),
  T(like_contiguous), T(like_views), T(like_negative_strides), T(like_ties_and_size0),
  T(like_extreme_stride),
  T(extent), T(views_overlap), T(views_same),
  T(infer), T(infer_errors),
  T(reshape_view_c), T(reshape_view_f), T(reshape_view_sliced), T(reshape_view_size1),
  T(reshape_view_0d), T(reshape_size0), T(reshape_copy), T(reshape_errors),
  T(transpose_reverse), T(transpose_perm), T(transpose_bad_perm),
  T(slice_positive), T(slice_negative), T(slice_count0), T(slice_errors),
  T(select), T(select_errors), T(squeeze), T(squeeze_errors),
  T(view_itemsize), T(view_itemsize_errors),
  T(merge_axes_contiguous), T(merge_axes_partial), T(merge_axes_size1_and_0),
  T(merge_axes_in_place),
  T(same_shape), T(shape_format),
  T(maxdim), T(negative_dims), T(overflow), T(shape_count), T(broadcast_overflow),
  T(view_itemsize_overflow), T(itemsize_not_positive),
  T(extreme_axis_and_index), T(reshape_huge_strides),
};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

int main(int argc, char **argv) {
  return unit_main("layout_test", tests, NTESTS, argc, argv);
}
