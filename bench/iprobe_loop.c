/* N calls of MPI_Iprobe on an empty queue, nothing else: the program whose instruction count
 * bench/instructions_per_call.sh compares with and without each tool preloaded. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long n = argc > 1 ? atol(argv[1]) : 100000;
  int flag;
  for (long i = 0; i < n; ++i) MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
