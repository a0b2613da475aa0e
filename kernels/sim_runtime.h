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

// C++17's <cmath> brings libstdc++'s special functions (std::cyl_bessel_j,
// std::riemann_zeta...): inline functions that instantiate their templates
// for float and long double at the end of every module's compile, a tenth
// of a small kernel's compile time. CUDA has none of them (NVRTC rejects
// them), so their header's guard is set first and it is never read.
#ifndef _GLIBCXX_BITS_SPECFUN_H
#define _GLIBCXX_BITS_SPECFUN_H 1
#endif

#include <assert.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
// for a moment; LC_ASLEEP: in __nanosleep, for a moment).
enum { LC_RUNNABLE, LC_AT_BLOCK, LC_AT_WARP, LC_AT_ACTIVE, LC_DONE, LC_WOKEN, LC_ASLEEP };
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
  // (and where: its call site, __lc_site)
  unsigned char wop, wwidth;
  unsigned warg, wmask, wsite;
  unsigned long long wval, wres;
};

struct __lc_block;
typedef void (*__lc_thread_fn)(__lc_block *);

struct __lc_block {
  // first: a fiber's stack starts by calling it (sim_runtime_impl.h's
  // __lc_fiber_start reads it at offset 0)
  __lc_thread_fn run;      // runs the kernel for the current thread, then its exit
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
  const void *args;        // the unpacked arguments, for run
  jmp_buf abort;           // unwinds the block on an error
};

// The runtime's functions that are neither templates nor inline are
// defined in sim_runtime_impl.h, compiled once into an object that every
// module links (src/backend/sim/pch.c), or into the module itself where
// there is no such object: declared here, hidden in the module. The state
// they share with the kernels is __thread (not thread_local: no wrapper
// function on every use), one copy per module and worker, in the module's
// own TLS block (local-dynamic: the default for an extern, global-dynamic,
// calls __tls_get_addr at each use).
#define LC_RT extern __attribute__((visibility("hidden")))
#define LC_RT_TLS LC_RT __thread __attribute__((tls_model("local-dynamic")))
LC_RT_TLS __lc_block *__lc_current;
LC_RT_TLS __lc_fiber __lc_fibers[LC_MAX_BLOCK_THREADS];   // one per thread
LC_RT_TLS uint3 __lc_rt_blockIdx;    // blockIdx and blockDim, for that object
LC_RT_TLS dim3 __lc_rt_blockDim;
// The kernels' own: internal to the kernel's translation unit, so that the
// block loop keeps threadIdx in registers and stores it only where a call
// could read it (an extern made every thread of saxpy store it through a
// __tls_get_addr call: 3 to 4 times slower).
static thread_local uint3 __lc_threadIdx, __lc_blockIdx;
static thread_local dim3 __lc_blockDim, __lc_gridDim;

#define threadIdx __lc_threadIdx
#define blockIdx __lc_blockIdx
#define blockDim __lc_blockDim
#define gridDim __lc_gridDim

static inline uint3 __lc_tid_of(unsigned t) {
  unsigned bx = __lc_rt_blockDim.x, by = __lc_rt_blockDim.y;
  return uint3{t % bx, (t / bx) % by, t / (bx * by)};
}

LC_RT void __lc_vmessage(__lc_block *b, const char *fmt, va_list ap);

// ---- context switch -----------------------------------------------------
// __lc_jump(save, to) saves the running context in *save and resumes the
// one saved in to. A context is a stack pointer; the stack holds the frame
// pointer and the address to resume at. x86-64 does it inline, without
// call/ret: every thread of a block resumes at the same few places, which
// an indirect jump predicts well and a return mispredicts at every switch.
// A new fiber's stack resumes at __lc_fiber_start with its argument.
extern "C" void __lc_fiber_start(void);
extern "C" __attribute__((noreturn, visibility("hidden"))) void __lc_fiber_main(__lc_block *b);
// A fresh stack for a fiber that starts at arg->run(arg) (x86-64), or
// __lc_fiber_main(arg), which calls it.
LC_RT void *__lc_stack_init(void *base, size_t size, void *arg);

