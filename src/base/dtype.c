/*
** dtype: the table of element types, built from LC_DTYPE_LIST; records
** (counting, equality, layout, their description); and the raw loads and
** stores of elements (the IEEE half conversions among them). Knows no
** Lua: the rules between Lua values and elements are element.c's, the
** Lua face of records record.c's.
**
** Record layout: each field at the next multiple of its alignment (a
** record's alignment is its largest field's), the size a multiple of the
** alignment; a packed record has neither padding nor alignment. Records
** are equal when their fields, offsets, size and alignment are, whoever
** made them.
*/
#include "dtype.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"     /* LC_ERRLEN */

const lc_dtype lc_dtypes[LC_NTYPES] = {
#define LC_DTYPE_ROW(code, name, size, kind, numpy, knames, member, repr, dl, uctype, mant, exp) \
  {LC_##code, name, size, size, kind, NULL, numpy, knames, member, dl, uctype, mant, exp},
  LC_DTYPE_LIST(LC_DTYPE_ROW)
#undef LC_DTYPE_ROW
};

/* What the loads and stores below take for granted of every row, checked
** when a row is added rather than met as a wrong value later: bool and
** the integers are the C types of their size (1, 2, 4 or 8 bytes); a
** float's sign, exponent and significand bits fill its size exactly, and
** it is C's float, C's double, or a format no wider in either part than a
** double (narrow_from_double's conditions). */
#define IS_SINGLE(mant, exp) ((mant) == FLT_MANT_DIG && (exp) == 8)
#define IS_DOUBLE(mant, exp) ((mant) == DBL_MANT_DIG && (exp) == 11)
_Static_assert(FLT_RADIX == 2 && FLT_MANT_DIG == 24 && DBL_MANT_DIG == 53,
               "float and double are IEEE binary32 and binary64");
#define LC_DTYPE_CHECK(code, name, size, kind, numpy, knames, member, repr, dl, uctype, mant, exp) \
  _Static_assert((kind) == 'f'                                                           \
                 ? (mant) + (exp) == 8 * (size) &&                                       \
                   (IS_SINGLE(mant, exp) || IS_DOUBLE(mant, exp) ||                      \
                    ((mant) >= 2 && (mant) < 53 && (exp) >= 2 && (exp) <= 11))           \
                 : ((kind) == 'b' || (kind) == 'i' || (kind) == 'u') &&                  \
                   ((size) == 1 || (size) == 2 || (size) == 4 || (size) == 8),           \
                 "dtype " name ": a size, kind or float format the conversions lack");
LC_DTYPE_LIST(LC_DTYPE_CHECK)
#undef LC_DTYPE_CHECK

/* bool is also NumPy's '?' */
static const struct { const char *alias; lc_typecode code; } aliases[] = {{"?", LC_BOOL}};

const lc_dtype *lc_dtype_lookup(const char *name) {
  for (int i = 0; i < LC_NTYPES; i++)
    if (strcmp(name, lc_dtypes[i].name) == 0 ||
        (lc_dtypes[i].numpy && strcmp(name, lc_dtypes[i].numpy) == 0))
      return &lc_dtypes[i];
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp(name, aliases[i].alias) == 0) return &lc_dtypes[aliases[i].code];
  return NULL;
}

/* ---- records ------------------------------------------------------------- */

void lc_dtype_retain(const lc_dtype *dt) {
  if (dt && dt->rec) atomic_fetch_add(&((lc_record *)dt->rec)->refs, 1);
}

void lc_dtype_release(const lc_dtype *dt) {
  if (dt == NULL || dt->rec == NULL) return;
  lc_record *r = (lc_record *)dt->rec;
  if (atomic_fetch_sub(&r->refs, 1) != 1) return;
  for (int i = 0; i < r->nfields; i++) {
    lc_dtype_release(r->fields[i].dtype);
    free(r->fields[i].name);
  }
  free((char *)r->dt.name);
  free(r);
}

bool lc_dtype_equal(const lc_dtype *a, const lc_dtype *b) {
  if (a == b) return true;
  if (a->rec == NULL || b->rec == NULL) return false;
  const lc_record *x = a->rec, *y = b->rec;
  if (x->dt.size != y->dt.size || x->dt.align != y->dt.align || x->nfields != y->nfields)
    return false;
  for (int i = 0; i < x->nfields; i++) {
    const lc_field *f = &x->fields[i], *g = &y->fields[i];
    if (strcmp(f->name, g->name) != 0 || f->offset != g->offset || f->ndim != g->ndim ||
        memcmp(f->shape, g->shape, sizeof f->shape[0] * (size_t)f->ndim) != 0 ||
        !lc_dtype_equal(f->dtype, g->dtype))
      return false;
  }
  return true;
}

