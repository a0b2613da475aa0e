/*
** deps: recording the headers a compilation read, and checking them again
** (see deps.h).
*/
#include "deps.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"

void lc_deps_free(lc_deps *d) {
  lc_sb_free(&d->rec);
  *d = (lc_deps){0};
}

static void put(lc_deps *d, const void *data, size_t n) {
  if (d->failed) return;
  lc_sb_add(&d->rec, data, n);
  d->failed = d->rec.oom;
}

/* ---- hashes taken in this process ---------------------------------------
** A hit reads every header again, and most of them (the C library's and
** the C++ library's, for the simulator) are the same for every module: each
** is hashed once per process while it stays the same file with the same
** size, mtime and ctime (every change to a file moves its ctime). Behind a
** mutex: several states compile at once. */

#define MEMO_SLOTS 8192          /* a power of 2; filled to 3/4 at most */

typedef struct memo {
  char *path;
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime, ctime;
  uint64_t a, b;
} memo;

static pthread_mutex_t memo_mu = PTHREAD_MUTEX_INITIALIZER;
static memo *memos[MEMO_SLOTS];
static size_t nmemos;

static size_t slot_of(const char *path) {
  size_t h = 1469598103934665603u;
  for (const unsigned char *p = (const unsigned char *)path; *p; p++) h = (h ^ *p) * 1099511628211u;
  size_t i = h & (MEMO_SLOTS - 1);
  while (memos[i] && strcmp(memos[i]->path, path) != 0) i = (i + 1) & (MEMO_SLOTS - 1);
  return i;
}

static bool same_file(const memo *m, const struct stat *st) {
  return m->dev == st->st_dev && m->ino == st->st_ino && m->size == st->st_size &&
         m->mtime.tv_sec == st->st_mtim.tv_sec && m->mtime.tv_nsec == st->st_mtim.tv_nsec &&
         m->ctime.tv_sec == st->st_ctim.tv_sec && m->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

static bool memo_get(const char *path, const struct stat *st, uint64_t *a, uint64_t *b) {
  pthread_mutex_lock(&memo_mu);
  memo *m = memos[slot_of(path)];
  bool hit = m && same_file(m, st);
  if (hit) {
    *a = m->a;
    *b = m->b;
  }
  pthread_mutex_unlock(&memo_mu);
  return hit;
}

static void memo_put(const char *path, const struct stat *st, uint64_t a, uint64_t b) {
  pthread_mutex_lock(&memo_mu);
  size_t i = slot_of(path);
  memo *m = memos[i];
  if (m == NULL && nmemos < MEMO_SLOTS / 4 * 3 && (m = calloc(1, sizeof *m)) != NULL &&
      (m->path = strdup(path)) == NULL) {
    free(m);
    m = NULL;
  }
  if (m) {
    if (memos[i] == NULL) nmemos++;
    memos[i] = m;
    m->dev = st->st_dev;
    m->ino = st->st_ino;
    m->size = st->st_size;
    m->mtime = st->st_mtim;
    m->ctime = st->st_ctim;
    m->a = a;
    m->b = b;
  }
  pthread_mutex_unlock(&memo_mu);
}

/* ---- one file ------------------------------------------------------------ */

/* What path is now: absent, a file (with its contents' hash), something
** else; -1 when that cannot be told (unreadable). Read through one
** descriptor, so that the kind and the contents are of the same file. */
static int inspect(const char *path, uint64_t *a, uint64_t *b) {
  *a = *b = 0;
  /* O_NONBLOCK: a FIFO where a header was must not stop us */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return LC_DEP_ABSENT;
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode) ? LC_DEP_OTHER : -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return LC_DEP_OTHER;
  }
  if (memo_get(path, &st, a, b)) {
    close(fd);
    return LC_DEP_FILE;
  }
  size_t cap = (size_t)st.st_size + 1, n = 0;    /* + 1: growth is seen */
  unsigned char *buf = malloc(cap);
  for (;;) {
    if (buf == NULL) break;
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r < 0) {
        free(buf);
        buf = NULL;
      }
      break;
    }
    n += (size_t)r;
    if (n == cap) {
      unsigned char *more = cap < SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
      if (more == NULL) free(buf);
      buf = more;
      cap *= 2;
    }
  }
  close(fd);
  if (buf == NULL) return -1;
  lc_hash h;
  lc_hash_init(&h);
  lc_hash_add(&h, buf, n);
  free(buf);
  *a = h.a;
  *b = h.b;
  /* what was read is what st describes only if the file did not change
  ** meanwhile: then it is the size read */
  if ((off_t)n == st.st_size) memo_put(path, &st, h.a, h.b);
  return LC_DEP_FILE;
}

/* ---- records ------------------------------------------------------------- */

