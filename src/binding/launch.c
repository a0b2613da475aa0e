/*
** launch: reading a launch configuration and packing kernel arguments,
** checked against the kernel's parameter list. Shared by the backends, so
** a script that runs on the simulator fails the same way on a GPU.
*/
#include "kernel.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "abi.h"        /* the launch limits, Array<T, N>'s layout */
#include "aux.h"
#include "element.h"
#include "record.h"

/* a layout's int64_t shape and strides fill the ABI's long long fields */
_Static_assert(sizeof(int64_t) == sizeof(long long), "int64_t and long long differ in size");

/* A grid or block size: a number or {x [, y [, z]]}, each a positive
** integer within max[]. */
static void check_dims(lua_State *L, int idx, unsigned out[3], const char *what,
                       const unsigned long long max[3], const lc_kernel_ref *k,
                       const char *fname) {
  static const char axis[] = "xyz";
  lua_Integer v[3] = {1, 1, 1};
  int t = lua_type(L, idx);
  if (t == LUA_TNUMBER) {
    int ok;
    v[0] = lua_tointegerx(L, idx, &ok);
    if (!ok) lc_error(L, fname, "kernel '%s': %s must be an integer, got %g", k->sig->name,
                      what, lua_tonumber(L, idx));
  } else if (t == LUA_TTABLE) {
    size_t n = lua_rawlen(L, idx);
    if (n < 1 || n > 3)
      lc_error(L, fname, "kernel '%s': %s must have 1 to 3 entries, got %zu", k->sig->name,
               what, n);
    for (size_t i = 0; i < n; i++) {
      int ok;
      lua_rawgeti(L, idx, (lua_Integer)i + 1);
      v[i] = lua_tointegerx(L, -1, &ok);
      if (!ok || lua_type(L, -1) != LUA_TNUMBER)
        lc_error(L, fname, "kernel '%s': %s %c must be an integer, got %s", k->sig->name,
                 what, axis[i], luaL_typename(L, -1));
      lua_pop(L, 1);
    }
  } else {
    lc_error(L, fname, "kernel '%s': %s must be a number or {x, y, z}, got %s",
             k->sig->name, what, luaL_typename(L, idx));
  }
  for (int i = 0; i < 3; i++) {
    if (v[i] < 1 || (unsigned long long)v[i] > max[i])
      lc_error(L, fname, "kernel '%s': %s %c is %lld (1 to %llu)", k->sig->name, what,
               axis[i], (long long)v[i], max[i]);
    out[i] = (unsigned)v[i];
  }
}