const lc_field *lc_record_field(const lc_record *r, const char *name) {
  for (int i = 0; i < r->nfields; i++)
    if (strcmp(r->fields[i].name, name) == 0) return &r->fields[i];
  return NULL;
}

#define RECORD_MAXBYTES (INT64_C(1) << 40)

int lc_record_place(lc_field *f, bool packed, int64_t *end, int64_t *align, char *err) {
  int64_t fa = packed ? 1 : f->dtype->align;
  int64_t off = (*end + fa - 1) / fa * fa;
  f->offset = off;
  if (f->count > RECORD_MAXBYTES / f->dtype->size) {
    return lc_fail(err, -1, "field '%s': the record is too large", f->name);
  }
  off += f->count * f->dtype->size;
  if (fa > *align) *align = fa;
  if (off > RECORD_MAXBYTES) {
    return lc_fail(err, -1, "the record is too large");
  }
  *end = off;
  return 0;
}

/* Append s to the description at out (NULL: only count); the length. */
static size_t put(char *out, size_t n, const char *s) {
  size_t k = strlen(s);
  if (out) memcpy(out + n, s, k);
  return n + k;
}

/* The record's name, "record{x: float32, v: float64[3], m: int32{2, 2}}",
** written to out (NULL: only counted, to size out); its length. */
static size_t describe(char *out, const lc_field *fields, int n, bool packed) {
  size_t len = put(out, 0, packed ? "packed record{" : "record{");
  for (int i = 0; i < n; i++) {
    const lc_field *f = &fields[i];
    char dims[LC_MAXDIM * 24 + 4] = "";
    if (f->ndim == 1) snprintf(dims, sizeof dims, "[%lld]", (long long)f->shape[0]);
    for (int k = 0; f->ndim > 1 && k < f->ndim; k++) {   /* as lc_shape_format writes it */
      size_t d = strlen(dims);
      snprintf(dims + d, sizeof dims - d, "%s%lld%s", k ? ", " : "{", (long long)f->shape[k],
               k + 1 == f->ndim ? "}" : "");
    }
    len = put(out, len, i ? ", " : "");
    len = put(out, len, f->name);
    len = put(out, len, ": ");
    len = put(out, len, f->dtype->name);
    len = put(out, len, dims);
  }
  len = put(out, len, "}");
  if (out) out[len] = '\0';
  return len;
}

lc_record *lc_record_new(const lc_field *fields, int n, bool packed, int64_t end,
                         int64_t align, char *err) {
  lc_record *r = calloc(1, sizeof *r + (size_t)n * sizeof r->fields[0]);
  char *desc = r ? malloc(describe(NULL, fields, n, packed) + 1) : NULL;
  bool ok = desc != NULL;
  for (int i = 0; ok && i < n; i++) {
    r->fields[i] = fields[i];
    r->fields[i].name = strdup(fields[i].name);
    ok = r->fields[i].name != NULL;
  }
  if (!ok) {
    for (int i = 0; r && i < n; i++) free(r->fields[i].name);
    free(desc);
    free(r);
    lc_errf(err, "out of memory");
    return NULL;
  }
  describe(desc, fields, n, packed);
  r->dt = (lc_dtype){.code = LC_RECORD, .name = desc, .size = (end + align - 1) / align * align,
                     .align = align, .kind = 'V', .rec = r};
  atomic_init(&r->refs, 1);
  r->packed = packed;
  r->nfields = n;
  r->depth = 1;
  for (int i = 0; i < n; i++) {
    lc_dtype_retain(r->fields[i].dtype);
    const lc_record *inner = r->fields[i].dtype->rec;
    if (inner && inner->depth >= r->depth) r->depth = inner->depth + 1;
  }
  return r;
}

/* ---- floats ------------------------------------------------------------ */

/* Round the significand bits of a double down by shift bits, nearest even. */
static uint64_t round_shift(uint64_t m, int shift) {
  if (shift >= 64) return 0;
  uint64_t q = m >> shift, rem = m & ((UINT64_C(1) << shift) - 1);
  uint64_t halfway = UINT64_C(1) << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1))) q++;
  return q;
}

