/*
** nvrtc: NVRTC through dlopen. Only the few types and functions used are
** declared here, resolved by their exact names, so the module builds
** without CUDA. The library is loaded once per process and never closed.
*/
#define _GNU_SOURCE        /* dladdr: which file the loader picked */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend.h"
#include "cache.h"
#include "common.h"
#include "fatbin.h"
#include "ksource.h"
#include "nvrtc.h"
#include "probe.h"
#include "scan.h"
#include "std_headers.h"

/* From nvrtc.h: the result is a C enum (an int), a program an opaque
** pointer. Only the codes we tell apart are named. */
typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;
enum { NVRTC_SUCCESS = 0, NVRTC_ERROR_OUT_OF_MEMORY = 1 };

typedef struct nvrtc_fns {
  nvrtcResult (*CreateProgram)(nvrtcProgram *prog, const char *src, const char *name,
                               int nheaders, const char *const *headers,
                               const char *const *include_names);
  nvrtcResult (*CompileProgram)(nvrtcProgram prog, int nopts, const char *const *opts);
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram prog, size_t *size);
  nvrtcResult (*GetProgramLog)(nvrtcProgram prog, char *log);
  nvrtcResult (*GetPTXSize)(nvrtcProgram prog, size_t *size);
  nvrtcResult (*GetPTX)(nvrtcProgram prog, char *ptx);
  nvrtcResult (*GetCUBINSize)(nvrtcProgram prog, size_t *size);   /* 11.1+ */
  nvrtcResult (*GetCUBIN)(nvrtcProgram prog, char *cubin);         /* 11.1+ */
  nvrtcResult (*DestroyProgram)(nvrtcProgram *prog);
  nvrtcResult (*Version)(int *major, int *minor);
  const char *(*GetErrorString)(nvrtcResult r);
  nvrtcResult (*GetNumSupportedArchs)(int *n);                     /* 11.2+ */
  nvrtcResult (*GetSupportedArchs)(int *archs);                    /* 11.2+ */
  nvrtcResult (*AddNameExpression)(nvrtcProgram prog, const char *expr);
  nvrtcResult (*GetLoweredName)(nvrtcProgram prog, const char *expr, const char **lowered);
} nvrtc_fns;

static nvrtc_fns nv;

/* What nv holds, by exact symbol name. The cubin pair is optional: 11.0
** has none, and still makes PTX. */
#define LC_SYM(f, opt) {"nvrtc" #f, offsetof(nvrtc_fns, f), opt}
static const struct { const char *name; size_t off; bool optional; } syms[] = {
  LC_SYM(CreateProgram, false), LC_SYM(CompileProgram, false),
  LC_SYM(GetProgramLogSize, false), LC_SYM(GetProgramLog, false),
  LC_SYM(GetPTXSize, false), LC_SYM(GetPTX, false),
  LC_SYM(GetCUBINSize, true), LC_SYM(GetCUBIN, true),
  LC_SYM(DestroyProgram, false), LC_SYM(Version, false),
  LC_SYM(GetErrorString, false),
  LC_SYM(GetNumSupportedArchs, true), LC_SYM(GetSupportedArchs, true),
  LC_SYM(AddNameExpression, true), LC_SYM(GetLoweredName, true),
};
#undef LC_SYM

static const char *const sonames[] = {
  "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so.11.1",
  "libnvrtc.so.11.0", "libnvrtc.so",
};
#define NSONAMES (sizeof sonames / sizeof sonames[0])

/* Written once under pthread_once, read-only afterwards. */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int load_rc = LC_ENOTSUP;
static lc_nvrtc_facts facts;    /* of the library loaded */
static char load_err[LC_NVRTC_ERRLEN];
static atomic_bool loaded;      /* load() succeeded: facts and nv are set */
static atomic_int driver;       /* the driver's version, 0 unknown */

void lc_nvrtc_set_driver(int version) { atomic_store(&driver, version); }

