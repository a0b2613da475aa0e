/*
** element: the rules between Lua values and stored elements, and dtype
** arguments. Integers are range-checked (never wrapped), floats go into
** integer types only when integral, booleans only into bool.
*/
#include "element.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aux.h"
#include "record.h"

const lc_dtype *lc_dtype_check(lua_State *L, int idx, const char *fname) {
  const lc_record *r = lc_record_test(L, idx);
  if (r) return &r->dt;
  if (lua_type(L, idx) != LUA_TSTRING)
    lc_error(L, fname, "dtype must be a string such as 'float32' or a record, got %s",
             luaL_typename(L, idx));
  const char *name = lua_tostring(L, idx);
  const lc_dtype *dt = lc_dtype_lookup(name);
  if (dt == NULL)
    lc_error(L, fname, "unknown dtype '%s' (bool, int8..int64, uint8..uint64, "
             "float16, float32, float64, or a NumPy code such as 'f4')", name);
  return dt;
}

const lc_dtype *lc_dtype_opt(lua_State *L, int idx, const lc_dtype *dflt,
                             const char *fname) {
  return lua_isnoneornil(L, idx) ? dflt : lc_dtype_check(L, idx, fname);
}

/* ---- Lua <-> element -------------------------------------------------- */

#define LOAD(T) do { T x_; memcpy(&x_, p, sizeof x_); v_ = x_; } while (0)

void lc_elem_push(lua_State *L, const lc_dtype *dt, const void *p) {
  switch (dt->code) {
    case LC_BOOL: { uint8_t b; memcpy(&b, p, 1); lua_pushboolean(L, b != 0); return; }
    case LC_INT8:   { lua_Integer v_; LOAD(int8_t);   lua_pushinteger(L, v_); return; }
    case LC_INT16:  { lua_Integer v_; LOAD(int16_t);  lua_pushinteger(L, v_); return; }
    case LC_INT32:  { lua_Integer v_; LOAD(int32_t);  lua_pushinteger(L, v_); return; }
    case LC_INT64:  { lua_Integer v_; LOAD(int64_t);  lua_pushinteger(L, v_); return; }
    case LC_UINT8:  { lua_Integer v_; LOAD(uint8_t);  lua_pushinteger(L, v_); return; }
    case LC_UINT16: { lua_Integer v_; LOAD(uint16_t); lua_pushinteger(L, v_); return; }
    case LC_UINT32: { lua_Integer v_; LOAD(uint32_t); lua_pushinteger(L, v_); return; }
    case LC_UINT64: {
      /* values past INT64_MAX have no Lua integer: they read as floats */
      uint64_t u;
      memcpy(&u, p, sizeof u);
      if (u <= (uint64_t)INT64_MAX) lua_pushinteger(L, (lua_Integer)u);
      else lua_pushnumber(L, (lua_Number)u);
      return;
    }
    case LC_FLOAT16: { uint16_t h; memcpy(&h, p, 2); lua_pushnumber(L, lc_half_to_double(h)); return; }
    case LC_FLOAT32: { lua_Number v_; LOAD(float);  lua_pushnumber(L, v_); return; }
    case LC_FLOAT64: { lua_Number v_; LOAD(double); lua_pushnumber(L, v_); return; }
    case LC_RECORD: lc_record_push_value(L, dt->rec, p); return;
    default: lua_pushnil(L);
  }
}

#define STORE(T, v) do { T x_ = (T)(v); memcpy(out, &x_, sizeof x_); } while (0)

static int integer_error(char *err, const lc_dtype *dt, lua_State *L, int idx) {
  lua_Number f = lua_tonumber(L, idx);
  if (lua_isinteger(L, idx))
    snprintf(err, LC_ERRLEN, "%lld is out of range for %s",
             (long long)lua_tointeger(L, idx), dt->name);
  else if (f == floor(f) && isfinite(f))      /* integral, but too large */
    snprintf(err, LC_ERRLEN, "%.17g is out of range for %s", (double)f, dt->name);
  else
    snprintf(err, LC_ERRLEN, "%s needs an integer, got %.17g", dt->name, (double)f);
  return -1;
}

int lc_elem_convert(lua_State *L, int idx, const lc_dtype *dt, void *out,
                    char *err) {
  if (dt->rec) return lc_record_convert(L, idx, dt->rec, out, err);
  int t = lua_type(L, idx);
  if (dt->code == LC_BOOL) {
    if (t != LUA_TBOOLEAN) {
      snprintf(err, LC_ERRLEN, "bool needs a boolean, got %s", lua_typename(L, t));
      return -1;
    }
    uint8_t b = (uint8_t)lua_toboolean(L, idx);
    memcpy(out, &b, 1);
    return 0;
  }
  if (t != LUA_TNUMBER) {
    snprintf(err, LC_ERRLEN, "%s needs a number, got %s", dt->name, lua_typename(L, t));
    return -1;
  }
  if (dt->kind == 'f') {
    lua_Number v = lua_tonumber(L, idx);
    switch (dt->code) {
      case LC_FLOAT16: STORE(uint16_t, lc_half_from_double(v)); break;
      case LC_FLOAT32: STORE(float, v); break;
      default:         STORE(double, v); break;
    }
    return 0;
  }
  /* integer types: take exact integers only, from either Lua subtype */
  int64_t i;
  uint64_t u = 0;
  bool big = false;           /* a uint64 value above INT64_MAX */
  if (lua_isinteger(L, idx)) {
    i = lua_tointeger(L, idx);
  } else {
    lua_Number f = lua_tonumber(L, idx);
    if (f != floor(f) || !(f >= -0x1p63 && f < 0x1p64))
      return integer_error(err, dt, L, idx);
    if (f >= 0x1p63) {
      if (dt->code != LC_UINT64) return integer_error(err, dt, L, idx);
      big = true;
      u = (uint64_t)f;
      i = 0;
    } else {
      i = (int64_t)f;
    }
  }
  bool ok;
  switch (dt->code) {
    case LC_INT8:   ok = i >= INT8_MIN && i <= INT8_MAX; if (ok) STORE(int8_t, i); break;
    case LC_INT16:  ok = i >= INT16_MIN && i <= INT16_MAX; if (ok) STORE(int16_t, i); break;
    case LC_INT32:  ok = i >= INT32_MIN && i <= INT32_MAX; if (ok) STORE(int32_t, i); break;
    case LC_INT64:  ok = true; STORE(int64_t, i); break;
    case LC_UINT8:  ok = i >= 0 && i <= UINT8_MAX; if (ok) STORE(uint8_t, i); break;
    case LC_UINT16: ok = i >= 0 && i <= UINT16_MAX; if (ok) STORE(uint16_t, i); break;
    case LC_UINT32: ok = i >= 0 && i <= UINT32_MAX; if (ok) STORE(uint32_t, i); break;
    case LC_UINT64: ok = big || i >= 0; if (ok) STORE(uint64_t, big ? u : (uint64_t)i); break;
    default: ok = false;
  }
  return ok ? 0 : integer_error(err, dt, L, idx);
}

void lc_elem_check(lua_State *L, int idx, const lc_dtype *dt, void *out,
                   const char *fname) {
  char err[LC_ERRLEN];
  if (lc_elem_convert(L, idx, dt, out, err)) lc_error(L, fname, "%s", err);
}
