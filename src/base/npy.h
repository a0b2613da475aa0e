/*
** npy: NumPy's .npy file format, without Lua and without files. The
** header is read from its bytes into an lc_npy_header (its dtype a
** luacuda dtype: a structured one a record at the file's offsets), and
** written from a dtype; the binding (binding/npy.c) does the I/O and
** checks that a file's record is one luacuda.record lays out.
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

/* The byte fixes an element read from a file needs: each run of count
** scalars of size bytes from offset, stride bytes apart, is byte-swapped
** (a big-endian scalar) or has its bools made 0 or 1. None for a little-
** endian dtype without bools. */
typedef struct lc_npy_fix {
  int64_t offset, count, stride;
  int size;
  bool swap;                   /* else: normalise bools */
} lc_npy_fix;

/* What a header says. */
typedef struct lc_npy_header {
  int major, minor;
  bool fortran_order;
  int ndim;
  int64_t shape[LC_MAXDIM];
  const lc_dtype *dtype;       /* a builtin, or a record with the file's
                               ** field offsets and itemsize (alignment 1);
                               ** one reference: lc_npy_header_free */
  int64_t count;               /* elements: the product of shape */
  int64_t nbytes;              /* bytes of data: count * dtype->size */
  /* the file's byte order, which no dtype holds: lc_npy_fixes */
  lc_npy_fix *fixes;
  int nfixes;
  bool too_many_fixes;
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

/* The fixes h's data needs (h's own; none: NULL), or an error when they
** are too many. */
int lc_npy_fixes(const lc_npy_header *h, const lc_npy_fix **fixes, int *nfixes, char *err);

/* Apply the fixes to count elements of itemsize bytes at data. */
void lc_npy_apply_fixes(void *data, int64_t count, int64_t itemsize,
                        const lc_npy_fix *fixes, int nfixes);

/* The whole header of a file holding an array of dtype dt and the given
** shape, prefix included, into out (appended): version 1.0 when its
** length fits 16 bits, else 2.0; 3.0 when a field name is not ASCII. The
** data that follows starts at a multiple of 64 bytes. A type that NumPy
** has no code for (bfloat16) is an error naming it. */
int lc_npy_build_header(lc_strbuf *out, const lc_dtype *dt, int ndim,
                        const int64_t *shape, bool fortran_order, char *err);

#endif
