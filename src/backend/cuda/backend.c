/*
** backend (cuda): the CUDA backend's table. Each slot is implemented in
** the file of its driver concept: context.c (devices), memory.c,
** stream.c (streams, events, deferred releases), module.c (modules and
** launches), copy.c, peer.c (copies between devices). Every slot that may call the driver runs in a
** context scope (context.c): the host program's current context is
** current again when it returns, whoever called it (a Lua call, a
** finalizer, the C API, a deferred release).
*/
#include "cuda.h"
#include "hostreg.h"

/* name##_scoped: name, in a scope */
#define SCOPED(ret, name, params, args) \
  static ret name##_scoped params { \
    lc_cuda_scope_begin(); \
    ret r_ = name args; \
    lc_cuda_scope_end(); \
    return r_; \
  }
#define SCOPED_VOID(name, params, args) \
  static void name##_scoped params { \
    lc_cuda_scope_begin(); \
    name args; \
    lc_cuda_scope_end(); \
  }

SCOPED(int, lc_cuda_select_device, (int i, char *err), (i, err))
SCOPED(int, lc_cuda_get_limit, (lc_limit which, size_t *value, char *err), (which, value, err))
SCOPED(int, lc_cuda_set_limit, (lc_limit which, size_t value, size_t *took, char *err),
       (which, value, took, err))
SCOPED(int, lc_cuda_alloc, (lc_kind kind, size_t nbytes, unsigned flags, lc_stream *s, void **ptr,
                            char *err),
       (kind, nbytes, flags, s, ptr, err))
SCOPED_VOID(lc_cuda_free, (lc_kind kind, void *ptr, size_t nbytes, int device),
            (kind, ptr, nbytes, device))
SCOPED_VOID(lc_cuda_free_after, (lc_kind kind, void *ptr, size_t nbytes, int device,
                                 lc_stream *const *streams, int n),
            (kind, ptr, nbytes, device, streams, n))
SCOPED(int, lc_cuda_mem_info, (size_t *free_bytes, size_t *total, size_t *in_use),
       (free_bytes, total, in_use))
SCOPED(int, lc_cuda_pool_info, (size_t *reserved, size_t *in_use), (reserved, in_use))
SCOPED(int, lc_cuda_trim_pool, (char *err), (err))
SCOPED(int, lc_cuda_host_register, (void *p, size_t n, unsigned flags, char *err),
       (p, n, flags, err))
SCOPED(int, lc_cuda_host_unregister, (void *p, char *err), (p, err))
SCOPED(int, lc_cuda_copy, (void *dst, lc_kind dkind, const void *src, lc_kind skind,
                           size_t nbytes, lc_stream *s, char *err),
       (dst, dkind, src, skind, nbytes, s, err))
SCOPED(int, lc_cuda_copy_strided, (const lc_region *dst, const lc_region *src,
                                   int64_t itemsize, lc_stream *s, char *err),
       (dst, src, itemsize, s, err))
SCOPED(int, lc_cuda_copy_peer, (const lc_region *dst, int ddev, const lc_region *src, int sdev,
                                int64_t itemsize, lc_stream *s, char *err),
       (dst, ddev, src, sdev, itemsize, s, err))
SCOPED(int, lc_cuda_fill, (const lc_region *dst, const void *value, int64_t itemsize,
                           lc_stream *s, char *err),
       (dst, value, itemsize, s, err))
SCOPED(int, lc_cuda_reduce, (const struct lc_reduce_call *c, lc_stream *s, char *err),
       (c, s, err))
SCOPED(int, lc_cuda_sort, (const struct lc_sort_call *c, lc_stream *s, char *err), (c, s, err))
SCOPED(int, lc_cuda_ufunc, (const struct lc_ufunc_call *c, lc_stream *s, char *err), (c, s, err))
SCOPED(int, lc_cuda_stream_host_use, (lc_stream *s, char *err), (s, err))
SCOPED(int, lc_cuda_host_fn, (lc_stream *s, void (*fn)(void *), void *ud, char *err),
       (s, fn, ud, err))
SCOPED(int, lc_cuda_random, (const struct lc_random_call *c, lc_stream *s, char *err), (c, s, err))
SCOPED(int, lc_cuda_matmul, (const struct lc_matmul_call *c, lc_stream *s, char *err), (c, s, err))
SCOPED(bool, lc_cuda_blas, (char *name, char *why), (name, why))
SCOPED(int, lc_cuda_gather, (const struct lc_gather_call *c, lc_stream *s, char *err), (c, s, err))
SCOPED(int, lc_cuda_stream_create, (lc_stream **out, unsigned flags, char *err),
       (out, flags, err))
SCOPED_VOID(lc_cuda_stream_release, (lc_stream *s), (s))
SCOPED(int, lc_cuda_stream_wrap, (void *native, lc_stream **out, char *err), (native, out, err))
SCOPED(int, lc_cuda_stream_order, (lc_stream *before, lc_stream *after, char *err),
       (before, after, err))