bool lc_deps_next(const void *rec, size_t n, size_t *at, lc_dep *out) {
  const unsigned char *p = rec;
  uint32_t len;
  if (n - *at < sizeof len) return false;
  memcpy(&len, p + *at, sizeof len);
  size_t need = sizeof len + (size_t)len + 1 + 1 + 16;
  if (len == 0 || n - *at < need || p[*at + sizeof len + len] != '\0' ||
      memchr(p + *at + sizeof len, '\0', len) != NULL)
    return false;
  const unsigned char *q = p + *at + sizeof len;
  out->path = (const char *)q;
  q += len + 1;
  out->kind = (lc_dep_kind)*q++;
  memcpy(&out->a, q, 8);
  memcpy(&out->b, q + 8, 8);
  *at += need;
  return out->kind <= LC_DEP_OTHER;
}

static bool recorded(const lc_deps *d, const char *path) {
  size_t at = 0;
  lc_dep e;
  while (lc_deps_next(d->rec.p, d->rec.n, &at, &e))
    if (strcmp(e.path, path) == 0) return true;
  return false;
}

bool lc_deps_add(lc_deps *d, const char *path) {
  size_t len = strlen(path);
  if (d->failed || len == 0 || len > 4096) {
    d->failed = true;
    return false;
  }
  if (recorded(d, path)) return false;     /* the caller has seen it */
  if (d->count == LC_DEPS_MAX) {
    d->failed = true;
    return false;
  }
  uint64_t a, b;
  int kind = inspect(path, &a, &b);
  if (kind < 0) {
    d->failed = true;
    return false;
  }
  uint32_t n32 = (uint32_t)len;
  unsigned char k = (unsigned char)kind;
  put(d, &n32, sizeof n32);
  put(d, path, len + 1);
  put(d, &k, 1);
  put(d, &a, 8);
  put(d, &b, 8);
  d->count++;
  return kind == LC_DEP_FILE;
}

/* Make's escapes, as GCC and Clang write them: a backslash before a blank
** or '#', "$$" for '$'; a backslash-newline is a blank. */
/* skip is a file, or a directory (ending in '/') whose files are skipped */
static bool skipped(const char *word, const char *skip) {
  size_t n = strlen(skip);
  if (n > 0 && skip[n - 1] == '/') return strncmp(word, skip, n) == 0;
  return strcmp(word, skip) == 0;
}

void lc_deps_add_rule(lc_deps *d, const char *text, size_t n, const char *skip) {
  size_t i = 0;
  /* the target, up to the first ':' that ends a word */
  while (i < n && !(text[i] == ':' && (i + 1 == n || text[i + 1] == ' ' ||
                                      text[i + 1] == '\t' || text[i + 1] == '\n' ||
                                      text[i + 1] == '\\')))
    i++;
  if (i == n) {
    d->failed = true;
    return;
  }
  i++;
  char word[4097];
  size_t w = 0;
  for (;; i++) {
    bool sep;
    char c = 0;
    if (i >= n) {
      sep = true;
    } else if (text[i] == '\\' && i + 1 < n &&
               (text[i + 1] == ' ' || text[i + 1] == '\t' || text[i + 1] == '#')) {
      c = text[++i];
      sep = false;
    } else if (text[i] == '\\' && i + 1 < n && text[i + 1] == '\n') {
      i++;
      sep = true;
    } else if (text[i] == '\\' && i + 2 < n && text[i + 1] == '\r' && text[i + 2] == '\n') {
      i += 2;
      sep = true;
    } else if (text[i] == '$' && i + 1 < n && text[i + 1] == '$') {
      i++;
      c = '$';
      sep = false;
    } else {
      c = text[i];
      sep = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    }
    if (sep) {
      if (w > 0) {
        word[w] = '\0';
        if (word[w - 1] == ':') d->failed = true;      /* a second rule: not ours */
        else if (!skipped(word, skip)) lc_deps_add(d, word);
        w = 0;
      }
      if (i >= n || d->failed) return;
      continue;
    }
    if (w == sizeof word - 1) {
      d->failed = true;
      return;
    }
    word[w++] = c;
  }
}

bool lc_deps_settled(const lc_deps *d, const struct timespec *since) {
  size_t at = 0;
  lc_dep e;
  while (lc_deps_next(d->rec.p, d->rec.n, &at, &e)) {
    struct stat st;
    if (stat(e.path, &st) != 0) {
      if (e.kind == LC_DEP_ABSENT && (errno == ENOENT || errno == ENOTDIR)) continue;
      return false;
    }
    if (st.st_ctim.tv_sec > since->tv_sec ||
        (st.st_ctim.tv_sec == since->tv_sec && st.st_ctim.tv_nsec >= since->tv_nsec))
      return false;
  }
  return at == d->rec.n;
}

bool lc_deps_check(const void *rec, size_t n) {
  size_t at = 0;
  lc_dep e;
  while (lc_deps_next(rec, n, &at, &e)) {
    uint64_t a, b;
    int kind = inspect(e.path, &a, &b);
    if (kind != (int)e.kind || a != e.a || b != e.b) return false;
  }
  return at == n;
}
