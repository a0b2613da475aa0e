/*
** origin: where an array's memory came from, told to a backend that checks
** kernels' accesses (the simulator's memory checking): its dtype, its shape
** and the line of the script that allocated it, so a kernel that runs past
** it gets a message naming it. The line is the first Lua function on the
** stack outside luacuda's own Lua files (lua/luacuda/), which wrap some
** constructors.
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

/* The script's frame of the call, or false when there is none (a host
** program's C call) */
static bool script_frame(lua_State *L, lua_Debug *ar) {
  for (int level = 1; lua_getstack(L, level, ar); level++)
    if (lua_getinfo(L, "Sl", ar) && ar->currentline > 0 && !ours(ar->source)) return true;
  return false;
}

/* The last label made on this thread and what it was made of: a loop that
** makes arrays of one dtype and shape at one line (most allocations) takes
** its text again instead of formatting it each time. */
#define LABEL_MAX 320          /* the simulator keeps its first 199 bytes */
static _Thread_local struct {
  bool made;
  char dtype[64];
  int ndim;
  int64_t shape[LC_MAXDIM];
  char src[LUA_IDSIZE];
  int line;
  char label[LABEL_MAX];
} last;

static bool same_as_last(const lc_array *a, const char *src, int line) {
  return last.made && last.line == line && last.ndim == a->lay.ndim &&
         memcmp(last.shape, a->lay.shape, (size_t)a->lay.ndim * sizeof *last.shape) == 0 &&
         strcmp(last.src, src) == 0 && strncmp(last.dtype, a->dtype->name, sizeof last.dtype) == 0;
}

void lc_array_note_origin(lua_State *L, const lc_array *a) {
  const lc_backend *be = a->buf->backend;
  if (be->mem_label == NULL || a->buf->kind == LC_HOST) return;
  lua_Debug ar;
  bool found = script_frame(L, &ar);
  const char *src = found ? ar.short_src : "";
  int line = found ? ar.currentline : 0;
  if (!same_as_last(a, src, line)) {
    char shape[96];
    lc_shape_format(shape, sizeof shape, a->lay.ndim, a->lay.shape);
    if (found)
      snprintf(last.label, sizeof last.label, "%.60s array of shape %s allocated at %s:%d",
               a->dtype->name, shape, src, line);
    else
      snprintf(last.label, sizeof last.label, "%.60s array of shape %s", a->dtype->name, shape);
    snprintf(last.dtype, sizeof last.dtype, "%s", a->dtype->name);
    last.ndim = a->lay.ndim;
    memcpy(last.shape, a->lay.shape, (size_t)a->lay.ndim * sizeof *last.shape);
    snprintf(last.src, sizeof last.src, "%s", src);
    last.line = line;
    last.made = true;
  }
  be->mem_label(a->buf->ptr, last.label);
}
