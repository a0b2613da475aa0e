/*
** shape: the methods that make views: reshape, ravel, transpose, squeeze,
** view, split, the contiguity tests, and the views of a record array's
** fields (a.x). The arithmetic is layout.c's;
** this file reads Lua arguments (1-based axes) and pushes results.
*/
#include "array.h"

#include <string.h>

#include "gate.h"
#include "record.h"
#include "args.h"
#include "stream.h"
#include "copy.h"
#include "convert.h"

/* An options table's order field, or a bare order string. */
static char opt_order(lua_State *L, int idx, const char *fname) {
  static const char *const known[] = {"order", NULL};
  if (lua_type(L, idx) == LUA_TTABLE) {
    lc_check_opts(L, idx, known, fname);
    lc_opt_get(L, idx, "order");
    char o = lc_check_order(L, -1, fname);
    lua_pop(L, 1);
    return o;
  }
  return lc_check_order(L, idx, fname);
}

/* Push a reshape of a: a view when the layout allows, else a copy. */
static void push_reshaped(lua_State *L, const lc_array *a, int ndim,
                          const int64_t *shape, char order, const char *fname) {
  lc_layout dst;
  char err[LC_ERRLEN];
  int rc = lc_layout_reshape(&a->lay, ndim, shape, a->dtype->size, order, &dst, err);
  if (rc == LC_RESHAPE_ERROR) lc_error(L, fname, "%s", err);
  if (rc == LC_RESHAPE_VIEW) {
    lc_array_push_view(L, a, &dst, a->dtype);
    return;
  }
  /* copy a's elements in the reading order, then view them in the new shape */
  lc_array *r = lc_array_alloc(L, lc_array_kind(a), a->dtype, &dst,
                               dst.size * a->dtype->size, NULL, fname);
  lc_array flat = *r;
  lc_layout_contiguous(&flat.lay, a->lay.ndim, a->lay.shape, a->dtype->size, order, err);
  lc_copy_array(L, &flat, a, NULL, fname);
}

/*** @module luacuda */

/*** @type Array */

/***
The same elements in another shape: a view when the layout allows, else a
copy in the same kind of memory.
@function Array:reshape
@param ... the sizes, spread (`a:reshape(2, 3)`) or as one table
(`a:reshape({2, 3})`); one size may be -1 (inferred)
@tparam[opt] table opts `{order = "C"}` or `"F"`: the order elements are read and placed in
@treturn Array
@raise `luacuda.reshape: <cause>` when the sizes do not multiply to `a.size`,
or for two -1s or a bad order
@usage local a = luacuda.arange(6):reshape(2, 3)
local b = a:reshape({3, -1})
*/

/* a:reshape(d1, d2, ... | {dims} [, {order=}]) */
static int array_reshape(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "reshape");
  int64_t shape[LC_MAXDIM];
  bool spread = lua_type(L, 2) == LUA_TNUMBER;
  int nd = lc_check_dims(L, 2, true, true, shape, "shape", "reshape");
  char order = opt_order(L, spread ? 2 + nd : 3, "reshape");
  char err[LC_ERRLEN];
  if (lc_shape_infer(nd, shape, a->lay.size, err)) lc_error(L, "reshape", "%s", err);
  push_reshaped(L, a, nd, shape, order, "reshape");
  return 1;
}

/***
The elements as a 1-d array: a view when the layout allows, else a copy.
@function Array:ravel
@tparam[opt="C"] string|table order `"C"`, `"F"`, or `{order =}`
@treturn Array
@raise `luacuda.ravel: <cause>` for a bad order
@usage assert(luacuda.zeros({2, 3}):ravel().shape[1] == 6)
*/

/* a:ravel([order]) */
static int array_ravel(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "ravel");
  char order = opt_order(L, 2, "ravel");
  int64_t n = a->lay.size;
  push_reshaped(L, a, 1, &n, order, "ravel");
  return 1;
}

/***
A view with the axes permuted (reversed when no permutation is given).
@function Array:transpose
@param[opt] ... the permutation, axes counted from 1, spread or as one table
@treturn Array a view
@raise `luacuda.transpose: permutation has 1 axes, the array has 2`; a
permutation that repeats or misses an axis
@usage local a = luacuda.zeros({2, 3, 4})
assert(a:transpose(3, 1, 2).shape[1] == 4)
*/

