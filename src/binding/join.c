/*
** join: concatenate and stack, one new array made of several. The inputs
** are checked first (one kind, one dtype, matching shapes), then each is
** copied into its slice of the result with lc_copy_array, which serves
** every kind, layout and backend, device memory included.
*/
#include "array.h"

#include <limits.h>
#include <stdio.h>

#include "args.h"
#include "gate.h"
#include "record.h"
#include "copy.h"

/* Push the arrays of the sequence at idx 1 on the stack, each kept there
** while the call uses it (gate.h); the first lands at *first. Checks they
** are open arrays of one kind and one dtype. Returns their count. */
static int gather(lua_State *L, const char *fname, int *first) {
  if (lua_type(L, 1) != LUA_TTABLE)
    lc_error(L, fname, "arrays must be a sequence of arrays, got %s", luaL_typename(L, 1));
  lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
  if (n == 0) lc_error(L, fname, "arrays is empty (at least one array is needed)");
  char key[64];
  if (lc_table_extra_key(L, 1, n, key, sizeof key))
    lc_error(L, fname, "arrays has %s: only a sequence of arrays is read", key);
  if (n > INT_MAX / 2 || !lua_checkstack(L, (int)n + LUA_MINSTACK))
    lc_error(L, fname, "too many arrays (%lld)", (long long)n);
  *first = lua_gettop(L) + 1;
  const lc_array *a1 = NULL;
  for (int i = 1; i <= (int)n; i++) {
    lua_rawgeti(L, 1, i);
    lc_array *a = lc_array_test(L, -1);
    if (a == NULL)
      lc_error(L, fname, "arrays[%d] must be an array, got %s", i, luaL_typename(L, -1));
    if (!lc_array_is_open(a)) lc_error(L, fname, "arrays[%d] is a closed array", i);
    if (a1 == NULL) {
      a1 = a;
      continue;
    }
    if (lc_array_kind(a) != lc_array_kind(a1))
      lc_error(L, fname, "arrays[1] is a %s array and arrays[%d] a %s array: one kind for "
               "all (copy them first, with to_device or copy_to_host)",
               lc_kind_names[lc_array_kind(a1)], i, lc_kind_names[lc_array_kind(a)]);
    if (!lc_dtype_equal(a->dtype, a1->dtype))
      lc_error(L, fname, "arrays[1] is %s and arrays[%d] is %s: one dtype for all "
               "(convert them first, with astype)", a1->dtype->name, i, a->dtype->name);
  }
  return (int)n;
}

/* The 1-based axis argument at idx (1 when absent), in 1..last; returns
** it 0-based. */
static int check_axis(lua_State *L, int idx, int last, const char *what,
                      const char *fname) {
  if (lua_isnoneornil(L, idx)) return 0;
  int64_t axis = lc_check_integer(L, idx, "axis", 0, fname);
  if (axis < 1 || axis > last)
    lc_error(L, fname, "axis %lld is out of range for %s: luacuda counts axes from 1 "
             "(1 to %d here)", (long long)axis, what, last);
  return (int)axis - 1;
}

static void shape_mismatch(lua_State *L, const lc_array *a1, int i, const lc_array *a,
                           const char *which, const char *fname) {
  char s1[256], si[256];
  lc_shape_format(s1, sizeof s1, a1->lay.ndim, a1->lay.shape);
  lc_shape_format(si, sizeof si, a->lay.ndim, a->lay.shape);
  lc_error(L, fname, "shape mismatch: arrays[1] is %s and arrays[%d] is %s (%s)", s1, i, si,
           which);
}

/*** @module luacuda */

/***
Joins arrays along an existing axis into a new C-contiguous array of their kind.
@function concatenate
@tparam {Array,...} arrays one kind and one dtype; equal sizes except along `axis`
@tparam[opt=1] integer axis the axis to join along, from 1
@treturn Array
@raise `luacuda.concatenate: arrays is empty (at least one array is needed)`;
`shape mismatch: ...`; arrays of different kinds or dtypes; `0-d arrays cannot
be concatenated (stack them)`
@usage local c = luacuda.concatenate({luacuda.arange(2), luacuda.arange(3)})
assert(#c == 5)
*/

