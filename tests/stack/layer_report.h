/* What a test layer (libjoblog, libcollperf) saw, kept per routine and written to
 * <STACKTEST_DIR>/<LAYER_NAME>.<rank>.txt at MPI_Finalize, for tests/stack/test_stack.py.
 *
 * The including file defines LAYER_NAME, LAYER_ROUTINES(X) (X(Send) for each MPI_Send it wraps)
 * and LAYER_OWN(X) (each routine it calls itself, through MPI_ or PMPI_). Everything here is
 * static: each layer has its own copy, and exports nothing but its MPI_ wrappers.
 *
 * The file, one item a line:
 *   layer <name>              rank <world rank>
 *   count <routine> <n>       every time the wrapper ran (nested ones included)
 *   depth <routine> <d>       the stacktrail depth at which the application's calls arrived (the
 *                             number of layers above that wrap the routine), or "inconsistent"
 *   nested <routine> <n>      the wrapper ran inside another wrapper of this layer: the layer's
 *                             own MPI_ call coming back to it, as PMPI semantics give
 *   own-mpi <routine> <n>     calls this layer made itself through MPI_ (its level and below see them)
 *   own-pmpi <routine> <n>    calls this layer made itself through PMPI_ (only the levels below)
 *   pcontrol <level>          every MPI_Pcontrol, in order
 */
#ifndef LAYER_REPORT_H
#define LAYER_REPORT_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "stacktrail.h"

enum {
#define LAYER_ENUM(n) R_##n,
  LAYER_ROUTINES(LAYER_ENUM)
#undef LAYER_ENUM
      R_COUNT
};
static const char *const layer_routine_names[R_COUNT] = {
#define LAYER_NAME_OF(n) "MPI_" #n,
    LAYER_ROUTINES(LAYER_NAME_OF)
#undef LAYER_NAME_OF
};
enum {
#define LAYER_ENUM(n) O_##n,
  LAYER_OWN(LAYER_ENUM)
#undef LAYER_ENUM
      O_COUNT
};
static const char *const layer_own_names[O_COUNT] = {
#define LAYER_NAME_OF(n) "MPI_" #n,
    LAYER_OWN(LAYER_NAME_OF)
#undef LAYER_NAME_OF
};

enum { DEPTH_UNSEEN = -1, DEPTH_INCONSISTENT = -2, MAX_PCONTROL = 256 };

static long layer_counts[R_COUNT];
static long layer_nested[R_COUNT];
static int layer_depths[R_COUNT] = {[0 ... R_COUNT - 1] = DEPTH_UNSEEN};
static long layer_own_mpi[O_COUNT], layer_own_pmpi[O_COUNT];
static int layer_pcontrol[MAX_PCONTROL];
static int layer_pcontrol_count;
static int layer_rank = -1;
/* How many of this layer's wrappers this thread is in: above 0, a call is the layer's own. */
static _Thread_local int layer_inside;

/* Counts a call of routine r as the wrapper starts; returns whether it is nested in this layer. */
static int layer_begin(int r) {
  __atomic_fetch_add(&layer_counts[r], 1, __ATOMIC_RELAXED);
  const int nested = layer_inside++ > 0;
  if (nested) __atomic_fetch_add(&layer_nested[r], 1, __ATOMIC_RELAXED);
  return nested;
}

/* Enters the stacktrail and records the depth of an application's call (not of a nested one). */
static void layer_depth(int r, int nested) {
  const int depth = stacktrail_enter();
  if (nested) return;
  int seen = DEPTH_UNSEEN;
  if (!__atomic_compare_exchange_n(&layer_depths[r], &seen, depth, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED) &&
      seen != depth)
    __atomic_store_n(&layer_depths[r], DEPTH_INCONSISTENT, __ATOMIC_RELAXED);
}

/* What a wrapper does before it calls PMPI_: counts the call and records its depth. */
static void layer_enter(int r) { layer_depth(r, layer_begin(r)); }

/* What a wrapper does after PMPI_ returned. */
static void layer_leave(void) {
  stacktrail_leave();
  layer_inside--;
}

/* Counts a call this layer makes itself (through MPI_ when through_pmpi is 0). */
static void layer_own(int o, int through_pmpi) {
  __atomic_fetch_add(through_pmpi ? &layer_own_pmpi[o] : &layer_own_mpi[o], 1, __ATOMIC_RELAXED);
}

static void layer_record_pcontrol(int level) {
  const int i = __atomic_fetch_add(&layer_pcontrol_count, 1, __ATOMIC_RELAXED);
  if (i < MAX_PCONTROL) layer_pcontrol[i] = level;
}

/* Writes the file; called by the layer's MPI_Finalize before PMPI_Finalize. */
static void layer_write(void) {
  const char *dir = getenv("STACKTEST_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%d.txt", dir && *dir ? dir : ".", LAYER_NAME, layer_rank);
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "%s: cannot write %s\n", LAYER_NAME, path);
    return;
  }
  fprintf(f, "layer %s\nrank %d\n", LAYER_NAME, layer_rank);
  for (int r = 0; r < R_COUNT; r++)
    if (layer_counts[r]) fprintf(f, "count %s %ld\n", layer_routine_names[r], layer_counts[r]);
  for (int r = 0; r < R_COUNT; r++) {
    if (layer_depths[r] == DEPTH_INCONSISTENT)
      fprintf(f, "depth %s inconsistent\n", layer_routine_names[r]);
    else if (layer_depths[r] != DEPTH_UNSEEN)
      fprintf(f, "depth %s %d\n", layer_routine_names[r], layer_depths[r]);
  }
  for (int r = 0; r < R_COUNT; r++)
    if (layer_nested[r]) fprintf(f, "nested %s %ld\n", layer_routine_names[r], layer_nested[r]);
  for (int o = 0; o < O_COUNT; o++) {
    if (layer_own_mpi[o]) fprintf(f, "own-mpi %s %ld\n", layer_own_names[o], layer_own_mpi[o]);
    if (layer_own_pmpi[o]) fprintf(f, "own-pmpi %s %ld\n", layer_own_names[o], layer_own_pmpi[o]);
  }
  const int n = layer_pcontrol_count < MAX_PCONTROL ? layer_pcontrol_count : MAX_PCONTROL;
  for (int i = 0; i < n; i++) fprintf(f, "pcontrol %d\n", layer_pcontrol[i]);
  fprintf(f, "end\n");
  fclose(f);
}

#endif
