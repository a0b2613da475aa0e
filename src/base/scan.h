/*
** scan: reads CUDA C++ kernel source WITHOUT compiling it, to find
**   - the kernels (`__global__` function definitions) and their parameter
**     lists, so launch arguments can be checked and packed;
**   - the `__shared__` declarations (dynamic `extern __shared__ T x[];` and
**     static ones), which the simulator backend rewrites and sizes;
**   - the namespace-scope `__constant__` / `__device__` / `__managed__`
**     variables, for m:get_global(name).
** Pure C, no Lua, no allocation, no recursion: the source is untrusted and
** need not be NUL-terminated (only src[0 .. len) is read).
**
** What it understands: // and block comments, string / char / raw string
** literals with escapes, preprocessor lines (with continuations; the dead
** branch of a literal `#if 0` / `#if 1` is skipped), `extern "C"` on a
** declaration or as a block (`extern "C++"` too), namespaces, attributes
** (`__launch_bounds__(256, 2)`, `__attribute__((...))`, `[[...]]`,
** `__align__(16)`, `alignas(16)`, `__grid_constant__`), `static`,
** `template<...>` kernels. It does not expand macros: a kernel hidden
** behind a macro (`#define KERNEL extern "C" __global__`) or declared with
** SHARED_ARRAY / DYNAMIC_SHARED is not seen here. Conditionals other
** than literal ones are not evaluated: a kernel defined in both branches
** of an #ifdef is reported twice, and the backends put what they generate
** for a definition next to it, so it is compiled with it (a marker tells
** which definition was: lc_scan_defined_twice).
**
** Every function returns 0 on success, or -1 with a message in
** err[LC_ERRLEN].
*/
#ifndef LUACUDA_SCAN_H
#define LUACUDA_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "dtype.h"       /* lc_typecode (the enum only: nothing here calls Lua) */
#include "layout.h"      /* LC_ERRLEN */
#include "abi.h"         /* LC_MAXPARAMS, LC_MAXDIM, Array<T, N>'s size */

/* ---- kernels ------------------------------------------------------------ */

/* LC_PARAM_VALUE: a CUDA vector type by value (float2 v), its elements
** packed in order; or, with type LC_PARAM_STRUCT, a struct the source
** defines, by value (Particle p), laid out as lc_struct_def sdef says */
typedef enum { LC_PARAM_SCALAR, LC_PARAM_POINTER, LC_PARAM_ARRAY, LC_PARAM_VALUE } lc_param_kind;

typedef struct lc_param {
  char name[64];         /* parameter name, "" if unnamed */
  char spelling[96];     /* the type as written, whitespace-normalized, for
                         ** messages: "const float *", "Array<float, 2>";
                         ** an over-long one ends in "..." */
  lc_param_kind kind;
  int type;              /* lc_typecode of the scalar / pointee / Array
                         ** element; -1 for void *; LC_PARAM_STRUCT for
                         ** a pointer to a named type (a record) */
  char type_name[64];    /* that type's name: "Point" */
  bool is_const;         /* pointee (or Array element) is const */
  int ndim;              /* N of Array<T, N>; 0 otherwise */
  int vec;               /* a CUDA vector type's count: float2 *p and
                         ** float2 v have type float32 and vec 2; else 0 */
  int64_t size, align;   /* bytes the packed argument takes, and its
                         ** alignment: scalars their C size (x86-64 LP64),
                         ** pointers 8, Array<T, N> LC_ARRAY_SIZE(N) with
                         ** align LC_ARRAY_ALIGN (kernels/abi.h), vector
                         ** types CUDA's (float2: 8, 8; float3: 12, 4) */
  bool has_default;      /* declared with a default argument, which a launch
                         ** passes when the argument is left out: */
  bool default_known;    /* it is a literal: */
  bool default_null;     /*   a null pointer (a pointer's NULL, nullptr, 0) */
  bool default_float;    /*   default_num, else default_int */
  int64_t default_int;
  double default_num;
  char default_text[48]; /* as written, for messages */
  int sdef;              /* type LC_PARAM_STRUCT, when the source defines the
                         ** struct: its index in the scan's structs; else -1 */
  int64_t pointee_size, pointee_align;   /* a pointer to a struct the source
                         ** does not define (a header's): its sizeof and
                         ** alignof as compiled (probe.h); 0 when not known */
} lc_param;

#define LC_PARAM_STRUCT (-3)

