/*
** random: luacuda's random numbers on the host: the call a backend runs
** (lc_random_call), how many blocks of its generator a call takes, and the
** loop that fills host-addressable memory (also what the simulator runs,
** queued on its streams). What each element is, and the generator itself,
** is kernels/philox.h, which the CUDA backend's kernels (kernels/random.cu)
** and every user kernel read too: a seed gives the same bits on every
** backend, whatever the launch shape.
*/
#ifndef LUACUDA_RANDOM_H
#define LUACUDA_RANDOM_H

#include <stdint.h>

#include "abi.h"               /* LC_RNG_UNIFORM, LC_RNG_NORMAL, LC_RNG_INTEGERS */
#include "dtype.h"
#include "layout.h"

typedef struct lc_random_call {
  int dist;                    /* LC_RNG_* */
  const lc_dtype *dtype;       /* float32 or float64; an integer dtype for LC_RNG_INTEGERS */
  uint64_t key;                /* the generator's seed */
  uint64_t counter;            /* the first block the call takes */
  /* uniform: low, high - low, high, the largest value below high (each of
  ** the dtype's precision); normal: mean, std */
  double p[4];
  uint64_t low, range;         /* integers: low's bits, high - low (>= 1) */
  char *data;                  /* element 0: a host or device address */
  lc_layout lay;               /* its view */
} lc_random_call;

/* Words each element takes: 1 or 2 (philox.h). */
int lc_random_words(int dist, const lc_dtype *dt, uint64_t range);

/* Blocks a call of n elements takes (the counter moves on by as many). */
uint64_t lc_random_blocks(int dist, const lc_dtype *dt, uint64_t range, int64_t n);

/* Fill the call's elements, on host-addressable memory. */
void lc_random_host(const lc_random_call *c);

/* The key of generator i of a split of (key, counter). */
uint64_t lc_random_split_key(uint64_t key, uint64_t counter, uint32_t i);

#endif
