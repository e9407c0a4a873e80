// The spread of a time-ordered replay over processes; the design comment is in mpe/replay_spread.h.
#include "mpe/replay_spread.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "mpe/log_reader.h"

namespace mpe::format {

std::vector<size_t> SpreadPlan::own_chunks(const LogFile& file) const {
  std::vector<size_t> mine;
  for (size_t i : order)
    if (owner_of(static_cast<int32_t>(file.index()[i].rank)) == peers->rank()) mine.push_back(i);
  return mine;
}

SpreadPlan plan_spread(const LogFile& file, SummaryPeers* peers, const std::vector<size_t>& order) {
  SpreadPlan plan;
  plan.peers = peers;
  const std::vector<IndexEntry>& index = file.index();
  const size_t n = index.size(), m = static_cast<size_t>(peers->size());
  // The index may interleave the ranks' chunks (a writer's order): count them per rank first.
  std::vector<size_t> chunks_of(file.definitions().ranks.size());
  for (const IndexEntry& e : index)
    if (e.rank < chunks_of.size()) ++chunks_of[e.rank];
  plan.owner.assign(chunks_of.size(), 0);
  for (size_t r = 0, before = 0; r < chunks_of.size(); before += chunks_of[r++])
    plan.owner[r] = static_cast<int>(std::min(m - 1, before * m / std::max<size_t>(n, 1)));
  plan.order = order;
  plan.position.resize(n);
  for (size_t k = 0; k < order.size(); ++k) plan.position[order[k]] = k;
  // A round per timeline's worth of chunks: about one chunk of each timeline in flight.
  std::set<std::pair<uint32_t, uint32_t>> timelines;
  for (const IndexEntry& e : index) timelines.emplace(e.rank, e.thread);
  plan.round_chunks = std::max<size_t>(1, timelines.size());
  plan.rounds = (n + plan.round_chunks - 1) / plan.round_chunks;
  return plan;
}

Status agree_on_failure(SummaryPeers& peers, const Status& status, bool failed_here) {
  // Its code as one byte, then its message; the first process's failure wins.
  const std::string mine = failed_here ? static_cast<char>(status.code()) + status.message() : std::string();
  std::string first;
  for (const std::string& t : peers.gather(mine))
    if (first.empty()) first = t;
  first = peers.broadcast(first);
  if (!first.empty()) return Status(static_cast<StatusCode>(first[0]), first.substr(1));
  return status;
}

}  // namespace mpe::format
