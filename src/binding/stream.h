/*
** stream: streams as the rest of the binding sees them (stream.c): the
** stream argument every queuing function takes, the host program's stream
** (the C API), and the host's wait before it touches memory a kernel may
** be using.
*/
#ifndef LUACUDA_STREAM_H
#define LUACUDA_STREAM_H

#include "backend.h"
#include "lua.h"

/* The optional stream argument at idx: nil/none gives NULL (synchronous). */
lc_stream *lc_opt_stream(lua_State *L, int idx, const char *fname);

/* The stream host_stream() returns in this state: the host program's
** (a backend handle, see backend.h's stream_wrap), or with NULL the
** default stream again. */
void lc_set_host_stream(lua_State *L, void *native, const char *fname);
/* The backend handle of the stream host_stream() returns, for a host
** program to queue on: the default stream ordered after the work queued
** so far on non-blocking streams, as luacuda's own calls without a stream
** are (backend.h's stream_host_use). */
void *lc_host_stream_native(lua_State *L);
/* The backend handle of the open stream at idx; NULL for anything else. */
void *lc_stream_native_at(lua_State *L, int idx);

/* Before the host reads or writes memory of kind k with no stream: memory a
** kernel may be using (mapped, managed) waits for the queued work first,
** and a failure of that work is raised. */
void lc_sync_host_slow(lua_State *L, const char *fname);
static inline void lc_sync_host(lua_State *L, lc_kind k, const char *fname) {
  if (k == LC_MAPPED || k == LC_MANAGED) lc_sync_host_slow(L, fname);
}

#endif
