/*
** pch: the simulator's precompiled head. Every module's text starts with
** the same head (the ABI, the CPU runtime, the math API and the prelude),
** whose parsing is most of a small kernel's compile. With GCC and a disk
** cache, the head is precompiled once per compiler, flags and head text
** into a cache entry (pch-<key>.gch), which each compile then reads in
** place of the text.
**
** What makes this safe:
** - the module includes the head by name from its own directory, where
**   the text always is: GCC takes the .gch beside it only when it finds it
**   valid for this compile (its own version, the same flags, no macro
**   defined differently that the head uses), and else reads the text;
** - the entry is checked like every cache entry (owner, mode, trailer,
**   checksum, the headers it read) before the compile links to it, so a
**   corrupt, truncated or foreign file is rebuilt, never given to GCC (which
**   trusts what passes its header check);
** - it is written through a temporary file renamed into place, so several
**   processes may build it at once: each compile links to a whole file;
** - the headers it read are added to the module's record (GCC's -MD lists
**   only what was read outside the precompiled head).
** Clang reads precompiled headers in its own format, and rejects rather
** than ignores one it cannot use: it gets the text.
*/
#include "sim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "deps.h"
#include "env.h"
#include "strbuf.h"

/* Whether the compiler's own description is GCC's (Clang's never names
** the FSF). */
static bool is_gcc(const char *identity) {
  return strstr(identity, "Free Software Foundation") != NULL;
}

static void pch_key(lc_hash *key, const char *head, size_t n, const char *const *flags,
                    int nflags, const char *identity) {
  lc_hash_init(key);
  lc_hash_add_str(key, "sim pch 1");
  lc_hash_add(key, head, n);
  lc_hash_add(key, &nflags, sizeof nflags);
  for (int i = 0; i < nflags; i++) lc_hash_add_str(key, flags[i]);
  lc_hash_add_str(key, identity);
}

/* Run flags + tail + in, reading the headers its depfile names (besides
** dir's own) and those of extra (a deps.h record) into *deps; the output
** at out. Whether it succeeded, its headers settled. */
static bool run_recorded(const char *const *flags, int nflags, const char *const *tail,
                         const char *dir, const char *depfile, const void *extra,
                         size_t nextra, lc_deps *deps) {
  const char *argv[LC_SIM_PCH_MAXFLAGS + 16];
  int n = 0;
  for (int i = 0; i < nflags; i++) argv[n++] = flags[i];
  for (int i = 0; tail[i]; i++) argv[n++] = tail[i];
  argv[n] = NULL;
  char own[600], err[LC_ERRLEN];
  snprintf(own, sizeof own, "%s/", dir);
  struct timespec start;
  clock_gettime(CLOCK_REALTIME, &start);
  lc_strbuf log = {0}, rule = {0};
  bool ok = lc_sim_run_compiler(argv, &log, err) == 0 && lc_sim_read_file(&rule, depfile);
  if (ok) {
    lc_deps_add_rule(deps, rule.p, rule.n, own);
    size_t at = 0;
    lc_dep e;
    while (lc_deps_next(extra, nextra, &at, &e)) lc_deps_add(deps, e.path);
    ok = !deps->failed && lc_deps_settled(deps, &start);
  }
  unlink(depfile);
  free(log.p);
  free(rule.p);
  return ok;
}

/* Precompile dir's head into dir/head.gch and store it in the cache. */
static void build(const char *dir, const char *const *flags, int nflags, const lc_hash *key) {
  char in[600], out[600], depfile[600];
  snprintf(in, sizeof in, "%s/" LC_SIM_PCH_HEAD, dir);
  snprintf(out, sizeof out, "%s/head.gch", dir);
  snprintf(depfile, sizeof depfile, "%s/head.d", dir);
  const char *tail[] = {"-x", "c++-header", "-MD", "-MF", depfile, "-MT", "lc", "-o", out, in,
                        NULL};
  lc_strbuf data = {0};
  lc_deps deps = {0};
  char err[LC_ERRLEN];
  /* a head that does not precompile compiles as text: its errors are the
  ** module's compile's to report */
  if (run_recorded(flags, nflags, tail, dir, depfile, NULL, 0, &deps) &&
      lc_sim_read_file(&data, out))
    lc_cache_store("pch", key, ".gch", data.p, data.n, &deps, err);
  unlink(out);
  lc_deps_free(&deps);
  free(data.p);
}

