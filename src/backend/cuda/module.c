/*
** module: modules compiled by NVRTC into fatbinaries (base/fatbin.h: the
** cubin for the device's architecture and its PTX, which a GPU newer than
** NVRTC knows can JIT) or PTX the driver JITs, kept in the disk cache; their
** functions and globals; launches; the library's own kernels (a per-device
** cache of functions compiled from the .cu files of kernels/).
*/
#include "cuda.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abi.h"          /* LC_SHARED_DEFAULT */
#include "cache.h"
#include "common.h"
#include "compile_note.h"
#include "deps.h"
#include "includes.h"
#include "kernels.h"
#include "ksource.h"
#include "nvrtc.h"
#include "scan.h"
#include "std_headers.h"

/* ---- modules ------------------------------------------------------------------ */

/* The parameter sizes of a kernel got from the module (then -1), kept
** while the module is loaded. */
typedef struct param_sizes {
  struct param_sizes *next;
  long long sizes[];
} param_sizes;

/* A kernel got from a module (one per module_function), kept while the
** module is loaded, with what its launches have learnt of its shared
** memory. */
struct lc_function {
  CUfunction fn;
  int dev;                   /* 0-based: the device its module was loaded on */
  /* the dynamic shared memory a launch may ask for without more checks:
  ** 0 until a launch asks for some, then the driver's default
  ** (LC_SHARED_DEFAULT less the kernel's static shared memory) or what it
  ** was raised to with cuFuncSetAttribute; it only grows */
  atomic_uint shared_ok;
  int static_shared;         /* -1 until asked; under mu */
  lc_function *next;
};

struct lc_module {
  CUmodule m;
  int dev;                   /* 0-based: the device it was loaded on */
  /* the name expressions (lc_source.names) and NVRTC's lowered name of
  ** each, in the same order, each ended by a NUL */
  int nnames;
  char *names, *lowered;
  param_sizes *sizes;        /* under mu */
  lc_function *funcs;        /* under mu */
};

/* LUACUDA_PTX=1 loads PTX alone (the driver JITs it) instead of the
** fatbinary: for tools that read a plain PTX module. */
static bool want_ptx(void) {
  static atomic_int cached = -1;
  int c = atomic_load_explicit(&cached, memory_order_relaxed);
  if (c < 0) {
    const char *v = getenv("LUACUDA_PTX");
    c = v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
    atomic_store_explicit(&cached, c, memory_order_relaxed);
  }
  return c;
}

/* Of a cache entry of *len bytes (load_source), the lowered names of its
** nexprs name expressions, copied into *lowered (malloc'd; NULL when
** lowered is NULL or there are none), and *len cut to the image's length.
** False when the entry is not of that form: then it is a miss. */
static bool cached_names(unsigned char *entry, size_t *len, int nexprs, char **lowered) {
  uint64_t imagelen;
  if (*len < sizeof imagelen) return false;
  memcpy(&imagelen, entry + *len - sizeof imagelen, sizeof imagelen);
  size_t rest = *len - sizeof imagelen;
  if (imagelen > rest) return false;
  const char *names = (const char *)entry + imagelen;
  size_t nlen = rest - (size_t)imagelen;
  int count = 0;
  for (size_t i = 0; i < nlen; i++) count += names[i] == '\0';
  if (count != nexprs || (nlen > 0 && names[nlen - 1] != '\0')) return false;
  if (lowered && nlen > 0) {
    *lowered = malloc(nlen);
    if (*lowered == NULL) return false;
    memcpy(*lowered, names, nlen);
  }
  *len = (size_t)imagelen;
  return true;
}

