/*
** convert: Lua tables <-> arrays. A nested table is read in one pass,
** straight into C-contiguous memory; without a dtype it is int64 until a
** float shows up, and then the int64s already written are widened in place
** (both are 8 bytes). Leaves are fetched in batches so that most of the
** time goes to conversion, not to stack traffic. A Lua value assigned to a
** view (a[i] = v, copy_to_device) is converted here too, then copied
** (copy.c).
*/
#include "convert.h"
#include "pending.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "gate.h"
#include "args.h"
#include "record.h"
#include "copy.h"
#include "stream.h"

#define CHUNK 64

typedef enum { AS_GIVEN, AS_INT, AS_FLOAT, AS_BOOL } conv_mode;

typedef struct conv {
  lua_State *L;
  const lc_dtype *dt;
  conv_mode mode;
  char *start, *out;
  int ndim;
  const int64_t *shape;
  int64_t pos[LC_MAXDIM];      /* 1-based position, for messages */
  const char *fname;
} conv;

static void format_pos(char *buf, size_t len, const conv *c, int depth) {
  lc_shape_format(buf, len, depth, c->pos);
}

LC_NORETURN static void elem_error(conv *c, int depth, const char *msg) {
  char where[256];
  format_pos(where, sizeof where, c, depth);
  lc_error(c->L, c->fname, "element %s: %s", where, msg);
}

LC_NORETURN static void ragged(conv *c, int depth, const char *msg) {
  char where[256];
  format_pos(where, sizeof where, c, depth);
  lc_error(c->L, c->fname, "ragged nested table: entry %s %s", where, msg);
}

/* The shape of the nested table at idx, from its first entries; *leaf gets
** the Lua type of the first leaf (LUA_TNONE if the table is empty). For a
** record dtype, a table without an entry [1] is a leaf: one record. */
static int table_shape(lua_State *L, int idx, const lc_dtype *dt, int64_t *shape,
                       int *leaf, const char *fname) {
  int nd = 0;
  bool rec = dt && dt->rec;
  lua_pushvalue(L, idx);
  for (;;) {
    if (rec && lc_record_is_value(L, -1)) { *leaf = LUA_TTABLE; break; }
    if (nd == LC_MAXDIM) lc_error(L, fname, "table nested deeper than %d levels", LC_MAXDIM);
    int64_t n = (int64_t)lua_rawlen(L, -1);
    shape[nd++] = n;
    if (n == 0) { *leaf = LUA_TNONE; break; }
    int t = lua_rawgeti(L, -1, 1);
    lua_remove(L, -2);
    if (t != LUA_TTABLE) { *leaf = t; break; }
  }
  lua_pop(L, 1);
  return nd;
}

static void widen_to_float(conv *c) {
  int64_t *iv = (int64_t *)(void *)c->start;
  double *fv = (double *)(void *)c->start;
  int64_t n = (c->out - c->start) / 8;
  for (int64_t k = 0; k < n; k++) fv[k] = (double)iv[k];
  c->mode = AS_FLOAT;
  c->dt = &lc_dtypes[LC_FLOAT64];
}

static void leaf_error(conv *c, int depth, int idx) {
  lua_State *L = c->L;
  int t = lua_type(L, idx);
  char msg[LC_ERRLEN];
  if (t == LUA_TTABLE && c->dt->rec == NULL) {
    snprintf(msg, sizeof msg, "is a table where a value is expected (ragged nested table)");
  } else if ((c->mode == AS_BOOL && t == LUA_TNUMBER) ||
             (c->mode != AS_GIVEN && c->mode != AS_BOOL && t == LUA_TBOOLEAN)) {
    snprintf(msg, sizeof msg, "mixes booleans and numbers (got a %s)", lua_typename(L, t));
  } else if (c->mode == AS_BOOL) {
    snprintf(msg, sizeof msg, "expected a boolean, got %s", lua_typename(L, t));
  } else if (c->mode != AS_GIVEN) {
    snprintf(msg, sizeof msg, "expected a number or a boolean, got %s", lua_typename(L, t));
  } else if (lc_elem_convert(L, idx, c->dt, c->out, msg) == 0) {
    return;
  }
  elem_error(c, depth, msg);
}

