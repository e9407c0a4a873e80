/* Test program for the two-host tests: E MPI_Iprobe calls per rank (events that stay local), then
 * L laps of a token around a ring (messages between the hosts).
 * Usage: relay_prog [E] [L]   (defaults 20000 and 4)
 * Exact MPI calls per rank: MPI_Init 1, MPI_Comm_rank 1, MPI_Comm_size 1, MPI_Iprobe E,
 * MPI_Send L, MPI_Recv L, MPI_Finalize 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, flag, token = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long events = argc > 1 ? atol(argv[1]) : 20000;
  const int laps = argc > 2 ? atoi(argv[2]) : 4;
  for (long i = 0; i < events; ++i) MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  for (int lap = 0; lap < laps; ++lap) {
    if (rank == 0) {
      MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
      MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      ++token;
      MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
    }
  }
  if (rank == 0) printf("relay_prog: %d ranks, %ld events, %d laps, token %d\n", size, events, laps, token);
  MPI_Finalize();
  return 0;
}
