// C = A * B for n x n float matrices, in 16 x 16 tiles staged through
// shared memory (n a multiple of 16).
#define TILE 16

extern "C" __global__ void matmul(const float *a, const float *b, float *c, int n) {
  SHARED_ARRAY(float, ta, TILE, TILE);
  SHARED_ARRAY(float, tb, TILE, TILE);
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int t = 0; t < n / TILE; t++) {
    ta[ty][tx] = a[row * n + t * TILE + tx];
    tb[ty][tx] = b[(t * TILE + ty) * n + col];
    syncthreads();
    for (int k = 0; k < TILE; k++) acc += ta[ty][k] * tb[k][tx];
    syncthreads();
  }
  c[row * n + col] = acc;
}
