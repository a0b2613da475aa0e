/*
** The PTX parser: text to the program form of internal.h. It reads what
** NVRTC and nvcc emit (PTX ISA 7 to 9): module variables with initialisers,
** .entry and .func with their .param lists, call sequences in nested
** scopes, and instructions with their modifiers. Anything it does not know
** is an error naming it and its line, never a skip.
*/
#define _GNU_SOURCE
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ----------------------------------------------------------------- */

/* A string table with scopes: names declared inside { } are forgotten at
** the closing brace, as PTX's call sequences declare param0 again each time. */
typedef struct name { char *s; int kind, id; int depth; } name;
enum { N_REG, N_VAR, N_FUNC, N_LABEL };
typedef struct names { name *v; int n, cap; } names;

static void names_add(names *t, const char *s, int kind, int id, int depth) {
  if (t->n == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 256;
    t->v = realloc(t->v, (size_t)t->cap * sizeof *t->v);
  }
  t->v[t->n++] = (name){strdup(s), kind, id, depth};
}
/* the innermost declaration of s */
static const name *names_find(const names *t, const char *s) {
  for (int i = t->n - 1; i >= 0; i--)
    if (t->v[i].s[0] == s[0] && strcmp(t->v[i].s, s) == 0) return &t->v[i];
  return NULL;
}
static void names_pop(names *t, int depth) {
  while (t->n > 0 && t->v[t->n - 1].depth >= depth) free(t->v[--t->n].s);
}

/* Registers are many (%r<4000>): a hash for them. */
typedef struct rentry { char *s; int slot; } rentry;
typedef struct regs { rentry *v; int cap, n; } regs;
static unsigned hash(const char *s) {
  unsigned h = 2166136261u;
  while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
  return h;
}
static void regs_put(regs *t, const char *s, int slot);
static void regs_grow(regs *t) {
  regs old = *t;
  t->cap = old.cap ? 2 * old.cap : 1024;
  t->v = calloc((size_t)t->cap, sizeof *t->v);
  t->n = 0;
  for (int i = 0; i < old.cap; i++)
    if (old.v[i].s) { regs_put(t, old.v[i].s, old.v[i].slot); free(old.v[i].s); }
  free(old.v);
}
static void regs_put(regs *t, const char *s, int slot) {
  if (2 * (t->n + 1) > t->cap) regs_grow(t);
  unsigned i = hash(s) & (unsigned)(t->cap - 1);
  while (t->v[i].s && strcmp(t->v[i].s, s) != 0) i = (i + 1) & (unsigned)(t->cap - 1);
  if (t->v[i].s == NULL) { t->v[i].s = strdup(s); t->n++; }
  t->v[i].slot = slot;
}
static int regs_get(const regs *t, const char *s) {
  if (t->cap == 0) return -1;
  unsigned i = hash(s) & (unsigned)(t->cap - 1);
  while (t->v[i].s) {
    if (strcmp(t->v[i].s, s) == 0) return t->v[i].slot;
    i = (i + 1) & (unsigned)(t->cap - 1);
  }
  return -1;
}
static void regs_clear(regs *t) {
  for (int i = 0; i < t->cap; i++) free(t->v[i].s);
  free(t->v);
  memset(t, 0, sizeof *t);
}

/* ---- the lexer ------------------------------------------------------------- */

enum { T_EOF, T_WORD, T_STR, T_PUNCT };

typedef struct parser {
  const char *p;
  int line;
  int kind;
  char tok[512];
  int tline;
  /* lookahead of one */
  const char *save_p;
  int save_line;
  jmp_buf fail;
  char *err;
  size_t errlen;
  ptx_module *m;
  names scope;             /* variables, functions, and a function's locals */
  regs regmap;             /* the current function's registers (scoped by renaming) */
  int depth;
  func *fn;
  int fnid;
  /* labels of the current function */
  char **labels;
  int *label_pc, nlabels, caplabels;
  /* operands waiting for a label: (instruction, operand) */
  int (*fix)[3];
  int nfix, capfix;
  /* scoped registers: the names declared at each depth, to forget */
  char **scoped_regs;
  int *scoped_depth, *scoped_prev, nscoped, capscoped;
} parser;

static _Noreturn void fail(parser *ps, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = snprintf(ps->err, ps->errlen, "PTX line %d: ", ps->tline);
  if (n >= 0 && (size_t)n < ps->errlen) vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
  va_end(ap);
  longjmp(ps->fail, 1);
}

static bool wordch(int c) { return isalnum(c) || c == '_' || c == '$' || c == '%' || c == '.'; }

static void skip_space(parser *ps) {
  for (;;) {
    while (isspace((unsigned char)*ps->p)) {
      if (*ps->p == '\n') ps->line++;
      ps->p++;
    }
    if (ps->p[0] == '/' && ps->p[1] == '/') {
      while (*ps->p && *ps->p != '\n') ps->p++;
    } else if (ps->p[0] == '/' && ps->p[1] == '*') {
      ps->p += 2;
      while (*ps->p && !(ps->p[0] == '*' && ps->p[1] == '/')) {
        if (*ps->p == '\n') ps->line++;
        ps->p++;
      }
      if (*ps->p) ps->p += 2;
    } else {
      return;
    }
  }
}

static int next(parser *ps) {
  ps->save_p = ps->p;
  ps->save_line = ps->line;
  skip_space(ps);
  ps->tline = ps->line;
  const char *p = ps->p;
  size_t n = 0;
  if (*p == '\0') {
    ps->kind = T_EOF;
    ps->tok[0] = '\0';
  } else if (*p == '"') {
    p++;
    while (*p && *p != '"' && n + 1 < sizeof ps->tok) {
      if (*p == '\\' && p[1]) p++;
      ps->tok[n++] = *p++;
    }
    if (*p == '"') p++;
    ps->tok[n] = '\0';
    ps->kind = T_STR;
  } else if (wordch((unsigned char)*p)) {
    while (wordch((unsigned char)*p) || (p[0] == ':' && p[1] == ':' && n > 0)) {
      /* a directive ends at the next one: ".reg.b32 f;" (cuda_fp16.h's) */
      if (*p == '.' && n > 0 && ps->tok[0] == '.') break;
      if (n + 2 >= sizeof ps->tok) fail(ps, "a word longer than %zu characters", sizeof ps->tok);
      if (*p == ':') ps->tok[n++] = *p++;   /* shared::cta, L1::evict_last */
      ps->tok[n++] = *p++;
    }
    ps->tok[n] = '\0';
    ps->kind = T_WORD;
  } else {
    ps->tok[0] = *p++;
    ps->tok[1] = '\0';
    ps->kind = T_PUNCT;
  }
  ps->p = p;
  return ps->kind;
}
static void unread(parser *ps) { ps->p = ps->save_p; ps->line = ps->save_line; }
static bool is(parser *ps, const char *s) { return strcmp(ps->tok, s) == 0; }
static bool punct(parser *ps, int c) { return ps->kind == T_PUNCT && ps->tok[0] == c; }
static void expect(parser *ps, int c) {
  next(ps);
  if (!punct(ps, c)) fail(ps, "expected '%c', found '%s'", c, ps->tok);
}
static bool accept(parser *ps, int c) {
  next(ps);
  if (punct(ps, c)) return true;
  unread(ps);
  return false;
}
static void word(parser *ps, const char *what) {
  if (next(ps) != T_WORD) fail(ps, "expected %s, found '%s'", what, ps->tok);
}
static long long number(parser *ps) {
  bool neg = accept(ps, '-');
  word(ps, "a number");
  char *end;
  long long v = (long long)strtoull(ps->tok, &end, 0);
  if (*end == 'U') end++;
  if (*end) fail(ps, "not a number: '%s'", ps->tok);
  return neg ? (long long)(0 - (unsigned long long)v) : v;
}
/* skip to the end of the statement */
static void to_semicolon(parser *ps) {
  while (next(ps) != T_EOF && !punct(ps, ';')) {}
}

/* ---- types ----------------------------------------------------------------- */

