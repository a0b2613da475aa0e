/*
** scan_lex: the scanner's lexer (see scan.c): tokens from CUDA C++ source,
** comments, literals and preprocessor lines skipped, the dead branches of
** literal #if 0 / #if 1 left out, and the integer constants that #define
** names recorded; and the value of integer constant expressions over them
** (array bounds, enumerators).
*/
#include "scan_internal.h"

#include <limits.h>
#include <string.h>

/* ---- lexer -------------------------------------------------------------- */

void lx_init(lx *x, const char *s, size_t n) {
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

/* Integer literal (decimal, hex, binary or octal, digit separators, u/l/z
** suffixes) in s[0 .. n); false if it is not one or does not fit. */
bool int_literal(const char *s, size_t n, int64_t *out) {
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

void cdef_set(ctab *c, const char *name, size_t nl, bool known, bool bare, int64_t v) {
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
    lx_next(&y, &t);
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
void lx_next(lx *x, tok *t) {
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

bool const_expr(const char *s, const tok *t, int n, const ctab *defs, int64_t *v) {
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
