/*
** examples/embed/host.c: a C program that embeds Lua and luacuda. It owns
** its data; a script runs kernels on that data in place, and the two sides
** exchange a tensor through DLPack. Runs on either backend.
**
**   make embed && build/embed_host
*/
#include <dlpack/dlpack.h>
#include <stdio.h>
#include <stdlib.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"
#include "luacuda.h"

#define N 1000

/* What the script does; the host calls its functions. */
static const char *script =
  "local luacuda = require 'luacuda'\n"
  "local m = luacuda.compile([[\n"
  "extern \"C\" __global__ void scale(float *x, float k, int n) {\n"
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
  "  if (i < n) x[i] *= k;\n"
  "}\n"
  "extern \"C\" __global__ void add_one(int *x, int n) {\n"
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
  "  if (i < n) x[i] += 1;\n"
  "}]])\n"
  "local M = {}\n"
  "-- the host's buffer, mapped into the device while the kernel runs on it\n"
  "function M.scale(data, k)\n"
  "  local s = luacuda.host_stream()\n"
  "  local dev <close> = luacuda.mapped(data)\n"
  "  m.scale[{(data.size + 127) // 128, 128, s}](dev, k, data.size)\n"
  "  s:synchronize()\n"
  "end\n"
  "-- a tensor in, a new one out: a + 1, transposed (a view)\n"
  "function M.add_one_t(a)\n"
  "  local d = luacuda.to_device(a)\n"
  "  m.add_one[{1, 128}](d, d.size)\n"
  "  return d:copy_to_host().T\n"
  "end\n"
  "return M\n";

static int buffers_released, tensors_deleted;

static void release_buffer(void *ud) {
  free(ud);
  buffers_released++;
}

/* The deleter of the tensor the host gives away. */
static void delete_tensor(DLManagedTensor *t) {
  free(t->dl_tensor.data);
  free(t);
  tensors_deleted++;
}

/* A 2x3 int32 tensor of the host's, on the CPU. */
static DLManagedTensor *make_tensor(void) {
  static int64_t shape[2] = {2, 3};
  DLManagedTensor *t = calloc(1, sizeof *t);
  int32_t *v = malloc(6 * sizeof *v);
  if (t == NULL || v == NULL) abort();
  for (int i = 0; i < 6; i++) v[i] = 10 * i;
  t->dl_tensor = (DLTensor){.data = v, .device = {kDLCPU, 0}, .ndim = 2,
                            .dtype = {kDLInt, 32, 1}, .shape = shape};
  t->deleter = delete_tensor;
  return t;
}

/* Everything that can raise runs here, under lua_pcall. */
static int run(lua_State *L) {
  int ok = 1;
  if (luaL_dostring(L, script)) return lua_error(L);   /* the script's table */
  int M = lua_gettop(L);

  /* 1. the host's buffer, wrapped zero-copy; a script kernel scales it */
  float *x = malloc(N * sizeof *x);
  if (x == NULL) return luaL_error(L, "out of memory");
  for (int i = 0; i < N; i++) x[i] = (float)i;
  int64_t n = N;
  luacuda_wrap(L, x, LUACUDA_HOST, "float32", 1, &n, NULL, release_buffer, x);
  lua_getfield(L, M, "scale");
  lua_pushvalue(L, -2);
  lua_pushnumber(L, 2.5);
  lua_call(L, 2, 0);
  for (int i = 0; i < N; i++) ok &= x[i] == 2.5f * (float)i;
  printf("scaled in place: x[1] = %g, x[999] = %g: %s\n", x[1], x[999], ok ? "ok" : "FAILED");
  lua_pop(L, 1);        /* the script holds no reference: x goes at a collection */

  /* 2. a tensor in through DLPack, a tensor out */
  lua_getfield(L, M, "add_one_t");
  luacuda_from_dlpack(L, make_tensor());
  lua_call(L, 1, 1);
  luacuda_arrayinfo info;
  luacuda_checkarray(L, -1, &info);
  DLManagedTensor *out = luacuda_to_dlpack(L, -1);
  lua_pop(L, 1);
  const DLTensor *d = &out->dl_tensor;
  printf("from the script: %s {%lld, %lld}, device type %d, strides {%lld, %lld}\n",
         info.dtype, (long long)d->shape[0], (long long)d->shape[1],
         (int)d->device.device_type, (long long)d->strides[0], (long long)d->strides[1]);
  const int32_t *v = (const int32_t *)((const char *)d->data + d->byte_offset);
  int dl_ok = d->device.device_type == kDLCPU && d->dtype.code == kDLInt && d->shape[0] == 3;
  for (int i = 0; dl_ok && i < 3; i++)
    for (int j = 0; j < 2; j++)
      dl_ok &= v[i * d->strides[0] + j * d->strides[1]] == 10 * (j * 3 + i) + 1;
  printf("dlpack round trip: %s\n", dl_ok ? "ok" : "FAILED");
  out->deleter(out);    /* the host is done with it */
  lua_pushboolean(L, ok && dl_ok);
  return 1;
}

int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luacuda_openlibs(L);          /* require "luacuda" needs no LUA_PATH now */
  lua_pushcfunction(L, run);
  int ok = lua_pcall(L, 0, 1, 0) == LUA_OK;
  if (!ok) fprintf(stderr, "error: %s\n", lua_tostring(L, -1));
  else ok = lua_toboolean(L, -1);
  if (luaL_dostring(L, "return ((require 'luacuda').backend())") == LUA_OK)
    printf("backend: %s\n", lua_tostring(L, -1));
  lua_close(L);
  /* the state is gone: every wrapped buffer and tensor was given back once */
  printf("released: %d buffer, %d tensor\n", buffers_released, tensors_deleted);
  ok = ok && buffers_released == 1 && tensors_deleted == 1;
  printf("check: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
