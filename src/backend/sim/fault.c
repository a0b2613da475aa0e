/*
** fault: faults inside simulated kernels. A kernel that touches memory
** it does not own, divides an integer by zero, traps or aborts raises a
** signal on the worker thread running it. While a worker runs kernel code
** (its lc_sim_fault is armed) the handler records the signal and jumps
** back to the worker's block loop, which reports it as that launch's
** failure; a signal anywhere else goes to the handler that was there
** before, or gets its default action, as if luacuda were not loaded.
**
** The handler runs on an alternate stack of the worker's own, so a fiber
** whose stack overflowed into its guard page can still be reported. The
** watchdog (pool.c) stops a kernel that runs too long the same way,
** with LC_SIM_STOP_SIGNAL sent to the worker.
*/
#define _GNU_SOURCE       /* sigaltstack, SA_ONSTACK, MAP_ANONYMOUS, REG_RIP, dladdr */
#include "sim.h"

#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

static const int caught[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, LC_SIM_STOP_SIGNAL};
#define NCAUGHT (sizeof caught / sizeof caught[0])
static struct sigaction previous[NCAUGHT];

/* The registered workers, a list each adds itself to (workers live as
** long as the process, so none leaves it): as long as the pool can make
** workers, with no count of its own to fall short of the pool's (a
** cooperative launch starts a worker per block). The handler finds its own
** by thread id (no thread-local storage: a dlopen'ed module's TLS may be
** allocated lazily, which a signal handler must not do). */
static lc_sim_fault *_Atomic registered;

static lc_sim_fault *current(void) {
  pthread_t self = pthread_self();
  for (lc_sim_fault *f = atomic_load(&registered); f; f = f->next)
    if (pthread_equal(f->self, self)) return f;
  return NULL;
}

/* Hand the signal on as if we had never installed a handler. */
static void chain(int sig, siginfo_t *si, void *uc) {
  const struct sigaction *old = NULL;
  for (size_t i = 0; i < NCAUGHT; i++)
    if (caught[i] == sig) old = &previous[i];
  if (old == NULL) return;
  if (old->sa_flags & SA_SIGINFO) {
    if (old->sa_sigaction) old->sa_sigaction(sig, si, uc);
    return;
  }
  if (old->sa_handler == SIG_IGN) return;
  if (old->sa_handler != SIG_DFL) {
    old->sa_handler(sig);
    return;
  }
  if (sig == LC_SIM_STOP_SIGNAL) return;      /* its default is to ignore it */
  /* the default action: reinstate it and re-raise; the signal stays
  ** blocked until this handler returns, then ends the process as usual */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, NULL);
  raise(sig);
}

/* Where the interrupted code was; 0 where this machine's context is not
** known here. */
static uintptr_t interrupted_pc(const void *uc) {
#if defined(__x86_64__)
  return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.pc;
#else
  (void)uc;
  return 0;
#endif
}

/* A signed division whose quotient does not fit, INT_MIN / -1 (and
** INT64_MIN / -1, and the % forms), traps on x86 (#DE, the SIGFPE of a
** division by zero). A GPU has no divide instruction: the compiler's
** sequence wraps, the quotient is the dividend (INT_MIN) and the remainder 0,
** and PTX's div and rem have no trap. So a kernel's faulting idiv whose
** divisor is -1 is finished here as a GPU would: the dividend negated,
** wrapped to the operand's width, in rax (al), the remainder 0 in rdx (ah),
** and the kernel resumes after the instruction. A division by zero stays a
** fault (docs/memcheck.md). Compiling kernels so that no division traps
** would test every divisor, in every kernel; this costs nothing until a
** division overflows. false: not such a division (it is the fault it was). */
#if defined(__x86_64__)
static const int gpr[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI,
                            REG_RDI, REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13,
                            REG_R14, REG_R15};

