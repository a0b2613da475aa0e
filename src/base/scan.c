/*
** scan: kernel signatures and the declarations the simulator needs, read
** from CUDA C++ source without compiling it (see scan.h).
**
** One forward pass of a lexer over src[0 .. len): comments, literals and
** preprocessor lines never become tokens. The scanner keeps a stack of
** brace scopes (namespace, linkage block, body, suspended declaration) and,
** at namespace scope, a summary of the declaration being read. When a
** declaration ends (its body's '{' or its ';'), the part that matters is
** lexed once more from a saved lexer state, so every byte is lexed a small,
** fixed number of times and no pathological input costs more than linear
** time. Nothing recurses and nothing allocates.
**
** The files: scan_lex.c (the lexer, constant expressions), scan_types.c
** (types and parameter lists), scan_decl.c (the declarations read when
** they end), and this one (scopes, the declaration being read, bodies, and
** the entry points); scan_internal.h is what they share.
*/
#include "scan_internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- the scanner ---------------------------------------------------------- */

int scan_fail(scanner *sc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sc->err, LC_ERRLEN, fmt, ap);
  va_end(ap);
  return -1;
}

static bool decl_mode(const scanner *sc) {
  unsigned char k = sc->st[sc->depth].kind;
  return sc->over == 0 && (k == SC_ROOT || k == SC_NS || k == SC_LINK);
}

static int push(scanner *sc, unsigned char kind) {
  if (sc->depth + 1 >= MAXSCOPE) {
    if (kind == SC_BODY && !decl_mode(sc)) {
      sc->over++;
      return 0;
    }
    return scan_fail(sc, "line %d: braces nested more than %d deep", sc->d.prev.line, MAXSCOPE);
  }
  scope *up = &sc->st[sc->depth], *sp = &sc->st[++sc->depth];
  *sp = *up;
  sp->kind = kind;
  sp->opens = -1;
  if (kind == SC_BODY && up->kind != SC_ROOT && up->kind != SC_NS && up->kind != SC_LINK)
    sp->in_func = true;
  sc->stmt_fresh = true;
  return 0;
}

/* ---- namespace scope ------------------------------------------------------ */

static void decl_reset(scanner *sc) {
  sc->d.active = false;
}

/* A function body opens at t; a kernel's if the declaration says so. */
static int open_body(scanner *sc, const tok *t) {
  decl *d = &sc->d;
  lc_scan_result *r = sc->r;
  int idx = -1;
  if (d->global && d->params && !d->op && !d->tdef) {
    const scope *sp = &sc->st[sc->depth];
    if (r->nkernels == INT_MAX) return scan_fail(sc, "too many kernels");
    idx = r->nkernels;
    lc_kernel_sig *k = &sc->scratch;
    if (r->kernels) {
      if (idx >= r->max_kernels) return scan_fail(sc, "more than %d kernels in the source", r->max_kernels);
      k = &r->kernels[idx];
    }
    {
      memset(k, 0, sizeof *k);
      if (!copy_tok(sc->s, &d->name, k->name, sizeof k->name))
        return scan_fail(sc, "line %d: a kernel name longer than %d bytes", d->name.line,
                    (int)sizeof k->name - 1);
      k->is_template = d->templ;
      k->extern_c = !d->templ && (d->linkage == 1 || (d->linkage < 0 && sp->linkage_c));
      k->in_namespace = sp->in_ns;
      k->decl_begin = d->start.p;
      k->params_begin = d->plx.p;
      k->params_end = d->pclose;
      k->line = d->name.line;
      k->body_begin = t->b;
      k->body_end = t->b;
      char who[160];
      snprintf(who, sizeof who, "kernel '%s'", k->name);
      lx y = d->plx;
      /* in a template, an unknown name may be a type parameter */
      if (parse_params(&y, d->pclose, !d->templ, &sc->td, k->params, &k->nparams, who,
                       k->error) != 0)
        k->nparams = -1;
      memcpy(sc->open_name, k->name, sizeof sc->open_name);
      sc->open_line = k->line;
    }
    r->nkernels++;
  }
  if (push(sc, SC_BODY) != 0) return -1;
  sc->st[sc->depth].in_func = true;
  sc->st[sc->depth].kernel = idx;
  sc->st[sc->depth].opens = idx;
  decl_reset(sc);
  return 0;
}

