// What the phases of the OTF2 export share (mpe/otf2_export.h): the communicators, windows, call
// sites and calling contexts every process numbers alike from the log, and what this process has
// written so far (its locations, the regions and windows its events used, its markers). The
// phases live in otf2_writer.cpp (archive and phases), otf2_write_gather.cpp (a location's
// records as the reader interprets them), otf2_write_location.cpp (a location's events) and
// otf2_write_definitions.cpp / otf2_write_summary.cpp (what the root defines for everyone).
#pragma once

#include <otf2/otf2.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mpe/interop.h"
#include "mpe/log_reader.h"
#include "mpe/otf2_export.h"
#include "otf2_metrics.h"

namespace mpe::interop::detail {

// A state on a location: an MPI call or a user state.
struct Interval {
  int64_t start;
  int64_t end;
  uint32_t cat;
  uint32_t depth;
  uint32_t site = 0;    // run-wide call site, 0 when unknown
  int collective = -1;  // index of the collective point this call carried, or -1
  uint32_t context = OTF2_UNDEFINED_CALLING_CONTEXT;  // its calling context (local id), once entered
};

// A point in time on a location: what format::interpret_records() kept as an event, a message end,
// or a request or counter record.
struct Point {
  format::Event event;
  std::optional<format::MessageKey> message = {};  // a send or receive whose peer is known
  bool dropped = false;                            // attached to its interval, or a cancelled send
  // A send, receive or collective of a nonblocking request: its serial (0: blocking).
  uint64_t request = 0;
  int64_t time() const { return event.time; }
  format::RecordKind kind() const { return event.kind; }
};

// One location's states and points, as gather_location() reads them.
struct LocationRecords {
  std::vector<Interval> states;
  std::vector<Point> points;
  std::vector<std::pair<uint32_t, int64_t>> unpaired_user;  // user states never ended: markers
};

// Reads one location's chunks (all of `rank`) through format::interpret_records().
Status gather_location(const format::LogFile& log, uint32_t rank, const std::vector<size_t>& chunks,
                       Progress* progress, LocationRecords* out);
// Attaches each collective point to the call that carried it (same start and category), so that
// MpiCollectiveBegin/End sit inside its Enter/Leave. Points sorted by time.
void attach_collectives(std::vector<Interval>* states, std::vector<Point>* points);
// Gives each message end and collective of a nonblocking request its request serial and drops
// the request record folded into it; returns each nonblocking collective's point by serial.
std::unordered_map<uint64_t, size_t> attach_requests(std::vector<Point>* points);

struct LocationSummary {
  uint32_t rank = 0;
  uint32_t thread = 0;
  uint64_t events = 0;
  uint64_t last_time = 0;
};

struct ExportMarker {
  uint64_t time = 0;
  uint64_t location = 0;
  uint32_t kind = 0;  // RecordKind::kMarker (MPI_Pcontrol) or kUserEvent
  uint32_t cat = 0;
  int64_t value = 0;  // Pcontrol level, or the user event's data
};

struct CommInfo {
  uint64_t global_id = 0;
  bool inter = false;
  format::MemberList members;
  bool self = false;  // MPI_COMM_SELF: one communicator for every rank, as Score-P defines it
};

// A node of the calling-context tree. A state's context is the chain of its call site's frames,
// outermost first, under the context of the state enclosing it, then the state itself: what
// Score-P writes for a wrapped (MPI) call when it unwinds (frame nodes of paradigm SAMPLING, the
// call site's line on the innermost frame and on the call). Nodes are numbered per process
// (local ids, in the order made, parents first); the root unifies them and every location's
// local definitions carry the mapping.
enum ContextKind : uint32_t { kFrameContext = 0, kStateContext = 1 };
struct ContextNode {
  uint32_t parent = OTF2_UNDEFINED_CALLING_CONTEXT;
  uint32_t kind = kFrameContext;
  uint32_t a = 0;      // frame: frame id (ExportState::frames); state: category
  uint32_t b = 0;      // state: run-wide call site, 0 when unknown
  uint32_t depth = 1;  // nodes from the root, this one included
};

// One process's calling contexts, as its summary lists them.
struct ProcessContexts {
  uint64_t key = 0;  // the ref of its first location
  std::vector<ContextNode> nodes;
};

// What one process's summary says (Otf2Export::summary()), appended to the vectors and sets.
Status parse_summary(const std::string& s, std::vector<LocationSummary>* locs, std::set<uint32_t>* cats,
                     std::vector<ExportMarker>* markers, ProcessContexts* contexts,
                     std::set<std::pair<uint32_t, uint32_t>>* windows);

struct ExportState {
  explicit ExportState(const format::LogFile& l);

