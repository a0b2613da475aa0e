/*
** reduce: the reduction methods (sum, prod, min, max, mean, argmin, argmax,
** any, all) and the scans (cumsum, cumprod). Reads the arguments, picks
** the dtypes (base/reduce.h, NumPy's rules), allocates the result and
** chooses where the work runs: device-accessible arrays (device, managed,
** mapped) on the backend (its reduce slot, queued on the stream), host and
** pinned arrays here, after the work queued on them. Everything is checked
** before anything is allocated or written.
*/
#include "array.h"

#include <stdio.h>
#include <string.h>

#include "args.h"
#include "parts.h"
#include "pending.h"
#include "reduce.h"
#include "stream.h"
#include "device.h"
#include "copy.h"

/* What a call asks, read from its arguments. */
typedef struct request {
  lc_reduce_op op;
  const char *fname;
  lc_array *a;
  bool has_axis, keepdims;
  uint64_t axes;                 /* bit i: axis i (0-based) reduced or scanned */
  const lc_dtype *asked;         /* dtype=, or NULL */
  lc_array *out;                 /* out=, or NULL */
  lc_stream *s;                  /* stream=, or NULL */
} request;

/* An axis argument (1-based) as bit i of *axes: in range, not repeated. */
static void add_axis(lua_State *L, request *r, int idx, int pos) {
  int ndim = r->a->lay.ndim;
  int64_t ax = lc_check_integer(L, idx, "axis", pos, r->fname);
  if (ax < 1 || ax > ndim) {
    if (ndim == 0)
      lc_error(L, r->fname, "axis %lld is out of range for a 0-d array (luacuda counts axes "
               "from 1, and a 0-d array has none)", (long long)ax);
    lc_error(L, r->fname, "axis %lld is out of range for a %d-d array (luacuda counts axes "
             "from 1: 1 to %d)", (long long)ax, ndim, ndim);
  }
  if (r->axes >> (ax - 1) & 1)
    lc_error(L, r->fname, "axis %lld is given twice (luacuda counts axes from 1)", (long long)ax);
  r->axes |= UINT64_C(1) << (ax - 1);
}

/* (axis | {axes} [, opts]) or (opts): a table at 2 is axes when it has
** positions, else options. */
static void read_request(lua_State *L, request *r) {
  bool scan = lc_reduce_is_scan(r->op);
  while (lua_gettop(L) > 1 && lua_isnil(L, -1)) lua_pop(L, 1);   /* trailing nils */
  int t2 = lua_type(L, 2), optidx = 3;
  if (t2 == LUA_TNUMBER) {
    r->has_axis = true;
    add_axis(L, r, 2, 0);
  } else if (t2 == LUA_TTABLE && lua_rawlen(L, 2) > 0) {
    if (scan)
      lc_error(L, r->fname, "%s takes one axis, not a table of them", r->fname);
    lua_Integer n = (lua_Integer)lua_rawlen(L, 2);
    char extra[64];
    if (lc_table_extra_key(L, 2, n, extra, sizeof extra))
      lc_error(L, r->fname, "the table of axes has %s (options go in a table after it)", extra);
    r->has_axis = true;
    for (lua_Integer i = 1; i <= n; i++) {
      lua_rawgeti(L, 2, i);
      add_axis(L, r, -1, (int)i);
      lua_pop(L, 1);
    }
  } else if (t2 == LUA_TTABLE) {
    optidx = 2;
    if (!lua_isnone(L, 3))
      lc_error(L, r->fname, "an options table is the last argument, got %s after it",
               luaL_typename(L, 3));
  } else if (t2 != LUA_TNIL && t2 != LUA_TNONE) {
    lc_error(L, r->fname, "axis must be an integer or a table of integers (luacuda counts "
             "axes from 1), got %s", luaL_typename(L, 2));
  }
  if (!lua_isnone(L, optidx + 1))
    lc_error(L, r->fname, "expected at most %s, got %d arguments",
             scan ? "an axis and an options table" : "an axis (or a table of axes) and an "
             "options table", lua_gettop(L) - 1);
  static const char *const reduce_keys[] = {"keepdims", "dtype", "out", "stream", NULL};
  static const char *const scan_keys[] = {"dtype", "out", "stream", NULL};
  lua_settop(L, 3);
  if (!lc_check_opts(L, optidx, scan ? scan_keys : reduce_keys, r->fname)) return;
  /* the values stay on the stack (4: keepdims, 5: dtype, 6: out, 7: stream) */
  lc_opt_get(L, optidx, "keepdims");
  if (!lua_isnil(L, 4) && !lua_isboolean(L, 4))
    lc_error(L, r->fname, "keepdims must be a boolean, got %s", luaL_typename(L, 4));
  r->keepdims = lua_toboolean(L, 4);
  lc_opt_get(L, optidx, "dtype");
  r->asked = lc_dtype_opt(L, 5, NULL, r->fname);
  lc_opt_get(L, optidx, "out");
  if (!lua_isnil(L, 6)) {
    if (lc_array_test(L, 6) == NULL)
      lc_error(L, r->fname, "out= must be an array, got %s", luaL_typename(L, 6));
    r->out = lc_array_check(L, 6, r->fname);
  }
  lc_opt_get(L, optidx, "stream");
  r->s = lc_opt_stream(L, 7, r->fname);
}

