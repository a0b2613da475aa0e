/*
** index: a[i], a[{i, j}], a[{{first, last, step}, {}}] and their
** assignments. Lua's 1-based, inclusive, negative-from-the-end indices are
** turned into layout operations here. The metamethods keep an integer fast
** path for 1-D host-addressable arrays, the case loops hit.
*/
#include "array.h"
#include "pending.h"

#include <string.h>

#include "gate.h"
#include "args.h"
#include "record.h"
#include "stream.h"
#include "copy.h"
#include "convert.h"

/* Normalize a 1-based index that may count from the end (-1 is the last). */
static int64_t norm_index(int64_t i, int64_t n) { return i < 0 ? n + 1 + i : i; }

/* What follows an out-of-bounds message when the index is 0: a habit from
** 0-based languages, so say how luacuda counts. */
static const char *zero_hint(bool zero) {
  return zero ? ": luacuda counts from 1, on every axis (the first element is a[1], "
                "or a[{1, 1}] in 2-d)" : "";
}

/* walk_hint: the index is a[i] read with a number, where one past the end
** is how a Lua loop that looks for a nil (ipairs(a)) finds its end */
static void select_axis(lua_State *L, lc_layout *lay, int axis, int64_t i,
                        bool walk_hint, const char *fname) {
  int64_t n = lay->shape[axis];
  int64_t k = norm_index(i, n);
  char err[LC_ERRLEN];
  if (k > n && walk_hint)
    lc_error(L, fname, "index %lld out of bounds for axis %d of size %lld; to walk an array "
             "use a:ipairs(), pairs(a) or for i = 1, #a (ipairs(a) reads until a nil, "
             "which an array never gives)", (long long)i, axis + 1, (long long)n);
  if (k < 1 || k > n)
    lc_error(L, fname, "index %lld out of bounds for axis %d of size %lld%s",
             (long long)i, axis + 1, (long long)n, zero_hint(i == 0));
  if (lc_layout_select(lay, axis, k - 1, err)) lc_error(L, fname, "%s", err);
}

/* Every key of the table at idx must be a position 1..n: a named key
** ({row = 1}) would otherwise be ignored silently. */
static void check_positions(lua_State *L, int idx, lua_Integer n, const char *what,
                            const char *fname) {
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > n) {
      if (lua_type(L, -1) == LUA_TSTRING)
        lc_error(L, fname, "%s has a key '%s'; only positions 1..%lld are allowed",
                 what, lua_tostring(L, -1), (long long)n);
      lc_error(L, fname, "%s has a key that is not a position 1..%lld", what, (long long)n);
    }
  }
}

/* The range table at idx, {first, last, step} with each entry optional,
** applied to axis. Inclusive bounds; empty when last is before first
** (after first, for a negative step). */
static void slice_axis(lua_State *L, lc_layout *lay, int axis, int idx,
                       int pos, const char *fname) {
  int64_t n = lay->shape[axis], v[3];
  bool given[3];
  if (lua_rawlen(L, idx) > 3)
    lc_error(L, fname, "range in index entry %d has more than 3 entries {first, last, step}", pos);
  check_positions(L, idx, 3, "a range table", fname);
  for (int k = 0; k < 3; k++) {
    lua_rawgeti(L, idx, k + 1);
    given[k] = !lua_isnil(L, -1);
    if (given[k]) v[k] = lc_check_integer(L, -1, "range entry of index entry", pos, fname);
    lua_pop(L, 1);
  }
  int64_t step = given[2] ? v[2] : 1;
  if (step == 0) lc_error(L, fname, "range in index entry %d has step 0", pos);
  int64_t first = given[0] ? norm_index(v[0], n) : (step > 0 ? 1 : n);
  /* {i} alone is the one-element range {i, i} (Torch's convention: it
  ** keeps the axis); with no first either, the range runs to the end */
  int64_t last = given[1] ? norm_index(v[1], n)
               : given[0] ? first : (step > 0 ? n : 1);
  bool empty = step > 0 ? last < first : last > first;
  bool ok = empty ? (step > 0 ? first >= 1 && first <= n + 1 && last >= 0 && last <= n
                              : first >= 0 && first <= n && last >= 1 && last <= n + 1)
                  : first >= 1 && first <= n && last >= 1 && last <= n;
  bool zero = (given[0] && v[0] == 0) || (given[1] && v[1] == 0);
  if (!ok)
    lc_error(L, fname, "range {%lld, %lld} out of bounds for axis %d of size %lld%s",
             (long long)(given[0] ? v[0] : first), (long long)(given[1] ? v[1] : last),
             axis + 1, (long long)n, zero_hint(zero));
  int64_t count = empty ? 0 : (last - first) / step + 1;
  char err[LC_ERRLEN];
  if (lc_layout_slice(lay, axis, empty ? 0 : first - 1, count, step, err))
    lc_error(L, fname, "%s", err);
}

