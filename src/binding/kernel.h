/*
** kernel: compiled modules and their kernels as Lua objects (module.c), and
** launching them with checked arguments (launch.c).
*/
#ifndef LUACUDA_KERNEL_H
#define LUACUDA_KERNEL_H

#include <stdatomic.h>

#include "array.h"
#include "scan.h"

/* A loaded module, counted: the Lua module object, each kernel object and
** each array over a module global hold a reference; the backend unloads it
** when the last one goes. */
typedef struct lc_modref {
  atomic_int refs;
  const lc_backend *be;
  lc_module *handle;
  int nkernels, nglobals;
  lc_kernel_sig *kernels;      /* signatures (overrides applied) */
  lc_global_decl *globals;
  char name[256];
} lc_modref;

/* A Lua object's reference to a module (the Module object, each Kernel):
** let go of by __gc, or by close through the gate. First in the object. */
typedef struct lc_modhold {
  lc_modref *mod;              /* NULL once let go of */
  bool closed;                 /* by close or <close>: reads as closed at once */
  bool closing;                /* closed while a call ran: mod goes later (gate.h) */
} lc_modhold;

/* A kernel: its module, its signature and the backend's function. */
typedef struct lc_kernel_ref {
  lc_modhold hold;
  const lc_kernel_sig *sig;
  lc_function *fn;
} lc_kernel_ref;

/* Read the launch configuration at idx: Numba's {grid, block [, stream
** [, shared]]} or {grid=, block=, stream=, shared=}. Pushes the stream
** object (or nil), which the launch keeps on its stack while it uses it. */
void lc_launch_config(lua_State *L, int idx, lc_launch *cfg, const lc_kernel_ref *k,
                      const char *fname);

/* Check that nargs is k's parameter count, then push, for each of the
** arguments from stack index first, the value the kernel is given: the
** argument itself, or the array a stand-in's __kernel_arg metamethod gives
** (SmartArray). Every metamethod a launch runs runs here, before anything
** is packed. */
void lc_resolve_args(lua_State *L, int first, int nargs, const lc_kernel_ref *k,
                     const char *fname);

/* Check the values from stack index first (lc_resolve_args's, one per
** parameter) against k's parameters and pack them into buf, args[i]
** pointing at each. Returns bytes used. */
size_t lc_pack_args(lua_State *L, int first, const lc_kernel_ref *k, char *buf,
                    size_t buflen, void **args, const char *fname);

#endif
