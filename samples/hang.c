/* hang: three ways an MPI job hangs, for the live view's hang diagnosis (mpe top, upshot --live),
 * and a busy job that does not.
 *
 *   hang deadlock2   ranks 0 and 1 each receive from the other first: neither sends
 *   hang deadlock3   ranks 0, 1, 2 each receive from the next one first: a three-rank cycle
 *   hang stuck       the last rank computes for HANG_SECONDS (default 3600) while the others wait
 *                    in MPI_Barrier, or until the file HANG_STOP_FILE exists (a test that is done
 *                    with the job ends it without waiting out a safe margin); then the job ends
 *                    normally
 *   hang busy        every rank passes 4 KiB messages around a ring for HANG_SECONDS, then ends
 *
 * Each mode first does a little honest traffic (an allreduce) and prints one line. The deadlocks
 * last until the job is killed; ranks not taking part in one wait in MPI_Barrier. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Receives an int from `from`, then sends one to `to`: with every rank of a cycle receiving
 * first, nobody ever sends. */
static void receive_then_send(int from, int to) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Send(&value, 1, MPI_INT, to, 7, MPI_COMM_WORLD);
}

/* Computes, never calling MPI, until the time is up or the stop file exists (looked for about
 * every millisecond: one access() call per million additions). */
static void compute_forever(double seconds) {
  const double end = MPI_Wtime() + seconds;
  const char *stop_file = getenv("HANG_STOP_FILE");
  volatile double x = 0;
  while (MPI_Wtime() < end && !(stop_file && access(stop_file, F_OK) == 0))
    for (int i = 0; i < 1000000; ++i) x += i * 1e-9;
}

/* Passes 4 KiB around the ring until rank 0's clock says `seconds` are over (its decision goes
 * round with the message, so every rank stops after the same lap). */
static void busy_ring(int rank, int size, double seconds) {
  static char message[4096];
  const double end = MPI_Wtime() + seconds;
  for (int more = 1; more;) {
    if (rank == 0) {
      message[0] = MPI_Wtime() < end;
      MPI_Send(message, sizeof message, MPI_CHAR, 1, 3, MPI_COMM_WORLD);
      MPI_Recv(message, sizeof message, MPI_CHAR, size - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(message, sizeof message, MPI_CHAR, rank - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(message, sizeof message, MPI_CHAR, (rank + 1) % size, 3, MPI_COMM_WORLD);
    }
    more = message[0];
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *mode = argc > 1 ? argv[1] : "deadlock2";
  const double limit = getenv("HANG_SECONDS") ? atof(getenv("HANG_SECONDS")) : 3600;
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("%s: %s on %d ranks\n", strcmp(mode, "busy") == 0 ? "busy" : "hanging", mode, size);
    fflush(stdout);
  }
  if (strcmp(mode, "deadlock2") == 0 && size >= 2) {
    if (rank < 2) receive_then_send(1 - rank, 1 - rank);
  } else if (strcmp(mode, "deadlock3") == 0 && size >= 3) {
    if (rank < 3) receive_then_send((rank + 1) % 3, (rank + 2) % 3);
  } else if (strcmp(mode, "stuck") == 0) {
    if (rank == size - 1) compute_forever(limit);
  } else if (strcmp(mode, "busy") == 0 && size >= 2) {
    busy_ring(rank, size, limit);
  } else {
    if (rank == 0) fprintf(stderr, "hang: unknown mode %s, or too few ranks\n", mode);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
