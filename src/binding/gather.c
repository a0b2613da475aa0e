/*
** gather: indexing with arrays of indices and with masks. take, put,
** a[idx] and a[mask] (read and assigned: index.c hands an array key here),
** add_at (scatter_add), nonzero (where with one argument), count_nonzero,
** bincount. Indices are 1-based, negative from the end, as a[i] is; every
** index is checked before anything is written, and the first one out of
** range is named. Host arrays run base/gather.c here, device-accessible
** ones the backend's gather slot, queued on the stream given. A mask's
** result has a size known only from its data: its count is read back,
** waiting for the stream, then the compaction is queued.
*/
#include "array.h"

#include <stdio.h>
#include <string.h>

#include "args.h"
#include "gate.h"
#include "gather.h"
#include "pending.h"
#include "stream.h"
#include "device.h"
#include "copy.h"
#include "convert.h"

static const lc_dtype *const int64_dt = &lc_dtypes[LC_INT64];

static bool on_backend(const lc_array *a) { return lc_kind_device_accessible(lc_array_kind(a)); }

/* Every array of a call is on the side that computes it: host-addressable
** memory for a host array, device-accessible memory for the others. */
static void check_side(lua_State *L, const lc_array *a, const lc_array *x, const char *what,
                       const char *fname) {
  lc_kind ak = lc_array_kind(a), xk = lc_array_kind(x);
  if (on_backend(a) && !lc_kind_device_accessible(xk))
    lc_error(L, fname, "the %s: a %s array, but the array indexed is a %s array: both must "
             "be where the work runs (move the %s with to_device)", what, lc_kind_names[xk],
             lc_kind_names[ak], what);
  if (!on_backend(a) && !lc_kind_host_accessible(xk))
    lc_error(L, fname, "the %s: a %s array, but the array indexed is a %s array: both must "
             "be where the work runs (move the %s with to_host)", what, lc_kind_names[xk],
             lc_kind_names[ak], what);
  lc_check_current_device(L, x, what, fname);
}

/* Push obj:name(args...) called with the nargs values on top (popped). */
static void call_method(lua_State *L, int obj, const char *name, int nargs) {
  obj = lua_absindex(L, obj);
  lua_getfield(L, obj, name);
  lua_pushvalue(L, obj);
  lua_rotate(L, -2 - nargs, 2);
  lua_call(L, nargs + 1, 1);
}

/* The integer indices at idx as an int64 array (pushed): an array of an
** integer dtype, a table of integers or an integer; bool arrays are the
** caller's business. */
static lc_array *push_indices(lua_State *L, int idx, const lc_array *a, const char *fname) {
  idx = lua_absindex(L, idx);
  lc_array *x = lc_array_test(L, idx);
  if (x) {
    x = lc_array_check(L, idx, fname);
    if (x->dtype->kind != 'i' && x->dtype->kind != 'u')
      lc_error(L, fname, "indices must be an array of integers, got a %s array%s",
               x->dtype->name, x->dtype->kind == 'b' ? " (a mask indexes as a[mask])" : "");
    check_side(L, a, x, "indices", fname);
    if (x->dtype->code == LC_INT64) {
      lua_pushvalue(L, idx);
      return x;
    }
    lua_pushstring(L, "int64");
    call_method(L, idx, "astype", 1);
    return lc_array_check(L, -1, fname);
  }
  if (lua_type(L, idx) == LUA_TTABLE)
    return lc_from_table(L, idx, int64_dt, lc_array_kind(a), NULL, fname);
  if (lua_isinteger(L, idx)) return lc_from_scalar(L, idx, int64_dt, lc_array_kind(a), fname);
  lc_error(L, fname, "indices must be an array of integers, a table of them or an integer, "
           "got %s", luaL_typename(L, idx));
  return NULL;
}

/* Run c, whose arrays are those given (writes: which of them it writes),
** here or on the backend, after (or queued behind) the work on them. */
static void run(lua_State *L, lc_gather_call *c, const lc_array *const *arrays,
                const bool *writes, int n, lc_stream *s, const char *fname) {
  const lc_array *a = arrays[0];
  if (!on_backend(a)) {
    for (int i = 0; i < n; i++) {
      lc_pending_wait(L, arrays[i], writes[i], fname);
      lc_sync_host(L, lc_array_kind(arrays[i]), fname);
    }
    lc_gather_host(c);
    return;
  }
  const lc_backend *be = a->buf->backend;
  if (be->gather == NULL) lc_error(L, fname, "the %s backend cannot index with arrays", be->name);
  for (int i = 0; i < n; i++) {
    if (s == NULL) lc_pending_wait(L, arrays[i], writes[i], fname);
    else lc_buffer_use(L, arrays[i]->buf, s, fname);
  }
  char err[LC_ERRLEN];
  if (be->gather(c, s, err)) lc_error(L, fname, "%s", err);
  if (s)
    for (int i = 0; i < n; i++) lc_pending_add(arrays[i]->buf, s, writes[i]);
}

