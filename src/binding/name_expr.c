/*
** name_expr: compile's name_expressions, the C++ names of kernels with C++
** linkage (templates, overloads, namespaces): checked, each read into the
** signature of the kernel it names (a template's arguments put in for its
** parameters, an overload's parameters from its cast), and the list of
** names the backend resolves after compiling.
*/
#include "kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

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
void lc_name_exprs_read(lua_State *L, int idx, lc_modref *m, const char *src,
                        const char *fname) {
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
      lc_module_kernel_names(m, names, sizeof names);
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
const char **lc_name_exprs_resolve(lua_State *L, int idx, const lc_modref *m, int *n) {
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
void lc_name_exprs_check(lua_State *L, bool has_opts, const char *fname) {
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