static bool computes_on_backend(const lc_array *a) {
  return lc_kind_device_accessible(lc_array_kind(a));
}

/* The output view in the input's rank (reduce.h): a reduction's reduced
** axes of size 1 where the result has none; a flattened scan's output,
** a contiguous 1-d array, as the input's shape. False when it cannot be
** (a flattened scan into a strided out=). */
static bool output_view(const request *r, const lc_array *dst, lc_layout *ol) {
  const lc_layout *il = &r->a->lay;
  if (lc_reduce_is_scan(r->op)) {
    if (r->has_axis) {
      *ol = dst->lay;
      return true;
    }
    char err[LC_ERRLEN];
    if (dst->lay.ndim == 1 && dst->lay.size > 1 && dst->lay.strides[0] != dst->dtype->size)
      return false;
    if (lc_layout_contiguous(ol, il->ndim, il->shape, dst->dtype->size, 'C', err)) return false;
    ol->offset = dst->lay.offset;
    return true;
  }
  if (dst->lay.ndim == il->ndim) {      /* keepdims */
    *ol = dst->lay;
    return true;
  }
  memset(ol, 0, sizeof *ol);
  ol->ndim = il->ndim;
  ol->offset = dst->lay.offset;
  ol->size = dst->lay.size;
  for (int i = 0, j = 0; i < il->ndim; i++) {
    if (r->axes >> i & 1) {
      ol->shape[i] = 1;
      ol->strides[i] = 0;
    } else {
      ol->shape[i] = dst->lay.shape[j];
      ol->strides[i] = dst->lay.strides[j++];
    }
  }
  return true;
}

