/*
** nvrtc: NVIDIA's run-time compiler, opened with dlopen at first use, once
** per process, and never closed. Nothing of CUDA is needed at build time.
**
** Where it is looked for: $LUACUDA_NVRTC when set (a path; then it alone
** is tried, so a wrong path is reported, not silently replaced), otherwise
** the sonames newest first (libnvrtc.so.13, .12, .11.2, .11.1, .11.0, then
** libnvrtc.so) through the dynamic loader's own search, then the same names
** under $CUDA_HOME/lib64, $CUDA_PATH/lib64 and /usr/local/cuda/lib64. When
** the CUDA backend has told the driver's version (lc_nvrtc_set_driver),
** the sonames no newer than the driver's major version are tried first,
** everywhere: NVRTC 13's PTX (ISA 9.0) and cubins do not load on a 12.x
** driver. A newer one is still taken when it is all there is; a module
** that then fails to load says both versions (module.c).
**
** NVRTC searches no directory of its own for <cuda_fp16.h> and the like:
** the toolkit's include directories are added to every compilation, after
** the user's -I. The toolkit is the directory above the one NVRTC was
** loaded from (/usr/local/cuda for /usr/local/cuda/lib64/libnvrtc.so.13;
** targets/x86_64-linux for targets/x86_64-linux/lib), else $CUDA_HOME,
** else $CUDA_PATH, else /usr/local/cuda (where NVRTC is looked for too: a
** distribution's or pip's NVRTC is not inside a toolkit): the first whose
** include/ holds cuda_fp16.h. A compile log that says a header cannot be
** opened is followed by a line saying where the toolkit was looked for.
**
** Every function is thread-safe: several lua_States on several threads may
** compile at once (each compilation has its own nvrtcProgram).
**
** err is a buffer of LC_NVRTC_ERRLEN bytes (larger than LC_ERRLEN: the load
** failure lists every path tried with its dlerror()).
**
** It sits beside the backends, not in cuda/: NVRTC needs no GPU, and the
** CUDA backend (its modules), the simulator (its parity check:
** sim/check.c) and luacuda.ptx all compile with it, with the same text and
** options for one compile (lc_nvrtc_text, lc_nvrtc_options).
*/
#ifndef LUACUDA_NVRTC_H
#define LUACUDA_NVRTC_H

#include <stdbool.h>
#include <stddef.h>

#include "ksource.h"

#define LC_NVRTC_ERRLEN 4096
#define LC_NVRTC_MAXINC 2
/* the options of one compile: the architecture, the user's, the toolkit's */
#define LC_NVRTC_MAXOPTS (1 + LC_KSOURCE_MAXOPTS + 1 + LC_NVRTC_MAXINC)

struct lc_source;

/* The driver's version (cuDriverGetVersion: 12040 for 12.4), before
** NVRTC is loaded: it orders the sonames tried, and is part of the key
** the facts are remembered under. */
void lc_nvrtc_set_driver(int version);

/* Load NVRTC if not done yet. 0 when usable; otherwise nonzero, with the
** reason (the same on every call) in err. */
int lc_nvrtc_load(char *err);

/* The NVRTC version, e.g. 13 and 0. 0 on success; otherwise nonzero with
** the reason in err. */
int lc_nvrtc_version(int *major, int *minor, char *err);

/* What choosing a compile's target and cache key needs of NVRTC, without
** necessarily loading it: loading the library costs milliseconds, more
** than a whole disk-cache hit. Remembered in the cache directory (with the
** library's path, size and time, and the environment that chose it) by the
** first process that loads NVRTC, and trusted while all of those match.
** archs is empty when NVRTC cannot list them. */
typedef struct lc_nvrtc_facts {
  int major, minor;
  int narchs;
  int archs[128];
  /* the toolkit's headers, as options: "-I<toolkit>/include", then
  ** "-I<toolkit>/include/cccl" where it exists (CUDA 13 keeps libcu++,
  ** CUB and Thrust there); none when no toolkit was found */
  int nincludes;
  char includes[LC_NVRTC_MAXINC][1040];
} lc_nvrtc_facts;

/* Fills *f; 0, or nonzero with err set as lc_nvrtc_load does. */
int lc_nvrtc_facts_get(lc_nvrtc_facts *f, char *err);

