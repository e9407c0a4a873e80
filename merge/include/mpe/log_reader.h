// Reads a .mpelog logfile: validation, the chunk index, decoding, and the index-based model
// (time-sorted per-timeline arrays, matched messages) that the CLI, the viewer and the tests use.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "mpe/chunk_pass.h"
#include "mpe/file_io.h"
#include "mpe/log_defs.h"
#include "mpe/log_format.h"
#include "mpe/message_matcher.h"
#include "mpe/records.h"
#include "mpe/rma.h"
#include "mpe/status.h"

namespace mpe::format {

// a + b clamped to int64_t: times read from a damaged log must not overflow (UB the sanitized fuzz
// run found in the reader's time arithmetic).
inline int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

// A call site of the run: the sites of every rank that have the same callsite_key() are one.
struct CallSite {
  uint32_t id = 0;            // 1, 2, ...: index + 1 in LogFile::callsites()
  std::vector<Frame> frames;  // innermost first
  std::string text;           // callsite_text(frames): "halo.c:42 (exchange)"
};

// An open logfile: header, footer, definitions and index are read and checked; chunks are read
// on demand, so a viewer can draw coarse previews from the index summaries alone.
class LogFile {
 public:
  // Opens and validates a logfile. Errors: not-a-logfile, unsupported-version, corrupt, truncated, io-error.
  static StatusOr<LogFile> open(const std::string& path);
  // The same from any source of its bytes (a remote one: `mpe serve`).
  static StatusOr<LogFile> open(std::shared_ptr<const io::ByteSource> source);
  // Where its bytes come from (the view index's reader shares the same kind of source).
  const std::shared_ptr<const io::ByteSource>& source() const { return source_; }

  const Definitions& definitions() const { return defs_; }
  // One entry per events chunk, in the writer's order: liblog's merge orders them by rank, thread
  // and time; a writer may interleave timelines (`mpe synth`), each timeline's chunks oldest first.
  const std::vector<IndexEntry>& index() const { return index_; }
  uint64_t file_size() const { return file_size_; }  // Reads, checks and decodes chunk i of the index.
  StatusOr<std::vector<Record>> read_chunk(size_t i) const;
  // The same into *out, with the file's and the decompressed bytes kept in *scratch: a reader of
  // many chunks reuses both and allocates (and page-faults) once, not three times per chunk.
  struct ChunkScratch {
    std::string file_bytes;
    std::string raw;
  };
  Status read_chunk(size_t i, ChunkScratch* scratch, std::vector<Record>* out) const;
  // Converts a rank's raw ticks to corrected nanoseconds since the start of the run. Inline: once
  // per record time, for every consumer of a pass.
  int64_t to_ns(uint32_t rank, uint64_t ticks) const {
    const double t = defs_.ranks[rank].sync.correct(ticks) - origin_;
    return round_to_int64(t * 1e9 / defs_.ticks_per_second);
  }
  // Converts a duration in a rank's ticks to nanoseconds.
  int64_t duration_ns(uint32_t /*rank*/, uint64_t ticks) const {
    return round_to_int64(static_cast<double>(ticks) * 1e9 / defs_.ticks_per_second);
  }
  // Name of a category ("MPI_Send", a user state name, or "cat<N>").
  std::string category_name(uint32_t cat) const;
  const Category* category(uint32_t cat) const;
  uint16_t version() const { return version_; }
  // The run's call sites (v3), unified across ranks; empty for older files.
  const std::vector<CallSite>& callsites() const { return callsites_; }
  // The run-wide id of `rank`'s call site `local` (what a v3 record's b holds); 0 when unknown.
  uint32_t callsite(uint32_t rank, uint32_t local) const {
    if (rank >= site_of_.size() || local >= site_of_[rank].size()) return 0;
    return site_of_[rank][local];
  }
  // The text of run-wide call site `id`, or "" for 0 or an unknown id.
  const std::string& callsite_text(uint32_t id) const;

 private:
  void unify_callsites();

