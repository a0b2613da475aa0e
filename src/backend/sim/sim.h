/*
** sim: what the simulator's files share: compiling a kernel module with the
** host compiler, and running a launch's blocks on the worker threads.
*/
#ifndef LUACUDA_SIM_H
#define LUACUDA_SIM_H

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "backend.h"
#include "cache.h"        /* lc_hash */
#include "common.h"       /* LC_ERRLEN */
#include "scan.h"
#include "sim_abi.h"      /* kernels/ */
#include "strbuf.h"

/* Compile src into a shared object and dlopen it. On a compile error the
** compiler's output comes back in *log (malloc'd). */
int lc_sim_compile(const lc_source *src, void **handle, char **log, char *err);
/* Check src's options (options.c): 0, warning once on stderr about each
** that changes results on a GPU but not here; or -1 with err set for one
** the simulator does not know or cannot honour. */
int lc_sim_check_options(const lc_source *src, char *err);
/* Write n bytes of data to a new file at path: 0, or -1 with err set. */
int lc_sim_write_file(const char *path, const char *data, size_t n, char *err);

/* ---- libcu++, the toolkit's <cuda/std/...> (libcudacxx.c) ----
** The host compiler's option that searches the toolkit's libcu++ after
** every other directory, into opt: 0, or -1 when no toolkit is known
** (NVRTC's, nvrtc.h), or source names no <cuda/std/...> (it is looked
** for, loading NVRTC, only where it is needed). Its wrappers (one
** per header, hiding the simulator's macros) are written under
** dir/include/ for a compilation and removed after it; their text goes
** into the compilation's cache key. */
int lc_sim_libcudacxx_option(char *opt, size_t n, const char *source);
int lc_sim_libcudacxx_write(const char *dir, char *err);
void lc_sim_libcudacxx_remove(const char *dir);
void lc_sim_libcudacxx_key(lc_hash *key);

/* ---- running the host compiler (compile.c) ----
** Run argv (no shell), its stdout and stderr into log: its exit status (0
** is success), or -1 with err when it could not be run. */
int lc_sim_run_compiler(const char *const *argv, lc_strbuf *log, char *err);
/* Write data[0 .. n) as the file at path (mode 0600): 0, or -1 with err. */
int lc_sim_write_file(const char *path, const char *data, size_t n, char *err);
/* Append the whole file at path to b; false when it cannot be read. */
bool lc_sim_read_file(lc_strbuf *b, const char *path);

/* ---- the precompiled head (pch.c) ----
** Where the compiler is GCC (its identity says so), there is a disk cache
** and LUACUDA_SIM_PCH is not 0: write the head every module's text starts
** with, head[0 .. n), as dir/LC_SIM_PCH_HEAD, and link
** dir/LC_SIM_PCH_HEAD.gch to its precompiled form in the cache, built
** there first when it is missing, stale, corrupt or foreign; the module
** then includes the head instead of holding its text. flags: the compiler
** and the options the module's compile shares with it (-c and the files
** aside), at most LC_SIM_PCH_MAXFLAGS. The headers it read come back in
** *rec (deps.h's record, malloc'd), for the module's entry. 1 when linked,
** 0 when not (a precompiled head that cannot be had only costs time), -1
** with err when the head cannot be written. */
#define LC_SIM_PCH_HEAD "luacuda_sim.h"
#define LC_SIM_PCH_MAXFLAGS 32
int lc_sim_pch(const char *dir, const char *head, size_t n, const char *const *flags,
               int nflags, const char *identity, void **rec, size_t *nrec, char *err);
/* With the precompiled head linked in dir (lc_sim_pch returned 1, *rec):
** the runtime's definitions, impl[0 .. nimpl) (kernels/sim_runtime_impl.h),
** compiled once per head, definitions, flags and compiler into an object
** in the disk cache, written to dir/LC_SIM_RT_OBJECT for the module's link,
** so that the module's text need not hold them. 1 when it is there, 0 when
** not (the module's text must then hold them). */
#define LC_SIM_RT_OBJECT "luacuda_runtime.o"
int lc_sim_runtime_object(const char *dir, const char *head, size_t nhead, const char *impl,
                          size_t nimpl, const char *const *flags, int nflags,
                          const char *identity, const void *rec, size_t nrec);

