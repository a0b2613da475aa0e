/*
** element: conversions between Lua values and stored elements, and dtype
** arguments (a name or a record object).
*/
#ifndef LUACUDA_ELEMENT_H
#define LUACUDA_ELEMENT_H

#include "dtype.h"
#include "lua.h"

/* Push dt as Lua sees it: a builtin's name, a record's object. */
void lc_dtype_push(lua_State *L, const lc_dtype *dt);

/* The dtype named by the string (or the record object) at idx; a
** record's stays valid while that object is alive. Raises "luacuda.<fname>: ..." */
const lc_dtype *lc_dtype_check(lua_State *L, int idx, const char *fname);

/* The dtype at idx, or dflt when the value there is nil or absent. */
const lc_dtype *lc_dtype_opt(lua_State *L, int idx, const lc_dtype *dflt,
                             const char *fname);

/* Push the element at p as a Lua value. */
void lc_elem_push(lua_State *L, const lc_dtype *dt, const void *p);

/* The same, inlined for the common dtypes (element loops). */
static inline void lc_elem_push_fast(lua_State *L, const lc_dtype *dt, const void *p) {
  switch (dt->code) {
    case LC_FLOAT64: { double v; __builtin_memcpy(&v, p, 8); lua_pushnumber(L, v); return; }
    case LC_FLOAT32: { float v; __builtin_memcpy(&v, p, 4); lua_pushnumber(L, v); return; }
    case LC_INT64: { int64_t v; __builtin_memcpy(&v, p, 8); lua_pushinteger(L, v); return; }
    case LC_INT32: { int32_t v; __builtin_memcpy(&v, p, 4); lua_pushinteger(L, v); return; }
    default: lc_elem_push(L, dt, p);
  }
}

/* Convert the Lua value at idx into an element at out. Returns 0, or -1
** with a message (without function name) in err[LC_ERRLEN]. Writes out
** only on success. */
int lc_elem_convert(lua_State *L, int idx, const lc_dtype *dt, void *out,
                    char *err);

/* Same, raising "luacuda.<fname>: <cause>". */
void lc_elem_check(lua_State *L, int idx, const lc_dtype *dt, void *out,
                   const char *fname);

#endif
