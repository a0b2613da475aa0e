/*
** args: the binding layer's auxiliary library (Lua's lauxlib is the
** model): the one error form, and the readers of arguments every function
** shares. Every luacuda error is raised through lc_error.
*/
#include "args.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gate.h"
#include "ksource.h"
#include "layout.h"

void lc_error(lua_State *L, const char *fname, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  luaL_error(L, "luacuda.%s: %s", fname, msg);
  for (;;) {}   /* not reached: luaL_error does not return */
}

const char *lc_typename(lua_State *L, int idx) {
  if (lua_type(L, idx) == LUA_TUSERDATA && luaL_getmetafield(L, idx, "__name") != LUA_TNIL) {
    const char *name = lua_tostring(L, -1);    /* kept alive by the metatable */
    lua_pop(L, 1);
    if (name) return name;
  }
  return luaL_typename(L, idx);
}

bool lc_table_extra_key(lua_State *L, int idx, lua_Integer n, char *buf, size_t len) {
  idx = lua_absindex(L, idx);
  /* Traversal visits the array part first, so starting after key n
  ** usually ends at once. Where positions live in the hash part (a table
  ** filled backwards), keys Lua keeps before key n are not seen: a walk
  ** from the start would double the cost of every conversion. */
  if (n > 0) lua_pushinteger(L, n);
  else lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1 && lua_tointeger(L, -1) <= n) continue;
    if (lua_type(L, -1) == LUA_TSTRING) snprintf(buf, len, "a key '%.40s'", lua_tostring(L, -1));
    else if (lua_type(L, -1) == LUA_TNUMBER) snprintf(buf, len, "a key %.40s", lua_tostring(L, -1));
    else snprintf(buf, len, "a %s key", luaL_typename(L, -1));
    lua_pop(L, 1);
    return true;
  }
  return false;
}

const char *lc_check_source_name(lua_State *L, int idx, const char *fname) {
  size_t len;
  const char *name = lua_tolstring(L, idx, &len);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)name[i];
    if (c == '"' || c == '\\' || c < 0x20 || c == 0x7f)
      lc_error(L, fname, "name must not hold quotes, backslashes or control characters");
  }
  return name;
}

void lc_push_lua_part(lua_State *L, const char *module, const char *field) {
  luaL_checkstack(L, 3, NULL);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, module) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_getglobal(L, "require");
    lua_pushstring(L, module);
    lua_call(L, 1, 1);
  }
  lua_getfield(L, -1, field);
  lua_replace(L, -3);
  lua_pop(L, 1);
}

int64_t lc_check_integer(lua_State *L, int idx, const char *what, int pos,
                         const char *fname) {
  int ok;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (!ok || lua_type(L, idx) != LUA_TNUMBER) {
    char where[64] = "";
    if (pos > 0) snprintf(where, sizeof where, " %d", pos);
    if (lua_type(L, idx) == LUA_TNUMBER)
      lc_error(L, fname, "%s%s must be an integer, got %g", what, where, lua_tonumber(L, idx));
    lc_error(L, fname, "%s%s must be an integer, got %s", what, where, luaL_typename(L, idx));
  }
  return v;
}

static int64_t check_dim(lua_State *L, int idx, int pos, bool allow_infer,
                         const char *what, const char *fname) {
  int ok;
  lua_Integer d = lua_tointegerx(L, idx, &ok);
  if (!ok || lua_type(L, idx) != LUA_TNUMBER) {
    if (lua_type(L, idx) == LUA_TNUMBER)
      lc_error(L, fname, "%s entry %d must be an integer, got %g", what, pos,
               lua_tonumber(L, idx));
    lc_error(L, fname, "%s entry %d must be an integer, got %s", what, pos,
             luaL_typename(L, idx));
  }
  if (d < 0 && !(allow_infer && d == -1))
    lc_error(L, fname, "%s entry %d is negative (%lld)", what, pos, (long long)d);
  return d;
}

void lc_check_shape_not_spread(lua_State *L, int idx, const char *fname) {
  if (lua_type(L, idx) != LUA_TNUMBER || lua_type(L, idx + 1) != LUA_TNUMBER) return;
  char dims[128] = "";
  int top = lua_gettop(L);
  for (int i = idx; i <= top && i < idx + LC_MAXDIM && lua_type(L, i) == LUA_TNUMBER; i++) {
    size_t at = strlen(dims);
    snprintf(dims + at, sizeof dims - at, "%s%.14g", i > idx ? ", " : "", lua_tonumber(L, i));
  }
  lc_error(L, fname, "give the shape as one table: luacuda.%s({%s}) (the argument after "
           "the shape is the dtype)", fname, dims);
}

