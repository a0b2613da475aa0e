/*
** preload: how a host program opens luacuda in its own state. The Lua
** files are built into the module (embed.c), so luacuda_openlibs puts
** every part into package.preload and require finds them with no search
** path; luaopen_luacuda is the same for luaL_requiref.
*/
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "parts.h"
#include "luacuda.h"

/* package.preload loader of one embedded Lua file: upvalue 1 is its entry */
static int load_embedded(lua_State *L) {
  const lc_embedded *e = lua_touserdata(L, lua_upvalueindex(1));
  char chunkname[128];
  snprintf(chunkname, sizeof chunkname, "@%s", e->file);
  if (luaL_loadbuffer(L, e->source, strlen(e->source), chunkname) != LUA_OK)
    return lua_error(L);
  lua_pushstring(L, e->module);
  lua_call(L, 1, 1);
  return 1;
}

LUACUDA_API void luacuda_openlibs(lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_luacuda_core);
  lua_setfield(L, -2, "luacuda.core");
  for (const lc_embedded *e = lc_lua_sources; e->module; e++) {
    lua_pushlightuserdata(L, (void *)e);
    lua_pushcclosure(L, load_embedded, 1);
    lua_setfield(L, -2, e->module);
  }
  lua_pop(L, 1);
}

LUACUDA_API int luaopen_luacuda(lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, "luacuda") != LUA_TNIL) return 1;   /* required already */
  lua_pop(L, 2);
  luacuda_openlibs(L);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_getfield(L, -1, "luacuda");
  lua_pushliteral(L, "luacuda");
  lua_call(L, 1, 1);
  return 1;
}
