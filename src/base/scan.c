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
*/
#include "scan.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- lexer -------------------------------------------------------------- */

typedef enum { T_EOF, T_ID, T_NUM, T_STR, T_CHR, T_PUN } tkind;

typedef struct tok {
  tkind k;
  size_t b, e;        /* src[b .. e) */
  int line;
} tok;

/* Integer constants the source names: `#define N 16`, `constexpr int N =
** 16;` at namespace scope, for array bounds. Filled by the scanner's own
** lexer as it passes them (upto: past the last one read, so that a lexer
** going over the text again adds nothing). */
#define MAXCDEF 64
typedef struct cdef {
  char name[64];
  int64_t value;
  bool known;
  bool bare;          /* a macro whose body is an unparenthesized expression (`2 * N`):
                      ** its value is only that of a bound or initializer it makes up alone */
} cdef;
typedef struct ctab { int n; size_t upto; cdef e[MAXCDEF]; } ctab;

typedef struct lx {
  const char *s;
  ctab *defs;         /* where #define's go; NULL: not recorded */
  size_t n, p;
  int line;
  bool bol;           /* only blanks since the last newline: '#' starts a directive */
  int dead;           /* > 0: in the dead branch of a literal #if 0 / #if 1 (nesting) */
  int cdepth;         /* conditionals opened in live code */
  uint64_t one;       /* bit i: live conditional i is `#if 1`, so its #else is dead */
  bool directive_tokens;   /* a directive's words are tokens too (lc_scan_only_subscripted), */
  bool in_directive;       /* and the token is one of them */
} lx;

static void lx_init(lx *x, const char *s, size_t n) {
  memset(x, 0, sizeof *x);
  x->s = s;
  x->n = n;
  x->line = 1;
  x->bol = true;
  /* a UTF-8 byte order mark is not part of the first token */
  if (n >= 3 && (unsigned char)s[0] == 0xEF && (unsigned char)s[1] == 0xBB &&
      (unsigned char)s[2] == 0xBF)
    x->p = 3;
}

static void newline(lx *x) {
  if (x->line < INT_MAX) x->line++;
}

/* Length of a backslash-newline at p (2 or 3 with \r\n), or 0. */
static size_t splice_at(const lx *x, size_t p) {
  if (p + 1 < x->n && x->s[p] == '\\') {
    if (x->s[p + 1] == '\n') return 2;
    if (x->s[p + 1] == '\r' && p + 2 < x->n && x->s[p + 2] == '\n') return 3;
  }
  return 0;
}

/* From "//" to the end of the line (not taking the newline); a
** backslash-newline continues the comment, as in C. */
static void line_comment(lx *x) {
  x->p += 2;
  while (x->p < x->n && x->s[x->p] != '\n') {
    size_t k = splice_at(x, x->p);
    if (k) {
      x->p += k;
      newline(x);
    } else {
      x->p++;
    }
  }
}

/* From slash-star past the closing star-slash, or to the end. */
static void block_comment(lx *x) {
  x->p += 2;
  while (x->p < x->n) {
    char c = x->s[x->p];
    if (c == '*' && x->p + 1 < x->n && x->s[x->p + 1] == '/') {
      x->p += 2;
      return;
    }
    if (c == '\n') newline(x);
    x->p++;
  }
}

/* Blanks, splices and block comments within a directive line. */
static void hspace(lx *x) {
  while (x->p < x->n) {
    char c = x->s[x->p];
    size_t k;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      x->p++;
    } else if ((k = splice_at(x, x->p)) != 0) {
      x->p += k;
      newline(x);
    } else if (c == '/' && x->p + 1 < x->n && x->s[x->p + 1] == '*') {
      block_comment(x);
    } else {
      return;
    }
  }
}

static bool idstart(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c >= 0x80;
}

static bool idchar(unsigned char c) {
  return idstart(c) || (c >= '0' && c <= '9');
}

/* A quoted literal from its opening quote; an unterminated one stops at
** the end of the line (the compiler will say so). */
static void quoted(lx *x, char q) {
  x->p++;
  while (x->p < x->n) {
    char c = x->s[x->p];
    if (c == '\\') {
      x->p++;
      if (x->p < x->n) {
        if (x->s[x->p] == '\n') {
          newline(x);
        } else if (x->s[x->p] == '\r' && x->p + 1 < x->n && x->s[x->p + 1] == '\n') {
          x->p++;
          newline(x);
        }
        x->p++;
      }
      continue;
    }
    if (c == q) {
      x->p++;
      return;
    }
    if (c == '\n') return;
    x->p++;
  }
}

/* R"delim( ... )delim" from the opening quote; false if the delimiter is
** not valid (then it is lexed as an ordinary string). */
static bool raw_string(lx *x) {
  size_t p = x->p + 1, d = p;
  while (p < x->n && p - d <= 16 && x->s[p] != '(') {
    char c = x->s[p];
    if (c == ')' || c == '\\' || c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
        c == '"' || c == '\f' || c == '\v')
      return false;
    p++;
  }
  if (p >= x->n || x->s[p] != '(' || p - d > 16) return false;
  size_t dlen = p - d;
  for (p++; p < x->n; p++) {
    if (x->s[p] == '\n') newline(x);
    if (x->s[p] == ')' && x->n - p > dlen + 1 && memcmp(x->s + p + 1, x->s + d, dlen) == 0 &&
        x->s[p + 1 + dlen] == '"') {
      x->p = p + dlen + 2;
      return true;
    }
  }
  x->p = x->n;
  return true;
}

static bool text_is(const char *s, size_t n, const char *w) {
  size_t k = strlen(w);
  return n == k && memcmp(s, w, k) == 0;
}

