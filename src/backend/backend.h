/*
** backend: the interface every backend implements. Only the files of a
** backend's folder (cuda/, sim/) call a device API; everything above sees
** memory as (kind, pointer, layout) and asks the backend to move it.
**
** Conventions: functions return 0 on success, or an LC_E* code with a
** message (naming the failing call) in err[LC_ERRLEN].
**
** Streams: a NULL stream means "synchronous": the call first waits for all
** work already queued (on every stream, as CUDA's legacy default stream
** does), reports a failure of that work as its own error, and returns when
** its own work is done. A stream (the default stream included) means the
** work is queued on it and the call returns at once; work on one stream
** runs in order. Memory an operation uses must outlive it: whoever frees
** memory, a module, a stream or an event does it through defer(), which
** waits for the work queued before it.
*/
#ifndef LUACUDA_BACKEND_H
#define LUACUDA_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "layout.h"

typedef enum lc_kind {
  LC_HOST,       /* malloc'd host memory */
  LC_PINNED,     /* page-locked host memory */
  LC_MAPPED,     /* page-locked host memory mapped into the device */
  LC_MANAGED,    /* unified memory */
  LC_DEVICE,     /* device memory */
  LC_NKINDS
} lc_kind;

extern const char *const lc_kind_names[LC_NKINDS];

/* May the host read and write this memory through a plain pointer? */
static inline bool lc_kind_host_accessible(lc_kind k) { return k != LC_DEVICE; }
/* May a kernel read and write it? */
static inline bool lc_kind_device_accessible(lc_kind k) { return k >= LC_MAPPED; }
/* Is it page-locked host memory (the kinds LC_ALLOC_* flags apply to)? */
static inline bool lc_kind_page_locked(lc_kind k) { return k == LC_PINNED || k == LC_MAPPED; }
/* Does it count against the device's memory? */
static inline bool lc_kind_on_device(lc_kind k) { return k == LC_DEVICE || k == LC_MANAGED; }

enum { LC_OK = 0, LC_EFAIL = -1, LC_ENOMEM = -2, LC_ENOTSUP = -3, LC_ENOTREADY = -4 };

/* One strided region of memory: the buffer start, its kind, and the view. */
typedef struct lc_region {
  void *base;
  lc_kind kind;
  const lc_layout *layout;
} lc_region;

typedef struct lc_stream lc_stream;   /* backend-defined */
typedef struct lc_event lc_event;     /* backend-defined */
typedef struct lc_module lc_module;   /* backend-defined */
typedef struct lc_function lc_function;
struct lc_scan_result;
struct lc_reduce_call;
struct lc_ufunc_call;
struct lc_random_call;
struct lc_matmul_call;
struct lc_gather_call;
struct lc_sort_call;

/* A kernel source to compile, with what the scanner found in it. */
typedef struct lc_source {
  const char *text;
  size_t len;
  const char *name;                   /* for #line and messages */
  const char *const *options;         /* NVRTC spellings */
  int noptions;
  const struct lc_scan_result *scan;
  /* The kernels found by a name the module must resolve (C++ linkage):
  ** name expressions, "saxpy" or "sq<int>", each a constant expression
  ** naming one __global__ function at the end of the source. The backend
  ** resolves them when it compiles (NVRTC's lowered names; the
  ** simulator's generated entry points, lc_sim_named) and module_function
  ** takes each by this very spelling. */
  const char *const *names;
  int nnames;
} lc_source;

/* One launch; args[i] points at parameter i's packed value, inside the
** argbuf[arglen] block (so a backend that queues the launch can copy it). */
typedef struct lc_launch {
  unsigned grid[3], block[3];
  unsigned shared_bytes;              /* dynamic shared memory, at most LC_MAX_SHARED */
  lc_stream *stream;                  /* never NULL: launches are always queued */
  void **args;
  int nargs;
  const void *argbuf;
  size_t arglen;
  const char *kernel_name;            /* for errors found later */
  /* every block at once (this_grid().sync() may be called): a grid that
  ** cannot be resident whole is refused at the launch */
  bool cooperative;
} lc_launch;

/* One device, as devices() reports it. */
typedef struct lc_device_info {
  char name[256];
  int cc_major, cc_minor;           /* compute capability */
  size_t memory;                    /* bytes */
  int multiprocessors;
  unsigned max_shared_per_block;    /* bytes of shared memory a kernel may opt in to */
} lc_device_info;

