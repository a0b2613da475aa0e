/*
** scan_decl: the declarations the scanner reads at their end (see scan.c):
** variables (__shared__ in and out of bodies; __constant__, __device__ and
** __managed__ globals), typedefs and aliases, struct definitions with their
** layout, enumerations, and integer constants.
*/
#include "scan_internal.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* ---- variable declarations (shared memory, globals) ----------------------- */

enum { V_SHARED, V_GLOBAL };

#define MAXTYTOK 64

/* Normalized text of the tokens from lexer state y up to offset end. */
static void range_text(lx y, size_t end, sbuf *b) {
  tok t;
  for (;;) {
    lx_next(&y, &t);
    if (t.k == T_EOF || t.b >= end) return;
    sb_tok(b, &t);
  }
}

/* The next token into t, and the lexer before it into before. */
static void adv(lx *y, lx *before, tok *t) {
  *before = *y;
  lx_next(y, t);
}

static bool opener(const char *s, const tok *t) {
  return tpun1(s, t, '(') || tpun1(s, t, '[') || tpun1(s, t, '{');
}

static bool closer(const char *s, const tok *t) {
  return tpun1(s, t, ')') || tpun1(s, t, ']') || tpun1(s, t, '}');
}

/* t opens a group: move to its closer (false if the declaration ends
** first). *inner and *ninner: the first token inside, and how many. */
static bool skip_bal(const char *s, lx *y, lx *yb, tok *t, size_t end, tok *inner, int *ninner) {
  int depth = 1, k = 0;
  for (;;) {
    adv(y, yb, t);
    if (t->k == T_EOF || t->b >= end) return false;
    if (opener(s, t)) depth++;
    else if (closer(s, t) && --depth == 0) break;
    if (inner && k == 0) *inner = *t;
    k++;
  }
  if (ninner) *ninner = k;
  return true;
}

/* The index of the ']' that closes the '[' at m[open], or -1. */
static int bracket_end(const char *s, const tok *m, int nm, int open) {
  int depth = 0;
  for (int i = open; i < nm; i++) {
    if (tpun1(s, &m[i], '[') || tpun1(s, &m[i], '(')) depth++;
    else if ((tpun1(s, &m[i], ']') || tpun1(s, &m[i], ')')) && --depth == 0)
      return tpun1(s, &m[i], ']') ? i : -1;
  }
  return -1;
}

/* The value of the array bound from lexer state y to offset close (its
** ']'), if it is a positive constant expression. */
static bool bound_value(const scanner *sc, lx y, size_t close, int64_t *v) {
  tok t[32];
  int n = 0;
  for (;;) {
    tok a;
    lx_next(&y, &a);
    if (a.k == T_EOF || a.b >= close) break;
    if (n == 32) return false;
    t[n++] = a;
  }
  return const_expr(sc->s, t, n, &sc->defs, v) && *v > 0;
}

/* The specifiers of a variable declaration, read by var_specifiers. */
typedef struct vhead {
  size_t begin;           /* the offset of the declaration's first token */
  tok ty[MAXTYTOK];       /* the type's tokens */
  int nty;
  tspec ts;
  bool ext, stat, constant, managed;
  bool named, other;      /* a type name seen; a type we cannot code */
  int64_t align;          /* __align__(N), alignas(N): N; -1: not a literal */
} vhead;

/* One declarator of it, read by var_declarator. */
typedef struct vdecl {
  lx dl, dimstart;        /* the lexer before the declarator, and before its first '[' */
  size_t dbegin, dend;    /* its text */
  tok name;
  bool has_name, complex, ptr, dims_known, dims_seen;
  int ndim;
  int64_t dims[3];
} vdecl;

/* What a declaration's reader does after a token of its specifiers: skip
** the declaration (one it does not understand), read on, or read the
** declarators from this token; or -1, an error. */
enum { VS_SKIP, VS_NEXT, VS_DECLARATOR };

static int record_shared(scanner *sc, const vhead *h, const char *type, size_t end,
                         const vdecl *v, bool in_func, int kernel) {
  const char *s = sc->s;
  lc_scan_result *r = sc->r;
  if (r->nshared == INT_MAX) return scan_fail(sc, "too many __shared__ declarations");
  /* without an array the entry is built all the same, so that counting
  ** fails exactly where filling would */
  lc_shared_decl scratch, *e = &scratch;
  if (r->shared) {
    if (r->nshared >= r->max_shared)
      return scan_fail(sc, "more than %d __shared__ declarations", r->max_shared);
    e = &r->shared[r->nshared];
  }
  memset(e, 0, sizeof *e);
  e->begin = h->begin;
  e->end = end + 1;
  e->decl_begin = v->dbegin;
  e->decl_end = v->dend;
  e->line = v->name.line;
  e->is_extern = h->ext;
  e->in_function = in_func;
  e->kernel = kernel;
  e->align = h->align;
  if (!copy_tok(s, &v->name, e->name, sizeof e->name))
    return scan_fail(sc, "line %d: a name longer than %d bytes", v->name.line,
                     (int)sizeof e->name - 1);
  memcpy(e->type, type, sizeof e->type);
  sbuf b;
  bool trunc;
  sb_init(&b, e->dims, sizeof e->dims, s);
  if (v->dims_seen) range_text(v->dimstart, v->dend, &b);
  trunc = b.trunc;
  sb_init(&b, e->declarator, sizeof e->declarator, s);
  range_text(v->dl, v->dend, &b);
  trunc = trunc || b.trunc;
  sb_init(&b, e->text, sizeof e->text, s);
  for (int i = 0; i < h->nty; i++) sb_tok(&b, &h->ty[i]);
  range_text(v->dl, v->dend, &b);
  if (trunc || b.trunc)
    return scan_fail(sc, "line %d: __shared__ declaration of '%s' too long", v->name.line,
                     e->name);
  r->nshared++;
  return 0;
}

