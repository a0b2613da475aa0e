/*
** check: the simulator's parity check with NVRTC. The host compiler
** accepts more than NVRTC does (the C and C++ libraries, GNU extensions,
** host-only functions), so where NVRTC can be loaded every kernel the
** simulator compiles is compiled by NVRTC too, exactly as the CUDA backend
** would compile it (the text and options of nvrtc.h: the prelude head, the
** user's source, the user's options, the toolkit's headers), into PTX for
** the simulator's architecture (compute_75, its __CUDA_ARCH__), on a
** thread of its own while the host compiler runs. What NVRTC rejects, the
** simulator rejects with NVRTC's log, whose lines are the user's (the head
** ends in a #line directive). LUACUDA_NVRTC_CHECK=0 turns the check off;
** where NVRTC cannot be loaded there is none.
**
** Options: NVRTC is given every option, as on the CUDA backend (its own,
** such as -default-device, too; one it does not know is its error, as
** there); the host compiler only those that mean the same to it
** (compile.c).
**
** A check passed is remembered in the disk cache: an empty entry keyed by
** what NVRTC compiled, how and by which NVRTC, with the headers it may read
** (includes.h). NVRTC's version and toolkit are known without loading it
** (lc_nvrtc_facts_get), so a module compiled and checked before is a hit
** that never loads NVRTC. A check that failed is not remembered.
*/
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "common.h"
#include "deps.h"
#include "env.h"
#include "includes.h"
#include "ksource.h"
#include "nvrtc.h"
#include "std_headers.h"

/* the simulator's architecture (sim_runtime.h's __CUDA_ARCH__) */
#define CHECK_ARCH 75

/* What the check of src needs: the text, options and key, and whether a
** pass is remembered. LC_OK with *todo false when there is nothing to
** check; LC_ENOMEM. */
typedef struct plan {
  bool todo;
  lc_nvrtc_facts facts;
  char *text;
  size_t len;
  char arch[32];
  const char *opts[LC_NVRTC_MAXOPTS];
  int nopts;
  lc_hash key;
} plan;

static int prepare(plan *p, const lc_source *src, char *err) {
  p->todo = false;
  p->text = NULL;
  char nerr[LC_NVRTC_ERRLEN];
  if (!lc_settings_get()->nvrtc_check || lc_nvrtc_facts_get(&p->facts, nerr) != LC_OK)
    return LC_OK;                /* off, or no NVRTC: nothing changes */
  int arch;
  if (lc_nvrtc_arch_pick(&p->facts, CHECK_ARCH, &arch, nerr) != LC_OK) {
    arch = p->facts.archs[0];    /* it knows none as old: the oldest it knows */
    for (int i = 1; i < p->facts.narchs; i++)
      if (p->facts.archs[i] < arch) arch = p->facts.archs[i];
  }
  snprintf(p->arch, sizeof p->arch, "-arch=compute_%d", arch);
  p->nopts = lc_nvrtc_options(p->opts, p->arch, src->options, src->noptions, &p->facts);
  p->text = lc_nvrtc_text(src, &p->len);
  if (p->text == NULL) {
    return lc_fail(err, LC_ENOMEM, "out of host memory");
  }
  char identity[64];
  snprintf(identity, sizeof identity, "NVRTC %d.%d", p->facts.major, p->facts.minor);
  lc_ksource_key(&p->key, "nvrtc check 1", p->text, p->len, p->opts, p->nopts, identity);
  lc_std_headers_key(&p->key);             /* NVRTC's standard headers are ours */
  size_t n;
  unsigned char *seen = lc_cache_load("nvrtc", &p->key, ".checked", &n);
  p->todo = seen == NULL;
  free(seen);
  return LC_OK;
}

/* Compile p's text with NVRTC; remember a pass. */
static int run_plan(plan *p, const lc_source *src, char **log, char *err) {
  lc_deps deps = {0};
  struct timespec start;
  clock_gettime(CLOCK_REALTIME, &start);
  bool caching = lc_cache_dir() != NULL;
  if (caching) lc_includes_nvrtc(&deps, p->text, p->len, src->name, p->opts, p->nopts);
  char nerr[LC_NVRTC_ERRLEN], *ptx = NULL;
  size_t ptxlen;
  int rc = lc_nvrtc_compile(p->text, src->name, p->opts, p->nopts, LC_NVRTC_PTX, &ptx, &ptxlen,
                            log, nerr);
  free(ptx);
  if (rc == LC_OK) {
    free(*log);                  /* warnings: not reported for a module that loads */
    *log = NULL;
    char ignored[LC_ERRLEN];
    if (caching && !deps.failed && lc_deps_settled(&deps, &start))
      lc_cache_store("nvrtc", &p->key, ".checked", "", 0, &deps, ignored);
  } else if (rc == LC_ENOTSUP) {
    rc = LC_OK;                  /* remembered facts, but NVRTC is gone: no check */
  } else if (rc == LC_ENOMEM) {
    lc_errf(err, "%.500s", nerr);
  } else {
    /* NVRTC's log, or what failed when it wrote none */
    if (*log == NULL) *log = strdup(nerr);
    lc_errf(err, "compilation of %.200s failed: NVRTC rejects it, so it would not "
            "compile for a GPU (the simulator checks every kernel with NVRTC; "
            "LUACUDA_NVRTC_CHECK=0 turns this off)", src->name);
  }
  lc_deps_free(&deps);
  return rc;
}

int lc_sim_check(const lc_source *src, char **log, char *err) {
  *log = NULL;
  plan p;
  int rc = prepare(&p, src, err);
  if (rc == LC_OK && p.todo) rc = run_plan(&p, src, log, err);
  free(p.text);
  return rc;
}

static void *check_thread(void *arg) {
  lc_sim_checker *c = arg;
  c->rc = lc_sim_check(c->src, &c->log, c->err);
  return NULL;
}

void lc_sim_check_start(lc_sim_checker *c, const lc_source *src) {
  c->src = src;
  c->log = NULL;
  c->err[0] = '\0';
  pthread_attr_t attr;
  /* NVRTC's front end recurses as deep as the templates it reads */
  c->started = pthread_attr_init(&attr) == 0;
  if (c->started) {
    pthread_attr_setstacksize(&attr, (size_t)64 << 20);
    c->started = pthread_create(&c->thread, &attr, check_thread, c) == 0;
    pthread_attr_destroy(&attr);
  }
}

int lc_sim_check_wait(lc_sim_checker *c, char **log, char *err) {
  if (c->started) pthread_join(c->thread, NULL);
  else check_thread(c);          /* no thread to be had: the check, here */
  *log = c->log;
  c->log = NULL;
  if (c->rc != LC_OK) lc_errf(err, "%s", c->err);
  return c->rc;
}
