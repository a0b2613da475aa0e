/*
** matmul_call: one call of the matrix products, as the plan (matmul.h)
** lays it out and every computation reads it: the host's blocked loop
** (matmul.c), the CPU's BLAS (cpublas.c), the backends' kernels.
*/
#ifndef LUACUDA_MATMUL_CALL_H
#define LUACUDA_MATMUL_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include "abi.h"
#include "dtype.h"

/* One operand of the products: element (i, j) of product z (its index in
** the batch shape) at data + i * rs + j * cs + the batch strides of z's
** index. Strides are bytes, of any sign; 0 where an axis has one element
** or is broadcast. */
typedef struct lc_matmul_operand {
  char *data;
  int64_t rs, cs;
  int64_t bs[LC_MAXDIM];
} lc_matmul_operand;

/* c = a b for every product of the batch: a m x k, b k x n, c m x n, all
** of dtype (float32 or float64). */
typedef struct lc_matmul_call {
  const lc_dtype *dtype;
  int64_t m, n, k;
  int nbatch;
  int64_t batch[LC_MAXDIM];
  lc_matmul_operand a, b, c;
  bool a_vector, b_vector;     /* a 1-d operand: its axis added, then removed */
} lc_matmul_call;

/* The number of products: the batch shape's product (1 without batch axes). */
static inline int64_t lc_matmul_count(const lc_matmul_call *c) {
  int64_t n = 1;
  for (int i = 0; i < c->nbatch; i++) n *= c->batch[i];
  return n;
}

#endif
