/*
** ptx: luacuda.ptx, luacuda.cubin and luacuda.nvrtc_version, NVRTC as a
** Lua function. The source compiled is the head every backend compiles
** (the prelude and a #line directive, ksource.h) and the user's source.
*/
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "backend.h"
#include "gate.h"
#include "args.h"
#include "ksource.h"
#include "nvrtc.h"   /* NVRTC runs whichever backend runs kernels */

#define OUTPUT_MT "luacuda.nvrtc_output"

/* What lc_nvrtc_compile malloc'd, held by a userdata made before the call,
** so that a Lua error (even a memory error while pushing) cannot leak it. */
typedef struct output {
  char *out, *log;
} output;

static int output_release(lua_State *L) {
  output *o = lua_touserdata(L, 1);     /* __gc: always an output */
  free(o->out);
  free(o->log);
  o->out = o->log = NULL;
  return 0;
}

/* An architecture NVRTC may know: compute_XX or sm_XX, with 2 or 3 digits
** and an optional family suffix (sm_90a, sm_100f). Returns the prefix
** length, or 0 when arch is not of that form. */
static size_t arch_prefix(const char *arch) {
  size_t p = strncmp(arch, "compute_", 8) == 0 ? 8 : strncmp(arch, "sm_", 3) == 0 ? 3 : 0;
  if (p == 0) return 0;
  size_t d = 0;
  while (arch[p + d] >= '0' && arch[p + d] <= '9') d++;
  if (d < 2 || d > 3) return 0;
  const char *rest = arch + p + d;
  if (rest[0] == '\0' || ((rest[0] == 'a' || rest[0] == 'f') && rest[1] == '\0')) return p;
  return 0;
}