static int record_global(scanner *sc, const vhead *h, const char *type, int code, size_t end,
                         const vdecl *v, bool in_ns) {
  lc_scan_result *r = sc->r;
  if (r->nglobals == INT_MAX) return scan_fail(sc, "too many global variables");
  lc_global_decl scratch, *g = &scratch;
  if (r->globals) {
    if (r->nglobals >= r->max_globals)
      return scan_fail(sc, "more than %d __constant__ / __device__ variables", r->max_globals);
    g = &r->globals[r->nglobals];
  }
  memset(g, 0, sizeof *g);
  if (!copy_tok(sc->s, &v->name, g->name, sizeof g->name))
    return scan_fail(sc, "line %d: a name longer than %d bytes", v->name.line,
                     (int)sizeof g->name - 1);
  sbuf b;
  sb_init(&b, g->type_text, sizeof g->type_text, sc->s);
  sb_raw(&b, type, strlen(type));
  if (v->ptr) sb_raw(&b, " *", 2);
  if (b.trunc)
    return scan_fail(sc, "line %d: declaration type longer than %d bytes", v->name.line,
                     (int)sizeof g->type_text - 1);
  g->type = (v->ptr || code < 0) ? -1 : code;
  g->ndim = (!v->dims_known || v->ndim > 3) ? -1 : v->ndim;
  for (int i = 0; i < v->ndim && i < 3 && g->ndim > 0; i++) g->dims[i] = v->dims[i];
  g->is_constant = h->constant;
  g->is_managed = h->managed;
  g->is_extern = h->ext;
  g->is_static = h->stat;
  g->in_namespace = in_ns;
  g->line = v->name.line;
  g->begin = h->begin;
  g->end = end + 1;
  r->nglobals++;
  return 0;
}

/* __align__(16), alignas(16), __attribute__((...)) at t; y just past it. */
static int var_attribute(const char *s, lx *y, lx *yb, const tok *t, size_t end, vhead *h) {
  bool al = teq(s, t, "__align__") || teq(s, t, "alignas") || teq(s, t, "_Alignas");
  lx save = *y;
  tok g, inner;
  int ng = 0;
  adv(y, yb, &g);
  if (!tpun1(s, &g, '(')) {
    *y = save;
    return VS_NEXT;
  }
  if (!skip_bal(s, y, yb, &g, end, &inner, &ng)) return VS_SKIP;
  if (al) {
    int64_t v;
    h->align = (ng == 1 && inner.k == T_NUM && int_literal(s + inner.b, inner.e - inner.b, &v))
               ? v : -1;
  }
  return VS_NEXT;
}

/* A type word among a variable declaration's specifiers, or the
** declarator's name. */
static int var_type_word(scanner *sc, const tok *t, vhead *h) {
  const char *s = sc->s;
  tspec *ts = &h->ts;
  bool typeword = false;
  if (teq(s, t, "const")) {
    ts->cnst = true;
    typeword = true;
  } else if (teq(s, t, "volatile")) {
    typeword = true;
  } else if (!h->named && ts_word(ts, s, t)) {
    typeword = true;
  } else if (!h->named && !ts_any(ts)) {
    /* a type name: MyStruct, std::uint32_t, Foo<int, 3>, struct S */
    int code = typedef_code(&sc->td, s, t, NULL);
    h->named = true;
    typeword = true;
    if (code >= 0) ts->named = code;
    else h->other = true;
    if (teq(s, t, "struct") || teq(s, t, "class") || teq(s, t, "union") ||
        teq(s, t, "enum") || teq(s, t, "std"))
      h->named = false;                                 /* the name follows */
  }
  if (!typeword) return VS_DECLARATOR;                  /* the declarator's name */
  if (h->nty == MAXTYTOK) return scan_fail(sc, "line %d: declaration type too long", t->line);
  h->ty[h->nty++] = *t;
  return VS_NEXT;
}

/* A word among a variable declaration's specifiers (y just past it). */
static int var_word(scanner *sc, lx *y, lx *yb, const tok *t, size_t end, vhead *h) {
  static const char *const skip[] = {
    "__shared__", "__device__", "__host__", "inline", "__inline__", "__forceinline__",
    "constexpr", "thread_local", "register", "mutable", "__restrict__", "__restrict",
    "restrict", "typename", NULL,
  };
  const char *s = sc->s;
  if (teq(s, t, "extern")) h->ext = true;
  else if (teq(s, t, "static")) h->stat = true;
  else if (teq(s, t, "__constant__")) h->constant = true;
  else if (teq(s, t, "__managed__")) h->managed = true;
  else if (any_of(s, t, skip)) (void)0;
  else if (is_attr_word(s, t)) return var_attribute(s, y, yb, t, end, h);
  else return var_type_word(sc, t, h);
  return VS_NEXT;
}

/* Template arguments from the '<' at t: they belong to the type. */
static int var_template_args(scanner *sc, lx *y, lx *yb, tok *t, size_t end, vhead *h) {
  int depth = 0;
  h->other = true;
  for (;;) {
    if (h->nty == MAXTYTOK) return scan_fail(sc, "line %d: declaration type too long", t->line);
    h->ty[h->nty++] = *t;
    if (tpun1(sc->s, t, '<')) depth++;
    else if (tpun1(sc->s, t, '>') && --depth == 0) return VS_NEXT;
    adv(y, yb, t);
    if (t->k == T_EOF || t->b >= end) return VS_SKIP;
  }
}

