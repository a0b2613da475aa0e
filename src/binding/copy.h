/*
** copy: copies and fills of arrays (copy.c), between any layouts, kinds
** and devices, queued on a stream or made at once; single elements read
** and written in place.
*/
#ifndef LUACUDA_COPY_H
#define LUACUDA_COPY_H

#include "array.h"

/* Copy src into dst: same dtype, same shape after dropping size-1 axes,
** any layouts and kinds; overlapping views are handled. */
void lc_copy_array(lua_State *L, lc_array *dst, const lc_array *src,
                   lc_stream *s, const char *fname);

/* Set every element of dst to the Lua value at vidx (checked first). */
void lc_fill_array(lua_State *L, lc_array *dst, int vidx, lc_stream *s,
                   const char *fname);

/* Set every element of dst to the element at value (dst's dtype, already
** converted). */
void lc_fill_raw(lua_State *L, const lc_array *dst, const void *value, lc_stream *s,
                 const char *fname);

/* The same for the view of a's memory described by lay (a's work waited
** for, as a's). */
void lc_fill_view(lua_State *L, const lc_array *a, const lc_layout *lay, const void *value,
                  lc_stream *s, const char *fname);

/* Push the element at byte offset off as a Lua value (a scalar dtype):
** read in place from host memory, else copied out (with a stream, the
** read waits for that stream only). lc_elem_write queues its write on s. */
void lc_elem_push_at(lua_State *L, const lc_array *a, int64_t off, lc_stream *s,
                     const char *fname);
void lc_elem_write(lua_State *L, const lc_array *a, int64_t off, const void *in,
                   lc_stream *s, const char *fname);

/* Push a new host array, C-contiguous, holding a copy of a. */
lc_array *lc_copy_to_new(lua_State *L, const lc_array *a, lc_kind kind,
                         lc_stream *s, const char *fname);

#endif
