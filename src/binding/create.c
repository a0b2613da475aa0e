/*
** create: the constructors: host arrays (empty, zeros, ones, full, arange,
** linspace), arrays like another of any kind (empty_like, zeros_like,
** ones_like, full_like) and device arrays (device_array, device_array_like,
** to_device).
*/
#include "array.h"

#include <math.h>
#include <string.h>

#include "gate.h"
#include "args.h"
#include "record.h"
#include "host_copy.h"
#include "stream.h"
#include "device.h"
#include "copy.h"
#include "convert.h"

#define F64 (&lc_dtypes[LC_FLOAT64])

/* Push the field of the options table at idx (nil when there is none). */
static int opt_field(lua_State *L, int idx, bool have, const char *key) {
  if (!have) {
    lua_pushnil(L);
    return LUA_TNIL;
  }
  return lc_opt_get(L, idx, key);
}

/* ---- the arguments every creator takes -------------------------------- */

/* What follows a creator's shape (or model, or value): the dtype, the
** order and the memory kind. */
typedef struct create_args {
  const lc_dtype *dt;          /* NULL when not given */
  char order;
  lc_kind kind;
} create_args;

/* A kind option at idx: one of lc_kind_names. */
static lc_kind check_kind(lua_State *L, int idx, const char *fname) {
  const char *k = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : NULL;
  int i = 0;
  while (k && i < LC_NKINDS && strcmp(k, lc_kind_names[i]) != 0) i++;
  if (k == NULL || i == LC_NKINDS)
    lc_error(L, fname, "kind must be 'host', 'pinned', 'mapped', 'managed' or 'device', "
             "got %s%s%s", k ? "'" : "", k ? k : lc_typename(L, idx), k ? "'" : "");
  return (lc_kind)i;
}

/* [dtype] [, order | {dtype =, order =, kind =}] from idx, or one options
** table there: a dtype may be given either way (one form everywhere), the
** kind only in the table (the model's for *_like, host otherwise). Without
** with_order there is no order (the *_like functions keep the model's). */
static void read_create_args(lua_State *L, int idx, bool with_order, lc_kind kind,
                             create_args *a, const char *fname) {
  static const char *const with[] = {"dtype", "order", "kind", NULL};
  static const char *const without[] = {"dtype", "kind", NULL};
  int oidx = idx + 1;
  a->dt = NULL;
  a->order = 'C';
  a->kind = kind;
  if (lua_type(L, idx) == LUA_TTABLE) {
    oidx = idx;
    if (!lua_isnoneornil(L, idx + 1))
      lc_error(L, fname, "the options table is the last argument, got %s after it",
               luaL_typename(L, idx + 1));
  } else {
    a->dt = lc_dtype_opt(L, idx, NULL, fname);
    if (with_order && !lua_isnoneornil(L, oidx) && lua_type(L, oidx) != LUA_TTABLE) {
      a->order = lc_check_order(L, oidx, fname);
      return;
    }
  }
  if (!lc_check_opts(L, oidx, with_order ? with : without, fname)) return;
  if (lc_opt_get(L, oidx, "dtype") != LUA_TNIL) {      /* stays on the stack: a record's */
    if (a->dt) lc_error(L, fname, "the dtype is given twice (an argument and dtype=)");
    a->dt = lc_dtype_check(L, -1, fname);
  }
  if (with_order) {
    lc_opt_get(L, oidx, "order");
    a->order = lc_check_order(L, -1, fname);
    lua_pop(L, 1);
  }
  if (lc_opt_get(L, oidx, "kind") != LUA_TNIL) a->kind = check_kind(L, -1, fname);
  lua_pop(L, 1);
}

/* Fill a new array of any kind with value (one element of its dtype):
** host memory here, device memory by the backend on the default stream. */
static void fill_new(lua_State *L, lc_array *a, const void *value, const char *fname) {
  if (lc_array_kind(a) == LC_HOST) lc_fill_host(a->buf->ptr, &a->lay, value, a->dtype->size);
  else lc_fill_raw(L, a, value, NULL, fname);
}

/* ---- host ------------------------------------------------------------- */

typedef enum { NEW_EMPTY, NEW_ZEROS, NEW_ONES } new_fill;

/*** @module luacuda */

/***
A new host array whose elements are not set (read none before writing it).
@function empty
@tparam table|integer shape the sizes of the axes (`{}`: a 0-d array)
@tparam[opt="float64"] string|Record dtype the element type
@tparam[opt="C"] string|table order `"C"` (last axis fastest) or `"F"`; or options
`{dtype =, order =, kind =}` (in place of the dtype too), `kind` the memory:
`"host"` (the default), `"device"`, `"pinned"`, `"mapped"` or `"managed"`
@treturn Array an array of that kind
@raise `luacuda.empty: <cause>` for a bad shape, dtype, order or kind
@usage local a = luacuda.empty({3, 4}, "float32")
a:fill(0)
*/

