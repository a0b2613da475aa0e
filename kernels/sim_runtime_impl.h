// sim_runtime_impl.h: the simulator runtime's functions that are neither
// templates nor inline (declared in sim_runtime.h, which comes first):
// compiled once per compiler and flags into an object every module links
// (src/backend/sim/pch.c), so that each kernel's compile need not compile
// them again; or into the module, after the prelude, where there is no such
// object. Nothing here may depend on the user's source or options beyond
// the flags that key the object (the dialect and fast math).
#ifndef LUACUDA_SIM_RUNTIME_IMPL_H
#define LUACUDA_SIM_RUNTIME_IMPL_H

__thread __lc_block *__lc_current;
__thread __lc_fiber __lc_fibers[LC_MAX_BLOCK_THREADS];
__thread uint3 __lc_rt_blockIdx;
__thread dim3 __lc_rt_blockDim;

// ---- context switch: a fiber's start (sim_runtime.h has the switch) -------
#if defined(__x86_64__)
__asm__(".pushsection .text\n"
        ".p2align 4\n"
        ".globl __lc_fiber_start\n.hidden __lc_fiber_start\n.type __lc_fiber_start, @function\n"
        "__lc_fiber_start:\n"
        "  movq %rbp, %rdi\n"
        "  xorl %ebp, %ebp\n"
        "  andq $-16, %rsp\n"
        "  call *(%rdi)\n"                 /* b->run(b), which never returns */
        "  ud2\n"
        ".size __lc_fiber_start, . - __lc_fiber_start\n"
        ".popsection\n");

static_assert(offsetof(__lc_block, run) == 0, "__lc_fiber_start calls b->run at offset 0");

// A fresh stack: the argument where rbp is restored from, then the start.
void *__lc_stack_init(void *base, size_t size, void *arg) {
  uintptr_t top = ((uintptr_t)base + size) & ~(uintptr_t)15;
  void **sp = (void **)(top - 32);
  sp[0] = arg;
  sp[1] = (void *)__lc_fiber_start;
  return sp;
}
#elif defined(__aarch64__)
__asm__(".pushsection .text\n"
        ".p2align 4\n"
        ".globl __lc_switch\n.hidden __lc_switch\n.type __lc_switch, %function\n"
        "__lc_switch:\n"
        "  sub sp, sp, #160\n"
        "  stp x19, x20, [sp, #0]\n  stp x21, x22, [sp, #16]\n  stp x23, x24, [sp, #32]\n"
        "  stp x25, x26, [sp, #48]\n  stp x27, x28, [sp, #64]\n  stp x29, x30, [sp, #80]\n"
        "  stp d8, d9, [sp, #96]\n  stp d10, d11, [sp, #112]\n  stp d12, d13, [sp, #128]\n"
        "  stp d14, d15, [sp, #144]\n"
        "  mov x2, sp\n  str x2, [x0]\n  mov sp, x1\n"
        "  ldp x19, x20, [sp, #0]\n  ldp x21, x22, [sp, #16]\n  ldp x23, x24, [sp, #32]\n"
        "  ldp x25, x26, [sp, #48]\n  ldp x27, x28, [sp, #64]\n  ldp x29, x30, [sp, #80]\n"
        "  ldp d8, d9, [sp, #96]\n  ldp d10, d11, [sp, #112]\n  ldp d12, d13, [sp, #128]\n"
        "  ldp d14, d15, [sp, #144]\n"
        "  add sp, sp, #160\n"
        "  ret\n"
        ".size __lc_switch, . - __lc_switch\n"
        ".globl __lc_fiber_start\n.hidden __lc_fiber_start\n.type __lc_fiber_start, %function\n"
        "__lc_fiber_start:\n"
        "  mov x0, x19\n"
        "  bl __lc_fiber_main\n"
        "  brk #0\n"
        ".size __lc_fiber_start, . - __lc_fiber_start\n"
        ".popsection\n");
