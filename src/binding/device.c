/*
** device: which devices there are and which one is current. The current
** device is the calling OS thread's, as in the CUDA runtime (the backends
** keep it per thread): select_device on one thread moves no other
** thread's work, and a thread that never chose one uses device 1.
** device(i) is the scoped form: a value whose close makes the device that
** was current before current again. get_limit and set_limit read and raise
** the current device's limits (a recursive kernel's stack, a chatty
** kernel's printf).
*/
#include "device.h"

#include <stdio.h>
#include <string.h>

#include "gate.h"
#include "args.h"
#include "parts.h"

#define SCOPE_MT "luacuda.device_scope"

typedef struct device_scope {
  int device;      /* 0-based: the one made current */
  int previous;    /* 0-based: the one current before, made current at close */
  bool closed;
} device_scope;

static const lc_backend *backend(void) { return lc_backend_get(NULL); }

/* The 0-based index of device argument idx (counted from 1), or the error. */
static int check_device_index(lua_State *L, int idx, const char *what, const char *fname) {
  lua_Integer i = lc_check_integer(L, idx, what, 0, fname);
  int n = backend()->device_count();
  if (i < 1 || i > n) {
    char hint[96] = "";
    if (i < 1 && strcmp(what, "device") == 0)    /* device(i), select_device(i) */
      snprintf(hint, sizeof hint, ": luacuda counts devices from 1 (the first is %s(1))", fname);
    else if (i < 1)
      snprintf(hint, sizeof hint, ": luacuda counts devices from 1");
    lc_error(L, fname, "no device %lld (there %s %d)%s", (long long)i, n == 1 ? "is" : "are", n,
             hint);
  }
  return (int)i - 1;
}

static void make_current(lua_State *L, int device, const char *fname) {
  char err[LC_ERRLEN];
  if (backend()->select_device(device, err)) lc_error(L, fname, "%s", err);
}

/*** @module luacuda */

/***
The devices the backend sees. On the simulator, `LUACUDA_SIM_DEVICES=n`
(1 to 16; default 1) gives `n` virtual devices, each with its own memory
accounting (`memory_info` while it is current).
@function devices
@treturn table a sequence of `{name =, compute_capability = {major, minor},
memory =, multiprocessors =, max_shared_per_block =}`
@raise `luacuda.devices: <driver error>` when a device cannot be queried
@usage for i, d in ipairs(luacuda.devices()) do print(i, d.name, d.memory) end
*/

/* devices() -> {{name=, compute_capability={maj, min}, memory=,
** multiprocessors=, max_shared_per_block=}, ...} */
static int l_devices(lua_State *L) {
  const lc_backend *be = backend();
  int n = be->device_count();
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lc_device_info info;
    char err[LC_ERRLEN];
    if (be->device_info(i, &info, err)) lc_error(L, "devices", "%s", err);
    lua_createtable(L, 0, 5);
    lua_pushstring(L, info.name);
    lua_setfield(L, -2, "name");
    lua_createtable(L, 2, 0);
    lua_pushinteger(L, info.cc_major);
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, info.cc_minor);
    lua_rawseti(L, -2, 2);
    lua_setfield(L, -2, "compute_capability");
    lua_pushinteger(L, (lua_Integer)info.memory);
    lua_setfield(L, -2, "memory");
    lua_pushinteger(L, info.multiprocessors);
    lua_setfield(L, -2, "multiprocessors");
    lua_pushinteger(L, (lua_Integer)info.max_shared_per_block);
    lua_setfield(L, -2, "max_shared_per_block");
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/***
Makes device `i` current for the calling thread (as in the CUDA runtime:
other threads keep theirs). Arrays, streams, events and modules made from
then on belong to it. `device(i)` does the same for a scope.
@function select_device
@tparam integer i the device, counted from 1
@raise `luacuda.select_device: no device 3 (there is 1)` when out of range
@usage luacuda.select_device(1)
*/

/* select_device(i): make device i (1-based) current for the calling thread */
static int l_select_device(lua_State *L) {
  make_current(L, check_device_index(L, 1, "device", "select_device"), "select_device");
  return 0;
}

