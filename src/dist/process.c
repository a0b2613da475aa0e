/*
** process: the process's MPI, shared by every lua_State of it: MPI_Init
** once (unless the host program started MPI), the half ops made, and at
** exit MPI_Abort after a failure (so the whole job stops with that rank's
** message) or MPI_Finalize; what MPI provides (threads, device memory).
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>      /* MPIX_Query_cuda_support */
#endif

#include "dist.h"

static pthread_mutex_t mpi_lock = PTHREAD_MUTEX_INITIALIZER;
static bool ops_made;          /* under mpi_lock */
static int thread_level;       /* under mpi_lock: what MPI provides */
static bool we_initialised;    /* under mpi_lock: MPI_Init was ours */

/* on_exit gets the exit status: an uncaught error (lua5.4 exits 1 after
** printing it) aborts the job, so the other ranks do not wait forever in
** a collective; MPI_Finalize would wait for them. Only where we started
** MPI: a host program that did finalises it itself. */
static void at_exit(int status, void *arg) {
  (void)arg;
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (status != 0 && size > 1) {   /* alone, there is nobody to stop */
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, status);
  }
  MPI_Finalize();
}

bool dist_ensure_mpi(char *err, size_t len) {
  bool ok = true;
  pthread_mutex_lock(&mpi_lock);
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (fin) {
    snprintf(err, len, "MPI was finalised already");
    ok = false;
  } else if (!init) {
    int provided;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
      snprintf(err, len, "MPI_Init_thread failed");
      ok = false;
    } else {
      we_initialised = true;
      if (on_exit(at_exit, NULL) != 0) {
        snprintf(err, len, "on_exit failed: cannot finalise MPI at exit");
        ok = false;
      }
    }
  }
  if (ok) MPI_Query_thread(&thread_level);
  if (ok && !ops_made) {
    ok = dist_make_half_ops();
    if (!ok) snprintf(err, len, "MPI_Op_create failed");
    ops_made = ok;
  }
  pthread_mutex_unlock(&mpi_lock);
  return ok;
}

int dist_thread_level(void) {
  pthread_mutex_lock(&mpi_lock);
  int level = thread_level;
  pthread_mutex_unlock(&mpi_lock);
  return level;
}

/* Does MPI take device memory? LUACUDA_MPI_CUDA=1 or 0 says so (for an
** MPI that cannot be asked); else Open MPI's answer (its CUDA extension),
** MPICH's (MPIX_GPU_query_support), or no. */
bool dist_cuda_aware(void) {
  const char *e = getenv("LUACUDA_MPI_CUDA");
  if (e && *e) return strcmp(e, "0") != 0;
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  return MPIX_Query_cuda_support() == 1;
#elif defined(MPIX_GPU_SUPPORT_CUDA)
  int yes = 0;
  return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &yes) == MPI_SUCCESS && yes;
#else
  return false;
#endif
}

bool dist_finalised(void) {
  int fin = 0;
  MPI_Finalized(&fin);
  return fin != 0;
}

/* The other ranks wait in calls they cannot leave. */
void dist_abort_job(const char *fname, const char *msg) {
  fflush(stdout);
  fprintf(stderr, "luacuda.dist.%s: %s\n", fname, msg);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}