/* Convert m leaves at stack slots base.., whose Lua types are in types[]
** (lua_rawgeti returned them); first is the 0-based position of the first.
** One loop per mode, so the mode is not decided per element. */
static void convert_run(conv *c, int base, int m, const int *types, int64_t first,
                        int depth) {
  lua_State *L = c->L;
  int k = 0;
#define FAIL(k_) do { c->pos[depth] = first + (k_) + 1; leaf_error(c, depth + 1, base + (k_)); } while (0)
  if (c->mode == AS_INT) {
    for (; k < m; k++) {
      if (!lua_isinteger(L, base + k)) break;
      int64_t v = lua_tointeger(L, base + k);
      memcpy(c->out, &v, 8);
      c->out += 8;
    }
    if (k == m) return;
    if (types[k] != LUA_TNUMBER) FAIL(k);
    widen_to_float(c);          /* a float: the rest is float64 too */
  }
  switch (c->mode) {
    case AS_FLOAT:
      for (; k < m; k++) {
        if (types[k] != LUA_TNUMBER) FAIL(k);
        double v = lua_tonumber(L, base + k);
        memcpy(c->out, &v, 8);
        c->out += 8;
      }
      return;
    case AS_BOOL:
      for (; k < m; k++) {
        if (types[k] != LUA_TBOOLEAN) FAIL(k);
        *c->out++ = (char)lua_toboolean(L, base + k);
      }
      return;
    default: break;
  }
  int64_t size = c->dt->size;
  for (; k < m; k++, c->out += size) {
    int idx = base + k;
    if (c->dt->code == LC_FLOAT64 && types[k] == LUA_TNUMBER) {
      double v = lua_tonumber(L, idx);
      memcpy(c->out, &v, 8);
    } else if (c->dt->code == LC_FLOAT32 && types[k] == LUA_TNUMBER) {
      float v = (float)lua_tonumber(L, idx);
      memcpy(c->out, &v, 4);
    } else {
      char err[LC_ERRLEN];
      if (lc_elem_convert(L, idx, c->dt, c->out, err)) FAIL(k);
    }
  }
#undef FAIL
}

static void convert_level(conv *c, int tidx, int depth) {
  lua_State *L = c->L;
  int64_t n = c->shape[depth];
  char msg[LC_ERRLEN];
  if ((int64_t)lua_rawlen(L, tidx) != n) {
    snprintf(msg, sizeof msg, "has %lld entries, expected %lld",
             (long long)lua_rawlen(L, tidx), (long long)n);
    ragged(c, depth, msg);
  }
  char key[64];
  if (lc_table_extra_key(L, tidx, (lua_Integer)n, key, sizeof key)) {
    char where[256] = "the table";
    if (depth > 0) {
      strcpy(where, "entry ");
      format_pos(where + 6, sizeof where - 6, c, depth);
    }
    if (n > 0)
      lc_error(L, c->fname, "%s has %s; only positions 1..%lld are read", where, key,
               (long long)n);
    lc_error(L, c->fname, "%s has %s; only positions are read", where, key);
  }
  if (depth == c->ndim - 1) {
    int types[CHUNK];
    luaL_checkstack(L, CHUNK, c->fname);
    for (int64_t i = 0; i < n; i += CHUNK) {
      int m = (int)(n - i < CHUNK ? n - i : CHUNK);
      for (int k = 0; k < m; k++) types[k] = lua_rawgeti(L, tidx, i + k + 1);
      int base = lua_gettop(L) - m + 1;
      convert_run(c, base, m, types, i, depth);
      lua_settop(L, base - 1);
    }
    return;
  }
  luaL_checkstack(L, 2, c->fname);
  for (int64_t i = 0; i < n; i++) {
    c->pos[depth] = i + 1;
    if (lua_rawgeti(L, tidx, i + 1) != LUA_TTABLE) {
      snprintf(msg, sizeof msg, "is a %s where a table is expected", luaL_typename(L, -1));
      ragged(c, depth + 1, msg);
    }
    convert_level(c, lua_gettop(L), depth + 1);
    lua_pop(L, 1);
  }
}