/* Compile text for the current device into a fatbinary (or take it from the
** disk cache, keyed by the text, the options, the toolkit's include
** directories and NVRTC's version, which lc_nvrtc_facts_get knows without
** loading NVRTC) and load it. options
** are normalised (ksource.h); the architecture is added. The fatbinary
** holds the cubin the device runs and the PTX beside it; PTX alone when
** asked (LUACUDA_PTX), or when NVRTC is older than the device: then for
** the newest architecture it knows, and the driver JITs it. */
static int load_source(const char *text, const char *name, const char *label,
                       const char *const *options, int noptions, const char *const *exprs,
                       int nexprs, CUmodule *mod, char **lowered, char **log, char *err) {
  *log = NULL;
  if (lowered) *lowered = NULL;
  char nerr[LC_NVRTC_ERRLEN];
  /* NVRTC's facts, remembered: a disk-cache hit then never loads NVRTC */
  lc_nvrtc_facts facts;
  if (lc_nvrtc_facts_get(&facts, nerr) != LC_OK) {
    return lc_fail(err, LC_ENOTSUP, "NVRTC is not available: %.440s", nerr);
  }
  int major = facts.major, minor = facts.minor;
  const lc_cuda_device *d = &lc_cuda_devices[lc_cuda_current];
  int want = d->cc_major * 10 + d->cc_minor, target;
  /* a user's -arch (NVRTC takes the last) would replace the device's: one
  ** no newer is honoured as PTX the driver JITs (a cubin for the device's
  ** own sm_), a newer one refused */
  const char *kept[LC_KSOURCE_MAXOPTS + 1];
  int nkept;
  lc_nvrtc_user_arch user;
  lc_nvrtc_split_arch(options, noptions, kept, &nkept, &user);
  char family[2] = "";                   /* sm_90a's "a", sm_100f's "f" */
  bool user_real = true;
  if (user.value) {
    if (lc_nvrtc_user_target(&user, want, &target, family, &user_real, nerr) != LC_OK) {
      return lc_fail(err, LC_EFAIL, "%.500s", nerr);
    }
  } else if (lc_nvrtc_arch_pick(&facts, want, &target, nerr) != LC_OK) {
    return lc_fail(err, LC_ENOTSUP, "%.500s", nerr);
  }
  bool cubin = target == want && user_real && !want_ptx();
  char arch[32];
  snprintf(arch, sizeof arch, "-arch=%s_%d%s", cubin ? "sm" : "compute", target, family);
  const char *opts[LC_NVRTC_MAXOPTS];
  int n = lc_nvrtc_options(opts, arch, kept, nkept, &facts);
  /* the driver too: which NVRTC is taken, and whether what it makes
  ** loads, depend on it */
  int dv = lc_cuda_driver_version;
  char identity[64];
  snprintf(identity, sizeof identity, "NVRTC %d.%d, driver %d.%d", major, minor, dv / 1000,
           dv % 1000 / 10);
  /* the key: the name expressions are part of what is compiled */
  const char *keyopts[LC_KSOURCE_MAXOPTS + 2 + LC_NVRTC_MAXINC + LC_NVRTC_MAXNAMES + 1];
  int nkey = 0;
  for (int i = 0; i < n; i++) keyopts[nkey++] = opts[i];
  keyopts[nkey++] = "\001names";
  for (int i = 0; i < nexprs && i < LC_NVRTC_MAXNAMES; i++) keyopts[nkey++] = exprs[i];
  lc_hash key;
  lc_ksource_key(&key, "cuda 3", text, strlen(text), keyopts, nkey, identity);
  lc_std_headers_key(&key);                /* NVRTC's standard headers are ours */
  const char *suffix = cubin ? ".fatbin" : ".ptx";
  size_t len = 0;
  /* an entry is the image, the lowered names (each ended by a NUL) and
  ** the image's length (8 bytes): a hit takes the names back, and never
  ** calls NVRTC (the loader ignores what follows a fatbinary's contents) */
  unsigned char *image = lc_cache_load("cuda", &key, suffix, &len);
  if (image && !cached_names(image, &len, nexprs, lowered)) {
    free(image);
    image = NULL;
  }
  /* the driver reads PTX up to its NUL; the names follow it */
  if (image && !cubin) image[len] = '\0';
  if (image == NULL) {
    /* the headers it may read, as they are before it compiles; if one
    ** changes meanwhile, what it read is not known, and nothing is stored */
    lc_deps deps = {0};
    struct timespec start;
    clock_gettime(CLOCK_REALTIME, &start);
    double began = lc_compile_clock();
    bool caching = lc_cache_dir() != NULL;
    if (caching) lc_includes_nvrtc(&deps, text, strlen(text), name, opts, n);
    char *out = NULL, *low = NULL;
    size_t lowlen = 0;
    int rc = lc_nvrtc_compile_named(text, name, opts, n, cubin ? LC_NVRTC_FATBIN : LC_NVRTC_PTX,
                                    exprs, nexprs, &out, &len, &low, &lowlen, log, nerr);
    if (rc != LC_OK) {
      lc_deps_free(&deps);
      if (*log) lc_errf(err, "compilation of %.300s failed", name);
      else lc_errf(err, "%.500s", nerr);
      return rc;
    }
    free(*log);            /* warnings: not reported for a module that loads */
    *log = NULL;
    lc_compile_note(label, "cuda", began);
    image = (unsigned char *)out;
    char ignored[LC_ERRLEN];
    if (caching && !deps.failed && lc_deps_settled(&deps, &start)) {
      uint64_t imagelen = len;
      unsigned char *entry = malloc(len + lowlen + sizeof imagelen);
      if (entry) {
        memcpy(entry, image, len);
        if (lowlen) memcpy(entry + len, low, lowlen);
        memcpy(entry + len + lowlen, &imagelen, sizeof imagelen);
        lc_cache_store("cuda", &key, suffix, entry, len + lowlen + sizeof imagelen, &deps,
                       ignored);
        free(entry);
      }
    }
    lc_deps_free(&deps);
    if (lowered) *lowered = low;
    else free(low);
  }
  char jitlog[1024] = "";
  int jopts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *jvals[2] = {jitlog, (void *)(uintptr_t)sizeof jitlog};
  CUresult r;          /* the image takes device memory */
  LC_CUDA_RETRY_OOM(r, CUDA_ERROR_OUT_OF_MEMORY,
                    lc_cu.ModuleLoadDataEx(mod, image, 2, jopts, jvals));
  int rc = lc_cuda_check(r, "cuModuleLoadDataEx", err);
  if (rc != LC_OK) {
    /* which versions, and what to do where NVRTC is the newer */
    size_t used = strlen(err);
    snprintf(err + used, LC_ERRLEN - used, " (driver %d.%d, NVRTC %d.%d)", dv / 1000,
             dv % 1000 / 10, major, minor);
    used = strlen(err);
    if (dv > 0 && major > dv / 1000)
      snprintf(err + used, LC_ERRLEN - used, ": NVRTC is newer than the driver; update the "
               "driver, or install NVRTC %d (libnvrtc.so.%d), which luacuda then prefers",
               dv / 1000, dv / 1000);
    else if (dv > 0 && major * 1000 + minor * 10 > dv)
      snprintf(err + used, LC_ERRLEN - used, ": NVRTC is newer than the driver, which takes "
               "its cubins but not its PTX; update the driver");
    used = strlen(err);
    if (jitlog[0]) snprintf(err + used, LC_ERRLEN - used, " (%s)", jitlog);
  }
  free(image);
  return rc;
}

