/*
** The baseline of bench/transfers.lua: the best time of a plain memcpy
** between two host blocks allocated as the simulator allocates device and
** page-locked memory (aligned_alloc(256), so both at the same offset in
** their pages), touched first so that no page fault is timed. Also timed,
** for reference: the destination 64 bytes further in its page, which x86
** copies faster (no 4K aliasing between the loads and the stores).
** Usage: memcpy BYTES REPEAT; prints "memcpy <ns>" and "memcpy+64 <ns>".
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: memcpy BYTES REPEAT\n");
    return 2;
  }
  size_t n = (size_t)strtoull(argv[1], NULL, 10);
  int reps = atoi(argv[2]);
  size_t alloc = ((n + 255) & ~(size_t)255) + 256;
  char *src = aligned_alloc(256, alloc), *dst = aligned_alloc(256, alloc);
  if (src == NULL || dst == NULL) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  memset(src, 1, n);
  memset(dst, 0, alloc);
  double best[2] = {1e300, 1e300};
  for (int k = 0; k < 2; k++) {
    for (int r = 0; r < reps; r++) {
      double t0 = now_ns();
      memcpy(dst + 64 * k, src, n);
      double t = now_ns() - t0;
      if (t < best[k]) best[k] = t;
      src[r % n] = (char)r;        /* each copy moves different bytes */
    }
  }
  /* read the result, so the copies cannot be dropped */
  unsigned sum = 0;
  for (size_t i = 0; i < n; i += 4096) sum += (unsigned char)dst[i];
  printf("memcpy %.0f\nmemcpy+64 %.0f\nchecksum %u\n", best[0], best[1], sum);
  free(src);
  free(dst);
  return 0;
}