void *__lc_stack_init(void *base, size_t size, void *arg) {
  uintptr_t top = ((uintptr_t)base + size) & ~(uintptr_t)15;
  void **sp = (void **)(top - 160);
  for (int i = 0; i < 20; i++) sp[i] = 0;
  sp[0] = arg;                                  // x19
  sp[11] = (void *)__lc_fiber_start;            // x30, where ret goes
  return sp;
}
#else
static void __lc_ucontext_entry(unsigned lo, unsigned hi) {
  __lc_fiber_main((__lc_block *)(((uintptr_t)hi << 32) | lo));
}
void *__lc_stack_init(void *base, size_t size, void *arg) {
  ucontext_t *uc = (ucontext_t *)(((uintptr_t)base + size - sizeof(ucontext_t)) & ~(uintptr_t)15);
  getcontext(uc);
  uc->uc_stack.ss_sp = base;
  uc->uc_stack.ss_size = (char *)uc - (char *)base;
  uc->uc_link = NULL;
  uintptr_t a = (uintptr_t)arg;
  makecontext(uc, (void (*)())__lc_ucontext_entry, 2, (unsigned)a, (unsigned)(a >> 32));
  return uc;
}
#endif

LC_RT void __lc_vmessage(__lc_block *b, const char *fmt, va_list ap) {
  vsnprintf(b->worker->error, LC_SIM_ERRLEN, fmt, ap);
}

LC_RT const char *__lc_thread_name(unsigned t, char *buf, size_t n) {
  uint3 v = __lc_tid_of(t);
  snprintf(buf, n, "(%u, %u, %u)", v.x, v.y, v.z);
  return buf;
}

LC_RT void __lc_fail(const char *fmt, ...) {
  __lc_block *b = __lc_current;
  va_list ap;
  va_start(ap, fmt);
  __lc_vmessage(b, fmt, ap);
  va_end(ap);
  b->failed = true;
  if (b->cur == b->host || !b->fibers) longjmp(b->abort, 1);
  void *dead;
  __lc_jump(&dead, b->f[b->host].sp);
  __builtin_unreachable();
}

LC_RT void __lc_assert_fail(const char *expr, const char *file, int line) {
  char t[48];
  __lc_fail("assertion '%s' failed at %s:%d in block (%u, %u, %u), thread %s", expr, file,
            line, __lc_rt_blockIdx.x, __lc_rt_blockIdx.y, __lc_rt_blockIdx.z,
            __lc_thread_name(__lc_current->cur, t, sizeof t));
}

LC_RT void __trap() {
  char t[48];
  __lc_fail("__trap() called in block (%u, %u, %u), thread %s", __lc_rt_blockIdx.x,
            __lc_rt_blockIdx.y, __lc_rt_blockIdx.z, __lc_thread_name(__lc_current->cur, t, sizeof t));
}

LC_RT void __lc_warp_width(int op, int width) {
  char t[48];
  __lc_fail("%s: width %d is not a power of 2 from 1 to 32 (thread %s of block (%u, %u, %u))",
            __lc_warp_name(op), width, __lc_thread_name(__lc_current->cur, t, sizeof t),
            __lc_rt_blockIdx.x, __lc_rt_blockIdx.y, __lc_rt_blockIdx.z);
}

LC_RT void __lc_warp_mask(int op, unsigned mask) {
  char t[48];
  unsigned me = __lc_current->cur;
  __lc_fail("%s: mask 0x%08x does not name the calling thread %s (lane %u) of block "
            "(%u, %u, %u)", __lc_warp_name(op), mask, __lc_thread_name(me, t, sizeof t),
            me % warpSize, __lc_rt_blockIdx.x, __lc_rt_blockIdx.y, __lc_rt_blockIdx.z);
}

