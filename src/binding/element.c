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

void lc_dtype_push(lua_State *L, const lc_dtype *dt) {
  if (dt->rec) lc_record_push_object(L, dt->rec);
  else lua_pushstring(L, dt->name);
}

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

/* A record's value is a table of its fields, each converted as an element
** of the field's dtype (records nest; sub-array fields are nested
** sequences). */

#define PATHLEN 200

static int conv_value(lua_State *L, int idx, const lc_dtype *dt, char *out,
                      const char *path, char *err);

/* "inner.x": the path of field f under path ("" at the top) */
static void sub_path(char *buf, const char *path, const char *name) {
  snprintf(buf, PATHLEN, "%s%s%s", path, path[0] ? "." : "", name);
}

/* A sub-array field's value: nested sequences of shape f->shape[d..]. */
static int conv_sub(lua_State *L, int idx, const lc_field *f, int d, char *out,
                    const char *path, char *err) {
  if (lua_type(L, idx) != LUA_TTABLE) {
    return lc_fail(err, -1, "field '%s' needs a table of %lld entries, got %s", path,
                   (long long)f->shape[d], luaL_typename(L, idx));
  }
  if ((int64_t)lua_rawlen(L, idx) != f->shape[d]) {
    return lc_fail(err, -1, "field '%s' needs a table of %lld entries, got %lld", path,
                   (long long)f->shape[d], (long long)lua_rawlen(L, idx));
  }
  char key[64];
  if (lc_table_extra_key(L, idx, (lua_Integer)f->shape[d], key, sizeof key)) {
    return lc_fail(err, -1, "field '%s' has %s; only positions 1..%lld are read", path, key,
                   (long long)f->shape[d]);
  }
  int64_t step = f->dtype->size;
  for (int k = d + 1; k < f->ndim; k++) step *= f->shape[k];
  for (int64_t i = 0; i < f->shape[d]; i++) {
    lua_rawgeti(L, idx, i + 1);
    int top = lua_gettop(L);
    char *o = out ? out + i * step : NULL;
    int rc = d + 1 < f->ndim ? conv_sub(L, top, f, d + 1, o, path, err)
                             : conv_value(L, top, f->dtype, o, path, err);
    lua_pop(L, 1);
    if (rc) return rc;
  }
  return 0;
}

/* The record at idx into out (NULL: only check). */
static int conv_record(lua_State *L, int idx, const lc_record *r, char *out,
                       const char *path, char *err) {
  if (lua_type(L, idx) != LUA_TTABLE) {
    if (path[0]) lc_errf(err, "field '%s' needs a table of fields, got %s", path,
                         luaL_typename(L, idx));
    else lc_errf(err, "a record needs a table of fields, got %s",
                 luaL_typename(L, idx));
    return -1;
  }
  if (!lua_checkstack(L, 6)) {
    return lc_fail(err, -1, "records nested too deeply");
  }
  char sub[PATHLEN];
  lua_pushnil(L);
  while (lua_next(L, idx)) {         /* every key must be a field */
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING || !lc_record_field(r, lua_tostring(L, -1))) {
      if (lua_type(L, -1) == LUA_TSTRING) {
        sub_path(sub, path, lua_tostring(L, -1));
        lc_errf(err, "unknown field '%s'", sub);
      } else if (path[0]) {
        lc_errf(err, "field '%s' has a %s key; a record takes field names",
                path, luaL_typename(L, -1));
      } else {
        lc_errf(err, "a record table has a %s key; it takes field names",
                luaL_typename(L, -1));
      }
      lua_pop(L, 1);
      return -1;
    }
  }
  for (int i = 0; i < r->nfields; i++) {
    const lc_field *f = &r->fields[i];
    sub_path(sub, path, f->name);
    lua_pushstring(L, f->name);
    if (lua_rawget(L, idx) == LUA_TNIL) {
      lua_pop(L, 1);
      return lc_fail(err, -1, "missing field '%s'", sub);
    }
    int top = lua_gettop(L);
    char *o = out ? out + f->offset : NULL;
    int rc = f->ndim ? conv_sub(L, top, f, 0, o, sub, err) : conv_value(L, top, f->dtype, o, sub, err);
    lua_pop(L, 1);
    if (rc) return rc;
  }
  return 0;
}

static int conv_value(lua_State *L, int idx, const lc_dtype *dt, char *out,
                      const char *path, char *err) {
  if (dt->rec) return conv_record(L, idx, dt->rec, out, path, err);
  char tmp[16], why[LC_ERRLEN];
  if (lc_elem_convert(L, idx, dt, out ? out : tmp, why) == 0) return 0;
  return lc_fail(err, -1, "field '%s': %.300s", path, why);
}

/* The record value (a table of fields) at idx into out, written only when
** every field is valid: 0, or -1 with err set. */
static int record_convert(lua_State *L, int idx, const lc_record *r, void *out, char *err) {
  idx = lua_absindex(L, idx);
  if (conv_record(L, idx, r, NULL, "", err)) return -1;     /* all or nothing */
  return conv_record(L, idx, r, out, "", err);
}

static void push_sub(lua_State *L, const lc_field *f, int d, const char *p) {
  int64_t step = f->dtype->size;
  for (int k = d + 1; k < f->ndim; k++) step *= f->shape[k];
  lua_createtable(L, (int)f->shape[d], 0);
  for (int64_t i = 0; i < f->shape[d]; i++) {
    if (d + 1 < f->ndim) push_sub(L, f, d + 1, p + i * step);
    else lc_elem_push(L, f->dtype, p + i * step);
    lua_rawseti(L, -2, i + 1);
  }
}

/* Push the record at p as a table of fields. */
static void record_push_value(lua_State *L, const lc_record *r, const void *p) {
  luaL_checkstack(L, 4, "records nested too deeply");
  lua_createtable(L, 0, r->nfields);
  for (int i = 0; i < r->nfields; i++) {
    const lc_field *f = &r->fields[i];
    const char *q = (const char *)p + f->offset;
    if (f->ndim) push_sub(L, f, 0, q);
    else lc_elem_push(L, f->dtype, q);
    lua_setfield(L, -2, f->name);
  }
}


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
    default: record_push_value(L, dt->rec, p); return;
  }
}

static int integer_error(char *err, const lc_dtype *dt, lua_State *L, int idx) {
  lua_Number f = lua_tonumber(L, idx);
  if (lua_isinteger(L, idx))
    lc_errf(err, "%lld is out of range for %s",
            (long long)lua_tointeger(L, idx), dt->name);
  else if (f == floor(f) && isfinite(f))      /* integral, but too large */
    lc_errf(err, "%.17g is out of range for %s", (double)f, dt->name);
  else if (isnan(f))         /* printf's spelling varies ("-nan") */
    lc_errf(err, "%s needs an integer, got nan", dt->name);
  else
    lc_errf(err, "%s needs an integer, got %.17g", dt->name, (double)f);
  return -1;
}

int lc_elem_convert(lua_State *L, int idx, const lc_dtype *dt, void *out,
                    char *err) {
  if (dt->rec) return record_convert(L, idx, dt->rec, out, err);
  int t = lua_type(L, idx);
  if (dt->kind == 'b') {
    if (t != LUA_TBOOLEAN) {
      return lc_fail(err, -1, "bool needs a boolean, got %s", lua_typename(L, t));
    }
    uint8_t b = (uint8_t)lua_toboolean(L, idx);
    memcpy(out, &b, 1);
    return 0;
  }
  if (t != LUA_TNUMBER) {
    return lc_fail(err, -1, "%s needs a number, got %s", dt->name, lua_typename(L, t));
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
