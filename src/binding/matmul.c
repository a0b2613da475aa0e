/*
** matmul: matrix products for Lua, luacuda.matmul(a, b [, out] [, stream])
** and a:matmul(b ...), by NumPy's rules (base/matmul.h plans them), and
** luacuda.blas(), which says what computes them. float32 and float64; a
** float32 operand meeting a float64 one is converted first, as NumPy
** promotes. Host and pinned arrays compute here on the host (the CPU's
** BLAS where it loads, base/cpublas.c, else the blocked loop of
** base/matmul.c); device-accessible ones (device, managed, mapped) on the
** backend, queued on the stream given or the default stream: the CPU's
** BLAS or the library's tiled kernel (kernels/matmul.cu) on the
** simulator, cuBLAS on the CUDA backend where it loads, else the kernel.
*/
#include "array.h"

#include <string.h>

#include "gate.h"
#include "matmul.h"
#include "pending.h"
#include "ufunc.h"
#include "stream.h"
#include "device.h"
#include "copy.h"

static const char *const FNAME = "matmul";

/* the side an array computes on: device-accessible memory, or the host */
static bool device_side(const lc_array *a) { return lc_kind_device_accessible(lc_array_kind(a)); }

/* Operand i (1 or 2) at idx: an open array of float32 or float64. */
static lc_array *operand(lua_State *L, int idx, int i) {
  if (lc_array_test(L, idx) == NULL) {
    if (lua_type(L, idx) == LUA_TTABLE)
      lc_error(L, FNAME, "operand %d is a table: make it an array first (luacuda.array(t) or "
               "to_device(t), with {dtype = ...} to choose its dtype)", i);
    lc_error(L, FNAME, "operand %d must be an array, got %s%s", i, lc_typename(L, idx),
             lua_type(L, idx) == LUA_TNUMBER ? " (luacuda.multiply scales by a number)" : "");
  }
  lc_array *a = lc_array_check(L, idx, FNAME);
  lc_check_current_device(L, a, "operand", FNAME);
  if (a->dtype != &lc_dtypes[LC_FLOAT32] && a->dtype != &lc_dtypes[LC_FLOAT64])
    lc_error(L, FNAME, "operand %d is of dtype %s: matmul takes float32 and float64 arrays "
             "(convert it first: a:astype(\"float32\") or a:astype(\"float64\"))", i,
             a->dtype->name);
  return a;
}

/* Are a's elements aligned to their size, as the loops, the kernel and
** cuBLAS load them? (A record's field may not be.) */
static bool aligned(const lc_array *a) {
  int64_t isz = a->dtype->size;
  if ((uintptr_t)lc_array_data(a) % (uintptr_t)isz != 0) return false;
  for (int i = 0; i < a->lay.ndim; i++)
    if (a->lay.shape[i] > 1 && a->lay.strides[i] % isz != 0) return false;
  return true;
}

/* Does the view hold an element twice (a broadcast axis: stride 0)? */
static bool repeats(const lc_array *a) {
  for (int i = 0; i < a->lay.ndim; i++)
    if (a->lay.shape[i] > 1 && a->lay.strides[i] == 0) return true;
  return false;
}

/* A new C-contiguous array of x's shape on x's side holding x's elements
** converted to dt (dt may be x's own dtype: an aligned copy); pushed. */
static lc_array *converted(lua_State *L, lc_array *x, const lc_dtype *dt, bool device,
                           lc_stream *s, const lc_backend *be) {
  lc_array *t = lc_array_empty(L, device ? LC_DEVICE : LC_HOST, dt, x->lay.ndim, x->lay.shape,
                               'C', s, FNAME);
  if (dt == x->dtype) {
    lc_copy_array(L, t, x, s, FNAME);
    return t;
  }
  char err[LC_ERRLEN];
  lc_ufunc_call c;
  memset(&c, 0, sizeof c);
  c.op = LC_UF_CAST;
  c.nin = 1;
  lc_opd_type ot = {LC_OPD_ARRAY, x->dtype};
  if (lc_ufunc_resolve(LC_UF_CAST, &ot, dt, &c.types, err)) lc_error(L, FNAME, "%s", err);
  c.in[0].dtype = x->dtype;
  c.in[0].lay = x->lay;
  c.out.dtype = dt;
  c.out.lay = t->lay;
  if (!device) {
    lc_pending_wait(L, x, false, FNAME);
    lc_pending_wait(L, t, true, FNAME);
    c.in[0].data = lc_array_data(x);
    c.out.data = lc_array_data(t);
    lc_ufunc_host(&c);
    return t;
  }
  lc_buffer_use(L, x->buf, s, FNAME);
  lc_buffer_use(L, t->buf, s, FNAME);
  c.in[0].data = lc_array_device_data(x);
  c.out.data = lc_array_device_data(t);
  if (be->ufunc == NULL) lc_error(L, FNAME, "the %s backend has no array math", be->name);
  if (be->ufunc(&c, s, err)) lc_error(L, FNAME, "%s", err);
  lc_pending_add(x->buf, s, false);
  lc_pending_add(t->buf, s, true);
  return t;
}

