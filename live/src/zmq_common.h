// What the ZeroMQ servers of this library share (the live relay, `mpe serve`): errors, CURVE key
// options, binding, and the ZAP gate that lets in only the keys a run handed out.
#pragma once

#include <zmq.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "mpe/live_transport.h"

namespace mpe::live_stream {

inline Status zmq_error(const std::string& what) {
  return Status(StatusCode::kIoError, what + ": " + zmq_strerror(zmq_errno()));
}

// Sets a CURVE key option from its Z85 text; false when the text is not a key.
inline bool set_key(void* socket, int option, const std::string& z85) {
  uint8_t key[32];
  if (z85.size() != 40 || !zmq_z85_decode(key, z85.c_str())) return false;
  return zmq_setsockopt(socket, option, key, sizeof key) == 0;
}

inline std::string z85_of(const uint8_t* key32) {
  char text[41];
  return zmq_z85_encode(text, key32, 32) ? std::string(text, 40) : std::string();
}

inline void set_int(void* socket, int option, int value) {
  zmq_setsockopt(socket, option, &value, sizeof value);
}

// Binds `socket` on an ephemeral port of `address`; returns its endpoint.
inline StatusOr<std::string> bind_ephemeral(void* socket, const std::string& address) {
  const std::string want = "tcp://" + address + ":*";
  if (zmq_bind(socket, want.c_str()) != 0) return zmq_error("cannot listen on " + address);
  char endpoint[256];
  size_t len = sizeof endpoint;
  if (zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, endpoint, &len) != 0) return zmq_error("no endpoint");
  return std::string(endpoint);
}

// The ZAP handler: a server's gate. A client is let in only with the public key allowed for its
// side (the relay: "publish" for ranks, "view" for viewers; `mpe serve`: "view"); anything else is
// refused (and counted), and CURVE has already refused whoever does not know the server's public key.
class Gate {
 public:
  // allowed: (domain, Z85 public key) pairs.
  Gate(void* context, std::vector<std::pair<std::string, std::string>> allowed, uint64_t* refused)
      : allowed_(std::move(allowed)), refused_(refused) {
    socket_ = zmq_socket(context, ZMQ_REP);
    if (socket_ && zmq_bind(socket_, "inproc://zeromq.zap.01") == 0)
      thread_ = std::thread([this] { serve(); });
  }
  ~Gate() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (socket_) zmq_close(socket_);
  }
  bool ok() const { return thread_.joinable(); }

 private:
  void serve() {
    while (!stop_) {
      zmq_pollitem_t item{socket_, 0, ZMQ_POLLIN, 0};
      if (zmq_poll(&item, 1, 100) <= 0) continue;
      std::vector<std::string> parts;
      int more = 0;
      do {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, socket_, 0) < 0) {
          zmq_msg_close(&m);
          break;
        }
        parts.emplace_back(static_cast<const char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
        size_t len = sizeof more;
        zmq_getsockopt(socket_, ZMQ_RCVMORE, &more, &len);
        zmq_msg_close(&m);
      } while (more);
      // version, request id, domain, address, identity, mechanism, credentials...
      bool allow = false;
      if (parts.size() >= 7 && parts[0] == "1.0" && parts[5] == "CURVE" && parts[6].size() == 32) {
        const std::string key = z85_of(reinterpret_cast<const uint8_t*>(parts[6].data()));
        for (const auto& [domain, allowed_key] : allowed_)
          allow = allow || (parts[2] == domain && key == allowed_key);
      }
      if (!allow) ++*refused_;
      const std::string reply[] = {"1.0",
                                   parts.size() > 1 ? parts[1] : "",
                                   allow ? "200" : "400",
                                   allow ? "OK" : "not this run's key",
                                   "",
                                   ""};
      for (size_t i = 0; i < 6; ++i)
        zmq_send(socket_, reply[i].data(), reply[i].size(), i < 5 ? ZMQ_SNDMORE : 0);
    }
  }

  void* socket_ = nullptr;
  std::vector<std::pair<std::string, std::string>> allowed_;
  uint64_t* refused_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A CURVE server socket of the relay, its side named by `domain`.
inline void* server_socket(void* context, int type, const KeyPair& server, const char* domain, int queue) {
  void* s = zmq_socket(context, type);
  if (!s) return nullptr;
  set_int(s, ZMQ_CURVE_SERVER, 1);
  set_key(s, ZMQ_CURVE_SECRETKEY, server.secret_key);
  zmq_setsockopt(s, ZMQ_ZAP_DOMAIN, domain, std::strlen(domain));
  set_int(s, ZMQ_LINGER, 1000);
  set_int(s, ZMQ_HANDSHAKE_IVL, 5000);   // a half-open connection is dropped after 5 s
  const int64_t max_message = 64 << 20;  // garbage claiming a huge size is cut off
  zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &max_message, sizeof max_message);
  // Per connection: a viewer that falls `queue` frames behind loses the newer ones (its sequence
  // gaps count them); a rank never waits on the relay (its own queue holds 4 frames).
  set_int(s, type == ZMQ_XPUB ? ZMQ_SNDHWM : ZMQ_RCVHWM, queue);
  return s;
}

// Reads a file of keys the tools hand to viewers (the .live file, `mpe serve`'s listen file): JSON
// whose "format" is `format` and "version" 1. Errors: io-error, not-a-logfile (`what` names it),
// unsupported-version.
inline StatusOr<nlohmann::json> read_keys_file(const std::string& path, const char* format,
                                               const std::string& what) {
  std::ifstream in(path);
  if (!in) return Status(StatusCode::kIoError, "cannot read " + path + ": " + std::strerror(errno));
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("format", "") != format)
    return Status(StatusCode::kNotALogfile, path + " is not " + what);
  if (j.value("version", 0) != 1)
    return Status(StatusCode::kUnsupportedVersion,
                  path + ": " + format + " version " + j.value("version", nlohmann::json(0)).dump());
  return j;
}

// The key pair a keys file hands to the viewer is 40 characters of Z85 each, and the server's key.
inline Status check_keys(const std::string& path, const std::string& server_public, const KeyPair& viewer) {
  if (server_public.size() != 40 || viewer.public_key.size() != 40 || viewer.secret_key.size() != 40)
    return Status(StatusCode::kCorrupt, path + ": a key is not 40 characters of Z85");
  return Status();
}

}  // namespace mpe::live_stream
