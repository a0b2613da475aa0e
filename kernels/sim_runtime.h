// sim_runtime.h: CUDA's built-ins for the host C++ compiler, and the block
// scheduler of luacuda's simulator. Compiled (after sim_abi.h, before the
// prelude and the user's source) into every simulated kernel module.
//
// Execution model. A block runs on one worker thread of the core. Its
// threads run as a plain loop, the kernel inlined into it, until a thread
// reaches a barrier or a warp function. Then the block becomes fibers: that
// thread (thread 0 at a __syncthreads; those before it have returned)
// stays on the worker's stack and coordinates, the others run on pooled
// stacks and switch back to it when they wait. __shared__ is thread_local:
// every thread of a block runs on the same OS thread, so that is one copy
// per block.
#ifndef LUACUDA_SIM_RUNTIME_H
#define LUACUDA_SIM_RUNTIME_H

#define __LC_SIM__ 1

#include <assert.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tuple>
#include <type_traits>
#include <utility>

// ---- CUDA keywords ------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__ thread_local
#define __managed__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __CUDA_ARCH__ 750
#define __CUDACC__ 1

// ---- vector types -----------------------------------------------------
#define LC_VEC_(T, N, A)                                                     \
  struct __attribute__((aligned(A))) N##1 { T x; };                         \
  struct __attribute__((aligned(A * 2 > 16 ? 16 : A * 2))) N##2 { T x, y; }; \
  struct N##3 { T x, y, z; };                                                \
  struct __attribute__((aligned(A * 4 > 16 ? 16 : A * 4))) N##4 { T x, y, z, w; }; \
  static inline N##1 make_##N##1(T x) { return N##1{x}; }                   \
  static inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }           \
  static inline N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }   \
  static inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
LC_VEC_(signed char, char, 1)
LC_VEC_(unsigned char, uchar, 1)
LC_VEC_(short, short, 2)
LC_VEC_(unsigned short, ushort, 2)
LC_VEC_(int, int, 4)
LC_VEC_(unsigned int, uint, 4)
LC_VEC_(long, long, 8)
LC_VEC_(unsigned long, ulong, 8)
LC_VEC_(long long, longlong, 8)
LC_VEC_(unsigned long long, ulonglong, 8)
LC_VEC_(float, float, 4)
LC_VEC_(double, double, 8)
#undef LC_VEC_

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

static constexpr int warpSize = LC_WARP_SIZE;   // kernels/abi.h

// ---- the running block ------------------------------------------------
// A thread's state: running or ready, waiting at __syncthreads, at a warp
// function, in __activemask, or returned (LC_WOKEN: out of __activemask,
// for a moment).
enum { LC_RUNNABLE, LC_AT_BLOCK, LC_AT_WARP, LC_AT_ACTIVE, LC_DONE, LC_WOKEN };
enum { LC_SYNC, LC_COUNT, LC_AND, LC_OR };
// the warp functions (__lc_warp_op)
enum {
  LC_W_SYNC, LC_W_SHFL, LC_W_SHFL_UP, LC_W_SHFL_DOWN, LC_W_SHFL_XOR, LC_W_BALLOT, LC_W_ANY,
  LC_W_ALL, LC_W_MATCH_ANY, LC_W_MATCH_ALL, LC_W_ADD, LC_W_MIN, LC_W_MAX, LC_W_IMIN, LC_W_IMAX,
  LC_W_AND, LC_W_OR, LC_W_XOR
};
static_assert(LC_WARP_SIZE == 32, "the warp functions keep a warp's lanes in 32-bit masks");

struct __lc_fiber {
  void *sp;        // saved context while switched out
  uint3 tid;
  int state;
  // its warp function while it waits there (LC_AT_WARP): what it asked,
  // with what mask, its value, then the result computed for it
  unsigned char wop, wwidth;
  unsigned warg, wmask;
  unsigned long long wval, wres;
};

struct __lc_block;
typedef void (*__lc_thread_fn)(__lc_block *);

struct __lc_block {
  const lc_sim_launch *launch;
  lc_sim_worker *worker;
  unsigned nthreads;
  unsigned cur;            // the thread running now
  unsigned host;           // the thread on the worker's stack in fiber mode
  bool fibers;             // switched to fiber mode
  bool failed;             // an error waits to unwind the block
  __lc_fiber *f;           // [nthreads] in fiber mode; f[host] is the worker's stack
  void **stacks;           // in fiber mode, thread i's stack (but host's): stacks[i]
  unsigned at_block;       // threads waiting at the block barrier
  unsigned count;          // true predicates among them
  unsigned done;           // threads that returned
  int result;              // the last block barrier's predicate count
  // one entry per warp of the largest block (kernels/abi.h's limits), a
  // bit per lane: those waiting at a warp function, those that returned
  // (known in fiber mode only)
  unsigned warp_wait[LC_MAX_BLOCK_THREADS / LC_WARP_SIZE];
  unsigned warp_gone[LC_MAX_BLOCK_THREADS / LC_WARP_SIZE];
  __lc_thread_fn run;      // runs the kernel for the current thread
  const void *args;        // the unpacked arguments, for run
  jmp_buf abort;           // unwinds the block on an error
};