/* Integer literal (decimal, hex, binary or octal, digit separators, u/l/z
** suffixes) in s[0 .. n); false if it is not one or does not fit. */
static bool int_literal(const char *s, size_t n, int64_t *out) {
  size_t i = 0;
  unsigned base = 10;
  if (n == 0 || s[0] < '0' || s[0] > '9') return false;
  if (n > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    i = 2;
  } else if (n > 1 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
    base = 2;
    i = 2;
  } else if (s[0] == '0') {
    base = 8;
  }
  uint64_t v = 0;
  size_t digits = 0;
  for (; i < n; i++) {
    char c = s[i];
    unsigned d;
    if (c == '\'') continue;
    if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
    else if (base == 16 && c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
    else break;
    if (d >= base) return false;
    if (v > (UINT64_MAX >> 1) / base) return false;   /* keeps it below 2^63 */
    v = v * base + d;
    digits++;
  }
  if (digits == 0 && base != 8) return false;
  for (; i < n; i++)
    if (!strchr("uUlLzZ", s[i]) || s[i] == '\0') return false;
  if (v > (uint64_t)INT64_MAX) return false;
  *out = (int64_t)v;
  return true;
}

static void cdef_set(ctab *c, const char *name, size_t nl, bool known, bool bare, int64_t v) {
  if (nl >= sizeof c->e[0].name) return;
  cdef *e = NULL;
  for (int i = 0; i < c->n && !e; i++)
    if (strlen(c->e[i].name) == nl && memcmp(c->e[i].name, name, nl) == 0) e = &c->e[i];
  if (!e) {
    if (c->n == MAXCDEF || !known) return;
    e = &c->e[c->n++];
    memcpy(e->name, name, nl);
    e->name[nl] = '\0';
  }
  e->known = known;
  e->bare = bare;
  e->value = v;
}

static void next(lx *x, tok *t);
static bool teq(const char *s, const tok *t, const char *w);
static bool const_expr(const char *s, const tok *t, int n, const ctab *defs, int64_t *v);

/* After `#define` or `#undef` (x just past the word): an object-like macro
** whose body is an integer constant expression of the constants known so
** far (`16`, `(2 * RADIUS + 1)`) is recorded with its value; any other
** definition of the name, or #undef, forgets it. Reads only what it needs
** of the line: directive() skips the rest. */
static void define(lx *x, bool undef) {
  hspace(x);
  size_t b = x->p;
  while (x->p < x->n && idchar((unsigned char)x->s[x->p])) x->p++;
  size_t nl = x->p - b;
  if (nl == 0) return;
  x->defs->upto = x->p;
  const char *name = x->s + b;
  if (undef || (x->p < x->n && x->s[x->p] == '(')) {   /* a function-like macro */
    cdef_set(x->defs, name, nl, false, false, 0);
    return;
  }
  /* the body's tokens, lexed by a lexer that ends with the line */
  size_t eol = x->p;
  while (eol < x->n && x->s[eol] != '\n') eol += splice_at(x, eol) ? splice_at(x, eol) : 1;
  lx y = *x;
  y.n = eol;
  y.defs = NULL;
  y.bol = false;
  tok body[32];
  int nb = 0;
  bool fits = true;
  for (;;) {
    tok t;
    next(&y, &t);
    if (t.k == T_EOF) break;
    if (nb == 32) { fits = false; break; }
    body[nb++] = t;
  }
  int64_t v = 0;
  bool known = fits && nb > 0 && const_expr(x->s, body, nb, x->defs, &v);
  /* a body in one pair of parentheses, or of one token, is a value wherever it is used
  ** (unless that token names a bare macro) */
  bool wrapped = nb == 1;
  for (int i = 0; nb == 1 && body[0].k == T_ID && i < x->defs->n; i++)
    if (x->defs->e[i].known && teq(x->s, &body[0], x->defs->e[i].name)) wrapped = !x->defs->e[i].bare;
  if (nb >= 2 && x->s[body[0].b] == '(' && x->s[body[nb - 1].b] == ')') {
    int depth = 0;
    wrapped = true;
    for (int i = 0; i < nb - 1; i++) {
      if (body[i].k == T_PUN && x->s[body[i].b] == '(') depth++;
      else if (body[i].k == T_PUN && x->s[body[i].b] == ')') depth--;
      if (depth == 0) wrapped = false;     /* (a) + (b): the first group ends early */
    }
  }
  cdef_set(x->defs, name, nl, known, !wrapped, known ? v : 0);
}

/* A directive, from its '#' to the end of its line (not taking the
** newline); keeps track of the literal #if 0 / #if 1 branches. */
static void directive(lx *x) {
  x->p++;
  hspace(x);
  size_t nb = x->p;
  while (x->p < x->n && idchar((unsigned char)x->s[x->p])) x->p++;
  const char *name = x->s + nb;
  size_t nl = x->p - nb;
  /* the condition, when it is a lone 0 or 1 */
  int val = -1;
  hspace(x);
  if (x->p < x->n && (x->s[x->p] == '0' || x->s[x->p] == '1') &&
      (x->p + 1 >= x->n || !idchar((unsigned char)x->s[x->p + 1]))) {
    int v = x->s[x->p] - '0';
    size_t save = x->p;
    int sline = x->line;
    x->p++;
    hspace(x);
    if (x->p >= x->n || x->s[x->p] == '\n' ||
        (x->s[x->p] == '/' && x->p + 1 < x->n && x->s[x->p + 1] == '/'))
      val = v;
    x->p = save;
    x->line = sline;
  }
  bool isif = text_is(name, nl, "if") || text_is(name, nl, "ifdef") || text_is(name, nl, "ifndef");
  bool iselse = text_is(name, nl, "else") || text_is(name, nl, "elif") ||
                text_is(name, nl, "elifdef") || text_is(name, nl, "elifndef");
  bool isendif = text_is(name, nl, "endif");
  if (x->dead == 0 && x->defs && nb >= x->defs->upto &&
      (text_is(name, nl, "define") || text_is(name, nl, "undef")))
    define(x, text_is(name, nl, "undef"));
  bool top1 = x->cdepth > 0 && x->cdepth <= 64 && (x->one >> (x->cdepth - 1) & 1);
  if (x->dead == 0) {
    if (isif) {
      if (x->cdepth < INT_MAX) x->cdepth++;
      if (x->cdepth <= 64) {
        uint64_t bit = (uint64_t)1 << (x->cdepth - 1);
        x->one = (text_is(name, nl, "if") && val == 1) ? (x->one | bit) : (x->one & ~bit);
      }
      if (text_is(name, nl, "if") && val == 0) x->dead = 1;
    } else if (iselse) {
      if (top1) x->dead = 1;
    } else if (isendif) {
      if (x->cdepth > 0) x->cdepth--;
    }
  } else {
    if (isif) {
      if (x->dead < INT_MAX) x->dead++;
    } else if (isendif) {
      if (--x->dead == 0 && x->cdepth > 0) x->cdepth--;
    } else if (iselse && x->dead == 1 && !top1) {
      /* the other branch of an #if 0: live, known taken after #elif 1 */
      if (!(text_is(name, nl, "elif") && val == 0)) {
        x->dead = 0;
        if (text_is(name, nl, "elif") && val == 1 && x->cdepth > 0 && x->cdepth <= 64)
          x->one |= (uint64_t)1 << (x->cdepth - 1);
      }
    }
  }
  /* the rest of the line: continuations, comments and literals included */
  while (x->p < x->n && x->s[x->p] != '\n') {
    char c = x->s[x->p];
    size_t k;
    if ((k = splice_at(x, x->p)) != 0) {
      x->p += k;
      newline(x);
    } else if (c == '/' && x->p + 1 < x->n && x->s[x->p + 1] == '*') {
      block_comment(x);
    } else if (c == '/' && x->p + 1 < x->n && x->s[x->p + 1] == '/') {
      line_comment(x);
    } else if (c == '"' || c == '\'') {
      quoted(x, c);
    } else {
      x->p++;
    }
  }
}

static const char *const puncts[] = {
  "...", "<<=", "::", "->", "&&", "||", "==", "!=", "<=", ">=", "++", "--", "+=", "-=",
  "*=", "/=", "%=", "&=", "|=", "^=", "<<", "##",
};

/* The next token; comments, blanks, directives and dead branches are
** skipped. At the end, T_EOF with b == e == n. */
static void next(lx *x, tok *t) {
  const char *s = x->s;
  size_t n = x->n;
  for (;;) {
    if (x->p >= n) {
      t->k = T_EOF;
      t->b = t->e = n;
      t->line = x->line;
      return;
    }
    unsigned char c = (unsigned char)s[x->p];
    size_t k;
    if (c == '\n') {
      newline(x);
      x->p++;
      x->bol = true;
      x->in_directive = false;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      x->p++;
      continue;
    }
    if ((k = splice_at(x, x->p)) != 0) {
      x->p += k;
      newline(x);
      continue;
    }
    if (c == '/' && x->p + 1 < n && s[x->p + 1] == '/') {
      line_comment(x);
      continue;
    }
    if (c == '/' && x->p + 1 < n && s[x->p + 1] == '*') {
      block_comment(x);
      continue;
    }
    if (c == '#' && x->bol) {
      if (!x->directive_tokens) {
        directive(x);
        continue;
      }
      x->in_directive = true;
    }
    x->bol = false;
    t->b = x->p;
    t->line = x->line;
    if (idstart(c)) {
      while (x->p < n && idchar((unsigned char)s[x->p])) x->p++;
      t->k = T_ID;
      size_t len = x->p - t->b;
      const char *w = s + t->b;
      if (x->p < n && s[x->p] == '"' &&
          (text_is(w, len, "R") || text_is(w, len, "LR") || text_is(w, len, "uR") ||
           text_is(w, len, "UR") || text_is(w, len, "u8R")) && raw_string(x)) {
        t->k = T_STR;
      } else if (x->p < n && (s[x->p] == '"' || s[x->p] == '\'') &&
                 (text_is(w, len, "L") || text_is(w, len, "u") || text_is(w, len, "U") ||
                  text_is(w, len, "u8"))) {
        t->k = s[x->p] == '"' ? T_STR : T_CHR;
        quoted(x, s[x->p]);
      }
    } else if ((c >= '0' && c <= '9') ||
               (c == '.' && x->p + 1 < n && s[x->p + 1] >= '0' && s[x->p + 1] <= '9')) {
      /* a preprocessing number: 1e-5f, 0x1p+3, 1'000'000 */
      x->p++;
      while (x->p < n) {
        char d = s[x->p];
        char pd = s[x->p - 1];
        if (idchar((unsigned char)d) || d == '.') {
          x->p++;
        } else if ((d == '+' || d == '-') && strchr("eEpP", pd) && pd != '\0') {
          x->p++;
        } else if (d == '\'' && x->p + 1 < n && idchar((unsigned char)s[x->p + 1])) {
          x->p += 2;
        } else {
          break;
        }
      }
      t->k = T_NUM;
    } else if (c == '"' || c == '\'') {
      t->k = c == '"' ? T_STR : T_CHR;
      quoted(x, (char)c);
    } else {
      t->k = T_PUN;
      size_t len = 1;
      for (size_t i = 0; i < sizeof puncts / sizeof puncts[0]; i++) {
        size_t pl = strlen(puncts[i]);
        if (n - x->p >= pl && memcmp(s + x->p, puncts[i], pl) == 0) {
          len = pl;
          break;
        }
      }
      x->p += len;
    }
    t->e = x->p;
    if (x->dead) continue;     /* lexed only to skip it correctly */
    return;
  }
}

static bool teq(const char *s, const tok *t, const char *w) {
  return text_is(s + t->b, t->e - t->b, w);
}

static bool tpun(const char *s, const tok *t, const char *w) {
  return t->k == T_PUN && teq(s, t, w);
}

static bool tpun1(const char *s, const tok *t, char c) {
  return t->k == T_PUN && t->e - t->b == 1 && s[t->b] == c;
}

/* ---- integer constant expressions ---------------------------------------- */

/* The value of t[0 .. n) as an integer constant expression of literals,
** the constants defs knows, parentheses and the operators + - * / % << >>
** & ^ | (unary + - ~): `2 * RADIUS + 1`, `(BLOCK + 2 * HALO) * 4`. Anything
** else (a cast, sizeof, an unknown name, a value past 2^40) has no value.
** Operator precedence by two stacks, so that nothing recurses. */
enum { CX_OPEN, CX_NEG, CX_POS, CX_INV, CX_MUL, CX_DIV, CX_MOD, CX_ADD, CX_SUB, CX_SHL, CX_SHR,
       CX_AND, CX_XOR, CX_OR };
#define CX_LIMIT ((int64_t)1 << 40)

static int cx_prec(int op) {
  static const int prec[] = { 0, 9, 9, 9, 8, 8, 8, 7, 7, 6, 6, 5, 4, 3 };
  return prec[op];
}

static bool cx_unary(int op) {
  return op == CX_NEG || op == CX_POS || op == CX_INV;
}

/* Applies op to the top of the value stack. */
static bool cx_apply(int op, int64_t *val, int *nv) {
  if (*nv < (cx_unary(op) ? 1 : 2)) return false;
  int64_t b = val[*nv - 1], r;
  if (cx_unary(op)) {
    r = op == CX_NEG ? -b : op == CX_INV ? ~b : b;
  } else {
    int64_t a = val[*nv - 2];
    (*nv)--;
    switch (op) {
    case CX_MUL:
      if (a != 0 && (b > CX_LIMIT / (a < 0 ? -a : a) || b < -CX_LIMIT / (a < 0 ? -a : a))) return false;
      r = a * b;
      break;
    case CX_DIV: if (b == 0) return false; r = a / b; break;
    case CX_MOD: if (b == 0) return false; r = a % b; break;
    case CX_ADD: r = a + b; break;
    case CX_SUB: r = a - b; break;
    case CX_SHL:
      if (a < 0 || b < 0 || b > 40 || a > (CX_LIMIT >> b)) return false;
      r = a << b;
      break;
    case CX_SHR: if (a < 0 || b < 0 || b > 62) return false; r = a >> b; break;
    case CX_AND: r = a & b; break;
    case CX_XOR: r = a ^ b; break;
    default: r = a | b; break;
    }
  }
  if (r > CX_LIMIT || r < -CX_LIMIT) return false;
  val[*nv - 1] = r;
  return true;
}

static bool const_expr(const char *s, const tok *t, int n, const ctab *defs, int64_t *v) {
  int64_t val[32];
  int ops[32], nv = 0, no = 0;
  bool operand = true;                  /* an operand (or a unary operator) comes next */
  if (n > 32) return false;
  for (int i = 0; i < n; i++) {
    const tok *a = &t[i];
    if (operand) {
      int64_t x;
      int op = tpun1(s, a, '(') ? CX_OPEN : tpun1(s, a, '-') ? CX_NEG : tpun1(s, a, '+') ? CX_POS
             : tpun1(s, a, '~') ? CX_INV : -1;
      if (op >= 0) {
        ops[no++] = op;
        continue;
      }
      if (a->k == T_NUM) {
        if (!int_literal(s + a->b, a->e - a->b, &x)) return false;
      } else if (a->k == T_ID) {
        const cdef *d = NULL;
        for (int k = 0; k < defs->n && !d; k++)
          if (defs->e[k].known && teq(s, a, defs->e[k].name)) d = &defs->e[k];
        if (!d || (d->bare && n > 1)) return false;
        x = d->value;
      } else {
        return false;
      }
      if (x > CX_LIMIT) return false;
      val[nv++] = x;
      operand = false;
      continue;
    }
    if (tpun1(s, a, ')')) {
      while (no > 0 && ops[no - 1] != CX_OPEN)
        if (!cx_apply(ops[--no], val, &nv)) return false;
      if (no == 0) return false;
      no--;
      continue;
    }
    int op;
    if (tpun1(s, a, '*')) op = CX_MUL;
    else if (tpun1(s, a, '/')) op = CX_DIV;
    else if (tpun1(s, a, '%')) op = CX_MOD;
    else if (tpun1(s, a, '+')) op = CX_ADD;
    else if (tpun1(s, a, '-')) op = CX_SUB;
    else if (tpun(s, a, "<<")) op = CX_SHL;
    else if (tpun1(s, a, '>') && i + 1 < n && tpun1(s, &t[i + 1], '>') && t[i + 1].b == a->e) {
      op = CX_SHR;                      /* the lexer gives `>>` as two '>' (templates) */
      i++;
    } else if (tpun1(s, a, '&')) op = CX_AND;
    else if (tpun1(s, a, '^')) op = CX_XOR;
    else if (tpun1(s, a, '|')) op = CX_OR;
    else return false;
    /* left-associative: what binds as tightly is done first (unary operators bind tighter) */
    while (no > 0 && ops[no - 1] != CX_OPEN && cx_prec(ops[no - 1]) >= cx_prec(op))
      if (!cx_apply(ops[--no], val, &nv)) return false;
    ops[no++] = op;
    operand = true;
  }
  if (operand) return false;
  while (no > 0)
    if (ops[--no] == CX_OPEN || !cx_apply(ops[no], val, &nv)) return false;
  if (nv != 1) return false;
  *v = val[0];
  return true;
}

/* ---- normalized text ------------------------------------------------------ */

/* Tokens joined by single spaces where C needs or readers expect them:
** "const float *", "Array<float, 2>", "tile[16][16]". Never joins two
** tokens into a different one. */
typedef struct sbuf {
  char *p;
  size_t cap, n;          /* cap includes the NUL */
  bool trunc;
  const char *src;
  tok last;
  bool has_last;
} sbuf;

static void sb_init(sbuf *b, char *p, size_t cap, const char *src) {
  b->p = p;
  b->cap = cap;
  b->n = 0;
  b->trunc = false;
  b->src = src;
  b->has_last = false;
  p[0] = '\0';
}

static bool any_of(const char *s, const tok *t, const char *const *ws) {
  for (; *ws; ws++)
    if (teq(s, t, *ws)) return true;
  return false;
}

static bool need_space(const char *s, const tok *a, const tok *b) {
  static const char *const nobefore[] = { ",", ")", "]", ">", ";", "::", ".", "->", NULL };
  static const char *const noafter[] = { "(", "[", "<", "::", ".", "->", "~", "!", NULL };
  if (b->k == T_PUN && any_of(s, b, nobefore)) return false;
  if (a->k == T_PUN && any_of(s, a, noafter)) return false;
  if (tpun1(s, a, '*') && (b->k == T_ID || tpun1(s, b, '*') || tpun1(s, b, '&') || tpun1(s, b, '[')))
    return false;
  if (tpun1(s, a, '&') && (b->k == T_ID || tpun1(s, b, '*'))) return false;
  if ((tpun1(s, b, '(') || tpun1(s, b, '[')) &&
      (a->k == T_ID || tpun1(s, a, ')') || tpun1(s, a, ']')))
    return false;
  if (tpun1(s, b, '<') && a->k == T_ID) return false;
  return true;
}

static void sb_raw(sbuf *b, const char *p, size_t n) {
  if (b->trunc) return;
  if (n >= b->cap - b->n) {
    b->trunc = true;
    return;
  }
  memcpy(b->p + b->n, p, n);
  b->n += n;
  b->p[b->n] = '\0';
}

static void sb_tok(sbuf *b, const tok *t) {
  if (b->has_last && need_space(b->src, &b->last, t)) sb_raw(b, " ", 1);
  sb_raw(b, b->src + t->b, t->e - t->b);
  b->last = *t;
  b->has_last = true;
}

/* For messages: a truncated text ends in "...". */
static void sb_ellipsis(sbuf *b) {
  if (!b->trunc) return;
  size_t k = b->n;
  if (k > b->cap - 4) k = b->cap - 4;
  memcpy(b->p + k, "...", 4);
  b->n = k + 3;
}

/* ---- types ---------------------------------------------------------------- */

typedef struct tspec {
  int sign, unsig, chr, shrt, intw, lng, flt, dbl, bln, vd;
  int named;          /* lc_typecode of a typedef name; -1 none; -2 unknown */
  int vec;            /* the named type is a vector of vec of them */
  bool cnst;
} tspec;

static void ts_init(tspec *ts) {
  memset(ts, 0, sizeof *ts);
  ts->named = -1;
}

static bool ts_any(const tspec *ts) {
  return ts->sign || ts->unsig || ts->chr || ts->shrt || ts->intw || ts->lng || ts->flt ||
         ts->dbl || ts->bln || ts->vd || ts->named != -1;
}

/* Count a builtin type word; false if w is not one. */
static bool ts_word(tspec *ts, const char *s, const tok *t) {
  if (t->k != T_ID) return false;
  if (teq(s, t, "signed") || teq(s, t, "__signed__")) ts->sign++;
  else if (teq(s, t, "unsigned")) ts->unsig++;
  else if (teq(s, t, "char")) ts->chr++;
  else if (teq(s, t, "short")) ts->shrt++;
  else if (teq(s, t, "int")) ts->intw++;
  else if (teq(s, t, "long")) ts->lng++;
  else if (teq(s, t, "float")) ts->flt++;
  else if (teq(s, t, "double")) ts->dbl++;
  else if (teq(s, t, "bool")) ts->bln++;
  else if (teq(s, t, "void")) ts->vd++;
  else return false;
  return true;
}

/* Names of integer types that are no dtype's own name in kernels: the C
** library's (x86-64 LP64, as NVRTC and the host compiler both have them)
** and the short unsigned names CUDA code takes from the host's headers
** (the prelude gives NVRTC uint, ushort and ulong). */
static const struct { const char *name; int code; } typedef_names[] = {
  { "size_t", LC_UINT64 }, { "ptrdiff_t", LC_INT64 }, { "intptr_t", LC_INT64 },
  { "uintptr_t", LC_UINT64 }, { "ssize_t", LC_INT64 }, { "clock_t", LC_INT64 },
  { "uint", LC_UINT32 }, { "ushort", LC_UINT16 }, { "ulong", LC_UINT64 },
  { "int_least8_t", LC_INT8 }, { "int_least16_t", LC_INT16 }, { "int_least32_t", LC_INT32 },
  { "int_least64_t", LC_INT64 }, { "uint_least8_t", LC_UINT8 },
  { "uint_least16_t", LC_UINT16 }, { "uint_least32_t", LC_UINT32 },
  { "uint_least64_t", LC_UINT64 }, { "int_fast8_t", LC_INT8 }, { "int_fast16_t", LC_INT64 },
  { "int_fast32_t", LC_INT64 }, { "int_fast64_t", LC_INT64 }, { "uint_fast8_t", LC_UINT8 },
  { "uint_fast16_t", LC_UINT64 }, { "uint_fast32_t", LC_UINT64 },
  { "uint_fast64_t", LC_UINT64 }, { "intmax_t", LC_INT64 }, { "uintmax_t", LC_UINT64 },
};

/* CUDA's vector types: the element type of each family; the name is the
** family and a count 1 to 4 (float2, uchar4). */
static const struct { const char *name; int code; } vector_names[] = {
  { "char", LC_INT8 }, { "uchar", LC_UINT8 }, { "short", LC_INT16 }, { "ushort", LC_UINT16 },
  { "int", LC_INT32 }, { "uint", LC_UINT32 }, { "long", LC_INT64 }, { "ulong", LC_UINT64 },
  { "longlong", LC_INT64 }, { "ulonglong", LC_UINT64 }, { "float", LC_FLOAT32 },
  { "double", LC_FLOAT64 },
};

/* Pairs the toolkit's headers name otherwise: the half and bfloat16 pairs
** (cuda_fp16.h, cuda_bf16.h) and cuComplex.h's numbers (float2, double2). */
static const struct { const char *name; int code; } pair_names[] = {
  { "__half2", LC_FLOAT16 }, { "half2", LC_FLOAT16 }, { "__nv_half2", LC_FLOAT16 },
  { "nv_half2", LC_FLOAT16 }, { "__nv_bfloat162", LC_BFLOAT16 }, { "nv_bfloat162", LC_BFLOAT16 },
  { "cuFloatComplex", LC_FLOAT32 }, { "cuComplex", LC_FLOAT32 }, { "cuDoubleComplex", LC_FLOAT64 },
};

/* The element type of vector type t (float2: float32, *n = 2), or -1. */
static int vector_code(const char *s, const tok *t, int *n) {
  size_t len = t->e - t->b;
  if (t->k != T_ID || len < 2) return -1;
  for (size_t i = 0; i < sizeof pair_names / sizeof pair_names[0]; i++)
    if (teq(s, t, pair_names[i].name)) {
      *n = 2;
      return pair_names[i].code;
    }
  char last = s[t->e - 1];
  if (last < '1' || last > '4') return -1;
  for (size_t i = 0; i < sizeof vector_names / sizeof vector_names[0]; i++)
    if (strlen(vector_names[i].name) == len - 1 &&
        memcmp(vector_names[i].name, s + t->b, len - 1) == 0) {
      *n = last - '0';
      return vector_names[i].code;
    }
  return -1;
}

/* The alignment CUDA gives a vector of n elements of size esize. */
static int64_t vector_align(int64_t esize, int n) {
  if (n == 2) return esize * 2;
  if (n == 4) return esize * 4 > 16 ? 16 : esize * 4;
  return esize;
}

/* Type names the source itself defines (typedef, using), in source order:
** each means a dtype, or a vector of one.
** A struct the source defines is a name too: code LC_PARAM_STRUCT, sdef
** its index among the scan's structs, with its size and alignment (bad:
** its layout was not read, why says why). */
#define MAXTDEF 128
typedef struct tdef {
  char name[64];
  int code, vec;
  int sdef;
  int64_t size, align;
  bool bad;
  char why[192];
} tdef;
typedef struct tdtab { int n; tdef e[MAXTDEF]; } tdtab;

static const tdef *tdef_find(const tdtab *td, const char *s, const tok *t) {
  if (!td || t->k != T_ID) return NULL;
  for (int i = td->n - 1; i >= 0; i--)
    if (teq(s, t, td->e[i].name)) return &td->e[i];
  return NULL;
}

/* The struct the name t means, or NULL. */
static const tdef *struct_find(const tdtab *td, const char *s, const tok *t) {
  const tdef *u = tdef_find(td, s, t);
  return u && u->code == LC_PARAM_STRUCT ? u : NULL;
}

/* Whether t is one of the space-separated names in list. */
static bool in_name_list(const char *s, const tok *t, const char *list) {
  size_t n = t->e - t->b;
  for (const char *w = list; w && *w;) {
    size_t len = strcspn(w, " ");
    if (len == n && memcmp(w, s + t->b, n) == 0) return true;
    w += len + (w[len] == ' ');
  }
  return false;
}

/* The dtype a typedef name in a kernel means (the dtype table's names,
** such as int32_t or __half, the C library's, the source's own), or -1.
** *vec: 0, or the count of a vector type the name means (the source's
** `typedef float2 vec2;`, or float2 itself when vec is not NULL). */
static int typedef_code(const tdtab *td, const char *s, const tok *t, int *vec) {
  if (vec) *vec = 0;
  if (t->k != T_ID) return -1;
  const tdef *u = tdef_find(td, s, t);
  if (u && u->code == LC_PARAM_STRUCT) return -1;
  if (u && (u->vec == 0 || vec)) {
    if (vec) *vec = u->vec;
    return u->code;
  }
  if (vec) {
    int n, c = vector_code(s, t, &n);
    if (c >= 0) {
      *vec = n;
      return c;
    }
  }
  for (int i = 0; i < LC_NTYPES; i++)
    if (in_name_list(s, t, lc_dtypes[i].kernel_names)) return i;
  for (size_t i = 0; i < sizeof typedef_names / sizeof typedef_names[0]; i++)
    if (teq(s, t, typedef_names[i].name)) return typedef_names[i].code;
  return -1;
}

/* The lc_typecode the words name; -1 for void; -2 if not a supported type. */
static int ts_resolve(const tspec *ts) {
  int sgn = ts->sign + ts->unsig;
  int words = sgn + ts->chr + ts->shrt + ts->intw + ts->lng + ts->flt + ts->dbl + ts->bln + ts->vd;
  if (ts->named != -1) return words == 0 ? ts->named : -2;
  if (ts->sign > 1 || ts->unsig > 1 || (ts->sign && ts->unsig)) return -2;
  if (ts->chr > 1 || ts->shrt > 1 || ts->intw > 1 || ts->lng > 2) return -2;
  if (ts->flt || ts->dbl || ts->bln || ts->vd)
    return words != 1 ? -2 : ts->flt ? LC_FLOAT32 : ts->dbl ? LC_FLOAT64 : ts->bln ? LC_BOOL : -1;
  if (ts->chr) return ts->shrt || ts->intw || ts->lng ? -2 : ts->unsig ? LC_UINT8 : LC_INT8;
  if (ts->shrt) return ts->lng ? -2 : ts->unsig ? LC_UINT16 : LC_INT16;
  if (ts->lng) return ts->unsig ? LC_UINT64 : LC_INT64;
  if (ts->intw || sgn) return ts->unsig ? LC_UINT32 : LC_INT32;
  return -2;
}

static int64_t type_size(int code) { return lc_dtypes[code].size; }

/* cv and restrict spellings, and other words that do not change a type */
static bool is_qual(const char *s, const tok *t) {
  static const char *const q[] = {
    "const", "volatile", "__restrict__", "__restrict", "restrict", "__grid_constant__",
    "register", NULL,
  };
  return t->k == T_ID && any_of(s, t, q);
}

/* Words followed by a parenthesized group that is not a parameter list. */
static bool is_attr_word(const char *s, const tok *t) {
  static const char *const w[] = {
    "__launch_bounds__", "__maxnreg__", "__cluster_dims__", "__attribute__", "__declspec",
    "__align__", "alignas", "_Alignas", "decltype", "__decltype", "noexcept", "throw",
    "sizeof", "alignof", "_Alignof", "__alignof__", "typeof", "__typeof__", "_Pragma",
    "__pragma", "requires", "static_assert", "_Static_assert", "asm", "__asm__", "__asm",
    NULL,
  };
  return t->k == T_ID && any_of(s, t, w);
}

/* Words that may come before a declarator but are not a name. */
static bool is_keyword(const char *s, const tok *t) {
  static const char *const w[] = {
    "signed", "__signed__", "unsigned", "char", "short", "int", "long", "float", "double",
    "bool", "void", "auto", "const", "volatile", "__restrict__", "__restrict", "restrict",
    "extern", "static", "inline", "__inline__", "__forceinline__", "__noinline__",
    "constexpr", "thread_local", "register", "mutable", "typedef", "using", "friend",
    "virtual", "explicit", "template", "typename", "struct", "class", "union", "enum",
    "namespace", "operator", "__global__", "__device__", "__host__", "__constant__",
    "__shared__", "__managed__", "__grid_constant__", "return", "new", "delete", NULL,
  };
  return t->k == T_ID && any_of(s, t, w);
}

/* ---- parameters ----------------------------------------------------------- */

#define MAXPTOK 48
#define WHYLEN 256

/* Why a parameter is refused, after "kernel 'k' parameter N: ". */
__attribute__((format(printf, 2, 3)))
static int whyf(char *why, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, WHYLEN, fmt, ap);
  va_end(ap);
  return -1;
}

