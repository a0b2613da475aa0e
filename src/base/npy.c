/*
** npy: NumPy's .npy header, read and written (npy.h). The header is a
** Python literal; it is read by a small parser of exactly the literals
** NumPy writes (strings, integers, True/False/None, tuples, lists, dicts)
** into a tree, which is then checked and turned into an lc_npy_header:
** its dtype a luacuda dtype (dtype.h; a structure a record at the file's
** offsets), its byte order the fixes beside it.
** Nothing here trusts the file: every count, size and nesting is bounded.
*/
#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

static const unsigned char MAGIC[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* Bounds on what a header may hold: they keep a hostile file's parse
** small (NumPy's own headers are far inside them). */
#define MAX_NODES  (1 << 20)
#define MAX_DEPTH  64
#define MAX_FIELDS 4096
#define MAX_FIXES  (1 << 16)
#define MAX_ITEMSIZE (INT64_C(1) << 40)
#define MAX_NBYTES (INT64_C(1) << 62)

#define ERR(...) lc_fail(err, -1, __VA_ARGS__)

/* ---- the prefix ----------------------------------------------------------- */

int lc_npy_read_prefix(const unsigned char *p, size_t n, int *major, int *minor,
                       size_t *prefix_len, size_t *header_len, char *err) {
  if (n < sizeof MAGIC || memcmp(p, MAGIC, sizeof MAGIC) != 0) {
    if (n == 0) return ERR("the file is empty");
    if (n >= sizeof MAGIC && memcmp(p, MAGIC, sizeof MAGIC) == 0) goto truncated;
    if (n < sizeof MAGIC && memcmp(p, MAGIC, n) == 0) goto truncated;
    if (p[0] == 0x80)
      return ERR("a Python pickle, not a .npy file (luacuda does not load pickles)");
    if (n >= 4 && memcmp(p, "PK\x03\x04", 4) == 0)
      return ERR("a zip archive (an .npz file?), not a .npy file");
    return ERR("not a .npy file (it does not start with \\x93NUMPY)");
  }
  if (n < 8) goto truncated;
  *major = p[6];
  *minor = p[7];
  if (*major < 1 || *major > 3 || *minor != 0)
    return ERR("unsupported .npy version %d.%d (luacuda reads 1.0, 2.0 and 3.0)", *major,
               *minor);
  *prefix_len = *major == 1 ? 10 : 12;
  if (n < *prefix_len) goto truncated;
  uint64_t len = (uint64_t)p[8] | (uint64_t)p[9] << 8;
  if (*major > 1) len |= (uint64_t)p[10] << 16 | (uint64_t)p[11] << 24;
  if (len > (uint64_t)LC_NPY_HEADER_MAX)
    return ERR("the header claims %llu bytes (at most %lld are read)", (unsigned long long)len,
               (long long)LC_NPY_HEADER_MAX);
  *header_len = (size_t)len;
  return 0;
truncated:
  return ERR("truncated: the file ends inside its header");
}

/* ---- Python literals ------------------------------------------------------ */

typedef enum { PY_STR, PY_INT, PY_BOOL, PY_NONE, PY_TUPLE, PY_LIST, PY_DICT } py_kind;

static const char *const py_names[] = {"a string", "an integer", "a boolean", "None",
                                       "a tuple", "a list", "a dict"};

typedef struct py_node {
  py_kind kind;
  char *str;                   /* PY_STR: NUL-terminated UTF-8 */
  int64_t num;                 /* PY_INT, PY_BOOL */
  int n;                       /* items; a dict's are key, value, key, value... */
  struct py_node **items;
} py_node;

typedef struct parser {
  const char *s;
  size_t len, pos;
  bool latin1;                 /* versions 1.0 and 2.0: bytes are latin-1 */
  int depth, nodes;
  char *err;
} parser;

static void py_free(py_node *x) {
  if (x == NULL) return;
  for (int i = 0; i < x->n; i++) py_free(x->items[i]);
  free(x->items);
  free(x->str);
  free(x);
}

static int perr(parser *p, const char *what) {
  snprintf(p->err, LC_ERRLEN, "the header is not a valid Python literal: %s at byte %zu",
           what, p->pos);
  return -1;
}

static void skip_ws(parser *p) {
  while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                             p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
    p->pos++;
}

static py_node *new_node(parser *p, py_kind kind) {
  if (++p->nodes > MAX_NODES) {
    snprintf(p->err, LC_ERRLEN, "the header holds more than %d values", MAX_NODES);
    return NULL;
  }
  py_node *x = calloc(1, sizeof *x);
  if (x == NULL) snprintf(p->err, LC_ERRLEN, "out of memory reading the header");
  else x->kind = kind;
  return x;
}

static void put_utf8(lc_strbuf *b, uint32_t c) {
  unsigned char u[4];
  size_t n;
  if (c < 0x80) { u[0] = (unsigned char)c; n = 1; }
  else if (c < 0x800) { u[0] = (unsigned char)(0xC0 | c >> 6); u[1] = (unsigned char)(0x80 | (c & 0x3F)); n = 2; }
  else if (c < 0x10000) {
    u[0] = (unsigned char)(0xE0 | c >> 12); u[1] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
    u[2] = (unsigned char)(0x80 | (c & 0x3F)); n = 3;
  } else {
    u[0] = (unsigned char)(0xF0 | c >> 18); u[1] = (unsigned char)(0x80 | (c >> 12 & 0x3F));
    u[2] = (unsigned char)(0x80 | (c >> 6 & 0x3F)); u[3] = (unsigned char)(0x80 | (c & 0x3F));
    n = 4;
  }
  lc_sb_add(b, u, n);
}

static int hex_digits(parser *p, int n, uint32_t *out) {
  uint32_t v = 0;
  for (int i = 0; i < n; i++) {
    if (p->pos >= p->len) return perr(p, "an escape cut short");
    char c = p->s[p->pos++];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return perr(p, "a bad hexadecimal escape");
    v = v << 4 | (uint32_t)d;
  }
  *out = v;
  return 0;
}

/* A quoted string, its opening quote at pos. */
static py_node *parse_string(parser *p) {
  char q = p->s[p->pos++];
  lc_strbuf b = {0};
  lc_sb_add(&b, "", 0);                /* NUL-terminated even when empty */
  for (;;) {
    if (p->pos >= p->len || p->s[p->pos] == '\n') {
      perr(p, "a string without its closing quote");
      goto fail;
    }
    unsigned char c = (unsigned char)p->s[p->pos++];
    if (c == (unsigned char)q) break;
    if (c != '\\') {
      if (c >= 0x80 && p->latin1) put_utf8(&b, c);
      else lc_sb_add(&b, &c, 1);
      continue;
    }
    if (p->pos >= p->len) {
      perr(p, "a string without its closing quote");
      goto fail;
    }
    char e = p->s[p->pos++];
    uint32_t cp;
    switch (e) {
      case '\\': case '\'': case '"': lc_sb_add(&b, &e, 1); break;
      case 'n': lc_sb_add(&b, "\n", 1); break;
      case 't': lc_sb_add(&b, "\t", 1); break;
      case 'r': lc_sb_add(&b, "\r", 1); break;
      case 'x': if (hex_digits(p, 2, &cp)) goto fail; put_utf8(&b, cp); break;
      case 'u': if (hex_digits(p, 4, &cp)) goto fail; put_utf8(&b, cp); break;
      case 'U':
        if (hex_digits(p, 8, &cp)) goto fail;
        if (cp > 0x10FFFF) {
          perr(p, "an escape past Unicode's range");
          goto fail;
        }
        put_utf8(&b, cp);
        break;
      default: lc_sb_add(&b, "\\", 1); lc_sb_add(&b, &e, 1); break;   /* kept, as Python does */
    }
  }
  if (b.oom) {
    snprintf(p->err, LC_ERRLEN, "out of memory reading the header");
    goto fail;
  }
  if (strlen(b.p) != b.n) {            /* a name is a C string */
    perr(p, "a NUL character in a string");
    goto fail;
  }
  py_node *x = new_node(p, PY_STR);
  if (x == NULL) goto fail;
  x->str = b.p;
  x->num = (int64_t)b.n;
  return x;
fail:
  lc_sb_free(&b);
  return NULL;
}

static py_node *parse_value(parser *p);

/* Add item to the container x. */
static int add_item(parser *p, py_node *x, py_node *item) {
  if ((x->n & (x->n - 1)) == 0) {          /* 0, 1, 2, 4...: grow */
    size_t cap = x->n ? (size_t)x->n * 2 : 1;
    py_node **items = realloc(x->items, cap * sizeof *items);
    if (items == NULL) {
      py_free(item);
      snprintf(p->err, LC_ERRLEN, "out of memory reading the header");
      return -1;
    }
    x->items = items;
  }
  x->items[x->n++] = item;
  return 0;
}

/* (...), [...] or {...}: the opening bracket at pos. */
static py_node *parse_container(parser *p) {
  char open = p->s[p->pos++];
  char close = open == '(' ? ')' : open == '[' ? ']' : '}';
  py_node *x = new_node(p, open == '(' ? PY_TUPLE : open == '[' ? PY_LIST : PY_DICT);
  if (x == NULL) return NULL;
  bool comma = false;          /* the last item was followed by a comma */
  for (;;) {
    skip_ws(p);
    if (p->pos >= p->len) {
      perr(p, "the text ends inside a bracket");
      goto fail;
    }
    if (p->s[p->pos] == close) {
      p->pos++;
      break;
    }
    if (x->n > 0 && !comma) {
      perr(p, "a missing comma");
      goto fail;
    }
    py_node *item = parse_value(p);
    if (item == NULL || add_item(p, x, item)) goto fail;
    skip_ws(p);
    if (open == '{') {
      if (p->pos >= p->len || p->s[p->pos] != ':') {
        perr(p, "a dict entry without ':'");
        goto fail;
      }
      p->pos++;
      if ((item = parse_value(p)) == NULL || add_item(p, x, item)) goto fail;
      skip_ws(p);
    }
    comma = p->pos < p->len && p->s[p->pos] == ',';
    if (comma) p->pos++;
  }
  if (open == '(' && x->n == 1 && !comma) {   /* (v) is v, not a tuple */
    py_node *v = x->items[0];
    x->n = 0;
    py_free(x);
    return v;
  }
  return x;
fail:
  py_free(x);
  return NULL;
}

static py_node *parse_value(parser *p) {
  skip_ws(p);
  if (p->pos >= p->len) {
    perr(p, "the text ends where a value should be");
    return NULL;
  }
  char c = p->s[p->pos];
  if (c == '\'' || c == '"') return parse_string(p);
  if ((c == 'u' || c == 'U') && p->pos + 1 < p->len &&
      (p->s[p->pos + 1] == '\'' || p->s[p->pos + 1] == '"')) {
    p->pos++;                  /* Python 2's u'...' */
    return parse_string(p);
  }
  if (c == '(' || c == '[' || c == '{') {
    if (++p->depth > MAX_DEPTH) {
      snprintf(p->err, LC_ERRLEN, "the header nests more than %d deep", MAX_DEPTH);
      return NULL;
    }
    py_node *x = parse_container(p);
    p->depth--;
    return x;
  }
  if (c == '-' || (c >= '0' && c <= '9')) {
    bool neg = c == '-';
    if (neg) p->pos++;
    size_t start = p->pos;
    uint64_t v = 0;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
      unsigned d = (unsigned)(p->s[p->pos++] - '0');
      if (v > (UINT64_C(1) << 62) / 10) {
        perr(p, "an integer too large");
        return NULL;
      }
      v = v * 10 + d;
    }
    if (p->pos == start) {
      perr(p, "a '-' without digits");
      return NULL;
    }
    if (p->pos < p->len && (p->s[p->pos] == 'L' || p->s[p->pos] == 'l')) p->pos++;  /* Python 2 */
    py_node *x = new_node(p, PY_INT);
    if (x) x->num = neg ? -(int64_t)v : (int64_t)v;
    return x;
  }
  static const struct { const char *word; py_kind kind; int64_t num; } words[] = {
    {"True", PY_BOOL, 1}, {"False", PY_BOOL, 0}, {"None", PY_NONE, 0}};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    size_t n = strlen(words[i].word);
    if (p->len - p->pos >= n && memcmp(p->s + p->pos, words[i].word, n) == 0) {
      p->pos += n;
      py_node *x = new_node(p, words[i].kind);
      if (x) x->num = words[i].num;
      return x;
    }
  }
  perr(p, "an unexpected character");
  return NULL;
}

