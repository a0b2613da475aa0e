/*
** agree: how the ranks of luacuda.dist agree on each call before any of
** its MPI or NCCL calls, over one control channel per process (a copy of
** MPI_COMM_WORLD): that they are in the same call (kind, communicator,
** peer), and what each gave (header.c's fields, compared by it).
** Ranks in different calls raise the same error on both, or abort the job
** with a message naming both calls; a rank that ends (MPI_Finalize) tells
** the others, so that one waiting for it aborts instead of hanging. The
** protocol, and why it cannot hang where ranks disagree: agree.c's head.
** Plain C over MPI: no Lua, nothing of luacuda's.
*/
#ifndef LUACUDA_DIST_AGREE_H
#define LUACUDA_DIST_AGREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#define LC_AGREE_FIELDS 16     /* a header's fields (dist.h uses the first ones) */
#define LC_AGREE_MSGLEN 256

/* What a rank's call gives, for the others to compare: f[0] is the
** call's kind; err is this rank's own argument error ("" if none). */
typedef struct lc_header {
  int64_t f[LC_AGREE_FIELDS];
  char err[LC_AGREE_MSGLEN];
} lc_header;

/* The headers of a collective's ranks combined, the same on each: every
** field's greatest and least, and the error of the first rank (in the
** communicator's order) that found one in its own arguments. */
typedef struct lc_combined {
  int64_t mx[LC_AGREE_FIELDS], mn[LC_AGREE_FIELDS];
  int err_rank;                /* 0-based, in the communicator; -1: none */
  char err[LC_AGREE_MSGLEN];
} lc_combined;

/* A communicator as the channel sees it. */
typedef struct lc_group {
  int64_t id;                  /* agreed by its ranks when it was made: lc_agree_next_id */
  int size, rank;              /* rank: this process's, 0-based */
  const int *world;            /* world[r]: rank r's rank in MPI_COMM_WORLD */
} lc_group;

/* A call: a collective, or a send or recv with one peer. */
typedef enum { LC_COLLECTIVE, LC_SEND, LC_RECV } lc_role;
typedef struct lc_call {
  int kind;                    /* named by lc_agree_open's names */
  lc_role role;
  int peer;                    /* a send's or recv's, in the group, 0-based */
} lc_call;

/* LC_RAISE: raise the message (the ranks of both calls raise the same);
** LC_ABORT: print it and abort the job (they cannot all be told). */
typedef enum { LC_AGREED, LC_RAISE, LC_ABORT } lc_verdict;

/* The channel, made once per process at the first call (collective over
** MPI_COMM_WORLD: every rank makes it), with kind_names for messages (kept,
** not copied). At MPI_Finalize (an attribute of MPI_COMM_SELF, whoever
** finalises) the process tells every rank it has ended, and receives
** every rank's word that it has: nothing is left on the channel. false and
** a message. */
bool lc_agree_open(const char *const *kind_names, char *err, size_t len);

/* A new communicator's id: every rank of it gives lc_agree_next_id(), takes
** the greatest (MPI_MAX) and passes it to lc_agree_used_id. Two
** communicators of one process never have the same id. */
int64_t lc_agree_next_id(void);
void lc_agree_used_id(int64_t id);

/* Every rank of g, in the same collective call: the headers combined
** into *out. A message in msg otherwise. */
lc_verdict lc_agree_collective(const lc_group *g, const lc_call *call, const lc_header *mine,
                               lc_combined *out, char *msg, size_t len);

/* A send or recv and its peer's recv or send on the same communicator:
** the peer's header into *theirs. A message in msg otherwise. */
lc_verdict lc_agree_pair(const lc_group *g, const lc_call *call, const lc_header *mine,
                         lc_header *theirs, char *msg, size_t len);

/* This process ends: the other ranks are told, and their word received
** (what MPI_Finalize does through the attribute; idempotent). */
void lc_agree_end(void);

#endif
