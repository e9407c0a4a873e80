/* Wait states with known causes: each scenario synchronizes (SITE:sync) on a common start time,
 * then one rank sleeps a known delay past it before its communication, so that the waiting time
 * `mpe waits` finds has a known length, waiter, culprit and call site. Every communication line
 * that waits is marked SITE:<name>; test_waits.py finds the marks by their text, so the lines may
 * move.
 *
 *   wait_states <scenario> [delay_ms] [second_delay_ms]
 *
 * Scenarios (least ranks; more ranks take part in the collectives and stay idle in the
 * point-to-point ones): late_sender_recv (2), late_sender_wait (2), late_sender_waitall (3),
 * late_receiver (2), wait_barrier (2), wait_nxn (2), late_broadcast (2), early_reduce (2),
 * iallreduce (2), none (3: every scenario's communication, repeated, with no delay). The default
 * delays are the test's: keep them in step with test_waits.py.
 *
 * Why a common start time rather than sleeping right after an MPI_Barrier: with more polling ranks
 * than cores, MPICH's barrier releases its members up to ~20 ms apart (each round waits for a
 * descheduled partner's time slice), and the late rank, which entered last, tends to leave last:
 * its delay then reached the others 4-16 ms longer than injected. Here every rank sleeps until the
 * same instant of CLOCK_MONOTONIC (one clock for all processes of a host: the tests run on one),
 * so that the waiting ranks enter together, without polling before, and the late rank enters the
 * delay after them. */
#define _GNU_SOURCE
#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, size;
static int64_t delay_ns = 200000000;  /* the late rank's delay */
static int64_t second_ns = 100000000; /* late_sender_waitall: the earlier sender's delay */
/* The start lies this far after the last rank's entry into the synchronization: longer than the
 * slowest release of its members seen on an oversubscribed host. */
static const int64_t kMarginNs = 50000000;
/* "none": how long after the start every rank sleeps before the next synchronization. */
static const int64_t kSettleNs = 20000000;
static int64_t start_ns; /* this scenario's common start */
/* How much later than planned this rank woke (the most over the rounds of "none"), in ms, written
 * at the end to the file late.<rank>: the test knows from it when the host, not the analysis,
 * broke the plan (a rank not scheduled for tens of ms happens on a busy machine). */
static double late_ms = 0;

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void sleep_until(int64_t ns) {
  struct timespec t = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {
  }
}

static void woke(int64_t planned) {
  double ms = (now_ns() - planned) / 1e6;
  if (ms > late_ms) late_ms = ms;
}

/* Synchronizes the ranks on a common start and sleeps until it. */
static void sync_start(void) {
  int64_t mine = now_ns() + kMarginNs;
  MPI_Allreduce(&mine, &start_ns, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD); /* SITE:sync */
  sleep_until(start_ns);
  woke(start_ns);
}

