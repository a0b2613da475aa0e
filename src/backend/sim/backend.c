/*
** backend (sim): the simulator. "Device" memory is host memory (256-byte
** aligned, like cudaMalloc's), but it stays a separate kind: only this file
** touches it directly. Its capacity is the machine's memory, or
** LUACUDA_SIM_MEMORY bytes (suffix K, M or G) to simulate a smaller GPU.
**
** LUACUDA_SIM_MEMCHECK (memcheck.c, guard.c): at 1, the default, every
** block ends where a guard page begins, so a kernel reading or writing past
** an array faults, and the fault's message names the array: one element
** past it when its size is a multiple of 16 bytes (blocks stay 16-byte
** aligned, for the vector types: guard.c); at 3 every block's exact bytes
** end there, whatever its size; at 2 they begin where a guard page ends
** instead (accesses before the start fault; past the end, from the next
** page on) and the kernels' shared and local arrays are bounds-checked
** (compile.c). At 0,
** allocations of LUACUDA_SIM_GUARD bytes or more (default 64K; 1: all of
** them; off: none) are followed by a guard page, past the rounding to 256
** bytes; below that size a mapping of its own costs more than the block:
** they come from arena.c's slabs, out of the host heap.
*/
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dlfcn.h>

#include "env.h"
#include "sim.h"
#include "hostreg.h"
#include "host_copy.h"
#include "random.h"
#include "reduce.h"
#include "sort.h"
#include "kernels.h"
#include "ksource.h"
#include "cpublas.h"
#include "matmul.h"
#include "ufunc.h"
#include "gather.h"

/* Virtual devices (LUACUDA_SIM_DEVICES): one memory, the host's, but each
** device counts its own bytes against its own capacity; the current one is
** the calling thread's, as in the CUDA runtime (device 0 until selected). */
/* bytes in live device allocations, changed under reuse.c's lock */
static atomic_size_t used[LC_SIM_MAX_DEVICES];
/* initial-exec: read at a fixed offset from the thread pointer, where a
** module's default calls __tls_get_addr (some ten instructions) at each
** of the three reads a device allocation makes; its 4 bytes come out of
** the static TLS that the C library keeps spare for modules loaded later */
static _Thread_local int current __attribute__((tls_model("initial-exec")));
static int ndevices = 1;
static size_t capacity;             /* of each device */
static size_t guard_from;           /* the smallest allocation with a guard page */
static unsigned memcheck;           /* LUACUDA_SIM_MEMCHECK */
static size_t cache_cap;            /* bytes of freed device blocks kept, per device (reuse.c) */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static size_t physical_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : SIZE_MAX;
}

static void init_capacity(void) {
  const lc_settings *s = lc_settings_get();
  capacity = s->sim_memory ? s->sim_memory : physical_memory();
  ndevices = s->sim_devices ? (int)s->sim_devices : 1;
  guard_from = s->sim_guard;
  memcheck = s->sim_memcheck;
  /* a quarter of the device, at most 2 GiB: the simulator's device is the
  ** host's memory, whose pages the cached blocks keep */
  size_t quarter = capacity / 4 < ((size_t)2 << 30) ? capacity / 4 : (size_t)2 << 30;
  cache_cap = s->cache == SIZE_MAX ? quarter : s->cache;
}

/* Device memory never comes from the host heap, whose metadata a kernel
** writing past an array would corrupt. With memory checking, every block
** of nbytes (exactly) is guarded. Without it, blocks of n (nbytes rounded
** up to 256) are guarded from the guarded size on, come from the arena
** below it, and are a mapping of their own when larger and guards are off. */
static int placement(void) {
  return memcheck == 2 ? LC_SIM_GUARD_START : memcheck == 3 ? LC_SIM_GUARD_EXACT : LC_SIM_GUARD_END;
}

static void *block_alloc(size_t nbytes, size_t n) {
  if (memcheck) return lc_sim_guard_alloc(nbytes, placement());
  if (n >= guard_from) return lc_sim_guard_alloc(n, LC_SIM_GUARD_END);
  if (n <= lc_sim_arena_max()) return lc_sim_arena_alloc(n);
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  lc_sim_huge_pages(p, n);
  return p;
}

static void release(void *p, size_t nbytes, size_t n) {
  if (memcheck) {
    lc_sim_memcheck_remove(p);
    lc_sim_guard_free(p, nbytes, placement());
  } else if (n >= guard_from) {
    lc_sim_guard_free(p, n, LC_SIM_GUARD_END);
  } else if (n <= lc_sim_arena_max()) {
    lc_sim_arena_free(p, n);
  } else {
    munmap(p, n);
  }
}

