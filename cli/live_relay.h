// Starting the live relay beside a job: `mpe run --live` and `mpe live relay` share it.
#pragma once

#include <sys/types.h>

#include <string>

#include "mpe/live_transport.h"
#include "mpe/status.h"

namespace mpe::cli {

// A relay running in a child process, and what the ranks need to publish into it.
struct RelayProcess {
  pid_t pid = -1;
  int control_fd = -1;  // write the JobEnd here, then close it to stop the relay
  live_stream::LiveFile file;
  std::string publisher_public, publisher_secret;
};

// Makes the run's keys, forks a relay listening on `address`, and waits until it has written
// `live_file`. The child only relays; it exits when control_fd is closed.
StatusOr<RelayProcess> start_relay(const std::string& address, const std::string& live_file,
                                   const std::string& mpelog);

// Sends the job's end to the viewers and stops the relay; waits at most a few seconds for it.
// Returns a line to print when the relay had already ended (killed, crashed), else "".
std::string stop_relay(RelayProcess& relay, int exit_status, const std::string& mpelog);

// The environment a rank needs to publish: MPE_LIVE_ENDPOINT and the keys.
std::vector<std::pair<std::string, std::string>> publisher_environment(const RelayProcess& relay);

}  // namespace mpe::cli