/* A device's limits a program may raise (the driver's CU_LIMIT_*). */
typedef enum lc_limit {
  LC_LIMIT_STACK,          /* bytes of stack of each kernel thread */
  LC_LIMIT_PRINTF_FIFO,    /* bytes kernels' printf output takes between deliveries */
  LC_NLIMITS
} lc_limit;

/* mem_labels: none (mem_label ignores them); each array's dtype and shape,
** the line that allocated it for arrays made by name (device_array,
** to_device, ...) and the operation for array math's results; the line for
** every array */
enum { LC_LABELS_NONE, LC_LABELS_NAMED_LINES, LC_LABELS_ALL_LINES };

typedef struct lc_backend {
  const char *name;
  /* device memory is host memory, at the addresses the host uses (the
  ** simulator's): a device array and a host array over the same bytes are
  ** one memory. Else device memory has device addresses only, which a
  ** host address never names (binding/alias.c). */
  bool device_memory_is_host;

  /* devices, 0-based here. select_device makes device i current for the
  ** calling thread (as the CUDA runtime does): its allocations, modules
  ** and launches from then on go to it. A thread that never selected one
  ** has device 0. */
  int (*device_count)(void);
  int (*device_info)(int i, lc_device_info *info, char *err);
  int (*select_device)(int i, char *err);
  int (*current_device)(void);
  /* the current device's limit which; set_limit gives back in *took what
  ** the device took (a driver may round or clamp) */
  int (*get_limit)(lc_limit which, size_t *value, char *err);
  int (*set_limit)(lc_limit which, size_t value, size_t *took, char *err);

  /* memory; flags are LC_ALLOC_PORTABLE and LC_ALLOC_WRITECOMBINED, for
  ** page-locked kinds only (the caller checks). Device memory is allocated
  ** in the order of stream s (NULL: the default stream), where the
  ** allocator is stream-ordered. */
  int (*mem_alloc)(lc_kind kind, size_t nbytes, unsigned flags, lc_stream *s, void **ptr,
                   char *err);
  /* device: the one current when ptr was allocated (0-based), whichever
  ** is current now */
  void (*mem_free)(lc_kind kind, void *ptr, size_t nbytes, int device);
  /* of the current device */
  int (*mem_info)(size_t *free_bytes, size_t *total_bytes, size_t *used_bytes);
  /* what the memory at ptr (from mem_alloc) holds, for the messages of a
  ** backend that checks kernels' accesses ("float32 array of shape (16)
  ** allocated at x.lua:3"); NULL where none does. The binding gives every
  ** device allocation its label at once (lc_array_note_origin), so a
  ** block the allocator reuses is relabelled without being cleared. */
  void (*mem_label)(void *ptr, const char *label);
  /* which labels mem_label keeps (LC_LABELS_*); NULL: every one. The
  ** script's line costs a small array's allocation as much as its
  ** arithmetic (lua_getinfo), so array math's results may go without it. */
  int (*mem_labels)(void);
  /* the allocator's pool: bytes it holds from the device and bytes in use
  ** (NULL where there is no pool); trim gives back what it holds unused */
  int (*pool_info)(size_t *reserved, size_t *in_use);
  int (*trim_pool)(char *err);
  /* true when memory of this kind is freed in stream order, by free_after
  ** (no defer); NULL: never. free_after frees ptr, of device `device`
  ** (0-based), once the work queued so far on each of streams[0..n) is
  ** done (n >= 1, the stream used last last), without waiting for any
  ** other stream: the streams that used an array, and only they, hold its
  ** free back. */
  bool (*ordered_free)(lc_kind kind);
  void (*free_after)(lc_kind kind, void *ptr, size_t nbytes, int device,
                     lc_stream *const *streams, int n);
  /* page-locking host memory allocated elsewhere (cuMemHostRegister); flags
  ** are LC_ALLOC_PORTABLE and LC_ALLOC_DEVICEMAP; nbytes > 0. unregister
  ** takes the pointer that was registered. */
  int (*host_register)(void *p, size_t nbytes, unsigned flags, char *err);
  int (*host_unregister)(void *p, char *err);
  /* the device address of p in mapped memory: a mapped allocation, or a
  ** range registered with LC_ALLOC_DEVICEMAP */
  int (*host_device_pointer)(void *p, void **dev, char *err);
  /* the LC_ALLOC_* flags the page-locked memory holding p was allocated or
  ** registered with (LC_ALLOC_DEVICEMAP for mapped memory) */
  int (*host_flags)(void *p, unsigned *flags, char *err);

  /* copy nbytes between contiguous ranges of any two kinds */
  int (*copy)(void *dst, lc_kind dkind, const void *src, lc_kind skind,
              size_t nbytes, lc_stream *s, char *err);
  /* copy between two views of the same shape (size-1 axes already dropped,
  ** never overlapping); never writes between the elements of dst */
  int (*copy_strided)(const lc_region *dst, const lc_region *src,
                      int64_t itemsize, lc_stream *s, char *err);
  /* a copy_strided where a side is device memory of a device other than
  ** the current one (a peer copy): ddev and sdev are each side's device,
  ** 0-based (the current one for memory of a host kind); queued on s, a
  ** stream of the current device (NULL: synchronous). NULL slot: the
  ** backend cannot copy between devices, and the caller says so. */
  int (*copy_peer)(const lc_region *dst, int ddev, const lc_region *src, int sdev,
                   int64_t itemsize, lc_stream *s, char *err);
  /* set every element of a view to the itemsize bytes at value */
  int (*fill)(const lc_region *dst, const void *value, int64_t itemsize,
              lc_stream *s, char *err);
  /* a reduction or scan (base/reduce.h) over device-accessible memory
  ** (device, managed, mapped): c->in and c->out are the buffers' device
  ** addresses (lc_buffer's dev); c is the caller's, and is copied where
  ** the work is queued. The caller checked it (dtypes, no empty reduction
  ** without an identity). */
  int (*reduce)(const struct lc_reduce_call *c, lc_stream *s, char *err);

  /* Streams and events. A stream's synchronize and query report the first
  ** failure of its queued work not reported yet (and forget it). A stream
  ** is counted: create and wrap give a reference, retain takes another,
  ** release drops one; when the last goes, a stream made here is destroyed
  ** (at once for the caller: it goes when its queued work is done) and a
  ** wrapped one let go of. flags: LC_STREAM_NONBLOCKING, a stream the
  ** default stream does not wait for (the interface's NULL stream still
  ** does) */
  lc_stream *(*default_stream)(void);
  int (*stream_create)(lc_stream **s, unsigned flags, char *err);
  void (*stream_retain)(lc_stream *s);
  void (*stream_release)(lc_stream *s);
  /* a stream a host program made (a CUstream on cuda; on sim, a stream of
  ** this backend from stream_native): wrap gives an lc_stream for it, whose
  ** release does not destroy the host's stream; stream_native is the
  ** reverse (the handle a host program uses) */
  int (*stream_wrap)(void *native, lc_stream **s, char *err);
  void *(*stream_native)(lc_stream *s);
  /* before a host program queues work of its own on s (stream_native's
  ** handle): make that work follow what the backend's work on s would
  ** (the default stream: the work queued so far on the non-blocking
  ** streams, which the interface's NULL stream waits for). NULL: nothing
  ** to do (one queue) */
  int (*stream_host_use)(lc_stream *s, char *err);
  /* does work queued on after from now on wait for the work queued so far
  ** on before, by the streams' own rules? NULL: always (one queue) */
  bool (*stream_follows)(const lc_stream *after, const lc_stream *before);
  /* make it so, for the work queued so far (events, on CUDA) */
  int (*stream_order)(lc_stream *before, lc_stream *after, char *err);
  int (*stream_synchronize)(lc_stream *s, char *err);
  int (*stream_query)(lc_stream *s, bool *done, char *err);
  int (*event_create)(lc_event **e, bool timing, char *err);
  void (*event_destroy)(lc_event *e);
  int (*event_record)(lc_event *e, lc_stream *s, char *err);
  /* work queued on s from now on waits for e's last record */
  int (*event_wait)(lc_event *e, lc_stream *s, char *err);
  int (*event_synchronize)(lc_event *e, char *err);
  int (*event_query)(lc_event *e, bool *done, char *err);
  /* both events made with timing and recorded (the caller checks); then
  ** LC_ENOTREADY while either event's record has not happened yet */
  int (*event_elapsed)(lc_event *start, lc_event *end, float *ms, char *err);
  /* Queue fn(ud) on s (never NULL): it runs once the work queued before
  ** it on s is done, on a thread of the backend's (or the driver's), and
  ** the work queued on s after it waits for it to return. fn must not call
  ** the backend (nor, on CUDA, the driver). On failure fn is not called. */
  int (*host_fn)(lc_stream *s, void (*fn)(void *ud), void *ud, char *err);
  /* Wait for all queued work, on every stream; then report the first
  ** failure not reported yet, from any stream. err NULL: wait only. */
  int (*synchronize)(char *err);
  /* Call release(ud) once all work queued so far is done: at once when
  ** nothing is queued, else later and perhaps on another thread. */
  void (*defer)(void (*release)(void *ud), void *ud);

  /* modules and launches. A failed compilation returns its log (malloc'd,
  ** the caller frees it). A function stays valid while its module is
  ** loaded; sizes gives its parameters' sizes in bytes, then -1, when
  ** the backend knows them (to check a parsed signature), else NULL. */
  int (*module_load)(const lc_source *src, lc_module **m, char **log, char *err);
  void (*module_unload)(lc_module *m);
  int (*module_function)(lc_module *m, const char *name, lc_function **f,
                         const long long **sizes, char *err);
  /* the address of a __device__ or __constant__ variable, and its size in
  ** the compiled module (the declaration read from the source may differ:
  ** a macro may change its type) */
  int (*module_global)(lc_module *m, const char *name, void **ptr, size_t *bytes, char *err);
  /* A launch checks cfg->shared_bytes against what the device gives this
  ** kernel (its max_shared_per_block less the kernel's static shared
  ** memory), opting the kernel in to more than LC_SHARED_DEFAULT where the
  ** device needs it, and fails naming the limit. */
  int (*launch)(lc_function *f, const lc_launch *cfg, char *err);
  /* array math's elementwise operations (base/ufunc.h) on device-accessible
  ** memory, queued on s (never NULL); the operands' data are device
  ** addresses. NULL: the backend has none. */
  int (*ufunc)(const struct lc_ufunc_call *c, lc_stream *s, char *err);
  /* random numbers (base/random.h) into device-accessible memory, queued on
  ** s (never NULL): the same bits as lc_random_host; the call's data is a
  ** device address. NULL: the backend has none. */
  int (*random)(const struct lc_random_call *c, lc_stream *s, char *err);
  /* matrix products (base/matmul.h) on device-accessible memory, queued on
  ** s (never NULL); the operands' data are device addresses, aligned to
  ** their element size, m, n, k and the number of products at least 1.
  ** NULL: the backend has none. */
  int (*matmul)(const struct lc_matmul_call *c, lc_stream *s, char *err);
  /* Which library runs matmul on the current device: true with its name
  ** and version in name[LC_ERRLEN] ("cublas 13.1.0"), or false with why
  ** the library's own kernel (kernels/matmul.cu) runs instead in
  ** why[LC_ERRLEN]. NULL: always the kernel. */
  bool (*blas)(char *name, char *why);
  /* index arrays and masks (base/gather.h: take, put, add_at, the index
  ** check, a mask's compaction) on device-accessible memory, queued on s
  ** (NULL: synchronous); the call's pointers are device addresses. NULL:
  ** the backend has none. */
  int (*gather)(const struct lc_gather_call *c, lc_stream *s, char *err);
  /* sort or argsort along an axis (base/sort.h) of device-accessible
  ** memory, queued on s (NULL: synchronous, as reduce); c->in and c->out
  ** are device addresses, views of the same shape that are the same view
  ** (a sort in place) or do not overlap. NULL: the backend has none. */
  int (*sort)(const struct lc_sort_call *c, lc_stream *s, char *err);
} lc_backend;

/* Page-locked memory, shared by every context (PORTABLE), write-combined
** (WRITECOMBINED: fast to write from the host, slow to read), mapped into
** the device (DEVICEMAP: implied by LC_MAPPED, asked for by a register). */
enum { LC_ALLOC_PORTABLE = 1, LC_ALLOC_WRITECOMBINED = 2, LC_ALLOC_DEVICEMAP = 4 };

/* stream_create's flags */
enum { LC_STREAM_NONBLOCKING = 1 };

/* The process-wide backend, chosen once from LUACUDA_BACKEND. Returns NULL
** with the reason in *why when the requested backend cannot be used.
** *why also explains, for sim chosen by auto, why CUDA was not used. */
const lc_backend *lc_backend_get(const char **why);

extern const lc_backend lc_backend_sim;
extern const lc_backend lc_backend_cuda;

/* Load the driver, initialise it and make the first device's primary
** context current. 0 when CUDA is usable; else nonzero with why (for
** luacuda.backend() and LUACUDA_BACKEND=cuda's error) in why[len]. */
int lc_cuda_init(char *why, size_t len);

#endif
