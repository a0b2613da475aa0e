/*
** capi_test: the C API of luacuda.h as a host program uses it. Release
** callbacks and DLPack deleters are counted: each is called exactly once,
** also when the state closes with arrays, views and capsules alive, and
** never when the call that would take ownership fails. Every test has a
** state of its own.
*/
#include <dirent.h>
#include <dlfcn.h>
#include <dlpack/dlpack.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"
#include "luacuda.h"
#include "unit.h"

static int released;           /* release callbacks called */
static int deleted;            /* deleters of the host's tensors called */
static float buf[64];

static void count_release(void *ud) {
  (void)ud;
  released++;
}

static lua_State *new_state(void) {
  released = deleted = 0;
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luacuda_openlibs(L);
  return L;
}

/* Run Lua code: 0, or -1 with the error in err. */
static int run(lua_State *L, const char *code) {
  if (luaL_dostring(L, code) == LUA_OK) {
    lua_settop(L, 0);
    return 0;
  }
  snprintf(err, sizeof err, "%s", lua_tostring(L, -1));
  lua_settop(L, 0);
  return -1;
}

/* Call fn under lua_pcall: 0, or -1 with the error in err. */
static int protect(lua_State *L, lua_CFunction fn) {
  lua_pushcfunction(L, fn);
  if (lua_pcall(L, 0, 0, 0) == LUA_OK) return 0;
  snprintf(err, sizeof err, "%s", lua_tostring(L, -1));
  lua_pop(L, 1);
  return -1;
}

/* Collect, and let the releases held back behind queued work happen. */
static int settle(lua_State *L) { return run(L, "collectgarbage() collectgarbage() require('luacuda').synchronize()"); }

/* Wrap buf as a float32 array in global name. */
static void wrap_global(lua_State *L, const char *name, int64_t n) {
  luacuda_wrap(L, buf, LUACUDA_HOST, "float32", 1, &n, NULL, count_release, NULL);
  lua_setglobal(L, name);
}

/* ---- wrapping -------------------------------------------------------------------- */

static int test_wrap_shares_memory(void) {
  lua_State *L = new_state();
  for (int i = 0; i < 6; i++) buf[i] = (float)i;
  int64_t shape[2] = {2, 3}, strides[2] = {4, 8};       /* Fortran order */
  luacuda_wrap(L, buf, LUACUDA_HOST, "float32", 2, shape, strides, count_release, NULL);
  lua_setglobal(L, "a");
  CHECK_OK(run(L, "assert(a.dtype == 'float32' and a.kind == 'host')\n"
                  "assert(a.shape[1] == 2 and a.shape[2] == 3)\n"
                  "assert(a.strides[1] == 4 and a.strides[2] == 8)\n"
                  "assert(a[{2, 1}] == 1 and a[{1, 2}] == 2)\n"
                  "a[{2, 3}] = 42"));
  CHECK(buf[5] == 42.0f);
  buf[0] = -1;
  CHECK_OK(run(L, "assert(a[{1, 1}] == -1)"));
  CHECK_EQ(released, 0);
  lua_close(L);
  CHECK_EQ(released, 1);
  return 0;
}

static int test_wrap_release_after_views(void) {
  lua_State *L = new_state();
  wrap_global(L, "a", 16);
  CHECK_OK(run(L, "v = a[{{3, 10, 2}}]  t = a:reshape(4, 4).T  a = nil"));
  CHECK_OK(settle(L));
  CHECK_EQ(released, 0);                    /* the views hold the memory */
  CHECK_OK(run(L, "v = nil"));
  CHECK_OK(settle(L));
  CHECK_EQ(released, 0);
  CHECK_OK(run(L, "t = nil"));
  CHECK_OK(settle(L));
  CHECK_EQ(released, 1);
  lua_close(L);
  CHECK_EQ(released, 1);
  return 0;
}

static int test_wrap_release_at_close(void) {
  lua_State *L = new_state();
  wrap_global(L, "a", 16);
  CHECK_OK(run(L, "v = a[{{2, 5}}]  w = v:reshape(2, 2)  d = require('luacuda').to_device(a)"));
  lua_close(L);
  CHECK_EQ(released, 1);
  return 0;
}

static int test_wrap_closed_releases(void) {
  lua_State *L = new_state();
  wrap_global(L, "a", 4);
  CHECK_OK(run(L, "a:close()"));
  CHECK_OK(settle(L));
  CHECK_EQ(released, 1);
  lua_close(L);
  CHECK_EQ(released, 1);
  return 0;
}

static int wrap_bad_dtype(lua_State *L) {
  int64_t n = 4;
  luacuda_wrap(L, buf, LUACUDA_HOST, "complex64", 1, &n, NULL, count_release, NULL);
  return 0;
}
static int wrap_negative(lua_State *L) {
  int64_t n = -4;
  luacuda_wrap(L, buf, LUACUDA_HOST, "float32", 1, &n, NULL, count_release, NULL);
  return 0;
}
static int wrap_null(lua_State *L) {
  int64_t n = 4;
  luacuda_wrap(L, NULL, LUACUDA_HOST, "float32", 1, &n, NULL, count_release, NULL);
  return 0;
}
static int wrap_kind(lua_State *L) {
  int64_t n = 4;
  luacuda_wrap(L, buf, (luacuda_kind)17, "float32", 1, &n, NULL, count_release, NULL);
  return 0;
}
static int wrap_ndim(lua_State *L) {
  int64_t n[40] = {0};
  luacuda_wrap(L, buf, LUACUDA_HOST, "float32", 40, n, NULL, count_release, NULL);
  return 0;
}

static int wrap_no_shape(lua_State *L) {
  luacuda_wrap(L, buf, LUACUDA_HOST, "float32", 2, NULL, NULL, count_release, NULL);
  return 0;
}

static int test_wrap_errors_keep_ownership(void) {
  lua_State *L = new_state();
  CHECK_ERR(protect(L, wrap_bad_dtype), "luacuda.wrap: unknown dtype 'complex64'");
  CHECK_ERR(protect(L, wrap_negative), "luacuda.wrap: shape entry 1 is negative");
  CHECK_ERR(protect(L, wrap_null), "luacuda.wrap: data is NULL");
  CHECK_ERR(protect(L, wrap_kind), "luacuda.wrap: unknown memory kind 17");
  CHECK_ERR(protect(L, wrap_ndim), "luacuda.wrap: ndim must be 0..32, got 40");
  CHECK_ERR(protect(L, wrap_no_shape), "luacuda.wrap: shape is NULL");
  lua_close(L);
  CHECK_EQ(released, 0);
  return 0;
}

/* ---- reading arrays from C --------------------------------------------------------- */

static luacuda_arrayinfo seen;

static int probe(lua_State *L) {
  lua_pushlightuserdata(L, luacuda_checkarray(L, 1, &seen));
  return 1;
}

static int test_checkarray_reads_views(void) {
  lua_State *L = new_state();
  lua_register(L, "probe", probe);
  wrap_global(L, "a", 12);
  CHECK_OK(run(L, "p = probe(a:reshape(3, 4)[{{2, 3}, {2, 4, 2}}])"));
  CHECK(seen.data == (void *)(buf + 5));           /* element (2, 2), 1-based */
  CHECK_EQ(seen.kind, LUACUDA_HOST);
  CHECK_STR(seen.dtype, "float32");
  CHECK_EQ(seen.itemsize, 4);
  CHECK_EQ(seen.ndim, 2);
  CHECK_EQ(seen.size, 4);
  CHECK_EQ(seen.shape[0], 2);
  CHECK_EQ(seen.shape[1], 2);
  CHECK_EQ(seen.strides[0], 16);
  CHECK_EQ(seen.strides[1], 8);
  CHECK_OK(run(L, "probe(require('luacuda').device_array({2, 2}, 'int16'))"));
  CHECK_EQ(seen.kind, LUACUDA_DEVICE);
  CHECK_STR(seen.dtype, "int16");
  lua_close(L);
  CHECK_EQ(released, 1);
  return 0;
}

/* wait_read(a): a's first and last float32 after luacuda_waitarray */
static int wait_read(lua_State *L) {
  luacuda_waitarray(L, 1, 0);
  luacuda_arrayinfo info;
  const float *p = luacuda_checkarray(L, 1, &info);
  lua_pushnumber(L, p[0]);
  lua_pushnumber(L, p[info.size - 1]);
  return 2;
}

