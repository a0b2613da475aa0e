/*
** kernel: compiled modules and their kernels as Lua objects, and launching
** them with checked arguments. module.c: compile, the counted module and
** the Module object; name_expr.c: compile's name_expressions; kernel.c:
** the Kernel object; launch.c: the configuration, the argument checks and
** packing, the argument buffer.
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

/* ---- the counted module and the objects holding it (module.c) ---- */

/* Take a reference to m; let go of one (the last unloads it once the
** launches queued so far are done). lc_modref_release takes an lc_modref,
** as a buffer's release function (buffer.h) does. */
void lc_modref_retain(lc_modref *m);
void lc_modref_release(void *m);

/* __gc of the Module and Kernel objects: let go of the module. */
int lc_modhold_gc(lua_State *L);

/* close() of the object at 1 (of type tname, "a module" or "a kernel" in
** messages): it lets go of its module through the gate; idempotent. */
void lc_modhold_close(lua_State *L, const char *tname, const char *what);

/* The module of the open Module object at idx, or an error naming fname. */
lc_modref *lc_module_check(lua_State *L, int idx, const char *fname);

/* The kernels of m, as "a, b, c" ("none"), for messages. */
void lc_module_kernel_names(const lc_modref *m, char *buf, size_t len);

/* ---- compile's name_expressions (name_expr.c) ---- */

/* opts.name_expressions (opts at 2, when has_opts): nil, or a sequence of
** at most LC_MAX_NAMES strings, each one line; else an error. */
void lc_name_exprs_check(lua_State *L, bool has_opts, const char *fname);

/* The name expressions at idx (a sequence of strings, or nil) into
** m->named, each from the kernel of m it names (src: the source, for a
** template's text); an error for one that names none. */
void lc_name_exprs_read(lua_State *L, int idx, lc_modref *m, const char *src,
                        const char *fname);

/* The names the backend resolves (lc_source.names): the name expressions
** at idx, then each kernel with C++ linkage found by its own name. Pushes
** the array (a userdata) and returns it; *n its count. */
const char **lc_name_exprs_resolve(lua_State *L, int idx, const lc_modref *m, int *n);

/* ---- the Kernel object (kernel.c) ---- */

/* Push the kernel object for name of the Module object at midx (made once,
** then kept in the module object), or raise naming fname. */
void lc_kernel_push(lua_State *L, int midx, const char *name, const char *fname);

/* Launch k (launch.c): the configuration at cfgidx (Numba's {grid, block
** [, stream [, shared]]} or {grid=, block=, stream=, shared=}), the nargs
** arguments from stack index first, checked against k's parameters and
** packed into the argument buffer; queued, as in CUDA (without a stream,
** on the default one). */
void lc_kernel_launch(lua_State *L, lc_kernel_ref *k, int cfgidx, int first, int nargs);

#endif
