/*
** sort: sort, argsort (functions, and methods: a:sort() sorts in place as
** NumPy's ndarray.sort does, a:argsort() gives new indices), searchsorted
** and unique. Reads the arguments, checks everything before anything is
** allocated or written, and chooses where the work runs: device-accessible
** arrays (device, managed, mapped) on the backend's sort slot, queued on
** the stream; host and pinned arrays here (base/sort.c). searchsorted and
** unique compute on the host, waiting for the arrays' queued work (their
** results' sizes, unique's, depend on the data): device arrays are copied
** to the host and the results back to the input's kind.
*/
#include "array.h"

#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "gate.h"
#include "pending.h"
#include "sort.h"
#include "stream.h"
#include "device.h"
#include "copy.h"

static bool computes_on_backend(const lc_array *a) {
  return lc_kind_device_accessible(lc_array_kind(a));
}

/* bool, integers and floats have an order; records do not */
static void check_sortable(lua_State *L, const lc_array *a, const char *fname) {
  if (a->dtype->kind == 'V')
    lc_error(L, fname, "a record array (dtype %s) has no order to sort by", a->dtype->name);
}

/* Arguments ([axis] [, opts]) after the array: leaves the axis at 2 and the
** options at 3 (nil where absent) and returns the axis, 0-based (the last
** by default, as NumPy's). */
static int read_axis_opts(lua_State *L, const lc_array *a, const char *const *keys,
                          const char *fname) {
  while (lua_gettop(L) > 1 && lua_isnil(L, -1)) lua_pop(L, 1);   /* trailing nils */
  if (lua_type(L, 2) == LUA_TTABLE) {
    if (!lua_isnone(L, 3))
      lc_error(L, fname, "an options table is the last argument, got %s after it",
               luaL_typename(L, 3));
    lua_pushnil(L);
    lua_insert(L, 2);
  }
  if (!lua_isnone(L, 4))
    lc_error(L, fname, "expected at most an axis and an options table, got %d arguments",
             lua_gettop(L) - 1);
  lua_settop(L, 3);
  int ndim = a->lay.ndim;
  if (ndim == 0)
    lc_error(L, fname, "a 0-d array has no axis to sort along");
  int axis = ndim - 1;
  if (!lua_isnil(L, 2)) {
    if (lua_type(L, 2) != LUA_TNUMBER)
      lc_error(L, fname, "axis must be an integer (luacuda counts axes from 1), got %s",
               luaL_typename(L, 2));
    int64_t ax = lc_check_integer(L, 2, "axis", 0, fname);
    if (ax < 1 || ax > ndim)
      lc_error(L, fname, "axis %lld is out of range for a %d-d array (luacuda counts axes "
               "from 1: 1 to %d)", (long long)ax, ndim, ndim);
    axis = (int)(ax - 1);
  }
  lc_check_opts(L, 3, keys, fname);
  return axis;
}

/* Sort (or argsort) a's rows along axis into dst (a's shape), on the
** backend or here. */
static void run(lua_State *L, const lc_array *a, const lc_array *dst, int axis, bool argsort,
                lc_stream *s, const char *fname) {
  lc_sort_call c;
  memset(&c, 0, sizeof c);
  c.argsort = argsort;
  c.type = a->dtype->code;
  c.axis = axis;
  c.in_lay = a->lay;
  c.out_lay = dst->lay;
  if (!computes_on_backend(a)) {
    lc_pending_wait(L, a, false, fname);
    lc_pending_wait(L, dst, true, fname);
    lc_sync_host(L, lc_array_kind(dst), fname);
    void *scratch = lc_sort_scratch_alloc(lc_sort_scratch_bytes(&c));
    if (scratch == NULL)
      lc_error(L, fname, "out of memory for the sort's scratch (%zu bytes)",
               lc_sort_scratch_bytes(&c));
    c.in = a->buf->ptr;
    c.out = dst->buf->ptr;
    lc_sort_host(&c, scratch);
    lc_sort_scratch_free(scratch, lc_sort_scratch_bytes(&c));
    return;
  }
  const lc_backend *be = a->buf->backend;
  if (be->sort == NULL)
    lc_error(L, fname, "the %s backend cannot sort device arrays", be->name);
  c.in = a->buf->dev;
  c.out = dst->buf->dev;
  if (s == NULL) {
    lc_pending_wait(L, a, false, fname);
    lc_pending_wait(L, dst, true, fname);
  } else {
    lc_buffer_use(L, a->buf, s, fname);
    lc_buffer_use(L, dst->buf, s, fname);
  }
  char err[LC_ERRLEN];
  if (be->sort(&c, s, err)) lc_error(L, fname, "%s", err);
  if (s) {
    lc_pending_add(a->buf, s, false);
    lc_pending_add(dst->buf, s, true);
  }
}

