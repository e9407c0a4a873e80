// Reads one run for `mpe diff`: a libmpetime profile into the comparison's model (analysis/'s
// mpe/diff.h, which reads logs itself), or a log through the readers of `mpe waits`.
#include "diff_runs.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "mpe/interop.h"
#include "profile.h"

namespace mpe::cli::diff {

namespace {

using Json = nlohmann::json;

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

void finish_profile(Run* run) {
  run->wall_ns = 0;
  for (double w : run->wall_per_rank) run->wall_ns = std::max(run->wall_ns, w);
}

// A libmpetime JSON report: its per-rank section holds everything the per-process files did.
StatusOr<Run> profile_from_json(const std::string& path, const std::string& text) {
  const Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("tool", "") != "libmpetime")
    return Status(StatusCode::kNotALogfile, path + ": not a libmpetime JSON report");
  Run run;
  run.kind = Kind::kProfile;
  run.path = path;
  try {
    run.program = doc.value("command", "");
    const int size = doc.at("size").get<int>();
    if (size <= 0 || size > (1 << 24)) return Status(StatusCode::kCorrupt, path + ": bad size in the report");
    run.ranks = static_cast<uint32_t>(size);
    run.wall_per_rank.assign(run.ranks, 0.0);
    run.mpi_per_rank.assign(run.ranks, 0.0);
    auto stats = [](const Json& j, tools::time::CallStats* c) {
      c->calls = j.at("calls").get<uint64_t>();
      c->incl_ns = j.at("incl_ns").get<uint64_t>();
      c->excl_ns = j.at("excl_ns").get<uint64_t>();
      c->bytes_sent = j.at("bytes_sent").get<uint64_t>();
      c->bytes_recv = j.at("bytes_recv").get<uint64_t>();
    };
    for (const Json& pr : doc.at("per_rank")) {
      tools::time::RankProfile p;
      p.rank = pr.at("rank").get<int>();
      if (p.rank < 0 || p.rank >= size)
        return Status(StatusCode::kCorrupt, path + ": rank " + std::to_string(p.rank) + " out of range");
      p.run_ns = pr.at("run_ns").get<uint64_t>();
      p.mpi_ns = pr.at("mpi_ns").get<uint64_t>();
      for (const auto& [name, j] : pr.at("routines").items()) {
        tools::time::RoutineStats s;
        s.name = name;
        stats(j, &s);
        p.routines.push_back(std::move(s));
      }
      if (pr.contains("callsites"))
        for (const Json& j : pr.at("callsites")) {
          tools::time::SiteStats s;
          s.routine = j.at("routine").get<std::string>();
          stats(j, &s);
          for (const Json& f : j.at("frames")) s.frames.push_back(tools::time::frame_from_json(f));
          p.sites.push_back(std::move(s));
        }
      add_rank(&run, p);
    }
  } catch (const Json::exception& e) {
    return Status(StatusCode::kCorrupt, path + ": corrupt libmpetime report: " + e.what());
  }
  finish_profile(&run);
  return run;
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
      if (n.starts_with(prefix) && n.ends_with(".txt") &&
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
  Run run;
  run.kind = Kind::kProfile;
  run.path = path;
  run.program = profiles.front().command;
  run.ranks = static_cast<uint32_t>(std::max(profiles.front().size, 1));
  run.wall_per_rank.assign(run.ranks, 0.0);
  run.mpi_per_rank.assign(run.ranks, 0.0);
  for (const auto& q : profiles) add_rank(&run, q);
  finish_profile(&run);
  return run;
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