#if defined(__x86_64__)
// Resume the context in register operand `to`: its stack holds the frame
// pointer and the address to resume at. The second half of __lc_jump, and
// the whole of a returned fiber's exit (__lc_fiber_exit), which saves
// nothing.
#define LC_ASM_RESUME_ "movq %[to], %%rsp\n\t" \
                      "popq %%rbp\n\t"        \
                      "popq %%rax\n\t"        \
                      "jmp *%%rax"
__attribute__((always_inline)) static inline void __lc_jump(void **save, void *to) {
  // the compiler saves whatever is live in the clobbered registers; rbp is
  // pushed by hand, and the red zone below rsp is stepped over
  __asm__ volatile("leaq -128(%%rsp), %%rsp\n\t"
                   "leaq 1f(%%rip), %%rax\n\t"
                   "pushq %%rax\n\t"
                   "pushq %%rbp\n\t"
                   "movq %%rsp, (%[save])\n\t"
                   LC_ASM_RESUME_ "\n"
                   "1:\n\t"
                   "leaq 128(%%rsp), %%rsp\n\t"
                   : [save] "+D"(save), [to] "+S"(to)
                   :
                   : "rax", "rbx", "rcx", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
                     "r15", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                     "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
                     "memory", "cc");
}

#elif defined(__aarch64__)
// aarch64: an out-of-line switch saving the callee-saved registers.
extern "C" void __lc_switch(void **save, void *to);
static inline void __lc_jump(void **save, void *to) { __lc_switch(save, to); }

#else
// Elsewhere: one ucontext per fiber, kept at the top of its stack.
#include <ucontext.h>
static inline void __lc_jump(void **save, void *to) {
  ucontext_t here;
  *save = &here;
  swapcontext(&here, (ucontext_t *)to);
}
#endif

// Describe thread t as "(x, y, z)".
LC_RT const char *__lc_thread_name(unsigned t, char *buf, size_t n);

// Record an error and unwind the block: from the worker's own stack at
// once, from a fiber by resuming the worker's stack (thread b->host's
// context), which then unwinds.
__attribute__((noreturn, format(printf, 1, 2)))
LC_RT void __lc_fail(const char *fmt, ...);

// __trap() and a failed assert end the launch with an error naming the
// thread, as on a GPU (where they are launch failures). An <assert.h>
// included again by the kernel source restores the C library's assert,
// whose abort() is caught as a fault (sim/fault.c).
__attribute__((noinline, cold, noreturn))
LC_RT void __lc_assert_fail(const char *expr, const char *file, int line);
__attribute__((noinline, cold, noreturn))
LC_RT void __trap();
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
// lanes past a partial last warp never ran, so they count as exited.
// Convergence: a warp's calls complete only once no lane of the warp can
// run (each waits at a warp function, a barrier, __activemask, or
// returned); then the lanes waiting at one call site (file and line, of
// the warp function's call) whose masks are complete are converged, and
// run that call together as a GPU's converged lanes run one instruction:
// a shuffle reads the value of any of them, in its own mask or not (two
// half warps under complementary masks, say). A source lane that returned,
// that the block lacks, or that is not at that call (another branch's) is
// undefined in CUDA; here it gives the poison LC_POISON, as the fake
// driver does. __activemask() is the lanes waiting in __activemask at its
// call site once no thread of the block can run. Misuse CUDA leaves
// undefined is an error naming the thread: a mask without the caller's own
// lane, a shuffle width that is not a power of 2 from 1 to 32, lanes of one
// mask at different warp functions, lanes at one call site whose masks
// disagree (one names the other, which has another mask), a mask whose
// lanes wait elsewhere for good.

// what a source lane that does not execute a shuffle gives (the bytes the
// fake driver's fresh registers hold, spec/fake/ptx/exec.c)
#define LC_POISON 0xa5a5a5a5a5a5a5a5ull

// A warp function's call site, from its two last parameters, defaulted to
// the caller's file and line: bit 31 set, so that it is never 0.
#define LC_SITE_ARGS const char *lc_file = __builtin_FILE(), unsigned lc_line = __builtin_LINE()
#define LC_SITE lc_file, lc_line
static inline unsigned __lc_site(const char *file, unsigned line) {
  return ((unsigned)(uintptr_t)file ^ line * 2654435761u) | 1u << 31;
}

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
LC_RT void __lc_warp_width(int op, int width);