/* The bins of reuse.c are keyed by the size a block's placement depends
** on: with memory checking its exact bytes (its end meets the guard), else
** the rounding to 256. */
static size_t reuse_key(size_t nbytes, size_t n) { return memcheck ? nbytes : n; }

/* A block a free could not keep goes back once the work queued before it
** is done (it may still use it). */
typedef struct given { void *p; size_t nbytes, n; } given;

static void give_now(void *ud) {
  given *g = ud;
  release(g->p, g->nbytes, g->n);
  free(g);
}

static __attribute__((cold, noinline)) void give_back(void *p, size_t key) {
  size_t n = (key + 255) & ~(size_t)255;
  if (n == 0) n = 256;
  given *g = malloc(sizeof *g);
  if (g == NULL) {                       /* no memory to queue it: wait */
    lc_sim_synchronize(NULL);
    release(p, key, n);
    return;
  }
  *g = (given){p, key, n};
  lc_sim_defer(give_now, g);
}

static bool sim_ordered_free(lc_kind kind) {
  pthread_once(&once, init_capacity);
  return kind == LC_DEVICE && cache_cap > 0;
}

/* The block goes into the device's cache at once (reuse.c says why that is
** safe on the simulator), or back through the queue when the cache is full.
** Its memcheck record stays: a reused block is relabelled by its new array.
** To valgrind it stays allocated, with what it holds: marking it anew
** (LC_SIM_BLOCK_ALLOCATED) would happen before the work queued on the old
** array, which would then read undefined memory. */
static void sim_free_after(lc_kind kind, void *ptr, size_t nbytes, int device,
                           lc_stream *const *streams, int nstreams) {
  (void)kind; (void)streams; (void)nstreams;
  size_t n = nbytes ? (nbytes + 255) & ~(size_t)255 : 256;
  if (!lc_sim_reuse_put(device, ptr, reuse_key(nbytes, n), n, cache_cap, &used[device]))
    give_back(ptr, reuse_key(nbytes, n));
}

static int alloc_fresh(lc_kind kind, size_t nbytes, size_t n, unsigned flags, void **ptr,
                       char *err);

/* s: one queue orders everything on the simulator, allocations included */
static int sim_alloc(lc_kind kind, size_t nbytes, unsigned flags, lc_stream *s, void **ptr,
                     char *err) {
  (void)s;
  pthread_once(&once, init_capacity);
  size_t n = nbytes ? (nbytes + 255) & ~(size_t)255 : 256;
  if (n < nbytes) n = SIZE_MAX;
  if (kind == LC_DEVICE && n != SIZE_MAX && cache_cap > 0) {
    void *p = lc_sim_reuse_take(current, reuse_key(nbytes, n), n, &used[current]);
    if (p) {
      /* the old array's name stays until the binding names the new one,
      ** as it does every allocation (backend.h, mem_label) */
      *ptr = p;
      return LC_OK;
    }
  }
  return alloc_fresh(kind, nbytes, n, flags, ptr, err);
}

/* a block the cache had none of: out of line, so that the reused block's
** path above is a few contiguous lines of code */
static __attribute__((cold, noinline)) int alloc_fresh(lc_kind kind, size_t nbytes, size_t n,
                                                        unsigned flags, void **ptr, char *err) {
  atomic_size_t *counter = &used[current];
  if (lc_kind_on_device(kind)) {
    size_t before = lc_sim_reuse_count(counter, n, 0);
    size_t kept = lc_sim_reuse_bytes(current);
    if (kept > 0 && (before + n + kept > capacity || before + n < before)) {
      /* the device is full with the cache: give it back and look again */
      lc_sim_reuse_drain(current, give_back);
      kept = 0;
    }
    if (before + n + kept > capacity || before + n < before) {
      lc_sim_reuse_count(counter, 0, n);
      return lc_fail(err, LC_ENOMEM, "out of %s memory allocating %zu bytes (%zu of %zu in use)",
                     lc_kind_names[kind], nbytes, before, capacity);
    }
  }
  *ptr = n == SIZE_MAX ? NULL : block_alloc(nbytes, n);
  if (*ptr == NULL && n != SIZE_MAX && lc_sim_reuse_bytes(current) > 0) {
    /* the system has no more: what the cache holds goes back (once the
    ** work that may use it is done), and the mappings kept too */
    lc_sim_reuse_drain(current, give_back);
    lc_sim_synchronize(NULL);      /* a failure of queued work stays its stream's */
    lc_sim_guard_trim();
    *ptr = block_alloc(nbytes, n);
  }
  if (*ptr == NULL) {
    if (lc_kind_on_device(kind)) lc_sim_reuse_count(counter, 0, n);
    return lc_fail(err, LC_ENOMEM, "out of %s memory allocating %zu bytes",
                   lc_kind_names[kind], nbytes);
  }
  if (lc_kind_page_locked(kind)) {     /* never counted, so only the block to give back */
    unsigned f = kind == LC_MAPPED ? flags | LC_ALLOC_DEVICEMAP : flags;
    /* its exact bytes: with memory checking the rounding is the guard's */
    int rc = lc_hostreg_add_allocated(*ptr, memcheck ? (nbytes ? nbytes : 1) : n, f, err);
    if (rc != LC_OK) {
      release(*ptr, nbytes, n);
      return rc;
    }
  }
  if (memcheck) lc_sim_memcheck_add(*ptr, nbytes);
  return LC_OK;
}

