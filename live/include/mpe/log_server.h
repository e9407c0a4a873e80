// `mpe serve`: a log and its view index (mpe/view_index.h) read by byte ranges over ZeroMQ with
// CURVE keys, so that upshot on another machine (`upshot --connect F`) draws the log reading only
// what it draws: the index's summary at once, then the chunks and message blocks of each view.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mpe/file_io.h"
#include "mpe/live_transport.h"
#include "mpe/status.h"

namespace mpe::live_stream {

// What the listen file holds (JSON, mode 0600 as the .live file): where the viewer connects and the
// keys it needs. Copied to the viewer's machine (or read there through a shared file system).
struct ServeFile {
  std::string endpoint;  // tcp://host:port
  std::string server_public;
  KeyPair viewer;   // the viewer's key pair, the one the server accepts
  std::string log;  // the log's path on the server, for titles and messages
  int64_t server_pid = 0;
};
Status write_serve_file(const std::string& path, const ServeFile& f);
StatusOr<ServeFile> read_serve_file(const std::string& path);

struct ServeConfig {
  std::string bind_address = "127.0.0.1";  // loopback: reach it through an SSH tunnel
  int port = 0;                            // 0: any free port
  std::vector<std::string> files;          // served by number: 0 the log, 1 its view index
  std::string listen_file;                 // written once the server listens
  std::string log;                         // ServeFile::log
};
struct ServeStats {
  uint64_t requests = 0, bytes = 0, refused = 0;
};
// Serves config.files until *stop is true (looked at every 200 ms); the listen file is written
// (with new keys) once it listens. Errors: the files cannot be opened, the socket cannot listen,
// the listen file cannot be written.
Status run_log_server(const ServeConfig& config, const std::atomic<bool>* stop, ServeStats* stats);

// The server's files as byte sources (0 the log, 1 its view index), one request at a time over one
// connection. A read that gets no answer within timeout_ms fails with io-error, saying so.
// Errors: the listen file's keys are not keys; the server does not answer.
StatusOr<std::vector<std::shared_ptr<const io::ByteSource>>> connect_to_server(const ServeFile& f,
                                                                               int timeout_ms = 20000);

}  // namespace mpe::live_stream
