/*
** cache: keys, entries with a self-checking trailer, and the directory
** (see cache.h).
*/
#define _DEFAULT_SOURCE    /* d_type, and mkdir/realpath with -std=c11 */
#define _ATFILE_SOURCE     /* openat, renameat, unlinkat, fdopendir */
#include "cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deps.h"
#include "layout.h"   /* LC_ERRLEN */

static void hash_hex(const lc_hash *h, char out[33]) {
  snprintf(out, 33, "%016llx%016llx", (unsigned long long)h->a, (unsigned long long)h->b);
}

/* ---- the directory ------------------------------------------------------- */

/* The directory is opened once and used through its descriptor, so that
** what was checked is what is used: a directory renamed or replaced later
** is not followed. */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char dir[1024];
static char absdir[4096];        /* dir from the root; "" when unknown */
static int dfd = -1;             /* -1: no disk cache */

/* mkdir -p */
static bool make_dirs(char *path) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    bool ok = mkdir(path, 0700) == 0 || errno == EEXIST;
    *p = '/';
    if (!ok) return false;
  }
  return mkdir(path, 0700) == 0 || errno == EEXIST;
}

/* Why a file or directory of the cache cannot be trusted: not the user's,
** or writable by others (they could put their code in it); NULL if it can. */
static const char *untrusted(const struct stat *st, char *why, size_t len) {
  if (st->st_uid != geteuid()) {
    snprintf(why, len, "it belongs to uid %ld, not to this process's user (uid %ld)",
             (long)st->st_uid, (long)geteuid());
    return why;
  }
  if (st->st_mode & (S_IWGRP | S_IWOTH)) {
    snprintf(why, len, "others may write it (mode %03o)", (unsigned)(st->st_mode & 0777));
    return why;
  }
  return NULL;
}

static void find_dir(void) {
  const char *off = getenv("LUACUDA_CACHE");
  if (off && strcmp(off, "0") == 0) return;
  const char *d = getenv("LUACUDA_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  if (d && *d) snprintf(dir, sizeof dir, "%s", d);
  else if (xdg && *xdg) snprintf(dir, sizeof dir, "%s/luacuda", xdg);
  else if (home && *home) snprintf(dir, sizeof dir, "%s/.cache/luacuda", home);
  else return;
  if (!make_dirs(dir)) return;
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  char why[128];
  const char *bad = fd < 0 || fstat(fd, &st) != 0 ? "it cannot be opened"
                  : !S_ISDIR(st.st_mode) ? "it is not a directory"
                  : untrusted(&st, why, sizeof why);
  if (bad) {
    /* a cache is an optimisation: without it, everything still works */
    fprintf(stderr, "luacuda: not using the compile cache %s: %s (compiling without it; "
            "LUACUDA_CACHE_DIR names another, LUACUDA_CACHE=0 turns it off)\n", dir, bad);
    if (fd >= 0) close(fd);
    return;
  }
  dfd = fd;
  if (realpath(dir, absdir) == NULL) absdir[0] = '\0';
}

const char *lc_cache_dir(void) {
  pthread_once(&once, find_dir);
  return dfd >= 0 ? dir : NULL;
}

static void entry_name(const char *kind, const lc_hash *key, const char *suffix, char *name,
                       size_t len) {
  char hex[33];
  hash_hex(key, hex);
  snprintf(name, len, "%s-%s%s", kind, hex, suffix);
}

/* ---- entries ----------------------------------------------------------- */

/* An entry: the object, the record of the headers its compilation read
** (deps.h), then the trailer. Version 2 added the record. */
#define MAGIC "LCCACHE2"

typedef struct trailer {
  char magic[8];
  uint64_t key_a, key_b;
  uint64_t length;        /* the object's bytes */
  uint64_t deps_length;   /* the record's, after them */
  uint64_t sum_a, sum_b;  /* the hash of both */
} trailer;

/* The object and the record as two fields (lc_hash_add takes each with
** its length), so the store need not copy them together. */
static void checksum(const void *p, size_t n, const void *deps, size_t ndeps, uint64_t *a,
                     uint64_t *b) {
  lc_hash h;
  lc_hash_init(&h);
  lc_hash_add(&h, p, n);
  lc_hash_add(&h, deps, ndeps);
  *a = h.a;
  *b = h.b;
}

/* The entry opened without following a link, if it is a file the user
** owns and only the user may write; else -1, with a warning for a file
** that is there but cannot be trusted. */
static int open_entry(const char *name) {
  if (lc_cache_dir() == NULL) return -1;
  int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP)
      fprintf(stderr, "luacuda: ignoring the cache entry %s/%s: it is a symbolic link\n", dir,
              name);
    return -1;
  }
  struct stat st;
  char why[128];
  const char *bad = fstat(fd, &st) != 0 ? "it cannot be read"
                  : !S_ISREG(st.st_mode) ? "it is not a file"
                  : untrusted(&st, why, sizeof why);
  if (bad) {
    fprintf(stderr, "luacuda: ignoring the cache entry %s/%s: %s\n", dir, name, bad);
    close(fd);
    return -1;
  }
  return fd;
}

