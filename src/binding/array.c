/*
** array: the Array userdata's life cycle (construction, release by __gc
** and __close, the closed state), its fields, and the argument readers the
** other files share.
*/
#include "array.h"

#include <stdio.h>
#include <string.h>

#include "gate.h"
#include "record.h"
#include "args.h"
#include "parts.h"

#define METHODS_KEY "luacuda.array.methods"

static const char metatable_key = 0;    /* the registry's key for the metatable */

/* like: the stack slot of an array (lc_array_test accepted it, so its
** metatable is the registry's) whose metatable the new one takes, which
** costs less than the registry's lookup; 0: the registry's. A metatable
** changed since (debug.setmetatable) is not the one the array was made
** with, and is not taken. */
static lc_array *push_closed(lua_State *L, const lc_dtype *dt, int like) {
  const lc_array *model = like ? lua_touserdata(L, like) : NULL;
  if (like) like = lua_absindex(L, like);
  lc_array *a = lua_newuserdatauv(L, sizeof *a, 0);    /* no user value: nothing uses one */
  a->magic = LC_ARRAY_MAGIC;
  a->closing = false;
  a->buf = NULL;
  a->dtype = NULL;
  a->lay.ndim = 0;
  a->lay.size = 1;
  a->lay.offset = 0;
  bool taken = model && lua_getmetatable(L, like);
  if (taken && lua_topointer(L, -1) != model->metatable) {
    lua_pop(L, 1);
    taken = false;
  }
  if (!taken) lua_rawgetp(L, LUA_REGISTRYINDEX, &metatable_key);
  a->metatable = lua_topointer(L, -1);
  lua_setmetatable(L, -2);
  lc_dtype_retain(dt);       /* a record lives as long as its arrays */
  a->dtype = dt;
  return a;
}

lc_array *lc_array_push_closed(lua_State *L, const lc_dtype *dt) {
  return push_closed(L, dt, 0);
}

/* made_by: the math function whose result it is (its memory's label), or
** NULL */
static lc_array *alloc(lua_State *L, int like, lc_kind kind, const lc_dtype *dt,
                       const lc_layout *lay, int64_t nbytes, lc_stream *s, const char *fname,
                       const char *made_by) {
  lc_array *a = push_closed(L, dt, like);
  lc_layout_copy(&a->lay, lay);
  a->buf = lc_buffer_new(L, kind, (size_t)nbytes, 0, s, fname);
  lc_array_note_origin(L, a, made_by);
  return a;
}

lc_array *lc_array_alloc(lua_State *L, lc_kind kind, const lc_dtype *dt,
                         const lc_layout *lay, int64_t nbytes, lc_stream *s, const char *fname) {
  return alloc(L, 0, kind, dt, lay, nbytes, s, fname, NULL);
}

lc_array *lc_array_empty_like(lua_State *L, int like, lc_kind kind, const lc_dtype *dt,
                              int ndim, const int64_t *shape, char order, lc_stream *s,
                              const char *fname) {
  lc_layout lay;
  char err[LC_ERRLEN];
  if (lc_layout_contiguous(&lay, ndim, shape, dt->size, order, err))
    lc_error(L, fname, "%s", err);
  return alloc(L, like, kind, dt, &lay, lay.size * dt->size, s, fname, fname);
}

lc_array *lc_array_empty(lua_State *L, lc_kind kind, const lc_dtype *dt, int ndim,
                         const int64_t *shape, char order, lc_stream *s, const char *fname) {
  return lc_array_empty_like(L, 0, kind, dt, ndim, shape, order, s, fname);
}

lc_array *lc_array_push_view(lua_State *L, const lc_array *base,
                             const lc_layout *lay, const lc_dtype *dt) {
  lc_array *v = lc_array_push_closed(L, dt);
  lc_layout_copy(&v->lay, lay);
  lc_buffer_retain(base->buf);
  v->buf = base->buf;
  return v;
}

/* Every operand of every call asks this, so no registry lookup: an
** array's size, magic and metatable (the one it was made with, which the
** registry holds under a key no Lua code can name) identify it. */
lc_array *lc_array_test(lua_State *L, int idx) {
  lc_array *a = lua_touserdata(L, idx);     /* a light userdata's length is 0 */
  if (a == NULL || lua_rawlen(L, idx) != sizeof(lc_array)) return NULL;
  if (a->magic != LC_ARRAY_MAGIC || !lua_getmetatable(L, idx)) return NULL;
  bool ours = lua_topointer(L, -1) == a->metatable;
  lua_pop(L, 1);
  return ours ? a : NULL;
}

lc_array *lc_array_check(lua_State *L, int idx, const char *fname) {
  lc_array *a = lc_array_test(L, idx);
  if (a == NULL)
    lc_error(L, fname, "expected an array, got %s", luaL_typename(L, idx));
  if (!lc_array_is_open(a)) lc_error(L, fname, "attempt to use a closed array");
  return a;
}

/* Let go of the buffer (a closed array keeps its dtype and layout). */
static void array_finish(lua_State *L, int idx) {
  lc_array *a = lua_touserdata(L, idx);
  lc_buffer *b = a->buf;
  a->buf = NULL;
  a->closing = false;
  if (b) lc_buffer_release(b);
}

