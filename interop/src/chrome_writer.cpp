// .mpelog -> Chrome/Perfetto JSON (the "Trace Event Format"), streamed: one chunk at a time.
// Message arrows need no matching pass: a send and a receive get the same flow id when they
// have the same key (communicator, source, destination, tag) and the same ordinal within it,
// which is the pairing MessageMatcher makes (mpe/message_matcher.h): the k-th send of a key in
// time order meets its k-th receive. On a rank with one thread, logged order is time order, so
// the ordinals are counted as the ends stream by, without holding them. A cancelled send takes no
// ordinal: its cancel comes later on its timeline and cancels the latest send of its key, so the
// latest send of each key is held back until the next one on that key, or the timeline's end.
// On a rank whose several threads log, a key's ends come from timelines streamed one after the
// other, not in time order: for those ranks only, a first pass puts each key's ends in the
// matcher's order (ThreadedOrdinals).
// Memory: one chunk, one counter per key, one held send per key of a timeline, one user-state
// stack per thread; and ~100 bytes per message end of the ranks with several threads.
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "mpe/interop.h"
#include "mpe/log_reader.h"
#include "mpe/message_matcher.h"
#include "mpe/records.h"

namespace mpe::interop {

namespace {

using format::RecordKind;
using Json = nlohmann::ordered_json;  // keeps the keys in the order written

// Microseconds, the format's unit; a double keeps every ns exactly below 2^53 ns (104 days).
double micros(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

// A flow id both ends compute alone; below 2^53 so JavaScript keeps it exact.
uint64_t flow_id(const format::MessageKey& k, uint64_t ordinal) {
  const uint64_t words[5] = {std::get<0>(k), static_cast<uint64_t>(static_cast<uint32_t>(std::get<1>(k))),
                             static_cast<uint64_t>(static_cast<uint32_t>(std::get<2>(k))),
                             static_cast<uint64_t>(static_cast<uint32_t>(std::get<3>(k))), ordinal};
  const uint64_t h = format::hash64(words, sizeof words) & ((uint64_t{1} << 53) - 1);
  return h ? h : 1;
}

// JSON text of v on one line; bytes that are not UTF-8 (a host or program name) become U+FFFD
// instead of an exception.
std::string dump(const Json& v) { return v.dump(-1, ' ', false, Json::error_handler_t::replace); }

// The traceEvents array, one event per line: each event is built, written and forgotten, so
// memory does not grow with the log.
class EventStream {
 public:
  explicit EventStream(FILE* f) : f_(f) {}
  void write(const Json& event) {
    const std::string text = dump(event);
    std::fputs(first_ ? "\n" : ",\n", f_);
    std::fwrite(text.data(), 1, text.size(), f_);
    first_ = false;
  }

 private:
  FILE* f_;
  bool first_ = true;
};

// The ordinals of the message ends of ranks with several threads, in the matcher's order: each
// key's sends (receives) by time, ties in logged order, a cancel withdrawing the latest send of
// its key logged before it. An end is known by its timeline's thread and its place among that
// timeline's ends of the same key and side.
class ThreadedOrdinals {
 public:
  Status build(const format::LogFile& log) {
    std::map<uint32_t, std::set<uint32_t>> threads;
    for (const format::IndexEntry& e : log.index()) threads[e.rank].insert(e.thread);
    for (const auto& [rank, of_rank] : threads)
      if (of_rank.size() > 1) ranks_.insert(rank);
    if (ranks_.empty()) return Status();
    Collector collect;
    std::map<std::pair<uint32_t, uint32_t>, format::UserStates> user_states;
    for (size_t i = 0; i < log.index().size(); ++i) {
      const format::IndexEntry& e = log.index()[i];
      if (!covers(e.rank)) continue;
      auto recs = log.read_chunk(i);
      if (!recs.ok()) return recs.status();
      if (e.rank != collect.rank || e.thread != collect.thread) collect.seq.clear();  // a new timeline
      collect.rank = e.rank;
      collect.thread = e.thread;
      format::interpret_records(log, e, recs->data(), recs->size(), &user_states[{e.rank, e.thread}],
                                collect);
    }
    const format::MessageMatcher<End> matcher;
    for (auto& [side, ends] : collect.sides) {
      matcher.order(ends, side.second ? format::MessageSide::kSend : format::MessageSide::kRecv);
      for (size_t k = 0; k < ends.size(); ++k)
        ordinal_[{ends[k].rank, ends[k].thread, side.first, side.second, ends[k].seq}] = k;
    }
    return Status();
  }
  bool covers(uint32_t rank) const { return ranks_.count(rank) != 0; }
  // The ordinal of the seq-th end of `key` on the `send` side of timeline (rank, thread); none for
  // a withdrawn send.
  std::optional<uint64_t> ordinal(uint32_t rank, uint32_t thread, const format::MessageKey& key, bool send,
                                  uint64_t seq) const {
    const auto it = ordinal_.find({rank, thread, key, send, seq});
    if (it == ordinal_.end()) return std::nullopt;
    return it->second;
  }

 private:
  struct End {
    int64_t time;
    uint32_t rank, thread;
    uint64_t seq;
  };
  using Side = std::pair<format::MessageKey, bool>;  // a key's sends (true) or receives
  // The first pass's sink: every end of a covered rank, per key and side, in logged order.
  struct Collector {
    std::map<Side, std::vector<End>> sides;
    std::map<Side, uint64_t> seq;  // the current timeline's ends per key and side
    uint32_t rank = UINT32_MAX, thread = UINT32_MAX;
    void message_end(bool send, const format::MessageKey& key, int64_t t, uint64_t) {
      sides[{key, send}].push_back(End{t, rank, thread, seq[{key, send}]++});
    }
    void cancel_send(const format::MessageKey& key) {
      auto it = sides.find({key, true});
      if (it != sides.end() && !it->second.empty()) it->second.pop_back();
    }
    void state(int64_t, int64_t, uint32_t, uint32_t, uint32_t) {}
    void event(const format::Event&) {}
    void span(int64_t, int64_t) {}
  };
  std::set<uint32_t> ranks_;
  std::map<std::tuple<uint32_t, uint32_t, format::MessageKey, bool, uint64_t>, uint64_t> ordinal_;
};

// Writes what the reader makes of a chunk's records (format::interpret_records) as it comes.
// Slices and flows, nearly every event of a log, reuse one object each: their keys are made
// once and only the values change, which keeps the allocator out of the loop (~3x faster).
struct ChromeSink {
  const format::LogFile& log;
  EventStream& events;
  ChromeCounts counts;
  std::map<format::MessageKey, uint64_t> sends, recvs;  // next ordinal per key, at each end
  struct FlowEnd {
    format::MessageKey key;
    uint64_t ordinal;
    int64_t time;
    uint64_t bytes;
  };
  std::map<format::MessageKey, FlowEnd> held_sends;  // the timeline's latest send per key, unwritten
  const ThreadedOrdinals& threaded;
  std::map<std::pair<format::MessageKey, bool>, uint64_t>
      timeline_ends;              // on a threaded rank, per key and side
  uint32_t rank = 0, thread = 0;  // of the chunk being written
  Json slice = {{"ph", "X"}, {"pid", 0}, {"tid", 0}, {"ts", 0.0}, {"dur", 0.0}, {"name", ""}, {"cat", ""}};
  Json flow_start = flow("s");
  Json flow_end = flow("f");

  std::map<format::MessageKey, uint64_t>& sends_or_recvs(bool send) { return send ? sends : recvs; }
  void write_flow(bool send, const FlowEnd& end) {
    Json& f = send ? flow_start : flow_end;
    f["id"] = flow_id(end.key, end.ordinal);
    f["pid"] = rank;
    f["tid"] = thread;
    f["ts"] = micros(end.time);
    f["args"]["tag"] = std::get<3>(end.key);
    f["args"]["bytes"] = end.bytes;
    events.write(f);
    ++(send ? counts.flow_starts : counts.flow_ends);
  }

  static Json flow(const char* ph) {
    Json f = {{"ph", ph}};
    if (ph[0] == 'f') f["bp"] = "e";  // bound to the enclosing slice
    for (const char* key : {"id", "pid", "tid"}) f[key] = 0;
    f["ts"] = 0.0;
    f["name"] = "message";
    f["cat"] = "message";
    f["args"] = {{"tag", 0}, {"bytes", 0}};
    return f;
  }
  void instant(int64_t t, const std::string& name, const char* cat, Json args) {
    Json i = {{"ph", "i"},       {"s", "t"},     {"pid", rank}, {"tid", thread},
              {"ts", micros(t)}, {"name", name}, {"cat", cat},  {"args", std::move(args)}};
    events.write(i);
    ++counts.instants;
  }
  void state(int64_t start, int64_t end, uint32_t cat, uint32_t /*depth*/, uint32_t site) {
    // Perfetto shows a slice's args when it is selected: the call site, as the viewer does.
    if (site)
      slice["args"]["callsite"] = log.callsite_text(site);
    else if (slice.contains("args"))
      slice.erase("args");
    slice["pid"] = rank;
    slice["tid"] = thread;
    slice["ts"] = micros(start);
    slice["dur"] = micros(end - start);
    slice["name"].get_ref<std::string&>() = log.category_name(cat);
    slice["cat"].get_ref<std::string&>() = cat < format::kUserCategoryBase ? "MPI" : "user";
    events.write(slice);
    ++counts.slices;
  }
  void message_end(bool send, const format::MessageKey& key, int64_t t, uint64_t bytes) {
    if (threaded.covers(rank)) {
      const auto ordinal = threaded.ordinal(rank, thread, key, send, timeline_ends[{key, send}]++);
      if (ordinal) write_flow(send, FlowEnd{key, *ordinal, t, bytes});
      return;
    }
    const FlowEnd end{key, sends_or_recvs(send)[key]++, t, bytes};
    if (!send) return write_flow(false, end);
    auto [held, fresh] = held_sends.try_emplace(key, end);
    if (fresh) return;
    write_flow(true, held->second);  // no cancel can reach it now
    held->second = end;
  }
  // Drops the latest send of key when it is still held; its ordinal goes to the next send.
  void cancel_send(const format::MessageKey& key) {
    if (threaded.covers(rank)) return;  // withdrawn by the first pass: it has no ordinal
    auto held = held_sends.find(key);
    if (held == held_sends.end()) return;  // written already (a second cancel in a row): it stays
    held_sends.erase(held);
    --sends[key];
  }
  // Writes the held sends: at the end of a timeline, whose cancels have all been seen.
  void flush_sends() {
    for (const auto& [key, end] : held_sends) write_flow(true, end);
    held_sends.clear();
    timeline_ends.clear();
  }
  void event(const format::Event& e) {
    switch (e.kind) {
      case RecordKind::kCollective: {
        const auto c = format::as<format::CollectiveRecord>(e);
        instant(
            e.time, log.category_name(c.cat), "collective",
            {{"root", c.root}, {"bytes_sent", c.sent}, {"bytes_received", c.received > 0 ? c.received : 0}});
        break;
      }
      case RecordKind::kMarker: {
        const auto m = format::as<format::MarkerRecord>(e);
        instant(e.time, "MPI_Pcontrol", "marker", {{"level", m.level}, {"logging", m.logging_on}});
        break;
      }
      case RecordKind::kCommCreate: {
        const auto c = format::as<format::CommCreateRecord>(e);
        instant(e.time, "communicator created", "comm", {{"index", c.comm}, {"size", c.size}});
        break;
      }
      case RecordKind::kUserEvent: {  // one that neither begins nor ends a user state
        const auto u = format::as<format::UserEventRecord>(e);
        instant(e.time, log.category_name(u.id), "user", {{"data", u.data}});
        break;
      }
      default:  // a send or receive on an unknown communicator: no arrow
        break;
    }
  }
  void span(int64_t, int64_t) {}
};

}  // namespace

Status mpelog_to_chrome(const std::string& log_path, const std::string& out_json, ChromeCounts* counts_out) {
  auto file = format::LogFile::open(log_path);
  if (!file.ok()) return Status(file.status().code(), log_path + ": " + file.status().message());
  const format::LogFile& log = *file;
  const format::Definitions& d = log.definitions();
  AtomicOutput out(out_json);
  std::vector<char> buffer(1 << 20);  // declared before the file: it outlives the fclose
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(out.tmp_path().c_str(), "w"), std::fclose);
  if (!f) return Status(StatusCode::kIoError, "cannot create " + out.tmp_path());
  std::setvbuf(f.get(), buffer.data(), _IOFBF, buffer.size());
  // The document is {"displayTimeUnit":..., "otherData":..., "traceEvents":[...]}; only the
  // array is streamed, so the text around it is written here and every value by nlohmann.
  const Json other{{"producer", "mpe-tools"}, {"program", d.program}};
  std::fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":", f.get());
  std::fputs(dump(other).c_str(), f.get());
  std::fputs(",\"traceEvents\":[", f.get());
  EventStream events(f.get());