  std::shared_ptr<const io::ByteSource> source_;
  uint64_t file_size_ = 0;
  Definitions defs_;
  std::vector<IndexEntry> index_;
  std::vector<int32_t> category_slot_;  // category id -> index in defs_.categories, for ids < 0x10000
  double origin_ = 0;                   // corrected ticks of the earliest chunk start
  uint16_t version_ = 0;
  std::vector<CallSite> callsites_;
  std::vector<std::vector<uint32_t>> site_of_;  // [rank][local id] -> run-wide id
};

// A state (MPI call or user state) on a timeline; times in ns since the start of the run.
struct State {
  int64_t start;
  int64_t end;
  uint32_t cat;
  uint32_t depth;
  uint32_t site;  // run-wide call site (LogFile::callsites()), 0 when unknown
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
  RmaModel rma;                     // one-sided windows and transfers (v4), after causality repair
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

// Matches the RMA records (kWinCreate, kRmaOp, kRmaComplete) among the events of n timelines
// into windows and transfers (mpe/rma.h): rank_of(tl) is timeline tl's rank, events_of(tl) its
// events sorted by time; transfers name timelines by tl. Each rank's threads are merged in time
// order, as RmaMatcher wants them.
template <class RankOf, class EventsOf>
RmaModel match_rma(const LogFile& file, uint32_t n, RankOf rank_of, EventsOf events_of) {
  RmaMatcher m(file);
  struct Item {
    int64_t time;
    uint32_t timeline;
    const Event* e;
  };
  std::map<uint32_t, std::vector<Item>> by_rank;
  for (uint32_t tl = 0; tl < n; ++tl)
    for (const Event& e : events_of(tl))
      if (is_rma_record(e.kind)) by_rank[rank_of(tl)].push_back(Item{e.time, tl, &e});
  for (auto& [rank, items] : by_rank) {
    std::stable_sort(items.begin(), items.end(),
                     [](const Item& x, const Item& y) { return x.time < y.time; });
    for (const Item& it : items) m.feed(rank, it.timeline, *it.e);
  }
  return m.finish();
}
inline RmaModel match_rma(const LogFile& file, const std::vector<Timeline>& timelines) {
  return match_rma(
      file, static_cast<uint32_t>(timelines.size()), [&](uint32_t tl) { return timelines[tl].rank; },
      [&](uint32_t tl) -> const std::vector<Event>& { return timelines[tl].events; });
}

// Pairs one timeline's MPE user events into user states, as the definitions describe them: an
// event whose id is a state category's start id opens that state; one whose id is the end id of
// an open state closes the innermost such state; any other stands alone. The one pairing that
// load_trace(), the viewer and the OTF2 and Chrome writers share. Feed a timeline's events in
// logged order, across its chunks.
class UserStates {
 public:
  struct Closed {
    uint32_t cat;    // the state's category (its start id)
    int64_t start;   // ns
    uint32_t depth;  // among the timeline's open user states
    uint32_t site;   // call site of the start event
  };
  enum class Fed { kBegan, kEnded, kLone };

  // Takes the user event `cat` at time t: begins a state, ends one (*closed), or stands alone.
  Fed feed(const LogFile& file, uint32_t cat, int64_t t, uint32_t site, Closed* closed);
  // Returns the states begun and never ended, (category, start), oldest first, and forgets them.
  std::vector<std::pair<uint32_t, int64_t>> take_open() {
    open_sites_.clear();
    return std::exchange(open_, {});
  }