static bool type_of(const char *s, ptype *t) {
  static const struct { const char *s; uint8_t k, bits; } types[] = {
      {"pred", K_PRED, 1}, {"b8", K_B, 8}, {"b16", K_B, 16}, {"b32", K_B, 32}, {"b64", K_B, 64},
      {"b128", K_B, 128}, {"u8", K_U, 8}, {"u16", K_U, 16}, {"u32", K_U, 32}, {"u64", K_U, 64},
      {"s8", K_S, 8}, {"s16", K_S, 16}, {"s32", K_S, 32}, {"s64", K_S, 64}, {"f16", K_F, 16},
      {"f32", K_F, 32}, {"f64", K_F, 64}, {"f16x2", K_F16X2, 32}, {"bf16", K_BF16, 16},
      {"bf16x2", K_BF16X2, 32}, {"u16x2", K_U16X2, 32}, {"s16x2", K_S16X2, 32}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strcmp(s, types[i].s) == 0) { t->k = types[i].k; t->bits = types[i].bits; return true; }
  return false;
}

size_t ptx_type_size(ptype t) { return t.k == K_PRED ? 1 : t.bits / 8; }

/* ---- module variables ------------------------------------------------------------ */

static int new_var(parser *ps, const char *nm, int space, size_t size, size_t align) {
  ptx_module *m = ps->m;
  m->vars = realloc(m->vars, (size_t)(m->nvars + 1) * sizeof *m->vars);
  var *v = &m->vars[m->nvars];
  memset(v, 0, sizeof *v);
  v->name = strdup(nm);
  v->space = (uint8_t)space;
  v->fn = ps->fn ? ps->fnid : -1;
  v->size = size;
  v->align = align ? align : 1;
  names_add(&ps->scope, nm, N_VAR, m->nvars, ps->depth);
  return m->nvars++;
}

static void put_init(var *v, size_t *at, size_t el, uint64_t bits) {
  if (*at + el <= v->size) memcpy(v->init + *at, &bits, el);   /* little-endian, as the GPU */
  *at += el;
}

/* An initialiser: numbers, nested braces, and variables' addresses
** (name, generic(name), name+offset), which ptx_bind_done patches. */
static void initialiser(parser *ps, var *v, ptype t, size_t *at) {
  size_t el = ptx_type_size(t);
  if (accept(ps, '{')) {
    do {
      if (accept(ps, '}')) return;
      initialiser(ps, v, t, at);
    } while (accept(ps, ','));
    expect(ps, '}');
    return;
  }
  bool neg = accept(ps, '-');
  word(ps, "an initial value");
  const char *s = ps->tok;
  uint64_t bits = 0;
  if ((s[0] == '0') && (s[1] == 'f' || s[1] == 'F' || s[1] == 'd' || s[1] == 'D')) {
    bits = strtoull(s + 2, NULL, 16);
    if (t.bits == 64 && (s[1] == 'f' || s[1] == 'F')) {
      float f;
      uint32_t b = (uint32_t)bits;
      memcpy(&f, &b, 4);
      double d = f;
      memcpy(&bits, &d, 8);
    } else if (t.bits == 32 && (s[1] == 'd' || s[1] == 'D')) {
      double d;
      memcpy(&d, &bits, 8);
      float f = (float)d;
      uint32_t b;
      memcpy(&b, &f, 4);
      bits = b;
    }
    if (neg) bits ^= t.bits == 64 ? 0x8000000000000000ull : 0x80000000ull;
  } else if (isdigit((unsigned char)s[0])) {
    if (strchr(s, '.') && t.k == K_F) {
      double d = strtod(s, NULL);
      if (neg) d = -d;
      if (t.bits == 32) { float f = (float)d; uint32_t b; memcpy(&b, &f, 4); bits = b; }
      else memcpy(&bits, &d, 8);
    } else {
      bits = strtoull(s, NULL, 0);
      if (neg) bits = 0 - bits;   /* unsigned: -2^63 negates to itself */
    }
  } else {
    /* an address: generic(name), name, name+offset */
    char target[512];
    if (strcmp(s, "generic") == 0) {
      expect(ps, '(');
      word(ps, "a variable");
      snprintf(target, sizeof target, "%s", ps->tok);
      expect(ps, ')');
    } else {
      snprintf(target, sizeof target, "%s", s);
    }
    int64_t add = 0;
    if (accept(ps, '+')) add = number(ps);
    const name *n = names_find(&ps->scope, target);
    if (n == NULL || n->kind != N_VAR) fail(ps, "an initialiser names '%s', not a variable", target);
    v->refs = realloc(v->refs, (size_t)(v->nrefs + 1) * 2 * sizeof *v->refs);
    v->ref_add = realloc(v->ref_add, (size_t)(v->nrefs + 1) * sizeof *v->ref_add);
    v->refs[2 * v->nrefs] = (int)*at;
    v->refs[2 * v->nrefs + 1] = n->id;
    v->ref_add[v->nrefs++] = add;
  }
  put_init(v, at, el, bits);
}

/* [.align n] [.v2|.v4] .type name[dims] [= init]; after the space word */
static int declaration(parser *ps, int space, bool external) {
  size_t align = 0, vec = 1;
  ptype t = {K_B, 8};
  bool typed = false;
  for (;;) {
    word(ps, "a declaration");
    if (is(ps, ".align")) { align = (size_t)number(ps); continue; }
    if (is(ps, ".v2")) { vec = 2; continue; }
    if (is(ps, ".v4")) { vec = 4; continue; }
    if (is(ps, ".ptr")) continue;
    if (strncmp(ps->tok, ".attribute", 10) == 0) {   /* .attribute(.managed) */
      if (strcmp(ps->tok, ".attribute") == 0) { expect(ps, '('); word(ps, "an attribute"); expect(ps, ')'); }
      continue;
    }
    if (ps->tok[0] == '.' && type_of(ps->tok + 1, &t)) { typed = true; continue; }
    break;
  }
  if (!typed) fail(ps, "a declaration of '%s' without a type", ps->tok);
  char nm[512];
  snprintf(nm, sizeof nm, "%s", ps->tok);
  size_t el = ptx_type_size(t) * vec, count = 1;
  bool unsized = false;
  while (accept(ps, '[')) {
    if (accept(ps, ']')) { unsized = true; continue; }
    count *= (size_t)number(ps);
    expect(ps, ']');
  }
  if (align == 0) align = el;
  int id = new_var(ps, nm, space, el * count, align);
  var *v = &ps->m->vars[id];
  v->external = external || unsized;
  if (accept(ps, '=')) {
    v->init = calloc(1, v->size ? v->size : 1);
    size_t at = 0;
    ptype et = t;
    initialiser(ps, v, et, &at);
    if (unsized && at > v->size) {     /* name[] = {...}: sized by its initialiser */
      v->size = at;
      v->external = external;
      v->init = realloc(v->init, at);
      at = 0;
    }
  }
  return id;
}

/* ---- registers --------------------------------------------------------------- */

static int new_reg(parser *ps, const char *nm, ptype t) {
  func *f = ps->fn;
  f->regtype = realloc(f->regtype, (size_t)(f->nregs + 1) * sizeof *f->regtype);
  f->regtype[f->nregs] = t;
  int prev = regs_get(&ps->regmap, nm);
  regs_put(&ps->regmap, nm, f->nregs);
  if (ps->depth > 1) {   /* declared in a nested scope: the outer one's again at its end */
    if (ps->nscoped == ps->capscoped) {
      ps->capscoped = ps->capscoped ? 2 * ps->capscoped : 16;
      ps->scoped_regs = realloc(ps->scoped_regs, (size_t)ps->capscoped * sizeof *ps->scoped_regs);
      ps->scoped_depth = realloc(ps->scoped_depth, (size_t)ps->capscoped * sizeof *ps->scoped_depth);
      ps->scoped_prev = realloc(ps->scoped_prev, (size_t)ps->capscoped * sizeof *ps->scoped_prev);
    }
    ps->scoped_prev[ps->nscoped] = prev;
    ps->scoped_regs[ps->nscoped] = strdup(nm);
    ps->scoped_depth[ps->nscoped++] = ps->depth;
  }
  return f->nregs++;
}

