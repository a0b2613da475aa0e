/*
** launch: reading a launch configuration and packing kernel arguments,
** checked against the kernel's parameter list. Shared by the backends, so
** a script that runs on the simulator fails the same way on a GPU.
*/
#include "kernel.h"
#include "pending.h"

#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "abi.h"        /* the launch limits, Array<T, N>'s layout */
#include "args.h"
#include "element.h"
#include "probe.h"
#include "record.h"
#include "stream.h"
#include "copy.h"

/* a layout's int64_t shape and strides fill the ABI's long long fields */
_Static_assert(sizeof(int64_t) == sizeof(long long), "int64_t and long long differ in size");

/* A size computed with / is a float (n / 256 is 3.5, or 4.0, which is
** taken): Lua's integer division is // */
#define SLASH_HINT " (use // for integer division: (n + 255) // 256)"

/* A grid or block size: a number or {x [, y [, z]]}, each a positive
** integer within max[]. */
static void check_dims(lua_State *L, int idx, unsigned out[3], const char *what,
                       const unsigned long long max[3], const lc_kernel_ref *k,
                       const char *fname) {
  static const char axis[] = "xyz";
  lua_Integer v[3] = {1, 1, 1};
  int t = lua_type(L, idx);
  if (t == LUA_TNUMBER) {
    int ok;
    v[0] = lua_tointegerx(L, idx, &ok);
    if (!ok) lc_error(L, fname, "kernel '%s': %s must be an integer, got %.17g%s",
                      k->sig->name, what, lua_tonumber(L, idx), SLASH_HINT);
  } else if (t == LUA_TTABLE) {
    size_t n = lua_rawlen(L, idx);
    if (n < 1 || n > 3)
      lc_error(L, fname, "kernel '%s': %s must have 1 to 3 entries, got %zu", k->sig->name,
               what, n);
    for (size_t i = 0; i < n; i++) {
      int ok;
      lua_rawgeti(L, idx, (lua_Integer)i + 1);
      v[i] = lua_tointegerx(L, -1, &ok);
      if (!ok && lua_type(L, -1) == LUA_TNUMBER)
        lc_error(L, fname, "kernel '%s': %s %c must be an integer, got %.17g%s", k->sig->name,
                 what, axis[i], lua_tonumber(L, -1), SLASH_HINT);
      if (!ok || lua_type(L, -1) != LUA_TNUMBER)
        lc_error(L, fname, "kernel '%s': %s %c must be an integer, got %s", k->sig->name,
                 what, axis[i], luaL_typename(L, -1));
      lua_pop(L, 1);
    }
  } else {
    lc_error(L, fname, "kernel '%s': %s must be a number or {x, y, z}, got %s",
             k->sig->name, what, luaL_typename(L, idx));
  }
  for (int i = 0; i < 3; i++) {
    if (v[i] < 1 || (unsigned long long)v[i] > max[i])
      lc_error(L, fname, "kernel '%s': %s %c is %lld (1 to %llu)", k->sig->name, what,
               axis[i], (long long)v[i], max[i]);
    out[i] = (unsigned)v[i];
  }
}

/* Read the launch configuration at idx: Numba's {grid, block [, stream
** [, shared]]} or {grid=, block=, stream=, shared=, cooperative=}. Pushes
** the stream object (or nil), which the launch keeps on its stack while it
** uses it. */
static void launch_config(lua_State *L, int idx, lc_launch *cfg, const lc_kernel_ref *k,
                          const char *fname) {
  static const unsigned long long grid_max[3] = {LC_MAX_GRID_X, LC_MAX_GRID_Y, LC_MAX_GRID_Z};
  static const unsigned long long block_max[3] = {LC_MAX_BLOCK_X, LC_MAX_BLOCK_Y, LC_MAX_BLOCK_Z};
  if (lua_type(L, idx) != LUA_TTABLE)
    lc_error(L, fname, "kernel '%s': the launch configuration must be a table, got %s",
             k->sig->name, luaL_typename(L, idx));
  int top = lua_gettop(L);
  bool positional = lua_rawgeti(L, idx, 1) != LUA_TNIL;   /* Numba's {grid, block, ...} */
  lua_pop(L, 1);
  if (positional) {
    for (int i = 1; i <= 4; i++) lua_rawgeti(L, idx, i);
  } else {
    static const char *const keys[] = {"grid", "block", "stream", "shared", "cooperative", NULL};
    lc_check_opts(L, idx, keys, fname);
    for (int i = 0; i < 5; i++) lc_opt_get(L, idx, keys[i]);
  }
  cfg->cooperative = false;
  if (!positional && !lua_isnil(L, top + 5)) {
    if (lua_type(L, top + 5) != LUA_TBOOLEAN)
      lc_error(L, fname, "kernel '%s': cooperative must be a boolean, got %s", k->sig->name,
               luaL_typename(L, top + 5));
    cfg->cooperative = lua_toboolean(L, top + 5);
  }
  if (lua_isnil(L, top + 1) || lua_isnil(L, top + 2))
    lc_error(L, fname, "kernel '%s': the launch configuration needs a grid and a block",
             k->sig->name);
  check_dims(L, top + 1, cfg->grid, "grid", grid_max, k, fname);
  check_dims(L, top + 2, cfg->block, "block", block_max, k, fname);
  unsigned long long threads = (unsigned long long)cfg->block[0] * cfg->block[1] * cfg->block[2];
  if (threads > LC_MAX_BLOCK_THREADS)
    lc_error(L, fname, "kernel '%s': a block of %llu threads is more than %u",
             k->sig->name, threads, LC_MAX_BLOCK_THREADS);
  cfg->stream = lc_opt_stream(L, top + 3, fname);
  cfg->shared_bytes = 0;
  if (!lua_isnil(L, top + 4)) {
    int ok;
    lua_Integer sh = lua_tointegerx(L, top + 4, &ok);
    if (!ok || lua_type(L, top + 4) != LUA_TNUMBER || sh < 0)
      lc_error(L, fname, "kernel '%s': shared memory must be a non-negative integer of bytes",
               k->sig->name);
    /* the device's own limit is the backend's check */
    if ((unsigned long long)sh > LC_MAX_SHARED)
      lc_error(L, fname, "kernel '%s': %lld bytes of dynamic shared memory is more than %u "
               "(227 KiB, what an H100 gives a block; no device gives more)",
               k->sig->name, (long long)sh, LC_MAX_SHARED);
    cfg->shared_bytes = (unsigned)sh;
  }
  lua_pushvalue(L, top + 3);              /* the stream, kept */
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
}