/***
A new host array of zeros (for a record dtype: every byte zero).
@function zeros
@tparam table|integer shape the sizes of the axes
@tparam[opt="float64"] string|Record dtype the element type
@tparam[opt="C"] string|table order `"C"` or `"F"`; or options `{dtype =, order =, kind =}`
(in place of the dtype too), `kind` the memory: `"host"` (the default), `"device"`,
`"pinned"`, `"mapped"` or `"managed"` (device memory is zeroed on the default stream)
@treturn Array an array of that kind
@raise `luacuda.zeros: <cause>` for a bad shape, dtype, order or kind;
`luacuda.zeros: kind must be 'host', 'pinned', 'mapped', 'managed' or 'device', got 'gpu'`
@usage local a = luacuda.zeros({2, 3}, "int32")
assert(a[{2, 3}] == 0)
*/

/***
A new host array of ones.
@function ones
@tparam table|integer shape the sizes of the axes
@tparam[opt="float64"] string dtype the element type (not a record)
@tparam[opt="C"] string|table order `"C"` or `"F"`; or options `{dtype =, order =, kind =}`
as @{zeros}
@treturn Array an array of that kind (host by default)
@raise `luacuda.ones: a record dtype has no one (use full or zeros)`; a bad shape or dtype
@usage assert(luacuda.ones({4}):sum() == 4)
*/

/* empty/zeros/ones(shape [, dtype] [, order | opts]); upvalues: name, fill */
static int l_new_host(lua_State *L) {
  const char *fname = lua_tostring(L, lc_upvalueindex(1));
  new_fill fill = (new_fill)lua_tointeger(L, lc_upvalueindex(2));
  int64_t shape[LC_MAXDIM];
  lc_check_shape_not_spread(L, 1, fname);
  int nd = lc_check_dims(L, 1, false, false, shape, "shape", fname);
  lua_settop(L, 3);
  create_args c;
  read_create_args(L, 2, true, LC_HOST, &c, fname);
  const lc_dtype *dt = c.dt ? c.dt : F64;
  /* the element, converted before allocating: a bad one allocates nothing */
  char small[16];
  void *value = lc_elem_room(L, dt, small, sizeof small);     /* zeroed */
  if (fill == NEW_ONES) {
    if (dt->rec) lc_error(L, fname, "a record dtype has no one (use full or zeros)");
    if (dt->code == LC_BOOL) lua_pushboolean(L, 1);
    else lua_pushinteger(L, 1);
    lc_elem_check(L, -1, dt, value, fname);
    lua_pop(L, 1);
  }
  lc_array *a = lc_array_empty(L, c.kind, dt, nd, shape, c.order, NULL, fname);
  if (fill == NEW_ZEROS && c.kind == LC_HOST) memset(a->buf->ptr, 0, a->buf->nbytes);
  else if (fill != NEW_EMPTY) fill_new(L, a, value, fname);
  return 1;
}

/***
A new host array with every element `value`.
@function full
@tparam table|integer shape the sizes of the axes
@tparam number|boolean value the value
@tparam[opt] string dtype the element type; by default int64 for an
integer, float64 for a float, bool for a boolean
@tparam[opt="C"] string|table order `"C"` or `"F"`; or options `{dtype =, order =, kind =}`
as @{zeros}
@treturn Array an array of that kind (host by default)
@raise `luacuda.full: value must be a number or a boolean, got <type>`; a value
the dtype cannot hold
@usage local a = luacuda.full({2, 2}, 7, "int32")
*/

/* full(shape, value [, dtype] [, order | opts]): dtype from the value if
** absent */
static int l_full(lua_State *L) {
  int64_t shape[LC_MAXDIM];
  int nd = lc_check_dims(L, 1, false, false, shape, "shape", "full");
  create_args c;
  read_create_args(L, 3, true, LC_HOST, &c, "full");
  const lc_dtype *dt = c.dt;
  if (dt == NULL) {
    int t = lua_type(L, 2);
    if (t == LUA_TBOOLEAN) dt = &lc_dtypes[LC_BOOL];
    else if (lua_isinteger(L, 2)) dt = &lc_dtypes[LC_INT64];
    else if (t == LUA_TNUMBER) dt = F64;
    else lc_error(L, "full", "value must be a number or a boolean, got %s", luaL_typename(L, 2));
  }
  char small[16];
  void *value = lc_elem_room(L, dt, small, sizeof small);
  lc_elem_check(L, 2, dt, value, "full");       /* before allocating */
  lc_array *a = lc_array_empty(L, c.kind, dt, nd, shape, c.order, NULL, "full");
  fill_new(L, a, value, "full");
  return 1;
}

/* ---- ranges: arange and linspace ------------------------------------- */

/* bool and records hold no range of numbers */
static void check_range_dtype(lua_State *L, const lc_dtype *dt, const char *fname) {
  if (dt->code == LC_BOOL || dt->rec)
    lc_error(L, fname, "dtype %s has no range of values", dt->name);
}

/* The number argument at idx, or an error calling it what. */
static lua_Number check_number(lua_State *L, int idx, const char *what, const char *fname) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    lc_error(L, fname, "%s must be a number, got %s", what, luaL_typename(L, idx));
  return lua_tonumber(L, idx);
}

