/*
** probe: asking the compiler for the layout of the structs the scanner
** read. The scanner lays a struct out by the C rules, but a `#pragma
** pack`, a macro or a header it cannot see may make the compiler lay it
** out otherwise. So each backend compiles, just after each struct's
** definition (lc_struct_def.end), a table of what the compiler computes:
** sizeof, alignof and, member by member, the offset and sizeof. The
** binding reads it back from the loaded module (module_global) and takes
** the compiler's layout where it can (lc_probe_apply).
** Pure C, no Lua.
*/
#ifndef LUACUDA_PROBE_H
#define LUACUDA_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include "scan.h"
#include "strbuf.h"

/* The table of struct i is the global LC_PROBE_PREFIX "<i>", an array of
** lc_probe_count(d) unsigned long long. */
#define LC_PROBE_PREFIX "__lc_layout_"

enum { LC_PROBE_NONE, LC_PROBE_SIZE, LC_PROBE_FULL };

/* What the table of d holds: LC_PROBE_FULL (size, alignment, then offset
** and size of each member) for a struct whose members were read and are
** public; LC_PROBE_SIZE (size and alignment) for any other; LC_PROBE_NONE
** for one in an unnamed namespace, which has no table (NVRTC's module
** hides such a table's name, so neither backend asks). */
int lc_probe_kind(const lc_struct_def *d);
size_t lc_probe_count(const lc_struct_def *d);

/* Append the table's initializer for d, "{sizeof(S), alignof(S), ...}":
** for NVRTC (nvrtc true) with the null-pointer offsetof, which it folds
** into a constant (it has no __builtin_offsetof); for the host compiler
** with __builtin_offsetof. */
void lc_probe_initializer(lc_strbuf *b, const lc_struct_def *d, bool nvrtc);

/* Take the compiler's answer v[0 .. n) for structs[i] (n 0: there was
** none). Where the compiler gives each member the size luacuda reads, its
** offsets, size and alignment become the struct's; where not, the
** struct's conflict says which member differs. Members that are structs
** take their struct's size: apply the structs in source order. */
void lc_probe_apply(lc_struct_def *structs, int i, const unsigned long long *v, size_t n);

/* A kernel that takes a pointer to a struct the source does not define
** (from a header) gets a table of its own after its body, the global
** LC_POINTEE_PREFIX "<kernel index>": for each parameter, the sizeof and
** alignof of such a pointee, 0 and 0 for any other parameter or where
** the type is incomplete (the prelude's __lc_pointee<T> tells). Not for
** template kernels, nor for parameters a signatures= override gave. */
#define LC_POINTEE_PREFIX "__lc_pointee_"
bool lc_probe_has_pointees(const lc_kernel_sig *k);
void lc_probe_pointees(lc_strbuf *b, const lc_kernel_sig *k);

#endif
