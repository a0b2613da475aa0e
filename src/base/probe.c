/*
** probe: the compiler's answer on struct layouts (probe.h).
*/
#include "probe.h"

#include <stdio.h>
#include <string.h>

int lc_probe_kind(const lc_struct_def *d) {
  if (d->internal) return LC_PROBE_NONE;
  return d->error[0] == '\0' && !d->opaque && d->nmembers > 0 ? LC_PROBE_FULL : LC_PROBE_SIZE;
}

size_t lc_probe_count(const lc_struct_def *d) {
  int kind = lc_probe_kind(d);
  return kind == LC_PROBE_FULL ? 2 + 2 * (size_t)d->nmembers : kind == LC_PROBE_SIZE ? 2 : 0;
}

void lc_probe_initializer(lc_strbuf *b, const lc_struct_def *d, bool nvrtc) {
  const char *tag = d->tagged ? "struct " : "";
  lc_sb_fmt(b, "{sizeof(%s%s), alignof(%s%s)", tag, d->name, tag, d->name);
  if (lc_probe_kind(d) == LC_PROBE_FULL) {
    for (int f = 0; f < d->nmembers; f++) {
      const char *m = d->members[f].name;
      if (nvrtc)
        lc_sb_fmt(b, ", (unsigned long long)((const char *)&((%s%s *)0)->%s - (const char *)0)",
                  tag, d->name, m);
      else
        lc_sb_fmt(b, ", __builtin_offsetof(%s%s, %s)", tag, d->name, m);
      lc_sb_fmt(b, ", sizeof(((%s%s *)0)->%s)", tag, d->name, m);
    }
  }
  lc_sb_str(b, "}");
}

void lc_probe_apply(lc_struct_def *structs, int i, const unsigned long long *v, size_t n) {
  lc_struct_def *d = &structs[i];
  d->conflict[0] = '\0';
  d->probed = LC_PROBE_NONE;
  if (n < 2 || v[0] == 0 || v[1] == 0 || (v[1] & (v[1] - 1)) != 0) return;
  bool full = lc_probe_kind(d) == LC_PROBE_FULL && n == lc_probe_count(d);
  for (int f = 0; full && f < d->nmembers; f++) {
    lc_member *e = &d->members[f];
    if (e->sdef >= 0 && e->sdef < i) e->size = structs[e->sdef].size;   /* as compiled */
    unsigned long long want = (unsigned long long)e->size * (unsigned long long)(e->count ? e->count : 1);
    if (v[3 + 2 * f] != want) {
      snprintf(d->conflict, sizeof d->conflict, "member '%s' takes %llu bytes in the compiled "
               "kernel, luacuda reads %llu (a macro or an #if it cannot see?)", e->name,
               v[3 + 2 * f], want);
      full = false;
    }
  }
  d->size = (int64_t)v[0];
  d->align = (int64_t)v[1];
  d->probed = LC_PROBE_SIZE;
  if (!full) return;
  for (int f = 0; f < d->nmembers; f++) d->members[f].offset = (int64_t)v[2 + 2 * f];
  d->probed = LC_PROBE_FULL;
}

/* a pointer to a struct the scanner did not read */
static bool foreign_pointee(const lc_param *p) {
  return p->kind == LC_PARAM_POINTER && p->type == LC_PARAM_STRUCT && p->sdef < 0 &&
         p->type_name[0] != '\0';
}

bool lc_probe_has_pointees(const lc_kernel_sig *k) {
  if (k->is_template || k->overridden) return false;
  for (int j = 0; j < k->nparams; j++)
    if (foreign_pointee(&k->params[j])) return true;
  return false;
}

void lc_probe_pointees(lc_strbuf *b, const lc_kernel_sig *k) {
  lc_sb_str(b, "{");
  for (int j = 0; j < k->nparams; j++) {
    const lc_param *p = &k->params[j];
    if (foreign_pointee(p))
      lc_sb_fmt(b, "%s__lc_pointee<%s>::size, __lc_pointee<%s>::align", j ? ", " : "",
                p->type_name, p->type_name);
    else
      lc_sb_fmt(b, "%s0, 0", j ? ", " : "");
  }
  lc_sb_str(b, "}");
}
