// `mpe estimate`'s model: the records, chunks and bytes liblog would write for a run that
// libmpetime measured, by routine and call site, and the filter that brings it under a size.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mpe/log_filter.h"
#include "mpe/status.h"
#include "profile.h"

namespace mpe::cli {

// The record kinds the model counts apart (their bytes on disk differ).
enum class EstKind : uint8_t {
  kState,       // one per call
  kSend,        // a message sent
  kRecv,        // a message received
  kCollective,  // one per collective
  kRequest,     // a nonblocking request's post and done records
  kOther,       // Pcontrol markers, communicator and window creation, RMA operations and completions
};
inline constexpr size_t kEstKinds = 6;
// The kind's name in the JSON output ("state", "send", ...).
const char* est_kind_name(EstKind k);

// Records by kind (fractional: a rank's nonblocking receive posts are shared among its routines).
struct KindCounts {
  std::array<double, kEstKinds> n{};
  double& operator[](EstKind k) { return n[static_cast<size_t>(k)]; }
  double operator[](EstKind k) const { return n[static_cast<size_t>(k)]; }
  double total() const;
  double messages() const;  // all but states
  KindCounts& operator+=(const KindCounts& o);
};

// A routine's or a call site's share of the log, over all ranks.
struct EstimateRow {
  std::string name;     // routine; for a site "file:line (function)"
  std::string routine;  // the site's routine (sites only)
  std::string where;    // the site's innermost "file:line", as `exclude site` names it
  uint64_t calls = 0;
  KindCounts records;        // records its calls make, messages included
  double state_records = 0;  // what excluding it saves (its state records still written)
  bool moves_messages = false;
};

// One rank's share.
struct RankEstimate {
  int rank = 0;
  int threads = 1;
  double records = 0;
  double chunks = 0;             // events chunks: what its threads spill, at finalize included
  double spills_per_thread = 0;  // buffers filled during the run, on its busiest thread
  double bytes = 0;              // its chunks on disk, headers and index entries included
};

// What the estimate says of a run.
struct LogEstimate {
  int size = 0;                 // world size
  bool exact_messages = false;  // the report counts messages (libmpetime format 3)
  uint64_t buffer_bytes = 0;
  KindCounts records;
  std::vector<RankEstimate> per_rank;
  std::vector<EstimateRow> routines;  // most records first
  std::vector<EstimateRow> sites;     // most records first
  double definitions_bytes = 0;
  double mpelog_bytes = 0;
  double otf2_bytes = 0;
};

// A filter file (mpe/log_filter.h) as the estimate models it: a left-out call loses its state
// record, and its message records too with `drop messages` (routine rules only); `only ranks`
// leaves the other ranks' records out; `only pcontrol` is not modelled (the profile does not say
// which calls were made at which level), and the estimate says so.
struct EstimateOptions {
  uint64_t buffer_bytes = uint64_t{4} << 20;  // MPE_LOG_BUFFER
  const format::LogFilter* filter = nullptr;
};

// Estimates the log of the run `report` describes.
LogEstimate estimate_log(const tools::time::JsonReport& report, const EstimateOptions& options);

// The rules of a filter that brings the log under `target` bytes, after the given filter's (whose
// rules stay): it excludes the routines and sites that make the most state records, calls that
// move no message first; `after` is the estimate with it. The filter may still miss the target:
// message records are kept.
std::vector<std::string> propose_filter(const tools::time::JsonReport& report, const EstimateOptions& options,
                                        double target, LogEstimate* after);

}  // namespace mpe::cli