/* Inside a bracket group of a declaration (parameters, an array bound,
** an argument list): only the nesting is followed, and the group's end. */
static void decl_in_group(decl *d, const char *s, const tok *t) {
  if (tpun1(s, t, '(') || tpun1(s, t, '[') || tpun1(s, t, '{')) {
    d->gdepth++;
  } else if (tpun1(s, t, ')') || tpun1(s, t, ']') || tpun1(s, t, '}')) {
    if (--d->gdepth == 0) {
      if (d->group == G_PARAMS) d->pclose = t->b;
      d->group = G_NONE;
      d->prev = *t;
      d->prevcls = PV_OTHER;
    }
  }
}

/* After `template`: the parameter list <...> is skipped, its angle
** brackets counted outside any parentheses. Returns true when t was part
** of it. */
static bool decl_in_template(decl *d, const char *s, const tok *t) {
  if (d->tstate == 1) {
    if (tpun1(s, t, '<')) {
      d->tstate = 2;
      d->tdepth = 1;
      d->tpar = 0;
      return true;
    }
    d->tstate = 0;
  } else if (d->tstate == 2 && !tpun1(s, t, ';')) {
    if (tpun1(s, t, '(') || tpun1(s, t, '[') || tpun1(s, t, '{')) d->tpar++;
    else if ((tpun1(s, t, ')') || tpun1(s, t, ']') || tpun1(s, t, '}')) && d->tpar > 0) d->tpar--;
    else if (d->tpar == 0 && tpun1(s, t, '<')) d->tdepth++;
    else if (d->tpar == 0 && tpun1(s, t, '>') && --d->tdepth == 0) d->tstate = 0;
    return true;
  }
  return false;
}

/* A word of a declaration: a CUDA qualifier, a keyword that changes what
** is declared, or a name. Returns the class the next token sees it as. */
static int decl_word(decl *d, const char *s, const tok *t) {
  /* (in an initializer they belong to something else: a lambda) */
  if (teq(s, t, "__global__")) d->global = d->global || !d->eq_pre;
  else if (teq(s, t, "__device__")) d->device = d->device || !d->eq_pre;
  else if (teq(s, t, "__constant__")) d->constant = d->constant || !d->eq_pre;
  else if (teq(s, t, "__managed__")) d->managed = d->managed || !d->eq_pre;
  else if (teq(s, t, "__shared__")) d->shared = d->shared || !d->eq_pre;
  else if (teq(s, t, "extern")) return PV_EXTERN;
  else if (teq(s, t, "template")) {
    d->templ = true;
    d->tstate = 1;
  } else if (teq(s, t, "typedef") || teq(s, t, "using") || teq(s, t, "friend")) d->tdef = true;
  else if (teq(s, t, "namespace")) d->ns = true;
  else if ((teq(s, t, "struct") || teq(s, t, "class")) && !d->agg) d->agg = 1;
  else if (teq(s, t, "union") && !d->agg) d->agg = 2;
  else if (teq(s, t, "enum") && !d->agg) d->agg = 3;
  else if (teq(s, t, "operator")) d->op = true;
  else if (is_attr_word(s, t)) return PV_ATTR;
  else if (!is_keyword(s, t)) {
    d->lastname = *t;
    return PV_NAME;
  }
  return PV_OTHER;
}

/* A '{' in a declaration: a member initializer, a namespace or linkage
** block, a function body, or a class body or initializer. */
static int decl_brace(scanner *sc, const lx *after, const tok *t) {
  const char *s = sc->s;
  decl *d = &sc->d;
  if (d->ctor && (d->prevcls == PV_NAME || tpun1(s, &d->prev, '>'))) {
    d->gdepth = 1;                    /* a member initializer x{1} */
    d->group = G_OTHER;
    return 0;
  }
  if (d->ns && !d->params) {
    if (push(sc, SC_NS) != 0) return -1;
    sc->st[sc->depth].in_ns = true;
    if (teq(s, &d->prev, "namespace")) sc->st[sc->depth].in_unnamed = true;
    decl_reset(sc);
    return 0;
  }
  if (d->prevcls == PV_LINKSTR) {
    if (push(sc, SC_LINK) != 0) return -1;
    sc->st[sc->depth].linkage_c = d->linkage == 1;
    decl_reset(sc);
    return 0;
  }
  if ((d->params || (tpun1(s, &d->prev, ')') && !d->agg)) && !d->eq_pre) return open_body(sc, t);
  /* a class body or an initializer: the declaration goes on after it */
  if (d->agg && !d->sbody && !d->eq_pre && !d->params) {
    d->sbody = true;                  /* the class body: its members are read at the ';' */
    d->sblx = *after;
    d->sopen = t->b;
    d->sline = t->line;
  }
  if (push(sc, SC_SUSPEND) != 0) return -1;
  sc->st[sc->depth].in_func = false;
  return 0;
}

