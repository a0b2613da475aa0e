#define RADIUS 3
#define WIDTH (2 * RADIUS + 1)
#define BARE RADIUS + 1
constexpr int ROWS = (WIDTH - 1) / 2 << 1;
enum class Op : unsigned char { Add = 1, Mul = Add + 1 };
typedef enum { RED, GREEN = RED + 2 } Colour;
enum { TILE = 32, HALF = TILE >> 1 };
struct W { float w[WIDTH]; Op op; };
__constant__ float weights[WIDTH][BARE];
__device__ int table[ROWS % 5 | 1][TILE ^ HALF & ~3];
extern "C" __global__ void k(W w, Op op, Colour c, float *out) {}
