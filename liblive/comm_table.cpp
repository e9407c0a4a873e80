// liblive's communicator table: handle -> members as world ranks and a run-wide key, so that a
// communicator rank can be named as a world rank and every member names one communicator alike.
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "live_state.h"
#include "mpe/config.h"
#include "mpe/handle_map.h"

namespace mpe::tools::live {

namespace {

// Handle -> CommInfo*, read lock-free. A handle MPI reuses after MPI_Comm_free gets its entry
// overwritten; old CommInfos stay allocated (a reader may hold one), a few dozen bytes per
// communicator the program ever made.
constinit HandleMap<MPI_Comm, 4096> g_comms;
std::mutex g_mutex;                                         // inserts only
std::unordered_map<uint64_t, uint32_t> g_seen_member_sets;  // hash of members -> communicators made with them
MPI_Group g_world_group = MPI_GROUP_NULL;

uint64_t hash_members(const std::vector<int32_t>& m) {
  uint64_t h = 1469598103934665603ull;
  for (int32_t r : m) h = (h ^ static_cast<uint32_t>(r)) * 1099511628211ull;
  return h ^ m.size();
}

// The key every member computes alike: the member list's hash and how many communicators with
// these members this process made before (creation is collective and ordered, so each member
// counts the same), mixed.
uint64_t run_wide_key(const std::vector<int32_t>& members) {
  const uint64_t h = hash_members(members);
  const uint32_t ordinal = g_seen_member_sets[h]++;
  return (h ^ (uint64_t{ordinal} * 0xBF58476D1CE4E5B9ull)) | 1;
}

void publish(MPI_Comm c, const CommInfo* info) {
  if (g_comms.put(c, reinterpret_cast<uintptr_t>(info))) return;
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    config::warn("liblive: more than 4096 communicators; calls on the newer ones show no peers", false);
}

// Translates all ranks of `group` to world ranks.
std::vector<int32_t> world_members(MPI_Group group) {
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> ranks(static_cast<size_t>(n)), world(static_cast<size_t>(n), MPI_UNDEFINED);
  for (int i = 0; i < n; ++i) ranks[static_cast<size_t>(i)] = i;
  if (n > 0) PMPI_Group_translate_ranks(group, n, ranks.data(), g_world_group, world.data());
  return {world.begin(), world.end()};
}

}  // namespace

const CommInfo* comm_info(MPI_Comm c) noexcept {
  uint64_t info;
  return g_comms.find(c, &info) ? reinterpret_cast<const CommInfo*>(static_cast<uintptr_t>(info)) : nullptr;
}

void define_builtin_comms(int world_size) noexcept {
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    PMPI_Comm_group(MPI_COMM_WORLD, &g_world_group);
    auto* world = new CommInfo{0, "MPI_COMM_WORLD", {}};
    for (int r = 0; r < world_size; ++r) world->members.push_back(r);
    world->key = run_wide_key(world->members);
    publish(MPI_COMM_WORLD, world);
    publish(MPI_COMM_SELF, new CommInfo{0, "MPI_COMM_SELF", {g_world_rank}});
  } catch (const std::bad_alloc&) {
    config::warn("liblive: out of memory at start; calls show no communicator", false);
  }
}

void register_comm(MPI_Comm c) noexcept {
  if (c == MPI_COMM_NULL || g_world_group == MPI_GROUP_NULL) return;
  try {
    int inter = 0;
    PMPI_Comm_test_inter(c, &inter);
    MPI_Group group = MPI_GROUP_NULL;
    (inter ? PMPI_Comm_remote_group : PMPI_Comm_group)(c, &group);
    std::vector<int32_t> members = world_members(group);
    PMPI_Group_free(&group);
    std::lock_guard<std::mutex> lock(g_mutex);
    auto* info = new CommInfo{0, {}, std::move(members)};
    info->key = run_wide_key(info->members) ^ (inter ? 0x5555 : 0);
    info->label = std::string(inter ? "intercomm" : "comm") + " of " + std::to_string(info->members.size()) +
                  (info->members.size() == 1 ? " rank" : " ranks");
    publish(c, info);
  } catch (const std::bad_alloc&) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      config::warn("liblive: out of memory; calls on some communicators show no peers", false);
  }
}

}  // namespace mpe::tools::live
