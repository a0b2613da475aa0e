/*
** record: the Lua face of record dtypes (Numba's structured dtypes):
** luacuda.record, the record object, and record values as tables of
** fields. A record is created at run time and counted (base/dtype.h): the
** Lua record object, every array of that dtype and every record that
** nests it hold a reference.
*/
#ifndef LUACUDA_RECORD_H
#define LUACUDA_RECORD_H

#include "array.h"

/* The record model itself (lc_record, lc_field, counting, equality,
** layout) is base/dtype.h's; this is its Lua face. */

#define LC_RECORD_MT "luacuda.record"

/* The record object at idx, or NULL. */
const lc_record *lc_record_test(lua_State *L, int idx);

/* Convert the record value (a table of fields) at idx into out. Writes
** only when every field is valid. Returns 0, or -1 with err set. */
int lc_record_convert(lua_State *L, int idx, const lc_record *r, void *out, char *err);

/* Push the record at p as a table of fields. */
void lc_record_push_value(lua_State *L, const lc_record *r, const void *p);

/* For a record dtype: is the table at idx one record value, rather than
** a sequence of them? (It has no entry [1].) */
bool lc_record_is_value(lua_State *L, int idx);

/* a.<key> and a.<key> = v on a record array (shape.c, with the other
** views): 0 if key is not a field of a's record; otherwise pushes the
** field (index: a value for a scalar field of a 0-d array, else a view)
** or assigns it, and returns 1. */
int lc_record_index(lua_State *L, const lc_array *a, const char *key, const char *fname);
int lc_record_newindex(lua_State *L, const lc_array *a, const char *key, int vidx,
                       const char *fname);

/* Zeroed room for one element of dt: buf (of n bytes) when it fits, else
** a scratch userdata pushed on the stack: callers restore their top when
** done. */
void *lc_elem_room(lua_State *L, const lc_dtype *dt, void *buf, size_t n);


#endif
