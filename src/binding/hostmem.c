/*
** hostmem: page-locked host memory. The constructors pinned_array,
** mapped_array and managed_array; and the scopes that page-lock host arrays
** in place: pinned/register (a Registration, a to-be-closed value that
** unregisters when it closes), deregister, and mapped (an array of kind
** "mapped" over a host array's memory, registered while it lives).
**
** A registration covers a host array's whole buffer, so views of one
** buffer share it. Its state is the buffer's lock field, changed only under
** mu, so that the check and the register are one step for every state of
** every thread. A Registration or a mapped array holds a reference to the
** buffer and the registration's number: closing it unregisters only if that
** registration is still the buffer's (deregister may have ended it, and a
** new one may have begun).
*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "gate.h"
#include "args.h"

#define REG_MT "luacuda.registration"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t last_number;

/* ---- constructors ----------------------------------------------------- */

static const char *const pinned_opts[] = {"dtype", "strides", "order", NULL};
static const char *const mapped_opts[] = {"dtype", "strides", "order", "portable", "wc", NULL};

/*** @module luacuda */

/***
A new array in page-locked (pinned) host memory: host-addressable, and
copied to and from the device asynchronously on a stream.
@function pinned_array
@tparam table|integer shape the sizes of the axes
@tparam[opt="float64"] string|Record dtype the element type
@tparam[opt] table|string opts `"C"`/`"F"`, or `{dtype =, order =, strides =}` (in the dtype's place too)
@treturn Array a pinned array, elements not set
@raise `luacuda.pinned_array: <cause>`: a bad shape, dtype or option; out of page-locked memory
@usage local p = luacuda.pinned_array({1024}, "float32")
p:fill(1)
*/

/* pinned_array(shape [, dtype] [, {strides=, order=} | order]) */
static int l_pinned_array(lua_State *L) {
  lc_array_new(L, LC_PINNED, 0, pinned_opts, "pinned_array");
  return 1;
}

/***
A new array in managed (unified) memory, which both the host and kernels
address; synchronize before the host reads what a kernel wrote.
@function managed_array
@tparam table|integer shape the sizes of the axes
@tparam[opt="float64"] string|Record dtype the element type
@tparam[opt] table|string opts `"C"`/`"F"`, or `{dtype =, order =, strides =}` (in the dtype's place too)
@treturn Array a managed array, elements not set
@raise `luacuda.managed_array: <cause>`: a bad shape, dtype or option; out of memory
@usage local m = luacuda.managed_array({16}, "int32")
m:fill(0)
*/

/* managed_array(shape [, dtype] [, {strides=, order=} | order]) */
static int l_managed_array(lua_State *L) {
  lc_array_new(L, LC_MANAGED, 0, pinned_opts, "managed_array");
  return 1;
}

/* The boolean option key of the options table at idx as flag (0 if absent). */
static unsigned bool_flag(lua_State *L, int idx, const char *key, unsigned flag,
                          const char *fname) {
  int t = lc_opt_get(L, idx, key);
  if (t != LUA_TNIL && t != LUA_TBOOLEAN)
    lc_error(L, fname, "option %s must be a boolean, got %s", key, luaL_typename(L, -1));
  unsigned f = lua_toboolean(L, -1) ? flag : 0;
  lua_pop(L, 1);
  return f;
}

/***
A new array in mapped host memory: page-locked host memory that kernels
address directly (zero-copy).
@function mapped_array
@tparam table|integer shape the sizes of the axes
@tparam[opt="float64"] string|Record dtype the element type
@tparam[opt] table|string opts `"C"`/`"F"`, or `{dtype =, order =, strides =, portable = false,
wc = false}`: `portable` for every context, `wc` write-combined (fast for the
device to read, slow for the host)
@treturn Array a mapped array, elements not set
@raise `luacuda.mapped_array: option wc must be a boolean, got <type>`; a bad shape, dtype or option
@usage local m = luacuda.mapped_array({16}, "float32")
m:fill(0)
*/

