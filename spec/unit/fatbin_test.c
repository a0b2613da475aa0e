/*
** fatbin_test: the fatbinary writer (src/base/fatbin.c): its layout on a
** small made-up cubin and PTX, its refusals, and, run as
**   fatbin_test compare CUBIN PTX SM EXPECTED
** the bytes it writes for those files against EXPECTED, what the toolkit's
** `fatbinary` tool wrote for them (spec/fatbin_spec.lua runs it).
*/
#include <stdint.h>

#include "fatbin.h"
#include "unit.h"

static uint64_t get(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* a cubin of 67 bytes: ELF magic, EI_VERSION 1, EI_ABIVERSION 8 */
static void made_up_cubin(unsigned char *c) {
  memset(c, 0x5c, 67);
  memcpy(c, "\177ELF\2\1\1\x41\x08", 9);
}

static int test_layout(void) {
  unsigned char cubin[67];
  made_up_cubin(cubin);
  const char *ptx = ".version 8.7\n.target sm_86\n";   /* 27 bytes */
  unsigned char *f;
  size_t n;
  CHECK_OK(lc_fatbin_write(cubin, sizeof cubin, ptx, strlen(ptx), 86, &f, &n, err));
  /* 16 + (64 + 72) + (80 + 32) */
  CHECK_EQ(n, 264);
  CHECK_EQ(get(f, 4), 0xBA55ED50u);
  CHECK_EQ(get(f + 4, 2), 1);
  CHECK_EQ(get(f + 6, 2), 16);
  CHECK_EQ(get(f + 8, 8), 248);
  const unsigned char *e = f + 16;                    /* the ELF */
  CHECK_EQ(get(e, 2), 2);
  CHECK_EQ(get(e + 2, 2), 0x0101);
  CHECK_EQ(get(e + 4, 4), 64);
  CHECK_EQ(get(e + 8, 8), 72);
  CHECK_EQ(get(e + 20, 4), 0);
  CHECK_EQ(get(e + 24, 2), 8);                        /* EI_ABIVERSION */
  CHECK_EQ(get(e + 26, 2), 1);                        /* EI_VERSION */
  CHECK_EQ(get(e + 28, 4), 86);
  CHECK_EQ(get(e + 40, 8), 0x11);
  CHECK(memcmp(e + 64, cubin, sizeof cubin) == 0);
  for (int i = 64 + 67; i < 64 + 72; i++) CHECK_EQ(e[i], 0);
  e += 64 + 72;                                       /* the PTX */
  CHECK_EQ(get(e, 2), 1);
  CHECK_EQ(get(e + 4, 4), 80);
  CHECK_EQ(get(e + 8, 8), 32);
  CHECK_EQ(get(e + 20, 4), 64);
  CHECK_EQ(get(e + 24, 2), 7);
  CHECK_EQ(get(e + 26, 2), 8);
  CHECK_EQ(get(e + 28, 4), 86);
  CHECK_EQ(get(e + 64, 4), 72);
  CHECK_EQ(get(e + 68, 4), 0);
  CHECK(memcmp(e + 80, ptx, 27) == 0);
  for (int i = 80 + 27; i < 80 + 32; i++) CHECK_EQ(e[i], 0);
  free(f);
  return 0;
}

/* a PTX given with its NUL, or a text of a multiple of 8 bytes, still
** gets a NUL in its payload */
static int test_ptx_always_ended(void) {
  unsigned char cubin[67];
  made_up_cubin(cubin);
  const char ptx[] = ".version 9.0\n.target sm_90\n\n\n\n\n\n";   /* 32 bytes and its NUL */
  unsigned char *f;
  size_t n;
  CHECK_OK(lc_fatbin_write(cubin, sizeof cubin, ptx, sizeof ptx, 90, &f, &n, err));
  const unsigned char *e = f + 16 + 64 + 72;
  CHECK_EQ(get(e + 8, 8), 40);
  CHECK_EQ(e[80 + 32], 0);
  CHECK_EQ(n, 16 + 64 + 72 + 80 + 40);
  free(f);
  return 0;
}

static int test_refusals(void) {
  unsigned char cubin[67], *f = (unsigned char *)"x";
  made_up_cubin(cubin);
  size_t n = 1;
  const char *ptx = ".version 9.0\n";
  CHECK_ERR(lc_fatbin_write((const unsigned char *)"not an ELF at all, and long enough to be "
                            "read as one if nothing looked at it ...", 80, ptx, strlen(ptx), 90,
                            &f, &n, err), "fatbinary: the cubin is not an ELF image");
  CHECK(f == NULL && n == 0);
  CHECK_ERR(lc_fatbin_write(cubin, 8, ptx, strlen(ptx), 90, &f, &n, err),
            "fatbinary: the cubin is not an ELF image");
  CHECK_ERR(lc_fatbin_write(cubin, sizeof cubin, ".target sm_90\n", 14, 90, &f, &n, err),
            "fatbinary: the PTX has no .version");
  return 0;
}

static unsigned char *slurp(const char *path, size_t *n) {
  FILE *fp = fopen(path, "rb");
  if (fp == NULL) return NULL;
  fseek(fp, 0, SEEK_END);
  long len = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  unsigned char *b = malloc((size_t)len + 1);
  if (b && fread(b, 1, (size_t)len, fp) != (size_t)len) {
    free(b);
    b = NULL;
  }
  fclose(fp);
  *n = (size_t)len;
  return b;
}

/* compare CUBIN PTX SM EXPECTED: exit 0 when the writer's bytes are
** EXPECTED's, else say where they first differ */
static int compare(char **argv) {
  size_t nc, np, ne, n;
  unsigned char *cubin = slurp(argv[2], &nc), *ptx = slurp(argv[3], &np);
  unsigned char *want = slurp(argv[5], &ne), *got;
  if (!cubin || !ptx || !want) {
    fprintf(stderr, "fatbin_test: %s, %s or %s is unreadable\n", argv[2], argv[3], argv[5]);
    return 2;
  }
  if (lc_fatbin_write(cubin, nc, (const char *)ptx, np, atoi(argv[4]), &got, &n, err) != 0) {
    fprintf(stderr, "fatbin_test: %s\n", err);
    return 1;
  }
  size_t i = 0;
  while (i < n && i < ne && got[i] == want[i]) i++;
  int rc = i == n && n == ne ? 0 : 1;
  if (rc) printf("differs at byte %zu (of %zu written, %zu expected)\n", i, n, ne);
  else printf("same %zu bytes\n", n);
  free(cubin);
  free(ptx);
  free(want);
  free(got);
  return rc;
}

#define T(name) { #name, test_##name }
int main(int argc, char **argv) {
  if (argc == 6 && strcmp(argv[1], "compare") == 0) return compare(argv);
  static const unit_test tests[] = {
    T(layout), T(ptx_always_ended), T(refusals),
  };
  return unit_main(argv[0], tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
