/*
** Unit tests for src/sim/guard.c (run them as unit.h says): blocks end at
** a guard page, freed ones are reused, and without mappings the blocks
** come from malloc and are told apart when freed. mmap is wrapped
** (-Wl,--wrap=mmap) so a test can make it fail.
*/
#define _DEFAULT_SOURCE   /* MAP_FAILED's friends, sigsetjmp */
#include "sim.h"

#include "unit.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

static int fail_mmap;
void *__real_mmap(void *, size_t, int, int, int, off_t);
void *__wrap_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off) {
  return fail_mmap ? MAP_FAILED : __real_mmap(a, n, prot, flags, fd, off);
}

/* without page-table guards (Linux before 6.13) guard.c uses mprotect */
static int fail_madvise;
int __real_madvise(void *, size_t, int);
int __wrap_madvise(void *a, size_t n, int advice) {
  if (fail_madvise) {
    errno = EINVAL;
    return -1;
  }
  return __real_madvise(a, n, advice);
}

static sigjmp_buf back;
static void on_segv(int sig) { siglongjmp(back, sig); }

/* Does writing p[i] fault? */
static int faults(volatile char *p, size_t i) {
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_segv;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &old);
  int sig = sigsetjmp(back, 1);
  if (sig == 0) p[i] = 1;
  sigaction(SIGSEGV, &old, NULL);
  return sig != 0;
}

static size_t page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* EXACT: each block's exact bytes end at the guard, so one byte past any
** size faults, and the block is aligned as its size allows (up to 256 for
** these). END: the same with the size rounded up to 16 bytes, so a block
** is 16-byte aligned at least. */
static int test_guard_follows_the_block(void) {
  size_t sizes[] = {0, 1, 2, 12, 64, 256, 4095, 4096, 65541 * 4, 1 << 20};
  int where[2] = {LC_SIM_GUARD_EXACT, LC_SIM_GUARD_END};
  for (int w = 0; w < 2; w++)
    for (int k = 0; k < 10; k++) {
      size_t n = sizes[k], edge = w == 0 ? n : (n + 15) & ~(size_t)15;
      char *p = lc_sim_guard_alloc(n, where[w]);
      CHECK(p != NULL);
      size_t align = edge & -edge;      /* the lowest set bit */
      if (edge && align < 256) CHECK_EQ((uintptr_t)p % align, 0);
      else CHECK_EQ((uintptr_t)p % 256, 0);
      if (w == 1) CHECK_EQ((uintptr_t)p % 16, 0);
      if (n) memset(p, 7, n);
      if (edge) CHECK_EQ(faults(p, edge - 1), 0);
      CHECK_EQ(faults(p, edge), 1);
      CHECK_EQ(faults(p, edge + page() - 1), 1);
      lc_sim_guard_free(p, n, where[w]);
    }
  return 0;
}

/* START: the byte before the block faults, and so does its page's end. */
static int test_guard_precedes_the_block(void) {
  size_t sizes[] = {1, 64, 4096, 65541 * 4};
  for (int k = 0; k < 4; k++) {
    size_t n = sizes[k], body = (n + page() - 1) / page() * page();
    char *p = lc_sim_guard_alloc(n, LC_SIM_GUARD_START);
    CHECK(p != NULL);
    CHECK_EQ((uintptr_t)p % page(), 0);
    memset(p, 7, n);
    CHECK_EQ(faults(p, 0), 0);
    CHECK_EQ(faults(p - 1, 0), 1);
    CHECK_EQ(faults(p - page(), 0), 1);
    CHECK_EQ(faults(p, body - 1), 0);
    CHECK_EQ(faults(p, body), 1);
    lc_sim_guard_free(p, n, LC_SIM_GUARD_START);
  }
  return 0;
}

