/*
** Unit tests for src/base/npy.c (run them as unit.h says): the prefix of
** a .npy file, the header's Python literal read into a dtype tree, the
** byte fixes of big-endian data and bools, and the header written back.
*/
#include "npy.h"

#include "unit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DT(code) (&lc_dtypes[LC_##code])

static int parse(const char *text, lc_npy_header *h) {
  return lc_npy_parse_header(text, strlen(text), 1, 0, h, err);
}

/* parse text, expecting an error containing msg */
static int parse_fails(const char *text, const char *msg) {
  lc_npy_header h;
  strcpy(err, "(no message)");
  if (parse(text, &h) == 0) {
    lc_npy_header_free(&h);
    return failf(__FILE__, __LINE__, "\"%s\" parsed, expected \"%s\"", text, msg);
  }
  if (!strstr(err, msg))
    return failf(__FILE__, __LINE__, "\"%s\": error \"%s\" lacks \"%s\"", text, err, msg);
  return 0;
}

static int test_prefix(void) {
  int major, minor;
  size_t plen, hlen;
  const unsigned char v1[] = "\x93NUMPY\x01\x00\x76\x00";
  CHECK_OK(lc_npy_read_prefix(v1, 10, &major, &minor, &plen, &hlen, err));
  CHECK_EQ(major, 1);
  CHECK_EQ(plen, 10);
  CHECK_EQ(hlen, 0x76);
  const unsigned char v3[] = "\x93NUMPY\x03\x00\x34\x12\x01\x00";
  CHECK_OK(lc_npy_read_prefix(v3, 12, &major, &minor, &plen, &hlen, err));
  CHECK_EQ(major, 3);
  CHECK_EQ(plen, 12);
  CHECK_EQ(hlen, 0x11234);
  CHECK_ERR(lc_npy_read_prefix(v3, 10, &major, &minor, &plen, &hlen, err), "truncated");
  CHECK_ERR(lc_npy_read_prefix(v1, 4, &major, &minor, &plen, &hlen, err), "truncated");
  CHECK_ERR(lc_npy_read_prefix(v1, 0, &major, &minor, &plen, &hlen, err), "the file is empty");
  const unsigned char *pickle = (const unsigned char *)"\x80\x04K\x01.";
  CHECK_ERR(lc_npy_read_prefix(pickle, 5, &major, &minor, &plen, &hlen, err), "a Python pickle");
  const unsigned char *zip = (const unsigned char *)"PK\x03\x04\x14\x00\x00\x00\x00\x00";
  CHECK_ERR(lc_npy_read_prefix(zip, 10, &major, &minor, &plen, &hlen, err), "a zip archive");
  const unsigned char v21[] = "\x93NUMPY\x02\x01\x00\x00\x00\x00";
  CHECK_ERR(lc_npy_read_prefix(v21, 12, &major, &minor, &plen, &hlen, err),
            "unsupported .npy version 2.1");
  const unsigned char *text = (const unsigned char *)"a,b,c\n1,2,3\n";
  CHECK_ERR(lc_npy_read_prefix(text, 12, &major, &minor, &plen, &hlen, err),
            "not a .npy file (it does not start with \\x93NUMPY)");
  return 0;
}

