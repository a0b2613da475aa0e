/*
** sort: sorting along one axis of a strided view (sort, argsort), and the
** searches over a sorted 1-d view (searchsorted). Pure C: the call every
** backend receives (lc_sort_call) and the computation on host-addressable
** memory (lc_sort_host), which the simulator runs on its stream and the
** binding runs for host arrays.
**
** The order is kernels/sort_keys.h's: NumPy's, NaN last. Each row (the
** elements along the axis, for every position of the other axes) is read
** into a scratch buffer as keys, sorted by an LSD radix sort of 8 bits a
** pass (stable; passes whose digit is the same for every key skipped;
** insertion sort for short rows) and written to the output's row: the
** keys turned back into elements (sort), or the 1-based positions the
** sorted elements had in the row (argsort, int64).
*/
#ifndef LUACUDA_SORT_H
#define LUACUDA_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "layout.h"

typedef struct lc_sort_call {
  bool argsort;            /* out holds int64 1-based positions, else elements */
  lc_typecode type;        /* the input's dtype (bool, an integer or a float) */
  int axis;                /* 0-based, < in_lay.ndim */
  const char *in;          /* buffer starts: layouts' offsets apply */
  char *out;
  lc_layout in_lay, out_lay;   /* the same shape */
} lc_sort_call;

/* The key kind, width and mantissa bits of a dtype (sort_keys.h). */
void lc_sort_key_kind(const lc_dtype *dt, int *kind, int *bits, int *mant);

/* Bytes of scratch lc_sort_host needs (at least 1). */
size_t lc_sort_scratch_bytes(const lc_sort_call *c);
/* Scratch of that many bytes (NULL when there is no memory), and its
** release. */
void *lc_sort_scratch_alloc(size_t bytes);
void lc_sort_scratch_free(void *p, size_t bytes);
/* Sort; scratch holds lc_sort_scratch_bytes(c). in and out may be the
** same view (a sort in place), else must not overlap. */
void lc_sort_host(const lc_sort_call *c, void *scratch);

/* The element at p (of dtype dt) as its equal-key (sort_keys.h's
** lc_sk_canonical). */
uint64_t lc_sort_equal_key(const lc_dtype *dt, const void *p);

/* 0-based insertion point of key v among the n equal-keys of the sorted
** 1-d view at a (stride in bytes): the first position whose key is >= v
** (right: > v). */
int64_t lc_sort_search(const lc_dtype *dt, const char *a, int64_t n, int64_t stride,
                       uint64_t v, bool right);

#endif
