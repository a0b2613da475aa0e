/*
** The native baselines of bench/array_math.lua: the array math as plain C
** loops, built with the C compiler at -O2 in the same run. Prints the best
** time of each, in ns. Usage: native_math N REPEAT.
**   sum   a float32 sum of N values, one accumulator (the loop a C
**         programmer writes)
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* kept out of line so the loop is not folded into the timing code */
__attribute__((noinline)) static float sum(const float *x, long n) {
  float s = 0.0f;
  for (long i = 0; i < n; i++) s += x[i];
  return s;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: native_math N REPEAT\n");
    return 2;
  }
  long n = atol(argv[1]);
  int reps = atoi(argv[2]);
  float *x = malloc(sizeof(float) * (size_t)n);
  if (x == NULL) return 1;
  for (long i = 0; i < n; i++) x[i] = 1e-3f + (float)(i % 1000) * 1e-3f;
  volatile float sink = 0;
  double best = 1e300;
  for (int r = 0; r < reps; r++) {
    double t0 = now_ns();
    sink = sum(x, n);
    double t = now_ns() - t0;
    if (t < best) best = t;
  }
  printf("sum %.0f\n", best);
  (void)sink;
  free(x);
  return 0;
}