/* Does the integral double v fit the integer dtype dt? (NaN does not.) */
static bool fits_int(const lc_dtype *dt, double v) {
  int bits = (int)dt->size * 8;
  if (dt->kind == 'i') return v >= -ldexp(1, bits - 1) && v < ldexp(1, bits - 1);
  return v >= 0 && v < ldexp(1, bits);
}

/* Raise element.c's own message for the value v, which dt cannot hold
** (fits_int is its rule too). */
LC_NORETURN static void not_fitting(lua_State *L, const lc_dtype *dt, double v,
                                    const char *fname) {
  char tmp[16], err[LC_ERRLEN] = "";
  if (v >= -0x1p63 && v < 0x1p63) lua_pushinteger(L, (lua_Integer)v);
  else lua_pushnumber(L, v);
  lc_elem_convert(L, -1, dt, tmp, err);
  lc_error(L, fname, "%s", err);
}

/* Store the integral double v, checked by fits_int, as an element of dt. */
static void store_integral(const lc_dtype *dt, void *p, double v) {
  if (v >= 0x1p63) {            /* uint64 only: past int64_t */
    uint64_t u = (uint64_t)v;
    memcpy(p, &u, 8);
  } else {
    lc_dtype_store_int(dt, p, (int64_t)v);
  }
}

/* A sequence of doubles computed from the index, as arange and linspace
** each define it; ints: how an integer dtype takes them (trunc or floor). */
typedef struct seq {
  double start, step, delta, div, stop;
  int64_t n;
  enum { SEQ_ARANGE, SEQ_LINSPACE, SEQ_LINSPACE_TINY } form;
  double (*ints)(double);
} seq;

static double seq_at(const seq *q, int64_t i) {
  switch (q->form) {
    case SEQ_ARANGE:          /* the first is start itself, even for an infinite step */
      return i == 0 ? q->start : q->start + (double)i * q->step;
    case SEQ_LINSPACE:
      return i == q->n - 1 && q->n > 1 ? q->stop : (double)i * q->step + q->start;
    default:                  /* step underflowed to 0: scale before multiplying */
      return i == q->n - 1 && q->n > 1 ? q->stop : (double)i / q->div * q->delta + q->start;
  }
}

/* Push a new 1-d host array of dtype dt holding q. For an integer dtype
** the values are checked before anything is allocated: q is monotonic up
** to its last value but one (rounding keeps the order of start + i*step),
** so its extremes are among the first and the last two. */
static void push_seq(lua_State *L, const seq *q, const lc_dtype *dt, const char *fname) {
  bool integer = dt->kind != 'f';
  if (integer && q->n > 0) {
    int64_t ends[3] = {0, q->n - 1, q->n > 1 ? q->n - 2 : 0};
    for (int k = 0; k < 3; k++) {
      double v = q->ints(seq_at(q, ends[k]));
      if (!fits_int(dt, v)) not_fitting(L, dt, v, fname);
    }
  }
  int64_t shape[1] = {q->n};
  lc_array *a = lc_array_empty(L, LC_HOST, dt, 1, shape, 'C', NULL, fname);
  char *p = a->buf->ptr;
  for (int64_t i = 0; i < q->n; i++, p += dt->size) {
    if (integer) store_integral(dt, p, q->ints(seq_at(q, i)));
    else lc_dtype_store_float(dt, p, seq_at(q, i));
  }
}

/* arange(n [, dtype]): 0, 1, ..., n-1 */
static int arange_count(lua_State *L) {
  int64_t n = lc_check_integer(L, 1, "n", 0, "arange");
  if (n < 0) lc_error(L, "arange", "n must not be negative, got %lld", (long long)n);
  const lc_dtype *dt = lc_dtype_opt(L, 2, &lc_dtypes[LC_INT64], "arange");
  check_range_dtype(L, dt, "arange");
  char tmp[16];
  if (n > 0) {        /* the largest value must fit the dtype */
    lua_pushinteger(L, n - 1);
    lc_elem_check(L, -1, dt, tmp, "arange");
    lua_pop(L, 1);
  }
  int64_t shape[1] = {n};
  lc_array *a = lc_array_empty(L, LC_HOST, dt, 1, shape, 'C', NULL, "arange");
  char *p = a->buf->ptr;
  for (int64_t i = 0; i < n; i++, p += dt->size)   /* range checked above */
    lc_dtype_store_int(dt, p, i);
  return 1;
}

