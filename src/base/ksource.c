/*
** ksource: kernel-source options, head and key (ksource.h).
*/
#include "ksource.h"

#include <stdio.h>
#include <string.h>

#include "common.h"
#include "kernels.h"

/* The options that take a value, in NVRTC's spellings: the short form
** (the value fused when fused is set, or after '=', or as the next
** option), the long form (the value after '=', or as the next option),
** and the one spelling every backend is given. */
static const struct valued {
  const char *shrt, *lng, *norm;
  bool fused;
} valued[] = {
  {"-I", "--include-path", "-I", true},
  {"-D", "--define-macro", "-D", true},
  {"-U", "--undefine-macro", "-U", true},
  {"-std", "--std", "-std=", false},
};

/* NVRTC's options whose value may be the next option, which no other
** backend knows: passed as they are, the value with them. */
static const char *const paired[] = {"-include", "--pre-include", "-arch", "--gpu-architecture",
                                     NULL};

/* The dialects both NVRTC and the host compiler know. */
static const char *const dialects[] = {"c++03", "c++11", "c++14", "c++17", "c++20", NULL};

size_t lc_kopts_size(const char *const *in, int nin) {
  size_t n = sizeof(lc_kopts) + sizeof LC_KSOURCE_STD;
  for (int i = 0; i < nin; i++) n += strlen(in[i]) + 16;   /* the longest prefix, a NUL */
  return n;
}

/* Which valued option o is, and its value: in o itself, or the next
** option (*used set then). NULL when o takes no value. */
static const struct valued *valued_option(const char *o, const char *next, const char **value,
                                          bool *used) {
  *used = false;
  for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++) {
    const struct valued *v = &valued[k];
    size_t ls = strlen(v->shrt), ll = strlen(v->lng);
    if (strcmp(o, v->shrt) == 0 || strcmp(o, v->lng) == 0) {
      *value = next;
      *used = true;
    } else if (strncmp(o, v->lng, ll) == 0 && o[ll] == '=') {
      *value = o + ll + 1;
    } else if (strncmp(o, v->shrt, ls) == 0 && o[ls] == '=') {
      *value = o + ls + 1;
    } else if (strncmp(o, v->shrt, ls) == 0 && v->fused) {
      *value = o + ls;
    } else {
      continue;
    }
    return v;
  }
  return NULL;
}

int lc_kopts_normalize(const char *const *in, int nin, lc_kopts *o, char *err) {
  size_t at = 0, cap = lc_kopts_size(in, nin) - sizeof(lc_kopts);
  bool has_std = false;
  o->n = 0;
  o->cap = cap;
  if (nin > LC_KSOURCE_MAXOPTS) {
    return lc_fail(err, -1, "more than %d options", LC_KSOURCE_MAXOPTS);
  }
  for (int i = 0; i < nin; i++) {
    const char *opt = in[i], *value;
    bool used, pair = false;
    for (int k = 0; paired[k]; k++) pair = pair || strcmp(opt, paired[k]) == 0;
    if (pair) {
      o->v[o->n++] = opt;
      if (i + 1 < nin) o->v[o->n++] = in[++i];
      continue;
    }
    const struct valued *v = valued_option(opt, i + 1 < nin ? in[i + 1] : NULL, &value, &used);
    if (v == NULL) {
      /* one spelling of fast math; NVRTC's other options as they are */
      o->v[o->n++] = strcmp(opt, "-use_fast_math") == 0 ? "--use_fast_math" : opt;
      continue;
    }
    if (value == NULL || value[0] == '\0') {
      return lc_fail(err, -1, "option %.100s needs a value", opt);
    }
    if (used) i++;
    if (strcmp(v->norm, "-std=") == 0) {      /* a dialect every backend knows */
      int d = 0;
      while (dialects[d] && strcmp(dialects[d], value) != 0) d++;
      if (dialects[d] == NULL) {
        return lc_fail(err, -1, "option %.100s: the C++ dialect must be one of c++03, c++11, "
                       "c++14, c++17, c++20, got '%.100s'", opt, value);
      }
      has_std = true;
    }
    bool canonical = !used && value == opt + strlen(v->norm) &&
                     strncmp(opt, v->norm, strlen(v->norm)) == 0;
    if (!canonical) {
      int w = snprintf(o->text + at, cap - at, "%s%s", v->norm, value);
      o->v[o->n++] = o->text + at;
      at += (size_t)w + 1;
    } else {
      o->v[o->n++] = opt;
    }
  }
  if (!has_std) o->v[o->n++] = LC_KSOURCE_STD;
  return 0;
}

static const char line_fmt[] = "\n#line 1 \"%s\"\n";

size_t lc_ksource_head_len(const char *name) {
  return strlen(lc_prelude_source) + (size_t)snprintf(NULL, 0, line_fmt, name);
}

void lc_ksource_head(char *out, const char *name) {
  size_t p = strlen(lc_prelude_source);
  memcpy(out, lc_prelude_source, p);
  sprintf(out + p, line_fmt, name);
}

void lc_ksource_key(lc_hash *key, const char *kind, const char *text, size_t len,
                    const char *const *opts, int nopts, const char *identity) {
  lc_hash_init(key);
  lc_hash_add_str(key, kind);
  lc_hash_add(key, text, len);
  lc_hash_add(key, &nopts, sizeof nopts);
  for (int i = 0; i < nopts; i++) lc_hash_add_str(key, opts[i]);
  lc_hash_add_str(key, identity);
}