static void sim_free(lc_kind kind, void *ptr, size_t nbytes, int device) {
  size_t n = nbytes ? (nbytes + 255) & ~(size_t)255 : 256;
  if (lc_kind_page_locked(kind)) lc_hostreg_remove_allocated(ptr);
  if (lc_kind_on_device(kind)) lc_sim_reuse_count(&used[device], 0, n);
  release(ptr, nbytes, n);
}

static void sim_mem_label(void *ptr, const char *label) {
  if (memcheck) lc_sim_memcheck_label(ptr, label);
}

/* the default checking names array math's results by their operation: the
** line, for each small result, would cost as much as its arithmetic (a
** step of a + b on 16 floats took a fifth longer); the exact and strict
** modes, for hunting a fault, name every array's line */
static int sim_mem_labels(void) {
  pthread_once(&once, init_capacity);
  return memcheck == 0 ? LC_LABELS_NONE : memcheck == 1 ? LC_LABELS_NAMED_LINES
                                                        : LC_LABELS_ALL_LINES;
}

static int sim_mem_info(size_t *free_bytes, size_t *total, size_t *in_use) {
  pthread_once(&once, init_capacity);
  size_t u = atomic_load(&used[current]) + lc_sim_reuse_bytes(current);
  *total = capacity;
  *free_bytes = u < capacity ? capacity - u : 0;
  *in_use = atomic_load(&used[current]);
  return LC_OK;
}

/* the cache of freed blocks as a pool: what it holds and what is in use */
static int sim_pool_info(size_t *reserved, size_t *in_use) {
  pthread_once(&once, init_capacity);
  *in_use = atomic_load(&used[current]);
  *reserved = *in_use + lc_sim_reuse_bytes(current);
  return LC_OK;
}

/* ---- copies and fills: done at once without a stream (after the queued
** work), else queued with copies of the layouts they need ------------- */

/* Work on at most this many elements (or bytes, for a copy) runs on the
** caller's thread when nothing is queued (lc_sim_run_inline): at about a
** nanosecond each, it costs less than handing it to the executor. Larger
** work is queued, so that the script goes on while it runs. */
#define INLINE_MAX 4096

/* Run w, built to be queued, at once when n (its elements) is small and
** the queue idle: true when it ran (w then freed). */
static bool ran_inline(lc_stream *s, lc_sim_work *w, int64_t n) {
  return n <= INLINE_MAX && lc_sim_run_work_inline(s, w, NULL);
}

typedef struct copy_work {
  lc_sim_work w;
  void *dst;
  const void *src;
  size_t nbytes;
} copy_work;

static int run_copy(lc_sim_work *w, char *err) {
  (void)err;
  copy_work *c = (copy_work *)w;
  memmove(c->dst, c->src, c->nbytes);
  return LC_OK;
}

static int sim_copy(void *dst, lc_kind dkind, const void *src, lc_kind skind,
                    size_t nbytes, lc_stream *s, char *err) {
  (void)dkind; (void)skind;
  if (s == NULL) {
    int rc = lc_sim_synchronize(err);
    if (rc == LC_OK) memmove(dst, src, nbytes);
    return rc;
  }
  copy_work *c = (copy_work *)lc_sim_work_new(sizeof *c - sizeof c->w, run_copy, err);
  if (c == NULL) return LC_ENOMEM;
  c->dst = dst;
  c->src = src;
  c->nbytes = nbytes;
  if (ran_inline(s, &c->w, (int64_t)nbytes)) return LC_OK;
  return lc_sim_submit(s, &c->w, NULL, err);
}

