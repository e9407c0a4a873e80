/* N rounds of two MPI_Irecv and two MPI_Isend to self completed by one MPI_Waitall of the four
 * requests: the C twin of waitall_loop.f90, for bench/waitall_instructions.sh. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long n = argc > 1 ? atol(argv[1]) : 100000;
  int out[2] = {1, 2}, in[2];
  MPI_Request reqs[4];
  MPI_Status stats[4];
  for (long i = 0; i < n; ++i) {
    MPI_Irecv(&in[0], 1, MPI_INT, 0, 1, MPI_COMM_SELF, &reqs[0]);
    MPI_Irecv(&in[1], 1, MPI_INT, 0, 2, MPI_COMM_SELF, &reqs[1]);
    MPI_Isend(&out[0], 1, MPI_INT, 0, 1, MPI_COMM_SELF, &reqs[2]);
    MPI_Isend(&out[1], 1, MPI_INT, 0, 2, MPI_COMM_SELF, &reqs[3]);
    MPI_Waitall(4, reqs, stats);
  }
  MPI_Finalize();
  return 0;
}