lc_array *lc_from_table(lua_State *L, int idx, const lc_dtype *dt, lc_kind kind,
                        lc_stream *s, const char *fname) {
  idx = lua_absindex(L, idx);
  int64_t shape[LC_MAXDIM];
  int leaf;
  int nd = table_shape(L, idx, dt, shape, &leaf, fname);
  conv c = {.L = L, .dt = dt, .mode = AS_GIVEN, .ndim = nd, .shape = shape, .fname = fname};
  if (dt == NULL) {
    if (leaf == LUA_TBOOLEAN) { c.mode = AS_BOOL; c.dt = &lc_dtypes[LC_BOOL]; }
    else if (leaf == LUA_TNUMBER) { c.mode = AS_INT; c.dt = &lc_dtypes[LC_INT64]; }
    else { c.mode = AS_FLOAT; c.dt = &lc_dtypes[LC_FLOAT64]; }  /* empty, or bad */
  }
  lc_array *h = lc_array_empty(L, LC_HOST, c.dt, nd, shape, 'C', NULL, fname);
  c.start = c.out = lc_array_data(h);
  if (c.dt->rec) {               /* padding bytes are zeros, not garbage */
    memset(c.start, 0, (size_t)(h->lay.size * c.dt->size));
    if (nd == 0) {
      char err[LC_ERRLEN];
      if (lc_elem_convert(L, idx, c.dt, c.out, err)) lc_error(L, fname, "%s", err);
    }
  }
  if (nd > 0) convert_level(&c, idx, 0);   /* a size-0 table may still be ragged: {{}, {1}} */
  h->dtype = c.dt;                        /* int64 may have become float64 */
  if (kind == LC_HOST) return h;
  lc_array *d = lc_copy_to_new(L, h, kind, s, fname);
  lua_remove(L, -2);
  return d;
}

/* ---- array -> table --------------------------------------------------- */

#define PUSH_ROW(T, PUSH) \
  for (int64_t i = 0; i < n; i++) { T v_; memcpy(&v_, p + i * st, sizeof v_); \
    PUSH(L, v_); lua_rawseti(L, -2, i + 1); }

static void push_level(lua_State *L, const lc_array *a, const char *p, int d) {
  int64_t n = a->lay.shape[d], st = a->lay.strides[d];
  lua_createtable(L, n > INT_MAX ? INT_MAX : (int)n, 0);
  if (d < a->lay.ndim - 1) {
    luaL_checkstack(L, 3, "totable");
    for (int64_t i = 0; i < n; i++) {
      push_level(L, a, p + i * st, d + 1);
      lua_rawseti(L, -2, i + 1);
    }
    return;
  }
  switch (a->dtype->code) {
    case LC_FLOAT64: PUSH_ROW(double, lua_pushnumber); break;
    case LC_FLOAT32: PUSH_ROW(float, lua_pushnumber); break;
    case LC_INT64:   PUSH_ROW(int64_t, lua_pushinteger); break;
    case LC_INT32:   PUSH_ROW(int32_t, lua_pushinteger); break;
    default:
      for (int64_t i = 0; i < n; i++) {
        lc_elem_push(L, a->dtype, p + i * st);
        lua_rawseti(L, -2, i + 1);
      }
  }
}

/* A Lua table holds at most INT_MAX entries; and an empty array, which
** holds no memory, may still ask for more tables than memory can hold
** ({2^40, 0}: 2^40 empty rows). Refuse both before making any. */
static void check_table_sizes(lua_State *L, const lc_array *a, const char *fname) {
  int64_t tables = 1;
  for (int d = 0; d < a->lay.ndim; d++) {
    if (a->lay.shape[d] > INT_MAX)
      lc_error(L, fname, "axis %d has %lld entries, more than a Lua table holds (%d)", d + 1,
               (long long)a->lay.shape[d], INT_MAX);
    if (d + 1 < a->lay.ndim && (tables *= a->lay.shape[d]) > INT_MAX) {
      char shape[256];
      lc_shape_format(shape, sizeof shape, a->lay.ndim, a->lay.shape);
      lc_error(L, fname, "an array of shape %s would make more than %d Lua tables", shape,
               INT_MAX);
    }
  }
}

void lc_to_table(lua_State *L, const lc_array *a, const char *fname) {
  check_table_sizes(L, a, fname);
  if (!lc_kind_host_accessible(lc_array_kind(a))) {
    lc_array *h = lc_copy_to_new(L, a, LC_HOST, NULL, fname);
    lc_to_table(L, h, fname);
    lua_remove(L, -2);
    return;
  }
  lc_pending_wait(L, a, false, fname);
  lc_sync_host(L, lc_array_kind(a), fname);
  if (a->lay.ndim == 0) lc_elem_push(L, a->dtype, lc_array_data(a));
  else push_level(L, a, lc_array_data(a), 0);
}

/* ---- assignment ---------------------------------------------------------- */

