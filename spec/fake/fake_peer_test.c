/*
** fake_peer_test: the fake driver's rules for several devices and peer
** access (spec/fake/fake_cuda.c), checked against the driver API's manual
** (cuda.h's comments): cuDeviceCanAccessPeer, cuCtxEnablePeerAccess's
** errors in the manual's order, access that is one direction only and only
** once enabled, cuMemcpyPeerAsync, which needs none, and pool memory,
** which peer access does not cover (cuMemPoolSetAccess). Three devices:
** 9.0, 8.6, 9.0 (FAKE_CUDA_DEVICES=3, set here before cuInit).
**
**   fake_peer_test [--list | NAME]   (unit.h)
*/
#include <cuda.h>
#include <stdint.h>
#include <string.h>

#include "../unit/unit.h"

/* the fake's own export: may the current context's device touch [p, p + n)? */
int fake_cuda_reachable(CUdeviceptr p, size_t n);

static CUcontext ctx[3];

static int setup(void) {
  setenv("FAKE_CUDA_DEVICES", "3", 1);
  setenv("FAKE_CUDA_CC", "9.0,8.6,9.0", 1);
  if (cuInit(0) != CUDA_SUCCESS) return -1;
  for (int i = 0; i < 3; i++)
    if (cuDevicePrimaryCtxRetain(&ctx[i], i) != CUDA_SUCCESS) return -1;
  return 0;
}

static int test_can_access(void) {
  int can = -1;
  CHECK_EQ(cuDeviceCanAccessPeer(&can, 0, 2), CUDA_SUCCESS);
  CHECK_EQ(can, 1);                                       /* both 9.0 */
  CHECK_EQ(cuDeviceCanAccessPeer(&can, 2, 0), CUDA_SUCCESS);
  CHECK_EQ(can, 1);
  CHECK_EQ(cuDeviceCanAccessPeer(&can, 0, 1), CUDA_SUCCESS);
  CHECK_EQ(can, 0);                                       /* 9.0 and 8.6 */
  CHECK_EQ(cuDeviceCanAccessPeer(&can, 1, 2), CUDA_SUCCESS);
  CHECK_EQ(can, 0);
  CHECK_EQ(cuDeviceCanAccessPeer(&can, 0, 0), CUDA_SUCCESS);
  CHECK_EQ(can, 0);                                       /* not its own peer */
  CHECK_EQ(cuDeviceCanAccessPeer(&can, 0, 3), CUDA_ERROR_INVALID_DEVICE);
  CHECK_EQ(cuDeviceCanAccessPeer(&can, -1, 0), CUDA_ERROR_INVALID_DEVICE);
  return 0;
}