static const lc_closer array_closer = {array_finish};

/* __close and close(): idempotent. While another call runs, which may hold
** the buffer, the array only reads as closed; the buffer goes after. */
static int array_release(lua_State *L) {
  lc_array *a = lc_array_test(L, 1);
  if (a && lc_array_is_open(a)) lc_close(L, 1, &array_closer, &a->closing);
  return 0;
}

/* __gc: a closed array still answers tostring and luacuda.type with its
** dtype; only the finalizer lets go of it. Nothing holds an array being
** finalized, so its buffer goes at once. It is not behind the gate (every
** array made pays for its finalizer): like a close put off (gate.h's
** lc_closer), it raises nothing, runs no Lua code and allocates no Lua
** memory, so no call of luacuda can run inside it. */
static int array_gc(lua_State *L) {
  lc_array *a = lc_array_test(L, 1);
  if (a == NULL) return 0;
  lc_buffer *b = a->buf;
  const lc_dtype *dt = a->dtype;
  a->buf = NULL;
  a->closing = false;
  a->dtype = NULL;
  if (b) lc_buffer_release(b);
  if (dt) lc_dtype_release(dt);
  return 0;
}

/*** @module luacuda */

/***
An N-d array of one dtype in one kind of memory, or a view of another
array's memory (indexing, `reshape`, `transpose` and the like give views;
writing through a view writes the original). Made by @{zeros},
@{device_array}, @{to_device} and the other constructors; passed to
kernels as `Array<T, N>` or a pointer. Indices count from 1; a negative
index counts from the end (-1 is the last). `a:close()` or a `<close>`
variable frees its memory at once; otherwise the garbage collector does.
@type Array
*/

/***
`#a`: the length of the first axis.
@function Array:__len
@treturn integer
@raise `luacuda.len: a 0-d array has no length`
@usage assert(#luacuda.zeros({5, 2}) == 5)
*/

static int array_len(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "len");
  if (a->lay.ndim == 0) lc_error(L, "len", "a 0-d array has no length");
  lua_pushinteger(L, a->lay.shape[0]);
  return 1;
}

/*** The sizes of the axes (a new table each time).
@field Array.shape
@usage assert(luacuda.zeros({2, 3}).shape[2] == 3)
*/

/*** Bytes from one element to the next along each axis (a new table each time).
@field Array.strides
@usage print(luacuda.zeros({2, 3}, "float32").strides[1])  -- 12
*/

/*** The number of elements.
@field Array.size
@usage assert(luacuda.zeros({2, 3}).size == 6)
*/

/*** The element type: its name, such as `"float32"`, or the @{Record} of a record dtype.
@field Array.dtype
@usage assert(luacuda.zeros({2}, "int8").dtype == "int8")
*/

/*** The number of axes.
@field Array.ndim
@usage assert(luacuda.zeros({2, 3}).ndim == 2)
*/

/*** `size * itemsize`.
@field Array.nbytes
@usage assert(luacuda.zeros({4}, "float32").nbytes == 16)
*/

/*** The bytes of one element.
@field Array.itemsize
@usage assert(luacuda.zeros({4}, "float16").itemsize == 2)
*/

/*** Where the memory is: `"host"`, `"pinned"`, `"mapped"`, `"managed"` or `"device"`.
@field Array.kind
@usage assert(luacuda.device_array({4}).kind == "device")
*/

/*** The device current when the array's memory was allocated (or wrapped),
counted from 1: for device memory, the device it is on, where kernels and
operations on it run (memory of the other kinds every device reaches).
@field Array.device
@usage assert(luacuda.device_array({4}).device == luacuda.current_device())
*/

/*** Whether the memory is page-locked (pinned or mapped, or registered with @{pinned}).
@field Array.pinned
@usage assert(luacuda.pinned_array({4}).pinned)
*/

/*** The transposed view (axes reversed), as `a:transpose()`.
@field Array.T
@usage assert(luacuda.zeros({2, 3}).T.shape[1] == 3)
*/

