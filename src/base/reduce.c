/*
** reduce: NumPy's dtype rules for reductions and scans, their plan, and
** their computation on host-addressable memory. The loops are written once
** per domain (the accumulator's C type) by macros: an input element is
** converted into the domain as it is gathered (a row of up to
** LC_REDUCE_LEAF elements at a time, from any stride), and the result is
** converted into the output's dtype when stored.
*/
#include "reduce.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"

const char *const lc_reduce_names[LC_RED_NOPS] = {
  "sum", "prod", "min", "max", "mean", "argmin", "argmax", "any", "all", "cumsum", "cumprod",
};

/* ---- dtypes ------------------------------------------------------------------ */

int lc_reduce_dtypes(lc_reduce_op op, const lc_dtype *in, const lc_dtype *asked,
                     const lc_dtype **acc, const lc_dtype **out, char *err) {
  const char *name = lc_reduce_names[op];
  if (in->rec) {
    return lc_fail(err, -1, "%s of a record dtype (%s): a record has no %s", name, in->name,
                   name);
  }
  if (asked && !lc_reduce_takes_dtype(op)) {
    return lc_fail(err, -1, "%s takes no dtype= (its result's dtype is %s; NumPy's %s has no "
                   "dtype either)", name,
                   op == LC_RED_ARGMIN || op == LC_RED_ARGMAX ? "int64" :
                   op == LC_RED_ANY || op == LC_RED_ALL ? "bool" : "the array's", name);
  }
  if (asked && asked->rec) {
    return lc_fail(err, -1, "dtype= must be a builtin dtype, not the record %s", asked->name);
  }
  switch (op) {
    case LC_RED_SUM: case LC_RED_PROD: case LC_RED_CUMSUM: case LC_RED_CUMPROD:
      if (asked) *acc = asked;
      else if ((in->kind == 'b' || in->kind == 'i') && in->size < 8) *acc = &lc_dtypes[LC_INT64];
      else if (in->kind == 'u' && in->size < 8) *acc = &lc_dtypes[LC_UINT64];
      else *acc = in;
      *out = *acc;
      return 0;
    case LC_RED_MEAN:
      if (asked) *acc = asked;
      else if (in->kind != 'f') *acc = &lc_dtypes[LC_FLOAT64];
      else *acc = in;
      *out = *acc;
      return 0;
    case LC_RED_MIN: case LC_RED_MAX:
      *acc = *out = in;
      return 0;
    case LC_RED_ARGMIN: case LC_RED_ARGMAX:
      *acc = in;
      *out = &lc_dtypes[LC_INT64];
      return 0;
    default:   /* any, all */
      *acc = *out = &lc_dtypes[LC_BOOL];
      return 0;
  }
}

lc_reduce_domain lc_reduce_domain_of(lc_reduce_op op, const lc_dtype *in, const lc_dtype *acc) {
  switch (op) {
    case LC_RED_ANY: case LC_RED_ALL:
      return LC_DOM_BOOL;
    case LC_RED_MIN: case LC_RED_MAX: case LC_RED_ARGMIN: case LC_RED_ARGMAX:
      /* comparisons of the input's values, exact in these */
      return in->kind == 'f' ? (in->size == 8 ? LC_DOM_F64 : LC_DOM_F32)
             : in->kind == 'i' ? LC_DOM_I64 : LC_DOM_U64;
    default:
      return acc->kind == 'f' ? (acc->size == 8 ? LC_DOM_F64 : LC_DOM_F32)
             : acc->kind == 'b' ? LC_DOM_BOOL : LC_DOM_U64;
  }
}

lc_reduce_combine lc_reduce_combine_of(lc_reduce_op op) {
  switch (op) {
    case LC_RED_PROD: case LC_RED_CUMPROD: case LC_RED_ALL: return LC_COMB_MUL;
    case LC_RED_MIN: case LC_RED_ARGMIN: return LC_COMB_MIN;
    case LC_RED_MAX: case LC_RED_ARGMAX: return LC_COMB_MAX;
    default: return LC_COMB_ADD;
  }
}

/* ---- the plan ------------------------------------------------------------------ */

static bool order_free(lc_reduce_op op) {
  return !lc_reduce_is_scan(op) && op != LC_RED_ARGMIN && op != LC_RED_ARGMAX;
}

void lc_reduce_plan_make(const lc_reduce_call *c, lc_reduce_plan *p) {
  const lc_layout *il = &c->in_lay, *ol = &c->out_lay;
  bool scan = lc_reduce_is_scan(c->op);
  p->nkept = p->nred = 0;
  p->in0 = il->offset;
  p->out0 = ol->offset;
  p->nout = p->count = 1;
  for (int i = 0; i < il->ndim; i++) {
    int64_t n = il->shape[i];
    if (c->axes >> i & 1) {
      p->count *= n;
      if (n == 1) continue;
      p->rshape[p->nred] = n;
      p->rin[p->nred] = il->strides[i];
      p->rout[p->nred++] = scan ? ol->strides[i] : 0;
    } else {
      p->nout *= n;
      if (n == 1) continue;
      p->kshape[p->nkept] = n;
      p->kin[p->nkept] = il->strides[i];
      p->kout[p->nkept++] = ol->strides[i];
    }
  }
  if (order_free(c->op)) {
    /* any order will do: positive strides, the largest outermost */
    for (int i = 0; i < p->nred; i++) {
      int64_t n = p->rshape[i], s = p->rin[i];
      if (s < 0) {
        p->in0 += (n - 1) * s;
        s = -s;
      }
      int j = i;
      while (j > 0 && p->rin[j - 1] < s) {
        p->rshape[j] = p->rshape[j - 1];
        p->rin[j] = p->rin[j - 1];
        j--;
      }
      p->rshape[j] = n;
      p->rin[j] = s;
    }
  }
  /* merge an axis into the one before where both views lay them out one
  ** after the other (C order kept: the flat index and a scan's order too) */
  int64_t *red[2] = {p->rin, p->rout}, *kept[2] = {p->kin, p->kout};
  p->nred = lc_merge_axes(p->nred, p->rshape, 2, red);
  p->nkept = lc_merge_axes(p->nkept, p->kshape, 2, kept);
}

/* ---- conversions ------------------------------------------------------------ */

/* an element of a float format other than float16, bfloat16 (half.h's),
** float and double: bits r of dtype c (unused while there is none) */
__attribute__((unused)) static double narrow_load(uint64_t r, lc_typecode c) {
  unsigned char b[8];
  memcpy(b, &r, 8);
  /* the element's bytes are r's low ones (little-endian, as the hosts) */
  return lc_dtype_load_float(&lc_dtypes[c], b);
}