static bool wrap_division(ucontext_t *uc) {
#ifdef RUNNING_ON_VALGRIND
  /* valgrind's registers at a trap are those at the start of the code it
  ** translated together, not at the idiv: the fault stays a fault there */
  if (RUNNING_ON_VALGRIND) return false;
#endif
  greg_t *g = uc->uc_mcontext.gregs;
  const unsigned char *p = (const unsigned char *)g[REG_RIP];
  bool short_operand = false, fs = false;
  for (;; p++) {                 /* the prefixes an idiv may carry */
    if (*p == 0x66) short_operand = true;
    else if (*p == 0x64) fs = true;                     /* a thread-local divisor */
    else if (*p != 0x2e && *p != 0x3e && *p != 0x26 && *p != 0x36) break;
  }
  unsigned rex = (*p & 0xf0) == 0x40 ? *p++ : 0;
  if (*p != 0xf7 && *p != 0xf6) return false;
  int width = *p++ == 0xf6 ? 1 : (rex & 8) ? 8 : short_operand ? 2 : 4;
  unsigned modrm = *p++, mod = modrm >> 6, rm = modrm & 7;
  if ((modrm >> 3 & 7) != 7) return false;              /* div, not idiv */
  uint64_t v = 0;
  if (mod == 3) {
    unsigned r = rm | (rex & 1) << 3;
    /* without a REX prefix, byte registers 4 to 7 are ah, ch, dh, bh */
    v = width == 1 && rex == 0 && r >= 4 ? (uint64_t)g[gpr[r - 4]] >> 8 : (uint64_t)g[gpr[r]];
  } else {
    uint64_t addr = 0;
    int32_t d32;
    if (rm == 4) {               /* a SIB byte */
      unsigned sib = *p++, index = (sib >> 3 & 7) | (rex & 2) << 2, base = (sib & 7) | (rex & 1) << 3;
      if (index != 4) addr += (uint64_t)g[gpr[index]] << (sib >> 6);
      if ((base & 7) == 5 && mod == 0) {
        memcpy(&d32, p, 4);
        p += 4;
        addr += (uint64_t)(int64_t)d32;
      } else {
        addr += (uint64_t)g[gpr[base]];
      }
    } else if (rm == 5 && mod == 0) {     /* from the next instruction's address */
      memcpy(&d32, p, 4);
      p += 4;
      addr = (uint64_t)(uintptr_t)p + (uint64_t)(int64_t)d32;
    } else {
      addr = (uint64_t)g[gpr[rm | (rex & 1) << 3]];
    }
    if (mod == 1) {
      addr += (uint64_t)(int64_t)(int8_t)*p++;
    } else if (mod == 2) {
      memcpy(&d32, p, 4);
      p += 4;
      addr += (uint64_t)(int64_t)d32;
    }
    if (fs) {                    /* the thread's own block: fs:0 points at itself */
      uint64_t base;
      __asm__("movq %%fs:0, %0" : "=r"(base));
      addr += base;
    }
    memcpy(&v, (const void *)(uintptr_t)addr, (size_t)width);   /* the divide read it */
  }
  uint64_t mask = width == 8 ? ~(uint64_t)0 : ((uint64_t)1 << 8 * width) - 1;
  if ((v & mask) != mask) return false;                 /* the divisor is not -1 */
  uint64_t rax = (uint64_t)g[REG_RAX], rdx = (uint64_t)g[REG_RDX];
  switch (width) {
    case 8: rax = 0 - rax; rdx = 0; break;
    case 4: rax = (uint32_t)(0 - (uint32_t)rax); rdx = 0; break;      /* zero-extended */
    case 2: rax = (rax & ~(uint64_t)0xffff) | ((0 - rax) & 0xffff); rdx &= ~(uint64_t)0xffff; break;
    default: rax = (rax & ~(uint64_t)0xffff) | ((0 - rax) & 0xff); break;   /* ah: 0 */
  }
  g[REG_RAX] = (greg_t)rax;
  g[REG_RDX] = (greg_t)rdx;
  g[REG_RIP] = (greg_t)(uintptr_t)p;
  return true;
}
#else
static bool wrap_division(ucontext_t *uc) {
  (void)uc;
  return false;                  /* AArch64's sdiv does not trap */
}
#endif

/* A stop may end the kernel here: in its module's code, or anywhere when
** that code or the interrupted address is unknown. */
static bool stoppable(const lc_sim_fault *f, const void *uc) {
  uintptr_t pc = interrupted_pc(uc);
  return pc == 0 || f->code_hi == 0 || (pc >= f->code_lo && pc < f->code_hi);
}

/* A fault the kernel's own code raised: the CPU's (a positive si_code), or
** abort() on this thread (an assert); not the same signal sent by kill()
** from elsewhere, which is the host's business. */
static bool raised_here(int sig, const siginfo_t *si) {
  if (sig == SIGABRT) return si->si_code == SI_TKILL && si->si_pid == getpid();
  return si->si_code > 0;
}

/* The stop signal is ours only on a worker the watchdog asked to stop
** (the flag is taken); the same signal from anyone else, a host program
** preempting its threads with SIGURG as Go's runtime does, goes on to the
** handler that was there before, as does a fault signal kill() sent. */
static void on_signal(int sig, siginfo_t *si, void *uc) {
  int saved = errno;
  lc_sim_fault *f = current();
  bool stop = sig == LC_SIM_STOP_SIGNAL && f && f->stop;
  if (stop && f->armed && !stoppable(f, uc)) {
    errno = saved;               /* in the C library: the next request stops it */
    return;
  }
  if (stop) f->stop = 0;
  if (f && f->armed && sig == SIGFPE && si->si_code == FPE_INTDIV && raised_here(sig, si) &&
      wrap_division(uc)) {
    errno = saved;
    return;
  }
  if (f && f->armed && (stop || (sig != LC_SIM_STOP_SIGNAL && raised_here(sig, si)))) {
    f->armed = 0;
    f->signo = sig;
    f->code = si->si_code;
    f->addr = si->si_addr;
    f->pc = interrupted_pc(uc);
    /* read now: the thread's frames are abandoned by the jump */
    const unsigned *t = f->thread_slot ? *f->thread_slot : NULL;
    f->thread = t ? *t : UINT_MAX;
    siglongjmp(f->jump, 1);     /* the mask is not restored: see lc_sim_fault_recover */
  }
  if (!stop) chain(sig, si, uc);
  errno = saved;
}