  // Names: one process per rank, one thread per thread.
  for (const auto& rm : d.ranks) {
    const std::string host = rm.host.empty() ? "" : " (" + rm.host + ")";
    events.write({{"ph", "M"},
                  {"name", "process_name"},
                  {"pid", rm.rank},
                  {"tid", 0},
                  {"args", {{"name", "rank " + std::to_string(rm.rank) + host}}}});
    events.write({{"ph", "M"},
                  {"name", "process_sort_index"},
                  {"pid", rm.rank},
                  {"tid", 0},
                  {"args", {{"sort_index", rm.rank}}}});
    for (const auto& t : rm.threads)
      events.write(
          {{"ph", "M"},
           {"name", "thread_name"},
           {"pid", rm.rank},
           {"tid", t.index},
           {"args",
            {{"name", "thread " + std::to_string(t.index) + " (tid " + std::to_string(t.tid) + ")"}}}});
  }

  ThreadedOrdinals threaded;
  if (Status s = threaded.build(log); !s.ok()) return s;
  ChromeSink sink{log, events, {}, {}, {}, {}, threaded, {}};
  // One user-state pairing per thread: chunks of different threads may interleave in the index.
  std::map<std::pair<uint32_t, uint32_t>, format::UserStates> user_states;
  Progress progress("writing Chrome JSON", log.index().size());
  for (size_t i = 0; i < log.index().size(); ++i) {
    const format::IndexEntry& e = log.index()[i];
    auto recs = log.read_chunk(i);
    if (!recs.ok()) return recs.status();
    if (e.rank != sink.rank || e.thread != sink.thread) sink.flush_sends();  // the timeline ended
    sink.rank = e.rank;
    sink.thread = e.thread;
    format::interpret_records(log, e, recs->data(), recs->size(), &user_states[{e.rank, e.thread}], sink);
    progress.advance();
  }
  sink.flush_sends();
  for (auto& [where, states] : user_states) {  // user states begun and never ended: instants
    sink.rank = where.first;
    sink.thread = where.second;
    for (const auto& [cat, t] : states.take_open())
      sink.instant(t, log.category_name(cat), "user", Json::object());
  }
  std::fputs("\n]}\n", f.get());
  if (std::fflush(f.get()) != 0 || std::ferror(f.get()))
    return Status(StatusCode::kIoError, "writing " + out.tmp_path() + " failed");
  if (std::fclose(f.release()) != 0)
    return Status(StatusCode::kIoError, "closing " + out.tmp_path() + " failed");
  if (counts_out) *counts_out = sink.counts;
  return out.commit();
}

}  // namespace mpe::interop
