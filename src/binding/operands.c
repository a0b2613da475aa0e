/*
** operands: array math's operands and the call of an operation on them
** (operands.h); binding/math.c's Lua functions read their arguments and
** run their operation through these.
*/
#include "operands.h"

#include <stddef.h>
#include <string.h>

#include "gate.h"
#include "pending.h"
#include "stream.h"
#include "device.h"
#include "copy.h"

/* the operands' memory: host-side (host, pinned) or device-side */
static bool device_side(lc_kind k) { return lc_kind_device_accessible(k); }

static const char *kind_name(lc_kind k) { return lc_kind_names[k]; }

static const char *const ordinal[] = {"first", "second", "third"};

/* Device arrays of two devices, or of a device not current: the error
** names the operands, their devices and the copy that joins them. */
static void check_devices(lua_State *L, const lc_operands *o, const char *fname) {
  int dev = -1, at = -1;
  for (int i = 0; i < o->nin; i++) {
    const lc_array *a = o->a[i];
    if (!a || lc_array_kind(a) != LC_DEVICE) continue;
    if (dev >= 0 && a->buf->device != dev)
      lc_error(L, fname, "operand %d is on device %d and operand %d on device %d: array math "
               "runs on one device (copy one over first: luacuda.to_device(y, {device = %d}))",
               at + 1, dev + 1, i + 1, a->buf->device + 1, dev + 1);
    if (dev < 0) {
      dev = a->buf->device;
      at = i;
    }
  }
  if (dev >= 0 && dev != o->be->current_device())
    lc_error(L, fname, "operand %d is on device %d, but device %d is current (luacuda.device(%d) "
             "makes it current, or copy the operands: luacuda.to_device(x, {device = %d}))",
             at + 1, dev + 1, o->be->current_device() + 1, dev + 1,
             o->be->current_device() + 1);
}

/* Read the inputs at first..first+nin-1. */
void lc_operands_inputs(lua_State *L, lc_operands *o, int first, int nin, const char *fname) {
  o->nin = nin;
  int arrays = 0, first_array = -1;
  for (int i = 0; i < nin; i++) {
    int idx = first + i;
    o->idx[i] = idx;
    o->a[i] = lc_array_test(L, idx);
    if (o->a[i]) {
      if (!lc_array_is_open(o->a[i]))
        lc_error(L, fname, "operand %d (the %s argument) is a closed array", i + 1,
                 ordinal[i]);
      lc_array *a = o->a[i];     /* an open array: checked above */
      o->t[i].kind = LC_OPD_ARRAY;
      o->t[i].dtype = a->dtype;
      if (arrays++ == 0) {
        first_array = i;
        o->device = device_side(lc_array_kind(a));
        o->kind = lc_array_kind(a);
        o->be = a->buf->backend;
      } else if (device_side(lc_array_kind(a)) != o->device) {
        const lc_array *f = o->a[first_array];
        lc_error(L, fname, "operand %d is a %s array and operand %d a %s array: they compute "
                 "on different sides (copy one first: to_device or copy_to_host)",
                 first_array + 1, kind_name(lc_array_kind(f)), i + 1, kind_name(lc_array_kind(a)));
      } else if (lc_array_kind(a) != o->kind) {
        o->kind = o->device ? LC_DEVICE : LC_HOST;   /* mixed kinds: the plain one */
      }
      continue;
    }
    switch (lua_type(L, idx)) {
      case LUA_TNUMBER:
        o->t[i].kind = lua_isinteger(L, idx) ? LC_OPD_INT : LC_OPD_FLOAT;
        break;
      case LUA_TBOOLEAN: o->t[i].kind = LC_OPD_BOOL; break;
      case LUA_TTABLE:
        lc_error(L, fname, "operand %d is a table: make it an array first (luacuda.array(t) "
                 "or to_device(t), with {dtype = ...} to choose its dtype)", i + 1);
        break;
      default:
        lc_error(L, fname, "operand %d must be an array, a number or a boolean, got %s", i + 1,
                 lc_typename(L, idx));
    }
    o->t[i].dtype = NULL;
  }
  if (arrays == 0)
    lc_error(L, fname, "needs an array among its operands (got only Lua values)");
  check_devices(L, o, fname);
}

