"""bench/gpu_ref.py: launch cost of an empty four-argument kernel with CuPy's
RawKernel and with numba-cuda, for bench/gpu.lua to compare against luacuda
on the same machine in the same run. Prints "cupy_launch_us X" and
"numba_launch_us X", or "<name>_unavailable <reason>" for a missing one."""
import sys
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
SOURCE = r'''extern "C" __global__ void empty4(float *a, float b, int c, int d) {}'''


def best_of(rounds, launch, sync):
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(N):
            launch()
        sync()
        best = min(best, (time.perf_counter() - t0) / N)
    return best * 1e6


def cupy_launch_us():
    import cupy as cp
    kernel = cp.RawKernel(SOURCE, "empty4")
    a = cp.zeros(4, dtype=cp.float32)
    args = (a, cp.float32(1), cp.int32(2), cp.int32(3))
    sync = cp.cuda.Device().synchronize
    for _ in range(1000):
        kernel((1,), (1,), args)
    sync()
    return best_of(5, lambda: kernel((1,), (1,), args), sync)


def numba_launch_us():
    import numpy as np
    from numba import cuda

    @cuda.jit("void(float32[:], float32, int32, int32)")
    def empty4(a, b, c, d):
        pass

    a = cuda.device_array(4, dtype=np.float32)
    configured = empty4[1, 1]
    b, c, d = np.float32(1), np.int32(2), np.int32(3)
    for _ in range(1000):
        configured(a, b, c, d)
    cuda.synchronize()
    return best_of(5, lambda: configured(a, b, c, d), cuda.synchronize)


for name, fn in (("cupy", cupy_launch_us), ("numba", numba_launch_us)):
    try:
        print("%s_launch_us %.4f" % (name, fn()), flush=True)
    except Exception as e:  # a missing package is reported, not fatal
        print("%s_unavailable %s" % (name, str(e).splitlines()[0] if str(e) else type(e).__name__),
              flush=True)