static void reg_decl(parser *ps) {
  ptype t = {K_B, 32};
  word(ps, "a register type");
  if (is(ps, ".v2") || is(ps, ".v4")) fail(ps, "vector registers are not supported");
  if (ps->tok[0] != '.' || !type_of(ps->tok + 1, &t)) fail(ps, "unknown register type '%s'", ps->tok);
  do {
    word(ps, "a register name");
    char nm[512];
    snprintf(nm, sizeof nm, "%s", ps->tok);
    if (accept(ps, '<')) {
      long long n = number(ps);
      expect(ps, '>');
      for (long long i = 0; i < n; i++) {
        char r[600];
        snprintf(r, sizeof r, "%s%lld", nm, i);
        new_reg(ps, r, t);
      }
    } else {
      new_reg(ps, nm, t);
    }
  } while (accept(ps, ','));
  expect(ps, ';');
}

/* ---- functions ---------------------------------------------------------------- */

static int find_func(parser *ps, const char *nm, bool create) {
  const name *n = names_find(&ps->scope, nm);
  if (n && n->kind == N_FUNC) return n->id;
  if (!create) return -1;
  ptx_module *m = ps->m;
  m->fns = realloc(m->fns, (size_t)(m->nfns + 1) * sizeof *m->fns);
  func *f = &m->fns[m->nfns];
  memset(f, 0, sizeof *f);
  f->name = strdup(nm);
  f->local_align = 1;
  names_add(&ps->scope, nm, N_FUNC, m->nfns, 0);
  return m->nfns++;
}

/* A parameter list: ( .param [.align n] .type name[n], ... ), each a
** variable of the function's param space, laid out in order. */
static void param_list(parser *ps, func *f, bool results, bool define) {
  expect(ps, '(');
  if (accept(ps, ')')) return;
  int k = 0;
  do {
    word(ps, ".param");
    if (!is(ps, ".param") && !is(ps, ".reg")) fail(ps, "expected .param, found '%s'", ps->tok);
    bool isreg = is(ps, ".reg");
    int id = declaration(ps, SP_PARAM, false);
    var *v = &ps->m->vars[id];
    if (isreg) fail(ps, ".reg parameters are not supported");
    if (define) {
      v->fn = ps->fnid;
      f->param_bytes = (f->param_bytes + v->align - 1) / v->align * v->align;
      v->offset = f->param_bytes;
      f->param_bytes += v->size;
      f->params = realloc(f->params, (size_t)(f->nparams + 1) * sizeof *f->params);
      f->params[f->nparams++] = id;
      if (results) f->nret++;
    }
    k++;
  } while (accept(ps, ','));
  expect(ps, ')');
}

static void add_inst(parser *ps, const inst *in) {
  func *f = ps->fn;
  if (f->ncode == f->capcode) {
    f->capcode = f->capcode ? 2 * f->capcode : 64;
    f->code = realloc(f->code, (size_t)f->capcode * sizeof *f->code);
  }
  f->code[f->ncode++] = *in;
}

static int label(parser *ps, const char *nm, bool define) {
  for (int i = 0; i < ps->nlabels; i++)
    if (strcmp(ps->labels[i], nm) == 0) {
      if (define) {
        if (ps->label_pc[i] >= 0) fail(ps, "label '%s' defined twice", nm);
        ps->label_pc[i] = ps->fn->ncode;
      }
      return i;
    }
  if (ps->nlabels == ps->caplabels) {
    ps->caplabels = ps->caplabels ? 2 * ps->caplabels : 32;
    ps->labels = realloc(ps->labels, (size_t)ps->caplabels * sizeof *ps->labels);
    ps->label_pc = realloc(ps->label_pc, (size_t)ps->caplabels * sizeof *ps->label_pc);
  }
  ps->labels[ps->nlabels] = strdup(nm);
  ps->label_pc[ps->nlabels] = define ? ps->fn->ncode : -1;
  return ps->nlabels++;
}

/* ---- operands ------------------------------------------------------------------ */

static const struct { const char *s; int id; } sregs[] = {
    {"%tid.x", SR_TID_X}, {"%tid.y", SR_TID_Y}, {"%tid.z", SR_TID_Z},
    {"%ntid.x", SR_NTID_X}, {"%ntid.y", SR_NTID_Y}, {"%ntid.z", SR_NTID_Z},
    {"%ctaid.x", SR_CTAID_X}, {"%ctaid.y", SR_CTAID_Y}, {"%ctaid.z", SR_CTAID_Z},
    {"%nctaid.x", SR_NCTAID_X}, {"%nctaid.y", SR_NCTAID_Y}, {"%nctaid.z", SR_NCTAID_Z},
    {"%laneid", SR_LANEID}, {"%warpid", SR_WARPID}, {"%nwarpid", SR_NWARPID},
    {"%smid", SR_SMID}, {"%nsmid", SR_NSMID}, {"%gridid", SR_GRIDID},
    {"%lanemask_eq", SR_LANEMASK_EQ}, {"%lanemask_lt", SR_LANEMASK_LT},
    {"%lanemask_le", SR_LANEMASK_LE}, {"%lanemask_gt", SR_LANEMASK_GT},
    {"%lanemask_ge", SR_LANEMASK_GE}, {"%clock", SR_CLOCK}, {"%clock_hi", SR_CLOCK_HI},
    {"%clock64", SR_CLOCK64}, {"%globaltimer", SR_GLOBALTIMER},
    {"%globaltimer_lo", SR_GLOBALTIMER_LO}, {"%globaltimer_hi", SR_GLOBALTIMER_HI},
    {"%dynamic_smem_size", SR_DYNAMIC_SMEM}, {"%total_smem_size", SR_TOTAL_SMEM},
    {"WARP_SZ", SR_WARPSZ},
    /* no clusters here: each block is a cluster of one */
    {"%cluster_ctarank", SR_CLUSTER_CTARANK}, {"%cluster_nctarank", SR_CLUSTER_NCTARANK}};

/* An immediate's bits for an operand of type t (a float literal is
** converted to t's width; an integer literal in a float operand is its value). */
static uint64_t literal(parser *ps, const char *s, bool neg, ptype t) {
  uint64_t bits;
  bool isfloat = t.k == K_F && t.bits >= 32;
  if (s[0] == '0' && (s[1] == 'f' || s[1] == 'F' || s[1] == 'd' || s[1] == 'D')) {
    double d;
    bits = strtoull(s + 2, NULL, 16);
    if (s[1] == 'f' || s[1] == 'F') {
      uint32_t b = (uint32_t)bits;
      float f;
      memcpy(&f, &b, 4);
      d = f;
      if (!(isfloat && t.bits == 64)) return neg ? bits ^ 0x80000000u : bits;
    } else {
      memcpy(&d, &bits, 8);
      if (!(isfloat && t.bits == 32)) return neg ? bits ^ 0x8000000000000000ull : bits;
    }
    if (neg) d = -d;
    if (t.bits == 32) { float f = (float)d; uint32_t b; memcpy(&b, &f, 4); return b; }
    memcpy(&bits, &d, 8);
    return bits;
  }
  char *end;
  if (strchr(s, '.') || strchr(s, 'e') || strchr(s, 'E')) {
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) goto integer;
    double d = strtod(s, &end);
    if (*end) fail(ps, "not a number: '%s'", s);
    if (neg) d = -d;
    if (t.bits == 32) { float f = (float)d; uint32_t b; memcpy(&b, &f, 4); return b; }
    memcpy(&bits, &d, 8);
    return bits;
  }
integer:
  bits = strtoull(s, &end, 0);
  if (*end == 'U') end++;
  if (*end) fail(ps, "not a number: '%s'", s);
  if (neg) bits = 0 - bits;   /* unsigned: -2^63 negates to itself */
  if (isfloat) {
    double d = neg ? (double)(int64_t)bits : (double)bits;
    if (t.bits == 32) { float f = (float)d; uint32_t b; memcpy(&b, &f, 4); return b; }
    memcpy(&bits, &d, 8);
  }
  return bits;
}