/* out= for a result of a's shape and dtype dt, where a's sort runs */
static void check_out(lua_State *L, const lc_array *a, const lc_array *out, const lc_dtype *dt,
                      const char *fname) {
  const lc_layout *ol = &out->lay, *il = &a->lay;
  bool same = ol->ndim == il->ndim && out->dtype == dt;
  for (int i = 0; same && i < il->ndim; i++) same = ol->shape[i] == il->shape[i];
  if (!same) {
    char want[LC_SHAPE_STRLEN], got[LC_SHAPE_STRLEN];
    lc_shape_format(want, sizeof want, il->ndim, il->shape);
    lc_shape_format(got, sizeof got, ol->ndim, ol->shape);
    lc_error(L, fname, "out= must have the result's shape %s and dtype %s, got shape %s "
             "and dtype %s", want, dt->name, got, out->dtype->name);
  }
  lc_kind ok = lc_array_kind(out), ak = lc_array_kind(a);
  if (computes_on_backend(a) && !lc_kind_device_accessible(ok))
    lc_error(L, fname, "out= is a %s array, but a %s array's %s runs on the device: out= "
             "must be device, managed or mapped memory", lc_kind_names[ok], lc_kind_names[ak],
             fname);
  if (!computes_on_backend(a) && !lc_kind_host_accessible(ok))
    lc_error(L, fname, "out= is a %s array, but a %s array's %s runs on the host: out= "
             "must be host-addressable memory", lc_kind_names[ok], lc_kind_names[ak], fname);
  lc_check_current_device(L, out, "out=", fname);
}

/* luacuda.sort and luacuda.argsort, and the method a:argsort */
static int sort_new(lua_State *L, bool argsort) {
  const char *fname = argsort ? "argsort" : "sort";
  lc_array *a = lc_array_check(L, 1, fname);
  check_sortable(L, a, fname);
  static const char *const keys[] = {"out", "stream", NULL};
  int axis = read_axis_opts(L, a, keys, fname);
  lc_opt_get(L, 3, "out");                            /* 4 */
  lc_array *out = NULL;
  if (!lua_isnil(L, 4)) {
    if (lc_array_test(L, 4) == NULL)
      lc_error(L, fname, "out= must be an array, got %s", luaL_typename(L, 4));
    out = lc_array_check(L, 4, fname);
  }
  lc_opt_get(L, 3, "stream");                         /* 5 */
  lc_stream *s = lc_opt_stream(L, 5, fname);
  const lc_dtype *dt = argsort ? &lc_dtypes[LC_INT64] : a->dtype;
  lc_check_current_device(L, a, "input", fname);
  if (out) check_out(L, a, out, dt, fname);
  lc_array *dst = out;
  if (dst == NULL || lc_arrays_overlap(dst, &dst->lay, a, &a->lay))
    dst = lc_array_empty(L, lc_array_kind(a), dt, a->lay.ndim, a->lay.shape, 'C', s, fname);
  int dstidx = lua_gettop(L);
  run(L, a, dst, axis, argsort, s, fname);
  if (out && dst != out) {
    lc_copy_array(L, out, dst, s, fname);
    lua_pushvalue(L, 4);
    return 1;
  }
  lua_pushvalue(L, out ? 4 : dstidx);
  return 1;
}

static int l_sort(lua_State *L) { return sort_new(L, false); }
static int l_argsort(lua_State *L) { return sort_new(L, true); }

/* a:sort([axis] [, opts]): in place */
static int array_sort(lua_State *L) {
  const char *fname = "sort";
  lc_array *a = lc_array_check(L, 1, fname);
  check_sortable(L, a, fname);
  static const char *const keys[] = {"stream", NULL};
  int axis = read_axis_opts(L, a, keys, fname);
  lc_opt_get(L, 3, "stream");                         /* 4 */
  lc_stream *s = lc_opt_stream(L, 4, fname);
  lc_check_current_device(L, a, "input", fname);
  run(L, a, a, axis, false, s, fname);
  lua_settop(L, 1);
  return 1;
}

