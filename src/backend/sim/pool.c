/*
** pool: the simulator's worker threads, one per core (or
** LUACUDA_SIM_THREADS), started at the first launch and kept. A launch
** hands out its blocks in chunks through an atomic counter; a block runs
** entirely on one worker, which owns its dynamic shared memory and the
** fiber stacks its blocks need. One launch runs at a time. The thread that
** launches (the stream executor) is one of the workers: a small launch
** runs on it alone, with no thread woken (run_with_self).
**
** A fault in a kernel (fault.c) ends its launch with an error and
** leaves the pool as it was: the worker resumes in its block loop, the
** block's frames and fibers are abandoned (the fiber stacks are reused as
** they are by the next block), and no other block of that launch starts.
** The simulator is not poisoned afterwards, unlike a CUDA context after
** CUDA_ERROR_ILLEGAL_ADDRESS: the faulting access itself never happened,
** and one backend serves every lua_State of the process, so a poisoned one
** would take down states that did nothing wrong. Writes a kernel made
** before it faulted stay, as they would on a GPU.
**
** LUACUDA_SIM_TIMEOUT (seconds, default none) is a watchdog: a launch still
** running after it is stopped by signalling the workers running it.
**
** A cooperative launch runs every block at once, each on a worker of its
** own: the pool grows to as many workers as the grid has blocks (up to
** LC_SIM_COOP_MAX), the workers past the first ones waiting for
** cooperative launches only. this_grid().sync() is the grid barrier here
** (lc_sim_grid_sync), which one thread of each block waits at; a block
** that returns while others wait there, or fails, breaks it.
*/
#define _GNU_SOURCE       /* MAP_ANONYMOUS, MAP_NORESERVE, pthread_getattr_np */
#include "sim.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "env.h"


/* a stack for each thread of the largest block (kernels/abi.h) */
#define MAX_FIBERS LC_MAX_BLOCK_THREADS

typedef struct worker {
  lc_sim_worker w;           /* what the runtime sees */
  unsigned index;            /* in workers[] */
  unsigned long seen;        /* the last launch it saw */
  lc_sim_fault fault;        /* where a fault in its kernel code lands */
  bool unprotected;          /* fault handling could not be set up: it runs no kernel */
  char setup_error[LC_ERRLEN];
  lc_sim_dim block;          /* the block it runs, for a fault's message */
  pthread_t thread;
  char *own_stack;           /* the thread's own stack (its lowest byte), where thread */
  size_t own_size, own_guard;  /* 0 of a block runs, and its guard below it */
  char *region;              /* room for MAX_FIBERS stacks, each over a guard page */
  size_t stride;             /* stack size plus its guard page */
  unsigned nstacks;          /* how many are usable */
  void *stack[MAX_FIBERS];
} worker;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *init_error;
static double timeout;       /* LUACUDA_SIM_TIMEOUT in seconds; 0: none */
static unsigned nworkers;    /* those every launch uses */
static unsigned nstarted;    /* those started: more after a large cooperative launch */
static size_t stack_bytes;   /* each fiber's stack */
static worker *workers;      /* room for LC_SIM_COOP_MAX, or nworkers if more */
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER;   /* one launch at a time */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* go wakes the first nworkers workers, go_extra the others */
static pthread_cond_t go = PTHREAD_COND_INITIALIZER, go_extra = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;
static unsigned long generation;
static unsigned running, participants;
/* the current launch */
static lc_sim_block_fn cur_fn;
static uintptr_t cur_code_lo, cur_code_hi;   /* cur_fn's module's code */
static const lc_sim_launch *cur_launch;
static uint64_t cur_total, cur_chunk;
static atomic_uint_fast64_t cur_next;
static bool cur_failed;
static char cur_error[LC_SIM_ERRLEN];
static bool cur_coop;

/* The grid barrier of a cooperative launch. */
static pthread_mutex_t grid_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t grid_cv = PTHREAD_COND_INITIALIZER;
static uint64_t grid_total, grid_arrived, grid_exited;
static unsigned long grid_round;     /* barriers completed */
static bool grid_broken;             /* it can complete no more */
static char grid_why[LC_SIM_ERRLEN]; /* why, for the blocks waiting there */

