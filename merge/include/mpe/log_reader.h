// Reads a .mpelog logfile: validation, the chunk index, decoding, and the index-based model
// (time-sorted per-timeline arrays, matched messages) that the CLI, the viewer and the tests use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mpe/log_defs.h"
#include "mpe/log_format.h"
#include "mpe/status.h"

namespace mpe::log {

// An open logfile: header, footer, definitions and index are read and checked; chunks are read
// on demand, so a viewer can draw coarse previews from the index summaries alone.
class LogFile {
 public:
  // Opens and validates a logfile. Errors: not-a-logfile, unsupported-version, corrupt, truncated, io-error.
  static StatusOr<LogFile> open(const std::string& path);

  const Definitions& definitions() const { return defs_; }
  // One entry per events chunk, ordered by rank, then thread, then time.
  const std::vector<IndexEntry>& index() const { return index_; }
  uint64_t file_size() const { return file_size_; }
  // Reads, checks and decodes chunk i of the index.
  StatusOr<std::vector<Record>> read_chunk(size_t i) const;
  // Converts a rank's raw ticks to corrected nanoseconds since the start of the run.
  int64_t to_ns(uint32_t rank, uint64_t ticks) const;
  // Converts a duration in a rank's ticks to nanoseconds.
  int64_t duration_ns(uint32_t rank, uint64_t ticks) const;
  // Name of a category ("MPI_Send", a user state name, or "cat<N>").
  std::string category_name(uint32_t cat) const;
  const Category* category(uint32_t cat) const;

 private:
  std::shared_ptr<int> fd_;
  uint64_t file_size_ = 0;
  Definitions defs_;
  std::vector<IndexEntry> index_;
  std::vector<int32_t> category_slot_;  // category id -> index in defs_.categories, for ids < 0x10000
  double origin_ = 0;                   // corrected ticks of the earliest chunk start
};

// A state (MPI call or user state) on a timeline; times in ns since the start of the run.
struct State {
  int64_t start;
  int64_t end;
  uint32_t cat;
  uint32_t depth;
};

// A point event: collective, Pcontrol marker, user event, communicator creation, or an
// unpaired message end; the record fields are kept as they were logged.
struct Event {
  int64_t time;
  RecordKind kind;
  uint32_t cat;
  int32_t a;
  int32_t b;
  uint32_t comm;
  uint64_t c;
};

// One message: its send and its receive (or only one side when unmatched).
struct Message {
  uint32_t send_timeline;
  uint32_t recv_timeline;
  int64_t send_time;  // entry of the send call
  int64_t recv_time;  // completion of the receive
  int32_t src;        // world ranks
  int32_t dst;
  int32_t tag;
  uint64_t comm;  // global communicator id
  uint64_t bytes;
};

// One thread of one rank; arrays sorted by start time.
struct Timeline {
  uint32_t rank = 0;
  uint32_t thread = 0;
  std::vector<State> states;
  std::vector<Event> events;
};

// A fully decoded logfile.
struct Trace {
  std::vector<Timeline> timelines;  // ordered by rank, then thread
  std::vector<Message> messages;    // matched, ordered by send time
  uint64_t unmatched_sends = 0;
  uint64_t unmatched_recvs = 0;
  uint64_t backward_messages = 0;  // matched messages whose receive ends before the send began
  // Per-rank shifts (ns) the reader added so that no receive ends before its send began; empty
  // when clock synchronisation alone achieved that. Applied to every time in the model.
  std::vector<int64_t> causality_shift_ns;
  uint64_t records = 0;
  int64_t t_begin = 0;
  int64_t t_end = 0;
  // Index of the timeline of (rank, thread), or -1.
  int timeline_of(uint32_t rank, uint32_t thread) const;
};

// Decodes every chunk and builds the model: states, events, messages matched per (communicator,
// source, destination, tag) in order (MPI's non-overtaking rule), with the causality repair
// described in log_reader.cpp when clock sync left backward messages. Cost: ~50 ns per record.
StatusOr<Trace> load_trace(const LogFile& file);

}  // namespace mpe::log
