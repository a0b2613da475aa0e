/*
** dtype: luacuda's one model of element types: the table of builtin
** dtypes (LC_DTYPE_LIST), record dtypes (lc_record: named fields at
** offsets, made at run time and counted), and the raw loads and stores of
** builtin elements. Pure C; the rules between Lua values and elements are
** element.h's, the Lua face of records binding/record.c's.
*/
#ifndef LUACUDA_DTYPE_H
#define LUACUDA_DTYPE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi.h"          /* LC_MAXDIM, LC_DTYPE_LIST: the builtin dtypes */

/* DLPack's type codes (dlpack.h's DLDataTypeCode; kDLBool is DLPack 0.8's,
** newer than Debian 12's header). */
enum { LC_DL_INT = 0, LC_DL_UINT = 1, LC_DL_FLOAT = 2, LC_DL_BFLOAT = 4, LC_DL_BOOL = 6 };

typedef enum lc_typecode {
#define LC_DTYPE_CODE(code, ...) LC_##code,
  LC_DTYPE_LIST(LC_DTYPE_CODE)
#undef LC_DTYPE_CODE
  LC_NTYPES,
  LC_RECORD = LC_NTYPES     /* a record (record.c): not in lc_dtypes[] */
} lc_typecode;

struct lc_record;

typedef struct lc_dtype {
  lc_typecode code;
  const char *name;     /* canonical name, the value of a.dtype */
  int64_t size;
  int64_t align;
  char kind;            /* 'b' bool, 'i' signed, 'u' unsigned, 'f' float,
                        ** 'V' record */
  const struct lc_record *rec;   /* the record this is, NULL for the builtins */
  /* the builtins' facts (LC_DTYPE_LIST) */
  const char *numpy;    /* NumPy alias, or NULL */
  const char *kernel_names;
  const char *member;   /* C type of a record member */
  int dl_code;
  const char *ufunc_ctype;   /* the C++ type of kernels/ufunc.cu's loops */
  int mant_bits, exp_bits;   /* floats */
} lc_dtype;

extern const lc_dtype lc_dtypes[LC_NTYPES];

/* An element of the float dtype dt as a double, and a double stored as
** one (rounded to nearest even). */
double lc_dtype_load_float(const lc_dtype *dt, const void *p);
void lc_dtype_store_float(const lc_dtype *dt, void *p, double v);

/* A float in a format other than C's float and double (float16,
** bfloat16): loaded and stored by its bits, through double; array math
** computes it in float32. */
bool lc_dtype_is_narrow_float(const lc_dtype *dt);

/* The least exponent of the float dtype dt: its smallest subnormal is
** 2^lc_dtype_min_exp(dt). */
int lc_dtype_min_exp(const lc_dtype *dt);

/* Store the integer v (in range: the caller checked) as an element of the
** builtin dt. */
void lc_dtype_store_int(const lc_dtype *dt, void *p, int64_t v);
/* Load an element of the integer dtype dt, widened (signed kinds sign-
** extended). */
int64_t lc_dtype_load_int(const lc_dtype *dt, const void *p);
uint64_t lc_dtype_load_uint(const lc_dtype *dt, const void *p);

/* By canonical name or NumPy alias ("f4", "i8", ...); NULL if unknown. */
const lc_dtype *lc_dtype_lookup(const char *name);

/* ---- records ---------------------------------------------------------------
** A record dtype is a C structure: named fields, each a builtin, a fixed-
** size sub-array or another record, at byte offsets. It is counted: its
** Lua object, every array of that dtype and every record that nests it
** hold a reference. */

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

/* Records nest at most this deep: conversions recurse once per level, and
** each level's description holds the one below it. */
#define LC_RECORD_MAXDEPTH 64

/* Builtin dtypes are static; records are counted: an array holds a
** reference to its dtype. Both are no-ops for the builtins. */
void lc_dtype_retain(const lc_dtype *dt);
void lc_dtype_release(const lc_dtype *dt);

/* The same dtype: the same builtin, or records with the same fields
** (names, dtypes, shapes, offsets), size and alignment. */
bool lc_dtype_equal(const lc_dtype *a, const lc_dtype *b);

/* The field called name (a NUL-terminated string), or NULL. */
const lc_field *lc_record_field(const lc_record *r, const char *name);

/* Place field f (its dtype and count set) after the fields before it, as
** a C compiler lays out a struct (at the next multiple of its dtype's
** alignment) or packed: *end is where those fields end, *align their
** largest alignment; both are updated. Fails when the record would pass
** 2^40 bytes. */
int lc_record_place(lc_field *f, bool packed, int64_t *end, int64_t *align, char *err);

/* A new record (one reference) of the n placed fields (copied, names
** too; each field's dtype gains a reference), end and align as
** lc_record_place left them: the size is end rounded up to align. NULL
** with err "out of memory" when memory runs out. */
lc_record *lc_record_new(const lc_field *fields, int n, bool packed, int64_t end,
                         int64_t align, char *err);


#endif
