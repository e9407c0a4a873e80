// The live stream's transport (ZeroMQ, CURVE-encrypted): the run's keys and the `.live` file
// that hands them to viewers, the relay between ranks and viewers, and the viewers' subscriber.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mpe/status.h"

namespace mpe::live_stream {

// A CURVE key pair, Z85 text (40 characters each).
struct KeyPair {
  std::string public_key, secret_key;
};
StatusOr<KeyPair> new_key_pair();

// What `<prefix>.live` holds (mode 0600): where viewers connect, and the keys they need.
struct LiveFile {
  std::string viewer_endpoint;   // tcp://host:port of the relay's viewer side
  std::string publish_endpoint;  // tcp://host:port ranks publish to
  std::string server_public;     // the relay's public key
  KeyPair viewer;                // the viewers' key pair, which the relay accepts
  std::string mpelog;            // the logfile liblog will write, when it runs too
  int64_t relay_pid = 0;
};
// Writes the file atomically (a temporary file renamed), readable by its owner only.
Status write_live_file(const std::string& path, const LiveFile& f);
StatusOr<LiveFile> read_live_file(const std::string& path);

// The relay's configuration: its own key pair and the two client public keys it accepts.
struct RelayConfig {
  std::string bind_address = "127.0.0.1";  // the interface address it listens on
  KeyPair server;
  std::string publisher_public, viewer_public;
  int viewer_queue = 1000;  // frames a viewer may fall behind by before the relay drops its newer ones
  std::string live_file;    // written, with `file`'s endpoints filled in, once both sides listen
  LiveFile file;
};
struct RelayStats {
  uint64_t forwarded = 0;  // messages received from ranks and offered to viewers
  uint64_t refused = 0;    // connections whose key was not the run's
};
// Forwards rank frames to viewers until `control_fd` reaches end of file. Whatever was written to
// it before (an encoded JobEnd) goes to the viewers last. Blocks; prints nothing. `ready`, when
// set, is called once both sides listen and the live file is written.
Status run_relay(const RelayConfig& config, int control_fd, RelayStats* stats,
                 void (*ready)(const LiveFile&) = nullptr);

// The relay's address for a job: MPE_LIVE_ADDRESS (an IPv4 address or an interface name) when
// set, else loopback when every rank runs here (`remote_ranks` false), else this host's address
// that other nodes reach (its name's IPv4 address, else its first non-loopback interface).
StatusOr<std::string> relay_address(bool remote_ranks);

// A viewer's connection to the relay.
class Subscriber {
 public:
  Subscriber() = default;
  ~Subscriber();
  Subscriber(const Subscriber&) = delete;
  Subscriber& operator=(const Subscriber&) = delete;
  // Connects with the keys of `file`. `queue` bounds the messages waiting for this viewer; more
  // are dropped by the relay (and show as gaps in the ranks' sequence numbers).
  Status connect(const LiveFile& file, int queue = 1000);
  // Receives one message, waiting up to timeout_ms (0: do not wait); nullopt when none came.
  std::optional<std::string> receive(int timeout_ms);

 private:
  void* context_ = nullptr;
  void* socket_ = nullptr;
};

}  // namespace mpe::live_stream
