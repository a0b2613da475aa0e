/*
** dlpack: arrays in and out as DLPack tensors (dlpack/dlpack.h, the
** interchange of PyTorch, CuPy, JAX and TVM), from C as DLManagedTensor
** pointers and from Lua as capsules that can be consumed once.
**
** Ownership: a tensor made here holds a reference to the array's buffer
** and drops it in its deleter; a tensor taken in is owned by the array's
** buffer, which calls its deleter when the last view goes. Memory kinds:
** host is kDLCPU, pinned and mapped are kDLCUDAHost, managed is
** kDLCUDAManaged and device is kDLCUDA (with the device's number): on the
** simulator too, where "device" memory is host memory and the only device
** is 0, so a host program's code paths are the same as on a GPU.
*/
#include <dlpack/dlpack.h>
#include <stdio.h>
#include <stdlib.h>

#include "capi.h"
#include "pending.h"
#include "gate.h"
#include "args.h"
#include "luacuda.h"
#include "stream.h"

#define CAPSULE_MT "luacuda.dlpack"

/* dtype.h's DLPack codes are the header's */
_Static_assert((int)LC_DL_INT == (int)kDLInt && (int)LC_DL_UINT == (int)kDLUInt &&
               (int)LC_DL_FLOAT == (int)kDLFloat && (int)LC_DL_BFLOAT == (int)kDLBfloat,
               "DLPack type codes");

/* ---- dtypes ----------------------------------------------------------------- */

static int dtype_to_dl(const lc_dtype *dt, DLDataType *out) {
  if (dt->rec) return -1;
  out->code = (uint8_t)dt->dl_code;
  out->bits = (uint8_t)(dt->size * 8);
  out->lanes = 1;
  return 0;
}

static const lc_dtype *dtype_from_dl(DLDataType t, char *err) {
  if (t.lanes != 1) {
    lc_errf(err, "vector dtypes (%u lanes) are not supported", (unsigned)t.lanes);
    return NULL;
  }
  for (int i = 0; i < LC_NTYPES; i++)
    if (lc_dtypes[i].dl_code == t.code && lc_dtypes[i].size * 8 == t.bits) return &lc_dtypes[i];
  switch (t.code) {
    case kDLInt: case kDLUInt: case kDLFloat: case LC_DL_BOOL:
      lc_errf(err, "%u-bit %s is not supported", (unsigned)t.bits,
              t.code == kDLInt ? "int" : t.code == kDLUInt ? "uint"
              : t.code == kDLFloat ? "float" : "bool");
      return NULL;
    case kDLBfloat:
      lc_errf(err, "bfloat%u is not supported", (unsigned)t.bits);
      return NULL;
    case kDLComplex:
      lc_errf(err, "complex%u is not supported (luacuda has no complex dtypes)",
              (unsigned)t.bits);
      return NULL;
    default:
      lc_errf(err, "DLPack type code %u is not supported", (unsigned)t.code);
      return NULL;
  }
}

/* ---- out: an array as a tensor -------------------------------------------- */

typedef struct export_ctx {
  DLManagedTensor t;
  lc_buffer *buf;                 /* a reference, dropped by the deleter */
  int64_t shape[LC_MAXDIM];
  int64_t strides[LC_MAXDIM];     /* in elements, as DLPack counts them */
} export_ctx;

static void export_delete(DLManagedTensor *t) {
  export_ctx *c = t->manager_ctx;
  lc_buffer_release(c->buf);
  free(c);
}

static DLManagedTensor *to_dlpack(lua_State *L, int arg, const char *fname) {
  lc_array *a = lc_array_check(L, arg, fname);
  DLDataType dtype;
  if (dtype_to_dl(a->dtype, &dtype))
    lc_error(L, fname, "dtype %s has no DLPack type", a->dtype->name);
  int64_t isz = a->dtype->size;
  for (int i = 0; i < a->lay.ndim; i++)
    if (a->lay.strides[i] % isz)
      lc_error(L, fname, "stride %lld of axis %d is not a multiple of the itemsize %lld",
               (long long)a->lay.strides[i], i + 1, (long long)isz);
  DLDevice dev = {kDLCPU, 0};
  switch (lc_array_kind(a)) {
    case LC_HOST: break;
    case LC_PINNED: case LC_MAPPED: dev.device_type = kDLCUDAHost; break;
    case LC_MANAGED: dev.device_type = kDLCUDAManaged; dev.device_id = a->buf->device; break;
    default: dev.device_type = kDLCUDA; dev.device_id = a->buf->device; break;
  }
  /* DLPack 0.6 carries no stream: the consumer may read at once, on any
  ** stream or on the host, so the work queued before must be done */
  lc_pending_wait(L, a, true, fname);
  lc_sync_host_slow(L, fname);
  export_ctx *c = malloc(sizeof *c);
  if (c == NULL) lc_error(L, fname, "out of host memory");
  for (int i = 0; i < a->lay.ndim; i++) {
    c->shape[i] = a->lay.shape[i];
    c->strides[i] = a->lay.strides[i] / isz;
  }
  lc_buffer_retain(a->buf);
  c->buf = a->buf;
  c->t.dl_tensor = (DLTensor){
    .data = a->buf->ptr, .device = dev, .ndim = a->lay.ndim, .dtype = dtype,
    .shape = c->shape, .strides = c->strides, .byte_offset = (uint64_t)a->lay.offset,
  };
  c->t.manager_ctx = c;
  c->t.deleter = export_delete;
  return &c->t;
}