int lc_cuda_module_load(const lc_source *src, lc_module **m, char **log, char *err) {
  *log = NULL;
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  /* the head (ksource.h), then the user's source, with its markers */
  size_t len;
  char *text = lc_nvrtc_text(src, &len);
  lc_module *mod = calloc(1, sizeof *mod);
  if (text == NULL || mod == NULL) {
    free(text);
    free(mod);
    return lc_fail(err, LC_ENOMEM, "out of host memory");
  }
  if (src->nnames > LC_NVRTC_MAXNAMES) {
    free(text);
    free(mod);
    return lc_fail(err, LC_EFAIL, "more than %d kernels named by name expressions",
                   LC_NVRTC_MAXNAMES);
  }
  /* the name expressions, kept to find each kernel by its spelling */
  size_t nbytes = 0;
  for (int i = 0; i < src->nnames; i++) nbytes += strlen(src->names[i]) + 1;
  mod->nnames = src->nnames;
  mod->names = nbytes ? malloc(nbytes) : NULL;
  if (nbytes && mod->names == NULL) {
    free(text);
    free(mod);
    return lc_fail(err, LC_ENOMEM, "out of host memory");
  }
  for (size_t i = 0, at = 0; i < (size_t)src->nnames; i++) {
    size_t l = strlen(src->names[i]) + 1;
    memcpy(mod->names + at, src->names[i], l);
    at += l;
  }
  rc = load_source(text, src->name, lc_compile_label(src), src->options, src->noptions,
                   src->names, src->nnames,
                   &mod->m, &mod->lowered, log, err);
  free(text);
  if (rc != LC_OK) {
    free(mod->names);
    free(mod->lowered);
    free(mod);
  } else {
    mod->dev = lc_cuda_current;
    *m = mod;
  }
  return rc;
}

