/*
** Unit tests for src/backend/sim/arena.c (run them as unit.h says): the
** small-block arena's free lists hold every block it handed out, however
** allocations and frees interleave. realloc is wrapped
** (-Wl,--wrap=realloc) so that each free list ends where an inaccessible
** page begins: a write past one faults here, where plain malloc would let
** it corrupt the heap quietly.
*/
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS */
#include "sim.h"

#include "unit.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* Where a wrapped block's mapping starts and how long it is, just below it. */
typedef struct guarded { char *base; size_t span, n; } guarded;

void *__real_realloc(void *, size_t);
void *__wrap_realloc(void *old, size_t n) {
  size_t pg = page();
  size_t room = (n + sizeof(guarded) + 15) / 16 * 16;
  size_t span = (room + pg - 1) / pg * pg;
  char *base = mmap(NULL, span + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return NULL;
  mprotect(base + span, pg, PROT_NONE);
  /* n is a multiple of a pointer's size here, so p stays aligned */
  char *p = base + span - n;
  guarded g = {base, span + pg, n};
  memcpy(p - sizeof g, &g, sizeof g);
  if (old) {
    guarded was;
    memcpy(&was, (char *)old - sizeof was, sizeof was);
    memcpy(p, old, was.n < n ? was.n : n);
    munmap(was.base, was.span);
  }
  return p;
}

/* blocks in a slab of that size (arena.c: 1 MiB, or 16 blocks) */
static size_t slab_count(size_t size) {
  return size * 16 > ((size_t)1 << 20) ? 16 : ((size_t)1 << 20) / size;
}

static int by_address(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
  return x < y ? -1 : x > y;
}

/* Hold n blocks of size bytes at once, free them all, take them again:
** every free has room on the list (no fault), and the blocks taken again
** are the ones freed (the list lost none). */
static int hold_and_free(size_t n, size_t size) {
  void **held = malloc(n * sizeof *held), **again = malloc(n * sizeof *again);
  CHECK(held != NULL && again != NULL);
  for (size_t i = 0; i < n; i++) {
    held[i] = lc_sim_arena_alloc(size);
    CHECK(held[i] != NULL);
    memset(held[i], (int)(i & 0xff), size);
  }
  for (size_t i = 0; i < n; i++) lc_sim_arena_free(held[i], size);
  for (size_t i = 0; i < n; i++) {
    again[i] = lc_sim_arena_alloc(size);
    CHECK(again[i] != NULL);
  }
  qsort(held, n, sizeof *held, by_address);
  qsort(again, n, sizeof *again, by_address);
  for (size_t i = 0; i < n; i++) {
    CHECK(i == 0 || held[i] != held[i - 1]);
    CHECK(held[i] == again[i]);
  }
  for (size_t i = 0; i < n; i++) lc_sim_arena_free(again[i], size);
  free(held);
  free(again);
  return 0;
}

/* More blocks alive than the first slabs' list had room for: a slab of
** 256-byte blocks holds 4096, so five slabs' worth are handed out while
** the list is empty at each new slab (issue 29, finding 12). */
static int free_list_holds_every_block(void) {
  return hold_and_free(5 * 4096 + 1, 256);
}

/* The same for the largest class (16 blocks a slab), and again after the
** lists grew: a second round reuses what the first freed. */
static int free_list_holds_every_block_of_each_class(void) {
  for (size_t size = 256; size <= lc_sim_arena_max(); size *= 2)
    if (hold_and_free(slab_count(size) * 3 + 1, size)) return 1;
  return hold_and_free(4 * 4096 + 7, 256);
}

/* Frees and allocations interleaved: half the blocks freed, then more
** allocated than were freed, then everything freed. */
static int interleaved_frees_and_allocations(void) {
  size_t n = 3 * 4096;
  void **p = malloc(2 * n * sizeof *p);
  CHECK(p != NULL);
  for (size_t i = 0; i < n; i++) CHECK((p[i] = lc_sim_arena_alloc(512)) != NULL);
  for (size_t i = 0; i < n; i += 2) lc_sim_arena_free(p[i], 512);
  for (size_t i = 0; i < n; i += 2) CHECK((p[i] = lc_sim_arena_alloc(512)) != NULL);
  for (size_t i = n; i < 2 * n; i++) CHECK((p[i] = lc_sim_arena_alloc(512)) != NULL);
  for (size_t i = 0; i < 2 * n; i++) lc_sim_arena_free(p[i], 512);
  free(p);
  return hold_and_free(2 * n, 512);
}

#define T(name) { #name, name }
static const unit_test tests[] = {
  T(free_list_holds_every_block), T(free_list_holds_every_block_of_each_class),
  T(interleaved_frees_and_allocations),
};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

int main(int argc, char **argv) {
  (void)err;           /* unit.h's message slot: these calls return no codes */
  return unit_main("arena_test", tests, NTESTS, argc, argv);
}
