/*
** buffer: a reference-counted block of memory of one kind. Views share
** their base's buffer; the memory goes when the last view does.
*/
#ifndef LUACUDA_BUFFER_H
#define LUACUDA_BUFFER_H

#include <stdatomic.h>
#include "backend.h"
#include "lua.h"

enum { LC_BUFFER_STREAMS = 4 };

/* What another part keeps of a buffer (pending.h: the work queued on its
** memory), behind this first member: how to let go of it when the buffer
** goes, so that the buffer knows nothing else of it. */
typedef struct lc_buffer_note {
  void (*free)(struct lc_buffer_note *note);
} lc_buffer_note;

typedef struct lc_buffer {
  atomic_int refs;
  lc_kind kind;
  void *ptr;
  /* the address kernels take: ptr, but for mapped memory with a device
  ** address of its own (write-combined, on CUDA: cuMemHostGetDevicePointer) */
  void *dev;
  size_t nbytes;
  const lc_backend *backend;
  int device;                   /* 0-based: the device current at allocation */
  /* memory owned elsewhere: called (once) instead of freeing ptr */
  void (*release)(void *ud);
  void *release_ud;
  /* host memory page-locked in place (luacuda.register, pinned, mapped):
  ** the registration's number, shifted left once, with bit 0 set when a
  ** mapped array is over it; 0 when not registered. Unregistered, at the
  ** latest, when the buffer goes. */
  atomic_uint_fast64_t lock;
  /* Stream-ordered memory (the backend's ordered_free): the streams that
  ** queued work on it, each held (stream_retain), the one used last last;
  ** its free waits for them and nothing else. alloc_only: the one stream
  ** is where it was allocated, nothing queued there since. more: used on
  ** more streams than fit, so the free waits for all work (defer). Under
  ** the spin lock `using`. */
  bool ordered;
  bool alloc_only, more;
  int nstreams;
  lc_stream *streams[LC_BUFFER_STREAMS];
  atomic_flag using;
  /* Host-addressable memory that queued work writes or reads (an async
  ** copy or fill on a stream, a launch): its record (pending.h, pend),
  ** made at the first such work, holds per stream an event recorded after
  ** that work, which a host access from Lua waits for. busy is the cheap test:
  ** false when the record holds nothing. Under the record's lock. */
  atomic_bool busy;
  /* memory owned elsewhere (lc_buffer_wrap: luacuda.mapped, a host
  ** program's wraps, DLPack imports), which other buffers may hold too;
  ** beside busy, which the same test reads */
  bool foreign;
  /* small host memory in the buffer's own allocation, after it (buffer.c):
  ** it goes with the buffer */
  bool inline_data;
  _Atomic(lc_buffer_note *) pend;
} lc_buffer;

/* Allocate nbytes of the given kind, in the order of stream s (NULL: the
** default stream) where the allocator is stream-ordered. Runs the Lua
** collector at the pace buffers' bytes grow (gcpace.h: it cannot see this
** memory), and retries once after a full collection when the allocation
** fails; then raises
** "luacuda.<fname>: out of ... memory". */
lc_buffer *lc_buffer_new(lua_State *L, lc_kind kind, size_t nbytes,
                         unsigned flags, lc_stream *s, const char *fname);

/* Work on b is being queued on s (not NULL): b's free will wait for it.
** A first use on another stream than the allocation's waits for the
** allocation (raises, naming fname, if the backend cannot order them). */
void lc_buffer_use(lua_State *L, lc_buffer *b, lc_stream *s, const char *fname);

/* A buffer over memory that something else owns; release(ud) is called
** when the last reference goes. Raises on allocation failure, after
** calling release(ud) so that the caller's reference is not lost. */
lc_buffer *lc_buffer_wrap(lua_State *L, lc_kind kind, void *ptr, size_t nbytes,
                          void (*release)(void *ud), void *ud, const char *fname);

void lc_buffer_retain(lc_buffer *b);
void lc_buffer_release(lc_buffer *b);

#endif