/* The CUDA major version of a soname (13 for libnvrtc.so.13), 0 for none. */
static int soname_major(const char *soname) {
  const char *v = soname + strlen("libnvrtc.so");
  return *v == '.' ? atoi(v + 1) : 0;
}

/* Pass 0 tries the sonames no newer than the driver (all of them when its
** version is unknown), pass 1 the newer ones. */
static bool in_pass(const char *soname, int pass) {
  int d = atomic_load(&driver) / 1000;
  bool newer = d > 0 && soname_major(soname) > d;
  return pass == 1 ? newer : !newer;
}

/* Append to buf (of LC_NVRTC_ERRLEN bytes), marking a cut with "...". */
LC_PRINTF(2, 3)
static void append(char *buf, const char *fmt, ...) {
  size_t len = strlen(buf), room = LC_NVRTC_ERRLEN - len;
  if (room <= 1) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + len, room, fmt, ap);
  va_end(ap);
  if (n >= 0 && (size_t)n >= room) memcpy(buf + LC_NVRTC_ERRLEN - 4, "...", 4);
}

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Where find_includes looked for the toolkit's headers, and what it
** found: said after a compile log that names a missing header. Written
** once, under load's pthread_once. */
static char include_note[LC_NVRTC_ERRLEN / 2];

/* Is root (len bytes of it) a toolkit: does root/include hold cuda_fp16.h?
** If so, its include directories go into f (nvrtc.h). Either way root,
** after what, is added to include_note's list of places looked in. */
static bool toolkit_at(const char *root, size_t len, const char *what, lc_nvrtc_facts *f) {
  while (len > 1 && root[len - 1] == '/') len--;   /* "/usr/local/cuda/" too */
  char path[1100];
  struct stat st;
  int n = snprintf(path, sizeof path, "%.*s/include/cuda_fp16.h", (int)len, root);
  bool found = len > 0 && n > 0 && (size_t)n < sizeof f->includes[0] && stat(path, &st) == 0;
  size_t used = strlen(include_note);
  snprintf(include_note + used, sizeof include_note - used, "%s%s%.*s%s", used ? "; " : "",
           what, (int)len, root, found ? "" : " (none)");
  if (!found) return false;
  snprintf(f->includes[0], sizeof f->includes[0], "-I%.*s/include", (int)len, root);
  f->nincludes = 1;
  snprintf(path, sizeof path, "%.*s/include/cccl", (int)len, root);
  if (is_dir(path))
    snprintf(f->includes[f->nincludes++], sizeof f->includes[0], "-I%.*s/include/cccl",
             (int)len, root);
  return true;
}

/* The toolkit of the NVRTC loaded (nv is set): the directory above the
** library's own, else $CUDA_HOME, else $CUDA_PATH, else /usr/local/cuda,
** where load looks for NVRTC too (nvrtc.h). True when one is found. */
static bool toolkit_search(lc_nvrtc_facts *f) {
  Dl_info info;
  void *sym;                    /* POSIX: a function pointer fits a void * */
  memcpy(&sym, &nv.Version, sizeof sym);
  if (dladdr(sym, &info) && info.dli_fname) {
    /* lib64/libnvrtc.so.13: two slashes from the end is the toolkit */
    const char *p = info.dli_fname, *last = strrchr(p, '/'), *up = NULL;
    for (const char *q = p; last && q < last; q++)
      if (*q == '/') up = q;
    if (up && toolkit_at(p, up == p ? 1 : (size_t)(up - p), "beside NVRTC, ", f)) return true;
  }
  static const char *const vars[] = {"CUDA_HOME", "CUDA_PATH"};
  for (int r = 0; r < 2; r++) {
    const char *root = getenv(vars[r]);
    char what[32];
    snprintf(what, sizeof what, "$%s, ", vars[r]);
    if (root == NULL || root[0] == '\0') {
      size_t used = strlen(include_note);
      snprintf(include_note + used, sizeof include_note - used, "%s$%s (unset)",
               used ? "; " : "", vars[r]);
    } else if (toolkit_at(root, strlen(root), what, f)) {
      return true;
    }
  }
  return toolkit_at("/usr/local/cuda", strlen("/usr/local/cuda"), "", f);
}

