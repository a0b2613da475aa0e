/*
** device: the current device as the rest of the binding sees it
** (device.c): the check that work goes to the device its memory is on,
** and the device = option. The current device is the calling OS thread's,
** kept by the backend.
*/
#ifndef LUACUDA_DEVICE_H
#define LUACUDA_DEVICE_H

#include "array.h"

/* Work on a's memory runs on the current device: the error "the <what>
** array is on device 2, but device 1 is current" for device memory of
** another. Copies between devices are the exception (copy.c). */
void lc_check_current_device(lua_State *L, const lc_array *a, const char *what,
                             const char *fname);

/* An option device = i (the value at idx, counted from 1): pushes a
** to-be-closed value that makes device i current until the calling C
** function returns or raises, when the device current before is current
** again. */
void lc_device_option(lua_State *L, int idx, const char *fname);

#endif
