/*
** The PTX executor: runs a kernel's blocks on worker threads, each block's
** threads as independent contexts (as on Volta and later GPUs): a thread
** runs until it reaches a barrier, a warp operation, a nanosleep (where it
** lets the others run) or its end; a barrier
** releases once every live thread it names arrived; a warp operation once
** every live lane of its member mask did (a mask may name exited lanes, and
** lanes past a partial last warp, which never ran: NVIDIA's documentation
** waits for the non-exited ones only). Nothing runs in lock step, so
** code that relies on it (a missing __syncwarp) is not rescued either.
**
** Memory is checked as the hardware and a sanitizer would: global accesses
** must fall in a live allocation (asked of the driver, cached per worker),
** shared and local ones inside the block's and the thread's memory, every
** access aligned to its size.
*/
#define _GNU_SOURCE
#include "internal.h"

#include <ctype.h>
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* The stack a thread takes (CU_LIMIT_STACK_SIZE): with a cubin, the frames
** ptxas gave (ptx_entry_set_frames: the kernel's own, each device
** function's as compiled into it, 0 for one it inlined; spec/fake/cubin.c
** reads them). Without one (a PTX-only load, LUACUDA_PTX=1) a guess: a
** frame is its .local variables, and a call's 16 bytes more, for the
** return address (8 bytes, kept 16-aligned). Real frames differ both ways:
** they hold the registers a callee saves (a recursive function's 192 bytes
** on sm_90 where this counts 144), and ptxas may shrink what it inlines.
** The .local variables lie in a thread's local memory as that guess
** places them, whatever the stack counts. */
#define CALL_FRAME_BYTES 16
#define NCACHE 8                       /* allocations a worker remembers */
#define UNDEFINED_BYTE 0xA5            /* what fresh registers, local and shared memory hold */
#define POISON 0xA5A5A5A5A5A5A5A5ull   /* a value that is undefined: of those bytes */

/* GCC's half precision and 128-bit integers, outside ISO C */
__extension__ typedef _Float16 half;
__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 i128;

enum { TS_RUN, TS_BAR, TS_WARP, TS_EXIT };

typedef struct frame { int fn, pc, call; size_t rbase, pbase, lbase, ltop, used; } frame;

typedef struct thr {
  uint64_t *r;                 /* the current frame's registers */
  const uint64_t *mask;        /* their widths, as masks */
  const inst *code;
  int pc, fn;
  unsigned char *param;        /* the current frame's .param area */
  size_t lbase;                /* its .local area, in the thread's local memory */
  int state, depth, fcap;
  frame *frames;               /* fcap of them, grown as calls go deeper */
  uint64_t *rstack;
  size_t rtop, rcap;
  unsigned char *pstack;
  size_t ptop, pcap, ltop;
  size_t used;                 /* the stack its frames take (ltop without a cubin) */
  unsigned tid[3], lane, warp, linear;
  bool carry;
  /* waiting at a barrier or a warp operation */
  const inst *wait;
  uint64_t val, b, c;
  uint32_t mask32;
  int bar;
} thr;

typedef struct launch launch;

typedef struct blk {
  launch *L;
  thr *t;
  int n;
  unsigned ctaid[3];
  unsigned char *shared;
  size_t shared_size;
  unsigned char *local;        /* n * L->stride, mapped on demand */
  uint64_t lo[NCACHE], hi[NCACHE];
  int cache_next;
  int smid;
  int *order;                  /* the order its threads run in this round */
  uint64_t rng;                /* and what shuffles it (sched_seed's) */
  bool stop;
  unsigned long long icount;
  struct { unsigned arrived, expected; uint32_t popc; bool and_, or_; } bars[16];
} blk;

struct launch {
  ptx_module *m;
  func *entry;
  ptx_dims grid, block;
  size_t dynamic_shared;
  const unsigned char *params;
  const ptx_host *host;
  bool has_local;
  size_t stack;                /* each thread's stack (CU_LIMIT_STACK_SIZE), in bytes */
  size_t stride;               /* each thread's local memory (stack, or more with a cubin) */
  uint64_t seed;               /* this launch's scheduling seed; 0: threads in order */
  atomic_ullong next;
  atomic_int err;
  pthread_mutex_t mu;
  char *msg;
  size_t msglen;
  unsigned long long nblocks;
  bool cooperative;
  /* a cooperative launch's grid workspace, where %envreg1 (high) and
  ** %envreg2 (low) point: its size, then the barrier word that
  ** this_grid().sync() counts arrivals in */
  uint32_t gridws[2];
};

static atomic_ullong executed;
static atomic_ullong launches;

