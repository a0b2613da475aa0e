/*
** create: the constructors: host arrays (empty, zeros, ones, full, arange)
** and device arrays (device_array, device_array_like, to_device).
*/
#include "array.h"

#include <string.h>

#include "gate.h"
#include "aux.h"
#include "record.h"
#include "host_copy.h"

#define F64 (&lc_dtypes[LC_FLOAT64])

/* Push the field of the options table at idx (nil when there is none). */
static int opt_field(lua_State *L, int idx, bool have, const char *key) {
  if (!have) {
    lua_pushnil(L);
    return LUA_TNIL;
  }
  return lc_opt_get(L, idx, key);
}

/* ---- host ------------------------------------------------------------- */

typedef enum { NEW_EMPTY, NEW_ZEROS, NEW_ONES } new_fill;

/* empty/zeros/ones(shape [, dtype] [, order]); upvalues: name, fill */
static int l_new_host(lua_State *L) {
  const char *fname = lua_tostring(L, lc_upvalueindex(1));
  new_fill fill = (new_fill)lua_tointeger(L, lc_upvalueindex(2));
  int64_t shape[LC_MAXDIM];
  int nd = lc_check_dims(L, 1, false, false, shape, "shape", fname);
  const lc_dtype *dt = lc_dtype_opt(L, 2, F64, fname);
  char order = lc_check_order(L, 3, fname);
  lc_array *a = lc_array_empty(L, LC_HOST, dt, nd, shape, order, NULL, fname);
  if (fill == NEW_ZEROS) {
    memset(a->buf->ptr, 0, a->buf->nbytes);
  } else if (fill == NEW_ONES) {
    if (dt->rec) lc_error(L, fname, "a record dtype has no one (use full or zeros)");
    if (dt->code == LC_BOOL) lua_pushboolean(L, 1);
    else lua_pushinteger(L, 1);
    lc_fill_array(L, a, lua_gettop(L), NULL, fname);
    lua_pop(L, 1);
  }
  return 1;
}

/* full(shape, value [, dtype] [, order]): dtype from the value if absent */
static int l_full(lua_State *L) {
  int64_t shape[LC_MAXDIM];
  int nd = lc_check_dims(L, 1, false, false, shape, "shape", "full");
  const lc_dtype *dt = lc_dtype_opt(L, 3, NULL, "full");
  char order = lc_check_order(L, 4, "full");
  if (dt == NULL) {
    int t = lua_type(L, 2);
    if (t == LUA_TBOOLEAN) dt = &lc_dtypes[LC_BOOL];
    else if (lua_isinteger(L, 2)) dt = &lc_dtypes[LC_INT64];
    else if (t == LUA_TNUMBER) dt = F64;
    else lc_error(L, "full", "value must be a number or a boolean, got %s", luaL_typename(L, 2));
  }
  char small[16];
  void *value = lc_elem_room(L, dt, small, sizeof small);
  lc_elem_check(L, 2, dt, value, "full");       /* before allocating */
  lc_array *a = lc_array_empty(L, LC_HOST, dt, nd, shape, order, NULL, "full");
  lc_fill_host(a->buf->ptr, &a->lay, value, dt->size);
  return 1;
}

/* arange(n [, dtype]): 0, 1, ..., n-1 */
static int l_arange(lua_State *L) {
  int64_t n = lc_check_integer(L, 1, "n", 0, "arange");
  if (n < 0) lc_error(L, "arange", "n must not be negative, got %lld", (long long)n);
  const lc_dtype *dt = lc_dtype_opt(L, 2, &lc_dtypes[LC_INT64], "arange");
  if (dt->code == LC_BOOL || dt->rec)
    lc_error(L, "arange", "dtype %s has no range of values", dt->name);
  char tmp[16];
  if (n > 0) {        /* the largest value must fit the dtype */
    lua_pushinteger(L, n - 1);
    lc_elem_check(L, -1, dt, tmp, "arange");
    lua_pop(L, 1);
  }
  int64_t shape[1] = {n};
  lc_array *a = lc_array_empty(L, LC_HOST, dt, 1, shape, 'C', NULL, "arange");
  char *p = a->buf->ptr;
  for (int64_t i = 0; i < n; i++, p += dt->size)   /* range checked above */
    lc_dtype_store_int(dt, p, i);
  return 1;
}

/* ---- device ----------------------------------------------------------- */