/* f's toolkit headers, and include_note: what was given NVRTC, and where
** it was looked for. */
static void find_includes(lc_nvrtc_facts *f) {
  f->nincludes = 0;
  include_note[0] = '\0';
  bool found = toolkit_search(f);
  char looked[sizeof include_note];
  snprintf(looked, sizeof looked, "%s", include_note);
  if (found)
    snprintf(include_note, sizeof include_note, "luacuda gave NVRTC the -I directories of the "
             "options, then the toolkit's headers, %.400s%s%.400s (looked for "
             "include/cuda_fp16.h: %.1000s)", f->includes[0] + 2, f->nincludes > 1 ? " and " : "",
             f->nincludes > 1 ? f->includes[1] + 2 : "", looked);
  else
    snprintf(include_note, sizeof include_note, "luacuda found no toolkit headers to give "
             "NVRTC (looked for include/cuda_fp16.h: %.1800s); set CUDA_HOME to the toolkit's "
             "directory", looked);
}

/* Open path and resolve every symbol; on failure add a line saying why to
** load_err. A library without our symbols is left open, not closed: what
** it ran at load time stays valid. */
static bool try_open(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    const char *e = dlerror();
    if (e == NULL) e = "unknown dlopen error";
    /* dlerror usually starts with the path already */
    if (strncmp(e, path, strlen(path)) == 0) append(load_err, "\n  %s", e);
    else append(load_err, "\n  %s: %s", path, e);
    return false;
  }
  nvrtc_fns t;
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    void *p = dlsym(h, syms[i].name);
    if (p == NULL && !syms[i].optional) {
      append(load_err, "\n  %s: has no %s", path, syms[i].name);
      return false;
    }
    /* POSIX: a data pointer from dlsym holds a function pointer */
    memcpy((char *)&t + syms[i].off, &p, sizeof p);
  }
  int major = 0, minor = 0;
  if (t.Version(&major, &minor) != NVRTC_SUCCESS) {
    append(load_err, "\n  %s: nvrtcVersion failed", path);
    return false;
  }
  nv = t;
  facts.major = major;
  facts.minor = minor;
  int n = 0;                    /* archs stay empty where NVRTC cannot list them */
  if (nv.GetNumSupportedArchs && nv.GetSupportedArchs &&
      nv.GetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0 &&
      n <= (int)(sizeof facts.archs / sizeof facts.archs[0]) &&
      nv.GetSupportedArchs(facts.archs) == NVRTC_SUCCESS)
    facts.narchs = n;
  find_includes(&facts);
  atomic_store(&loaded, true);
  return true;
}

static void load(void) {
  const char *explicit = getenv("LUACUDA_NVRTC");
  if (explicit != NULL && explicit[0] != '\0') {
    /* the user's choice alone: a wrong path is reported, not replaced */
    snprintf(load_err, sizeof load_err, "cannot load NVRTC from LUACUDA_NVRTC:");
    if (try_open(explicit)) load_rc = LC_OK;
    return;
  }
  snprintf(load_err, sizeof load_err, "cannot load NVRTC; tried:");
  const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  char dirs[3][1024];
  for (int r = 0; r < 3; r++) {
    dirs[r][0] = '\0';
    if (roots[r] == NULL || roots[r][0] == '\0') continue;
    size_t len = strlen(roots[r]);   /* "/usr/local/cuda/" is "/usr/local/cuda" */
    while (len > 1 && roots[r][len - 1] == '/') len--;
    snprintf(dirs[r], sizeof dirs[r], "%.*s/lib64", (int)len, roots[r]);
    bool seen = false;
    for (int q = 0; q < r; q++) seen = seen || strcmp(dirs[q], dirs[r]) == 0;
    if (!seen && !is_dir(dirs[r]))   /* one line for the directory, not six */
      append(load_err, "\n  %s/: no such directory", dirs[r]);
    if (seen || !is_dir(dirs[r])) dirs[r][0] = '\0';
  }
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < NSONAMES; i++)
      if (in_pass(sonames[i], pass) && try_open(sonames[i])) { load_rc = LC_OK; return; }
    for (int r = 0; r < 3; r++) {
      if (dirs[r][0] == '\0') continue;
      for (size_t i = 0; i < NSONAMES; i++) {
        char path[1200];
        int n = snprintf(path, sizeof path, "%s/%s", dirs[r], sonames[i]);
        if (in_pass(sonames[i], pass) && n > 0 && (size_t)n < sizeof path && try_open(path)) {
          load_rc = LC_OK;
          return;
        }
      }
    }
  }
}