/* The specifiers, from lexer state y to the declarators: then t is the
** first token of the first one, yb the lexer before it. */
static int var_specifiers(scanner *sc, lx *y, lx *yb, tok *t, size_t end, vhead *h) {
  const char *s = sc->s;
  bool first = true;
  for (;;) {
    int rc = VS_NEXT;
    adv(y, yb, t);
    if (t->k == T_EOF || t->b >= end) return VS_SKIP;
    if (first) h->begin = t->b;
    first = false;
    if (t->k == T_STR) continue;                        /* extern "C" */
    if (t->k == T_ID) {
      rc = var_word(sc, y, yb, t, end, h);
    } else if (tpun(s, t, "::")) {
      if (h->nty == MAXTYTOK) return scan_fail(sc, "line %d: declaration type too long", t->line);
      /* std::uint32_t and ::uint32_t are known; a::b is not */
      h->other = h->other || h->ts.named != -1 || ts_any(&h->ts);
      if (h->nty >= 1 && teq(s, &h->ty[h->nty - 1], "std") &&
          (h->nty == 1 || !tpun(s, &h->ty[h->nty - 2], "::")))
        h->other = false;
      h->ty[h->nty++] = *t;
      h->named = false;
      h->ts.named = -1;
    } else if (tpun1(s, t, '<') && h->named) {
      rc = var_template_args(sc, y, yb, t, end, h);
    } else if (tpun1(s, t, '[')) {
      /* [[attribute]] */
      if (!skip_bal(s, y, yb, t, end, NULL, NULL)) rc = VS_SKIP;
    } else if (tpun1(s, t, '*') || tpun1(s, t, '&') || tpun(s, t, "&&") || tpun1(s, t, '(')) {
      rc = VS_DECLARATOR;
    } else {
      rc = VS_SKIP;                                     /* struct S { ... } x; and the like */
    }
    if (rc != VS_NEXT) return rc;
  }
}

/* One declarator from t (yb the lexer before it), up to its ',', '=' or
** brace initializer; false if the declaration ends inside a group. */
static bool var_declarator(scanner *sc, lx *y, lx *yb, tok *t, size_t end, vdecl *v) {
  const char *s = sc->s;
  int depth = 0;
  memset(v, 0, sizeof *v);
  v->dl = v->dimstart = *yb;
  v->dbegin = v->dend = t->b;
  v->name = *t;
  v->dims_known = true;
  while (t->k != T_EOF && t->b < end) {
    if (depth == 0) {
      if (tpun1(s, t, ',') || tpun1(s, t, '=')) break;
      if (tpun1(s, t, '{') && v->has_name) {
        /* int x{5}: a brace initializer ends the declarator */
        if (!skip_bal(s, y, yb, t, end, NULL, NULL)) return false;
        adv(y, yb, t);
        break;
      }
      if (tpun1(s, t, '*') || tpun1(s, t, '&') || tpun(s, t, "&&")) {
        if (v->has_name) v->complex = true;
        v->ptr = true;
      } else if (is_qual(s, t)) {
        (void)0;
      } else if (is_attr_word(s, t)) {
        lx save = *y, saveb = *yb;
        tok g = *t;
        adv(y, yb, t);
        if (tpun1(s, t, '(')) {
          if (!skip_bal(s, y, yb, t, end, NULL, NULL)) return false;
        } else {
          *y = save;
          *yb = saveb;
          *t = g;
        }
      } else if (t->k == T_ID && !v->has_name && !is_keyword(s, t)) {
        v->name = *t;
        v->has_name = true;
      } else if (tpun1(s, t, '[') && v->has_name) {
        /* one bound; a constant expression is a known dimension */
        lx open = *y;
        int64_t n;
        if (!v->dims_seen) v->dimstart = *yb;
        v->dims_seen = true;
        if (!skip_bal(s, y, yb, t, end, NULL, NULL)) return false;
        if (bound_value(sc, open, t->b, &n)) {
          if (v->ndim < 3) v->dims[v->ndim] = n;
        } else {
          v->dims_known = false;
        }
        v->ndim++;
        v->dend = t->e;
        adv(y, yb, t);
        continue;
      } else {
        v->complex = true;                /* (*fp)(int), f(int), x(5) */
      }
    }
    if (opener(s, t)) depth++;
    else if (closer(s, t) && depth > 0) depth--;
    v->dend = t->e;
    adv(y, yb, t);
  }
  return true;
}

/* At a declarator's '=': past its initializer, to the next ',' outside
** brackets (or the declaration's end). */
static void skip_initializer(const char *s, lx *y, lx *yb, tok *t, size_t end) {
  int depth = 0;
  for (;;) {
    adv(y, yb, t);
    if (t->k == T_EOF || t->b >= end) return;
    if (depth == 0 && tpun1(s, t, ',')) return;
    if (opener(s, t)) depth++;
    else if (closer(s, t) && depth > 0) depth--;
  }
}

/* A declaration [start, end) where end is the offset of its ';': every
** declarator is recorded as a shared or global entry. Declarations it does
** not understand are skipped: the compiler judges them. */
static int parse_var(scanner *sc, lx y, size_t end, int what, bool in_func, int kernel,
                     bool in_ns) {
  const char *s = sc->s;
  tok t;
  lx yb;
  vhead h;
  memset(&h, 0, sizeof h);
  ts_init(&h.ts);
  int rc = var_specifiers(sc, &y, &yb, &t, end, &h);
  if (rc != VS_DECLARATOR) return rc == VS_SKIP ? 0 : -1;
  if (h.nty == 0 || (!h.named && !ts_any(&h.ts))) return 0;
  int code = h.other ? -2 : ts_resolve(&h.ts);
  char type[128];
  sbuf tb;
  sb_init(&tb, type, sizeof type, s);
  for (int i = 0; i < h.nty; i++) sb_tok(&tb, &h.ty[i]);
  if (tb.trunc)
    return scan_fail(sc, "line %d: declaration type longer than %d bytes", h.ty[0].line,
                     (int)sizeof type - 1);
  /* the declarators; t is the first token of the first one, yb the lexer before it */
  for (;;) {
    vdecl v;
    if (!var_declarator(sc, &y, &yb, &t, end, &v)) return 0;
    if (t.k != T_EOF && t.b < end && tpun1(s, &t, '=')) skip_initializer(s, &y, &yb, &t, end);
    if (v.has_name && !v.complex) {
      rc = what == V_SHARED ? record_shared(sc, &h, type, end, &v, in_func, kernel)
                            : record_global(sc, &h, type, code, end, &v, in_ns);
      if (rc != 0) return -1;
    }
    if (t.k == T_EOF || t.b >= end || !tpun1(s, &t, ',')) return 0;
    adv(&y, &yb, &t);
  }
}