static thread_local uint3 __lc_threadIdx, __lc_blockIdx;
static thread_local dim3 __lc_blockDim, __lc_gridDim;
static thread_local __lc_block *__lc_current;
static thread_local __lc_fiber __lc_fibers[LC_MAX_BLOCK_THREADS];   // one per thread

#define threadIdx __lc_threadIdx
#define blockIdx __lc_blockIdx
#define blockDim __lc_blockDim
#define gridDim __lc_gridDim

static inline uint3 __lc_tid_of(unsigned t) {
  unsigned bx = __lc_blockDim.x, by = __lc_blockDim.y;
  return uint3{t % bx, (t / bx) % by, t / (bx * by)};
}

static void __lc_vmessage(__lc_block *b, const char *fmt, va_list ap) {
  vsnprintf(b->worker->error, LC_SIM_ERRLEN, fmt, ap);
}

// ---- context switch -----------------------------------------------------
// __lc_jump(save, to) saves the running context in *save and resumes the
// one saved in to. A context is a stack pointer; the stack holds the frame
// pointer and the address to resume at. x86-64 does it inline, without
// call/ret: every thread of a block resumes at the same few places, which
// an indirect jump predicts well and a return mispredicts at every switch.
// A new fiber's stack resumes at __lc_fiber_start with its argument.
extern "C" void __lc_fiber_start(void);
extern "C" __attribute__((used, noreturn)) void __lc_fiber_main(__lc_block *b);

#if defined(__x86_64__)
__attribute__((always_inline)) static inline void __lc_jump(void **save, void *to) {
  // the compiler saves whatever is live in the clobbered registers; rbp is
  // pushed by hand, and the red zone below rsp is stepped over
  __asm__ volatile("leaq -128(%%rsp), %%rsp\n\t"
                   "leaq 1f(%%rip), %%rax\n\t"
                   "pushq %%rax\n\t"
                   "pushq %%rbp\n\t"
                   "movq %%rsp, (%0)\n\t"
                   "movq %1, %%rsp\n\t"
                   "popq %%rbp\n\t"
                   "popq %%rax\n\t"
                   "jmp *%%rax\n"
                   "1:\n\t"
                   "leaq 128(%%rsp), %%rsp\n\t"
                   : "+D"(save), "+S"(to)
                   :
                   : "rax", "rbx", "rcx", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
                     "r15", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                     "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
                     "memory", "cc");
}

__asm__(".pushsection .text\n"
        ".p2align 4\n"
        ".globl __lc_fiber_start\n.hidden __lc_fiber_start\n.type __lc_fiber_start, @function\n"
        "__lc_fiber_start:\n"
        "  movq %rbp, %rdi\n"
        "  xorl %ebp, %ebp\n"
        "  andq $-16, %rsp\n"
        "  call __lc_fiber_main\n"
        "  ud2\n"
        ".size __lc_fiber_start, . - __lc_fiber_start\n"
        ".popsection\n");

// A fresh stack: the argument where rbp is restored from, then the start.
static void *__lc_stack_init(void *base, size_t size, void *arg) {
  uintptr_t top = ((uintptr_t)base + size) & ~(uintptr_t)15;
  void **sp = (void **)(top - 32);
  sp[0] = arg;
  sp[1] = (void *)__lc_fiber_start;
  return sp;
}
#elif defined(__aarch64__)
// aarch64: an out-of-line switch saving the callee-saved registers.
extern "C" void __lc_switch(void **save, void *to);
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
static inline void __lc_jump(void **save, void *to) { __lc_switch(save, to); }