__attribute__((noinline, cold, noreturn))
LC_RT void __lc_warp_mask(int op, unsigned mask);

// Complete the calls of warp w whose masks are complete, when no lane of
// w can run (see "Convergence" above); whether any did. Called when a lane
// of w stops running: at a warp function, a barrier, __activemask, its end.
__attribute__((noinline))
LC_RT bool __lc_warp_settle(__lc_block *b, unsigned w);

// Nothing can run, and threads wait in __activemask or coalesced_threads():
// each gets the lanes of its warp that wait at its call site (warg), now
// that they all have either returned or stopped at a barrier: a divergent
// branch's lanes, as on a GPU. Whether any did.
__attribute__((noinline, cold))
LC_RT bool __lc_wake_active(__lc_block *b);

// No thread can run: name a warp function that waits, with the lanes it
// waits for, or else the thread that yielded.
__attribute__((noinline, cold, noreturn))
LC_RT void __lc_stuck(unsigned me);

// The next thread after me (in a circle) that can run, or me when no other
// can: a loop without calls, which both exits and __lc_next share, so that
// __lc_fiber_exit keeps no register across one.
__attribute__((always_inline)) static inline unsigned __lc_next_runnable(const __lc_block *b,
                                                                         unsigned me) {
  unsigned n = b->nthreads, u = me;
  do u = u + 1 == n ? 0 : u + 1;
  while (u != me && b->f[u].state != LC_RUNNABLE);
  return u;
}

// The thread to run after thread me (whose state is already set): the next
// that can run, me itself, or, with all returned, thread host (the
// worker's stack, which finishes the block). With none able to run, the
// threads that wait in __activemask wake, or the block is stuck.
__attribute__((always_inline)) static inline unsigned __lc_next(__lc_block *b, unsigned me) {
  unsigned u;
  while ((u = __lc_next_runnable(b, me)) == me && b->f[me].state != LC_RUNNABLE) {
    if (b->done == b->nthreads) return b->host;   // all returned
    if (!__lc_wake_active(b)) __lc_stuck(me);
  }
  return u;
}

__attribute__((always_inline)) static inline void __lc_yield(__lc_block *b, unsigned me) {
  unsigned u = __lc_next(b, me);
  if (u == me) return;
  b->cur = u;
  __lc_jump(&b->f[me].sp, b->f[u].sp);
  // resumed: the thread sets its own index (threadIdx is the kernel's
  // translation unit's, which is where every thread that comes back is)
  __lc_threadIdx = b->f[me].tid;
  // resumed: an error found elsewhere unwinds from the worker's stack
  if (b->failed && me == b->host) longjmp(b->abort, 1);
}

// Thread me returned: count it, and mark its lane gone from its warp.
__attribute__((always_inline)) static inline void __lc_returned(__lc_block *b, unsigned me) {
  b->f[me].state = LC_DONE;
  b->done++;
  b->warp_gone[me / warpSize] |= 1u << (me % warpSize);
}

// Thread me returned: let a warp that waits for it go on, and hand over.
LC_RT void __lc_thread_exit(__lc_block *b, unsigned me);

// Nothing can run, and threads wait in __activemask: the general switch,
// out of line, so that __lc_fiber_exit keeps no register across a call.
__attribute__((noinline, cold, noreturn)) static inline void __lc_fiber_stall(__lc_block *b, unsigned me) {
  __lc_yield(b, me);
  __builtin_unreachable();
}

