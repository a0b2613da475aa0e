/*
** reuse: the simulator's caching allocator, in front of guard.c, arena.c
** and mmap, as CuPy's and PyTorch's are in front of the driver. A freed
** device block is kept in a bin of its size, per device, and the next
** allocation of that size on that device takes it at once.
**
** At once, although work queued before the free may still use the block:
** the simulator runs all queued work in one queue, in the order it was
** queued (stream.c), and a synchronous call waits for all of it, so
** whatever the new array's owner does with the block comes after the old
** array's work. That is the rule of CUDA's stream-ordered allocator
** (cuMemFreeAsync, then cuMemAllocAsync on the same stream), which the
** binding keeps for every ordered_free backend (buffer.c's free_after).
** Without the cache, each freed block waited for the queue to drain
** before its memory could serve again, so a loop `acc = acc + a` that runs
** ahead of the queue made a fresh mapping, and its page faults, per step.
**
** The bins hold at most a cap of bytes per device (LUACUDA_MEMORY_CACHE, a
** quarter of the device's memory by default); past it the block is not
** kept. backend.c gives blocks back (through the queue) when the cap is
** passed, when an allocation finds the device full, and at trim_pool.
*/
#include "sim.h"
#include "env.h"

#include <stdlib.h>
#include <string.h>

typedef struct bin {
  size_t key;                       /* the size the blocks were allocated with */
  void **blocks;                    /* a stack: the block freed last is warmest */
  size_t n, cap;
} bin;

typedef struct device_cache {
  bin *bins;
  size_t nbins, cap;
  size_t bytes;                     /* counted as the allocation counted them */
} device_cache;

static atomic_flag lock = ATOMIC_FLAG_INIT;       /* lc_sim_spin_lock */
static device_cache caches[LC_SIM_MAX_DEVICES];

static bin *find(device_cache *c, size_t key) {
  for (size_t i = 0; i < c->nbins; i++)
    if (c->bins[i].key == key) return &c->bins[i];
  return NULL;
}

/* a change of a device's count, under lock */
static size_t count(atomic_size_t *used, size_t add, size_t sub) {
  size_t before = atomic_load_explicit(used, memory_order_relaxed);
  atomic_store_explicit(used, before + add - sub, memory_order_relaxed);
  return before;
}

size_t lc_sim_reuse_count(atomic_size_t *used, size_t add, size_t sub) {
  lc_sim_spin_lock(&lock);
  size_t before = count(used, add, sub);
  lc_sim_spin_unlock(&lock);
  return before;
}

/* a bin for key with room for one more block (under lock), out of line
** as rare; NULL or a full bin when memory is short */
static __attribute__((cold, noinline)) bin *make_room(device_cache *c, bin *b, size_t key) {
  if (b == NULL && c->nbins == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 8;
    bin *grown = realloc(c->bins, cap * sizeof *grown);
    if (grown) {
      c->bins = grown;
      c->cap = cap;
    }
  }
  if (b == NULL && c->nbins < c->cap) {
    b = &c->bins[c->nbins++];
    memset(b, 0, sizeof *b);
    b->key = key;
  }
  if (b && b->n == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 8;
    void **grown = realloc(b->blocks, cap * sizeof *grown);
    if (grown) {
      b->blocks = grown;
      b->cap = cap;
    }
  }
  return b;
}

void *lc_sim_reuse_take(int device, size_t key, size_t counted, atomic_size_t *used) {
  void *p = NULL;
  lc_sim_spin_lock(&lock);
  device_cache *c = &caches[device];
  bin *b = find(c, key);
  if (b && b->n > 0) {
    p = b->blocks[--b->n];
    c->bytes -= counted;
    count(used, counted, 0);
  }
  lc_sim_spin_unlock(&lock);
  return p;
}

bool lc_sim_reuse_put(int device, void *p, size_t key, size_t counted, size_t limit,
                      atomic_size_t *used) {
  bool kept = false;
  lc_sim_spin_lock(&lock);
  count(used, 0, counted);
  device_cache *c = &caches[device];
  if (c->bytes + counted <= limit && c->bytes + counted >= c->bytes) {
    bin *b = find(c, key);
    if (b == NULL || b->n == b->cap) b = make_room(c, b, key);
    if (b && b->n < b->cap) {
      b->blocks[b->n++] = p;
      c->bytes += counted;
      kept = true;
    }
  }
  lc_sim_spin_unlock(&lock);
  return kept;
}

size_t lc_sim_reuse_bytes(int device) {
  lc_sim_spin_lock(&lock);
  size_t n = caches[device].bytes;
  lc_sim_spin_unlock(&lock);
  return n;
}

/* The bins are taken whole under the lock and given back outside it: give
** queues work, and the executor's deferred frees come back here (put). */
void lc_sim_reuse_drain(int device, void (*give)(void *p, size_t key)) {
  lc_sim_spin_lock(&lock);
  device_cache c = caches[device];
  memset(&caches[device], 0, sizeof c);
  lc_sim_spin_unlock(&lock);
  for (size_t i = 0; i < c.nbins; i++) {
    bin *b = &c.bins[i];
    while (b->n > 0) give(b->blocks[--b->n], b->key);
    free(b->blocks);
  }
  free(c.bins);
}
