/*
** record: record dtypes (Numba's structured dtypes): named fields with a
** C layout, each a scalar, a fixed-size sub-array or another record. A
** record is created at run time and counted: the Lua record object, every
** array of that dtype and every record that nests it hold a reference.
*/
#ifndef LUACUDA_RECORD_H
#define LUACUDA_RECORD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "dtype.h"
#include "layout.h"
#include "lua.h"

typedef struct lc_field {
  char *name;
  const lc_dtype *dtype;       /* a builtin, or a record (one reference) */
  int64_t offset;              /* bytes from the start of the record */
  int ndim;                    /* sub-array rank; 0 for a single value */
  int64_t shape[LC_MAXDIM];
  int64_t count;               /* elements: the product of shape */
} lc_field;

typedef struct lc_record {
  lc_dtype dt;                 /* dt.rec points back here; dt.name describes
                               ** the fields, for messages */
  atomic_int refs;
  bool packed;                 /* {align = false}: no padding, alignment 1 */
  int depth;                   /* 1, or one more than its deepest record field */
  int nfields;
  lc_field fields[];
} lc_record;

#define LC_RECORD_MT "luacuda.record"

/* Builtin dtypes are static; records are counted (record.c): an array
** holds a reference to its dtype. Both are no-ops for the builtins. */
void lc_dtype_retain(const lc_dtype *dt);
void lc_dtype_release(const lc_dtype *dt);

/* The same dtype: the same builtin, or records with the same fields
** (names, dtypes, shapes, offsets), size and alignment. */
bool lc_dtype_equal(const lc_dtype *a, const lc_dtype *b);


/* Records nest at most this deep: conversions recurse once per level, and
** each level's description holds the one below it. */
#define LC_RECORD_MAXDEPTH 64

/* The field called name (a NUL-terminated string), or NULL. */
const lc_field *lc_record_field(const lc_record *r, const char *name);

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
