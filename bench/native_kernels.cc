// The native baselines of bench/sim_kernels.lua: the same work as the
// example kernels, as plain loops, compiled by the simulator's compiler
// with the flags it gives kernels. Prints the best time of each, in ns.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

template <typename F>
static double best(int reps, F f) {
  double b = 1e300;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    f();
    double t = now() - t0;
    if (t < b) b = t;
  }
  return b;
}

// kept out of line so the loops are not folded into the timing code
__attribute__((noinline)) void saxpy(int n, float a, const float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}

__attribute__((noinline)) float sum(int n, const float *x) {
  float s = 0.0f;
  for (int i = 0; i < n; i++) s += x[i];
  return s;
}

__attribute__((noinline)) void matmul(const float *a, const float *b, float *c, int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      float acc = 0.0f;
      for (int k = 0; k < n; k++) acc += a[i * n + k] * b[k * n + j];
      c[i * n + j] = acc;
    }
}

int main(int argc, char **argv) {
  int ns = atoi(argv[1]), nr = atoi(argv[2]), nm = atoi(argv[3]);
  float *x = (float *)malloc(sizeof(float) * ns), *y = (float *)malloc(sizeof(float) * ns);
  for (int i = 0; i < ns; i++) { x[i] = i; y[i] = 1; }
  printf("saxpy %.0f\n", best(5, [&] { saxpy(ns, 2.0f, x, y); }));
  volatile float sink;
  printf("sum %.0f\n", best(5, [&] { sink = sum(nr, x); }));
  float *a = (float *)malloc(sizeof(float) * nm * nm), *b = (float *)malloc(sizeof(float) * nm * nm),
        *c = (float *)malloc(sizeof(float) * nm * nm);
  for (int i = 0; i < nm * nm; i++) { a[i] = i % 7; b[i] = i % 5; }
  printf("matmul %.0f\n", best(2, [&] { matmul(a, b, c, nm); }));
  (void)sink;
  return 0;
}