/* The base pointer of an array's buffer for the side computing with a */
static char *base_of(const lc_array *a, const lc_array *x) {
  return on_backend(a) ? (char *)x->buf->dev : (char *)x->buf->ptr;
}

/* The call of op on a's axes [axis, axis + naxes) indexed by x, its
** element type dtype (a's, or the index check's int64): the fields every
** gather and scatter sets; the caller adds its values or check. */
static lc_gather_call index_call(int op, const lc_dtype *dtype, const lc_array *a,
                                 const lc_array *x, int axis, int naxes) {
  lc_gather_call c;
  memset(&c, 0, sizeof c);
  c.op = op;
  c.dtype = dtype->code;
  c.itemsize = dtype->size;
  c.arr = base_of(a, a);
  c.arr_lay = a->lay;
  c.idx = base_of(a, x);
  c.idx_lay = x->lay;
  c.axis = axis;
  c.naxes = naxes;
  return c;
}

/* Fail naming the first index of x out of range for axes [axis, axis +
** naxes) of a, before anything is written. */
static void check_indices(lua_State *L, const lc_array *a, int axis, int naxes,
                          const lc_array *x, lc_stream *s, const char *fname) {
  if (x->lay.size == 0) return;
  int top = lua_gettop(L);
  int64_t two = 2;
  lc_array *chk = lc_array_empty(L, lc_array_kind(a), int64_dt, 1, &two, 'C', s, fname);
  lc_gather_call c = index_call(LC_GATHER_CHECK, int64_dt, a, x, axis, naxes);
  c.check = (long long *)(void *)(base_of(a, chk) + chk->lay.offset);
  const lc_array *arrays[2] = {x, chk};
  bool writes[2] = {false, true};
  run(L, &c, arrays, writes, 2, s, fname);
  lc_elem_push_at(L, chk, chk->lay.offset, s, fname);
  int64_t pos = lua_tointeger(L, -1);
  if (pos < 0) {
    lua_settop(L, top);
    return;
  }
  lc_elem_push_at(L, chk, chk->lay.offset + 8, s, fname);
  int64_t v = lua_tointeger(L, -1), n = 1, coord[LC_MAXDIM];
  for (int i = 0; i < naxes; i++) n *= a->lay.shape[axis + i];
  char where[LC_SHAPE_STRLEN] = "";
  if (x->lay.ndim > 1) {
    int64_t e = pos;
    for (int d = x->lay.ndim - 1; d >= 0; d--) {
      coord[d] = e % x->lay.shape[d] + 1;
      e /= x->lay.shape[d];
    }
    lc_shape_format(where, sizeof where, x->lay.ndim, coord);
  } else {
    snprintf(where, sizeof where, "%lld", (long long)pos + 1);
  }
  if (naxes == 1)
    lc_error(L, fname, "index %lld (at position %s of the indices) is out of bounds for axis "
             "%d of size %lld%s", (long long)v, where, axis + 1, (long long)n,
             v == 0 ? ": luacuda counts from 1 (negative indices from the end)" : "");
  lc_error(L, fname, "index %lld (at position %s of the indices) is out of bounds for the "
           "%lld elements of the array, flattened%s", (long long)v, where, (long long)n,
           v == 0 ? ": luacuda counts from 1 (negative indices from the end)" : "");
}

/* The shape of the values of indexing axes [axis, axis + naxes) of a with x */
static int values_shape(lua_State *L, const lc_array *a, int axis, int naxes,
                        const lc_array *x, int64_t *shape, const char *fname) {
  int nd = 0;
  if (a->lay.ndim - naxes + x->lay.ndim > LC_MAXDIM)
    lc_error(L, fname, "the result would have more than %d axes", LC_MAXDIM);
  for (int d = 0; d < axis; d++) shape[nd++] = a->lay.shape[d];
  for (int d = 0; d < x->lay.ndim; d++) shape[nd++] = x->lay.shape[d];
  for (int d = axis + naxes; d < a->lay.ndim; d++) shape[nd++] = a->lay.shape[d];
  return nd;
}

