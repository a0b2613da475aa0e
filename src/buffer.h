/*
** buffer: a reference-counted block of memory of one kind. Views share
** their base's buffer; the memory goes when the last view does.
*/
#ifndef LUACUDA_BUFFER_H
#define LUACUDA_BUFFER_H

#include <stdatomic.h>
#include "backend.h"
#include "lua.h"

typedef struct lc_buffer {
  atomic_int refs;
  lc_kind kind;
  void *ptr;
  size_t nbytes;
  const lc_backend *backend;
} lc_buffer;

/* Allocate nbytes of the given kind. Steps the Lua collector in proportion
** to nbytes (it cannot see this memory), and retries once after a full
** collection when the allocation fails; then raises
** "luacuda.<fname>: out of ... memory". */
lc_buffer *lc_buffer_new(lua_State *L, lc_kind kind, size_t nbytes,
                         unsigned flags, const char *fname);

void lc_buffer_retain(lc_buffer *b);
void lc_buffer_release(lc_buffer *b);

#endif
