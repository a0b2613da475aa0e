/*
** scan_internal: what the scanner's files share (scan_lex.c, scan_types.c,
** scan_decl.c, scan.c); nothing outside src/base/scan*.c includes it.
** scan.h is the interface. The functions here have hidden visibility in
** core.so, as every non-static one does.
*/
#ifndef LUACUDA_SCAN_INTERNAL_H
#define LUACUDA_SCAN_INTERNAL_H

#include "scan.h"

#include <string.h>

/* ---- tokens and the lexer (scan_lex.c) ----------------------------------- */

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

/* A lexer over s[0 .. n), at its start. */
void lx_init(lx *x, const char *s, size_t n);
/* The next token; comments, blanks, directives and dead branches are
** skipped. At the end, T_EOF with b == e == n. */
void lx_next(lx *x, tok *t);
/* Integer literal (decimal, hex, binary or octal, digit separators, u/l/z
** suffixes) in s[0 .. n); false if it is not one or does not fit. */
bool int_literal(const char *s, size_t n, int64_t *out);
/* Records (known) or forgets (!known) the constant name[0 .. nl). */
void cdef_set(ctab *c, const char *name, size_t nl, bool known, bool bare, int64_t v);
/* The value of t[0 .. n) as an integer constant expression (literals,
** the constants defs knows, parentheses, arithmetic and bit operators). */
bool const_expr(const char *s, const tok *t, int n, const ctab *defs, int64_t *v);

static inline bool text_is(const char *s, size_t n, const char *w) {
  size_t k = strlen(w);
  return n == k && memcmp(s, w, k) == 0;
}

static inline bool teq(const char *s, const tok *t, const char *w) {
  return text_is(s + t->b, t->e - t->b, w);
}

static inline bool tpun(const char *s, const tok *t, const char *w) {
  return t->k == T_PUN && teq(s, t, w);
}

static inline bool tpun1(const char *s, const tok *t, char c) {
  return t->k == T_PUN && t->e - t->b == 1 && s[t->b] == c;
}

/* Copy token text into a fixed buffer; false if it does not fit. */
static inline bool copy_tok(const char *s, const tok *t, char *buf, size_t cap) {
  size_t n = t->e - t->b;
  if (n >= cap) return false;
  memcpy(buf, s + t->b, n);
  buf[n] = '\0';
  return true;
}

/* ---- normalized text, types, parameters (scan_types.c) ------------------- */

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

void sb_init(sbuf *b, char *p, size_t cap, const char *src);
void sb_raw(sbuf *b, const char *p, size_t n);
void sb_tok(sbuf *b, const tok *t);
/* Whether t is one of the words ws (NULL-terminated). */
bool any_of(const char *s, const tok *t, const char *const *ws);

typedef struct tspec {
  int sign, unsig, chr, shrt, intw, lng, flt, dbl, bln, vd;
  int named;          /* lc_typecode of a typedef name; -1 none; -2 unknown */
  int vec;            /* the named type is a vector of vec of them */
  bool cnst;
} tspec;

void ts_init(tspec *ts);
bool ts_any(const tspec *ts);
/* Count a builtin type word; false if w is not one. */
bool ts_word(tspec *ts, const char *s, const tok *t);
/* The lc_typecode the words name; -1 for void; -2 if not a supported type. */
int ts_resolve(const tspec *ts);

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

/* The struct the name t means, or NULL. */
const tdef *struct_find(const tdtab *td, const char *s, const tok *t);
/* The dtype a typedef name in a kernel means, or -1; *vec, a vector's count. */
int typedef_code(const tdtab *td, const char *s, const tok *t, int *vec);
int64_t type_size(int code);
/* The alignment CUDA gives a vector of n elements of size esize. */
int64_t vector_align(int64_t esize, int n);
/* cv and restrict spellings, and other words that do not change a type */
bool is_qual(const char *s, const tok *t);
/* Words followed by a parenthesized group that is not a parameter list. */
bool is_attr_word(const char *s, const tok *t);
/* Words that may come before a declarator but are not a name. */
bool is_keyword(const char *s, const tok *t);

#define MAXPTOK 48
#define WHYLEN 256

/* Why a parameter (or struct member) is refused, into why[WHYLEN]; -1. */
__attribute__((format(printf, 2, 3)))
int whyf(char *why, const char *fmt, ...);
/* Text of the tokens t[0 .. nt) except index skip, for messages. */
void ptext(const char *s, const tok *t, int nt, int skip, bool more, char *buf, size_t cap);
/* The index of the parameter's name when the type could not be read, or -1. */
int guess_name(const char *s, const tok *t, int nt);
/* Index just past the group that opens at t[i] ('(' or '['), or nt. */
int skip_group(const char *s, const tok *t, int nt, int i);
/* The parameter list from lexer state y up to offset end. */
int parse_params(lx *y, size_t end, bool structs, const tdtab *td, lc_param *params,
                 int *nparams, const char *who, char *msg);

/* ---- the scanner's state (scan.c) ---------------------------------------- */

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

/* The message into sc->err; -1. */
__attribute__((format(printf, 2, 3)))
int scan_fail(scanner *sc, const char *fmt, ...);

/* ---- declarations (scan_decl.c) ------------------------------------------ */

/* The declaration at namespace scope ended with the ';' at semi. */
int decl_end(scanner *sc, size_t semi);
/* In a body: a __shared__ in the statement that began at sc->stmt. */
int shared_stmt(scanner *sc, lx y);

#endif