/* Push a new array of a's values at x (checked) along axes [axis, axis +
** naxes), or write them into out (whose shape and dtype the caller
** checked). */
static void take_into(lua_State *L, const lc_array *a, int axis, int naxes, const lc_array *x,
                      lc_array *out, lc_stream *s, const char *fname) {
  int64_t shape[LC_MAXDIM];
  int nd = values_shape(L, a, axis, naxes, x, shape, fname);
  lc_array *dst = out;
  if (dst == NULL || lc_arrays_overlap(dst, &dst->lay, a, &a->lay) ||
      lc_arrays_overlap(dst, &dst->lay, x, &x->lay))
    dst = lc_array_empty(L, lc_array_kind(a), a->dtype, nd, shape, 'C', s, fname);
  lc_gather_call c = index_call(LC_GATHER_TAKE, a->dtype, a, x, axis, naxes);
  c.val = base_of(a, dst);
  c.val_lay = dst->lay;
  const lc_array *arrays[3] = {a, x, dst};
  bool writes[3] = {false, false, true};
  run(L, &c, arrays, writes, 3, s, fname);
  if (out && dst != out) lc_copy_array(L, out, dst, s, fname);
}

/* The values at vidx for indexing axes [axis, axis + naxes) of a with x:
** a scalar, table or array, converted to a's dtype (as assignment does)
** and broadcast to the shape of the indexed elements; pushed, its
** broadcast layout in *lay. */
static lc_array *push_values(lua_State *L, int vidx, const lc_array *a, int axis, int naxes,
                             const lc_array *x, lc_layout *lay, const char *fname) {
  vidx = lua_absindex(L, vidx);
  lc_array *v = lc_array_test(L, vidx);
  if (v) {
    v = lc_array_check(L, vidx, fname);
    check_side(L, a, v, "values", fname);
    if (v->dtype != a->dtype) {
      lc_dtype_push(L, a->dtype);
      call_method(L, vidx, "astype", 1);
      v = lc_array_check(L, -1, fname);
    } else {
      lua_pushvalue(L, vidx);
    }
  } else if (lua_type(L, vidx) == LUA_TTABLE) {
    v = lc_from_table(L, vidx, a->dtype, lc_array_kind(a), NULL, fname);
  } else {
    v = lc_from_scalar(L, vidx, a->dtype, lc_array_kind(a), fname);
  }
  int64_t shape[LC_MAXDIM];
  int nd = values_shape(L, a, axis, naxes, x, shape, fname);
  char err[LC_ERRLEN];
  if (lc_layout_broadcast(&v->lay, v->dtype->size, nd, shape, lay, err)) {
    char want[LC_SHAPE_STRLEN], got[LC_SHAPE_STRLEN];
    lc_shape_format(want, sizeof want, nd, shape);
    lc_shape_format(got, sizeof got, v->lay.ndim, v->lay.shape);
    lc_error(L, fname, "values of shape %s do not broadcast to the %s elements indexed",
             got, want);
  }
  return v;
}

/* a[p, x[j], q] = (or +=) the values at vidx: checked, then written. */
static void scatter(lua_State *L, const lc_array *a, int axis, int naxes, const lc_array *x,
                    bool checked, int vidx, int op, lc_stream *s, const char *fname) {
  int top = lua_gettop(L);
  if (op == LC_GATHER_ADD && a->dtype->rec)
    lc_error(L, fname, "cannot add records");
  lc_layout vl;
  lc_array *v = push_values(L, vidx, a, axis, naxes, x, &vl, fname);
  if (!checked) check_indices(L, a, axis, naxes, x, s, fname);
  /* values or indices over the array's own memory: read from a copy */
  if (lc_arrays_overlap(a, &a->lay, v, &v->lay)) {
    lua_pushvalue(L, -1);
    call_method(L, -1, "copy", 0);
    v = lc_array_check(L, -1, fname);
    char err[LC_ERRLEN];
    lc_layout_broadcast(&v->lay, v->dtype->size, vl.ndim, vl.shape, &vl, err);
  }
  if (lc_arrays_overlap(a, &a->lay, x, &x->lay)) {
    lc_array *xc = lc_array_empty(L, lc_array_kind(a), int64_dt, x->lay.ndim, x->lay.shape,
                                  'C', s, fname);
    lc_copy_array(L, xc, x, s, fname);
    x = xc;
  }
  lc_gather_call c = index_call(op, a->dtype, a, x, axis, naxes);
  c.val = base_of(a, v);
  c.val_lay = vl;
  const lc_array *arrays[3] = {a, x, v};
  bool writes[3] = {true, false, false};
  run(L, &c, arrays, writes, 3, s, fname);
  lua_settop(L, top);
}

/* ---- masks ---- */