int lc_nvrtc_load(char *err) {
  pthread_once(&once, load);
  if (load_rc != LC_OK) snprintf(err, LC_NVRTC_ERRLEN, "%s", load_err);
  return load_rc;
}

int lc_nvrtc_version(int *major, int *minor, char *err) {
  int rc = lc_nvrtc_load(err);
  if (rc != LC_OK) return rc;
  *major = facts.major;
  *minor = facts.minor;
  return LC_OK;
}

/* The remembered facts: where they came from, so that a change is seen. */
typedef struct facts_record {
  char path[1024];              /* the library the loader picked */
  long long size, mtime_s, mtime_ns;
  lc_nvrtc_facts facts;
} facts_record;

/* The cache entry for the facts in this environment: what picks the
** library is part of its key. */
static void facts_key(lc_hash *key) {
  static const char *const vars[] = {"LUACUDA_NVRTC", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH"};
  lc_hash_init(key);
  lc_hash_add_str(key, "luacuda nvrtc facts 3");   /* 3: /usr/local/cuda's headers */
  int d = atomic_load(&driver);   /* it orders the sonames */
  lc_hash_add(key, &d, sizeof d);
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    lc_hash_add_str(key, v ? v : "\001unset");
  }
}

static bool stat_matches(const facts_record *r) {
  struct stat st;
  return stat(r->path, &st) == 0 && st.st_size == r->size && st.st_mtim.tv_sec == r->mtime_s &&
         st.st_mtim.tv_nsec == r->mtime_ns;
}

int lc_nvrtc_facts_get(lc_nvrtc_facts *f, char *err) {
  if (atomic_load(&loaded)) {
    *f = facts;
    return LC_OK;
  }
  const char *dir = lc_cache_dir();
  lc_hash key;
  if (dir) {
    facts_key(&key);
    size_t len = 0;
    facts_record *r = (facts_record *)lc_cache_load("nvrtc", &key, ".facts", &len);
    bool ok = r && len == sizeof *r && memchr(r->path, '\0', sizeof r->path) && stat_matches(r);
    if (ok) *f = r->facts;
    free(r);
    if (ok) return LC_OK;
  }
  int rc = lc_nvrtc_load(err);
  if (rc != LC_OK) return rc;
  *f = facts;
  Dl_info info;
  struct stat st;
  facts_record r;
  memset(&r, 0, sizeof r);
  void *sym;                    /* POSIX: a function pointer fits a void * */
  memcpy(&sym, &nv.Version, sizeof sym);
  if (dir && dladdr(sym, &info) && info.dli_fname &&
      strlen(info.dli_fname) < sizeof r.path && stat(info.dli_fname, &st) == 0) {
    strcpy(r.path, info.dli_fname);
    r.size = st.st_size;
    r.mtime_s = st.st_mtim.tv_sec;
    r.mtime_ns = st.st_mtim.tv_nsec;
    r.facts = *f;
    char ignored[LC_ERRLEN];      /* a cache that cannot be written only costs time */
    lc_cache_store("nvrtc", &key, ".facts", &r, sizeof r, NULL, ignored);
  }
  return LC_OK;
}

