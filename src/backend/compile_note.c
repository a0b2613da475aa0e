/*
** compile_note: see compile_note.h.
*/
#include "compile_note.h"

#include <stdio.h>
#include <time.h>

#include "env.h"
#include "scan.h"

double lc_compile_clock(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

const char *lc_compile_label(const lc_source *src) {
  if (src->scan && src->scan->nkernels > 0) return src->scan->kernels[0].name;
  if (src->nnames > 0) return src->names[0];
  return src->name;
}

void lc_compile_note(const char *label, const char *backend, double start) {
  double took = lc_compile_clock() - start;
  if (!lc_settings_get()->verbose && took <= LC_COMPILE_NOTE_SLOW) return;
  /* one write per line: lines of several threads do not interleave */
  char line[256];
  int n = snprintf(line, sizeof line, "luacuda: compiled %.160s (%s, %.2f s)\n", label, backend,
                   took);
  if (n > (int)sizeof line - 1) n = (int)sizeof line - 1;
  fwrite(line, 1, (size_t)n, stderr);
  fflush(stderr);
}
