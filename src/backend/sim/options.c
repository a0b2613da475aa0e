/*
** options: what the simulator does with each compile option (options=),
** so that none is silently dropped. Options come normalised (ksource.h):
** -D, -U, -I, -std= and --use_fast_math the host compiler honours
** (compile.c); NVRTC's options for a GPU's code or for diagnostics change
** nothing the simulator computes and are taken; those that change
** floating-point results on a GPU (flush-to-zero, approximate division and
** square root, fused multiply-add) are warned about once per process, on
** stderr, where they ask for what the simulator does not do; an option in
** neither list is refused.
*/
#include "sim.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

typedef enum {
  HONOURED,        /* the host compiler is given it */
  NO_EFFECT,       /* code generation for a GPU, or diagnostics */
  NEXT_VALUE,      /* NO_EFFECT, and its value may be the next option */
  RESULTS,         /* changes results on a GPU: warned about unless its value is
                   ** what the simulator does (same) */
  REFUSED          /* the simulator cannot honour it, and it matters */
} treatment;

static const struct option_rule {
  const char *name;             /* the spelling before any '=' */
  treatment what;
  const char *same;             /* RESULTS: the value the simulator computes as */
  const char *why;              /* RESULTS, REFUSED: for the message */
} rules[] = {
  {"-D", HONOURED, NULL, NULL}, {"-U", HONOURED, NULL, NULL}, {"-I", HONOURED, NULL, NULL},
  {"-std", HONOURED, NULL, NULL}, {"--use_fast_math", HONOURED, NULL, NULL},
  {"-arch", NEXT_VALUE, NULL, NULL}, {"--gpu-architecture", NEXT_VALUE, NULL, NULL},
  {"-G", NO_EFFECT, NULL, NULL}, {"--device-debug", NO_EFFECT, NULL, NULL},
  /* line tables (-g1): a fault names the source line (lines.c) */
  {"-lineinfo", HONOURED, NULL, NULL}, {"--generate-line-info", HONOURED, NULL, NULL},
  {"-maxrregcount", NO_EFFECT, NULL, NULL}, {"--maxrregcount", NO_EFFECT, NULL, NULL},
  {"-dopt", NO_EFFECT, NULL, NULL}, {"--dopt", NO_EFFECT, NULL, NULL},
  {"-Xptxas", NO_EFFECT, NULL, NULL}, {"--ptxas-options", NO_EFFECT, NULL, NULL},
  {"-rdc", NO_EFFECT, NULL, NULL}, {"--relocatable-device-code", NO_EFFECT, NULL, NULL},
  {"-dc", NO_EFFECT, NULL, NULL}, {"--device-c", NO_EFFECT, NULL, NULL},
  {"-dw", NO_EFFECT, NULL, NULL}, {"--device-w", NO_EFFECT, NULL, NULL},
  {"-ewp", NO_EFFECT, NULL, NULL}, {"--extensible-whole-program", NO_EFFECT, NULL, NULL},
  {"-extra-device-vectorization", NO_EFFECT, NULL, NULL},
  {"--extra-device-vectorization", NO_EFFECT, NULL, NULL},
  {"-modify-stack-limit", NO_EFFECT, NULL, NULL}, {"--modify-stack-limit", NO_EFFECT, NULL, NULL},
  {"-dlto", NO_EFFECT, NULL, NULL}, {"--dlink-time-opt", NO_EFFECT, NULL, NULL},
  {"-jtd", NO_EFFECT, NULL, NULL}, {"--jump-table-density", NO_EFFECT, NULL, NULL},
  {"-device-stack-protector", NO_EFFECT, NULL, NULL},
  {"--device-stack-protector", NO_EFFECT, NULL, NULL},
  {"-w", NO_EFFECT, NULL, NULL}, {"--disable-warnings", NO_EFFECT, NULL, NULL},
  {"-restrict", NO_EFFECT, NULL, NULL}, {"--restrict", NO_EFFECT, NULL, NULL},
  /* host functions are callable from kernels on the simulator anyway */
  {"-default-device", NO_EFFECT, NULL, NULL},
  {"--device-as-default-execution-space", NO_EFFECT, NULL, NULL},
  {"-device-int128", NO_EFFECT, NULL, NULL}, {"--device-int128", NO_EFFECT, NULL, NULL},
  {"-opt-info", NO_EFFECT, NULL, NULL}, {"--optimization-info", NO_EFFECT, NULL, NULL},
  {"-err-no", NO_EFFECT, NULL, NULL}, {"--display-error-number", NO_EFFECT, NULL, NULL},
  {"-no-err-no", NO_EFFECT, NULL, NULL}, {"--no-display-error-number", NO_EFFECT, NULL, NULL},
  {"-diag-error", NO_EFFECT, NULL, NULL}, {"--diag-error", NO_EFFECT, NULL, NULL},
  {"-diag-suppress", NO_EFFECT, NULL, NULL}, {"--diag-suppress", NO_EFFECT, NULL, NULL},
  {"-diag-warn", NO_EFFECT, NULL, NULL}, {"--diag-warn", NO_EFFECT, NULL, NULL},
  {"-brief-diag", NO_EFFECT, NULL, NULL}, {"--brief-diagnostics", NO_EFFECT, NULL, NULL},
  {"-time", NO_EFFECT, NULL, NULL}, {"--time", NO_EFFECT, NULL, NULL},
  {"-split-compile", NO_EFFECT, NULL, NULL}, {"--split-compile", NO_EFFECT, NULL, NULL},
  {"-Ofc", NO_EFFECT, NULL, NULL}, {"--Ofast-compile", NO_EFFECT, NULL, NULL},
  {"-ftz", RESULTS, "false", "flush-to-zero of single-precision denormals"},
  {"--ftz", RESULTS, "false", "flush-to-zero of single-precision denormals"},
  {"-prec-div", RESULTS, "true", "approximate single-precision division"},
  {"--prec-div", RESULTS, "true", "approximate single-precision division"},
  {"-prec-sqrt", RESULTS, "true", "approximate single-precision square root"},
  {"--prec-sqrt", RESULTS, "true", "approximate single-precision square root"},
  {"-fmad", RESULTS, "false", "fused multiply-add"},
  {"--fmad", RESULTS, "false", "fused multiply-add"},
  {"-include", REFUSED, NULL, "#include the header at the top of the source instead"},
  {"--pre-include", REFUSED, NULL, "#include the header at the top of the source instead"},
};

