/*
** compile: turning a kernel source into a loaded shared object for the
** simulator. The text compiled is the ABI, the CPU runtime and the prelude,
** then the user's source behind a #line directive (so the compiler's
** messages give the user's lines), then a generated tail with one entry
** point per kernel. The host C++ compiler (LUACUDA_CXX, else c++) is run
** without a shell; its output is the log of a failed compilation. NVRTC,
** where there is one, compiles the source meanwhile as the CUDA backend
** would (check.c): what it rejects fails here too, with its log.
*/
#define _GNU_SOURCE       /* pipe2 */
#include "sim.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "common.h"
#include "compile_note.h"
#include "deps.h"
#include "env.h"
#include "kernels.h"
#include "strbuf.h"
#include "ksource.h"
#include "probe.h"
#include "std_headers.h"

extern char **environ;

/* The headers compiled into every module before the prelude: the kernel
** ABI, the CPU runtime (the CUDA names on the host), CUDA's math API and
** intrinsics, and its address-space functions. */
LC_EMBED_KERNEL(lc_sim_abi_source, "sim_abi.h");   /* kernels/abi.h in front */
LC_EMBED(lc_sim_runtime_source, "kernels/sim_runtime.h");
LC_EMBED(lc_sim_math_source, "kernels/sim_math.h");
LC_EMBED(lc_sim_runtime_impl_source, "kernels/sim_runtime_impl.h");
LC_EMBED(lc_sim_spaces_source, "kernels/sim_spaces.h");
extern const char lc_sim_abi_source[], lc_sim_runtime_source[], lc_sim_math_source[],
    lc_sim_runtime_impl_source[], lc_sim_spaces_source[];

/* The simulator's versions of CUDA's own headers (kernels/sim_include/),
** written for each compilation into its directory's include/, which the
** compiler searches first. */
LC_EMBED(lc_sim_cg_h, "kernels/sim_include/cooperative_groups.h");
LC_EMBED(lc_sim_cg_reduce_h, "kernels/sim_include/cooperative_groups/reduce.h");
LC_EMBED(lc_sim_cg_scan_h, "kernels/sim_include/cooperative_groups/scan.h");
LC_EMBED(lc_sim_cg_functional_h, "kernels/sim_include/cooperative_groups/details/functional.h");
extern const char lc_sim_cg_h[], lc_sim_cg_reduce_h[], lc_sim_cg_scan_h[], lc_sim_cg_functional_h[];
LC_EMBED(lc_sim_fp16_h, "kernels/sim_include/cuda_fp16.h");
LC_EMBED(lc_sim_fp16_hpp, "kernels/sim_include/cuda_fp16.hpp");
LC_EMBED(lc_sim_bf16_h, "kernels/sim_include/cuda_bf16.h");
LC_EMBED(lc_sim_bf16_hpp, "kernels/sim_include/cuda_bf16.hpp");
LC_EMBED(lc_sim_cucomplex_h, "kernels/sim_include/cuComplex.h");
extern const char lc_sim_fp16_h[], lc_sim_fp16_hpp[], lc_sim_bf16_h[], lc_sim_bf16_hpp[],
    lc_sim_cucomplex_h[];
LC_EMBED(lc_sim_runtime_h, "kernels/sim_include/cuda_runtime.h");
LC_EMBED(lc_sim_vector_types_h, "kernels/sim_include/vector_types.h");
LC_EMBED(lc_sim_vector_functions_h, "kernels/sim_include/vector_functions.h");
LC_EMBED(lc_sim_launch_parameters_h, "kernels/sim_include/device_launch_parameters.h");
LC_EMBED(lc_sim_device_functions_h, "kernels/sim_include/device_functions.h");
LC_EMBED(lc_sim_math_functions_h, "kernels/sim_include/math_functions.h");
extern const char lc_sim_runtime_h[], lc_sim_vector_types_h[], lc_sim_vector_functions_h[],
    lc_sim_launch_parameters_h[], lc_sim_device_functions_h[], lc_sim_math_functions_h[];
static const struct sim_header { const char *path, *text; } sim_headers[] = {
  {"cooperative_groups.h", lc_sim_cg_h},
  {"cooperative_groups/reduce.h", lc_sim_cg_reduce_h},
  {"cooperative_groups/scan.h", lc_sim_cg_scan_h},
  {"cooperative_groups/details/functional.h", lc_sim_cg_functional_h},
  {"cuda_fp16.h", lc_sim_fp16_h},
  {"cuda_fp16.hpp", lc_sim_fp16_hpp},
  {"cuda_bf16.h", lc_sim_bf16_h},
  {"cuda_bf16.hpp", lc_sim_bf16_hpp},
  {"cuComplex.h", lc_sim_cucomplex_h},
  {"cuda_runtime.h", lc_sim_runtime_h},
  {"vector_types.h", lc_sim_vector_types_h},
  {"vector_functions.h", lc_sim_vector_functions_h},
  {"device_launch_parameters.h", lc_sim_launch_parameters_h},
  {"device_functions.h", lc_sim_device_functions_h},
  {"math_functions.h", lc_sim_math_functions_h},
};
#define NHEADERS (sizeof sim_headers / sizeof sim_headers[0])

/* ---- composing the source ------------------------------------------------ */