/* ---- byte fixes ----------------------------------------------------------- */

/* The byte order of a file's scalars is no part of a luacuda dtype: the
** fixes a type's elements need are gathered beside it as it is read.
** Past MAX_FIXES the list stops growing and says so (overflow), and the
** error is lc_npy_fixes's, as when they were gathered after the read. */
typedef struct fixes {
  lc_npy_fix *v;
  int n, cap;
  bool overflow;
} fixes;

static int add_fix(fixes *fx, lc_npy_fix f, char *err) {
  if (fx->n == MAX_FIXES) {
    fx->overflow = true;
    return 0;
  }
  if (fx->n == fx->cap) {
    int cap = fx->cap ? fx->cap * 2 : 8;
    lc_npy_fix *v = realloc(fx->v, (size_t)cap * sizeof *v);
    if (v == NULL) return ERR("out of memory reading the header");
    fx->v = v;
    fx->cap = cap;
  }
  fx->v[fx->n++] = f;
  return 0;
}

/* ---- the dtype ------------------------------------------------------------ */

/* A dtype as it is read: a luacuda dtype (one reference: a builtin, or a
** record with the file's offsets and itemsize) and the fixes its elements
** need (offsets from the element's start); or raw bytes (dt NULL: a void
** type, which only padding may be). */
typedef struct ptype {
  const lc_dtype *dt;
  int64_t size;
  fixes fx;
} ptype;