/* Break the grid barrier (under grid_mu), with why unless it has a reason
** already: every block waiting there fails. */
static void break_grid(const char *why) {
  if (!grid_broken) {
    grid_broken = true;
    if (grid_why[0] == '\0') snprintf(grid_why, sizeof grid_why, "%s", why);
    pthread_cond_broadcast(&grid_cv);
  }
}

int lc_sim_grid_sync(const lc_sim_launch *l, lc_sim_worker *w) {
  (void)l;
  pthread_mutex_lock(&grid_mu);
  if (grid_exited > 0)
    break_grid("this_grid().sync() never completes: a block of the grid returned without "
               "reaching it");
  if (!grid_broken) {
    unsigned long round = grid_round;
    if (++grid_arrived == grid_total) {     /* the last block releases the others */
      grid_arrived = 0;
      grid_round++;
      pthread_cond_broadcast(&grid_cv);
    }
    while (round == grid_round && !grid_broken) pthread_cond_wait(&grid_cv, &grid_mu);
    if (round != grid_round) {
      pthread_mutex_unlock(&grid_mu);
      return 0;
    }
  }
  snprintf(w->error, LC_SIM_ERRLEN, "%s", grid_why);
  pthread_mutex_unlock(&grid_mu);
  return -1;
}

/* A block of a cooperative launch returned: the blocks waiting at the grid
** barrier, if any, wait for good. Whether it broke the barrier (then its
** message is in me's error). */
static bool grid_exit(worker *me) {
  pthread_mutex_lock(&grid_mu);
  grid_exited++;
  bool breaks = grid_arrived > 0 && !grid_broken;
  if (breaks) {
    snprintf(me->w.error, LC_SIM_ERRLEN, "this_grid().sync() never completes: block "
             "(%u, %u, %u) returned without reaching it while other blocks wait there",
             me->block.x, me->block.y, me->block.z);
    break_grid(me->w.error);       /* grid_why is empty: no alias */
  }
  pthread_mutex_unlock(&grid_mu);
  return breaks;
}

/* The runtime's request for n fiber stacks. They are laid out one stack
** plus one guard page apart: the guard turns an overflow into a fault, and
** the odd spacing keeps the stack tops out of each other's TLB sets. Each
** stack is made accessible with the guard below it, which is then guarded
** again: in the page tables where Linux can, so that a worker's stacks
** stay one mapping (with mprotect, two mappings a stack: a cooperative
** launch of 1024 blocks of 32 threads would pass vm.max_map_count). */
static void **worker_stacks(lc_sim_worker *lw, unsigned n) {
  worker *me = (worker *)lw;
  if (n > MAX_FIBERS) {
    snprintf(lw->error, LC_SIM_ERRLEN, "a block of %u threads needs more than %u fibers",
             n, MAX_FIBERS);
    return NULL;
  }
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (me->region == NULL) {
    me->stride = lw->stack_size + page;
    void *r = mmap(NULL, me->stride * MAX_FIBERS, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) {
      snprintf(lw->error, LC_SIM_ERRLEN, "cannot reserve fiber stacks: %s", strerror(errno));
      return NULL;
    }
    me->region = r;
  }
  while (me->nstacks < n) {
    char *guard = me->region + me->stride * me->nstacks, *base = guard + page;
    if (mprotect(guard, me->stride, PROT_READ | PROT_WRITE) != 0 ||
        !lc_sim_guard_page(guard, page)) {
      snprintf(lw->error, LC_SIM_ERRLEN, "cannot make fiber stacks: %s", strerror(errno));
      return NULL;
    }
    LC_SIM_STACK(base, base + lw->stack_size);
    me->stack[me->nstacks++] = base;
  }
  return me->stack;
}