/* What the user's source gets, at a byte offset of it: the rewrite of a
** `extern __shared__` declarator, or a kernel's or global's entry point
** just after its definition. Generated code stands next to what it names,
** on the same line, so it is compiled exactly when that is: a kernel
** defined once in each branch of an #ifdef gets one entry point, the one of
** the branch compiled. */
typedef struct edit { size_t at; int kind, index; } edit;
enum { EDIT_SHARED, EDIT_KERNEL, EDIT_GLOBAL, EDIT_STRUCT, EDIT_POINTEES, EDIT_CONSTANT };

static int edit_order(const void *pa, const void *pb) {
  const edit *a = pa, *b = pb;
  if (a->at != b->at) return a->at < b->at ? -1 : 1;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  return a->index - b->index;
}

/* One `extern __shared__ T x[];` declarator: in a function, a pointer to the
** block's dynamic shared memory; at namespace scope, a thread_local pointer
** and a binder that points it there at the start of every block. */
static void rewrite_shared(lc_strbuf *b, const lc_shared_decl *d, int i) {
  if (d->in_function) {
    lc_sb_fmt(b, "%s *const %s = reinterpret_cast<%s *>(__lc_dynamic_shared()); ",
           d->type, d->name, d->type);
    return;
  }
  lc_sb_fmt(b, "static thread_local %s *%s; ", d->type, d->name);
  lc_sb_fmt(b, "static void __lc_bind_%d(void) { %s = reinterpret_cast<%s *>("
         "__lc_dynamic_shared()); } static __lc_binder __lc_binder_%d = {__lc_bind_%d, "
         "nullptr}; static const bool __lc_bound_%d = __lc_add_binder(&__lc_binder_%d); ",
         i, d->name, d->type, i, i, i, i);
}

/* Strict memory checking (LUACUDA_SIM_MEMCHECK=2): a static `__shared__`
** statement whose arrays become bounds-checked ones (prelude.cuh's
** __lc_bounded), a class where the source has a C array. Only an array
** used by subscripts alone in its scope (and in every macro) is checked:
** any other use of its name (a pointer taken from it, a reinterpret_cast,
** sizeof, a template deducing T *) may need a C array, so such an array
** stays one, unchecked.
** The statement is rewritten when it checks an array, each declarator as
** a checked array or as written; so each must be an array declared by its
** plain name with bounds, or no array, and its alignment, if any, a
** literal. Others are left to the compiler, unchecked. */
static bool checkable(const lc_source *src, const lc_shared_decl *d) {
  return d->dims[0] != '\0' &&
         lc_scan_only_subscripted(src->text, src->len, d->name, d->end, d->in_function);
}

static bool bounded_statement(const lc_source *src, int first, bool *checked) {
  const lc_scan_result *sc = src->scan;
  bool any = false;
  for (int i = first; i < sc->nshared && sc->shared[i].begin == sc->shared[first].begin; i++) {
    const lc_shared_decl *d = &sc->shared[i];
    if (d->is_extern || d->align < 0) return false;
    if (d->dims[0] == '\0') continue;
    if (strncmp(d->declarator, d->name, strlen(d->name)) != 0 || strcmp(d->dims, "[]") == 0)
      return false;
  }
  for (int i = first; i < sc->nshared && sc->shared[i].begin == sc->shared[first].begin; i++)
    any |= checked[i] = checkable(src, &sc->shared[i]);
  return any;
}

static void rewrite_bounded(lc_strbuf *b, const lc_shared_decl *d, bool checked) {
  char align[40] = "";
  if (d->align > 0) snprintf(align, sizeof align, "alignas(%lld) ", (long long)d->align);
  if (!checked) {
    lc_sb_fmt(b, "%sstatic thread_local %s; ", align, d->text);
    return;
  }
  /* "[16][N * 2]" as the template's "16, N * 2" */
  char bounds[sizeof d->dims];
  int depth = 0, ndim = 0;
  size_t n = 0;
  for (const char *c = d->dims; *c; c++) {
    if (*c == '[' && depth++ == 0) {
      if (ndim++ > 0) { bounds[n++] = ','; bounds[n++] = ' '; }
      continue;
    }
    if (*c == ']' && --depth == 0) continue;
    if (n + 3 < sizeof bounds) bounds[n++] = *c;
  }
  bounds[n] = '\0';
  lc_sb_fmt(b, "struct __lc_tag_%s { static const char *__lc_name() { return \"%s\"; } "
            "static const char *__lc_kind() { return \"shared\"; } "
            "static int __lc_ndim() { return %d; } }; ", d->name, d->name, ndim);
  lc_sb_fmt(b, "%sstatic thread_local __lc_bounded<__lc_tag_%s, %s, %s> %s; ", align, d->name,
            d->type, bounds, d->name);
}

