/*
** buffer: allocation with garbage-collector accounting, and reference
** counts (atomic, since one buffer may be reached from several states).
*/
#include "buffer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "gcpace.h"
#include "hostcache.h"

static int host_alloc(size_t nbytes, void **ptr) {
  *ptr = lc_hostcache_alloc(nbytes);     /* 64-byte aligned */
  return *ptr ? LC_OK : LC_ENOMEM;
}

static int alloc_once(const lc_backend *be, lc_kind kind, size_t nbytes,
                      unsigned flags, lc_stream *s, void **ptr, char *err) {
  if (kind == LC_HOST) {
    int rc = host_alloc(nbytes, ptr);
    if (rc) lc_errf(err, "out of host memory allocating %zu bytes", nbytes);
    return rc;
  }
  /* checked once here for every backend */
  if ((flags && !lc_kind_page_locked(kind)) ||
      (flags & ~(unsigned)(LC_ALLOC_PORTABLE | LC_ALLOC_WRITECOMBINED))) {
    return lc_fail(err, LC_EFAIL, "invalid flags %#x for %s memory", flags, lc_kind_names[kind]);
  }
  return be->mem_alloc(kind, nbytes, flags, s, ptr, err);
}

/* The buffer goes: so does the record of work queued on it (pending.h). */
static void let_go_note(lc_buffer *b) {
  lc_buffer_note *note = atomic_exchange_explicit(&b->pend, NULL, memory_order_acq_rel);
  if (note) note->free(note);
}

/* No streams remembered: frees wait for all work (defer). */
static void untracked(lc_buffer *b) {
  b->ordered = b->alloc_only = b->more = false;
  b->nstreams = 0;
  atomic_flag_clear(&b->using);
  atomic_init(&b->busy, false);
  atomic_init(&b->pend, NULL);
}

/* Where a small host block starts in its buffer's allocation: 64-byte
** aligned, as lc_hostcache_alloc's are, after the buffer. */
#define INLINE_EXTRA 64
static void *inline_start(lc_buffer *b) {
  return (void *)(((uintptr_t)(b + 1) + INLINE_EXTRA - 1) & ~(uintptr_t)(INLINE_EXTRA - 1));
}