static void ptype_free(ptype *t) {
  lc_dtype_release(t->dt);
  free(t->fx.v);
  memset(t, 0, sizeof *t);
}

static bool is_void(const ptype *t) { return t->dt == NULL; }

/* A scalar's descr string, such as '<f4' or '|V4' (raw bytes: only
** padding takes them). */
static int scalar_type(const char *s, ptype *t, char *err) {
  const char *code = s;
  bool big = false;
  if (*code == '<' || *code == '>' || *code == '|' || *code == '=') big = *code++ == '>';
  memset(t, 0, sizeof *t);
  if (code[0] == 'V' && code[1] >= '1' && code[1] <= '9' && strlen(code) <= 12) {
    char *end;
    long long n = strtoll(code + 1, &end, 10);
    if (*end == '\0' && n <= MAX_ITEMSIZE) {
      t->size = n;
      return 0;
    }
  }
  for (int i = 0; i < LC_NTYPES; i++) {
    const char *np = lc_dtypes[i].numpy;
    if ((np && strcmp(code, np) == 0) || (i == LC_BOOL && strcmp(code, "?") == 0)) {
      t->dt = &lc_dtypes[i];
      t->size = lc_dtypes[i].size;
      bool swap = big && t->size > 1, boolean = i == LC_BOOL;
      if (!swap && !boolean) return 0;
      return add_fix(&t->fx, (lc_npy_fix){0, 1, t->size, (int)t->size, swap}, err);
    }
  }
  if (code[0] == 'O')
    return ERR("the array holds Python objects ('%.40s', stored as a pickle), which luacuda "
               "does not load", s);
  if (code[0] == 'c') return ERR("complex numbers ('%.40s') have no luacuda dtype", s);
  return ERR("dtype '%.40s' has no luacuda equivalent", s);
}

