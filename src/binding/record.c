/*
** record: record dtypes. A record is a C structure (lc_record) counted by
** everything that uses it; its Lua face is a "luacuda.record" userdata
** holding one reference. A weak table maps each record to its live Lua
** object, so that a.dtype gives back the very object the array was made
** with while that object lives (and an equal one after).
**
** The record itself, its layout and equality are base/dtype.c's. A
** record's values (tables of fields) are converted with every other
** element's, in element.c.
*/
#include "record.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "gate.h"
#include "args.h"

#define CACHE_KEY "luacuda.records"     /* weak: record pointer -> object */
#define MAXFIELDS 4096
#define MAXNAME 63

/* ---- the Lua object ------------------------------------------------------ */

const lc_record *lc_record_test(lua_State *L, int idx) {
  lc_record **box = luaL_testudata(L, idx, LC_RECORD_MT);
  return box ? *box : NULL;
}

static const lc_record *check_record(lua_State *L, int idx, const char *fname) {
  const lc_record *r = lc_record_test(L, idx);
  if (r == NULL) lc_error(L, fname, "expected a record, got %s", luaL_typename(L, idx));
  return r;
}

/* Push a new object for r, which already holds the reference it takes. */
static void push_box(lua_State *L, lc_record *r, lc_record **box) {
  *box = r;
  lua_getfield(L, LUA_REGISTRYINDEX, CACHE_KEY);
  lua_pushlightuserdata(L, r);
  lua_pushvalue(L, -3);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

void lc_record_push_object(lua_State *L, const lc_record *r) {
  lua_getfield(L, LUA_REGISTRYINDEX, CACHE_KEY);
  if (lua_rawgetp(L, -1, r) != LUA_TNIL) {
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 2);
  lc_record **box = lua_newuserdatauv(L, sizeof *box, 0);
  *box = NULL;                       /* closed until it holds its reference */
  luaL_setmetatable(L, LC_RECORD_MT);
  lc_dtype_retain(&r->dt);
  push_box(L, (lc_record *)r, box);
}

static int record_gc(lua_State *L) {
  lc_record **box = luaL_testudata(L, 1, LC_RECORD_MT);
  if (box && *box) {
    lc_record *r = *box;
    *box = NULL;
    lc_dtype_release(&r->dt);
  }
  return 0;
}

static int record_eq(lua_State *L) {
  const lc_record *a = lc_record_test(L, 1), *b = lc_record_test(L, 2);
  lua_pushboolean(L, a && b && lc_dtype_equal(&a->dt, &b->dt));
  return 1;
}

static int record_tostring(lua_State *L) {
  const lc_record *r = lc_record_test(L, 1);
  if (r == NULL) lua_pushliteral(L, "luacuda.record (freed)");
  else lua_pushfstring(L, "luacuda.%s (size %I, align %I)", r->dt.name,
                       (lua_Integer)r->dt.size, (lua_Integer)r->dt.align);
  return 1;
}

/* rec.fields: {{name=, dtype=, offset=, shape=, count=}, ...} in order */
static void push_fields(lua_State *L, const lc_record *r) {
  lua_createtable(L, r->nfields, 0);
  for (int i = 0; i < r->nfields; i++) {
    const lc_field *f = &r->fields[i];
    lua_createtable(L, 0, 6);
    lua_pushstring(L, f->name);
    lua_setfield(L, -2, "name");
    if (f->dtype->rec) lc_record_push_object(L, f->dtype->rec);
    else lua_pushstring(L, f->dtype->name);
    lua_setfield(L, -2, "dtype");
    lua_pushinteger(L, f->offset);
    lua_setfield(L, -2, "offset");
    lc_push_int64s(L, f->ndim, f->shape);
    lua_setfield(L, -2, "shape");
    lua_pushinteger(L, f->count);
    lua_setfield(L, -2, "count");
    lua_pushinteger(L, f->dtype->size);
    lua_setfield(L, -2, "itemsize");
    lua_rawseti(L, -2, i + 1);
  }
}

/*** @module luacuda */

/***
A record dtype (a C struct), from @{record}: used wherever a dtype is,
it makes arrays whose elements are structs. On a record array, `a.x` is
the view of field `x` of every element (an array), `a[i]` an element as
a table of fields, and `a[i] = {x = ..., ...}` writes one.
@type Record
*/

/*** The size of one element in bytes, padding included (also `itemsize`).
@field Record.size
@usage assert(luacuda.record({{"x", "float32"}, {"n", "int32"}}).size == 8)
*/

/*** The same as `size`.
@field Record.itemsize
@usage assert(luacuda.record({{"x", "float64"}}).itemsize == 8)
*/

/*** The alignment in bytes (1 when packed).
@field Record.align
@usage assert(luacuda.record({{"x", "float64"}}).align == 8)
*/

/*** Whether the record was made with `{align = false}` (no padding).
@field Record.packed
@usage assert(luacuda.record({{"c", "int8"}, {"d", "float64"}}, {align = false}).packed)
*/

/*** The dtype's name, `record{x: float32, ...}`.
@field Record.name
@usage print(luacuda.record({{"x", "float32"}}).name)
*/

/*** The fields, in order: a sequence of `{name =, dtype =, offset =, shape =,
count =, itemsize =}` (a new table each time).
@field Record.fields
@usage for _, f in ipairs(luacuda.record({{"x", "float32"}, {"v", "int32", {3}}}).fields) do
  print(f.name, f.dtype, f.offset)
end
*/

/*** The field names, in order (a new table each time).
@field Record.names
@usage assert(luacuda.record({{"x", "float32"}}).names[1] == "x")
*/

/* __index: the record's fields, then its methods (upvalue 1) */
static int record_index(lua_State *L) {
  const lc_record *r = check_record(L, 1, "record");
  const char *key = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "";
  if (strcmp(key, "size") == 0 || strcmp(key, "itemsize") == 0)
    lua_pushinteger(L, r->dt.size);
  else if (strcmp(key, "align") == 0) lua_pushinteger(L, r->dt.align);
  else if (strcmp(key, "packed") == 0) lua_pushboolean(L, r->packed);
  else if (strcmp(key, "name") == 0) lua_pushstring(L, r->dt.name);
  else if (strcmp(key, "fields") == 0) push_fields(L, r);
  else if (strcmp(key, "names") == 0) {
    lua_createtable(L, r->nfields, 0);
    for (int i = 0; i < r->nfields; i++) {
      lua_pushstring(L, r->fields[i].name);
      lua_rawseti(L, -2, i + 1);
    }
  } else {
    lua_pushvalue(L, 2);
    lua_rawget(L, lc_upvalueindex(1));
  }
  return 1;
}

/***
The offset of a field in bytes.
@function Record:offsetof
@tparam string name the field
@treturn integer
@raise `luacuda.offsetof: the record has no field 'z'`; `field name must be a string, got <type>`
@usage local P = luacuda.record({{"x", "float32"}, {"v", "float64", {3}}})
assert(P:offsetof("v") == 8)
*/

/*** @section end */

/* rec:offsetof(name) */
static int record_offsetof(lua_State *L) {
  const lc_record *r = check_record(L, 1, "offsetof");
  if (lua_type(L, 2) != LUA_TSTRING)
    lc_error(L, "offsetof", "field name must be a string, got %s", luaL_typename(L, 2));
  const char *name = lua_tostring(L, 2);
  const lc_field *f = lc_record_field(r, name);
  if (f == NULL) lc_error(L, "offsetof", "the record has no field '%s'", name);
  lua_pushinteger(L, f->offset);
  return 1;
}

/* ---- luacuda.record(fields [, {align = false}]) ------------------------- */

static bool is_identifier(const char *s) {
  static const char *const reserved[] = {
    "alignas", "alignof", "auto", "bool", "break", "case", "catch", "char", "class", "const",
    "constexpr", "continue", "decltype", "default", "delete", "do", "double", "else", "enum",
    "explicit", "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int",
    "long", "mutable", "namespace", "new", "noexcept", "nullptr", "operator", "private",
    "protected", "public", "register", "restrict", "return", "short", "signed", "sizeof",
    "static", "static_assert", "struct", "switch", "template", "this", "thread_local",
    "throw", "true", "try", "typedef", "typename", "union", "unsigned", "using", "virtual",
    "void", "volatile", "while", NULL,
  };
  size_t n = strlen(s);
  if (n == 0 || n > MAXNAME || (s[0] >= '0' && s[0] <= '9') || strncmp(s, "__", 2) == 0)
    return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
      return false;
  }
  for (int i = 0; reserved[i]; i++)
    if (strcmp(s, reserved[i]) == 0) return false;
  return true;
}

