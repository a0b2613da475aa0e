/*
** array: the one Array userdata, for every memory kind. An array is a
** dtype, a layout, and a counted reference to the buffer holding the data;
** views are arrays that share the buffer.
*/
#ifndef LUACUDA_ARRAY_H
#define LUACUDA_ARRAY_H

#include "args.h"
#include "backend.h"
#include "buffer.h"
#include "dtype.h"
#include "element.h"
#include "layout.h"

#define LC_ARRAY_MAGIC 0x4c434152u   /* "LCAR": cheap identity check */

typedef struct lc_array {
  uint32_t magic;
  bool closing;                /* closed while a call ran: buf goes later (gate.h) */
  /* the metatable it was given (lua_topointer): lc_array_test compares
  ** the userdata's metatable with it, no registry lookup */
  const void *metatable;
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
** mem_label); made_by: the array math function whose result it is, or
** NULL. */
void lc_array_note_origin(lua_State *L, const lc_array *a, const char *made_by);

/* Push a new contiguous array (order 'C' or 'F'). */
lc_array *lc_array_empty(lua_State *L, lc_kind kind, const lc_dtype *dt, int ndim,
                         const int64_t *shape, char order, lc_stream *s, const char *fname);

/* lc_array_empty for a result of the array at stack slot like (one that
** lc_array_test accepted): the new array takes its metatable, which costs
** less than the registry's lookup (array math's results; fname, the math
** function, is named in its memory's label: origin.c). */
lc_array *lc_array_empty_like(lua_State *L, int like, lc_kind kind, const lc_dtype *dt,
                              int ndim, const int64_t *shape, char order, lc_stream *s,
                              const char *fname);

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

/* ---- a record array's fields (shape.c, with the other views) ---- */

/* a.<key> and a.<key> = v on a record array: 0 if key is not a field of
** a's record; otherwise pushes the field (index: a value for a scalar
** field of a 0-d array, else a view) or assigns it, and returns 1. */
int lc_record_index(lua_State *L, const lc_array *a, const char *key, const char *fname);
int lc_record_newindex(lua_State *L, const lc_array *a, const char *key, int vidx,
                       const char *fname);

/* ---- index arrays and masks (gather.c) ---- */

/* a[x] (pushed) and a[x] = the value at vidx, for an array key x: integer
** indices along the first axis, or a bool mask of the leading axes. */
void lc_gather_getitem(lua_State *L, const lc_array *a, int kidx, lc_stream *s,
                       const char *fname);
void lc_gather_setitem(lua_State *L, const lc_array *a, int kidx, int vidx, lc_stream *s,
                       const char *fname);
/* nonzero(a [, opts]) with a at 1: pushes the table of index arrays */
int lc_gather_nonzero(lua_State *L, const char *fname);

/* ---- memory kinds ---- */

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

#endif
