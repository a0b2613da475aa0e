extern "C" __global__ void __launch_bounds__(256, 2) tile(float *out, Array<float, 2> a) {
  __shared__ float t[16][17], u[4];
  extern __shared__ __align__(16) double dyn[];
  static __shared__ int flag;
  t[threadIdx.y][threadIdx.x] = a(threadIdx.y, threadIdx.x);
  __syncthreads();
}