/* A float as an integer, with no undefined behaviour: truncated toward
** zero where it fits in 64 bits (int64 or uint64), else (NaN, infinity,
** out of range) the bits 0x8000000000000000, x86's "integer indefinite",
** which NumPy gives there too. Stored into a narrower integer, the low
** bits are kept. */
static uint64_t float_to_bits(double v) {
  if (v > -0x1p63 - 1.0 && v < 0x1p63) return (uint64_t)(int64_t)v;
  if (v >= 0x1p63 && v < 0x1p64) return (uint64_t)v;
  return UINT64_C(1) << 63;
}

static int64_t bits_to_int(uint64_t u) {
  int64_t i;
  memcpy(&i, &u, 8);
  return i;
}

/* The low size bytes of u at p (little-endian: the integer types' bytes). */
static void store_bits(char *p, int64_t size, uint64_t u) {
  switch (size) {
    case 1: { uint8_t x = (uint8_t)u; memcpy(p, &x, 1); return; }
    case 2: { uint16_t x = (uint16_t)u; memcpy(p, &x, 2); return; }
    case 4: { uint32_t x = (uint32_t)u; memcpy(p, &x, 4); return; }
    default: memcpy(p, &u, 8); return;
  }
}

/* u truncated to an integer dtype of size bytes and widened again, as a
** double (the accumulated value of an integer mean, in its dtype). */
static double int_value(uint64_t u, const lc_dtype *dt) {
  int bits = (int)dt->size * 8;
  if (bits < 64) {
    u &= (UINT64_C(1) << bits) - 1;
    if (dt->kind == 'i' && (u >> (bits - 1) & 1)) u |= ~((UINT64_C(1) << bits) - 1);
  }
  return dt->kind == 'i' ? (double)bits_to_int(u) : (double)u;
}

/* An element's raw value r (of dtype code c) of each kind as each domain:
** abi.h's LC_DTYPE_LIST says which kind a dtype's bits are (B bool, I
** signed, U unsigned, H float16, Z bfloat16, F float32 and float64, N any
** other float format, through dtype.c's conversion). NaN is true. */
#define TO_F32_B(r, c) ((float)((r) != 0))
#define TO_F32_I(r, c) ((float)(r))
#define TO_F32_U(r, c) ((float)(r))
#define TO_F32_H(r, c) lc_float16_to_float(r)
#define TO_F32_Z(r, c) lc_bfloat16_to_float(r)
#define TO_F32_F(r, c) ((float)(r))
#define TO_F32_N(r, c) ((float)narrow_load(r, c))
#define TO_F64_B(r, c) ((double)((r) != 0))
#define TO_F64_I(r, c) ((double)(r))
#define TO_F64_U(r, c) ((double)(r))
#define TO_F64_H(r, c) ((double)lc_float16_to_float(r))
#define TO_F64_Z(r, c) ((double)lc_bfloat16_to_float(r))
#define TO_F64_F(r, c) ((double)(r))
#define TO_F64_N(r, c) narrow_load(r, c)
#define TO_U64_B(r, c) ((uint64_t)((r) != 0))
#define TO_U64_I(r, c) ((uint64_t)(int64_t)(r))
#define TO_U64_U(r, c) ((uint64_t)(r))
#define TO_U64_H(r, c) float_to_bits(lc_float16_to_float(r))
#define TO_U64_Z(r, c) float_to_bits(lc_bfloat16_to_float(r))
#define TO_U64_F(r, c) float_to_bits((double)(r))
#define TO_U64_N(r, c) float_to_bits(narrow_load(r, c))
#define TO_I64_B(r, c) ((int64_t)((r) != 0))
#define TO_I64_I(r, c) ((int64_t)(r))
#define TO_I64_U(r, c) bits_to_int((uint64_t)(r))
#define TO_I64_H(r, c) bits_to_int(TO_U64_H(r, c))
#define TO_I64_Z(r, c) bits_to_int(TO_U64_Z(r, c))
#define TO_I64_F(r, c) bits_to_int(TO_U64_F(r, c))
#define TO_I64_N(r, c) bits_to_int(TO_U64_N(r, c))
#define TO_BOOL_B(r, c) ((r) != 0)
#define TO_BOOL_I(r, c) ((r) != 0)
#define TO_BOOL_U(r, c) ((r) != 0)
#define TO_BOOL_H(r, c) (((r) & 0x7fff) != 0)
#define TO_BOOL_Z(r, c) (((r) & 0x7fff) != 0)
#define TO_BOOL_F(r, c) ((r) != 0)
#define TO_BOOL_N(r, c) (narrow_load(r, c) != 0)

/* the loads of each row of LC_DTYPE_LIST into each domain D */
#define GATHER_ROW(D, code, name, size, kind, numpy, knames, member, repr, ...) \
  GATHER_CASE(code, LC_BITS_OF(repr, size), repr, D)
#define GATHER_CASE_F32(...) GATHER_ROW(F32, __VA_ARGS__)
#define GATHER_CASE_F64(...) GATHER_ROW(F64, __VA_ARGS__)
#define GATHER_CASE_U64(...) GATHER_ROW(U64, __VA_ARGS__)
#define GATHER_CASE_I64(...) GATHER_ROW(I64, __VA_ARGS__)
#define GATHER_CASE_BOOL(...) GATHER_ROW(BOOL, __VA_ARGS__)

#define GATHER_CASE(CODE, CT, K, D)                                                   \
  case LC_##CODE:                                                                     \
    for (int64_t i = 0; i < n; i++) {                                                 \
      CT r;                                                                           \
      memcpy(&r, p + i * st, sizeof r);                                               \
      dst[i] = TO_##D##_##K(r, LC_##CODE);                                            \
    }                                                                                 \
    break;

/* ---- one value into an output element ------------------------------------------ */

static void store_f64(char *p, lc_typecode t, double v) {
  const lc_dtype *dt = &lc_dtypes[t];
  switch (dt->kind) {
    case 'b': { uint8_t b = v != 0; memcpy(p, &b, 1); return; }
    case 'f':
      if (t == LC_FLOAT64) memcpy(p, &v, 8);
      else if (t == LC_FLOAT32) { float f = (float)v; memcpy(p, &f, 4); }
      else lc_dtype_store_float(dt, p, v);
      return;
    default: store_bits(p, dt->size, float_to_bits(v)); return;
  }
}