/* mapped_array(shape [, dtype] [, {strides=, order=, portable=, wc=} | order]) */
static int l_mapped_array(lua_State *L) {
  unsigned flags = 0;
  lc_opts_for_dtype(L, 2);          /* mapped_array(shape, {dtype =, ...}) */
  if (lua_type(L, 3) != LUA_TSTRING && lc_check_opts(L, 3, mapped_opts, "mapped_array")) {
    flags |= bool_flag(L, 3, "portable", LC_ALLOC_PORTABLE, "mapped_array");
    flags |= bool_flag(L, 3, "wc", LC_ALLOC_WRITECOMBINED, "mapped_array");
  }
  lc_array_new(L, LC_MAPPED, flags, mapped_opts, "mapped_array");
  return 1;
}

/* ---- the arguments of the scopes -------------------------------------- */

/* The buffers of the host arrays at 1..top (at most max of them), checked:
** open, of kind host, no buffer twice. Returns their count. */
static int host_args(lua_State *L, lc_buffer **bufs, int max, const char *fname) {
  const lc_backend *be = lc_backend_get(NULL);
  if (!be->host_register || !be->host_unregister || !be->host_device_pointer)
    lc_error(L, fname, "the %s backend cannot page-lock host memory yet", be->name);
  int n = lua_gettop(L);
  if (n == 0) lc_error(L, fname, "expected at least one host array");
  if (n > max) lc_error(L, fname, "more than %d arrays at once", max);
  for (int i = 1; i <= n; i++) {
    lc_array *a = lc_array_test(L, i);
    if (a == NULL)
      lc_error(L, fname, "argument %d: expected a host array, got %s", i, luaL_typename(L, i));
    if (!lc_array_is_open(a)) lc_error(L, fname, "argument %d: attempt to use a closed array", i);
    if (lc_array_kind(a) != LC_HOST)
      lc_error(L, fname, "argument %d is a %s array (only host arrays can be page-locked)", i,
               lc_kind_names[lc_array_kind(a)]);
    for (int j = 1; j < i; j++)
      if (bufs[j - 1] == a->buf)
        lc_error(L, fname, "arguments %d and %d share memory (page-lock it once)", j, i);
    bufs[i - 1] = a->buf;
  }
  return n;
}

#define MAX_ARGS 64

/* Wait for the queued work, reporting nothing: its failures belong to
** whoever synchronizes next. */
static void wait_for_queued(void) { lc_backend_get(NULL)->synchronize(NULL); }

/* A registration being ended may wait behind queued work (a mapped array
** closed after a launch on it is unregistered once the launch has run):
** when one of bufs is still locked, let that happen before judging. */
static void settle(lc_buffer *const *bufs, int n) {
  for (int i = 0; i < n; i++)
    if (atomic_load(&bufs[i]->lock) != 0) {
      wait_for_queued();
      return;
    }
}

/* Why buffer b cannot be registered, in err; false if it can. Under mu. */
static bool locked_already(const lc_buffer *b, int i, char *err) {
  uint64_t lock = atomic_load(&b->lock);
  if (lock == 0) return false;
  lc_errf(err, "argument %d is registered already (%s)", i,
          lock & 1 ? "a mapped array is over it" : "deregister it first");
  return true;
}

/* Register b with flags as a new registration; its number in *lock. Under mu. */
static int lock_buffer(lc_buffer *b, unsigned flags, bool mapped, uint64_t *lock, char *err) {
  size_t n = b->nbytes ? b->nbytes : 1;      /* a host block is never empty */
  int rc = b->backend->host_register(b->ptr, n, flags, err);
  if (rc != LC_OK) return rc;
  *lock = (atomic_fetch_add(&last_number, 1) + 1) << 1 | (mapped ? 1u : 0u);
  atomic_store(&b->lock, *lock);
  return LC_OK;
}

/* Unregister b if lock is still its registration. Under mu. Queued work
** (a kernel writing mapped memory, a copy from pinned memory) may still be
** using the memory: a caller from Lua waits for it first, with
** wait_for_queued, before taking mu (the work queued may itself end in a
** release that takes mu); a release callback runs after it anyway. */
static int unlock_buffer(lc_buffer *b, uint64_t lock, char *err) {
  if (atomic_load(&b->lock) != lock) return LC_OK;
  atomic_store(&b->lock, 0);
  return b->backend->host_unregister(b->ptr, err);
}


/* ---- Registration: pinned, register, deregister ----------------------- */

