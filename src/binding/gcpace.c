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
#include <stdatomic.h>

#define SLACK ((size_t)16 << 20)     /* small programs never collect for it */

static atomic_size_t live;           /* bytes of live buffers */
static atomic_size_t mark;           /* live after the last collection */

size_t lc_gcpace_live(void) { return atomic_load_explicit(&live, memory_order_relaxed); }

void lc_gcpace_added(size_t nbytes) {
  atomic_fetch_add_explicit(&live, nbytes, memory_order_relaxed);
}

void lc_gcpace_dropped(size_t nbytes) {
  atomic_fetch_sub_explicit(&live, nbytes, memory_order_relaxed);
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
