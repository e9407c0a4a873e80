/* Linked against every installed tool library through find_package(MpeTools): checks that all five
   are loaded, and makes a few MPI calls for them to record. */
#define _GNU_SOURCE
#include <link.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static const char *const kTools[] = {"libmpetime.so", "libumq.so", "liblog.so", "liblive.so",
                                     "libmpenull.so"};
enum { kToolCount = sizeof kTools / sizeof kTools[0] };

/* Marks found[i] when the loaded object's file name contains kTools[i]. */
static int note_object(struct dl_phdr_info *info, size_t size, void *found) {
  (void)size;
  for (int i = 0; i < kToolCount; ++i)
    if (strstr(info->dlpi_name, kTools[i])) ((int *)found)[i] = 1;
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int found[kToolCount] = {0};
  dl_iterate_phdr(note_object, found);
  int missing = 0;
  for (int i = 0; i < kToolCount; ++i)
    if (!found[i]) {
      fprintf(stderr, "consumer: %s is not loaded\n", kTools[i]);
      missing = 1;
    }
  int token = rank, from = -1;
  MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 0, &from, 1, MPI_INT, (rank + size - 1) % size, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0 && !missing) printf("consumer ok: %d tools loaded\n", kToolCount);
  MPI_Finalize();
  return missing;
}