static void add_user_source(lc_strbuf *b, const lc_source *src, bool strict) {
  const lc_scan_result *sc = src->scan;
  size_t max = (size_t)sc->nshared + 2 * (size_t)sc->nkernels + 2 * (size_t)sc->nglobals +
               (size_t)sc->nstructs, n = 0;
  edit *edits = max ? malloc(max * sizeof *edits) : NULL;
  bool *checked = sc->nshared ? calloc((size_t)sc->nshared, sizeof *checked) : NULL;
  if ((max && edits == NULL) || (sc->nshared && checked == NULL)) {
    free(edits);
    free(checked);
    b->oom = true;
    return;
  }
  for (int i = 0; i < sc->nshared; i++) {
    if (sc->shared[i].is_extern) {
      edits[n++] = (edit){sc->shared[i].begin, EDIT_SHARED, i};
    } else if (strict && (i == 0 || sc->shared[i - 1].begin != sc->shared[i].begin) &&
               bounded_statement(src, i, checked)) {
      for (int k = i; k < sc->nshared && sc->shared[k].begin == sc->shared[i].begin; k++)
        edits[n++] = (edit){sc->shared[k].begin, EDIT_SHARED, k};
    }
  }
  for (int i = 0; i < sc->nkernels; i++)
    if (sc->kernels[i].extern_c && !sc->kernels[i].is_template)   /* C++: add_named */
      edits[n++] = (edit){sc->kernels[i].body_end + 1, EDIT_KERNEL, i};
  /* the module is built with hidden visibility: globals get accessors */
  for (int i = 0; i < sc->nglobals; i++)
    if (!sc->globals[i].in_namespace && !sc->globals[i].is_extern)
      edits[n++] = (edit){sc->globals[i].end, EDIT_GLOBAL, i};
  for (int i = 0; i < sc->nstructs; i++)     /* the compiler's layout of each (probe.h) */
    if (lc_probe_kind(&sc->structs[i]) != LC_PROBE_NONE)
      edits[n++] = (edit){sc->structs[i].end, EDIT_STRUCT, i};
  for (int i = 0; i < sc->nkernels; i++)
    if (lc_probe_has_pointees(&sc->kernels[i]))
      edits[n++] = (edit){sc->kernels[i].body_end + 1, EDIT_POINTEES, i};
  /* __constant__ variables make themselves known to __isConstant
  ** (kernels/sim_spaces.h), those in namespaces too */
  for (int i = 0; i < sc->nglobals; i++)
    if (sc->globals[i].is_constant && !sc->globals[i].is_extern)
      edits[n++] = (edit){sc->globals[i].end, EDIT_CONSTANT, i};
  if (n > 0) qsort(edits, n, sizeof *edits, edit_order);
  size_t at = 0;
  for (size_t e = 0; e < n; e++) {
    if (edits[e].kind == EDIT_SHARED) {
      const lc_shared_decl *d = &sc->shared[edits[e].index];
      if (d->begin >= at) {            /* first declarator of this statement */
        lc_sb_add(b, src->text + at, d->begin - at);
        at = d->end;
      }
      if (d->is_extern) rewrite_shared(b, d, edits[e].index);
      else rewrite_bounded(b, d, checked[edits[e].index]);
      /* after the statement's last declarator, restore its line breaks */
      int next = edits[e].index + 1;
      if (next == sc->nshared || sc->shared[next].begin != d->begin)
        for (size_t k = d->begin; k < d->end; k++)
          if (src->text[k] == '\n') lc_sb_str(b, "\n");
      continue;
    }
    if (edits[e].at > at) {
      lc_sb_add(b, src->text + at, edits[e].at - at);
      at = edits[e].at;
    }
    if (edits[e].kind == EDIT_KERNEL) {
      int i = edits[e].index;
      lc_sb_fmt(b, " LC_SIM_KERNEL(%s)", sc->kernels[i].name);
      if (lc_scan_defined_twice(sc, i))
        lc_sb_fmt(b, " static int " LC_DEFINED_MARK "%d; LC_SIM_EXPORT void *__lc_global_"
               LC_DEFINED_MARK "%d(size_t *bytes) { *bytes = sizeof(int); return &"
               LC_DEFINED_MARK "%d; }", i, i, i);
    } else if (edits[e].kind == EDIT_STRUCT || edits[e].kind == EDIT_POINTEES) {
      int i = edits[e].index;
      const char *prefix = edits[e].kind == EDIT_STRUCT ? LC_PROBE_PREFIX : LC_POINTEE_PREFIX;
      lc_sb_fmt(b, " static const unsigned long long %s%d[] = ", prefix, i);
      if (edits[e].kind == EDIT_STRUCT) lc_probe_initializer(b, &sc->structs[i], false);
      else lc_probe_pointees(b, &sc->kernels[i]);
      lc_sb_fmt(b, "; LC_SIM_EXPORT void *__lc_global_%s%d(size_t *bytes) { *bytes = sizeof "
                "%s%d; return (void *)%s%d; }", prefix, i, prefix, i, prefix, i);
    } else if (edits[e].kind == EDIT_GLOBAL) {
      const char *name = sc->globals[edits[e].index].name;
      lc_sb_fmt(b, " LC_SIM_EXPORT void *__lc_global_%s(size_t *bytes) "
             "{ *bytes = sizeof %s; return (void *)&%s; }", name, name, name);
    } else {
      int i = edits[e].index;
      const char *name = sc->globals[i].name;
      lc_sb_fmt(b, " static __lc_constant __lc_constant_%d = {(const void *)&%s, sizeof %s, "
             "nullptr}; static const bool __lc_constant_added_%d = "
             "__lc_add_constant(&__lc_constant_%d);", i, name, name, i, i);
    }
  }
  lc_sb_add(b, src->text + at, src->len - at);
  free(edits);
  free(checked);
}