/* Record the launch's first failure and hand out no more blocks (the
** blocks of a cooperative launch waiting at the grid barrier fail too). */
static void fail_launch(worker *me, uint64_t total) {
  pthread_mutex_lock(&lock);
  if (!cur_failed) {
    cur_failed = true;
    memcpy(cur_error, me->w.error, LC_SIM_ERRLEN);
  }
  bool coop = cur_coop;
  pthread_mutex_unlock(&lock);
  atomic_store(&cur_next, total);
  if (coop) {
    pthread_mutex_lock(&grid_mu);
    break_grid("this_grid().sync() never completes: another block of the grid failed");
    pthread_mutex_unlock(&grid_mu);
  }
}

/* A fault in kernel code as the launch's error: the cause, the block and
** thread, and for an access in a guard page the array it ran past. */
static void describe_fault(worker *me, const lc_sim_launch *l) {
  char cause[LC_SIM_ERRLEN - 64];     /* room for the block and thread */
  char where[300] = "";
  const lc_sim_fault *f = &me->fault;
  const char *addr = f->addr;
  if (f->signo == LC_SIM_STOP_SIGNAL)
    snprintf(cause, sizeof cause, "stopped by the watchdog after running longer than "
             "LUACUDA_SIM_TIMEOUT (%g s)", timeout);
  else if (f->signo == SIGSEGV && me->region && addr >= me->region &&
           addr < me->region + me->stride * MAX_FIBERS)
    snprintf(cause, sizeof cause, "stack overflow in a GPU thread (SIGSEGV; each thread "
             "has %zu bytes of stack, LUACUDA_SIM_STACK)", me->w.stack_size);
  else if (f->signo == SIGSEGV && me->own_stack && addr < me->own_stack &&
           addr >= me->own_stack - me->own_guard)
    snprintf(cause, sizeof cause, "stack overflow in a GPU thread (SIGSEGV; its frame needs "
             "more than the %zu bytes of stack the worker running it has)", me->own_size);
  else {
    lc_sim_fault_describe(f, cause, sizeof cause);
    char past[sizeof where - 2];
    if ((f->signo == SIGSEGV || f->signo == SIGBUS) && addr &&
        lc_sim_memcheck_explain(addr, past, sizeof past))
      snprintf(where, sizeof where, ": %s", past);
  }
  char line[200] = "", at[sizeof line + 8] = "";
  if (f->signo != LC_SIM_STOP_SIGNAL && lc_sim_lines_of(f->pc, line, sizeof line)) snprintf(at, sizeof at, " at %s", line);
  char thread[64] = "";
  unsigned t = f->thread, bx = l->block.x, by = l->block.y;
  if (t != UINT_MAX && f->signo != LC_SIM_STOP_SIGNAL && t < bx * by * l->block.z)
    snprintf(thread, sizeof thread, ", thread (%u, %u, %u)", t % bx, t / bx % by, t / (bx * by));
  snprintf(me->w.error, LC_SIM_ERRLEN, "%.200s%s in block (%u, %u, %u)%s%.280s", cause, at,
           me->block.x, me->block.y, me->block.z, thread, where);
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Run blocks until none is left; with until > 0, only until that time
** (seconds_now) has passed: then returns true when blocks are left. A
** fault in a kernel resumes at the sigsetjmp, once per launch rather than
** per block: saving the signal mask there would cost a system call, so
** recover() unblocks instead. */
static bool run_blocks(worker *me, lc_sim_block_fn fn, const lc_sim_launch *l,
                       uint64_t total, uint64_t chunk, bool coop, double until) {
  if (me->unprotected) {      /* a fault in its kernel would end the process */
    if (atomic_load(&cur_next) >= total) return false;
    snprintf(me->w.error, LC_SIM_ERRLEN, "%s", me->setup_error);
    fail_launch(me, total);
    return false;
  }
  if (sigsetjmp(me->fault.jump, 0)) {
    lc_sim_fault_recover(&me->fault);
    describe_fault(me, l);
    fail_launch(me, total);
    return false;
  }
  uint64_t gx = l->grid.x, gxy = (uint64_t)l->grid.x * l->grid.y;
  for (;;) {
    if (until > 0 && seconds_now() > until) return atomic_load(&cur_next) < total;
    uint64_t first = atomic_fetch_add(&cur_next, chunk);
    if (first >= total) break;
    uint64_t last = first + chunk < total ? first + chunk : total;
    for (uint64_t b = first; b < last; b++) {
      lc_sim_dim bid = {(unsigned)(b % gx), (unsigned)(b % gxy / gx), (unsigned)(b / gxy)};
      me->block = bid;
      me->w.thread = NULL;          /* until the module says */
      me->fault.armed = 1;
      int rc = fn(l, &me->w, bid);
      me->fault.armed = 0;
      if (rc != 0 || (coop && grid_exit(me))) {
        fail_launch(me, total);
        return false;
      }
    }
  }
  return false;
}

/* On the thread that will run blocks as me: its fault handling and where
** its own stack lies. Without fault handling it runs no kernel (a fault
** there would end the process): false. */
static bool worker_setup(worker *me) {
  char err[LC_ERRLEN];
  if (lc_sim_fault_thread(&me->fault, err) != LC_OK) {
    me->unprotected = true;
    snprintf(me->setup_error, sizeof me->setup_error, "a worker thread cannot run kernels: "
             "%.400s", err);
    return false;
  }
  me->fault.thread_slot = &me->w.thread;
  /* kernels are built with stack-clash protection, so a frame larger than
  ** the stack probes its way into the guard below it (not past it, into
  ** other memory): where that is, for the message */
  pthread_attr_t attr;
  void *lo;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    if (pthread_attr_getstack(&attr, &lo, &me->own_size) == 0 &&
        pthread_attr_getguardsize(&attr, &me->own_guard) == 0) {
      me->own_stack = lo;
      LC_SIM_STACK(me->own_stack, me->own_stack + me->own_size);
    }
    pthread_attr_destroy(&attr);
  }
  return true;
}

