/* IMB's Allreduce at 8 bytes, as a loop: N MPI_Allreduce of one double (after a warm-up of N/10),
 * timed by rank 0 with MPI_Wtime between two barriers; prints "allreduce_us=<time per call>".
 * For bench/app_latency.sh, which runs it with and without the tools. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long n = argc > 1 ? atol(argv[1]) : 100000;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double in = rank, out = 0;
  for (long i = 0; i < n / 10; ++i) MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (long i = 0; i < n; ++i) MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t1 = MPI_Wtime();
  if (rank == 0) printf("allreduce_us=%.4f\n", (t1 - t0) / (double)n * 1e6);
  MPI_Finalize();
  return 0;
}