/* A copy queued behind a slow kernel writes a pinned array: read from C
** without the wait, it would still hold its old values. */
static int test_waitarray_waits_for_queued_copies(void) {
  lua_State *L = new_state();
  lua_register(L, "wait_read", wait_read);
  CHECK_OK(run(L, "local l = require 'luacuda'\n"
                  "local fake = l.backend() == 'cuda' and l.devices()[1].name:find('^luacuda fake GPU')\n"
                  "local m = l.compile([==[\n"
                  "  extern \"C\" __global__ void capi_spin_fill(long long spins, float *out, int n, float v) {\n"
                  "    volatile long long acc = 0;\n"
                  "    for (long long i = 0; i < spins; i++) acc = acc + 1;\n"
                  "    for (int i = 0; i < n; i++) out[i] = v + (acc != spins);\n"
                  "  }]==], {name = 'capi_spin_fill.cu'})\n"
                  "local d = l.device_array(64, 'float32') d:fill(0)\n"
                  "local h = l.pinned_array(64, 'float32') h:fill(1)\n"
                  "local s = l.stream()\n"
                  "m.capi_spin_fill[{1, 1, s}](fake and 1000000 or 40000000, d, 64, 5)\n"
                  "d:copy_to_host(h, s)\n"
                  "local first, last = wait_read(h)\n"
                  "assert(first == 5 and last == 5, 'read before the queued copy: ' .. first .. ', ' .. last)\n"
                  "local ok, err = pcall(wait_read, 5)\n"
                  "assert(not ok and err:find('luacuda.array expected, got number', 1, true), err)"));
  lua_close(L);
  return 0;
}

static int test_checkarray_type_errors(void) {
  lua_State *L = new_state();
  lua_register(L, "probe", probe);
  CHECK_ERR(run(L, "probe(5)"), "bad argument #1 to 'probe' (luacuda.array expected, got number)");
  CHECK_ERR(run(L, "probe(require('luacuda').stream())"),
            "bad argument #1 to 'probe' (luacuda.array expected, got luacuda.stream)");
  CHECK_ERR(run(L, "local a = require('luacuda').zeros(3, 'int32') a:close() probe(a)"),
            "bad argument #1 to 'probe' (closed luacuda.array)");
  lua_pushinteger(L, 3);
  CHECK(luacuda_toarray(L, -1, NULL) == NULL);
  lua_close(L);
  return 0;
}

/* ---- work the host queues on luacuda's streams ----------------------------------- */

/* A slow kernel, spin_fill[{1, 1, s}](spins(), out, n, v), defined in Lua
** as SPIN by the tests below: it writes v into out[0..n) after spinning. */
static const char *const spin_kernel =
  "l = require 'luacuda'\n"
  "local fake = l.backend() == 'cuda' and l.devices()[1].name:find('^luacuda fake GPU')\n"
  "function spins() return fake and 1000000 or 40000000 end\n"
  "SPIN = l.compile([==[\n"
  "  extern \"C\" __global__ void capi_spin_set(long long spins, float *out, int n, float v) {\n"
  "    volatile long long acc = 0;\n"
  "    for (long long i = 0; i < spins; i++) acc = acc + 1;\n"
  "    for (int i = 0; i < n; i++) out[i] = v + (acc != spins);\n"
  "  }]==], {name = 'capi_spin_set.cu'}).capi_spin_set\n";

typedef struct host_job {
  float *data;
  int64_t n;
  float set;           /* written into data[0..n) when set != 0 */
  float seen;          /* data[0] when the function ran */
  atomic_int ran;
} host_job;

static void run_host_job(void *ud) {
  host_job *j = ud;
  j->seen = j->data[0];
  if (j->set != 0)
    for (int64_t i = 0; i < j->n; i++) j->data[i] = j->set;
  atomic_store(&j->ran, 1);
}

static host_job job;

/* queue_job(a, stream, set [, use]): job over a's memory queued on the
** stream; with use, the array marked as used (before) and written (after)
** by it, as luacuda.h says */
static int queue_job(lua_State *L) {
  luacuda_arrayinfo info;
  job.data = luacuda_checkarray(L, 1, &info);
  job.n = info.size;
  job.set = (float)luaL_checknumber(L, 3);
  atomic_store(&job.ran, 0);
  void *stream = luacuda_tostream(L, 2);
  bool use = lua_toboolean(L, 4);
  if (use) luacuda_usearray(L, 1, stream);
  luacuda_queuehost(L, stream, run_host_job, &job);
  if (use) luacuda_queuedarray(L, 1, stream, 1);
  return 0;
}

static int job_ran(lua_State *L) {
  lua_pushboolean(L, atomic_load(&job.ran));
  lua_pushnumber(L, job.seen);
  return 2;
}

/* The host function runs after the work queued before it on the stream
** (the kernel and the copy behind it), and the work queued after it sees
** what it wrote. */
static int test_queuehost_in_stream_order(void) {
  lua_State *L = new_state();
  lua_register(L, "queue_job", queue_job);
  lua_register(L, "job_ran", job_ran);
  CHECK_OK(run(L, spin_kernel));
  CHECK_OK(run(L, "local d = l.device_array(16, 'float32') d:fill(0)\n"
                  "local h = l.pinned_array(16, 'float32') h:fill(1)\n"
                  "local s = l.stream()\n"
                  "SPIN[{1, 1, s}](spins(), d, 16, 7)\n"
                  "d:copy_to_host(h, s)\n"
                  "queue_job(h, s, 42)\n"
                  "assert(not job_ran(), 'the host function ran before the kernel was done')\n"
                  "local back = l.device_array(16, 'float32') back:fill(0)\n"
                  "back:copy_to_device(h, s)\n"
                  "s:synchronize()\n"
                  "local ran, seen = job_ran()\n"
                  "assert(ran and seen == 7, 'the host function saw ' .. seen)\n"
                  "assert(back[1] == 42 and back[16] == 42, 'the copy after it saw ' .. back[16])"));
  lua_close(L);
  return 0;
}

/* Marked as used: a host access waits for the host function that writes
** the array, and dropped arrays keep their memory until it ran (arrays
** made after the collection are not written). */
static int test_usearray_keeps_and_waits(void) {
  lua_State *L = new_state();
  lua_register(L, "queue_job", queue_job);
  lua_register(L, "job_ran", job_ran);
  CHECK_OK(run(L, spin_kernel));
  CHECK_OK(run(L, "local s = l.stream()\n"
                  "local d = l.device_array(4, 'float32')\n"
                  "local a = l.pinned_array(64, 'float32') a:fill(1)\n"
                  "SPIN[{1, 1, s}](spins(), d, 4, 0)\n"
                  "queue_job(a, s, 9, true)\n"
                  "assert(a[1] == 9 and a[64] == 9, 'a host read did not wait: ' .. a[64])\n"
                  "for _, kind in ipairs {'empty', 'pinned_array', 'managed_array'} do\n"
                  "  local b = l[kind](4096, 'float32') b:fill(2)\n"
                  "  SPIN[{1, 1, s}](spins(), d, 4, 0)\n"
                  "  queue_job(b, s, 5, true)\n"
                  "  b = nil collectgarbage() collectgarbage()\n"
                  "  local c = l[kind](4096, 'float32') c:fill(3)\n"
                  "  s:synchronize()\n"
                  "  assert(job_ran(), 'ran')\n"
                  "  for i = 1, 4096 do assert(c[i] == 3, kind .. ': written after its free at ' .. i) end\n"
                  "end"));
  CHECK_ERR(run(L, "queue_job(l.zeros(2), 5, 1)"), "luacuda.stream expected, got number");
  lua_close(L);
  return 0;
}

static int usearray_number(lua_State *L) {
  lua_pushinteger(L, 1);
  luacuda_usearray(L, -1, NULL);
  return 0;
}

static int queuedarray_closed(lua_State *L) {
  (void)luaL_dostring(L, "local a = require('luacuda').zeros(2) a:close() return a");
  luacuda_queuedarray(L, -1, NULL, 1);
  return 0;
}

static int test_usearray_errors(void) {
  lua_State *L = new_state();
  CHECK_ERR(protect(L, usearray_number), "luacuda.array expected, got number");
  CHECK_ERR(protect(L, queuedarray_closed), "closed luacuda.array");
  lua_close(L);
  return 0;
}

/* ---- streams --------------------------------------------------------------------- */

static int tostream_number(lua_State *L) {
  lua_pushinteger(L, 1);
  luacuda_tostream(L, -1);
  return 0;
}