static void store_F64(char *p, lc_typecode t, double v) { store_f64(p, t, v); }
/* a float32 result stored as such; float16 and bfloat16 are rounded from
** it once (float to double is exact) */
static void store_F32(char *p, lc_typecode t, float v) { store_f64(p, t, (double)v); }

static void store_U64(char *p, lc_typecode t, uint64_t v) {
  const lc_dtype *dt = &lc_dtypes[t];
  if (dt->kind == 'f') lc_dtype_store_float(dt, p, (double)v);
  else if (dt->kind == 'b') { uint8_t b = v != 0; memcpy(p, &b, 1); }
  else store_bits(p, dt->size, v);
}

static void store_I64(char *p, lc_typecode t, int64_t v) {
  const lc_dtype *dt = &lc_dtypes[t];
  if (dt->kind == 'f') lc_dtype_store_float(dt, p, (double)v);
  else if (dt->kind == 'b') { uint8_t b = v != 0; memcpy(p, &b, 1); }
  else store_bits(p, dt->size, (uint64_t)v);
}

static void store_BOOL(char *p, lc_typecode t, unsigned char v) { store_U64(p, t, v != 0); }

/* ---- the loops, once per domain ------------------------------------------------ */

typedef struct ctx {
  const lc_reduce_plan *p;
  lc_typecode in;
  lc_reduce_combine comb;
  bool direct;          /* the input's elements are the domain's C type */
} ctx;

/* Visit the rows of the reduced axes in C order: each row is the last
** reduced axis (one element when none is reduced). idx holds the outer
** indices; false when every row was visited. */
static bool next_row(const lc_reduce_plan *p, int64_t *idx, int64_t *in, int64_t *out) {
  for (int d = p->nred - 2; d >= 0; d--) {
    if (++idx[d] < p->rshape[d]) {
      *in += p->rin[d];
      *out += p->rout[d];
      return true;
    }
    idx[d] = 0;
    *in -= (p->rshape[d] - 1) * p->rin[d];
    *out -= (p->rshape[d] - 1) * p->rout[d];
  }
  return false;
}

static void row_shape(const lc_reduce_plan *p, int64_t *n, int64_t *sin, int64_t *sout) {
  if (p->nred == 0) {
    *n = 1;
    *sin = *sout = 0;
  } else {
    *n = p->rshape[p->nred - 1];
    *sin = p->rin[p->nred - 1];
    *sout = p->rout[p->nred - 1];
  }
}

/* per domain: is v NaN, a + b and a * b (integers wrap: unsigned
** arithmetic; I64 only compares, and adds the same way) */
#define NAN_FLT(v) isnan(v)
#define NAN_INT(v) ((void)(v), false)
#define ADD_PLAIN(a, b) ((a) + (b))
#define MUL_PLAIN(a, b) ((a) * (b))
#define ADD_I64(a, b) bits_to_int((uint64_t)(a) + (uint64_t)(b))
#define MUL_I64(a, b) bits_to_int((uint64_t)(a) * (uint64_t)(b))

/* NaN wins min and max (NumPy's propagation) */
#define PICK_MIN(a, b, ISNAN) (ISNAN(a) ? (a) : ISNAN(b) ? (b) : (b) < (a) ? (b) : (a))
#define PICK_MAX(a, b, ISNAN) (ISNAN(a) ? (a) : ISNAN(b) ? (b) : (b) > (a) ? (b) : (a))

/* The arithmetic domains (F32, F64, U64, I64): sum and product by eight
** accumulators over a leaf, min and max by one pass. */
#define DEFINE_ARITH(D, T, ISNAN, ADD, MUL)                                            \
  static void gather_##D(T *dst, const char *p, int64_t n, int64_t st, lc_typecode t) { \
    switch (t) {                                                                       \
      LC_DTYPE_LIST(GATHER_CASE_##D)                                                  \
      default: break;                                                                  \
    }                                                                                  \
  }                                                                                    \
  static T comb_##D(lc_reduce_combine c, T a, T b) {                                   \
    switch (c) {                                                                       \
      case LC_COMB_ADD: return ADD(a, b);                                              \
      case LC_COMB_MUL: return MUL(a, b);                                              \
      case LC_COMB_MIN: return PICK_MIN(a, b, ISNAN);                                  \
      default: return PICK_MAX(a, b, ISNAN);                                           \
    }                                                                                  \
  }                                                                                    \
  static T leaf_##D(lc_reduce_combine c, const T *v, int64_t n) {                      \
    if (c == LC_COMB_ADD || c == LC_COMB_MUL) {                                        \
      bool add = c == LC_COMB_ADD;                                                     \
      T one = (T)(add ? 0 : 1), r[8];                                                  \
      if (n < 8) {          /* the tree of identities below is the identity */         \
        T s = one;                                                                     \
        if (add) for (int64_t i = 0; i < n; i++) s = ADD(s, v[i]);                     \
        else for (int64_t i = 0; i < n; i++) s = MUL(s, v[i]);                         \
        return s;                                                                      \
      }                                                                                \
      for (int j = 0; j < 8; j++) r[j] = one;                                          \
      int64_t i = 0;                                                                   \
      if (add)                                                                         \
        for (; i + 8 <= n; i += 8)                                                     \
          for (int j = 0; j < 8; j++) r[j] = ADD(r[j], v[i + j]);                      \
      else                                                                             \
        for (; i + 8 <= n; i += 8)                                                     \
          for (int j = 0; j < 8; j++) r[j] = MUL(r[j], v[i + j]);                      \
      /* (each operation written out, not comb_'s call per element) */                 \
      T s;                                                                             \
      if (add) {                                                                       \
        s = ADD(ADD(ADD(r[0], r[1]), ADD(r[2], r[3])),                                 \
                ADD(ADD(r[4], r[5]), ADD(r[6], r[7])));                                \
        for (; i < n; i++) s = ADD(s, v[i]);                                           \
      } else {                                                                         \
        s = MUL(MUL(MUL(r[0], r[1]), MUL(r[2], r[3])),                                 \
                MUL(MUL(r[4], r[5]), MUL(r[6], r[7])));                                \
        for (; i < n; i++) s = MUL(s, v[i]);                                           \
      }                                                                                \
      return s;                                                                        \
    }                                                                                  \
    T m = v[0];                                                                        \
    if (c == LC_COMB_MIN)                                                              \
      for (int64_t i = 1; i < n && !ISNAN(m); i++) m = PICK_MIN(m, v[i], ISNAN);       \
    else                                                                               \
      for (int64_t i = 1; i < n && !ISNAN(m); i++) m = PICK_MAX(m, v[i], ISNAN);       \
    return m;                                                                          \
  }                                                                                    \
  DEFINE_COMMON(D, T, ISNAN)

