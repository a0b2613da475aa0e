/*
** capi: arrays over memory a host program owns, for the C API (capi.c)
** and DLPack (dlpack.c).
*/
#ifndef LUACUDA_CAPI_H
#define LUACUDA_CAPI_H

#include "array.h"

/* Open luacuda in L (require "luacuda") unless its types are there. */
void lc_capi_ensure_open(lua_State *L);


/* An array over memory something else owns, in two steps for a caller that must act between them:
** check the arguments and compute the layout (raises only for bad
** arguments), then give the closed array a (its lay set to out) a buffer
** over data (raises only for lack of memory, release not called then). */
void lc_wrap_layout(lua_State *L, const void *data, lc_kind kind, const lc_dtype *dt,
                    int ndim, const int64_t *shape, const int64_t *strides, lc_layout *out,
                    int64_t *span, const char *fname);
void lc_wrap_attach(lua_State *L, lc_array *a, void *data, lc_kind kind, int64_t span,
                    void (*release)(void *ud), void *ud, const char *fname);

#endif
