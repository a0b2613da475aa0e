/*
** stream: the Stream userdata (Event is event.c's), the stream argument
** every copy and launch takes, and the wait a host access does for queued
** work. Streams go by __gc or, at once, by <close> (after the calls
** running, gate.h); the backend keeps them alive until the work queued on
** them is done.
*/
#include "stream.h"

#include <string.h>

#include "args.h"
#include "gate.h"

#define STREAM_MT "luacuda.stream"
#define SCOPE_MT "luacuda.stream_scope"
#define DEFAULT_KEY "luacuda.default_stream"
#define HOST_KEY "luacuda.host_stream"

typedef struct stream_ud {
  lc_stream *s;                /* NULL once closed */
  int device;                  /* 0-based: the device current when it was made; -1 for
                               ** the default stream, every device's (the current one's) */
  bool is_default;
  bool non_blocking;           /* made so (stream{non_blocking=true}) */
  bool borrowed;               /* the host program's: never destroyed here */
  bool closing;                /* closed while a call ran: s goes later */
} stream_ud;

static const lc_backend *backend(void) { return lc_backend_get(NULL); }

static stream_ud *check_stream(lua_State *L, int idx, const char *fname) {
  stream_ud *u = luaL_testudata(L, idx, STREAM_MT);
  if (u == NULL) lc_error(L, fname, "expected a stream, got %s", lc_typename(L, idx));
  if (u->s == NULL || u->closing) lc_error(L, fname, "attempt to use a closed stream");
  return u;
}

/* Work is queued on a stream of the current device only. */
static void check_stream_device(lua_State *L, const stream_ud *u, const char *fname) {
  int here = backend()->current_device();
  if (u->device >= 0 && u->device != here)
    lc_error(L, fname, "the stream is on device %d, but device %d is current (luacuda.device)",
             u->device + 1, here + 1);
}

lc_stream *lc_opt_stream(lua_State *L, int idx, const char *fname) {
  if (lua_isnoneornil(L, idx)) return NULL;
  stream_ud *u = check_stream(L, idx, fname);
  check_stream_device(L, u, fname);
  return u->s;
}

void lc_sync_host_slow(lua_State *L, const char *fname) {
  char err[LC_ERRLEN];
  if (backend()->synchronize(err)) lc_error(L, fname, "%s", err);
}

/* ---- streams ------------------------------------------------------------- */

static stream_ud *push_stream(lua_State *L) {
  stream_ud *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->s = NULL;
  u->device = backend()->current_device();
  u->is_default = false;
  u->non_blocking = false;
  u->borrowed = false;
  u->closing = false;
  luaL_setmetatable(L, STREAM_MT);
  return u;
}

/*** @module luacuda */

/***
A new stream: a queue of device work, run in order. Functions that take a
stream queue their copies, fills, launches and math on it and return at
once; call @{Stream:synchronize} (or an event's) before reading the results
on the host.
@function stream
@tparam[opt] table opts `{non_blocking = false}`: a non-blocking stream's work is not
ordered with the default stream's (CUDA's `CU_STREAM_NON_BLOCKING`)
@treturn Stream
@raise `luacuda.stream: option non_blocking must be a boolean, got <type>`; an unknown
option; the driver's failure
@usage local s = luacuda.stream()
local d = luacuda.to_device({1, 2, 3}, s)
s:synchronize()
*/

/* stream([{non_blocking=false}]): a non-blocking stream's work is not
** ordered with the default stream's (CUDA's CU_STREAM_NON_BLOCKING); calls
** without a stream still wait for it */
static int l_stream(lua_State *L) {
  static const char *const keys[] = {"non_blocking", NULL};
  unsigned flags = 0;
  if (lc_check_opts(L, 1, keys, "stream")) {
    int t = lc_opt_get(L, 1, "non_blocking");
    if (t != LUA_TNIL && t != LUA_TBOOLEAN)
      lc_error(L, "stream", "option non_blocking must be a boolean, got %s",
               luaL_typename(L, -1));
    if (lua_toboolean(L, -1)) flags |= LC_STREAM_NONBLOCKING;
    lua_pop(L, 1);
  }
  stream_ud *u = push_stream(L);
  char err[LC_ERRLEN];
  if (backend()->stream_create(&u->s, flags, err)) lc_error(L, "stream", "%s", err);
  u->non_blocking = flags & LC_STREAM_NONBLOCKING;
  return 1;
}

/***
The default stream (one object per Lua state), which calls without a
stream use.
@function default_stream
@treturn Stream
@raise does not raise
@usage luacuda.default_stream():synchronize()
*/

/* default_stream(): one object per state */
static int l_default_stream(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, DEFAULT_KEY) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  stream_ud *u = push_stream(L);
  u->s = backend()->default_stream();
  u->device = -1;
  u->is_default = true;
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, DEFAULT_KEY);
  return 1;
}