/* The bool domain: sum is or, product is and (and so min and max). */
static void gather_BOOL(unsigned char *dst, const char *p, int64_t n, int64_t st,
                        lc_typecode t) {
  switch (t) {
    LC_DTYPE_LIST(GATHER_CASE_BOOL)
    default: break;
  }
}

static unsigned char comb_BOOL(lc_reduce_combine c, unsigned char a, unsigned char b) {
  return c == LC_COMB_ADD || c == LC_COMB_MAX ? (a | b) : (a & b);
}

static unsigned char leaf_BOOL(lc_reduce_combine c, const unsigned char *v, int64_t n) {
  bool any = c == LC_COMB_ADD || c == LC_COMB_MAX;
  for (int64_t i = 0; i < n; i++)
    if ((v[i] != 0) == any) return any;
  return !any;
}

/* The loops over rows of elements compiled also for AVX-512 and AVX2, run
** where the CPU has them: the same operations on wider vectors, so the
** same results. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LC_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define LC_CLONES
#endif

/* elements of contiguous rows an argmin or argmax looks at together */
#define ARG_BLOCK 8192

/* What every domain shares: the pairwise reduction of a row, of a region
** of several axes (a balanced tree over the outer axes' indices, each leaf
** a row), the first extreme's index, and a scan. */
#define DEFINE_COMMON(D, T, ISNAN)                                                     \
  static T row_##D(const ctx *x, const char *p, int64_t n, int64_t st) {               \
    if (n <= LC_REDUCE_LEAF) {                                                         \
      if (x->direct && st == (int64_t)sizeof(T) && (uintptr_t)p % sizeof(T) == 0)      \
        return leaf_##D(x->comb, (const T *)(const void *)p, n);                       \
      T buf[LC_REDUCE_LEAF];                                                           \
      gather_##D(buf, p, n, st, x->in);                                                \
      return leaf_##D(x->comb, buf, n);                                                \
    }                                                                                  \
    int64_t half = n / 2 - n / 2 % 8;                                                  \
    T a = row_##D(x, p, half, st);                                                     \
    if ((x->comb == LC_COMB_MIN || x->comb == LC_COMB_MAX) && ISNAN(a)) return a;      \
    return comb_##D(x->comb, a, row_##D(x, p + half * st, n - half, st));              \
  }                                                                                    \
  static T region_##D(const ctx *x, const char *p, int d);                             \
  static T span_##D(const ctx *x, const char *p, int d, int64_t lo, int64_t hi) {      \
    if (hi - lo == 1) return region_##D(x, p + lo * x->p->rin[d], d + 1);              \
    int64_t mid = lo + (hi - lo) / 2;                                                  \
    return comb_##D(x->comb, span_##D(x, p, d, lo, mid), span_##D(x, p, d, mid, hi));  \
  }                                                                                    \
  static T region_##D(const ctx *x, const char *p, int d) {                            \
    const lc_reduce_plan *pl = x->p;                                                   \
    if (pl->nred == 0) return row_##D(x, p, 1, 0);                                     \
    if (d == pl->nred - 1) return row_##D(x, p, pl->rshape[d], pl->rin[d]);            \
    return span_##D(x, p, d, 0, pl->rshape[d]);                                        \
  }                                                                                    \
  /* A block's part in the first extreme: the block's extreme and whether   \
  ** it holds a NaN, by loops without branches that the compiler           \
  ** vectorises, then the index of its first NaN, or of its first extreme  \
  ** where that beats the best so far. true at a NaN. */                    \
  __attribute__((unused)) LC_CLONES static bool block_arg_##D(const T *v, int64_t m,   \
                                                              bool max,                \
                                                    int64_t k, T *best,                \
                                                    int64_t *best_i) {                 \
    T e = v[0], r[16], z[16];                                                          \
    int64_t i = 1, unchecked = 0;    /* the first element not tested for NaN */        \
    bool nan = false;                                                                  \
    if (m >= 32) {            /* sixteen at a time, as vectors */                      \
      /* z: the sums of v - v, NaN once a NaN (or an infinity) went by */              \
      for (int j = 0; j < 16; j++) {                                                   \
        r[j] = v[j];                                                                   \
        z[j] = v[j] - v[j];                                                            \
      }                                                                                \
      if (max)                                                                         \
        for (i = 16; i + 16 <= m; i += 16)                                             \
          for (int j = 0; j < 16; j++) {                                               \
            r[j] = v[i + j] > r[j] ? v[i + j] : r[j];                                  \
            z[j] += v[i + j] - v[i + j];                                               \
          }                                                                            \
      else                                                                             \
        for (i = 16; i + 16 <= m; i += 16)                                             \
          for (int j = 0; j < 16; j++) {                                               \
            r[j] = v[i + j] < r[j] ? v[i + j] : r[j];                                  \
            z[j] += v[i + j] - v[i + j];                                               \
          }                                                                            \
      e = r[0];                                                                        \
      for (int j = 1; j < 16; j++) e = (max ? r[j] > e : r[j] < e) ? r[j] : e;         \
      for (int j = 0; j < 16; j++) nan |= ISNAN(z[j]);                                 \
      unchecked = i;                                                                   \
    }                                                                                  \
    for (int64_t j = unchecked; j < m; j++) nan |= ISNAN(v[j]);                        \
    for (; i < m; i++) e = (max ? v[i] > e : v[i] < e) ? v[i] : e;                     \
    if (nan) {                                                                         \
      for (int64_t j = 0; j < m; j++)                                                  \
        if (ISNAN(v[j])) {                                                             \
          *best_i = k + j;                                                             \
          return true;                                                                 \
        }                                                                              \
    }                                                                                  \
    if (*best_i < 0 || (max ? e > *best : e < *best))                                  \
      for (int64_t j = 0; j < m; j++)                                                  \
        if (v[j] == e) {                                                               \
          *best = e;                                                                   \
          *best_i = k + j;                                                             \
          break;                                                                       \
        }                                                                              \
    return false;                                                                      \
  }                                                                                    \
  /* the 0-based flat index of the first extreme (the first NaN, if any) */            \
  __attribute__((unused)) static int64_t arg_##D(const ctx *x, const char *p) {        \
    const lc_reduce_plan *pl = x->p;                                                   \
    int64_t idx[LC_MAXDIM] = {0}, in = 0, out = 0, n, sin, sout, k = 0, best_i = -1;   \
    bool max = x->comb == LC_COMB_MAX;                                                 \
    T best = 0, buf[LC_REDUCE_LEAF];                                                   \
    row_shape(pl, &n, &sin, &sout);                                                    \
    bool rows = x->direct && sin == (int64_t)sizeof(T) && (uintptr_t)p % sizeof(T) == 0; \
    for (int d = 0; d + 1 < pl->nred && rows; d++) rows = pl->rin[d] % (int64_t)sizeof(T) == 0; \
    if (rows) {                                                                        \
      /* contiguous rows, read where they lie, a block at a time */                    \
      do {                                                                             \
        const T *row = (const T *)(const void *)(p + in);                              \
        for (int64_t at = 0; at < n; at += ARG_BLOCK) {                                \
          int64_t m = n - at < ARG_BLOCK ? n - at : ARG_BLOCK;                         \
          if (block_arg_##D(row + at, m, max, k + at, &best, &best_i)) return best_i;  \
        }                                                                              \
        k += n;                                                                        \
      } while (next_row(pl, idx, &in, &out));                                          \
      return best_i;                                                                   \
    }                                                                                  \
    do {                                                                               \
      for (int64_t at = 0; at < n; at += LC_REDUCE_LEAF) {                             \
        int64_t m = n - at < LC_REDUCE_LEAF ? n - at : LC_REDUCE_LEAF;                 \
        gather_##D(buf, p + in + at * sin, m, sin, x->in);                             \
        for (int64_t j = 0; j < m; j++) {                                              \
          T y = buf[j];                                                                \
          if (ISNAN(y)) return k + j;                                                  \
          if (best_i < 0 || (max ? y > best : y < best)) {                             \
            best = y;                                                                  \
            best_i = k + j;                                                            \
          }                                                                            \
        }                                                                              \
        k += m;                                                                        \
      }                                                                                \
    } while (next_row(pl, idx, &in, &out));                                            \
    return best_i;                                                                     \
  }                                                                                    \
  static void scan_##D(const ctx *x, const char *p, char *o, lc_typecode ot) {          \
    const lc_reduce_plan *pl = x->p;                                                   \
    int64_t idx[LC_MAXDIM] = {0}, in = 0, out = 0, n, sin, sout;                       \
    T acc = (T)(x->comb == LC_COMB_MUL ? 1 : 0), buf[LC_REDUCE_LEAF];                  \
    row_shape(pl, &n, &sin, &sout);                                                    \
    do {                                                                               \
      for (int64_t at = 0; at < n; at += LC_REDUCE_LEAF) {                             \
        int64_t m = n - at < LC_REDUCE_LEAF ? n - at : LC_REDUCE_LEAF;                 \
        gather_##D(buf, p + in + at * sin, m, sin, x->in);                             \
        char *q = o + out + at * sout;                                                 \
        for (int64_t j = 0; j < m; j++) {                                              \
          acc = comb_##D(x->comb, acc, buf[j]);                                        \
          store_##D(q + j * sout, ot, acc);                                            \
        }                                                                              \
      }                                                                                \
    } while (next_row(pl, idx, &in, &out));                                            \
  }

