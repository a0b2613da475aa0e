// A histogram of byte values: each block counts into its own bins in
// dynamic shared memory (sized by the launch), then adds them to the
// global bins with one atomic per bin.
extern "C" __global__ void histogram(const uint8_t *data, int n, unsigned *bins, int nbins) {
  DYNAMIC_SHARED(unsigned, local);
  for (int b = threadIdx.x; b < nbins; b += blockDim.x) local[b] = 0;
  syncthreads();
  for (int i = grid1(); i < n; i += gridsize1()) atomicAdd(&local[data[i] % nbins], 1u);
  syncthreads();
  for (int b = threadIdx.x; b < nbins; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}
