/*
** npy: luacuda.save(path, a) and luacuda.load(path [, {kind=}]), arrays
** in NumPy's .npy files. base/npy.c reads and writes the header; this file
** remakes a file's record through luacuda.record (its field names and
** layout checked as that checks them, then against the file's), and does
** the I/O.
**
** save writes C order for a C-contiguous array, Fortran order for an
** F-contiguous one, and C order from a contiguous host copy for any other
** view or for device memory. It writes into the file the path names, as
** numpy.save does (through a symbolic link, into a hard link, FIFO or
** device, keeping the file's mode and owner), after everything that can
** fail before the first byte. load reads a Fortran-order file into an
** F-strided array (no transpose).
*/
#include "array.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "gate.h"
#include "npy.h"
#include "pending.h"
#include "record.h"
#include "stream.h"
#include "copy.h"

#define READER_MT "luacuda.npy_reader"

static const char *errno_text(int e, char *buf, size_t len) {
  if (strerror_r(e, buf, len) != 0) snprintf(buf, len, "error %d", e);
  return buf;
}

/* ---- save ----------------------------------------------------------------- */

static bool write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

/* Both parts, with SIGPIPE held back: a FIFO whose reader went away is
** EPIPE, an error of the save, not the signal that ends the process (Lua
** leaves SIGPIPE at its default). A SIGPIPE that was pending before is
** left pending. */
static bool write_all_nopipe(int fd, const char *header, size_t hlen, const char *data,
                             size_t nbytes) {
  sigset_t pipe_set, old, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigemptyset(&pending);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  bool was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
  bool ok = write_all(fd, header, hlen) && write_all(fd, data, nbytes);
  int e = errno;
  if (!ok && e == EPIPE && !was_pending) {
    struct timespec now = {0, 0};
    while (sigtimedwait(&pipe_set, NULL, &now) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  errno = e;
  return ok;
}

/* Same file: the one fd has open is the one path names now (so a failed
** save removes only the file it created). */
static bool names_file(const char *path, int fd) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Write header and data into the file path names, following symbolic
** links, as numpy.save does: an existing file is truncated and keeps its
** mode, owner and links; a new one is made with 0666 less the umask. A
** temporary file renamed over path would replace a link, a FIFO or a
** device with a regular file and reset the mode (issue 29). Runs no Lua:
** nothing can raise while the file is open. Returns 0, or an errno value
** with *what the step that failed; a file this call made is removed again
** when the write fails (an existing one is left as far as it was written,
** as numpy.save leaves it). */
static int write_file(const char *path, const char *header, size_t hlen, const char *data,
                      size_t nbytes, const char **what) {
  bool created = true;
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST) {
    created = false;
    /* O_CREAT again for a dangling symbolic link, whose target numpy makes */
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  }
  if (fd < 0) {
    *what = created ? "cannot create the file" : "cannot open the file";
    return errno;
  }
  int e = 0;
  errno = 0;
  if (!write_all_nopipe(fd, header, hlen, data, nbytes)) {
    e = errno ? errno : EIO;
    *what = "cannot write the file";
  }
  if (e && created && names_file(path, fd)) unlink(path);
  if (close(fd) != 0 && e == 0) {
    e = errno;
    *what = "cannot write the file";
  }
  return e;
}

/*** @module luacuda */

/***
Writes an array to a NumPy `.npy` file (read it with `numpy.load`).
Every dtype but bfloat16; a record is written as a structured dtype, its
padding as NumPy writes it. A C-contiguous array is written in C order, an
F-contiguous one in Fortran order, any other view (and device memory) from
a C-order host copy, after the work queued on the array. Header version
1.0, or 2.0 when the header passes 64 KiB. As `numpy.save`, it writes into
the file `path` names: through a symbolic link into its target, into a
hard link, a FIFO or a device, an existing file keeping its mode and
owner. What can fail before the first byte (the dtype, the copy of device
memory) leaves the file as it was; a failed write removes a file the call
made, and leaves an existing one as far as it was written.
@function save
@string path the file to write
@tparam Array a any kind, any layout
@raise `luacuda.save: <path>: dtype bfloat16 has no NumPy type code ...`;
`luacuda.save: <path>: cannot create the file: <reason>` (and `cannot open`,
`cannot write`)
@usage local path = os.tmpname()
luacuda.save(path, luacuda.arange(6, "float32"):reshape({2, 3}))
assert(luacuda.load(path).shape[2] == 3)
os.remove(path)
*/

/* save(path, a) */
static int l_save(lua_State *L) {
  const char *fn = "save";
  if (lua_type(L, 1) != LUA_TSTRING)
    lc_error(L, fn, "path must be a string, got %s", lc_typename(L, 1));
  const char *path = lua_tostring(L, 1);
  lc_array *a = lc_array_check(L, 2, fn);
  lua_settop(L, 2);
  const lc_dtype *dt = a->dtype;
  bool c_order = lc_layout_is_c_contiguous(&a->lay, dt->size);
  bool f_order = !c_order && lc_layout_is_f_contiguous(&a->lay, dt->size);

  char err[LC_ERRLEN];
  lc_strbuf head = {0};
  if (lc_npy_build_header(&head, dt, a->lay.ndim, a->lay.shape, f_order, err)) {
    lc_sb_free(&head);
    lc_error(L, fn, "%s: %s", path, err);
  }
  lua_pushlstring(L, head.p, head.n);                               /* 3 */
  lc_sb_free(&head);

  /* the data: in place when the host may read it as it is, else a copy
  ** (which waits for the work queued on the array) */
  const lc_array *src = a;
  lc_kind kind = lc_array_kind(a);
  if ((c_order || f_order) && lc_kind_host_accessible(kind)) {
    lc_pending_wait(L, a, false, fn);
    lc_sync_host(L, kind, fn);
  } else {
    lc_array *h = lc_array_empty(L, LC_HOST, dt, a->lay.ndim, a->lay.shape,
                                 f_order ? 'F' : 'C', NULL, fn);    /* 4 */
    lc_copy_array(L, h, a, NULL, fn);
    src = h;
  }
  size_t nbytes = (size_t)(src->lay.size * dt->size);
  const char *data = nbytes ? lc_array_data(src) : "";

  size_t hlen;
  const char *header = lua_tolstring(L, 3, &hlen);
  const char *what = "";
  int e = write_file(path, header, hlen, data, nbytes, &what);
  if (e) {
    char why[128];
    lc_error(L, fn, "%s: %s: %s", path, what, errno_text(e, why, sizeof why));
  }
  return 0;
}

/* ---- load ----------------------------------------------------------------- */

/* The open file and what was read of it, closed by the collector when a
** load raises. */
typedef struct reader {
  FILE *f;
  lc_npy_header h;
} reader;

static void reader_close(reader *r) {
  if (r->f) fclose(r->f);
  r->f = NULL;
  lc_npy_header_free(&r->h);
}

static int reader_gc(lua_State *L) {
  reader *r = luaL_testudata(L, 1, READER_MT);
  if (r) reader_close(r);
  return 0;
}

/* Read n bytes; false on a short read (*e the errno, 0 at the end of the
** file). */
static bool read_exact(FILE *f, void *p, size_t n, int *e) {
  size_t got = fread(p, 1, n, f);
  *e = got < n && ferror(f) ? errno : 0;
  return got == n;
}

LC_NORETURN static void read_error(lua_State *L, const char *path, int e, const char *where) {
  char why[128];
  if (e) lc_error(L, "load", "%s: cannot read: %s", path, errno_text(e, why, sizeof why));
  lc_error(L, "load", "%s: truncated: the file ends %s", path, where);
}

/* The first difference between the file's record t and the record r. */
static void first_difference(const lc_record *t, const lc_record *r, char *buf, size_t len) {
  for (int i = 0; i < t->nfields; i++)
    if (t->fields[i].offset != r->fields[i].offset) {
      snprintf(buf, len, "puts field '%.60s' at byte %lld, the file at %lld", t->fields[i].name,
               (long long)r->fields[i].offset, (long long)t->fields[i].offset);
      return;
    }
  snprintf(buf, len, "is %lld bytes, the file's elements %lld", (long long)r->dt.size,
           (long long)t->dt.size);
}

/* Push the record luacuda.record (upvalue 1 of load) makes of the file's
** record t (its fields at the file's offsets): aligned as C lays them out
** or else packed, whichever has the file's offsets and itemsize, each
** field checked as luacuda.record checks it. */
static const lc_record *push_record(lua_State *L, const lc_record *t, const char *path,
                                    int depth) {
  if (depth >= LC_RECORD_MAXDEPTH)
    lc_error(L, "load", "%s: records nest at most %d deep", path, LC_RECORD_MAXDEPTH);
  luaL_checkstack(L, 8, "records nested too deeply");
  lua_createtable(L, t->nfields, 0);
  int fields = lua_gettop(L);
  for (int i = 0; i < t->nfields; i++) {
    const lc_field *f = &t->fields[i];
    lua_createtable(L, 3, 0);
    lua_pushstring(L, f->name);
    lua_rawseti(L, -2, 1);
    if (f->dtype->rec == NULL) lua_pushstring(L, f->dtype->name);
    else push_record(L, f->dtype->rec, path, depth + 1);
    lua_rawseti(L, -2, 2);
    if (f->ndim) {
      lc_push_int64s(L, f->ndim, f->shape);
      lua_rawseti(L, -2, 3);
    }
    lua_rawseti(L, fields, i + 1);
  }
  char diff[2][160] = {"", ""};
  for (int packed = 0; packed < 2; packed++) {
    lua_pushvalue(L, lc_upvalueindex(1));
    lua_pushvalue(L, fields);
    if (packed) {
      lua_createtable(L, 0, 1);
      lua_pushboolean(L, 0);
      lua_setfield(L, -2, "align");
    }
    if (lua_pcall(L, 1 + packed, 1, 0) != LUA_OK) {
      const char *msg = lua_tostring(L, -1);
      const char *prefix = "luacuda.record: ";
      if (msg && strncmp(msg, prefix, strlen(prefix)) == 0) msg += strlen(prefix);
      lc_error(L, "load", "%s: the structured dtype is no luacuda record: %s", path,
               msg ? msg : "(an error that is not a string)");
    }
    const lc_record *r = lc_record_test(L, -1);
    bool same = r && r->dt.size == t->dt.size && r->nfields == t->nfields;
    for (int i = 0; same && i < t->nfields; i++) same = r->fields[i].offset == t->fields[i].offset;
    if (same) {
      lua_replace(L, fields);
      return r;
    }
    if (r) first_difference(t, r, diff[packed], sizeof diff[packed]);
    lua_pop(L, 1);
  }
  lc_error(L, "load", "%s: the structured dtype's layout is no luacuda record's: an "
           "aligned record %s; a packed one %s", path, diff[0], diff[1]);
}

static lc_kind opt_kind(lua_State *L, int idx) {
  static const char *const known[] = {"kind", NULL};
  if (!lc_check_opts(L, idx, known, "load")) return LC_HOST;
  lc_kind kind = LC_HOST;
  if (lc_opt_get(L, idx, "kind") != LUA_TNIL) {
    const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    int i = 0;
    while (k && i < LC_NKINDS && strcmp(k, lc_kind_names[i]) != 0) i++;
    if (k == NULL || i == LC_NKINDS)
      lc_error(L, "load", "kind must be 'host', 'pinned', 'mapped', 'managed' or 'device', "
               "got %s%s%s", k ? "'" : "", k ? k : lc_typename(L, -1), k ? "'" : "");
    kind = (lc_kind)i;
  }
  lua_pop(L, 1);
  return kind;
}

/***
Reads an array from a NumPy `.npy` file (header versions 1.0, 2.0 and
3.0). Big-endian data is byte-swapped; a structured dtype becomes a
record, aligned or packed, whichever has the file's offsets and itemsize;
a Fortran-order file gives an F-strided array of the file's shape.
@function load
@string path the file to read
@tparam[opt] table opts `kind`: `"host"` (the default), `"pinned"`,
`"mapped"`, `"managed"` or `"device"`
@treturn Array
@raise `luacuda.load: <path>: <cause>`: the file cannot be read, is not a
`.npy` file (a pickle, an `.npz` zip), is truncated or corrupt, or holds a
dtype luacuda has not (Python objects, complex numbers, strings) or a
structured dtype no record lays out so
@usage local path = os.tmpname()
luacuda.save(path, luacuda.array({1, 2, 3}, "int16"))
local d = luacuda.load(path, {kind = "device"})
assert(d.kind == "device" and d.dtype == "int16")
os.remove(path)
*/

/* load(path [, {kind=}]); upvalue 1: luacuda.record */
static int l_load(lua_State *L) {
  const char *fn = "load";
  if (lua_type(L, 1) != LUA_TSTRING)
    lc_error(L, fn, "path must be a string, got %s", lc_typename(L, 1));
  const char *path = lua_tostring(L, 1);
  lc_kind kind = opt_kind(L, 2);
  lua_settop(L, 2);
  reader *r = lua_newuserdatauv(L, sizeof *r, 0);                   /* 3 */
  memset(r, 0, sizeof *r);
  luaL_setmetatable(L, READER_MT);
  char why[128], err[LC_ERRLEN];
  if ((r->f = fopen(path, "rb")) == NULL)
    lc_error(L, fn, "%s: %s", path, errno_text(errno, why, sizeof why));

  /* the prefix, then the header text */
  unsigned char pre[LC_NPY_PREFIX_MAX];
  size_t n = fread(pre, 1, LC_NPY_PREFIX_MIN, r->f);
  if (n == LC_NPY_PREFIX_MIN && pre[6] > 1)
    n += fread(pre + n, 1, LC_NPY_PREFIX_MAX - LC_NPY_PREFIX_MIN, r->f);
  if (ferror(r->f)) read_error(L, path, errno, "");
  int major, minor;
  size_t plen, hlen;
  if (lc_npy_read_prefix(pre, n, &major, &minor, &plen, &hlen, err))
    lc_error(L, fn, "%s: %s", path, err);
  char *text = lua_newuserdatauv(L, hlen ? hlen : 1, 0);            /* 4 */
  int e;
  if (!read_exact(r->f, text, hlen, &e)) read_error(L, path, e, "inside its header");
  if (lc_npy_parse_header(text, hlen, major, minor, &r->h, err))
    lc_error(L, fn, "%s: %s", path, err);
  lua_pop(L, 1);

  /* the dtype, and the array */
  const lc_npy_header *h = &r->h;
  const lc_dtype *dt = h->dtype;
  if (dt->rec) dt = &push_record(L, dt->rec, path, 0)->dt;         /* 4: kept */
  const lc_npy_fix *fixes;
  int nfixes;
  if (lc_npy_fixes(h, &fixes, &nfixes, err)) lc_error(L, fn, "%s: %s", path, err);
  /* a regular file's size is known: a short one fails before the allocation */
  struct stat st;
  long pos = ftell(r->f);
  if (fstat(fileno(r->f), &st) == 0 && S_ISREG(st.st_mode) && pos >= 0 &&
      (int64_t)st.st_size - pos < h->nbytes)
    lc_error(L, fn, "%s: truncated: the header promises %lld bytes of data, the file holds "
             "%lld", path, (long long)h->nbytes, (long long)((int64_t)st.st_size - pos));
  char order = h->fortran_order ? 'F' : 'C';
  lc_kind read_kind = lc_kind_host_accessible(kind) ? kind : LC_HOST;
  lc_array *a = lc_array_empty(L, read_kind, dt, h->ndim, h->shape, order, NULL, fn);
  if (h->nbytes > 0) {
    if (!read_exact(r->f, lc_array_data(a), (size_t)h->nbytes, &e)) {
      if (e) read_error(L, path, e, "");
      lc_error(L, fn, "%s: truncated: the header promises %lld bytes of data, the file "
               "holds fewer", path, (long long)h->nbytes);
    }
    lc_npy_apply_fixes(lc_array_data(a), h->count, dt->size, fixes, nfixes);
  }
  fclose(r->f);                   /* the header goes with the reader */
  r->f = NULL;
  if (read_kind != kind) {
    lc_array *d = lc_array_empty(L, kind, dt, h->ndim, a->lay.shape, order, NULL, fn);
    lc_copy_array(L, d, a, NULL, fn);
  }
  return 1;
}

void lc_npy_open(lua_State *L) {
  static const luaL_Reg meta[] = {{"__gc", reader_gc}, {NULL, NULL}};
  lc_new_type(L, READER_MT, meta, NULL);
  static const luaL_Reg save = {"save", l_save};
  lc_pushfunction(L, &save, 0);
  lua_setfield(L, -2, "save");
  static const luaL_Reg load = {"load", l_load};
  lua_getfield(L, -1, "record");
  lc_pushfunction(L, &load, 1);
  lua_setfield(L, -2, "load");
}