static int to_type(const py_node *x, int depth, ptype *t, char *err);

/* A shape: a tuple of integers or, for a sub-array, one integer. */
static int to_shape(const py_node *x, bool one_int, int *ndim, int64_t *shape,
                    const char *what, char *err) {
  if (one_int && x->kind == PY_INT) {
    if (x->num < 0) return ERR("%s has a negative size", what);
    *ndim = 1;
    shape[0] = x->num;
    return 0;
  }
  if (x->kind != PY_TUPLE) return ERR("%s must be a tuple, got %s", what, py_names[x->kind]);
  if (x->n > LC_MAXDIM)
    return ERR("%s has %d axes (luacuda arrays have at most %d)", what, x->n, LC_MAXDIM);
  for (int i = 0; i < x->n; i++) {
    if (x->items[i]->kind != PY_INT)
      return ERR("%s must hold integers, got %s", what, py_names[x->items[i]->kind]);
    if (x->items[i]->num < 0) return ERR("%s has a negative size", what);
    shape[i] = x->items[i]->num;
  }
  *ndim = x->n;
  return 0;
}

/* A structure as it is read: its fields (names borrowed from the parse
** tree, each dtype one reference) and their fixes. */
typedef struct sbuild {
  lc_field *fields;
  int n;
  fixes fx;
} sbuild;

static int sbuild_init(sbuild *s, int cap, char *err) {
  memset(s, 0, sizeof *s);
  if ((s->fields = calloc((size_t)cap, sizeof *s->fields)) == NULL)
    return ERR("out of memory reading the header");
  return 0;
}

static void sbuild_free(sbuild *s) {
  for (int i = 0; i < s->n; i++) lc_dtype_release(s->fields[i].dtype);
  free(s->fields);
  free(s->fx.v);
}

/* Field f's bytes: its type's size times its sub-array's count (set). */
static int field_bytes(lc_field *f, int64_t size, int64_t *bytes, char *err) {
  int64_t n = size;
  f->count = 1;
  for (int k = 0; k < f->ndim; k++) {
    if (f->shape[k] != 0 && n > MAX_ITEMSIZE / f->shape[k])
      return ERR("field '%s' is too large", f->name);
    n *= f->shape[k];
    f->count *= f->shape[k];
  }
  *bytes = n;
  return 0;
}

/* The checks every field of a structure passes, whichever form named it. */
static int check_field(const char *name, const ptype *t, int i, char *err) {
  if (name[0] == '\0') return ERR("field %d has no name", i + 1);
  if (is_void(t))
    return ERR("field '%s' is raw bytes (a void dtype), which luacuda cannot hold", name);
  return 0;
}

