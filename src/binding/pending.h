/*
** pending: queued work that host code must wait for. An async copy or fill
** on a stream may write host-addressable memory (or read it) after the call
** has returned; the buffer remembers that work (buffer.h, `pending`), and a
** host access from Lua (a[i], a[i] = v, totable, tostring, a synchronous
** copy) waits for it first. LUACUDA_STRICT_ASYNC=1 makes an access that
** would have to wait an error instead, to find missing synchronisations.
*/
#ifndef LUACUDA_PENDING_H
#define LUACUDA_PENDING_H

#include "array.h"

/* Work that reads (writes false) or writes b's memory was just queued on
** s. Only host-addressable memory is remembered. Never raises: where the
** work cannot be remembered, this waits for it. */
void lc_pending_add(lc_buffer *b, lc_stream *s, bool writes);

/* Before the host reads (writing false) or writes a's memory: wait for the
** remembered work that conflicts with it (a read waits for writers only).
** With LUACUDA_STRICT_ASYNC=1, such work not done yet is an error naming
** fname, the array and the stream. Runs no Lua code; a raise leaves
** everything as it was. Costs one load when nothing is remembered. */
void lc_pending_wait_slow(lua_State *L, const lc_array *a, bool writing, const char *fname);
static inline void lc_pending_wait(lua_State *L, const lc_array *a, bool writing,
                                   const char *fname) {
  if (atomic_load_explicit(&a->buf->busy, memory_order_acquire))
    lc_pending_wait_slow(L, a, writing, fname);
}

/* Is any work remembered on b (the fast paths' test)? */
static inline bool lc_pending_any(const lc_buffer *b) {
  return atomic_load_explicit(&b->busy, memory_order_acquire);
}

/* Let go of b's streams and events (b is being freed). */
void lc_pending_free(lc_buffer *b);

#endif