/* In a body: a __shared__ in the statement that began at sc->stmt. The
** statement ends at the next ';' (then it is recorded) or brace (then it is
** not a declaration we know). y is the lexer just past __shared__. */
int shared_stmt(scanner *sc, lx y) {
  tok t;
  for (;;) {
    lx_next(&y, &t);
    if (t.k == T_EOF || tpun1(sc->s, &t, '{') || tpun1(sc->s, &t, '}')) return 0;
    if (tpun1(sc->s, &t, ';')) break;
  }
  const scope *sp = &sc->st[sc->depth];
  return parse_var(sc, sc->stmt, t.b, V_SHARED, sp->in_func || sc->over > 0, sp->kernel, sp->in_ns);
}

/* A typedef or alias declaration from lexer state y to offset end:
** `typedef unsigned int u32;`, `using real = float;`, `typedef float2 v2;`
** of a type the scanner knows is recorded; any other is left to the
** compiler (a parameter of that type is then not understood). */
static void typedef_decl(scanner *sc, lx y, size_t end) {
  const char *s = sc->s;
  tok t[16];
  int nt = 0, tb, te;
  for (;;) {
    tok a;
    lx_next(&y, &a);
    if (a.k == T_EOF || a.b >= end) break;
    if (nt == 16) return;
    t[nt++] = a;
  }
  const tok *name;
  if (nt >= 3 && teq(s, &t[0], "typedef")) {
    name = &t[nt - 1];
    tb = 1;
    te = nt - 1;
  } else if (nt >= 4 && teq(s, &t[0], "using") && tpun1(s, &t[2], '=')) {
    name = &t[1];
    tb = 3;
    te = nt;
  } else {
    return;
  }
  if (name->k != T_ID || is_keyword(s, name) || name->e - name->b >= sizeof sc->td.e[0].name)
    return;
  int k = tb + (te - tb == 2 && (teq(s, &t[tb], "struct") || teq(s, &t[tb], "class")));
  const tdef *u = te - k == 1 ? struct_find(&sc->td, s, &t[k]) : NULL;
  if (u) {                                      /* typedef struct S T; using T = S; */
    if (sc->td.n == MAXTDEF) return;
    tdef *e = &sc->td.e[sc->td.n++];
    *e = *u;
    copy_tok(s, name, e->name, sizeof e->name);
    /* the struct's own record of its names, for signatures= */
    lc_struct_def *def = sc->r->structs && u->sdef < sc->r->max_structs
                         ? &sc->r->structs[u->sdef] : NULL;
    if (def && def->naliases < LC_STRUCT_MAXALIASES && strcmp(e->name, def->name) != 0)
      memcpy(def->aliases[def->naliases++], e->name, sizeof e->name);
    return;
  }
  tspec ts;
  ts_init(&ts);
  for (int i = tb; i < te; i++) {
    int vec, code;
    if (is_qual(s, &t[i])) continue;
    if (ts.named == -1 && ts_word(&ts, s, &t[i])) continue;
    if (teq(s, &t[i], "std") && i + 1 < te && tpun(s, &t[i + 1], "::") && !ts_any(&ts)) {
      i++;
      continue;
    }
    if (ts_any(&ts) || (code = typedef_code(&sc->td, s, &t[i], &vec)) < 0) return;
    ts.named = code;
    ts.vec = vec;
  }
  int code = ts_resolve(&ts);
  if (code < 0 || sc->td.n == MAXTDEF) return;
  tdef *e = &sc->td.e[sc->td.n++];
  copy_tok(s, name, e->name, sizeof e->name);
  e->code = code;
  e->vec = ts.vec;
}

/* ---- struct definitions ----------------------------------------------------- */

/* Why an alignment attribute leaves a layout unread; -1. */
static int bad_align(char *why) {
  return whyf(why, "an alignment attribute that is not a power-of-2 literal, or packed, is "
              "not supported");
}

/* An alignment attribute at t[i] (__align__(N), alignas(N), _Alignas(N),
** __attribute__((aligned(N))), [[...]]): *al becomes the larger of itself
** and N. Returns the index past it; *bad when it is one whose layout we
** cannot tell (packed, a bound that is no literal). */
static int align_attr(const char *s, const tok *t, int nt, int i, int64_t *al, bool *bad) {
  int64_t v;
  if (tpun1(s, &t[i], '[')) return skip_group(s, t, nt, i);      /* [[...]] */
  int end = skip_group(s, t, nt, i + 1);
  if (i + 1 >= nt || !tpun1(s, &t[i + 1], '(')) {
    *bad = true;
    return i + 1;
  }
  if (teq(s, &t[i], "__attribute__")) {
    for (int j = i + 2; j < end; j++) {
      if (teq(s, &t[j], "packed") || teq(s, &t[j], "__packed__")) *bad = true;
      if (!teq(s, &t[j], "aligned") && !teq(s, &t[j], "__aligned__")) continue;
      if (j + 3 < end && tpun1(s, &t[j + 1], '(') && t[j + 2].k == T_NUM &&
          tpun1(s, &t[j + 3], ')') && int_literal(s + t[j + 2].b, t[j + 2].e - t[j + 2].b, &v))
        *al = v > *al ? v : *al;
      else
        *bad = true;
    }
    return end;
  }
  if (teq(s, &t[i], "__align__") || teq(s, &t[i], "alignas") || teq(s, &t[i], "_Alignas")) {
    if (end == i + 4 && t[i + 2].k == T_NUM &&
        int_literal(s + t[i + 2].b, t[i + 2].e - t[i + 2].b, &v) && v > 0 && (v & (v - 1)) == 0)
      *al = v > *al ? v : *al;
    else
      *bad = true;
    return end;
  }
  return end;                                   /* another attribute: no layout */
}

static bool is_align_word(const char *s, const tok *t) {
  return t->k == T_ID && (teq(s, t, "__align__") || teq(s, t, "alignas") ||
                          teq(s, t, "_Alignas") || teq(s, t, "__attribute__"));
}