int lc_nvrtc_arch_pick(const lc_nvrtc_facts *f, int want, int *arch, char *err) {
  *arch = want;
  if (f->narchs <= 0) return LC_OK;      /* cannot tell: try the device's own */
  int best = 0, oldest = f->archs[0];
  for (int i = 0; i < f->narchs; i++) {
    if (f->archs[i] == want) return LC_OK;
    if (f->archs[i] < want && f->archs[i] > best) best = f->archs[i];
    if (f->archs[i] < oldest) oldest = f->archs[i];
  }
  if (best == 0) {
    snprintf(err, LC_NVRTC_ERRLEN, "NVRTC %d.%d cannot compile for sm_%d (the oldest it knows "
             "is sm_%d)", f->major, f->minor, want, oldest);
    return LC_ENOTSUP;
  }
  *arch = best;
  return LC_OK;
}

static int fail(char *err, nvrtcResult r, const char *fmt, const char *what) {
  char msg[256];
  snprintf(msg, sizeof msg, fmt, what);
  snprintf(err, LC_NVRTC_ERRLEN, "%s (%s)", msg, nv.GetErrorString(r));
  return r == NVRTC_ERROR_OUT_OF_MEMORY ? LC_ENOMEM : LC_EFAIL;
}

/* The cubin in *out (*outlen bytes) and the program's PTX, in a fatbinary
** (fatbin.h) that replaces it in *out; the SM is the options' "-arch=sm_XX". */
static int with_ptx(nvrtcProgram prog, const char *name, const char *const *options,
                    int noptions, char **out, size_t *outlen, char *err) {
  int sm = 0;
  for (int i = 0; i < noptions; i++)
    if (strncmp(options[i], "-arch=sm_", 9) == 0) sm = atoi(options[i] + 9);
  size_t n = 0;
  nvrtcResult r = nv.GetPTXSize(prog, &n);
  if (r != NVRTC_SUCCESS) return fail(err, r, "nvrtcGetPTXSize failed for %s", name);
  char *ptx = malloc(n + 1);
  if (ptx == NULL) {
    snprintf(err, LC_NVRTC_ERRLEN, "out of memory for the PTX of %s (%zu bytes)", name, n);
    return LC_ENOMEM;
  }
  r = nv.GetPTX(prog, ptx);
  if (r != NVRTC_SUCCESS) {
    free(ptx);
    return fail(err, r, "nvrtcGetPTX failed for %s", name);
  }
  ptx[n] = '\0';
  unsigned char *fat;
  size_t fatlen;
  char ferr[LC_ERRLEN];
  int rc = sm > 0 ? lc_fatbin_write((unsigned char *)*out, *outlen, ptx, strlen(ptx), sm, &fat,
                                    &fatlen, ferr)
                  : (snprintf(ferr, sizeof ferr, "a fatbinary needs an -arch=sm_XX option"), -1);
  free(ptx);
  if (rc != 0) {
    snprintf(err, LC_NVRTC_ERRLEN, "%s, for %s", ferr, name);
    return LC_EFAIL;
  }
  free(*out);
  *out = (char *)fat;
  *outlen = fatlen;
  return LC_OK;
}

int lc_nvrtc_compile(const char *source, const char *name,
                     const char *const *options, int noptions, int output,
                     char **out, size_t *outlen, char **log, char *err) {
  return lc_nvrtc_compile_named(source, name, options, noptions, output, NULL, 0, out, outlen,
                                NULL, NULL, log, err);
}

