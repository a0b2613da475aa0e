/*
** modcache: the process's compiled modules by key (modcache.h).
*/
#include "modcache.h"

#include <stdlib.h>

struct lc_modcache_entry {
  lc_hash key;
  void *mod;                   /* NULL: its compilation is in flight */
};

/* The entry for key, or NULL (the caller holds the lock). */
static lc_modcache_entry *entry(lc_modcache *c, const lc_hash *key) {
  for (size_t i = 0; i < c->n; i++)
    if (c->entries[i].key.a == key->a && c->entries[i].key.b == key->b) return &c->entries[i];
  return NULL;
}

void *lc_modcache_find(lc_modcache *c, const lc_hash *key) {
  pthread_mutex_lock(&c->lock);
  lc_modcache_entry *e = entry(c, key);
  void *mod = e ? e->mod : NULL;
  if (mod) c->retain(mod);
  pthread_mutex_unlock(&c->lock);
  return mod;
}

void *lc_modcache_claim(lc_modcache *c, const lc_hash *key, bool *claimed) {
  void *mod = NULL;
  *claimed = false;
  pthread_mutex_lock(&c->lock);
  lc_modcache_entry *e;
  while ((e = entry(c, key)) != NULL && e->mod == NULL) pthread_cond_wait(&c->settled, &c->lock);
  if (e) {
    mod = e->mod;
    c->retain(mod);
  } else {
    if (c->n == c->cap) {
      size_t cap = c->cap ? 2 * c->cap : 16;
      lc_modcache_entry *grown = realloc(c->entries, cap * sizeof *grown);
      if (grown) {
        c->entries = grown;
        c->cap = cap;
      }
    }
    if (c->n < c->cap) {
      c->entries[c->n++] = (lc_modcache_entry){*key, NULL};
      *claimed = true;
    }
  }
  pthread_mutex_unlock(&c->lock);
  return mod;
}

void lc_modcache_settle(lc_modcache *c, const lc_hash *key, void *mod) {
  pthread_mutex_lock(&c->lock);
  lc_modcache_entry *e = entry(c, key);
  if (mod) {
    c->retain(mod);
    e->mod = mod;
  } else {
    *e = c->entries[--c->n];
  }
  pthread_cond_broadcast(&c->settled);
  pthread_mutex_unlock(&c->lock);
}