static void *__lc_stack_init(void *base, size_t size, void *arg) {
  uintptr_t top = ((uintptr_t)base + size) & ~(uintptr_t)15;
  void **sp = (void **)(top - 160);
  for (int i = 0; i < 20; i++) sp[i] = 0;
  sp[0] = arg;                                  // x19
  sp[11] = (void *)__lc_fiber_start;            // x30, where ret goes
  return sp;
}
#else
// Elsewhere: one ucontext per fiber, kept at the top of its stack.
#include <ucontext.h>
static inline void __lc_jump(void **save, void *to) {
  ucontext_t here;
  *save = &here;
  swapcontext(&here, (ucontext_t *)to);
}
static void __lc_ucontext_entry(unsigned lo, unsigned hi) {
  __lc_fiber_main((__lc_block *)(((uintptr_t)hi << 32) | lo));
}
static void *__lc_stack_init(void *base, size_t size, void *arg) {
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

// Describe thread t as "(x, y, z)".
static const char *__lc_thread_name(unsigned t, char *buf, size_t n) {
  uint3 v = __lc_tid_of(t);
  snprintf(buf, n, "(%u, %u, %u)", v.x, v.y, v.z);
  return buf;
}

// Record an error and unwind the block: from the worker's own stack at
// once, from a fiber by resuming the worker's stack (thread b->host's
// context), which then unwinds.
__attribute__((noreturn, format(printf, 1, 2)))
static void __lc_fail(const char *fmt, ...) {
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

// __trap() and a failed assert end the launch with an error naming the
// thread, as on a GPU (where they are launch failures). An <assert.h>
// included again by the kernel source restores the C library's assert,
// whose abort() is caught as a fault (sim/fault.c).
__attribute__((noinline, cold, noreturn))
static void __lc_assert_fail(const char *expr, const char *file, int line) {
  char t[48];
  __lc_fail("assertion '%s' failed at %s:%d in block (%u, %u, %u), thread %s", expr, file,
            line, __lc_blockIdx.x, __lc_blockIdx.y, __lc_blockIdx.z,
            __lc_thread_name(__lc_current->cur, t, sizeof t));
}
__attribute__((noinline, cold, noreturn))
static void __trap() {
  char t[48];
  __lc_fail("__trap() called in block (%u, %u, %u), thread %s", __lc_blockIdx.x,
            __lc_blockIdx.y, __lc_blockIdx.z, __lc_thread_name(__lc_current->cur, t, sizeof t));
}
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : __lc_assert_fail(#e, __FILE__, __LINE__))
#endif

// ---- warps ---------------------------------------------------------------
// Warps are cut from the linear thread index. Every thread runs on its own
// (Volta's independent scheduling): a warp function (__syncwarp, the
// shuffles, votes, matches and reductions, all *_sync(mask, ...)) waits
// until every lane named in mask has called a warp function with that same
// mask, then each gets its result from the values of those lanes. A lane
// that returned, or that the block does not have (a last warp of fewer
// than 32 threads), is not waited for and gives no value, as CUDA says of
// exited threads. A mask naming such lanes is no error: NVIDIA documents it
// (the Programming Guide and cuda_fp16.h: "all non-exited threads named in
// mask must execute the same intrinsic"; the PTX ISA: shfl/vote/match/
// redux.sync wait for "all non-exited threads" of membermask), and the
// lanes past a partial last warp never ran, so they count as exited. What
// CUDA leaves undefined is the value a shuffle reads from a lane that takes
// no part (exited, missing or outside the mask): here the caller's own. It
// is no error either, as code may read it and throw it away. Misuse CUDA leaves undefined is an
// error naming the thread: a mask without the caller's own lane, a shuffle
// width that is not a power of 2 from 1 to 32, lanes of one mask at
// different warp functions, a mask whose lanes wait elsewhere for good.
// __activemask() waits until no thread of the block can run, then gives
// the lanes of its warp that have not returned.

// the lanes the block has in warp w
static inline unsigned __lc_warp_lanes(const __lc_block *b, unsigned w) {
  unsigned left = b->nthreads - w * warpSize;
  return left >= 32 ? 0xffffffffu : (1u << left) - 1;
}

static const char *__lc_warp_name(int op) {
  static const char *const names[] = {
    "__syncwarp", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
    "__ballot_sync", "__any_sync", "__all_sync", "__match_any_sync", "__match_all_sync",
    "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync", "__reduce_min_sync",
    "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync"};
  return names[op];
}

__attribute__((noinline, cold, noreturn))
static void __lc_warp_width(int op, int width) {
  char t[48];
  __lc_fail("%s: width %d is not a power of 2 from 1 to 32 (thread %s of block (%u, %u, %u))",
            __lc_warp_name(op), width, __lc_thread_name(__lc_current->cur, t, sizeof t),
            __lc_blockIdx.x, __lc_blockIdx.y, __lc_blockIdx.z);
}

__attribute__((noinline, cold, noreturn))
static void __lc_warp_mask(int op, unsigned mask) {
  char t[48];
  unsigned me = __lc_current->cur;
  __lc_fail("%s: mask 0x%08x does not name the calling thread %s (lane %u) of block "
            "(%u, %u, %u)", __lc_warp_name(op), mask, __lc_thread_name(me, t, sizeof t),
            me % warpSize, __lc_blockIdx.x, __lc_blockIdx.y, __lc_blockIdx.z);
}

// The group of mask in warp w is complete when each of its lanes that has
// not returned waits with that mask: compute every lane's result, release
// them, and say so.
__attribute__((noinline))
static bool __lc_warp_complete(__lc_block *b, unsigned w, unsigned mask, unsigned group) {
  __lc_fiber *f = b->f + w * warpSize;
  unsigned first = (unsigned)__builtin_ctz(group);
  int op = f[first].wop;
  for (unsigned g = group; g; g &= g - 1) {
    unsigned l = (unsigned)__builtin_ctz(g);
    if (f[l].wmask != mask) return false;         // it waits in another group
  }
  for (unsigned g = group; g; g &= g - 1) {
    unsigned l = (unsigned)__builtin_ctz(g);
    if (f[l].wop != op || f[l].wwidth != f[first].wwidth) {
      char t1[48], t2[48];
      __lc_fail("warp functions of mask 0x%08x differ in block (%u, %u, %u): thread %s "
                "called %s, thread %s %s%s", mask, __lc_blockIdx.x, __lc_blockIdx.y,
                __lc_blockIdx.z, __lc_thread_name(w * warpSize + first, t1, sizeof t1),
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
        // a source that takes no part: undefined in CUDA, the caller's own here
        f[l].wres = j < 32 && (group >> j & 1) ? f[j].wval : f[l].wval;
      }
      goto release;
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
      goto release;
    case LC_W_MATCH_ALL:        // the mask and bit 32 (the predicate), or 0
      r = mask | 1ull << 32;
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
release:
  for (unsigned g = group; g; g &= g - 1) f[__builtin_ctz(g)].state = LC_RUNNABLE;
  b->warp_wait[w] &= ~group;
  return true;
}

// Try to complete the group of mask in warp w (after an arrival or a return).
static inline bool __lc_warp_try(__lc_block *b, unsigned w, unsigned mask) {
  unsigned group = mask & __lc_warp_lanes(b, w) & ~b->warp_gone[w];
  if (group == 0 || (b->warp_wait[w] & group) != group) return false;
  return __lc_warp_complete(b, w, mask, group);
}

// A lane of warp w returned while others wait there: they may wait no more.
__attribute__((noinline, cold))
static void __lc_warp_retry(__lc_block *b, unsigned w) {
  for (unsigned g = b->warp_wait[w]; g; g &= b->warp_wait[w]) {
    unsigned l = (unsigned)__builtin_ctz(g);
    __lc_warp_try(b, w, b->f[w * warpSize + l].wmask);
    g &= ~(1u << l);
  }
}

// Nothing can run, and threads wait in __activemask: each gets the lanes of
// its warp that have not returned, now that they all have either returned
// or stopped at a barrier. A thread that waits in coalesced_threads() (a
// nonzero call site in warg) gets instead the lanes of its warp that wait
// at that same call site: a divergent branch's lanes, as on a GPU. Whether
// any did.
__attribute__((noinline, cold))
static bool __lc_wake_active(__lc_block *b) {
  bool woke = false;
  for (unsigned i = 0; i < b->nthreads; i++)
    if (b->f[i].state == LC_AT_ACTIVE) {
      unsigned w = i / warpSize, site = b->f[i].warg, lanes = 0;
      if (site == 0) {
        lanes = __lc_warp_lanes(b, w) & ~b->warp_gone[w];
      } else {
        for (unsigned l = 0; l < warpSize && w * warpSize + l < b->nthreads; l++) {
          const __lc_fiber *g = &b->f[w * warpSize + l];
          if ((g->state == LC_AT_ACTIVE || g->state == LC_WOKEN) && g->warg == site)
            lanes |= 1u << l;
        }
      }
      b->f[i].wres = lanes;
      b->f[i].state = LC_WOKEN;      // runnable once every mask is known
      woke = true;
    }
  for (unsigned i = 0; i < b->nthreads; i++)
    if (b->f[i].state == LC_WOKEN) b->f[i].state = LC_RUNNABLE;
  return woke;
}

// No thread can run: name a warp function that waits, with the lanes it
// waits for, or else the thread that yielded.
__attribute__((noinline, cold, noreturn))
static void __lc_stuck(unsigned me) {
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
              __lc_warp_name(f->wop), f->wmask, __lc_blockIdx.x, __lc_blockIdx.y,
              __lc_blockIdx.z, __lc_thread_name(i, t, sizeof t), missing);
  }
  __lc_fail("barrier never completes in block (%u, %u, %u): thread %s waits while no "
            "thread can reach it", __lc_blockIdx.x, __lc_blockIdx.y, __lc_blockIdx.z,
            __lc_thread_name(me, t, sizeof t));
}

// Switch from thread me (whose state is already set) to the next thread that
// can run, or return at once when that is me. With nobody left, the
// worker's stack (thread host's context) is resumed to finish the block.
__attribute__((always_inline)) static inline void __lc_yield(__lc_block *b, unsigned me) {
  unsigned n = b->nthreads, u = me + 1 == n ? 0 : me + 1;
  while (b->f[u].state != LC_RUNNABLE) {
    if (u == me) {               // no other thread can run
      if (b->done == n) break;   // all returned: back to the worker's stack
      if (!__lc_wake_active(b)) __lc_stuck(me);
    }
    u = u + 1 == n ? 0 : u + 1;
  }
  if (b->done == n) u = b->host;
  if (u == me) return;
  b->cur = u;
  __lc_threadIdx = b->f[u].tid;
  __lc_jump(&b->f[me].sp, b->f[u].sp);
  // resumed: an error found elsewhere unwinds from the worker's stack
  if (b->failed && me == b->host) longjmp(b->abort, 1);
}

// A fiber's life: run the kernel for its thread, then hand over.
static void __lc_thread_exit(__lc_block *b, unsigned me);
extern "C" void __lc_fiber_main(__lc_block *b) {
  b->run(b);
  __lc_thread_exit(b, b->cur);
  __builtin_unreachable();
}

static void __lc_thread_exit(__lc_block *b, unsigned me) {
  char t[48];
  b->f[me].state = LC_DONE;
  b->done++;
  if (b->at_block)
    __lc_fail("barrier never completes in block (%u, %u, %u): thread %s returned while "
              "others wait at syncthreads", __lc_blockIdx.x, __lc_blockIdx.y, __lc_blockIdx.z,
              __lc_thread_name(me, t, sizeof t));
  unsigned w = me / warpSize;
  b->warp_gone[w] |= 1u << (me % warpSize);
  if (b->warp_wait[w]) __lc_warp_retry(b, w);
  if (me != b->host) __lc_yield(b, me);     // never comes back
}

// Turn a plain-loop block into fibers at its first barrier or warp
// function. The loop ran threads 0..cur-1 to their end: they have
// returned, and thread cur stays on the worker's stack.
static void __lc_to_fibers(__lc_block *b) {
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
    if (++tid.x == __lc_blockDim.x) {
      tid.x = 0;
      if (++tid.y == __lc_blockDim.y) { tid.y = 0; tid.z++; }
    }
    b->f[i].state = i < c ? LC_DONE : LC_RUNNABLE;
    // stagger the stack tops: at the same page offset they would all fall
    // into one cache set and evict each other at every switch
    size_t color = (i * 192u) & 4095u;
    b->f[i].sp = i > c ? __lc_stack_init(stacks[i], b->worker->stack_size - color, b) : NULL;
  }
  b->fibers = true;
}

// The cold ends of a barrier: errors, and the switch to fibers.
__attribute__((noinline, cold, noreturn))
static void __lc_barrier_after_return(unsigned me) {
  char t[48];
  __lc_fail("barrier never completes in block (%u, %u, %u): thread %s waits there after "
            "others returned", __lc_blockIdx.x, __lc_blockIdx.y, __lc_blockIdx.z,
            __lc_thread_name(me, t, sizeof t));
}

// A block barrier first reached by a thread after thread 0 can never
// complete: the threads before it returned without reaching it.
__attribute__((noinline, cold))
static void __lc_first_barrier(__lc_block *b, bool block) {
  char t[48];
  if (block && b->cur != 0)
    __lc_fail("thread %s reached a barrier in block (%u, %u, %u) that threads before it "
              "returned without reaching", __lc_thread_name(b->cur, t, sizeof t),
              __lc_blockIdx.x, __lc_blockIdx.y, __lc_blockIdx.z);
  __lc_to_fibers(b);
}

__attribute__((always_inline)) static inline int __lc_barrier(int op, int pred) {
  __lc_block *b = __lc_current;
  if (__builtin_expect(!b->fibers, 0)) __lc_first_barrier(b, true);
  unsigned me = b->cur, n = b->nthreads;
  if (__builtin_expect(b->done != 0, 0)) __lc_barrier_after_return(me);
  b->count += pred != 0;
  if (++b->at_block == n) {        // the last to arrive releases everyone
    for (unsigned i = 0; i < n; i++) b->f[i].state = LC_RUNNABLE;
    b->result = (int)b->count;
    b->at_block = b->count = 0;
  } else {
    b->f[me].state = LC_AT_BLOCK;
    __lc_yield(b, me);
  }
  switch (op) {
    case LC_COUNT: return b->result;
    case LC_AND: return b->result == (int)n;
    case LC_OR: return b->result != 0;
    default: return 0;
  }
}

// Thread cur calls warp function op with its mask, value v, argument arg
// (source lane, delta, lane mask) and shuffle width (0 for the others); the
// result computed for it.
static inline unsigned long long __lc_warp_op(int op, unsigned mask, unsigned long long v,
                                              unsigned arg, int width) {
  __lc_block *b = __lc_current;
  if (op >= LC_W_SHFL && op <= LC_W_SHFL_XOR &&
      __builtin_expect(width < 1 || width > 32 || (width & (width - 1)) != 0, 0))
    __lc_warp_width(op, width);
  if (__builtin_expect(!b->fibers, 0)) __lc_first_barrier(b, false);
  unsigned me = b->cur, w = me / warpSize, bit = 1u << (me % warpSize);
  if (__builtin_expect(!(mask & bit), 0)) __lc_warp_mask(op, mask);
  __lc_fiber *f = &b->f[me];
  f->wop = (unsigned char)op;
  f->wwidth = (unsigned char)width;
  f->warg = arg;
  f->wmask = mask;
  f->wval = v;
  b->warp_wait[w] |= bit;
  if (!__lc_warp_try(b, w, mask)) {
    f->state = LC_AT_WARP;
    __lc_yield(b, me);
  }
  return f->wres;
}

// a value's bits, and back (through void *: the half types of
// sim_include/cuda_fp16.h are classes, trivially copyable)
template <typename T>
static inline unsigned long long __lc_bits(const T v) {
  unsigned long long u = 0;
  memcpy(&u, static_cast<const void *>(&v), sizeof v);
  return u;
}
template <typename T>
static inline T __lc_from_bits(unsigned long long u) {
  T v;
  memcpy(static_cast<void *>(&v), &u, sizeof v);
  return v;
}

// ---- CUDA functions -----------------------------------------------------
static inline void __syncthreads() { __lc_barrier(LC_SYNC, 0); }
static inline int __syncthreads_count(int p) { return __lc_barrier(LC_COUNT, p); }
static inline int __syncthreads_and(int p) { return __lc_barrier(LC_AND, p); }
static inline int __syncthreads_or(int p) { return __lc_barrier(LC_OR, p); }
static inline void __syncwarp(unsigned mask = 0xffffffffu) { __lc_warp_op(LC_W_SYNC, mask, 0, 0, 0); }

// the lanes of the caller's warp that have not returned, once every lane
// of the block has returned or stopped at a barrier (threads run
// independently here, so no lanes are "inactive" but those)
static inline unsigned __lc_active_at(unsigned site) {
  __lc_block *b = __lc_current;
  if (__builtin_expect(!b->fibers, 0)) __lc_first_barrier(b, false);
  unsigned me = b->cur;
  b->f[me].warg = site;
  b->f[me].state = LC_AT_ACTIVE;
  __lc_yield(b, me);
  return (unsigned)b->f[me].wres;
}
static inline unsigned __activemask() { return __lc_active_at(0); }

static inline unsigned __ballot_sync(unsigned mask, int p) {
  return (unsigned)__lc_warp_op(LC_W_BALLOT, mask, p != 0, 0, 0);
}
static inline int __any_sync(unsigned mask, int p) { return (int)__lc_warp_op(LC_W_ANY, mask, p != 0, 0, 0); }
static inline int __all_sync(unsigned mask, int p) { return (int)__lc_warp_op(LC_W_ALL, mask, p != 0, 0, 0); }

// the shuffles of a type, on its bits (cuda_fp16.h's half types too)
#define LC_WARP_SHFL_T_(T)                                                                    \
  static inline T __shfl_sync(unsigned mask, T v, int src, int width = warpSize) {            \
    return __lc_from_bits<T>(__lc_warp_op(LC_W_SHFL, mask, __lc_bits(v), (unsigned)src, width)); \
  }                                                                                           \
  static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {  \
    return __lc_from_bits<T>(__lc_warp_op(LC_W_SHFL_UP, mask, __lc_bits(v), delta, width));   \
  }                                                                                           \
  static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = warpSize) { \
    return __lc_from_bits<T>(__lc_warp_op(LC_W_SHFL_DOWN, mask, __lc_bits(v), delta, width)); \
  }                                                                                           \
  static inline T __shfl_xor_sync(unsigned mask, T v, int lanes, int width = warpSize) {      \
    return __lc_from_bits<T>(__lc_warp_op(LC_W_SHFL_XOR, mask, __lc_bits(v), (unsigned)lanes, width)); \
  }
#define LC_WARP_T_(T)                                                                         \
  LC_WARP_SHFL_T_(T)                                                                          \
  static inline unsigned __match_any_sync(unsigned mask, T v) {                               \
    return (unsigned)__lc_warp_op(LC_W_MATCH_ANY, mask, __lc_bits(v), 0, 0);                  \
  }                                                                                           \
  static inline unsigned __match_all_sync(unsigned mask, T v, int *pred) {                    \
    unsigned long long r = __lc_warp_op(LC_W_MATCH_ALL, mask, __lc_bits(v), 0, 0);            \
    *pred = (int)(r >> 32);                                                                   \
    return (unsigned)r;                                                                       \
  }
LC_WARP_T_(int)
LC_WARP_T_(unsigned int)
LC_WARP_T_(long)
LC_WARP_T_(unsigned long)
LC_WARP_T_(long long)
LC_WARP_T_(unsigned long long)
LC_WARP_T_(float)
LC_WARP_T_(double)
#undef LC_WARP_T_

static inline unsigned __reduce_add_sync(unsigned mask, unsigned v) { return (unsigned)__lc_warp_op(LC_W_ADD, mask, v, 0, 0); }
static inline int __reduce_add_sync(unsigned mask, int v) { return (int)(unsigned)__lc_warp_op(LC_W_ADD, mask, (unsigned)v, 0, 0); }
static inline unsigned __reduce_min_sync(unsigned mask, unsigned v) { return (unsigned)__lc_warp_op(LC_W_MIN, mask, v, 0, 0); }
static inline int __reduce_min_sync(unsigned mask, int v) { return (int)(unsigned)__lc_warp_op(LC_W_IMIN, mask, (unsigned)v, 0, 0); }
static inline unsigned __reduce_max_sync(unsigned mask, unsigned v) { return (unsigned)__lc_warp_op(LC_W_MAX, mask, v, 0, 0); }
static inline int __reduce_max_sync(unsigned mask, int v) { return (int)(unsigned)__lc_warp_op(LC_W_IMAX, mask, (unsigned)v, 0, 0); }
static inline unsigned __reduce_and_sync(unsigned mask, unsigned v) { return (unsigned)__lc_warp_op(LC_W_AND, mask, v, 0, 0); }
static inline unsigned __reduce_or_sync(unsigned mask, unsigned v) { return (unsigned)__lc_warp_op(LC_W_OR, mask, v, 0, 0); }
static inline unsigned __reduce_xor_sync(unsigned mask, unsigned v) { return (unsigned)__lc_warp_op(LC_W_XOR, mask, v, 0, 0); }
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
// the threads of a block share one OS thread: only the compiler must not reorder
static inline void __threadfence_block() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

// ---- the grid: cooperative groups' this_grid() ----------------------------
// A cooperative launch runs every block at once, each on a worker of its
// own (src/backend/sim/pool.c). A grid barrier is a block barrier, then
// thread 0 of each block waits at the core's barrier for the other blocks
// (its worker blocks there: the block's other threads wait at a second
// block barrier meanwhile).
static inline bool __lc_grid_valid() { return __lc_current->launch->cooperative != 0; }

__attribute__((noinline, cold, noreturn))
static void __lc_grid_invalid(const char *what = "sync") {
  char t[48];
  __lc_fail("this_grid().%s() in a launch that is not cooperative (launch it with "
            "cooperative = true): thread %s of block (%u, %u, %u)", what,
            __lc_thread_name(__lc_current->cur, t, sizeof t), __lc_blockIdx.x,
            __lc_blockIdx.y, __lc_blockIdx.z);
}

static void __lc_grid_sync() {
  __lc_block *b = __lc_current;
  if (__builtin_expect(!b->launch->cooperative, 0)) __lc_grid_invalid();
  __lc_barrier(LC_SYNC, 0);
  if (b->cur == 0 && b->launch->grid_sync(b->launch, b->worker) != 0) {
    char why[LC_SIM_ERRLEN];
    memcpy(why, b->worker->error, sizeof why);
    __lc_fail("%s", why);
  }
  __lc_barrier(LC_SYNC, 0);
}

static inline unsigned char *__lc_dynamic_shared() { return __lc_current->worker->dynamic_shared; }

// atomics: blocks run on several OS threads at once, so they are real ones.
// CUDA's overloads and no others (user code defines atomicAdd for long long
// itself), each also as name_block and name_system.
#define LC_ATOMIC_ADD_(S, T)                                                                \
  static inline T atomicAdd##S(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
#define LC_ATOMIC_SUB_(S, T)                                                                \
  static inline T atomicSub##S(T *p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }
#define LC_ATOMIC_EXCH_(S, T)                                                               \
  static inline T atomicExch##S(T *p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }
#define LC_ATOMIC_CAS_(S, T)                                                                \
  static inline T atomicCAS##S(T *p, T cmp, T v) {                                          \
    __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);     \
    return cmp;                                                                             \
  }
