// __global__ void fake(int x) {}
/* __global__ void also_fake() { */
#if 0
__global__ void dead(int a) {
#else
extern "C" __global__ void live(const char *s) { const char *q = "}\"{"; char c = '}'; auto r = R"x(})x"; }
#endif
#define K extern "C" __global__
K void hidden(int) {}