void lc_cuda_module_unload(lc_module *m) {
  if (lc_cuda_enter_quietly()) lc_cu.ModuleUnload(m->m);
  while (m->sizes) {
    param_sizes *p = m->sizes;
    m->sizes = p->next;
    free(p);
  }
  while (m->funcs) {
    lc_function *f = m->funcs;
    m->funcs = f->next;
    free(f);
  }
  free(m->names);
  free(m->lowered);
  free(m);
}

/* The sizes of fn's parameters from the driver (cuFuncGetParamInfo, CUDA
** 12.4), so that a signature misread from the source is caught when the
** kernel is got rather than by a launch that reads garbage; NULL where the
** driver cannot tell. */
static const long long *param_sizes_of(lc_module *m, CUfunction fn) {
  enum { MAXP = 512 };
  if (lc_cu.FuncGetParamInfo == NULL) return NULL;
  long long tmp[MAXP];
  int n = 0;
  for (; n < MAXP - 1; n++) {
    size_t off, size;
    CUresult r = lc_cu.FuncGetParamInfo(fn, (size_t)n, &off, &size);
    if (r == 1) break;                   /* CUDA_ERROR_INVALID_VALUE: past the last */
    if (r != CUDA_SUCCESS) return NULL;
    tmp[n] = (long long)size;
  }
  tmp[n] = -1;
  param_sizes *p = malloc(sizeof *p + (size_t)(n + 1) * sizeof tmp[0]);
  if (p == NULL) return NULL;
  memcpy(p->sizes, tmp, (size_t)(n + 1) * sizeof tmp[0]);
  pthread_mutex_lock(&lc_cuda_mu);
  p->next = m->sizes;
  m->sizes = p;
  pthread_mutex_unlock(&lc_cuda_mu);
  return p->sizes;
}

int lc_cuda_module_function(lc_module *m, const char *name, lc_function **f,
                                const long long **sizes, char *err) {
  *sizes = NULL;
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  /* a name expression's kernel, by its lowered name */
  const char *expr = m->names, *low = m->lowered;
  for (int i = 0; i < m->nnames && expr && low; i++) {
    if (strcmp(expr, name) == 0) {
      name = low;
      break;
    }
    expr += strlen(expr) + 1;
    low += strlen(low) + 1;
  }
  CUfunction fn;
  rc = lc_cuda_check(lc_cu.ModuleGetFunction(&fn, m->m, name), "cuModuleGetFunction", err);
  if (rc != LC_OK) return rc;
  lc_function *lf = calloc(1, sizeof *lf);
  if (lf == NULL) {
    return lc_fail(err, LC_ENOMEM, "out of host memory");
  }
  lf->fn = fn;
  lf->dev = m->dev;           /* its limits are its module's device's, whichever is current */
  lf->static_shared = -1;
  atomic_init(&lf->shared_ok, 0);
  pthread_mutex_lock(&lc_cuda_mu);
  lf->next = m->funcs;
  m->funcs = lf;
  pthread_mutex_unlock(&lc_cuda_mu);
  *f = lf;
  *sizes = param_sizes_of(m, fn);
  return LC_OK;
}

int lc_cuda_module_global(lc_module *m, const char *name, void **ptr, size_t *bytes,
                              char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  CUdeviceptr p = 0;
  rc = lc_cuda_check(lc_cu.ModuleGetGlobal(&p, bytes, m->m, name), "cuModuleGetGlobal", err);
  if (rc == LC_OK) *ptr = (void *)(uintptr_t)p;
  return rc;
}

/* ---- the library's own kernels ---------------------------------------------
** Per device, the modules compiled from the library's sources (the .cu
** files of kernels/, built in: kernels.h) and the functions got from them,
** kept for the process. A source's extern "C" kernels come from one module compiled
** with no name expression; a name expression ("lc_reduce<0, 11, 11, 11>")
** is a module of its own, compiled with that one expression (NVRTC
** instantiates the template it names and tells its lowered name). Both
** lists only grow; lookups and inserts are under lc_cuda_mu, compiles
** outside it (a function compiled twice by two threads at once: the
** second module is unloaded). */
struct lc_cuda_libmod {
  lc_cuda_libmod *next;
  const char *source;          /* the built-in text: its address is its identity */
  char *expr;                  /* NULL: the module of the plain (extern "C") names */
  CUmodule m;
  char *lowered;               /* expr's lowered name */
};

