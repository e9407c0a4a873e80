// `mpe print`: a logfile's events as text, one per line, filterable by rank, time and kind.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "mpe/chunk_pass.h"
#include "mpe/interop.h"
#include "mpe/log_counters.h"
#include "mpe/log_reader.h"
#include "mpe/log_summary.h"
#include "mpe/message_matcher.h"
#include "mpe/records.h"
#include "sorted_lines.h"

namespace mpe::cli {

namespace {

const char* kind_name(format::RecordKind k) {
  switch (k) {
    case format::RecordKind::kState:
      return "state";
    case format::RecordKind::kSend:
      return "send";
    case format::RecordKind::kRecv:
      return "recv";
    case format::RecordKind::kCollective:
      return "coll";
    case format::RecordKind::kMarker:
      return "marker";
    case format::RecordKind::kUserEvent:
      return "event";
    case format::RecordKind::kCommCreate:
      return "comm";
    case format::RecordKind::kSendCancel:
      return "cancel";
    case format::RecordKind::kRequestPost:  // folded into messages; never an event
    case format::RecordKind::kRequestDone:
      return "request";
    case format::RecordKind::kRmaOp:  // folded into RMA transfers ("rma")
    case format::RecordKind::kRmaComplete:
      return "rma";
    case format::RecordKind::kWinCreate:
      return "win";
    case format::RecordKind::kCounter:  // read through mpe/log_counters.h
      return "counter";
  }
  return "?";
}

// What `mpe print` keeps: kinds, ranks (empty: all) and a time window.
struct Filter {
  std::set<std::string> kinds;
  std::set<int> ranks;
  int64_t from, to;

