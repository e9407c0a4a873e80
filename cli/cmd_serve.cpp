// `mpe serve LOG --listen-file F`: the log and its view index (built first when missing) served by
// byte ranges to upshot on another machine (`upshot --connect F`), over ZeroMQ with CURVE keys
// (mpe/log_server.h). Under `mpiexec -n M`, process 0 serves.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "commands.h"
#include "mpe/log_server.h"
#include "mpe/view_index.h"

namespace mpe::cli {

namespace {

std::atomic<bool> g_stop{false};

struct ServeOptions {
  std::string log, listen_file, address = "127.0.0.1";
  int port = 0;
  double seconds = 0;  // 0: until SIGINT or SIGTERM
};

Status serve(const ServeOptions& o) {
  auto file = format::LogFile::open(o.log);
  if (!file.ok()) return file.status();
  format::ViewIndexOptions index_options;
  int said = -1;
  index_options.progress = [&](int percent) {
    if (percent / 10 != said / 10)
      std::fprintf(stderr, "mpe serve: indexing %s: %d%%\n", o.log.c_str(), percent);
    said = percent;
    return !g_stop.load();
  };
  auto index = format::ViewIndex::open_or_build(*file, o.log, index_options);
  if (!index.ok()) return index.status();
  live_stream::ServeConfig config;
  config.bind_address = o.address;
  config.port = o.port;
  config.files = {o.log, format::ViewIndex::path_for(o.log)};
  config.listen_file = o.listen_file;
  config.log = o.log;
  signal(SIGINT, [](int) { g_stop = true; });
  signal(SIGTERM, [](int) { g_stop = true; });
  live_stream::ServeStats stats;
  std::fprintf(stderr, "mpe serve: %s (%llu records) for `upshot --connect %s`; Ctrl-C ends it\n",
               o.log.c_str(), static_cast<unsigned long long>((*index)->records()), o.listen_file.c_str());
  Status served;
  if (o.seconds > 0) {
    // --for: a watcher raises the flag when the time is up.
    std::thread watcher([&] {
      const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.seconds);
      while (!g_stop && std::chrono::steady_clock::now() < end)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      g_stop = true;
    });
    served = live_stream::run_log_server(config, &g_stop, &stats);
    g_stop = true;
    watcher.join();
  } else {
    served = live_stream::run_log_server(config, &g_stop, &stats);
  }
  std::remove(o.listen_file.c_str());
  std::fprintf(stderr, "mpe serve: %llu requests, %llu bytes sent, %llu connections refused\n",
               static_cast<unsigned long long>(stats.requests), static_cast<unsigned long long>(stats.bytes),
               static_cast<unsigned long long>(stats.refused));
  return served;
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "serve", "Serve a logfile (and its view index) to `upshot --connect F` on another machine");
  auto o = std::make_shared<ServeOptions>();
  cmd->add_option("log", o->log, "the .mpelog to serve")->required();
  cmd->add_option(
         "--listen-file", o->listen_file,
         "where to write the address and keys upshot needs (mode 0600; copy it to the viewer's machine)")
      ->required();
  cmd->add_option(
      "--address", o->address,
      "the address to listen on (default 127.0.0.1: reach it through `ssh -L PORT:127.0.0.1:PORT`)");
  cmd->add_option("--port", o->port, "the port (default: any free one, named in the listen file)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--for", o->seconds, "stop after SECONDS (default: at Ctrl-C or SIGTERM)")
      ->check(CLI::Range(0.0, 1e9));
  set_first_process_action(cmd, [o] { return serve(*o); });
}

}  // namespace mpe::cli