void lc_assign(lua_State *L, const lc_array *a, const lc_layout *lay, int vidx,
               lc_stream *s, const char *fname) {
  lc_array view = *a;          /* a stays referenced by the caller's stack */
  view.lay = *lay;
  int t = lua_type(L, vidx);
  vidx = lua_absindex(L, vidx);
  if (t == LUA_TTABLE && a->dtype->rec && lc_record_is_value(L, vidx)) {
    /* one record value: broadcast, as a scalar is */
    char small[16];
    int top = lua_gettop(L);
    void *value = lc_elem_room(L, a->dtype, small, sizeof small);
    lc_elem_check(L, vidx, a->dtype, value, fname);
    lc_fill_view(L, a, lay, value, s, fname);
    lua_settop(L, top);
  } else if (t == LUA_TNUMBER || t == LUA_TBOOLEAN) {
    char value[16];
    lc_elem_check(L, vidx, a->dtype, value, fname);
    lc_fill_view(L, a, lay, value, s, fname);
  } else if (t == LUA_TTABLE) {
    /* convert into a temporary first: a bad value must not leave the
    ** target half written */
    lc_array *tmp = lc_from_table(L, vidx, a->dtype, LC_HOST, NULL, fname);
    lc_copy_array(L, &view, tmp, s, fname);
    lua_pop(L, 1);
  } else {
    lc_array *src = lc_array_test(L, vidx);
    if (src == NULL)
      lc_error(L, fname, "cannot assign a %s to an array (a number, boolean, "
               "table or array)", luaL_typename(L, vidx));
    lc_copy_array(L, &view, lc_array_check(L, vidx, fname), s, fname);
  }
}

/*** @module luacuda */

/*** @type Array */

/***
The elements as nested Lua tables (a 0-d array: the value itself; records
as tables of fields). A device array is copied to the host first.
@function Array:totable
@return a table, or the one value of a 0-d array
@raise `luacuda.totable: <cause>` when `a` is not an open array
@usage local t = luacuda.array({{1, 2}, {3, 4}}):totable()
assert(t[2][1] == 3)
*/

/* a:totable() */
static int array_totable(lua_State *L) {
  lc_to_table(L, lc_array_check(L, 1, "totable"), "totable");
  return 1;
}

/* Push a 0-d array of the given kind holding the scalar at idx. */
lc_array *lc_from_scalar(lua_State *L, int idx, const lc_dtype *dt, lc_kind kind,
                         const char *fname) {
  if (dt == NULL) {
    int t = lua_type(L, idx);
    if (t == LUA_TBOOLEAN) dt = &lc_dtypes[LC_BOOL];
    else if (lua_isinteger(L, idx)) dt = &lc_dtypes[LC_INT64];
    else if (t == LUA_TNUMBER) dt = &lc_dtypes[LC_FLOAT64];
    else lc_error(L, fname, "expected a number, boolean, table or array, got %s",
                  luaL_typename(L, idx));
  }
  char value[16];
  lc_elem_check(L, idx, dt, value, fname);
  lc_array *a = lc_array_empty(L, kind, dt, 0, NULL, 'C', NULL, fname);
  lc_elem_write(L, a, a->lay.offset, value, NULL, fname);
  return a;
}

/***
Copies `src` into this device-accessible array.
@function Array:copy_to_device
@tparam Array|table src an array of the same shape and dtype, or a nested table
@tparam[opt] Stream stream queue the copy on it
@treturn Array the array itself
@raise `luacuda.copy_to_device: the target is a pinned array, not device memory: to copy a
device array into it, call the source's copy_to_host (d:copy_to_host(pinned))`;
`the source must be an array or a table, got <type>`; shape or dtype mismatch
@usage local d = luacuda.device_array({3}, "float32")
d:copy_to_device({1, 2, 3})
*/

/* a:copy_to_device(src [, stream]): src an array or a nested table */
static int array_copy_to_device(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "copy_to_device");
  lc_stream *s = lc_opt_stream(L, 3, "copy_to_device");
  if (!lc_kind_device_accessible(lc_array_kind(a)))
    lc_error(L, "copy_to_device", "the target is a %s array, not device memory: to copy a "
             "device array into it, call the source's copy_to_host (d:copy_to_host(%s))",
             lc_kind_names[lc_array_kind(a)], lc_kind_names[lc_array_kind(a)]);
  int t = lua_type(L, 2);
  if (t != LUA_TTABLE && lc_array_test(L, 2) == NULL)
    lc_error(L, "copy_to_device", "the source must be an array or a table, got %s",
             luaL_typename(L, 2));
  lc_assign(L, a, &a->lay, 2, s, "copy_to_device");
  lua_settop(L, 1);
  return 1;
}

static const luaL_Reg methods[] = {
  {"totable", array_totable},
  {"copy_to_device", array_copy_to_device},
  {NULL, NULL}
};

void lc_convert_open(lua_State *L) {
  lc_array_add_methods(L, methods);
}
