// `mpe stat`: a logfile's summary: time range, ranks, threads, states, messages, clock corrections.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "commands.h"
#include "mpe/byte_codec.h"
#include "mpe/filter_report.h"
#include "mpe/log_reader.h"
#include "mpe/log_summary.h"
#include "mpe/records.h"
#include "peers.h"
#include "rank_table.h"

namespace mpe::cli {

namespace {

struct StateStat {
  uint64_t count = 0;
  int64_t time = 0;
};

// One call site's calls of one routine (mpiP's "Callsite Time statistics", from the log).
struct SiteStat {
  uint64_t count = 0;
  int64_t time = 0;
  uint64_t sent = 0;      // bytes of the messages and collectives its calls sent
  uint64_t received = 0;  // and received
  std::set<uint32_t> ranks;
};
using SiteKey = std::pair<uint32_t, uint32_t>;  // (run-wide call site, category)

// Time, calls and bytes per call site and routine, from the chunks the summary's pass decodes (a
// ChunkConsumer of summarize(): each timeline's chunks oldest first). A message or collective record belongs
// to the state written just before it on its timeline: liblog writes a call's state, then what the call moved
// (a Waitall's receives included).
class CallsiteStats {
 public:
  explicit CallsiteStats(const format::LogFile& file) : file_(file) {}

  void consume(const format::Chunk& chunk) {
    Sink sink{out_, chunk.entry.rank};
    format::interpret_records(file_, chunk.entry, chunk.records, chunk.count,
                              &user_states_[{chunk.entry.rank, chunk.entry.thread}], sink);
  }
  const std::map<SiteKey, SiteStat>& stats() const { return out_; }

  // Spread over processes (each saw its own ranks' chunks): all of them added up at process 0.
  void combine(format::SummaryPeers& peers) {
    ByteWriter mine;
    for (const auto& [key, s] : out_) {
      mine.pod(key.first), mine.pod(key.second), mine.pod(s.count), mine.pod(s.time);
      mine.pod(s.sent), mine.pod(s.received), mine.pod(s.ranks.size());
      for (uint32_t r : s.ranks) mine.pod(r);
    }
    const std::vector<std::string> parts = peers.gather(mine.data());
    out_.clear();
    for (const std::string& bytes : parts) {
      ByteReader in(bytes.data(), bytes.size());
      while (in.left() > 0) {
        const SiteKey key{in.pod<uint32_t>(), in.pod<uint32_t>()};
        SiteStat& s = out_[key];
        s.count += in.pod<uint64_t>();
        s.time += in.pod<int64_t>();
        s.sent += in.pod<uint64_t>();
        s.received += in.pod<uint64_t>();
        for (size_t nranks = in.pod<size_t>(); nranks-- > 0;) s.ranks.insert(in.pod<uint32_t>());
      }
    }
  }

 private:
  struct Sink {
    std::map<SiteKey, SiteStat>& out;
    uint32_t rank;
    SiteStat* last = nullptr;  // the stat of the latest MPI state of this chunk
    void state(int64_t start, int64_t end, uint32_t cat, uint32_t, uint32_t site) {
      SiteStat& s = out[{site, cat}];
      ++s.count;
      s.time += end - start;
      s.ranks.insert(rank);
      last = cat < format::kUserCategoryBase ? &s : nullptr;
    }
    void event(const format::Event& e) {
      if (e.kind == format::RecordKind::kCollective && last) {
        const auto c = format::as<format::CollectiveRecord>(e);
        last->sent += c.sent;
        last->received += c.received > 0 ? static_cast<uint64_t>(c.received) : 0;
      }
    }
    void message_end(bool send, const format::MessageKey&, int64_t, uint64_t bytes) {
      if (last) (send ? last->sent : last->received) += bytes;
    }
    void cancel_send(const format::MessageKey&) {}
    void span(int64_t, int64_t) {}
  };

