// The relay's child process: keys, fork, readiness, and its end.
#include "live_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "mpe/live_wire.h"

namespace mpe::cli {

namespace {

int g_ready_fd = -1;

void report_ready(const live_stream::LiveFile&) {
  const char ok = 'k';
  if (g_ready_fd >= 0 && ::write(g_ready_fd, &ok, 1) < 0) _exit(3);
}

}  // namespace

StatusOr<RelayProcess> start_relay(const std::string& address, const std::string& live_file,
                                   const std::string& mpelog) {
  auto server = live_stream::new_key_pair();
  auto publisher = live_stream::new_key_pair();
  auto viewer = live_stream::new_key_pair();
  for (const auto* k : {&server, &publisher, &viewer})
    if (!k->ok()) return k->status();
  live_stream::RelayConfig config;
  config.bind_address = address;
  config.server = *server;
  config.publisher_public = publisher->public_key;
  config.viewer_public = viewer->public_key;
  config.live_file = live_file;
  if (const char* q = std::getenv("MPE_LIVE_RELAY_QUEUE"); q && std::atoi(q) > 0)
    config.viewer_queue = std::atoi(q);
  config.file.server_public = server->public_key;
  config.file.viewer = *viewer;
  config.file.mpelog = mpelog;

  int ready[2], control[2];
  if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(control, O_CLOEXEC) != 0)
    return Status(StatusCode::kIoError, std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) return Status(StatusCode::kIoError, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // The relay: it stays for the whole job; Ctrl-C reaches the launcher, and `mpe run` stops
    // the relay once the launcher has returned.
    signal(SIGINT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    ::close(ready[0]);
    ::close(control[1]);
    g_ready_fd = ready[1];
    const Status s = live_stream::run_relay(config, control[0], nullptr, report_ready);
    if (!s.ok()) {
      const std::string line = s.message();
      if (::write(ready[1], line.data(), line.size()) < 0) _exit(2);
    }
    _exit(s.ok() ? 0 : 1);
  }
  ::close(ready[1]);
  ::close(control[0]);
  std::string answer;
  pollfd p{ready[0], POLLIN, 0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (answer.empty() && std::chrono::steady_clock::now() < deadline) {
    if (poll(&p, 1, 200) <= 0) continue;
    char buf[512];
    const ssize_t n = ::read(ready[0], buf, sizeof buf);
    if (n <= 0) break;
    answer.assign(buf, static_cast<size_t>(n));
  }
  ::close(ready[0]);
  if (answer != "k") {
    ::close(control[1]);
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return Status(StatusCode::kIoError,
                  "the live relay did not start" + (answer.empty() ? std::string() : ": " + answer));
  }
  auto file = live_stream::read_live_file(live_file);
  if (!file.ok()) return file.status();
  return RelayProcess{pid, control[1], *file, publisher->public_key, publisher->secret_key};
}

std::string stop_relay(RelayProcess& relay, int exit_status, const std::string& mpelog) {
  std::string lost;
  int status = 0;
  if (waitpid(relay.pid, &status, WNOHANG) == relay.pid) {
    lost = "the live relay (pid " + std::to_string(relay.pid) + ") ended before the job did (" +
           (WIFSIGNALED(status) ? std::string("signal ") + std::to_string(WTERMSIG(status))
                                : "exit status " + std::to_string(WEXITSTATUS(status))) +
           "): viewers saw nothing after that; the job itself ran on unaffected";
    relay.pid = -1;
  } else {
    const std::string end = live_stream::encode(live_stream::JobEnd{exit_status, mpelog});
    signal(SIGPIPE, SIG_IGN);
    if (::write(relay.control_fd, end.data(), end.size()) < 0) { /* the relay is gone: nothing to tell */
    }
  }
  ::close(relay.control_fd);
  relay.control_fd = -1;
  if (relay.pid > 0) {
    // The relay takes up to 2 s for the ranks' last frames, 5 s for a slow viewer to make room
    // for the job's end and 5 s more to flush it: it is given all of that before it is killed.
    for (int i = 0; i < 150; ++i) {
      if (waitpid(relay.pid, &status, WNOHANG) == relay.pid) {
        relay.pid = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (relay.pid > 0) {
      kill(relay.pid, SIGKILL);
      waitpid(relay.pid, nullptr, 0);
    }
  }
  return lost;
}

std::vector<std::pair<std::string, std::string>> publisher_environment(const RelayProcess& relay) {
  return {{"MPE_LIVE_ENDPOINT", relay.file.publish_endpoint},
          {"MPE_LIVE_SERVER_KEY", relay.file.server_public},
          {"MPE_LIVE_PUBLIC_KEY", relay.publisher_public},
          {"MPE_LIVE_SECRET_KEY", relay.publisher_secret}};
}

}  // namespace mpe::cli