/* Whether the n bytes of an entry at buf are whole and for key, and the
** headers they record read as they did; the object's length in *len. */
static bool entry_ok(const unsigned char *buf, size_t n, const lc_hash *key, size_t *len) {
  trailer t;
  if (n < sizeof t) return false;
  memcpy(&t, buf + n - sizeof t, sizeof t);
  uint64_t a, b;
  bool ok = memcmp(t.magic, MAGIC, 8) == 0 && t.key_a == key->a && t.key_b == key->b &&
            t.length <= n - sizeof t && t.deps_length == n - sizeof t - t.length;
  if (ok) {
    checksum(buf, (size_t)t.length, buf + t.length, (size_t)t.deps_length, &a, &b);
    ok = a == t.sum_a && b == t.sum_b;
  }
  /* last: it reads every header again */
  if (ok) ok = lc_deps_check(buf + t.length, (size_t)t.deps_length);
  *len = (size_t)t.length;
  return ok;
}

/* The contents of the entry at fd (malloc'd, one byte to spare) if
** entry_ok; else NULL. Read through fd, so what is checked is what the
** caller then uses. */
static unsigned char *read_entry(int fd, const lc_hash *key, size_t *len) {
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(trailer)) return NULL;
  size_t n = (size_t)st.st_size;
  unsigned char *buf = malloc(n + 1);
  size_t got = 0;
  while (buf && got < n) {
    ssize_t r = pread(fd, buf + got, n - got, (off_t)got);
    if (r <= 0) break;
    got += (size_t)r;
  }
  if (buf == NULL || got != n || !entry_ok(buf, n, key, len)) {
    free(buf);
    return NULL;
  }
  return buf;
}

unsigned char *lc_cache_load(const char *kind, const lc_hash *key, const char *suffix,
                             size_t *len) {
  char name[256];
  entry_name(kind, key, suffix, name, sizeof name);
  int fd = open_entry(name);
  if (fd < 0) return NULL;
  unsigned char *buf = read_entry(fd, key, len);
  close(fd);
  return buf;
}

/* ---- entries used in place ------------------------------------------------
** The checks of entries' bytes, remembered while each stays the same file:
** a few slots, the oldest replaced (a process uses one or two such
** entries). Behind a mutex: several states compile at once. */

#define CHECKED_SLOTS 4

typedef struct checked {
  bool used;
  lc_hash key;
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime, ctime;
  unsigned char *rec;     /* its record of headers */
  size_t nrec;
} checked;

static pthread_mutex_t checked_mu = PTHREAD_MUTEX_INITIALIZER;
static checked checks[CHECKED_SLOTS];
static unsigned next_check;

