/*
** Unit tests for src/sim/guard.c (run them as unit.h says): blocks end at
** a guard page, freed ones are reused, and without mappings the blocks
** come from malloc and are told apart when freed. mmap is wrapped
** (-Wl,--wrap=mmap) so a test can make it fail.
*/
#define _DEFAULT_SOURCE   /* MAP_FAILED's friends, sigsetjmp */
#include "sim.h"

#include "unit.h"

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

static int test_guard_follows_the_block(void) {
  size_t sizes[] = {256, 4096, 65536 + 256, 1 << 20};
  for (int k = 0; k < 4; k++) {
    size_t n = sizes[k];
    char *p = lc_sim_guard_alloc(n);
    CHECK(p != NULL);
    CHECK_EQ((uintptr_t)p % 256, 0);
    memset(p, 7, n);
    CHECK_EQ(faults(p, n - 1), 0);
    CHECK_EQ(faults(p, n), 1);
    CHECK_EQ(faults(p, n + page() - 1), 1);
    lc_sim_guard_free(p, n);
  }
  return 0;
}

static int test_freed_blocks_are_reused(void) {
  size_t n = 1 << 20;
  char *p = lc_sim_guard_alloc(n);
  CHECK(p != NULL);
  lc_sim_guard_free(p, n);
  char *q = lc_sim_guard_alloc(n);
  CHECK(q == p);                       /* same size: the kept block */
  CHECK_EQ(faults(q, n), 1);           /* still guarded */
  lc_sim_guard_free(q, n);
  lc_sim_guard_trim();
  return 0;
}

static int test_without_mappings_from_malloc(void) {
  size_t sizes[] = {256, 4096, 8192, 65536 + 256};
  fail_mmap = 1;
  lc_sim_guard_trim();                 /* no kept block to reuse */
  for (int k = 0; k < 4; k++) {
    size_t n = sizes[k];
    char *p = lc_sim_guard_alloc(n);
    if (p == NULL) { fail_mmap = 0; CHECK(p != NULL); }
    CHECK_EQ((uintptr_t)p % 256, 0);
    CHECK((((uintptr_t)p + n) % page()) != 0);   /* never mistaken for a guarded one */
    memset(p, 7, n);
    lc_sim_guard_free(p, n);
  }
  fail_mmap = 0;
  return 0;
}

#define T(name) { #name, test_##name }
static const unit_test tests[] = {
  T(guard_follows_the_block), T(freed_blocks_are_reused), T(without_mappings_from_malloc),
};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

int main(int argc, char **argv) {
  (void)err;           /* unit.h's message slot: these calls return no codes */
  return unit_main("guard_test", tests, NTESTS, argc, argv);
}
