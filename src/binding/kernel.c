/*
** kernel: the Kernel object (a kernel of a compiled module, found by name
** in it) and its two launch forms, k[{grid, block, ...}](args...) and
** k:launch(cfg, args...). Launching itself is launch.c's.
*/
#include "kernel.h"

#include <stdio.h>
#include <string.h>

#include "args.h"
#include "gate.h"

#define KERNEL_MT "luacuda.kernel"

/*** @module luacuda */

static lc_kernel_ref *check_kernel(lua_State *L, int idx, const char *fname) {
  lc_kernel_ref *k = lc_check_userdata(L, idx, KERNEL_MT, "a kernel", fname);
  if (k->hold.closed) lc_error(L, fname, "attempt to use a closed kernel");
  if (k->hold.mod == NULL) lc_error(L, fname, "attempt to use a kernel after its finalizer ran");
  return k;
}

/***
A kernel of a module, from `m.name` or @{Module:get}. Launch it with
`k[{grid, block [, stream [, shared_bytes]]}](args...)` (Numba's form) or
@{Kernel:launch}. Its arguments are checked against its parameter list:
integers exact and in range, a `T *` takes a contiguous device-accessible
array of dtype T (a host array is an error, never copied), an
`Array<T, N>` any strided view of dtype T and N axes.
@type Kernel
*/

/***
Lets go of the kernel object (the module stays; `m.name` gives a new one).
@function Kernel:close
@raise `luacuda.close: expected a kernel, got <type>`
@usage local m = luacuda.compile('extern "C" __global__ void k() {}')
local k = m.k
k:close()
*/

/***
`local k <close> = m.name`: closes the kernel object at the end of the scope.
@function Kernel:__close
@raise `luacuda.close: expected a kernel, got <type>`
@usage local m = luacuda.compile('extern "C" __global__ void k() {}')
do local k <close> = m.k end
*/

/* __close and k:close(): m.name then gives a new kernel object */
static int kernel_close(lua_State *L) {
  lc_modhold_close(L, KERNEL_MT, "a kernel");
  return 0;
}

static bool same_params(const lc_kernel_sig *a, const lc_kernel_sig *b) {
  if (a->nparams != b->nparams) return false;
  for (int i = 0; i < a->nparams; i++) {
    const lc_param *p = &a->params[i], *q = &b->params[i];
    if (p->kind != q->kind || p->type != q->type || p->ndim != q->ndim ||
        p->is_const != q->is_const || p->size != q->size ||
        strcmp(p->type_name, q->type_name) != 0)
      return false;
  }
  return true;
}

static bool sizes_match(const lc_kernel_sig *sig, const long long *sizes) {
  int n = 0;
  while (sizes[n] >= 0) n++;
  bool same = n == sig->nparams;
  for (int i = 0; same && i < n; i++) same = sizes[i] == sig->params[i].size;
  return same;
}

/* Kernel i of m as lc_scan_defined_twice sees it. */
static bool defined_twice(const lc_modref *m, int i) {
  lc_scan_result r = {.kernels = m->kernels, .nkernels = m->nkernels};
  return lc_scan_defined_twice(&r, i);
}

/* Of a kernel defined in several #if branches, the definition whose marker
** the compiled module holds; NULL for any other kernel. */
static const lc_kernel_sig *marked_definition(const lc_modref *m, const char *name) {
  for (int i = 0; i < m->nkernels; i++) {
    if (strcmp(m->kernels[i].name, name) != 0 || !defined_twice(m, i)) continue;
    char mark[64], ignored[LC_ERRLEN];
    void *ptr;
    size_t bytes;
    snprintf(mark, sizeof mark, LC_DEFINED_MARK "%d", i);
    if (m->be->module_global(m->handle, mark, &ptr, &bytes, ignored) == LC_OK)
      return &m->kernels[i];
  }
  return NULL;
}

