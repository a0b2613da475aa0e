/*
** gcpace: the bytes of live buffers, told to Lua's collector. The
** collector sees an array as its small userdata, not the memory behind it,
** so dropped arrays would wait for a cycle paced by Lua's own allocations
** while gigabytes of buffers pile up behind them.
*/
#ifndef LUACUDA_GCPACE_H
#define LUACUDA_GCPACE_H

#include <stddef.h>

#include "lua.h"

/* Before an allocation of nbytes: a step of the collector in proportion
** to nbytes, and a full collection when the bytes of live
** buffers would pass half as much again as what was live after the last
** one, and 16 MiB more, as Lua's pause does for its own memory. */
void lc_gcpace_before(lua_State *L, size_t nbytes);
/* A buffer of nbytes made, and one let go of (its last reference). */
void lc_gcpace_added(size_t nbytes);
void lc_gcpace_dropped(size_t nbytes);
/* the bytes of live buffers made by lc_buffer_new, in the whole process:
** within 64 KiB a thread (each thread's small buffers are counted in
** steps of that much; its own are in) */
size_t lc_gcpace_live(void);

#endif
