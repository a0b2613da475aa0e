/*
** strbuf: a growing block of bytes (strbuf.h).
*/
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool lc_sb_room(lc_strbuf *b, size_t n) {
  if (b->oom) return false;
  if (b->cap - b->n > n) return true;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap - b->n <= n) {
    if (cap > (size_t)-1 / 2) {
      b->oom = true;
      return false;
    }
    cap *= 2;
  }
  char *p = realloc(b->p, cap);
  if (p == NULL) {
    b->oom = true;
    return false;
  }
  b->p = p;
  b->cap = cap;
  return true;
}

void lc_sb_add(lc_strbuf *b, const void *data, size_t n) {
  if (!lc_sb_room(b, n)) return;
  memcpy(b->p + b->n, data, n);
  b->n += n;
  b->p[b->n] = '\0';
}

void lc_sb_str(lc_strbuf *b, const char *s) { lc_sb_add(b, s, strlen(s)); }

void lc_sb_fmt(lc_strbuf *b, const char *fmt, ...) {
  char tmp[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  lc_sb_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

void lc_sb_free(lc_strbuf *b) {
  free(b->p);
  *b = (lc_strbuf){0};
}
