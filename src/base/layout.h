/*
** layout: shape and byte-stride arithmetic for N-d views.
** Pure C, no Lua and no memory: a layout says where each element of a view
** lies, as a byte offset from the start of the buffer that holds it.
** Axes are 0-based here; the Lua layer translates from Lua's 1-based API.
** Every function that can fail returns 0 on success and writes a message
** (without the function name, which the caller adds) into err.
*/
#ifndef LUACUDA_LAYOUT_H
#define LUACUDA_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#include "abi.h"          /* LC_MAXDIM */
#include "common.h"       /* LC_ERRLEN */

typedef struct lc_layout {
  int ndim;
  int64_t size;                  /* product of shape, cached */
  int64_t offset;                /* bytes from the buffer start to element 0 */
  int64_t shape[LC_MAXDIM];
  int64_t strides[LC_MAXDIM];    /* bytes; may be zero or negative */
} lc_layout;

/* dst = src, the live axes only: a layout is ~530 bytes, most of them
** axes past ndim, which nothing reads (they are not even set by
** lc_layout_contiguous); array math on small arrays copies several a call. */
static inline void lc_layout_copy(lc_layout *dst, const lc_layout *src) {
  if (dst == src) return;
  dst->ndim = src->ndim;
  dst->size = src->size;
  dst->offset = src->offset;
  memcpy(dst->shape, src->shape, sizeof *src->shape * (size_t)src->ndim);
  memcpy(dst->strides, src->strides, sizeof *src->strides * (size_t)src->ndim);
}

/* A reshape may be satisfied by a view or may need a copy. */
enum { LC_RESHAPE_VIEW = 0, LC_RESHAPE_COPY = 1, LC_RESHAPE_ERROR = -1 };

/* The element count of a shape, checked as every shape is: each axis
** non-negative and itemsize (positive) times the product of the axes, a
** zero-length axis counted as 1, at most INT64_MAX (NumPy's limit on
** arr.size * arr.itemsize). A zero-length axis counts because the other
** axes' strides are still computed through it, and so that every product
** of some of a shape's axes fits too. Every function here that makes a
** shape checks it with this, so a layout that exists has a count and a
** byte size that fit in int64_t, and so do the products of its axes.
** Fails with "array size overflows" (or a bad rank, axis or itemsize). */
int lc_shape_count(int ndim, const int64_t *shape, int64_t itemsize, int64_t *count,
                   char *err);

/* Contiguous layout of the given shape; order is 'C' or 'F'. */
int lc_layout_contiguous(lc_layout *l, int ndim, const int64_t *shape,
                         int64_t itemsize, char order, char *err);

/* Explicit strides. Offset is set so the lowest element is at byte 0;
** *span receives the bytes a buffer needs to hold every element. */
int lc_layout_strided(lc_layout *l, int ndim, const int64_t *shape,
                      int nstrides, const int64_t *strides, int64_t itemsize,
                      int64_t *span, char *err);

/* Contiguous layout whose axes are ordered like src's strides
** (NumPy's empty_like with order 'K'). Fails when src's shape does not fit
** the itemsize (src may be a broadcast view of a smaller one). */
int lc_layout_like(lc_layout *dst, const lc_layout *src, int64_t itemsize, char *err);

bool lc_layout_is_c_contiguous(const lc_layout *l, int64_t itemsize);
bool lc_layout_is_f_contiguous(const lc_layout *l, int64_t itemsize);

/* Byte range [lo, hi) of the buffer that the view touches; empty (lo == hi)
** for size-0 views. */
void lc_layout_extent(const lc_layout *l, int64_t itemsize,
                      int64_t *lo, int64_t *hi);

/* The overlap test, the one every operation whose output may alias an
** input asks (copies, array math, reductions and scans, products). Two
** views (layout, itemsize) of memory at addresses abase and bbase in one
** address space (their offsets count from there), whichever buffers hold
** them: may writing the elements of one change what the other reads? True
** when the byte extents [lowest, highest] intersect, so views whose
** elements interleave without sharing a byte count too (a copy through a
** temporary where none was needed, never the reverse). Never for an empty
** view. */
bool lc_views_overlap(uintptr_t abase, const lc_layout *a, int64_t aisz,
                      uintptr_t bbase, const lc_layout *b, int64_t bisz);

