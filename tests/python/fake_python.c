/* A stand-in for an interpreter the tools cannot read (test_python.py): it exports Py_GetVersion,
 * as every CPython does, with a version other than 3.11, and makes an MPI call from inside itself,
 * as mpi4py's calls come from inside the interpreter's process. */
#include <mpi.h>

const char *Py_GetVersion(void) { return "3.12.1 (main, fake for mpe-tools' tests)"; }

int fake_python_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
