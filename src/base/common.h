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

#endif
