/*
** pending: per buffer, one slot per stream that queued work on its memory,
** holding an event recorded after that work. A host access waits for the
** slots' events (never for the whole device), then frees the slots it
** waited for, unless a newer record came meanwhile (gen).
*/
#include "pending.h"

#include <stdio.h>

#include "aux.h"
#include "env.h"

static void lock(lc_buffer *b) {
  while (atomic_flag_test_and_set_explicit(&b->using, memory_order_acquire)) {}
}

static void unlock(lc_buffer *b) {
  atomic_flag_clear_explicit(&b->using, memory_order_release);
}

static bool any_slot(const lc_buffer *b) {
  for (int i = 0; i < LC_BUFFER_STREAMS; i++)
    if (b->pending[i].stream) return true;
  return false;
}

void lc_pending_add(lc_buffer *b, lc_stream *s, bool writes) {
  if (!lc_kind_host_accessible(b->kind)) return;
  const lc_backend *be = b->backend;
  char err[LC_ERRLEN];
  lock(b);
  struct lc_pending *p = NULL;
  for (int i = 0; i < LC_BUFFER_STREAMS && p == NULL; i++)
    if (b->pending[i].stream == s) p = &b->pending[i];
  for (int i = 0; i < LC_BUFFER_STREAMS && p == NULL; i++)
    if (b->pending[i].stream == NULL) p = &b->pending[i];
  bool kept = p != NULL && (p->event || be->event_create(&p->event, false, err) == LC_OK) &&
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
  }
  unlock(b);
  /* more streams than slots, or no event: the work is waited for now (all
  ** of it, reporting nothing: its failure stays for the caller to see) */
  if (!kept) be->synchronize(NULL);
}

/* The message's names: the array, and the stream as tostring shows it. */
static void describe(const lc_array *a, lc_stream *s, char *what, size_t wlen,
                     char *stream, size_t slen) {
  char shape[128];
  lc_shape_format(shape, sizeof shape, a->lay.ndim, a->lay.shape);
  snprintf(what, wlen, "the %s %s array of shape %s", lc_kind_names[lc_array_kind(a)],
           a->dtype->name, shape);
  if (s == a->buf->backend->default_stream()) snprintf(stream, slen, "the default stream");
  else snprintf(stream, slen, "luacuda.stream(%p)", (void *)s);
}

void lc_pending_wait_slow(lua_State *L, const lc_array *a, bool writing, const char *fname) {
  lc_buffer *b = a->buf;
  const lc_backend *be = b->backend;
  struct {
    int slot;
    unsigned gen;
    lc_stream *s;
    lc_event *e;
    bool writes, conflicts, finished;
  } w[LC_BUFFER_STREAMS];
  int n = 0;
  lock(b);
  for (int i = 0; i < LC_BUFFER_STREAMS; i++) {
    struct lc_pending *p = &b->pending[i];
    if (p->stream == NULL) continue;
    be->stream_retain(p->stream);          /* kept while waited for, outside the lock */
    w[n].slot = i;
    w[n].gen = p->gen;
    w[n].s = p->stream;
    w[n].e = p->event;
    w[n].writes = p->writes;
    w[n].conflicts = writing || p->writes;
    w[n].finished = false;
    n++;
  }
  unlock(b);
  bool strict = lc_settings_get()->strict_async;
  char err[LC_ERRLEN];
  int rc = LC_OK, late = -1;
  for (int k = 0; k < n && rc == LC_OK && late < 0; k++) {
    bool done = false;
    if (!w[k].conflicts) {
      /* work that only reads, as this access does: forgotten once done,
      ** so that later accesses take the fast paths again */
      char ignored[LC_ERRLEN];
      if (be->event_query(w[k].e, &done, ignored) != LC_OK) done = false;
    } else if (strict) {
      rc = be->event_query(w[k].e, &done, err);
      if (rc == LC_OK && !done) late = k;
    } else {
      rc = be->event_synchronize(w[k].e, err);
      done = rc == LC_OK;
    }
    w[k].finished = done;
  }
  if (rc != LC_OK || late >= 0) {
    char what[256], stream[64];
    if (late >= 0) describe(a, w[late].s, what, sizeof what, stream, sizeof stream);
    bool writes = late >= 0 && w[late].writes;
    for (int k = 0; k < n; k++) be->stream_release(w[k].s);
    if (rc != LC_OK) lc_error(L, fname, "%s", err);
    lc_error(L, fname, "work queued on %s still %s %s (LUACUDA_STRICT_ASYNC=1: synchronize "
             "the stream, or an event recorded after that work, first)", stream,
             writes ? "writes" : "reads", what);
  }
  /* forget what is done, unless recorded again meanwhile */
  lc_stream *gone[LC_BUFFER_STREAMS];
  int ngone = 0;
  lock(b);
  for (int k = 0; k < n; k++) {
    struct lc_pending *p = &b->pending[w[k].slot];
    if (w[k].finished && p->stream == w[k].s && p->gen == w[k].gen) {
      gone[ngone++] = p->stream;
      p->stream = NULL;
      p->writes = false;
    }
  }
  atomic_store_explicit(&b->busy, any_slot(b), memory_order_release);
  unlock(b);
  for (int k = 0; k < ngone; k++) be->stream_release(gone[k]);
  for (int k = 0; k < n; k++) be->stream_release(w[k].s);
}

void lc_pending_free(lc_buffer *b) {
  for (int i = 0; i < LC_BUFFER_STREAMS; i++) {
    struct lc_pending *p = &b->pending[i];
    if (p->stream) b->backend->stream_release(p->stream);
    if (p->event) b->backend->event_destroy(p->event);
    p->stream = NULL;
    p->event = NULL;
  }
}