/* a:transpose([perm]) with perm a table or spread, 1-based */
static int array_transpose(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "transpose");
  lc_layout t = a->lay;
  char err[LC_ERRLEN];
  int rc;
  if (lua_isnoneornil(L, 2)) {
    rc = lc_layout_transpose(&t, NULL, err);
  } else {
    int64_t axes[LC_MAXDIM];
    int perm[LC_MAXDIM];
    int n = lc_check_dims(L, 2, true, false, axes, "permutation", "transpose");
    if (n != a->lay.ndim)
      lc_error(L, "transpose", "permutation has %d axes, the array has %d", n, a->lay.ndim);
    for (int i = 0; i < n; i++) perm[i] = axes[i] > LC_MAXDIM ? LC_MAXDIM : (int)axes[i] - 1;
    rc = lc_layout_transpose(&t, perm, err);
  }
  if (rc) lc_error(L, "transpose", "%s", err);
  lc_array_push_view(L, a, &t, a->dtype);
  return 1;
}

/***
A view without size-1 axes (or without the one given).
@function Array:squeeze
@tparam[opt] integer axis the size-1 axis to remove, from 1
@treturn Array a view
@raise `luacuda.squeeze: axis 3 out of range for 2 dimensions`; an axis whose size is not 1
@usage assert(luacuda.zeros({1, 3, 1}):squeeze().ndim == 1)
*/

/* a:squeeze([axis]) */
static int array_squeeze(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "squeeze");
  int axis = -1;
  if (!lua_isnoneornil(L, 2)) {
    int64_t ax = lc_check_integer(L, 2, "axis", 0, "squeeze");
    if (ax < 1 || ax > a->lay.ndim)
      lc_error(L, "squeeze", "axis %lld out of range for %d dimensions",
               (long long)ax, a->lay.ndim);
    axis = (int)ax - 1;
  }
  lc_layout t = a->lay;
  char err[LC_ERRLEN];
  if (lc_layout_squeeze(&t, axis, err)) lc_error(L, "squeeze", "%s", err);
  lc_array_push_view(L, a, &t, a->dtype);
  return 1;
}

/***
The same bytes read as another dtype (the last axis rescaled when the
sizes differ).
@function Array:view
@tparam string|Record dtype the dtype to read as
@treturn Array a view
@raise `luacuda.view: <cause>` when the last axis is not contiguous or its bytes do not
divide, or the view would be misaligned
@usage local u = luacuda.zeros({2}, "float32"):view("uint32")
*/

/* a:view(dtype): the same bytes read as another dtype */
static int array_view(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "view");
  const lc_dtype *dt = lc_dtype_check(L, 2, "view");
  lc_layout t = a->lay;
  char err[LC_ERRLEN];
  if (lc_layout_view_itemsize(&t, a->dtype->size, dt->size, err))
    lc_error(L, "view", "%s", err);
  /* a misaligned element faults in a kernel: refuse it here instead (an
  ** empty view has no element, and its strides are arbitrary) */
  bool aligned = t.size == 0 || t.offset % dt->align == 0;
  for (int i = 0; i < t.ndim; i++)
    if (t.size > 0 && t.shape[i] > 1 && t.strides[i] % dt->align != 0) aligned = false;
  if (!aligned)
    lc_error(L, "view", "%s elements would be misaligned (byte offset %lld, strides "
             "not all multiples of %lld)", dt->name, (long long)t.offset, (long long)dt->align);
  lc_array_push_view(L, a, &t, dt);
  return 1;
}

/* ---- fields of record arrays: views too ---- */

/* The view of field f across every element of a: a's axes, then f's. */
static void field_view(lua_State *L, const lc_array *a, const lc_field *f, lc_array *v,
                       const char *fname) {
  int nd = a->lay.ndim;
  if (nd + f->ndim > LC_MAXDIM)
    lc_error(L, fname, "field '%s' of a %d-d array would have more than %d dimensions",
             f->name, nd, LC_MAXDIM);
  *v = *a;
  v->dtype = f->dtype;
  v->lay.offset += f->offset;
  int64_t st = f->dtype->size;
  for (int k = f->ndim - 1; k >= 0; k--) {
    v->lay.shape[nd + k] = f->shape[k];
    v->lay.strides[nd + k] = st;
    st *= f->shape[k];            /* within the record's size */
  }
  v->lay.ndim = nd + f->ndim;
  /* within a's count times the record's size too, but counted by the one
  ** check every shape takes */
  char err[LC_ERRLEN];
  if (lc_shape_count(v->lay.ndim, v->lay.shape, f->dtype->size, &v->lay.size, err))
    lc_error(L, fname, "field '%s': %s", f->name, err);
}