struct lc_cuda_libfn {
  lc_cuda_libfn *next;
  const char *source;
  char *name;                  /* the name expression or plain name asked for */
  CUfunction fn;
};

static bool is_plain_name(const char *s) {
  for (; *s; s++)
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9')))
      return false;
  return true;
}

static lc_cuda_libfn *find_libfn(const lc_cuda_device *d, const char *source, const char *name) {
  for (lc_cuda_libfn *f = d->libfns; f; f = f->next)
    if (f->source == source && strcmp(f->name, name) == 0) return f;
  return NULL;
}

static lc_cuda_libmod *find_libmod(const lc_cuda_device *d, const char *source, const char *expr) {
  for (lc_cuda_libmod *m = d->libmods; m; m = m->next)
    if (m->source == source &&
        (expr == NULL ? m->expr == NULL : m->expr != NULL && strcmp(m->expr, expr) == 0))
      return m;
  return NULL;
}

static char *dup_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *c = malloc(n);
  if (c) memcpy(c, s, n);
  return c;
}

/* The module of source for expr (NULL: the plain names') on device d, from
** the list or compiled and added; under lc_cuda_mu on entry and return. */
static int library_module(lc_cuda_device *d, const char *file, const char *source,
                          const char *expr, lc_cuda_libmod **out, char *err) {
  lc_cuda_libmod *m = find_libmod(d, source, expr);
  if (m) {
    *out = m;
    return LC_OK;
  }
  pthread_mutex_unlock(&lc_cuda_mu);
  static const char *const std_only[] = {LC_KSOURCE_STD};
  char *log = NULL, *lowered = NULL;
  CUmodule mod = NULL;
  const char *exprs[1] = {expr};
  int rc = load_source(source, file, expr ? expr : file, std_only, 1, expr ? exprs : NULL,
                       expr ? 1 : 0, &mod,
                       expr ? &lowered : NULL, &log, err);
  free(log);
  lc_cuda_libmod *fresh = NULL;
  if (rc == LC_OK) {
    fresh = calloc(1, sizeof *fresh);
    char *e = expr ? dup_string(expr) : NULL;
    if (fresh == NULL || (expr && (e == NULL || lowered == NULL))) {
      free(fresh);
      free(e);
      fresh = NULL;
      lc_cu.ModuleUnload(mod);
      lc_errf(err, "out of host memory");
      rc = LC_ENOMEM;
    } else {
      *fresh = (lc_cuda_libmod){NULL, source, e, mod, lowered};
      lowered = NULL;
    }
  }
  free(lowered);
  pthread_mutex_lock(&lc_cuda_mu);
  if (rc != LC_OK) return rc;
  m = find_libmod(d, source, expr);
  if (m) {                       /* another thread was quicker */
    lc_cu.ModuleUnload(fresh->m);
    free(fresh->expr);
    free(fresh->lowered);
    free(fresh);
  } else {
    m = fresh;
    m->next = d->libmods;
    d->libmods = m;
  }
  *out = m;
  return LC_OK;
}

int lc_cuda_library_function(const char *file, const char *source, const char *name,
                             CUfunction *fn, char *err) {
  pthread_mutex_lock(&lc_cuda_mu);
  lc_cuda_device *d = &lc_cuda_devices[lc_cuda_current];
  lc_cuda_libfn *f = find_libfn(d, source, name);
  if (f) {
    *fn = f->fn;
    pthread_mutex_unlock(&lc_cuda_mu);
    return LC_OK;
  }
  bool plain = is_plain_name(name);
  lc_cuda_libmod *m;
  int rc = library_module(d, file, source, plain ? NULL : name, &m, err);
  CUfunction got = NULL;
  if (rc == LC_OK)
    rc = lc_cuda_check(lc_cu.ModuleGetFunction(&got, m->m, plain ? name : m->lowered),
                       "cuModuleGetFunction", err);
  if (rc == LC_OK && (f = find_libfn(d, source, name)) == NULL) {
    f = calloc(1, sizeof *f);
    char *n = dup_string(name);
    if (f == NULL || n == NULL) {
      free(f);
      free(n);
      lc_errf(err, "out of host memory");
      rc = LC_ENOMEM;
    } else {
      *f = (lc_cuda_libfn){d->libfns, source, n, got};
      d->libfns = f;
    }
  }
  if (rc == LC_OK) *fn = f->fn;
  pthread_mutex_unlock(&lc_cuda_mu);
  return rc;
}