/* Text of the tokens t[0 .. nt) except index skip, for messages. */
static void ptext(const char *s, const tok *t, int nt, int skip, bool more, char *buf,
                  size_t cap) {
  sbuf b;
  sb_init(&b, buf, cap, s);
  for (int i = 0; i < nt; i++)
    if (i != skip) sb_tok(&b, &t[i]);
  if (more) b.trunc = true;
  sb_ellipsis(&b);
}

/* The index of the parameter's name when the type could not be read: a
** trailing identifier after a type-like token. */
static int guess_name(const char *s, const tok *t, int nt) {
  if (nt < 2 || t[nt - 1].k != T_ID || is_keyword(s, &t[nt - 1])) return -1;
  const tok *p = &t[nt - 2];
  if (p->k == T_ID || tpun1(s, p, '*') || tpun1(s, p, '&') || tpun1(s, p, '>') || tpun(s, p, "&&"))
    return nt - 1;
  return -1;
}

/* Index just past the group that opens at t[i] ('(' or '['), or nt. */
static int skip_group(const char *s, const tok *t, int nt, int i) {
  int depth = 0;
  for (; i < nt; i++) {
    if (tpun1(s, &t[i], '(') || tpun1(s, &t[i], '[') || tpun1(s, &t[i], '{')) depth++;
    else if (tpun1(s, &t[i], ')') || tpun1(s, &t[i], ']') || tpun1(s, &t[i], '}')) {
      if (--depth == 0) return i + 1;
    }
  }
  return nt;
}