/* Push a new array of kind with the given layout, allocated with flags. */
static lc_array *alloc_flags(lua_State *L, lc_kind kind, unsigned flags, const lc_dtype *dt,
                             const lc_layout *lay, int64_t nbytes, lc_stream *s,
                             const char *fname) {
  lc_array *a = lc_array_push_closed(L, dt);
  a->lay = *lay;
  a->buf = lc_buffer_new(L, kind, (size_t)nbytes, flags, s, fname);
  lc_array_note_origin(L, a);
  return a;
}

lc_array *lc_array_new(lua_State *L, lc_kind kind, unsigned flags,
                       const char *const *known, const char *fname) {
  int64_t shape[LC_MAXDIM];
  lc_layout lay;
  char err[LC_ERRLEN];
  int nd = lc_check_dims(L, 1, false, false, shape, "shape", fname);
  const lc_dtype *dt = lc_dtype_opt(L, 2, F64, fname);
  char order;
  lc_stream *s = NULL;
  int top = lua_gettop(L);
  if (lua_type(L, 3) == LUA_TSTRING) {
    order = lc_check_order(L, 3, fname);
    lua_pushnil(L);
  } else {
    bool have = lc_check_opts(L, 3, known, fname);
    opt_field(L, 3, have, "order");
    order = lc_check_order(L, -1, fname);
    opt_field(L, 3, have, "stream");          /* nil unless known; kept on the stack */
    s = lc_opt_stream(L, -1, fname);
    opt_field(L, 3, have, "strides");
  }
  if (lua_isnil(L, -1)) {
    if (lc_layout_contiguous(&lay, nd, shape, dt->size, order, err))
      lc_error(L, fname, "%s", err);
    lc_array *a = alloc_flags(L, kind, flags, dt, &lay, lay.size * dt->size, s, fname);
    lua_replace(L, top + 1);
    lua_settop(L, top + 1);
    return a;
  }
  int64_t strides[LC_MAXDIM];
  if (lua_type(L, -1) != LUA_TTABLE)
    lc_error(L, fname, "strides must be a table of integers, got %s", luaL_typename(L, -1));
  int ns = (int)lua_rawlen(L, -1);
  if (ns > LC_MAXDIM) lc_error(L, fname, "more than %d strides", LC_MAXDIM);
  for (int i = 0; i < ns; i++) {
    lua_rawgeti(L, -1, i + 1);
    strides[i] = lc_check_integer(L, -1, "stride", i + 1, fname);
    lua_pop(L, 1);
  }
  int64_t span;
  if (lc_layout_strided(&lay, nd, shape, ns, strides, dt->size, &span, err))
    lc_error(L, fname, "%s", err);
  lc_array *a = alloc_flags(L, kind, flags, dt, &lay, span, s, fname);
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
  return a;
}

static const char *const device_array_opts[] = {"strides", "order", "stream", NULL};

/* device_array(shape [, dtype] [, {strides=, order=, stream=} | order]) */
static int l_device_array(lua_State *L) {
  lc_array_new(L, LC_DEVICE, 0, device_array_opts, "device_array");
  return 1;
}

/* device_array_like(a [, stream]): same shape and dtype, axes in a's
** stride order (NumPy's empty_like) */
static int l_device_array_like(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "device_array_like");
  lc_stream *s = lc_opt_stream(L, 2, "device_array_like");
  lc_layout lay;
  lc_layout_like(&lay, &a->lay, a->dtype->size);
  lc_array_alloc(L, LC_DEVICE, a->dtype, &lay, lay.size * a->dtype->size, s,
                 "device_array_like");
  return 1;
}

static const char *const to_device_opts[] = {"copy", "to", "dtype", NULL};

/* luacuda.array(src [, dtype]): a host array from a table, a scalar or an
** array (copied; dtypes must match) */
static int l_array(lua_State *L) {
  const lc_dtype *dt = lc_dtype_opt(L, 2, NULL, "array");
  int t = lua_type(L, 1);
  if (t == LUA_TTABLE) {
    lc_from_table(L, 1, dt, LC_HOST, NULL, "array");
  } else if (t == LUA_TNUMBER || t == LUA_TBOOLEAN) {
    lc_from_scalar(L, 1, dt, LC_HOST, "array");
  } else {
    lc_array *a = lc_array_test(L, 1);
    if (a == NULL)
      lc_error(L, "array", "expected a table, number, boolean or array, got %s",
               luaL_typename(L, 1));
    a = lc_array_check(L, 1, "array");
    if (dt && !lc_dtype_equal(dt, a->dtype))
      lc_error(L, "array", "dtype mismatch: the array is %s, not %s (no implicit casting)",
               a->dtype->name, dt->name);
    lc_copy_to_new(L, a, LC_HOST, NULL, "array");
  }
  return 1;
}

