/*
** Unit tests for src/backend/sim/stream.c (run them as unit.h says): small
** work run at the call (lc_sim_run_inline, and lc_sim_run_call_inline's
** host loops) keeps the order of the one queue: it runs on the caller's
** thread only when nothing is queued or running, work queued while it runs
** (by it, or by another thread) waits for it, and its failure is its
** stream's, reported at the next synchronize as a queued failure is.
** No timing: queued work that must wait is held by a gate the test opens.
** A broken order shows as a wait that never ends (the ticket done going
** back); the alarm makes that a failure instead of a hang.
*/
#include "sim.h"

#include "unit.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

/* a gate queued work waits at until the test opens it */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_open;

static void gate_set(bool open) {
  pthread_mutex_lock(&gate_lock);
  gate_open = open;
  pthread_cond_broadcast(&gate_cond);
  pthread_mutex_unlock(&gate_lock);
}

static int run_gate(lc_sim_work *w, char *e) {
  (void)w; (void)e;
  pthread_mutex_lock(&gate_lock);
  while (!gate_open) pthread_cond_wait(&gate_cond, &gate_lock);
  pthread_mutex_unlock(&gate_lock);
  return LC_OK;
}

static int queue(lc_stream *s, int (*run)(lc_sim_work *, char *)) {
  lc_sim_work *w = lc_sim_work_new(0, run, err);
  if (w == NULL) return -1;
  return lc_sim_submit(s, w, NULL, err) == LC_OK ? 0 : -1;
}

/* the order work ran in, one letter each (under log_lock) */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char order[16];
static size_t norder;

static void note(char c) {
  pthread_mutex_lock(&log_lock);
  if (norder + 1 < sizeof order) order[norder++] = c;
  order[norder] = '\0';
  pthread_mutex_unlock(&log_lock);
}

static int run_note_q(lc_sim_work *w, char *e) {
  (void)w; (void)e;
  note('Q');
  return LC_OK;
}

typedef struct inline_call {
  pthread_t thread;          /* where it ran */
  lc_stream *s;              /* where it queues work while it runs, or NULL */
  int rc;
  const char *message;
} inline_call;

static int run_inline_call(void *ud, char *e) {
  inline_call *c = ud;
  c->thread = pthread_self();
  if (c->s) {
    if (queue(c->s, run_note_q)) return LC_EFAIL;
    /* give the executor every chance to start it too early */
    for (int i = 0; i < 1000; i++) sched_yield();
  }
  note('I');
  if (c->message) snprintf(e, LC_ERRLEN, "%s", c->message);
  return c->rc;
}

static void reset(void) {
  lc_sim_synchronize(NULL);
  pthread_mutex_lock(&log_lock);
  norder = 0;
  order[0] = '\0';
  pthread_mutex_unlock(&log_lock);
}

static int runs_on_the_caller_when_idle(void) {
  reset();
  lc_stream *s;
  CHECK_OK(lc_sim_stream_create(&s, 0, err));
  inline_call c = {0};
  uint64_t ticket = 0;
  CHECK(lc_sim_run_inline(s, run_inline_call, &c, &ticket));
  CHECK(pthread_equal(c.thread, pthread_self()));
  CHECK(ticket > 0);
  bool idle = false;
  CHECK_OK(lc_sim_stream_query(s, &idle, err));
  CHECK(idle);
  CHECK_STR(order, "I");
  lc_sim_stream_destroy(s);
  return 0;
}

static int waits_its_turn_behind_queued_work(void) {
  reset();
  lc_stream *s;
  CHECK_OK(lc_sim_stream_create(&s, 0, err));
  gate_set(false);
  CHECK_OK(queue(s, run_gate));
  inline_call c = {0};
  CHECK(!lc_sim_run_inline(s, run_inline_call, &c, NULL));   /* the gate is queued */
  CHECK(!lc_sim_run_inline(NULL, run_inline_call, &c, NULL));  /* on any stream */
  CHECK_STR(order, "");
  bool idle = true;
  CHECK_OK(lc_sim_stream_query(s, &idle, err));
  CHECK(!idle);
  gate_set(true);
  CHECK_OK(lc_sim_stream_synchronize(s, err));
  CHECK(lc_sim_run_inline(s, run_inline_call, &c, NULL));
  CHECK_STR(order, "I");
  lc_sim_stream_destroy(s);
  return 0;
}

static int work_queued_while_it_runs_comes_after_it(void) {
  reset();
  lc_stream *s, *t;
  CHECK_OK(lc_sim_stream_create(&s, 0, err));
  CHECK_OK(lc_sim_stream_create(&t, 0, err));
  inline_call c = {.s = t};
  CHECK(lc_sim_run_inline(s, run_inline_call, &c, NULL));
  CHECK_OK(lc_sim_stream_synchronize(t, err));
  CHECK_STR(order, "IQ");
  lc_sim_stream_destroy(s);
  lc_sim_stream_destroy(t);
  return 0;
}

