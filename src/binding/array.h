/*
** array: the one Array userdata, for every memory kind. An array is a
** dtype, a layout, and a counted reference to the buffer holding the data;
** views are arrays that share the buffer.
*/
#ifndef LUACUDA_ARRAY_H
#define LUACUDA_ARRAY_H

#include "aux.h"
#include "backend.h"
#include "buffer.h"
#include "dtype.h"
#include "element.h"
#include "layout.h"

#define LC_ARRAY_MAGIC 0x4c434152u   /* "LCAR": cheap identity check */

typedef struct lc_array {
  uint32_t magic;
  bool closing;                /* closed while a call ran: buf goes later (gate.h) */
  lc_buffer *buf;              /* NULL once closed (or before allocation) */
  const lc_dtype *dtype;
  lc_layout lay;
} lc_array;

/* Not closed, and not waiting to be (gate.h): the only test of openness. */
static inline bool lc_array_is_open(const lc_array *a) { return a->buf != NULL && !a->closing; }

static inline char *lc_array_data(const lc_array *a) {
  return (char *)a->buf->ptr + a->lay.offset;
}

/* The first element's address on the device: for kernel arguments. */
static inline char *lc_array_device_data(const lc_array *a) {
  return (char *)a->buf->dev + a->lay.offset;
}

static inline lc_kind lc_array_kind(const lc_array *a) { return a->buf->kind; }

/* ---- the type (array.c) ---- */

/* Push a new array userdata with no buffer yet: if what follows fails, the
** object is still consistent and its finalizer does nothing. */
lc_array *lc_array_push_closed(lua_State *L, const lc_dtype *dt);

/* Push a new array of the given kind and layout, allocating nbytes for it
** (device memory in the order of stream s; NULL: the default stream). */
lc_array *lc_array_alloc(lua_State *L, lc_kind kind, const lc_dtype *dt,
                         const lc_layout *lay, int64_t nbytes, lc_stream *s, const char *fname);

/* Tell the backend what a newly allocated array's memory holds, and where
** the script allocated it, for its messages (origin.c; backend.h's
** mem_label). */
void lc_array_note_origin(lua_State *L, const lc_array *a);

/* Push a new contiguous array (order 'C' or 'F'). */
lc_array *lc_array_empty(lua_State *L, lc_kind kind, const lc_dtype *dt, int ndim,
                         const int64_t *shape, char order, lc_stream *s, const char *fname);

/* The array constructors' arguments (shape [, dtype] [, opts | order]):
** reads shape, dtype (float64 by default; or the option dtype=) and the
** options strides= and order= (stream= too), refusing keys not in known
** (the caller reads its own); pushes a new array of kind, allocated with
** the LC_ALLOC_* flags. */
lc_array *lc_array_new(lua_State *L, lc_kind kind, unsigned flags,
                       const char *const *known, const char *fname);

/* An options table at idx, in a dtype's place: a nil inserted before it,
** so that it is read as the options after the dtype (one dtype form). */
void lc_opts_for_dtype(lua_State *L, int idx);

/* Push a view of base's buffer with another layout (and dtype). */
lc_array *lc_array_push_view(lua_State *L, const lc_array *base,
                             const lc_layout *lay, const lc_dtype *dt);

/* The open array at idx, or an error naming fname. */
lc_array *lc_array_check(lua_State *L, int idx, const char *fname);

/* The array at idx (open or closed), or NULL for any other value. */
lc_array *lc_array_test(lua_State *L, int idx);

/* The array that is argument 1 of a metamethod, open or closed, or an
** error naming fname and what it is instead. */
lc_array *lc_array_self(lua_State *L, const char *fname);

/* Push the field key of a (shape, strides, dtype, ...); 0 if key is not
** a field. */
int lc_array_getfield(lua_State *L, const lc_array *a, const char *key);

/* Add functions to the array method table. */
void lc_array_add_methods(lua_State *L, const luaL_Reg *fns);

/* ---- indexing (index.c) ---- */

/* Push a[i] (i 1-based along the first axis), as a[i] in Lua gives it: the
** element of a 1-D array, else the view of row i (a 0-d view of a record). */
void lc_index_push_row(lua_State *L, const lc_array *a, int64_t i, const char *fname);

/* ---- index arrays and masks (gather.c) ---- */

/* a[x] (pushed) and a[x] = the value at vidx, for an array key x: integer
** indices along the first axis, or a bool mask of the leading axes. */
void lc_gather_getitem(lua_State *L, const lc_array *a, int kidx, lc_stream *s,
                       const char *fname);
