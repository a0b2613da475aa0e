/*
** internal: what the files of luacuda.core share and nothing outside sees.
** The module is built with -fvisibility=hidden; only LC_EXPORT symbols are
** visible to the program that loads it.
*/
#ifndef LUACUDA_INTERNAL_H
#define LUACUDA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "lua.h"
#include "lauxlib.h"

#define LC_EXPORT __attribute__((visibility("default")))
#define LC_NORETURN __attribute__((noreturn))
#define LC_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* Raise "luacuda.<fname>: <formatted cause>" (printf formats, %lld works). */
LC_NORETURN LC_PRINTF(3, 4)
void lc_error(lua_State *L, const char *fname, const char *fmt, ...);

/* The type of the value at idx for messages: a userdata's __name (such as
** "luacuda.event") when it has one, else Lua's type name. */
const char *lc_typename(lua_State *L, int idx);

/* Whether the table at idx, a sequence of length n (lua_rawlen), has any
** key but the positions 1..n, such as {1, 2, y = 3}: the conversions read
** only positions, so such a key would be dropped silently. When it has,
** writes "a key 'y'" (or "a <type> key") into buf. Only the keys Lua's
** traversal puts after key n are looked at (all of them, unless positions
** live in Lua's hash part). */
bool lc_table_extra_key(lua_State *L, int idx, lua_Integer n, char *buf, size_t len);

/* A kernel source's name (name=, or compile_file's path) goes into a
** #line directive's string: refuse quotes, backslashes and every control
** character (a carriage return would start a preprocessor line of its
** own) or NUL (it would cut the name short), with an error naming fname.
** The string at idx. */
const char *lc_check_source_name(lua_State *L, int idx, const char *fname);

/* Push module.field, module being one of luacuda's Lua parts (such as
** "luacuda.format"), required on first use. */
void lc_push_lua_part(lua_State *L, const char *module, const char *field);

/* Registry name of the array userdata type. */
#define LC_ARRAY_MT  "luacuda.array"

/* The kernel headers, NUL-terminated (embed.c). */
extern const char lc_prelude_source[];
/* The library's own kernels, compiled for the device at first use. */
extern const char lc_strided_source[];

/* The Lua files of lua/luacuda/, NUL-terminated (embed.c): module name,
** file name (for messages) and source; the list ends with a NULL name. */
typedef struct lc_embedded {
  const char *module;
  const char *file;
  const char *source;
} lc_embedded;
extern const lc_embedded lc_lua_sources[];

/* The C part, require "luacuda.core" (core.c). */
int luaopen_luacuda_core(lua_State *L);

/* One *_open per file; each adds its functions to the table on top. */
void lc_array_open(lua_State *L);
void lc_create_open(lua_State *L);
void lc_convert_open(lua_State *L);
void lc_module_open(lua_State *L);
void lc_ptx_open(lua_State *L);
void lc_hostmem_open(lua_State *L);
void lc_record_open(lua_State *L);    /* record.h */
void lc_dlpack_open(lua_State *L);

#endif
