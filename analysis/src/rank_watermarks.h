// How far each rank has gone in a time-ordered replay (waits_replay.cpp): the least start of its
// chunks still to come, INT64_MAX after its last. Once no chunk still to come of a message key's
// source or destination starts before W, every end of the key before W has been seen, so the key
// can be paired up to W: a message waits for its two ranks only, not for the slowest of all (one
// global watermark held a whole round of chunks, every timeline's, in flight). Spread over
// processes, a rank replayed elsewhere has gone as far as the rounds exchanged so far, since its
// owner routed its ends before each exchange (advance_remote).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mpe/log_reader.h"

namespace mpe::analysis {

class RankWatermarks {
 public:
  // `order`: every chunk of `file`, in the replay's order; remote(rank): whether another process
  // replays that rank (spread; never, alone).
  template <class Remote>
  RankWatermarks(const format::LogFile& file, const std::vector<size_t>& order, Remote&& remote) {
    const uint32_t nranks = file.definitions().world_size;
    std::vector<uint32_t> chunks_of(nranks, 0);
    for (const size_t c : order)
      if (file.index()[c].rank < nranks) ++chunks_of[file.index()[c].rank];
    begin_.assign(nranks + 1, 0);
    for (uint32_t r = 0; r < nranks; ++r) begin_[r + 1] = begin_[r] + chunks_of[r] + 1;
    rest_.assign(begin_[nranks], INT64_MAX);
    position_.assign(rest_.size(), SIZE_MAX);
    std::vector<uint32_t> filled(nranks, 0);
    for (size_t i = 0; i < order.size(); ++i) {
      const format::IndexEntry& e = file.index()[order[i]];
      if (e.rank >= nranks) continue;
      const size_t k = begin_[e.rank] + filled[e.rank]++;
      rest_[k] = file.to_ns(e.rank, e.t_first);
      position_[k] = i;
    }
    for (uint32_t r = 0; r < nranks; ++r) {
      for (size_t k = begin_[r + 1] - 1; k-- > begin_[r];) rest_[k] = std::min(rest_[k], rest_[k + 1]);
      if (remote(r)) remote_.push_back(r);
    }
    cursor_.assign(nranks, 0);
  }

  uint32_t ranks() const { return static_cast<uint32_t>(cursor_.size()); }
  // The rank's watermark; INT64_MAX for a rank the log does not have (an unknown peer).
  int64_t of(int32_t rank) const {
    if (rank < 0 || static_cast<size_t>(rank) >= cursor_.size()) return INT64_MAX;
    return rest_[begin_[static_cast<size_t>(rank)] + cursor_[static_cast<size_t>(rank)]];
  }
  // A chunk of `rank` was consumed here.
  void consumed(uint32_t rank) {
    if (rank < cursor_.size()) ++cursor_[rank];
  }
  // Spread, after a round's exchange: every process has consumed the chunks of the replay's order
  // before `done`; moved(rank) for each rank replayed elsewhere that went further.
  template <class Moved>
  void advance_remote(size_t done, Moved&& moved) {
    for (const uint32_t rank : remote_) {
      const uint32_t before = cursor_[rank];
      while (position_[begin_[rank] + cursor_[rank]] < done) ++cursor_[rank];
      if (cursor_[rank] != before) moved(rank);
    }
  }

 private:
  // rest_[begin_[r] + k]: the least start of rank r's chunks from its k-th on; position_: that
  // chunk's place in the replay's order (SIZE_MAX after the last).
  std::vector<int64_t> rest_;
  std::vector<size_t> begin_, position_;
  std::vector<uint32_t> cursor_;  // per rank: its chunks consumed
  std::vector<uint32_t> remote_;  // the ranks replayed elsewhere
};

}  // namespace mpe::analysis
