extern "C" __global__ void k(int8_t a, uint16_t b, int32_t c, uint64_t d, __half h, half2 v, float4 q, size_t s, unsigned u, signed char sc, volatile int *vp, int *const cp, void *raw) {}
