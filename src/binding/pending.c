/*
** pending: per buffer, a record with one slot per stream that queued work
** on its memory, holding an event recorded after that work. A host access
** waits for the slots' events (never for the whole device), then frees the
** slots it waited for, unless a newer record came meanwhile (gen).
**
** One memory may have several buffers (pending.h), so a record that holds
** work is also on one process-wide list, with its buffer's host addresses,
** where an access looks for the other records over the bytes it touches.
** An access holds a reference to each record it waits on: a buffer freed
** meanwhile takes its record off the list, and the last reference frees
** it. A record whose work is done leaves the list at the next access that
** looks at it, so that accesses take the fast path again.
**
** Locks: mu (the list) before a record's spin lock; no backend call and no
** Lua under mu.
*/
#include "pending.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "env.h"

typedef struct lc_pendrec {
  lc_buffer_note note;              /* first: the buffer's pend points here */
  atomic_int refs;                  /* the buffer's, and each waiting access's */
  const lc_backend *be;
  uintptr_t lo, hi;                 /* the buffer's memory, at host addresses */
  bool foreign;                     /* the buffer's (buffer.h) */
  atomic_flag using;                /* the spin lock of what follows */
  bool listed;                      /* on the list (changed under mu too) */
  bool gone;                        /* the buffer was freed: off the list for good */
  struct lc_pendrec *prev, *next;   /* the list, under mu */
  struct lc_pending {
    lc_stream *stream;              /* held (stream_retain); NULL: the slot is free */
    lc_event *event;                /* kept for the slot's next use */
    bool writes;                    /* the work writes the memory (else only reads it) */
    unsigned gen;                   /* counts records */
  } slot[LC_BUFFER_STREAMS];
} lc_pendrec;

atomic_int lc_pending_held, lc_pending_held_foreign;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static lc_pendrec *list;            /* the records holding work, under mu */

static void lock(lc_pendrec *r) {
  while (atomic_flag_test_and_set_explicit(&r->using, memory_order_acquire)) {}
}

static void unlock(lc_pendrec *r) {
  atomic_flag_clear_explicit(&r->using, memory_order_release);
}

static bool any_slot(const lc_pendrec *r) {
  for (int i = 0; i < LC_BUFFER_STREAMS; i++)
    if (r->slot[i].stream) return true;
  return false;
}

/* On the list while r holds work and its buffer lives; going: it does not. */
static void relist(lc_pendrec *r, bool going) {
  pthread_mutex_lock(&mu);
  lock(r);
  r->gone |= going;
  bool on = !r->gone && any_slot(r);
  if (on != r->listed) {
    if (on) {
      r->prev = NULL;
      r->next = list;
      if (list) list->prev = r;
      list = r;
    } else {
      if (r->prev) r->prev->next = r->next;
      else list = r->next;
      if (r->next) r->next->prev = r->prev;
    }
    r->listed = on;
    int d = on ? 1 : -1;
    atomic_fetch_add_explicit(&lc_pending_held, d, memory_order_release);
    if (r->foreign) atomic_fetch_add_explicit(&lc_pending_held_foreign, d, memory_order_release);
  }
  unlock(r);
  pthread_mutex_unlock(&mu);
}

static void rec_release(lc_pendrec *r) {
  if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) != 1) return;
  for (int i = 0; i < LC_BUFFER_STREAMS; i++) {
    if (r->slot[i].stream) r->be->stream_release(r->slot[i].stream);
    if (r->slot[i].event) r->be->event_destroy(r->slot[i].event);
  }
  free(r);
}

/* The buffer goes (after the work queued on it): its record does too. */
static void record_free(lc_buffer_note *note) {
  lc_pendrec *r = (lc_pendrec *)note;
  relist(r, true);
  rec_release(r);
}

/* b's record, made at the first call; NULL when out of memory. */
static lc_pendrec *record_of(lc_buffer *b) {
  lc_pendrec *r = (lc_pendrec *)atomic_load_explicit(&b->pend, memory_order_acquire);
  if (r) return r;
  r = calloc(1, sizeof *r);
  if (r == NULL) return NULL;
  r->note.free = record_free;
  atomic_init(&r->refs, 1);
  r->be = b->backend;
  r->lo = (uintptr_t)b->ptr;
  r->hi = r->lo + b->nbytes;
  r->foreign = b->foreign;
  atomic_flag_clear(&r->using);
  lc_buffer_note *first = NULL;       /* another thread's may have come first */
  if (!atomic_compare_exchange_strong_explicit(&b->pend, &first, &r->note,
                                               memory_order_acq_rel, memory_order_acquire)) {
    free(r);
    return (lc_pendrec *)first;
  }
  return r;
}

/* Out of line: its frame (an error buffer, the streams let go of) is not
** set up for the device memory the host cannot touch, three times a + b. */
static __attribute__((noinline)) void add_record(lc_buffer *b, lc_stream *s, bool writes);