/*** @module luacuda */

/***
The matrix product by NumPy's rules: 1-d operands as vectors, stacks of
matrices with their leading axes broadcast. float32 and float64 (a
float32 operand meeting a float64 one is converted first). Host and
pinned arrays compute on the host, with the system's BLAS
(`libblas.so.3`) where it loads; device-accessible ones (device,
managed, mapped) on the device, queued on the stream (cuBLAS where it
loads; on the simulator the CPU's BLAS: see @{blas}).
@function matmul
@tparam Array a the left operand
@tparam Array b the right operand, on the same side (host or device) as `a`
@tparam[opt] Array out the result's array (its shape and dtype must match)
@tparam[opt] Stream stream queue the product on it
@treturn Array the product (`out` when given)
@raise `luacuda.matmul: operand 1 is a table: make it an array first ...`;
`operand 2 is of dtype int32: matmul takes float32 and float64 arrays ...`;
shapes whose inner sizes differ; a host operand with a device one
@usage local a = luacuda.ones({2, 3}, "float32")
local b = luacuda.ones({3, 4}, "float32")
assert(luacuda.matmul(a, b)[{1, 1}] == 3)
*/

/*** @type Array */

/***
`a:matmul(b [, out] [, stream])`: @{matmul} with `a` first.
@function Array:matmul
@tparam Array b the right operand
@tparam[opt] Array out the result's array
@tparam[opt] Stream stream queue the product on it
@treturn Array the product
@raise as @{matmul}
@usage local m = luacuda.ones({2, 2}):matmul(luacuda.ones({2}))
*/

/*** @section end */

