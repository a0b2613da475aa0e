/*
** limits (cuda): the current device's context limits a program may raise,
** CU_LIMIT_STACK_SIZE (a recursive kernel's stack) and
** CU_LIMIT_PRINTF_FIFO_SIZE (a chatty kernel's printf), through
** cuCtxGetLimit and cuCtxSetLimit. The driver may round or clamp a value
** set: what it took is read back.
*/
#include "cuda.h"

static const int cu_limit[LC_NLIMITS] = {CU_LIMIT_STACK_SIZE, CU_LIMIT_PRINTF_FIFO_SIZE};

int lc_cuda_get_limit(lc_limit which, size_t *value, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  return lc_cuda_check(lc_cu.CtxGetLimit(value, cu_limit[which]), "cuCtxGetLimit", err);
}

int lc_cuda_set_limit(lc_limit which, size_t value, size_t *took, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  /* the stack is reserved for every thread the device holds: idle pool
  ** memory given back may make room for it */
  CUresult r;
  LC_CUDA_RETRY_OOM(r, CUDA_ERROR_OUT_OF_MEMORY, lc_cu.CtxSetLimit(cu_limit[which], value));
  /* the refusals the manual documents for it */
  if (r == CUDA_ERROR_INVALID_VALUE && which == LC_LIMIT_PRINTF_FIFO)
    return lc_fail(err, LC_EFAIL, "the printf FIFO's size cannot change once a kernel that "
                   "calls printf was launched on the device (cuCtxSetLimit: "
                   "CUDA_ERROR_INVALID_VALUE)");
  if (r == CUDA_ERROR_OUT_OF_MEMORY && which == LC_LIMIT_STACK)
    return lc_fail(err, LC_ENOMEM, "the device has no memory for a stack of %zu bytes for "
                   "each thread it holds; the limit is unchanged (cuCtxSetLimit: "
                   "CUDA_ERROR_OUT_OF_MEMORY)", value);
  rc = lc_cuda_check(r, "cuCtxSetLimit", err);
  return rc == LC_OK ? lc_cuda_get_limit(which, took, err) : rc;
}
