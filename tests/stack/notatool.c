/* libnotatool.so: a shared library that defines no MPI_ routine, which `mpe run --stack` and
 * MPE_STACK must refuse as a layer (a test fixture for tests/stack). */
int notatool_answer(void) { return 42; }
