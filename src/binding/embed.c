/*
** embed: the Lua files in lua/luacuda/, built into the module, so a host
** program needs no LUA_PATH (preload.c puts them in package.preload).
*/
#include "common.h"
#include "parts.h"

LC_EMBED(lc_lua_init, "lua/luacuda/init.lua");
LC_EMBED(lc_lua_format, "lua/luacuda/format.lua");
LC_EMBED(lc_lua_format_elements, "lua/luacuda/format_elements.lua");
LC_EMBED(lc_lua_printoptions, "lua/luacuda/printoptions.lua");
LC_EMBED(lc_lua_record, "lua/luacuda/record.lua");
LC_EMBED(lc_lua_smart, "lua/luacuda/smart.lua");
LC_EMBED(lc_lua_generators, "lua/luacuda/generators.lua");
LC_EMBED(lc_lua_assert, "lua/luacuda/assert.lua");
LC_EMBED(lc_lua_stats, "lua/luacuda/stats.lua");
LC_EMBED(lc_lua_sampling, "lua/luacuda/sampling.lua");
LC_EMBED(lc_lua_pad, "lua/luacuda/pad.lua");
LC_EMBED(lc_lua_einsum, "lua/luacuda/einsum.lua");
/* luacuda.dist's Lua side: it finds its MPI engine (dist_mpi.so) on the
** C path, or says it is not available; core.so never needs MPI */
LC_EMBED(lc_lua_dist, "lua/luacuda/dist.lua");

extern const char lc_lua_init[], lc_lua_format[], lc_lua_format_elements[],
  lc_lua_printoptions[], lc_lua_record[], lc_lua_smart[], lc_lua_generators[], lc_lua_assert[],
  lc_lua_dist[], lc_lua_stats[], lc_lua_sampling[],
  lc_lua_pad[], lc_lua_einsum[];

/* every file of lua/luacuda/, by module name (the preload spec checks) */
const lc_embedded lc_lua_sources[] = {
  {"luacuda", "luacuda/init.lua", lc_lua_init},
  {"luacuda.format", "luacuda/format.lua", lc_lua_format},
  {"luacuda.format_elements", "luacuda/format_elements.lua", lc_lua_format_elements},
  {"luacuda.printoptions", "luacuda/printoptions.lua", lc_lua_printoptions},
  {"luacuda.record", "luacuda/record.lua", lc_lua_record},
  {"luacuda.smart", "luacuda/smart.lua", lc_lua_smart},
  {"luacuda.generators", "luacuda/generators.lua", lc_lua_generators},
  {"luacuda.assert", "luacuda/assert.lua", lc_lua_assert},
  {"luacuda.stats", "luacuda/stats.lua", lc_lua_stats},
  {"luacuda.sampling", "luacuda/sampling.lua", lc_lua_sampling},
  {"luacuda.pad", "luacuda/pad.lua", lc_lua_pad},
  {"luacuda.einsum", "luacuda/einsum.lua", lc_lua_einsum},
  {"luacuda.dist", "luacuda/dist.lua", lc_lua_dist},
  {NULL, NULL, NULL}
};