static void *worker_main(void *arg) {
  worker *me = arg;
  worker_setup(me);          /* when it fails, me->unprotected says so */
  pthread_cond_t *wake = me->index < nworkers ? &go : &go_extra;
  for (;;) {
    pthread_mutex_lock(&lock);
    do {                      /* a launch that takes this worker */
      while (generation == me->seen) pthread_cond_wait(wake, &lock);
      me->seen = generation;
    } while (me->index >= participants);
    lc_sim_block_fn fn = cur_fn;
    const lc_sim_launch *l = cur_launch;
    uint64_t total = cur_total, chunk = cur_chunk;
    bool coop = cur_coop;
    me->fault.stop = 0;
    me->fault.code_lo = cur_code_lo;
    me->fault.code_hi = cur_code_hi;
    pthread_mutex_unlock(&lock);
    run_blocks(me, fn, l, total, chunk, coop, 0);
    pthread_mutex_lock(&lock);
    if (--running == 0) pthread_cond_signal(&done);
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

/* Worker me's memory: its dynamic shared memory, its fiber stacks later. */
static bool worker_init(worker *me) {
  me->w.dynamic_shared = aligned_alloc(64, LC_MAX_SHARED);
  me->w.stacks = worker_stacks;
  me->w.stack_size = stack_bytes;
  me->w.core = me;
  return me->w.dynamic_shared != NULL;
}

/* Start worker i (under run_lock, with no launch running). */
static bool start_worker(unsigned i) {
  worker *me = &workers[i];
  me->index = i;
  me->seen = generation;
  if (!worker_init(me)) return false;
  if (pthread_create(&me->thread, NULL, worker_main, me) != 0) {
    free(me->w.dynamic_shared);
    me->w.dynamic_shared = NULL;
    return false;
  }
  nstarted = i + 1;
  return true;
}

static void start_pool(void) {
  const lc_settings *s = lc_settings_get();
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  nworkers = s->sim_threads ? s->sim_threads : cores > 0 ? (unsigned)cores : 1;
  if (nworkers > 256) nworkers = 256;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  stack_bytes = (s->sim_stack + page - 1) / page * page;   /* at most 1 GiB: no wrap */
  timeout = s->sim_timeout;
  /* the watchdog's deadline must not move with the wall clock */
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&done, &ca);
  pthread_condattr_destroy(&ca);
  /* the room of the largest cooperative launch: untouched until used */
  workers = calloc(nworkers > LC_SIM_COOP_MAX ? nworkers : LC_SIM_COOP_MAX, sizeof *workers);
  if (workers == NULL) {
    init_error = "out of memory starting the simulator's workers";
    return;
  }
  for (unsigned i = 0; i < nworkers; i++)
    if (!start_worker(i)) {
      init_error = "cannot start the simulator's worker threads";
      nworkers = i;      /* those started stay, idle */
      return;
    }
}

/* Workers enough for a cooperative launch of n blocks (under run_lock). */
static int grow_pool(uint64_t n, char *err) {
  while (nstarted < n) {
    pthread_mutex_lock(&lock);
    bool ok = start_worker(nstarted);
    pthread_mutex_unlock(&lock);
    if (!ok) {
      return lc_fail(err, LC_EFAIL, "cannot start a worker thread for each of the %llu blocks of a "
                     "cooperative launch (%u started)", (unsigned long long)n, nstarted);
    }
  }
  return LC_OK;
}

static struct timespec after(double seconds) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  long long ns = t.tv_nsec + (long long)(seconds * 1e9);
  t.tv_sec += (time_t)(ns / 1000000000);
  t.tv_nsec = (long)(ns % 1000000000);
  return t;
}

