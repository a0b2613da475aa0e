/*
** kernels: the files of kernels/, built into the module (kernels.c), so
** that nothing has to be found on disk at run time.
*/
#ifndef LUACUDA_KERNELS_H
#define LUACUDA_KERNELS_H

/* The prelude every kernel source is compiled with (kernels/prelude.cuh),
** the kernel argument ABI (kernels/abi.h) and the random numbers'
** generator (kernels/philox.h) in front of it. */
extern const char lc_prelude_source[];
/* The library's own kernels, compiled for the device at first use; the
** ABI in front too. */
extern const char lc_strided_source[];
/* The library's reductions and scans (kernels/reduce.cu), ABI in front. */
extern const char lc_reduce_source[];
/* array math's elementwise kernels, behind the ABI and kernels/ufunc_ops.h */
extern const char lc_ufunc_source[];
/* the random numbers' kernels, behind the ABI and kernels/philox.h */
extern const char lc_random_source[];
/* matrix products' tiled kernel lc_matmul<T>, behind the ABI: the
** simulator's and, where cuBLAS is missing, the CUDA backend's */
extern const char lc_matmul_source[];
/* gather and scatter (take, put, add_at, masks), behind the ABI and
** kernels/gather_abi.h */
extern const char lc_gather_source[];
/* sort and argsort's radix sort (the CUDA backend), behind the ABI and
** kernels/sort_keys.h */
extern const char lc_sort_source[];

#endif
