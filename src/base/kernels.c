/*
** kernels: the files of kernels/ as NUL-terminated strings (kernels.h),
** each behind kernels/abi.h (common.h's LC_EMBED_KERNEL).
*/
#include "common.h"
#include "kernels.h"

LC_EMBED_KERNEL_WITH(lc_prelude_source, "philox.h", "prelude.cuh");
LC_EMBED_KERNEL(lc_strided_source, "strided.cu");
LC_EMBED_KERNEL(lc_reduce_source, "reduce.cu");
LC_EMBED_KERNEL_WITH(lc_ufunc_source, "ufunc_ops.h", "ufunc.cu");
LC_EMBED_KERNEL_WITH(lc_random_source, "philox.h", "random.cu");
LC_EMBED_KERNEL(lc_matmul_source, "matmul.cu");
LC_EMBED_KERNEL_WITH(lc_gather_source, "gather_abi.h", "gather.cu");
LC_EMBED_KERNEL_WITH(lc_sort_source, "sort_keys.h", "sort.cu");
