/*
** ufunc (cuda): array math's elementwise operations on the device: the
** kernel lc_ufunc<op, loop type> of kernels/ufunc.cu, compiled by NVRTC at
** its first use on a device (lc_cuda_library_call; NVRTC's disk cache
** keeps it across runs), launched on the call's stream over the operands'
** layouts collapsed as the host's loops collapse them.
*/
#include "cuda.h"

#include <stdio.h>
#include <string.h>

#include "kernels.h"
#include "ufunc.h"

int lc_cuda_ufunc(const lc_ufunc_call *c, lc_stream *s, char *err) {
  if (c->out.lay.size == 0) return LC_OK;
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  int nin = c->op == LC_UF_CAST ? 1 : c->nin;
  /* the loop type: the inputs' (where's values'), a cast's target */
  const lc_dtype *loop = c->op == LC_UF_CAST ? c->out.dtype : c->types.in[c->op == LC_UF_WHERE];
  char name[96];
  snprintf(name, sizeof name, "lc_ufunc<%d, %s>", (int)c->op, loop->ufunc_ctype);

  lc_ufunc_args a;
  memset(&a, 0, sizeof a);
  int64_t shape[LC_MAXDIM], strides[LC_UF_MAXOPS][LC_MAXDIM];
  a.ndim = lc_ufunc_collapse(c, shape, strides);
  a.n = c->out.lay.size;
  a.nin = nin;
  bool contiguous = a.ndim == 1, unit = a.ndim == 1;   /* unit: no array broadcast (stride 0) */
  for (int k = 0; k <= nin; k++) {
    const lc_ufunc_operand *o = k < nin ? &c->in[k] : &c->out;
    a.code[k] = (int)o->dtype->code;
    a.scalar[k] = o->scalar;
    if (o->scalar) memcpy(a.value[k], o->value, sizeof a.value[k]);
    else a.data[k] = o->data;      /* the binding gave device addresses */
    for (int d = 0; d < a.ndim; d++) a.strides[k][d] = strides[k][d];
    if (!o->scalar && strides[k][0] != o->dtype->size && strides[k][0] != 0) contiguous = false;
    if (!o->scalar && strides[k][0] != o->dtype->size) unit = false;
    if (!o->scalar) {
      bool ok = (uintptr_t)o->data % (uintptr_t)o->dtype->size == 0;
      for (int d = 0; d < a.ndim; d++) ok = ok && strides[k][d] % o->dtype->size == 0;
      if (!ok) a.unaligned = 1;
    }
  }
  for (int d = 0; d < a.ndim; d++) a.shape[d] = shape[d];
  a.contiguous = contiguous;
  bool direct = unit && !a.unaligned && c->op != LC_UF_CAST && c->out.dtype == c->types.res;
  for (int k = 0; k < nin; k++) direct = direct && c->in[k].dtype == c->types.in[k];
  a.direct = direct;
  void *params[1] = {&a};
  return lc_cuda_library_call("luacuda/ufunc.cu", lc_ufunc_source, name,
                              lc_cuda_grid((a.n + 255) / 256, 1u << 20), 256, params, s, err);
}
