/*
** convert: Lua values into arrays and back (convert.c): nested tables and
** scalars to new arrays, arrays to nested tables, and a Lua value assigned
** to a view.
*/
#ifndef LUACUDA_CONVERT_H
#define LUACUDA_CONVERT_H

#include "array.h"

/* Push a new array of the given kind from the nested table at idx; dt NULL
** infers bool, int64 or float64 from the values. */
lc_array *lc_from_table(lua_State *L, int idx, const lc_dtype *dt, lc_kind kind,
                        lc_stream *s, const char *fname);

/* Push a 0-d array holding the scalar at idx; dt NULL infers bool, int64
** or float64. */
lc_array *lc_from_scalar(lua_State *L, int idx, const lc_dtype *dt, lc_kind kind,
                         const char *fname);

/* Push the elements of a as nested Lua tables (a 0-d array: its value). */
void lc_to_table(lua_State *L, const lc_array *a, const char *fname);

/* Assign the Lua value at vidx to the view of a described by lay: a scalar
** is broadcast, an array or nested table of the same shape is copied. */
void lc_assign(lua_State *L, const lc_array *a, const lc_layout *lay, int vidx,
               lc_stream *s, const char *fname);

#endif