/* The mask at idx (a bool array: the callers tell masks by their dtype)
** for the leading axes of a: checked. */
static lc_array *check_mask(lua_State *L, int idx, const lc_array *a, const char *fname) {
  lc_array *m = lc_array_check(L, idx, fname);
  check_side(L, a, m, "mask", fname);
  bool ok = m->lay.ndim <= a->lay.ndim && m->lay.ndim > 0;
  for (int d = 0; ok && d < m->lay.ndim; d++) ok = m->lay.shape[d] == a->lay.shape[d];
  if (!ok) {
    char ms[LC_SHAPE_STRLEN], as[LC_SHAPE_STRLEN];
    lc_shape_format(ms, sizeof ms, m->lay.ndim, m->lay.shape);
    lc_shape_format(as, sizeof as, a->lay.ndim, a->lay.shape);
    lc_error(L, fname, "the mask's shape %s does not match the array's %s (a mask has the "
             "shape of the array or of its leading axes)", ms, as);
  }
  return m;
}

/* Push the coordinates of the mask's true elements: an int64 array
** {rows, count} (rows: the mask's axes, or 1 for its flat positions), of
** the mask's kind; 1-based, in C order. The count is read back first
** (waiting for s only), then the compaction queued. */
static lc_array *push_true_positions(lua_State *L, const lc_array *m, bool flat, lc_stream *s,
                                     const char *fname) {
  const lc_layout *ml = &m->lay;
  lc_kind kind = lc_array_kind(m);
  lc_gather_call c;
  memset(&c, 0, sizeof c);
  c.dtype = LC_BOOL;
  c.itemsize = 1;
  c.arr = base_of(m, m);
  c.arr_lay = *ml;
  c.flat = flat || ml->ndim == 0;
  int64_t total = 0, two = 2;
  if (ml->size > 0) {
    lc_array *cnt = lc_array_empty(L, kind, int64_dt, 1, &two, 'C', s, fname);
    c.op = LC_GATHER_COUNT;
    c.check = (long long *)(void *)(base_of(m, cnt) + cnt->lay.offset);
    const lc_array *arrays[2] = {m, cnt};
    bool writes[2] = {false, true};
    run(L, &c, arrays, writes, 2, s, fname);
    lc_elem_push_at(L, cnt, cnt->lay.offset, s, fname);
    total = lua_tointeger(L, -1);
    lua_pop(L, 2);
  }
  int64_t shape[2] = {c.flat ? 1 : ml->ndim, total};
  lc_array *pos = lc_array_empty(L, kind, int64_dt, 2, shape, 'C', s, fname);
  if (total > 0) {
    c.op = LC_GATHER_COMPACT;
    c.check = NULL;
    c.val = base_of(m, pos);
    c.val_lay = pos->lay;
    c.ntrue = total;
    const lc_array *arrays[2] = {m, pos};
    bool writes[2] = {false, true};
    run(L, &c, arrays, writes, 2, s, fname);
  }
  return pos;
}

/* The flat positions (1-based) of the mask's true elements, a 1-d int64
** array, pushed. */
static lc_array *push_mask_indices(lua_State *L, const lc_array *m, lc_stream *s,
                                   const char *fname) {
  lc_array *pos = push_true_positions(L, m, true, s, fname);
  lc_layout row = pos->lay;
  char err[LC_ERRLEN];
  lc_layout_select(&row, 0, 0, err);
  lc_array *v = lc_array_push_view(L, pos, &row, int64_dt);
  lua_remove(L, -2);
  return v;
}

/* ---- the options ---- */

typedef struct options {
  bool has_axis;
  int64_t axis;              /* 1-based */
  lc_array *out;
  int outidx;                /* its stack slot */
  lc_stream *s;
  int weights;               /* stack slot of weights=, 0: none */
  int64_t minlength;
} options;

/* The options table at idx (none or nil: all absent); each value read
** stays on the stack. */
static void read_options(lua_State *L, int idx, const char *const *known, options *o,
                         const char *fname) {
  memset(o, 0, sizeof *o);
  idx = lua_absindex(L, idx);
  if (!lua_isnone(L, idx + 1))
    lc_error(L, fname, "an options table is the last argument, got %s after it",
             luaL_typename(L, idx + 1));
  if (!lc_check_opts(L, idx, known, fname)) return;
  if (lc_opt_get(L, idx, "axis") != LUA_TNIL) {
    o->has_axis = true;
    o->axis = lc_check_integer(L, -1, "axis", 0, fname);
  }
  if (lc_opt_get(L, idx, "out") != LUA_TNIL) {
    if (lc_array_test(L, -1) == NULL)
      lc_error(L, fname, "out= must be an array, got %s", luaL_typename(L, -1));
    o->out = lc_array_check(L, -1, fname);
    o->outidx = lua_gettop(L);
  }
  if (lc_opt_get(L, idx, "weights") != LUA_TNIL) o->weights = lua_gettop(L);
  if (lc_opt_get(L, idx, "minlength") != LUA_TNIL) {
    o->minlength = lc_check_integer(L, -1, "minlength", 0, fname);
    if (o->minlength < 0)
      lc_error(L, fname, "minlength must be 0 or more, got %lld", (long long)o->minlength);
  }
  lc_opt_get(L, idx, "stream");
  o->s = lc_opt_stream(L, lua_gettop(L), fname);
}

