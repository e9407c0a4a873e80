// liblive's shared state: each thread's "now" slot, its traffic ring and its counters, written by
// the thread on the per-call path and read by the publisher thread; and the communicator table
// that turns a communicator rank into a world rank.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mpe/calls.h"
#include "mpe/live_wire.h"
#include "mpe/request_table.h"
#include "mpe/tool.h"
#include "mpe/traffic.h"

namespace mpe::tools::live {

// Where a thread is, written by the thread as a seqlock (the sequence is odd while it writes) and
// copied by the publisher, which retries when the sequence moved under it.
inline constexpr int kMaxWaitPeers = 16;
struct NowSlot {
  std::atomic<uint32_t> seq{0};
  bool in_mpi = false;
  uint8_t wait = 0;    // live_stream::WaitKind
  uint8_t npeers = 0;  // valid entries of peers
  Fn fn{};
  uint64_t since = 0;    // clock ticks
  uintptr_t caller = 0;  // Call::caller, tag bits and all (a Python call's site id)
  MPI_Comm comm = MPI_COMM_NULL;
  int32_t peer = traffic::kPeerUnknown, tag = -1, root = -1;
  int32_t peers[kMaxWaitPeers];

  // The owning thread brackets its stores with these: the sequence is odd in between, so a reader
  // that saw it odd, or saw it change, copies again. ~2 ns: two plain stores and a fence.
  uint32_t begin_write() {
    const uint32_t q = seq.load(std::memory_order_relaxed);
    seq.store(q + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    return q;
  }
  void end_write(uint32_t q) { seq.store(q + 2, std::memory_order_release); }
};

// A message or collective, as the thread saw it; 32 bytes.
struct Event {
  uint64_t ticks;
  uint64_t bytes;
  int32_t peer;  // world rank
  int32_t tag;
  uint32_t comm;  // CommInfo::index of the message's communicator; 0 for a collective
  Fn fn;
  uint8_t kind;  // live_stream::EventKind
};
static_assert(sizeof(Event) <= 32, "a ring slot is 32 bytes");

// Events per thread between two publications; more are dropped and counted.
inline constexpr uint32_t kRingSize = 2048;

// A followed request: what it was posted as (the one traffic rule, mpe/traffic.h), and its peer
// as a world rank, for what a Wait on it waits for.
struct RequestPeer {
  traffic::Posted posted;
  int32_t world_peer = traffic::kPeerUnknown;
};

// A counter that only its thread writes and the publisher reads: a relaxed load and store, no
// locked instruction (~1 ns).
inline void bump(std::atomic<uint64_t>& a, uint64_t by) {
  a.store(a.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

struct LiveThread {
  NowSlot now;
  uint32_t index = 0;
  std::atomic<bool> gone{false};
  // Single producer (the thread), single consumer (the publisher).
  std::atomic<uint32_t> head{0}, tail{0};
  Event ring[kRingSize];
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint64_t> sends{0}, send_bytes{0}, recvs{0}, recv_bytes{0}, collectives{0};
  std::atomic<uint64_t> fn_ticks[kFnCount];
  std::atomic<uint64_t> fn_calls[kFnCount];
  RequestTable<RequestPeer> requests;  // the thread's own
  traffic::ProbedMessages probed;      // Mprobe'd messages awaiting their Mrecv
  // What the requests of the Wait/Test call in progress were (MPI nulls completed handles):
  // the first kMaxSnapshot of them.
  static constexpr int kMaxSnapshot = 256;
  int snapshot_n = 0;
  MPI_Request snapshot_req[kMaxSnapshot];
  RequestPeer snapshot[kMaxSnapshot];
  LiveThread* next = nullptr;
};

extern std::atomic<LiveThread*> g_threads MPE_HIDDEN;
extern __thread LiveThread* t_live MPE_HIDDEN __attribute__((tls_model("initial-exec")));
extern std::atomic<bool> g_recording MPE_HIDDEN;
extern int g_world_rank MPE_HIDDEN;

// The calling thread's state, made at its first MPI call; null when memory ran out.
LiveThread* new_live_thread() noexcept MPE_HIDDEN;
inline LiveThread* live_thread() {
  LiveThread* t = t_live;
  return t ? t : new_live_thread();
}

// ~3 ns: a bounds check against the consumer and a 32-byte store.
inline void push(LiveThread* t, const Event& e) {
  const uint32_t head = t->head.load(std::memory_order_relaxed);
  if (head - t->tail.load(std::memory_order_acquire) >= kRingSize) {
    bump(t->dropped, 1);
    return;
  }
  t->ring[head % kRingSize] = e;
  t->head.store(head + 1, std::memory_order_release);
}

// A communicator's members as world ranks (the remote group for an intercommunicator, whose
// point-to-point ranks name that group), its run-wide key, and its index in this process's table
// (what a traffic event carries). Immutable once published.
struct CommInfo {
  uint64_t key;
  std::string label;
  std::vector<int32_t> members;
  uint32_t index = 0;  // 1, 2, ...: 0 is no communicator
};

// The CommInfo of a communicator, or null for one created before liblive saw it. Lock-free.
const CommInfo* comm_info(MPI_Comm c) noexcept MPE_HIDDEN;
// The CommInfo of a CommInfo::index, or null. Lock-free.
const CommInfo* comm_at(uint32_t index) noexcept MPE_HIDDEN;
// Registers MPI_COMM_WORLD and MPI_COMM_SELF (after MPI_Init).
void define_builtin_comms(int world_size) noexcept MPE_HIDDEN;
// Registers a communicator the application just created (in the creating call's leave hook).
void register_comm(MPI_Comm c) noexcept MPE_HIDDEN;

// MPI_COMM_WORLD's CommInfo::index: registered first.
inline constexpr uint32_t kWorldCommIndex = 1;

// A message peer named in world ranks, and its communicator's index.
struct WorldPeer {
  int32_t rank;  // a world rank, or traffic::kPeerAny / kPeerNull / kPeerUnknown
  uint32_t comm;
};

// Rank r of a communicator other than MPI_COMM_WORLD as a world rank, with its index: a lock-free
// table probe, out of line.
WorldPeer other_comm_peer(MPI_Comm c, int32_t r) noexcept MPE_HIDDEN;

// Rank r of communicator c as a world rank (traffic's peer codes passed through), with c's index.
// ~2 ns on MPI_COMM_WORLD (no lookup), a lock-free table probe otherwise.
inline WorldPeer world_peer(MPI_Comm c, int32_t r) {
  return c == MPI_COMM_WORLD ? WorldPeer{r, kWorldCommIndex} : other_comm_peer(c, r);
}

// The world rank of rank r (an argument: MPI_ANY_SOURCE and MPI_PROC_NULL become traffic's codes).
// Inline whole on MPI_COMM_WORLD: on every blocking call's path (GCC had made it a call).
__attribute__((always_inline)) inline int32_t world_rank(MPI_Comm c, int r) {
  return c == MPI_COMM_WORLD ? traffic::peer_of(r) : other_comm_peer(c, traffic::peer_of(r)).rank;
}

}  // namespace mpe::tools::live
