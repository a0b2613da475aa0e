/*
** luacuda.h: the C API for programs that embed Lua and want their scripts
** to work on the program's own memory. Link the program with luacuda's
** core.so (it holds the whole module, its Lua parts included) and Lua 5.4.
**
**   luaL_openlibs(L);
**   luacuda_openlibs(L);              -- require "luacuda" now works
**
** Errors are Lua errors, as in the Lua C API: call these functions from a
** protected call (lua_pcall of a C function) where one may fail.
**
** The CUDA context (CUDA backend). The thread's current context stays the
** host program's: luacuda works in the primary context of the calling
** thread's current device (luacuda.select_device), makes it current for each of its
** driver calls and, when that call returns, makes current again the
** context it found (cuCtxPushCurrent / cuCtxPopCurrent). This holds for
** every way luacuda reaches the driver: Lua calls (also those that raise),
** finalizers (lua_gc, lua_close), deferred releases and these functions.
** Two exceptions: a thread with no current context is given luacuda's,
** which stays current (as the CUDA runtime does); and a host function that
** Lua code calls in the middle of a luacuda call (a metamethod, a
** finalizer) must leave the current context as it found it. Each luacuda
** call asks the driver which context is current (cuCtxGetCurrent), so the
** host may switch contexts freely between calls.
**
** Memory (CUDA backend): device arrays come from a memory pool of
** luacuda's own per device (cuMemPoolCreate), which keeps freed memory for
** the next allocation (luacuda.trim_pool gives it back; so does any call
** of luacuda's that fails for lack of device memory, before it fails; the
** host's own allocations do not: call trim_pool before them). The device's
** default pool, which the host's cuMemAllocAsync and cudaMallocAsync use,
** is left as the host set it; luacuda.memory_info's pool figures are
** luacuda's pool only.
*/
#ifndef LUACUDA_H
#define LUACUDA_H

#include <stdint.h>

#include "lua.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define LUACUDA_API __attribute__((visibility("default")))
#else
#define LUACUDA_API
#endif

/* DLPack's tensor (dlpack/dlpack.h); declared here so that including this
** header does not need DLPack's. */
struct DLManagedTensor;

/* Where an array's memory lies. The values are luacuda's own. */
typedef enum luacuda_kind {
  LUACUDA_HOST,     /* ordinary host memory */
  LUACUDA_PINNED,   /* page-locked host memory */
  LUACUDA_MAPPED,   /* page-locked host memory mapped into the device */
  LUACUDA_MANAGED,  /* unified memory */
  LUACUDA_DEVICE    /* device memory (host memory on the simulator) */
} luacuda_kind;

/* An array's memory and layout, as luacuda_checkarray reads it. shape and
** strides point into the array object: valid while it is alive. */
typedef struct luacuda_arrayinfo {
  void *data;              /* element 0 (a CUdeviceptr for device memory; the
                           ** host address for mapped memory, whose device
                           ** address may differ: cuMemHostGetDevicePointer) */
  luacuda_kind kind;
  const char *dtype;       /* "float32", ... as a.dtype; "record" for records */
  int64_t itemsize;        /* bytes */
  int ndim;
  const int64_t *shape;
  const int64_t *strides;  /* bytes, may be negative or zero */
  int64_t size;            /* elements */
  int device;              /* the device whose memory it is, from 1 as
                           ** luacuda.device(i) (host kinds: the device
                           ** current when it was allocated) */
} luacuda_arrayinfo;

/* Push the module, as require "luacuda" returns it (for luaL_requiref). */
LUACUDA_API int luaopen_luacuda(lua_State *L);

/* Put luacuda and its parts (luacuda.core and the Lua files) into
** package.preload, so that require "luacuda" needs no LUA_PATH or
** LUA_CPATH. Needs the package library (luaL_openlibs). */
LUACUDA_API void luacuda_openlibs(lua_State *L);

/* Push an array over memory the host owns, zero-copy. dtype is a name
** such as "float32"; strides are in bytes, NULL for C order; data points
** at element 0. release(ud), unless NULL, is called exactly once, when
** the last Lua reference to this memory (views and DLPack tensors made
** from it included) is gone: perhaps after lua_close, or on another
** thread, once the device work queued before it is done. On an error
** (raised as luacuda.wrap: cause) the memory stays the host's and
** release is not called. Memory wrapped twice, or memory an array has
** already, is one memory to luacuda: a copy or an out= between arrays
** over it that overlap gives NumPy's result (overlap is judged by
** address, in the host's and the devices' address spaces), and a host
** access through one array waits for the work queued through any other
** over the bytes it touches (see luacuda_waitarray). */
LUACUDA_API void luacuda_wrap(lua_State *L, void *data, luacuda_kind kind,
                              const char *dtype, int ndim, const int64_t *shape,
                              const int64_t *strides, void (*release)(void *ud),
                              void *ud);

/* The open array at arg: fills *info (when not NULL) and returns its data
** pointer; anything else raises a Lua argument error, as luaL_checkudata.
** Nothing is waited for: work a script queued on a stream (a copy or fill
** with a stream argument, a launch) may still write or read the memory.
** The host program waits before touching it (luacuda.synchronize, or the
** stream's synchronize; luacuda_tostream gives the script's stream). */
LUACUDA_API void *luacuda_checkarray(lua_State *L, int arg, luacuda_arrayinfo *info);