lc_buffer *lc_buffer_new(lua_State *L, lc_kind kind, size_t nbytes,
                         unsigned flags, lc_stream *s, const char *fname) {
  const lc_backend *be = lc_backend_get(NULL);
  char err[LC_ERRLEN];
  /* a small host array's memory comes with its buffer: one malloc and
  ** one free instead of two, for arrays made and dropped by the thousand
  ** (a + b on 16 elements); with their own blocks under a sanitizer or
  ** valgrind (lc_hostcache_small), whose checks of a read past an array
  ** need its block to end where the array does */
  bool inline_data = kind == LC_HOST && flags == 0 && lc_hostcache_small(nbytes);
  lc_buffer *b = malloc(sizeof *b + (inline_data ? INLINE_EXTRA + nbytes : 0));
  if (b == NULL) lc_error(L, fname, "out of host memory");
  /* the collector sees only the small userdata: dropped arrays are
  ** finalized at the pace their memory is used (gcpace.c) */
  lc_gcpace_before(L, nbytes);
  void *ptr = NULL;
  int rc = inline_data ? (ptr = inline_start(b), LC_OK)
                       : alloc_once(be, kind, nbytes, flags, s, &ptr, err);
  if (rc == LC_ENOMEM) {
    /* collect, and let the frees held back behind queued work happen */
    lua_gc(L, LUA_GCCOLLECT, 0);
    be->synchronize(NULL);
    rc = alloc_once(be, kind, nbytes, flags, s, &ptr, err);
  }
  /* the address kernels take: write-combined memory's differs from ptr */
  void *dev = ptr;
  if (rc == LC_OK && kind == LC_MAPPED) {
    rc = be->host_device_pointer(ptr, &dev, err);
    if (rc != LC_OK) be->mem_free(kind, ptr, nbytes, be->current_device());
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
  b->foreign = false;
  b->inline_data = inline_data;
  untracked(b);
  lc_gcpace_added(nbytes);
  if (be->ordered_free && be->ordered_free(kind)) {
    /* the allocation's stream holds the free back until another is used */
    b->ordered = b->alloc_only = true;
    b->nstreams = 1;
    b->streams[0] = s ? s : be->default_stream();
    be->stream_retain(b->streams[0]);
  }
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
  b->foreign = true;
  b->inline_data = false;
  untracked(b);
  return b;
}

/* lc_buffer_use's change of b's streams, entered holding b's spin lock */
static __attribute__((noinline)) void use_anew(lua_State *L, lc_buffer *b, lc_stream *s,
                                               const char *fname);

/* The common case (as before: ordered memory used again on its last stream)
** sets up no frame for the change's error buffer. */
void lc_buffer_use(lua_State *L, lc_buffer *b, lc_stream *s, const char *fname) {
  if (!b->ordered) return;
  while (atomic_flag_test_and_set_explicit(&b->using, memory_order_acquire)) {}
  int n = b->nstreams;
  if (b->more || (n > 0 && b->streams[n - 1] == s && !b->alloc_only)) {   /* as before */
    atomic_flag_clear_explicit(&b->using, memory_order_release);
    return;
  }
  use_anew(L, b, s, fname);
}

static void use_anew(lua_State *L, lc_buffer *b, lc_stream *s, const char *fname) {
  const lc_backend *be = b->backend;
  int n = b->nstreams;
  lc_stream *alloc = NULL;       /* the allocation's stream, let go of below */
  if (b->alloc_only) {
    /* the allocation is the one thing queued on it so far: s follows it
    ** (or is made to), and then the free need wait for s only */
    b->alloc_only = false;
    if (b->streams[0] != s) {
      alloc = b->streams[0];
      b->nstreams = n = 0;
    }
  }
  int i = 0;
  while (i < n && b->streams[i] != s) i++;
  if (i < n) {                                   /* used again: now the last */
    for (; i < n - 1; i++) b->streams[i] = b->streams[i + 1];
    b->streams[n - 1] = s;
  } else if (n < LC_BUFFER_STREAMS) {
    be->stream_retain(s);
    b->streams[b->nstreams++] = s;
  } else {                                       /* too many: wait for all work */
    b->more = true;
  }
  atomic_flag_clear_explicit(&b->using, memory_order_release);
  char err[LC_ERRLEN];
  int rc = LC_OK;
  if (alloc && be->stream_follows && !be->stream_follows(s, alloc))
    rc = be->stream_order(alloc, s, err);
  if (alloc) be->stream_release(alloc);
  if (rc != LC_OK) lc_error(L, fname, "%s", err);
}

void lc_buffer_retain(lc_buffer *b) {
  atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}

static void let_go_streams(lc_buffer *b) {
  for (int i = 0; i < b->nstreams; i++) b->backend->stream_release(b->streams[i]);
  b->nstreams = 0;
}

static void buffer_free(void *ud) {
  lc_buffer *b = ud;
  if (atomic_load(&b->lock)) {    /* registered and never deregistered */
    char err[LC_ERRLEN];
    b->backend->host_unregister(b->ptr, err);
  }
  const lc_backend *be = b->backend;
  if (b->release) {
    b->release(b->release_ud);
  } else if (b->inline_data) {
    /* freed with b below */
  } else if (b->kind == LC_HOST) {
    lc_hostcache_free(b->ptr, b->nbytes);
  } else if (b->ordered) {          /* all work is done: on its device's default stream */
    lc_stream *d = be->default_stream();
    be->free_after(b->kind, b->ptr, b->nbytes, b->device, &d, 1);
  } else {
    be->mem_free(b->kind, b->ptr, b->nbytes, b->device);
  }
  let_go_streams(b);
  let_go_note(b);
  free(b);
}

/* The memory goes once the work queued so far, which may still read or
** write it, is done: stream-ordered memory once the streams that used it
** are done, without waiting for others. */
void lc_buffer_release(lc_buffer *b) {
  if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1) return;
  const lc_backend *be = b->backend;
  if (b->release == NULL) lc_gcpace_dropped(b->nbytes);
  if (b->ordered && !b->more && b->nstreams > 0 && b->release == NULL &&
      atomic_load(&b->lock) == 0) {
    be->free_after(b->kind, b->ptr, b->nbytes, b->device, b->streams, b->nstreams);
    let_go_streams(b);
    let_go_note(b);
    free(b);
  } else {
    be->defer(buffer_free, b);
  }
}