// A fiber's thread returned (never the host's: its exit returns). The
// usual case, no barrier or warp waiting for it, is __lc_thread_exit's,
// inline and without a frame (of the same pieces: __lc_returned, and
// __lc_next's loop): its context is not saved (it never resumes), so
// nothing is written to its stack, whose lines near the top have not been
// touched since the thread started (a write miss each, per thread, for
// kernels whose frame is deeper than the exit's).
__attribute__((always_inline, noreturn)) static inline void __lc_fiber_exit(__lc_block *b) {
  unsigned me = b->cur;
#if defined(__x86_64__)
  if (__builtin_expect(b->at_block == 0 && b->warp_wait[me / warpSize] == 0, 1)) {
    __lc_returned(b, me);
    unsigned u = __lc_next_runnable(b, me);
    if (u == me) {              // none can run: all returned, or __lc_next's case
      if (__builtin_expect(b->done != b->nthreads, 0)) __lc_fiber_stall(b, me);
      u = b->host;
    }
    b->cur = u;
    void *to = b->f[u].sp;
    __asm__ volatile(LC_ASM_RESUME_ : : [to] "r"(to) : "memory");
    __builtin_unreachable();
  }
#endif
  __lc_thread_exit(b, me);      // never returns to a fiber
  __builtin_unreachable();
}
#undef LC_ASM_RESUME_

// Turn a plain-loop block into fibers at its first barrier or warp
// function. The loop ran threads 0..cur-1 to their end: they have
// returned, and thread cur stays on the worker's stack.
LC_RT void __lc_to_fibers(__lc_block *b);

// The cold ends of a barrier: errors, and the switch to fibers.
__attribute__((noinline, cold, noreturn))
LC_RT void __lc_barrier_after_return(unsigned me);

// A block barrier first reached by a thread after thread 0 can never
// complete: the threads before it returned without reaching it.
__attribute__((noinline, cold))
LC_RT void __lc_first_barrier(__lc_block *b, bool block);

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
    if (__builtin_expect(b->warp_wait[me / warpSize] != 0, 0)) __lc_warp_settle(b, me / warpSize);
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
// (source lane, delta, lane mask) and shuffle width (0 for the others), at
// a call site; the result computed for it.
static inline unsigned long long __lc_warp_op(int op, unsigned mask, unsigned long long v,
                                              unsigned arg, int width, LC_SITE_ARGS) {
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
  f->wsite = __lc_site(LC_SITE);
  f->state = LC_AT_WARP;
  b->warp_wait[w] |= bit;
  // while a lane of the warp can run, its calls wait for it: the usual case
  // for all but the last lane to arrive, told here without a call
  unsigned lanes = __lc_warp_lanes(b, w), idle = (b->warp_wait[w] | b->warp_gone[w]) & lanes;
  if (idle == lanes || b->f[w * warpSize + __builtin_ctz(lanes & ~idle)].state != LC_RUNNABLE)
    __lc_warp_settle(b, w);
  if (f->state != LC_RUNNABLE) __lc_yield(b, me);
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

static inline void __syncwarp(unsigned mask = 0xffffffffu, LC_SITE_ARGS) {
  __lc_warp_op(LC_W_SYNC, mask, 0, 0, 0, LC_SITE);
}

// the lanes of the caller's warp waiting at this call site (site, of
// __lc_site), once every lane of the block has returned or stopped at a
// barrier: the lanes converged there
static inline unsigned __lc_active_at(unsigned site) {
  __lc_block *b = __lc_current;
  if (__builtin_expect(!b->fibers, 0)) __lc_first_barrier(b, false);
  unsigned me = b->cur;
  b->f[me].warg = site;
  b->f[me].state = LC_AT_ACTIVE;
  if (__builtin_expect(b->warp_wait[me / warpSize] != 0, 0)) __lc_warp_settle(b, me / warpSize);
  __lc_yield(b, me);
  return (unsigned)b->f[me].wres;
}
static inline unsigned __activemask(LC_SITE_ARGS) { return __lc_active_at(__lc_site(LC_SITE)); }

static inline unsigned __ballot_sync(unsigned mask, int p, LC_SITE_ARGS) {
  return (unsigned)__lc_warp_op(LC_W_BALLOT, mask, p != 0, 0, 0, LC_SITE);
}
static inline int __any_sync(unsigned mask, int p, LC_SITE_ARGS) {
  return (int)__lc_warp_op(LC_W_ANY, mask, p != 0, 0, 0, LC_SITE);
}
static inline int __all_sync(unsigned mask, int p, LC_SITE_ARGS) {
  return (int)__lc_warp_op(LC_W_ALL, mask, p != 0, 0, 0, LC_SITE);
}

// the shuffles of a type, on its bits (cuda_fp16.h's half types too)
#define LC_WARP_SHFL_T_(T)                                                                    \
  static inline T __shfl_sync(unsigned mask, T v, int src, int width = warpSize, LC_SITE_ARGS) { \
    return __lc_from_bits<T>(__lc_warp_op(LC_W_SHFL, mask, __lc_bits(v), (unsigned)src, width, LC_SITE)); \
  }                                                                                           \
  static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = warpSize,    \
                                 LC_SITE_ARGS) {                                              \
    return __lc_from_bits<T>(__lc_warp_op(LC_W_SHFL_UP, mask, __lc_bits(v), delta, width, LC_SITE)); \
  }                                                                                           \
  static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = warpSize,  \
                                   LC_SITE_ARGS) {                                            \
    return __lc_from_bits<T>(__lc_warp_op(LC_W_SHFL_DOWN, mask, __lc_bits(v), delta, width, LC_SITE)); \
  }                                                                                           \
  static inline T __shfl_xor_sync(unsigned mask, T v, int lanes, int width = warpSize,        \
                                  LC_SITE_ARGS) {                                             \
    return __lc_from_bits<T>(__lc_warp_op(LC_W_SHFL_XOR, mask, __lc_bits(v), (unsigned)lanes, width, LC_SITE)); \
  }