/* Add field f of type t (its reference taken: t is emptied) to s, its
** fixes at its offset, once per sub-array element. */
static int add_field(sbuild *s, lc_field f, ptype *t, char *err) {
  f.dtype = t->dt;
  t->dt = NULL;
  s->fields[s->n++] = f;
  int rc = 0;
  if (t->fx.overflow) s->fx.overflow = true;
  if (f.dtype->rec == NULL) {              /* a scalar: one run over the sub-array */
    if (t->fx.n) {
      lc_npy_fix x = t->fx.v[0];
      x.offset = f.offset;
      x.count = f.count;
      rc = add_fix(&s->fx, x, err);
    }
  } else {
    for (int64_t k = 0; rc == 0 && t->fx.n && k < f.count && !s->fx.overflow; k++)
      for (int i = 0; rc == 0 && i < t->fx.n; i++) {
        lc_npy_fix x = t->fx.v[i];
        x.offset += f.offset + k * f.dtype->size;
        rc = add_fix(&s->fx, x, err);
      }
  }
  ptype_free(t);
  return rc;
}

/* The record s describes, itemsize bytes, into t (s emptied). */
static int finish_struct(sbuild *s, int64_t itemsize, ptype *t, char *err) {
  lc_record *r = lc_record_new(s->fields, s->n, false, itemsize, 1, err);
  if (r == NULL) {
    sbuild_free(s);
    return ERR("out of memory reading the header");
  }
  for (int i = 0; i < s->n; i++) lc_dtype_release(s->fields[i].dtype);   /* r holds them */
  free(s->fields);
  *t = (ptype){.dt = &r->dt, .size = itemsize, .fx = s->fx};
  return 0;
}

/* The list form: [(name, descr [, shape]), ...], fields one after the
** other, padding as fields named '' of a void type. */
static int struct_from_list(const py_node *x, int depth, ptype *out, char *err) {
  if (x->n > MAX_FIELDS * 2)
    return ERR("the structured dtype has more than %d fields", MAX_FIELDS);
  sbuild s;
  if (sbuild_init(&s, x->n ? x->n : 1, err)) return -1;
  int64_t off = 0;
  for (int i = 0; i < x->n; i++) {
    const py_node *e = x->items[i];
    if (e->kind != PY_TUPLE || e->n < 2 || e->n > 3) {
      lc_errf(err, "field %d of the structured dtype must be a tuple (name, "
              "descr [, shape]), got %s", i + 1, py_names[e->kind]);
      goto fail;
    }
    if (e->items[0]->kind == PY_TUPLE) {
      lc_errf(err, "field %d has a title (a (title, name) pair), which luacuda "
              "records do not have", i + 1);
      goto fail;
    }
    if (e->items[0]->kind != PY_STR) {
      lc_errf(err, "field %d: the name must be a string, got %s", i + 1,
              py_names[e->items[0]->kind]);
      goto fail;
    }
    lc_field f = {.name = e->items[0]->str};         /* borrowed */
    ptype t;
    if (e->n == 3 && to_shape(e->items[2], true, &f.ndim, f.shape, "a field's shape", err))
      goto fail;
    if (to_type(e->items[1], depth + 1, &t, err)) goto fail;
    int64_t bytes;
    if (field_bytes(&f, t.size, &bytes, err)) {
      ptype_free(&t);
      goto fail;
    }
    bool pad = f.name[0] == '\0' && is_void(&t);
    if (!pad && check_field(f.name, &t, s.n, err)) {
      ptype_free(&t);
      goto fail;
    }
    f.offset = off;
    off += bytes;
    if (off > MAX_ITEMSIZE) {
      ptype_free(&t);
      lc_errf(err, "the structured dtype is too large");
      goto fail;
    }
    if (pad) {
      ptype_free(&t);
      continue;
    }
    if (add_field(&s, f, &t, err)) goto fail;
  }
  if (s.n == 0) {
    lc_errf(err, "the structured dtype has no fields");
    goto fail;
  }
  return finish_struct(&s, off, out, err);
fail:
  sbuild_free(&s);
  return -1;
}

/* The dict value of key in x, or NULL. */
static const py_node *dict_get(const py_node *x, const char *key) {
  for (int i = 0; i + 1 < x->n; i += 2)
    if (x->items[i]->kind == PY_STR && strcmp(x->items[i]->str, key) == 0) return x->items[i + 1];
  return NULL;
}