/* Raise "<fname>: kernel 'k' argument i 'name' (type): <cause>". The
** argument is described only here, off the launch path. */
LC_NORETURN LC_PRINTF(5, 6)
static void arg_error(lua_State *L, const char *fname, const lc_kernel_sig *sig, int i,
                      const char *fmt, ...) {
  const lc_param *p = &sig->params[i];
  char cause[LC_ERRLEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cause, sizeof cause, fmt, ap);
  va_end(ap);
  lc_error(L, fname, "kernel '%s' argument %d%s%s%s (%s): %s", sig->name, i + 1,
           p->name[0] ? " '" : "", p->name, p->name[0] ? "'" : "", p->spelling, cause);
}

/* The kernel as declared, "saxpy(int n, float a, const float *x)", for
** the messages of a launch's argument count. */
static const char *signature_text(const lc_kernel_sig *sig, char *buf, size_t len) {
  size_t at = (size_t)snprintf(buf, len, "%s(", sig->name);
  for (int i = 0; i < sig->nparams && at < len; i++) {
    const lc_param *p = &sig->params[i];
    bool star = p->spelling[0] && p->spelling[strlen(p->spelling) - 1] == '*';
    at += (size_t)snprintf(buf + at, len - at, "%s%s%s%s%s%s", i ? ", " : "", p->spelling,
                           p->name[0] && !star ? " " : "", p->name,
                           p->has_default ? " = " : "", p->has_default ? p->default_text : "");
  }
  if (at < len) snprintf(buf + at, len - at, ")");
  return buf;
}

/* Check that nargs is k's parameter count, then push, for each of the
** arguments from stack index first, the value the kernel is given: the
** argument itself, or the array a stand-in's __kernel_arg metamethod gives
** (SmartArray). Every metamethod a launch runs runs here, before anything
** is packed. */
static void resolve_args(lua_State *L, int first, int nargs, const lc_kernel_ref *k,
                         const char *fname) {
  const lc_kernel_sig *sig = k->sig;
  int least = sig->nparams;           /* the trailing parameters with defaults may be left out */
  while (least > 0 && sig->params[least - 1].has_default) least--;
  char text[LC_ERRLEN / 2];
  if (least < sig->nparams && (nargs < least || nargs > sig->nparams))
    lc_error(L, fname, "kernel '%s' takes %d to %d arguments, got %d: %s", sig->name, least,
             sig->nparams, nargs, signature_text(sig, text, sizeof text));
  if (nargs != sig->nparams && least == sig->nparams)
    lc_error(L, fname, "kernel '%s' takes %d argument%s, got %d: %s", sig->name, sig->nparams,
             sig->nparams == 1 ? "" : "s", nargs, signature_text(sig, text, sizeof text));
  for (int i = nargs; i < sig->nparams; i++)
    if (!sig->params[i].default_known)
      arg_error(L, fname, sig, i, "its default argument '%s' is not a literal luacuda can "
                "pass; give the argument", sig->params[i].default_text);
  luaL_checkstack(L, sig->nparams + 2, "too many arguments");
  for (int i = 0; i < nargs; i++) {
    int idx = first + i;
    if (lua_type(L, idx) == LUA_TTABLE && luaL_getmetafield(L, idx, "__kernel_arg") != LUA_TNIL) {
      lua_pushvalue(L, idx);
      lua_call(L, 1, 1);
      if (lc_array_test(L, -1) == NULL)
        arg_error(L, fname, sig, i, "its __kernel_arg gave %s, not an array",
                  luaL_typename(L, -1));
    } else {
      lua_pushvalue(L, idx);
    }
  }
  for (int i = nargs; i < sig->nparams; i++) {     /* the defaults */
    const lc_param *p = &sig->params[i];
    if (p->default_null) lua_pushlightuserdata(L, NULL);
    else if (p->type == LC_BOOL) lua_pushboolean(L, p->default_float ? p->default_num != 0
                                                                       : p->default_int != 0);
    else if (p->default_float) lua_pushnumber(L, p->default_num);
    else lua_pushinteger(L, (lua_Integer)p->default_int);
  }
}

/* luacuda.null, for a pointer parameter */
static bool is_null(lua_State *L, int idx) {
  return lua_type(L, idx) == LUA_TLIGHTUSERDATA && lua_touserdata(L, idx) == NULL;
}

/* ---- structs by value ------------------------------------------------------ */

