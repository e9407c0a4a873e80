// `mpe serve`'s server and upshot's client: byte ranges of a log and its view index over ZeroMQ.
#include "mpe/log_server.h"

#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "zmq_common.h"

namespace mpe::live_stream {

namespace {

// A request: the size of a file, or n bytes of it at off. 24 bytes, as the same library's two
// ends agree (both little-endian x86-64 here; the listen file's version names the layout).
struct Request {
  uint32_t op;  // kSize or kRead
  uint32_t file;
  uint64_t off;
  uint64_t len;
};
static_assert(sizeof(Request) == 24);
constexpr uint32_t kSize = 1, kRead = 2;
constexpr uint64_t kMaxRead = uint64_t{32} << 20;  // a reply's largest payload; clients split larger reads

// The reply: one status byte (0 ok, 1 failed) and the payload (the size as 8 bytes, the bytes read,
// or the failure's message).
std::string answer(const std::vector<std::shared_ptr<const io::ByteSource>>& files,
                   const std::string& request, ServeStats& stats) {
  Request r{};
  if (request.size() != sizeof r) return std::string(1, '\1') + "malformed request";
  std::memcpy(&r, request.data(), sizeof r);
  if (r.file >= files.size()) return std::string(1, '\1') + "no file " + std::to_string(r.file);
  const io::ByteSource& f = *files[r.file];
  if (r.op == kSize) {
    const uint64_t size = f.size();
    return std::string(1, '\0') + std::string(reinterpret_cast<const char*>(&size), sizeof size);
  }
  if (r.op != kRead || r.len > kMaxRead) return std::string(1, '\1') + "bad request";
  std::string out(1 + r.len, '\0');
  const Status s = f.read(out.data() + 1, r.len, r.off);
  if (!s.ok()) return std::string(1, '\1') + s.to_string();
  stats.bytes += r.len;
  return out;
}

// One connection to a server, shared by the sources of its files.
class Connection {
 public:
  ~Connection() {
    if (socket_) zmq_close(socket_);
    if (context_) zmq_ctx_term(context_);
  }
  Status connect(const ServeFile& f, int timeout_ms) {
    endpoint_ = f.endpoint;
    context_ = zmq_ctx_new();
    if (!context_) return zmq_error("cannot start ZeroMQ");
    socket_ = zmq_socket(context_, ZMQ_REQ);
    if (!socket_) return zmq_error("cannot make a socket");
    set_int(socket_, ZMQ_LINGER, 0);
    set_int(socket_, ZMQ_REQ_RELAXED, 1);  // a request that timed out does not wedge the socket
    set_int(socket_, ZMQ_REQ_CORRELATE, 1);
    set_int(socket_, ZMQ_RCVTIMEO, timeout_ms);
    set_int(socket_, ZMQ_SNDTIMEO, timeout_ms);
    const int64_t max_message = int64_t{64} << 20;
    zmq_setsockopt(socket_, ZMQ_MAXMSGSIZE, &max_message, sizeof max_message);
    if (!set_key(socket_, ZMQ_CURVE_SERVERKEY, f.server_public) ||
        !set_key(socket_, ZMQ_CURVE_PUBLICKEY, f.viewer.public_key) ||
        !set_key(socket_, ZMQ_CURVE_SECRETKEY, f.viewer.secret_key))
      return Status(StatusCode::kInvalidArgument, "the listen file's keys are not valid CURVE keys");
    if (zmq_connect(socket_, f.endpoint.c_str()) != 0) return zmq_error("cannot connect to " + f.endpoint);
    timeout_s_ = timeout_ms / 1000;
    return Status();
  }
  // Sends r and returns the payload of its answer. Errors: the server's message, or no answer.
  StatusOr<std::string> ask(const Request& r) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (zmq_send(socket_, &r, sizeof r, 0) < 0) return unreachable();
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, socket_, 0) < 0) {
      zmq_msg_close(&m);
      return unreachable();
    }
    std::string reply(static_cast<const char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
    zmq_msg_close(&m);
    if (reply.empty()) return Status(StatusCode::kIoError, "empty answer from " + endpoint_);
    if (reply[0] != 0)
      return Status(StatusCode::kIoError, "mpe serve at " + endpoint_ + ": " + reply.substr(1));
    return reply.substr(1);
  }

 private:
  Status unreachable() const {
    return Status(StatusCode::kIoError,
                  "mpe serve at " + endpoint_ + " did not answer within " + std::to_string(timeout_s_) +
                      " s: is it running, and the tunnel (or this listen file) current?");
  }
  void* context_ = nullptr;
  void* socket_ = nullptr;
  mutable std::mutex mutex_;
  std::string endpoint_;
  int timeout_s_ = 0;
};

// A file of the server.
class RemoteSource : public io::ByteSource {
 public:
  RemoteSource(std::shared_ptr<const Connection> c, uint32_t file, uint64_t size, std::string name)
      : connection_(std::move(c)), file_(file), size_(size), name_(std::move(name)) {}
  uint64_t size() const override { return size_; }
  const std::string& name() const override { return name_; }
  Status read(void* buf, size_t n, uint64_t off) const override {
    if (off > size_ || n > size_ - off)
      return Status(StatusCode::kTruncated, name_ + ": read past the end of the file");
    char* out = static_cast<char*>(buf);
    for (size_t done = 0; done < n;) {
      const uint64_t len = std::min<uint64_t>(kMaxRead, n - done);
      auto got = connection_->ask(Request{kRead, file_, off + done, len});
      if (!got.ok()) return got.status();
      if (got->size() != len) return Status(StatusCode::kIoError, name_ + ": short answer from the server");
      std::memcpy(out + done, got->data(), len);
      done += len;
    }
    return Status();
  }