/* An options table {out =, stream =, casting =} at idx (the values pushed:
** they stay on the stack while the call runs). */
void lc_operands_options(lua_State *L, lc_operands *o, int idx, const char *fname) {
  static const char *const known[] = {"out", "stream", "casting", NULL};
  lc_check_opts(L, idx, known, fname);
  if (lc_opt_get(L, idx, "out") != LUA_TNIL) {
    if (o->out) lc_error(L, fname, "the output is given twice (out= and an argument)");
    if (lc_array_test(L, -1) == NULL)
      lc_error(L, fname, "out= must be an array, got %s", lc_typename(L, -1));
    o->out = lc_array_check(L, -1, fname);
    o->out_slot = lua_gettop(L);
  }
  if (lc_opt_get(L, idx, "stream") != LUA_TNIL) {
    if (o->stream) lc_error(L, fname, "the stream is given twice (stream= and an argument)");
    o->stream = lc_opt_stream(L, -1, fname);
  }
  if (lc_opt_get(L, idx, "casting") != LUA_TNIL) {
    const char *c = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    int i = 0;
    while (c && lc_casting_names[i] && strcmp(c, lc_casting_names[i]) != 0) i++;
    if (c == NULL || lc_casting_names[i] == NULL)
      lc_error(L, fname, "casting must be 'no', 'equiv', 'safe', 'same_kind' or 'unsafe', "
               "got %s%s%s", c ? "'" : "", c ? c : lc_typename(L, -1), c ? "'" : "");
    o->casting = (lc_casting)i;
  }
}

/* The optional output array, stream and options table after the inputs,
** in any order. */
void lc_operands_tail(lua_State *L, lc_operands *o, int from, const char *fname) {
  o->out = NULL;
  o->stream = NULL;
  o->casting = LC_CAST_SAME_KIND;
  int top = lua_gettop(L);
  bool opts = false;
  for (int idx = from; idx <= top; idx++) {
    if (lua_isnil(L, idx)) continue;
    if (lc_array_test(L, idx) && o->out == NULL) {
      if (!lc_array_is_open(lc_array_test(L, idx)))
        lc_error(L, fname, "the output (argument %d) is a closed array", idx);
      o->out = lc_array_check(L, idx, fname);
      o->out_slot = idx;
      continue;
    }
    if (lua_type(L, idx) == LUA_TTABLE && !opts && lua_getmetatable(L, idx) == 0) {
      opts = true;
      lc_operands_options(L, o, idx, fname);
      continue;
    }
    if (o->stream == NULL) {
      o->stream = lc_opt_stream(L, idx, fname);
      continue;
    }
    lc_error(L, fname, "argument %d: expected an output array, a stream or an options table, "
             "got %s", idx, lc_typename(L, idx));
  }
}

/* The Lua value of input i as one element of `as` (NEP 50: a weak number
** takes the arrays' dtype, and must fit it; a boolean is a bool), then
** converted to the loop's dtype `want` into op->value. */
static void scalar_operand(lua_State *L, const lc_operands *o, int i, const lc_dtype *as,
                           const lc_dtype *want, lc_ufunc_operand *op, const char *fname) {
  unsigned char elem[16];
  char err[LC_ERRLEN];
  int idx = o->idx[i];
  if (lua_type(L, idx) == LUA_TBOOLEAN) {
    elem[0] = (unsigned char)lua_toboolean(L, idx);  /* a bool, converted below (0 or 1) */
    as = &lc_dtypes[LC_BOOL];
  } else if (as->kind == 'b' && lua_type(L, idx) == LUA_TNUMBER) {
    elem[0] = lua_tonumber(L, idx) != 0;            /* a condition or logical operand */
  } else if (lc_elem_convert(L, idx, as, elem, err)) {
    lc_error(L, fname, "operand %d: %s (a Lua number takes the dtype of the arrays it meets, "
             "NumPy's rule: make it an array of a wider dtype first)", i + 1, err);
  }
  op->scalar = true;
  memset(&op->lay, 0, sizeof op->lay);    /* stride 0 along every axis (collapse) */
  op->dtype = want;
  op->data = NULL;
  lc_cast_host(want, (char *)op->value, want->size, as, (const char *)elem, as->size, 1);
}

/* An operand with nothing set, but the axes of its layout (most of the
** call struct's 2 KB), which only lc_layout_broadcast, the output's copy
** or scalar_operand fill. */
static void operand_clear(lc_ufunc_operand *op) {
  op->data = NULL;
  op->dtype = NULL;
  op->scalar = false;
  memset(op->value, 0, sizeof op->value);
  op->lay.ndim = 0;
  op->lay.size = 0;
  op->lay.offset = 0;
}

