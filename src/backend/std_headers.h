/*
** std_headers: the C and C++ standard headers that kernels written for
** nvcc include and NVRTC lacks (<stdio.h>, <cstdint>, <limits>...), as
** luacuda gives them to NVRTC: each maps to what NVRTC has built in or to
** the toolkit's libcu++ (kernels/std/). The simulator's host compiler has
** the real ones.
*/
#ifndef LUACUDA_STD_HEADERS_H
#define LUACUDA_STD_HEADERS_H

#include "cache.h"

/* How many there are; *names and *texts (when not NULL) get the name each
** is included by and its text, as nvrtcCreateProgram takes them. */
int lc_std_headers(const char *const **names, const char *const **texts);

/* Their names and texts into a compiled module's key. */
void lc_std_headers_key(lc_hash *key);

#endif
