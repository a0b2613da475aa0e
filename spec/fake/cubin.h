/* spec/fake/cubin.h: the stack sizes ptxas wrote into a cubin, as the fake
** driver reads them (spec/fake/cubin.c). Test code, never installed. */
#ifndef FAKE_CUBIN_H
#define FAKE_CUBIN_H

#include <stddef.h>

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

/* Read the frames of the ELF img of len bytes. 0: read (none, when the
** cubin has no .nv.info); -1: the ELF or its .nv.info, .symtab or
** .debug_frame is malformed or runs past its section or the image, and
** why says where. Nothing is read outside [img, img + len). */
int cubin_frames_read(const unsigned char *img, size_t len, cubin_frames *out, char *why,
                      size_t whylen);
void cubin_frames_free(cubin_frames *f);

#endif
