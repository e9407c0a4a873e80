// libmpepeers: the MPI behind a spread summary (`mpiexec -n M mpe stat LOG`), in a library of its
// own so that `mpe` needs no MPI unless it runs under a launcher; `mpe` loads it then (peers.cpp).
// The exchanges are MPI_Alltoallv, MPI_Gatherv and MPI_Bcast of bytes, in pieces of at most 1 GiB
// per pair so that no count overflows an int.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "mpe/log_summary.h"

namespace {

constexpr uint64_t kPiece = uint64_t{1} << 30;

class MpiPeers final : public mpe::format::SummaryPeers {
 public:
  MpiPeers() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);  // only this thread calls MPI
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiPeers() override { MPI_Finalize(); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> all_to_all(const std::vector<std::string>& out) override {
    const size_t m = static_cast<size_t>(size_);
    std::vector<uint64_t> send_sizes(m), recv_sizes(m);
    for (size_t q = 0; q < m; ++q) send_sizes[q] = out[q].size();
    MPI_Alltoall(send_sizes.data(), 1, MPI_UINT64_T, recv_sizes.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
    std::vector<std::string> in(m);
    for (size_t q = 0; q < m; ++q) in[q].resize(recv_sizes[q]);
    uint64_t most = 0;  // the largest message anywhere decides the number of pieces
    for (size_t q = 0; q < m; ++q) most = std::max({most, send_sizes[q], recv_sizes[q]});
    MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    std::vector<int> sc(m), sd(m), rc(m), rd(m);
    std::vector<char> sbuf, rbuf;
    for (uint64_t at = 0; at < most || at == 0; at += kPiece) {
      int s_total = 0, r_total = 0;
      for (size_t q = 0; q < m; ++q) {
        sc[q] = static_cast<int>(send_sizes[q] > at ? std::min(kPiece, send_sizes[q] - at) : 0);
        rc[q] = static_cast<int>(recv_sizes[q] > at ? std::min(kPiece, recv_sizes[q] - at) : 0);
        sd[q] = s_total, rd[q] = r_total;
        s_total += sc[q], r_total += rc[q];
      }
      sbuf.resize(static_cast<size_t>(s_total));
      rbuf.resize(static_cast<size_t>(r_total));
      for (size_t q = 0; q < m; ++q)
        if (sc[q] > 0) std::copy_n(out[q].data() + at, sc[q], sbuf.data() + sd[q]);
      MPI_Alltoallv(sbuf.data(), sc.data(), sd.data(), MPI_BYTE, rbuf.data(), rc.data(), rd.data(), MPI_BYTE,
                    MPI_COMM_WORLD);
      for (size_t q = 0; q < m; ++q)
        if (rc[q] > 0) std::copy_n(rbuf.data() + rd[q], rc[q], in[q].data() + at);
      if (most == 0) break;
    }
    return in;
  }

  std::vector<std::string> gather(const std::string& mine) override {
    // Through all_to_all: process 0 receives every part, the others nothing (parts can pass 2 GiB).
    std::vector<std::string> out(static_cast<size_t>(size_));
    out[0] = mine;
    std::vector<std::string> in = all_to_all(out);
    if (rank_ != 0) in.clear();
    return in;
  }

  std::string broadcast(const std::string& value) override {
    uint64_t n = value.size();
    MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    std::string v = rank_ == 0 ? value : std::string(n, '\0');
    for (uint64_t at = 0; at < n; at += kPiece)
      MPI_Bcast(v.data() + at, static_cast<int>(std::min(kPiece, n - at)), MPI_BYTE, 0, MPI_COMM_WORLD);
    return v;
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace

// Initializes MPI and returns the processes of the job; deleting it finalizes MPI.
extern "C" __attribute__((visibility("default"))) mpe::format::SummaryPeers* mpe_peers_open() {
  return new MpiPeers;
}
