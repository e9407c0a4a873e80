// The live stream's messages: what liblive publishes every interval, what the relay adds when the
// job ends, and how both are encoded. The one layout that liblive, the relay, `mpe top` and
// upshot share; decoding validates every count and length, so garbage is rejected, never trusted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpe/peer.h"
#include "mpe/status.h"

namespace mpe::live_stream {

inline constexpr uint32_t kMagic = 0x4C45504D;  // "MPEL", little-endian
inline constexpr uint32_t kWireVersion = 2;     // 2: traffic events carry their communicator

enum class MessageKind : uint8_t { kRankFrame = 1, kJobEnd = 2 };

// What a blocked call waits for, as the rank saw it when it entered the call.
enum class WaitKind : uint8_t {
  kNone = 0,        // not a blocking call, or nothing known
  kAllOf = 1,       // every peer in `peers` (a receive from a named source, Wait/Waitall, Send)
  kAnyOf = 2,       // any one of `peers` (Waitany/Waitsome)
  kAnyInComm = 3,   // any member of the communicator (MPI_ANY_SOURCE)
  kCollective = 4,  // the communicator's members that are not in this collective
  kUnknown = 5,     // blocking, but on requests whose peers are not known (not a deadlock edge)
};

// A communicator a rank's current call uses: its run-wide key (the same on every member) and its
// members as world ranks, in communicator rank order, run-length encoded.
struct CommDef {
  uint64_t key = 0;
  std::string label;                                  // "MPI_COMM_WORLD", "comm 3 (4 ranks)"
  std::vector<std::pair<uint32_t, uint32_t>> ranges;  // (first world rank, count)
  uint32_t size() const;
  std::vector<int32_t> members() const;
};

// Where one thread of a rank is now.
struct ThreadNow {
  uint32_t thread = 0;  // 0 for the thread that called MPI_Init
  bool in_mpi = false;
  uint64_t since_ns = 0;          // entered the call, or returned to the application
  std::string routine;            // "MPI_Recv"; empty in the application
  std::string callsite;           // "halo2d.c:57 (exchange)" (mpe::callsite_text), or "" when unknown
  int32_t comm = -1;              // index into RankFrame::comms, or -1
  int32_t peer = peer::kUnknown;  // world rank of the point-to-point peer, or a code of mpe/peer.h
  int32_t tag = -1;
  int32_t root = -1;  // world rank of a rooted collective's root, or -1
  WaitKind wait = WaitKind::kNone;
  std::vector<int32_t> peers;  // world ranks, for kAllOf/kAnyOf
};

// A message or collective of the interval, as an arrow endpoint.
enum class EventKind : uint8_t { kSend = 1, kRecv = 2, kCollective = 3 };
struct TrafficEvent {
  EventKind kind = EventKind::kSend;
  uint64_t t_ns = 0;
  int32_t peer =
      peer::kUnknown;  // world rank: destination of a send, source of a receive; kUnknown collective
  int32_t tag = 0;
  uint64_t comm = 0;  // the message's communicator, as CommDef::key (the same on every member); 0 collective
  uint64_t bytes = 0;
  std::string routine;  // collectives: "MPI_Allreduce"
};

// Messages to one peer in an interval whose traffic went over the budget.
struct PeerTotal {
  int32_t peer = -1;
  uint64_t count = 0;
  uint64_t bytes = 0;
};

struct RoutineTime {
  std::string routine;
  uint64_t ns = 0;
  uint64_t calls = 0;
};

// One rank's interval.
struct RankFrame {
  uint32_t rank = 0;
  uint32_t world_size = 0;
  uint32_t pid = 0;
  std::string host;
  uint64_t seq = 0;                // 0, 1, 2...: a gap is frames lost in transit
  uint64_t interval_start_ns = 0;  // wall clock (CLOCK_REALTIME), ns since the epoch
  uint64_t interval_end_ns = 0;
  bool finalized = false;       // the rank's last frame: it is in MPI_Finalize
  bool aggregated = false;      // traffic over the budget: `per_peer` instead of `events`
  uint64_t frames_dropped = 0;  // cumulative: frames this rank could not hand to the transport
  uint64_t events_dropped = 0;  // cumulative: traffic events its buffers had no room for
  // Every message and collective of the interval, counted whether or not sent as events.
  uint64_t sends = 0, send_bytes = 0, recvs = 0, recv_bytes = 0, collectives = 0;
  uint64_t mpi_ns = 0;                // time in MPI during the interval, summed over threads
  std::vector<RoutineTime> routines;  // the interval's MPI time per routine
  std::vector<ThreadNow> threads;
  std::vector<CommDef> comms;
  std::vector<TrafficEvent> events;
  std::vector<PeerTotal> per_peer;           // sends per destination when aggregated
  std::vector<PeerTotal> received_per_peer;  // receives per source when aggregated
};

// The relay's last word: the launcher returned.
struct JobEnd {
  // The exit status of a job whose end message was lost (the viewer saw the .live file go).
  static constexpr int32_t kExitUnknown = -1;
  int32_t exit_status = 0;
  std::string mpelog;  // the merged logfile when liblog ran too, else ""
  bool end_message_lost() const { return exit_status == kExitUnknown; }
};

std::string encode(const RankFrame& f);
std::string encode(const JobEnd& e);
// The kind of an encoded message; kCorrupt/kUnsupportedVersion for what is not one of ours.
StatusOr<MessageKind> peek_kind(const void* data, size_t n);
StatusOr<RankFrame> decode_frame(const void* data, size_t n);
StatusOr<JobEnd> decode_job_end(const void* data, size_t n);

// Run-length encodes world ranks in communicator order.
std::vector<std::pair<uint32_t, uint32_t>> to_ranges(const std::vector<int32_t>& members);

}  // namespace mpe::live_stream
