/*
** scan_types: the scanner's type reader (see scan.c): C++ type words and
** the type names a source defines, read into dtypes; kernel parameter
** lists read into lc_param, for kernels the scanner finds and for
** signatures given by hand (lc_parse_signature); and the normalized text
** of tokens, for messages and the simulator's rewrites.
*/
#include "scan_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- normalized text ------------------------------------------------------ */

void sb_init(sbuf *b, char *p, size_t cap, const char *src) {
  b->p = p;
  b->cap = cap;
  b->n = 0;
  b->trunc = false;
  b->src = src;
  b->has_last = false;
  p[0] = '\0';
}

bool any_of(const char *s, const tok *t, const char *const *ws) {
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

void sb_raw(sbuf *b, const char *p, size_t n) {
  if (b->trunc) return;
  if (n >= b->cap - b->n) {
    b->trunc = true;
    return;
  }
  memcpy(b->p + b->n, p, n);
  b->n += n;
  b->p[b->n] = '\0';
}

void sb_tok(sbuf *b, const tok *t) {
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

void ts_init(tspec *ts) {
  memset(ts, 0, sizeof *ts);
  ts->named = -1;
}

bool ts_any(const tspec *ts) {
  return ts->sign || ts->unsig || ts->chr || ts->shrt || ts->intw || ts->lng || ts->flt ||
         ts->dbl || ts->bln || ts->vd || ts->named != -1;
}

/* Count a builtin type word; false if w is not one. */
bool ts_word(tspec *ts, const char *s, const tok *t) {
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
int64_t vector_align(int64_t esize, int n) {
  if (n == 2) return esize * 2;
  if (n == 4) return esize * 4 > 16 ? 16 : esize * 4;
  return esize;
}

static const tdef *tdef_find(const tdtab *td, const char *s, const tok *t) {
  if (!td || t->k != T_ID) return NULL;
  for (int i = td->n - 1; i >= 0; i--)
    if (teq(s, t, td->e[i].name)) return &td->e[i];
  return NULL;
}

/* The struct the name t means, or NULL. */
const tdef *struct_find(const tdtab *td, const char *s, const tok *t) {
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
int typedef_code(const tdtab *td, const char *s, const tok *t, int *vec) {
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
int ts_resolve(const tspec *ts) {
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

int64_t type_size(int code) { return lc_dtypes[code].size; }

/* cv and restrict spellings, and other words that do not change a type */
bool is_qual(const char *s, const tok *t) {
  static const char *const q[] = {
    "const", "volatile", "__restrict__", "__restrict", "restrict", "__grid_constant__",
    "register", NULL,
  };
  return t->k == T_ID && any_of(s, t, q);
}

/* Words followed by a parenthesized group that is not a parameter list. */
bool is_attr_word(const char *s, const tok *t) {
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
bool is_keyword(const char *s, const tok *t) {
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

/* Why a parameter is refused, after "kernel 'k' parameter N: ". */
int whyf(char *why, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, WHYLEN, fmt, ap);
  va_end(ap);
  return -1;
}

/* Text of the tokens t[0 .. nt) except index skip, for messages. */
void ptext(const char *s, const tok *t, int nt, int skip, bool more, char *buf, size_t cap) {
  sbuf b;
  sb_init(&b, buf, cap, s);
  for (int i = 0; i < nt; i++)
    if (i != skip) sb_tok(&b, &t[i]);
  if (more) b.trunc = true;
  sb_ellipsis(&b);
}

/* The index of the parameter's name when the type could not be read: a
** trailing identifier after a type-like token. */
int guess_name(const char *s, const tok *t, int nt) {
  if (nt < 2 || t[nt - 1].k != T_ID || is_keyword(s, &t[nt - 1])) return -1;
  const tok *p = &t[nt - 2];
  if (p->k == T_ID || tpun1(s, p, '*') || tpun1(s, p, '&') || tpun1(s, p, '>') || tpun(s, p, "&&"))
    return nt - 1;
  return -1;
}

/* Index just past the group that opens at t[i] ('(' or '['), or nt. */
int skip_group(const char *s, const tok *t, int nt, int i) {
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

/* What a parameter's tokens have shown so far. */
typedef struct pstate {
  tspec ts, et;           /* the type's words; an Array's element type's */
  bool is_array;          /* Array<T, N>, of rank ndim */
  bool qualified;         /* a '::' waits for the name it qualifies */
  int ndim;
  const tdef *sd;         /* the struct the source defines, named */
  int stars, brackets;    /* the declarator's */
  bool ref;
  int name;               /* the index of the parameter's name, or -1 */
} pstate;

/* "unsupported type" with the text of t[0 .. nt) but index skip; -1. */
static int unsupported(const char *s, const tok *t, int nt, int skip, char *why) {
  char text[96];
  ptext(s, t, nt, skip, false, text, sizeof text);
  return whyf(why, "unsupported type '%s'", text);
}

/* A default argument ends the parameter's type: read it, and *nt becomes
** the count of the tokens before its '='. Returns -1 (why) for `...`. */
static int param_default(const char *s, const tok *t, int *nt, bool *more, lc_param *p,
                         char *why) {
  int depth = 0;
  for (int i = 0; i < *nt; i++) {
    if (tpun1(s, &t[i], '(') || tpun1(s, &t[i], '[') || tpun1(s, &t[i], '{')) depth++;
    else if ((tpun1(s, &t[i], ')') || tpun1(s, &t[i], ']') || tpun1(s, &t[i], '}')) && depth > 0)
      depth--;
    else if (depth == 0 && tpun1(s, &t[i], '=')) {
      /* a default argument: the type is what comes before it */
      read_default(s, t + i + 1, *nt - i - 1, *more, p);
      *nt = i;
      *more = false;
      break;
    }
    if (tpun(s, &t[i], "...")) return whyf(why, "variadic parameters are not supported");
  }
  return 0;
}

/* Array<T, N> from t[i] (`Array`): T one of the scalar types, N an
** integer literal. Returns the index past its '>', or -1 (why). */
static int array_type(const char *s, const tok *t, int nt, int i, const tdtab *td, pstate *ps,
                      char *why) {
  bool q2 = false;
  i += 2;
  while (i < nt && !tpun1(s, &t[i], ',')) {
    const tok *e = &t[i];
    int c2;
    if (teq(s, e, "const")) ps->et.cnst = true;
    else if (is_qual(s, e)) (void)0;
    else if (!q2 && ts_word(&ps->et, s, e)) (void)0;
    else if (!q2 && teq(s, e, "std") && i + 1 < nt && tpun(s, &t[i + 1], "::")) {
      q2 = true;
      i++;
    } else if (!q2 && tpun(s, e, "::")) q2 = true;
    else if ((c2 = typedef_code(td, s, e, NULL)) >= 0 && !ts_any(&ps->et)) {
      ps->et.named = c2;
      q2 = false;
    } else return unsupported(s, t, nt, guess_name(s, t, nt), why);
    i++;
  }
  if (q2 || i + 3 > nt || t[i + 1].k != T_NUM || !tpun1(s, &t[i + 2], '>'))
    return unsupported(s, t, nt, guess_name(s, t, nt), why);
  int64_t v;
  if (!int_literal(s + t[i + 1].b, t[i + 1].e - t[i + 1].b, &v) || v < 1 || v > LC_MAXDIM) {
    char text[96];
    ptext(s, t, i + 3, -1, false, text, sizeof text);
    return whyf(why, "unsupported type '%s' (the rank of an Array is 1 to %d)", text,
                LC_MAXDIM);
  }
  ps->ndim = (int)v;
  ps->is_array = true;
  return i + 3;
}

/* A word of the type specifiers at t[i]. Returns the index of the next
** token to read, i itself when t[i] is the parameter's name, or -1 (why). */
static int specifier_word(const char *s, const tok *t, int nt, int i, bool structs,
                          const tdtab *td, pstate *ps, lc_param *p, char *why) {
  const tok *a = &t[i];
  tspec *ts = &ps->ts;
  if (teq(s, a, "const")) {
    ts->cnst = true;
    return i + 1;
  }
  if (is_qual(s, a)) return i + 1;
  if (teq(s, a, "__attribute__")) return skip_group(s, t, nt, i + 1);
  if (!ps->qualified && ts_word(ts, s, a)) {
    if (ts->named != -1 || ps->is_array) return unsupported(s, t, nt, guess_name(s, t, nt), why);
    return i + 1;
  }
  if (teq(s, a, "std") && i + 1 < nt && tpun(s, &t[i + 1], "::") && !ps->qualified) {
    ps->qualified = true;
    return i + 2;
  }
  bool bare = !ps->qualified && !ts_any(ts) && !ps->is_array;   /* no type word yet */
  const tdef *known = struct_find(td, s, a);
  if (known && bare) {
    memcpy(p->type_name, known->name, sizeof p->type_name);
    ts->named = LC_PARAM_STRUCT;
    ps->sd = known;
    return i + 1;
  }
  int vec, code = typedef_code(td, s, a, &vec);
  if (code >= 0 && !ts_any(ts) && !ps->is_array) {
    ts->named = code;
    ts->vec = vec;
    ps->qualified = false;
    return i + 1;
  }
  if (teq(s, a, "Array") && bare && i + 1 < nt && tpun1(s, &t[i + 1], '<'))
    return array_type(s, t, nt, i, td, ps, why);
  if ((structs || struct_find(td, s, &t[i + (i + 1 < nt)])) && bare &&
      (teq(s, a, "struct") || teq(s, a, "class")) && i + 1 < nt && t[i + 1].k == T_ID &&
      !is_keyword(s, &t[i + 1]))
    return i + 1;                                          /* struct Point */
  if (structs && bare && !is_keyword(s, a)) {
    /* a type we do not know: a record's struct, if it is pointed to */
    size_t nl = a->e - a->b;
    if (nl >= sizeof p->type_name) return unsupported(s, t, nt, guess_name(s, t, nt), why);
    memcpy(p->type_name, s + a->b, nl);
    p->type_name[nl] = '\0';
    ts->named = LC_PARAM_STRUCT;
    return i + 1;
  }
  if (!ts_any(ts) && !ps->is_array)                        /* a type we do not know */
    return unsupported(s, t, nt, guess_name(s, t, nt), why);
  return i;                                                /* the name */
}

/* The type specifiers from t[0]. Returns the index past them, or -1 (why). */
static int param_specifiers(const char *s, const tok *t, int nt, bool structs,
                            const tdtab *td, pstate *ps, lc_param *p, char *why) {
  int i = 0;
  while (i < nt) {
    const tok *a = &t[i];
    if (a->k == T_ID) {
      int at = i;
      if ((i = specifier_word(s, t, nt, i, structs, td, ps, p, why)) < 0) return -1;
      if (i == at) break;
      continue;
    }
    if (tpun(s, a, "::") && !ps->qualified && !ts_any(&ps->ts) && !ps->is_array) {
      ps->qualified = true;
      i++;
      continue;
    }
    if (tpun1(s, a, '[') && i + 1 < nt && tpun1(s, &t[i + 1], '[')) {
      i = skip_group(s, t, nt, i);                         /* [[attribute]] */
      continue;
    }
    break;
  }
  if (ps->qualified || (!ts_any(&ps->ts) && !ps->is_array))
    return unsupported(s, t, nt, guess_name(s, t, nt), why);
  return i;
}

/* The declarator from t[i]: * and qualifiers, the name, one []. Returns 0,
** or -1 (why). */
static int param_declarator(const char *s, const tok *t, int nt, int i, pstate *ps,
                            char *why) {
  for (; i < nt; i++) {
    const tok *a = &t[i];
    if (tpun1(s, a, '*') && ps->name < 0) {
      ps->stars++;
    } else if ((tpun1(s, a, '&') || tpun(s, a, "&&")) && ps->name < 0) {
      ps->ref = true;
    } else if (a->k == T_ID && teq(s, a, "const")) {
      if (ps->stars == 0 && ps->name < 0) ps->ts.cnst = true;
    } else if (is_qual(s, a)) {
      (void)0;
    } else if (teq(s, a, "__attribute__")) {
      i = skip_group(s, t, nt, i + 1) - 1;
    } else if (a->k == T_ID && ps->name < 0 && !is_keyword(s, a) && ps->brackets == 0) {
      ps->name = i;
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
        return unsupported(s, t, nt, -1, why);
      }
      ps->brackets++;
    } else {
      return unsupported(s, t, nt, -1, why);
    }
  }
  return 0;
}

/* The dtype code of the parameter read (text: its type's spelling), into
** *code; -1 (why) for a type no launch can pass. A default argument of the
** wrong kind is kept as text only. */
static int param_code(const pstate *ps, lc_param *p, const char *text, int *code, char *why) {
  const tdef *sd = ps->sd;
  int ptrs = ps->stars + ps->brackets;
  if (ps->ref) return whyf(why, "unsupported type '%s' (references are not supported)", text);
  if (ps->is_array && ptrs > 0)
    return whyf(why, "unsupported type '%s' (pointers to Array are not supported)", text);
  if (ptrs > 1) return whyf(why, "unsupported type '%s' (only one level of pointer)", text);
  int c = ps->is_array ? ts_resolve(&ps->et) : ts_resolve(&ps->ts);
  if (c == -2 || (ps->is_array && c == -1)) return whyf(why, "unsupported type '%s'", text);
  if (c == -1 && ptrs == 0) return whyf(why, "a parameter cannot be void");
  if (c == LC_PARAM_STRUCT && ptrs == 0 && sd == NULL)
    return whyf(why, "unsupported type '%s' (a struct is passed by pointer)", text);
  if (c == LC_PARAM_STRUCT && ptrs == 0 && sd->bad)
    return whyf(why, "unsupported type '%s' (struct %s: %s)", text, sd->name, sd->why);
  if (p->has_default && p->default_known) {
    /* a pointer's is a null pointer constant; a scalar's, a number */
    bool pointer = !ps->is_array && ptrs > 0;
    bool zero = !p->default_null && !p->default_float && p->default_int == 0;
    if (pointer ? !(p->default_null || zero)
                : (p->default_null || ps->is_array || ps->ts.vec || c == LC_PARAM_STRUCT))
      p->default_known = false;
    p->default_null = pointer && p->default_known;
  }
  *code = c;
  return 0;
}

/* The kind, size and alignment of a parameter of dtype code. */
static void param_kind(const pstate *ps, int code, lc_param *p) {
  const tdef *sd = ps->sd;
  if (ps->is_array) {
    p->kind = LC_PARAM_ARRAY;
    p->is_const = ps->et.cnst;
    p->ndim = ps->ndim;
    p->size = LC_ARRAY_SIZE((int64_t)ps->ndim);
    p->align = LC_ARRAY_ALIGN;
  } else if (ps->stars + ps->brackets == 1) {
    p->kind = LC_PARAM_POINTER;
    p->is_const = ps->ts.cnst;
    p->vec = ps->ts.vec;
    p->size = p->align = 8;
  } else if (sd) {
    p->kind = LC_PARAM_VALUE;                    /* a struct by value */
    p->size = sd->size;
    p->align = sd->align;
  } else if (ps->ts.vec) {
    p->kind = LC_PARAM_VALUE;
    p->vec = ps->ts.vec;
    p->size = type_size(code) * ps->ts.vec;
    p->align = vector_align(type_size(code), ps->ts.vec);
  } else {
    p->kind = LC_PARAM_SCALAR;
    p->size = p->align = type_size(code);
  }
}

/* One parameter from its tokens. Returns 0, or -1 with the reason in why. */
static int parse_param(const char *s, const tok *t, int nt, bool more, bool structs,
                       const tdtab *td, lc_param *p, char *why) {
  char text[96];
  memset(p, 0, sizeof *p);
  p->sdef = -1;
  if (param_default(s, t, &nt, &more, p, why) != 0) return -1;
  if (more) {
    ptext(s, t, nt, -1, more, text, sizeof text);
    return whyf(why, "unsupported type '%s'", text);
  }
  pstate ps;
  memset(&ps, 0, sizeof ps);
  ts_init(&ps.ts);
  ts_init(&ps.et);
  ps.name = -1;
  int code = -2, i = param_specifiers(s, t, nt, structs, td, &ps, p, why);
  if (i < 0 || param_declarator(s, t, nt, i, &ps, why) != 0) return -1;
  ptext(s, t, nt, ps.name, false, text, sizeof text);
  if (param_code(&ps, p, text, &code, why) != 0) return -1;
  if (ps.name >= 0) {
    const tok *nm = &t[ps.name];
    if (!copy_tok(s, nm, p->name, sizeof p->name))
      return whyf(why, "the name is longer than %d bytes", (int)sizeof p->name - 1);
  }
  memcpy(p->spelling, text, sizeof p->spelling);
  p->type = code;
  if (code != LC_PARAM_STRUCT) p->type_name[0] = '\0';
  if (ps.sd) p->sdef = ps.sd->sdef;
  param_kind(&ps, code, p);
  return 0;
}

/* The parameter list from lexer state y (just past '(' or at the start of
** a signature) up to offset end, into params[0 .. *np). Returns 0, or -1
** with the message (prefixed by who) in msg[LC_ERRLEN]. */
int parse_params(lx *y, size_t end, bool structs, const tdtab *td, lc_param *params,
                 int *nparams, const char *who, char *msg) {
  const char *s = y->s;
  tok pt[MAXPTOK];
  char why[WHYLEN];
  int np = 0, nt = 0, depth = 0, angle = 0;
  bool more = false, any = false;
  for (;;) {
    tok t;
    lx_next(y, &t);
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