/* to_device(src [, stream] [, {copy=, to=, dtype=}]) */
static int l_to_device(lua_State *L) {
  const char *fn = "to_device";
  int sidx = 2, oidx = 3;
  if (lua_type(L, 2) == LUA_TTABLE) {        /* to_device(src, opts) */
    sidx = 0;
    oidx = 2;
  }
  lc_stream *s = sidx ? lc_opt_stream(L, sidx, fn) : NULL;
  bool have = lc_check_opts(L, oidx, to_device_opts, fn);
  int top = lua_gettop(L);
  opt_field(L, oidx, have, "dtype");
  const lc_dtype *dt = lc_dtype_opt(L, top + 1, NULL, fn);
  int ct = opt_field(L, oidx, have, "copy");
  if (ct != LUA_TNIL && ct != LUA_TBOOLEAN)
    lc_error(L, fn, "option copy must be a boolean, got %s", luaL_typename(L, -1));
  bool copy = ct == LUA_TNIL || lua_toboolean(L, top + 2);
  lc_array *to = NULL;
  if (opt_field(L, oidx, have, "to") != LUA_TNIL) {
    to = lc_array_check(L, top + 3, fn);
    if (lc_array_kind(to) != LC_DEVICE)
      lc_error(L, fn, "option to must be a device array, got a %s array",
               lc_kind_names[lc_array_kind(to)]);
  }
  if (to && dt && !lc_dtype_equal(dt, to->dtype))
    lc_error(L, fn, "dtype mismatch: option to is %s, option dtype is %s",
             to->dtype->name, dt->name);
  int t = lua_type(L, 1);
  lc_array *src = lc_array_test(L, 1);
  if (src) {
    src = lc_array_check(L, 1, fn);
    if (dt && !lc_dtype_equal(dt, src->dtype))
      lc_error(L, fn, "dtype mismatch: the array is %s, not %s (no implicit casting)",
               src->dtype->name, dt->name);
    if (to) {
      if (copy) lc_copy_array(L, to, src, s, fn);
      lua_pushvalue(L, top + 3);
    } else if (lc_array_kind(src) == LC_DEVICE) {
      lua_pushvalue(L, 1);                    /* already there, as in Numba */
    } else {
      lc_layout lay;
      lc_layout_like(&lay, &src->lay, src->dtype->size);
      lc_array *d = lc_array_alloc(L, LC_DEVICE, src->dtype, &lay,
                                   lay.size * src->dtype->size, s, fn);
      if (copy) lc_copy_array(L, d, src, s, fn);
    }
    return 1;
  }
  if (t != LUA_TTABLE && t != LUA_TNUMBER && t != LUA_TBOOLEAN)
    lc_error(L, fn, "expected a table, number, boolean or array, got %s",
             luaL_typename(L, 1));
  if (to) {
    if (copy) lc_assign(L, to, &to->lay, 1, s, fn);
    lua_pushvalue(L, top + 3);
    return 1;
  }
  if (t == LUA_TTABLE) {
    if (copy) {
      lc_from_table(L, 1, dt, LC_DEVICE, s, fn);
    } else {      /* only the shape and dtype of the table are wanted */
      lc_array *h = lc_from_table(L, 1, dt, LC_HOST, NULL, fn);
      lc_array_empty(L, LC_DEVICE, h->dtype, h->lay.ndim, h->lay.shape, 'C', s, fn);
    }
  } else {
    lc_from_scalar(L, 1, dt, LC_DEVICE, fn);
  }
  return 1;
}

void lc_create_open(lua_State *L) {
  static const struct { const char *name; new_fill fill; } host[] = {
    {"empty", NEW_EMPTY}, {"zeros", NEW_ZEROS}, {"ones", NEW_ONES},
  };
  static const luaL_Reg new_host = {"new_host", l_new_host};
  for (size_t i = 0; i < sizeof host / sizeof host[0]; i++) {
    lua_pushstring(L, host[i].name);
    lua_pushinteger(L, host[i].fill);
    lc_pushfunction(L, &new_host, 2);
    lua_setfield(L, -2, host[i].name);
  }
  static const luaL_Reg fns[] = {
    {"array", l_array},
    {"full", l_full},
    {"arange", l_arange},
    {"device_array", l_device_array},
    {"device_array_like", l_device_array_like},
    {"to_device", l_to_device},
    {NULL, NULL}
  };
  lc_setfuncs(L, fns);
}
