/*
** strbuf: a growing block of bytes, always NUL-terminated, for texts and
** records built piece by piece (a kernel source, a compiler's output, the
** record of the headers a compilation read). Running out of memory is
** remembered (oom) rather than reported at each step: the builder checks
** once at the end.
*/
#ifndef LUACUDA_STRBUF_H
#define LUACUDA_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"

typedef struct lc_strbuf {
  char *p;            /* NULL until something is added */
  size_t n, cap;      /* bytes used (the NUL after them not counted), allocated */
  bool oom;
} lc_strbuf;

/* Room for n more bytes and a NUL; false (and oom set) when there is none. */
bool lc_sb_room(lc_strbuf *b, size_t n);
void lc_sb_add(lc_strbuf *b, const void *data, size_t n);
void lc_sb_str(lc_strbuf *b, const char *s);
/* At most 1023 bytes of formatted text. */
LC_PRINTF(2, 3) void lc_sb_fmt(lc_strbuf *b, const char *fmt, ...);
void lc_sb_free(lc_strbuf *b);

#endif
