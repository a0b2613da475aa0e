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
/* luacuda.jit: Lua functions as kernels */
LC_EMBED(lc_lua_jit_init, "lua/luacuda/jit/init.lua");
LC_EMBED(lc_lua_jit_lexer, "lua/luacuda/jit/lexer.lua");
LC_EMBED(lc_lua_jit_parser, "lua/luacuda/jit/parser.lua");
LC_EMBED(lc_lua_jit_types, "lua/luacuda/jit/types.lua");
LC_EMBED(lc_lua_jit_runtime, "lua/luacuda/jit/runtime.lua");
LC_EMBED(lc_lua_jit_codegen, "lua/luacuda/jit/codegen.lua");
LC_EMBED(lc_lua_jit_vocab, "lua/luacuda/jit/vocab.lua");
LC_EMBED(lc_lua_jit_diskcache, "lua/luacuda/jit/diskcache.lua");
/* luacuda.dist's Lua side: it finds its MPI engine (dist_mpi.so) on the
** C path, or says it is not available; core.so never needs MPI */
LC_EMBED(lc_lua_dist, "lua/luacuda/dist.lua");

extern const char lc_lua_init[], lc_lua_format[], lc_lua_format_elements[],
  lc_lua_printoptions[], lc_lua_record[], lc_lua_smart[], lc_lua_generators[], lc_lua_assert[],
  lc_lua_dist[], lc_lua_stats[], lc_lua_sampling[],
  lc_lua_pad[], lc_lua_einsum[], lc_lua_jit_init[], lc_lua_jit_lexer[], lc_lua_jit_parser[], lc_lua_jit_types[], lc_lua_jit_runtime[], lc_lua_jit_codegen[], lc_lua_jit_vocab[],
  lc_lua_jit_diskcache[];

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
  {"luacuda.jit", "luacuda/jit/init.lua", lc_lua_jit_init},
  {"luacuda.jit.lexer", "luacuda/jit/lexer.lua", lc_lua_jit_lexer},
  {"luacuda.jit.parser", "luacuda/jit/parser.lua", lc_lua_jit_parser},
  {"luacuda.jit.types", "luacuda/jit/types.lua", lc_lua_jit_types},
  {"luacuda.jit.runtime", "luacuda/jit/runtime.lua", lc_lua_jit_runtime},
  {"luacuda.jit.codegen", "luacuda/jit/codegen.lua", lc_lua_jit_codegen},
  {"luacuda.jit.vocab", "luacuda/jit/vocab.lua", lc_lua_jit_vocab},
  {"luacuda.jit.diskcache", "luacuda/jit/diskcache.lua", lc_lua_jit_diskcache},
  {NULL, NULL, NULL}
};
