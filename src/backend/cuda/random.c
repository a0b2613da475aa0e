/*
** random (cuda): random numbers on the device: the kernel lc_random<dist,
** T> of kernels/random.cu, compiled by NVRTC at its first use on a device
** (lc_cuda_library_call), launched on the call's stream. Every thread
** takes whole blocks of the generator in a grid-stride loop, so the bits
** are the host's (base/random.c) whatever the grid.
*/
#include "cuda.h"

#include <stdio.h>
#include <string.h>

#include "kernels.h"
#include "random.h"

/* the C++ type kernels/random.cu stores an element of dt as */
static const char *store_type(int dist, const lc_dtype *dt) {
  if (dist != LC_RNG_INTEGERS) return dt->code == LC_FLOAT32 ? "float" : "double";
  switch (dt->size) {
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return "unsigned int";
    default: return "unsigned long long";
  }
}

/* at most this many blocks of 256 threads: enough to fill a GPU, and a
** large call runs the grid-stride loop */
#define MAX_GRID 1024

int lc_cuda_random(const lc_random_call *c, lc_stream *s, char *err) {
  if (c->lay.size == 0) return LC_OK;
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  char name[96];
  snprintf(name, sizeof name, "lc_random<%d, %s>", c->dist, store_type(c->dist, c->dtype));

  lc_random_args a;
  memset(&a, 0, sizeof a);
  a.key = c->key;
  a.counter = c->counter;
  a.n = c->lay.size;
  a.p0 = c->p[0];
  a.p1 = c->p[1];
  a.p2 = c->p[2];
  a.p3 = c->p[3];
  a.low = c->low;
  a.range = c->range;
  a.data = c->data;                /* the binding gave a device address */
  a.words = lc_random_words(c->dist, c->dtype, c->range);
  /* the view without its size-1 axes; contiguous when C-ordered */
  int64_t want = c->dtype->size;
  bool contiguous = true;
  for (int d = c->lay.ndim - 1; d >= 0; d--) {
    if (c->lay.shape[d] == 1) continue;
    if (c->lay.strides[d] != want) contiguous = false;
    want *= c->lay.shape[d];
  }
  int nd = 0;
  for (int d = 0; d < c->lay.ndim; d++) {
    if (c->lay.shape[d] == 1) continue;
    a.shape[nd] = c->lay.shape[d];
    a.strides[nd++] = c->lay.strides[d];
  }
  a.ndim = nd;
  a.contiguous = contiguous;
  void *params[1] = {&a};
  uint64_t blocks = lc_random_blocks(c->dist, c->dtype, c->range, c->lay.size);
  return lc_cuda_library_call("luacuda/random.cu", lc_random_source, name,
                              lc_cuda_grid((int64_t)((blocks + 255) / 256), MAX_GRID), 256,
                              params, s, err);
}