static int test_host_stream(void) {
  lua_State *L = new_state();
  CHECK_OK(run(L, "luacuda = require 'luacuda'"));
  void *dflt = luacuda_getstream(L);
  CHECK(dflt != NULL);
  CHECK_OK(run(L, "assert(luacuda.host_stream() == luacuda.default_stream())"));
  CHECK_OK(run(L, "s = luacuda.stream()"));
  lua_getglobal(L, "s");
  void *s = luacuda_tostream(L, -1);
  lua_pop(L, 1);
  CHECK(s != NULL && s != dflt);
  luacuda_setstream(L, s);
  CHECK(luacuda_getstream(L) == s);
  CHECK_OK(run(L, "local h = luacuda.host_stream()\n"
                  "assert(h ~= luacuda.default_stream())\n"
                  "h:close()   -- the host's: closing it does nothing\n"
                  "local a = luacuda.to_device({1, 2, 3}, h, {dtype = 'int32'})\n"
                  "local m = luacuda.compile[[extern \"C\" __global__ void inc(int *x) { x[threadIdx.x] += 1; }]]\n"
                  "m.inc[{1, 3, h}](a)\n"
                  "h:synchronize()\n"
                  "local r = a:copy_to_host()\n"
                  "assert(r[1] == 2 and r[3] == 4)"));
  CHECK(luacuda_getstream(L) == s);
  luacuda_setstream(L, NULL);
  CHECK(luacuda_getstream(L) == dflt);
  CHECK_ERR(protect(L, tostream_number), "luacuda.stream expected, got number");
  lua_close(L);
  return 0;
}

/* The script closes (and drops) the stream object the host set: the slot
** keeps the stream alive until the host sets another. */
static int test_host_stream_closed_by_script(void) {
  lua_State *L = new_state();
  CHECK_OK(run(L, "luacuda = require 'luacuda'\n s = luacuda.stream()"));
  lua_getglobal(L, "s");
  void *s = luacuda_tostream(L, -1);
  lua_pop(L, 1);
  luacuda_setstream(L, s);
  CHECK_OK(run(L, "s:close()  s = nil  collectgarbage()  collectgarbage()\n"
                  "luacuda.synchronize()\n"
                  "local h = luacuda.host_stream()\n"
                  "local a = luacuda.to_device({1, 2, 3}, h, {dtype = 'int32'})\n"
                  "local b = a:copy_to_host(nil, h)\n"
                  "h:synchronize()\n"
                  "assert(b[3] == 3)"));
  CHECK(luacuda_getstream(L) == s);
  luacuda_setstream(L, NULL);
  CHECK_OK(settle(L));
  lua_close(L);
  return 0;
}

/* ---- DLPack ---------------------------------------------------------------------- */

static int64_t tshape[2] = {2, 3};

static void delete_tensor(DLManagedTensor *t) {
  deleted++;
  free(t);
}

static DLManagedTensor *host_tensor(DLDataType dtype, int device) {
  DLManagedTensor *t = calloc(1, sizeof *t);
  t->dl_tensor = (DLTensor){.data = buf, .device = {(DLDeviceType)device, 0}, .ndim = 2,
                            .dtype = dtype, .shape = tshape};
  t->deleter = delete_tensor;
  return t;
}

static DLManagedTensor *pending;

static int import_pending(lua_State *L) {
  luacuda_from_dlpack(L, pending);
  lua_setglobal(L, "t");
  return 0;
}

static int test_dlpack_import_deleter_at_close(void) {
  lua_State *L = new_state();
  for (int i = 0; i < 6; i++) buf[i] = (float)i;
  pending = host_tensor((DLDataType){kDLFloat, 32, 1}, kDLCPU);
  CHECK_OK(protect(L, import_pending));
  CHECK_OK(run(L, "assert(t.dtype == 'float32' and t.kind == 'host' and t[{2, 3}] == 5)\n"
                  "v = t.T  t = nil  cap = v:to_dlpack()  collectgarbage()"));
  CHECK_OK(settle(L));
  CHECK_EQ(deleted, 0);
  lua_close(L);                             /* a view and a capsule alive */
  CHECK_EQ(deleted, 1);
  return 0;
}

static int test_dlpack_import_deleter_when_dropped(void) {
  lua_State *L = new_state();
  pending = host_tensor((DLDataType){kDLInt, 32, 1}, kDLCPU);
  CHECK_OK(protect(L, import_pending));
  CHECK_OK(run(L, "w = t[{2}]  t = nil"));
  CHECK_OK(settle(L));
  CHECK_EQ(deleted, 0);
  CHECK_OK(run(L, "w = nil"));
  CHECK_OK(settle(L));
  CHECK_EQ(deleted, 1);
  lua_close(L);
  CHECK_EQ(deleted, 1);
  return 0;
}

static int import_null(lua_State *L) {
  luacuda_from_dlpack(L, NULL);
  return 0;
}