/* ---- in: a tensor as an array --------------------------------------------- */

static void call_deleter(void *ud) {
  DLManagedTensor *t = ud;
  if (t->deleter) t->deleter(t);
}

static const char *device_name(int type) {
  switch (type) {
    case kDLOpenCL: return "OpenCL";
    case kDLVulkan: return "Vulkan";
    case kDLMetal: return "Metal";
    case kDLVPI: return "VPI";
    case kDLROCM: return "ROCm";
    case kDLROCMHost: return "ROCm host";
    case kDLExtDev: return "ext_dev";
    default: return "unknown";
  }
}

/* A capsule: a tensor that Lua code passes around, consumed once. */
typedef struct capsule {
  DLManagedTensor *t;          /* NULL once consumed */
} capsule;

/* Push an array over t's memory; owns t only when it returns. With c, t is
** c's, and c is emptied at the moment the array takes t: the push of the
** array may run a finalizer, which may have consumed c meanwhile. */
static lc_array *from_dlpack(lua_State *L, DLManagedTensor *t, capsule *c, const char *fname) {
  if (t == NULL) lc_error(L, fname, "tensor is NULL");
  const DLTensor *d = &t->dl_tensor;
  lc_kind kind;
  switch ((int)d->device.device_type) {
    case kDLCPU: kind = LC_HOST; break;
    case kDLCUDAHost: kind = LC_PINNED; break;
    case kDLCUDAManaged: kind = LC_MANAGED; break;
    case kDLCUDA: kind = LC_DEVICE; break;
    default:
      lc_error(L, fname, "device type %d (%s) is not supported (CPU, CUDA, CUDA host "
               "or CUDA managed)", (int)d->device.device_type,
               device_name((int)d->device.device_type));
  }
  if (kind == LC_DEVICE || kind == LC_MANAGED) {
    /* DLPack's device_id is CUDA's ordinal, from 0; luacuda's messages
    ** count devices from 1, as luacuda.device(i) does */
    int cur = lc_backend_get(NULL)->current_device();
    if (d->device.device_id != cur)
      lc_error(L, fname, "the tensor is on device %lld (DLPack's device_id %d), but device %d "
               "is current (luacuda.device)", (long long)d->device.device_id + 1,
               d->device.device_id, cur + 1);
  }
  char err[LC_ERRLEN];
  const lc_dtype *dt = dtype_from_dl(d->dtype, err);
  if (dt == NULL) lc_error(L, fname, "%s", err);
  if (d->ndim < 0 || d->ndim > LC_MAXDIM)
    lc_error(L, fname, "ndim must be 0..%d, got %d", LC_MAXDIM, d->ndim);
  if (d->ndim > 0 && d->shape == NULL) lc_error(L, fname, "shape is NULL");
  int64_t strides[LC_MAXDIM];
  if (d->strides) {
    for (int i = 0; i < d->ndim; i++)
      if (__builtin_mul_overflow(d->strides[i], dt->size, &strides[i]))
        lc_error(L, fname, "stride %lld of axis %d overflows", (long long)d->strides[i], i + 1);
  }
  char *data = (char *)d->data + d->byte_offset;
  lc_layout lay;
  int64_t span;
  lc_wrap_layout(L, data, kind, dt, d->ndim, d->shape, d->strides ? strides : NULL, &lay, &span,
                 fname);
  /* one of ours: it shares its buffer, which keeps the exact memory kind,
  ** so whatever its fields now say must lie within that buffer */
  export_ctx *x = t->deleter == export_delete ? t->manager_ctx : NULL;
  if (x) {
    if (x != (export_ctx *)t)
      lc_error(L, fname, "the tensor was made by luacuda, but its manager_ctx was changed");
    uintptr_t base = (uintptr_t)x->buf->ptr, lo = (uintptr_t)data - (uintptr_t)lay.offset;
    if (lo < base || lo - base > x->buf->nbytes || (uint64_t)span > x->buf->nbytes - (lo - base))
      lc_error(L, fname, "the tensor's data, shape and strides reach outside the %zu bytes "
               "of the array it was made from", x->buf->nbytes);
    lay.offset = (int64_t)((uintptr_t)data - base);     /* element 0 in the buffer */
  }
  lc_array *a = lc_array_push_closed(L, dt);
  a->lay = lay;
  if (c && c->t != t) lc_error(L, fname, "the capsule was consumed already");
  if (x) {
    lc_buffer_retain(x->buf);
    a->buf = x->buf;
    if (c) c->t = NULL;
    export_delete(t);
  } else {
    lc_wrap_attach(L, a, data, kind, span, call_deleter, t, fname);
    if (c) c->t = NULL;
  }
  return a;
}