#define LC_ATOMIC_BITS_(S, T)                                                               \
  static inline T atomicAnd##S(T *p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); } \
  static inline T atomicOr##S(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }   \
  static inline T atomicXor##S(T *p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }
#define LC_ATOMIC_MINMAX_(S, T)                                                             \
  static inline T atomicMin##S(T *p, T v) {                                                 \
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                           \
    while (v < old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {} \
    return old;                                                                             \
  }                                                                                         \
  static inline T atomicMax##S(T *p, T v) {                                                 \
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                           \
    while (v > old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {} \
    return old;                                                                             \
  }
// floats: compare-and-swap on the bit pattern
#define LC_ATOMIC_FADD_(S, T, U)                                                            \
  static inline T atomicAdd##S(T *p, T v) {                                                 \
    U *q = (U *)p, old = __atomic_load_n(q, __ATOMIC_RELAXED), nw;                          \
    T f;                                                                                    \
    do {                                                                                    \
      memcpy(&f, &old, sizeof f);                                                           \
      f += v;                                                                               \
      memcpy(&nw, &f, sizeof f);                                                            \
    } while (!__atomic_compare_exchange_n(q, &old, nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)); \
    memcpy(&f, &old, sizeof f);                                                             \
    return f;                                                                               \
  }
#define LC_ATOMICS_(S)                                                                      \
  LC_ATOMIC_ADD_(S, int) LC_ATOMIC_ADD_(S, unsigned int) LC_ATOMIC_ADD_(S, unsigned long long) \
  LC_ATOMIC_FADD_(S, float, unsigned int) LC_ATOMIC_FADD_(S, double, unsigned long long)   \
  LC_ATOMIC_SUB_(S, int) LC_ATOMIC_SUB_(S, unsigned int)                                    \
  LC_ATOMIC_EXCH_(S, int) LC_ATOMIC_EXCH_(S, unsigned int) LC_ATOMIC_EXCH_(S, unsigned long long) \
  static inline float atomicExch##S(float *p, float v) {                                    \
    return __lc_from_bits<float>(atomicExch##S((unsigned int *)p, (unsigned int)__lc_bits(v))); \
  }                                                                                         \
  LC_ATOMIC_CAS_(S, int) LC_ATOMIC_CAS_(S, unsigned int) LC_ATOMIC_CAS_(S, unsigned long long) \
  LC_ATOMIC_BITS_(S, int) LC_ATOMIC_BITS_(S, unsigned int) LC_ATOMIC_BITS_(S, long long)    \
  LC_ATOMIC_BITS_(S, unsigned long long)                                                    \
  LC_ATOMIC_MINMAX_(S, int) LC_ATOMIC_MINMAX_(S, unsigned int) LC_ATOMIC_MINMAX_(S, long long) \
  LC_ATOMIC_MINMAX_(S, unsigned long long)                                                  \
  static inline unsigned atomicInc##S(unsigned *p, unsigned v) {                            \
    unsigned old = __atomic_load_n(p, __ATOMIC_RELAXED), nw;                                \
    do nw = old >= v ? 0 : old + 1;                                                         \
    while (!__atomic_compare_exchange_n(p, &old, nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)); \
    return old;                                                                             \
  }                                                                                         \
  static inline unsigned atomicDec##S(unsigned *p, unsigned v) {                            \
    unsigned old = __atomic_load_n(p, __ATOMIC_RELAXED), nw;                                \
    do nw = (old == 0 || old > v) ? v : old - 1;                                            \
    while (!__atomic_compare_exchange_n(p, &old, nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)); \
    return old;                                                                             \
  }