/* Run the call into dst, on the backend or here. */
static void run(lua_State *L, const request *r, const lc_array *dst, const lc_dtype *acc,
                const lc_dtype *outdt, const lc_layout *ol) {
  const lc_array *a = r->a;
  lc_reduce_call c;
  memset(&c, 0, sizeof c);
  c.op = r->op;
  c.in_type = a->dtype->code;
  c.acc_type = acc->code;
  c.out_type = outdt->code;
  c.in_lay = a->lay;
  c.out_lay = *ol;
  c.axes = r->axes;
  lc_stream *s = r->s;
  if (!computes_on_backend(a)) {
    lc_pending_wait(L, a, false, r->fname);
    lc_pending_wait(L, dst, true, r->fname);
    lc_sync_host(L, lc_array_kind(dst), r->fname);
    c.in = a->buf->ptr;
    c.out = dst->buf->ptr;
    lc_reduce_host(&c);
    return;
  }
  const lc_backend *be = a->buf->backend;
  c.in = a->buf->dev;
  c.out = dst->buf->dev;
  if (s == NULL) {          /* synchronous: after the work queued on either */
    lc_pending_wait(L, a, false, r->fname);
    lc_pending_wait(L, dst, true, r->fname);
  } else {
    lc_buffer_use(L, a->buf, s, r->fname);
    lc_buffer_use(L, dst->buf, s, r->fname);
  }
  char err[LC_ERRLEN];
  if (be->reduce(&c, s, err)) lc_error(L, r->fname, "%s", err);
  if (s) {
    lc_pending_add(a->buf, s, false);
    lc_pending_add(dst->buf, s, true);
  }
}

static int reduce_method(lua_State *L, lc_reduce_op op) {
  request r;
  memset(&r, 0, sizeof r);
  r.op = op;
  r.fname = lc_reduce_names[op];
  r.a = lc_array_check(L, 1, r.fname);
  read_request(L, &r);
  const lc_array *a = r.a;
  const lc_layout *il = &a->lay;
  bool scan = lc_reduce_is_scan(op);
  char err[LC_ERRLEN];
  const lc_dtype *acc, *outdt;
  if (lc_reduce_dtypes(op, a->dtype, r.asked, &acc, &outdt, err))
    lc_error(L, r.fname, "%s", err);
  if (!r.has_axis) r.axes = il->ndim ? (UINT64_C(1) << il->ndim) - 1 : 0;

  /* the result's shape */
  int ndim = 0;
  int64_t shape[LC_MAXDIM], count = 1, nout = 1;
  for (int i = 0; i < il->ndim; i++) {
    bool reduced = r.axes >> i & 1;
    if (reduced) count *= il->shape[i];
    else nout *= il->shape[i];
    if (scan) {
      if (r.has_axis) shape[ndim++] = il->shape[i];
    } else if (!reduced) {
      shape[ndim++] = il->shape[i];
    } else if (r.keepdims) {
      shape[ndim++] = 1;
    }
  }
  if (scan && !r.has_axis) {
    ndim = 1;
    shape[0] = il->size;
  }
  if (!lc_reduce_has_identity(op) && count == 0 && nout > 0)
    lc_error(L, r.fname, "the reduction is over no element, and %s has no identity (%s)",
             r.fname, r.has_axis ? "a reduced axis has length 0" : "the array is empty");

  /* where the result goes */
  bool on_backend = computes_on_backend(a);
  lc_check_current_device(L, a, "input", r.fname);
  if (r.out) {
    const lc_layout *ol = &r.out->lay;
    bool same = ol->ndim == ndim && r.out->dtype == outdt;
    for (int i = 0; same && i < ndim; i++) same = ol->shape[i] == shape[i];
    if (!same) {
      char want[LC_SHAPE_STRLEN], got[LC_SHAPE_STRLEN];
      lc_shape_format(want, sizeof want, ndim, shape);
      lc_shape_format(got, sizeof got, ol->ndim, ol->shape);
      lc_error(L, r.fname, "out= must have the result's shape %s and dtype %s, got shape %s "
               "and dtype %s", want, outdt->name, got, r.out->dtype->name);
    }
    lc_kind ok = lc_array_kind(r.out);
    if (on_backend && !lc_kind_device_accessible(ok))
      lc_error(L, r.fname, "out= is a %s array, but a %s array's %s runs on the device: out= "
               "must be device, managed or mapped memory", lc_kind_names[ok],
               lc_kind_names[lc_array_kind(a)], r.fname);
    if (!on_backend && !lc_kind_host_accessible(ok))
      lc_error(L, r.fname, "out= is a %s array, but a %s array's %s runs on the host: out= "
               "must be host-addressable memory", lc_kind_names[ok],
               lc_kind_names[lc_array_kind(a)], r.fname);
    lc_check_current_device(L, r.out, "out=", r.fname);
  }

  /* the array written: out=, a new one, or a temporary copied into out=
  ** (when out= shares memory with the input, or is a strided target of a
  ** flattened scan) */
  lc_kind kind = lc_array_kind(a);
  lc_layout ol;
  lc_array *dst = r.out;
  if (dst == NULL || lc_arrays_overlap(dst, &dst->lay, a, &a->lay) || !output_view(&r, dst, &ol)) {
    dst = lc_array_empty(L, kind, outdt, ndim, shape, 'C', r.s, r.fname);
    output_view(&r, dst, &ol);
  }
  int dstidx = lua_gettop(L);
  run(L, &r, dst, acc, outdt, &ol);
  if (r.out && dst != r.out) {
    lc_copy_array(L, r.out, dst, r.s, r.fname);
    lua_pushvalue(L, 6);
    return 1;
  }
  if (r.out) {
    lua_pushvalue(L, 6);
    return 1;
  }
  if (scan || r.has_axis || r.keepdims) {
    lua_settop(L, dstidx);
    return 1;
  }
  /* a Lua value, once the work is done */
  lc_elem_push_at(L, dst, dst->lay.offset, on_backend ? r.s : NULL, r.fname);
  return 1;
}

