/*
** stream: the simulator's streams and events. One executor thread runs
** queued work in the order it was queued, whatever its stream: that order
** keeps every rule CUDA gives (work on one stream in order, the legacy
** default stream after everything before it, a wait on an event after its
** record) without tracking dependencies. Streams make no concurrency
** promise on a GPU either; what they promise, they keep here.
**
** Each piece of work gets a ticket, 1, 2, 3, ...; "done" is the ticket of
** the last piece finished, so a stream is idle when done reaches the
** ticket of its last work, and an event is complete when done reaches the
** ticket of its record.
**
** Small work may run on the caller's thread instead (lc_sim_run_inline),
** when nothing is queued or running: then every ticket before its own is
** done, so it keeps the order above. Waking the executor for it would cost
** more than the work: a futex wake, a switch of threads, and the caller's
** wait for the lock the executor holds. It takes its ticket without the
** lock, by moving queued from done to done + 1 (the compare-and-swap fails
** when any ticket is not done), and the executor starts the work of a
** ticket only once the ticket before it is done, so nothing queued
** meanwhile starts before it ends. Its end takes the lock only when
** somebody waits or work was queued meanwhile; the atomics are
** sequentially consistent, so that either it sees them, or they see its
** ticket done (finish_inline).
*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"

struct lc_stream {
  lc_stream *prev, *next;        /* every live stream, for synchronize() */
  int refs;                      /* its object, and the host's slots (wrap) */
  _Atomic uint64_t last;         /* ticket of its last queued work */
  bool failed;                   /* a failure not reported yet, in error */
  char error[LC_ERRLEN];
};

