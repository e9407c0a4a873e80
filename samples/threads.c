/* Sample: several threads per rank communicate concurrently under MPI_THREAD_MULTIPLE. */
/*
 * Usage: mpiexec -n P threads [M]   (M exchanges per thread, default 100; link with -pthread)
 *
 * Every rank runs 4 pthreads. Thread t sends to (rank+1)%P and receives from
 * (rank-1+P)%P with tag t, so each thread only ever talks to the thread with
 * the same index on its neighbours.
 *
 * MPICH busy-polls inside blocking calls; 16 spinning threads on a couple of
 * cores starve exactly the thread whose send is awaited, and the run takes
 * seconds. So every thread keeps one message in flight: it starts sending
 * message 0 up front with MPI_Isend, and exchange i receives message i while
 * sending message i+1 (to MPI_PROC_NULL in the last exchange). Before each
 * exchange the thread polls MPI_Iprobe, sleeping briefly between polls, until
 * message i is there, so MPI_Sendrecv never waits for its receive.
 *
 * Exact MPI calls per rank (when M > 0):
 *   MPI_Init_thread 1 (main thread), MPI_Comm_rank 1, MPI_Comm_size 1,
 *   MPI_Isend 4 and MPI_Wait 4 (one each per thread), MPI_Sendrecv 4*M (M per thread),
 *   MPI_Reduce 1, MPI_Finalize 1 (main thread);
 *   MPI_Iprobe at least 4*M (timing-dependent: one per poll).
 * Messages are one MPI_UINT64_T on MPI_COMM_WORLD.
 *
 * Needs P >= 2: with P = 1 the message in flight would go to the sending thread
 * itself, and MPICH completes a send to self only once it is received.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { NTHREADS = 4 };

static int rank, nranks, exchanges;

struct worker {
  int thread_index;
  int ok;
  uint64_t checksum;
};

/* Unique per (sender, thread, exchange) so a misrouted message cannot go unnoticed. */
static uint64_t message_value(int sender, int thread_index, int exchange) {
  return (uint64_t)(sender + 1) * 1000003u + (uint64_t)thread_index * 10007u + (uint64_t)exchange;
}

/* Weighting by the exchange number makes the checksum sensitive to ordering too. */
static uint64_t checksum_term(uint64_t value, int exchange) { return value * (uint64_t)(exchange + 1); }

static const struct timespec poll_interval = {0, 20000};

static void *exchange_with_neighbours(void *arg) {
  struct worker *self = arg;
  int tag = self->thread_index;
  int next = (rank + 1) % nranks;
  int prev = (rank - 1 + nranks) % nranks;

  if (exchanges == 0) return NULL;

  uint64_t first = message_value(rank, tag, 0);
  MPI_Request first_send;
  MPI_Isend(&first, 1, MPI_UINT64_T, next, tag, MPI_COMM_WORLD, &first_send);

  for (int i = 0; i < exchanges; i++) {
    int arrived = 0;
    for (;;) {
      MPI_Iprobe(prev, tag, MPI_COMM_WORLD, &arrived, MPI_STATUS_IGNORE);
      if (arrived) break;
      nanosleep(&poll_interval, NULL);
    }

    int last = i == exchanges - 1;
    uint64_t incoming = 0;
    uint64_t outgoing = last ? 0 : message_value(rank, tag, i + 1);
    MPI_Sendrecv(&outgoing, last ? 0 : 1, MPI_UINT64_T, last ? MPI_PROC_NULL : next, tag, &incoming, 1,
                 MPI_UINT64_T, prev, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (incoming != message_value(prev, tag, i)) self->ok = 0;
    self->checksum += checksum_term(incoming, i);
  }
  MPI_Wait(&first_send, MPI_STATUS_IGNORE);
  return NULL;
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  if (provided < MPI_THREAD_MULTIPLE) {
    fprintf(stderr,
            "threads: rank %d: the MPI library does not provide MPI_THREAD_MULTIPLE "
            "(provided level %d)\n",
            rank, provided);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  exchanges = argc > 1 ? atoi(argv[1]) : 100;
  if (nranks < 2 || exchanges < 0) {
    if (rank == 0) fprintf(stderr, "threads: needs at least 2 ranks and exchanges >= 0\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  pthread_t threads[NTHREADS];
  struct worker workers[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) {
    workers[t] = (struct worker){.thread_index = t, .ok = 1, .checksum = 0};
    if (pthread_create(&threads[t], NULL, exchange_with_neighbours, &workers[t]) != 0) {
      fprintf(stderr, "threads: rank %d cannot start thread %d\n", rank, t);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }

  int ok = 1;
  uint64_t local_checksum = 0;
  for (int t = 0; t < NTHREADS; t++) {
    pthread_join(threads[t], NULL);
    ok &= workers[t].ok;
    local_checksum += workers[t].checksum;
  }

  uint64_t checksum = 0;
  MPI_Reduce(&local_checksum, &checksum, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);

  if (rank == 0) {
    uint64_t expected = 0;
    for (int sender = 0; sender < nranks; sender++)
      for (int t = 0; t < NTHREADS; t++)
        for (int i = 0; i < exchanges; i++) expected += checksum_term(message_value(sender, t, i), i);
    if (checksum != expected) ok = 0;
    printf("threads: ranks=%d threads=%d exchanges_per_thread=%d checksum=%llu\n", nranks, NTHREADS,
           exchanges, (unsigned long long)checksum);
  }
  if (!ok) fprintf(stderr, "threads: rank %d received wrong data\n", rank);

  MPI_Finalize();
  return ok ? 0 : 1;
}