static int test_dlpack_import_errors_keep_ownership(void) {
  lua_State *L = new_state();
  struct { DLDataType dt; int dev; const char *msg; } bad[] = {
    {{kDLComplex, 64, 1}, kDLCPU, "luacuda.from_dlpack: complex64 is not supported (luacuda has no complex dtypes)"},
    {{kDLBfloat, 32, 1}, kDLCPU, "luacuda.from_dlpack: bfloat32 is not supported"},
    {{kDLFloat, 32, 4}, kDLCPU, "luacuda.from_dlpack: vector dtypes (4 lanes) are not supported"},
    {{kDLInt, 24, 1}, kDLCPU, "luacuda.from_dlpack: 24-bit int is not supported"},
    {{kDLFloat, 32, 1}, kDLOpenCL, "luacuda.from_dlpack: device type 4 (OpenCL) is not supported (CPU, CUDA, CUDA host or CUDA managed)"},
    {{9, 32, 1}, kDLCPU, "luacuda.from_dlpack: DLPack type code 9 is not supported"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    pending = host_tensor(bad[i].dt, bad[i].dev);
    CHECK_ERR(protect(L, import_pending), bad[i].msg);
    CHECK_EQ(deleted, 0);
    delete_tensor(pending);                 /* still the caller's */
    deleted = 0;
  }
  pending = host_tensor((DLDataType){kDLFloat, 32, 1}, kDLCUDA);
  pending->dl_tensor.device.device_id = 3;
  CHECK_ERR(protect(L, import_pending),
            "luacuda.from_dlpack: the tensor is on device 4 (DLPack's device_id 3), but device 1 "
            "is current (luacuda.device)");
  delete_tensor(pending);
  static int64_t huge[2] = {INT64_MAX / 2, 1};
  pending = host_tensor((DLDataType){kDLFloat, 32, 1}, kDLCPU);
  pending->dl_tensor.strides = huge;
  CHECK_ERR(protect(L, import_pending), "luacuda.from_dlpack: stride 4611686018427387903 of axis 1 overflows");
  delete_tensor(pending);
  CHECK_ERR(protect(L, import_null), "luacuda.from_dlpack: tensor is NULL");
  deleted = 0;
  lua_close(L);
  return 0;
}

static DLManagedTensor *exported;

static int export_a(lua_State *L) {
  lua_getglobal(L, "a");
  exported = luacuda_to_dlpack(L, -1);
  return 0;
}

/* A tensor luacuda made, edited by the host before it comes back: its
** fields are bounded by the array it was made from. */
static int test_dlpack_import_edited_tensor(void) {
  lua_State *L = new_state();
  CHECK_OK(run(L, "a = require('luacuda').arange(12, 'float32'):reshape({3, 4})"));
  static int64_t wide[2] = {3, 5}, big_stride[2] = {40, 1}, back[2] = {-4, 1};
  struct { const char *what; int edit; const char *msg; } cases[] = {
    {"a larger shape", 0, "the tensor's data, shape and strides reach outside the 48 bytes of the array it was made from"},
    {"a larger stride", 1, "the tensor's data, shape and strides reach outside the 48 bytes of the array it was made from"},
    {"an offset past the end", 2, "the tensor's data, shape and strides reach outside the 48 bytes of the array it was made from"},
    {"a negative stride from the start", 3, "the tensor's data, shape and strides reach outside the 48 bytes of the array it was made from"},
    {"data before the buffer", 4, "the tensor's data, shape and strides reach outside the 48 bytes of the array it was made from"},
    {"no shape", 5, "luacuda.from_dlpack: shape is NULL"},
    {"another manager_ctx", 6, "luacuda.from_dlpack: the tensor was made by luacuda, but its manager_ctx was changed"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    CHECK_OK(protect(L, export_a));
    DLTensor *d = &exported->dl_tensor;
    DLTensor saved = *d;
    void *ctx = exported->manager_ctx;
    switch (cases[i].edit) {
      case 0: d->shape = wide; break;
      case 1: d->strides = big_stride; break;
      case 2: d->byte_offset = 48; break;
      case 3: d->strides = back; break;
      case 4: d->data = (char *)d->data - 4; break;
      case 5: d->shape = NULL; break;
      case 6: exported->manager_ctx = buf; break;
    }
    pending = exported;
    if (protect(L, import_pending) == 0) {
      fprintf(stderr, "  %s: imported\n", cases[i].what);
      return 1;
    }
    CHECK(strstr(err, cases[i].msg) != NULL);
    *d = saved;                         /* still the caller's: give it back */
    exported->manager_ctx = ctx;
    exported->deleter(exported);
  }
  /* unedited, and a view that stays inside, still import */
  CHECK_OK(protect(L, export_a));
  static int64_t row[1] = {4};
  exported->dl_tensor.ndim = 1;
  exported->dl_tensor.shape = row;
  exported->dl_tensor.strides = NULL;
  exported->dl_tensor.byte_offset = 32;
  pending = exported;
  CHECK_OK(protect(L, import_pending));
  CHECK_OK(run(L, "assert(t.size == 4 and t[1] == 8 and t[4] == 11)"));
  lua_close(L);
  return 0;
}

/* A capsule consumed by a finalizer while from_dlpack of it runs: the
** array made there takes the tensor, the outer call fails cleanly, and the
** deleter runs once. */
static int test_dlpack_capsule_consumed_meanwhile(void) {
  lua_State *L = new_state();
  CHECK_OK(run(L, "luacuda = require 'luacuda'\n"
                  "local cap = luacuda.arange(4, 'float32'):to_dlpack()\n"
                  "collectgarbage('incremental', 100, 1000)\n"
                  "collectgarbage()\n"
                  "setmetatable({}, {__gc = function()\n"
                  "  where = debug.traceback()\n"
                  "  inner = luacuda.from_dlpack(cap)\n"
                  "end})\n"
                  "collectgarbage('restart')   -- no debt: the next allocation steps\n"
                  "ok, e = pcall(luacuda.from_dlpack, cap)\n"
                  "collectgarbage('incremental', 200, 100)\n"
                  "assert(where and where:find('from_dlpack'), where)\n"
                  "assert(inner[4] == 3)\n"
                  "assert(not ok and e:find('the capsule was consumed already'), e)"));
  lua_close(L);
  return 0;
}

static int test_dlpack_export_outlives_state(void) {
  lua_State *L = new_state();
  for (int i = 0; i < 16; i++) buf[i] = (float)i;
  wrap_global(L, "a", 16);
  CHECK_OK(run(L, "a = a:reshape(4, 4)[{{1, 4, 2}, {2, 3}}]"));   /* rows 1, 3; cols 2, 3 */
  CHECK_OK(protect(L, export_a));
  lua_close(L);
  CHECK_EQ(released, 0);                    /* the tensor holds the memory */
  const DLTensor *d = &exported->dl_tensor;
  CHECK_EQ(d->device.device_type, kDLCPU);
  CHECK_EQ(d->dtype.code, kDLFloat);
  CHECK_EQ(d->dtype.bits, 32);
  CHECK_EQ(d->ndim, 2);
  CHECK_EQ(d->shape[0], 2);
  CHECK_EQ(d->shape[1], 2);
  CHECK_EQ(d->strides[0], 8);
  CHECK_EQ(d->strides[1], 1);
  const float *p = (const float *)((const char *)d->data + d->byte_offset);
  CHECK(p[0] == 1.0f && p[1] == 2.0f && p[8] == 9.0f && p[9] == 10.0f);
  exported->deleter(exported);
  CHECK_EQ(released, 1);
  return 0;
}

static int test_dlpack_export_device(void) {
  lua_State *L = new_state();
  CHECK_OK(run(L, "a = require('luacuda').to_device({{1, 2}, {3, 4}}, nil, {dtype = 'int64'})"));
  CHECK_OK(protect(L, export_a));
  const DLTensor *d = &exported->dl_tensor;
  /* sim: device memory is host memory, exported as CUDA device 0 */
  CHECK_EQ(d->device.device_type, kDLCUDA);
  CHECK_EQ(d->device.device_id, 0);
  CHECK_EQ(d->dtype.code, kDLInt);
  CHECK_EQ(d->dtype.bits, 64);
  lua_close(L);
  exported->deleter(exported);
  return 0;
}

static int export_number(lua_State *L) {
  lua_pushinteger(L, 7);
  luacuda_to_dlpack(L, -1);
  return 0;
}

static int test_dlpack_export_errors(void) {
  lua_State *L = new_state();
  CHECK_ERR(protect(L, export_number), "luacuda.to_dlpack: expected an array, got number");
  CHECK_OK(run(L, "a = require('luacuda').zeros(4, require('luacuda').record({{'x', 'int8'}}))"));
  CHECK_ERR(protect(L, export_a), "luacuda.to_dlpack: dtype");
  lua_close(L);
  return 0;
}

/* A new state where the backend is the simulator, whose device memory is
** host memory; NULL (the test skipped, and said so) on a GPU backend, where
** malloc'd memory is no device memory. */
static lua_State *new_state_on_sim(void) {
  lua_State *L = new_state();
  if (luaL_dostring(L, "return (require('luacuda').backend())") != LUA_OK ||
      strcmp(lua_tostring(L, -1), "sim") != 0) {
    lua_close(L);
    puts("(on a GPU backend: malloc'd memory is no device memory there; skipped)");
    return NULL;
  }
  lua_settop(L, 0);
  return L;
}

/* sim: "device" memory is host memory, so the host's buffer can be a
** device array that kernels use in place */
static int test_wrap_device_memory_kernel(void) {
  lua_State *L = new_state_on_sim();
  if (L == NULL) return 0;
  for (int i = 0; i < 8; i++) buf[i] = (float)i;
  int64_t n = 8;
  luacuda_wrap(L, buf, LUACUDA_DEVICE, "float32", 1, &n, NULL, count_release, NULL);
  lua_setglobal(L, "d");
  CHECK_OK(run(L, "local luacuda = require 'luacuda'\n"
                  "local m = luacuda.compile[[extern \"C\" __global__ void twice(float *x) { x[threadIdx.x] *= 2; }]]\n"
                  "m.twice[{1, 8}](d)\n"
                  "luacuda.synchronize()"));
  CHECK(buf[3] == 6.0f && buf[7] == 14.0f);
  lua_close(L);
  CHECK_EQ(released, 1);
  return 0;
}

static int test_capsules_at_close(void) {
  lua_State *L = new_state();
  wrap_global(L, "a", 8);
  /* one capsule never consumed, one consumed into an array still alive */
  CHECK_OK(run(L, "local luacuda = require 'luacuda'\n"
                  "c1 = a:to_dlpack()\n"
                  "b = luacuda.from_dlpack(a[{{2, 7}}]:to_dlpack())\n"
                  "a = nil"));
  CHECK_OK(settle(L));
  CHECK_EQ(released, 0);
  lua_close(L);
  CHECK_EQ(released, 1);
  return 0;
}

/* ---- aliases: one memory, two buffers -------------------------------------------- */

/* The operations whose output may alias an input, for the alias_* tests:
** the globals x and y are two arrays over the same n = k * k float32
** elements, each a buffer of its own (a wrap, a DLPack import, a mapped
** array). Each operation reads x and writes shifted, strided or reversed
** views of y, synchronously and on a stream; then the same on ref, a
** plain copy, with both sides through ref (views of one buffer, where
** luacuda has always given NumPy's results). x must then hold what ref
** holds. n is large enough that no loop or kernel reads all its inputs
** before it writes by luck. With copies_only set, x and y compute on
** different sides: copies only. */
enum { ALIAS_N = 64 * 64 };

static const char ALIAS_CHECKS[] =
  "local l = require 'luacuda'\n"
  "local n, k = #x, math.tointeger(math.sqrt(#x))\n"
  "local init = l.mod(l.arange(0, n, 1, 'float32'), 13) + 1   -- small: sums are exact\n"
  "local ref = x:copy()\n"
  "local s, bad = l.stream(), {}\n"
  "local function check(what, op)\n"
  "  x[{}] = init  ref[{}] = init\n"
  "  op(x, y)  op(ref, ref)\n"
  "  l.synchronize()\n"
  "  local got, want = x:copy_to_host():totable(), ref:copy_to_host():totable()\n"
  "  for i = 1, n do\n"
  "    if got[i] ~= want[i] then\n"
  "      bad[#bad + 1] = ('%s: element %d is %g, expected %g'):format(what, i, got[i], want[i])\n"
  "      return\n"
  "    end\n"
  "  end\n"
  "end\n"
  "local function mat(a) return a:reshape(k, k) end\n"
  "check('strided copy', function(i, o) o[{{3, n, 2}}] = i[{{1, n - 2, 2}}] end)\n"
  "local v, w = x:copy_to_host(), init:totable()   -- NumPy: a[2::2] = a[0:n-2:2]\n"
  "for j = 1, n do\n"
  "  local want = (j >= 3 and j % 2 == 1) and w[j - 2] or w[j]\n"
  "  if v[j] ~= want then\n"
  "    bad[#bad + 1] = ('strided copy: element %d is %g, NumPy gives %g'):format(j, v[j], want)\n"
  "    break\n"
  "  end\n"
  "end\n"
  "check('contiguous copy forward', function(i, o) o[{{3, n}}] = i[{{1, n - 2}}] end)\n"
  "check('contiguous copy back', function(i, o) o[{{1, n - 2}}] = i[{{3, n}}] end)\n"
  "check('reversed copy', function(i, o) o[{{n, 1, -1}}] = i end)\n"
  "local function copy_on_stream(src, dst)\n"
  "  if dst.kind == 'host' or dst.kind == 'pinned' then src:copy_to_host(dst, s)\n"
  "  else dst:copy_to_device(src, s) end\n"
  "end\n"
  "check('reversed copy on a stream', function(i, o) copy_on_stream(i, o[{{n, 1, -1}}]) end)\n"
  "check('strided copy on a stream', function(i, o) copy_on_stream(i[{{1, n - 2, 2}}], o[{{3, n, 2}}]) end)\n"
  "check('contiguous copy on a stream', function(i, o) copy_on_stream(i[{{1, n - 2}}], o[{{3, n}}]) end)\n"
  "if not copies_only then\n"
  "check('add into a shifted out', function(i, o) l.add(i[{{1, n - 2}}], 1, o[{{3, n}}]) end)\n"
  "check('multiply on a stream', function(i, o) l.multiply(i[{{1, n - 2}}], i[{{3, n}}], o[{{3, n}}], s) end)\n"
  "check('negative into a reversed out', function(i, o) l.negative(i, o[{{n, 1, -1}}], s) end)\n"
  "check('cumsum into a shifted out', function(i, o) i[{{1, n - 1}}]:cumsum({out = o[{{2, n}}]}) end)\n"
  "check('cumsum on a stream', function(i, o) i[{{1, n - 1}}]:cumsum({out = o[{{2, n}}], stream = s}) end)\n"
  "check('sum along an axis', function(i, o) mat(i):sum(2, {out = mat(o)[{k, {k, 1, -1}}]}) end)\n"
  "local function batch(a) return a:reshape(4, k // 2, k // 2) end   -- 4 matrices\n"
  "check('matmul', function(i, o)   -- product z reads matrix z + 1, product z - 1 wrote it\n"
  "  local a = batch(i)[{{1, 3}}]\n"
  "  l.matmul(a, a, batch(o)[{{2, 4}}], s)\n"
  "end)\n"
  "check('where', function(i, o) l.where(i:gt(6), i[{{n, 1, -1}}], i, o) end)\n"
  "end\n"
  "for _, why in ipairs(bad) do io.stderr:write(why, '\\n') end   -- every one, untruncated\n"
  "assert(#bad == 0, table.concat(bad, '; '))\n";

/* Run ALIAS_CHECKS on the globals x and y. */
static int alias_checks(lua_State *L, bool copies_only) {
  lua_pushboolean(L, copies_only);
  lua_setglobal(L, "copies_only");
  return run(L, ALIAS_CHECKS);
}

/* Push an array of kind over the same memory as the array in global name,
** with the same layout (1-d float32), through luacuda_wrap. */
static void wrap_alias_of(lua_State *L, const char *name, luacuda_kind kind) {
  lua_getglobal(L, name);
  luacuda_arrayinfo info;
  void *data = luacuda_checkarray(L, -1, &info);
  luacuda_wrap(L, data, kind, info.dtype, info.ndim, info.shape, info.strides, NULL, NULL);
  lua_remove(L, -2);        /* the original stays alive as the global */
}

static float alias_buf[ALIAS_N];

static int test_alias_wrapped_host(void) {
  lua_State *L = new_state();
  int64_t n = ALIAS_N;
  luacuda_wrap(L, alias_buf, LUACUDA_HOST, "float32", 1, &n, NULL, count_release, NULL);
  lua_setglobal(L, "x");
  luacuda_wrap(L, alias_buf, LUACUDA_HOST, "float32", 1, &n, NULL, count_release, NULL);
  lua_setglobal(L, "y");
  CHECK_OK(alias_checks(L, false));
  lua_close(L);
  CHECK_EQ(released, 2);
  return 0;
}

/* host memory registered in place (luacuda.register), and a pinned array
** over it that the host program wrapped; and a mapped array (luacuda.mapped)
** with a mapped wrap of the same memory: device-side math on both */
static int test_alias_registered_and_mapped(void) {
  lua_State *L = new_state();
  CHECK_OK(run(L, "l = require 'luacuda'\n"
                  "x = l.zeros(64 * 64, 'float32')  reg = l.register(x)"));
  wrap_alias_of(L, "x", LUACUDA_PINNED);
  lua_setglobal(L, "y");
  CHECK_OK(alias_checks(L, false));
  CHECK_OK(run(L, "y = nil  reg:close()\n"
                  "h = l.zeros(64 * 64, 'float32')  x = l.mapped(h)"));
  wrap_alias_of(L, "x", LUACUDA_MAPPED);
  lua_setglobal(L, "y");
  CHECK_OK(alias_checks(L, false));
  CHECK_OK(run(L, "y = nil collectgarbage() x:close()"));
  lua_close(L);
  return 0;
}

static int64_t dev_shape[1] = {ALIAS_N};

/* A tensor of the host's over the memory of the array in global name (a
** device array of ALIAS_N float32), which it does not own. */
static DLManagedTensor *foreign_tensor_of(lua_State *L, const char *name) {
  lua_getglobal(L, name);
  luacuda_arrayinfo info;
  void *data = luacuda_checkarray(L, -1, &info);
  lua_pop(L, 1);
  DLManagedTensor *t = calloc(1, sizeof *t);
  t->dl_tensor = (DLTensor){.data = data, .device = {kDLCUDA, info.device - 1}, .ndim = 1,
                            .dtype = {kDLFloat, 32, 1}, .shape = dev_shape};
  t->deleter = delete_tensor;
  return t;
}

/* device memory imported through DLPack, as another library's tensor
** would come: beside the array it came from, and twice */
static int test_alias_dlpack_device(void) {
  lua_State *L = new_state();
  CHECK_OK(run(L, "x = require('luacuda').device_array(64 * 64, 'float32')"));
  pending = foreign_tensor_of(L, "x");
  CHECK_OK(protect(L, import_pending));
  CHECK_OK(run(L, "y = t"));
  CHECK_OK(alias_checks(L, false));
  pending = foreign_tensor_of(L, "x");
  CHECK_OK(protect(L, import_pending));
  /* two imports of one memory, which the array they came from keeps */
  CHECK_OK(run(L, "owner = x  x = y  y = t"));
  CHECK_OK(alias_checks(L, false));
  lua_close(L);
  CHECK_EQ(deleted, 2);
  return 0;
}

/* sim: device memory is host memory, so a device array and a host array
** over the same bytes are one memory; on a GPU malloc'd memory is no
** device memory (and a device pointer may equal a host one without
** aliasing it) */
static int test_alias_device_is_host_on_sim(void) {
  lua_State *L = new_state_on_sim();
  if (L == NULL) return 0;
  int64_t n = ALIAS_N;
  luacuda_wrap(L, alias_buf, LUACUDA_HOST, "float32", 1, &n, NULL, NULL, NULL);
  lua_setglobal(L, "x");
  luacuda_wrap(L, alias_buf, LUACUDA_DEVICE, "float32", 1, &n, NULL, NULL, NULL);
  lua_setglobal(L, "y");
  CHECK_OK(alias_checks(L, true));
  CHECK_OK(run(L, "x, y = y, x"));
  CHECK_OK(alias_checks(L, true));
  lua_close(L);
  return 0;
}

/* ---- queued work, seen through every buffer over a memory ------------------------ */

/* The pending_* tests: the globals x and y are two arrays over the same n
** float32 elements of host-addressable memory, each a buffer of its own
** (two wraps of one pointer, a wrap or a DLPack import of an array's
** memory, a pinned wrap of registered memory). Work queued on a busy
** stream through one (a fill, a copy into it) is waited for by a host
** access through the other (a[i], totable, sum, a synchronous copy), and a
** write through one waits for a queued copy that reads the other; both
** ways round. Before issue 29's pending fix the access read 0 or the old
** values: the queued work was remembered by the buffer it went through
** only. */
static const char PENDING_CHECKS[] =
  "local n = #x\n"
  "local d, src = l.device_array(1, 'float32'), l.device_array(n, 'float32')\n"
  "local function busy() local s = l.stream() SPIN[{1, 1, s}](spins(), d, 1, 0) return s end\n"
  "local bad = {}\n"
  "local function expect(ok, what) if not ok then bad[#bad + 1] = what end end\n"
  "for _, names in ipairs({{'x', 'y'}, {'y', 'x'}}) do\n"
  "  local a, b = _G[names[1]], _G[names[2]]     -- work through b, the host through a\n"
  "  local how = (' (queued through %s, accessed through %s)'):format(names[2], names[1])\n"
  "  b:fill(0)\n"
  "  local s = busy()  b:fill(7, s)\n"
  "  expect(a[1] == 7 and a[n] == 7, 'a[i] after a fill: ' .. a[n] .. how)\n"
  "  s = busy()  b[{{1, n // 2}}]:fill(8, s)\n"
  "  local t = a:totable()\n"
  "  expect(t[1] == 8 and t[n // 2] == 8 and t[n] == 7, 'totable after a fill of a view' .. how)\n"
  "  s = busy()  b:fill(9, s)\n"
  "  expect(a:sum() == 9 * n, 'sum after a fill' .. how)\n"
  "  s = busy()  b:fill(6, s)\n"
  "  expect(a:copy()[n] == 6, 'a synchronous copy after a fill' .. how)\n"
  "  src:fill(5)\n"
  "  s = busy()  src:copy_to_host(b, s)\n"
  "  expect(a[n] == 5, 'a[i] after a copy from the device' .. how)\n"
  "  b:fill(1)\n"
  "  local c = l.zeros(n, 'float32')\n"
  "  s = busy()  b:copy_to_host(c, s)                -- reads b once s gets there\n"
  "  a[1] = 99  a[{{2, 3}}] = 98\n"
  "  s:synchronize()\n"
  "  expect(c[1] == 1 and c[3] == 1, 'a write before the queued copy read the memory' .. how)\n"
  "end\n"
  "l.synchronize()\n"
  "for _, why in ipairs(bad) do io.stderr:write(why, '\\n') end\n"
  "assert(#bad == 0, table.concat(bad, '; '))\n";

/* A stream held shut: close_gate(s) queues a host function that returns
** once open_gate() is called, so the work queued behind it is not done
** until then, however long the checks take. */
static atomic_int gate_shut;

static void gate_fn(void *ud) {
  (void)ud;
  while (atomic_load(&gate_shut)) {
    struct timespec t = {0, 1000000};
    nanosleep(&t, NULL);
  }
}

static int close_gate(lua_State *L) {
  atomic_store(&gate_shut, 1);
  luacuda_queuehost(L, luacuda_tostream(L, 1), gate_fn, NULL);
  return 0;
}

static int open_gate(lua_State *L) {
  (void)L;
  atomic_store(&gate_shut, 0);
  return 0;
}

/* PENDING_CHECKS in LUACUDA_STRICT_ASYNC=1: an access through one array
** while work queued through the other is not done is an error, naming the
** memory as another array's; a read is no conflict with work that only
** reads. Nothing raises while the gate is shut. */
static const char PENDING_STRICT[] =
  "local n = #x\n"
  "local bad = {}\n"
  "local function expect(ok, what) if not ok then bad[#bad + 1] = what end end\n"
  "local alias = ', through another array over the same memory'\n"
  "for _, names in ipairs({{'x', 'y'}, {'y', 'x'}}) do\n"
  "  local a, b = _G[names[1]], _G[names[2]]\n"
  "  local how = (' (queued through %s, accessed through %s)'):format(names[2], names[1])\n"
  "  local s = l.stream()\n"
  "  close_gate(s)  b:fill(7, s)\n"
  "  local ok, err = pcall(function() return a[1] end)\n"
  "  expect(not ok and err:find('still writes the ' .. a.kind .. ' float32 array of shape {' .. n .. '}' .. alias, 1, true),\n"
  "         'a[i]: ' .. tostring(err) .. how)\n"
  "  ok, err = pcall(function() a[1] = 1 end)\n"
  "  expect(not ok and err:find('luacuda.setitem: work queued on', 1, true), 'a[i] = v: ' .. tostring(err) .. how)\n"
  "  ok, err = pcall(a.totable, a)\n"
  "  expect(not ok and err:find('luacuda.totable: work queued on', 1, true), 'totable: ' .. tostring(err) .. how)\n"
  "  open_gate()  s:synchronize()\n"
  "  expect(a[1] == 7 and a[n] == 7, 'after the wait: ' .. a[n] .. how)\n"
  "  local c = l.zeros(n, 'float32')\n"
  "  close_gate(s)  b:copy_to_host(c, s)\n"
  "  ok, err = pcall(function() return a[1] end)\n"
  "  expect(ok, 'a read while queued work only reads: ' .. tostring(err) .. how)\n"
  "  ok, err = pcall(function() a[1] = 1 end)\n"
  "  expect(not ok and err:find('still reads the ' .. a.kind .. ' float32 array of shape {' .. n .. '}' .. alias, 1, true),\n"
  "         'a write while queued work reads: ' .. tostring(err) .. how)\n"
  "  open_gate()  s:synchronize()\n"
  "end\n"
  "for _, why in ipairs(bad) do io.stderr:write(why, '\\n') end\n"
  "assert(#bad == 0, table.concat(bad, '; '))\n";

/* Run PENDING_CHECKS on the globals x and y (SPIN from spin_kernel). */
static int pending_checks(lua_State *L) {
  return run(L, PENDING_CHECKS);
}

/* A tensor of the host's over n float32 of host memory at data, which it
** does not own (kDLCPU: a host array). */
static DLManagedTensor *foreign_host_tensor(void *data, int64_t *n) {
  DLManagedTensor *t = calloc(1, sizeof *t);
  t->dl_tensor = (DLTensor){.data = data, .device = {kDLCPU, 0}, .ndim = 1,
                            .dtype = {kDLFloat, 32, 1}, .shape = n};
  t->deleter = delete_tensor;
  return t;
}

/* foreign memory wrapped twice, as two luacuda_wrap calls of one pointer */
static int test_pending_wrapped_twice(void) {
  lua_State *L = new_state();
  CHECK_OK(run(L, spin_kernel));
  int64_t n = ALIAS_N;
  luacuda_wrap(L, alias_buf, LUACUDA_HOST, "float32", 1, &n, NULL, count_release, NULL);
  lua_setglobal(L, "x");
  luacuda_wrap(L, alias_buf, LUACUDA_HOST, "float32", 1, &n, NULL, count_release, NULL);
  lua_setglobal(L, "y");
  CHECK_OK(pending_checks(L));
  lua_close(L);
  CHECK_EQ(released, 2);
  return 0;
}

/* an array of luacuda's and the host program's wrap of its memory; and
** registered memory (luacuda.register) with a pinned wrap of it */
static int test_pending_wrap_of_an_array(void) {
  lua_State *L = new_state();
  CHECK_OK(run(L, spin_kernel));
  CHECK_OK(run(L, "x = l.zeros(64 * 64, 'float32')"));
  wrap_alias_of(L, "x", LUACUDA_HOST);
  lua_setglobal(L, "y");
  CHECK_OK(pending_checks(L));
  CHECK_OK(run(L, "y = nil  x = l.zeros(64 * 64, 'float32')  reg = l.register(x)"));
  wrap_alias_of(L, "x", LUACUDA_PINNED);
  lua_setglobal(L, "y");
  CHECK_OK(pending_checks(L));
  CHECK_OK(run(L, "y = nil collectgarbage() reg:close()"));
  lua_close(L);
  return 0;
}

/* DLPack imports of host memory: another library's tensor over an array's
** memory, and two imports of one foreign pointer */
static int test_pending_dlpack_imports(void) {
  lua_State *L = new_state();
  CHECK_OK(run(L, spin_kernel));
  int64_t n = ALIAS_N;
  CHECK_OK(run(L, "x = l.zeros(64 * 64, 'float32')"));
  lua_getglobal(L, "x");
  void *data = luacuda_checkarray(L, -1, NULL);
  lua_pop(L, 1);
  pending = foreign_host_tensor(data, &n);
  CHECK_OK(protect(L, import_pending));
  CHECK_OK(run(L, "y = t  t = nil"));
  CHECK_OK(pending_checks(L));
  pending = foreign_host_tensor(alias_buf, &n);
  CHECK_OK(protect(L, import_pending));
  CHECK_OK(run(L, "x = t"));
  pending = foreign_host_tensor(alias_buf, &n);
  CHECK_OK(protect(L, import_pending));
  CHECK_OK(run(L, "y = t  t = nil"));
  CHECK_OK(pending_checks(L));
  lua_close(L);
  CHECK_EQ(deleted, 3);
  return 0;
}

/* LUACUDA_STRICT_ASYNC=1 sees the same aliases: this test runs itself
** again in a process of its own with the setting (read once a process). */
static int test_pending_strict(void) {
  const char *v = getenv("LUACUDA_STRICT_ASYNC");
  if (v == NULL || strcmp(v, "1") != 0) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      setenv("LUACUDA_STRICT_ASYNC", "1", 1);
      execl("/proc/self/exe", "capi_test", "pending_strict", (char *)NULL);
      _exit(127);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return 0;
  }
  lua_State *L = new_state();
  lua_register(L, "close_gate", close_gate);
  lua_register(L, "open_gate", open_gate);
  CHECK_OK(run(L, "l = require 'luacuda'"));
  int64_t n = ALIAS_N;
  luacuda_wrap(L, alias_buf, LUACUDA_HOST, "float32", 1, &n, NULL, NULL, NULL);
  lua_setglobal(L, "x");
  luacuda_wrap(L, alias_buf, LUACUDA_HOST, "float32", 1, &n, NULL, NULL, NULL);
  lua_setglobal(L, "y");
  int rc = run(L, PENDING_STRICT);
  open_gate(L);                        /* whatever failed: nothing waits for ever */
  CHECK_OK(rc);
  /* (luacuda.mapped is spec/async_spec.lua's: a mapped array's access
  ** waits for the whole device, which the shut gate would hold for ever) */
  CHECK_OK(run(L, "x = l.zeros(64 * 64, 'float32')  reg = l.register(x)"));
  wrap_alias_of(L, "x", LUACUDA_PINNED);
  lua_setglobal(L, "y");
  rc = run(L, PENDING_STRICT);
  open_gate(L);
  CHECK_OK(rc);
  CHECK_OK(run(L, "y = nil collectgarbage() reg:close()"));
  lua_close(L);
  return 0;
}

/* ---- opening ---------------------------------------------------------------------- */

static int test_preload_every_lua_file(void) {
  lua_State *L = new_state();
  /* no search path at all: everything must come from package.preload */
  CHECK_OK(run(L, "package.path = '' package.cpath = ''\n"
                  "local luacuda = require 'luacuda'\n"
                  "assert(luacuda.to_device({1, 2}):copy_to_host()[2] == 2)\n"
                  "assert(tostring(luacuda.zeros(2, 'int8')):find('int8'))"));
  DIR *dir = opendir("lua/luacuda");
  CHECK(dir != NULL);
  int files = 0;
  for (struct dirent *e; (e = readdir(dir)) != NULL;) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 4, ".lua") != 0) continue;
    char mod[300];
    if (strcmp(e->d_name, "init.lua") == 0) snprintf(mod, sizeof mod, "luacuda");
    else snprintf(mod, sizeof mod, "luacuda.%.*s", (int)(n - 4), e->d_name);
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    int t = lua_getfield(L, -1, mod);
    lua_pop(L, 2);
    if (t != LUA_TFUNCTION) {
      closedir(dir);
      return failf(__FILE__, __LINE__, "%s is not in package.preload", mod);
    }
    files++;
  }
  closedir(dir);
  CHECK(files >= 4);
  lua_close(L);
  return 0;
}

