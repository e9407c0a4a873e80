/* Runs an MPI barrier from inside fake_python.c's "interpreter" (test_python.py): the tools must say
 * once that they cannot read this Python, and name the call by its C address. */
#include <mpi.h>

int fake_python_barrier(void);

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  fake_python_barrier();
  MPI_Finalize();
  return 0;
}
