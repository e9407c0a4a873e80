// A time-ordered replay spread over processes (`mpiexec -n M mpe stat|waits LOG`): which process
// replays which of the log's ranks, and the rounds in which they exchange what crosses between
// them. The streaming summary (mpe/log_summary.h) and the wait states (mpe/waits.h) share it.
//
// Design. Each process replays the chunks of the ranks it owns, in the global replay order
// (chunks_by_start), skipping the others'. The order is cut into rounds of about one chunk per
// timeline; at the end of each round every process hands the others what it produced for them
// (message ends go to the owner of their receiver, Scalasca-style) and then knows that no end
// still to come, anywhere, is before the next round's first chunk. A rank's owner is chosen so
// that the processes get about the same number of chunks, ranks kept in order.
// Failure: the processes agree on the first failure (agree_on_failure), so that all stop together
// with the same error instead of one waiting for the others forever.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mpe/log_summary.h"
#include "mpe/status.h"

namespace mpe::format {

class LogFile;

struct SpreadPlan {
  SummaryPeers* peers = nullptr;
  std::vector<size_t> order;     // every chunk, in the replay's order (chunks_by_start)
  std::vector<int> owner;        // per rank
  std::vector<size_t> position;  // per chunk index: its place in the replay's order
  size_t round_chunks = 1;       // chunks of the replay's order per round
  size_t rounds = 0;
  int owner_of(int32_t rank) const {
    return rank >= 0 && static_cast<size_t>(rank) < owner.size() ? owner[static_cast<size_t>(rank)] : 0;
  }
  // The round a chunk of the replay's order belongs to.
  size_t round_of(size_t chunk_index) const { return position[chunk_index] / round_chunks; }
  // The chunks of `order` this process replays (its own ranks'), in the replay's order.
  std::vector<size_t> own_chunks(const LogFile& file) const;
};

// Plans the spread of `file` over `peers`, given the global replay order.
SpreadPlan plan_spread(const LogFile& file, SummaryPeers* peers, const std::vector<size_t>& order);

// The first failure among the processes, on every one of them: `status` is this process's, and
// failed_here says whether it is its own (not a stop because another failed). Ok when none failed.
Status agree_on_failure(SummaryPeers& peers, const Status& status, bool failed_here);

}  // namespace mpe::format