typedef struct strided_work {
  lc_sim_work w;
  void *dbase, *sbase;
  lc_layout dl, sl;
  int64_t itemsize;
} strided_work;

static int run_strided(lc_sim_work *w, char *err) {
  (void)err;
  strided_work *c = (strided_work *)w;
  lc_copy_strided_host(c->dbase, &c->dl, c->sbase, &c->sl, c->itemsize);
  return LC_OK;
}

static int sim_copy_strided(const lc_region *dst, const lc_region *src,
                            int64_t itemsize, lc_stream *s, char *err) {
  if (s == NULL) {
    int rc = lc_sim_synchronize(err);
    if (rc == LC_OK)
      lc_copy_strided_host(dst->base, dst->layout, src->base, src->layout, itemsize);
    return rc;
  }
  strided_work *c = (strided_work *)lc_sim_work_new(sizeof *c - sizeof c->w, run_strided, err);
  if (c == NULL) return LC_ENOMEM;
  c->dbase = dst->base;
  c->sbase = src->base;
  c->dl = *dst->layout;
  c->sl = *src->layout;
  c->itemsize = itemsize;
  if (ran_inline(s, &c->w, c->dl.size)) return LC_OK;
  return lc_sim_submit(s, &c->w, NULL, err);
}

typedef struct fill_work {
  lc_sim_work w;
  void *base;
  lc_layout l;
  int64_t itemsize;
  unsigned char value[];       /* itemsize bytes */
} fill_work;

static int run_fill(lc_sim_work *w, char *err) {
  (void)err;
  fill_work *f = (fill_work *)w;
  lc_fill_host(f->base, &f->l, f->value, f->itemsize);
  return LC_OK;
}

static int sim_fill(const lc_region *dst, const void *value, int64_t itemsize,
                    lc_stream *s, char *err) {
  if (s == NULL) {
    int rc = lc_sim_synchronize(err);
    if (rc == LC_OK) lc_fill_host(dst->base, dst->layout, value, itemsize);
    return rc;
  }
  fill_work *f = (fill_work *)lc_sim_work_new(sizeof *f - sizeof f->w + (size_t)itemsize,
                                              run_fill, err);
  if (f == NULL) return LC_ENOMEM;
  f->base = dst->base;
  f->l = *dst->layout;
  f->itemsize = itemsize;
  memcpy(f->value, value, (size_t)itemsize);
  if (ran_inline(s, &f->w, f->l.size)) return LC_OK;
  return lc_sim_submit(s, &f->w, NULL, err);
}

/* ---- array math, reductions, random numbers: the host's loops, run by the
** stream's executor (device memory is host memory here) ---- */

/* A host function queued with its own copy of its call struct. */
typedef struct host_call_work {
  lc_sim_work w;
  void (*fn)(const void *call);
  _Alignas(max_align_t) unsigned char call[];
} host_call_work;

static int run_host_call(lc_sim_work *w, char *err) {
  (void)err;
  host_call_work *h = (host_call_work *)w;
  h->fn(h->call);
  return LC_OK;
}

/* fn(call) as queued work; at once when it is small work (n elements) and
** the queue is idle, without the copy of the call (the loops of base/ that
** come here cannot fail and call nothing of the simulator's) */
static int queue_host_call(lc_stream *s, void (*fn)(const void *), const void *call,
                           size_t size, int64_t n, char *err) {
  if (n <= INLINE_MAX && lc_sim_run_call_inline(s, fn, call)) return LC_OK;
  host_call_work *h = (host_call_work *)lc_sim_work_new(
      sizeof *h - sizeof h->w + size, run_host_call, err);
  if (h == NULL) return LC_ENOMEM;
  h->fn = fn;
  memcpy(h->call, call, size);     /* scalars are held in the calls themselves */
  return lc_sim_submit(s, &h->w, NULL, err);
}

static void reduce_call(const void *c) { lc_reduce_host(c); }
static void ufunc_call(const void *c) { lc_ufunc_host(c); }
static void random_call(const void *c) { lc_random_host(c); }
static void gather_call(const void *c) { lc_gather_host(c); }

static int sim_gather(const lc_gather_call *c, lc_stream *s, char *err) {
  if (s == NULL) {
    int rc = lc_sim_synchronize(err);
    if (rc == LC_OK) lc_gather_host(c);
    return rc;
  }
  return queue_host_call(s, gather_call, c, sizeof *c, INT64_MAX, err);
}