int lc_nvrtc_compile_named(const char *source, const char *name,
                           const char *const *options, int noptions, int output,
                           const char *const *exprs, int nexprs, char **out, size_t *outlen,
                           char **lowered, size_t *loweredlen, char **log, char *err) {
  bool cubin = output != LC_NVRTC_PTX;
  *out = NULL;
  *outlen = 0;
  *log = NULL;
  if (lowered) {
    *lowered = NULL;
    *loweredlen = 0;
  }
  int rc = lc_nvrtc_load(err);
  if (rc != LC_OK) return rc;
  if (cubin && nv.GetCUBIN == NULL) {
    snprintf(err, LC_NVRTC_ERRLEN, "NVRTC %d.%d cannot make cubins (11.1 or newer can)",
             facts.major, facts.minor);
    return LC_ENOTSUP;
  }
  if (nexprs > 0 && (nv.AddNameExpression == NULL || nv.GetLoweredName == NULL)) {
    snprintf(err, LC_NVRTC_ERRLEN, "NVRTC %d.%d has no name expressions (11.0 or newer has), "
             "which kernels with C++ linkage need", facts.major, facts.minor);
    return LC_ENOTSUP;
  }
  /* the standard headers kernels written for nvcc include (std_headers.h) */
  const char *const *hnames, *const *htexts;
  int nheaders = lc_std_headers(&hnames, &htexts);
  nvrtcProgram prog = NULL;
  nvrtcResult r = nv.CreateProgram(&prog, source, name, nheaders, htexts, hnames);
  if (r != NVRTC_SUCCESS) return fail(err, r, "nvrtcCreateProgram failed for %s", name);
  nvrtcResult cr = NVRTC_SUCCESS;
  for (int i = 0; i < nexprs; i++) {
    r = nv.AddNameExpression(prog, exprs[i]);
    if (r != NVRTC_SUCCESS) {
      rc = fail(err, r, "nvrtcAddNameExpression failed for %s", exprs[i]);
      goto done;
    }
  }

  cr = nv.CompileProgram(prog, noptions, options);
  /* the log also holds the warnings of a successful compilation */
  size_t n = 0;
  if (nv.GetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 1) {
    *log = malloc(n);
    if (*log == NULL) {
      snprintf(err, LC_NVRTC_ERRLEN, "out of memory for the log of %s", name);
      rc = LC_ENOMEM;
      goto done;
    }
    if (nv.GetProgramLog(prog, *log) != NVRTC_SUCCESS) (*log)[0] = '\0';
    (*log)[n - 1] = '\0';
    /* the log ends in blank lines; one of nothing but those is no log */
    size_t len = strlen(*log);
    while (len > 0 && strchr(" \t\r\n", (*log)[len - 1])) len--;
    (*log)[len] = '\0';
    if (len == 0) { free(*log); *log = NULL; }
  }
  if (cr != NVRTC_SUCCESS) {
    rc = fail(err, cr, "compilation of %s failed", name);
    /* a header not found: where the toolkit's were looked for */
    if (*log && strstr(*log, "open source file")) {
      size_t len = strlen(*log), more = strlen(include_note);
      char *longer = realloc(*log, len + more + 2);
      if (longer) {
        longer[len] = '\n';
        memcpy(longer + len + 1, include_note, more + 1);
        *log = longer;
      }
    }
    goto done;   /* the log says why */
  }

  r = cubin ? nv.GetCUBINSize(prog, &n) : nv.GetPTXSize(prog, &n);
  if (r != NVRTC_SUCCESS) {
    rc = fail(err, r, cubin ? "nvrtcGetCUBINSize failed for %s"
                            : "nvrtcGetPTXSize failed for %s", name);
    goto done;
  }
  if (n == 0) {   /* NVRTC makes a cubin only for a real architecture */
    snprintf(err, LC_NVRTC_ERRLEN, "NVRTC made no %s for %s%s", cubin ? "cubin" : "PTX", name,
             cubin ? " (a cubin needs an sm_XX architecture)" : "");
    rc = LC_EFAIL;
    goto done;
  }
  *out = malloc(n + 1);
  if (*out == NULL) {
    snprintf(err, LC_NVRTC_ERRLEN, "out of memory for the output of %s (%zu bytes)", name, n);
    rc = LC_ENOMEM;
    goto done;
  }
  r = cubin ? nv.GetCUBIN(prog, *out) : nv.GetPTX(prog, *out);
  if (r != NVRTC_SUCCESS) {
    free(*out);
    *out = NULL;
    rc = fail(err, r, cubin ? "nvrtcGetCUBIN failed for %s" : "nvrtcGetPTX failed for %s", name);
    goto done;
  }
  (*out)[n] = '\0';
  /* the PTX size counts its terminating NUL */
  *outlen = !cubin && (*out)[n - 1] == '\0' ? n - 1 : n;
  if (output == LC_NVRTC_FATBIN) {
    rc = with_ptx(prog, name, options, noptions, out, outlen, err);
    if (rc != LC_OK) goto done;
  }
  /* the lowered (mangled) names, each ended by its NUL, in order */
  if (nexprs > 0) {
    const char *ln[LC_NVRTC_MAXNAMES];
    size_t total = 0;
    for (int i = 0; i < nexprs && i < LC_NVRTC_MAXNAMES; i++) {
      r = nv.GetLoweredName(prog, exprs[i], &ln[i]);
      if (r != NVRTC_SUCCESS || ln[i] == NULL) {
        free(*out);
        *out = NULL;
        rc = fail(err, r, "nvrtcGetLoweredName failed for %s", exprs[i]);
        goto done;
      }
      total += strlen(ln[i]) + 1;
    }
    *lowered = malloc(total);
    if (*lowered == NULL) {
      free(*out);
      *out = NULL;
      snprintf(err, LC_NVRTC_ERRLEN, "out of memory for the lowered names of %s", name);
      rc = LC_ENOMEM;
      goto done;
    }
    size_t k = 0;
    for (int i = 0; i < nexprs && i < LC_NVRTC_MAXNAMES; i++) {
      size_t l = strlen(ln[i]) + 1;
      memcpy(*lowered + k, ln[i], l);
      k += l;
    }
    *loweredlen = total;
  }
  rc = LC_OK;

done:
  nv.DestroyProgram(&prog);   /* at once: a program holds a lot of memory */
  if (rc != LC_OK && cr == NVRTC_SUCCESS) {   /* a log of warnings would mislead */
    free(*log);
    *log = NULL;
  }
  return rc;
}