/* Read the launch configuration at idx: Numba's {grid, block [, stream
** [, shared]]} or {grid=, block=, stream=, shared=, cooperative=}. Pushes
** the stream object (or nil), which the launch keeps on its stack while it
** uses it. */
static void launch_config(lua_State *L, int idx, lc_launch *cfg, const lc_kernel_ref *k,
                          const char *fname) {
  static const unsigned long long grid_max[3] = {LC_MAX_GRID_X, LC_MAX_GRID_Y, LC_MAX_GRID_Z};
  static const unsigned long long block_max[3] = {LC_MAX_BLOCK_X, LC_MAX_BLOCK_Y, LC_MAX_BLOCK_Z};
  if (lua_type(L, idx) != LUA_TTABLE)
    lc_error(L, fname, "kernel '%s': the launch configuration must be a table, got %s",
             k->sig->name, luaL_typename(L, idx));
  int top = lua_gettop(L);
  bool positional = lua_rawgeti(L, idx, 1) != LUA_TNIL;   /* Numba's {grid, block, ...} */
  lua_pop(L, 1);
  if (positional) {
    for (int i = 1; i <= 4; i++) lua_rawgeti(L, idx, i);
  } else {
    static const char *const keys[] = {"grid", "block", "stream", "shared", "cooperative", NULL};
    lc_check_opts(L, idx, keys, fname);
    for (int i = 0; i < 5; i++) lc_opt_get(L, idx, keys[i]);
  }
  cfg->cooperative = false;
  if (!positional && !lua_isnil(L, top + 5)) {
    if (lua_type(L, top + 5) != LUA_TBOOLEAN)
      lc_error(L, fname, "kernel '%s': cooperative must be a boolean, got %s", k->sig->name,
               luaL_typename(L, top + 5));
    cfg->cooperative = lua_toboolean(L, top + 5);
  }
  if (lua_isnil(L, top + 1) || lua_isnil(L, top + 2))
    lc_error(L, fname, "kernel '%s': the launch configuration needs a grid and a block",
             k->sig->name);
  check_dims(L, top + 1, cfg->grid, "grid", grid_max, k, fname);
  check_dims(L, top + 2, cfg->block, "block", block_max, k, fname);
  unsigned long long threads = (unsigned long long)cfg->block[0] * cfg->block[1] * cfg->block[2];
  if (threads > LC_MAX_BLOCK_THREADS)
    lc_error(L, fname, "kernel '%s': a block of %llu threads is more than %u",
             k->sig->name, threads, LC_MAX_BLOCK_THREADS);
  cfg->stream = lc_opt_stream(L, top + 3, fname);
  cfg->shared_bytes = 0;
  if (!lua_isnil(L, top + 4)) {
    int ok;
    lua_Integer sh = lua_tointegerx(L, top + 4, &ok);
    if (!ok || lua_type(L, top + 4) != LUA_TNUMBER || sh < 0)
      lc_error(L, fname, "kernel '%s': shared memory must be a non-negative integer of bytes",
               k->sig->name);
    /* the device's own limit is the backend's check */
    if ((unsigned long long)sh > LC_MAX_SHARED)
      lc_error(L, fname, "kernel '%s': %lld bytes of dynamic shared memory is more than %u "
               "(227 KiB, what an H100 gives a block; no device gives more)",
               k->sig->name, (long long)sh, LC_MAX_SHARED);
    cfg->shared_bytes = (unsigned)sh;
  }
  lua_pushvalue(L, top + 3);              /* the stream, kept */
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
}

/* Raise "<fname>: kernel 'k' argument i 'name' (type): <cause>". The
** argument is described only here, off the launch path. */
LC_NORETURN LC_PRINTF(5, 6)
static void arg_error(lua_State *L, const char *fname, const lc_kernel_sig *sig, int i,
                      const char *fmt, ...) {
  const lc_param *p = &sig->params[i];
  char cause[LC_ERRLEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cause, sizeof cause, fmt, ap);
  va_end(ap);
  lc_error(L, fname, "kernel '%s' argument %d%s%s%s (%s): %s", sig->name, i + 1,
           p->name[0] ? " '" : "", p->name, p->name[0] ? "'" : "", p->spelling, cause);
}

/* Check that nargs is k's parameter count, then push, for each of the
** arguments from stack index first, the value the kernel is given: the
** argument itself, or the array a stand-in's __kernel_arg metamethod gives
** (SmartArray). Every metamethod a launch runs runs here, before anything
** is packed. */
static void resolve_args(lua_State *L, int first, int nargs, const lc_kernel_ref *k,
                         const char *fname) {
  const lc_kernel_sig *sig = k->sig;
  int least = sig->nparams;           /* the trailing parameters with defaults may be left out */
  while (least > 0 && sig->params[least - 1].has_default) least--;
  if (least < sig->nparams && (nargs < least || nargs > sig->nparams))
    lc_error(L, fname, "kernel '%s' takes %d to %d arguments, got %d", sig->name, least,
             sig->nparams, nargs);
  if (nargs != sig->nparams && least == sig->nparams)
    lc_error(L, fname, "kernel '%s' takes %d argument%s, got %d", sig->name, sig->nparams,
             sig->nparams == 1 ? "" : "s", nargs);
  for (int i = nargs; i < sig->nparams; i++)
    if (!sig->params[i].default_known)
      arg_error(L, fname, sig, i, "its default argument '%s' is not a literal luacuda can "
                "pass; give the argument", sig->params[i].default_text);
  luaL_checkstack(L, sig->nparams + 2, "too many arguments");
  for (int i = 0; i < nargs; i++) {
    int idx = first + i;
    if (lua_type(L, idx) == LUA_TTABLE && luaL_getmetafield(L, idx, "__kernel_arg") != LUA_TNIL) {
      lua_pushvalue(L, idx);
      lua_call(L, 1, 1);
      if (lc_array_test(L, -1) == NULL)
        arg_error(L, fname, sig, i, "its __kernel_arg gave %s, not an array",
                  luaL_typename(L, -1));
    } else {
      lua_pushvalue(L, idx);
    }
  }
  for (int i = nargs; i < sig->nparams; i++) {     /* the defaults */
    const lc_param *p = &sig->params[i];
    if (p->default_null) lua_pushlightuserdata(L, NULL);
    else if (p->type == LC_BOOL) lua_pushboolean(L, p->default_float ? p->default_num != 0
                                                                       : p->default_int != 0);
    else if (p->default_float) lua_pushnumber(L, p->default_num);
    else lua_pushinteger(L, (lua_Integer)p->default_int);
  }
}

