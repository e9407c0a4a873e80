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
#include "mpe/log_counters.h"
#include "mpe/log_reader.h"
#include "mpe/records.h"

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

// One printed line: sorted by time, then by timeline.
struct Line {
  int64_t t;
  uint32_t tl;
  std::string text;
};

// " at callsites.c:44 (main)", or nothing for a log without call sites.
std::string at_site(const format::LogFile& file, uint32_t site) {
  return site ? " at " + file.callsite_text(site) : std::string();
}

// The line of an event of timeline T; none for the RMA records, which are printed as transfers.
std::optional<std::string> event_text(const format::LogFile& file, const format::Timeline& T,
                                      const format::Event& e) {
  const char* k = kind_name(e.kind);
  char buf[512];
  // An unmatched send or receive: its communicator is unknown.
  auto unmatched = [&](int32_t peer, int32_t tag, uint32_t comm, uint64_t bytes) {
    std::snprintf(buf, sizeof buf, "%lld r%u.t%u %s peer=%d tag=%d comm=%u bytes=%llu (unmatched)",
                  static_cast<long long>(e.time), T.rank, T.thread, k, peer, tag, comm,
                  static_cast<unsigned long long>(bytes));
  };
  switch (e.kind) {
    case format::RecordKind::kCollective: {
      const auto c = format::as<format::CollectiveRecord>(e);
      std::snprintf(buf, sizeof buf, "%lld r%u.t%u coll %s root=%d comm=%u bytes=%llu received=%d",
                    static_cast<long long>(e.time), T.rank, T.thread, file.category_name(c.cat).c_str(),
                    c.root, c.comm, static_cast<unsigned long long>(c.sent), c.received);
      break;
    }
    case format::RecordKind::kMarker: {
      const auto m = format::as<format::MarkerRecord>(e);
      std::snprintf(buf, sizeof buf, "%lld r%u.t%u marker %s level=%d logging=%s",
                    static_cast<long long>(e.time), T.rank, T.thread, file.category_name(m.cat).c_str(),
                    m.level, m.logging_on ? "on" : "off");
      break;
    }
    case format::RecordKind::kUserEvent: {
      const auto u = format::as<format::UserEventRecord>(e);
      std::snprintf(buf, sizeof buf, "%lld r%u.t%u event %s data=%llu%s", static_cast<long long>(e.time),
                    T.rank, T.thread, file.category_name(u.id).c_str(),
                    static_cast<unsigned long long>(u.data), at_site(file, e.site).c_str());
      break;
    }
    case format::RecordKind::kCommCreate: {
      const auto c = format::as<format::CommCreateRecord>(e);
      std::snprintf(buf, sizeof buf, "%lld r%u.t%u comm index=%u size=%d", static_cast<long long>(e.time),
                    T.rank, T.thread, c.comm, c.size);
      break;
    }
    case format::RecordKind::kWinCreate: {
      const auto w = format::as<format::WinCreateRecord>(e);
      std::snprintf(buf, sizeof buf, "%lld r%u.t%u win %s index=%u comm=%u ordinal=%u bytes=%llu",
                    static_cast<long long>(e.time), T.rank, T.thread, file.category_name(w.cat).c_str(),
                    w.window, w.comm, w.ordinal, static_cast<unsigned long long>(w.size));
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
                    T.rank, T.thread, k, static_cast<int>(e.kind));
      break;
  }
  return std::string(buf);
}

// The states and events of every timeline.
void add_timeline_lines(const format::LogFile& file, const format::Trace& tr, const Filter& want,
                        std::vector<Line>& lines) {
  char buf[512];
  for (uint32_t i = 0; i < tr.timelines.size(); ++i) {
    const auto& T = tr.timelines[i];
    for (const auto& s : T.states)
      if (want.kind("state") && want.rank(static_cast<int>(T.rank)) && want.time(s.start)) {
        std::snprintf(buf, sizeof buf, "%lld r%u.t%u state %s dur=%lld depth=%u",
                      static_cast<long long>(s.start), T.rank, T.thread, file.category_name(s.cat).c_str(),
                      static_cast<long long>(s.end - s.start), s.depth);
        lines.push_back({s.start, i, buf + at_site(file, s.site)});
      }
    for (const auto& e : T.events) {
      if (!want.kind(kind_name(e.kind)) || !want.rank(static_cast<int>(T.rank)) || !want.time(e.time))
        continue;
      if (auto text = event_text(file, T, e)) lines.push_back({e.time, i, std::move(*text)});
    }
  }
}

