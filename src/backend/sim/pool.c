/*
** pool: the simulator's worker threads, one per core (or
** LUACUDA_SIM_THREADS), started at the first launch and kept. A launch
** hands out its blocks in chunks through an atomic counter; a block runs
** entirely on one worker, which owns its dynamic shared memory and the
** fiber stacks its blocks need. One launch runs at a time.
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
*/
#define _GNU_SOURCE       /* MAP_ANONYMOUS, MAP_NORESERVE, pthread_getattr_np */
#include "sim.h"

#include <errno.h>
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
  lc_sim_fault fault;        /* where a fault in its kernel code lands */
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
static unsigned nworkers;
static worker *workers;
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER;   /* one launch at a time */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
static unsigned long generation;
static unsigned running;
/* the current launch */
static lc_sim_block_fn cur_fn;
static uintptr_t cur_code_lo, cur_code_hi;   /* cur_fn's module's code */
static const lc_sim_launch *cur_launch;
static uint64_t cur_total, cur_chunk;
static atomic_uint_fast64_t cur_next;
static bool cur_failed;
static char cur_error[LC_SIM_ERRLEN];

/* The runtime's request for n fiber stacks. They are laid out one stack
** plus one guard page apart: the guard turns an overflow into a fault, and
** the odd spacing keeps the stack tops out of each other's TLB sets. */
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
    char *base = me->region + me->stride * me->nstacks + page;
    if (mprotect(base, lw->stack_size, PROT_READ | PROT_WRITE) != 0) {
      snprintf(lw->error, LC_SIM_ERRLEN, "cannot make fiber stacks: %s", strerror(errno));
      return NULL;
    }
    LC_SIM_STACK(base, base + lw->stack_size);
    me->stack[me->nstacks++] = base;
  }
  return me->stack;
}

/* Record the launch's first failure and hand out no more blocks. */
static void fail_launch(worker *me, uint64_t total) {
  pthread_mutex_lock(&lock);
  if (!cur_failed) {
    cur_failed = true;
    memcpy(cur_error, me->w.error, LC_SIM_ERRLEN);
  }
  pthread_mutex_unlock(&lock);
  atomic_store(&cur_next, total);
}

/* A fault in kernel code as the launch's error. */
static void describe_fault(worker *me) {
  char cause[LC_SIM_ERRLEN - 64];     /* room for the block */
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
  else
    lc_sim_fault_describe(f, cause, sizeof cause);
  snprintf(me->w.error, LC_SIM_ERRLEN, "%.440s in block (%u, %u, %u)", cause,
           me->block.x, me->block.y, me->block.z);
}

/* Run blocks until none is left. A fault in a kernel resumes at the
** sigsetjmp, once per launch rather than per block: saving the signal
** mask there would cost a system call, so recover() unblocks instead. */
static void run_blocks(worker *me, lc_sim_block_fn fn, const lc_sim_launch *l,
                       uint64_t total, uint64_t chunk) {
  if (sigsetjmp(me->fault.jump, 0)) {
    lc_sim_fault_recover(&me->fault);
    describe_fault(me);
    fail_launch(me, total);
    return;
  }
  uint64_t gx = l->grid.x, gxy = (uint64_t)l->grid.x * l->grid.y;
  for (;;) {
    uint64_t first = atomic_fetch_add(&cur_next, chunk);
    if (first >= total) break;
    uint64_t last = first + chunk < total ? first + chunk : total;
    for (uint64_t b = first; b < last; b++) {
      lc_sim_dim bid = {(unsigned)(b % gx), (unsigned)(b % gxy / gx), (unsigned)(b / gxy)};
      me->block = bid;
      me->fault.armed = 1;
      int rc = fn(l, &me->w, bid);
      me->fault.armed = 0;
      if (rc != 0) {
        fail_launch(me, total);
        return;
      }
    }
  }
}

