/*
** errfmt: the one formatter of error messages (common.h). Every layer
** reports a failure as a message in an err[LC_ERRLEN] buffer and a status;
** this writes the message, cut to the buffer's size (lc_fail, a macro of
** common.h, adds the status).
*/
#include "common.h"

#include <stdarg.h>
#include <stdio.h>

void lc_errf(char *err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, LC_ERRLEN, fmt, ap);
  va_end(ap);
}