/* Integer start, stop and step: exact int64 values, start + i*step. The
** differences are taken in uint64_t, where they cannot overflow. */
static void arange_ints(lua_State *L, int64_t start, int64_t stop, int64_t step,
                        const lc_dtype *dt) {
  uint64_t span, mag, n = 0;
  if (step > 0 && stop > start) {
    span = (uint64_t)stop - (uint64_t)start;
    mag = (uint64_t)step;
    n = span / mag + (span % mag != 0);
  } else if (step < 0 && start > stop) {
    span = (uint64_t)start - (uint64_t)stop;
    mag = 0 - (uint64_t)step;
    n = span / mag + (span % mag != 0);
  }
  if (n > (uint64_t)INT64_MAX)
    lc_error(L, "arange", "the range holds %llu values, more than an array can",
             (unsigned long long)n);
  /* start + i*step lies between start and stop: wrapping arithmetic in
  ** uint64_t gives it exactly */
#define AT(i) ((int64_t)((uint64_t)start + (uint64_t)(i) * (uint64_t)step))
  char tmp[16];
  if (dt->kind != 'f' && n > 0) {       /* the extremes are the ends */
    lua_pushinteger(L, AT(0));
    lc_elem_check(L, -1, dt, tmp, "arange");
    lua_pushinteger(L, AT(n - 1));
    lc_elem_check(L, -1, dt, tmp, "arange");
    lua_pop(L, 2);
  }
  int64_t shape[1] = {(int64_t)n};
  lc_array *a = lc_array_empty(L, LC_HOST, dt, 1, shape, 'C', NULL, "arange");
  char *p = a->buf->ptr;
  for (uint64_t i = 0; i < n; i++, p += dt->size) {
    if (dt->kind == 'f') lc_dtype_store_float(dt, p, (double)AT(i));
    else lc_dtype_store_int(dt, p, AT(i));
  }
#undef AT
}

/* arange(start, stop [, step] [, dtype]): NumPy's, stop excluded: the
** length is ceil((stop - start) / step); int64 from integers, float64
** when any of the three is a float. An integer dtype truncates the values
** toward zero, as astype does. */
static int arange_range(lua_State *L) {
  const char *fn = "arange";
  check_number(L, 1, "start", fn);
  int didx = 4;
  if (lua_type(L, 3) == LUA_TNUMBER) {
    if (lua_tonumber(L, 3) == 0) lc_error(L, fn, "step must not be zero");
  } else if (!lua_isnoneornil(L, 3)) {
    didx = 3;                   /* arange(start, stop, dtype) */
  }
  bool ints = lua_isinteger(L, 1) && lua_isinteger(L, 2) &&
              (didx == 3 || lua_isnoneornil(L, 3) || lua_isinteger(L, 3));
  const lc_dtype *dt = lc_dtype_opt(L, didx, &lc_dtypes[ints ? LC_INT64 : LC_FLOAT64], fn);
  check_range_dtype(L, dt, fn);
  if (ints) {
    int64_t step = didx == 4 && !lua_isnoneornil(L, 3) ? lua_tointeger(L, 3) : 1;
    arange_ints(L, lua_tointeger(L, 1), lua_tointeger(L, 2), step, dt);
    return 1;
  }
  seq q = {.start = lua_tonumber(L, 1), .stop = lua_tonumber(L, 2), .form = SEQ_ARANGE,
           .ints = trunc};
  q.step = didx == 4 && !lua_isnoneornil(L, 3) ? lua_tonumber(L, 3) : 1;
  if (!isfinite(q.start)) lc_error(L, fn, "start must be finite, got %g", q.start);
  if (!isfinite(q.stop)) lc_error(L, fn, "stop must be finite, got %g", q.stop);
  if (isnan(q.step)) lc_error(L, fn, "step must not be NaN");
  double delta = q.stop - q.start, len = delta / q.step;
  if (len == 0 && delta != 0)   /* the quotient underflowed (or step is infinite) */
    len = signbit(len) ? 0 : 1;
  len = ceil(len);
  if (!(len < 0x1p63))
    lc_error(L, fn, "(stop - start) / step is %g: more values than an array can hold", len);
  q.n = len > 0 ? (int64_t)len : 0;
  push_seq(L, &q, dt, fn);
  return 1;
}

/***
Evenly spaced values, as NumPy's `arange`: `arange(n [, dtype])` gives
0, 1, ..., n-1; `arange(start, stop [, step] [, dtype])` gives start,
start + step, ... up to but excluding stop.
@function arange
@tparam number start (or `n`, alone)
@tparam[opt] number stop the end, excluded
@tparam[opt=1] number step not zero
@tparam[opt] string dtype int64 when every number is an integer, else
float64; an integer dtype truncates toward zero
@treturn Array a 1-d host array
@raise `luacuda.arange: step must not be zero`; a negative `n`, a
non-finite bound, a range too long, or values the dtype cannot hold
@usage print(luacuda.arange(4))          -- {0, 1, 2, 3}
print(luacuda.arange(1, 2, 0.5))  -- {1.0, 1.5}
*/

/* arange(n [, dtype]) or arange(start, stop [, step] [, dtype]): a number
** second tells the second form from the first */
static int l_arange(lua_State *L) {
  return lua_type(L, 2) == LUA_TNUMBER ? arange_range(L) : arange_count(L);
}

/***
`n` evenly spaced values from `start` to `stop`, both included.
@function linspace
@tparam number start the first value
@tparam number stop the last value
@tparam integer n how many
@tparam[opt="float64"] string dtype an integer dtype takes their floor
@treturn Array a 1-d host array
@raise `luacuda.linspace: n must not be negative, got <n>`; values the dtype cannot hold
@usage print(luacuda.linspace(0, 1, 3))  -- {0.0, 0.5, 1.0}
*/