/* One member declaration m[0 .. nm) of a struct (no ';'), its members
** appended to def at offset *off. Returns 0, or -1 with why. */
static int struct_member(scanner *sc, const tok *m, int nm, lc_struct_def *def, int64_t *off,
                         char *why) {
  const char *s = sc->s;
  char text[96];
  tspec ts;
  ts_init(&ts);
  const tdef *sd = NULL;
  int64_t mal = 0;
  bool bad = false;
  int i = 0;
  for (; i < nm; i++) {                       /* the type */
    const tok *a = &m[i];
    int vec, code;
    if (is_qual(s, a) || teq(s, a, "mutable")) continue;
    if (is_align_word(s, a) || (tpun1(s, a, '[') && i + 1 < nm && tpun1(s, &m[i + 1], '['))) {
      i = align_attr(s, m, nm, i, &mal, &bad) - 1;
      continue;
    }
    if ((teq(s, a, "struct") || teq(s, a, "class")) && i + 1 < nm &&
        struct_find(&sc->td, s, &m[i + 1]) && !ts_any(&ts) && !sd)
      continue;
    if (!sd && ts.named == -1 && ts_word(&ts, s, a)) continue;
    if (teq(s, a, "std") && i + 1 < nm && tpun(s, &m[i + 1], "::")) {
      i++;
      continue;
    }
    if (!ts_any(&ts) && !sd && (sd = struct_find(&sc->td, s, a)) != NULL) continue;
    if (!ts_any(&ts) && !sd && (code = typedef_code(&sc->td, s, a, &vec)) >= 0) {
      ts.named = code;
      ts.vec = vec;
      continue;
    }
    break;
  }
  if (i == 0 || (!ts_any(&ts) && !sd)) {
    ptext(s, m, nm, guess_name(s, m, nm), false, text, sizeof text);
    return whyf(why, "unsupported member type '%s'", text);
  }
  int code = sd ? LC_PARAM_STRUCT : ts_resolve(&ts);
  if (code == -2 || code == -1) {
    ptext(s, m, i, -1, false, text, sizeof text);
    return whyf(why, "unsupported member type '%s'", text);
  }
  if (sd && sd->bad) return whyf(why, "a member of struct %s, which is not understood (%s)",
                                 sd->name, sd->why);
  int64_t esize = sd ? sd->size : ts.vec ? type_size(code) * ts.vec : type_size(code);
  int64_t ealign = sd ? sd->align : ts.vec ? vector_align(type_size(code), ts.vec)
                                            : type_size(code);
  ptext(s, m, i, -1, false, text, sizeof text);
  if (i == nm) return whyf(why, "a member of type '%s' without a name", text);
  while (i < nm) {                            /* the declarators */
    int64_t count = 0, al = mal;
    int ndim = 0, dims[LC_MEMBER_MAXDIM];
    const tok *name = NULL;
    for (; i < nm && !tpun1(s, &m[i], ','); i++) {
      const tok *a = &m[i];
      int64_t v;
      int close;
      if (tpun1(s, a, '*') || tpun1(s, a, '&') || tpun(s, a, "&&"))
        return whyf(why, "a pointer or reference member ('%s %s...') is not supported: pass "
                    "the array as a parameter of its own", text, s[a->b] == '*' ? "*" : "&");
      if (is_align_word(s, a) || (tpun1(s, a, '[') && i + 1 < nm && tpun1(s, &m[i + 1], '['))) {
        i = align_attr(s, m, nm, i, &al, &bad) - 1;
      } else if (a->k == T_ID && !name && !is_keyword(s, a)) {
        name = a;
      } else if (tpun1(s, a, '[') && name && (close = bracket_end(s, m, nm, i)) > i + 1 &&
                 const_expr(s, &m[i + 1], close - i - 1, &sc->defs, &v) && v > 0 &&
                 v <= (1 << 20) && (count ? count : 1) * v <= (1 << 20)) {
        if (ndim == LC_MEMBER_MAXDIM)
          return whyf(why, "an array member of more than %d dimensions", LC_MEMBER_MAXDIM);
        dims[ndim++] = (int)v;
        count = (count ? count : 1) * v;
        i = close;
      } else if (tpun1(s, a, ':') && name) {
        char nm[64];
        if (!copy_tok(s, name, nm, sizeof nm)) snprintf(nm, sizeof nm, "...");
        return whyf(why, "member '%s': bit-fields are not supported", nm);
      } else if ((tpun1(s, a, '=') || tpun1(s, a, '{')) && name) {
        int depth = 0;                        /* an initializer: to the next ',' */
        for (; i < nm; i++) {
          if (tpun1(s, &m[i], '(') || tpun1(s, &m[i], '[') || tpun1(s, &m[i], '{')) depth++;
          else if (tpun1(s, &m[i], ')') || tpun1(s, &m[i], ']') || tpun1(s, &m[i], '}')) depth--;
          else if (depth == 0 && tpun1(s, &m[i], ',') && !tpun1(s, a, '{')) break;
          if (depth == 0 && tpun1(s, a, '{') && tpun1(s, &m[i], '}')) {
            i++;
            break;
          }
        }
        i--;
      } else {
        ptext(s, m, nm, -1, false, text, sizeof text);
        return whyf(why, "unsupported member '%s'", text);
      }
    }
    if (bad) return bad_align(why);
    if (!name) return whyf(why, "a member of type '%s' without a name", text);
    if (def->nmembers == LC_STRUCT_MAXMEMBERS)
      return whyf(why, "more than %d members", LC_STRUCT_MAXMEMBERS);
    lc_member *e = &def->members[def->nmembers++];
    if (!copy_tok(s, name, e->name, sizeof e->name))
      return whyf(why, "a member name longer than %d bytes", (int)sizeof e->name - 1);
    if (al < ealign) al = ealign;
    e->type = code;
    e->vec = sd ? 0 : ts.vec;
    e->sdef = sd ? sd->sdef : -1;
    e->count = (int)count;
    e->ndim = ndim;
    memcpy(e->dims, dims, sizeof dims[0] * (size_t)ndim);
    e->size = esize;
    e->align = al;
    *off = (*off + al - 1) / al * al;
    e->offset = *off;
    *off += esize * (count ? count : 1);
    if (al > def->align) def->align = al;
    if (i < nm) i++;                          /* the ',' */
  }
  return 0;
}