static void need(int ranks, const char* scenario) {
  if (size < ranks) {
    if (rank == 0) fprintf(stderr, "waits: %s needs %d ranks or more, got %d\n", scenario, ranks, size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

/* The late rank: sleeps until the delay past the common start. */
static void late(int64_t ns) {
  sleep_until(start_ns + ns);
  woke(start_ns + ns);
}

/* Rank 1 sends late: rank 0's blocking receive waits. */
static void late_sender_recv(int delayed) {
  int v = rank;
  if (rank == 1) {
    if (delayed) late(delay_ns);
    MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
  } else if (rank == 0) {
    MPI_Recv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* SITE:ls_recv */
  }
}

/* Rank 1 sends late: rank 0 posted its receive early and waits in MPI_Wait. */
static void late_sender_wait(int delayed) {
  int v = rank;
  MPI_Request req;
  if (rank == 1) {
    if (delayed) late(delay_ns);
    MPI_Send(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
  } else if (rank == 0) {
    MPI_Irecv(&v, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE); /* SITE:ls_wait */
  }
}

/* Ranks 1 and 2 send late by different amounts (rank 1 by second_ns, rank 2 by delay_ns): rank
 * 0's Waitall waits for the later one only. */
static void late_sender_waitall(int delayed) {
  int v[2] = {rank, rank};
  MPI_Request req[2];
  MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: GCC takes that constant for an empty array */
  if (rank == 0) {
    MPI_Irecv(&v[0], 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(&v[1], 1, MPI_INT, 2, 3, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, st); /* SITE:ls_waitall */
  } else if (rank <= 2) {
    if (delayed) late(rank == 1 ? second_ns : delay_ns);
    MPI_Send(&v[0], 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
  }
}

/* Rank 1 posts its receive late: rank 0's synchronous send waits for it. */
static void late_receiver(int delayed) {
  int v = rank;
  if (rank == 0) {
    MPI_Ssend(&v, 1, MPI_INT, 1, 4, MPI_COMM_WORLD); /* SITE:lr_ssend */
  } else if (rank == 1) {
    if (delayed) late(delay_ns);
    MPI_Recv(&v, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

/* The last rank enters the barrier late: every other rank waits. */
static void wait_barrier(int delayed) {
  if (delayed && rank == size - 1) late(delay_ns);
  MPI_Barrier(MPI_COMM_WORLD); /* SITE:barrier */
}

/* The last rank enters the Allreduce late: every other rank waits. */
static void wait_nxn(int delayed) {
  int v = rank, sum = 0;
  if (delayed && rank == size - 1) late(delay_ns);
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* SITE:allreduce */
}

/* The root (0) enters the broadcast late: every other rank waits. */
static void late_broadcast(int delayed) {
  int v = rank;
  if (delayed && rank == 0) late(delay_ns);
  MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD); /* SITE:bcast */
}

/* The root (0) enters the reduction early; the others come late, rank 1 first (by delay_ns), the
 * rest 50 ms after it: the root waits for the earliest, rank 1. */
static void early_reduce(int delayed) {
  int v = rank, sum = 0;
  if (delayed && rank != 0) late(delay_ns + (rank == 1 ? 0 : 50000000));
  MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD); /* SITE:reduce */
}

/* The last rank starts a nonblocking Allreduce late; the others wait in the MPI_Wait that
 * completes theirs. */
static void iallreduce(int delayed) {
  int v = rank, sum = 0;
  MPI_Request req;
  if (delayed && rank == size - 1) late(delay_ns);
  MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE); /* SITE:iallreduce_wait */
}

typedef struct {
  const char* name;
  int ranks; /* the least */
  void (*run)(int delayed);
} Scenario;

static const Scenario kScenarios[] = {
    {"late_sender_recv", 2, late_sender_recv},
    {"late_sender_wait", 2, late_sender_wait},
    {"late_sender_waitall", 3, late_sender_waitall},
    {"late_receiver", 2, late_receiver},
    {"wait_barrier", 2, wait_barrier},
    {"wait_nxn", 2, wait_nxn},
    {"late_broadcast", 2, late_broadcast},
    {"early_reduce", 2, early_reduce},
    {"iallreduce", 2, iallreduce},
};
enum { kScenarioCount = sizeof kScenarios / sizeof kScenarios[0] };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: wait_states <scenario> [delay_ms] [second_delay_ms]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (argc > 2) delay_ns = (int64_t)(atof(argv[2]) * 1e6);
  if (argc > 3) second_ns = (int64_t)(atof(argv[3]) * 1e6);
  const char* name = argv[1];

  if (strcmp(name, "none") == 0) {
    /* Every scenario's communication with no delay, each after its own synchronization, several
     * times: what remains is the noise of the clocks and the scheduler. */
    need(3, name);
    for (int round = 0; round < 5; ++round) {
      for (int i = 0; i < kScenarioCount; ++i) {
        sync_start();
        kScenarios[i].run(0); /* the point-to-point ones involve ranks 0-2 only */
        /* Ranks that take no part (or are done) sleep rather than poll in the next
         * synchronization, which would take the cores of the ranks still communicating. */
        sleep_until(start_ns + kSettleNs);
      }
    }
  } else {
    const Scenario* s = NULL;
    for (int i = 0; i < kScenarioCount; ++i)
      if (strcmp(name, kScenarios[i].name) == 0) s = &kScenarios[i];
    if (!s) {
      if (rank == 0) fprintf(stderr, "waits: unknown scenario %s\n", name);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    need(s->ranks, name);
    sync_start();
    s->run(1);
  }
  /* A file per rank, not a line on stdout: mpiexec.mpich interleaves the ranks' lines. */
  char file[64];
  snprintf(file, sizeof file, "late.%d", rank);
  FILE* f = fopen(file, "w");
  if (f) {
    fprintf(f, "%.6f\n", late_ms);
    fclose(f);
  }
  MPI_Finalize();
  return 0;
}