#define LC_WARP_T_(T)                                                                         \
  LC_WARP_SHFL_T_(T)                                                                          \
  static inline unsigned __match_any_sync(unsigned mask, T v, LC_SITE_ARGS) {                \
    return (unsigned)__lc_warp_op(LC_W_MATCH_ANY, mask, __lc_bits(v), 0, 0, LC_SITE);         \
  }                                                                                           \
  static inline unsigned __match_all_sync(unsigned mask, T v, int *pred, LC_SITE_ARGS) {      \
    unsigned long long r = __lc_warp_op(LC_W_MATCH_ALL, mask, __lc_bits(v), 0, 0, LC_SITE);   \
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

static inline unsigned __reduce_add_sync(unsigned mask, unsigned v, LC_SITE_ARGS) {
  return (unsigned)__lc_warp_op(LC_W_ADD, mask, v, 0, 0, LC_SITE);
}
static inline int __reduce_add_sync(unsigned mask, int v, LC_SITE_ARGS) {
  return (int)(unsigned)__lc_warp_op(LC_W_ADD, mask, (unsigned)v, 0, 0, LC_SITE);
}
static inline unsigned __reduce_min_sync(unsigned mask, unsigned v, LC_SITE_ARGS) {
  return (unsigned)__lc_warp_op(LC_W_MIN, mask, v, 0, 0, LC_SITE);
}
static inline int __reduce_min_sync(unsigned mask, int v, LC_SITE_ARGS) {
  return (int)(unsigned)__lc_warp_op(LC_W_IMIN, mask, (unsigned)v, 0, 0, LC_SITE);
}
static inline unsigned __reduce_max_sync(unsigned mask, unsigned v, LC_SITE_ARGS) {
  return (unsigned)__lc_warp_op(LC_W_MAX, mask, v, 0, 0, LC_SITE);
}
static inline int __reduce_max_sync(unsigned mask, int v, LC_SITE_ARGS) {
  return (int)(unsigned)__lc_warp_op(LC_W_IMAX, mask, (unsigned)v, 0, 0, LC_SITE);
}
static inline unsigned __reduce_and_sync(unsigned mask, unsigned v, LC_SITE_ARGS) {
  return (unsigned)__lc_warp_op(LC_W_AND, mask, v, 0, 0, LC_SITE);
}
static inline unsigned __reduce_or_sync(unsigned mask, unsigned v, LC_SITE_ARGS) {
  return (unsigned)__lc_warp_op(LC_W_OR, mask, v, 0, 0, LC_SITE);
}
static inline unsigned __reduce_xor_sync(unsigned mask, unsigned v, LC_SITE_ARGS) {
  return (unsigned)__lc_warp_op(LC_W_XOR, mask, v, 0, 0, LC_SITE);
}
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
LC_RT void __lc_grid_invalid(const char *what = "sync");

// A grid barrier (cooperative launches): inline, so that the barrier's
// switches are the kernel's translation unit's, where threadIdx is.
static inline void __lc_grid_sync() {
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

// Strict memory checking's misaligned accesses (src/backend/sim/compile.c):
// -fsanitize=alignment's handler is the runtime's, hidden in the module;
// atomics, which it does not see, check their own address.
__asm__(".hidden __ubsan_handle_type_mismatch_v1");
__attribute__((noinline, cold, noreturn))
LC_RT void __lc_misaligned_atomic(const char *fn, const void *addr, unsigned size);
#ifdef LC_SIM_ALIGNED
#define LC_ATOMIC_ALIGNED_(p)                                                               \
  if (__builtin_expect((uintptr_t)(p) % sizeof *(p) != 0, 0))                                \
    __lc_misaligned_atomic(__func__, p, sizeof *(p))
#else
#define LC_ATOMIC_ALIGNED_(p) (void)0
#endif

// atomics: blocks run on several OS threads at once, so they are real ones.
// CUDA's overloads and no others (user code defines atomicAdd for long long
// itself), each also as name_block and name_system.
#define LC_ATOMIC_ADD_(S, T)                                                                \
  static inline T atomicAdd##S(T *p, T v) {                                                 \
    LC_ATOMIC_ALIGNED_(p);                                                                  \
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);                                      \
  }