/* The kernel's launch, its result not yet checked: a failure to find the
** kernel is rc, the launch's own *r. */
static int library_launch(const char *file, const char *source, const char *name,
                          unsigned grid, unsigned threads, void **params, CUstream st,
                          CUresult *r, char *err) {
  CUfunction f;
  int rc = lc_cuda_library_function(file, source, name, &f, err);
  if (rc == LC_OK)
    LC_CUDA_RETRY_OOM(*r, CUDA_ERROR_OUT_OF_MEMORY,
                      lc_cu.LaunchKernel(f, grid, 1, 1, threads, 1, 1, 0, st, params, NULL));
  return rc;
}

int lc_cuda_library_launch(const char *file, const char *source, const char *name,
                           unsigned grid, unsigned threads, void **params, CUstream st,
                           char *err) {
  CUresult r;
  int rc = library_launch(file, source, name, grid, threads, params, st, &r, err);
  if (rc == LC_OK) rc = lc_cuda_check(r, "cuLaunchKernel", err);
  if (rc == LC_OK) lc_cuda_queued();
  return rc;
}

int lc_cuda_library_call(const char *file, const char *source, const char *name,
                         unsigned grid, unsigned threads, void **params, const lc_stream *s,
                         char *err) {
  CUresult r;
  int rc = library_launch(file, source, name, grid, threads, params, lc_cuda_stream(s), &r,
                          err);
  return rc != LC_OK ? rc : lc_cuda_finish(r, "cuLaunchKernel", s, err);
}

unsigned lc_cuda_grid(int64_t blocks, unsigned most) {
  return blocks > (int64_t)most ? most : blocks < 1 ? 1u : (unsigned)blocks;
}

/* Let f's launches take n bytes of dynamic shared memory: within the
** driver's default (LC_SHARED_DEFAULT less the kernel's static shared
** memory, asked once), nothing to do; above it, up to the device's opt-in
** limit less the static memory, cuFuncSetAttribute raises the kernel's
** maximum to n. The maximum only grows, so a launch that finds n within
** shared_ok needs no lock; a loop of launches of one size sets it once. */
static int allow_shared(lc_function *f, unsigned n, char *err) {
  int rc = LC_OK;
  pthread_mutex_lock(&lc_cuda_mu);
  if (f->static_shared < 0) {
    int st = 0;
    rc = lc_cuda_check(lc_cu.FuncGetAttribute(&st, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f->fn),
                       "cuFuncGetAttribute", err);
    if (rc == LC_OK) {
      f->static_shared = st;
      unsigned dflt = st > (int)LC_SHARED_DEFAULT ? 0 : LC_SHARED_DEFAULT - (unsigned)st;
      if (dflt > atomic_load(&f->shared_ok)) atomic_store(&f->shared_ok, dflt);
    }
  }
  if (rc == LC_OK && n > atomic_load(&f->shared_ok)) {
    unsigned optin = lc_cuda_devices[f->dev].shared_optin;
    unsigned st = (unsigned)f->static_shared;
    unsigned limit = optin > st ? optin - st : 0;
    if (n > limit) {
      lc_errf(err, "%u bytes of dynamic shared memory is more than the %u this "
              "kernel may have (device %d allows a block %u bytes of shared memory, and the "
              "kernel has %u of static shared memory)", n, limit, f->dev + 1, optin, st);
      rc = LC_EFAIL;
    } else {
      rc = lc_cuda_check(lc_cu.FuncSetAttribute(f->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                (int)n), "cuFuncSetAttribute", err);
      if (rc == LC_OK) atomic_store(&f->shared_ok, n);
    }
  }
  pthread_mutex_unlock(&lc_cuda_mu);
  return rc;
}

/* CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, with what the kernel takes: its
** threads per block (less than 1024 with __launch_bounds__ or many
** registers) and its registers per thread. */
static int out_of_resources(lc_function *f, const lc_launch *cfg, char *err) {
  int rc = lc_cuda_check(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "cuLaunchKernel", err);
  int threads = 0, regs = 0;
  if (lc_cu.FuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f->fn) ==
          CUDA_SUCCESS &&
      lc_cu.FuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f->fn) == CUDA_SUCCESS)
    lc_errf(err, "cuLaunchKernel: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (blocks of %u "
            "threads; the kernel takes at most %d threads per block and uses %d registers per "
            "thread)", cfg->block[0] * cfg->block[1] * cfg->block[2], threads, regs);
  return rc;
}

