/*
** cuda_backend: what the CUDA backend's files share (backend_cuda.c: the
** context, memory, streams, modules and launches; cuda_copy.c: copies and
** fills).
*/
#ifndef LUACUDA_CUDA_BACKEND_H
#define LUACUDA_CUDA_BACKEND_H

#include "backend.h"
#include "api.h"

/* A stream: the default (CU_STREAM_LEGACY), one made here (owned, counted:
** its object and each host slot that wraps it hold a reference), or a
** holder of a host program's stream. */
struct lc_stream {
  CUstream s;
  bool owned;
  int refs;                    /* owned streams, under the backend's lock */
  lc_stream *next;             /* the owned streams */
};

/* The CUstream for s: the legacy default stream for NULL (synchronous). */
static inline CUstream lc_cuda_stream(const lc_stream *s) {
  return s ? s->s : LC_CU_STREAM_LEGACY;
}

static inline CUdeviceptr lc_cuda_ptr(const void *p) { return (CUdeviceptr)(uintptr_t)p; }

/* Before any driver call: fails (with why in err) once the context is
** unusable; makes the current device's context current on this thread
** (a thread-local flag keeps that to one call per thread). */
int lc_cuda_enter(char *err);

/* LC_OK for CUDA_SUCCESS; else "call: CUDA_ERROR_..." in err (when err is
** not NULL), the context marked unusable for a sticky error, and LC_ENOMEM
** or LC_EFAIL. */
int lc_cuda_check(CUresult r, const char *call, char *err);

/* After queueing work on s with result r: on the legacy stream for a NULL
** s, wait for it (and what it waited for); else note that work is queued. */
int lc_cuda_finish(CUresult r, const char *call, const lc_stream *s, char *err);

/* Wait for all queued work and report a failure of it (the synchronize
** slot). */
int lc_cuda_synchronize(char *err);

/* Scratch device memory ordered on stream st: freed after the work queued
** on st before the free. */
int lc_cuda_temp_alloc(size_t n, CUstream st, CUdeviceptr *p, char *err);
void lc_cuda_temp_free(CUdeviceptr p, CUstream st);

/* Note that work was queued (defer then waits behind it). */
void lc_cuda_queued(void);

/* The library's strided copy kernel (kernels/strided.cu) for the current
** device, compiled and loaded at first use. */
int lc_cuda_copy_kernel(CUfunction *f, char *err);

/* The copy slots (cuda_copy.c). */
int lc_cuda_copy(void *dst, lc_kind dkind, const void *src, lc_kind skind,
                 size_t nbytes, lc_stream *s, char *err);
int lc_cuda_copy_strided(const lc_region *dst, const lc_region *src,
                         int64_t itemsize, lc_stream *s, char *err);
int lc_cuda_fill(const lc_region *dst, const void *value, int64_t itemsize,
                 lc_stream *s, char *err);

#endif