DEFINE_ARITH(F32, float, NAN_FLT, ADD_PLAIN, MUL_PLAIN)
DEFINE_ARITH(F64, double, NAN_FLT, ADD_PLAIN, MUL_PLAIN)
DEFINE_ARITH(U64, uint64_t, NAN_INT, ADD_PLAIN, MUL_PLAIN)
DEFINE_ARITH(I64, int64_t, NAN_INT, ADD_I64, MUL_I64)
DEFINE_COMMON(BOOL, unsigned char, NAN_INT)

/* ---- sums, products and extremes of many outputs at once -----------------------
** Where the outputs lie next to each other in the input (a sum over a
** leading axis: each output a column), the columns are reduced together,
** LANES of them, reading rows: the same tree as row_ and region_ above
** (the same eight accumulators, leaves and halves), each step applied to
** every lane, so the results are those of one column at a time, bit for
** bit, without gathering columns at a stride of a whole row. Minima and
** maxima of floats go one pass in row order, which keeps what row_ keeps
** (the first NaN, else the first of equal extremes). */
#define LANES 4096
#define LANE_CHUNK 256   /* lanes of eight rows added together: 8 KiB of float32 sums */

#define DEFINE_LANES(D, T, ADD, MUL, HELD)                                             \
  /* the w lanes (ls apart) of the element at p, as the domain's values */             \
  static const T *lanes_at_##D(const ctx *x, const char *p, int64_t ls, int64_t w,     \
                               T *buf) {                                               \
    if (x->direct && ls == (int64_t)sizeof(T) && (uintptr_t)p % sizeof(T) == 0)        \
      return (const T *)(const void *)p;                                               \
    gather_##D(buf, p, w, ls, x->in);                                                  \
    return buf;                                                                        \
  }                                                                                    \
  /* a row's values into the lanes' extremes (wider vectors where there \
  ** are: each lane on its own, so the same values) */                     \
  LC_CLONES static void pick_##D(T *restrict res, const T *restrict v, int64_t w,     \
                                 bool max) {                                           \
    if (max)                                                                           \
      for (int64_t l = 0; l < w; l++)                                                  \
        res[l] = HELD(res[l]) & !(v[l] <= res[l]) ? v[l] : res[l];                     \
    else                                                                               \
      for (int64_t l = 0; l < w; l++)                                                  \
        res[l] = HELD(res[l]) & !(v[l] >= res[l]) ? v[l] : res[l];                     \
  }                                                                                    \
  static void lrow_##D(const ctx *x, const char *p, int64_t n, int64_t st, int64_t ls, \
                       int64_t w, T *restrict res, T *ws) {                            \
    bool add = x->comb == LC_COMB_ADD;                                                 \
    if (x->comb == LC_COMB_MIN || x->comb == LC_COMB_MAX) {                            \
      /* one pass in row order, any n: a lane takes a row's value where it  \
      ** holds no NaN and the value is a NaN or beats it strictly, so the   \
      ** first NaN or the first extreme stays, as in row_'s tree */          \
      T *buf = ws + 8 * LANES;                                                         \
      const T *restrict v = lanes_at_##D(x, p, ls, w, buf);                            \
      for (int64_t l = 0; l < w; l++) res[l] = v[l];                                   \
      for (int64_t q = 1; q < n; q++)                                                  \
        pick_##D(res, lanes_at_##D(x, p + q * st, ls, w, buf), w,                      \
                 x->comb == LC_COMB_MAX);                                              \
      return;                                                                          \
    }                                                                                  \
    if (n <= LC_REDUCE_LEAF) {                                                         \
      T *r[8], *buf = ws + 8 * LANES;                                                  \
      for (int j = 0; j < 8; j++) r[j] = ws + j * LANES;                               \
      T one = (T)(add ? 0 : 1);                                                        \
      int64_t i = n - n % 8;    /* rows in whole groups of eight */                    \
      /* accumulator j takes rows j, j + 8, ... in order (so each lane's   \
      ** sums are row_'s). Rows read where they lie go eight at a time, a   \
      ** chunk of lanes of each in turn: the input is read in its order,    \
      ** the chunks of sums stay in the nearest cache. Others are gathered  \
      ** once each: accumulator by accumulator, a row of sums at a time. */ \
      bool rows = x->direct && ls == (int64_t)sizeof(T) && st % (int64_t)sizeof(T) == 0 && \
                  (uintptr_t)p % sizeof(T) == 0;                                       \
      for (int j = 0; j < 8; j++)                                                      \
        for (int64_t l = 0; l < w; l++) r[j][l] = one;                                 \
      if (rows)                                                                        \
        for (int64_t g = 0; g < i; g += 8)                                             \
          for (int64_t c = 0; c < w; c += LANE_CHUNK) {                                \
            int64_t m = w - c < LANE_CHUNK ? w - c : LANE_CHUNK;                       \
            for (int j = 0; j < 8; j++) {                                              \
              T *restrict a = r[j] + c;                                                \
              const T *restrict v = (const T *)(const void *)(p + (g + j) * st) + c;   \
              if (add)                                                                 \
                for (int64_t l = 0; l < m; l++) a[l] = ADD(a[l], v[l]);                \
              else                                                                     \
                for (int64_t l = 0; l < m; l++) a[l] = MUL(a[l], v[l]);                \
            }                                                                          \
          }                                                                            \
      else                                                                             \
        for (int j = 0; j < 8; j++) {                                                  \
          T *restrict a = r[j];                                                        \
          for (int64_t q = j; q < i; q += 8) {                                         \
            const T *restrict v = lanes_at_##D(x, p + q * st, ls, w, buf);             \
            if (add)                                                                   \
              for (int64_t l = 0; l < w; l++) a[l] = ADD(a[l], v[l]);                  \
            else                                                                       \
              for (int64_t l = 0; l < w; l++) a[l] = MUL(a[l], v[l]);                  \
          }                                                                            \
        }                                                                              \
      if (add)                                                                         \
        for (int64_t l = 0; l < w; l++)                                                \
          res[l] = ADD(ADD(ADD(r[0][l], r[1][l]), ADD(r[2][l], r[3][l])),              \
                       ADD(ADD(r[4][l], r[5][l]), ADD(r[6][l], r[7][l])));             \
      else                                                                             \
        for (int64_t l = 0; l < w; l++)                                                \
          res[l] = MUL(MUL(MUL(r[0][l], r[1][l]), MUL(r[2][l], r[3][l])),              \
                       MUL(MUL(r[4][l], r[5][l]), MUL(r[6][l], r[7][l])));             \
      for (; i < n; i++) {                                                             \
        const T *restrict v = lanes_at_##D(x, p + i * st, ls, w, buf);                 \
        if (add)                                                                       \
          for (int64_t l = 0; l < w; l++) res[l] = ADD(res[l], v[l]);                  \
        else                                                                           \
          for (int64_t l = 0; l < w; l++) res[l] = MUL(res[l], v[l]);                  \
      }                                                                                \
      return;                                                                          \
    }                                                                                  \
    int64_t half = n / 2 - n / 2 % 8;                                                  \
    T *second = ws;                                                                    \
    lrow_##D(x, p, half, st, ls, w, res, ws + LANES);                                  \
    lrow_##D(x, p + half * st, n - half, st, ls, w, second, ws + LANES);               \
    if (add) for (int64_t l = 0; l < w; l++) res[l] = ADD(res[l], second[l]);          \
    else for (int64_t l = 0; l < w; l++) res[l] = MUL(res[l], second[l]);              \
  }                                                                                    \
  static void lregion_##D(const ctx *x, const char *p, int d, int64_t ls, int64_t w,   \
                          T *res, T *ws);                                              \
  static void lspan_##D(const ctx *x, const char *p, int d, int64_t lo, int64_t hi,    \
                        int64_t ls, int64_t w, T *res, T *ws) {                        \
    if (hi - lo == 1) {                                                                \
      lregion_##D(x, p + lo * x->p->rin[d], d + 1, ls, w, res, ws);                    \
      return;                                                                          \
    }                                                                                  \
    int64_t mid = lo + (hi - lo) / 2;                                                  \
    T *second = ws;                                                                    \
    lspan_##D(x, p, d, lo, mid, ls, w, res, ws + LANES);                               \
    lspan_##D(x, p, d, mid, hi, ls, w, second, ws + LANES);                            \
    for (int64_t l = 0; l < w; l++) res[l] = comb_##D(x->comb, res[l], second[l]);     \
  }                                                                                    \
  static void lregion_##D(const ctx *x, const char *p, int d, int64_t ls, int64_t w,   \
                          T *res, T *ws) {                                             \
    const lc_reduce_plan *pl = x->p;                                                   \
    if (d == pl->nred - 1) lrow_##D(x, p, pl->rshape[d], pl->rin[d], ls, w, res, ws);  \
    else lspan_##D(x, p, d, 0, pl->rshape[d], ls, w, res, ws);                         \
  }

