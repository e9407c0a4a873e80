/* Test program: a ping-pong between ranks 0 and 1 in which rank 1 kills itself with SIGKILL
 * (or SIGTERM when argv[2] is "term") after N round trips (argv[1], default 20000). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = argc > 1 ? atoi(argv[1]) : 20000;
  char buf[8] = {0};
  for (int i = 0; i < n; ++i) {
    if (rank == 0) {
      MPI_Send(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
  }
  if (rank == 1) {
    printf("rank 1 completed %d round trips\n", n);
    fflush(stdout);
    kill(getpid(), argc > 2 && strcmp(argv[2], "term") == 0 ? SIGTERM : SIGKILL);
  }
  MPI_Recv(buf, 8, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never satisfied */
  MPI_Finalize();
  return 0;
}
