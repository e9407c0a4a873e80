/* Messages on a sub-communicator whose ranks are not in world order, and on MPI_COMM_SELF. */
/*
 * Usage: mpiexec -n P subcomm [laps]   (laps defaults to 5; P >= 2)
 *
 * MPI_Comm_split puts the even and the odd world ranks in two communicators, each numbered in
 * reverse world order (key = -rank). Each half passes a token around its own ring `laps` times
 * (MPI_Sendrecv to sub-rank + 1, from sub-rank - 1), then sums its world ranks with
 * MPI_Allreduce on the sub-communicator; every rank also sends itself one message on
 * MPI_COMM_SELF.
 *
 * Exact per rank: MPI_Comm_split 1, MPI_Sendrecv laps, MPI_Allreduce 1 (on the half),
 * MPI_Isend 1 + MPI_Recv 1 + MPI_Wait 1 on MPI_COMM_SELF, MPI_Comm_free 1. Matched messages:
 * P * laps on the halves (a half of one rank sends to itself) + P on MPI_COMM_SELF.
 * Exits 1 when the sum or the message to itself is wrong.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int laps = argc > 1 ? atoi(argv[1]) : 5;

  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  int sub = 0, subsize = 0;
  MPI_Comm_rank(half, &sub);
  MPI_Comm_size(half, &subsize);
  const int next = (sub + 1) % subsize, prev = (sub - 1 + subsize) % subsize;
  int bad = 0, token = rank;
  for (int lap = 0; lap < laps; ++lap) {
    int got = -1;
    MPI_Sendrecv(&token, 1, MPI_INT, next, lap, &got, 1, MPI_INT, prev, lap, half, MPI_STATUS_IGNORE);
    token = got;
  }
  int sum = 0, want = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half);
  for (int r = rank % 2; r < size; r += 2) want += r;
  bad |= sum != want;

  int mine = rank, back = -1;
  MPI_Request req;
  MPI_Isend(&mine, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &req);
  MPI_Recv(&back, 1, MPI_INT, 0, 9, MPI_COMM_SELF, MPI_STATUS_IGNORE);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  bad |= back != rank;
  MPI_Comm_free(&half);
  if (bad)
    fprintf(stderr, "subcomm: rank %d: wrong sum %d (want %d) or self message %d\n", rank, sum, want, back);
  MPI_Finalize();
  return bad;
}