/* ---- the C API -------------------------------------------------------------- */

LUACUDA_API struct DLManagedTensor *luacuda_to_dlpack(lua_State *L, int arg) {
  return to_dlpack(L, arg, "to_dlpack");
}

LUACUDA_API void luacuda_from_dlpack(lua_State *L, struct DLManagedTensor *t) {
  lc_capi_ensure_open(L);
  from_dlpack(L, t, NULL, "from_dlpack");
}

/* ---- capsules --------------------------------------------------------------- */

/*** @module luacuda */

/*** @type Array */

/***
Exports the array as a DLPack tensor (sharing its memory) in a capsule,
for @{from_dlpack} or a host program's C API (`luacuda_from_dlpack`).
@function Array:to_dlpack
@treturn userdata a capsule (`luacuda.dlpack`), consumed once
@raise `luacuda.to_dlpack: <cause>` when `a` is not an open array or its dtype has no DLPack code
@usage local cap = luacuda.zeros({3}):to_dlpack()
local b = luacuda.from_dlpack(cap)
*/

/*** @section end */

/* a:to_dlpack() -> a capsule holding a new tensor */
static int array_to_dlpack(lua_State *L) {
  lc_array_check(L, 1, "to_dlpack");
  capsule *c = lua_newuserdatauv(L, sizeof *c, 0);
  c->t = NULL;
  luaL_setmetatable(L, CAPSULE_MT);
  c->t = to_dlpack(L, 1, "to_dlpack");
  return 1;
}

/***
An array sharing the memory of the tensor in a DLPack capsule, which it
consumes.
@function from_dlpack
@tparam userdata capsule from @{Array:to_dlpack}
@treturn Array
@raise `luacuda.from_dlpack: expected a DLPack capsule (from to_dlpack), got <type>`;
`the capsule was consumed already`
@usage local a = luacuda.arange(4)
local b = luacuda.from_dlpack(a:to_dlpack())
b[1] = 9   -- a[1] is 9 too
*/

/* from_dlpack(capsule) -> an array sharing the tensor's memory */
static int l_from_dlpack(lua_State *L) {
  capsule *c = luaL_testudata(L, 1, CAPSULE_MT);
  if (c == NULL)
    lc_error(L, "from_dlpack", "expected a DLPack capsule (from to_dlpack), got %s",
             lc_typename(L, 1));
  if (c->t == NULL) lc_error(L, "from_dlpack", "the capsule was consumed already");
  from_dlpack(L, c->t, c, "from_dlpack");    /* the array owns the tensor now */
  return 1;
}

/* a capsule never consumed gives its tensor back */
static int capsule_gc(lua_State *L) {
  capsule *c = lua_touserdata(L, 1);
  DLManagedTensor *t = c->t;
  c->t = NULL;
  if (t && t->deleter) t->deleter(t);
  return 0;
}

static int capsule_tostring(lua_State *L) {
  capsule *c = lc_check_userdata(L, 1, CAPSULE_MT, "a DLPack capsule", "tostring");
  if (c->t == NULL) lua_pushliteral(L, "luacuda.dlpack(consumed)");
  else lua_pushfstring(L, "luacuda.dlpack(%p)", (void *)c->t);
  return 1;
}

void lc_dlpack_open(lua_State *L) {
  static const luaL_Reg meta[] = {
    {"__gc", capsule_gc}, {"__tostring", capsule_tostring}, {NULL, NULL}
  };
  static const luaL_Reg methods[] = {{"to_dlpack", array_to_dlpack}, {NULL, NULL}};
  lc_new_type(L, CAPSULE_MT, meta, NULL);
  lc_array_add_methods(L, methods);
  static const luaL_Reg fns[] = {{"from_dlpack", l_from_dlpack}, {NULL, NULL}};
  lc_setfuncs(L, fns);
}