/* A host array holding a's elements, C-contiguous: a itself when it is
** so already (after its queued work), else a copy. Pushed. */
static const lc_array *host_contiguous(lua_State *L, int idx, const char *fname) {
  lc_array *a = lc_array_check(L, idx, fname);
  if (lc_kind_host_only(lc_array_kind(a)) && lc_layout_is_c_contiguous(&a->lay, a->dtype->size)) {
    lc_pending_wait(L, a, false, fname);
    lua_pushvalue(L, idx);
    return a;
  }
  lc_array *h = lc_array_empty(L, LC_HOST, a->dtype, a->lay.ndim, a->lay.shape, 'C', NULL, fname);
  lc_copy_array(L, h, a, NULL, fname);
  return h;
}

/* The host array at the top as an array of kind (replacing it). */
static void to_kind(lua_State *L, lc_kind kind, const char *fname) {
  if (kind == LC_HOST) return;
  lc_array *h = lc_array_check(L, -1, fname);
  lc_array *d = lc_array_empty(L, kind, h->dtype, h->lay.ndim, h->lay.shape, 'C', NULL, fname);
  lc_copy_array(L, d, h, NULL, fname);
  lua_remove(L, -2);
}

static int l_searchsorted(lua_State *L) {
  const char *fname = "searchsorted";
  lc_array *a = lc_array_check(L, 1, fname);
  check_sortable(L, a, fname);
  if (a->lay.ndim != 1)
    lc_error(L, fname, "the sorted array must be 1-d, got a %d-d array", a->lay.ndim);
  lua_settop(L, 3);
  static const char *const keys[] = {"side", NULL};
  lc_check_opts(L, 3, keys, fname);
  lc_opt_get(L, 3, "side");                           /* 4 */
  bool right = false;
  if (!lua_isnil(L, 4)) {
    const char *side = lua_type(L, 4) == LUA_TSTRING ? lua_tostring(L, 4) : NULL;
    if (side == NULL || (strcmp(side, "left") != 0 && strcmp(side, "right") != 0))
      lc_error(L, fname, "side must be \"left\" or \"right\", got %s",
               side ? side : luaL_typename(L, 4));
    right = side[0] == 'r';
  }
  const lc_dtype *dt = a->dtype;
  if (lua_type(L, 2) == LUA_TNUMBER || lua_type(L, 2) == LUA_TBOOLEAN) {
    unsigned char v[8];
    lc_elem_check(L, 2, dt, v, fname);
    const lc_array *h = host_contiguous(L, 1, fname);
    int64_t i = lc_sort_search(dt, lc_array_data(h), h->lay.size, dt->size,
                               lc_sort_equal_key(dt, v), right);
    lua_pushinteger(L, i + 1);
    return 1;
  }
  lc_array *v = lc_array_test(L, 2) ? lc_array_check(L, 2, fname) : NULL;
  if (v == NULL)
    lc_error(L, fname, "the values must be an array or a number, got %s", luaL_typename(L, 2));
  if (v->dtype != dt)
    lc_error(L, fname, "the values (%s) must have the sorted array's dtype %s (convert "
             "them with astype)", v->dtype->name, dt->name);
  const lc_array *h = host_contiguous(L, 1, fname);      /* 5 */
  const lc_array *hv = host_contiguous(L, 2, fname);     /* 6 */
  lc_array *r = lc_array_empty(L, LC_HOST, &lc_dtypes[LC_INT64], v->lay.ndim, v->lay.shape, 'C',
                               NULL, fname);
  const char *data = lc_array_data(h), *vs = lc_array_data(hv);
  int64_t *ri = (int64_t *)lc_array_data(r), n = h->lay.size;
  for (int64_t j = 0; j < hv->lay.size; j++)
    ri[j] = 1 + lc_sort_search(dt, data, n, dt->size, lc_sort_equal_key(dt, vs + j * dt->size),
                               right);
  to_kind(L, lc_array_kind(v), fname);
  return 1;
}