/* A default argument from its tokens t[0 .. nt): a literal (a number with
** its sign, true, false, NULL, nullptr) is one a launch can pass when the
** argument is left out; anything else is recorded as text only. */
static void read_default(const char *s, const tok *t, int nt, bool more, lc_param *p) {
  p->has_default = true;
  ptext(s, t, nt, -1, more, p->default_text, sizeof p->default_text);
  if (more || nt < 1 || nt > 2) return;
  bool neg = false;
  if (nt == 2) {
    if (!tpun1(s, &t[0], '-') && !tpun1(s, &t[0], '+')) return;
    neg = tpun1(s, &t[0], '-');
  }
  const tok *v = &t[nt - 1];
  size_t n = v->e - v->b;
  if (nt == 1 && (teq(s, v, "NULL") || teq(s, v, "nullptr"))) {
    p->default_known = p->default_null = true;
    return;
  }
  if (nt == 1 && (teq(s, v, "true") || teq(s, v, "false"))) {
    p->default_known = true;
    p->default_int = teq(s, v, "true");
    return;
  }
  if (v->k != T_NUM) return;
  int64_t iv;
  if (int_literal(s + v->b, n, &iv)) {
    p->default_known = true;
    p->default_int = neg ? -iv : iv;
    return;
  }
  char buf[64], *end;
  if (n >= sizeof buf) return;
  memcpy(buf, s + v->b, n);
  buf[n] = '\0';
  if (n > 1 && strchr("fFlL", buf[n - 1])) buf[n - 1] = '\0';     /* 1.5f */
  double d = strtod(buf, &end);
  if (end == buf || *end != '\0') return;
  p->default_known = p->default_float = true;
  p->default_num = neg ? -d : d;
}