static int sim_reduce(const lc_reduce_call *c, lc_stream *s, char *err) {
  if (s == NULL) {
    int rc = lc_sim_synchronize(err);
    if (rc == LC_OK) lc_reduce_host(c);
    return rc;
  }
  return queue_host_call(s, reduce_call, c, sizeof *c, c->in_lay.size, err);
}

/* a sort with its scratch, allocated at the call (so that no memory is
** missing later, on the stream) and freed when it has run */
typedef struct sort_work {
  lc_sort_call c;
  void *scratch;
} sort_work;

static void sort_call(const void *p) {
  const sort_work *w = p;
  lc_sort_host(&w->c, w->scratch);
  lc_sort_scratch_free(w->scratch, lc_sort_scratch_bytes(&w->c));
}

static int sim_sort(const lc_sort_call *c, lc_stream *s, char *err) {
  sort_work w = {*c, lc_sort_scratch_alloc(lc_sort_scratch_bytes(c))};
  if (w.scratch == NULL) {
    return lc_fail(err, LC_ENOMEM, "out of memory for the sort's scratch (%zu bytes)",
                   lc_sort_scratch_bytes(c));
  }
  int rc = s ? queue_host_call(s, sort_call, &w, sizeof w, INT64_MAX, err)
             : lc_sim_synchronize(err);
  if (rc != LC_OK) lc_sort_scratch_free(w.scratch, lc_sort_scratch_bytes(c));
  else if (s == NULL) sort_call(&w);
  return rc;
}

static int sim_ufunc(const lc_ufunc_call *c, lc_stream *s, char *err) {
  return queue_host_call(s, ufunc_call, c, sizeof *c, c->out.lay.size, err);
}

static int sim_random(const lc_random_call *c, lc_stream *s, char *err) {
  return queue_host_call(s, random_call, c, sizeof *c, INT64_MAX, err);
}

/* ---- modules and launches (compile.c, pool.c) ---- */

/* A module is its dlopen handle; a function, its block entry point. */
static int sim_module_load(const lc_source *src, lc_module **m, char **log, char *err) {
  void *handle;
  int rc = lc_sim_compile(src, &handle, log, err);
  if (rc == LC_OK) *m = handle;
  return rc;
}

static void sim_module_unload(lc_module *m) {
  lc_sim_lines_forget(m);
  dlclose(m);
}

static int sim_module_function(lc_module *m, const char *name, lc_function **f,
                               const long long **sizes, char *err) {
  char sym[200], named[64];
  /* a name expression's entry point is found by its place in the table */
  const char *const *table = dlsym(m, LC_SIM_NAMED_TABLE);
  for (int i = 0; table && table[i]; i++)
    if (strcmp(table[i], name) == 0) {
      snprintf(named, sizeof named, LC_SIM_NAMED_PREFIX "%d", i);
      name = named;
      break;
    }
  snprintf(sym, sizeof sym, "__lc_block_%s", name);
  void *entry = dlsym(m, sym);
  snprintf(sym, sizeof sym, "__lc_sizes_%s", name);
  const long long *const *sz = dlsym(m, sym);
  if (entry == NULL || sz == NULL) {
    return lc_fail(err, LC_EFAIL, "the compiled module has no kernel '%s'", name);
  }
  *f = entry;
  *sizes = *sz;
  return LC_OK;
}

static int sim_module_global(lc_module *m, const char *name, void **ptr, size_t *bytes,
                             char *err) {
  char sym[200];
  snprintf(sym, sizeof sym, "__lc_global_%s", name);
  void *accessor = dlsym(m, sym);
  if (accessor == NULL) {
    return lc_fail(err, LC_EFAIL, "the compiled module has no global '%s'", name);
  }
  void *(*get)(size_t *);
  memcpy(&get, &accessor, sizeof get);     /* object to function pointer, as POSIX allows */
  *ptr = get(bytes);
  return LC_OK;
}

/* A queued launch: its configuration, and a copy of the packed arguments
** (the caller's buffer is gone by the time it runs). */
typedef struct launch_work {
  lc_sim_work w;
  lc_sim_block_fn fn;
  lc_sim_launch l;
  char kernel[128];
  void **args;                 /* nargs pointers, then the argument bytes */
} launch_work;

static int run_launch(lc_sim_work *w, char *err) {
  launch_work *k = (launch_work *)w;
  char cause[LC_ERRLEN];
  if (lc_sim_run(k->fn, &k->l, cause) == LC_OK) return LC_OK;
  return lc_fail(err, LC_EFAIL, "kernel '%.100s' failed: %.380s", k->kernel, cause);
}