/* linspace(start, stop, n [, dtype]): n values from start to stop, both
** included, as NumPy computes them: start + i*step, the last exactly stop.
** float64 by default; an integer dtype takes their floor (NumPy 2). */
static int l_linspace(lua_State *L) {
  const char *fn = "linspace";
  seq q = {.start = check_number(L, 1, "start", fn), .stop = check_number(L, 2, "stop", fn),
           .form = SEQ_LINSPACE, .ints = floor};
  q.n = lc_check_integer(L, 3, "n", 0, fn);
  if (q.n < 0) lc_error(L, fn, "n must not be negative, got %lld", (long long)q.n);
  const lc_dtype *dt = lc_dtype_opt(L, 4, F64, fn);
  check_range_dtype(L, dt, fn);
  q.delta = q.stop - q.start;
  if (q.n > 1) {
    q.div = (double)(q.n - 1);
    q.step = q.delta / q.div;
    if (q.step == 0 && q.delta != 0) q.form = SEQ_LINSPACE_TINY;
  } else {
    q.step = 0;               /* one value: start itself */
  }
  push_seq(L, &q, dt, fn);
  return 1;
}

/* ---- like another array ----------------------------------------------- */

/* Push a new array of a's kind and shape, axes in a's stride order
** (NumPy's order 'K'), of dtype dt. */
static lc_array *new_like(lua_State *L, const lc_array *a, const lc_dtype *dt, lc_kind kind,
                          const char *fname) {
  lc_layout lay;
  char err[LC_ERRLEN];
  /* a's count fits a's itemsize, not always dt's */
  if (lc_layout_like(&lay, &a->lay, dt->size, err)) lc_error(L, fname, "%s", err);
  return lc_array_alloc(L, kind, dt, &lay, lay.size * dt->size, NULL, fname);
}

typedef enum { LIKE_EMPTY, LIKE_ZEROS, LIKE_ONES, LIKE_FULL } like_fill;

/***
A new array of `a`'s kind, shape and axis order, elements not set.
@function empty_like
@tparam Array a the model
@tparam[opt] string|table dtype the element type (a's by default); options
`{dtype =, kind =}` may follow it or stand in its place, `kind` the memory (a's by default)
@treturn Array
@raise `luacuda.empty_like: <cause>` when `a` is not an open array or the dtype is bad
@usage local d = luacuda.device_array({8}, "float32")
local e = luacuda.empty_like(d)   -- a device array too
*/

/***
A new array of zeros of `a`'s kind, shape and axis order.
@function zeros_like
@tparam Array a the model
@tparam[opt] string|table dtype the element type (a's by default); options
`{dtype =, kind =}` may follow it or stand in its place, `kind` the memory (a's by default)
@treturn Array
@raise `luacuda.zeros_like: <cause>` when `a` is not an open array or the dtype is bad
@usage local z = luacuda.zeros_like(luacuda.arange(3))
*/

/***
A new array of ones of `a`'s kind, shape and axis order.
@function ones_like
@tparam Array a the model
@tparam[opt] string|table dtype the element type (a's by default; not a record); options
`{dtype =, kind =}` may follow it or stand in its place, `kind` the memory (a's by default)
@treturn Array
@raise `luacuda.ones_like: a record dtype has no one (use full_like or zeros_like)`
@usage local o = luacuda.ones_like(luacuda.zeros({2, 2}))
*/

/***
A new array of `a`'s kind, shape and axis order with every element `value`.
@function full_like
@tparam Array a the model
@tparam number|boolean value the value
@tparam[opt] string|table dtype the element type (a's by default); options
`{dtype =, kind =}` may follow it or stand in its place, `kind` the memory (a's by default)
@treturn Array
@raise `luacuda.full_like: <cause>` for a value the dtype cannot hold
@usage local f = luacuda.full_like(luacuda.zeros({2}, "int32"), 2)
*/

/* empty_like/zeros_like/ones_like(a [, dtype]) and full_like(a, v [, dtype]):
** same kind, shape and axis order as a, a's dtype unless one is given;
** upvalues: name, fill */
static int l_like(lua_State *L) {
  const char *fname = lua_tostring(L, lc_upvalueindex(1));
  like_fill fill = (like_fill)lua_tointeger(L, lc_upvalueindex(2));
  lc_array *a = lc_array_check(L, 1, fname);
  int didx = fill == LIKE_FULL ? 3 : 2;
  lua_settop(L, didx + 1);       /* a missing value reads as nil */
  create_args c;
  read_create_args(L, didx, false, lc_array_kind(a), &c, fname);
  const lc_dtype *dt = c.dt ? c.dt : a->dtype;
  /* the element, converted before allocating: a bad value allocates nothing */
  char small[16];
  void *value = lc_elem_room(L, dt, small, sizeof small);     /* zeroed */
  if (fill == LIKE_ONES) {
    if (dt->rec)
      lc_error(L, fname, "a record dtype has no one (use full_like or zeros_like)");
    if (dt->code == LC_BOOL) lua_pushboolean(L, 1);
    else lua_pushinteger(L, 1);
    lc_elem_check(L, -1, dt, value, fname);
    lua_pop(L, 1);
  } else if (fill == LIKE_FULL) {
    lc_elem_check(L, 2, dt, value, fname);
  }
  lc_array *b = new_like(L, a, dt, c.kind, fname);
  if (fill != LIKE_EMPTY) lc_fill_raw(L, b, value, NULL, fname);
  return 1;
}

