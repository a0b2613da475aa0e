/*
** origin: where an array's memory came from, told to a backend that checks
** kernels' accesses (the simulator's memory checking): its dtype, its shape
** and the line of the script that allocated it, so a kernel that runs past
** it gets a message naming it. The line is the first Lua function on the
** stack outside luacuda's own Lua files (lua/luacuda/), which wrap some
** constructors. Where the backend keeps the line for arrays made by name
** only (backend.h, mem_labels), array math's results are named by their
** operation instead: finding the line is lua_getinfo's walk of the
** function's line table, as long as a + b on a small array itself.
*/
#include "array.h"

#include <stdio.h>
#include <string.h>

/* luacuda's own Lua files: chunk names "@.../luacuda/<name>.lua" */
static bool ours(const char *src) {
  size_t len = strlen(src);
  const char *slash = strrchr(src, '/');
  if (slash == NULL || len < 4 || strcmp(src + len - 4, ".lua") != 0) return false;
  size_t at = (size_t)(slash - src);     /* "luacuda" would end there */
  if (at < 7 || strncmp(slash - 7, "luacuda", 7) != 0) return false;
  return at == 7 || slash[-8] == '/' || slash[-8] == '@';
}

/* The last label made on this thread and what it was made of: a loop that
** makes arrays of one dtype and shape at one line (most allocations) takes
** its text again instead of formatting it each time. Its chunk's full name
** (source), when it fits, also says at once that a frame of that chunk is
** the script's, without ours(). */
#define LABEL_MAX 320          /* the simulator keeps its first 199 bytes */
typedef struct last_label {
  bool made;
  char dtype[64];
  int ndim;
  int64_t shape[LC_MAXDIM];
  char source[LUA_IDSIZE];     /* "" when the name did not fit */
  char src[LUA_IDSIZE];        /* its short form, in the label */
  int line;                    /* -1: a math result's label, made_by op */
  char op[64];
  char label[LABEL_MAX];
} last_label;
static _Thread_local last_label last;

/* The thread's copy, looked up once a call: inline, GCC computes the
** address again (a __tls_get_addr call) at each use after a call. */
__attribute__((noinline)) static last_label *this_thread(void) { return &last; }

/* The script's frame of the call, or false when there is none (a host
** program's C call); *same: its chunk is the last label's (whose short
** form is then the label's too) */
static bool script_frame(lua_State *L, const last_label *l, lua_Debug *ar, bool *same) {
  for (int level = 1; lua_getstack(L, level, ar); level++) {
    if (!lua_getinfo(L, "Sl", ar) || ar->currentline <= 0) continue;
    *same = l->made && l->source[0] && strcmp(ar->source, l->source) == 0;
    if (*same || !ours(ar->source)) return true;
  }
  *same = false;
  return false;
}

static bool same_array(const last_label *l, const lc_array *a, int line) {
  if (!l->made || l->line != line || l->ndim != a->lay.ndim) return false;
  for (int i = 0; i < a->lay.ndim; i++)
    if (l->shape[i] != a->lay.shape[i]) return false;
  return strncmp(l->dtype, a->dtype->name, sizeof l->dtype) == 0;
}

static bool same_as_last(const last_label *l, const lc_array *a, const lua_Debug *ar,
                         bool found, bool same_source) {
  return same_array(l, a, found ? ar->currentline : 0) &&
         (same_source || strcmp(l->src, found ? ar->short_src : "") == 0);
}

static void keep_array(last_label *l, const lc_array *a, int line) {
  snprintf(l->dtype, sizeof l->dtype, "%s", a->dtype->name);
  l->ndim = a->lay.ndim;
  memcpy(l->shape, a->lay.shape, (size_t)a->lay.ndim * sizeof *l->shape);
  l->line = line;
  l->made = true;
}

/* A math result's label: its dtype, shape and operation, and how to have
** its line named (the message says it where a fault names the array). */
static void note_made_by(const lc_backend *be, last_label *l, const lc_array *a,
                         const char *op) {
  if (!same_array(l, a, -1) || strncmp(l->op, op, sizeof l->op) != 0) {
    char shape[96];
    lc_shape_format(shape, sizeof shape, a->lay.ndim, a->lay.shape);
    snprintf(l->label, sizeof l->label, "%.60s array of shape %s made by %.60s "
             "at a line LUACUDA_SIM_MEMCHECK=3 names", a->dtype->name, shape, op);
    snprintf(l->op, sizeof l->op, "%s", op);
    keep_array(l, a, -1);
  }
  be->mem_label(a->buf->ptr, l->label);
}

void lc_array_note_origin(lua_State *L, const lc_array *a, const char *made_by) {
  const lc_backend *be = a->buf->backend;
  if (be->mem_label == NULL || a->buf->kind == LC_HOST) return;
  int labels = be->mem_labels ? be->mem_labels() : LC_LABELS_ALL_LINES;
  if (labels == LC_LABELS_NONE) return;
  last_label *l = this_thread();
  if (made_by && labels == LC_LABELS_NAMED_LINES) {
    note_made_by(be, l, a, made_by);
    return;
  }
  lua_Debug ar;
  bool same_source;
  bool found = script_frame(L, l, &ar, &same_source);
  if (!same_as_last(l, a, &ar, found, same_source)) {
    const char *src = found ? ar.short_src : "";
    int line = found ? ar.currentline : 0;
    char shape[96];
    lc_shape_format(shape, sizeof shape, a->lay.ndim, a->lay.shape);
    if (found)
      snprintf(l->label, sizeof l->label, "%.60s array of shape %s allocated at %s:%d",
               a->dtype->name, shape, src, line);
    else
      snprintf(l->label, sizeof l->label, "%.60s array of shape %s", a->dtype->name, shape);
    snprintf(l->src, sizeof l->src, "%s", src);
    l->source[0] = '\0';
    if (found && strlen(ar.source) < sizeof l->source) strcpy(l->source, ar.source);
    keep_array(l, a, line);
  }
  be->mem_label(a->buf->ptr, l->label);
}