/* The elements of a vector type (n of dt) from {x=, y=, ...} or {1, 2, ...}
** at idx into dst; every element is checked before any is written.
** Returns 0, or -1 with the cause in err. */
static int vector_value(lua_State *L, int idx, const lc_dtype *dt, int n, char *dst,
                        char *err) {
  static const char *const names[] = {"x", "y", "z", "w"};
  char tmp[64], why[LC_ERRLEN];
  int top = lua_gettop(L);
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE) {
    return lc_fail(err, -1, "expected a table {x=, y=, ...} or {1, 2, ...} of %d numbers, "
                   "got %s", n, luaL_typename(L, idx));
  }
  bool named = lua_rawgeti(L, idx, 1) == LUA_TNIL;
  lua_pop(L, 1);
  lua_pushnil(L);                       /* no entry beyond the vector's */
  while (lua_next(L, idx)) {
    bool ok = false;
    lua_pop(L, 1);
    if (named && lua_type(L, -1) == LUA_TSTRING) {
      for (int c = 0; c < n; c++) ok = ok || strcmp(lua_tostring(L, -1), names[c]) == 0;
    } else if (!named && lua_isinteger(L, -1)) {
      lua_Integer k = lua_tointeger(L, -1);
      ok = k >= 1 && k <= n;
    }
    if (!ok) {
      bool str = lua_type(L, -1) == LUA_TSTRING;
      const char *key = luaL_tolstring(L, -1, NULL);
      lc_errf(err, "the table has an entry %s%s%s, which a vector of %d has not "
              "(use {x=, y=, ...} or {1, 2, ...})", str ? "'" : "", key, str ? "'" : "", n);
      lua_settop(L, top);
      return -1;
    }
  }
  for (int c = 0; c < n; c++) {
    if (named) lua_rawget(L, (lua_pushstring(L, names[c]), idx));
    else lua_rawgeti(L, idx, c + 1);
    char which[16];
    if (named) snprintf(which, sizeof which, "'%s'", names[c]);
    else snprintf(which, sizeof which, "[%d]", c + 1);
    if (lua_isnil(L, -1)) {
      lc_errf(err, "the table has no %s", which);
      lua_settop(L, top);
      return -1;
    }
    if (lc_elem_convert(L, lua_gettop(L), dt, tmp + c * dt->size, why)) {
      lc_errf(err, "%s: %.400s", which, why);
      lua_settop(L, top);
      return -1;
    }
    lua_pop(L, 1);
  }
  memcpy(dst, tmp, (size_t)(dt->size * n));
  return 0;
}

/* What a Lua value of one element of member e is written with: a scalar,
** a vector type's table, or a nested struct's table (below). */
static int struct_value(lua_State *L, int idx, const lc_struct_def *structs, int sdef,
                        char *dst, char *path, size_t plen, int depth, char *err);

static int member_array(lua_State *L, int idx, const lc_struct_def *structs, const lc_member *e,
                        int d, char *dst, char *path, size_t plen, int depth, char *err);

/* The padding rec:c_declaration spells out as members: no field of the
** record (a field's name cannot start with "__") */
static bool is_padding(const lc_member *e) {
  return strncmp(e->name, "__lc_pad", 8) == 0;
}

static int member_element(lua_State *L, int idx, const lc_struct_def *structs,
                          const lc_member *e, char *dst, char *path, size_t plen, int depth,
                          char *err) {
  char why[LC_ERRLEN];
  if (e->sdef >= 0) return struct_value(L, idx, structs, e->sdef, dst, path, plen, depth + 1, err);
  int rc = e->vec ? vector_value(L, idx, &lc_dtypes[e->type], e->vec, dst, why)
                  : lc_elem_convert(L, idx, &lc_dtypes[e->type], dst, why);
  if (rc) lc_errf(err, "member '%.100s' (%s%s): %.350s", path,
                  lc_dtypes[e->type].name, e->vec ? " vector" : "", why);
  return rc ? -1 : 0;
}

