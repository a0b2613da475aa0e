/*
** env: the numeric LUACUDA_* settings, parsed once per process when the
** backend is chosen. A value that is not a number of the right kind, or is
** out of range, is an error naming the variable and its value, and require
** "luacuda" fails with it (as for LUACUDA_BACKEND): a setting is never
** misread, wrapped or ignored.
*/
#ifndef LUACUDA_ENV_H
#define LUACUDA_ENV_H

#include <stddef.h>

/* the most virtual devices the simulator offers (LUACUDA_SIM_DEVICES) */
#define LC_SIM_MAX_DEVICES 16

typedef struct lc_settings {
  size_t sim_memory;       /* LUACUDA_SIM_MEMORY: bytes; 0 for the machine's memory */
  size_t sim_guard;        /* LUACUDA_SIM_GUARD: the smallest guarded block; SIZE_MAX: off
                           ** (read with LUACUDA_SIM_MEMCHECK=0 only) */
  unsigned sim_memcheck;   /* LUACUDA_SIM_MEMCHECK: 0 off, 1 (the default) every block
                           ** ends at a guard page (16-byte aligned), 2 starts after
                           ** one and shared and local arrays are bounds-checked,
                           ** 3 ends there exactly, at any size (sim/memcheck.c) */
  unsigned sim_threads;    /* LUACUDA_SIM_THREADS: 0 for one per core */
  unsigned sim_devices;    /* LUACUDA_SIM_DEVICES: virtual devices, 1 (the default) to
                           ** LC_SIM_MAX_DEVICES */
  size_t sim_stack;        /* LUACUDA_SIM_STACK: bytes per fiber */
  double sim_timeout;      /* LUACUDA_SIM_TIMEOUT: seconds; 0 for none */
  unsigned nvrtc_check;    /* LUACUDA_NVRTC_CHECK: 0 or 1 (the default): the simulator
                           ** checks its kernels with NVRTC (sim/check.c) */
  unsigned sim_pch;        /* LUACUDA_SIM_PCH: 0 or 1 (the default): the simulator
                           ** precompiles its runtime's headers (sim/pch.c) */
  unsigned strict_async;   /* LUACUDA_STRICT_ASYNC: 0 (the default) or 1: a host access to
                           ** an array that queued work still uses is an error, not a wait */
  unsigned cpu_blas;       /* LUACUDA_CPU_BLAS: 0 or 1 (the default): products the CPU
                           ** computes go to the system's BLAS (base/cpublas.c) */
  size_t cache;            /* LUACUDA_MEMORY_CACHE: bytes of freed memory kept for reuse, per
                           ** device and for host arrays; 0 keeps none; SIZE_MAX (unset):
                           ** a quarter of the device's memory (and of the host's), at
                           ** most 2 GiB (sim/reuse.c, binding/hostcache.c) */
  unsigned verbose;        /* LUACUDA_VERBOSE: 0 (the default) or 1: each compile that misses
                           ** the cache prints a line on stderr (backend/compile_note.c) */
} lc_settings;

/* Read the settings (called once, by the backend's choice): 0, or -1 with
** the cause in err[len]. */
int lc_settings_load(char *err, size_t len);

/* The settings read at load. */
const lc_settings *lc_settings_get(void);

#endif
