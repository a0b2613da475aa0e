/* spec/fake/cubin.h: a cubin as the fake driver reads it (spec/fake/cubin.c):
** its sections, each checked to lie inside the image, and the stack sizes
** ptxas wrote into it. Test code, never installed. */
#ifndef FAKE_CUBIN_H
#define FAKE_CUBIN_H

#include <stddef.h>

/* One section: its name (NUL-ended inside the names' table), ELF type,
** sh_link and sh_info, and its bytes (none for SHT_NOBITS), inside the
** image. */
typedef struct cubin_section {
  const char *name;
  unsigned type, link, info;
  const unsigned char *bytes;
  size_t size;
} cubin_section;

/* A cubin's ELF: its header's 64 bytes and every section, read within
** [img, img + len). */
typedef struct cubin_elf {
  const unsigned char *img;
  size_t len;
  cubin_section *sections;
  unsigned nsections;
} cubin_elf;

/* The length of a cubin loaded alone, which carries none: where its ELF
** header says its section and program header tables end, the later (ptxas
** writes them last, after the sections' bytes). img holds an ELF header's
** 64 bytes. */
size_t cubin_extent(const unsigned char *img);

/* Read the ELF img of len bytes. 0: read (cubin_elf_free); -1: its header,
** its section table, a name or a section's bytes is malformed or runs past
** the image, and why says which. Nothing is read outside [img, img + len). */
int cubin_elf_read(const unsigned char *img, size_t len, cubin_elf *out, char *why, size_t whylen);
void cubin_elf_free(cubin_elf *e);

/* The toolkit a .note.nv.cuinfo section names, as 10 * major + minor (130
** for 13.0), into *toolkit: 0; -1 when the note's name or description runs
** past its section, or the description is too short to hold it. */
int cubin_cuinfo_toolkit(const cubin_section *note, unsigned *toolkit);

/* One function's frame: a kernel's own (EIATTR_FRAME_SIZE) with the stack
** it needs before it runs (EIATTR_MIN_STACK_SIZE), or a device function's
** (its .debug_frame CFA offset) as compiled into kernel `kernel` ("" for a
** function of its own, callable from any kernel). */
typedef struct cubin_frame {
  char kernel[128];
  char name[128];
  size_t bytes;
  size_t min_stack;
  int is_kernel;
  int has_min_stack;
} cubin_frame;

typedef struct cubin_frames {
  cubin_frame *v;
  int n;
} cubin_frames;

/* Read the frames of a cubin read by cubin_elf_read. 0: read (none, when
** the cubin has no .nv.info); -1: its .nv.info, .symtab or .debug_frame is
** malformed or runs past its section, and why says where. */
int cubin_frames_read(const cubin_elf *elf, cubin_frames *out, char *why, size_t whylen);
void cubin_frames_free(cubin_frames *f);

#endif