/* The blocks of a cooperative launch that may run at once: what an H100
** would allow (2048 threads, 32 blocks and 228 KiB of shared memory, 1 KiB
** of it reserved per block, on each of 132 multiprocessors; the
** simulator knows neither registers nor static shared memory), and at
** most LC_SIM_COOP_MAX, a worker thread each. */
static int check_coresident(const lc_launch *cfg, char *err) {
  unsigned long long blocks = (unsigned long long)cfg->grid[0] * cfg->grid[1] * cfg->grid[2];
  unsigned threads = cfg->block[0] * cfg->block[1] * cfg->block[2];
  unsigned warps = (threads + 31) / 32, per_sm = 64 / warps;
  if (per_sm > 32) per_sm = 32;
  unsigned by_shared = 233472u / (cfg->shared_bytes + 1024u);
  if (by_shared < per_sm) per_sm = by_shared;
  unsigned long long most = (unsigned long long)per_sm * 132u;
  if (most > LC_SIM_COOP_MAX) most = LC_SIM_COOP_MAX;
  if (blocks <= most) return LC_OK;
  return lc_fail(err, LC_EFAIL, "a cooperative launch of %llu blocks is more than the %llu that can "
                 "run at once (the simulator allows what an H100 would: %u blocks of %u threads and "
                 "%u bytes of dynamic shared memory on each of 132 multiprocessors, and at most %u "
                 "blocks)", blocks, most, per_sm, threads, cfg->shared_bytes, LC_SIM_COOP_MAX);
}

static int sim_launch(lc_function *f, const lc_launch *cfg, char *err) {
  if (cfg->cooperative && check_coresident(cfg, err) != LC_OK) return LC_EFAIL;
  size_t ptrs = sizeof(void *) * (size_t)cfg->nargs;
  /* the argument bytes keep the alignment they were packed with */
  size_t head = (sizeof(launch_work) + 15) & ~(size_t)15;
  size_t arglen = (cfg->arglen + 15) & ~(size_t)15;
  launch_work *k = (launch_work *)lc_sim_work_new(head - sizeof k->w + arglen + ptrs,
                                                  run_launch, err);
  if (k == NULL) return LC_ENOMEM;
  char *bytes = (char *)k + head;
  memcpy(bytes, cfg->argbuf, cfg->arglen);
  k->args = (void **)(bytes + arglen);
  for (int i = 0; i < cfg->nargs; i++)
    k->args[i] = bytes + ((const char *)cfg->args[i] - (const char *)cfg->argbuf);
  memcpy(&k->fn, &f, sizeof k->fn);
  k->l = (lc_sim_launch){
    {cfg->grid[0], cfg->grid[1], cfg->grid[2]},
    {cfg->block[0], cfg->block[1], cfg->block[2]},
    k->args, cfg->shared_bytes, cfg->cooperative, lc_sim_grid_sync
  };
  snprintf(k->kernel, sizeof k->kernel, "%s", cfg->kernel_name ? cfg->kernel_name : "?");
  return lc_sim_submit(cfg->stream, &k->w, NULL, err);
}

/* ---- matrix products: kernels/matmul.cu, compiled like any module (the
** disk cache keeps it) at the first product of the process ---- */

static pthread_once_t matmul_once = PTHREAD_ONCE_INIT;
static int matmul_rc;
static char matmul_err[LC_ERRLEN];          /* why it did not compile */
static lc_function *matmul_fn[2];            /* float, double */
static const char *const matmul_names[2] = {"lc_matmul<float>", "lc_matmul<double>"};

