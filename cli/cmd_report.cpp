// `mpe report`: rebuilds libmpetime's whole-run report, or one process's, from the per-process files.
#include <cstdio>
#include <memory>
#include <vector>

#include "commands.h"
#include "profile.h"

namespace mpe::cli {

void add_report_command(CLI::App& app) {
  struct Options {
    std::vector<std::string> files;
    int rank = -1;
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("report", "Rebuild the libmpetime report from its per-process files");
  cmd->add_option("files", opts->files, "per-process files (<prefix>.mpetime.<rank>.txt)")->required();
  cmd->add_option("--rank", opts->rank, "report on this rank only");
  cmd->add_flag("--json", opts->json, "print the JSON report instead of text");
  set_action(cmd, [opts]() -> Status {
    std::vector<mpe::time::RankProfile> profiles;
    for (const auto& f : opts->files) {
      auto p = mpe::time::load(f);
      if (!p.ok()) return p.status();
      profiles.push_back(std::move(*p));
    }
    MPE_RETURN_IF_ERROR(mpe::time::check_run(&profiles));
    std::string out;
    if (opts->rank >= 0) {
      for (const auto& p : profiles)
        if (p.rank == opts->rank) out = mpe::time::rank_report(p);
      if (out.empty())
        return Status(StatusCode::kInvalidArgument, "no file for rank " + std::to_string(opts->rank));
    } else {
      if (static_cast<int>(profiles.size()) != profiles.front().size)
        std::fprintf(stderr, "mpe: warning: %zu of %d ranks' files given; the report covers those only\n",
                     profiles.size(), profiles.front().size);
      out = opts->json ? mpe::time::json_report(profiles) : mpe::time::text_report(profiles);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return Status();
  });
}

}  // namespace mpe::cli