 private:
  std::vector<std::pair<uint32_t, int64_t>> open_;  // (start id, start time in ns)
  std::vector<uint32_t> open_sites_;                // call site of each open state
};

// The world rank of rank r of a rank's communicator `comm` (a record's per-rank comm index), and
// the communicator's global id; false when the definitions do not know them.
inline bool world_rank(const RankMeta& rm, uint32_t comm, int32_t r, int32_t* world, uint64_t* gid) {
  if (comm >= rm.comms.size()) return false;
  const CommDef& c = rm.comms[comm];
  if (c.index != comm || r < 0 || static_cast<size_t>(r) >= c.members.size()) return false;
  *world = c.members[static_cast<size_t>(r)];
  *gid = c.global_id;
  return true;
}

// Interprets n records of chunk e in logged order, exactly as load_trace() does, and tells sink:
//   sink.state(start, end, cat, depth, site)  an MPI call, or a user state whose end event came;
//   sink.event(const Event&)              everything else that is kept as a point;
//   sink.message_end(send, key, time, bytes)   a send or receive whose peer is known;
//   sink.cancel_send(key)                 drop the latest send of key;
//   sink.span(t, end)                     every record's time and end, for the run's span.
// user_states carries the timeline's open user states from one of its chunks to the next.
// A sink that writes the records out again in another format (the OTF2 writer) may also define
// these, and is then told more of what was logged:
//   sink.call(t, const StateRecord&, site)   instead of state() for a kState record: the writer
//                                            takes the end from the raw ticks (t + duration);
//   sink.message_record(key, const Event&)   after message_end(): the logged send or receive;
//   sink.unmodelled(const Event&)            kRequestPost, kRequestDone and kCounter records.
template <class Sink>
void interpret_records(const LogFile& file, const IndexEntry& e, const Record* recs, size_t n,
                       UserStates* user_states, Sink& sink) {
  const RankMeta& rm = file.definitions().ranks[e.rank];
  auto world = [&](uint32_t comm, int32_t r, int32_t* out, uint64_t* gid) {
    return world_rank(rm, comm, r, out, gid);
  };
  const int32_t me = static_cast<int32_t>(e.rank);
  const bool has_sites = file.version() >= kFirstCallsiteVersion;
  for (size_t i = 0; i < n; ++i) {
    const Record& r = recs[i];
    const int64_t t = file.to_ns(e.rank, r.time);
    int64_t end = t;
    const RecordKind kind = kind_of(r);
    switch (kind) {
      case RecordKind::kState: {
        const StateRecord st = as<StateRecord>(r);
        const uint32_t site = has_sites ? file.callsite(e.rank, st.site) : 0;
        end = saturating_add(t, file.duration_ns(e.rank, st.duration));
        if constexpr (requires { sink.call(t, st, site); })
          sink.call(t, st, site);
        else
          sink.state(t, end, st.cat, st.depth, site);
        break;
      }
      case RecordKind::kSend: {
        const SendRecord s = as<SendRecord>(r);
        int32_t peer;
        uint64_t gid;
        if (!world(s.comm, s.dest, &peer, &gid)) {
          sink.event(Event::of(r, t));
          break;
        }
        sink.message_end(true, MessageKey{gid, me, peer, s.tag}, t, s.bytes);
        if constexpr (requires { sink.message_record(MessageKey{}, Event{}); })
          sink.message_record(MessageKey{gid, me, peer, s.tag}, Event::of(r, t));
        break;
      }
      case RecordKind::kRecv: {
        const RecvRecord v = as<RecvRecord>(r);
        int32_t peer;
        uint64_t gid;
        if (!world(v.comm, v.source, &peer, &gid)) {
          sink.event(Event::of(r, t));
          break;
        }
        sink.message_end(false, MessageKey{gid, peer, me, v.tag}, t, v.bytes);
        if constexpr (requires { sink.message_record(MessageKey{}, Event{}); })
          sink.message_record(MessageKey{gid, peer, me, v.tag}, Event::of(r, t));
        break;
      }
      case RecordKind::kSendCancel: {
        const SendCancelRecord c = as<SendCancelRecord>(r);
        int32_t peer;
        uint64_t gid;
        if (world(c.comm, c.dest, &peer, &gid)) sink.cancel_send(MessageKey{gid, me, peer, c.tag});
        break;
      }
      case RecordKind::kUserEvent: {
        const UserEventRecord u = as<UserEventRecord>(r);
        const uint32_t site = has_sites ? file.callsite(e.rank, u.site) : 0;
        UserStates::Closed c;
        const UserStates::Fed fed = user_states->feed(file, u.id, t, site, &c);
        if (fed == UserStates::Fed::kEnded) sink.state(c.start, t, c.cat, c.depth, c.site);
        if (fed == UserStates::Fed::kLone) sink.event(Event::of(r, t, site));
        break;
      }
      case RecordKind::kRequestPost:  // only the OTF2 writer uses these
      case RecordKind::kRequestDone:
      case RecordKind::kCounter:  // read through mpe/log_counters.h, not kept as events
        if constexpr (requires { sink.unmodelled(Event{}); }) sink.unmodelled(Event::of(r, t));
        break;
      default:  // collectives, markers, communicator and window creations, RMA: points as logged
        sink.event(Event::of(r, t));
        break;
    }
    sink.span(t, end);
  }
}

// Decodes every chunk and builds the model: states, events, messages paired by the one
// MessageMatcher (mpe/message_matcher.h), with the causality repair
// described in log_reader.cpp when clock sync left backward messages. Cost: ~50 ns per record.
StatusOr<Trace> load_trace(const LogFile& file);
// The same, handing every decoded chunk to `also_feed` too (mpe/chunk_pass.h), so that a caller
// that needs more than the model decodes the file once.
StatusOr<Trace> load_trace(const LogFile& file, const std::vector<ChunkConsumer>& also_feed);

// Causality repair, shared with readers that build their own model (the viewer): a message sent
// at send_time by rank src and received at recv_time by rank dst asks for
// shift[dst] - shift[src] >= send_time - recv_time + 1; need keeps the tightest per rank pair.
void add_causality_constraint(std::map<std::pair<int32_t, int32_t>, int64_t>* need, int32_t src, int32_t dst,
                              int64_t send_time, int64_t recv_time);
// The smallest per-rank shifts (ns, >= 0) meeting the constraints, by Bellman-Ford longest paths
// (at most nranks + 1 rounds; contradictory constraints leave some unmet).
std::vector<int64_t> causality_shifts(const std::map<std::pair<int32_t, int32_t>, int64_t>& need,
                                      uint32_t nranks);

}  // namespace mpe::format
