/*
** host_copy: element copies and fills between host-addressable views
** (host_copy.c), used by the simulator and, for host-accessible memory,
** by every backend and the binding.
*/
#ifndef LUACUDA_HOST_COPY_H
#define LUACUDA_HOST_COPY_H

#include <stdint.h>

#include "layout.h"

/* Host copy between two views of the same shape, used by the simulator and
** for host-accessible memory on every backend. */
void lc_copy_strided_host(char *dst, const lc_layout *dl,
                          const char *src, const lc_layout *sl, int64_t itemsize);
void lc_fill_host(char *dst, const lc_layout *dl, const void *value, int64_t itemsize);

#endif
