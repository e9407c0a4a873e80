// Clock synchronisation (see clock_sync.h).
#include "clock_sync.h"

#include <mpi.h>
#include <time.h>

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "log_state.h"
#include "mpe/clock.h"

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
    for (;;) {
      int done = 0;
      PMPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (done) return;
      timespec ts{0, 20000};
      nanosleep(&ts, nullptr);
    }
  }

  // Measures this rank's offset to rank 0; collective over comm.
  static void measure(MPI_Comm comm, int rank, int size, uint64_t* at, int64_t* offset, uint64_t* rtt) {
    int64_t total = 0;
    uint64_t best_rtt = 0, when = mpe_clock_now();
    for (int c = 1; c < size; ++c) {
      const int p = parent(c);
      if (rank == p) {
        if (c > 1) {
          int token;
          sleepy_recv(&token, MPI_INT, c - 1, comm);  // the previous edge is done
        }
        PMPI_Send(&total, 1, MPI_INT64_T, c, kTag, comm);  // go, with this rank's offset
        for (;;) {
          uint64_t ping;
          PMPI_Recv(&ping, 1, MPI_UINT64_T, c, kTag, comm, MPI_STATUS_IGNORE);
          if (ping == kStop) break;
          const uint64_t now = mpe_clock_now();
          PMPI_Send(&now, 1, MPI_UINT64_T, c, kTag, comm);
        }
      } else if (rank == c) {
        int64_t parent_total = 0;
        sleepy_recv(&parent_total, MPI_INT64_T, p, comm);
        int64_t off = 0;
        best_rtt = UINT64_MAX;
        const double tps = mpe_clock_ticks_per_second();
        const uint64_t good = static_cast<uint64_t>(tps * kGoodRtt);
        const uint64_t deadline = mpe_clock_now() + static_cast<uint64_t>(tps * kBudget);
        for (int i = 0; i < kMaxRounds && (i < kRounds || (best_rtt > good && mpe_clock_now() < deadline));
             ++i) {
          const uint64_t t0 = mpe_clock_now();
          uint64_t tp;
          PMPI_Send(&t0, 1, MPI_UINT64_T, p, kTag, comm);
          PMPI_Recv(&tp, 1, MPI_UINT64_T, p, kTag, comm, MPI_STATUS_IGNORE);
          const uint64_t t1 = mpe_clock_now();
          if (t1 - t0 < best_rtt) {
            best_rtt = t1 - t0;
            off = static_cast<int64_t>(tp) - static_cast<int64_t>(t0 + (t1 - t0) / 2);
            when = t0 + (t1 - t0) / 2;
          }
        }
        PMPI_Send(&kStop, 1, MPI_UINT64_T, p, kTag, comm);
        total = off + parent_total;
        if (c + 1 < size) {
          int token = 1;
          PMPI_Send(&token, 1, MPI_INT, parent(c + 1), kTag, comm);
        }
      }
    }
    *at = when;
    *offset = total;
    *rtt = best_rtt;
  }
};

MPI_Comm g_node_comm = MPI_COMM_NULL;    // ranks sharing this host
MPI_Comm g_leader_comm = MPI_COMM_NULL;  // the lowest rank of each host

}  // namespace

// Ranks on one host read one clock (the invariant TSC or CLOCK_MONOTONIC are host-wide), so
// only one rank per host measures, against rank 0's host; the others take its offset. With
// MPE_CLOCKS_SYNC=force every rank measures (to exercise the algorithm on one host).
void sync_clocks(bool final) noexcept {
  // A string_view, not config::env_string: nothing here may allocate (no exception may leave a
  // collective half done on one rank).
  const char* setting = std::getenv("MPE_CLOCKS_SYNC");
  const std::string_view mode = setting && *setting ? setting : "yes";
  if (mode == "no" || mode == "0" || mode == "off" || mode == "false" || g_comm == MPI_COMM_NULL) return;
  const bool force = mode == "force";
  static bool made = false;  // the communicators are made once, at init, by every rank
  int node_rank = 0;
  if (!made) {
    made = true;
    if (force) {
      PMPI_Comm_split(g_comm, 0, g_rank, &g_leader_comm);
    } else {
      PMPI_Comm_split_type(g_comm, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &g_node_comm);
      PMPI_Comm_rank(g_node_comm, &node_rank);
      PMPI_Comm_split(g_comm, node_rank == 0 ? 0 : MPI_UNDEFINED, g_rank, &g_leader_comm);
    }
  }
  if (!force && g_node_comm != MPI_COMM_NULL) PMPI_Comm_rank(g_node_comm, &node_rank);
  if (!force && g_node_comm == MPI_COMM_NULL) return;  // mode changed between init and finalize
  uint64_t at = mpe_clock_now(), rtt = 0;
  int64_t off = 0;
  PMPI_Barrier(g_comm);
  if (g_leader_comm != MPI_COMM_NULL && (force || node_rank == 0)) {
    int lr, ln;
    PMPI_Comm_rank(g_leader_comm, &lr);
    PMPI_Comm_size(g_leader_comm, &ln);
    OffsetMeasurement::measure(g_leader_comm, lr, ln, &at, &off, &rtt);
  }
  if (!force) {
    int64_t shared[2] = {off, static_cast<int64_t>(rtt)};
    PMPI_Bcast(shared, 2, MPI_INT64_T, 0, g_node_comm);
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

void free_clock_comms() noexcept {
  if (g_node_comm != MPI_COMM_NULL) PMPI_Comm_free(&g_node_comm);
  if (g_leader_comm != MPI_COMM_NULL) PMPI_Comm_free(&g_leader_comm);
}

}  // namespace mpe::tools::log