/* Struct structs[sdef] from the table of its members at idx into dst
** (zeroed: its padding stays 0). path names the struct's place for
** messages ("" at the top, "inner." below). */
static int struct_value(lua_State *L, int idx, const lc_struct_def *structs, int sdef,
                        char *dst, char *path, size_t plen, int depth, char *err) {
  const lc_struct_def *d = &structs[sdef];
  size_t base = strlen(path);
  idx = lua_absindex(L, idx);
  if (depth > LC_RECORD_MAXDEPTH) {
    return lc_fail(err, -1, "structs nest more than %d deep", LC_RECORD_MAXDEPTH);
  }
  char mname[256], table[300];          /* "inner"; "the table", "the table 'inner'" */
  snprintf(mname, sizeof mname, "%s", path);
  if (base) mname[base - 1] = '\0';   /* less the '.' */
  if (base) snprintf(table, sizeof table, "the table '%s'", mname);
  else snprintf(table, sizeof table, "the table");
  if (lua_type(L, idx) != LUA_TTABLE) {
    if (base) lc_errf(err, "member '%s': expected a table of struct %s's members, "
                      "got %s", mname, d->name, luaL_typename(L, idx));
    else lc_errf(err, "expected a table of struct %s's members or a 0-d array of "
                 "a record with its layout, got %s", d->name, luaL_typename(L, idx));
    return -1;
  }
  lua_pushnil(L);                       /* every entry is a member */
  while (lua_next(L, idx)) {
    bool ok = false;
    lua_pop(L, 1);
    for (int f = 0; f < d->nmembers && lua_type(L, -1) == LUA_TSTRING; f++)
      ok = ok || strcmp(lua_tostring(L, -1), d->members[f].name) == 0;
    if (!ok) {
      bool str = lua_type(L, -1) == LUA_TSTRING;
      const char *key = luaL_tolstring(L, -1, NULL);
      lc_errf(err, "%s has an entry %s%s%s, which struct %s has not", table,
              str ? "'" : "", key, str ? "'" : "", d->name);
      lua_pop(L, 2);
      return -1;
    }
  }
  char missing[LC_ERRLEN] = "";
  int nmissing = 0;
  for (int f = 0; f < d->nmembers; f++) {
    if (is_padding(&d->members[f])) continue;
    if (lua_getfield(L, idx, d->members[f].name) == LUA_TNIL) {
      size_t n = strlen(missing);
      snprintf(missing + n, sizeof missing - n, "%s'%s%s'", nmissing ? ", " : "", path,
               d->members[f].name);
      nmissing++;
    }
    lua_pop(L, 1);
  }
  if (nmissing) {
    return lc_fail(err, -1, "struct %s: the table has no member%s %s", d->name,
                   nmissing > 1 ? "s" : "", missing);
  }
  for (int f = 0; f < d->nmembers; f++) {
    const lc_member *e = &d->members[f];
    if (is_padding(e)) continue;
    snprintf(path + base, plen - base, "%s", e->name);
    lua_getfield(L, idx, e->name);
    int v = lua_gettop(L);
    char *at = dst + e->offset;
    if (e->count == 0) {
      if (e->sdef >= 0) snprintf(path + base, plen - base, "%s.", e->name);
      if (member_element(L, v, structs, e, at, path, plen, depth, err)) return -1;
    } else if (member_array(L, v, structs, e, 0, at, path, plen, depth, err)) {
      return -1;
    }
    lua_settop(L, v - 1);
    path[base] = '\0';
  }
  return 0;
}

/* The elements of array member e from axis d on (float m[3][3]: nested
** tables, as C's braces and a record's sub-array have them) at idx into
** dst; path ends in the member's name and the indices before axis d. */
static int member_array(lua_State *L, int idx, const lc_struct_def *structs, const lc_member *e,
                        int d, char *dst, char *path, size_t plen, int depth, char *err) {
  int n = e->ndim ? e->dims[d] : e->count;
  bool last = d + 1 >= e->ndim;
  size_t base = strlen(path);
  if (lua_type(L, idx) != LUA_TTABLE || lua_rawlen(L, idx) != (size_t)n) {
    return lc_fail(err, -1, "member '%s': expected a table of %d %s, got %s%s", path, n,
                   last ? "elements" : "tables", lua_type(L, idx) == LUA_TTABLE ? "one of " : "",
                   lua_type(L, idx) == LUA_TTABLE ? lua_pushfstring(L, "%I",
                     (lua_Integer)lua_rawlen(L, idx)) : luaL_typename(L, idx));
  }
  int64_t step = e->size;
  for (int k = d + 1; k < e->ndim; k++) step *= e->dims[k];
  for (int c = 0; c < n; c++) {
    lua_rawgeti(L, idx, c + 1);
    int top = lua_gettop(L);
    snprintf(path + base, plen - base, "[%d]%s", c + 1, last && e->sdef >= 0 ? "." : "");
    int rc = last ? member_element(L, top, structs, e, dst + step * c, path, plen, depth, err)
                  : member_array(L, top, structs, e, d + 1, dst + step * c, path, plen, depth,
                                 err);
    if (rc) return -1;
    lua_settop(L, top - 1);
    path[base] = '\0';
  }
  return 0;
}

/* The shape a record field for member e has: its bounds, then a vector
** type's count (float3 v[2]: {2, 3}). Returns the rank. */
static int member_shape(const lc_member *e, int64_t shape[LC_MEMBER_MAXDIM + 1]) {
  int n = 0;
  for (int k = 0; k < e->ndim; k++) shape[n++] = e->dims[k];
  if (e->ndim == 0 && e->count) shape[n++] = e->count;
  if (e->vec) shape[n++] = e->vec;
  return n;
}

/* The first struct below structs[sdef] (itself included) whose layout as
** luacuda reads it the compiler contradicts, or -1. */
static int conflicting(const lc_struct_def *structs, int sdef, int depth) {
  const lc_struct_def *d = &structs[sdef];
  if (d->conflict[0]) return sdef;
  for (int f = 0; f < d->nmembers && depth < LC_RECORD_MAXDEPTH; f++) {
    int c = d->members[f].sdef >= 0 ? conflicting(structs, d->members[f].sdef, depth + 1) : -1;
    if (c >= 0) return c;
  }
  return -1;
}

/* Refuse parameter i's struct (one the source defines) where the compiler
** gives one of its members, or of the structs in it, another size than
** luacuda read: no record or table can be checked against it. */
static void check_conflict(lua_State *L, const lc_kernel_ref *k, int i, const char *fname) {
  const lc_modref *m = k->hold.mod;
  int c = conflicting(m->structs, k->sig->params[i].sdef, 0);
  if (c >= 0)
    arg_error(L, fname, k->sig, i, "struct %s is laid out otherwise by the compiler: %s",
              m->structs[c].name, m->structs[c].conflict);
}