/* The kernels found by a name expression (backend.h): after the user's
** source, an entry point for each (the expression's value, a pointer to
** the one __global__ function it names), and the table of their spellings
** by which sim_module_function finds them (lc_sim_named). */
static void add_named(lc_strbuf *b, const lc_source *src) {
  if (src->nnames == 0) return;
  lc_sb_str(b, "\n#line 1 \"name_expressions\"\n");
  for (int i = 0; i < src->nnames; i++)
    lc_sb_fmt(b, "LC_SIM_NAMED(%d, %s)\n", i, src->names[i]);
  lc_sb_str(b, "LC_SIM_EXPORT const char *const " LC_SIM_NAMED_TABLE "[] = {");
  for (int i = 0; i < src->nnames; i++) {
    lc_sb_str(b, "\"");
    for (const char *c = src->names[i]; *c; c++) {
      if (*c == '"' || *c == '\\') lc_sb_str(b, "\\");
      lc_sb_add(b, c, 1);
    }
    lc_sb_str(b, "\", ");
  }
  lc_sb_str(b, "nullptr};\n");
}

/* The module's text: the head (the runtime's headers and the prelude, the
** same for every module: pch.c precompiles it), the runtime's definitions
** (sim_runtime_impl.h: pch.c compiles them once into an object), then the
** user's part. *head is where the definitions start, *user where the
** user's part does. */
static void compose(lc_strbuf *b, const lc_source *src, bool strict, size_t *head,
                    size_t *user) {
  lc_sb_str(b, "#line 1 \"luacuda/sim_abi.h\"\n");
  lc_sb_str(b, lc_sim_abi_source);
  lc_sb_str(b, "\n#line 1 \"luacuda/sim_runtime.h\"\n");
  lc_sb_str(b, lc_sim_runtime_source);
  lc_sb_str(b, "\n#line 1 \"luacuda/sim_math.h\"\n");
  lc_sb_str(b, lc_sim_math_source);
  lc_sb_str(b, "\n#line 1 \"luacuda/sim_spaces.h\"\n");
  lc_sb_str(b, lc_sim_spaces_source);
  lc_sb_str(b, "\n#line 1 \"luacuda/prelude.cuh\"\n");
  size_t len = lc_ksource_head_len(src->name);
  *head = *user = b->n + strlen(lc_prelude_source);   /* the #line of the user's part follows */
  if (lc_sb_room(b, len + 1)) {
    lc_ksource_head(b->p + b->n, src->name);
    b->n += len;
    /* the definitions go between the prelude and the user's #line */
    size_t nline = b->n - *head;
    char *line = malloc(nline + 1);
    if (line == NULL) {
      b->oom = true;
      return;
    }
    memcpy(line, b->p + *head, nline);
    b->n = *head;
    lc_sb_str(b, "\n#line 1 \"luacuda/sim_runtime_impl.h\"\n");
    lc_sb_str(b, lc_sim_runtime_impl_source);
    *user = b->n;
    lc_sb_add(b, line, nline);
    free(line);
  }
  add_user_source(b, src, strict);
  add_named(b, src);
}

/* ---- running the compiler ------------------------------------------------- */

/* How every module is compiled (-c aside), and so its precompiled head. */
static const char *const fixed[] = {
  "-O2", "-fPIC", "-fvisibility=hidden", "-fno-semantic-interposition",
  "-fno-exceptions", "-fdiagnostics-color=never", "-pthread",
  /* a frame larger than its stack touches every page on the way down, so
  ** it faults in the guard page instead of landing in other memory */
  "-fstack-clash-protection", NULL
};

/* The user's options that change what the head means: the dialect,
** fast math (its macros and its code) and line tables. -D and -U are not among them: GCC
** checks that the macros a precompiled head uses are defined as they were,
** and reads the text when they are not. */
static const char *head_option(const char *o) {
  if (strncmp(o, "-std=", 5) == 0) return o;
  if (strcmp(o, "--use_fast_math") == 0) return "-ffast-math";
  /* line tables (GCC's -g1 leaves the code as it was): a fault names the
  ** source line (fault.c); a head built without -g is not taken with it */
  if (strcmp(o, "-lineinfo") == 0 || strcmp(o, "--generate-line-info") == 0) return "-g1";
  return NULL;
}

/* Strict memory checking (LUACUDA_SIM_MEMCHECK=2) faults on a misaligned
** access, as a GPU does (CUDA_ERROR_MISALIGNED_ADDRESS), where x86 makes
** it: every access through a pointer or reference is checked against its
** type's alignment by GCC's -fsanitize=alignment, whose handler is the
** runtime's own (kernels/sim_runtime_impl.h: no libubsan is linked), and
** every atomic by the runtime (LC_SIM_ALIGNED). Not in the default mode:
** the checks keep the block loop from holding threadIdx in registers
** (saxpy took 6 times as long with them, a tiled matmul 1.1 times:
** docs/memcheck.md). In every module's compile, and so in its precompiled
** head's. */
static int add_alignment_checks(const char **argv, int n) {
  if (lc_settings_get()->sim_memcheck == 2) {
    argv[n++] = "-fsanitize=alignment";
    argv[n++] = "-DLC_SIM_ALIGNED=1";
  }
  return n;
}

/* The precompiled head's flags: the compiler, fixed, strict memory
** checking's defines and checks, and head_option's. */
static int head_flags(const char **flags, int max, const char *cxx, const lc_source *src,
                      bool strict) {
  int n = 0;
  flags[n++] = cxx;
  for (int i = 0; fixed[i]; i++) flags[n++] = fixed[i];
  if (strict) flags[n++] = "-DLC_SIM_STRICT=1";   /* the prelude's arrays */
  n = add_alignment_checks(flags, n);
  for (int i = 0; i < src->noptions && n < max; i++)
    if (head_option(src->options[i])) flags[n++] = head_option(src->options[i]);
  return n;
}

