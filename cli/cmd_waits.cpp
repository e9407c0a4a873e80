// `mpe waits`: who makes whom wait (mpe/waits.h), per pattern, rank, call site and rank pair.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "mpe/filter_report.h"
#include "mpe/waits.h"
#include "peers.h"
#include "rank_table.h"

namespace mpe::cli {

namespace {

using Json = nlohmann::ordered_json;  // keeps the keys in the order written

double seconds(int64_t ns) { return static_cast<double>(ns) * 1e-9; }

struct SiteRow {
  uint32_t site;
  uint32_t cat;
  analysis::waits::SiteTotal total;
};

// A pattern's call sites, most waiting first.
std::vector<SiteRow> site_rows(const analysis::waits::PatternTotal& p) {
  std::vector<SiteRow> rows;
  for (const auto& [key, total] : p.per_site) rows.push_back(SiteRow{key.first, key.second, total});
  std::stable_sort(rows.begin(), rows.end(),
                   [](const SiteRow& a, const SiteRow& b) { return a.total.ns > b.total.ns; });
  return rows;
}

// The ranks whose lateness cost the others most, largest first (those that cost nothing left out).
std::vector<std::pair<uint32_t, int64_t>> offenders(const analysis::waits::Report& r) {
  std::vector<std::pair<uint32_t, int64_t>> v;
  const std::vector<int64_t> caused = analysis::waits::blame_by_culprit(r);
  for (uint32_t c = 0; c < r.ranks; ++c)
    if (caused[c] > 0) v.emplace_back(c, caused[c]);
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

// Who made whom wait, as text: the matrix (row: the late rank, column: the rank that waited) up
// to a page of ranks, else the `top` pairs that cost most.
void print_blame(const analysis::waits::Report& r, size_t top) {
  if (r.ranks <= kPageOfRanks) {
    std::printf("\nwho makes whom wait (s): row = the late rank, column = the rank that waited\n%6s", "");
    for (uint32_t w = 0; w < r.ranks; ++w) std::printf(" %10u", w);
    std::printf("\n");
    for (uint32_t c = 0; c < r.ranks; ++c) {
      std::printf("%6u", c);
      for (uint32_t w = 0; w < r.ranks; ++w)
        std::printf(" %10.6f", seconds(analysis::waits::blame_ns(r, c, w)));
      std::printf("\n");
    }
    return;
  }
  std::vector<analysis::waits::Blame> pairs = r.blame;
  const size_t shown = std::min(top, pairs.size());
  std::partial_sort(
      pairs.begin(), pairs.begin() + static_cast<std::ptrdiff_t>(shown), pairs.end(),
      [](const analysis::waits::Blame& a, const analysis::waits::Blame& b) { return a.ns > b.ns; });
  std::printf("\nwho makes whom wait: the %zu pairs that cost most, of %zu that waited\n%10s %10s %14s\n",
              shown, pairs.size(), "late rank", "waited", "waiting (s)");
  for (size_t i = 0; i < shown; ++i)
    std::printf("%10u %10u %14.6f\n", pairs[i].culprit, pairs[i].waiter, seconds(pairs[i].ns));
  std::printf("(%zu more pairs left out; --top N shows more, --json has every pair)\n", pairs.size() - shown);
}

Json to_json(const std::string& path, const format::LogFile& file, const analysis::waits::Report& r,
             bool instances) {
  Json o = {{"file", path}, {"ranks", r.ranks}, {"mpi_seconds", seconds(r.mpi_ns)}};
  if (const std::string note = format::filter_note(format::filter_report(file.definitions())); !note.empty())
    o["filtered"] = note;
  Json& patterns = o["patterns"] = Json::object();
  for (int i = 0; i < analysis::waits::kPatternCount; ++i) {
    const auto p = static_cast<analysis::waits::Pattern>(i);
    const analysis::waits::PatternTotal& t = r.patterns[static_cast<size_t>(i)];
    Json per_rank = Json::array();
    for (int64_t ns : t.per_rank) per_rank.push_back(seconds(ns));
    Json sites = Json::array();
    for (const SiteRow& row : site_rows(t)) {
      Json site = {{"site", row.site ? file.callsite_text(row.site) : "?"}};
      if (row.site && !file.callsites()[row.site - 1].frames.empty()) {
        const Frame& f = file.callsites()[row.site - 1].frames[0];
        site["file"] = std::string(base_name(f.file));
        site["line"] = f.line;
        site["function"] = f.function;
      }
      site["state"] = file.category_name(row.cat);
      site["seconds"] = seconds(row.total.ns);
      site["instances"] = row.total.instances;
      sites.push_back(std::move(site));
    }
    patterns[analysis::waits::pattern_key(p)] = {
        {"name", analysis::waits::pattern_name(p)},
        {"seconds", seconds(t.ns)},
        {"share", r.mpi_ns > 0 ? static_cast<double>(t.ns) / r.mpi_ns : 0.0},
        {"instances", t.instances},
        {"per_rank", per_rank},
        {"callsites", sites}};
  }
  Json& blame = o["blame"] = Json::array();  // only the pairs that waited: ranks² cells would not fit
  for (const analysis::waits::Blame& b : r.blame)
    blame.push_back({{"late", b.culprit}, {"waiting", b.waiter}, {"seconds", seconds(b.ns)}});
  Json& worst = o["offenders"] = Json::array();
  for (const auto& [rank, ns] : offenders(r)) worst.push_back({{"rank", rank}, {"seconds", seconds(ns)}});
  if (instances) {
    Json& list = o["instances"] = Json::array();
    for (const analysis::waits::Instance& in : r.instances)
      list.push_back({{"pattern", analysis::waits::pattern_key(in.pattern)},
                      {"rank", in.rank},
                      {"thread", in.thread},
                      {"start", in.start},
                      {"end", in.end},
                      {"seconds", seconds(in.end - in.start)},
                      {"state", file.category_name(in.cat)},
                      {"site", in.site ? file.callsite_text(in.site) : "?"},
                      {"culprit", in.culprit},
                      {"culprit_time", in.culprit_time}});
  }
  return o;
}

void print_text(const format::LogFile& file, const analysis::waits::Report& r, size_t top) {
  // A filtered log's waits are those of the calls it kept.
  if (const std::string note = format::filter_note(format::filter_report(file.definitions())); !note.empty())
    std::printf("%s\n", note.c_str());
  std::printf("MPI time: %.6f s over %u ranks\n\n", seconds(r.mpi_ns), r.ranks);
  std::printf("%-16s %14s %8s %10s\n", "pattern", "waiting (s)", "share", "instances");
  for (int i = 0; i < analysis::waits::kPatternCount; ++i) {
    const analysis::waits::PatternTotal& t = r.patterns[static_cast<size_t>(i)];
    std::printf("%-16s %14.6f %7.2f%% %10llu\n",
                analysis::waits::pattern_name(static_cast<analysis::waits::Pattern>(i)), seconds(t.ns),
                r.mpi_ns > 0 ? 100.0 * static_cast<double>(t.ns) / static_cast<double>(r.mpi_ns) : 0.0,
                static_cast<unsigned long long>(t.instances));
  }
  for (int i = 0; i < analysis::waits::kPatternCount; ++i) {
    const analysis::waits::PatternTotal& t = r.patterns[static_cast<size_t>(i)];
    if (t.instances == 0) continue;
    std::printf("\n%s, per rank:\n", analysis::waits::pattern_name(static_cast<analysis::waits::Pattern>(i)));
    RankTable ranks({{"waiting (s)", 12, 6}, {"% of its MPI", 12, 2}}, 0);
    for (uint32_t k = 0; k < r.ranks; ++k) {
      const int64_t mpi = k < r.mpi_per_rank.size() ? r.mpi_per_rank[k] : 0;
      ranks.add(k, {seconds(t.per_rank[k]),
                    mpi > 0 ? 100.0 * static_cast<double>(t.per_rank[k]) / static_cast<double>(mpi) : NAN});
    }
    std::fputs(ranks.text(top).c_str(), stdout);
    std::printf("  %-14s %10s  %-20s %s\n", "waiting (s)", "instances", "state", "call site");
    size_t shown = 0;
    for (const SiteRow& row : site_rows(t)) {
      if (shown++ == top) break;
      std::printf("  %14.6f %10llu  %-20s %s\n", seconds(row.total.ns),
                  static_cast<unsigned long long>(row.total.instances), file.category_name(row.cat).c_str(),
                  row.site ? file.callsite_text(row.site).c_str() : "?");
    }
  }
  const auto worst = offenders(r);
  if (worst.empty()) return;
  print_blame(r, top);
  std::printf("largest offenders:");
  for (size_t i = 0; i < worst.size() && i < 5; ++i)
    std::printf(" rank %u (%.6f s)%s", worst[i].first, seconds(worst[i].second),
                i + 1 < worst.size() && i < 4 ? "," : "");
  std::printf("\n");
}

}  // namespace

void add_waits_command(CLI::App& app) {
  struct Options {
    std::string file;
    bool json = false;
    bool instances = false;
    uint64_t eager_limit = analysis::waits::Options{}.eager_limit;
    size_t top = kDefaultTopRanks;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("waits", "Wait states: who makes whom wait, per pattern, rank and call site");
  cmd->add_option("file", opts->file, "the .mpelog logfile, or an OTF2 archive")->required();
  cmd->add_flag("--json", opts->json, "print JSON");
  cmd->add_flag("--instances", opts->instances, "with --json: list every waiting interval");
  cmd->add_option(
      "--eager-limit", opts->eager_limit,
      "bytes above which a blocking standard send is taken to wait for its receiver (default 65536)");
  cmd->add_option("--top", opts->top,
                  "call sites shown per pattern, and ranks and rank pairs in summarised tables (default 10)");
  set_action(cmd, [opts]() -> Status {
    auto opened = interop::OpenedLog::open(opts->file);
    if (!opened.ok()) return opened.status();
    const format::LogFile& file = opened.value()->file();
    // Under `mpiexec -n M` (M > 1) the replay is spread over the job; process 0 prints.
    auto peers = launched_peers();
    if (!peers.ok()) return peers.status();
    analysis::waits::Options options;
    options.keep_instances = opts->instances;
    options.eager_limit = opts->eager_limit;
    options.peers = peers->get();
    const bool root = !options.peers || options.peers->rank() == 0;
    if (!root) quiet_errors();
    const auto report = analysis::waits::analyze(file, options);
    if (!report.ok()) {
      Status failure(report.status().code(), opts->file + ": " + report.status().message());
      return options.peers ? fail_spread(failure, *options.peers) : failure;
    }
    if (!root) return Status();
    if (opts->json) {
      const std::string text = to_json(opts->file, file, report.value(), opts->instances)
                                   .dump(-1, ' ', false, Json::error_handler_t::replace) +
                               "\n";
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      print_text(file, report.value(), opts->top);
    }
    return Status();
  });
}

}  // namespace mpe::cli
