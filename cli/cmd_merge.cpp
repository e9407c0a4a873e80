// `mpe merge --recover`: builds a logfile from liblog's per-rank spill files after a crash.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "mpe/recover.h"

namespace mpe::cli {

void add_merge_command(CLI::App& app) {
  struct Options {
    std::string source;
    std::string out;
    bool recover = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("merge", "Merge liblog's per-rank files into one logfile");
  cmd->add_option("source", opts->source,
                  "a prefix (<dir>/<prefix>) or a directory holding *.mpelog.<rank>.part")
      ->required();
  cmd->add_option("-o,--output", opts->out, "the logfile to write (default <prefix>.mpelog)");
  cmd->add_flag("--recover", opts->recover, "build from what the per-rank files of a crashed run hold");
  set_action(cmd, [opts]() -> Status {
    namespace fs = std::filesystem;
    if (!opts->recover)
      return Status(StatusCode::kInvalidArgument,
                    "liblog merges at MPI_Finalize; use --recover for the per-rank files of a run that died");
    fs::path dir = opts->source;
    std::string prefix;
    if (!fs::is_directory(dir)) {
      prefix = dir.filename().string();
      dir = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
    }
    std::vector<std::string> parts;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      const auto at = name.find(".mpelog.");
      if (at == std::string::npos || !name.ends_with(".part")) continue;
      if (!prefix.empty() && name.substr(0, at) != prefix) continue;
      if (prefix.empty()) prefix = name.substr(0, at);
      if (name.substr(0, at) == prefix) parts.push_back(e.path().string());
    }
    if (ec) return Status(StatusCode::kIoError, dir.string() + ": " + ec.message());
    if (parts.empty())
      return Status(StatusCode::kInvalidArgument,
                    "no per-rank files (*.mpelog.<rank>.part) found for " + opts->source);
    const std::string out = opts->out.empty() ? (dir / (prefix + ".mpelog")).string() : opts->out;
    log::RecoverReport rep;
    const Status s = log::recover(parts, out, &rep);
    for (const auto& n : rep.notes) std::fprintf(stderr, "mpe: note: %s\n", n.c_str());
    MPE_RETURN_IF_ERROR(s);
    std::printf("recovered %s: %d ranks (%d missing), %llu chunks, %llu records\n", out.c_str(), rep.ranks,
                rep.ranks_missing, static_cast<unsigned long long>(rep.chunks),
                static_cast<unsigned long long>(rep.records));
    return Status();
  });
}

}  // namespace mpe::cli
