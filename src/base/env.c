/*
** env: the numeric LUACUDA_* settings (see env.h). Sizes are whole numbers
** of bytes with an optional K, M or G; counts are whole numbers; times are
** seconds. Signs, spaces, fractions and overflow are errors, never parsed
** into something else (strtoull reads "-5" as 2^64 - 5).
*/
#include "env.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static lc_settings settings = {
  .sim_memory = 0, .sim_guard = 64 * 1024, .sim_memcheck = 1, .sim_threads = 0, .sim_devices = 1,
  .sim_stack = 128 * 1024, .sim_timeout = 0, .nvrtc_check = 1, .sim_pch = 1, .cpu_blas = 1,
  .cache = SIZE_MAX,
};

const lc_settings *lc_settings_get(void) { return &settings; }

/* digits only: the whole value, into *n; false on anything else or overflow */
static bool whole(const char *v, const char **end, unsigned long long *n) {
  const char *p = v;
  unsigned long long x = 0;
  if (*p < '0' || *p > '9') return false;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (x > (ULLONG_MAX - (unsigned)(*p - '0')) / 10) return false;
    x = x * 10 + (unsigned)(*p - '0');
  }
  *end = p;
  *n = x;
  return true;
}

/* Bytes: name's value into *out, between lo and hi; unset keeps *out. */
static int env_size(const char *name, size_t lo, size_t hi, size_t *out, char *err,
                    size_t len) {
  const char *v = getenv(name), *end;
  if (v == NULL || *v == '\0') return 0;
  unsigned long long n;
  unsigned long long mul = 1;
  bool ok = whole(v, &end, &n);
  if (ok) {
    switch (*end) {
      case 'K': case 'k': mul = 1ull << 10; end++; break;
      case 'M': case 'm': mul = 1ull << 20; end++; break;
      case 'G': case 'g': mul = 1ull << 30; end++; break;
    }
    ok = *end == '\0';
  }
  if (!ok) {
    snprintf(err, len, "%s=%.40s is not a size (a whole number of bytes, with an optional "
             "K, M or G)", name, v);
    return -1;
  }
  if (n > SIZE_MAX / mul || n * mul < lo || n * mul > hi) {
    snprintf(err, len, "%s=%.40s is out of range (%zu to %zu bytes)", name, v, lo, hi);
    return -1;
  }
  *out = (size_t)(n * mul);
  return 0;
}

/* A count between lo and hi; unset keeps *out. */
static int env_count(const char *name, unsigned lo, unsigned hi, unsigned *out, char *err,
                     size_t len) {
  const char *v = getenv(name), *end;
  if (v == NULL || *v == '\0') return 0;
  unsigned long long n;
  if (!whole(v, &end, &n) || *end != '\0') {
    snprintf(err, len, "%s=%.40s is not a whole number", name, v);
    return -1;
  }
  if (n < lo || n > hi) {
    snprintf(err, len, "%s=%.40s is out of range (%u to %u)", name, v, lo, hi);
    return -1;
  }
  *out = (unsigned)n;
  return 0;
}

/* Seconds, more than 0 and less than a million; unset keeps *out. */
static int env_seconds(const char *name, double *out, char *err, size_t len) {
  const char *v = getenv(name);
  if (v == NULL || *v == '\0') return 0;
  char *end;
  errno = 0;
  double t = strtod(v, &end);
  if ((*v < '0' || *v > '9') && *v != '.') end = (char *)v;   /* no sign, space, inf, nan */
  if (end == v || *end != '\0' || errno != 0 || !(t > 0 && t < 1e6)) {
    snprintf(err, len, "%s=%.40s is not a number of seconds (more than 0, less than "
             "1000000)", name, v);
    return -1;
  }
  *out = t;
  return 0;
}

int lc_settings_load(char *err, size_t len) {
  const char *guard = getenv("LUACUDA_SIM_GUARD");
  if (guard && strcmp(guard, "off") == 0) settings.sim_guard = SIZE_MAX;
  else if (env_size("LUACUDA_SIM_GUARD", 1, SIZE_MAX, &settings.sim_guard, err, len)) return -1;
  if (env_size("LUACUDA_SIM_MEMORY", 1, SIZE_MAX, &settings.sim_memory, err, len) ||
      env_count("LUACUDA_SIM_MEMCHECK", 0, 3, &settings.sim_memcheck, err, len) ||
      env_count("LUACUDA_SIM_THREADS", 1, 256, &settings.sim_threads, err, len) ||
      env_count("LUACUDA_SIM_DEVICES", 1, LC_SIM_MAX_DEVICES, &settings.sim_devices, err, len) ||
      env_size("LUACUDA_SIM_STACK", 16 * 1024, (size_t)1 << 30, &settings.sim_stack, err, len) ||
      env_seconds("LUACUDA_SIM_TIMEOUT", &settings.sim_timeout, err, len) ||
      env_count("LUACUDA_NVRTC_CHECK", 0, 1, &settings.nvrtc_check, err, len) ||
      env_count("LUACUDA_SIM_PCH", 0, 1, &settings.sim_pch, err, len) ||
      env_count("LUACUDA_STRICT_ASYNC", 0, 1, &settings.strict_async, err, len) ||
      env_count("LUACUDA_CPU_BLAS", 0, 1, &settings.cpu_blas, err, len) ||
      env_count("LUACUDA_VERBOSE", 0, 1, &settings.verbose, err, len) ||
      env_size("LUACUDA_MEMORY_CACHE", 0, SIZE_MAX - 1, &settings.cache, err, len))
    return -1;
  return 0;
}
