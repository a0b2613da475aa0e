/*
** backend: choosing the process-wide backend, once, from LUACUDA_BACKEND
** (backend.h). A new backend is one folder and one line here.
*/
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "env.h"

const char *const lc_kind_names[LC_NKINDS] = {
  "host", "pinned", "mapped", "managed", "device"
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const lc_backend *chosen;
static char why[512];

static void choose(void) {
  const char *env = getenv("LUACUDA_BACKEND");
  char reason[sizeof why - 64];
  if (lc_settings_load(why, sizeof why)) {
    chosen = NULL;
  } else if (env == NULL || *env == '\0' || strcmp(env, "auto") == 0) {
    if (lc_cuda_init(reason, sizeof reason) == 0) {
      chosen = &lc_backend_cuda;
      snprintf(why, sizeof why, "a CUDA device is usable");
    } else {
      chosen = &lc_backend_sim;
      snprintf(why, sizeof why, "%s", reason);
    }
  } else if (strcmp(env, "sim") == 0) {
    chosen = &lc_backend_sim;
    snprintf(why, sizeof why, "LUACUDA_BACKEND=sim");
  } else if (strcmp(env, "cuda") == 0) {
    if (lc_cuda_init(reason, sizeof reason) == 0) {
      chosen = &lc_backend_cuda;
      snprintf(why, sizeof why, "LUACUDA_BACKEND=cuda");
    } else {
      chosen = NULL;
      snprintf(why, sizeof why, "LUACUDA_BACKEND=cuda, but CUDA is not usable: %s", reason);
    }
  } else {
    chosen = NULL;
    snprintf(why, sizeof why,
             "LUACUDA_BACKEND=%.200s is not one of auto, cuda, sim", env);
  }
}

const lc_backend *lc_backend_get(const char **reason) {
  pthread_once(&once, choose);
  if (reason) *reason = why;
  return chosen;
}

