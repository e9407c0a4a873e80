/* A known number of MPI_Allgather and MPI_Barrier calls, for the test of a layer that calls
 * MPI_Barrier inside its MPI_Allgather wrapper (tests/stack/test_stack.py).
 *
 * Usage: mpiexec -n P stack_allgather [n]   (n defaults to 5)
 * Exact MPI calls made by EVERY rank: MPI_Init 1, MPI_Comm_rank 1, MPI_Comm_size 1,
 * MPI_Allgather n, MPI_Barrier 1, MPI_Finalize 1. Rank 0 prints the sum of everything gathered. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = argc > 1 ? atoi(argv[1]) : 5;
  int *all = malloc(sizeof(int) * (size_t)size);
  long sum = 0;
  for (int i = 0; i < n; i++) {
    int mine = rank * 10 + i;
    MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) sum += all[r];
  }
  MPI_Barrier(MPI_COMM_WORLD);
  long want = 0;
  for (int i = 0; i < n; i++) want += 10L * size * (size - 1) / 2 + (long)size * i;
  if (rank == 0) printf("allgather: n=%d ranks=%d sum=%ld\n", n, size, sum);
  if (sum != want) fprintf(stderr, "allgather: rank %d summed %ld, expected %ld\n", rank, sum, want);
  free(all);
  MPI_Finalize();
  return sum == want ? 0 : 1;
}