LC_ATOMICS_()
LC_ATOMICS_(_block)
LC_ATOMICS_(_system)
LC_ATOMIC_CAS_(, unsigned short)     // sm_70's, without _block and _system
#undef LC_ATOMICS_
#undef LC_ATOMIC_ADD_
#undef LC_ATOMIC_SUB_
#undef LC_ATOMIC_EXCH_
#undef LC_ATOMIC_CAS_
#undef LC_ATOMIC_BITS_
#undef LC_ATOMIC_MINMAX_
#undef LC_ATOMIC_FADD_

// the math API and the other intrinsics: kernels/sim_math.h

// ---- running a kernel ---------------------------------------------------
template <typename T>
using __lc_arg_t = typename std::remove_cv<typename std::remove_reference<T>::type>::type;

template <auto K, typename Tuple>
static void __lc_run_thread(__lc_block *b) {
  std::apply(K, *static_cast<const Tuple *>(b->args));
}

// Namespace-scope `extern __shared__` arrays point at this worker's dynamic
// shared memory: each declaration registers, where it stands (so only the
// declarations of the #if branches compiled), a binder run at every block.
struct __lc_binder {
  void (*bind)(void);
  __lc_binder *next;
};
static __lc_binder *__lc_binders;
static bool __lc_add_binder(__lc_binder *b) {
  b->next = __lc_binders;
  __lc_binders = b;
  return true;
}
static void __lc_bind_shared(void) {
  for (__lc_binder *b = __lc_binders; b; b = b->next) b->bind();
}

