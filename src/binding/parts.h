/*
** parts: what the module is assembled from. Each *_open adds one file's
** functions to the table on top (and registers its types); only core.c,
** the assembler, calls them. The Lua files come built in (embed.c).
*/
#ifndef LUACUDA_PARTS_H
#define LUACUDA_PARTS_H

#include "lua.h"

/* The C part, require "luacuda.core" (core.c). */
int luaopen_luacuda_core(lua_State *L);

void lc_device_open(lua_State *L);    /* device.c: devices, select_device, device */
void lc_array_open(lua_State *L);     /* array.c: the type, attr */
void lc_index_open(lua_State *L);     /* index.c: __index, __newindex */
void lc_iterate_open(lua_State *L);   /* iterate.c: pairs(a), a:ipairs() */
void lc_shape_open(lua_State *L);     /* shape.c: reshape, transpose, ... */
void lc_copy_open(lua_State *L);      /* copy.c: copy methods */
void lc_element_open(lua_State *L);   /* element.c: the dtype table for Lua */
void lc_record_open(lua_State *L);    /* record.c */
void lc_create_open(lua_State *L);    /* create.c */
void lc_join_open(lua_State *L);      /* join.c: concatenate, stack */
void lc_convert_open(lua_State *L);   /* convert.c */
void lc_module_open(lua_State *L);    /* module.c: compile, Module */
void lc_kernel_open(lua_State *L);    /* kernel.c: Kernel */
void lc_stream_open(lua_State *L);    /* stream.c: Stream */
void lc_event_open(lua_State *L);     /* event.c: Event */
void lc_ptx_open(lua_State *L);       /* ptx.c */
void lc_hostmem_open(lua_State *L);   /* hostmem.c */
void lc_dlpack_open(lua_State *L);    /* dlpack.c */
void lc_reduce_open(lua_State *L);    /* reduce.c: sum, mean, argmax, cumsum, ... */
void lc_math_open(lua_State *L);      /* math.c: operators, add ... where, astype */
void lc_random_open(lua_State *L);    /* random.c: random, the generators */
void lc_matmul_open(lua_State *L);    /* matmul.c: matmul, blas */
void lc_npy_open(lua_State *L);       /* npy.c: save, load (after record.c) */
void lc_gather_open(lua_State *L);    /* gather.c: take, put, add_at, nonzero, bincount */
void lc_sort_open(lua_State *L);      /* sort.c: sort, argsort, searchsorted, unique */

/* The Lua files of lua/luacuda/, NUL-terminated (embed.c): module name,
** file name (for messages) and source; the list ends with a NULL name. */
typedef struct lc_embedded {
  const char *module;
  const char *file;
  const char *source;
} lc_embedded;
extern const lc_embedded lc_lua_sources[];

#endif
