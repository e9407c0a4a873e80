/* A polling loop: K receives posted that nothing matches, then N calls of MPI_Testany over them,
 * each completing none (hpcc's MPIRandomAccess polls this way, 8.5 M times a rank). What a tool
 * adds to a Wait/Test of K requests that completes nothing, counted by callgrind:
 * MPE_BENCH_LOOP="build/bin/testany_loop 16" MPE_BENCH_CALLS="20000 60000" \
 *   MPE_BENCH_TOOLS=log bench/instructions_per_call.sh build */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int k = argc > 2 ? atoi(argv[1]) : 16;
  const long n = argc > 2 ? atol(argv[2]) : 100000;
  if (k < 1 || k > 1024 || n < 0) {
    fprintf(stderr, "usage: testany_loop [K requests, 1..1024] [N calls]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Request requests[1024];
  char buffer[1024];
  for (int i = 0; i < k; ++i)
    MPI_Irecv(buffer + i, 1, MPI_CHAR, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &requests[i]);
  int index, flag;
  for (long i = 0; i < n; ++i) MPI_Testany(k, requests, &index, &flag, MPI_STATUS_IGNORE);
  for (int i = 0; i < k; ++i) {
    MPI_Cancel(&requests[i]);
    MPI_Wait(&requests[i], MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