/* Read field i (the table on top) into f; names point into Lua strings
** that the fields table keeps alive. */
static void read_field(lua_State *L, int i, lc_field *f, const lc_field *before,
                       const char *fn) {
  int t = lua_gettop(L);
  if (lua_type(L, t) != LUA_TTABLE)
    lc_error(L, fn, "field %d must be a table {name, dtype [, shape]}, got %s", i,
             luaL_typename(L, t));
  size_t len = lua_rawlen(L, t);
  if (len < 2 || len > 3)
    lc_error(L, fn, "field %d must be a sequence {name, dtype [, shape]}, got %zu entries",
             i, len);
  if (lua_rawgeti(L, t, 1) != LUA_TSTRING)
    lc_error(L, fn, "field %d: the name must be a string, got %s", i, luaL_typename(L, -1));
  const char *name = lua_tostring(L, -1);
  if (!is_identifier(name))
    lc_error(L, fn, "field %d: '%s' is not a usable field name (a C identifier of at most "
             "%d characters, not a keyword, not starting with __)", i, name, MAXNAME);
  for (int k = 0; k < i - 1; k++)
    if (strcmp(before[k].name, name) == 0) lc_error(L, fn, "duplicate field name '%s'", name);
  f->name = (char *)name;
  int dt_type = lua_rawgeti(L, t, 2);
  if (dt_type == LUA_TSTRING) {
    f->dtype = lc_dtype_lookup(lua_tostring(L, -1));
    if (f->dtype == NULL)
      lc_error(L, fn, "field '%s': unknown dtype '%s'", name, lua_tostring(L, -1));
  } else {
    const lc_record *inner = lc_record_test(L, -1);
    if (inner == NULL)
      lc_error(L, fn, "field '%s': the dtype must be a dtype name or a record, got %s",
               name, luaL_typename(L, -1));
    if (inner->depth >= LC_RECORD_MAXDEPTH)
      lc_error(L, fn, "field '%s': records nest at most %d deep", name, LC_RECORD_MAXDEPTH);
    f->dtype = &inner->dt;
  }
  f->ndim = 0;
  f->count = 1;
  if (lua_rawgeti(L, t, 3) != LUA_TNIL) {
    char what[96];
    snprintf(what, sizeof what, "field '%s': shape", name);
    f->ndim = lc_check_dims(L, -1, false, false, f->shape, what, fn);
    if (f->ndim == 0) lc_error(L, fn, "field '%s': the shape is empty", name);
    for (int k = 0; k < f->ndim; k++) {
      if (f->shape[k] < 1)
        lc_error(L, fn, "field '%s': shape entry %d must be at least 1, got %lld", name,
                 k + 1, (long long)f->shape[k]);
      if (f->shape[k] > (INT64_C(1) << 32) / f->count)
        lc_error(L, fn, "field '%s': the sub-array is too large", name);
      f->count *= f->shape[k];
    }
  }
  lua_settop(L, t);
}