/* The definition of kernel name that was compiled, checked against the
** compiled kernel's parameter sizes (sizes, NULL when the backend cannot
** tell): the only one, the one its marker names, or else the one whose
** sizes match. */
static const lc_kernel_sig *compiled_definition(lua_State *L, const lc_modref *m,
                                                 const char *name, const long long *sizes,
                                                 const char *fname) {
  const lc_kernel_sig *unread = NULL, *pick = marked_definition(m, name);
  if (pick && (pick->nparams < 0 || (sizes && !sizes_match(pick, sizes)))) {
    if (pick->nparams < 0) unread = pick;
    pick = NULL;
  } else if (pick == NULL) {
    for (int i = 0; i < m->nkernels; i++) {
      const lc_kernel_sig *sig = &m->kernels[i];
      if (strcmp(sig->name, name) != 0) continue;
      if (sig->nparams < 0) unread = sig;
      if (sig->nparams < 0 || (sizes && !sizes_match(sig, sizes))) continue;
      if (pick && !same_params(pick, sig))
        lc_error(L, fname, "kernel '%s' is defined more than once in %s (in #if branches), "
                 "with parameters the compiled kernel cannot tell apart; pass "
                 "signatures={%s = \"...\"} to compile", name, m->name, name);
      if (pick == NULL) pick = sig;
    }
  }
  if (pick) return pick;
  for (int i = 0; sizes && i < m->nkernels; i++) {   /* a struct the scanner laid out wrong */
    const lc_kernel_sig *sig = &m->kernels[i];
    if (strcmp(sig->name, name) != 0 || sig->nparams < 0) continue;
    for (int j = 0; j < sig->nparams && sizes[j] >= 0; j++) {
      const lc_param *p = &sig->params[j];
      if (p->kind == LC_PARAM_VALUE && p->type == LC_PARAM_STRUCT && sizes[j] != p->size)
        lc_error(L, fname, "kernel '%s' parameter %d%s%s%s (%s): luacuda's layout of struct %s "
                 "takes %lld bytes, the compiled kernel's %lld (a #pragma pack or a "
                 "macro it cannot see?): pass the struct by pointer", name, j + 1,
                 p->name[0] ? " '" : "", p->name, p->name[0] ? "'" : "", p->spelling, p->type_name, (long long)p->size, sizes[j]);
    }
  }
  if (unread)    /* perhaps the compiled one: say why it was not understood */
    lc_error(L, fname, "%s; pass signatures={%s = \"...\"} to compile", unread->error, name);
  lc_error(L, fname, "kernel '%s': the parameters read from the source do not match the "
           "compiled kernel; pass signatures={%s = \"...\"} to compile", name, name);
}

/* A kernel object over sig (the module's kernel function already got). */
static void new_kernel(lua_State *L, lc_modref *m, const lc_kernel_sig *sig, lc_function *fn) {
  lc_kernel_ref *k = lua_newuserdatauv(L, sizeof *k, 0);
  *k = (lc_kernel_ref){0};
  luaL_setmetatable(L, KERNEL_MT);
  lc_modref_retain(m);
  k->hold.mod = m;
  k->sig = sig;
  k->fn = fn;
}

/* Push a new kernel object for a name expression's kernel. */
static void push_named(lua_State *L, lc_modref *m, const lc_kernel_sig *sig,
                       const char *fname) {
  if (sig->nparams < 0)
    lc_error(L, fname, "%s; pass signatures={[\"%s\"] = \"...\"} to compile", sig->error,
             sig->name);
  lc_function *fn;
  const long long *sizes = NULL;
  char err[LC_ERRLEN];
  if (m->be->module_function(m->handle, sig->name, &fn, &sizes, err))
    lc_error(L, fname, "%s", err);
  if (sizes && !sizes_match(sig, sizes))
    lc_error(L, fname, "kernel '%s': the parameters read from the source do not match the "
             "compiled kernel; pass signatures={[\"%s\"] = \"...\"} to compile", sig->name,
             sig->name);
  new_kernel(L, m, sig, fn);
}

/* A kernel with C++ linkage asked for by its own name: found when it is
** the only kernel of that name (lc_name_exprs_resolve), else an error that says
** how to name it. */
static void cplusplus_by_name(lua_State *L, const lc_modref *m, const lc_kernel_sig *sig,
                              const char *fname) {
  const char *name = sig->name;
  if (sig->is_template)
    lc_error(L, fname, "kernel '%s' in %s is a template: name an instantiation with "
             "compile's name_expressions = {\"%s<int>\"}, then m[\"%s<int>\"]", name, m->name,
             name, name);
  char list[512];
  size_t n = 0;
  int count = 0;
  list[0] = '\0';
  for (int i = 0; i < m->nkernels; i++) {
    const lc_kernel_sig *k = &m->kernels[i];
    if (strcmp(k->name, name) != 0) continue;
    count++;
    if (n >= sizeof list) continue;
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%s(", count > 1 ? "; " : "", name);
    for (int p = 0; p < k->nparams && n < sizeof list; p++)
      n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", p ? ", " : "",
                            k->params[p].spelling);
    if (n < sizeof list) n += (size_t)snprintf(list + n, sizeof list - n, ")");
  }
  if (count > 1)
    lc_error(L, fname, "kernel '%s' in %s is overloaded (%s): name one with compile's "
             "name_expressions, as \"static_cast<void (*)(int *)>(%s)\"", name, m->name, list,
             name);
  if (sig->in_namespace)
    lc_error(L, fname, "kernel '%s' in %s is in a namespace: name it with compile's "
             "name_expressions = {\"ns::%s\"}", name, m->name, name);
}

