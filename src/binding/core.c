/*
** core: the assembler. luaopen_luacuda_core builds the module from the
** parts (parts.h), in one place; it also holds the few functions about
** the backend and its memory (device.c: which device is current).
*/
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "array.h"
#include "gate.h"
#include "hostcache.h"
#include "args.h"
#include "parts.h"

/***
GPU arrays and CUDA kernels for Lua 5.4.

`local luacuda = require "luacuda"` gives this module. Arrays live in one
of five kinds of memory (`"host"`, `"pinned"`, `"mapped"`, `"managed"`,
`"device"`); kernels are CUDA C++ compiled at run time. Two backends run
them: `cuda` (the CUDA driver and NVRTC) and `sim` (the host C++ compiler;
no GPU needed). Axes, indices and devices count from 1.

Every error is a Lua error whose message starts with `luacuda.<fn>: `,
naming the function called, and leaves everything as it was.
@module luacuda
*/

/***
The backend in use and why it was chosen.
@function backend
@treturn string `"cuda"` or `"sim"`
@treturn string why this one (for example why CUDA was not usable)
@raise does not raise
@usage local name, why = luacuda.backend()
print(name, why)
*/

/* backend() -> name, reason */
static int l_backend(lua_State *L) {
  const char *why;
  const lc_backend *be = lc_backend_get(&why);
  lua_pushstring(L, be->name);
  lua_pushstring(L, why);
  return 2;
}

/***
Device memory, in bytes, and the memory kept for reuse.
Freed arrays' memory is kept, by size, for the next array of that size
(a caching allocator: on the simulator per device, on CUDA the driver's
stream-ordered pool), and so is large host arrays' memory; `free_cached`
gives it back.
@function memory_info
@treturn table `{free =, total =, used =, cached =, host_cached =}`: `used`
the bytes of live device arrays of the current device, `cached` the bytes
of its freed ones kept for reuse, `host_cached` those of host arrays; with
`pool_reserved` and `pool_used` where the backend allocates from a pool
@raise does not raise
@usage local m = luacuda.memory_info()
print(m.free, m.total, m.used, m.cached)
*/

/* memory_info() -> {free=, total=, used=}: device memory, in bytes */
static int l_memory_info(lua_State *L) {
  size_t free_b, total, used;
  lc_backend_get(NULL)->mem_info(&free_b, &total, &used);
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, (lua_Integer)free_b);
  lua_setfield(L, -2, "free");
  lua_pushinteger(L, (lua_Integer)total);
  lua_setfield(L, -2, "total");
  lua_pushinteger(L, (lua_Integer)used);
  lua_setfield(L, -2, "used");
  const lc_backend *be = lc_backend_get(NULL);
  size_t reserved, in_use, cached = 0;
  if (be->pool_info && be->pool_info(&reserved, &in_use) == LC_OK) {
    lua_pushinteger(L, (lua_Integer)reserved);
    lua_setfield(L, -2, "pool_reserved");
    lua_pushinteger(L, (lua_Integer)in_use);
    lua_setfield(L, -2, "pool_used");
    cached = reserved > in_use ? reserved - in_use : 0;
  }
  lua_pushinteger(L, (lua_Integer)cached);
  lua_setfield(L, -2, "cached");
  lua_pushinteger(L, (lua_Integer)lc_hostcache_bytes());
  lua_setfield(L, -2, "host_cached");
  return 1;
}

/***
Gives the memory kept for reuse back: the current device's freed blocks
(the pool's, on CUDA, as `trim_pool` does) and the host arrays' freed
blocks. Live arrays are left as they are; memory that queued work still
uses goes once that work is done. An allocation that finds the device full
does this by itself.
@function free_cached
@raise `luacuda.free_cached: <driver error>` when the driver fails
@usage local a = luacuda.to_device(luacuda.zeros({1000}))
a:close()
luacuda.free_cached()
print(luacuda.memory_info().cached)   --> 0
*/
static int l_free_cached(lua_State *L) {
  char err[LC_ERRLEN];
  const lc_backend *be = lc_backend_get(NULL);
  lc_hostcache_trim();
  if (be->trim_pool && be->trim_pool(err)) lc_error(L, "free_cached", "%s", err);
  return 0;
}