static int test_scalar_headers(void) {
  lc_npy_header h;
  CHECK_OK(parse("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }   \n", &h));
  CHECK(h.dtype == DT(FLOAT32));
  CHECK(h.nfixes == 0 && !h.fortran_order);
  CHECK_EQ(h.ndim, 2);
  CHECK_EQ(h.shape[1], 3);
  CHECK_EQ(h.count, 6);
  CHECK_EQ(h.nbytes, 24);
  lc_npy_header_free(&h);
  CHECK_OK(parse("{\"shape\": (), 'fortran_order': True, 'descr': '>i8'}", &h));
  CHECK(h.dtype == DT(INT64) && h.nfixes == 1 && h.fixes[0].swap && h.fortran_order);
  CHECK_EQ(h.ndim, 0);
  CHECK_EQ(h.count, 1);
  lc_npy_header_free(&h);
  CHECK_OK(parse("{'descr': '|b1', 'fortran_order': False, 'shape': (5L, 0,)}", &h));
  CHECK(h.dtype == DT(BOOL));
  CHECK_EQ(h.nbytes, 0);
  lc_npy_header_free(&h);
  CHECK_OK(parse("{'descr': '>u1', 'fortran_order': False, 'shape': (7,)}", &h));
  CHECK(h.dtype == DT(UINT8) && h.nfixes == 0);   /* one byte: nothing to swap */
  lc_npy_header_free(&h);
  const char *codes[] = {"'<f2'", "'<u2'", "'=i4'", "'?'", "'<f8'"};
  const lc_dtype *want[] = {DT(FLOAT16), DT(UINT16), DT(INT32), DT(BOOL), DT(FLOAT64)};
  for (int i = 0; i < 5; i++) {
    char text[128];
    snprintf(text, sizeof text, "{'descr': %s, 'fortran_order': False, 'shape': (1,)}", codes[i]);
    CHECK_OK(parse(text, &h));
    CHECK(h.dtype == want[i]);
    lc_npy_header_free(&h);
  }
  return 0;
}

static int test_structured_headers(void) {
  lc_npy_header h;
  CHECK_OK(parse("{'descr': [('x', '|i1'), ('', '|V3'), ('n', '<i4'), ('v', '>f4', (2, 3)), "
                 "('r', [('a', '<u2'), ('b', '|b1')], 2), ('', '|V2')], "
                 "'fortran_order': False, 'shape': (4,)}", &h));
  CHECK(h.dtype->rec != NULL);
  const lc_record *t = h.dtype->rec;
  CHECK_EQ(t->nfields, 4);
  CHECK_STR(t->fields[0].name, "x");
  CHECK_EQ(t->fields[1].offset, 4);
  CHECK_EQ(t->fields[2].offset, 8);
  CHECK_EQ(t->fields[2].ndim, 2);
  CHECK_EQ(h.nfixes, 3);             /* v swapped; r's two bools made 0 or 1 */
  CHECK(h.fixes[0].swap && h.fixes[0].offset == 8 && h.fixes[0].count == 6);
  CHECK(!h.fixes[1].swap && h.fixes[1].offset == 34 && h.fixes[2].offset == 37);
  CHECK_EQ(t->fields[3].offset, 32);
  CHECK_EQ(t->fields[3].ndim, 1);
  CHECK_EQ(t->fields[3].shape[0], 2);
  CHECK_EQ(t->fields[3].dtype->size, 3);
  CHECK_EQ(t->dt.size, 40);
  CHECK_EQ(h.nbytes, 160);
  lc_npy_header_free(&h);
  CHECK_OK(parse("{'descr': {'names': ['a', 'b'], 'formats': ['<i4', ('<f8', (2,))], "
                 "'offsets': [8, 0], 'itemsize': 24}, 'fortran_order': False, 'shape': (1,)}", &h));
  CHECK_EQ(h.dtype->rec->fields[0].offset, 8);
  CHECK_EQ(h.dtype->rec->fields[1].offset, 0);
  CHECK_EQ(h.dtype->rec->fields[1].shape[0], 2);
  CHECK_EQ(h.dtype->size, 24);
  lc_npy_header_free(&h);
  /* names in latin-1 (1.0) arrive as UTF-8; escapes are decoded */
  CHECK_OK(parse("{'descr': [('caf\xe9', '<i4'), ('\\u00e9\\x41', '<i4')], "
                 "'fortran_order': False, 'shape': (1,)}", &h));
  CHECK_STR(h.dtype->rec->fields[0].name, "caf\xc3\xa9");
  CHECK_STR(h.dtype->rec->fields[1].name, "\xc3\xa9" "A");
  lc_npy_header_free(&h);
  return 0;
}