static int test_enable_and_reach(void) {
  CUdeviceptr on0, on2;
  CHECK_EQ(cuCtxSetCurrent(ctx[0]), CUDA_SUCCESS);
  CHECK_EQ(cuMemAlloc(&on0, 256), CUDA_SUCCESS);
  CHECK_EQ(cuCtxSetCurrent(ctx[2]), CUDA_SUCCESS);
  CHECK_EQ(cuMemAlloc(&on2, 256), CUDA_SUCCESS);
  /* without a current context */
  CHECK_EQ(cuCtxSetCurrent(NULL), CUDA_SUCCESS);
  CHECK_EQ(cuCtxEnablePeerAccess(ctx[2], 0), CUDA_ERROR_INVALID_CONTEXT);
  CHECK_EQ(cuCtxSetCurrent(ctx[0]), CUDA_SUCCESS);
  /* its own context, an invalid one, flags, a device that cannot */
  CHECK_EQ(cuCtxEnablePeerAccess(ctx[0], 0), CUDA_ERROR_INVALID_CONTEXT);
  CHECK_EQ(cuCtxEnablePeerAccess((CUcontext)(uintptr_t)16, 0), CUDA_ERROR_INVALID_CONTEXT);
  CHECK_EQ(cuCtxEnablePeerAccess(ctx[2], 1), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(cuCtxEnablePeerAccess(ctx[1], 0), CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
  /* device 0 reaches device 2's memory once it enabled access, not before */
  CHECK_EQ(fake_cuda_reachable(on2, 256), 0);
  CHECK_EQ(cuCtxEnablePeerAccess(ctx[2], 0), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_reachable(on2, 256), 1);
  CHECK_EQ(cuCtxEnablePeerAccess(ctx[2], 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
  /* one direction: device 2 does not reach device 0's until it enables it */
  CHECK_EQ(cuCtxSetCurrent(ctx[2]), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_reachable(on0, 256), 0);
  CHECK_EQ(cuCtxEnablePeerAccess(ctx[0], 0), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_reachable(on0, 256), 1);
  /* device 1 reaches neither */
  CHECK_EQ(cuCtxSetCurrent(ctx[1]), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_reachable(on0, 256), 0);
  CHECK_EQ(fake_cuda_reachable(on2, 256), 0);
  CHECK_EQ(cuMemFree(on2), CUDA_SUCCESS);
  CHECK_EQ(cuMemFree(on0), CUDA_SUCCESS);
  return 0;
}

static int test_memcpy_peer(void) {
  /* between devices 0 and 1, which have no peer access: the driver stages it */
  CUdeviceptr a, b;
  int host[64], back[64];
  for (int i = 0; i < 64; i++) host[i] = i * 3 + 1;
  CHECK_EQ(cuCtxSetCurrent(ctx[0]), CUDA_SUCCESS);
  CHECK_EQ(cuMemAlloc(&a, sizeof host), CUDA_SUCCESS);
  CHECK_EQ(cuMemcpyHtoD(a, host, sizeof host), CUDA_SUCCESS);
  CHECK_EQ(cuCtxSetCurrent(ctx[1]), CUDA_SUCCESS);
  CHECK_EQ(cuMemAlloc(&b, sizeof host), CUDA_SUCCESS);
  CHECK_EQ(cuCtxSetCurrent(ctx[0]), CUDA_SUCCESS);
  CHECK_EQ(cuMemcpyPeerAsync(b, ctx[1], a, ctx[0], sizeof host, NULL), CUDA_SUCCESS);
  CHECK_EQ(cuStreamSynchronize(NULL), CUDA_SUCCESS);      /* queued on device 0's stream */
  CHECK_EQ(cuCtxSetCurrent(ctx[1]), CUDA_SUCCESS);
  CHECK_EQ(cuMemcpyDtoH(back, b, sizeof back), CUDA_SUCCESS);
  for (int i = 0; i < 64; i++) CHECK_EQ(back[i], host[i]);
  /* each pointer must be device memory of its context's device */
  CHECK_EQ(cuMemcpyPeerAsync(b, ctx[0], a, ctx[0], sizeof host, NULL), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(cuMemcpyPeerAsync(b, ctx[1], (CUdeviceptr)(uintptr_t)host, ctx[0], sizeof host, NULL),
           CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(cuMemcpyPeerAsync(b, ctx[1], a, ctx[0], 2 * sizeof host, NULL), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(cuMemcpyPeerAsync(b, (CUcontext)(uintptr_t)16, a, ctx[0], sizeof host, NULL),
           CUDA_ERROR_INVALID_CONTEXT);
  CHECK_EQ(cuMemFree(b), CUDA_SUCCESS);
  CHECK_EQ(cuCtxSetCurrent(ctx[0]), CUDA_SUCCESS);
  CHECK_EQ(cuMemFree(a), CUDA_SUCCESS);
  return 0;
}

/* A pool's blocks are reachable from its own device, and from another only
** once the pool grants it (peer access enabled or not); a grant is checked
** whole before it changes anything, and PROT_NONE takes it back. */
static int test_pool_access(void) {
  CUmemoryPool pool;
  CUmemPoolProps props;
  memset(&props, 0, sizeof props);
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 2;
  CUdeviceptr block;
  CHECK_EQ(cuCtxSetCurrent(ctx[2]), CUDA_SUCCESS);
  CHECK_EQ(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
  CHECK_EQ(cuMemAllocFromPoolAsync(&block, 256, pool, NULL), CUDA_SUCCESS);
  CHECK_EQ(cuStreamSynchronize(NULL), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_reachable(block, 256), 1);           /* its own device */
  CHECK_EQ(cuCtxSetCurrent(ctx[0]), CUDA_SUCCESS);
  CUresult r = cuCtxEnablePeerAccess(ctx[2], 0);
  CHECK(r == CUDA_SUCCESS || r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
  CHECK_EQ(fake_cuda_reachable(block, 256), 0);           /* peer access does not cover it */
  CUmemAccessDesc d[2];
  memset(d, 0, sizeof d);
  d[0].location.type = d[1].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  d[0].location.id = 0;
  d[0].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  d[1].location.id = 1;                                   /* an 8.6: cannot reach a 9.0 */
  d[1].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CHECK_EQ(cuMemPoolSetAccess(pool, d, 2), CUDA_ERROR_INVALID_DEVICE);
  d[1].location.id = 2;                                   /* its own device keeps access */
  d[1].flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  CHECK_EQ(cuMemPoolSetAccess(pool, d, 2), CUDA_ERROR_INVALID_VALUE);
  d[1].location.id = 3;                                   /* no such device */
  d[1].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CHECK_EQ(cuMemPoolSetAccess(pool, d, 2), CUDA_ERROR_INVALID_VALUE);
  d[0].flags = CU_MEM_ACCESS_FLAGS_PROT_READ;             /* pools take no read-only access */
  CHECK_EQ(cuMemPoolSetAccess(pool, d, 1), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(fake_cuda_reachable(block, 256), 0);           /* nothing changed */
  d[0].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CHECK_EQ(cuMemPoolSetAccess(pool, d, 1), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_reachable(block, 256), 1);
  CHECK_EQ(cuCtxSetCurrent(ctx[1]), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_reachable(block, 256), 0);           /* granted to device 0 only */
  CHECK_EQ(cuCtxSetCurrent(ctx[0]), CUDA_SUCCESS);
  d[0].flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  CHECK_EQ(cuMemPoolSetAccess(pool, d, 1), CUDA_SUCCESS);
  CHECK_EQ(fake_cuda_reachable(block, 256), 0);           /* taken back */
  CHECK_EQ(cuCtxSetCurrent(ctx[2]), CUDA_SUCCESS);
  CHECK_EQ(cuMemFreeAsync(block, NULL), CUDA_SUCCESS);
  CHECK_EQ(cuStreamSynchronize(NULL), CUDA_SUCCESS);
  CHECK_EQ(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  return 0;
}

#define T(name) { #name, test_##name }
static const unit_test tests[] = {T(can_access), T(enable_and_reach), T(memcpy_peer),
                                  T(pool_access)};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

int main(int argc, char **argv) {
  (void)err;                     /* unit.h's, for calls checked by message: none here */
  if (setup() != 0) {
    fprintf(stderr, "fake_peer_test: the fake driver did not start\n");
    return 1;
  }
  return unit_main("fake_peer_test", tests, NTESTS, argc, argv);
}