void lc_pending_add(lc_buffer *b, lc_stream *s, bool writes) {
  if (lc_kind_host_accessible(b->kind)) add_record(b, s, writes);
}

static void add_record(lc_buffer *b, lc_stream *s, bool writes) {
  const lc_backend *be = b->backend;
  char err[LC_ERRLEN];
  lc_pendrec *r = record_of(b);
  bool kept = false, unlisted = false;
  lc_stream *done[LC_BUFFER_STREAMS];
  int ndone = 0;
  if (r) {
    lock(r);
    struct lc_pending *p = NULL;
    for (int i = 0; i < LC_BUFFER_STREAMS && p == NULL; i++)
      if (r->slot[i].stream == s) p = &r->slot[i];
    for (int i = 0; i < LC_BUFFER_STREAMS && p == NULL; i++)
      if (r->slot[i].stream == NULL) p = &r->slot[i];
    /* every slot taken: those whose work is done are free again (a
    ** buffer used on many streams that nothing reads in between) */
    for (int i = 0; i < LC_BUFFER_STREAMS && p == NULL; i++) {
      struct lc_pending *q = &r->slot[i];
      bool finished = false;
      if (be->event_query(q->event, &finished, err) != LC_OK || !finished) continue;
      done[ndone++] = q->stream;
      q->stream = NULL;
      q->writes = false;
    }
    for (int i = 0; i < LC_BUFFER_STREAMS && p == NULL; i++)
      if (r->slot[i].stream == NULL) p = &r->slot[i];
    kept = p != NULL && (p->event || be->event_create(&p->event, false, err) == LC_OK) &&
           be->event_record(p->event, s, err) == LC_OK;
    if (kept) {
      if (p->stream == NULL) {
        be->stream_retain(s);
        p->stream = s;
        p->writes = false;
      }
      p->writes |= writes;
      p->gen++;
      atomic_store_explicit(&b->busy, true, memory_order_release);
      unlisted = !r->listed;
    }
    unlock(r);
  }
  for (int i = 0; i < ndone; i++) be->stream_release(done[i]);
  if (unlisted) relist(r, false);
  /* more streams than slots, or no event: the work is waited for now (all
  ** of it, reporting nothing: its failure stays for the caller to see) */
  if (!kept) be->synchronize(NULL);
}

/* Work of r's not done yet, in strict mode: what the error names. */
typedef struct late_work {
  lc_stream *stream;                /* NULL: none (only printed, never used) */
  bool writes;
  bool alias;                       /* queued through another buffer */
} late_work;

/* An access (writing, or reading) to bytes that overlap r's memory or not:
** wait for r's work that conflicts with it (strict: see that it is done);
** work that does not conflict is forgotten once done. Then forget what is
** done, unless recorded again meanwhile; busy (the own buffer's flag, or
** NULL) says whether r holds work still. LC_OK, or a failure in err (or
** late->stream set) with nothing forgotten. */
static int wait_record(lc_pendrec *r, atomic_bool *busy, bool overlaps, bool writing,
                       bool strict, late_work *late, char *err) {
  const lc_backend *be = r->be;
  struct {
    int slot;
    unsigned gen;
    lc_stream *s;
    lc_event *e;
    bool writes, conflicts, finished;
  } w[LC_BUFFER_STREAMS];
  int n = 0;
  lock(r);
  for (int i = 0; i < LC_BUFFER_STREAMS; i++) {
    struct lc_pending *p = &r->slot[i];
    if (p->stream == NULL) continue;
    be->stream_retain(p->stream);          /* kept while waited for, outside the lock */
    w[n].slot = i;
    w[n].gen = p->gen;
    w[n].s = p->stream;
    w[n].e = p->event;
    w[n].writes = p->writes;
    w[n].conflicts = overlaps && (writing || p->writes);
    w[n].finished = false;
    n++;
  }
  unlock(r);
  int rc = LC_OK, lateslot = -1;
  for (int k = 0; k < n && rc == LC_OK && lateslot < 0; k++) {
    bool done = false;
    if (!w[k].conflicts) {
      /* work that only reads, as this access does, or other bytes: forgotten
      ** once done, so that later accesses take the fast paths again */
      char ignored[LC_ERRLEN];
      if (be->event_query(w[k].e, &done, ignored) != LC_OK) done = false;
    } else if (strict) {
      rc = be->event_query(w[k].e, &done, err);
      if (rc == LC_OK && !done) lateslot = k;
    } else {
      rc = be->event_synchronize(w[k].e, err);
      done = rc == LC_OK;
    }
    w[k].finished = done;
  }
  if (rc != LC_OK || lateslot >= 0) {
    if (lateslot >= 0) {
      late->stream = w[lateslot].s;
      late->writes = w[lateslot].writes;
    }
    for (int k = 0; k < n; k++) be->stream_release(w[k].s);
    return rc;
  }
  lc_stream *gone[LC_BUFFER_STREAMS];
  int ngone = 0;
  lock(r);
  for (int k = 0; k < n; k++) {
    struct lc_pending *p = &r->slot[w[k].slot];
    if (w[k].finished && p->stream == w[k].s && p->gen == w[k].gen) {
      gone[ngone++] = p->stream;
      p->stream = NULL;
      p->writes = false;
    }
  }
  bool held = any_slot(r), off = r->listed && !held;
  if (busy) atomic_store_explicit(busy, held, memory_order_release);
  unlock(r);
  if (off) relist(r, false);
  for (int k = 0; k < ngone; k++) be->stream_release(gone[k]);
  for (int k = 0; k < n; k++) be->stream_release(w[k].s);
  return LC_OK;
}

