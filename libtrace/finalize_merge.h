// liblog's parallel merge at MPI_Finalize: the MPI-specific part (the scan, the gather, the
// pwrites); the layout itself comes from merge/'s planner (mpe/log_layout.h).
#pragma once

#include <cstdint>
#include <string>

#include "mpe/log_defs.h"
#include "mpe/status.h"
#include "mpe/tool.h"

namespace mpe::tools::log {

// The message of a failed merge on the ranks that did not fail themselves.
inline constexpr const char* kAnotherRankFailed = "another rank failed";

struct MergeTotals {
  uint64_t bytes = 0;     // the logfile's size (rank 0)
  uint64_t records = 0;   // records of every rank
  int relayed_ranks = 0;  // ranks that did not see the logfile and relayed their chunks
};

// Merges every rank's spilled chunks into the logfile `out`. Collective over liblog's private
// communicator; every rank returns the same verdict, and on failure no file is left at `out`.
// The file is written as `out`.tmp and renamed when complete. Ranks that cannot see it (a
// directory not shared by every node) relay their chunks to a rank that can.
// `base`: the run's definitions before the ranks' metas are added (rank 0 uses it).
// May throw std::bad_alloc only before its first collective or after its last.
StatusOr<MergeTotals> merge_at_finalize(const std::string& out, const format::Definitions& base) MPE_HIDDEN;

}  // namespace mpe::tools::log