/*** @module luacuda */

/*** @type Array */

/***
Reduction: the sum (bool and small integers sum as int64/uint64, NumPy's rule; floats pairwise).

Without an axis the whole array is reduced and the result is a Lua value
(once the work is done); with an axis (or `keepdims`, or `out`) it is an
array of the input's kind without the reduced axes.
@function Array:sum
@tparam[opt] integer|table axis the axis, or a table of axes, to reduce, from 1
@tparam[opt] table opts `{keepdims = false, dtype =, out =, stream =}`: `keepdims` keeps the
reduced axes with size 1; `dtype` the accumulation and result dtype; `out` the
array to write; `stream` queues the work on it
@return a Lua value, or an Array
@raise `luacuda.sum: axis 3 is out of range for a 2-d array (luacuda counts axes from 1: 1 to 2)`;
an axis given twice; an unknown option; a bad `out` or `dtype`
@usage print(luacuda.arange(6):reshape(2, 3):sum(1))  -- {3, 5, 7}
*/

/***
Reduction: the product (integer dtypes as for `sum`).

Without an axis the whole array is reduced and the result is a Lua value
(once the work is done); with an axis (or `keepdims`, or `out`) it is an
array of the input's kind without the reduced axes.
@function Array:prod
@tparam[opt] integer|table axis the axis, or a table of axes, to reduce, from 1
@tparam[opt] table opts `{keepdims = false, dtype =, out =, stream =}`: `keepdims` keeps the
reduced axes with size 1; `dtype` the accumulation and result dtype; `out` the
array to write; `stream` queues the work on it
@return a Lua value, or an Array
@raise `luacuda.prod: axis 3 is out of range for a 2-d array (luacuda counts axes from 1: 1 to 2)`;
an axis given twice; an unknown option; a bad `out` or `dtype`
@usage print(luacuda.arange(1, 5):prod())  -- 24
*/

/***
Reduction: the smallest element (NaN if any is NaN); an empty reduction is an error.

Without an axis the whole array is reduced and the result is a Lua value
(once the work is done); with an axis (or `keepdims`, or `out`) it is an
array of the input's kind without the reduced axes.
@function Array:min
@tparam[opt] integer|table axis the axis, or a table of axes, to reduce, from 1
@tparam[opt] table opts `{keepdims = false, dtype =, out =, stream =}`: `keepdims` keeps the
reduced axes with size 1; `dtype` the accumulation and result dtype; `out` the
array to write; `stream` queues the work on it
@return a Lua value, or an Array
@raise `luacuda.min: axis 3 is out of range for a 2-d array (luacuda counts axes from 1: 1 to 2)`;
an axis given twice; an unknown option; a bad `out` or `dtype`
@usage print(luacuda.array({3, 1, 2}):min())  -- 1
*/

