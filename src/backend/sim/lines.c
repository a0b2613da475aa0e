/*
** lines: the source line of a fault, for modules compiled with line tables
** (-lineinfo, which the host compiler gets as -g1). A module's file is
** removed once it is loaded (compile.c), so its image is kept here while
** it is loaded; a fault's address is looked up in it by addr2line (the
** binutils beside the host compiler), from a copy written for the
** question. Through #line directives the lines are the user's: a Lua
** kernel's (luacuda.jit) are its Lua file and line.
*/
#define _GNU_SOURCE       /* dladdr, mkstemp's neighbours */
#include "sim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct kept {
  void *handle;
  void *base;              /* where it is loaded (dladdr's dli_fbase) */
  char *image;
  size_t len;
  struct kept *next;
} kept;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static kept *modules;

void lc_sim_lines_keep(void *handle, const char *so) {
  Dl_info info;
  void *sym = dlsym(handle, "__lc_sim_abi");
  if (sym == NULL || !dladdr(sym, &info)) return;
  FILE *f = fopen(so, "rb");
  if (f == NULL) return;
  kept *k = calloc(1, sizeof *k);
  bool ok = k && fseek(f, 0, SEEK_END) == 0;
  long len = ok ? ftell(f) : -1;
  ok = ok && len > 0 && fseek(f, 0, SEEK_SET) == 0 && (k->image = malloc((size_t)len)) &&
       fread(k->image, 1, (size_t)len, f) == (size_t)len;
  fclose(f);
  if (!ok) {                 /* without it, a fault names no line */
    if (k) free(k->image);
    free(k);
    return;
  }
  k->handle = handle;
  k->base = info.dli_fbase;
  k->len = (size_t)len;
  pthread_mutex_lock(&lock);
  k->next = modules;
  modules = k;
  pthread_mutex_unlock(&lock);
}

void lc_sim_lines_forget(void *handle) {
  pthread_mutex_lock(&lock);
  for (kept **p = &modules; *p; p = &(*p)->next) {
    if ((*p)->handle == handle) {
      kept *k = *p;
      *p = k->next;
      free(k->image);
      free(k);
      break;
    }
  }
  pthread_mutex_unlock(&lock);
}

/* The first line of addr2line -i's answer (the inlined calls from the
** innermost out, "file:line" each, "??:0" where there is none) that is
** the user's: not in luacuda's own headers (luacuda/...). */
static bool ask_addr2line(const char *path, uintptr_t offset, char *buf, size_t n) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "addr2line -i -e '%s' 0x%lx 2>/dev/null", path,
           (unsigned long)offset);
  FILE *p = popen(cmd, "r");
  if (p == NULL) return false;
  char line[1024];
  bool found = false;
  while (fgets(line, sizeof line, p)) {
    line[strcspn(line, " \n")] = '\0';          /* not " (discriminator n)" */
    const char *colon = strrchr(line, ':');
    if (found || line[0] == '?' || colon == NULL || colon[1] < '1' || colon[1] > '9' ||
        strncmp(line, "luacuda/", 8) == 0)
      continue;                                /* read on: addr2line writes all */
    /* "./" where the compile's directory was taken off (compile.c) */
    snprintf(buf, n, "%s", strncmp(line, "./", 2) == 0 ? line + 2 : line);
    found = true;
  }
  pclose(p);
  return found;
}

bool lc_sim_lines_of(uintptr_t pc, char *buf, size_t n) {
  Dl_info info;
  if (pc == 0 || !dladdr((void *)pc, &info)) return false;
  /* a copy of the image, written under the lock (it may be forgotten meanwhile) */
  const char *tmp = getenv("TMPDIR");
  char path[512];
  snprintf(path, sizeof path, "%s/luacuda-lines-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (strchr(path, '\'')) return false;
  bool written = false;
  pthread_mutex_lock(&lock);
  for (kept *k = modules; k; k = k->next) {
    if (k->base != info.dli_fbase) continue;
    int fd = mkstemp(path);
    if (fd >= 0) {
      written = write(fd, k->image, k->len) == (ssize_t)k->len;
      close(fd);
      if (!written) unlink(path);
    }
    break;
  }
  pthread_mutex_unlock(&lock);
  if (!written) return false;
  bool found = ask_addr2line(path, pc - (uintptr_t)info.dli_fbase, buf, n);
  unlink(path);
  return found;
}
