// The finalize-time collectives the tools run on their private communicators: agreement on
// failure before each step, and gathering every rank's bytes on one rank.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "mpe/status.h"
#include "mpe/tool.h"

namespace mpe::collective {

// True on every rank when `ok` is true on every rank (one allreduce). Call it before each
// collective step that follows a local step that can fail, so that one rank's failure makes every
// rank skip the step instead of leaving the others waiting in it.
bool all_ok(bool ok, MPI_Comm comm) noexcept MPE_HIDDEN;

// Gathers each rank's bytes on `root`, in rank order: on root, one string per rank; elsewhere an
// empty vector. Collective over comm. Every rank returns the same verdict: when any rank (root's
// buffer included) cannot allocate, or the total exceeds what MPI_Gatherv can address, all return
// an error and no collective is left half done. Cost: one allreduce, one gather of ints, one
// broadcast of a flag, one gatherv.
StatusOr<std::vector<std::string>> gather_to_root(const std::string& mine, int root,
                                                  MPI_Comm comm) noexcept MPE_HIDDEN;

}  // namespace mpe::collective
