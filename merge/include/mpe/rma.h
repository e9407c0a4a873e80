// One-sided communication in a logfile: the windows of a run and its RMA transfers (an operation
// from origin to target, and the synchronisation that completed it), built from liblog's kWinCreate,
// kRmaOp and kRmaComplete records. The one matching that the reader, the viewer, `mpe` and the OTF2
// writer share.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "mpe/log_defs.h"
#include "mpe/log_format.h"
#include "mpe/records.h"

namespace mpe::format {

class LogFile;

// The kind of an RMA operation (RmaKind, mpe/routine.h); false for a routine that is no RMA operation.
bool rma_kind_of(const RoutineInfo& routine, RmaKind* kind);
// The same for a function's name only ("MPI_Put", "MPI_Rget_accumulate", ...), mapped through the
// routine table: for foreign archives, where names are all there is.
bool rma_kind_of(std::string_view function, RmaKind* kind);
// "put", "get", "accumulate", "get_accumulate", "fetch_and_op", "compare_and_swap".
const char* rma_kind_name(RmaKind kind);

// A window: created collectively over a communicator, so (communicator, ordinal on it) is the same
// on every member.
struct RmaWindow {
  uint32_t id = 0;    // index in RmaModel::windows
  uint64_t comm = 0;  // global communicator id
  int32_t ordinal = 0;
  uint32_t cat = 0;    // the creating function (MPI_Win_create, MPI_Win_allocate, ...)
  MemberList members;  // world rank of each rank of the window's group (shared with its communicator)
  std::vector<uint64_t> bytes;  // window size on each member (by group rank), as logged
};

// One RMA operation, origin to target; times in corrected ns since the start of the run.
struct RmaTransfer {
  uint32_t origin_timeline = 0;  // as the caller numbered timelines when feeding
  int32_t origin = 0;            // world ranks
  int32_t target = 0;
  uint32_t window = 0;  // RmaWindow::id
  RmaKind kind = RmaKind::kPut;
  uint32_t cat = 0;           // the function (MPI_Put, MPI_Rget, ...)
  uint64_t sent = 0;          // bytes carried to the target
  uint64_t received = 0;      // bytes brought back to the origin
  int64_t start = 0;          // entry of the operation's call
  int64_t complete = -1;      // exit of the synchronisation that completed it; -1 when none did
  uint32_t complete_cat = 0;  // that synchronisation's function
};

struct RmaModel {
  std::vector<RmaWindow> windows;
  std::vector<RmaTransfer> transfers;  // ordered by start time
  uint64_t unresolved = 0;             // operations on a window or target the definitions do not know
};

// The operations issued and not yet completed, per window: the one completion rule, shared by
// RmaMatcher and the OTF2 writer. A synchronisation completes the window's pending operations to
// its target, or to every target when the target is -1.
class RmaPending {
 public:
  void issue(uint64_t window, int32_t target, uint64_t id) { pending_[window].push_back({target, id}); }
  // Calls done(id) for each operation the synchronisation completes, oldest first, and forgets them.
  template <class F>
  void complete(uint64_t window, int32_t target, F&& done) {
    const auto p = pending_.find(window);
    if (p == pending_.end()) return;
    auto& v = p->second;
    size_t kept = 0;
    for (const auto& [t, id] : v)
      if (target < 0 || t == target)
        done(id);
      else
        v[kept++] = {t, id};
    v.resize(kept);
  }

 private:
  std::map<uint64_t, std::vector<std::pair<int32_t, uint64_t>>> pending_;
};

// Matches the RMA records of a run. Feed each rank's kWinCreate, kRmaOp and kRmaComplete records
// in that rank's time order (its threads merged), ranks in any order; then take the model.
// Invariant: an operation is completed by the first later synchronisation of its rank on its
// window that covers its target (fence, complete, unlock_all, flush_all: every target; unlock,
// flush: that target). Cost: O(operations + synchronisations x pending operations).
class RmaMatcher {
 public:
  explicit RmaMatcher(const LogFile& file) : file_(file) {}
  // Takes one of the rank's kWinCreate, kRmaOp or kRmaComplete events; ignores any other kind.
  void feed(uint32_t rank, uint32_t timeline, const Event& e);
  // Returns the model: transfers sorted by start time.
  RmaModel finish();

 private:
  const LogFile& file_;
  RmaModel model_;
  std::map<std::tuple<uint64_t, int32_t>, uint32_t> window_ids_;  // (comm, ordinal) -> id
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> window_of_;   // (rank, window index) -> id
  RmaPending pending_;  // by rank << 32 | window id: transfer indices, targets as group ranks
};

// True for the record kinds RmaMatcher takes.
constexpr bool is_rma_record(RecordKind k) {
  return k == RecordKind::kRmaOp || k == RecordKind::kRmaComplete || k == RecordKind::kWinCreate;
}

}  // namespace mpe::format
