/* Test program: rank 1 sleeps before an MPI_Barrier, so every other rank waits there that long. */
/*
 * Usage: mpiexec -n P sleep_barrier [milliseconds]   (default 1000)
 *
 * Exact MPI calls per rank: MPI_Init 1, MPI_Comm_rank 1, MPI_Allreduce 1 (lines the ranks up),
 * MPI_Barrier 1, MPI_Finalize 1. Only rank 1 sleeps, between the MPI_Allreduce and the barrier.
 * With a second argument "reset", every rank calls MPI_Pcontrol(2) right after the MPI_Allreduce.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, one = 1, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long ms = argc > 1 ? atol(argv[1]) : 1000;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 2 && strcmp(argv[2], "reset") == 0) MPI_Pcontrol(2);
  if (rank == 1) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("sleep_barrier: ranks=%d slept=%ldms\n", sum, ms);
  MPI_Finalize();
  return 0;
}