/* ---- the parity check with NVRTC (check.c) ----
** LC_OK when NVRTC accepts src as the CUDA backend would compile it, or
** there is no check (LUACUDA_NVRTC_CHECK=0, no NVRTC, or passed before: the
** disk cache remembers); else the error in err and NVRTC's log, when it
** wrote one, in *log (malloc'd). */
int lc_sim_check(const lc_source *src, char **log, char *err);
/* The same on a thread of its own, started before the host compiler is
** run and waited for after it; src must outlive the wait. Every start is
** waited for. */
typedef struct lc_sim_checker {
  const lc_source *src;
  bool started;
  pthread_t thread;
  int rc;
  char *log;
  char err[LC_ERRLEN];
} lc_sim_checker;
void lc_sim_check_start(lc_sim_checker *c, const lc_source *src);
int lc_sim_check_wait(lc_sim_checker *c, char **log, char *err);

/* Run every block of a launch of fn on the worker threads and wait for
** them (the calling thread runs blocks too, and a small launch alone:
** pool.c); the first failing block's message comes back in err. A cooperative
** launch (at most LC_SIM_COOP_MAX blocks) runs each block on a worker of
** its own, all at once, l->grid_sync being lc_sim_grid_sync. */
int lc_sim_run(lc_sim_block_fn fn, const lc_sim_launch *l, char *err);
int lc_sim_grid_sync(const lc_sim_launch *l, lc_sim_worker *w);
#define LC_SIM_COOP_MAX 1024u

/* ---- faults in kernels (fault.c) ----
** Each worker thread registers one of these (any number of them), and
** runs no kernel code unless that succeeded. While armed, a fault raised
** on that thread (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT), or the stop
** signal after lc_sim_fault_stop, records the signal and siglongjmps to
** jump; lc_sim_fault_recover must then be called on that thread. */
#define LC_SIM_STOP_SIGNAL SIGURG      /* ignored by default, so a late one is harmless */
typedef struct lc_sim_fault {
  sigjmp_buf jump;
  volatile sig_atomic_t armed;     /* kernel code runs on this thread */
  volatile sig_atomic_t stop;      /* the watchdog wants the kernel stopped */
  /* the running kernel module's code: the watchdog stops a kernel only
  ** there, never inside the C library (malloc's lock would stay held) */
  uintptr_t code_lo, code_hi;
  int signo, code;                 /* what happened */
  void *addr;
  uintptr_t pc;                    /* the faulting instruction; 0 when not known */
  /* where the running module keeps the index of the thread it runs
  ** (lc_sim_worker.thread), and that index when the fault happened;
  ** UINT_MAX when not known */
  const unsigned *const volatile *thread_slot;
  unsigned thread;
  pthread_t self;
  struct lc_sim_fault *next;       /* the registered ones (fault.c) */
} lc_sim_fault;

/* On the worker thread itself: its signal stack, the handlers (once). */
int lc_sim_fault_thread(lc_sim_fault *f, char *err);
void lc_sim_fault_recover(lc_sim_fault *f);
/* Stop the kernel running on f's thread (the watchdog's request): at once
** when it runs its module's code, else at a later request (the watchdog
** asks every 10 ms). */
void lc_sim_fault_stop(lc_sim_fault *f);
/* The executable code of the loaded module holding address addr, into
** [lo, hi); both 0 when it cannot be found (a stop may then land anywhere). */
void lc_sim_code_range(uintptr_t addr, uintptr_t *lo, uintptr_t *hi);
/* The recorded signal as a cause, e.g. "integer division by zero (SIGFPE)". */
void lc_sim_fault_describe(const lc_sim_fault *f, char *buf, size_t n);

/* lines.c: the source lines of faults, in modules compiled with line
** tables (-lineinfo). keep: the module's image (its file so, which is
** removed once loaded) is kept while the module is loaded; forget at its
** unload. line: the source line of code address pc, "file:line" into buf
** (n bytes), the innermost of the user's source (not luacuda's headers);
** false when there is none. Not in a signal handler: it runs addr2line. */
void lc_sim_lines_keep(void *handle, const char *so);
void lc_sim_lines_forget(void *handle);
bool lc_sim_lines_of(uintptr_t pc, char *buf, size_t n);