static void *worker_main(void *arg) {
  worker *me = arg;
  unsigned long seen = 0;
  char err[LC_ERRLEN];
  /* without a handler a fault still crashes, as it did before; say why */
  if (lc_sim_fault_thread(&me->fault, err) != LC_OK) fprintf(stderr, "luacuda: %s\n", err);
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
  for (;;) {
    pthread_mutex_lock(&lock);
    while (generation == seen) pthread_cond_wait(&go, &lock);
    seen = generation;
    lc_sim_block_fn fn = cur_fn;
    const lc_sim_launch *l = cur_launch;
    uint64_t total = cur_total, chunk = cur_chunk;
    me->fault.stop = 0;
    me->fault.code_lo = cur_code_lo;
    me->fault.code_hi = cur_code_hi;
    pthread_mutex_unlock(&lock);
    run_blocks(me, fn, l, total, chunk);
    pthread_mutex_lock(&lock);
    if (--running == 0) pthread_cond_signal(&done);
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

static void start_pool(void) {
  const lc_settings *s = lc_settings_get();
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  nworkers = s->sim_threads ? s->sim_threads : cores > 0 ? (unsigned)cores : 1;
  if (nworkers > 256) nworkers = 256;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t stack = (s->sim_stack + page - 1) / page * page;   /* at most 1 GiB: no wrap */
  timeout = s->sim_timeout;
  /* the watchdog's deadline must not move with the wall clock */
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&done, &ca);
  pthread_condattr_destroy(&ca);
  workers = calloc(nworkers, sizeof *workers);
  if (workers == NULL) {
    init_error = "out of memory starting the simulator's workers";
    return;
  }
  for (unsigned i = 0; i < nworkers; i++) {
    worker *me = &workers[i];
    me->w.dynamic_shared = aligned_alloc(64, LC_MAX_SHARED);
    me->w.stacks = worker_stacks;
    me->w.stack_size = stack;
    me->w.core = me;
    if (me->w.dynamic_shared == NULL ||
        pthread_create(&me->thread, NULL, worker_main, me) != 0) {
      init_error = "cannot start the simulator's worker threads";
      nworkers = i;      /* those started stay, idle */
      return;
    }
  }
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
  while (running > 0) {
    for (unsigned i = 0; i < nworkers; i++)
      if (workers[i].fault.armed) lc_sim_fault_stop(&workers[i].fault);
    deadline = after(0.01);
    pthread_cond_timedwait(&done, &lock, &deadline);
  }
}

int lc_sim_run(lc_sim_block_fn fn, const lc_sim_launch *l, char *err) {
  pthread_once(&once, start_pool);
  if (init_error) {
    snprintf(err, LC_ERRLEN, "%s", init_error);
    return LC_EFAIL;
  }
  uint64_t total = (uint64_t)l->grid.x * l->grid.y * l->grid.z;
  pthread_mutex_lock(&run_lock);
  if (timeout > 0) {                     /* where the watchdog may stop it */
    uintptr_t addr;
    memcpy(&addr, &fn, sizeof addr);
    lc_sim_code_range(addr, &cur_code_lo, &cur_code_hi);
  }
  pthread_mutex_lock(&lock);
  cur_fn = fn;
  cur_launch = l;
  cur_total = total;
  /* enough chunks to balance the load, few enough to keep the counter cool */
  cur_chunk = total / (nworkers * 16u) + 1;
  atomic_store(&cur_next, 0);
  cur_failed = false;
  running = nworkers;
  generation++;
  pthread_cond_broadcast(&go);
  if (timeout > 0) watch(total);
  while (running > 0) pthread_cond_wait(&done, &lock);
  bool failed = cur_failed;
  if (failed) snprintf(err, LC_ERRLEN, "%s", cur_error);
  pthread_mutex_unlock(&lock);
  pthread_mutex_unlock(&run_lock);
  return failed ? LC_EFAIL : LC_OK;
}