static int test_bad_headers(void) {
  if (parse_fails("{'descr': '<f4', 'shape': (1,)}", "the header lacks the key 'fortran_order'") ||
      parse_fails("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
                  "the key 'descr' twice") ||
      parse_fails("[1, 2]", "the header is a list, not a dict") ||
      parse_fails("{'descr': '|O', 'fortran_order': False, 'shape': (1,)}", "Python objects") ||
      parse_fails("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", "complex numbers") ||
      parse_fails("{'descr': '<M8[s]', 'fortran_order': False, 'shape': (1,)}",
                  "dtype '<M8[s]' has no luacuda equivalent") ||
      parse_fails("{'descr': '|V16', 'fortran_order': False, 'shape': (1,)}", "a raw void dtype") ||
      parse_fails("{'descr': 3, 'fortran_order': False, 'shape': (1,)}",
                  "a descr must be a string, a list or a dict, got an integer") ||
      parse_fails("{'descr': '<f4', 'fortran_order': False, 'shape': (1.5,)}",
                  "the header is not a valid Python literal") ||
      parse_fails("{'descr': '<f4', 'fortran_order': nope, 'shape': (1,)}",
                  "an unexpected character") ||
      parse_fails("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
                  "an integer too large") ||
      parse_fails("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", "ends inside a bracket") ||
      parse_fails("{'descr': 'a\\x00b', 'fortran_order': False, 'shape': (1,)}", "a NUL character") ||
      parse_fails("{'descr': '\\U00110000', 'fortran_order': False, 'shape': (1,)}",
                  "past Unicode's range") ||
      parse_fails("{'descr': [('a', '<f4', (-1,))], 'fortran_order': False, 'shape': (1,)}",
                  "a field's shape has a negative size") ||
      parse_fails("{'descr': [('a',)], 'fortran_order': False, 'shape': (1,)}",
                  "field 1 of the structured dtype must be a tuple") ||
      parse_fails("{'descr': [], 'fortran_order': False, 'shape': (1,)}", "has no fields") ||
      parse_fails("{'descr': {'names': ['a'], 'formats': ['<i4'], 'itemsize': 2}, "
                  "'fortran_order': False, 'shape': (1,)}", "itemsize 2 is smaller") ||
      parse_fails("{'descr': {'names': ['a'], 'formats': ['<i4'], 'shape': 2}, "
                  "'fortran_order': False, 'shape': (1,)}", "an unknown key 'shape'") ||
      parse_fails("{'descr': {'names': ['a'], 'formats': ['<i4'], 'titles': ['t']}, "
                  "'fortran_order': False, 'shape': (1,)}", "has titles") ||
      parse_fails("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,)}",
                  "the array is too large") ||
      parse_fails("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4611686018427387904)}",
                  "the array is too large"))
    return 1;
  /* deep nesting is refused, not recursed into */
  char deep[400];
  memset(deep, '(', sizeof deep - 1);
  deep[sizeof deep - 1] = '\0';
  if (parse_fails(deep, "nests more than")) return 1;
  return 0;
}

