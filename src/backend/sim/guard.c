/*
** guard: simulated device memory followed by a guard page. A block is
** a mapping of its own, placed so that an inaccessible page begins where
** its bytes end: a kernel that reads or writes past the end faults, and the
** fault becomes a launch error (fault.c) instead of silent corruption
** of the host heap.
**
** A fresh mapping costs system calls and a page fault for every page first
** touched (measured: allocating and filling 1 MiB takes 35 times as long as
** with malloc, which reuses its memory). So freed blocks are kept for reuse
** by an allocation of the same size, as malloc keeps its own, up to
** CACHE_BYTES in all; trim_pool() gives them back. Guards are best
** effort: when no mapping can be made, the block comes from malloc.
*/
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS */
#include "sim.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>


#define CACHE_SLOTS 32
#define CACHE_BYTES ((size_t)64 << 20)

typedef struct mapping {
  char *base;
  size_t body;          /* bytes before the guard page */
} mapping;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mapping cache[CACHE_SLOTS];   /* oldest first */
static unsigned cached;
static size_t cached_bytes;

static size_t page_size(void) {
  static size_t page;
  if (page == 0) page = (size_t)sysconf(_SC_PAGESIZE);
  return page;
}

static size_t body_of(size_t n) {
  size_t page = page_size();
  return (n + page - 1) & ~(page - 1);
}

static void unmap(mapping m) { munmap(m.base, m.body + page_size()); }

/* A cached mapping with this body, or {NULL} */
static mapping take(size_t body) {
  mapping m = {NULL, 0};
  pthread_mutex_lock(&lock);
  for (unsigned i = cached; i-- > 0;) {
    if (cache[i].body != body) continue;
    m = cache[i];
    cached_bytes -= body;
    memmove(cache + i, cache + i + 1, (--cached - i) * sizeof *cache);
    break;
  }
  pthread_mutex_unlock(&lock);
  return m;
}

/* Without a mapping (the process may have used up vm.max_map_count, two
** per block), a block from malloc, unguarded. A guarded block ends on a
** page boundary; this one never does, so free tells them apart: it
** starts at a page boundary, or 256 bytes after one when n is a multiple
** of the page. */
static void *unguarded(size_t n) {
  size_t page = page_size(), shift = n % page == 0 ? 256 : 0;
  void *p;
  if (n + shift < n || posix_memalign(&p, page, n + shift) != 0) return NULL;
  return (char *)p + shift;
}

void *lc_sim_guard_alloc(size_t n) {
  size_t body = body_of(n), page = page_size();
  if (body < n || body + page < body) return NULL;
  mapping m = take(body);
  if (m.base == NULL) {
    char *base = mmap(NULL, body + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base != MAP_FAILED && mprotect(base + body, page, PROT_NONE) != 0) {
      munmap(base, body + page);
      base = MAP_FAILED;
    }
    if (base == MAP_FAILED) return unguarded(n);
    m.base = base;
  }
  /* n is a multiple of 256, so the block stays 256-byte aligned */
  LC_SIM_BLOCK_ALLOCATED(m.base + (body - n), n);
  return m.base + (body - n);
}

void lc_sim_guard_free(void *p, size_t n) {
  size_t body = body_of(n), page = page_size();
  if (((uintptr_t)p + n) % page != 0) {
    free((char *)p - (uintptr_t)p % page);
    return;
  }
  mapping m = {(char *)p - (body - n), body};
  LC_SIM_BLOCK_FREED(p);
  if (body > CACHE_BYTES / 2) {
    unmap(m);
    return;
  }
  pthread_mutex_lock(&lock);
  while (cached == CACHE_SLOTS || (cached > 0 && cached_bytes + body > CACHE_BYTES)) {
    unmap(cache[0]);                       /* the oldest goes */
    cached_bytes -= cache[0].body;
    cached--;
    memmove(cache, cache + 1, cached * sizeof *cache);
  }
  cache[cached++] = m;
  cached_bytes += body;
  pthread_mutex_unlock(&lock);
}

void lc_sim_guard_trim(void) {
  pthread_mutex_lock(&lock);
  while (cached > 0) unmap(cache[--cached]);
  cached_bytes = 0;
  pthread_mutex_unlock(&lock);
}