/* A double as the bits of a binary float with mant significand bits (the
** implicit one included) and ebits exponent bits. */
static uint64_t narrow_from_double(double d, int mant, int ebits) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  int frac = mant - 1, emax = (1 << ebits) - 1, bias = (1 << (ebits - 1)) - 1;
  uint64_t sign = (b >> 63) << (frac + ebits), inf = (uint64_t)emax << frac;
  int exp = (int)((b >> 52) & 0x7ff);
  uint64_t man = b & ((UINT64_C(1) << 52) - 1);
  if (exp == 0x7ff) return sign | inf | (man ? UINT64_C(1) << (frac - 1) : 0);   /* inf, nan */
  int e = exp - 1023 + bias;
  if (e >= emax) return sign | inf;                              /* overflow */
  if (e >= 1)  /* normal: a carry out of the significand bumps the exponent */
    return sign | (((uint64_t)e << frac) + round_shift(man, 52 - frac));
  if (exp == 0) return sign;                     /* double subnormal: tiny */
  return sign | round_shift(man | (UINT64_C(1) << 52), 53 - frac - e);
}

static double narrow_to_double(uint64_t h, int mant, int ebits) {
  int frac = mant - 1, emax = (1 << ebits) - 1, bias = (1 << (ebits - 1)) - 1;
  int exp = (int)((h >> frac) & (uint64_t)emax);
  uint64_t man = h & ((UINT64_C(1) << frac) - 1);
  double v;
  if (exp == 0) v = ldexp((double)man, 1 - bias - frac);
  else if (exp == emax) v = man ? NAN : INFINITY;
  else v = ldexp((double)(man + (UINT64_C(1) << frac)), exp - bias - frac);
  return (h >> (frac + ebits)) & 1 ? -v : v;
}

/* C's own float and double by their format, not their size: a 4-byte
** float of another format is converted by its bits. */
double lc_dtype_load_float(const lc_dtype *dt, const void *p) {
  if (IS_DOUBLE(dt->mant_bits, dt->exp_bits)) { double d; memcpy(&d, p, 8); return d; }
  if (IS_SINGLE(dt->mant_bits, dt->exp_bits)) { float f; memcpy(&f, p, 4); return f; }
  uint64_t h = 0;
  memcpy(&h, p, (size_t)dt->size);               /* the low bytes: little-endian */
  return narrow_to_double(h, dt->mant_bits, dt->exp_bits);
}

void lc_dtype_store_float(const lc_dtype *dt, void *p, double v) {
  if (IS_DOUBLE(dt->mant_bits, dt->exp_bits)) { memcpy(p, &v, 8); return; }
  if (IS_SINGLE(dt->mant_bits, dt->exp_bits)) { float f = (float)v; memcpy(p, &f, 4); return; }
  uint64_t h = narrow_from_double(v, dt->mant_bits, dt->exp_bits);
  memcpy(p, &h, (size_t)dt->size);
}

bool lc_dtype_is_narrow_float(const lc_dtype *dt) {
  return dt->kind == 'f' && !IS_SINGLE(dt->mant_bits, dt->exp_bits) &&
         !IS_DOUBLE(dt->mant_bits, dt->exp_bits);
}

int lc_dtype_min_exp(const lc_dtype *dt) {
  return 2 - (1 << (dt->exp_bits - 1)) - (dt->mant_bits - 1);
}

/* ---- integers ------------------------------------------------------------ */

/* Integers are stored in the host's order, as the C types of their size. */
void lc_dtype_store_int(const lc_dtype *dt, void *p, int64_t v) {
  if (dt->kind == 'f') {
    lc_dtype_store_float(dt, p, (double)v);
    return;
  }
  switch (dt->size) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); return; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); return; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); return; }
    case 8: memcpy(p, &v, 8); return;
  }   /* no row has another size (LC_DTYPE_CHECK) */
}

uint64_t lc_dtype_load_uint(const lc_dtype *dt, const void *p) {
  switch (dt->size) {
    case 1: { uint8_t x; memcpy(&x, p, 1); return x; }
    case 2: { uint16_t x; memcpy(&x, p, 2); return x; }
    case 4: { uint32_t x; memcpy(&x, p, 4); return x; }
    case 8: { uint64_t x; memcpy(&x, p, 8); return x; }
  }
  return 0;   /* no row has another size (LC_DTYPE_CHECK) */
}

int64_t lc_dtype_load_int(const lc_dtype *dt, const void *p) {
  switch (dt->size) {
    case 1: { int8_t x; memcpy(&x, p, 1); return x; }
    case 2: { int16_t x; memcpy(&x, p, 2); return x; }
    case 4: { int32_t x; memcpy(&x, p, 4); return x; }
    case 8: { int64_t x; memcpy(&x, p, 8); return x; }
  }
  return 0;   /* no row has another size (LC_DTYPE_CHECK) */
}