/* One parameter from its tokens. Returns 0, or -1 with the reason in why. */
static int parse_param(const char *s, const tok *t, int nt, bool more, bool structs,
                       const tdtab *td, lc_param *p, char *why) {
  char text[96];
  memset(p, 0, sizeof *p);
  p->sdef = -1;
  const tdef *sd = NULL;           /* the struct the source defines, named */
  int depth = 0;
  for (int i = 0; i < nt; i++) {
    if (tpun1(s, &t[i], '(') || tpun1(s, &t[i], '[') || tpun1(s, &t[i], '{')) depth++;
    else if ((tpun1(s, &t[i], ')') || tpun1(s, &t[i], ']') || tpun1(s, &t[i], '}')) && depth > 0)
      depth--;
    else if (depth == 0 && tpun1(s, &t[i], '=')) {
      /* a default argument: the type is what comes before it */
      read_default(s, t + i + 1, nt - i - 1, more, p);
      nt = i;
      more = false;
      break;
    }
    if (tpun(s, &t[i], "...")) return whyf(why, "variadic parameters are not supported");
  }
  if (more) {
    ptext(s, t, nt, -1, more, text, sizeof text);
    return whyf(why, "unsupported type '%s'", text);
  }
  tspec ts, et;
  ts_init(&ts);
  ts_init(&et);
  bool is_array = false, qualified = false;
  int ndim = 0, i = 0;
  /* the type specifiers */
  while (i < nt) {
    const tok *a = &t[i];
    if (a->k == T_ID) {
      if (teq(s, a, "const")) {
        ts.cnst = true;
        i++;
        continue;
      }
      if (is_qual(s, a)) {
        i++;
        continue;
      }
      if (teq(s, a, "__attribute__")) {
        i = skip_group(s, t, nt, i + 1);
        continue;
      }
      if (!qualified && ts_word(&ts, s, a)) {
        if (ts.named != -1 || is_array) goto unsupported;
        i++;
        continue;
      }
      if (teq(s, a, "std") && i + 1 < nt && tpun(s, &t[i + 1], "::") && !qualified) {
        qualified = true;
        i += 2;
        continue;
      }
      const tdef *known = struct_find(td, s, a);
      if (known && !qualified && !ts_any(&ts) && !is_array) {
        memcpy(p->type_name, known->name, sizeof p->type_name);
        ts.named = LC_PARAM_STRUCT;
        sd = known;
        i++;
        continue;
      }
      int vec, code = typedef_code(td, s, a, &vec);
      if (code >= 0 && !ts_any(&ts) && !is_array) {
        ts.named = code;
        ts.vec = vec;
        qualified = false;
        i++;
        continue;
      }
      if (teq(s, a, "Array") && !qualified && !ts_any(&ts) && !is_array && i + 1 < nt &&
          tpun1(s, &t[i + 1], '<')) {
        /* Array<T, N>: T one of the scalar types, N an integer literal */
        bool q2 = false;
        i += 2;
        while (i < nt && !tpun1(s, &t[i], ',')) {
          const tok *e = &t[i];
          int c2;
          if (teq(s, e, "const")) et.cnst = true;
          else if (is_qual(s, e)) (void)0;
          else if (!q2 && ts_word(&et, s, e)) (void)0;
          else if (!q2 && teq(s, e, "std") && i + 1 < nt && tpun(s, &t[i + 1], "::")) {
            q2 = true;
            i++;
          } else if (!q2 && tpun(s, e, "::")) q2 = true;
          else if ((c2 = typedef_code(td, s, e, NULL)) >= 0 && !ts_any(&et)) {
            et.named = c2;
            q2 = false;
          } else goto unsupported;
          i++;
        }
        if (q2 || i + 3 > nt || t[i + 1].k != T_NUM || !tpun1(s, &t[i + 2], '>')) goto unsupported;
        int64_t v;
        if (!int_literal(s + t[i + 1].b, t[i + 1].e - t[i + 1].b, &v) || v < 1 || v > LC_MAXDIM) {
          ptext(s, t, i + 3, -1, false, text, sizeof text);
          return whyf(why, "unsupported type '%s' (the rank of an Array is 1 to %d)", text,
                      LC_MAXDIM);
        }
        ndim = (int)v;
        is_array = true;
        i += 3;
        continue;
      }
      if ((structs || struct_find(td, s, &t[i + (i + 1 < nt)])) && !qualified &&
          !ts_any(&ts) && !is_array &&
          (teq(s, a, "struct") || teq(s, a, "class")) && i + 1 < nt && t[i + 1].k == T_ID &&
          !is_keyword(s, &t[i + 1])) {
        i++;                                               /* struct Point */
        continue;
      }
      if (structs && !qualified && !ts_any(&ts) && !is_array && !is_keyword(s, a)) {
        /* a type we do not know: a record's struct, if it is pointed to */
        size_t nl = a->e - a->b;
        if (nl >= sizeof p->type_name) goto unsupported;
        memcpy(p->type_name, s + a->b, nl);
        p->type_name[nl] = '\0';
        ts.named = LC_PARAM_STRUCT;
        i++;
        continue;
      }
      if (!ts_any(&ts) && !is_array) goto unsupported;     /* a type we do not know */
      break;                                               /* the name */
    }
    if (tpun(s, a, "::") && !qualified && !ts_any(&ts) && !is_array) {
      qualified = true;
      i++;
      continue;
    }
    if (tpun1(s, a, '[') && i + 1 < nt && tpun1(s, &t[i + 1], '[')) {
      i = skip_group(s, t, nt, i);                         /* [[attribute]] */
      continue;
    }
    break;
  }
  if (qualified || (!ts_any(&ts) && !is_array)) goto unsupported;
  /* the declarator: * and qualifiers, the name, one [] */
  int stars = 0, brackets = 0, name = -1;
  bool ref = false;
  for (; i < nt; i++) {
    const tok *a = &t[i];
    if (tpun1(s, a, '*') && name < 0) {
      stars++;
    } else if ((tpun1(s, a, '&') || tpun(s, a, "&&")) && name < 0) {
      ref = true;
    } else if (a->k == T_ID && teq(s, a, "const")) {
      if (stars == 0 && name < 0) ts.cnst = true;
    } else if (is_qual(s, a)) {
      (void)0;
    } else if (teq(s, a, "__attribute__")) {
      i = skip_group(s, t, nt, i + 1) - 1;
    } else if (a->k == T_ID && name < 0 && !is_keyword(s, a) && brackets == 0) {
      name = i;
    } else if (tpun1(s, a, '[') && i + 1 < nt && tpun1(s, &t[i + 1], '[')) {
      i = skip_group(s, t, nt, i) - 1;
    } else if (tpun1(s, a, '[')) {
      /* float x[] and float x[8] are float *x */
      int64_t v;
      if (i + 1 < nt && tpun1(s, &t[i + 1], ']')) {
        i += 1;
      } else if (i + 2 < nt && t[i + 1].k == T_NUM && tpun1(s, &t[i + 2], ']') &&
                 int_literal(s + t[i + 1].b, t[i + 1].e - t[i + 1].b, &v)) {
        i += 2;
      } else {
        goto unsupported_all;
      }
      brackets++;
    } else {
      goto unsupported_all;
    }
  }
  ptext(s, t, nt, name, false, text, sizeof text);
  if (ref) return whyf(why, "unsupported type '%s' (references are not supported)", text);
  if (is_array && stars + brackets > 0)
    return whyf(why, "unsupported type '%s' (pointers to Array are not supported)", text);
  if (stars + brackets > 1)
    return whyf(why, "unsupported type '%s' (only one level of pointer)", text);
  int code = is_array ? ts_resolve(&et) : ts_resolve(&ts);
  if (code == -2 || (is_array && code == -1)) return whyf(why, "unsupported type '%s'", text);
  if (code == -1 && stars + brackets == 0) return whyf(why, "a parameter cannot be void");
  if (code == LC_PARAM_STRUCT && stars + brackets == 0 && sd == NULL)
    return whyf(why, "unsupported type '%s' (a struct is passed by pointer)", text);
  if (code == LC_PARAM_STRUCT && stars + brackets == 0 && sd->bad)
    return whyf(why, "unsupported type '%s' (struct %s: %s)", text, sd->name, sd->why);
  if (p->has_default && p->default_known) {
    /* a pointer's is a null pointer constant; a scalar's, a number */
    bool pointer = !is_array && stars + brackets > 0;
    bool zero = !p->default_null && !p->default_float && p->default_int == 0;
    if (pointer ? !(p->default_null || zero)
                : (p->default_null || is_array || ts.vec || code == LC_PARAM_STRUCT))
      p->default_known = false;
    p->default_null = pointer && p->default_known;
  }
  if (name >= 0) {
    size_t nl = t[name].e - t[name].b;
    if (nl >= sizeof p->name) return whyf(why, "the name is longer than %d bytes", (int)sizeof p->name - 1);
    memcpy(p->name, s + t[name].b, nl);
    p->name[nl] = '\0';
  }
  memcpy(p->spelling, text, sizeof p->spelling);
  p->type = code;
  if (code != LC_PARAM_STRUCT) p->type_name[0] = '\0';
  if (sd) p->sdef = sd->sdef;
  if (is_array) {
    p->kind = LC_PARAM_ARRAY;
    p->is_const = et.cnst;
    p->ndim = ndim;
    p->size = LC_ARRAY_SIZE((int64_t)ndim);
    p->align = LC_ARRAY_ALIGN;
  } else if (stars + brackets == 1) {
    p->kind = LC_PARAM_POINTER;
    p->is_const = ts.cnst;
    p->vec = ts.vec;
    p->size = p->align = 8;
  } else if (sd) {
    p->kind = LC_PARAM_VALUE;                    /* a struct by value */
    p->size = sd->size;
    p->align = sd->align;
  } else if (ts.vec) {
    p->kind = LC_PARAM_VALUE;
    p->vec = ts.vec;
    p->size = type_size(code) * ts.vec;
    p->align = vector_align(type_size(code), ts.vec);
  } else {
    p->kind = LC_PARAM_SCALAR;
    p->size = p->align = type_size(code);
  }
  return 0;

unsupported:
  ptext(s, t, nt, guess_name(s, t, nt), false, text, sizeof text);
  return whyf(why, "unsupported type '%s'", text);
unsupported_all:
  ptext(s, t, nt, -1, false, text, sizeof text);
  return whyf(why, "unsupported type '%s'", text);
}