/* ---- what a module's compile gives NVRTC ------------------------------------ */

/* What the text gets at a byte offset of the source (as the simulator's
** compile.c does it): a marker after each kernel defined twice, the probes
** (probe.h) after each struct and after each kernel that takes a header's
** struct by pointer. Next to what they name, on its line, they are
** compiled exactly when it is. */
typedef struct insert { size_t at; int kind, index; } insert;
enum { INSERT_MARK, INSERT_POINTEES, INSERT_STRUCT };

static int insert_order(const void *pa, const void *pb) {
  const insert *a = pa, *b = pb;
  if (a->at != b->at) return a->at < b->at ? -1 : 1;
  return a->kind != b->kind ? a->kind - b->kind : a->index - b->index;
}

char *lc_nvrtc_text(const lc_source *src, size_t *len) {
  const lc_scan_result *sc = src->scan;
  size_t max = 2 * (size_t)sc->nkernels + (size_t)sc->nstructs, n = 0;
  insert *ins = malloc((max + 1) * sizeof *ins);
  lc_strbuf b = {0};
  size_t head = lc_ksource_head_len(src->name);
  if (ins == NULL || !lc_sb_room(&b, head + src->len + 1)) {
    free(ins);
    lc_sb_free(&b);
    return NULL;
  }
  lc_ksource_head(b.p, src->name);
  b.n = head;
  for (int i = 0; i < sc->nkernels; i++) {
    if (lc_scan_defined_twice(sc, i))
      ins[n++] = (insert){sc->kernels[i].body_end + 1, INSERT_MARK, i};
    if (lc_probe_has_pointees(&sc->kernels[i]))
      ins[n++] = (insert){sc->kernels[i].body_end + 1, INSERT_POINTEES, i};
  }
  for (int i = 0; i < sc->nstructs; i++)
    if (lc_probe_kind(&sc->structs[i]) != LC_PROBE_NONE)
      ins[n++] = (insert){sc->structs[i].end, INSERT_STRUCT, i};
  if (n > 0) qsort(ins, n, sizeof *ins, insert_order);
  size_t at = 0;
  for (size_t e = 0; e < n; e++) {
    lc_sb_add(&b, src->text + at, ins[e].at - at);
    at = ins[e].at;
    int i = ins[e].index;
    if (ins[e].kind == INSERT_MARK) {
      lc_sb_fmt(&b, " extern \"C\" { __device__ int " LC_DEFINED_MARK "%d; }", i);
    } else {
      bool pointees = ins[e].kind == INSERT_POINTEES;
      lc_sb_fmt(&b, " extern \"C\" __device__ const unsigned long long %s%d[] = ",
                pointees ? LC_POINTEE_PREFIX : LC_PROBE_PREFIX, i);
      if (pointees) lc_probe_pointees(&b, &sc->kernels[i]);
      else lc_probe_initializer(&b, &sc->structs[i], true);
      lc_sb_str(&b, ";");
    }
  }
  lc_sb_add(&b, src->text + at, src->len - at);
  free(ins);
  if (b.oom) {
    lc_sb_free(&b);
    return NULL;
  }
  *len = b.n;
  return b.p;
}