// The matched messages, at their send; a rank filter keeps those it sends or receives.
void add_message_lines(const format::Trace& tr, const Filter& want, std::vector<Line>& lines) {
  char buf[512];
  for (const auto& m : tr.messages) {
    const auto& S = tr.timelines[m.send_timeline];
    const auto& R = tr.timelines[m.recv_timeline];
    if (want.kind("msg") && (want.ranks.empty() || want.ranks.count(m.src) || want.ranks.count(m.dst)) &&
        want.time(m.send_time)) {
      std::snprintf(buf, sizeof buf, "%lld r%u.t%u msg -> r%u.t%u recv=%lld tag=%d bytes=%llu comm=%llx",
                    static_cast<long long>(m.send_time), S.rank, S.thread, R.rank, R.thread,
                    static_cast<long long>(m.recv_time), m.tag, static_cast<unsigned long long>(m.bytes),
                    static_cast<unsigned long long>(m.comm));
      lines.push_back({m.send_time, m.send_timeline, buf});
    }
  }
}

// The one-sided transfers, at their start; a rank filter keeps those it issues or targets.
void add_rma_lines(const format::LogFile& file, const format::Trace& tr, const Filter& want,
                   std::vector<Line>& lines) {
  char buf[512];
  for (const auto& x : tr.rma.transfers) {
    const auto& O = tr.timelines[x.origin_timeline];
    if (!want.kind("rma") ||
        !(want.ranks.empty() || want.ranks.count(static_cast<int>(O.rank)) || want.ranks.count(x.target)) ||
        !want.time(x.start))
      continue;
    const std::string done =
        x.complete >= 0 ? std::to_string(x.complete) + " by " + file.category_name(x.complete_cat) : "never";
    std::snprintf(
        buf, sizeof buf, "%lld r%u.t%u rma %s -> r%d window=%u sent=%llu received=%llu completed=%s (%s)",
        static_cast<long long>(x.start), O.rank, O.thread, format::rma_kind_name(x.kind), x.target, x.window,
        static_cast<unsigned long long>(x.sent), static_cast<unsigned long long>(x.received), done.c_str(),
        file.category_name(x.cat).c_str());
    lines.push_back({x.start, x.origin_timeline, buf});
  }
}

// The counter samples (MPI_T performance variables), read rank by rank.
Status add_counter_lines(const format::LogFile& file, const format::Trace& tr, const Filter& want,
                         std::vector<Line>& lines) {
  if (!want.kind("counter")) return Status();
  char buf[512];
  const format::Counters counters(file);
  for (uint32_t rank = 0; rank < file.definitions().world_size && !counters.all().empty(); ++rank) {
    if (!want.rank(static_cast<int>(rank))) continue;
    const Status s =
        format::for_each_counter_sample(file, counters, rank, [&](const format::CounterSample& x) {
          if (!want.time(x.time)) return;
          const format::Counter* c = counters.counter(x.counter);
          const bool delta = c && c->def.semantics == PvarSemantics::kDelta;
          std::string where = x.comm == format::kUnknownComm ? "" : " comm=" + std::to_string(x.comm);
          if (x.max_peer >= 0) where += " max_peer=" + std::to_string(x.max_peer);
          if (c && c->def.semantics == PvarSemantics::kWatermark)
            where += " changes=" + std::to_string(x.changes);
          std::snprintf(buf, sizeof buf, "%lld r%u.t%u counter %s %s=%.17g%s", static_cast<long long>(x.time),
                        rank, x.thread, c ? c->def.name.c_str() : "?", delta ? "delta" : "value", x.value,
                        where.c_str());
          const int tl = tr.timeline_of(rank, x.thread);
          lines.push_back({x.time, tl < 0 ? 0u : static_cast<uint32_t>(tl), buf});
        });
    if (!s.ok()) return s;
  }
  return Status();
}

// Sorts the lines by time, then timeline, and writes them to stdout in blocks of about 1 MiB.
void write_sorted(std::vector<Line>& lines) {
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line& a, const Line& b) { return a.t != b.t ? a.t < b.t : a.tl < b.tl; });
  std::string out;
  for (const auto& l : lines) {
    out += l.text;
    out += '\n';
    if (out.size() > (1 << 20)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
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
  set_action(cmd, [opts]() -> Status {
    if (opts->definitions) return print_definitions(opts->file);
    const auto got = load_log(opts->file);
    if (!got.ok()) return got.status();
    const LoadedLog& loaded = got.value();
    const Filter want{{opts->kinds.begin(), opts->kinds.end()},
                      {opts->ranks.begin(), opts->ranks.end()},
                      opts->from,
                      opts->to};
    std::vector<Line> lines;
    add_timeline_lines(*loaded.file, loaded.trace, want, lines);
    add_message_lines(loaded.trace, want, lines);
    add_rma_lines(*loaded.file, loaded.trace, want, lines);
    if (Status s = add_counter_lines(*loaded.file, loaded.trace, want, lines); !s.ok()) return s;
    write_sorted(lines);
    return Status();
  });
}

}  // namespace mpe::cli
