/*
** libFuzzer target for src/base/npy.c, the reader of untrusted .npy
** headers. The input is a file's first bytes: its prefix is read, then
** the header text (from an exact-size copy, so AddressSanitizer sees any
** read past the end). Beyond "no crash", a parsed header is checked well
** formed, its byte fixes are applied to an element, and a header written
** from its dtype reads back as the same dtype (little-endian, whatever
** the file's byte order was).
*/
#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, __VA_ARGS__); \
                                      fprintf(stderr, "\n"); abort(); } } while (0)

static void check_type(const lc_dtype *dt, int depth) {
  CHECK(depth <= 64, "dtype nests %d deep", depth);
  CHECK(dt->size >= 0, "size %lld", (long long)dt->size);
  if (dt->rec == NULL) {
    CHECK(dt >= lc_dtypes && dt < lc_dtypes + LC_NTYPES, "a scalar that is no builtin");
    return;
  }
  const lc_record *r = dt->rec;
  CHECK(r->nfields > 0, "a structure without fields");
  for (int i = 0; i < r->nfields; i++) {
    const lc_field *f = &r->fields[i];
    CHECK(f->name && f->name[0], "field %d has no name", i);
    CHECK(f->ndim >= 0 && f->ndim <= LC_MAXDIM, "field ndim %d", f->ndim);
    int64_t n = f->dtype->size;
    for (int k = 0; k < f->ndim; k++) n *= f->shape[k];
    CHECK(n == f->count * f->dtype->size, "field %d's count", i);
    CHECK(f->offset >= 0 && f->offset + n <= dt->size, "field %d outside its element", i);
    check_type(f->dtype, depth + 1);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[LC_ERRLEN];
  int major, minor;
  size_t plen, hlen;
  if (lc_npy_read_prefix(data, size, &major, &minor, &plen, &hlen, err)) {
    CHECK(memchr(err, '\0', sizeof err) && err[0], "no message");
    return 0;
  }
  /* the header is what follows the prefix, as long as the file has it */
  size_t n = size - plen < hlen ? size - plen : hlen;
  char *text = malloc(n ? n : 1);
  if (!text) abort();
  memcpy(text, data + plen, n);
  lc_npy_header h;
  if (lc_npy_parse_header(text, n, major, minor, &h, err)) {
    CHECK(memchr(err, '\0', sizeof err) && err[0], "no message");
    free(text);
    return 0;
  }
  check_type(h.dtype, 0);
  CHECK(h.ndim >= 0 && h.ndim <= LC_MAXDIM, "ndim %d", h.ndim);
  CHECK(h.nbytes == h.count * h.dtype->size, "nbytes");

  const lc_npy_fix *fx;
  int nfx;
  if (lc_npy_fixes(&h, &fx, &nfx, err) == 0 && h.dtype->size <= 4096) {
    unsigned char *elem = calloc(1, (size_t)h.dtype->size + 1);
    if (!elem) abort();
    lc_npy_apply_fixes(elem, 1, h.dtype->size, fx, nfx);
    free(elem);
  }

  lc_strbuf b = {0};
  if (lc_npy_build_header(&b, h.dtype, h.ndim, h.shape, h.fortran_order, err) == 0) {
    CHECK(b.n % 64 == 0, "written header of %zu bytes", b.n);
    size_t plen2, hlen2;
    int major2, minor2;
    CHECK(lc_npy_read_prefix((unsigned char *)b.p, b.n, &major2, &minor2, &plen2, &hlen2, err) == 0,
          "written prefix unreadable: %s", err);
    lc_npy_header h2;
    CHECK(lc_npy_parse_header(b.p + plen2, hlen2, major2, minor2, &h2, err) == 0,
          "written header unreadable: %s", err);
    CHECK(lc_dtype_equal(h.dtype, h2.dtype) && h.ndim == h2.ndim && h.fortran_order == h2.fortran_order &&
          memcmp(h.shape, h2.shape, sizeof h.shape[0] * (size_t)h.ndim) == 0,
          "the written header reads back differently");
    lc_npy_header_free(&h2);
  }
  lc_sb_free(&b);
  lc_npy_header_free(&h);
  free(text);
  return 0;
}
