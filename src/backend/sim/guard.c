/*
** guard: simulated device memory next to a guard page. A block is a
** mapping of its own, placed so that an inaccessible page begins exactly
** where its bytes end (LC_SIM_GUARD_END) or ends exactly where they begin
** (LC_SIM_GUARD_START, with a second guard after its last page): a kernel
** that reads or writes past that edge faults, and the fault becomes a
** launch error naming the array (fault.c, memcheck.c) instead of silent
** corruption. The edge is the block's exact byte size, not a rounding of
** it, so one element past a 16-float array faults; the price is that an
** EXACT block is aligned only to the largest power of two dividing its size
** (at most the page): a dtype's size is a multiple of its alignment, so
** every element stays aligned. An END block keeps 16 bytes of alignment
** (its end is exact when its size is a multiple of 16): CUDA's vector
** types (float4, int4, double2) are 16-byte aligned and kernels read
** arrays of any size through them, trusting cudaMalloc's 256 bytes; on
** x86 the host compiler's aligned moves fault on a lesser address.
**
** A fresh mapping costs system calls and a page fault for every page first
** touched (measured: allocating and filling 1 MiB takes 35 times as long as
** with malloc, which reuses its memory). So freed blocks are kept for reuse
** by an allocation of the same page count and placement, as malloc keeps
** its own, up to CACHE_SLOTS blocks and CACHE_BYTES in all; trim() gives
** them back. Guards are best effort: when no mapping can be made (the
** process used up vm.max_map_count: see lc_sim_guard_page), the block
** comes from malloc, unguarded, and is remembered as such for its free.
*/
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS */
#include "sim.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>


#define CACHE_SLOTS 256
#define CACHE_BYTES ((size_t)64 << 20)

typedef struct mapping {
  char *base;
  size_t body;          /* the pages the block's bytes lie in */
  int where;            /* LC_SIM_GUARD_END or _START */
} mapping;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mapping cache[CACHE_SLOTS];   /* oldest first */
static unsigned cached;
static size_t cached_bytes;
/* the blocks that came from malloc (rare: no mapping could be made) */
static void **loose;
static size_t nloose, loose_cap;

/* Atomic: several states' threads allocate at once (every one writes the
** same value, but a plain static is still a race). */
static size_t page_size(void) {
  static atomic_size_t page;
  size_t p = atomic_load_explicit(&page, memory_order_relaxed);
  if (p == 0) {
    p = (size_t)sysconf(_SC_PAGESIZE);
    atomic_store_explicit(&page, p, memory_order_relaxed);
  }
  return p;
}

/* whole pages for n bytes, at least one (an empty block still has an address) */
static size_t body_of(size_t n) {
  size_t page = page_size();
  return n <= page ? page : (n + page - 1) & ~(page - 1);
}

static size_t span(mapping m) {
  return m.body + page_size() * (m.where == LC_SIM_GUARD_START ? 2 : 1);
}

static void unmap(mapping m) { munmap(m.base, span(m)); }

/* A cached mapping like this one, or {NULL} */
static mapping take(size_t body, int where) {
  mapping m = {NULL, 0, where};
  pthread_mutex_lock(&lock);
  for (unsigned i = cached; i-- > 0;) {
    if (cache[i].body != body || cache[i].where != where) continue;
    m = cache[i];
    cached_bytes -= body;
    memmove(cache + i, cache + i + 1, (--cached - i) * sizeof *cache);
    break;
  }
  pthread_mutex_unlock(&lock);
  return m;
}

/* Make the page at p inaccessible. Linux 6.13 and later install a guard
** in the page tables (MADV_GUARD_INSTALL): the mapping stays one, so
** neighbouring blocks' mappings merge, and it is faster (measured on 4000
** one-page blocks: 18 us each against 29 us with mprotect, which splits the
** mapping in two and so limits a process to about 32,000 blocks, by
** vm.max_map_count). Elsewhere, mprotect. */
bool lc_sim_guard_page(char *p, size_t page) {
#if defined(__linux__)
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102       /* <linux/mman.h>, not in every libc's headers yet */
#endif
  if (madvise(p, page, MADV_GUARD_INSTALL) == 0) return true;
#endif
  return mprotect(p, page, PROT_NONE) == 0;
}

#define HUGE_PAGE ((size_t)2 << 20)