enum { FEW = 16 };

/* wait_record for the records on the list, but own, that the access to a
** must look at: every one for an access through a foreign buffer, the
** foreign ones for another (pending.h); those over other bytes are only
** forgotten when done. */
static int wait_others(const lc_array *a, const lc_pendrec *own, bool writing, bool strict,
                       late_work *late, char *err) {
  const lc_buffer *b = a->buf;
  int64_t lo, hi;
  lc_layout_extent(&a->lay, a->dtype->size, &lo, &hi);
  uintptr_t alo = (uintptr_t)b->ptr + (uintptr_t)lo, ahi = (uintptr_t)b->ptr + (uintptr_t)hi;
  lc_pendrec *few[FEW], **found = few;
  int n = 0, cap = FEW;
  bool missed = false;
  pthread_mutex_lock(&mu);
  for (lc_pendrec *r = list; r != NULL && !missed; r = r->next) {
    if (r == own || !(b->foreign || r->foreign)) continue;
    if (n == cap) {
      lc_pendrec **more = malloc(2 * (size_t)cap * sizeof *more);
      if (more == NULL) {
        missed = true;
        continue;
      }
      memcpy(more, found, (size_t)n * sizeof *more);
      if (found != few) free(found);
      found = more;
      cap *= 2;
    }
    atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
    found[n++] = r;
  }
  pthread_mutex_unlock(&mu);
  int rc = LC_OK;
  for (int k = 0; k < n; k++) {
    lc_pendrec *r = found[k];
    bool overlaps = alo < ahi && r->lo < ahi && alo < r->hi;
    if (rc == LC_OK && late->stream == NULL) {
      rc = wait_record(r, NULL, overlaps, writing, strict, late, err);
      late->alias = late->stream != NULL;
    }
    rec_release(r);
  }
  if (found != few) free(found);
  /* no memory to hold them all: wait for all work instead (as lc_pending_add) */
  if (missed && rc == LC_OK && late->stream == NULL) b->backend->synchronize(NULL);
  return rc;
}

/* The message's names: the array, and the stream as tostring shows it. */
static void describe(const lc_array *a, const late_work *late, char *what, size_t wlen,
                     char *stream, size_t slen) {
  char shape[128];
  lc_shape_format(shape, sizeof shape, a->lay.ndim, a->lay.shape);
  snprintf(what, wlen, "the %s %s array of shape %s%s", lc_kind_names[lc_array_kind(a)],
           a->dtype->name, shape,
           late->alias ? ", through another array over the same memory" : "");
  if (late->stream == a->buf->backend->default_stream()) snprintf(stream, slen, "the default stream");
  else snprintf(stream, slen, "luacuda.stream(%p)", (void *)late->stream);
}

void lc_pending_wait_slow(lua_State *L, const lc_array *a, bool writing, const char *fname) {
  lc_buffer *b = a->buf;
  lc_pendrec *own = (lc_pendrec *)atomic_load_explicit(&b->pend, memory_order_acquire);
  bool strict = lc_settings_get()->strict_async;
  late_work late = {NULL, false, false};
  char err[LC_ERRLEN];
  int rc = LC_OK;
  if (own && atomic_load_explicit(&b->busy, memory_order_acquire))
    rc = wait_record(own, &b->busy, true, writing, strict, &late, err);
  if (rc == LC_OK && late.stream == NULL &&
      atomic_load_explicit(b->foreign ? &lc_pending_held : &lc_pending_held_foreign,
                           memory_order_acquire) != 0)
    rc = wait_others(a, own, writing, strict, &late, err);
  if (rc != LC_OK) lc_error(L, fname, "%s", err);
  if (late.stream) {
    char what[320], stream[64];
    describe(a, &late, what, sizeof what, stream, sizeof stream);
    lc_error(L, fname, "work queued on %s still %s %s (LUACUDA_STRICT_ASYNC=1: synchronize "
             "the stream, or an event recorded after that work, first)", stream,
             late.writes ? "writes" : "reads", what);
  }
}

