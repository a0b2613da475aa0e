/*
** gather_abi: the arguments of the library's gather and scatter kernels
** (kernels/gather.cu), shared by the C side (src/base/gather.h,
** src/backend/cuda/gather.c) and the kernels. Valid C11 and CUDA C++.
**
** One call indexes the axes [axis, axis + naxes) of an array `arr`, taken
** together as one axis of n elements in C order, with the int64 indices of
** `idx` (1-based, negative from the end). The values `val` have the shape
** arr.shape[:axis] + idx.shape + arr.shape[axis + naxes:]; their element e
** (in C order) goes with arr's element at (p, idx[j], q) when e is
** (p, j, q). Byte strides, offsets folded into the pointers.
*/
#ifndef LUACUDA_GATHER_ABI_H
#define LUACUDA_GATHER_ABI_H

#ifndef LC_MAXDIM
#define LC_MAXDIM 32
#endif

/* what a call does (src/base/gather.h's lc_gather_op) */
#define LC_GATHER_CHECK 0     /* the first index out of range, into check */
#define LC_GATHER_TAKE 1      /* val[p, j, q] = arr[p, idx[j], q] */
#define LC_GATHER_PUT 2       /* arr[p, idx[j], q] = val[p, j, q] */
#define LC_GATHER_ADD 3       /* arr[p, idx[j], q] += val[p, j, q] */
#define LC_GATHER_COMPACT 4   /* the coordinates of a mask's true elements, in C order */
#define LC_GATHER_COUNT 5     /* a mask's true elements, into check[0] */

/* elements of a mask one block of the compaction counts and compacts */
#define LC_GATHER_PER_BLOCK 4096
/* the compaction's threads per block */
#define LC_GATHER_THREADS 256

typedef struct lc_gather_args {
  long long count;            /* elements of val (CHECK: of idx; COMPACT, COUNT: of the mask) */
  long long n;                /* elements of arr's indexed axes together */
  long long itemsize;         /* bytes of an element of arr and val */
  long long ntrue;            /* COMPACT: true elements (val is {rows, ntrue}) */
  int axis, naxes;            /* arr's indexed axes (0-based) */
  int arr_ndim, idx_ndim, val_ndim;
  int flat;                   /* COMPACT: one row of flat positions, not one per axis */
  long long arr_shape[LC_MAXDIM], arr_strides[LC_MAXDIM];
  long long idx_shape[LC_MAXDIM], idx_strides[LC_MAXDIM];
  long long val_shape[LC_MAXDIM], val_strides[LC_MAXDIM];
} lc_gather_args;

#endif