int lc_sim_pch(const char *dir, const char *head, size_t n, const char *const *flags,
               int nflags, const char *identity, void **rec, size_t *nrec, char *err) {
  *rec = NULL;
  *nrec = 0;
  char path[600], gch[4200];
  if (!lc_settings_get()->sim_pch || !is_gcc(identity) || lc_cache_dir() == NULL ||
      nflags > LC_SIM_PCH_MAXFLAGS)
    return 0;
  snprintf(path, sizeof path, "%s/" LC_SIM_PCH_HEAD, dir);
  if (lc_sim_write_file(path, head, n, err) != 0) return -1;
  lc_hash key;
  pch_key(&key, head, n, flags, nflags, identity);
  bool have = lc_cache_check("pch", &key, ".gch", gch, sizeof gch, rec, nrec);
  if (!have) {
    build(dir, flags, nflags, &key);
    have = lc_cache_check("pch", &key, ".gch", gch, sizeof gch, rec, nrec);
  }
  /* GCC looks for head.gch beside the head: a link to the entry checked */
  snprintf(path, sizeof path, "%s/" LC_SIM_PCH_HEAD ".gch", dir);
  if (have && symlink(gch, path) != 0) {
    free(*rec);
    *rec = NULL;
    *nrec = 0;
    have = false;
  }
  return have;
}

/* ---- the runtime's object --------------------------------------------------- */

int lc_sim_runtime_object(const char *dir, const char *head, size_t nhead, const char *impl,
                          size_t nimpl, const char *const *flags, int nflags,
                          const char *identity, const void *head_rec, size_t nrec) {
  lc_hash key;
  pch_key(&key, head, nhead, flags, nflags, identity);
  lc_hash_add_str(&key, "sim runtime 1");
  lc_hash_add(&key, impl, nimpl);
  char obj[600], err[LC_ERRLEN];
  snprintf(obj, sizeof obj, "%s/" LC_SIM_RT_OBJECT, dir);
  size_t len;
  unsigned char *image = lc_cache_load("simrt", &key, ".o", &len);
  if (image) {           /* the bytes checked, into this compile's directory */
    bool ok = lc_sim_write_file(obj, (const char *)image, len, err) == 0;
    free(image);
    return ok;
  }
  char in[600], depfile[600];
  snprintf(in, sizeof in, "%s/runtime.cc", dir);
  snprintf(depfile, sizeof depfile, "%s/runtime.d", dir);
  lc_strbuf text = {0}, data = {0};
  lc_sb_str(&text, "#line 1 \"luacuda/sim\"\n#include \"" LC_SIM_PCH_HEAD "\"\n"
            "#line 1 \"luacuda/sim_runtime_impl.h\"\n");
  lc_sb_add(&text, impl, nimpl);
  const char *tail[] = {"-c", "-MD", "-MF", depfile, "-MT", "lc", "-o", obj, in, NULL};
  lc_deps deps = {0};
  bool ok = !text.oom && lc_sim_write_file(in, text.p, text.n, err) == 0 &&
            run_recorded(flags, nflags, tail, dir, depfile, head_rec, nrec, &deps);
  /* what was just compiled is used, whether or not the cache takes it */
  if (ok && lc_sim_read_file(&data, obj))
    lc_cache_store("simrt", &key, ".o", data.p, data.n, &deps, err);
  unlink(in);
  lc_deps_free(&deps);
  free(text.p);
  free(data.p);
  if (!ok) unlink(obj);
  return ok;
}
