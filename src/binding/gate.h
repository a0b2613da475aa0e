/*
** gate: every C function of luacuda that Lua can call goes through one
** gate, which keeps, per Lua state, the frames of the luacuda calls now
** running.
**
** Why: Lua code can run in the middle of a call. A finalizer runs when the
** call allocates (the collector's step), a metamethod runs when the call
** reads a table or an argument's __kernel_arg; and that code may close an
** array, a stream or a registration whose memory the call already holds.
** So a close made while another luacuda call is running is only a mark: the
** object reads as closed at once, and what it holds is let go when the
** calls around it have returned (lc_close). A finalizer needs no
** such care: an object the collector finalizes is unreachable, so no call
** holds it, as long as a call keeps on its stack every object whose memory
** it uses (the rule of every file here).
**
** A finalizer that lets go of its object as a close put off does (it
** raises nothing, runs no Lua code, allocates no Lua memory: lc_closer's
** rules) may skip the gate: no luacuda call can run inside it, so it has
** no frame to record (array.c's __gc, which every array made pays for).
*/
#ifndef LUACUDA_GATE_H
#define LUACUDA_GATE_H

#include <stdbool.h>

#include "lua.h"
#include "lauxlib.h"

/* luaL_setfuncs(L, fns, 0), with each function behind the gate. */
void lc_setfuncs(lua_State *L, const luaL_Reg *fns);

/* Push r->func behind the gate as a closure whose upvalues are the nup
** values on top of the stack; it reads them with lc_upvalueindex. r must
** outlive the state (a static). */
void lc_pushfunction(lua_State *L, const luaL_Reg *r, int nup);

/* Upvalue i (1-based) of a function pushed by lc_pushfunction: the gate
** keeps its own two first. */
#define lc_upvalueindex(i) lua_upvalueindex((i) + 2)

/* For a function with a fast path that runs no Lua code and allocates
** nothing (a[i] in a loop), which would pay for the gate on every call:
** it is pushed with the gate as its upvalue 1 (lc_gate_push), and runs the
** rest of its work behind the gate with lc_gate_run(L, fn), fn running in
** its own frame (same stack, same upvalues). */
void lc_gate_push(lua_State *L);
int lc_gate_run(lua_State *L, lua_CFunction fn);

/* How an object whose close was put off is closed later: finish(L, idx)
** lets go of what the object at idx holds. It must not raise, run Lua code
** or allocate Lua memory, and must do nothing for an object finished
** already. */
typedef struct lc_closer {
  void (*finish)(lua_State *L, int idx);
} lc_closer;

/* Close the object at idx, from a close function (__close, close()): when
** no other luacuda call is running, finish it now; when one is, set
** *closing (the object then reads as closed) and queue it to be finished
** once those calls have returned. May raise only for lack of memory, with
** nothing done. */
void lc_close(lua_State *L, int idx, const lc_closer *closer, bool *closing);

#endif