 private:
  std::shared_ptr<const Connection> connection_;
  uint32_t file_;
  uint64_t size_;
  std::string name_;
};

}  // namespace

Status write_serve_file(const std::string& path, const ServeFile& f) {
  const nlohmann::json j = {{"format", "mpe-tools serve"},
                            {"version", 1},
                            {"endpoint", f.endpoint},
                            {"server_public", f.server_public},
                            {"viewer_public", f.viewer.public_key},
                            {"viewer_secret", f.viewer.secret_key},
                            {"log", f.log},
                            {"server_pid", f.server_pid}};
  return io::write_file(path, j.dump(1) + "\n", io::Sync::kNo, io::Access::kPrivate);
}

StatusOr<ServeFile> read_serve_file(const std::string& path) {
  auto read = read_keys_file(path, "mpe-tools serve", "a listen file of `mpe serve`");
  if (!read.ok()) return read.status();
  const nlohmann::json& j = *read;
  ServeFile f;
  try {
    f.endpoint = j.at("endpoint").get<std::string>();
    f.server_public = j.at("server_public").get<std::string>();
    f.viewer.public_key = j.at("viewer_public").get<std::string>();
    f.viewer.secret_key = j.at("viewer_secret").get<std::string>();
    f.log = j.value("log", "");
    f.server_pid = j.value("server_pid", int64_t{0});
  } catch (const nlohmann::json::exception& e) {
    return Status(StatusCode::kCorrupt, path + ": " + e.what());
  }
  MPE_RETURN_IF_ERROR(check_keys(path, f.server_public, f.viewer));
  return f;
}

Status run_log_server(const ServeConfig& config, const std::atomic<bool>* stop, ServeStats* stats) {
  ServeStats local;
  if (!stats) stats = &local;
  std::vector<std::shared_ptr<const io::ByteSource>> files;
  for (const std::string& path : config.files) {
    auto f = io::open_file_source(path);
    if (!f.ok()) return f.status();
    files.push_back(*f);
  }
  auto server = new_key_pair();
  if (!server.ok()) return server.status();
  auto viewer = new_key_pair();
  if (!viewer.ok()) return viewer.status();
  void* context = zmq_ctx_new();
  if (!context) return zmq_error("cannot start ZeroMQ");
  Status result;
  {
    Gate gate(context, {{"view", viewer->public_key}}, &stats->refused);
    void* socket = server_socket(context, ZMQ_REP, *server, "view", 16);
    StatusOr<std::string> endpoint = Status(StatusCode::kIoError, "no socket");
    if (socket && gate.ok()) {
      if (config.port > 0) {
        const std::string want = "tcp://" + config.bind_address + ":" + std::to_string(config.port);
        endpoint = zmq_bind(socket, want.c_str()) == 0
                       ? StatusOr<std::string>(want)
                       : StatusOr<std::string>(zmq_error("cannot listen on " + want));
      } else {
        endpoint = bind_ephemeral(socket, config.bind_address);
      }
    }
    if (!endpoint.ok()) {
      result = endpoint.status();
    } else {
      ServeFile f{*endpoint, server->public_key, *viewer, config.log, static_cast<int64_t>(::getpid())};
      result = write_serve_file(config.listen_file, f);
    }
    while (result.ok() && !stop->load()) {
      zmq_pollitem_t item{socket, 0, ZMQ_POLLIN, 0};
      if (zmq_poll(&item, 1, 200) <= 0) continue;
      zmq_msg_t m;
      zmq_msg_init(&m);
      if (zmq_msg_recv(&m, socket, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&m);
        continue;
      }
      const std::string request(static_cast<const char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
      zmq_msg_close(&m);
      ++stats->requests;
      const std::string reply = answer(files, request, *stats);
      zmq_send(socket, reply.data(), reply.size(), 0);
    }
    if (socket) zmq_close(socket);
  }
  zmq_ctx_term(context);
  return result;
}

StatusOr<std::vector<std::shared_ptr<const io::ByteSource>>> connect_to_server(const ServeFile& f,
                                                                               int timeout_ms) {
  auto connection = std::make_shared<Connection>();
  MPE_RETURN_IF_ERROR(connection->connect(f, timeout_ms));
  std::vector<std::shared_ptr<const io::ByteSource>> files;
  const char* names[] = {"", ".view"};
  for (uint32_t i = 0; i < 2; ++i) {
    auto size = connection->ask(Request{kSize, i, 0, 0});
    if (!size.ok()) return size.status();
    uint64_t bytes = 0;
    if (size->size() != sizeof bytes)
      return Status(StatusCode::kIoError, "bad size answer from " + f.endpoint);
    std::memcpy(&bytes, size->data(), sizeof bytes);
    files.push_back(
        std::make_shared<RemoteSource>(connection, i, bytes, f.log + names[i] + " (via " + f.endpoint + ")"));
  }
  return files;
}

}  // namespace mpe::live_stream
