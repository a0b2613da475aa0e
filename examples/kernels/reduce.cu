// The sum of x: each block adds up its 256 elements in shared memory,
// halving the active threads at each step, then adds its sum to *out.
#define BLOCK 256

extern "C" __global__ void block_sum(const float *x, float *out, int n) {
  SHARED_ARRAY(float, part, BLOCK);
  int t = threadIdx.x, i = grid1();
  part[t] = i < n ? x[i] : 0.0f;
  syncthreads();
  for (int half = BLOCK / 2; half > 0; half /= 2) {
    if (t < half) part[t] += part[t + half];
    syncthreads();
  }
  if (t == 0) atomicAdd(out, part[0]);
}
