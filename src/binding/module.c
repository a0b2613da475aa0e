/*
** module: luacuda.compile / compile_file, Module and Kernel objects, and the
** two launch forms k[{grid, block, ...}](args...) and k:launch(cfg, args...).
** The source is scanned for kernels and their parameters before the
** backend compiles it; signatures= replaces what the scanner read.
*/
#include "kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "aux.h"
#include "cache.h"
#include "gate.h"
#include "ksource.h"
#include "probe.h"

#define MODULE_MT "luacuda.module"
#define KERNEL_MT "luacuda.kernel"

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
static void modref_release(void *ud) {
  lc_modref *m = ud;
  if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1) return;
  m->be->defer(modref_free, m);
}

static void modref_retain(lc_modref *m) {
  atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
}

/* The Module object is an lc_modhold, pushed before anything is
** allocated, so an error at any later step frees everything. */
typedef lc_modhold holder;

static void hold_finish(lua_State *L, int idx) {
  lc_modhold *h = lua_touserdata(L, idx);
  if (h->mod) modref_release(h->mod);
  h->mod = NULL;
}

static int hold_gc(lua_State *L) {
  hold_finish(L, 1);
  return 0;
}

static const lc_closer hold_closer = {hold_finish};

/* close(): the object lets go of its module, which is unloaded once
** nothing holds it (kernels and global arrays hold it too) */
static void hold_close(lua_State *L, const char *tname, const char *what) {
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
  hold_close(L, MODULE_MT, "a module");
  return 0;
}

/* A module object resurrected by a finalizer after its own (an object
** collected in the same cycle may keep it) holds nothing any more. */
static lc_modref *check_module(lua_State *L, int idx, const char *fname) {
  holder *h = lc_check_userdata(L, idx, MODULE_MT, "a module", fname);
  if (h->closed) lc_error(L, fname, "attempt to use a closed module");
  if (h->mod == NULL) lc_error(L, fname, "attempt to use a module after its finalizer ran");
  return h->mod;
}

/* ---- the in-process cache: modules by what made them; each entry holds a
** reference, so a module compiled once stays for the process. States on
** several threads share it: an entry without a module is being compiled,
** and a thread that wants the same key waits for it rather than compiling
** it again. -------------------------------------------------------------- */

typedef struct cached { lc_hash key; lc_modref *mod; } cached;   /* mod NULL: in flight */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cache_settled = PTHREAD_COND_INITIALIZER;
static cached *cache;
static size_t ncache, capcache;

/* The entry for key, or NULL (caller holds the lock). */
static cached *cache_entry(const lc_hash *key) {
  for (size_t i = 0; i < ncache; i++)
    if (cache[i].key.a == key->a && cache[i].key.b == key->b) return &cache[i];
  return NULL;
}

/* The compiled module for key, retained; NULL when there is none yet. */
static lc_modref *cache_find(const lc_hash *key) {
  pthread_mutex_lock(&cache_lock);
  cached *c = cache_entry(key);
  lc_modref *m = c ? c->mod : NULL;
  if (m) modref_retain(m);
  pthread_mutex_unlock(&cache_lock);
  return m;
}

/* The module for key, retained, once any compilation of it in flight has
** settled; or NULL, and then *claimed says whether the caller now owns the
** key's compilation: it must end it with cache_settle, raising
** no Lua error in between (waiting threads would wait forever). Without
** room for the entry the caller compiles without caching. */
static lc_modref *cache_claim(const lc_hash *key, bool *claimed) {
  lc_modref *m = NULL;
  *claimed = false;
  pthread_mutex_lock(&cache_lock);
  cached *c;
  while ((c = cache_entry(key)) != NULL && c->mod == NULL)
    pthread_cond_wait(&cache_settled, &cache_lock);
  if (c) {
    m = c->mod;
    modref_retain(m);
  } else {
    if (ncache == capcache) {
      size_t cap = capcache ? 2 * capcache : 16;
      cached *grown = realloc(cache, cap * sizeof *grown);
      if (grown) {
        cache = grown;
        capcache = cap;
      }
    }
    if (ncache < capcache) {
      cache[ncache++] = (cached){*key, NULL};
      *claimed = true;
    }
  }
  pthread_mutex_unlock(&cache_lock);
  return m;
}