static int l_unique(lua_State *L) {
  const char *fname = "unique";
  lc_array *a = lc_array_check(L, 1, fname);
  check_sortable(L, a, fname);
  lua_settop(L, 2);
  static const char *const keys[] = {"return_index", "return_inverse", "return_counts", NULL};
  lc_check_opts(L, 2, keys, fname);
  bool want[3];
  for (int i = 0; i < 3; i++) {
    lc_opt_get(L, 2, keys[i]);
    if (!lua_isnil(L, -1) && !lua_isboolean(L, -1))
      lc_error(L, fname, "%s must be a boolean, got %s", keys[i], luaL_typename(L, -1));
    want[i] = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  lc_kind kind = lc_array_kind(a);
  const lc_dtype *dt = a->dtype, *i64 = &lc_dtypes[LC_INT64];
  int64_t n = a->lay.size;
  const lc_array *h = host_contiguous(L, 1, fname);                       /* 3 */
  /* the stable order of the flattened elements */
  lc_array *perm = lc_array_empty(L, LC_HOST, i64, 1, &n, 'C', NULL, fname);   /* 4 */
  lc_sort_call c;
  memset(&c, 0, sizeof c);
  c.argsort = true;
  c.type = dt->code;
  c.axis = 0;
  char err[LC_ERRLEN];
  if (lc_layout_contiguous(&c.in_lay, 1, &n, dt->size, 'C', err)) lc_error(L, fname, "%s", err);
  c.in_lay.offset = h->lay.offset;
  c.out_lay = perm->lay;
  c.in = h->buf->ptr;
  c.out = perm->buf->ptr;
  void *scratch = lc_sort_scratch_alloc(lc_sort_scratch_bytes(&c));
  if (scratch == NULL)
    lc_error(L, fname, "out of memory for the sort's scratch (%zu bytes)",
             lc_sort_scratch_bytes(&c));
  lc_sort_host(&c, scratch);
  lc_sort_scratch_free(scratch, lc_sort_scratch_bytes(&c));
  const int64_t *p = (const int64_t *)lc_array_data(perm);
  const char *data = lc_array_data(h);
  /* the groups of equal elements, in order */
  int64_t groups = 0;
  uint64_t last = 0;
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = lc_sort_equal_key(dt, data + (p[i] - 1) * dt->size);
    if (i == 0 || k != last) groups++;
    last = k;
  }
  lc_array *vals = lc_array_empty(L, LC_HOST, dt, 1, &groups, 'C', NULL, fname);   /* 5 */
  lc_array *first = lc_array_empty(L, LC_HOST, i64, 1, &groups, 'C', NULL, fname); /* 6 */
  lc_array *inv = lc_array_empty(L, LC_HOST, i64, a->lay.ndim, a->lay.shape, 'C', NULL,
                                 fname);                                          /* 7 */
  lc_array *counts = lc_array_empty(L, LC_HOST, i64, 1, &groups, 'C', NULL, fname); /* 8 */
  char *vd = lc_array_data(vals);
  int64_t *fd = (int64_t *)lc_array_data(first), *id = (int64_t *)lc_array_data(inv),
          *cd = (int64_t *)lc_array_data(counts);
  int64_t g = -1;
  for (int64_t i = 0; i < n; i++) {
    const char *e = data + (p[i] - 1) * dt->size;
    uint64_t k = lc_sort_equal_key(dt, e);
    if (i == 0 || k != last) {
      g++;
      memcpy(vd + g * dt->size, e, (size_t)dt->size);
      fd[g] = p[i];
      cd[g] = 0;
    }
    last = k;
    cd[g]++;
    id[p[i] - 1] = g + 1;
  }
  int nret = 1;
  lua_pushvalue(L, 5);
  to_kind(L, kind, fname);
  for (int i = 0; i < 3; i++) {
    if (!want[i]) continue;
    lua_pushvalue(L, 6 + i);
    to_kind(L, kind, fname);
    nret++;
  }
  return nret;
}

/*** @module luacuda */

/***
A sorted copy: each row along `axis` (the last by default, as NumPy's
`np.sort`) in ascending order; NaN last, as NumPy sorts (-0.0 and 0.0
are equal and keep their signs). Every dtype but records.

Host and pinned arrays are sorted on the CPU (a radix sort), device,
managed and mapped arrays by the backend (on the CUDA backend, a radix
sort kernel; on the simulator, the CPU's sort on its stream).
@function sort
@tparam Array a the array
@tparam[opt] integer axis the axis to sort along, from 1
@tparam[opt] table opts `{out =, stream =}`: `out` the array to write (a's
shape and dtype); `stream` queues the work on it (device-accessible arrays)
@treturn Array a new array of a's kind, or `out`
@raise `luacuda.sort: axis 3 is out of range for a 2-d array (luacuda counts axes from 1: 1 to 2)`;
`luacuda.sort: a 0-d array has no axis to sort along`; a record dtype; a bad `out`
@usage print(luacuda.sort(luacuda.array({3, 1, 2})))  -- {1, 2, 3}
*/

