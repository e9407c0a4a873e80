/* A do-nothing foreign PMPI layer: MPI_Iprobe straight to PMPI_Iprobe, nothing else. Built four
 * times under different names (libnull_layer1..4.so) so that libmpestack loads four distinct
 * layers; bench/stack_instructions.sh stacks 0, 1, 2 and 4 of them. */
#include <mpi.h>

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
  return PMPI_Iprobe(source, tag, comm, flag, status);
}
