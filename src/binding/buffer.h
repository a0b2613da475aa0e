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
} lc_buffer;

/* Allocate nbytes of the given kind. Steps the Lua collector in proportion
** to nbytes (it cannot see this memory), and retries once after a full
** collection when the allocation fails; then raises
** "luacuda.<fname>: out of ... memory". */
lc_buffer *lc_buffer_new(lua_State *L, lc_kind kind, size_t nbytes,
                         unsigned flags, const char *fname);

/* A buffer over memory that something else owns; release(ud) is called
** when the last reference goes. Raises on allocation failure, after
** calling release(ud) so that the caller's reference is not lost. */
lc_buffer *lc_buffer_wrap(lua_State *L, lc_kind kind, void *ptr, size_t nbytes,
                          void (*release)(void *ud), void *ud, const char *fname);

void lc_buffer_retain(lc_buffer *b);
void lc_buffer_release(lc_buffer *b);

#endif