/***
Gives the memory that the allocator's pool holds unused back to the device
(a no-op where there is no pool).
@function trim_pool
@raise `luacuda.trim_pool: <driver error>` when the driver fails
@usage luacuda.trim_pool()
*/

/* trim_pool(): give the memory the allocator's pool holds unused back to
** the device (a no-op where there is no pool) */
static int l_trim_pool(lua_State *L) {
  char err[LC_ERRLEN];
  const lc_backend *be = lc_backend_get(NULL);
  if (be->trim_pool && be->trim_pool(err)) lc_error(L, "trim_pool", "%s", err);
  return 0;
}

/***
Waits for all queued device work, on every stream.
@function synchronize
@raise the first failure of that work not reported yet (a kernel's fault,
for example), as `luacuda.synchronize: <cause>`
@usage luacuda.synchronize()
*/

/* synchronize(): wait for all queued device work, on every stream, and
** raise the first failure of it not reported yet */
static int l_synchronize(lua_State *L) {
  char err[LC_ERRLEN];
  if (lc_backend_get(NULL)->synchronize(err)) lc_error(L, "synchronize", "%s", err);
  return 0;
}

/***
Tells arrays from other values, as `io.type` does for files.
@function type
@param x any value
@treturn string|nil `"array"`, `"closed array"`, or fail (nil) for anything else
@raise `luacuda.type: expected a value, got no value` when called without an argument
@usage assert(luacuda.type(luacuda.zeros({2})) == "array")
assert(luacuda.type({}) == nil)
*/

/* type(x) -> "array" | "closed array" | fail, as io.type does for files */
static int l_type(lua_State *L) {
  if (lua_isnone(L, 1)) lc_error(L, "type", "expected a value, got no value");
  lc_array *a = lc_array_test(L, 1);
  if (a == NULL) luaL_pushfail(L);
  else lua_pushstring(L, lc_array_is_open(a) ? "array" : "closed array");
  return 1;
}

/***
Seconds from a monotonic clock, for timing (`os.clock` is the CPU time of
every thread, and the simulator runs many).
@function clock
@treturn number seconds
@raise does not raise
@usage local t0 = luacuda.clock()
luacuda.synchronize()
print(luacuda.clock() - t0)
*/

/* clock() -> seconds from a monotonic clock, for timing (os.clock is the
** CPU time of all threads, and the simulator runs many) */
static int l_clock(lua_State *L) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  lua_pushnumber(L, (lua_Number)t.tv_sec + (lua_Number)t.tv_nsec * 1e-9);
  return 1;
}

static const luaL_Reg fns[] = {
  {"backend", l_backend},
  {"clock", l_clock},
  {"free_cached", l_free_cached},
  {"memory_info", l_memory_info},
  {"synchronize", l_synchronize},
  {"trim_pool", l_trim_pool},
  {"type", l_type},
  {NULL, NULL}
};

LC_EXPORT int luaopen_luacuda_core(lua_State *L) {
  const char *why;
  if (lc_backend_get(&why) == NULL) return luaL_error(L, "luacuda: %s", why);
  lua_newtable(L);
  lc_setfuncs(L, fns);
  lc_device_open(L);
  lc_array_open(L);
  lc_index_open(L);
  lc_iterate_open(L);
  lc_shape_open(L);
  lc_copy_open(L);
  lc_element_open(L);
  lc_record_open(L);
  lc_create_open(L);
  lc_join_open(L);
  lc_convert_open(L);
  lc_module_open(L);
  lc_kernel_open(L);
  lc_stream_open(L);
  lc_event_open(L);
  lc_ptx_open(L);
  lc_hostmem_open(L);
  lc_dlpack_open(L);
  lc_reduce_open(L);
  lc_math_open(L);
  lc_random_open(L);
  lc_matmul_open(L);
  lc_npy_open(L);
  lc_gather_open(L);
  lc_sort_open(L);
  return 1;
}
