/* sim_abi.h: the C interface between luacuda's core and a kernel module
** compiled for the simulator. Included by src/backend/sim/sim.h and, as
** text, at the top of every simulated kernel module; both sides check
** LC_SIM_ABI when a module is loaded. */
#ifndef LUACUDA_SIM_ABI_H
#define LUACUDA_SIM_ABI_H

#include <stddef.h>

/* the launch limits and Array<T, N>: as text, built in just before this
** file (src/backend/sim/compile.c) */
#ifndef LUACUDA_ABI_H
#include "abi.h"
#endif

#define LC_SIM_ABI 4
#define LC_SIM_ERRLEN 512

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lc_sim_dim { unsigned x, y, z; } lc_sim_dim;

struct lc_sim_worker;

/* One launch, shared by every block. */
typedef struct lc_sim_launch {
  lc_sim_dim grid, block;
  void **args;                 /* one pointer per parameter, to its value */
  unsigned dynamic_shared;     /* bytes of dynamic shared memory */
  /* a cooperative launch: every block runs at once, each on a worker of
  ** its own, and grid_sync (this_grid().sync(), called by one thread of a
  ** block once all its threads arrived) waits for every block of the
  ** grid; 0, or -1 with w->error set when it never can */
  int cooperative;
  int (*grid_sync)(const struct lc_sim_launch *l, struct lc_sim_worker *w);
} lc_sim_launch;

/* One worker thread of the core; a block runs entirely on one worker. */
typedef struct lc_sim_worker {
  unsigned char *dynamic_shared;   /* LC_MAX_SHARED bytes, 16-aligned */
  /* n fiber stacks of stack_size bytes each (lowest addresses), or NULL
  ** with error set; the core keeps them for later blocks */
  void **(*stacks)(struct lc_sim_worker *w, unsigned n);
  size_t stack_size;
  char error[LC_SIM_ERRLEN];       /* why a block failed */
  void *core;                      /* the core's own state */
  /* the linear index of the thread running now, in the block the module
  ** runs (set at each block): the core reads it when that thread faults */
  const unsigned *thread;
} lc_sim_worker;

/* Every module exports, for each kernel K:
**   int __lc_block_K(const lc_sim_launch *, lc_sim_worker *, lc_sim_dim block)
**     runs one block; 0, or -1 with w->error set;
**   const long long __lc_sizes_K[]: the size of each parameter, then -1;
** and int __lc_sim_abi(void), returning LC_SIM_ABI. A kernel found by a
** name expression (C++ linkage: "saxpy", "sq<int>") is the K
** LC_SIM_NAMED_PREFIX followed by its place i in the module's table
** LC_SIM_NAMED_TABLE, a NULL-terminated array of the expressions. */
#define LC_SIM_NAMED_PREFIX "__lc_named_"
#define LC_SIM_NAMED_TABLE "__lc_named"
typedef int (*lc_sim_block_fn)(const lc_sim_launch *, lc_sim_worker *, lc_sim_dim);

#ifdef __cplusplus
}
#endif

#endif