#define LC_ATOMIC_SUB_(S, T)                                                                \
  static inline T atomicSub##S(T *p, T v) {                                                 \
    LC_ATOMIC_ALIGNED_(p);                                                                  \
    return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);                                      \
  }
#define LC_ATOMIC_EXCH_(S, T)                                                               \
  static inline T atomicExch##S(T *p, T v) {                                                \
    LC_ATOMIC_ALIGNED_(p);                                                                  \
    return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);                                     \
  }
#define LC_ATOMIC_CAS_(S, T)                                                                \
  static inline T atomicCAS##S(T *p, T cmp, T v) {                                          \
    LC_ATOMIC_ALIGNED_(p);                                                                  \
    __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);     \
    return cmp;                                                                             \
  }
#define LC_ATOMIC_BITS_(S, T)                                                               \
  static inline T atomicAnd##S(T *p, T v) {                                                 \
    LC_ATOMIC_ALIGNED_(p);                                                                  \
    return __atomic_fetch_and(p, v, __ATOMIC_RELAXED);                                      \
  }                                                                                         \
  static inline T atomicOr##S(T *p, T v) {                                                  \
    LC_ATOMIC_ALIGNED_(p);                                                                  \
    return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);                                       \
  }                                                                                         \
  static inline T atomicXor##S(T *p, T v) {                                                 \
    LC_ATOMIC_ALIGNED_(p);                                                                  \
    return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED);                                      \
  }
#define LC_ATOMIC_MINMAX_(S, T)                                                             \
  static inline T atomicMin##S(T *p, T v) {                                                 \
    LC_ATOMIC_ALIGNED_(p);                                                                  \
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                           \
    while (v < old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {} \
    return old;                                                                             \
  }                                                                                         \
  static inline T atomicMax##S(T *p, T v) {                                                 \
    LC_ATOMIC_ALIGNED_(p);                                                                  \
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                           \
    while (v > old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {} \
    return old;                                                                             \
  }
// floats: compare-and-swap on the bit pattern
#define LC_ATOMIC_FADD_(S, T, U)                                                            \
  static inline T atomicAdd##S(T *p, T v) {                                                 \
    LC_ATOMIC_ALIGNED_(p);                                                                  \
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
    LC_ATOMIC_ALIGNED_(p);                                                                  \
    unsigned old = __atomic_load_n(p, __ATOMIC_RELAXED), nw;                                \
    do nw = old >= v ? 0 : old + 1;                                                         \
    while (!__atomic_compare_exchange_n(p, &old, nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)); \
    return old;                                                                             \
  }                                                                                         \
  static inline unsigned atomicDec##S(unsigned *p, unsigned v) {                            \
    LC_ATOMIC_ALIGNED_(p);                                                                  \
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
#undef LC_ATOMIC_ALIGNED_