/* the module's PT_LOAD segment that is executable and holds addr */
typedef struct code_search { uintptr_t addr, lo, hi; } code_search;

static int find_code(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  code_search *s = arg;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && s->addr >= lo && s->addr < hi) {
      s->lo = lo;
      s->hi = hi;
      return 1;
    }
  }
  return 0;
}

void lc_sim_code_range(uintptr_t addr, uintptr_t *lo, uintptr_t *hi) {
  code_search s = {addr, 0, 0};
  dl_iterate_phdr(find_code, &s);
  *lo = s.lo;
  *hi = s.hi;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int install_error;

static void install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  /* the stop signal must not interrupt the handling of a fault */
  sigaddset(&sa.sa_mask, LC_SIM_STOP_SIGNAL);
  for (size_t i = 0; i < NCAUGHT; i++)
    if (sigaction(caught[i], &sa, &previous[i]) != 0) install_error = errno;
}

int lc_sim_fault_thread(lc_sim_fault *f, char *err) {
  pthread_once(&once, install);
  if (install_error) {
    return lc_fail(err, LC_EFAIL, "cannot install the simulator's fault handlers: %s",
                   strerror(install_error));
  }
  /* SIGSTKSZ is not a constant in every libc; the handler needs little */
  size_t size = 64 * 1024;
  if ((size_t)SIGSTKSZ > size) size = (size_t)SIGSTKSZ;
  void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (stack == MAP_FAILED) {
    return lc_fail(err, LC_EFAIL, "cannot make a signal stack: %s", strerror(errno));
  }
  stack_t ss = {.ss_sp = stack, .ss_size = size, .ss_flags = 0};
  if (sigaltstack(&ss, NULL) != 0) {
    lc_errf(err, "cannot set up a signal stack for a worker: %s", strerror(errno));
    munmap(stack, size);
    return LC_EFAIL;
  }
  LC_SIM_STACK((char *)stack, (char *)stack + size);
  f->self = pthread_self();
  f->armed = 0;
  f->stop = 0;
  f->code_lo = f->code_hi = 0;
  f->thread = UINT_MAX;
  /* complete before it is published: the handler may read it at once */
  lc_sim_fault *head = atomic_load(&registered);
  do f->next = head; while (!atomic_compare_exchange_weak(&registered, &head, f));
  return LC_OK;
}

void lc_sim_fault_recover(lc_sim_fault *f) {
  /* siglongjmp left the handler with its signals still blocked */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, f->signo);
  sigaddset(&set, LC_SIM_STOP_SIGNAL);
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

void lc_sim_fault_stop(lc_sim_fault *f) {
  f->stop = 1;
  pthread_kill(f->self, LC_SIM_STOP_SIGNAL);
}

void lc_sim_fault_describe(const lc_sim_fault *f, char *buf, size_t n) {
  switch (f->signo) {
    case SIGSEGV:
    case SIGBUS: {
      /* a non-canonical address faults without one */
      char at[48] = "";
      if (f->addr) snprintf(at, sizeof at, " at address %p", f->addr);
      snprintf(buf, n, "illegal memory access%s (%s; CUDA_ERROR_ILLEGAL_ADDRESS on a GPU)",
               at, f->signo == SIGSEGV ? "SIGSEGV" : "SIGBUS");
      break;
    }
    case SIGFPE:
      snprintf(buf, n, "%s (SIGFPE)",
               f->code == FPE_INTDIV ? "integer division by zero" :
               f->code == FPE_INTOVF ? "integer overflow" : "arithmetic exception");
      break;
    case SIGILL:
      snprintf(buf, n, "illegal instruction, as __builtin_trap() executes (SIGILL; "
               "CUDA_ERROR_ILLEGAL_INSTRUCTION on a GPU)");
      break;
    case SIGABRT:
      snprintf(buf, n, "abort() called, as a failed assert from <assert.h> does (SIGABRT; "
               "CUDA_ERROR_ASSERT on a GPU)");
      break;
    default:
      snprintf(buf, n, "signal %d", f->signo);
  }
}