/* concatenate(arrays [, axis]): joined along an existing axis (1 by
** default); C-contiguous, of the inputs' kind */
static int l_concatenate(lua_State *L) {
  const char *fn = "concatenate";
  lua_settop(L, 2);              /* the arrays go above the arguments */
  int first, n = gather(L, fn, &first);
  const lc_array *a1 = lua_touserdata(L, first);
  int nd = a1->lay.ndim;
  if (nd == 0) lc_error(L, fn, "0-d arrays cannot be concatenated (stack them)");
  char what[32];
  snprintf(what, sizeof what, "%d-d arrays", nd);
  int axis = check_axis(L, 2, nd, what, fn);
  int64_t shape[LC_MAXDIM];
  for (int d = 0; d < nd; d++) shape[d] = a1->lay.shape[d];
  for (int i = 2; i <= n; i++) {
    const lc_array *a = lua_touserdata(L, first + i - 1);
    bool same = a->lay.ndim == nd;
    for (int d = 0; same && d < nd; d++)
      same = d == axis || a->lay.shape[d] == a1->lay.shape[d];
    if (!same) {
      char why[64];
      snprintf(why, sizeof why, "only axis %d may differ", axis + 1);
      shape_mismatch(L, a1, i, a, why, fn);
    }
    /* a broadcast view can be long: the sum must not wrap */
    if (__builtin_add_overflow(shape[axis], a->lay.shape[axis], &shape[axis]))
      lc_error(L, fn, "the result would have more than %lld elements on axis %d",
               (long long)INT64_MAX, axis + 1);
  }
  lc_array *r = lc_array_empty(L, lc_array_kind(a1), a1->dtype, nd, shape, 'C', NULL, fn);
  int64_t at = 0;
  for (int i = 0; i < n; i++) {
    lc_array *a = lua_touserdata(L, first + i);
    lc_array part = *r;        /* a view of r, which stays on the stack */
    char err[LC_ERRLEN];
    lc_layout_slice(&part.lay, axis, at, a->lay.shape[axis], 1, err);   /* in bounds */
    lc_copy_array(L, &part, a, NULL, fn);
    at += a->lay.shape[axis];
  }
  return 1;
}

/***
Joins arrays of one shape along a new axis into a new C-contiguous array.
@function stack
@tparam {Array,...} arrays one kind, one dtype, one shape
@tparam[opt=1] integer axis where the new axis goes, 1 to ndim + 1
@treturn Array
@raise `luacuda.stack: shape mismatch: ...`; arrays of different kinds or dtypes; an axis out of range
@usage local s = luacuda.stack({luacuda.zeros({3}), luacuda.ones({3})})
assert(s.shape[1] == 2 and s.shape[2] == 3)
*/

/* stack(arrays [, axis]): joined along a new axis (1 by default, up to
** ndim + 1); C-contiguous, of the inputs' kind */
static int l_stack(lua_State *L) {
  const char *fn = "stack";
  lua_settop(L, 2);              /* the arrays go above the arguments */
  int first, n = gather(L, fn, &first);
  const lc_array *a1 = lua_touserdata(L, first);
  int nd = a1->lay.ndim;
  if (nd >= LC_MAXDIM)
    lc_error(L, fn, "the result would have %d axes, more than the %d an array can have", nd + 1, LC_MAXDIM);
  char what[48];
  snprintf(what, sizeof what, "stacking %d-d arrays", nd);
  int axis = check_axis(L, 2, nd + 1, what, fn);
  for (int i = 2; i <= n; i++) {
    const lc_array *a = lua_touserdata(L, first + i - 1);
    bool same = a->lay.ndim == nd;
    for (int d = 0; same && d < nd; d++) same = a->lay.shape[d] == a1->lay.shape[d];
    if (!same) shape_mismatch(L, a1, i, a, "stack needs one shape", fn);
  }
  int64_t shape[LC_MAXDIM];
  for (int d = 0, k = 0; d <= nd; d++)
    shape[d] = d == axis ? n : a1->lay.shape[k++];
  lc_array *r = lc_array_empty(L, lc_array_kind(a1), a1->dtype, nd + 1, shape, 'C', NULL, fn);
  for (int i = 0; i < n; i++) {
    lc_array part = *r;        /* a view of r, which stays on the stack */
    char err[LC_ERRLEN];
    lc_layout_select(&part.lay, axis, i, err);      /* in bounds */
    lc_copy_array(L, &part, lua_touserdata(L, first + i), NULL, fn);
  }
  return 1;
}

void lc_join_open(lua_State *L) {
  static const luaL_Reg fns[] = {
    {"concatenate", l_concatenate},
    {"stack", l_stack},
    {NULL, NULL}
  };
  lc_setfuncs(L, fns);
}
