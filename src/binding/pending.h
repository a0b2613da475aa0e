/*
** pending: queued work that host code must wait for. An async copy or fill
** on a stream may write host-addressable memory (or read it) after the call
** has returned; the buffer's record remembers that work (buffer.h,
** `pend`), and a host access from Lua (a[i], a[i] = v, totable, tostring,
** a synchronous copy) waits for it first. LUACUDA_STRICT_ASYNC=1 makes an
** access that would have to wait an error instead, to find missing
** synchronisations.
**
** The waiting follows the memory, not the buffer object: luacuda.mapped(h),
** a host program's wraps (luacuda_wrap) and DLPack imports are buffers of
** their own over memory that another buffer may hold too, and an access
** through one waits for the work queued through any other over the bytes
** it touches.
*/
#ifndef LUACUDA_PENDING_H
#define LUACUDA_PENDING_H

#include "array.h"

/* Work that reads (writes false) or writes b's memory was just queued on
** s. Only host-addressable memory is remembered. Never raises: where the
** work cannot be remembered, this waits for it. */
void lc_pending_add(lc_buffer *b, lc_stream *s, bool writes);

/* How many records hold work now, process-wide: of every buffer, and of
** foreign buffers (buffer.h) only. Read by lc_pending_any. */
extern atomic_int lc_pending_held, lc_pending_held_foreign;

/* Must a host access to b's memory look for queued work (the fast paths'
** test)? When b's own record holds work, or another buffer's that may
** cover the same memory does: memory a foreign buffer holds may be any
** other buffer's, while two allocations never share a byte, so an
** allocation's access looks only while a foreign buffer's record holds
** work. With nothing queued anywhere, two loads. */
static inline bool lc_pending_any(const lc_buffer *b) {
  return atomic_load_explicit(&b->busy, memory_order_acquire) ||
         atomic_load_explicit(&lc_pending_held_foreign, memory_order_acquire) != 0 ||
         (b->foreign && atomic_load_explicit(&lc_pending_held, memory_order_acquire) != 0);
}

/* Before the host reads (writing false) or writes a's memory: wait for the
** remembered work that conflicts with it (a read waits for writers only),
** through a's buffer or any other over the bytes a's view spans. With
** LUACUDA_STRICT_ASYNC=1, such work not done yet is an error naming
** fname, the array and the stream. Runs no Lua code; a raise leaves
** everything as it was. */
void lc_pending_wait_slow(lua_State *L, const lc_array *a, bool writing, const char *fname);
static inline void lc_pending_wait(lua_State *L, const lc_array *a, bool writing,
                                   const char *fname) {
  if (lc_pending_any(a->buf)) lc_pending_wait_slow(L, a, writing, fname);
}

#endif