/* ---- device ----------------------------------------------------------- */

/* Push a new array of kind with the given layout, allocated with flags. */
static lc_array *alloc_flags(lua_State *L, lc_kind kind, unsigned flags, const lc_dtype *dt,
                             const lc_layout *lay, int64_t nbytes, lc_stream *s,
                             const char *fname) {
  lc_array *a = lc_array_push_closed(L, dt);
  a->lay = *lay;
  a->buf = lc_buffer_new(L, kind, (size_t)nbytes, flags, s, fname);
  lc_array_note_origin(L, a, NULL);
  return a;
}

void lc_opts_for_dtype(lua_State *L, int idx) {
  if (lua_type(L, idx) == LUA_TTABLE && !lua_getmetatable(L, idx)) {
    lua_pushnil(L);
    lua_insert(L, idx);
  }
}

lc_array *lc_array_new(lua_State *L, lc_kind kind, unsigned flags,
                       const char *const *known, const char *fname) {
  int64_t shape[LC_MAXDIM];
  lc_layout lay;
  char err[LC_ERRLEN];
  lc_check_shape_not_spread(L, 1, fname);
  int nd = lc_check_dims(L, 1, false, false, shape, "shape", fname);
  lc_opts_for_dtype(L, 2);
  const lc_dtype *dt = lc_dtype_opt(L, 2, NULL, fname);
  char order;
  lc_stream *s = NULL;
  int top = lua_gettop(L);
  if (lua_type(L, 3) == LUA_TSTRING) {
    order = lc_check_order(L, 3, fname);
    lua_pushnil(L);
  } else {
    bool have = lc_check_opts(L, 3, known, fname);
    if (opt_field(L, 3, have, "dtype") != LUA_TNIL) {   /* the one dtype form: {dtype =} */
      if (dt) lc_error(L, fname, "the dtype is given twice (an argument and dtype=)");
      dt = lc_dtype_check(L, -1, fname);
    }                                         /* kept on the stack: a record's */
    opt_field(L, 3, have, "order");
    order = lc_check_order(L, -1, fname);
    opt_field(L, 3, have, "stream");          /* nil unless known; kept on the stack */
    s = lc_opt_stream(L, -1, fname);
    opt_field(L, 3, have, "strides");
  }
  if (dt == NULL) dt = F64;
  if (lua_isnil(L, -1)) {
    if (lc_layout_contiguous(&lay, nd, shape, dt->size, order, err))
      lc_error(L, fname, "%s", err);
    lc_array *a = alloc_flags(L, kind, flags, dt, &lay, lay.size * dt->size, s, fname);
    lua_replace(L, top + 1);
    lua_settop(L, top + 1);
    return a;
  }
  int64_t strides[LC_MAXDIM];
  if (lua_type(L, -1) != LUA_TTABLE)
    lc_error(L, fname, "strides must be a table of integers, got %s", luaL_typename(L, -1));
  int ns = (int)lua_rawlen(L, -1);
  if (ns > LC_MAXDIM) lc_error(L, fname, "more than %d strides", LC_MAXDIM);
  for (int i = 0; i < ns; i++) {
    lua_rawgeti(L, -1, i + 1);
    strides[i] = lc_check_integer(L, -1, "stride", i + 1, fname);
    lua_pop(L, 1);
  }
  int64_t span;
  if (lc_layout_strided(&lay, nd, shape, ns, strides, dt->size, &span, err))
    lc_error(L, fname, "%s", err);
  lc_array *a = alloc_flags(L, kind, flags, dt, &lay, span, s, fname);
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
  return a;
}

static const char *const device_array_opts[] = {"dtype", "strides", "order", "stream", NULL};

/***
A new device array, elements not set.
@function device_array
@tparam table|integer shape the sizes of the axes
@tparam[opt="float64"] string|Record dtype the element type
@tparam[opt] table|string opts `"C"`/`"F"`, or `{dtype =, order =, strides =, stream =}`
(which may stand in the dtype's place):
`strides` in bytes per axis; with `stream` the memory is allocated
and freed in that stream's order
@treturn Array a device array
@raise `luacuda.device_array: <cause>` for a bad shape, dtype, strides or
option, or when the device is out of memory
@usage local d = luacuda.device_array({1024}, "float32")
d:fill(0)
*/

/* device_array(shape [, dtype] [, {strides=, order=, stream=} | order]) */
static int l_device_array(lua_State *L) {
  lc_array_new(L, LC_DEVICE, 0, device_array_opts, "device_array");
  return 1;
}

/***
A new device array of `a`'s shape and dtype, axes in `a`'s stride order.
@function device_array_like
@tparam Array a the model (any kind)
@tparam[opt] Stream stream allocate in this stream's order
@treturn Array a device array
@raise `luacuda.device_array_like: <cause>` when `a` is not an open array
@usage local h = luacuda.zeros({4})
local d = luacuda.device_array_like(h)
*/

