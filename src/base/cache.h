/*
** cache: the on-disk compile cache, keyed by hash.h's hash. An entry is
** the compiled object (a shared object for the simulator, a cubin or PTX
** for CUDA), the record of the headers its compilation read (deps.h), then
** a trailer with its key, lengths and checksum, so a truncated or corrupt
** file is recompiled, never trusted. Loaders ignore bytes past the end of
** an ELF file's contents, so entries load in place.
**
** The key is what was compiled, how and by which compiler; the headers'
** contents cannot be part of it (which headers a source reads is known
** only once it is compiled), so an entry is valid only while every header
** it records reads as it did when it was compiled. A header that changes
** makes the entry a miss: compiled again, and replaced.
*/
#ifndef LUACUDA_CACHE_H
#define LUACUDA_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hash.h"

struct lc_deps;

/* The cache directory (LUACUDA_CACHE_DIR, else $XDG_CACHE_HOME/luacuda, else
** ~/.cache/luacuda), created if needed; NULL when caching is off
** (LUACUDA_CACHE=0), the directory cannot be made, or it cannot be trusted:
** a directory not owned by this process's user, or that others may write,
** is not used (with a warning on stderr): whoever can write the cache runs
** code in every process that loads from it. */
const char *lc_cache_dir(void);

/* Entries are named by kind (a prefix such as "sim"), key and suffix, and
** used only when they are files the user owns and only the user may write,
** reached without following a link, whose trailer is whole and for key,
** and whose headers read as they did.
** (The checksum finds corruption; it is no protection from someone who may
** write the directory: that is the ownership rule's job.) */

/* The contents of the entry (malloc'd, *len bytes before the record and
** the trailer, a byte to spare after them), or NULL. */
unsigned char *lc_cache_load(const char *kind, const lc_hash *key, const char *suffix,
                             size_t *len);

/* Whether the entry is one lc_cache_load would take, checked where it lies
** (mapped, not copied): for a large entry that another program reads by
** name, such as a precompiled header. Its path from the root goes to
** path, a copy of its record of headers (deps.h) to *deps (malloc'd,
** *ndeps bytes). The check of its bytes is remembered in this process
** while it stays the same file (inode, size, mtime and ctime, which every
** write moves); its headers are read again every time. */
bool lc_cache_check(const char *kind, const lc_hash *key, const char *suffix, char *path,
                    size_t len, void **deps, size_t *ndeps);

/* Write data as the entry for key, with the record of the headers read to
** make it (NULL: none), through a temporary file renamed into place:
** several processes may fill the cache at once. 0 on success. */
int lc_cache_store(const char *kind, const lc_hash *key, const char *suffix, const void *data,
                   size_t n, const struct lc_deps *deps, char *err);

/* Remove every entry (and stale temporary file); returns how many. */
int lc_cache_clear(void);

#endif