  bool kind(const char* k) const { return kinds.empty() || kinds.count(k); }
  bool rank(int r) const { return ranks.empty() || ranks.count(r); }
  bool time(int64_t t) const { return t >= from && t <= to; }
};

// The kinds of line, in the order the lines of one time and timeline are printed.
enum LinePart : uint32_t { kStateLine, kEventLine, kMessageLine, kRmaLine, kCounterLine };

// " at callsites.c:44 (main)", or nothing for a log without call sites.
std::string at_site(const format::LogFile& file, uint32_t site) {
  return site ? " at " + file.callsite_text(site) : std::string();
}

// The line of an event of (rank, thread); none for the RMA records, which are printed as transfers.
std::optional<std::string> event_text(const format::LogFile& file, uint32_t rank, uint32_t thread,
                                      const format::Event& e) {
  const char* k = kind_name(e.kind);
  char buf[512];
  // An unmatched send or receive: its communicator is unknown.
  auto unmatched = [&](int32_t peer, int32_t tag, uint32_t comm, uint64_t bytes) {
    std::snprintf(buf, sizeof buf, "%lld r%u.t%u %s peer=%d tag=%d comm=%u bytes=%llu (unmatched)",
                  static_cast<long long>(e.time), rank, thread, k, peer, tag, comm,
                  static_cast<unsigned long long>(bytes));
  };
  switch (e.kind) {
    case format::RecordKind::kCollective: {
      const auto c = format::as<format::CollectiveRecord>(e);
      std::snprintf(buf, sizeof buf, "%lld r%u.t%u coll %s root=%d comm=%u bytes=%llu received=%d",
                    static_cast<long long>(e.time), rank, thread, file.category_name(c.cat).c_str(), c.root,
                    c.comm, static_cast<unsigned long long>(c.sent), c.received);
      break;
    }
    case format::RecordKind::kMarker: {
      const auto m = format::as<format::MarkerRecord>(e);
      std::snprintf(buf, sizeof buf, "%lld r%u.t%u marker %s level=%d logging=%s",
                    static_cast<long long>(e.time), rank, thread, file.category_name(m.cat).c_str(), m.level,
                    m.logging_on ? "on" : "off");
      break;
    }
    case format::RecordKind::kUserEvent: {
      const auto u = format::as<format::UserEventRecord>(e);
      std::snprintf(buf, sizeof buf, "%lld r%u.t%u event %s data=%llu%s", static_cast<long long>(e.time),
                    rank, thread, file.category_name(u.id).c_str(), static_cast<unsigned long long>(u.data),
                    at_site(file, e.site).c_str());
      break;
    }
    case format::RecordKind::kCommCreate: {
      const auto c = format::as<format::CommCreateRecord>(e);
      std::snprintf(buf, sizeof buf, "%lld r%u.t%u comm index=%u size=%d", static_cast<long long>(e.time),
                    rank, thread, c.comm, c.size);
      break;
    }
    case format::RecordKind::kWinCreate: {
      const auto w = format::as<format::WinCreateRecord>(e);
      std::snprintf(buf, sizeof buf, "%lld r%u.t%u win %s index=%u comm=%u ordinal=%u bytes=%llu",
                    static_cast<long long>(e.time), rank, thread, file.category_name(w.cat).c_str(), w.window,
                    w.comm, w.ordinal, static_cast<unsigned long long>(w.size));
      break;
    }
    case format::RecordKind::kRmaOp:  // printed below, as transfers
    case format::RecordKind::kRmaComplete:
      return std::nullopt;
    case format::RecordKind::kSend: {
      const auto s = format::as<format::SendRecord>(e);
      unmatched(s.dest, s.tag, s.comm, s.bytes);
      break;
    }
    case format::RecordKind::kRecv: {
      const auto v = format::as<format::RecvRecord>(e);
      unmatched(v.source, v.tag, v.comm, v.bytes);
      break;
    }
    default:  // a kind this reader does not know (a damaged log, or a newer writer's)
      std::snprintf(buf, sizeof buf, "%lld r%u.t%u %s kind=%d (unknown)", static_cast<long long>(e.time),
                    rank, thread, k, static_cast<int>(e.kind));
      break;
  }
  return std::string(buf);
}

// A message end waiting in the matcher for its partner.
struct PrintEnd {
  int64_t time;  // as logged; shifted when printed
  uint32_t timeline;
  uint64_t bytes;
};

// The states, events and matched messages of every timeline, in one time-ordered pass that holds
// the message ends in flight, not the records (interpret_records and the ReplayMessageMatcher
// are load_trace()'s, so the lines are those the in-memory model gave). Messages are printed at
// their send; a rank filter keeps those it sends or receives. Times are on the causality
// repair's shifted clocks, as load_trace() gives them.
class PrintPass {
 public:
  PrintPass(const format::LogFile& file, const Filter& want, const std::vector<int64_t>& shift,
            SortedLines& out)
      : file_(file),
        want_(want),
        shift_(shift),
        out_(out),
        still_to_come_(format::starts_still_to_come(file, order_)) {
    for (const format::IndexEntry& e : file.index()) timeline_of_.try_emplace({e.rank, e.thread}, 0u);
    uint32_t tl = 0;
    for (auto& [key, number] : timeline_of_) {
      number = tl++;
      timelines_.push_back(key);
    }
    user_states_.resize(tl);
    seq_.assign(tl, 0);
  }

  // What the matcher calls for each pair it makes (defined first: its type is deduced).
  auto on_pair() {
    return
        [this](const format::MessageKey& key, const PrintEnd& s, const PrintEnd& r) { message(key, s, r); };
  }
  const std::vector<size_t>& order() const { return order_; }
  // (rank, thread) of timeline tl, and back.
  std::pair<uint32_t, uint32_t> timeline(uint32_t tl) const { return timelines_.at(tl); }
  uint32_t timeline_of(uint32_t rank, uint32_t thread) const {
    const auto it = timeline_of_.find({rank, thread});
    return it == timeline_of_.end() ? 0u : it->second;
  }
  // The first failure to store a line: the pass stops at its next chunk.
  const Status& status() const { return status_; }

  void consume(const format::Chunk& chunk) {
    const format::IndexEntry& e = chunk.entry;
    const uint32_t tl = timeline_of_.at({e.rank, e.thread});
    Sink sink{*this, e.rank, e.thread, tl, uint64_t{chunk.index} << 32};
    format::interpret_records(file_, e, chunk.records, chunk.count, &user_states_[tl], sink);
    // Paired as seldom as the summary pairs them (SummaryOptions::ends_per_settle), so that a
    // cancel logged a chunk after its send still finds it unpaired, as load_trace() would.
    ++consumed_;
    if (since_settle_ < kEndsPerSettle) return;
    since_settle_ = 0;
    matcher_.settle(still_to_come_[consumed_], on_pair());
  }
  void finish() {
    matcher_.finish(on_pair(), [](const format::MessageKey&, size_t, size_t) {});
  }