struct lc_event {
  uint64_t ticket;               /* of its last record; 0: never recorded */
  double when;                   /* seconds, set when the record runs */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_ready = PTHREAD_COND_INITIALIZER;
static pthread_cond_t progress = PTHREAD_COND_INITIALIZER;
static pthread_once_t started = PTHREAD_ONCE_INIT;
static bool start_failed;
static lc_sim_work *head, *tail;           /* in the order of their tickets */
static atomic_uint_fast64_t queued;       /* tickets handed out: 1, 2, ... */
static atomic_uint_fast64_t done;         /* ticket of the last work done */
static atomic_int unreported;             /* streams with failed set */
static atomic_uint waiters;               /* on progress (changed under the lock) */
static lc_stream default_stream = {NULL, NULL, 1, 0, false, ""};
static lc_stream *streams = &default_stream;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The work with this ticket on stream s has run, with rc (and err): its
** failure kept for s's next synchronize, done moved on, the waiters woken
** (under the lock). */
static void finish(lc_stream *s, uint64_t ticket, int rc, const char *err) {
  if (rc != LC_OK && s && !s->failed) {
    s->failed = true;
    snprintf(s->error, LC_ERRLEN, "%s", err);
    atomic_fetch_add(&unreported, 1);
  }
  atomic_store(&done, ticket);
  if (atomic_load(&waiters)) pthread_cond_broadcast(&progress);
}

/* s's last ticket is at least t (a ticket taken without the lock may come
** after a later one's record) */
static void note_last(lc_stream *s, uint64_t t) {
  uint64_t last = atomic_load(&s->last);
  while (last < t && !atomic_compare_exchange_weak(&s->last, &last, t)) {}
}

static void *executor(void *arg) {
  (void)arg;
  char err[LC_ERRLEN];
  pthread_mutex_lock(&lock);
  for (;;) {
    /* the ticket before head's may be work run at a call (not queued) */
    while (head == NULL || atomic_load(&done) + 1 != head->ticket)
      pthread_cond_wait(&work_ready, &lock);
    lc_sim_work *w = head;
    head = w->next;
    if (head == NULL) tail = NULL;
    pthread_mutex_unlock(&lock);
    err[0] = '\0';
    int rc = w->run(w, err);
    pthread_mutex_lock(&lock);
    finish(w->stream, w->ticket, rc, err);
    pthread_mutex_unlock(&lock);
    free(w);
    pthread_mutex_lock(&lock);
  }
  return NULL;
}

static void start(void) {
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  start_failed = pthread_create(&t, &attr, executor, NULL) != 0;
  pthread_attr_destroy(&attr);
}

lc_sim_work *lc_sim_work_new(size_t payload, int (*run)(lc_sim_work *, char *),
                             char *err) {
  lc_sim_work *w = calloc(1, sizeof *w + payload);
  if (w == NULL) lc_errf(err, "out of host memory queueing work");
  else w->run = run;
  return w;
}

int lc_sim_submit(lc_stream *s, lc_sim_work *w, uint64_t *ticket, char *err) {
  pthread_once(&started, start);
  if (start_failed) {
    free(w);
    return lc_fail(err, LC_EFAIL, "cannot start the simulator's stream executor");
  }
  w->stream = s;
  w->next = NULL;
  pthread_mutex_lock(&lock);
  w->ticket = atomic_fetch_add(&queued, 1) + 1;
  if (s) note_last(s, w->ticket);
  if (ticket) *ticket = w->ticket;
  if (tail) tail->next = w;
  else head = w;
  tail = w;
  pthread_cond_signal(&work_ready);
  pthread_mutex_unlock(&lock);
  return LC_OK;
}

/* The next ticket, when every ticket handed out is done (else 0). */
static uint64_t claim_inline(lc_stream *s) {
  uint64_t t = atomic_load(&queued);
  if (atomic_load(&done) != t || !atomic_compare_exchange_strong(&queued, &t, t + 1)) return 0;
  if (s) note_last(s, t + 1);
  return t + 1;
}

/* The claimed ticket's work has run without failing: done, and the lock
** taken only to wake who waits for it or for work queued meanwhile. */
static void finish_inline(uint64_t ticket) {
  atomic_store(&done, ticket);
  if (atomic_load(&waiters) == 0 && atomic_load(&queued) == ticket) return;
  pthread_mutex_lock(&lock);
  if (atomic_load(&waiters)) pthread_cond_broadcast(&progress);
  if (head) pthread_cond_signal(&work_ready);
  pthread_mutex_unlock(&lock);
}

bool lc_sim_run_inline(lc_stream *s, int (*run)(void *ud, char *err), void *ud,
                       uint64_t *ticket_out) {
  uint64_t ticket = claim_inline(s);
  if (ticket == 0) return false;
  if (ticket_out) *ticket_out = ticket;
  char err[LC_ERRLEN];
  err[0] = '\0';
  int rc = run(ud, err);
  if (rc == LC_OK) {
    finish_inline(ticket);
    return true;
  }
  pthread_mutex_lock(&lock);
  finish(s, ticket, rc, err);
  if (head) pthread_cond_signal(&work_ready);   /* queued while it ran */
  pthread_mutex_unlock(&lock);
  return true;
}

bool lc_sim_run_call_inline(lc_stream *s, void (*fn)(const void *call), const void *call) {
  uint64_t ticket = claim_inline(s);
  if (ticket == 0) return false;
  fn(call);
  finish_inline(ticket);
  return true;
}

static int run_work(void *ud, char *err) {
  lc_sim_work *w = ud;
  return w->run(w, err);
}

bool lc_sim_run_work_inline(lc_stream *s, lc_sim_work *w, uint64_t *ticket) {
  if (!lc_sim_run_inline(s, run_work, w, ticket)) return false;
  free(w);
  return true;
}

/* Block until the work with this ticket is done. */
static void wait_for(uint64_t ticket) {
  if (atomic_load(&done) >= ticket) return;
  pthread_mutex_lock(&lock);
  atomic_fetch_add(&waiters, 1);
  while (atomic_load(&done) < ticket) pthread_cond_wait(&progress, &lock);
  atomic_fetch_sub(&waiters, 1);
  pthread_mutex_unlock(&lock);
}

/* Move s's unreported failure into err (caller holds the lock). */
static int take_failure(lc_stream *s, char *err) {
  if (!s->failed) return LC_OK;
  s->failed = false;
  atomic_fetch_sub(&unreported, 1);
  if (err) lc_errf(err, "%s", s->error);
  return LC_EFAIL;
}

int lc_sim_synchronize(char *err) {
  /* the common case, nothing queued and nothing failed, takes no lock */
  if (atomic_load(&done) >= atomic_load(&queued) && atomic_load(&unreported) == 0)
    return LC_OK;
  wait_for(atomic_load(&queued));
  if (err == NULL) return LC_OK;
  int rc = LC_OK;
  pthread_mutex_lock(&lock);
  for (lc_stream *s = streams; s && rc == LC_OK; s = s->next) rc = take_failure(s, err);
  pthread_mutex_unlock(&lock);
  return rc;
}

/* ---- deferred release ---------------------------------------------------- */

typedef struct release_work {
  lc_sim_work w;
  void (*release)(void *);
  void *ud;
} release_work;

static int run_release(lc_sim_work *w, char *err) {
  (void)err;
  release_work *r = (release_work *)w;
  r->release(r->ud);
  return LC_OK;
}

void lc_sim_defer(void (*release)(void *), void *ud) {
  char err[LC_ERRLEN];
  if (atomic_load(&done) >= atomic_load(&queued)) {
    release(ud);
    return;
  }
  release_work *r = (release_work *)lc_sim_work_new(sizeof *r - sizeof r->w, run_release, err);
  if (r == NULL) {
    /* no memory to queue it: waiting is the safe fallback */
    wait_for(atomic_load(&queued));
    release(ud);
    return;
  }
  r->release = release;
  r->ud = ud;
  if (lc_sim_submit(NULL, &r->w, NULL, err) != LC_OK) release(ud);
}

/* ---- host functions -------------------------------------------------------- */

/* A host function runs on the executor like any queued work (a deferred
** release is one, on no stream): the work after it, on every stream,
** waits for it, as the executor runs one thing at a time. */
int lc_sim_host_fn(lc_stream *s, void (*fn)(void *), void *ud, char *err) {
  release_work *r = (release_work *)lc_sim_work_new(sizeof *r - sizeof r->w, run_release, err);
  if (r == NULL) return LC_ENOMEM;
  r->release = fn;
  r->ud = ud;
  return lc_sim_submit(s, &r->w, NULL, err);
}

/* ---- streams -------------------------------------------------------------- */

lc_stream *lc_sim_default_stream(void) { return &default_stream; }

/* flags: a non-blocking stream is a stream like any other here, where
** the default stream follows them all (backend.h allows it) */
int lc_sim_stream_create(lc_stream **out, unsigned flags, char *err) {
  (void)flags;
  lc_stream *s = calloc(1, sizeof *s);
  if (s == NULL) {
    return lc_fail(err, LC_ENOMEM, "out of host memory creating a stream");
  }
  s->refs = 1;
  pthread_mutex_lock(&lock);
  s->prev = &default_stream;
  s->next = default_stream.next;
  if (s->next) s->next->prev = s;
  default_stream.next = s;
  pthread_mutex_unlock(&lock);
  *out = s;
  return LC_OK;
}

static void stream_free(void *ud) {
  lc_stream *s = ud;
  pthread_mutex_lock(&lock);
  take_failure(s, NULL);           /* nobody is left to report it to */
  s->prev->next = s->next;
  if (s->next) s->next->prev = s->prev;
  pthread_mutex_unlock(&lock);
  free(s);
}

void lc_sim_stream_retain(lc_stream *s) {
  if (s == &default_stream) return;
  pthread_mutex_lock(&lock);
  s->refs++;
  pthread_mutex_unlock(&lock);
}

void lc_sim_stream_destroy(lc_stream *s) {
  if (s == &default_stream) return;
  pthread_mutex_lock(&lock);
  bool last = --s->refs == 0;
  pthread_mutex_unlock(&lock);
  if (last) lc_sim_defer(stream_free, s);
}

int lc_sim_stream_synchronize(lc_stream *s, char *err) {
  pthread_mutex_lock(&lock);
  uint64_t last = atomic_load(&s->last);
  pthread_mutex_unlock(&lock);
  wait_for(last);
  pthread_mutex_lock(&lock);
  int rc = take_failure(s, err);
  pthread_mutex_unlock(&lock);
  return rc;
}

int lc_sim_stream_query(lc_stream *s, bool *idle, char *err) {
  pthread_mutex_lock(&lock);
  *idle = atomic_load(&done) >= atomic_load(&s->last);
  int rc = *idle ? take_failure(s, err) : LC_OK;
  pthread_mutex_unlock(&lock);
  return rc;
}

/* ---- events ----------------------------------------------------------------- */

int lc_sim_event_create(lc_event **out, bool timing, char *err) {
  lc_event *e = calloc(1, sizeof *e);
  if (e == NULL) {
    return lc_fail(err, LC_ENOMEM, "out of host memory creating an event");
  }
  (void)timing;                  /* every record has a time here */
  *out = e;
  return LC_OK;
}

void lc_sim_event_destroy(lc_event *e) { lc_sim_defer(free, e); }

typedef struct record_work {
  lc_sim_work w;
  lc_event *e;
} record_work;

static int run_record(lc_sim_work *w, char *err) {
  (void)err;
  record_work *r = (record_work *)w;
  double t = now();
  pthread_mutex_lock(&lock);
  r->e->when = t;
  pthread_mutex_unlock(&lock);
  return LC_OK;
}

int lc_sim_event_record(lc_event *e, lc_stream *s, char *err) {
  record_work *r = (record_work *)lc_sim_work_new(sizeof *r - sizeof r->w, run_record, err);
  if (r == NULL) return LC_ENOMEM;
  r->e = e;
  uint64_t ticket;
  int rc = LC_OK;
  if (!lc_sim_run_work_inline(s, &r->w, &ticket))   /* nothing before it: at once */
    rc = lc_sim_submit(s, &r->w, &ticket, err);
  if (rc == LC_OK) {
    pthread_mutex_lock(&lock);
    if (ticket > e->ticket) e->ticket = ticket;
    pthread_mutex_unlock(&lock);
  }
  return rc;
}

int lc_sim_event_wait(lc_event *e, lc_stream *s, char *err) {
  /* work queued on s from now on runs after everything queued before,
  ** the event's record included: the one executor's order gives it */
  (void)e; (void)s; (void)err;
  return LC_OK;
}

int lc_sim_event_synchronize(lc_event *e, char *err) {
  (void)err;
  pthread_mutex_lock(&lock);
  uint64_t t = e->ticket;
  pthread_mutex_unlock(&lock);
  wait_for(t);
  return LC_OK;
}

int lc_sim_event_query(lc_event *e, bool *complete, char *err) {
  (void)err;
  pthread_mutex_lock(&lock);
  *complete = atomic_load(&done) >= e->ticket;
  pthread_mutex_unlock(&lock);
  return LC_OK;
}

int lc_sim_event_elapsed(lc_event *a, lc_event *b, float *ms, char *err) {
  int rc = LC_OK;
  pthread_mutex_lock(&lock);
  uint64_t d = atomic_load(&done);
  if (d < a->ticket || d < b->ticket) {
    lc_errf(err, "the %s event has not happened yet (synchronize it first)",
            d < a->ticket ? "start" : "end");
    rc = LC_ENOTREADY;
  } else {
    *ms = (float)((b->when - a->when) * 1e3);
  }
  pthread_mutex_unlock(&lock);
  return rc;
}