// The results of the call of mask whose live lanes are group, in warp w;
// a shuffle reads the lanes in group or in conv (those converged with it).
static void __lc_warp_results(__lc_block *b, unsigned w, unsigned mask, unsigned group,
                              unsigned conv) {
  __lc_fiber *f = b->f + w * warpSize;
  unsigned first = (unsigned)__builtin_ctz(group);
  int op = f[first].wop;
  for (unsigned g = group; g; g &= g - 1) {
    unsigned l = (unsigned)__builtin_ctz(g);
    if (f[l].wop != op || f[l].wwidth != f[first].wwidth) {
      char t1[48], t2[48];
      __lc_fail("warp functions of mask 0x%08x differ in block (%u, %u, %u): thread %s "
                "called %s, thread %s %s%s", mask, __lc_rt_blockIdx.x, __lc_rt_blockIdx.y,
                __lc_rt_blockIdx.z, __lc_thread_name(w * warpSize + first, t1, sizeof t1),
                __lc_warp_name(op), __lc_thread_name(w * warpSize + l, t2, sizeof t2),
                __lc_warp_name(f[l].wop), f[l].wop == op ? " with another width" : "");
    }
  }
  unsigned long long r = 0;
  switch (op) {
    case LC_W_SHFL: case LC_W_SHFL_UP: case LC_W_SHFL_DOWN: case LC_W_SHFL_XOR: {
      unsigned width = f[first].wwidth;
      for (unsigned g = group; g; g &= g - 1) {
        unsigned l = (unsigned)__builtin_ctz(g), seg = l & ~(width - 1), a = f[l].warg;
        unsigned long long j;        // the source lane; past the segment: the caller's own
        switch (op) {
          case LC_W_SHFL: j = seg | (a & (width - 1)); break;
          case LC_W_SHFL_UP: j = a <= l - seg ? l - a : l; break;
          case LC_W_SHFL_DOWN: j = (unsigned long long)(l - seg) + a < width ? l + a : l; break;
          default: j = l ^ a; if (j >= seg + width) j = l; break;
        }
        // a source that does not execute this call: undefined in CUDA, poison here
        bool at = j < 32 && ((group | conv) >> j & 1);
        f[l].wres = at ? f[j].wval : LC_POISON;
      }
      return;
    }
    case LC_W_BALLOT: case LC_W_ANY: case LC_W_ALL:
      for (unsigned g = group; g; g &= g - 1) {
        unsigned l = (unsigned)__builtin_ctz(g);
        if (f[l].wval) r |= 1ull << l;
      }
      if (op == LC_W_ANY) r = r != 0;
      else if (op == LC_W_ALL) r = r == group;
      break;
    case LC_W_MATCH_ANY:
      for (unsigned g = group; g; g &= g - 1) {
        unsigned l = (unsigned)__builtin_ctz(g);
        unsigned same = 0;
        for (unsigned h = group; h; h &= h - 1) {
          unsigned k = (unsigned)__builtin_ctz(h);
          if (f[k].wval == f[l].wval) same |= 1u << k;
        }
        f[l].wres = same;
      }
      return;
    case LC_W_MATCH_ALL:        // the lanes taking part and bit 32 (the predicate), or 0
      r = group | 1ull << 32;
      for (unsigned g = group; g; g &= g - 1)
        if (f[__builtin_ctz(g)].wval != f[first].wval) r = 0;
      break;
    case LC_W_ADD: case LC_W_MIN: case LC_W_MAX: case LC_W_IMIN: case LC_W_IMAX:
    case LC_W_AND: case LC_W_OR: case LC_W_XOR: {
      unsigned acc = (unsigned)f[first].wval;
      for (unsigned g = group & (group - 1); g; g &= g - 1) {
        unsigned v = (unsigned)f[__builtin_ctz(g)].wval;
        switch (op) {
          case LC_W_ADD: acc += v; break;
          case LC_W_MIN: acc = v < acc ? v : acc; break;
          case LC_W_MAX: acc = v > acc ? v : acc; break;
          case LC_W_IMIN: acc = (int)v < (int)acc ? v : acc; break;
          case LC_W_IMAX: acc = (int)v > (int)acc ? v : acc; break;
          case LC_W_AND: acc &= v; break;
          case LC_W_OR: acc |= v; break;
          default: acc ^= v; break;
        }
      }
      r = acc;
      break;
    }
    default: break;             // __syncwarp
  }
  for (unsigned g = group; g; g &= g - 1) f[__builtin_ctz(g)].wres = r;
}

