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

/* "file:line" of the script's call, or "" when there is none (a host
** program's C call) */
static void script_line(lua_State *L, char *buf, size_t n) {
  lua_Debug ar;
  buf[0] = '\0';
  for (int level = 1; lua_getstack(L, level, &ar); level++) {
    if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0 || ours(ar.source)) continue;
    snprintf(buf, n, "%s:%d", ar.short_src, ar.currentline);
    return;
  }
}

void lc_array_note_origin(lua_State *L, const lc_array *a) {
  const lc_backend *be = a->buf->backend;
  if (be->mem_label == NULL || a->buf->kind == LC_HOST) return;
  char shape[96], line[LUA_IDSIZE + 24], label[200];
  lc_shape_format(shape, sizeof shape, a->lay.ndim, a->lay.shape);
  script_line(L, line, sizeof line);
  snprintf(label, sizeof label, "%.60s array of shape %s%s%s", a->dtype->name, shape,
           line[0] ? " allocated at " : "", line);
  be->mem_label(a->buf->ptr, label);
}
