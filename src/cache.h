/*
** cache: the on-disk compile cache, and the hash that keys it. An entry is
** the compiled object (a shared object for the simulator, a cubin or PTX
** for CUDA) followed by a trailer with its key, length and checksum, so a
** truncated or corrupt file is recompiled, never trusted. Loaders ignore
** bytes past the end of an ELF file's contents, so entries load in place.
** Entries are written to a temporary name and renamed: several processes
** may fill the cache at once.
*/
#ifndef LUACUDA_CACHE_H
#define LUACUDA_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 128 bits of a keyed, length-aware hash (not cryptographic). */
typedef struct lc_hash { uint64_t a, b; } lc_hash;

void lc_hash_init(lc_hash *h);
/* Add one field: its length goes in too, so fields cannot run together. */
void lc_hash_add(lc_hash *h, const void *data, size_t n);
void lc_hash_add_str(lc_hash *h, const char *s);
void lc_hash_hex(const lc_hash *h, char out[33]);

/* The cache directory (LUACUDA_CACHE_DIR, else $XDG_CACHE_HOME/luacuda, else
** ~/.cache/luacuda), created if needed; NULL when caching is off
** (LUACUDA_CACHE=0) or the directory cannot be made. */
const char *lc_cache_dir(void);

/* The path of the entry for key (kind is a file prefix such as "sim"). */
void lc_cache_path(const char *dir, const char *kind, const lc_hash *key,
                   const char *suffix, char *path, size_t len);

/* Is there a valid entry for key at path? */
bool lc_cache_valid(const char *path, const lc_hash *key);

/* The contents of a valid entry for key at path (malloc'd, *len bytes
** before the trailer), or NULL. */
unsigned char *lc_cache_load(const char *path, const lc_hash *key, size_t *len);

/* Write data as the entry for key at path (through a temporary file in dir,
** renamed into place). 0 on success. */
int lc_cache_store(const char *dir, const char *path, const lc_hash *key,
                   const void *data, size_t n, char *err);

/* Append the trailer to the finished object at tmp and rename it to path. */
int lc_cache_commit(const char *tmp, const char *path, const lc_hash *key, char *err);

/* Remove every entry (and stale temporary file) in dir; returns how many. */
int lc_cache_clear(const char *dir);

#endif
