/*
** gather (cuda): take, put, add_at, the index check and a mask's
** compaction on the device, by the kernels of kernels/gather.cu
** (lc_cuda_library_launch: NVRTC at first use, kept per device), one
** thread per element, queued on the call's stream; a mask counted, then
** compacted by blocks of LC_GATHER_PER_BLOCK elements (each block's count,
** their running sum, each block's scan in shared memory). add_at adds with
** atomicAdd where CUDA has it (float32, float64, 32- and 64-bit
** integers); 8- and 16-bit integers and bool are added by one thread, in
** order; float16 and bfloat16 are refused.
*/
#include "cuda.h"

#include <stdio.h>
#include <string.h>

#include "gather.h"
#include "kernels.h"

#define THREADS 256

/* n elements, one thread each (serial: one thread for them all) */
static int launch_as(const char *name, int64_t n, bool serial, void **params, CUstream st,
                     char *err) {
  unsigned grid = serial ? 1 : lc_cuda_grid((n + THREADS - 1) / THREADS, 1u << 20),
           threads = serial ? 1 : n < THREADS ? 32 : THREADS;
  return lc_cuda_library_launch("luacuda/gather.cu", lc_gather_source, name, grid, threads,
                                params, st, err);
}

static int launch(const char *name, int64_t n, void **params, CUstream st, char *err) {
  return launch_as(name, n, false, params, st, err);
}

/* a mask of n elements, LC_GATHER_PER_BLOCK to a block of
** LC_GATHER_THREADS (blocks loop over theirs, so the grid may be smaller) */
static int launch_blocks(const char *name, int64_t n, void **params, CUstream st, char *err) {
  int64_t nb = (n + LC_GATHER_PER_BLOCK - 1) / LC_GATHER_PER_BLOCK;
  return lc_cuda_library_launch("luacuda/gather.cu", lc_gather_source, name,
                                lc_cuda_grid(nb, 1u << 20), LC_GATHER_THREADS, params, st, err);
}

int lc_cuda_gather(const lc_gather_call *c, lc_stream *s, char *err) {
  if (c->op == LC_GATHER_ADD && lc_dtype_is_narrow_float(&lc_dtypes[c->dtype])) {
    return lc_fail(err, LC_ENOTSUP, "adding at indices is not implemented for %s on the CUDA "
                   "backend (astype float32 first)", lc_dtypes[c->dtype].name);
  }
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  lc_gather_args a;
  lc_gather_pack(c, &a);
  CUstream st = lc_cuda_stream(s);
  CUdeviceptr arr = lc_cuda_ptr(c->arr + c->arr_lay.offset);
  CUdeviceptr idx = lc_cuda_ptr(c->idx + c->idx_lay.offset);
  CUdeviceptr val = lc_cuda_ptr(c->val + c->val_lay.offset);
  switch (c->op) {
    case LC_GATHER_CHECK: {
      CUdeviceptr chk = lc_cuda_ptr(c->check);
      rc = lc_cuda_check(lc_cu.MemsetD8Async(chk, 0xff, 16, st), "cuMemsetD8Async", err);
      void *p[3] = {&idx, &chk, &a};
      if (rc == LC_OK && a.count > 0) rc = launch("lc_gather_check", a.count, p, st, err);
      if (rc == LC_OK) rc = launch("lc_gather_check_value", 1, p, st, err);
      break;
    }
    case LC_GATHER_TAKE: case LC_GATHER_PUT: {
      if (a.count == 0) break;
      int put = c->op == LC_GATHER_PUT;
      void *p[5] = {&arr, &idx, &val, &a, &put};
      rc = launch("lc_gather_copy", a.count, p, st, err);
      break;
    }
    case LC_GATHER_ADD: {
      if (a.count == 0) break;
      char name[32];
      snprintf(name, sizeof name, "lc_gather_add<%d>", (int)c->dtype);
      void *p[4] = {&arr, &idx, &val, &a};
      bool atomic = lc_dtypes[c->dtype].size >= 4;      /* atomicAdd's dtypes */
      rc = launch_as(name, a.count, !atomic, p, st, err);
      break;
    }
    case LC_GATHER_COUNT: {
      CUdeviceptr chk = lc_cuda_ptr(c->check);
      rc = lc_cuda_check(lc_cu.MemsetD8Async(chk, 0, 8, st), "cuMemsetD8Async", err);
      void *p[3] = {&arr, &chk, &a};
      if (rc == LC_OK && a.count > 0) rc = launch_blocks("lc_gather_count", a.count, p, st, err);
      break;
    }
    case LC_GATHER_COMPACT: {
      if (a.count == 0 || a.ntrue == 0) break;
      long long nb = (a.count + LC_GATHER_PER_BLOCK - 1) / LC_GATHER_PER_BLOCK;
      CUdeviceptr counts;
      rc = lc_cuda_temp_alloc((size_t)nb * sizeof(long long), st, &counts, err);
      if (rc != LC_OK) return rc;
      void *pc[3] = {&arr, &counts, &a}, *po[2] = {&counts, &nb}, *pw[4] = {&arr, &counts, &val, &a};
      rc = launch_blocks("lc_gather_block_counts", a.count, pc, st, err);
      if (rc == LC_OK) rc = launch_as("lc_gather_block_offsets", 1, true, po, st, err);
      if (rc == LC_OK) rc = launch_blocks("lc_gather_compact", a.count, pw, st, err);
      lc_cuda_temp_free(counts, st);
      break;
    }
    default:
      return lc_fail(err, LC_EFAIL, "unknown gather operation %d", c->op);
  }
  if (rc != LC_OK) return rc;
  return lc_cuda_finish(CUDA_SUCCESS, "cuLaunchKernel", s, err);
}
