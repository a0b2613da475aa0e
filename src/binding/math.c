/*
** math: array math's elementwise operations for Lua: the operators (+ - * /
** // % ^ and unary -), luacuda.add ... luacuda.where, the comparisons as
** methods (a:lt(b): Lua makes __lt's result one boolean), a:astype and
** luacuda.result_type. base/ufunc.c chooses the dtypes (NumPy 2's rules,
** Lua numbers weak); host and pinned arrays compute here on the host,
** device-accessible ones (device, managed, mapped) on the backend, queued
** on the stream given or the default stream.
*/
#include "array.h"

#include <string.h>

#include "gate.h"
#include "pending.h"
#include "ufunc.h"
#include "stream.h"
#include "device.h"
#include "copy.h"

/* the operands' memory: host-side (host, pinned) or device-side */
static bool device_side(lc_kind k) { return lc_kind_device_accessible(k); }

typedef struct operands {
  int nin;
  int idx[3];                 /* stack slots */
  lc_array *a[3];             /* NULL for a Lua value */
  lc_opd_type t[3];
  lc_array *out;              /* given, or NULL */
  int out_slot;               /* its stack slot */
  lc_stream *stream;          /* given, or NULL */
  lc_casting casting;         /* of the result into out (same_kind unless given) */
  bool device;                /* the computation's side */
  lc_kind kind;               /* the result's kind */
  const lc_backend *be;
} operands;

static const char *kind_name(lc_kind k) { return lc_kind_names[k]; }

static const char *const ordinal[] = {"first", "second", "third"};