static void name_operand(parser *ps, operand *o, const char *s, int role) {
  /* a register need not start with '%': inline assembly's { .reg .pred p; ... } */
  int slot = ps->fn ? regs_get(&ps->regmap, s) : -1;
  if (slot >= 0) { o->kind = O_REG; o->reg = slot; return; }
  if (s[0] == '%' || strcmp(s, "WARP_SZ") == 0) {
    for (size_t i = 0; i < sizeof sregs / sizeof sregs[0]; i++)
      if (strcmp(s, sregs[i].s) == 0) { o->kind = O_SREG; o->reg = sregs[i].id; return; }
    if (strncmp(s, "%envreg", 7) == 0) {      /* the driver's: the grid's workspace */
      char *end;
      long k = strtol(s + 7, &end, 10);
      if (end == s + 7 || *end != '\0' || k < 0 || k > 31) fail(ps, "unknown register '%s'", s);
      o->kind = O_SREG;
      o->reg = SR_ENVREG0 + (int)k;
      return;
    }
    fail(ps, "unknown register '%s'", s);
  }
  if (strcmp(s, "_") == 0) { o->kind = O_REG; o->reg = -1; return; }
  const name *n = names_find(&ps->scope, s);
  if (n && n->kind == N_VAR) { o->kind = O_SYM; o->sym = n->id; return; }
  if (n && n->kind == N_FUNC) { o->kind = O_FUNC; o->reg = n->id; return; }
  if (role == 'l' || s[0] == '$' || s[0] == 'L' || isalpha((unsigned char)s[0]) || s[0] == '_') {
    o->kind = O_LABEL;
    o->reg = label(ps, s, false);
    return;
  }
  fail(ps, "unknown name '%s'", s);
}

static void operand_of(parser *ps, operand *o, ptype t) {
  memset(o, 0, sizeof *o);
  o->reg = -1;
  o->sym = -1;
  next(ps);
  if (punct(ps, '[')) {
    o->kind = O_ADDR;
    bool neg = false;
    next(ps);
    if (ps->kind == T_WORD && !isdigit((unsigned char)ps->tok[0])) {
      operand b;
      memset(&b, 0, sizeof b);
      name_operand(ps, &b, ps->tok, 0);
      if (b.kind == O_REG) o->reg = b.reg;
      else if (b.kind == O_SYM) o->sym = b.sym;
      else fail(ps, "an address of '%s'", ps->tok);
      next(ps);
      if (punct(ps, '+') || punct(ps, '-')) {
        neg = punct(ps, '-');
        if (accept(ps, '-')) neg = !neg;
        word(ps, "an offset");
        o->imm = (int64_t)literal(ps, ps->tok, neg, (ptype){K_S, 64});
        next(ps);
      }
    } else {
      if (punct(ps, '-')) { neg = true; next(ps); }
      o->imm = (int64_t)literal(ps, ps->tok, neg, (ptype){K_S, 64});
      next(ps);
    }
    if (!punct(ps, ']')) fail(ps, "expected ']', found '%s'", ps->tok);
  } else if (punct(ps, '{')) {
    o->kind = O_VEC;
    do {
      word(ps, "a register");
      if (o->n == 4) fail(ps, "a vector of more than four");
      operand r;
      memset(&r, 0, sizeof r);
      name_operand(ps, &r, ps->tok, 0);
      if (r.kind != O_REG) fail(ps, "'%s' in a vector is not a register", ps->tok);
      o->v[o->n++] = r.reg;
    } while (accept(ps, ','));
    expect(ps, '}');
  } else if (punct(ps, '!')) {
    word(ps, "a predicate");
    name_operand(ps, o, ps->tok, 0);
    o->neg = 1;
  } else if (punct(ps, '-') || (ps->kind == T_WORD && isdigit((unsigned char)ps->tok[0]))) {
    bool neg = punct(ps, '-');
    if (neg) word(ps, "a number");
    o->kind = O_IMM;
    o->imm = (int64_t)literal(ps, ps->tok, neg, t);
  } else if (ps->kind == T_WORD) {
    name_operand(ps, o, ps->tok, 0);
    if (o->kind == O_SYM && accept(ps, '+')) o->imm = number(ps);
  } else {
    fail(ps, "unexpected '%s' in an operand", ps->tok);
  }
}

/* ---- instructions ---------------------------------------------------------------- */

static const struct { const char *s; int op; } opcodes[] = {
    {"mov", I_MOV}, {"add", I_ADD}, {"addc", I_ADD}, {"sub", I_SUB}, {"subc", I_SUB},
    {"mul", I_MUL}, {"mad", I_MAD}, {"madc", I_MAD}, {"fma", I_FMA}, {"div", I_DIV},
    {"rem", I_REM}, {"abs", I_ABS}, {"neg", I_NEG}, {"min", I_MIN}, {"max", I_MAX},
    {"and", I_AND}, {"or", I_OR}, {"xor", I_XOR}, {"not", I_NOT}, {"cnot", I_CNOT},
    {"shl", I_SHL}, {"shr", I_SHR}, {"shf", I_SHF}, {"lop3", I_LOP3}, {"popc", I_POPC},
    {"clz", I_CLZ}, {"brev", I_BREV}, {"bfind", I_BFIND}, {"bfe", I_BFE}, {"bfi", I_BFI},
    {"prmt", I_PRMT}, {"setp", I_SETP}, {"set", I_SET}, {"selp", I_SELP}, {"slct", I_SLCT},
    {"cvt", I_CVT}, {"cvta", I_CVTA}, {"isspacep", I_ISSPACEP}, {"ld", I_LD}, {"ldu", I_LD},
    {"st", I_ST}, {"bra", I_BRA}, {"brx", I_BRX}, {"call", I_CALL}, {"ret", I_RET},
    {"exit", I_EXIT}, {"bar", I_BAR}, {"barrier", I_BAR}, {"membar", I_MEMBAR},
    {"fence", I_MEMBAR}, {"atom", I_ATOM}, {"red", I_RED}, {"shfl", I_SHFL}, {"vote", I_VOTE},
    {"match", I_MATCH}, {"redux", I_REDUX}, {"activemask", I_ACTIVEMASK}, {"elect", I_ELECT},
    {"rcp", I_RCP},
    {"sqrt", I_SQRT}, {"rsqrt", I_RSQRT}, {"sin", I_SIN}, {"cos", I_COS}, {"ex2", I_EX2},
    {"lg2", I_LG2}, {"tanh", I_TANH}, {"testp", I_TESTP}, {"copysign", I_COPYSIGN},
    {"trap", I_TRAP}, {"nanosleep", I_NANOSLEEP}, {"mul24", I_MUL24}, {"mad24", I_MAD24},
    {"sad", I_SAD}, {"prefetch", I_PREFETCH}, {"prefetchu", I_PREFETCH}, {"dp4a", I_DP4A},
    {"dp2a", I_DP2A}, {"bmsk", I_BMSK}, {"szext", I_SZEXT}, {"vabsdiff2", I_VABSDIFF},
    {"vabsdiff4", I_VABSDIFF}, {"fns", I_FNS},
    {"pmevent", I_NOP}, {"brkpt", I_TRAP}, {"discard", I_PREFETCH}, {"applypriority", I_PREFETCH}};

/* An opcode's PTX name, for messages. */
const char *ptx_op_name(int op) {
  for (size_t i = 0; i < sizeof opcodes / sizeof opcodes[0]; i++)
    if (opcodes[i].op == op) return opcodes[i].s;
  return "?";
}

static const char *const cmps[] = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi",
                                   "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
static const char *const rnds[] = {"", "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna"};
static const char *const atoms[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor", "cas", "exch"};
static const char *const testps[] = {"finite", "infinite", "number", "notanumber", "normal", "subnormal"};
/* modifiers that change nothing here: memory ordering and scope (everything
** is sequentially consistent), cache hints, alignment promises */
static const char *const ignored[] = {
    "sync", "aligned", "volatile", "relaxed", "acquire", "release", "acq_rel", "sc", "weak",
    "mmio", "cta", "cluster", "gpu", "sys", "nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt",
    "noftz", "full", "L1", "L2", "unified", "level", "proxy", "async", "uni_", "shared::cta",
    "global", "noreturn", "cta::sys"};

static int find_str(const char *const *v, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i], s) == 0) return (int)i;
  return -1;
}
#define FIND(v, s) find_str(v, sizeof v / sizeof v[0], s)

