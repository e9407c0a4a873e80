/* libstacktrail.so: one thread-local nesting depth that every test layer (libjoblog, libcollperf)
 * links, so that each layer can log at which depth of the stack it saw a call. Defines no MPI_
 * routine: it is a plain dependency of the layers, never a layer itself. */
#include "stacktrail.h"

static _Thread_local int depth;

int stacktrail_enter(void) { return depth++; }

void stacktrail_leave(void) { depth--; }
