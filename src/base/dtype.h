/*
** dtype: element types: size, alignment and names. Pure C; the
** conversions between Lua values and elements are in element.h.
*/
#ifndef LUACUDA_DTYPE_H
#define LUACUDA_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* By canonical name or NumPy alias ("f4", "i8", ...); NULL if unknown. */
const lc_dtype *lc_dtype_lookup(const char *name);

/* IEEE binary16 <-> binary32/64, round to nearest even. */
uint16_t lc_half_from_double(double d);
double lc_half_to_double(uint16_t h);

#endif
