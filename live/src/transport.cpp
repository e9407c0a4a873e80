// The live stream's ZeroMQ transport: CURVE keys, the `.live` file, the relay and the subscriber.
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "mpe/file_io.h"
#include "mpe/live_transport.h"
#include "zmq_common.h"

namespace mpe::live_stream {

namespace {

// Moves every message waiting on `from` to `to` without blocking; returns how many.
uint64_t forward(void* from, void* to) {
  uint64_t n = 0;
  for (;;) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, from, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&m);
      return n;
    }
    int more = 0;
    size_t len = sizeof more;
    zmq_getsockopt(from, ZMQ_RCVMORE, &more, &len);
    if (zmq_msg_send(&m, to, ZMQ_DONTWAIT | (more ? ZMQ_SNDMORE : 0)) < 0) zmq_msg_close(&m);
    if (!more) ++n;
  }
}

}  // namespace

StatusOr<KeyPair> new_key_pair() {
  char pub[41], sec[41];
  if (zmq_curve_keypair(pub, sec) != 0)
    return zmq_error("cannot make a CURVE key pair (is libzmq built with libsodium?)");
  return KeyPair{std::string(pub, 40), std::string(sec, 40)};
}

Status write_live_file(const std::string& path, const LiveFile& f) {
  const nlohmann::json j = {{"format", "mpe-tools live"},
                            {"version", 1},
                            {"viewer_endpoint", f.viewer_endpoint},
                            {"publish_endpoint", f.publish_endpoint},
                            {"server_public", f.server_public},
                            {"viewer_public", f.viewer.public_key},
                            {"viewer_secret", f.viewer.secret_key},
                            {"mpelog", f.mpelog},
                            {"relay_pid", f.relay_pid}};
  return io::write_file(path, j.dump(1) + "\n", io::Sync::kNo, io::Access::kPrivate);
}

StatusOr<LiveFile> read_live_file(const std::string& path) {
  auto read = read_keys_file(path, "mpe-tools live", "an mpe-tools .live file");
  if (!read.ok()) return read.status();
  const nlohmann::json& j = *read;
  LiveFile f;
  try {
    f.viewer_endpoint = j.at("viewer_endpoint").get<std::string>();
    f.publish_endpoint = j.at("publish_endpoint").get<std::string>();
    f.server_public = j.at("server_public").get<std::string>();
    f.viewer.public_key = j.at("viewer_public").get<std::string>();
    f.viewer.secret_key = j.at("viewer_secret").get<std::string>();
    f.mpelog = j.value("mpelog", "");
    f.relay_pid = j.value("relay_pid", int64_t{0});
  } catch (const nlohmann::json::exception& e) {
    return Status(StatusCode::kCorrupt, path + ": " + e.what());
  }
  MPE_RETURN_IF_ERROR(check_keys(path, f.server_public, f.viewer));
  return f;
}

Status run_relay(const RelayConfig& config, int control_fd, RelayStats* stats,
                 void (*ready)(const LiveFile&)) {
  RelayStats local;
  if (!stats) stats = &local;
  void* context = zmq_ctx_new();
  if (!context) return zmq_error("cannot start ZeroMQ");
  Status result;
  {
    Gate gate(context, {{"publish", config.publisher_public}, {"view", config.viewer_public}},
              &stats->refused);
    void* front = server_socket(context, ZMQ_XSUB, config.server, "publish", 1000);
    void* back = server_socket(context, ZMQ_XPUB, config.server, "view", config.viewer_queue);
    LiveFile file = config.file;
    file.relay_pid = getpid();
    StatusOr<std::string> pub = Status(StatusCode::kIoError, "no socket");
    StatusOr<std::string> view = pub;
    if (!gate.ok()) {
      result = zmq_error("cannot start the relay's authentication");
    } else if (!front || !back) {
      result = zmq_error("cannot make the relay's sockets");
    } else if (!(pub = bind_ephemeral(front, config.bind_address)).ok()) {
      result = pub.status();
    } else if (!(view = bind_ephemeral(back, config.bind_address)).ok()) {
      result = view.status();
    } else {
      file.publish_endpoint = *pub;
      file.viewer_endpoint = *view;
      if (!config.live_file.empty()) result = write_live_file(config.live_file, file);
    }
    if (result.ok()) {
      if (ready) ready(file);
      std::string end_message;
      for (bool open = true; open;) {
        zmq_pollitem_t items[3] = {
            {front, 0, ZMQ_POLLIN, 0}, {back, 0, ZMQ_POLLIN, 0}, {nullptr, control_fd, ZMQ_POLLIN, 0}};
        if (zmq_poll(items, control_fd >= 0 ? 3 : 2, 200) < 0 && zmq_errno() != EINTR) {
          result = zmq_error("relay poll");
          break;
        }
        if (items[0].revents & ZMQ_POLLIN) stats->forwarded += forward(front, back);
        if (items[1].revents & ZMQ_POLLIN) forward(back, front);  // viewers' subscriptions, to the ranks
        if (control_fd >= 0 && (items[2].revents & (ZMQ_POLLIN | ZMQ_POLLERR))) {
          char buf[4096];
          const ssize_t n = ::read(control_fd, buf, sizeof buf);
          if (n > 0)
            end_message.append(buf, static_cast<size_t>(n));
          else if (n == 0 || errno != EINTR)
            open = false;
        }
      }
      // The ranks' last frames may still be on their way (a rank's socket lingers up to 1 s after
      // its MPI_Finalize, and a busy machine delays them further): they are forwarded until the
      // stream has been quiet for 300 ms, for at most 2 s, so that the job's end follows them.
      for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
           std::chrono::steady_clock::now() < until;) {
        zmq_pollitem_t item{front, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&item, 1, 300) <= 0) break;
        stats->forwarded += forward(front, back);
      }
      // The job's end must not be dropped like a frame: a viewer that is behind gets it once it
      // has read what is queued for it, within 5 s; past that, every viewer with room gets it.
      if (!end_message.empty()) {
        set_int(back, ZMQ_XPUB_NODROP, 1);
        set_int(back, ZMQ_SNDTIMEO, 5000);
        if (zmq_send(back, end_message.data(), end_message.size(), 0) < 0) {
          set_int(back, ZMQ_XPUB_NODROP, 0);  // one viewer never read: the others get it anyway
          zmq_send(back, end_message.data(), end_message.size(), ZMQ_DONTWAIT);
        }
      }
    }
    if (front) zmq_close(front);
    // A viewer on a busy machine may be hundreds of frames behind: the frames queued for it and
    // the job's end, behind them, get up to 5 s more to reach it.
    if (back) set_int(back, ZMQ_LINGER, 5000), zmq_close(back);
  }
  zmq_ctx_term(context);
  return result;
}