/* Punctuation in a declaration. Returns 1 when the token was consumed
** (the declaration's state already updated), 0 to record it as the
** previous token, -1 on error. */
static int decl_punct(scanner *sc, const lx *after, const tok *t) {
  const char *s = sc->s;
  decl *d = &sc->d;
  if (tpun1(s, t, '(')) {
    d->gdepth = 1;
    d->group = G_OTHER;
    if (d->prevcls != PV_ATTR && !d->eq_pre &&
        (d->prevcls == PV_NAME || d->op ||
         (d->global && tpun1(s, &d->prev, '>') && d->lastname.e > 0))) {
      /* the parameter list: the last name( before the body */
      d->group = G_PARAMS;
      d->params = true;
      d->name = d->prevcls == PV_NAME ? d->prev : d->lastname;
      d->plx = *after;
      d->pclose = t->b;
    }
    return 1;
  }
  if (tpun1(s, t, '[')) {
    d->gdepth = 1;
    d->group = G_OTHER;
    return 1;
  }
  if (tpun1(s, t, '{')) return decl_brace(sc, after, t) ? -1 : 1;
  if (tpun1(s, t, '}')) {
    /* closes the namespace or linkage block we are in */
    if (sc->depth > 0) sc->depth--;
    decl_reset(sc);
    return 1;
  }
  if (tpun1(s, t, ';')) {
    int rc = decl_end(sc, t->b);
    decl_reset(sc);
    return rc ? -1 : 1;
  }
  if (tpun1(s, t, '=')) {
    if (!d->params) d->eq_pre = true;
  } else if (tpun1(s, t, ':')) {
    if (d->params) d->ctor = true;
  }
  return 0;
}

/* One token of a declaration at namespace scope. */
static int decl_token(scanner *sc, const lx *before, const lx *after, const tok *t) {
  const char *s = sc->s;
  decl *d = &sc->d;
  if (!d->active) {
    memset(d, 0, sizeof *d);
    d->active = true;
    d->start = *before;
    d->linkage = -1;
    d->nshared = sc->r->nshared;
  }
  if (d->group != G_NONE) {
    decl_in_group(d, s, t);
    return 0;
  }
  if (decl_in_template(d, s, t)) return 0;
  int cls = PV_OTHER;
  if (t->k == T_ID) {
    cls = decl_word(d, s, t);
  } else if (t->k == T_STR) {
    if (d->prevcls == PV_EXTERN) {
      d->linkage = teq(s, t, "\"C\"") ? 1 : 0;
      cls = PV_LINKSTR;
    }
  } else if (t->k == T_PUN) {
    int rc = decl_punct(sc, after, t);
    if (rc) return rc < 0 ? -1 : 0;
  }
  d->prev = *t;
  d->prevcls = cls;
  return 0;
}

/* ---- bodies --------------------------------------------------------------- */

