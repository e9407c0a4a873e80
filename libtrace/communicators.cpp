// The communicator registry (see communicators.h).
#include "communicators.h"

#include <algorithm>
#include <new>
#include <vector>

#include "mpe/comm_members.h"
#include "mpe/config.h"
#include "mpe/records.h"
#include "spill.h"

namespace mpe::tools::log {

constinit HandleMap<MPI_Comm, 4096> g_comm_indices;

namespace {

std::atomic<uint32_t> g_comm_counter{1};

void comm_insert(MPI_Comm c, uint32_t index) {
  if (!g_comm_indices.put(c, index)) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      config::warn("liblog: more than 4096 communicators; messages on the newer ones are not matched", false);
  }
}

}  // namespace

void define_builtin_comms() {
  std::vector<int32_t> world(static_cast<size_t>(g_size));
  for (int i = 0; i < g_size; ++i) world[static_cast<size_t>(i)] = i;
  g_meta.comms.push_back(format::CommDef{0, 0, false, std::move(world)});
  g_meta.comms.push_back(format::CommDef{1, (1ull << 62) | static_cast<uint64_t>(g_rank), false, {g_rank}});
}

// One allreduce (two for an intercommunicator) on the new communicator agrees on its id: the
// smallest (rank << 32 | counter) among the members. Rank-local ids have bit 62 set, inter-
// communicator ids bit 63.
void register_comm(MPI_Comm c, uint64_t time, ThreadLog* t, bool collective) noexcept {
  if (c == MPI_COMM_NULL) return;
  try {
    // The allreduces come before anything that may fail to allocate: every member must join them.
    int inter = 0;
    PMPI_Comm_test_inter(c, &inter);
    const uint64_t mine = (static_cast<uint64_t>(g_rank) << 32) | g_comm_counter.fetch_add(1);
    uint64_t id = 0;
    if (!collective) {
      id = (1ull << 62) | mine;
    } else if (!inter) {
      PMPI_Allreduce(&mine, &id, 1, MPI_UINT64_T, MPI_MIN, c);
    } else {
      uint64_t remote_min = 0, local_min = 0;
      PMPI_Allreduce(&mine, &remote_min, 1, MPI_UINT64_T, MPI_MIN, c);
      PMPI_Allreduce(&remote_min, &local_min, 1, MPI_UINT64_T, MPI_MIN, c);
      const uint64_t lo = std::min(remote_min, local_min), hi = std::max(remote_min, local_min);
      id = (1ull << 63) | ((lo * 0x9E3779B97F4A7C15ull) ^ hi);
    }
    format::CommDef def;
    def.global_id = id;
    def.inter = inter != 0;
    def.members = world_members(c);
    uint32_t index;
    const auto members = static_cast<int32_t>(def.members.size());
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      index = static_cast<uint32_t>(g_meta.comms.size());
      def.index = index;
      g_meta.comms.push_back(std::move(def));
      comm_insert(c, index);
      write_meta_locked();
    }
    if (t) put(t, format::CommCreateRecord{time, 0, index, members}.to_record());
  } catch (const std::bad_alloc&) {
    config::warn("liblog: out of memory while recording a new communicator; its messages will stay unmatched",
                 false);
  }
}

}  // namespace mpe::tools::log
