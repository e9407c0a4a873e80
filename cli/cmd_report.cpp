// `mpe report`: rebuilds libmpetime's whole-run report, or one process's, from the per-process
// files; `--callsites` prints the call-site table alone, from those files or from the JSON report.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "mpe/file_io.h"
#include "profile.h"
#include "rank_table.h"

namespace mpe::cli {

namespace {

// The run's call sites, from one JSON report (<prefix>.mpetime.json) or from per-process files.
StatusOr<std::vector<tools::time::SiteSummary>> load_sites(const std::vector<std::string>& files, int rank) {
  if (files.size() == 1 && rank < 0) {
    auto text = io::read_file(files.front());
    if (!text.ok()) return text.status();
    const size_t start = text->find_first_not_of(" \t\r\n");
    if (start != std::string::npos && (*text)[start] == '{') {
      auto sites = tools::time::sites_from_json_report(*text);
      if (!sites.ok()) return Status(sites.status().code(), files.front() + ": " + sites.status().message());
      return sites;
    }
  }
  std::vector<tools::time::RankProfile> profiles;
  for (const auto& f : files) {
    auto p = tools::time::load(f);
    if (!p.ok()) return p.status();
    if (rank < 0 || p->rank == rank) profiles.push_back(std::move(*p));
  }
  if (profiles.empty())
    return Status(StatusCode::kInvalidArgument, "no file for rank " + std::to_string(rank));
  MPE_RETURN_IF_ERROR(tools::time::check_run(&profiles));
  return tools::time::summarize_sites(profiles);
}

// libmpetime's whole-run text report, its per-rank table summarised when it is more than a page.
// The report is libmpetime's own (text_report() writes the finalize report too, which `mpe report`
// reproduces), so the summary takes the place of its table: from the line after the table's
// heading to the blank line that ends it.
std::string text_report(const std::vector<tools::time::RankProfile>& profiles, size_t top) {
  std::string report = tools::time::text_report(profiles);
  RankTable table({{"host", 20, RankTable::kText},
                   {"threads", 7, 0},
                   {"run (s)", 12, 6},
                   {"MPI (s)", 12, 6},
                   {"MPI %", 8, 2}},
                  3);  // the top ranks: the most MPI time
  for (const auto& p : profiles)
    table.add(static_cast<uint32_t>(p.rank),
              {p.host, static_cast<double>(p.threads), static_cast<double>(p.run_ns) * 1e-9,
               static_cast<double>(p.mpi_ns) * 1e-9,
               p.run_ns ? 100.0 * static_cast<double>(p.mpi_ns) / static_cast<double>(p.run_ns) : 0.0});
  if (!table.summarised()) return report;
  const std::string heading = "MPI time per rank (exclusive; threads summed)\n";
  const size_t body = report.find(heading);
  const size_t blank = body == std::string::npos ? body : report.find("\n\n", body);
  if (blank == std::string::npos) return report;  // not libmpetime's layout: left whole
  const size_t from = body + heading.size();
  return report.replace(from, blank + 1 - from, table.text(top, ""));
}

}  // namespace

void add_report_command(CLI::App& app) {
  struct Options {
    std::vector<std::string> files;
    int rank = -1;
    bool json = false;
    bool callsites = false;
    size_t top = 0;  // call sites: all; ranks in a summarised table: kDefaultTopRanks
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("report", "Rebuild the libmpetime report from its per-process files");
  cmd->add_option("files", opts->files,
                  "per-process files (<prefix>.mpetime.<rank>.txt); with --callsites also the JSON report")
      ->required();
  cmd->add_option("--rank", opts->rank, "report on this rank only");
  cmd->add_flag("--json", opts->json, "print the JSON report instead of text");
  cmd->add_flag("--callsites", opts->callsites, "print the call sites by aggregate time only");
  cmd->add_option("--top", opts->top,
                  "with --callsites: the first N call sites only (default: all); else the ranks shown when "
                  "the per-rank table is summarised (default 10)");
  set_action(cmd, [opts]() -> Status {
    std::string out;
    if (opts->callsites) {
      auto sites = load_sites(opts->files, opts->rank);
      if (!sites.ok()) return sites.status();
      if (opts->top && sites->size() > opts->top) sites->resize(opts->top);
      out = opts->json ? tools::time::callsites_json(*sites) : tools::time::callsite_table(*sites);
      std::fwrite(out.data(), 1, out.size(), stdout);
      return Status();
    }
    std::vector<mpe::tools::time::RankProfile> profiles;
    for (const auto& f : opts->files) {
      auto p = mpe::tools::time::load(f);
      if (!p.ok()) return p.status();
      profiles.push_back(std::move(*p));
    }
    MPE_RETURN_IF_ERROR(mpe::tools::time::check_run(&profiles));
    if (opts->rank >= 0) {
      for (const auto& p : profiles)
        if (p.rank == opts->rank) out = mpe::tools::time::rank_report(p);
      if (out.empty())
        return Status(StatusCode::kInvalidArgument, "no file for rank " + std::to_string(opts->rank));
    } else {
      if (static_cast<int>(profiles.size()) != profiles.front().size)
        std::fprintf(stderr, "mpe: warning: %zu of %d ranks' files given; the report covers those only\n",
                     profiles.size(), profiles.front().size);
      out = opts->json ? mpe::tools::time::json_report(profiles)
                       : text_report(profiles, opts->top ? opts->top : kDefaultTopRanks);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return Status();
  });
}

}  // namespace mpe::cli