/* Push the kernel object for name (made once, then cached in the module). */
void lc_kernel_push(lua_State *L, int midx, const char *name, const char *fname) {
  lc_modref *m = lc_module_check(L, midx, fname);
  lua_getiuservalue(L, midx, 1);
  if (lua_getfield(L, -1, name) != LUA_TNIL &&
      !((lc_modhold *)lua_touserdata(L, -1))->closed) {
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 1);
  const lc_kernel_sig *sig = NULL;
  for (int j = 0; j < m->nnamed && sig == NULL; j++)
    if (strcmp(m->named[j].name, name) == 0) {
      push_named(L, m, &m->named[j], fname);
      lua_pushvalue(L, -1);
      lua_setfield(L, -3, name);
      lua_remove(L, -2);
      return;
    }
  for (int i = 0; i < m->nkernels && sig == NULL; i++)
    if (strcmp(m->kernels[i].name, name) == 0) sig = &m->kernels[i];
  if (sig == NULL) {
    char names[512];
    lc_module_kernel_names(m, names, sizeof names);
    lc_error(L, fname, "%s has no kernel '%s' (its kernels: %s)", m->name, name, names);
  }
  if (!sig->extern_c) cplusplus_by_name(L, m, sig, fname);
  lc_function *fn;
  const long long *sizes = NULL;
  char err[LC_ERRLEN];
  /* a kernel the source does not describe fails before the module is asked */
  if (!defined_twice(m, (int)(sig - m->kernels)) && sig->nparams < 0)
    lc_error(L, fname, "%s; pass signatures={%s = \"...\"} to compile", sig->error, name);
  if (m->be->module_function(m->handle, name, &fn, &sizes, err)) lc_error(L, fname, "%s", err);
  /* the compiled kernel tells its real parameter sizes */
  sig = compiled_definition(L, m, name, sizes, fname);
  new_kernel(L, m, sig, fn);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, name);
  lua_remove(L, -2);
}

/***
Launches the kernel: queued on the stream (the default stream when none
is given), returns at once.
@function Kernel:launch
@tparam table cfg `{grid =, block =, stream =, shared = 0, cooperative = false}`:
`grid` and `block` a number or `{x [, y [, z]]}`; `shared` the dynamic shared
memory in bytes; `cooperative` a cooperative launch (`this_grid().sync()`)
@param ... the kernel's arguments
@raise `luacuda.launch: kernel 'k': block x is 2048 (1 to 1024)`; an argument that
does not fit its parameter (named, with both types); the backend's launch error
@usage local m = luacuda.compile([==[
extern "C" __global__ void inc(int n, int *x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1;
}
]==])
local x = luacuda.to_device({1, 2, 3}, {dtype = "int32"})
m.inc:launch({grid = 1, block = 32}, 3, x)
*/

/* k:launch(cfg, args...) */
static int kernel_launch(lua_State *L) {
  lc_kernel_ref *k = check_kernel(L, 1, "launch");
  lc_kernel_launch(L, k, 2, 3, lua_gettop(L) - 2);
  return 0;
}

/* the function k[cfg] gives: upvalues kernel and configuration */
static int configured_launch(lua_State *L) {
  lc_kernel_ref *k = check_kernel(L, lc_upvalueindex(1), "launch");
  lc_kernel_launch(L, k, lc_upvalueindex(2), 1, lua_gettop(L));
  return 0;
}

/***
`k[{grid, block [, stream [, shared_bytes]]}]`: a launcher, called with the
kernel's arguments (Numba's form); `k.name`, `k.nparams` and `k.signature`
are its fields.
@function Kernel:__index
@raise `luacuda.index: attempt to use a closed kernel`; a launcher's call raises as @{Kernel:launch}
@usage local m = luacuda.compile('extern "C" __global__ void k(int n) {}')
m.k[{1, 32}](5)
m.k[{{2, 2}, {8, 8}, luacuda.stream()}](5)
*/

