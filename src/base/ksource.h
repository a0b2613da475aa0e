/*
** ksource: the rules of a kernel source that every backend applies the
** same way, written once here. Pure C.
**
** - Options: what a user gives (NVRTC's spellings, in any of their forms:
**   "-I dir", "-Idir", "--include-path=dir"...) is normalised to one
**   spelling per meaning, one string each, before any backend sees it;
**   the C++ dialect is always named (LC_KSOURCE_STD when not given).
** - Text: what is compiled starts with a head, the prelude and then a
**   #line directive naming the user's source, so that every compiler's
**   messages give the user's own lines.
** - Key: a compiled module is cached under what was compiled, how and by
**   which compiler.
*/
#ifndef LUACUDA_KSOURCE_H
#define LUACUDA_KSOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "cache.h"

/* Options a user may give to one compilation. */
#define LC_KSOURCE_MAXOPTS 64

/* The C++ dialect kernels are compiled as when no -std is given. */
#define LC_KSOURCE_STD "-std=c++17"

/* Normalised options: each a single string in one of these forms, or an
** option of NVRTC's own that no other backend has (passed as given):
**   -I<dir>  -D<name>[=<value>]  -U<name>  -std=<c++NN>  --use_fast_math
** v[] points into the user's strings or into text[]. */
typedef struct lc_kopts {
  int n;
  const char *v[LC_KSOURCE_MAXOPTS + 1];   /* +1: the -std default */
  size_t cap;                              /* bytes of text[] */
  char text[];
} lc_kopts;

/* Bytes an lc_kopts for the options in[0..nin) needs (enough for any
** normalisation of them). */
size_t lc_kopts_size(const char *const *in, int nin);

/* Normalise in[0..nin) into o (lc_kopts_size(in, nin) bytes). Returns 0,
** or -1 with err[LC_ERRLEN] set: more than LC_KSOURCE_MAXOPTS options, an
** option that takes a value given none, or a -std the backends do not
** all know. The strings of in must outlive o. */
int lc_kopts_normalize(const char *const *in, int nin, lc_kopts *o, char *err);

/* The head of the text compiled for a source called name: the prelude,
** then "#line 1 "<name>"". lc_ksource_head_len bytes (without the NUL
** lc_ksource_head also writes). */
size_t lc_ksource_head_len(const char *name);
void lc_ksource_head(char *out, const char *name);

/* The key of a compiled module: kind (which backend's entries, and their
** format's version), the text compiled, the options the compiler was
** given, in order, and identity (the compiler and its version). */
void lc_ksource_key(lc_hash *key, const char *kind, const char *text, size_t len,
                    const char *const *opts, int nopts, const char *identity);

#endif
