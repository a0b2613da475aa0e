/*
** ptx: a PTX interpreter for the fake driver (spec/fake/fake_cuda.c), so that
** the kernels NVRTC really compiles run, and are checked, without a GPU.
** Test code only: never installed.
**
** A module is parsed once (ptx_parse), its .global/.const variables are
** given memory by the driver (ptx_var, ptx_bind), and each launch runs every
** block of the grid (ptx_launch): the threads of a block as independent
** contexts that meet at barriers and warp operations, the blocks on worker
** threads. Every global access is checked with the driver (ptx_host.reach),
** as the hardware and a sanitizer would.
*/
#ifndef FAKE_PTX_H
#define FAKE_PTX_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct ptx_module ptx_module;

/* What a launch may end with (the driver's codes, without its header). */
enum {
  PTX_OK = 0,
  PTX_ILLEGAL_ADDRESS = 700,      /* CUDA_ERROR_ILLEGAL_ADDRESS */
  PTX_ASSERT = 710,               /* CUDA_ERROR_ASSERT */
  PTX_MISALIGNED = 716,           /* CUDA_ERROR_MISALIGNED_ADDRESS */
  PTX_STACK_ERROR = 714,          /* CUDA_ERROR_HARDWARE_STACK_ERROR */
  PTX_ILLEGAL_INSTRUCTION = 715,  /* CUDA_ERROR_ILLEGAL_INSTRUCTION */
  PTX_LAUNCH_FAILED = 719,        /* CUDA_ERROR_LAUNCH_FAILED */
};

/* A module-scope variable the driver must place (.global and .const). */
typedef struct ptx_var_info {
  const char *name;
  size_t size, align;
  const unsigned char *init;      /* size bytes, zero when not initialised */
  int nrefs;                      /* initialiser words that hold another variable's address */
} ptx_var_info;

/* Parse text; NULL with a message in err when it is not PTX this
** interpreter can run (an unknown instruction is named). */
ptx_module *ptx_parse(const char *text, char *err, size_t errlen);
void ptx_free(ptx_module *m);

int ptx_nvars(const ptx_module *m);
ptx_var_info ptx_var(const ptx_module *m, int i);
/* Give variable i its memory (initialised by the caller from ptx_var's
** init); once all are bound, initialisers that name a variable's address
** are patched in place by ptx_bind_done. */
void ptx_bind(ptx_module *m, int i, void *addr);
void ptx_bind_done(ptx_module *m);

/* The kernels: index by name, or -1. */
int ptx_entry(const ptx_module *m, const char *name);
int ptx_nentries(const ptx_module *m);
const char *ptx_entry_name(const ptx_module *m, int e);
int ptx_entry_nparams(const ptx_module *m, int e);
void ptx_entry_param(const ptx_module *m, int e, int i, size_t *offset, size_t *size);
size_t ptx_entry_param_bytes(const ptx_module *m, int e);
size_t ptx_entry_static_shared(const ptx_module *m, int e);
int ptx_entry_maxntid(const ptx_module *m, int e);   /* 0: none declared */
size_t ptx_entry_local_bytes(const ptx_module *m, int e);   /* its own frame's .local */
/* The stack a thread of entry e needs, as far as it is known before it runs:
** its frame and the deepest chain of calls (recursion not counted). */
size_t ptx_entry_stack_bytes(const ptx_module *m, int e);
/* The functions (.entry and .func, defined), numbered as entries are:
** the number of name, or -1; how many numbers there are. */
int ptx_function(const ptx_module *m, const char *name);
int ptx_nfunctions(const ptx_module *m);
/* The frames a cubin gives entry e's launches: frames[i] the stack
** function i's frame takes (ptx_nfunctions of them; e's own at e; 0 for
** one inlined), min_stack the stack the kernel needs before it runs.
** Without, the interpreter counts .local variables (exec.c). -1: no memory. */
int ptx_entry_set_frames(ptx_module *m, int e, const size_t *frames, size_t min_stack);
int ptx_uses_printf(const ptx_module *m);   /* does it call vprintf? */

/* What the interpreter asks of its driver. */
typedef struct ptx_host {
  void *ud;
  /* Set [*lo, *hi) to the range around [p, p + n) that a kernel may touch
  ** (a live allocation the device can reach); false when there is none. */
  int (*reach)(void *ud, uint64_t p, size_t n, uint64_t *lo, uint64_t *hi);
  FILE *out;                      /* where printf writes (stdout when NULL), */
  /* unless print is given: then each printf's text goes there, with the
  ** bytes its record takes in the driver's printf FIFO */
  void (*print)(void *ud, const char *text, size_t record);
  size_t stack;                   /* each thread's stack (CU_LIMIT_STACK_SIZE); 0: 1024 */
  /* a cooperative launch: every block runs at once, on a thread of its
  ** own, and %envreg1:%envreg2 give the kernel a grid barrier's workspace
  ** (this_grid().sync()); else they are 0, as cooperative groups expect */
  int cooperative;
} ptx_host;

typedef struct ptx_dims { unsigned x, y, z; } ptx_dims;

/* Run entry e on grid x block with dynamic shared bytes and the parameter
** buffer (ptx_entry_param_bytes long, laid out as ptx_entry_param says).
** Returns PTX_OK or the launch's error, with a description in err. */
int ptx_launch(ptx_module *m, int e, ptx_dims grid, ptx_dims block, size_t dynamic_shared,
               const void *params, const ptx_host *host, char *err, size_t errlen);

/* Instructions run since the process started (for the bench). */
unsigned long long ptx_instructions(void);

#endif
