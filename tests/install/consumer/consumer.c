/* Links against an installed tool library through find_package(MpeTools). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  printf("consumer ok\n");
  MPI_Finalize();
  return 0;
}
