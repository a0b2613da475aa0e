/*
** cpublas: matrix products on the CPU through the system's BLAS, the
** library `libblas.so.3` names (Debian's alternative: the reference BLAS,
** or OpenBLAS where it is installed), opened with dlopen at the first
** product, as cuBLAS is on the GPU. Only the Fortran symbols every BLAS
** exports are used: sgemm_/dgemm_, and sgemv_/dgemv_ for a product with
** one row or one column. LUACUDA_CPU_BLAS=0 turns it off; without it (or
** without the library) the host's blocked loop (matmul.c) and the
** simulator's kernel compute the products.
*/
#ifndef LUACUDA_CPUBLAS_H
#define LUACUDA_CPUBLAS_H

#include <stdbool.h>

struct lc_matmul_call;

/* Is the BLAS there (opening it at the first call)? true with its name
** ("blas /usr/lib/.../libblas.so.3": the file the symbols come from) in
** name[LC_ERRLEN], or false with why in why[LC_ERRLEN] (LUACUDA_CPU_BLAS=0,
** or dlopen's message). Either may be NULL. */
bool lc_cpublas_available(char *name, char *why);

/* Can the BLAS compute call c as its operands lie, with no copies (each
** operand row- or column-major with a leading dimension BLAS takes, the
** output row-major, every count fitting BLAS's int)? */
bool lc_cpublas_direct(const struct lc_matmul_call *c);

/* Compute call c (host-addressable memory, operands aligned to their
** element size) with the BLAS, operands that it cannot read as they lie
** copied to contiguous buffers first: 1 done, 0 not taken (no BLAS, or a
** count over BLAS's int: the caller computes it), -1 out of host memory. */
int lc_cpublas_matmul(const struct lc_matmul_call *c);

#endif
