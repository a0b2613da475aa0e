__constant__ float coef[4] = {1, 2, 3, 4};
__device__ int counter;
__managed__ double m[2][3];
extern __device__ int ext;
namespace ns { __constant__ int hidden[8]; }
static __device__ unsigned long long big[1][2][3];
