/*
** Unit tests for src/deps.c (the record of the headers a compilation read)
** and src/includes.c (the headers an NVRTC compilation may read); run them
** as unit.h says. Each test works in a fresh directory under $TMPDIR.
*/
#define _DEFAULT_SOURCE      /* mkdtemp */
#include "deps.h"
#include "includes.h"

#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char dir[512];

static void fresh_dir(void) {
  const char *t = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/deps_test-XXXXXX", t && *t ? t : "/tmp");
  if (mkdtemp(dir) == NULL) abort();
}

static void cleanup(void) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) abort();
}

/* dir/name, in a static buffer (one of 4, in turn) */
static const char *at(const char *name) {
  static char bufs[4][700];
  static int k;
  char *b = bufs[k++ % 4];
  snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
  return b;
}

static void write_file(const char *name, const char *text) {
  FILE *f = fopen(at(name), "w");
  if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) abort();
}

/* Is path recorded in d, and as what? -1: not recorded. */
static int kind_of(const lc_deps *d, const char *path) {
  size_t pos = 0;
  lc_dep e;
  while (lc_deps_next(d->rec.p, d->rec.n, &pos, &e))
    if (strcmp(e.path, path) == 0) return (int)e.kind;
  return -1;
}

/* A file's record holds while it is unchanged, and not after an edit, a
** removal, or the appearance of one recorded as absent. */
static int test_record_and_check(void) {
  fresh_dir();
  write_file("a.h", "#define A 1\n");
  lc_deps d = {0};
  CHECK(lc_deps_add(&d, at("a.h")));
  CHECK(!lc_deps_add(&d, at("b.h")));          /* absent */
  CHECK(!lc_deps_add(&d, at("a.h")));          /* recorded once */
  CHECK_EQ(d.count, 2);
  CHECK(!d.failed);
  CHECK_EQ(kind_of(&d, at("a.h")), LC_DEP_FILE);
  CHECK_EQ(kind_of(&d, at("b.h")), LC_DEP_ABSENT);
  CHECK(lc_deps_check(d.rec.p, d.rec.n));
  write_file("a.h", "#define A 2\n");          /* same size, other contents */
  CHECK(!lc_deps_check(d.rec.p, d.rec.n));
  write_file("a.h", "#define A 1\n");
  CHECK(lc_deps_check(d.rec.p, d.rec.n));
  write_file("b.h", "");                        /* one in front of another */
  CHECK(!lc_deps_check(d.rec.p, d.rec.n));
  CHECK_EQ(unlink(at("b.h")), 0);
  CHECK(lc_deps_check(d.rec.p, d.rec.n));
  CHECK_EQ(unlink(at("a.h")), 0);
  CHECK(!lc_deps_check(d.rec.p, d.rec.n));
  /* a truncated record is no record */
  write_file("a.h", "#define A 1\n");
  CHECK(lc_deps_check(d.rec.p, d.rec.n));
  CHECK(!lc_deps_check(d.rec.p, d.rec.n - 1));
  CHECK(lc_deps_check(d.rec.p, 0));
  lc_deps_free(&d);
  cleanup();
  return 0;
}

/* A file changed after the compilation started leaves it unsettled. */
static int test_settled(void) {
  fresh_dir();
  write_file("a.h", "x\n");
  struct timespec before, after;
  clock_gettime(CLOCK_REALTIME, &before);
  lc_deps d = {0};
  lc_deps_add(&d, at("a.h"));
  lc_deps_add(&d, at("gone.h"));
  /* longer than the lag of the kernel's coarse clock, if file times use it */
  struct timespec pause = {0, 50 * 1000 * 1000};
  nanosleep(&pause, NULL);
  clock_gettime(CLOCK_REALTIME, &after);
  CHECK(lc_deps_settled(&d, &after));
  CHECK(lc_deps_settled(&d, &before));          /* a.h was written before it */
  nanosleep(&pause, NULL);
  write_file("a.h", "y\n");
  CHECK(!lc_deps_settled(&d, &after));
  lc_deps_free(&d);
  cleanup();
  return 0;
}

