/* Sample: measures the half round-trip time of a message bounced between ranks 0 and 1. */
/*
 * Usage: mpiexec -n P pingpong [bytes] [iterations]   (P >= 2; defaults 8 and 1000)
 *
 * Exact MPI calls per rank (I = iterations):
 *   all ranks:  MPI_Init 1, MPI_Comm_rank 1, MPI_Comm_size 1,
 *               MPI_Ibarrier 1 (the final barrier), MPI_Finalize 1
 *   rank 0:     additionally MPI_Send I, MPI_Recv I, MPI_Wtime 2, MPI_Wait 1
 *   rank 1:     additionally MPI_Recv I, MPI_Send I, MPI_Wait 1
 *   ranks >= 2: additionally MPI_Test, polled with short sleeps until the
 *               barrier completes (timing-dependent count, at least 1)
 * Messages are MPI_BYTE with tag 1 on MPI_COMM_WORLD.
 *
 * The final barrier is nonblocking because MPICH busy-polls inside blocking
 * calls: idle ranks spinning in MPI_Barrier on an oversubscribed node steal
 * the CPU from ranks 0 and 1 and can stretch the run to seconds.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);

  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  int bytes = argc > 1 ? atoi(argv[1]) : 8;
  int iterations = argc > 2 ? atoi(argv[2]) : 1000;
  if (nranks < 2 || bytes < 0 || iterations < 1) {
    if (rank == 0) fprintf(stderr, "pingpong: needs at least 2 ranks, bytes >= 0, iterations >= 1\n");
    MPI_Finalize();
    return 1;
  }

  /* malloc(0) may return NULL, which would look like an allocation failure. */
  unsigned char *buffer = malloc(bytes > 0 ? (size_t)bytes : 1);
  if (!buffer) {
    fprintf(stderr, "pingpong: rank %d cannot allocate %d bytes\n", rank, bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(buffer, 0, bytes > 0 ? (size_t)bytes : 1);

  int ok = 1;
  if (rank == 0) {
    double start = MPI_Wtime();
    for (int i = 0; i < iterations; i++) {
      /* A per-iteration marker at both ends proves the echo is this iteration's message, not a stale buffer.
       */
      unsigned char marker = (unsigned char)(i * 7 + 1);
      if (bytes > 0) {
        buffer[0] = marker;
        buffer[bytes - 1] = marker;
      }
      MPI_Send(buffer, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(buffer, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (bytes > 0 && (buffer[0] != marker || buffer[bytes - 1] != marker)) ok = 0;
    }
    double elapsed = MPI_Wtime() - start;
    double half_round_trip_us = elapsed / (2.0 * iterations) * 1e6;
    printf("pingpong: bytes=%d iterations=%d half_round_trip_us=%.3f\n", bytes, iterations,
           half_round_trip_us);
    if (!ok) fprintf(stderr, "pingpong: echoed data did not match what was sent\n");
  } else if (rank == 1) {
    for (int i = 0; i < iterations; i++) {
      MPI_Recv(buffer, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buffer, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
  }

  MPI_Request barrier;
  MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
  if (rank <= 1) {
    MPI_Wait(&barrier, MPI_STATUS_IGNORE);
  } else {
    const struct timespec poll_interval = {0, 100000};
    for (int done = 0;;) {
      MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
      if (done) break;
      nanosleep(&poll_interval, NULL);
    }
  }
  free(buffer);
  MPI_Finalize();
  return ok ? 0 : 1;
}
