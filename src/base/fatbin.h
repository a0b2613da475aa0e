/*
** fatbin: a fatbinary of one module, the container the driver's
** cuModuleLoadData takes beside a plain cubin or PTX: the cubin for the
** device's SM and the PTX of the same source, so that the driver runs the
** cubin where it fits and JITs the PTX on a GPU newer than NVRTC knows.
** Pure C: no Lua, no device. The format is written down in fatbin.c.
*/
#ifndef LUACUDA_FATBIN_H
#define LUACUDA_FATBIN_H

#include <stddef.h>

/* The file's first four bytes, little-endian (0xBA55ED50). */
#define LC_FATBIN_MAGIC 0xBA55ED50u

/* A fatbinary of cubin (an ELF of cubinlen bytes, built for sm: 90 for
** sm_90) and ptx (ptxlen bytes of text, NUL-terminated or not), in that
** order, in *out (malloc'd, *outlen bytes). 0, or -1 with err (LC_ERRLEN
** bytes) set and *out NULL: not an ELF, a PTX without its .version, or out
** of memory. */
int lc_fatbin_write(const unsigned char *cubin, size_t cubinlen, const char *ptx,
                    size_t ptxlen, int sm, unsigned char **out, size_t *outlen, char *err);

#endif
