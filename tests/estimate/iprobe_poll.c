/* A poller for `mpe estimate`'s test: on 2 ranks, rank 0 sends 20 messages to rank 1; before each,
 * both ranks poll MPI_Iprobe a fixed number of times (argv[1], default 50000), so that the run
 * makes about 2 M Iprobe calls whatever the machine's speed, and liblog's log is mostly their states. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define MESSAGES 20

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long polls = argc > 1 ? atol(argv[1]) : 50000;
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "iprobe_poll needs 2 ranks\n");
    MPI_Finalize();
    return 1;
  }
  int payload[16] = {0};
  for (int m = 0; m < MESSAGES && rank < 2; ++m) {
    int flag = 0;
    MPI_Status st;
    for (long i = 0; i < polls; ++i) MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, &st);
    if (rank == 0) {
      payload[0] = m;
      MPI_Send(payload, 16, MPI_INT, 1, 7, MPI_COMM_WORLD);
    } else {
      MPI_Recv(payload, 16, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("iprobe_poll: %d messages, %ld polls before each\n", MESSAGES, polls);
  MPI_Finalize();
  return 0;
}