static bool same_stat(const checked *c, const struct stat *st) {
  return c->dev == st->st_dev && c->ino == st->st_ino && c->size == st->st_size &&
         c->mtime.tv_sec == st->st_mtim.tv_sec && c->mtime.tv_nsec == st->st_mtim.tv_nsec &&
         c->ctime.tv_sec == st->st_ctim.tv_sec && c->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

/* A copy of the record of the entry checked before as st for key, or NULL. */
static unsigned char *checked_before(const lc_hash *key, const struct stat *st, size_t *nrec) {
  unsigned char *rec = NULL;
  pthread_mutex_lock(&checked_mu);
  for (int i = 0; i < CHECKED_SLOTS; i++) {
    checked *c = &checks[i];
    if (c->used && c->key.a == key->a && c->key.b == key->b && same_stat(c, st)) {
      rec = malloc(c->nrec + 1);
      if (rec) memcpy(rec, c->rec, c->nrec);
      *nrec = c->nrec;
      break;
    }
  }
  pthread_mutex_unlock(&checked_mu);
  return rec;
}

static void remember_check(const lc_hash *key, const struct stat *st, const void *rec,
                           size_t nrec) {
  unsigned char *copy = malloc(nrec + 1);
  if (copy == NULL) return;
  memcpy(copy, rec, nrec);
  pthread_mutex_lock(&checked_mu);
  checked *c = &checks[next_check++ % CHECKED_SLOTS];
  free(c->rec);
  *c = (checked){true, *key, st->st_dev, st->st_ino, st->st_size, st->st_mtim, st->st_ctim,
                 copy, nrec};
  pthread_mutex_unlock(&checked_mu);
}

bool lc_cache_check(const char *kind, const lc_hash *key, const char *suffix, char *path,
                    size_t len, void **deps, size_t *ndeps) {
  char name[256];
  entry_name(kind, key, suffix, name, sizeof name);
  *deps = NULL;
  int fd = open_entry(name);
  if (fd < 0) return false;
  struct stat st;
  bool ok = absdir[0] != '\0' && fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(trailer);
  size_t nrec = 0;
  unsigned char *rec = ok ? checked_before(key, &st, &nrec) : NULL;
  if (rec) {
    ok = lc_deps_check(rec, nrec);          /* the headers, every time */
  } else if (ok) {
    size_t n = (size_t)st.st_size, object;
    void *map = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    ok = map != MAP_FAILED && entry_ok(map, n, key, &object);
    if (ok) {
      nrec = n - sizeof(trailer) - object;
      rec = malloc(nrec + 1);
      ok = rec != NULL;
      if (ok) {
        memcpy(rec, (unsigned char *)map + object, nrec);
        remember_check(key, &st, rec, nrec);
      }
    }
    if (map != MAP_FAILED) munmap(map, n);
  }
  close(fd);
  ok = ok && (size_t)snprintf(path, len, "%s/%s", absdir, name) < len;
  if (!ok) {
    free(rec);
    return false;
  }
  *deps = rec;
  *ndeps = nrec;
  return true;
}

int lc_cache_store(const char *kind, const lc_hash *key, const char *suffix, const void *data,
                   size_t n, const lc_deps *deps, char *err) {
  static atomic_uint serial;
  if (lc_cache_dir() == NULL) return -1;      /* off: nothing to say */
  char name[256], tmp[256];
  entry_name(kind, key, suffix, name, sizeof name);
  snprintf(tmp, sizeof tmp, "tmp-%ld-%u%s", (long)getpid(), atomic_fetch_add(&serial, 1),
           suffix);
  trailer t;
  memcpy(t.magic, MAGIC, 8);
  t.key_a = key->a;
  t.key_b = key->b;
  t.length = n;
  t.deps_length = deps ? deps->rec.n : 0;
  const unsigned char *rec = deps ? (const unsigned char *)deps->rec.p : NULL;
  checksum(data, n, rec, (size_t)t.deps_length, &t.sum_a, &t.sum_b);
  int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  const unsigned char *parts[3] = {data, rec, (const unsigned char *)&t};
  size_t sizes[3] = {n, (size_t)t.deps_length, sizeof t};
  for (int i = 0; ok && i < 3; i++) {
    for (size_t off = 0; ok && off < sizes[i];) {
      ssize_t w = write(fd, parts[i] + off, sizes[i] - off);
      ok = w > 0;
      if (ok) off += (size_t)w;
    }
  }
  if (fd >= 0 && close(fd) != 0) ok = false;
  if (!ok) {
    lc_errf(err, "cannot write %.400s: %s", tmp, strerror(errno));
    unlinkat(dfd, tmp, 0);
    return -1;
  }
  if (renameat(dfd, tmp, dfd, name) != 0) {
    lc_errf(err, "cannot store %.400s: %s", name, strerror(errno));
    unlinkat(dfd, tmp, 0);
    return -1;
  }
  return 0;
}

int lc_cache_clear(void) {
  if (lc_cache_dir() == NULL) return 0;
  int fd = dup(dfd);
  DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
  if (dp == NULL) {
    if (fd >= 0) close(fd);
    return 0;
  }
  rewinddir(dp);
  int removed = 0;
  struct dirent *e;
  while ((e = readdir(dp)) != NULL) {
    /* only our own files: sim-<key>.so, cuda-<key>.cubin, pch-<key>.gch, tmp-... */
    if (strncmp(e->d_name, "sim-", 4) != 0 && strncmp(e->d_name, "cuda-", 5) != 0 &&
        strncmp(e->d_name, "nvrtc-", 6) != 0 && strncmp(e->d_name, "pch-", 4) != 0 &&
        strncmp(e->d_name, "simrt-", 6) != 0 &&
        strncmp(e->d_name, "tmp-", 4) != 0)
      continue;
    if (unlinkat(dfd, e->d_name, 0) == 0) removed++;
  }
  closedir(dp);
  return removed;
}