/* Whether record r has the layout of struct d (as compiled, where the
** compiler told it): the same size and alignment, and field for member
** (luacuda's padding members aside) the same names, offsets, types and
** shapes. Else -1 with the first difference in err. */
static int record_matches(const lc_record *r, const lc_struct_def *structs, int sdef,
                          int depth, char *err) {
  const lc_struct_def *d = &structs[sdef];
  if (depth > LC_RECORD_MAXDEPTH) {
    return lc_fail(err, -1, "records nest more than %d deep", LC_RECORD_MAXDEPTH);
  }
  if ((int64_t)r->dt.size != d->size || (int64_t)r->dt.align != d->align) {
    return lc_fail(err, -1, "the dtype %.120s takes %lld bytes aligned to %lld, struct %s "
                   "%lld aligned to %lld", r->dt.name, (long long)r->dt.size,
                   (long long)r->dt.align, d->name, (long long)d->size, (long long)d->align);
  }
  int nmembers = 0;
  for (int f = 0; f < d->nmembers; f++) nmembers += !is_padding(&d->members[f]);
  if (r->nfields != nmembers) {
    return lc_fail(err, -1, "the dtype %.120s has %d fields, struct %s %d members", r->dt.name,
                   r->nfields, d->name, nmembers);
  }
  for (int f = 0, i = 0; f < d->nmembers; f++) {
    const lc_member *e = &d->members[f];
    if (is_padding(e)) continue;
    const lc_field *g = &r->fields[i++];
    int64_t shape[LC_MEMBER_MAXDIM + 1];
    int ndim = member_shape(e, shape);
    const char *why = NULL;
    if (strcmp(g->name, e->name) != 0) why = "name";
    else if (g->offset != e->offset) why = "offset";
    else if (e->sdef >= 0 ? g->dtype->rec == NULL
                          : (g->dtype->rec != NULL || g->dtype->code != (lc_typecode)e->type))
      why = "type";
    else if (g->ndim != ndim || memcmp(g->shape, shape, sizeof shape[0] * (size_t)ndim) != 0)
      why = "shape";
    if (why) {
      char gs[64] = "", es[64] = "";
      /* as a record's name gives them: [3], {3, 3} */
      if (g->ndim == 1) snprintf(gs, sizeof gs, "[%lld]", (long long)g->shape[0]);
      else if (g->ndim) lc_shape_format(gs, sizeof gs, g->ndim, g->shape);
      if (ndim == 1) snprintf(es, sizeof es, "[%lld]", (long long)shape[0]);
      else if (ndim) lc_shape_format(es, sizeof es, ndim, shape);
      return lc_fail(err, -1, "field %d '%s' (%.100s%s, offset %lld) of the dtype %.120s "
                     "differs from struct %s's member %d '%s' (%s%s%s, offset %lld) in its %s", i,
                     g->name, g->dtype->name, gs, (long long)g->offset, r->dt.name, d->name, i,
                     e->name, e->sdef >= 0 ? "struct " : lc_dtypes[e->type].name,
                     e->sdef >= 0 ? structs[e->sdef].name : "", es, (long long)e->offset, why);
    }
    if (e->sdef >= 0 && record_matches(g->dtype->rec, structs, e->sdef, depth + 1, err))
      return -1;
  }
  return 0;
}

/* Whether the array a of records fits pointer parameter i, to a struct
** the source defines: its record has the struct's layout as the compiler
** computed it (or, for a struct whose members luacuda cannot read, its
** size and alignment). */
static void check_struct_array(lua_State *L, const lc_array *a, const lc_kernel_ref *k, int i,
                               const char *fname) {
  const lc_kernel_sig *sig = k->sig;
  const lc_param *p = &sig->params[i];
  const lc_modref *m = k->hold.mod;
  const lc_record *r = a->dtype->rec;
  char err[LC_ERRLEN];
  if (p->sdef < 0 || p->sdef >= m->nstructs) {          /* a header's: as compiled */
    if (p->pointee_size > 0 && ((int64_t)r->dt.size != p->pointee_size ||
                                (int64_t)r->dt.align != p->pointee_align))
      arg_error(L, fname, sig, i, "the dtype %.120s takes %lld bytes aligned to %lld, %s "
                "(as compiled) %lld aligned to %lld", r->dt.name, (long long)r->dt.size,
                (long long)r->dt.align, p->type_name, (long long)p->pointee_size,
                (long long)p->pointee_align);
    return;
  }
  const lc_struct_def *d = &m->structs[p->sdef];
  if (d->error[0]) {
    if (d->probed != LC_PROBE_NONE && ((int64_t)r->dt.size != d->size ||
                                       (int64_t)r->dt.align != d->align))
      arg_error(L, fname, sig, i, "the dtype %.120s takes %lld bytes aligned to %lld, struct "
                "%s (as compiled) %lld aligned to %lld", r->dt.name, (long long)r->dt.size,
                (long long)r->dt.align, d->name, (long long)d->size, (long long)d->align);
    return;
  }
  check_conflict(L, k, i, fname);
  if (record_matches(r, m->structs, p->sdef, 0, err)) arg_error(L, fname, sig, i, "%s", err);
}

