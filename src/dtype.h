/*
** dtype: element types: size, alignment, names, and conversion between
** Lua values and stored elements.
*/
#ifndef LUACUDA_DTYPE_H
#define LUACUDA_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lua.h"

typedef enum lc_typecode {
  LC_BOOL, LC_INT8, LC_INT16, LC_INT32, LC_INT64,
  LC_UINT8, LC_UINT16, LC_UINT32, LC_UINT64,
  LC_FLOAT16, LC_FLOAT32, LC_FLOAT64,
  LC_NTYPES,
  LC_RECORD = LC_NTYPES     /* a record (record.c): not in lc_dtypes[] */
} lc_typecode;

struct lc_record;

typedef struct lc_dtype {
  lc_typecode code;
  const char *name;     /* canonical name, the value of a.dtype */
  const char *ctype;    /* spelling in kernel source */
  int64_t size;
  int64_t align;
  char kind;            /* 'b' bool, 'i' signed, 'u' unsigned, 'f' float,
                        ** 'V' record */
  const struct lc_record *rec;   /* the record this is, NULL for the builtins */
} lc_dtype;

extern const lc_dtype lc_dtypes[LC_NTYPES];

/* Builtin dtypes are static; records are counted (record.c): an array
** holds a reference to its dtype. Both are no-ops for the builtins. */
void lc_dtype_retain(const lc_dtype *dt);
void lc_dtype_release(const lc_dtype *dt);

/* The same dtype: the same builtin, or records with the same fields
** (names, dtypes, shapes, offsets), size and alignment. */
bool lc_dtype_equal(const lc_dtype *a, const lc_dtype *b);

/* Push dt as Lua sees it: a builtin's name, a record's object. */
void lc_dtype_push(lua_State *L, const lc_dtype *dt);

/* By canonical name or NumPy alias ("f4", "i8", ...); NULL if unknown. */
const lc_dtype *lc_dtype_lookup(const char *name);

/* The dtype named by the string (or the record object) at idx; a
** record's stays valid while that object is alive. Raises "luacuda.<fname>: ..." */
const lc_dtype *lc_dtype_check(lua_State *L, int idx, const char *fname);

/* The dtype at idx, or dflt when the value there is nil or absent. */
const lc_dtype *lc_dtype_opt(lua_State *L, int idx, const lc_dtype *dflt,
                             const char *fname);

/* Push the element at p as a Lua value. */
void lc_elem_push(lua_State *L, const lc_dtype *dt, const void *p);

/* The same, inlined for the common dtypes (element loops). */
static inline void lc_elem_push_fast(lua_State *L, const lc_dtype *dt, const void *p) {
  switch (dt->code) {
    case LC_FLOAT64: { double v; __builtin_memcpy(&v, p, 8); lua_pushnumber(L, v); return; }
    case LC_FLOAT32: { float v; __builtin_memcpy(&v, p, 4); lua_pushnumber(L, v); return; }
    case LC_INT64: { int64_t v; __builtin_memcpy(&v, p, 8); lua_pushinteger(L, v); return; }
    case LC_INT32: { int32_t v; __builtin_memcpy(&v, p, 4); lua_pushinteger(L, v); return; }
    default: lc_elem_push(L, dt, p);
  }
}

/* Convert the Lua value at idx into an element at out. Returns 0, or -1
** with a message (without function name) in err[LC_ERRLEN]. Writes out
** only on success. */
int lc_elem_convert(lua_State *L, int idx, const lc_dtype *dt, void *out,
                    char *err);

/* Same, raising "luacuda.<fname>: <cause>". */
void lc_elem_check(lua_State *L, int idx, const lc_dtype *dt, void *out,
                   const char *fname);

/* IEEE binary16 <-> binary32/64, round to nearest even. */
uint16_t lc_half_from_double(double d);
double lc_half_to_double(uint16_t h);

#endif
