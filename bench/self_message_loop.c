/* N 8-byte messages a process sends itself (MPI_Irecv, MPI_Send, MPI_Wait), nothing else: what
 * each tool adds to the calls of a message, counted by callgrind without the waiting of a real
 * ping-pong (whose polling varies from run to run). A blocking send to oneself may wait forever.
 * MPE_BENCH_LOOP="build/bin/self_message_loop" bench/instructions_per_call.sh build */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long n = argc > 1 ? atol(argv[1]) : 100000;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double out = 1.0, in = 0.0;
  for (long i = 0; i < n; ++i) {
    MPI_Request req;
    MPI_Irecv(&in, 1, MPI_DOUBLE, rank, 7, MPI_COMM_WORLD, &req);
    MPI_Send(&out, 1, MPI_DOUBLE, rank, 7, MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return in == out ? 0 : 1;
}
