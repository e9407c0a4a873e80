// liblive's communicator table: handle -> members as world ranks and a run-wide key, so that a
// communicator rank can be named as a world rank and every member names one communicator alike.
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "live_state.h"
#include "mpe/comm_members.h"
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
bool g_started = false;                                     // MPI_COMM_WORLD is registered
// CommInfo::index -> CommInfo, for the publisher, which meets communicators as indices in events.
constexpr uint32_t kMaxIndexed = 4096;
std::atomic<const CommInfo*> g_by_index[kMaxIndexed + 1];
uint32_t g_next_index = kWorldCommIndex;  // under g_mutex

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

// Under g_mutex.
void publish(MPI_Comm c, CommInfo* info) {
  if (g_next_index <= kMaxIndexed) {
    info->index = g_next_index++;
    g_by_index[info->index].store(info, std::memory_order_release);
  }
  if (g_comms.put(c, reinterpret_cast<uintptr_t>(info))) return;
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    config::warn("liblive: more than 4096 communicators; calls on the newer ones show no peers", false);
}

}  // namespace

const CommInfo* comm_at(uint32_t index) noexcept {
  return index <= kMaxIndexed ? g_by_index[index].load(std::memory_order_acquire) : nullptr;
}

const CommInfo* comm_info(MPI_Comm c) noexcept {
  uint64_t info;
  return g_comms.find(c, &info) ? reinterpret_cast<const CommInfo*>(static_cast<uintptr_t>(info)) : nullptr;
}

WorldPeer other_comm_peer(MPI_Comm c, int32_t r) noexcept {
  const CommInfo* info = comm_info(c);
  const uint32_t index = info ? info->index : 0;
  if (r < 0) return {r, index};
  if (!info || static_cast<size_t>(r) >= info->members.size()) return {traffic::kPeerUnknown, index};
  return {info->members[static_cast<size_t>(r)], index};
}

void define_builtin_comms(int world_size) noexcept {
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_started = true;
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
  if (c == MPI_COMM_NULL || !g_started) return;
  try {
    bool inter = false;
    std::vector<int32_t> members = world_members(c, &inter);
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