/* Let go of the stream: destroy one of ours, unwrap the host's. */
static void stream_finish(lua_State *L, int idx) {
  stream_ud *u = lua_touserdata(L, idx);
  lc_stream *s = u->s;
  u->closing = false;
  if (s == NULL || u->is_default) return;
  u->s = NULL;
  backend()->stream_release(s);      /* the host's own stream is only let go of */
}

static const lc_closer stream_closer = {stream_finish};

/***
A queue of device work, from @{stream}, @{default_stream} or @{host_stream}.
Work queued on one stream runs in order; work on different streams may overlap.
@type Stream
*/

/***
`local s <close> = luacuda.stream()`: closes the stream when the variable
goes out of scope (as @{Stream:close}).
@function Stream:__close
@raise `luacuda.close: expected a stream, got <type>`
@usage do
  local s <close> = luacuda.stream()
  luacuda.device_array({8}, "float32", {stream = s}):fill(0, s)
  s:synchronize()
end
*/

/*** @section end */

/* __close and close(): the default stream and the host program's stream
** cannot be closed (scripts share them); while another call runs, which
** may hold the stream, it only reads as closed */
static int stream_release(lua_State *L) {
  stream_ud *u = lc_check_userdata(L, 1, STREAM_MT, "a stream", "close");
  if (!u->is_default && !u->borrowed && u->s && !u->closing)
    lc_close(L, 1, &stream_closer, &u->closing);
  return 0;
}

static int stream_gc(lua_State *L) {
  stream_finish(L, 1);
  return 0;
}

/***
The stream the host program set for scripts (the C API's
`luacuda_setstream`), else the default stream.
@function host_stream
@treturn Stream
@raise does not raise
@usage local s = luacuda.host_stream()
*/

/* host_stream(): the stream the host program set for scripts (the C API's
** luacuda_setstream), else the default stream */
static int l_host_stream(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, HOST_KEY) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  return l_default_stream(L);
}

void lc_set_host_stream(lua_State *L, void *native, const char *fname) {
  if (native == NULL) {
    lua_pushnil(L);
  } else {
    stream_ud *u = push_stream(L);
    char err[LC_ERRLEN];
    if (backend()->stream_wrap(native, &u->s, err)) lc_error(L, fname, "%s", err);
    u->borrowed = true;
  }
  lua_setfield(L, LUA_REGISTRYINDEX, HOST_KEY);
}

/* s's handle for a host program, which will queue work on it: ordered as
** luacuda's own work on s is (stream_host_use) */
static void *native_for_host(lua_State *L, lc_stream *s, const char *fname) {
  char err[LC_ERRLEN];
  if (backend()->stream_host_use && backend()->stream_host_use(s, err) != LC_OK)
    lc_error(L, fname, "%s", err);
  return backend()->stream_native(s);
}

void *lc_host_stream_native(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, HOST_KEY);
  stream_ud *u = luaL_testudata(L, -1, STREAM_MT);
  lua_pop(L, 1);       /* the registry keeps it alive */
  return native_for_host(L, u ? u->s : backend()->default_stream(), "getstream");
}

void *lc_stream_native_at(lua_State *L, int idx) {
  stream_ud *u = luaL_testudata(L, idx, STREAM_MT);
  return u && u->s && !u->closing ? native_for_host(L, u->s, "tostream") : NULL;
}

/*** @type Stream */

/***
Destroys the stream once the work queued on it is done; later use of it is
an error. The default stream and the host program's stream are not closed
(scripts share them).
@function Stream:close
@raise `luacuda.close: expected a stream, got <type>`
@usage local s = luacuda.stream()
s:close()
*/

/* s:close() */
static int stream_close(lua_State *L) {
  check_stream(L, 1, "close");
  return stream_release(L);
}

static void stream_sync(lua_State *L, lc_stream *s, const char *fname) {
  char err[LC_ERRLEN];
  if (backend()->stream_synchronize(s, err)) lc_error(L, fname, "%s", err);
}

/***
Waits until everything queued on the stream is done.
@function Stream:synchronize
@raise `luacuda.synchronize: <cause>`: a closed stream; the first failure of the
queued work (a kernel's fault)
@usage local s = luacuda.stream()
s:synchronize()
*/

/* s:synchronize() */
static int stream_synchronize(lua_State *L) {
  stream_sync(L, check_stream(L, 1, "synchronize")->s, "synchronize");
  lua_settop(L, 1);
  return 1;
}

/***
Whether everything queued on the stream is done (does not wait).
@function Stream:query
@treturn boolean
@raise `luacuda.query: <cause>`: a closed stream; a failure of the queued work
@usage local s = luacuda.stream()
while not s:query() do end
*/

/* s:query() -> true when everything queued on s is done */
static int stream_query(lua_State *L) {
  stream_ud *u = check_stream(L, 1, "query");
  bool idle;
  char err[LC_ERRLEN];
  if (backend()->stream_query(u->s, &idle, err)) lc_error(L, "query", "%s", err);
  lua_pushboolean(L, idle);
  return 1;
}

