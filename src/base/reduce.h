/*
** reduce: reductions (sum, prod, min, max, mean, argmin, argmax, any, all)
** and scans (cumsum, cumprod) over chosen axes of a strided view. Pure C:
** NumPy's dtype rules (lc_reduce_dtypes), the plan every backend follows
** (lc_reduce_plan: the axes kept and the axes reduced, simplified), and the
** computation on host-addressable memory (lc_reduce_host), which the
** simulator runs on its stream and the binding runs for host arrays.
**
** Arithmetic: integers wrap (two's complement, as C's unsigned
** arithmetic); float sums and products are pairwise: blocks of up to
** LC_REDUCE_LEAF elements are summed by eight accumulators and the blocks
** combined as a balanced tree (NumPy's scheme), also across the axes of a
** reduction of several. Scans accumulate in order, as NumPy's do.
*/
#ifndef LUACUDA_REDUCE_H
#define LUACUDA_REDUCE_H

#include <stdbool.h>
#include <stdint.h>

#include "dtype.h"
#include "layout.h"

typedef enum lc_reduce_op {
  LC_RED_SUM,
  LC_RED_PROD,
  LC_RED_MIN,
  LC_RED_MAX,
  LC_RED_MEAN,
  LC_RED_ARGMIN,
  LC_RED_ARGMAX,
  LC_RED_ANY,
  LC_RED_ALL,
  LC_RED_CUMSUM,      /* the scans: the output has the input's shape */
  LC_RED_CUMPROD,
  LC_RED_NOPS
} lc_reduce_op;

/* "sum", "prod", ..., for messages */
extern const char *const lc_reduce_names[LC_RED_NOPS];

static inline bool lc_reduce_is_scan(lc_reduce_op op) { return op >= LC_RED_CUMSUM; }
/* May the reduction be over no element (sum 0, prod 1, mean NaN, any
** false, all true)? min, max, argmin and argmax may not. */
static inline bool lc_reduce_has_identity(lc_reduce_op op) {
  return !(op == LC_RED_MIN || op == LC_RED_MAX || op == LC_RED_ARGMIN || op == LC_RED_ARGMAX);
}
/* Does the op take a dtype= (NumPy's sum, prod, mean, cumsum, cumprod)? */
static inline bool lc_reduce_takes_dtype(lc_reduce_op op) {
  return op == LC_RED_SUM || op == LC_RED_PROD || op == LC_RED_MEAN || op == LC_RED_CUMSUM ||
         op == LC_RED_CUMPROD;
}

/* What an op computes in: its accumulator's C type. Integers of every
** width accumulate in U64 (wrapping; the result is truncated to its
** dtype), min and max of signed integers compare in I64, float16,
** bfloat16 and float32 accumulate in F32. */
typedef enum lc_reduce_domain {
  LC_DOM_BOOL, LC_DOM_I64, LC_DOM_U64, LC_DOM_F32, LC_DOM_F64
} lc_reduce_domain;

/* The combination an op's domain applies: sum (or on bool), product (and
** on bool), min, max. argmin and argmax compare as min and max; any and
** all are sum and product on bool. */
typedef enum lc_reduce_combine { LC_COMB_ADD, LC_COMB_MUL, LC_COMB_MIN, LC_COMB_MAX } lc_reduce_combine;

/* NumPy's dtypes (NumPy 2, Linux) for op over an input of dtype in, with
** the dtype= asked (NULL: none): the accumulator's *acc and the result's
** *out. sum, prod, cumsum and cumprod of bool and of signed integers
** narrower than 64 bits give int64, of narrower unsigned ones uint64;
** floats keep their dtype; mean of bool and integers gives float64; min
** and max keep the dtype; argmin and argmax give int64, any and all bool.
** A dtype= gives both dtypes. 0, or -1 with the cause in err (a record, a
** dtype= where the op takes none). */
int lc_reduce_dtypes(lc_reduce_op op, const lc_dtype *in, const lc_dtype *asked,
                     const lc_dtype **acc, const lc_dtype **out, char *err);

/* The domain and combination op computes with, accumulating in dtype acc
** over input elements of dtype in. */
lc_reduce_domain lc_reduce_domain_of(lc_reduce_op op, const lc_dtype *in, const lc_dtype *acc);
lc_reduce_combine lc_reduce_combine_of(lc_reduce_op op);

/* One reduction or scan. The input is the view in_lay of the buffer at in
** (element 0 at in + in_lay.offset). The output is the view out_lay of the
** buffer at out, given in the input's rank: a reduction's reduced axes have
** size 1 there (their strides are not used), a scan's output has the
** input's shape. axes: bit i set when axis i (0-based) is reduced or
** scanned; a scan over several axes runs over them in C order, as over
** the flattened elements. argmin and argmax store the 1-based index of
** their element in the reduced axes, flattened in C order. */
typedef struct lc_reduce_call {
  lc_reduce_op op;
  lc_typecode in_type, acc_type, out_type;    /* builtins only */
  const char *in;
  char *out;
  lc_layout in_lay, out_lay;
  uint64_t axes;
} lc_reduce_call;

/* A call's loops, simplified: axes of size 1 dropped; the kept axes (the
** outputs, or a scan's lines) merged where both views lay them out one
** after the other; the reduced axes merged likewise and, where the op does
** not depend on the order (not for argmin, argmax and the scans), turned to
** positive strides and ordered from the largest stride to the smallest.
** The first element of the input is in + in0, of the output out + out0.
** nout outputs (or lines), count elements reduced into each. */
typedef struct lc_reduce_plan {
  int nkept, nred;
  int64_t kshape[LC_MAXDIM], kin[LC_MAXDIM], kout[LC_MAXDIM];
  int64_t rshape[LC_MAXDIM], rin[LC_MAXDIM], rout[LC_MAXDIM];   /* rout: scans */
  int64_t in0, out0;
  int64_t nout, count;
} lc_reduce_plan;

void lc_reduce_plan_make(const lc_reduce_call *c, lc_reduce_plan *p);

/* Compute c on host-addressable memory (both buffers readable and
** writable here). The caller checked the call: dtypes from
** lc_reduce_dtypes, and no op without an identity over no element. */
void lc_reduce_host(const lc_reduce_call *c);

/* Elements a leaf of the pairwise sum holds. */
#define LC_REDUCE_LEAF 128

#endif
