/* spec/fake/cubin.c: the fake driver's one reader of a cubin's ELF
** (spec/fake/fake_cuda.c's loader takes its sections, the toolkit its
** .note.nv.cuinfo names and its frames from here): the section table, each
** name and each section's bytes are checked once to lie inside the image,
** and every later read stays inside its section. Then the stack sizes
** ptxas wrote into the cubin, for the fake driver's CU_LIMIT_STACK_SIZE
** ("limits" in fake_cuda.c). Test code, never installed.
**
** .note.nv.cuinfo (as observed in nvcc 13.0's sm_90 cubins): an ELF note,
** its name "NVIDIA Corp", its description 16-bit words: the note's
** version, the virtual SM and the toolkit (10 * major + minor), then 16
** bits of padding.
**
** Where they are, as observed in NVRTC 13.0's and nvcc 13.0's cubins for
** sm_90 and sm_86 (checked against `ptxas -v`; no cuobjdump or nvdisasm
** was at hand):
** - .nv.info (and .nv.info.<kernel>): attributes, each a format byte, an
**   attribute byte, then for format 4 a 2-byte size and that many bytes of
**   value, for formats 1 to 3 two bytes of value (4 bytes in all). Format 4
**   attribute 0x11 (EIATTR_FRAME_SIZE) and 0x12 (EIATTR_MIN_STACK_SIZE)
**   hold a .symtab index (u32) and a size (u32). For a kernel, FRAME_SIZE
**   is its own frame and MIN_STACK_SIZE the stack its deepest chain of
**   calls needs, recursion not counted: ptxas -v's "bytes stack frame" and
**   "cumulative stack size" of the entry. For the device functions compiled
**   into a kernel (local symbols "$kernel$function") FRAME_SIZE is not
**   their own frame (0 for a recursive one whose ptxas -v frame is 200), so
**   it is not read.
** - .debug_frame (DWARF call frame information, 64-bit format, its FDEs'
**   addresses relocated as a symbol and an addend: .rela.debug_frame in
**   NVRTC's sm_90 cubins, .rel.debug_frame in nvcc's sm_86 ones): a device
**   function's DW_CFA_def_cfa offset is what its code takes off the stack
**   pointer on entry (192 for that recursive function: its first
**   instructions subtract 192 from R1; ptxas -v says 200, 8 more). */
#include "cubin.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EIATTR_FRAME_SIZE 0x11
#define EIATTR_MIN_STACK_SIZE 0x12

/* A bounded read of the cubin: every section's name and bytes lie inside the
** image (cubin_elf_read checks them once); the frames' reader keeps its
** place in the symbols here. */
typedef struct elf {
  const cubin_elf *c;
  const unsigned char *syms, *strs;
  size_t nsyms, strlen_;
  char *why;
  size_t whylen;
} elf;