/* axis= (1-based) of a as 0-based, checked */
static int check_axis(lua_State *L, const lc_array *a, int64_t axis, const char *fname) {
  if (axis < 1 || axis > a->lay.ndim)
    lc_error(L, fname, "axis %lld is out of range for a %d-d array (luacuda counts axes from "
             "1)", (long long)axis, a->lay.ndim);
  return (int)axis - 1;
}

/* ---- Lua functions ---- */

/*** @module luacuda */

/***
Take elements by index: `a`'s elements at the integer indices `idx` (1-based,
negative from the end), along `axis`, or in the flattened array when no axis
is given (NumPy's `take`). The result has the shape `a.shape[:axis] ..
idx.shape .. a.shape[axis+1:]` and `a`'s dtype and kind. Every index is
checked first: the first one out of range is an error naming its position.
On device arrays the work is queued on `stream` (the check waits for it).
@function take
@tparam Array a the array
@tparam Array|table|integer idx the indices: an integer array (of `a`'s side:
host or device), a table of integers or one integer
@tparam[opt] table opts `{axis =, out =, stream =}`
@treturn Array the elements (`out` when given)
@raise `luacuda.take: index 7 (at position 2 of the indices) is out of bounds for axis 1 of size 5`;
indices that are not integers; indices on another side than `a`; a bad `out`
@usage local a = luacuda.array({10, 20, 30, 40})
print(luacuda.take(a, {1, -1}))   -- {10, 40}
*/
static int l_take(lua_State *L) {
  const char *fname = "take";
  lc_array *a = lc_array_check(L, 1, fname);
  if (lua_isnone(L, 2)) lc_error(L, fname, "expected an array and the indices");
  options o;
  static const char *const keys[] = {"axis", "out", "stream", NULL};
  read_options(L, 3, keys, &o, fname);
  lc_check_current_device(L, a, "input", fname);
  lc_array *x = push_indices(L, 2, a, fname);
  int axis = 0, naxes = a->lay.ndim;
  if (o.has_axis) {
    axis = check_axis(L, a, o.axis, fname);
    naxes = 1;
  }
  if (o.out) {
    int64_t shape[LC_MAXDIM];
    int nd = values_shape(L, a, axis, naxes, x, shape, fname);
    bool same = o.out->lay.ndim == nd && o.out->dtype == a->dtype;
    for (int d = 0; same && d < nd; d++) same = o.out->lay.shape[d] == shape[d];
    if (!same) {
      char want[LC_SHAPE_STRLEN], got[LC_SHAPE_STRLEN];
      lc_shape_format(want, sizeof want, nd, shape);
      lc_shape_format(got, sizeof got, o.out->lay.ndim, o.out->lay.shape);
      lc_error(L, fname, "out= must have the result's shape %s and dtype %s, got shape %s and "
               "dtype %s", want, a->dtype->name, got, o.out->dtype->name);
    }
    check_side(L, a, o.out, "out=", fname);
  }
  check_indices(L, a, axis, naxes, x, o.s, fname);
  take_into(L, a, axis, naxes, x, o.out, o.s, fname);
  if (o.out) lua_pushvalue(L, o.outidx);
  return 1;
}

/***
Put values at indices of the flattened array, in place (NumPy's `put`):
`a`'s element `idx[j]` (1-based, negative from the end, in C order) becomes
`values[j]`; `values` (a number, table or array) broadcasts to `idx`'s
shape and is converted to `a`'s dtype. Every index is checked before
anything is written. Where an index repeats, the host and the simulator
keep the last value, the GPU any one of them.
@function put
@tparam Array a the array written
@tparam Array|table|integer idx the indices
@param values the values
@tparam[opt] table opts `{stream =}`
@treturn Array a
@raise `luacuda.put: index 0 (at position 1 of the indices) is out of bounds for the 4 elements of the array, flattened: luacuda counts from 1 (negative indices from the end)`;
values that do not broadcast to the indices' shape
@usage local a = luacuda.zeros({2, 2})
luacuda.put(a, {1, 4}, 7)
print(a)   -- {{7, 0}, {0, 7}}
*/
static int l_put(lua_State *L) {
  const char *fname = "put";
  lc_array *a = lc_array_check(L, 1, fname);
  if (lua_isnone(L, 3)) lc_error(L, fname, "expected an array, the indices and the values");
  options o;
  static const char *const keys[] = {"stream", NULL};
  read_options(L, 4, keys, &o, fname);
  lc_check_current_device(L, a, "input", fname);
  lc_array *x = push_indices(L, 2, a, fname);
  scatter(L, a, 0, a->lay.ndim, x, false, 3, LC_GATHER_PUT, o.s, fname);
  lua_pushvalue(L, 1);
  return 1;
}