int lc_nvrtc_options(const char **out, const char *arch, const char *const *options,
                     int noptions, const lc_nvrtc_facts *f) {
  int n = 0;
  out[n++] = arch;
  for (int i = 0; i < noptions && i < LC_KSOURCE_MAXOPTS + 1; i++) out[n++] = options[i];
  for (int i = 0; i < f->nincludes && i < LC_NVRTC_MAXINC; i++) out[n++] = f->includes[i];
  return n;
}

void lc_nvrtc_split_arch(const char *const *options, int noptions, const char **kept,
                         int *nkept, lc_nvrtc_user_arch *user) {
  static const char *const names[] = {"-arch", "--gpu-architecture"};
  *nkept = 0;
  user->value = NULL;
  user->spelled[0] = '\0';
  for (int i = 0; i < noptions; i++) {
    const char *o = options[i], *value = NULL;
    bool pair = false;
    for (int k = 0; k < 2 && value == NULL; k++) {
      size_t l = strlen(names[k]);
      if (strncmp(o, names[k], l) != 0) continue;
      if (o[l] == '=') value = o + l + 1;
      else if (o[l] == '\0') value = i + 1 < noptions ? options[i + 1] : "", pair = true;
    }
    if (value == NULL) {
      kept[(*nkept)++] = o;
      continue;
    }
    user->value = value;                  /* NVRTC takes the last */
    snprintf(user->spelled, sizeof user->spelled, "%.60s%s%.60s", pair ? o : "", pair ? " " : "",
             pair ? value : o);
    if (pair && i + 1 < noptions) i++;
  }
}

int lc_nvrtc_user_target(const lc_nvrtc_user_arch *user, int want, int *arch, char *suffix,
                         bool *real, char *err) {
  const char *v = user->value;
  size_t p = strncmp(v, "compute_", 8) == 0 ? 8 : strncmp(v, "sm_", 3) == 0 ? 3 : 0, d = 0;
  while (p && v[p + d] >= '0' && v[p + d] <= '9') d++;
  const char *rest = v + p + d;
  if (p == 0 || d < 2 || d > 3 ||
      !(rest[0] == '\0' || ((rest[0] == 'a' || rest[0] == 'f') && rest[1] == '\0'))) {
    snprintf(err, LC_NVRTC_ERRLEN, "option %s: an architecture is \"compute_XX\" or \"sm_XX\" "
             "(e.g. \"sm_80\"), no newer than the device's", user->spelled);
    return LC_EFAIL;
  }
  *arch = atoi(v + p);
  *real = p == 3;
  snprintf(suffix, 2, "%s", rest);
  if (*arch > want) {
    snprintf(err, LC_NVRTC_ERRLEN, "option %s: %s is newer than the device (compute capability "
             "%d.%d), which cannot run its code", user->spelled, v, want / 10, want % 10);
    return LC_EFAIL;
  }
  if (suffix[0] && *arch != want) {
    snprintf(err, LC_NVRTC_ERRLEN, "option %s: %s is specific to compute capability %d.%d; the "
             "device is %d.%d", user->spelled, v, *arch / 10, *arch % 10, want / 10, want % 10);
    return LC_EFAIL;
  }
  return LC_OK;
}
