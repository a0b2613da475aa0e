/*
** includes: the headers an NVRTC compilation may read, found without
** compiling it. NVRTC has no dependency output (no -M/-MD among its
** options up to 13.0, and no call that lists the headers read), so the
** source's #include lines and __has_include operands are followed along
** the include path NVRTC searches: for "name" the including file's
** directory, then the source's own directory (unless -no-source-include)
** and the -I directories in order; for <name> those last two. Every place
** a name could be found goes into the record: what is there, or that it
** is absent, so that a header that appears in front of another is seen
** too; each header found is read for its own includes.
**
** It over-approximates: an #include in a branch not taken counts, as does
** a place NVRTC would not reach; that costs at most a needless
** recompilation, never a stale module. A function-like macro whose body
** asks __has_include about its parameter (libcu++'s _CCCL_HAS_INCLUDE, in
** the toolkit's headers) asks too wherever it is used. NVRTC's built-in
** headers are part of the library, whose version is in the key; the
** toolkit's headers come through -I (nvrtc.h) and are recorded like any
** other. An #include whose operand is a macro cannot be followed: the
** record fails, and such a source is compiled without the disk cache.
*/
#ifndef LUACUDA_INCLUDES_H
#define LUACUDA_INCLUDES_H

#include <stddef.h>

#include "deps.h"

/* Record into d the headers that compiling text[0 .. len), named name,
** with the NVRTC options opts[0 .. nopts), may read. */
void lc_includes_nvrtc(lc_deps *d, const char *text, size_t len, const char *name,
                       const char *const *opts, int nopts);

#endif