/* the indices at 2 for add_at: a mask (its true positions, flat over its
** axes, which it gives in *naxes) or integers; pushed */
static lc_array *push_add_indices(lua_State *L, const lc_array *a, int *naxes, bool *checked,
                                  lc_stream *s, const char *fname) {
  lc_array *k = lc_array_test(L, 2);
  if (k && lc_array_check(L, 2, fname)->dtype->code == LC_BOOL) {
    lc_array *m = check_mask(L, 2, a, fname);
    *naxes = m->lay.ndim;
    *checked = true;
    return push_mask_indices(L, m, s, fname);
  }
  *naxes = 1;
  *checked = false;
  return push_indices(L, 2, a, fname);
}

/***
Add values at indices, in place, unbuffered (NumPy's `np.add.at`; Torch
users know it as `scatter_add`, the same function): for each `j`,
`a[idx[j]] += values[j]` along `axis` (1 by default), so a repeated index
adds each of its values. `idx` may be a bool mask of `a`'s leading axes.
`values` broadcasts to the indexed elements' shape (`a.shape[:axis] ..
idx.shape .. a.shape[axis+1:]`) and is converted to `a`'s dtype; integers
wrap, bools or. On the GPU the adds are atomic (`atomicAdd` for float32,
float64 and 32- and 64-bit integers); float16 and bfloat16 are refused there.
@function add_at
@tparam Array a the array written
@tparam Array|table|integer idx the indices (or a mask)
@param values the values added
@tparam[opt] table opts `{axis =, stream =}`
@treturn Array a
@raise `luacuda.add_at: index 4 (at position 3 of the indices) is out of bounds for axis 1 of size 3`
@usage local a = luacuda.zeros({3}, "int64")
luacuda.add_at(a, {1, 1, 3}, 1)
print(a)   -- {2, 0, 1}
*/
static int add_at(lua_State *L, const char *fname) {
  lc_array *a = lc_array_check(L, 1, fname);
  if (lua_isnone(L, 3)) lc_error(L, fname, "expected an array, the indices and the values");
  options o;
  static const char *const keys[] = {"axis", "stream", NULL};
  read_options(L, 4, keys, &o, fname);
  lc_check_current_device(L, a, "input", fname);
  int axis = o.has_axis ? check_axis(L, a, o.axis, fname) : 0, naxes;
  if (a->lay.ndim == 0) lc_error(L, fname, "a 0-d array has no axis to index");
  bool checked;
  lc_array *x = push_add_indices(L, a, &naxes, &checked, o.s, fname);
  if (naxes > 1 && axis != 0) lc_error(L, fname, "a mask indexes the leading axes: no axis=");
  scatter(L, a, axis, naxes, x, checked, 3, LC_GATHER_ADD, o.s, fname);
  lua_pushvalue(L, 1);
  return 1;
}
static int l_add_at(lua_State *L) { return add_at(L, "add_at"); }

/***
The same function as @{add_at}, under Torch's name.
@function scatter_add
@tparam Array a the array written
@tparam Array|table|integer idx the indices (or a mask)
@param values the values added
@tparam[opt] table opts `{axis =, stream =}`
@treturn Array a
@raise as @{add_at}, with `luacuda.scatter_add:`
@usage local a = luacuda.zeros({2})
luacuda.scatter_add(a, {2, 2}, {0.5, 1})
print(a)   -- {0, 1.5}
*/
static int l_scatter_add(lua_State *L) { return add_at(L, "scatter_add"); }

/* Push a bool array for the value at idx: itself, or its astype("bool") */
static lc_array *push_bool(lua_State *L, int idx, const char *fname) {
  lc_array *a = lc_array_check(L, idx, fname);
  if (a->dtype->code == LC_BOOL) {
    lua_pushvalue(L, idx);
    return a;
  }
  if (a->dtype->rec) lc_error(L, fname, "a record array has no truth values");
  lua_pushstring(L, "bool");
  call_method(L, idx, "astype", 1);
  return lc_array_check(L, -1, fname);
}

