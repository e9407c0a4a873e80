// `mpe merge --recover`: builds a logfile from liblog's per-rank spill files after a crash, from one
// directory or several (nodes that did not share one), or from a list of the files.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "commands.h"
#include "mpe/recover.h"

namespace mpe::cli {

namespace {

namespace fs = std::filesystem;

// The run name in a spill file's name ("<prefix>.mpelog.<rank>.part"), or "" when it is not one.
std::string part_prefix(const std::string& name) {
  const auto at = name.find(".mpelog.");
  return at == std::string::npos || !name.ends_with(".part") ? std::string() : name.substr(0, at);
}

// Where the spill files of one run are: the sources given, each a spill file, a directory or a
// prefix (<dir>/<prefix>), in that order, each file once.
struct Sources {
  std::vector<std::string> parts;
  std::string prefix;  // the run's name: given by the first prefix or file, else found in the first directory
  fs::path first_dir;  // where the logfile goes by default
  std::set<std::string> seen;

  void add_file(const fs::path& p) {
    std::error_code ec;
    const fs::path key = fs::weakly_canonical(p, ec);
    if (seen.insert(ec ? p.string() : key.string()).second) parts.push_back(p.string());
  }

  Status add(const std::string& source) {
    fs::path dir = source;
    std::string wanted;
    if (fs::is_regular_file(dir) && !part_prefix(dir.filename().string()).empty()) {
      if (prefix.empty()) prefix = part_prefix(dir.filename().string());
      if (first_dir.empty()) first_dir = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
      add_file(dir);
      return Status();
    }
    if (!fs::is_directory(dir)) {
      wanted = dir.filename().string();
      dir = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
    }
    if (wanted.empty()) wanted = prefix;
    std::vector<fs::path> found;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = part_prefix(e.path().filename().string());
      if (name.empty() || (!wanted.empty() && name != wanted)) continue;
      if (wanted.empty()) wanted = name;
      found.push_back(e.path());
    }
    if (ec) return Status(StatusCode::kIoError, dir.string() + ": " + ec.message());
    if (found.empty())
      return Status(StatusCode::kInvalidArgument, "no per-rank files (" +
                                                      (wanted.empty() ? std::string("*") : wanted) +
                                                      ".mpelog.<rank>.part) found for " + source);
    std::sort(found.begin(), found.end());
    if (prefix.empty()) prefix = wanted;
    if (first_dir.empty()) first_dir = dir;
    for (const auto& f : found) add_file(f);
    return Status();
  }
};

}  // namespace

void add_merge_command(CLI::App& app) {
  struct Options {
    std::vector<std::string> sources;
    std::string out;
    bool recover = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("merge", "Merge liblog's per-rank files into one logfile");
  cmd->add_option("sources", opts->sources,
                  "where the per-rank files (*.mpelog.<rank>.part) are: directories (one per node when the "
                  "nodes did not share one), prefixes (<dir>/<prefix>) or the files themselves")
      ->required();
  cmd->add_option("-o,--output", opts->out, "the logfile to write (default <first dir>/<prefix>.mpelog)");
  cmd->add_flag("--recover", opts->recover, "build from what the per-rank files of a crashed run hold");
  set_first_process_action(cmd, [opts]() -> Status {
    if (!opts->recover)
      return Status(StatusCode::kInvalidArgument,
                    "liblog merges at MPI_Finalize; use --recover for the per-rank files of a run that died");
    Sources sources;
    for (const auto& s : opts->sources) MPE_RETURN_IF_ERROR(sources.add(s));
    const std::string out =
        opts->out.empty() ? (sources.first_dir / (sources.prefix + ".mpelog")).string() : opts->out;
    format::RecoverReport rep;
    const Status s = format::recover(sources.parts, out, &rep);
    for (const auto& n : rep.notes) std::fprintf(stderr, "mpe: note: %s\n", n.c_str());
    MPE_RETURN_IF_ERROR(s);
    std::printf("recovered %s: %d ranks (%d missing), %llu chunks, %llu records\n", out.c_str(), rep.ranks,
                rep.ranks_missing, static_cast<unsigned long long>(rep.chunks),
                static_cast<unsigned long long>(rep.records));
    return Status();
  });
}

}  // namespace mpe::cli
