/*
** math: array math's elementwise operations for Lua: the operators (+ - * /
** // % ^ and unary -), luacuda.add ... luacuda.where, the comparisons as
** methods (a:lt(b): Lua makes __lt's result one boolean), a:astype and
** luacuda.result_type. base/ufunc.c chooses the dtypes (NumPy 2's rules,
** Lua numbers weak); host and pinned arrays compute here on the host,
** device-accessible ones (device, managed, mapped) on the backend, queued
** on the stream given or the default stream. The operands are read and the
** operation run by operands.c.
*/
#include "operands.h"

#include <string.h>

#include "gate.h"
#include "stream.h"

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
  lc_operands o;
  lc_operands_inputs(L, &o, 1, nin, fname);
  lc_operands_tail(L, &o, nin + 1, fname);
  lc_operands_apply(L, op, &o, NULL, fname);
  return 1;
}

/* the operators: __add(x, y) ... (either may be the array); upvalue 1: the
** op, upvalue 2: its Lua spelling for messages */
static int l_operator(lua_State *L) {
  lc_ufunc_op op = (lc_ufunc_op)lua_tointeger(L, lc_upvalueindex(1));
  const char *fname = lua_tostring(L, lc_upvalueindex(2));
  int nin = lc_ufuncs[op].nin;
  lua_settop(L, nin);
  lc_operands o;
  lc_operands_inputs(L, &o, 1, nin, fname);
  o.out = NULL;
  o.stream = NULL;
  o.casting = LC_CAST_SAME_KIND;
  lc_operands_apply(L, op, &o, NULL, fname);
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
  lc_operands o;
  lc_operands_inputs(L, &o, 1, 1, "astype");
  o.out = NULL;
  o.stream = NULL;
  o.casting = LC_CAST_NO;      /* out= is of the dtype asked */
  if (lua_type(L, 3) == LUA_TTABLE && lua_getmetatable(L, 3) == 0) {
    static const char *const known[] = {"out", "stream", NULL};
    lc_check_opts(L, 3, known, "astype");
    lc_operands_options(L, &o, 3, "astype");
    if (o.out && o.out->dtype != dt)
      lc_error(L, "astype", "out= must be of the dtype asked, %s, got %s", dt->name,
               o.out->dtype->name);
  } else {
    o.stream = lc_opt_stream(L, 3, "astype");
  }
  lc_operands_apply(L, LC_UF_CAST, &o, dt, "astype");
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
