/*
** capi: the C API of luacuda.h for host programs: wrapping the host's
** memory as arrays, reading arrays from C, and the stream scripts use.
** (Opening the module is preload.c; DLPack is dlpack.c.)
*/
#include <stdlib.h>
#include <string.h>

#include "capi.h"
#include "args.h"
#include "luacuda.h"
#include "buffer.h"
#include "pending.h"
#include "stream.h"

_Static_assert((int)LUACUDA_HOST == LC_HOST && (int)LUACUDA_PINNED == LC_PINNED &&
               (int)LUACUDA_MAPPED == LC_MAPPED && (int)LUACUDA_MANAGED == LC_MANAGED &&
               (int)LUACUDA_DEVICE == LC_DEVICE, "luacuda_kind follows lc_kind");

void lc_capi_ensure_open(lua_State *L) {
  if (luaL_getmetatable(L, LC_ARRAY_MT) == LUA_TNIL) {
    luaL_requiref(L, "luacuda", luaopen_luacuda, 0);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* The host's release callback, which a failed wrap must not call: the
** buffer owns this holder, and calls through it only once armed. */
typedef struct host_release {
  void (*fn)(void *ud);
  void *ud;
  bool armed;
} host_release;

static void call_host_release(void *p) {
  host_release *h = p;
  if (h->armed && h->fn) h->fn(h->ud);
  free(h);
}

void lc_wrap_layout(lua_State *L, const void *data, lc_kind kind, const lc_dtype *dt,
                    int ndim, const int64_t *shape, const int64_t *strides, lc_layout *out,
                    int64_t *span, const char *fname) {
  if ((int)kind < 0 || kind >= LC_NKINDS) lc_error(L, fname, "unknown memory kind %d", (int)kind);
  if (ndim < 0 || ndim > LC_MAXDIM)
    lc_error(L, fname, "ndim must be 0..%d, got %d", LC_MAXDIM, ndim);
  if (ndim > 0 && shape == NULL) lc_error(L, fname, "shape is NULL");
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0)
      lc_error(L, fname, "shape entry %d is negative (%lld)", i + 1, (long long)shape[i]);
  char err[LC_ERRLEN];
  int rc = strides ? lc_layout_strided(out, ndim, shape, ndim, strides, dt->size, span, err)
                   : lc_layout_contiguous(out, ndim, shape, dt->size, 'C', err);
  if (rc) lc_error(L, fname, "%s", err);
  if (!strides) *span = out->size * dt->size;
  if (data == NULL && out->size > 0) lc_error(L, fname, "data is NULL");
}

void lc_wrap_attach(lua_State *L, lc_array *a, void *data, lc_kind kind, int64_t span,
                    void (*release)(void *ud), void *ud, const char *fname) {
  host_release *h = malloc(sizeof *h);
  if (h == NULL) lc_error(L, fname, "out of host memory");
  h->fn = release;
  h->ud = ud;
  h->armed = false;
  /* the buffer starts at the lowest element the view touches */
  void *base = data ? (char *)data - a->lay.offset : NULL;
  a->buf = lc_buffer_wrap(L, kind, base, (size_t)span, call_host_release, h, fname);
  h->armed = true;
}

/* Push an array over memory something else owns: data is element 0,
** strides in bytes (NULL: C order). release(ud) is called once when the
** last reference goes; never when this raises (the memory stays the
** caller's then). */
static lc_array *wrap_memory(lua_State *L, void *data, lc_kind kind, const lc_dtype *dt,
                         int ndim, const int64_t *shape, const int64_t *strides,
                         void (*release)(void *ud), void *ud, const char *fname) {
  lc_layout lay;
  int64_t span;
  lc_wrap_layout(L, data, kind, dt, ndim, shape, strides, &lay, &span, fname);
  lc_capi_ensure_open(L);
  lc_array *a = lc_array_push_closed(L, dt);
  a->lay = lay;
  lc_wrap_attach(L, a, data, kind, span, release, ud, fname);
  return a;
}

LUACUDA_API void luacuda_wrap(lua_State *L, void *data, luacuda_kind kind,
                              const char *dtype, int ndim, const int64_t *shape,
                              const int64_t *strides, void (*release)(void *ud),
                              void *ud) {
  const lc_dtype *dt = dtype ? lc_dtype_lookup(dtype) : NULL;
  if (dt == NULL) lc_error(L, "wrap", "unknown dtype '%s'", dtype ? dtype : "(null)");
  wrap_memory(L, data, (lc_kind)kind, dt, ndim, shape, strides, release, ud, "wrap");
}

static void *array_info(lc_array *a, luacuda_arrayinfo *info) {
  if (info) {
    info->data = lc_array_data(a);
    info->kind = (luacuda_kind)lc_array_kind(a);
    info->dtype = a->dtype->rec ? "record" : a->dtype->name;
    info->itemsize = a->dtype->size;
    info->ndim = a->lay.ndim;
    info->shape = a->lay.shape;
    info->strides = a->lay.strides;
    info->size = a->lay.size;
    info->device = a->buf->device + 1;
  }
  return lc_array_data(a);
}

LUACUDA_API void *luacuda_toarray(lua_State *L, int idx, luacuda_arrayinfo *info) {
  lc_array *a = lc_array_test(L, idx);
  return a && lc_array_is_open(a) ? array_info(a, info) : NULL;
}

/* The open array at arg, or an argument error. */
static lc_array *open_array_at(lua_State *L, int arg) {
  lc_array *a = lc_array_test(L, arg);
  if (a == NULL) luaL_typeerror(L, arg, LC_ARRAY_MT);
  if (!lc_array_is_open(a)) luaL_argerror(L, arg, "closed " LC_ARRAY_MT);
  return a;
}

LUACUDA_API void *luacuda_checkarray(lua_State *L, int arg, luacuda_arrayinfo *info) {
  return array_info(open_array_at(L, arg), info);
}

LUACUDA_API void luacuda_waitarray(lua_State *L, int arg, int writing) {
  lc_array *a = open_array_at(L, arg);
  lc_pending_wait(L, a, writing != 0, "waitarray");
}

/* The stream of a handle (NULL: the default stream), held: release it. */
static lc_stream *hold_stream(lua_State *L, void *native, const char *fname) {
  lc_capi_ensure_open(L);
  const lc_backend *be = lc_backend_get(NULL);
  lc_stream *s = NULL;
  char err[LC_ERRLEN];
  if (native == NULL) {
    s = be->default_stream();
    be->stream_retain(s);
  } else if (be->stream_wrap(native, &s, err)) {
    lc_error(L, fname, "%s", err);
  }
  return s;
}

static int use_buffer(lua_State *L) {
  lc_buffer_use(L, lua_touserdata(L, 1), lua_touserdata(L, 2), "usearray");
  return 0;
}

LUACUDA_API void luacuda_usearray(lua_State *L, int arg, void *stream) {
  lc_array *a = open_array_at(L, arg);
  lc_stream *s = hold_stream(L, stream, "usearray");
  lua_pushcfunction(L, use_buffer);     /* a raise lets go of s first */
  lua_pushlightuserdata(L, a->buf);
  lua_pushlightuserdata(L, s);
  int rc = lua_pcall(L, 2, 0, 0);
  a->buf->backend->stream_release(s);
  if (rc != LUA_OK) lua_error(L);
}

LUACUDA_API void luacuda_queuedarray(lua_State *L, int arg, void *stream, int writing) {
  lc_array *a = open_array_at(L, arg);
  lc_stream *s = hold_stream(L, stream, "queuedarray");
  lc_pending_add(a->buf, s, writing != 0);
  a->buf->backend->stream_release(s);
}

LUACUDA_API void luacuda_queuehost(lua_State *L, void *stream, void (*fn)(void *ud), void *ud) {
  lc_stream *s = hold_stream(L, stream, "queuehost");
  const lc_backend *be = lc_backend_get(NULL);
  char err[LC_ERRLEN];
  int rc = be->host_fn(s, fn, ud, err);
  be->stream_release(s);
  if (rc) lc_error(L, "queuehost", "%s", err);
}

LUACUDA_API void luacuda_setstream(lua_State *L, void *stream) {
  lc_capi_ensure_open(L);
  lc_set_host_stream(L, stream, "setstream");
}

LUACUDA_API void *luacuda_getstream(lua_State *L) {
  lc_capi_ensure_open(L);      /* raises when no backend can be used */
  return lc_host_stream_native(L);
}

LUACUDA_API void *luacuda_tostream(lua_State *L, int arg) {
  void *s = lc_stream_native_at(L, arg);
  if (s) return s;
  if (luaL_testudata(L, arg, "luacuda.stream")) luaL_argerror(L, arg, "closed luacuda.stream");
  luaL_typeerror(L, arg, "luacuda.stream");
  return NULL;
}