/* A call with nothing set: its header and every operand, the inputs
** counted from the struct so the loop follows it. */
static void call_clear(lc_ufunc_call *c) {
  memset(c, 0, offsetof(lc_ufunc_call, in));
  for (size_t i = 0; i < sizeof c->in / sizeof c->in[0]; i++) operand_clear(&c->in[i]);
  operand_clear(&c->out);
}

/* l has exactly shape (nd axes) */
static bool same_shape(int nd, const int64_t *shape, const lc_layout *l) {
  if (l->ndim != nd) return false;
  for (int i = 0; i < nd; i++)
    if (l->shape[i] != shape[i]) return false;
  return true;
}

/* Every input an array of one dtype and one shape (a + b on arrays alike,
** the common case): their types come from lc_ufunc_types_same, and their
** shape is the result's, with no broadcasting to work out. */
static bool arrays_alike(const lc_operands *o) {
  const lc_array *a0 = o->a[0];
  if (a0 == NULL) return false;
  for (int i = 1; i < o->nin; i++) {
    const lc_array *a = o->a[i];
    if (a == NULL || a->dtype != a0->dtype || !same_shape(a0->lay.ndim, a0->lay.shape, &a->lay))
      return false;
  }
  return true;
}

/* Broadcast the input arrays' shapes. */
static int broadcast(lua_State *L, const lc_operands *o, bool alike, int64_t *shape,
                     const char *fname) {
  if (alike) {
    const lc_layout *l = &o->a[0]->lay;
    memcpy(shape, l->shape, sizeof *shape * (size_t)l->ndim);
    return l->ndim;
  }
  int ndims[3];
  const int64_t *shapes[3];
  int n = 0;
  for (int i = 0; i < o->nin; i++) {
    if (!o->a[i]) continue;
    ndims[n] = o->a[i]->lay.ndim;
    shapes[n++] = o->a[i]->lay.shape;
  }
  int nd;
  char err[LC_ERRLEN];
  if (lc_broadcast_shapes(n, ndims, shapes, &nd, shape, err)) lc_error(L, fname, "%s", err);
  return nd;
}

/* Does writing out's elements change input a's before they are read?
** Only where they share memory (through one buffer or two: alias.c) in
** another layout: element by element in place is safe. */
static bool overlaps(const lc_array *out, const lc_array *a, const lc_layout *broadcast_lay) {
  return lc_arrays_overlap(out, &out->lay, a, broadcast_lay) &&
         !lc_arrays_same_view(out, &out->lay, a, broadcast_lay);
}

