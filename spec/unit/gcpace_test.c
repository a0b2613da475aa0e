/*
** Unit tests for src/binding/gcpace.c's count of live buffer bytes (run
** them as unit.h says): a thread's small buffers are counted in steps of
** 64 KiB, and what a thread counted is in the shared count once it ends,
** whichever thread made or dropped the buffers. Each test starts and ends
** with a count of zero on every thread.
*/
#include "gcpace.h"

#include "unit.h"

#include <pthread.h>
#include <stdint.h>

typedef struct job { size_t add, drop; } job;

static void *counts(void *ud) {
  const job *j = ud;
  if (j->add) lc_gcpace_added(j->add);
  if (j->drop) lc_gcpace_dropped(j->drop);
  return NULL;
}

/* lc_gcpace_live() read on a thread of its own, which counted nothing */
static void *reads(void *ud) {
  *(size_t *)ud = lc_gcpace_live();
  return NULL;
}

static int on_thread(void *(*fn)(void *), void *ud) {
  pthread_t t;
  if (pthread_create(&t, NULL, fn, ud) != 0) return -1;
  return pthread_join(t, NULL);
}

static size_t read_elsewhere(void) {
  size_t n = SIZE_MAX;
  return on_thread(reads, &n) == 0 ? n : SIZE_MAX;
}

static int a_thread_counts_its_own_at_once(void) {
  lc_gcpace_added(1000);
  CHECK_EQ(lc_gcpace_live(), 1000);
  lc_gcpace_dropped(1000);
  CHECK_EQ(lc_gcpace_live(), 0);
  return 0;
}

/* small buffers made on a thread that then ends: counted for all */
static int an_ended_threads_buffers_are_counted(void) {
  job j = {1000, 0};
  CHECK_EQ(on_thread(counts, &j), 0);
  CHECK_EQ(lc_gcpace_live(), 1000);
  CHECK_EQ(read_elsewhere(), 1000);
  j = (job){0, 1000};
  CHECK_EQ(on_thread(counts, &j), 0);
  CHECK_EQ(read_elsewhere(), 0);
  return 0;
}

/* a large buffer is counted for all at once, its thread still running */
static int a_large_buffer_is_counted_at_once(void) {
  lc_gcpace_added((size_t)1 << 20);
  CHECK_EQ(read_elsewhere(), (size_t)1 << 20);
  lc_gcpace_dropped((size_t)1 << 20);
  CHECK_EQ(read_elsewhere(), 0);
  return 0;
}

/* small buffers dropped by another thread than made them: no count below
** zero for a thread that sees the drops and not yet the making */
static int drops_seen_before_the_making_read_as_none(void) {
  lc_gcpace_added(5000);                   /* this thread's, not yet shared */
  job j = {0, 5000};
  CHECK_EQ(on_thread(counts, &j), 0);      /* the drop shared at the thread's end */
  CHECK_EQ(lc_gcpace_live(), 0);
  CHECK_EQ(read_elsewhere(), 0);
  lc_gcpace_dropped(5000);                 /* both threads' counts back to zero */
  j = (job){5000, 0};
  CHECK_EQ(on_thread(counts, &j), 0);
  CHECK_EQ(lc_gcpace_live(), 0);
  CHECK_EQ(read_elsewhere(), 0);
  return 0;
}

#define T(name) { #name, name }
static const unit_test tests[] = {
  T(a_thread_counts_its_own_at_once), T(an_ended_threads_buffers_are_counted),
  T(a_large_buffer_is_counted_at_once), T(drops_seen_before_the_making_read_as_none),
};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

int main(int argc, char **argv) {
  (void)err;           /* unit.h's message slot: these calls return no codes */
  return unit_main("gcpace_test", tests, NTESTS, argc, argv);
}
