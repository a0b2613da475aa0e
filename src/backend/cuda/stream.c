/*
** stream: streams and events as CUstream and CUevent (the default stream
** is the legacy one), and the releases deferred behind queued work.
*/
#include "cuda.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* ---- deferred releases ------------------------------------------------------
** A release waits for the work queued before it on every device: what it
** frees (pinned, mapped or registered memory, a module, a stream's holder)
** may be in use by any device's queued work, whichever device is current.
** An event recorded on each stream that still has work marks that point
** (never on a legacy stream unless it has work of its own: a record there
** would make every blocking stream wait), each in its device's context,
** and the list is drained, in order, at the start of later calls. Host
** functions cannot be used: a release may call the driver. A device with
** nothing queued since its last synchronize is skipped; when no device has
** any, or no stream has work left, release at once. */

enum { MAXEV = 8 };             /* busy streams one record follows; more: legacy streams */

typedef struct pending {
  struct pending *next;
  int nev, ncreated;            /* events recorded; events owned (kept when spare) */
  CUevent ev[MAXEV];
  int evdev[MAXEV];             /* whose context each event belongs to */
  void (*release)(void *);
  void *ud;
} pending;

static pthread_mutex_t pend_mu = PTHREAD_MUTEX_INITIALIZER;
static pending *phead, **ptail = &phead;
static atomic_int npending;
/* Drained records keep their events for the next release: creating an
** event per free would cost a driver call pair each. Under pend_mu. */
static pending *spare;
static int nspare;
enum { MAX_SPARE = 64 };

/* Work queued on the current device (its count; a synchronize of the
** device settles what was counted before it). */
void lc_cuda_queued(void) { atomic_fetch_add(&lc_cuda_devices[lc_cuda_current].queued, 1); }

/* Everything counted on device dev up to g is done. */
static void settle(int dev, uint_fast64_t g) {
  atomic_uint_fast64_t *settled = &lc_cuda_devices[dev].settled;
  uint_fast64_t s = atomic_load(settled);
  while (s < g && !atomic_compare_exchange_weak(settled, &s, g)) {}
}

/* Has device dev work queued since its last synchronize? (A device never
** used has none: its counts are 0.) */
static bool unsettled(int dev) {
  const lc_cuda_device *d = &lc_cuda_devices[dev];
  return atomic_load(&d->settled) < atomic_load(&d->queued);
}

/* Has every event of p happened? A failure (a sticky error marks the
** context) counts as done. */
static bool pending_done(const pending *p) {
  for (int i = 0; i < p->nev; i++) {
    CUresult r = lc_cu.EventQuery(p->ev[i]);
    if (r == CUDA_ERROR_NOT_READY) return false;
    lc_cuda_check(r, "cuEventQuery", NULL);
  }
  return true;
}

static void pending_destroy(pending *p) {
  for (int i = 0; i < p->ncreated; i++) lc_cu.EventDestroy(p->ev[i]);
  free(p);
}

/* Keep p's events for the next release, or destroy them when there are
** spares enough. */
static void pending_spare(pending *p) {
  pthread_mutex_lock(&pend_mu);
  bool keep = nspare < MAX_SPARE;
  if (keep) {
    p->next = spare;
    spare = p;
    nspare++;
  }
  pthread_mutex_unlock(&pend_mu);
  if (!keep) pending_destroy(p);
}

/* Run the releases whose events have completed (all of them once the
** context is unusable: nothing is running any more). Callers have entered
** the context, or found it broken. */
void lc_cuda_drain(void) {
  if (atomic_load(&npending) == 0) return;
  pending *ready = NULL, **rt = &ready;
  pthread_mutex_lock(&pend_mu);
  while (phead) {
    if (!atomic_load(&lc_cuda_broken) && !pending_done(phead)) break;
    pending *p = phead;
    phead = p->next;
    atomic_fetch_sub(&npending, 1);
    *rt = p;
    rt = &p->next;
  }
  *rt = NULL;                  /* the ready ones end here; the rest wait on */
  if (phead == NULL) ptail = &phead;
  pthread_mutex_unlock(&pend_mu);
  while (ready) {      /* outside the lock: a release may defer again */
    pending *p = ready;
    ready = p->next;
    p->release(p->ud);
    if (atomic_load(&lc_cuda_broken)) {          /* the driver may not be called */
      free(p);
      continue;
    }
    pending_spare(p);
  }
}

/* A record, from the spares when there is one. */
static pending *pending_new(void) {
  pthread_mutex_lock(&pend_mu);
  pending *p = spare;
  if (p) {
    spare = p->next;
    nspare--;
  }
  pthread_mutex_unlock(&pend_mu);
  if (p) {
    p->nev = 0;
    return p;
  }
  return calloc(1, sizeof *p);
}

/* Record p's next event on st, a stream of device dev, whose context is
** current: a spare event of p's made in that context, else a new one (in
** place of a spare of another context when p holds as many as it can). */
static bool pending_record(pending *p, CUstream st, int dev) {
  int i = p->nev, j = i;
  while (j < p->ncreated && p->evdev[j] != dev) j++;
  if (j == p->ncreated) {
    if (p->ncreated == MAXEV) {               /* the last spare goes: i < MAXEV, so j >= i */
      j = --p->ncreated;
      lc_cu.EventDestroy(p->ev[j]);
    }
    if (lc_cu.EventCreate(&p->ev[j], CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) return false;
    p->evdev[j] = dev;
    p->ncreated++;
  }
  CUevent e = p->ev[j];                       /* to slot i, the first not recorded */
  p->ev[j] = p->ev[i];
  p->evdev[j] = p->evdev[i];
  p->ev[i] = e;
  p->evdev[i] = dev;
  if (lc_cu.EventRecord(e, st) != CUDA_SUCCESS) return false;
  p->nev++;
  return true;
}

static bool record_busy_streams(pending *p);

/* Does any device have work queued since its last synchronize? */
static bool any_unsettled(void) {
  for (int dev = 0, n = lc_cuda_device_count(); dev < n; dev++)
    if (unsettled(dev)) return true;
  return false;
}

/* Wait for every device that has work queued (each context made current
** for its wait; the current device's again after). */
static void wait_devices(void) {
  int here = lc_cuda_current;
  for (int dev = 0, n = lc_cuda_device_count(); dev < n; dev++) {
    if (!unsettled(dev)) continue;
    lc_cuda_current = dev;
    uint_fast64_t g = atomic_load(&lc_cuda_devices[dev].queued);
    if (lc_cuda_enter_quietly() && lc_cu.CtxSynchronize() == CUDA_SUCCESS) settle(dev, g);
  }
  lc_cuda_current = here;
  lc_cuda_enter_quietly();
}

void lc_cuda_defer(void (*release)(void *), void *ud) {
  if (!lc_cuda_enter_quietly()) {            /* nothing runs on a broken context */
    lc_cuda_drain();
    release(ud);
    return;
  }
  lc_cuda_drain();
  if (!any_unsettled()) {
    release(ud);
    return;
  }
  pending *p = pending_new();
  bool ok = p != NULL && record_busy_streams(p);
  if (!ok) {                         /* waiting is the safe fallback */
    if (p) pending_destroy(p);
    wait_devices();
    release(ud);
    return;
  }
  if (p->nev == 0) {                 /* every stream is done already */
    pending_spare(p);
    release(ud);
    return;
  }
  p->release = release;
  p->ud = ud;
  p->next = NULL;
  pthread_mutex_lock(&pend_mu);
  *ptail = p;
  ptail = &p->next;
  atomic_fetch_add(&npending, 1);
  pthread_mutex_unlock(&pend_mu);
}

int lc_cuda_synchronize(char *err) {
  char local[LC_ERRLEN];
  int rc = lc_cuda_enter(err ? err : local);
  if (rc != LC_OK) {
    lc_cuda_drain();
    return err ? rc : LC_OK;
  }
  int dev = lc_cuda_current;                 /* this device's work only */
  uint_fast64_t g = atomic_load(&lc_cuda_devices[dev].queued);
  CUresult r = lc_cu.CtxSynchronize();
  if (r == CUDA_SUCCESS) settle(dev, g);
  rc = lc_cuda_check(r, "cuCtxSynchronize", err ? err : local);
  lc_cuda_drain();
  return err ? rc : LC_OK;
}

int lc_cuda_temp_alloc(size_t n, CUstream st, CUdeviceptr *p, char *err) {
  const lc_cuda_device *d = &lc_cuda_devices[lc_cuda_current];
  if (d->pool) return lc_cuda_pool_alloc(d, n ? n : 1, st, p, err);
  return lc_cuda_check(lc_cu.MemAlloc(p, n ? n : 1), "cuMemAlloc", err);
}

static void free_now(void *ud) {
  if (lc_cuda_enter_quietly()) lc_cu.MemFree(lc_cuda_ptr(ud));
}

void lc_cuda_temp_free(CUdeviceptr p, CUstream st) {
  if (lc_cuda_devices[lc_cuda_current].pool) lc_cu.MemFreeAsync(p, st);
  else lc_cuda_defer(free_now, (void *)(uintptr_t)p);
}

int lc_cuda_finish(CUresult r, const char *call, const lc_stream *s, char *err) {
  int rc = lc_cuda_check(r, call, err);
  if (rc != LC_OK) return rc;
  if (s != NULL) {
    lc_cuda_queued();
    return LC_OK;
  }
  return lc_cuda_check(lc_cu.StreamSynchronize(LC_CU_STREAM_LEGACY), "cuStreamSynchronize", err);
}

/* ---- streams and events ------------------------------------------------------ */

lc_stream lc_cuda_default;           /* the legacy stream, set by lc_cuda_init */

lc_stream *lc_cuda_default_stream(void) { return &lc_cuda_default; }

/* The streams alive, made here or wrapped: a host program may hand one of
** ours back (luacuda_tostream, then luacuda_setstream), and the wrap shares
** it, so that a script closing the stream's object does not destroy it
** under the host's slot; deferred releases record on the busy ones. Every
** stream but the default is counted: its object, each wrap, and each
** buffer that remembers it (stream-ordered frees) hold a reference. */
static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static lc_stream *live_streams;
/* The non-blocking streams alive, ours and the host's: the legacy stream
** does not wait for them, so work queued there is ordered after theirs
** with events (lc_cuda_legacy). Under streams_lock. */
static lc_stream *nonblocking;
static atomic_int nnonblocking;

static void nonblocking_add(lc_stream *s) {
  s->nb_next = nonblocking;
  nonblocking = s;
  atomic_fetch_add(&nnonblocking, 1);
}

static void nonblocking_remove(lc_stream *s) {
  lc_stream **p = &nonblocking;
  while (*p && *p != s) p = &(*p)->nb_next;
  if (*p) {
    *p = s->nb_next;
    atomic_fetch_sub(&nnonblocking, 1);
  }
}

/* An event per device for ordering one stream after another: a wait takes
** the record made just before it, so one event serves every pair (under
** order_mu, which keeps each record and its wait together). */
static pthread_mutex_t order_mu = PTHREAD_MUTEX_INITIALIZER;

static CUresult order_after(int dev, CUstream before, CUstream after) {
  lc_cuda_device *d = &lc_cuda_devices[dev];
  pthread_mutex_lock(&order_mu);
  CUresult r = CUDA_SUCCESS;
  if (d->order_ev == NULL) r = lc_cu.EventCreate(&d->order_ev, CU_EVENT_DISABLE_TIMING);
  if (r == CUDA_SUCCESS) r = lc_cu.EventRecord(d->order_ev, before);
  if (r == CUDA_SUCCESS) r = lc_cu.StreamWaitEvent(after, d->order_ev, 0);
  pthread_mutex_unlock(&order_mu);
  return r;
}

/* The busy streams of device dev, whose context is current, each get one
** of p's events: queried first, so that an idle stream costs no record,
** and the legacy stream only when it has work of its own. More busy
** streams than p has room for: one record on the legacy stream, which
** follows every blocking stream (and, ordered with events, the
** non-blocking ones). No room at all: false. Under streams_lock. */
static CUstream legacy_locked(int dev);
static bool record_device(pending *p, int dev) {
  CUstream busy[MAXEV];
  int n = 0, room = MAXEV - p->nev;
  bool more = false;
  if (room == 0) return false;
  if (lc_cu.StreamQuery(LC_CU_STREAM_LEGACY) == CUDA_ERROR_NOT_READY) busy[n++] = LC_CU_STREAM_LEGACY;
  for (lc_stream *t = live_streams; t && !more; t = t->next) {
    if (t->dev != dev || t->s == NULL || t->s == LC_CU_STREAM_LEGACY) continue;
    if (lc_cu.StreamQuery(t->s) != CUDA_ERROR_NOT_READY) continue;
    if (n == room) more = true;
    else busy[n++] = t->s;
  }
  if (more) return pending_record(p, legacy_locked(dev), dev);
  bool ok = true;
  for (int i = 0; i < n && ok; i++)
    ok = pending_record(p, busy[i] == LC_CU_STREAM_LEGACY ? legacy_locked(dev) : busy[i], dev);
  return ok;
}

/* Every device with work queued since its last synchronize, its context
** made current for the while: its busy streams recorded on. */
static bool record_busy_streams(pending *p) {
  int here = lc_cuda_current;
  bool ok = true;
  pthread_mutex_lock(&streams_lock);     /* the streams stay alive while recorded on */
  for (int dev = 0, n = lc_cuda_device_count(); dev < n && ok; dev++) {
    if (!unsettled(dev)) continue;       /* never used, or nothing since a synchronize */
    lc_cuda_current = dev;
    ok = lc_cuda_enter_quietly() && record_device(p, dev);
  }
  pthread_mutex_unlock(&streams_lock);
  lc_cuda_current = here;
  return lc_cuda_enter_quietly() && ok;
}

/* The legacy stream of device dev (its context current), after the work
** queued so far on the device's non-blocking streams (which it does not
** wait for by itself): what the interface's NULL stream, defer and the
** default stream's frees need. */
static CUstream legacy_locked(int dev) {
  for (lc_stream *t = nonblocking; t; t = t->nb_next)
    if (t->dev == dev) order_after(dev, t->s, LC_CU_STREAM_LEGACY);   /* a failure shows later */
  return LC_CU_STREAM_LEGACY;
}

CUstream lc_cuda_legacy_of(int dev) {
  if (atomic_load_explicit(&nnonblocking, memory_order_relaxed) == 0) return LC_CU_STREAM_LEGACY;
  pthread_mutex_lock(&streams_lock);
  legacy_locked(dev);
  pthread_mutex_unlock(&streams_lock);
  return LC_CU_STREAM_LEGACY;
}

CUstream lc_cuda_legacy(void) { return lc_cuda_legacy_of(lc_cuda_current); }

CUstream lc_cuda_stream_on(int dev, const lc_stream *s) {
  CUstream st = s ? s->s : NULL;
  return st == NULL || st == LC_CU_STREAM_LEGACY ? lc_cuda_legacy_of(dev) : st;
}

int lc_cuda_stream_create(lc_stream **out, unsigned flags, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  lc_stream *s = calloc(1, sizeof *s);
  if (s == NULL) {
    return lc_fail(err, LC_ENOMEM, "out of host memory creating a stream");
  }
  /* blocking unless asked: ordered with the legacy default stream */
  bool nb = flags & LC_STREAM_NONBLOCKING;
  rc = lc_cuda_check(lc_cu.StreamCreate(&s->s, nb ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT),
                     "cuStreamCreate", err);
  if (rc != LC_OK) {
    free(s);
    return rc;
  }
  s->owned = true;
  s->nonblocking = nb;
  s->dev = lc_cuda_current;
  s->refs = 1;
  pthread_mutex_lock(&streams_lock);
  s->next = live_streams;
  live_streams = s;
  if (nb) nonblocking_add(s);
  pthread_mutex_unlock(&streams_lock);
  *out = s;
  return LC_OK;
}

void lc_cuda_stream_retain(lc_stream *s) {
  if (s == &lc_cuda_default) return;
  pthread_mutex_lock(&streams_lock);
  s->refs++;
  pthread_mutex_unlock(&streams_lock);
}

/* cuStreamDestroy in the stream's own context: a CUstream is its
** context's handle, and another device may be current when the last
** reference goes. */
static void stream_destroy(lc_stream *s) {
  int here = lc_cuda_current;
  lc_cuda_current = s->dev;
  if (lc_cuda_enter_quietly()) lc_cu.StreamDestroy(s->s);
  lc_cuda_current = here;
  lc_cuda_enter_quietly();
}

/* Drop a reference. The last one destroys a stream of ours (the driver
** destroys it once its queued work is done), or lets go of the holder of a
** host's stream, after the work that may name it. */
void lc_cuda_stream_release(lc_stream *s) {
  if (s == &lc_cuda_default) return;
  pthread_mutex_lock(&streams_lock);
  bool last = --s->refs == 0;
  if (last) {
    lc_stream **p = &live_streams;
    while (*p != s) p = &(*p)->next;
    *p = s->next;
    if (s->nonblocking) nonblocking_remove(s);
  }
  pthread_mutex_unlock(&streams_lock);
  if (!last) return;
  if (!s->owned) {
    lc_cuda_defer(free, s);
    return;
  }
  stream_destroy(s);
  free(s);
}

/* A host program's CUstream: one of ours, shared, or else a holder of the
** host's, which the host keeps owning. The holder asks the stream's flags:
** a non-blocking stream is ordered with events where the legacy stream
** would not wait for it. */
int lc_cuda_stream_wrap(void *native, lc_stream **out, char *err) {
  pthread_mutex_lock(&streams_lock);
  lc_stream *s = live_streams;
  while (s && s->s != (CUstream)native) s = s->next;
  if (s) s->refs++;
  pthread_mutex_unlock(&streams_lock);
  if (s) {
    *out = s;
    return LC_OK;
  }
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  unsigned flags = 0;
  if (native != NULL && (CUstream)native != LC_CU_STREAM_LEGACY) {
    rc = lc_cuda_check(lc_cu.StreamGetFlags((CUstream)native, &flags), "cuStreamGetFlags", err);
    if (rc != LC_OK) return rc;
  }
  s = calloc(1, sizeof *s);
  if (s == NULL) {
    return lc_fail(err, LC_ENOMEM, "out of host memory wrapping a stream");
  }
  s->s = (CUstream)native;
  s->refs = 1;
  s->dev = lc_cuda_current;
  s->nonblocking = flags & CU_STREAM_NON_BLOCKING;
  pthread_mutex_lock(&streams_lock);
  s->next = live_streams;               /* with ours: defer records on it */
  live_streams = s;
  if (s->nonblocking) nonblocking_add(s);
  pthread_mutex_unlock(&streams_lock);
  *out = s;
  return LC_OK;
}

/* Does work queued on after from now on wait for before's queued work by
** the legacy stream's rules alone? */
bool lc_cuda_stream_follows(const lc_stream *after, const lc_stream *before) {
  if (after == before || after->s == before->s) return true;
  /* a host's NULL stream is the legacy stream too */
  bool after_legacy = after->s == LC_CU_STREAM_LEGACY || after->s == NULL,
       before_legacy = before->s == LC_CU_STREAM_LEGACY || before->s == NULL;
  return (after_legacy && !before->nonblocking) || (before_legacy && !after->nonblocking);
}

/* The CUstream to queue on: a NULL one is the legacy stream. */
static CUstream native_of(const lc_stream *s) { return s->s ? s->s : LC_CU_STREAM_LEGACY; }

int lc_cuda_stream_order_on(int dev, lc_stream *before, lc_stream *after, char *err) {
  if (lc_cuda_stream_follows(after, before)) return LC_OK;
  return lc_cuda_check(order_after(dev, native_of(before), native_of(after)), "cuStreamWaitEvent",
                       err);
}

int lc_cuda_stream_order(lc_stream *before, lc_stream *after, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  return lc_cuda_stream_order_on(lc_cuda_current, before, after, err);
}

void *lc_cuda_stream_native(lc_stream *s) { return (void *)s->s; }

/* The legacy stream (the default, or a host's NULL one) does not wait for
** the non-blocking streams by itself: ordered after them now, as for the
** interface's NULL stream. Any other stream keeps its own rules. */
int lc_cuda_stream_host_use(lc_stream *s, char *err) {
  if (s->s != NULL && s->s != LC_CU_STREAM_LEGACY) return LC_OK;
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  lc_cuda_stream(s);          /* a failure to order shows at the next wait */
  return LC_OK;
}

int lc_cuda_stream_synchronize(lc_stream *s, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  return lc_cuda_check(lc_cu.StreamSynchronize(s->s), "cuStreamSynchronize", err);
}

int lc_cuda_stream_query(lc_stream *s, bool *done, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  CUresult r = lc_cu.StreamQuery(s->s);
  *done = r != CUDA_ERROR_NOT_READY;
  return r == CUDA_ERROR_NOT_READY ? LC_OK : lc_cuda_check(r, "cuStreamQuery", err);
}

struct lc_event {
  CUevent e;
};

int lc_cuda_event_create(lc_event **out, bool timing, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  lc_event *e = calloc(1, sizeof *e);
  if (e == NULL) {
    return lc_fail(err, LC_ENOMEM, "out of host memory creating an event");
  }
  rc = lc_cuda_check(lc_cu.EventCreate(&e->e, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING),
                     "cuEventCreate", err);
  if (rc != LC_OK) free(e);
  else *out = e;
  return rc;
}

/* The driver keeps a recorded event until its record has happened. */
void lc_cuda_event_destroy(lc_event *e) {
  if (lc_cuda_enter_quietly()) lc_cu.EventDestroy(e->e);
  free(e);
}

int lc_cuda_event_record(lc_event *e, lc_stream *s, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  rc = lc_cuda_check(lc_cu.EventRecord(e->e, s->s), "cuEventRecord", err);
  if (rc == LC_OK) lc_cuda_queued();
  return rc;
}

int lc_cuda_event_wait(lc_event *e, lc_stream *s, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  return lc_cuda_check(lc_cu.StreamWaitEvent(s->s, e->e, 0), "cuStreamWaitEvent", err);
}

int lc_cuda_host_fn(lc_stream *s, void (*fn)(void *), void *ud, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  rc = lc_cuda_check(lc_cu.LaunchHostFunc(s->s, fn, ud), "cuLaunchHostFunc", err);
  if (rc == LC_OK) lc_cuda_queued();
  return rc;
}

int lc_cuda_event_synchronize(lc_event *e, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  return lc_cuda_check(lc_cu.EventSynchronize(e->e), "cuEventSynchronize", err);
}

int lc_cuda_event_query(lc_event *e, bool *done, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  CUresult r = lc_cu.EventQuery(e->e);
  *done = r != CUDA_ERROR_NOT_READY;
  return r == CUDA_ERROR_NOT_READY ? LC_OK : lc_cuda_check(r, "cuEventQuery", err);
}

int lc_cuda_event_elapsed(lc_event *a, lc_event *b, float *ms, char *err) {
  int rc = lc_cuda_enter(err);
  if (rc != LC_OK) return rc;
  CUresult r = lc_cu.EventElapsedTime(ms, a->e, b->e);
  if (r == CUDA_ERROR_NOT_READY) {
    bool start_done = lc_cu.EventQuery(a->e) != CUDA_ERROR_NOT_READY;
    return lc_fail(err, LC_ENOTREADY, "the %s event has not happened yet (synchronize it first)",
                   start_done ? "end" : "start");
  }
  return lc_cuda_check(r, "cuEventElapsedTime", err);
}