typedef struct lc_kernel_sig {
  char name[128];        /* the kernel's own name (unqualified) */
  bool extern_c;         /* C linkage: findable by this name. False for
                         ** C++ linkage and for template kernels */
  bool is_template;
  bool in_namespace;     /* inside a namespace: C++ qualifies its name */
  int line;              /* 1-based line of the name, for messages */
  bool overridden;       /* params come from a signatures= override */
  int nparams;           /* -1 when the parameter list is not understood */
  lc_param params[LC_MAXPARAMS];
  /* "" when the parameters were understood; otherwise why not, e.g.
  ** "kernel 'foo' parameter 2: unsupported type 'MyStruct'". The kernel is
  ** still reported, so that a signatures= override can stand in for it:
  ** raise this message only when no override is given. */
  char error[LC_ERRLEN];
  size_t body_begin, body_end;   /* byte offsets of the body's '{' and its
                                 ** matching '}' */
  size_t decl_begin;             /* where the declaration starts (before a
                                 ** `template <...>` header), at most the
                                 ** byte after the previous declaration */
  size_t params_begin, params_end;   /* the parameter list's text, between
                                     ** its parentheses */
} lc_kernel_sig;

/* ---- structs ------------------------------------------------------------ */

/* A struct (or class) the source defines at namespace scope, `struct S
** {...};` or `typedef struct {...} S;`, with the C layout of its data
** members: each at a multiple of its alignment (its type's, or a larger
** alignas / __align__), the struct's alignment the largest of its
** members' and its own attribute's, its size a multiple of it. Member
** functions, static members and access labels do not change it. */
#define LC_STRUCT_MAXMEMBERS 32
#define LC_MEMBER_MAXDIM 4       /* bounds of an array member: float m[3][3] */
#define LC_STRUCT_MAXALIASES 4   /* names beyond the first: typedef S T; using U = S; */
typedef struct lc_member {
  char name[64];
  int type;              /* lc_typecode of a scalar, or of a vector type's
                         ** elements; LC_PARAM_STRUCT for a struct */
  int vec;               /* a vector type's count (float3: 3), else 0 */
  int sdef;              /* a struct member's struct: its index; else -1 */
  int count;             /* elements of a fixed array (float v[2][3]: 6);
                         ** 0 when the member is no array */
  int ndim;              /* its bounds: dims[0 .. ndim), {2, 3}; 0 when no array */
  int dims[LC_MEMBER_MAXDIM];
  int64_t offset;        /* bytes from the struct's start */
  int64_t size, align;   /* of one element */
} lc_member;

typedef struct lc_struct_def {
  char name[64];         /* the typedef name, else the tag */
  bool tagged;           /* name is the tag: C++ spells the type `struct name`
                         ** where a function or variable has the same name */
  int naliases;          /* its other names: the tag beside a typedef name, */
  char aliases[LC_STRUCT_MAXALIASES][64];   /* later typedefs and aliases */
  int line;              /* of the '{' */
  size_t end;            /* just past the declaration's ';': code placed
                         ** there is compiled exactly when the struct is */
  bool internal;         /* in an unnamed namespace: nothing declared beside it
                         ** can be found in the compiled module */
  bool opaque;           /* it has private or protected data members, whose
                         ** offsets only the struct itself may ask for */
  int nmembers;
  int64_t size, align;
  char error[192];       /* "" when the layout was read; else why not:
                         ** "member 'p': a pointer member (float *) ..." */
  lc_member members[LC_STRUCT_MAXMEMBERS];
  /* What the compiler said of it (probe.h), once the module is built:
  ** LC_PROBE_NONE (nothing: its definition was not compiled), _SIZE (its
  ** size and alignment, now in size and align), _FULL (every member's
  ** offset too, now in members[]). conflict: "" when the compiler's
  ** layout could be taken, else what differs ("member 'x' takes 8 bytes
  ** in the compiled kernel, luacuda reads 4"). */
  int probed;
  char conflict[192];
} lc_struct_def;

/* ---- declarations the simulator needs ----------------------------------- */

/* One declarator of a `__shared__` declaration. A statement that declares
** several (`__shared__ float a[4], b[8];`) gives one entry each, with the
** same begin/end. Entries come in source order and the statements of
** different entries never overlap, so a rewriter can splice them in one
** pass. Only declarations that end in ';' with no brace in between are
** read (a __shared__ variable has no initializer). */
typedef struct lc_shared_decl {
  size_t begin, end;     /* the whole declaration [begin, end): its first
                         ** token (`extern`, `static`, `__shared__`, ...)
                         ** through the ';' (src[end - 1] == ';') */
  size_t decl_begin, decl_end;   /* this declarator, "tile[16][16]" */
  int line;              /* of the name */
  bool is_extern;        /* `extern __shared__`: dynamic shared memory */
  bool in_function;      /* inside a function body (else namespace scope) */
  int kernel;            /* index of the kernel whose body holds it, -1 if
                         ** none (namespace scope, or another function) */
  int64_t align;         /* N of __align__(N) / alignas(N); 0 if none; -1
                         ** if not an integer literal */
  char name[128];        /* "tile" */
  char type[128];        /* the type without storage class, __shared__ and
                         ** attributes, cv kept: "float", "volatile int" */
  char dims[128];        /* the array bounds as written: "[16][16]", "[]",
                         ** "" for a scalar */
  char declarator[192];  /* "tile[16][16]", "*p" */
  char text[320];        /* type and declarator: "float tile[16][16]" */
} lc_shared_decl;

