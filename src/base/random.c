/*
** random: the host's loop of luacuda's random numbers (random.h): each
** block of the generator computed by kernels/philox.h's rules, its elements
** stored in the call's view in C order.
*/
#include "random.h"

#include <string.h>

#include "philox.h"

_Static_assert(sizeof(unsigned int) == 4, "philox.h needs 32-bit unsigned int");
_Static_assert(sizeof(unsigned long long) == 8, "philox.h needs 64-bit unsigned long long");

int lc_random_words(int dist, const lc_dtype *dt, uint64_t range) {
  if (dist == LC_RNG_INTEGERS) return range <= 0x100000000ull ? 1 : 2;
  return dt->code == LC_FLOAT32 ? 1 : 2;
}

uint64_t lc_random_blocks(int dist, const lc_dtype *dt, uint64_t range, int64_t n) {
  uint64_t per = (uint64_t)(4 / lc_random_words(dist, dt, range));
  return ((uint64_t)n + per - 1) / per;
}

uint64_t lc_random_split_key(uint64_t key, uint64_t counter, uint32_t i) {
  return lc_rng_split_key(key, counter, i);
}

/* Walks a view's elements in C order: the byte offset of the current one. */
typedef struct walker {
  const lc_layout *l;
  int64_t idx[LC_MAXDIM];
  int64_t off;
  int64_t step;                /* contiguous: the item size; else 0 */
} walker;

static void walk_start(walker *w, const lc_layout *l, int64_t itemsize) {
  memset(w, 0, sizeof *w);
  w->l = l;
  int64_t want = itemsize;
  bool c = true;
  for (int d = l->ndim - 1; d >= 0; d--) {
    if (l->shape[d] != 1 && l->strides[d] != want) c = false;
    want *= l->shape[d];
  }
  w->step = c ? itemsize : 0;
}

static void walk_next(walker *w) {
  if (w->step) {
    w->off += w->step;
    return;
  }
  const lc_layout *l = w->l;
  for (int d = l->ndim - 1; d >= 0; d--) {
    w->off += l->strides[d];
    if (++w->idx[d] < l->shape[d]) return;
    w->off -= l->strides[d] * l->shape[d];
    w->idx[d] = 0;
  }
}

/* Store the integer bits v as an element of size n. */
static void store_bits(char *p, int64_t n, uint64_t v) {
  switch (n) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    default: memcpy(p, &v, 8); break;
  }
}

void lc_random_host(const lc_random_call *c) {
  int64_t n = c->lay.size;
  if (n == 0) return;
  const lc_dtype *dt = c->dtype;
  int per = 4 / lc_random_words(c->dist, dt, c->range);
  uint64_t blocks = lc_random_blocks(c->dist, dt, c->range, n);
  bool f32 = dt->code == LC_FLOAT32;
  float pf[4];
  for (int k = 0; k < 4; k++) pf[k] = (float)c->p[k];
  walker w;
  walk_start(&w, &c->lay, dt->size);
  int64_t j = 0;
  for (uint64_t b = 0; b < blocks; b++) {
    uint64_t at = c->counter + b;
    lc_philox_block v = lc_philox_main(c->key, at);
    float f[4];
    double d[2];
    unsigned long long u[4];
    switch (c->dist) {
      case LC_RNG_UNIFORM:
        if (f32) lc_rng_uniform_f32(v, pf[0], pf[1], pf[2], pf[3], f);
        else lc_rng_uniform_f64(v, c->p[0], c->p[1], c->p[2], c->p[3], d);
        break;
      case LC_RNG_NORMAL:
        if (f32) lc_rng_normal_f32(v, pf[0], pf[1], f);
        else lc_rng_normal_f64(v, c->p[0], c->p[1], d);
        break;
      default:
        lc_rng_integers(v, c->key, at, c->low, c->range, u);
        break;
    }
    for (int k = 0; k < per && j < n; k++, j++) {
      char *p = c->data + w.off;
      if (c->dist == LC_RNG_INTEGERS) store_bits(p, dt->size, u[k]);
      else if (f32) memcpy(p, &f[k], 4);
      else memcpy(p, &d[k], 8);
      walk_next(&w);
    }
  }
}
