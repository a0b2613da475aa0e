/*
** memcheck: the simulator's record of its live device blocks, so that a
** kernel's fault in a guard page (guard.c) can say which array it ran
** past: its size, address and the label the binding gave it (dtype, shape
** and the script's line that allocated it). A hash table keyed by the
** block's address, with its nodes in the host heap: kernels cannot reach
** them, since every block is a mapping of its own. A fault is rare, so
** explaining one scans the whole table.
*/
#include "sim.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LABEL_MAX 200

typedef struct block {
  struct block *next;
  uintptr_t at;
  size_t n;
  char label[LABEL_MAX];     /* "" when the allocation gave none */
} block;

static atomic_flag lock = ATOMIC_FLAG_INIT;       /* lc_sim_spin_lock */
static block **buckets;
static size_t nbuckets, count;

static size_t hash(uintptr_t at) {
  uint64_t h = (uint64_t)at * 0x9e3779b97f4a7c15ull;
  return (size_t)(h >> 20) & (nbuckets - 1);
}

/* Twice the buckets once there are more blocks than buckets (under lock);
** a failed grow keeps the table as it is, only slower. */
static void grow(void) {
  size_t old = nbuckets, size = old ? old * 2 : 256;
  block **fresh = calloc(size, sizeof *fresh);
  if (fresh == NULL) return;
  block **prev = buckets;
  buckets = fresh;
  nbuckets = size;
  for (size_t i = 0; i < old; i++)
    for (block *b = prev[i], *next; b; b = next) {
      next = b->next;
      size_t h = hash(b->at);
      b->next = buckets[h];
      buckets[h] = b;
    }
  free(prev);
}

void lc_sim_memcheck_add(void *p, size_t n) {
  block *b = malloc(sizeof *b);
  if (b == NULL) return;           /* only the message loses the array's name */
  b->at = (uintptr_t)p;
  b->n = n;
  b->label[0] = '\0';
  lc_sim_spin_lock(&lock);
  if (count >= nbuckets) grow();
  if (nbuckets == 0) {
    lc_sim_spin_unlock(&lock);
    free(b);
    return;
  }
  size_t h = hash(b->at);
  b->next = buckets[h];
  buckets[h] = b;
  count++;
  lc_sim_spin_unlock(&lock);
}

/* the node of p (under lock), or NULL */
static block **find(uintptr_t at) {
  if (nbuckets == 0) return NULL;
  for (block **b = &buckets[hash(at)]; *b; b = &(*b)->next)
    if ((*b)->at == at) return b;
  return NULL;
}

void lc_sim_memcheck_label(void *p, const char *label) {
  lc_sim_spin_lock(&lock);
  block **b = find((uintptr_t)p);
  if (b) {                       /* a copy without printf's cost: once per allocation */
    size_t n = label ? strnlen(label, LABEL_MAX - 1) : 0;
    memcpy((*b)->label, label ? label : "", n);
    (*b)->label[n] = '\0';
  }
  lc_sim_spin_unlock(&lock);
}

void lc_sim_memcheck_remove(void *p) {
  lc_sim_spin_lock(&lock);
  block **b = find((uintptr_t)p), *gone = NULL;
  if (b) {
    gone = *b;
    *b = gone->next;
    count--;
  }
  lc_sim_spin_unlock(&lock);
  free(gone);
}

bool lc_sim_memcheck_explain(const void *addr, char *buf, size_t n) {
  uintptr_t a = (uintptr_t)addr, page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t best = page;            /* the nearest block within a page of addr */
  block found;
  bool before = false, any = false;
  lc_sim_spin_lock(&lock);
  for (size_t i = 0; i < nbuckets; i++)
    for (const block *b = buckets[i]; b; b = b->next) {
      uintptr_t end = b->at + b->n;
      if (a >= end && a - end < best) {
        best = a - end;
        before = false;
      } else if (a < b->at && b->at - a <= best) {
        best = b->at - a;
        before = true;
      } else {
        continue;
      }
      found = *b;
      any = true;
    }
  lc_sim_spin_unlock(&lock);
  if (!any) return false;
  char what[LABEL_MAX + 40];
  if (found.label[0]) snprintf(what, sizeof what, "%s", found.label);
  else snprintf(what, sizeof what, "a block of device memory");
  long long offset = before ? -(long long)best : (long long)(found.n + best);
  snprintf(buf, n, "the access at byte %lld %s %s (%zu bytes at %p)", offset,
           before ? "is before the start of" : "runs past the end of", what, found.n,
           (void *)found.at);
  return true;
}