/***
Reduction: the largest element (NaN if any is NaN); an empty reduction is an error.

Without an axis the whole array is reduced and the result is a Lua value
(once the work is done); with an axis (or `keepdims`, or `out`) it is an
array of the input's kind without the reduced axes.
@function Array:max
@tparam[opt] integer|table axis the axis, or a table of axes, to reduce, from 1
@tparam[opt] table opts `{keepdims = false, dtype =, out =, stream =}`: `keepdims` keeps the
reduced axes with size 1; `dtype` the accumulation and result dtype; `out` the
array to write; `stream` queues the work on it
@return a Lua value, or an Array
@raise `luacuda.max: axis 3 is out of range for a 2-d array (luacuda counts axes from 1: 1 to 2)`;
an axis given twice; an unknown option; a bad `out` or `dtype`
@usage print(luacuda.array({3, 1, 2}):max())  -- 3
*/

/***
Reduction: the mean (float64 for integer input, else the input's float dtype).

Without an axis the whole array is reduced and the result is a Lua value
(once the work is done); with an axis (or `keepdims`, or `out`) it is an
array of the input's kind without the reduced axes.
@function Array:mean
@tparam[opt] integer|table axis the axis, or a table of axes, to reduce, from 1
@tparam[opt] table opts `{keepdims = false, dtype =, out =, stream =}`: `keepdims` keeps the
reduced axes with size 1; `dtype` the accumulation and result dtype; `out` the
array to write; `stream` queues the work on it
@return a Lua value, or an Array
@raise `luacuda.mean: axis 3 is out of range for a 2-d array (luacuda counts axes from 1: 1 to 2)`;
an axis given twice; an unknown option; a bad `out` or `dtype`
@usage print(luacuda.arange(4):mean())  -- 1.5
*/

/***
Reduction: the 1-based index of the smallest element (the first one; over the flattened array when no axis is given); int64.

Without an axis the whole array is reduced and the result is a Lua value
(once the work is done); with an axis (or `keepdims`, or `out`) it is an
array of the input's kind without the reduced axes.
@function Array:argmin
@tparam[opt] integer|table axis the axis to reduce, from 1
@tparam[opt] table opts `{keepdims = false, dtype =, out =, stream =}`: `keepdims` keeps the
reduced axes with size 1; `dtype` the accumulation and result dtype; `out` the
array to write; `stream` queues the work on it
@return a Lua value, or an Array
@raise `luacuda.argmin: axis 3 is out of range for a 2-d array (luacuda counts axes from 1: 1 to 2)`;
an axis given twice; an unknown option; a bad `out` or `dtype`
@usage print(luacuda.array({3, 1, 2}):argmin())  -- 2
*/

/***
Reduction: the 1-based index of the largest element (the first one; over the flattened array when no axis is given); int64.

Without an axis the whole array is reduced and the result is a Lua value
(once the work is done); with an axis (or `keepdims`, or `out`) it is an
array of the input's kind without the reduced axes.
@function Array:argmax
@tparam[opt] integer|table axis the axis to reduce, from 1
@tparam[opt] table opts `{keepdims = false, dtype =, out =, stream =}`: `keepdims` keeps the
reduced axes with size 1; `dtype` the accumulation and result dtype; `out` the
array to write; `stream` queues the work on it
@return a Lua value, or an Array
@raise `luacuda.argmax: axis 3 is out of range for a 2-d array (luacuda counts axes from 1: 1 to 2)`;
an axis given twice; an unknown option; a bad `out` or `dtype`
@usage print(luacuda.array({3, 1, 2}):argmax())  -- 1
*/

