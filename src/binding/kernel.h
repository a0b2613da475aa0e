/*
** kernel: compiled modules and their kernels as Lua objects (module.c), and
** launching them with checked arguments (launch.c: the configuration, the
** argument checks and packing, the argument buffer).
*/
#ifndef LUACUDA_KERNEL_H
#define LUACUDA_KERNEL_H

#include <stdatomic.h>

#include "array.h"
#include "scan.h"

/* The most name_expressions a compile takes. */
#define LC_MAX_NAMES 64

/* A loaded module, counted: the Lua module object, each kernel object and
** each array over a module global hold a reference; the backend unloads it
** when the last one goes. */
typedef struct lc_modref {
  atomic_int refs;
  const lc_backend *be;
  lc_module *handle;
  int nkernels, nglobals;
  lc_kernel_sig *kernels;      /* signatures (overrides applied) */
  int nnamed;                  /* the kernels named by name_expressions: */
  lc_kernel_sig *named;        /* each its base kernel's signature, named by
                               ** the expression ("sq<int>"), with a
                               ** template's arguments put in */
  lc_global_decl *globals;
  int nstructs;
  lc_struct_def *structs;      /* the structs the source defines, for
                               ** parameters that take one by value */
  char name[256];
  int device;                  /* 0-based: the device current at compile, where it is loaded */
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

/* Launch k (launch.c): the configuration at cfgidx (Numba's {grid, block
** [, stream [, shared]]} or {grid=, block=, stream=, shared=}), the nargs
** arguments from stack index first, checked against k's parameters and
** packed into the argument buffer; queued, as in CUDA (without a stream,
** on the default one). */
void lc_kernel_launch(lua_State *L, lc_kernel_ref *k, int cfgidx, int first, int nargs);

#endif