/***
The 1-based indices that sort each row along `axis` (the last by
default): `a[idx[1]]`, `a[idx[2]]`, ... ascend. Stable: equal elements
keep their order (NumPy's `np.argsort(kind="stable")`, plus 1); NaN
last, -0.0 equal to 0.0. int64.
@function argsort
@tparam Array a the array
@tparam[opt] integer axis the axis, from 1
@tparam[opt] table opts `{out =, stream =}`: `out` an int64 array of a's shape
@treturn Array a new int64 array of a's kind, or `out`
@raise `luacuda.argsort: axis 3 is out of range for a 2-d array (luacuda counts axes from 1: 1 to 2)`;
a 0-d array; a record dtype; a bad `out`
@usage print(luacuda.argsort(luacuda.array({30, 10, 20})))  -- {2, 3, 1}
*/

/***
Where values would go in a sorted 1-d array to keep it sorted: for each
value v, the 1-based position `i` such that inserting v before `a[i]`
(`table.insert(t, i, v)`'s position; `#a + 1` at the end) keeps the
order. With `side = "left"` (the default) the first such position (every
`a[j] < v` before it), with `"right"` the last (every `a[j] <= v` before
it): NumPy's `np.searchsorted` plus 1. NaN sorts last, as in @{sort}.
The values are an array of a's dtype (convert others with `astype`) or a
number; the search runs on the host, after the arrays' queued work.
@function searchsorted
@tparam Array a a sorted 1-d array
@param v an array of a's dtype, or a number
@tparam[opt] table opts `{side = "left" | "right"}`
@return an int64 array of v's shape and kind, or an integer for a number
@raise `luacuda.searchsorted: the sorted array must be 1-d, got a 2-d array`; values of
another dtype; a bad `side`
@usage print(luacuda.searchsorted(luacuda.array({10, 20, 30}), 20))  -- 2
*/

/***
The sorted distinct elements of the flattened array (NaNs are one,
-0.0 and 0.0 one), with, as asked, the 1-based index of each one's first
occurrence, the inverse (for each element of a, the 1-based index of its
value in the result, in a's shape) and the counts, returned in that
order (NumPy's `np.unique` with `return_index`, `return_inverse`,
`return_counts`). Computed on the host, after a's queued work; the
results are of a's kind.
@function unique
@tparam Array a the array
@tparam[opt] table opts `{return_index = false, return_inverse = false, return_counts = false}`
@treturn Array the values (a 1-d array of a's dtype)
@return the int64 arrays asked for
@raise `luacuda.unique: return_counts must be a boolean, got string`; a record dtype
@usage local v, counts = luacuda.unique(luacuda.array({3, 1, 3}), {return_counts = true})
print(v, counts)  -- {1, 3}  {1, 2}
*/

/*** @type Array */

/***
Sort in place: each row along `axis` (the last by default), as NumPy's
`ndarray.sort`; @{sort} gives a sorted copy instead. Views sort their
own elements.
@function Array:sort
@tparam[opt] integer axis the axis, from 1
@tparam[opt] table opts `{stream =}`
@treturn Array the array itself
@raise `luacuda.sort: axis 3 is out of range for a 2-d array (luacuda counts axes from 1: 1 to 2)`;
a 0-d array; a record dtype
@usage local a = luacuda.array({3, 1, 2}); a:sort(); print(a)  -- {1, 2, 3}
*/

/***
@{argsort} as a method: new 1-based int64 indices, stable.
@function Array:argsort
@tparam[opt] integer axis the axis, from 1
@tparam[opt] table opts `{out =, stream =}`
@treturn Array a new int64 array of a's kind, or `out`
@raise as @{argsort}
@usage print(luacuda.array({30, 10, 20}):argsort())  -- {2, 3, 1}
*/

/*** @section end */

void lc_sort_open(lua_State *L) {
  static const luaL_Reg fns[] = {
    {"sort", l_sort}, {"argsort", l_argsort}, {"searchsorted", l_searchsorted},
    {"unique", l_unique}, {NULL, NULL}
  };
  lc_setfuncs(L, fns);
  static const luaL_Reg methods[] = {{"sort", array_sort}, {"argsort", l_argsort}, {NULL, NULL}};
  lc_array_add_methods(L, methods);
}