/* A struct by value: a table of its members, or a 0-d record array whose
** record has the struct's layout (its bytes, copied when the launch is
** made: from device memory, once the work queued before is done). */
static void struct_arg(lua_State *L, int idx, const lc_kernel_ref *k, int i, char *slot,
                       const char *fname) {
  const lc_kernel_sig *sig = k->sig;
  const lc_param *p = &sig->params[i];
  const lc_modref *m = k->hold.mod;
  char err[LC_ERRLEN], path[256] = "";
  if (p->sdef < 0 || p->sdef >= m->nstructs)
    arg_error(L, fname, sig, i, "struct %s is not one the source defines", p->type_name);
  check_conflict(L, k, i, fname);
  const lc_array *a = lc_array_test(L, idx);
  if (a == NULL) {
    memset(slot, 0, (size_t)p->size);
    int top = lua_gettop(L);
    if (struct_value(L, idx, m->structs, p->sdef, slot, path, sizeof path, 0, err))
      arg_error(L, fname, sig, i, "%s", err);
    lua_settop(L, top);
    return;
  }
  if (!lc_array_is_open(a)) arg_error(L, fname, sig, i, "attempt to use a closed array");
  if (a->dtype->rec == NULL || a->lay.ndim != 0)
    arg_error(L, fname, sig, i, "expected a table of struct %s's members or a 0-d array of a "
              "record with its layout, got a %d-d %s array", p->type_name, a->lay.ndim,
              a->dtype->name);
  if (record_matches(a->dtype->rec, m->structs, p->sdef, 0, err))
    arg_error(L, fname, sig, i, "%s", err);
  /* read now, when the work queued before (which may write it) is done */
  if (lc_array_kind(a) == LC_DEVICE) a = lc_copy_to_new(L, a, LC_HOST, NULL, fname);
  else {
    lc_pending_wait(L, a, false, fname);
    lc_sync_host(L, lc_array_kind(a), fname);
  }
  memcpy(slot, lc_array_data(a), (size_t)p->size);
}

/* A vector type by value (float2 v) from {x=, y=} or {1, 2} at idx into
** slot; every element is checked before any is written. */
static void vector_arg(lua_State *L, int idx, const lc_kernel_sig *sig, int i, char *slot,
                       const char *fname) {
  const lc_param *p = &sig->params[i];
  char err[LC_ERRLEN];
  if (vector_value(L, idx, &lc_dtypes[p->type], p->vec, slot, err))
    arg_error(L, fname, sig, i, "%s", err);
}

/* A T#N pointer (float2 *) takes a T array whose last axis has N elements,
** or an array of a record of N T fields and nothing else. */
static void check_vector_array(lua_State *L, const lc_array *a, const lc_kernel_sig *sig,
                               int i, const char *fname) {
  const lc_param *p = &sig->params[i];
  const lc_dtype *el = &lc_dtypes[p->type];
  const lc_record *r = a->dtype->rec;
  if (r) {
    bool ok = a->dtype->size == el->size * p->vec;
    int64_t count = 0;
    for (int f = 0; ok && f < r->nfields; f++) {
      ok = r->fields[f].dtype->code == el->code && r->fields[f].dtype->rec == NULL &&
           r->fields[f].offset == count * el->size;
      count += r->fields[f].count;
    }
    if (!ok || count != p->vec)
      arg_error(L, fname, sig, i, "expected a %s array whose last axis has %d elements, or "
                "records of %d %s fields, got %s", el->name, p->vec, p->vec, el->name,
                a->dtype->name);
  } else if (a->dtype->code != el->code) {
    arg_error(L, fname, sig, i, "expected a %s array whose last axis has %d elements, got %s",
              el->name, p->vec, a->dtype->name);
  } else if (a->lay.ndim < 1 || a->lay.shape[a->lay.ndim - 1] != p->vec) {
    arg_error(L, fname, sig, i, "expected a %s array whose last axis has %d elements, got "
              "%s", el->name, p->vec, a->lay.ndim < 1 ? "a 0-d array" :
              lua_pushfstring(L, "a last axis of %I", (lua_Integer)a->lay.shape[a->lay.ndim - 1]));
  } else if (!lc_layout_is_c_contiguous(&a->lay, a->dtype->size)) {
    arg_error(L, fname, sig, i, "the array must be C-contiguous: its last axis holds each "
              "vector's elements");
  }
}

/* The dtype a nested table of numbers or booleans becomes without dtype=
** (convert.c's rule: int64 until a float shows up; booleans: bool), or
** NULL when it holds something else. Only a message reads it. */
static const char *table_dtype(lua_State *L, int idx, int depth, bool *any_float,
                               bool *any_int, bool *any_bool) {
  if (depth > LC_MAXDIM || !lua_checkstack(L, 3)) return NULL;
  idx = lua_absindex(L, idx);
  for (lua_Integer i = 1, n = (lua_Integer)lua_rawlen(L, idx); i <= n; i++) {
    int t = lua_rawgeti(L, idx, i);
    bool ok = true;
    if (t == LUA_TTABLE) ok = table_dtype(L, -1, depth + 1, any_float, any_int, any_bool);
    else if (t == LUA_TBOOLEAN) *any_bool = true;
    else if (lua_isinteger(L, -1)) *any_int = true;
    else if (t == LUA_TNUMBER) *any_float = true;
    else ok = false;
    lua_pop(L, 1);
    if (!ok) return NULL;
  }
  if (*any_bool && (*any_int || *any_float)) return NULL;
  return *any_bool ? "bool" : *any_float ? "float64" : "int64";
}

/* Raise the error for a table given where parameter i wants a device
** array: tables are never copied implicitly, and the one to_device would
** make is often not of the parameter's dtype. */
LC_NORETURN static void table_arg_error(lua_State *L, const lc_kernel_sig *sig, int i, int idx,
                                        const char *fname) {
  const lc_param *p = &sig->params[i];
  const char *want = p->type >= 0 ? lc_dtypes[p->type].name : "float32";
  bool f = false, n = false, b = false;
  int top = lua_gettop(L);
  const char *became = table_dtype(L, idx, 1, &f, &n, &b);
  lua_settop(L, top);
  if (became)
    arg_error(L, fname, sig, i, "expected a device array, got a table; a table is never copied "
              "implicitly, and luacuda.to_device(t) would make it a%s %s array: choose the "
              "dtype with luacuda.to_device(t, {dtype = \"%s\"})",
              strchr("aeiou", became[0]) ? "n" : "", became, want);
  arg_error(L, fname, sig, i, "expected a device array, got a table (make one with "
            "luacuda.to_device(t, {dtype = \"%s\"}))", want);
}

