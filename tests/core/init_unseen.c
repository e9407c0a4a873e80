/* Starts and ends MPI through PMPI_ only, as a binding the tools do not wrap would: the tools never
 * see MPI_Init, and must say so at exit instead of staying silent (test_init_unseen.py). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  PMPI_Init(&argc, &argv);
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("done\n");
  PMPI_Finalize();
  return 0;
}
