/* Unexpected-queue rounds on communicators that are freed and created again, for the counter
 * tracks' per-communicator handles (tests/mpit/test_mpit.py).
 *
 * Usage: mpiexec -n P comm_rounds K1 [K2 ...]
 * Round r: every rank duplicates MPI_COMM_WORLD; each rank but 0 sends Kr messages (tag 5, one
 * int) to rank 0 on the duplicate, then all meet in an MPI_Barrier on MPI_COMM_WORLD, so every
 * message has arrived, unexpected, before rank 0's first receive. Rank 0 receives them one by one
 * on the duplicate (the queue drains from (P-1)*Kr to 1, read at each receive's entry), then
 * sends each sender a token on MPI_COMM_WORLD, which the senders wait for in a posted receive: no
 * message of the next round's MPI_Comm_dup reaches rank 0 while it drains. Then the duplicate is
 * freed. Open MPI gives the next round's duplicate the freed one's handle, so a reader keeping
 * handles by communicator must notice the free.
 * Rank 0 prints "comm_rounds: rounds=R received=N reused=U ok", U the rounds whose duplicate had
 * the previous round's handle value.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROUND_TAG = 5, TOKEN_TAG = 6 };

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const int rounds = argc - 1;

  MPI_Comm previous = MPI_COMM_NULL;
  int received = 0, reused = 0, ok = 1;
  for (int r = 1; r <= rounds; ++r) {
    const int count = atoi(argv[r]);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (r > 1 && memcmp(&comm, &previous, sizeof comm) == 0) reused++;
    previous = comm;
    if (rank != 0)
      for (int i = 0; i < count; ++i) MPI_Send(&i, 1, MPI_INT, 0, ROUND_TAG, comm);
    MPI_Barrier(MPI_COMM_WORLD);
    int token = r;
    if (rank == 0) {
      for (int i = 0; i < (nranks - 1) * count; ++i) {
        int value;
        MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, ROUND_TAG, comm, MPI_STATUS_IGNORE);
        if (value < 0 || value >= count) ok = 0;
        received++;
      }
      for (int peer = 1; peer < nranks; ++peer) MPI_Send(&token, 1, MPI_INT, peer, TOKEN_TAG, MPI_COMM_WORLD);
    } else {
      MPI_Recv(&token, 1, MPI_INT, 0, TOKEN_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (token != r) ok = 0;
    }
    MPI_Comm_free(&comm);
  }
  if (rank == 0)
    printf("comm_rounds: rounds=%d received=%d reused=%d %s\n", rounds, received, reused,
           ok ? "ok" : "WRONG");
  MPI_Finalize();
  return ok ? 0 : 1;
}
