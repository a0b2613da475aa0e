/*
** libFuzzer target for src/base/npy.c, the reader of untrusted .npy
** headers. The input is a file's first bytes: its prefix is read, then
** the header text (from an exact-size copy, so AddressSanitizer sees any
** read past the end). Beyond "no crash", a parsed header is checked well
** formed, its byte fixes are applied to an element, and a header written
** from its dtype reads back as the same dtype.
*/
#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, __VA_ARGS__); \
                                      fprintf(stderr, "\n"); abort(); } } while (0)

static void check_type(const lc_npy_type *t, int depth) {
  CHECK(depth <= 64, "dtype nests %d deep", depth);
  CHECK(t->size >= 0, "size %lld", (long long)t->size);
  if (t->builtin) {
    CHECK(t->nfields == 0 && t->size == t->builtin->size, "scalar with fields or a wrong size");
    return;
  }
  CHECK(t->nfields > 0, "a structure without fields");
  for (int i = 0; i < t->nfields; i++) {
    const lc_npy_field *f = &t->fields[i];
    CHECK(f->name && f->name[0], "field %d has no name", i);
    CHECK(f->ndim >= 0 && f->ndim <= LC_MAXDIM, "field ndim %d", f->ndim);
    int64_t n = f->type->size;
    for (int k = 0; k < f->ndim; k++) n *= f->shape[k];
    CHECK(f->offset >= 0 && f->offset + n <= t->size, "field %d outside its element", i);
    check_type(f->type, depth + 1);
  }
}

static bool same_type(const lc_npy_type *a, const lc_npy_type *b) {
  if (a->builtin != b->builtin || a->size != b->size || a->nfields != b->nfields) return false;
  if (a->builtin && a->big_endian != b->big_endian) return false;
  for (int i = 0; i < a->nfields; i++) {
    const lc_npy_field *f = &a->fields[i], *g = &b->fields[i];
    if (strcmp(f->name, g->name) || f->offset != g->offset || f->ndim != g->ndim ||
        memcmp(f->shape, g->shape, sizeof f->shape[0] * (size_t)f->ndim) ||
        !same_type(f->type, g->type))
      return false;
  }
  return true;
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
  check_type(h.type, 0);
  CHECK(h.ndim >= 0 && h.ndim <= LC_MAXDIM, "ndim %d", h.ndim);
  CHECK(h.nbytes == h.count * h.type->size, "nbytes");

  lc_npy_fix *fx;
  int nfx;
  if (lc_npy_fixes(h.type, &fx, &nfx, err) == 0) {
    if (h.type->size <= 4096) {
      unsigned char *elem = calloc(1, (size_t)h.type->size + 1);
      if (!elem) abort();
      lc_npy_apply_fixes(elem, 1, h.type->size, fx, nfx);
      free(elem);
    }
    free(fx);
  }

  lc_strbuf b = {0};
  if (lc_npy_build_header(&b, h.type, h.ndim, h.shape, h.fortran_order, err) == 0) {
    CHECK(b.n % 64 == 0, "written header of %zu bytes", b.n);
    size_t plen2, hlen2;
    int major2, minor2;
    CHECK(lc_npy_read_prefix((unsigned char *)b.p, b.n, &major2, &minor2, &plen2, &hlen2, err) == 0,
          "written prefix unreadable: %s", err);
    lc_npy_header h2;
    CHECK(lc_npy_parse_header(b.p + plen2, hlen2, major2, minor2, &h2, err) == 0,
          "written header unreadable: %s", err);
    CHECK(same_type(h.type, h2.type) && h.ndim == h2.ndim && h.fortran_order == h2.fortran_order &&
          memcmp(h.shape, h2.shape, sizeof h.shape[0] * (size_t)h.ndim) == 0,
          "the written header reads back differently");
    lc_npy_header_free(&h2);
  }
  lc_sb_free(&b);
  lc_npy_header_free(&h);
  free(text);
  return 0;
}