typedef struct reg_entry {
  lc_buffer *buf;
  uint64_t lock;
} reg_entry;

typedef struct lc_registration {
  int n;                       /* 0 once closed */
  bool closing;                /* closed while a call ran: ends later */
  reg_entry e[];
} lc_registration;

/* Drop the registration's references; unregister first when unlock is set.
** Never raises. */
static void reg_end(lua_State *L, lc_registration *r, bool unlock) {
  int n = r->n;
  r->n = 0;
  char err[LC_ERRLEN];
  if (unlock && n > 0) wait_for_queued();
  for (int i = 0; i < n; i++) {
    if (unlock) {
      pthread_mutex_lock(&mu);
      int rc = unlock_buffer(r->e[i].buf, r->e[i].lock, err);
      pthread_mutex_unlock(&mu);
      if (rc != LC_OK) {
        lua_warning(L, "luacuda: unregistering host memory: ", 1);
        lua_warning(L, err, 0);
      }
    }
    lc_buffer_release(r->e[i].buf);
  }
}

/***
Page-locks the memory of host arrays in place (as CUDA's
`cuMemHostRegister`), so that copies with them run asynchronously, until
the returned registration closes. Views of one buffer share it.
@function pinned
@tparam Array ... host arrays
@treturn Registration a to-be-closed value
@raise `luacuda.pinned: <cause>`: an argument that is not a host array; memory registered already
@usage local h = luacuda.zeros({1 << 16}, "float32")
do
  local _ <close> = luacuda.pinned(h)
  assert(h.pinned)
end
assert(not h.pinned)
*/

/***
The same as @{pinned}, under CUDA's name.
@function register
@tparam Array ... host arrays
@treturn Registration a to-be-closed value
@raise `luacuda.register: <cause>`, as @{pinned}
@usage local h = luacuda.zeros({1024})
local r = luacuda.register(h)
r:close()
*/

/* pinned(a, ...) and register(a, ...) -> a Registration; upvalue: the name */
static int l_register(lua_State *L) {
  const char *fname = lua_tostring(L, lc_upvalueindex(1));
  lc_buffer *bufs[MAX_ARGS];
  int n = host_args(L, bufs, MAX_ARGS, fname);
  lc_registration *r = lua_newuserdatauv(L, sizeof *r + (size_t)n * sizeof r->e[0], 0);
  r->n = 0;
  r->closing = false;
  luaL_setmetatable(L, REG_MT);
  char err[LC_ERRLEN];
  int rc = LC_OK, i;
  settle(bufs, n);
  pthread_mutex_lock(&mu);
  for (i = 0; i < n && rc == LC_OK; i++) {
    if (locked_already(bufs[i], i + 1, err)) rc = LC_EFAIL;
    else rc = lock_buffer(bufs[i], 0, false, &r->e[i].lock, err);
  }
  if (rc != LC_OK) {                 /* nothing half-done */
    char ignored[LC_ERRLEN];
    for (i -= 2; i >= 0; i--) unlock_buffer(bufs[i], r->e[i].lock, ignored);
  }
  pthread_mutex_unlock(&mu);
  if (rc != LC_OK) lc_error(L, fname, "%s", err);
  for (i = 0; i < n; i++) {
    lc_buffer_retain(bufs[i]);
    r->e[i].buf = bufs[i];
  }
  r->n = n;
  return 1;
}

/***
Ends the registrations of these arrays' memory (made by @{pinned},
@{register} or @{mapped}).
@function deregister
@tparam Array ... host arrays
@raise `luacuda.deregister: <cause>`: an argument that is not a host array, or not registered
@usage local h = luacuda.zeros({1024})
luacuda.register(h)
luacuda.deregister(h)
*/