/* A block of 2 MiB or more ends its pages on a 2 MiB boundary, where its
** guard begins, so that the kernel can back it with huge pages (only whole
** aligned 2 MiB ranges can be), in every placement; its guards stay. */
static int test_large_blocks_end_on_a_huge_page_boundary(void) {
  size_t huge = (size_t)2 << 20, sizes[] = {huge, 4 << 20, (4 << 20) + 100, 3 * huge + 4096};
  for (int k = 0; k < 4; k++)
    for (int w = 0; w < 3; w++) {
      int where = w == 0 ? LC_SIM_GUARD_END : w == 1 ? LC_SIM_GUARD_EXACT : LC_SIM_GUARD_START;
      size_t n = sizes[k], body = (n + page() - 1) / page() * page();
      lc_sim_guard_trim();             /* a fresh mapping, not a kept one */
      char *p = lc_sim_guard_alloc(n, where);
      CHECK(p != NULL);
      char *end = where == LC_SIM_GUARD_START ? p + body
                  : (char *)(((uintptr_t)p + n + page() - 1) & ~(uintptr_t)(page() - 1));
      CHECK_EQ((uintptr_t)end % huge, 0);
      memset(p, 7, n);
      CHECK_EQ(faults(end, 0), 1);
      if (where == LC_SIM_GUARD_START) CHECK_EQ(faults(p - 1, 0), 1);
      lc_sim_guard_free(p, n, where);
    }
  lc_sim_guard_trim();
  return 0;
}

static int test_guards_without_madvise(void) {
  fail_madvise = 1;
  lc_sim_guard_trim();                 /* no kept block to reuse */
  int where[2] = {LC_SIM_GUARD_END, LC_SIM_GUARD_START};
  for (int k = 0; k < 2; k++) {
    char *p = lc_sim_guard_alloc(64, where[k]);
    if (p == NULL) { fail_madvise = 0; CHECK(p != NULL); }
    memset(p, 7, 64);
    CHECK_EQ(faults(p, k == 0 ? 64 : page()), 1);
    if (k == 1) CHECK_EQ(faults(p - 1, 0), 1);
    lc_sim_guard_free(p, 64, where[k]);
  }
  fail_madvise = 0;
  lc_sim_guard_trim();
  return 0;
}

static int test_freed_blocks_are_reused(void) {
  size_t n = 1 << 20;
  char *p = lc_sim_guard_alloc(n, LC_SIM_GUARD_END);
  CHECK(p != NULL);
  lc_sim_guard_free(p, n, LC_SIM_GUARD_END);
  char *q = lc_sim_guard_alloc(n, LC_SIM_GUARD_END);
  CHECK(q == p);                       /* same size: the kept block */
  CHECK_EQ(faults(q, n), 1);           /* still guarded */
  lc_sim_guard_free(q, n, LC_SIM_GUARD_END);
  /* another size of the same pages reuses it too, its end still at the guard */
  char *r = lc_sim_guard_alloc(n - 20, LC_SIM_GUARD_END);
  CHECK(r == p + 16);                  /* n - 20 rounded up to 16 bytes */
  CHECK_EQ(faults(r, n - 16), 1);
  lc_sim_guard_free(r, n - 20, LC_SIM_GUARD_END);
  lc_sim_guard_trim();
  return 0;
}

static int test_without_mappings_from_malloc(void) {
  size_t sizes[] = {1, 256, 4096, 8192, 65536 + 256};
  fail_mmap = 1;
  lc_sim_guard_trim();                 /* no kept block to reuse */
  char *p[5];
  for (int k = 0; k < 5; k++) {
    p[k] = lc_sim_guard_alloc(sizes[k], k % 2 ? LC_SIM_GUARD_START : LC_SIM_GUARD_END);
    if (p[k] == NULL) { fail_mmap = 0; CHECK(p[k] != NULL); }
    CHECK_EQ((uintptr_t)p[k] % 256, 0);
    memset(p[k], 7, sizes[k]);
  }
  fail_mmap = 0;
  /* told apart from guarded blocks when freed, after mappings work again */
  char *g = lc_sim_guard_alloc(4096, LC_SIM_GUARD_END);
  CHECK(g != NULL);
  CHECK_EQ(faults(g, 4096), 1);
  for (int k = 0; k < 5; k++)
    lc_sim_guard_free(p[k], sizes[k], k % 2 ? LC_SIM_GUARD_START : LC_SIM_GUARD_END);
  lc_sim_guard_free(g, 4096, LC_SIM_GUARD_END);
  return 0;
}

#define T(name) { #name, test_##name }
static const unit_test tests[] = {
  T(guard_follows_the_block), T(guard_precedes_the_block), T(guards_without_madvise),
  T(freed_blocks_are_reused), T(without_mappings_from_malloc),
  T(large_blocks_end_on_a_huge_page_boundary),
};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

int main(int argc, char **argv) {
  (void)err;           /* unit.h's message slot: these calls return no codes */
  return unit_main("guard_test", tests, NTESTS, argc, argv);
}
