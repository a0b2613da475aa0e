/*
** embed: the kernel headers in kernels/, built into the module with the
** assembler's .incbin, so nothing has to be found on disk at run time.
** Paths are relative to the directory make runs in (the source root).
*/
#include "internal.h"

#define LC_EMBED(sym, path)                                          \
  __asm__(".section .rodata\n"                                       \
          ".global " #sym "\n"                                       \
          ".hidden " #sym "\n"                                       \
          ".type " #sym ", @object\n"                                \
          ".balign 16\n" #sym ":\n"                                  \
          ".incbin \"" path "\"\n"                                   \
          ".byte 0\n"                                                \
          ".size " #sym ", . - " #sym "\n"                           \
          ".previous\n")

LC_EMBED(lc_prelude_source, "kernels/prelude.cuh");
LC_EMBED(lc_sim_abi_source, "kernels/sim_abi.h");
LC_EMBED(lc_sim_runtime_source, "kernels/sim_runtime.h");
LC_EMBED(lc_strided_source, "kernels/strided.cu");
