// `mpe convert`: between our .mpelog and OTF2 (both ways) and Chrome/Perfetto JSON (out).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "commands.h"
#include "mpe/interop.h"

namespace mpe::cli {

namespace {

// A scratch .mpelog next to the output, for OTF2 -> Chrome (the Chrome writer reads .mpelog).
std::string scratch_next_to(const std::string& out) {
  return out + ".scratch-" + std::to_string(getpid()) + ".mpelog";
}

}  // namespace

void add_convert_command(CLI::App& app) {
  struct Options {
    std::string in;
    std::string to;
    std::string out;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("convert", "Convert a trace: .mpelog <-> OTF2, .mpelog/OTF2 -> Chrome JSON");
  cmd->add_option("input", opts->in, "a .mpelog logfile, or an OTF2 archive (anchor file or its directory)")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--to", opts->to, "output format")
      ->required()
      ->check(CLI::IsMember({"otf2", "chrome", "mpelog"}));
  cmd->add_option("output", opts->out,
                  "where to write: a directory for otf2 (anchor <dir>/traces.otf2), a file otherwise")
      ->required();
  set_first_process_action(cmd, [opts]() -> Status {
    const bool from_otf2 = interop::is_otf2(opts->in);
    if (opts->to == "otf2") {
      if (from_otf2) return Status(StatusCode::kInvalidArgument, opts->in + " is already OTF2");
      MPE_RETURN_IF_ERROR(interop::mpelog_to_otf2(opts->in, opts->out));
    } else if (opts->to == "mpelog") {
      if (!from_otf2)
        return Status(StatusCode::kInvalidArgument,
                      opts->in + " is not an OTF2 archive; it is already a logfile or unknown");
      MPE_RETURN_IF_ERROR(interop::otf2_to_mpelog(opts->in, opts->out));
    } else {
      std::string log = opts->in;
      const std::string scratch = scratch_next_to(opts->out);
      if (from_otf2) {
        auto got = interop::open_as_mpelog(opts->in, scratch);
        if (!got.ok()) return got.status();
        log = *got;
      }
      interop::ChromeCounts n;
      const Status s = interop::mpelog_to_chrome(log, opts->out, &n);
      std::error_code ec;
      if (from_otf2 && !std::filesystem::remove(scratch, ec) && ec)
        std::fprintf(stderr, "mpe: note: %s left behind: %s\n", scratch.c_str(), ec.message().c_str());
      MPE_RETURN_IF_ERROR(s);
      std::fprintf(stderr, "mpe: wrote %s: %llu slices, %llu flow starts, %llu flow ends, %llu instants\n",
                   opts->out.c_str(), static_cast<unsigned long long>(n.slices),
                   static_cast<unsigned long long>(n.flow_starts),
                   static_cast<unsigned long long>(n.flow_ends), static_cast<unsigned long long>(n.instants));
      return Status();
    }
    std::fprintf(stderr, "mpe: wrote %s\n", opts->out.c_str());
    return Status();
  });
}

}  // namespace mpe::cli