/* Do the two views (as above, of the same shape) name the same bytes
** element by element: one itemsize, one first address, and one stride
** along every axis longer than 1? An elementwise operation may then write
** its output over its input in place, and a copy has nothing to do. */
bool lc_views_same(uintptr_t abase, const lc_layout *a, int64_t aisz,
                   uintptr_t bbase, const lc_layout *b, int64_t bisz);

/* Fill one -1 entry of shape from the total size; other negatives, a
** second -1, or a size that does not divide are errors. */
int lc_shape_infer(int ndim, int64_t *shape, int64_t size, char *err);

/* Reshape src into newshape (already inferred). On LC_RESHAPE_VIEW dst is
** the view; on LC_RESHAPE_COPY dst is the contiguous layout (offset 0) that
** a copy must be written in. */
int lc_layout_reshape(const lc_layout *src, int ndim, const int64_t *newshape,
                      int64_t itemsize, char order, lc_layout *dst, char *err);

/* perm is 0-based; NULL reverses the axes. */
int lc_layout_transpose(lc_layout *l, const int *perm, char *err);

/* Keep count elements of axis, starting at index start, every step
** (step != 0, may be negative). start must lie in the axis unless
** count == 0. */
int lc_layout_slice(lc_layout *l, int axis, int64_t start, int64_t count,
                    int64_t step, char *err);

/* Select index i of axis and drop the axis. */
int lc_layout_select(lc_layout *l, int axis, int64_t i, char *err);

/* Drop size-1 axes: all of them (axis < 0) or only the given one. */
int lc_layout_squeeze(lc_layout *l, int axis, char *err);

/* Reinterpret the elements with another itemsize (NumPy's view(dtype));
** the new shape is checked by lc_shape_count. */
int lc_layout_view_itemsize(lc_layout *l, int64_t old_itemsize,
                            int64_t new_itemsize, char *err);

/* Do a and b have the same shape once size-1 axes are dropped? */
bool lc_layout_same_shape(const lc_layout *a, const lc_layout *b);

/* NumPy's broadcasting: the shape n operands of shapes shapes[i] (ndims[i]
** axes each) broadcast to, trailing axes aligned, an axis of size 1
** stretched to the others' size. Fails naming the first two that clash, or
** when the shape's element count overflows (lc_shape_count, itemsize 1). */
int lc_broadcast_shapes(int n, const int *ndims, const int64_t *const *shapes,
                        int *ndim, int64_t *shape, char *err);

/* View src, of elements of itemsize bytes, as the broadcast shape (ndim,
** shape): leading axes added and size-1 axes stretched, both with stride
** 0. Fails when the shape is not reachable or its size overflows
** (lc_shape_count). */
int lc_layout_broadcast(const lc_layout *src, int64_t itemsize, int ndim,
                        const int64_t *shape, lc_layout *dst, char *err);

/* Merge neighbouring axes that every operand steps through as one: the
** loops over a few operands of one shape (elementwise math, a matmul's
** batch, a reduction's kept and reduced axes) then run over fewer, longer
** axes. shape holds ndim axes and strides[o] operand o's ndim byte
** strides; size-1 axes are dropped, and axis i joins the axis kept before
** it when, for every operand, that one's stride is stride[i] * shape[i]
** (C order: the last axis stays the innermost). Both are rewritten in
** place; the entries past the count returned are left as they were.
** Returns the axes left: 0 for a shape of size-1 axes only. */
int lc_merge_axes(int ndim, int64_t *shape, int nops, int64_t *const *strides);

/* Write "{2, 3}" into buf (truncated to len); LC_SHAPE_STRLEN holds any. */
#define LC_SHAPE_STRLEN (LC_MAXDIM * 21 + 3)
void lc_shape_format(char *buf, size_t len, int ndim, const int64_t *shape);

#endif
