struct Particle { float x, y; int id; };
extern "C" __global__ void fall(Particle *p, int n, double dt, __grid_constant__ const Array<double, 3> g) {
  if (threadIdx.x < n) p[threadIdx.x].y -= 9.81 * dt;
}
