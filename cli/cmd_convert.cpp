// `mpe convert`: between our .mpelog and OTF2 (both ways) and Chrome/Perfetto JSON (out).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "commands.h"
#include "mpe/interop.h"

namespace mpe::cli {

namespace {

void check(const Status& s) {
  if (!s.ok()) throw std::runtime_error(s.to_string());
}

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
  CLI::App* cmd = app.add_subcommand("convert", "Convert a trace: .mpelog <-> OTF2, .mpelog/OTF2 -> Chrome JSON");
  cmd->add_option("input", opts->in, "a .mpelog logfile, or an OTF2 archive (anchor file or its directory)")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--to", opts->to, "output format")
      ->required()
      ->check(CLI::IsMember({"otf2", "chrome", "mpelog"}));
  cmd->add_option("output", opts->out,
                  "where to write: a directory for otf2 (anchor <dir>/traces.otf2), a file otherwise")
      ->required();
  cmd->callback([opts] {
    const bool from_otf2 = interop::is_otf2(opts->in);
    if (opts->to == "otf2") {
      if (from_otf2) throw std::runtime_error(opts->in + " is already OTF2");
      check(interop::mpelog_to_otf2(opts->in, opts->out));
    } else if (opts->to == "mpelog") {
      if (!from_otf2) throw std::runtime_error(opts->in + " is not an OTF2 archive; it is already a logfile or unknown");
      check(interop::otf2_to_mpelog(opts->in, opts->out));
    } else {
      std::string log = opts->in;
      const std::string scratch = scratch_next_to(opts->out);
      if (from_otf2) {
        auto got = interop::open_as_mpelog(opts->in, scratch);
        check(got.status());
        log = *got;
      }
      interop::ChromeCounts n;
      const Status s = interop::mpelog_to_chrome(log, opts->out, &n);
      if (from_otf2) std::filesystem::remove(scratch);
      check(s);
      std::fprintf(stderr, "mpe: wrote %s: %llu slices, %llu flow starts, %llu flow ends, %llu instants\n",
                   opts->out.c_str(), static_cast<unsigned long long>(n.slices),
                   static_cast<unsigned long long>(n.flow_starts), static_cast<unsigned long long>(n.flow_ends),
                   static_cast<unsigned long long>(n.instants));
      return;
    }
    std::fprintf(stderr, "mpe: wrote %s\n", opts->out.c_str());
  });
}

}  // namespace mpe::cli