int lc_array_getfield(lua_State *L, const lc_array *a, const char *key) {
  switch (key[0]) {
    case 's':
      if (strcmp(key, "shape") == 0) { lc_push_int64s(L, a->lay.ndim, a->lay.shape); return 1; }
      if (strcmp(key, "strides") == 0) { lc_push_int64s(L, a->lay.ndim, a->lay.strides); return 1; }
      if (strcmp(key, "size") == 0) { lua_pushinteger(L, a->lay.size); return 1; }
      break;
    case 'd':
      if (strcmp(key, "dtype") == 0) { lc_dtype_push(L, a->dtype); return 1; }
      if (strcmp(key, "device") == 0) { lua_pushinteger(L, a->buf->device + 1); return 1; }
      break;
    case 'n':
      if (strcmp(key, "ndim") == 0) { lua_pushinteger(L, a->lay.ndim); return 1; }
      if (strcmp(key, "nbytes") == 0) { lua_pushinteger(L, a->lay.size * a->dtype->size); return 1; }
      break;
    case 'i':
      if (strcmp(key, "itemsize") == 0) { lua_pushinteger(L, a->dtype->size); return 1; }
      break;
    case 'k':
      if (strcmp(key, "kind") == 0) { lua_pushstring(L, lc_kind_names[a->buf->kind]); return 1; }
      break;
    case 'p':     /* page-locked: allocated so, or a host array registered */
      if (strcmp(key, "pinned") == 0) {
        lc_kind k = a->buf->kind;
        lua_pushboolean(L, k == LC_PINNED || k == LC_MAPPED || atomic_load(&a->buf->lock) != 0);
        return 1;
      }
      break;
    case 'T':
      if (key[1] == '\0') {
        lc_layout t = a->lay;
        char err[LC_ERRLEN];
        lc_layout_transpose(&t, NULL, err);     /* reversing cannot fail */
        lc_array_push_view(L, a, &t, a->dtype);
        return 1;
      }
      break;
  }
  return 0;
}

void lc_array_add_methods(lua_State *L, const luaL_Reg *fns) {
  lua_getfield(L, LUA_REGISTRYINDEX, METHODS_KEY);
  lc_setfuncs(L, fns);
  lua_pop(L, 1);
}

lc_array *lc_array_self(lua_State *L, const char *fname) {
  lc_array *a = lc_array_test(L, 1);
  if (a == NULL) lc_error(L, fname, "expected an array, got %s", lc_typename(L, 1));
  return a;
}

/***
`tostring(a)`: the kind, dtype and shape, then the values as NumPy
prints them, in a Lua table constructor's braces (a device array's are
copied to the host for it): every element at the width of the widest,
rows wrapped at 75 columns, the middle of each axis left out (`...`) past
1000 elements, floats by NumPy's rules (spelt as Lua reads them: `1.0`,
`0/0`, `1/0`); an empty array's values are `{}`, whatever its shape.
@{set_printoptions} changes these.
@function Array:__tostring
@treturn string
@raise `luacuda.tostring: expected an array, got <type>`
@usage print(luacuda.arange(3))
*/

/* __tostring: format.lua's */
static int array_tostring(lua_State *L) {
  lc_array_self(L, "tostring");
  lc_push_lua_part(L, "luacuda.format", "array");
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  return 1;
}

static const luaL_Reg meta[] = {
  {"__tostring", array_tostring},
  {"__close", array_release},
  {"__len", array_len},
  {NULL, NULL}
};

/***
Frees the array's memory now (views of it keep it alive until they go);
further use of `a` is an error. Idempotent.
@function Array:close
@raise `luacuda.close: expected an array, got <type>`
@usage local d = luacuda.device_array({1 << 20})
d:close()
assert(luacuda.type(d) == "closed array")
*/

/***
`local a <close> = ...`: closes the array when the variable goes out of scope.
@function Array:__close
@raise `luacuda.close: expected an array, got <type>`
@usage do
  local tmp <close> = luacuda.device_array({1024})
end  -- freed here
*/

static int array_close(lua_State *L) {
  lc_array_check(L, 1, "close");
  return array_release(L);
}

/*** @section end */

/***
An array's own field or method (`shape`, `dtype`, `sum`, ...), which a
record field of the same name hides from `a.name`.
@function attr
@tparam Array a the array
@tparam string name the field or method
@return its value, or nil when there is none
@raise `luacuda.attr: name must be a string, got <type>`; `a` not an open array
@usage local P = luacuda.record({{"shape", "int32"}})
local a = luacuda.zeros({3}, P)
print(luacuda.attr(a, "shape")[1])  -- 3
*/

/* luacuda.attr(a, name): the array's own field or method, which a record
** field of the same name hides from a.name */
static int l_attr(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "attr");
  if (lua_type(L, 2) != LUA_TSTRING)
    lc_error(L, "attr", "name must be a string, got %s", luaL_typename(L, 2));
  const char *key = lua_tostring(L, 2);
  lua_getfield(L, LUA_REGISTRYINDEX, METHODS_KEY);
  if (lua_getfield(L, -1, key) != LUA_TNIL) return 1;
  if (!lc_array_getfield(L, a, key)) lua_pushnil(L);
  return 1;
}

static const luaL_Reg methods[] = {
  {"close", array_close},
  {NULL, NULL}
};

void lc_array_open(lua_State *L) {
  lc_new_type(L, LC_ARRAY_MT, meta, NULL);    /* index.c adds __index, __newindex */
  luaL_getmetatable(L, LC_ARRAY_MT);
  lua_pushcfunction(L, array_gc);             /* not gated: see array_gc */
  lua_setfield(L, -2, "__gc");
  lua_rawsetp(L, LUA_REGISTRYINDEX, &metatable_key);
  lua_newtable(L);
  lc_setfuncs(L, methods);
  lua_setfield(L, LUA_REGISTRYINDEX, METHODS_KEY);
  static const luaL_Reg fns[] = {{"attr", l_attr}, {NULL, NULL}};
  lc_setfuncs(L, fns);
}
