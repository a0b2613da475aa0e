/*
** bench/gpu_driver.c: the C baseline for bench/gpu.lua, on the CUDA driver
** API opened with dlopen (no CUDA headers needed). It measures what
** luacuda is compared with, on the same machine, in the same run:
**   launch IMAGE N       microseconds per cuLaunchKernel of the kernel
**                        empty4(float*, float, int, int), in a loop; IMAGE
**                        is the cubin (or PTX) bench/gpu.lua chose as the
**                        library does: a cubin loads where the driver is
**                        older than NVRTC, NVRTC's PTX may not
**   copy BYTES REPEAT    GB/s of host-to-device and device-to-host copies
**                        with cuMemcpyHtoD/DtoH, pageable and pinned
**   gemm N REPEAT        milliseconds per cublasSgemm_v2 of N x N float32
**                        matrices of ones (a loop of REPEAT calls, then one
**                        synchronize; best of 5), cuBLAS opened as luacuda
**                        opens it: $LUACUDA_CUBLAS, else libcublas.so.13,
**                        .12, .11; and C[0] (N when right)
** Each line printed is "name value".
*/
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

static CUresult (*cuInit)(unsigned);
static CUresult (*cuDriverGetVersion)(int *);
static CUresult (*cuDeviceGet)(CUdevice *, int);
static CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*cuCtxSetCurrent)(CUcontext);
static CUresult (*cuCtxSynchronize)(void);
static CUresult (*cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, CUstream, void **, void **);
static CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*cuMemFree)(CUdeviceptr);
static CUresult (*cuMemAllocHost)(void **, size_t);
static CUresult (*cuMemFreeHost)(void *);
static CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
static CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
static CUresult (*cuGetErrorName)(CUresult, const char **);
static CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);

static void check(CUresult rc, const char *call) {
  if (rc == 0) return;
  const char *name = "?";
  if (cuGetErrorName) cuGetErrorName(rc, &name);
  fprintf(stderr, "gpu_driver: %s: %s\n", call, name);
  exit(1);
}
#define CHECK(call) check(call, #call)

static void *sym(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (p == NULL) {
    fprintf(stderr, "gpu_driver: the library has no %s\n", name);
    exit(1);
  }
  return p;
}

/* assign a dlsym result to a function pointer, as POSIX allows */
#define LOAD(var, name) do { void *p_ = sym(lib, name); memcpy(&var, &p_, sizeof p_); } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void open_driver(void) {
  const char *path = getenv("LUACUDA_LIBCUDA");
  void *lib = dlopen(path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "gpu_driver: %s\n", dlerror());
    exit(1);
  }
  LOAD(cuGetErrorName, "cuGetErrorName");
  LOAD(cuInit, "cuInit");
  LOAD(cuDriverGetVersion, "cuDriverGetVersion");
  LOAD(cuDeviceGet, "cuDeviceGet");
  LOAD(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  LOAD(cuCtxSetCurrent, "cuCtxSetCurrent");
  LOAD(cuCtxSynchronize, "cuCtxSynchronize");
  LOAD(cuModuleLoadData, "cuModuleLoadData");
  LOAD(cuModuleGetFunction, "cuModuleGetFunction");
  LOAD(cuLaunchKernel, "cuLaunchKernel");
  LOAD(cuMemAlloc, "cuMemAlloc_v2");
  LOAD(cuMemFree, "cuMemFree_v2");
  LOAD(cuMemAllocHost, "cuMemAllocHost_v2");
  LOAD(cuMemFreeHost, "cuMemFreeHost");
  LOAD(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  LOAD(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  LOAD(cuMemsetD32Async, "cuMemsetD32Async");
  CUdevice dev;
  CUcontext ctx;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) { perror(path); exit(1); }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s == NULL || fread(s, 1, (size_t)n, f) != (size_t)n) { perror(path); exit(1); }
  s[n] = '\0';
  fclose(f);
  return s;
}

static void bench_launch(const char *imagefile, long n) {
  char *image = read_file(imagefile);   /* NUL-terminated, as PTX must be */
  CUmodule mod;
  CUfunction fn;
  CUresult rc = cuModuleLoadData(&mod, image);
  if (rc != 0) {
    const char *name = "?";
    int v = 0;
    cuGetErrorName(rc, &name);
    cuDriverGetVersion(&v);
    fprintf(stderr, "gpu_driver: cuModuleLoadData(%s): %s (driver %d.%d)\n", imagefile, name,
            v / 1000, v % 1000 / 10);
    exit(1);
  }
  CHECK(cuModuleGetFunction(&fn, mod, "empty4"));
  CUdeviceptr a;
  CHECK(cuMemAlloc(&a, 16));
  float b = 1;
  int c = 2, d = 3;
  void *args[] = {&a, &b, &c, &d};
  double best = 1e30;
  for (int round = 0; round < 5; round++) {
    double t0 = now();
    for (long i = 0; i < n; i++) CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CHECK(cuCtxSynchronize());
    double t = (now() - t0) / (double)n;
    if (t < best) best = t;
  }
  printf("launch_us %.4f\n", best * 1e6);
  CHECK(cuMemFree(a));
  free(image);
}