/* The array for a pointer or Array<T, N> parameter i, checked. */
static const lc_array *device_array_arg(lua_State *L, int idx, const lc_kernel_ref *k, int i,
                                        const char *fname) {
  const lc_kernel_sig *sig = k->sig;
  const lc_param *p = &sig->params[i];
  const lc_array *a = lc_array_test(L, idx);
  if (a == NULL && lua_type(L, idx) == LUA_TTABLE) table_arg_error(L, sig, i, idx, fname);
  if (a == NULL)
    arg_error(L, fname, sig, i, "expected a device array, got %s", luaL_typename(L, idx));
  if (!lc_array_is_open(a)) arg_error(L, fname, sig, i, "attempt to use a closed array");
  if (!lc_kind_device_accessible(lc_array_kind(a)))
    arg_error(L, fname, sig, i, "a %s array cannot be passed to a kernel (copy it to the "
              "device first: to_device)", lc_kind_names[lc_array_kind(a)]);
  if (lc_array_kind(a) == LC_DEVICE && a->buf->device != a->buf->backend->current_device())
    arg_error(L, fname, sig, i, "the array is on device %d, but device %d is current "
              "(luacuda.device)", a->buf->device + 1,
              a->buf->backend->current_device() + 1);
  if (p->vec) {
    check_vector_array(L, a, sig, i, fname);
  } else if (p->type >= 0 && a->dtype->code != (lc_typecode)p->type)
    arg_error(L, fname, sig, i, "expected a %s array, got %s", lc_dtypes[p->type].name,
              a->dtype->name);
  if (p->type == LC_PARAM_STRUCT && a->dtype->rec == NULL)
    arg_error(L, fname, sig, i, "expected an array of records (struct %s), got %s; if %s "
              "is not a record's struct but a macro or typedef, give the parameter types "
              "with signatures=", p->type_name, a->dtype->name, p->type_name);
  if (p->type == LC_PARAM_STRUCT && p->kind == LC_PARAM_POINTER)
    check_struct_array(L, a, k, i, fname);
  return a;
}

/* A finite number that a narrower float parameter (float, half) turns into
** infinity is a mistake, not a value: refuse it. math.huge stays infinity. */
static void check_float_range(lua_State *L, int idx, const lc_kernel_sig *sig, int i,
                              const char *slot, const char *fname) {
  const lc_dtype *dt = &lc_dtypes[sig->params[i].type];
  if (dt->kind != 'f' || (size_t)dt->size >= sizeof(lua_Number)) return;
  lua_Number v = lua_tonumber(L, idx);
  if (isfinite(v) && isinf(lc_dtype_load_float(dt, slot)))
    arg_error(L, fname, sig, i, "%.17g is outside %s's range: it would become infinity "
              "(give math.huge for infinity)", (double)v, dt->name);
}

/* Check the values from stack index first (resolve_args's, one per
** parameter) against k's parameters and pack them into buf, args[i]
** pointing at each. Returns bytes used. */
static size_t pack_args(lua_State *L, int first, const lc_kernel_ref *k, char *buf,
                      size_t buflen, void **args, lc_stream *stream,
                      const char *fname) {
  const lc_kernel_sig *sig = k->sig;
  size_t off = 0;
  for (int i = 0; i < sig->nparams; i++) {
    const lc_param *p = &sig->params[i];
    int idx = first + i;
    char err[LC_ERRLEN];
    off = (off + (size_t)p->align - 1) / (size_t)p->align * (size_t)p->align;
    if (off + (size_t)p->size > buflen)
      lc_error(L, fname, "kernel '%s': the arguments take more than %zu bytes", sig->name, buflen);
    char *slot = buf + off;
    args[i] = slot;
    off += (size_t)p->size;
    if (p->kind == LC_PARAM_SCALAR) {
      if (lc_elem_convert(L, idx, &lc_dtypes[p->type], slot, err))
        arg_error(L, fname, sig, i, "%s", err);
      check_float_range(L, idx, sig, i, slot, fname);
    } else if (p->kind == LC_PARAM_VALUE && p->type == LC_PARAM_STRUCT) {
      struct_arg(L, idx, k, i, slot, fname);
    } else if (p->kind == LC_PARAM_VALUE) {
      vector_arg(L, idx, sig, i, slot, fname);
    } else if (p->kind == LC_PARAM_POINTER && is_null(L, idx)) {
      memset(slot, 0, sizeof(void *));
    } else if (p->kind == LC_PARAM_POINTER) {
      const lc_array *a = device_array_arg(L, idx, k, i, fname);
      /* a pointer's kernel reads element i at p[i], the C order: any other
      ** layout (a transposed view, F order, a step) would be read wrong */
      if (!lc_layout_is_c_contiguous(&a->lay, a->dtype->size))
        arg_error(L, fname, sig, i, "the array is not C-contiguous (a %s), and a pointer "
                  "reads its elements in C order: pass a:copy() (a C-ordered copy), or "
                  "declare the parameter Array<T, N> (any strides)",
                  lc_layout_is_f_contiguous(&a->lay, a->dtype->size)
                  ? "transposed or F-ordered view" : "non-contiguous view");
      lc_buffer_use(L, a->buf, stream, fname);     /* its free waits for this launch */
      void *ptr = lc_array_device_data(a);
      if (p->vec) {
        size_t es = lc_dtypes[p->type].size;
        size_t al = p->vec == 2 ? 2 * es : p->vec == 4 ? (4 * es > 16 ? 16 : 4 * es) : es;
        if ((uintptr_t)ptr % al != 0)
          arg_error(L, fname, sig, i, "the data is not aligned to %zu bytes, as the vector "
                    "type must be", al);
      }
      memcpy(slot, &ptr, sizeof ptr);
    } else {
      const lc_array *a = device_array_arg(L, idx, k, i, fname);
      if (a->lay.ndim != p->ndim)
        arg_error(L, fname, sig, i, "expected a %d-d array, got %d-d", p->ndim, a->lay.ndim);
      lc_buffer_use(L, a->buf, stream, fname);
      void *ptr = lc_array_device_data(a);
      size_t dims = sizeof a->lay.shape[0] * (size_t)p->ndim;
      memcpy(slot, &ptr, sizeof ptr);
      memcpy(slot + LC_ARRAY_SHAPE_OFFSET, a->lay.shape, dims);
      memcpy(slot + LC_ARRAY_STRIDES_OFFSET((size_t)p->ndim), a->lay.strides, dims);
    }
  }
  return off;
}

