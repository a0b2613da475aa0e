// sim_spaces.h: CUDA's address-space predicates (__isGlobal, __isShared,
// __isConstant, __isLocal) and conversions (__cvta_generic_to_shared and
// the others) for luacuda's simulator. Compiled after sim_runtime.h.
//
// CUDA's spaces in the simulator's memory:
// - shared: the block's __shared__ variables, which are thread_local (so
//   the module's TLS block in the worker thread running the block), and
//   its dynamic shared memory (the worker's buffer, as much as the launch
//   asked for);
// - local: the stack the calling thread runs on (its fiber's, or the
//   worker thread's own);
// - constant: the module's __constant__ variables, each registered just
//   after its definition (src/backend/sim/compile.c);
// - global: every other address. The constant variables count as global
//   too, as in the fake driver's PTX interpreter (spec/fake/ptx/exec.c): the
//   PTX ISA does not say whether the const window lies inside the global
//   one, so no test relies on it.
// A space's own address (what __cvta_generic_to_* gives) is an offset:
// shared, from the TLS block, the dynamic shared memory after it; local,
// from the bottom of the calling thread's stack; global and constant
// addresses are the generic ones. Converting an address that is not in
// the space is undefined in CUDA: here it gives an offset out of range.
#ifndef LUACUDA_SIM_SPACES_H
#define LUACUDA_SIM_SPACES_H

#include <link.h>
#include <pthread.h>

// ---- constant variables --------------------------------------------------
struct __lc_constant {
  const void *at;
  size_t bytes;
  __lc_constant *next;
};
static __lc_constant *__lc_constants;
static bool __lc_add_constant(__lc_constant *c) {
  c->next = __lc_constants;
  __lc_constants = c;
  return true;
}

// ---- where the spaces lie, per worker thread -------------------------------
struct __lc_ranges {
  bool known;
  char *tls, *tls_end;      // this module's TLS block in this thread
  char *stack, *stack_end;  // this thread's own stack
};
static thread_local __lc_ranges __lc_here;

__attribute__((noinline)) static void __lc_spaces_anchor() {}

// dl_iterate_phdr's visit: the object holding __lc_spaces_anchor is this
// module; its PT_TLS segment's size, from the thread's copy of the block
static int __lc_find_tls(struct dl_phdr_info *info, size_t, void *data) {
  uintptr_t me = (uintptr_t)&__lc_spaces_anchor;
  bool mine = false;
  size_t tls_size = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && me >= lo && me < lo + ph->p_memsz) mine = true;
    if (ph->p_type == PT_TLS) tls_size = ph->p_memsz;
  }
  if (!mine) return 0;
  __lc_ranges *r = (__lc_ranges *)data;
  r->tls = (char *)info->dlpi_tls_data;
  r->tls_end = r->tls ? r->tls + tls_size : r->tls;
  return 1;
}

__attribute__((noinline, cold)) static void __lc_learn_ranges() {
  __lc_ranges *r = &__lc_here;
  dl_iterate_phdr(__lc_find_tls, r);
  pthread_attr_t a;
  void *base = nullptr;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &a) == 0) {
    pthread_attr_getstack(&a, &base, &size);
    pthread_attr_destroy(&a);
  }
  r->stack = (char *)base;
  r->stack_end = r->stack + size;
  r->known = true;
}

static inline const __lc_ranges *__lc_ranges_here() {
  if (__builtin_expect(!__lc_here.known, 0)) __lc_learn_ranges();
  return &__lc_here;
}

// the stack the calling thread runs on: [*lo, *hi)
static inline void __lc_my_stack(char **lo, char **hi) {
  const __lc_block *b = __lc_current;
  if (b->fibers && b->cur != b->host) {
    *lo = (char *)b->stacks[b->cur];
    *hi = *lo + b->worker->stack_size;
    return;
  }
  const __lc_ranges *r = __lc_ranges_here();
  *lo = r->stack;
  *hi = r->stack_end;
}

static inline bool __lc_in(const void *p, const char *lo, const char *hi) {
  return (const char *)p >= lo && (const char *)p < hi;
}

// ---- the predicates ------------------------------------------------------
static inline unsigned __isShared(const void *p) {
  const __lc_ranges *r = __lc_ranges_here();
  const char *dyn = (const char *)__lc_dynamic_shared();
  return __lc_in(p, r->tls, r->tls_end) ||
         __lc_in(p, dyn, dyn + __lc_current->launch->dynamic_shared);
}
static inline unsigned __isLocal(const void *p) {
  char *lo, *hi;
  __lc_my_stack(&lo, &hi);
  return __lc_in(p, lo, hi);
}
static inline unsigned __isConstant(const void *p) {
  for (const __lc_constant *c = __lc_constants; c; c = c->next)
    if (__lc_in(p, (const char *)c->at, (const char *)c->at + c->bytes)) return 1;
  return 0;
}
static inline unsigned __isGlobal(const void *p) { return !__isShared(p) && !__isLocal(p); }

// ---- the conversions -----------------------------------------------------
// the dynamic shared memory's offset: after the TLS block, 16-aligned
static inline size_t __lc_dynamic_offset(const __lc_ranges *r) {
  return ((size_t)(r->tls_end - r->tls) + 15) & ~(size_t)15;
}
static inline size_t __cvta_generic_to_shared(const void *p) {
  const __lc_ranges *r = __lc_ranges_here();
  if (__lc_in(p, r->tls, r->tls_end)) return (size_t)((const char *)p - r->tls);
  return __lc_dynamic_offset(r) + (size_t)((const char *)p - (const char *)__lc_dynamic_shared());
}
static inline void *__cvta_shared_to_generic(size_t a) {
  const __lc_ranges *r = __lc_ranges_here();
  size_t d = __lc_dynamic_offset(r);
  if (a < d) return r->tls + a;
  return __lc_dynamic_shared() + (a - d);
}
static inline size_t __cvta_generic_to_local(const void *p) {
  char *lo, *hi;
  __lc_my_stack(&lo, &hi);
  return (size_t)((const char *)p - lo);
}
static inline void *__cvta_local_to_generic(size_t a) {
  char *lo, *hi;
  __lc_my_stack(&lo, &hi);
  return lo + a;
}
static inline size_t __cvta_generic_to_global(const void *p) { return (size_t)p; }
static inline void *__cvta_global_to_generic(size_t a) { return (void *)a; }
static inline size_t __cvta_generic_to_constant(const void *p) { return (size_t)p; }
static inline void *__cvta_constant_to_generic(size_t a) { return (void *)a; }

#endif
