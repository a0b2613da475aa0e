/*
** deps: the files a compilation read besides its source (its headers), each
** recorded with a hash of its contents, or as absent. A disk-cache entry
** keeps the record, and a hit reads every file again: an edited header, a
** new one where the compiler would look first, or one that went away
** makes the entry a miss, compiled anew.
**
** The record is bytes (kept in the entry as they are): for each file, its
** path's length (4 bytes), the path and a NUL, what it was (1 byte: absent,
** a file, something else) and its contents' hash (16 bytes), in host byte
** order (a cache is one machine's).
*/
#ifndef LUACUDA_DEPS_H
#define LUACUDA_DEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "strbuf.h"

/* At most this many files: a compilation reading more is not cached. */
#define LC_DEPS_MAX 4096

typedef struct lc_deps {
  lc_strbuf rec;          /* the record so far */
  int count;
  bool failed;            /* out of memory, too many files, or one that
                          ** could not be read: the compilation is not to
                          ** be cached, its headers being unknown */
} lc_deps;

/* One file of a record. */
typedef enum { LC_DEP_ABSENT, LC_DEP_FILE, LC_DEP_OTHER } lc_dep_kind;
typedef struct lc_dep {
  const char *path;       /* within the record */
  lc_dep_kind kind;
  uint64_t a, b;          /* the contents' hash (LC_DEP_FILE) */
} lc_dep;

/* A record starts as {0}; lc_deps_free releases it. */
void lc_deps_free(lc_deps *d);

/* Record path as it is now (a path recorded already is not recorded
** again). Returns whether it is a file the compiler could read. */
bool lc_deps_add(lc_deps *d, const char *path);

/* Record every prerequisite of the make rule text[0 .. n) (what a compiler
** writes with -MD), but the one spelled skip (the source itself), or, when
** skip ends in '/', those under that directory. An unreadable rule fails
** the record. */
void lc_deps_add_rule(lc_deps *d, const char *text, size_t n, const char *skip);

/* The record's file at *at in rec[0 .. n), advancing *at: false at the end
** or at a malformed record. */
bool lc_deps_next(const void *rec, size_t n, size_t *at, lc_dep *out);

/* Whether no recorded file has changed since (CLOCK_REALTIME): its ctime,
** which every change sets, is before it. A header changed while it was
** being compiled may have been read before the change and hashed after,
** so such a compilation is not cached. (As with ccache's same check, a
** change in the first milliseconds may go unseen where file times come
** from the kernel's coarser clock, which lags by a tick or so.) */
bool lc_deps_settled(const lc_deps *d, const struct timespec *since);

/* Whether every file recorded in rec[0 .. n) is as it was recorded. */
bool lc_deps_check(const void *rec, size_t n);

#endif