/* The parameter list from lexer state y (just past '(' or at the start of
** a signature) up to offset end, into params[0 .. *np). Returns 0, or -1
** with the message (prefixed by who) in msg[LC_ERRLEN]. */
static int parse_params(lx *y, size_t end, bool structs, const tdtab *td, lc_param *params,
                        int *nparams, const char *who, char *msg) {
  const char *s = y->s;
  tok pt[MAXPTOK];
  char why[WHYLEN];
  int np = 0, nt = 0, depth = 0, angle = 0;
  bool more = false, any = false;
  for (;;) {
    tok t;
    next(y, &t);
    bool done = t.k == T_EOF || t.b >= end;
    if (!done && t.k == T_PUN) {
      if (tpun1(s, &t, '(') || tpun1(s, &t, '[') || tpun1(s, &t, '{')) depth++;
      else if ((tpun1(s, &t, ')') || tpun1(s, &t, ']') || tpun1(s, &t, '}')) && depth > 0) depth--;
      else if (depth == 0 && tpun1(s, &t, '<')) angle++;
      else if (depth == 0 && tpun1(s, &t, '>') && angle > 0) angle--;
    }
    if (done || (depth == 0 && angle == 0 && tpun1(s, &t, ','))) {
      if (done && !any && nt == 0) break;                 /* () */
      if (done && np == 0 && nt == 1 && teq(s, &pt[0], "void")) break;   /* (void) */
      if (np >= LC_MAXPARAMS) {
        snprintf(msg, LC_ERRLEN, "%s has more than %d parameters", who, LC_MAXPARAMS);
        return -1;
      }
      if (nt == 0) {
        snprintf(msg, LC_ERRLEN, "%s parameter %d: missing", who, np + 1);
        return -1;
      }
      if (parse_param(s, pt, nt, more, structs, td, &params[np], why) != 0) {
        snprintf(msg, LC_ERRLEN, "%s parameter %d: %s", who, np + 1, why);
        return -1;
      }
      if (np > 0 && params[np - 1].has_default && !params[np].has_default) {
        snprintf(msg, LC_ERRLEN, "%s parameter %d: no default argument follows one", who,
                 np + 1);
        return -1;
      }
      np++;
      nt = 0;
      more = false;
      any = true;
      if (done) break;
      continue;
    }
    if (nt < MAXPTOK) pt[nt++] = t;
    else more = true;
  }
  *nparams = np;
  return 0;
}

int lc_parse_signature(const char *text, size_t len, lc_kernel_sig *sig, char *err) {
  return lc_parse_signature_structs(text, len, NULL, 0, sig, err);
}

int lc_parse_signature_structs(const char *text, size_t len, const lc_struct_def *structs,
                               int nstructs, lc_kernel_sig *sig, char *err) {
  static const char empty[1] = { '\0' };
  lx y;
  char who[160];
  lc_param params[LC_MAXPARAMS];
  int np = 0;
  tdtab *td = NULL, tds;
  if (structs && nstructs > 0) {
    td = &tds;
    td->n = 0;
    for (int i = 0; i < nstructs && td->n < MAXTDEF; i++) {
      tdef *e = &td->e[td->n++];
      memset(e, 0, sizeof *e);
      memcpy(e->name, structs[i].name, sizeof e->name);
      e->name[sizeof e->name - 1] = '\0';
      e->code = LC_PARAM_STRUCT;
      e->sdef = i;
      e->size = structs[i].size;
      e->align = structs[i].align;
      e->bad = structs[i].error[0] != '\0';
      snprintf(e->why, sizeof e->why, "%s", structs[i].error);
      for (int a = 0; a < structs[i].naliases && td->n < MAXTDEF; a++) {   /* its other names */
        tdef *alias = &td->e[td->n++];
        *alias = *e;
        memcpy(alias->name, structs[i].aliases[a], sizeof alias->name);
        alias->name[sizeof alias->name - 1] = '\0';
      }
    }
  }
  if (!text) {
    text = empty;
    len = 0;
  }
  lx_init(&y, text, len);
  if (sig->name[0] != '\0' && memchr(sig->name, '\0', sizeof sig->name))
    snprintf(who, sizeof who, "kernel '%s'", sig->name);
  else
    snprintf(who, sizeof who, "signature");
  if (parse_params(&y, len, true, td, params, &np, who, err) != 0) return -1;
  /* only a signature that parsed replaces the old one */
  sig->overridden = true;
  sig->nparams = np;
  memcpy(sig->params, params, sizeof params[0] * (size_t)np);
  sig->error[0] = '\0';
  return 0;
}

/* ---- the scanner ---------------------------------------------------------- */

#define MAXSCOPE 256

enum { SC_ROOT, SC_NS, SC_LINK, SC_BODY, SC_SUSPEND };

typedef struct scope {
  unsigned char kind;
  bool linkage_c;         /* C linkage here */
  bool in_ns;             /* inside a namespace */
  bool in_unnamed;        /* inside an unnamed one: names have internal linkage */
  bool in_func;           /* inside a function body */
  int kernel;             /* the kernel whose body this is in, -1 */
  int opens;              /* this brace opened kernel #opens's body, -1 */
} scope;

enum { G_NONE, G_PARAMS, G_OTHER };
enum { PV_NONE, PV_NAME, PV_ATTR, PV_EXTERN, PV_LINKSTR, PV_OTHER };

/* What a declaration at namespace scope has shown so far. */
typedef struct decl {
  bool active;
  lx start;               /* the lexer before its first token */
  bool global, device, constant, managed, shared, templ, tdef, ns, op, eq_pre, ctor;
  int linkage;            /* -1 none, 0 "C++", 1 "C" */
  int nshared;            /* shared entries before it: one inside it (in a
                          ** class body) keeps it from being recorded */
  int tstate, tdepth, tpar;   /* template header: 1 expecting '<', 2 inside */
  int group;
  size_t gdepth;
  bool params;
  lx plx;                 /* the lexer just past the parameter list's '(' */
  size_t pclose;
  tok name, lastname, prev;
  int prevcls;
  int agg;                /* `struct` or `class` seen: 1; `union`: 2; `enum`: 3 */
  bool sbody, sclosed;    /* a class body opened, and closed */
  lx sblx;                /* the lexer just past its '{' */
  size_t sopen, sclose;   /* its braces */
  int sline;
} decl;

typedef struct scanner {
  const char *s;
  size_t n;
  lc_scan_result *r;
  char *err;
  tdtab td;               /* the type names the source has defined so far */
  ctab defs;              /* and its integer constants */
  scope st[MAXSCOPE];
  int depth;              /* st[depth] is the innermost scope */
  size_t over;            /* blocks nested deeper than MAXSCOPE (bodies only) */
  decl d;
  lx stmt;                /* in bodies: the lexer before the statement's first token */
  bool stmt_fresh, stmt_shared;
  lc_kernel_sig scratch;  /* a kernel built when only counting */
  char open_name[128];    /* the kernel whose body is open, for messages */
  int open_line;
} scanner;

__attribute__((format(printf, 2, 3)))
static int fail(scanner *sc, const char *fmt, ...) {
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
    return fail(sc, "line %d: braces nested more than %d deep", sc->d.prev.line, MAXSCOPE);
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

/* Copy token text into a fixed buffer; false if it does not fit. */
static bool copy_tok(const char *s, const tok *t, char *buf, size_t cap) {
  size_t n = t->e - t->b;
  if (n >= cap) return false;
  memcpy(buf, s + t->b, n);
  buf[n] = '\0';
  return true;
}

/* ---- variable declarations (shared memory, globals) ----------------------- */

enum { V_SHARED, V_GLOBAL };

#define MAXTYTOK 64

/* Normalized text of the tokens from lexer state y up to offset end. */
static void range_text(lx y, size_t end, sbuf *b) {
  tok t;
  for (;;) {
    next(&y, &t);
    if (t.k == T_EOF || t.b >= end) return;
    sb_tok(b, &t);
  }
}

/* A declaration [start, end) where end is the offset of its ';': every
** declarator is recorded as a shared or global entry. Declarations it does
** not understand are skipped: the compiler judges them. */
static void adv(lx *y, lx *before, tok *t) {
  *before = *y;
  next(y, t);
}

static bool opener(const char *s, const tok *t) {
  return tpun1(s, t, '(') || tpun1(s, t, '[') || tpun1(s, t, '{');
}

static bool closer(const char *s, const tok *t) {
  return tpun1(s, t, ')') || tpun1(s, t, ']') || tpun1(s, t, '}');
}

/* t opens a group: move to its closer (false if the declaration ends
** first). *inner and *ninner: the last token inside, and how many. */
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

static int record_shared(scanner *sc, const char *type, int nty, const tok *ty, size_t begin,
                         size_t end, lx dl, size_t dbegin, size_t dend, const tok *name,
                         bool dims_seen, lx dimstart, bool ext, bool in_func, int kernel,
                         int64_t align) {
  const char *s = sc->s;
  lc_scan_result *r = sc->r;
  if (r->nshared == INT_MAX) return fail(sc, "too many __shared__ declarations");
  /* without an array the entry is built all the same, so that counting
  ** fails exactly where filling would */
  lc_shared_decl scratch, *e = &scratch;
  if (r->shared) {
    if (r->nshared >= r->max_shared)
      return fail(sc, "more than %d __shared__ declarations", r->max_shared);
    e = &r->shared[r->nshared];
  }
  {
    memset(e, 0, sizeof *e);
    e->begin = begin;
    e->end = end + 1;
    e->decl_begin = dbegin;
    e->decl_end = dend;
    e->line = name->line;
    e->is_extern = ext;
    e->in_function = in_func;
    e->kernel = kernel;
    e->align = align;
    if (!copy_tok(s, name, e->name, sizeof e->name))
      return fail(sc, "line %d: a name longer than %d bytes", name->line, (int)sizeof e->name - 1);
    memcpy(e->type, type, sizeof e->type);
    sbuf b;
    bool trunc;
    sb_init(&b, e->dims, sizeof e->dims, s);
    if (dims_seen) range_text(dimstart, dend, &b);
    trunc = b.trunc;
    sb_init(&b, e->declarator, sizeof e->declarator, s);
    range_text(dl, dend, &b);
    trunc = trunc || b.trunc;
    sb_init(&b, e->text, sizeof e->text, s);
    for (int i = 0; i < nty; i++) sb_tok(&b, &ty[i]);
    range_text(dl, dend, &b);
    if (trunc || b.trunc)
      return fail(sc, "line %d: __shared__ declaration of '%s' too long", name->line, e->name);
  }
  r->nshared++;
  return 0;
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
    next(&y, &a);
    if (a.k == T_EOF || a.b >= close) break;
    if (n == 32) return false;
    t[n++] = a;
  }
  return const_expr(sc->s, t, n, &sc->defs, v) && *v > 0;
}