/* Resolve the key at kidx. Returns true when it names one element, whose
** byte offset is then lay->offset; otherwise lay is the view. */
static bool resolve(lua_State *L, const lc_array *a, int kidx, lc_layout *lay,
                    bool reading, const char *fname) {
  *lay = a->lay;
  int nd = a->lay.ndim;
  if (lua_type(L, kidx) == LUA_TNUMBER) {
    if (nd == 0) lc_error(L, fname, "a 0-d array is indexed with a[{}], not a number");
    select_axis(L, lay, 0, lc_check_integer(L, kidx, "index", 0, fname), reading, fname);
    return nd == 1;
  }
  if (lua_type(L, kidx) != LUA_TTABLE)
    lc_error(L, fname, "bad index type %s (a number or a table)", luaL_typename(L, kidx));
  int n = (int)lua_rawlen(L, kidx);
  check_positions(L, kidx, n, "the index table", fname);
  if (n > nd) lc_error(L, fname, "too many indices (%d) for a %d-d array", n, nd);
  int axis = 0, picked = 0;
  for (int k = 1; k <= n; k++) {
    int t = lua_rawgeti(L, kidx, k);
    if (t == LUA_TNUMBER) {
      select_axis(L, lay, axis, lc_check_integer(L, -1, "index entry", k, fname), false,
                  fname);
      picked++;
    } else if (t == LUA_TTABLE) {
      slice_axis(L, lay, axis, lua_gettop(L), k, fname);
      axis++;
    } else {
      lc_error(L, fname, "index entry %d is %s (a number, or a range table)",
               k, luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }
  return picked == nd;
}

static void store_element(lua_State *L, const lc_array *a, int64_t off, int vidx,
                          lc_stream *s, const char *fname) {
  char small[16];
  int top = lua_gettop(L);
  void *tmp = lc_elem_room(L, a->dtype, small, sizeof small);
  lc_elem_check(L, vidx, a->dtype, tmp, fname);
  if (s == NULL && lc_kind_host_only(lc_array_kind(a))) {
    lc_pending_wait(L, a, true, fname);
    memcpy((char *)a->buf->ptr + off, tmp, (size_t)a->dtype->size);
  } else {
    lc_elem_write(L, a, off, tmp, s, fname);
  }
  lua_settop(L, top);
}

/* a[key] for number and table keys; one element of a record array is a
** 0-d view of it */
static int getitem(lua_State *L, const lc_array *a, int kidx, lc_stream *s,
                   const char *fname) {
  if (lc_array_test(L, kidx)) {       /* index arrays and masks */
    lc_gather_getitem(L, a, kidx, s, fname);
    return 1;
  }
  lc_layout lay;
  if (resolve(L, a, kidx, &lay, true, fname) && a->dtype->rec == NULL)
    lc_elem_push_at(L, a, lay.offset, s, fname);
  else
    lc_array_push_view(L, a, &lay, a->dtype);
  return 1;
}

void lc_index_push_row(lua_State *L, const lc_array *a, int64_t i, const char *fname) {
  lua_pushinteger(L, (lua_Integer)i);
  getitem(L, a, lua_gettop(L), NULL, fname);
  lua_remove(L, -2);
}

static void setitem(lua_State *L, const lc_array *a, int kidx, int vidx,
                    lc_stream *s, const char *fname) {
  if (lc_array_test(L, kidx)) {       /* index arrays and masks */
    lc_gather_setitem(L, a, kidx, vidx, s, fname);
    return;
  }
  lc_layout lay;
  /* an array value goes through the copy rules even into one element
  ** (a size-1 array of the same dtype fits there) */
  if (resolve(L, a, kidx, &lay, false, fname) && lc_array_test(L, vidx) == NULL)
    store_element(L, a, lay.offset, vidx, s, fname);
  else
    lc_assign(L, a, &lay, vidx, s, fname);
}

/* 1-D host array and an in-range Lua integer key: the case loops hit,
** kept to the fewest API calls (mapped and managed memory, which kernels
** may be using, and memory that queued work uses take the general path and
** its wait) */
static inline char *fast_element(const lc_array *a, lua_State *L) {
  if (!lua_isinteger(L, 2) || !lc_array_is_open(a) || a->lay.ndim != 1 ||
      !lc_kind_host_only(a->buf->kind) || lc_pending_any(a->buf))
    return NULL;
  lua_Integer i = lua_tointeger(L, 2);
  int64_t n = a->lay.shape[0];
  if (i < 0) i += n + 1;
  if ((uint64_t)(i - 1) >= (uint64_t)n) return NULL;
  return (char *)a->buf->ptr + a->lay.offset + (i - 1) * a->lay.strides[0];
}

/* Store the value at index 3 into p for the common dtypes; 0 if the value
** needs the general conversion (or is invalid). */
static inline int store_fast(lua_State *L, const lc_dtype *dt, char *p) {
  switch (dt->code) {
    case LC_FLOAT64:
      if (lua_type(L, 3) != LUA_TNUMBER) return 0;
      { double v = lua_tonumber(L, 3); memcpy(p, &v, 8); }
      return 1;
    case LC_FLOAT32:
      if (lua_type(L, 3) != LUA_TNUMBER) return 0;
      { float v = (float)lua_tonumber(L, 3); memcpy(p, &v, 4); }
      return 1;
    case LC_INT64:
      if (!lua_isinteger(L, 3)) return 0;
      { int64_t v = lua_tointeger(L, 3); memcpy(p, &v, 8); }
      return 1;
    default:
      return 0;
  }
}

/* The array at 1 when it is one, cheaply: a userdata of an array's size
** that starts with its magic (loops index arrays); NULL leaves the question
** to lc_array_self. */
static inline lc_array *quick_self(lua_State *L) {
  lc_array *a = lua_touserdata(L, 1);
  return a && lua_rawlen(L, 1) == sizeof *a && a->magic == LC_ARRAY_MAGIC ? a : NULL;
}

/* __index, all of it, behind the gate (in array_index's frame) */
static int index_slow(lua_State *L) {
  lc_array *a = lc_array_self(L, "index");
  if (lua_type(L, 2) == LUA_TSTRING) {
    /* a record's field names come before the array's fields and methods */
    if (lc_record_index(L, a, lua_tostring(L, 2), "index")) return 1;
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL) return 1;
    if (!lc_array_is_open(a)) lc_error(L, "index", "attempt to use a closed array");
    if (lc_array_getfield(L, a, lua_tostring(L, 2))) return 1;
    lua_pushnil(L);
    return 1;
  }
  if (!lc_array_is_open(a)) lc_error(L, "index", "attempt to use a closed array");
  return getitem(L, a, 2, NULL, "index");
}

/*** @module luacuda */

/*** @type Array */

/***
`a[key]`: an element or a view, and `a.name`: a field, a method, or a
record array's field. The key: an integer `i` (the element of a 1-d array,
else the view of row `i` along the first axis); a table with one entry per
axis (as many as `ndim` or fewer), each an integer index or a slice
`{first, last [, step]}` (inclusive; `{}` is the whole axis); indices may
be negative (from the end). A table of all integers gives an element; any
slice gives a view sharing the memory. Reading an element of a device
array copies it to the host (and waits for the default stream).
@function Array:__index
@raise `luacuda.index: index 3 out of bounds for axis 1 of size 2`;
`luacuda.index: attempt to use a closed array`
@usage local a = luacuda.array({{1, 2, 3}, {4, 5, 6}})
print(a[{2, 3}])            -- 6
print(a[2])                 -- the row {4, 5, 6}, a view
print(a[{{}, {2, 3}}])      -- columns 2 and 3, a view
print(a[{{}, -1}])          -- the last column
*/

/* __index: first what loops and method calls hit, which runs no Lua code
** and allocates nothing, so it needs no gate: an element of a 1-D host
** array at an integer key, a method, size and ndim. Upvalues: the gate
** (gate.h), the method table. */
static int array_index(lua_State *L) {
  lc_array *a = quick_self(L);
  if (a) {
    char *p = fast_element(a, L);
    if (p && a->dtype->rec == NULL) {
      lc_elem_push_fast(L, a->dtype, p);
      return 1;
    }
    if (lua_type(L, 2) == LUA_TSTRING && a->dtype && a->dtype->rec == NULL) {
      lua_pushvalue(L, 2);
      if (lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL) return 1;
      lua_pop(L, 1);
      const char *k = lua_tostring(L, 2);
      if (a->buf && !a->closing && (strcmp(k, "size") == 0 || strcmp(k, "ndim") == 0))
        return lc_array_getfield(L, a, k);         /* integers: nothing allocated */
    }
  }
  return lc_gate_run(L, index_slow);
}

static int newindex_slow(lua_State *L) {
  lc_array *a = lc_array_self(L, "setitem");
  if (lua_type(L, 2) == LUA_TSTRING) {
    if (lc_record_newindex(L, a, lua_tostring(L, 2), 3, "setitem")) return 0;
    lc_error(L, "setitem", "cannot assign to field '%s' of an array", lua_tostring(L, 2));
  }
  setitem(L, lc_array_check(L, 1, "setitem"), 2, 3, NULL, "setitem");
  return 0;
}

/***
`a[key] = value`: assigns an element, or every element of a view (the key
as for reading). The value is a number or boolean (broadcast), a nested
table or an array of the view's shape (or one that broadcasts to it) and
dtype; a record array takes a table of fields.
@function Array:__newindex
@raise `luacuda.setitem: <cause>` for a key out of bounds, a value of the
wrong shape or dtype, or a value the dtype cannot hold;
`luacuda.setitem: cannot assign to field 'x' of an array`
@usage local a = luacuda.zeros({2, 3})
a[{1, 1}] = 10
a[2] = 7              -- the whole second row
a[{{}, 3}] = {1, 2}   -- the third column
*/

/* __newindex: an element of a 1-D host array at an integer key at once
** (no gate needed, as for __index); upvalue 1: the gate */
static int array_newindex(lua_State *L) {
  lc_array *a = quick_self(L);
  char *p = a ? fast_element(a, L) : NULL;
  if (p) {
    if (store_fast(L, a->dtype, p)) return 0;
    if (lua_type(L, 3) != LUA_TUSERDATA) {     /* arrays take the copy path */
      lc_elem_check(L, 3, a->dtype, p, "setitem");   /* writes only when valid */
      return 0;
    }
  }
  return lc_gate_run(L, newindex_slow);
}

/***
`a[key]` with a stream: on a device array, the copy of an element to the
host is queued on `stream`.
@function Array:getitem
@tparam integer|table key as for @{Array:__index}
@tparam[opt] Stream stream the stream for the copy
@return an element (a Lua value) or a view (an Array)
@raise as @{Array:__index}, with `luacuda.getitem:`
@usage local d = luacuda.to_device({5, 6, 7})
print(d:getitem(2, luacuda.stream()))  -- 6
*/

/* a:getitem(key [, stream]) */
static int array_getitem(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "getitem");
  lc_stream *s = lc_opt_stream(L, 3, "getitem");
  return getitem(L, a, 2, s, "getitem");
}