// Lane k waits at lane l's call site (same function) with another mask
// than l's, which names it: the masks of one call disagree.
__attribute__((noinline, cold, noreturn))
static void __lc_warp_disagree(__lc_block *b, unsigned w, unsigned l, unsigned k) {
  const __lc_fiber *f = b->f + w * warpSize;
  char t1[48], t2[48];
  __lc_fail("%s: member masks disagree in block (%u, %u, %u): thread %s has mask 0x%08x, "
            "which names thread %s, at the same call with mask 0x%08x", __lc_warp_name(f[l].wop),
            __lc_rt_blockIdx.x, __lc_rt_blockIdx.y, __lc_rt_blockIdx.z,
            __lc_thread_name(w * warpSize + l, t1, sizeof t1), f[l].wmask,
            __lc_thread_name(w * warpSize + k, t2, sizeof t2), f[k].wmask);
}

LC_RT bool __lc_warp_settle(__lc_block *b, unsigned w) {
  __lc_fiber *f = b->f + w * warpSize;
  unsigned lanes = __lc_warp_lanes(b, w), gone = b->warp_gone[w], wait = b->warp_wait[w];
  // a lane that can still run may yet join a call: converge with it first
  for (unsigned g = lanes & ~(gone | wait); g; g &= g - 1)
    if (f[__builtin_ctz(g)].state == LC_RUNNABLE) return false;
  // the waiting lanes by mask: those whose every live lane waits with it
  unsigned ready = 0;
  for (unsigned pending = wait; pending;) {
    unsigned l = (unsigned)__builtin_ctz(pending), mask = f[l].wmask, same = 0;
    for (unsigned g = pending; g; g &= g - 1) {
      unsigned k = (unsigned)__builtin_ctz(g);
      if (f[k].wmask == mask) same |= 1u << k;
    }
    pending &= ~same;
    unsigned group = mask & lanes & ~gone;     // same is within it: masks name their caller
    if (same == group) {
      ready |= same;
      continue;
    }
    for (unsigned g = group & wait & ~same; g; g &= g - 1) {
      unsigned k = (unsigned)__builtin_ctz(g);
      for (unsigned h = same; h; h &= h - 1) {
        unsigned j = (unsigned)__builtin_ctz(h);
        if (f[j].wsite == f[k].wsite && f[j].wop == f[k].wop) __lc_warp_disagree(b, w, j, k);
      }
    }
  }
  if (ready == 0) return false;
  // every complete call's results, from values that no lane has changed yet
  for (unsigned todo = ready; todo;) {
    unsigned l = (unsigned)__builtin_ctz(todo), mask = f[l].wmask;
    unsigned group = mask & lanes & ~gone, conv = 0;
    todo &= ~group;
    if (f[l].wop >= LC_W_SHFL && f[l].wop <= LC_W_SHFL_XOR)
      for (unsigned g = ready & ~group; g; g &= g - 1) {
        unsigned k = (unsigned)__builtin_ctz(g);
        if (f[k].wsite == f[l].wsite && f[k].wop == f[l].wop && f[k].wwidth == f[l].wwidth)
          conv |= 1u << k;
      }
    __lc_warp_results(b, w, mask, group, conv);
  }
  for (unsigned g = ready; g; g &= g - 1) f[__builtin_ctz(g)].state = LC_RUNNABLE;
  b->warp_wait[w] &= ~ready;
  return true;
}

LC_RT bool __lc_wake_active(__lc_block *b) {
  bool woke = false;
  for (unsigned i = 0; i < b->nthreads; i++)
    if (b->f[i].state == LC_AT_ACTIVE) {
      unsigned w = i / warpSize, site = b->f[i].warg, lanes = 0;
      for (unsigned l = 0; l < warpSize && w * warpSize + l < b->nthreads; l++) {
        const __lc_fiber *g = &b->f[w * warpSize + l];
        if ((g->state == LC_AT_ACTIVE || g->state == LC_WOKEN) && g->warg == site)
          lanes |= 1u << l;
      }
      b->f[i].wres = lanes;
      b->f[i].state = LC_WOKEN;      // runnable once every mask is known
      woke = true;
    }
  for (unsigned i = 0; i < b->nthreads; i++)
    if (b->f[i].state == LC_WOKEN) b->f[i].state = LC_RUNNABLE;
  return woke;
}