/* End a claimed compilation: m compiled (the cache takes a reference) or,
** with m NULL, failed (the entry goes; a waiting thread tries itself). */
static void cache_settle(const lc_hash *key, lc_modref *m) {
  pthread_mutex_lock(&cache_lock);
  cached *c = cache_entry(key);
  if (m) {
    modref_retain(m);
    c->mod = m;
  } else {
    *c = cache[--ncache];
  }
  pthread_cond_broadcast(&cache_settled);
  pthread_mutex_unlock(&cache_lock);
}

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

/* ---- compiling ------------------------------------------------------------ */

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

/* ---- kernels with C++ linkage: name expressions ---------------------------- */

static void kernel_names(const lc_modref *m, char *buf, size_t len);

/* A piece of text: a template's parameter or argument. */
typedef struct piece { const char *p; size_t n; } piece;

static piece trimmed(const char *p, size_t n) {
  while (n > 0 && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++, n--;
  while (n > 0 && strchr(" \t\n\r", p[n - 1])) n--;
  return (piece){p, n};
}

/* The list between the '<' at p and its '>' split at its top-level commas
** into out (at most max); the count, or -1 when it does not close. */
static int split_angles(const char *p, const char *end, piece *out, int max) {
  int depth = 0, paren = 0, n = 0;
  const char *item = p + 1;
  for (const char *c = p; c < end; c++) {
    if (*c == '(' || *c == '[') paren++;
    else if ((*c == ')' || *c == ']') && paren > 0) paren--;
    else if (*c == '<' && paren == 0) depth++;
    else if (*c == '>' && paren == 0 && --depth == 0) {
      piece last = trimmed(item, (size_t)(c - item));
      if (last.n > 0 || n > 0) {
        if (n == max) return -1;
        out[n++] = last;
      }
      return n;
    } else if (*c == ',' && depth == 1 && paren == 0) {
      if (n == max) return -1;
      out[n++] = trimmed(item, (size_t)(c - item));
      item = c + 1;
    }
  }
  return -1;
}

static bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The kernel a name expression names: its last name ("sq" of "&sq<int>",
** "f" of "ns::f" and of "static_cast<void (*)(int *)>(f)") into base, and
** where its template arguments start ('<'), or NULL. */
static void expr_base(const char *e, char *base, size_t cap, const char **targs) {
  *targs = NULL;
  while (*e == ' ' || *e == '\t') e++;
  if (strncmp(e, "static_cast", 11) == 0 && strrchr(e, '(')) e = strrchr(e, '(') + 1;
  while (*e == ' ' || *e == '&') e++;
  const char *start = e, *p = e;
  for (; *p && (ident_char(*p) || *p == ':'); p++)
    if (p[0] == ':' && p[1] == ':') start = p + 2;
  size_t n = (size_t)(p - start) < cap ? (size_t)(p - start) : cap - 1;
  memcpy(base, start, n);
  base[n] = '\0';
  while (*p == ' ') p++;
  if (*p == '<') *targs = p;
}

/* sig (a copy of template kernel k of module m) with the template
** arguments of expr put in for its parameters, which may then name the
** source's structs (a functor by value: `apply<Saxpy>`); nparams -1 and
** error set when that cannot be read. False (why in sig->error) when the
** arguments do not fit the template's parameters: the expression names
** nothing. */
static bool instantiate(lc_kernel_sig *sig, const lc_modref *m, const char *src,
                        const lc_kernel_sig *k, const char *targs) {
  piece params[16], args[16];
  char why[LC_ERRLEN] = "";
  const char *head = src + k->decl_begin, *hend = src + k->params_begin;
  const char *t = head;
  while (t < hend && !(strncmp(t, "template", 8) == 0 && (t == head || !ident_char(t[-1])) &&
                       !ident_char(t[8])))
    t++;
  while (t < hend && *t != '<') t++;
  int np = t < hend ? split_angles(t, hend, params, 16) : -1;
  int na = split_angles(targs, targs + strlen(targs), args, 16);
  if (np < 0 || na < 0) {
    snprintf(why, sizeof why, "its template parameters cannot be read");
  } else if (na > np) {
    snprintf(why, sizeof why, "%d template arguments for %d template parameters", na, np);
  }
  /* each parameter's name (its last word before any default), and what
  ** stands for it: the argument, else the default */
  piece names[16], with[16];
  bool fits = true;
  for (int i = 0; why[0] == '\0' && i < np; i++) {
    const char *p = params[i].p, *e = p + params[i].n;
    const char *eq = memchr(p, '=', params[i].n);
    const char *nend = eq ? eq : e;
    while (nend > p && !ident_char(nend[-1])) nend--;
    const char *nb = nend;
    while (nb > p && ident_char(nb[-1])) nb--;
    names[i] = (piece){nb, (size_t)(nend - nb)};
    if (memchr(p, '.', params[i].n) || names[i].n == 0)
      snprintf(why, sizeof why, "template parameter %d ('%.*s') is not a type or an integer",
               i + 1, (int)params[i].n, params[i].p);
    else if (i < na) with[i] = args[i];
    else if (eq) with[i] = trimmed(eq + 1, (size_t)(e - eq - 1));
    else snprintf(why, sizeof why, "no argument for template parameter '%.*s'",
                  (int)names[i].n, names[i].p);
  }
  if (why[0]) {
    snprintf(sig->error, sizeof sig->error, "%s", why);
    return false;
  }
  char text[1024];
  size_t n = 0;
  const char *p = src + k->params_begin, *end = src + k->params_end;
  while (why[0] == '\0' && p < end) {
    const char *w = p;
    if (ident_char(*p)) {
      while (p < end && ident_char(*p)) p++;
    } else p++;
    piece put = {w, (size_t)(p - w)};
    for (int i = 0; i < np && ident_char(*w); i++)
      if (names[i].n == put.n && memcmp(names[i].p, w, put.n) == 0) put = with[i];
    if (n + put.n + 2 >= sizeof text) {
      snprintf(why, sizeof why, "kernel '%s': its parameter list is too long", sig->name);
      break;
    }
    text[n++] = ' ';
    memcpy(text + n, put.p, put.n);
    n += put.n;
  }
  char err[LC_ERRLEN];
  if (why[0] == '\0' && lc_parse_signature_structs(text, n, m->structs, m->nstructs, sig, err) != 0)
    snprintf(why, sizeof why, "%s", err);
  if (why[0]) {
    sig->nparams = -1;
    snprintf(sig->error, sizeof sig->error, "%s", why);   /* names the kernel */
  }
  return fits;
}

/* An overload picked by a cast, "static_cast<void (*)(float *)>(fill)":
** its parameters are the cast's (the last parenthesized list before the
** cast's operand). */
static void cast_params(lc_kernel_sig *sig, const char *e) {
  while (*e == ' ') e++;
  if (strncmp(e, "static_cast", 11) != 0) return;
  const char *operand = strrchr(e, '(');
  const char *close = operand;
  while (close > e && *close != ')') close--;
  const char *open = close;
  int depth = 0;
  for (; open > e; open--) {
    if (*open == ')') depth++;
    else if (*open == '(' && --depth == 0) break;
  }
  if (open <= e || close <= open) return;
  char err[LC_ERRLEN];
  if (lc_parse_signature(open + 1, (size_t)(close - open - 1), sig, err) != 0) {
    sig->nparams = -1;
    snprintf(sig->error, sizeof sig->error, "%s", err);
  }
}

/* The name expressions at idx (a sequence of strings, or nil) into m->named,
** each from the kernel it names; the source's text for templates. */
static void build_named(lua_State *L, int idx, lc_modref *m, const char *src, const char *fname) {
  if (lua_isnil(L, idx)) return;
  int n = (int)lua_rawlen(L, idx);
  m->named = calloc((size_t)n + 1, sizeof *m->named);
  if (m->named == NULL) lc_error(L, fname, "out of host memory");
  for (int j = 0; j < n; j++) {
    lua_rawgeti(L, idx, j + 1);
    const char *e = lua_tostring(L, -1);
    lua_pop(L, 1);                        /* the table keeps it */
    char base[128];
    const char *targs;
    expr_base(e, base, sizeof base, &targs);
    const lc_kernel_sig *k = NULL;
    for (int i = 0; i < m->nkernels && k == NULL; i++)
      if (strcmp(m->kernels[i].name, base) == 0 && (targs == NULL || m->kernels[i].is_template))
        k = &m->kernels[i];
    if (k == NULL) {
      char names[512];
      kernel_names(m, names, sizeof names);
      lc_error(L, fname, "name_expressions[%d] '%s' names no %skernel of %s (its kernels: %s)",
               j + 1, e, targs ? "template " : "", m->name, names);
    }
    lc_kernel_sig *sig = &m->named[j];
    *sig = *k;
    snprintf(sig->name, sizeof sig->name, "%s", e);
    sig->extern_c = false;
    sig->is_template = false;
    if (targs && !instantiate(sig, m, src, k, targs))
      lc_error(L, fname, "name_expressions[%d] '%s': %s", j + 1, e, sig->error);
    if (targs == NULL) cast_params(sig, e);
    m->nnamed = j + 1;
  }
}

/* The names the backend resolves (lc_source.names): the name expressions
** (at idx), then each kernel with C++ linkage found by its own name: not a
** template, not in a namespace, the only kernel of its name. Pushes the
** array (a userdata) and returns it; *n its count. */
static const char **resolve_names(lua_State *L, int idx, const lc_modref *m, int *n) {
  int given = lua_isnil(L, idx) ? 0 : (int)lua_rawlen(L, idx);
  const char **names = lua_newuserdatauv(L, sizeof *names * (size_t)(given + m->nkernels + 1), 0);
  *n = 0;
  for (int j = 0; j < given; j++) {
    lua_rawgeti(L, idx, j + 1);
    names[(*n)++] = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  for (int i = 0; i < m->nkernels && *n < 4 * LC_MAX_NAMES; i++) {
    const lc_kernel_sig *k = &m->kernels[i];
    if (k->extern_c || k->is_template || k->in_namespace) continue;
    bool alone = true, listed = false;
    for (int j = 0; j < m->nkernels; j++)
      alone = alone && (j == i || strcmp(m->kernels[j].name, k->name) != 0);
    for (int j = 0; j < given; j++) listed = listed || strcmp(names[j], k->name) == 0;
    if (alone && !listed) names[(*n)++] = k->name;
  }
  return names;
}

/* opts.name_expressions: nil, or a sequence of at most LC_MAX_NAMES strings,
** each one line. */
static void check_name_expressions(lua_State *L, bool has_opts, const char *fname) {
  if (!has_opts) return;
  lc_opt_get(L, 2, "name_expressions");
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TTABLE)
      lc_error(L, fname, "name_expressions must be a table of strings, got %s",
               luaL_typename(L, -1));
    size_t n = lua_rawlen(L, -1);
    if (n > LC_MAX_NAMES) lc_error(L, fname, "more than %d name_expressions", LC_MAX_NAMES);
    for (size_t i = 0; i < n; i++) {
      lua_rawgeti(L, -1, (lua_Integer)i + 1);
      if (lua_type(L, -1) != LUA_TSTRING)
        lc_error(L, fname, "name_expressions[%zu] must be a string, got %s", i + 1,
                 luaL_typename(L, -1));
      size_t len;
      const char *e = lua_tolstring(L, -1, &len);
      if (len == 0 || len >= 128 || strlen(e) != len || strchr(e, '\n'))
        lc_error(L, fname, "name_expressions[%zu] must be one line of 1 to 127 bytes", i + 1);
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
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
  check_name_expressions(L, has_opts, fname);
  /* options: a sequence of strings, gathered into an array of pointers */
  const char *given[LC_KSOURCE_MAXOPTS];
  int ngiven = 0;
  if (!lua_isnil(L, 3)) {
    if (lua_type(L, 3) != LUA_TTABLE)
      lc_error(L, fname, "options must be a table of strings, got %s", luaL_typename(L, 3));
    size_t n = lua_rawlen(L, 3);
    if (n > LC_KSOURCE_MAXOPTS) lc_error(L, fname, "more than %d options", LC_KSOURCE_MAXOPTS);
    for (size_t i = 0; i < n; i++) {
      lua_rawgeti(L, 3, (lua_Integer)i + 1);
      if (lua_type(L, -1) != LUA_TSTRING)
        lc_error(L, fname, "options[%zu] must be a string, got %s", i + 1, luaL_typename(L, -1));
      given[ngiven++] = lua_tostring(L, -1);
      lua_pop(L, 1);                      /* still referenced by the table */
    }
  }
  /* in the one spelling every backend takes (ksource.h) */
  lc_kopts *ko = lua_newuserdatauv(L, lc_kopts_size(given, ngiven), 1);
  lua_pushvalue(L, 3);
  lua_setiuservalue(L, -2, 1);            /* the given strings, alive while ko is */
  lua_replace(L, 3);                      /* 3: ko */
  char err[LC_ERRLEN];
  if (lc_kopts_normalize(given, ngiven, ko, err)) lc_error(L, fname, "%s", err);
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
  if ((h->mod = cache_find(&key)) != NULL) return 1;
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
  build_named(L, 7, m, src, fname);
  apply_signatures(L, 4, m, fname);
  int nnames;
  const char **names = resolve_names(L, 7, m, &nnames);    /* 8 */
  /* another state may have compiled it meanwhile, or be compiling it */
  bool claimed;
  lc_modref *done = cache_claim(&key, &claimed);
  if (done) {
    h->mod = done;
    modref_release(m);
    lua_settop(L, 5);
    return 1;
  }
  lc_source s = {src, len, m->name, opts, nopts, &r, names, nnames};
  char *log = NULL;
  int rc = m->be->module_load(&s, &m->handle, &log, err);
  if (rc == LC_OK) take_compiled_layouts(m);
  if (claimed) cache_settle(&key, rc == LC_OK ? m : NULL);
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

/* ---- kernels ----------------------------------------------------------------- */

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
  hold_close(L, KERNEL_MT, "a kernel");
  return 0;
}

/* The kernels of m, as "a, b, c". */
/* Whether kernel i's name came before it (defined in another #if branch). */
static bool named_before(const lc_modref *m, int i) {
  for (int j = 0; j < i; j++)
    if (strcmp(m->kernels[j].name, m->kernels[i].name) == 0) return true;
  return false;
}

static void kernel_names(const lc_modref *m, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < m->nkernels && n < len; i++)
    if (!named_before(m, i))
      n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", m->kernels[i].name);
  if (m->nkernels == 0) snprintf(buf, len, "none");
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
  modref_retain(m);
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
** the only kernel of that name (resolve_names), else an error that says
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
static void push_kernel(lua_State *L, int midx, const char *name, const char *fname) {
  lc_modref *m = check_module(L, midx, fname);
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
    kernel_names(m, names, sizeof names);
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
  check_module(L, 1, "get");
  if (lua_type(L, 2) != LUA_TSTRING)
    lc_error(L, "get", "kernel name must be a string, got %s", luaL_typename(L, 2));
  const char *name = lua_tostring(L, 2);
  push_kernel(L, 1, name, "get");
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
  lc_modref *m = check_module(L, 1, "kernels");
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
  lc_modref *m = check_module(L, 1, "get_global");
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
  modref_retain(m);
  a->buf = lc_buffer_wrap(L, LC_DEVICE, ptr, (size_t)(lay.size * dt->size), modref_release, m,
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
  lc_modref *m = check_module(L, 1, "index");
  if (lua_type(L, 2) != LUA_TSTRING)
    lc_error(L, "index", "a module is indexed with a kernel's name (m.%s or m:get(\"%s\")), "
             "not a %s", m->nkernels ? m->kernels[0].name : "saxpy",
             m->nkernels ? m->kernels[0].name : "saxpy", luaL_typename(L, 2));
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lc_upvalueindex(1)) != LUA_TNIL) return 1;
  push_kernel(L, 1, lua_tostring(L, 2), "index");
  return 1;
}

static int module_tostring(lua_State *L) {
  holder *h = lc_check_userdata(L, 1, MODULE_MT, "a module", "tostring");
  if (h->closed) {
    lua_pushliteral(L, "luacuda.module(closed)");
    return 1;
  }
  lc_modref *m = check_module(L, 1, "tostring");
  char names[512];
  kernel_names(m, names, sizeof names);
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
    {"__gc", hold_gc},
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
  static const luaL_Reg kindex = {"__index", kernel_index};
  static const luaL_Reg klaunch = {"launch", kernel_launch};
  static const luaL_Reg kclose = {"close", kernel_close};
  static const luaL_Reg kmeta[] = {
    {"__gc", hold_gc},
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