static int test_fixes(void) {
  lc_npy_header h;
  const lc_npy_fix *fx;
  int n;
  CHECK_OK(parse("{'descr': '>i4', 'fortran_order': False, 'shape': (2,)}", &h));
  CHECK_OK(lc_npy_fixes(&h, &fx, &n, err));
  CHECK_EQ(n, 1);
  unsigned char d[8] = {0x01, 0x02, 0x03, 0x04, 0xFF, 0xFF, 0xFF, 0xFE};
  lc_npy_apply_fixes(d, 2, 4, fx, n);
  int32_t v[2];
  memcpy(v, d, sizeof v);
  CHECK_EQ(v[0], 0x01020304);
  CHECK_EQ(v[1], -2);
  lc_npy_header_free(&h);
  /* little-endian without bools: nothing to do */
  CHECK_OK(parse("{'descr': [('a', '<f8'), ('b', '|u1')], 'fortran_order': False, 'shape': (2,)}", &h));
  CHECK_OK(lc_npy_fixes(&h, &fx, &n, err));
  CHECK_EQ(n, 0);
  lc_npy_header_free(&h);
  /* a record of a big-endian u2 sub-array and a bool, nested twice */
  CHECK_OK(parse("{'descr': [('r', [('s', '>u2', (2,)), ('b', '|b1')], (2,))], "
                 "'fortran_order': False, 'shape': (1,)}", &h));
  CHECK_OK(lc_npy_fixes(&h, &fx, &n, err));
  CHECK_EQ(n, 4);
  unsigned char r[10] = {0, 1, 0, 2, 7, 3, 0, 0, 1, 0};
  lc_npy_apply_fixes(r, 1, 10, fx, n);
  uint16_t s[2];
  memcpy(s, r, 4);
  CHECK_EQ(s[0], 1);
  CHECK_EQ(s[1], 2);
  CHECK_EQ(r[4], 1);
  memcpy(s, r + 5, 4);
  CHECK_EQ(s[0], 0x0300);
  CHECK_EQ(s[1], 1);
  CHECK_EQ(r[9], 0);
  lc_npy_header_free(&h);
  return 0;
}

/* A record of the n fields at their offsets, size bytes (alignment 1). */
static const lc_dtype *make_record(lc_field *fields, int n, int64_t size) {
  for (int i = 0; i < n; i++) {
    fields[i].count = 1;
    for (int k = 0; k < fields[i].ndim; k++) fields[i].count *= fields[i].shape[k];
  }
  lc_record *r = lc_record_new(fields, n, false, size, 1, err);
  return r ? &r->dt : NULL;
}

static int test_build(void) {
  int64_t shape[2] = {2, 3};
  lc_strbuf b = {0};
  CHECK_OK(lc_npy_build_header(&b, DT(FLOAT32), 2, shape, true, err));
  CHECK_EQ(b.n % 64, 0);
  CHECK_EQ(b.n, 128);                  /* NumPy pads a full 64 when already aligned */
  CHECK(memcmp(b.p, "\x93NUMPY\x01\x00\x76\x00", 10) == 0);
  const char *want = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }";
  CHECK(memcmp(b.p + 10, want, strlen(want)) == 0);
  CHECK_EQ(b.p[b.n - 1], '\n');
  CHECK_EQ(b.p[b.n - 2], ' ');
  /* what was written reads back */
  int major, minor;
  size_t plen, hlen;
  CHECK_OK(lc_npy_read_prefix((unsigned char *)b.p, b.n, &major, &minor, &plen, &hlen, err));
  CHECK_EQ(plen + hlen, b.n);
  lc_npy_header h;
  CHECK_OK(lc_npy_parse_header(b.p + plen, hlen, major, minor, &h, err));
  CHECK(h.fortran_order && h.dtype == DT(FLOAT32) && h.shape[1] == 3);
  lc_npy_header_free(&h);
  lc_sb_free(&b);

  CHECK_ERR(lc_npy_build_header(&b, DT(BFLOAT16), 0, shape, false, err),
            "dtype bfloat16 has no NumPy type code");
  lc_sb_free(&b);
  return 0;
}