static const lc_field *array_field(const lc_array *a, const char *key) {
  if (a == NULL || a->dtype == NULL || a->dtype->rec == NULL) return NULL;
  return lc_record_field(a->dtype->rec, key);
}

int lc_record_index(lua_State *L, const lc_array *a, const char *key, const char *fname) {
  const lc_field *f = array_field(a, key);
  if (f == NULL) return 0;
  a = lc_array_check(L, 1, fname);
  lc_array v;
  field_view(L, a, f, &v, fname);
  if (v.lay.ndim == 0 && f->dtype->rec == NULL) {   /* one value */
    lc_elem_push_at(L, &v, v.lay.offset, NULL, fname);
  } else {
    lc_array_push_view(L, a, &v.lay, f->dtype);
  }
  return 1;
}

int lc_record_newindex(lua_State *L, const lc_array *a, const char *key, int vidx,
                       const char *fname) {
  const lc_field *f = array_field(a, key);
  if (f == NULL) return 0;
  a = lc_array_check(L, 1, fname);
  lc_array v;
  field_view(L, a, f, &v, fname);
  lc_assign(L, &v, &v.lay, vidx, NULL, fname);
  return 1;
}

/***
Views of `section` rows each along the first axis (the last one shorter
when `section` does not divide the length).
@function Array:split
@tparam integer section rows per part, positive
@tparam[opt] Stream stream accepted for symmetry with the copies (views copy nothing)
@treturn {Array,...} the views
@raise `luacuda.split: section must be positive, got 0`; `a 0-d array cannot be split`
@usage local parts = luacuda.arange(5):split(2)
assert(#parts == 3 and #parts[3] == 1)
*/

/* a:split(section [, stream]): views of section rows each along the first
** axis (the last one shorter when section does not divide the length) */
static int array_split(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "split");
  int64_t sec = lc_check_integer(L, 2, "section", 0, "split");
  if (sec < 1) lc_error(L, "split", "section must be positive, got %lld", (long long)sec);
  lc_opt_stream(L, 3, "split");
  if (a->lay.ndim == 0) lc_error(L, "split", "a 0-d array cannot be split");
  int64_t n = a->lay.shape[0];
  int64_t parts = n / sec + (n % sec != 0);
  if (parts > INT32_MAX) lc_error(L, "split", "too many parts (%lld)", (long long)parts);
  lua_createtable(L, (int)parts, 0);
  char err[LC_ERRLEN];
  for (int64_t k = 0; k < parts; k++) {
    lc_layout t = a->lay;
    int64_t count = n - k * sec < sec ? n - k * sec : sec;
    lc_layout_slice(&t, 0, k * sec, count, 1, err);   /* in bounds by construction */
    lc_array_push_view(L, a, &t, a->dtype);
    lua_rawseti(L, -2, k + 1);
  }
  return 1;
}

/***
Whether the elements are contiguous in C order (last axis fastest).
@function Array:is_c_contiguous
@treturn boolean
@raise `luacuda.is_c_contiguous: expected an array, got <type>`; `attempt to use a closed array`
@usage assert(luacuda.zeros({2, 3}):is_c_contiguous())
*/

static int array_is_c_contiguous(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "is_c_contiguous");
  lua_pushboolean(L, lc_layout_is_c_contiguous(&a->lay, a->dtype->size));
  return 1;
}

/***
Whether the elements are contiguous in Fortran order (first axis fastest).
@function Array:is_f_contiguous
@treturn boolean
@raise `luacuda.is_f_contiguous: expected an array, got <type>`; `attempt to use a closed array`
@usage assert(luacuda.zeros({2, 3}).T:is_f_contiguous())
*/

static int array_is_f_contiguous(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "is_f_contiguous");
  lua_pushboolean(L, lc_layout_is_f_contiguous(&a->lay, a->dtype->size));
  return 1;
}

