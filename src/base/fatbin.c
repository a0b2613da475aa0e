/*
** fatbin: writes the fatbinary of one module (fatbin.h).
**
** The format, as observed in what the toolkit's `fatbinary` tool (13.0)
** writes for one cubin and one PTX without compression; every number is
** little-endian, and spec/fatbin_spec.lua checks this writer byte for
** byte against the tool where it is installed (spec/c/fatbin_test.c):
**
** A header of 16 bytes:
**    0  u32  magic 0xBA55ED50
**    4  u16  version, 1
**    6  u16  size of this header, 16
**    8  u64  bytes of the entries that follow it
** then the entries, each a header and its payload, one after the other:
**    0  u16  kind: 1 PTX, 2 ELF (a cubin)
**    2  u16  0x0101 (the tool writes it for both kinds)
**    4  u32  size of the entry's header: 64 for an ELF, 80 for a PTX
**    8  u64  bytes of the payload that follows the header
**   16  u32  0 (compressed: the payload's bytes before the padding)
**   20  u32  PTX: where, in the header, its JIT options block is (64);
**            ELF: 0, none
**   24  u16  minor, u16 major: a PTX's .version (9.0 is 0, 9); an ELF's
**            e_ident[EI_ABIVERSION] and e_ident[EI_VERSION] (8, 1)
**   28  u32  the SM it was built for (90 for sm_90)
**   32  u64  0
**   40  u64  flags: 0x11 (64-bit code); 0x8011 when compressed (zstd)
**   48  u64  0
**   56  u64  0 (compressed: the image's bytes once uncompressed)
** and a PTX's header has the options block at 64: u32 where its text is
** (72), u32 its length (0: none), then the text, NUL-ended and padded
** with zeros to 8 bytes (8 zero bytes when empty), hence 80.
** A payload is the image (uncompressed here) padded with zeros to a multiple of 8 bytes; a
** PTX's has at least one NUL after the text. (The tool also strips a
** PTX's comments and indentation; the driver needs neither done, and
** this writer stores the text as NVRTC made it.)
*/
#include "fatbin.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"   /* LC_ERRLEN */

enum { KIND_PTX = 1, KIND_ELF = 2 };
enum { FILE_HEADER = 16, ELF_HEADER = 64, PTX_HEADER = 80, OPTIONS_AT = 64 };

static void put16(unsigned char *p, unsigned v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}
static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static size_t pad8(size_t n) { return (n + 7) / 8 * 8; }

/* The entry header common to both kinds, at p (zeroed before). */
static void entry_header(unsigned char *p, unsigned kind, size_t headerlen, size_t payload,
                         unsigned major, unsigned minor, int sm) {
  put16(p, kind);
  put16(p + 2, 0x0101);
  put32(p + 4, (uint32_t)headerlen);
  put64(p + 8, payload);
  put16(p + 24, minor);
  put16(p + 26, major);
  put32(p + 28, (uint32_t)sm);
  put64(p + 40, 0x11);
}

int lc_fatbin_write(const unsigned char *cubin, size_t cubinlen, const char *ptx,
                    size_t ptxlen, int sm, unsigned char **out, size_t *outlen, char *err) {
  *out = NULL;
  *outlen = 0;
  if (cubinlen < 64 || memcmp(cubin, "\177ELF", 4) != 0) {
    return lc_fail(err, -1, "fatbinary: the cubin is not an ELF image");
  }
  while (ptxlen > 0 && ptx[ptxlen - 1] == '\0') ptxlen--;   /* the text alone */
  /* the PTX ISA version, from ".version X.Y" */
  const char *v = NULL;
  for (size_t i = 0; i + 9 <= ptxlen && v == NULL; i++)
    if (memcmp(ptx + i, ".version ", 9) == 0) v = ptx + i + 9;
  unsigned major = 0, minor = 0;
  if (v == NULL || sscanf(v, "%u.%u", &major, &minor) != 2) {
    return lc_fail(err, -1, "fatbinary: the PTX has no .version");
  }
  size_t elfpay = pad8(cubinlen), ptxpay = pad8(ptxlen + 1);
  size_t entries = ELF_HEADER + elfpay + PTX_HEADER + ptxpay;
  unsigned char *f = calloc(1, FILE_HEADER + entries);
  if (f == NULL) {
    return lc_fail(err, -1, "fatbinary: out of host memory (%zu bytes)", FILE_HEADER + entries);
  }
  put32(f, LC_FATBIN_MAGIC);
  put16(f + 4, 1);
  put16(f + 6, FILE_HEADER);
  put64(f + 8, entries);
  unsigned char *e = f + FILE_HEADER;
  entry_header(e, KIND_ELF, ELF_HEADER, elfpay, cubin[6], cubin[8], sm);
  memcpy(e + ELF_HEADER, cubin, cubinlen);
  e += ELF_HEADER + elfpay;
  entry_header(e, KIND_PTX, PTX_HEADER, ptxpay, major, minor, sm);
  put32(e + 20, OPTIONS_AT);
  put32(e + OPTIONS_AT, OPTIONS_AT + 8);   /* the options' text (none) follows */
  memcpy(e + PTX_HEADER, ptx, ptxlen);
  *out = f;
  *outlen = FILE_HEADER + entries;
  return 0;
}
