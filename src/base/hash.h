/*
** hash: 128 bits of a keyed, length-aware hash (not cryptographic), the
** key of the compile cache's entries (cache.h), of the headers a
** compilation read (deps.h) and of the process's compiled modules
** (modcache.h).
*/
#ifndef LUACUDA_HASH_H
#define LUACUDA_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct lc_hash { uint64_t a, b; } lc_hash;

void lc_hash_init(lc_hash *h);
/* Add one field: its length goes in too, so fields cannot run together. */
void lc_hash_add(lc_hash *h, const void *data, size_t n);
void lc_hash_add_str(lc_hash *h, const char *s);

#endif