SCOPED(int, lc_cuda_stream_synchronize, (lc_stream *s, char *err), (s, err))
SCOPED(int, lc_cuda_stream_query, (lc_stream *s, bool *done, char *err), (s, done, err))
SCOPED(int, lc_cuda_event_create, (lc_event **out, bool timing, char *err), (out, timing, err))
SCOPED_VOID(lc_cuda_event_destroy, (lc_event *e), (e))
SCOPED(int, lc_cuda_event_record, (lc_event *e, lc_stream *s, char *err), (e, s, err))
SCOPED(int, lc_cuda_event_wait, (lc_event *e, lc_stream *s, char *err), (e, s, err))
SCOPED(int, lc_cuda_event_synchronize, (lc_event *e, char *err), (e, err))
SCOPED(int, lc_cuda_event_query, (lc_event *e, bool *done, char *err), (e, done, err))
SCOPED(int, lc_cuda_event_elapsed, (lc_event *a, lc_event *b, float *ms, char *err),
       (a, b, ms, err))
SCOPED(int, lc_cuda_synchronize, (char *err), (err))
SCOPED_VOID(lc_cuda_defer, (void (*release)(void *), void *ud), (release, ud))
SCOPED(int, lc_cuda_module_load, (const lc_source *src, lc_module **m, char **log, char *err),
       (src, m, log, err))
SCOPED_VOID(lc_cuda_module_unload, (lc_module *m), (m))
SCOPED(int, lc_cuda_module_function, (lc_module *m, const char *name, lc_function **f,
                                      const long long **sizes, char *err),
       (m, name, f, sizes, err))
SCOPED(int, lc_cuda_module_global, (lc_module *m, const char *name, void **ptr, size_t *bytes,
                                    char *err),
       (m, name, ptr, bytes, err))
SCOPED(int, lc_cuda_launch, (lc_function *f, const lc_launch *cfg, char *err), (f, cfg, err))

/* device_count, device_info, current_device, ordered_free, host_flags,
** host_device_pointer,
** default_stream, stream_retain, stream_follows and stream_native need no
** context */
const lc_backend lc_backend_cuda = {
  .name = "cuda",
  .device_count = lc_cuda_device_count,
  .device_info = lc_cuda_device_info,
  .select_device = lc_cuda_select_device_scoped,
  .get_limit = lc_cuda_get_limit_scoped,
  .set_limit = lc_cuda_set_limit_scoped,
  .current_device = lc_cuda_current_device,
  .mem_alloc = lc_cuda_alloc_scoped,
  .mem_free = lc_cuda_free_scoped,
  .mem_info = lc_cuda_mem_info_scoped,
  .pool_info = lc_cuda_pool_info_scoped,
  .trim_pool = lc_cuda_trim_pool_scoped,
  .ordered_free = lc_cuda_ordered_free,
  .free_after = lc_cuda_free_after_scoped,
  .host_register = lc_cuda_host_register_scoped,
  .host_unregister = lc_cuda_host_unregister_scoped,
  .host_device_pointer = lc_hostreg_device_pointer,   /* the driver's answer, recorded */
  .host_flags = lc_hostreg_flags,
  .copy = lc_cuda_copy_scoped,
  .copy_strided = lc_cuda_copy_strided_scoped,
  .copy_peer = lc_cuda_copy_peer_scoped,
  .fill = lc_cuda_fill_scoped,
  .reduce = lc_cuda_reduce_scoped,
  .gather = lc_cuda_gather_scoped,
  .sort = lc_cuda_sort_scoped,
  .default_stream = lc_cuda_default_stream,
  .stream_create = lc_cuda_stream_create_scoped,
  .stream_retain = lc_cuda_stream_retain,
  .stream_release = lc_cuda_stream_release_scoped,
  .stream_wrap = lc_cuda_stream_wrap_scoped,
  .stream_follows = lc_cuda_stream_follows,
  .stream_order = lc_cuda_stream_order_scoped,
  .stream_native = lc_cuda_stream_native,
  .stream_host_use = lc_cuda_stream_host_use_scoped,
  .stream_synchronize = lc_cuda_stream_synchronize_scoped,
  .stream_query = lc_cuda_stream_query_scoped,
  .event_create = lc_cuda_event_create_scoped,
  .event_destroy = lc_cuda_event_destroy_scoped,
  .event_record = lc_cuda_event_record_scoped,
  .event_wait = lc_cuda_event_wait_scoped,
  .event_synchronize = lc_cuda_event_synchronize_scoped,
  .event_query = lc_cuda_event_query_scoped,
  .event_elapsed = lc_cuda_event_elapsed_scoped,
  .host_fn = lc_cuda_host_fn_scoped,
  .synchronize = lc_cuda_synchronize_scoped,
  .defer = lc_cuda_defer_scoped,
  .module_load = lc_cuda_module_load_scoped,
  .module_unload = lc_cuda_module_unload_scoped,
  .module_function = lc_cuda_module_function_scoped,
  .module_global = lc_cuda_module_global_scoped,
  .launch = lc_cuda_launch_scoped,
  .ufunc = lc_cuda_ufunc_scoped,
  .random = lc_cuda_random_scoped,
  .matmul = lc_cuda_matmul_scoped,
  .blas = lc_cuda_blas_scoped,
};
