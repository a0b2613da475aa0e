/*
** fake_nvrtc: an NVRTC that says it is another version, so that which
** NVRTC luacuda picks for a driver can be tested where one toolkit is
** installed. Built by make check into build/fake/nvrtc/libnvrtc.so.12
** (test code: never installed). Every call but nvrtcVersion goes to the
** real NVRTC, $FAKE_NVRTC_REAL (libnvrtc.so.13 by default); nvrtcVersion
** says $FAKE_NVRTC_VERSION (12.9 by default).
*/
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void *real;

static void open_real(void) {
  const char *path = getenv("FAKE_NVRTC_REAL");
  real = dlopen(path && *path ? path : "libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL);
  if (real == NULL) fprintf(stderr, "fake_nvrtc: %s\n", dlerror());
}

/* The real function called name, or NULL. */
static void *fn(const char *name) {
  pthread_once(&once, open_real);
  return real ? dlsym(real, name) : NULL;
}

/* A forwarder: returns 7 (NVRTC_ERROR_INTERNAL_ERROR... as good as any)
** when the real NVRTC lacks the function. */
#define FORWARD(name, params, args)                                          \
  API nvrtcResult name params {                                              \
    nvrtcResult (*f) params;                                                 \
    void *p = fn(#name);                                                     \
    if (p == NULL) return 7;                                                 \
    memcpy(&f, &p, sizeof p);                                                \
    return f args;                                                           \
  }

FORWARD(nvrtcCreateProgram,
        (nvrtcProgram *prog, const char *src, const char *name, int nheaders,
         const char *const *headers, const char *const *include_names),
        (prog, src, name, nheaders, headers, include_names))
FORWARD(nvrtcCompileProgram, (nvrtcProgram prog, int nopts, const char *const *opts),
        (prog, nopts, opts))
FORWARD(nvrtcGetProgramLogSize, (nvrtcProgram prog, size_t *size), (prog, size))
FORWARD(nvrtcGetProgramLog, (nvrtcProgram prog, char *log), (prog, log))
FORWARD(nvrtcGetPTXSize, (nvrtcProgram prog, size_t *size), (prog, size))
FORWARD(nvrtcGetPTX, (nvrtcProgram prog, char *ptx), (prog, ptx))
FORWARD(nvrtcGetCUBINSize, (nvrtcProgram prog, size_t *size), (prog, size))
FORWARD(nvrtcGetCUBIN, (nvrtcProgram prog, char *cubin), (prog, cubin))
FORWARD(nvrtcDestroyProgram, (nvrtcProgram *prog), (prog))
FORWARD(nvrtcGetNumSupportedArchs, (int *n), (n))
FORWARD(nvrtcGetSupportedArchs, (int *archs), (archs))

API const char *nvrtcGetErrorString(nvrtcResult r) {
  const char *(*f)(nvrtcResult);
  void *p = fn("nvrtcGetErrorString");
  if (p == NULL) return "fake_nvrtc: no real NVRTC";
  memcpy(&f, &p, sizeof p);
  return f(r);
}

API nvrtcResult nvrtcVersion(int *major, int *minor) {
  const char *v = getenv("FAKE_NVRTC_VERSION");
  if (v == NULL || *v == '\0') v = "12.9";
  char *end;
  *major = (int)strtol(v, &end, 10);
  *minor = *end == '.' ? atoi(end + 1) : 0;
  return 0;
}