/* Add name (t) for struct index idx to the type names. */
static void struct_name(scanner *sc, const tok *t, int idx, const lc_struct_def *def) {
  if (sc->td.n == MAXTDEF || t->e - t->b >= (size_t)sizeof sc->td.e[0].name) return;
  tdef *e = &sc->td.e[sc->td.n++];
  memset(e, 0, sizeof *e);
  copy_tok(sc->s, t, e->name, sizeof e->name);
  e->code = LC_PARAM_STRUCT;
  e->sdef = idx;
  e->size = def->size;
  e->align = def->align;
  e->bad = def->error[0] != '\0';
  memcpy(e->why, def->error, sizeof e->why);
}

/* What a struct definition's head and tail say: its tag and typedef
** name (T_EOF: none), and the largest of its alignment attributes. */
typedef struct shead {
  tok tag, tname;
  bool is_typedef, is_class;
  int64_t align;
} shead;

/* The head, up to the class body: typedef, struct, attributes, the tag, a base. */
static void struct_head(scanner *sc, shead *h, char *why) {
  const decl *d = &sc->d;
  const char *s = sc->s;
  tok t[MAXPTOK];
  int nt = 0;
  bool bad = false;
  lx y = d->start;
  for (;;) {
    tok a;
    lx_next(&y, &a);
    if (a.k == T_EOF || a.b >= d->sopen) break;
    if (nt < MAXPTOK) t[nt++] = a;
  }
  for (int i = 0; i < nt; i++) {
    if (teq(s, &t[i], "typedef")) h->is_typedef = true;
    else if (teq(s, &t[i], "class")) h->is_class = true;
    else if (is_align_word(s, &t[i]) ||
             (tpun1(s, &t[i], '[') && i + 1 < nt && tpun1(s, &t[i + 1], '[')))
      i = align_attr(s, t, nt, i, &h->align, &bad) - 1;
    else if (tpun1(s, &t[i], ':') && !why[0]) whyf(why, "base classes are not supported");
    else if (t[i].k == T_ID && !is_keyword(s, &t[i]) && !teq(s, &t[i], "final") &&
             !is_attr_word(s, &t[i]) && h->tag.k == T_EOF)
      h->tag = t[i];
  }
  if (d->agg == 2 && !why[0]) whyf(why, "unions are not supported");
  if (bad && !why[0]) bad_align(why);
}

/* A member declaration m[0 .. nm) ended with ';' (func: a member
** function's): a data member is laid out, other members are passed over. */
static void member_end(scanner *sc, const tok *m, int nm, bool more, bool func, bool in_public,
                       lc_struct_def *def, int64_t *off, char *why) {
  const char *s = sc->s;
  if (nm > 0 && (teq(s, &m[0], "virtual") || (nm > 1 && teq(s, &m[1], "virtual")))) {
    whyf(why, "virtual functions are not supported");
  } else if (nm > 0 && !func && !teq(s, &m[0], "static") && !teq(s, &m[0], "using") &&
             !teq(s, &m[0], "typedef") && !teq(s, &m[0], "friend") &&
             !teq(s, &m[0], "static_assert") && !teq(s, &m[0], "template")) {
    if (more) {
      ptext(s, m, nm, -1, true, def->error, 64);
      whyf(why, "a member declaration too long to read ('%s')", def->error);
    } else if (teq(s, &m[0], "enum")) {
      whyf(why, "enum members are not supported");
    } else {
      struct_member(sc, m, nm, def, off, why);
      if (!in_public) def->opaque = true;
    }
  }
}

/* Whether the '(' after m[0 .. nm) opens a member function's parameters
** (name(, operator+() rather than a member the compiler lays out (int
** (*f)(int)). */
static bool member_function(scanner *sc, const tok *m, int nm) {
  const char *s = sc->s;
  const tok *b = nm > 0 ? &m[nm - 1] : NULL;
  return b && !is_attr_word(s, b) &&
         ((b->k == T_ID && !is_keyword(s, b) && !struct_find(&sc->td, s, b) &&
           typedef_code(&sc->td, s, b, NULL) < 0) || teq(s, b, "operator") ||
          (b->k == T_PUN && nm > 1 && teq(s, &m[nm - 2], "operator")));
}

/* The class body from lexer state *y to its '}': the members laid out in
** def, *off past the last; *y past the '}'. */
static void struct_members(scanner *sc, lx *y, bool is_class, lc_struct_def *def, int64_t *off,
                           char *why) {
  const decl *d = &sc->d;
  const char *s = sc->s;
  tok m[MAXPTOK];
  int nm = 0, depth = 0, skip = 0;
  bool more = false, func = false, colon = false;
  bool in_public = !is_class;                 /* a class's members start private */
  for (;;) {
    tok a;
    lx_next(y, &a);
    if (a.k == T_EOF || a.b >= d->sclose) break;
    if (why[0]) continue;
    if (skip > 0) {                           /* a member function's body */
      if (tpun1(s, &a, '{')) skip++;
      else if (tpun1(s, &a, '}') && --skip == 0) nm = 0, more = func = colon = false;
      continue;
    }
    if (depth == 0 && tpun1(s, &a, '{') && func &&
        !(colon && nm > 0 && (m[nm - 1].k == T_ID || tpun1(s, &m[nm - 1], '>')))) {
      skip = 1;
      continue;
    }
    if (depth == 0 && tpun1(s, &a, '{') && nm > 0 &&
        (teq(s, &m[0], "struct") || teq(s, &m[0], "class") || teq(s, &m[0], "union") ||
         teq(s, &m[0], "enum"))) {
      whyf(why, "a type defined inside a struct is not supported: define it before");
      continue;
    }
    if (depth == 0 && tpun1(s, &a, ':') && nm == 1 &&
        (teq(s, &m[0], "public") || teq(s, &m[0], "private") || teq(s, &m[0], "protected"))) {
      in_public = teq(s, &m[0], "public");
      nm = 0;
      continue;
    }
    if (depth == 0 && tpun1(s, &a, ';')) {
      member_end(sc, m, nm, more, func, in_public, def, off, why);
      nm = 0;
      more = func = colon = false;
      continue;
    }
    if (tpun1(s, &a, '(') || tpun1(s, &a, '[') || tpun1(s, &a, '{')) {
      if (depth == 0 && tpun1(s, &a, '(') && member_function(sc, m, nm)) func = true;
      depth++;
    } else if ((tpun1(s, &a, ')') || tpun1(s, &a, ']') || tpun1(s, &a, '}')) && depth > 0) {
      depth--;
    } else if (depth == 0 && tpun1(s, &a, ':') && func) {
      colon = true;
    }
    if (teq(s, &a, "virtual") && !why[0]) whyf(why, "virtual functions are not supported");
    if (nm < MAXPTOK) m[nm++] = a;
    else more = true;
  }
}

