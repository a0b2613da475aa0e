/*
** reduce: reductions and scans on the CUDA backend, by the library's
** kernel lc_reduce<OP, IN, DOM, OUT> (kernels/reduce.cu), compiled by
** NVRTC at first use for each op, input dtype, domain and output dtype
** (lc_cuda_library_launch). The loops are base/reduce.h's plan. A
** reduction of many elements into few outputs is split over several
** blocks per output, each reducing PER_THREAD elements per thread, whose
** partials a second launch of the same kernel reduces (LC_REDUCE_FINISH),
** so no thread accumulates more than a few elements serially: float sums
** are tree-shaped.
*/
#include "cuda.h"

#include <stdio.h>
#include <string.h>

#include "abi.h"
#include "kernels.h"
#include "reduce.h"

/* the numbers reduce.cu spells out */
_Static_assert(LC_RED_SUM == 0 && LC_RED_MEAN == 4 && LC_RED_ARGMIN == 5 && LC_RED_ANY == 7 &&
               LC_RED_CUMSUM == 9 && LC_RED_CUMPROD == 10, "reduce.cu's op numbers");
_Static_assert(LC_DOM_BOOL == 0 && LC_DOM_I64 == 1 && LC_DOM_U64 == 2 && LC_DOM_F32 == 3 &&
               LC_DOM_F64 == 4, "reduce.cu's domain numbers");

/* elements one thread of a block reduces serially, at most */
#define PER_THREAD 16

/* a block of a power of two threads, 32 to LC_REDUCE_THREADS, for n elements */
static unsigned threads_for(int64_t n) {
  unsigned t = 32;
  while (t < LC_REDUCE_THREADS && (int64_t)t < n) t *= 2;
  return t;
}

/* May an element at addr plus any multiple of these strides be misaligned
** for its size? */
static bool misaligned(uint64_t addr, int64_t size, const int64_t *s1, int n1,
                       const int64_t *s2, int n2) {
  uint64_t any = addr;
  for (int i = 0; i < n1; i++) any |= (uint64_t)s1[i];
  for (int i = 0; i < n2; i++) any |= (uint64_t)s2[i];
  return any % (uint64_t)size != 0;
}

/* blocks loop over their work (grid-stride), so the grid may be smaller */
static int launch(const char *name, int64_t blocks, unsigned threads, CUdeviceptr in,
                  CUdeviceptr out, CUdeviceptr work, lc_reduce_args *a, CUstream st, char *err) {
  void *params[4] = {&in, &out, &work, a};
  return lc_cuda_library_launch("luacuda/reduce.cu", lc_reduce_source, name,
                                lc_cuda_grid(blocks, 1u << 20), threads, params, st, err);
}

int lc_cuda_reduce(const lc_reduce_call *c, lc_stream *s, char *err) {
  lc_reduce_plan p;
  lc_reduce_plan_make(c, &p);
  bool scan = lc_reduce_is_scan(c->op);
  if (p.nout == 0 || (scan && p.count == 0)) return s ? LC_OK : lc_cuda_synchronize(err);
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  const lc_dtype *in = &lc_dtypes[c->in_type], *acc = &lc_dtypes[c->acc_type],
                 *out = &lc_dtypes[c->out_type];
  char name[64];
  snprintf(name, sizeof name, "lc_reduce<%d, %d, %d, %d>", (int)c->op, (int)c->in_type,
           (int)lc_reduce_domain_of(c->op, in, acc), (int)c->out_type);

  lc_reduce_args a;
  memset(&a, 0, sizeof a);
  a.nout = p.nout;
  a.count = p.count;
  a.nkept = p.nkept;
  a.nred = p.nred;
  a.acc_size = (int)acc->size;
  a.acc_signed = acc->kind == 'i';
  for (int i = 0; i < p.nkept; i++) {
    a.kshape[i] = p.kshape[i];
    a.kin[i] = p.kin[i];
    a.kout[i] = p.kout[i];
  }
  for (int i = 0; i < p.nred; i++) {
    a.rshape[i] = p.rshape[i];
    a.rin[i] = p.rin[i];
    a.rout[i] = p.rout[i];
  }
  const char *ip = c->in + p.in0;
  char *op = c->out + p.out0;
  if (misaligned((uint64_t)(uintptr_t)ip, in->size, p.kin, p.nkept, p.rin, p.nred))
    a.flags |= LC_REDUCE_BYTES_IN;
  if (misaligned((uint64_t)(uintptr_t)op, out->size, p.kout, p.nkept, scan ? p.rout : NULL,
                 scan ? p.nred : 0))
    a.flags |= LC_REDUCE_BYTES_OUT;
  CUdeviceptr din = lc_cuda_ptr(ip), dout = lc_cuda_ptr(op);
  CUstream st = lc_cuda_stream(s);
  unsigned threads = threads_for(p.count);
  if (scan) {
    a.parts = 1;
    a.chunk = p.count;
    rc = launch(name, p.nout, threads, din, dout, 0, &a, st, err);
    return rc != LC_OK ? rc : lc_cuda_finish(CUDA_SUCCESS, "cuLaunchKernel", s, err);
  }
  int64_t most = (int64_t)threads * PER_THREAD;
  a.parts = p.count > most ? (p.count + most - 1) / most : 1;
  a.chunk = (p.count + a.parts - 1) / a.parts;
  if (a.parts == 1) {
    rc = launch(name, p.nout, threads, din, dout, 0, &a, st, err);
    return rc != LC_OK ? rc : lc_cuda_finish(CUDA_SUCCESS, "cuLaunchKernel", s, err);
  }
  /* the partials, then their reduction into the outputs */
  CUdeviceptr work;
  rc = lc_cuda_temp_alloc((size_t)(p.nout * a.parts) * LC_REDUCE_PART, st, &work, err);
  if (rc != LC_OK) return rc;
  rc = launch(name, p.nout * a.parts, threads, din, dout, work, &a, st, err);
  if (rc == LC_OK) {
    a.flags |= LC_REDUCE_FINISH;
    rc = launch(name, p.nout, threads_for(a.parts), din, dout, work, &a, st, err);
  }
  lc_cuda_temp_free(work, st);
  return rc != LC_OK ? rc : lc_cuda_finish(CUDA_SUCCESS, "cuLaunchKernel", s, err);
}