/*** The kernel's name.
@field Kernel.name
@usage local m = luacuda.compile('extern "C" __global__ void k(int n) {}')
assert(m.k.name == "k")
*/

/*** The number of parameters.
@field Kernel.nparams
@usage local m = luacuda.compile('extern "C" __global__ void k(int n) {}')
assert(m.k.nparams == 1)
*/

/*** The parameter types, as read, joined by `", "`.
@field Kernel.signature
@usage local m = luacuda.compile('extern "C" __global__ void k(int n, float *x) {}')
print(m.k.signature)
*/

static int kernel_index(lua_State *L) {
  lc_kernel_ref *k = check_kernel(L, 1, "index");
  if (lua_type(L, 2) == LUA_TTABLE) {     /* k[{grid, block}]: a launcher */
    static const luaL_Reg launcher = {"launcher", configured_launch};
    lua_settop(L, 2);
    lc_pushfunction(L, &launcher, 2);
    return 1;
  }
  if (lua_type(L, 2) != LUA_TSTRING)
    lc_error(L, "index", "kernel '%s' is launched with a table, k[{grid, block}](args...) or "
             "k:launch({grid=, block=}, args...), not indexed with a %s", k->sig->name,
             luaL_typename(L, 2));
  const char *key = lua_tostring(L, 2);
  if (strcmp(key, "launch") == 0) lua_pushvalue(L, lc_upvalueindex(1));
  else if (strcmp(key, "close") == 0) lua_pushvalue(L, lc_upvalueindex(2));
  else if (strcmp(key, "name") == 0) lua_pushstring(L, k->sig->name);
  else if (strcmp(key, "nparams") == 0) lua_pushinteger(L, k->sig->nparams);
  else if (strcmp(key, "signature") == 0) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; i < k->sig->nparams; i++) {
      if (i) luaL_addstring(&b, ", ");
      luaL_addstring(&b, k->sig->params[i].spelling);
    }
    luaL_pushresult(&b);
  } else {
    lc_error(L, "index", "kernel '%s' has no field '%s' (its fields: name, nparams, "
             "signature, launch, close); launch it with k[{grid, block}](args...)",
             k->sig->name, key);
  }
  return 1;
}

/***
`k(args)` without a configuration: an error that shows the launch forms.
@function Kernel:__call
@raise `luacuda.launch: kernel 'k' needs a launch configuration: k[{grid, block}](...) or k:launch({grid=, block=}, ...)`
@usage local m = luacuda.compile('extern "C" __global__ void k() {}')
assert(not pcall(m.k))
*/

/*** @section end */

static int kernel_call(lua_State *L) {
  lc_kernel_ref *k = check_kernel(L, 1, "launch");
  lc_error(L, "launch", "kernel '%s' needs a launch configuration: k[{grid, block}](...) "
           "or k:launch({grid=, block=}, ...)", k->sig->name);
}

static int kernel_tostring(lua_State *L) {
  lc_kernel_ref *k = lc_check_userdata(L, 1, KERNEL_MT, "a kernel", "tostring");
  if (k->hold.closed) {
    lua_pushliteral(L, "luacuda.kernel(closed)");
    return 1;
  }
  check_kernel(L, 1, "tostring");        /* after its finalizer: an error */
  lua_pushfstring(L, "luacuda.kernel(%s, %d parameters)", k->sig->name, k->sig->nparams);
  return 1;
}

void lc_kernel_open(lua_State *L) {
  static const luaL_Reg kindex = {"__index", kernel_index};
  static const luaL_Reg klaunch = {"launch", kernel_launch};
  static const luaL_Reg kclose = {"close", kernel_close};
  static const luaL_Reg kmeta[] = {
    {"__gc", lc_modhold_gc},
    {"__call", kernel_call},
    {"__close", kernel_close},
    {"__tostring", kernel_tostring},
    {NULL, NULL}
  };
  lc_new_type(L, KERNEL_MT, kmeta, NULL);
  luaL_getmetatable(L, KERNEL_MT);
  lc_pushfunction(L, &klaunch, 0);        /* k.launch and k.close, upvalues of __index */
  lc_pushfunction(L, &kclose, 0);
  lc_pushfunction(L, &kindex, 2);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}