/* A host that preempts its threads with SIGURG (Go's runtime does): the
** simulator's handlers, installed at the first launch, pass it on. */
static volatile sig_atomic_t urgent;
static void on_urgent(int sig) { (void)sig; urgent++; }

static int test_sigurg_reaches_the_host(void) {
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_urgent;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGURG, &sa, &old);
  lua_State *L = new_state();
  CHECK_OK(run(L, "local luacuda = require 'luacuda'\n"
                  "local m = luacuda.compile[[extern \"C\" __global__ void k(int *a) { a[0] = 1; }]]\n"
                  "local a = luacuda.device_array(1, 'int32')\n"
                  "m.k[{1, 1}](a)\n"
                  "luacuda.synchronize()\n"
                  "assert(a[1] == 1)"));
  urgent = 0;
  pthread_kill(pthread_self(), SIGURG);
  CHECK_EQ(urgent, 1);
  raise(SIGURG);
  CHECK_EQ(urgent, 2);
  CHECK_OK(run(L, "local luacuda = require 'luacuda'\n"
                  "local m = luacuda.compile[[extern \"C\" __global__ void k(int *a) { a[0] = 2; }]]\n"
                  "local a = luacuda.device_array(1, 'int32')\n"
                  "m.k[{1, 1}](a)\n"
                  "luacuda.synchronize()\n"
                  "assert(a[1] == 2)"));
  lua_close(L);
  sigaction(SIGURG, &old, NULL);
  return 0;
}