/* device_array_like(a [, stream]): same shape and dtype, axes in a's
** stride order (NumPy's empty_like) */
static int l_device_array_like(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "device_array_like");
  lc_stream *s = lc_opt_stream(L, 2, "device_array_like");
  lc_layout lay;
  char err[LC_ERRLEN];
  if (lc_layout_like(&lay, &a->lay, a->dtype->size, err))
    lc_error(L, "device_array_like", "%s", err);
  lc_array_alloc(L, LC_DEVICE, a->dtype, &lay, lay.size * a->dtype->size, s,
                 "device_array_like");
  return 1;
}

static const char *const to_device_opts[] = {"copy", "to", "dtype", "device", NULL};

/***
A new host array from a nested table, a scalar or an array (copied).
@function array
@tparam table|number|boolean|Array src the values; a nested table gives
the shape (rows of equal length)
@tparam[opt] string|Record|table dtype int64 for integers, float64 for floats,
bool for booleans by default; for an array source it must be the array's
(or `{dtype = ...}`, as @{to_device} takes it)
@treturn Array a host array
@raise `luacuda.array: expected a table, number, boolean or array, got <type>`;
a ragged table; `dtype mismatch` for an array of another dtype
@usage local a = luacuda.array({{1, 2}, {3, 4}}, "float32")
print(a.shape[1], a.shape[2])  -- 2 2
*/

/* luacuda.array(src [, dtype]): a host array from a table, a scalar or an
** array (copied; dtypes must match) */
static int l_array(lua_State *L) {
  const lc_dtype *dt;
  if (lua_type(L, 2) == LUA_TTABLE) {        /* {dtype = ...}, the form of to_device */
    static const char *const known[] = {"dtype", NULL};
    lc_check_opts(L, 2, known, "array");
    lua_settop(L, 2);
    lc_opt_get(L, 2, "dtype");               /* stays on the stack */
    dt = lc_dtype_opt(L, 3, NULL, "array");
  } else {
    dt = lc_dtype_opt(L, 2, NULL, "array");
  }
  int t = lua_type(L, 1);
  if (t == LUA_TTABLE) {
    lc_from_table(L, 1, dt, LC_HOST, NULL, "array");
  } else if (t == LUA_TNUMBER || t == LUA_TBOOLEAN) {
    lc_from_scalar(L, 1, dt, LC_HOST, "array");
  } else {
    lc_array *a = lc_array_test(L, 1);
    if (a == NULL)
      lc_error(L, "array", "expected a table, number, boolean or array, got %s",
               luaL_typename(L, 1));
    a = lc_array_check(L, 1, "array");
    if (dt && !lc_dtype_equal(dt, a->dtype))
      lc_error(L, "array", "dtype mismatch: the array is %s, not %s (no implicit casting)",
               a->dtype->name, dt->name);
    lc_copy_to_new(L, a, LC_HOST, NULL, "array");
  }
  return 1;
}

/***
Copies host data (a nested table, a scalar or an array) to a new device
array, or into an existing one.
@function to_device
@tparam table|number|boolean|Array src the data
@tparam[opt] string|Record dtype the element type, as @{array} takes it (or `dtype =` in opts)
@tparam[opt] Stream stream queue the copy on this stream
@tparam[opt] table opts `{dtype =, copy = true, to =, device =}`: `dtype`
for a table or scalar source; `copy = false` allocates without copying;
`to` is the device array to copy into; `device` (counted from 1) the device
the result is on (current during the call; `stream` must be one of its
streams): a device array of another device is copied there, a peer copy
@treturn Array a device array
@raise `luacuda.to_device: <cause>` for a source or option of the wrong type,
`dtype mismatch` (no implicit casting), or a `to` of another shape;
`no device 3 (there are 2)` for a `device` out of range
@usage local d = luacuda.to_device({1, 2, 3}, {dtype = "float32"})
print(d:copy_to_host())
local f = luacuda.to_device({1, 2, 3}, "float32")   -- the same
local e = luacuda.to_device(d, {device = #luacuda.devices()})   -- the last device
*/