 private:
  struct Sink {
    PrintPass& p;
    uint32_t rank, thread, timeline;
    uint64_t chunk_seq;  // chunk index << 32; a record's seq adds its position
    uint32_t pos = 0;

    void state(int64_t start, int64_t end, uint32_t cat, uint32_t depth, uint32_t site) {
      const int64_t d = p.shift_of(rank);
      start = format::saturating_add(start, d);
      end = format::saturating_add(end, d);
      const uint64_t seq = p.seq_[timeline]++;
      if (!p.states_ || !p.want_.rank(static_cast<int>(rank)) || !p.want_.time(start)) return;
      char buf[512];
      std::snprintf(buf, sizeof buf, "%lld r%u.t%u state %s dur=%lld depth=%u", static_cast<long long>(start),
                    rank, thread, p.file_.category_name(cat).c_str(), static_cast<long long>(end - start),
                    depth);
      p.add({start, timeline, kStateLine, depth, 0, seq}, buf + at_site(p.file_, site));
    }
    void event(const format::Event& logged) {
      format::Event e = logged;
      e.time = format::saturating_add(e.time, p.shift_of(rank));
      const uint64_t seq = p.seq_[timeline]++;
      if (!p.want_.kind(kind_name(e.kind)) || !p.want_.rank(static_cast<int>(rank)) || !p.want_.time(e.time))
        return;
      if (auto text = event_text(p.file_, rank, thread, e))
        p.add({e.time, timeline, kEventLine, 0, 0, seq}, *text);
    }
    void message_end(bool send, const format::MessageKey& key, int64_t t, uint64_t bytes) {
      if (!p.messages_) return;
      p.matcher_.add(send ? format::MessageSide::kSend : format::MessageSide::kRecv, key, chunk_seq | pos,
                     PrintEnd{t, timeline, bytes});
      ++p.since_settle_;
    }
    void cancel_send(const format::MessageKey& key) {
      if (p.messages_) p.matcher_.cancel_latest_send(key, chunk_seq | pos);
    }
    void span(int64_t, int64_t) { ++pos; }
  };

  int64_t shift_of(int64_t rank) const {
    return rank >= 0 && static_cast<size_t>(rank) < shift_.size() ? shift_[static_cast<size_t>(rank)] : 0;
  }
  void add(const LineKey& key, std::string_view text) {
    if (status_.ok()) status_ = out_.add(key, text);
  }
  // A matched message: the bytes are the send's, as load_trace() keeps them.
  void message(const format::MessageKey& key, const PrintEnd& s, const PrintEnd& r) {
    const int32_t src = std::get<1>(key), dst = std::get<2>(key);
    const int64_t sent = format::saturating_add(s.time, shift_of(src));
    const int64_t received = format::saturating_add(r.time, shift_of(dst));
    if ((!want_.ranks.empty() && !want_.ranks.count(src) && !want_.ranks.count(dst)) || !want_.time(sent))
      return;
    const auto [sr, st] = timelines_[s.timeline];
    const auto [rr, rt] = timelines_[r.timeline];
    char buf[512];
    std::snprintf(buf, sizeof buf, "%lld r%u.t%u msg -> r%u.t%u recv=%lld tag=%d bytes=%llu comm=%llx",
                  static_cast<long long>(sent), sr, st, rr, rt, static_cast<long long>(received),
                  std::get<3>(key), static_cast<unsigned long long>(s.bytes),
                  static_cast<unsigned long long>(std::get<0>(key)));
    add({sent, s.timeline, kMessageLine, r.timeline, received, 0}, buf);
  }

