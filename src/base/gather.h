/*
** gather: indexing with arrays of indices and masks (take, put, a[idx],
** a[mask], add_at, nonzero), the part every backend shares. A call is one
** of kernels/gather_abi.h's operations on strided views; lc_gather_host
** runs it on host-addressable memory (host arrays here, the simulator's
** device arrays on its streams), kernels/gather.cu on the CUDA backend.
** Indices are 1-based, negative from the end; a call other than CHECK
** takes indices CHECK found in range.
*/
#ifndef LUACUDA_GATHER_H
#define LUACUDA_GATHER_H

#include <stdbool.h>
#include <stdint.h>

#include "dtype.h"
#include "gather_abi.h"
#include "layout.h"

typedef struct lc_gather_call {
  int op;                     /* LC_GATHER_* */
  lc_typecode dtype;          /* arr's and val's (ADD adds in it; LC_RECORD for a record) */
  int64_t itemsize;           /* bytes of an element of arr and val */
  char *arr;                  /* buffers; each layout's offset counts from its own */
  const char *idx;            /* int64 indices (COMPACT, COUNT: none) */
  char *val;
  long long *check;           /* CHECK: {position in idx (0-based, C order) or -1, value};
                              ** COUNT: {count, -} */
  lc_layout arr_lay, idx_lay, val_lay;
  int axis, naxes;
  bool flat;                  /* COMPACT */
  int64_t ntrue;              /* COMPACT */
} lc_gather_call;

/* The arguments of the kernels for a call (pointers aside). */
void lc_gather_pack(const lc_gather_call *c, lc_gather_args *a);

/* An index v (1-based, negative from the end) over n elements: 0-based,
** or -1 when out of range. */
static inline int64_t lc_gather_norm(int64_t v, int64_t n) {
  int64_t k = v < 0 ? v + n : v - 1;
  return k >= 0 && k < n ? k : -1;
}

/* Run the call on host-addressable memory. */
void lc_gather_host(const lc_gather_call *c);

#endif