/* to_device(src [, dtype] [, stream] [, {copy=, to=, dtype=, device=}]) */
static int l_to_device(lua_State *L) {
  const char *fn = "to_device";
  int didx = 0, sidx = 2, oidx = 3;
  if (lua_type(L, 2) == LUA_TSTRING || lc_record_test(L, 2)) {   /* a dtype, as array's */
    didx = 2;
    sidx = 3;
    oidx = 4;
  }
  if (lua_type(L, sidx) == LUA_TTABLE) {     /* no stream: the options */
    oidx = sidx;
    sidx = 0;
  }
  bool have = lc_check_opts(L, oidx, to_device_opts, fn);
  lua_settop(L, 4);
  /* device = j: j current for the rest of the call (the stream is j's) */
  bool on_device = have && lc_opt_get(L, oidx, "device") != LUA_TNIL;
  if (on_device) lc_device_option(L, -1, fn);
  lc_stream *s = sidx ? lc_opt_stream(L, sidx, fn) : NULL;
  int top = lua_gettop(L);
  opt_field(L, oidx, have, "dtype");
  const lc_dtype *dt = lc_dtype_opt(L, top + 1, NULL, fn);
  if (didx) {
    if (dt) lc_error(L, fn, "the dtype is given twice (an argument and dtype=)");
    dt = lc_dtype_check(L, didx, fn);
  }
  int ct = opt_field(L, oidx, have, "copy");
  if (ct != LUA_TNIL && ct != LUA_TBOOLEAN)
    lc_error(L, fn, "option copy must be a boolean, got %s", luaL_typename(L, -1));
  bool copy = ct == LUA_TNIL || lua_toboolean(L, top + 2);
  lc_array *to = NULL;
  if (opt_field(L, oidx, have, "to") != LUA_TNIL) {
    to = lc_array_check(L, top + 3, fn);
    if (lc_array_kind(to) != LC_DEVICE)
      lc_error(L, fn, "option to must be a device array, got a %s array",
               lc_kind_names[lc_array_kind(to)]);
    if (on_device && to->buf->device != to->buf->backend->current_device())
      lc_error(L, fn, "option to is an array of device %d, option device says %d",
               to->buf->device + 1, to->buf->backend->current_device() + 1);
  }
  if (to && dt && !lc_dtype_equal(dt, to->dtype))
    lc_error(L, fn, "dtype mismatch: option to is %s, option dtype is %s",
             to->dtype->name, dt->name);
  int t = lua_type(L, 1);
  lc_array *src = lc_array_test(L, 1);
  if (src) {
    src = lc_array_check(L, 1, fn);
    if (dt && !lc_dtype_equal(dt, src->dtype))
      lc_error(L, fn, "dtype mismatch: the array is %s, not %s (no implicit casting)",
               src->dtype->name, dt->name);
    if (to) {
      if (copy) lc_copy_array(L, to, src, s, fn);
      lua_pushvalue(L, top + 3);
    } else if (lc_array_kind(src) == LC_DEVICE &&
               src->buf->device == src->buf->backend->current_device()) {
      lua_pushvalue(L, 1);                    /* already there, as in Numba */
    } else {
      lc_layout lay;
      char err[LC_ERRLEN];
      if (lc_layout_like(&lay, &src->lay, src->dtype->size, err)) lc_error(L, fn, "%s", err);
      lc_array *d = lc_array_alloc(L, LC_DEVICE, src->dtype, &lay,
                                   lay.size * src->dtype->size, s, fn);
      if (copy) lc_copy_array(L, d, src, s, fn);
    }
    return 1;
  }
  if (t != LUA_TTABLE && t != LUA_TNUMBER && t != LUA_TBOOLEAN)
    lc_error(L, fn, "expected a table, number, boolean or array, got %s",
             luaL_typename(L, 1));
  if (to) {
    if (copy) lc_assign(L, to, &to->lay, 1, s, fn);
    lua_pushvalue(L, top + 3);
    return 1;
  }
  if (t == LUA_TTABLE) {
    if (copy) {
      lc_from_table(L, 1, dt, LC_DEVICE, s, fn);
    } else {      /* only the shape and dtype of the table are wanted */
      lc_array *h = lc_from_table(L, 1, dt, LC_HOST, NULL, fn);
      lc_array_empty(L, LC_DEVICE, h->dtype, h->lay.ndim, h->lay.shape, 'C', s, fn);
    }
  } else {
    lc_from_scalar(L, 1, dt, LC_DEVICE, fn);
  }
  return 1;
}

void lc_create_open(lua_State *L) {
  static const struct { const char *name; new_fill fill; } host[] = {
    {"empty", NEW_EMPTY}, {"zeros", NEW_ZEROS}, {"ones", NEW_ONES},
  };
  static const luaL_Reg new_host = {"new_host", l_new_host};
  for (size_t i = 0; i < sizeof host / sizeof host[0]; i++) {
    lua_pushstring(L, host[i].name);
    lua_pushinteger(L, host[i].fill);
    lc_pushfunction(L, &new_host, 2);
    lua_setfield(L, -2, host[i].name);
  }
  static const struct { const char *name; like_fill fill; } like[] = {
    {"empty_like", LIKE_EMPTY}, {"zeros_like", LIKE_ZEROS}, {"ones_like", LIKE_ONES},
    {"full_like", LIKE_FULL},
  };
  static const luaL_Reg new_like_fn = {"like", l_like};
  for (size_t i = 0; i < sizeof like / sizeof like[0]; i++) {
    lua_pushstring(L, like[i].name);
    lua_pushinteger(L, like[i].fill);
    lc_pushfunction(L, &new_like_fn, 2);
    lua_setfield(L, -2, like[i].name);
  }
  static const luaL_Reg fns[] = {
    {"array", l_array},
    {"full", l_full},
    {"arange", l_arange},
    {"linspace", l_linspace},
    {"device_array", l_device_array},
    {"device_array_like", l_device_array_like},
    {"to_device", l_to_device},
    {NULL, NULL}
  };
  lc_setfuncs(L, fns);
}