static uint64_t rd(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

__attribute__((format(printf, 3, 4)))
static int refuse(char *why, size_t whylen, const char *fmt, ...) {
  int n = snprintf(why, whylen, "the cubin's ");
  va_list ap;
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < whylen) vsnprintf(why + n, whylen - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

static int bad(elf *e, const char *what) { return refuse(e->why, e->whylen, "%s", what); }

/* A NUL-ended string at offset off of a string table, or NULL. */
static const char *string(const unsigned char *tab, size_t n, uint64_t off) {
  if (off >= n || memchr(tab + off, '\0', n - off) == NULL) return NULL;
  return (const char *)tab + off;
}

static uint64_t sum_or_max(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

size_t cubin_extent(const unsigned char *img) {
  uint64_t sections = sum_or_max(rd(img + 0x28, 8), rd(img + 0x3a, 2) * rd(img + 0x3c, 2));
  uint64_t programs = sum_or_max(rd(img + 0x20, 8), rd(img + 0x36, 2) * rd(img + 0x38, 2));
  uint64_t end = sections > programs ? sections : programs;
  return end > SIZE_MAX ? SIZE_MAX : (size_t)end;
}

/* Section header i's bytes [off, off + n) inside the image: 0, else -1. */
static int section_bytes(const unsigned char *img, size_t len, const unsigned char *h,
                         const unsigned char **bytes, size_t *size) {
  uint64_t off = rd(h + 0x18, 8), n = rd(h + 0x20, 8);
  if (rd(h + 4, 4) == 8) n = 0;   /* SHT_NOBITS: nothing in the file */
  if (off > len || n > len - off) return -1;
  *bytes = img + off;
  *size = (size_t)n;
  return 0;
}

static int read_elf(const unsigned char *img, size_t len, cubin_elf *out, char *why,
                    size_t whylen) {
  if (len < 64 || memcmp(img, "\177ELF", 4) != 0 || img[4] != 2)
    return refuse(why, whylen, "ELF header");
  uint64_t shoff = rd(img + 0x28, 8);
  unsigned shentsize = (unsigned)rd(img + 0x3a, 2), shnum = (unsigned)rd(img + 0x3c, 2);
  unsigned shstrndx = (unsigned)rd(img + 0x3e, 2);
  if (shentsize < 64 || shoff > len || (uint64_t)shnum * shentsize > len - shoff ||
      shstrndx >= shnum)
    return refuse(why, whylen, "section headers run past the image");
  const unsigned char *names;
  size_t nnames;
  if (section_bytes(img, len, img + shoff + (uint64_t)shstrndx * shentsize, &names, &nnames) != 0)
    return refuse(why, whylen, "section names run past the image");
  out->sections = calloc(shnum, sizeof *out->sections);
  if (out->sections == NULL) return refuse(why, whylen, "sections: out of memory");
  out->nsections = shnum;
  for (unsigned i = 0; i < shnum; i++) {
    const unsigned char *h = img + shoff + (uint64_t)i * shentsize;
    cubin_section *s = &out->sections[i];
    s->name = string(names, nnames, rd(h, 4));
    if (s->name == NULL) return refuse(why, whylen, "section %u's name runs past its table", i);
    s->type = (unsigned)rd(h + 4, 4);
    s->link = (unsigned)rd(h + 0x28, 4);
    s->info = (unsigned)rd(h + 0x2c, 4);
    if (section_bytes(img, len, h, &s->bytes, &s->size) != 0)
      return refuse(why, whylen, "section %s runs past the image", s->name);
  }
  return 0;
}

int cubin_elf_read(const unsigned char *img, size_t len, cubin_elf *out, char *why,
                   size_t whylen) {
  memset(out, 0, sizeof *out);
  out->img = img;
  out->len = len;
  if (read_elf(img, len, out, why, whylen) == 0) return 0;
  cubin_elf_free(out);
  return -1;
}

void cubin_elf_free(cubin_elf *e) {
  free(e->sections);
  e->sections = NULL;
  e->nsections = 0;
}

int cubin_cuinfo_toolkit(const cubin_section *s, unsigned *toolkit) {
  if (s->size < 12) return -1;
  uint64_t namesz = rd(s->bytes, 4), descsz = rd(s->bytes + 4, 4);
  uint64_t desc = 12 + (namesz + 3) / 4 * 4;
  if (desc > s->size || descsz > s->size - desc || descsz < 8) return -1;
  *toolkit = (unsigned)rd(s->bytes + desc + 4, 4);
  return 0;
}

static const char *section_name(const elf *e, unsigned i) { return e->c->sections[i].name; }

static const char *symbol_name(const elf *e, size_t s) {
  return string(e->strs, e->strlen_, rd(e->syms + 24 * s, 4));
}

/* A kernel: a defined global function whose section is .text.<its name>. */
static int is_kernel(const elf *e, size_t s) {
  const unsigned char *p = e->syms + 24 * s;
  unsigned shndx = (unsigned)rd(p + 6, 2);
  const char *name = symbol_name(e, s);
  if (p[4] != 0x12 || shndx == 0 || shndx >= e->c->nsections || name == NULL) return 0;
  const char *sec = section_name(e, shndx);
  return strncmp(sec, ".text.", 6) == 0 && strcmp(sec + 6, name) == 0;
}

static cubin_frame *frame_of(cubin_frames *out, const char *kernel, const char *name) {
  for (int i = 0; i < out->n; i++)
    if (strcmp(out->v[i].kernel, kernel) == 0 && strcmp(out->v[i].name, name) == 0)
      return &out->v[i];
  cubin_frame *v = realloc(out->v, (size_t)(out->n + 1) * sizeof *v);
  if (v == NULL) return NULL;
  out->v = v;
  cubin_frame *f = &v[out->n++];
  memset(f, 0, sizeof *f);
  snprintf(f->kernel, sizeof f->kernel, "%s", kernel);
  snprintf(f->name, sizeof f->name, "%s", name);
  return f;
}

/* The attributes of one .nv.info section, each inside it. */
static int read_nv_info(elf *e, const unsigned char *p, size_t n, cubin_frames *out) {
  for (size_t at = 0; at < n;) {
    if (n - at < 4) return bad(e, ".nv.info ends inside an attribute");
    unsigned format = p[at], attr = p[at + 1];
    size_t size = 2, value = at + 2;
    if (format == 4) {
      size = (size_t)rd(p + at + 2, 2);
      value = at + 4;
      if (size > n - value) return bad(e, ".nv.info has an attribute running past its section");
    } else if (format < 1 || format > 3) {
      return bad(e, ".nv.info has an attribute of an unknown format");
    }
    if (format == 4 && (attr == EIATTR_FRAME_SIZE || attr == EIATTR_MIN_STACK_SIZE)) {
      if (size != 8) return bad(e, ".nv.info has a frame size that is not 8 bytes");
      uint64_t s = rd(p + value, 4), bytes = rd(p + value + 4, 4);
      if (s >= e->nsyms) return bad(e, ".nv.info names a symbol .symtab does not have");
      if (is_kernel(e, (size_t)s)) {
        cubin_frame *f = frame_of(out, symbol_name(e, (size_t)s), symbol_name(e, (size_t)s));
        if (f == NULL) return bad(e, "frames: out of memory");
        f->is_kernel = 1;
        if (attr == EIATTR_FRAME_SIZE) f->bytes = (size_t)bytes;
        else f->min_stack = (size_t)bytes, f->has_min_stack = 1;
      }
    }
    at = value + size;
  }
  return 0;
}

/* An unsigned LEB128 at *at, below end; -1 when it runs past. */
static int uleb(const unsigned char *p, size_t end, size_t *at, uint64_t *v) {
  *v = 0;
  for (int shift = 0; *at < end; shift += 7) {
    unsigned char b = p[(*at)++];
    if (shift < 64) *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return 0;
  }
  return -1;
}

/* The largest CFA offset an FDE's instructions [at, end) define; 0 with
** none. An instruction this reader does not know ends the reading: what
** came before counts (1 in *unknown). */
static int cfa_offset(const unsigned char *p, size_t at, size_t end, uint64_t *most,
                      int *unknown) {
  uint64_t a, b;
  *most = 0;
  *unknown = 0;
  while (at < end) {
    unsigned op = p[at++], hi = op >> 6;
    int r = 0;
    if (hi == 1 || hi == 3) continue;                   /* advance_loc, restore */
    if (hi == 2) { r = uleb(p, end, &at, &a); }         /* offset */
    else switch (op) {
      case 0x00: case 0x0a: case 0x0b: break;           /* nop, remember/restore state */
      case 0x02: at += 1; break;                        /* advance_loc1, 2, 4 */
      case 0x03: at += 2; break;
      case 0x04: at += 4; break;
      case 0x05: case 0x09: case 0x14:                  /* two operands */
        r = uleb(p, end, &at, &a) | uleb(p, end, &at, &b);
        break;
      case 0x06: case 0x07: case 0x08: case 0x0d:       /* one operand */
      case 0x13: case 0x2e:
        r = uleb(p, end, &at, &a);
        break;
      case 0x11: case 0x12: case 0x15:                  /* two, the second signed */
        r = uleb(p, end, &at, &a) | uleb(p, end, &at, &b);
        break;
      case 0x0f:                                        /* a DWARF expression */
        r = uleb(p, end, &at, &a);
        if (r == 0 && a > end - at) return -1;
        at += (size_t)a;
        break;
      case 0x10: case 0x16:                             /* a register, an expression */
        r = uleb(p, end, &at, &a) | uleb(p, end, &at, &b);
        if (r == 0 && b > end - at) return -1;
        at += (size_t)b;
        break;
      case 0x0c:                                        /* def_cfa: register, offset */
        r = uleb(p, end, &at, &a) | uleb(p, end, &at, &b);
        if (r == 0 && b > *most) *most = b;
        break;
      case 0x0e:                                        /* def_cfa_offset */
        r = uleb(p, end, &at, &b);
        if (r == 0 && b > *most) *most = b;
        break;
      default: *unknown = 1; return 0;
    }
    if (r != 0 || at > end) return -1;
  }
  return 0;
}

/* The relocation of .debug_frame at offset off (whose 8 bytes are at
** field): its symbol and addend, from .rela.debug_frame (24-byte entries)
** or .rel.debug_frame (16, the addend in the field itself). */
static int fde_target(const elf *e, const unsigned char *rel, size_t nrel, size_t entsize,
                      uint64_t off, const unsigned char *field, size_t *sym, uint64_t *addend) {
  for (size_t i = 0; i + entsize <= nrel; i += entsize)
    if (rd(rel + i, 8) == off) {
      *sym = (size_t)(rd(rel + i + 8, 8) >> 32);
      *addend = entsize == 24 ? rd(rel + i + 16, 8) : rd(field, 8);
      return *sym < e->nsyms;
    }
  return 0;
}

/* The device functions' frames, from .debug_frame's FDEs. */
static int read_debug_frame(elf *e, const unsigned char *p, size_t n, const unsigned char *rel,
                            size_t nrel, size_t entsize, cubin_frames *out) {
  for (size_t at = 0; at < n;) {
    if (n - at < 4) return bad(e, ".debug_frame ends inside an entry");
    uint64_t len = rd(p + at, 4);
    size_t hdr = 4, idsize = 4;
    if (len == 0xffffffffu) {
      if (n - at < 12) return bad(e, ".debug_frame ends inside an entry");
      len = rd(p + at + 4, 8);
      hdr = 12;
      idsize = 8;
    }
    if (len > n - at - hdr) return bad(e, ".debug_frame has an entry running past its section");
    size_t body = at + hdr, end = body + (size_t)len;
    if (len < idsize) return bad(e, ".debug_frame has an entry too short for its header");
    uint64_t id = rd(p + body, (int)idsize);
    int cie = idsize == 8 ? id == UINT64_MAX : id == 0xffffffffu;
    if (!cie) {
      size_t loc = body + idsize;
      if (end - body < idsize + 16) return bad(e, ".debug_frame has an FDE too short for its addresses");
      size_t s;
      uint64_t addend;
      uint64_t most;
      int unknown;
      if (fde_target(e, rel, nrel, entsize, loc, p + loc, &s, &addend)) {
        if (cfa_offset(p, loc + 16, end, &most, &unknown) != 0)
          return bad(e, ".debug_frame has an instruction running past its FDE");
        /* the function that starts there */
        unsigned shndx = (unsigned)rd(e->syms + 24 * s + 6, 2);
        uint64_t addr = rd(e->syms + 24 * s + 8, 8) + addend;
        for (size_t k = 0; k < e->nsyms && !unknown; k++) {
          const unsigned char *q = e->syms + 24 * k;
          const char *name = symbol_name(e, k);
          if ((q[4] & 0xf) != 2 || rd(q + 6, 2) != shndx || rd(q + 8, 8) != addr || name == NULL ||
              is_kernel(e, k))
            continue;
          /* "$kernel$function": a copy compiled into that kernel */
          char kernel[128] = "";
          const char *fn = name, *second = name[0] == '$' ? strchr(name + 1, '$') : NULL;
          if (second && (size_t)(second - name - 1) < sizeof kernel) {
            memcpy(kernel, name + 1, (size_t)(second - name - 1));
            kernel[second - name - 1] = '\0';
            fn = second + 1;
          }
          cubin_frame *f = frame_of(out, kernel, fn);
          if (f == NULL) return bad(e, "frames: out of memory");
          f->bytes = (size_t)most;
        }
      }
    }
    at = end;
  }
  return 0;
}

/* The frames, from the sections cubin_elf_read checked: .symtab (its
** names in the section its sh_link gives), each .nv.info, and .debug_frame
** with its relocations (the section whose sh_info names it). */
static int read_frames(elf *e, cubin_frames *out) {
  const cubin_elf *c = e->c;
  const cubin_section *dframe = NULL, *rel = NULL;
  unsigned dframe_index = 0;
  for (unsigned i = 0; i < c->nsections; i++) {
    const cubin_section *s = &c->sections[i];
    if (s->type == 2) {   /* SHT_SYMTAB */
      if (s->link >= c->nsections) return bad(e, ".symtab names a string table it does not have");
      e->syms = s->bytes;
      e->nsyms = s->size / 24;
      e->strs = c->sections[s->link].bytes;
      e->strlen_ = c->sections[s->link].size;
    }
    if (strcmp(s->name, ".debug_frame") == 0) dframe_index = i;
  }
  for (unsigned i = 0; i < c->nsections; i++) {
    const cubin_section *s = &c->sections[i];
    if (strncmp(s->name, ".nv.info", 8) == 0 && (s->name[8] == '\0' || s->name[8] == '.')) {
      if (read_nv_info(e, s->bytes, s->size, out) != 0) return -1;
    } else if (dframe_index && i == dframe_index) {
      dframe = s;
    } else if (dframe_index && (s->type == 4 || s->type == 9) && s->info == dframe_index) {
      rel = s;   /* SHT_RELA, SHT_REL */
    }
  }
  if (dframe && rel && e->nsyms &&
      read_debug_frame(e, dframe->bytes, dframe->size, rel->bytes, rel->size,
                       rel->type == 4 ? 24 : 16, out) != 0)
    return -1;
  return 0;
}

int cubin_frames_read(const cubin_elf *c, cubin_frames *out, char *why, size_t whylen) {
  elf e = {.c = c, .why = why, .whylen = whylen};
  out->v = NULL;
  out->n = 0;
  if (read_frames(&e, out) == 0) return 0;
  cubin_frames_free(out);
  return -1;
}

void cubin_frames_free(cubin_frames *f) {
  free(f->v);
  f->v = NULL;
  f->n = 0;
}