/* The architecture to compile for a device of architecture want (90 for
** 9.0), from f: want itself when NVRTC knows it (or cannot tell), else the
** newest older one it knows, whose PTX the driver can JIT for the device.
** 0, or LC_ENOTSUP with err set when NVRTC knows no architecture as old. */
int lc_nvrtc_arch_pick(const lc_nvrtc_facts *f, int want, int *arch, char *err);

/* What a compile gives (output): the PTX text, the cubin (needs an sm_XX
** architecture), or both in a fatbinary (fatbin.h), the cubin first
** (needs "-arch=sm_XX" itself among the options). */
enum { LC_NVRTC_PTX = 0, LC_NVRTC_CUBIN = 1, LC_NVRTC_FATBIN = 2 };

/* Compile source (named name in messages) with the NVRTC options given,
** which must include the architecture. Gives what output asks for in
** *out (malloc'd, *outlen bytes; PTX and cubins also NUL-terminated) and
** the compiler's log in *log (malloc'd,
** trailing blank lines cut; NULL when empty). The caller frees both.
** Returns LC_OK (the log then holds warnings, if any); LC_ENOTSUP when
** NVRTC cannot be loaded; LC_EFAIL when compilation failed (the log holds
** the errors, when NVRTC wrote any) or a later step did (no log then);
** LC_ENOMEM. err is set on every failure, and *out is NULL then. */
int lc_nvrtc_compile(const char *source, const char *name,
                     const char *const *options, int noptions, int output,
                     char **out, size_t *outlen, char **log, char *err);

/* The text NVRTC compiles for a module's source: the head (ksource.h),
** then the user's source, with a marker after each definition of a kernel
** defined in several #if branches (scan.h), on the same line, so NVRTC's
** line numbers are the user's. malloc'd and NUL-terminated, *len bytes;
** NULL when out of memory. */
char *lc_nvrtc_text(const struct lc_source *src, size_t *len);

/* The options of a module's compile into out (LC_NVRTC_MAXOPTS of them at
** most): arch ("-arch=sm_90"), the user's options (normalised: ksource.h),
** then f's toolkit headers, after the user's -I so that a user's header of
** the same name wins. Returns how many. */
int lc_nvrtc_options(const char **out, const char *arch, const char *const *options,
                     int noptions, const lc_nvrtc_facts *f);

/* A user's architecture option: NVRTC takes the last, so one among a
** module's options replaces the device's architecture (module.c). */
typedef struct lc_nvrtc_user_arch {
  const char *value;        /* "sm_80", into the options; NULL when none */
  char spelled[128];        /* the option as given: "-arch=sm_80", "-arch sm_80" */
} lc_nvrtc_user_arch;

/* Split options[0..noptions) (normalised: ksource.h) into the
** architecture options ("-arch=X", "--gpu-architecture=X", or either then X
** as the next option), the last of which goes into *user, and the others,
** copied into kept (*nkept of them, at most noptions). */
void lc_nvrtc_split_arch(const char *const *options, int noptions, const char **kept,
                         int *nkept, lc_nvrtc_user_arch *user);

/* The target a user's architecture gives a compile for a device of
** architecture want (90 for 9.0): its number in *arch, its suffix ("a",
** "f" or "") in suffix[2], *real when it names an sm_ (a cubin). PTX of
** an older architecture is what the driver JITs for the device. LC_EFAIL
** with err set ("option -arch=sm_100: ...") when the value is not an
** architecture, is newer than want, or is specific to another one. */
int lc_nvrtc_user_target(const lc_nvrtc_user_arch *user, int want, int *arch, char *suffix,
                         bool *real, char *err);

/* lc_nvrtc_compile, with name expressions (at most LC_NVRTC_MAXNAMES):
** "saxpy", "sq<int>", each naming one __global__ function. On success
** *lowered (malloc'd, *loweredlen bytes; NULL for none) holds the mangled
** name of each, in order, each ended by a NUL. An expression NVRTC cannot
** resolve fails the compilation (the log says why). */
#define LC_NVRTC_MAXNAMES 256
int lc_nvrtc_compile_named(const char *source, const char *name,
                           const char *const *options, int noptions, int output,
                           const char *const *exprs, int nexprs, char **out, size_t *outlen,
                           char **lowered, size_t *loweredlen, char **log, char *err);

#endif