/* deregister(a, ...): end the registrations of these arrays' memory */
static int l_deregister(lua_State *L) {
  lc_buffer *bufs[MAX_ARGS];
  int n = host_args(L, bufs, MAX_ARGS, "deregister");
  char err[LC_ERRLEN] = "";
  int rc = LC_OK;
  wait_for_queued();
  pthread_mutex_lock(&mu);
  for (int i = 0; i < n && rc == LC_OK; i++) {
    uint64_t lock = atomic_load(&bufs[i]->lock);
    if (lock == 0 || (lock & 1)) {
      lc_errf(err, "argument %d is not registered%s", i + 1,
              lock ? " by register or pinned (a mapped array is over it: close that)" : "");
      rc = LC_EFAIL;
    }
  }
  for (int i = 0; i < n && rc == LC_OK; i++)
    rc = unlock_buffer(bufs[i], atomic_load(&bufs[i]->lock), err);
  pthread_mutex_unlock(&mu);
  if (rc != LC_OK) lc_error(L, "deregister", "%s", err);
  return 0;
}

static lc_registration *reg_check(lua_State *L, const char *fname) {
  lc_registration *r = luaL_testudata(L, 1, REG_MT);
  if (r == NULL)
    lc_error(L, fname, "expected a registration, got %s", luaL_typename(L, 1));
  return r;
}

static void reg_finish(lua_State *L, int idx) {
  lc_registration *r = lua_touserdata(L, idx);
  r->closing = false;
  reg_end(L, r, true);
}

static const lc_closer reg_closer = {reg_finish};

/***
The page-locking of host arrays' memory, from @{pinned} or @{register}.
@type Registration
*/

/***
Unregisters the memory now (or once the calls running have returned).
Idempotent.
@function Registration:close
@raise `luacuda.close: expected a registration, got <type>`
@usage local r = luacuda.pinned(luacuda.zeros({8}))
r:close()
*/

/***
`local r <close> = luacuda.pinned(a)`: unregisters when the variable goes
out of scope.
@function Registration:__close
@raise `luacuda.close: expected a registration, got <type>`
@usage do local _ <close> = luacuda.pinned(luacuda.zeros({8})) end
*/

/*** @section end */

/* __close and r:close(): unregister now, or once the calls running (which
** may be copying through the memory) have returned; idempotent */
static int reg_close(lua_State *L) {
  lc_registration *r = reg_check(L, "close");
  if (r->n > 0 && !r->closing) lc_close(L, 1, &reg_closer, &r->closing);
  return 0;
}

/* __gc: an unclosed registration lasts until deregister, or until its
** memory goes (the pair-of-calls use of register) */
static int reg_gc(lua_State *L) {
  reg_end(L, reg_check(L, "close"), false);
  return 0;
}

static int reg_tostring(lua_State *L) {
  lc_registration *r = reg_check(L, "tostring");
  if (r->n == 0 || r->closing) lua_pushliteral(L, REG_MT " (closed)");
  else lua_pushfstring(L, REG_MT " (%d array%s)", r->n, r->n == 1 ? "" : "s");
  return 1;
}

/* ---- mapped ------------------------------------------------------------- */

typedef struct mapping {
  lc_buffer *host;
  uint64_t lock;
} mapping;

/* The release of a mapped array's buffer: unregister, drop the host buffer. */
static void unmap(void *ud) {
  mapping *m = ud;
  char err[LC_ERRLEN];
  pthread_mutex_lock(&mu);
  unlock_buffer(m->host, m->lock, err);
  pthread_mutex_unlock(&mu);
  lc_buffer_release(m->host);
  free(m);
}

/* Register b as mapped memory; its device address in *dev. Under mu. */
static int map_buffer(lc_buffer *b, int i, mapping *m, void **dev, char *err) {
  if (locked_already(b, i, err)) return LC_EFAIL;
  int rc = lock_buffer(b, LC_ALLOC_DEVICEMAP, true, &m->lock, err);
  if (rc != LC_OK) return rc;
  rc = b->backend->host_device_pointer(b->ptr, dev, err);
  if (rc == LC_OK && *dev != b->ptr) {
    /* an array has one address for the host and the kernels */
    lc_errf(err, "the device address of mapped memory differs from its host "
            "address (the device has no unified addressing)");
    rc = LC_ENOTSUP;
  }
  if (rc != LC_OK) {
    char ignored[LC_ERRLEN];
    unlock_buffer(b, m->lock, ignored);
  }
  return rc;
}

