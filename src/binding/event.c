/*
** event: the Event userdata, a marker recorded on a stream: waited for,
** ordering streams, timing work. Events go by __gc or, at once, by
** <close> (after the calls running, gate.h), as streams do (stream.c).
*/
#include <string.h>

#include "args.h"
#include "gate.h"
#include "stream.h"

#define EVENT_MT "luacuda.event"

typedef struct event_ud {
  lc_event *e;                 /* NULL once closed */
  int device;                  /* 0-based: the device current when it was made */
  bool timing;
  bool recorded;               /* at least once: it has a time */
  bool closing;
} event_ud;

static const lc_backend *backend(void) { return lc_backend_get(NULL); }

static event_ud *check_event(lua_State *L, int idx, const char *fname) {
  event_ud *u = luaL_testudata(L, idx, EVENT_MT);
  if (u == NULL) lc_error(L, fname, "expected an event, got %s", lc_typename(L, idx));
  if (u->e == NULL || u->closing) lc_error(L, fname, "attempt to use a closed event");
  return u;
}

/* The stream at idx, or the default stream for nil. */
static lc_stream *stream_or_default(lua_State *L, int idx, const char *fname) {
  lc_stream *s = lc_opt_stream(L, idx, fname);
  return s ? s : backend()->default_stream();
}

/*** @module luacuda */

/***
A new event: a marker recorded on a stream, to wait for, to order streams
by, or to time work with.
@function event
@tparam[opt] table opts `{timing = true}`: `false` makes an event without timing (lighter)
@treturn Event
@raise `luacuda.event: option timing must be a boolean, got <type>`; an unknown option
@usage local e = luacuda.event()
e:record()
e:synchronize()
*/