/* luacuda.null, for a pointer parameter */
static bool is_null(lua_State *L, int idx) {
  return lua_type(L, idx) == LUA_TLIGHTUSERDATA && lua_touserdata(L, idx) == NULL;
}

/* A vector type by value (float2 v) from {x=, y=} or {1, 2} at idx into
** slot; every element is checked before any is written. */
static void vector_arg(lua_State *L, int idx, const lc_kernel_sig *sig, int i, char *slot,
                       const char *fname) {
  static const char *const names[] = {"x", "y", "z", "w"};
  const lc_param *p = &sig->params[i];
  const lc_dtype *dt = &lc_dtypes[p->type];
  char tmp[64], err[LC_ERRLEN];
  if (lua_type(L, idx) != LUA_TTABLE)
    arg_error(L, fname, sig, i, "expected a table {x=, y=, ...} or {1, 2, ...} of %d "
              "numbers, got %s", p->vec, luaL_typename(L, idx));
  bool named = lua_rawgeti(L, idx, 1) == LUA_TNIL;
  lua_pop(L, 1);
  /* no entry beyond the vector's */
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    bool ok = false;
    lua_pop(L, 1);
    if (named && lua_type(L, -1) == LUA_TSTRING) {
      for (int c = 0; c < p->vec; c++) ok = ok || strcmp(lua_tostring(L, -1), names[c]) == 0;
    } else if (!named && lua_isinteger(L, -1)) {
      lua_Integer n = lua_tointeger(L, -1);
      ok = n >= 1 && n <= p->vec;
    }
    if (!ok) {
      bool str = lua_type(L, -1) == LUA_TSTRING;
      const char *key = luaL_tolstring(L, -1, NULL);
      arg_error(L, fname, sig, i, "the table has an entry %s%s%s, which a vector of %d has "
                "not (use {x=, y=, ...} or {1, 2, ...})", str ? "'" : "", key, str ? "'" : "",
                p->vec);
    }
  }
  for (int c = 0; c < p->vec; c++) {
    if (named) lua_rawget(L, (lua_pushstring(L, names[c]), idx));
    else lua_rawgeti(L, idx, c + 1);
    char which[16];
    if (named) snprintf(which, sizeof which, "'%s'", names[c]);
    else snprintf(which, sizeof which, "[%d]", c + 1);
    if (lua_isnil(L, -1)) arg_error(L, fname, sig, i, "the table has no %s", which);
    if (lc_elem_convert(L, lua_gettop(L), dt, tmp + c * dt->size, err))
      arg_error(L, fname, sig, i, "%s: %s", which, err);
    lua_pop(L, 1);
  }
  memcpy(slot, tmp, (size_t)(dt->size * p->vec));
}