static void matmul_load(void) {
  char err[LC_ERRLEN];
  lc_scan_result r;
  size_t len = strlen(lc_matmul_source);
  memset(&r, 0, sizeof r);
  int rc = lc_scan(lc_matmul_source, len, &r, err);      /* sizes the arrays */
  lc_kernel_sig *k = rc ? NULL : calloc((size_t)r.nkernels + 1, sizeof *k);
  lc_shared_decl *sh = rc ? NULL : calloc((size_t)r.nshared + 1, sizeof *sh);
  lc_global_decl *g = rc ? NULL : calloc((size_t)r.nglobals + 1, sizeof *g);
  lc_struct_def *st = rc ? NULL : calloc((size_t)r.nstructs + 1, sizeof *st);
  if (rc == 0 && (!k || !sh || !g || !st)) {
    lc_errf(err, "out of host memory");
    rc = -1;
  }
  if (rc == 0) {
    r = (lc_scan_result){k, r.nkernels, 0, sh, r.nshared, 0, g, r.nglobals, 0, st, r.nstructs, 0};
    rc = lc_scan(lc_matmul_source, len, &r, err);
  }
  if (rc == 0) {
    static const char *const std_only[] = {LC_KSOURCE_STD};
    lc_source src = {lc_matmul_source, len, "luacuda/matmul.cu", std_only, 1, &r,
                     matmul_names, 2};
    void *handle = NULL;
    char *log = NULL;
    rc = lc_sim_compile(&src, &handle, &log, err);
    if (rc != LC_OK && log)
      snprintf(err + strlen(err), LC_ERRLEN - strlen(err), ": %.300s", log);
    free(log);
    const long long *sizes;
    for (int i = 0; i < 2 && rc == LC_OK; i++)
      rc = sim_module_function(handle, matmul_names[i], &matmul_fn[i], &sizes, err);
  }
  free(k);
  free(sh);
  free(g);
  free(st);
  if (rc != 0) {
    memcpy(matmul_err, err, sizeof matmul_err);
    matmul_rc = LC_EFAIL;
  }
}

static void matmul_call(const void *c) { lc_matmul_host(c); }

/* The CPU's BLAS where it reads the operands as they lie (the queued call
** then needs no memory of its own), else the kernel. */
static int sim_matmul(const lc_matmul_call *c, lc_stream *s, char *err) {
  if (lc_cpublas_direct(c)) return queue_host_call(s, matmul_call, c, sizeof *c, INT64_MAX, err);
  pthread_once(&matmul_once, matmul_load);
  if (matmul_rc != LC_OK) {
    return lc_fail(err, matmul_rc, "the library's matmul kernel did not compile: %.440s",
                   matmul_err);
  }
  lc_matmul_args a;
  lc_matmul_pack(c, &a);
  void *args[1] = {&a};
  int64_t tn = (c->n + LC_MM_BN - 1) / LC_MM_BN, tm = (c->m + LC_MM_BM - 1) / LC_MM_BM;
  lc_launch cfg = {
    {tn > (int64_t)LC_MAX_GRID_X ? LC_MAX_GRID_X : (unsigned)tn,
     tm > (int64_t)LC_MAX_GRID_Y ? LC_MAX_GRID_Y : (unsigned)tm,
     a.batch > (int64_t)LC_MAX_GRID_Z ? LC_MAX_GRID_Z : (unsigned)a.batch},
    {LC_MM_THREADS_X, LC_MM_THREADS_Y, 1}, 0, s, args, 1, &a, sizeof a,
    matmul_names[c->dtype->code == LC_FLOAT64], false};
  return sim_launch(matmul_fn[c->dtype->code == LC_FLOAT64], &cfg, err);
}

static bool sim_blas(char *name, char *why) {
  if (lc_cpublas_available(name, why)) return true;
  /* why the kernel runs instead */
  size_t len = strlen(why);
  snprintf(why + len, LC_ERRLEN - len, "; the sim backend computes matrix products with the "
           "library's own tiled kernel");
  return false;
}

/* ---- the simulated devices ---- */

static int sim_device_count(void) {
  pthread_once(&once, init_capacity);
  return ndevices;
}

static int sim_current_device(void) { return current; }