/* LUACUDA_SYNC=1 waits after every launch, so that a failure is reported
** by the launch that caused it rather than by a later call. */
static bool sync_launches(void) {
  static atomic_int cached = -1;         /* states on several threads launch */
  int c = atomic_load_explicit(&cached, memory_order_relaxed);
  if (c < 0) {
    const char *v = getenv("LUACUDA_SYNC");
    c = v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
    atomic_store_explicit(&cached, c, memory_order_relaxed);
  }
  return c;
}

/* The host-addressable arrays (mapped, managed) a launch passes at first..
** are remembered as written by it (pending.h): an access through another
** array over the same memory (a host array under luacuda.mapped, a host
** program's wrap) waits for it, and with LUACUDA_STRICT_ASYNC=1 any access
** before a wait is an error. (Accesses through mapped and managed arrays
** wait for the whole device anyway: lc_sync_host.) */
static void remember_arrays(lua_State *L, int first, const lc_kernel_sig *sig, lc_stream *s) {
  for (int i = 0; i < sig->nparams; i++) {
    lc_param_kind kind = sig->params[i].kind;
    const lc_array *a = kind == LC_PARAM_POINTER || kind == LC_PARAM_ARRAY
                        ? lc_array_test(L, first + i) : NULL;
    if (a && lc_array_is_open(a)) lc_pending_add(a->buf, s, true);
  }
}

void lc_kernel_launch(lua_State *L, lc_kernel_ref *k, int cfgidx, int first, int nargs) {
  const lc_backend *be = k->hold.mod->be;
  int here = be->current_device();
  if (k->hold.mod->device != here)
    lc_error(L, "launch", "kernel '%s': its module is on device %d, but device %d is current "
             "(luacuda.device)", k->sig->name, k->hold.mod->device + 1, here + 1);
  if (lua_type(L, cfgidx) == LUA_TNUMBER) {
    /* k:launch(1, 32, ...): grid and block spread, which would be counted
    ** among the arguments */
    char text[LC_ERRLEN / 2];
    lc_error(L, "launch", "kernel '%s': the launch configuration is one table: "
             "k:launch({grid = %s, block = %s}, args...) or k[{grid, block}](args...), not "
             "numbers before the arguments (the kernel: %s)", k->sig->name,
             luaL_tolstring(L, cfgidx, NULL), nargs > 0 && lua_type(L, first) == LUA_TNUMBER
             ? luaL_tolstring(L, first, NULL) : "...", signature_text(k->sig, text, sizeof text));
  }
  lc_launch cfg;
  int resolved = lua_gettop(L) + 1;
  resolve_args(L, first, nargs, k, "launch");
  launch_config(L, cfgidx, &cfg, k, "launch");
  if (cfg.stream == NULL) cfg.stream = be->default_stream();
  char buf[LC_MAX_ARG_BYTES] __attribute__((aligned(16)));
  void *args[LC_MAXPARAMS];
  cfg.arglen = pack_args(L, resolved, k, buf, sizeof buf, args, cfg.stream, "launch");
  cfg.args = args;
  cfg.nargs = k->sig->nparams;
  cfg.argbuf = buf;
  cfg.kernel_name = k->sig->name;
  char err[LC_ERRLEN];
  if (be->launch(k->fn, &cfg, err))
    lc_error(L, "launch", "kernel '%s': %s", k->sig->name, err);
  remember_arrays(L, resolved, k->sig, cfg.stream);
  /* stand-ins for arrays learn that the kernel may have written them */
  for (int i = 0; i < nargs; i++)
    if (lua_type(L, first + i) == LUA_TTABLE && luaL_callmeta(L, first + i, "__kernel_launched"))
      lua_pop(L, 1);
  if (sync_launches() && be->stream_synchronize(cfg.stream, err)) {
    if (strncmp(err, "kernel '", 8) == 0) lc_error(L, "launch", "%s", err);
    /* a driver's error names its call, not the kernel */
    lc_error(L, "launch", "kernel '%s' failed: %s", k->sig->name, err);
  }
}
