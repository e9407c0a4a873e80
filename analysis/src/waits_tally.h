// How the wait states are measured, one matched message or collective instance at a time: the
// in-memory analysis (waits.cpp, over every endpoint) and the streaming replay (waits_replay.cpp,
// over the ends in flight) both measure here, so they agree on every instance.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "endpoints.h"
#include "mpe/waits.h"

namespace mpe::analysis::waits {

// Report::blame's order.
inline bool by_pair(const Blame& a, const Blame& b) {
  return a.culprit != b.culprit ? a.culprit < b.culprit : a.waiter < b.waiter;
}

// Report::instances' order: by_timeline, then every other field, so that the order is the same
// whichever order the instances were found in.
bool in_report_order(const Instance& a, const Instance& b);

// The reader's clock shift of a rank; 0 for a rank outside the world.
struct Shifts {
  const std::vector<int64_t>& shift;
  uint32_t nranks;
  int64_t operator()(int32_t rank) const {
    return rank >= 0 && static_cast<uint32_t>(rank) < nranks ? shift[static_cast<size_t>(rank)] : 0;
  }
};

// Adds one instance to the totals (and to the list when kept).
class Tally {
 public:
  Tally(Report* report, const Options& options) : report_(report), options_(options) {}

  // Moves who made whom wait into the report, sorted by (culprit, waiter).
  void finish();

  // `waiting` waited on rank `rank` from `from` (the moment the culprit entered) to the end of
  // the call at most; nothing when from <= the call's start.
  void add(Pattern p, uint32_t rank, const Call& waiting, int64_t from, int32_t culprit,
           const Call& culprit_call, int64_t send_time = 0, int64_t recv_time = 0);

 private:
  Report* report_;
  const Options& options_;
  // (culprit << 32 | waiter) -> ns: only the pairs that waited, never a ranks × ranks matrix.
  std::unordered_map<uint64_t, int64_t> blame_;
};

// Late Receiver: the send of a matched message waits for its receive to be posted.
void tally_late_receiver(const SendEnd& s, const RecvEnd& r, const Shifts& shift_of, Tally& tally);
// Late Sender: the receive-side call `worst` (the receive one call completed whose send began
// latest) waits for its send `s`.
void tally_late_sender(const SendEnd& s, const RecvEnd& worst, const Shifts& shift_of, Tally& tally);
// The collective patterns of one instance (communicator, k): its members' ends, by member. An
// instance whose members disagree on the routine, or with one member, is counted unmatched.
void tally_collective(const CollEnd* first, const CollEnd* last, const Shifts& shift_of, Tally& tally,
                      Report& report);

}  // namespace mpe::analysis::waits