/***
A view of the array in `shape`, by NumPy's broadcasting: axes added in
front, size-1 axes stretched, both with stride 0 (the elements are shared,
so writing through the view writes them all).
@function Array:broadcast_to
@tparam table shape the target shape
@treturn Array a view
@raise `luacuda.broadcast_to: <cause>` when the shape is not reachable by broadcasting;
`array size overflows` for a shape as @{zeros} refuses it (its elements take
no memory, but their count must fit as any array's)
@usage local row = luacuda.arange(3)
assert(row:broadcast_to({4, 3}).shape[1] == 4)
*/

/*** @section end */

/***
`luacuda.broadcast_to(a, shape)`: the same as @{Array:broadcast_to}.
@function broadcast_to
@tparam Array a the array
@tparam table shape the target shape
@treturn Array a view
@raise `luacuda.broadcast_to: <cause>` when the shape is not reachable by broadcasting;
`array size overflows` for a shape as @{zeros} refuses it
@usage local b = luacuda.broadcast_to(luacuda.zeros({1, 3}), {2, 3})
*/

/* a:broadcast_to(shape) and luacuda.broadcast_to(a, shape): a view of a
** in shape, NumPy's broadcasting (axes added in front, size-1 axes
** stretched, both with stride 0: its elements are shared, so writing
** through it writes them all) */
static int array_broadcast_to(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "broadcast_to");
  int64_t shape[LC_MAXDIM];
  int nd = lc_check_dims(L, 2, false, false, shape, "shape", "broadcast_to");
  lc_layout lay;
  char err[LC_ERRLEN];
  if (lc_layout_broadcast(&a->lay, a->dtype->size, nd, shape, &lay, err))
    lc_error(L, "broadcast_to", "%s", err);
  lc_array_push_view(L, a, &lay, a->dtype);
  return 1;
}

/***
The shape that the given shapes (or arrays' shapes) broadcast to.
@function broadcast_shapes
@param ... shapes (tables) or arrays, at most 64
@treturn table the shape
@raise `luacuda.broadcast_shapes: <cause>` for shapes that do not broadcast together;
`array size overflows` when the shape has more than 2^63 - 1 elements (a zero-length axis
counted as 1)
@usage local s = luacuda.broadcast_shapes({3, 1}, {4})
assert(s[1] == 3 and s[2] == 4)
*/

/* luacuda.broadcast_shapes(shape | array, ...): the shape they broadcast
** to, as a table */
static int l_broadcast_shapes(lua_State *L) {
  int n = lua_gettop(L);
  if (n > 64) lc_error(L, "broadcast_shapes", "at most 64 shapes, got %d", n);
  int64_t shapes[64][LC_MAXDIM];
  const int64_t *rows[64];
  int ndims[64];
  for (int i = 0; i < n; i++) {
    lc_array *a = lc_array_test(L, i + 1);
    if (a) {
      if (!lc_array_is_open(a)) lc_array_check(L, i + 1, "broadcast_shapes");
      ndims[i] = a->lay.ndim;
      memcpy(shapes[i], a->lay.shape, sizeof a->lay.shape);
    } else {
      ndims[i] = lc_check_dims(L, i + 1, false, false, shapes[i], "shape", "broadcast_shapes");
    }
    rows[i] = shapes[i];
  }
  int nd;
  int64_t out[LC_MAXDIM];
  char err[LC_ERRLEN];
  if (lc_broadcast_shapes(n, ndims, rows, &nd, out, err)) lc_error(L, "broadcast_shapes", "%s", err);
  lua_createtable(L, nd, 0);
  for (int i = 0; i < nd; i++) {
    lua_pushinteger(L, out[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static const luaL_Reg methods[] = {
  {"broadcast_to", array_broadcast_to},
  {"reshape", array_reshape},
  {"ravel", array_ravel},
  {"transpose", array_transpose},
  {"squeeze", array_squeeze},
  {"view", array_view},
  {"split", array_split},
  {"is_c_contiguous", array_is_c_contiguous},
  {"is_f_contiguous", array_is_f_contiguous},
  {NULL, NULL}
};

void lc_shape_open(lua_State *L) {
  lc_array_add_methods(L, methods);
  static const luaL_Reg fns[] = {
    {"broadcast_to", array_broadcast_to},
    {"broadcast_shapes", l_broadcast_shapes},
    {NULL, NULL}
  };
  lc_setfuncs(L, fns);
}