/* splitmix64: a seed's stream of well mixed 64-bit values */
static uint64_t mix(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

/* The order a block's threads run in is not the hardware's business to
** promise: FAKE_CUDA_SCHED_SEED=N (N > 0) shuffles it afresh in every
** round of every block of every launch (launch k of the process takes
** N mixed with k, so a run replays), and a kernel that misses a
** __syncthreads gives a wrong result under some seed. 0 or unset: in
** order (thread 0 first), as before. */
static uint64_t sched_seed(void) {
  const char *s = getenv("FAKE_CUDA_SCHED_SEED");
  uint64_t n = s ? strtoull(s, NULL, 10) : 0;
  if (n == 0) return 0;
  uint64_t x = n ^ (atomic_fetch_add(&launches, 1) * 0xD1B54A32D192ED03u);
  uint64_t r = mix(&x);
  return r ? r : 1;
}

static void shuffle_order(blk *b) {
  for (int i = 0; i < b->n; i++) b->order[i] = i;
  if (b->L->seed == 0) return;
  for (int i = b->n - 1; i > 0; i--) {
    int j = (int)(mix(&b->rng) % (uint64_t)(i + 1));
    int t = b->order[i];
    b->order[i] = b->order[j];
    b->order[j] = t;
  }
}
unsigned long long ptx_instructions(void) { return atomic_load(&executed); }

static pthread_mutex_t print_mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- errors ------------------------------------------------------------------- */

static void fault(blk *b, thr *t, int code, const char *fmt, ...) {
  launch *L = b->L;
  b->stop = true;
  if (t) t->state = TS_EXIT;
  pthread_mutex_lock(&L->mu);
  if (atomic_load(&L->err) == PTX_OK) {
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const inst *in = t ? &t->code[t->pc] : NULL;
    if (t)
      snprintf(L->msg, L->msglen, "%s: %s (PTX line %d of %s, block (%u,%u,%u), thread (%u,%u,%u))",
               L->entry->name, what, in->line, L->m->fns[t->fn].name, b->ctaid[0], b->ctaid[1],
               b->ctaid[2], t->tid[0], t->tid[1], t->tid[2]);
    else
      snprintf(L->msg, L->msglen, "%s: %s (block (%u,%u,%u))", L->entry->name, what, b->ctaid[0],
               b->ctaid[1], b->ctaid[2]);
    atomic_store(&L->err, code);
  }
  pthread_mutex_unlock(&L->mu);
}

/* ---- values ------------------------------------------------------------------------ */

static inline uint64_t zx(uint64_t v, int bits) { return bits >= 64 ? v : v & ((1ull << bits) - 1); }
static inline int64_t sx(uint64_t v, int bits) {
  return bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
}
static inline float as_f(uint64_t v) { uint32_t u = (uint32_t)v; float f; memcpy(&f, &u, 4); return f; }
static inline double as_d(uint64_t v) { double d; memcpy(&d, &v, 8); return d; }
static inline uint64_t of_f(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline uint64_t of_d(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static inline float h2f(uint64_t v) { half h; uint16_t u = (uint16_t)v; memcpy(&h, &u, 2); return (float)h; }
static inline uint64_t f2h(float f) { half h = (half)f; uint16_t u; memcpy(&u, &h, 2); return u; }
static inline float bf2f(uint64_t v) { return as_f((v & 0xffff) << 16); }
static inline uint64_t f2bf(float f) {
  uint32_t u = (uint32_t)of_f(f);
  if ((u & 0x7fffffff) > 0x7f800000) return (u >> 16) | 0x40;        /* a quiet NaN */
  u += 0x7fff + ((u >> 16) & 1);                                      /* to nearest even */
  return u >> 16;
}

/* Whether the significand of the finite nonzero x ends in a 1. */
static bool odd_ld(long double x) {
  int e;
  long double m = ldexpl(frexpl(x, &e), LDBL_MANT_DIG);
  return fmodl(m, 2) != 0;
}
/* x * y + z for floats, rounded to odd in long double (an inexact result
** ends in a 1): rounding that once more to a format of fewer than
** LDBL_MANT_DIG - 1 bits (half, bfloat16) rounds as the exact value
** would, in every mode. Rounded to nearest only, a sum far below a
** product that lies halfway in the narrow format would be lost, and
** the tie broken the wrong way. */
static long double fma_odd(float x, float y, float z) {
  long double p = (long double)x * y, s = p + z;        /* the product is exact */
  if (!isfinite(s) || p == 0 || z == 0) return s;
  long double bb = s - p, e = (p - (s - bb)) + (z - bb);  /* s + e is exact */
  if (e == 0 || odd_ld(s)) return s;
  return nextafterl(s, e > 0 ? INFINITY : -INFINITY);
}

/* A float value of type t as a long double (exact), and back with rounding. */
static long double fget(ptype t, uint64_t v) {
  if (t.k == K_BF16) return bf2f(v);
  return t.bits == 64 ? as_d(v) : t.bits == 32 ? as_f(v) : h2f(v);
}
static float round_f(long double x, int rnd) {
  float f = (float)x;
  if (isnan(f) || rnd == RND_RN || rnd == RND_NONE || (long double)f == x) return f;
  if (rnd == RND_RZ && fabsl((long double)f) > fabsl(x)) f = nextafterf(f, 0);
  else if (rnd == RND_RM && (long double)f > x) f = nextafterf(f, -INFINITY);
  else if (rnd == RND_RP && (long double)f < x) f = nextafterf(f, INFINITY);
  return f;
}
static double round_d(long double x, int rnd) {
  double d = (double)x;
  if (isnan(d) || rnd == RND_RN || rnd == RND_NONE || (long double)d == x) return d;
  if (rnd == RND_RZ && fabsl((long double)d) > fabsl(x)) d = nextafter(d, 0);
  else if (rnd == RND_RM && (long double)d > x) d = nextafter(d, -INFINITY);
  else if (rnd == RND_RP && (long double)d < x) d = nextafter(d, INFINITY);
  return d;
}
/* x to half precision, rounded once in the direction rnd (through float,
** a directed rounding would be lost: 65520 rounded toward zero is 65504,
** not the infinity that float's 65520 rounds to) */
static uint64_t round_h(long double x, int rnd) {
  half h = (half)x;
  uint16_t u;
  memcpy(&u, &h, 2);
  if (isnan(x) || rnd == RND_RN || rnd == RND_NONE || (long double)h == x) return u;
  long double hv = (long double)h;
  bool up;   /* step to the next half toward +infinity, else toward -infinity */
  if (rnd == RND_RZ && fabsl(hv) > fabsl(x)) up = hv < 0;
  else if (rnd == RND_RM && hv > x) up = false;
  else if (rnd == RND_RP && hv < x) up = true;
  else return u;
  if ((u & 0x7fff) == 0) return up ? 0x0001 : 0x8001;
  return ((u & 0x8000) != 0) == up ? (uint16_t)(u - 1) : (uint16_t)(u + 1);
}

/* x to bfloat16, rounded once in the direction rnd: through float rounded
** to odd (24 bits: enough for a second rounding to 8), then on its bits */
static uint64_t round_bf(long double x, int rnd) {
  if (isnan(x)) return f2bf((float)x);
  float f = round_f(x, RND_RZ);
  uint32_t u = (uint32_t)of_f(f);
  if ((long double)f != x && !isinf(x)) u |= 1;
  uint32_t sign = u & 0x80000000u, mag = u & 0x7fffffffu, q = mag >> 16, lo = mag & 0xffff;
  bool up = rnd == RND_RZ ? false : rnd == RND_RM ? sign && lo : rnd == RND_RP ? !sign && lo
          : lo > 0x8000 || (lo == 0x8000 && (q & 1));
  return (sign >> 16) | (q + up);
}

static uint64_t fput(ptype t, long double x, int rnd, uint16_t flags) {
  /* [+0, 1] and max(x, +0): -0 becomes +0 too (__saturatef's rule) */
  if (flags & F_SAT) x = isnan(x) ? 0 : x <= 0 ? 0 : x > 1 ? 1 : x;
  if (flags & F_RELU) x = isnan(x) ? x : x <= 0 ? 0 : x;
  if (t.k == K_BF16) return round_bf(x, rnd);
  if (t.bits == 64) return of_d(round_d(x, rnd));
  if (t.bits == 32) {
    float f = round_f(x, rnd);
    if ((flags & F_FTZ) && fpclassify(f) == FP_SUBNORMAL) f = copysignf(0, f);
    return of_f(f);
  }
  return round_h(x, rnd);
}
static inline long double ftz_in(ptype t, long double x, uint16_t flags) {
  if ((flags & F_FTZ) && t.bits == 32 && fpclassify((float)x) == FP_SUBNORMAL) return copysignl(0, x);
  return x;
}

/* v, an operand of type t, as .ftz reads it: an f32 subnormal is a zero of its sign */
static inline uint64_t ftz_bits(ptype t, uint64_t v, uint16_t flags) {
  if ((flags & F_FTZ) && t.k == K_F && t.bits == 32 && (v & 0x7f800000u) == 0) return v & 0x80000000u;
  return v;
}

/* ---- addresses --------------------------------------------------------------------- */

static uint64_t sym_addr(blk *b, thr *t, int sym) {
  const var *v = &b->L->m->vars[sym];
  switch (v->space) {
    case SP_GLOBAL: case SP_CONST: return (uint64_t)(uintptr_t)v->addr;
    case SP_SHARED: return v->external ? b->L->entry->shared_bytes_aligned : v->offset;
    case SP_LOCAL: return t->lbase + v->offset;
    case SP_PARAM: return v->offset;
  }
  return 0;
}

static unsigned char *global_mem(blk *b, thr *t, uint64_t a, size_t n) {
  for (int i = 0; i < NCACHE; i++)
    if (a >= b->lo[i] && a + n <= b->hi[i]) return (unsigned char *)(uintptr_t)a;
  uint64_t ws = (uint64_t)(uintptr_t)b->L->gridws;
  if (b->L->cooperative && a >= ws && a + n <= ws + sizeof b->L->gridws && a + n > a)
    return (unsigned char *)(uintptr_t)a;
  uint64_t lo, hi;
  const ptx_host *h = b->L->host;
  if (a + n < a || !h->reach(h->ud, a, n, &lo, &hi)) {
    fault(b, t, PTX_ILLEGAL_ADDRESS, "an access of %zu bytes at 0x%llx, outside every allocation",
          n, (unsigned long long)a);
    return NULL;
  }
  b->lo[b->cache_next] = lo;
  b->hi[b->cache_next] = hi;
  b->cache_next = (b->cache_next + 1) % NCACHE;
  return (unsigned char *)(uintptr_t)a;
}

/* Whether generic address a lies in one of module m's .const variables. */
static bool in_const(const ptx_module *m, uint64_t a) {
  for (int i = 0; i < m->nglobals; i++) {
    const var *v = &m->vars[m->globals[i]];
    uint64_t at = (uint64_t)(uintptr_t)v->addr;
    if (v->space == SP_CONST && v->addr && a >= at && a - at < v->size) return true;
  }
  return false;
}

static unsigned char *local_of(blk *b, thr *t) {
  return b->local + (size_t)t->linear * b->L->stride;
}

/* The host address of n bytes at a in space, checked; NULL after a fault. */
static unsigned char *mem(blk *b, thr *t, int space, uint64_t a, size_t n) {
  if (n > 1 && a % n != 0) {
    fault(b, t, PTX_MISALIGNED, "an access of %zu bytes at 0x%llx, not aligned to its size", n,
          (unsigned long long)a);
    return NULL;
  }
  switch (space) {
    case SP_GENERIC: {
      uint64_t s = (uint64_t)(uintptr_t)b->shared;
      if (b->shared && a >= s && a < s + b->shared_size) { a -= s; goto shared; }
      if (b->local) {
        uint64_t l = (uint64_t)(uintptr_t)b->local;
        if (a >= l && a < l + (uint64_t)b->n * b->L->stride) {
          uint64_t mine = (uint64_t)(uintptr_t)local_of(b, t);
          if (a < mine || a >= mine + b->L->stride) {
            fault(b, t, PTX_ILLEGAL_ADDRESS, "an access at 0x%llx, in another thread's local memory",
                  (unsigned long long)a);
            return NULL;
          }
          a -= mine;
          goto local;
        }
      }
      return global_mem(b, t, a, n);
    }
    case SP_GLOBAL: case SP_CONST:
      return global_mem(b, t, a, n);
    case SP_SHARED:
    shared:
      if (a + n > b->shared_size || a + n < a) {
        fault(b, t, PTX_ILLEGAL_ADDRESS, "a shared access of %zu bytes at offset %llu, past the %zu bytes of the block's shared memory",
              n, (unsigned long long)a, b->shared_size);
        return NULL;
      }
      return b->shared + a;
    case SP_LOCAL:
    local:
      if (a + n > t->ltop || a + n < a) {
        fault(b, t, PTX_ILLEGAL_ADDRESS, "a local access of %zu bytes at offset %llu, past the thread's %zu bytes of local memory",
              n, (unsigned long long)a, t->ltop);
        return NULL;
      }
      return local_of(b, t) + a;
    case SP_PARAM: {
      size_t size = b->L->m->fns[t->fn].param_bytes;
      if (a + n > size || a + n < a) {
        fault(b, t, PTX_ILLEGAL_ADDRESS, "a parameter access of %zu bytes at offset %llu, past %zu",
              n, (unsigned long long)a, size);
        return NULL;
      }
      return t->param + a;
    }
  }
  return NULL;
}

/* ---- special registers ---------------------------------------------------------------- */

static uint64_t now_ns(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t sreg(blk *b, thr *t, int id) {
  launch *L = b->L;
  switch (id) {
    case SR_TID_X: return t->tid[0];
    case SR_TID_Y: return t->tid[1];
    case SR_TID_Z: return t->tid[2];
    case SR_NTID_X: return L->block.x;
    case SR_NTID_Y: return L->block.y;
    case SR_NTID_Z: return L->block.z;
    case SR_CTAID_X: return b->ctaid[0];
    case SR_CTAID_Y: return b->ctaid[1];
    case SR_CTAID_Z: return b->ctaid[2];
    case SR_NCTAID_X: return L->grid.x;
    case SR_NCTAID_Y: return L->grid.y;
    case SR_NCTAID_Z: return L->grid.z;
    case SR_LANEID: return t->lane;
    case SR_WARPID: return t->warp;
    case SR_NWARPID: return 64;
    case SR_SMID: return (unsigned)b->smid;
    case SR_NSMID: return 132;
    case SR_GRIDID: return 1;
    case SR_LANEMASK_EQ: return 1u << t->lane;
    case SR_LANEMASK_LT: return (1u << t->lane) - 1;
    case SR_LANEMASK_LE: return (uint32_t)((2ull << t->lane) - 1);
    case SR_LANEMASK_GT: return (uint32_t)~((2ull << t->lane) - 1);
    case SR_LANEMASK_GE: return (uint32_t)~((1u << t->lane) - 1);
    case SR_CLOCK: return (uint32_t)now_ns(CLOCK_MONOTONIC);
    case SR_CLOCK_HI: return (uint32_t)(now_ns(CLOCK_MONOTONIC) >> 32);
    case SR_CLOCK64: return now_ns(CLOCK_MONOTONIC);
    case SR_GLOBALTIMER: return now_ns(CLOCK_REALTIME);
    case SR_GLOBALTIMER_LO: return (uint32_t)now_ns(CLOCK_REALTIME);
    case SR_GLOBALTIMER_HI: return now_ns(CLOCK_REALTIME) >> 32;
    case SR_DYNAMIC_SMEM: return L->dynamic_shared;
    case SR_TOTAL_SMEM: return b->shared_size;
    case SR_WARPSZ: return 32;
    case SR_CLUSTER_CTARANK: return 0;
    case SR_CLUSTER_NCTARANK: return 1;
    case SR_ENVREG0 + 1: return L->cooperative ? (uint32_t)((uint64_t)(uintptr_t)L->gridws >> 32) : 0;
    case SR_ENVREG0 + 2: return L->cooperative ? (uint32_t)(uintptr_t)L->gridws : 0;
  }
  return 0;
}

static inline uint64_t get(blk *b, thr *t, const operand *o) {
  switch (o->kind) {
    case O_REG: return o->neg ? !(t->r[o->reg] & 1) : t->r[o->reg];
    case O_IMM: return (uint64_t)o->imm;
    case O_SREG: return sreg(b, t, o->reg);
    case O_SYM: return sym_addr(b, t, o->sym) + (uint64_t)o->imm;
    case O_ADDR: return (o->reg >= 0 ? t->r[o->reg] : o->sym >= 0 ? sym_addr(b, t, o->sym) : 0) +
                        (uint64_t)o->imm;
  }
  return 0;
}
static inline void put(thr *t, const operand *o, uint64_t v) {
  if (o->kind == O_REG && o->reg >= 0) t->r[o->reg] = v & t->mask[o->reg];
}
static inline void put_slot(thr *t, int slot, uint64_t v) {
  if (slot >= 0) t->r[slot] = v & t->mask[slot];
}

/* ---- arithmetic --------------------------------------------------------------------- */

static bool compare(int cmp, ptype t, uint64_t a, uint64_t b) {
  if (t.k == K_F || t.k == K_BF16) {
    long double x = fget(t, a), y = fget(t, b);
    bool un = isnan(x) || isnan(y);
    switch (cmp) {
      case CMP_EQ: return !un && x == y;
      case CMP_NE: return !un && x != y;
      case CMP_LT: return !un && x < y;
      case CMP_LE: return !un && x <= y;
      case CMP_GT: return !un && x > y;
      case CMP_GE: return !un && x >= y;
      case CMP_EQU: return un || x == y;
      case CMP_NEU: return un || x != y;
      case CMP_LTU: return un || x < y;
      case CMP_LEU: return un || x <= y;
      case CMP_GTU: return un || x > y;
      case CMP_GEU: return un || x >= y;
      case CMP_NUM: return !un;
      case CMP_NAN: return un;
    }
    return false;
  }
  if (t.k == K_S) {
    int64_t x = sx(a, t.bits), y = sx(b, t.bits);
    switch (cmp) {
      case CMP_EQ: return x == y;
      case CMP_NE: return x != y;
      case CMP_LT: return x < y;
      case CMP_LE: return x <= y;
      case CMP_GT: return x > y;
      case CMP_GE: return x >= y;
    }
  }
  uint64_t x = zx(a, t.bits), y = zx(b, t.bits);
  switch (cmp) {
    case CMP_EQ: return x == y;
    case CMP_NE: return x != y;
    case CMP_LT: case CMP_LO: return x < y;
    case CMP_LE: case CMP_LS: return x <= y;
    case CMP_GT: case CMP_HI: return x > y;
    case CMP_GE: case CMP_HS: return x >= y;
  }
  return false;
}

static uint64_t sat_s(int64_t v, int bits, bool *clamped) {
  int64_t hi = bits >= 64 ? INT64_MAX : (1ll << (bits - 1)) - 1, lo = -hi - 1;
  *clamped = v > hi || v < lo;
  return (uint64_t)(v > hi ? hi : v < lo ? lo : v);
}

/* Two halves of an f16x2/bf16x2, op applied to each. */
static uint64_t pair_op(const inst *in, uint64_t a, uint64_t b, uint64_t c, int which) {
  uint64_t d = 0;
  bool bf = in->t.k == K_BF16X2;
  for (int h = 0; h < 2; h++) {
    uint64_t x = (a >> (16 * h)) & 0xffff, y = (b >> (16 * h)) & 0xffff, z = (c >> (16 * h)) & 0xffff;
    float fx = bf ? bf2f(x) : h2f(x), fy = bf ? bf2f(y) : h2f(y), fz = bf ? bf2f(z) : h2f(z);
    /* exact, or a sum rounded to 64 bits (which then rounds as the exact
    ** value would), a fused one rounded to odd; min and max as the scalar
    ** ones (-0 below +0, .NaN) */
    long double r = 0;
    switch (which) {
      case I_ADD: r = (long double)fx + fy; break;
      case I_SUB: r = (long double)fx - fy; break;
      case I_MUL: r = (long double)fx * fy; break;
      case I_FMA: r = fma_odd(fx, fy, fz); break;
      case I_MIN:
        r = in->mod2 && (isnan(fx) || isnan(fy)) ? NAN : isnan(fx) ? fy : isnan(fy) ? fx
          : (fx < fy || (fx == fy && signbit(fx))) ? fx : fy;
        break;
      case I_MAX:
        r = in->mod2 && (isnan(fx) || isnan(fy)) ? NAN : isnan(fx) ? fy : isnan(fy) ? fx
          : (fx > fy || (fx == fy && !signbit(fx))) ? fx : fy;
        break;
      case I_NEG: r = -fx; break;
      case I_ABS: r = fabsf(fx); break;
    }
    if (in->flags & F_SAT) r = isnan(r) ? 0 : r <= 0 ? 0 : r > 1 ? 1 : r;   /* -0 too: +0 */
    if (in->flags & F_RELU) r = r <= 0 ? 0 : r;
    d |= (bf ? round_bf(r, RND_RN) : round_h(r, RND_RN)) << (16 * h);
  }
  return d;
}

/* An IEEE operation on f32 or f64 rounded once, in rounding mode rnd, by
** the host's own arithmetic under fesetround: through long double it
** would round twice (1 + 2^-149 rounded up is 1 + 2^-23, not 1) and lose
** the sign of an exact zero (x - x rounded down is -0). The volatile
** operands and result keep the operation inside the mode. Whether it
** applies: add, sub and mul in every mode; fma, div, sqrt and rcp with a
** rounding named (their other forms are approximations, or fused as
** float_op says). */
static bool ieee_op(const inst *in, long double lx, long double ly, long double lz, int rnd,
                    uint64_t *out) {
  ptype t = in->t;
  int op = in->op;
  if (t.k != K_F || (t.bits != 32 && t.bits != 64) || (in->flags & F_APPROX)) return false;
  if (op == I_FMA || op == I_MAD || op == I_DIV || op == I_SQRT || op == I_RCP) {
    if (rnd != RND_RN && rnd != RND_RZ && rnd != RND_RM && rnd != RND_RP) return false;
  } else if (op != I_ADD && op != I_SUB && op != I_MUL) {
    return false;
  }
  int old = fegetround();
  fesetround(rnd == RND_RZ ? FE_TOWARDZERO : rnd == RND_RM ? FE_DOWNWARD : rnd == RND_RP ? FE_UPWARD
                                                                                   : FE_TONEAREST);
  long double r;
  if (t.bits == 32) {
    volatile float x = (float)lx, y = (float)ly, z = (float)lz, v = 0;
    switch (op) {
      case I_ADD: v = x + y; break;
      case I_SUB: v = x - y; break;
      case I_MUL: v = x * y; break;
      case I_FMA: case I_MAD: v = fmaf(x, y, z); break;
      case I_DIV: v = x / y; break;
      case I_SQRT: v = sqrtf(x); break;
      case I_RCP: v = 1.0f / x; break;
    }
    r = v;
  } else {
    volatile double x = (double)lx, y = (double)ly, z = (double)lz, v = 0;
    switch (op) {
      case I_ADD: v = x + y; break;
      case I_SUB: v = x - y; break;
      case I_MUL: v = x * y; break;
      case I_FMA: case I_MAD: v = fma(x, y, z); break;
      case I_DIV: v = x / y; break;
      case I_SQRT: v = sqrt(x); break;
      case I_RCP: v = 1.0 / x; break;
    }
    r = v;
  }
  fesetround(old);
  *out = fput(t, r, RND_NONE, in->flags);
  return true;
}

static uint64_t float_op(const inst *in, uint64_t a, uint64_t b, uint64_t c) {
  ptype t = in->t;
  if (t.k == K_F16X2 || t.k == K_BF16X2) return pair_op(in, a, b, c, in->op);
  int rnd = in->mod;
  long double x = ftz_in(t, fget(t, a), in->flags), y = ftz_in(t, fget(t, b), in->flags);
  uint64_t exact;
  /* div.approx.f32 is a * (1/b), and for |b| in [2^126, 2^128] PTX says
  ** 1/b is zero: the quotient is a signed zero (NaN for an infinite a) */
  if (in->op == I_DIV && (in->flags & F_APPROX) && t.bits == 32 && fabsl(y) >= 0x1p126L &&
      fabsl(y) <= 0x1p128L)
    return fput(t, (float)x * copysignf(0.0f, (float)y), RND_NONE, in->flags);
  /* rcp/rsqrt.approx.ftz.f64: subnormal inputs and results are zeros of
  ** their sign (ftz_in and fput flush f32 only) */
  if ((in->op == I_RCP || in->op == I_RSQRT) && t.bits == 64 && (in->flags & F_FTZ)) {
    double dx = fpclassify((double)x) == FP_SUBNORMAL ? copysign(0.0, (double)x) : (double)x;
    double r = (double)(in->op == I_RCP ? 1.0L / dx : 1.0L / sqrtl(dx));
    return of_d(fpclassify(r) == FP_SUBNORMAL ? copysign(0.0, r) : r);
  }
  if (ieee_op(in, x, y, ftz_in(t, fget(t, c), in->flags), rnd, &exact)) return exact;
  long double r = 0;
  switch (in->op) {
    case I_ADD: r = x + y; break;
    case I_SUB: r = x - y; break;
    case I_MUL: r = x * y; break;
    case I_DIV:
      if (t.bits == 32 && rnd == RND_NONE) return fput(t, (float)x / (float)y, RND_RN, in->flags);
      r = x / y;
      if (t.bits == 64 && (rnd == RND_RN || rnd == RND_NONE)) return fput(t, (double)x / (double)y, rnd, in->flags);
      if (t.bits == 32 && (rnd == RND_RN)) return fput(t, (float)x / (float)y, rnd, in->flags);
      break;
    case I_MAD: case I_FMA: {
      long double z = ftz_in(t, fget(t, c), in->flags);
      if (t.bits == 64) return fput(t, fma((double)x, (double)y, (double)z), RND_NONE, in->flags);
      if (t.bits == 32 && (rnd == RND_RN || rnd == RND_NONE)) return fput(t, fmaf((float)x, (float)y, (float)z), RND_NONE, in->flags);
      r = t.bits == 16 ? fma_odd((float)x, (float)y, (float)z) : x * y + z;
      break;
    }
    case I_MIN:
      if (in->mod2 && (isnan(x) || isnan(y))) return fput(t, NAN, RND_NONE, 0);   /* .NaN */
      r = isnan(x) ? y : isnan(y) ? x : (x < y || (x == y && signbit(x))) ? x : y;
      rnd = RND_NONE;
      break;
    case I_MAX:
      if (in->mod2 && (isnan(x) || isnan(y))) return fput(t, NAN, RND_NONE, 0);   /* .NaN */
      r = isnan(x) ? y : isnan(y) ? x : (x > y || (x == y && !signbit(x))) ? x : y;
      rnd = RND_NONE;
      break;
    case I_ABS: return t.bits == 64 ? a & ~(1ull << 63) : t.bits == 32 ? of_f(fabsf((float)ftz_in(t, as_f(a), in->flags))) : a & 0x7fff;
    case I_NEG: return t.bits == 64 ? a ^ (1ull << 63) : t.bits == 32 ? of_f(-(float)ftz_in(t, as_f(a), in->flags)) : a ^ 0x8000;
    case I_RCP: r = 1.0L / x; if (t.bits == 64 && (in->flags & F_APPROX)) rnd = RND_RN; break;
    case I_SQRT: r = sqrtl(x); break;
    case I_RSQRT: r = 1.0L / sqrtl(x); rnd = RND_RN; break;
    case I_SIN: r = sinl(x); rnd = RND_RN; break;
    case I_COS: r = cosl(x); rnd = RND_RN; break;
    case I_EX2: r = exp2l(x); rnd = RND_RN; break;
    case I_LG2: r = log2l(x); rnd = RND_RN; break;
    case I_TANH: r = tanhl(x); rnd = RND_RN; break;
    case I_COPYSIGN: r = copysignl(y, x); rnd = RND_NONE; break;
  }
  /* a division or square root done in long double is rounded once more to
  ** t: exact enough for every case but double rounding's rare ties */
  if (in->op == I_DIV || in->op == I_SQRT || in->op == I_RCP) {
    if (t.bits == 32 && (rnd == RND_RN || rnd == RND_NONE)) {
      float fx = (float)x, fy = (float)y;
      float fr = in->op == I_DIV ? fx / fy : in->op == I_SQRT ? sqrtf(fx) : 1.0f / fx;
      return fput(t, fr, RND_NONE, in->flags);
    }
    if (t.bits == 64 && (rnd == RND_RN || rnd == RND_NONE)) {
      double dx = (double)x, dy = (double)y;
      double dr = in->op == I_DIV ? dx / dy : in->op == I_SQRT ? sqrt(dx) : 1.0 / dx;
      return fput(t, dr, RND_NONE, in->flags);
    }
  }
  return fput(t, r, rnd, in->flags);
}

/* add, sub, min and max on the two halves of a .u16x2 or .s16x2 (add and
** sub wrap around; .relu: a negative half gives 0) */
static uint64_t int_pair_op(const inst *in, uint64_t a, uint64_t b) {
  bool s = in->t.k == K_S16X2;
  uint64_t d = 0;
  for (int h = 0; h < 2; h++) {
    int64_t x = s ? sx(a >> (16 * h), 16) : (int64_t)zx(a >> (16 * h), 16);
    int64_t y = s ? sx(b >> (16 * h), 16) : (int64_t)zx(b >> (16 * h), 16), r = 0;
    switch (in->op) {
      case I_ADD: r = x + y; break;
      case I_SUB: r = x - y; break;
      case I_MIN: r = x < y ? x : y; break;
      case I_MAX: r = x > y ? x : y; break;
    }
    if ((in->flags & F_RELU) && r < 0) r = 0;
    d |= zx((uint64_t)r, 16) << (16 * h);
  }
  return d;
}

/* vabsdiff2, vabsdiff4 (the default lane selections and mask): |a - b| of
** each half or byte, signed or not by the sources' type; .add: their sum
** plus c, else the lanes themselves */
static uint64_t vabsdiff_op(const inst *in, uint64_t a, uint64_t b, uint64_t c) {
  int w = in->mod == 2 ? 16 : 8;
  bool sa = (in->t2.k ? in->t2 : in->t).k == K_S;
  uint64_t d = 0, sum = c;
  for (int i = 0; i < 32; i += w) {
    int64_t x = sa ? sx(a >> i, w) : (int64_t)zx(a >> i, w), y = sa ? sx(b >> i, w) : (int64_t)zx(b >> i, w);
    uint64_t r = (uint64_t)(x > y ? x - y : y - x);
    sum += r;
    d |= zx(r, w) << i;
  }
  return zx(in->mod2 ? sum : d, 32);
}

static uint64_t int_op(blk *b, thr *t, const inst *in, uint64_t a, uint64_t bv, uint64_t c) {
  ptype ty = in->t;
  int bits = ty.bits;
  bool s = ty.k == K_S;
  if (ty.k == K_U16X2 || ty.k == K_S16X2) return int_pair_op(in, a, bv);
  switch (in->op) {
    case I_ADD: case I_SUB: {
      if (in->flags & F_SAT) {
        int64_t x = sx(a, bits), z = sx(bv, bits);
        bool cl;
        return zx(sat_s(in->op == I_ADD ? x + z : x - z, bits, &cl), bits);
      }
      /* .cc writes the carry (a borrow for sub), addc/subc read it */
      u128 x = zx(a, bits), y = zx(bv, bits), cin = (in->flags & F_CARRYIN) && t->carry;
      uint64_t r;
      bool out;
      if (in->op == I_ADD) {
        u128 sum = x + y + cin;
        r = (uint64_t)sum;
        out = (sum >> bits) != 0;
      } else {
        r = (uint64_t)(x - y - cin);
        out = x < y + cin;
      }
      if (in->flags & F_CC) t->carry = out;
      return zx(r, bits);
    }
    case I_MUL: case I_MAD: {
      uint64_t r;
      if (in->flags & F_WIDE) {
        r = s ? (uint64_t)(sx(a, bits) * sx(bv, bits)) : zx(a, bits) * zx(bv, bits);
        if (in->op == I_MAD) r += c;
        return zx(r, bits * 2);
      }
      if (in->flags & F_HI) {
        if (bits == 64) {
          i128 p = s ? (i128)sx(a, 64) * sx(bv, 64)
                         : (i128)((u128)a * (u128)bv);
          r = s ? (uint64_t)(p >> 64) : (uint64_t)((u128)a * bv >> 64);
        } else {
          int64_t p = s ? sx(a, bits) * sx(bv, bits) : (int64_t)(zx(a, bits) * zx(bv, bits));
          r = (uint64_t)(s ? p >> bits : (int64_t)((uint64_t)p >> bits));
        }
      } else {
        r = a * bv;
      }
      if (in->op == I_MAD) {
        if (in->flags & F_SAT) {
          bool cl;
          return sat_s(sx(r, bits) + sx(c, bits), bits, &cl);
        }
        u128 sum = (u128)zx(r, bits) + zx(c, bits) +
                                ((in->flags & F_CARRYIN) ? t->carry : 0);
        if (in->flags & F_CC) t->carry = bits >= 64 ? (sum >> 64) != 0 : (sum >> bits) != 0;
        r = (uint64_t)sum;
      }
      return zx(r, bits);
    }
    case I_MUL24: case I_MAD24: {
      int64_t x = s ? sx(a, 24) : (int64_t)zx(a, 24), y = s ? sx(bv, 24) : (int64_t)zx(bv, 24);
      uint64_t r = (in->flags & F_HI) ? (uint64_t)((x * y) >> 16) : (uint64_t)(x * y);
      if (in->op == I_MAD24) r += c;
      return zx(r, 32);
    }
    case I_SAD: {
      /* |a - b|, in unsigned arithmetic (the signed difference may overflow) */
      bool lt = s ? sx(a, bits) < sx(bv, bits) : zx(a, bits) < zx(bv, bits);
      uint64_t d = lt ? (uint64_t)sx(bv, bits) - (uint64_t)sx(a, bits) : (uint64_t)sx(a, bits) - (uint64_t)sx(bv, bits);
      if (!s) d = lt ? zx(bv, bits) - zx(a, bits) : zx(a, bits) - zx(bv, bits);
      return zx(d + c, bits);
    }
    case I_DIV: case I_REM: {
      if (zx(bv, bits) == 0) return in->op == I_DIV ? zx(~0ull, bits) : zx(a, bits);
      if (s) {
        int64_t x = sx(a, bits), y = sx(bv, bits);
        if (y == -1) return zx(in->op == I_DIV ? (uint64_t)0 - (uint64_t)x : 0, bits);
        return zx((uint64_t)(in->op == I_DIV ? x / y : x % y), bits);
      }
      return in->op == I_DIV ? zx(a, bits) / zx(bv, bits) : zx(a, bits) % zx(bv, bits);
    }
    case I_MIN: case I_MAX: {
      bool lt = s ? sx(a, bits) < sx(bv, bits) : zx(a, bits) < zx(bv, bits);
      uint64_t r = (in->op == I_MIN) == lt ? a : bv;
      if ((in->flags & F_RELU) && s && sx(r, bits) < 0) r = 0;     /* max.relu.s32 */
      return zx(r, bits);
    }
    case I_ABS: { int64_t x = sx(a, bits); return zx(x < 0 ? 0 - (uint64_t)x : (uint64_t)x, bits); }
    case I_NEG: return zx((uint64_t)0 - a, bits);
  }
  (void)b;
  return 0;
}

static uint64_t bit_op(const inst *in, uint64_t a, uint64_t b, uint64_t c, uint64_t d3) {
  int bits = in->t.k == K_PRED ? 1 : in->t.bits;
  switch (in->op) {
    case I_AND: return zx(a & b, bits);
    case I_OR: return zx(a | b, bits);
    case I_XOR: return zx(a ^ b, bits);
    case I_NOT: return zx(~a, bits);
    case I_CNOT: return zx(a, bits) == 0;
    case I_SHL: return (b = zx(b, 32)) >= (uint64_t)bits ? 0 : zx(a << b, bits);
    case I_SHR:
      b = zx(b, 32);
      if (in->t.k == K_S) return zx((uint64_t)(sx(a, bits) >> (b >= (uint64_t)bits ? (uint64_t)bits - 1 : b)), bits);
      return b >= (uint64_t)bits ? 0 : zx(a, bits) >> b;
    case I_POPC: return (uint64_t)__builtin_popcountll(zx(a, bits));
    case I_CLZ: return zx(a, bits) == 0 ? (uint64_t)bits : (uint64_t)(__builtin_clzll(zx(a, bits)) - (64 - bits));
    case I_BREV: {
      uint64_t r = 0, x = zx(a, bits);
      for (int i = 0; i < bits; i++) r |= ((x >> i) & 1) << (bits - 1 - i);
      return r;
    }
    case I_BFIND: {
      uint64_t x = in->t.k == K_S && sx(a, bits) < 0 ? zx(~a, bits) : zx(a, bits);
      if (x == 0) return 0xffffffffu;
      int msb = 63 - __builtin_clzll(x);
      return (in->flags & F_SHIFTAMT) ? (uint64_t)(bits - 1 - msb) : (uint64_t)msb;
    }
    case I_BFE: {
      unsigned pos = (unsigned)(b & 0xff), len = (unsigned)(c & 0xff);
      uint64_t x = zx(a, bits);
      if (len == 0) return 0;
      bool sign;
      if (in->t.k == K_S) sign = pos + len - 1 >= (unsigned)bits ? (x >> (bits - 1)) & 1 : (x >> (pos + len - 1)) & 1;
      else sign = false;
      uint64_t r = 0;
      for (unsigned i = 0; i < (unsigned)bits; i++) {
        uint64_t bit = i < len && pos + i < (unsigned)bits ? (x >> (pos + i)) & 1 : sign;
        r |= bit << i;
      }
      return r;
    }
    case I_BFI: {   /* bfi d, a (inserted), b (base), pos, len */
      unsigned pos = (unsigned)(c & 0xff), len = (unsigned)(d3 & 0xff);
      uint64_t r = zx(b, bits), x = zx(a, bits);
      for (unsigned i = 0; i < len && pos + i < (unsigned)bits; i++)
        r = (r & ~(1ull << (pos + i))) | (((x >> i) & 1) << (pos + i));
      return r;
    }
    case I_PRMT: {
      uint64_t bytes = zx(a, 32) | zx(b, 32) << 32, r = 0;
      for (int i = 0; i < 4; i++) {
        unsigned sel = (unsigned)(c >> (4 * i)) & 0xf;
        uint64_t byte = (bytes >> (8 * (sel & 7))) & 0xff;
        if (sel & 8) byte = (byte & 0x80) ? 0xff : 0;
        r |= byte << (8 * i);
      }
      return r;
    }
    case I_LOP3: {
      uint64_t r = 0;
      unsigned lut = (unsigned)d3 & 0xff;
      for (int i = 0; i < 32; i++) {
        unsigned idx = (unsigned)(((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1));
        r |= (uint64_t)((lut >> idx) & 1) << i;
      }
      return r;
    }
    case I_SHF: {
      unsigned n = (unsigned)zx(c, 32);
      n = (in->flags & F_WRAP) ? n & 31 : n > 32 ? 32 : n;
      uint64_t v = zx(b, 32) << 32 | zx(a, 32);
      return (in->flags & F_SHIFT_R) ? zx(v >> n, 32) : zx((v << n) >> 32, 32);
    }
    case I_BMSK: {
      unsigned pos = (unsigned)zx(a, 32), len = (unsigned)zx(b, 32);
      if (pos >= 32) return 0;
      uint64_t m = len >= 32 ? ~0ull : (1ull << len) - 1;
      return zx(m << pos, 32);
    }
    case I_SZEXT: {
      unsigned pos = (unsigned)zx(b, 32);
      if (pos >= 32) return zx(a, 32);
      if (pos == 0) return 0;
      return in->t.k == K_S ? zx((uint64_t)sx(a, (int)pos), 32) : zx(a, (int)pos);
    }
  }
  return 0;
}

/* dp4a.atype.btype: c plus the products of the four bytes of a and b;
** dp2a.lo/hi: c plus the two halves of a times bytes 0-1 (.lo) or 2-3
** (.hi) of b; each source signed or not by its type, the sum modulo 2^32 */
static uint64_t dot_op(const inst *in, uint64_t a, uint64_t b, uint64_t c) {
  bool sa = in->t.k == K_S, sb = in->t2.k == K_S;
  uint64_t acc = c;
  if (in->op == I_DP4A) {
    for (int i = 0; i < 4; i++) {
      int64_t x = sa ? sx(a >> (8 * i), 8) : (int64_t)((a >> (8 * i)) & 0xff);
      int64_t y = sb ? sx(b >> (8 * i), 8) : (int64_t)((b >> (8 * i)) & 0xff);
      acc += (uint64_t)(x * y);
    }
  } else {
    int first = (in->flags & F_HI) ? 2 : 0;
    for (int i = 0; i < 2; i++) {
      int64_t x = sa ? sx(a >> (16 * i), 16) : (int64_t)((a >> (16 * i)) & 0xffff);
      int64_t y = sb ? sx(b >> (8 * (first + i)), 8) : (int64_t)((b >> (8 * (first + i))) & 0xff);
      acc += (uint64_t)(x * y);
    }
  }
  return zx(acc, 32);
}

/* cvt.dtype.atype */
static uint64_t convert(const inst *in, uint64_t a) {
  ptype d = in->t, s = in->t2;
  bool dfloat = d.k == K_F || d.k == K_BF16, sfloat = s.k == K_F || s.k == K_BF16;
  if (s.k == K_F16X2 || d.k == K_F16X2 || d.k == K_BF16X2 || s.k == K_BF16X2) return a;
  if (!dfloat && !sfloat) {
    int64_t v = s.k == K_S ? sx(a, s.bits) : (int64_t)zx(a, s.bits);
    if (in->flags & F_SAT) {
      if (d.k == K_S) {
        bool cl;
        if (s.k != K_S && zx(a, s.bits) > (uint64_t)INT64_MAX) return zx((uint64_t)INT64_MAX >> (64 - d.bits), d.bits);
        return zx(sat_s(v, d.bits, &cl), d.bits);
      }
      uint64_t hi = zx(~0ull, d.bits);
      if (s.k == K_S && v < 0) return 0;
      return (uint64_t)v > hi ? hi : (uint64_t)v;
    }
    return zx((uint64_t)v, d.bits);
  }
  if (!sfloat) {   /* integer to float */
    long double x = s.k == K_S ? (long double)sx(a, s.bits) : (long double)zx(a, s.bits);
    return fput(d, x, in->mod, in->flags);
  }
  long double x = ftz_in(s, fget(s, a), in->flags);
  if (!dfloat) {   /* float to integer: rounded, then saturated; NaN is 0 (a half or
                   ** bfloat16 to 64 bits: 2^63, as cuda_fp16.h documents) */
    if (isnan(x)) return d.bits == 64 && s.bits == 16 ? 0x8000000000000000ull : 0;
    switch (in->mod) {
      case RND_RNI: x = nearbyintl(x); break;
      case RND_RZI: x = truncl(x); break;
      case RND_RMI: x = floorl(x); break;
      case RND_RPI: x = ceill(x); break;
      default: x = truncl(x); break;
    }
    if (d.k == K_S) {
      long double hi = d.bits >= 64 ? 9223372036854775807.0L : (long double)((1ll << (d.bits - 1)) - 1);
      long double lo = -hi - 1;
      int64_t v = x >= hi ? (int64_t)hi : x <= lo ? (int64_t)lo : (int64_t)x;
      return zx((uint64_t)v, d.bits);
    }
    long double hi = d.bits >= 64 ? 18446744073709551615.0L : (long double)((1ull << d.bits) - 1);
    if (x <= 0) return 0;
    return x >= hi ? zx(~0ull, d.bits) : (uint64_t)x;
  }
  /* float to float: rounded to an integer (rni...) or to d's precision */
  switch (in->mod) {
    case RND_RNI: x = nearbyintl(x); break;
    case RND_RZI: x = truncl(x); break;
    case RND_RMI: x = floorl(x); break;
    case RND_RPI: x = ceill(x); break;
  }
  int rnd = in->mod >= RND_RNI ? RND_NONE : in->mod;
  return fput(d, x, rnd, in->flags);
}

/* ---- atomics ----------------------------------------------------------------------- */

/* flush: an add.f32 on global memory, which flushes subnormal inputs and
** results to zeros of their sign (the PTX ISA, atom and red; on shared
** memory it keeps them) */
static uint64_t atomic_op(const inst *in, unsigned char *p, uint64_t v, uint64_t w, bool flush) {
  ptype t = in->t;
  size_t n = ptx_type_size(t);
  int op = in->mod;
  if (t.k == K_F || t.k == K_F16X2 || t.k == K_BF16 || t.k == K_BF16X2 || op == ATOM_INC ||
      op == ATOM_DEC || (op == ATOM_MIN || op == ATOM_MAX) || n == 2) {
    /* a compare-and-swap loop */
    for (;;) {
      uint64_t old = 0, nv;
      if (n == 2) old = __atomic_load_n((uint16_t *)p, __ATOMIC_SEQ_CST);
      else if (n == 4) old = __atomic_load_n((uint32_t *)p, __ATOMIC_SEQ_CST);
      else old = __atomic_load_n((uint64_t *)p, __ATOMIC_SEQ_CST);
      switch (op) {
        case ATOM_ADD:
          if (t.k == K_F16X2 || t.k == K_BF16X2) {
            inst add = *in;
            add.op = I_ADD;
            nv = pair_op(&add, old, v, 0, I_ADD);
          } else if (t.k == K_F || t.k == K_BF16) {
            nv = fput(t, fget(t, old) + fget(t, v), RND_NONE, 0);
            if (t.bits == 32 && flush) {
              ptype f32 = {K_F, 32};
              nv = ftz_bits(f32, of_f(as_f(ftz_bits(f32, old, F_FTZ)) + as_f(ftz_bits(f32, v, F_FTZ))),
                            F_FTZ);
            } else if (t.bits == 32) {
              nv = of_f(as_f(old) + as_f(v));
            }
            if (t.bits == 64) nv = of_d(as_d(old) + as_d(v));
          } else {
            nv = old + v;
          }
          break;
        case ATOM_MIN: case ATOM_MAX: {
          bool lt;
          if (t.k == K_F || t.k == K_BF16) lt = fget(t, old) < fget(t, v);
          else if (t.k == K_S) lt = sx(old, t.bits) < sx(v, t.bits);
          else lt = zx(old, t.bits) < zx(v, t.bits);
          nv = (op == ATOM_MIN) == lt ? old : v;
          break;
        }
        case ATOM_INC: nv = zx(old, t.bits) >= zx(v, t.bits) ? 0 : old + 1; break;
        case ATOM_DEC: nv = (zx(old, t.bits) == 0 || zx(old, t.bits) > zx(v, t.bits)) ? v : old - 1; break;
        case ATOM_CAS: nv = zx(old, t.bits) == zx(v, t.bits) ? w : old; break;
        case ATOM_EXCH: nv = v; break;
        case ATOM_AND: nv = old & v; break;
        case ATOM_OR: nv = old | v; break;
        case ATOM_XOR: nv = old ^ v; break;
        default: nv = old; break;
      }
      bool ok;
      if (n == 2) { uint16_t o = (uint16_t)old; ok = __atomic_compare_exchange_n((uint16_t *)p, &o, (uint16_t)nv, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }
      else if (n == 4) { uint32_t o = (uint32_t)old; ok = __atomic_compare_exchange_n((uint32_t *)p, &o, (uint32_t)nv, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }
      else { uint64_t o = old; ok = __atomic_compare_exchange_n((uint64_t *)p, &o, nv, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }
      if (ok) return old;
    }
  }
  if (n == 4) {
    uint32_t *q = (uint32_t *)p, x = (uint32_t)v;
    switch (op) {
      case ATOM_ADD: return __atomic_fetch_add(q, x, __ATOMIC_SEQ_CST);
      case ATOM_AND: return __atomic_fetch_and(q, x, __ATOMIC_SEQ_CST);
      case ATOM_OR: return __atomic_fetch_or(q, x, __ATOMIC_SEQ_CST);
      case ATOM_XOR: return __atomic_fetch_xor(q, x, __ATOMIC_SEQ_CST);
      case ATOM_EXCH: return __atomic_exchange_n(q, x, __ATOMIC_SEQ_CST);
      case ATOM_CAS: {
        uint32_t e = x;
        __atomic_compare_exchange_n(q, &e, (uint32_t)w, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        return e;
      }
    }
  } else {
    uint64_t *q = (uint64_t *)p;
    switch (op) {
      case ATOM_ADD: return __atomic_fetch_add(q, v, __ATOMIC_SEQ_CST);
      case ATOM_AND: return __atomic_fetch_and(q, v, __ATOMIC_SEQ_CST);
      case ATOM_OR: return __atomic_fetch_or(q, v, __ATOMIC_SEQ_CST);
      case ATOM_XOR: return __atomic_fetch_xor(q, v, __ATOMIC_SEQ_CST);
      case ATOM_EXCH: return __atomic_exchange_n(q, v, __ATOMIC_SEQ_CST);
      case ATOM_CAS: {
        uint64_t e = v;
        __atomic_compare_exchange_n(q, &e, w, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        return e;
      }
    }
  }
  return 0;
}

/* ---- printf and assert ------------------------------------------------------------- */

/* A string of the kernel's (global or local memory), checked. */
static const char *kernel_string(blk *b, thr *t, uint64_t a, char *buf, size_t len) {
  size_t n = 0;
  while (n + 1 < len) {
    unsigned char *p = mem(b, t, SP_GENERIC, a + n, 1);
    if (p == NULL) return NULL;
    buf[n] = (char)*p;
    if (*p == 0) break;
    n++;
  }
  buf[n] = '\0';
  return buf;
}

/* vprintf(format, args): the arguments packed in local memory, each aligned
** to its size (float promoted to double), as the CUDA compiler lays them out. */
static int kernel_printf(blk *b, thr *t, uint64_t fmt, uint64_t args) {
  char f[2048], out[8192];
  if (kernel_string(b, t, fmt, f, sizeof f) == NULL) return -1;
  size_t o = 0, at = 0, strings = 0;
  int count = 0;
  for (const char *p = f; *p && o + 1 < sizeof out;) {
    if (*p != '%') { out[o++] = *p++; continue; }
    if (p[1] == '%') { out[o++] = '%'; p += 2; continue; }
    char spec[64];
    size_t s = 0;
    spec[s++] = *p++;
    while (*p && strchr("-+ #0", *p) && s < 40) spec[s++] = *p++;
    while (*p && (isdigit((unsigned char)*p) || *p == '.' || *p == '*') && s < 50) spec[s++] = *p++;
    int longs = 0;
    while (*p && strchr("hlLqjzt", *p)) { if (*p == 'l' || *p == 'q' || *p == 'j' || *p == 'z' || *p == 't' || *p == 'L') longs++; p++; }
    char conv = *p ? *p++ : 'd';
    if (memchr(spec, '*', s)) { spec[s] = 0; o += (size_t)snprintf(out + o, sizeof out - o, "%s", spec); continue; }
    size_t size = (conv == 's' || conv == 'p' || strchr("eEfFgGaA", conv) || longs) ? 8 : 4;
    at = (at + size - 1) / size * size;
    unsigned char *ap = args ? mem(b, t, SP_GENERIC, args + at, size) : NULL;
    if (ap == NULL) return -1;
    at += size;
    count++;
    uint64_t v = 0;
    memcpy(&v, ap, size);
    int w;
    if (strchr("eEfFgGaA", conv)) {
      spec[s++] = conv;
      spec[s] = 0;
      w = snprintf(out + o, sizeof out - o, spec, as_d(v));
    } else if (conv == 's') {
      char str[1024];
      if (kernel_string(b, t, v, str, sizeof str) == NULL) return -1;
      strings += strlen(str) + 1;
      spec[s++] = 's';
      spec[s] = 0;
      w = snprintf(out + o, sizeof out - o, spec, str);
    } else if (conv == 'p') {
      spec[s++] = 'p';
      spec[s] = 0;
      w = snprintf(out + o, sizeof out - o, spec, (void *)(uintptr_t)v);
    } else if (conv == 'c') {
      spec[s++] = 'c';
      spec[s] = 0;
      w = snprintf(out + o, sizeof out - o, spec, (int)v);
    } else {
      spec[s++] = 'l';
      spec[s++] = 'l';
      spec[s++] = conv;
      spec[s] = 0;
      long long x = size == 8 ? (long long)v : strchr("di", conv) ? (long long)(int32_t)v : (long long)(uint32_t)v;
      w = snprintf(out + o, sizeof out - o, spec, x);
    }
    if (w > 0) o += (size_t)w;
    if (o >= sizeof out) o = sizeof out - 1;
  }
  out[o] = '\0';
  const ptx_host *h = b->L->host;
  if (h->print) {
    /* the record the FIFO holds: a header (the format's address and the
    ** record's length), the packed arguments and the %s strings' bytes */
    h->print(h->ud, out, (16 + at + strings + 7) / 8 * 8);
    return count;
  }
  FILE *fp = h->out ? h->out : stdout;
  pthread_mutex_lock(&print_mu);
  fputs(out, fp);
  fflush(fp);
  pthread_mutex_unlock(&print_mu);
  return count;
}

/* ---- calls ---------------------------------------------------------------------- */

/* The stack function c's frame takes in a launch of entry e, called (depth
** > 0) or not. */
static size_t frame_bytes(const ptx_module *m, int e, int c, int depth) {
  const size_t *cubin = m->fns[e].cubin_frames;
  if (cubin) return cubin[c];
  return m->fns[c].local_bytes + (depth > 0 ? CALL_FRAME_BYTES : 0);
}

/* The deepest stack a call chain from fn reaches, from top (the bytes in
** use when fn's frame is in place), in a launch of entry e: the stack as
** counted (cubin: the cubin's frames), or the local memory its .local
** variables take. A call back into a function already on the chain
** (recursion) adds nothing, and sets *recursive: its depth is known only
** as it runs, so ptxas cannot size it, and the driver's limit is what it
** gets. */
static size_t deepest(const ptx_module *m, int e, int fn, size_t top, bool cubin,
                      bool *on_chain, bool *recursive, long *budget) {
  const func *f = &m->fns[fn];
  size_t most = top;
  on_chain[fn] = true;
  for (int i = 0; i < f->ncalls && --*budget > 0; i++) {   /* (a budget: chains may be many) */
    int c = f->calls[i].callee;
    if (!m->fns[c].defined) continue;
    if (on_chain[c]) { *recursive = true; continue; }
    size_t at = cubin ? top + frame_bytes(m, e, c, 1)
                      : ((top + 15) & ~(size_t)15) + m->fns[c].local_bytes + CALL_FRAME_BYTES;
    size_t n = deepest(m, e, c, at, cubin, on_chain, recursive, budget);
    if (n > most) most = n;
  }
  on_chain[fn] = false;
  return most;
}

/* Entry e's deepest chain: its stack (cubin), or its local memory. */
static size_t entry_deepest(const ptx_module *m, int e, bool cubin, bool *recursive) {
  bool *on_chain = calloc((size_t)m->nfns, sizeof *on_chain);
  long budget = 1000000;
  *recursive = false;
  size_t start = cubin ? frame_bytes(m, e, e, 0) : m->fns[e].local_bytes;
  size_t n = deepest(m, e, e, start, cubin, on_chain, recursive, &budget);
  free(on_chain);
  return n;
}

/* With a cubin, what it says the kernel needs (EIATTR_MIN_STACK_SIZE), or
** more where its frames add up to more. */
size_t ptx_entry_stack_bytes(const ptx_module *m, int e) {
  bool recursive;
  const func *f = &m->fns[e];
  size_t n = entry_deepest(m, e, f->cubin_frames != NULL, &recursive);
  return f->cubin_frames && f->cubin_min_stack > n ? f->cubin_min_stack : n;
}

int ptx_entry_set_frames(ptx_module *m, int e, const size_t *frames, size_t min_stack) {
  func *f = &m->fns[e];
  size_t *v = malloc((size_t)m->nfns * sizeof *v);
  if (v == NULL) return -1;
  memcpy(v, frames, (size_t)m->nfns * sizeof *v);
  free(f->cubin_frames);
  f->cubin_frames = v;
  f->cubin_min_stack = min_stack;
  return 0;
}

int ptx_uses_printf(const ptx_module *m) {
  for (int i = 0; i < m->nfns; i++)
    if (!m->fns[i].defined && strcmp(m->fns[i].name, "vprintf") == 0) return 1;
  return 0;
}

static void enter_frame(blk *b, thr *t, int fn) {
  const func *f = &b->L->m->fns[fn];
  size_t rbase = t->rtop, pbase = t->ptop;
  if (t->rtop + (size_t)f->nregs > t->rcap) {
    t->rcap = (t->rtop + (size_t)f->nregs) * 2 + 64;
    t->rstack = realloc(t->rstack, t->rcap * sizeof *t->rstack);
  }
  /* a frame's registers and local memory start undefined, as on a GPU */
  if (f->nregs) memset(t->rstack + rbase, UNDEFINED_BYTE, (size_t)f->nregs * sizeof *t->rstack);
  t->rtop += (size_t)f->nregs;
  if (t->ptop + f->param_bytes > t->pcap) {
    t->pcap = (t->ptop + f->param_bytes) * 2 + 256;
    t->pstack = realloc(t->pstack, t->pcap);
  }
  t->ptop += f->param_bytes;
  size_t lbase = (t->ltop + 15) & ~(size_t)15;
  t->ltop = lbase + f->local_bytes + (t->depth > 0 ? CALL_FRAME_BYTES : 0);
  const ptx_module *m = b->L->m;
  int e = (int)(b->L->entry - m->fns);
  t->used = m->fns[e].cubin_frames ? t->used + frame_bytes(m, e, fn, t->depth) : t->ltop;
  if (f->local_bytes && b->local && t->ltop <= b->L->stride)   /* (an overflow faults in do_call) */
    memset(local_of(b, t) + lbase, UNDEFINED_BYTE, f->local_bytes);
  t->r = t->rstack + rbase;
  t->mask = f->regmask;
  t->param = t->pstack + pbase;
  t->lbase = lbase;
  t->code = f->code;
  t->fn = fn;
  t->pc = 0;
  frame *fr = &t->frames[t->depth];
  fr->fn = fn;
  fr->rbase = rbase;
  fr->pbase = pbase;
  fr->lbase = lbase;
}

static void do_call(blk *b, thr *t, const inst *in) {
  ptx_module *m = b->L->m;
  const func *caller = &m->fns[t->fn];
  const callsite *cs = &caller->calls[in->call];
  const func *callee = &m->fns[cs->callee];
  if (!callee->defined) {
    /* the runtime's functions */
    uint64_t a0 = 0, a1 = 0;
    if (cs->narg > 0) memcpy(&a0, t->param + m->vars[cs->args[0]].offset, 8);
    if (cs->narg > 1) memcpy(&a1, t->param + m->vars[cs->args[1]].offset, 8);
    if (strcmp(callee->name, "vprintf") == 0) {
      int r = kernel_printf(b, t, a0, a1);
      if (b->stop) return;
      if (cs->nret > 0) memcpy(t->param + m->vars[cs->ret[0]].offset, &r, 4);
    } else if (strcmp(callee->name, "__assertfail") == 0) {
      char msg[512], file[512], fn[512];
      uint64_t a3 = 0;
      uint32_t line = 0;
      memcpy(&line, t->param + m->vars[cs->args[2]].offset, 4);
      memcpy(&a3, t->param + m->vars[cs->args[3]].offset, 8);
      if (!kernel_string(b, t, a0, msg, sizeof msg) || !kernel_string(b, t, a1, file, sizeof file) ||
          !kernel_string(b, t, a3, fn, sizeof fn))
        return;
      pthread_mutex_lock(&print_mu);
      fprintf(stderr, "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n",
              file, line, fn, b->ctaid[0], b->ctaid[1], b->ctaid[2], t->tid[0], t->tid[1],
              t->tid[2], msg);
      pthread_mutex_unlock(&print_mu);
      fault(b, t, PTX_ASSERT, "assertion `%s` failed", msg);
      return;
    } else {
      fault(b, t, PTX_ILLEGAL_INSTRUCTION, "a call of %s, which the fake driver does not provide", callee->name);
      return;
    }
    t->pc++;
    return;
  }
  if (t->depth + 1 >= t->fcap) {
    t->fcap *= 2;
    t->frames = realloc(t->frames, (size_t)t->fcap * sizeof *t->frames);
  }
  t->frames[t->depth].pc = t->pc;
  t->frames[t->depth].call = in->call;
  t->frames[t->depth].ltop = t->ltop;
  t->frames[t->depth].used = t->used;
  unsigned char *args = t->param;
  size_t caller_pbase = t->frames[t->depth].pbase;
  t->depth++;
  enter_frame(b, t, cs->callee);
  if (t->used > b->L->stack) {
    /* the driver's CU_LIMIT_STACK_SIZE: the hardware's stack error */
    fault(b, t, PTX_STACK_ERROR, "a call stack of %zu bytes, past the thread's %zu (CU_LIMIT_STACK_SIZE: a stack overflow)",
          t->used, b->L->stack);
    return;
  }
  if (t->ltop > b->L->stride) {
    /* a cubin's frames smaller than the .local variables the fake places */
    fault(b, t, PTX_STACK_ERROR, "the fake's local memory for a thread, %zu bytes, cannot hold the %zu its .local variables take here (a stack of %zu by the cubin's frames)",
          b->L->stride, t->ltop, t->used);
    return;
  }
  if (callee->local_bytes && b->local == NULL) {
    fault(b, t, PTX_ILLEGAL_ADDRESS, "no local memory: the fake could not map %zu bytes a thread", b->L->stack);
    return;
  }
  args = t->pstack + caller_pbase;   /* pstack may have moved */
  for (int i = 0; i < cs->narg && i + callee->nret < callee->nparams; i++) {
    const var *formal = &m->vars[callee->params[callee->nret + i]];
    const var *actual = &m->vars[cs->args[i]];
    memcpy(t->param + formal->offset, args + actual->offset, formal->size < actual->size ? formal->size : actual->size);
  }
}

static void do_ret(blk *b, thr *t) {
  ptx_module *m = b->L->m;
  if (t->depth == 0) { t->state = TS_EXIT; return; }
  const func *callee = &m->fns[t->fn];
  unsigned char *results = t->param;
  t->depth--;
  frame *fr = &t->frames[t->depth];
  const func *caller = &m->fns[fr->fn];
  const callsite *cs = &caller->calls[fr->call];
  unsigned char *cparam = t->pstack + fr->pbase;
  for (int i = 0; i < cs->nret && i < callee->nret; i++) {
    const var *formal = &m->vars[callee->params[i]];
    const var *actual = &m->vars[cs->ret[i]];
    memcpy(cparam + actual->offset, results + formal->offset, formal->size < actual->size ? formal->size : actual->size);
  }
  t->rtop = fr->rbase + (size_t)caller->nregs;
  t->ptop = fr->pbase + caller->param_bytes;
  t->ltop = fr->ltop;
  t->used = fr->used;
  t->r = t->rstack + fr->rbase;
  t->mask = caller->regmask;
  t->param = cparam;
  t->lbase = fr->lbase;
  t->code = caller->code;
  t->fn = fr->fn;
  t->pc = fr->pc + 1;
}

/* ---- one thread, until it blocks ---------------------------------------------------- */

static void ldst(blk *b, thr *t, const inst *in) {
  size_t el = ptx_type_size(in->t), n = el * in->vec;
  const operand *ao = in->op == I_LD ? &in->o[1] : &in->o[0];
  uint64_t a = get(b, t, ao);
  unsigned char *p = mem(b, t, in->space, a, n);
  if (p == NULL) return;
  if (in->op == I_LD) {
    const operand *d = &in->o[0];
    for (unsigned i = 0; i < in->vec; i++) {
      uint64_t v = 0;
      memcpy(&v, p + i * el, el);
      if (in->t.k == K_S) v = (uint64_t)sx(v, in->t.bits);
      if (d->kind == O_VEC) put_slot(t, d->v[i], v);
      else put(t, d, v);
    }
  } else {
    const operand *s = &in->o[1];
    if (in->space == SP_PARAM && t->depth == 0 && a < b->L->entry->formal_bytes) {
      fault(b, t, PTX_ILLEGAL_ADDRESS, "a store to the kernel's parameters");
      return;
    }
    for (unsigned i = 0; i < in->vec; i++) {
      uint64_t v = s->kind == O_VEC ? (s->v[i] >= 0 ? t->r[s->v[i]] : 0) : get(b, t, s);
      memcpy(p + i * el, &v, el);
    }
  }
}

static void run_thread(blk *b, thr *t) {
  unsigned long long count = 0;
  while (t->state == TS_RUN) {
    const inst *in = &t->code[t->pc];
    /* a thread of a cooperative launch may spin for other blocks
    ** (this_grid().sync()): it lets them run, and stops once one failed */
    count++;
    if (b->L->cooperative && (count & 0xfff) == 0) {
      if (atomic_load(&b->L->err) != PTX_OK) { b->stop = true; break; }
      sched_yield();
    }
    if (in->guard >= 0 && ((t->r[in->guard] & 1) ^ in->guard_neg) == 0) { t->pc++; continue; }
    const operand *o = in->o;
    switch (in->op) {
      case I_NOP: case I_PREFETCH: break;
      case I_MOV:
        if (o[1].kind == O_VEC) {
          int w = in->t.bits / o[1].n;
          uint64_t v = 0;
          for (int i = 0; i < o[1].n; i++) v |= zx(o[1].v[i] >= 0 ? t->r[o[1].v[i]] : 0, w) << (w * i);
          put(t, &o[0], v);
        } else if (o[0].kind == O_VEC) {
          int w = in->t.bits / o[0].n;
          uint64_t v = get(b, t, &o[1]);
          for (int i = 0; i < o[0].n; i++) put_slot(t, o[0].v[i], zx(v >> (w * i), w));
        } else {
          put(t, &o[0], get(b, t, &o[1]));
        }
        break;
      case I_ADD: case I_SUB: case I_MUL: case I_MAD: case I_DIV: case I_REM: case I_MIN:
      case I_MAX: case I_ABS: case I_NEG: case I_MUL24: case I_MAD24: case I_SAD: case I_FMA: {
        uint64_t a = get(b, t, &o[1]), bv = in->nops > 2 ? get(b, t, &o[2]) : 0,
                 c = in->nops > 3 ? get(b, t, &o[3]) : 0;
        bool fl = in->t.k == K_F || in->t.k == K_F16X2 || in->t.k == K_BF16 || in->t.k == K_BF16X2;
        put(t, &o[0], fl ? float_op(in, a, bv, c) : int_op(b, t, in, a, bv, c));
        break;
      }
      case I_RCP: case I_SQRT: case I_RSQRT: case I_SIN: case I_COS: case I_EX2: case I_LG2:
      case I_TANH: case I_COPYSIGN:
        put(t, &o[0], float_op(in, get(b, t, &o[1]), in->nops > 2 ? get(b, t, &o[2]) : 0, 0));
        break;
      case I_AND: case I_OR: case I_XOR: case I_NOT: case I_CNOT: case I_SHL: case I_SHR:
      case I_POPC: case I_CLZ: case I_BREV: case I_BFIND: case I_BFE: case I_BFI: case I_PRMT:
      case I_LOP3: case I_SHF: case I_BMSK: case I_SZEXT:
        put(t, &o[0], bit_op(in, get(b, t, &o[1]), in->nops > 2 ? get(b, t, &o[2]) : 0,
                             in->nops > 3 ? get(b, t, &o[3]) : 0, in->nops > 4 ? get(b, t, &o[4]) : 0));
        break;
      case I_DP4A: case I_DP2A:
        put(t, &o[0], dot_op(in, get(b, t, &o[1]), get(b, t, &o[2]), get(b, t, &o[3])));
        break;
      case I_FNS: {   /* the |offset|-th set bit of mask from bit base, up (offset > 0) or down */
        uint64_t mask = get(b, t, &o[1]), base = zx(get(b, t, &o[2]), 32), d = 0xffffffffu;
        int64_t off = sx(get(b, t, &o[3]), 32);
        if (off == 0) {
          if (base < 32 && (mask >> base & 1)) d = base;
        } else {
          int64_t count = (off > 0 ? off : -off) - 1, inc = off > 0 ? 1 : -1;
          for (int64_t pos = (int64_t)base; pos >= 0 && pos < 32; pos += inc)
            if (mask >> pos & 1) {
              if (count-- == 0) { d = (uint64_t)pos; break; }
            }
        }
        put(t, &o[0], d);
        break;
      }
      case I_VABSDIFF:
        put(t, &o[0], vabsdiff_op(in, get(b, t, &o[1]), get(b, t, &o[2]), get(b, t, &o[3])));
        break;
      case I_SETP: case I_SET: {
        int k = (in->flags & F_DUALP) ? 1 : 0;
        ptype ct = in->op == I_SET ? in->t2 : in->t;
        if (ct.k == K_F16X2 || ct.k == K_BF16X2) {
          /* lane by lane: setp writes a predicate per half (p|q), set
          ** writes each half of its destination (1.0 in f16x2 or bf16x2,
          ** all ones in an integer type) */
          ptype lane = {ct.k == K_F16X2 ? K_F : K_BF16, 16};
          uint64_t x = get(b, t, &o[1 + k]), y = get(b, t, &o[2 + k]), v = 0;
          bool c = in->mod2 ? get(b, t, &o[3 + k]) & 1 : false, r2[2];
          for (int h = 0; h < 2; h++) {
            bool r = compare(in->mod, lane, (x >> (16 * h)) & 0xffff, (y >> (16 * h)) & 0xffff);
            if (in->mod2 == BOP_AND) r = r && c;
            else if (in->mod2 == BOP_OR) r = r || c;
            else if (in->mod2) r = r != c;
            r2[h] = r;
            uint64_t one = in->t.k == K_F16X2 ? 0x3c00 : in->t.k == K_BF16X2 ? 0x3f80 : 0xffff;
            if (r) v |= one << (16 * h);
          }
          if (in->op == I_SET) {
            put(t, &o[0], v);
          } else {
            put(t, &o[0], r2[0]);
            if (k) put(t, &o[1], r2[1]);
          }
          break;
        }
        /* .ftz: an f32 subnormal operand compares as a zero of its sign */
        bool r = compare(in->mod, ct, ftz_bits(ct, get(b, t, &o[1 + k]), in->flags),
                         ftz_bits(ct, get(b, t, &o[2 + k]), in->flags));
        bool q = !r;
        if (in->mod2) {
          bool c = get(b, t, &o[3 + k]) & 1;
          if (in->mod2 == BOP_AND) { r = r && c; q = q && c; }
          else if (in->mod2 == BOP_OR) { r = r || c; q = q || c; }
          else { r = r != c; q = q != c; }
        }
        if (in->op == I_SET) {
          uint64_t one = in->t.bits == 64 ? of_d(1.0) : in->t.bits == 32 ? of_f(1.0f) : 0x3c00;
          uint64_t v = in->t.k == K_F ? (r ? one : 0) : in->t.k == K_BF16 ? (r ? 0x3f80 : 0)
                     : (r ? ~0ull : 0);
          put(t, &o[0], v);
        } else {
          put(t, &o[0], r);
          if (k) put(t, &o[1], q);
        }
        break;
      }
      case I_SELP:
        put(t, &o[0], (get(b, t, &o[3]) & 1) ? get(b, t, &o[1]) : get(b, t, &o[2]));
        break;
      case I_SLCT: {
        uint64_t c = get(b, t, &o[3]);
        bool ge = in->t2.k == K_F ? !(as_f(c) < 0) : sx(c, 32) >= 0;
        put(t, &o[0], ge ? get(b, t, &o[1]) : get(b, t, &o[2]));
        break;
      }
      case I_TESTP: {
        long double x = fget(in->t, get(b, t, &o[1]));
        bool r = false;
        int cls = in->t.bits == 32 ? fpclassify((float)x) : fpclassify((double)x);
        switch (in->mod) {
          case TESTP_FINITE: r = isfinite(x); break;
          case TESTP_INFINITE: r = isinf(x); break;
          case TESTP_NUMBER: r = !isnan(x); break;
          case TESTP_NAN: r = isnan(x); break;
          case TESTP_NORMAL: r = cls == FP_NORMAL; break;
          case TESTP_SUBNORMAL: r = cls == FP_SUBNORMAL; break;
        }
        put(t, &o[0], r);
        break;
      }
      case I_CVT:
        if (in->nops == 3 && (in->t.k == K_F16X2 || in->t.k == K_BF16X2)) {
          /* cvt.rn.f16x2.f32 d, a, b (bf16x2 too): a to the upper half */
          ptype lane = {in->t.k == K_F16X2 ? K_F : K_BF16, 16};
          uint64_t hi = fput(lane, fget(in->t2, get(b, t, &o[1])), in->mod, in->flags);
          uint64_t lo = fput(lane, fget(in->t2, get(b, t, &o[2])), in->mod, in->flags);
          put(t, &o[0], hi << 16 | lo);
          break;
        }
        put(t, &o[0], convert(in, get(b, t, &o[1])));
        break;
      case I_CVTA: {
        uint64_t a = get(b, t, &o[1]);
        bool to = in->flags & F_TOSPACE;
        if (in->space == SP_SHARED) {
          uint64_t base = (uint64_t)(uintptr_t)b->shared;
          a = to ? a - base : a + base;
        } else if (in->space == SP_LOCAL) {
          uint64_t base = (uint64_t)(uintptr_t)(b->local ? local_of(b, t) : NULL);
          a = to ? a - base : a + base;
        } else if (in->space == SP_PARAM) {
          fault(b, t, PTX_ILLEGAL_INSTRUCTION, "cvta.param is not supported by the fake driver");
          break;
        }
        put(t, &o[0], in->t.bits == 32 ? zx(a, 32) : a);
        break;
      }
      case I_ISSPACEP: {
        /* the const window: the module's .const variables; the global
        ** one, every address outside the shared and local windows (the
        ** const variables too: the PTX ISA does not say) */
        uint64_t a = get(b, t, &o[1]), s = (uint64_t)(uintptr_t)b->shared;
        bool sh = b->shared && a >= s && a < s + b->shared_size;
        uint64_t l = (uint64_t)(uintptr_t)b->local;
        bool lo = b->local && a >= l && a < l + (uint64_t)b->n * b->L->stride;
        bool r = in->space == SP_SHARED ? sh : in->space == SP_LOCAL ? lo
               : in->space == SP_CONST ? in_const(b->L->m, a) : !sh && !lo;
        put(t, &o[0], r);
        break;
      }
      case I_LD: case I_ST:
        ldst(b, t, in);
        break;
      case I_BRA:
        t->pc = o[0].reg;
        continue;
      case I_BRX: {
        const func *f = &b->L->m->fns[t->fn];
        int table = o[1].reg, n = f->brx[table];
        uint64_t i = zx(get(b, t, &o[0]), 32);
        if (i >= (uint64_t)n) { fault(b, t, PTX_ILLEGAL_INSTRUCTION, "brx.idx index %llu past its %d targets", (unsigned long long)i, n); break; }
        t->pc = f->brx[table + 1 + (int)i];
        continue;
      }
      case I_CALL:
        do_call(b, t, in);
        continue;
      case I_RET:
        do_ret(b, t);
        continue;
      case I_EXIT:
        t->state = TS_EXIT;
        continue;
      case I_TRAP:
        fault(b, t, PTX_LAUNCH_FAILED, "trap");
        continue;
      case I_MEMBAR:
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        break;
      case I_NANOSLEEP:     /* the block's other threads run (a thread spinning on a flag) */
        t->pc++;
        b->icount += count;
        return;
      case I_ATOM: case I_RED: {
        int k = in->op == I_ATOM ? 1 : 0;
        uint64_t a = get(b, t, &o[k]);
        unsigned char *p = mem(b, t, in->space, a, ptx_type_size(in->t));
        if (p == NULL) continue;
        if (in->space == SP_LOCAL || (in->space == SP_GENERIC && p >= b->local && b->local &&
                                      p < b->local + (size_t)b->n * b->L->stride)) {
          fault(b, t, PTX_ILLEGAL_ADDRESS, "an atomic operation on local memory");
          continue;
        }
        bool shared = in->space == SP_SHARED ||
                      (in->space == SP_GENERIC && b->shared && p >= b->shared &&
                       p < b->shared + b->shared_size);
        uint64_t old = atomic_op(in, p, get(b, t, &o[k + 1]), in->nops > k + 2 ? get(b, t, &o[k + 2]) : 0,
                                 !shared);
        if (k) put(t, &o[0], in->t.k == K_S ? (uint64_t)sx(old, in->t.bits) : old);
        break;
      }
      case I_BAR: case I_BAR_RED: {
        /* bar.sync a{, b}; bar.red.op d, a{, b}, {!}c */
        int k = in->op == I_BAR_RED ? 1 : 0;
        unsigned id = (unsigned)get(b, t, &o[k]);
        /* nthr, not count: that is the instructions run, added to icount below */
        unsigned nthr = (in->op == I_BAR && in->nops > 1) || (k && in->nops > 3) ? (unsigned)get(b, t, &o[k + 1]) : 0;
        if (id >= 16) { fault(b, t, PTX_ILLEGAL_INSTRUCTION, "barrier %u of 16", id); continue; }
        if (nthr % 32 != 0 && nthr != 0) { fault(b, t, PTX_ILLEGAL_INSTRUCTION, "a barrier of %u threads, not a multiple of 32", nthr); continue; }
        b->bars[id].arrived++;
        b->bars[id].expected = nthr;
        if (k) {
          bool p = get(b, t, &o[in->nops - 1]) & 1;
          b->bars[id].popc += p;
          b->bars[id].and_ = b->bars[id].and_ && p;
          b->bars[id].or_ = b->bars[id].or_ || p;
        }
        if (in->mod == BAR_ARRIVE) break;
        t->bar = (int)id;
        t->wait = in;
        t->state = TS_BAR;
        b->icount += count;
        return;
      }
      case I_BAR_WARP: case I_SHFL: case I_VOTE: case I_MATCH: case I_REDUX: case I_ACTIVEMASK:
      case I_ELECT: {
        int k = (in->flags & F_DUALP) ? 1 : 0;
        t->wait = in;
        t->state = TS_WARP;
        switch (in->op) {
          case I_BAR_WARP: t->mask32 = (uint32_t)get(b, t, &o[0]); break;
          case I_SHFL:
            t->val = get(b, t, &o[1 + k]);
            t->b = get(b, t, &o[2 + k]);
            t->c = get(b, t, &o[3 + k]);
            t->mask32 = (uint32_t)get(b, t, &o[4 + k]);
            break;
          case I_VOTE: case I_MATCH: case I_REDUX:
            t->val = get(b, t, &o[1 + k]);
            t->mask32 = (uint32_t)get(b, t, &o[2 + k]);
            break;
          case I_ACTIVEMASK: t->mask32 = 0; break;
          case I_ELECT: t->mask32 = (uint32_t)get(b, t, &o[1 + k]); break;
        }
        b->icount += count;
        return;
      }
      default:
        fault(b, t, PTX_ILLEGAL_INSTRUCTION, "'%s', which the fake driver cannot run", ptx_op_name(in->op));
        continue;
    }
    t->pc++;
  }
  b->icount += count;
}

/* ---- warps and barriers ----------------------------------------------------------- */

static uint32_t lanes_alive(blk *b, int w) {
  uint32_t m = 0;
  for (int i = 0; i < 32 && w * 32 + i < b->n; i++)
    if (b->t[w * 32 + i].state != TS_EXIT) m |= 1u << i;
  return m;
}

static void finish_warp_op(blk *b, thr *t, uint64_t d, bool p) {
  const inst *in = t->wait;
  if (in->op != I_BAR_WARP) put(t, &in->o[0], d);
  if (in->flags & F_DUALP) put(t, &in->o[1], p);
  (void)b;
  t->state = TS_RUN;
  t->pc++;
}

/* Resolve warp w's operations whose members have all arrived; true when
** one did. */
static bool resolve_warp(blk *b, int w) {
  thr *lane = &b->t[w * 32];
  int n = b->n - w * 32 < 32 ? b->n - w * 32 : 32;
  uint32_t alive = lanes_alive(b, w), waiting = 0;
  for (int i = 0; i < n; i++)
    if (lane[i].state == TS_WARP) waiting |= 1u << i;
  if (waiting == 0) return false;
  bool any = false;
  for (int i = 0; i < n; i++) {
    thr *t = &lane[i];
    if (t->state != TS_WARP) continue;
    const inst *in = t->wait;
    uint32_t parts;
    if (in->op == I_ACTIVEMASK) {
      /* the lanes at this very instruction, once no lane can still come */
      bool blocked = true;
      for (int j = 0; j < n; j++)
        if ((alive >> j & 1) && lane[j].state == TS_RUN) blocked = false;
      if (!blocked) continue;
      parts = 0;
      for (int j = 0; j < n; j++)
        if (lane[j].state == TS_WARP && lane[j].wait == in) parts |= 1u << j;
      for (int j = 0; j < n; j++)
        if (parts >> j & 1) finish_warp_op(b, &lane[j], parts, false);
      any = true;
      continue;
    }
  }
  /* The calls whose every live member waits at the same kind of operation
  ** with the same mask; a member at the same instruction with another mask
  ** is an error. Lanes at one instruction whose calls are complete ran to
  ** it in the same round: converged, they execute it together. */
  uint32_t ready = 0;
  for (int i = 0; i < n; i++) {
    thr *t = &lane[i];
    if (t->state != TS_WARP || t->wait->op == I_ACTIVEMASK) continue;
    const inst *in = t->wait;
    uint32_t m = (t->mask32 | 1u << i) & alive;
    bool ok = true;
    for (int j = 0; j < n; j++) {
      thr *u = &lane[j];
      if (!(m >> j & 1) || (u->state == TS_WARP && u->wait->op == in->op && u->mask32 == t->mask32)) continue;
      if (u->state == TS_WARP && u->wait == in) {
        fault(b, t, PTX_LAUNCH_FAILED, "%s.sync: member masks disagree: lane %d has mask 0x%08x, which "
              "names lane %d, at the same instruction with mask 0x%08x", ptx_op_name(in->op), i,
              t->mask32, j, u->mask32);
        return true;
      }
      ok = false;
    }
    if (ok) ready |= 1u << i;
  }
  if (ready == 0) return any;
  uint64_t vals[32];
  for (int j = 0; j < n; j++) vals[j] = lane[j].val;
  for (int j = 0; j < n; j++) {
    if (!(ready >> j & 1)) continue;
    {
      uint32_t parts = (lane[j].mask32 | 1u << j) & alive;
      thr *u = &lane[j];
      const inst *ui = u->wait;
      uint64_t d = 0;
      bool p = false;
      switch (ui->op) {
        case I_BAR_WARP: break;
        case I_SHFL: {
          unsigned l = (unsigned)j, bval = (unsigned)(u->b & 31), cval = (unsigned)(u->c & 31);
          unsigned seg = (unsigned)(u->c >> 8) & 31;
          unsigned maxl = (l & seg) | (cval & ~seg), minl = l & seg;
          int src;
          switch (ui->mod) {
            case SHFL_UP: src = (int)l - (int)bval; p = src >= (int)maxl; break;
            case SHFL_DOWN: src = (int)(l + bval); p = src <= (int)maxl; break;
            case SHFL_BFLY: src = (int)(l ^ bval); p = src <= (int)maxl; break;
            default: src = (int)(minl | (bval & ~seg)); p = src <= (int)maxl; break;
          }
          if (!p) src = (int)l;
          /* the lanes converged at this shuffle give their values, in the
          ** mask or not; one that exited or is elsewhere: undefined, poison */
          uint32_t conv = parts;
          for (int q = 0; q < n; q++)
            if ((ready >> q & 1) && lane[q].wait == ui) conv |= 1u << q;
          d = src >= 0 && src < 32 && (conv >> src & 1) ? vals[src] : POISON;
          break;
        }
        case I_VOTE: {
          uint32_t ballot = 0;
          bool all = true, anyv = false, first = vals[__builtin_ctz(parts)] & 1, uni = true;
          for (int q = 0; q < n; q++)
            if (parts >> q & 1) {
              bool v = vals[q] & 1;
              if (v) ballot |= 1u << q;
              all = all && v;
              anyv = anyv || v;
              uni = uni && v == first;
            }
          d = ui->mod == VOTE_BALLOT ? ballot : ui->mod == VOTE_ALL ? all : ui->mod == VOTE_ANY ? anyv : uni;
          break;
        }
        case I_MATCH: {
          uint32_t same = 0;
          int bits = ui->t.bits;
          for (int q = 0; q < n; q++)
            if ((parts >> q & 1) && zx(vals[q], bits) == zx(u->val, bits)) same |= 1u << q;
          if (ui->flags & F_ALL) { p = same == parts; d = p ? parts : 0; }
          else d = same;
          break;
        }
        case I_ELECT:   /* the leader: the lowest live lane, the same every time */
          d = (uint64_t)__builtin_ctz(parts);
          p = (unsigned)j == d;
          break;
        case I_REDUX: {
          ptype ty = ui->t;
          uint64_t acc = 0;
          bool firstv = true;
          for (int q = 0; q < n; q++) {
            if (!(parts >> q & 1)) continue;
            uint64_t v = zx(vals[q], 32);
            if (firstv) { acc = v; firstv = false; continue; }
            switch (ui->mod) {
              case ATOM_ADD: acc += v; break;
              case ATOM_AND: acc &= v; break;
              case ATOM_OR: acc |= v; break;
              case ATOM_XOR: acc ^= v; break;
              case ATOM_MIN: acc = ty.k == K_S ? (sx(v, 32) < sx(acc, 32) ? v : acc) : (v < acc ? v : acc); break;
              case ATOM_MAX: acc = ty.k == K_S ? (sx(v, 32) > sx(acc, 32) ? v : acc) : (v > acc ? v : acc); break;
            }
          }
          d = zx(acc, 32);
          break;
        }
      }
      finish_warp_op(b, u, d, p);
    }
  }
  return true;
}

static bool resolve_barriers(blk *b) {
  bool any = false;
  unsigned alive = 0;
  for (int i = 0; i < b->n; i++) alive += b->t[i].state != TS_EXIT;
  for (int id = 0; id < 16; id++) {
    if (b->bars[id].arrived == 0) continue;
    unsigned want = b->bars[id].expected ? b->bars[id].expected : alive;
    if (b->bars[id].arrived < want) continue;
    for (int i = 0; i < b->n; i++) {
      thr *t = &b->t[i];
      if (t->state != TS_BAR || t->bar != id) continue;
      const inst *in = t->wait;
      if (in->op == I_BAR_RED) {
        uint64_t d = in->mod == BAR_RED_POPC ? b->bars[id].popc : in->mod == BAR_RED_AND ? b->bars[id].and_ : b->bars[id].or_;
        put(t, &in->o[0], d);
      }
      t->state = TS_RUN;
      t->pc++;
    }
    b->bars[id].arrived = 0;
    b->bars[id].expected = 0;
    b->bars[id].popc = 0;
    b->bars[id].and_ = true;
    b->bars[id].or_ = false;
    any = true;
  }
  return any;
}

/* ---- blocks --------------------------------------------------------------------- */

static void run_block(blk *b, unsigned long long id) {
  launch *L = b->L;
  b->ctaid[0] = (unsigned)(id % L->grid.x);
  b->ctaid[1] = (unsigned)(id / L->grid.x % L->grid.y);
  b->ctaid[2] = (unsigned)(id / L->grid.x / L->grid.y);
  memset(b->shared, UNDEFINED_BYTE, b->shared_size);   /* shared memory starts undefined */
  for (int i = 0; i < 16; i++) {
    b->bars[i].arrived = b->bars[i].expected = b->bars[i].popc = 0;
    b->bars[i].and_ = true;
    b->bars[i].or_ = false;
  }
  const func *e = L->entry;
  int fn = (int)(e - L->m->fns);
  for (int i = 0; i < b->n; i++) {
    thr *t = &b->t[i];
    t->state = TS_RUN;
    t->depth = 0;
    if (t->frames == NULL) {
      t->fcap = 8;
      t->frames = malloc((size_t)t->fcap * sizeof *t->frames);
    }
    t->rtop = t->ptop = t->ltop = t->used = 0;
    t->carry = false;
    t->linear = (unsigned)i;
    t->tid[0] = (unsigned)i % L->block.x;
    t->tid[1] = (unsigned)i / L->block.x % L->block.y;
    t->tid[2] = (unsigned)i / L->block.x / L->block.y;
    t->lane = (unsigned)i % 32;
    t->warp = (unsigned)i / 32;
    enter_frame(b, t, fn);
    if (e->formal_bytes) memcpy(t->param, L->params, e->formal_bytes);
  }
  b->rng = L->seed ^ (id * 0xA0761D6478BD642Fu);
  for (;;) {
    bool ran = false;
    shuffle_order(b);
    for (int k = 0; k < b->n && !b->stop; k++) {
      thr *t = &b->t[b->order[k]];
      if (t->state == TS_RUN) { run_thread(b, t); ran = true; }
    }
    if (b->stop) return;
    bool released = resolve_barriers(b);
    for (int w = 0; w * 32 < b->n; w++) released = resolve_warp(b, w) || released;
    bool done = true;
    for (int i = 0; i < b->n; i++)
      if (b->t[i].state != TS_EXIT) done = false;
    if (done) return;
    if (!ran && !released) {
      /* every live thread waits for one that will not come */
      for (int i = 0; i < b->n; i++) {
        thr *t = &b->t[i];
        if (t->state == TS_EXIT) continue;
        fault(b, t, PTX_LAUNCH_FAILED, "a deadlock: this thread waits at %s, and not every thread it waits for can reach it",
              t->state == TS_BAR ? "a barrier" : "a warp operation");
        return;
      }
    }
  }
}

static void *worker(void *arg) {
  blk *b = arg;
  launch *L = b->L;
  for (;;) {
    if (atomic_load(&L->err) != PTX_OK) break;
    unsigned long long id = atomic_fetch_add(&L->next, 1);
    if (id >= L->nblocks) break;
    run_block(b, id);
  }
  return NULL;
}

static int workers(void) {
  const char *s = getenv("FAKE_CUDA_WORKERS");
  long n = s ? atol(s) : sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 16 ? 16 : (int)n;
}

int ptx_launch(ptx_module *m, int e, ptx_dims grid, ptx_dims block, size_t dynamic_shared,
               const void *params, const ptx_host *host, char *err, size_t errlen) {
  launch L;
  memset(&L, 0, sizeof L);
  L.m = m;
  L.entry = &m->fns[e];
  L.grid = grid;
  L.block = block;
  L.dynamic_shared = dynamic_shared;
  L.params = params;
  L.host = host;
  L.msg = err;
  L.msglen = errlen;
  L.nblocks = (unsigned long long)grid.x * grid.y * grid.z;
  L.cooperative = host->cooperative != 0;
  L.gridws[0] = sizeof L.gridws;
  L.seed = sched_seed();
  pthread_mutex_init(&L.mu, NULL);
  atomic_init(&L.next, 0);
  atomic_init(&L.err, PTX_OK);
  if (errlen) err[0] = '\0';
  for (int i = 0; i < m->nfns; i++)
    if (m->fns[i].local_bytes) L.has_local = true;
  /* the driver's stack limit, raised to what the kernel needs when that is
  ** known before it runs (ptx_entry_stack_bytes) */
  size_t need = ptx_entry_stack_bytes(m, e), limit = host->stack ? host->stack : 1024;
  L.stack = limit > need ? limit : need;
  L.stack = (L.stack + 15) & ~(size_t)15;
  /* the local memory the .local variables take: the stack as counted
  ** without a cubin; with one, room for them beside it, and for a
  ** recursion the stack again times the most a function's variables take
  ** for each byte of its frame (at most 8: past that, a recursion the
  ** stack holds may fault for the fake's want of room, and says so) */
  L.stride = L.stack;
  const size_t *frames = m->fns[e].cubin_frames;
  if (frames) {
    bool recursive;
    size_t vars = (entry_deepest(m, e, false, &recursive) + 15) & ~(size_t)15, ratio = 1;
    for (int i = 0; i < m->nfns && recursive; i++) {
      size_t takes = ((m->fns[i].local_bytes + 15) & ~(size_t)15) + CALL_FRAME_BYTES;
      if (m->fns[i].defined && frames[i] && (takes + frames[i] - 1) / frames[i] > ratio)
        ratio = (takes + frames[i] - 1) / frames[i];
    }
    L.stride = L.stack + vars + (recursive ? L.stack * (ratio < 8 ? ratio : 8) : 0);
  }
  int nthreads = (int)(block.x * block.y * block.z);
  /* a cooperative launch's blocks wait for each other: one thread each
  ** (the driver checked that the grid fits the device at once) */
  int nw = L.cooperative ? (int)L.nblocks : workers();
  if ((unsigned long long)nw > L.nblocks) nw = (int)L.nblocks;
  blk *bs = calloc((size_t)nw, sizeof *bs);
  size_t shared = L.entry->shared_bytes_aligned + dynamic_shared;
  for (int w = 0; w < nw; w++) {
    blk *b = &bs[w];
    b->L = &L;
    b->n = nthreads;
    b->smid = w;
    b->t = calloc((size_t)nthreads, sizeof *b->t);
    b->order = calloc((size_t)nthreads, sizeof *b->order);
    b->shared_size = shared;
    b->shared = aligned_alloc(256, (shared + 255) / 256 * 256 + 256);
    if (L.has_local) {
      void *p = mmap(NULL, (size_t)nthreads * L.stride, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      b->local = p == MAP_FAILED ? NULL : p;
    }
  }
  pthread_t *th = calloc((size_t)nw, sizeof *th);
  for (int w = 1; w < nw; w++) pthread_create(&th[w], NULL, worker, &bs[w]);
  worker(&bs[0]);
  for (int w = 1; w < nw; w++) pthread_join(th[w], NULL);
  unsigned long long total = 0;
  for (int w = 0; w < nw; w++) {
    blk *b = &bs[w];
    total += b->icount;
    for (int i = 0; i < nthreads; i++) { free(b->t[i].rstack); free(b->t[i].pstack); free(b->t[i].frames); }
    free(b->t);
    free(b->order);
    free(b->shared);
    if (b->local) munmap(b->local, (size_t)nthreads * L.stride);
  }
  atomic_fetch_add(&executed, total);
  free(bs);
  free(th);
  pthread_mutex_destroy(&L.mu);
  return atomic_load(&L.err);
}