/* HELD(v): v is no NaN, by a comparison that the compiler vectorises */
#define HELD_FLT(v) ((v) == (v))
#define HELD_INT(v) ((void)(v), 1)
DEFINE_LANES(F32, float, ADD_PLAIN, MUL_PLAIN, HELD_FLT)
DEFINE_LANES(F64, double, ADD_PLAIN, MUL_PLAIN, HELD_FLT)
DEFINE_LANES(U64, uint64_t, ADD_PLAIN, MUL_PLAIN, HELD_INT)

/* The outputs along the last kept axis, LANES at a time, from the input
** at ip into the output at op: w outputs, ls and os apart. */
static void reduce_lanes(const lc_reduce_call *c, const ctx *x, lc_reduce_domain dom,
                         const char *ip, char *op, int64_t count, void *ws) {
  const lc_reduce_plan *pl = x->p;
  int64_t ls = pl->kin[pl->nkept - 1], os = pl->kout[pl->nkept - 1];
  bool mean = c->op == LC_RED_MEAN;
  for (int64_t at = 0; at < count; at += LANES) {
    int64_t w = count - at < LANES ? count - at : LANES;
    const char *p = ip + at * ls;
    char *o = op + at * os;
    switch (dom) {
      case LC_DOM_F32: {
        float *v = (float *)ws;
        lregion_F32(x, p, 0, ls, w, v, v + LANES);
        for (int64_t l = 0; l < w; l++)
          store_F32(o + l * os, c->out_type, mean ? v[l] / (float)pl->count : v[l]);
        break;
      }
      case LC_DOM_F64: {
        double *v = (double *)ws;
        lregion_F64(x, p, 0, ls, w, v, v + LANES);
        for (int64_t l = 0; l < w; l++)
          store_F64(o + l * os, c->out_type, mean ? v[l] / (double)pl->count : v[l]);
        break;
      }
      default: {
        uint64_t *v = (uint64_t *)ws;
        lregion_U64(x, p, 0, ls, w, v, v + LANES);
        for (int64_t l = 0; l < w; l++) {
          if (mean)
            store_f64(o + l * os, c->out_type,
                      int_value(v[l], &lc_dtypes[c->acc_type]) / (double)pl->count);
          else store_U64(o + l * os, c->out_type, v[l]);
        }
        break;
      }
    }
  }
}