/***
`a[key] = value` with a stream: the copy or fill is queued on `stream`.
@function Array:setitem
@tparam integer|table key as for @{Array:__index}
@param value as for @{Array:__newindex}
@tparam[opt] Stream stream the stream for the write
@raise `luacuda.setitem: expected a key and a value`; as @{Array:__newindex}
@usage local d = luacuda.device_array({4}, "int32")
local s = luacuda.stream()
d:setitem({{}}, 0, s)
s:synchronize()
*/

/* a:setitem(key, value [, stream]) */
static int array_setitem(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "setitem");
  lc_stream *s = lc_opt_stream(L, 4, "setitem");
  if (lua_isnone(L, 3)) lc_error(L, "setitem", "expected a key and a value");
  setitem(L, a, 2, 3, s, "setitem");
  return 0;
}

/***
The one element of a size-1 array, as a Lua value (a record's as a table).
@function Array:item
@return the element
@raise `luacuda.item: <cause>` when the array has more or fewer than one element
@usage assert(luacuda.full({1}, 7):item() == 7)
*/

/* a:item(): the one element of a size-1 array */
static int array_item(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "item");
  if (a->lay.size != 1)
    lc_error(L, "item", "the array has %lld elements, item needs exactly 1",
             (long long)a->lay.size);
  if (a->dtype->rec) {          /* a record: the table of its fields */
    lc_array one = *a;
    char err[LC_ERRLEN];
    lc_layout_squeeze(&one.lay, -1, err);
    lc_to_table(L, &one, "item");
    return 1;
  }
  lc_elem_push_at(L, a, a->lay.offset, NULL, "item");
  return 1;
}

static const luaL_Reg methods[] = {
  {"getitem", array_getitem},
  {"setitem", array_setitem},
  {"item", array_item},
  {NULL, NULL}
};

void lc_index_open(lua_State *L) {
  lc_array_add_methods(L, methods);
  luaL_getmetatable(L, LC_ARRAY_MT);
  lc_gate_push(L);
  lua_getfield(L, LUA_REGISTRYINDEX, "luacuda.array.methods");
  lua_pushcclosure(L, array_index, 2);
  lua_setfield(L, -2, "__index");
  lc_gate_push(L);
  lua_pushcclosure(L, array_newindex, 1);
  lua_setfield(L, -2, "__newindex");
  lua_pop(L, 1);
}