static int parse_var(scanner *sc, lx y, size_t end, int what, bool in_func, int kernel,
                     bool in_ns) {
  const char *s = sc->s;
  size_t begin = 0;
  tok ty[MAXTYTOK], t;
  lx yb;
  int nty = 0;
  tspec ts;
  ts_init(&ts);
  bool ext = false, stat = false, constant = false, managed = false, first = true;
  bool named = false, other = false;    /* a type name seen; a type we cannot code */
  int64_t align = 0;
  /* the specifiers */
  for (;;) {
    adv(&y, &yb, &t);
    if (t.k == T_EOF || t.b >= end) return 0;
    if (first) begin = t.b;
    first = false;
    if (t.k == T_STR) continue;                        /* extern "C" */
    if (t.k == T_ID) {
      static const char *const skip[] = {
        "__shared__", "__device__", "__host__", "inline", "__inline__", "__forceinline__",
        "constexpr", "thread_local", "register", "mutable", "__restrict__", "__restrict",
        "restrict", "typename", NULL,
      };
      if (teq(s, &t, "extern")) {
        ext = true;
        continue;
      }
      if (teq(s, &t, "static")) {
        stat = true;
        continue;
      }
      if (teq(s, &t, "__constant__")) {
        constant = true;
        continue;
      }
      if (teq(s, &t, "__managed__")) {
        managed = true;
        continue;
      }
      if (any_of(s, &t, skip)) continue;
      if (is_attr_word(s, &t)) {
        /* __align__(16), alignas(16), __attribute__((...)) */
        bool al = teq(s, &t, "__align__") || teq(s, &t, "alignas") || teq(s, &t, "_Alignas");
        lx save = y;
        tok g, inner;
        int ng = 0;
        adv(&y, &yb, &g);
        if (!tpun1(s, &g, '(')) {
          y = save;
          continue;
        }
        if (!skip_bal(s, &y, &yb, &g, end, &inner, &ng)) return 0;
        if (al) {
          int64_t v;
          align = (ng == 1 && inner.k == T_NUM && int_literal(s + inner.b, inner.e - inner.b, &v))
                  ? v : -1;
        }
        continue;
      }
      bool typeword = false;
      if (teq(s, &t, "const")) {
        ts.cnst = true;
        typeword = true;
      } else if (teq(s, &t, "volatile")) {
        typeword = true;
      } else if (!named && ts_word(&ts, s, &t)) {
        typeword = true;
      } else if (!named && !ts_any(&ts)) {
        /* a type name: MyStruct, std::uint32_t, Foo<int, 3>, struct S */
        int code = typedef_code(&sc->td, s, &t, NULL);
        named = true;
        typeword = true;
        if (code >= 0) ts.named = code;
        else other = true;
        if (teq(s, &t, "struct") || teq(s, &t, "class") || teq(s, &t, "union") ||
            teq(s, &t, "enum") || teq(s, &t, "std"))
          named = false;                                /* the name follows */
      }
      if (!typeword) break;                             /* the declarator's name */
      if (nty == MAXTYTOK) return fail(sc, "line %d: declaration type too long", t.line);
      ty[nty++] = t;
      continue;
    }
    if (tpun(s, &t, "::")) {
      if (nty == MAXTYTOK) return fail(sc, "line %d: declaration type too long", t.line);
      /* std::uint32_t and ::uint32_t are known; a::b is not */
      other = other || ts.named != -1 || ts_any(&ts);
      if (nty >= 1 && teq(s, &ty[nty - 1], "std") && (nty == 1 || !tpun(s, &ty[nty - 2], "::")))
        other = false;
      ty[nty++] = t;
      named = false;
      ts.named = -1;
      continue;
    }
    if (tpun1(s, &t, '<') && named) {
      /* template arguments belong to the type */
      int depth = 0;
      other = true;
      for (;;) {
        if (nty == MAXTYTOK) return fail(sc, "line %d: declaration type too long", t.line);
        ty[nty++] = t;
        if (tpun1(s, &t, '<')) depth++;
        else if (tpun1(s, &t, '>') && --depth == 0) break;
        adv(&y, &yb, &t);
        if (t.k == T_EOF || t.b >= end) return 0;
      }
      continue;
    }
    if (tpun1(s, &t, '[')) {
      /* [[attribute]] */
      if (!skip_bal(s, &y, &yb, &t, end, NULL, NULL)) return 0;
      continue;
    }
    if (tpun1(s, &t, '*') || tpun1(s, &t, '&') || tpun(s, &t, "&&") || tpun1(s, &t, '(')) break;
    return 0;                                           /* struct S { ... } x; and the like */
  }
  if (nty == 0 || (!named && !ts_any(&ts))) return 0;
  int code = other ? -2 : ts_resolve(&ts);
  char type[128];
  sbuf tb;
  sb_init(&tb, type, sizeof type, s);
  for (int i = 0; i < nty; i++) sb_tok(&tb, &ty[i]);
  if (tb.trunc)
    return fail(sc, "line %d: declaration type longer than %d bytes", ty[0].line, (int)sizeof type - 1);
  /* the declarators; t is the first token of the first one, yb the lexer before it */
  for (;;) {
    lx dl = yb, dimstart = yb;
    size_t dbegin = t.b, dend = t.b;
    tok name = t;
    bool has_name = false, complex = false, ptr = false, dims_known = true, dims_seen = false;
    int ndim = 0, depth = 0;
    int64_t dims[3] = { 0, 0, 0 };
    while (t.k != T_EOF && t.b < end) {
      if (depth == 0) {
        if (tpun1(s, &t, ',') || tpun1(s, &t, '=')) break;
        if (tpun1(s, &t, '{') && has_name) {
          /* int x{5}: a brace initializer ends the declarator */
          if (!skip_bal(s, &y, &yb, &t, end, NULL, NULL)) return 0;
          adv(&y, &yb, &t);
          break;
        }
        if (tpun1(s, &t, '*') || tpun1(s, &t, '&') || tpun(s, &t, "&&")) {
          if (has_name) complex = true;
          ptr = true;
        } else if (is_qual(s, &t)) {
          (void)0;
        } else if (is_attr_word(s, &t)) {
          lx save = y, saveb = yb;
          tok g = t;
          adv(&y, &yb, &t);
          if (tpun1(s, &t, '(')) {
            if (!skip_bal(s, &y, &yb, &t, end, NULL, NULL)) return 0;
          } else {
            y = save;
            yb = saveb;
            t = g;
          }
        } else if (t.k == T_ID && !has_name && !is_keyword(s, &t)) {
          name = t;
          has_name = true;
        } else if (tpun1(s, &t, '[') && has_name) {
          /* one bound; a constant expression is a known dimension */
          lx open = y;
          int64_t v;
          if (!dims_seen) dimstart = yb;
          dims_seen = true;
          if (!skip_bal(s, &y, &yb, &t, end, NULL, NULL)) return 0;
          if (bound_value(sc, open, t.b, &v)) {
            if (ndim < 3) dims[ndim] = v;
          } else {
            dims_known = false;
          }
          ndim++;
          dend = t.e;
          adv(&y, &yb, &t);
          continue;
        } else {
          complex = true;                 /* (*fp)(int), f(int), x(5) */
        }
      }
      if (opener(s, &t)) depth++;
      else if (closer(s, &t) && depth > 0) depth--;
      dend = t.e;
      adv(&y, &yb, &t);
    }
    if (t.k != T_EOF && t.b < end && tpun1(s, &t, '=')) {
      /* the initializer, to the next ',' outside brackets */
      depth = 0;
      for (;;) {
        adv(&y, &yb, &t);
        if (t.k == T_EOF || t.b >= end) break;
        if (depth == 0 && tpun1(s, &t, ',')) break;
        if (opener(s, &t)) depth++;
        else if (closer(s, &t) && depth > 0) depth--;
      }
    }
    if (has_name && !complex) {
      if (what == V_SHARED) {
        if (record_shared(sc, type, nty, ty, begin, end, dl, dbegin, dend, &name, dims_seen,
                          dimstart, ext, in_func, kernel, align) != 0)
          return -1;
      } else {
        lc_scan_result *r = sc->r;
        if (r->nglobals == INT_MAX) return fail(sc, "too many global variables");
        lc_global_decl scratch, *g = &scratch;
        if (r->globals) {
          if (r->nglobals >= r->max_globals)
            return fail(sc, "more than %d __constant__ / __device__ variables", r->max_globals);
          g = &r->globals[r->nglobals];
        }
        {
          memset(g, 0, sizeof *g);
          if (!copy_tok(s, &name, g->name, sizeof g->name))
            return fail(sc, "line %d: a name longer than %d bytes", name.line, (int)sizeof g->name - 1);
          sbuf b;
          sb_init(&b, g->type_text, sizeof g->type_text, s);
          sb_raw(&b, type, strlen(type));
          if (ptr) sb_raw(&b, " *", 2);
          if (b.trunc)
            return fail(sc, "line %d: declaration type longer than %d bytes", name.line,
                        (int)sizeof g->type_text - 1);
          g->type = (ptr || code < 0) ? -1 : code;
          g->ndim = (!dims_known || ndim > 3) ? -1 : ndim;
          for (int i = 0; i < ndim && i < 3 && g->ndim > 0; i++) g->dims[i] = dims[i];
          g->is_constant = constant;
          g->is_managed = managed;
          g->is_extern = ext;
          g->is_static = stat;
          g->in_namespace = in_ns;
          g->line = name.line;
          g->begin = begin;
          g->end = end + 1;
        }
        r->nglobals++;
      }
    }
    if (t.k == T_EOF || t.b >= end || !tpun1(s, &t, ',')) return 0;
    adv(&y, &yb, &t);
  }
}

