/*
** ufunc: the table of elementwise operations and NumPy 2's type promotion
** (see ufunc.h). The loops are ufunc_host.c's.
*/
#include "ufunc.h"

#include <pthread.h>
#include <stdio.h>

const lc_ufunc_info lc_ufuncs[LC_UF_NOPS] = {
#define LC_UF_ROW(code, name, nin, family) {name, nin, LC_UFAM_##family},
  LC_UFUNC_LIST(LC_UF_ROW)
#undef LC_UF_ROW
};

static const lc_dtype *T(lc_typecode c) { return &lc_dtypes[c]; }

/* the least float holding every integer of size bytes (NumPy's choice) */
static const lc_dtype *float_for_size(int64_t size) {
  return T(size == 1 ? LC_FLOAT16 : size == 2 ? LC_FLOAT32 : LC_FLOAT64);
}

/* two floats: the wider, float16 and bfloat16 (neither holds the other)
** float32 */
static const lc_dtype *join_floats(const lc_dtype *a, const lc_dtype *b) {
  if (a == b) return a;
  if (a->code == LC_FLOAT64 || b->code == LC_FLOAT64) return T(LC_FLOAT64);
  return T(LC_FLOAT32);
}

static const lc_dtype *int_of_size(int64_t size) {
  return T(size == 1 ? LC_INT8 : size == 2 ? LC_INT16 : size == 4 ? LC_INT32 : LC_INT64);
}

const lc_dtype *lc_promote_types(const lc_dtype *a, const lc_dtype *b) {
  if (a == b) return a;
  if (a->kind == 'b') return b;
  if (b->kind == 'b') return a;
  if (a->kind == 'f' && b->kind == 'f') return join_floats(a, b);
  if (a->kind == 'f' || b->kind == 'f') {
    const lc_dtype *f = a->kind == 'f' ? a : b, *i = a->kind == 'f' ? b : a;
    if (f->code == LC_BFLOAT16 && i->size == 1) return f;   /* 8 bits of significand */
    return join_floats(f, float_for_size(i->size));
  }
  if (a->kind == b->kind) return a->size >= b->size ? a : b;
  const lc_dtype *s = a->kind == 'i' ? a : b, *u = a->kind == 'i' ? b : a;
  if (u->size < s->size) return s;
  if (u->size < 8) return int_of_size(u->size * 2);
  return T(LC_FLOAT64);      /* no integer holds both int64 and uint64 */
}

const lc_dtype *lc_result_type(int n, const lc_opd_type *t) {
  const lc_dtype *strong = NULL;
  bool weak_int = false, weak_float = false;
  for (int i = 0; i < n; i++) {
    switch (t[i].kind) {
      case LC_OPD_ARRAY: strong = strong ? lc_promote_types(strong, t[i].dtype) : t[i].dtype; break;
      case LC_OPD_BOOL: strong = strong ? lc_promote_types(strong, T(LC_BOOL)) : T(LC_BOOL); break;
      case LC_OPD_INT: weak_int = true; break;
      case LC_OPD_FLOAT: weak_float = true; break;
    }
  }
  if (!strong) return T(weak_float ? LC_FLOAT64 : weak_int ? LC_INT64 : LC_BOOL);
  if (weak_float && strong->kind != 'f') return T(LC_FLOAT64);
  if (weak_int && strong->kind == 'b') return T(LC_INT64);
  return strong;
}

const char *const lc_casting_names[LC_NCASTINGS + 1] = {"no", "equiv", "safe", "same_kind",
                                                        "unsafe", NULL};

/* a kind's place in same_kind's order: a cast may go to a later one */
static int kind_rank(char kind) {
  return kind == 'b' ? 0 : kind == 'u' ? 1 : kind == 'i' ? 2 : 3;
}

bool lc_can_cast(const lc_dtype *from, const lc_dtype *to, lc_casting casting) {
  if (from == to) return true;
  if (from->rec || to->rec || from->kind == 'V' || to->kind == 'V') return false;
  switch (casting) {
    case LC_CAST_NO:
    case LC_CAST_EQUIV: return false;
    case LC_CAST_SAFE: return lc_promote_types(from, to) == to;
    case LC_CAST_SAME_KIND:
      return lc_promote_types(from, to) == to ||
             (from->kind == to->kind ? true : kind_rank(from->kind) < kind_rank(to->kind));
    default: return true;
  }
}

const lc_dtype *lc_float_for(const lc_dtype *dt) {
  if (dt->kind == 'f') return dt;
  return float_for_size(dt->size);     /* bool: 1 byte, float16 */
}

/* float16 and bfloat16 (the narrow floats) compute in float32 */
static const lc_dtype *computed_in(const lc_dtype *dt) {
  return lc_dtype_is_narrow_float(dt) ? T(LC_FLOAT32) : dt;
}