// the math API and the other intrinsics: kernels/sim_math.h

// ---- running a kernel ---------------------------------------------------
template <typename T>
using __lc_arg_t = typename std::remove_cv<typename std::remove_reference<T>::type>::type;

// A block's copy of its kernel's arguments, and the call of K with them.
// Not std::tuple and std::apply: their machinery is instantiated anew for
// every kernel, a tenth of a small kernel's compile time.
template <size_t I, typename T>
struct __lc_slot {
  T v;
};
template <typename S, typename... T>
struct __lc_pack;
template <size_t... I, typename... T>
struct __lc_pack<std::index_sequence<I...>, T...> : __lc_slot<I, T>... {
  template <auto K>
  __attribute__((always_inline)) void call() const { K(__lc_slot<I, T>::v...); }
};

// A fiber's whole life, from the first frame on its stack (x86-64: no
// __lc_fiber_main frame above it, so K's frame starts where a tail call
// from there put it) to its exit, from here rather than after a return: a
// kernel with arguments passed in memory (Array<T, N>, 24 bytes and more)
// has their copy in this frame, and returning through it read a stack line
// untouched since the thread started, a cache miss per thread.
template <auto K, typename Pack>
__attribute__((noreturn)) static void __lc_run_thread(__lc_block *b) {
  __lc_threadIdx = b->f[b->cur].tid;     // a fiber's first run
  static_cast<const Pack *>(b->args)->template call<K>();
  __lc_fiber_exit(b);
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
  using Pack = __lc_pack<std::index_sequence<I...>, __lc_arg_t<P>...>;
  const Pack args{{*static_cast<__lc_arg_t<P> *>(l->args[I])}...};
  __lc_block b;
  memset(&b, 0, sizeof b);
  b.launch = l;
  b.worker = w;
  b.nthreads = l->block.x * l->block.y * l->block.z;
  b.run = __lc_run_thread<K, Pack>;
  b.args = &args;
  __lc_current = &b;
  w->thread = &b.cur;
  __lc_bind_shared();
  __lc_blockIdx = uint3{bid.x, bid.y, bid.z};
  __lc_blockDim = dim3(l->block.x, l->block.y, l->block.z);
  __lc_gridDim = dim3(l->grid.x, l->grid.y, l->grid.z);
  __lc_rt_blockIdx = __lc_blockIdx;
  __lc_rt_blockDim = __lc_blockDim;
  if (setjmp(b.abort)) return -1;
  const unsigned bx = l->block.x, by = l->block.y, bz = l->block.z;
  unsigned t = 0;
  for (unsigned z = 0; z < bz; z++)
    for (unsigned y = 0; y < by; y++)
      for (unsigned x = 0; x < bx; x++, t++) {
        b.cur = t;
        __lc_threadIdx = uint3{x, y, z};
        args.template call<K>();
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
// block loop); only these entry points are exported. Their parameters
// have reserved names: a kernel may be called l, w or b.
#define LC_SIM_EXPORT extern "C" __attribute__((visibility("default")))
#define LC_SIM_KERNEL(K)                                                                  \
  LC_SIM_EXPORT int __lc_block_##K(const lc_sim_launch *__lc_l, lc_sim_worker *__lc_w,   \
                                    lc_sim_dim __lc_b) {                                  \
    return __lc_run_block<K>(K, std::make_index_sequence<__lc_arity(K)>(), __lc_l, __lc_w, \
                             __lc_b);                                                     \
  }                                                                                       \
  LC_SIM_EXPORT const long long *const __lc_sizes_##K = __lc_sizes_of(K);
// The kernel a name expression names (sim_abi.h): its value, a pointer to
// one __global__ function (a template's instantiation, one overload), is
// the K of an entry point of its own.
#define LC_SIM_NAMED(I, ...)                                  \
  static constexpr auto __lc_named_##I = __VA_ARGS__;         \
  LC_SIM_KERNEL(__lc_named_##I)

#endif  // LUACUDA_SIM_RUNTIME_H
