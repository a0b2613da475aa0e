/*
** bench/native_matmul.c: the baseline of bench/matmul.lua, a plain triple
** loop in C, C = A B for N x N float32 matrices, row-major, the sum of
** each element in a float, k in order. Built by the bench with $CC -O2.
**   native_matmul N REPEAT   prints "loop_s <best seconds> <C[0][1]> <C[N-1][N-1]>"
** (the two elements as the bench's inputs make them, for its check).
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* kept out of line so the loop is not folded into the timing code */
__attribute__((noinline)) static void matmul(int n, const float *a, const float *b, float *c) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      float s = 0;
      for (int k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
      c[i * n + j] = s;
    }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: native_matmul N REPEAT\n");
    return 2;
  }
  int n = atoi(argv[1]), repeat = atoi(argv[2]);
  float *a = malloc(sizeof(float) * (size_t)n * (size_t)n);
  float *b = malloc(sizeof(float) * (size_t)n * (size_t)n);
  float *c = malloc(sizeof(float) * (size_t)n * (size_t)n);
  if (!a || !b || !c || n < 2 || repeat < 1) return 1;
  /* the bench's inputs: a[i][k] = (3i + 5k) % 11 - 5, b[k][j] = (7k + 2j) % 13 - 6 */
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++) {
      a[i * n + k] = (float)((3 * i + 5 * k) % 11 - 5);
      b[i * n + k] = (float)((7 * i + 2 * k) % 13 - 6);
    }
  double best = 1e300;
  for (int r = 0; r < repeat; r++) {
    double t0 = now();
    matmul(n, a, b, c);
    double t = now() - t0;
    if (t < best) best = t;
  }
  printf("loop_s %.6f %.9g %.9g\n", best, c[1], c[n * n - 1]);
  free(a);
  free(b);
  free(c);
  return 0;
}
