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

/* Page-locked host memory (sim_hostmem.c): the record of what the driver
** would have locked. Allocations of LC_PINNED and LC_MAPPED memory enter
** it with their flags; the others are the backend's host_* slots. */
int lc_sim_locked_alloc(void *p, size_t n, unsigned flags, char *err);
void lc_sim_locked_free(void *p);
int lc_sim_host_register(void *p, size_t n, unsigned flags, char *err);
int lc_sim_host_unregister(void *p, char *err);
int lc_sim_host_device_pointer(void *p, void **dev, char *err);
int lc_sim_host_flags(void *p, unsigned *flags, char *err);

#endif
