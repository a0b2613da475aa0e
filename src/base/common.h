/*
** common: what every layer of luacuda shares, Lua or not: attribute
** macros and the size of an error message buffer. The module is built
** with -fvisibility=hidden; only LC_EXPORT symbols are visible to the
** program that loads it.
*/
#ifndef LUACUDA_COMMON_H
#define LUACUDA_COMMON_H

#define LC_EXPORT __attribute__((visibility("default")))
#define LC_NORETURN __attribute__((noreturn))
#define LC_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* Bytes of an error message buffer (err[LC_ERRLEN] everywhere). */
#define LC_ERRLEN 512

/* The one formatter of error messages (errfmt.c): fmt and its arguments
** into err[LC_ERRLEN], cut to fit. lc_fail is that, then the value rc, for
** the common "return lc_fail(err, LC_EFAIL, ...)" (a macro, so that the
** compiler sees which status a path returns). */
void lc_errf(char *err, const char *fmt, ...) LC_PRINTF(2, 3);
#define lc_fail(err, rc, ...) (lc_errf((err), __VA_ARGS__), (rc))

/* Build a file into the module, NUL-terminated, as the array sym: the
** assembler's .incbin, so nothing has to be found on disk at run time.
** The path is relative to the directory make runs in (the source root). */
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

/* Build kernels/abi.h followed by kernels/<file> into the module as one
** NUL-terminated string, the array sym: for a kernel-side file that is
** compiled first (on its own, or at the head of a kernel source), so the
** kernel argument ABI comes with it as the C side's #include brings it.
** Each part follows a #line directive naming it luacuda/<name>, so that
** a compiler's messages point at that file's own lines. */
#define LC_EMBED_KERNEL(sym, file)                                   \
  __asm__(".section .rodata\n"                                       \
          ".global " #sym "\n"                                       \
          ".hidden " #sym "\n"                                       \
          ".type " #sym ", @object\n"                                \
          ".balign 16\n" #sym ":\n"                                  \
          ".ascii \"#line 1 \\\"luacuda/abi.h\\\"\\n\"\n"             \
          ".incbin \"kernels/abi.h\"\n"                               \
          ".ascii \"\\n#line 1 \\\"luacuda/" file "\\\"\\n\"\n"        \
          ".incbin \"kernels/" file "\"\n"                            \
          ".byte 0\n"                                                \
          ".size " #sym ", . - " #sym "\n"                           \
          ".previous\n")

/* The same with a header of kernels/ between abi.h and the file. */
#define LC_EMBED_KERNEL_WITH(sym, header, file)                      \
  __asm__(".section .rodata\n"                                       \
          ".global " #sym "\n"                                       \
          ".hidden " #sym "\n"                                       \
          ".type " #sym ", @object\n"                                \
          ".balign 16\n" #sym ":\n"                                  \
          ".ascii \"#line 1 \\\"luacuda/abi.h\\\"\\n\"\n"             \
          ".incbin \"kernels/abi.h\"\n"                               \
          ".ascii \"\\n#line 1 \\\"luacuda/" header "\\\"\\n\"\n"      \
          ".incbin \"kernels/" header "\"\n"                          \
          ".ascii \"\\n#line 1 \\\"luacuda/" file "\\\"\\n\"\n"        \
          ".incbin \"kernels/" file "\"\n"                            \
          ".byte 0\n"                                                \
          ".size " #sym ", . - " #sym "\n"                           \
          ".previous\n")

#endif