/* The compiler's make rule: escapes, continuations, the source skipped,
** and anything but one rule refused. */
static int test_make_rule(void) {
  fresh_dir();
  write_file("plain.h", "1");
  write_file("with space.h", "2");
  write_file("hash#.h", "3");
  write_file("dollar$.h", "4");
  char rule[8192];
  snprintf(rule, sizeof rule, "lc: %s/kernel.cc %s \\\n %s/with\\ space.h %s/hash\\#.h \\\n"
           "  %s/dollar$$.h\n", dir, at("plain.h"), dir, dir, dir);
  lc_deps d = {0};
  char src[700];
  snprintf(src, sizeof src, "%s/kernel.cc", dir);
  lc_deps_add_rule(&d, rule, strlen(rule), src);
  CHECK(!d.failed);
  CHECK_EQ(d.count, 4);
  CHECK_EQ(kind_of(&d, src), -1);
  CHECK_EQ(kind_of(&d, at("plain.h")), LC_DEP_FILE);
  CHECK_EQ(kind_of(&d, at("with space.h")), LC_DEP_FILE);
  CHECK_EQ(kind_of(&d, at("hash#.h")), LC_DEP_FILE);
  CHECK_EQ(kind_of(&d, at("dollar$.h")), LC_DEP_FILE);
  lc_deps_free(&d);
  /* a directory skipped: every file under it (the simulator's headers,
  ** written beside the source) */
  char top[700], own[720];
  snprintf(top, sizeof top, "%s/", dir);
  snprintf(own, sizeof own, "%s/include/cooperative_groups.h", dir);
  snprintf(rule, sizeof rule, "lc: %s %s %s /luacuda-no-such-dir/x.h\n", src, own,
           at("plain.h"));
  lc_deps k = {0};
  lc_deps_add_rule(&k, rule, strlen(rule), top);
  CHECK(!k.failed);
  CHECK_EQ(k.count, 1);
  CHECK_EQ(kind_of(&k, "/luacuda-no-such-dir/x.h"), LC_DEP_ABSENT);
  lc_deps_free(&k);
  const char *bad[] = {"no rule at all\n", "lc: a.h\nb.h: c.h\n"};
  for (int i = 0; i < 2; i++) {
    lc_deps e = {0};
    lc_deps_add_rule(&e, bad[i], strlen(bad[i]), src);
    CHECK(e.failed);
    lc_deps_free(&e);
  }
  cleanup();
  return 0;
}

/* NVRTC's lookup: "..." from the including file's directory first, then
** the source's own and the -I directories, <...> from those last two;
** nested headers, __has_include, every candidate place recorded. */
static int test_nvrtc_includes(void) {
  fresh_dir();
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/inc/sub' '%s/src'", dir, dir);
  CHECK_EQ(system(cmd), 0);
  write_file("inc/top.h", "#pragma once\n  #  include \"sub/mid.h\"\n#include <top.h>\n");
  write_file("inc/sub/mid.h", "#if __has_include(<maybe.h>)\n#endif\n#include \"leaf.h\"\n");
  write_file("inc/sub/leaf.h", "/* the end */\n");
  write_file("src/local.h", "\n");
  const char *text = "#include \"local.h\"\n#inc\\\nlude <top.h>\n// #include <nope.h>\n"
                     "__global__ void k() {}\n";
  char name[1200], inc[1200];
  snprintf(name, sizeof name, "%s/src/k.cu", dir);
  snprintf(inc, sizeof inc, "-I%s/inc", dir);
  const char *opts[] = {"-arch=sm_90", inc};
  lc_deps d = {0};
  lc_includes_nvrtc(&d, text, strlen(text), name, opts, 2);
  CHECK(!d.failed);
  CHECK_EQ(kind_of(&d, at("src/local.h")), LC_DEP_FILE);
  CHECK_EQ(kind_of(&d, at("inc/local.h")), LC_DEP_ABSENT);
  CHECK_EQ(kind_of(&d, at("src/top.h")), LC_DEP_ABSENT);
  CHECK_EQ(kind_of(&d, at("inc/top.h")), LC_DEP_FILE);
  CHECK_EQ(kind_of(&d, at("inc/sub/mid.h")), LC_DEP_FILE);
  CHECK_EQ(kind_of(&d, at("inc/sub/leaf.h")), LC_DEP_FILE);   /* beside mid.h */
  CHECK_EQ(kind_of(&d, at("inc/leaf.h")), LC_DEP_ABSENT);
  CHECK_EQ(kind_of(&d, at("inc/maybe.h")), LC_DEP_ABSENT);
  CHECK_EQ(kind_of(&d, at("inc/nope.h")), -1);                /* a comment */
  CHECK(lc_deps_check(d.rec.p, d.rec.n));
  write_file("inc/sub/leaf.h", "/* changed */\n");
  CHECK(!lc_deps_check(d.rec.p, d.rec.n));
  lc_deps_free(&d);
  /* without the source's directory, "local.h" is looked for in -I only */
  const char *opts2[] = {"--no-source-include", "--include-path", inc + 2};
  lc_deps e = {0};
  lc_includes_nvrtc(&e, text, strlen(text), name, opts2, 3);
  CHECK(!e.failed);
  CHECK_EQ(kind_of(&e, at("src/local.h")), -1);
  CHECK_EQ(kind_of(&e, at("inc/local.h")), LC_DEP_ABSENT);
  CHECK_EQ(kind_of(&e, at("inc/sub/leaf.h")), LC_DEP_FILE);
  lc_deps_free(&e);
  /* an include by macro cannot be followed */
  const char *macro = "#define H <top.h>\n#include H\n";
  lc_deps f = {0};
  lc_includes_nvrtc(&f, macro, strlen(macro), name, opts, 2);
  CHECK(f.failed);
  lc_deps_free(&f);
  cleanup();
  return 0;
}

