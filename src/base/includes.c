/*
** includes: following a CUDA source's includes the way NVRTC looks them up
** (see includes.h).
*/
#include "includes.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDIRS 80
#define MAXWRAP 32

/* Where names are looked up: the source's directory, then the -I ones;
** and the function-like macros seen to stand for __has_include. */
typedef struct search {
  const char *dir[MAXDIRS];
  size_t len[MAXDIRS];
  int n;
  int nwrap;
  char wrap[MAXWRAP][64];
} search;

static void add_dir(lc_deps *d, search *s, const char *dir, size_t len) {
  if (s->n == MAXDIRS) {
    d->failed = true;
    return;
  }
  s->dir[s->n] = dir;
  s->len[s->n++] = len;
}

/* The directory part of path ("." when it has none). */
static void dir_of(const char *path, const char **dir, size_t *len) {
  const char *slash = strrchr(path, '/');
  if (slash == NULL) {
    *dir = ".";
    *len = 1;
  } else {
    *dir = path;
    *len = slash == path ? 1 : (size_t)(slash - path);
  }
}

/* Record dir/name (or name, when dir is NULL). */
static void candidate(lc_deps *d, const char *dir, size_t dlen, const char *name, size_t nlen) {
  char path[4200];
  int n = dir ? snprintf(path, sizeof path, "%.*s/%.*s", (int)dlen, dir, (int)nlen, name)
              : snprintf(path, sizeof path, "%.*s", (int)nlen, name);
  if (n < 0 || (size_t)n >= sizeof path || memchr(name, '\0', nlen)) {
    d->failed = true;
    return;
  }
  lc_deps_add(d, path);
}

/* Every place name may be found: quoted ("name") from a file in cur. */
static void lookup(lc_deps *d, const search *s, const char *name, size_t nlen, bool quoted,
                   const char *cur, size_t clen) {
  if (nlen == 0) return;                 /* the compiler will say so */
  if (name[0] == '/') {
    candidate(d, NULL, 0, name, nlen);
    return;
  }
  if (quoted && cur) candidate(d, cur, clen, name, nlen);
  for (int i = 0; i < s->n; i++) candidate(d, s->dir[i], s->len[i], name, nlen);
}

static const char *blanks(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\f' || *p == '\v' || *p == '\r')) p++;
  return p;
}

static bool ident_char(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_word(const char *p, const char *end, const char *w) {
  size_t n = strlen(w);
  return (size_t)(end - p) >= n && memcmp(p, w, n) == 0 &&
         ((size_t)(end - p) == n || !ident_char(p[n]));
}

/* Does the identifier [w, w + n) ask whether a header exists? */
static bool asks(const search *s, const char *w, size_t n) {
  if ((n == 13 && memcmp(w, "__has_include", 13) == 0) ||
      (n == 18 && memcmp(w, "__has_include_next", 18) == 0))
    return true;
  for (int i = 0; i < s->nwrap; i++)
    if (strlen(s->wrap[i]) == n && memcmp(s->wrap[i], w, n) == 0) return true;
  return false;
}

static void add_wrapper(lc_deps *d, search *s, const char *w, size_t n) {
  if (asks(s, w, n)) return;
  if (s->nwrap == MAXWRAP || n >= sizeof s->wrap[0]) {
    d->failed = true;
    return;
  }
  memcpy(s->wrap[s->nwrap], w, n);
  s->wrap[s->nwrap++][n] = '\0';
}

/* The literal operand at p ("name" or <name>), looked up; false when the
** operand is something else (a macro). */
static bool operand(lc_deps *d, const search *s, const char *p, const char *end, const char *cur,
                    size_t clen) {
  if (p == end || (*p != '"' && *p != '<')) return false;
  char close = *p == '"' ? '"' : '>';
  const char *q = memchr(p + 1, close, (size_t)(end - p - 1));
  if (q == NULL) return false;
  lookup(d, s, p + 1, (size_t)(q - p - 1), close == '"', cur, clen);
  return true;
}

/* One directive line, [p, end) after its '#'. */
static void directive(lc_deps *d, search *s, const char *p, const char *end,
                      const char *cur, size_t clen) {
  p = blanks(p, end);
  if (is_word(p, end, "include") || is_word(p, end, "include_next") || is_word(p, end, "import")) {
    while (p < end && *p != ' ' && *p != '\t' && *p != '"' && *p != '<') p++;
    if (!operand(d, s, blanks(p, end), end, cur, clen)) d->failed = true;
    return;
  }
  /* the name a function-like #define defines: where its body asks about
  ** a header named by a parameter, the macro asks too (libcu++'s
  ** #define _CCCL_HAS_INCLUDE(_X) __has_include(_X)) */
  const char *macro = NULL, *mend = NULL;
  if (is_word(p, end, "define")) {
    macro = mend = blanks(p + 6, end);
    while (mend < end && ident_char(*mend)) mend++;
    if (mend == macro || mend == end || *mend != '(') macro = NULL;
  }
  /* a condition may ask whether a header exists */
  for (const char *h = p; h < end;) {
    if (!ident_char(*h)) {
      h++;
      continue;
    }
    const char *w = h;
    while (h < end && ident_char(*h)) h++;
    if (!asks(s, w, (size_t)(h - w))) continue;
    const char *q = blanks(h, end);
    if (q == end || *q != '(') continue;   /* a mention, as in #ifdef __has_include */
    if (operand(d, s, blanks(q + 1, end), end, cur, clen)) continue;
    if (macro) add_wrapper(d, s, macro, (size_t)(mend - macro));
    else d->failed = true;
  }
}

/* Every directive of text[0 .. len), the file being in cur (NULL: none),
** read with its line splices removed. */
static void scan(lc_deps *d, search *s, const char *text, size_t len, const char *cur,
                 size_t clen) {
  char *t = malloc(len + 1);
  if (t == NULL) {
    d->failed = true;
    return;
  }
  size_t n = 0;
  for (size_t i = 0; i < len; i++) {
    if (text[i] == '\\' && i + 1 < len && text[i + 1] == '\n') i++;
    else if (text[i] == '\\' && i + 2 < len && text[i + 1] == '\r' && text[i + 2] == '\n') i += 2;
    else t[n++] = text[i];
  }
  const char *p = t, *end = t + n;
  while (p < end && !d->failed) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (eol == NULL) eol = end;
    const char *q = blanks(p, eol);
    if (q < eol && *q == '#') directive(d, s, q + 1, eol, cur, clen);
    p = eol + 1;
  }
  free(t);
}

