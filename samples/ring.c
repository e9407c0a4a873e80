/* Sample: passes a token around a ring of all ranks with blocking MPI_Send/MPI_Recv. */
/*
 * Usage: mpiexec -n P ring [laps]   (P >= 2, laps defaults to 10)
 *
 * Exact MPI calls made by EVERY rank (L = laps):
 *   MPI_Init 1, MPI_Comm_rank 1, MPI_Comm_size 1,
 *   MPI_Send L, MPI_Recv L, MPI_Finalize 1.
 * Each rank sends to (rank+1)%P and receives from (rank-1+P)%P; each
 * message is one MPI_INT with tag 0 on MPI_COMM_WORLD.
 *
 * Every rank adds 1 to the token once per lap, so rank 0 ends with
 * token = L * P.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);

  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  int laps = argc > 1 ? atoi(argv[1]) : 10;
  /* Checked on every rank without communicating so the documented call counts stay exact. */
  if (nranks < 2 || laps < 1) {
    if (rank == 0)
      fprintf(stderr, "ring: needs at least 2 ranks and laps >= 1 (ranks=%d laps=%d)\n", nranks, laps);
    MPI_Finalize();
    return 1;
  }

  int next = (rank + 1) % nranks;
  int prev = (rank - 1 + nranks) % nranks;
  int token = 0;
  int ok = 1;

  for (int lap = 0; lap < laps; lap++) {
    if (rank == 0) {
      token++;
      MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
      MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      /* By now ranks 0..rank-1 have each added 1 in this lap and everyone once per earlier lap. */
      if (token != lap * nranks + rank) ok = 0;
      token++;
      MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
    }
  }

  if (rank == 0) {
    if (token != laps * nranks) ok = 0;
    printf("ring: laps=%d ranks=%d token=%d\n", laps, nranks, token);
  }
  if (!ok) fprintf(stderr, "ring: rank %d saw a wrong token value\n", rank);

  MPI_Finalize();
  return ok ? 0 : 1;
}