static int test_build_structured(void) {
  lc_field fields[3] = {
    {.name = "a", .dtype = DT(INT8), .offset = 0},
    {.name = "d", .dtype = DT(FLOAT64), .offset = 8, .ndim = 1, .shape = {3}},
    {.name = "f", .dtype = DT(BOOL), .offset = 32},
  };
  const lc_dtype *rec = make_record(fields, 3, 40);
  CHECK(rec != NULL);
  int64_t shape[1] = {5};
  lc_strbuf b = {0};
  CHECK_OK(lc_npy_build_header(&b, rec, 1, shape, false, err));
  CHECK(strstr(b.p + 10, "{'descr': [('a', '|i1'), ('', '|V7'), ('d', '<f8', (3,)), ('f', '|b1'), "
                    "('', '|V7')], 'fortran_order': False, 'shape': (5,), }"));
  lc_npy_header h;
  CHECK_OK(lc_npy_parse_header(b.p + 10, b.n - 10, 1, 0, &h, err));
  CHECK_EQ(h.dtype->size, 40);
  CHECK_EQ(h.dtype->rec->nfields, 3);
  CHECK_EQ(h.dtype->rec->fields[1].offset, 8);
  CHECK_EQ(h.dtype->rec->fields[2].offset, 32);
  CHECK(lc_dtype_equal(h.dtype, rec));
  lc_npy_header_free(&h);
  lc_sb_free(&b);
  lc_dtype_release(rec);

  /* a name that is not ASCII: version 3.0 (UTF-8); quotes are escaped */
  fields[0].name = "\xc3\xa9t'e";
  rec = make_record(fields, 3, 40);
  CHECK(rec != NULL);
  CHECK_OK(lc_npy_build_header(&b, rec, 1, shape, false, err));
  CHECK_EQ(b.p[6], 3);
  CHECK(strstr(b.p + 12, "[('\xc3\xa9t\\'e', '|i1')"));
  CHECK_OK(lc_npy_parse_header(b.p + 12, b.n - 12, 3, 0, &h, err));
  CHECK_STR(h.dtype->rec->fields[0].name, "\xc3\xa9t'e");
  lc_npy_header_free(&h);
  lc_sb_free(&b);
  lc_dtype_release(rec);

  /* overlapping fields cannot be written as NumPy's list */
  fields[0].name = "a";
  fields[2].offset = 16;
  rec = make_record(fields, 3, 40);
  CHECK(rec != NULL);
  CHECK_ERR(lc_npy_build_header(&b, rec, 1, shape, false, err), "field 'f' overlaps");
  lc_sb_free(&b);
  lc_dtype_release(rec);
  return 0;
}

static int test_build_version_2(void) {
  enum { N = 4000 };
  static lc_field fields[N];
  static char names[N][24];
  for (int i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "field_%04d", i);
    fields[i] = (lc_field){.name = names[i], .dtype = DT(FLOAT32), .offset = 4 * i};
  }
  const lc_dtype *rec = make_record(fields, N, 4 * N);
  CHECK(rec != NULL);
  int64_t shape[1] = {1};
  lc_strbuf b = {0};
  CHECK_OK(lc_npy_build_header(&b, rec, 1, shape, false, err));
  lc_dtype_release(rec);
  CHECK_EQ(b.p[6], 2);
  CHECK_EQ(b.n % 64, 0);
  CHECK(b.n > 0xFFFF);
  int major, minor;
  size_t plen, hlen;
  CHECK_OK(lc_npy_read_prefix((unsigned char *)b.p, b.n, &major, &minor, &plen, &hlen, err));
  CHECK_EQ(plen + hlen, b.n);
  lc_npy_header h;
  CHECK_OK(lc_npy_parse_header(b.p + plen, hlen, major, minor, &h, err));
  CHECK_EQ(h.dtype->rec->nfields, N);
  CHECK_STR(h.dtype->rec->fields[N - 1].name, "field_3999");
  lc_npy_header_free(&h);
  lc_sb_free(&b);
  return 0;
}

#define T(name) { #name, test_##name }

int main(int argc, char **argv) {
  static const unit_test tests[] = {
    T(prefix),
    T(scalar_headers),
    T(structured_headers),
    T(bad_headers),
    T(fixes),
    T(build),
    T(build_structured),
    T(build_version_2),
  };
  return unit_main(argv[0], tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