/* The call of op on the operands: types resolved, scalars converted, the
** output checked or allocated (pushed), then run. Returns with the output
** on top of the stack. */
void lc_operands_apply(lua_State *L, lc_ufunc_op op, lc_operands *o, const lc_dtype *cast_to,
                  const char *fname) {
  lc_ufunc_types types;
  char err[LC_ERRLEN];
  bool alike = arrays_alike(o);
  const lc_ufunc_types *known = cast_to == NULL && alike
                                ? lc_ufunc_types_same(op, o->a[0]->dtype) : NULL;
  if (known) types = *known;
  else {
    if (lc_ufunc_resolve(op, o->t, cast_to, &types, err)) lc_error(L, fname, "%s", err);
    const lc_dtype *loop = types.in[op == LC_UF_WHERE ? 1 : 0];
    if (!lc_ufunc_has_loop(op, loop))
      lc_error(L, fname, "no %s loop for %s (every loop dtype should have one)",
               lc_ufuncs[op].name, loop->name);
  }
  int64_t shape[LC_MAXDIM];
  int nd = broadcast(L, o, alike, shape, fname);

  lc_ufunc_call c;
  call_clear(&c);
  c.op = op;
  c.types = types;
  c.nin = o->nin;
  /* the dtype a weak number takes: the loop's (before float16 and
  ** bfloat16 compute in float32), which NumPy converts it to: int8 + 300
  ** is an error, int8 / 300 a float64 division; a comparison's, the
  ** promoted dtype of the arrays and the number */
  lc_opd_type strong[3];
  int ns = 0;
  for (int i = 0; i < o->nin; i++)
    if (o->a[i] && (op != LC_UF_WHERE || i > 0)) strong[ns++] = o->t[i];
  for (int i = 0; i < o->nin; i++) {
    if (o->a[i]) continue;
    const lc_dtype *as;
    if (lc_ufuncs[op].family == LC_UFAM_LOGIC || (op == LC_UF_WHERE && i == 0))
      as = &lc_dtypes[LC_BOOL];
    else if (lc_ufuncs[op].family == LC_UFAM_CAST)
      as = cast_to;
    else if (lc_ufuncs[op].family == LC_UFAM_CMP) {
      strong[ns] = o->t[i];
      as = lc_result_type(ns + 1, strong);
    } else {
      as = types.out;
    }
    scalar_operand(L, o, i, as, types.in[i], &c.in[i], fname);
  }

  /* the output */
  lc_array *out = o->out;
  if (out) {
    lc_check_current_device(L, out, "output", fname);
    if (device_side(lc_array_kind(out)) != o->device)
      lc_error(L, fname, "the output is a %s array, the operands compute on the %s: give an "
               "output of the operands' side", kind_name(lc_array_kind(out)),
               o->device ? "device" : "host");
    if (!same_shape(nd, shape, &out->lay)) {
      char want[LC_SHAPE_STRLEN], got[LC_SHAPE_STRLEN];
      lc_shape_format(want, sizeof want, nd, shape);
      lc_shape_format(got, sizeof got, out->lay.ndim, out->lay.shape);
      lc_error(L, fname, "the output must be an array of dtype %s and shape %s, got dtype %s "
               "and shape %s", types.out->name, want, out->dtype->name, got);
    }
    /* the result converted into the output's dtype as casting allows
    ** (NumPy's same_kind by default): the loops convert as they store */
    if (!lc_can_cast(types.out, out->dtype, o->casting))
      lc_error(L, fname, "cannot cast the result's dtype %s into the output's %s under "
               "casting '%s' (give {casting = 'unsafe'} to allow it)", types.out->name,
               out->dtype->name, lc_casting_names[o->casting]);
  }
  lc_stream *s = NULL;
  if (o->device) s = o->stream ? o->stream : o->be->default_stream();
  int out_idx;
  if (out) out_idx = o->out_slot;
  else {
    int like = 0;      /* an input array, whose metatable the output takes */
    for (int i = o->nin - 1; i >= 0; i--)
      if (o->a[i]) like = o->idx[i];
    out = lc_array_empty_like(L, like, o->kind, types.out, nd, shape, 'C', s, fname);
    out_idx = lua_gettop(L);
  }

  /* inputs that the output overwrites in another layout are read from a
  ** copy */
  for (int i = 0; i < o->nin; i++) {
    if (!o->a[i]) continue;
    lc_layout *lay = &c.in[i].lay;    /* broadcast in place: no copy of a layout */
    if (alike) lc_layout_copy(lay, &o->a[i]->lay);      /* the result's shape already */
    else if (lc_layout_broadcast(&o->a[i]->lay, o->a[i]->dtype->size, nd, shape, lay, err))
      lc_error(L, fname, "%s", err);
    if (o->out && overlaps(out, o->a[i], lay)) {
      lc_array *copy = lc_array_empty(L, lc_array_kind(o->a[i]), o->a[i]->dtype,
                                      o->a[i]->lay.ndim, o->a[i]->lay.shape, 'C', s, fname);
      lc_copy_array(L, copy, o->a[i], s, fname);
      o->a[i] = copy;             /* stays on the stack until the call returns */
      lc_layout_broadcast(&copy->lay, copy->dtype->size, nd, shape, lay, err);
    }
    c.in[i].dtype = o->a[i]->dtype;
  }
  c.out.dtype = out->dtype;
  lc_layout_copy(&c.out.lay, &out->lay);

  if (!o->device) {
    for (int i = 0; i < o->nin; i++)
      if (o->a[i]) {
        lc_pending_wait(L, o->a[i], false, fname);
        c.in[i].data = lc_array_data(o->a[i]);
      }
    lc_pending_wait(L, out, true, fname);
    c.out.data = lc_array_data(out);
    lc_ufunc_host(&c);
  } else {
    for (int i = 0; i < o->nin; i++)
      if (o->a[i]) {
        lc_buffer_use(L, o->a[i]->buf, s, fname);
        c.in[i].data = lc_array_device_data(o->a[i]);
      }
    lc_buffer_use(L, out->buf, s, fname);
    c.out.data = lc_array_device_data(out);
    if (o->be->ufunc == NULL)
      lc_error(L, fname, "the %s backend has no array math", o->be->name);
    if (o->be->ufunc(&c, s, err)) lc_error(L, fname, "%s", err);
    for (int i = 0; i < o->nin; i++)
      if (o->a[i]) lc_pending_add(o->a[i]->buf, s, false);
    lc_pending_add(out->buf, s, true);
  }
  lua_pushvalue(L, out_idx);
}

