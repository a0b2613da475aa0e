/*
** module: luacuda.compile / compile_file and the Module object. The source
** is scanned for kernels and their parameters before the backend compiles
** it; signatures= replaces what the scanner read. Compiled modules are kept
** for the process (base/modcache.h). The Kernel object is kernel.c's, the
** name_expressions name_expr.c's.
*/
#include "kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cache.h"
#include "gate.h"
#include "ksource.h"
#include "modcache.h"
#include "probe.h"

#define MODULE_MT "luacuda.module"

/* ---- the counted module ------------------------------------------------- */

static void modref_free(void *ud) {
  lc_modref *m = ud;
  if (m->handle) m->be->module_unload(m->handle);
  free(m->kernels);
  free(m->named);
  free(m->globals);
  free(m->structs);
  free(m);
}

/* The last reference unloads the module once the launches queued so far,
** which may be running its code, are done. */
void lc_modref_release(void *ud) {
  lc_modref *m = ud;
  if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1) return;
  m->be->defer(modref_free, m);
}

void lc_modref_retain(lc_modref *m) {
  atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
}

/* The Module object is an lc_modhold, pushed before anything is
** allocated, so an error at any later step frees everything. */
typedef lc_modhold holder;

static void hold_finish(lua_State *L, int idx) {
  lc_modhold *h = lua_touserdata(L, idx);
  if (h->mod) lc_modref_release(h->mod);
  h->mod = NULL;
}

int lc_modhold_gc(lua_State *L) {
  hold_finish(L, 1);
  return 0;
}

static const lc_closer hold_closer = {hold_finish};

/* close(): the object lets go of its module, which is unloaded once
** nothing holds it (kernels and global arrays hold it too) */
void lc_modhold_close(lua_State *L, const char *tname, const char *what) {
  lc_modhold *h = lc_check_userdata(L, 1, tname, what, "close");
  if (!h->closed) {
    h->closed = true;
    lc_close(L, 1, &hold_closer, &h->closing);
  }
}

/*** @module luacuda */

/***
A compiled module, from @{compile} or @{compile_file}: its kernels are
fields (`m.saxpy`), its `__constant__` and `__device__` variables arrays
(@{Module:get_global}).
@type Module
*/

/***
Unloads the module once its kernels' launches have been queued; later use
of it, or of kernels taken from it, is an error. Idempotent.
@function Module:close
@raise `luacuda.close: expected a module, got <type>`
@usage local m = luacuda.compile('extern "C" __global__ void k() {}')
m:close()
*/

/***
`local m <close> = luacuda.compile(src)`: closes the module when the
variable goes out of scope.
@function Module:__close
@raise `luacuda.close: expected a module, got <type>`
@usage do
  local m <close> = luacuda.compile('extern "C" __global__ void k() {}')
end
*/

/*** @section end */

/* __close and m:close() */
static int module_close(lua_State *L) {
  lc_modhold_close(L, MODULE_MT, "a module");
  return 0;
}

/* A module object resurrected by a finalizer after its own (an object
** collected in the same cycle may keep it) holds nothing any more. */
lc_modref *lc_module_check(lua_State *L, int idx, const char *fname) {
  holder *h = lc_check_userdata(L, idx, MODULE_MT, "a module", fname);
  if (h->closed) lc_error(L, fname, "attempt to use a closed module");
  if (h->mod == NULL) lc_error(L, fname, "attempt to use a module after its finalizer ran");
  return h->mod;
}

/* ---- compiling ------------------------------------------------------------ */

/* Modules by what made them, for the process (modcache.h). */
static void retain_cached(void *m) { lc_modref_retain(m); }
static lc_modcache compiled = LC_MODCACHE_INIT(retain_cached);