/***
The calling thread's current device.
@function current_device
@treturn integer its index, counted from 1 (1 on a thread that never chose one)
@raise does not raise
@usage assert(luacuda.current_device() >= 1)
*/

/* current_device() -> the 1-based index of the current device */
static int l_current_device(lua_State *L) {
  lua_pushinteger(L, backend()->current_device() + 1);
  return 1;
}

/***
Makes device `i` current until the value it returns is closed: a
`<close>` variable, or its `close` method; then the device current before
is current again.
@function device
@tparam integer i the device, counted from 1
@treturn DeviceScope the scope (closing it twice does nothing more)
@raise `luacuda.device: no device 0 (there is 1): luacuda counts devices
from 1` when out of range
@usage do
  local _ <close> = luacuda.device(1)
  local x = luacuda.device_array({4}, "float32")   -- on device 1
end
*/

/* Push a scope with device (0-based) current until it is closed. */
static void push_scope(lua_State *L, int device, const char *fname) {
  device_scope *s = lua_newuserdatauv(L, sizeof *s, 0);
  s->device = device;
  s->previous = backend()->current_device();
  s->closed = true;             /* until the selection below has happened */
  luaL_setmetatable(L, SCOPE_MT);
  make_current(L, device, fname);
  s->closed = false;
}

/* device(i) -> a scope: device i current until it is closed */
static int l_device(lua_State *L) {
  push_scope(L, check_device_index(L, 1, "device", "device"), "device");
  return 1;
}

/*** @type DeviceScope */

/***
`local _ <close> = luacuda.device(i)`: when the variable goes out of scope,
makes the device current before `device(i)` current again (as
@{DeviceScope:close}).
@function DeviceScope:__close
@raise `luacuda.close: expected a device scope, got <type>`
@usage do
  local _ <close> = luacuda.device(1)
  assert(luacuda.current_device() == 1)
end
*/

/***
Makes the device that was current before `device(i)` current again (what
`<close>` does). Once only: later calls do nothing.
@function DeviceScope:close
@raise `luacuda.close: expected a device scope, got <type>` for another
value
@usage local scope = luacuda.device(1)
scope:close()
scope:close()   -- nothing more
*/
static int scope_close(lua_State *L) {
  device_scope *s = lc_check_userdata(L, 1, SCOPE_MT, "a device scope", "close");
  if (s->closed) return 0;
  s->closed = true;
  make_current(L, s->previous, "close");
  return 0;
}

static int scope_tostring(lua_State *L) {
  device_scope *s = lc_check_userdata(L, 1, SCOPE_MT, "a device scope", "__tostring");
  lua_pushfstring(L, "luacuda.device(%d)%s", s->device + 1, s->closed ? " (closed)" : "");
  return 1;
}

/*** @section end */

void lc_device_option(lua_State *L, int idx, const char *fname) {
  push_scope(L, check_device_index(L, idx, "option device", fname), fname);
  lua_toclose(L, -1);
}

void lc_check_current_device(lua_State *L, const lc_array *a, const char *what,
                             const char *fname) {
  const lc_buffer *b = a->buf;
  int here = b->backend->current_device();
  if (b->kind == LC_DEVICE && b->device != here)
    lc_error(L, fname, "the %s array is on device %d, but device %d is current "
             "(luacuda.device)", what, b->device + 1, here + 1);
}

/* The limits, by the names the CUDA runtime's cudaLimit* give them. */
static const char *const limit_names[LC_NLIMITS] = {"stack_size", "printf_fifo_size"};

static lc_limit check_limit(lua_State *L, int idx, const char *fname) {
  const char *name = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : NULL;
  for (int i = 0; name && i < LC_NLIMITS; i++)
    if (strcmp(name, limit_names[i]) == 0) return (lc_limit)i;
  if (name == NULL)
    lc_error(L, fname, "the limit must be a string (\"stack_size\" or \"printf_fifo_size\"), "
             "got %s", luaL_typename(L, idx));
  lc_error(L, fname, "no limit '%s' (\"stack_size\" or \"printf_fifo_size\")", name);
  return LC_LIMIT_STACK;   /* not reached */
}