LC_RT void __lc_stuck(unsigned me) {
  __lc_block *b = __lc_current;
  char t[48];
  for (unsigned i = 0; i < b->nthreads; i++) {
    const __lc_fiber *f = &b->f[i];
    if (f->state != LC_AT_WARP) continue;
    unsigned w = i / warpSize, missing = 0;
    unsigned group = f->wmask & __lc_warp_lanes(b, w) & ~b->warp_gone[w];
    for (unsigned g = group; g; g &= g - 1) {
      unsigned l = (unsigned)__builtin_ctz(g);
      if (!(b->warp_wait[w] >> l & 1) || b->f[w * warpSize + l].wmask != f->wmask)
        missing |= 1u << l;
    }
    __lc_fail("%s(0x%08x) never completes in block (%u, %u, %u): thread %s waits for "
              "lanes 0x%08x of its warp, which wait at another barrier or with another mask",
              __lc_warp_name(f->wop), f->wmask, __lc_rt_blockIdx.x, __lc_rt_blockIdx.y,
              __lc_rt_blockIdx.z, __lc_thread_name(i, t, sizeof t), missing);
  }
  __lc_fail("barrier never completes in block (%u, %u, %u): thread %s waits while no "
            "thread can reach it", __lc_rt_blockIdx.x, __lc_rt_blockIdx.y, __lc_rt_blockIdx.z,
            __lc_thread_name(me, t, sizeof t));
}

LC_RT void __lc_thread_exit(__lc_block *b, unsigned me) {
  char t[48];
  __lc_returned(b, me);
  if (b->at_block)
    __lc_fail("barrier never completes in block (%u, %u, %u): thread %s returned while "
              "others wait at syncthreads", __lc_rt_blockIdx.x, __lc_rt_blockIdx.y, __lc_rt_blockIdx.z,
              __lc_thread_name(me, t, sizeof t));
  unsigned w = me / warpSize;
  if (b->warp_wait[w]) __lc_warp_settle(b, w);
  if (me != b->host) __lc_yield(b, me);     // never comes back
}

// (x86-64's fibers call b->run straight from __lc_fiber_start)
extern "C" void __lc_fiber_main(__lc_block *b) {
  b->run(b);                    // the kernel, then the thread's exit
  __builtin_unreachable();
}

LC_RT void __lc_to_fibers(__lc_block *b) {
  void **stacks = b->worker->stacks(b->worker, b->nthreads);
  if (stacks == NULL) longjmp(b->abort, 1);
  unsigned c = b->cur;
  b->f = __lc_fibers;
  b->stacks = stacks;
  b->host = c;
  b->done = c;
  for (unsigned w = 0; w < c / warpSize; w++) b->warp_gone[w] = 0xffffffffu;
  if (c % warpSize) b->warp_gone[c / warpSize] = (1u << (c % warpSize)) - 1;
  uint3 tid = {0, 0, 0};
  for (unsigned i = 0; i < b->nthreads; i++) {
    b->f[i].tid = tid;          // counted up: no division per thread
    if (++tid.x == __lc_rt_blockDim.x) {
      tid.x = 0;
      if (++tid.y == __lc_rt_blockDim.y) { tid.y = 0; tid.z++; }
    }
    b->f[i].state = i < c ? LC_DONE : LC_RUNNABLE;
    // stagger the stack tops: at the same page offset they would all fall
    // into one cache set and evict each other at every switch
    size_t color = (i * 192u) & 4095u;
    b->f[i].sp = i > c ? __lc_stack_init(stacks[i], b->worker->stack_size - color, b) : NULL;
  }
  b->fibers = true;
}

LC_RT void __lc_barrier_after_return(unsigned me) {
  char t[48];
  __lc_fail("barrier never completes in block (%u, %u, %u): thread %s waits there after "
            "others returned", __lc_rt_blockIdx.x, __lc_rt_blockIdx.y, __lc_rt_blockIdx.z,
            __lc_thread_name(me, t, sizeof t));
}