  const format::LogFile& file_;
  std::map<SiteKey, SiteStat> out_;
  std::map<std::pair<uint32_t, uint32_t>, format::UserStates> user_states_;
};

// Per rank: threads, clock correction and causality shift; "-" where a rank has none.
std::string rank_table(const format::Definitions& d, const std::map<uint32_t, uint32_t>& threads,
                       const std::vector<int64_t>& shift_ns, size_t top) {
  const double tick_ns = 1e9 / d.ticks_per_second;
  // The top ranks of a summary: the largest round trips, whose offsets are the least certain.
  RankTable table({{"threads", 7, 0},
                   {"offset init (ns)", 16, 0, true},
                   {"offset final (ns)", 17, 0, true},
                   {"round trip (ns)", 15, 0},
                   {"drift (ppm)", 11, 3, true},
                   {"shift (ns)", 10, 0}},
                  3);
  for (const format::RankMeta& m : d.ranks) {
    const format::ClockSync& s = m.sync;
    const auto n = threads.find(m.rank);
    const double none = NAN;
    const double drift = (s.valid == 3 && s.t_final > s.t_init)
                             ? 1e6 * static_cast<double>(s.offset_final - s.offset_init) /
                                   static_cast<double>(s.t_final - s.t_init)
                         : s.valid ? 0.0
                                   : none;
    table.add(m.rank, {n == threads.end() ? 0.0 : static_cast<double>(n->second),
                       s.valid ? static_cast<double>(s.offset_init) * tick_ns : none,
                       s.valid ? static_cast<double>(s.offset_final) * tick_ns : none,
                       s.valid ? static_cast<double>(s.rtt_init) * tick_ns : none, drift,
                       m.rank < shift_ns.size() ? static_cast<double>(shift_ns[m.rank]) : 0.0});
  }
  return table.text(top);
}

// What the summary counts over the decoded trace: per state, per rank and per kind of record.
struct StatTotals {
  std::map<std::string, StateStat> states;
  std::map<uint32_t, std::map<std::string, uint64_t>> per_rank;
  std::map<uint32_t, uint32_t> threads;
  uint64_t collectives = 0, markers = 0, user_events = 0, comm_creates = 0, bytes = 0;
  // One-sided operations: totals, and count and bytes per kind of operation.
  struct RmaKindStat {
    uint64_t count = 0, sent = 0, received = 0;
  };
  std::map<std::string, RmaKindStat> rma_kinds;
  uint64_t rma_sent = 0, rma_received = 0, rma_completed = 0;
  std::vector<std::pair<SiteKey, SiteStat>> sites;  // by total time, largest first
};

StatTotals tally(const format::LogFile& file, const format::LogSummary& sum, const CallsiteStats& callsites) {
  StatTotals n;
  n.threads = sum.threads;
  for (const auto& [cat, total] : sum.states) {
    StateStat& st = n.states[file.category_name(cat)];
    st.count += total.count;
    st.time += total.time;
  }
  for (const auto& [rank, counts] : sum.rank_states)
    for (const auto& [cat, count] : counts) n.per_rank[rank][file.category_name(cat)] += count;
  n.collectives = sum.collectives;
  n.markers = sum.markers;
  n.user_events = sum.user_events;
  n.comm_creates = sum.comm_creates;
  n.bytes = sum.message_bytes;
  for (const auto& t : sum.rma.transfers) {
    auto& k = n.rma_kinds[format::rma_kind_name(t.kind)];
    ++k.count;
    k.sent += t.sent;
    k.received += t.received;
    n.rma_sent += t.sent;
    n.rma_received += t.received;
    if (t.complete >= 0) ++n.rma_completed;
  }
  // Call sites by total time, the way mpiP ranks them; only for logs that have call sites.
  for (const auto& [key, s] : callsites.stats())
    if (key.first != 0) n.sites.emplace_back(key, s);
  std::stable_sort(n.sites.begin(), n.sites.end(),
                   [](const auto& a, const auto& b) { return a.second.time > b.second.time; });
  return n;
}

// Prints `mpe stat --json`.
void print_json(const format::LogFile& file, const format::LogSummary& tr, const StatTotals& n) {
  const format::Definitions& d = file.definitions();
  const double tick_ns = 1e9 / d.ticks_per_second;
  using Json = nlohmann::ordered_json;  // keeps the keys in the order written
  uint64_t event_bytes = 0;
  for (const auto& e : file.index()) event_bytes += e.size;
  Json o = {{"program", d.program},       {"clock", d.clock},
            {"ranks", d.world_size},      {"recovered", d.recovered},
            {"records", tr.records},      {"chunks", file.index().size()},
            {"event_bytes", event_bytes}, {"file_bytes", file.file_size()},
            {"t_begin_ns", tr.t_begin},   {"t_end_ns", tr.t_end}};
  // Keys met once each, in order: appended without ordered_json's linear search per key, which
  // made 100,000 ranks cost 10^10 string comparisons (a minute).
  auto append = [](Json& object, std::string key, Json value) {
    static_cast<Json::object_t::Container&>(object.get_ref<Json::object_t&>())
        .emplace_back(std::move(key), std::move(value));
  };
  Json& thread_counts = o["threads"] = Json::object();
  for (const auto& [r, count] : n.threads) append(thread_counts, std::to_string(r), count);
  Json& state_totals = o["states"] = Json::object();
  for (const auto& [name, st] : n.states) state_totals[name] = {{"count", st.count}, {"time_ns", st.time}};
  Json& rank_states = o["states_per_rank"] = Json::object();
  for (const auto& [r, m] : n.per_rank) {
    Json counts = Json::object();
    for (const auto& [name, count] : m) counts[name] = count;
    append(rank_states, std::to_string(r), std::move(counts));
  }
  o["messages"] = {{"matched", tr.matched},
                   {"unmatched_sends", tr.unmatched_sends},
                   {"unmatched_recvs", tr.unmatched_recvs},
                   {"backward", tr.backward_messages},
                   {"bytes", n.bytes}};
  Json& rma = o["rma"] = {{"windows", tr.rma.windows.size()}, {"operations", tr.rma.transfers.size()},
                          {"completed", n.rma_completed},     {"unresolved", tr.rma.unresolved},
                          {"bytes_sent", n.rma_sent},         {"bytes_received", n.rma_received}};
  Json& by_kind = rma["by_kind"] = Json::object();
  for (const auto& [kind, k] : n.rma_kinds)
    by_kind[kind] = {{"count", k.count}, {"bytes_sent", k.sent}, {"bytes_received", k.received}};
  o["collectives"] = n.collectives;
  o["markers"] = n.markers;
  o["user_events"] = n.user_events;
  o["comm_creates"] = n.comm_creates;
  const format::FilterReport filtered = format::filter_report(d);
  if (filtered.any()) {  // a filtered log says so (MPE_LOG_FILTER)
    Json calls = Json::object();
    for (const auto& [name, count] : filtered.left_out) calls[name] = count;
    o["filter"] = {{"rules", filtered.filters},
                   {"ranks", filtered.ranks_filtered},
                   {"calls_left_out", filtered.calls_left_out},
                   {"left_out", calls}};
  }
  Json& categories = o["categories"] = Json::object();
  for (const auto& c : d.categories)
    if (c.id >= format::kUserCategoryBase) {
      char color[16];
      std::snprintf(color, sizeof color, "#%06x", c.color);
      categories[c.name] = {{"id", c.id},
                            {"color", color},
                            {"kind", c.kind == format::CategoryKind::kState ? "state" : "event"}};
    }
  Json& sync = o["clock_sync"] = Json::array();
  for (size_t r = 0; r < d.ranks.size(); ++r) {
    const auto& s = d.ranks[r].sync;
    sync.push_back({{"rank", r},
                    {"valid", s.valid},
                    {"offset_init_ns", static_cast<int64_t>(s.offset_init * tick_ns)},
                    {"offset_final_ns", static_cast<int64_t>(s.offset_final * tick_ns)},
                    {"rtt_init_ns", static_cast<int64_t>(s.rtt_init * tick_ns)}});
  }
  o["causality_shift_ns"] = tr.causality_shift_ns;
  Json& site_list = o["callsites"] = Json::array();
  for (const auto& [key, s] : n.sites) {
    const format::CallSite& cs = file.callsites()[key.first - 1];
    Json frames = Json::array();
    for (const Frame& f : cs.frames)
      frames.push_back({{"function", f.function}, {"file", f.file}, {"line", f.line}, {"module", f.module}});
    site_list.push_back({{"site", cs.text},
                         {"id", cs.id},
                         {"state", file.category_name(key.second)},
                         {"count", s.count},
                         {"time_ns", s.time},
                         {"bytes_sent", s.sent},
                         {"bytes_received", s.received},
                         {"ranks", s.ranks.size()},
                         {"frames", frames}});
  }
  // Bytes that are not UTF-8 (a program or state name) become U+FFFD instead of an exception.
  const std::string text = o.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
}

// Prints `mpe stat` as text: the log, its totals, the per-rank table, states and call sites.
void print_text(const std::string& path, size_t top, const format::LogFile& file,
                const format::LogSummary& tr, const StatTotals& n) {
  const format::Definitions& d = file.definitions();
  std::printf("file:       %s (%llu bytes, %zu chunks%s)\n", path.c_str(),
              static_cast<unsigned long long>(file.file_size()), file.index().size(),
              d.recovered ? ", recovered" : "");
  std::printf("program:    %s   clock: %s (%.0f ticks/s)\n", d.program.c_str(), d.clock.c_str(),
              d.ticks_per_second);
  std::printf("time range: %.6f s .. %.6f s (%.6f s)\n", tr.t_begin * 1e-9, tr.t_end * 1e-9,
              (tr.t_end - tr.t_begin) * 1e-9);
  std::printf("ranks:      %u   timelines: %u   records: %llu\n", d.world_size, tr.timelines,
              static_cast<unsigned long long>(tr.records));
  std::printf(
      "messages:   %llu matched, %llu unmatched sends, %llu unmatched receives, %llu bytes, %llu backward\n",
      static_cast<unsigned long long>(tr.matched), static_cast<unsigned long long>(tr.unmatched_sends),
      static_cast<unsigned long long>(tr.unmatched_recvs), static_cast<unsigned long long>(n.bytes),
      static_cast<unsigned long long>(tr.backward_messages));
  std::printf(
      "one-sided:  %zu operations (%llu completed, %llu unresolved) on %zu windows, %llu bytes sent, "
      "%llu bytes received\n",
      tr.rma.transfers.size(), static_cast<unsigned long long>(n.rma_completed),
      static_cast<unsigned long long>(tr.rma.unresolved), tr.rma.windows.size(),
      static_cast<unsigned long long>(n.rma_sent), static_cast<unsigned long long>(n.rma_received));
  std::printf(
      "events:     %llu collectives, %llu Pcontrol markers, %llu user events, %llu communicators created\n",
      static_cast<unsigned long long>(n.collectives), static_cast<unsigned long long>(n.markers),
      static_cast<unsigned long long>(n.user_events), static_cast<unsigned long long>(n.comm_creates));
  std::fputs(format::filter_lines(format::filter_report(d)).c_str(), stdout);
  std::printf(
      "per rank: threads, clock correction (offset to rank 0 at init and finalize, round trip of\n"
      "the init measurement, drift), causality repair (shift of receives ending before their send):\n");
  std::fputs(rank_table(d, n.threads, tr.causality_shift_ns, top).c_str(), stdout);
  std::vector<std::pair<std::string, StateStat>> v(n.states.begin(), n.states.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.time > b.second.time; });
  std::printf("%-32s %12s %16s %14s\n", "state", "count", "total time (s)", "mean (us)");
  for (const auto& [name, s] : v)
    std::printf("%-32s %12llu %16.6f %14.3f\n", name.c_str(), static_cast<unsigned long long>(s.count),
                s.time * 1e-9, s.count ? s.time * 1e-3 / static_cast<double>(s.count) : 0.0);
  if (!n.sites.empty()) {
    std::printf("\ncall sites, by total time:\n%-24s %12s %16s %14s %14s %14s %6s  %s\n", "state", "count",
                "total time (s)", "mean (us)", "bytes sent", "bytes recv", "ranks", "call site");
    for (const auto& [key, s] : n.sites)
      std::printf("%-24s %12llu %16.6f %14.3f %14llu %14llu %6zu  %s\n",
                  file.category_name(key.second).c_str(), static_cast<unsigned long long>(s.count),
                  s.time * 1e-9, s.count ? s.time * 1e-3 / static_cast<double>(s.count) : 0.0,
                  static_cast<unsigned long long>(s.sent), static_cast<unsigned long long>(s.received),
                  s.ranks.size(), file.callsite_text(key.first).c_str());
  }
}

}  // namespace