/* One declarator of a namespace-scope `__constant__`, `__device__` or
** `__managed__` variable (not a function). */
typedef struct lc_global_decl {
  char name[128];
  char type_text[128];   /* the element type as written, normalized */
  int type;              /* lc_typecode, or -1 if not a supported scalar
                         ** (pointers, structs, vector types, ...) */
  int ndim;              /* 0 (scalar) to 3 dimensions whose bounds are
                         ** integer constant expressions (`c[2 * N + 1]`);
                         ** -1 when a bound is not one (`c[sizeof(T)]`,
                         ** `c[]`, an unknown `c[N]`) or there are more than 3 */
  int64_t dims[3];
  bool is_constant;      /* __constant__ (else __device__ / __managed__) */
  bool is_managed;
  bool is_extern;        /* a declaration only (`extern __device__ int x;`) */
  bool is_static;
  bool in_namespace;     /* inside a namespace (anonymous ones too): C++
                         ** mangles its name */
  int line;              /* of the name */
  size_t begin, end;     /* the whole declaration, as in lc_shared_decl */
} lc_global_decl;

/* ---- scanning ----------------------------------------------------------- */

/* Where lc_scan writes: four caller-owned arrays and their capacities.
** An array left NULL is not written, only counted (so a first call with
** all NULL sizes the arrays for a second; counting fails exactly where
** filling would). More entries than a non-NULL array's capacity is an
** error. Counts are set even on failure; the arrays' contents are then
** unspecified. */
typedef struct lc_scan_result {
  lc_kernel_sig *kernels;  int max_kernels;  int nkernels;
  lc_shared_decl *shared;  int max_shared;   int nshared;
  lc_global_decl *globals; int max_globals;  int nglobals;
  lc_struct_def *structs;  int max_structs;  int nstructs;
} lc_scan_result;

/* Scan src[0 .. len) in one pass; entries of each array come in source
** order. Errors: a full array, a kernel body without its closing '}', a
** name or declaration longer than its buffer. A kernel whose parameters
** are not understood is not an error here (see lc_kernel_sig.error). */
int lc_scan(const char *src, size_t len, lc_scan_result *r, char *err);

/* Whether kernel i of r shares its name with another kernel of r that can
** be launched by name (extern "C", not a template): a definition in each
** branch of an #if. The backends then compile a marker next to each,
** LC_DEFINED_MARK followed by i, a variable that exists only when that
** definition was compiled. */
bool lc_scan_defined_twice(const lc_scan_result *r, int i);
#define LC_DEFINED_MARK "__lc_defined_"

/* Whether every use of the identifier name that a declaration ending at
** from may see in src[0 .. len) is subscripted: the name followed by '['
** (not "[["). The uses are those from `from` on, to the end of the block
** holding it when block (a declaration in a function), else to the end;
** and every one on a directive's line, wherever (a macro's body).
** Comments and literals hold none. */
bool lc_scan_only_subscripted(const char *src, size_t len, const char *name, size_t from,
                              bool block);

/* Only the kernels: out[0 .. *n), at most max (out may be NULL to count). */
int lc_scan_kernels(const char *src, size_t len, lc_kernel_sig *out, int max,
                    int *n, char *err);

/* The user's signature override: a comma-separated list of parameter
** types, names optional: "int, float, const float*, float*, Array<float, 2>"
** or "int n, float *y". "" (or "void") is zero parameters. On success
** fills sig->nparams and sig->params and clears sig->error; the other
** fields are left as the caller set them, and a failure changes nothing.
** If sig->name is set, messages name the kernel ("kernel 'foo' parameter
** 2: ..."), else "signature parameter 2: ...". */
int lc_parse_signature(const char *text, size_t len, lc_kernel_sig *sig,
                       char *err);

/* The same, where a parameter may name one of the structs structs[0 ..
** nstructs) (the source's, as lc_scan read them): Particle p, Particle *p. */
int lc_parse_signature_structs(const char *text, size_t len, const lc_struct_def *structs,
                               int nstructs, lc_kernel_sig *sig, char *err);

#endif
