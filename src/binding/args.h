/*
** args: the binding layer's auxiliary library (args.c): the one error
** form, the readers of arguments every function shares, and how every
** userdata type is made and its objects checked.
*/
#ifndef LUACUDA_ARGS_H
#define LUACUDA_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "lua.h"
#include "lauxlib.h"

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

/* Read a shape argument: a number, or a sequence of integers (a table, or
** the arguments idx..top when spread is set). Entries must be >= 0, or
** -1 too when allow_infer is set. Messages call it what ("shape"...).
** Returns ndim. */
/* Refuse a shape given as separate numbers (zeros(3, 4)) where the
** argument after it is not a dimension: say to give it as one table. */
void lc_check_shape_not_spread(lua_State *L, int idx, const char *fname);

int lc_check_dims(lua_State *L, int idx, bool spread, bool allow_infer,
                  int64_t *shape, const char *what, const char *fname);

/* An options table at idx: false for nil/none; an error for another type
** or for a key not in known (a NULL-terminated list). */
bool lc_check_opts(lua_State *L, int idx, const char *const *known, const char *fname);

/* Push the option key of the options table at idx, read raw: options are
** plain data, and a metamethod run here could close what the caller holds
** (gate.h). Returns its type. No table at idx (nil, none) pushes nil. */
int lc_opt_get(lua_State *L, int idx, const char *key);

/* The compiler options at idx (nil, or a sequence of strings with no
** holes), read and normalised into the one spelling every backend takes
** (ksource.h). The value at idx is replaced by a userdata holding them,
** which keeps the given strings alive (its user value is the table). */
struct lc_kopts *lc_check_compiler_options(lua_State *L, int idx, const char *fname);

/* The integer at idx (a number with an integral value), or the error
** "<what>[ <pos>] must be an integer, got ..." (pos 0 leaves it out). */
int64_t lc_check_integer(lua_State *L, int idx, const char *what, int pos,
                         const char *fname);

/* An order argument: nil gives 'C'; otherwise "C" or "F". */
char lc_check_order(lua_State *L, int idx, const char *fname);

/* Push a Lua sequence of n integers. */
void lc_push_int64s(lua_State *L, int n, const int64_t *v);


/* The userdata of type tname (its registry name, such as "luacuda.stream")
** at idx, or the error "expected <what>, got <type>" naming fname. */
void *lc_check_userdata(lua_State *L, int idx, const char *tname, const char *what,
                        const char *fname);

/* Every userdata type is made this way: its metatable, registered as
** tname, gets the metamethods meta (behind the gate), the methods as
** __index when given (NULL: none, or set by the caller), and __metatable
** = tname, so that getmetatable shows the name and no script can reach or
** replace the metamethods, which trust their first argument. */
void lc_new_type(lua_State *L, const char *tname, const luaL_Reg *meta,
                 const luaL_Reg *methods);

/* Registry name of the array userdata type. */
#define LC_ARRAY_MT  "luacuda.array"

#endif