/* A function-like macro that stands for __has_include (libcu++'s
** _CCCL_HAS_INCLUDE, in the toolkit's headers) asks too, even where it is
** used before the header defining it is read; one that wraps it again as
** well. A macro operand elsewhere still cannot be followed. */
static int test_has_include_wrappers(void) {
  fresh_dir();
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/inc' '%s/src'", dir, dir);
  CHECK_EQ(system(cmd), 0);
  write_file("inc/use.h", "#if MY_HAS_INCLUDE(<probe.h>) && AGAIN(\"again.h\")\n#endif\n");
  write_file("inc/def.h", "#  define MY_HAS_INCLUDE(_X) __has_include(_X)\n"
                          "#define AGAIN(y) MY_HAS_INCLUDE(y)\n");
  write_file("inc/again.h", "\n");
  const char *text = "#include <use.h>\n#include <def.h>\n";
  char name[1200], inc[1200];
  snprintf(name, sizeof name, "%s/src/k.cu", dir);
  snprintf(inc, sizeof inc, "-I%s/inc", dir);
  const char *opts[] = {inc};
  lc_deps d = {0};
  lc_includes_nvrtc(&d, text, strlen(text), name, opts, 1);
  CHECK(!d.failed);
  CHECK_EQ(kind_of(&d, at("inc/probe.h")), LC_DEP_ABSENT);
  CHECK_EQ(kind_of(&d, at("src/probe.h")), LC_DEP_ABSENT);
  CHECK_EQ(kind_of(&d, at("inc/again.h")), LC_DEP_FILE);
  lc_deps_free(&d);
  const char *bad[] = {"#define H <x.h>\n#if __has_include(H)\n#endif\n",
                       "#define HAS_X __has_include(X_HEADER)\n"};
  for (int i = 0; i < 2; i++) {
    lc_deps e = {0};
    lc_includes_nvrtc(&e, bad[i], strlen(bad[i]), name, opts, 1);
    CHECK(e.failed);
    lc_deps_free(&e);
  }
  cleanup();
  return 0;
}

#define T(name) { #name, test_##name }
static const unit_test tests[] = {
  T(record_and_check), T(settled), T(make_rule), T(nvrtc_includes), T(has_include_wrappers),
};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

int main(int argc, char **argv) {
  (void)err;                  /* unit.h's: these calls report no messages */
  return unit_main("deps_test", tests, NTESTS, argc, argv);
}
