/*
** copy: moving elements between arrays of any kinds and layouts, filling,
** and the copy methods. Everything is checked before the first byte moves,
** so a failed copy leaves the target as it was.
*/
#include "copy.h"

#include <string.h>

#include "args.h"
#include "record.h"
#include "host_copy.h"
#include "pending.h"
#include "stream.h"
#include "device.h"

static const lc_backend *backend_of(const lc_array *a) { return a->buf->backend; }

static void region_of(lc_region *r, const lc_array *a, const lc_layout *lay) {
  r->base = a->buf->ptr;
  r->kind = a->buf->kind;
  r->layout = lay;
}

/* Work on a's memory is about to be queued on s (NULL: done before the
** call returns, nothing to remember). */
static void use(lua_State *L, const lc_array *a, lc_stream *s, const char *fname) {
  if (s) lc_buffer_use(L, a->buf, s, fname);
}

static void release_buffer(void *ud) { lc_buffer_release(ud); }

/* A side on a device other than the current one, in a copy just queued on
** s (a stream of the current device): its memory is kept (a reference)
** until the work queued so far on the current device, the copy included,
** is done. Its own list of streams is left alone: its frees are ordered
** on its own device's streams, which s is not. */
static void keep_until_done(const lc_array *a, lc_stream *s) {
  if (s == NULL) return;
  lc_buffer_retain(a->buf);
  a->buf->backend->defer(release_buffer, a->buf);
}

/* That work is queued: host accesses to a's memory wait for it. */
static void queued(const lc_array *a, lc_stream *s, bool writes) {
  if (s) lc_pending_add(a->buf, s, writes);
}

/* Is a device memory of a device other than the current one? */
static bool remote(const lc_array *a) {
  return lc_array_kind(a) == LC_DEVICE && a->buf->device != backend_of(a)->current_device();
}

/* One element of another device's array (at byte offset off) read into or
** written from host, a copy between devices done before the call returns
** (host is the caller's): after the stream's work, and the devices'. */
static void elem_between_devices(lua_State *L, const lc_array *a, int64_t off, void *host,
                                 bool write, lc_stream *s, const char *fname) {
  const lc_backend *be = backend_of(a);
  char err[LC_ERRLEN];
  if (s && be->stream_synchronize(s, err)) lc_error(L, fname, "%s", err);
  lc_layout one = {.ndim = 0, .offset = off, .size = 1}, at = {.ndim = 0, .offset = 0, .size = 1};
  lc_region r = {a->buf->ptr, LC_DEVICE, &one}, h = {host, LC_HOST, &at};
  int here = be->current_device(), there = a->buf->device;
  int rc = write ? be->copy_peer(&r, there, &h, here, a->dtype->size, NULL, err)
                 : be->copy_peer(&h, here, &r, there, a->dtype->size, NULL, err);
  if (rc) lc_error(L, fname, "%s", err);
}

/* One element at byte offset off from the buffer start, any kind. With a
** stream, the read waits for that stream only. */
static void elem_read(lua_State *L, const lc_array *a, int64_t off, void *out,
                      lc_stream *s, const char *fname) {
  const lc_backend *be = backend_of(a);
  char err[LC_ERRLEN];
  char *p = (char *)a->buf->ptr + off;
  size_t n = (size_t)a->dtype->size;
  if (remote(a)) {
    elem_between_devices(L, a, off, out, false, s, fname);
    return;
  }
  if (s == NULL) {
    if (lc_kind_host_accessible(lc_array_kind(a))) {
      lc_pending_wait(L, a, false, fname);
      lc_sync_host(L, lc_array_kind(a), fname);
      memcpy(out, p, n);
    } else if (be->copy(out, LC_HOST, p, lc_array_kind(a), n, NULL, err)) {
      lc_error(L, fname, "%s", err);
    }
    return;
  }
  /* queued behind the stream's work, and waited for: out is the caller's */
  use(L, a, s, fname);
  if (be->copy(out, LC_HOST, p, lc_array_kind(a), n, s, err) ||
      be->stream_synchronize(s, err))
    lc_error(L, fname, "%s", err);
}

void lc_elem_push_at(lua_State *L, const lc_array *a, int64_t off, lc_stream *s,
                     const char *fname) {
  if (s == NULL && lc_kind_host_only(lc_array_kind(a))) {
    lc_pending_wait(L, a, false, fname);
    lc_elem_push(L, a->dtype, (char *)a->buf->ptr + off);
  } else {
    char tmp[16];
    elem_read(L, a, off, tmp, s, fname);
    lc_elem_push(L, a->dtype, tmp);
  }
}