/* total bytes of fresh mapping; one of a huge page's size or more is
** placed so that offset end_at (the end of the block's pages) lies on a
** 2 MiB boundary: the kernel backs only whole aligned 2 MiB ranges with
** huge pages, and a block's last range, next to its guard, is then one of
** them, as every other range after its first (an unaligned 4 MiB block
** got one huge page at most, and a thousand 4 KiB faults for the rest). */
static char *map_placed(size_t total, size_t end_at) {
  int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS;
  if (end_at < HUGE_PAGE || total + HUGE_PAGE < total) return mmap(NULL, total, prot, flags, -1, 0);
  char *raw = mmap(NULL, total + HUGE_PAGE, prot, flags, -1, 0);
  if (raw == MAP_FAILED) return raw;
  uintptr_t end = ((uintptr_t)raw + end_at + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  char *base = (char *)(end - end_at);          /* within the slack: raw <= base < raw + 2 MiB */
  if (base > raw) munmap(raw, (size_t)(base - raw));
  size_t after = (size_t)(raw + total + HUGE_PAGE - (base + total));
  if (after > 0) munmap(base + total, after);
  return base;
}

/* A new mapping with its guard pages made inaccessible. */
static mapping map_new(size_t body, int where) {
  size_t page = page_size();
  mapping m = {NULL, body, where};
  char *base = map_placed(span(m), where == LC_SIM_GUARD_START ? page + body : body);
  if (base == MAP_FAILED) return m;
  bool ok = lc_sim_guard_page(where == LC_SIM_GUARD_START ? base + page + body : base + body,
                              page);
  if (ok && where == LC_SIM_GUARD_START) ok = lc_sim_guard_page(base, page);
  if (!ok) {
    munmap(base, span(m));
    return m;
  }
  m.base = base;
  lc_sim_huge_pages(where == LC_SIM_GUARD_START ? base + page : base, body);
  return m;
}

/* Ask for transparent huge pages over a large block, as NumPy does: one
** fault per 2 MiB instead of 512. The guard pages stay 4 KiB pages (the
** kernel backs only whole aligned 2 MiB ranges), so checking is unchanged;
** a refusal leaves 4 KiB pages. */
void lc_sim_huge_pages(char *p, size_t n) {
#ifdef MADV_HUGEPAGE
  if (n >= ((size_t)2 << 20)) madvise(p, n, MADV_HUGEPAGE);
#else
  (void)p; (void)n;
#endif
}

/* Without a mapping, a block from malloc, unguarded, remembered for free. */
static void *unguarded(size_t n) {
  void *p;
  if (posix_memalign(&p, 256, n ? n : 1) != 0) return NULL;
  pthread_mutex_lock(&lock);
  if (nloose == loose_cap) {
    size_t cap = loose_cap ? loose_cap * 2 : 16;
    void **grown = realloc(loose, cap * sizeof *grown);
    if (grown == NULL) {
      pthread_mutex_unlock(&lock);
      free(p);
      return NULL;
    }
    loose = grown;
    loose_cap = cap;
  }
  loose[nloose++] = p;
  pthread_mutex_unlock(&lock);
  return p;
}

/* Whether p came from unguarded(); then it is forgotten. */
static bool was_loose(void *p) {
  bool found = false;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < nloose && !found; i++)
    if (loose[i] == p) {
      loose[i] = loose[--nloose];
      found = true;
    }
  pthread_mutex_unlock(&lock);
  return found;
}

void *lc_sim_guard_alloc(size_t n, int where) {
  size_t body = body_of(n), page = page_size();
  if (body < n || n + 15 < n || body + 2 * page < body) return NULL;
  mapping m = take(body, where);
  if (m.base == NULL) m = map_new(body, where);
  if (m.base == NULL) return unguarded(n);
  size_t used = where == LC_SIM_GUARD_END ? (n + 15) & ~(size_t)15 : n;
  char *p = where == LC_SIM_GUARD_START ? m.base + page : m.base + (body - used);
  LC_SIM_BLOCK_ALLOCATED(p, n);
  return p;
}

void lc_sim_guard_free(void *p, size_t n, int where) {
  size_t body = body_of(n), page = page_size();
  if (was_loose(p)) {
    free(p);
    return;
  }
  mapping m = {NULL, body, where};
  if (where == LC_SIM_GUARD_START) {
    m.base = (char *)p - page;
  } else {
    uintptr_t end = ((uintptr_t)p + n + page - 1) & ~(uintptr_t)(page - 1);
    m.base = (char *)end - body;
  }
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