// One block of kernel K: unpack the arguments once, then run the threads.
template <auto K, typename... P, size_t... I>
static int __lc_run_block(void (*)(P...), std::index_sequence<I...>, const lc_sim_launch *l,
                          lc_sim_worker *w, lc_sim_dim bid) {
  using Tuple = std::tuple<__lc_arg_t<P>...>;
  const Tuple args(*static_cast<__lc_arg_t<P> *>(l->args[I])...);
  __lc_block b;
  memset(&b, 0, sizeof b);
  b.launch = l;
  b.worker = w;
  b.nthreads = l->block.x * l->block.y * l->block.z;
  b.run = __lc_run_thread<K, Tuple>;
  b.args = &args;
  __lc_current = &b;
  __lc_bind_shared();
  __lc_blockIdx = uint3{bid.x, bid.y, bid.z};
  __lc_blockDim = dim3(l->block.x, l->block.y, l->block.z);
  __lc_gridDim = dim3(l->grid.x, l->grid.y, l->grid.z);
  if (setjmp(b.abort)) return -1;
  const unsigned bx = l->block.x, by = l->block.y, bz = l->block.z;
  unsigned t = 0;
  for (unsigned z = 0; z < bz; z++)
    for (unsigned y = 0; y < by; y++)
      for (unsigned x = 0; x < bx; x++, t++) {
        b.cur = t;
        __lc_threadIdx = uint3{x, y, z};
        std::apply(K, args);
        if (b.fibers) goto drain;      // only thread t can have switched
      }
  return 0;
drain:      // thread b.host returned: the others run until they all have
  __lc_thread_exit(&b, b.host);
  __lc_yield(&b, b.host);
  return 0;
}

