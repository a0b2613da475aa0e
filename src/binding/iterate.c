/*
** iterate: pairs(a) (the __pairs metamethod) and a:ipairs(), which walk the
** first axis giving (i, a[i]): the elements of a 1-D array, the row views
** of an N-d one. Lua's own ipairs(a) cannot do this: it reads until a[i]
** is nil, and an array raises an error past its end instead.
*/
#include "array.h"

#include "gate.h"
#include "args.h"
#include "parts.h"

/* The array at 1, which must have a first axis to walk (NumPy: iterating
** a 0-d array is an error). */
static const lc_array *walkable(lua_State *L, const char *fname) {
  const lc_array *a = lc_array_check(L, 1, fname);
  if (a->lay.ndim == 0)
    lc_error(L, fname, "a 0-d array cannot be iterated (read its value with a:item() or a[{}])");
  return a;
}

/* One step of the loop: (a, i) -> i + 1, a[i + 1]; nil past the end. The
** length is read at each step, so a closed array stops the loop with an
** error rather than reading freed memory. */
static int step(lua_State *L, const char *fname) {
  const lc_array *a = walkable(L, fname);
  int64_t i = lc_check_integer(L, 2, "the loop's control value", 0, fname);
  if (i < 0 || i >= a->lay.shape[0]) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushinteger(L, (lua_Integer)(i + 1));
  lc_index_push_row(L, a, i + 1, fname);
  return 2;
}

static int pairs_step(lua_State *L) { return step(L, "pairs"); }
static int ipairs_step(lua_State *L) { return step(L, "ipairs"); }

/* The generic for's triple: iterator, the array, 0 */
static int start(lua_State *L, const luaL_Reg *iterator, const char *fname) {
  walkable(L, fname);
  lc_pushfunction(L, iterator, 0);
  lua_pushvalue(L, 1);
  lua_pushinteger(L, 0);
  return 3;
}

static const luaL_Reg pairs_iterator = {"pairs", pairs_step};
static const luaL_Reg ipairs_iterator = {"ipairs", ipairs_step};

/*** @module luacuda */

/*** @type Array */

/***
`pairs(a)`: walks the first axis, giving `i, a[i]` for i = 1 to `#a`: the
elements of a 1-d array, row views (which share `a`'s memory) above.
@function Array:__pairs
@return an iterator, the array and 0, for the generic `for`
@raise `luacuda.pairs: a 0-d array cannot be iterated` (NumPy's rule)
@usage local m = luacuda.array({{1, 2}, {3, 4}})
for i, row in pairs(m) do row[1] = row[1] * 10 end
assert(m[{2, 1}] == 30)
*/

/***
`for i, v in a:ipairs()`: the same walk as `pairs(a)`. Lua's own `ipairs(a)`
does not fit an array: it reads until `a[i]` is nil, and `a[#a + 1]` is an
error.
@function Array:ipairs
@return an iterator, the array and 0, for the generic `for`
@raise `luacuda.ipairs: a 0-d array cannot be iterated`
@usage local sum = 0
for _, v in luacuda.arange(1, 5):ipairs() do sum = sum + v end
assert(sum == 10)
*/

/* __pairs: pairs(a) */
static int array_pairs(lua_State *L) { return start(L, &pairs_iterator, "pairs"); }

/* a:ipairs() */
static int array_ipairs(lua_State *L) { return start(L, &ipairs_iterator, "ipairs"); }

void lc_iterate_open(lua_State *L) {
  static const luaL_Reg methods[] = {{"ipairs", array_ipairs}, {NULL, NULL}};
  static const luaL_Reg meta[] = {{"__pairs", array_pairs}, {NULL, NULL}};
  lc_array_add_methods(L, methods);
  luaL_getmetatable(L, LC_ARRAY_MT);
  lc_setfuncs(L, meta);
  lua_pop(L, 1);
}