/* event([{timing=true}]) */
static int l_event(lua_State *L) {
  static const char *const keys[] = {"timing", NULL};
  bool timing = true;
  if (lc_check_opts(L, 1, keys, "event")) {
    int t = lc_opt_get(L, 1, "timing");
    if (t != LUA_TNIL && t != LUA_TBOOLEAN)
      lc_error(L, "event", "option timing must be a boolean, got %s", luaL_typename(L, -1));
    if (t == LUA_TBOOLEAN) timing = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  event_ud *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->e = NULL;
  u->device = backend()->current_device();
  u->timing = timing;
  u->recorded = false;
  u->closing = false;
  luaL_setmetatable(L, EVENT_MT);
  char err[LC_ERRLEN];
  if (backend()->event_create(&u->e, timing, err)) lc_error(L, "event", "%s", err);
  return 1;
}

static void event_finish(lua_State *L, int idx) {
  event_ud *u = lua_touserdata(L, idx);
  lc_event *e = u->e;
  u->e = NULL;
  u->closing = false;
  if (e) backend()->event_destroy(e);
}

static const lc_closer event_closer = {event_finish};

/***
A marker in a stream's work, from @{event}.
@type Event
*/

/***
`local e <close> = luacuda.event()`: destroys the event when the variable
goes out of scope (as @{Event:close}).
@function Event:__close
@raise `luacuda.close: expected an event, got <type>`
@usage do
  local e <close> = luacuda.event()
  e:record()
end
*/

/* __close and close(); after the calls running, as streams */
static int event_release(lua_State *L) {
  event_ud *u = lc_check_userdata(L, 1, EVENT_MT, "an event", "close");
  if (u->e && !u->closing) lc_close(L, 1, &event_closer, &u->closing);
  return 0;
}

static int event_gc(lua_State *L) {
  event_finish(L, 1);
  return 0;
}

/***
Destroys the event; later use of it is an error.
@function Event:close
@raise `luacuda.close: expected an event, got <type>`
@usage local e = luacuda.event()
e:close()
*/

/* e:close() */
static int event_close(lua_State *L) {
  check_event(L, 1, "close");
  return event_release(L);
}

/***
Records the event on a stream: it happens when the work queued there
before it is done.
@function Event:record
@tparam[opt] Stream stream the default stream when not given
@treturn Event the event
@raise `luacuda.record: <cause>`: a closed event or stream
@usage local s = luacuda.stream()
local e = luacuda.event()
e:record(s)
*/

/* e:record([stream]): on the default stream when none is given */
static int event_record(lua_State *L) {
  event_ud *u = check_event(L, 1, "record");
  lc_stream *s = stream_or_default(L, 2, "record");
  int here = backend()->current_device();
  if (u->device != here)     /* a wait may take an event of another device; a record not */
    lc_error(L, "record", "the event is on device %d, but device %d is current "
             "(luacuda.device)", u->device + 1, here + 1);
  char err[LC_ERRLEN];
  if (backend()->event_record(u->e, s, err)) lc_error(L, "record", "%s", err);
  u->recorded = true;
  lua_settop(L, 1);
  return 1;
}

/***
Makes work queued on `stream` from now on wait for the event (without
blocking the host): orders two streams.
@function Event:wait
@tparam[opt] Stream stream the default stream when not given
@raise `luacuda.wait: <cause>`: a closed event or stream
@usage local s1, s2 = luacuda.stream(), luacuda.stream()
local e = luacuda.event()
e:record(s1)
e:wait(s2)  -- s2's next work starts after s1's work so far
*/

/* e:wait([stream]): work queued on the stream from now on waits for e */
static int event_wait(lua_State *L) {
  event_ud *u = check_event(L, 1, "wait");
  lc_stream *s = stream_or_default(L, 2, "wait");
  char err[LC_ERRLEN];
  if (backend()->event_wait(u->e, s, err)) lc_error(L, "wait", "%s", err);
  lua_settop(L, 1);
  return 1;
}

/***
Waits until the event has happened (its record's work is done).
@function Event:synchronize
@raise `luacuda.synchronize: <cause>`: a closed event; a failure of the work before it
@usage local e = luacuda.event()
e:record()
e:synchronize()
*/

/* e:synchronize() */
static int event_synchronize(lua_State *L) {
  event_ud *u = check_event(L, 1, "synchronize");
  char err[LC_ERRLEN];
  if (backend()->event_synchronize(u->e, err)) lc_error(L, "synchronize", "%s", err);
  lua_settop(L, 1);
  return 1;
}

/***
Whether the event's last record has happened (true when never recorded).
Does not wait.
@function Event:query
@treturn boolean
@raise `luacuda.query: <cause>`: a closed event
@usage local e = luacuda.event()
assert(e:query())
*/

/* e:query() -> true when its last record has happened (or it has none) */
static int event_query(lua_State *L) {
  event_ud *u = check_event(L, 1, "query");
  bool complete;
  char err[LC_ERRLEN];
  if (backend()->event_query(u->e, &complete, err)) lc_error(L, "query", "%s", err);
  lua_pushboolean(L, complete);
  return 1;
}

static int elapsed(lua_State *L, const char *fname) {
  event_ud *a = check_event(L, 1, fname), *b = check_event(L, 2, fname);
  /* what every backend would refuse, checked here once: the backends
  ** tell only whether the records have happened */
  if (!a->timing || !b->timing)
    lc_error(L, fname, "an event created with {timing=false} has no time");
  if (!a->recorded || !b->recorded)
    lc_error(L, fname, "the %s event has not been recorded", a->recorded ? "end" : "start");
  float ms;
  char err[LC_ERRLEN];
  if (backend()->event_elapsed(a->e, b->e, &ms, err)) lc_error(L, fname, "%s", err);
  lua_pushnumber(L, ms);
  return 1;
}

/***
Milliseconds from this event to `e2`, both recorded and happened.
@function Event:elapsed_time
@tparam Event e2 the later event
@treturn number milliseconds
@raise `luacuda.elapsed_time: an event created with {timing=false} has no time`;
`the start event has not been recorded`; the driver's error while not yet happened
@usage local e1, e2 = luacuda.event(), luacuda.event()
e1:record()
luacuda.zeros_like(luacuda.device_array({1024}))
e2:record()
e2:synchronize()
print(e1:elapsed_time(e2))
*/

/*** @section end */

/* e:elapsed_time(e2) -> milliseconds from e to e2 */
static int event_elapsed_time(lua_State *L) { return elapsed(L, "elapsed_time"); }

/***
`luacuda.event_elapsed_time(e1, e2)`: the same as `e1:elapsed_time(e2)`.
@function event_elapsed_time
@tparam Event e1 the start
@tparam Event e2 the end
@treturn number milliseconds
@raise as @{Event:elapsed_time}, with `luacuda.event_elapsed_time:`
@usage local e1, e2 = luacuda.event(), luacuda.event()
e1:record(); e2:record(); e2:synchronize()
print(luacuda.event_elapsed_time(e1, e2))
*/

/* event_elapsed_time(e1, e2) */
static int l_event_elapsed_time(lua_State *L) { return elapsed(L, "event_elapsed_time"); }

static int event_tostring(lua_State *L) {
  event_ud *u = lc_check_userdata(L, 1, EVENT_MT, "an event", "tostring");
  if (u->e == NULL || u->closing) lua_pushliteral(L, "luacuda.event(closed)");
  else lua_pushfstring(L, "luacuda.event(%p%s)", (void *)u->e, u->timing ? "" : ", no timing");
  return 1;
}

void lc_event_open(lua_State *L) {
  static const luaL_Reg event_meta[] = {
    {"__gc", event_gc}, {"__close", event_release},
    {"__tostring", event_tostring}, {NULL, NULL}
  };
  static const luaL_Reg event_methods[] = {
    {"record", event_record}, {"wait", event_wait}, {"synchronize", event_synchronize},
    {"query", event_query}, {"elapsed_time", event_elapsed_time}, {"close", event_close},
    {NULL, NULL}
  };
  static const luaL_Reg fns[] = {
    {"event", l_event}, {"event_elapsed_time", l_event_elapsed_time},
    {NULL, NULL}
  };
  lc_new_type(L, EVENT_MT, event_meta, event_methods);
  lc_setfuncs(L, fns);
}