StatusOr<std::string> relay_address(bool remote_ranks) {
  const char* chosen = std::getenv("MPE_LIVE_ADDRESS");
  ifaddrs* list = nullptr;
  auto first_address = [&](const char* interface_name) -> std::string {
    if (!list && getifaddrs(&list) != 0) return {};
    for (ifaddrs* a = list; a; a = a->ifa_next) {
      if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
      if (interface_name ? std::strcmp(a->ifa_name, interface_name) != 0 : (a->ifa_flags & IFF_LOOPBACK) != 0)
        continue;
      char text[INET_ADDRSTRLEN];
      if (inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text))
        return text;
    }
    return {};
  };
  std::string address;
  if (chosen && *chosen) {
    in_addr parsed{};
    if (inet_pton(AF_INET, chosen, &parsed) == 1)
      address = chosen;
    else if ((address = first_address(chosen)).empty()) {
      if (list) freeifaddrs(list);
      return Status(StatusCode::kInvalidArgument,
                    std::string("MPE_LIVE_ADDRESS=") + chosen +
                        " is neither an IPv4 address nor an interface with one");
    }
  } else if (!remote_ranks) {
    address = "127.0.0.1";
  } else {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    addrinfo hints{}, *found = nullptr;
    hints.ai_family = AF_INET;
    if (getaddrinfo(host, nullptr, &hints, &found) == 0) {
      for (addrinfo* a = found; a && address.empty(); a = a->ai_next) {
        const auto* sin = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
        if ((ntohl(sin->sin_addr.s_addr) >> 24) == 127) continue;
        char text[INET_ADDRSTRLEN];
        if (inet_ntop(AF_INET, &sin->sin_addr, text, sizeof text)) address = text;
      }
      freeaddrinfo(found);
    }
    if (address.empty()) address = first_address(nullptr);
    if (address.empty()) address = "127.0.0.1";
  }
  if (list) freeifaddrs(list);
  return address;
}

Subscriber::~Subscriber() {
  if (socket_) zmq_close(socket_);
  if (context_) zmq_ctx_term(context_);
}

Status Subscriber::connect(const LiveFile& file, int queue) {
  context_ = zmq_ctx_new();
  if (!context_) return zmq_error("cannot start ZeroMQ");
  socket_ = zmq_socket(context_, ZMQ_SUB);
  if (!socket_) return zmq_error("cannot make a socket");
  set_int(socket_, ZMQ_LINGER, 0);
  set_int(socket_, ZMQ_RCVHWM, queue);
  set_int(socket_, ZMQ_RCVBUF, 64 * 1024);
  const int64_t max_message = 64 << 20;
  zmq_setsockopt(socket_, ZMQ_MAXMSGSIZE, &max_message, sizeof max_message);
  if (!set_key(socket_, ZMQ_CURVE_SERVERKEY, file.server_public) ||
      !set_key(socket_, ZMQ_CURVE_PUBLICKEY, file.viewer.public_key) ||
      !set_key(socket_, ZMQ_CURVE_SECRETKEY, file.viewer.secret_key))
    return Status(StatusCode::kInvalidArgument, "the .live file's keys are not valid CURVE keys");
  zmq_setsockopt(socket_, ZMQ_SUBSCRIBE, "", 0);
  if (zmq_connect(socket_, file.viewer_endpoint.c_str()) != 0)
    return zmq_error("cannot connect to " + file.viewer_endpoint);
  return Status();
}

std::optional<std::string> Subscriber::receive(int timeout_ms) {
  if (!socket_) return std::nullopt;
  if (timeout_ms > 0) {
    zmq_pollitem_t item{socket_, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, timeout_ms) <= 0) return std::nullopt;
  }
  zmq_msg_t m;
  zmq_msg_init(&m);
  if (zmq_msg_recv(&m, socket_, ZMQ_DONTWAIT) < 0) {
    zmq_msg_close(&m);
    return std::nullopt;
  }
  std::string data(static_cast<const char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
  zmq_msg_close(&m);
  return data;
}

}  // namespace mpe::live_stream
