/*
** gcpace: a full collection each time the bytes of live buffers grow by
** half since the last one. A step of the incremental collector in
** proportion to the bytes (lua_gc(L, LUA_GCSTEP, kb), as Torch did) is not
** enough: after a step that ends a cycle, Lua's own allocations start the
** next one, which marks the array still in a variable, and the next big
** step ends that cycle without freeing it; `for i = 1, 20 do c = a + b end`
** on 2^24 floats kept all twenty results (1.4 GB against NumPy's 290 MB).
** The step stays (it runs finalizers in the middle of calls, as any
** allocation may); a full collection beside it frees every array dropped
** so far, and at this pace costs, per byte allocated, what Lua's own pause
** costs.
**
** Process-wide: buffers may move between states, and the memory is one.
*/
#include "gcpace.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define SLACK ((size_t)16 << 20)     /* small programs never collect for it */

/* A small buffer's bytes are a change of its thread's own, folded into
** live when it passes BOUND either way (and when the thread ends): no
** locked instruction for each of the arrays made and dropped by the
** thousand. Larger buffers count at once. live is so within BOUND a thread
** of the truth, noise beside SLACK. A buffer may be dropped by a thread
** other than the one that made it (a finalizer, the queue's executor), so
** live may read below zero for a while: read as none. */
#define BOUND ((size_t)64 << 10)

static atomic_size_t live;           /* bytes of live buffers, but for the threads' changes */
static atomic_size_t mark;           /* live after the last collection */

/* initial-exec: a load at a fixed offset from the thread pointer, where the
** default model for a module calls __tls_get_addr at each use (some ten
** instructions); the 16 bytes come out of the static TLS that the C
** library keeps spare for modules loaded later, as Lua loads this one */
typedef struct mine {
  long long change;                  /* this thread's, not yet in live */
  bool keyed;                        /* change is folded when the thread ends */
} mine;
static _Thread_local mine my __attribute__((tls_model("initial-exec")));
static pthread_key_t key;
static bool key_made;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void fold(void) {
  atomic_fetch_add_explicit(&live, (size_t)my.change, memory_order_relaxed);   /* modulo 2^n */
  my.change = 0;
}

/* keyed again by a change after this (another destructor's drop): the
** C library then calls this again */
static void at_thread_end(void *unused) {
  (void)unused;
  fold();
  my.keyed = false;
}

/* the destructor stays callable: core.so is never unmapped (-z nodelete) */
static void make_key(void) { key_made = pthread_key_create(&key, at_thread_end) == 0; }

/* once a thread: its change will be folded at its end; false (count at
** once) when that cannot be arranged */
static bool arrange_fold(void) {
  pthread_once(&key_once, make_key);
  if (!key_made || pthread_setspecific(key, &my) != 0) return false;
  my.keyed = true;
  return true;
}

size_t lc_gcpace_live(void) {
  size_t n = atomic_load_explicit(&live, memory_order_relaxed) + (size_t)my.change;
  return n > SIZE_MAX / 2 ? 0 : n;
}

/* a change of live by delta (modulo 2^n): a small one is the thread's own */
static inline void change_by(size_t delta, bool small) {
  if (small) {
    my.change += (long long)delta;
    if (my.change >= (long long)BOUND || my.change <= -(long long)BOUND) fold();
  } else {
    atomic_fetch_add_explicit(&live, delta, memory_order_relaxed);
  }
}

/* the first small change of a thread, and large ones */
static __attribute__((cold, noinline)) void change_slowly(size_t delta, bool small) {
  change_by(delta, small && arrange_fold());
}

void lc_gcpace_added(size_t nbytes) {
  if (nbytes < BOUND && my.keyed) change_by(nbytes, true);
  else change_slowly(nbytes, nbytes < BOUND);
}

void lc_gcpace_dropped(size_t nbytes) {
  if (nbytes < BOUND && my.keyed) change_by(-nbytes, true);
  else change_slowly(-nbytes, nbytes < BOUND);
}

void lc_gcpace_before(lua_State *L, size_t nbytes) {
  /* a step in proportion, as before: the finalizers it runs in the middle
  ** of a call are what the gate is for (reentry_spec provokes them so) */
  size_t kb = nbytes >> 10;
  if (kb > 0) lua_gc(L, LUA_GCSTEP, kb > INT_MAX ? INT_MAX : (int)kb);
  size_t now = lc_gcpace_live(), m = atomic_load_explicit(&mark, memory_order_relaxed);
  size_t limit = m + m / 2 + SLACK;
  if (limit < m) return;                           /* overflow: no limit */
  if (now + nbytes < now || now + nbytes > limit) {
    lua_gc(L, LUA_GCCOLLECT, 0);
    /* what survived is the measure of the next pause; the finalizers ran,
    ** and they let go of the buffers of the arrays collected */
    atomic_store_explicit(&mark, lc_gcpace_live(), memory_order_relaxed);
  }
}
