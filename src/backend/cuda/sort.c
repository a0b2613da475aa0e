/*
** sort: sort and argsort on the CUDA backend, by the library's radix sort
** (kernels/sort.cu; kernels/sort_keys.h says how rows are sorted
** together), compiled by NVRTC at first use (lc_cuda_library_launch).
** Segmented by row numbers: the rows' pairs are sorted as one array, the
** passes over the key's bytes followed by passes over the row number's
** (none for a single row), so many short rows cost what one long row of
** the same size costs, and a few long rows take no launch per row. All on
** the stream: scratch memory ordered on it, nothing read back.
*/
#include "cuda.h"

#include <stdio.h>
#include <string.h>

#include "abi.h"
#include "kernels.h"
#include "sort.h"
#include "sort_keys.h"

/* blocks loop over their work (grid-stride), so the grid may be smaller */
static unsigned grid_for(int64_t blocks) { return lc_cuda_grid(blocks, 1u << 16); }

static int launch(const char *name, unsigned grid, unsigned threads, CUdeviceptr *ptrs,
                  lc_sort_args *a, CUstream st, char *err) {
  void *params[8] = {&ptrs[0], &ptrs[1], &ptrs[2], &ptrs[3], &ptrs[4], &ptrs[5], &ptrs[6], a};
  return lc_cuda_library_launch("luacuda/sort.cu", lc_sort_source, name, grid, threads, params,
                                st, err);
}

/* May an element at addr plus any multiple of these strides be misaligned
** for its size? */
static bool misaligned(uint64_t addr, int64_t size, const lc_layout *l) {
  uint64_t any = addr;
  for (int i = 0; i < l->ndim; i++) any |= (uint64_t)l->strides[i];
  return any % (uint64_t)size != 0;
}

int lc_cuda_sort(const lc_sort_call *c, lc_stream *s, char *err) {
  const lc_layout *il = &c->in_lay, *ol = &c->out_lay;
  const lc_dtype *dt = &lc_dtypes[c->type];
  if (il->size == 0) return s ? LC_OK : lc_cuda_synchronize(err);
  if ((uint64_t)il->size >= (UINT64_C(1) << 32)) {
    return lc_fail(err, LC_ENOTSUP,
                   "the CUDA backend sorts fewer than 2^32 elements at once, got %lld",
                   (long long)il->size);
  }
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  lc_sort_args a;
  memset(&a, 0, sizeof a);
  a.n = il->shape[c->axis];
  a.total = il->size;
  a.rows = a.total / a.n;
  a.blocks = (a.total + LC_SORT_TILE - 1) / LC_SORT_TILE;
  a.in_axis = il->strides[c->axis];
  a.out_axis = ol->strides[c->axis];
  for (int d = 0; d < il->ndim; d++) {
    if (d == c->axis) continue;
    a.shape[a.ndim] = il->shape[d];
    a.in_strides[a.ndim] = il->strides[d];
    a.out_strides[a.ndim++] = ol->strides[d];
  }
  lc_sort_key_kind(dt, &a.kind, &a.bits, &a.mant);
  a.size = (int)dt->size;
  a.argsort = c->argsort;
  const char *in = c->in + il->offset;
  char *out = c->out + ol->offset;
  a.bytewise = misaligned((uint64_t)(uintptr_t)in, dt->size, il) ||
               misaligned((uint64_t)(uintptr_t)out, c->argsort ? 8 : dt->size, ol);

  /* scratch: two arrays of pairs and the counts */
  size_t pairs = (size_t)a.total * 8, nc = (size_t)(256 * a.blocks) * sizeof(unsigned);
  CUstream st = lc_cuda_stream(s);
  CUdeviceptr work;
  rc = lc_cuda_temp_alloc(4 * pairs + nc, st, &work, err);
  if (rc != LC_OK) return rc;
  CUdeviceptr p[7] = {lc_cuda_ptr(in), lc_cuda_ptr(out), work, work + pairs, work + 2 * pairs,
                      work + 3 * pairs, work + 4 * pairs};
  rc = launch("lc_sort_gather", grid_for((a.total + 255) / 256), 256, p, &a, st, err);
  int row_bits = 0;
  while (row_bits < 64 && (uint64_t)(a.rows - 1) >> row_bits) row_bits++;
  /* a thread's run of the counts at least 4 long: few threads for few tiles */
  unsigned scan_threads = 32;
  while (scan_threads < LC_SORT_SCAN_THREADS && (int64_t)scan_threads * 4 < 256 * a.blocks)
    scan_threads *= 2;
  int key_passes = a.bits / 8, row_passes = (row_bits + 7) / 8;
  for (int pass = 0; rc == LC_OK && pass < key_passes + row_passes; pass++) {
    a.row_pass = pass >= key_passes;
    a.shift = 8 * (a.row_pass ? pass - key_passes : pass);
    unsigned g = grid_for(a.blocks);
    rc = launch("lc_sort_count", g, LC_SORT_THREADS, p, &a, st, err);
    if (rc == LC_OK) rc = launch("lc_sort_scan", 1, scan_threads, p, &a, st, err);
    if (rc == LC_OK) rc = launch("lc_sort_scatter", g, LC_SORT_THREADS, p, &a, st, err);
    CUdeviceptr t = p[2]; p[2] = p[4]; p[4] = t;     /* the pairs moved */
    t = p[3]; p[3] = p[5]; p[5] = t;
  }
  if (rc == LC_OK) rc = launch("lc_sort_place", grid_for((a.total + 255) / 256), 256, p, &a, st, err);
  lc_cuda_temp_free(work, st);
  return rc != LC_OK ? rc : lc_cuda_finish(CUDA_SUCCESS, "cuLaunchKernel", s, err);
}
