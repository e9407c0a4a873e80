// Clock synchronisation (see clock_sync.h).
#include "clock_sync.h"

#include <mpi.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "log_state.h"
#include "mpe/clock.h"
#include "mpe/collective.h"
#include "mpe/config.h"
#include "mpe/fnv.h"

namespace mpe::tools::log {

namespace {

// Clock synchronisation: minimum-round-trip ping-pongs along a binomial tree, one edge at a time.
//
// Invariant: after sync, reference ticks (rank 0's clock) = local ticks + offset, where a rank's
// offset is its tree parent's offset plus the offset measured against that parent. The sample
// with the smallest round trip bounds the error by half that round trip (~0.5 us on one host).
// Two measurements (init, finalize) give offset and drift; the reader applies them linearly.
// Edges run one after another, and ranks not in the current edge sleep instead of spinning,
// so that the two ranks measuring run at once even when ranks outnumber cores (with every
// rank busy-polling, a round trip could take a whole scheduler slice, milliseconds).
// Cost: P-1 edges of >= kRounds round trips plus a ~20 us wake-up: < 1 ms for 8 ranks, ~50 ms
// for 1000. Failure modes: asymmetric links bias an offset by half the asymmetry; a rank stopped
// mid-run skews the drift estimate; if no round trip under kGoodRtt is seen within kBudget the
// best one is used, and `mpe stat` shows its round trip.
class OffsetMeasurement {
 public:
  static constexpr int kRounds = 24;
  static constexpr int kMaxRounds = 5000;
  static constexpr double kGoodRtt = 20e-6;  // seconds
  static constexpr double kBudget = 0.05;    // seconds per edge spent looking for a good sample
  static constexpr uint64_t kStop = UINT64_MAX;
  static constexpr int kTag = 7117;

  static int parent(int c) {
    int k = 1;
    while (2 * k <= c) k *= 2;
    return c - k;
  }

  // Receives one message, sleeping between polls so as to leave the cores to the measuring pair.
  static void sleepy_recv(void* buf, MPI_Datatype type, int src, MPI_Comm comm) {
    MPI_Request req;
    PMPI_Irecv(buf, 1, type, src, kTag, comm, &req);
    collective::wait_without_spinning(&req);
  }

  // Measures this rank's offset to rank 0; collective over the ranks of comm that `rank_of` lists
  // (rank_of[i]: the comm rank of the i-th measuring rank; this rank is the rank-th).
  static void measure(MPI_Comm comm, const int* rank_of, int rank, int size, uint64_t* at, int64_t* offset,
                      uint64_t* rtt) {
    int64_t total = 0;
    uint64_t best_rtt = 0, when = mpe_clock_now();
    for (int c = 1; c < size; ++c) {
      const int p = parent(c);
      if (rank == p) {
        if (c > 1) {
          int token;
          sleepy_recv(&token, MPI_INT, rank_of[c - 1], comm);  // the previous edge is done
        }
        PMPI_Send(&total, 1, MPI_INT64_T, rank_of[c], kTag, comm);  // go, with this rank's offset
        for (;;) {
          uint64_t ping;
          PMPI_Recv(&ping, 1, MPI_UINT64_T, rank_of[c], kTag, comm, MPI_STATUS_IGNORE);
          if (ping == kStop) break;
          const uint64_t now = mpe_clock_now();
          PMPI_Send(&now, 1, MPI_UINT64_T, rank_of[c], kTag, comm);
        }
      } else if (rank == c) {
        int64_t parent_total = 0;
        sleepy_recv(&parent_total, MPI_INT64_T, rank_of[p], comm);
        int64_t off = 0;
        best_rtt = UINT64_MAX;
        const double tps = mpe_clock_ticks_per_second();
        const uint64_t good = static_cast<uint64_t>(tps * kGoodRtt);
        const uint64_t deadline = mpe_clock_now() + static_cast<uint64_t>(tps * kBudget);
        for (int i = 0; i < kMaxRounds && (i < kRounds || (best_rtt > good && mpe_clock_now() < deadline));
             ++i) {
          const uint64_t t0 = mpe_clock_now();
          uint64_t tp;
          PMPI_Send(&t0, 1, MPI_UINT64_T, rank_of[p], kTag, comm);
          PMPI_Recv(&tp, 1, MPI_UINT64_T, rank_of[p], kTag, comm, MPI_STATUS_IGNORE);
          const uint64_t t1 = mpe_clock_now();
          if (t1 - t0 < best_rtt) {
            best_rtt = t1 - t0;
            off = static_cast<int64_t>(tp) - static_cast<int64_t>(t0 + (t1 - t0) / 2);
            when = t0 + (t1 - t0) / 2;
          }
        }
        PMPI_Send(&kStop, 1, MPI_UINT64_T, rank_of[p], kTag, comm);
        total = off + parent_total;
        if (c + 1 < size) {
          int token = 1;
          PMPI_Send(&token, 1, MPI_INT, rank_of[parent(c + 1)], kTag, comm);
        }
      }
    }
    *at = when;
    *offset = total;
    *rtt = best_rtt;
  }
};

// Which ranks measure: the lowest rank of each host (its leader), or every rank with
// MPI_CLOCKS_SYNC=force. Worked out once, at init, from one exchange of host-name hashes
// (not MPI_Comm_split_type and MPI_Comm_split: blocking collectives, which spin).
struct HostLayout {
  bool made = false, usable = false;
  int* leaders = nullptr;           // g_comm ranks of the measuring ranks, ascending
  int nleaders = 0, my_index = -1;  // my_index: this rank's place in leaders, -1 if it does not measure
  int my_leader = 0;                // the g_comm rank whose offset this rank takes
  int* members = nullptr;           // a leader's: the other ranks of its host
  int nmembers = 0;
};
HostLayout g_layout;

uint64_t host_hash() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return fnv1a(host);
}

// A rank and its host's hash, sorted by host, then rank.
struct HostRank {
  uint64_t host;
  int rank;
  bool operator<(const HostRank& o) const { return host != o.host ? host < o.host : rank < o.rank; }
};

// Groups the ranks by host (sorted, so O(P log P) at any scale): a host's lowest rank leads it.
void group_by_host(HostRank* ranks, HostLayout& l) {
  std::sort(ranks, ranks + g_size);
  for (int i = 0, j; i < g_size; i = j) {
    for (j = i; j < g_size && ranks[j].host == ranks[i].host;) ++j;
    const int leader = ranks[i].rank;
    l.leaders[l.nleaders++] = leader;
    for (int k = i; k < j; ++k) {
      if (ranks[k].rank == g_rank) l.my_leader = leader;
      if (leader == g_rank && k > i) l.members[l.nmembers++] = ranks[k].rank;
    }
  }
  std::sort(l.leaders, l.leaders + l.nleaders);
}

// Every rank's host hash through one nonblocking allgather. malloc, not new: nothing here may
// throw; a rank that cannot allocate says so through the first exchange, and then no rank
// measures (every rank takes part in the same collectives whatever happens).
void make_layout(bool force) {
  HostLayout& l = g_layout;
  l.made = true;
  const auto n = static_cast<size_t>(g_size);
  auto* hashes = static_cast<uint64_t*>(std::malloc(sizeof(uint64_t) * n));
  auto* ranks = static_cast<HostRank*>(std::malloc(sizeof(HostRank) * n));
  l.leaders = static_cast<int*>(std::malloc(sizeof(int) * n));
  l.members = static_cast<int*>(std::malloc(sizeof(int) * n));
  int ok = hashes && ranks && l.leaders && l.members, all_ok = 0;
  MPI_Request req;
  PMPI_Iallreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, g_comm, &req);
  collective::wait_without_spinning(&req);
  if (all_ok) {
    const uint64_t mine = host_hash();
    PMPI_Iallgather(&mine, 1, MPI_UINT64_T, hashes, 1, MPI_UINT64_T, g_comm, &req);
    collective::wait_without_spinning(&req);
    // With MPE_CLOCKS_SYNC=force each rank is a host of its own.
    for (int r = 0; r < g_size; ++r) ranks[r] = HostRank{force ? static_cast<uint64_t>(r) : hashes[r], r};
    group_by_host(ranks, l);
    for (int i = 0; i < l.nleaders; ++i)
      if (l.leaders[i] == g_rank) l.my_index = i;
    l.usable = true;
  } else if (!ok) {
    config::warn("liblog: out of memory for the clock synchronisation; the log's clocks are not corrected",
                 false);
  }
  std::free(hashes);
  std::free(ranks);
}

}  // namespace