/* A T#N pointer (float2 *) takes a T array whose last axis has N elements,
** or an array of a record of N T fields and nothing else. */
static void check_vector_array(lua_State *L, const lc_array *a, const lc_kernel_sig *sig,
                               int i, const char *fname) {
  const lc_param *p = &sig->params[i];
  const lc_dtype *el = &lc_dtypes[p->type];
  const lc_record *r = a->dtype->rec;
  if (r) {
    bool ok = a->dtype->size == el->size * p->vec;
    int64_t count = 0;
    for (int f = 0; ok && f < r->nfields; f++) {
      ok = r->fields[f].dtype->code == el->code && r->fields[f].dtype->rec == NULL &&
           r->fields[f].offset == count * el->size;
      count += r->fields[f].count;
    }
    if (!ok || count != p->vec)
      arg_error(L, fname, sig, i, "expected a %s array whose last axis has %d elements, or "
                "records of %d %s fields, got %s", el->name, p->vec, p->vec, el->name,
                a->dtype->name);
  } else if (a->dtype->code != el->code) {
    arg_error(L, fname, sig, i, "expected a %s array whose last axis has %d elements, got %s",
              el->name, p->vec, a->dtype->name);
  } else if (a->lay.ndim < 1 || a->lay.shape[a->lay.ndim - 1] != p->vec) {
    arg_error(L, fname, sig, i, "expected a %s array whose last axis has %d elements, got "
              "%s", el->name, p->vec, a->lay.ndim < 1 ? "a 0-d array" :
              lua_pushfstring(L, "a last axis of %I", (lua_Integer)a->lay.shape[a->lay.ndim - 1]));
  } else if (!lc_layout_is_c_contiguous(&a->lay, a->dtype->size)) {
    arg_error(L, fname, sig, i, "the array must be C-contiguous: its last axis holds each "
              "vector's elements");
  }
}

/* The array for a pointer or Array<T, N> parameter i, checked. */
static const lc_array *device_array_arg(lua_State *L, int idx, const lc_kernel_sig *sig, int i,
                                        const char *fname) {
  const lc_param *p = &sig->params[i];
  const lc_array *a = lc_array_test(L, idx);
  if (a == NULL)
    arg_error(L, fname, sig, i, "expected a device array, got %s", luaL_typename(L, idx));
  if (!lc_array_is_open(a)) arg_error(L, fname, sig, i, "attempt to use a closed array");
  if (!lc_kind_device_accessible(lc_array_kind(a)))
    arg_error(L, fname, sig, i, "a %s array cannot be passed to a kernel (copy it to the "
              "device first: to_device)", lc_kind_names[lc_array_kind(a)]);
  if (lc_array_kind(a) == LC_DEVICE && a->buf->device != a->buf->backend->current_device())
    arg_error(L, fname, sig, i, "the array is on device %d, but device %d is current "
              "(luacuda.select_device)", a->buf->device + 1,
              a->buf->backend->current_device() + 1);
  if (p->vec) {
    check_vector_array(L, a, sig, i, fname);
  } else if (p->type >= 0 && a->dtype->code != (lc_typecode)p->type)
    arg_error(L, fname, sig, i, "expected a %s array, got %s", lc_dtypes[p->type].name,
              a->dtype->name);
  /* a struct's layout is the source's business: rec:c_declaration keeps
  ** the two in step */
  if (p->type == LC_PARAM_STRUCT && a->dtype->rec == NULL)
    arg_error(L, fname, sig, i, "expected an array of records (struct %s), got %s; if %s "
              "is not a record's struct but a macro or typedef, give the parameter types "
              "with signatures=", p->type_name, a->dtype->name, p->type_name);
  return a;
}

