// `mpe estimate PROFILE`: how large liblog's log of a run will be, from libmpetime's JSON report
// of it (records per rank, spills, bytes of the .mpelog and of OTF2, the routines and call sites
// that make them), and with --target a filter that brings it under a size (log_estimate.h).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "log_estimate.h"
#include "mpe/file_io.h"

namespace mpe::cli {

namespace {

using Json = nlohmann::ordered_json;

struct EstimateArgs {
  std::string profile;
  std::string target;  // SIZE, empty: no proposal
  std::string filter;  // a filter file to apply
  std::string buffer;  // MPE_LOG_BUFFER; empty: the environment's, else 4 MiB
  size_t top = 10;
  bool json = false;
};

// "2G", "500M", "64k", "1.5GiB", "123": bytes (K, M, G, T are powers of 1024). Errors:
// invalid-argument.
StatusOr<double> parse_size(const std::string& text, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  std::string unit = end ? std::string(end) : std::string();
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  if (unit.size() == 2 && unit[1] == 'i') unit.pop_back();
  const std::string units = "kmgt";
  double scale = 1;
  if (unit.size() == 1 && units.find(static_cast<char>(std::tolower(unit[0]))) != std::string::npos)
    scale = std::pow(1024.0, 1 + static_cast<double>(units.find(static_cast<char>(std::tolower(unit[0])))));
  else if (!unit.empty())
    scale = -1;
  if (end == text.c_str() || scale < 0 || !(v > 0) || !std::isfinite(v))
    return Status(StatusCode::kInvalidArgument,
                  std::string(what) + " '" + text + "' is not a size (e.g. 500M, 2G, 4194304)");
  return v * scale;
}

// "5.2 MiB" for people.
std::string human(double bytes) {
  const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) bytes /= 1024, ++u;
  char b[64];
  std::snprintf(b, sizeof b, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return b;
}

uint64_t whole(double x) { return static_cast<uint64_t>(std::llround(std::max(0.0, x))); }

// The records per rank: min, mean, max and the ranks of the extremes.
struct RecordSpread {
  double min = 0, mean = 0, max = 0;
  int min_rank = 0, max_rank = 0;
  double max_spills = 0;
  int spills_rank = 0;
  double chunks = 0;
};
RecordSpread spread_of(const LogEstimate& e) {
  RecordSpread s;
  bool first = true;
  for (const RankEstimate& r : e.per_rank) {
    if (first || r.records < s.min) s.min = r.records, s.min_rank = r.rank;
    if (first || r.records > s.max) s.max = r.records, s.max_rank = r.rank;
    if (first || r.spills_per_thread > s.max_spills)
      s.max_spills = r.spills_per_thread, s.spills_rank = r.rank;
    s.mean += r.records;
    s.chunks += r.chunks;
    first = false;
  }
  if (!e.per_rank.empty()) s.mean /= static_cast<double>(e.per_rank.size());
  return s;
}

Json rows_json(const std::vector<EstimateRow>& rows, double total, size_t top, bool sites) {
  Json out = Json::array();
  for (size_t i = 0; i < rows.size() && (top == 0 || i < top); ++i) {
    const EstimateRow& r = rows[i];
    Json j = {{"name", r.name}};
    if (sites) j["routine"] = r.routine, j["where"] = r.where;
    j["calls"] = r.calls;
    j["records"] = whole(r.records.total());
    j["state_records"] = whole(r.state_records);
    j["share_pct"] = total > 0 ? std::round(1e4 * r.records.total() / total) / 100 : 0.0;
    j["moves_messages"] = r.moves_messages;
    out.push_back(std::move(j));
  }
  return out;
}

Json estimate_json(const LogEstimate& e, size_t top) {
  const RecordSpread s = spread_of(e);
  Json kinds = Json::object();
  for (size_t i = 0; i < kEstKinds; ++i)
    kinds[est_kind_name(static_cast<EstKind>(i))] = whole(e.records.n[i]);
  return {{"ranks", e.per_rank.size()},
          {"size", e.size},
          {"messages_exact", e.exact_messages},
          {"buffer_bytes", e.buffer_bytes},
          {"records", whole(e.records.total())},
          {"records_by_kind", std::move(kinds)},
          {"records_per_rank",
           {{"min", whole(s.min)},
            {"min_rank", s.min_rank},
            {"mean", std::round(s.mean * 10) / 10},
            {"max", whole(s.max)},
            {"max_rank", s.max_rank}}},
          {"chunks", whole(s.chunks)},
          {"spills_per_thread", {{"max", whole(s.max_spills)}, {"rank", s.spills_rank}}},
          {"definitions_bytes", whole(e.definitions_bytes)},
          {"mpelog_bytes", whole(e.mpelog_bytes)},
          {"otf2_bytes", whole(e.otf2_bytes)},
          {"routines", rows_json(e.routines, e.records.total(), top, false)},
          {"sites", rows_json(e.sites, e.records.total(), top, true)}};
}

void print_rows(const char* title, const std::vector<EstimateRow>& rows, double total, size_t top) {
  if (rows.empty()) return;
  std::printf("\n%s\n%-40s %14s %14s %7s\n", title, "", "Calls", "Records", "Share%");
  for (size_t i = 0; i < rows.size() && (top == 0 || i < top); ++i) {
    const EstimateRow& r = rows[i];
    std::string name = r.routine != r.name ? r.routine + " " + r.name : r.name;
    if (name.size() > 40) name = name.substr(0, 37) + "...";
    std::printf("%-40s %14llu %14llu %7.2f\n", name.c_str(), static_cast<unsigned long long>(r.calls),
                static_cast<unsigned long long>(whole(r.records.total())),
                total > 0 ? 100 * r.records.total() / total : 0.0);
  }
}

void print_estimate(const std::string& profile, const LogEstimate& e, size_t top) {
  const RecordSpread s = spread_of(e);
  std::printf("liblog's log of the run in %s (%zu ranks; %s)\n", profile.c_str(), e.per_rank.size(),
              e.exact_messages ? "messages counted by libmpetime"
                               : "report without message counts: messages estimated from calls, less exact");
  std::printf("  records          %llu  (per rank: min %llu (rank %d), mean %.1f, max %llu (rank %d))\n",
              static_cast<unsigned long long>(whole(e.records.total())),
              static_cast<unsigned long long>(whole(s.min)), s.min_rank, s.mean,
              static_cast<unsigned long long>(whole(s.max)), s.max_rank);
  std::printf("  by kind         ");
  for (size_t i = 0; i < kEstKinds; ++i)
    std::printf(" %s %llu", est_kind_name(static_cast<EstKind>(i)),
                static_cast<unsigned long long>(whole(e.records.n[i])));
  std::printf("\n  .mpelog          %s (%llu bytes; definitions %s)\n", human(e.mpelog_bytes).c_str(),
              static_cast<unsigned long long>(whole(e.mpelog_bytes)), human(e.definitions_bytes).c_str());
  std::printf("  chunks           %llu; spills per thread with MPE_LOG_BUFFER=%llu: at most %llu (rank %d)\n",
              static_cast<unsigned long long>(whole(s.chunks)),
              static_cast<unsigned long long>(e.buffer_bytes),
              static_cast<unsigned long long>(whole(s.max_spills)), s.spills_rank);
  std::printf("  OTF2 archive     %s (%llu bytes, MPE_LOG_FORMAT=otf2)\n", human(e.otf2_bytes).c_str(),
              static_cast<unsigned long long>(whole(e.otf2_bytes)));
  print_rows("Routines by records", e.routines, e.records.total(), top);
  print_rows("Call sites by records", e.sites, e.records.total(), top);
}

void print_proposal(const std::vector<std::string>& lines, const LogEstimate& after, double target) {
  std::printf("\nFilter for a log under %s (%llu bytes):\n", human(target).c_str(),
              static_cast<unsigned long long>(whole(target)));
  for (const std::string& line : lines) std::printf("%s\n", line.c_str());
  std::printf(
      "# estimated with it: %llu records, %s (%llu bytes)%s\n",
      static_cast<unsigned long long>(whole(after.records.total())), human(after.mpelog_bytes).c_str(),
      static_cast<unsigned long long>(whole(after.mpelog_bytes)),
      after.mpelog_bytes > target ? "; still above the target: message records cannot be filtered" : "");
}

StatusOr<tools::time::JsonReport> load_report(const std::string& path) {
  auto text = io::read_file(path);
  if (!text.ok()) return text.status();
  auto report = tools::time::read_json_report(*text);
  if (report.ok()) {
    if (report->ranks.empty()) return Status(StatusCode::kCorrupt, path + ": the report has no ranks");
    return report;
  }
  // A report cut short does not parse: say so rather than "not a report".
  const bool looks_like_one = text->find("\"tool\": \"libmpetime\"") != std::string::npos;
  if (report.status().code() == StatusCode::kNotALogfile && looks_like_one)
    return Status(StatusCode::kTruncated, path + ": the libmpetime report ends early or is malformed JSON");
  return Status(report.status().code(), path + ": " + report.status().message());
}

Status run_estimate(const EstimateArgs& a) {
  auto report = load_report(a.profile);
  if (!report.ok()) return report.status();
  EstimateOptions options;
  const char* env = std::getenv("MPE_LOG_BUFFER");
  // liblog reads MPE_LOG_BUFFER as a whole number of bytes (config::env_int): the estimate takes it
  // only in that form, so that both use the same buffer; --buffer also takes 64M.
  if (a.buffer.empty() && env && *env &&
      std::string(env).find_first_not_of("0123456789") != std::string::npos)
    return Status(StatusCode::kInvalidArgument,
                  std::string("MPE_LOG_BUFFER '") + env +
                      "' is not a number of bytes, as liblog reads it; give --buffer");
  const std::string buffer = !a.buffer.empty() ? a.buffer : env && *env ? std::string(env) : std::string();
  if (!buffer.empty()) {
    auto b = parse_size(buffer, "buffer size");
    if (!b.ok()) return b.status();
    options.buffer_bytes = std::max<uint64_t>(4096, whole(*b));
  }
  format::LogFilter given;
  if (!a.filter.empty()) {
    auto f = format::LogFilter::read(a.filter);
    if (!f.ok()) return f.status();
    given = std::move(*f);
    options.filter = &given;
  }
  double target = 0;
  if (!a.target.empty()) {
    auto t = parse_size(a.target, "target");
    if (!t.ok()) return t.status();
    target = *t;
  }
  const LogEstimate e = estimate_log(*report, options);
  LogEstimate after;
  const std::vector<std::string> proposed =
      target > 0 ? propose_filter(*report, options, target, &after) : std::vector<std::string>{};
  // What the profile cannot tell: which calls ran at which Pcontrol level.
  const char* unmodelled = given.has_pcontrol_rule() ? "only pcontrol" : nullptr;
  if (a.json) {
    Json j = estimate_json(e, a.top);
    if (!a.filter.empty())
      j["filter_file"] = {{"path", a.filter},
                          {"not_modelled", unmodelled ? Json::array({unmodelled}) : Json::array()}};
    if (target > 0)
      j["proposal"] = {{"target_bytes", whole(target)},           {"lines", proposed},
                       {"records", whole(after.records.total())}, {"mpelog_bytes", whole(after.mpelog_bytes)},
                       {"otf2_bytes", whole(after.otf2_bytes)},   {"fits", after.mpelog_bytes <= target}};
    std::printf("%s\n", j.dump(2).c_str());
    return Status();
  }
  print_estimate(a.profile, e, a.top);
  if (!a.filter.empty())
    std::printf("\nWith the filter %s%s.\n", a.filter.c_str(),
                unmodelled ? " (its `only pcontrol` is not modelled: the estimate counts every level)" : "");
  if (target > 0) print_proposal(proposed, after, target);
  return Status();
}

}  // namespace

void add_estimate_command(CLI::App& app) {
  auto a = std::make_shared<EstimateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "estimate",
      "Estimate the size of liblog's log of a run from libmpetime's JSON report (PROG.mpetime.json)");
  cmd->add_option("profile", a->profile, "libmpetime's JSON report of the run (mpe run --time)")->required();
  cmd->add_option("--target", a->target, "propose a filter that keeps the log under SIZE (e.g. 500M, 2G)");
  cmd->add_option("--filter", a->filter, "apply a filter file (exclude/include routine, exclude site)");
  cmd->add_option("--buffer", a->buffer, "MPE_LOG_BUFFER of the logged run (default: $MPE_LOG_BUFFER, 4M)");
  cmd->add_option("--top", a->top, "routines and sites listed (0: all)")->capture_default_str();
  cmd->add_flag("--json", a->json, "JSON output");
  set_first_process_action(cmd, [a] { return run_estimate(*a); });
}

}  // namespace mpe::cli