static int scope_close(lua_State *L) {
  lc_check_userdata(L, 1, SCOPE_MT, "a stream scope", "close");
  lua_getiuservalue(L, 1, 1);
  stream_ud *u = luaL_testudata(L, -1, STREAM_MT);
  if (u && u->s) stream_sync(L, u->s, "auto_synchronize");
  return 0;
}

/* with fn: call fn(s), then synchronize, also when fn raised */
static int auto_call_finish(lua_State *L, int status, lua_KContext ctx) {
  int base = (int)ctx;
  stream_ud *u = lua_touserdata(L, 1);
  char err[LC_ERRLEN];
  bool synced = u->s == NULL || backend()->stream_synchronize(u->s, err) == LC_OK;
  if (status != LUA_OK && status != LUA_YIELD) return lua_error(L);   /* fn's error first */
  if (!synced) lc_error(L, "auto_synchronize", "%s", err);
  return lua_gettop(L) - base;
}

/***
Synchronizes the stream when a scope ends, however it ends. Without `fn`:
a value for a `<close>` variable. With `fn`: calls `fn(s)`, then
synchronizes (also when `fn` raised), and returns `fn`'s results.
@function Stream:auto_synchronize
@tparam[opt] function fn called with the stream
@return without `fn`, a to-be-closed value; with `fn`, its results
@raise `luacuda.auto_synchronize: <cause>`: a closed stream; `fn`'s error (after synchronizing)
@usage local s = luacuda.stream()
do
  local _ <close> = s:auto_synchronize()
  luacuda.to_device({1, 2}, s)
end  -- s is synchronized here
local n = s:auto_synchronize(function(st) return 42 end)
*/

/*** @section end */

/* s:auto_synchronize([fn]): without fn, a to-be-closed value that
** synchronizes s when its scope ends, however it ends; with fn, fn(s)
** followed by the same, returning fn's results */
static int stream_auto_synchronize(lua_State *L) {
  check_stream(L, 1, "auto_synchronize");
  if (lua_isnoneornil(L, 2)) {
    lua_newuserdatauv(L, 1, 1);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    luaL_setmetatable(L, SCOPE_MT);
    return 1;
  }
  if (lua_type(L, 2) != LUA_TFUNCTION)
    lc_error(L, "auto_synchronize", "expected a function or nothing, got %s",
             luaL_typename(L, 2));
  lua_settop(L, 2);
  int base = 2;
  lua_pushvalue(L, 2);
  lua_pushvalue(L, 1);
  int status = lua_pcallk(L, 1, LUA_MULTRET, 0, base, auto_call_finish);
  return auto_call_finish(L, status, base);
}

static int stream_tostring(lua_State *L) {
  stream_ud *u = lc_check_userdata(L, 1, STREAM_MT, "a stream", "tostring");
  if (u->is_default) lua_pushliteral(L, "luacuda.stream(default)");
  else if (u->s == NULL || u->closing) lua_pushliteral(L, "luacuda.stream(closed)");
  else lua_pushfstring(L, "luacuda.stream(%p%s)", (void *)u->s,
                       u->non_blocking ? ", non-blocking" : "");
  return 1;
}

/* Closing the state waits for the work it queued, so a script's last
** launches finish (and their printf output appears) before it ends. */
static int wait_at_close(lua_State *L) {
  (void)L;
  backend()->synchronize(NULL);
  return 0;
}

/* ---- registration ---------------------------------------------------------- */

void lc_stream_open(lua_State *L) {
  static const luaL_Reg stream_meta[] = {
    {"__gc", stream_gc}, {"__close", stream_release},
    {"__tostring", stream_tostring}, {NULL, NULL}
  };
  static const luaL_Reg stream_methods[] = {
    {"synchronize", stream_synchronize}, {"query", stream_query},
    {"auto_synchronize", stream_auto_synchronize}, {"close", stream_close},
    {NULL, NULL}
  };
  static const luaL_Reg scope_meta[] = {{"__close", scope_close}, {NULL, NULL}};
  static const luaL_Reg fns[] = {
    {"stream", l_stream}, {"default_stream", l_default_stream},
    {"host_stream", l_host_stream},
    {NULL, NULL}
  };
  lc_new_type(L, STREAM_MT, stream_meta, stream_methods);
  lc_new_type(L, SCOPE_MT, scope_meta, NULL);
  lc_setfuncs(L, fns);
  if (lua_getfield(L, LUA_REGISTRYINDEX, "luacuda.wait_at_close") == LUA_TNIL) {
    static const luaL_Reg wait_meta[] = {{"__gc", wait_at_close}, {NULL, NULL}};
    lua_newuserdatauv(L, 0, 0);
    lua_createtable(L, 0, 2);
    lc_setfuncs(L, wait_meta);
    lua_pushliteral(L, "luacuda.wait_at_close");
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, "luacuda.wait_at_close");
  }
  lua_pop(L, 1);
}