/* The lanes' workspace, in elements of the domain: the result, and for
** each level of the tree (at most one per halving of count, the leaf's
** included) a second half's, then a leaf's eight accumulators and a
** gathered row. */
static size_t lanes_workspace(const lc_reduce_plan *pl) {
  size_t levels = 2;
  for (int64_t n = pl->count; n > 1; n = (n + 1) / 2) levels++;
  for (int d = 0; d < pl->nred; d++) levels++;
  return (levels + 10) * LANES;
}

/* Are the outputs reduced as lanes: sums and products (and means) over
** at least one axis of at least one element, or minima and maxima of
** floats, the last kept axis nearer in the input than the reduced axis
** walked fastest? */
static bool by_lanes(const lc_reduce_call *c, const ctx *x, lc_reduce_domain dom) {
  const lc_reduce_plan *pl = x->p;
  bool extreme = x->comb == LC_COMB_MIN || x->comb == LC_COMB_MAX;
  if (lc_reduce_is_scan(c->op) || c->op == LC_RED_ARGMIN || c->op == LC_RED_ARGMAX) return false;
  if (extreme ? dom != LC_DOM_F32 && dom != LC_DOM_F64
              : dom != LC_DOM_F32 && dom != LC_DOM_F64 && dom != LC_DOM_U64)
    return false;
  if (pl->nkept == 0 || pl->nred == 0 || pl->count == 0 || pl->kshape[pl->nkept - 1] < 2)
    return false;
  int64_t ls = pl->kin[pl->nkept - 1], rs = pl->rin[pl->nred - 1];
  return (ls < 0 ? -ls : ls) < (rs < 0 ? -rs : rs);
}

/* ---- one output ------------------------------------------------------------------ */

/* The reduction of the region at p into the output element at o. */
static void reduce_one(const lc_reduce_call *c, const ctx *x, lc_reduce_domain dom,
                       const char *p, char *o) {
  const lc_reduce_plan *pl = x->p;
  lc_typecode ot = c->out_type;
  bool empty = pl->count == 0, mean = c->op == LC_RED_MEAN;
  double n = (double)pl->count;
  if (c->op == LC_RED_ARGMIN || c->op == LC_RED_ARGMAX) {
    int64_t i = 0;
    switch (dom) {
      case LC_DOM_F32: i = arg_F32(x, p); break;
      case LC_DOM_F64: i = arg_F64(x, p); break;
      case LC_DOM_I64: i = arg_I64(x, p); break;
      default: i = arg_U64(x, p); break;
    }
    store_I64(o, ot, i + 1);
    return;
  }
  bool one = x->comb == LC_COMB_MUL;   /* the identity of an empty reduction */
  switch (dom) {
    case LC_DOM_F32: {
      float v = empty ? (float)one : region_F32(x, p, 0);
      if (mean) v = v / (float)pl->count;
      store_F32(o, ot, v);
      return;
    }
    case LC_DOM_F64: {
      double v = empty ? (double)one : region_F64(x, p, 0);
      if (mean) v = v / n;
      store_F64(o, ot, v);
      return;
    }
    case LC_DOM_I64: {
      store_I64(o, ot, region_I64(x, p, 0));       /* min and max: never empty */
      return;
    }
    case LC_DOM_U64: {
      uint64_t v = empty ? (uint64_t)one : region_U64(x, p, 0);
      if (mean) store_f64(o, ot, int_value(v, &lc_dtypes[c->acc_type]) / n);
      else store_U64(o, ot, v);
      return;
    }
    default: {
      unsigned char v = empty ? one : region_BOOL(x, p, 0);
      if (mean) store_f64(o, ot, (v ? 1.0 : 0.0) / n);
      else store_BOOL(o, ot, v);
      return;
    }
  }
}

static void scan_one(const lc_reduce_call *c, const ctx *x, lc_reduce_domain dom,
                     const char *p, char *o) {
  if (x->p->count == 0) return;
  switch (dom) {
    case LC_DOM_F32: scan_F32(x, p, o, c->out_type); return;
    case LC_DOM_F64: scan_F64(x, p, o, c->out_type); return;
    case LC_DOM_I64: scan_I64(x, p, o, c->out_type); return;
    case LC_DOM_U64: scan_U64(x, p, o, c->out_type); return;
    default: scan_BOOL(x, p, o, c->out_type); return;
  }
}

static bool direct(lc_reduce_domain dom, lc_typecode t) {
  switch (dom) {
    case LC_DOM_F32: return t == LC_FLOAT32;
    case LC_DOM_F64: return t == LC_FLOAT64;
    case LC_DOM_U64: return t == LC_UINT64 || t == LC_INT64;
    case LC_DOM_I64: return t == LC_INT64;
    default: return false;      /* bool: any nonzero byte is true */
  }
}

/* The next output of the kept axes [0, last], the last fastest: idx, the
** input's and the output's pointers stepped on (back to the start of an
** axis that wraps). */
static void next_output(const lc_reduce_plan *pl, int last, int64_t *idx, const char **ip,
                        char **op) {
  for (int d = last; d >= 0; d--) {
    if (++idx[d] < pl->kshape[d]) {
      *ip += pl->kin[d];
      *op += pl->kout[d];
      return;
    }
    idx[d] = 0;
    *ip -= (pl->kshape[d] - 1) * pl->kin[d];
    *op -= (pl->kshape[d] - 1) * pl->kout[d];
  }
}