/* the operands' dtypes for messages: "int8 and float32" */
static const char *describe(int n, const lc_opd_type *t, char *buf, size_t len) {
  size_t k = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && k < len; i++) {
    const char *name = t[i].kind == LC_OPD_ARRAY ? t[i].dtype->name
                       : t[i].kind == LC_OPD_INT ? "a Lua integer"
                       : t[i].kind == LC_OPD_FLOAT ? "a Lua float" : "a boolean";
    k += (size_t)snprintf(buf + k, len - k, "%s%s", i == 0 ? "" : i == n - 1 ? " and " : ", ", name);
  }
  return buf;
}

int lc_ufunc_resolve(lc_ufunc_op op, const lc_opd_type *t, const lc_dtype *cast_to,
                     lc_ufunc_types *types, char *err) {
  const lc_ufunc_info *info = &lc_ufuncs[op];
  for (int i = 0; i < info->nin; i++)
    if (t[i].kind == LC_OPD_ARRAY && t[i].dtype->kind == 'V')
      return lc_fail(err, -1, "%s is not defined for the record dtype %s", info->name, t[i].dtype->name);
  const lc_dtype *loop = NULL, *res = NULL, *out = NULL;
  char buf[128];
  switch (info->family) {
    case LC_UFAM_CAST:
      types->in[0] = types->res = types->out = cast_to;
      return 0;
    case LC_UFAM_LOGIC:
      for (int i = 0; i < info->nin; i++) types->in[i] = T(LC_BOOL);
      types->res = types->out = T(LC_BOOL);
      return 0;
    case LC_UFAM_WHERE:
      loop = lc_result_type(2, t + 1);
      types->in[0] = T(LC_BOOL);
      types->in[1] = types->in[2] = computed_in(loop);
      types->res = computed_in(loop);
      types->out = loop;
      return 0;
    default: break;
  }
  loop = lc_result_type(info->nin, t);
  switch (info->family) {
    case LC_UFAM_INT:
      if (loop->kind == 'b') loop = T(LC_INT8);
      break;
    case LC_UFAM_NUM:
      if (loop->kind == 'b')
        return lc_fail(err, -1, "%s is not defined for bool (the operands are %s)", info->name,
                    describe(info->nin, t, buf, sizeof buf));
      break;
    case LC_UFAM_FLOAT:
      /* true division of integers and bools is float64 (NumPy's
      ** true_divide), the others the least float holding the dtype */
      loop = op == LC_UF_DIVIDE && loop->kind != 'f' ? T(LC_FLOAT64) : lc_float_for(loop);
      break;
    case LC_UFAM_TEST:
      loop = lc_float_for(loop);   /* an integer is never NaN nor infinite as a float */
      break;
    default: break;
  }
  res = computed_in(loop);
  out = loop;
  if (info->family == LC_UFAM_CMP || info->family == LC_UFAM_TEST) res = out = T(LC_BOOL);
  for (int i = 0; i < info->nin; i++) types->in[i] = computed_in(loop);
  types->res = res;
  types->out = out;
  return 0;
}

/* ---- the types of one dtype's arrays, resolved once ------------------------ */

typedef struct same_types {
  bool ok;                   /* resolved, and a loop has them */
  lc_ufunc_types types;
} same_types;

static same_types same[LC_UF_NOPS][LC_NTYPES];   /* written once, under same_once */
static pthread_once_t same_once = PTHREAD_ONCE_INIT;

static void resolve_same(void) {
  char err[LC_ERRLEN];
  for (int op = 0; op < LC_UF_NOPS; op++) {
    if (op == LC_UF_CAST || op == LC_UF_WHERE) continue;
    for (int code = 0; code < LC_NTYPES; code++) {
      lc_opd_type t[3];
      for (int i = 0; i < 3; i++) t[i] = (lc_opd_type){.kind = LC_OPD_ARRAY, .dtype = T(code)};
      same_types *e = &same[op][code];
      e->ok = lc_ufunc_resolve((lc_ufunc_op)op, t, NULL, &e->types, err) == 0 &&
              lc_ufunc_has_loop((lc_ufunc_op)op, e->types.in[0]);
    }
  }
}

const lc_ufunc_types *lc_ufunc_types_same(lc_ufunc_op op, const lc_dtype *dt) {
  if (dt->code >= LC_NTYPES || dt != &lc_dtypes[dt->code]) return NULL;   /* a record */
  if (op == LC_UF_CAST || op == LC_UF_WHERE) return NULL;
  pthread_once(&same_once, resolve_same);
  const same_types *e = &same[op][dt->code];
  return e->ok ? &e->types : NULL;
}
