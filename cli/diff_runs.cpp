// Reads one run for `mpe diff`: a libmpetime profile (through libtime's readers of its files and
// JSON report, profile.h) into the comparison's model (analysis/'s mpe/diff.h, which reads logs
// itself), or a log through the readers of `mpe waits`.
#include "diff_runs.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "mpe/interop.h"
#include "profile.h"

namespace mpe::cli::diff {

namespace {

// One rank's profile into the run.
void add_rank(Run* run, const tools::time::RankProfile& p) {
  const auto r = static_cast<uint32_t>(p.rank);
  if (r >= run->ranks) return;
  run->wall_per_rank[r] = static_cast<double>(p.run_ns);
  run->mpi_per_rank[r] = static_cast<double>(p.mpi_ns);
  for (const auto& s : p.routines)
    run->routines[s.name].add(r, run->ranks, s.calls, static_cast<double>(s.excl_ns),
                              s.bytes_sent + s.bytes_recv);
  for (const auto& s : p.sites)
    site_of(run, s.routine, s.frames)
        .m.add(r, run->ranks, s.calls, static_cast<double>(s.excl_ns), s.bytes_sent + s.bytes_recv);
}

// A run from its per-rank profiles: the per-process files, or the JSON report's per_rank section,
// which holds everything they did.
Run profile_run(const std::string& path, const std::string& program, int size,
                const std::vector<tools::time::RankProfile>& profiles) {
  Run run;
  run.kind = Kind::kProfile;
  run.path = path;
  run.program = program;
  run.ranks = static_cast<uint32_t>(std::max(size, 1));
  run.wall_per_rank.assign(run.ranks, 0.0);
  run.mpi_per_rank.assign(run.ranks, 0.0);
  for (const auto& p : profiles) add_rank(&run, p);
  for (double w : run.wall_per_rank) run.wall_ns = std::max(run.wall_ns, w);
  return run;
}

// A libmpetime JSON report, read by libtime's reader (profile.h).
StatusOr<Run> profile_from_json(const std::string& path, const std::string& text) {
  auto report = tools::time::read_json_report(text);
  if (!report.ok()) return Status(report.status().code(), path + ": " + report.status().message());
  return profile_run(path, report->command, report->size, report->ranks);
}

// Every per-process file of the run that `path` (one of them) belongs to.
StatusOr<Run> profile_from_files(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const std::string name = p.filename().string();
  const size_t at = name.rfind(".mpetime.");
  std::vector<std::string> files;
  if (at != std::string::npos && name.ends_with(".txt")) {
    const std::string prefix = name.substr(0, at + 9);  // "<prefix>.mpetime."
    std::error_code ec;
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string n = e.path().filename().string();
      // <prefix>.mpetime.txt, the text report beside them, has no rank: not one of them.
      if (n.starts_with(prefix) && n.ends_with(".txt") && n.size() > prefix.size() + 4 &&
          std::all_of(n.begin() + static_cast<std::ptrdiff_t>(prefix.size()), n.end() - 4,
                      [](char c) { return c >= '0' && c <= '9'; }))
        files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
  }
  if (files.empty()) files.push_back(path);
  std::vector<tools::time::RankProfile> profiles;
  for (const auto& f : files) {
    auto one = tools::time::load(f);
    if (!one.ok()) return one.status();
    profiles.push_back(std::move(*one));
  }
  MPE_RETURN_IF_ERROR(tools::time::check_run(&profiles));
  return profile_run(path, profiles.front().command, profiles.front().size, profiles);
}

}  // namespace

StatusOr<Kind> kind_of(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Kind::kLog;  // an OTF2 archive's directory
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kIoError, path + ": cannot open");
  char head[64] = {};
  in.read(head, sizeof head);
  const std::string s(head, static_cast<size_t>(in.gcount()));
  const size_t start = s.find_first_not_of(" \t\r\n");
  if (start != std::string::npos && s[start] == '{') return Kind::kProfile;
  if (s.starts_with(std::string(tools::time::kMagic) + " ")) return Kind::kProfile;
  return Kind::kLog;
}

StatusOr<Run> load_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kIoError, path + ": cannot open");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start != std::string::npos && text[start] == '{') return profile_from_json(path, text);
  return profile_from_files(path);
}

StatusOr<Loaded> load_log(const std::string& path, const LoadOptions& options) {
  auto opened = interop::OpenedLog::open(path);
  if (!opened.ok()) return opened.status();
  const format::LogFile& file = (*opened)->file();
  Loaded out;
  auto run = run_from_log(file, path, options.log);
  if (!run.ok()) return run.status();
  out.run = std::move(*run);
  if (options.iterations) {
    auto it = analysis::find_iterations(file);
    if (!it.ok()) return it.status();
    out.iterations = std::move(*it);
  }
  return out;
}

}  // namespace mpe::cli::diff