/* The dict form: {'names': [...], 'formats': [...], 'offsets': [...],
** 'itemsize': n}; a format may be (descr, shape). */
static int struct_from_dict(const py_node *x, int depth, ptype *out, char *err) {
  static const char *const known[] = {"names", "formats", "offsets", "itemsize", "aligned",
                                      "titles", NULL};
  for (int i = 0; i + 1 < x->n; i += 2) {
    const py_node *k = x->items[i];
    int j = 0;
    while (k->kind == PY_STR && known[j] && strcmp(k->str, known[j]) != 0) j++;
    if (k->kind != PY_STR || known[j] == NULL)
      return ERR("the structured dtype's dict has an unknown key%s%.60s%s",
                 k->kind == PY_STR ? " '" : "", k->kind == PY_STR ? k->str : "",
                 k->kind == PY_STR ? "'" : "");
  }
  const py_node *names = dict_get(x, "names"), *formats = dict_get(x, "formats");
  const py_node *offsets = dict_get(x, "offsets"), *itemsize = dict_get(x, "itemsize");
  const py_node *titles = dict_get(x, "titles");
  if (names == NULL || formats == NULL || names->kind != PY_LIST || formats->kind != PY_LIST ||
      names->n != formats->n)
    return ERR("the structured dtype's dict needs lists 'names' and 'formats' of the same "
               "length");
  if (offsets && (offsets->kind != PY_LIST || offsets->n != names->n))
    return ERR("the structured dtype's 'offsets' must be a list with an offset for each name");
  if (itemsize && (itemsize->kind != PY_INT || itemsize->num < 0))
    return ERR("the structured dtype's 'itemsize' must be an integer");
  if (titles && titles->kind != PY_NONE) {
    bool none = titles->kind == PY_LIST;
    for (int i = 0; none && i < titles->n; i++) none = titles->items[i]->kind == PY_NONE;
    if (!none) return ERR("the structured dtype has titles, which luacuda records do not have");
  }
  if (names->n == 0 || names->n > MAX_FIELDS)
    return ERR("the structured dtype has %s fields", names->n ? "too many" : "no");
  sbuild s;
  if (sbuild_init(&s, names->n, err)) return -1;
  int64_t end = 0;
  for (int i = 0; i < names->n; i++) {
    const py_node *nm = names->items[i], *fm = formats->items[i];
    if (nm->kind != PY_STR) {
      lc_errf(err, "name %d of the structured dtype must be a string", i + 1);
      goto fail;
    }
    lc_field f = {.name = nm->str};                  /* borrowed */
    const py_node *descr = fm;
    if (fm->kind == PY_TUPLE) {            /* (descr, shape) */
      if (fm->n != 2) {
        lc_errf(err, "format %d must be a descr or (descr, shape)", i + 1);
        goto fail;
      }
      descr = fm->items[0];
      if (to_shape(fm->items[1], true, &f.ndim, f.shape, "a field's shape", err)) goto fail;
    }
    ptype t;
    if (to_type(descr, depth + 1, &t, err)) goto fail;
    int64_t bytes;
    if (check_field(f.name, &t, i, err) || field_bytes(&f, t.size, &bytes, err)) {
      ptype_free(&t);
      goto fail;
    }
    if (offsets) {
      const py_node *o = offsets->items[i];
      if (o->kind != PY_INT || o->num < 0 || o->num > MAX_ITEMSIZE) {
        ptype_free(&t);
        lc_errf(err, "offset %d of the structured dtype must be a non-negative "
                "integer", i + 1);
        goto fail;
      }
      f.offset = o->num;
    } else {
      f.offset = end;
    }
    if (f.offset + bytes > end) end = f.offset + bytes;
    if (end > MAX_ITEMSIZE) {
      ptype_free(&t);
      lc_errf(err, "the structured dtype is too large");
      goto fail;
    }
    if (add_field(&s, f, &t, err)) goto fail;
  }
  if (itemsize && itemsize->num < end) {
    lc_errf(err, "the structured dtype's itemsize %lld is smaller than its "
            "fields (%lld bytes)", (long long)itemsize->num, (long long)end);
    goto fail;
  }
  return finish_struct(&s, itemsize ? itemsize->num : end, out, err);
fail:
  sbuild_free(&s);
  return -1;
}

static int to_type(const py_node *x, int depth, ptype *t, char *err) {
  memset(t, 0, sizeof *t);
  if (depth > MAX_DEPTH) return ERR("the dtype nests more than %d deep", MAX_DEPTH);
  switch (x->kind) {
    case PY_STR: return scalar_type(x->str, t, err);
    case PY_LIST: return struct_from_list(x, depth, t, err);
    case PY_DICT: return struct_from_dict(x, depth, t, err);
    default:
      return ERR("a descr must be a string, a list or a dict, got %s", py_names[x->kind]);
  }
}

/* ---- the header ----------------------------------------------------------- */

void lc_npy_header_free(lc_npy_header *h) {
  lc_dtype_release(h->dtype);
  h->dtype = NULL;
  free(h->fixes);
  h->fixes = NULL;
  h->nfixes = 0;
}

