/*
** operands: array math's operands for Lua (binding/math.c's functions):
** the inputs read (arrays, Lua numbers and booleans), their devices and
** kinds checked, the output, stream and casting that follow them, and the
** call of an operation on them (dtypes resolved, inputs broadcast, the
** output checked or made, the work run on the host or queued on the
** backend).
*/
#ifndef LUACUDA_OPERANDS_H
#define LUACUDA_OPERANDS_H

#include "array.h"
#include "ufunc.h"

typedef struct lc_operands {
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
} lc_operands;

/* Read the inputs at first .. first + nin - 1. */
void lc_operands_inputs(lua_State *L, lc_operands *o, int first, int nin, const char *fname);

/* An options table {out =, stream =, casting =} at idx (the values pushed:
** they stay on the stack while the call runs). */
void lc_operands_options(lua_State *L, lc_operands *o, int idx, const char *fname);

/* The optional output array, stream and options table {out =, stream =,
** casting =} after the inputs, from index from on, in any order. */
void lc_operands_tail(lua_State *L, lc_operands *o, int from, const char *fname);

/* The call of op on the operands (cast_to: astype's target, or NULL):
** types resolved, scalars converted, the output checked or made, then
** run. Returns with the output on top of the stack. */
void lc_operands_apply(lua_State *L, lc_ufunc_op op, lc_operands *o, const lc_dtype *cast_to,
                       const char *fname);

#endif
