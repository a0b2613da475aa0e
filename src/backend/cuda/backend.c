/*
** backend (cuda): the CUDA backend's table. Each slot is implemented in
** the file of its driver concept: context.c (devices), memory.c,
** stream.c (streams, events, deferred releases), module.c (modules and
** launches), copy.c.
*/
#include "cuda.h"
#include "hostreg.h"

const lc_backend lc_backend_cuda = {
  .name = "cuda",
  .device_count = lc_cuda_device_count,
  .device_info = lc_cuda_device_info,
  .select_device = lc_cuda_select_device,
  .current_device = lc_cuda_current_device,
  .mem_alloc = lc_cuda_alloc,
  .mem_free = lc_cuda_free,
  .mem_info = lc_cuda_mem_info,
  .pool_info = lc_cuda_pool_info,
  .trim_pool = lc_cuda_trim_pool,
  .ordered_free = lc_cuda_ordered_free,
  .free_after = lc_cuda_free_after,
  .host_register = lc_cuda_host_register,
  .host_unregister = lc_cuda_host_unregister,
  .host_device_pointer = lc_cuda_host_device_pointer,
  .host_flags = lc_hostreg_flags,
  .copy = lc_cuda_copy,
  .copy_strided = lc_cuda_copy_strided,
  .fill = lc_cuda_fill,
  .default_stream = lc_cuda_default_stream,
  .stream_create = lc_cuda_stream_create,
  .stream_retain = lc_cuda_stream_retain,
  .stream_release = lc_cuda_stream_release,
  .stream_wrap = lc_cuda_stream_wrap,
  .stream_follows = lc_cuda_stream_follows,
  .stream_order = lc_cuda_stream_order,
  .stream_native = lc_cuda_stream_native,
  .stream_synchronize = lc_cuda_stream_synchronize,
  .stream_query = lc_cuda_stream_query,
  .event_create = lc_cuda_event_create,
  .event_destroy = lc_cuda_event_destroy,
  .event_record = lc_cuda_event_record,
  .event_wait = lc_cuda_event_wait,
  .event_synchronize = lc_cuda_event_synchronize,
  .event_query = lc_cuda_event_query,
  .event_elapsed = lc_cuda_event_elapsed,
  .synchronize = lc_cuda_synchronize,
  .defer = lc_cuda_defer,
  .module_load = lc_cuda_module_load,
  .module_unload = lc_cuda_module_unload,
  .module_function = lc_cuda_module_function,
  .module_global = lc_cuda_module_global,
  .launch = lc_cuda_launch,
};