/* The tail, from lexer state y to the ';' at semi: the typedef's name,
** attributes. */
static void struct_tail(scanner *sc, lx y, size_t semi, shead *h, char *why) {
  const char *s = sc->s;
  tok t[MAXPTOK];
  int nt = 0;
  for (;;) {
    tok a;
    lx_next(&y, &a);
    if (a.k == T_EOF || a.b >= semi) break;
    if (nt < MAXPTOK) t[nt++] = a;
  }
  bool bad = false;
  for (int i = 0; i < nt; i++) {
    if (tpun1(s, &t[i], ',') || tpun1(s, &t[i], '=')) break;
    if (is_align_word(s, &t[i]) ||
        (tpun1(s, &t[i], '[') && i + 1 < nt && tpun1(s, &t[i + 1], '[')))
      i = align_attr(s, t, nt, i, &h->align, &bad) - 1;
    else if (t[i].k == T_ID && !is_keyword(s, &t[i]) && h->is_typedef && h->tname.k == T_EOF &&
             (i == 0 || !tpun1(s, &t[i - 1], '*')))
      h->tname = t[i];
  }
  if (bad && !why[0]) bad_align(why);
}

/* The struct read (its members laid out to off; why, what is not
** understood) into the scan's structs and the type names. */
static int struct_record(scanner *sc, const shead *h, lc_struct_def *def, int64_t off,
                         size_t semi, const char *why) {
  const char *s = sc->s;
  const tok *tag = &h->tag, *tname = &h->tname;
  if (h->align > def->align) def->align = h->align;
  def->size = off == 0 ? 1 : off;                        /* C++: an empty struct has 1 */
  def->size = (def->size + def->align - 1) / def->align * def->align;
  const tok *nm0 = tname->k != T_EOF ? tname : tag;
  if (!copy_tok(s, nm0, def->name, sizeof def->name)) return 0;
  def->tagged = nm0 == tag;
  def->internal = sc->st[sc->depth].in_unnamed;
  def->end = semi + 1;
  if (nm0 == tname && tag->k != T_EOF &&
      copy_tok(s, tag, def->aliases[0], sizeof def->aliases[0]) &&
      strcmp(def->aliases[0], def->name) != 0)
    def->naliases = 1;
  if (why[0]) {
    snprintf(def->error, sizeof def->error, "%s", why);
    def->nmembers = 0;
  } else {
    def->error[0] = '\0';
  }
  lc_scan_result *r = sc->r;
  if (r->nstructs == INT_MAX) return scan_fail(sc, "too many structs");
  int idx = r->nstructs;
  if (r->structs) {
    if (idx >= r->max_structs)
      return scan_fail(sc, "more than %d structs in the source", r->max_structs);
    r->structs[idx] = *def;
  }
  r->nstructs++;
  if (tag->k != T_EOF) struct_name(sc, tag, idx, def);
  if (tname->k != T_EOF && !(tag->k != T_EOF && tag->e - tag->b == tname->e - tname->b &&
                             memcmp(s + tag->b, s + tname->b, tag->e - tag->b) == 0))
    struct_name(sc, tname, idx, def);
  return 0;
}

/* A declaration with a class body ended with the ';' at semi: `struct S
** {...};`, `typedef struct {...} S;`, `struct __align__(16) S {...} s;`.
** Its layout is read, and the struct recorded under its names. */
static int struct_decl(scanner *sc, size_t semi) {
  lc_struct_def def;
  memset(&def, 0, sizeof def);
  def.line = sc->d.sline;
  def.align = 1;
  char why[WHYLEN];
  why[0] = '\0';
  shead h;
  memset(&h, 0, sizeof h);
  h.tag.k = h.tname.k = T_EOF;
  struct_head(sc, &h, why);
  int64_t off = 0;
  lx y = sc->d.sblx;
  struct_members(sc, &y, h.is_class, &def, &off, why);
  struct_tail(sc, y, semi, &h, why);
  if (h.tag.k == T_EOF && h.tname.k == T_EOF) return 0;     /* nothing names it */
  return struct_record(sc, &h, &def, off, semi, why);
}