static int space_of(const char *s) {
  if (strcmp(s, "global") == 0) return SP_GLOBAL;
  if (strcmp(s, "shared") == 0 || strcmp(s, "shared::cta") == 0 || strcmp(s, "shared::cluster") == 0)
    return SP_SHARED;
  if (strcmp(s, "local") == 0) return SP_LOCAL;
  if (strcmp(s, "param") == 0 || strcmp(s, "param::entry") == 0 || strcmp(s, "param::func") == 0)
    return SP_PARAM;
  if (strcmp(s, "const") == 0) return SP_CONST;
  return -1;
}

/* Decode opcode text ("ld.global.nc.v4.f32") into in. */
static void decode(parser *ps, const char *text, inst *in) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", text);
  char *save = NULL, *tok = strtok_r(buf, ".", &save);
  int op = -1;
  for (size_t i = 0; i < sizeof opcodes / sizeof opcodes[0]; i++)
    if (strcmp(tok, opcodes[i].s) == 0) { op = opcodes[i].op; break; }
  if (op < 0) fail(ps, "unknown instruction '%s'", text);
  in->op = (uint16_t)op;
  in->vec = 1;
  if (strcmp(tok, "addc") == 0 || strcmp(tok, "subc") == 0 || strcmp(tok, "madc") == 0)
    in->flags |= F_CARRYIN;
  if (op == I_VABSDIFF) in->mod = tok[8] == '2' ? 2 : 4;     /* lanes */
  int ntypes = 0, mode = 0;
  bool after_cmp = false, cluster = false;
  while ((tok = strtok_r(NULL, ".", &save)) != NULL) {
    ptype t;
    int k;
    if (type_of(tok, &t)) {
      if (ntypes == 0) in->t = t;
      else in->t2 = t;
      ntypes++;
    } else if ((op == I_SETP || op == I_SET) && !after_cmp && (k = FIND(cmps, tok)) >= 0) {
      in->mod = (uint8_t)k;
      after_cmp = true;
    } else if ((op == I_SETP || op == I_SET) && after_cmp &&
               (strcmp(tok, "and") == 0 || strcmp(tok, "or") == 0 || strcmp(tok, "xor") == 0)) {
      in->mod2 = tok[0] == 'a' ? BOP_AND : tok[0] == 'o' ? BOP_OR : BOP_XOR;
    } else if ((op == I_ATOM || op == I_RED || op == I_REDUX) && (k = FIND(atoms, tok)) >= 0) {
      in->mod = (uint8_t)k;
    } else if (op == I_TESTP && (k = FIND(testps, tok)) >= 0) {
      in->mod = (uint8_t)k;
    } else if ((k = FIND(rnds, tok)) > 0) {
      if (op == I_CVT && k <= RND_RP && in->mod) in->mod2 = (uint8_t)k;
      else in->mod = (uint8_t)k;
    } else if (space_of(tok) >= 0 && op != I_BAR && op != I_MEMBAR) {
      in->space = (uint8_t)space_of(tok);
    } else if (strcmp(tok, "to") == 0) {
      in->flags |= F_TOSPACE;
    } else if (strcmp(tok, "v2") == 0 || strcmp(tok, "v4") == 0 || strcmp(tok, "v8") == 0) {
      in->vec = (uint8_t)atoi(tok + 1);
    } else if (strcmp(tok, "ftz") == 0) {
      in->flags |= F_FTZ;
    } else if (strcmp(tok, "sat") == 0 || strcmp(tok, "satfinite") == 0) {
      in->flags |= F_SAT;
    } else if (strcmp(tok, "relu") == 0) {
      in->flags |= F_RELU;
    } else if (strcmp(tok, "NaN") == 0 && (op == I_MIN || op == I_MAX)) {
      in->mod2 = 1;
    } else if (strcmp(tok, "approx") == 0) {
      in->flags |= F_APPROX;
    } else if (strcmp(tok, "hi") == 0) {
      in->flags |= F_HI;
    } else if (strcmp(tok, "lo") == 0) {
      in->flags |= F_LO;
    } else if (strcmp(tok, "wide") == 0) {
      in->flags |= F_WIDE;
    } else if (strcmp(tok, "cc") == 0) {
      in->flags |= F_CC;
    } else if (strcmp(tok, "uni") == 0) {
      in->flags |= F_UNI;
    } else if (op == I_SHF && (strcmp(tok, "l") == 0 || strcmp(tok, "r") == 0)) {
      if (tok[0] == 'r') in->flags |= F_SHIFT_R;
    } else if (op == I_SHF && (strcmp(tok, "wrap") == 0 || strcmp(tok, "clamp") == 0)) {
      if (tok[0] == 'w') in->flags |= F_WRAP;
    } else if (op == I_SHFL && (strcmp(tok, "up") == 0 || strcmp(tok, "down") == 0 ||
                                strcmp(tok, "bfly") == 0 || strcmp(tok, "idx") == 0)) {
      in->mod = tok[0] == 'u' ? SHFL_UP : tok[0] == 'd' ? SHFL_DOWN : tok[0] == 'b' ? SHFL_BFLY : SHFL_IDX;
      mode = 1;
    } else if (op == I_VOTE && (strcmp(tok, "all") == 0 || strcmp(tok, "any") == 0 ||
                                strcmp(tok, "uni") == 0 || strcmp(tok, "ballot") == 0)) {
      in->mod = strcmp(tok, "all") == 0 ? VOTE_ALL : strcmp(tok, "any") == 0 ? VOTE_ANY
              : strcmp(tok, "uni") == 0 ? VOTE_UNI : VOTE_BALLOT;
      mode = 1;
    } else if (op == I_MATCH && (strcmp(tok, "any") == 0 || strcmp(tok, "all") == 0)) {
      if (tok[1] == 'l') in->flags |= F_ALL;
      mode = 1;
    } else if (op == I_BAR && (strcmp(tok, "cluster") == 0 || strcmp(tok, "wait") == 0)) {
      /* barrier.cluster.arrive, then .wait: a launch has no clusters here,
      ** so its cluster is its block: the arrival is nothing, the wait the
      ** block's barrier 0 */
      if (tok[0] == 'c') cluster = true;
    } else if (op == I_BAR && (strcmp(tok, "sync") == 0 || strcmp(tok, "arrive") == 0 ||
                               strcmp(tok, "red") == 0 || strcmp(tok, "warp") == 0 ||
                               strcmp(tok, "popc") == 0 || strcmp(tok, "and") == 0 ||
                               strcmp(tok, "or") == 0 || strcmp(tok, "cta") == 0)) {
      if (strcmp(tok, "warp") == 0) in->op = I_BAR_WARP;
      else if (strcmp(tok, "red") == 0) in->op = I_BAR_RED;
      else if (strcmp(tok, "arrive") == 0) in->mod = BAR_ARRIVE;
      else if (strcmp(tok, "popc") == 0) in->mod = BAR_RED_POPC;
      else if (strcmp(tok, "and") == 0) in->mod = BAR_RED_AND;
      else if (strcmp(tok, "or") == 0) in->mod = BAR_RED_OR;
    } else if (op == I_VABSDIFF && strcmp(tok, "add") == 0) {
      in->mod2 = 1;     /* the secondary operation: the lanes summed, plus c */
    } else if (op == I_BFIND && strcmp(tok, "shiftamt") == 0) {
      in->flags |= F_SHIFTAMT;
    } else if (op == I_PRMT && (strcmp(tok, "f4e") == 0 || strcmp(tok, "b4e") == 0 ||
                                strcmp(tok, "rc8") == 0 || strcmp(tok, "ecl") == 0 ||
                                strcmp(tok, "ecr") == 0 || strcmp(tok, "rc16") == 0)) {
      fail(ps, "prmt mode .%s is not supported", tok);
    } else if (op == I_PREFETCH || (op == I_MEMBAR && FIND(ignored, tok) >= 0) ||
               FIND(ignored, tok) >= 0 || strncmp(tok, "L1::", 4) == 0 ||
               strncmp(tok, "L2::", 4) == 0 || strcmp(tok, "b32") == 0) {
      /* nothing to do */
    } else if (op == I_BRX && strcmp(tok, "idx") == 0) {
      /* brx.idx, its only form */
    } else if (op == I_MEMBAR && (strcmp(tok, "gl") == 0 || strcmp(tok, "sys") == 0 ||
                                  strcmp(tok, "proxy") == 0 || strcmp(tok, "alias") == 0)) {
    } else {
      fail(ps, "unknown modifier '.%s' in '%s'", tok, text);
    }
  }
  (void)mode;
  if (cluster && in->mod == BAR_ARRIVE) in->op = I_NOP;
  if (ntypes == 0 && op != I_BRA && op != I_CALL && op != I_RET && op != I_EXIT &&
      op != I_BAR && op != I_MEMBAR && op != I_TRAP && op != I_NANOSLEEP && op != I_PREFETCH &&
      op != I_NOP && op != I_BRX && op != I_ACTIVEMASK && op != I_CVTA && op != I_ISSPACEP &&
      op != I_ELECT && in->op != I_BAR_WARP)
    fail(ps, "'%s' without a type", text);
}