LC_RT void __lc_first_barrier(__lc_block *b, bool block) {
  char t[48];
  if (block && b->cur != 0)
    __lc_fail("thread %s reached a barrier in block (%u, %u, %u) that threads before it "
              "returned without reaching", __lc_thread_name(b->cur, t, sizeof t),
              __lc_rt_blockIdx.x, __lc_rt_blockIdx.y, __lc_rt_blockIdx.z);
  __lc_to_fibers(b);
}

LC_RT void __lc_grid_invalid(const char *what) {
  char t[48];
  __lc_fail("this_grid().%s() in a launch that is not cooperative (launch it with "
            "cooperative = true): thread %s of block (%u, %u, %u)", what,
            __lc_thread_name(__lc_current->cur, t, sizeof t), __lc_rt_blockIdx.x,
            __lc_rt_blockIdx.y, __lc_rt_blockIdx.z);
}

// ---- misaligned accesses (strict memory checking) ------------------------
// Kernels are then compiled with GCC's -fsanitize=alignment
// (src/backend/sim/compile.c), which calls this before an access through a
// pointer or reference whose address is not a multiple of its type's
// alignment: a GPU fails such an access (CUDA_ERROR_MISALIGNED_ADDRESS),
// where x86 makes it. The data is GCC's (libsanitizer's TypeMismatchData,
// version 1); the module links no libubsan: this is its handler, hidden
// (sim_runtime.h), so that a process that has libubsan keeps its own.
struct __lc_ubsan_type {
  unsigned short kind, info;
  char name[1];                    // quoted: "'float'"
};
struct __lc_ubsan_mismatch {
  const char *file;
  unsigned line, column;
  const __lc_ubsan_type *type;
  unsigned char log_align;
  unsigned char check_kind;        // 0 a load, 1 a store, 3 a member's access
};

extern "C" __attribute__((noinline, cold))
void __ubsan_handle_type_mismatch_v1(void *data, void *addr) {   // GCC's declaration
  const __lc_ubsan_mismatch *d = static_cast<const __lc_ubsan_mismatch *>(data);
  // the others (a reference bound, a member function called, a cast) make
  // no access themselves; those they lead to are checked where they are
  if (addr == nullptr || (d->check_kind != 0 && d->check_kind != 1 && d->check_kind != 3)) return;
  static const char *const what[] = {"load", "store", "", "member access"};
  char t[48];
  __lc_fail("misaligned address %p: a %s of %s at %s:%u, which needs a multiple of %u "
            "(CUDA_ERROR_MISALIGNED_ADDRESS on a GPU) in block (%u, %u, %u), thread %s", addr,
            what[d->check_kind], d->type->name, d->file, d->line, 1u << d->log_align,
            __lc_rt_blockIdx.x, __lc_rt_blockIdx.y, __lc_rt_blockIdx.z,
            __lc_thread_name(__lc_current->cur, t, sizeof t));
}

LC_RT void __lc_misaligned_atomic(const char *fn, const void *addr, unsigned size) {
  char t[48];
  __lc_fail("misaligned address %p: %s on %u bytes, which needs a multiple of %u "
            "(CUDA_ERROR_MISALIGNED_ADDRESS on a GPU) in block (%u, %u, %u), thread %s", addr,
            fn, size, size, __lc_rt_blockIdx.x, __lc_rt_blockIdx.y, __lc_rt_blockIdx.z,
            __lc_thread_name(__lc_current->cur, t, sizeof t));
}

LC_SIM_EXPORT int __lc_sim_abi(void) { return LC_SIM_ABI; }

#ifdef LC_SIM_STRICT
// compiled with strict memory checking's checked arrays: the loader asks
// (src/backend/sim/compile.c), as a module that does not compile with them
// is compiled without
LC_SIM_EXPORT const int __lc_sim_strict = 1;
#endif

#endif  // LUACUDA_SIM_RUNTIME_IMPL_H