/* A fault signal that another thread sends (kill, tgkill) to a worker
** running a kernel is the host's, not the kernel's fault. */
static volatile sig_atomic_t segv_sent;
static void on_segv_sent(int sig) { (void)sig; segv_sent++; }

static void *signal_workers(void *arg) {
  (void)arg;
  usleep(200000);                       /* the kernel runs by now */
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    long tid = atol(e->d_name);
    if (tid > 0 && tid != (long)getpid() && tid != (long)syscall(SYS_gettid))
      syscall(SYS_tgkill, (long)getpid(), tid, SIGSEGV);
  }
  if (d) closedir(d);
  return NULL;
}

static int test_fault_signal_sent_is_the_hosts(void) {
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_segv_sent;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &old);
  lua_State *L = new_state();
  CHECK_OK(run(L, "luacuda = require 'luacuda'\n"
                  "m = luacuda.compile[[extern \"C\" __global__ void busy(int *a) {\n"
                  "  for (volatile long i = 0; i < 400000000; i++) {}\n"
                  "  a[blockIdx.x] = 1;\n"
                  "}]]\n"
                  "a = luacuda.device_array(4, 'int32')\n"
                  "m.busy[{4, 1}](a)   -- queued: runs while this thread goes on"));
  segv_sent = 0;
  pthread_t t;
  pthread_create(&t, NULL, signal_workers, NULL);
  pthread_join(t, NULL);
  CHECK_OK(run(L, "luacuda.synchronize()\n"
                  "assert(a:copy_to_host()[4] == 1)"));
  CHECK(segv_sent > 0);
  lua_close(L);
  sigaction(SIGSEGV, &old, NULL);
  return 0;
}

