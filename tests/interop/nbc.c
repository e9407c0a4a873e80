/* Nonblocking collectives completed in every way a Wait/Test can complete them, for the interop
 * test's request records (test_interop.py, group nbc). Each rank, in order:
 *   1. MPI_Iallreduce (sum of ranks) completed by MPI_Wait;
 *   2. MPI_Ibcast from root 1 and MPI_Ibarrier, both completed by one MPI_Waitall, with an
 *      MPI_Isend/MPI_Irecv ring exchange among them (point-to-point requests in the same call);
 *   3. MPI_Ialltoall completed by polling MPI_Test;
 *   4. MPI_Ibarrier on a duplicate of MPI_COMM_WORLD completed by MPI_Waitany.
 * So per rank: 5 nonblocking collectives (requests), 2 nonblocking messages, 1 blocking
 * MPI_Barrier (not a request). Exits 1 if a result is wrong. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, ok = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);

  int sum = 0;
  MPI_Request req;
  MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  if (sum != size * (size - 1) / 2) ok = 0;

  int value = rank == 1 ? 42 : 0, from = -1;
  MPI_Request reqs[4];
  MPI_Status statuses[4];
  MPI_Ibcast(&value, 1, MPI_INT, 1, MPI_COMM_WORLD, &reqs[0]);
  MPI_Irecv(&from, 1, MPI_INT, (rank + size - 1) % size, 5, MPI_COMM_WORLD, &reqs[1]);
  MPI_Isend(&rank, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD, &reqs[2]);
  MPI_Ibarrier(MPI_COMM_WORLD, &reqs[3]);
  MPI_Waitall(4, reqs, statuses);
  if (value != 42 || from != (rank + size - 1) % size) ok = 0;

  int* out = malloc(sizeof(int) * (size_t)size);
  int* in = malloc(sizeof(int) * (size_t)size);
  for (int i = 0; i < size; i++) out[i] = rank * 100 + i;
  MPI_Ialltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD, &req);
  for (int done = 0; !done;) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
  for (int i = 0; i < size; i++)
    if (in[i] != i * 100 + rank) ok = 0;

  int index = -1;
  MPI_Ibarrier(dup, &req);
  MPI_Waitany(1, &req, &index, MPI_STATUS_IGNORE);
  if (index != 0) ok = 0;

  MPI_Barrier(MPI_COMM_WORLD);
  free(out);
  free(in);
  MPI_Comm_free(&dup);
  if (!ok) fprintf(stderr, "nbc: rank %d got a wrong result\n", rank);
  MPI_Finalize();
  return ok ? 0 : 1;
}