/* A cooperative launch runs every block at once: the device must take
** them (COOPERATIVE_LAUNCH), and the grid must fit it at once, its
** multiprocessors times the blocks of this size each holds (asked of the
** driver, which refuses more with CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
** said the same way). */
static int cooperative(lc_function *f, const lc_launch *cfg, char *err) {
  CUdevice dev = lc_cuda_devices[f->dev].dev;
  int can = 0, sms = 0, per_sm = 0;
  if (lc_cu.LaunchCooperativeKernel == NULL) {
    return lc_fail(err, LC_EFAIL, "a cooperative launch needs cuLaunchCooperativeKernel, which the "
                   "driver lacks");
  }
  int rc = lc_cuda_check(lc_cu.DeviceGetAttribute(&can, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
                                                  dev), "cuDeviceGetAttribute", err);
  if (rc == LC_OK && !can) {
    return lc_fail(err, LC_EFAIL, "device %d does not take cooperative launches", f->dev + 1);
  }
  if (rc == LC_OK)
    rc = lc_cuda_check(lc_cu.DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                                dev), "cuDeviceGetAttribute", err);
  if (rc != LC_OK) return rc;
  unsigned threads = cfg->block[0] * cfg->block[1] * cfg->block[2];
  unsigned long long blocks = (unsigned long long)cfg->grid[0] * cfg->grid[1] * cfg->grid[2];
  /* none fits: the launch says why (out of resources) */
  bool known = lc_cu.OccupancyMaxActiveBlocksPerMultiprocessor &&
               lc_cu.OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f->fn, (int)threads,
                                                               cfg->shared_bytes) ==
                   CUDA_SUCCESS && per_sm > 0;
  CUresult r = CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
  if (!known || blocks <= (unsigned long long)per_sm * (unsigned)sms) {
    lc_cuda_drain();
    LC_CUDA_RETRY_OOM(r, CUDA_ERROR_OUT_OF_MEMORY,
                      lc_cu.LaunchCooperativeKernel(f->fn, cfg->grid[0], cfg->grid[1],
                                                    cfg->grid[2], cfg->block[0], cfg->block[1],
                                                    cfg->block[2], cfg->shared_bytes,
                                                    cfg->stream->s, cfg->args));
  }
  if (r == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE && known) {
    return lc_fail(err, LC_EFAIL, "a cooperative launch of %llu blocks is more than the %llu that "
                   "can run at once (%d blocks of %u threads and %u bytes of dynamic shared memory "
                   "on each of device %d's %d multiprocessors)", blocks,
                   (unsigned long long)per_sm * (unsigned)sms, per_sm, threads, cfg->shared_bytes,
                   f->dev + 1, sms);
  }
  if (r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) return out_of_resources(f, cfg, err);
  rc = lc_cuda_check(r, "cuLaunchCooperativeKernel", err);
  if (rc == LC_OK) lc_cuda_queued();
  return rc;
}

/* Launches take the packed arguments as they are: the driver copies them. */
int lc_cuda_launch(lc_function *f, const lc_launch *cfg, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  if (cfg->shared_bytes > atomic_load_explicit(&f->shared_ok, memory_order_acquire)) {
    rc = allow_shared(f, cfg->shared_bytes, err);
    if (rc != LC_OK) return rc;
  }
  if (cfg->cooperative) return cooperative(f, cfg, err);
  lc_cuda_drain();
  /* a kernel's local memory is reserved at its launch */
  CUresult r;
  LC_CUDA_RETRY_OOM(r, CUDA_ERROR_OUT_OF_MEMORY,
                    lc_cu.LaunchKernel(f->fn, cfg->grid[0], cfg->grid[1], cfg->grid[2],
                                       cfg->block[0], cfg->block[1], cfg->block[2],
                                       cfg->shared_bytes, cfg->stream->s, cfg->args, NULL));
  if (r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) return out_of_resources(f, cfg, err);
  rc = lc_cuda_check(r, "cuLaunchKernel", err);
  if (rc == LC_OK) lc_cuda_queued();
  return rc;
}
