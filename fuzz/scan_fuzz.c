/*
** libFuzzer target for src/base/scan*.c, the reader of untrusted kernel source.
** The input is scanned as source (from an exact-size copy, no terminating
** NUL, so AddressSanitizer sees any read past the end) and parsed as a
** signatures= override. Beyond "no crash", every result is checked well
** formed: counting and filling agree, every range lies inside the source
** and every string is terminated.
*/
#include "scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, __VA_ARGS__); \
                                      fprintf(stderr, "\n"); abort(); } } while (0)
#define TERMINATED(s) (memchr((s), '\0', sizeof(s)) != NULL)

#define MAXK 8
#define MAXS 8
#define MAXG 8
static lc_kernel_sig ks[MAXK];
static lc_shared_decl sh[MAXS];
static lc_global_decl gl[MAXG];
#define MAXST 8
static lc_struct_def sts[MAXST];

static void check_sig(const lc_kernel_sig *k, size_t len, bool from_source) {
  CHECK(TERMINATED(k->name) && TERMINATED(k->error), "kernel strings not terminated");
  CHECK(k->nparams >= -1 && k->nparams <= LC_MAXPARAMS, "nparams %d", k->nparams);
  CHECK((k->nparams >= 0) == (k->error[0] == '\0') || !from_source,
        "nparams %d but error \"%s\"", k->nparams, k->error);
  for (int i = 0; i < k->nparams; i++) {
    const lc_param *p = &k->params[i];
    CHECK(TERMINATED(p->name) && TERMINATED(p->spelling) && TERMINATED(p->type_name),
          "parameter strings not terminated");
    CHECK(p->size > 0 && p->align > 0 && p->size % p->align == 0,
          "parameter %d: size %lld, align %lld", i, (long long)p->size, (long long)p->align);
    CHECK(p->kind != LC_PARAM_ARRAY || (p->ndim >= 1 && p->ndim <= LC_MAXDIM),
          "Array parameter with ndim %d", p->ndim);
  }
  if (from_source) {
    CHECK(k->body_begin < k->body_end && k->body_end < len, "body [%zu, %zu] of %zu bytes",
          k->body_begin, k->body_end, len);
    CHECK(k->line >= 1, "line %d", k->line);
  }
}

static void check_result(const char *src, size_t len, const lc_scan_result *r) {
  for (int i = 0; i < r->nkernels; i++) {
    const lc_kernel_sig *k = &r->kernels[i];
    check_sig(k, len, true);
    CHECK(src[k->body_begin] == '{' && src[k->body_end] == '}', "body is not braced");
  }
  for (int i = 0; i < r->nshared; i++) {
    const lc_shared_decl *d = &r->shared[i];
    CHECK(d->begin <= d->decl_begin && d->decl_begin <= d->decl_end && d->decl_end <= d->end &&
          d->end <= len && d->begin < d->end && src[d->end - 1] == ';',
          "shared declaration range [%zu, %zu) of %zu bytes", d->begin, d->end, len);
    CHECK(i == 0 || r->shared[i - 1].begin <= d->begin, "shared entries out of order");
    CHECK(d->kernel >= -1 && d->kernel < r->nkernels, "shared kernel index %d", d->kernel);
    CHECK(TERMINATED(d->name) && TERMINATED(d->type) && TERMINATED(d->dims) &&
          TERMINATED(d->declarator) && TERMINATED(d->text), "shared strings not terminated");
  }
  for (int i = 0; i < r->nglobals; i++) {
    const lc_global_decl *g = &r->globals[i];
    CHECK(g->begin < g->end && g->end <= len, "global range [%zu, %zu)", g->begin, g->end);
    CHECK(g->ndim >= -1 && g->ndim <= 3, "global ndim %d", g->ndim);
    for (int k = 0; k < g->ndim; k++) CHECK(g->dims[k] >= 0, "negative global dimension");
    CHECK(TERMINATED(g->name) && TERMINATED(g->type_text), "global strings not terminated");
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[LC_ERRLEN];
  char *src = malloc(size ? size : 1);
  if (!src) abort();
  memcpy(src, data, size);

  /* counting (no arrays) must fail exactly where filling fails */
  lc_scan_result cnt = {0};
  int rc = lc_scan(src, size, &cnt, err);
  CHECK(rc == 0 || (rc == -1 && TERMINATED(err) && err[0]), "lc_scan returned %d", rc);
  lc_scan_result r = {ks, MAXK, 0, sh, MAXS, 0, gl, MAXG, 0, sts, MAXST, 0};
  int rc2 = lc_scan(src, size, &r, err);
  CHECK(rc2 == 0 || (rc2 == -1 && TERMINATED(err) && err[0]), "lc_scan returned %d", rc2);
  if (rc == 0 && cnt.nkernels <= MAXK && cnt.nshared <= MAXS && cnt.nglobals <= MAXG &&
      cnt.nstructs <= MAXST) {
    CHECK(rc2 == 0, "counting succeeded, filling failed: %s", err);
    CHECK(cnt.nkernels == r.nkernels && cnt.nshared == r.nshared && cnt.nglobals == r.nglobals &&
          cnt.nstructs == r.nstructs,
          "counts differ");
  }
  if (rc2 == 0) check_result(src, size, &r);

  int nk = -1;
  if (lc_scan_kernels(src, size, ks, MAXK, &nk, err) == 0) {
    CHECK(nk >= 0 && nk <= MAXK, "lc_scan_kernels gave %d", nk);
    for (int i = 0; i < nk; i++) check_sig(&ks[i], size, true);
  }

  /* the same bytes as a signatures= override: a failure changes nothing */
  static lc_kernel_sig sig, before;
  memset(&sig, 0, sizeof sig);
  strcpy(sig.name, "k");
  sig.nparams = 7;
  before = sig;
  if (lc_parse_signature(src, size, &sig, err) == 0) {
    check_sig(&sig, size, false);
    CHECK(sig.error[0] == '\0', "a parsed signature keeps an error");
  } else {
    CHECK(TERMINATED(err) && err[0], "no message");
    CHECK(memcmp(&sig, &before, sizeof sig) == 0, "a failed parse changed the signature");
  }
  free(src);
  return 0;
}
