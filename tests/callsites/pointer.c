/* One return address, two routines: MPI_Comm_size (i even, 4 calls) and MPI_Comm_rank (i odd,
 * 3 calls) through one function pointer, from the one line that carries the mark. */
#include <mpi.h>

typedef int (*CommQuery)(MPI_Comm, int *);

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int value = 0;
  for (int i = 0; i < 7; ++i) {
    CommQuery query = i % 2 ? MPI_Comm_rank : MPI_Comm_size;
    query(MPI_COMM_WORLD, &value); /* SITE:pointer */
  }
  MPI_Finalize();
  return 0;
}