/* Operand i of the next instruction names label lab: fixed once the
** function ends. */
static void add_fix(parser *ps, int i, int lab) {
  if (ps->nfix == ps->capfix) {
    ps->capfix = ps->capfix ? 2 * ps->capfix : 64;
    ps->fix = realloc(ps->fix, (size_t)ps->capfix * sizeof *ps->fix);
  }
  ps->fix[ps->nfix][0] = ps->fn->ncode;
  ps->fix[ps->nfix][1] = i;
  ps->fix[ps->nfix++][2] = lab;
}

/* A call: call[.uni] [(results),] target [, (arguments)]; */
static void call_inst(parser *ps, inst *in) {
  func *f = ps->fn;
  callsite c;
  memset(&c, 0, sizeof c);
  int32_t args[64];
  next(ps);
  if (punct(ps, '(')) {
    do {
      word(ps, "a result");
      const name *n = names_find(&ps->scope, ps->tok);
      if (n == NULL || n->kind != N_VAR) fail(ps, "a call's result '%s' is not a .param", ps->tok);
      if (c.nret == 4) fail(ps, "more than four results");
      c.ret[c.nret++] = n->id;
    } while (accept(ps, ','));
    expect(ps, ')');
    expect(ps, ',');
    next(ps);
  }
  if (ps->kind != T_WORD) fail(ps, "a call without a target");
  if (ps->tok[0] == '%') fail(ps, "indirect calls are not supported");
  c.callee = find_func(ps, ps->tok, false);
  if (c.callee < 0) fail(ps, "a call of '%s', which is not declared", ps->tok);
  if (accept(ps, ',')) {
    expect(ps, '(');
    if (!accept(ps, ')')) {
      do {
        next(ps);
        if (ps->kind != T_WORD) fail(ps, "an argument '%s'", ps->tok);
        const name *n = names_find(&ps->scope, ps->tok);
        if (n == NULL || n->kind != N_VAR) fail(ps, "a call's argument '%s' is not a .param", ps->tok);
        if (c.narg == 64) fail(ps, "more than 64 arguments");
        args[c.narg++] = n->id;
      } while (accept(ps, ','));
      expect(ps, ')');
    }
    if (accept(ps, ',')) fail(ps, "calls through a prototype are not supported");
  }
  expect(ps, ';');
  c.args = malloc((size_t)(c.narg ? c.narg : 1) * sizeof *c.args);
  memcpy(c.args, args, (size_t)c.narg * sizeof *args);
  f->calls = realloc(f->calls, (size_t)(f->ncalls + 1) * sizeof *f->calls);
  f->calls[f->ncalls] = c;
  in->call = f->ncalls++;
  in->nops = 0;
}

/* The type an operand's immediate takes: shift counts, selectors and
** masks are 32-bit integers whatever the instruction's type. */
static ptype operand_type(const inst *in, int i) {
  ptype u32 = {K_U, 32};
  switch (in->op) {
    case I_SHL: case I_SHR: return i == 2 ? u32 : in->t;
    case I_BFE: return i >= 2 ? u32 : in->t;
    case I_BFI: return i >= 3 ? u32 : in->t;
    case I_ELECT: return i == 1 ? (ptype){K_PRED, 1} : u32;
    case I_SHFL: case I_VOTE: case I_MATCH: case I_REDUX: case I_BAR: case I_BAR_RED:
    case I_BAR_WARP: return i == 1 && in->op == I_MATCH ? in->t : i == 1 && in->op == I_SHFL ? in->t
                                                        : i == 1 && in->op == I_REDUX ? in->t : u32;
    case I_CVT: return i == 1 ? in->t2 : in->t;
    case I_SET: return i >= 1 ? in->t2 : in->t;
    case I_SLCT: return i == 3 ? in->t2 : in->t;
    case I_SELP: return i == 3 ? (ptype){K_PRED, 1} : in->t;
    case I_MUL: case I_MAD:
      if (in->flags & F_WIDE) return i == 0 || (in->op == I_MAD && i == 3)
                                         ? (ptype){in->t.k, (uint8_t)(in->t.bits * 2)} : in->t;
      return in->t;
    case I_PRMT: case I_LOP3: return u32;
    case I_ATOM: case I_RED: case I_ST: case I_LD: return in->t;
    default: return in->t;
  }
}

static void instruction(parser *ps, int guard, bool guard_neg) {
  inst in;
  memset(&in, 0, sizeof in);
  in.guard = guard;
  in.guard_neg = guard_neg;
  in.line = ps->tline;
  char text[512];
  snprintf(text, sizeof text, "%s", ps->tok);
  decode(ps, text, &in);
  if (in.op == I_CALL) {
    call_inst(ps, &in);
    add_inst(ps, &in);
    return;
  }
  if (in.op == I_BRX) {   /* brx.idx index, table; */
    operand_of(ps, &in.o[0], (ptype){K_U, 32});
    expect(ps, ',');
    word(ps, "a branch table");
    in.o[1].kind = O_LABEL;
    in.o[1].reg = label(ps, ps->tok, false);
    in.nops = 2;
    expect(ps, ';');
    add_inst(ps, &in);   /* its table is resolved once the function ends */
    return;
  }
  int n = 0;
  if (!accept(ps, ';')) {
    do {
      if (n == 6) fail(ps, "more than six operands in '%s'", text);
      operand_of(ps, &in.o[n], operand_type(&in, n));
      if (in.o[n].kind == O_LABEL && in.op != I_BRA)
        fail(ps, "unknown name '%s' in '%s'", ps->labels[in.o[n].reg], text);
      if (accept(ps, '|')) {    /* p|q: a second destination */
        if (n != 0) fail(ps, "'|' after an operand other than the first");
        in.flags |= F_DUALP;
        n++;
        operand_of(ps, &in.o[n], (ptype){K_PRED, 1});
      }
      n++;
    } while (accept(ps, ','));
    expect(ps, ';');
  }
  in.nops = (uint8_t)n;
  /* a float literal in an integer operand stays its bits; an f32 operand
  ** given 0d... was converted by literal() through operand_type */
  if (in.op == I_BRA && (n != 1 || in.o[0].kind != O_LABEL)) fail(ps, "bra without a label");
  if (in.op == I_ST && n >= 2 && in.o[0].kind != O_ADDR) fail(ps, "st without an address");
  if (in.op == I_LD && n >= 2 && in.o[1].kind != O_ADDR) fail(ps, "ld without an address");
  for (int i = 0; i < n; i++)
    if (in.o[i].kind == O_LABEL) add_fix(ps, i, in.o[i].reg);
  add_inst(ps, &in);
}

/* label: .branchtargets a, b, c; */
static void branch_targets(parser *ps, int lab) {
  func *f = ps->fn;
  int start = f->nbrx;
  f->brx = realloc(f->brx, (size_t)(f->nbrx + 1) * sizeof *f->brx);
  f->brx[f->nbrx++] = 0;
  do {
    word(ps, "a label");
    f->brx = realloc(f->brx, (size_t)(f->nbrx + 1) * sizeof *f->brx);
    f->brx[f->nbrx++] = label(ps, ps->tok, false);   /* a label number; fixed at the end */
    f->brx[start]++;
  } while (accept(ps, ','));
  expect(ps, ';');
  /* the table's label stands for its position in brx, not an instruction */
  ps->label_pc[lab] = -2 - start;
}

