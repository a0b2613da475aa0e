/*
** hostcache: see hostcache.h. Blocks under LARGE bytes come from malloc,
** which reuses its own (the smallest aligned here: SMALL_MAX).
** Larger ones are page-rounded mappings; from 2 MiB on they are aligned to
** 2 MiB and marked MADV_HUGEPAGE, as NumPy does, so the kernel backs them
** with huge pages where it can (one fault per 2 MiB). Freed ones are kept
** in a bin of their page-rounded size up to a cap (LUACUDA_MEMORY_CACHE,
** else a quarter of the machine's memory, at most 2 GiB), newest first;
** free_cached() gives them back.
**
** Under AddressSanitizer every block comes from malloc, so that its check
** of a read past an array sees host arrays as before. Under valgrind each
** large block handed out is a heap block to memcheck (made when handed
** out, freed when kept), so a read of memory never written and a block
** never freed are still found.
*/
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS, MADV_HUGEPAGE */
#include "hostcache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "env.h"

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define HANDED_OUT(p, n) VALGRIND_MALLOCLIKE_BLOCK(p, n, 0, 0)
#define TAKEN_BACK(p) VALGRIND_FREELIKE_BLOCK(p, 0)
#define UNDER_VALGRIND() (RUNNING_ON_VALGRIND != 0)
#endif
#endif
#ifndef HANDED_OUT
#define HANDED_OUT(p, n) ((void)0)
#define TAKEN_BACK(p) ((void)0)
#define UNDER_VALGRIND() false
#endif

#define LARGE ((size_t)1 << 20)
#define HUGE_PAGE ((size_t)2 << 20)
#define CAP_MAX ((size_t)2 << 30)
#define SLOTS 64

typedef struct kept { void *p; size_t bytes; } kept;

/* Small blocks (up to SMALL_MAX bytes) are aligned by hand in a malloc
** block 64 bytes longer, the distance back to its start in the byte before
** the block: glibc's aligned_alloc (memalign) costs several times malloc,
** and was a tenth of `a + b` on 16 elements. Not under a sanitizer or
** valgrind (small_own false), where each block is aligned_alloc's, so
** that their checks of reads before and past it stay exact. */
#define SMALL_MAX ((size_t)512)
static bool small_own;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static kept slots[SLOTS];            /* oldest first */
static unsigned nslots;
static size_t kept_bytes;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static size_t cap;
static bool mapped;                  /* large blocks are mappings (no sanitizer) */

static void init(void) {
  mapped = true;
#if defined(__SANITIZE_ADDRESS__)
  mapped = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  mapped = false;
#endif
#endif
  small_own = mapped && !UNDER_VALGRIND();
  const lc_settings *s = lc_settings_get();
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  size_t machine = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : CAP_MAX * 4;
  cap = s->cache != SIZE_MAX ? s->cache : machine / 4 < CAP_MAX ? machine / 4 : CAP_MAX;
}

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* what a large block of nbytes takes: whole pages, whole huge pages from 2 MiB */
static size_t rounded(size_t nbytes) {
  size_t unit = nbytes >= HUGE_PAGE ? HUGE_PAGE : page_size();
  return (nbytes + unit - 1) & ~(unit - 1);
}

/* A new mapping of bytes, 2 MiB aligned when that large: the spare head
** and tail of a larger mapping are unmapped. */
static void *map_new(size_t bytes) {
  size_t extra = bytes >= HUGE_PAGE ? HUGE_PAGE : 0;
  if (bytes + extra < bytes) return NULL;
  char *base = mmap(NULL, bytes + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                    -1, 0);
  if (base == MAP_FAILED) return NULL;
  if (extra == 0) return base;
  char *p = (char *)(((uintptr_t)base + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
  if (p > base) munmap(base, (size_t)(p - base));
  if (p + bytes < base + bytes + extra) munmap(p + bytes, (size_t)(base + bytes + extra - (p + bytes)));
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);     /* a hint: refused, it is 4 KiB pages */
#endif
  return p;
}

bool lc_hostcache_small(size_t nbytes) {
  pthread_once(&once, init);
  return small_own && nbytes <= SMALL_MAX;
}

void *lc_hostcache_alloc(size_t nbytes) {
  pthread_once(&once, init);
  if (!mapped || nbytes < LARGE) {
    /* aligned_alloc wants a size that is a multiple of the alignment */
    size_t n = nbytes ? (nbytes + 63) & ~(size_t)63 : 64;
    if (n < nbytes) return NULL;
    if (small_own && n <= SMALL_MAX) {
      unsigned char *raw = malloc(n + 64);
      if (raw == NULL) return NULL;
      unsigned char *p = (unsigned char *)(((uintptr_t)raw + 64) & ~(uintptr_t)63);
      p[-1] = (unsigned char)(p - raw);              /* 1 to 64 */
      return p;
    }
    return aligned_alloc(64, n);
  }
  size_t bytes = rounded(nbytes);
  if (bytes < nbytes) return NULL;
  void *p = NULL;
  pthread_mutex_lock(&lock);
  for (unsigned i = nslots; i-- > 0;)
    if (slots[i].bytes == bytes) {
      p = slots[i].p;
      kept_bytes -= bytes;
      memmove(slots + i, slots + i + 1, (--nslots - i) * sizeof *slots);
      break;
    }
  pthread_mutex_unlock(&lock);
  if (p == NULL) p = map_new(bytes);
  if (p == NULL) {                     /* under pressure: what is kept goes first */
    lc_hostcache_trim();
    p = map_new(bytes);
  }
  if (p) HANDED_OUT(p, nbytes);
  return p;
}

void lc_hostcache_free(void *p, size_t nbytes) {
  pthread_once(&once, init);
  if (!mapped || nbytes < LARGE) {
    size_t n = nbytes ? (nbytes + 63) & ~(size_t)63 : 64;
    if (small_own && n <= SMALL_MAX) {
      unsigned char *q = p;
      free(q - q[-1]);
      return;
    }
    free(p);
    return;
  }
  size_t bytes = rounded(nbytes);
  TAKEN_BACK(p);
  kept gone[SLOTS + 1];
  unsigned ngone = 0;
  pthread_mutex_lock(&lock);
  if (bytes > cap) {
    gone[ngone++] = (kept){p, bytes};
  } else {
    while (nslots == SLOTS || (nslots > 0 && kept_bytes + bytes > cap)) {
      gone[ngone++] = slots[0];                      /* the oldest goes */
      kept_bytes -= slots[0].bytes;
      memmove(slots, slots + 1, --nslots * sizeof *slots);
    }
    slots[nslots++] = (kept){p, bytes};
    kept_bytes += bytes;
  }
  pthread_mutex_unlock(&lock);
  for (unsigned i = 0; i < ngone; i++) munmap(gone[i].p, gone[i].bytes);
}

size_t lc_hostcache_bytes(void) {
  pthread_mutex_lock(&lock);
  size_t n = kept_bytes;
  pthread_mutex_unlock(&lock);
  return n;
}

void lc_hostcache_trim(void) {
  kept gone[SLOTS];
  pthread_mutex_lock(&lock);
  unsigned n = nslots;
  memcpy(gone, slots, n * sizeof *slots);
  nslots = 0;
  kept_bytes = 0;
  pthread_mutex_unlock(&lock);
  for (unsigned i = 0; i < n; i++) munmap(gone[i].p, gone[i].bytes);
}
