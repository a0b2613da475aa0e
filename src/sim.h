/*
** sim: what the simulator's files share: compiling a kernel module with the
** host compiler, and running a launch's blocks on the worker threads.
*/
#ifndef LUACUDA_SIM_H
#define LUACUDA_SIM_H

#include "backend.h"
#include "scan.h"
#include "../kernels/sim_abi.h"

/* The embedded headers compiled into every module (embed.c). */
extern const char lc_sim_abi_source[];
extern const char lc_sim_runtime_source[];

/* Compile src into a shared object and dlopen it. On a compile error the
** compiler's output comes back in *log (malloc'd). */
int lc_sim_compile(const lc_source *src, void **handle, char **log, char *err);

/* Run every block of a launch of fn on the worker threads and wait for
** them; the first failing block's message comes back in err. */
int lc_sim_run(lc_sim_block_fn fn, const lc_sim_launch *l, char *err);

#endif
