// Processes as threads, for the tests of the analyses spread over processes (`mpiexec -n M mpe
// stat|waits LOG`): all_to_all, gather and broadcast through shared mailboxes between two barriers,
// as MPI's collectives would do it.
#pragma once

#include <barrier>
#include <string>
#include <vector>

#include "mpe/log_summary.h"

namespace mpe::testing {

class ThreadPeers final : public format::SummaryPeers {
 public:
  struct Shared {
    explicit Shared(int m) : size(m), box(static_cast<size_t>(m) * static_cast<size_t>(m)), barrier(m) {}
    int size;
    std::vector<std::string> box;  // [from * size + to]
    std::barrier<> barrier;
  };
  ThreadPeers(Shared& shared, int rank) : shared_(shared), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return shared_.size; }
  std::vector<std::string> all_to_all(const std::vector<std::string>& out) override {
    const size_t m = static_cast<size_t>(shared_.size), me = static_cast<size_t>(rank_);
    for (size_t q = 0; q < m; ++q) shared_.box[me * m + q] = out[q];
    shared_.barrier.arrive_and_wait();
    std::vector<std::string> in(m);
    for (size_t q = 0; q < m; ++q) in[q] = shared_.box[q * m + me];
    shared_.barrier.arrive_and_wait();
    return in;
  }
  std::vector<std::string> gather(const std::string& mine) override {
    std::vector<std::string> out(static_cast<size_t>(shared_.size));
    out[0] = mine;
    auto in = all_to_all(out);
    if (rank_ != 0) in.clear();
    return in;
  }
  std::string broadcast(const std::string& value) override {
    std::vector<std::string> out(static_cast<size_t>(shared_.size), rank_ == 0 ? value : std::string());
    return all_to_all(out)[0];
  }

 private:
  Shared& shared_;
  int rank_;
};

}  // namespace mpe::testing