/***
A limit of the current device, in bytes: `"stack_size"`, the stack of each
kernel thread (what a recursive kernel's depth needs), or
`"printf_fifo_size"`, what kernels' `printf` output holds between two
deliveries (a kernel launch, a synchronize, a blocking copy). On CUDA the
driver's defaults are 1024 and 1 MiB; the driver raises the stack for a
kernel that needs more, when it can tell before the kernel runs (not for
recursion). On the simulator the values are kept and read back only: its
threads have `LUACUDA_SIM_STACK` bytes of host stack and its `printf`
writes at once.
@function get_limit
@tparam string name `"stack_size"` or `"printf_fifo_size"`
@treturn integer the limit, in bytes
@raise `luacuda.get_limit: no limit '<name>' ("stack_size" or
"printf_fifo_size")` for another name, or the driver's error
@usage assert(luacuda.get_limit("stack_size") > 0)
*/

/* get_limit(name) -> bytes */
static int l_get_limit(lua_State *L) {
  lc_limit which = check_limit(L, 1, "get_limit");
  size_t v = 0;
  char err[LC_ERRLEN];
  if (backend()->get_limit(which, &v, err)) lc_error(L, "get_limit", "%s", err);
  lua_pushinteger(L, (lua_Integer)v);
  return 1;
}

/***
Sets a limit of the current device (see `get_limit`) for the kernels
launched from then on: raise `"stack_size"` for a kernel that recurses
deeper than the stack holds (on CUDA a kernel past it fails with
`CUDA_ERROR_HARDWARE_STACK_ERROR`, which ends the process's use of the
device), and `"printf_fifo_size"` for a kernel that prints more than the
FIFO holds (the driver keeps the newest output and loses the oldest).
On CUDA the FIFO's size can be set only before the first kernel that
calls `printf` is launched on the device. The driver may round or clamp
the value (the fake driver clamps the stack to 512 KiB): the one it took
is returned.
@function set_limit
@tparam string name `"stack_size"` or `"printf_fifo_size"`
@tparam integer bytes the new limit, 0 or more
@treturn integer the limit the device took, in bytes
@raise `luacuda.set_limit: no limit '<name>' ("stack_size" or
"printf_fifo_size")` for another name; `luacuda.set_limit: bytes must be 0
or more, got <n>`; `luacuda.set_limit: the printf FIFO's size cannot change
once a kernel that calls printf was launched on the device (cuCtxSetLimit:
CUDA_ERROR_INVALID_VALUE)`; `luacuda.set_limit: the device has no memory
for a stack of <n> bytes for each thread it holds; the limit is unchanged
(cuCtxSetLimit: CUDA_ERROR_OUT_OF_MEMORY)` (a GPU reserves the stack for
every thread it can hold at once); or the driver's error
@usage local took = luacuda.set_limit("stack_size", 16 * 1024)
*/

/* set_limit(name, bytes) -> the bytes the device took */
static int l_set_limit(lua_State *L) {
  lc_limit which = check_limit(L, 1, "set_limit");
  int64_t bytes = lc_check_integer(L, 2, "bytes", 0, "set_limit");
  if (bytes < 0) lc_error(L, "set_limit", "bytes must be 0 or more, got %lld", (long long)bytes);
  size_t took = 0;
  char err[LC_ERRLEN];
  if (backend()->set_limit(which, (size_t)bytes, &took, err)) lc_error(L, "set_limit", "%s", err);
  lua_pushinteger(L, (lua_Integer)took);
  return 1;
}

void lc_device_open(lua_State *L) {
  static const luaL_Reg scope_meta[] = {
    {"__close", scope_close}, {"__tostring", scope_tostring}, {NULL, NULL}
  };
  static const luaL_Reg scope_methods[] = {{"close", scope_close}, {NULL, NULL}};
  static const luaL_Reg fns[] = {
    {"current_device", l_current_device}, {"device", l_device},
    {"devices", l_devices}, {"select_device", l_select_device},
    {"get_limit", l_get_limit}, {"set_limit", l_set_limit},
    {NULL, NULL}
  };
  lc_new_type(L, SCOPE_MT, scope_meta, scope_methods);
  lc_setfuncs(L, fns);
}