void lc_gather_setitem(lua_State *L, const lc_array *a, int kidx, int vidx, lc_stream *s,
                       const char *fname);
/* nonzero(a [, opts]) with a at 1: pushes the table of index arrays */
int lc_gather_nonzero(lua_State *L, const char *fname);

/* ---- streams (stream.c) ---- */

/* The optional stream argument at idx: nil/none gives NULL (synchronous). */
lc_stream *lc_opt_stream(lua_State *L, int idx, const char *fname);

/* Work on a's memory runs on the current device: the error "the <what>
** array is on device 2, but device 1 is current" for device memory of
** another (device.c). Copies between devices are the exception (copy.c). */
void lc_check_current_device(lua_State *L, const lc_array *a, const char *what,
                             const char *fname);

/* An option device = i (the value at idx, counted from 1): pushes a
** to-be-closed value that makes device i current until the calling C
** function returns or raises, when the device current before is current
** again (device.c). */
void lc_device_option(lua_State *L, int idx, const char *fname);

/* The stream host_stream() returns in this state: the host program's
** (a backend handle, see backend.h's stream_wrap), or with NULL the
** default stream again. */
void lc_set_host_stream(lua_State *L, void *native, const char *fname);
/* The backend handle of the stream host_stream() returns, for a host
** program to queue on: the default stream ordered after the work queued
** so far on non-blocking streams, as luacuda's own calls without a stream
** are (backend.h's stream_host_use). */
void *lc_host_stream_native(lua_State *L);
/* The same for the open stream at idx; NULL for anything else. */
void *lc_stream_native_at(lua_State *L, int idx);

/* Before the host reads or writes memory of kind k with no stream: memory a
** kernel may be using (mapped, managed) waits for the queued work first,
** and a failure of that work is raised. */
void lc_sync_host_slow(lua_State *L, const char *fname);
static inline void lc_sync_host(lua_State *L, lc_kind k, const char *fname) {
  if (k == LC_MAPPED || k == LC_MANAGED) lc_sync_host_slow(L, fname);
}

/* May the host touch memory of kind k at any time, with no wait? */
static inline bool lc_kind_host_only(lc_kind k) { return k == LC_HOST || k == LC_PINNED; }

/* ---- shared memory (alias.c) ---- */

/* May writing view xl of x's memory change what view yl of y's memory
** reads? The views' offsets count from each array's buffer; the buffers
** may be different objects over the same memory (luacuda.mapped, a host
** program's wraps, DLPack imports), so addresses are compared, in each
** address space the two memories share. Every output that may alias an
** input asks this. */
bool lc_arrays_overlap(const lc_array *x, const lc_layout *xl,
                       const lc_array *y, const lc_layout *yl);

/* Are they the very same elements, in the same order (lc_views_same), at
** the same addresses? */
bool lc_arrays_same_view(const lc_array *x, const lc_layout *xl,
                         const lc_array *y, const lc_layout *yl);

/* ---- copies (copy.c) ---- */

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

/* Push the element at byte offset off as a Lua value (a scalar dtype):
** read in place from host memory, else copied out (with a stream, the
** read waits for that stream only). lc_elem_write queues its write on s. */
void lc_elem_push_at(lua_State *L, const lc_array *a, int64_t off, lc_stream *s,
                     const char *fname);
void lc_elem_write(lua_State *L, const lc_array *a, int64_t off, const void *in,
                   lc_stream *s, const char *fname);

/* Assign the Lua value at vidx to the view of a described by lay: a scalar
** is broadcast, an array or nested table of the same shape is copied. */
void lc_assign(lua_State *L, const lc_array *a, const lc_layout *lay, int vidx,
               lc_stream *s, const char *fname);

/* Push a new host array, C-contiguous, holding a copy of a. */
lc_array *lc_copy_to_new(lua_State *L, const lc_array *a, lc_kind kind,
                         lc_stream *s, const char *fname);

/* ---- Lua tables (convert.c) ---- */

/* Push a new array of the given kind from the nested table at idx; dt NULL
** infers bool, int64 or float64 from the values. */
lc_array *lc_from_table(lua_State *L, int idx, const lc_dtype *dt, lc_kind kind,
                        lc_stream *s, const char *fname);

/* Push a 0-d array holding the scalar at idx; dt NULL infers bool, int64
** or float64. */
lc_array *lc_from_scalar(lua_State *L, int idx, const lc_dtype *dt, lc_kind kind,
                         const char *fname);

/* Push the elements of a as nested Lua tables (a 0-d array: its value). */
void lc_to_table(lua_State *L, const lc_array *a, const char *fname);

#endif
