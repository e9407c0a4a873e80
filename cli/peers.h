// The processes of `mpiexec -n M mpe <command>`: MPI, loaded from libmpepeers only when `mpe` runs
// under a launcher with more than one process, so that `mpe` alone needs no MPI.
#pragma once

#include <memory>

#include "mpe/log_summary.h"
#include "mpe/status.h"

namespace mpe::cli {

// The job's processes when `mpe` was started by mpiexec (MPICH's or Open MPI's) with M > 1, else
// null (M = 1). Errors: libmpepeers cannot be loaded (io-error, naming it and why).
StatusOr<std::unique_ptr<format::SummaryPeers>> launched_peers();

}  // namespace mpe::cli