void lc_elem_write(lua_State *L, const lc_array *a, int64_t off, const void *in,
                   lc_stream *s, const char *fname) {
  const lc_backend *be = backend_of(a);
  char err[LC_ERRLEN];
  char *p = (char *)a->buf->ptr + off;
  if (remote(a)) {
    elem_between_devices(L, a, off, (void *)in, true, s, fname);
    return;
  }
  if (s == NULL && lc_kind_host_accessible(lc_array_kind(a))) {
    lc_pending_wait(L, a, true, fname);
    lc_sync_host(L, lc_array_kind(a), fname);
    memcpy(p, in, (size_t)a->dtype->size);
    return;
  }
  /* a fill of the one element: the backend keeps the value, so a queued
  ** write does not read the caller's stack later */
  lc_layout one = {.ndim = 0, .offset = off, .size = 1};
  lc_region r = {a->buf->ptr, lc_array_kind(a), &one};
  use(L, a, s, fname);
  if (be->fill(&r, in, a->dtype->size, s, err)) lc_error(L, fname, "%s", err);
  queued(a, s, true);
}

/* The copy proper, on layouts already checked and squeezed. */
static void copy_views(lua_State *L, const lc_array *dst, const lc_layout *dl,
                       const lc_array *src, const lc_layout *sl, lc_stream *s,
                       const char *fname) {
  if (dl->size == 0) return;
  if (s == NULL) {     /* synchronous: after the work queued on either side */
    lc_pending_wait(L, dst, true, fname);
    lc_pending_wait(L, src, false, fname);
  }
  /* the same memory, through this buffer or another (alias.c) */
  if (lc_arrays_overlap(dst, dl, src, sl)) {
    if (lc_arrays_same_view(dst, dl, src, sl)) return;
    /* stage through a copy so no element is read after being overwritten */
    lc_array view = *src;
    view.lay = *sl;
    lc_array *tmp = lc_copy_to_new(L, &view, lc_array_kind(src), s, fname);
    lc_layout tl = tmp->lay;
    copy_views(L, dst, dl, tmp, &tl, s, fname);
    lua_pop(L, 1);
    return;
  }
  int64_t isz = dst->dtype->size;
  if (s == NULL && lc_kind_host_accessible(lc_array_kind(dst)) &&
      lc_kind_host_accessible(lc_array_kind(src))) {
    lc_sync_host(L, lc_array_kind(dst), fname);
    lc_sync_host(L, lc_array_kind(src), fname);
    lc_copy_strided_host(dst->buf->ptr, dl, src->buf->ptr, sl, isz);
    return;
  }
  lc_region rd, rs;
  region_of(&rd, dst, dl);
  region_of(&rs, src, sl);
  /* a device side decides which backend moves the data */
  const lc_backend *be = lc_array_kind(dst) == LC_DEVICE ? backend_of(dst) : backend_of(src);
  /* device memory of a device other than the current one: a peer copy */
  int here = be->current_device();
  int ddev = lc_array_kind(dst) == LC_DEVICE ? dst->buf->device : here;
  int sdev = lc_array_kind(src) == LC_DEVICE ? src->buf->device : here;
  bool peer = ddev != here || sdev != here;
  if (peer && be->copy_peer == NULL)
    lc_error(L, fname, "the %s array is on device %d, but device %d is current (the %s "
             "backend does not copy between devices)", ddev != here ? "destination" : "source",
             ddev != here ? ddev + 1 : sdev + 1, here + 1, be->name);
  char err[LC_ERRLEN];
  if (ddev == here) use(L, dst, s, fname);
  if (sdev == here) use(L, src, s, fname);
  int rc = peer ? be->copy_peer(&rd, ddev, &rs, sdev, isz, s, err)
                : be->copy_strided(&rd, &rs, isz, s, err);
  if (rc) lc_error(L, fname, "%s", err);
  if (ddev != here) keep_until_done(dst, s);
  if (sdev != here) keep_until_done(src, s);
  queued(dst, s, true);
  queued(src, s, false);
}

void lc_copy_array(lua_State *L, lc_array *dst, const lc_array *src,
                   lc_stream *s, const char *fname) {
  if (!lc_dtype_equal(dst->dtype, src->dtype))
    lc_error(L, fname, "dtype mismatch: cannot copy %s into %s (no implicit casting)",
             src->dtype->name, dst->dtype->name);
  if (!lc_layout_same_shape(&dst->lay, &src->lay)) {
    char ds[256], ss[256];
    lc_shape_format(ds, sizeof ds, dst->lay.ndim, dst->lay.shape);
    lc_shape_format(ss, sizeof ss, src->lay.ndim, src->lay.shape);
    lc_error(L, fname, "shape mismatch: cannot copy %s into %s", ss, ds);
  }
  lc_layout dl = dst->lay, sl = src->lay;
  char err[LC_ERRLEN];
  lc_layout_squeeze(&dl, -1, err);
  lc_layout_squeeze(&sl, -1, err);
  copy_views(L, dst, &dl, src, &sl, s, fname);
}

lc_array *lc_copy_to_new(lua_State *L, const lc_array *a, lc_kind kind,
                         lc_stream *s, const char *fname) {
  lc_array *c = lc_array_empty(L, kind, a->dtype, a->lay.ndim, a->lay.shape, 'C', s, fname);
  lc_copy_array(L, c, a, s, fname);
  return c;
}

