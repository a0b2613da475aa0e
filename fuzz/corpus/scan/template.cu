template <typename T, int N>
__global__ void add(T *a, const T *__restrict__ b) { a[0] += b[0]; }
extern "C" {
__global__ void plain(void) {}
__global__ void [[maybe_unused]] attr(int x, bool y, short z, unsigned char c, long long l) {}
}
