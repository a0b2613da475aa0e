/*
** cache: keys, entries with a self-checking trailer, and the directory
** (see cache.h).
*/
#define _DEFAULT_SOURCE    /* d_type, and mkdir/realpath with -std=c11 */
#include "cache.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layout.h"   /* LC_ERRLEN */

/* ---- the hash: two 64-bit lanes, each word mixed in with a strong
** finalizer (xor-shift-multiply), so every input bit reaches every output
** bit of both lanes ---------------------------------------------------- */

static uint64_t mix(uint64_t x) {
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ull;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dull;
  x ^= x >> 33;
  return x;
}

static void add_word(lc_hash *h, uint64_t w) {
  h->a = mix(h->a ^ w) + 0x9e3779b97f4a7c15ull;
  h->b = mix(h->b + w * 0xd6e8feb86659fd93ull) ^ h->a;
}

void lc_hash_init(lc_hash *h) {
  h->a = 0x243f6a8885a308d3ull;
  h->b = 0x13198a2e03707344ull;
}

void lc_hash_add(lc_hash *h, const void *data, size_t n) {
  const unsigned char *p = data;
  add_word(h, (uint64_t)n);
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    add_word(h, w);
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  memcpy(&w, p, n);
  add_word(h, w);
}

void lc_hash_add_str(lc_hash *h, const char *s) { lc_hash_add(h, s, strlen(s)); }

void lc_hash_hex(const lc_hash *h, char out[33]) {
  snprintf(out, 33, "%016llx%016llx", (unsigned long long)h->a, (unsigned long long)h->b);
}

/* ---- the directory ------------------------------------------------------- */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char dir[1024];
static bool enabled;

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

static void find_dir(void) {
  const char *off = getenv("LUACUDA_CACHE");
  if (off && strcmp(off, "0") == 0) return;
  const char *d = getenv("LUACUDA_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  if (d && *d) snprintf(dir, sizeof dir, "%s", d);
  else if (xdg && *xdg) snprintf(dir, sizeof dir, "%s/luacuda", xdg);
  else if (home && *home) snprintf(dir, sizeof dir, "%s/.cache/luacuda", home);
  else return;
  enabled = make_dirs(dir);
}

const char *lc_cache_dir(void) {
  pthread_once(&once, find_dir);
  return enabled ? dir : NULL;
}

void lc_cache_path(const char *d, const char *kind, const lc_hash *key, const char *suffix,
                   char *path, size_t len) {
  char hex[33];
  lc_hash_hex(key, hex);
  snprintf(path, len, "%s/%s-%s%s", d, kind, hex, suffix);
}

/* ---- entries ----------------------------------------------------------- */

#define MAGIC "LCCACHE1"

typedef struct trailer {
  char magic[8];
  uint64_t key_a, key_b;
  uint64_t length;        /* bytes before the trailer */
  uint64_t sum_a, sum_b;  /* their hash */
} trailer;

static void checksum(const unsigned char *p, size_t n, uint64_t *a, uint64_t *b) {
  lc_hash h;
  lc_hash_init(&h);
  lc_hash_add(&h, p, n);
  *a = h.a;
  *b = h.b;
}

/* Read a whole file (malloc'd); NULL on any failure. */
static unsigned char *read_all(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  unsigned char *buf = NULL;
  long size;
  if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = malloc((size_t)size + 1)) != NULL && fread(buf, 1, (size_t)size, f) != (size_t)size) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *n = buf ? (size_t)size : 0;
  return buf;
}

unsigned char *lc_cache_load(const char *path, const lc_hash *key, size_t *len) {
  size_t n;
  unsigned char *buf = read_all(path, &n);
  if (buf == NULL) return NULL;
  trailer t;
  bool ok = n >= sizeof t;
  if (ok) {
    memcpy(&t, buf + n - sizeof t, sizeof t);
    uint64_t a, b;
    ok = memcmp(t.magic, MAGIC, 8) == 0 && t.key_a == key->a && t.key_b == key->b &&
         t.length == n - sizeof t;
    if (ok) {
      checksum(buf, (size_t)t.length, &a, &b);
      ok = a == t.sum_a && b == t.sum_b;
    }
  }
  if (!ok) {
    free(buf);
    return NULL;
  }
  *len = (size_t)t.length;
  return buf;
}

bool lc_cache_valid(const char *path, const lc_hash *key) {
  size_t n;
  unsigned char *buf = lc_cache_load(path, key, &n);
  free(buf);
  return buf != NULL;
}

int lc_cache_store(const char *dir, const char *path, const lc_hash *key,
                   const void *data, size_t n, char *err) {
  static atomic_uint serial;
  char tmp[1200];
  snprintf(tmp, sizeof tmp, "%s/tmp-%ld-%u", dir, (long)getpid(), atomic_fetch_add(&serial, 1));
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fwrite(data, 1, n, f) == n;
  if (f && fclose(f) != 0) ok = false;
  if (!ok) {
    snprintf(err, LC_ERRLEN, "cannot write %.400s: %s", tmp, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return lc_cache_commit(tmp, path, key, err);
}

int lc_cache_commit(const char *tmp, const char *path, const lc_hash *key, char *err) {
  size_t n;
  unsigned char *buf = read_all(tmp, &n);
  if (buf == NULL) {
    snprintf(err, LC_ERRLEN, "cannot read %.400s", tmp);
    return -1;
  }
  trailer t;
  memcpy(t.magic, MAGIC, 8);
  t.key_a = key->a;
  t.key_b = key->b;
  t.length = n;
  checksum(buf, n, &t.sum_a, &t.sum_b);
  free(buf);
  FILE *f = fopen(tmp, "ab");
  bool ok = f && fwrite(&t, sizeof t, 1, f) == 1;
  if (f && fclose(f) != 0) ok = false;
  if (!ok || rename(tmp, path) != 0) {
    snprintf(err, LC_ERRLEN, "cannot store %.400s: %s", path, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}

int lc_cache_clear(const char *d) {
  DIR *dp = opendir(d);
  if (dp == NULL) return 0;
  int removed = 0;
  struct dirent *e;
  char path[2048];
  while ((e = readdir(dp)) != NULL) {
    /* only our own files: sim-<key>.so, cuda-<key>.cubin, tmp-... */
    if (strncmp(e->d_name, "sim-", 4) != 0 && strncmp(e->d_name, "cuda-", 5) != 0 &&
        strncmp(e->d_name, "tmp-", 4) != 0)
      continue;
    snprintf(path, sizeof path, "%s/%s", d, e->d_name);
    if (unlink(path) == 0) removed++;
  }
  closedir(dp);
  return removed;
}
