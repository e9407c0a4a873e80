/* Shared check harness for the conformance programs: records checks per rank and has rank 0 print them all
 * with a verdict. */
#ifndef CONFORMANCE_HARNESS_H
#define CONFORMANCE_HARNESS_H

#include <mpi.h>
#include <stdio.h>

enum { NRANKS = 4 };

/* A program that records more checks defines MAX_CHECKS before including this header. */
#ifndef MAX_CHECKS
#define MAX_CHECKS 64
#endif

static int rank;

/* Results are only recorded here and gathered once at the end, so checking adds no communication between
 * tests. */
static const char *check_names[MAX_CHECKS];
static long long check_results[MAX_CHECKS][2];
static int check_count;

/* Every rank must call this for the same checks in the same order. */
static void check(const char *name, long long value, int ok) {
  if (check_count == MAX_CHECKS) {
    fprintf(stderr, "too many checks; raise MAX_CHECKS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  check_names[check_count] = name;
  check_results[check_count][0] = value;
  check_results[check_count][1] = ok != 0;
  check_count++;
}

static int start(int *argc, char ***argv, const char *program) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == NRANKS) return 1;
  if (rank == 0) {
    fprintf(stderr, "%s: needs exactly %d ranks, got %d\n", program, NRANKS, size);
    printf("FAIL %s\n", program);
  }
  MPI_Finalize();
  return 0;
}

/* Rank 0 prints every check with all ranks' values in rank order, then the verdict that sets every exit code.
 */
static int finish(const char *program) {
  int counts[NRANKS];
  static long long all_results[NRANKS][MAX_CHECKS][2];
  MPI_Gather(&check_count, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Gather(check_results, 2 * MAX_CHECKS, MPI_LONG_LONG, all_results, 2 * MAX_CHECKS, MPI_LONG_LONG, 0,
             MPI_COMM_WORLD);

  int failed = 0;
  if (rank == 0) {
    for (int r = 0; r < NRANKS; r++)
      if (counts[r] != check_count) {
        printf("ERROR check_count rank=%d\n", r);
        failed = 1;
      }
    for (int i = 0; i < check_count; i++) {
      printf("CHECK %s ", check_names[i]);
      for (int r = 0; r < NRANKS; r++) printf("%s%lld", r ? "," : "", all_results[r][i][0]);
      printf("\n");
      for (int r = 0; r < NRANKS; r++)
        if (i < counts[r] && !all_results[r][i][1]) {
          printf("ERROR %s rank=%d\n", check_names[i], r);
          failed = 1;
        }
    }
    printf("%s %s\n", failed ? "FAIL" : "PASS", program);
    fflush(stdout);
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed ? 1 : 0;
}

#endif