static void body(parser *ps) {
  func *f = ps->fn;
  ps->depth = 1;
  for (;;) {
    next(ps);
    if (ps->kind == T_EOF) fail(ps, "the end of the text inside %s", f->name);
    if (punct(ps, '}')) {
      names_pop(&ps->scope, ps->depth);
      for (int i = ps->nscoped - 1; i >= 0 && ps->scoped_depth[i] >= ps->depth; i--) {
        regs_put(&ps->regmap, ps->scoped_regs[i], ps->scoped_prev[i]);
        free(ps->scoped_regs[i]);
        ps->nscoped--;
      }
      if (--ps->depth == 0) return;
      continue;
    }
    if (punct(ps, '{')) { ps->depth++; continue; }
    if (punct(ps, '@')) {
      bool neg = accept(ps, '!');
      word(ps, "a predicate");
      int slot = regs_get(&ps->regmap, ps->tok);
      if (slot < 0) fail(ps, "unknown predicate '%s'", ps->tok);
      word(ps, "an instruction");
      instruction(ps, slot, neg);
      continue;
    }
    if (ps->kind != T_WORD) fail(ps, "unexpected '%s'", ps->tok);
    char w[512];
    snprintf(w, sizeof w, "%s", ps->tok);
    if (accept(ps, ':')) {
      int lab = label(ps, w, true);
      next(ps);
      if (ps->kind == T_WORD && is(ps, ".branchtargets")) branch_targets(ps, lab);
      else unread(ps);
      continue;
    }
    if (w[0] == '.') {
      if (strcmp(w, ".reg") == 0) {
        reg_decl(ps);
      } else if (strcmp(w, ".local") == 0) {
        int id = declaration(ps, SP_LOCAL, false);
        var *v = &ps->m->vars[id];
        f->local_bytes = (f->local_bytes + v->align - 1) / v->align * v->align;
        v->offset = f->local_bytes;
        f->local_bytes += v->size;
        if (v->align > f->local_align) f->local_align = v->align;
        expect(ps, ';');
      } else if (strcmp(w, ".shared") == 0) {
        declaration(ps, SP_SHARED, false);
        expect(ps, ';');
      } else if (strcmp(w, ".param") == 0) {
        int id = declaration(ps, SP_PARAM, false);
        var *v = &ps->m->vars[id];
        f->param_bytes = (f->param_bytes + v->align - 1) / v->align * v->align;
        v->offset = f->param_bytes;
        f->param_bytes += v->size;
        expect(ps, ';');
      } else if (strcmp(w, ".pragma") == 0) {
        to_semicolon(ps);
      } else if (strcmp(w, ".loc") == 0 || strcmp(w, ".file") == 0) {
        while (*ps->p && *ps->p != '\n') ps->p++;   /* debug line information */
      } else {
        fail(ps, "unknown directive '%s' in %s", w, f->name);
      }
      continue;
    }
    snprintf(ps->tok, sizeof ps->tok, "%s", w);
    instruction(ps, -1, false);
  }
}

static void function(parser *ps, bool entry, bool external) {
  ptx_module *m = ps->m;
  bool results = false;
  next(ps);
  if (!entry && punct(ps, '(')) { results = true; unread(ps); }
  else unread(ps);
  /* results come before the name: read them into a scratch list first */
  int save_nvars = m->nvars;
  const char *mark = ps->p;
  int mark_line = ps->line;
  if (results) {
    /* skip to find the name, then come back once the function exists */
    int d = 0;
    do {
      next(ps);
      if (punct(ps, '(')) d++;
      if (punct(ps, ')')) d--;
    } while (d > 0 && ps->kind != T_EOF);
  }
  word(ps, "a function name");
  char nm[512];
  snprintf(nm, sizeof nm, "%s", ps->tok);
  int id = find_func(ps, nm, true);
  func *f = &m->fns[id];
  /* a declaration and the definition both lay the parameters out: the last wins */
  bool define = true;
  f->nparams = f->nret = 0;
  f->param_bytes = 0;
  ps->fn = f;
  ps->fnid = id;
  f->entry = entry;
  const char *after_name = ps->p;
  int after_line = ps->line;
  if (results) {
    ps->p = mark;
    ps->line = mark_line;
    ps->depth = 1;
    param_list(ps, f, true, define);
    ps->p = after_name;
    ps->line = after_line;
  }
  ps->depth = 1;
  next(ps);
  unread(ps);
  if (punct(ps, '(')) param_list(ps, f, false, define);
  f->formal_bytes = f->param_bytes;
  (void)save_nvars;
  /* performance directives, then a body or a ';' */
  for (;;) {
    next(ps);
    if (punct(ps, ';')) {            /* a declaration */
      names_pop(&ps->scope, 1);
      ps->fn = NULL;
      ps->depth = 0;
      return;
    }
    if (punct(ps, '{')) break;
    if (ps->kind != T_WORD) fail(ps, "unexpected '%s' after %s's parameters", ps->tok, nm);
    if (is(ps, ".maxntid") || is(ps, ".reqntid")) {
      long long x = number(ps), y = 1, z = 1;
      if (accept(ps, ',')) y = number(ps);
      if (accept(ps, ',')) z = number(ps);
      f->maxntid = (int)(x * y * z);
    } else if (is(ps, ".minnctapersm") || is(ps, ".maxnreg") || is(ps, ".maxclusterrank") ||
               is(ps, ".maxnctapersm")) {
      number(ps);
    } else if (is(ps, ".reqnctapercluster")) {
      number(ps);
      while (accept(ps, ',')) number(ps);
    } else if (is(ps, ".noreturn") || is(ps, ".explicitcluster")) {
    } else if (is(ps, ".pragma")) {
      to_semicolon(ps);
    } else {
      fail(ps, "unknown directive '%s' of %s", ps->tok, nm);
    }
  }
  if (f->defined) fail(ps, "%s is defined twice", nm);
  f->defined = true;
  (void)external;
  ps->nlabels = 0;
  ps->nfix = 0;
  body(ps);
  /* labels to instruction indices */
  for (int i = 0; i < ps->nfix; i++) {
    int lab = ps->fix[i][2];
    if (ps->label_pc[lab] == -1) fail(ps, "label '%s' is never defined", ps->labels[lab]);
    f->code[ps->fix[i][0]].o[ps->fix[i][1]].reg = ps->label_pc[lab];
  }
  for (int i = 0; i < f->nbrx;) {
    int count = f->brx[i];
    for (int j = 1; j <= count; j++) {
      int lab = f->brx[i + j];
      if (ps->label_pc[lab] < 0) fail(ps, "branch target '%s' is not an instruction", ps->labels[lab]);
      f->brx[i + j] = ps->label_pc[lab];
    }
    i += count + 1;
  }
  /* brx's operand: the table, as -2 - its position in brx */
  for (int i = 0; i < f->ncode; i++)
    if (f->code[i].op == I_BRX) {
      /* its operand holds the label's number, whose label_pc is the table's */
      int lab = f->code[i].o[1].reg;
      int at = lab >= 0 && lab < ps->nlabels ? ps->label_pc[lab] : -1;
      if (at > -2) fail(ps, "brx.idx without a .branchtargets table");
      f->code[i].o[1].reg = -2 - at;
    }
  for (int i = 0; i < ps->nlabels; i++) free(ps->labels[i]);
  ps->nlabels = 0;
  /* every path must end: a final instruction falling off the end returns */
  inst r;
  memset(&r, 0, sizeof r);
  r.op = I_RET;
  r.guard = -1;
  r.line = ps->tline;
  add_inst(ps, &r);
  regs_clear(&ps->regmap);
  ps->fn = NULL;
  ps->depth = 0;
}

/* ---- the module ---------------------------------------------------------------- */

static void layout_shared(ptx_module *m) {
  /* module scope and .func shared variables first, at the same offsets in
  ** every kernel; then each kernel's own from there (overlapping others') */
  size_t common = 0, align = 16;
  for (int i = 0; i < m->nvars; i++) {
    var *v = &m->vars[i];
    if (v->space != SP_SHARED || v->external) continue;
    if (v->fn >= 0 && m->fns[v->fn].entry) continue;
    common = (common + v->align - 1) / v->align * v->align;
    v->offset = common;
    common += v->size;
    if (v->align > align) align = v->align;
  }
  m->static_shared = common;
  m->shared_align = align;
  for (int e = 0; e < m->nfns; e++) {
    if (!m->fns[e].entry) continue;
    size_t at = common;
    for (int i = 0; i < m->nvars; i++) {
      var *v = &m->vars[i];
      if (v->space != SP_SHARED || v->external || v->fn != e) continue;
      at = (at + v->align - 1) / v->align * v->align;
      v->offset = at;
      at += v->size;
    }
    m->fns[e].shared_bytes = at;
    m->fns[e].shared_bytes_aligned = (at + 15) / 16 * 16;
  }
}