/* The compiler's arguments: ours, then the user's options (normalised,
** ksource.h) that mean the same to a host compiler (-D, -I, -U, -std,
** fast math); the rest are NVRTC's own and do not apply here (NVRTC's
** check is given every option: check.c). This compiles only (-c): see
** link_argv for why. The first *nkey arguments are what the cache key
** takes; the rest name this compilation's own files: the object, the
** source, and the list of the headers read (-MD), which an entry keeps. */
static int build_argv(const char **argv, int max, const char *cxx, const char *include,
                      const char *out, const char *in, const char *deps, const lc_source *src,
                      bool strict, const char *libcudacxx, const char *prefix_map, int *nkey) {
  int n = 0;
  argv[n++] = cxx;
  argv[n++] = include;        /* -I the simulator's headers: first (argv[1]) */
  argv[n++] = "-c";
  for (int i = 0; fixed[i]; i++) argv[n++] = fixed[i];
  /* strict memory checking bounds-checks shared and local arrays (prelude) */
  if (strict) argv[n++] = "-DLC_SIM_STRICT=1";
  n = add_alignment_checks(argv, n);
  for (int i = 0; i < src->noptions && n < max - 10; i++) {   /* 10: what follows */
    const char *o = src->options[i];
    if (strncmp(o, "-D", 2) == 0 || strncmp(o, "-I", 2) == 0 || strncmp(o, "-U", 2) == 0)
      argv[n++] = o;
    else if (head_option(o))
      argv[n++] = head_option(o);
  }
  *nkey = n;
  /* line tables name the source relative to the directory compiled in
  ** (not in the key: the module is the same from any directory) */
  if (prefix_map) argv[n++] = prefix_map;
  /* libcu++ after the user's -I, as for NVRTC: not in the key, whose entry
  ** records the headers it read (libcudacxx.c) */
  if (libcudacxx) argv[n++] = libcudacxx;
  argv[n++] = "-MD";
  argv[n++] = "-MF";
  argv[n++] = deps;
  argv[n++] = "-MT";
  argv[n++] = "lc";
  argv[n++] = "-o";
  argv[n++] = out;
  argv[n++] = in;
  argv[n] = NULL;
  return n;
}

/* Linking is a step of its own, with no optimisation flags: given
** -ffast-math (or -funsafe-math-optimizations) at link time, GCC before 13
** links crtfastmath into shared objects too, whose constructor turns on
** flush-to-zero in the thread that loads the module: the host program's.
** It is tried first without the C++ library, whose symbols the linker
** would read for nothing for most kernels (a third of a small kernel's
** link): every symbol must then be found (--no-undefined), and a module
** that needs the C++ library (new, a static local's guard) is linked again
** with it (lean false). obj2: the runtime's object, or NULL. */
static void link_argv(const char **argv, const char *cxx, const char *out, const char *obj,
                      const char *obj2, bool lean) {
  int n = 0;
  argv[n++] = cxx;
  argv[n++] = "-shared";
  argv[n++] = "-pthread";
  if (lean) {
    argv[n++] = "-nodefaultlibs";
    argv[n++] = "-Wl,--no-undefined";
  }
  argv[n++] = "-o";
  argv[n++] = out;
  argv[n++] = obj;
  if (obj2) argv[n++] = obj2;
  if (lean) {
    static const char *const libs[] = {"-lm", "-lpthread", "-lc", "-lgcc_s", "-lgcc", NULL};
    for (int i = 0; libs[i]; i++) argv[n++] = libs[i];
  }
  argv[n] = NULL;
}

int lc_sim_run_compiler(const char *const *argv, lc_strbuf *log, char *err) {
  /* close-on-exec: a compiler that another thread spawns meanwhile must
  ** not inherit this pipe, or our read would wait for that compiler too
  ** (the dup2 onto the child's 1 and 2 clears the flag there) */
  int fd[2];
  if (pipe2(fd, O_CLOEXEC) != 0) {
    return lc_fail(err, -1, "pipe: %s", strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
  /* the host program's LD_PRELOAD (a sanitizer, a profiler) is not meant
  ** for the compiler */
  size_t nenv = 0;
  while (environ[nenv]) nenv++;
  char **envp = malloc((nenv + 1) * sizeof *envp);
  if (envp == NULL) {
    posix_spawn_file_actions_destroy(&fa);
    close(fd[0]);
    close(fd[1]);
    return lc_fail(err, -1, "out of memory");
  }
  size_t k = 0;
  for (size_t i = 0; i < nenv; i++)
    if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0) envp[k++] = environ[i];
  envp[k] = NULL;
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, envp);
  free(envp);
  posix_spawn_file_actions_destroy(&fa);
  close(fd[1]);
  if (rc != 0) {
    close(fd[0]);
    return lc_fail(err, -1, "cannot run the C++ compiler '%.200s': %s (set LUACUDA_CXX)",
                   argv[0], strerror(rc));
  }
  char chunk[4096];
  ssize_t got;
  while ((got = read(fd[0], chunk, sizeof chunk)) != 0) {
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    lc_sb_add(log, chunk, (size_t)got);
  }
  close(fd[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      return lc_fail(err, -1, "waitpid: %s", strerror(errno));
    }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int lc_sim_write_file(const char *path, const char *data, size_t n, char *err) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return lc_fail(err, -1, "cannot write %.300s: %s", path, strerror(errno));
  }
  size_t off = 0;
  while (off < n) {
    ssize_t w = write(fd, data + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      lc_errf(err, "cannot write %.300s: %s", path, strerror(errno));
      close(fd);
      return -1;
    }
    off += (size_t)w;
  }
  return close(fd) == 0 ? 0 : -1;
}