void lc_fill_view(lua_State *L, const lc_array *a, const lc_layout *lay, const void *value,
                  lc_stream *s, const char *fname) {
  lc_check_current_device(L, a, "target", fname);
  if (s == NULL) lc_pending_wait(L, a, true, fname);
  if (s == NULL && lc_kind_host_accessible(lc_array_kind(a))) {
    lc_sync_host(L, lc_array_kind(a), fname);
    lc_fill_host(a->buf->ptr, lay, value, a->dtype->size);
    return;
  }
  lc_region r;
  region_of(&r, a, lay);
  char err[LC_ERRLEN];
  use(L, a, s, fname);
  if (backend_of(a)->fill(&r, value, a->dtype->size, s, err)) lc_error(L, fname, "%s", err);
  queued(a, s, true);
}

void lc_fill_array(lua_State *L, lc_array *dst, int vidx, lc_stream *s,
                   const char *fname) {
  char small[16];
  int top = lua_gettop(L);
  vidx = lua_absindex(L, vidx);
  void *value = lc_elem_room(L, dst->dtype, small, sizeof small);
  lc_elem_check(L, vidx, dst->dtype, value, fname);
  lc_fill_view(L, dst, &dst->lay, value, s, fname);
  lua_settop(L, top);
}

void lc_fill_raw(lua_State *L, const lc_array *dst, const void *value, lc_stream *s,
                 const char *fname) {
  lc_fill_view(L, dst, &dst->lay, value, s, fname);
}

/* ---- methods ---------------------------------------------------------- */

/*** @module luacuda */

/*** @type Array */

/***
Copies the array to host memory: into `ary` when given, else into a new
host array.
@function Array:copy_to_host
@tparam[opt] Array ary a host-accessible array (host, pinned, mapped or
managed) of the same shape and dtype
@tparam[opt] Stream stream queue the copy on it (then synchronize before
reading `ary`)
@treturn Array `ary`, or the new host array
@raise `luacuda.copy_to_host: the target must be host memory, got a device array`;
`dtype mismatch: cannot copy int64 into float64 (no implicit casting)`; shapes that differ
@usage local d = luacuda.to_device({1, 2, 3})
local h = d:copy_to_host()
local p = luacuda.pinned_array({3}, "int64")
local s = luacuda.stream()
d:copy_to_host(p, s)
s:synchronize()
*/

/* a:copy_to_host([ary] [, stream]) */
static int array_copy_to_host(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "copy_to_host");
  if (lc_array_test(L, 2)) {
    lc_array *t = lc_array_check(L, 2, "copy_to_host");
    lc_stream *s = lc_opt_stream(L, 3, "copy_to_host");
    if (!lc_kind_host_accessible(lc_array_kind(t)))
      lc_error(L, "copy_to_host", "the target must be host memory, got a %s array",
               lc_kind_names[lc_array_kind(t)]);
    lc_copy_array(L, t, a, s, "copy_to_host");
    lua_settop(L, 2);
    return 1;
  }
  lc_stream *s = lc_opt_stream(L, lua_isnil(L, 2) ? 3 : 2, "copy_to_host");
  lc_copy_to_new(L, a, LC_HOST, s, "copy_to_host");
  return 1;
}

/***
A C-contiguous copy in the same kind of memory.
@function Array:copy
@tparam[opt] Stream stream queue the copy on it
@treturn Array the copy
@raise `luacuda.copy: <cause>` when `a` is not an open array or memory runs out
@usage local a = luacuda.arange(6):reshape(2, 3)
local b = a.T:copy()
assert(b:is_c_contiguous())
*/

/* a:copy([stream]): a C-contiguous copy in the same kind of memory */
static int array_copy(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "copy");
  lc_stream *s = lc_opt_stream(L, 2, "copy");
  lc_copy_to_new(L, a, lc_array_kind(a), s, "copy");
  return 1;
}

/***
Sets every element to `value`.
@function Array:fill
@tparam number|boolean|table value the value (a table of fields for a record array)
@tparam[opt] Stream stream queue the fill on it
@treturn Array the array itself
@raise `luacuda.fill: <cause>` for a value the dtype cannot hold
@usage local d = luacuda.device_array({4}, "int32"):fill(7)
*/

/* a:fill(value [, stream]) */
static int array_fill(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "fill");
  lc_stream *s = lc_opt_stream(L, 3, "fill");
  lc_fill_array(L, a, 2, s, "fill");
  lua_settop(L, 1);
  return 1;
}

static const luaL_Reg methods[] = {
  {"copy_to_host", array_copy_to_host},
  {"copy", array_copy},
  {"fill", array_fill},
  {NULL, NULL}
};

void lc_copy_open(lua_State *L) {
  lc_array_add_methods(L, methods);
}