  const format::LogFile& file_;
  const Filter& want_;
  const bool states_ = want_.kind("state"), messages_ = want_.kind("msg");  // asked once, not per record
  const std::vector<int64_t>& shift_;
  SortedLines& out_;
  const std::vector<size_t> order_ = format::chunks_by_start(file_);
  const std::vector<int64_t> still_to_come_;
  static constexpr size_t kEndsPerSettle = format::SummaryOptions{}.ends_per_settle;
  size_t consumed_ = 0, since_settle_ = 0;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> timeline_of_;  // numbered by (rank, thread)
  std::vector<std::pair<uint32_t, uint32_t>> timelines_;
  std::vector<format::UserStates> user_states_;
  std::vector<uint64_t> seq_;  // per timeline: its states and events so far
  format::ReplayMessageMatcher<PrintEnd> matcher_;
  Status status_;
};

// The one-sided transfers, at their start; a rank filter keeps those it issues or targets.
Status add_rma_lines(const format::LogFile& file, const format::RmaModel& rma, const PrintPass& pass,
                     const Filter& want, SortedLines& out) {
  if (!want.kind("rma")) return Status();
  char buf[512];
  for (size_t i = 0; i < rma.transfers.size(); ++i) {
    const format::RmaTransfer& x = rma.transfers[i];
    const auto [rank, thread] = pass.timeline(x.origin_timeline);
    if (!(want.ranks.empty() || want.ranks.count(static_cast<int>(rank)) || want.ranks.count(x.target)) ||
        !want.time(x.start))
      continue;
    const std::string done =
        x.complete >= 0 ? std::to_string(x.complete) + " by " + file.category_name(x.complete_cat) : "never";
    std::snprintf(
        buf, sizeof buf, "%lld r%u.t%u rma %s -> r%d window=%u sent=%llu received=%llu completed=%s (%s)",
        static_cast<long long>(x.start), rank, thread, format::rma_kind_name(x.kind), x.target, x.window,
        static_cast<unsigned long long>(x.sent), static_cast<unsigned long long>(x.received), done.c_str(),
        file.category_name(x.cat).c_str());
    MPE_RETURN_IF_ERROR(out.add({x.start, x.origin_timeline, kRmaLine, 0, 0, i}, buf));
  }
  return Status();
}

// The counter samples (MPI_T performance variables), read rank by rank.
Status add_counter_lines(const format::LogFile& file, const PrintPass& pass, const Filter& want,
                         SortedLines& out) {
  if (!want.kind("counter")) return Status();
  char buf[512];
  const format::Counters counters(file);
  uint64_t seq = 0;
  Status stored;
  for (uint32_t rank = 0; rank < file.definitions().world_size && !counters.all().empty(); ++rank) {
    if (!want.rank(static_cast<int>(rank))) continue;
    const Status s =
        format::for_each_counter_sample(file, counters, rank, [&](const format::CounterSample& x) {
          if (!want.time(x.time) || !stored.ok()) return;
          const format::Counter* c = counters.counter(x.counter);
          const bool delta = c && c->def.semantics == PvarSemantics::kDelta;
          std::string where = x.comm == format::kUnknownComm ? "" : " comm=" + std::to_string(x.comm);
          if (x.max_peer >= 0) where += " max_peer=" + std::to_string(x.max_peer);
          if (c && c->def.semantics == PvarSemantics::kWatermark)
            where += " changes=" + std::to_string(x.changes);
          std::snprintf(buf, sizeof buf, "%lld r%u.t%u counter %s %s=%.17g%s", static_cast<long long>(x.time),
                        rank, x.thread, c ? c->def.name.c_str() : "?", delta ? "delta" : "value", x.value,
                        where.c_str());
          stored = out.add({x.time, pass.timeline_of(rank, x.thread), kCounterLine, 0, 0, seq++}, buf);
        });
    MPE_RETURN_IF_ERROR(s);
    MPE_RETURN_IF_ERROR(stored);
  }
  return Status();
}

}  // namespace

// The definitions' storage: whether they grow linearly with the ranks (docs/FORMAT.md, v5).
Status print_definitions(const std::string& path) {
  auto file = format::LogFile::open(path);
  if (!file.ok()) return file.status();
  const format::Definitions& d = file->definitions();
  const auto& s = d.storage;
  const double ranks = std::max<double>(1, d.world_size);
  std::printf("format version %u, %u ranks\n", file->version(), d.world_size);
  std::printf("definitions: %u chunk(s), %llu bytes on disk (%.1f per rank), %llu decoded (%.1f per rank)\n",
              s.chunks, static_cast<unsigned long long>(s.disk_bytes),
              static_cast<double>(s.disk_bytes) / ranks, static_cast<unsigned long long>(s.decoded_bytes),
              static_cast<double>(s.decoded_bytes) / ranks);
  std::printf("groups stored: %llu with %llu members in all (%.2f per rank)%s\n",
              static_cast<unsigned long long>(s.groups), static_cast<unsigned long long>(s.members),
              static_cast<double>(s.members) / ranks,
              file->version() >= format::kFirstGroupTableVersion
                  ? "; MPI_COMM_WORLD's and MPI_COMM_SELF's implied"
                  : "; every rank's communicators inline");
  return Status();
}

void add_print_command(CLI::App& app) {
  struct Options {
    std::string file;
    std::vector<int> ranks;
    int64_t from = INT64_MIN, to = INT64_MAX;
    std::vector<std::string> kinds;
    bool definitions = false;
    size_t sort_memory = size_t{256} << 20;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("print", "Print a logfile's events as text");
  cmd->add_option("file", opts->file, "the .mpelog logfile, or an OTF2 archive")->required();
  cmd->add_option("--rank", opts->ranks, "only these ranks (repeatable)");
  cmd->add_option("--from", opts->from, "only from this time (ns since the start)");
  cmd->add_option("--to", opts->to, "only up to this time (ns since the start)");
  cmd->add_option(
      "--kind", opts->kinds,
      "only these kinds: state, msg, coll, marker, event, comm, send, recv, rma, win, counter (repeatable)");
  cmd->add_flag(
      "--definitions", opts->definitions,
      "print how the run's definitions are stored (bytes per rank, groups, members) instead of events");
  cmd->add_option(
      "--sort-memory", opts->sort_memory,
      "bytes of lines held before they are sorted into a temporary file in $TMPDIR (default 256 MiB)");
  set_first_process_action(cmd, [opts]() -> Status {
    if (opts->definitions) return print_definitions(opts->file);
    auto opened = interop::OpenedLog::open(opts->file);
    if (!opened.ok()) return opened.status();
    const format::LogFile& file = (*opened)->file();
    const Filter want{{opts->kinds.begin(), opts->kinds.end()},
                      {opts->ranks.begin(), opts->ranks.end()},
                      opts->from,
                      opts->to};
    // Two streaming passes: the summary gives the causality repair's shifts and the one-sided
    // transfers (matched at the end, as load_trace() matches them); the second makes the lines.
    // (Making the lines in the summary's own decode was no faster, the consumer thread being the
    // bottleneck, and held both passes' state at once: 457 MiB against 405 at 20 M records.)
    // A damaged chunk's error names the file, as the other commands' do.
    auto named = [&](const Status& s) { return Status(s.code(), opts->file + ": " + s.message()); };
    auto summary = format::summarize(file);
    if (!summary.ok()) return named(summary.status());
    SortedLines lines(opts->sort_memory);
    PrintPass pass(file, want, summary->causality_shift_ns, lines);
    format::ChunkPassOptions options;
    options.decoders = 0;
    options.order = &pass.order();
    options.what = "print";
    options.keep_going = [&pass](size_t) { return pass.status().ok(); };
    const Status decoded =
        format::run_chunk_pass(file, {[&pass](const format::Chunk& c) { pass.consume(c); }}, options);
    MPE_RETURN_IF_ERROR(pass.status());
    if (!decoded.ok()) return named(decoded);
    pass.finish();
    MPE_RETURN_IF_ERROR(pass.status());
    MPE_RETURN_IF_ERROR(add_rma_lines(file, summary->rma, pass, want, lines));
    MPE_RETURN_IF_ERROR(add_counter_lines(file, pass, want, lines));
    return lines.write_to(stdout);
  });
}

}  // namespace mpe::cli