static int test_requiref(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "luacuda", luaopen_luacuda, 1);
  lua_pop(L, 1);
  CHECK_OK(run(L, "assert(luacuda == require 'luacuda')\n"
                  "assert(luacuda.stream and luacuda.from_dlpack and luacuda.host_stream)"));
  lua_close(L);
  return 0;
}

/* ---- the host program's CUDA context and pool (the CUDA backend) ------------------
** A host program has its own context current between luacuda calls and its
** own allocations in the device's default pool; luacuda works in its own
** context and pool and leaves the host's as they were (luacuda.h). These
** open the driver luacuda opened ($LUACUDA_LIBCUDA: the fake's, in
** spec/cuda_fake_spec.lua) and call it as a host program would. */

static struct {
  int (*Init)(unsigned flags);
  int (*DeviceGet)(int *d, int ordinal);
  int (*DevicePrimaryCtxRetain)(void **c, int d);
  int (*CtxSetCurrent)(void *c);
  int (*CtxGetCurrent)(void **c);
  int (*MemGetInfo)(size_t *free_bytes, size_t *total);
  int (*DeviceGetDefaultMemPool)(void **pool, int d);
  int (*MemPoolGetAttribute)(void *pool, int attr, void *v);
  int (*MemAllocAsync)(unsigned long long *p, size_t n, void *stream);
  int (*MemFreeAsync)(unsigned long long p, void *stream);
  int (*StreamCreate)(void **s, unsigned flags);
  int (*StreamDestroy)(void *s);
} cu;

enum { RELEASE_THRESHOLD = 4 };    /* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD */

/* 1 where luacuda is not on the CUDA backend (nothing to test), -1 when the
** driver cannot be opened, else 0 with cu filled and cuInit called. */
static int open_driver(void) {
  const char *backend = getenv("LUACUDA_BACKEND"), *lib = getenv("LUACUDA_LIBCUDA");
  if (backend == NULL || strcmp(backend, "cuda") != 0 || lib == NULL) {
    puts("(not on the CUDA backend with LUACUDA_LIBCUDA: skipped)");
    return 1;
  }
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) return -1;
  const struct { void *slot; const char *name; } syms[] = {
    {&cu.Init, "cuInit"}, {&cu.DeviceGet, "cuDeviceGet"},
    {&cu.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
    {&cu.CtxSetCurrent, "cuCtxSetCurrent"}, {&cu.CtxGetCurrent, "cuCtxGetCurrent"},
    {&cu.MemGetInfo, "cuMemGetInfo_v2"}, {&cu.DeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool"},
    {&cu.MemPoolGetAttribute, "cuMemPoolGetAttribute"}, {&cu.MemAllocAsync, "cuMemAllocAsync"},
    {&cu.MemFreeAsync, "cuMemFreeAsync"},
    {&cu.StreamCreate, "cuStreamCreate"}, {&cu.StreamDestroy, "cuStreamDestroy_v2"},
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    void *f = dlsym(h, syms[i].name);
    if (f == NULL) return -1;
    memcpy(syms[i].slot, &f, sizeof f);
  }
  return cu.Init(0) == 0 ? 0 : -1;
}

/* The host makes device 1's primary context (luacuda's too) current, as
** the runtime API does; *d1 is the device, *ctx the context. */
static int host_on_device1(int *d1, void **ctx) {
  CHECK_EQ(cu.DeviceGet(d1, 0), 0);
  CHECK_EQ(cu.DevicePrimaryCtxRetain(ctx, *d1), 0);
  CHECK_EQ(cu.CtxSetCurrent(*ctx), 0);
  return 0;
}

static void *current_context(void) {
  void *c = (void *)&cu;          /* not a context: seen if the call fails */
  cu.CtxGetCurrent(&c);
  return c;
}

static int test_host_context(void) {
  int opened = open_driver();
  if (opened > 0) return 0;
  CHECK_EQ(opened, 0);
  int d1, d2;
  void *ours, *mine;
  CHECK_EQ(cu.DeviceGet(&d1, 0), 0);
  CHECK_EQ(cu.DeviceGet(&d2, 1), 0);
  CHECK_EQ(cu.DevicePrimaryCtxRetain(&ours, d1), 0);    /* luacuda's: device 1's */
  CHECK_EQ(cu.DevicePrimaryCtxRetain(&mine, d2), 0);    /* the host's: device 2's */
  CHECK_EQ(cu.CtxSetCurrent(mine), 0);
  size_t free_before, free_after, total;
  CHECK_EQ(cu.MemGetInfo(&free_before, &total), 0);
  lua_State *L = new_state();
  CHECK_OK(run(L, "l = require 'luacuda' assert(l.backend() == 'cuda')"));
  CHECK(current_context() == mine);
  CHECK_OK(run(L, "a = l.to_device({1, 2, 3}) a[{}] = 5 assert(a:totable()[3] == 5)"));
  CHECK(current_context() == mine);
  /* a call that raises, a launch, a synchronize, finalizers */
  CHECK_ERR(run(L, "l.device_array(2^50, 'uint8')"), "luacuda.device_array: ");
  CHECK(current_context() == mine);
  CHECK_OK(run(L, "m = l.compile[[extern \"C\" __global__ void k(float *x) {}]]\n"
                  "m.k[{1, 1}](l.device_array(4, 'float32')) l.synchronize()"));
  CHECK(current_context() == mine);
  CHECK_OK(run(L, "a = nil collectgarbage() collectgarbage()"));
  CHECK(current_context() == mine);
  /* a thread with no context: luacuda's own is made current, and stays */
  CHECK_EQ(cu.CtxSetCurrent(NULL), 0);
  CHECK_OK(run(L, "b = l.to_device({1, 2, 3}) assert(b:totable()[2] == 2)"));
  CHECK(current_context() == ours);
  CHECK_EQ(cu.CtxSetCurrent(mine), 0);
  CHECK_OK(run(L, "b[2] = 7 assert(b[2] == 7) b = nil collectgarbage()"));
  CHECK(current_context() == mine);
  lua_close(L);
  CHECK(current_context() == mine);
  /* nothing of luacuda's went to the host's device */
  CHECK_EQ(cu.MemGetInfo(&free_after, &total), 0);
  CHECK_EQ(free_after, free_before);
  return 0;
}

static int test_host_default_pool(void) {
  int opened = open_driver();
  if (opened > 0) return 0;
  CHECK_EQ(opened, 0);
  int d1;
  void *ctx, *pool;
  CHECK_EQ(host_on_device1(&d1, &ctx), 0);
  CHECK_EQ(cu.DeviceGetDefaultMemPool(&pool, d1), 0);
  uint64_t before = 1, after = 2;
  CHECK_EQ(cu.MemPoolGetAttribute(pool, RELEASE_THRESHOLD, &before), 0);
  unsigned long long mem = 0;
  CHECK_EQ(cu.MemAllocAsync(&mem, 1 << 20, NULL), 0);  /* the host's own, in the default pool */
  lua_State *L = new_state();
  CHECK_OK(run(L, "l = require 'luacuda'\n"
                  "local a = l.device_array(1000, 'uint8')\n"
                  "local info = l.memory_info()\n"
                  "assert(info.pool_used == 1000 and info.pool_reserved == 1000,\n"
                  "       info.pool_used .. ' used, ' .. info.pool_reserved .. ' reserved')\n"
                  "a = nil collectgarbage() l.trim_pool()"));
  CHECK_EQ(cu.MemPoolGetAttribute(pool, RELEASE_THRESHOLD, &after), 0);
  CHECK_EQ(after, before);
  CHECK_EQ(cu.MemFreeAsync(mem, NULL), 0);
  lua_close(L);
  return 0;
}

/* Issue 14, item 1: the host hands scripts a non-blocking stream (the
** legacy stream does not wait for it). A call without a stream still waits
** for its work, and memory a script used on it is freed after that work
** (spec/cuda_fake_spec.lua runs this with every operation slowed down). */
static int test_host_nonblocking_stream(void) {
  int opened = open_driver();
  if (opened > 0) return 0;
  CHECK_EQ(opened, 0);
  int d1;
  void *ctx, *stream = NULL;
  CHECK_EQ(host_on_device1(&d1, &ctx), 0);
  CHECK_EQ(cu.StreamCreate(&stream, 1), 0);              /* CU_STREAM_NON_BLOCKING */
  lua_State *L = new_state();
  CHECK_OK(run(L, "l = require 'luacuda'"));
  luacuda_setstream(L, stream);
  CHECK_OK(run(L, "local s, n = l.host_stream(), 1 << 14\n"
                  "local h = l.pinned_array(n, 'float32') h[{}] = 1.5\n"
                  "local d = l.device_array(n, 'float32')\n"
                  "d:copy_to_device(h, s)\n"
                  "local t = d:copy_to_host()   -- no stream: waits for s\n"
                  "assert(t[1] == 1.5 and t[n] == 1.5, 'stale read: ' .. t[n])\n"
                  "local src, out = l.to_device(h), l.device_array(n, 'float32')\n"
                  "out:fill(0, s) out:copy_to_device(src, s)\n"
                  "src = nil collectgarbage()   -- freed after the copy on s\n"
                  "s:synchronize()\n"
                  "assert(out[1] == 1.5 and out[n] == 1.5, 'freed too early: ' .. out[n])"));
  lua_close(L);                      /* waits for what it queued on the stream */
  CHECK_EQ(cu.StreamDestroy(stream), 0);
  return 0;
}

#define T(name) { #name, test_##name }
static const unit_test tests[] = {
  T(wrap_shares_memory), T(wrap_release_after_views), T(wrap_release_at_close),
  T(wrap_closed_releases), T(wrap_errors_keep_ownership),
  T(checkarray_reads_views), T(checkarray_type_errors), T(waitarray_waits_for_queued_copies),
  T(host_stream), T(queuehost_in_stream_order), T(usearray_keeps_and_waits), T(usearray_errors),
  T(host_stream_closed_by_script), T(dlpack_import_edited_tensor),
  T(dlpack_capsule_consumed_meanwhile),
  T(dlpack_import_deleter_at_close), T(dlpack_import_deleter_when_dropped),
  T(dlpack_import_errors_keep_ownership), T(dlpack_export_outlives_state),
  T(dlpack_export_device), T(dlpack_export_errors), T(wrap_device_memory_kernel),
  T(capsules_at_close), T(alias_wrapped_host), T(alias_registered_and_mapped),
  T(alias_dlpack_device), T(alias_device_is_host_on_sim),
  T(pending_wrapped_twice), T(pending_wrap_of_an_array), T(pending_dlpack_imports),
  T(pending_strict),
  T(preload_every_lua_file), T(requiref), T(sigurg_reaches_the_host),
  T(fault_signal_sent_is_the_hosts), T(host_context), T(host_default_pool),
  T(host_nonblocking_stream),
};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

int main(int argc, char **argv) {
  return unit_main("capi_test", tests, NTESTS, argc, argv);
}