/* The same, returning NULL (and leaving *info) for anything but an open
** array. */
LUACUDA_API void *luacuda_toarray(lua_State *L, int idx, luacuda_arrayinfo *info);

/* Before the host reads (writing 0) or writes (writing 1) the memory of
** the open array at arg: wait for the copies and fills a script queued on
** streams that write it (or, for writing, read it too), and for launches
** queued with it when it is mapped or managed memory, as a[i] does from
** Lua; also that work queued through another array over the same bytes
** (luacuda.mapped over a host array, a wrap or DLPack import of memory an
** array has). Other work (a launch on device memory, work the host queued
** itself) is the host's to wait for. With LUACUDA_STRICT_ASYNC=1, such work not
** done yet raises luacuda.waitarray: cause instead. Anything but an open
** array raises an argument error, as luacuda_checkarray. */
LUACUDA_API void luacuda_waitarray(lua_State *L, int arg, int writing);

/* Work that a host program queues on a stream (a handle, as
** luacuda_tostream gives; NULL: the default stream) and that uses the
** memory of luacuda's arrays: call luacuda_usearray for each array before
** queuing it, and luacuda_queuedarray after.
** luacuda_usearray orders the array's allocation before the stream's
** later work (memory from a stream-ordered pool, allocated on another
** stream) and keeps the memory until the stream's work queued before the
** array's last reference goes is done, also when the script closes or
** drops the array meanwhile. It raises luacuda.usearray: <cause> when the
** backend cannot order them.
** luacuda_queuedarray makes host access from Lua (a[i]) to host-
** addressable memory wait for the work queued so far on the stream, which
** reads (writing 0) or writes (writing 1) it, as for luacuda's own queued
** copies, through this array or any other over the same bytes
** (LUACUDA_STRICT_ASYNC applies).
** Anything but an open array raises an argument error. */
LUACUDA_API void luacuda_usearray(lua_State *L, int arg, void *stream);
LUACUDA_API void luacuda_queuedarray(lua_State *L, int arg, void *stream, int writing);

/* Queue fn(ud) on stream (a handle as for luacuda_usearray): fn runs once
** the work queued before it on the stream is done, on a thread of
** luacuda's or the driver's, and the work queued on the stream after it
** waits until it returns. fn must not call Lua, luacuda or the CUDA
** driver. A failure to queue raises luacuda.queuehost: <cause>, and fn is
** never called. */
LUACUDA_API void luacuda_queuehost(lua_State *L, void *stream, void (*fn)(void *ud), void *ud);

/* The stream scripts should use: luacuda.host_stream() returns it. On the
** CUDA backend the handle is a CUstream, which the host keeps owning and
** must keep alive while it is set; on the simulator it is one of
** luacuda's own streams, from luacuda_tostream. A stream of luacuda's own
** (on either backend) is kept alive while it is set, also when the script
** closes its object. NULL sets the default stream back.
** A non-blocking stream (CU_STREAM_NON_BLOCKING) is allowed: luacuda asks
** its flags, and orders its synchronous calls and the default stream's
** frees after its work with events. Device memory a script used on the
** host's stream is freed on that stream (stream-ordered, after its work):
** keep the stream alive until those arrays are collected, or until
** lua_close, which waits for all of them. */
LUACUDA_API void luacuda_setstream(lua_State *L, void *stream);
/* The handle of the stream luacuda.host_stream() returns (the default
** stream's handle when none was set). Work the host queues on the default
** stream right after this call comes after the work queued so far on
** non-blocking streams, as luacuda's own calls without a stream do (the
** legacy default stream alone would not wait for them): call it again
** before each such piece of work. A failure to order them raises
** luacuda.getstream: <cause>. */
LUACUDA_API void *luacuda_getstream(lua_State *L);
/* The handle of the luacuda stream object at arg, or an argument error;
** for luacuda.default_stream() ordered as luacuda_getstream says
** (luacuda.tostream: <cause> when that fails). */
LUACUDA_API void *luacuda_tostream(lua_State *L, int arg);

/* The array at arg as a new DLPack tensor that the caller owns: call its
** deleter once when done with it (the array's memory stays alive until
** then, also after lua_close). Waits for the work queued so far, on every
** stream, so the data is ready to read when this returns (DLPack 0.6 has
** no way to hand over a stream). Arrays whose dtype or strides DLPack cannot
** describe raise luacuda.to_dlpack: cause. */
LUACUDA_API struct DLManagedTensor *luacuda_to_dlpack(lua_State *L, int arg);

/* Push an array sharing t's memory, which must be ready to read (the
** producer's work on it done, or queued on the legacy default stream). On
** success luacuda owns t and calls its deleter exactly once, when the last
** reference is gone; on an error (luacuda.from_dlpack: cause) t is still
** the caller's. An import of memory an array has already overlaps it as
** luacuda_wrap says. */
LUACUDA_API void luacuda_from_dlpack(lua_State *L, struct DLManagedTensor *t);

#ifdef __cplusplus
}
#endif

#endif
