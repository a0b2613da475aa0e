/*
** hostcache: host arrays' memory. Large blocks are mappings of their own,
** asking for transparent huge pages, and freed ones are kept for the next
** allocation of the same size, as the simulator's device blocks are
** (sim/reuse.c): glibc maps and unmaps every block over its mmap threshold
** (at most 32 MiB), so a new 2^24-float result took a fault per 4 KiB page.
*/
#ifndef LUACUDA_HOSTCACHE_H
#define LUACUDA_HOSTCACHE_H

#include <stdbool.h>
#include <stddef.h>

/* 64-byte aligned host memory for nbytes, or NULL. */
void *lc_hostcache_alloc(size_t nbytes);
/* Would lc_hostcache_alloc(nbytes) take a plain malloc block and align it
** by hand (a small block, not under a sanitizer or valgrind)? Such memory
** may as well share its caller's own allocation (buffer.c). */
bool lc_hostcache_small(size_t nbytes);
/* p from lc_hostcache_alloc(nbytes), no longer used by anything */
void lc_hostcache_free(void *p, size_t nbytes);
/* the bytes kept for reuse; free gives them back to the system */
size_t lc_hostcache_bytes(void);
void lc_hostcache_trim(void);

#endif
