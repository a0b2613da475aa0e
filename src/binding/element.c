/*
** element: the rules between Lua values and stored elements, and dtype
** arguments. Integers are range-checked (never wrapped), floats go into
** integer types only when integral, booleans only into bool.
*/
#include "element.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "gate.h"
#include "parts.h"
#include "record.h"

const lc_dtype *lc_dtype_check(lua_State *L, int idx, const char *fname) {
  const lc_record *r = lc_record_test(L, idx);
  if (r) return &r->dt;
  if (lua_type(L, idx) != LUA_TSTRING)
    lc_error(L, fname, "dtype must be a string such as 'float32' or a record, got %s",
             luaL_typename(L, idx));
  const char *name = lua_tostring(L, idx);
  const lc_dtype *dt = lc_dtype_lookup(name);
  if (dt == NULL) {
    char names[256] = "";      /* the table's, so that a new dtype is listed */
    for (int i = 0; i < LC_NTYPES; i++) {
      size_t at = strlen(names);
      snprintf(names + at, sizeof names - at, "%s, ", lc_dtypes[i].name);
    }
    lc_error(L, fname, "unknown dtype '%s' (%sor a NumPy code such as 'f4')", name, names);
  }
  return dt;
}

const lc_dtype *lc_dtype_opt(lua_State *L, int idx, const lc_dtype *dflt,
                             const char *fname) {
  return lua_isnoneornil(L, idx) ? dflt : lc_dtype_check(L, idx, fname);
}

/* ---- Lua <-> element -------------------------------------------------- */

void lc_elem_push(lua_State *L, const lc_dtype *dt, const void *p) {
  switch (dt->kind) {
    case 'b': { uint8_t b; memcpy(&b, p, 1); lua_pushboolean(L, b != 0); return; }
    case 'i': lua_pushinteger(L, lc_dtype_load_int(dt, p)); return;
    case 'u': {
      /* values past INT64_MAX have no Lua integer: they read as floats */
      uint64_t u = lc_dtype_load_uint(dt, p);
      if (u <= (uint64_t)INT64_MAX) lua_pushinteger(L, (lua_Integer)u);
      else lua_pushnumber(L, (lua_Number)u);
      return;
    }
    case 'f': lua_pushnumber(L, lc_dtype_load_float(dt, p)); return;
    default: lc_record_push_value(L, dt->rec, p); return;
  }
}

static int integer_error(char *err, const lc_dtype *dt, lua_State *L, int idx) {
  lua_Number f = lua_tonumber(L, idx);
  if (lua_isinteger(L, idx))
    snprintf(err, LC_ERRLEN, "%lld is out of range for %s",
             (long long)lua_tointeger(L, idx), dt->name);
  else if (f == floor(f) && isfinite(f))      /* integral, but too large */
    snprintf(err, LC_ERRLEN, "%.17g is out of range for %s", (double)f, dt->name);
  else if (isnan(f))         /* printf's spelling varies ("-nan") */
    snprintf(err, LC_ERRLEN, "%s needs an integer, got nan", dt->name);
  else
    snprintf(err, LC_ERRLEN, "%s needs an integer, got %.17g", dt->name, (double)f);
  return -1;
}

int lc_elem_convert(lua_State *L, int idx, const lc_dtype *dt, void *out,
                    char *err) {
  if (dt->rec) return lc_record_convert(L, idx, dt->rec, out, err);
  int t = lua_type(L, idx);
  if (dt->kind == 'b') {
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
    lc_dtype_store_float(dt, out, lua_tonumber(L, idx));
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
      if (dt->kind != 'u' || dt->size != 8) return integer_error(err, dt, L, idx);
      big = true;
      u = (uint64_t)f;
      i = 0;
    } else {
      i = (int64_t)f;
    }
  }
  /* the range from the size: the kinds are the C types of their size */
  int bits = (int)dt->size * 8;
  bool ok;
  if (dt->kind == 'i')
    ok = bits == 64 || (i >= -(INT64_C(1) << (bits - 1)) && i < (INT64_C(1) << (bits - 1)));
  else
    ok = big || (i >= 0 && (bits == 64 || i < (INT64_C(1) << bits)));
  if (ok && big) memcpy(out, &u, 8);
  else if (ok) lc_dtype_store_int(dt, out, i);
  return ok ? 0 : integer_error(err, dt, L, idx);
}

void lc_elem_check(lua_State *L, int idx, const lc_dtype *dt, void *out,
                   const char *fname) {
  char err[LC_ERRLEN];
  if (lc_elem_convert(L, idx, dt, out, err)) lc_error(L, fname, "%s", err);
}

/* _dtypes() -> {name = {size=, kind=, numpy=, member=, mant_bits=, min_exp=}}:
** the dtype table, for the Lua parts (record.lua, format.lua) */
static int l_dtypes(lua_State *L) {
  lua_createtable(L, 0, LC_NTYPES);
  for (int i = 0; i < LC_NTYPES; i++) {
    const lc_dtype *dt = &lc_dtypes[i];
    lua_createtable(L, 0, 6);
    lua_pushinteger(L, dt->size);
    lua_setfield(L, -2, "size");
    lua_pushlstring(L, &dt->kind, 1);
    lua_setfield(L, -2, "kind");
    if (dt->numpy) {
      lua_pushstring(L, dt->numpy);
      lua_setfield(L, -2, "numpy");
    }
    lua_pushstring(L, dt->member);
    lua_setfield(L, -2, "member");
    if (dt->kind == 'f') {
      lua_pushinteger(L, dt->mant_bits);
      lua_setfield(L, -2, "mant_bits");
      lua_pushinteger(L, lc_dtype_min_exp(dt));
      lua_setfield(L, -2, "min_exp");
    }
    lua_setfield(L, -2, dt->name);
  }
  return 1;
}

void lc_element_open(lua_State *L) {
  static const luaL_Reg fns[] = {{"_dtypes", l_dtypes}, {NULL, NULL}};
  lc_setfuncs(L, fns);
}