/* Under valgrind, device blocks are heap blocks to memcheck: their contents
** start undefined and a lost one is a leak. No-ops elsewhere. */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define LC_SIM_BLOCK_ALLOCATED(p, n) VALGRIND_MALLOCLIKE_BLOCK(p, n, 0, 0)
#define LC_SIM_BLOCK_FREED(p) VALGRIND_FREELIKE_BLOCK(p, 0)
/* A stack the simulator uses (a fiber's, a worker's, a signal stack): a
** move of the stack pointer between two of them is a switch to valgrind,
** not a frame pushed (which would make it take the live frames between them
** for undefined memory: after a fault's siglongjmp from the signal stack,
** when the two lie within 2 MiB). */
#define LC_SIM_STACK(lo, hi) ((void)VALGRIND_STACK_REGISTER(lo, hi))
#endif
#endif
#ifndef LC_SIM_BLOCK_ALLOCATED
#define LC_SIM_BLOCK_ALLOCATED(p, n) ((void)0)
#define LC_SIM_BLOCK_FREED(p) ((void)0)
#define LC_SIM_STACK(lo, hi) ((void)0)
#endif

/* ---- device memory next to a guard page (guard.c) ----
** END: the block's n bytes end where an inaccessible page begins (any n;
** the block is aligned to the largest power of two dividing n, up to the
** page). START: they begin where one ends, and another follows their last
** page. free takes the same n and placement. */
enum { LC_SIM_GUARD_END, LC_SIM_GUARD_START, LC_SIM_GUARD_EXACT };
void *lc_sim_guard_alloc(size_t n, int where);
void lc_sim_guard_free(void *p, size_t n, int where);
void lc_sim_guard_trim(void);           /* unmap the blocks kept for reuse */
/* Make the page at p (of a private anonymous mapping) inaccessible, in the
** page tables where Linux can (6.13 and later: the mapping stays one),
** else with mprotect (which splits it); false when neither worked. */
bool lc_sim_guard_page(char *p, size_t page);
/* madvise(MADV_HUGEPAGE) over n bytes at p (page-aligned) from 2 MiB on */
void lc_sim_huge_pages(char *p, size_t n);

/* ---- a spin lock, for the records touched at every allocation and free
** (reuse.c's bins, memcheck.c's table), whose holds are a few loads and
** stores but for rare growth and a fault's scan: a lock and unlock cost a
** few instructions where a mutex's cost some fifty. A thread that finds
** it held yields, so a holder descheduled mid-hold is not spun against. */
static inline void lc_sim_spin_lock(atomic_flag *f) {
  while (atomic_flag_test_and_set_explicit(f, memory_order_acquire)) sched_yield();
}
static inline void lc_sim_spin_unlock(atomic_flag *f) {
  atomic_flag_clear_explicit(f, memory_order_release);
}

/* ---- the live blocks, for a fault's message (memcheck.c) ----
** Every block allocated while LUACUDA_SIM_MEMCHECK is on is added with its
** size; label describes it ("float32 array of shape (16) allocated at
** x.lua:3"; NULL keeps none). explain writes which block addr ran past
** (within a page after its end, or before its start) into buf; false, with
** buf untouched, when none. */
void lc_sim_memcheck_add(void *p, size_t n);
void lc_sim_memcheck_label(void *p, const char *label);
void lc_sim_memcheck_remove(void *p);
bool lc_sim_memcheck_explain(const void *addr, char *buf, size_t n);

