// `mpe umq`: the unexpected-message queue rebuilt from a logfile (mpe/umq.h), written as libumq's
// report (umq_report.h): the same text and JSON, from the same writer.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "mpe/umq.h"
#include "rank_table.h"
#include "umq_report.h"

namespace mpe::cli {

namespace {

// The threshold: --threshold, else MPE_UMQ_THRESHOLD (as libumq reads it), else libumq's default.
StatusOr<uint64_t> threshold(const std::string& option) {
  const char* env = std::getenv("MPE_UMQ_THRESHOLD");
  const std::string text = !option.empty() ? option : env && *env ? env : "";
  if (text.empty()) return analysis::umq::kDefaultThreshold;
  const char* what = !option.empty() ? "--threshold" : "MPE_UMQ_THRESHOLD";
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || text[0] == '-')
    return Status(StatusCode::kInvalidArgument, std::string(what) + ": not a count of messages: " + text);
  return static_cast<uint64_t>(v);
}

// Each rank's longest queue, the table `mpe umq` adds after libumq's report (libumq reports
// call sites only): in full up to a page of ranks, else summarised.
std::string per_rank_text(const std::vector<uint64_t>& max_length, size_t top) {
  RankTable table({{"longest queue", 13, 0}}, 0);
  for (size_t r = 0; r < max_length.size(); ++r)
    table.add(static_cast<uint32_t>(r), {static_cast<double>(max_length[r])});
  return "longest queue a receive met, per rank:\n" + table.text(top);
}

// libumq's JSON report with every rank's longest queue added ("max_length_per_rank"), in
// libumq's layout (umq_report.cpp dumps with an indent of 2).
std::string with_per_rank(const std::string& report, const std::vector<uint64_t>& max_length) {
  auto o = nlohmann::ordered_json::parse(report);
  o["max_length_per_rank"] = max_length;
  return o.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

Status write_file(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return Status(StatusCode::kIoError, "cannot write " + path + ": " + std::strerror(errno));
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !wrote) return Status(StatusCode::kIoError, "writing " + path + " failed");
  return Status();
}

}  // namespace

void add_umq_command(CLI::App& app) {
  struct Options {
    std::string file;
    bool json = false;
    std::string threshold;
    size_t top = SIZE_MAX;  // call sites; ranks in a summarised table: kDefaultTopRanks
    std::string prefix;
    size_t sort_memory = analysis::umq::Options{}.sort_memory;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "umq", "Unexpected-message queue rebuilt from a logfile: libumq's report on any MPI (docs/umq.md)");
  cmd->add_option("file", opts->file, "the .mpelog logfile, or an OTF2 archive")->required();
  cmd->add_flag("--json", opts->json, "print the JSON report (libumq's .umq.json layout)");
  cmd->add_option("--threshold", opts->threshold,
                  "count receives that met a queue longer than this (default MPE_UMQ_THRESHOLD, else 5)");
  cmd->add_option("--top", opts->top,
                  "call sites shown (default all), and ranks in a summarised per-rank table (default 10)");
  cmd->add_option("-o,--output", opts->prefix,
                  "write <prefix>.umq.txt and <prefix>.umq.json, as libumq does, instead of printing");
  cmd->add_option("--sort-memory", opts->sort_memory,
                  "bytes of receive posts and queued messages held before they are sorted into a temporary "
                  "file in $TMPDIR (default 256 MiB)");
  set_first_process_action(cmd, [opts]() -> Status {
    StatusOr<uint64_t> limit = threshold(opts->threshold);
    if (!limit.ok()) return limit.status();
    auto opened = interop::OpenedLog::open(opts->file);
    if (!opened.ok()) return opened.status();
    analysis::umq::Options options;
    options.threshold = *limit;
    options.sort_memory = opts->sort_memory;
    auto rebuilt = analysis::umq::rebuild(opened.value()->file(), options);
    if (!rebuilt.ok()) return Status(rebuilt.status().code(), opts->file + ": " + rebuilt.status().message());
    std::vector<std::vector<analysis::umq::SiteRecord>> sites = std::move(rebuilt->sites);
    analysis::umq::SiteMerge merge;
    for (size_t r = 0; r < sites.size(); ++r) merge.add_rank(sites[r], static_cast<int>(r));
    std::vector<const analysis::umq::MergedSite*> ranked = merge.ranked();
    if (ranked.size() > opts->top) ranked.resize(opts->top);
    const analysis::umq::VariableInfo variable = analysis::umq::rebuilt_variable(opts->file, *limit);
    const int nranks = static_cast<int>(rebuilt->ranks);
    if (rebuilt->unknown_posts)
      std::fprintf(stderr,
                   "mpe umq: %llu of %llu receives have no post in the log (no request records); "
                   "taken as posted when the call that completed them began\n",
                   static_cast<unsigned long long>(rebuilt->unknown_posts),
                   static_cast<unsigned long long>(rebuilt->posts));
    const size_t top_ranks = opts->top == SIZE_MAX ? kDefaultTopRanks : opts->top;
    auto text_report = [&] {
      return analysis::umq::report_text(ranked, variable, nranks) +
             per_rank_text(rebuilt->max_length, top_ranks);
    };
    auto json_report = [&] {
      return with_per_rank(analysis::umq::report_json(ranked, variable, nranks), rebuilt->max_length);
    };
    if (!opts->prefix.empty()) {
      MPE_RETURN_IF_ERROR(write_file(opts->prefix + ".umq.txt", text_report()));
      return write_file(opts->prefix + ".umq.json", json_report());
    }
    const std::string text = opts->json ? json_report() : text_report();
    std::fwrite(text.data(), 1, text.size(), stdout);
    return Status();
  });
}

}  // namespace mpe::cli
