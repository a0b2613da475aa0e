/*
** record: the Lua face of record dtypes (Numba's structured dtypes):
** luacuda.record, the record object, and record values as tables of
** fields. A record is created at run time and counted (base/dtype.h): the
** Lua record object, every array of that dtype and every record that
** nests it hold a reference.
*/
#ifndef LUACUDA_RECORD_H
#define LUACUDA_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include "dtype.h"
#include "layout.h"
#include "lua.h"

/* The record model itself (lc_record, lc_field, counting, equality,
** layout) is base/dtype.h's; this is its Lua face. */

#define LC_RECORD_MT "luacuda.record"

/* The record object at idx, or NULL. */
const lc_record *lc_record_test(lua_State *L, int idx);

/* Push r's Lua object (the one alive, else a new one holding a reference). */
void lc_record_push_object(lua_State *L, const lc_record *r);

/* For a record dtype: is the table at idx one record value, rather than
** a sequence of them? (It has no entry [1].) */
bool lc_record_is_value(lua_State *L, int idx);

/* Zeroed room for one element of dt: buf (of n bytes) when it fits, else
** a scratch userdata pushed on the stack: callers restore their top when
** done. */
void *lc_elem_room(lua_State *L, const lc_dtype *dt, void *buf, size_t n);


#endif