/* The watchdog (the launching thread, holding lock): wait for the launch
** until the timeout, then stop it. Fibers cannot be preempted, so each
** worker still in kernel code is signalled, again every 10 ms: a worker
** that fetched a block just before the stop may enter it just after. */
static void watch(uint64_t total) {
  struct timespec deadline = after(timeout);
  while (running > 0 && pthread_cond_timedwait(&done, &lock, &deadline) != ETIMEDOUT) {}
  if (running == 0) return;
  atomic_store(&cur_next, total);       /* no more blocks */
  if (cur_coop) {                       /* blocks waiting at the grid barrier */
    char why[LC_SIM_ERRLEN];
    snprintf(why, sizeof why, "stopped by the watchdog after running longer than "
             "LUACUDA_SIM_TIMEOUT (%g s), waiting in this_grid().sync()", timeout);
    pthread_mutex_lock(&grid_mu);
    break_grid(why);
    pthread_mutex_unlock(&grid_mu);
  }
  while (running > 0) {
    for (unsigned i = 0; i < nstarted; i++)
      if (workers[i].fault.armed) lc_sim_fault_stop(&workers[i].fault);
    deadline = after(0.01);
    pthread_cond_timedwait(&done, &lock, &deadline);
  }
}

/* The launching thread (the stream executor) as a worker of its own, set
** up at its first launch (NULL: it could not be; then the pool runs
** every block, as under the watchdog). */
static _Thread_local worker *self_worker;
static _Thread_local bool self_tried;

static worker *launching_worker(void) {
  if (self_tried) return self_worker;
  self_tried = true;
  worker *me = calloc(1, sizeof *me);
  if (me == NULL) return NULL;
  me->index = UINT32_MAX;
  if (!worker_init(me)) {
    free(me);
    return NULL;
  }
  if (!worker_setup(me)) {   /* the pool runs every block */
    free(me->w.dynamic_shared);
    free(me);
    return NULL;
  }
  return self_worker = me;
}

/* The launching thread runs blocks too, as one of the pool's nworkers
** threads (one worker fewer is woken). A launch whose blocks all run
** within HERE_SECONDS runs on it alone: waking a worker and waiting for it
** would cost more than such a launch takes (a small launch costs a few
** microseconds so). The time a block of each kernel took last is kept
** (by its function's address, a hint only), to tell such launches at
** once; others start here, and wake the pool when the time is up. Not
** under the watchdog, which needs the launching thread free to stop a
** kernel, nor for a cooperative launch (a worker for each block). */
#define HERE_SECONDS 50e-6
enum { HINTS = 64 };
static struct { lc_sim_block_fn fn; double block; } hints[HINTS];   /* under run_lock */