template <typename... P>
struct __lc_signature {
  static constexpr long long sizes[] = {(long long)sizeof(__lc_arg_t<P>)..., -1};
};
template <typename... P>
static constexpr const long long *__lc_sizes_of(void (*)(P...)) { return __lc_signature<P...>::sizes; }
template <typename... P>
static constexpr size_t __lc_arity(void (*)(P...)) { return sizeof...(P); }

// Modules are built with hidden visibility (so kernels inline into the
// block loop); only these entry points are exported.
#define LC_SIM_EXPORT extern "C" __attribute__((visibility("default")))
#define LC_SIM_KERNEL(K)                                                                  \
  LC_SIM_EXPORT int __lc_block_##K(const lc_sim_launch *l, lc_sim_worker *w, lc_sim_dim b) { \
    return __lc_run_block<K>(K, std::make_index_sequence<__lc_arity(K)>(), l, w, b);     \
  }                                                                                       \
  LC_SIM_EXPORT const long long *const __lc_sizes_##K = __lc_sizes_of(K);
// The kernel a name expression names (sim_abi.h): its value, a pointer to
// one __global__ function (a template's instantiation, one overload), is
// the K of an entry point of its own.
#define LC_SIM_NAMED(I, ...)                                  \
  static constexpr auto __lc_named_##I = __VA_ARGS__;         \
  LC_SIM_KERNEL(__lc_named_##I)
LC_SIM_EXPORT int __lc_sim_abi(void) { return LC_SIM_ABI; }

#endif  // LUACUDA_SIM_RUNTIME_H