static double copy_gbs(CUdeviceptr d, void *h, size_t bytes, int repeat, int to_device) {
  double best = 1e30;
  for (int r = 0; r < repeat; r++) {
    double t0 = now();
    if (to_device) CHECK(cuMemcpyHtoD(d, h, bytes));
    else CHECK(cuMemcpyDtoH(h, d, bytes));
    double t = now() - t0;
    if (t < best) best = t;
  }
  return (double)bytes / best * 1e-9;
}

static void bench_copy(size_t bytes, int repeat) {
  CUdeviceptr d;
  CHECK(cuMemAlloc(&d, bytes));
  void *pageable = malloc(bytes), *pinned;
  if (pageable == NULL) { perror("malloc"); exit(1); }
  memset(pageable, 1, bytes);            /* touched: no first-use page faults */
  CHECK(cuMemAllocHost(&pinned, bytes));
  memset(pinned, 1, bytes);
  printf("h2d_pageable_gbs %.3f\n", copy_gbs(d, pageable, bytes, repeat, 1));
  printf("d2h_pageable_gbs %.3f\n", copy_gbs(d, pageable, bytes, repeat, 0));
  printf("h2d_pinned_gbs %.3f\n", copy_gbs(d, pinned, bytes, repeat, 1));
  printf("d2h_pinned_gbs %.3f\n", copy_gbs(d, pinned, bytes, repeat, 0));
  CHECK(cuMemFreeHost(pinned));
  free(pageable);
  CHECK(cuMemFree(d));
}

/* cuBLAS: the few functions the gemm baseline calls */
typedef struct cublasContext *cublasHandle_t;
static int (*cublasCreate)(cublasHandle_t *);
static int (*cublasSgemm)(cublasHandle_t, int, int, int, int, int, const float *, const float *,
                          int, const float *, int, const float *, float *, int);

static void open_cublas(void) {
  const char *path = getenv("LUACUDA_CUBLAS");
  const char *names[] = {path && *path ? path : "libcublas.so.13", "libcublas.so.12",
                         "libcublas.so.11"};
  void *lib = NULL;
  for (int i = 0; i < (path && *path ? 1 : 3) && lib == NULL; i++) {
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) printf("cublas %s\n", names[i]);
  }
  if (lib == NULL) {
    fprintf(stderr, "gpu_driver: no cuBLAS: %s\n", dlerror());
    exit(1);
  }
  LOAD(cublasCreate, "cublasCreate_v2");
  LOAD(cublasSgemm, "cublasSgemm_v2");
}

static void bench_gemm(int n, int repeat) {
  open_cublas();
  cublasHandle_t h;
  if (cublasCreate(&h) != 0) {
    fprintf(stderr, "gpu_driver: cublasCreate_v2 failed\n");
    exit(1);
  }
  size_t bytes = (size_t)n * (size_t)n * sizeof(float);
  CUdeviceptr a, b, c;
  CHECK(cuMemAlloc(&a, bytes));
  CHECK(cuMemAlloc(&b, bytes));
  CHECK(cuMemAlloc(&c, bytes));
  CHECK(cuMemsetD32Async(a, 0x3f800000u, (size_t)n * (size_t)n, NULL));     /* 1.0f */
  CHECK(cuMemsetD32Async(b, 0x3f800000u, (size_t)n * (size_t)n, NULL));
  CHECK(cuCtxSynchronize());
  const float one = 1, zero = 0;
  float *A = (float *)(uintptr_t)a, *B = (float *)(uintptr_t)b, *C = (float *)(uintptr_t)c;
  /* the default stream (NULL), as a handle without cublasSetStream uses */
  if (cublasSgemm(h, 0, 0, n, n, n, &one, B, n, A, n, &zero, C, n) != 0) {
    fprintf(stderr, "gpu_driver: cublasSgemm_v2 failed\n");
    exit(1);
  }
  CHECK(cuCtxSynchronize());
  double best = 1e30;
  for (int round = 0; round < 5; round++) {
    double t0 = now();
    for (int i = 0; i < repeat; i++) cublasSgemm(h, 0, 0, n, n, n, &one, B, n, A, n, &zero, C, n);
    CHECK(cuCtxSynchronize());
    double t = (now() - t0) / repeat;
    if (t < best) best = t;
  }
  float c0;
  CHECK(cuMemcpyDtoH(&c0, c, sizeof c0));
  printf("gemm_ms %.6f\nc0 %g\n", best * 1e3, c0);
  CHECK(cuMemFree(a));
  CHECK(cuMemFree(b));
  CHECK(cuMemFree(c));
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "launch") == 0) {
    open_driver();
    bench_launch(argv[2], atol(argv[3]));
  } else if (argc == 4 && strcmp(argv[1], "copy") == 0) {
    open_driver();
    bench_copy((size_t)atoll(argv[2]), atoi(argv[3]));
  } else if (argc == 4 && strcmp(argv[1], "gemm") == 0) {
    open_driver();
    bench_gemm(atoi(argv[2]), atoi(argv[3]));
  } else {
    fprintf(stderr, "usage: gpu_driver launch IMAGE N | copy BYTES REPEAT | gemm N REPEAT\n");
    return 2;
  }
  return 0;
}