/* The compiler's own description (its --version output), asked once per
** compiler per process: part of every cache key. Copied out under the lock:
** another thread naming another compiler (LUACUDA_CXX changed) rewrites it. */
static void compiler_identity(const char *cxx, char *out, size_t len) {
  static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  static char who[1024], identity[1024];
  pthread_mutex_lock(&mu);
  if (strcmp(who, cxx) != 0) {
    const char *argv[] = {cxx, "--version", NULL};
    lc_strbuf version = {0};
    char err[LC_ERRLEN];
    int status = lc_sim_run_compiler(argv, &version, err);
    snprintf(identity, sizeof identity, "%s", status == 0 && version.p ? version.p : "unknown");
    snprintf(who, sizeof who, "%s", cxx);
    free(version.p);
  }
  snprintf(out, len, "%s", identity);
  pthread_mutex_unlock(&mu);
}

bool lc_sim_read_file(lc_strbuf *b, const char *path) {
  FILE *f = fopen(path, "rb");
  char chunk[65536];
  size_t n;
  while (f && (n = fread(chunk, 1, sizeof chunk, f)) > 0) lc_sb_add(b, chunk, n);
  bool ok = f && !ferror(f) && !b->oom;
  if (f) fclose(f);
  return ok;
}

/* A copy of the object just compiled goes into the disk cache with the
** headers the compiler says it read (depfile; the files of this
** compilation's directory dir, the source and the simulator's headers, are
** not among them: the key has them) and those its precompiled head read
** (head_rec[0 .. nhead), deps.h's record), unless one of them changed while
** it compiled (since: when it started): then what it read is not known. A
** cache that cannot be written only costs time. */
static void store_in_cache(const char *so, const lc_hash *key, const char *depfile,
                           const char *dir, const void *head_rec, size_t nhead,
                           const struct timespec *since) {
  if (lc_cache_dir() == NULL) return;
  lc_strbuf rule = {0}, data = {0};
  lc_deps deps = {0};
  char own[600];
  snprintf(own, sizeof own, "%s/", dir);
  bool ok = lc_sim_read_file(&rule, depfile);
  if (ok) {
    lc_deps_add_rule(&deps, rule.p, rule.n, own);
    size_t at = 0;
    lc_dep e;
    while (lc_deps_next(head_rec, nhead, &at, &e)) lc_deps_add(&deps, e.path);
    ok = !deps.failed && lc_deps_settled(&deps, since) && lc_sim_read_file(&data, so);
  }
  char ignored[LC_ERRLEN];
  if (ok) lc_cache_store("sim", key, ".so", data.p, data.n, &deps, ignored);
  lc_deps_free(&deps);
  free(rule.p);
  free(data.p);
}

/* Write the simulator's headers under dir/include/ (sim_headers). */
static int write_headers(const char *dir, char *err) {
  char path[700];
  size_t top = strlen(dir);
  for (size_t i = 0; i < NHEADERS; i++) {
    snprintf(path, sizeof path, "%s/include/%s", dir, sim_headers[i].path);
    for (char *p = path + top + 1; (p = strchr(p, '/')) != NULL; *p++ = '/') {
      *p = '\0';                 /* its directories, from the top */
      if (mkdir(path, 0700) != 0 && errno != EEXIST) {
        return lc_fail(err, -1, "cannot make %.400s: %s", path, strerror(errno));
      }
    }
    const char *text = sim_headers[i].text;
    if (lc_sim_write_file(path, text, strlen(text), err) != 0) return -1;
  }
  return 0;
}

/* Remove them, and their directories once empty. */
static void remove_headers(const char *dir) {
  char path[700];
  size_t top = strlen(dir);
  for (size_t i = 0; i < NHEADERS; i++) {
    snprintf(path, sizeof path, "%s/include/%s", dir, sim_headers[i].path);
    unlink(path);
    for (char *p; (p = strrchr(path, '/')) != NULL && p > path + top;) {
      *p = '\0';
      rmdir(path);                /* fails while another header is there */
    }
  }
}

static bool load(const char *path, void **handle, char *err) {
  *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (*handle == NULL) {
    lc_errf(err, "cannot load the compiled module: %.400s", dlerror());
    return false;
  }
  void *sym = dlsym(*handle, "__lc_sim_abi");
  int (*abi)(void) = NULL;
  if (sym) memcpy(&abi, &sym, sizeof abi);     /* as POSIX allows */
  if (abi == NULL || abi() != LC_SIM_ABI) {
    lc_errf(err, "the compiled module has another ABI version");
    dlclose(*handle);
    *handle = NULL;
    return false;
  }
  return true;
}