int lc_check_dims(lua_State *L, int idx, bool spread, bool allow_infer,
                  int64_t *shape, const char *what, const char *fname) {
  if (spread && lua_type(L, idx) == LUA_TNUMBER) {
    int top = lua_gettop(L), n = 0;
    for (int i = idx; i <= top && lua_type(L, i) == LUA_TNUMBER; i++) {
      if (n == LC_MAXDIM) lc_error(L, fname, "more than %d dimensions", LC_MAXDIM);
      shape[n] = check_dim(L, i, n + 1, allow_infer, what, fname);
      n++;
    }
    return n;
  }
  if (lua_type(L, idx) == LUA_TNUMBER) {
    shape[0] = check_dim(L, idx, 1, allow_infer, what, fname);
    return 1;
  }
  if (lua_type(L, idx) != LUA_TTABLE)
    lc_error(L, fname, "%s must be a number or a table of numbers, got %s", what,
             luaL_typename(L, idx));
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
  if (n > LC_MAXDIM) lc_error(L, fname, "more than %d dimensions", LC_MAXDIM);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, i);
    shape[i - 1] = check_dim(L, -1, (int)i, allow_infer, what, fname);
    lua_pop(L, 1);
  }
  return (int)n;
}

char lc_check_order(lua_State *L, int idx, const char *fname) {
  if (lua_isnoneornil(L, idx)) return 'C';
  const char *o = lua_tostring(L, idx);
  if (lua_type(L, idx) != LUA_TSTRING || (strcmp(o, "C") != 0 && strcmp(o, "F") != 0))
    lc_error(L, fname, "order must be \"C\" or \"F\", got %s",
             lua_type(L, idx) == LUA_TSTRING ? o : luaL_typename(L, idx));
  return o[0];
}

int lc_opt_get(lua_State *L, int idx, const char *key) {
  if (lua_type(L, idx) != LUA_TTABLE) {   /* no options: lua_rawget of a nil reads garbage */
    lua_pushnil(L);
    return LUA_TNIL;
  }
  idx = lua_absindex(L, idx);
  lua_pushstring(L, key);
  return lua_rawget(L, idx);
}

bool lc_check_opts(lua_State *L, int idx, const char *const *known,
                       const char *fname) {
  if (lua_isnoneornil(L, idx)) return false;
  if (lua_type(L, idx) != LUA_TTABLE)
    lc_error(L, fname, "options must be a table, got %s", luaL_typename(L, idx));
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    bool ok = false;
    if (lua_type(L, -2) == LUA_TSTRING)
      for (int i = 0; known[i]; i++) ok = ok || strcmp(lua_tostring(L, -2), known[i]) == 0;
    if (!ok)
      lc_error(L, fname, "unknown option %s", lua_type(L, -2) == LUA_TSTRING
               ? lua_tostring(L, -2) : luaL_typename(L, -2));
    lua_pop(L, 1);
  }
  return true;
}

void lc_push_int64s(lua_State *L, int n, const int64_t *v) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushinteger(L, v[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

void *lc_check_userdata(lua_State *L, int idx, const char *tname, const char *what,
                        const char *fname) {
  void *p = luaL_testudata(L, idx, tname);
  if (p == NULL) lc_error(L, fname, "expected %s, got %s", what, lc_typename(L, idx));
  return p;
}

void lc_new_type(lua_State *L, const char *tname, const luaL_Reg *meta,
                 const luaL_Reg *methods) {
  luaL_newmetatable(L, tname);
  lc_setfuncs(L, meta);
  if (methods) {
    lua_newtable(L);
    lc_setfuncs(L, methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pushstring(L, tname);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
}

lc_kopts *lc_check_compiler_options(lua_State *L, int idx, const char *fname) {
  idx = lua_absindex(L, idx);
  const char *given[LC_KSOURCE_MAXOPTS];
  int ngiven = 0;
  if (!lua_isnoneornil(L, idx)) {
    if (lua_type(L, idx) != LUA_TTABLE)
      lc_error(L, fname, "options must be a table of strings, got %s", luaL_typename(L, idx));
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx), count = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {   /* key value */
      if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1 || lua_tointeger(L, -2) > len) {
        lua_pop(L, 1);
        lc_error(L, fname, "options must be a sequence of strings, got key %s",
                 luaL_tolstring(L, -1, NULL));
      }
      if (lua_type(L, -1) != LUA_TSTRING)
        lc_error(L, fname, "options[%lld] must be a string, got %s",
                 (long long)lua_tointeger(L, -2), luaL_typename(L, -1));
      count++;
      lua_pop(L, 1);
    }
    if (count != len)   /* a hole the length operator stepped over */
      lc_error(L, fname, "options must be a sequence of strings, with no holes");
    if (len > LC_KSOURCE_MAXOPTS) lc_error(L, fname, "more than %d options", LC_KSOURCE_MAXOPTS);
    for (lua_Integer i = 1; i <= len; i++) {
      lua_rawgeti(L, idx, i);   /* the table keeps the string alive */
      given[ngiven++] = lua_tostring(L, -1);
      lua_pop(L, 1);
    }
  }
  lc_kopts *ko = lua_newuserdatauv(L, lc_kopts_size(given, ngiven), 1);
  lua_pushvalue(L, idx);
  lua_setiuservalue(L, -2, 1);
  char err[LC_ERRLEN];
  if (lc_kopts_normalize(given, ngiven, ko, err)) lc_error(L, fname, "%s", err);
  lua_replace(L, idx);
  return ko;
}
