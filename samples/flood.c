/* Sample: floods rank 0 with unexpected messages that arrive before any receive is posted. */
/*
 * Usage: mpiexec -n P flood [K] [mode]
 *   K     messages per sender (default 20); every rank except 0 is a sender,
 *         so rank 0 receives S*K messages with S = P-1.
 *   mode  world     (default) everything on MPI_COMM_WORLD
 *         dup       on an MPI_Comm_dup of MPI_COMM_WORLD
 *         split     on an MPI_Comm_split of MPI_COMM_WORLD (one color, same order)
 *         balanced  on MPI_COMM_WORLD, but rank 0 pre-posts all receives with
 *                   MPI_Irecv before the barrier and senders send only after
 *                   it, so no message is ever unexpected
 *
 * Each message is 2 MPI_INTs (small enough for the eager protocol) with tag 7.
 * In the world/dup/split modes all sends happen before an MPI_Barrier and rank 0
 * posts its MPI_Recv(MPI_ANY_SOURCE) calls only after it, all from one source
 * line; in balanced mode the pre-posted MPI_Irecv calls also come from one line.
 * Each of the two lines ends in a marker comment so tests can find its number.
 *
 * Exact MPI calls per rank:
 *   all ranks:       MPI_Init 1, MPI_Comm_rank 1, MPI_Comm_size 1, MPI_Barrier 1, MPI_Finalize 1
 *                    dup mode:   + MPI_Comm_dup 1, MPI_Comm_free 1
 *                    split mode: + MPI_Comm_split 1, MPI_Comm_free 1
 *   senders:         MPI_Send K
 *   rank 0:          world/dup/split: MPI_Recv S*K
 *                    balanced:        MPI_Irecv S*K, MPI_Waitall 1
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FLOOD_TAG = 7 };

/* Every sender's messages must arrive complete and in send order (MPI's non-overtaking rule). */
static int accept_message(const int payload[2], int source, int *next_sequence) {
  if (payload[0] != source) return 0;
  if (payload[1] != next_sequence[source]) return 0;
  next_sequence[source]++;
  return 1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);

  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  int per_sender = argc > 1 ? atoi(argv[1]) : 20;
  const char *mode = argc > 2 ? argv[2] : "world";
  int balanced = strcmp(mode, "balanced") == 0;
  if (per_sender < 0 ||
      (!balanced && strcmp(mode, "world") != 0 && strcmp(mode, "dup") != 0 && strcmp(mode, "split") != 0)) {
    if (rank == 0) fprintf(stderr, "flood: usage: flood [messages_per_sender] [world|dup|split|balanced]\n");
    MPI_Finalize();
    return 1;
  }

  MPI_Comm comm = MPI_COMM_WORLD;
  if (strcmp(mode, "dup") == 0)
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  else if (strcmp(mode, "split") == 0)
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &comm);

  int senders = nranks - 1;
  int total = senders * per_sender;
  int received = 0;
  int ok = 1;

  if (rank == 0) {
    int *next_sequence = calloc((size_t)nranks, sizeof(int));
    int(*payloads)[2] = malloc(sizeof(int[2]) * (size_t)(total > 0 ? total : 1));
    if (!next_sequence || !payloads) {
      fprintf(stderr, "flood: rank 0 cannot allocate bookkeeping for %d messages\n", total);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }

    if (balanced) {
      MPI_Request *requests = malloc(sizeof(MPI_Request) * (size_t)(total > 0 ? total : 1));
      MPI_Status *statuses = malloc(sizeof(MPI_Status) * (size_t)(total > 0 ? total : 1));
      if (!requests || !statuses) {
        fprintf(stderr, "flood: rank 0 cannot allocate %d requests\n", total);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      for (int i = 0; i < total; i++)
        MPI_Irecv(payloads[i], 2, MPI_INT, MPI_ANY_SOURCE, FLOOD_TAG, comm,
                  &requests[i]); /* balanced-receive-line */
      MPI_Barrier(comm);
      MPI_Waitall(total, requests, statuses);
      /* Wildcard receives match in posting order, so request order is arrival order per sender. */
      for (int i = 0; i < total; i++) {
        ok &= accept_message(payloads[i], statuses[i].MPI_SOURCE, next_sequence);
        received++;
      }
      free(requests);
      free(statuses);
    } else {
      /* Waiting here first guarantees every message is already queued as unexpected. */
      MPI_Barrier(comm);
      for (int i = 0; i < total; i++) {
        MPI_Status status;
        MPI_Recv(payloads[i], 2, MPI_INT, MPI_ANY_SOURCE, FLOOD_TAG, comm, &status); /* flood-receive-line */
        ok &= accept_message(payloads[i], status.MPI_SOURCE, next_sequence);
        received++;
      }
    }

    for (int source = 1; source < nranks; source++)
      if (next_sequence[source] != per_sender) ok = 0;
    printf("flood: senders=%d messages_per_sender=%d received=%d mode=%s\n", senders, per_sender, received,
           mode);
    if (!ok) fprintf(stderr, "flood: messages arrived with wrong contents, order or count\n");
    free(next_sequence);
    free(payloads);
  } else {
    if (balanced) MPI_Barrier(comm);
    for (int i = 0; i < per_sender; i++) {
      int payload[2] = {rank, i};
      MPI_Send(payload, 2, MPI_INT, 0, FLOOD_TAG, comm);
    }
    if (!balanced) MPI_Barrier(comm);
  }

  if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
  MPI_Finalize();
  return ok ? 0 : 1;
}