/* ---- many short rows --------------------------------------------------------------
** One reduced axis of a few elements, contiguous, for each of many outputs
** (the sum over a last axis of 2, the argmin over 16 of k-means): the
** reduction per output is a handful of operations, so the walk through
** region_, row_ and leaf_ per output was most of the time. Here the outputs
** of the last kept axis are a loop around the same leaf (so the same bits)
** or the same first extreme (the first NaN, else the first minimum or
** maximum), read where they lie. */
#define SHORT_ROW 128   /* at most a leaf: one leaf_ call per output is the tree */
_Static_assert(SHORT_ROW <= LC_REDUCE_LEAF, "a short row is one leaf");

#define DEFINE_SHORT(D, T, ISNAN)                                                      \
  /* without branches on the values (a new extreme is a coin toss the                  \
  ** branch predictor loses), NaNs looked for again only where seen */                 \
  static int64_t first_arg_##D(const T *v, int64_t n, bool max) {                      \
    T best = v[0];                                                                     \
    int64_t at = 0;                                                                    \
    bool nan = ISNAN(best);                                                            \
    if (max)                                                                           \
      for (int64_t j = 1; j < n; j++) {                                                \
        T y = v[j];                                                                    \
        bool better = y > best;                                                        \
        nan |= ISNAN(y);                                                               \
        best = better ? y : best;                                                      \
        at = better ? j : at;                                                          \
      }                                                                                \
    else                                                                               \
      for (int64_t j = 1; j < n; j++) {                                                \
        T y = v[j];                                                                    \
        bool better = y < best;                                                        \
        nan |= ISNAN(y);                                                               \
        best = better ? y : best;                                                      \
        at = better ? j : at;                                                          \
      }                                                                                \
    if (nan)                                                                           \
      for (int64_t j = 0; j < n; j++)                                                  \
        if (ISNAN(v[j])) return j;                                                     \
    return at;                                                                         \
  }                                                                                    \
  static void short_rows_##D(const lc_reduce_call *c, const ctx *x, const char *ip,    \
                             char *op) {                                               \
    const lc_reduce_plan *pl = x->p;                                                   \
    int64_t n = pl->rshape[0], w = pl->kshape[pl->nkept - 1];                          \
    int64_t is = pl->kin[pl->nkept - 1], os = pl->kout[pl->nkept - 1];                 \
    int64_t idx[LC_MAXDIM] = {0};                                                      \
    lc_typecode ot = c->out_type;                                                      \
    bool same = lc_dtypes[ot].kind == 'f' && lc_dtypes[ot].size == (int64_t)sizeof(T); \
    bool arg = c->op == LC_RED_ARGMIN || c->op == LC_RED_ARGMAX;                       \
    bool mean = c->op == LC_RED_MEAN;                                                  \
    for (int64_t k = 0; k < pl->nout; k += w) {                                        \
      const char *p = ip;                                                              \
      char *o = op;                                                                    \
      for (int64_t j = 0; j < w; j++, p += is, o += os) {                              \
        const T *v = (const T *)(const void *)p;                                       \
        if (arg) {                                                                     \
          store_I64(o, ot, first_arg_##D(v, n, x->comb == LC_COMB_MAX) + 1);           \
          continue;                                                                    \
        }                                                                              \
        T s = leaf_##D(x->comb, v, n);                                                 \
        if (mean) s = s / (T)pl->count;                                                \
        if (same) memcpy(o, &s, sizeof s);                                             \
        else store_##D(o, ot, s);                                                      \
      }                                                                                \
      next_output(pl, pl->nkept - 2, idx, &ip, &op);                                   \
    }                                                                                 \
  }

DEFINE_SHORT(F32, float, NAN_FLT)
DEFINE_SHORT(F64, double, NAN_FLT)

/* Are the outputs reduced as short rows: a reduction (not a scan) of
** float32 or float64 read as such, over one axis of at most SHORT_ROW
** elements lying next to each other, every row aligned? */
static bool by_short_rows(const lc_reduce_call *c, const ctx *x, lc_reduce_domain dom,
                          const char *ip) {
  const lc_reduce_plan *pl = x->p;
  int64_t size = dom == LC_DOM_F32 ? 4 : 8;
  if ((dom != LC_DOM_F32 && dom != LC_DOM_F64) || !x->direct || lc_reduce_is_scan(c->op))
    return false;
  if (pl->nred != 1 || pl->nkept == 0 || pl->rshape[0] > SHORT_ROW || pl->rin[0] != size ||
      (uintptr_t)ip % (uintptr_t)size != 0)
    return false;
  for (int d = 0; d < pl->nkept; d++)
    if (pl->kin[d] % size != 0) return false;
  return true;
}

void lc_reduce_host(const lc_reduce_call *c) {
  lc_reduce_plan pl;
  lc_reduce_plan_make(c, &pl);
  if (pl.nout == 0) return;
  const lc_dtype *in = &lc_dtypes[c->in_type], *acc = &lc_dtypes[c->acc_type];
  lc_reduce_domain dom = lc_reduce_domain_of(c->op, in, acc);
  ctx x = {&pl, c->in_type, lc_reduce_combine_of(c->op), direct(dom, c->in_type)};
  bool scan = lc_reduce_is_scan(c->op);
  const char *ip = c->in + pl.in0;
  char *op = c->out + pl.out0;
  int64_t idx[LC_MAXDIM] = {0};
  if (by_short_rows(c, &x, dom, ip)) {
    if (dom == LC_DOM_F32) short_rows_F32(c, &x, ip, op);
    else short_rows_F64(c, &x, ip, op);
    return;
  }
  void *ws = by_lanes(c, &x, dom) ? malloc(lanes_workspace(&pl) * 8) : NULL;
  if (ws) {          /* (without the memory, the outputs one at a time) */
    /* each line of the last kept axis at once; the others one by one */
    int64_t w = pl.kshape[pl.nkept - 1];
    for (int64_t k = 0; k < pl.nout; k += w) {
      reduce_lanes(c, &x, dom, ip, op, w, ws);
      next_output(&pl, pl.nkept - 2, idx, &ip, &op);
    }
    free(ws);
    return;
  }
  for (int64_t k = 0; k < pl.nout; k++) {
    if (scan) scan_one(c, &x, dom, ip, op);
    else reduce_one(c, &x, dom, ip, op);
    next_output(&pl, pl.nkept - 1, idx, &ip, &op);
  }
}
