/*
** hostreg: the record of page-locked host memory. On the simulator nothing
** is locked for real, but the driver's rules are kept, so that a script
** that misuses registration fails there as it would on a GPU; the CUDA
** backend keeps the same record next to the driver's, for the flags.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "hostreg.h"

#include <stdbool.h>

#include "backend.h"

typedef struct range {
  char *p;
  size_t n;
  unsigned flags;
  bool allocated;          /* by mem_alloc (else by host_register) */
  char *dev;               /* the device address, when not p */
} range;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static range *ranges;
static size_t nranges, cap;

/* The range holding p, or NULL; under mu. */
static range *find(const void *p) {
  for (size_t i = 0; i < nranges; i++)
    if ((const char *)p >= ranges[i].p && (const char *)p < ranges[i].p + ranges[i].n)
      return &ranges[i];
  return NULL;
}

static int add(void *p, size_t n, unsigned flags, bool allocated, char *err) {
  int rc = LC_OK;
  pthread_mutex_lock(&mu);
  for (size_t i = 0; i < nranges; i++) {
    if ((char *)p < ranges[i].p + ranges[i].n && ranges[i].p < (char *)p + n) {
      lc_errf(err, "host memory at %p (%zu bytes) is already page-locked", p, n);
      rc = LC_EFAIL;
      goto done;
    }
  }
  if (nranges == cap) {
    size_t ncap = cap ? 2 * cap : 16;
    range *r = realloc(ranges, ncap * sizeof *r);
    if (r == NULL) {
      lc_errf(err, "out of host memory page-locking %zu bytes", n);
      rc = LC_ENOMEM;
      goto done;
    }
    ranges = r;
    cap = ncap;
  }
  ranges[nranges++] = (range){p, n, flags, allocated, NULL};
done:
  pthread_mutex_unlock(&mu);
  return rc;
}

static int drop(void *p, bool allocated, char *err) {
  int rc = LC_OK;
  pthread_mutex_lock(&mu);
  range *r = find(p);
  if (r == NULL || r->p != (char *)p || r->allocated != allocated) {
    lc_errf(err, "host memory at %p is not registered", p);
    rc = LC_EFAIL;
  } else {
    *r = ranges[--nranges];
  }
  pthread_mutex_unlock(&mu);
  return rc;
}

int lc_hostreg_add_allocated(void *p, size_t n, unsigned flags, char *err) {
  return add(p, n, flags, true, err);
}

void lc_hostreg_remove_allocated(void *p) {
  char err[LC_ERRLEN];
  drop(p, true, err);
}

int lc_hostreg_register(void *p, size_t n, unsigned flags, char *err) {
  if (n == 0 || (flags & ~(unsigned)(LC_ALLOC_PORTABLE | LC_ALLOC_DEVICEMAP))) {
    return lc_fail(err, LC_EFAIL, "invalid host_register arguments (%zu bytes, flags %#x)", n,
                   flags);
  }
  return add(p, n, flags, false, err);
}

int lc_hostreg_unregister(void *p, char *err) {
  return drop(p, false, err);
}

int lc_hostreg_device_pointer(void *p, void **dev, char *err) {
  pthread_mutex_lock(&mu);
  range *r = find(p);
  bool mapped = r && (r->flags & LC_ALLOC_DEVICEMAP);
  if (mapped) *dev = r->dev ? r->dev + ((char *)p - r->p) : p;
  pthread_mutex_unlock(&mu);
  if (!mapped) {
    return lc_fail(err, LC_EFAIL, "host memory at %p is not mapped into the device", p);
  }
  return LC_OK;
}

void lc_hostreg_set_device(void *p, void *dev) {
  pthread_mutex_lock(&mu);
  range *r = find(p);
  if (r) r->dev = dev == p ? NULL : dev;
  pthread_mutex_unlock(&mu);
}

void *lc_hostreg_to_device(const void *p) {
  pthread_mutex_lock(&mu);
  range *r = find(p);
  void *dev = r && r->dev ? r->dev + ((const char *)p - r->p) : (void *)(uintptr_t)p;
  pthread_mutex_unlock(&mu);
  return dev;
}

int lc_hostreg_flags(void *p, unsigned *flags, char *err) {
  pthread_mutex_lock(&mu);
  range *r = find(p);
  if (r) *flags = r->flags;
  pthread_mutex_unlock(&mu);
  if (r == NULL) {
    return lc_fail(err, LC_EFAIL, "host memory at %p is not page-locked", p);
  }
  return LC_OK;
}
