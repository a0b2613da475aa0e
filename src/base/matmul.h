/*
** matmul: matrix products, NumPy's matmul, in pure C: the plan of a call
** from its operands' layouts (the vector cases, the batch axes broadcast,
** the message of shapes that do not match), the kernel's arguments
** (kernels/abi.h's lc_matmul_args), and the product on host memory, a
** blocked loop, for float32 and float64. The binding (binding/matmul.c)
** checks dtypes and kinds and allocates; the backends run the call on
** device memory (the simulator and, without cuBLAS, the CUDA backend with
** kernels/matmul.cu, or the CPU's BLAS on the simulator; cuBLAS on the
** CUDA backend).
*/
#ifndef LUACUDA_MATMUL_H
#define LUACUDA_MATMUL_H

#include <stdbool.h>
#include <stdint.h>

#include "abi.h"
#include "layout.h"
#include "matmul_call.h"

/* The plan of a @ b for views of layouts la and lb (at least one axis
** each): m, n, k, the batch shape (the operands' axes before their last
** two, broadcast) and each input's strides into c (data NULL, the output's
** strides left for lc_matmul_output); the result's shape into (*ndim,
** shape). 0, or -1 with a message naming both shapes and the axes that do
** not agree in err, or "array size overflows" for a result whose count
** does not fit (lc_shape_count). */
int lc_matmul_plan(const lc_layout *la, const lc_layout *lb, lc_matmul_call *c, int *ndim,
                   int64_t *shape, char *err);

/* The output's strides, from the layout of a view of the planned shape. */
void lc_matmul_output(lc_matmul_call *c, const lc_layout *out);

/* Drop the batch axes of one product and merge those every operand walks
** as one (the call stays the same products). */
void lc_matmul_collapse(lc_matmul_call *c);

/* The kernel's arguments for the call (the operands' data being the
** device addresses). */
void lc_matmul_pack(const lc_matmul_call *c, lc_matmul_args *a);

/* Run the call on host-addressable memory (operands aligned to their
** element size): through the system's BLAS where it loads (cpublas.h),
** else the blocked loop. 0, or -1 when out of host memory for its
** buffers. */
int lc_matmul_host(const lc_matmul_call *c);

#endif
