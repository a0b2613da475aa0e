/*
** arena: the simulator's small device allocations (below the guarded
** size, 64 KiB by default), kept out of the host heap. A kernel that writes
** past such an array must not reach malloc's metadata, or the process
** aborts later in free ("double free or corruption"). So blocks come from
** mappings of their own, one size class per slab, and the allocator's
** bookkeeping lives elsewhere: a stray write lands in another device block
** (as on a GPU) or faults, never in a header.
**
** Classes are powers of two from 256 bytes to 64 KiB; a slab holds at
** least 16 blocks and is 1 MiB or more. Freed blocks go back on their
** class's free list; slabs are kept for the process (trim_pool gives back
** only the guarded blocks).
*/
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS */
#include "sim.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>


#define MIN_SHIFT 8                  /* 256 bytes */
#define NCLASSES 9                   /* up to 64 KiB */
#define SLAB_BYTES ((size_t)1 << 20)

typedef struct size_class {
  void **free;                       /* free blocks, a stack (in the host heap) */
  size_t nfree, cap;
  size_t blocks;                     /* in its slabs: every one may come back at once */
} size_class;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static size_class classes[NCLASSES];

size_t lc_sim_arena_max(void) { return (size_t)1 << (MIN_SHIFT + NCLASSES - 1); }

static int class_of(size_t n) {
  int c = 0;
  while (((size_t)1 << (MIN_SHIFT + c)) < n) c++;
  return c;
}

/* Map a new slab for class c and put its blocks on the free list. Under lock.
** The list has room for every block of the class's slabs, those handed out
** too, so that a free never needs to grow it (nor can fail). */
static bool grow(int c) {
  size_t block = (size_t)1 << (MIN_SHIFT + c);
  size_t bytes = block * 16 > SLAB_BYTES ? block * 16 : SLAB_BYTES;
  size_t count = bytes / block;
  size_class *k = &classes[c];
  if (k->blocks + count > k->cap) {
    size_t cap = (k->blocks + count) * 2;
    void **grown = realloc(k->free, cap * sizeof *grown);
    if (grown == NULL) return false;
    k->free = grown;
    k->cap = cap;
  }
  char *slab = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (slab == MAP_FAILED) return false;
  k->blocks += count;
  for (size_t i = count; i-- > 0;) k->free[k->nfree++] = slab + i * block;
  return true;
}

void *lc_sim_arena_alloc(size_t n) {
  if (n == 0 || n > lc_sim_arena_max()) return NULL;
  int c = class_of(n);
  size_class *k = &classes[c];
  void *p = NULL;
  pthread_mutex_lock(&lock);
  if (k->nfree > 0 || grow(c)) p = k->free[--k->nfree];
  pthread_mutex_unlock(&lock);
  if (p) LC_SIM_BLOCK_ALLOCATED(p, n);
  return p;
}

void lc_sim_arena_free(void *p, size_t n) {
  size_class *k = &classes[class_of(n)];
  LC_SIM_BLOCK_FREED(p);
  pthread_mutex_lock(&lock);
  /* room for it was made when its slab was mapped (grow) */
  k->free[k->nfree++] = p;
  pthread_mutex_unlock(&lock);
}