/* Device arrays of two devices, or of a device not current: the error
** names the operands, their devices and the copy that joins them. */
static void check_devices(lua_State *L, const operands *o, const char *fname) {
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
static void read_inputs(lua_State *L, operands *o, int first, int nin, const char *fname) {
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
static void read_options(lua_State *L, operands *o, int idx, const char *fname) {
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
static void read_tail(lua_State *L, operands *o, int from, const char *fname) {
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
      read_options(L, o, idx, fname);
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
static void scalar_operand(lua_State *L, const operands *o, int i, const lc_dtype *as,
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
  op->dtype = want;
  op->data = NULL;
  lc_cast_host(want, (char *)op->value, want->size, as, (const char *)elem, as->size, 1);
}

/* Broadcast the input arrays' shapes. */
static int broadcast(lua_State *L, const operands *o, int64_t *shape, const char *fname) {
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

static bool same_shape(int nd, const int64_t *shape, const lc_layout *l) {
  if (l->ndim != nd) return false;
  for (int i = 0; i < nd; i++)
    if (l->shape[i] != shape[i]) return false;
  return true;
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
static void apply(lua_State *L, lc_ufunc_op op, operands *o, const lc_dtype *cast_to,
                  const char *fname) {
  lc_ufunc_types types;
  char err[LC_ERRLEN];
  if (lc_ufunc_resolve(op, o->t, cast_to, &types, err)) lc_error(L, fname, "%s", err);
  const lc_dtype *loop = types.in[op == LC_UF_WHERE ? 1 : 0];
  if (!lc_ufunc_has_loop(op, loop))
    lc_error(L, fname, "no %s loop for %s (every loop dtype should have one)", lc_ufuncs[op].name,
             loop->name);
  int64_t shape[LC_MAXDIM];
  int nd = broadcast(L, o, shape, fname);

  lc_ufunc_call c;
  memset(&c, 0, sizeof c);
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
    out = lc_array_empty(L, o->kind, types.out, nd, shape, 'C', s, fname);
    out_idx = lua_gettop(L);
  }

  /* inputs that the output overwrites in another layout are read from a
  ** copy */
  for (int i = 0; i < o->nin; i++) {
    if (!o->a[i]) continue;
    lc_layout lay;
    if (lc_layout_broadcast(&o->a[i]->lay, o->a[i]->dtype->size, nd, shape, &lay, err))
      lc_error(L, fname, "%s", err);
    if (o->out && overlaps(out, o->a[i], &lay)) {
      lc_array *copy = lc_array_empty(L, lc_array_kind(o->a[i]), o->a[i]->dtype,
                                      o->a[i]->lay.ndim, o->a[i]->lay.shape, 'C', s, fname);
      lc_copy_array(L, copy, o->a[i], s, fname);
      o->a[i] = copy;             /* stays on the stack until the call returns */
      lc_layout_broadcast(&copy->lay, copy->dtype->size, nd, shape, &lay, err);
    }
    c.in[i].dtype = o->a[i]->dtype;
    c.in[i].lay = lay;
  }
  c.out.dtype = out->dtype;
  c.out.lay = out->lay;

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

/* ---- the Lua functions ------------------------------------------------------ */

/* luacuda.<op>(inputs... [, out] [, stream]); upvalue 1: the op */
static int l_ufunc(lua_State *L) {
  lc_ufunc_op op = (lc_ufunc_op)lua_tointeger(L, lc_upvalueindex(1));
  const char *fname = lc_ufuncs[op].name;
  int nin = lc_ufuncs[op].nin;
  if (op == LC_UF_WHERE && lua_gettop(L) == 1 && lc_array_test(L, 1))
    return lc_gather_nonzero(L, fname);    /* where(cond): nonzero's indices */
  if (lua_gettop(L) < nin)
    lc_error(L, fname, "takes %d operand%s, got %d", nin, nin == 1 ? "" : "s", lua_gettop(L));
  operands o;
  read_inputs(L, &o, 1, nin, fname);
  read_tail(L, &o, nin + 1, fname);
  apply(L, op, &o, NULL, fname);
  return 1;
}

/* the operators: __add(x, y) ... (either may be the array); upvalue 1: the
** op, upvalue 2: its Lua spelling for messages */
static int l_operator(lua_State *L) {
  lc_ufunc_op op = (lc_ufunc_op)lua_tointeger(L, lc_upvalueindex(1));
  const char *fname = lua_tostring(L, lc_upvalueindex(2));
  int nin = lc_ufuncs[op].nin;
  lua_settop(L, nin);
  operands o;
  read_inputs(L, &o, 1, nin, fname);
  o.out = NULL;
  o.stream = NULL;
  o.casting = LC_CAST_SAME_KIND;
  apply(L, op, &o, NULL, fname);
  return 1;
}

/* How an operand of a comparison operator reads in its error: an array
** as a or b, another value as Lua writes it. */
static const char *operand_text(lua_State *L, int idx, const char *name) {
  if (lc_array_test(L, idx)) return name;
  if (lua_type(L, idx) == LUA_TNUMBER || lua_type(L, idx) == LUA_TBOOLEAN)
    return luaL_tolstring(L, idx, NULL);     /* left on the stack */
  return lc_typename(L, idx);
}

/* x < y and x <= y, which Lua also runs for y > x and y >= x: Lua turns
** the metamethod's result into one boolean, so the operator cannot give an
** array. An error that names the method to write instead, in the spelling
** the user most likely wrote (an array on the left); upvalue 1: true for
** <=. */
static int l_compare_operator(lua_State *L) {
  bool le = lua_toboolean(L, lc_upvalueindex(1));
  lua_settop(L, 2);
  const char *op = le ? "<=" : "<", *turned = le ? ">=" : ">";
  const char *x = operand_text(L, 1, "a"), *y = operand_text(L, 2, lc_array_test(L, 1) ? "b" : "a");
  if (lc_array_test(L, 1))
    lc_error(L, le ? "le (<=)" : "lt (<)", "Lua makes a comparison one boolean, so `%s %s "
                    "%s` cannot give an array: write %s:%s(%s)", x, op, y, x, le ? "le" : "lt", y);
  lc_error(L, le ? "ge (>=)" : "gt (>)", "Lua makes a comparison one boolean, so `%s %s %s` "
           "cannot give an array: write %s:%s(%s)", y, turned, x, y, le ? "ge" : "gt", x);
  return 0;
}

/*** @module luacuda */

/*** @type Array */

/***
`a < b`, `a <= b`, `a > b`, `a >= b`: an error naming the method to write
(`a:lt(b)`, `a:le(b)`, `a:gt(b)`, `a:ge(b)`): Lua makes a comparison's
result one boolean, so these operators cannot give an array.
@function Array:__lt
@raise `luacuda.gt (>): Lua makes a comparison one boolean, so `a > 2` cannot give an array: write a:gt(2)`
@usage local ok, err = pcall(function() return luacuda.arange(3) > 1 end)
print(err)   -- ... write a:gt(1)
*/

/***
`a <= b` and `a >= b`: an error naming `a:le(b)` or `a:ge(b)`, as @{Array:__lt}.
@function Array:__le
@raise `luacuda.ge (>=): Lua makes a comparison one boolean, so `a >= 2` cannot give an array: write a:ge(2)`
@usage local ok = pcall(function() return luacuda.arange(3) >= 1 end)
assert(not ok)
*/

/***
A new array of the same kind and shape with the elements converted to
`dtype` (C's conversions; float to integer truncates).
@function Array:astype
@tparam string dtype the new dtype (not a record)
@tparam[opt] Stream|table stream queue the work on it; or options `{out = Array, stream = Stream}`:
`out` an array of `dtype` and `a`'s shape to write (any kind on `a`'s side)
@treturn Array a new array, or `out`
@raise `luacuda.astype: cannot convert float32 to <record>: records convert field by field ...`;
an unknown dtype; `luacuda.astype: out= must be of the dtype asked, float32, got int32`
@usage local f = luacuda.arange(3):astype("float32")
*/

/*** @section end */

/* a:astype(dtype [, stream | {out =, stream =}]) */
static int array_astype(lua_State *L) {
  lc_array *a = lc_array_check(L, 1, "astype");
  const lc_dtype *dt = lc_dtype_check(L, 2, "astype");
  if (dt->rec || a->dtype->rec)
    lc_error(L, "astype", "cannot convert %s to %s: records convert field by field (assign "
             "the fields)", a->dtype->name, dt->name);
  lua_settop(L, 3);
  operands o;
  read_inputs(L, &o, 1, 1, "astype");
  o.out = NULL;
  o.stream = NULL;
  o.casting = LC_CAST_NO;      /* out= is of the dtype asked */
  if (lua_type(L, 3) == LUA_TTABLE && lua_getmetatable(L, 3) == 0) {
    static const char *const known[] = {"out", "stream", NULL};
    lc_check_opts(L, 3, known, "astype");
    read_options(L, &o, 3, "astype");
    if (o.out && o.out->dtype != dt)
      lc_error(L, "astype", "out= must be of the dtype asked, %s, got %s", dt->name,
               o.out->dtype->name);
  } else {
    o.stream = lc_opt_stream(L, 3, "astype");
  }
  apply(L, LC_UF_CAST, &o, dt, "astype");
  return 1;
}

/***
The dtype that array math gives for these operands (NumPy 2's promotion:
arrays and dtype names are strong, Lua numbers and booleans weak).
@function result_type
@param ... arrays, dtype names, numbers or booleans (1 to 64)
@treturn string the dtype's name
@raise `luacuda.result_type: needs at least one operand`; an operand of another
type; a record dtype (`does not promote`)
@usage assert(luacuda.result_type("int32", "float32") == "float64")
assert(luacuda.result_type("int8", 1) == "int8")
*/

/* luacuda.result_type(...): arrays, dtype names (strong), numbers (weak),
** booleans */
static int l_result_type(lua_State *L) {
  int n = lua_gettop(L);
  if (n == 0) lc_error(L, "result_type", "needs at least one operand");
  if (n > 64) lc_error(L, "result_type", "at most 64 operands, got %d", n);
  lc_opd_type t[64];
  for (int i = 0; i < n; i++) {
    int idx = i + 1;
    lc_array *a = lc_array_test(L, idx);
    if (a) {
      lc_array_check(L, idx, "result_type");
      t[i].kind = LC_OPD_ARRAY;
      t[i].dtype = a->dtype;
    } else if (lua_type(L, idx) == LUA_TSTRING) {
      t[i].kind = LC_OPD_ARRAY;
      t[i].dtype = lc_dtype_check(L, idx, "result_type");
    } else if (lua_type(L, idx) == LUA_TNUMBER) {
      t[i].kind = lua_isinteger(L, idx) ? LC_OPD_INT : LC_OPD_FLOAT;
    } else if (lua_type(L, idx) == LUA_TBOOLEAN) {
      t[i].kind = LC_OPD_BOOL;
    } else {
      lc_error(L, "result_type", "operand %d must be an array, a dtype name, a number or a "
               "boolean, got %s", idx, lc_typename(L, idx));
    }
    if (t[i].kind == LC_OPD_ARRAY && t[i].dtype->rec)
      lc_error(L, "result_type", "operand %d is of the record dtype %s, which does not promote",
               idx, t[i].dtype->name);
  }
  lc_dtype_push(L, lc_result_type(n, t));
  return 1;
}

/***
Elementwise the sum `x + y`.

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function add
@tparam Array|number|boolean x an operand
@tparam Array|number|boolean y an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.add: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.add(luacuda.arange(3), 10))  -- {10, 11, 12}
*/

/***
Elementwise the difference `x - y` (not for bool).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function subtract
@tparam Array|number|boolean x an operand
@tparam Array|number|boolean y an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.subtract: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.subtract(luacuda.arange(3), 1))  -- {-1, 0, 1}
*/

/***
Elementwise the product `x * y`.

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function multiply
@tparam Array|number|boolean x an operand
@tparam Array|number|boolean y an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.multiply: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.multiply(luacuda.arange(3), 2))  -- {0, 2, 4}
*/

/***
Elementwise the true quotient `x / y` (integers give float64).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function divide
@tparam Array|number|boolean x an operand
@tparam Array|number|boolean y an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.divide: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.divide(luacuda.arange(3), 2))  -- {0.0, 0.5, 1.0}
*/

/***
Elementwise the quotient rounded toward minus infinity, as Lua's `//` (an integer divided by zero gives 0, as NumPy).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function floor_divide
@tparam Array|number|boolean x an operand
@tparam Array|number|boolean y an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.floor_divide: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.floor_divide(luacuda.array({7, -7}), 2))  -- {3, -4}
*/

/***
Elementwise the remainder with the sign of `y`, as Lua's `%`.

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function mod
@tparam Array|number|boolean x an operand
@tparam Array|number|boolean y an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.mod: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.mod(luacuda.array({7, -7}), 3))  -- {1, 2}
*/

/***
Elementwise `x` to the power `y` (not for bool).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function power
@tparam Array|number|boolean x an operand
@tparam Array|number|boolean y an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.power: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.power(luacuda.arange(4), 2))  -- {0, 1, 4, 9}
*/

/***
Elementwise the larger of `x` and `y` (NaN when either is NaN).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function maximum
@tparam Array|number|boolean x an operand
@tparam Array|number|boolean y an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.maximum: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.maximum(luacuda.arange(4), 2))  -- {2, 2, 2, 3}
*/

/***
Elementwise the smaller of `x` and `y` (NaN when either is NaN).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function minimum
@tparam Array|number|boolean x an operand
@tparam Array|number|boolean y an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.minimum: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.minimum(luacuda.arange(4), 2))  -- {0, 1, 2, 2}
*/

/***
Elementwise the angle of the point `(y, x)`: `atan2(x, y)` is C's `atan2(x, y)`, in radians (a float dtype).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function atan2
@tparam Array|number|boolean x an operand
@tparam Array|number|boolean y an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.atan2: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.atan2(luacuda.ones({2}), 1))  -- {0.785..., 0.785...}
*/

/***
Elementwise `sqrt(x^2 + y^2)` without undue overflow (a float dtype).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function hypot
@tparam Array|number|boolean x an operand
@tparam Array|number|boolean y an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.hypot: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.hypot(luacuda.full({1}, 3), 4))  -- {5.0}
*/

/***
Elementwise `x and y` on truth values (non-zero is true); bool.

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function logical_and
@tparam Array|number|boolean x an operand
@tparam Array|number|boolean y an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.logical_and: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.logical_and(luacuda.array({true, false}), true))  -- {true, false}
*/

/***
Elementwise `x or y` on truth values; bool.

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function logical_or
@tparam Array|number|boolean x an operand
@tparam Array|number|boolean y an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.logical_or: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.logical_or(luacuda.array({true, false}), false))  -- {true, false}
*/

/***
Elementwise exactly one of `x`, `y` true; bool.

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function logical_xor
@tparam Array|number|boolean x an operand
@tparam Array|number|boolean y an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.logical_xor: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.logical_xor(luacuda.array({true, false}), true))  -- {false, true}
*/

/***
Elementwise `-x` (not for bool).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function negative
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.negative: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.negative(luacuda.arange(3)))  -- {0, -1, -2}
*/

/***
Elementwise the absolute value.

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function abs
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.abs: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.abs(luacuda.array({-2, 3})))  -- {2, 3}
*/

/***
Elementwise -1, 0 or 1 by the sign of `x` (NaN stays NaN).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function sign
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.sign: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.sign(luacuda.array({-2, 0, 3})))  -- {-1, 0, 1}
*/

/***
Elementwise the square root (a float dtype: integers give float64).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function sqrt
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.sqrt: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.sqrt(luacuda.array({4, 9})))  -- {2.0, 3.0}
*/

/***
Elementwise e to the power `x` (a float dtype).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
Host arrays (and the simulator's device arrays) compute float32 and float64
with vectorised loops of their own, within 1 ulp of e^x; a GPU computes
them with CUDA's `exp`.
@function exp
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.exp: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.exp(luacuda.zeros({2})))  -- {1.0, 1.0}
*/

/***
Elementwise the natural logarithm (a float dtype).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function log
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.log: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.log(luacuda.ones({2})))  -- {0.0, 0.0}
*/

/***
Elementwise the base-2 logarithm (a float dtype).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function log2
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.log2: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.log2(luacuda.array({8.0})))  -- {3.0}
*/

/***
Elementwise the base-10 logarithm (a float dtype).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function log10
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.log10: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.log10(luacuda.array({100.0})))  -- {2.0}
*/

/***
Elementwise the sine, in radians (a float dtype).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function sin
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.sin: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.sin(luacuda.zeros({2})))  -- {0.0, 0.0}
*/

/***
Elementwise the cosine, in radians (a float dtype).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function cos
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.cos: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.cos(luacuda.zeros({2})))  -- {1.0, 1.0}
*/

/***
Elementwise the tangent, in radians (a float dtype).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function tan
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.tan: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.tan(luacuda.zeros({2})))  -- {0.0, 0.0}
*/

/***
Elementwise the hyperbolic tangent (a float dtype).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function tanh
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.tanh: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.tanh(luacuda.zeros({2})))  -- {0.0, 0.0}
*/

/***
Elementwise the largest integral value not above `x` (a float dtype).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function floor
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.floor: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.floor(luacuda.array({1.5, -1.5})))  -- {1.0, -2.0}
*/

/***
Elementwise the smallest integral value not below `x` (a float dtype).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function ceil
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.ceil: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.ceil(luacuda.array({1.5, -1.5})))  -- {2.0, -1.0}
*/

/***
Elementwise `log(1 + x)`, accurate for `x` near 0 (a float dtype: integers give float64, 8-bit ones float16).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function log1p
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.log1p: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.log1p(luacuda.array({0.0, 1e-10})))  -- {0.0, 1e-10}
*/

/***
Elementwise `exp(x) - 1`, accurate for `x` near 0 (a float dtype).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function expm1
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.expm1: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.expm1(luacuda.array({0.0, 1e-10})))  -- {0.0, 1e-10}
*/

/***
Elementwise the nearest integral value, halves to even (a float dtype; see @{round} for decimals).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function rint
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.rint: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.rint(luacuda.array({0.5, 1.5, -2.5})))  -- {0.0, 2.0, -2.0}
*/

/***
Elementwise whether `x` is NaN: a bool array (integers and bools are never NaN).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function isnan
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.isnan: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.isnan(luacuda.array({1.0, 0/0})))  -- {false, true}
*/

/***
Elementwise whether `x` is plus or minus infinity: a bool array.

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function isinf
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.isinf: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.isinf(luacuda.array({1.0, -1/0})))  -- {false, true}
*/

/***
Elementwise whether `x` is neither infinite nor NaN: a bool array.

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function isfinite
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.isfinite: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.isfinite(luacuda.array({1.0, 1/0, 0/0})))  -- {true, false, false}
*/

/***
Elementwise `log(exp(x) + exp(y))`, without overflow for large operands (a float dtype).

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function logaddexp
@tparam Array|number|boolean x an operand
@tparam Array|number|boolean y an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.logaddexp: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.logaddexp(luacuda.array({1000.0}), 1000))  -- {1000.69314718}
*/

/***
Elementwise `not x` on truth values; bool.

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function logical_not
@tparam Array|number|boolean x an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.logical_not: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.logical_not(luacuda.array({true, false})))  -- {false, true}
*/

/***
Elementwise `x` limited to `[lo, hi]`: `minimum(maximum(x, lo), hi)`.

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
@function clip
@tparam Array|number|boolean x an operand
@tparam Array|number|boolean lo an operand
@tparam Array|number|boolean hi an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.clip: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.clip(luacuda.arange(5), 1, 3))  -- {1, 1, 2, 3, 3}
*/

/***
Elementwise `y` where `cond` is true, else `z`; the dtype is that of `y` and `z`.

Array math's rules hold: operands, broadcasting, NEP 50 promotion, which
side computes, `out` and `stream` ([docs/guide/array-math.md](../../guide/array-math.md)).
With `cond` alone, `where(cond)` is @{nonzero}`(cond)`: a table of the
1-based indices of its true elements, one int64 array per axis.
@function where
@tparam Array|number|boolean cond an operand
@tparam Array|number|boolean y an operand
@tparam Array|number|boolean z an operand
@tparam[opt] Array|table out the array to write (the result's shape; a dtype the result casts to),
or options `{out =, stream =, casting =}` (the guide's "`out` and `stream`")
@tparam[opt] Stream stream queue the work on it (device-accessible operands)
@treturn Array the result (`out` when given)
@raise `luacuda.where: <cause>`: a dtype the operation does not take,
shapes that do not broadcast, host and device operands mixed, a number
the dtype cannot hold, a bad `out`
@usage print(luacuda.where(luacuda.array({true, false}), 1, 2))  -- {1, 2}
*/

/*** @type Array */

/***
Elementwise `a` equal to `y`: a bool array (Lua's `==` on arrays
cannot give an array, so the comparisons are methods). Broadcasts as @{add}.
@function Array:eq
@tparam Array|number|boolean y the other operand
@tparam[opt] Array out a bool array to write
@tparam[opt] Stream stream queue the work on it
@treturn Array bool
@raise `luacuda.eq: <cause>`: shapes that do not broadcast, host and device operands mixed
@usage print(luacuda.arange(3):eq(1))
*/

/***
Elementwise `a` not equal to `y`: a bool array (Lua's `~=` on arrays
cannot give an array, so the comparisons are methods). Broadcasts as @{add}.
@function Array:ne
@tparam Array|number|boolean y the other operand
@tparam[opt] Array out a bool array to write
@tparam[opt] Stream stream queue the work on it
@treturn Array bool
@raise `luacuda.ne: <cause>`: shapes that do not broadcast, host and device operands mixed
@usage print(luacuda.arange(3):ne(1))
*/

/***
Elementwise `a` less than `y`: a bool array (Lua's `<` on arrays
cannot give an array, so the comparisons are methods). Broadcasts as @{add}.
@function Array:lt
@tparam Array|number|boolean y the other operand
@tparam[opt] Array out a bool array to write
@tparam[opt] Stream stream queue the work on it
@treturn Array bool
@raise `luacuda.lt: <cause>`: shapes that do not broadcast, host and device operands mixed
@usage print(luacuda.arange(3):lt(1))
*/

/***
Elementwise `a` less than or equal to `y`: a bool array (Lua's `<=` on arrays
cannot give an array, so the comparisons are methods). Broadcasts as @{add}.
@function Array:le
@tparam Array|number|boolean y the other operand
@tparam[opt] Array out a bool array to write
@tparam[opt] Stream stream queue the work on it
@treturn Array bool
@raise `luacuda.le: <cause>`: shapes that do not broadcast, host and device operands mixed
@usage print(luacuda.arange(3):le(1))
*/

/***
Elementwise `a` greater than `y`: a bool array (Lua's `>` on arrays
cannot give an array, so the comparisons are methods). Broadcasts as @{add}.
@function Array:gt
@tparam Array|number|boolean y the other operand
@tparam[opt] Array out a bool array to write
@tparam[opt] Stream stream queue the work on it
@treturn Array bool
@raise `luacuda.gt: <cause>`: shapes that do not broadcast, host and device operands mixed
@usage print(luacuda.arange(3):gt(1))
*/

/***
Elementwise `a` greater than or equal to `y`: a bool array (Lua's `>=` on arrays
cannot give an array, so the comparisons are methods). Broadcasts as @{add}.
@function Array:ge
@tparam Array|number|boolean y the other operand
@tparam[opt] Array out a bool array to write
@tparam[opt] Stream stream queue the work on it
@treturn Array bool
@raise `luacuda.ge: <cause>`: shapes that do not broadcast, host and device operands mixed
@usage print(luacuda.arange(3):ge(1))
*/

/***
`x + y`: @{add} (either operand may be the array, the other an array or a number).
@function Array:__add
@treturn Array a new array
@raise `luacuda.add (+): <cause>`, as @{add}
@usage local b = luacuda.arange(3) + 2
*/

/***
`x - y`: @{subtract} (either operand may be the array, the other an array or a number).
@function Array:__sub
@treturn Array a new array
@raise `luacuda.subtract (-): <cause>`, as @{subtract}
@usage local b = luacuda.arange(3) - 2
*/

/***
`x * y`: @{multiply} (either operand may be the array, the other an array or a number).
@function Array:__mul
@treturn Array a new array
@raise `luacuda.multiply (*): <cause>`, as @{multiply}
@usage local b = luacuda.arange(3) * 2
*/

/***
`x / y`: @{divide} (either operand may be the array, the other an array or a number).
@function Array:__div
@treturn Array a new array
@raise `luacuda.divide (/): <cause>`, as @{divide}
@usage local b = luacuda.arange(3) / 2
*/

/***
`x // y`: @{floor_divide} (either operand may be the array, the other an array or a number).
@function Array:__idiv
@treturn Array a new array
@raise `luacuda.floor_divide (//): <cause>`, as @{floor_divide}
@usage local b = luacuda.arange(3) // 2
*/

/***
`x % y`: @{mod} (either operand may be the array, the other an array or a number).
@function Array:__mod
@treturn Array a new array
@raise `luacuda.mod (%): <cause>`, as @{mod}
@usage local b = luacuda.arange(3) % 2
*/

/***
`x ^ y`: @{power} (either operand may be the array, the other an array or a number).
@function Array:__pow
@treturn Array a new array
@raise `luacuda.power (^): <cause>`, as @{power}
@usage local b = luacuda.arange(3) ^ 2
*/

/***
`-a`: @{negative}.
@function Array:__unm
@treturn Array a new array
@raise `luacuda.negative (unary -): <cause>`, as @{negative}
@usage local b = -luacuda.arange(3)
*/

/*** @section end */

void lc_math_open(lua_State *L) {
  static const luaL_Reg ufunc = {"ufunc", l_ufunc};
  for (int op = 0; op < LC_UF_NOPS; op++) {
    if (op == LC_UF_CAST || lc_ufuncs[op].family == LC_UFAM_CMP) continue;
    lua_pushinteger(L, op);
    lc_pushfunction(L, &ufunc, 1);
    lua_setfield(L, -2, lc_ufuncs[op].name);
  }
  static const luaL_Reg fns[] = {{"result_type", l_result_type}, {NULL, NULL}};
  lc_setfuncs(L, fns);

  /* the comparisons as methods, a:lt(b [, out] [, stream]) */
  lua_getfield(L, LUA_REGISTRYINDEX, "luacuda.array.methods");
  for (int op = 0; op < LC_UF_NOPS; op++) {
    if (lc_ufuncs[op].family != LC_UFAM_CMP) continue;
    lua_pushinteger(L, op);
    lc_pushfunction(L, &ufunc, 1);
    lua_setfield(L, -2, lc_ufuncs[op].name);
  }
  lua_pop(L, 1);
  static const luaL_Reg methods[] = {{"astype", array_astype}, {NULL, NULL}};
  lc_array_add_methods(L, methods);

  /* the operators */
  static const struct { const char *event, *spelling; lc_ufunc_op op; } ops[] = {
    {"__add", "+", LC_UF_ADD}, {"__sub", "-", LC_UF_SUBTRACT},
    {"__mul", "*", LC_UF_MULTIPLY}, {"__div", "/", LC_UF_DIVIDE},
    {"__idiv", "//", LC_UF_FLOOR_DIVIDE}, {"__mod", "%", LC_UF_MOD},
    {"__pow", "^", LC_UF_POWER}, {"__unm", "unary -", LC_UF_NEGATIVE},
  };
  static const luaL_Reg oper = {"operator", l_operator};
  luaL_getmetatable(L, LC_ARRAY_MT);
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    lua_pushinteger(L, ops[i].op);
    lua_pushfstring(L, "%s (%s)", lc_ufuncs[ops[i].op].name, ops[i].spelling);
    lc_pushfunction(L, &oper, 2);
    lua_setfield(L, -2, ops[i].event);
  }
  static const luaL_Reg compare = {"compare_operator", l_compare_operator};
  lua_pushboolean(L, 0);
  lc_pushfunction(L, &compare, 1);
  lua_setfield(L, -2, "__lt");
  lua_pushboolean(L, 1);
  lc_pushfunction(L, &compare, 1);
  lua_setfield(L, -2, "__le");
  lua_pop(L, 1);
}
