// The compiled-in routine table, generated from core/mpi_calls.tsv by core/gen/routines.py into
// the build tree (routine_table.cpp); read only through mpe/routine.h.
#pragma once

#include <cstddef>

#include "mpe/routine.h"

namespace mpe::format::detail {

struct RoutineRow {
  const char* name;  // "MPI_Ssend"; the rows are in name order
  const char* cls;   // "send:synchronous"
  RoutineFamily family;
  RoutineMode mode;
  CollectiveShape shape;
  SendMode send_mode;
  RmaKind rma;
};

extern const RoutineRow kRoutineRows[];
extern const size_t kRoutineRowCount;

}  // namespace mpe::format::detail