static bool starts(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Raise "luacuda.<fname>: <msg>" with no length limit (lc_error cuts at
** 512 bytes; a compiler log is longer), after freeing what o holds. */
static LC_NORETURN void raise_freeing(lua_State *L, output *o, const char *fname,
                                      const char *msg) {
  luaL_where(L, 1);       /* the script's file:line first, as lc_error's have it */
  lua_pushfstring(L, "luacuda.%s: %s", fname, msg);
  lua_concat(L, 2);
  free(o->out);
  free(o->log);
  o->out = o->log = NULL;
  lua_error(L);
  for (;;) {}   /* not reached */
}

static const char *const compile_keys[] = {"arch", "options", "name", NULL};

/* source [, opts] -> the PTX text (or cubin bytes), the log or nil */
static int compile(lua_State *L, const char *fname, bool cubin) {
  if (lua_type(L, 1) != LUA_TSTRING)
    lc_error(L, fname, "source must be a string, got %s", luaL_typename(L, 1));
  size_t srclen;
  const char *src = lua_tolstring(L, 1, &srclen);
  if (strlen(src) != srclen) lc_error(L, fname, "source contains a NUL byte");
  bool has_opts = lc_check_opts(L, 2, compile_keys, fname);
  lua_settop(L, 2);
  if (has_opts) {
    lc_opt_get(L, 2, "arch");        /* 3 */
    lc_opt_get(L, 2, "name");        /* 4 */
    lc_opt_get(L, 2, "options");     /* 5 */
  } else {
    lua_settop(L, 5);
  }

  const char *arch = cubin ? NULL : "compute_75";   /* the oldest CUDA 13 knows */
  if (!lua_isnil(L, 3)) {
    if (lua_type(L, 3) != LUA_TSTRING)
      lc_error(L, fname, "arch must be a string, got %s", luaL_typename(L, 3));
    arch = lua_tostring(L, 3);
  }
  if (arch == NULL)   /* a cubin runs on one GPU family only: no default */
    lc_error(L, fname, "arch is required, e.g. {arch = \"sm_90\"}");
  size_t p = arch_prefix(arch);
  if (p == 0)
    lc_error(L, fname, "arch must be \"compute_XX\" or \"sm_XX\" (e.g. \"sm_90\"), got \"%s\"",
             arch);
  if (cubin && p != 3)
    lc_error(L, fname, "a cubin needs a real architecture \"sm_XX\", got \"%s\"", arch);

  const char *name = "kernel.cu";
  if (!lua_isnil(L, 4)) {
    if (lua_type(L, 4) != LUA_TSTRING)
      lc_error(L, fname, "name must be a string, got %s", luaL_typename(L, 4));
    name = lc_check_source_name(L, 4, fname);
    if (name[0] == '\0') lc_error(L, fname, "name must not be empty");
  }

  /* the options: -arch first, then the user's in the one spelling every
  ** backend takes (ksource.h) */
  lc_kopts *ko = lc_check_compiler_options(L, 5, fname);
  for (int i = 0; i < ko->n; i++)
    if (starts(ko->v[i], "-arch") || starts(ko->v[i], "--gpu-architecture"))
      lc_error(L, fname, "give the architecture as arch=, not as option \"%s\"", ko->v[i]);
  lua_settop(L, 6);   /* 6: a placeholder where the options were */
  const char **opts =
      lua_newuserdatauv(L, sizeof(char *) * (size_t)(ko->n + 1 + LC_NVRTC_MAXINC), 0);   /* 7 */
  int nopts = 0;
  opts[nopts++] = lua_pushfstring(L, "-arch=%s", arch);   /* 8 */
  for (int i = 0; i < ko->n; i++) opts[nopts++] = ko->v[i];

  /* the prelude and a #line directive, then the user's source */
  luaL_Buffer b;
  size_t head = lc_ksource_head_len(name);
  lc_ksource_head(luaL_buffinitsize(L, &b, head + 1), name);
  luaL_addsize(&b, head);
  luaL_addlstring(&b, src, srclen);
  luaL_pushresult(&b);   /* 9 */
  const char *full = lua_tostring(L, -1);

  output *o = lua_newuserdatauv(L, sizeof *o, 0);   /* 10 */
  o->out = o->log = NULL;
  luaL_setmetatable(L, OUTPUT_MT);

  char err[LC_NVRTC_ERRLEN];
  if (lc_nvrtc_load(err) != LC_OK) {
    lua_pushfstring(L, "NVRTC is not available: %s", err);
    raise_freeing(L, o, fname, lua_tostring(L, -1));
  }
  /* the toolkit's headers after the user's -I, as compile does (nvrtc.h) */
  lc_nvrtc_facts *facts = lua_newuserdatauv(L, sizeof *facts, 0);   /* 11 */
  if (lc_nvrtc_facts_get(facts, err) != LC_OK) raise_freeing(L, o, fname, err);
  for (int i = 0; i < facts->nincludes; i++) opts[nopts++] = facts->includes[i];
  size_t outlen;
  int rc = lc_nvrtc_compile(full, name, opts, nopts, cubin ? LC_NVRTC_CUBIN : LC_NVRTC_PTX,
                            &o->out, &outlen, &o->log, err);
  if (rc != LC_OK) {
    if (o->log == NULL) raise_freeing(L, o, fname, err);
    lua_pushfstring(L, "compilation of %s failed:\n%s", name, o->log);
    raise_freeing(L, o, fname, lua_tostring(L, -1));
  }
  lua_pushlstring(L, o->out, outlen);
  if (o->log) lua_pushstring(L, o->log);
  else lua_pushnil(L);
  free(o->out);
  free(o->log);
  o->out = o->log = NULL;
  return 2;
}

/*** @module luacuda */

/***
Compiles CUDA C++ to PTX with NVRTC (no GPU needed), with the same head
(prelude) that @{compile} puts before the source.
@function ptx
@tparam string source the CUDA C++ text
@tparam[opt] table opts `{arch =, options =, name =}`: `arch` as `"compute_90"` or
`"sm_90"`; `options` a sequence of NVRTC options
@treturn string the PTX text
@treturn string|nil NVRTC's log (warnings), or nil
@raise `luacuda.ptx: NVRTC is not available: <why>`; `compilation of <name> failed:` and
the log; a bad `arch` or option
@usage local text = luacuda.ptx('extern "C" __global__ void k(int *x) { *x = 1; }')
assert(text:find(".entry k", 1, true))
*/

/* ptx(source [, {arch=, options=, name=}]) -> PTX text, log or nil */
static int l_ptx(lua_State *L) { return compile(L, "ptx", false); }

/***
Compiles CUDA C++ to a cubin for one real architecture with NVRTC.
@function cubin
@tparam string source the CUDA C++ text
@tparam table opts `{arch = "sm_XX", options =, name =}`; `arch` is required
@treturn string the cubin's bytes
@treturn string|nil NVRTC's log, or nil
@raise as @{ptx}, with `luacuda.cubin:`; an `arch` that is not `sm_XX`
@usage local bin = luacuda.cubin('extern "C" __global__ void k() {}', {arch = "sm_90"})
*/

/* cubin(source, {arch="sm_XX", options=, name=}) -> cubin bytes, log or nil */
static int l_cubin(lua_State *L) { return compile(L, "cubin", true); }

/***
The version of the NVRTC that luacuda loads (a probe: it never raises).
@function nvrtc_version
@treturn integer|nil the major version, or fail (nil)
@treturn integer|string the minor version, or why NVRTC cannot be loaded
@raise does not raise: a missing NVRTC is its second result
@usage local major, minor = luacuda.nvrtc_version()
if major then print(major .. "." .. minor) else print("no NVRTC: " .. minor) end
*/

/* nvrtc_version() -> major, minor; or fail, reason: a probe, it never raises */
static int l_nvrtc_version(lua_State *L) {
  char err[LC_NVRTC_ERRLEN];
  int major, minor;
  if (lc_nvrtc_version(&major, &minor, err) != LC_OK) {
    luaL_pushfail(L);
    lua_pushstring(L, err);
    return 2;
  }
  lua_pushinteger(L, major);
  lua_pushinteger(L, minor);
  return 2;
}

static const luaL_Reg fns[] = {
  {"nvrtc_version", l_nvrtc_version},
  {"ptx", l_ptx},
  {"cubin", l_cubin},
  {NULL, NULL}
};

void lc_ptx_open(lua_State *L) {
  static const luaL_Reg meta[] = {{"__gc", output_release}, {NULL, NULL}};
  lc_new_type(L, OUTPUT_MT, meta, NULL);
  lc_setfuncs(L, fns);
}
