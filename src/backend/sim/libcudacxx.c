/*
** libcudacxx.c: libcu++ (<cuda/std/...>) for the simulator. NVRTC has no
** C++ standard headers of its own: the C++ library a kernel can include
** is the toolkit's libcu++, on the include path luacuda gives NVRTC. The
** simulator reads the same headers, as the host C++ library they also
** are. Each is reached through a wrapper written beside the simulator's
** headers, which hides the simulator's CUDA macros while the toolkit's
** header is read: with __CUDA_ARCH__ or __CUDACC__ defined, libcu++ takes
** its device paths (inline PTX) or refuses the compiler, and the empty
** __device__, __noinline__ and the like clash with its own uses of them.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvrtc.h"
#include "sim.h"
#include "strbuf.h"

/* The public headers of CUDA 13's libcu++ under cuda/std/: what
** `#include <cuda/std/NAME>` finds under NVRTC. */
static const char *const std_headers[] = {
  "array", "atomic", "barrier", "bit", "bitset", "cassert", "ccomplex", "cfloat", "chrono",
  "climits", "cmath", "complex", "concepts", "cstddef", "cstdint", "cstdlib", "cstring",
  "ctime", "expected", "functional", "initializer_list", "inplace_vector", "iterator",
  "latch", "limits", "linalg", "mdspan", "memory", "numbers", "numeric", "optional", "ranges",
  "ratio", "semaphore", "source_location", "span", "tuple", "type_traits", "utility",
  "variant", "version",
};
#define NSTD (sizeof std_headers / sizeof std_headers[0])

/* The simulator's macros (kernels/sim_runtime.h) that libcu++ must not
** see. assert is kept too: libcu++'s <cassert> includes <assert.h>, which
** would replace the simulator's assert with the C library's. */
static const char *const hidden[] = {
  "__CUDA_ARCH__", "__CUDACC__", "__global__", "__device__", "__host__", "__constant__",
  "__shared__", "__managed__", "__forceinline__", "__noinline__", "__align__",
  "__launch_bounds__", "threadIdx", "blockIdx", "blockDim", "gridDim", "assert",
};
#define NHIDDEN (sizeof hidden / sizeof hidden[0])

static void wrapper(lc_strbuf *b, const char *name) {
  lc_sb_fmt(b, "// <cuda/std/%s> for luacuda's simulator: the toolkit's, with the\n"
               "// simulator's CUDA macros hidden (src/backend/sim/libcudacxx.c)\n", name);
  for (size_t i = 0; i < NHIDDEN; i++) lc_sb_fmt(b, "#pragma push_macro(\"%s\")\n", hidden[i]);
  for (size_t i = 0; i < NHIDDEN; i++) lc_sb_fmt(b, "#undef %s\n", hidden[i]);
  lc_sb_fmt(b, "#include_next <cuda/std/%s>\n", name);
  for (size_t i = NHIDDEN; i-- > 0;) lc_sb_fmt(b, "#pragma pop_macro(\"%s\")\n", hidden[i]);
}

int lc_sim_libcudacxx_option(char *opt, size_t n, const char *source) {
  /* only for a source that names libcu++: finding the toolkit loads NVRTC,
  ** which would delay every other compilation's host compiler (a header
  ** of the user's that includes libcu++ is not seen: its source must) */
  if (strstr(source, "cuda/std/") == NULL) return -1;
  lc_nvrtc_facts f;
  char ignored[LC_NVRTC_ERRLEN];
  if (lc_nvrtc_facts_get(&f, ignored) != LC_OK) return -1;
  for (int i = 0; i < f.nincludes; i++) {
    size_t len = strlen(f.includes[i]);
    if (len > 7 && strcmp(f.includes[i] + len - 5, "/cccl") == 0 &&
        (size_t)snprintf(opt, n, "-idirafter%s", f.includes[i] + 2) < n)
      return 0;
  }
  return -1;
}

void lc_sim_libcudacxx_key(lc_hash *key) {
  lc_strbuf b = {0};
  wrapper(&b, "");
  for (size_t i = 0; i < NSTD; i++) lc_sb_str(&b, std_headers[i]);
  if (!b.oom) lc_hash_add_str(key, b.p ? b.p : "");
  free(b.p);
}

int lc_sim_libcudacxx_write(const char *dir, char *err) {
  char path[700];
  const char *sub[] = {"/include/cuda", "/include/cuda/std"};
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof path, "%s%s", dir, sub[i]);
    if (mkdir(path, 0700) != 0 && errno != EEXIST) {
      return lc_fail(err, -1, "cannot make %.400s: %s", path, strerror(errno));
    }
  }
  for (size_t i = 0; i < NSTD; i++) {
    lc_strbuf b = {0};
    wrapper(&b, std_headers[i]);
    snprintf(path, sizeof path, "%s/include/cuda/std/%s", dir, std_headers[i]);
    int rc = b.oom ? -1 : lc_sim_write_file(path, b.p, b.n, err);
    if (b.oom) lc_errf(err, "out of memory");
    free(b.p);
    if (rc != 0) return -1;
  }
  return 0;
}

void lc_sim_libcudacxx_remove(const char *dir) {
  char path[700];
  for (size_t i = 0; i < NSTD; i++) {
    snprintf(path, sizeof path, "%s/include/cuda/std/%s", dir, std_headers[i]);
    unlink(path);
  }
  snprintf(path, sizeof path, "%s/include/cuda/std", dir);
  rmdir(path);
  snprintf(path, sizeof path, "%s/include/cuda", dir);
  rmdir(path);
}