/***
A record dtype: a C struct of named fields, each of a dtype (a record
too) and optionally a shape (a fixed-size array member). Laid out as the
C compiler lays out the struct (each field aligned), or packed.
@function record
@tparam table fields a sequence `{{name, dtype [, shape]}, ...}`, names C identifiers
@tparam[opt] table opts `{align = true}`: `false` packs the fields without padding
@treturn Record
@raise `luacuda.record: expected a table of fields {{name, dtype [, shape]}, ...}, got <type>`;
`a record needs at least one field`; a field name that is not a C identifier, or twice;
`option align must be a boolean, got <type>`
@usage local Particle = luacuda.record({{"x", "float32"}, {"id", "int32"}, {"v", "float64", {3}}})
local a = luacuda.zeros({100}, Particle)
a[1] = {x = 1, id = 7, v = {1, 2, 3}}
print(a.x)   -- the field x of every element: a float32 array
*/

static int l_record(lua_State *L) {
  const char *fn = "record";
  static const char *const known[] = {"align", NULL};
  bool packed = false;
  if (lc_check_opts(L, 2, known, fn)) {
    int t = lc_opt_get(L, 2, "align");
    if (t != LUA_TNIL && t != LUA_TBOOLEAN)
      lc_error(L, fn, "option align must be a boolean, got %s", luaL_typename(L, -1));
    packed = t == LUA_TBOOLEAN && !lua_toboolean(L, -1);
  }
  lua_settop(L, 2);
  if (lua_type(L, 1) != LUA_TTABLE)
    lc_error(L, fn, "expected a table of fields {{name, dtype [, shape]}, ...}, got %s",
             luaL_typename(L, 1));
  lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    lua_pop(L, 1);
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > n)
      lc_error(L, fn, "the fields must be a sequence {{name, dtype [, shape]}, ...}, "
               "got a key %s", lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
               : luaL_typename(L, -1));
  }
  if (n == 0) lc_error(L, fn, "a record needs at least one field");
  if (n > MAXFIELDS) lc_error(L, fn, "more than %d fields", MAXFIELDS);
  lc_field *tmp = lua_newuserdatauv(L, (size_t)n * sizeof *tmp, 0);   /* 3 */
  int64_t end = 0, align = 1;
  char err[LC_ERRLEN];
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, 1, i + 1);
    read_field(L, i + 1, &tmp[i], tmp, fn);
    lua_pop(L, 1);
    if (lc_record_place(&tmp[i], packed, &end, &align, err)) lc_error(L, fn, "%s", err);
  }
  lc_record **box = lua_newuserdatauv(L, sizeof *box, 0);          /* 4 */
  *box = NULL;
  luaL_setmetatable(L, LC_RECORD_MT);
  /* from here to push_box nothing raises, except an out-of-memory that
  ** frees what it took */
  lc_record *r = lc_record_new(tmp, (int)n, packed, end, align, err);
  if (r == NULL) lc_error(L, fn, "%s", err);
  push_box(L, r, box);
  return 1;
}