ptx_module *ptx_parse(const char *text, char *err, size_t errlen) {
  parser ps;
  memset(&ps, 0, sizeof ps);
  ps.p = text;
  ps.line = 1;
  ps.err = err;
  ps.errlen = errlen;
  ps.m = calloc(1, sizeof *ps.m);
  if (setjmp(ps.fail)) {
    names_pop(&ps.scope, 0);
    free(ps.scope.v);
    regs_clear(&ps.regmap);
    for (int i = 0; i < ps.nlabels; i++) free(ps.labels[i]);
    free(ps.labels);
    free(ps.label_pc);
    free(ps.fix);
    for (int i = 0; i < ps.nscoped; i++) free(ps.scoped_regs[i]);
    free(ps.scoped_regs);
    free(ps.scoped_depth);
    free(ps.scoped_prev);
    ptx_free(ps.m);
    return NULL;
  }
  /* the printf and assert of the CUDA runtime, whether declared or not */
  bool external = false;
  for (;;) {
    next(&ps);
    if (ps.kind == T_EOF) break;
    if (ps.kind != T_WORD) fail(&ps, "unexpected '%s'", ps.tok);
    if (is(&ps, ".version")) { word(&ps, "a version"); continue; }
    if (is(&ps, ".target")) {
      do word(&ps, "a target"); while (accept(&ps, ','));
      continue;
    }
    if (is(&ps, ".address_size")) {
      if (number(&ps) != 64) fail(&ps, "only 64-bit addresses are supported");
      continue;
    }
    if (is(&ps, ".file")) { while (*ps.p && *ps.p != '\n') ps.p++; continue; }
    if (is(&ps, ".section")) {   /* debug sections */
      int d = 0;
      do {
        next(&ps);
        if (punct(&ps, '{')) d++;
        if (punct(&ps, '}')) d--;
      } while (d > 0 && ps.kind != T_EOF);
      continue;
    }
    if (is(&ps, ".visible") || is(&ps, ".weak") || is(&ps, ".common")) continue;
    if (is(&ps, ".extern")) { external = true; continue; }
    if (is(&ps, ".entry") || is(&ps, ".func")) {
      function(&ps, is(&ps, ".entry"), external);
      external = false;
      continue;
    }
    if (is(&ps, ".global") || is(&ps, ".const") || is(&ps, ".shared")) {
      int space = is(&ps, ".global") ? SP_GLOBAL : is(&ps, ".const") ? SP_CONST : SP_SHARED;
      int id = declaration(&ps, space, external && space == SP_SHARED);
      (void)id;
      expect(&ps, ';');
      external = false;
      continue;
    }
    if (is(&ps, ".alias")) { to_semicolon(&ps); continue; }
    fail(&ps, "unknown directive '%s'", ps.tok);
  }
  ptx_module *m = ps.m;
  for (int i = 0; i < m->nfns; i++) {
    func *f = &m->fns[i];
    if (!f->defined && strcmp(f->name, "vprintf") != 0 && strcmp(f->name, "__assertfail") != 0 &&
        strcmp(f->name, "malloc") != 0 && strcmp(f->name, "free") != 0) {
      /* only an error when called */
      for (int j = 0; j < m->nfns; j++)
        for (int c = 0; c < m->fns[j].ncalls; c++)
          if (m->fns[j].calls[c].callee == i) {
            ps.tline = 0;
            fail(&ps, "%s calls %s, which is declared but not defined", m->fns[j].name, f->name);
          }
    }
  }
  for (int i = 0; i < m->nvars; i++)
    if (m->vars[i].fn < 0 && (m->vars[i].space == SP_GLOBAL || m->vars[i].space == SP_CONST)) {
      m->globals = realloc(m->globals, (size_t)(m->nglobals + 1) * sizeof *m->globals);
      m->globals[m->nglobals++] = i;
    }
  layout_shared(m);
  for (int i = 0; i < m->nfns; i++) {
    func *f = &m->fns[i];
    f->regmask = malloc((size_t)(f->nregs ? f->nregs : 1) * sizeof *f->regmask);
    for (int r = 0; r < f->nregs; r++)
      f->regmask[r] = f->regtype[r].k == K_PRED ? 1 : f->regtype[r].bits >= 64 ? ~0ull
                      : (1ull << f->regtype[r].bits) - 1;
  }
  names_pop(&ps.scope, 0);
  free(ps.scope.v);
  free(ps.labels);
  free(ps.label_pc);
  free(ps.fix);
  free(ps.scoped_regs);
  free(ps.scoped_depth);
  free(ps.scoped_prev);
  return m;
}

void ptx_free(ptx_module *m) {
  if (m == NULL) return;
  for (int i = 0; i < m->nfns; i++) {
    func *f = &m->fns[i];
    free(f->name);
    free(f->regtype);
    free(f->regmask);
    free(f->code);
    for (int c = 0; c < f->ncalls; c++) free(f->calls[c].args);
    free(f->calls);
    free(f->params);
    free(f->brx);
    free(f->cubin_frames);
  }
  free(m->fns);
  for (int i = 0; i < m->nvars; i++) {
    free(m->vars[i].name);
    free(m->vars[i].init);
    free(m->vars[i].refs);
    free(m->vars[i].ref_add);
  }
  free(m->vars);
  free(m->globals);
  free(m);
}

/* ---- what the driver asks ---------------------------------------------------------- */

int ptx_nvars(const ptx_module *m) { return m->nglobals; }
ptx_var_info ptx_var(const ptx_module *m, int i) {
  const var *v = &m->vars[m->globals[i]];
  return (ptx_var_info){v->name, v->size, v->align, v->init, v->nrefs};
}
void ptx_bind(ptx_module *m, int i, void *addr) { m->vars[m->globals[i]].addr = addr; }
void ptx_bind_done(ptx_module *m) {
  for (int g = 0; g < m->nglobals; g++) {
    var *v = &m->vars[m->globals[g]];
    for (int r = 0; r < v->nrefs; r++) {
      const var *t = &m->vars[v->refs[2 * r + 1]];
      uint64_t a = (uint64_t)(uintptr_t)t->addr + (uint64_t)v->ref_add[r];
      if ((size_t)v->refs[2 * r] + 8 <= v->size && v->addr)
        memcpy((char *)v->addr + v->refs[2 * r], &a, 8);
    }
  }
}

int ptx_entry(const ptx_module *m, const char *nm) {
  for (int i = 0; i < m->nfns; i++)
    if (m->fns[i].entry && m->fns[i].defined && strcmp(m->fns[i].name, nm) == 0) return i;
  return -1;
}
int ptx_nentries(const ptx_module *m) { return m->nfns; }
const char *ptx_entry_name(const ptx_module *m, int e) {
  return m->fns[e].entry && m->fns[e].defined ? m->fns[e].name : NULL;
}
int ptx_entry_nparams(const ptx_module *m, int e) { return m->fns[e].nparams; }
void ptx_entry_param(const ptx_module *m, int e, int i, size_t *offset, size_t *size) {
  const var *v = &m->vars[m->fns[e].params[i]];
  *offset = v->offset;
  *size = v->size;
}
size_t ptx_entry_param_bytes(const ptx_module *m, int e) { return m->fns[e].formal_bytes; }
size_t ptx_entry_static_shared(const ptx_module *m, int e) { return m->fns[e].shared_bytes; }
int ptx_entry_maxntid(const ptx_module *m, int e) { return m->fns[e].maxntid; }
size_t ptx_entry_local_bytes(const ptx_module *m, int e) { return m->fns[e].local_bytes; }

int ptx_function(const ptx_module *m, const char *nm) {
  for (int i = 0; i < m->nfns; i++)
    if (m->fns[i].defined && strcmp(m->fns[i].name, nm) == 0) return i;
  return -1;
}
int ptx_nfunctions(const ptx_module *m) { return m->nfns; }