/* The module compiled before, under key: its bytes written to so and
** loaded from there, so that what is loaded is what was checked (the entry
** is never opened by name again), under a name no other module had
** (dlopen takes a name it has loaded for that module). False when there is
** none, or it does not load (then it is compiled anew); true with *rc the
** result: NVRTC's check (it may have come since) and the options'. */
/* Whether src asks for line tables (-lineinfo): its faults name a line. */
static bool wants_lines(const lc_source *src) {
  for (int i = 0; i < src->noptions; i++)
    if (strcmp(head_option(src->options[i]) ? head_option(src->options[i]) : "", "-g1") == 0)
      return true;
  return false;
}

static bool load_cached(const lc_source *src, const lc_hash *key, const char *so, int orc,
                        const char *oerr, void **handle, char **log, char *err, int *rc) {
  size_t len;
  unsigned char *image = lc_cache_load("sim", key, ".so", &len);
  if (!image) return false;
  char ignored[LC_ERRLEN];
  bool hit = lc_sim_write_file(so, (const char *)image, len, ignored) == 0 &&
             load(so, handle, ignored);
  free(image);
  if (!hit) return false;
  *rc = lc_sim_check(src, log, err);
  if (*rc == LC_OK && orc) {
    *rc = LC_EFAIL;
    lc_errf(err, "%s", oerr);
  }
  if (*rc != LC_OK) {
    dlclose(*handle);
    *handle = NULL;
  } else if (wants_lines(src)) {
    lc_sim_lines_keep(*handle, so);
  }
  return true;
}

/* The module's text where the head is precompiled: the head's include (the
** #line names it in GCC's notes, instead of our directory) written just
** before offset from, where the text the compiler reads then starts (the
** definitions, unless the runtime's object has them: from the user's
** part). Returns that start. */
static size_t include_head(lc_strbuf *text, size_t from) {
  static const char line[] = "#line 1 \"luacuda/sim\"\n#include \"" LC_SIM_PCH_HEAD "\"";
  size_t start = from - (sizeof line - 1);
  memcpy(text->p + start, line, sizeof line - 1);
  return start;
}

