/*
** embed: the kernel headers in kernels/ and the Lua files in lua/luacuda/,
** built into the module with the assembler's .incbin, so nothing has to
** be found on disk at run time (a host program needs no LUA_PATH).
** Paths are relative to the directory make runs in (the source root).
*/
#include "internal.h"

#define LC_EMBED(sym, path)                                          \
  __asm__(".section .rodata\n"                                       \
          ".global " #sym "\n"                                       \
          ".hidden " #sym "\n"                                       \
          ".type " #sym ", @object\n"                                \
          ".balign 16\n" #sym ":\n"                                  \
          ".incbin \"" path "\"\n"                                   \
          ".byte 0\n"                                                \
          ".size " #sym ", . - " #sym "\n"                           \
          ".previous\n")

LC_EMBED(lc_prelude_source, "kernels/prelude.cuh");
LC_EMBED(lc_sim_abi_source, "kernels/sim_abi.h");
LC_EMBED(lc_sim_runtime_source, "kernels/sim_runtime.h");
LC_EMBED(lc_strided_source, "kernels/strided.cu");

LC_EMBED(lc_lua_init, "lua/luacuda/init.lua");
LC_EMBED(lc_lua_format, "lua/luacuda/format.lua");
LC_EMBED(lc_lua_record, "lua/luacuda/record.lua");
LC_EMBED(lc_lua_smart, "lua/luacuda/smart.lua");

extern const char lc_lua_init[], lc_lua_format[], lc_lua_record[], lc_lua_smart[];

/* every file of lua/luacuda/, by module name (the preload spec checks) */
const lc_embedded lc_lua_sources[] = {
  {"luacuda", "luacuda/init.lua", lc_lua_init},
  {"luacuda.format", "luacuda/format.lua", lc_lua_format},
  {"luacuda.record", "luacuda/record.lua", lc_lua_record},
  {"luacuda.smart", "luacuda/smart.lua", lc_lua_smart},
  {NULL, NULL, NULL}
};
