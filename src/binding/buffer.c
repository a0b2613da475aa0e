/*
** buffer: allocation with garbage-collector accounting, and reference
** counts (atomic, since one buffer may be reached from several states).
*/
#include "buffer.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "aux.h"

static int host_alloc(size_t nbytes, void **ptr) {
  /* 64-byte aligned so vector loads never straddle; aligned_alloc wants a
  ** size that is a multiple of the alignment */
  size_t n = nbytes ? (nbytes + 63) & ~(size_t)63 : 64;
  if (n < nbytes) return LC_ENOMEM;
  *ptr = aligned_alloc(64, n);
  return *ptr ? LC_OK : LC_ENOMEM;
}

static int alloc_once(const lc_backend *be, lc_kind kind, size_t nbytes,
                      unsigned flags, void **ptr, char *err) {
  if (kind == LC_HOST) {
    int rc = host_alloc(nbytes, ptr);
    if (rc) snprintf(err, LC_ERRLEN, "out of host memory allocating %zu bytes", nbytes);
    return rc;
  }
  /* checked once here for every backend */
  if ((flags && !lc_kind_page_locked(kind)) ||
      (flags & ~(unsigned)(LC_ALLOC_PORTABLE | LC_ALLOC_WRITECOMBINED))) {
    snprintf(err, LC_ERRLEN, "invalid flags %#x for %s memory", flags, lc_kind_names[kind]);
    return LC_EFAIL;
  }
  return be->mem_alloc(kind, nbytes, flags, ptr, err);
}

lc_buffer *lc_buffer_new(lua_State *L, lc_kind kind, size_t nbytes,
                         unsigned flags, const char *fname) {
  const lc_backend *be = lc_backend_get(NULL);
  char err[LC_ERRLEN];
  lc_buffer *b = malloc(sizeof *b);
  if (b == NULL) lc_error(L, fname, "out of host memory");
  /* the collector sees only the small userdata: tell it about the rest, so
  ** dropped arrays are finalized at the pace memory is used */
  size_t kb = nbytes >> 10;
  if (kb > 0) lua_gc(L, LUA_GCSTEP, kb > INT_MAX ? INT_MAX : (int)kb);
  void *ptr = NULL;
  int rc = alloc_once(be, kind, nbytes, flags, &ptr, err);
  if (rc == LC_ENOMEM) {
    /* collect, and let the frees held back behind queued work happen */
    lua_gc(L, LUA_GCCOLLECT, 0);
    be->synchronize(NULL);
    rc = alloc_once(be, kind, nbytes, flags, &ptr, err);
  }
  /* the address kernels take: write-combined memory's differs from ptr */
  void *dev = ptr;
  if (rc == LC_OK && kind == LC_MAPPED) {
    rc = be->host_device_pointer(ptr, &dev, err);
    if (rc != LC_OK) be->mem_free(kind, ptr, nbytes);
  }
  if (rc != LC_OK) {
    free(b);
    lc_error(L, fname, "%s", err);
  }
  atomic_init(&b->refs, 1);
  b->kind = kind;
  b->ptr = ptr;
  b->dev = dev;
  b->nbytes = nbytes;
  b->backend = be;
  b->device = be->current_device();
  b->release = NULL;
  b->release_ud = NULL;
  atomic_init(&b->lock, 0);
  return b;
}

lc_buffer *lc_buffer_wrap(lua_State *L, lc_kind kind, void *ptr, size_t nbytes,
                          void (*release)(void *ud), void *ud, const char *fname) {
  lc_buffer *b = malloc(sizeof *b);
  if (b == NULL) {
    release(ud);
    lc_error(L, fname, "out of host memory");
  }
  atomic_init(&b->refs, 1);
  b->kind = kind;
  b->ptr = ptr;
  b->dev = ptr;
  b->nbytes = nbytes;
  b->backend = lc_backend_get(NULL);
  /* mapped memory the backend knows may have a device address of its own
  ** (write-combined); other memory is taken at its word */
  char err[LC_ERRLEN];
  if (kind == LC_MAPPED && b->backend->host_device_pointer(ptr, &b->dev, err) != LC_OK)
    b->dev = ptr;
  b->device = b->backend->current_device();
  b->release = release;
  b->release_ud = ud;
  atomic_init(&b->lock, 0);
  return b;
}

void lc_buffer_retain(lc_buffer *b) {
  atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}

static void buffer_free(void *ud) {
  lc_buffer *b = ud;
  if (atomic_load(&b->lock)) {    /* registered and never deregistered */
    char err[LC_ERRLEN];
    b->backend->host_unregister(b->ptr, err);
  }
  if (b->release) b->release(b->release_ud);
  else if (b->kind == LC_HOST) free(b->ptr);
  else b->backend->mem_free(b->kind, b->ptr, b->nbytes);
  free(b);
}

/* The memory goes once the work queued so far, which may still read or
** write it, is done. */
void lc_buffer_release(lc_buffer *b) {
  if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1) return;
  const lc_backend *be = b->backend;
  /* a stream-ordered free waits by itself, and frees at once */
  if (b->release == NULL && atomic_load(&b->lock) == 0 && be->ordered_free &&
      be->ordered_free(b->kind))
    buffer_free(b);
  else
    be->defer(buffer_free, b);
}