/* The whole file at path (malloc'd, *n bytes), or NULL. */
static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 65536, len = 0, got;
  char *buf = malloc(cap);
  while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap) {
      char *more = realloc(buf, cap * 2);
      if (more == NULL) free(buf);
      buf = more;
      cap *= 2;
    }
  }
  if (buf && ferror(f)) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *n = len;
  return buf;
}

void lc_includes_nvrtc(lc_deps *d, const char *text, size_t len, const char *name,
                       const char *const *opts, int nopts) {
  search s = {.n = 0};
  const char *srcdir;
  size_t srclen;
  dir_of(name, &srcdir, &srclen);
  bool own_dir = true;
  for (int i = 0; i < nopts; i++)
    if (strcmp(opts[i], "-no-source-include") == 0 || strcmp(opts[i], "--no-source-include") == 0)
      own_dir = false;
  if (own_dir) add_dir(d, &s, srcdir, srclen);
  for (int i = 0; i < nopts; i++) {
    const char *o = opts[i], *dir = NULL;
    if (strcmp(o, "-I") == 0 || strcmp(o, "--include-path") == 0) dir = i + 1 < nopts ? opts[++i] : NULL;
    else if (strncmp(o, "--include-path=", 15) == 0) dir = o + 15;
    else if (strncmp(o, "-I", 2) == 0) dir = o + 2;
    if (dir) add_dir(d, &s, dir, strlen(dir));
  }
  /* pre-included headers, as if the source began with #include "h" */
  for (int i = 0; i < nopts; i++) {
    const char *o = opts[i], *h = NULL;
    if (strcmp(o, "-include") == 0 || strcmp(o, "--pre-include") == 0) h = i + 1 < nopts ? opts[++i] : NULL;
    else if (strncmp(o, "--pre-include=", 14) == 0) h = o + 14;
    if (h) lookup(d, &s, h, strlen(h), true, own_dir ? srcdir : NULL, srclen);
  }
  /* the source, then each header found, in turn: the record is the work
  ** list. A macro found to stand for __has_include may have been used in
  ** a file read before its definition: then everything is read again. */
  int nwrap;
  do {
    nwrap = s.nwrap;
    scan(d, &s, text, len, own_dir ? srcdir : NULL, srclen);
    size_t at = 0;
    lc_dep e;
    while (!d->failed && lc_deps_next(d->rec.p, d->rec.n, &at, &e)) {
      if (e.kind != LC_DEP_FILE) continue;
      char path[4200];
      snprintf(path, sizeof path, "%s", e.path);  /* the record moves as it grows */
      size_t n;
      char *body = slurp(path, &n);
      if (body == NULL) {
        d->failed = true;
        break;
      }
      const char *dir;
      size_t dlen;
      dir_of(path, &dir, &dlen);
      scan(d, &s, body, n, dir, dlen);
      free(body);
    }
  } while (!d->failed && s.nwrap != nwrap);
}