static size_t hint_slot(lc_sim_block_fn fn) {
  uintptr_t a;
  memcpy(&a, &fn, sizeof a);
  return (a >> 4) % HINTS;
}

/* Run the launch set up in cur_* on me (the launching thread), and on the
** pool too unless the kernel's hint or its first blocks show it is small.
** Blocks start in order, as on the pool. Returns with lock held. */
static void run_with_self(worker *me, lc_sim_block_fn fn, const lc_sim_launch *l,
                          uint64_t total) {
  size_t h = hint_slot(fn);
  bool known = hints[h].fn == fn;
  double start = seconds_now();
  bool more;                     /* blocks left for the pool */
  if (total == 1 || (known && hints[h].block * (double)total <= HERE_SECONDS))
    more = run_blocks(me, fn, l, total, 1, false, 0);
  else if (known)
    more = true;
  else
    more = run_blocks(me, fn, l, total, 1, false, start + HERE_SECONDS);
  pthread_mutex_lock(&lock);
  bool pool = more && !cur_failed && nworkers > 1;
  if (pool) {
    participants = nworkers - 1;
    running = participants;
    generation++;
    pthread_cond_broadcast(&go);
  }
  pthread_mutex_unlock(&lock);
  if (more) run_blocks(me, fn, l, total, pool ? cur_chunk : 1, false, 0);
  pthread_mutex_lock(&lock);
  while (running > 0) pthread_cond_wait(&done, &lock);
  /* the hint: the time a block takes one thread, the pool's share included */
  hints[h].fn = fn;
  hints[h].block = (seconds_now() - start) * (pool ? nworkers : 1) / (double)total;
}

/* The launch is over (lock and run_lock held): its result. */
static int finish(char *err) {
  bool failed = cur_failed;
  if (failed) lc_errf(err, "%s", cur_error);
  pthread_mutex_unlock(&lock);
  pthread_mutex_unlock(&run_lock);
  return failed ? LC_EFAIL : LC_OK;
}

int lc_sim_run(lc_sim_block_fn fn, const lc_sim_launch *l, char *err) {
  pthread_once(&once, start_pool);
  if (init_error) {
    return lc_fail(err, LC_EFAIL, "%s", init_error);
  }
  uint64_t total = (uint64_t)l->grid.x * l->grid.y * l->grid.z;
  bool coop = l->cooperative != 0;
  worker *self = !coop && timeout == 0 ? launching_worker() : NULL;
  pthread_mutex_lock(&run_lock);
  if (coop && grow_pool(total, err) != LC_OK) {
    pthread_mutex_unlock(&run_lock);
    return LC_EFAIL;
  }
  if (coop) {
    pthread_mutex_lock(&grid_mu);
    grid_total = total;
    grid_arrived = grid_exited = 0;
    grid_broken = false;
    grid_why[0] = '\0';
    pthread_mutex_unlock(&grid_mu);
  }
  if (timeout > 0) {                     /* where the watchdog may stop it */
    uintptr_t addr;
    memcpy(&addr, &fn, sizeof addr);
    lc_sim_code_range(addr, &cur_code_lo, &cur_code_hi);
  }
  pthread_mutex_lock(&lock);
  cur_fn = fn;
  cur_launch = l;
  cur_total = total;
  /* enough chunks to balance the load, few enough to keep the counter cool;
  ** a cooperative launch's blocks one by one, each on a worker of its own */
  cur_chunk = coop ? 1 : total / (nworkers * 16u) + 1;
  atomic_store(&cur_next, 0);
  cur_failed = false;
  cur_coop = coop;
  if (self) {
    pthread_mutex_unlock(&lock);
    run_with_self(self, fn, l, total);
    return finish(err);
  }
  participants = coop && total > nworkers ? (unsigned)total : nworkers;
  running = participants;
  generation++;
  pthread_cond_broadcast(&go);
  if (participants > nworkers) pthread_cond_broadcast(&go_extra);
  if (timeout > 0) watch(total);
  while (running > 0) pthread_cond_wait(&done, &lock);
  return finish(err);
}