// Ranks on one host read one clock (the invariant TSC or CLOCK_MONOTONIC are host-wide), so
// only one rank per host measures, against rank 0's host; the others take its offset. With
// MPE_CLOCKS_SYNC=force every rank measures (to exercise the algorithm on one host). Every wait
// sleeps between tests (collective::wait_without_spinning).
void sync_clocks(bool final) noexcept {
  // A string_view, not config::env_string: nothing here may allocate (no exception may leave a
  // collective half done on one rank).
  const char* setting = std::getenv("MPE_CLOCKS_SYNC");
  const std::string_view mode = setting && *setting ? setting : "yes";
  if (mode == "no" || mode == "0" || mode == "off" || mode == "false" || g_comm == MPI_COMM_NULL) return;
  if (!g_layout.made) make_layout(mode == "force");  // once, at init, by every rank
  if (!g_layout.usable) return;
  const HostLayout& l = g_layout;
  uint64_t at = mpe_clock_now(), rtt = 0;
  int64_t off = 0;
  MPI_Request req;
  PMPI_Ibarrier(g_comm, &req);
  collective::wait_without_spinning(&req);
  if (l.my_index >= 0) OffsetMeasurement::measure(g_comm, l.leaders, l.my_index, l.nleaders, &at, &off, &rtt);
  // The leader's offset and round trip to the other ranks of its host.
  int64_t shared[2] = {off, static_cast<int64_t>(rtt)};
  if (l.my_leader == g_rank) {
    for (int i = 0; i < l.nmembers; ++i)
      PMPI_Send(shared, 2, MPI_INT64_T, l.members[i], OffsetMeasurement::kTag, g_comm);
  } else {
    PMPI_Irecv(shared, 2, MPI_INT64_T, l.my_leader, OffsetMeasurement::kTag, g_comm, &req);
    collective::wait_without_spinning(&req);
    off = shared[0];
    rtt = static_cast<uint64_t>(shared[1]);
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  if (final) {
    g_meta.sync.t_final = at;
    g_meta.sync.offset_final = off;
    g_meta.sync.rtt_final = rtt;
    g_meta.sync.valid |= 2;
  } else {
    g_meta.sync.t_init = at;
    g_meta.sync.offset_init = off;
    g_meta.sync.rtt_init = rtt;
    g_meta.sync.valid |= 1;
  }
}

void free_clock_layout() noexcept {
  std::free(g_layout.leaders);
  std::free(g_layout.members);
  g_layout = HostLayout{};
}

}  // namespace mpe::tools::log
