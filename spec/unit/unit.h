/*
** unit.h: what the C unit test programs share: checks that stop a test
** with a message (file:line, expression and values), and a main that lists
** the tests, runs one by name, or runs them all.
**
**   prog --list   the test names, one a line
**   prog NAME     run one test: exit 0, or print the failing check and exit 1
**   prog          run them all: "ok NAME" / "not ok NAME: reason"
**
** A test is `static int name(void)` returning 0; err receives the message
** of the last call checked with CHECK_OK / CHECK_ERR.
*/
#ifndef LUACUDA_UNIT_H
#define LUACUDA_UNIT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/base/common.h"   /* LC_ERRLEN */

static char why[2048];          /* the first failed check of a test */
static char err[LC_ERRLEN];     /* the message of the last checked call */

__attribute__((format(printf, 3, 4)))
static int failf(const char *file, int line, const char *fmt, ...) {
  int n = snprintf(why, sizeof why, "%s:%d: ", file, line);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why + n, sizeof why - (size_t)n, fmt, ap);
  va_end(ap);
  return 1;
}

#define CHECK(c) do { \
    if (!(c)) return failf(__FILE__, __LINE__, "CHECK(%s) failed", #c); \
  } while (0)

#define CHECK_EQ(got, want) do { \
    long long g_ = (long long)(got), w_ = (long long)(want); \
    if (g_ != w_) \
      return failf(__FILE__, __LINE__, "%s is %lld, expected %lld", #got, g_, w_); \
  } while (0)

#define CHECK_STR(got, want) do { \
    const char *g_ = (got), *w_ = (want); \
    if (strcmp(g_, w_) != 0) \
      return failf(__FILE__, __LINE__, "%s is \"%s\", expected \"%s\"", #got, g_, w_); \
  } while (0)

/* call returns 0 (the tested calls report failure as -1 with a message) */
#define CHECK_OK(call) do { \
    err[0] = '\0'; \
    int rc_ = (call); \
    if (rc_ != 0) \
      return failf(__FILE__, __LINE__, "%s returned %d: %s", #call, rc_, err); \
  } while (0)

/* call fails (-1) with a message that contains msg */
#define CHECK_ERR(call, msg) do { \
    strcpy(err, "(no message)"); \
    int rc_ = (call); \
    if (rc_ != -1) \
      return failf(__FILE__, __LINE__, "%s returned %d, expected an error containing \"%s\"", \
                   #call, rc_, msg); \
    if (!strstr(err, msg)) \
      return failf(__FILE__, __LINE__, "%s: error \"%s\" does not contain \"%s\"", \
                   #call, err, msg); \
  } while (0)

typedef struct unit_test {
  const char *name;
  int (*fn)(void);
} unit_test;

static int unit_run(const unit_test *t) {
  why[0] = '\0';
  int rc = t->fn();
  if (rc == 0) printf("ok %s\n", t->name);
  else printf("not ok %s: %s\n", t->name, why);
  return rc;
}

static int unit_main(const char *prog, const unit_test *tests, int n, int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--list") == 0) {
    for (int i = 0; i < n; i++) puts(tests[i].name);
    return 0;
  }
  if (argc == 2) {
    for (int i = 0; i < n; i++)
      if (strcmp(argv[1], tests[i].name) == 0) return unit_run(&tests[i]) ? 1 : 0;
    fprintf(stderr, "%s: no test named %s (see --list)\n", prog, argv[1]);
    return 2;
  }
  if (argc > 2) {
    fprintf(stderr, "usage: %s [--list | NAME]\n", prog);
    return 2;
  }
  int failed = 0;
  for (int i = 0; i < n; i++) failed += unit_run(&tests[i]) != 0;
  printf("%d of %d tests failed\n", failed, n);
  return failed ? 1 : 0;
}

#endif