/***
Reduction: whether any element is true (non-zero); bool.

Without an axis the whole array is reduced and the result is a Lua value
(once the work is done); with an axis (or `keepdims`, or `out`) it is an
array of the input's kind without the reduced axes.
@function Array:any
@tparam[opt] integer|table axis the axis, or a table of axes, to reduce, from 1
@tparam[opt] table opts `{keepdims = false, dtype =, out =, stream =}`: `keepdims` keeps the
reduced axes with size 1; `dtype` the accumulation and result dtype; `out` the
array to write; `stream` queues the work on it
@return a Lua value, or an Array
@raise `luacuda.any: axis 3 is out of range for a 2-d array (luacuda counts axes from 1: 1 to 2)`;
an axis given twice; an unknown option; a bad `out` or `dtype`
@usage print(luacuda.array({0, 0, 1}):any())  -- true
*/

/***
Reduction: whether every element is true (non-zero); bool.

Without an axis the whole array is reduced and the result is a Lua value
(once the work is done); with an axis (or `keepdims`, or `out`) it is an
array of the input's kind without the reduced axes.
@function Array:all
@tparam[opt] integer|table axis the axis, or a table of axes, to reduce, from 1
@tparam[opt] table opts `{keepdims = false, dtype =, out =, stream =}`: `keepdims` keeps the
reduced axes with size 1; `dtype` the accumulation and result dtype; `out` the
array to write; `stream` queues the work on it
@return a Lua value, or an Array
@raise `luacuda.all: axis 3 is out of range for a 2-d array (luacuda counts axes from 1: 1 to 2)`;
an axis given twice; an unknown option; a bad `out` or `dtype`
@usage print(luacuda.array({0, 1}):all())  -- false
*/

/***
Scan: the running sum along one axis, or over the flattened array (1-d result) when
none is given. Integer dtypes accumulate as for @{Array:sum}.
@function Array:cumsum
@tparam[opt] integer axis the axis, from 1
@tparam[opt] table opts `{dtype =, out =, stream =}`
@treturn Array an array of the input's kind
@raise `luacuda.cumsum: cumsum takes one axis, not a table of them`; an axis out of range; a bad option
@usage print(luacuda.arange(4):cumsum())  -- {0, 1, 3, 6}
*/

/***
Scan: the running product along one axis, or over the flattened array (1-d result) when
none is given. Integer dtypes accumulate as for @{Array:sum}.
@function Array:cumprod
@tparam[opt] integer axis the axis, from 1
@tparam[opt] table opts `{dtype =, out =, stream =}`
@treturn Array an array of the input's kind
@raise `luacuda.cumprod: cumprod takes one axis, not a table of them`; an axis out of range; a bad option
@usage print(luacuda.arange(1, 5):cumprod())  -- {1, 2, 6, 24}
*/

#define METHOD(name, op) \
  static int array_##name(lua_State *L) { return reduce_method(L, op); }
METHOD(sum, LC_RED_SUM)
METHOD(prod, LC_RED_PROD)
METHOD(min, LC_RED_MIN)
METHOD(max, LC_RED_MAX)
METHOD(mean, LC_RED_MEAN)
METHOD(argmin, LC_RED_ARGMIN)
METHOD(argmax, LC_RED_ARGMAX)
METHOD(any, LC_RED_ANY)
METHOD(all, LC_RED_ALL)
METHOD(cumsum, LC_RED_CUMSUM)
METHOD(cumprod, LC_RED_CUMPROD)

void lc_reduce_open(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"sum", array_sum}, {"prod", array_prod}, {"min", array_min}, {"max", array_max},
    {"mean", array_mean}, {"argmin", array_argmin}, {"argmax", array_argmax},
    {"any", array_any}, {"all", array_all}, {"cumsum", array_cumsum},
    {"cumprod", array_cumprod}, {NULL, NULL}
  };
  lc_array_add_methods(L, methods);
}