/* In a body: a __shared__ in the statement that began at sc->stmt. The
** statement ends at the next ';' (then it is recorded) or brace (then it is
** not a declaration we know). y is the lexer just past __shared__. */
static int shared_stmt(scanner *sc, lx y) {
  tok t;
  for (;;) {
    next(&y, &t);
    if (t.k == T_EOF || tpun1(sc->s, &t, '{') || tpun1(sc->s, &t, '}')) return 0;
    if (tpun1(sc->s, &t, ';')) break;
  }
  const scope *sp = &sc->st[sc->depth];
  return parse_var(sc, sc->stmt, t.b, V_SHARED, sp->in_func || sc->over > 0, sp->kernel, sp->in_ns);
}

/* ---- namespace scope ------------------------------------------------------ */

static void decl_reset(scanner *sc) {
  sc->d.active = false;
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
    next(&y, &a);
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
    if (bad) return whyf(why, "an alignment attribute that is not a power-of-2 literal, or "
                         "packed, is not supported");
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

/* A declaration with a class body ended with the ';' at semi: `struct S
** {...};`, `typedef struct {...} S;`, `struct __align__(16) S {...} s;`.
** Its layout is read, and the struct recorded under its names. */
static int struct_decl(scanner *sc, size_t semi) {
  const decl *d = &sc->d;
  const char *s = sc->s;
  lc_struct_def def;
  memset(&def, 0, sizeof def);
  def.line = d->sline;
  def.align = 1;
  char why[WHYLEN];
  why[0] = '\0';
  tok h[MAXPTOK], tag = {T_EOF, 0, 0, 0}, tname = {T_EOF, 0, 0, 0};
  int nh = 0;
  bool typedef_ = false, bad = false;
  int64_t sal = 0;
  /* the head: typedef, struct, attributes, the tag, a base */
  lx y = d->start;
  for (;;) {
    tok a;
    next(&y, &a);
    if (a.k == T_EOF || a.b >= d->sopen) break;
    if (nh < MAXPTOK) h[nh++] = a;
  }
  bool is_class = false;
  for (int i = 0; i < nh; i++) {
    if (teq(s, &h[i], "typedef")) typedef_ = true;
    else if (teq(s, &h[i], "class")) is_class = true;
    else if (is_align_word(s, &h[i]) ||
             (tpun1(s, &h[i], '[') && i + 1 < nh && tpun1(s, &h[i + 1], '[')))
      i = align_attr(s, h, nh, i, &sal, &bad) - 1;
    else if (tpun1(s, &h[i], ':') && !why[0]) whyf(why, "base classes are not supported");
    else if (h[i].k == T_ID && !is_keyword(s, &h[i]) && !teq(s, &h[i], "final") &&
             !is_attr_word(s, &h[i]) && tag.k == T_EOF)
      tag = h[i];
  }
  if (d->agg == 2 && !why[0]) whyf(why, "unions are not supported");
  if (bad && !why[0]) whyf(why, "an alignment attribute that is not a power-of-2 literal, or "
                           "packed, is not supported");
  /* the members */
  tok m[MAXPTOK];
  int nm = 0, depth = 0, skip = 0;
  bool more = false, func = false, colon = false;
  bool in_public = !is_class;                 /* a class's members start private */
  int64_t off = 0;
  y = d->sblx;
  for (;;) {
    tok a;
    next(&y, &a);
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
      if (nm > 0 && (teq(s, &m[0], "virtual") || (nm > 1 && teq(s, &m[1], "virtual"))))
        whyf(why, "virtual functions are not supported");
      else if (nm > 0 && !func && !teq(s, &m[0], "static") && !teq(s, &m[0], "using") &&
               !teq(s, &m[0], "typedef") && !teq(s, &m[0], "friend") &&
               !teq(s, &m[0], "static_assert") && !teq(s, &m[0], "template")) {
        if (more) {
          ptext(s, m, nm, -1, true, def.error, 64);
          whyf(why, "a member declaration too long to read ('%s')", def.error);
        } else if (teq(s, &m[0], "enum")) {
          whyf(why, "enum members are not supported");
        } else {
          struct_member(sc, m, nm, &def, &off, why);
          if (!in_public) def.opaque = true;
        }
      }
      nm = 0;
      more = func = colon = false;
      continue;
    }
    if (tpun1(s, &a, '(') || tpun1(s, &a, '[') || tpun1(s, &a, '{')) {
      /* name( is a member function; int (*f)(int), a member the compiler lays out */
      const tok *b = nm > 0 ? &m[nm - 1] : NULL;
      if (depth == 0 && tpun1(s, &a, '(') && b && !is_attr_word(s, b) &&
          ((b->k == T_ID && !is_keyword(s, b) && !struct_find(&sc->td, s, b) &&
            typedef_code(&sc->td, s, b, NULL) < 0) || teq(s, b, "operator") ||
           (b->k == T_PUN && nm > 1 && teq(s, &m[nm - 2], "operator"))))
        func = true;
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
  /* the tail: the typedef's name, attributes */
  {
    tok tl[MAXPTOK];
    int nt = 0;
    for (;;) {
      tok a;
      next(&y, &a);
      if (a.k == T_EOF || a.b >= semi) break;
      if (nt < MAXPTOK) tl[nt++] = a;
    }
    bool tbad = false;
    for (int i = 0; i < nt; i++) {
      if (tpun1(s, &tl[i], ',') || tpun1(s, &tl[i], '=')) break;
      if (is_align_word(s, &tl[i]) ||
          (tpun1(s, &tl[i], '[') && i + 1 < nt && tpun1(s, &tl[i + 1], '[')))
        i = align_attr(s, tl, nt, i, &sal, &tbad) - 1;
      else if (tl[i].k == T_ID && !is_keyword(s, &tl[i]) && typedef_ && tname.k == T_EOF &&
               (i == 0 || !tpun1(s, &tl[i - 1], '*')))
        tname = tl[i];
    }
    if (tbad && !why[0]) whyf(why, "an alignment attribute that is not a power-of-2 literal, or "
                              "packed, is not supported");
  }
  if (tag.k == T_EOF && tname.k == T_EOF) return 0;     /* nothing names it */
  if (sal > def.align) def.align = sal;
  def.size = off == 0 ? 1 : off;                         /* C++: an empty struct has 1 */
  def.size = (def.size + def.align - 1) / def.align * def.align;
  const tok *nm0 = tname.k != T_EOF ? &tname : &tag;
  if (!copy_tok(s, nm0, def.name, sizeof def.name)) return 0;
  def.tagged = nm0 == &tag;
  def.internal = sc->st[sc->depth].in_unnamed;
  def.end = semi + 1;
  if (nm0 == &tname && tag.k != T_EOF && copy_tok(s, &tag, def.aliases[0], sizeof def.aliases[0]) &&
      strcmp(def.aliases[0], def.name) != 0)
    def.naliases = 1;
  if (why[0]) {
    snprintf(def.error, sizeof def.error, "%s", why);
    def.nmembers = 0;
  } else {
    def.error[0] = '\0';
  }
  lc_scan_result *r = sc->r;
  if (r->nstructs == INT_MAX) return fail(sc, "too many structs");
  int idx = r->nstructs;
  if (r->structs) {
    if (idx >= r->max_structs) return fail(sc, "more than %d structs in the source", r->max_structs);
    r->structs[idx] = def;
  }
  r->nstructs++;
  if (tag.k != T_EOF) struct_name(sc, &tag, idx, &def);
  if (tname.k != T_EOF && !(tag.k != T_EOF && tag.e - tag.b == tname.e - tname.b &&
                            memcmp(s + tag.b, s + tname.b, tag.e - tag.b) == 0))
    struct_name(sc, &tname, idx, &def);
  return 0;
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
    next(&y, &a);
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
    next(&y, &a);
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
      next(&y, &a);
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
    next(&y, &a);
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
static int decl_end(scanner *sc, size_t semi) {
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

/* A function body opens at t; a kernel's if the declaration says so. */
static int open_body(scanner *sc, const tok *t) {
  decl *d = &sc->d;
  lc_scan_result *r = sc->r;
  int idx = -1;
  if (d->global && d->params && !d->op && !d->tdef) {
    const scope *sp = &sc->st[sc->depth];
    if (r->nkernels == INT_MAX) return fail(sc, "too many kernels");
    idx = r->nkernels;
    lc_kernel_sig *k = &sc->scratch;
    if (r->kernels) {
      if (idx >= r->max_kernels) return fail(sc, "more than %d kernels in the source", r->max_kernels);
      k = &r->kernels[idx];
    }
    {
      memset(k, 0, sizeof *k);
      if (!copy_tok(sc->s, &d->name, k->name, sizeof k->name))
        return fail(sc, "line %d: a kernel name longer than %d bytes", d->name.line,
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
    next(&x, &t);
    if (t.k == T_EOF) break;
    int rc = decl_mode(sc) ? decl_token(sc, &before, &x, &t) : body_token(sc, &before, &x, &t);
    if (rc != 0) return -1;
  }
  for (int i = 1; i <= sc->depth; i++)
    if (sc->st[i].opens >= 0)
      return fail(sc, "kernel '%s' (line %d): no '}' closes its body", sc->open_name,
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
  next(&x, &t);
  bool td = x.in_directive;
  while (t.k != T_EOF) {
    next(&x, &u);
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
  next(&x, &t);
  td = x.in_directive;
  while (t.k != T_EOF) {
    if (block && !td && tpun1(src, &t, '{')) depth++;
    if (block && !td && tpun1(src, &t, '}') && --depth < 0) break;
    next(&x, &u);
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
