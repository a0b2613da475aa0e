/*
** gate: the frames of the luacuda calls running in a state, and the closes
** put off until they return (see gate.h).
**
** A call is recorded by the address of its gate's C frame. A call that
** raises never reaches the end of its gate, so its record stays behind;
** records are therefore trusted only as far as the C stack allows: the
** stack grows down, so a running call's callers all have higher frame
** addresses, and a record at or below the frame of a gate being entered or
** left belongs to a call that has ended. A leftover record can only make a
** close wait longer (until a call at its depth or above), never make one
** early; and on the main thread, where the Lua call stack shows every
** running call, a close checks before it waits.
*/
#include "gate.h"

#include <stdint.h>
#include <string.h>

#define MAX_FRAMES 256          /* Lua allows 200 nested C calls */

typedef struct lc_gate {
  int nframes;
  int npending;                 /* closes put off: pairs in the pending table */
  bool draining;
  uintptr_t frame[MAX_FRAMES];  /* outermost first */
} lc_gate;

static const char gate_key = 0;  /* the registry's key for the state's lc_gate */

/* Push the state's gate userdata (uservalue 1: the pending table), made on
** first use. */
static lc_gate *push_gate(lua_State *L) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &gate_key) != LUA_TNIL) return lua_touserdata(L, -1);
  lua_pop(L, 1);
  lc_gate *g = lua_newuserdatauv(L, sizeof *g, 1);
  memset(g, 0, sizeof *g);
  lua_newtable(L);
  lua_setiuservalue(L, -2, 1);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &gate_key);
  return g;
}

/* Finish the closes put off, now that no call is running. gidx: the gate
** userdata. Raises nothing, allocates nothing, so the collector cannot run
** Lua code in the middle. */
static void drain(lua_State *L, lc_gate *g, int gidx) {
  if (g->draining || !lua_checkstack(L, 3)) return;   /* else: at the next call */
  g->draining = true;
  lua_getiuservalue(L, gidx, 1);
  int t = lua_gettop(L);
  for (int i = 1; i <= g->npending; i++) {
    lua_rawgeti(L, t, 2 * i - 1);
    lua_rawgeti(L, t, 2 * i);
    const lc_closer *c = lua_touserdata(L, -1);
    c->finish(L, t + 1);
    lua_pop(L, 2);
    lua_pushnil(L);
    lua_rawseti(L, t, 2 * i - 1);
    lua_pushnil(L);
    lua_rawseti(L, t, 2 * i);
  }
  g->npending = 0;
  lua_pop(L, 1);
  g->draining = false;
}

/* Drop the records at or below frame fp: calls that have ended. */
static inline int forget_below(lc_gate *g, uintptr_t fp) {
  int n = g->nframes;
  while (n > 0 && g->frame[n - 1] <= fp) n--;
  return g->nframes = n;
}

int lc_gate_run(lua_State *L, lua_CFunction fn) {
  lc_gate *g = lua_touserdata(L, lua_upvalueindex(1));
  uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
  if (g->nframes > 0 && g->frame[g->nframes - 1] <= fp &&
      forget_below(g, fp) == 0 && g->npending > 0)
    drain(L, g, lua_upvalueindex(1));       /* left by calls that raised */
  if (g->nframes < MAX_FRAMES) g->frame[g->nframes++] = fp;
  int nresults = fn(L);
  if (forget_below(g, fp) == 0 && g->npending > 0) drain(L, g, lua_upvalueindex(1));
  return nresults;
}

static int gate(lua_State *L) {
  const luaL_Reg *r = lua_touserdata(L, lua_upvalueindex(2));
  return lc_gate_run(L, r->func);
}

void lc_gate_push(lua_State *L) { push_gate(L); }

void lc_setfuncs(lua_State *L, const luaL_Reg *fns) {
  push_gate(L);
  for (const luaL_Reg *r = fns; r->name; r++) {
    lua_pushvalue(L, -1);
    lua_pushlightuserdata(L, (void *)r);
    lua_pushcclosure(L, gate, 2);
    lua_setfield(L, -3, r->name);
  }
  lua_pop(L, 1);
}

void lc_pushfunction(lua_State *L, const luaL_Reg *r, int nup) {
  luaL_checkstack(L, 2, NULL);
  push_gate(L);
  lua_pushlightuserdata(L, (void *)r);
  lua_rotate(L, -(nup + 2), 2);          /* the gate's two go first */
  lua_pushcclosure(L, gate, nup + 2);
}

/* Whether the function running at level is one that enters the gate: a C
** function whose upvalue 1 is the gate (at gidx). */
static bool gated_at(lua_State *L, int level, int gidx) {
  lua_Debug ar;
  if (!lua_getstack(L, level, &ar)) return false;
  lua_getinfo(L, "f", &ar);
  bool ours = lua_iscfunction(L, -1) && lua_getupvalue(L, -1, 1) != NULL;
  if (ours) {
    ours = lua_rawequal(L, -1, gidx);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return ours;
}

/* On the main thread, whether no luacuda call is running below the one at
** level 0 (its records are leftovers). A coroutine cannot see who resumed
** it, so there the records are believed. */
static bool outer_calls_gone(lua_State *L, int gidx) {
  if (!lua_pushthread(L)) {
    lua_pop(L, 1);
    return false;
  }
  lua_pop(L, 1);
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); level++)
    if (gated_at(L, level, gidx)) return false;
  return true;
}

void lc_close(lua_State *L, int idx, const lc_closer *closer, bool *closing) {
  idx = lua_absindex(L, idx);
  int top = lua_gettop(L);
  luaL_checkstack(L, 4, NULL);
  lc_gate *g = push_gate(L);
  int gidx = lua_gettop(L);
  int own = gated_at(L, 0, gidx);       /* the close function's own record */
  bool later = g->nframes > own;
  if (later && outer_calls_gone(L, gidx)) {
    if (own) g->frame[0] = g->frame[g->nframes - 1];
    g->nframes = own;
    drain(L, g, gidx);
    later = false;
  }
  if (later) {
    lua_getiuservalue(L, gidx, 1);
    int n = g->npending;
    lua_pushvalue(L, idx);
    lua_rawseti(L, -2, 2 * n + 1);      /* keeps the object alive until then */
    lua_pushlightuserdata(L, (void *)closer);
    lua_rawseti(L, -2, 2 * n + 2);
    g->npending = n + 1;
    *closing = true;
  }
  lua_settop(L, top);
  if (!later) closer->finish(L, idx);
}
