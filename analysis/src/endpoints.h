// The communication endpoints of a logfile, what the analyses over messages share: pass 1
// streams the chunks timeline by timeline (a second thread decodes the next ones) and keeps
// each message end with the MPI call around it and, for a receive, when and where it was posted;
// the reader's matcher (mpe/message_matcher.h) then pairs them; the reader's causality shifts make
// every matched message arrive after it left. The wait states (waits.cpp) and the rebuilt
// unexpected queue (umq.cpp) are built on them.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "mpe/endpoint_collector.h"
#include "mpe/log_reader.h"
#include "mpe/message_matcher.h"
#include "mpe/status.h"

namespace mpe::analysis {

inline constexpr int64_t kUnknown = INT64_MIN;

// The call (MPI state) around an endpoint. 24 bytes: a big log has tens of millions of endpoints.
struct Call {
  int64_t start = 0;
  int64_t end = 0;
  uint32_t site = 0;
  uint16_t cat = 0;
  uint16_t thread = 0;
};

struct SendEnd {
  format::MessageKey key;
  int64_t time;             // the send record's time: the send call's entry
  bool waits_for_receiver;  // synchronous, or a blocking send above the eager limit
  bool cancelled;           // withdrawn by a kSendCancel: never matched
  uint32_t bytes;           // the message's size, saturated at 2^32-1 (fits the padding: still 64 bytes)
  Call call;
};

inline constexpr uint32_t kNoSend = UINT32_MAX;

struct RecvEnd {
  format::MessageKey key;
  int64_t time;        // completion
  uint32_t send;       // the matched send's index, kNoSend before matching or without one
  uint32_t post_site;  // the posting call's run-wide call site (MPI_Recv's, MPI_Irecv's), 0 unknown
  int64_t post;        // when the receive was posted, kUnknown when the log does not say
  Call call;           // the call that completed it (Recv, Wait, Test...)
  uint16_t post_cat;   // the posting call's category; with post == kUnknown, meaningless
};

// How a collective's members wait, by its routine.
enum class CollKind : uint8_t { kNone, kBarrier, kNxN, kBroadcast, kReduce };

struct CollEnd {
  uint64_t gid;  // the communicator's global id
  uint32_t k;    // this member's k-th collective on it
  int32_t member;
  int32_t root;  // world rank, -1 for none
  uint32_t cat;
  CollKind kind;
  int64_t enter;     // the call's entry; for a nonblocking collective, its post
  Call waiting;      // where its waiting happens: the call itself, or the Wait/Test completing it
  bool complete;     // false for a nonblocking collective whose completion the log does not give
  uint32_t members;  // the communicator's size: the members of the instance
};

// What pass 1 keeps. Deques: they grow without copying, so the peak is the endpoints themselves
// (and 4 bytes per message end in the matcher until matching).
struct Endpoints {
  std::deque<SendEnd> sends;
  std::deque<RecvEnd> recvs;  // in logged order: those one call completed are adjacent
  std::deque<CollEnd> colls;
};

// The matcher of the endpoints: each end is its index in Endpoints::sends or ::recvs, whose
// time it reads there.
struct EndpointTime {
  const Endpoints* e;
  int64_t operator()(uint32_t i, format::MessageSide side) const {
    return side == format::MessageSide::kSend ? e->sends[i].time : e->recvs[i].time;
  }
};
using EndpointMatcher = format::MessageMatcher<uint32_t, EndpointTime>;

struct ScanOptions {
  // A standard-mode blocking send of more bytes than this is taken to use a rendezvous.
  uint64_t eager_limit = 65536;
  bool collectives = true;  // keep the collectives (the wait states need them)
  // Asked between chunks when set: false stops the scan with kCancelled and `what` stopped.
  std::function<bool()> keep_going;
  const char* what = "analysis";
};

// What pass 1 counts besides the endpoints.
struct ScanTotals {
  uint64_t records = 0;
  int64_t mpi_ns = 0;  // time in MPI calls (depth 0) over all ranks
  std::vector<int64_t> mpi_per_rank;
};

// Matches the ends pass 1 gave `matcher`: sets each receive's send and counts the ends left
// without a partner in *unmatched.
void match_messages(Endpoints& e, EndpointMatcher& matcher, uint64_t* unmatched);

// The reader's per-rank causality shifts (ns, >= 0) for the matched messages: no receive
// completes before its send began. nranks entries, all 0 when clock sync sufficed.
std::vector<int64_t> causality_shifts(const Endpoints& e, uint32_t nranks);

// What an EndpointCollector (mpe/endpoint_collector.h) hands the analyses: pass 1's endpoints,
// matched, its totals, and the reader's causality shifts. analysis::waits::analyze() reads it (and sorts the
// collectives); analysis::umq::rebuild() consumes it.
struct Collected {
  Endpoints endpoints;
  ScanTotals totals;
  uint64_t unmatched = 0;      // message ends without a partner
  std::vector<int64_t> shift;  // per rank, ns
  bool collectives = true;     // whether the collectives were kept
};

// Pass 1 on a pass of its own (an EndpointCollector over format::run_chunk_pass), then matching and
// the causality shifts. Errors: the reader's (corrupt, truncated, io-error), kCancelled.
StatusOr<std::shared_ptr<Collected>> collect(const format::LogFile& file, const ScanOptions& options);

inline Call shifted(Call c, int64_t by) {
  c.start += by;
  c.end += by;
  return c;
}

}  // namespace mpe::analysis