static int its_failure_is_its_streams_reported_once(void) {
  reset();
  lc_stream *s, *t;
  CHECK_OK(lc_sim_stream_create(&s, 0, err));
  CHECK_OK(lc_sim_stream_create(&t, 0, err));
  inline_call c = {.rc = LC_EFAIL, .message = "the inline work failed"};
  CHECK(lc_sim_run_inline(s, run_inline_call, &c, NULL));
  CHECK_OK(lc_sim_stream_synchronize(t, err));               /* not t's */
  CHECK_EQ(lc_sim_stream_synchronize(s, err), LC_EFAIL);
  CHECK_STR(err, "the inline work failed");
  CHECK_OK(lc_sim_stream_synchronize(s, err));               /* once */
  CHECK(lc_sim_run_inline(s, run_inline_call, &c, NULL));
  CHECK_EQ(lc_sim_synchronize(err), LC_EFAIL);                /* the device-wide one too */
  CHECK_STR(err, "the inline work failed");
  CHECK_OK(lc_sim_synchronize(err));
  lc_sim_stream_destroy(s);
  lc_sim_stream_destroy(t);
  return 0;
}

static int an_event_recorded_after_it_is_complete(void) {
  reset();
  lc_stream *s;
  lc_event *before, *after;
  CHECK_OK(lc_sim_stream_create(&s, 0, err));
  CHECK_OK(lc_sim_event_create(&before, true, err));
  CHECK_OK(lc_sim_event_create(&after, true, err));
  gate_set(false);
  CHECK_OK(queue(s, run_gate));
  CHECK_OK(lc_sim_event_record(before, s, err));            /* queued behind the gate */
  bool complete = true;
  CHECK_OK(lc_sim_event_query(before, &complete, err));
  CHECK(!complete);
  gate_set(true);
  CHECK_OK(lc_sim_event_synchronize(before, err));
  inline_call c = {0};
  CHECK(lc_sim_run_inline(s, run_inline_call, &c, NULL));
  CHECK_OK(lc_sim_event_record(after, s, err));             /* idle: at once */
  CHECK_OK(lc_sim_event_query(after, &complete, err));
  CHECK(complete);
  float ms = -1;
  CHECK_OK(lc_sim_event_elapsed(before, after, &ms, err));
  CHECK(ms >= 0);
  lc_sim_event_destroy(before);
  lc_sim_event_destroy(after);
  lc_sim_stream_destroy(s);
  return 0;
}

/* lc_sim_run_call_inline: a host loop run at the call */
typedef struct host_loop {
  pthread_t thread;          /* where it ran */
  lc_stream *queue_from;     /* when set, a second thread queues work on it meanwhile */
  pthread_t helper;
  bool helper_started;
} host_loop;

static void *queue_note_q(void *ud) {
  queue(ud, run_note_q);
  return NULL;
}

static void run_host_loop(const void *call) {
  host_loop *h = (host_loop *)call;
  h->thread = pthread_self();
  if (h->queue_from) {
    /* another thread queues work now: the executor must not run it first */
    h->helper_started = pthread_create(&h->helper, NULL, queue_note_q, h->queue_from) == 0;
    for (int i = 0; i < 1000; i++) sched_yield();
  }
  note('I');
}

static int a_host_loop_runs_on_the_caller_when_idle(void) {
  reset();
  lc_stream *s;
  CHECK_OK(lc_sim_stream_create(&s, 0, err));
  host_loop h = {0};
  CHECK(lc_sim_run_call_inline(s, run_host_loop, &h));
  CHECK(pthread_equal(h.thread, pthread_self()));
  bool idle = false;
  CHECK_OK(lc_sim_stream_query(s, &idle, err));
  CHECK(idle);
  CHECK_OK(lc_sim_stream_synchronize(s, err));
  CHECK_STR(order, "I");
  lc_sim_stream_destroy(s);
  return 0;
}

static int a_host_loop_waits_its_turn_behind_queued_work(void) {
  reset();
  lc_stream *s;
  CHECK_OK(lc_sim_stream_create(&s, 0, err));
  gate_set(false);
  CHECK_OK(queue(s, run_gate));
  host_loop h = {0};
  CHECK(!lc_sim_run_call_inline(s, run_host_loop, &h));      /* the gate is queued */
  CHECK(!lc_sim_run_call_inline(NULL, run_host_loop, &h));   /* on any stream */
  CHECK_STR(order, "");
  gate_set(true);
  CHECK_OK(lc_sim_stream_synchronize(s, err));
  CHECK(lc_sim_run_call_inline(s, run_host_loop, &h));
  CHECK_STR(order, "I");
  lc_sim_stream_destroy(s);
  return 0;
}

static int work_queued_while_a_host_loop_runs_comes_after_it(void) {
  reset();
  lc_stream *s, *t;
  CHECK_OK(lc_sim_stream_create(&s, 0, err));
  CHECK_OK(lc_sim_stream_create(&t, 0, err));
  host_loop h = {.queue_from = t};
  CHECK(lc_sim_run_call_inline(s, run_host_loop, &h));
  CHECK(h.helper_started);
  pthread_join(h.helper, NULL);
  CHECK_OK(lc_sim_stream_synchronize(t, err));
  CHECK_STR(order, "IQ");
  lc_sim_stream_destroy(s);
  lc_sim_stream_destroy(t);
  return 0;
}

#define T(name) { #name, name }
static const unit_test tests[] = {
  T(runs_on_the_caller_when_idle), T(waits_its_turn_behind_queued_work),
  T(work_queued_while_it_runs_comes_after_it), T(its_failure_is_its_streams_reported_once),
  T(an_event_recorded_after_it_is_complete), T(a_host_loop_runs_on_the_caller_when_idle),
  T(a_host_loop_waits_its_turn_behind_queued_work),
  T(work_queued_while_a_host_loop_runs_comes_after_it),
};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

int main(int argc, char **argv) {
  alarm(120);
  return unit_main("stream_test", tests, NTESTS, argc, argv);
}
