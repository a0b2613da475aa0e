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
  if (nargs != sig->nparams)
    lc_error(L, fname, "kernel '%s' takes %d argument%s, got %d", sig->name, sig->nparams,
             sig->nparams == 1 ? "" : "s", nargs);
  luaL_checkstack(L, nargs + 2, "too many arguments");
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
  if (p->type >= 0 && a->dtype->code != (lc_typecode)p->type)
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
    } else if (p->kind == LC_PARAM_POINTER) {
      const lc_array *a = device_array_arg(L, idx, sig, i, fname);
      if (!lc_layout_is_c_contiguous(&a->lay, a->dtype->size) &&
          !lc_layout_is_f_contiguous(&a->lay, a->dtype->size))
        arg_error(L, fname, sig, i, "a non-contiguous view cannot be passed as a pointer "
                  "(declare the parameter Array<T, N>)");
      lc_buffer_use(L, a->buf, stream, fname);     /* its free waits for this launch */
      void *ptr = lc_array_device_data(a);
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
