/*
** npy: NumPy's .npy file format, without Lua and without files. The
** header is read from its bytes into an lc_npy_header (the dtype as an
** lc_npy_type tree), and written from one; the binding (binding/npy.c)
** does the I/O and turns the tree into luacuda dtypes and back.
**
** A file is: the magic "\x93NUMPY", a major and a minor version byte, the
** header's length (2 bytes little-endian in version 1.0, 4 in 2.0 and
** 3.0), the header (a Python dict literal: 'descr', 'fortran_order',
** 'shape'; latin-1 text in 1.0 and 2.0, UTF-8 in 3.0) padded with spaces
** and a newline so that the data starts at a multiple of 64 bytes, then
** the elements in C or Fortran order.
**
** Every function that can fail returns 0, or -1 with a message (no
** function name, no path: the caller adds them) in err[LC_ERRLEN].
*/
#ifndef LUACUDA_NPY_H
#define LUACUDA_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi.h"          /* LC_MAXDIM */
#include "common.h"       /* LC_ERRLEN */
#include "dtype.h"
#include "strbuf.h"

typedef struct lc_npy_type lc_npy_type;

/* A field of a structured dtype. */
typedef struct lc_npy_field {
  char *name;                  /* NUL-terminated, UTF-8 */
  lc_npy_type *type;
  int64_t offset;              /* bytes from the start of the element */
  int ndim;                    /* sub-array rank; 0 for a single value */
  int64_t shape[LC_MAXDIM];
} lc_npy_field;

/* A dtype as a file describes it: a builtin scalar, or a structure. */
struct lc_npy_type {
  const lc_dtype *builtin;     /* NULL for a structure */
  bool big_endian;             /* a scalar stored with its bytes reversed */
  int64_t size;                /* bytes of one element (itemsize) */
  int nfields;
  lc_npy_field *fields;        /* in the file's order */
};

/* What a header says. */
typedef struct lc_npy_header {
  int major, minor;
  bool fortran_order;
  int ndim;
  int64_t shape[LC_MAXDIM];
  lc_npy_type *type;           /* owned: lc_npy_header_free */
  int64_t count;               /* elements: the product of shape */
  int64_t nbytes;              /* bytes of data: count * type->size */
} lc_npy_header;

/* Bytes before the header text: 10 in version 1.0, 12 in 2.0 and 3.0. */
#define LC_NPY_PREFIX_MIN 10
#define LC_NPY_PREFIX_MAX 12
/* The longest header text read (NumPy writes a few hundred bytes; a
** structured dtype of many fields a few hundred kilobytes). */
#define LC_NPY_HEADER_MAX (INT64_C(64) << 20)

/* Read the prefix from the first n bytes of a file (n may be short: a
** truncated file): the version and the header text's length; *prefix_len
** is where that text starts. A file that is no .npy file is named for
** what it looks like (a pickle, an .npz zip). */
int lc_npy_read_prefix(const unsigned char *p, size_t n, int *major, int *minor,
                       size_t *prefix_len, size_t *header_len, char *err);

/* Parse the header text (len bytes, not NUL-terminated) of a file of the
** given version into h. On failure h holds nothing to free. */
int lc_npy_parse_header(const char *text, size_t len, int major, int minor,
                        lc_npy_header *h, char *err);

void lc_npy_header_free(lc_npy_header *h);
void lc_npy_type_free(lc_npy_type *t);

/* The byte fixes an element read from a file needs: each run of count
** scalars of size bytes from offset, stride bytes apart, is byte-swapped
** (a big-endian scalar) or has its bools made 0 or 1. None for a little-
** endian dtype without bools. */
typedef struct lc_npy_fix {
  int64_t offset, count, stride;
  int size;
  bool swap;                   /* else: normalise bools */
} lc_npy_fix;

/* The fixes t needs (*fixes malloc'd, NULL when there are none). */
int lc_npy_fixes(const lc_npy_type *t, lc_npy_fix **fixes, int *nfixes, char *err);

/* Apply the fixes to count elements of itemsize bytes at data. */
void lc_npy_apply_fixes(void *data, int64_t count, int64_t itemsize,
                        const lc_npy_fix *fixes, int nfixes);

/* The whole header of a file holding an array of type t and the given
** shape, prefix included, into out (appended): version 1.0 when its
** length fits 16 bits, else 2.0; 3.0 when a field name is not ASCII. The
** data that follows starts at a multiple of 64 bytes. A type that NumPy
** has no code for (bfloat16) is an error naming it. */
int lc_npy_build_header(lc_strbuf *out, const lc_npy_type *t, int ndim,
                        const int64_t *shape, bool fortran_order, char *err);

#endif
