/*
** compile_note: the line a compile that missed the cache prints on stderr,
** "luacuda: compiled saxpy (sim, 0.41 s)", with LUACUDA_VERBOSE=1, and
** always when it took more than LC_COMPILE_NOTE_SLOW seconds: a wait of
** seconds should say what it is. Both backends, library kernels too.
*/
#ifndef LUACUDA_COMPILE_NOTE_H
#define LUACUDA_COMPILE_NOTE_H

#include "backend.h"

#define LC_COMPILE_NOTE_SLOW 2.0

/* Seconds on a monotonic clock: a compile's start, for lc_compile_note. */
double lc_compile_clock(void);

/* What a module is called in the note: its first kernel, else its first
** name expression, else its name ("kernel.cu"). */
const char *lc_compile_label(const lc_source *src);

/* Print the note for label, compiled by backend ("sim", "cuda") since
** start (lc_compile_clock), when it is asked for or the compile was slow. */
void lc_compile_note(const char *label, const char *backend, double start);

#endif
