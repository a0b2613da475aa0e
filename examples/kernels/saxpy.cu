// y = a * x + y, one thread per element
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = grid1();
  if (i < n) y[i] = a * x[i] + y[i];
}