static int interpret(const py_node *d, lc_npy_header *h, char *err) {
  if (d->kind != PY_DICT) return ERR("the header is %s, not a dict", py_names[d->kind]);
  static const char *const keys[] = {"descr", "fortran_order", "shape"};
  const py_node *val[3] = {NULL, NULL, NULL};
  for (int i = 0; i + 1 < d->n; i += 2) {
    const py_node *k = d->items[i];
    int j = 0;
    while (k->kind == PY_STR && j < 3 && strcmp(k->str, keys[j]) != 0) j++;
    if (k->kind != PY_STR || j == 3)
      return ERR("the header has an unexpected key%s%.60s%s (it holds 'descr', "
                 "'fortran_order' and 'shape')", k->kind == PY_STR ? " '" : "",
                 k->kind == PY_STR ? k->str : "", k->kind == PY_STR ? "'" : "");
    if (val[j]) return ERR("the header has the key '%s' twice", keys[j]);
    val[j] = d->items[i + 1];
  }
  for (int j = 0; j < 3; j++)
    if (val[j] == NULL) return ERR("the header lacks the key '%s'", keys[j]);
  if (val[1]->kind != PY_BOOL)
    return ERR("'fortran_order' must be True or False, got %s", py_names[val[1]->kind]);
  h->fortran_order = val[1]->num != 0;
  if (to_shape(val[2], false, &h->ndim, h->shape, "the shape", err)) return -1;
  ptype t;
  if (to_type(val[0], 0, &t, err)) return -1;
  if (is_void(&t)) {
    ptype_free(&t);
    return ERR("a raw void dtype ('%.40s') has no luacuda equivalent",
               val[0]->kind == PY_STR ? val[0]->str : "V");
  }
  /* the count checked as every shape's is (a zero-length axis does not
  ** hide the others), and the bytes within MAX_NBYTES */
  h->dtype = t.dt;
  h->fixes = t.fx.v;
  h->nfixes = t.fx.n;
  h->too_many_fixes = t.fx.overflow;
  int64_t count, isz = h->dtype->size ? h->dtype->size : 1;
  char why[LC_ERRLEN];
  if (lc_shape_count(h->ndim, h->shape, isz, &count, why) || count > MAX_NBYTES / isz) {
    lc_npy_header_free(h);
    return ERR("the array is too large");
  }
  h->count = count;
  h->nbytes = count * h->dtype->size;
  return 0;
}

int lc_npy_parse_header(const char *text, size_t len, int major, int minor,
                        lc_npy_header *h, char *err) {
  memset(h, 0, sizeof *h);
  h->major = major;
  h->minor = minor;
  parser p = {.s = text, .len = len, .latin1 = major < 3, .err = err};
  py_node *d = parse_value(&p);
  if (d == NULL) return -1;
  skip_ws(&p);
  int rc = p.pos < p.len ? perr(&p, "text after the dict") : interpret(d, h, err);
  py_free(d);
  return rc;
}

/* ---- fixing bytes after a read -------------------------------------------- */

int lc_npy_fixes(const lc_npy_header *h, const lc_npy_fix **fixes, int *nfixes, char *err) {
  if (h->too_many_fixes)
    return ERR("the structured dtype needs more than %d byte fixes (big-endian fields)",
               MAX_FIXES);
  *fixes = h->fixes;
  *nfixes = h->nfixes;
  return 0;
}

static void swap_bytes(unsigned char *p, int size) {
  for (int i = 0, j = size - 1; i < j; i++, j--) {
    unsigned char c = p[i];
    p[i] = p[j];
    p[j] = c;
  }
}

void lc_npy_apply_fixes(void *data, int64_t count, int64_t itemsize,
                        const lc_npy_fix *fixes, int nfixes) {
  unsigned char *base = data;
  for (int64_t i = 0; i < count; i++, base += itemsize)
    for (int k = 0; k < nfixes; k++) {
      const lc_npy_fix *f = &fixes[k];
      unsigned char *p = base + f->offset;
      for (int64_t j = 0; j < f->count; j++, p += f->stride) {
        if (f->swap) swap_bytes(p, f->size);
        else *p = *p != 0;
      }
    }
}

/* ---- writing -------------------------------------------------------------- */

/* A Python string literal of s; non-ASCII bytes (UTF-8) pass through. */
static void put_pystr(lc_strbuf *b, const char *s, bool *non_ascii) {
  lc_sb_add(b, "'", 1);
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '\\' || *c == '\'') {
      lc_sb_add(b, "\\", 1);
      lc_sb_add(b, c, 1);
    } else if (*c < 0x20 || *c == 0x7F) {
      lc_sb_fmt(b, "\\x%02x", *c);
    } else {
      if (*c >= 0x80) *non_ascii = true;
      lc_sb_add(b, c, 1);
    }
  }
  lc_sb_add(b, "'", 1);
}

