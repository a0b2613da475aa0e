/*
** hostreg: the record of page-locked host memory, shared by the backends
** (hostreg.c). The driver's rules are kept for every backend: memory is
** registered once, only registered memory is unregistered, and only mapped
** memory has a device address. Allocations of LC_PINNED and LC_MAPPED
** memory enter it with their flags; the others are the backend's host_*
** slots. A range's device address is its host address unless set_device
** gave another (write-combined memory on CUDA).
*/
#ifndef LUACUDA_HOSTREG_H
#define LUACUDA_HOSTREG_H

#include <stddef.h>

int lc_hostreg_add_allocated(void *p, size_t n, unsigned flags, char *err);
void lc_hostreg_remove_allocated(void *p);
int lc_hostreg_register(void *p, size_t n, unsigned flags, char *err);
int lc_hostreg_unregister(void *p, char *err);
int lc_hostreg_device_pointer(void *p, void **dev, char *err);
int lc_hostreg_flags(void *p, unsigned *flags, char *err);
/* The range starting at p has the device address dev. */
void lc_hostreg_set_device(void *p, void *dev);
/* The device address of host address p: p itself unless p lies in a range
** with a device address of its own. */
void *lc_hostreg_to_device(const void *p);

#endif