#define NRULES (sizeof rules / sizeof rules[0])

/* the rows warned about already: once per process, from any thread */
static atomic_bool warned[NRULES];

/* The rule for option o (its name up to '=', or a fused -D/-U/-I), with
** its value in *value (NULL when none is fused or given after '='). */
static const struct option_rule *rule_of(const char *o, const char **value) {
  const char *eq = strchr(o, '=');
  size_t n = eq ? (size_t)(eq - o) : strlen(o);
  *value = eq ? eq + 1 : NULL;
  for (size_t i = 0; i < NRULES; i++) {
    const char *r = rules[i].name;
    if (strlen(r) == n && strncmp(o, r, n) == 0) return &rules[i];
    if (rules[i].what == HONOURED && strlen(r) == 2 && strncmp(o, r, 2) == 0) return &rules[i];
  }
  return NULL;
}

static void warn_once(const struct option_rule *r, const char *o) {
  if (atomic_exchange(&warned[r - rules], true)) return;
  char line[512];
  int n = snprintf(line, sizeof line, "luacuda: the simulator does not honour %.100s (%s): "
                   "it computes as with %.40s=%s; the CUDA backend honours it\n", o, r->why,
                   r->name, r->same);
  if (n > (int)sizeof line - 1) n = (int)sizeof line - 1;
  fwrite(line, 1, (size_t)n, stderr);
  fflush(stderr);
}

int lc_sim_check_options(const lc_source *src, char *err) {
  for (int i = 0; i < src->noptions; i++) {
    const char *o = src->options[i], *value;
    const struct option_rule *r = rule_of(o, &value);
    if (r == NULL) {
      return lc_fail(err, -1, "option %.100s is not one the simulator knows: it honours -D, "
                     "-U, -I, -std and -use_fast_math, and takes NVRTC's options for a GPU's code "
                     "(-arch, -lineinfo, -maxrregcount, ...), -ftz, -prec-div, -prec-sqrt and -fmad "
                     "(docs/guide/kernels.md, \"Compile options\")", o);
    }
    if (r->what == REFUSED) {
      return lc_fail(err, -1, "option %.100s cannot be honoured by the simulator: %s", o,
                     r->why);
    }
    if (r->what == NEXT_VALUE && value == NULL) i++;   /* -arch compute_80 */
    if (r->what == RESULTS && (value == NULL || strcmp(value, r->same) != 0))
      warn_once(r, o);
  }
  return 0;
}