void add_stat_command(CLI::App& app) {
  struct Options {
    std::string file;
    bool json = false;
    size_t top = kDefaultTopRanks;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("stat", "Summarize a logfile: ranks, threads, states, messages, clocks");
  cmd->add_option("file", opts->file, "the .mpelog logfile, or an OTF2 archive")->required();
  cmd->add_flag("--json", opts->json, "print JSON");
  cmd->add_option("--top", opts->top, "ranks shown when the per-rank table is summarised (default 10)");
  set_action(cmd, [opts]() -> Status {
    // One streaming pass: the summary and the call-site statistics from the same decode.
    auto opened = interop::OpenedLog::open(opts->file);
    if (!opened.ok()) return opened.status();
    const format::LogFile* file = &(*opened)->file();
    // Under `mpiexec -n M` (M > 1) the pass is spread over the job; process 0 prints.
    auto peers = launched_peers();
    if (!peers.ok()) return peers.status();
    format::SummaryOptions options;
    options.peers = peers->get();
    const bool root = !options.peers || options.peers->rank() == 0;
    if (!root) quiet_errors();
    CallsiteStats callsites(*file);
    auto summary = format::summarize(*file, {[&](const format::Chunk& c) { callsites.consume(c); }}, options);
    if (!summary.ok()) {
      Status failure(summary.status().code(), opts->file + ": " + summary.status().message());
      return options.peers ? fail_spread(failure, *options.peers) : failure;
    }
    if (options.peers) callsites.combine(*options.peers);
    if (!root) return Status();
    const StatTotals totals = tally(*file, summary.value(), callsites);
    if (opts->json)
      print_json(*file, summary.value(), totals);
    else
      print_text(opts->file, opts->top, *file, summary.value(), totals);
    return Status();
  });
}

}  // namespace mpe::cli