/* Compile src and load it, strict: with strict memory checking's checked
** arrays. Its cache key comes back in *key, and the module is stored under
** also too, unless NULL. *host_only: it failed, and only because the host
** compiler refused it (NVRTC and the options did not). */
static int compile_as(const lc_source *src, bool strict, lc_hash *key, const lc_hash *also,
                      bool *host_only, void **handle, char **log, char *err) {
  *handle = NULL;
  *log = NULL;
  *host_only = false;
  /* an option refused is the error after NVRTC's (which a GPU would give
  ** first): NVRTC judges the options it does not know */
  char oerr[LC_ERRLEN];
  int orc = lc_sim_check_options(src, oerr);
  lc_strbuf text = {0}, out = {0};
  size_t head, user;
  compose(&text, src, strict, &head, &user);
  if (text.oom) {
    free(text.p);
    return lc_fail(err, LC_ENOMEM, "out of memory composing the source");
  }
  const char *cxx = getenv("LUACUDA_CXX");
  if (cxx == NULL || *cxx == '\0') cxx = "c++";
  const char *tmp = getenv("TMPDIR");
  char dir[512], in[600], obj[600], so[600], depfile[600], include[600], pch[600], rt[600];
  snprintf(dir, sizeof dir, "%s/luacuda-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (mkdtemp(dir) == NULL) {
    lc_errf(err, "cannot make a directory in %.300s: %s",
            tmp && *tmp ? tmp : "/tmp", strerror(errno));
    free(text.p);
    return LC_EFAIL;
  }
  snprintf(in, sizeof in, "%s/kernel.cc", dir);
  snprintf(obj, sizeof obj, "%s/kernel.o", dir);
  snprintf(depfile, sizeof depfile, "%s/kernel.d", dir);
  snprintf(include, sizeof include, "-I%s/include", dir);
  snprintf(pch, sizeof pch, "%s/" LC_SIM_PCH_HEAD ".gch", dir);
  snprintf(rt, sizeof rt, "%s/" LC_SIM_RT_OBJECT, dir);
  snprintf(so, sizeof so, "%s/kernel.so", dir);
  const char *argv[32 + 64], *largv[16];
  int nkey;
  char cwd[400], map[440];
  const char *prefix_map = NULL;
  if (wants_lines(src) && getcwd(cwd, sizeof cwd)) {
    snprintf(map, sizeof map, "-fdebug-prefix-map=%s=.", cwd);
    prefix_map = map;
  }
  build_argv(argv, (int)(sizeof argv / sizeof argv[0]), cxx, include, obj, in, depfile, src,
             strict, NULL, prefix_map, &nkey);
  /* the key: what is compiled, how, and by which compiler (the headers
  ** read are checked by the entry: cache.h); the simulator's headers are
  ** keyed by their text, not by this compilation's own directory */
  char identity[1024];
  compiler_identity(cxx, identity, sizeof identity);
  argv[1] = "-Iluacuda/sim_include";
  lc_ksource_key(key, "sim 2", text.p, text.n, argv, nkey, identity);
  argv[1] = include;
  for (size_t i = 0; i < NHEADERS; i++) lc_hash_add_str(key, sim_headers[i].text);
  lc_sim_libcudacxx_key(key);
  lc_std_headers_key(key);     /* what NVRTC's check reads (check.c) */
  int rc = LC_EFAIL;
  /* compiled before: loaded as checked; one that does not load is compiled anew */
  if (load_cached(src, key, so, orc, oerr, handle, log, err, &rc)) goto done;
  /* not compiled before: libcu++ where NVRTC's toolkit has it */
  char cccl[1100];
  bool libcudacxx = lc_sim_libcudacxx_option(cccl, sizeof cccl, text.p) == 0;
  if (libcudacxx)
    build_argv(argv, (int)(sizeof argv / sizeof argv[0]), cxx, include, obj, in, depfile, src,
               strict, cccl, prefix_map, &nkey);
  struct timespec start;
  clock_gettime(CLOCK_REALTIME, &start);
  double began = lc_compile_clock();
  /* NVRTC checks the source meanwhile (check.c); what it rejects is the
  ** error, before the host compiler's: the one the CUDA backend gives */
  lc_sim_checker check;
  lc_sim_check_start(&check, src);
  /* the head, precompiled where it can be (pch.c), then the user's part */
  const char *flags[LC_SIM_PCH_MAXFLAGS];
  int nflags = head_flags(flags, LC_SIM_PCH_MAXFLAGS, cxx, src, strict);
  void *head_rec = NULL;
  size_t nhead = 0;
  int status = -1, linked = -1, runtime = 0;
  if (orc == 0 && write_headers(dir, err) == 0 && (!libcudacxx || lc_sim_libcudacxx_write(dir, err) == 0))
    linked = lc_sim_pch(dir, text.p, head, flags, nflags, identity, &head_rec, &nhead, err);
  if (linked == 1) {
    runtime = lc_sim_runtime_object(dir, text.p, head, text.p + head, user - head, flags, nflags,
                                    identity, head_rec, nhead);
    head = include_head(&text, runtime ? user : head);
  } else {
    head = 0;
  }
  if (linked >= 0 && lc_sim_write_file(in, text.p + head, text.n - head, err) == 0) {
    status = lc_sim_run_compiler(argv, &out, err);
    if (status == 0) {
      link_argv(largv, cxx, so, obj, runtime ? rt : NULL, true);
      if (lc_sim_run_compiler(largv, &out, err) != 0) {
        out.n = 0;              /* what the lean link missed is not the user's error */
        link_argv(largv, cxx, so, obj, runtime ? rt : NULL, false);
        status = lc_sim_run_compiler(largv, &out, err);
      }
    }
  }
  char *nlog = NULL, nerr[LC_ERRLEN];
  int crc = lc_sim_check_wait(&check, &nlog, nerr);
  if (crc != LC_OK) {
    rc = crc;
    lc_errf(err, "%s", nerr);
    *log = nlog;
  } else if (orc) {
    lc_errf(err, "%s", oerr);
  } else if (status > 0) {
    lc_errf(err, "compilation of %.300s failed", src->name);
    *log = out.p;
    out.p = NULL;
    *host_only = true;
  } else if (status == 0 && load(so, handle, err)) {
    rc = LC_OK;
    if (wants_lines(src)) lc_sim_lines_keep(*handle, so);
    store_in_cache(so, key, depfile, dir, head_rec, nhead, &start);
    if (also) store_in_cache(so, also, depfile, dir, head_rec, nhead, &start);
    lc_compile_note(lc_compile_label(src), "sim", began);
  }
  free(head_rec);
  unlink(rt);
  unlink(pch);
  snprintf(pch, sizeof pch, "%s/" LC_SIM_PCH_HEAD, dir);
  unlink(pch);
done:
  lc_sim_libcudacxx_remove(dir);
  remove_headers(dir);
  unlink(in);
  unlink(obj);
  unlink(depfile);
  unlink(so);
  rmdir(dir);
  free(text.p);
  free(out.p);
  return rc;
}

/* Strict memory checking's checked arrays (SHARED_ARRAY, LOCAL_ARRAY, and
** the __shared__ arrays a source uses by subscripts alone) are classes
** where the source has C arrays, and a use that only a C array allows
** (`auto row = tile[i]`, tile[i] passed where a template deduces T *) does
** not compile with them. NVRTC compiles it, so the simulator must too: a
** module the host compiler refuses in strict mode alone is compiled again
** without them, unchecked (accesses to device memory are still checked),
** and kept in the cache under the strict compile's key too, so that the
** next process loads it at once. Each time such a module is loaded in
** strict mode (it lacks kernels/sim_runtime_impl.h's __lc_sim_strict), a
** note on stderr says so. */
int lc_sim_compile(const lc_source *src, void **handle, char **log, char *err) {
  bool strict = lc_settings_get()->sim_memcheck == 2, host_only;
  lc_hash key, plain;
  int rc = compile_as(src, strict, &key, NULL, &host_only, handle, log, err);
  if (rc != LC_OK && strict && host_only) {
    free(*log);
    rc = compile_as(src, false, &plain, &key, &host_only, handle, log, err);
  }
  if (rc == LC_OK && strict && dlsym(*handle, "__lc_sim_strict") == NULL) {
    char line[512];
    int n = snprintf(line, sizeof line, "luacuda: %.200s: compiled without strict memory "
                     "checking's bounds checks (LUACUDA_SIM_MEMCHECK=2), which it does not "
                     "compile with (docs/memcheck.md)\n", lc_compile_label(src));
    if (n > (int)sizeof line - 1) n = (int)sizeof line - 1;
    fwrite(line, 1, (size_t)n, stderr);
    fflush(stderr);
  }
  return rc;
}