  const format::LogFile& log;
  MetricExport metrics{log};  // MPI_T counters as metrics (otf2_metrics.h)
  OTF2_Archive* archive = nullptr;
  std::vector<CommInfo> comms;                 // by OTF2 comm ref
  std::vector<std::vector<uint32_t>> comm_of;  // [rank][per-rank comm index] -> comm ref
  std::vector<LocationSummary> locations;      // written by this process
  std::set<uint32_t> used_cats;
  std::vector<ExportMarker> markers;
  // Events name regions by category id (local ids); OTF2 wants global region refs dense, so
  // the root numbers the union of the categories used and every location's local definitions
  // carry the mapping table.
  std::vector<uint32_t> region_cats;  // global region ref -> category
  // Call sites (v3 logs). Frames are numbered over the run from LogFile::callsites(), the same
  // on every process that opened the log.
  bool use_contexts = false;                       // the log has call sites
  std::vector<const Frame*> frames;                // frame id -> frame
  std::vector<std::vector<uint32_t>> site_frames;  // run-wide site - 1 -> frame ids, innermost first
  std::vector<ContextNode> contexts;               // local id -> node
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, uint32_t> context_ids;
  // Root, after write_global_definitions: each process's local -> global contexts, by the ref of
  // its first location.
  std::vector<std::pair<uint64_t, std::vector<uint32_t>>> context_maps;

  // The context of a state of category `cat` at call site `site` inside context `parent`.
  uint32_t context(uint32_t parent, uint32_t cat, uint32_t site);
  // OTF2's unwind distance of entering `next` after the calling context `previous`.
  uint32_t unwind_distance(uint32_t previous, uint32_t next) const;
  uint32_t comm_ref(uint32_t rank, uint32_t index) const {
    if (rank >= comm_of.size() || index >= comm_of[rank].size()) return OTF2_UNDEFINED_COMM;
    return comm_of[rank][index];
  }

  // One-sided windows. Events name a window by its communicator's ref and its ordinal on it (what
  // liblog's kWinCreate records say, the same on every member), so every process names it alike
  // without asking the others; the root numbers the windows the summaries list densely (OTF2
  // tools want dense refs) and every location's local definitions carry the mapping table.
  std::set<std::pair<uint32_t, uint32_t>> used_windows;  // (local window id, comm ref)
  std::vector<uint32_t> window_ids;                      // root: global window ref -> local id
  static constexpr int kWindowBits = 8;                  // windows per communicator: 256
  uint32_t window_id(uint32_t rank, uint32_t comm_index, uint32_t ordinal) const {
    const uint32_t c = comm_ref(rank, comm_index);
    if (c == OTF2_UNDEFINED_COMM || c >> (32 - kWindowBits) || ordinal >> kWindowBits)
      return OTF2_UNDEFINED_RMA_WIN;
    return c << kWindowBits | ordinal;
  }

  // Writes one location's events (otf2_write_location.cpp).
  Status write_location(uint32_t rank, uint32_t thread, const std::vector<size_t>& chunks,
                        Progress* progress);

 private:
  void build_comms();
  void build_frames();
  uint32_t context_node(uint32_t parent, uint32_t kind, uint32_t a, uint32_t b);
};

}  // namespace mpe::interop::detail

namespace mpe::interop {

struct Otf2Export::Impl : detail::ExportState {
  using ExportState::ExportState;
};

}  // namespace mpe::interop