static int compare_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The in-process key: backend, name, source, options, and the signature
** overrides at sigidx in name order (table order is arbitrary). */
static void module_key(lua_State *L, lc_hash *key, const char *name, const char *src,
                       size_t len, const char *const *opts, int nopts, int sigidx) {
  lc_hash_init(key);
  const lc_backend *be = lc_backend_get(NULL);
  int device = be->current_device();      /* a module is loaded on one device */
  lc_hash_add_str(key, be->name);
  lc_hash_add(key, &device, sizeof device);
  lc_hash_add_str(key, name);
  lc_hash_add(key, src, len);
  for (int i = 0; i < nopts; i++) lc_hash_add_str(key, opts[i]);
  if (lua_type(L, sigidx) != LUA_TTABLE) return;
  /* every name: two compiles that differ in any override are two modules */
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, sigidx)) {
    n += lua_type(L, -2) == LUA_TSTRING;
    lua_pop(L, 1);
  }
  const char **names = lua_newuserdatauv(L, sizeof *names * (size_t)(n + 1), 0);
  int cap = n;                    /* a finalizer run by the allocation may add keys */
  n = 0;
  lua_pushnil(L);
  while (lua_next(L, sigidx)) {   /* the table keeps the names alive */
    if (lua_type(L, -2) == LUA_TSTRING && n < cap) names[n++] = lua_tostring(L, -2);
    lua_pop(L, 1);
  }
  qsort(names, (size_t)n, sizeof names[0], compare_names);
  for (int i = 0; i < n; i++) {
    lc_opt_get(L, sigidx, names[i]);
    lc_hash_add_str(key, names[i]);
    if (lua_type(L, -1) == LUA_TSTRING) lc_hash_add_str(key, lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

static const char *const compile_keys[] = {"name", "options", "signatures",
                                           "name_expressions", NULL};

/* Scan src into m's arrays: once to count, once to fill. */
static void scan_source(lua_State *L, lc_modref *m, const char *src, size_t len,
                        lc_scan_result *r, const char *fname) {
  char err[LC_ERRLEN];
  memset(r, 0, sizeof *r);
  if (lc_scan(src, len, r, err)) lc_error(L, fname, "%s: %s", m->name, err);
  int nk = r->nkernels, ns = r->nshared, ng = r->nglobals, nst = r->nstructs;
  m->kernels = calloc((size_t)nk + 1, sizeof *m->kernels);
  m->globals = calloc((size_t)ng + 1, sizeof *m->globals);
  m->structs = calloc((size_t)nst + 1, sizeof *m->structs);
  if (!m->kernels || !m->globals || !m->structs) lc_error(L, fname, "out of host memory");
  /* only needed while compiling: left to the collector, whatever happens */
  lc_shared_decl *shared = lua_newuserdatauv(L, ((size_t)ns + 1) * sizeof *shared, 0);
  *r = (lc_scan_result){m->kernels, nk, 0, shared, ns, 0, m->globals, ng, 0, m->structs, nst, 0};
  if (lc_scan(src, len, r, err)) lc_error(L, fname, "%s: %s", m->name, err);
  m->nkernels = r->nkernels;
  m->nglobals = r->nglobals;
  m->nstructs = r->nstructs;
}

/* Apply opts.signatures (at idx, a table name -> "int, float*"). */
static void apply_signatures(lua_State *L, int idx, lc_modref *m, const char *fname) {
  if (lua_isnil(L, idx)) return;
  if (lua_type(L, idx) != LUA_TTABLE)
    lc_error(L, fname, "signatures must be a table of kernel name = \"types\", got %s",
             luaL_typename(L, idx));
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
      lc_error(L, fname, "signatures must map kernel names to strings of parameter types");
    const char *name = lua_tostring(L, -2);
    size_t len;
    const char *text = lua_tolstring(L, -1, &len);
    int found = 0;
    for (int i = 0; i < m->nnamed; i++) {      /* a name expression's kernel */
      if (strcmp(m->named[i].name, name) != 0) continue;
      char err[LC_ERRLEN];
      if (lc_parse_signature_structs(text, len, m->structs, m->nstructs, &m->named[i], err))
        lc_error(L, fname, "%s", err);
      found++;
    }
    for (int i = 0; i < m->nkernels; i++) {    /* each definition, in every #if branch */
      if (strcmp(m->kernels[i].name, name) != 0) continue;
      char err[LC_ERRLEN];
      if (lc_parse_signature_structs(text, len, m->structs, m->nstructs, &m->kernels[i], err))
        lc_error(L, fname, "%s", err);
      found++;
    }
    if (found == 0)
      lc_error(L, fname, "signatures names kernel '%s', which %s does not define", name,
               m->name);
    lua_pop(L, 1);
  }
}

/* ---- struct layouts as compiled ----------------------------------------------- */

/* Read the table the compiler wrote (probe.h), prefix then i, into v
** (room for max); the count read, 0 when there is none (what it is next
** to was not compiled, or the table cannot be read). The copy runs on a
** stream of its own, so that it neither waits for nor reports other work. */
static size_t read_probe(const lc_modref *m, const char *prefix, int i, unsigned long long *v,
                         size_t max) {
  char name[64], err[LC_ERRLEN];
  void *ptr;
  size_t bytes;
  lc_stream *s;
  snprintf(name, sizeof name, "%s%d", prefix, i);
  if (m->be->module_global(m->handle, name, &ptr, &bytes, err) != LC_OK ||
      bytes % sizeof v[0] != 0 || bytes / sizeof v[0] > max)
    return 0;
  if (m->be->stream_create(&s, LC_STREAM_NONBLOCKING, err) != LC_OK) return 0;
  int rc = m->be->copy(v, LC_HOST, ptr, LC_DEVICE, bytes, s, err);
  if (m->be->stream_synchronize(s, err) != LC_OK) rc = LC_EFAIL;
  m->be->stream_release(s);
  return rc == LC_OK ? bytes / sizeof v[0] : 0;
}

/* The struct of p's name that was compiled, where the one the scanner
** took (the last definition) was not: one in each branch of an #if. */
static void compiled_struct(const lc_modref *m, lc_param *p) {
  if (m->structs[p->sdef].probed != LC_PROBE_NONE) return;
  for (int i = 0; i < m->nstructs; i++)
    if (m->structs[i].probed != LC_PROBE_NONE &&
        strcmp(m->structs[i].name, m->structs[p->sdef].name) == 0) {
      p->sdef = i;
      return;
    }
}

/* Take the compiler's layout of every struct the source defines, before
** the module is shared: parameters that take a struct by value are then
** packed as the kernel reads them. */
static void take_compiled_layouts(lc_modref *m) {
  unsigned long long v[2 + 2 * (LC_STRUCT_MAXMEMBERS > LC_MAXPARAMS ? LC_STRUCT_MAXMEMBERS
                                                                      : LC_MAXPARAMS)];
  for (int i = 0; i < m->nstructs; i++)
    lc_probe_apply(m->structs, i, v, read_probe(m, LC_PROBE_PREFIX, i, v, sizeof v / sizeof v[0]));
  for (int i = 0; i < m->nkernels; i++) {     /* pointers to a header's structs */
    lc_kernel_sig *sig = &m->kernels[i];
    if (!lc_probe_has_pointees(sig) ||
        read_probe(m, LC_POINTEE_PREFIX, i, v, sizeof v / sizeof v[0]) != 2 * (size_t)sig->nparams)
      continue;
    for (int j = 0; j < sig->nparams; j++) {
      sig->params[j].pointee_size = (int64_t)v[2 * j];
      sig->params[j].pointee_align = (int64_t)v[2 * j + 1];
    }
  }
  for (int k = 0; k < m->nkernels + m->nnamed; k++) {
    lc_kernel_sig *sig = k < m->nkernels ? &m->kernels[k] : &m->named[k - m->nkernels];
    for (int j = 0; j < sig->nparams; j++) {
      lc_param *p = &sig->params[j];
      if (p->type != LC_PARAM_STRUCT || p->sdef < 0 || p->sdef >= m->nstructs) continue;
      compiled_struct(m, p);
      if (p->kind != LC_PARAM_VALUE || m->structs[p->sdef].probed == LC_PROBE_NONE) continue;
      p->size = m->structs[p->sdef].size;
      p->align = m->structs[p->sdef].align;
    }
  }
}

/* compile(source, opts) with the source at 1 and its name in name. */
static int compile_source(lua_State *L, const char *name, const char *fname) {
  size_t len;
  const char *src = lua_tolstring(L, 1, &len);
  bool has_opts = lc_check_opts(L, 2, compile_keys, fname);
  lua_settop(L, 2);
  if (has_opts) {
    lc_opt_get(L, 2, "options");         /* 3 */
    lc_opt_get(L, 2, "signatures");      /* 4 */
  } else {
    lua_settop(L, 4);
  }
  lc_name_exprs_check(L, has_opts, fname);
  lc_kopts *ko = lc_check_compiler_options(L, 3, fname);   /* 3: ko */
  char err[LC_ERRLEN];
  const char *const *opts = ko->v;
  int nopts = ko->n;
  holder *h = lua_newuserdatauv(L, sizeof *h, 1);    /* 5: the module object */
  *h = (holder){0};
  luaL_setmetatable(L, MODULE_MT);
  lua_newtable(L);                        /* kernel objects, made on demand */
  lua_setiuservalue(L, 5, 1);
  lc_hash key;
  module_key(L, &key, name, src, len, opts, nopts, 4);
  if (has_opts) {
    lc_opt_get(L, 2, "name_expressions");
    for (int j = 1; lua_istable(L, -1) && j <= (int)lua_rawlen(L, -1); j++) {
      lua_rawgeti(L, -1, j);
      lc_hash_add_str(&key, lua_tostring(L, -1));
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  if ((h->mod = lc_modcache_find(&compiled, &key)) != NULL) return 1;
  lc_modref *m = calloc(1, sizeof *m);
  if (m == NULL) lc_error(L, fname, "out of host memory");
  atomic_init(&m->refs, 1);
  m->be = lc_backend_get(NULL);
  m->device = m->be->current_device();
  snprintf(m->name, sizeof m->name, "%s", name);
  h->mod = m;
  lc_scan_result r;
  scan_source(L, m, src, len, &r, fname);   /* 6: the shared declarations */
  if (has_opts) lc_opt_get(L, 2, "name_expressions");   /* 7 */
  else lua_pushnil(L);
  lc_name_exprs_read(L, 7, m, src, fname);
  apply_signatures(L, 4, m, fname);
  int nnames;
  const char **names = lc_name_exprs_resolve(L, 7, m, &nnames);    /* 8 */
  /* another state may have compiled it meanwhile, or be compiling it */
  bool claimed;
  lc_modref *done = lc_modcache_claim(&compiled, &key, &claimed);
  if (done) {
    h->mod = done;
    lc_modref_release(m);
    lua_settop(L, 5);
    return 1;
  }
  lc_source s = {src, len, m->name, opts, nopts, &r, names, nnames};
  char *log = NULL;
  int rc = m->be->module_load(&s, &m->handle, &log, err);
  if (rc == LC_OK) take_compiled_layouts(m);
  if (claimed) lc_modcache_settle(&compiled, &key, rc == LC_OK ? m : NULL);
  lua_settop(L, 5);
  if (rc != LC_OK) {
    if (log) {
      /* the script's file:line first, as lc_error's messages have it */
      luaL_where(L, 1);
      lua_pushfstring(L, "luacuda.%s: %s:\n%s", fname, err, log);
      lua_concat(L, 2);
      free(log);
      lua_error(L);
    }
    lc_error(L, fname, "%s", err);
  }
  lua_settop(L, 5);
  return 1;
}

/***
Compiles CUDA C++ source into a module, on the backend in use (NVRTC and
the driver, or the simulator's host compiler), through the disk cache.
Kernels are found by name: `extern "C" __global__` functions, a C++ kernel
that is the only one of its name outside any namespace, and each of
`name_expressions` (templates, overloads, namespaces). Write kernel sources
in `[==[ ... ]==]`: CUDA's `a[b[i]]` would end a `[[ ... ]]` string.
@function compile
@tparam string source the CUDA C++ text
@tparam[opt] table opts `{name =, options =, signatures =, name_expressions =}`:
`name` for messages (and the cache); `options` a sequence of compiler
options (`"-DN=4"`, `"-std=c++17"`, ...); `signatures` a table from kernel
name to its parameter list (`"int, float *"`), replacing what is read from
the source; `name_expressions` a sequence of C++ names of kernels
(`"sq<int>"`), at most 64, each then a key of the module
@treturn Module
@raise `luacuda.compile: source must be a string, got <type>`; an unknown
option; the compiler's log, on a compile error; on the CUDA backend,
`luacuda.compile: option -arch=sm_100: sm_100 is newer than the device
(compute capability 9.0), which cannot run its code` (an `-arch` no newer
than the device is compiled to its PTX, which the driver compiles for the
device)
@usage local m = luacuda.compile([==[
extern "C" __global__ void fill(int n, float v, float *x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}
]==])
local x = luacuda.device_array({100}, "float32")
m.fill[{1, 128}](100, 2.5, x)
*/

/* compile(source [, {name=, options=, signatures=}]) */
static int l_compile(lua_State *L) {
  if (lua_type(L, 1) != LUA_TSTRING)
    lc_error(L, "compile", "source must be a string, got %s", luaL_typename(L, 1));
  const char *name = "kernel.cu";
  if (lua_type(L, 2) == LUA_TTABLE) {
    lc_opt_get(L, 2, "name");
    if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
      lc_error(L, "compile", "name must be a string, got %s", luaL_typename(L, -1));
    if (lua_isstring(L, -1)) name = lc_check_source_name(L, -1, "compile");
    lua_pop(L, 1);
  }
  char copy[256];
  snprintf(copy, sizeof copy, "%s", name);
  return compile_source(L, copy, "compile");
}

/***
@{compile} with the source read from a file; the module's name defaults to
the path (so compile errors name the file).
@function compile_file
@tparam string path the file
@tparam[opt] table opts as for @{compile}
@treturn Module
@raise `luacuda.compile_file: cannot open <path>`; `cannot read <path>`; as @{compile}
@usage local path = os.tmpname()
local f = assert(io.open(path, "w"))
f:write('extern "C" __global__ void k(int n) {}')
f:close()
local m = luacuda.compile_file(path)
os.remove(path)
*/

/* compile_file(path [, opts]): the name defaults to the path */
static int l_compile_file(lua_State *L) {
  if (lua_type(L, 1) != LUA_TSTRING)
    lc_error(L, "compile_file", "path must be a string, got %s", luaL_typename(L, 1));
  const char *path = lua_tostring(L, 1);
  char name[256];
  int named = lua_type(L, 2) == LUA_TTABLE ? lc_opt_get(L, 2, "name") : LUA_TNIL;
  snprintf(name, sizeof name, "%s", lc_check_source_name(L, named == LUA_TSTRING ? -1 : 1,
                                                         "compile_file"));
  if (lua_type(L, 2) == LUA_TTABLE) lua_pop(L, 1);
  FILE *f = fopen(path, "rb");
  if (f == NULL) lc_error(L, "compile_file", "cannot open %s", path);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  size_t n;
  char chunk[4096];
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) luaL_addlstring(&b, chunk, n);
  bool bad = ferror(f);
  fclose(f);
  if (bad) lc_error(L, "compile_file", "cannot read %s", path);
  luaL_pushresult(&b);
  lua_replace(L, 1);                      /* the source takes the path's place */
  return compile_source(L, name, "compile_file");
}

/* ---- the module's kernels ------------------------------------------------- */

/* Whether kernel i's name came before it (defined in another #if branch). */
static bool named_before(const lc_modref *m, int i) {
  for (int j = 0; j < i; j++)
    if (strcmp(m->kernels[j].name, m->kernels[i].name) == 0) return true;
  return false;
}

void lc_module_kernel_names(const lc_modref *m, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < m->nkernels && n < len; i++)
    if (!named_before(m, i))
      n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", m->kernels[i].name);
  if (m->nkernels == 0) snprintf(buf, len, "none");
}

/* ---- module methods ------------------------------------------------------- */

/*** @type Module */

/***
The kernel named `name`: the same as `m[name]`, for names that are not
Lua identifiers or that a method's name hides.
@function Module:get
@tparam string name a kernel's name, or one of `name_expressions`
@treturn Kernel
@raise `luacuda.get: <cause>`: no such kernel (the message lists the module's kernels)
@usage local m = luacuda.compile('extern "C" __global__ void kernels() {}')
local k = m:get("kernels")  -- m.kernels is the method
*/

/* m:get(name) */
static int module_get(lua_State *L) {
  lc_module_check(L, 1, "get");
  if (lua_type(L, 2) != LUA_TSTRING)
    lc_error(L, "get", "kernel name must be a string, got %s", luaL_typename(L, 2));
  const char *name = lua_tostring(L, 2);
  lc_kernel_push(L, 1, name, "get");
  return 1;
}

/***
The names of the module's kernels.
@function Module:kernels
@treturn {string,...}
@raise `luacuda.kernels: attempt to use a closed module`
@usage local m = luacuda.compile('extern "C" __global__ void a() {} extern "C" __global__ void b() {}')
print(table.concat(m:kernels(), ", "))
*/

/* m:kernels() -> {names} */
static int module_kernels(lua_State *L) {
  lc_modref *m = lc_module_check(L, 1, "kernels");
  lua_createtable(L, m->nkernels, 0);
  int n = 0;
  for (int i = 0; i < m->nkernels; i++) {
    if (named_before(m, i)) continue;
    lua_pushstring(L, m->kernels[i].name);
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

/* The bytes a global's declaration reads as; -1 when it has no array form
** (a type that is not a scalar, bounds that are not integer literals) or
** more bytes than an array can have (an #if branch not compiled may
** declare anything). */
static int64_t decl_bytes(const lc_global_decl *g) {
  if (g->type < 0 || g->ndim < 0) return -1;
  int64_t n;
  char err[LC_ERRLEN];
  if (lc_shape_count(g->ndim, g->dims, lc_dtypes[g->type].size, &n, err)) return -1;
  return n * lc_dtypes[g->type].size;
}

/***
A device array over a `__constant__` or `__device__` variable of the
module, with the dtype and shape of its declaration: write it before a
launch, read it after.
@function Module:get_global
@tparam string name the variable
@treturn Array a device array
@raise `luacuda.get_global: <cause>`: no such variable; a type that has no dtype;
a size that differs from the compiled variable's
@usage local m = luacuda.compile([==[
__constant__ float coef[4];
extern "C" __global__ void k(float *y) { y[threadIdx.x] = coef[threadIdx.x]; }
]==])
m:get_global("coef"):copy_to_device({1, 2, 3, 4})
*/

/* m:get_global(name): a device array over a __constant__ or __device__
** variable, with the dtype and shape of its declaration */
static int module_get_global(lua_State *L) {
  lc_modref *m = lc_module_check(L, 1, "get_global");
  int here = m->be->current_device();
  if (m->device != here)     /* the array made below would say it is on `here` */
    lc_error(L, "get_global", "the module %s is on device %d, but device %d is current "
             "(luacuda.device)", m->name, m->device + 1, here + 1);
  if (lua_type(L, 2) != LUA_TSTRING)
    lc_error(L, "get_global", "name must be a string, got %s", luaL_typename(L, 2));
  const char *name = lua_tostring(L, 2);
  const lc_global_decl *g = NULL;
  for (int i = 0; i < m->nglobals && g == NULL; i++)
    if (strcmp(m->globals[i].name, name) == 0 && !m->globals[i].is_extern) g = &m->globals[i];
  if (g == NULL) lc_error(L, "get_global", "%s has no __constant__ or __device__ variable '%s'",
                          m->name, name);
  void *ptr;
  size_t bytes = 0;
  char err[LC_ERRLEN];
  if (m->be->module_global(m->handle, name, &ptr, &bytes, err))
    lc_error(L, "get_global", "%s", err);
  /* declared in several #if branches: the declaration of the compiled size */
  for (int i = (int)(g - m->globals) + 1; i < m->nglobals; i++) {
    const lc_global_decl *o = &m->globals[i];
    if (strcmp(o->name, name) != 0 || o->is_extern || decl_bytes(o) != (int64_t)bytes) continue;
    bool same = g->type == o->type && g->ndim == o->ndim &&
                memcmp(g->dims, o->dims, sizeof g->dims) == 0;
    if (decl_bytes(g) == (int64_t)bytes && !same)
      lc_error(L, "get_global", "global '%s' is declared more than once in %s (in #if "
               "branches), as types of the same size; rename one", name, m->name);
    g = o;
  }
  if (g->type < 0 || g->ndim < 0 || g->in_namespace)
    lc_error(L, "get_global", "global '%s' (%s) has no array form: its type must be a "
             "scalar type and its bounds integer constant expressions", name, g->type_text);
  const lc_dtype *dt = &lc_dtypes[g->type];
  lc_layout lay;
  if (lc_layout_contiguous(&lay, g->ndim, g->dims, dt->size, 'C', err))
    lc_error(L, "get_global", "%s", err);
  /* as kernel parameters are: the array must be the object, byte for byte */
  if ((int64_t)bytes != lay.size * dt->size)
    lc_error(L, "get_global", "global '%s' (%s) has %zu bytes in the compiled module, but its "
             "declaration reads as %lld (a macro or typedef may change its type)", name,
             g->type_text, bytes, (long long)(lay.size * dt->size));
  lc_array *a = lc_array_push_closed(L, dt);
  a->lay = lay;
  lc_modref_retain(m);
  a->buf = lc_buffer_wrap(L, LC_DEVICE, ptr, (size_t)(lay.size * dt->size), lc_modref_release, m,
                          "get_global");
  return 1;
}

static const luaL_Reg module_methods[] = {
  {"close", module_close},
  {"get", module_get},
  {"get_global", module_get_global},
  {"kernels", module_kernels},
  {NULL, NULL}
};

/***
`m.name`: a method of the module, else the kernel of that name.
@function Module:__index
@raise `luacuda.index: <cause>`: no kernel of that name (the message lists the module's kernels)
@usage local m = luacuda.compile('extern "C" __global__ void k() {}')
local k = m.k
*/

/*** @section end */

/* m.name: a method, else the kernel of that name */
static int module_index(lua_State *L) {
  lc_modref *m = lc_module_check(L, 1, "index");
  if (lua_type(L, 2) != LUA_TSTRING)
    lc_error(L, "index", "a module is indexed with a kernel's name (m.%s or m:get(\"%s\")), "
             "not a %s", m->nkernels ? m->kernels[0].name : "saxpy",
             m->nkernels ? m->kernels[0].name : "saxpy", luaL_typename(L, 2));
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lc_upvalueindex(1)) != LUA_TNIL) return 1;
  lc_kernel_push(L, 1, lua_tostring(L, 2), "index");
  return 1;
}

static int module_tostring(lua_State *L) {
  holder *h = lc_check_userdata(L, 1, MODULE_MT, "a module", "tostring");
  if (h->closed) {
    lua_pushliteral(L, "luacuda.module(closed)");
    return 1;
  }
  lc_modref *m = lc_module_check(L, 1, "tostring");
  char names[512];
  lc_module_kernel_names(m, names, sizeof names);
  lua_pushfstring(L, "luacuda.module(%s: %s)", m->name, names);
  return 1;
}

/* _null() -> luacuda.null (init.lua): a null pointer argument */
static int l_null(lua_State *L) {
  lua_pushlightuserdata(L, NULL);
  return 1;
}

/***
The directory of the disk cache of compiled modules (`LUACUDA_CACHE_DIR`,
else under `XDG_CACHE_HOME` or `~/.cache`).
@function cache_dir
@treturn string|nil the directory, or nil when the disk cache is off
@raise does not raise
@usage print(luacuda.cache_dir())
*/

/* cache_dir() -> the directory, or nil when the disk cache is off */
static int l_cache_dir(lua_State *L) {
  const char *d = lc_cache_dir();
  if (d) lua_pushstring(L, d);
  else luaL_pushfail(L);
  return 1;
}

/***
Removes the compiled modules from the disk cache.
@function clear_cache
@treturn integer the number of files removed
@raise does not raise
@usage print(luacuda.clear_cache())
*/

/* clear_cache() -> the number of files removed from the disk cache */
static int l_clear_cache(lua_State *L) {
  lua_pushinteger(L, lc_cache_clear());
  return 1;
}

void lc_module_open(lua_State *L) {
  static const luaL_Reg mindex = {"__index", module_index};
  static const luaL_Reg mmeta[] = {
    {"__gc", lc_modhold_gc},
    {"__close", module_close},
    {"__tostring", module_tostring},
    {NULL, NULL}
  };
  lc_new_type(L, MODULE_MT, mmeta, NULL);
  luaL_getmetatable(L, MODULE_MT);
  lua_newtable(L);                        /* the methods, upvalue of __index */
  lc_setfuncs(L, module_methods);
  lc_pushfunction(L, &mindex, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  static const luaL_Reg fns[] = {
    {"compile", l_compile},
    {"compile_file", l_compile_file},
    {"cache_dir", l_cache_dir},
    {"clear_cache", l_clear_cache},
    {"_null", l_null},
    {NULL, NULL}
  };
  lc_setfuncs(L, fns);
}