static void put_shape(lc_strbuf *b, int ndim, const int64_t *shape) {
  lc_sb_add(b, "(", 1);
  for (int i = 0; i < ndim; i++) lc_sb_fmt(b, i ? ", %lld" : "%lld", (long long)shape[i]);
  if (ndim == 1) lc_sb_add(b, ",", 1);
  lc_sb_add(b, ")", 1);
}

static int put_descr(lc_strbuf *b, const lc_dtype *dt, int depth, bool *non_ascii,
                     char *err) {
  if (depth > MAX_DEPTH) return ERR("the dtype nests more than %d deep", MAX_DEPTH);
  if (dt->rec == NULL) {
    if (dt->numpy == NULL)
      return ERR("dtype %s has no NumPy type code (a:astype('float32') keeps its values)",
                 dt->name);
    lc_sb_fmt(b, "'%c%s'", dt->size == 1 ? '|' : '<', dt->numpy);
    return 0;
  }
  const lc_record *r = dt->rec;
  if (r->nfields == 0) return ERR("a structured dtype with no fields");
  lc_sb_add(b, "[", 1);
  int64_t pos = 0;
  for (int i = 0; i < r->nfields; i++) {
    const lc_field *f = &r->fields[i];
    if (f->offset < pos) return ERR("field '%s' overlaps the one before it", f->name);
    if (i) lc_sb_add(b, ", ", 2);
    if (f->offset > pos) lc_sb_fmt(b, "('', '|V%lld'), ", (long long)(f->offset - pos));
    lc_sb_add(b, "(", 1);
    put_pystr(b, f->name, non_ascii);
    lc_sb_add(b, ", ", 2);
    if (put_descr(b, f->dtype, depth + 1, non_ascii, err)) return -1;
    if (f->ndim) {
      lc_sb_add(b, ", ", 2);
      put_shape(b, f->ndim, f->shape);
    }
    lc_sb_add(b, ")", 1);
    pos = f->offset + f->count * f->dtype->size;
  }
  if (dt->size < pos) return ERR("the fields need %lld bytes, the itemsize is %lld",
                                 (long long)pos, (long long)dt->size);
  if (dt->size > pos) lc_sb_fmt(b, ", ('', '|V%lld')", (long long)(dt->size - pos));
  lc_sb_add(b, "]", 1);
  return 0;
}

int lc_npy_build_header(lc_strbuf *out, const lc_dtype *dt, int ndim,
                        const int64_t *shape, bool fortran_order, char *err) {
  lc_strbuf h = {0};
  bool non_ascii = false;
  lc_sb_str(&h, "{'descr': ");
  if (put_descr(&h, dt, 0, &non_ascii, err)) {
    lc_sb_free(&h);
    return -1;
  }
  lc_sb_str(&h, fortran_order ? ", 'fortran_order': True, 'shape': "
                              : ", 'fortran_order': False, 'shape': ");
  put_shape(&h, ndim, shape);
  lc_sb_str(&h, ", }");
  if (h.oom) {
    lc_sb_free(&h);
    return ERR("out of memory building the header");
  }
  /* NumPy's rule: the text, spaces, then a newline, so that the data starts
  ** at a multiple of 64 bytes */
  size_t hlen = h.n + 1;
  int major = non_ascii ? 3 : 1;
  size_t prefix = 10, pad = 64 - (prefix + hlen) % 64;
  if (major == 1 && hlen + pad > 0xFFFF) major = 2;
  if (major > 1) {
    prefix = 12;
    pad = 64 - (prefix + hlen) % 64;
  }
  if (hlen + pad > 0xFFFFFFFFu) {
    lc_sb_free(&h);
    return ERR("the header is too large");
  }
  size_t total = hlen + pad;
  unsigned char pre[12];
  memcpy(pre, MAGIC, sizeof MAGIC);
  pre[6] = (unsigned char)major;
  pre[7] = 0;
  for (size_t i = 0; i < prefix - 8; i++) pre[8 + i] = (unsigned char)(total >> (8 * i));
  lc_sb_add(out, pre, prefix);
  lc_sb_add(out, h.p, h.n);
  if (lc_sb_room(out, pad + 1)) {
    memset(out->p + out->n, ' ', pad);
    out->n += pad;
    out->p[out->n++] = '\n';
    out->p[out->n] = '\0';
  }
  lc_sb_free(&h);
  if (out->oom) return ERR("out of memory building the header");
  return 0;
}