int lc_gather_nonzero(lua_State *L, const char *fname) {
  lc_array *a = lc_array_check(L, 1, fname);
  options o;
  static const char *const keys[] = {"stream", NULL};
  read_options(L, 2, keys, &o, fname);
  lc_check_current_device(L, a, "input", fname);
  if (a->lay.ndim == 0)
    lc_error(L, fname, "a 0-d array has no axes to give indices along (reshape it to {1})");
  lc_array *m = push_bool(L, 1, fname);
  lc_array *pos = push_true_positions(L, m, false, o.s, fname);
  int posidx = lua_gettop(L);
  lua_createtable(L, a->lay.ndim, 0);
  for (int d = 0; d < a->lay.ndim; d++) {
    lc_layout row = pos->lay;
    char err[LC_ERRLEN];
    lc_layout_select(&row, 0, d, err);
    lc_array_push_view(L, pos, &row, int64_dt);
    lua_rawseti(L, -2, d + 1);
  }
  lua_remove(L, posidx);
  return 1;
}

/***
The indices of the non-zero (true) elements: a Lua table with one int64
array per axis of `a` (NumPy's tuple), each holding the 1-based indices
along that axis, in C order; `a[{t[1][k], t[2][k]}]` is the k-th non-zero
element. The arrays are of `a`'s kind. The count is read back first (on a
device array, after the work queued on `stream`). `where(cond)` with one
argument is the same.
@function nonzero
@tparam Array a the array
@tparam[opt] table opts `{stream =}`
@treturn table the index arrays, one per axis
@raise `luacuda.nonzero: a 0-d array has no axes to give indices along (reshape it to {1})`
@usage local t = luacuda.nonzero(luacuda.array({{0, 3}, {5, 0}}))
print(t[1], t[2])   -- {1, 2}	{2, 1}
*/
static int l_nonzero(lua_State *L) { return lc_gather_nonzero(L, "nonzero"); }

/***
How many elements are non-zero (true), in the whole array (a Lua integer)
or along an axis (an int64 array): `a:astype("bool"):sum(...)`.
@function count_nonzero
@tparam Array a the array
@tparam[opt] integer|table axis the axis, or a table of axes, from 1
@tparam[opt] table opts `{keepdims =, stream =}` as for @{Array:sum}
@return an integer, or an Array
@raise as @{Array:sum}
@usage print(luacuda.count_nonzero(luacuda.array({0, 1, 2, 0})))   -- 2
*/
static int l_count_nonzero(lua_State *L) {
  const char *fname = "count_nonzero";
  lc_array_check(L, 1, fname);
  int nargs = lua_gettop(L) - 1;
  push_bool(L, 1, fname);
  lua_replace(L, 1);
  lua_getfield(L, 1, "sum");
  lua_insert(L, 1);
  lua_call(L, nargs + 1, 1);
  return 1;
}

/***
Count each value of a 1-d array of integers: bin `v` of the result counts
the elements equal to `v` (luacuda counts from 1, so values start at 1;
NumPy's `bincount(x)` is luacuda's `bincount(x + 1)`), or adds up their
`weights` (then float64). The result has `max(x)` bins, at least
`minlength`, and is of `x`'s kind; reading `max(x)` waits for `x`.
@function bincount
@tparam Array|table x the values, integers 1 or more
@tparam[opt] table opts `{weights =, minlength =, stream =}`
@treturn Array int64 counts, or float64 sums of the weights
@raise `luacuda.bincount: value 0 at position 2 is below 1 (luacuda counts bins from 1: value v goes to bin v)`;
values that are not integers; weights of another length
@usage print(luacuda.bincount({1, 3, 3}))   -- {1, 0, 2}
*/
static int l_bincount(lua_State *L) {
  const char *fname = "bincount";
  if (lua_isnone(L, 1)) lc_error(L, fname, "expected an array of integers");
  options o;
  static const char *const keys[] = {"weights", "minlength", "stream", NULL};
  read_options(L, 2, keys, &o, fname);
  lc_array *x0 = lc_array_test(L, 1) ? lc_array_check(L, 1, fname) : NULL;
  lc_array kind_of = {0};
  lc_buffer hostbuf = {0};
  if (x0 == NULL) {                     /* a table: host memory */
    hostbuf.kind = LC_HOST;
    kind_of.buf = &hostbuf;
    x0 = &kind_of;
  } else {
    lc_check_current_device(L, x0, "input", fname);
  }
  lc_array *x = push_indices(L, 1, x0, fname);
  int xidx = lua_gettop(L);
  if (x->lay.ndim != 1)
    lc_error(L, fname, "the values must be a 1-d array, got %d-d", x->lay.ndim);
  int64_t len = o.minlength;
  if (x->lay.size > 0) {
    call_method(L, xidx, "min", 0);
    int64_t lo = lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (lo < 1) {
      call_method(L, xidx, "argmin", 0);
      lc_error(L, fname, "value %lld at position %lld is below 1 (luacuda counts bins from 1: "
               "value v goes to bin v)", (long long)lo, (long long)lua_tointeger(L, -1));
    }
    call_method(L, xidx, "max", 0);
    int64_t hi = lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (hi > len) len = hi;
  }
  const lc_dtype *dt = o.weights ? &lc_dtypes[LC_FLOAT64] : int64_dt;
  int vidx;
  if (o.weights) {
    lc_array *w = lc_array_test(L, o.weights);
    int64_t wn = w ? lc_array_check(L, o.weights, fname)->lay.size
               : lua_type(L, o.weights) == LUA_TTABLE ? (int64_t)lua_rawlen(L, o.weights) : -1;
    if ((w && w->lay.ndim != 1) || wn != x->lay.size)
      lc_error(L, fname, "weights= must be a 1-d array (or table) of the values' length %lld",
               (long long)x->lay.size);
    vidx = o.weights;
  } else {
    lua_pushinteger(L, 1);
    vidx = lua_gettop(L);
  }
  lc_array *res = lc_array_empty(L, lc_array_kind(x), dt, 1, &len, 'C', o.s, fname);
  int residx = lua_gettop(L);
  uint64_t zero = 0;
  lc_fill_raw(L, res, &zero, o.s, fname);
  scatter(L, res, 0, 1, x, true, vidx, LC_GATHER_ADD, o.s, fname);
  lua_settop(L, residx);
  return 1;
}

