// A communicator's members as world ranks: the one group-to-world translation that liblog's and
// liblive's communicator tables both use.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "mpe/tool.h"

namespace mpe {

// The world rank of each rank of c, in c's rank order: of the remote group for an
// intercommunicator (whose point-to-point ranks name that group); -1 for a process outside
// MPI_COMM_WORLD (a spawned one). Sets *inter when given. Allocates: throws std::bad_alloc.
std::vector<int32_t> world_members(MPI_Comm c, bool* inter = nullptr) MPE_HIDDEN;

}  // namespace mpe
