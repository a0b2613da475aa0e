/*
** Unit tests for src/base/modcache.c (the process's compiled modules by
** key); run them as unit.h says. A "module" here is a counter of the
** references the cache takes.
*/
#include "modcache.h"

#include "unit.h"

#include <pthread.h>

typedef struct fake_module { int refs; } fake_module;

static void retain(void *m) { ((fake_module *)m)->refs++; }

static lc_hash key_of(const char *s) {
  lc_hash k;
  lc_hash_init(&k);
  lc_hash_add_str(&k, s);
  return k;
}

/* A key nobody compiled: found as nothing; claimed, it is in flight (found
** as nothing still); settled, it is found and retained at each find. */
static int test_claim_settle_find(void) {
  lc_modcache c = LC_MODCACHE_INIT(retain);
  fake_module m = {1};
  lc_hash k = key_of("a.cu");
  bool claimed = false;
  CHECK(lc_modcache_find(&c, &k) == NULL);
  CHECK(lc_modcache_claim(&c, &k, &claimed) == NULL);
  CHECK(claimed);
  CHECK(lc_modcache_find(&c, &k) == NULL);          /* in flight: not there yet */
  lc_modcache_settle(&c, &k, &m);
  CHECK_EQ(m.refs, 2);                               /* the cache's reference */
  CHECK(lc_modcache_find(&c, &k) == &m);
  CHECK_EQ(m.refs, 3);                               /* the finder's */
  CHECK(lc_modcache_claim(&c, &k, &claimed) == &m);  /* compiled: nothing to claim */
  CHECK(!claimed);
  CHECK_EQ(m.refs, 4);
  free(c.entries);
  return 0;
}

/* A compilation that failed leaves no entry: the next claim owns the key. */
static int test_failed_compile_forgotten(void) {
  lc_modcache c = LC_MODCACHE_INIT(retain);
  lc_hash k = key_of("bad.cu");
  bool claimed = false;
  CHECK(lc_modcache_claim(&c, &k, &claimed) == NULL && claimed);
  lc_modcache_settle(&c, &k, NULL);
  CHECK(lc_modcache_find(&c, &k) == NULL);
  claimed = false;
  CHECK(lc_modcache_claim(&c, &k, &claimed) == NULL);
  CHECK(claimed);
  lc_modcache_settle(&c, &k, NULL);
  free(c.entries);
  return 0;
}

/* Keys are told apart, and entries past the first allocation are kept;
** a failure removes only its own entry. */
static int test_many_keys(void) {
  lc_modcache c = LC_MODCACHE_INIT(retain);
  enum { N = 40 };
  fake_module m[N];
  char name[32];
  bool claimed;
  for (int i = 0; i < N; i++) {
    m[i].refs = 1;
    snprintf(name, sizeof name, "k%d.cu", i);
    lc_hash k = key_of(name);
    CHECK(lc_modcache_claim(&c, &k, &claimed) == NULL && claimed);
    lc_modcache_settle(&c, &k, i % 3 == 0 ? NULL : &m[i]);
  }
  for (int i = 0; i < N; i++) {
    snprintf(name, sizeof name, "k%d.cu", i);
    lc_hash k = key_of(name);
    CHECK(lc_modcache_find(&c, &k) == (i % 3 == 0 ? NULL : &m[i]));
  }
  free(c.entries);
  return 0;
}

typedef struct claimer {
  lc_modcache *c;
  lc_hash key;
  void *got;
  bool claimed;
} claimer;

static void *claim_thread(void *ud) {
  claimer *t = ud;
  t->got = lc_modcache_claim(t->c, &t->key, &t->claimed);
  return NULL;
}

/* Another thread that wants a key in flight gets the module once it is
** settled (waiting for it, or coming after), never a claim of its own. */
static int test_second_thread_gets_the_module(void) {
  lc_modcache c = LC_MODCACHE_INIT(retain);
  fake_module m = {1};
  lc_hash k = key_of("shared.cu");
  bool claimed = false;
  CHECK(lc_modcache_claim(&c, &k, &claimed) == NULL && claimed);
  claimer t = {&c, k, NULL, true};
  pthread_t th;
  CHECK(pthread_create(&th, NULL, claim_thread, &t) == 0);
  lc_modcache_settle(&c, &k, &m);
  CHECK(pthread_join(th, NULL) == 0);
  CHECK(t.got == &m);
  CHECK(!t.claimed);
  CHECK_EQ(m.refs, 3);                     /* the cache's and the other thread's */
  free(c.entries);
  return 0;
}

#define T(name) { #name, test_##name }
static const unit_test tests[] = {
  T(claim_settle_find), T(failed_compile_forgotten), T(many_keys),
  T(second_thread_gets_the_module),
};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

int main(int argc, char **argv) {
  (void)err;                  /* unit.h's: these calls report no messages */
  return unit_main("modcache_test", tests, NTESTS, argc, argv);
}
