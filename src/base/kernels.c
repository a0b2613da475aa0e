/*
** kernels: the files of kernels/ as NUL-terminated strings (kernels.h).
*/
#include "common.h"
#include "kernels.h"

LC_EMBED(lc_prelude_source, "kernels/prelude.cuh");
LC_EMBED(lc_strided_source, "kernels/strided.cu");