static int body_token(scanner *sc, const lx *before, const lx *after, const tok *t) {
  const char *s = sc->s;
  if (sc->stmt_fresh) {
    sc->stmt = *before;
    sc->stmt_fresh = false;
    sc->stmt_shared = false;
  }
  if (t->k == T_PUN) {
    if (tpun1(s, t, '{')) return push(sc, SC_BODY);
    if (tpun1(s, t, '}')) {
      sc->stmt_fresh = true;
      if (sc->over > 0) {
        sc->over--;
        return 0;
      }
      scope *sp = &sc->st[sc->depth];
      if (sp->opens >= 0 && sc->r->kernels && sp->opens < sc->r->max_kernels)
        sc->r->kernels[sp->opens].body_end = t->b;
      unsigned char kind = sp->kind;
      sc->depth--;
      if (decl_mode(sc)) {
        if (kind == SC_SUSPEND) {
          if (sc->d.sbody && !sc->d.sclosed) {
            sc->d.sclosed = true;
            sc->d.sclose = t->b;
          }
          sc->d.prev = *t;                /* struct S { ... } s; goes on */
          sc->d.prevcls = PV_OTHER;
        } else {
          decl_reset(sc);
        }
      }
      return 0;
    }
    if (tpun1(s, t, ';')) sc->stmt_fresh = true;
    return 0;
  }
  if (t->k == T_ID && !sc->stmt_shared && teq(s, t, "__shared__")) {
    sc->stmt_shared = true;
    return shared_stmt(sc, *after);
  }
  return 0;
}

int lc_scan(const char *src, size_t len, lc_scan_result *r, char *err) {
  static const char empty[1] = { '\0' };
  scanner *sc, scs;
  sc = &scs;
  memset(sc, 0, sizeof *sc);
  if (!src) {
    src = empty;
    len = 0;
  }
  sc->s = src;
  sc->n = len;
  sc->r = r;
  sc->err = err;
  sc->st[0].kind = SC_ROOT;
  sc->st[0].kernel = -1;
  sc->st[0].opens = -1;
  r->nkernels = r->nshared = r->nglobals = r->nstructs = 0;
  err[0] = '\0';
  lx x;
  lx_init(&x, src, len);
  x.defs = &sc->defs;
  for (;;) {
    lx before = x;
    tok t;
    lx_next(&x, &t);
    if (t.k == T_EOF) break;
    int rc = decl_mode(sc) ? decl_token(sc, &before, &x, &t) : body_token(sc, &before, &x, &t);
    if (rc != 0) return -1;
  }
  for (int i = 1; i <= sc->depth; i++)
    if (sc->st[i].opens >= 0)
      return scan_fail(sc, "kernel '%s' (line %d): no '}' closes its body", sc->open_name,
                  sc->open_line);
  return 0;
}

/* Whether token t names name and is not subscripted (u follows it). */
static bool bare_use(const char *src, size_t len, const char *name, const tok *t, const tok *u) {
  return t->k == T_ID && teq(src, t, name) &&
         !(tpun1(src, u, '[') && !(u->e < len && src[u->e] == '['));
}

bool lc_scan_only_subscripted(const char *src, size_t len, const char *name, size_t from,
                              bool block) {
  lx x;
  tok t, u;
  /* every directive: a macro may use the name wherever it is defined */
  lx_init(&x, src, len);
  x.directive_tokens = true;
  lx_next(&x, &t);
  bool td = x.in_directive;
  while (t.k != T_EOF) {
    lx_next(&x, &u);
    if (td && bare_use(src, len, name, &t, &u)) return false;
    t = u;
    td = x.in_directive;
  }
  /* the code from the declaration to the end of its scope */
  lx_init(&x, src, len);
  x.directive_tokens = true;
  x.p = from < len ? from : len;
  x.bol = false;
  int depth = 0;
  lx_next(&x, &t);
  td = x.in_directive;
  while (t.k != T_EOF) {
    if (block && !td && tpun1(src, &t, '{')) depth++;
    if (block && !td && tpun1(src, &t, '}') && --depth < 0) break;
    lx_next(&x, &u);
    if (!td && bare_use(src, len, name, &t, &u)) return false;
    t = u;
    td = x.in_directive;
  }
  return true;
}

bool lc_scan_defined_twice(const lc_scan_result *r, int i) {
  const lc_kernel_sig *k = &r->kernels[i];
  if (!k->extern_c || k->is_template) return false;
  for (int j = 0; j < r->nkernels; j++)
    if (j != i && r->kernels[j].extern_c && !r->kernels[j].is_template &&
        strcmp(r->kernels[j].name, k->name) == 0)
      return true;
  return false;
}

int lc_scan_kernels(const char *src, size_t len, lc_kernel_sig *out, int max, int *n,
                    char *err) {
  lc_scan_result r;
  memset(&r, 0, sizeof r);
  r.kernels = out;
  r.max_kernels = max;
  int rc = lc_scan(src, len, &r, err);
  *n = r.nkernels;
  return rc;
}