/* ---- values: Lua tables <-> records -------------------------------------- */

bool lc_record_is_value(lua_State *L, int idx) {
  bool value = lua_rawgeti(L, idx, 1) == LUA_TNIL;
  lua_pop(L, 1);
  return value;
}

void *lc_elem_room(lua_State *L, const lc_dtype *dt, void *buf, size_t n) {
  void *p = buf;
  if ((size_t)dt->size > n) p = lua_newuserdatauv(L, (size_t)dt->size, 0);
  memset(p, 0, (size_t)dt->size);      /* a record's padding bytes stay zero */
  return p;
}

/* ---- the module ----------------------------------------------------------- */

static const luaL_Reg meta[] = {
  {"__gc", record_gc},
  {"__eq", record_eq},
  {"__tostring", record_tostring},
  {NULL, NULL}
};

/*** @type Record */

/***
The C declaration of the struct, with a `static_assert` of its size and
alignment, to paste into (or concatenate with) kernel source.
@function Record:c_declaration
@tparam[opt] string name the struct's name
@treturn string
@raise `luacuda.c_declaration: <cause>`: a name that is not a C identifier
@usage local P = luacuda.record({{"x", "float32"}, {"id", "int32"}})
print(P:c_declaration("Particle"))
*/

/*** @section end */

/* rec:c_declaration([name]): record.lua's */
static int record_c_declaration(lua_State *L) {
  check_record(L, 1, "c_declaration");
  lc_push_lua_part(L, "luacuda.record", "c_declaration");
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

static const luaL_Reg methods[] = {
  {"offsetof", record_offsetof},
  {"c_declaration", record_c_declaration},
  {NULL, NULL}
};

void lc_record_open(lua_State *L) {
  lua_newtable(L);                               /* the weak cache */
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "v");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, CACHE_KEY);
  lc_new_type(L, LC_RECORD_MT, meta, NULL);
  luaL_getmetatable(L, LC_RECORD_MT);
  lua_newtable(L);
  lc_setfuncs(L, methods);
  static const luaL_Reg index = {"__index", record_index};
  lc_pushfunction(L, &index, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  static const luaL_Reg fns[] = {{"record", l_record}, {NULL, NULL}};
  lc_setfuncs(L, fns);
}
