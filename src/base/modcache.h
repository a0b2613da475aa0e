/*
** modcache: the process's compiled modules, by what made them. Each entry
** holds a reference to its module, so a module compiled once stays for the
** process. States on several threads share a cache: an entry without a
** module is being compiled, and a thread that wants the same key waits for
** it rather than compiling it again. The modules are opaque here; the
** cache only retains them (the function it is made with).
*/
#ifndef LUACUDA_MODCACHE_H
#define LUACUDA_MODCACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "hash.h"

typedef struct lc_modcache_entry lc_modcache_entry;

typedef struct lc_modcache {
  pthread_mutex_t lock;
  pthread_cond_t settled;      /* a compilation in flight ended */
  void (*retain)(void *mod);   /* takes a reference to a module */
  lc_modcache_entry *entries;
  size_t n, cap;
} lc_modcache;

/* A cache, empty, that retains modules with retain: a static's initializer. */
#define LC_MODCACHE_INIT(retain) \
  {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, (retain), NULL, 0, 0}

/* The compiled module for key, retained; NULL when there is none yet. */
void *lc_modcache_find(lc_modcache *c, const lc_hash *key);

/* The module for key, retained, once any compilation of it in flight has
** settled; or NULL, and then *claimed says whether the caller now owns the
** key's compilation: it must end it with lc_modcache_settle, whatever
** happens (waiting threads would wait forever), so it must not raise a Lua
** error in between. Without room for the entry the caller compiles without
** caching (*claimed false). */
void *lc_modcache_claim(lc_modcache *c, const lc_hash *key, bool *claimed);

/* End a claimed compilation: mod compiled (the cache retains it) or, with
** mod NULL, failed (the entry goes; a waiting thread compiles itself). */
void lc_modcache_settle(lc_modcache *c, const lc_hash *key, void *mod);

#endif