/* Check the values from stack index first (resolve_args's, one per
** parameter) against k's parameters and pack them into buf, args[i]
** pointing at each. Returns bytes used. */
static size_t pack_args(lua_State *L, int first, const lc_kernel_ref *k, char *buf,
                      size_t buflen, void **args, lc_stream *stream,
                      const char *fname) {
  const lc_kernel_sig *sig = k->sig;
  size_t off = 0;
  for (int i = 0; i < sig->nparams; i++) {
    const lc_param *p = &sig->params[i];
    int idx = first + i;
    char err[LC_ERRLEN];
    off = (off + (size_t)p->align - 1) / (size_t)p->align * (size_t)p->align;
    if (off + (size_t)p->size > buflen)
      lc_error(L, fname, "kernel '%s': the arguments take more than %zu bytes", sig->name, buflen);
    char *slot = buf + off;
    args[i] = slot;
    off += (size_t)p->size;
    if (p->kind == LC_PARAM_SCALAR) {
      if (lc_elem_convert(L, idx, &lc_dtypes[p->type], slot, err))
        arg_error(L, fname, sig, i, "%s", err);
    } else if (p->kind == LC_PARAM_VALUE) {
      vector_arg(L, idx, sig, i, slot, fname);
    } else if (p->kind == LC_PARAM_POINTER && is_null(L, idx)) {
      memset(slot, 0, sizeof(void *));
    } else if (p->kind == LC_PARAM_POINTER) {
      const lc_array *a = device_array_arg(L, idx, sig, i, fname);
      if (!lc_layout_is_c_contiguous(&a->lay, a->dtype->size) &&
          !lc_layout_is_f_contiguous(&a->lay, a->dtype->size))
        arg_error(L, fname, sig, i, "a non-contiguous view cannot be passed as a pointer "
                  "(declare the parameter Array<T, N>)");
      lc_buffer_use(L, a->buf, stream, fname);     /* its free waits for this launch */
      void *ptr = lc_array_device_data(a);
      if (p->vec) {
        size_t es = lc_dtypes[p->type].size;
        size_t al = p->vec == 2 ? 2 * es : p->vec == 4 ? (4 * es > 16 ? 16 : 4 * es) : es;
        if ((uintptr_t)ptr % al != 0)
          arg_error(L, fname, sig, i, "the data is not aligned to %zu bytes, as the vector "
                    "type must be", al);
      }
      memcpy(slot, &ptr, sizeof ptr);
    } else {
      const lc_array *a = device_array_arg(L, idx, sig, i, fname);
      if (a->lay.ndim != p->ndim)
        arg_error(L, fname, sig, i, "expected a %d-d array, got %d-d", p->ndim, a->lay.ndim);
      lc_buffer_use(L, a->buf, stream, fname);
      void *ptr = lc_array_device_data(a);
      size_t dims = sizeof a->lay.shape[0] * (size_t)p->ndim;
      memcpy(slot, &ptr, sizeof ptr);
      memcpy(slot + LC_ARRAY_SHAPE_OFFSET, a->lay.shape, dims);
      memcpy(slot + LC_ARRAY_STRIDES_OFFSET((size_t)p->ndim), a->lay.strides, dims);
    }
  }
  return off;
}

/* LUACUDA_SYNC=1 waits after every launch, so that a failure is reported
** by the launch that caused it rather than by a later call. */
static bool sync_launches(void) {
  static atomic_int cached = -1;         /* states on several threads launch */
  int c = atomic_load_explicit(&cached, memory_order_relaxed);
  if (c < 0) {
    const char *v = getenv("LUACUDA_SYNC");
    c = v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
    atomic_store_explicit(&cached, c, memory_order_relaxed);
  }
  return c;
}

void lc_kernel_launch(lua_State *L, lc_kernel_ref *k, int cfgidx, int first, int nargs) {
  const lc_backend *be = k->hold.mod->be;
  lc_launch cfg;
  int resolved = lua_gettop(L) + 1;
  resolve_args(L, first, nargs, k, "launch");
  launch_config(L, cfgidx, &cfg, k, "launch");
  if (cfg.stream == NULL) cfg.stream = be->default_stream();
  char buf[LC_MAX_ARG_BYTES] __attribute__((aligned(16)));
  void *args[LC_MAXPARAMS];
  cfg.arglen = pack_args(L, resolved, k, buf, sizeof buf, args, cfg.stream, "launch");
  cfg.args = args;
  cfg.nargs = k->sig->nparams;
  cfg.argbuf = buf;
  cfg.kernel_name = k->sig->name;
  char err[LC_ERRLEN];
  if (be->launch(k->fn, &cfg, err))
    lc_error(L, "launch", "kernel '%s': %s", k->sig->name, err);
  /* stand-ins for arrays learn that the kernel may have written them */
  for (int i = 0; i < nargs; i++)
    if (lua_type(L, first + i) == LUA_TTABLE && luaL_callmeta(L, first + i, "__kernel_launched"))
      lua_pop(L, 1);
  if (sync_launches() && be->stream_synchronize(cfg.stream, err)) {
    if (strncmp(err, "kernel '", 8) == 0) lc_error(L, "launch", "%s", err);
    /* a driver's error names its call, not the kernel */
    lc_error(L, "launch", "kernel '%s' failed: %s", k->sig->name, err);
  }
}
