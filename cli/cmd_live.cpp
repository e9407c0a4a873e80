// `mpe live relay`: a live relay on its own, for jobs started by other means than `mpe run --live`
// (a batch script that sets the ranks' environment itself).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>

#include "commands.h"
#include "live_relay.h"
#include "mpe/live_transport.h"

namespace mpe::cli {

namespace {
volatile sig_atomic_t g_stop = 0;
}  // namespace

void add_live_command(CLI::App& app) {
  struct Options {
    std::string live_file, env_file;
    bool remote = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* live = app.add_subcommand("live", "The live view's relay (mpe run --live starts one for you)");
  live->require_subcommand(1);
  CLI::App* relay = live->add_subcommand("relay", "Relay ranks' live frames to viewers until interrupted");
  relay->add_option("--live-file", o->live_file, "where to write the viewers' .live file")->required();
  relay->add_option(
      "--env-file", o->env_file,
      "where to write the ranks' environment (MPE_LIVE_*; mode 0600); default: standard output");
  relay->add_flag(
      "--remote", o->remote,
      "ranks run on other hosts: listen on this host's address (or MPE_LIVE_ADDRESS), not loopback");
  set_action(relay, [o]() -> Status {
    auto address = live_stream::relay_address(o->remote);
    if (!address.ok()) return address.status();
    auto started = start_relay(*address, o->live_file, "");
    if (!started.ok()) return started.status();
    std::string env;
    for (const auto& [k, v] : publisher_environment(*started)) env += "export " + k + "='" + v + "'\n";
    if (o->env_file.empty()) {
      std::fputs(env.c_str(), stdout);
    } else {
      const int fd = ::open(o->env_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0 || ::write(fd, env.data(), env.size()) != static_cast<ssize_t>(env.size())) {
        if (fd >= 0) ::close(fd);
        stop_relay(*started, 0, "");
        return Status(StatusCode::kIoError, "cannot write " + o->env_file);
      }
      ::close(fd);
    }
    std::fprintf(stderr, "mpe: relaying for viewers of %s (mpe top %s); Ctrl-C stops\n", o->live_file.c_str(),
                 o->live_file.c_str());
    std::fflush(stdout);
    signal(SIGINT, [](int) { g_stop = 1; });
    signal(SIGTERM, [](int) { g_stop = 1; });
    while (!g_stop) pause();
    const std::string lost = stop_relay(*started, 0, "");
    ::unlink(o->live_file.c_str());
    if (!lost.empty()) return Status(StatusCode::kIoError, lost);
    return Status();
  });
}

}  // namespace mpe::cli
