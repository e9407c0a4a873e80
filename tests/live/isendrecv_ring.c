/* Issue 36's program: every message counted once. 3 ranks; 240 messages in all:
 *  - 60 MPI_Isendrecv around the ring (rank r sends to r+1, receives from r-1), completed by
 *    MPI_Wait with a status and with MPI_STATUS_IGNORE in turn: 180 messages;
 *  - every third iteration but the first, MPI_Isendrecv_replace the other way round: 57;
 *  - on a communicator split with the ranks in reverse order, each rank sends one message to its
 *    right neighbour there, received with MPI_Mprobe(MPI_ANY_SOURCE) + MPI_Mrecv: 3.
 * Open MPI 4.1 (MPI-3.1) has no MPI_Isendrecv: the same messages go through MPI_Irecv + MPI_Isend.
 * Prints "ok" on rank 0 when every message carried what it should. */
#include <mpi.h>
#include <stdio.h>

static int isendrecv(int* out, int dest, int* in, int source, int tag, MPI_Request* req) {
#if MPI_VERSION >= 4
  return MPI_Isendrecv(out, 1, MPI_INT, dest, tag, in, 1, MPI_INT, source, tag, MPI_COMM_WORLD, req);
#else
  MPI_Irecv(in, 1, MPI_INT, source, tag, MPI_COMM_WORLD, &req[1]);
  return MPI_Isend(out, 1, MPI_INT, dest, tag, MPI_COMM_WORLD, &req[0]);
#endif
}

static int isendrecv_replace(int* buf, int dest, int source, int tag, MPI_Request* req) {
#if MPI_VERSION >= 4
  return MPI_Isendrecv_replace(buf, 1, MPI_INT, dest, tag, source, tag, MPI_COMM_WORLD, req);
#else
  static int out;
  out = *buf;
  MPI_Irecv(buf, 1, MPI_INT, source, tag, MPI_COMM_WORLD, &req[1]);
  return MPI_Isend(&out, 1, MPI_INT, dest, tag, MPI_COMM_WORLD, &req[0]);
#endif
}

static void wait_for(MPI_Request* req, int with_status) {
  MPI_Status st[2];
#if MPI_VERSION >= 4
  MPI_Wait(req, with_status ? st : MPI_STATUS_IGNORE);
#else
  MPI_Waitall(2, req, with_status ? st : MPI_STATUSES_IGNORE);
#endif
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int i = 0; i < 60; ++i) {
    int out = rank * 1000 + i, in = -1;
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    isendrecv(&out, right, &in, left, 7, req);
    wait_for(req, i % 2);
    bad += in != left * 1000 + i;
    if (i > 0 && i % 3 == 0) {
      int buf = rank;
      isendrecv_replace(&buf, left, right, 8, req);
      wait_for(req, i % 2);
      bad += buf != right;
    }
  }
  MPI_Comm reversed;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
  int rrank, v = rank, got = -1;
  MPI_Comm_rank(reversed, &rrank);
  MPI_Request sreq;
  MPI_Isend(&v, 1, MPI_INT, (rrank + 1) % size, 9, reversed, &sreq);
  MPI_Message m;
  MPI_Status st;
  MPI_Mprobe(MPI_ANY_SOURCE, 9, reversed, &m, &st);
  MPI_Mrecv(&got, 1, MPI_INT, &m, &st);
  MPI_Wait(&sreq, MPI_STATUS_IGNORE);
  bad += got != (rank + 1) % size; /* world rank r+1 is rank r's left neighbour in the reversed order */
  MPI_Comm_free(&reversed);
  int total = 0;
  MPI_Reduce(&bad, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf(total ? "%d messages carried the wrong value\n" : "ok\n", total);
  MPI_Finalize();
  return 0;
}