/* ---- a[x] and a[x] = v (index.c) ---- */

void lc_gather_getitem(lua_State *L, const lc_array *a, int kidx, lc_stream *s,
                       const char *fname) {
  kidx = lua_absindex(L, kidx);
  lc_array *k = lc_array_check(L, kidx, fname);
  lc_check_current_device(L, a, "input", fname);
  if (a->lay.ndim == 0) lc_error(L, fname, "a 0-d array is indexed with a[{}], not an array");
  if (k->dtype->code == LC_BOOL) {
    lc_array *m = check_mask(L, kidx, a, fname);
    lc_array *x = push_mask_indices(L, m, s, fname);
    take_into(L, a, 0, m->lay.ndim, x, NULL, s, fname);
    return;
  }
  lc_array *x = push_indices(L, kidx, a, fname);
  check_indices(L, a, 0, 1, x, s, fname);
  take_into(L, a, 0, 1, x, NULL, s, fname);
}

void lc_gather_setitem(lua_State *L, const lc_array *a, int kidx, int vidx, lc_stream *s,
                       const char *fname) {
  kidx = lua_absindex(L, kidx);
  vidx = lua_absindex(L, vidx);
  lc_array *k = lc_array_check(L, kidx, fname);
  lc_check_current_device(L, a, "input", fname);
  if (a->lay.ndim == 0) lc_error(L, fname, "a 0-d array is indexed with a[{}], not an array");
  if (k->dtype->code == LC_BOOL) {
    lc_array *m = check_mask(L, kidx, a, fname);
    lc_array *x = push_mask_indices(L, m, s, fname);
    scatter(L, a, 0, m->lay.ndim, x, true, vidx, LC_GATHER_PUT, s, fname);
    return;
  }
  lc_array *x = push_indices(L, kidx, a, fname);
  scatter(L, a, 0, 1, x, false, vidx, LC_GATHER_PUT, s, fname);
}

/*** @type Array */

/***
`a:take(idx [, opts])`: @{take} as a method.
@function Array:take
@tparam Array|table|integer idx the indices
@tparam[opt] table opts `{axis =, out =, stream =}`
@treturn Array the elements
@raise as @{take}
@usage print(luacuda.arange(5):take({2, 3}))   -- {1, 2}
*/

/***
`a:put(idx, values [, opts])`: @{put} as a method.
@function Array:put
@tparam Array|table|integer idx the indices
@param values the values
@tparam[opt] table opts `{stream =}`
@treturn Array a
@raise as @{put}
@usage local a = luacuda.zeros({3})
a:put({2}, 5)
print(a)   -- {0, 5, 0}
*/

/***
`a:nonzero([opts])`: @{nonzero} as a method.
@function Array:nonzero
@tparam[opt] table opts `{stream =}`
@treturn table the index arrays, one per axis
@raise as @{nonzero}
@usage print(luacuda.array({0, 7, 7}):nonzero()[1])   -- {2, 3}
*/

/*** @section end */

void lc_gather_open(lua_State *L) {
  static const luaL_Reg fns[] = {
    {"take", l_take}, {"put", l_put}, {"add_at", l_add_at}, {"scatter_add", l_scatter_add},
    {"nonzero", l_nonzero}, {"count_nonzero", l_count_nonzero}, {"bincount", l_bincount},
    {NULL, NULL}
  };
  lc_setfuncs(L, fns);
  static const luaL_Reg methods[] = {
    {"take", l_take}, {"put", l_put}, {"nonzero", l_nonzero}, {NULL, NULL}
  };
  lc_array_add_methods(L, methods);
}