/* ---- freed device blocks kept for the next allocation (reuse.c) ----
** Per device, by key (the size the block was allocated with); counted is
** the bytes the device's count gives it. put keeps p unless the device's
** cache would pass limit bytes (false: the caller gives it back). drain
** hands every kept block to give(p, key) and forgets them.
** used is the device's count of bytes in live allocations (backend.c):
** take adds counted to it when it finds a block, put takes counted off it
** in any case, in the same hold of the lock, so that a reused block costs
** one locked instruction a call and not two. Every change of a count is
** made under this lock (count: add, then sub, returning the count before),
** so plain loads and stores under it lose none; readers load it at any
** time. */
void *lc_sim_reuse_take(int device, size_t key, size_t counted, atomic_size_t *used);
bool lc_sim_reuse_put(int device, void *p, size_t key, size_t counted, size_t limit,
                      atomic_size_t *used);
size_t lc_sim_reuse_count(atomic_size_t *used, size_t add, size_t sub);
size_t lc_sim_reuse_bytes(int device);
void lc_sim_reuse_drain(int device, void (*give)(void *p, size_t key));

/* ---- smaller device memory, out of the host heap (arena.c) ----
** n is a multiple of 256, at most lc_sim_arena_max(); free takes the same n. */
size_t lc_sim_arena_max(void);
void *lc_sim_arena_alloc(size_t n);
void lc_sim_arena_free(void *p, size_t n);

/* ---- streams and events (stream.c) ----
** Work queued on a stream: run() is called on the executor thread, in
** queue order; the struct is freed after it. A work type embeds this as
** its first member and its payload follows. */
typedef struct lc_sim_work lc_sim_work;
struct lc_sim_work {
  lc_sim_work *next;
  uint64_t ticket;
  lc_stream *stream;           /* where a failure is reported; NULL: nowhere */
  int (*run)(lc_sim_work *w, char *err);
};

/* calloc'd work with payload bytes after the header (NULL: out of memory) */
lc_sim_work *lc_sim_work_new(size_t payload, int (*run)(lc_sim_work *, char *), char *err);
/* Queue w on s (taking it, also on failure); its ticket in *ticket. */
int lc_sim_submit(lc_stream *s, lc_sim_work *w, uint64_t *ticket, char *err);
/* Run run(ud, err) now, on the calling thread, as the next work on s, when
** nothing is queued or running: true, its ticket in *ticket (may be NULL);
** else false, and the caller queues it. A failure is s's, reported where
** queued work's is. For small work that neither blocks nor waits on the
** queue, and runs no user code. */
bool lc_sim_run_inline(lc_stream *s, int (*run)(void *ud, char *err), void *ud,
                       uint64_t *ticket);
/* The same for w, built to be queued: true when it ran (w then freed),
** false when the caller must still queue it. */
bool lc_sim_run_work_inline(lc_stream *s, lc_sim_work *w, uint64_t *ticket);
/* fn(call) now, as the next work on s, when nothing is queued or running
** (true), else false: lc_sim_run_inline for host loops that cannot fail
** (no error buffer, no failure to keep). */
bool lc_sim_run_call_inline(lc_stream *s, void (*fn)(const void *call), const void *call);

int lc_sim_synchronize(char *err);
void lc_sim_defer(void (*release)(void *), void *ud);
int lc_sim_host_fn(lc_stream *s, void (*fn)(void *), void *ud, char *err);
lc_stream *lc_sim_default_stream(void);
int lc_sim_stream_create(lc_stream **s, unsigned flags, char *err);
/* Streams are counted: the script's object holds one reference, and each
** host slot that wraps the stream (luacuda_setstream) another; destroy
** drops one, and the last goes once the work queued on the stream is done. */
void lc_sim_stream_retain(lc_stream *s);
void lc_sim_stream_destroy(lc_stream *s);
int lc_sim_stream_synchronize(lc_stream *s, char *err);
int lc_sim_stream_query(lc_stream *s, bool *idle, char *err);
int lc_sim_event_create(lc_event **e, bool timing, char *err);
void lc_sim_event_destroy(lc_event *e);
int lc_sim_event_record(lc_event *e, lc_stream *s, char *err);
int lc_sim_event_wait(lc_event *e, lc_stream *s, char *err);
int lc_sim_event_synchronize(lc_event *e, char *err);
int lc_sim_event_query(lc_event *e, bool *complete, char *err);
int lc_sim_event_elapsed(lc_event *a, lc_event *b, float *ms, char *err);

#endif