/* An enumeration ended with the ';' at semi: `enum class Op : int {...};`,
** `enum Mode {...};`, `typedef enum {...} Mode;`. Its names become
** typedefs of its underlying type (int unless given), so that kernels take
** it as that integer; an unscoped one's enumerators become constants (for
** array bounds: `enum { TILE = 32 };`). One whose values cannot be read
** defines no names: parameters of its type are then refused. */
static void enum_decl(scanner *sc, size_t semi) {
  const decl *d = &sc->d;
  const char *s = sc->s;
  tok h[24], tag = {T_EOF, 0, 0, 0}, alias = {T_EOF, 0, 0, 0};
  int nh = 0, colon = -1;
  bool scoped = false, is_typedef = false;
  lx y = d->start;
  for (;;) {                                    /* the head, to the '{' */
    tok a;
    lx_next(&y, &a);
    if (a.k == T_EOF || a.b >= d->sopen) break;
    if (nh == 24) return;
    h[nh++] = a;
  }
  int i = 0;
  if (i < nh && teq(s, &h[i], "typedef")) is_typedef = true, i++;
  if (i >= nh || !teq(s, &h[i], "enum")) return;
  i++;
  if (i < nh && (teq(s, &h[i], "class") || teq(s, &h[i], "struct"))) scoped = true, i++;
  if (i < nh && h[i].k == T_ID && !is_keyword(s, &h[i])) tag = h[i++];
  if (i < nh && tpun1(s, &h[i], ':')) colon = ++i;
  if (colon < 0 && i != nh) return;             /* attributes and the like: not read */
  int code = LC_INT32;
  if (colon >= 0) {
    tspec ts;
    ts_init(&ts);
    for (; i < nh; i++) {
      if (teq(s, &h[i], "std") && i + 1 < nh && tpun(s, &h[i + 1], "::")) {
        i++;
        continue;
      }
      if (ts.named == -1 && ts_word(&ts, s, &h[i])) continue;
      if (ts_any(&ts) || (ts.named = typedef_code(&sc->td, s, &h[i], NULL)) < 0) return;
    }
    code = ts_resolve(&ts);
    if (code < 0 || lc_dtypes[code].kind == 'f') return;
  }
  /* the enumerators: NAME [= constant expression], ... */
  y = d->sblx;
  tok e[40];
  int ne = 0;
  int64_t next_value = 0;
  for (bool done = false; !done;) {
    tok a;
    lx_next(&y, &a);
    done = a.k == T_EOF || a.b >= d->sclose;
    if (!done && !tpun1(s, &a, ',')) {
      if (ne == 40) return;
      e[ne++] = a;
      continue;
    }
    if (ne == 0) continue;                      /* a trailing ',' */
    if (e[0].k != T_ID || is_keyword(s, &e[0]) || (ne > 1 && !tpun1(s, &e[1], '='))) return;
    int64_t v = next_value;
    if (ne > 1 && !const_expr(s, &e[2], ne - 2, &sc->defs, &v)) return;
    if (colon < 0 && (v < INT32_MIN || v > INT32_MAX)) return;   /* not an int: not read */
    if (!scoped) cdef_set(&sc->defs, s + e[0].b, e[0].e - e[0].b, true, false, v);
    next_value = v + 1;
    ne = 0;
  }
  if (is_typedef) {                             /* the name after the '}' */
    y = d->sblx;
    for (;;) {
      tok a;
      lx_next(&y, &a);
      if (a.k == T_EOF || a.b >= semi) break;
      if (a.b > d->sclose && a.k == T_ID && !is_keyword(s, &a) && alias.k == T_EOF) alias = a;
    }
  }
  const tok *names[2] = {&tag, &alias};
  for (int k = 0; k < 2; k++) {
    if (names[k]->k == T_EOF || sc->td.n == MAXTDEF ||
        names[k]->e - names[k]->b >= sizeof sc->td.e[0].name)
      continue;
    tdef *td = &sc->td.e[sc->td.n++];
    memset(td, 0, sizeof *td);
    copy_tok(s, names[k], td->name, sizeof td->name);
    td->code = code;
  }
}

/* A declaration from lexer state y to offset end that may name an integer
** constant: `constexpr int N = 16;`, `static const unsigned M = 2 * N + 1;`. */
static void const_decl(scanner *sc, lx y, size_t end) {
  const char *s = sc->s;
  tok t[40];
  int nt = 0, eq = -1;
  bool cst = false;
  for (;;) {
    tok a;
    lx_next(&y, &a);
    if (a.k == T_EOF || a.b >= end) break;
    if (nt == 40) return;
    if (eq < 0 && tpun1(s, &a, '=')) eq = nt;
    t[nt++] = a;
  }
  if (eq < 2 || eq + 1 >= nt || t[eq - 1].k != T_ID || is_keyword(s, &t[eq - 1])) return;
  tspec ts;
  ts_init(&ts);
  for (int i = 0; i < eq - 1; i++) {
    if (teq(s, &t[i], "constexpr") || teq(s, &t[i], "const")) cst = true;
    else if (teq(s, &t[i], "static") || teq(s, &t[i], "inline")) (void)0;
    else if (ts.named == -1 && ts_word(&ts, s, &t[i])) (void)0;
    else if (!ts_any(&ts) && (ts.named = typedef_code(&sc->td, s, &t[i], NULL)) >= 0) (void)0;
    else return;
  }
  int code = ts_resolve(&ts);
  int64_t v;
  if (!cst || code < 0 || lc_dtypes[code].kind == 'f' ||
      !const_expr(s, &t[eq + 1], nt - eq - 1, &sc->defs, &v) ||
      (lc_dtypes[code].kind == 'u' && v < 0))
    return;
  cdef_set(&sc->defs, s + t[eq - 1].b, t[eq - 1].e - t[eq - 1].b, true, false, v);
}

/* The declaration ended with ';'. */
int decl_end(scanner *sc, size_t semi) {
  decl *d = &sc->d;
  const scope *sp = &sc->st[sc->depth];
  if (d->sbody && d->sclosed && !d->templ && !d->params && d->agg == 3) {
    enum_decl(sc, semi);
  } else if (d->sbody && d->sclosed && !d->templ && !d->params) {
    if (struct_decl(sc, semi) != 0) return -1;
  } else if (d->tdef && !d->params && !d->templ) {
    typedef_decl(sc, d->start, semi);
  }
  if (!d->tdef && !d->params && !d->templ && !d->device && !d->constant && !d->managed &&
      !d->shared && !d->global)
    const_decl(sc, d->start, semi);
  if (d->shared)
    return sc->r->nshared == d->nshared
           ? parse_var(sc, d->start, semi, V_SHARED, false, -1, sp->in_ns) : 0;
  if ((d->device || d->constant || d->managed) && !d->params && !d->global && !d->tdef &&
      !d->templ && !d->op)
    return parse_var(sc, d->start, semi, V_GLOBAL, false, -1, sp->in_ns);
  return 0;
}