/* matmul(a, b [, out] [, stream]); the method a:matmul(b [, out] [, stream]) */
static int l_matmul(lua_State *L) {
  if (lua_gettop(L) < 2)
    lc_error(L, FNAME, "takes two arrays, got %d argument%s", lua_gettop(L),
             lua_gettop(L) == 1 ? "" : "s");
  lc_array *a = operand(L, 1, 1), *b = operand(L, 2, 2);
  /* the output and the stream, in either order */
  lc_array *out = NULL;
  lc_stream *stream = NULL;
  int out_idx = 0, top = lua_gettop(L);
  for (int idx = 3; idx <= top; idx++) {
    if (lua_isnil(L, idx)) continue;
    if (out == NULL && lc_array_test(L, idx)) {
      out = lc_array_check(L, idx, FNAME);
      lc_check_current_device(L, out, "output", FNAME);
      out_idx = idx;
    } else if (stream == NULL && !lc_array_test(L, idx)) {
      stream = lc_opt_stream(L, idx, FNAME);
    } else {
      lc_error(L, FNAME, "argument %d: expected an output array or a stream, got %s", idx,
               lc_typename(L, idx));
    }
  }
  bool device = device_side(a);
  if (device_side(b) != device)
    lc_error(L, FNAME, "operand 1 is a %s array and operand 2 a %s array: they compute on "
             "different sides (copy one first: to_device or copy_to_host)",
             lc_kind_names[lc_array_kind(a)], lc_kind_names[lc_array_kind(b)]);
  const lc_dtype *dt = a->dtype->code == LC_FLOAT64 || b->dtype->code == LC_FLOAT64
                           ? &lc_dtypes[LC_FLOAT64] : &lc_dtypes[LC_FLOAT32];
  lc_matmul_call c;
  int nd;
  int64_t shape[LC_MAXDIM];
  char err[LC_ERRLEN];
  if (lc_matmul_plan(&a->lay, &b->lay, &c, &nd, shape, err)) lc_error(L, FNAME, "%s", err);
  if (out) {
    if (device_side(out) != device)
      lc_error(L, FNAME, "the output is a %s array, the operands compute on the %s: give an "
               "output of the operands' side", lc_kind_names[lc_array_kind(out)],
               device ? "device" : "host");
    bool same = out->lay.ndim == nd && out->dtype == dt;
    for (int i = 0; same && i < nd; i++) same = out->lay.shape[i] == shape[i];
    if (!same) {
      char want[LC_SHAPE_STRLEN], got[LC_SHAPE_STRLEN];
      lc_shape_format(want, sizeof want, nd, shape);
      lc_shape_format(got, sizeof got, out->lay.ndim, out->lay.shape);
      lc_error(L, FNAME, "the output must be an array of dtype %s and shape %s, got one of "
               "dtype %s and shape %s (no casting into an output: astype the result instead)",
               dt->name, want, out->dtype->name, got);
    }
  }
  const lc_backend *be = a->buf->backend;
  lc_stream *s = device ? (stream ? stream : be->default_stream()) : NULL;

  /* the result: the output given, or a new C-contiguous array of the
  ** operands' kind (the plain one of their side where they differ) */
  int res_idx;
  if (out) {
    lua_pushvalue(L, out_idx);
  } else {
    lc_kind kind = lc_array_kind(a) == lc_array_kind(b) ? lc_array_kind(a)
                   : device ? LC_DEVICE : LC_HOST;
    out = lc_array_empty(L, kind, dt, nd, shape, 'C', s, FNAME);
  }
  res_idx = lua_gettop(L);
  if (out->lay.size == 0) return 1;

  /* the inputs as the computation reads them: converted to the result's
  ** dtype, copied where their elements are not aligned */
  if (a->dtype != dt || !aligned(a)) a = converted(L, a, dt, device, s, be);
  if (b->dtype != dt || !aligned(b)) b = converted(L, b, dt, device, s, be);
  /* an output that shares memory with an input, holds an element twice or
  ** is not aligned is written after the products, from a result of its own */
  lc_array *target = out;
  if (!aligned(out) || repeats(out) || lc_arrays_overlap(out, &out->lay, a, &a->lay) ||
      lc_arrays_overlap(out, &out->lay, b, &b->lay))
    target = lc_array_empty(L, device ? LC_DEVICE : LC_HOST, dt, nd, shape, 'C', s, FNAME);
  lc_matmul_plan(&a->lay, &b->lay, &c, &nd, shape, err);   /* the copies' strides */
  c.dtype = dt;
  lc_matmul_output(&c, &target->lay);
  lc_matmul_collapse(&c);

  if (c.k == 0) {                 /* sums of nothing */
    static const unsigned char zero[8];
    lc_fill_raw(L, target, zero, s, FNAME);
  } else if (!device) {
    lc_pending_wait(L, a, false, FNAME);
    lc_pending_wait(L, b, false, FNAME);
    lc_pending_wait(L, target, true, FNAME);
    c.a.data = lc_array_data(a);
    c.b.data = lc_array_data(b);
    c.c.data = lc_array_data(target);
    if (lc_matmul_host(&c)) lc_error(L, FNAME, "out of host memory");
  } else {
    if (be->matmul == NULL) lc_error(L, FNAME, "the %s backend has no matrix products", be->name);
    lc_buffer_use(L, a->buf, s, FNAME);
    lc_buffer_use(L, b->buf, s, FNAME);
    lc_buffer_use(L, target->buf, s, FNAME);
    c.a.data = lc_array_device_data(a);
    c.b.data = lc_array_device_data(b);
    c.c.data = lc_array_device_data(target);
    if (be->matmul(&c, s, err)) lc_error(L, FNAME, "%s", err);
    lc_pending_add(a->buf, s, false);
    lc_pending_add(b->buf, s, false);
    lc_pending_add(target->buf, s, true);
  }
  if (target != out) lc_copy_array(L, out, target, s, FNAME);
  lua_pushvalue(L, res_idx);
  return 1;
}

/***
What computes device matrix products.
@function blas
@treturn string `"cublas <version>"`; on the simulator `"blas <path>"`, the
CPU's BLAS and the file it was loaded from (host products use it too); or
`"builtin"` (the library's own kernel)
@treturn string why no BLAS is used (with `"builtin"` only; nil otherwise):
no cuBLAS, `LUACUDA_CUBLAS=0`, no `libblas.so.3`, `LUACUDA_CPU_BLAS=0`
@raise does not raise
@usage print(luacuda.blas())
*/

/* blas() -> "cublas 13.1.0", or "builtin" and why */
static int l_blas(lua_State *L) {
  const lc_backend *be = lc_backend_get(NULL);
  char name[LC_ERRLEN], why[LC_ERRLEN];
  if (be->blas && be->blas(name, why)) {
    lua_pushstring(L, name);
    return 1;
  }
  lua_pushliteral(L, "builtin");
  if (be->blas) lua_pushstring(L, why);
  else lua_pushfstring(L, "the %s backend computes matrix products with the library's own "
                       "tiled kernel", be->name);
  return 2;
}

void lc_matmul_open(lua_State *L) {
  static const luaL_Reg fns[] = {{"matmul", l_matmul}, {"blas", l_blas}, {NULL, NULL}};
  lc_setfuncs(L, fns);
  static const luaL_Reg methods[] = {{"matmul", l_matmul}, {NULL, NULL}};
  lc_array_add_methods(L, methods);
}