/***
One array of kind `"mapped"` per host array, over the same memory, which is
registered as mapped while the new array lives: kernels then address the
host memory directly. A copy or an `out=` between the two that overlaps
gives NumPy's result, as views of one array do, and a host access through
either waits for the work queued through the other (a copy, a fill, array
math or a launch on a stream), as for the work queued through itself.
@function mapped
@tparam Array ... host arrays
@treturn Array ... the mapped arrays, in order
@raise `luacuda.mapped: <cause>`: an argument that is not a host array; memory registered already
@usage local h = luacuda.zeros({8}, "float32")
local m = luacuda.mapped(h)
assert(m.kind == "mapped")
*/

/* mapped(a, ...) -> one array of kind "mapped" per argument, over the same
** memory; each unregisters its memory when it closes (or is collected) */
static int l_mapped(lua_State *L) {
  lc_buffer *bufs[MAX_ARGS];
  int n = host_args(L, bufs, MAX_ARGS, "mapped");
  settle(bufs, n);
  for (int i = 0; i < n; i++) {      /* closed first: nothing to undo if this fails */
    const lc_array *a = lua_touserdata(L, i + 1);
    lc_array *v = lc_array_push_closed(L, a->dtype);
    v->lay = a->lay;
  }
  for (int i = 0; i < n; i++) {
    char err[LC_ERRLEN] = "out of host memory";
    int rc = LC_ENOMEM;
    void *dev = NULL;
    mapping *m = malloc(sizeof *m);
    if (m) {
      pthread_mutex_lock(&mu);
      rc = map_buffer(bufs[i], i + 1, m, &dev, err);
      pthread_mutex_unlock(&mu);
    }
    if (rc != LC_OK) {
      free(m);
      for (int j = 0; j < i; j++) {      /* nothing half-done */
        lc_array *done = lua_touserdata(L, n + 1 + j);
        lc_buffer *b = done->buf;
        done->buf = NULL;
        lc_buffer_release(b);
      }
      lc_error(L, "mapped", "%s", err);
    }
    lc_buffer_retain(bufs[i]);
    m->host = bufs[i];
    lc_array *v = lua_touserdata(L, n + 1 + i);
    v->buf = lc_buffer_wrap(L, LC_MAPPED, dev, bufs[i]->nbytes, unmap, m, "mapped");
  }
  return n;
}

/* ---- diagnostics ---------------------------------------------------------- */

/* _host_flags(a) -> {portable=, wc=, mapped=}: what the backend holds for
** the page-locked memory of a (for the specs: options reach the backend) */
static int l_host_flags(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "_host_flags");
  unsigned flags;
  char err[LC_ERRLEN];
  if (a->buf->backend->host_flags == NULL)
    lc_error(L, "_host_flags", "the %s backend has no host_flags", a->buf->backend->name);
  if (a->buf->backend->host_flags(a->buf->ptr, &flags, err))
    lc_error(L, "_host_flags", "%s", err);
  lua_createtable(L, 0, 3);
  lua_pushboolean(L, flags & LC_ALLOC_PORTABLE);
  lua_setfield(L, -2, "portable");
  lua_pushboolean(L, flags & LC_ALLOC_WRITECOMBINED);
  lua_setfield(L, -2, "wc");
  lua_pushboolean(L, flags & LC_ALLOC_DEVICEMAP);
  lua_setfield(L, -2, "mapped");
  return 1;
}

void lc_hostmem_open(lua_State *L) {
  static const luaL_Reg meta[] = {
    {"__close", reg_close},
    {"__gc", reg_gc},
    {"__tostring", reg_tostring},
    {NULL, NULL}
  };
  static const luaL_Reg methods[] = {
    {"close", reg_close},
    {NULL, NULL}
  };
  lc_new_type(L, REG_MT, meta, methods);
  static const char *const scopes[] = {"pinned", "register"};
  static const luaL_Reg reg = {"register", l_register};
  for (int i = 0; i < 2; i++) {
    lua_pushstring(L, scopes[i]);
    lc_pushfunction(L, &reg, 1);
    lua_setfield(L, -2, scopes[i]);
  }
  static const luaL_Reg fns[] = {
    {"pinned_array", l_pinned_array},
    {"mapped_array", l_mapped_array},
    {"managed_array", l_managed_array},
    {"deregister", l_deregister},
    {"mapped", l_mapped},
    {"_host_flags", l_host_flags},
    {NULL, NULL}
  };
  lc_setfuncs(L, fns);
}