static int sim_device_info(int i, lc_device_info *info, char *err) {
  pthread_once(&once, init_capacity);
  if (i < 0 || i >= ndevices) {
    return lc_fail(err, LC_EFAIL, "no device %d (the simulator has %d: LUACUDA_SIM_DEVICES)", i + 1,
                   ndevices);
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  snprintf(info->name, sizeof info->name, "luacuda simulator");
  info->cc_major = 7;          /* the simulator's __CUDA_ARCH__ is 750 */
  info->cc_minor = 5;
  info->memory = capacity;
  info->multiprocessors = cores > 0 ? (int)cores : 1;
  /* an H100's: a kernel written for it runs here (__shared__ arrays are
  ** thread-local storage on the simulator, so nothing is counted against it) */
  info->max_shared_per_block = LC_MAX_SHARED;
  return LC_OK;
}

/* The limits, kept per device and read back: the simulator's threads run
** on fibers of LUACUDA_SIM_STACK bytes of host stack (host frames are not a
** GPU's), and its printf writes at once, so neither bounds anything here. */
static size_t limits[LC_SIM_MAX_DEVICES][LC_NLIMITS];
static pthread_mutex_t limits_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t limits_once = PTHREAD_ONCE_INIT;

static void limits_init(void) {
  for (int d = 0; d < LC_SIM_MAX_DEVICES; d++) {
    limits[d][LC_LIMIT_STACK] = 1024;                   /* the driver's defaults */
    limits[d][LC_LIMIT_PRINTF_FIFO] = (size_t)1 << 20;
  }
}

static int sim_get_limit(lc_limit which, size_t *value, char *err) {
  (void)err;
  pthread_once(&limits_once, limits_init);
  pthread_mutex_lock(&limits_mu);
  *value = limits[current][which];
  pthread_mutex_unlock(&limits_mu);
  return LC_OK;
}

static int sim_set_limit(lc_limit which, size_t value, size_t *took, char *err) {
  (void)err;
  pthread_once(&limits_once, limits_init);
  pthread_mutex_lock(&limits_mu);
  *took = limits[current][which] = value;
  pthread_mutex_unlock(&limits_mu);
  return LC_OK;
}

static int sim_select_device(int i, char *err) {
  lc_device_info info;
  int rc = sim_device_info(i, &info, err);
  if (rc == LC_OK) current = i;
  return rc;
}

/* Every device's memory is the host's: a copy between two is a copy. */
static int sim_copy_peer(const lc_region *dst, int ddev, const lc_region *src, int sdev,
                         int64_t itemsize, lc_stream *s, char *err) {
  (void)ddev; (void)sdev;
  return sim_copy_strided(dst, src, itemsize, s, err);
}

/* The current device's cached blocks, then the guarded mappings kept (of
** every device: guard.c's cache is one), once the work that may still use
** them is done. */
static int sim_trim_pool(char *err) {
  pthread_once(&once, init_capacity);
  (void)err;
  lc_sim_reuse_drain(current, give_back);
  lc_sim_synchronize(NULL);      /* a failure of queued work stays its stream's */
  lc_sim_guard_trim();
  return LC_OK;
}

/* On the simulator the host's handle is the stream itself (from
** stream_native); the wrap holds a reference, so a script that closes the
** stream's object does not free it under the host's slot. */
static int sim_stream_wrap(void *native, lc_stream **s, char *err) {
  (void)err;
  lc_sim_stream_retain(native);
  *s = native;
  return LC_OK;
}

static void *sim_stream_native(lc_stream *s) { return s; }

const lc_backend lc_backend_sim = {
  .name = "sim",
  .device_memory_is_host = true,
  .device_count = sim_device_count,
  .device_info = sim_device_info,
  .select_device = sim_select_device,
  .get_limit = sim_get_limit,
  .set_limit = sim_set_limit,
  .current_device = sim_current_device,
  .trim_pool = sim_trim_pool,
  .pool_info = sim_pool_info,
  .ordered_free = sim_ordered_free,
  .free_after = sim_free_after,
  .mem_alloc = sim_alloc,
  .mem_free = sim_free,
  .mem_info = sim_mem_info,
  .mem_label = sim_mem_label,
  .mem_labels = sim_mem_labels,
  .host_register = lc_hostreg_register,
  .host_unregister = lc_hostreg_unregister,
  .host_device_pointer = lc_hostreg_device_pointer,
  .host_flags = lc_hostreg_flags,
  .copy = sim_copy,
  .copy_strided = sim_copy_strided,
  .copy_peer = sim_copy_peer,
  .fill = sim_fill,
  .reduce = sim_reduce,
  .gather = sim_gather,
  .default_stream = lc_sim_default_stream,
  .stream_create = lc_sim_stream_create,
  .stream_retain = lc_sim_stream_retain,
  .stream_release = lc_sim_stream_destroy,
  .stream_wrap = sim_stream_wrap,
  .stream_native = sim_stream_native,
  .stream_synchronize = lc_sim_stream_synchronize,
  .stream_query = lc_sim_stream_query,
  .event_create = lc_sim_event_create,
  .event_destroy = lc_sim_event_destroy,
  .event_record = lc_sim_event_record,
  .event_wait = lc_sim_event_wait,
  .event_synchronize = lc_sim_event_synchronize,
  .event_query = lc_sim_event_query,
  .event_elapsed = lc_sim_event_elapsed,
  .host_fn = lc_sim_host_fn,
  .synchronize = lc_sim_synchronize,
  .defer = lc_sim_defer,
  .module_load = sim_module_load,
  .module_unload = sim_module_unload,
  .module_function = sim_module_function,
  .module_global = sim_module_global,
  .launch = sim_launch,
  .ufunc = sim_ufunc,
  .random = sim_random,
  .matmul = sim_matmul,
  .blas = sim_blas,
  .sort = sim_sort,
};
